"""Fixtures of the reliability suite: database URLs, child processes and the figures record.

``ENTITYWORKS_RELIABILITY_SEED`` seeds every random choice (kill moments, fuzzing);
``ENTITYWORKS_RELIABILITY_SECONDS`` shortens the concurrent-writer runs locally (CI runs the
full 30 s); ``ENTITYWORKS_RELIABILITY_FIGURES=path.json`` writes the measured figures there.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import IN_CI
from tests.entityworks.conftest import mariadb_url, pg_url  # noqa: F401 - fixtures

ROOT = Path(__file__).resolve().parents[2]
SEED = int(os.environ.get("ENTITYWORKS_RELIABILITY_SEED", "20240607"))
FULL_SECONDS = 30.0


def writer_seconds() -> float:
    """How long the concurrent writers run: 30 s, shorter locally when asked to."""
    value = os.environ.get("ENTITYWORKS_RELIABILITY_SECONDS")
    if value and not IN_CI:
        return float(value)
    return FULL_SECONDS


def child_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "tests.reliability.child", *args]


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def run_child(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        child_command(*args),
        cwd=ROOT,
        env=child_env(),
        text=True,
        capture_output=True,
        timeout=timeout,
        check=False,
    )


_FIGURES: dict[str, Any] = {}


@pytest.fixture(scope="session")
def figures() -> Iterator[dict[str, Any]]:
    """A dict the tests fill with what they measured; dumped as JSON at the end of the session
    when ``ENTITYWORKS_RELIABILITY_FIGURES`` names a file."""
    yield _FIGURES
    target = os.environ.get("ENTITYWORKS_RELIABILITY_FIGURES")
    if target:
        Path(target).write_text(json.dumps(_FIGURES, indent=2, sort_keys=True) + "\n")


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _FIGURES:
        terminalreporter.section("reliability figures")
        for key in sorted(_FIGURES):
            terminalreporter.write_line(f"{key}: {json.dumps(_FIGURES[key], sort_keys=True)}")

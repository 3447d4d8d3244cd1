"""The documentation site builds with ``mkdocs build --strict``: every page, the Python API
from docstrings, the command line and the types table generated from the code."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs.harness import ROOT


def test_site_builds_strict(tmp_path: Path) -> None:
    try:
        import mkdocs  # noqa: F401
    except ImportError:  # .ci/run builds the site itself, in the environment that has it
        pytest.skip('mkdocs is not installed: pip install -e ".[docs]"')
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    types = (tmp_path / "site" / "reference" / "types" / "index.html").read_text("utf-8")
    assert "xs:decimal" in types and "DOUBLE PRECISION" in types
    cli = (tmp_path / "site" / "reference" / "cli" / "index.html").read_text("utf-8")
    assert "export-xml" in cli and "--db" in cli

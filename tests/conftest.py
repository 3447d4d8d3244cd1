"""Shared fixtures: the shared data directory and CI-aware skipping."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

IN_CI = os.environ.get("CI", "").lower() == "true"
DATA_DIR = Path(
    os.environ.get(
        "ENTITYWORKS_DATA_DIR", Path(__file__).resolve().parents[1].parent / "shared" / "data"
    )
)


def require_data(name: str) -> Path:
    """Return the path of a shared data file; skip without it, fail under CI."""
    path = DATA_DIR / name
    if not path.is_file():
        message = f"shared data file {path} is missing"
        if IN_CI:
            pytest.fail(message + " (required under CI=true)")
        pytest.skip(message)
    return path


@pytest.fixture
def shared_data():
    """Callable fixture: ``shared_data("top95.txt")`` gives the file's path."""
    return require_data

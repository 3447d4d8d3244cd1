"""Shared fixtures: the shared data directory and CI-aware skipping."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

IN_CI = os.environ.get("CI", "").lower() == "true"

# Property tests judge values, never speed: no per-example deadline and no "too slow" health
# check, so a loaded machine cannot fail them. Under CI the examples are derived from each
# test's name (the same every run, no example database): a CI verdict is reproducible, and
# local runs keep exploring new examples.
settings.register_profile(
    "entityworks", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile(
    "entityworks-ci", parent=settings.get_profile("entityworks"), derandomize=True,
    database=None, print_blob=True)
settings.load_profile("entityworks-ci" if IN_CI else "entityworks")
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

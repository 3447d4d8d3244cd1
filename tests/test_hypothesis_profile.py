"""Property tests judge values, never speed: the profile ``tests/conftest.py`` loads for the
whole suite has no deadline and no "too slow" health check, and no test brings either back,
so a loaded machine (``-n auto`` on 2 cores beside the database servers) cannot fail one."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import HealthCheck, settings

from tests.conftest import IN_CI

TESTS = Path(__file__).resolve().parent


def test_the_loaded_profile_ignores_speed() -> None:
    current = settings()  # a test's @settings(...) starts from the loaded profile
    assert current.deadline is None
    assert HealthCheck.too_slow in current.suppress_health_check
    loaded = settings.get_profile("entityworks-ci" if IN_CI else "entityworks")
    assert (loaded.deadline, set(loaded.suppress_health_check)) == (
        current.deadline,
        set(current.suppress_health_check),
    )


def test_no_test_sets_a_deadline_or_drops_the_too_slow_suppression() -> None:
    offending = []
    for path in sorted(TESTS.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        for found in re.finditer(r"\bdeadline\s*=\s*(\d|(dt\.|datetime\.)?timedelta)", text):
            offending.append(f"{path.relative_to(TESTS)}: {found.group(0)}")
        for found in re.finditer(r"suppress_health_check\s*=\s*\[([^\]]*)\]", text):
            if "too_slow" not in found.group(1):
                offending.append(f"{path.relative_to(TESTS)}: {found.group(0)}")
    assert offending == []

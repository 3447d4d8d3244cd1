"""The test run's last line says what it skipped and how to enable it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import skip_summary

ROOT = Path(__file__).resolve().parents[1]


def test_reasons_are_grouped_by_what_they_need() -> None:
    line = skip_summary(
        [
            "ENTITYWORKS_TEST_POSTGRES_URL is not set",
            "ENTITYWORKS_TEST_POSTGRES_URL is not set",
            "ENTITYWORKS_TEST_MARIADB_URL is not set",
            "the ent program is not installed (apt-get install ent)",
            "mcs and mono not installed (apt-get install mono-mcs ...)",
            "SQLite locks the whole file for the write",
        ]
    )
    assert line is not None
    assert line.startswith("skipped 6: 2 need PostgreSQL (set ENTITYWORKS_TEST_POSTGRES_URL=")
    assert "1 need MariaDB (set ENTITYWORKS_TEST_MARIADB_URL=" in line
    assert "1 need ent (apt-get install ent)" in line
    assert "1 need Mono (apt-get install mono-mcs" in line
    assert "1 does not apply here" in line
    assert skip_summary([]) is None


def test_a_run_without_database_urls_ends_with_the_summary() -> None:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("ENTITYWORKS_TEST_POSTGRES_URL", "ENTITYWORKS_TEST_MARIADB_URL", "CI")
    }
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/entityworks/sql/test_composite_keys.py",
            "-k",
            "not hypothesis",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-2000:]
    lines = done.stdout.strip().splitlines()
    summary = next(line for line in lines if line.startswith("skipped "))
    assert "need PostgreSQL (set ENTITYWORKS_TEST_POSTGRES_URL=" in summary
    assert "need MariaDB (set ENTITYWORKS_TEST_MARIADB_URL=" in summary
    assert not any(line.startswith("SKIPPED") for line in lines)


def test_under_ci_an_unset_database_url_fails() -> None:
    env = {k: v for k, v in os.environ.items() if k != "ENTITYWORKS_TEST_MARIADB_URL"}
    env["CI"] = "true"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/entityworks/sql/test_composite_keys.py",
            "-k",
            "mariadb",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode != 0
    assert "ENTITYWORKS_TEST_MARIADB_URL is not set (required under CI=true)" in done.stdout

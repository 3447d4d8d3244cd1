"""``tests/databases.py``: the private server databases are named from
``ENTITYWORKS_TEST_DB_PREFIX`` (default ``ew_test_``), a prefix checked before use, and each
exists on the server exactly while its run uses it."""

from __future__ import annotations

import os
import uuid

import pytest
import sqlalchemy as sa

from tests.conftest import IN_CI
from tests.databases import (
    DEFAULT_PREFIX,
    LOCK_TIMEOUT,
    PREFIX_ENV,
    BadPrefix,
    Unreachable,
    database_prefix,
    private_database,
)

SERVERS = {"postgresql": "ENTITYWORKS_TEST_POSTGRES_URL", "mariadb": "ENTITYWORKS_TEST_MARIADB_URL"}


def test_the_default_prefix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PREFIX_ENV, raising=False)
    assert database_prefix() == DEFAULT_PREFIX == "ew_test_"
    monkeypatch.setenv(PREFIX_ENV, "")
    assert database_prefix() == "ew_test_"


@pytest.mark.parametrize("prefix", ["ci_7_", "_x", "a", "a" * 40])
def test_a_prefix_of_your_own(monkeypatch: pytest.MonkeyPatch, prefix: str) -> None:
    monkeypatch.setenv(PREFIX_ENV, prefix)
    assert database_prefix() == prefix


@pytest.mark.parametrize(
    "prefix", ["7up_", "Mixed_", "a-b", "a b", "x;DROP DATABASE y", 'q"', "a" * 41, "é_", "a\n"]
)
def test_a_bad_prefix_is_refused(monkeypatch: pytest.MonkeyPatch, prefix: str) -> None:
    monkeypatch.setenv(PREFIX_ENV, prefix)
    with pytest.raises(BadPrefix) as info:
        database_prefix()
    assert PREFIX_ENV in str(info.value)


def _names(admin: sa.Engine) -> set[str]:
    """The server's databases, from its own catalog."""
    query = (
        "SELECT datname FROM pg_database"
        if admin.dialect.name == "postgresql"
        else "SELECT schema_name FROM information_schema.schemata"
    )
    with admin.connect() as conn:
        return {row[0] for row in conn.exec_driver_sql(query)}


@pytest.mark.parametrize("kind", ["postgresql", "mariadb"])
def test_the_server_database_carries_the_prefix(monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    url = os.environ.get(SERVERS[kind])
    if not url:
        message = f"{SERVERS[kind]} is not set"
        if IN_CI:
            pytest.fail(message + " (required under CI=true)")
        pytest.skip(message)
    prefix = f"ewpfx_{uuid.uuid4().hex[:6]}_"
    monkeypatch.setenv(PREFIX_ENV, prefix)
    admin = sa.create_engine(url)
    try:
        try:
            with private_database(url) as private:
                name = sa.make_url(private).database
                assert name is not None and name.startswith(prefix)
                assert len(name) == len(prefix) + 12
                assert {n for n in _names(admin) if n.startswith(prefix)} == {name}
        except Unreachable as exc:
            if IN_CI:
                pytest.fail(str(exc))
            pytest.skip(str(exc))
        assert not any(n.startswith(prefix) for n in _names(admin))  # dropped after the run
    finally:
        admin.dispose()


def test_a_statement_waiting_on_a_lock_fails_instead_of_hanging() -> None:
    """A failed test that leaves a read open, then its fixture's DROP TABLE: the DROP waits
    for the read's lock at most the private database's lock_timeout, then fails."""
    url = os.environ.get(SERVERS["postgresql"])
    if not url:
        if IN_CI:
            pytest.fail(f"{SERVERS['postgresql']} is not set (required under CI=true)")
        pytest.skip(f"{SERVERS['postgresql']} is not set")
    with private_database(url) as private:
        engine = sa.create_engine(private)
        try:
            with engine.connect() as conn:
                assert conn.exec_driver_sql("SHOW lock_timeout").scalar() == LOCK_TIMEOUT
            with engine.begin() as conn:
                conn.exec_driver_sql("CREATE TABLE lock_left (id int)")
            with engine.connect() as reader, engine.connect() as dropper:
                reader.exec_driver_sql("SELECT * FROM lock_left").all()  # its lock held
                dropper.exec_driver_sql("SET lock_timeout = '200ms'")  # the default, shorter
                with pytest.raises(sa.exc.OperationalError) as info:
                    dropper.exec_driver_sql("DROP TABLE lock_left")
                assert getattr(info.value.orig, "sqlstate", None) == "55P03"  # lock not available
                dropper.rollback()
                reader.rollback()
            with engine.begin() as conn:
                conn.exec_driver_sql("DROP TABLE lock_left")
        finally:
            engine.dispose()

"""Database fixtures: SQLite always, PostgreSQL and MariaDB when their URLs are configured.

``ENTITYWORKS_TEST_POSTGRES_URL`` / ``ENTITYWORKS_TEST_MARIADB_URL`` name a server; each test
session creates a private database there (so parallel runs never collide) and drops it at the
end. Unset or unreachable -> those tests skip; under ``CI=true`` they fail instead.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from entityworks import Store
from tests.conftest import IN_CI
from tests.databases import Unreachable, private_database

ENV = {"postgresql": "ENTITYWORKS_TEST_POSTGRES_URL", "mariadb": "ENTITYWORKS_TEST_MARIADB_URL"}


def _private_database(kind: str) -> Iterator[str]:
    url = os.environ.get(ENV[kind])
    if not url:
        message = f"{ENV[kind]} is not set"
        if IN_CI:
            pytest.fail(message + " (required under CI=true)")
        pytest.skip(message)
    with contextlib.ExitStack() as stack:
        try:
            private = stack.enter_context(private_database(url))
        except Unreachable as exc:
            if IN_CI:
                pytest.fail(str(exc))
            pytest.skip(str(exc))
        yield private


@pytest.fixture(scope="session")
def pg_url() -> Iterator[str]:
    """URL of a private PostgreSQL database for this test session."""
    yield from _private_database("postgresql")


@pytest.fixture(scope="session")
def mariadb_url() -> Iterator[str]:
    """URL of a private MariaDB database for this test session."""
    yield from _private_database("mariadb")


def _drop_everything(url: str) -> None:
    engine = sa.create_engine(url)
    try:
        metadata = sa.MetaData()
        metadata.reflect(engine)
        metadata.drop_all(engine)
    finally:
        engine.dispose()


@pytest.fixture(params=["sqlite", "postgresql", "mariadb"])
def backend_url(request: pytest.FixtureRequest, tmp_path) -> Iterator[str]:
    """A database URL per backend; server databases are emptied after each test."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'test.db'}"
        return
    url = request.getfixturevalue("pg_url" if request.param == "postgresql" else "mariadb_url")
    _drop_everything(url)
    yield url
    _drop_everything(url)


@pytest.fixture
def store(backend_url: str) -> Iterator[Store]:
    """A Store on each backend."""
    s = Store(backend_url)
    yield s
    s.close()


@pytest.fixture
def sqlite_store(tmp_path) -> Iterator[Store]:
    """A Store on an SQLite file."""
    s = Store(tmp_path / "test.db")
    yield s
    s.close()

"""One database per backend and write door, written once per module and read by every door."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import pytest

from tests.conftest import IN_CI
from tests.databases import Unreachable, private_database

ENV = {"postgresql": "ENTITYWORKS_TEST_POSTGRES_URL", "mariadb": "ENTITYWORKS_TEST_MARIADB_URL"}


@pytest.fixture(scope="module")
def databases(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """``databases(backend, name)``: the URL of a new empty database for that backend,
    created on first use in this module and dropped at its end (servers) or left in a
    temporary directory (SQLite)."""
    with contextlib.ExitStack() as stack:
        made: dict[tuple[str, str], str] = {}

        def get(backend: str, name: str) -> str:
            if (backend, name) in made:
                return made[backend, name]
            if backend == "sqlite":
                url = f"sqlite:///{tmp_path_factory.mktemp('parity') / (name + '.db')}"
            else:
                server = os.environ.get(ENV[backend])
                if not server:
                    message = f"{ENV[backend]} is not set"
                    if IN_CI:
                        pytest.fail(message + " (required under CI=true)")
                    pytest.skip(message)
                try:
                    url = stack.enter_context(private_database(server))
                except Unreachable as exc:
                    if IN_CI:
                        pytest.fail(str(exc))
                    pytest.skip(str(exc))
            made[backend, name] = url
            return url

        yield get

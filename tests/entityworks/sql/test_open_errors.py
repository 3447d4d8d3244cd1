"""A database that cannot be opened is one clear error (issue 29, item 8): a PostgreSQL or
MariaDB database that does not exist, an SQLite file in a missing folder, a file that is not
a database, a folder. Each is a ``ConfigurationError`` naming the database (never its
password) and the fix, whichever call connects first; the command line prints it as one line
(no MariaDB ``(1049, ...)`` tuple) and exits with status 2. Nothing is created."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from click.testing import CliRunner

from entityworks import ConfigurationError, Store
from entityworks.cli import cli


@dataclass
class Note:
    id: int
    text: str


#: The calls that may be the first to connect (``get`` takes the one-row point path).
FIRST_CALLS: dict[str, Callable[[Store], Any]] = {
    "create": lambda s: s.create(Note),
    "get": lambda s: s.get(Note, 1),
    "select": lambda s: list(s.select(Note)),
    "count": lambda s: s.count(Note),
    "insert": lambda s: s.insert(Note(1, "x")),
    "table_names": lambda s: s.table_names(),
}


def refused(url: Any, call: str) -> str:
    store = Store(url)  # connects only when first used
    try:
        with pytest.raises(ConfigurationError) as caught:
            FIRST_CALLS[call](store)
    finally:
        store.close()
    return str(caught.value)


def cli_error(url: str) -> str:
    result = CliRunner().invoke(cli, ["query", "note", "--db", url])
    assert result.exit_code == 2, (result.stdout, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


@pytest.mark.parametrize("call", FIRST_CALLS)
@pytest.mark.parametrize("form", ["path", "url"])
def test_sqlite_folder_missing(tmp_path: Path, call: str, form: str) -> None:
    path = tmp_path / "nowhere" / "levels.db"
    message = refused(path if form == "path" else f"sqlite:///{path}", call)
    assert message == (
        f"cannot open SQLite database {path}: the folder {path.parent} does "
        f"not exist; create it first (mkdir -p {path.parent})"
    )
    assert not path.parent.exists()


@pytest.mark.parametrize("call", FIRST_CALLS)
def test_sqlite_not_a_database(tmp_path: Path, call: str) -> None:
    path = tmp_path / "notes.txt"
    content = b"these are my notes, not a database\n" * 200
    path.write_bytes(content)
    message = refused(path, call)
    assert message.startswith(f"{path} is not an SQLite database")
    assert "give the path of a database file, or a new path to create one" in message
    assert path.read_bytes() == content  # untouched


def test_sqlite_a_folder(tmp_path: Path) -> None:
    assert refused(tmp_path, "count") == (
        f"cannot open SQLite database {tmp_path}: it is a folder, not a file"
    )


def test_sqlite_cli(tmp_path: Path) -> None:
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"x" * 4096)
    assert cli_error(str(junk)).startswith(f"error: {junk} is not an SQLite database")


def _missing(server_url: str, password: str | None = None) -> tuple[str, str]:
    name = f"ew_missing_{uuid.uuid4().hex[:8]}"
    url = sa.make_url(server_url).set(database=name)
    if password is not None:
        url = url.set(password=password)
    return url.render_as_string(hide_password=False), name


def _databases(server_url: str) -> set[str]:
    engine = sa.create_engine(server_url)
    try:
        with engine.connect() as conn:
            if engine.dialect.name == "postgresql":
                rows = conn.exec_driver_sql("SELECT datname FROM pg_database")
            else:
                rows = conn.exec_driver_sql("SHOW DATABASES")
            return {r[0] for r in rows}
    finally:
        engine.dispose()


@pytest.mark.parametrize("call", FIRST_CALLS)
def test_postgresql_unknown_database(pg_url: str, call: str) -> None:
    url, name = _missing(pg_url, password="pw-Sekrit-9931")
    message = refused(url, call)
    shown = sa.make_url(url).render_as_string(hide_password=True)
    assert message == (
        f"database {name!r} does not exist on the PostgreSQL server of "
        f"{shown}; create it first (createdb {name}, or CREATE DATABASE "
        f'"{name}" in psql)'
    )
    assert "Sekrit" not in message
    assert name not in _databases(pg_url)
    line = cli_error(url)
    assert line == f"error: {message}" and "Sekrit" not in line


@pytest.mark.parametrize("call", FIRST_CALLS)
def test_mariadb_unknown_database(mariadb_url: str, call: str) -> None:
    url, name = _missing(mariadb_url)
    message = refused(url, call)
    # the server's URL without the driver's options (a test server's ?ssl_disabled=true)
    server = sa.make_url(url).set(query={}).render_as_string(hide_password=False)
    assert message == (
        f"database {name!r} does not exist on the MariaDB server of {server}; "
        f"create it first (CREATE DATABASE `{name}` in the mariadb client)"
    )
    assert name not in _databases(mariadb_url)
    line = cli_error(url)
    assert line == f"error: {message}" and "1049" not in line


def test_mariadb_other_errors_are_sentences(mariadb_url: str) -> None:
    """A server error the Store does not explain is the server's sentence with its number,
    not PyMySQL's tuple, and never the password."""
    url = sa.make_url(mariadb_url).set(username="ew_nobody", password="pw-Sekrit-9931")
    line = cli_error(url.render_as_string(hide_password=False))
    assert not line.startswith("error: (") and line.endswith("(MariaDB error 1045)")
    assert "Sekrit" not in line

"""``entityworks tables`` (issue 29, item 16): the tables of any database on every backend,
with row counts and declared column types, internal tables hidden unless ``--all``, names
escaped as ``query`` escapes text, and read-only: a missing SQLite file is refused and never
created, an existing one is left byte for byte as it was.

The oracles are the DDL the tests run themselves (names, declared types) and the database's
own ``count(*)``.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
import sqlite3
from pathlib import Path

import pytest
import sqlalchemy as sa
from click.testing import CliRunner, Result

from entityworks.catalog import open_catalog
from entityworks.cli import cli

ESC_NAME = "odd\x1b]52;c;aGk=\x07name"  # an OSC 52 clipboard write inside a table name
SHOWN = "odd\\x1b]52;c;aGk=\\x07name"

#: Per backend: the DDL of two tables and the declared types the command must show.
DDL = {
    "sqlite": (
        "CREATE TABLE people (id INTEGER PRIMARY KEY, name VARCHAR(20), score WEIRD TYPE, note)",
        [("id", "INTEGER"), ("name", "VARCHAR(20)"), ("score", "WEIRD TYPE"), ("note", "")],
    ),
    "postgresql": (
        "CREATE TABLE people (id BIGINT PRIMARY KEY, name VARCHAR(20), "
        "score NUMERIC(10, 2), note TEXT)",
        [("id", "BIGINT"), ("name", "VARCHAR(20)"), ("score", "NUMERIC(10, 2)"), ("note", "TEXT")],
    ),
    "mysql": (
        "CREATE TABLE people (id BIGINT PRIMARY KEY, name VARCHAR(20), "
        "score DECIMAL(10, 2), note TEXT)",
        [("id", "BIGINT"), ("name", "VARCHAR(20)"), ("score", "DECIMAL(10, 2)"), ("note", "TEXT")],
    ),
}


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, ["tables", *args])


def build(url: str, rows: int = 3) -> str:
    """Two user tables (one named with control characters) with known rows."""
    engine = sa.create_engine(url)
    try:
        kind = engine.dialect.name
        with engine.begin() as conn:
            conn.execute(sa.text(DDL[kind][0]))
            for i in range(rows):
                conn.execute(
                    sa.text("INSERT INTO people (id, name) VALUES (:i, :n)"),
                    {"i": i + 1, "n": f"p{i}"},
                )
            odd = conn.dialect.identifier_preparer.quote(ESC_NAME)
            column = conn.dialect.identifier_preparer.quote("line\nbreak")
            conn.execute(sa.text(f"CREATE TABLE {odd} ({column} INTEGER)"))
    finally:
        engine.dispose()
    return kind


def count_of(url: str, table: str) -> int:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            quoted = conn.dialect.identifier_preparer.quote(table)
            return int(conn.execute(sa.text(f"SELECT count(*) FROM {quoted}")).scalar_one())
    finally:
        engine.dispose()


def test_lists_user_tables_with_counts_and_declared_types(backend_url: str) -> None:
    kind = build(backend_url)
    result = run("--counts", "--columns", "--format", "json", "--db", backend_url)
    assert result.exit_code == 0, result.stderr
    listed = json.loads(result.stdout)
    assert [t["table"] for t in listed] == sorted(["people", ESC_NAME])
    by_name = {t["table"]: t for t in listed}
    assert by_name["people"]["count"] == count_of(backend_url, "people") == 3
    assert by_name[ESC_NAME]["count"] == count_of(backend_url, ESC_NAME) == 0

    def norm(text: str) -> str:  # spelling only: case, spaces, MariaDB's display widths
        text = re.sub(r"INT\(\d+\)", "INT", text.upper())
        return " ".join(text.replace(",", ", ").split()).replace(" ,", ",")

    assert [(c["name"], norm(c["type"])) for c in by_name["people"]["columns"]] == [
        (n, norm(t)) for n, t in DDL[kind][1]
    ]
    assert [c["name"] for c in by_name[ESC_NAME]["columns"]] == ["line\nbreak"]
    # no raw control character reaches the terminal, in any format
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout


def test_the_text_and_csv_formats_escape_names(backend_url: str) -> None:
    build(backend_url)
    text = run("--counts", "--columns", "--db", backend_url)
    assert text.exit_code == 0, text.stderr
    assert "\x1b" not in text.stdout and "\x07" not in text.stdout
    lines = text.stdout.splitlines()
    assert lines[0].split() == ["table", "count", "columns"]
    odd = next(line for line in lines if line.startswith(SHOWN))
    assert odd.split()[1] == "0" and "line\\nbreak" in odd
    assert next(line for line in lines if line.startswith("people")).split()[1] == "3"
    table = run("--counts", "--columns", "--format", "csv", "--db", backend_url)
    assert table.exit_code == 0, table.stderr
    assert "\x1b" not in table.stdout
    rows = list(csv.reader(io.StringIO(table.stdout)))
    assert rows[0] == ["table", "count", "column", "type"]
    assert [r[:3] for r in rows[1:] if r[0] == SHOWN] == [[SHOWN, "0", "line\\nbreak"]]
    assert [r[2] for r in rows[1:] if r[0] == "people"] == ["id", "name", "score", "note"]
    plain = run("--format", "csv", "--db", backend_url)
    assert list(csv.reader(io.StringIO(plain.stdout))) == [["table"], [SHOWN], ["people"]]


def test_internal_tables_only_with_all(backend_url: str) -> None:
    open_catalog(backend_url).close()  # the catalog's tables and its entityworks_version
    shown = {t["table"] for t in json.loads(run("--format", "json", "--db", backend_url).stdout)}
    every = {
        t["table"] for t in json.loads(run("--all", "--format", "json", "--db", backend_url).stdout)
    }
    engine = sa.create_engine(backend_url)
    try:
        actual = set(sa.inspect(engine).get_table_names())
    finally:
        engine.dispose()
    internal = actual & {"entityworks_version", "entityworks_schema", "alembic_version"}
    assert "maps" in shown and "entityworks_version" in internal
    assert every == actual and every - shown == internal


def test_an_empty_database_lists_nothing(tmp_path: Path) -> None:
    db = tmp_path / "empty.db"
    sqlite3.connect(db).close()
    result = run("--counts", "--format", "json", "--db", str(db))
    assert result.exit_code == 0 and json.loads(result.stdout) == []


def digest(folder: Path) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in folder.iterdir()
        if p.is_file() and not p.name.endswith(("-wal", "-shm"))
    }


def test_a_sqlite_file_is_only_read(tmp_path: Path) -> None:
    db = tmp_path / "levels.db"
    build(f"sqlite:///{db}")
    with sqlite3.connect(db) as conn:  # a file in rollback-journal mode: WAL would be a write
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
    before = digest(tmp_path)
    result = run("--counts", "--columns", "--all", "--db", str(db))
    assert result.exit_code == 0, result.stderr
    assert digest(tmp_path) == before
    assert not (tmp_path / "levels.db-wal").exists()


@pytest.mark.parametrize("form", ["path", "url"])
def test_a_missing_file_is_refused_and_not_created(tmp_path: Path, form: str) -> None:
    db = tmp_path / "missing.db"
    result = run("--db", str(db) if form == "path" else f"sqlite:///{db}")
    assert result.exit_code == 2
    assert result.stderr.startswith("error: no database at") and result.stderr.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


def test_a_dangling_link_is_refused_and_nothing_appears_where_it_points(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "link.db").symlink_to(outside / "target.db")
    result = run("--db", str(tmp_path / "link.db"))
    assert result.exit_code == 2 and result.stderr.startswith("error: ")
    assert list(outside.iterdir()) == []


def test_a_directory_is_refused(tmp_path: Path) -> None:
    result = run("--db", str(tmp_path))
    assert result.exit_code == 2 and "not a database file" in result.stderr

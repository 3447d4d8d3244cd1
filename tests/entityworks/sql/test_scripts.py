"""DDL scripts and statement templates, executed on SQLite, PostgreSQL and MariaDB."""

from __future__ import annotations

import datetime as dt
import decimal
import math
import re
import sqlite3
import uuid
from dataclasses import dataclass, field

import pytest
import sqlalchemy as sa

from entityworks import EntityworksError, Store, column, primary_key, table
from entityworks.sql.scripts import DIALECTS, create_script, statement_templates

HOSTILE = "x'); DROP TABLE script_level; --"


@dataclass
class Room:
    name: str
    area: float | None


@table("script_level")
@dataclass
class Level:
    id: int = primary_key()
    name: str = column(index=True, max_length=100, default="")
    price: decimal.Decimal | None = None
    made: dt.datetime | None = None
    uid: uuid.UUID | None = None
    flag: bool = False
    rooms: list[Room] = field(default_factory=list)


@dataclass
class Loose:
    a: int
    b: str | None


def placeholders(sql: str) -> list[str]:
    """Names of ``:name`` / ``%(name)s`` placeholders (PostgreSQL ``::TYPE`` casts skipped)."""
    return [a or b for a, b in re.findall(r"(?<![:\w]):(\w+)|%\((\w+)\)s", sql)]


@pytest.mark.parametrize("dialect", list(DIALECTS))
def test_create_script_per_dialect(dialect: str) -> None:
    script = create_script(Level, dialect)
    assert script.count("CREATE TABLE") == 2 and "CREATE INDEX" in script
    assert "FOREIGN KEY" in script and script.rstrip().endswith(";")
    guarded = create_script(Level, dialect, if_not_exists=True)
    assert guarded.count("IF NOT EXISTS") >= 2


@pytest.mark.parametrize("dialect", list(DIALECTS))
def test_templates_hold_placeholders_only(dialect: str) -> None:
    t = statement_templates(Level, dialect)
    # Where a column would lose a Decimal's exponent, a companion column keeps it (on
    # SQLite the plain text, under the column name ``price``; the key is ``price__key``).
    scale = (
        ["price__text"]
        if dialect == "sqlite"
        else ["price__scale"]
        if dialect in ("mysql", "mariadb", "mssql")
        else []
    )
    columns = ["id", "name", "price", *scale, "made", "uid", "flag"]
    assert t.columns == tuple(columns) and t.key == ("id",)
    assert placeholders(t.insert) == columns
    assert sorted(placeholders(t.update)) == sorted(columns)
    assert placeholders(t.select_by_key) == ["id"] == placeholders(t.delete_by_key)
    assert set(placeholders(t.upsert)) == set(columns)
    for sql in (t.insert, t.update, t.upsert, t.select_by_key, t.delete_by_key):
        assert "'" not in sql  # no literal string anywhere
    child = t.children["rooms"]
    assert child.key == ("parent_key", "position")
    negzero = ["area__negzero"] if dialect in ("mysql", "mariadb", "sqlite") else []  # -0.0
    assert placeholders(child.insert) == ["parent_key", "position", "name", "area", *negzero]


def test_paramstyles_and_dialect_names() -> None:
    assert ":id" in statement_templates(Level, "sqlite").insert
    assert "%(id)s" in statement_templates(Level, "sqlite", paramstyle="pyformat").insert
    assert "%(id)s" in statement_templates(Level, "postgres").insert
    assert "MERGE INTO" in (statement_templates(Level, "sqlserver").upsert or "")
    with pytest.raises(EntityworksError, match="named placeholders"):
        statement_templates(Level, "sqlite", paramstyle="qmark")
    with pytest.raises(EntityworksError, match="unknown dialect 'oracle'"):
        create_script(Level, "oracle")


def test_a_table_without_key_gets_insert_only() -> None:
    t = statement_templates(Loose, "postgresql")
    assert t.insert and t.key == ()
    assert (t.update, t.upsert, t.select_by_key, t.delete_by_key) == (None,) * 4


def sample(key: int, name: str) -> Level:
    return Level(
        key,
        name,
        decimal.Decimal("12.50"),
        dt.datetime(2024, 5, 6, 7, 8, 9, 123456),
        uuid.UUID(int=key),
        key % 2 == 0,
    )


def exercise(execute: sa.Connection | sqlite3.Connection, dialect: str, url: str) -> None:
    """Run the DDL and every template with parameters; then read back through a Store."""
    style = "named" if dialect == "sqlite" else "pyformat"
    t = statement_templates(Level, dialect, paramstyle=style)
    run = execute.execute if isinstance(execute, sqlite3.Connection) else execute.exec_driver_sql
    for statement in create_script(Level, dialect).split(";\n\n"):
        if statement.strip():
            run(statement)
    run(t.insert, t.parameters(sample(1, HOSTILE)))
    run(t.insert, t.parameters(sample(2, "two")))
    run(t.children["rooms"].insert, t.children["rooms"].parameters((1, 0, Room("hall", 9.5))))
    run(t.children["rooms"].insert, t.children["rooms"].parameters((1, 1, Room("yard", -0.0))))
    changed = sample(2, "changed")
    changed.price = decimal.Decimal("-0.001")
    run(t.update, t.parameters(changed))
    run(t.upsert, t.parameters(sample(3, "new by upsert")))
    run(t.upsert, t.parameters(sample(1, HOSTILE + " again")))
    run(t.delete_by_key, {"id": 3})
    rows = list(run(t.select_by_key, {"id": 1}))
    assert len(rows) == 1 and rows[0][1] == HOSTILE + " again"
    execute.commit()
    with Store(url) as store:  # what the templates wrote is what the Store reads
        first = store.get(Level, 1)
        assert first == Level(
            **{
                **sample(1, HOSTILE + " again").__dict__,
                "rooms": [Room("hall", 9.5), Room("yard", -0.0)],
            }
        )
        assert math.copysign(1.0, first.rooms[1].area) == -1.0  # -0.0 kept its sign
        assert first.price.as_tuple() == decimal.Decimal("12.50").as_tuple()
        assert store.get(Level, 2) == changed
        assert store.get(Level, 3) is None


def test_ddl_and_templates_run_on_sqlite(tmp_path) -> None:
    path = tmp_path / "s.db"
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA foreign_keys=ON")
    exercise(conn, "sqlite", f"sqlite:///{path}")
    conn.close()


@pytest.mark.parametrize("kind", ["postgresql", "mariadb"])
def test_ddl_and_templates_run_on_servers(request: pytest.FixtureRequest, kind: str) -> None:
    url = request.getfixturevalue("pg_url" if kind == "postgresql" else "mariadb_url")
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            for name in ("script_level_rooms", "script_level"):
                conn.exec_driver_sql(f"DROP TABLE IF EXISTS {name}")
            conn.commit()
            exercise(conn, kind, url)
            for name in ("script_level_rooms", "script_level"):
                conn.exec_driver_sql(f"DROP TABLE {name}")
            conn.commit()
    finally:
        engine.dispose()


def test_mssql_script_keeps_precision_and_uses_current_types():
    from tests.entityworks.sql.test_store import Everything

    script = create_script(Everything, "mssql")
    for fragment in (
        "name NVARCHAR(max) NOT NULL",
        "amount NUMERIC(38, 10)",
        "at DATETIME2(6)",
        "aware DATETIMEOFFSET(6)",
        "day DATE NOT NULL",
        "clock TIME(6)",
        "grid VARBINARY(max)",
    ):
        assert fragment in script
    assert "NTEXT" not in script and "IMAGE" not in script

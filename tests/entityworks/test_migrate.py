"""Alembic revisions of the catalog and schema drift: a dataclass that gained fields migrates
a populated table without losing rows (SQLite always; PostgreSQL and MariaDB when configured)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.operations import ops

from entityworks import SchemaError, Store, WriteError, table
from entityworks.catalog import TABLES, MapRecord, open_catalog
from entityworks.migrate import (
    VERSION_TABLE,
    alembic_config,
    apply,
    current,
    describe,
    diff,
    head,
    upgrade,
)

CATALOG_TABLES = {"maps", "maps_caves", "maps_rooms", "maps_corridors", "sudoku_puzzles",
                  "entropy_reports"}


@table("levels")
@dataclass
class LevelV1:
    id: int | None
    name: str
    note: str | None = None


@table("levels")
@dataclass
class LevelV2:
    id: int | None
    name: str
    note: str = "none"          # was Optional: becomes NOT NULL, NULLs filled from the default
    theme: str = "stone"        # new NOT NULL field with a default
    depth: int | None = None    # new nullable field


@table("levels")
@dataclass
class LevelNoDefault:
    id: int | None
    name: str
    note: str | None = None
    budget: int = 0
    owner: str = ""


@table("levels")
@dataclass
class LevelNeedsValue:
    id: int | None
    name: str
    note: str | None
    owner: str


@table("levels")
@dataclass
class LevelShrunk:
    id: int | None
    name: str


@pytest.fixture(params=["sqlite", "postgresql", "mariadb"])
def url(request: pytest.FixtureRequest, tmp_path) -> str:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'm.db'}"
        return
    server = request.getfixturevalue("pg_url" if request.param == "postgresql"
                                     else "mariadb_url")
    _drop_all(server)
    yield server
    _drop_all(server)


def _drop_all(url: str) -> None:
    engine = sa.create_engine(url)
    metadata = sa.MetaData()
    metadata.reflect(engine)
    metadata.drop_all(engine)
    engine.dispose()


def _populate(store: Store) -> None:
    store.create(LevelV1)
    store.insert_many([LevelV1(None, f"level {i}", None if i % 2 else "kept")
                       for i in range(20)])


def test_upgrade_creates_the_catalog_through_its_revisions(url):
    store = Store(url)
    assert current(store) is None
    assert upgrade(store) == head() == "0001_catalog"
    assert CATALOG_TABLES | {VERSION_TABLE} <= set(store.table_names())
    assert diff(store, list(TABLES.values())) == []  # the revision matches the dataclasses
    assert upgrade(store) == "0001_catalog"  # idempotent
    store.close()


def test_existing_catalog_without_revisions_is_stamped(tmp_path):
    store = Store(tmp_path / "old.db")
    for cls in TABLES.values():
        store.create(cls)
    assert upgrade(store) == "0001_catalog" and current(store) == "0001_catalog"


def test_downgrade_to_base_removes_the_catalog(tmp_path):
    store = open_catalog(tmp_path / "d.db")
    config = alembic_config()
    with store.engine.connect() as conn:
        config.attributes["connection"] = conn.execution_options(entityworks_write=True)
        command.downgrade(config, "base")
        conn.commit()
    assert not CATALOG_TABLES & set(store.table_names())


def test_alembic_ini_offline_sql(capsys):
    from entityworks.migrate import _migrations_dir

    config = alembic_config()
    config.cmd_opts = argparse.Namespace(x=["db=sqlite:///offline.db"])
    command.upgrade(config, "head", sql=True)
    sql = capsys.readouterr().out
    assert "CREATE TABLE maps" in sql and "STRICT" in sql
    assert "CREATE UNIQUE INDEX" in sql or "UNIQUE (puzzle)" in sql
    assert (_migrations_dir() / "alembic.ini").is_file()


def test_diff_reports_added_fields_and_nullability(url):
    store = Store(url)
    _populate(store)
    operations = diff(store, LevelV2)
    kinds = sorted(type(o).__name__ for o in operations)
    assert kinds == ["AddColumnOp", "AddColumnOp", "AlterColumnOp"]
    text = sorted(describe(o) for o in operations)
    assert text[0].startswith("add column levels.depth") and text[0].endswith(" NULL")
    assert text[1].startswith("add column levels.theme") and text[1].endswith("NOT NULL")
    assert text[2] == "alter column levels.note: set NOT NULL"
    assert diff(store, LevelV1) == []
    store.close()


def test_apply_migrates_a_populated_table_without_losing_rows(url):
    store = Store(url)
    _populate(store)
    done = apply(store, LevelV2)
    assert len(done) == 3
    assert diff(store, LevelV2) == []
    fresh = Store(url)
    rows = sorted(fresh.select(LevelV2), key=lambda r: r.id)
    assert len(rows) == 20
    assert [r.name for r in rows] == [f"level {i}" for i in range(20)]
    assert [r.note for r in rows[:4]] == ["kept", "none", "kept", "none"]
    assert {r.theme for r in rows} == {"stone"} and {r.depth for r in rows} == {None}
    fresh.insert(LevelV2(None, "new", "n", "ice", 3))
    assert fresh.get(LevelV2, 21) == LevelV2(21, "new", "n", "ice", 3)
    with pytest.raises(WriteError):  # the old shape no longer fits: NOT NULL columns
        fresh.insert_many([LevelV1(None, "no note")])
    store.close()
    fresh.close()


def test_not_null_field_without_default_changes_nothing(url):
    store = Store(url)
    _populate(store)
    with pytest.raises(SchemaError, match="levels.owner must be NOT NULL but 20 row"):
        apply(store, LevelNeedsValue)
    assert [type(o) for o in diff(store, LevelNeedsValue)] == [ops.AddColumnOp]
    assert store.count(LevelV1) == 20
    assert apply(store, LevelNoDefault) and diff(store, LevelNoDefault) == []
    assert {(r.budget, r.owner) for r in Store(url).select(LevelNoDefault)} == {(0, "")}
    store.close()


def test_dropping_a_field_is_reported_not_applied(tmp_path):
    store = Store(tmp_path / "s.db")
    _populate(store)
    [op] = diff(store, LevelShrunk)
    assert describe(op) == "drop column levels.note"
    with pytest.raises(SchemaError, match="not applied automatically"):
        apply(store, LevelShrunk)
    assert store.count(LevelV1) == 20


def test_new_table_is_created(tmp_path):
    store = open_catalog(tmp_path / "c.db")
    [create] = [o for o in diff(store, LevelV1) if isinstance(o, ops.CreateTableOp)]
    assert describe(create) == "create table levels (3 columns)"
    apply(store, LevelV1)
    store.insert(LevelV1(None, "x"))
    assert store.count(LevelV1) == 1 and store.count(MapRecord) == 0
    assert diff(store, LevelV1) == []

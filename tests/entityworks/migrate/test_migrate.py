"""Alembic revisions of the catalog and schema drift: a dataclass that gained fields migrates
a populated table without losing rows (SQLite always; PostgreSQL and MariaDB when configured)."""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import math
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import sqlalchemy as sa
from alembic import command
from alembic.operations import ops

from entityworks import SchemaError, Store, WriteError, col, table
from entityworks.catalog import (
    TABLES,
    MapCave,
    MapCorridor,
    MapPlacement,
    MapRecord,
    MapRoom,
    open_catalog,
    upgrade_catalog,
)
from entityworks.catalog import SudokuPuzzle as SudokuPuzzleNow
from entityworks.catalog._models import MAP_INDEXES
from entityworks.catalog.packing import PackedGrid
from entityworks.migrate import (
    VERSION_TABLE,
    alembic_config,
    apply,
    current,
    describe,
    diff,
    head,
)

CATALOG_TABLES = {
    "maps",
    "maps_caves",
    "maps_rooms",
    "maps_corridors",
    "sudoku_puzzles",
    "sudoku_entries",
    "entropy_reports",
}


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
    note: str = "none"  # was Optional: becomes NOT NULL, NULLs filled from the default
    theme: str = "stone"  # new NOT NULL field with a default
    depth: int | None = None  # new nullable field


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
    server = request.getfixturevalue("pg_url" if request.param == "postgresql" else "mariadb_url")
    _drop_all(server)
    yield server
    _drop_all(server)


def _drop_all(url: str) -> None:
    engine = sa.create_engine(url)
    metadata = sa.MetaData()
    metadata.reflect(engine)
    metadata.drop_all(engine)
    engine.dispose()


def _frozen(cls: type, name: str, table_name: str, drop: set[str], **options: Any) -> type:
    """``cls`` without the fields ``drop`` (a table as an older revision holds it)."""
    from entityworks import entity

    namespace: dict[str, Any] = {"__module__": cls.__module__, "__annotations__": {}}
    for f in dataclasses.fields(cls):
        if f.name in drop:
            continue
        kwargs: dict[str, Any] = {"metadata": f.metadata, "kw_only": f.kw_only}
        if f.default is not dataclasses.MISSING:
            kwargs["default"] = f.default
        if f.default_factory is not dataclasses.MISSING:
            kwargs["default_factory"] = f.default_factory
        namespace["__annotations__"][f.name] = f.type
        namespace[f.name] = field(**kwargs)
    return entity(table_name, **options)(type(name, (), namespace))


#: ``maps`` and ``sudoku_puzzles`` as revisions 0008 and 0009 hold them (no provenance).
MapAt0009 = _frozen(
    MapRecord,
    "MapAt0009",
    "maps",
    {"generator_version", "grid_sha256"},
    indexes=MAP_INDEXES,
    compact_children=True,
)
SudokuPuzzleAt0009 = _frozen(
    SudokuPuzzleNow, "SudokuPuzzleAt0009", "sudoku_puzzles", {"solver_version"}
)


def _populate(store: Store) -> None:
    store.create(LevelV1)
    store.insert_many([LevelV1(None, f"level {i}", None if i % 2 else "kept") for i in range(20)])


def test_upgrade_creates_the_catalog_through_its_revisions(url):
    store = Store(url)
    assert current(store) is None
    assert upgrade_catalog(store) == head() == "0010_provenance"
    assert CATALOG_TABLES | {VERSION_TABLE, "entityworks_schema"} <= set(store.table_names())
    assert diff(store, list(TABLES.values())) == []  # the revision matches the dataclasses
    assert upgrade_catalog(store) == head()  # idempotent
    store.close()


OPEN_AT = """
import sys, time
from entityworks.catalog import open_catalog
url, start_at = sys.argv[1], float(sys.argv[2])
time.sleep(max(0.0, start_at - time.time()))
store = open_catalog(url)
from entityworks.migrate import current
print(current(store))
store.close()
"""


def test_processes_opening_a_new_catalog_at_once_all_succeed(url):
    """Several processes open the same new catalog at the same moment: one upgrade runs,
    the others wait for it (PostgreSQL and MariaDB: the upgrade lock; SQLite: its write
    lock) and find the catalog at its head revision, where each would otherwise read "no
    revision" and create the same tables."""
    import subprocess
    import sys
    import time

    start_at = time.time() + 8.0  # time to import, then all open together
    procs = [subprocess.Popen([sys.executable, "-c", OPEN_AT, url, str(start_at)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(4)]  # fmt: skip
    outcomes = [proc.communicate(timeout=300) for proc in procs]
    assert [proc.returncode for proc in procs] == [0] * len(procs), [e for _, e in outcomes]
    assert [out.strip().splitlines()[-1] for out, _ in outcomes] == [head()] * len(procs)
    store = Store(url)
    try:
        assert diff(store, list(TABLES.values())) == []
    finally:
        store.close()


CREATE_AT = """
import sys, time
from dataclasses import dataclass, field
from entityworks import Store

@dataclass
class Part:
    id: int | None
    name: str

@dataclass
class Machine:
    id: int | None
    label: str
    parts: list[Part] = field(default_factory=list)

url, start_at = sys.argv[1], float(sys.argv[2])
time.sleep(max(0.0, start_at - time.time()))
store = Store(url)
store.create(Machine)
store.insert(Machine(None, "m", [Part(None, "p")]))
print(len(list(store.select(Machine))))
store.close()
"""


def test_processes_creating_the_same_tables_at_once_all_succeed(url):
    """``Store.create`` of one class (and its child table) from several processes at the
    same moment: the check and the creation happen under the schema-change lock, so no
    process fails with "already exists"."""
    import subprocess
    import sys
    import time

    start_at = time.time() + 8.0
    procs = [subprocess.Popen([sys.executable, "-c", CREATE_AT, url, str(start_at)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(4)]  # fmt: skip
    outcomes = [proc.communicate(timeout=300) for proc in procs]
    assert [proc.returncode for proc in procs] == [0] * len(procs), [e for _, e in outcomes]
    counts = sorted(int(out.strip().splitlines()[-1]) for out, _ in outcomes)
    assert counts[-1] == len(procs) and counts[0] >= 1


def test_existing_catalog_without_revisions_is_stamped(tmp_path):
    store = Store(tmp_path / "old.db")
    for cls in TABLES.values():
        store.create(cls)
    assert upgrade_catalog(store) == head() and current(store) == head()


def test_downgrade_to_base_removes_the_catalog(tmp_path):
    store = open_catalog(tmp_path / "d.db")
    config = alembic_config()
    with store.engine.connect() as conn:
        config.attributes["connection"] = conn.execution_options(entityworks_write=True)
        command.downgrade(config, "base")
        conn.commit()
    assert not CATALOG_TABLES & set(store.table_names())


def test_alembic_ini_offline_sql(capsys):
    from entityworks.migrate.revisions import migrations_dir

    config = alembic_config()
    config.cmd_opts = argparse.Namespace(x=["db=sqlite:///offline.db"])
    command.upgrade(config, "head", sql=True)
    sql = capsys.readouterr().out
    assert "CREATE TABLE maps" in sql and "STRICT" in sql
    assert "CREATE UNIQUE INDEX" in sql or "UNIQUE (puzzle)" in sql
    assert (migrations_dir() / "alembic.ini").is_file()


def test_diff_reports_added_fields_and_nullability(url):
    store = Store(url)
    _populate(store)
    operations = diff(store, LevelV2)
    kinds = sorted(type(o).__name__ for o in operations)
    assert kinds == ["AddColumnOp", "AddColumnOp", "AlterColumnOp"]
    text = sorted(describe(o) for o in operations)
    assert text[0].startswith("add column levels.depth") and text[0].endswith(" NULL")
    assert text[1].startswith("add column levels.theme")
    assert text[1].endswith("NOT NULL DEFAULT 'stone'")
    assert text[2] == "alter column levels.note: set NOT NULL, set DEFAULT 'none'"
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


# -- revision 0002: compact grids and corridors, designer indexes --------------------------


def _revision_module(name: str):
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(alembic_config()).get_revision(name).module


def _old_records(old) -> list:
    """Maps of three kinds as revision 0001's frozen classes hold them (.npy, JSON paths)."""
    import dataclasses

    from entityworks.catalog import build_map

    out = []
    for kind, seed in [("dungeon", 3), ("caves", 4), ("islands", 5), ("dungeon", 6)]:
        new = build_map(kind, seed, {"width": 40, "height": 30})
        out.append(
            old.MapRecord(
                None,
                new.kind,
                new.generator,
                new.parameters,
                new.seed,
                new.width,
                new.height,
                new.grid,
                new.open_ratio,
                new.region_count,
                new.largest_region,
                new.created_at,
                caves=[old.MapCave(**dataclasses.asdict(c)) for c in new.caves],
                rooms=[old.MapRoom(**dataclasses.asdict(r)) for r in new.rooms],
                corridors=[old.MapCorridor(**dataclasses.asdict(c)) for c in new.corridors],
            )
        )
    # grids that are not the catalog's usual 0/1 uint8 must survive the re-encoding too
    # (of the row's own size: a grid whose shape is not the row's is refused on read)
    out[-1].grid = (np.arange(30 * 40, dtype=np.int16).reshape(30, 40) % 13) - 5
    out[-2].grid = (out[-2].grid * 7 + 2).astype(np.int32)
    return out


def _downgrade(store: Store, revision: str) -> None:
    from entityworks.migrate import migration_connection

    config = alembic_config()
    with migration_connection(store) as conn:
        config.attributes["connection"] = conn
        command.downgrade(config, revision)


def test_0005_migrates_a_populated_catalog_in_place_and_back(url):
    """A catalog filled at revision 0001 keeps every map, grid, cave, room and corridor
    through the upgrade (packed forms, new indexes) and through the downgrade."""
    old = _revision_module("0001_catalog")
    store = Store(url)
    assert upgrade_catalog(store, "0001_catalog") == "0001_catalog"
    before = _old_records(old)
    store.insert_many(before)
    sudoku = old.SudokuPuzzle(
        None, "t", "p", "1" + "0" * 80, None, 1, 0, None, None, before[0].created_at
    )
    store.insert(sudoku)
    expected = {r.id: r for r in before}

    assert upgrade_catalog(store) == head()
    assert diff(store, list(TABLES.values())) == []  # tables, types and indexes as the code
    fresh = Store(url)
    after = {m.id: m for m in fresh.select(MapRecord)}
    assert sorted(after) == sorted(expected)
    for key, was in expected.items():
        now = after[key]
        assert now.grid.dtype == was.grid.dtype and np.array_equal(now.grid, was.grid)
        assert (
            now.kind,
            now.seed,
            now.parameters,
            now.width,
            now.height,
            now.open_ratio,
            now.region_count,
            now.largest_region,
            now.created_at,
        ) == (
            was.kind,
            was.seed,
            was.parameters,
            was.width,
            was.height,
            was.open_ratio,
            was.region_count,
            was.largest_region,
            was.created_at,
        )
        assert [c.path for c in now.corridors] == [c.path for c in was.corridors]
        assert [c.length for c in now.corridors] == [c.length for c in was.corridors]
        assert len(now.rooms) == len(was.rooms) and len(now.caves) == len(was.caves)
    with fresh.engine.connect() as conn:
        raw = conn.execute(sa.text("SELECT grid FROM maps ORDER BY id")).scalars().all()
        columns = [c["name"] for c in sa.inspect(conn).get_columns("maps")]
        indexes = {ix["name"] for ix in sa.inspect(conn).get_indexes("maps")}
        paths = conn.execute(sa.text("SELECT path FROM maps_corridors")).scalars().all()
    assert columns[-1] == "grid"
    assert [bytes(b)[0] for b in raw] == [1, 1, 1, 2]  # two-valued packed; 12 values: zlib
    assert len(bytes(raw[0])) < 40 * 30 / 4
    assert paths and all(isinstance(p, bytes | memoryview) for p in paths)
    assert {
        "ix_maps_kind_width_height_region_count_open_ratio",
        "ix_maps_region_count_open_ratio_width_height",
        "ix_maps_kind_largest_region",
    } <= indexes  # as revision 0007 leaves them
    assert fresh.count(SudokuPuzzleNow) == 1
    if fresh.dialect.name == "sqlite":  # child tables clustered by their key
        with fresh.engine.connect() as conn:
            sql = dict(
                conn.execute(
                    sa.text("SELECT name, sql FROM sqlite_master WHERE type = 'table'")
                ).all()
            )
        for child in ("maps_caves", "maps_rooms", "maps_corridors", "maps_placements"):
            assert "WITHOUT ROWID" in sql[child] and "STRICT" in sql[child], sql[child]
        assert "WITHOUT ROWID" not in sql["maps"]

    _downgrade(fresh, "0001_catalog")
    assert current(fresh) == "0001_catalog"
    back = Store(url)
    rows = {m.id: m for m in back.select(old.MapRecord)}
    assert sorted(rows) == sorted(expected)
    if back.dialect.name == "sqlite":
        with back.engine.connect() as conn:
            sql = dict(
                conn.execute(
                    sa.text("SELECT name, sql FROM sqlite_master WHERE type = 'table'")
                ).all()
            )
        assert "WITHOUT ROWID" not in sql["maps_rooms"] + sql["maps_corridors"]
    for key, was in expected.items():
        assert np.array_equal(rows[key].grid, was.grid)
        assert rows[key].grid.dtype == was.grid.dtype
        assert rows[key].corridors == was.corridors and rows[key].rooms == was.rooms
        assert rows[key].caves == was.caves
    for s in (store, fresh, back):
        s.close()


def test_0005_refuses_nothing_and_loses_nothing_on_an_empty_catalog(tmp_path):
    store = Store(tmp_path / "e.db")
    upgrade_catalog(store, "0001_catalog")
    assert upgrade_catalog(store) == head()
    assert store.count(MapRecord) == 0 and diff(store, list(TABLES.values())) == []
    store.close()


def _map_indexes(url: str) -> dict[str, list[str]]:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return {ix["name"]: ix["column_names"] for ix in sa.inspect(conn).get_indexes("maps")}
    finally:
        engine.dispose()


@table("maps")
@dataclass
class MapAt0007:
    """A map row as revisions 0005-0007 hold it (no build outcome), with its children."""

    id: int | None
    kind: str
    generator: str
    parameters: dict[str, Any]
    seed: int | None
    width: int
    height: int
    open_ratio: float
    region_count: int
    largest_region: int
    created_at: dt.datetime
    grid: PackedGrid
    caves: list[MapCave] = field(default_factory=list)
    rooms: list[MapRoom] = field(default_factory=list)
    corridors: list[MapCorridor] = field(default_factory=list)
    placements: list[MapPlacement] = field(default_factory=list)


def _maps_at_0007(kinds_and_seeds: list[tuple[str, int]]) -> list[MapAt0007]:
    from entityworks.catalog import build_map

    out = []
    for kind, seed in kinds_and_seeds:
        new = build_map(kind, seed, {"width": 40, "height": 30})
        out.append(
            MapAt0007(**{f.name: getattr(new, f.name) for f in dataclasses.fields(MapAt0007)})
        )
    return out


def test_0007_swaps_the_indexes_and_keeps_every_row(url):
    """Revision 0007 replaces two composite indexes of maps by covering ones, rows untouched,
    and its downgrade brings the 0005 indexes back."""
    store = Store(url)
    assert upgrade_catalog(store, "0006_server_defaults") == "0006_server_defaults"
    maps = _maps_at_0007([("dungeon", 3), ("caves", 4), ("islands", 5)])
    store.insert_many(maps)
    expected = {m.id: m for m in Store(url).select(MapAt0007)}
    old = {
        "ix_maps_kind_width_height": ["kind", "width", "height"],
        "ix_maps_region_count_open_ratio": ["region_count", "open_ratio"],
    }
    new = {
        "ix_maps_kind_width_height_region_count_open_ratio": [
            "kind",
            "width",
            "height",
            "region_count",
            "open_ratio",
        ],
        "ix_maps_region_count_open_ratio_width_height": [
            "region_count",
            "open_ratio",
            "width",
            "height",
        ],
    }
    assert old.items() <= _map_indexes(url).items()

    assert upgrade_catalog(store) == head()  # through 0007 (and the revisions after it)
    indexes = _map_indexes(url)
    assert new.items() <= indexes.items() and not old.keys() & indexes.keys()
    assert diff(store, list(TABLES.values())) == []
    after = Store(url)
    assert {m.id: m for m in after.select(MapRecord)}.keys() == expected.keys()
    for m in after.select(MapRecord):
        was = expected[m.id]
        assert np.array_equal(m.grid, was.grid) and m.grid.dtype == was.grid.dtype
        assert (m.corridors, m.rooms, m.caves, m.open_ratio) == (
            was.corridors,
            was.rooms,
            was.caves,
            was.open_ratio,
        )

    _downgrade(after, "0006_server_defaults")
    assert current(after) == "0006_server_defaults"
    indexes = _map_indexes(url)
    assert old.items() <= indexes.items() and not new.keys() & indexes.keys()
    back = Store(url)
    assert sorted(m.id for m in back.select(MapAt0007)) == sorted(expected)
    for s in (store, after, back):
        s.close()


# -- issue 10 item 1: child tables keep every row through an applied change ---------------------


@dataclass
class Spot:
    x: int
    y: int


@table("levels")
@dataclass
class KidsV1:
    id: int | None
    name: str
    note: str | None = None
    spots: list[Spot] = field(default_factory=list)


@table("levels")
@dataclass
class KidsDefaulted:  # a new NOT NULL field with a default (SQLite rebuilds the table)
    id: int | None
    name: str
    note: str | None = None
    theme: str = "stone"
    spots: list[Spot] = field(default_factory=list)


@table("levels")
@dataclass
class KidsOptional:  # name becomes Optional (SQLite rebuilds the table)
    id: int | None
    name: str | None
    note: str | None = None
    spots: list[Spot] = field(default_factory=list)


@table("levels")
@dataclass
class KidsBoth:
    id: int | None
    name: str | None
    note: str = "none"
    theme: str = "stone"
    spots: list[Spot] = field(default_factory=list)


KIDS = {"defaulted": KidsDefaulted, "optional": KidsOptional, "both": KidsBoth}


def _populate_kids(store: Store) -> list[KidsV1]:
    store.create(KidsV1)
    levels = [
        KidsV1(None, f"level {i}", None if i % 2 else "kept", [Spot(i, j) for j in range(i % 4)])
        for i in range(12)
    ]
    store.insert_many(levels)
    return levels


def _kept(url: str, cls: type, levels: list[KidsV1]) -> None:
    """Every parent and every child row came through, in order."""
    fresh = Store(url)
    rows = sorted(fresh.select(cls), key=lambda r: r.id)
    fresh.close()
    assert [(r.id, r.name) for r in rows] == [(lv.id, lv.name) for lv in levels]
    assert [r.spots for r in rows] == [lv.spots for lv in levels]
    assert sum(len(r.spots) for r in rows) == 18


@pytest.mark.parametrize("change", sorted(KIDS))
def test_apply_keeps_child_rows(url, change):
    store = Store(url)
    levels = _populate_kids(store)
    cls = KIDS[change]
    done = apply(store, cls)
    assert done and done.rows == {"levels": 12, "levels_spots": 18}
    assert diff(store, cls) == []
    store.close()
    _kept(url, cls, levels)


@pytest.mark.parametrize("change", sorted(KIDS))
def test_schema_diff_apply_cli_keeps_child_rows(url, change, tmp_path, monkeypatch):
    from click.testing import CliRunner

    from entityworks.cli import cli

    store = Store(url)
    levels = _populate_kids(store)
    store.close()
    module = tmp_path / "kids_models.py"
    module.write_text(
        "from tests.entityworks.migrate.test_migrate import KidsDefaulted, KidsOptional, KidsBoth\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = f"kids_models:{KIDS[change].__name__}"
    result = CliRunner().invoke(
        cli, ["schema", "diff", "--dataclass", spec, "--apply", "--db", url], catch_exceptions=False
    )
    assert result.exit_code == 0, result.stderr + result.stdout
    assert "rows kept (levels: 12, levels_spots: 18)" in result.stdout
    _kept(url, KIDS[change], levels)


def test_foreign_key_violation_rolls_the_change_back(tmp_path):
    """An orphan child row (written with foreign keys off) makes the rebuilt table fail
    ``PRAGMA foreign_key_check``: the change is refused and nothing changes."""
    url = f"sqlite:///{tmp_path / 'fk.db'}"
    store = Store(url)
    _populate_kids(store)
    with store.engine.connect() as conn:
        raw = conn.connection.dbapi_connection
        raw.execute("PRAGMA foreign_keys=OFF")
        raw.execute("INSERT INTO levels_spots (parent_key, position, x, y) VALUES (99, 0, 1, 1)")
        raw.execute("PRAGMA foreign_keys=ON")
    with pytest.raises(SchemaError, match="foreign key.*rolled back"):
        apply(store, KidsDefaulted)
    assert [type(o) for o in diff(store, KidsDefaulted)] == [ops.AddColumnOp]
    with store.engine.connect() as conn:  # foreign keys are on again for this pool
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
        count = conn.exec_driver_sql("SELECT count(*) FROM levels_spots").scalar()
    assert count == 19


def test_lost_rows_are_refused_not_reported_as_kept(tmp_path, monkeypatch):
    """Were the rebuild to cascade (foreign keys left on), the count check catches it."""
    from entityworks.migrate import dialects

    url = f"sqlite:///{tmp_path / 'lost.db'}"
    store = Store(url)
    levels = _populate_kids(store)
    monkeypatch.setattr(dialects, "sqlite_foreign_keys", lambda conn, on: None)
    with pytest.raises(SchemaError, match=r"levels_spots: 18 -> 0\); nothing was changed"):
        apply(store, KidsOptional)
    monkeypatch.undo()
    _kept(url, KidsV1, levels)


def test_upgrade_keeps_child_rows_of_a_populated_catalog(tmp_path):
    """Revisions run with the same protection (a later revision may rebuild ``maps``)."""
    from entityworks.catalog import generate_into

    store = open_catalog(tmp_path / "cat.db")
    generate_into(store, "dungeon", count=2, seed=1)
    with store.engine.connect() as conn:
        before = conn.exec_driver_sql("SELECT count(*) FROM maps_rooms").scalar()
    assert before > 0
    assert upgrade_catalog(store) == head()
    with store.engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT count(*) FROM maps_rooms").scalar() == before
        assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1


def test_migrate_does_not_import_the_catalog():
    import ast
    import subprocess
    import sys
    from pathlib import Path

    import entityworks.migrate as migrate

    tree = ast.parse(Path(migrate.__file__).read_text())
    imported = {
        getattr(n, "module", None) or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
    }
    imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert not {m for m in imported if "catalog" in m}
    code = (
        "import sys, entityworks.migrate; "
        "assert 'entityworks.catalog' not in sys.modules, 'catalog imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# -- revision 0008: sudoku entries, build outcomes -----------------------------------------


def _columns(url: str, name: str) -> list[str]:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return [c["name"] for c in sa.inspect(conn).get_columns(name)]
    finally:
        engine.dispose()


def test_0008_adds_entries_and_outcomes_and_keeps_every_row(url):
    """A catalog filled at revision 0007 keeps every map (grid still the last column, the
    new outcome columns NULL) and puzzle through the upgrade and the downgrade; the upgraded
    catalog stores outcomes and entries."""
    from entityworks.catalog import SudokuEntry, build_map, store_sudokus
    from generators import sudoku

    store = Store(url)
    assert upgrade_catalog(store, "0007_covering_indexes") == "0007_covering_indexes"
    maps = _maps_at_0007([("dungeon", 3), ("caves", 4), ("dungeon", 6)])
    store.insert_many(maps)
    puzzle = sudoku.generate(30, seed=1)
    store.insert(
        SudokuPuzzleAt0009(None, "old.txt", "Grid 01", puzzle.puzzle, puzzle.solution, 30, 1)
    )
    expected = {m.id: m for m in Store(url).select(MapAt0007)}
    assert "build_success" not in _columns(url, "maps")

    assert upgrade_catalog(store) == head()
    assert diff(store, list(TABLES.values())) == []
    columns = _columns(url, "maps")
    assert columns[-7:] == [
        "build_success",
        "rooms_asked",
        "rooms_built",
        "connected",
        "generator_version",  # revision 0010
        "grid_sha256",
        "grid",
    ]
    after = Store(url)
    rows = {m.id: m for m in after.select(MapRecord)}
    assert rows.keys() == expected.keys()
    for key, was in expected.items():
        now = rows[key]
        assert np.array_equal(now.grid, was.grid) and now.grid.dtype == was.grid.dtype
        assert (now.rooms, now.corridors, now.caves, now.seed, now.created_at) == (
            was.rooms,
            was.corridors,
            was.caves,
            was.seed,
            was.created_at,
        )
        assert (now.build_success, now.rooms_asked, now.rooms_built, now.connected) == (
            None,
            None,
            None,
            None,
        )
    fresh = build_map("dungeon", 3, {"width": 40, "height": 30, "rooms": 40})
    after.insert(fresh)
    back = after.get(MapRecord, fresh.id)
    assert (back.build_success, back.rooms_asked, back.connected) == (False, 40, True)
    assert back.rooms_built == len(back.rooms) == len(fresh.rooms)
    entries = [
        sudoku.NamedPuzzle("Grid 01", puzzle.puzzle, 1),
        sudoku.NamedPuzzle("Grid 02", puzzle.puzzle, 11),
    ]
    done = store_sudokus(after, "old.txt", entries, [sudoku.solve(puzzle.puzzle)] * 2)
    assert (done.stored, done.entries) == (0, 2) and after.count(SudokuEntry) == 2

    _downgrade(after, "0007_covering_indexes")
    assert current(after) == "0007_covering_indexes"
    assert "sudoku_entries" not in Store(url).table_names()
    assert _columns(url, "maps")[-1] == "grid"
    assert not {"build_success", "rooms_asked", "rooms_built", "connected"} & set(
        _columns(url, "maps")
    )
    down = Store(url)
    kept = {m.id: m for m in down.select(MapAt0007)}
    assert kept.keys() == expected.keys() | {fresh.id}
    for key, was in expected.items():
        assert np.array_equal(kept[key].grid, was.grid) and kept[key].rooms == was.rooms
    assert down.count(SudokuPuzzleNow) == 1
    assert upgrade_catalog(down) == head() and diff(down, list(TABLES.values())) == []
    for s in (store, after, down):
        s.close()


# -- revision 0009: SQLite's int, float and str columns with type affinity -----------------


#: A catalog as entityworks 0.2.3 wrote it (at revision 0008), dumped by sqlite3.
CATALOG_0_2_3 = Path(__file__).parent / "data" / "catalog_v0_2_3.sql"


def _catalog_of_0_2_3(path: Path) -> None:
    with sqlite3.connect(path) as conn:
        conn.executescript(CATALOG_0_2_3.read_text(encoding="utf-8"))
        # -0.0 in two ANY float columns, which keep its sign
        conn.execute(
            "UPDATE maps_caves SET centroid_x = ? WHERE parent_key = 3 AND position = 0", (-0.0,)
        )
        conn.execute("UPDATE entropy_reports SET serial_correlation = ?", (-0.0,))
    conn.close()


def _declared(path: Path) -> dict[tuple[str, str], str]:
    with sqlite3.connect(path) as conn:
        tables = [
            n
            for (n,) in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name IN "
                f"({', '.join('?' * len(CATALOG_TABLES | {'maps_placements'}))})",
                sorted(CATALOG_TABLES | {"maps_placements"}),
            )
        ]
        out = {
            (t, c): d
            for t in tables
            for _, c, d, *_ in conn.execute("SELECT * FROM pragma_table_info(?)", (t,))
        }
    conn.close()
    return out


def _everything(path: Path) -> dict[str, Any]:
    """Every row of the catalog through the Store (grids as shape, dtype and bytes; the
    sign of each float zero beside its value)."""
    from entityworks.catalog import EntropyRecord, SudokuEntry

    store = Store(path)
    try:
        maps = [
            (
                dataclasses.replace(m, grid=None),
                (m.grid.shape, str(m.grid.dtype), m.grid.tobytes()),
                [math.copysign(1.0, c.centroid_x) for c in m.caves],
            )
            for m in store.select(MapAt0009, order_by="id")
        ]
        reports = [
            (r, math.copysign(1.0, r.serial_correlation))
            for r in store.select(EntropyRecord, order_by="id")
        ]
        return {
            "maps": maps,
            "reports": reports,
            "puzzles": list(store.select(SudokuPuzzleAt0009, order_by="id")),
            "entries": list(store.select(SudokuEntry, order_by="id")),
        }
    finally:
        store.close()


def _text_bound(path: Path) -> tuple[list[int], int, int]:
    """What other tools find with values bound as text: maps of width '30', rooms of map
    '1', caves of map '3'."""
    with sqlite3.connect(path) as conn:
        wide = [
            i for (i,) in conn.execute("SELECT id FROM maps WHERE width = ? ORDER BY id", ("30",))
        ]
        rooms = conn.execute(
            "SELECT count(*) FROM maps_rooms WHERE parent_key = ?", ("1",)
        ).fetchone()[0]
        caves = conn.execute(
            "SELECT count(*) FROM maps_caves WHERE parent_key = ?", ("3",)
        ).fetchone()[0]
    conn.close()
    return wide, rooms, caves


def test_0009_gives_a_catalog_of_0_2_3_type_affinity_and_keeps_every_row(tmp_path):
    path = tmp_path / "old.db"
    _catalog_of_0_2_3(path)
    assert _text_bound(path) == ([], 0, 0)  # ANY: no text equals a number
    store = Store(path)
    assert current(store) == "0008_entries_and_outcomes"
    before = _everything(path)  # read exactly before the upgrade too
    assert before["maps"][2][2][0] == -1.0 and before["reports"][0][1] == -1.0
    assert {d for d in _declared(path).values()} >= {"ANY"}

    assert upgrade_catalog(store) == head() == "0010_provenance"
    assert diff(store, list(TABLES.values())) == []
    store.close()
    declared = _declared(path)
    assert "ANY" not in declared.values()
    assert declared[("maps", "width")] == "INTEGER" and declared[("maps", "kind")] == "TEXT"
    assert declared[("maps_caves", "centroid_x")] == "REAL"
    assert declared[("maps_caves", "centroid_x__negzero")] == "INTEGER"
    with sqlite3.connect(path) as conn:
        ddl = " ".join(
            s for (s,) in conn.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL")
        )
        columns = [c for _, c, *_ in conn.execute("SELECT * FROM pragma_table_info('maps')")]
        negzero = conn.execute(
            "SELECT parent_key, position FROM maps_caves WHERE centroid_x__negzero = 1"
        ).fetchall()
    conn.close()
    assert "typeof" not in ddl and "WITHOUT ROWID" in ddl
    assert columns[columns.index("open_ratio") + 1] == "open_ratio__negzero"
    assert columns[-1] == "grid" and negzero == [(3, 0)]
    assert _everything(path) == before
    assert _text_bound(path) == ([1, 2, 3], 1, 3)

    # written again with the new declarations: checked by the Store, -0.0 kept
    store = Store(path)
    from entityworks.catalog import build_map

    fresh = build_map("dungeon", 5, {"width": 30, "height": 20})
    store.insert(fresh)
    assert _text_bound(path)[0] == [1, 2, 3, fresh.id]
    _downgrade(store, "0008_entries_and_outcomes")
    store.close()
    assert {d for (t, c), d in _declared(path).items() if c == "width"} == {"ANY"}
    assert not [c for (_, c) in _declared(path) if c.endswith("__negzero")]
    down = _everything(path)
    assert [m[0].id for m in down["maps"]] == [1, 2, 3, 4, fresh.id]
    assert down["maps"][:4] == before["maps"] and down["reports"] == before["reports"]
    store = Store(path)
    assert upgrade_catalog(store) == head() and diff(store, list(TABLES.values())) == []
    store.close()
    assert _everything(path)["maps"][:4] == before["maps"]


def test_0009_lets_datasette_filter_an_upgraded_catalog_of_0_2_3(tmp_path):
    pytest.importorskip("datasette")
    import asyncio

    from datasette.app import Datasette

    path = tmp_path / "old.db"
    _catalog_of_0_2_3(path)

    async def found() -> tuple[list[int], list[int], list[int]]:
        ds = Datasette([str(path)])
        maps = await ds.client.get("/old/maps.json?width=30&_shape=array&_col=id")
        rooms = await ds.client.get("/old/maps_rooms.json?parent_key=1&_shape=array")
        kinds = await ds.client.get("/old/maps.json?kind=caves&_shape=array&_col=id")
        assert maps.status_code == rooms.status_code == kinds.status_code == 200
        return (
            [r["id"] for r in maps.json()],
            [r["parent_key"] for r in rooms.json()],
            [r["id"] for r in kinds.json()],
        )

    assert asyncio.run(found()) == ([], [], [3])  # 0.2.3: only the text filter worked
    store = Store(path)
    upgrade_catalog(store)
    store.close()
    assert asyncio.run(found()) == ([1, 2, 3], [1], [3])


# -- revision 0010: provenance (generator version and grid hash, solver version) ------------


def test_0010_keeps_every_row_and_fill_records_what_the_generator_rebuilds(url):
    """A catalog filled at revision 0009 keeps every map and puzzle through the upgrade
    (new columns NULL, grid still last); ``verify_catalog`` counts those maps as stored
    without provenance, ``fill=True`` records the installed generator's version and the
    grid's hash on those it rebuilds exactly, and not on a map whose grid was changed."""
    import hashlib

    import generators
    from entityworks.catalog import build_map, verify_catalog

    store = Store(url)
    assert upgrade_catalog(store, "0009_sqlite_affinity") == "0009_sqlite_affinity"
    made = [build_map(kind, seed, {"width": 30, "height": 20}) for kind, seed in
            [("dungeon", 1), ("cellular", 2), ("dungeon", 3)]]  # fmt: skip
    store.insert_many(
        MapAt0009(**{f.name: getattr(m, f.name) for f in dataclasses.fields(MapAt0009)})
        for m in made
    )
    store.insert(SudokuPuzzleAt0009(None, "old.txt", "Grid 01", "1" * 81, None, 81, 0))
    ids = [m.id for m in store.select(MapAt0009, order_by="id")]
    # the third map's grid replaced by the first's (same size), before the upgrade
    first = store.get(MapAt0009, ids[0])
    store.update(MapAt0009, {"grid": first.grid}, where=col("id") == ids[2])
    store.close()

    store = Store(url)
    assert upgrade_catalog(store) == head() and diff(store, list(TABLES.values())) == []
    columns = _columns(url, "maps")
    assert columns[-3:] == ["generator_version", "grid_sha256", "grid"]
    assert _columns(url, "sudoku_puzzles")[-1] == "solver_version"
    rows = store.select(MapRecord, order_by="id")
    assert [(m.id, m.generator_version, m.grid_sha256) for m in rows] == [
        (i, None, None) for i in ids
    ]
    assert [p.solver_version for p in store.select(SudokuPuzzleNow)] == [None]

    report = verify_catalog(store)
    assert report.unrecorded == 2 and report.filled == 0
    assert [(f.map_id, f.problem) for f in report.findings] == [(ids[2], "regenerated")]
    assert verify_catalog(store, fill=True).filled == 2
    kept = {m.id: m for m in store.select(MapRecord)}
    for m in made[:2]:
        grid = np.ascontiguousarray(m.grid, dtype=np.uint8)
        digest = hashlib.sha256(b"%dx%d\n" % grid.shape + grid.tobytes()).hexdigest()
        row = kept[ids[made.index(m)]]
        assert (row.generator_version, row.grid_sha256) == (generators.__version__, digest)
    assert (kept[ids[2]].generator_version, kept[ids[2]].grid_sha256) == (None, None)
    again = verify_catalog(store)
    assert again.unrecorded == 0 and [f.map_id for f in again.findings] == [ids[2]]

    _downgrade(store, "0009_sqlite_affinity")
    assert "generator_version" not in _columns(url, "maps")
    assert "solver_version" not in _columns(url, "sudoku_puzzles")
    assert _columns(url, "maps")[-1] == "grid"
    assert [m.id for m in Store(url).select(MapAt0009, order_by="id")] == ids
    assert upgrade_catalog(store) == head() and diff(store, list(TABLES.values())) == []
    store.close()

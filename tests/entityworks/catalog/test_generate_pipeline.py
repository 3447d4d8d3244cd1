"""The generation pipeline (issue 21): workers build each chunk's rows straight from the
generator's results (``encode_chunk``: ``map_values``, ``encode_values``, the corridors packed
together by ``pack_points_many``) and the writer only writes them. What it stores must be
what the object path (``map_record`` then ``encode_rows``) stores, whatever the worker count.
"""

from __future__ import annotations

import contextlib
import pickle
import random
import sqlite3
import subprocess
import sys
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from entityworks.catalog import (
    KINDS,
    MapRecord,
    build_map,
    generate_into,
    map_kind,
    map_stats,
    open_catalog,
)
from entityworks.catalog._build import build_chunk, encode_chunk
from entityworks.catalog.packing import CellPath, pack_points, pack_points_many
from entityworks.errors import ValueEncodingError, WriteError
from entityworks.sql.encoded import EncodedRows, encode_rows, encode_values, fields

SMALL = {"width": 40, "height": 30}


def _without_created_at(rows: Any) -> Any:
    at = [name for name, _ in rows.layout].index("created_at")
    return (
        [tuple(v for i, v in enumerate(r) if i != at) for r in rows.rows],
        rows.children,
        rows.layout,
        rows.cls,
    )


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_encode_chunk_equals_encoding_the_records(kind):
    """The oracle: the rows encode_rows makes of the MapRecords map_record builds."""
    seeds = list(range(11, 19))
    direct = encode_chunk(kind, seeds, SMALL)
    objects = encode_rows(build_chunk(kind, seeds, SMALL))
    assert _without_created_at(direct) == _without_created_at(objects)
    assert direct.column("seed") == seeds


@pytest.mark.parametrize("kind", ["dungeon", "caves"])
def test_encode_chunk_at_default_sizes(kind):
    seeds = [3, 4, 5] if kind == "caves" else list(range(3, 23))
    direct = encode_chunk(kind, seeds, {})
    assert _without_created_at(direct) == _without_created_at(
        encode_rows(build_chunk(kind, seeds, {}))
    )
    corridors = {c.field: c for c in direct.children}["corridors"]
    assert sum(corridors.counts) >= 8  # the column form of the paths was taken


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_generators_report_the_figures_map_stats_measures(kind):
    """map_values takes the generator's open_ratio, regions and largest_region: they must be
    what map_stats measures on the grid the row stores."""
    spec = map_kind(kind)
    for seed in range(20):
        result = spec.function()(**SMALL, **dict(spec.fixed), seed=seed)
        grid = np.ascontiguousarray(result.grid, dtype=np.uint8)
        reported = (result.open_ratio, result.regions, result.largest_region)
        assert reported == map_stats(grid)
        assert [type(v) for v in reported] == [float, int, int]


def _walk(rng: random.Random, points: int, x: int, y: int, as_lists: bool) -> list[Any]:
    path: list[Any] = [(x, y)]
    for _ in range(points - 1):
        dx, dy = rng.choice([(1, 0), (0, 1), (-1, 0), (0, -1)])
        x, y = x + dx, y + dy
        path.append((x, y))
    return [list(p) for p in path] if as_lists else path


def _packed_one_by_one(paths: list[Any]) -> Any:
    try:
        return [pack_points(p) for p in paths]
    except ValueError as exc:
        return type(exc)


def _packed_together(paths: list[Any]) -> Any:
    try:
        return pack_points_many(paths)
    except ValueError as exc:
        return type(exc)


@given(st.integers(0, 2**32 - 1), st.sampled_from([3, 150, 20_000, 2**21, 2**40]))
def test_pack_points_many_equals_pack_points(seed, spread):
    rng = random.Random(seed)
    paths = [
        _walk(
            rng,
            rng.randint(1, 40),
            rng.randint(-spread, spread),
            rng.randint(-spread, spread),
            rng.random() < 0.5,
        )
        for _ in range(rng.randint(0, 30))
    ]
    odd = rng.choice([None, "jump", "empty", "huge", "bool", "float", "triple", "array"])
    if paths and odd == "jump":
        paths[-1] = [(0, 0), (2, 0)]  # not a unit step: stored as pairs
    elif paths and odd == "empty":
        paths[0] = []
    elif paths and odd == "huge":
        paths[0] = [(2**64, 0)]  # refused
    elif paths and odd == "bool":
        paths[0] = [(True, 0), (1, 1)]  # refused
    elif paths and odd == "float":
        paths[0] = [(0.0, 0), (1, 0)]  # refused
    elif paths and odd == "triple":
        paths[0] = [(0, 0, 0), (1, 0)]  # refused
    elif paths and odd == "array":
        paths[0] = [np.array([0, 0]), np.array([1, 0])]  # refused
    assert _packed_together(paths) == _packed_one_by_one(paths)


def _positions(rng: random.Random, width: int, points: int, spread: int) -> list[Any]:
    """A walk as cell positions ``y * width + x`` (a step past a row's end is a jump)."""
    x, y = rng.randint(-spread, spread), rng.randint(-spread, spread)
    return [yy * width + xx for xx, yy in _walk(rng, points, x, y, False)]


@given(st.integers(0, 2**32 - 1), st.sampled_from([3, 150, 20_000, 2**21, 2**40]))
def test_cell_paths_pack_as_their_points_do(seed, spread):
    """A column of CellPath (the dungeon's corridors as the generator keeps them) packs to
    the bytes of its points' lists, together and one by one; what pack_points refuses in
    the points (not an integer, beyond 64 bits) is refused in the positions."""
    rng = random.Random(seed)
    paths: list[Any] = [
        CellPath(_positions(rng, width, rng.randint(1, 40), spread), width)
        for width in [rng.choice([1, 3, 150, 2**20]) for _ in range(rng.randint(0, 30))]
    ]
    odd = rng.choice([None, "empty", "huge", "bool", "float", "numpy", "list"])
    if paths and odd == "empty":
        paths[0] = CellPath([], 5)
    elif paths and odd == "huge":
        paths[0] = CellPath([2**64, 2**64 + 1], 2**70)  # refused
    elif paths and odd == "bool":
        paths[0] = CellPath([True, 2], 10)  # refused
    elif paths and odd == "float":
        paths[0] = CellPath([0.0, 1], 10)  # refused
    elif paths and odd == "numpy":
        paths[0] = CellPath([np.int64(7), np.int32(8)], 10)  # taken as ints
    elif paths and odd == "list":
        paths[0] = [(0, 0), (1, 0)]  # a column of both kinds
    as_points = [
        p.points() if isinstance(p, CellPath) and odd not in ("bool", "float") else p for p in paths
    ]
    expected = _packed_one_by_one(as_points)
    if odd in ("bool", "float") and paths:
        expected = ValueError
    assert _packed_together(paths) == expected
    assert _packed_one_by_one(paths) == expected


def test_a_cell_path_reads_as_its_points():
    path = CellPath([0, 1, 11, 21, -1], 10)
    assert len(path) == 5
    assert path[0] == (0, 0) and path[3] == (1, 2) and path[-1] == (9, -1)
    assert path[1:3] == [(1, 0), (1, 1)] and list(path) == path.points()
    assert CellPath([np.int16(12)], 10).points() == [(2, 1)]
    assert type(CellPath([np.int16(12)], 10).points()[0][0]) is int
    for width in (0, -1, 2.0, True, None):
        with pytest.raises(ValueError, match="grid width"):
            CellPath([1], width)  # type: ignore[arg-type]
    for bad in (True, 1.0, "1", None):
        with pytest.raises(ValueError, match="not an integer"):
            CellPath([0, bad], 10).points()  # type: ignore[list-item]


def test_pack_points_many_takes_numpy_integers_as_pack_points_does():
    paths = [[(np.int64(x), np.int32(5)) for x in range(4)]] * 10
    assert pack_points_many(paths) == [pack_points(p) for p in paths]


def test_encode_values_refusals_name_the_row_and_column():
    dungeon = encode_chunk("dungeon", [1, 2, 3], SMALL)
    assert fields(MapRecord)[0] == "id" and fields(MapRecord)[-1] == "grid"
    order = fields(MapRecord)
    maps = [build_map("dungeon", s, SMALL) for s in (1, 2, 3)]
    rows = [[getattr(m, f) for f in order] for m in maps]
    rows[2][order.index("width")] = "wide"
    with pytest.raises(ValueEncodingError, match="row 2, column .width.: cannot encode"):
        encode_values(MapRecord, [tuple(r) for r in rows], {})
    rows[2][order.index("width")] = 40
    rows[1][order.index("open_ratio")] = 1  # an int in a float field: made a float
    encoded = encode_values(MapRecord, [tuple(r) for r in rows], {})
    assert type(encoded.column("open_ratio")[1]) is float
    assert encoded.column("grid") == dungeon.column("grid")
    assert all(c.rows == [] and c.counts == [0, 0, 0] for c in encoded.children)
    with pytest.raises(WriteError, match="row 0 has 2 values"):
        encode_values(MapRecord, [(1, 2)], {})
    with pytest.raises(WriteError, match="items for 1 rows, not 3"):
        encode_values(MapRecord, [tuple(r) for r in rows], {"rooms": [[(1, 2, 3, 4)]]})
    bad_path = [[(3, 0, 0, 0, 2, [(0, 0), "x"])], [], []]
    with pytest.raises(ValueEncodingError, match="column .path.: cannot encode"):
        encode_values(MapRecord, [tuple(r) for r in rows], {"corridors": bad_path})


def _stored(path: Any) -> dict[str, list[tuple[Any, ...]]]:
    """Every map table's rows as the database holds them (bytes, text, numbers), in key
    order, without created_at (stamped when each map was built); read with sqlite3 itself."""
    tables = {}
    with contextlib.closing(sqlite3.connect(path)) as conn:
        for name in ("maps", "maps_caves", "maps_rooms", "maps_corridors"):
            order = "id" if name == "maps" else "parent_key, position"
            cursor = conn.execute(f"SELECT * FROM {name} ORDER BY {order}")  # noqa: S608
            names = [d[0] for d in cursor.description]
            keep = [i for i, n in enumerate(names) if n != "created_at"]
            tables[name] = [tuple(row[i] for i in keep) for row in cursor]
    return tables


@pytest.mark.parametrize(("kind", "count"), [("dungeon", 40), ("caves", 9)])
def test_many_workers_store_what_one_worker_stores(tmp_path, kind, count):
    stored = []
    for workers in (1, 2):
        path = tmp_path / f"{workers}.db"
        store = open_catalog(path)
        try:
            stats = generate_into(store, kind, count, seed=7, params=SMALL, workers=workers)
        finally:
            store.close()
        assert stats.count == count and stats.seeds == (7, 7 + count - 1)
        stored.append(_stored(path))
    one, two = stored
    assert one == two
    assert len(one["maps"]) == count and len(one["maps_corridors"]) > count
    assert [r[4] for r in one["maps"]] == list(range(7, 7 + count))  # seed column


def test_the_chunk_size_changes_nothing_stored():
    """A kind's own chunk (:attr:`MapKind.chunk`, 32 dungeons a worker task) or any other
    gives the same rows in seed order; a chunk that is not a positive int is refused. On
    two workers the last two chunks' worth (or a little more) go in quarter chunks, so that
    the workers end together."""
    from entityworks.catalog import generate_encoded

    assert all(isinstance(k.chunk, int) and k.chunk >= 1 for k in KINDS.values())
    assert map_kind("dungeon").chunk > map_kind("caves").chunk
    expected_sizes = {
        None: [1, 32, 32, 32, 32] + [8] * 8 + [7],  # 199 after the first map
        1: [1] * 200,
        5: [1] + [5] * 37 + [1] * 14,
    }
    runs = []
    for chunk in (None, 1, 5):
        batches = list(
            generate_encoded("dungeon", 200, seed=2, params=SMALL, workers=2, chunk=chunk)
        )
        assert [len(b) for b in batches] == expected_sizes[chunk]
        assert [s for b in batches for s in b.column("seed")] == list(range(2, 202))
        runs.append(_without_created_at(EncodedRows.join(batches)))
    assert runs[0] == runs[1] == runs[2]
    for bad in (0, -1, True, 2.0):
        with pytest.raises(ValueError, match="chunk must be an integer >= 1"):
            list(generate_encoded("dungeon", 3, seed=1, params=SMALL, chunk=bad))


def test_the_command_stores_the_same_maps_on_one_worker_and_on_two(tmp_path):
    from entityworks.cli import cli

    runner = CliRunner()
    for workers in ("1", "2"):
        done = runner.invoke(
            cli,
            [
                "generate",
                "dungeon",
                "-n",
                "30",
                "--width",
                "50",
                "--height",
                "40",
                "--seed",
                "3",
                "-j",
                workers,
                "--db",
                str(tmp_path / f"{workers}.db"),
                "--no-progress",
            ],
            catch_exceptions=False,
        )
        assert done.exit_code == 0, done.output
        assert f"{workers} worker(s)" in done.output
    assert _stored(tmp_path / "1.db") == _stored(tmp_path / "2.db")


def test_the_command_closes_its_catalog_and_exits_cleanly(tmp_path):
    """The process ends with the catalog closed (no WAL left beside it) and every map
    readable, its last collection skipped (``gc.freeze`` at exit)."""
    import subprocess
    import sys

    db = tmp_path / "c.db"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "entityworks",
            "generate",
            "dungeon",
            "-n",
            "12",
            "--width",
            "40",
            "--height",
            "30",
            "--seed",
            "5",
            "-j",
            "2",
            "--db",
            str(db),
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.db"]
    with contextlib.closing(sqlite3.connect(db)) as conn:
        assert conn.execute("SELECT seed FROM maps ORDER BY id").fetchall() == [
            (s,) for s in range(5, 17)
        ]


def test_workers_encode_without_sqlalchemy():
    """The pool's workers fork before the writer opens its database, and encoding needs no
    SQLAlchemy (the registry names its SQL types, :mod:`entityworks.types.storage`): the
    one import of it happens in the writer while the workers generate, not before them."""
    code = (
        "import sys\n"
        "from entityworks.catalog._generate import generate_encoded\n"
        "rows = list(generate_encoded('dungeon', 6, seed=1, workers=2, chunk=2,\n"
        "                             params={'width': 60, 'height': 40}))\n"
        "corridors = [c for r in rows for c in r.children if c.field == 'corridors']\n"
        "assert sum(map(len, rows)) == 6 and sum(len(c.rows) for c in corridors) > 6\n"
        "print(sorted(m for m in sys.modules if m.startswith('sqlalchemy')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_the_registry_names_the_sql_types_it_stands_for():
    """Each built-in entry's ``sql`` is a :class:`StorageType` that makes what
    :mod:`entityworks.sql.sqltypes` makes (``json_text``: ``json_column``), on every
    dialect, and travels by pickle as itself."""
    import sqlalchemy as sa
    from sqlalchemy.dialects import mysql, postgresql, sqlite

    from entityworks.registry import registry
    from entityworks.sql import sqltypes
    from entityworks.types import storage

    infos = [info for _, info in registry.entries()] + [registry.lookup(dict[str, int])]
    named = {info.sql for info in infos if isinstance(info.sql, storage.StorageType)}
    assert {n.name for n in named} >= {
        "big_integer",
        "text",
        "ExactDecimal",
        "binary",
        "json_text",
        "NaiveDateTime",
        "AwareDateTime",
    }
    for made in named:
        assert pickle.loads(pickle.dumps(made)) is made and repr(made).startswith("Storage")
        assert made == storage.StorageType(made.name) and made in {storage.named(made.name)}
        for dialect in (sqlite.dialect(), postgresql.dialect(), mysql.dialect()):
            ours = made().compile(dialect=dialect)
            # a JSON field's column is the backend's JSON type (json_column); the name
            # json_text stays the text column the catalog's revisions declared
            maker = "json_column" if made.name == "json_text" else made.name
            theirs = getattr(sqltypes, maker)().compile(dialect=dialect)
            assert ours == theirs
            assert isinstance(made(), sa.types.TypeEngine)

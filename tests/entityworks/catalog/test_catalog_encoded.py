"""Rows encoded in the generating process (``entityworks.sql.encoded``) and written by
``Store.insert_encoded``; child rows read column by column (``unpack_points_many``): what is
read back equals what ``insert_many`` of the same objects gives, on every backend."""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import logging
import math
import os
import pickle
import random
import sqlite3
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any

import numpy as np
import pytest

from entityworks import Store, col, entity, primary_key
from entityworks.catalog import (
    MapCorridor,
    MapRecord,
    generate_encoded,
    generate_into,
    generate_maps,
    largest_maps,
    open_catalog,
)
from entityworks.catalog.packing import PointPath, pack_points, unpack_points, unpack_points_many
from entityworks.errors import ValueEncodingError, WriteError
from entityworks.sql.encoded import EncodedRows, encode_rows

PARAMS = {"width": 40, "height": 30}


def _maps() -> list[MapRecord]:
    records = [m for c in generate_maps("dungeon", 10, seed=3, params=PARAMS) for m in c]
    records += [m for c in generate_maps("caves", 4, seed=3, params=PARAMS) for m in c]
    return records


def _value(obj: Any) -> Any:
    """A comparable form of a value: types kept, arrays as dtype, shape and bytes, dicts
    by their items."""
    if dataclasses.is_dataclass(obj):
        return (
            type(obj).__name__,
            tuple((f.name, _value(getattr(obj, f.name))) for f in dataclasses.fields(obj)),
        )
    if isinstance(obj, np.ndarray):
        return ("ndarray", obj.dtype.str, obj.shape, obj.tobytes())
    if isinstance(obj, list):
        return ("list", tuple(map(_value, obj)))
    if isinstance(obj, dict):  # in any key order: PostgreSQL's jsonb keeps its own
        return ("dict", tuple(sorted(((k, _value(v)) for k, v in obj.items()), key=repr)))
    return (type(obj).__name__, obj)


def _catalog(url: str) -> Store:
    return open_catalog(url)


def test_encoded_rows_read_back_equal_to_insert_many(backend_url, tmp_path):
    records = _maps()
    plain = copy.deepcopy(records)
    store = _catalog(backend_url)
    try:
        store.insert_many(plain)
        encoded = EncodedRows.join(
            [encode_rows(copy.deepcopy(records[:6])), encode_rows(copy.deepcopy(records[6:]))]
        )
        encoded = pickle.loads(pickle.dumps(encoded))  # as a worker sends it
        keys = store.insert_encoded(encoded)
        assert keys == [m.id + len(records) for m in plain]  # type: ignore[operator]
        back = {m.id: m for m in store.select(MapRecord, order_by="id")}
        for m, key in zip(plain, keys, strict=True):
            assert _value(back[key]) == _value(dataclasses.replace(m, id=key))
            assert _value(back[m.id]) == _value(m)
        biggest = largest_maps(store, 4, kind="dungeon")
        assert [len(m.corridors) for m in biggest] == [len(back[m.id].corridors) for m in biggest]
    finally:
        store.close()


def test_generate_into_stores_what_generate_maps_builds(backend_url):
    local = [m for c in generate_maps("dungeon", 12, seed=40, params=PARAMS) for m in c]
    store = _catalog(backend_url)
    try:
        stats = generate_into(store, "dungeon", 12, seed=40, params=PARAMS, workers=2)
        assert stats.count == 12 and stats.seeds == (40, 51)
        assert 0 <= stats.storage_cpu_seconds
        back = list(store.select(MapRecord, order_by="id"))
        assert len(back) == 12
        for got, want in zip(back, local, strict=True):
            want = dataclasses.replace(want, id=got.id, created_at=got.created_at)
            assert _value(got) == _value(want)
    finally:
        store.close()


def test_build_outcomes_travel_the_encoded_path(backend_url):
    """The outcome columns are encoded in the workers (a process pool here) and stored as
    ``insert_many`` stores them; each equals what the generator itself reports."""
    from generators.maps import dungeon

    short = {"width": 50, "height": 40, "rooms": 3}
    local = [m for c in generate_maps("dungeon", 10, seed=70, params=short) for m in c]
    store = _catalog(backend_url)
    try:
        stats = generate_into(store, "dungeon", 10, seed=70, params=short, workers=2)
        encoded = {m.seed: m for m in store.select(MapRecord, order_by="id")}
        plain = copy.deepcopy(local)
        store.insert_many(plain)
        direct = {
            m.seed: m
            for m in store.select(MapRecord, where=col("id") > max(m.id for m in encoded.values()))
        }
        outcomes = []
        for seed in range(70, 80):
            made = dungeon.generate(**short, seed=seed)
            want = (made.success, 3, len(made.rooms), made.connected)
            for got in (encoded[seed], direct[seed]):
                assert (got.build_success, got.rooms_asked, got.rooms_built, got.connected) == want
                assert type(got.build_success) is bool and type(got.rooms_built) is int
            outcomes.append(made.success)
        assert True in outcomes and False in outcomes  # both kinds of build travelled
        assert (stats.builds.complete, stats.builds.short) == (
            outcomes.count(True),
            outcomes.count(False),
        )
        rows = encode_rows(local)
        assert rows.column("rooms_built") == [len(m.rooms) for m in local]
        assert [bool(v) for v in rows.column("build_success")] == outcomes
    finally:
        store.close()


def test_generate_encoded_chunks_equal_encoding_the_maps():
    local = [m for c in generate_maps("dungeon", 9, seed=8, params=PARAMS) for m in c]
    chunks = list(generate_encoded("dungeon", 9, seed=8, params=PARAMS, workers=2, chunk=4))
    joined = EncodedRows.join(chunks)
    mine = encode_rows(local)
    # the same rows but for created_at, stamped when each map was built
    at = [name for name, _ in joined.layout].index("created_at")
    strip = [tuple(v for i, v in enumerate(r) if i != at) for r in joined.rows]
    assert strip == [tuple(v for i, v in enumerate(r) if i != at) for r in mine.rows]
    assert joined.children == mine.children
    # what travels from the workers: under half the objects' pickle (the last chunks of a
    # run are small, so the rows are weighed together)
    assert len(pickle.dumps(joined)) < len(pickle.dumps(local)) / 2


def test_take_keeps_each_rows_children():
    records = _maps()[:5]
    encoded = encode_rows(records)
    part = encoded.take([3, 1])
    assert part.column("seed") == [records[3].seed, records[1].seed]
    assert part == encode_rows([records[3], records[1]])


def test_encoding_refusals_name_the_row_and_column():
    records = _maps()[:3]
    bad = copy.deepcopy(records)
    bad[2].width = "wide"  # type: ignore[assignment]
    with pytest.raises(ValueEncodingError, match="row 2, column .width.: cannot encode"):
        encode_rows(bad)
    mixed = copy.deepcopy(records)
    mixed[1].rooms = [MapCorridor(1, 0, 0, 0, 0, [[0, 0]])]  # type: ignore[list-item]
    with pytest.raises(WriteError, match=r"maps.rooms\[0\] is a MapCorridor, not a MapRoom"):
        encode_rows(mixed)
    with pytest.raises(WriteError, match="row 1 is a str"):
        encode_rows([records[0], "map"])


def test_a_refused_row_leaves_nothing_and_is_named(tmp_path):
    store = _catalog(f"sqlite:///{tmp_path / 'c.db'}")
    records = _maps()[:4]
    records[2].open_ratio = math.nan  # refused by the database's NOT NULL REAL column
    try:
        with pytest.raises(WriteError, match="row 2"):
            store.insert_encoded(encode_rows(records))
        assert store.count(MapRecord) == 0
    finally:
        store.close()


def test_a_refused_child_row_among_many_is_named_and_nothing_kept(tmp_path):
    """SQLite takes child rows 64 to a statement: a row the database refuses in the middle of
    one (a text length, which the column's type check refuses) still names its owner's row
    and its column, and the whole batch is undone."""
    store = _catalog(f"sqlite:///{tmp_path / 'c.db'}")
    rows = encode_rows([m for c in generate_maps("dungeon", 12, seed=5) for m in c])
    corridors = next(c for c in rows.children if c.field == "corridors")
    assert len(corridors.rows) > 3 * 64
    at = 64 + 37  # in the second statement of 64 rows
    owner = next(i for i, end in enumerate(accumulate(corridors.counts)) if end > at)
    bad = list(corridors.rows[at])
    bad[1] = "long"  # (position, length, ...): length
    corridors.rows[at] = tuple(bad)
    try:
        # refused by the Store's type check of the column (SQLite's INTEGER would convert)
        with pytest.raises((WriteError, ValueEncodingError), match=f"row {owner}") as refused:
            store.insert_encoded(rows)
        assert refused.value.column == "length"
        assert store.count(MapRecord) == 0
    finally:
        store.close()
    with contextlib.closing(sqlite3.connect(tmp_path / "c.db")) as conn:
        assert conn.execute("SELECT count(*) FROM maps_corridors").fetchone() == (0,)


def test_explicit_keys_are_kept_and_a_clash_is_named(backend_url):
    store = _catalog(backend_url)
    records = _maps()[:5]
    try:
        store.insert_many(copy.deepcopy(records[:2]))  # ids 1 and 2
        keyed = copy.deepcopy(records[2:])
        for m, key in zip(keyed, (10, 2, 11), strict=True):
            m.id = key
        with pytest.raises(WriteError, match="row 1"):
            store.insert_encoded(encode_rows(keyed))
        assert store.count(MapRecord) == 2  # nothing of the batch was kept
        keyed[1].id = 12
        assert store.insert_encoded(encode_rows(keyed)) == [10, 12, 11]
        for m in keyed:
            assert _value(store.get(MapRecord, m.id)) == _value(m)
    finally:
        store.close()


@dataclass
class Step:
    n: int


@dataclass
class Tagged:
    __tablename__ = "tagged"
    id: int | None
    tag: str
    steps: list[Step] = field(default_factory=list)


def _steps(*ns: int) -> list[Step]:
    return [Step(n) for n in ns]


def _stored_keys(path, table: str) -> list[int]:
    import sqlite3

    with sqlite3.connect(path) as conn:
        return [k for (k,) in conn.execute(f"SELECT id FROM {table} ORDER BY id")]


@pytest.mark.parametrize("autoincrement", [False, True])
def test_generated_sqlite_keys_are_the_ones_stored(tmp_path, autoincrement):
    """SQLite gives a batch's NULL keys in one executemany; the keys returned (and their
    child rows' owners) are the rowids it gave, after deleted rows and with AUTOINCREMENT
    (which never reuses a deleted key)."""
    import sqlite3

    path = tmp_path / "k.db"
    if autoincrement:  # a table made elsewhere, with AUTOINCREMENT
        with sqlite3.connect(path) as conn:
            conn.execute(
                "CREATE TABLE tagged (id INTEGER PRIMARY KEY AUTOINCREMENT, tag TEXT NOT NULL)"
            )
    store = Store(path)
    try:
        store.create(Tagged)
        store.insert_many([Tagged(None, f"t{i}", _steps(i)) for i in range(5)])
        store.delete(Tagged, where={"id": 5})  # the largest key: reused unless AUTOINCREMENT
        store.delete(Tagged, where={"id": 2})
        objs = [Tagged(None, "a", _steps(1, 2)), Tagged(40, "b", _steps(3)), Tagged(None, "c")]
        keys = store.insert_encoded(encode_rows(objs))
        first = 6 if autoincrement else 5
        assert keys == [first, 40, first + 1]
        assert _stored_keys(path, "tagged") == sorted([1, 3, 4, 40, first, first + 1])
        assert [(o.id, o.tag, o.steps) for o in store.select(Tagged, order_by="id")][-3:] == [
            (first, "a", _steps(1, 2)),
            (first + 1, "c", []),
            (40, "b", _steps(3)),
        ]
    finally:
        store.close()


def test_generated_sqlite_keys_past_the_largest_rowid(tmp_path):
    """Past SQLite's largest rowid a NULL key gets a random free one: the keys are then
    taken row by row, and still are the ones stored."""
    path = tmp_path / "k.db"
    store = Store(path)
    try:
        store.create(Tagged)
        store.insert_many([Tagged(2**63 - 2, "top", _steps(7))])
        keys = store.insert_encoded(encode_rows([Tagged(None, "x", _steps(1)), Tagged(None, "y")]))
        assert keys[0] == 2**63 - 1 and len(set(keys)) == 2
        assert sorted(keys + [2**63 - 2]) == _stored_keys(path, "tagged")
        assert {o.id: o.tag for o in store.select(Tagged)} == {
            2**63 - 2: "top",
            keys[0]: "x",
            keys[1]: "y",
        }
        assert store.get(Tagged, keys[0]).steps == _steps(1)
    finally:
        store.close()


def test_a_refused_generated_row_is_named_and_nothing_kept(tmp_path):
    store = Store(tmp_path / "k.db")
    try:
        store.create(Tagged)
        store.insert_many([Tagged(None, "keep")])
        rows = encode_rows([Tagged(None, "a"), Tagged(None, "b")])
        broken = dataclasses.replace(rows, rows=[rows.rows[0], (None, None)])  # tag NULL
        with pytest.raises(WriteError, match="row 1"):
            store.insert_encoded(broken)
        assert [o.tag for o in store.select(Tagged)] == ["keep"]
        assert store.insert_encoded(rows) == [2, 3]
    finally:
        store.close()


def test_rows_encoded_for_another_table_are_refused(tmp_path):
    store = _catalog(f"sqlite:///{tmp_path / 'c.db'}")
    encoded = encode_rows(_maps()[:1])
    other = dataclasses.replace(encoded, layout=encoded.layout[:-1])
    try:
        with pytest.raises(WriteError, match="rows encoded for columns"):
            store.insert_encoded(other)
    finally:
        store.close()


# -- point paths read column by column -------------------------------------------------------


def _path(rng: random.Random) -> list[list[int]]:
    x, y = rng.randint(-70, 70), rng.randint(-70, 70)
    path = [[x, y]]
    for _ in range(rng.choice([0, 1, 3, 4, 5, 40, 70])):
        dx, dy = rng.choice([(1, 0), (0, 1), (-1, 0), (0, -1)])
        x, y = x + dx, y + dy
        path.append([x, y])
    return path


def test_unpack_points_many_equals_one_by_one():
    rng = random.Random(5)
    for trial in range(300):
        blobs: list[Any] = [pack_points(_path(rng)) for _ in range(rng.randint(0, 40))]
        if trial % 5 == 0:
            blobs.append(pack_points([[0, 0], [3, 4]]))  # not unit steps: 64-bit pairs
        if trial % 7 == 0:
            blobs.append(bytearray(pack_points([[2**40, 1], [2**40 + 1, 1]])))
        many = unpack_points_many(blobs)
        assert many == [unpack_points(b) for b in blobs]
        assert all(type(p) is list and type(v) is int for path in many for p in path for v in p)


def test_unpack_points_many_names_a_damaged_blob():
    blobs = [pack_points([[0, 0], [1, 0], [1, 1]]) for _ in range(10)]
    blobs[4] = blobs[4][:-1]
    with pytest.raises(ValueError, match="packed path of 2 steps needs 1 bytes, got 0"):
        unpack_points_many(blobs)


@dataclass
class Track:
    label: str
    path: PointPath | None


@entity("routes")
class Route:
    id: int | None = primary_key()
    name: str = ""
    tracks: list[Track] = field(default_factory=list)


def test_child_paths_with_nulls_read_back(store):
    rng = random.Random(2)
    routes = [
        Route(
            None,
            f"r{i}",
            [Track(f"t{j}", None if j % 3 == 0 else _path(rng)) for j in range(rng.randint(0, 25))],
        )
        for i in range(30)
    ]
    store.create(Route)
    store.insert_many(routes)
    back = list(store.select(Route, order_by="id"))
    assert back == routes
    assert [r.name for r in store.select(Route, where=col("name") == "r7")] == ["r7"]


def test_child_rows_read_the_same_when_statements_are_echoed_or_logged(tmp_path, caplog):
    records = _maps()
    path = tmp_path / "c.db"
    store = open_catalog(path)
    store.insert_many(records)
    store.close()
    quiet = open_catalog(path)
    echoed = open_catalog(Store(path, echo=True))  # SQLAlchemy's path, which echoes
    try:
        want = [_value(m) for m in quiet.select(MapRecord, order_by="id")]
        assert [_value(m) for m in echoed.select(MapRecord, order_by="id")] == want
        with caplog.at_level(logging.INFO, logger="entityworks.sql"):
            assert [_value(m) for m in quiet.select(MapRecord, order_by="id")] == want
        assert any("maps_corridors" in r.getMessage() for r in caplog.records)
    finally:
        quiet.close()
        echoed.close()


def test_pool_workers_run_at_the_writers_priority():
    # the writer only writes, so the workers need not yield the CPU to it: niced, they
    # lost it to every other process of a shared machine instead
    from concurrent.futures import ProcessPoolExecutor

    from entityworks.catalog import _generate as generate

    with ProcessPoolExecutor(1, initializer=generate._worker_setup) as pool:
        worker = pool.submit(os.nice, 0).result()
    assert worker == os.nice(0)


@dataclass
class Reading:
    at: int
    a: int
    b: int
    c: int
    d: int
    e: float
    f: str
    g: str | None
    h: int
    i: int
    j: int
    k: int
    m: int
    n: int
    o: int
    p: int
    q: int
    r: int
    s: int
    t: int


@entity("stations")
class Station:
    id: int | None = primary_key()
    name: str = ""
    readings: list[Reading] = field(default_factory=list)


def test_many_rows_of_a_wide_table_go_in_whole_statements_and_come_back(store):
    """Child rows of 22 columns go 45 to a statement on SQLite (999 parameters at most):
    over a thousand of them, and stations with given keys, come back equal and in order on
    every backend."""
    rng = random.Random(9)
    stations = [
        Station(
            10 + s,
            f"s{s}",
            [
                Reading(
                    n,
                    *(rng.randint(-9, 9) for _ in range(4)),
                    rng.random(),
                    f"r{n}",
                    None if n % 3 else "x",
                    *(rng.randint(0, 2**40) for _ in range(12)),
                )
                for n in range(rng.randint(0, 60))
            ],
        )
        for s in range(41)
    ]
    assert sum(len(s.readings) for s in stations) > 1000
    store.create(Station)
    assert store.insert_encoded(encode_rows(stations)) == [s.id for s in stations]
    assert list(store.select(Station, order_by="id")) == stations
    if store.dialect.name == "sqlite":  # the statements of whole groups were taken
        child = dict(store.model(Station).children)["readings"]
        assert f"insert:{999 // len(child.names)}" in child.sql_cache  # 43: -0.0's companion

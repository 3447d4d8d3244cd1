"""The columnar lane: ``Store.insert_arrow`` / ``insert_pandas`` / ``insert_parquet``.

The oracle is ``insert_many`` of the same rows as instances: both tables are read back
through the driver's own cursor (sqlite3, psycopg, PyMySQL: every SQL column, companions
included) and must hold the same values, of the same types; where ``insert_many`` refuses
the rows, the columnar call refuses them too and writes nothing.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import math
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings

from entityworks import (
    AwareDatetime,
    EntityworksError,
    Store,
    ValueEncodingError,
    WriteError,
)
from entityworks.arrow import to_arrow, to_pandas, write_parquet

from ..strategies import AllTypes, Inner, Mood, Rank, rows, same


@dataclass
class Flat:
    """Every registry type of ``AllTypes`` but the child list (the lane writes one table)."""

    id: int
    i: int
    oi: int | None
    flag: bool
    f: float
    of: float | None
    s: str
    os: str | None
    raw: bytes
    dec: decimal.Decimal
    naive: dt.datetime
    aware: AwareDatetime
    day: dt.date
    clock: dt.time
    span: dt.timedelta
    uid: uuid.UUID
    mood: Mood
    rank: Rank | None
    tags: list[str]
    meta: dict[str, Any]
    pair: tuple[int, ...]
    inner: Inner
    arr: np.ndarray
    odec: decimal.Decimal | None
    oaware: AwareDatetime | None
    counts: dict[int, str]
    pairs: list[tuple[int, int]]
    amounts: list[decimal.Decimal]
    onested: Inner | None


@dataclass
class FlatColumns(Flat):
    """The same columns in another table: what the columnar lane writes."""


FLAT_FIELDS = [f.name for f in dataclasses.fields(Flat)]


def flat(data: list[AllTypes]) -> list[Flat]:
    return [Flat(**{n: getattr(row, n) for n in FLAT_FIELDS}) for row in data]


def as_columns(objs: list[Flat]) -> list[FlatColumns]:
    return [FlatColumns(**{n: getattr(o, n) for n in FLAT_FIELDS}) for o in objs]


EXAMPLES = {"sqlite": 50, "postgresql": 30, "mysql": 30, "mariadb": 30}
SETTINGS: dict[str, Any] = dict(
    deadline=None,
    database=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)


def raw_rows(store: Store, cls: type, order: str = "id") -> list[tuple[Any, ...]]:
    """Every SQL column of ``cls``'s table, read through the driver's own cursor."""
    table = store.table(cls)
    quote = store.dialect.identifier_preparer.quote
    with store.connection() as conn:
        cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
        cursor.execute(f"SELECT * FROM {quote(table.name)} ORDER BY {quote(order)}")
        found = [tuple(r) for r in cursor.fetchall()]
        cursor.close()
    return found


def assert_same_tables(expected: list[tuple[Any, ...]], actual: list[tuple[Any, ...]]) -> None:
    assert len(expected) == len(actual)
    for n, (a, b) in enumerate(zip(expected, actual, strict=True)):
        assert len(a) == len(b)
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            if isinstance(x, memoryview | bytearray):
                x, y = bytes(x), bytes(y)
            assert same(x, y), f"row {n}, SQL column {i}: {x!r} != {y!r}"


def test_insert_arrow_stores_what_insert_many_stores(store: Store) -> None:
    store.create(Flat)
    store.create(FlatColumns)
    dialect = store.dialect.name
    seen = {"stored": 0, "refused": 0}

    @settings(max_examples=EXAMPLES[dialect], **SETTINGS)
    @given(data=rows(xml=False))
    def check(data: list[AllTypes]) -> None:
        store.delete(Flat, where={})
        store.delete(FlatColumns, where={})
        objs = flat(data)
        table = to_arrow(FlatColumns, as_columns(objs))
        try:
            store.insert_many(objs)
        except EntityworksError:
            with pytest.raises(EntityworksError):
                store.insert_arrow(FlatColumns, table, batch_size=2)
            assert store.count(FlatColumns) == 0
            seen["refused"] += 1
            return
        assert store.insert_arrow(FlatColumns, table, batch_size=2) == len(objs)
        assert_same_tables(raw_rows(store, Flat), raw_rows(store, FlatColumns))
        seen["stored"] += 1

    check()
    assert seen["stored"] >= 5, seen


@dataclass
class Reading:
    id: int | None
    sensor: str
    at: AwareDatetime
    value: decimal.Decimal
    level: float | None = None
    note: str | None = None


def readings(n: int, first: int = 1) -> list[Reading]:
    zones = [
        dt.UTC,
        dt.timezone(dt.timedelta(hours=5, minutes=30)),
        dt.timezone(-dt.timedelta(hours=3)),
    ]
    return [
        Reading(
            first + i,
            f"s{i % 7}",
            dt.datetime(2024, 1, 1 + i % 28, i % 24, tzinfo=zones[i % 3]),
            decimal.Decimal(i).scaleb(-(i % 4)),
            None if i % 5 == 0 else i / 8,
            None if i % 2 else f"note {i}",
        )
        for i in range(n)
    ]


@dataclass
class ReadingCopy(Reading):
    pass


def copies(objs: list[Reading]) -> list[ReadingCopy]:
    return [
        ReadingCopy(**{f.name: getattr(o, f.name) for f in dataclasses.fields(o)}) for o in objs
    ]


def test_keys_generated_when_absent_or_null(store: Store) -> None:
    store.create(Reading)
    store.create(ReadingCopy)
    objs = readings(30)
    table = to_arrow(ReadingCopy, copies(objs))
    # the instances' way: keys left None
    store.insert_many([dataclasses.replace(o, id=None) for o in objs])
    store.insert_arrow(ReadingCopy, table.drop_columns(["id"]).slice(0, 10))
    store.insert_arrow(
        ReadingCopy, table.slice(10, 10).set_column(0, "id", pa.nulls(10, pa.int64()))
    )
    some = pa.array([None if i % 2 else 1000 + i for i in range(10)], pa.int64())
    store.insert_arrow(ReadingCopy, table.slice(20, 10).set_column(0, "id", some))
    keys = [r[0] for r in raw_rows(store, ReadingCopy)]
    assert len(set(keys)) == 30 and None not in keys
    assert {1000, 1002, 1004, 1006, 1008} <= set(keys)
    # apart from the keys, the rows are those insert_many stored
    assert_same_tables(
        sorted((r[1:] for r in raw_rows(store, Reading)), key=repr),
        sorted((r[1:] for r in raw_rows(store, ReadingCopy)), key=repr),
    )


def test_keys_given_in_the_data(store: Store) -> None:
    store.create(Reading)
    store.create(ReadingCopy)
    objs = readings(50)
    store.insert_many(objs)
    assert store.insert_arrow(ReadingCopy, to_arrow(ReadingCopy, copies(objs)), batch_size=7) == 50
    assert_same_tables(raw_rows(store, Reading), raw_rows(store, ReadingCopy))


def test_record_batch_reader_and_iterables(store: Store) -> None:
    store.create(Reading)
    store.create(ReadingCopy)
    objs = readings(40)
    store.insert_many(objs)
    table = to_arrow(ReadingCopy, copies(objs))
    reader = pa.RecordBatchReader.from_batches(table.schema, table.to_batches(max_chunksize=9))
    assert store.insert_arrow(ReadingCopy, reader, batch_size=4) == 40
    assert_same_tables(raw_rows(store, Reading), raw_rows(store, ReadingCopy))
    store.delete(ReadingCopy, where={})
    assert store.insert_arrow(ReadingCopy, iter(table.to_batches(max_chunksize=11))) == 40
    assert_same_tables(raw_rows(store, Reading), raw_rows(store, ReadingCopy))
    with pytest.raises(TypeError):
        store.insert_arrow(ReadingCopy, [1, 2])


def test_insert_pandas_and_parquet(store: Store, tmp_path: Path) -> None:
    store.create(Reading)
    store.create(ReadingCopy)
    objs = readings(45)
    store.insert_many(objs)
    mine = copies(objs)
    assert store.insert_pandas(ReadingCopy, to_pandas(ReadingCopy, mine)) == 45
    assert_same_tables(raw_rows(store, Reading), raw_rows(store, ReadingCopy))
    store.delete(ReadingCopy, where={})
    path = tmp_path / "r.parquet"
    write_parquet(ReadingCopy, mine, path)
    # several row groups, read a few rows at a time
    pq.write_table(pq.read_table(path), path, row_group_size=10)
    assert pq.ParquetFile(path).num_row_groups == 5
    assert store.insert_parquet(ReadingCopy, path, batch_size=6) == 45
    assert_same_tables(raw_rows(store, Reading), raw_rows(store, ReadingCopy))


def test_a_null_in_a_later_batch_writes_nothing(store: Store) -> None:
    store.create(ReadingCopy)
    table = to_arrow(ReadingCopy, copies(readings(20)))
    sensors = pa.array([None if i == 13 else "s" for i in range(20)], pa.string())
    bad = table.set_column(table.column_names.index("sensor"), "sensor", sensors)
    with pytest.raises(ValueEncodingError) as caught:
        store.insert_arrow(ReadingCopy, bad, batch_size=5)
    assert caught.value.row == 13 and caught.value.column == "sensor"
    assert "ReadingCopy" in str(caught.value) and "row 13" in str(caught.value)
    assert store.count(ReadingCopy) == 0


def test_a_value_the_rules_refuse_is_named(store: Store) -> None:
    store.create(ReadingCopy)
    table = to_arrow(ReadingCopy, copies(readings(12)))
    values = table.column("value").combine_chunks()
    # 36 digits: more than the registry's Decimal keeps (35 before the point)
    wide = [decimal.Decimal(1) if i != 9 else decimal.Decimal("1" * 36) for i in range(12)]
    struct = pa.StructArray.from_arrays(
        [pa.array(wide, pa.decimal256(40, 0)), values.field("scale")], names=["value", "scale"]
    )
    bad = table.set_column(table.column_names.index("value"), "value", struct)
    with pytest.raises(EntityworksError) as caught:
        store.insert_arrow(ReadingCopy, bad, batch_size=4)
    assert getattr(caught.value, "row", None) == 9
    assert getattr(caught.value, "column", None) == "value"
    assert store.count(ReadingCopy) == 0


def test_what_the_backend_cannot_hold_is_refused_as_insert_many_refuses_it(store: Store) -> None:
    store.create(Reading)
    store.create(ReadingCopy)
    objs = readings(8)
    dialect = store.dialect.name
    if dialect == "postgresql":
        objs[6].note = "nul \x00 inside"
        column = "note"
    else:  # SQLite and MariaDB keep no NaN
        objs[6].level = math.nan
        column = "level"
    with pytest.raises(EntityworksError) as many:
        store.insert_many(objs)
    with pytest.raises(EntityworksError) as ours:
        store.insert_arrow(ReadingCopy, to_arrow(ReadingCopy, copies(objs)), batch_size=3)
    assert getattr(ours.value, "row", None) == getattr(many.value, "row", None) == 6
    assert getattr(ours.value, "column", None) == column
    assert store.count(ReadingCopy) == 0


def test_a_refused_call_inside_a_transaction_keeps_what_came_before(store: Store) -> None:
    store.create(ReadingCopy)
    table = to_arrow(ReadingCopy, copies(readings(10)))
    with store.transaction():
        assert store.insert_arrow(ReadingCopy, table.slice(0, 5)) == 5
        with pytest.raises(EntityworksError):
            store.insert_arrow(ReadingCopy, table)  # keys 1..5 again
    assert store.count(ReadingCopy) == 5


@dataclass
class Line:
    sku: str
    qty: int


@dataclass
class Order:
    id: int | None
    lines: list[Line] = dataclasses.field(default_factory=list)


def test_child_lists_are_refused_pointing_to_insert_many(sqlite_store: Store) -> None:
    sqlite_store.create(Order)
    table = to_arrow(Order, [Order(1, [Line("a", 1)])])
    with pytest.raises(WriteError, match="insert_many"):
        sqlite_store.insert_arrow(Order, table)
    assert sqlite_store.count(Order) == 0


def test_a_missing_column_is_refused(sqlite_store: Store) -> None:
    sqlite_store.create(ReadingCopy)
    table = to_arrow(ReadingCopy, copies(readings(3)))
    with pytest.raises(ValueEncodingError) as caught:
        sqlite_store.insert_arrow(ReadingCopy, table.drop_columns(["sensor"]))
    assert caught.value.column == "sensor"
    assert sqlite_store.count(ReadingCopy) == 0


def test_a_plain_pandas_frame_without_its_keys(store: Store) -> None:
    import pandas as pd

    store.create(Reading)
    store.create(ReadingCopy)
    objs = readings(12)
    for o in objs:
        o.level = 0.25 if o.level is None else o.level  # a NumPy float column has no None
    store.insert_many([dataclasses.replace(o, id=None) for o in objs])
    frame = pd.DataFrame(
        {
            "sensor": [o.sensor for o in objs],
            "at": [o.at for o in objs],  # objects: each keeps its own offset
            "value": [o.value for o in objs],  # Decimals: each keeps its exponent
            "level": [o.level for o in objs],
            "note": [o.note for o in objs],
        }
    )
    assert store.insert_pandas(ReadingCopy, frame, batch_size=5) == 12
    assert_same_tables(raw_rows(store, Reading), raw_rows(store, ReadingCopy))


def test_insert_parquet_holds_one_batch(sqlite_store: Store, tmp_path: Path) -> None:
    """The Python objects alive at once are one batch's, whatever the file's size."""
    import tracemalloc

    path = tmp_path / "big.parquet"
    write_parquet(ReadingCopy, copies(readings(20_000)), path)
    pq.write_table(pq.read_table(path), path, row_group_size=1000)
    sqlite_store.create(ReadingCopy)
    peaks = {}
    for size in (500, 20_000):
        sqlite_store.delete(ReadingCopy, where={})
        tracemalloc.start()
        assert sqlite_store.insert_parquet(ReadingCopy, path, batch_size=size) == 20_000
        peaks[size] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert peaks[500] * 5 < peaks[20_000], peaks


def test_rows_sent_through_sqlalchemy_when_listened_to(store: Store) -> None:
    """With a cursor listener on the engine, SQLite's rows go through SQLAlchemy's own
    ``executemany`` (the listener sees them): still the rows insert_many stores, on
    every backend."""
    import sqlalchemy as sa

    store.create(Reading)
    store.create(ReadingCopy)
    objs = readings(9)
    seen: list[str] = []

    def listen(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        seen.append(statement)

    sa.event.listen(store.engine, "before_cursor_execute", listen)
    try:
        store.insert_many(objs)
        store.insert_arrow(ReadingCopy, to_arrow(ReadingCopy, copies(objs)), batch_size=4)
        assert_same_tables(raw_rows(store, Reading), raw_rows(store, ReadingCopy))
        # (keys given do not move PostgreSQL's sequence, for insert_many as here: the
        # generated keys go into an empty table)
        store.delete(ReadingCopy, where={})
        keyless = to_arrow(ReadingCopy, copies(objs[:3])).drop_columns(["id"])
        assert store.insert_arrow(ReadingCopy, keyless) == 3
    finally:
        sa.event.remove(store.engine, "before_cursor_execute", listen)
    if store.dialect.name == "sqlite":  # (PostgreSQL's COPY is no cursor execute)
        assert any("reading_copy" in s.lower() and "insert" in s.lower() for s in seen)
    assert [r[1:] for r in raw_rows(store, ReadingCopy)] == [
        r[1:] for r in raw_rows(store, Reading)[:3]
    ]


@dataclass
class Instants:
    id: int
    at: AwareDatetime | None


def test_aware_datetimes_read_back_at_the_edges() -> None:
    """The wall times Arrow computes for aware datetimes (``from_arrow``, the lane's
    decoding) at the ends of the years 1-9999, with nulls, equal the objects written; an
    offset no write stores is still refused with its row."""
    from entityworks.arrow import from_arrow

    def at(minutes: int) -> dt.timezone:
        return dt.timezone(dt.timedelta(minutes=minutes))

    values = [
        dt.datetime(1, 1, 1, 14, 0, tzinfo=at(840)),
        dt.datetime(9999, 12, 31, 9, 59, 59, 999_999, tzinfo=at(-840)),
        dt.datetime(2024, 2, 29, 23, 30, 0, 1, tzinfo=at(345)),
        dt.datetime(1970, 1, 1, tzinfo=dt.UTC),
        dt.datetime(1969, 12, 31, 23, 59, 59, 999_999, tzinfo=at(-1)),
    ]
    for objs in (
        [Instants(i, v) for i, v in enumerate(values)],
        [Instants(i, None if i % 2 else v) for i, v in enumerate(values)],
    ):
        back = from_arrow(Instants, to_arrow(Instants, objs))
        assert all(same(a.at, b.at) for a, b in zip(objs, back, strict=True))
    table = to_arrow(Instants, [Instants(i, v) for i, v in enumerate(values)])
    column = table.column("at").combine_chunks()
    offsets = pa.array([840, -840, 345, None, 900], pa.int16())
    odd = pa.StructArray.from_arrays([column.field("value"), offsets], names=["value", "offset"])
    with pytest.raises(ValueEncodingError) as caught:
        from_arrow(Instants, table.set_column(1, "at", odd))
    assert caught.value.row == 4 and caught.value.column == "at"
    # the last instant of the years 1-9999 at +14:00 would be in the year 10000
    last = pa.array([None, dt.datetime(9999, 12, 31, 23, tzinfo=dt.UTC)], pa.timestamp("us", "UTC"))
    late = pa.StructArray.from_arrays(
        [last, pa.array([None, 840], pa.int16())], ["value", "offset"]
    )
    with pytest.raises(ValueEncodingError) as caught:
        from_arrow(Instants, pa.table({"id": [0, 1], "at": late}))
    assert caught.value.row == 1 and caught.value.column == "at"

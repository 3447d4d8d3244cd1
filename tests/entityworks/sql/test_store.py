"""Store behaviour on every backend: CRUD, filters, transactions, children, upsert, reflect."""

import dataclasses
import datetime as dt
import decimal
import enum
import time
import uuid
from dataclasses import dataclass, field

import numpy as np
import pytest
import sqlalchemy as sa

from entityworks import (
    AwareDatetime,
    EntityworksError,
    FilterError,
    NotFoundError,
    SchemaError,
    Store,
    UnknownColumnError,
    UnknownTableError,
    ValueEncodingError,
    WriteError,
    col,
    primary_key,
)


class Kind(enum.Enum):
    CAVE = "cave"
    DUNGEON = "dungeon"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


@dataclass
class Meta:
    author: str
    made: dt.date
    score: float | None = None


@dataclass
class Room:
    x: int
    y: int
    label: str | None = None


@dataclass
class Everything:
    id: int | None
    name: str
    ratio: float
    note: str | None
    flag: bool
    amount: decimal.Decimal
    at: dt.datetime
    aware: AwareDatetime
    day: dt.date
    clock: dt.time
    span: dt.timedelta
    uid: uuid.UUID
    kind: Kind
    level: Level
    tags: list
    attrs: dict
    pair: tuple
    grid: np.ndarray
    meta: Meta
    blob: bytes
    rooms: list[Room] = field(default_factory=list)


def make(i: int | None = None, **changes) -> Everything:
    base = Everything(
        id=i,
        name=f"n{i}",
        ratio=0.25,
        note=None,
        flag=True,
        amount=decimal.Decimal("12345678901234567890.123456789"),
        at=dt.datetime(2021, 2, 3, 4, 5, 6, 789),
        aware=dt.datetime(2021, 2, 3, 4, 5, 6, 7, tzinfo=dt.timezone(dt.timedelta(hours=-7))),
        day=dt.date(1999, 12, 31),
        clock=dt.time(23, 59, 59, 999999),
        span=dt.timedelta(days=-3, seconds=7, microseconds=11),
        uid=uuid.uuid4(),
        kind=Kind.CAVE,
        level=Level.HIGH,
        tags=[1, "two", None, 3.5],
        attrs={"a": {"b": [1]}},
        pair=(1, "x"),
        grid=np.arange(12, dtype=np.uint8).reshape(3, 4),
        meta=Meta("ann", dt.date(2000, 1, 1), 0.5),
        blob=bytes(range(256)),
        rooms=[Room(1, 2), Room(3, 4, "exit")],
    )
    return dataclasses.replace(base, **changes)


def same(a: Everything, b: Everything) -> bool:
    fa, fb = dataclasses.asdict(a), dataclasses.asdict(b)
    ga, gb = fa.pop("grid"), fb.pop("grid")
    return fa == fb and ga.dtype == gb.dtype and ga.shape == gb.shape and (ga == gb).all()


def test_round_trip_every_type_with_children(store):
    store.create(Everything)
    store.create(Everything)  # idempotent
    obj = make(None)
    store.insert(obj)
    assert isinstance(obj.id, int)  # generated key written back
    got = store.get(Everything, obj.id)
    assert same(got, obj)
    assert got.aware == obj.aware and got.aware.utcoffset() == dt.timedelta(hours=-7)
    assert store.get(Everything, obj.id + 1000) is None


def test_insert_many_generated_and_explicit_keys(store):
    store.create(Everything)
    objs = [make(None), make(50), make(None), make(None)]
    assert store.insert_many(objs) == 4
    keys = [o.id for o in objs]
    assert None not in keys and len(set(keys)) == 4 and keys[1] == 50
    loaded = {o.id: o for o in store.select(Everything)}
    assert all(same(loaded[o.id], o) for o in objs)
    assert [len(o.rooms) for o in loaded.values()] == [2, 2, 2, 2]


@dataclass
class Cave:
    id: int
    kind: str
    width: int
    ratio: float
    seed: int | None = None


@pytest.fixture
def caves(store):
    store.create(Cave)
    rows = [
        Cave(i, "cave" if i % 2 else "dungeon", 40 + i, i / 10, None if i % 3 == 0 else i)
        for i in range(1, 11)
    ]
    store.insert_many(rows)
    return rows


def test_filters_order_limit_offset(store, caves):
    ids = lambda it: [c.id for c in it]  # noqa: E731
    assert ids(store.select(Cave, where={"kind": "cave"}, order_by="id")) == [1, 3, 5, 7, 9]
    assert ids(store.select(Cave, where={"seed": None}, order_by="id")) == [3, 6, 9]
    assert ids(
        store.select(Cave, where=(col("width") >= 44) & (col("width") < 47), order_by="-width")
    ) == [6, 5, 4]
    assert ids(store.select(Cave, where=col("id").in_([2, 4, 99]), order_by="id")) == [2, 4]
    assert ids(store.select(Cave, where=col("ratio").between(0.2, 0.4), order_by="id")) == [2, 3, 4]
    assert ids(store.select(Cave, where=(col("id") == 1) | (col("id") == 10), order_by="id")) == [
        1,
        10,
    ]
    assert ids(store.select(Cave, where=~(col("id") > 2), order_by="id")) == [1, 2]
    assert ids(
        store.select(Cave, where=col("kind").like("dun%") & {"seed": None}, order_by="id")
    ) == [6]
    assert ids(store.select(Cave, order_by="id", limit=3, offset=4)) == [5, 6, 7]
    assert ids(store.select(Cave, order_by="id", offset=8)) == [9, 10]
    assert ids(store.select(Cave, order_by=["kind", "-id"], limit=2)) == [9, 7]
    assert store.count(Cave) == 10
    assert store.count(Cave, where=col("seed").is_not_null()) == 7


def test_filter_errors_name_the_problem(store, caves):
    with pytest.raises(UnknownColumnError, match="'cave' has no column 'colour'"):
        store.select(Cave, where={"colour": "red"})
    with pytest.raises(UnknownColumnError):
        store.select(Cave, order_by="-nope")
    with pytest.raises(FilterError, match="does not take SQL text"):
        store.select(Cave, where="id = 1 OR 1=1")
    with pytest.raises(EntityworksError, match="limit must be"):
        store.select(Cave, limit=-1)
    with pytest.raises(FilterError):
        store.count(Cave, where=col("width") < None)


def test_injection_strings_are_only_data(store, caves):
    hostile = "1; DROP TABLE cave; --"
    assert list(store.select(Cave, where={"kind": hostile})) == []
    assert list(store.select(Cave, where=col("kind") == "' OR '1'='1")) == []
    assert store.count(Cave) == 10


def test_update_delete_and_not_found(store, caves):
    c = store.get(Cave, 3)
    c.kind, c.seed = "island", 99
    store.update(c)
    assert store.get(Cave, 3) == c
    with pytest.raises(NotFoundError, match="no row with id=77"):
        store.update(Cave(77, "x", 1, 0.0))
    assert store.delete(c) == 1 and store.get(Cave, 3) is None
    assert store.delete(Cave, where=col("id") > 8) == 2
    with pytest.raises(EntityworksError, match="needs where"):
        store.delete(Cave)
    assert store.count(Cave) == 7
    assert store.delete(Cave, where={}) == 7


def test_upsert(store, caves):
    store.upsert(Cave(1, "changed", 1, 1.0, 1))
    store.upsert_many([Cave(2, "also", 2, 2.0), Cave(11, "new", 11, 11.0)])
    assert store.get(Cave, 1) == Cave(1, "changed", 1, 1.0, 1)
    assert store.get(Cave, 2).kind == "also" and store.get(Cave, 11).kind == "new"
    assert store.count(Cave) == 11
    with pytest.raises(WriteError, match="needs a key"):
        store.upsert(Cave(None, "x", 1, 0.0))  # type: ignore[arg-type]


def test_children_replaced_on_update_and_upsert_and_deleted_with_parent(store):
    store.create(Everything)
    obj = store.insert(make(None))
    obj.rooms = [Room(9, 9, "only")]
    store.update(obj)
    assert store.get(Everything, obj.id).rooms == [Room(9, 9, "only")]
    obj.rooms = []
    store.upsert(obj)
    assert store.get(Everything, obj.id).rooms == []
    obj.rooms = [Room(5, 5)]
    store.upsert(obj)
    store.delete(obj)
    child = store.table(Everything).metadata.tables["everything_rooms"]
    with store.engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(child)).scalar() == 0


def test_transaction_rolls_back_everything(store):
    store.create(Cave)
    with pytest.raises(RuntimeError):
        with store.transaction():
            store.insert(Cave(1, "a", 1, 0.1))
            store.insert_many([Cave(2, "b", 2, 0.2), Cave(3, "c", 3, 0.3)])
            assert store.count(Cave) == 3  # visible inside
            raise RuntimeError("boom")
    assert store.count(Cave) == 0
    with store.transaction():
        store.insert(Cave(1, "a", 1, 0.1))
        with pytest.raises(WriteError):
            with store.transaction():  # nested -> savepoint
                store.insert(Cave(2, "b", 2, 0.2))
                store.insert(Cave(1, "dup", 1, 0.1))
        store.insert(Cave(3, "c", 3, 0.3))
    assert sorted(c.id for c in store.select(Cave)) == [1, 3]


def test_failing_row_leaves_table_unchanged_and_is_named(store, caves):
    batch = [Cave(100 + i, "ok", i, 0.0) for i in range(6)]
    batch[4] = Cave(5, "duplicate key", 1, 0.0)
    with pytest.raises(WriteError) as info:
        store.insert_many(batch)
    assert info.value.row == 4 and info.value.column == "id"
    assert "row 4" in str(info.value)
    assert store.count(Cave) == 10
    bad_type = [Cave(200, "ok", 1, 0.0), Cave(201, "ok", "wide", 0.0)]  # type: ignore[arg-type]
    with pytest.raises((WriteError, ValueEncodingError)) as info:
        store.insert_many(bad_type)
    assert info.value.row == 1 and info.value.column == "width"
    null_row = [Cave(300, "ok", 1, 0.0), Cave(301, None, 1, 0.0)]  # type: ignore[arg-type]
    with pytest.raises(WriteError) as info:
        store.insert_many(null_row)
    assert info.value.row == 1 and info.value.column == "kind"
    assert store.count(Cave) == 10


def test_encoding_errors_name_row_and_column(store):
    store.create(Everything)
    rows = [make(1), make(2, aware=dt.datetime(2020, 1, 1))]  # naive in an aware column
    with pytest.raises(ValueEncodingError) as info:
        store.insert_many(rows)
    assert info.value.row == 1 and info.value.column == "aware"
    with pytest.raises(ValueEncodingError, match="column 'grid'"):
        store.insert(make(3, grid=np.array([object()])))
    assert store.count(Everything) == 0


def test_mixed_classes_refused(store, caves):
    with pytest.raises(WriteError, match="row 1 is a Room"):
        store.insert_many([Cave(50, "a", 1, 0.0), Room(1, 1)])


def test_reflect_existing_table(store):
    metadata = sa.MetaData()
    sa.Table(
        "legacy_items",
        metadata,
        sa.Column("item_no", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("title", sa.String(50), nullable=False),
        sa.Column("price", sa.Float),
        sa.Column("added", sa.DateTime),
    )
    metadata.create_all(store.engine)
    with store.engine.begin() as conn:
        conn.execute(
            metadata.tables["legacy_items"].insert(),
            [{"item_no": 1, "title": "lamp", "price": 9.5, "added": None}],
        )
    Legacy = store.reflect("legacy_items")
    fields = {f.name: f for f in dataclasses.fields(Legacy)}
    assert list(fields) == ["item_no", "title", "price", "added"]
    schema = store.schema(Legacy)
    assert schema.primary_key.name == "item_no"
    assert [c.nullable for c in schema.columns] == [False, False, True, True]
    (row,) = store.select(Legacy)
    assert (row.item_no, row.title, row.price, row.added) == (1, "lamp", 9.5, None)
    store.insert(Legacy(2, "desk", None, dt.datetime(2020, 5, 6, 7, 8, 9)))
    assert store.get(Legacy, 2).added == dt.datetime(2020, 5, 6, 7, 8, 9)
    with pytest.raises(UnknownTableError, match="no table 'missing'"):
        store.reflect("missing")


def test_get_requires_a_key(store):
    @dataclass
    class Keyless:
        a: int

    store.create(Keyless)
    with pytest.raises(SchemaError, match="has no primary key"):
        store.get(Keyless, 1)


def test_plain_path_and_default_store_location(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with Store() as s:
        s.create(Cave)
        s.insert(Cave(1, "a", 1, 0.5))
    assert (tmp_path / "entityworks.db").exists()
    with Store(tmp_path / "entityworks.db") as again:
        assert again.get(Cave, 1) == Cave(1, "a", 1, 0.5)
        with again.engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert conn.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1


def test_new_file_opened_while_another_connection_writes_it_waits(tmp_path):
    # SQLite answers the switch to WAL of a file another connection is writing (two
    # processes creating one new catalog together) with "database is locked" at once,
    # without its busy handler: the Store waits for the lock like any other statement
    import sqlite3
    import threading

    path = tmp_path / "new.db"
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    with pytest.raises(sqlite3.OperationalError) as busy:  # SQLite's own answer
        sqlite3.connect(path, timeout=5, isolation_level=None).execute("PRAGMA journal_mode=WAL")
    assert busy.value.sqlite_errorcode == sqlite3.SQLITE_BUSY
    released = threading.Timer(0.5, lambda: holder.execute("COMMIT"))
    released.start()
    try:
        with Store(path, busy_timeout=10) as store:
            assert store.table_names() == []
            with store.engine.connect() as conn:
                assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
    finally:
        released.join()
        holder.close()


def test_new_file_locked_longer_than_the_busy_timeout_is_refused(tmp_path):
    import sqlite3

    path = tmp_path / "new.db"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        started = time.monotonic()
        with pytest.raises(sa.exc.OperationalError) as busy:
            Store(path, busy_timeout=0.3).table_names()
        assert getattr(busy.value.orig, "sqlite_errorcode", None) == sqlite3.SQLITE_BUSY
        assert 0.2 < time.monotonic() - started < 5  # waited (about busy_timeout), then refused
    finally:
        holder.close()


def test_primary_key_helper_with_text_key(store):
    @dataclass
    class Tag:
        code: str = primary_key()
        uses: int = 0

    store.create(Tag)
    store.insert_many([Tag("a", 1), Tag("b", 2)])
    store.upsert(Tag("a", 5))
    assert store.get(Tag, "a") == Tag("a", 5)


def test_children_load_on_an_in_memory_database():
    with Store("sqlite://") as s:
        s.create(Everything)
        objs = [make(None) for _ in range(3)]
        s.insert_many(objs)
        loaded = list(s.select(Everything, order_by="id"))
        assert [len(o.rooms) for o in loaded] == [2, 2, 2]
        assert all(same(a, b) for a, b in zip(objs, loaded, strict=True))


def test_reflected_double_is_a_float(store):
    metadata = sa.MetaData()
    sa.Table(
        "measures",
        metadata,
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("v", sa.Double, nullable=False),
    )
    metadata.create_all(store.engine)
    Measures = store.reflect("measures")
    assert store.schema(Measures).column("v").info.python_type is float
    store.insert(Measures(1, 2.5))
    assert store.get(Measures, 1).v == 2.5


def test_max_length_is_enforced_everywhere(store):
    from entityworks import column

    @dataclass
    class Code:
        id: int
        text: str = column(unique=True, max_length=5, default="")

    store.create(Code)
    store.insert(Code(1, "abcde"))
    with pytest.raises(WriteError) as info:
        store.insert_many([Code(2, "ok"), Code(3, "toolong")])
    assert info.value.row == 1
    assert store.count(Code) == 1
    if store.dialect.name == "sqlite":
        with store.engine.connect() as conn:
            ddl = conn.exec_driver_sql("SELECT sql FROM sqlite_master WHERE name = 'code'").scalar()
        assert ddl.rstrip().endswith("STRICT")


def test_row_numbers_in_errors_with_generated_and_explicit_keys(store):
    """Generated-key rows are written apart from explicit ones; errors keep caller numbering."""
    store.create(Everything)
    naive = dt.datetime(2020, 1, 1)
    with pytest.raises(ValueEncodingError) as info:  # in the generated-key subset
        store.insert_many([make(None), make(7), make(None), make(None, aware=naive)])
    assert info.value.row == 3 and info.value.column == "aware"
    with pytest.raises(ValueEncodingError) as info:  # in the explicit-key subset
        store.insert_many([make(None), make(7), make(None), make(8, aware=naive)])
    assert info.value.row == 3 and info.value.column == "aware"
    store.insert(make(5))
    with pytest.raises(WriteError) as info:  # a database error in the explicit-key subset
        store.insert_many([make(None), make(9), make(None), make(5)])
    assert info.value.row == 3 and info.value.column == "id"
    assert store.count(Everything) == 1

"""The everyday Store API of issue 14 on every backend: update by filter, projections of a
few columns, bringing one's own Engine, engine options and SQL logging."""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import logging
import math
from dataclasses import dataclass, field

import numpy as np
import pytest
import sqlalchemy as sa
from sqlalchemy.pool import StaticPool

from entityworks import (
    AwareDatetime,
    ConfigurationError,
    EntityworksError,
    FilterError,
    Store,
    UnknownColumnError,
    ValueEncodingError,
    WriteError,
    col,
    column,
)
from tests.entityworks.sql.test_store import Everything, make

UTC_PLUS_2 = dt.timezone(dt.timedelta(hours=2))


@dataclass
class Tag:
    label: str


@dataclass
class Item:
    id: int | None
    name: str = column(unique=True, max_length=40)
    price: decimal.Decimal = decimal.Decimal("0")
    weight: float = 0.0
    seen: AwareDatetime | None = None
    note: str | None = None
    active: bool = True
    tags: list[Tag] = field(default_factory=list)


def _items() -> list[Item]:
    return [
        Item(None, f"item-{i}", decimal.Decimal(f"{i}.5"), float(i), note=None, tags=[Tag(f"t{i}")])
        for i in range(6)
    ]


def _snapshot(store: Store) -> list[Item]:
    return list(store.select(Item, order_by="id"))


@pytest.fixture
def items(store: Store) -> Store:
    store.create(Item)
    store.insert_many(_items())
    return store


# -- update(Model, values=..., where=...) ------------------------------------------------------
def test_update_by_filter_sets_exact_values_on_matching_rows(items: Store) -> None:
    before = _snapshot(items)
    seen = dt.datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=UTC_PLUS_2)
    count = items.update(
        Item,
        values={
            "price": decimal.Decimal("1.2300"),
            "weight": -0.0,
            "seen": seen,
            "note": "cheap",
            "active": False,
        },
        where=col("id") <= 3,
    )
    assert count == 3
    after = _snapshot(items)
    for old, new in zip(before, after, strict=True):
        if old.id <= 3:
            assert new.price == decimal.Decimal("1.2300")
            assert new.price.as_tuple() == decimal.Decimal("1.2300").as_tuple()  # exponent kept
            assert new.weight == 0.0 and math.copysign(1.0, new.weight) < 0
            assert new.seen == seen and new.seen.utcoffset() == dt.timedelta(hours=2)
            assert (new.note, new.active, new.name, new.tags) == (
                "cheap",
                False,
                old.name,
                old.tags,
            )
        else:
            assert new == old


def test_update_by_filter_reads_back_like_an_inserted_row(items: Store) -> None:
    values = {
        "price": decimal.Decimal("-12.34500"),
        "seen": dt.datetime(
            2001, 2, 3, 4, 5, 6, tzinfo=dt.timezone(dt.timedelta(hours=-9, minutes=-30))
        ),
    }
    items.update(Item, values=values, where={"name": "item-2"})
    inserted = items.insert(Item(None, "fresh", **values))  # type: ignore[arg-type]
    updated = items.select(Item, where={"name": "item-2"})
    [row] = list(updated)
    [fresh] = list(items.select(Item, where={"id": inserted.id}))
    assert (row.price.as_tuple(), row.seen, row.seen.utcoffset()) == (
        fresh.price.as_tuple(),
        fresh.seen,
        fresh.seen.utcoffset(),
    )


def test_update_by_filter_counts_matched_rows_even_when_unchanged(items: Store) -> None:
    assert items.update(Item, values={"active": True}, where={"active": True}) == 6
    assert items.update(Item, values={"note": "x"}, where=col("name") == "none") == 0


def test_update_every_row_needs_an_explicit_empty_filter(items: Store) -> None:
    with pytest.raises(EntityworksError, match="where="):
        items.update(Item, values={"note": "all"})  # type: ignore[call-overload]
    assert items.count(Item, where={"note": "all"}) == 0
    assert items.update(Item, values={"note": "all"}, where={}) == 6
    assert items.count(Item, where={"note": "all"}) == 6


@pytest.mark.parametrize(
    ("values", "column_name"),
    [
        ({"note": "ok", "weight": "heavy"}, "weight"),
        ({"price": 1.5}, "price"),  # a float is not an exact Decimal
        ({"active": 1}, "active"),
        ({"name": None}, "name"),  # NOT NULL
        ({"seen": dt.datetime(2020, 1, 1)}, "seen"),  # naive in an aware column
    ],
)
def test_update_refuses_a_wrong_value_naming_its_column(
    items: Store, values: dict, column_name: str
) -> None:
    before = _snapshot(items)
    with pytest.raises(ValueEncodingError, match=repr(column_name)) as info:
        items.update(Item, values=values, where={})
    assert info.value.column == column_name
    assert _snapshot(items) == before


def test_update_refuses_unknown_columns_the_key_and_child_tables(items: Store) -> None:
    before = _snapshot(items)
    with pytest.raises(UnknownColumnError, match="'colour'"):
        items.update(Item, values={"note": "x", "colour": "red"}, where={})
    with pytest.raises(UnknownColumnError):
        items.update(Item, values={"note": "x"}, where={"colour": "red"})
    with pytest.raises(WriteError, match="primary key") as key:
        items.update(Item, values={"id": 99}, where={"id": 1})
    assert key.value.column == "id"
    with pytest.raises(WriteError, match="child table") as child:
        items.update(Item, values={"tags": []}, where={})
    assert child.value.column == "tags"
    with pytest.raises(EntityworksError, match="non-empty dict"):
        items.update(Item, values={}, where={})
    with pytest.raises(EntityworksError, match="for a class"):
        items.update(before[0], values={"note": "x"})  # type: ignore[call-overload]
    assert _snapshot(items) == before


def test_update_refused_by_the_database_writes_nothing(items: Store) -> None:
    before = _snapshot(items)
    with pytest.raises(WriteError, match="nothing was written") as info:
        items.update(Item, values={"name": "same", "note": "changed"}, where=col("id") <= 2)
    assert info.value.column == "name"
    assert _snapshot(items) == before


def test_update_by_filter_is_atomic_inside_a_transaction(items: Store) -> None:
    before = _snapshot(items)
    with items.transaction():
        assert items.update(Item, values={"note": "kept"}, where={"id": 1}) == 1
        with pytest.raises(WriteError):
            items.update(Item, values={"name": "same"}, where={})
        assert [i.note for i in items.select(Item, order_by="id")][:2] == ["kept", None]
    assert items.get(Item, 1).note == "kept"
    with pytest.raises(RuntimeError), items.transaction():
        items.update(Item, values={"note": "gone"}, where={})
        raise RuntimeError
    assert [i.note for i in _snapshot(items)] == ["kept"] + [None] * 5
    assert [i.tags for i in _snapshot(items)] == [i.tags for i in before]


def test_update_of_one_instance_still_works(items: Store) -> None:
    obj = items.get(Item, 2)
    obj.note = "one"
    obj.tags = [Tag("a"), Tag("b")]
    assert items.update(obj) is None
    assert items.get(Item, 2) == obj


# -- select(Model, columns=[...]) and rows(columns=...) ---------------------------------------
def _same_value(a: object, b: object) -> bool:
    """Equal and of the same type, with what == hides compared too (exponent, sign of zero,
    UTC offset, array dtype and shape)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and bool((a == b).all())
    if isinstance(a, decimal.Decimal):
        return a.as_tuple() == b.as_tuple()
    if isinstance(a, float):
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    if isinstance(a, dt.datetime | dt.time):
        return a == b and a.utcoffset() == b.utcoffset()
    return a == b


def test_select_columns_decodes_every_type_as_instances_hold_it(store: Store) -> None:
    store.create(Everything)
    objs = [
        make(None),
        make(None, note="n", ratio=-0.0, amount=decimal.Decimal("-1.500")),
        make(None, aware=dt.datetime(2020, 6, 1, 12, tzinfo=UTC_PLUS_2)),
    ]
    store.insert_many(objs)
    full = list(store.select(Everything, order_by="id"))
    names = [f.name for f in dataclasses.fields(Everything) if f.name != "rooms"]
    for name in names:
        got = list(store.select(Everything, order_by="id", columns=[name]))
        assert all(len(row) == 1 for row in got)
        assert all(
            _same_value(row[0], getattr(obj, name)) for row, obj in zip(got, full, strict=True)
        ), name
    dicts = list(store.select(Everything, order_by="id", as_dict=True))
    assert [list(d) for d in dicts] == [names] * 3
    assert all(
        _same_value(d[n], getattr(obj, n))
        for d, obj in zip(dicts, full, strict=True)
        for n in names
    )


def test_select_columns_with_filters_order_and_limits(items: Store) -> None:
    rows = list(
        items.select(
            Item,
            where=col("id") > 1,
            order_by="-id",
            limit=3,
            offset=1,
            columns=["name", "price", "id"],
        )
    )
    assert rows == [
        ("item-4", decimal.Decimal("4.5"), 5),
        ("item-3", decimal.Decimal("3.5"), 4),
        ("item-2", decimal.Decimal("2.5"), 3),
    ]
    assert all(type(row) is tuple for row in rows)
    dicts = list(
        items.select(Item, where={"name": "item-0"}, columns=["note", "active"], as_dict=True)
    )
    assert dicts == [{"note": None, "active": True}]
    batches = list(items.rows(Item, order_by="id", columns=["weight"]))
    assert [row for batch in batches for row in batch] == [(float(i),) for i in range(6)]
    assert items.rows(Item, columns=["id"]) is not None


def test_select_columns_are_checked_before_anything_is_read(items: Store) -> None:
    with pytest.raises(UnknownColumnError, match="'colour'"):
        items.select(Item, columns=["name", "colour"])
    with pytest.raises(FilterError, match="child table"):
        items.select(Item, columns=["tags"])
    with pytest.raises(FilterError, match="list of column names"):
        items.select(Item, columns="name")  # type: ignore[call-overload]
    with pytest.raises(FilterError, match="at least one"):
        items.select(Item, columns=[])
    with pytest.raises(FilterError, match="twice"):
        items.rows(Item, columns=["name", "name"])


# -- SQL logging --------------------------------------------------------------------------------
@dataclass
class Note:
    id: int | None
    text: str
    score: float = 0.0


SECRET = "private-value-8d1f"


def _messages(caplog: pytest.LogCaptureFixture, level: int) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name.startswith("entityworks") and r.levelno == level
    ]


def test_sql_logging_shows_bulk_statements_but_values_only_at_debug(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    store.create(Note)
    caplog.set_level(logging.INFO, logger="entityworks")
    store.insert_many([Note(i, f"{SECRET}-{i}") for i in range(1, 51)])
    info = _messages(caplog, logging.INFO)
    how = {"sqlite": "executemany", "postgresql": "COPY"}.get(store.dialect.name, "executemany")
    assert any(
        ("INSERT INTO" in m or "COPY" in m) and "note" in m and f"[{how}, 50 rows]" in m
        for m in info
    ), info
    assert not any(SECRET in r.getMessage() for r in caplog.records)
    caplog.clear()
    caplog.set_level(logging.DEBUG, logger="entityworks")
    store.insert_many([Note(i, f"{SECRET}-{i}") for i in range(51, 61)])
    store.update(Note, values={"text": SECRET}, where={"id": 1})
    assert list(store.select(Note, where={"id": 1}, columns=["text"])) == [(SECRET,)]
    info = _messages(caplog, logging.INFO)
    debug = _messages(caplog, logging.DEBUG)
    assert any(
        m.startswith("UPDATE note SET") or m.startswith("UPDATE `note` SET") for m in info
    ), info
    assert any("SELECT" in m and "note" in m for m in info)
    assert not any(SECRET in m for m in info)
    assert any(f"{SECRET}-55" in m for m in debug) and any(f"'{SECRET}'" in m for m in debug)


def test_sql_logging_sees_sqlite_single_row_calls_and_keeps_their_fast_path(
    sqlite_store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    store = sqlite_store
    caplog.set_level(logging.INFO, logger="entityworks.sql")
    store.create(Note)
    store.insert(Note(7, SECRET))
    assert store.get(Note, 7) == Note(7, SECRET)
    assert store._point.connection(store.model(Note)) is not None  # still the fast path
    info = _messages(caplog, logging.INFO)
    assert any(m.startswith("INSERT INTO note") for m in info), info
    assert any(m.startswith("SELECT") and "WHERE note.id = ?" in m for m in info), info
    assert any(m == "PRAGMA foreign_keys=ON" for m in info)  # connection set-up
    assert not any(SECRET in m for m in info)


def test_sql_logging_of_a_refused_batch_and_its_replay(
    sqlite_store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    store = sqlite_store
    store.create(Note)
    store.insert(Note(3, "taken"))
    caplog.set_level(logging.INFO, logger="entityworks.sql")
    with pytest.raises(WriteError, match="row 2"):
        store.insert_many([Note(1, "a"), Note(2, "b"), Note(3, "c")])
    assert any("[row by row, 3 rows]" in m for m in _messages(caplog, logging.INFO))


def test_logs_never_show_a_password(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="entityworks")
    store = Store("postgresql+psycopg://someone:pw-9f3a2c@127.0.0.1:9/nowhere")
    try:
        assert any("someone:***@127.0.0.1" in m for m in _messages(caplog, logging.DEBUG))
        assert "pw-9f3a2c" not in caplog.text
    finally:
        store.close()


def test_the_package_logger_is_silent_by_default() -> None:
    import entityworks.sql._log  # noqa: F401 - the Store imports it

    handlers = logging.getLogger("entityworks").handlers
    assert any(isinstance(h, logging.NullHandler) for h in handlers)


# -- Store(engine=...) and engine_options ----------------------------------------------------
def _adopted_engine(backend_url: str) -> sa.Engine:
    if backend_url.startswith("sqlite"):
        return sa.create_engine(backend_url, connect_args={"check_same_thread": False})
    if backend_url.startswith("mysql"):
        return sa.create_engine(sa.make_url(backend_url).update_query_dict({"charset": "utf8mb4"}))
    return sa.create_engine(backend_url)


def _session_settings(conn: sa.Connection) -> tuple:
    name = conn.dialect.name
    if name == "sqlite":
        return (
            conn.exec_driver_sql("PRAGMA foreign_keys").scalar(),
            conn.exec_driver_sql("PRAGMA journal_mode").scalar(),
            conn.exec_driver_sql("PRAGMA busy_timeout").scalar(),
        )
    if name in ("mysql", "mariadb"):
        mode, collation = conn.exec_driver_sql("SELECT @@sql_mode, @@collation_connection").one()
        return ("STRICT_ALL_TABLES" in mode and "NO_AUTO_VALUE_ON_ZERO" in mode, collation)
    return ()


def test_store_on_a_given_engine_sets_up_its_connections(backend_url: str) -> None:
    engine = _adopted_engine(backend_url)
    with engine.connect() as early:  # a connection made before the store: set up later
        early.exec_driver_sql("SELECT 1")
    store = Store(engine=engine, busy_timeout=7)
    other = Store(engine=engine)  # a second store on the same engine adds no listeners
    try:
        assert store.engine is engine and store.url == engine.url
        assert len(engine.dispatch.begin) <= 1
        store.create(Item)
        items = _items()
        assert store.insert_many(items) == 6
        assert _snapshot(other) == items
        with engine.connect() as conn:
            settings = _session_settings(conn)
        if store.dialect.name == "sqlite":
            assert settings == (1, "wal", 7000)
        elif store.dialect.name != "postgresql":
            assert settings == (True, "utf8mb4_nopad_bin")
        # a refused batch writes nothing, a rolled-back transaction keeps nothing
        with pytest.raises(WriteError):
            store.insert_many([Item(None, "new"), Item(None, "item-1")])
        with pytest.raises(RuntimeError), store.transaction():
            store.update(Item, values={"note": "gone"}, where={})
            raise RuntimeError
        assert _snapshot(store) == items
    finally:
        store.close()
        other.close()
    with engine.connect() as conn:  # closing the stores leaves the engine to its owner
        assert conn.exec_driver_sql("SELECT 1").scalar() == 1
    engine.dispose()


def test_store_on_an_in_memory_engine_needs_one_connection() -> None:
    with pytest.raises(ConfigurationError, match="StaticPool"):
        Store(engine=sa.create_engine("sqlite://"))
    engine = sa.create_engine(
        "sqlite://", poolclass=StaticPool, connect_args={"check_same_thread": False}
    )
    with engine.begin() as conn:  # the user's own table, in the one in-memory database
        conn.exec_driver_sql("CREATE TABLE mine (x INTEGER)")
    store = Store(engine=engine)
    store.create(Note)
    store.insert(Note(None, "kept"))
    assert {"mine", "note"} <= set(store.table_names())
    assert [n.text for n in store.select(Note)] == ["kept"]


def test_store_refuses_engines_it_cannot_work_with(tmp_path) -> None:
    path = tmp_path / "x.db"
    engine = sa.create_engine(f"sqlite:///{path}")
    with pytest.raises(ConfigurationError, match="not both|no url"):
        Store(path, engine=engine)
    with pytest.raises(ConfigurationError, match="engine_options"):
        Store(engine=engine, engine_options={"pool_size": 2})
    with pytest.raises(ConfigurationError, match="echo"):
        Store(engine=engine, echo=True)
    with pytest.raises(ConfigurationError, match="sqlalchemy.Engine"):
        Store(engine=f"sqlite:///{path}")  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="AUTOCOMMIT"):
        Store(engine=sa.create_engine(f"sqlite:///{path}", isolation_level="AUTOCOMMIT"))
    with pytest.raises(ConfigurationError, match="AUTOCOMMIT"):
        Store(engine=engine.execution_options(isolation_level="AUTOCOMMIT"))
    assert not path.exists()  # nothing was created


def test_engine_options_reach_the_engine(backend_url: str) -> None:
    if backend_url.startswith("sqlite"):
        options = {"pool_size": 3, "max_overflow": 0, "pool_timeout": 4.5}
    else:
        options = {
            "pool_size": 3,
            "max_overflow": 1,
            "pool_timeout": 4.5,
            "pool_recycle": 60,
            "pool_pre_ping": False,
        }
    store = Store(backend_url, engine_options=options)
    try:
        assert store.engine.pool.size() == 3
        assert store.engine.pool.timeout() == 4.5
        store.create(Note)
        assert store.insert_many([Note(i, "x") for i in range(1, 4)]) == 3
        assert store.count(Note) == 3
    finally:
        store.close()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"pool_size": "3"}, "'pool_size' must be an int >= 0, got '3'"),
        ({"pool_size": -1}, "'pool_size' must be an int >= 0"),
        ({"max_overflow": 1.5}, "'max_overflow' must be an int >= -1"),
        ({"pool_timeout": float("nan")}, "'pool_timeout' must be a number"),
        ({"pool_pre_ping": 1}, "'pool_pre_ping' must be True or False"),
        ({"connect_args": [("timeout", 1)]}, "'connect_args' must be a dict"),
        ({"echo": True}, "Store\\(echo=True\\)"),
        ({"bogus_option": 1}, "bogus_option"),
        ({"isolation_level": "SERIALIZABLE"}, "SQLite"),
        ({"connect_args": {"timeout": 1}}, "busy_timeout"),
        ([("pool_size", 1)], "must be a dict"),
    ],
)
def test_engine_options_are_checked(tmp_path, options: object, message: str) -> None:
    with pytest.raises(ConfigurationError, match=message):
        Store(tmp_path / "x.db", engine_options=options)  # type: ignore[arg-type]
    assert not (tmp_path / "x.db").exists()


def test_engine_options_that_break_transactions_or_memory_are_refused(pg_url: str) -> None:
    with pytest.raises(ConfigurationError, match="AUTOCOMMIT"):
        Store(pg_url, engine_options={"isolation_level": "AUTOCOMMIT"})
    with pytest.raises(ConfigurationError, match="AUTOCOMMIT"):
        Store(pg_url, engine_options={"execution_options": {"isolation_level": "autocommit"}})
    with pytest.raises(ConfigurationError, match="poolclass"):
        Store("sqlite://", engine_options={"poolclass": sa.pool.QueuePool})
    with pytest.raises(ConfigurationError, match="pool_size"):
        Store("sqlite://", engine_options={"pool_size": 3})  # StaticPool has no size
    with pytest.raises(ConfigurationError, match="busy_timeout"):
        Store("sqlite://", busy_timeout=-1)
    with pytest.raises(ConfigurationError, match="busy_timeout"):
        Store("sqlite://", busy_timeout=float("inf"))
    store = Store(pg_url, engine_options={"isolation_level": "SERIALIZABLE"})
    try:
        with store.engine.connect() as conn:
            assert conn.get_isolation_level() == "SERIALIZABLE"
    finally:
        store.close()


@dataclass
class Shelf:
    id: int
    label: str


@dataclass
class Book:
    id: int
    title: str
    shelf_id: int | None = column(references=Shelf, default=None)


def test_update_to_a_missing_reference_names_the_column(store: Store) -> None:
    store.create(Book)
    store.insert_many([Shelf(1, "a"), Shelf(2, "b")])
    store.insert_many([Book(1, "x", 1), Book(2, "y", 1), Book(3, "z", None)])
    assert store.update(Book, values={"shelf_id": 2}, where={"shelf.label": "a"}) == 2
    with pytest.raises(WriteError, match="nothing was written") as info:
        store.update(Book, values={"shelf_id": 99, "title": "moved"}, where={})
    assert info.value.column == "shelf_id"
    assert [(b.title, b.shelf_id) for b in store.select(Book, order_by="id")] == [
        ("x", 2),
        ("y", 2),
        ("z", None),
    ]


@dataclass
class Renamed:
    id: int
    title: str = column(name="book_title", default="")
    price: decimal.Decimal = column(name="cost", default=decimal.Decimal("0"))


def test_update_and_columns_use_field_names_of_renamed_columns(store: Store) -> None:
    store.create(Renamed)
    store.insert_many([Renamed(1, "a", decimal.Decimal("1.50")), Renamed(2, "b")])
    assert (
        store.update(
            Renamed,
            values={"title": "z", "price": decimal.Decimal("2.000")},
            where=col("title") == "a",
        )
        == 1
    )
    rows = list(store.select(Renamed, columns=["price", "title"], order_by="id"))
    assert rows == [(decimal.Decimal("2.000"), "z"), (decimal.Decimal("0"), "b")]
    assert rows[0][0].as_tuple() == decimal.Decimal("2.000").as_tuple()
    assert list(store.select(Renamed, where={"id": 2}, as_dict=True)) == [
        {"id": 2, "title": "b", "price": decimal.Decimal("0")}
    ]


def test_a_mariadb_engine_without_utf8mb4_is_refused_at_first_use(mariadb_url: str) -> None:
    engine = sa.create_engine(mariadb_url, connect_args={"charset": "latin1"})
    store = Store(engine=engine)
    try:
        for _ in range(2):  # every connection is refused, none is left checked out
            with pytest.raises(ConfigurationError, match="'latin1'.*utf8mb4"):
                store.create(Note)
        assert engine.pool.checkedout() == 0
    finally:
        store.close()
        engine.dispose()
    explicit = sa.create_engine(
        sa.make_url(mariadb_url).update_query_dict({"charset": "latin1"})
    )  # asked for in the URL: the same as Store(url) allows
    store = Store(engine=explicit)
    try:
        store.create(Note)
        assert store.insert(Note(1, "plain")).id == 1
    finally:
        store.close()
        explicit.dispose()


def test_echo_shows_the_bulk_statements_too(
    backend_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    store = Store(backend_url, echo=True)
    try:
        store.create(Note)
        caplog.set_level(logging.INFO, logger="sqlalchemy.engine.Engine")
        store.insert_many([Note(i, "x") for i in range(1, 31)])
        how = {"sqlite": "executemany", "postgresql": "COPY"}.get(store.dialect.name)
        echoed = [r.getMessage() for r in caplog.records if r.name.startswith("sqlalchemy")]
        if how is None:  # MariaDB: SQLAlchemy executes the batch and echoes it itself
            assert any(m.startswith("INSERT INTO") for m in echoed), echoed
        else:
            assert any(f"[{how}, 30 rows]" in m for m in echoed), echoed
    finally:
        store.close()

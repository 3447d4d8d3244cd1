"""One-row calls cost one statement, one round trip, counted by the drivers' and servers'
own accounting (not ours): SQLite's trace callback, libpq's wire trace for psycopg, MariaDB's
session ``Questions`` counter. A key-equality ``delete``/``update`` by ``where`` takes the
same path as by instance; a connection the server dropped (killed, or a restart) is
replaced after idleness, and a read meeting it is sent again on a new one."""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from entityworks import NotFoundError, Store, col


@dataclass
class Item:
    id: int | None
    name: str
    price: Decimal
    note: str | None = None


@pytest.fixture
def pg_store(pg_url: str):
    s = Store(pg_url)
    s.create(Item)
    yield s
    s.close()


@pytest.fixture
def maria_store(mariadb_url: str):
    s = Store(mariadb_url)
    s.create(Item)
    yield s
    s.close()


def _point(store: Store) -> Any:
    """The driver connection the calling thread's point path holds."""
    raw = store._point.local.point
    assert raw is not None, "the point path did not run"
    return raw


class LibpqTrace:
    """The frontend messages psycopg sends, from libpq's own trace of the wire."""

    def __init__(self, conn: Any) -> None:
        from psycopg import pq

        self.conn = conn
        self.file = tempfile.NamedTemporaryFile("w+", suffix=".trace", delete=False)
        conn.pgconn.trace(self.file.fileno())
        conn.pgconn.set_trace_flags(pq.Trace.SUPPRESS_TIMESTAMPS | pq.Trace.REGRESS_MODE)

    def stop(self) -> list[str]:
        self.conn.pgconn.untrace()
        self.file.close()
        lines = Path(self.file.name).read_text().splitlines()
        os.unlink(self.file.name)
        return [line for line in lines if line.startswith("F")]


def round_trips(messages: list[str]) -> int:
    """Requests that wait for the server: a simple Query, or an extended-protocol Sync."""
    kinds = [m.split("\t")[2].split()[0] if m.count("\t") >= 2 else m for m in messages]
    return kinds.count("Query") + kinds.count("Sync")


def test_postgresql_one_round_trip_per_call_and_no_cursor(pg_store: Store) -> None:
    store = pg_store
    item = store.insert(Item(None, "axe", Decimal("2.50")))
    assert store.get(Item, item.id) == item
    trace = LibpqTrace(_point(store))
    calls = [
        lambda: store.get(Item, item.id),
        lambda: store.get(Item, 999),
        lambda: store.insert(Item(None, "bow", Decimal("1.00"))),
        lambda: store.insert(Item(50, "cap", Decimal("3.10"), "new")),
        lambda: store.update(Item(item.id, "big axe", Decimal("2.75"))),
        lambda: store.update(Item, {"note": "sharp"}, where={"id": item.id}),
        lambda: store.delete(Item(50, "cap", Decimal("3.10"))),
        lambda: store.delete(Item, where={"id": 2}),
    ]
    for call in calls:
        call()
    sent = trace.stop()
    assert round_trips(sent) == len(calls), sent
    text = "\n".join(sent)
    for word in ("DECLARE", "FETCH", "CLOSE", "BEGIN", "COMMIT", "ROLLBACK", "SELECT 1"):
        assert word not in text, (word, sent)
    assert store.get(Item, item.id) == Item(item.id, "big axe", Decimal("2.75"), "sharp")
    assert store.count(Item) == 1


def test_postgresql_general_get_reads_without_a_server_side_cursor(pg_store: Store) -> None:
    statements: list[str] = []
    store = pg_store
    item = store.insert(Item(None, "axe", Decimal("2.50")))

    def seen(_conn: Any, _cursor: Any, sql: str, *_args: Any) -> None:
        statements.append(sql)

    sa.event.listen(store.engine, "before_cursor_execute", seen)
    try:  # a listener sends calls down the general path
        assert store.get(Item, item.id) == item
    finally:
        sa.event.remove(store.engine, "before_cursor_execute", seen)
    assert len([s for s in statements if "SELECT" in s]) == 1, statements
    assert not any("DECLARE" in s or "FETCH" in s or s.strip() == "SELECT 1" for s in statements), (
        statements
    )


def test_sqlite_one_statement_per_call(tmp_path: Path) -> None:
    store = Store(tmp_path / "point.db")
    try:
        store.create(Item)
        item = store.insert(Item(None, "axe", Decimal("2.50")))
        sent: list[str] = []
        _point(store).set_trace_callback(sent.append)
        store.get(Item, item.id)
        store.insert(Item(None, "bow", Decimal("1.00")))
        store.update(Item(item.id, "big axe", Decimal("2.75")))
        assert store.update(Item, {"note": "sharp"}, where={"id": item.id}) == 1
        assert store.delete(Item, where={"id": 2}) == 1
        assert store.delete(Item(item.id, "x", Decimal(0))) == 1
        _point(store).set_trace_callback(None)
        assert [s.split()[0] for s in sent] == [
            "SELECT",
            "INSERT",
            "UPDATE",
            "UPDATE",
            "DELETE",
            "DELETE",
        ], sent
        assert store.count(Item) == 0
    finally:
        store.close()


def test_mariadb_one_statement_per_call(maria_store: Store) -> None:
    store = maria_store
    item = store.insert(Item(None, "axe", Decimal("2.50")))
    store.get(Item, item.id)
    cursor = _point(store).cursor()

    def questions() -> int:
        cursor.execute("SHOW SESSION STATUS LIKE 'Questions'")
        return int(cursor.fetchone()[1])

    before = questions()
    store.get(Item, item.id)
    store.insert(Item(None, "bow", Decimal("1.00")))
    store.update(Item(item.id, "big axe", Decimal("2.75")))
    assert store.update(Item, {"note": "sharp"}, where={"id": item.id}) == 1
    assert store.delete(Item, where={"id": 2}) == 1
    # 5 calls, and the SHOW that reads the counter counts itself
    assert questions() - before == 5 + 1
    assert store.get(Item, item.id) == Item(item.id, "big axe", Decimal("2.75"), "sharp")


def test_key_equality_where_takes_the_point_path_with_the_same_results(store: Store) -> None:
    store.create(Item)
    items = [store.insert(Item(None, f"n{i}", Decimal(i).scaleb(-2))) for i in range(1, 5)]
    assert store.delete(Item, where={"id": items[0].id}) == 1
    assert store._point.local.point is not None  # the point path ran
    assert store.delete(Item, where={"id": 999}) == 0
    assert (
        store.update(Item, {"name": "m", "price": Decimal("9.90")}, where={"id": items[1].id}) == 1
    )
    assert store.update(Item, {"name": "m"}, where={"id": 999}) == 0
    assert store.get(Item, items[1].id) == Item(items[1].id, "m", Decimal("9.90"))
    # not exactly the key (another column, a second condition, a list): the general path
    assert store.delete(Item, where={"name": "n3"}) == 1
    assert store.delete(Item, where={"id": items[3].id, "name": "other"}) == 0
    assert store.update(Item, {"note": "x"}, where=col("id").in_([items[1].id, items[3].id])) == 2
    assert sorted((i.id, i.name, i.note) for i in store.select(Item)) == [
        (items[1].id, "m", "x"),
        (items[3].id, "n4", "x"),
    ]
    with pytest.raises(NotFoundError):
        store.update(Item(999, "none", Decimal(0)))


def _kill_postgresql(url: str, pids: list[int]) -> None:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            for pid in pids:
                assert conn.execute(sa.text("SELECT pg_terminate_backend(:p)"), {"p": pid}).scalar()
    finally:
        engine.dispose()


def _pool_pids(store: Store) -> list[int]:
    """The backend pids of the store's pool (the pool holds at least one connection)."""
    with store.engine.connect() as conn:
        return [conn.connection.dbapi_connection.info.backend_pid]  # type: ignore[union-attr]


def test_postgresql_recovers_a_killed_connection_after_idle(pg_store: Store, pg_url: str) -> None:
    store = pg_store
    store._point.ping_after_idle = 0.2
    item = store.insert(Item(None, "axe", Decimal("2.50")))
    assert store.get(Item, item.id) == item
    _kill_postgresql(pg_url, [_point(store).info.backend_pid, *_pool_pids(store)])
    time.sleep(1.3)  # idle: both the point connection and the pooled one are pinged
    assert store.count(Item) == 1  # the general path, on a new pooled connection
    assert store.insert(Item(None, "bow", Decimal("1.00"))).id == item.id + 1
    assert store.get(Item, item.id) == item

    # killed while not idle: a read is sent again on a new connection
    store._point.ping_after_idle = 60
    _kill_postgresql(pg_url, [_point(store).info.backend_pid])
    time.sleep(0.05)
    assert store.get(Item, item.id) == item
    # a write is not sent again (whether it ran is not known): refused once, then fine
    _kill_postgresql(pg_url, [_point(store).info.backend_pid])
    time.sleep(0.05)
    with pytest.raises(sa.exc.DBAPIError) as caught:
        store.insert(Item(None, "cap", Decimal("3.00")))
    assert caught.value.connection_invalidated
    store.insert(Item(None, "cap", Decimal("3.00")))
    assert sorted(i.name for i in store.select(Item)) == ["axe", "bow", "cap"]


def test_mariadb_recovers_a_killed_connection_after_idle(
    maria_store: Store, mariadb_url: str
) -> None:
    store = maria_store
    store._point.ping_after_idle = 0.2
    item = store.insert(Item(None, "axe", Decimal("2.50")))
    assert store.get(Item, item.id) == item
    engine = sa.create_engine(mariadb_url)
    try:
        with engine.connect() as conn:
            conn.exec_driver_sql(f"KILL {_point(store).thread_id()}")
    finally:
        engine.dispose()
    time.sleep(0.5)
    assert store.get(Item, item.id) == item
    store.update(Item(item.id, "big axe", Decimal("2.75")))
    assert store.get(Item, item.id) == Item(item.id, "big axe", Decimal("2.75"))

"""PostgreSQL and MariaDB reads from the driver's own cursor: every value comes back equal and
of its type through ``select``, iteration, ``rows``, ``get`` (alone and inside a
transaction), filters bind their values as SQLAlchemy would, big reads stream from a
server-side cursor a fetch at a time, and under ``echo`` or a cursor listener the reads go
through SQLAlchemy, which reports them."""

from __future__ import annotations

import enum
import logging
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, fields
from datetime import UTC, date, datetime, time, timedelta, timezone
from decimal import Decimal
from typing import Any

import psycopg
import pymysql.cursors
import pytest
import sqlalchemy as sa

from entityworks import AwareDatetime, Store, col, table
from entityworks.sql import _read
from entityworks.sql.backends import pgread


class Mood(enum.Enum):
    CALM = "calm"
    STORMY = "stormy"


@table("raw_every")
@dataclass
class Every:
    id: int
    flag: bool
    count: int
    ratio: float
    name: str
    blob: bytes
    price: Decimal
    at: datetime
    aware: AwareDatetime
    day: date
    moment: time
    span: timedelta
    ident: uuid.UUID
    mood: Mood
    numbers: list[int]
    maybe_price: Decimal | None
    maybe_aware: AwareDatetime | None
    maybe_name: str | None


@table("raw_many")
@dataclass
class Many:
    id: int
    price: Decimal
    aware: AwareDatetime


OFFSETS = [timezone(timedelta(hours=2)), timezone(-timedelta(hours=3, minutes=30)), UTC]


def _every(n: int) -> list[Every]:
    out = []
    for i in range(1, n + 1):
        aware = datetime(2024, 3, 1, 12, 30, 15, 123456 + i).replace(tzinfo=OFFSETS[i % 3])
        out.append(
            Every(
                id=i,
                flag=i % 2 == 0,
                count=-(10**12) + i,
                ratio=i / 7,
                name=f"name {i} é",
                blob=bytes([i % 256, 0, 255]),
                # the scale of each Decimal differs: it comes back as written
                price=[Decimal("1.50"), Decimal("-0.0001"), Decimal("12345.6789"), Decimal("7")][
                    i % 4
                ],
                at=datetime(2023, 1, 2, 3, 4, 5, i),
                aware=aware,
                day=date(2020, 1, 1) + timedelta(days=i),
                moment=time(i % 24, 59, 58, 999_999),
                span=timedelta(days=-i, microseconds=i),
                ident=uuid.UUID(int=i * 7919),
                mood=Mood.CALM if i % 2 else Mood.STORMY,
                numbers=list(range(i % 4)),
                maybe_price=None if i % 3 == 0 else Decimal("0.10"),
                maybe_aware=None if i % 3 == 1 else aware,
                maybe_name=None if i % 2 else "",
            )
        )
    return out


def _same(got: Any, want: Any) -> None:
    """Equal field by field, of exactly the same type; a Decimal with its digits and
    exponent, an aware datetime with its offset."""
    assert type(got) is type(want)
    for f in fields(want):
        a, b = getattr(got, f.name), getattr(want, f.name)
        assert type(a) is type(b), (f.name, a, b)
        assert a == b, (f.name, a, b)
        if isinstance(b, Decimal):
            assert a.as_tuple() == b.as_tuple(), (f.name, a, b)
        if isinstance(b, datetime) and b.tzinfo is not None:
            assert a.utcoffset() == b.utcoffset(), (f.name, a, b)


@pytest.fixture(params=["postgresql", "mariadb"])
def server_url(request: pytest.FixtureRequest) -> Iterator[str]:
    url: str = request.getfixturevalue("pg_url" if request.param == "postgresql" else "mariadb_url")
    yield url


@pytest.fixture
def server(server_url: str) -> Iterator[Store]:
    s = Store(server_url)
    for cls in (Every, Many):
        s.drop(cls)
        s.create(cls)
    yield s
    for cls in (Every, Many):
        s.drop(cls)
    s.close()


class Spy:
    """Records the driver cursors reads open and the size of each fetch."""

    def __init__(self) -> None:
        self.cursors: list[Any] = []
        self.fetched: list[int] = []
        self.sent: list[str] = []

    def wrap(self, cursor: Any) -> Any:
        self.cursors.append(cursor)
        return _Counted(cursor, self)


class _Counted:
    """A driver cursor whose fetches are counted (the driver's own attributes are
    read-only)."""

    def __init__(self, cursor: Any, spy: Spy) -> None:
        self._cursor = cursor
        self._spy = spy

    def execute(self, sql: str, *args: Any, **kwargs: Any) -> Any:
        self._spy.sent.append(sql)
        return self._cursor.execute(sql, *args, **kwargs)

    def fetchmany(self, size: int) -> Any:
        rows = self._cursor.fetchmany(size)
        self._spy.fetched.append(len(rows))
        return rows

    def stream(self, sql: str, params: Any = None, *, size: int = 1, **kwargs: Any) -> Any:
        """psycopg's rows in chunks: each ``size`` rows taken counts as a fetch."""
        self._spy.sent.append(sql)
        taken = 0
        try:
            for row in self._cursor.stream(sql, params, size=size, **kwargs):
                taken += 1
                if taken == size:
                    self._spy.fetched.append(taken)
                    taken = 0
                yield row
        finally:
            if taken:
                self._spy.fetched.append(taken)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cursor, name)


@pytest.fixture
def spy(server: Store, monkeypatch: pytest.MonkeyPatch) -> Spy:
    found = Spy()
    backend = type(server.backend)
    opened = backend.read_cursor

    def read_cursor(self: Any, dbapi_connection: Any, stream: bool) -> Any:
        return found.wrap(opened(self, dbapi_connection, stream))

    monkeypatch.setattr(backend, "read_cursor", read_cursor)
    return found


def test_every_value_reads_back_equal_and_of_its_type(server: Store, spy: Spy) -> None:
    written = _every(40)
    server.insert_many(written)
    by_select = sorted(server.select(Every), key=lambda o: o.id)
    assert len(by_select) == len(written)
    for got, want in zip(by_select, written, strict=True):
        _same(got, want)
    assert spy.cursors, "the rows came from the driver's own cursor"
    # one at a time, ordered by the server
    for got, want in zip(server.select(Every, order_by="id"), written, strict=True):
        _same(got, want)
    # rows: the decoded column tuples
    rows = [row for batch in server.rows(Every, order_by="id") for row in batch]
    assert [Every(*row) for row in rows] == written
    for row, want in zip(rows, written, strict=True):
        _same(Every(*row), want)
    # a few columns, as dicts
    dicts = list(server.select(Every, columns=["price", "aware"], as_dict=True, order_by="id"))
    for d, want in zip(dicts, written, strict=True):
        assert d["price"].as_tuple() == want.price.as_tuple()
        assert d["aware"].utcoffset() == want.aware.utcoffset() and d["aware"] == want.aware


def test_get_alone_and_in_a_transaction(server: Store) -> None:
    written = _every(6)
    server.insert_many(written)
    for want in written:
        got = server.get(Every, want.id)
        _same(got, want)
    with server.transaction() as tx:  # the general path: a client-side cursor
        for want in written:
            _same(tx.get(Every, want.id), want)
        assert tx.get(Every, 999) is None
    assert server.get(Every, 999) is None


def test_filters_bind_their_values_as_sqlalchemy_would(server: Store, spy: Spy) -> None:
    written = _every(30)
    server.insert_many(written)
    idents = [written[2].ident, written[7].ident, written[20].ident]
    got = list(server.select(Every, where=col("ident").in_(idents), order_by="id"))
    assert [o.id for o in got] == [o.id for o in written if o.ident in idents]
    got = list(server.select(Every, where={"price": Decimal("1.5")}, order_by="id"))
    assert [o.id for o in got] == [o.id for o in written if o.price == Decimal("1.5")]
    got = list(server.select(Every, where=col("maybe_price").is_null(), order_by="id"))
    assert [o.id for o in got] == [o.id for o in written if o.maybe_price is None]
    since = written[10].aware
    got = list(server.select(Every, where=col("aware") >= since, order_by="id", limit=5, offset=2))
    assert [o.id for o in got] == [o.id for o in written if o.aware >= since][2:7]
    assert spy.cursors


def test_a_big_read_streams_from_a_server_side_cursor(server: Store, spy: Spy) -> None:
    n = 2 * _read.FETCH + 123
    base = datetime(2024, 1, 1, tzinfo=OFFSETS[1])
    server.insert_many(
        Many(i, Decimal(i).scaleb(-3), base + timedelta(seconds=i)) for i in range(1, n + 1)
    )
    spy.cursors.clear()
    spy.sent.clear()
    rows = server.select(Many, order_by="id")
    first = next(rows)
    assert first == Many(1, Decimal("0.001"), base + timedelta(seconds=1))
    assert spy.fetched == [_read.FETCH]  # one fetch so far, not the whole table
    cursor = spy.cursors[0]  # the read's; PostgreSQL declares its cursor on a second one
    chunked = isinstance(cursor, psycopg.Cursor) and pgread.chunked_rows()
    assert len(spy.cursors) == (2 if isinstance(cursor, psycopg.Cursor) and not chunked else 1)
    if chunked:  # the query alone, its rows in chunks of a fetch: no cursor on the server
        assert [s.split()[0] for s in spy.sent] == ["SELECT"]
    elif isinstance(cursor, psycopg.Cursor):  # a server-side cursor: DECLARE, one FETCH
        assert [s.split()[0] for s in spy.sent] == ["DECLARE", "FETCH"]
        assert f"FETCH FORWARD {_read.FETCH} " in spy.sent[1]
    else:  # PyMySQL's unbuffered cursor reads the rows from the socket as it fetches
        assert isinstance(cursor, pymysql.cursors.SSCursor)
    rest = list(rows)
    assert len(rest) == n - 1
    assert rest[-1].price == Decimal(n).scaleb(-3)
    assert rest[-1].price.as_tuple().exponent == -3
    assert rest[-1].aware.utcoffset() == OFFSETS[1].utcoffset(None)
    assert max(spy.fetched) == _read.FETCH
    assert sum(spy.fetched) == n
    # the exporters' batches stream the same way
    spy.fetched.clear()
    batches = server.rows(Many)
    assert len(next(batches)) == _read.FETCH
    assert spy.fetched == [_read.FETCH]
    assert sum(len(b) for b in batches) == n - _read.FETCH


def test_echo_sends_reads_through_sqlalchemy(
    server_url: str, server: Store, spy: Spy, caplog: pytest.LogCaptureFixture
) -> None:
    written = _every(12)
    server.insert_many(written)
    echoed = Store(server_url, echo=True)
    try:
        with caplog.at_level(logging.INFO, logger="sqlalchemy.engine"):
            got = list(echoed.select(Every, where=col("id") <= 10, order_by="id"))
        for a, b in zip(got, written[:10], strict=True):
            _same(a, b)
        assert any(
            r.name.startswith("sqlalchemy.engine")
            and "raw_every" in r.getMessage()
            and r.getMessage().lstrip().upper().startswith("SELECT")
            for r in caplog.records
        )
        assert not spy.cursors  # SQLAlchemy's cursor, not ours
    finally:
        echoed.close()


def test_listeners_see_reads(server: Store, spy: Spy) -> None:
    written = _every(9)
    server.insert_many(written)
    seen: list[str] = []

    def before(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        seen.append(statement)

    sa.event.listen(server.engine, "before_cursor_execute", before)
    try:
        got = sorted(server.select(Every), key=lambda o: o.id)
        for a, b in zip(got, written, strict=True):
            _same(a, b)
        assert any("raw_every" in s and s.lstrip().upper().startswith("SELECT") for s in seen)
        assert not spy.cursors
    finally:
        sa.event.remove(server.engine, "before_cursor_execute", before)


def test_the_sql_logger_logs_reads_from_our_cursor(
    server: Store, spy: Spy, caplog: pytest.LogCaptureFixture
) -> None:
    written = _every(5)
    server.insert_many(written)
    with caplog.at_level(logging.INFO, logger="entityworks.sql"):
        got = list(server.select(Every, where=col("id") >= 2, order_by="id"))
    assert [o.id for o in got] == [2, 3, 4, 5]
    assert spy.cursors
    assert any(
        r.name == "entityworks.sql"
        and "raw_every" in r.getMessage()
        and r.getMessage().lstrip().upper().startswith("SELECT")
        for r in caplog.records
    )


def test_a_read_left_half_way_leaves_the_transaction_usable(server: Store, spy: Spy) -> None:
    n = 2 * _read.FETCH + 5
    base = datetime(2024, 1, 1, tzinfo=UTC)
    server.insert_many(Many(i, Decimal("1.0"), base) for i in range(1, n + 1))
    with server.transaction() as tx:
        rows = tx.select(Many, order_by="id")
        assert next(rows).id == 1
        del rows  # left after one fetch: its cursor closed, the transaction goes on
        assert sum(1 for _ in tx.select(Many)) == n
        tx.insert(Many(n + 1, Decimal("2.50"), base))
        again = tx.select(Many, where=col("id") > n - 2, order_by="id")
        assert [o.id for o in again] == [n - 1, n, n + 1]
    rows = server.select(Many, order_by="id")
    assert next(rows).id == 1
    del rows  # outside a transaction: the read's own ends with it
    assert server.count(Many) == n + 1
    assert server.get(Many, n + 1) == Many(n + 1, Decimal("2.50"), base)
    assert server.get(Many, n + 1).price.as_tuple().exponent == -2  # type: ignore[union-attr]

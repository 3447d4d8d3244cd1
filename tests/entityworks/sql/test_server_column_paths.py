"""The column-at-a-time paths of PostgreSQL and MariaDB: timedeltas encoded and decoded a
whole column at once (their microseconds in a BIGINT), aware datetimes read as UTC instants
and shown at their own offset again (and, on MariaDB, written as naive UTC times), bytes
bound as they are. Each value comes back equal and of its type, and the raw driver reads
the same row as the column's natural form of the value; what the rules refuse is still
refused, naming the row and the column, with nothing written."""

from __future__ import annotations

import enum
import json
import math
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import psycopg
import pymysql
import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from entityworks import AwareDatetime, Store, ValueEncodingError, WriteError, table

from ..strategies import offsets

FAST = settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
US = timedelta(microseconds=1)
#: The timedeltas whose microseconds fit a signed 64-bit integer.
SPAN_MICROS = 2**63 - 1


@table("colpath_spans")
@dataclass
class Spans:
    id: int
    span: timedelta
    maybe: timedelta | None


@table("colpath_stamps")
@dataclass
class Stamps:
    id: int
    at: AwareDatetime
    maybe: AwareDatetime | None


@table("colpath_blobs")
@dataclass
class Blobs:
    id: int
    data: bytes
    maybe: bytes | None


class Tone(enum.Enum):
    LOW = "low"
    HIGH = "high"
    SHRILL = "shrill"


@table("colpath_docs")
@dataclass
class Docs:
    id: int
    ints: list[int]
    floats: list[float]
    tone: Tone
    maybe: Tone | None


spans = st.one_of(
    st.timedeltas(min_value=-SPAN_MICROS * US, max_value=SPAN_MICROS * US),
    st.integers(-(10**12), 10**12).map(lambda n: n * US),
    st.sampled_from([timedelta(0), -US, US, SPAN_MICROS * US, -SPAN_MICROS * US]),
)
# instants from the years 1 to 9999 in UTC, shown at any offset the rule takes (a UTC
# value too, whose offset column is NULL)
stamps = st.builds(
    lambda at, zone: at.replace(tzinfo=UTC).astimezone(zone),
    st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30)),
    st.one_of(offsets(), st.just(UTC)),
)


@pytest.fixture(params=["postgresql", "mariadb"])
def server(request: pytest.FixtureRequest) -> Any:
    url = request.getfixturevalue("pg_url" if request.param == "postgresql" else "mariadb_url")
    store = Store(url)
    for cls in (Spans, Stamps, Blobs, Docs):
        store.drop(cls)
        store.create(cls)
    yield store
    for cls in (Spans, Stamps, Blobs, Docs):
        store.drop(cls)
    store.close()


def _raw_rows(store: Store, sql: str) -> list[tuple[Any, ...]]:
    """The rows of ``sql`` as the raw driver reads them (psycopg or PyMySQL, no SQLAlchemy)."""
    url = store.engine.url
    if store.engine.dialect.name == "postgresql":
        dsn = url.set(drivername="postgresql").render_as_string(hide_password=False)
        with psycopg.connect(dsn) as conn:
            return [tuple(r) for r in conn.execute(sql).fetchall()]
    conn = pymysql.connect(
        host=url.host,
        port=url.port or 3306,
        user=url.username,
        password=url.password or "",
        database=url.database,
    )
    try:
        with conn.cursor() as cur:
            cur.execute(sql)
            return [tuple(r) for r in cur.fetchall()]
    finally:
        conn.close()


def _table(store: Store, cls: type) -> str:
    return store.engine.dialect.identifier_preparer.format_table(store.table(cls))


def _read_back(store: Store, cls: type) -> list[Any]:
    """The rows read back by ``select`` and by iteration, which must agree."""
    selected = sorted(store.select(cls), key=lambda o: o.id)
    iterated = sorted((o for o in store.select(cls)), key=lambda o: o.id)
    assert selected == iterated
    return selected


def _clear(store: Store, cls: type) -> None:
    with store.engine.begin() as conn:
        conn.execute(sa.delete(store.table(cls)))


@FAST
@given(values=st.lists(st.tuples(spans, st.none() | spans), min_size=1, max_size=40))
def test_timedeltas_round_trip_as_microseconds(server: Store, values: list[Any]) -> None:
    _clear(server, Spans)
    rows = [Spans(i, a, b) for i, (a, b) in enumerate(values)]
    server.insert_many(rows)
    back = _read_back(server, Spans)
    assert back == rows
    for got in back:
        assert type(got.span) is timedelta
        assert got.maybe is None or type(got.maybe) is timedelta
    raw = _raw_rows(server, f"SELECT id, span, maybe FROM {_table(server, Spans)} ORDER BY id")
    assert raw == [(r.id, r.span // US, None if r.maybe is None else r.maybe // US) for r in rows]


@FAST
@given(values=st.lists(st.tuples(stamps, st.none() | stamps), min_size=1, max_size=40))
def test_aware_datetimes_keep_instant_and_offset(server: Store, values: list[Any]) -> None:
    _clear(server, Stamps)
    rows = [Stamps(i, a, b) for i, (a, b) in enumerate(values)]
    server.insert_many(rows)
    back = _read_back(server, Stamps)
    assert back == rows
    for got, want in zip(back, rows, strict=True):
        for a, b in ((got.at, want.at), (got.maybe, want.maybe)):
            if b is None:
                assert a is None
                continue
            assert type(a) is datetime
            assert a.utcoffset() == b.utcoffset()
            assert a.replace(tzinfo=None) == b.replace(tzinfo=None)  # the same wall time
    sql = f"SELECT id, at, at__offset FROM {_table(server, Stamps)} ORDER BY id"
    naive_utc = server.engine.dialect.name != "postgresql"
    expected = []
    for r in rows:
        instant = r.at.astimezone(UTC)
        minutes = r.at.utcoffset() // timedelta(minutes=1) or None
        expected.append((r.id, instant.replace(tzinfo=None) if naive_utc else instant, minutes))
    assert _raw_rows(server, sql) == expected


@FAST
@given(values=st.lists(st.tuples(st.binary(), st.none() | st.binary()), min_size=1, max_size=40))
def test_bytes_bound_as_they_are(server: Store, values: list[Any]) -> None:
    _clear(server, Blobs)
    rows = [Blobs(i, a, b) for i, (a, b) in enumerate(values)]
    server.insert_many(rows)
    back = _read_back(server, Blobs)
    assert back == rows
    assert all(type(o.data) is bytes for o in back)
    raw = _raw_rows(server, f"SELECT id, data, maybe FROM {_table(server, Blobs)} ORDER BY id")
    assert [(i, bytes(a), None if b is None else bytes(b)) for i, a, b in raw] == [
        (r.id, r.data, r.maybe) for r in rows
    ]


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        (timedelta.max, "64-bit"),
        (-(SPAN_MICROS + 2) * US, "64-bit"),
        (5, "timedelta"),
        (None, "null|NULL"),  # the database refuses it
    ],
)
def test_a_refused_timedelta_names_its_row_and_writes_nothing(
    server: Store, bad: Any, reason: str
) -> None:
    rows = [Spans(i, i * US, None) for i in range(3000)]
    rows[2345].span = bad
    with pytest.raises((ValueEncodingError, WriteError), match=reason) as info:
        server.insert_many(rows)
    assert "row 2345, column 'span'" in str(info.value)
    assert server.count(Spans) == 0
    assert rows[0].span == timedelta(0)  # the instances as they were given


def test_a_timedelta_subclass_is_stored_as_a_timedelta(server: Store) -> None:
    class Longer(timedelta):
        pass

    rows = [Spans(i, timedelta(seconds=i), None) for i in range(100)]
    rows[50].span = Longer(seconds=-3, microseconds=7)
    server.insert_many(rows)
    back = _read_back(server, Spans)
    assert back[50].span == timedelta(seconds=-3, microseconds=7)
    assert type(back[50].span) is timedelta


# floats JSON keeps as they are on both servers (jsonb has no -0.0), big ones included,
# which jsonb would print as integers unless they are rewritten
floats = st.floats(allow_nan=False, allow_infinity=False).filter(
    lambda f: not (f == 0.0 and math.copysign(1.0, f) < 0)
) | st.sampled_from([1e16, 1.5e300, 1e-7, 123456789012345678.0])
docs = st.tuples(
    st.lists(st.integers(-(2**63), 2**63 - 1), max_size=5),
    st.lists(floats, max_size=5),
    st.sampled_from(list(Tone)),
    st.none() | st.sampled_from(list(Tone)),
)


@FAST
@given(values=st.lists(docs, min_size=1, max_size=40))
def test_json_lists_and_enums_round_trip(server: Store, values: list[Any]) -> None:
    _clear(server, Docs)
    rows = [Docs(i, *v) for i, v in enumerate(values)]
    server.insert_many(rows)
    back = _read_back(server, Docs)
    assert back == rows
    for got in back:
        assert all(type(x) is float for x in got.floats)
        assert type(got.tone) is Tone
    sql = f"SELECT id, ints, floats, tone, maybe FROM {_table(server, Docs)} ORDER BY id"
    raw = _raw_rows(server, sql)
    parsed = [
        (
            i,
            a if isinstance(a, list) else json.loads(a),
            f if isinstance(f, list) else json.loads(f),
            t,
            m,
        )
        for i, a, f, t, m in raw
    ]
    assert parsed == [
        (r.id, r.ints, r.floats, r.tone.value, None if r.maybe is None else r.maybe.value)
        for r in rows
    ]


def test_a_refused_member_or_json_value_names_its_row(server: Store) -> None:
    rows = [Docs(i, [i], [0.5], Tone.LOW, None) for i in range(3000)]
    rows[1234].maybe = "low"  # type: ignore[assignment]
    with pytest.raises(ValueEncodingError, match="row 1234, column 'maybe'"):
        server.insert_many(rows)
    rows[1234].maybe = None
    rows[2500].ints = [1, "2"]  # type: ignore[list-item]
    with pytest.raises(ValueEncodingError, match="row 2500, column 'ints'"):
        server.insert_many(rows)
    assert server.count(Docs) == 0


def _statements_one_row_at_a_time(rows: list[tuple[Any, ...]], most: int) -> list[tuple[int, int]]:
    """The multi-row INSERTs' rows as MariaDB's writer cut them a row at a time before."""
    from entityworks.sql.backends.mariadb import INSERT_BYTES

    out, start, size = [], 0, 0
    for i, row in enumerate(rows):
        size += sum(len(v) if type(v) in (str, bytes) else 24 for v in row)
        if i + 1 - start == most or size >= INSERT_BYTES:
            out.append((start, i + 1))
            start, size = i + 1, 0
    if start < len(rows):
        out.append((start, len(rows)))
    return out


@settings(max_examples=200, deadline=None)
@given(
    rows=st.integers(1, 3).flatmap(
        lambda width: st.lists(
            st.tuples(
                *[
                    st.one_of(
                        st.none(),
                        st.integers(),
                        st.floats(allow_nan=False),
                        st.integers(0, 300_000).map(lambda n: "x" * n),
                        st.integers(0, 300_000).map(lambda n: b"y" * n),
                    )
                    for _ in range(width)
                ]
            ),
            max_size=60,
        )
    )
    | st.integers(0, 60_000).map(lambda n: [(None, 1.5)] * n),
    most=st.sampled_from([1, 7, 100, 21_845, 65_535]),
)
def test_mariadb_multi_row_inserts_cut_as_row_by_row(rows: list[Any], most: int) -> None:
    from entityworks.sql.backends.mariadb import _statement_rows

    assert list(_statement_rows(rows, most)) == _statements_one_row_at_a_time(rows, most)


def test_postgresql_reads_instants_in_a_utc_session_of_its_own(pg_url: str) -> None:
    """The Store's connections read in the session zone 'UTC' (psycopg then gives
    datetime.UTC datetimes, which the offset join takes in C); a server or role whose
    default zone is another one, and an engine of the caller's, keep that zone: the values
    read are the same instants at the same offsets either way."""
    west = timezone(-timedelta(hours=3, minutes=30))
    rows = [Stamps(1, datetime(2024, 3, 10, 1, 30, tzinfo=west), None)]
    rows.append(Stamps(2, datetime(1, 1, 1, 20, tzinfo=west), datetime(9999, 12, 31, tzinfo=UTC)))
    zoned = sa.create_engine(pg_url, connect_args={"options": "-c TimeZone=Asia/Kolkata"})
    with Store(pg_url) as store, Store(engine=zoned) as theirs:
        store.create(Stamps)
        try:
            store.insert_many(rows)
            with store.engine.connect() as conn:
                assert conn.exec_driver_sql("SHOW TIME ZONE").scalar() == "UTC"
            with zoned.connect() as conn:
                assert conn.exec_driver_sql("SHOW TIME ZONE").scalar() == "Asia/Kolkata"
            for reader in (store, theirs):
                got = list(reader.select(Stamps, order_by=["id"]))
                assert [(g.at.isoformat(), g.maybe) for g in got] == [
                    (r.at.isoformat(), r.maybe) for r in rows
                ]
                assert [g.at.utcoffset() for g in got] == [west.utcoffset(None)] * 2
            raw = psycopg.connect(pg_url.replace("postgresql+psycopg", "postgresql"))
            with raw:
                stored = raw.execute("SELECT at FROM colpath_stamps ORDER BY id").fetchall()
            assert [s for (s,) in stored] == [r.at for r in rows]  # the same instants
        finally:
            store.drop(Stamps)
    zoned.dispose()

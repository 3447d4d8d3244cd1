"""PostgreSQL's binary COPY rows made in C (``backends/native/pgrows.c``) against psycopg's own
dumpers, with the server as the judge: the same rows written both ways, then read back by
the server's ``COPY ... TO STDOUT (FORMAT BINARY)``, must give the same bytes. A value the
C formatter leaves to psycopg (another type, a subclass, out of range, NaN) makes it answer
None, and the Store then writes the batch through psycopg's ``write_row``: the rows stored
are the same. A list's rows go in one COPY, a generator's a batch at a time."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from zoneinfo import ZoneInfo

import psycopg
import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from psycopg.types.json import Jsonb

from entityworks import AwareDatetime, Store, table
from entityworks.sql.backends import pgcopy, postgresql
from entityworks.sql.backends.native import pgrows
from entityworks.sql.backends.pgcopy import COPY_HEADER, COPY_TRAILER

#: (column, SQL type, psycopg's COPY type, the C formatter's letter)
COLUMNS = [
    ("b", "boolean", "bool", "b"),
    ("i2", "smallint", "int2", "2"),
    ("i4", "integer", "int4", "4"),
    ("i8", "bigint", "int8", "8"),
    ("f", "double precision", "float8", "f"),
    ("t", "text", "text", "t"),
    ("y", "bytea", "bytea", "y"),
    ("u", "uuid", "uuid", "u"),
    ("d", "date", "date", "d"),
    ("tm", "time", "time", "T"),
    ("ts", "timestamp", "timestamp", "s"),
    ("tz", "timestamptz", "timestamptz", "z"),
    ("n", "numeric", "numeric", "n"),
    ("j", "jsonb", "jsonb", "j"),
]
CODES = "".join(c[3] for c in COLUMNS).encode()

ZONES = [
    dt.UTC,
    dt.timezone(dt.timedelta(hours=5, minutes=30)),
    dt.timezone(-dt.timedelta(hours=11, minutes=15, seconds=7)),
    ZoneInfo("Europe/Paris"),
    ZoneInfo("America/St_Johns"),
]


def _text() -> st.SearchStrategy[str]:
    # no NUL (the server refuses it from both) and no lone surrogate (UTF-8 cannot hold it)
    return st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"))


def _decimals() -> st.SearchStrategy[decimal.Decimal]:
    return st.builds(
        lambda sign, digits, exponent: decimal.Decimal((sign, tuple(digits), exponent)),
        st.integers(0, 1),
        st.lists(st.integers(0, 9), min_size=1, max_size=40),
        st.integers(-60, 60),
    )


def _json() -> st.SearchStrategy[str]:
    return st.sampled_from(['{"a": 1}', "[1, 2, 3]", '"é"', "null", '{"k": [true, false, 1.5]}'])


def _aware() -> st.SearchStrategy[dt.datetime]:
    return st.builds(
        lambda d, zone, fold: d.replace(tzinfo=zone, fold=fold),
        st.datetimes(min_value=dt.datetime(2, 1, 1), max_value=dt.datetime(9998, 12, 31)),
        st.sampled_from(ZONES),
        st.integers(0, 1),
    )


VALUES: dict[str, st.SearchStrategy[Any]] = {
    "b": st.booleans(),
    "2": st.integers(-(2**15), 2**15 - 1),
    "4": st.integers(-(2**31), 2**31 - 1),
    "8": st.integers(-(2**63), 2**63 - 1),
    "f": st.floats(allow_nan=False),
    "t": _text(),
    "y": st.binary(max_size=40),
    "u": st.uuids(),
    "d": st.dates(),
    "T": st.times(),
    "s": st.datetimes(),
    "z": _aware(),
    "n": _decimals(),
    "j": _json(),
}

ROW = st.tuples(*(st.none() | VALUES[code] for *_, code in COLUMNS))


@pytest.fixture(scope="module")
def conn(pg_url: str) -> Iterator[psycopg.Connection[Any]]:
    url = sa.make_url(pg_url).set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(url) as c:
        with c.cursor() as cur:
            for name in ("native_a", "native_b"):
                cur.execute(f"DROP TABLE IF EXISTS {name}")
                columns = ", ".join(f"{c} {sql}" for c, sql, *_ in COLUMNS)
                cur.execute(f"CREATE TABLE {name} ({columns})")
        c.commit()
        yield c
        with c.cursor() as cur:
            cur.execute("DROP TABLE native_a, native_b")
        c.commit()


def _server_bytes(cur: psycopg.Cursor[Any], name: str) -> bytes:
    out = bytearray()
    with cur.copy(f"COPY {name} TO STDOUT (FORMAT BINARY)") as copy:
        for part in copy:
            out += part
    return bytes(out)


def _both_ways(conn: psycopg.Connection[Any], rows: list[tuple[Any, ...]]) -> tuple[bytes, bytes]:
    """What the server gives back of ``rows`` written by psycopg's dumpers and by C."""
    body = pgrows.rows(rows, CODES)
    assert body is not None
    with conn.cursor() as cur:
        cur.execute("TRUNCATE native_a, native_b")
        with cur.copy("COPY native_a FROM STDIN (FORMAT BINARY)") as copy:
            copy.set_types([c[2] for c in COLUMNS])
            for row in rows:  # psycopg's jsonb dumper takes the document, not its text
                copy.write_row((*row[:-1], None if row[-1] is None else Jsonb(json.loads(row[-1]))))
        with cur.copy("COPY native_b FROM STDIN (FORMAT BINARY)") as copy:
            copy.write(COPY_HEADER + body + COPY_TRAILER)
        conn.commit()
        return _server_bytes(cur, "native_a"), _server_bytes(cur, "native_b")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=st.lists(ROW, min_size=1, max_size=30))
def test_the_server_stores_what_psycopg_would(
    conn: psycopg.Connection[Any], rows: list[Any]
) -> None:
    ours, psycopgs = _both_ways(conn, rows)
    assert ours == psycopgs


def test_edges_stored_as_psycopg_would(conn: psycopg.Connection[Any]) -> None:
    paris = ZoneInfo("Europe/Paris")
    edges: list[tuple[Any, ...]] = [
        (
            True,
            -(2**15),
            -(2**31),
            -(2**63),
            -0.0,
            "",
            b"",
            uuid.UUID(int=0),
            dt.date.min,
            dt.time.min,
            dt.datetime.min,
            dt.datetime(1, 1, 2, tzinfo=dt.timezone(dt.timedelta(hours=23))),
            decimal.Decimal("-0"),
            "{}",
        ),
        (
            False,
            2**15 - 1,
            2**31 - 1,
            2**63 - 1,
            math.inf,
            "日本語 \t\n é",
            bytes(range(256)),
            uuid.UUID(int=2**128 - 1),
            dt.date.max,
            dt.time.max,
            dt.datetime.max,
            dt.datetime(9999, 12, 30, 23, tzinfo=dt.timezone(-dt.timedelta(hours=23))),
            decimal.Decimal("1E+100"),
            '"x"',
        ),
        (
            True,
            0,
            0,
            0,
            -math.inf,
            "x" * 10_000,
            b"\x00" * 3,
            uuid.uuid4(),
            dt.date(2000, 1, 1),
            dt.time(0, 0, 0, 1),
            dt.datetime(1999, 12, 31, 23, 59, 59, 999_999),
            dt.datetime(2021, 10, 31, 2, 30, tzinfo=paris, fold=1),  # the hour that repeats
            decimal.Decimal("0E-20"),
            "[]",
        ),
        (
            None,
            None,
            None,
            None,
            5e-324,
            None,
            None,
            None,
            None,
            None,
            None,
            dt.datetime(2021, 10, 31, 2, 30, tzinfo=paris, fold=0),
            decimal.Decimal("-1.23E-40"),
            None,
        ),
    ]
    for digits in ("0.0001", "12.50", "9999.9999", "10000", "100000000", "123456789.123456789"):
        edges.append((None,) * 12 + (decimal.Decimal(digits), None))
    ours, psycopgs = _both_ways(conn, edges)
    assert ours == psycopgs


ODD: list[tuple[str, Any]] = [
    ("b", 1),
    ("8", True),  # a bool is an int to Python, not to the column
    ("8", 2**63),
    ("4", 2**31),
    ("2", -(2**15) - 1),
    ("8", 1.0),
    ("8", type("Big", (int,), {})(5)),
    ("f", 1),
    ("t", type("Text", (str,), {})("x")),
    ("t", "\ud800"),
    ("t", b"x"),
    ("j", {"a": 1}),
    ("y", bytearray(b"x")),
    ("u", "00000000-0000-0000-0000-000000000000"),
    ("u", type("MyUUID", (uuid.UUID,), {})(int=5)),
    ("d", dt.datetime(2020, 1, 1)),  # a datetime is a date to Python
    ("T", dt.time(1, tzinfo=dt.UTC)),
    ("s", dt.datetime(2020, 1, 1, tzinfo=dt.UTC)),
    ("z", dt.datetime(2020, 1, 1)),
    ("n", decimal.Decimal("NaN")),
    ("n", decimal.Decimal("-Infinity")),
    ("n", decimal.Decimal("sNaN")),
    ("n", decimal.Decimal((0, (1,), -20_000))),  # beyond the binary form's scale
    ("n", 1.5),
    ("?", 1),
]


GOOD: dict[str, Any] = {
    "b": True,
    "2": 1,
    "4": 1,
    "8": 1,
    "f": 1.0,
    "t": "x",
    "j": "{}",
    "y": b"x",
    "u": uuid.UUID(int=1),
    "d": dt.date(2020, 1, 1),
    "T": dt.time(1),
    "s": dt.datetime(2020, 1, 1),
    "z": dt.datetime(2020, 1, 1, tzinfo=dt.UTC),
    "n": decimal.Decimal("1.5"),
}


@pytest.mark.parametrize(("code", "value"), ODD, ids=[f"{c}-{v!r}" for c, v in ODD])
def test_a_value_not_the_common_case_is_left_to_psycopg(code: str, value: Any) -> None:
    assert pgrows.rows([(value,)], code.encode()) is None
    if code in GOOD:  # the whole chunk, whatever comes before it
        assert pgrows.rows([(GOOD[code],)], code.encode())
        assert pgrows.rows([(GOOD[code],), (value,)], code.encode()) is None


@pytest.mark.parametrize(
    "rows",
    [[[1]], [(1, 2)], [()], ["x"]],
    ids=["a list row", "too wide", "too narrow", "a str row"],
)
def test_rows_not_tuples_of_the_columns_are_left_to_psycopg(rows: list[Any]) -> None:
    assert pgrows.rows(rows, b"8") is None


def test_arguments_are_checked() -> None:
    with pytest.raises(TypeError):
        pgrows.rows((1,), b"8")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        pgrows.rows([(1,)], "8")  # type: ignore[arg-type]
    assert pgrows.rows([], b"8") == b""


def test_a_utcoffset_that_fails_is_left_to_psycopg() -> None:
    class Broken(dt.tzinfo):
        def utcoffset(self, _d: dt.datetime | None) -> dt.timedelta:
            raise RuntimeError("no offset")

    class Unknown(dt.tzinfo):
        def utcoffset(self, _d: dt.datetime | None) -> None:
            return None

    for zone in (Broken(), Unknown()):
        assert pgrows.rows([(dt.datetime(2020, 1, 1, tzinfo=zone),)], b"z") is None


def test_codes_cover_the_copy_types() -> None:
    assert pgcopy.native_codes(tuple(c[2] for c in COLUMNS)) == CODES
    assert pgcopy.native_codes(("int8", "interval")) is None
    assert set(postgresql.COPY_TYPES.values()) <= set(pgcopy.NATIVE)


# -- through the Store ------------------------------------------------------------------


class Label(str):
    """A str subclass: psycopg dumps it as text; the C formatter leaves it to psycopg."""


@table("native_things")
@dataclass
class Thing:
    id: int | None
    name: str
    at: AwareDatetime
    amount: decimal.Decimal


def _things(n: int, keys: bool = True, odd_at: int | None = None) -> list[Thing]:
    zone = dt.timezone(dt.timedelta(hours=-3))
    return [
        Thing(
            i + 1 if keys else None,
            Label(f"odd {i}") if i == odd_at else f"thing {i}",
            dt.datetime(2020, 1, 1, tzinfo=zone) + dt.timedelta(seconds=i),
            decimal.Decimal(i).scaleb(-2),
        )
        for i in range(n)
    ]


@pytest.fixture
def store(pg_url: str) -> Iterator[Store]:
    s = Store(pg_url)
    s.drop(Thing)
    s.create(Thing)
    yield s
    s.drop(Thing)
    s.close()


@pytest.fixture
def formatted(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Whether each chunk the Store gave the C formatter was formatted (False: left)."""
    seen: list[bool] = []
    real = pgrows.rows

    class Spy:
        @staticmethod
        def rows(rows: list[Any], codes: bytes) -> bytes | None:
            out = real(rows, codes)
            seen.append(out is not None)
            return out

    monkeypatch.setattr(pgcopy, "pgrows", Spy)
    return seen


def _stored(store: Store) -> list[tuple[Any, ...]]:
    return [(t.id, t.name, t.at, t.amount) for t in store.select(Thing, order_by="id")]


@pytest.mark.parametrize("keys", [True, False], ids=["keys given", "keys generated"])
def test_rows_formatted_in_c_are_stored_exactly(
    store: Store, formatted: list[bool], keys: bool
) -> None:
    things = _things(3000, keys=keys)
    store.insert_many(things)
    assert formatted and all(formatted)
    assert [t.id for t in things] == list(range(1, 3001))
    assert _stored(store) == [(t.id, t.name, t.at, t.amount) for t in things]
    # the offset kept as given, the instant the same
    assert all(
        s[2].utcoffset() == t.at.utcoffset() for s, t in zip(_stored(store), things, strict=True)
    )


@pytest.mark.parametrize("keys", [True, False], ids=["keys given", "keys generated"])
def test_a_batch_the_c_formatter_leaves_goes_through_psycopg(
    store: Store, formatted: list[bool], keys: bool
) -> None:
    things = _things(2500, keys=keys, odd_at=2100)  # in the third chunk
    store.insert_many(things)
    assert False in formatted  # left to psycopg, then written by it
    assert [t.id for t in things] == list(range(1, 2501))
    stored = _stored(store)
    assert [s[1] for s in stored] == [t.name for t in things]
    assert stored == [(t.id, t.name, t.at, t.amount) for t in things]


def test_a_refused_row_is_named_and_nothing_written(store: Store, formatted: list[bool]) -> None:
    things = _things(3000)
    things[2500].name = "nul \x00 inside"
    with pytest.raises(Exception, match=r"row 2500") as info:
        store.insert_many(things)
    assert "name" in str(info.value)
    assert store.count(Thing) == 0
    assert formatted[0] is True


def test_a_list_is_one_copy_a_generator_a_batch_at_a_time(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    copies: list[int] = []
    real = postgresql.copy_rows

    def spy(rows: Any, chunks: Any, **kw: Any) -> None:
        copies.append(len(rows))
        real(rows, chunks, **kw)

    monkeypatch.setattr(postgresql, "copy_rows", spy)
    n = 45_000
    store.insert_many(_things(n))
    assert copies == [n]
    assert store.count(Thing) == n
    store.delete(Thing, where={})
    copies.clear()
    store.insert_many(t for t in _things(n))
    assert copies == [20_000, 20_000, 5_000]
    store.delete(Thing, where={})
    copies.clear()
    store.insert_many(_things(n), batch_size=10_000)  # the caller's size stands
    assert copies == [10_000] * 4 + [5_000]
    assert store.count(Thing) == n


def test_text_on_a_connection_not_in_utf8_goes_through_psycopg(
    pg_url: str, formatted: list[bool]
) -> None:
    url = sa.make_url(pg_url).update_query_dict({"client_encoding": "latin1"})
    with Store(url.render_as_string(hide_password=False)) as s:
        s.drop(Thing)
        s.create(Thing)
        try:
            things = _things(50)
            things[3].name = "café"
            s.insert_many(things)
            assert formatted == []  # never asked: its text would not be UTF-8
            assert [t.name for t in s.select(Thing, order_by="id")] == [t.name for t in things]
        finally:
            s.drop(Thing)

"""Hypothesis strategies and a row class holding every registry type, for round-trip tests."""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import enum
import math
import uuid
from dataclasses import dataclass
from typing import Any

import numpy as np
from hypothesis import strategies as st

from entityworks import AwareDatetime

# Characters XML 1.0 cannot hold at all; XML tests keep them out of generated text.
XML_FORBIDDEN = (
    "".join(map(chr, [*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20)])) + "\ufffe\uffff"
)


class Mood(enum.Enum):
    CALM = "calm"
    EMPTY = ""
    SPACED = "  "


class Rank(enum.Enum):
    LOW = -(2**63)
    HIGH = 2**63 - 1


@dataclass
class Inner:
    x: int
    when: dt.date
    note: str | None


@dataclass
class Item:
    """A child-table row: Optional fields of the types that need companion columns."""

    label: str
    weight: float | None
    at: AwareDatetime | None
    amount: decimal.Decimal | None


@dataclass
class AllTypes:
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
    items: list[Item]


INT64 = st.integers(-(2**63), 2**63 - 1)


def texts(xml: bool) -> st.SearchStrategy[str]:
    """Any text (no lone surrogates); for XML also none of the forbidden characters."""
    chars = st.characters(
        exclude_categories=("Cs",), exclude_characters=XML_FORBIDDEN if xml else None
    )
    return st.one_of(
        st.text(chars, max_size=20),
        st.text(" \t\n\r", max_size=5),
        st.sampled_from(["", " ", "\r\n", "a\rb", "<&>", "]]>", "_x0020_"]),
    )


def offsets(xml: bool = False) -> st.SearchStrategy[dt.timezone]:
    """UTC offsets the registry accepts (every writer, XML or not): whole minutes within
    ±14:00, the offsets xs:dateTime holds."""
    return st.integers(-14 * 60, 14 * 60).map(lambda m: dt.timezone(dt.timedelta(minutes=m)))


def decimals() -> st.SearchStrategy[decimal.Decimal]:
    """Decimals the registry accepts: finite, not -0, no positive exponent, at most 35 digits
    before the point and 30 after; small and full-width ones, trailing zeros included."""

    def build(places: int, units: int) -> decimal.Decimal:
        digits = tuple(int(d) for d in str(abs(units)))
        return decimal.Decimal((int(units < 0), digits, -places))

    return st.integers(0, 30).flatmap(
        lambda p: st.builds(
            build,
            st.just(p),
            st.one_of(
                st.integers(-(10**6), 10**6), st.integers(-(10 ** (35 + p)) + 1, 10 ** (35 + p) - 1)
            ),
        )
    )


def arrays() -> st.SearchStrategy[np.ndarray]:
    """Arrays of several shapes (0-d included), dtypes, byte orders and memory orders."""
    shapes = st.tuples(st.integers(0, 3), st.integers(0, 3))
    return st.one_of(
        shapes.map(lambda s: np.arange(s[0] * s[1], dtype=np.int32).reshape(s)),
        shapes.map(lambda s: np.asfortranarray(np.arange(s[0] * s[1], dtype=">i8").reshape(s))),
        st.lists(st.floats(allow_nan=False), max_size=4).map(
            lambda v: np.array(v, dtype=np.float64)
        ),
        st.floats().map(np.array),
        st.booleans().map(np.array),
    )


def rows(xml: bool) -> st.SearchStrategy[list[AllTypes]]:
    text = texts(xml)
    json_scalar = st.one_of(
        st.none(), st.booleans(), INT64, st.floats(allow_nan=False, allow_infinity=False), text
    )
    one = st.builds(
        AllTypes,
        id=st.just(0),
        i=INT64,
        oi=st.none() | INT64,
        flag=st.booleans(),
        f=st.floats(),
        of=st.none() | st.floats(),
        s=text,
        os=st.none() | text,
        raw=st.binary(max_size=20),
        dec=decimals()
        | st.just(decimal.Decimal("-12345678901234567890.123456789012345678901234567890")),
        naive=st.datetimes(),
        aware=st.datetimes(dt.datetime(2, 1, 1), dt.datetime(9998, 12, 31), timezones=offsets(xml)),
        day=st.dates(),
        clock=st.times(),
        span=st.timedeltas(dt.timedelta(days=-100_000), dt.timedelta(days=100_000)),
        uid=st.uuids(),
        mood=st.sampled_from(Mood),
        rank=st.none() | st.sampled_from(Rank),
        tags=st.lists(text, max_size=3),
        meta=st.dictionaries(text, json_scalar, max_size=3),
        pair=st.lists(INT64, max_size=3).map(tuple),
        inner=st.builds(Inner, INT64, st.dates(), st.none() | text),
        arr=arrays(),
        odec=st.none() | decimals(),
        oaware=st.none()
        | st.datetimes(dt.datetime(2, 1, 1), dt.datetime(9998, 12, 31), timezones=offsets(xml)),
        counts=st.dictionaries(INT64, text, max_size=3),
        pairs=st.lists(st.tuples(INT64, INT64), max_size=3),
        amounts=st.lists(decimals(), max_size=3),
        onested=st.none() | st.builds(Inner, INT64, st.dates(), st.none() | text),
        items=st.lists(
            st.builds(
                Item,
                text,
                st.none() | st.floats(),
                st.none()
                | st.datetimes(
                    dt.datetime(2, 1, 1), dt.datetime(9998, 12, 31), timezones=offsets(xml)
                ),
                st.none() | decimals(),
            ),
            max_size=3,
        ),
    )

    def number(items: list[AllTypes]) -> list[AllTypes]:
        for n, item in enumerate(items):
            item.id = n
        return items

    return st.lists(one, max_size=4).map(number)


def same_array_values(a: np.ndarray, b: np.ndarray) -> bool:
    """Element-wise as `same` does for floats: NaN equals NaN wherever it sits, and the sign of
    a zero counts."""
    if a.dtype.kind not in "fc":
        return bool(np.array_equal(a, b))
    parts = [(a.real, b.real), (a.imag, b.imag)] if a.dtype.kind == "c" else [(a, b)]
    for x, y in parts:
        if not np.array_equal(x, y, equal_nan=True):
            return False
        numbers = ~np.isnan(x)
        if not np.array_equal(np.signbit(x[numbers]), np.signbit(y[numbers])):
            return False
    return True


def same(a: Any, b: Any, *, dict_order: bool = True) -> bool:
    """Equal and of the same type, bit for bit: NaN equals NaN, -0.0 differs from 0.0, a
    Decimal keeps its exponent, an aware datetime its UTC offset; arrays by dtype, shape and
    values; a dict's keys in the same order (``dict_order=False``: in any order, as
    PostgreSQL's jsonb gives them)."""
    if not dict_order:
        return same(_key_ordered(a), _key_ordered(b))
    if isinstance(a, float) and isinstance(b, float):
        return type(a) is type(b) and (
            math.isnan(a)
            and math.isnan(b)
            or (a == b and math.copysign(1.0, a) == math.copysign(1.0, b))
        )
    if isinstance(a, decimal.Decimal):
        return type(a) is type(b) and a.as_tuple() == b.as_tuple()
    if isinstance(a, dt.datetime):
        return (
            type(a) is type(b)
            and a == b
            and a.utcoffset() == b.utcoffset()
            and a.replace(tzinfo=None) == b.replace(tzinfo=None)
        )
    if isinstance(a, dict):
        return (
            type(a) is type(b)
            and list(a) == list(b)
            and all(type(k) is type(j) for k, j in zip(a, b, strict=True))
            and all(same(a[k], b[k]) for k in a)
        )
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (
            isinstance(a, np.ndarray)
            and isinstance(b, np.ndarray)
            and a.dtype == b.dtype
            and a.shape == b.shape
            and same_array_values(a, b)
        )
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        return type(a) is type(b) and all(
            same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a)
        )
    if isinstance(a, list | tuple):
        return type(a) is type(b) and len(a) == len(b) and all(map(same, a, b))
    return type(a) is type(b) and a == b


def _key_ordered(value: Any) -> Any:
    """``value`` with every dict inside it (dataclasses, lists, tuples too) in one key
    order."""
    if isinstance(value, dict):
        items = sorted(value.items(), key=lambda kv: (type(kv[0]).__name__, repr(kv[0])))
        return type(value)((k, _key_ordered(v)) for k, v in items)
    if isinstance(value, list | tuple) and not hasattr(value, "_fields"):
        return type(value)(_key_ordered(v) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.replace(
            value,
            **{
                f.name: _key_ordered(getattr(value, f.name))
                for f in dataclasses.fields(value)
                if f.init
            },
        )
    return value


def keeps_dict_order(dialect: str) -> bool:
    """False on PostgreSQL, whose jsonb gives a dict back equal, its keys in its own order."""
    return dialect != "postgresql"


def assert_same_rows(expected: list[Any], actual: list[Any], *, dict_order: bool = True) -> None:
    assert len(expected) == len(actual)
    for n, (a, b) in enumerate(zip(expected, actual, strict=True)):
        for f in dataclasses.fields(a):
            va, vb = getattr(a, f.name), getattr(b, f.name)
            assert same(va, vb, dict_order=dict_order), f"row {n}, field {f.name}: {va!r} != {vb!r}"

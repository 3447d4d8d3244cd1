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
XML_FORBIDDEN = "".join(map(chr, [*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20)])) \
    + "\ufffe\uffff"


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


INT64 = st.integers(-(2**63), 2**63 - 1)


def texts(xml: bool) -> st.SearchStrategy[str]:
    """Any text (no lone surrogates); for XML also none of the forbidden characters."""
    chars = st.characters(exclude_categories=("Cs",),
                          exclude_characters=XML_FORBIDDEN if xml else None)
    return st.one_of(st.text(chars, max_size=20), st.text(" \t\n\r", max_size=5),
                     st.sampled_from(["", " ", "\r\n", "a\rb", "<&>", "]]>", "_x0020_"]))


def offsets() -> st.SearchStrategy[dt.timezone]:
    return st.builds(dt.timezone, st.timedeltas(dt.timedelta(hours=-23, minutes=-59),
                                                dt.timedelta(hours=23, minutes=59)))


def arrays() -> st.SearchStrategy[np.ndarray]:
    shapes = st.tuples(st.integers(0, 3), st.integers(0, 3))
    return st.one_of(
        shapes.map(lambda s: np.arange(s[0] * s[1], dtype=np.int32).reshape(s)),
        st.lists(st.floats(allow_nan=False), max_size=4).map(
            lambda v: np.array(v, dtype=np.float64)))


def rows(xml: bool) -> st.SearchStrategy[list[AllTypes]]:
    text = texts(xml)
    json_scalar = st.one_of(st.none(), st.booleans(), INT64,
                            st.floats(allow_nan=False, allow_infinity=False), text)
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
        dec=st.decimals(allow_nan=False, allow_infinity=False) | st.just(
            decimal.Decimal("-12345678901234567890.123456789012345678901234567890")),
        naive=st.datetimes(),
        aware=st.datetimes(dt.datetime(2, 1, 1), dt.datetime(9998, 12, 31),
                           timezones=offsets()),
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
    )

    def number(items: list[AllTypes]) -> list[AllTypes]:
        for n, item in enumerate(items):
            item.id = n
        return items

    return st.lists(one, max_size=4).map(number)


def same(a: Any, b: Any) -> bool:
    """Equality that treats NaN as equal to NaN and compares arrays by dtype, shape, values."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)
                and a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b))
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        return type(a) is type(b) and all(
            same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
    if isinstance(a, list | tuple):
        return type(a) is type(b) and len(a) == len(b) and all(map(same, a, b))
    return type(a) is type(b) and a == b


def assert_same_rows(expected: list[Any], actual: list[Any]) -> None:
    assert len(expected) == len(actual)
    for n, (a, b) in enumerate(zip(expected, actual, strict=True)):
        for f in dataclasses.fields(a):
            va, vb = getattr(a, f.name), getattr(b, f.name)
            assert same(va, vb), f"row {n}, field {f.name}: {va!r} != {vb!r}"

"""The SQL columns the columnar lane computes from Arrow on SQLite (``_arrowforms``).

The oracle of each form is the registry's per-value codec (``textvalues``: the text
``insert_many`` binds, and the companions' ``split``) applied to the values that
``to_arrow`` was given; a form may decline a column (``None``: the lane then encodes it
value by value), never give other text. Where a column is plainly one of the common
shapes, the test also requires the form to take it, so that a form that declined
everything would fail here. The lane's tables are compared with ``insert_many``'s
through sqlite3 itself.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import math
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import entityworks.sql._columnar as columnar
from entityworks import AwareDatetime, EntityworksError, Store
from entityworks.arrow import to_arrow
from entityworks.sql._arrowforms import (
    aware_datetime_text,
    date_text,
    decimal_text,
    naive_datetime_text,
    time_text,
)
from entityworks.sql.textvalues import decimal_key, naive_text, utc_text
from entityworks.sql.textvalues import time_text as time_oracle
from entityworks.types.scalars import offset_minutes
from entityworks.types.values import decimal_text as plain_decimal_text

from ..strategies import decimals, offsets

SETTINGS: dict[str, Any] = dict(deadline=None, database=None, max_examples=150)


def optional(values: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.none() | values


@dataclass
class Naive:
    v: dt.datetime | None


@dataclass
class Aware:
    v: AwareDatetime | None


@dataclass
class Day:
    v: dt.date | None


@dataclass
class Clock:
    v: dt.time | None


@dataclass
class Money:
    v: decimal.Decimal | None


def column(cls: type, values: list[Any]) -> pa.ChunkedArray:
    """The Arrow column ``to_arrow`` writes for ``values`` of field ``v``."""
    return to_arrow(cls, [cls(v) for v in values]).column("v")


def each(fn: Any, values: list[Any]) -> list[Any]:
    return [None if v is None else fn(v) for v in values]


@settings(**SETTINGS)
@given(st.lists(optional(st.datetimes()), max_size=30))
@example([dt.datetime(1, 1, 1), dt.datetime(999, 12, 31, 23, 59, 59, 1), dt.datetime.max])
def test_naive_datetimes(values: list[dt.datetime | None]) -> None:
    made = naive_datetime_text(column(Naive, values), True)
    assert made == [each(naive_text, values)]


@settings(**SETTINGS)
@given(
    st.lists(
        optional(st.datetimes(dt.datetime(1, 1, 1), dt.datetime.max, timezones=offsets())),
        max_size=30,
    )
)
@example(
    [dt.datetime(2024, 5, 6, 7, 8, 9, 5, tzinfo=dt.timezone(-dt.timedelta(hours=3, minutes=30)))]
)
@example([dt.datetime(1, 1, 1, 20, tzinfo=dt.timezone(dt.timedelta(hours=14)))])
@example([dt.datetime(9999, 12, 31, 1, tzinfo=dt.timezone(-dt.timedelta(hours=14)))])
@example([dt.datetime(2000, 1, 1, tzinfo=dt.timezone(dt.timedelta(0))), None])
def test_aware_datetimes(values: list[dt.datetime | None]) -> None:
    made = aware_datetime_text(column(Aware, values), True)
    safe = all(v is None or 2 <= v.year <= 9998 for v in values)
    assert made is not None or not safe
    if made is not None:
        assert made == [each(utc_text, values), each(offset_minutes, values)]


@settings(**SETTINGS)
@given(st.lists(optional(st.dates()), max_size=30))
@example([dt.date(1, 1, 1), dt.date(999, 3, 4), dt.date.max])
def test_dates(values: list[dt.date | None]) -> None:
    assert date_text(column(Day, values), True) == [each(dt.date.isoformat, values)]


@settings(**SETTINGS)
@given(st.lists(optional(st.times()), max_size=30))
@example([dt.time(0), dt.time(23, 59, 59, 999999), dt.time(1, 2, 3, 5)])
def test_times(values: list[dt.time | None]) -> None:
    assert time_text(column(Clock, values), True) == [each(time_oracle, values)]


def money(places: int) -> st.SearchStrategy[decimal.Decimal]:
    """Decimals of ``places`` digits after the point, negative ones and zeros included."""
    return st.integers(-(10**20), 10**20).map(lambda n: decimal.Decimal(n).scaleb(-places))


@settings(**SETTINGS)
@given(st.integers(0, 6).flatmap(lambda p: st.lists(optional(money(p)), max_size=30)))
@example([decimal.Decimal("-0.05"), decimal.Decimal("0.00"), decimal.Decimal("-1.50"), None])
@example([decimal.Decimal("-99999999999999999999999999999999999")])
def test_decimals_of_one_scale(values: list[decimal.Decimal | None]) -> None:
    made = decimal_text(column(Money, values), True)
    if made is None:  # (no value: to_arrow picks no decimal type)
        assert all(v is None for v in values)
    else:
        assert made == [each(decimal_key, values), each(plain_decimal_text, values)]


@settings(**SETTINGS)
@given(st.lists(optional(decimals()), max_size=30))
@example([decimal.Decimal("1E-30"), decimal.Decimal("-1.5"), decimal.Decimal("2.25")])
def test_decimals_of_any_scale_taken_or_declined(values: list[decimal.Decimal | None]) -> None:
    made = decimal_text(column(Money, values), True)
    if made is not None:
        assert made == [each(decimal_key, values), each(plain_decimal_text, values)]


def test_what_a_form_declines() -> None:
    # a null where the field is not Optional: the value-by-value path names it
    assert naive_datetime_text(pa.array([None], pa.timestamp("us")), False) is None
    # another Arrow type (the lane casts it as from_arrow does)
    assert naive_datetime_text(pa.array([1], pa.timestamp("ms")), True) is None
    assert date_text(pa.array([1], pa.date64()), True) is None
    # beyond datetime's years
    far = pa.array([253402300800000000], pa.int64()).cast(pa.timestamp("us"))
    assert naive_datetime_text(far, True) is None
    # an offset no write stores
    at = pa.array([0], pa.timestamp("us", tz="UTC"))
    wide = pa.StructArray.from_arrays([at, pa.array([15 * 60], pa.int16())], ["value", "offset"])
    assert aware_datetime_text(wide, True) is None
    # a struct of other fields
    odd = pa.StructArray.from_arrays([at], ["instant"])
    assert aware_datetime_text(odd, True) is None
    # a Decimal whose own scale differs from the column's; one of more than 35 digits
    mixed = column(Money, [decimal.Decimal("1.5"), decimal.Decimal("1.25")])
    assert decimal_text(mixed, True) is None
    assert decimal_text(pa.array([1], pa.decimal128(38, 0)), True) is None


# -- the lane on SQLite ------------------------------------------------------------------


@dataclass
class Edges:
    id: int
    naive: dt.datetime
    aware: AwareDatetime
    day: dt.date
    clock: dt.time
    amount: decimal.Decimal
    oaware: AwareDatetime | None
    oamount: decimal.Decimal | None
    level: float | None


@dataclass
class EdgesCopy(Edges):
    pass


def edges(n: int) -> list[Edges]:
    zones = [
        dt.UTC,
        dt.timezone(-dt.timedelta(hours=3, minutes=30)),
        dt.timezone(dt.timedelta(hours=14)),
    ]
    return [
        Edges(
            i,
            dt.datetime(
                1 + (i * 997) % 9999,
                1 + i % 12,
                1 + i % 28,
                i % 24,
                i % 60,
                i % 60,
                i * 7919 % 10**6,
            ),
            dt.datetime(2 + (i * 991) % 9997, 1 + i % 12, 1 + i % 28, i % 24, tzinfo=zones[i % 3]),
            dt.date(1 + (i * 13) % 9999, 1 + i % 12, 1 + i % 28),
            dt.time(i % 24, i % 60, i % 60, i * 31 % 10**6),
            decimal.Decimal(i * 1237 - 5000).scaleb(-2),
            None if i % 4 == 0 else dt.datetime(2020, 1, 1, tzinfo=zones[i % 3]),
            None if i % 3 == 0 else decimal.Decimal(-i).scaleb(-3),
            None if i % 5 == 0 else (-0.0 if i % 7 == 0 else i / 3),
        )
        for i in range(n)
    ]


def copies(objs: list[Edges]) -> list[EdgesCopy]:
    return [EdgesCopy(**{f.name: getattr(o, f.name) for f in dataclasses.fields(o)}) for o in objs]


def sql_rows(path: Path, table: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(path) as raw:
        return raw.execute(f"SELECT * FROM {table} ORDER BY id").fetchall()


@pytest.fixture
def file_store(tmp_path: Path) -> Any:
    store = Store(tmp_path / "forms.db")
    yield store, tmp_path / "forms.db"
    store.close()


def test_the_lane_stores_what_insert_many_stores(file_store: Any, monkeypatch: Any) -> None:
    store, path = file_store
    store.create(Edges)
    store.create(EdgesCopy)
    objs = edges(300)
    store.insert_many(objs)

    def never(*_args: Any) -> Any:  # the forms took every such column
        raise AssertionError("a column decoded into values")

    monkeypatch.setattr(columnar, "_decoded", never)
    assert store.insert_arrow(EdgesCopy, to_arrow(EdgesCopy, copies(objs)), batch_size=64) == 300
    expected = sql_rows(path, store.table(Edges).name)
    assert sql_rows(path, store.table(EdgesCopy).name) == expected
    assert any(row[-1] == 1 for row in expected)  # a -0.0's companion among them


def test_a_refusal_elsewhere_decodes_the_taken_columns_and_names_the_row(file_store: Any) -> None:
    store, _path = file_store
    store.create(Edges)
    store.create(EdgesCopy)
    objs = edges(100)
    objs[77].level = math.nan  # SQLite keeps no NaN
    with pytest.raises(EntityworksError) as many:
        store.insert_many(objs)
    with pytest.raises(EntityworksError) as ours:
        store.insert_arrow(EdgesCopy, to_arrow(EdgesCopy, copies(objs)), batch_size=30)
    assert getattr(ours.value, "row", None) == getattr(many.value, "row", None) == 77
    assert getattr(ours.value, "column", None) == "level"
    assert str(ours.value) == str(many.value)  # (the same words as insert_many's)
    assert store.count(EdgesCopy) == 0


def test_a_null_in_a_field_not_optional_is_named(file_store: Any) -> None:
    store, _path = file_store
    store.create(EdgesCopy)
    table = to_arrow(EdgesCopy, copies(edges(10)))
    at = table.column_names.index("naive")
    values = [None if i == 8 else v for i, v in enumerate(table.column("naive").to_pylist())]
    bad = table.set_column(at, "naive", pa.array(values, pa.timestamp("us")))
    with pytest.raises(EntityworksError) as caught:
        store.insert_arrow(EdgesCopy, bad, batch_size=4)
    assert getattr(caught.value, "row", None) == 8
    assert getattr(caught.value, "column", None) == "naive"
    assert store.count(EdgesCopy) == 0


def test_older_companion_columns_beside_are_read_as_from_arrow_reads_them(file_store: Any) -> None:
    store, path = file_store
    store.create(Edges)
    store.create(EdgesCopy)
    objs = edges(20)
    store.insert_many(objs)
    table = to_arrow(EdgesCopy, copies(objs))
    # entityworks 0.2's layout: the instant alone, its offset in a column beside it
    aware = table.column("aware").combine_chunks()
    at = table.column_names.index("aware")
    older = table.set_column(at, "aware", aware.field("value")).append_column(
        "aware__offset", aware.field("offset")
    )
    store.insert_arrow(EdgesCopy, older)
    assert sql_rows(path, store.table(EdgesCopy).name) == sql_rows(path, store.table(Edges).name)


def test_offsets_written_by_another_tool() -> None:
    # an offset of 0 given (to_arrow writes UTC's as null) is UTC's: no companion value
    from entityworks.arrow import from_arrow

    instants = pa.array([0, 10**15, 2 * 10**15, 3 * 10**15], pa.timestamp("us", tz="UTC"))
    minutes = pa.array([0, 1, None, -210], pa.int16())
    array = pa.StructArray.from_arrays([instants, minutes], ["value", "offset"])
    values = [a.v for a in from_arrow(Aware, pa.table({"v": array}))]
    assert aware_datetime_text(array, True) == [
        each(utc_text, values),
        each(offset_minutes, values),
    ]

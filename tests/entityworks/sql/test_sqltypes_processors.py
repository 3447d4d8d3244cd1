"""The storage types choose their per-backend work once per dialect (in the bind and result
processors SQLAlchemy keeps), never value by value, and bind and read what they did before;
the server-default code asks what a column type is through SQLAlchemy's public API."""

from __future__ import annotations

import datetime as dt
import decimal
import uuid
from collections.abc import Callable
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.dialects import mysql, postgresql, sqlite

from entityworks.sql import sqltypes
from entityworks.sql.backends import Backend
from entityworks.sql.defaults import is_number, is_text

UTC = dt.UTC
DIALECTS = [sqlite.dialect(), postgresql.dialect(), mysql.dialect()]
CASES: list[tuple[Callable[[], sa.types.TypeDecorator[Any]], Any]] = [
    (sqltypes.ExactDecimal, decimal.Decimal("-12.50")),
    (sqltypes.NaiveDateTime, dt.datetime(2024, 5, 6, 7, 8, 9, 123)),
    (sqltypes.ISODate, dt.date(2024, 5, 6)),
    (sqltypes.ISOTime, dt.time(7, 8, 9, 5)),
    (sqltypes.UUIDType, uuid.UUID(int=12345)),
    (
        sqltypes.AwareDateTime,
        dt.datetime(2024, 5, 6, 7, 8, tzinfo=dt.timezone(dt.timedelta(hours=2))),
    ),
]


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.name)
@pytest.mark.parametrize(("make", "value"), CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_the_backend_is_looked_up_once_per_processor_not_per_value(
    monkeypatch: pytest.MonkeyPatch, dialect: sa.Dialect, make: Any, value: Any
) -> None:
    calls: list[str] = []
    real = sqltypes.for_name

    def counting(name: str) -> Backend:
        calls.append(name)
        return real(name)

    monkeypatch.setattr(sqltypes, "for_name", counting)
    impl = make().dialect_impl(dialect)
    bind = impl.bind_processor(dialect)
    read = impl.result_processor(dialect, 1700 if dialect.name == "postgresql" else None)
    made = len(calls)
    bound = [bind(value) if bind else value for _ in range(100)]
    stored = bound[0]
    back = read(stored) if read and dialect.name != "mysql" else stored
    assert len(calls) == made  # no lookup per value
    # what SQLAlchemy's own composition through process_bind_param gives, value by value
    generic = sa.types.TypeDecorator.bind_processor(impl, dialect)
    assert stored == (generic(value) if generic else value)
    if dialect.name == "sqlite":  # the text forms read back exactly
        assert bind is not None and bind(None) is None
        assert back == value and type(back) is type(value)
    elif dialect.name != "mysql" and isinstance(value, dt.datetime) and value.tzinfo:
        assert back == value and back.tzinfo == UTC


def test_a_decimal_column_refuses_what_is_no_decimal_on_every_backend() -> None:
    for dialect in DIALECTS:
        impl = sqltypes.ExactDecimal().dialect_impl(dialect)
        bind = impl.bind_processor(dialect)
        assert bind is not None
        with pytest.raises(ValueError, match="expected a Decimal"):
            bind(1.5)


def test_the_sortable_decimal_key_is_bound_where_there_is_no_decimal_type() -> None:
    dialect = sqlite.dialect()
    bind = sqltypes.ExactDecimal().dialect_impl(dialect).bind_processor(dialect)
    assert bind is not None
    assert bind(decimal.Decimal("1.50")) == sqltypes.decimal_key(decimal.Decimal("1.5"))


def test_an_instant_is_bound_naive_utc_where_instants_are_naive() -> None:
    dialect = mysql.dialect()
    bind = sqltypes.AwareDateTime().dialect_impl(dialect).bind_processor(dialect)
    aware = dt.datetime(2024, 1, 1, 12, tzinfo=dt.timezone(dt.timedelta(hours=-3)))
    got = bind(aware) if bind else aware
    assert got == dt.datetime(2024, 1, 1, 15) and got.tzinfo is None


@pytest.mark.parametrize(
    ("type_", "number", "text"),
    [
        (sqltypes.big_integer(), True, False),
        (sqltypes.small_integer(), True, False),
        (sqltypes.double(), True, False),
        (sqltypes.boolean(), True, False),
        (sqltypes.ExactDecimal(), True, False),
        (sqltypes.text(), False, True),
        (sqltypes.key_text(), False, True),
        (sqltypes.bounded_text(10), False, True),
        (sa.String(5), False, True),
        (sqltypes.binary(), False, False),
        (sqltypes.NaiveDateTime(), False, False),
        (sqltypes.ISODate(), False, False),
        (sqltypes.UUIDType(), False, False),
        (sqltypes.AwareDateTime(), False, False),
        (mysql.DECIMAL(65, 30), True, False),
        (mysql.LONGTEXT(), False, True),
    ],
)
def test_numbers_and_text_are_told_by_the_public_api(
    type_: sa.types.TypeEngine[Any], number: bool, text: bool
) -> None:
    assert is_number(type_) is number
    assert is_text(type_) is text

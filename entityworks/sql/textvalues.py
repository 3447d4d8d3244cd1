"""Values kept as text where a backend has no type for them (SQLite: ``Backend.text_values``),
read back: the sortable decimal key, ISO 8601 text, UTC instants. Plain functions, which
:mod:`.sqltypes` binds and reads with, and :mod:`.backends.sqlitefile` reads with without
SQLAlchemy.
"""

from __future__ import annotations

import datetime as dt
import decimal
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from operator import attrgetter, countOf
from typing import Any

from ..types.columns import count_type, decimal_keys_at_once, has_none, on_present
from ..types.columns import each as columns_each
from ..types.values import require_aware

UTC = dt.UTC

_ZERO = decimal.Decimal(0)
_KEY_DIGITS = 35  # digits before the point in a key: DECIMAL(65, 30)'s 35
_NINES = str.maketrans("0123456789", "9876543210")
_TZINFO = attrgetter("tzinfo")


def decimal_key(value: decimal.Decimal) -> str:
    """Text that sorts like the numbers and is equal for equal numbers (``1.5`` and ``1.50``).

    The integer part is zero-padded to 35 digits and trailing zeros of the fraction dropped:
    ``00…01.5``. A negative number is ``-`` and the nines' complement of those digits, ended by
    ``~`` so that a longer fraction sorts first: ``-1.55 < -1.5 < -1 < 0``.
    """
    sign, digits, exponent = value.as_tuple()
    if not value.is_finite() or not isinstance(exponent, int):
        raise ValueError(f"{value} is not a finite number")
    text = "".join(map(str, digits))
    if exponent >= 0:
        integer, fraction = text + "0" * exponent, ""
    else:
        text = text.rjust(-exponent, "0")
        integer, fraction = text[:exponent], text[exponent:]
    integer, fraction = integer.lstrip("0"), fraction.rstrip("0")
    if len(integer) > _KEY_DIGITS:
        raise ValueError(f"{value} has more than {_KEY_DIGITS} digits before the point")
    integer = integer.rjust(_KEY_DIGITS, "0")
    tail = "." + fraction if fraction else ""
    if not sign or not (integer.strip("0") or fraction):
        return integer + tail
    return "-" + integer.translate(_NINES) + tail.translate(_NINES) + "~"


def decimal_keys(values: Sequence[Any]) -> list[Any]:
    """:func:`decimal_key` of each Decimal of a column (``None`` for None), the values
    checked by the registry's rule (at most 35 digits before the point and 30 after).

    Each value is written once, in C, with its sign (a space for a positive number) and
    35 + 30 digits (``format(v, " 067.30f")``: exact, since no value has more places),
    trailing zeros dropped; the nines' complement of the negative ones is taken for the
    whole column in one ``str.translate``. A negative zero's key is a zero's.

    The usual column (every value's ``str`` plain or scientific decimal text) is keyed in
    one C loop from that text (``columns.decimal_keys_at_once``: :func:`decimal_key`'s
    keys)."""
    at_once = decimal_keys_at_once(values)
    if at_once is not None:
        return at_once
    if has_none(values):
        keys = iter(_present_decimal_keys([v for v in values if v is not None]))
        return [None if v is None else next(keys) for v in values]
    return _present_decimal_keys(values)


#: What ``format(v, " 067.30f")`` trimmed gives a zero of either sign, and a zero's key.
_NEGATIVE_ZERO_TEXT = "-" + "0" * _KEY_DIGITS
_ZERO_KEY = "0" * _KEY_DIGITS


def _present_decimal_keys(values: Sequence[Any]) -> list[Any]:
    texts = [format(v, " 067.30f").rstrip("0").rstrip(".") for v in values]
    joined = "\n".join(texts)
    if "-" not in joined:
        return [t[1:] for t in texts]
    complements = joined.translate(_NINES).split("\n")
    return [
        t[1:] if t[0] == " " else _ZERO_KEY if t == _NEGATIVE_ZERO_TEXT else c + "~"
        for t, c in zip(texts, complements, strict=True)
    ]


def decimal_from_key(key: str) -> decimal.Decimal:
    """The number of a :func:`decimal_key` (plain decimal text, as older tables hold, too)."""
    if key.startswith("-") and key.endswith("~"):
        return decimal.Decimal("-" + key[1:-1].translate(_NINES))
    return decimal.Decimal(key)


def decimals_from_keys(keys: Sequence[Any]) -> list[Any]:
    """:func:`decimal_from_key` of each key of a column (``None`` kept); a negative key's
    nines' complement taken for the whole column in one ``str.translate``."""
    if count_type(keys, str) != len(keys):
        return [None if k is None else decimal_from_key(k) for k in keys]
    joined = "\n".join(keys)
    if "~" not in joined:
        return list(map(decimal.Decimal, keys))
    complements = joined.translate(_NINES).split("\n")
    if len(complements) != len(keys):  # a key holding a line break (not one of ours)
        return [decimal_from_key(k) for k in keys]
    number = decimal.Decimal  # ``c[:-1]`` is ``"-" + c[1:-1]``: translate keeps the minus
    return [
        number(c[:-1]) if k[0] == "-" and k[-1] == "~" else number(k)
        for k, c in zip(keys, complements, strict=True)
    ]


def instant(value: Any) -> dt.datetime:
    """A stored instant (ISO text, a naive UTC or an aware datetime) as an aware UTC one."""
    stamp: dt.datetime = dt.datetime.fromisoformat(value) if isinstance(value, str) else value
    if stamp.tzinfo is None:
        return stamp.replace(tzinfo=UTC)
    return stamp.astimezone(UTC)


def instants_of_text(values: Sequence[Any]) -> Sequence[Any]:
    """:func:`instant` of each stored instant of a column, ``None`` kept. The texts
    entityworks writes (UTC, ``+00:00``) parse to UTC datetimes at C speed; any other
    column (another offset, a naive text, not a text) goes value by value."""
    if has_none(values):
        return on_present(instants_of_text, values)
    if count_type(values, str) == len(values):
        try:
            stamps = list(map(dt.datetime.fromisoformat, values))
        except ValueError:
            stamps = None
        if stamps is not None and countOf(map(_TZINFO, stamps), UTC) == len(stamps):
            return stamps
    return list(map(instant, values))


def decimal_key_of(value: Any) -> str:
    """:func:`decimal_key` of a Decimal; ValueError for anything else."""
    if not isinstance(value, decimal.Decimal):
        raise ValueError(f"expected a Decimal, got {type(value).__name__}")
    return decimal_key(value)


def date_text(value: Any) -> str:
    """``YYYY-MM-DD``; ValueError for anything but a date (a datetime's text would be stored,
    then never read back as a date)."""
    if not isinstance(value, dt.date) or isinstance(value, dt.datetime):
        raise ValueError(f"expected a date, got {type(value).__name__}")
    return value.isoformat()


def time_text(value: dt.time) -> str:
    """``HH:MM:SS.ffffff``."""
    return value.isoformat(timespec="microseconds")


def naive_text(value: dt.datetime) -> str:
    """``YYYY-MM-DD HH:MM:SS.ffffff``."""
    return value.isoformat(sep=" ", timespec="microseconds")


def uuid_text(value: Any) -> str:
    """The canonical text of a UUID; ValueError for anything else (``str(0)`` would be
    stored, then never read back)."""
    if not isinstance(value, uuid.UUID):
        raise ValueError(f"expected a UUID, got {type(value).__name__}")
    return str(value)


def utc(value: Any) -> dt.datetime:
    """An aware datetime as the same instant in UTC."""
    return require_aware(value).astimezone(UTC)


def utc_text(value: Any) -> str:
    """An aware datetime as the ISO text of its instant in UTC, with microseconds."""
    return utc(value).isoformat(timespec="microseconds")


ColumnProcessor = Callable[[Sequence[Any]], Sequence[Any]]


def _each(fn: Callable[[Any], Any], values: Sequence[Any]) -> list[Any]:
    """``fn`` of each value of a column, ``None`` kept."""
    return columns_each(fn, values)  # one C loop


@dataclass(frozen=True)
class TextForm:
    """How a storage type (by its name, :mod:`entityworks.types.storage`) is kept on a
    backend that keeps it as text: ``bind`` turns a non-None value into what the driver gets,
    ``read`` a non-None stored value into the value, ``read_column`` a whole column of them
    (``None`` kept); ``None``: as it is. :mod:`.sqltypes` binds and reads with these."""

    bind: Callable[[Any], Any] | None = None
    read: Callable[[Any], Any] | None = None
    read_column: ColumnProcessor | None = None


#: The text forms of the storage types that have one; the others (integers, floats, text,
#: JSON text, bytes, booleans as integers) go to and come from the driver as they are.
TEXT_FORMS: dict[str, TextForm] = {
    "date": TextForm(date_text, dt.date.fromisoformat, partial(_each, dt.date.fromisoformat)),
    "time": TextForm(time_text, dt.time.fromisoformat, partial(_each, dt.time.fromisoformat)),
    "uuid_type": TextForm(uuid_text, uuid.UUID, partial(_each, uuid.UUID)),
    "NaiveDateTime": TextForm(
        naive_text, dt.datetime.fromisoformat, partial(_each, dt.datetime.fromisoformat)
    ),
    "ExactDecimal": TextForm(decimal_key_of, decimal_from_key, decimals_from_keys),
    "AwareDateTime": TextForm(utc_text, instant, instants_of_text),
}


__all__ = [
    "TEXT_FORMS",
    "TextForm",
    "date_text",
    "decimal_from_key",
    "decimal_key",
    "decimal_key_of",
    "decimal_keys",
    "decimals_from_keys",
    "instant",
    "instants_of_text",
    "naive_text",
    "time_text",
    "utc",
    "utc_text",
    "uuid_text",
]

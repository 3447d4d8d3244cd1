"""Value rules a column at a time: the fast test that a whole list of values passes a type's
``check`` unchanged.

Each test looks at every value at C speed (``countOf(map(type, values), int)``, ``min`` /
``max``, one bound method mapped over the list) and does the costly part of a rule only
where the type has one: a Decimal's exponent and digits, a datetime's tzinfo, a str's
encodability. A test answers True only when ``check(v)`` would return ``v`` itself for every
value; False means "not known": writers then apply ``check`` value by value, which converts
what the rule converts and names the row of what it refuses. The tests are what
``TypeInfo.check_column`` holds for the built-in entries (:mod:`.scalars`).
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import filterfalse, repeat
from operator import attrgetter, countOf
from typing import Any

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
#: The registry's Decimal limits (DECIMAL(65, 30)); :mod:`.scalars` holds the same numbers.
_INTEGER_DIGITS, _FRACTION_DIGITS = 35, 30

_Decimal = decimal.Decimal
_tzinfo = attrgetter("tzinfo")
_NoneType = type(None)


def all_of_type(values: Sequence[Any], cls: type) -> bool:
    """True when every value is exactly of ``cls`` (no subclass)."""
    return countOf(map(type, values), cls) == len(values)


def exact_type(cls: type) -> Callable[[Sequence[Any]], bool]:
    """The column test of a type whose rule passes every value of exactly that type."""
    def test(values: Sequence[Any]) -> bool:
        return countOf(map(type, values), cls) == len(values)
    return test


def ints(values: Sequence[Any]) -> bool:
    """Exact ints within the signed 64-bit range (``check_int``)."""
    return (countOf(map(type, values), int) == len(values)
            and (not values or INT64_MIN <= min(values) and max(values) <= INT64_MAX))


def strs(values: Sequence[Any]) -> bool:
    """Exact strs that UTF-8 can encode (``check_str``: no lone surrogate)."""
    if countOf(map(type, values), str) != len(values):
        return False
    if all(map(str.isascii, values)):
        return True
    try:
        "".join(values).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def naive_datetimes(values: Sequence[Any]) -> bool:
    """Exact datetimes without a tzinfo (``check_datetime``)."""
    return (countOf(map(type, values), dt.datetime) == len(values)
            and countOf(map(type, map(_tzinfo, values)), _NoneType) == len(values))


@dataclass(frozen=True, slots=True)
class DecimalFacts:
    """What a Decimal column's values have in common, once they passed ``check_decimal``."""

    #: The most digits before the point of any value (``len(digits) + exponent``).
    integer: int
    #: The most digits after the point of any value.
    scale: int
    #: The exponent every value has, or ``None`` when they differ.
    exponent: int | None


def decimal_facts(values: Sequence[Any], exact: bool = False) -> DecimalFacts | None:
    """The facts of a column of exact Decimals that all pass ``check_decimal`` unchanged
    (finite, exponent <= 0, no -0, at most 35 digits before the point and 30 after);
    ``None`` otherwise (or for an empty column). ``exact``: the caller found every value
    to be exactly a Decimal already.

    One exponent for the whole column (``same_quantum`` against the first value) is the
    common case and costs a C call per value; differing exponents cost ``as_tuple``.
    """
    if not values or not exact and countOf(map(type, values), _Decimal) != len(values):
        return None
    first = values[0]
    exponent = first.as_tuple().exponent
    if not isinstance(exponent, int):
        return None  # NaN / infinity
    if countOf(map(first.same_quantum, values), True) == len(values):
        low = high = exponent
        uniform: int | None = exponent
    else:
        exponents = [d.as_tuple().exponent for d in values]
        try:
            low, high = min(exponents), max(exponents)
        except TypeError:  # a NaN's 'n' or an infinity's 'F' among the ints
            return None
        uniform = None
    if high > 0 or -low > _FRACTION_DIGITS:
        return None
    integer = max(map(_Decimal.adjusted, values)) + 1  # == len(digits) + exponent
    if integer > _INTEGER_DIGITS:
        return None
    if any(map(_Decimal.is_signed, filterfalse(None, values))):
        return None  # a negative zero
    return DecimalFacts(integer, -low, uniform)


def decimals(values: Sequence[Any]) -> bool:
    """Exact Decimals that pass ``check_decimal`` unchanged."""
    return not values or decimal_facts(values) is not None


def decimal_scales(values: Sequence[Any]) -> list[int]:
    """Each checked Decimal's digits after the point (``-exponent``), a column at a time."""
    if not values:
        return []
    first = values[0]
    if countOf(map(first.same_quantum, values), True) == len(values):
        return [-first.as_tuple().exponent] * len(values)
    return [-d.as_tuple().exponent for d in values]


# -- lexical forms a column at a time (``TypeInfo.to_text_column``) -------------------------
# Each takes a list of values that passed the type's column test and gives ``to_text`` of
# every one, the same strings, with the per-value work at C speed.

_BOOL_TEXT = {True: "true", False: "false"}
_FLOAT_SPECIAL = {"nan": "NaN", "inf": "INF", "-inf": "-INF"}


def int_texts(values: Sequence[Any]) -> list[str]:
    return list(map(int.__repr__, values))


def float_texts(values: Sequence[Any]) -> list[str]:
    texts = list(map(float.__repr__, values))
    if "nan" in texts or "inf" in texts or "-inf" in texts:  # XSD's spellings
        get = _FLOAT_SPECIAL.get
        texts = [get(t, t) for t in texts]
    return texts


def bool_texts(values: Sequence[Any]) -> list[str]:
    return list(map(_BOOL_TEXT.__getitem__, values))


def str_texts(values: Sequence[Any]) -> list[str]:
    return list(values)


def datetime_texts(values: Sequence[Any]) -> list[str]:
    return list(map(dt.datetime.isoformat, values))


def decimal_texts(values: Sequence[Any]) -> list[str]:
    return list(map(format, values, repeat("f")))


__all__ = [
    "bool_texts",
    "datetime_texts",
    "decimal_texts",
    "float_texts",
    "int_texts",
    "str_texts",
    "DecimalFacts",
    "all_of_type",
    "decimal_facts",
    "decimal_scales",
    "decimals",
    "exact_type",
    "ints",
    "naive_datetimes",
    "strs",
]

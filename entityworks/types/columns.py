"""The built-in value rules a whole column at a time.

A bulk writer holds its values column by column (``zip(*rows)``). For the common case, a
column whose values all already are what their type's rule (``check_*`` in
:mod:`.scalars`) would return, these functions say so with a few passes at C speed
(``countOf(map(type, column), int)``, ``min``/``max``, one ``str.join``) instead of one
Python call per value; the costly parts of a rule (a Decimal's exponent and digits, a
datetime's offset) are tested only for the types that have them.

Each ``*_column(values)`` returns True when every non-``None`` value of ``values`` passes
its rule *unchanged* (``check(v) is v``). False means nothing more than "not certain": the
caller then applies the rule value by value, which converts what typing allows (an ``int``
in a ``float`` field) or names the refused value, exactly as before. So these functions
never decide that a value is refused, and never change one: exact-or-refused stays with
the value rules. They are registered as ``TypeInfo.check_column``.

The companions' column forms (``Companion.split_column``) and the SQLite Decimal key of
a whole column are here too, with the same contract: equal, value for value, to the
per-value functions applied to checked values.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
from collections.abc import Callable, Sequence
from itertools import filterfalse
from operator import attrgetter, countOf, eq, ne
from typing import Any

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
_NONE = type(None)
_ZERO = decimal.Decimal(0)  # compared with Decimals, faster than the int 0
_TZINFO = attrgetter("tzinfo")
_ADJUSTED = decimal.Decimal.adjusted
_SIGNED = decimal.Decimal.is_signed
#: The registry's Decimal limits (DECIMAL(65, 30)); :mod:`.scalars` holds the same numbers.
_INTEGER_DIGITS, _FRACTION_DIGITS = 35, 30
#: Deletes the characters of plain decimal text (no exponent, finite): a text of at most 30
#: characters that this leaves empty is a Decimal the rule passes, unless it is -0.
NOT_PLAIN = str.maketrans("", "", "0123456789.-")


def has_none(values: Sequence[Any]) -> bool:
    """True when ``values`` holds ``None`` (by type: ``None in values`` would compare each
    value with None, which costs a Decimal a microsecond)."""
    return countOf(map(type, values), _NONE) > 0


def _present(values: Sequence[Any], kind: type) -> tuple[bool, list[Any] | Sequence[Any]]:
    """(all non-None values are exactly ``kind``, the non-None values)."""
    found = countOf(map(type, values), kind)
    if found == len(values):
        return True, values
    if found + countOf(map(type, values), _NONE) != len(values):
        return False, values
    return True, [v for v in values if v is not None]


def int_column(values: Sequence[Any]) -> bool:
    """Exactly ``int`` and within the signed 64-bit range (``check_int``)."""
    exact, present = _present(values, int)
    return exact and (not present or (INT64_MIN <= min(present) and max(present) <= INT64_MAX))


def float_column(values: Sequence[Any]) -> bool:
    """Exactly ``float`` (``check_float``: NaN, infinities and -0.0 pass as they are)."""
    return _present(values, float)[0]


def bool_column(values: Sequence[Any]) -> bool:
    """Exactly ``bool`` (``check_bool``)."""
    return _present(values, bool)[0]


def str_column(values: Sequence[Any]) -> bool:
    """Exactly ``str`` and encodable as UTF-8, no lone surrogate (``check_str``)."""
    exact, present = _present(values, str)
    if not exact:
        return False
    text = "".join(present)
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def naive_datetime_column(values: Sequence[Any]) -> bool:
    """Exactly ``datetime`` without a tzinfo (``check_datetime``)."""
    exact, present = _present(values, dt.datetime)
    return exact and countOf(map(_TZINFO, present), None) == len(present)


def decimal_column(values: Sequence[Any]) -> bool:
    """Exactly ``Decimal``, finite, no positive exponent, not -0, at most 35 digits before
    the point and 30 after (``check_decimal``).

    A column of one exponent (the usual money column: ``same_quantum`` with the first value,
    a C call per value) needs only that exponent's range, the most digits before the point
    (``adjusted``) and the sign of its zeros. Otherwise: a Decimal's ``str`` is plain decimal
    text (digits, a point, a minus) exactly when it is finite with an exponent of at most 0
    and no more than six zeros after the point before its first digit; its length then bounds
    both digit counts. Anything else (``1E-7``, which the rule accepts, included) is left to
    the rule.
    """
    exact, present = _present(values, decimal.Decimal)
    if not exact:
        return False
    if not present:
        return True
    first = present[0]
    if all(map(first.same_quantum, present)):  # stops at the first other exponent
        exponent = first.as_tuple().exponent
        return (isinstance(exponent, int) and -_FRACTION_DIGITS <= exponent <= 0
                and max(map(_ADJUSTED, present)) < _INTEGER_DIGITS
                and not any(map(_SIGNED, filterfalse(None, present))))  # no -0
    texts = list(map(str, present))
    if "".join(texts).translate(NOT_PLAIN) or max(map(len, texts)) > 30:
        return False
    if countOf(present, _ZERO):  # a zero: is one negative? (-0 and -0.00 are refused)
        return not any(t[0] == "-" for v, t in zip(present, texts, strict=True) if not v)
    return True


def negative_zero_column(values: Sequence[Any]) -> list[Any]:
    """``_negative_zero`` of each checked float (``None`` for None): 1 for -0.0."""
    if not countOf(values, 0.0):  # None == 0.0 is False, as 0.0 == None
        return [None] * len(values)
    return [1 if v is not None and v == 0.0 and math.copysign(1.0, v) < 0 else None
            for v in values]


def has_nan(values: Sequence[Any]) -> bool:
    """True when a value of ``values`` (floats or None) is NaN."""
    return any(map(ne, values, values))


def scale_column(values: Sequence[Any]) -> list[Any]:
    """``-exponent`` of each checked Decimal (``None`` for None): its digits after the point.
    A column of one exponent (the usual money column) is found with one ``same_quantum``
    pass instead of an ``as_tuple`` per value."""
    if values and not has_none(values):
        first = values[0]
        if countOf(map(first.same_quantum, values), True) == len(values):
            return [-first.as_tuple().exponent] * len(values)
    return [None if v is None else -v.as_tuple().exponent for v in values]


def decimal_text_column(values: Sequence[Any]) -> list[Any]:
    """``format(v, "f")`` of each Decimal (``None`` for None): ``sqltypes.decimal_text``.
    A Decimal's ``str`` is the same text when it has no exponent (twice as fast)."""
    if not has_none(values):
        texts = list(map(str, values))
        if "E" not in "".join(texts):
            return texts
    return [None if v is None else format(v, "f") for v in values]


def _plain_texts(texts: Sequence[Any]) -> bool:
    """True when every text is a plain decimal of at most 30 characters (digits, point,
    minus: no exponent, finite), so its Decimal passes the rule unless it is -0."""
    return (countOf(map(type, texts), str) == len(texts) and not "".join(texts).translate(
        NOT_PLAIN) and max(map(len, texts), default=0) <= 30)


def decimals_as_written(values: Sequence[Any], texts: Sequence[Any],
                        one: Callable[[Any, Any], Any]) -> list[Any]:
    """``one(value, text)`` (``_decimal_as_written``: the Decimal read from SQLite's key,
    with the exponent of the plain text beside it when that is the same number) for whole
    columns. The common case, every text plain and equal to its key's number, costs one
    ``Decimal(text)`` and one comparison per value; any other goes value by value."""
    if not has_none(values) and _plain_texts(texts):
        try:
            written = list(map(decimal.Decimal, texts))
        except (ArithmeticError, ValueError):
            written = None
        if (written is not None and countOf(map(eq, written, values), True) == len(values)
                and not (countOf(written, _ZERO) and any(
                    t[0] == "-" for w, t in zip(written, texts, strict=True) if not w))):
            return written
    return [v if v is None else one(v, t) for v, t in zip(values, texts, strict=True)]


__all__ = ["INT64_MAX", "INT64_MIN", "bool_column", "decimal_column", "decimal_text_column",
           "decimals_as_written", "has_none",
           "float_column", "has_nan", "int_column", "naive_datetime_column",
           "negative_zero_column", "scale_column", "str_column"]

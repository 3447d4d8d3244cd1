"""Values kept as text where a backend has no type for them (SQLite: ``Backend.text_values``),
read back: the sortable decimal key, ISO 8601 text, UTC instants. Plain functions, which
:mod:`.sqltypes` binds and reads with, and :mod:`.filequery` reads with without SQLAlchemy.
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Sequence
from operator import countOf
from typing import Any

from ..types.columns import has_none

UTC = dt.UTC

_ZERO = decimal.Decimal(0)
_KEY_DIGITS = 35  # digits before the point in a key: DECIMAL(65, 30)'s 35
_NINES = str.maketrans("0123456789", "9876543210")


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
    whole column in one ``str.translate``. Zeros go through :func:`decimal_key`."""
    if has_none(values) or countOf(values, _ZERO):
        return [None if v is None else decimal_key(v) for v in values]
    texts = [format(v, " 067.30f").rstrip("0").rstrip(".") for v in values]
    joined = "\n".join(texts)
    if "-" not in joined:
        return [t[1:] for t in texts]
    complements = joined.translate(_NINES).split("\n")
    return [t[1:] if t[0] == " " else c + "~" for t, c in zip(texts, complements, strict=True)]


def decimal_from_key(key: str) -> decimal.Decimal:
    """The number of a :func:`decimal_key` (plain decimal text, as older tables hold, too)."""
    if key.startswith("-") and key.endswith("~"):
        return decimal.Decimal("-" + key[1:-1].translate(_NINES))
    return decimal.Decimal(key)


def decimals_from_keys(keys: Sequence[Any]) -> list[Any]:
    """:func:`decimal_from_key` of each key of a column (``None`` kept); a negative key's
    nines' complement taken for the whole column in one ``str.translate``."""
    if countOf(map(type, keys), str) != len(keys):
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


__all__ = ["decimal_from_key", "decimal_key", "decimal_keys", "decimals_from_keys", "instant"]

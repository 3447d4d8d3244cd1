"""Value rules the registry's entries and the SQL storage types share: a datetime's or a
time's zone, a Decimal's exponent and its plain text. Plain Python, so that the registry
needs no SQLAlchemy (see :mod:`.storage`); :mod:`entityworks.sql.sqltypes` applies them too.
"""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any


def require_naive(value: Any) -> dt.datetime:
    if not isinstance(value, dt.datetime):
        raise ValueError(f"expected a datetime, got {type(value).__name__}")
    if value.tzinfo is not None:
        raise ValueError(
            "timezone-aware datetime in a naive datetime column; annotate the field as "
            "entityworks.AwareDatetime to store aware values"
        )
    return value


def require_aware(value: Any) -> dt.datetime:
    if not isinstance(value, dt.datetime):
        raise ValueError(f"expected a datetime, got {type(value).__name__}")
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError("naive datetime in an AwareDatetime column; attach a tzinfo")
    return value


def require_naive_time(value: Any) -> dt.time:
    if not isinstance(value, dt.time):
        raise ValueError(f"expected a time, got {type(value).__name__}")
    if value.tzinfo is not None:
        raise ValueError("times with a tzinfo are not stored; use a naive time")
    return value


def decimal_text(value: decimal.Decimal) -> str:
    """Plain decimal text with the exponent kept (``1.50``, ``-0.0000001``; never ``1E-7``),
    the form ``sqlite3``, Datasette, pandas and SQL's ``sum()`` read as the number."""
    return format(value, "f")


def with_scale(value: decimal.Decimal, scale: Any) -> decimal.Decimal:
    """``value`` written with ``scale`` digits after the point (``None``: as it is).

    Padding adds zeros; trimming removes only zeros a column added, never a digit.
    """
    if scale is None:
        return value
    sign, digits, exponent = value.as_tuple()
    target = -int(scale)
    if not isinstance(exponent, int) or exponent == target:
        return value
    if exponent > target:
        return decimal.Decimal((sign, digits + (0,) * (exponent - target), target))
    cut = target - exponent
    if any(digits[-cut:]):
        raise ValueError(f"{value} has more than {scale} digits after the point")
    return decimal.Decimal((sign, digits[:-cut] or (0,), target))


__all__ = ["decimal_text", "require_aware", "require_naive", "require_naive_time", "with_scale"]

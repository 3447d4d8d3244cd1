"""How a value is encoded by its registry entry (:func:`rule`, the rule and codec in one
function), and the error every writer raises for a value it cannot encode, naming its row
and column.

One helper each, so that the Store, the rows encoded in worker processes, the Arrow frames,
XML and the SQL scripts apply and word them alike.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import ValueEncodingError
from .registry import TypeInfo

#: A function applied to each value, or ``None``: nothing to do.
Processor = Callable[[Any], Any] | None


def compose(first: Processor, second: Processor) -> Processor:
    """``second`` after ``first`` (either may be ``None``)."""
    if first is None:
        return second
    if second is None:
        return first
    return lambda v: second(first(v))


def skip_none(fn: Processor) -> Processor:
    """``fn`` with ``None`` passed through untouched."""
    if fn is None:
        return None
    return lambda v: None if v is None else fn(v)


def rule(info: TypeInfo) -> Processor:
    """The registry's rule and codec of ``info`` in one function (``None``: nothing to do)."""
    to_db = info.sql_codec.encode
    if to_db is None:
        return info.check
    if info.check is None or info.checked_codecs:
        return to_db
    return compose(info.check, to_db)


def encode_error(
    column: str, value: Any, exc: Exception, row: int | None = None
) -> ValueEncodingError:
    """A ValueEncodingError for ``value`` of ``column`` (in ``row``, when known): why ``exc``."""
    where = f"row {row}, " if row is not None else ""
    return ValueEncodingError(
        f"{where}column {column!r}: cannot encode {_short_repr(value)}: {exc}",
        column=column,
        row=row,
        value=value,
    )


def _short_repr(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."

"""The error every writer raises for a value it cannot encode, naming its row and column.

One helper, so that the Store, the Arrow frames, XML and the SQL scripts word it alike.
"""

from __future__ import annotations

from typing import Any

from ..errors import ValueEncodingError


def encode_error(column: str, value: Any, exc: Exception, row: int | None = None
                 ) -> ValueEncodingError:
    """A ValueEncodingError for ``value`` of ``column`` (in ``row``, when known): why ``exc``."""
    where = f"row {row}, " if row is not None else ""
    return ValueEncodingError(
        f"{where}column {column!r}: cannot encode {_short_repr(value)}: {exc}",
        column=column, row=row, value=value)


def _short_repr(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


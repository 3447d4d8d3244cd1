"""What entityworks needs from psycopg that psycopg has no public API for (see
:mod:`entityworks.compat`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__: list[str] = ["binary_row_formatter"]


def binary_row_formatter(copy: Any) -> tuple[Callable[[Any, Any, bytearray], None], Any] | None:
    """psycopg's own row formatter of a binary COPY (the C function its ``write_row``
    calls) and the COPY's transformer, or ``None`` where this psycopg lays them out
    otherwise (psycopg 3.1 has no such formatter): the caller then uses ``write_row``."""
    try:
        from psycopg import _copy_base

        fmt = _copy_base.format_row_binary
        tx = copy.formatter.transformer
    except (ImportError, AttributeError):
        return None
    return fmt, tx

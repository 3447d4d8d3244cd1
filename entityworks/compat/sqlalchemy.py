"""What entityworks needs from sqlalchemy that sqlalchemy has no public API for (see
:mod:`entityworks.compat`)."""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from typing import Any, TypeVar

T = TypeVar("T")

__all__: list[str] = ["awaited", "dialect_twin"]


def awaited(awaitable: Awaitable[T]) -> T:
    """The result of ``awaitable``, awaited on the event loop from the sync code that
    SQLAlchemy's greenlet bridge runs (``AsyncConnection.run_sync``), as SQLAlchemy's own
    adapted asyncio drivers do: its ``await_`` (``await_only`` before 2.1), which it
    documents no public name for."""
    from sqlalchemy import util

    bridge = getattr(util, "await_", None) or util.await_only
    result: T = bridge(awaitable)
    return result


def dialect_twin(dialect: Any, paramstyle: str, attributes: Sequence[str]) -> Any:
    """A new dialect of ``dialect``'s class compiling with ``paramstyle`` placeholders,
    given the ``attributes`` the original learnt on connecting (its server's version...)
    and, where the dialect has it, the private ``_backslash_escapes`` (whether the server
    reads a backslash in a literal as an escape), which SQLAlchemy offers no public way
    to read or pass."""
    twin = type(dialect)(paramstyle=paramstyle)
    for attribute in (*attributes, "_backslash_escapes"):
        if hasattr(dialect, attribute):
            setattr(twin, attribute, getattr(dialect, attribute))
    return twin

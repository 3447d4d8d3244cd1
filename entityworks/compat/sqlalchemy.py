"""What entityworks needs from sqlalchemy that sqlalchemy has no public API for (see
:mod:`entityworks.compat`)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

T = TypeVar("T")

__all__: list[str] = ["awaited", "bridged_call", "cancelled_since_call", "dialect_twin", "turn"]

#: The calling task's cancel requests (``Task.cancelling()``) when its current bridged
#: call began (``None`` outside one); the greenlet that runs the call shares the task's
#: context, so the sync code sees it.
_CANCELLING: ContextVar[int | None] = ContextVar("entityworks_cancelling", default=None)


def awaited(awaitable: Awaitable[T]) -> T:
    """The result of ``awaitable``, awaited on the event loop from the sync code that
    SQLAlchemy's greenlet bridge runs (``AsyncConnection.run_sync``), as SQLAlchemy's own
    adapted asyncio drivers do: its ``await_`` (``await_only`` before 2.1), which it
    documents no public name for."""
    from sqlalchemy import util

    bridge = getattr(util, "await_", None) or util.await_only
    result: T = bridge(awaitable)
    return result


@contextmanager
def bridged_call() -> Iterator[None]:
    """Mark the calling task's cancel requests as the start of a bridged call (see
    :func:`cancelled_since_call`)."""
    task = asyncio.current_task()
    token = _CANCELLING.set(None if task is None else task.cancelling())
    try:
        yield
    finally:
        _CANCELLING.reset(token)


def cancelled_since_call() -> bool:
    """True if the task running the current bridged call was cancelled since the call
    began, whether or not a CancelledError reached the call: a driver may lose it (on
    Python 3.11, ``asyncio.wait_for``, which psycopg before 3.3.6 waits with, returns a
    result that arrives as the task is cancelled, and the CancelledError is gone)."""
    before = _CANCELLING.get()
    if before is None:
        return False
    task = asyncio.current_task()
    return task is not None and task.cancelling() > before


def turn() -> None:
    """Give the event loop a turn from a bridged call's sync code (other tasks run); raise
    CancelledError if the task was cancelled since the call began."""
    awaited(asyncio.sleep(0))
    if cancelled_since_call():
        raise asyncio.CancelledError()


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

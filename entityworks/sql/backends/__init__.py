"""Every backend difference of :mod:`entityworks.sql`, one module per backend.

``for_name(name)`` gives the :class:`~entityworks.sql.backends.base.Dialect` of SQLAlchemy's
dialect name (``mysql`` and ``mariadb`` share one); a name without a module of its own gets
the defaults. The backend modules (and SQLAlchemy) are imported on first use, so that
importing this package, or its standard-library module :mod:`.light` (what the command line
says before it loads a backend), stays light.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .light import FILE_BACKEND

if TYPE_CHECKING:
    from .base import Backend

#: SQLAlchemy's dialect name -> its Backend, filled on first use (see :func:`_loaded`).
_BACKENDS: dict[str, Backend] = {}
_LOADING = threading.Lock()


def _loaded() -> dict[str, Backend]:
    """:data:`_BACKENDS`, its modules imported the first time (once, whatever the threads)."""
    if not _BACKENDS:
        with _LOADING:
            if not _BACKENDS:
                from .mariadb import MariaDB
                from .mssql import MSSQL
                from .postgresql import PostgreSQL
                from .sqlite import SQLite

                _BACKENDS.update(
                    {
                        "sqlite": SQLite(),
                        "postgresql": PostgreSQL(),
                        "mysql": MariaDB("mysql"),  # named as SQLAlchemy names its dialect
                        "mariadb": MariaDB(),
                        "mssql": MSSQL(),
                    }
                )
    return _BACKENDS


def __getattr__(name: str) -> Any:
    """``Backend``, imported when first asked for (see the module)."""
    if name == "Backend":
        from .base import Backend

        return Backend
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def names_where(test: Callable[[Backend], bool]) -> tuple[str, ...]:
    """The dialect names whose Backend passes ``test`` (for ``with_variant`` and the like)."""
    return tuple(name for name, dialect in _loaded().items() if test(dialect))


def for_name(name: str) -> Backend:
    """The Backend of SQLAlchemy's dialect ``name``."""
    found = _loaded().get(name)
    if found is not None:
        return found
    from .base import Backend

    return Backend(name)


# -- command line (cli, web, catalog upgrade) -------------------------------------------------
def file_backend() -> Backend:
    """The Backend of a plain path (no ``scheme://``): a database file."""
    return for_name(FILE_BACKEND)


def for_written_name(name: str) -> Backend | None:
    """The Backend of a dialect name as a URL writes it: SQLAlchemy's, or another tool's
    alias (``postgres``); None for a name without a module of its own."""
    for known, backend in _loaded().items():
        if name == known or name in backend.url_aliases:
            return backend
    return None


def url_examples() -> list[str]:
    """An example URL of each backend that has one, each once (``--db``'s refusals)."""
    examples = (backend.url_example for backend in _loaded().values())
    return list(dict.fromkeys(e for e in examples if e))


def driver_errors() -> tuple[type[BaseException], ...]:
    """The drivers' own errors that may reach a caller unwrapped; none before a backend is
    used (so that asking loads nothing)."""
    return tuple(e for backend in _BACKENDS.values() for e in backend.driver_errors())


def driver_message(error: BaseException) -> str:
    """A driver's ``error`` as a sentence (see :meth:`Backend.driver_message`)."""
    for backend in _loaded().values():
        text = backend.driver_message(error)
        if text is not None:
            return text
    return str(error)


__all__ = [
    "Backend",
    "driver_errors",
    "driver_message",
    "file_backend",
    "for_name",
    "for_written_name",
    "names_where",
    "url_examples",
]

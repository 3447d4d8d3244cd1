"""Every backend difference of :mod:`entityworks.sql`, one module per backend.

``for_name(name)`` gives the :class:`~entityworks.sql.backends.base.Dialect` of SQLAlchemy's
dialect name (``mysql`` and ``mariadb`` share one); a name without a module of its own gets
the defaults.
"""

from __future__ import annotations

from collections.abc import Callable

from .base import Backend
from .mariadb import MariaDB
from .mssql import MSSQL
from .postgresql import PostgreSQL
from .sqlite import SQLite

_BACKENDS: dict[str, Backend] = {
    "sqlite": SQLite(),
    "postgresql": PostgreSQL(),
    "mysql": MariaDB(),
    "mariadb": MariaDB(),
    "mssql": MSSQL(),
}


def names_where(test: Callable[[Backend], bool]) -> tuple[str, ...]:
    """The dialect names whose Backend passes ``test`` (for ``with_variant`` and the like)."""
    return tuple(name for name, dialect in _BACKENDS.items() if test(dialect))


def for_name(name: str) -> Backend:
    """The Backend of SQLAlchemy's dialect ``name``."""
    found = _BACKENDS.get(name)
    return found if found is not None else Backend(name)


__all__ = ["Backend", "for_name", "names_where"]

"""Every backend difference of :mod:`entityworks.sql`, one module per backend.

``for_name(name)`` gives the :class:`~entityworks.sql.dialects.base.Dialect` of SQLAlchemy's
dialect name (``mysql`` and ``mariadb`` share one); a name without a module of its own gets
the defaults.
"""

from __future__ import annotations

from collections.abc import Callable

from .base import Dialect
from .mariadb import MariaDB
from .mssql import MSSQL
from .postgresql import PostgreSQL
from .sqlite import SQLite

_DIALECTS: dict[str, Dialect] = {
    "sqlite": SQLite(),
    "postgresql": PostgreSQL(),
    "mysql": MariaDB(),
    "mariadb": MariaDB(),
    "mssql": MSSQL(),
}


def names_where(test: Callable[[Dialect], bool]) -> tuple[str, ...]:
    """The dialect names whose Dialect passes ``test`` (for ``with_variant`` and the like)."""
    return tuple(name for name, dialect in _DIALECTS.items() if test(dialect))


def for_name(name: str) -> Dialect:
    """The Dialect of SQLAlchemy's dialect ``name``."""
    found = _DIALECTS.get(name)
    return found if found is not None else Dialect(name)


__all__ = ["Dialect", "for_name", "names_where"]

"""What the command line knows of the backends before it loads one: how messages and help name
them, which backend a plain file path opens, the tables a database keeps for itself, and a
database file read without SQLAlchemy (shell completion, ``browse``'s check).

Standard library only: :mod:`entityworks.sql.backends` imports its backend modules (and
SQLAlchemy) on first use, so ``entityworks --help`` and ``entityworks query`` load no more
than they need. Each Backend's :attr:`~.base.Backend.title` comes from :data:`TITLES`.
"""

from __future__ import annotations

import os
from contextlib import closing
from pathlib import Path

#: SQLAlchemy's dialect names of the backends that have a module here, and how messages
#: name each (``mysql`` and ``mariadb`` are one backend).
TITLES: dict[str, str] = {
    "sqlite": "SQLite",
    "postgresql": "PostgreSQL",
    "mysql": "MariaDB",
    "mariadb": "MariaDB",
    "mssql": "SQL Server",
}
#: The dialect of a plain path (no ``scheme://``): a database file.
FILE_BACKEND = "sqlite"
#: How help and messages name a database file ("an SQLite file path").
FILE_TITLE = TITLES[FILE_BACKEND]
#: Prefixes of the tables the file database keeps for itself (``sqlite_sequence``,
#: ``sqlite_stat1``...): nothing writes into them.
INTERNAL_PREFIXES = ("sqlite_",)
#: The first bytes of every database file.
FILE_HEADER = b"SQLite format 3\x00"


def is_database_file(path: str | os.PathLike[str]) -> bool:
    """True when the file at ``path`` starts as a database file does (it is only read)."""
    with open(path, "rb") as fh:
        return fh.read(len(FILE_HEADER)) == FILE_HEADER


def quote(name: str) -> str:
    """A database file's identifier in double quotes, a double quote inside doubled: SQLite's
    rule, under which any text is a name (for the text of a column's CHECK, and
    :mod:`entityworks.sql.backends.sqlitefile`'s statements, whose names are checked against the
    table's columns first)."""
    return '"' + name.replace('"', '""') + '"'


def file_table_names(path: Path, timeout: float) -> list[str]:
    """The tables of the database file at ``path``, opened read-only (never created or
    changed), waiting up to ``timeout`` seconds for a writer's lock."""
    import sqlite3

    uri = f"{path.resolve().as_uri()}?mode=ro"
    with closing(sqlite3.connect(uri, uri=True, timeout=timeout)) as conn:
        rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    return [str(r[0]) for r in rows]


__all__ = [
    "FILE_BACKEND",
    "FILE_HEADER",
    "FILE_TITLE",
    "INTERNAL_PREFIXES",
    "TITLES",
    "file_table_names",
    "is_database_file",
    "quote",
]

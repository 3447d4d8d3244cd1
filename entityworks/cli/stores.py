"""Opening what ``--db`` names, for the commands: a Store (an SQLite file must be a file, and
may have to exist already), the catalog, the dataclass of a table by name, and the refusal
to write into internal tables.

Separate from :mod:`.options`, which only checks the text of ``--db``: this module is where
a command first touches a database (SQLAlchemy is imported here, inside the functions).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import EntityworksError, UnknownTableError
from ..sql.urls import display_db

if TYPE_CHECKING:
    from ..sql.store import Store

#: Tables the command line never writes into: the catalog's revision table, Alembic's default
#: one and SQLite's own (``sqlite_sequence``, ``sqlite_stat1``...).
INTERNAL_TABLES = ("entityworks_version", "alembic_version", "entityworks_schema")
INTERNAL_PREFIXES = ("sqlite_",)


def sqlite_path(db: str) -> Path | None:
    """The file of an SQLite ``--db`` (None for a server or an in-memory database)."""
    if "://" not in db:
        return Path(db) if db not in ("", ":memory:") else None
    if not db.startswith("sqlite"):
        return None
    from sqlalchemy import make_url

    database = make_url(db).database
    return Path(database) if database not in (None, "", ":memory:") else None


def open_store(db: str, *, must_exist: bool = False) -> Store:
    """A Store for ``--db``; with ``must_exist`` a missing SQLite file is an error."""
    path = sqlite_path(db)
    if must_exist and path is not None and not path.exists():
        raise EntityworksError(f"no database at {path}")
    if path is not None and path.exists() and not path.is_file():
        raise EntityworksError(f"{path} is not a database file")
    from ..sql.store import Store

    return Store(db)


def open_catalog(db: str) -> Store:
    """The catalog at ``--db`` (created or upgraded): call it only once the input is known to
    be good, so that a refused command leaves no new database behind."""
    from .. import catalog

    return catalog.open_catalog(open_store(db))


def check_writable_table(name: str) -> None:
    """Refuse writing into an internal table (schema revisions, SQLite's own tables)."""
    if name.lower() in INTERNAL_TABLES or name.lower().startswith(INTERNAL_PREFIXES):
        raise EntityworksError(f"{name!r} is an internal table; entityworks does not write "
                               f"into it (internal: {', '.join(INTERNAL_TABLES)}, sqlite_*)")


def resolve_table(store: Store, name: str) -> type:
    """The dataclass for table ``name``: the catalog's own class, or one reflected from the
    live table."""
    from .. import catalog

    tables = store.table_names()
    known = catalog.table_class(name)
    if known is not None:
        if name not in tables:
            raise UnknownTableError(f"no table {name!r} in {display_db(store)}; "
                                    f"run 'entityworks migrate' or generate something first")
        return known
    if name not in tables:
        names = ", ".join(sorted(tables)) or "none"
        raise UnknownTableError(f"no table {name!r}; tables are: {names}")
    return store.reflect(name)

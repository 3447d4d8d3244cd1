"""Opening what ``--db`` names, for the commands: a Store (an SQLite file must be a file, and
may have to exist already), the catalog, the dataclass of a table by name, and the refusal
to write into internal tables.

Separate from :mod:`.options`, which only checks the text of ``--db``: this module is where
a command first touches a database (SQLAlchemy is imported here, inside the functions).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import EntityworksError, UnknownTableError
from ..sql.backends.light import INTERNAL_PREFIXES as INTERNAL_PREFIXES
from ..sql.backends.light import file_table_names
from ..sql.urls import display_db

if TYPE_CHECKING:
    import click
    from click.shell_completion import CompletionItem

    from ..sql.backends.sqlitefile import FileDatabase
    from ..sql.store import Store

#: Tables the command line never writes into: the catalog's revision table, Alembic's default
#: one, and those the database file keeps for itself (:data:`INTERNAL_PREFIXES`).
INTERNAL_TABLES = ("entityworks_version", "alembic_version", "entityworks_schema")


def file_path(db: str) -> Path | None:
    """The database file ``--db`` names (None for a server or an in-memory database): a
    plain path, or the file of a URL whose backend keeps its database in one."""
    if "://" not in db:
        return Path(db) if db not in ("", ":memory:") else None
    from sqlalchemy import exc, make_url

    from ..sql.backends import for_name

    try:
        url = make_url(db)
    except exc.ArgumentError:  # not a URL: opening it says so
        return None
    return for_name(url.get_backend_name()).database_file(url)


def open_store(db: str, *, must_exist: bool = False) -> Store:
    """A Store for ``--db``, closed when the command ends (:func:`for_the_command`); with
    ``must_exist`` a missing database file is an error."""
    path = file_path(db)
    if path is not None and (must_exist or path.exists()):
        refuse_missing(path)
    from ..sql.store import Store

    return for_the_command(Store(db))


def for_the_command(store: Store) -> Store:
    """``store``, closed when the running command ends (as its click context closes, error
    or not): a command run inside a long-lived process (``CliRunner``, a notebook, a
    program calling the group) leaves no connection open behind it."""
    import click

    ctx = click.get_current_context(silent=True)
    if ctx is not None:
        ctx.call_on_close(store.close)
    return store


def refuse_missing(path: Path) -> None:
    """An error unless a database file is at ``path``."""
    if not path.exists():
        raise EntityworksError(f"no database at {path}")
    if not path.is_file():
        raise EntityworksError(f"{path} is not a database file")


def open_catalog(db: str) -> Store:
    """The catalog at ``--db`` (created or upgraded): call it only once the input is known to
    be good, so that a refused command leaves no new database behind."""
    from .. import catalog

    return catalog.open_catalog(open_store(db))


def check_writable_table(name: str) -> None:
    """Refuse writing into an internal table (schema revisions, the database's own tables)."""
    if name.lower() in INTERNAL_TABLES or name.lower().startswith(INTERNAL_PREFIXES):
        internal = [*INTERNAL_TABLES, *(f"{prefix}*" for prefix in INTERNAL_PREFIXES)]
        raise EntityworksError(
            f"{name!r} is an internal table; entityworks does not write "
            f"into it (internal: {', '.join(internal)})"
        )


def resolve_table(store: Store, name: str) -> type:
    """The dataclass for table ``name``: the catalog's own class, or one reflected from the
    live table."""
    return _resolved(name, store.table_names(), display_db(store), store.reflect)


def resolve_file_table(db: FileDatabase, shown: str, name: str) -> type:
    """:func:`resolve_table` on a database file read without SQLAlchemy (``shown``: how
    messages name it); :class:`~entityworks.sql.backends.sqlitefile.Elsewhere` when only the Store
    can tell."""
    from ..registry import registry

    return _resolved(name, db.table_names(), shown, lambda table: db.reflect(table, registry))


def _resolved(name: str, tables: list[str], shown: str, reflect: Callable[[str], type]) -> type:
    from ..catalog import table_class

    known = table_class(name)
    if known is not None:
        if name not in tables:
            raise UnknownTableError(
                f"no table {name!r} in {shown}; "
                f"run 'entityworks migrate' or generate something first"
            )
        return known
    if name not in tables:
        names = ", ".join(sorted(tables)) or "none"
        raise UnknownTableError(f"no table {name!r}; tables are: {names}")
    return reflect(name)


def complete_table(
    ctx: click.Context, _param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    """Shell completion of a TABLE argument: the tables of the database ``--db`` (or
    ``ENTITYWORKS_DB``, or the default file) names. A database file is opened read-only, so
    completing never creates or changes a database; any failure completes nothing."""
    import click
    from click.shell_completion import CompletionItem

    from .options import DEFAULT_DB

    given = ctx.params.get("db")
    if ctx.get_parameter_source("db") in (None, click.core.ParameterSource.DEFAULT):
        given = None  # the default filled in, or --db after this word: see the whole line
    db = given or _db_later_on_the_line() or os.environ.get("ENTITYWORKS_DB") or DEFAULT_DB
    try:
        names = _table_names_read_only(str(db))
    except Exception:  # completion must never print an error into the user's shell
        return []
    return [
        CompletionItem(n)
        for n in sorted(names)
        if n.startswith(incomplete)
        and not n.lower().startswith(INTERNAL_PREFIXES)
        and n not in INTERNAL_TABLES
    ]


def _db_later_on_the_line() -> str | None:
    """A ``--db``/``--url`` given after the word being completed (click parses only the
    words before it; the shell passes the whole line in ``COMP_WORDS``)."""
    import shlex

    try:
        words = shlex.split(os.environ.get("COMP_WORDS", ""))
    except ValueError:
        return None
    for i, word in enumerate(words):
        for flag in ("--db", "--url"):
            if word == flag and i + 1 < len(words):
                return words[i + 1]
            if word.startswith(flag + "="):
                return word[len(flag) + 1 :]
    return None


#: Seconds completion waits for a database server before offering nothing.
COMPLETION_TIMEOUT = 2


def _table_names_read_only(db: str) -> list[str]:
    path = file_path(db)
    if path is not None:  # read without SQLAlchemy
        return file_table_names(path, timeout=1) if path.is_file() else []
    if "://" not in db:
        return []
    import sqlalchemy as sa

    from ..sql.backends import for_name

    url = sa.make_url(db)
    # a server that accepts and never answers must not hang the user's shell
    waits = for_name(url.get_backend_name()).quick_connect_args(COMPLETION_TIMEOUT)
    engine = sa.create_engine(url, pool_pre_ping=False, connect_args=waits)
    try:
        return sa.inspect(engine).get_table_names()
    finally:
        engine.dispose()

"""The catalog's Alembic revisions (``entityworks/_migrations``): where they are, the revision
a database is at, upgrading or downgrading to one, and the helpers revision files create
tables with.

Apart from the diff/apply of a user's tables: this runs Alembic's own scripts, on the
``entityworks_version`` table; the catalog hands its classes in and is never imported here.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.util import CommandError

from ..errors import EntityworksError, SchemaError
from ..sql.ddllock import schema_lock
from ..sql.store import Store
from .connection import migration_connection, opened
from .diff import describe, diff_tables
from .metadata import table_names, target_metadata
from .versions import VERSION_TABLE

#: The catalog's Alembic script directory, shipped inside the package
#: (``entityworks/_migrations``: ``env.py``, ``script.py.mako``, ``alembic.ini``, ``versions/``).
MIGRATIONS_DIR = Path(__file__).resolve().parents[1] / "_migrations"


def migrations_dir() -> Path:
    """The folder of the catalog's revisions (the Alembic script directory)."""
    return MIGRATIONS_DIR


def alembic_config() -> Config:
    """A programmatic Alembic config pointing at the catalog's script directory."""
    folder = migrations_dir()
    config = Config()
    config.set_main_option("script_location", str(folder))
    return config


def current(target: Store | str | Path) -> str | None:
    """The catalog revision of a database (``None``: not under migration control)."""
    with opened(target) as store, store.engine.connect() as conn:
        context = MigrationContext.configure(conn, opts={"version_table": VERSION_TABLE})
        return context.get_current_revision()


def head() -> str:
    """The newest revision in ``entityworks/_migrations/versions``."""
    from alembic.script import ScriptDirectory

    revision = ScriptDirectory.from_config(alembic_config()).get_current_head()
    if revision is None:  # pragma: no cover - the package ships its revisions
        raise EntityworksError(f"no Alembic revisions in {migrations_dir()}")
    return revision


def upgrade(
    target: Store | str | Path, revision: str = "head", *, classes: Iterable[type]
) -> str | None:
    """Upgrade a database to ``revision``; returns the revision it is at afterwards.

    ``classes`` are the dataclasses the revisions create (the catalog passes its own: see
    :func:`entityworks.catalog.upgrade_catalog`). A database created without migrations
    (``Store.create``) whose tables already match them is stamped instead of re-created;
    one that differs raises SchemaError.
    """
    classes = list(classes)
    config = alembic_config()
    config.attributes["entityworks_classes"] = classes
    with opened(target) as store, migration_connection(store) as conn, schema_lock(conn):
        config.attributes["connection"] = conn
        context = MigrationContext.configure(conn, opts={"version_table": VERSION_TABLE})
        existing: set[str] = set()
        if context.get_current_revision() is None:
            existing = table_names(classes) & set(sa.inspect(conn).get_table_names())
        if existing:
            drift = diff_tables(conn, classes)
            if drift:
                raise SchemaError(
                    f"{store!r} has catalog tables ({', '.join(sorted(existing))}) that are "
                    f"not under migration control and differ from the catalog: "
                    f"{describe(drift[0])}"
                )
            _alembic(command.stamp, config, revision)
        else:
            before = context.get_current_revision()
            if before is not None and _is_older(config, revision, before):
                raise EntityworksError(
                    f"revision {revision!r} is older than the database's {before}: an upgrade "
                    f"would do nothing; downgrade to it instead (entityworks migrate --downgrade): "
                    f"that drops what the newer revisions added"
                )
            _alembic(command.upgrade, config, revision)
        return context.get_current_revision()


def downgrade(target: Store | str | Path, revision: str, *, classes: Iterable[type]) -> str | None:
    """Downgrade a database to the older ``revision`` (an id, ``-1``, or ``base`` to remove
    the revisions' tables); returns the revision it is at afterwards (``None`` at base).

    Refused when ``revision`` is not older than the database's: a downgrade never upgrades.
    Each revision's ``downgrade`` runs in the migration's transaction where the backend has
    transactional DDL (PostgreSQL, SQLite).
    """
    config = alembic_config()
    config.attributes["entityworks_classes"] = list(classes)
    with opened(target) as store, migration_connection(store) as conn, schema_lock(conn):
        config.attributes["connection"] = conn
        context = MigrationContext.configure(conn, opts={"version_table": VERSION_TABLE})
        before = context.get_current_revision()
        if before is None:
            raise EntityworksError(
                f"{store!r} is not under migration control: nothing to downgrade"
            )
        relative = revision.strip().startswith("-")
        if not relative and revision != "base" and not _is_older(config, revision, before):
            raise EntityworksError(
                f"revision {revision!r} is not older than the database's "
                f"{before}: upgrade to it instead"
            )
        _alembic(command.downgrade, config, revision)
        return context.get_current_revision()


def _is_older(config: Config, revision: str, current_revision: str) -> bool:
    """True when ``revision`` is a strict ancestor of ``current_revision``."""
    from alembic.script import ScriptDirectory

    script = ScriptDirectory.from_config(config)
    if revision == "base":
        return True
    try:
        wanted = script.get_revision(revision)
    except CommandError as exc:
        raise EntityworksError(f"cannot migrate to revision {revision!r}: {exc}") from None
    except Exception:  # a relative step ("+1") or "head" is resolved by Alembic itself
        return False
    if wanted is None or wanted.revision == current_revision:
        return False
    older = {r.revision for r in script.iterate_revisions(current_revision, "base")}
    return wanted.revision in older


def _alembic(step: Any, config: Config, revision: str) -> None:
    """Run an Alembic command; its refusals (an unknown revision...) are ours to report."""
    try:
        step(config, revision)
    except CommandError as exc:
        raise EntityworksError(f"cannot migrate to revision {revision!r}: {exc}") from None


# -- helpers for revision files ---------------------------------------------------------------


def create_tables(classes: Sequence[type], only: Collection[str] | None = None) -> None:
    """Inside a revision: create the tables of ``classes`` (and child tables) with
    ``op.create_table``, exactly as entityworks maps them for the dialect being migrated.

    ``only`` names the tables to create (e.g. a child table added to an existing parent).
    """
    from alembic import op

    metadata = target_metadata(classes, op.get_context().dialect.name)
    for table in metadata.sorted_tables:
        if only is None or table.name in only:
            # the table as built (a MetaData of its own, made for this call): its CREATE
            # TABLE, then its indexes, as Alembic's create_table runs them, live or as SQL
            op.get_context().impl.create_table(table)


def drop_tables(classes: Sequence[type], only: Collection[str] | None = None) -> None:
    """Inside a revision: drop the tables of ``classes`` (or the ``only`` ones), children
    first."""
    from alembic import op

    metadata = target_metadata(classes, op.get_context().dialect.name)
    for table in reversed(metadata.sorted_tables):
        if only is None or table.name in only:
            op.drop_table(table.name)


__all__ = [
    "MIGRATIONS_DIR",
    "alembic_config",
    "create_tables",
    "current",
    "downgrade",
    "drop_tables",
    "head",
    "migrations_dir",
    "upgrade",
]

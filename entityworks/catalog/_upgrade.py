"""Opening a catalog and bringing its schema to a revision.

Apart from the tables because it reaches ``migrate`` (Alembic), which the rest of the catalog
never needs: the catalog hands its classes to ``migrate``, and ``migrate`` never imports it.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import sqlalchemy as sa

from ..sql.logical import schema_table
from ..sql.store import Store
from ..sql.tables import metadata_of
from ._models import TABLES

#: The catalog's revision files (the Alembic script directory's ``versions``).
REVISIONS = Path(__file__).resolve().parents[1] / "_migrations" / "versions"
_ASSIGNED = re.compile(r"^(down_revision|revision)\s*(?::[^=]*)?=\s*(.*)$", re.MULTILINE)


def newest_revision(folder: Path = REVISIONS) -> str:
    """The revision of ``folder`` that no other one follows, read from the files' text
    (``revision = ...``, ``down_revision = ...``) without importing Alembic."""
    revisions: set[str] = set()
    followed: set[str] = set()
    for path in folder.glob("*.py"):
        for name, value in _ASSIGNED.findall(path.read_text(encoding="utf-8")):
            ids = re.findall(r"[\"']([^\"']+)[\"']", value)
            (revisions if name == "revision" else followed).update(ids)
    heads = revisions - followed
    if len(heads) != 1:  # Alembic would refuse them too
        raise RuntimeError(f"{folder}: expected one newest revision, found {sorted(heads)}")
    return heads.pop()


#: The newest revision, which a new catalog is created at (a test checks that it is
#: Alembic's head).
HEAD = newest_revision()
#: The catalog's Alembic version table (``migrate.VERSION_TABLE``, checked by a test).
VERSION_TABLE = "entityworks_version"


def open_catalog(url: str | os.PathLike[str] | Store) -> Store:
    """A Store whose database holds the catalog at the latest revision (see ``migrate``).

    A SQLite database without tables gets the catalog as the revisions leave it, built and
    stamped in one transaction (Alembic's "create from scratch" recipe: a test compares
    it with the revisions' result); any other runs the revisions it lacks."""
    store = url if isinstance(url, Store) else Store(os.fspath(url))
    if not _created_at_head(store):
        upgrade_catalog(store)
    return store


def _created_at_head(store: Store) -> bool:
    """Create the catalog's tables and its version row at :data:`HEAD` in a database that
    has no table and whose first write holds all of it (``Backend.serial_writes``: SQLite);
    False, with nothing done, for any other database. A new catalog is the usual start of
    ``generate``: this is much cheaper than running and importing Alembic's chain."""
    engine = store.engine
    backend = store.backend
    if not backend.serial_writes or store.table_names():
        return False  # (a catalog that exists is read, not locked, to find that out)
    metadata = metadata_of(TABLES.values(), backend.name)  # as migrate.target_metadata
    schema_table(metadata)
    version = sa.Table(
        VERSION_TABLE,
        metadata,
        sa.Column("version_num", sa.String(32), nullable=False),
        sa.PrimaryKeyConstraint("version_num", name=f"{VERSION_TABLE}_pkc"),
    )
    # a write transaction from the first statement: a process opening the same new file at
    # once waits, then finds the tables and takes the revisions' path (which has them)
    with engine.connect() as opened:
        conn = opened.execution_options(entityworks_write=True)
        if sa.inspect(conn).get_table_names():
            conn.rollback()
            return False
        metadata.create_all(conn)
        conn.execute(version.insert().values(version_num=HEAD))
        conn.commit()
    return True


def upgrade_catalog(store: Store, revision: str = "head") -> str | None:
    """Bring the catalog of ``store`` to ``revision`` through its Alembic revisions; returns
    the revision it is at afterwards. The catalog hands its classes to ``migrate``, which
    never imports this module."""
    from ..migrate import upgrade

    return upgrade(store, revision, classes=list(TABLES.values()))


def downgrade_catalog(store: Store, revision: str) -> str | None:
    """Bring the catalog of ``store`` back to the older ``revision`` (``base`` removes it);
    returns the revision it is at afterwards. What the newer revisions added is dropped."""
    from ..migrate import downgrade

    return downgrade(store, revision, classes=list(TABLES.values()))


__all__ = ["downgrade_catalog", "open_catalog", "upgrade_catalog"]

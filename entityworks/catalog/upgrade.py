"""Opening a catalog and bringing its schema to a revision.

Apart from the tables because it reaches ``migrate`` (Alembic), which the rest of the catalog
never needs: the catalog hands its classes to ``migrate``, and ``migrate`` never imports it.
"""

from __future__ import annotations

import os

from ..sql.store import Store
from .models import TABLES


def open_catalog(url: str | os.PathLike[str] | Store) -> Store:
    """A Store whose database holds the catalog at the latest revision (see ``migrate``)."""
    store = url if isinstance(url, Store) else Store(os.fspath(url))
    upgrade_catalog(store)
    return store


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

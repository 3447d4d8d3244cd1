"""The Store and the connection a schema change runs on: a Store opened from a URL for the
change only, and a write connection committed at the end (see
:func:`.dialects.schema_transaction` for what SQLite needs around it).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import sqlalchemy as sa

from ..sql.store import Store
from .dialects import schema_transaction


@contextmanager
def opened(target: Store | str | Path) -> Iterator[Store]:
    """``target`` as a Store; one opened here from a URL or path is closed afterwards."""
    if isinstance(target, Store):
        yield target
        return
    store = Store(target)
    try:
        yield store
    finally:
        store.close()


@contextmanager
def migration_connection(store: Store) -> Iterator[sa.Connection]:
    """The connection every migration runs on (also used by ``migrations/env.py``): a write
    connection for schema changes, committed when the block ends without error."""
    with store.engine.connect() as conn, schema_transaction(conn):
        yield conn.execution_options(entityworks_write=True)


__all__ = ["migration_connection", "opened"]

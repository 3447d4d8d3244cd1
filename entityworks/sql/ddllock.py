"""One lock per database for schema changes, so that processes do not create the same tables.

Two processes that both find a table missing would both create it, and the second fails
("already exists"): opening a new catalog, or ``Store.create`` of the same class, from
several processes at once. The lock makes the check and the creation one step.
PostgreSQL takes a transaction-level advisory lock, released when the surrounding
transaction ends. MariaDB, whose DDL is not transactional, takes a named lock and
releases it after committing what the block wrote. SQLite needs nothing: a writer holds
the database's write lock from its first statement (``BEGIN IMMEDIATE``). Each lock is
its backend's (:meth:`entityworks.sql.backends.base.Backend.schema_lock`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import sqlalchemy as sa

from .backends import for_name
from .backends.base import Backend

#: How long a process waits for another's schema change before giving up.
LOCK_SECONDS = 600


@contextmanager
def schema_lock(conn: sa.Connection, backend: Backend | None = None) -> Iterator[None]:
    """Hold the database's schema-change lock while the block runs (see the module);
    ``backend``: ``conn``'s, when the caller has it."""
    if backend is None:
        backend = for_name(conn.dialect.name)
    with backend.schema_lock(conn, LOCK_SECONDS):
        yield

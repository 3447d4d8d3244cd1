"""One lock per database for schema changes, so that processes do not create the same tables.

Two processes that both find a table missing would both create it, and the second fails
("already exists"): opening a new catalog, or ``Store.create`` of the same class, from
several processes at once. The lock makes the check and the creation one step.
PostgreSQL takes a transaction-level advisory lock, released when the surrounding
transaction ends. MariaDB, whose DDL is not transactional, takes a named lock and
releases it after committing what the block wrote. SQLite needs nothing: a writer holds
the database's write lock from its first statement (``BEGIN IMMEDIATE``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import sqlalchemy as sa

from ..errors import EntityworksError

#: PostgreSQL advisory lock key and MariaDB lock name of entityworks' schema changes.
LOCK_KEY = 0x656E74_6D6967
LOCK_NAME = "entityworks_schema_change"
#: How long a process waits for another's schema change before giving up.
LOCK_SECONDS = 600


@contextmanager
def schema_lock(conn: sa.Connection) -> Iterator[None]:
    """Hold the database's schema-change lock while the block runs (see the module)."""
    dialect = conn.dialect.name
    if dialect == "postgresql":
        conn.execute(sa.select(sa.func.pg_advisory_xact_lock(
            sa.bindparam("key", LOCK_KEY, type_=sa.BigInteger))))
        yield
    elif dialect in ("mysql", "mariadb"):
        got = conn.execute(sa.select(sa.func.get_lock(
            sa.bindparam("name", LOCK_NAME), sa.bindparam("seconds", LOCK_SECONDS)))).scalar()
        if got != 1:
            raise EntityworksError(
                f"another process has held the schema-change lock for over {LOCK_SECONDS} s; "
                "try again when its change has finished")
        try:
            yield
            conn.commit()  # the next holder must see what this one wrote
        finally:
            conn.execute(sa.select(sa.func.release_lock(sa.bindparam("name", LOCK_NAME))))
    else:
        yield

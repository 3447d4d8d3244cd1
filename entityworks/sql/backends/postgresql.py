"""PostgreSQL: rows by binary COPY, NUMERIC keeping its scale, text without NUL, the schema
lock as a transaction-level advisory lock.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import sqlalchemy as sa

from .base import Backend, on_conflict

#: The advisory lock key of entityworks' schema changes.
LOCK_KEY = 0x656E74_6D6967


class PostgreSQL(Backend):
    """PostgreSQL through psycopg 3."""

    name = "postgresql"
    copies = True
    text_holds_nul = False
    script_driver = "psycopg"
    native_paramstyle = "pyformat"

    @contextmanager
    def schema_lock(self, conn: sa.Connection, seconds: int) -> Iterator[None]:
        # released with the transaction: the change and the lock end together
        conn.execute(
            sa.select(
                sa.func.pg_advisory_xact_lock(sa.bindparam("key", LOCK_KEY, type_=sa.BigInteger))
            )
        )
        yield

    def advance_key(self, conn: sa.Connection, table: sa.Table, column: str) -> None:
        # a serial's sequence does not see explicit values: move it past the largest one
        sequence = sa.func.pg_get_serial_sequence(table.name, column)
        conn.execute(
            sa.select(
                sa.func.setval(
                    sequence,
                    sa.select(
                        sa.func.coalesce(sa.func.max(table.c[column]), 0) + 1
                    ).scalar_subquery(),
                    False,
                )
            )
        )

    def upsert(
        self, table: sa.Table, keys: list[str], others: list[str], restated: list[str]
    ) -> sa.Executable:
        from sqlalchemy.dialects import postgresql

        return on_conflict(postgresql.insert(table), table, keys, others, restated)

    def script_upsert(
        self, table: sa.Table, keys: list[str], others: list[str], restated: list[str]
    ) -> sa.Executable | None:
        return self.upsert(table, keys, others, restated)

    def refuses_value(self, value: Any) -> bool:
        return isinstance(value, str) and "\x00" in value

    def point_path(self, url: sa.URL) -> bool:
        return True

    def point_connection(self, dbapi_connection: Any) -> None:
        dbapi_connection.autocommit = True  # psycopg: no BEGIN before a one-row statement

    def unopenable(self, exc: BaseException, url: sa.URL, shown: str) -> str | None:
        # libpq reports a missing database as a connection failure, without a SQLSTATE
        name = url.database or url.username or ""
        if getattr(
            exc, "sqlstate", None
        ) != "3D000" and f'database "{name}" does not exist' not in str(exc):
            return None
        return (
            f"database {name!r} does not exist on the PostgreSQL server of {shown}; "
            f'create it first (createdb {name}, or CREATE DATABASE "{name}" in psql)'
        )


__all__ = ["LOCK_KEY", "PostgreSQL"]

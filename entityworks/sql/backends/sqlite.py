"""SQLite: pragmas and our own ``BEGIN`` on each connection, rows on the raw cursor, the
one-row point path on files, STRICT tables (INTEGER, REAL, TEXT columns with type affinity;
the ANY columns, held by a CHECK on ``typeof``, of tables entityworks 0.2.3 wrote).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.pool import StaticPool
from sqlalchemy.sql.compiler import SQLCompiler

from ...errors import InvalidNameError
from ..like import LIKE_FUNCTION, LikeMatch, like_matches
from .base import (
    CONFIGURING,
    TYPEOF_CHECK,
    Backend,
    has_ours,
    marked,
    on_conflict,
    setup_statement,
)

if TYPE_CHECKING:
    from ...model.schema import TableSchema


class SQLiteAny(sa.types.UserDefinedType[Any]):
    """SQLite's ``ANY``: a STRICT column that stores each value as it is bound, never converting
    it, with a ``CHECK`` on ``typeof``: how entityworks 0.2.3 declared int, float and str
    columns, mirrored for such tables (see ``tables``)."""

    cache_ok: bool | None = True

    def get_col_spec(self, **_kw: Any) -> str:
        return "ANY"

    def compare_against_backend(self, dialect: sa.Dialect, conn_type: Any) -> bool | None:
        """For Alembic's autogenerate: SQLAlchemy reflects ``ANY`` as NUMERIC (SQLite's
        affinity for an unknown name), which is this type; anything else is a difference."""
        return isinstance(conn_type, sa.Numeric | sa.types.NullType) or None


#: SQLite's primary result codes for "database is locked", "unable to open database file"
#: and "file is not a database".
SQLITE_BUSY = 5
SQLITE_CANTOPEN = 14
SQLITE_NOTADB = 26


def switch_to_wal(cursor: Any, busy_timeout: float) -> None:
    """Put the connection's database in WAL mode, waiting up to ``busy_timeout`` seconds
    for another connection's write lock.

    The switch writes the file's header from inside a read transaction, and SQLite answers
    such an upgrade with "database is locked" at once, without its busy handler: two
    processes opening one new file together would fail the second. So the wait is here."""
    deadline = time.monotonic() + busy_timeout
    pause = 0.001
    while True:
        try:
            setup_statement(cursor, "PRAGMA journal_mode=WAL")
            return
        except Exception as exc:
            busy = (getattr(exc, "sqlite_errorcode", 0) & 0xFF) == SQLITE_BUSY
            if not busy or time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


def memory(url: sa.URL) -> bool:
    """True for an in-memory database (one connection: one database)."""
    return url.database in (None, "", ":memory:")


class SQLite(Backend):
    """SQLite through sqlite3 (pysqlite)."""

    name = "sqlite"
    locks_rows = False
    raw_rows = True
    strict_tables = True
    binds_bytes = True
    text_values = True
    strict_numbers = True
    keeps_decimal_scale: bool = False
    no_limit: int | None = -1
    pings_idle = False

    def engine_arguments(
        self, url: sa.URL, echo: bool, options: dict[str, Any], busy_timeout: float
    ) -> tuple[sa.URL, dict[str, Any]]:
        kwargs: dict[str, Any] = {"echo": echo, **options}
        kwargs["connect_args"] = {
            "timeout": busy_timeout,
            "check_same_thread": False,
            **options.get("connect_args", {}),
        }
        if memory(url):
            kwargs["poolclass"] = StaticPool  # one connection: one database
        return url, kwargs

    def refused_option(self, name: str, url: sa.URL) -> str | None:
        if name == "poolclass" and memory(url):
            return (
                "engine_options: 'poolclass' is set by the Store for an in-memory SQLite "
                "database (StaticPool: every connection sees the same database)"
            )
        return None

    def refused_options(self, options: dict[str, Any]) -> str | None:
        if "timeout" in options.get("connect_args", {}):
            return (
                "engine_options: connect_args 'timeout' is the Store's busy_timeout; use "
                "Store(busy_timeout=...)"
            )
        return None

    def refused_isolation(self, level: Any) -> str | None:
        return (
            f"engine_options: isolation_level {level!r} on SQLite: the Store begins its "
            "own transactions there (BEGIN, or BEGIN IMMEDIATE to write)"
        )

    def refused_driver(self, engine: sa.Engine) -> str | None:
        driver = engine.dialect.driver
        if driver not in ("pysqlite", "pysqlcipher"):
            return (
                f"engine=: SQLite through the {driver!r} driver: the Store sets up "
                "sqlite3 connections only (its own transactions, pragmas); use "
                "sqlite+pysqlite"
            )
        return None

    def refused_pool(self, engine: sa.Engine) -> str | None:
        if memory(engine.url) and not isinstance(engine.pool, StaticPool):
            return (
                f"engine=: an in-memory SQLite engine with a {type(engine.pool).__name__}: "
                "connections could see different databases; create it with "
                "poolclass=sqlalchemy.pool.StaticPool and "
                "connect_args={'check_same_thread': False}"
            )
        return None

    def connection_setup(
        self, engine: sa.Engine, busy_timeout: float, *, adopted: bool
    ) -> Callable[[Any], None] | None:
        url = engine.url
        in_memory = memory(url)
        # a read-only URI (sqlite:///file:x.db?mode=ro&uri=true) must not switch the file's
        # journal to WAL: that is a write, refused on a file in rollback-journal mode
        read_only = url.query.get("mode") == "ro" or url.query.get("immutable") == "1"
        # Reflect our STRICT tables' ANY columns as ANY (SQLAlchemy would say NUMERIC, by
        # SQLite's affinity rules), so that schema comparisons see the real type.
        engine.dialect.ischema_names = {  # type: ignore[attr-defined]
            **engine.dialect.ischema_names,  # type: ignore
            "ANY": SQLiteAny,
        }

        def setup(dbapi_connection: Any) -> None:
            dbapi_connection.isolation_level = None  # BEGIN is ours (see begin)
            cursor = dbapi_connection.cursor()
            if adopted:  # the store's own engines pass it as the driver's timeout
                setup_statement(cursor, f"PRAGMA busy_timeout={int(busy_timeout * 1000)}")
            if not in_memory and not read_only:
                switch_to_wal(cursor, busy_timeout)
                setup_statement(cursor, "PRAGMA synchronous=NORMAL")
            setup_statement(cursor, "PRAGMA foreign_keys=ON")
            # LIKE compares case as PostgreSQL's and MariaDB's (binary collation) LIKE do.
            setup_statement(cursor, "PRAGMA case_sensitive_like=ON")
            cursor.close()
            # LIKE filters match text holding NUL with it (SQLite's LIKE stops at a NUL).
            dbapi_connection.create_function(LIKE_FUNCTION, 2, like_matches, deterministic=True)

        @marked
        def begin(conn: sa.Connection) -> None:
            # Writers take the lock up front so that the busy timeout applies instead of a
            # deadlock-avoidance error when two readers both try to upgrade.
            if conn.connection.dbapi_connection.in_transaction:  # type: ignore[union-attr]
                return  # begun by a listener of an engine sharing this one's pool
            write = conn.get_execution_options().get("entityworks_write", False)
            conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

        with CONFIGURING:
            if not has_ours(engine.dispatch.begin):
                event.listen(engine, "begin", begin)
        return setup

    def bounded_text(self, length: int) -> sa.types.TypeEngine[Any] | None:
        return sa.Text()  # STRICT tables know no VARCHAR (a CHECK keeps the length)

    def point_path(self, url: sa.URL) -> bool:
        return not memory(url) and "mode=memory" not in str(url)

    def point_connection(self, dbapi_connection: Any) -> None:
        # the set-up left it in autocommit (isolation_level None): a write statement takes
        # the write lock as it starts, waiting up to the busy timeout
        dbapi_connection.isolation_level = None

    def check_opened(self, dbapi_connection: Any) -> None:
        cursor = dbapi_connection.cursor()
        setup_statement(cursor, "PRAGMA schema_version")  # reads the file's header
        cursor.close()

    def unopenable(self, exc: BaseException, url: sa.URL, shown: str) -> str | None:
        code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
        if memory(url) or code not in (SQLITE_CANTOPEN, SQLITE_NOTADB):
            return None
        path = Path(str(url.database).removeprefix("file:").partition("?")[0])
        if code == SQLITE_NOTADB:
            return (
                f"{shown} is not an SQLite database (SQLite: {exc}); give the path of a "
                "database file, or a new path to create one there"
            )
        if not path.parent.is_dir():
            return (
                f"cannot open SQLite database {shown}: the folder {path.parent} does not "
                f"exist; create it first (mkdir -p {path.parent})"
            )
        if path.is_dir():
            return f"cannot open SQLite database {shown}: it is a folder, not a file"
        return (
            f"cannot open SQLite database {shown} (SQLite: {exc}); check that you may "
            f"read it{'' if path.exists() else ' and create files in ' + str(path.parent)}"
        )

    def live_columns(
        self, conn: sa.Connection, schema: TableSchema, names: Sequence[str]
    ) -> dict[str, dict[str, str]]:
        inspector = sa.inspect(conn)
        live: dict[str, dict[str, str]] = {}
        for name in names:
            # a table-valued pragma: the table name is a bound parameter
            rows: Sequence[Any] = conn.execute(
                sa.select(sa.column("name"), sa.column("type")).select_from(
                    sa.func.pragma_table_info(name)
                )
            ).all()
            if rows:
                _same_name_in_case(schema, name, inspector.get_table_names())
                # An ANY column is trusted only with the CHECK on typeof we give it.
                checked = {
                    m.group(1)
                    for check in inspector.get_check_constraints(name)
                    if (m := TYPEOF_CHECK.search(check.get("sqltext") or ""))
                }
                live[name] = {n: (t or "").upper() + ("" if n in checked else "?") for n, t in rows}
        return live

    def stored_types(self, inspector: Any, table_name: str) -> dict[str, str]:
        return {
            m.group(1): m.group(2)
            for check in inspector.get_check_constraints(table_name)
            if (m := TYPEOF_CHECK.search(check.get("sqltext") or ""))
        }

    def upsert(
        self, table: sa.Table, keys: list[str], others: list[str], restated: list[str]
    ) -> sa.Executable:
        from sqlalchemy.dialects import sqlite

        return on_conflict(sqlite.insert(table), table, keys, others, restated)

    def streams(self, children: bool) -> bool:
        return False

    def script_upsert(
        self, table: sa.Table, keys: list[str], others: list[str], restated: list[str]
    ) -> sa.Executable | None:
        return self.upsert(table, keys, others, restated)


@compiles(LikeMatch, "sqlite")
def _like_sqlite(element: LikeMatch, compiler: SQLCompiler, **kw: Any) -> str:
    """SQLite's LIKE stops reading text at a NUL: such text is matched by LIKE_FUNCTION."""
    text, pattern = element.clauses
    nul = sa.func.instr(text, sa.func.char(0)) > 0
    exact = sa.case(
        (nul, getattr(sa.func, LIKE_FUNCTION)(pattern, text)),
        else_=text.like(pattern, escape=chr(92)),
    )
    return f"({compiler.process(exact, **kw)})"


def _same_name_in_case(schema: TableSchema, name: str, tables: list[str]) -> None:
    """InvalidNameError when the table SQLite finds for ``name`` is another one whose name
    differs only in (ASCII) case: SQLite does not tell them apart, so ``MAPS`` would be
    read and written as ``maps``."""
    if name in tables:
        return
    folded = name.encode("utf-8").lower()  # SQLite folds ASCII letters only
    other = next((t for t in tables if t.encode("utf-8").lower() == folded), None)
    if other is not None:
        owner = next((t for t in [schema, *schema.descendants] if t.name == name), schema)
        raise InvalidNameError(
            f"{owner.cls.__qualname__}: table {name!r} and the existing table {other!r} "
            "differ only in case, which SQLite does not tell apart; rename one of them",
            cls=owner.cls,
        )


__all__ = ["SQLite", "SQLiteAny", "memory"]

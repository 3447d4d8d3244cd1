"""``Backend``: what the Store does differently on one kind of database.

Every backend difference of the Store's stages is a method or attribute here, overridden in
the backend's module (:mod:`.sqlite`, :mod:`.postgresql`, :mod:`.mariadb`, :mod:`.mssql`), so
that the stages never ask which database they run on. The defaults are those of a database
with nothing special: transactional DDL, streamed reads, SQLAlchemy's ``executemany``.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from ...errors import EntityworksError
from ..log import INFO, log_statement, sql_logger

if TYPE_CHECKING:
    from ...model.schema import TableSchema

#: Held while listeners are added, so that Stores made at once on one engine add them once.
CONFIGURING = threading.Lock()
#: The CHECK ``tables`` gives an SQLite ANY column: ``typeof("x") IN ('integer', ...)``.
TYPEOF_CHECK = re.compile(r"""typeof\(["`]?([^"`)]+)["`]?\)\s*(?:=|IN\s*\()\s*'(\w+)'""")


def setup_statement(cursor: Any, sql: str) -> None:
    """Run one statement of a connection's set-up (logged like every statement)."""
    if sql_logger.isEnabledFor(INFO):
        log_statement(sql)
    cursor.execute(sql)


def marked(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Mark an engine listener as the Store's (see :func:`has_ours`)."""
    fn._entityworks = True  # type: ignore[attr-defined]
    return fn


def has_ours(listeners: Any) -> bool:
    """True when one of ``listeners`` is the Store's."""
    return any(getattr(fn, "_entityworks", False) for fn in listeners)


class Backend:
    """A backend's differences, as the Store's stages use them (see the module)."""

    #: SQLAlchemy's dialect name.
    name: str = "default"

    def __init__(self, name: str | None = None) -> None:
        if name is not None:  # a backend without a module of its own
            self.name = name

    #: DDL runs inside the transaction and rolls back with it (MariaDB commits each
    #: statement: tables are then created one by one, never inside ``transaction()``).
    transactional_ddl: bool = True
    #: ``SELECT ... FOR UPDATE`` locks rows (SQLite locks the whole file at the first write).
    locks_rows: bool = True
    #: Rows go to the raw driver cursor's ``executemany`` with the SQL compiled once, and
    #: are read from it (SQLite: SQLAlchemy's per-row work would cost more than the row).
    raw_rows: bool = False
    #: Rows are inserted by a binary COPY (PostgreSQL).
    copies: bool = False
    #: ``insert_many`` sends its rows (encoded a column at a time, bind processors
    #: applied) to the raw driver cursor's ``executemany`` with the INSERT compiled once;
    #: a refused batch goes again through SQLAlchemy, which locates the row (MariaDB).
    raw_inserts: bool = False
    #: SQLite's STRICT tables: a column whose values have one storage class is ANY with a
    #: CHECK on ``typeof`` (the driver binds such values itself), a length is a CHECK, and
    #: child tables of a compact root are WITHOUT ROWID.
    strict_tables: bool = False
    #: The driver binds bytes itself (SQLAlchemy's processor would only wrap them).
    binds_bytes: bool = False
    #: Decimals, dates, times, timestamps and UUIDs are stored as text (ISO 8601, the
    #: sortable decimal key): SQLite, which has no such types.
    text_values: bool = False
    #: An instant is stored as naive UTC (MariaDB's DATETIME has no time zone).
    naive_utc: bool = False
    #: Integers, floats and booleans are INTEGER and REAL, the names STRICT tables accept.
    strict_numbers: bool = False
    #: The driver of the URL that loads this dialect for scripts ("": the default one).
    script_driver: str = ""
    #: The placeholder style that driver understands natively (``named`` or ``pyformat``).
    native_paramstyle: str = "named"
    #: A NUMERIC column keeps the scale of the value written (else a companion holds it).
    keeps_decimal_scale: bool = True
    #: Text may hold NUL (PostgreSQL's cannot: a filter on it can match nothing).
    text_holds_nul: bool = True
    #: The LIMIT that means "no limit", for an OFFSET without one (None: OFFSET alone).
    no_limit: int | None = None
    #: Rows of the key alone are inserted one at a time (``VALUES ()``), not as
    #: ``VALUES (DEFAULT), (DEFAULT)`` (MariaDB's NO_AUTO_VALUE_ON_ZERO makes those key 0).
    key_only_rows_one_by_one: bool = False
    #: An upsert that fails on its guard is explained by :func:`locate.unique_clash`.
    upsert_guarded: bool = False
    #: A connection idle for a while is pinged before it is used again (a server that
    #: restarted meanwhile has closed it); not an SQLite file, which has no server.
    pings_idle: bool = True

    # -- engine --------------------------------------------------------------------------
    def engine_arguments(
        self, url: sa.URL, echo: bool, options: dict[str, Any], busy_timeout: float
    ) -> tuple[sa.URL, dict[str, Any]]:
        """The URL and ``create_engine`` arguments of the Store's own engine."""
        # no pre-ping per checkout: connections idle for a while are pinged instead (see
        # engine.configure_engine), unless the options say otherwise
        return url, {"echo": echo, **options}

    def refused_option(self, name: str, url: sa.URL) -> str | None:
        """Why the ``engine_options`` entry ``name`` is the Store's to set, or None."""
        return None

    def refused_options(self, options: dict[str, Any]) -> str | None:
        """Why the checked ``engine_options`` would break the Store here, or None."""
        return None

    def refused_isolation(self, level: Any) -> str | None:
        """Why an ``isolation_level`` option would break the Store here, or None."""
        return None

    def refused_driver(self, engine: sa.Engine) -> str | None:
        """Why an engine given to ``Store(engine=...)`` cannot serve (its driver), or None."""
        return None

    def refused_pool(self, engine: sa.Engine) -> str | None:
        """Why an engine given to ``Store(engine=...)`` cannot serve (its pool), or None."""
        return None

    def connection_setup(
        self, engine: sa.Engine, busy_timeout: float, *, adopted: bool
    ) -> Callable[[Any], None] | None:
        """The set-up each new driver connection of ``engine`` gets (None: none), with the
        engine's own listeners installed (once however many Stores share it)."""
        return None

    def point_path(self, url: sa.URL) -> bool:
        """One-row calls may run in one statement on a driver connection kept per thread
        (see :mod:`..point`)."""
        return False

    def point_connection(self, dbapi_connection: Any) -> None:
        """Make a connection of the point path commit each statement as it runs."""

    def check_opened(self, dbapi_connection: Any) -> None:
        """Raise the driver's error if a new connection cannot use its database (an SQLite
        file that is not a database connects, and fails at its first statement)."""

    def unopenable(self, exc: BaseException, url: sa.URL, shown: str) -> str | None:
        """What ``exc``, raised while connecting to ``url`` (``shown`` names it without its
        password), says cannot be opened, and how to fix it; None for any other error."""
        return None

    # -- tables --------------------------------------------------------------------------
    def check_names(self, schema: TableSchema) -> None:
        """Refuse table or column names this backend cannot hold (before any SQL)."""

    def live_columns(
        self, conn: sa.Connection, schema: TableSchema, names: Sequence[str]
    ) -> dict[str, dict[str, str]]:
        """The columns of the tables ``names`` (of ``schema``) that exist already (name ->
        declared type, "" when the type is not looked at; see ``tables.Live``)."""
        inspector = sa.inspect(conn)
        return {
            name: {c["name"]: "" for c in inspector.get_columns(name)}
            for name in names
            if inspector.has_table(name)
        }

    def stored_types(self, inspector: Any, table_name: str) -> dict[str, str]:
        """Column -> the storage class a CHECK holds it to (SQLite's ANY columns)."""
        return {}

    @contextmanager
    def schema_lock(self, conn: sa.Connection, seconds: int) -> Iterator[None]:
        """Hold the database's schema-change lock while the block runs, waiting up to
        ``seconds`` for it (see ``ddllock``)."""
        yield

    # -- column types (None: the generic type) ---------------------------------------------
    def long_text(self) -> sa.types.TypeEngine[Any] | None:
        """Unbounded text."""
        return None

    def key_text(self, length: int) -> sa.types.TypeEngine[Any] | None:
        """Text usable in a key or unique index."""
        return None

    def bounded_text(self, length: int) -> sa.types.TypeEngine[Any] | None:
        """VARCHAR(length)."""
        return None

    def blob(self) -> sa.types.TypeEngine[Any] | None:
        """Unbounded bytes."""
        return None

    def exact_decimal(self) -> sa.types.TypeEngine[Any]:
        """A decimal number kept exactly."""
        return sa.Numeric(asdecimal=True)

    def naive_datetime(self) -> sa.types.TypeEngine[Any]:
        """A naive timestamp with microseconds."""
        return sa.DateTime(timezone=False)

    def date(self) -> sa.types.TypeEngine[Any]:
        return sa.Date()

    def time(self) -> sa.types.TypeEngine[Any]:
        """A time with microseconds."""
        return sa.Time()

    def uuid(self) -> sa.types.TypeEngine[Any]:
        return sa.Uuid(native_uuid=True)

    def aware_datetime(self) -> sa.types.TypeEngine[Any]:
        """An instant (with a time zone where the database has one)."""
        from sqlalchemy.dialects import postgresql

        return postgresql.TIMESTAMP(timezone=True)

    # -- scripts (entityworks sql-script) ------------------------------------------------
    def prepare_offline(self, dialect: sa.Dialect) -> None:
        """Set up a dialect object that compiles scripts without connecting."""

    def script_upsert(
        self, table: sa.Table, keys: list[str], others: list[str], restated: list[str]
    ) -> sa.Executable | None:
        """The upsert of a statement template (None: the caller writes a MERGE)."""
        return None

    # -- rows ----------------------------------------------------------------------------
    def upsert(
        self, table: sa.Table, keys: list[str], others: list[str], restated: list[str]
    ) -> sa.Executable:
        """INSERT ... or replace the row with the same key (``keys``): ``others`` and
        ``restated`` (key columns set although equal) take the new values."""
        raise EntityworksError(f"upsert is not supported on {self.name}")

    def advance_key(self, conn: sa.Connection, table: sa.Table, column: str) -> None:
        """After rows written with explicit values of the generated key ``column``, make the
        next generated value follow the largest one (SQLite and MariaDB do so themselves)."""

    def refuses_value(self, value: Any) -> bool:
        """True for a value this backend alone cannot store and names no column for."""
        return False

    def streams(self, children: bool) -> bool:
        """Reads use a server-side cursor (``children``: the rows' child tables are read
        on the same connection meanwhile)."""
        return True


def on_conflict(
    insert: Any, table: sa.Table, keys: list[str], others: list[str], restated: list[str]
) -> sa.Executable:
    """``INSERT ... ON CONFLICT (keys) DO UPDATE`` (SQLite's and PostgreSQL's upsert)."""
    elements = [table.c[k] for k in keys]
    if not others and not restated:
        return insert.on_conflict_do_nothing(index_elements=elements)  # type: ignore[no-any-return]
    return insert.on_conflict_do_update(  # type: ignore[no-any-return]
        index_elements=elements, set_={n: insert.excluded[n] for n in [*restated, *others]}
    )


__all__ = [
    "CONFIGURING",
    "TYPEOF_CHECK",
    "Backend",
    "has_ours",
    "marked",
    "on_conflict",
    "setup_statement",
]

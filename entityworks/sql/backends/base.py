"""``Backend``: what the Store does differently on one kind of database.

Every backend difference of the Store's stages is a method or attribute here, overridden in
the backend's module (:mod:`.sqlite`, :mod:`.postgresql`, :mod:`.mariadb`, :mod:`.mssql`), so
that the stages never ask which database they run on. The defaults are those of a database
with nothing special: transactional DDL, streamed reads, SQLAlchemy's ``executemany``.
"""

from __future__ import annotations

import copy
import decimal
import re
import threading
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

import sqlalchemy as sa

from ...errors import EntityworksError
from ...types.encoding import Processor, skip_none
from ...types.registry import Target
from .._log import INFO, log_statement, sql_logger
from .fetching import until_short
from .light import TITLES

if TYPE_CHECKING:
    from ...model.schema import Column, TableSchema

#: Held while listeners are added, so that Stores made at once on one engine add them once.
CONFIGURING = threading.Lock()
#: The CHECK ``tables`` gives an SQLite ANY column: ``typeof("x") IN ('integer', ...)``.
TYPEOF_CHECK = re.compile(r"""typeof\(["`]?([^"`)]+)["`]?\)\s*(?:=|IN\s*\()\s*'(\w+)'""")


#: The storage class (SQLite's ``typeof``) of the values drivers bind without a codec, by
#: the registry entry's ``native`` type: a column of that class (INTEGER, REAL, TEXT) would
#: convert a value of another type (``'12'`` into 12), so the Store checks such values
#: itself. (A ``bool`` has none: its column is checked by its own codec; a BLOB converts
#: nothing.)
STORAGE_CLASSES: dict[type, str] = {int: "integer", float: "real", str: "text"}


def storage_class(info: Any) -> str | None:
    """The storage class of the values of ``info`` (a registry entry), from its ``native``
    type (see :data:`STORAGE_CLASSES`); None for other types."""
    native = info.native
    return None if native is None else STORAGE_CLASSES.get(native)


def _json_or_text(type_: Any) -> str:
    """``JSON`` for a reflected native JSON column type, ``TEXT`` for unbounded text (where
    an older table keeps a JSON field), else "" (not looked at)."""
    name = type(type_).__name__.upper()
    if "JSON" in name:
        return "JSONB" if name == "JSONB" else "JSON"
    return "TEXT" if isinstance(type_, sa.Text) else ""


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


class RowWriter(Protocol):
    """What a backend's ``write_rows`` and ``insert_generated`` are given: one batch of rows
    of one table, in the forms the backend may send, with its statements and the guard
    that names a refused row (``entityworks.sql._bulk.Rows``)."""

    conn: sa.Connection
    model: Any
    kind: str
    #: True once the backend set the generated keys on the instances itself.
    keys_written: bool
    #: What the backend keeps from one batch of a call to the next.
    call: dict[str, Any]
    #: The rows of the call from this batch on, where the input's length says (else
    #: ``len(self)``).
    ahead: int

    def __len__(self) -> int: ...
    @property
    def cache(self) -> dict[str, Any]: ...
    @property
    def dialect(self) -> sa.Dialect: ...
    def instances(self) -> Sequence[Any] | None: ...
    def arrow(self) -> Any | None: ...
    def bound(self) -> list[Sequence[Any]]: ...
    def bound_chunks(self, size: int = ...) -> Iterator[list[Sequence[Any]]] | None: ...
    def streamed(self) -> Iterable[Sequence[Any]] | None: ...
    def checked(self) -> list[Sequence[Any]]: ...
    def dicts(self) -> list[dict[str, Any]]: ...
    def keyless(self) -> list[Sequence[Any]] | None: ...
    def keyless_sql(self, rows: int = 1) -> str | None: ...
    def key_index(self) -> int: ...
    def with_keys(self, keys: Sequence[Any]) -> RowWriter: ...
    def set_keys(self, keys: Sequence[Any], start: int = 0) -> None: ...
    def statement(self) -> Any: ...
    def compiled(self, rows: int = 1) -> str | None: ...
    def compiled_for(self, dialect: sa.Dialect) -> tuple[str, str]: ...
    def cursor(self) -> Any: ...
    def logging(self) -> bool: ...
    def listened(self) -> bool: ...
    def logged(self, sql: str, rows: Any, how: str) -> Any: ...
    def attempt(self, action: Callable[[], Any]) -> bool: ...
    def refused(self, action: Callable[[], Any]) -> BaseException | None: ...
    def guard(
        self,
        action: Callable[[], Any],
        *,
        raw: tuple[str, Callable[[], list[Any]]] | None = None,
        replay: tuple[Any, list[dict[str, Any]]] | None = None,
        clash: bool = False,
    ) -> Any: ...
    def checked_again(
        self,
        error: BaseException,
        sent: Sequence[Sequence[Any]],
        send: Callable[[list[Sequence[Any]]], Any],
        sql: str,
    ) -> Any: ...
    def gated_chunks(
        self, *, keyless: bool = False
    ) -> Iterator[Sequence[Sequence[Any]]] | None: ...


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
    #: Rows are inserted by a binary COPY (PostgreSQL).
    copies: bool = False
    #: ``insert_many`` sends its rows (encoded a column at a time, bind processors
    #: applied) to the raw driver cursor's ``executemany`` with the INSERT compiled once;
    #: a refused batch goes again through SQLAlchemy, which locates the row (MariaDB).
    raw_inserts: bool = False
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

    # -- command line (cli, web, catalog upgrade) -------------------------------------------
    #: Dialect names other tools write in URLs for this backend, which SQLAlchemy does not
    #: know (``postgres``).
    url_aliases: tuple[str, ...] = ()
    #: The driver entityworks suggests in a URL ("": none), and the extra of
    #: ``entityworks[...]`` that installs it.
    suggested_driver: str = ""
    driver_extra: str = ""
    #: An example of a URL of this backend, as ``--db``'s refusals list them ("": none).
    url_example: str = ""
    #: A write transaction holds the whole database from its first statement, so a second
    #: writer waits for it to end (the catalog is then created at its head in one).
    serial_writes: bool = False

    # -- asyncio (AsyncStore) ----------------------------------------------------------------
    #: The asyncio driver an AsyncStore runs this backend on, by the driver a URL names
    #: ("": the dialect's default); a URL that names one of these asyncio drivers keeps it.
    asyncio_drivers: Mapping[str, str] = MappingProxyType({})
    #: True on the copy of this backend an AsyncStore's pipeline uses (:meth:`for_asyncio`):
    #: its connections are SQLAlchemy's adapted asyncio driver connections, driven through
    #: ``AsyncConnection.run_sync``.
    on_asyncio: bool = False

    def asyncio_url(self, url: sa.URL) -> sa.URL | str:
        """``url`` with this backend's asyncio driver (see :attr:`asyncio_drivers`), or why
        an AsyncStore cannot use it."""
        _dialect, _, driver = url.drivername.partition("+")
        if driver in self.asyncio_drivers.values():
            return url
        target = self.asyncio_drivers.get(driver)
        if target is None:
            known = sorted({d for d in self.asyncio_drivers.values()})
            if not known:
                return f"AsyncStore does not run on {self.title}"
            return (
                f"AsyncStore runs {self.title} on SQLAlchemy's asyncio driver "
                f"{' or '.join(known)}, not {driver or 'the default driver'!r}: write "
                f"{_with_driver(url, known[0]).render_as_string(hide_password=True)}"
            )
        return _with_driver(url, target)

    def for_asyncio(self) -> Backend:
        """This backend as an AsyncStore's pipeline uses it (:attr:`on_asyncio` set): each
        backend decides there which of its driver-level paths still serve through the
        adapted connection and which give way to SQLAlchemy's own."""
        twin = copy.copy(self)
        twin.on_asyncio = True
        # reads: the rows of SQLAlchemy's result cursor (the adapted driver's), not a
        # cursor of our own on the driver connection (psycopg's pipeline, PyMySQL's
        # unbuffered cursor and binding by name are the sync drivers')
        twin.reads_own_cursor = False
        return twin

    @property
    def title(self) -> str:
        """How messages name this database."""
        return TITLES.get(self.name, self.name)

    def suggested_scheme(self, written: str) -> str:
        """The URL scheme to suggest for one whose dialect is written ``written`` (a name of
        this backend, or one of its :attr:`url_aliases`); "" for none."""
        if not self.suggested_driver:
            return ""
        dialect = self.name if written in self.url_aliases else written
        return f"{dialect}+{self.suggested_driver}"

    def refused_url(self, url: sa.URL) -> str | None:
        """Why ``url`` cannot serve, found before connecting (an unknown character set, say),
        or None."""
        return None

    def database_file(self, url: sa.URL) -> Path | None:
        """The file that holds the database of ``url`` (None: a server's, or one in memory)."""
        return None

    def read_only_url(self, path: Path) -> sa.URL:
        """A URL that opens the database file at ``path`` read-only: never created, never
        changed."""
        raise EntityworksError(f"{self.title} keeps no database in a file")

    def read_only_connect_args(self, url: sa.URL) -> dict[str, Any]:
        """``connect_args`` of a connection to ``url`` that runs one statement of the user's,
        read-only (``entityworks sql``): what keeps the driver from running several
        statements in one call (a second one could end the read-only transaction), whatever
        the URL asks for."""
        return {}

    def begin_read_only(self, conn: sa.Connection) -> None:
        """Make the session and transaction of ``conn`` read-only by the database's own rule
        (never by reading the statement); a backend that has none refuses."""
        raise EntityworksError(f"entityworks knows no read-only transaction on {self.title}")

    def memory_url(self) -> sa.URL:
        """A URL of an empty database in memory (to compile and show this backend's SQL)."""
        raise EntityworksError(f"{self.title} has no database in memory")

    def quick_connect_args(self, seconds: int) -> dict[str, Any]:
        """``connect_args`` that give up after ``seconds`` on a server that does not answer
        (shell completion must never hang)."""
        return {}

    def declared_columns(
        self, conn: sa.Connection, inspector: Any, table_name: str
    ) -> list[tuple[str, str]]:
        """``(column, declared type)`` of a table in its order, as the database declares it
        (the default: SQLAlchemy's reflection, each type compiled back)."""
        declared = []
        for column in inspector.get_columns(table_name):
            try:
                text = column["type"].compile(dialect=conn.dialect)
            except sa.exc.SQLAlchemyError:  # a type SQLAlchemy reflects but cannot name
                text = "?"
            declared.append((str(column["name"]), str(text)))
        return declared

    def foreign_keys(
        self, conn: sa.Connection, inspector: Any, table_name: str
    ) -> list[tuple[list[str], str, list[str], str]]:
        """A table's foreign keys as ``(columns, referred table, referred columns, on
        delete)``, the action in lower case (``"no action"`` when none is declared); the
        default: SQLAlchemy's reflection."""
        return [
            (
                list(fk.get("constrained_columns") or []),
                str(fk.get("referred_table") or ""),
                list(fk.get("referred_columns") or []),
                str((fk.get("options") or {}).get("ondelete") or "no action").lower(),
            )
            for fk in inspector.get_foreign_keys(table_name)
        ]

    def driver_errors(self) -> tuple[type[BaseException], ...]:
        """The driver's own errors that reach the caller unwrapped (the raw-cursor paths),
        among the modules already imported: bad input, like SQLAlchemy's errors."""
        return ()

    def driver_message(self, error: BaseException) -> str | None:
        """The driver's ``error`` as a sentence, when its text needs one (None: as it is)."""
        return None

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
        (see :mod:`.._point`)."""
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
            name: {c["name"]: _json_or_text(c["type"]) for c in inspector.get_columns(name)}
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

    # -- engine and tables ------------------------------------------------------------------
    #: URL schemes other tools write for this database (libpq, Heroku, Django's
    #: dj-database-url) that SQLAlchemy does not know -> the scheme it knows (see
    #: ``engine.normalise_url``).
    scheme_aliases: Mapping[str, str] = MappingProxyType({})
    #: Other names ``entityworks sql-script --dialect`` takes for it (``postgres``).
    dialect_aliases: tuple[str, ...] = ()
    #: The most foreign keys one delete may act through here, one table below another
    #: (None: no limit of its own); entityworks refuses a deeper chain on every backend.
    max_cascade_levels: int | None = None

    def older_column(
        self, column: Column, schema: TableSchema, live: Mapping[str, str] | None
    ) -> tuple[sa.types.TypeEngine[Any], list[sa.schema.SchemaItem]] | None:
        """The type and CHECKs of ``column`` when its existing table (``live``: column ->
        declared type) declares it as an older entityworks did, which this one keeps
        (SQLite's ``ANY`` with a CHECK on ``typeof``; JSON as text where new tables have a
        JSON type); None: the column's own type."""
        from ._json import CheckedJson, is_json, is_text

        found = live.get(column.sql_name) if live else None
        if found == "TEXT" and is_json(column.info):
            if self.json_type() is not None and not self.json_as_text:  # an older table
                return self.long_text() or sa.Text(), []
        native = self.json_type_of(found) if found else None
        if native is None:
            return None
        if is_json(column.info):  # the JSON type that table has (PostgreSQL: json, jsonb)
            return native, []
        if is_text(column.info) and not column.primary_key:
            # a str field on a JSON column (a class read from an XSD, or written for the
            # table by hand): its text is bound as the column's JSON, which the database
            # checks (PostgreSQL casts no text to json by itself)
            return CheckedJson(native), []
        return None

    def keeps_values(self, type_: sa.types.TypeEngine[Any]) -> bool:
        """True for a column type that stores each value exactly as bound (SQLite's ``ANY``):
        its field needs no companion for what type affinity loses (``Companion.any_keeps``)."""
        return False

    def column_checks(self, column: Column, col: sa.Column[Any]) -> list[sa.schema.SchemaItem]:
        """The CHECKs a table adds for ``column`` (its SQL column ``col``), after the column
        and its companions (SQLite: the length of ``max_length`` text)."""
        return []

    def table_options(
        self, schema: TableSchema, items: Sequence[sa.schema.SchemaItem]
    ) -> dict[str, Any]:
        """The dialect options of ``schema``'s ``Table`` with the columns and constraints
        ``items`` (SQLite: STRICT, and WITHOUT ROWID for a compact root's child tables)."""
        return {}

    def checked_python_types(self, inspector: Any, table_name: str) -> dict[str, type]:
        """Column -> the Python type a CHECK holds its values to (SQLite's ANY columns), for
        reflection."""
        return {}

    def missing_table(self, error: BaseException) -> bool:
        """True when the driver's ``error`` says a table does not exist (the default: the
        SQLSTATEs of an undefined table)."""
        codes = {getattr(error, "sqlstate", None), error.args[0] if error.args else None}
        return bool(codes & {"42P01", "42S02"})

    def names_missing(self, error: BaseException, name: str) -> bool:
        """True when ``error`` (see :meth:`missing_table`) names the table ``name``."""
        return False

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

    #: The JSON type binds and reads the JSON text as a text column does (MariaDB's JSON is
    #: LONGTEXT with a CHECK), so a text column of an older table keeps it too.
    json_as_text: bool = False

    def json_type(self) -> sa.types.TypeEngine[Any] | None:
        """The column type of a new table's JSON field (None: text, as SQLite keeps it)."""
        return None

    def json_type_of(self, declared: str) -> sa.types.TypeEngine[Any] | None:
        """The type binding and reading a JSON column an existing table declares
        ``declared`` (as :meth:`live_columns` says it: ``JSON``, ``JSONB``); None for
        another type."""
        return self.json_type() if declared == "JSON" else None

    # -- filters into JSON values (``col("meta")["size"] >= 3``; see filters.JsonItem) ----
    def json_compare(
        self,
        column: Any,
        path: tuple[str | int, ...],
        op: str,
        value: Any,
        *,
        definite: bool = False,
    ) -> sa.ColumnElement[bool]:
        """The rows whose JSON ``column`` holds at ``path`` a value of ``value``'s kind
        (number, text, boolean) for which ``op`` (``==``, ``<``...) holds; NULL where the
        value is missing or of another kind (``definite``: false). The default: SQLite's
        JSON1 functions."""
        from ._json import json1_compare

        return json1_compare(column, path, op, value, definite=definite)

    def json_contains(
        self, column: Any, path: tuple[str | int, ...], candidate: Any
    ) -> sa.ColumnElement[bool]:
        """The rows whose JSON ``column`` holds at ``path`` a value containing
        ``candidate`` (a dict or list of scalars, checked by the filter), as PostgreSQL's
        ``@>`` means it. The default: SQLite's JSON1 functions."""
        from ._json import json1_contains

        return json1_contains(column, path, candidate)

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

    # -- types --
    #: A float column keeps the sign of -0.0 (else a companion column keeps it).
    keeps_negative_zero: bool = True

    def storage_target(self, name: str | None = None) -> Target:
        """What the type layer is told of this backend (its companions depend on it), as
        the target named ``name`` (default: this backend's name)."""
        return Target(
            self.name if name is None else name,
            keeps_decimal_scale=self.keeps_decimal_scale,
            keeps_negative_zero=self.keeps_negative_zero,
            decimal_as_key=self.text_values,
        )

    def big_integer(self) -> sa.types.TypeEngine[Any] | None:
        """A 64-bit integer (None: BIGINT)."""
        return None

    def small_integer(self) -> sa.types.TypeEngine[Any] | None:
        """A small integer, for companion columns (None: SMALLINT)."""
        return None

    def double(self) -> sa.types.TypeEngine[Any] | None:
        """A double-precision float (None: DOUBLE PRECISION)."""
        return None

    def boolean(self) -> sa.types.TypeEngine[Any] | None:
        """A boolean (None: BOOLEAN)."""
        return None

    def reads_float_literal(self, text: str, value: float) -> bool:
        """True when this database reads the literal ``text`` (Python's ``repr``) as exactly
        ``value`` (a DEFAULT is only written when it does)."""
        return True

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

    # -- writing (pipeline) ----------------------------------------------------------------
    def list_batch(self, model: Any, length: int) -> int:
        """Rows of a list of ``length`` instances of ``model`` to write as one batch where
        the backend streams them a chunk at a time (its memory is a chunk's, not the
        batch's); 0: the call's batch size."""
        return 0

    def write_rows(self, conn: sa.Connection, rows: RowWriter) -> None:
        """Write one batch (``rows.kind``: an insert or an upsert) in one savepoint, by
        this backend's fastest way; a refused row raises the WriteError naming it. The
        default: SQLAlchemy's ``executemany`` of the registry's values."""
        stmt = rows.statement()
        dicts = rows.dicts()
        rows.guard(
            lambda: conn.execute(stmt, dicts),
            replay=(stmt, dicts),
            clash=rows.kind == "upsert" and self.upsert_guarded,
        )

    def insert_generated(self, conn: sa.Connection, rows: RowWriter) -> Sequence[Any]:
        """Insert one batch of rows whose single key is None and return the keys the
        database gave them, in order, in one round trip per batch where the backend can
        know them. The default: ``INSERT ... RETURNING`` sorted by parameter order
        (SQLAlchemy's insertmanyvalues)."""
        table = rows.model.table
        name = rows.model.schema.primary_key.name
        stmt = table.insert().returning(table.c[name], sort_by_parameter_order=True)
        dicts = rows.dicts()
        for d in dicts:
            d.pop(name)
        if not dicts[0] and self.key_only_rows_one_by_one:
            # rows of the key alone: SQLAlchemy would send VALUES (DEFAULT), (DEFAULT),
            # which NO_AUTO_VALUE_ON_ZERO makes two rows of key 0; one row at a time is
            # VALUES (), which takes the next value (a rare shape)
            one = table.insert().returning(table.c[name])
            return [conn.execute(one).scalar_one() for _ in dicts]
        found = rows.guard(lambda: conn.execute(stmt, dicts).all(), replay=(stmt, dicts))
        return [k for (k,) in found]

    def stored_as(self, info: Any) -> str | None:
        """The storage class (``integer``, ``real``, ``text``) of a type whose values the
        driver binds as they are and a column of that class could convert (``'12'`` into
        12), so that rows encoded elsewhere are checked again; None for other types."""
        return storage_class(info)

    def arrow_rows(self, model: Any, table: Any) -> Any | None:
        """The columnar lane's batch ``table`` (a ``pyarrow.Table`` of ``model``'s fields)
        made ready for this backend's bulk writer as a whole, which then writes it as it
        is (``RowWriter.arrow``) where it can: exactly what it would store of the decoded
        values, or refused by the database (the rows are then decoded and written the
        usual way, which names the row). None (the usual way) by default."""
        return None

    def arrow_form(
        self, info: Any, suffixes: tuple[str, ...]
    ) -> Callable[[Any, bool], list[Sequence[Any]] | None] | None:
        """The columnar lane's SQL columns of a field of ``info``'s type computed from its
        Arrow column (see :mod:`entityworks.sql._arrowforms`), where its table's companion
        columns are ``suffixes``; None (the values decoded and encoded one by one) by
        default (SQLite: its text forms)."""
        return None

    def value_refusal(
        self, info: Any, nullable: bool
    ) -> tuple[Callable[[Any], Any], Callable[[Sequence[Any]], bool]] | None:
        """This backend's own check of a value of ``info``'s type, after the registry's
        (a value it would store as another), and its form for a whole column (True: the
        column passes); None where there is none."""
        return None

    def copy_types(self, table: sa.Table, dialect: sa.Dialect) -> list[str] | None:
        """The driver's type names of ``table``'s columns for a binary COPY, or None (no
        COPY, or a column it cannot carry)."""
        return None

    # -- the row codec (``rowcodec.row_codec``: once per table and column, never per value) --
    def bind_processor(
        self, impl: sa.types.TypeEngine[Any], dialect: sa.Dialect, stored: str | None
    ) -> Processor:
        """The bind processor the row codec applies to a column's encoded values (``impl``:
        the column's type for ``dialect``; ``stored``: :meth:`stored_as` of its type);
        None: the driver binds them as they are. The default: SQLAlchemy's."""
        return impl.bind_processor(dialect)

    def fast_processor(
        self,
        info: Any,
        checked: Processor,
        refusal: Processor,
        stored: str | None,
        any_column: bool,
        binary_copy: bool,
    ) -> Processor:
        """What the bulk path applies to a column's values of type ``info``
        (``RowCodec.fast``): ``checked``, the complete path (rule, codec, bind processor),
        unless the driver or the database refuses every value of another type itself, at C
        speed; then None (the values go untouched) or ``refusal``, the backend's own check
        (:meth:`value_refusal`). ``stored``: :meth:`stored_as` of the type; ``any_column``:
        :meth:`keeps_values` of the column's type; ``binary_copy``: the rows go by a binary
        COPY, whose dumpers refuse another type than int, str and float (but see
        ``RowCodec.gates``)."""
        if binary_copy and info.native in (int, str, float):
            return None
        return checked

    def reads_raw_cursor(self) -> bool:
        """Rows are read from the raw driver cursor, decoded by the row codec alone, which
        then applies SQLAlchemy's result processors itself (:meth:`result_processor`,
        :meth:`result_column`); False: through SQLAlchemy's Result, whose processors need
        the driver's column types."""
        return False

    #: Reads run on a driver cursor of the backend's own (:meth:`read_cursor`), the
    #: statement compiled once per read and its parameters bound as SQLAlchemy binds them,
    #: unless SQLAlchemy's echo or a listener must see it; False: the statement goes
    #: through SQLAlchemy and the rows come from the cursor of its result (SQLite, whose
    #: reads never stream: see :meth:`streams`).
    reads_own_cursor: bool = False

    def read_cursor(self, dbapi_connection: Any, stream: bool) -> Any:
        """A driver cursor for one read (``stream``: a server-side cursor, which holds one
        fetch at a time in memory, where the read can be big)."""
        return dbapi_connection.cursor()

    def read_batches(
        self,
        dbapi_connection: Any,
        sql: str,
        params: Any,
        size: int,
        stream: bool,
        kept: bool = True,
        *,
        alone: bool = False,
    ) -> Generator[Sequence[Sequence[Any]], None, None]:
        """The rows of ``sql`` as the driver gives them, ``size`` at a time (``stream``:
        never more than that in memory), on a cursor of :meth:`read_cursor`; ``kept``: the
        transaction goes on after the read (False: it ends right after, which frees what
        the read leaves open); ``alone``: the connection sends nothing else until the read
        ends or is left (no child query meanwhile). A fetch of fewer rows than asked for is
        the last: no empty fetch after it, which on a server-side cursor is a round trip.
        Errors are the driver's."""
        cursor = self.read_cursor(dbapi_connection, stream)
        try:
            cursor.execute(sql, params)
            yield from until_short(partial(cursor.fetchmany, size), size)
        finally:
            cursor.close()

    def result_processor(self, impl: sa.types.TypeEngine[Any], dialect: sa.Dialect) -> Processor:
        """What the row codec applies to a value of a column (``impl``: its type for
        ``dialect``) before the registry's decoder: None where rows come through
        SQLAlchemy's Result (see :meth:`reads_raw_cursor`), else SQLAlchemy's result
        processor (a type of ours gives its own, ``result_value``, without SQLAlchemy's
        wrapper around it)."""
        if not self.reads_raw_cursor():
            return None
        own = getattr(impl, "result_value", None)
        processor: Processor = skip_none(
            own(dialect) if own is not None else None
        ) or impl.result_processor(dialect, None)
        return processor

    def result_column(
        self, impl: sa.types.TypeEngine[Any], dialect: sa.Dialect
    ) -> Callable[[Sequence[Any]], Sequence[Any]] | None:
        """The decoder of a whole column of raw rows that a type of ours gives
        (``result_column``), where rows are read from the raw cursor (see
        :meth:`reads_raw_cursor`); None: none."""
        own = getattr(impl, "result_column", None) if self.reads_raw_cursor() else None
        column: Callable[[Sequence[Any]], Sequence[Any]] | None = (
            own(dialect) if own is not None else None
        )
        return column

    def read_form(
        self, impl: sa.types.TypeEngine[Any], column: sa.Column[Any], parts: Sequence[Any]
    ) -> tuple[sa.ColumnElement[Any], ...] | None:
        """What the reads that decode through the row codec select instead of ``column``
        (its type for the dialect: ``impl``) and its companions' columns ``parts``
        (``(Companion, column)``), one expression each, in that order, giving what the
        codec's decoders and joins read as they would read the columns; None: the columns
        themselves."""
        return None

    def refuses_other_types(self) -> bool:
        """The database refuses a value of another type than its column's rather than
        converting it, and the bulk path writes with the raw cursor: a one-row write may
        send its values as the bulk path encodes them (``RowCodec.fast``), the complete
        checks run only when it is refused, which is then reported as the raw path reports
        it. False: the complete checks first, where the driver would convert a value of
        another type itself (psycopg sends a str for an int column as text, which the
        server casts)."""
        return False

    def restated_keys(self, key_columns: Sequence[Any]) -> list[str]:
        """Key columns an upsert or ``update(obj)`` sets although they match the row: a
        Decimal key equals the row's by value (1.5 = 1.50), and where the column itself
        keeps the scale (PostgreSQL's NUMERIC) the row takes the one just written, as its
        other columns do. (Elsewhere a companion column holds it, which is set anyway.)"""
        if not self.keeps_decimal_scale:
            return []
        return [c.name for c in key_columns if c.info.python_type is decimal.Decimal]

    def streams(self, children: bool) -> bool:
        """Reads use a server-side cursor (``children``: the rows' child tables are read
        on the same connection meanwhile)."""
        return True

    # -- exchange --
    #: Files beside a database file that belong to it (its journals), removed with it.
    file_companions: tuple[str, ...] = ()

    def plain_file(self, url: sa.URL) -> str | None:
        """The path of the database file ``url`` names, when it is a plain file that an
        import may create (None: a server's database, one in memory, a URI)."""
        return None

    def seal_file(self, path: Path) -> None:
        """Make a new database file whole on its own before it is linked into place (its
        journal folded into it)."""

    def take_named_lock(self, conn: sa.Connection, name: str, seconds: int) -> bool:
        """Take the server-wide lock ``name`` for this session, waiting up to ``seconds``;
        False when another session kept it (imports where DDL commits at once)."""
        raise EntityworksError(f"{self.title} has no named locks")

    def release_named_lock(self, conn: sa.Connection, name: str) -> None:
        """Release the named lock ``name`` this session holds."""
        raise EntityworksError(f"{self.title} has no named locks")

    def named_lock_free(self, conn: sa.Connection, name: str) -> bool:
        """True when no session holds the named lock ``name``."""
        raise EntityworksError(f"{self.title} has no named locks")

    def commented_tables(self, conn: sa.Connection, prefix: str) -> list[tuple[str, str]]:
        """``(table, comment)`` of the tables whose comment starts with ``prefix``."""
        inspector = sa.inspect(conn)
        found = []
        for name in inspector.get_table_names():
            text = inspector.get_table_comment(name).get("text") or ""
            if text.startswith(prefix):
                found.append((name, text))
        return found

    def table_references(self, conn: sa.Connection) -> list[tuple[str, str]]:
        """``(table, table it refers to)`` of every foreign key of the database."""
        inspector = sa.inspect(conn)
        return [
            (name, fk["referred_table"])
            for name in inspector.get_table_names()
            for fk in inspector.get_foreign_keys(name)
        ]

    @contextmanager
    def tables_write_locked(self, conn: sa.Connection, names: Sequence[str]) -> Iterator[None]:
        """Hold the tables ``names`` against every other session while the block runs,
        once each open transaction that wrote to them has ended."""
        yield


def _with_driver(url: sa.URL, driver: str) -> sa.URL:
    return url.set(drivername=f"{url.get_backend_name()}+{driver}")


__all__ = [
    "CONFIGURING",
    "STORAGE_CLASSES",
    "TYPEOF_CHECK",
    "Backend",
    "RowWriter",
    "has_ours",
    "marked",
    "setup_statement",
    "storage_class",
]

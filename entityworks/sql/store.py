"""``Store``: dataclass instances in and out of a SQL database, through SQLAlchemy Core.

Every statement is a SQLAlchemy construct compiled by the dialect, and every value travels as a
bound parameter (or through PostgreSQL's COPY protocol, which carries data, never SQL). For
speed the bulk paths hand SQLAlchemy's compiled statement to the driver's ``executemany``
with rows encoded by the registry and SQLAlchemy's own bind processors; decoding likewise
applies only the processors a column really needs.

A write either happens whole or not at all: each call runs in a transaction (or a savepoint
inside :meth:`Store.transaction`), and a failing row is located by replaying the batch inside a
savepoint that is then rolled back, so the error can name the row and column.
"""

from __future__ import annotations

import dataclasses
import decimal
import math
import os
import re
import threading
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from itertools import accumulate, chain, groupby, repeat, starmap
from operator import add, attrgetter, countOf, itemgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar, overload

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.pool import StaticPool

from .._gcpause import paused_gc
from ..errors import (
    ConfigurationError,
    EntityworksError,
    FilterError,
    InvalidNameError,
    NoSuchTableError,
    NotFoundError,
    SchemaError,
    UnknownTableError,
    WriteError,
)
from ..model.schema import (
    PARENT_COLUMN,
    TableSchema,
    instance_builder,
    snake_case,
    table_schema,
    unusable_field_name,
)
from ..registry import COMPANION_SEPARATOR, TypeRegistry, encode_error, the_registry
from ..registry import registry as default_registry
from . import sqltypes
from .ddllock import schema_lock
from .filters import LIKE_FUNCTION, compile_order_by, compile_where, encode_value, like_matches
from .log import (
    INFO,
    log_statement,
    sql_logger,
    store_logger,
    watch,
)
from .rowcodec import GateRefused, RowCodec, row_codec
from .tables import Live, build_tables, is_rowid, schema_of, table_companions

if TYPE_CHECKING:
    import pyarrow as pa

    from .encoded import EncodedRows

T = TypeVar("T")
Processor = Callable[[Any], Any] | None
#: Maps an index within a batch to the row number the caller sees in errors.
RowNumber = Callable[[int], int]

BATCH = 20_000
_MYSQL = ("mysql", "mariadb")
#: Raised by drivers while binding a value they cannot hold (sqlite3: an int beyond 64 bits,
#: a str with a lone surrogate; psycopg's COPY: a value of the wrong type). They locate a bad
#: row like database errors do.
_BIND_ERRORS = (OverflowError, UnicodeEncodeError, TypeError)
FETCH = 2_000


def _connection_charset(dbapi_connection: Any) -> str | None:
    """The character set of a MySQL driver connection (``utf8mb4`` unless the URL says)."""
    name = getattr(dbapi_connection, "character_set_name", None)
    return name() if callable(name) else None


def _logged(statement: str, rows: Any, how: str, engine: sa.Engine) -> Any:
    """Log a batch the Store hands to the driver itself, on ``entityworks.sql`` and, under
    ``echo=True``, in SQLAlchemy's echo log too (which would not see it); returns ``rows``,
    made a list when it was an iterator."""
    echo = engine.echo
    if echo or sql_logger.isEnabledFor(INFO):
        rows = rows if isinstance(rows, list) else list(rows)
        if sql_logger.isEnabledFor(INFO):
            log_statement(statement, rows=len(rows), how=how, values=rows)
        if echo:
            engine.logger.info("%s [%s, %d rows]", statement, how, len(rows))
    return rows


def _listened(engine: sa.Engine) -> bool:
    """True when someone listens to statements (our SQL logger uses other events)."""
    dispatch = engine.dispatch
    return bool(dispatch.before_cursor_execute or dispatch.after_cursor_execute)


def _setup(cursor: Any, sql: str) -> None:
    """Run one statement of the connection set-up (logged like every statement)."""
    if sql_logger.isEnabledFor(INFO):
        log_statement(sql)
    cursor.execute(sql)


#: Options ``engine_options`` may hold, with the check of their value (create_engine's
#: others are passed on as they are, and refused by it if unknown).
_OPTION_CHECKS: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "pool_size": ("an int >= 0", lambda v: _is_int(v) and v >= 0),
    "max_overflow": ("an int >= -1", lambda v: _is_int(v) and v >= -1),
    "pool_timeout": ("a number of seconds >= 0", lambda v: _is_number(v) and v >= 0),
    "pool_recycle": ("a number of seconds, or -1", lambda v: _is_number(v) and v >= -1),
    "pool_pre_ping": ("True or False", lambda v: isinstance(v, bool)),
    "pool_use_lifo": ("True or False", lambda v: isinstance(v, bool)),
    "echo_pool": ("True, False or 'debug'", lambda v: isinstance(v, bool) or v == "debug"),
    "connect_args": ("a dict", lambda v: isinstance(v, Mapping)),
    "execution_options": ("a dict", lambda v: isinstance(v, Mapping)),
    "isolation_level": ("a str", lambda v: isinstance(v, str)),
}
#: Options the Store sets itself: a parameter of its own says what to do instead.
_OWN_OPTIONS = {
    "echo": "use Store(echo=True)",
    "poolclass": None,  # refused on in-memory SQLite only (see _checked_options)
}


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value == value


def _sqlite_memory(url: sa.URL) -> bool:
    return url.database in (None, "", ":memory:")


def _checked_options(options: Mapping[str, Any] | None, url: sa.URL) -> dict[str, Any]:
    """``engine_options`` checked before anything is created: each known option's value,
    no option the Store sets itself, nothing that would break its transactions."""
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise ConfigurationError(f"engine_options must be a dict of create_engine options, "
                                 f"got {options!r}")
    sqlite = url.get_backend_name() == "sqlite"
    checked: dict[str, Any] = {}
    for name, value in options.items():
        if not isinstance(name, str):
            raise ConfigurationError(f"engine_options: option names are str, got {name!r}")
        if name == "echo":
            raise ConfigurationError(f"engine_options: {name!r} is set by the Store; "
                                     f"{_OWN_OPTIONS[name]}")
        if name == "poolclass" and sqlite and _sqlite_memory(url):
            raise ConfigurationError(
                "engine_options: 'poolclass' is set by the Store for an in-memory SQLite "
                "database (StaticPool: every connection sees the same database)")
        if name in _OPTION_CHECKS:
            what, ok = _OPTION_CHECKS[name]
            if not ok(value):
                raise ConfigurationError(f"engine_options: {name!r} must be {what}, got "
                                         f"{value!r}")
        checked[name] = value
    if sqlite and "timeout" in checked.get("connect_args", {}):
        raise ConfigurationError("engine_options: connect_args 'timeout' is the Store's "
                                 "busy_timeout; use Store(busy_timeout=...)")
    levels = [checked.get("isolation_level"),
              checked.get("execution_options", {}).get("isolation_level")]
    for level in filter(None, levels):
        if sqlite:
            raise ConfigurationError(
                f"engine_options: isolation_level {level!r} on SQLite: the Store begins its "
                "own transactions there (BEGIN, or BEGIN IMMEDIATE to write)")
        if str(level).upper() == "AUTOCOMMIT":
            raise ConfigurationError(_AUTOCOMMIT)
    return checked


_AUTOCOMMIT = ("isolation_level AUTOCOMMIT would let every statement commit on its own, so a "
               "refused write could leave half of its rows behind; the Store needs "
               "transactions")


def _create_engine(url: sa.URL, kwargs: dict[str, Any]) -> sa.Engine:
    """``sa.create_engine`` with its refusals of bad options as a ConfigurationError."""
    try:
        return sa.create_engine(url, **kwargs)
    except (TypeError, ValueError, sa.exc.ArgumentError) as exc:
        raise ConfigurationError(f"engine_options refused by SQLAlchemy for "
                                 f"{url.render_as_string(hide_password=True)}: {exc}") from exc


def _adopted_url(engine: Any) -> sa.URL:
    """The URL of an engine given to ``Store(engine=...)``, once the engine is checked."""
    if not isinstance(engine, sa.Engine):
        kind = type(engine).__qualname__
        hint = (" (the Store is synchronous: create a sync engine for the same database)"
                if "Async" in kind else "")
        raise ConfigurationError(f"engine= takes a sqlalchemy.Engine, got {kind}{hint}")
    dialect = engine.dialect
    if dialect.name == "sqlite" and dialect.driver not in ("pysqlite", "pysqlcipher"):
        raise ConfigurationError(
            f"engine=: SQLite through the {dialect.driver!r} driver: the Store sets up "
            "sqlite3 connections only (its own transactions, pragmas); use sqlite+pysqlite")
    levels = [getattr(dialect, "_on_connect_isolation_level", None),
              engine.get_execution_options().get("isolation_level")]
    if any(str(level).upper() == "AUTOCOMMIT" for level in levels if level):
        raise ConfigurationError(f"engine=: {_AUTOCOMMIT}")
    if dialect.name == "sqlite" and _sqlite_memory(engine.url) and not isinstance(
            engine.pool, StaticPool):
        raise ConfigurationError(
            f"engine=: an in-memory SQLite engine with a {type(engine.pool).__name__}: "
            "connections could see different databases; create it with "
            "poolclass=sqlalchemy.pool.StaticPool and "
            "connect_args={'check_same_thread': False}")
    return engine.url


#: ``ConnectionRecord.info`` key: the connection got the Store's set-up.
_READY = "entityworks_ready"
#: Held while listeners are added, so that Stores made at once on one engine add them once.
_CONFIGURING = threading.Lock()


def _marked(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn._entityworks = True  # type: ignore[attr-defined]
    return fn


def _has_ours(listeners: Any) -> bool:
    return any(getattr(fn, "_entityworks", False) for fn in listeners)


def _configure_engine(engine: sa.Engine, busy_timeout: float, *, adopted: bool) -> None:
    """Give ``engine`` the Store's per-dialect connection set-up, once however many Stores
    share it: SQLite pragmas and transactions that the Store begins itself; MariaDB's strict
    ``sql_mode`` and binary collation.

    The store's own engines set up each new connection. An engine given to
    ``Store(engine=...)`` may hold connections made before: each is set up when it is first
    checked out (its pool record remembers it).
    """
    name = engine.dialect.name
    if name == "sqlite":
        url = engine.url
        memory = _sqlite_memory(url)
        # a read-only URI (sqlite:///file:x.db?mode=ro&uri=true) must not switch the file's
        # journal to WAL: that is a write, refused on a file in rollback-journal mode
        read_only = url.query.get("mode") == "ro" or url.query.get("immutable") == "1"
        # Reflect our STRICT tables' ANY columns as ANY (SQLAlchemy would say NUMERIC, by
        # SQLite's affinity rules), so that schema comparisons see the real type.
        engine.dialect.ischema_names = {**engine.dialect.ischema_names,  # type: ignore
                                        "ANY": sqltypes.SQLiteAny}

        def setup(dbapi_connection: Any) -> None:
            dbapi_connection.isolation_level = None  # BEGIN is ours (see begin)
            cursor = dbapi_connection.cursor()
            if adopted:  # the store's own engines pass it as the driver's timeout
                _setup(cursor, f"PRAGMA busy_timeout={int(busy_timeout * 1000)}")
            if not memory and not read_only:
                _setup(cursor, "PRAGMA journal_mode=WAL")
                _setup(cursor, "PRAGMA synchronous=NORMAL")
            _setup(cursor, "PRAGMA foreign_keys=ON")
            # LIKE compares case as PostgreSQL's and MariaDB's (binary collation) LIKE do.
            _setup(cursor, "PRAGMA case_sensitive_like=ON")
            cursor.close()
            # LIKE filters match text holding NUL with it (SQLite's LIKE stops at a NUL).
            dbapi_connection.create_function(LIKE_FUNCTION, 2, like_matches, deterministic=True)

        @_marked
        def begin(conn: sa.Connection) -> None:
            # Writers take the lock up front so that the busy timeout applies instead of a
            # deadlock-avoidance error when two readers both try to upgrade.
            if conn.connection.dbapi_connection.in_transaction:  # type: ignore[union-attr]
                return  # begun by a listener of an engine sharing this one's pool
            write = conn.get_execution_options().get("entityworks_write", False)
            conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

        with _CONFIGURING:
            if not _has_ours(engine.dispatch.begin):
                event.listen(engine, "begin", begin)
    elif name in _MYSQL:
        explicit = "charset" in engine.url.query

        def setup(dbapi_connection: Any) -> None:
            charset = _connection_charset(dbapi_connection)
            if adopted and not explicit and charset not in (None, sqltypes.MARIADB_CHARSET):
                raise ConfigurationError(
                    f"engine=: its connections use the character set {charset!r}, which "
                    "cannot hold every character; create the engine with the charset "
                    "utf8mb4 (?charset=utf8mb4 in its URL)")
            # Refuse bad values instead of truncating them, keep an explicit 0 key (MariaDB
            # would otherwise replace it with a generated one), and make a division by zero
            # an error (the upsert guard relies on it).
            cursor = dbapi_connection.cursor()
            _setup(cursor, "SET SESSION sql_mode = CONCAT_WS(',', @@sql_mode, "
                   "'STRICT_ALL_TABLES', 'NO_AUTO_VALUE_ON_ZERO', "
                   "'ERROR_FOR_DIVISION_BY_ZERO')")
            # Literals in the collation of our text columns (binary, no pad). With the
            # default one, MariaDB 10.11 answers some BETWEEN filters on an indexed column
            # from the wrong index range.
            if charset == sqltypes.MARIADB_CHARSET:
                _setup(cursor, f"SET collation_connection = {sqltypes.MARIADB_COLLATION}")
            cursor.close()
    else:
        return

    @_marked
    def connect(dbapi_connection: Any, record: Any) -> None:
        setup(dbapi_connection)
        record.info[_READY] = True

    @_marked
    def checkout(dbapi_connection: Any, record: Any, _proxy: Any) -> None:
        if not record.info.get(_READY):
            setup(dbapi_connection)
            record.info[_READY] = True

    with _CONFIGURING:
        if not _has_ours(engine.pool.dispatch.connect):
            event.listen(engine, "connect", connect)
            if adopted:
                event.listen(engine, "checkout", checkout)


def _counting_from(first: int) -> RowNumber:
    return first.__add__


@dataclass
class _Model:
    """A dataclass bound to one database: its tables and per-column processors."""

    schema: TableSchema
    table: sa.Table
    codec: RowCodec                        # row encoders and decoders (see rowcodec)
    names: list[str]                       # SQL columns, companions included
    fields: list[str]                      # schema columns (one per field, parent key...)
    field_index: list[int]                 # which schema columns are dataclass fields
    encoders: list[Processor]              # bulk path, per schema column (codec.fast)
    binds: list[Processor]                 # the dialect's bind processor, per SQL column
    registry_encoders: list[Processor]     # rule + registry codec (SQLAlchemy executes)
    plain: bool                            # rows map 1:1 onto cls(*row)
    build: Callable[..., Any]              # field values (columns, then child lists) -> obj
    children: list[tuple[str, _Model]]
    sql_cache: dict[str, str]

    @property
    def cls(self) -> type:
        return self.schema.cls


def _normalise_url(url: str | sa.URL | Path) -> sa.URL:
    if isinstance(url, sa.URL):
        return url
    text = str(url)
    if "://" not in text:  # a plain path means an SQLite file
        return sa.make_url(f"sqlite:///{text}")
    return sa.make_url(text)


class Store:
    """A database holding dataclass tables.

    ``Store()`` opens (or creates) ``entityworks.db`` in the current directory; any SQLAlchemy
    URL or a plain file path works: ``Store("levels.db")``,
    ``Store("postgresql+psycopg://user@host/db")``, ``Store("mysql+pymysql://root@host/db")``.
    On SQLite the journal is WAL, foreign keys are enforced and writers wait up to
    ``busy_timeout`` seconds for the lock.

    ``engine_options`` go to ``sqlalchemy.create_engine`` (pool sizes, timeouts...), checked
    first; ``Store(engine=...)`` uses an Engine of yours instead, with the same connection
    set-up (see :func:`_configure_engine`), and leaves it open on :meth:`close`. Options or
    engines that would break the Store's transactions raise :class:`ConfigurationError`.
    Statements are logged on ``entityworks.sql`` (see :mod:`entityworks.sql.log`).
    """

    def __init__(self, url: str | sa.URL | Path | None = None, *,
                 engine: sa.Engine | None = None,
                 engine_options: Mapping[str, Any] | None = None,
                 registry: TypeRegistry | None = None, busy_timeout: float = 30.0,
                 echo: bool = False) -> None:
        if isinstance(busy_timeout, bool) or not isinstance(busy_timeout, int | float) \
                or not 0 <= busy_timeout < 2**31 / 1000:
            raise ConfigurationError(f"busy_timeout must be a number of seconds >= 0 (and "
                                     f"finite), got {busy_timeout!r}")
        self.registry: TypeRegistry = the_registry(registry or default_registry)
        self.busy_timeout: float = busy_timeout
        if engine is not None:
            if url is not None or engine_options is not None or echo:
                raise ConfigurationError(
                    "Store(engine=...) takes the engine as it is: pass no url, "
                    "engine_options or echo with it (set those when creating the engine)")
            self.url: sa.URL = _adopted_url(engine)
            self._own_engine = False
            self.engine: sa.Engine = engine
        else:
            self.url = _normalise_url("sqlite:///entityworks.db" if url is None else url)
            self._own_engine = True
            self.engine = self._make_engine(echo, _checked_options(engine_options, self.url))
        _configure_engine(self.engine, busy_timeout, adopted=not self._own_engine)
        watch(self.engine)
        store_logger.debug("store on %s%s", self.url.render_as_string(hide_password=True),
                           "" if self._own_engine else " (engine given)")
        self.dialect: sa.Dialect = self.engine.dialect
        self._dbapi_error = self.dialect.loaded_dbapi.Error
        self._local = threading.local()
        self._models: dict[type, _Model] = {}
        #: One MetaData for every table of the store, so that tables can refer to each other.
        self._metadata = sa.MetaData()
        self._lock = threading.RLock()
        # Single-row calls on an SQLite file run on a raw connection kept per thread (see
        # _point_connection); closing the store starts a new generation of them.
        self._point_ok = self.dialect.name == "sqlite" and self.url.database not in (
            None, "", ":memory:") and "mode=memory" not in str(self.url)
        self._point_generation = 0
        self._point_connections: list[Any] = []

    def _make_engine(self, echo: bool, options: dict[str, Any]) -> sa.Engine:
        """The store's own engine for ``self.url``; its connections are set up by
        :func:`_configure_engine`. ``options`` (checked) go to ``create_engine``."""
        url = self.url
        if url.get_backend_name() != "sqlite":
            mysql = url.get_backend_name() in _MYSQL
            if mysql and "charset" not in url.query:
                url = url.update_query_dict({"charset": "utf8mb4"})
            return _create_engine(url, {"echo": echo, "pool_pre_ping": True, **options})
        kwargs: dict[str, Any] = {"echo": echo, **options}
        kwargs["connect_args"] = {"timeout": self.busy_timeout, "check_same_thread": False,
                                  **options.get("connect_args", {})}
        if _sqlite_memory(url):
            kwargs["poolclass"] = StaticPool  # one connection: one database
        return _create_engine(url, kwargs)

    # -- lifecycle -----------------------------------------------------------------------
    def close(self) -> None:
        """Release every pooled connection."""
        with self._lock:
            self._point_generation += 1
            held, self._point_connections = self._point_connections, []
        for raw in held:
            try:
                raw.close()
            except Exception:  # pragma: no cover - a connection already gone
                pass
        if self._own_engine:  # an engine given to Store(engine=...) stays its owner's
            self.engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Store({self.url.render_as_string(hide_password=True)!r})"

    # -- models --------------------------------------------------------------------------
    def schema(self, cls: type) -> TableSchema:
        """The inferred schema of ``cls`` (see :func:`entityworks.table_schema`)."""
        return table_schema(cls, self.registry)

    def table(self, cls: type) -> sa.Table:
        """The SQLAlchemy ``Table`` this store uses for ``cls``."""
        return self._model(cls).table

    # -- public members for the Store's collaborators (sql.exchange): tiny wrappers --------
    def model(self, cls: type) -> _Model:
        """The store's model of ``cls``: its schema, table and row codec."""
        return self._model(cls)

    def connection(self, write: bool = False) -> AbstractContextManager[sa.Connection]:
        """The calling thread's connection, in a transaction (a savepoint for a write
        inside :meth:`transaction`)."""
        return self._connection(write)

    @property
    def in_transaction(self) -> bool:
        """True inside :meth:`transaction` on the calling thread."""
        return getattr(self._local, "conn", None) is not None

    def tables_with_references(self, model: _Model) -> list[sa.Table]:
        """The tables :meth:`create` makes for ``model`` (referenced tables first)."""
        return self._tables_with_references(model)

    @property
    def dbapi_error(self) -> type[Exception]:
        """The DBAPI driver's base error class."""
        error: type[Exception] = self._dbapi_error
        return error

    def _model(self, cls: type) -> _Model:
        try:
            return self._models[cls]
        except (KeyError, TypeError):
            pass
        with self._lock:
            if cls not in self._models:
                schema = table_schema(cls, self.registry)
                if self.dialect.name in _MYSQL:
                    _check_mariadb_names(schema)
                # the tables this one refers to first: its foreign keys point at their
                # columns (build_tables refuses a cycle before this could recurse forever)
                targets = {c.references for c in schema.columns} - {None, cls}
                metadata = self._metadata
                build_tables(schema, sa.MetaData(), self.dialect.name, {}, self.schema)
                for target in targets:
                    self._model(target)  # type: ignore[arg-type]
                self._release_names(schema)
                build_tables(schema, metadata, self.dialect.name, self._live(schema),
                             self.schema)
                self._models[cls] = self._make_model(schema, metadata)
            return self._models[cls]

    def _release_names(self, schema: TableSchema) -> None:
        """Free the names of ``schema``'s tables in the store's MetaData before they are
        built (again): another class may hold them (two classes for one table, e.g. before
        and after a migration), which is then rebuilt when it is used again."""
        for name in {schema.name, *(child.name for child in schema.descendants)}:
            table = self._metadata.tables.get(name)
            if table is None:
                continue
            owner = schema_of(table)
            if owner is not None and owner.cls is not schema.cls:
                self._models.pop(owner.cls, None)
            self._metadata.remove(table)

    def _live(self, schema: TableSchema) -> Live:
        """The columns of the tables of ``schema`` that exist already (name -> declared type).

        A table created before a companion column existed keeps its layout (see ``tables``).
        """
        names = [schema.name, *(child.name for child in schema.descendants)]
        live: dict[str, dict[str, str]] = {}
        with self._connection() as conn:
            inspector = sa.inspect(conn)
            if self.dialect.name == "sqlite":
                for name in names:
                    # a table-valued pragma: the table name is a bound parameter
                    rows: Sequence[Any] = conn.execute(
                        sa.select(sa.column("name"), sa.column("type"))
                        .select_from(sa.func.pragma_table_info(name))).all()
                    if rows:
                        _same_name_in_case(schema, name, inspector.get_table_names())
                        # An ANY column is trusted only with the CHECK on typeof we give it.
                        checked = {m.group(1) for check in inspector.get_check_constraints(name)
                                   if (m := _TYPEOF_CHECK.search(check.get("sqltext") or ""))}
                        live[name] = {n: (t or "").upper() + ("" if n in checked else "?")
                                      for n, t in rows}
                return live
            for name in names:
                if inspector.has_table(name):
                    live[name] = {c["name"]: "" for c in inspector.get_columns(name)}
        return live

    def _make_model(self, schema: TableSchema, metadata: sa.MetaData) -> _Model:
        table = metadata.tables[schema.name]
        codec = row_codec(schema, table, self.dialect)
        names = codec.fields
        offset = schema.links  # a child table's (parent_key, positions...) come first
        # (an Optional child list is a column too: its value, [] or None, starts the list)
        build = instance_builder(schema.cls, [*names[offset:], *(
            child.field for child in schema.children if not child.optional)])
        # Rows are decoded before they are built, so decoders do not stop the fast path.
        plain = not schema.children and offset == 0 and build is schema.cls
        children = [(child.field, self._make_model(child.schema, metadata))
                    for child in schema.children]
        return _Model(schema, table, codec, codec.names, names,
                      list(range(offset, len(names))), codec.fast, codec.binds,
                      codec.registry, plain, build, children, {})

    # -- DDL -----------------------------------------------------------------------------
    def create(self, cls: type) -> sa.Table:
        """Create the table of ``cls`` and its child tables if they do not exist.

        All of them or none: a failure raises SchemaError and leaves no new table behind.
        """
        model = self._model(cls)
        tables = self._tables_with_references(model)
        if self.dialect.name in _MYSQL:
            self._create_one_by_one(model, tables)
            return model.table
        try:  # SQLite and PostgreSQL roll DDL back with the transaction (or savepoint)
            with self._connection(write=True) as conn, schema_lock(conn):
                model.table.metadata.create_all(conn, tables=tables, checkfirst=True)
        except (sa.exc.StatementError, self._dbapi_error) as exc:
            raise _create_error(model, exc) from exc
        return model.table

    def _create_one_by_one(self, model: _Model, tables: list[sa.Table]) -> None:
        """MariaDB commits every CREATE TABLE as it runs: create the missing tables one by
        one and, if one fails, drop those this call created."""
        with self._connection() as conn:
            inspector = sa.inspect(conn)
            missing = [t for t in tables if not inspector.has_table(t.name)]
        if not missing:
            return
        if getattr(self._local, "conn", None) is not None:
            raise EntityworksError(
                f"cannot create table {missing[0].name!r} inside transaction(): MariaDB would "
                "commit the open transaction; create the tables before it")
        created: list[sa.Table] = []
        with self.engine.connect() as conn, schema_lock(conn):
            # look again under the lock: another process may have created them meanwhile
            inspector = sa.inspect(conn)
            missing = [t for t in missing if not inspector.has_table(t.name)]
            try:
                for table in missing:  # referenced tables come first
                    table.create(conn)
                    created.append(table)
            except (sa.exc.StatementError, self._dbapi_error) as exc:
                for table in reversed(created):
                    table.drop(conn, checkfirst=True)
                conn.commit()
                raise _create_error(model, exc) from exc
            conn.commit()

    def _tables_with_references(self, model: _Model) -> list[sa.Table]:
        """The tables ``create`` makes for ``model``: those its foreign keys refer to (and
        theirs), then its own and its child tables."""
        out: list[sa.Table] = []
        seen: set[type] = set()

        def visit(m: _Model) -> None:
            if m.cls in seen:
                return
            seen.add(m.cls)
            for c in m.schema.columns:
                if c.references is not None and c.references is not m.cls:
                    visit(self._model(c.references))
            out.append(m.table)
            out.extend(child.table for child in _descendants(m))

        visit(model)
        return out

    def drop(self, cls: type) -> None:
        """Drop the table of ``cls`` and its child tables if they exist."""
        model = self._model(cls)
        tables = [model.table] + [child.table for child in _descendants(model)]
        if self.dialect.name in _MYSQL and getattr(self._local, "conn", None) is not None:
            with self._connection() as conn:
                inspector = sa.inspect(conn)
                if any(inspector.has_table(t.name) for t in tables):
                    raise EntityworksError(
                        f"cannot drop table {model.schema.name!r} inside transaction(): "
                        "MariaDB would commit the open transaction; drop it outside")
            return
        try:
            with self._connection(write=True) as conn:
                _refuse_referenced(conn, model, {t.name for t in tables})
                model.table.metadata.drop_all(conn, tables=tables, checkfirst=True)
        except (sa.exc.StatementError, self._dbapi_error) as exc:
            raise SchemaError(f"cannot drop table {model.schema.name!r}: {_error_text(exc)}",
                              cls=model.cls) from exc

    def table_names(self) -> list[str]:
        """Names of the tables in the database."""
        with self._connection() as conn:
            return sa.inspect(conn).get_table_names()

    # -- transactions --------------------------------------------------------------------
    @contextmanager
    def transaction(self) -> Iterator[Store]:
        """Group operations: all of them are kept, or (on an exception) none.

        Nested use becomes a savepoint. The transaction belongs to the calling thread.
        """
        outer = getattr(self._local, "conn", None)
        if outer is not None:
            with outer.begin_nested():
                yield self
            return
        with self.engine.connect() as conn:
            conn.execution_options(entityworks_write=True)
            with conn.begin():
                self._local.conn = conn
                try:
                    yield self
                finally:
                    self._local.conn = None

    @contextmanager
    def _connection(self, write: bool = False) -> Iterator[sa.Connection]:
        """The calling thread's connection, in a transaction.

        A write inside :meth:`transaction` runs in its own savepoint, so that a call which
        fails part-way (a later batch, a child row) leaves the outer transaction exactly as
        it was before the call.
        """
        current = getattr(self._local, "conn", None)
        if current is not None:
            if write:
                with current.begin_nested():
                    yield current
            else:
                yield current
            return
        with self.engine.connect() as conn:
            if write:
                conn.execution_options(entityworks_write=True)
            with conn.begin():
                yield conn

    # -- writing -------------------------------------------------------------------------
    def insert(self, obj: T) -> T:
        """Insert one instance (and its child rows); a generated key is set on ``obj``."""
        if not self._point_write(obj, "insert"):
            self.insert_many([obj])
        return obj

    def insert_many(self, objs: Iterable[Any], *, batch_size: int = BATCH) -> int:
        """Insert instances of one dataclass in one transaction; returns the row count.

        Rows whose integer key is ``None`` get a generated key, written back to the instance.
        If any row fails, nothing is written and :class:`WriteError` names the row index and
        the column.
        """
        objs = objs if isinstance(objs, list) else list(objs)
        if not objs:
            return 0
        model = self._model_for(objs)
        with _unset_fields_named(model, objs), self._connection(write=True) as conn:
            self._insert(conn, model, objs, batch_size)
        return len(objs)

    def insert_encoded(self, batch: EncodedRows) -> list[Any]:
        """Insert rows that :func:`entityworks.sql.encoded.encode_rows` encoded (usually in the
        process that made the objects), with their child rows, in one transaction; returns
        their keys (generated where they were ``None``), in order.

        Only the dialect's part of the work is left here: bind processors, SQLite's checks,
        companion columns. A refused row raises :class:`WriteError` naming it; nothing of
        the batch is then kept.
        """
        from .encoded import layout

        model = self._model(batch.cls)
        if batch.layout != layout(model.schema):
            raise WriteError(f"{model.schema.name}: rows encoded for columns "
                             f"{list(batch.layout)}, the table has {list(layout(model.schema))}",
                             table=model.schema.name)
        if not batch.rows:
            return []
        if batch.children and (model.schema.primary_key is None or model.schema.composite):
            raise WriteError(f"{model.schema.name}: child rows need the parent's single key",
                             table=model.schema.name)  # pragma: no cover - refused by schema
        children = dict(model.children)
        with self._connection(write=True) as conn:
            keys = self._write_encoded(conn, model, batch.rows, _counting_from(0))
            for part in batch.children:
                child = children[part.field]
                links = child.schema.links
                if links != 2 or part.layout != layout(child.schema, links):
                    raise WriteError(f"{child.schema.name}: rows encoded for other columns",
                                     table=child.schema.name)
                prefixes = chain.from_iterable(map(repeat, [(k,) for k in keys], part.counts))
                rows = list(map(add, prefixes, part.rows))
                starts = list(accumulate(part.counts, initial=0))
                # a child row's number in errors: its owner's
                self._write_encoded(conn, child, rows,
                                    lambda i, s=starts: bisect_right(s, i) - 1)  # type: ignore[misc]
        return keys

    def _write_encoded(self, conn: sa.Connection, model: _Model, rows: list[tuple[Any, ...]],
                       number: RowNumber) -> list[Any]:
        """Write encoded schema rows; the keys of a top-level table's rows (generated where
        ``None``), else ``[]``."""
        codec = model.codec
        sqlite = self.dialect.name == "sqlite"
        key = model.schema.primary_key if model.schema.parent is None else None
        at = model.fields.index(key.name) if key is not None else -1
        keys = [row[at] for row in rows] if key is not None else []
        generated = [i for i, k in enumerate(keys) if k is None] if key is not None else []
        if generated and not key.autoincrement:  # type: ignore[union-attr]
            raise WriteError(f"{model.schema.name}: row {number(generated[0])} has no key",
                             table=model.schema.name, row=number(generated[0]),
                             column=key.name)  # type: ignore[union-attr]
        spread = codec.spread

        def sql_rows(indexes: Sequence[int], bound: bool) -> list[Sequence[Any]]:
            """SQL rows: bound for the driver itself, else for SQLAlchemy (which binds)."""
            encoders = [(i, e) for i, e in enumerate(
                codec.encoded_bound if bound else codec.encoded) if e is not None]
            if not encoders and spread is None:
                return [rows[i] for i in indexes]
            out: list[Sequence[Any]] = []
            for n in indexes:
                values = rows[n]
                row = list(values)
                for i, enc in encoders:
                    try:
                        row[i] = enc(row[i])
                    except (TypeError, ValueError) as exc:
                        raise encode_error(model.fields[i], row[i], exc, number(n)) from None
                out.append(row if spread is None else spread(values, row))
            return out

        chosen = set(generated)
        given = [i for i in range(len(rows)) if i not in chosen] if chosen else range(len(rows))
        if generated:
            table = model.table
            name = key.name  # type: ignore[union-attr]
            rowid = sqlite and is_rowid(key, model.schema)  # type: ignore[arg-type]
            part = sql_rows(generated, rowid)
            if rowid:
                # NULL makes SQLite pick the rowid; one statement per row, as sqlite3's
                # executemany returns nothing
                sql = model.sql_cache.get("encoded:returning")
                if sql is None:
                    compiled = table.insert().returning(table.c[name]).compile(
                        dialect=self.dialect, column_keys=model.names)
                    if [compiled.binds[b].key for b in compiled.positiontup or []] \
                            != model.names:  # pragma: no cover - guards the raw path
                        raise EntityworksError("unexpected parameter order")
                    sql = model.sql_cache["encoded:returning"] = compiled.string
                cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
                new = self._guard(conn, model, lambda: [
                    cursor.execute(sql, r).fetchone()[0]
                    for r in _logged(sql, part, "execute", self.engine)],
                    lambda i: number(generated[i]), raw=(sql, lambda: part))
            else:
                stmt = table.insert().returning(table.c[name], sort_by_parameter_order=True)
                dicts = [{n: v for n, v in zip(model.names, r, strict=True) if n != name}
                         for r in part]  # the registry's values: SQLAlchemy binds them
                new = [k for (k,) in self._guard(conn, model,
                                                  lambda: conn.execute(stmt, dicts).all(),
                                                  lambda i: number(generated[i]),
                                                  replay=(stmt, dicts))]
            for i, k in zip(generated, new, strict=True):
                keys[i] = k
        if given:
            at_row: RowNumber = lambda i: number(given[i])  # noqa: E731
            if sqlite:
                sqlrows = sql_rows(given, True)
                statement = self._insert_sql(model)
                cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
                self._guard(conn, model, lambda: cursor.executemany(
                    statement, _logged(statement, sqlrows, "executemany", self.engine)),
                    at_row, raw=(statement, lambda: sqlrows))
                return keys
            if self.dialect.name == "postgresql":  # one COPY of the bound rows
                bound = sql_rows(given, True)
                if codec.gates_pass(bound) and self._attempt(
                        conn, lambda: self._copy(conn, model, [bound])):
                    return keys
            # refused by COPY (then located row by row) or another database
            insert = model.table.insert()
            dicts = [dict(zip(model.names, r, strict=True)) for r in sql_rows(given, False)]
            self._guard(conn, model, lambda: conn.execute(insert, dicts), at_row,
                        replay=(insert, dicts))
        return keys

    def upsert(self, obj: T) -> T:
        """Insert ``obj`` or, if its key exists, replace that row (and its child rows)."""
        self.upsert_many([obj])
        return obj

    def upsert_many(self, objs: Iterable[Any], *, batch_size: int = BATCH) -> int:
        """Insert-or-replace by primary key, in one transaction; returns the row count."""
        objs = objs if isinstance(objs, list) else list(objs)
        if not objs:
            return 0
        model = self._model_for(objs)
        if model.schema.composite:
            self._upsert_composite(model, objs, batch_size)
            return len(objs)
        key = model.schema.require_key("upsert")
        with _unset_fields_named(model, objs):
            keys = list(map(attrgetter(key.name), objs))
        if not _check_keys(model, keys) and None in keys:
            raise WriteError(f"upsert needs a key on every row; row {keys.index(None)} of "
                             f"{model.schema.name!r} has {key.name}=None",
                             table=model.schema.name, row=keys.index(None), column=key.name)
        with _unset_fields_named(model, objs), self._connection(write=True) as conn:
            if model.children:
                self._delete_children(conn, model, keys)
            self._write_rows(conn, model, objs, _counting_from(0), self._upsert_sql(model),
                             "upsert", batch_size)
            self._insert_children(conn, model, objs, keys, batch_size)
        return len(objs)

    def _upsert_composite(self, model: _Model, objs: list[Any], batch_size: int) -> None:
        """Upsert rows of a table with a composite key (no child tables, no generated key)."""
        columns = model.schema.key_columns
        with _unset_fields_named(model, objs):
            keys = list(map(attrgetter(*(c.name for c in columns)), objs))
        for row, key in enumerate(keys):
            for c, value in zip(columns, key, strict=True):
                if value is None:
                    raise WriteError(f"upsert needs a key on every row; row {row} of "
                                     f"{model.schema.name!r} has {c.name}=None",
                                     table=model.schema.name, row=row, column=c.name)
        with _unset_fields_named(model, objs), self._connection(write=True) as conn:
            self._write_rows(conn, model, objs, _counting_from(0), self._upsert_sql(model),
                             "upsert", batch_size)

    @overload
    def update(self, target: type, values: Mapping[str, Any], *, where: Any) -> int: ...

    @overload
    def update(self, target: object) -> None: ...

    def update(self, target: Any, values: Mapping[str, Any] | None = None, *,
               where: Any = None) -> int | None:
        """Write every field of an instance to the row with its key (child rows are
        replaced), or, given a class, set ``values`` on the rows matching ``where``.

        ``update(obj)`` raises :class:`NotFoundError` when no row has the key of ``obj``.
        ``update(Cls, values={...}, where=...)`` returns the number of rows matched; see
        :meth:`_update_where`.
        """
        if isinstance(target, type):
            return self._update_where(target, values, where)
        if values is not None or where is not None:
            raise EntityworksError(
                "update(instance) writes the fields of the instance; values= and where= are "
                "for a class: update(Cls, values={...}, where=...)")
        obj = target
        if self._point_write(obj, "update"):
            return None
        model = self._model_for([obj])
        keys = model.schema.require_keys("update")
        with _unset_fields_named(model, [obj]):
            key_value = _key_of(model, obj)
            row = self._as_dicts(model, [obj], _counting_from(0))[0]
        table = model.table
        names = [k.name for k in keys]
        params = [f"_ew_key{i or ''}" for i in range(len(keys))]
        stmt = table.update().where(*(
            table.c[name] == sa.bindparam(param, type_=table.c[name].type)
            for name, param in zip(names, params, strict=True)))
        kept = set(names) - set(_restated_keys(model, self.dialect.name))
        with _unset_fields_named(model, [obj]), self._connection(write=True) as conn:
            result = self._guard(conn, model, lambda: conn.execute(
                stmt.values({k: v for k, v in row.items() if k not in kept}),
                {param: row[name] for name, param in zip(names, params, strict=True)}),
                _counting_from(0), single=row)
            if result.rowcount == 0:
                raise NotFoundError(f"{model.schema.name!r} has no row with "
                                    f"{_key_label(model)}={key_value!r}")
            if model.children:
                self._delete_children(conn, model, [key_value])
                self._insert_children(conn, model, [obj], [key_value], BATCH)
        return None

    def _update_where(self, cls: type, values: Mapping[str, Any] | None, where: Any) -> int:
        """``UPDATE ... SET values WHERE where``, in one statement; returns the rows matched.

        Every value goes through its column's registry rule and codec, as an inserted one
        does: a value of the wrong type raises :class:`ValueEncodingError` naming the column,
        and nothing is written. ``where`` is required (``where={}`` updates every row), as for
        :meth:`delete`. The primary key and child-table fields cannot be set this way.
        """
        model = self._model(cls)
        if where is None:
            raise EntityworksError(
                "update(cls, values=...) needs where=...; pass where={} to update every row")
        assignments = self._update_assignments(model, values)
        table = model.table
        stmt = table.update().values(assignments)
        condition = self._where(model, where)
        if condition is not None:
            stmt = stmt.where(condition)
        with self._connection(write=True) as conn:
            # a refusal names the column (a broken foreign key's too) and keeps nothing
            result = self._guard(conn, model, lambda: conn.execute(stmt), _counting_from(0),
                                 single=assignments)
            return int(result.rowcount)

    def _update_assignments(self, model: _Model, values: Any) -> dict[str, Any]:
        """``values`` (field column -> value) as SQL column -> encoded value, companion
        columns included, each checked and encoded by the registry like an inserted row."""
        schema = model.schema
        if not isinstance(values, Mapping) or not values:
            raise EntityworksError(
                f"update({model.cls.__qualname__}, values=...) takes a non-empty dict of "
                f"column -> value, got {values!r}")
        children = {child.field for child in schema.children}
        fields = model.fields
        given: list[Any] = [None] * len(fields)
        encoded: list[Any] = [None] * len(fields)
        chosen: set[str] = set()
        for name, value in values.items():
            if not isinstance(name, str):
                raise EntityworksError(f"update values= keys must be column names, got {name!r}")
            if name in children:
                raise WriteError(
                    f"{schema.name}.{name} is a child table, which update(cls, values=...) "
                    "cannot set; update each instance with update(obj), which replaces its "
                    "child rows; nothing was written", table=schema.name, column=name)
            column = schema.column(name)  # UnknownColumnError names the real ones
            if column.primary_key:
                raise WriteError(
                    f"{schema.name}: update(cls, values=...) cannot change the primary key "
                    f"{name!r} (child rows and other references hold it); insert the rows "
                    "under their new keys and delete the old ones; nothing was written",
                    table=schema.name, column=name)
            i = fields.index(name)
            if value is None and not column.nullable:
                raise encode_error(name, value, ValueError(
                    "the column is not nullable (annotate the field Optional to allow None)"))
            encoder = model.registry_encoders[i]
            try:
                encoded[i] = encoder(value) if encoder is not None else value
            except Exception as exc:
                raise encode_error(name, value, exc) from None
            given[i] = value
            chosen.add(name)
        try:
            spread = model.codec.spread
            row = spread(given, encoded) if spread is not None else encoded
        except Exception as exc:  # pragma: no cover - the rule above refuses first
            raise encode_error(", ".join(sorted(chosen)), values, exc) from None
        dialect = self.dialect.name
        owned = set(chosen)
        for c in schema.columns:
            if c.name in chosen:
                owned.update(part.column(c.name)
                             for part in table_companions(model.table, c, dialect))
        return {n: v for n, v in zip(model.names, row, strict=True) if n in owned}

    def delete(self, target: Any, *, where: Any = None) -> int:
        """Delete one instance (by its key) or, given a class, the rows matching ``where``.

        ``where={}`` deletes every row; ``where`` is required for a class so that a
        forgotten filter cannot empty a table. Child rows go with their parents.
        """
        if isinstance(target, type):
            model = self._model(target)
            if where is None:
                raise EntityworksError(
                    "delete(cls) needs where=...; pass where={} to delete every row")
            condition = self._where(model, where)
        else:
            if where is not None:
                raise EntityworksError("delete(instance) deletes by key; where= is for a class")
            done = self._point_write(target, "delete")
            if done:
                return done - 1
            model = self._model(type(target))
            model.schema.require_keys("delete")
            condition = self._key_condition(model, _key_of(model, target))
        table = model.table
        with self._connection(write=True) as conn:
            try:
                if model.children:
                    key = model.schema.require_key("delete")
                    parents = sa.select(table.c[key.name])
                    if condition is not None:
                        parents = parents.where(condition)
                    for child in reversed(_descendants(model)):  # the deepest first
                        conn.execute(child.table.delete().where(
                            child.table.c[PARENT_COLUMN].in_(parents)))
                stmt = table.delete()
                if condition is not None:
                    stmt = stmt.where(condition)
                return conn.execute(stmt).rowcount
            except (sa.exc.StatementError, self._dbapi_error) as exc:
                # The savepoint (or transaction) of this call rolls back: child rows stay.
                raise WriteError(f"{model.schema.name}: cannot delete: {_error_text(exc)}; "
                                 "nothing was deleted", table=model.schema.name) from exc

    # -- reading -------------------------------------------------------------------------
    def get(self, cls: type[T], key: Any) -> T | None:
        """The instance whose primary key is ``key``, or ``None``."""
        model = self._model(cls)
        model.schema.require_keys("get")
        raw = self._point_connection(model) if not model.schema.composite else None
        if raw is not None and key is not None:
            return self._point_get(raw, model, key)  # type: ignore[no-any-return]
        stmt = sa.select(model.table).where(self._key_condition(model, key)).limit(1)
        return next(iter(self._iterate(model, stmt)), None)

    @overload
    def select(self, cls: type[T], where: Any = None, order_by: Any = None,
               limit: int | None = None, offset: int | None = None, *,
               columns: None = None, as_dict: Literal[False] = False) -> Iterator[T]: ...

    @overload
    def select(self, cls: type, where: Any = None, order_by: Any = None,
               limit: int | None = None, offset: int | None = None, *,
               columns: Sequence[str], as_dict: Literal[False] = False
               ) -> Iterator[tuple[Any, ...]]: ...

    @overload
    def select(self, cls: type, where: Any = None, order_by: Any = None,
               limit: int | None = None, offset: int | None = None, *,
               columns: Sequence[str] | None = None, as_dict: Literal[True]
               ) -> Iterator[dict[str, Any]]: ...

    def select(self, cls: type, where: Any = None, order_by: Any = None,
               limit: int | None = None, offset: int | None = None, *,
               columns: Sequence[str] | None = None, as_dict: bool = False) -> Iterator[Any]:
        """Stream instances of ``cls``; see :mod:`entityworks.sql.filters` for ``where``.

        ``columns=["a", "b"]`` streams tuples of just those columns instead, and
        ``as_dict=True`` dicts (of ``columns``, or of every column), decoded as the instances
        would hold them. Arguments are checked at once; rows are fetched in batches while you
        iterate.
        """
        model = self._model(cls)
        stmt = self._select_stmt(model, where, order_by, limit, offset)
        if columns is None and not as_dict:
            return self._iterate(model, stmt)
        names = self._projected_names(model, columns)
        batches = self._projected_batches(model, stmt, names)
        if as_dict:
            return (dict(zip(names, row, strict=True)) for batch in batches for row in batch)
        return (row for batch in batches for row in batch)

    def count(self, cls: type, where: Any = None) -> int:
        """Number of rows matching ``where``."""
        model = self._model(cls)
        stmt = sa.select(sa.func.count()).select_from(model.table)
        condition = self._where(model, where)
        if condition is not None:
            stmt = stmt.where(condition)
        with self._connection() as conn, self._reading(model):
            return int(conn.execute(stmt).scalar_one())

    def rows(self, cls: type, where: Any = None, order_by: Any = None,
             limit: int | None = None, offset: int | None = None, *,
             columns: Sequence[str] | None = None) -> Iterator[list[tuple[Any, ...]]]:
        """Batches of decoded column tuples (table columns, in order) without building objects;
        with ``columns=[...]``, tuples of just those columns, in that order.

        The building block of the Arrow and XML exporters and of ``select(columns=...)``.
        """
        model = self._model(cls)
        stmt = self._select_stmt(model, where, order_by, limit, offset)
        if columns is None:
            return self._batches(model, stmt)
        return self._projected_batches(model, stmt, self._projected_names(model, columns))

    def _projected_names(self, model: _Model, columns: Any) -> list[str]:
        """The checked column names of ``columns=`` (``None``: every field column)."""
        schema = model.schema
        if columns is None:
            return [c.name for c in schema.field_columns]
        if isinstance(columns, str | bytes) or not isinstance(columns, Iterable):
            raise FilterError(f"columns= takes a list of column names, got {columns!r}")
        names = list(columns)
        if not names:
            raise FilterError("columns= needs at least one column name")
        children = {child.field for child in schema.children}
        for i, name in enumerate(names):
            if not isinstance(name, str):
                raise FilterError(f"columns= takes column names, got {name!r}")
            if name in children:
                raise FilterError(f"{name!r} is a child table of {schema.name!r}, not a "
                                  "column; select the instances to read it")
            schema.column(name)  # UnknownColumnError names the real ones
            if name in names[:i]:
                raise FilterError(f"column {name!r} appears twice in columns=")
        return names

    def _projected_batches(self, model: _Model, stmt: sa.Select[Any], names: list[str]
                           ) -> Iterator[list[tuple[Any, ...]]]:
        """Batches of the ``names`` columns of ``stmt``'s rows.

        Only those columns (and their companions) are read; the others are selected as NULL,
        so that the table's own row decoder, the one instances are built from, decodes them.
        """
        table = model.table
        wanted = set(names)
        needed = set(names)
        for c in model.schema.columns:
            if c.name in wanted:
                needed.update(part.column(c.name) for part in
                              table_companions(table, c, self.dialect.name))
        stmt = stmt.with_only_columns(
            *(table.c[n] if n in needed else sa.null().label(f"_ew_unread_{i}")
              for i, n in enumerate(model.names)), maintain_column_froms=True)
        where = [model.fields.index(n) for n in names]
        pick: Callable[[Sequence[Any]], tuple[Any, ...]]
        if len(where) == 1:
            only = where[0]
            pick = lambda row: (row[only],)  # noqa: E731
        else:
            pick = itemgetter(*where)
        return (list(map(pick, batch)) for batch in self._batches(model, stmt))

    def _where(self, model: _Model, where: Any) -> sa.ColumnElement[bool] | None:
        """``where`` compiled for ``model``'s table, refused before any SQL where this
        backend could not even compare a value: PostgreSQL's text holds no NUL, and its
        driver fails on such a parameter (SQLite and MariaDB compare it as stored)."""
        condition = compile_where(where, model.table, model.schema)
        if condition is not None and self.dialect.name == "postgresql":
            for element in sa.sql.visitors.iterate(condition):
                if isinstance(element, sa.BindParameter):
                    values = element.value if isinstance(element.value, list | tuple) else [
                        element.value]
                    held = [v for v in values if isinstance(v, str) and "\x00" in v]
                    if held:
                        raise FilterError(
                            f"{model.schema.cls.__name__}: the filter value {held[0]!r} holds "
                            "NUL (0x00), which PostgreSQL text cannot hold: no row can match")
        return condition

    def _select_stmt(self, model: _Model, where: Any, order_by: Any, limit: int | None,
                     offset: int | None) -> sa.Select[*tuple[Any, ...]]:
        stmt = sa.select(model.table)
        condition = self._where(model, where)
        if condition is not None:
            stmt = stmt.where(condition)
        clauses = compile_order_by(order_by, model.table, model.schema)
        if clauses:
            stmt = stmt.order_by(*clauses)
        for name, value in (("limit", limit), ("offset", offset)):
            if value is not None and (not isinstance(value, int) or isinstance(value, bool)
                                      or not 0 <= value < 2**63):
                raise EntityworksError(f"{name} must be a non-negative int, got {value!r}")
        if limit is not None:
            stmt = stmt.limit(limit)
        if offset is not None:
            if limit is None and self.dialect.name in ("mysql", "mariadb", "sqlite"):
                stmt = stmt.limit(-1 if self.dialect.name == "sqlite" else 2**64 - 1)
            stmt = stmt.offset(offset)
        return stmt

    def _batches(self, model: _Model, stmt: sa.Select[*tuple[Any, ...]],
                 conn: sa.Connection | None = None, *, decode: bool = True
                 ) -> Iterator[list[tuple[Any, ...]]]:
        """Rows of ``stmt``, decoded (``decode=False``: as the driver gives them)."""
        if conn is None:
            with self._connection() as own:
                yield from self._batches(model, stmt, own, decode=decode)
            return
        read = model.codec.read if decode else None
        name = self.dialect.name
        # A server-side cursor streams; MariaDB's cannot share its connection with the child
        # queries of the same rows, so classes with children are read buffered there.
        # Options for this statement only: ``Connection.execution_options`` would change the
        # connection itself, and a later SAVEPOINT would then be sent as a cursor.
        options: dict[str, Any] = {}
        if name != "sqlite" and not (name in ("mysql", "mariadb") and model.children):
            options = {"stream_results": True, "max_row_buffer": FETCH}
        with self._reading(model):
            result = conn.execute(stmt, execution_options=options)
        # SQLite: the raw cursor, decoded by our own processors (fast); elsewhere the
        # SQLAlchemy result, whose processors need the driver's column types.
        fetch = result.cursor.fetchmany if name == "sqlite" else result.fetchmany
        try:
            while True:
                batch = fetch(FETCH)
                if not batch:
                    break
                if read is not None:
                    batch = list(map(read, batch))
                yield batch  # type: ignore[misc]  # DB-API rows: tuples, or Rows (tuples too)
        finally:
            result.close()

    def _iterate(self, model: _Model, stmt: sa.Select[*tuple[Any, ...]]) -> Iterator[Any]:
        cls = model.cls
        # One connection for the rows and their children (an in-memory database has only one).
        with self._connection() as conn:
            for batch in self._batches(model, stmt, conn):
                if model.plain:
                    yield from starmap(cls, batch)
                else:
                    # objects with child lists come by the thousand (a dungeon's corridors
                    # and their cells): collections during the build would find nothing to
                    # free, but walk the heap when the survivors reach the old generation
                    with paused_gc():
                        objs = self._build(model, batch, conn)
                    yield from objs

    def _build(self, model: _Model, batch: Sequence[Sequence[Any]], conn: sa.Connection
               ) -> list[Any]:
        build = model.build
        offset = model.field_index[0] if model.field_index else len(model.fields)
        if model.children:  # each parent starts with empty child lists, filled below
            count = sum(not child.optional for child in model.schema.children)
            objs = [build(*row[offset:], *[[] for _ in range(count)]) for row in batch]
        elif offset:
            objs = [build(*row[offset:]) for row in batch]
        else:
            objs = list(starmap(build, batch))
        if model.children and objs and model.schema.parent is None:
            # (children of children are loaded with their parents, from the root's keys)
            key = model.schema.primary_key.name  # type: ignore[union-attr]
            by_key = {getattr(o, key): o for o in objs}
            self._load_children(model, by_key, _encoded_keys(model, list(by_key)), conn)
        return objs

    def _load_children(self, model: _Model, owners: dict[Any, Any],
                       encoded: list[Any], conn: sa.Connection) -> None:
        """Fill the child lists of ``owners`` (keyed by their row's link: the root's key, or
        below the first level a tuple of it and the positions) with their items, and theirs,
        from the root keys ``encoded``.

        Child rows come by the hundred per parent (a dungeon's corridors): they are decoded
        column by column (``RowCodec.columns``), built with one ``map`` and handed to their
        owner a run at a time (rows come ordered by owner), not row by row.
        """
        for fname, child in model.children:
            links = child.schema.links
            build = child.build
            offset = child.field_index[0] if child.field_index else len(child.fields)
            lists = sum(not c.optional for c in child.schema.children)
            items: dict[Any, Any] = {}
            for start in range(0, len(encoded), 500):
                chunk = encoded[start:start + 500]
                for columns in self._child_columns(child, chunk, conn):
                    size = len(columns[0])
                    values = columns[offset:]
                    if lists:  # children of children: each item starts with empty lists
                        rows = zip(*values, strict=True) if values else repeat((), size)
                        objs = [build(*row, *[[] for _ in range(lists)]) for row in rows]
                    elif values:
                        objs = list(map(build, *values))
                    else:
                        objs = [build() for _ in range(size)]
                    keys = (columns[0] if links == 2
                            else list(zip(*columns[:links - 1], strict=True)))
                    at = 0
                    for key, run in groupby(keys):
                        end = at + sum(1 for _ in run)
                        getattr(owners[key], fname).extend(objs[at:end])
                        at = end
                    if child.children:
                        items.update(zip(zip(*columns[:links], strict=True), objs,
                                         strict=True))
            if child.children and items:
                self._load_children(child, items, encoded, conn)

    def _child_columns(self, child: _Model, keys: list[Any], conn: sa.Connection
                       ) -> Iterator[list[Sequence[Any]]]:
        """The decoded columns of ``child``'s rows whose root key is in ``keys``, ordered by
        owner and position, a fetch at a time.

        On SQLite the statement is compiled once per key count (rounded up to a power of
        two, the last key repeated) and run on the connection's raw cursor: SQLAlchemy's
        per-execution work would cost more than reading a few hundred rows. Echoed or
        listened-to statements take SQLAlchemy's path, which reports them.
        """
        table = child.table
        order = [table.c[n] for n in child.fields[:child.schema.links]]
        columns = child.codec.columns
        assert columns is not None
        if self.dialect.name != "sqlite" or self.engine.echo or _listened(self.engine):
            stmt = sa.select(table).where(table.c[PARENT_COLUMN].in_(keys)).order_by(*order)
            for batch in self._batches(child, stmt, conn, decode=False):
                yield columns(batch)
            return
        size = 1 << (len(keys) - 1).bit_length()
        sql = child.sql_cache.get(f"children:{size}")
        if sql is None:
            stmt = sa.select(table).where(table.c[PARENT_COLUMN].in_(
                [sa.bindparam(f"k{i}") for i in range(size)])).order_by(*order)
            sql = stmt.compile(dialect=self.dialect).string
            child.sql_cache[f"children:{size}"] = sql
        bind = child.codec.encoded_bound[child.fields.index(PARENT_COLUMN)]
        params = [*keys, *[keys[-1]] * (size - len(keys))]
        if bind is not None:  # the driver gets the keys as SQLAlchemy would bind them
            params = list(map(bind, params))
        if sql_logger.isEnabledFor(INFO):
            log_statement(sql, values=params)
        cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
        try:
            with self._reading(child):
                cursor.execute(sql, params)
            while fetched := cursor.fetchmany(FETCH):
                yield columns(fetched)
        finally:
            cursor.close()

    # -- XML and Arrow (thin: the work is in sql.exchange) ---------------------------------
    def export_xml(self, cls: type, xml_path: str | Path, xsd_path: str | Path | None = None,
                   where: Any = None, order_by: Any = None, *,
                   dataset: str | None = None, inline_schema: bool = False) -> int:
        """Stream the rows of ``cls`` matching ``where`` to XML (+ XSD); returns the count.

        ``dataset`` names the root element (default: the class's ``__dataset__``, as kept
        from a .NET DataSet, else ``DocumentElement``); ``inline_schema`` writes the XSD
        inside the document too.
        """
        from .exchange.xml import export_store

        return export_store(self, cls, xml_path, xsd_path, where=where, order_by=order_by,
                            dataset=dataset, inline_schema=inline_schema)

    def import_dataset(self, xml_path: str | Path, xsd_path: str | Path | None = None
                       ) -> dict[str, int]:
        """Import a .NET DataSet document (several tables, relations flat or nested) in one
        transaction; returns the rows per table. See :mod:`entityworks.xml.dataset`."""
        from .exchange.dataset import import_dataset

        return import_dataset(self, xml_path, xsd_path)

    def import_diffgram(self, xml_path: str | Path, xsd_path: str | Path | None = None
                        ) -> dict[str, Any]:
        """Apply a .NET DiffGram (inserts, updates, deletes matched by key) in one
        transaction; a conflict with the stored rows refuses it whole. Returns a
        :class:`entityworks.sql.exchange.diffgram.Changes` per table. See
        :mod:`entityworks.sql.exchange.diffgram`."""
        from .exchange.diffgram import import_diffgram

        return import_diffgram(self, xml_path, xsd_path)

    def export_dataset(self, tables: Sequence[type | str], xml_path: Any,
                       xsd_path: str | Path | None = None, *, dataset: str | None = None,
                       nested: bool | None = None, inline_schema: bool = False,
                       diffgram: bool = False) -> dict[str, int]:
        """Write ``tables`` (classes or table names) as one DataSet document, with their
        relations (``references`` metadata, or as imported) flat or ``nested``;
        ``diffgram`` writes a .NET DiffGram of unchanged rows instead."""
        from .exchange.dataset import export_dataset

        return export_dataset(self, tables, xml_path, xsd_path, dataset=dataset,
                              nested=nested, inline_schema=inline_schema, diffgram=diffgram)

    def import_xml(self, cls: type, xml_path: str | Path,
                   xsd_path: str | Path | None = None) -> int:
        """Validate and insert an XML file in one transaction (all rows or none)."""
        from .exchange.xml import import_store

        return import_store(self, cls, xml_path, xsd_path)

    def to_arrow(self, cls: type, where: Any = None, order_by: Any = None) -> pa.Table:
        """The rows of ``cls`` matching ``where`` as a ``pyarrow.Table``."""
        from .exchange.arrow import store_to_arrow

        return store_to_arrow(self, cls, where=where, order_by=order_by)

    # -- reflection of existing tables ---------------------------------------------------
    def reflect(self, table_name: str) -> type:
        """Build a dataclass for an existing table (columns, nullability, primary key)."""
        with self._connection() as conn:
            inspector = sa.inspect(conn)
            if not inspector.has_table(table_name):
                raise UnknownTableError(f"no table {table_name!r} in {self!r}")
            columns = inspector.get_columns(table_name)
            pk = inspector.get_pk_constraint(table_name).get("constrained_columns") or []
            checks = (inspector.get_check_constraints(table_name)
                      if self.dialect.name == "sqlite" else [])
        # Our own tables: a companion column says what its field's type is (an ``offset``
        # beside a timestamp: AwareDatetime) and is not a field; an SQLite ANY column's
        # type is the one its CHECK on typeof names.
        kinds = self.registry.companion_types(self.dialect.name)
        names = {c["name"] for c in columns}
        typed: dict[str, Any] = {}
        for c in columns:
            base, sep, suffix = c["name"].rpartition(COMPANION_SEPARATOR)
            if sep and base in names and suffix in kinds:
                typed[base] = kinds[suffix]
        stored = {m.group(1): m.group(2) for check in checks
                  if (m := _TYPEOF_CHECK.search(check.get("sqltext") or ""))}

        def companion(name: str) -> bool:
            base, sep, suffix = name.rpartition(COMPANION_SEPARATOR)
            return bool(sep) and base in typed and suffix in kinds

        # A field's columns: its own and its companions (a SQLite Decimal's key column,
        # beside the text under the field's name, is the NOT NULL primary key).
        group: dict[str, list[dict[str, Any]]] = {}
        for c in columns:
            if companion(c["name"]):
                group.setdefault(c["name"].rpartition(COMPANION_SEPARATOR)[0], []).append(
                    dict(c))

        # the types recorded when the table was made from an XSD (see logical.py)
        from .logical import recorded_fields

        with self._connection() as conn:
            logical = recorded_fields(conn, table_name,
                                      [c["name"] for c in columns if not companion(c["name"])],
                                      self.registry)
        specs = []
        for c in columns if logical is None else ():
            if companion(c["name"]):
                continue
            try:
                # MariaDB's DOUBLE is a Numeric that defaults to Decimal; a float is a float.
                python_type = (typed.get(c["name"])
                               or _TYPEOF_TYPES.get(stored.get(c["name"], ""))
                               or (float if isinstance(c["type"], sa.Float)
                                   else c["type"].python_type))
            except NotImplementedError:
                raise SchemaError(f"table {table_name!r}, column {c['name']!r}: type "
                                  f"{c['type']} has no Python equivalent") from None
            if python_type is dict or python_type is list:
                raise SchemaError(f"table {table_name!r}, column {c['name']!r}: native JSON "
                                  "columns are not reflected")
            if not self.registry.supports(python_type):
                raise SchemaError(f"table {table_name!r}, column {c['name']!r}: type "
                                  f"{c['type']} ({python_type!r}) is not registered")
            problem = unusable_field_name(c["name"])
            if problem is not None:
                raise SchemaError(f"table {table_name!r}, column {c['name']!r}: {problem}; "
                                  "rename the column to read this table (or map a field of "
                                  "a dataclass of yours to it: column(name=...))")
            members = [dict(c), *group.get(c["name"], [])]
            is_key = any(m["name"] in pk for m in members)  # several: a composite key
            nullable = all(m.get("nullable", True) for m in members) and not is_key
            annotation = python_type | None if nullable else python_type
            specs.append((c["name"], annotation,
                          dataclasses.field(metadata={"primary_key": is_key})))
        class_name = "".join(part.capitalize() or "_" for part in
                             re.split(r"[^0-9A-Za-z]+", snake_case(table_name))) or "Table"
        if not class_name.isidentifier():
            class_name = "T" + class_name
        if logical is not None:
            specs, facts = logical
        cls = dataclasses.make_dataclass(class_name, specs)
        cls.__tablename__ = table_name  # type: ignore[attr-defined]
        if logical is not None and facts.get("dataset"):
            cls.__dataset__ = facts["dataset"]  # type: ignore[attr-defined]
        return cls

    @contextmanager
    def _reading(self, model: _Model) -> Iterator[None]:
        """Turn the database's error for a read of a table never created into a
        :class:`NoSuchTableError` naming the class and the table; others pass unchanged."""
        try:
            yield
        except (sa.exc.DBAPIError, self._dbapi_error) as exc:
            table = _missing_table(model, exc)
            if table is None:
                raise
            root = model.schema.root
            what = (f"table {table!r}" if table == root.name
                    else f"child table {table!r} (of table {root.name!r})")
            raise NoSuchTableError(
                f"{root.cls.__qualname__}: {what} does not exist in {self!r}; create it "
                f"with store.create({root.cls.__qualname__})", cls=root.cls,
                table=table) from exc

    # -- internals: single-row calls on SQLite ----------------------------------------------
    def _point_connection(self, model: _Model) -> Any | None:
        """The raw sqlite3 connection this thread keeps for single-row calls, or None when
        they take the general path: another database, an in-memory one, a class with child
        tables, inside :meth:`transaction`, or while SQL is echoed or listened to."""
        if (not self._point_ok or model.children or getattr(self._local, "conn", None)
                is not None or self.engine.echo
                or _listened(self.engine)):
            return None
        local = self._local
        if (getattr(local, "point_generation", None) != self._point_generation
                or local.point_pid != os.getpid()):
            proxy = self.engine.raw_connection()  # a pooled connection, configured as usual
            with self._lock:
                self._point_connections.append(proxy)
            local.point = proxy.driver_connection
            local.point_generation = self._point_generation
            local.point_pid = os.getpid()
        return local.point

    def _point_sql(self, model: _Model, kind: str) -> tuple[str, list[str]]:
        """Compiled SQL text of a single-row statement and its parameters' column order."""
        cached = model.sql_cache.get(f"point:{kind}")
        if cached is not None:
            return cached  # type: ignore[return-value]
        table = model.table
        key = model.schema.require_key(kind).name
        where = table.c[key] == sa.bindparam(key)
        if kind == "get":
            stmt: Any = sa.select(table).where(where)
            names = [key]
        elif kind == "insert":
            names = list(model.names)
            stmt = table.insert()
        elif kind == "insert_generated":
            names = [n for n in model.names if n != key]
            stmt = table.insert()
        elif kind == "update":
            names = [n for n in model.names if n != key]
            stmt = table.update().where(table.c[key] == sa.bindparam("_ew_key"))
        else:
            names = [key]
            stmt = table.delete().where(where)
        compiled = stmt.compile(dialect=self.dialect,
                                column_keys=names if kind.startswith("insert") else None)
        order = [compiled.binds[n].key for n in (compiled.positiontup or [])]
        value = (compiled.string, order)
        model.sql_cache[f"point:{kind}"] = value  # type: ignore[assignment]
        return value

    def _point_get(self, raw: Any, model: _Model, key: Any) -> Any:
        sql, _order = self._point_sql(model, "get")
        column = model.schema.primary_key
        value = encode_value(column, key)
        bind = model.binds[model.names.index(column.name)]  # type: ignore[union-attr]
        params = (bind(value) if bind is not None else value,)
        if sql_logger.isEnabledFor(INFO):
            log_statement(sql, values=params)
        with self._reading(model):
            row = raw.execute(sql, params).fetchone()
        if row is None:
            return None
        if model.codec.read is not None:
            row = model.codec.read(row)
        if model.plain:
            return model.cls(*row)
        offset = model.field_index[0] if model.field_index else len(model.fields)
        return model.build(*row[offset:])

    def _point_plan(self, model: _Model, kind: str) -> tuple[str, list[int]]:
        """For a single-row write: the SQL and which values of the encoded SQL row its
        parameters take (by index); built once per model."""
        plan = model.sql_cache.get(f"plan:{kind}")
        if plan is None:
            sql, order = self._point_sql(model, kind)
            key = model.schema.require_key(kind).name
            # "_ew_key" is the key in an UPDATE's WHERE clause
            plan = (sql, [model.names.index(key if n == "_ew_key" else n)  # type: ignore[assignment]
                          for n in order])
            model.sql_cache[f"plan:{kind}"] = plan  # type: ignore[assignment]
        return plan  # type: ignore[return-value]

    def _point_write(self, obj: Any, kind: str) -> int:
        """Insert, update or delete ``obj`` alone on the thread's raw connection, in a
        transaction of its own. Returns 0 when the general path must run instead (another
        database, child tables, an error to report: it then fails there the same way, with
        its full message, after this attempt was rolled back), else 1 + rows affected."""
        model = self._models.get(type(obj))
        if model is None:
            if (not self._point_ok or isinstance(obj, type)
                    or not dataclasses.is_dataclass(obj)):
                return 0
            model = self._model(type(obj))
        raw = self._point_connection(model)
        key = model.schema.primary_key
        if raw is None or key is None:
            return 0
        key_value = getattr(obj, key.name)
        generated = kind == "insert" and key_value is None and key.autoincrement
        if key_value is None and not generated:
            return 0
        try:
            if kind == "delete":
                sql, _order = self._point_sql(model, "delete")
                value = encode_value(key, key_value)
                bind = model.binds[model.names.index(key.name)]
                params: Sequence[Any] = (bind(value) if bind is not None else value,)
            else:
                sql, where = self._point_plan(model, "insert_generated" if generated else kind)
                [row] = self._encode_rows(model, [obj], _counting_from(0), model.encoders)
                params = [row[i] for i in where]
        except Exception:
            return 0  # the general path names the column
        try:
            logged = sql_logger.isEnabledFor(INFO)
            if logged:
                log_statement("BEGIN IMMEDIATE")
                log_statement(sql, values=params)
            raw.execute("BEGIN IMMEDIATE")
            try:
                cursor = raw.execute(sql, params)
                if kind == "update" and cursor.rowcount == 0:
                    raw.execute("ROLLBACK")
                    raise NotFoundError(f"{model.schema.name!r} has no row with "
                                        f"{key.name}={key_value!r}")
                raw.execute("COMMIT")
                if logged:
                    log_statement("COMMIT")
            except BaseException:
                if raw.in_transaction:
                    raw.execute("ROLLBACK")
                if logged:
                    log_statement("ROLLBACK")
                raise
        except NotFoundError:
            raise
        except (self._dbapi_error, *_BIND_ERRORS):
            return 0
        if generated:
            object.__setattr__(obj, key.name, cursor.lastrowid)
        count: int = cursor.rowcount
        return 1 + max(count, 0)

    # -- internals: writing ----------------------------------------------------------------
    def _model_for(self, objs: Sequence[Any]) -> _Model:
        cls = type(objs[0])
        if countOf(map(type, objs), cls) != len(objs):
            odd = next(i for i, o in enumerate(objs) if type(o) is not cls)
            raise WriteError(f"row {odd} is a {type(objs[odd]).__qualname__}, not a "
                             f"{cls.__qualname__}: one call writes one table", row=odd)
        return self._model(cls)

    def _key_condition(self, model: _Model, key: Any) -> sa.ColumnElement[bool]:
        columns = model.schema.require_keys("a key lookup")
        if key is None:
            raise EntityworksError(f"{model.schema.name!r}: key must not be None")
        if len(columns) == 1:
            condition: sa.ColumnElement[bool] = (
                model.table.c[columns[0].name] == encode_value(columns[0], key))
            return condition
        if not isinstance(key, tuple) or len(key) != len(columns) or None in key:
            raise EntityworksError(
                f"{model.schema.name!r} has a composite key ({_key_label(model)}): pass a "
                f"tuple of {len(columns)} values, none of them None; got {key!r}")
        return sa.and_(*(model.table.c[c.name] == encode_value(c, v)
                         for c, v in zip(columns, key, strict=True)))

    def _insert(self, conn: sa.Connection, model: _Model, objs: list[Any],
                batch_size: int) -> None:
        key = model.schema.primary_key
        # PostgreSQL: first the COPY straight from the instances. Its gate passes a key only
        # of exactly the key's type, so when it succeeds no key was left to generate, and
        # the scan of the keys below (serial work before the first row is sent) is saved.
        tried = self._copy_keys_gated(model)
        if not (tried and self._copy_instances(conn, model, objs)):
            generated: list[int] = []
            if key is not None and (key.info.native is None or countOf(
                    map(type, map(attrgetter(key.name), objs)), key.info.native) != len(objs)):
                keys = list(map(attrgetter(key.name), objs))
                if not _check_keys(model, keys) and key.autoincrement:
                    generated = [i for i, k in enumerate(keys) if k is None]
            if generated:
                self._insert_generated(conn, model, objs, generated, key.name)  # type: ignore
                gen = set(generated)
                rest = [i for i in range(len(objs)) if i not in gen]
                self._write_rows(conn, model, [objs[i] for i in rest], rest.__getitem__,
                                 self._insert_sql(model), "insert", batch_size)
            else:  # the COPY from the instances, if tried, was refused: not again
                self._write_rows(conn, model, objs, _counting_from(0),
                                 self._insert_sql(model), "insert", batch_size,
                                 instances=not tried)
        if model.children:
            key_name = model.schema.primary_key.name  # type: ignore[union-attr]
            self._insert_children(conn, model, objs,
                                  list(map(attrgetter(key_name), objs)), batch_size)

    def _insert_generated(self, conn: sa.Connection, model: _Model, objs: list[Any],
                          indexes: list[int], key: str) -> None:
        table = model.table
        stmt = table.insert().returning(table.c[key], sort_by_parameter_order=True)
        for start in range(0, len(indexes), BATCH):
            part = indexes[start:start + BATCH]
            chosen = [objs[i] for i in part]
            dicts = self._as_dicts(model, chosen, part.__getitem__)
            for d in dicts:
                d.pop(key)
            if not dicts[0] and self.dialect.name in _MYSQL:
                # rows of the key alone: SQLAlchemy would send VALUES (DEFAULT), (DEFAULT),
                # which NO_AUTO_VALUE_ON_ZERO makes two rows of key 0; one row at a time is
                # VALUES (), which takes the next value (a rare shape: the children dominate)
                new_keys = [conn.execute(table.insert().returning(table.c[key])).one()
                            for _ in dicts]
            else:
                new_keys = self._guard(conn, model, lambda d=dicts: conn.execute(stmt, d).all(),  # type: ignore[misc]
                                       part.__getitem__, replay=(stmt, dicts))
            for obj, (new_key,) in zip(chosen, new_keys, strict=True):
                object.__setattr__(obj, key, new_key)

    def _insert_children(self, conn: sa.Connection, model: _Model, objs: list[Any],
                         keys: list[Any], batch_size: int,
                         numbers: list[int] | None = None) -> None:
        """Insert the child rows of ``objs``: ``(*key, position, item)``, where ``key`` is
        the root's key (and, below the first level, the ancestors' positions); then theirs.
        ``numbers``: the caller's row of each object (by default its index)."""
        optional = {c.field for c in model.schema.children if c.optional}
        for fname, child in model.children:
            rows = []
            owners: list[int] = []  # each child row's parent row, the number errors give
            for number, (parent, key) in enumerate(zip(objs, keys, strict=True)):
                items = getattr(parent, fname)
                if items is None and fname in optional:
                    continue  # None: the column of the field's name says so, no rows
                if items is None:
                    raise WriteError(f"{model.schema.name}.{fname} is None; use an empty list",
                                     table=model.schema.name, column=fname)
                prefix = (key,) if model.schema.parent is None else key
                for position, item in enumerate(items):
                    if type(item) is not child.cls:
                        raise WriteError(
                            f"{model.schema.name}.{fname}[{position}] is a "
                            f"{type(item).__qualname__}, not a {child.cls.__qualname__}",
                            table=model.schema.name, column=fname)
                    rows.append((*prefix, position, item))
                owners.extend([number if numbers is None else numbers[number]] * len(items))
            if rows:
                self._write_rows(conn, child, rows, owners.__getitem__, self._insert_sql(child),
                                 "insert", batch_size)
                if child.children:
                    self._insert_children(conn, child, [r[-1] for r in rows],
                                          [r[:-1] for r in rows], batch_size, owners)

    def _delete_children(self, conn: sa.Connection, model: _Model, keys: list[Any]) -> None:
        encoded = _encoded_keys(model, keys)
        for child in reversed(_descendants(model)):  # the deepest first
            for start in range(0, len(encoded), 500):
                conn.execute(child.table.delete().where(
                    child.table.c[PARENT_COLUMN].in_(encoded[start:start + 500])))

    def _getter(self, model: _Model) -> Callable[[Any], tuple[Any, ...]]:
        """Row tuple of one instance (or of a ``(parent_key, position, item)`` child row)."""
        field_names = [model.fields[i] for i in model.field_index]
        if model.schema.parent is not None:
            inner = attrgetter(*field_names) if field_names else (lambda _o: ())
            links = model.schema.links
            if links > 2:  # a child of a child: (parent_key, position_1, ..., position, item)
                if len(field_names) == 1:
                    return lambda r: (*r[:links], inner(r[links]))
                return lambda r: (*r[:links], *inner(r[links]))
            if len(field_names) == 1:
                return lambda r: (r[0], r[1], inner(r[2]))
            return lambda r: (r[0], r[1], *inner(r[2]))
        if len(field_names) == 1:
            single = attrgetter(field_names[0])
            return lambda o: (single(o),)
        return attrgetter(*field_names)

    def _encode_rows(self, model: _Model, objs: list[Any], number: RowNumber,
                     encoders: list[Processor]) -> list[Sequence[Any]]:
        """SQL rows of ``objs``: each schema column through its encoder, then the companions."""
        getter = self._getter(model)
        active = [(i, e) for i, e in enumerate(encoders) if e is not None]
        spread = model.codec.spread
        if not active and spread is None:
            return list(map(getter, objs))
        rows: list[Sequence[Any]] = []
        try:
            for obj in objs:
                values = getter(obj)
                row = list(values)
                for i, enc in active:
                    row[i] = enc(row[i])
                rows.append(row if spread is None else spread(values, row))
        except Exception as exc:
            index = len(rows)
            row = list(getter(objs[index]))
            for i, check in [*active, *enumerate(model.codec.checked)]:
                try:
                    if check is not None:
                        check(row[i])
                except Exception as inner:
                    raise encode_error(model.fields[i], row[i], inner, number(index)) from None
            raise encode_error("?", objs[index], exc, number(index)) from None
        return rows

    def _insert_sql(self, model: _Model) -> str:
        sql: str = self._compiled(model, "insert", lambda: model.table.insert())
        return sql

    def _upsert_sql(self, model: _Model) -> sa.Executable:
        table = model.table
        keys = [c.name for c in model.schema.require_keys("upsert")]
        key = keys[0]
        others = [n for n in model.names if n not in keys]
        name = self.dialect.name
        restated = _restated_keys(model, name)

        def build() -> sa.Executable:
            if name in ("sqlite", "postgresql"):
                from sqlalchemy.dialects import postgresql, sqlite

                conflict = (sqlite.insert(table) if name == "sqlite"
                            else postgresql.insert(table))
                elements = [table.c[k] for k in keys]
                if not others and not restated:
                    return conflict.on_conflict_do_nothing(index_elements=elements)
                return conflict.on_conflict_do_update(
                    index_elements=elements,
                    set_={n: conflict.excluded[n] for n in [*restated, *others]})
            if name in ("mysql", "mariadb"):
                from sqlalchemy.dialects import mysql

                insert = mysql.insert(table)
                # ON DUPLICATE KEY UPDATE also fires on a clash with another UNIQUE index,
                # and would then overwrite the row holding that value. The first assignment
                # (MariaDB runs them in order) keeps the key when the clash is on the key and
                # otherwise divides by zero, an error in strict mode: the statement fails, as
                # an INSERT ... ON CONFLICT (key) does on SQLite and PostgreSQL.
                # (A composite key: the first assignment checks every part of it.)
                current = table.c[key]
                same = sa.and_(*(table.c[k].is_not_distinct_from(insert.inserted[k])
                                 for k in keys))
                guard = sa.func.if_(same, current, sa.literal_column("1/0"))
                return insert.on_duplicate_key_update(
                    [(key, guard), *((n, insert.inserted[n]) for n in others)])
            raise EntityworksError(f"upsert is not supported on {name}")

        stmt: sa.Executable = self._compiled(model, "upsert", build)
        return stmt

    def _compiled(self, model: _Model, kind: str, build: Callable[[], Any]) -> Any:
        """The statement for ``kind``: compiled SQL text on SQLite, the construct elsewhere."""
        if kind in model.sql_cache:
            return model.sql_cache[kind]
        stmt = build()
        if self.dialect.name == "sqlite":
            compiled = stmt.compile(dialect=self.dialect, column_keys=model.names)
            order = list(compiled.positiontup or [])
            expected = [compiled.binds[name].key for name in order]
            if expected != model.names:  # pragma: no cover - guards the raw fast path
                raise EntityworksError(f"unexpected parameter order {expected}")
            value: Any = compiled.string
        else:
            value = stmt
        model.sql_cache[kind] = value
        return value

    def _write_rows(self, conn: sa.Connection, model: _Model, objs: list[Any],
                    number: RowNumber, statement: Any, kind: str, batch_size: int,
                    *, instances: bool = True) -> None:
        """Write ``objs`` with the fastest path the dialect offers, in batches.

        ``number(i)`` is the caller's row number of ``objs[i]``, used in error messages.
        ``instances``: try one COPY straight from the instances first (PostgreSQL).
        """
        sqlite = self.dialect.name == "sqlite"
        engine = self.engine
        copy = kind == "insert" and self.dialect.name == "postgresql"
        for start in range(0, len(objs), batch_size):
            part = objs[start:start + batch_size]
            at: RowNumber = lambda i, s=start: number(s + i)  # type: ignore[misc]  # noqa: E731
            if sqlite:
                cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
                if any(model.encoders) or model.codec.spread is not None:
                    rows: Any = self._encode_rows(model, part, at, model.encoders)
                else:  # stream straight from the objects (SQLite's CHECKs refuse bad types)
                    rows = map(self._getter(model), part)
                if not self._attempt(conn, lambda r=rows, c=cursor: c.executemany(  # type: ignore[misc]
                        statement, _logged(statement, r, "executemany", engine))):
                    # Refused: check every value in Python, which names a value of the wrong
                    # type (or converts what typing allows, an int in a float field), then
                    # write again, locating the row if the database still refuses.
                    checked = self._encode_rows(model, part, at, model.codec.checked)
                    self._guard(conn, model,
                                lambda r=checked, c=cursor: c.executemany(  # type: ignore[misc]
                                    statement, _logged(statement, r, "executemany", engine)), at,
                                raw=(statement, lambda r=checked: r))  # type: ignore[misc]
            elif copy:
                if start == 0 and instances and self._copy_instances(conn, model, objs):
                    return
                rows = self._encode_rows(model, part, at, model.encoders)
                if not (model.codec.gates_pass(rows) and
                        self._attempt(conn, lambda r=rows: self._copy(conn, model, [r]))):  # type: ignore[misc]
                    # Refused: every value through the complete checks, then an ordinary
                    # INSERT that locates the row the database still refuses.
                    dicts = self._as_dicts(model, part, at)
                    insert = model.table.insert()
                    self._guard(conn, model, lambda d=dicts, i=insert: conn.execute(i, d), at,  # type: ignore[misc]
                                replay=(insert, dicts))
            else:
                dicts = self._as_dicts(model, part, at)
                explain = (self._unique_clash if kind == "upsert"
                           and self.dialect.name in ("mysql", "mariadb") else None)
                self._guard(conn, model, lambda d=dicts: conn.execute(statement, d), at,  # type: ignore[misc]
                            replay=(statement, dicts), explain=explain)

    def _as_dicts(self, model: _Model, objs: list[Any], number: RowNumber
                  ) -> list[dict[str, Any]]:
        """Rows as column -> value dicts, encoded by the registry (SQLAlchemy does the rest)."""
        rows = self._encode_rows(model, objs, number, model.registry_encoders)
        names = model.names
        return [dict(zip(names, row, strict=True)) for row in rows]

    def _copy_keys_gated(self, model: _Model) -> bool:
        """True when :meth:`_copy_instances` applies on this dialect and its gate checks the
        primary key (an int key: exactly an int, never None) on every row."""
        key = model.schema.primary_key
        if self.dialect.name != "postgresql" or key is None:
            return False
        index = model.codec.fields.index(key.name)
        return any(i == index and not nullable for i, _kind, nullable in model.codec.gates)

    def _copy_instances(self, conn: sa.Connection, model: _Model, objs: list[Any]) -> bool:
        """Write every instance in one binary COPY when the table's columns need no
        encoding. The rows are read from the objects and checked (the gated columns hold
        their exact types) a chunk at a time while psycopg sends them, so that the client
        works while the server writes; False, with nothing written (the COPY is abandoned
        at the first chunk that fails), leaves the batches to the checked path."""
        codec = model.codec
        if (model.schema.parent is not None or codec.copy_types is None
                or codec.spread is not None or any(e is not None for e in model.encoders)):
            return False
        chunks = codec.gated_chunks(objs, self._getter(model))
        try:  # the first chunk before any statement: a key to generate is usually there
            first = next(chunks, [])
        except GateRefused:
            return False
        return self._attempt(conn, lambda: self._copy(conn, model, chain((first,), chunks)))

    def _copy(self, conn: sa.Connection, model: _Model,
              chunks: Iterable[Sequence[Sequence[Any]]]) -> None:
        """One COPY of the rows of ``chunks`` (an iterable of row lists)."""
        preparer = self.dialect.identifier_preparer
        columns = ", ".join(preparer.quote(model.table.c[n].name) for n in model.names)
        # Identifiers quoted by SQLAlchemy; the data travels in the COPY stream, not in SQL.
        sql = f"COPY {preparer.format_table(model.table)} ({columns}) FROM STDIN"
        types = model.codec.copy_types
        if types is not None:  # binary: psycopg dumps each value as its column's exact type
            sql += " (FORMAT BINARY)"
        if self.engine.echo or sql_logger.isEnabledFor(INFO):
            chunks = [_logged(sql, list(chain.from_iterable(chunks)), "COPY", self.engine)]
        raw = conn.connection.dbapi_connection
        with raw.cursor() as cursor, cursor.copy(sql) as copy:  # type: ignore[union-attr]
            if types is not None:
                copy.set_types(types)
            write = copy.write_row
            for rows in chunks:
                for row in rows:
                    write(row)

    def _attempt(self, conn: sa.Connection, action: Callable[[], Any]) -> bool:
        """Run ``action`` in a savepoint: ``False``, with nothing kept, if it is refused.
        Any other error (an unset field met mid-COPY) rolls the savepoint back too, so that
        an outer transaction goes on from where it was."""
        savepoint = conn.begin_nested()
        try:
            action()
        except (sa.exc.StatementError, self._dbapi_error, GateRefused, *_BIND_ERRORS):
            savepoint.rollback()
            return False
        except BaseException:
            savepoint.rollback()
            raise
        savepoint.commit()
        return True

    def _guard(self, conn: sa.Connection, model: _Model, action: Callable[[], Any],
               number: RowNumber, *, raw: tuple[str, Callable[[], list[Any]]] | None = None,
               replay: tuple[Any, list[dict[str, Any]]] | None = None,
               explain: Callable[..., tuple[str | None, str]] | None = None,
               single: dict[str, Any] | None = None) -> Any:
        """Run ``action`` in a savepoint; on a database error, locate the row and re-raise.

        ``explain(conn, model, values, earlier)`` turns the MariaDB upsert guard's error into
        what really happened (see :meth:`_unique_clash`). ``single``: the values of a
        one-row statement (an update), to name the column of a broken foreign key.
        """
        savepoint = conn.begin_nested()
        try:
            result = action()
        except (sa.exc.StatementError, self._dbapi_error, *_BIND_ERRORS) as exc:
            savepoint.rollback()
            row, message = self._locate(conn, raw, replay, exc)
            column = None
            values = None
            if row is not None:
                values = (replay[1][row] if replay is not None
                          else dict(zip(model.names, raw[1]()[row], strict=True)))  # type: ignore
                column = _column_from_binds(model, values) if replay is not None else None
            if (explain is not None and replay is not None and row is not None
                    and _GUARD_ERROR in message):
                column, message = explain(conn, model, values, replay[1][:row])
            if "foreign key" in message.lower() and (values or single) is not None:
                column = self._missing_reference(
                    conn, model, values or single,  # type: ignore[arg-type]
                    raw=values is not None and replay is None) or column
            column = (column or _column_from_message(message, model.names, _key_label(model),
                                                     model.table)
                      or (_column_from_types(model, values) if values else None)
                      or _column_refused_here(self.dialect.name, model, values or single))
            reported = None if row is None else number(row)
            where = "a row" if reported is None else f"row {reported}"
            raise WriteError(
                f"{model.schema.name}: {where}"
                + (f", column {column!r}" if column else "")
                + f": {message}; nothing was written",
                table=model.schema.name, row=reported, column=column) from exc
        savepoint.commit()
        return result

    def _missing_reference(self, conn: sa.Connection, model: _Model, values: dict[str, Any],
                           *, raw: bool) -> str | None:
        """The first foreign-key column of a refused row whose value no referenced row
        holds (SQLite and MariaDB do not name it). ``raw``: ``values`` are the driver's."""
        for foreign in model.table.foreign_keys:
            name = foreign.parent.key
            value = values.get(name)
            if name == PARENT_COLUMN or value is None:
                continue
            key = foreign.column
            stmt = sa.select(key).where(key == sa.bindparam("v", type_=key.type))
            if raw:
                sql = str(stmt.compile(dialect=self.dialect))
                found = conn.exec_driver_sql(sql, (value,)).first()
            else:
                found = conn.execute(stmt, {"v": value}).first()
            if found is None:
                return name
        return None

    def _unique_clash(self, conn: sa.Connection, model: _Model, values: dict[str, Any],
                      earlier: list[dict[str, Any]]) -> tuple[str | None, str]:
        """Which UNIQUE column (or composite unique constraint) of an upserted row another
        row already holds (MariaDB)."""
        keys = [c.name for c in model.schema.require_keys("upsert")]
        table = model.table
        groups: list[tuple[str, ...]] = [(c.name,) for c in model.schema.columns
                                         if c.unique and not c.primary_key]
        groups += list(model.schema.unique)
        mine = tuple(values[k] for k in keys)
        for group in groups:
            value = tuple(values.get(n) for n in group)
            if None in value:
                continue
            clash = any(tuple(d.get(n) for n in group) == value
                        and tuple(d[k] for k in keys) != mine for d in earlier)
            if not clash:
                stmt = (sa.select(table.c[keys[0]])
                        .where(*(table.c[n] == v for n, v in zip(group, value, strict=True)))
                        .where(sa.not_(sa.and_(*(table.c[k] == values[k] for k in keys))))
                        .limit(1))
                clash = conn.execute(stmt).first() is not None
            if clash:
                what = (f"unique column {group[0]!r}" if len(group) == 1
                        else f"unique columns ({', '.join(group)})")
                return ", ".join(group), (f"duplicate value in {what}: another row holds it "
                                          "(upsert matches rows by the primary key alone)")
        return None, ("duplicate value in a unique index: another row holds it (upsert "
                      "matches rows by the primary key alone)")

    def _locate(self, conn: sa.Connection, raw: Any, replay: Any, exc: BaseException
                ) -> tuple[int | None, str]:
        """Replay a failed batch row by row inside a savepoint to find the failing row."""
        message = _error_text(exc)
        savepoint = conn.begin_nested()
        try:
            if raw is not None:
                sql, rebuild = raw
                rows = _logged(sql, rebuild(), "row by row", self.engine)
                cursor = conn.connection.dbapi_connection.cursor()  # type: ignore
                for i, row in enumerate(rows):
                    try:
                        cursor.execute(sql, row)
                    except (self._dbapi_error, *_BIND_ERRORS) as inner:
                        return i, _error_text(inner)
            elif replay is not None:
                stmt, dicts = replay
                for i, d in enumerate(dicts):
                    inner_sp = conn.begin_nested()
                    try:
                        conn.execute(stmt, d)
                    except (sa.exc.StatementError, self._dbapi_error, *_BIND_ERRORS) as inner:
                        inner_sp.rollback()
                        return i, _error_text(inner)
                    inner_sp.commit()
            return None, message
        finally:
            savepoint.rollback()


@contextmanager
def _unset_fields_named(model: _Model, objs: list[Any]) -> Iterator[None]:
    """Turn the AttributeError of a field nobody set (``field(init=False)`` without a
    default, left unset by ``__post_init__``) into a WriteError naming row and field."""
    try:
        yield
    except AttributeError as exc:
        error = _unset_field(model, objs)
        if error is None:
            raise
        raise error from exc


def _unset_field(model: _Model, objs: list[Any]) -> WriteError | None:
    names = [model.fields[i] for i in model.field_index]
    children = model.children
    for row, obj in enumerate(objs):
        owners = [(obj, names, "")]
        for fname, child in children:
            items = getattr(obj, fname, None) or []
            child_names = [child.fields[i] for i in child.field_index]
            owners += [(item, child_names, f".{fname}[{i}]") for i, item in enumerate(items)]
        for owner, fields, where in owners:
            for name in fields:
                if not hasattr(owner, name):
                    what = f"{type(owner).__qualname__}.{name}"
                    return WriteError(
                        f"{model.schema.name}: row {row}, column {name!r}: {what} is not "
                        f"set{f' (in {where[1:]})' if where else ''}; a field(init=False) "
                        "without a default must be set by __post_init__; nothing was written",
                        table=model.schema.name, row=row, column=name)
    return None


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
            cls=owner.cls)


def _missing_table(model: _Model, exc: BaseException) -> str | None:
    """The table of ``model``'s tree that ``exc`` says does not exist (SQLite's "no such
    table", PostgreSQL's undefined table 42P01, MariaDB's 1146 / 42S02), else None."""
    orig = getattr(exc, "orig", None) or exc
    message = str(orig)
    codes = {getattr(orig, "sqlstate", None), orig.args[0] if orig.args else None}
    if not ("no such table: " in message or codes & {"42P01", "42S02", 1146}):
        return None
    root = model.schema.root
    names = sorted([root.name, *(t.name for t in root.descendants)], key=len, reverse=True)
    for name in names:  # the longest first: a child's name starts with its parent's
        if any(form in message for form in (f"no such table: {name}",
                                            f"no such table: main.{name}",
                                            f'relation "{name}" does not exist',
                                            f".{name}' doesn't exist")):
            return name
    return model.schema.name


def _create_error(model: _Model, exc: BaseException) -> SchemaError:
    return SchemaError(f"cannot create table {model.schema.name!r} (or one of its child "
                       "tables or the tables it refers to) for "
                       f"{model.cls.__qualname__}: {_error_text(exc)}; no table was created",
                       cls=model.cls)


def _check_mariadb_names(schema: TableSchema) -> None:
    """MariaDB identifiers hold characters up to U+FFFF only (no emoji): refuse others with
    a clear error instead of the server's."""
    for table in [schema, *schema.descendants]:
        names: list[tuple[str, str, str | None]] = [("table name", table.name, None)]
        names += [("column name", c.sql_name, c.name) for c in table.columns]
        for what, name, field in names:
            wide = next((ch for ch in name if ord(ch) > 0xFFFF), None)
            if wide is not None:
                raise InvalidNameError(
                    f"invalid {what} {name!r} ({table.cls.__qualname__}) on MariaDB: its "
                    f"identifiers cannot hold {wide!r} (U+{ord(wide):X}) or any character "
                    "beyond U+FFFF, such as emoji", cls=table.cls, field=field)


#: The error the MariaDB upsert guard raises when a clash is not on the primary key.
_GUARD_ERROR = "Division by 0"


#: The CHECK ``tables`` gives an SQLite ANY column: ``typeof("x") IN ('integer', ...)``.
_TYPEOF_CHECK = re.compile(r"""typeof\(["`]?([^"`)]+)["`]?\)\s*(?:=|IN\s*\()\s*'(\w+)'""")
_TYPEOF_TYPES: dict[str, type] = {"integer": int, "real": float, "text": str}


def _refuse_referenced(conn: sa.Connection, model: _Model, dropped: set[str]) -> None:
    """SchemaError when a table that stays has a foreign key to one of ``dropped``: SQLite
    would empty it (or set its references to NULL) through the foreign key's ON DELETE
    action, the other backends refuse; entityworks refuses on all three, saying which."""
    inspector = sa.inspect(conn)
    for name in inspector.get_table_names():
        if name in dropped:
            continue
        for fk in inspector.get_foreign_keys(name):
            if fk.get("referred_table") in dropped:
                raise SchemaError(
                    f"cannot drop table {fk['referred_table']!r}: table {name!r} refers to it "
                    f"({', '.join(fk['constrained_columns'])}); drop {name!r} first",
                    cls=model.cls)


def _descendants(model: _Model) -> list[_Model]:
    """The models of every child table below ``model``, children of children included,
    parents first."""
    out: list[_Model] = []
    for _, child in model.children:
        out.append(child)
        out.extend(_descendants(child))
    return out


def _key_of(model: _Model, obj: Any) -> Any:
    """The key of an instance: its key field, or a tuple of them for a composite key."""
    columns = model.schema.key_columns
    if len(columns) == 1:
        return getattr(obj, columns[0].name)
    return tuple(getattr(obj, c.name) for c in columns)


def _restated_keys(model: _Model, dialect: str) -> list[str]:
    """Key columns an upsert or ``update(obj)`` sets although they match the row: a
    Decimal key equals the row's by value (1.5 = 1.50), and where the column itself keeps
    the scale (PostgreSQL's NUMERIC) the row takes the one just written, as its other
    columns do. (Elsewhere a companion column holds it, which is set anyway.)"""
    if dialect in sqltypes.SCALED_DECIMAL_DIALECTS:
        return []
    return [c.name for c in model.schema.key_columns if c.info.python_type is decimal.Decimal]


def _key_label(model: _Model) -> str | None:
    """The key's column (``"a, b"`` for a composite key), for messages."""
    return ", ".join(c.name for c in model.schema.key_columns) or None


def _check_keys(model: _Model, keys: list[Any]) -> bool:
    """True when every key has exactly the key's native type; otherwise refuse a key of
    another type (SQLite's rowid would turn ``'12'`` into 12), ``None`` being left to the
    caller (a generated key, or an error)."""
    key = model.schema.primary_key
    assert key is not None
    native = key.info.native
    if native is None or countOf(map(type, keys), native) == len(keys):
        return native is not None
    for i, value in enumerate(keys):
        if value is not None and type(value) is not native:
            try:
                key.info.checked(value)
            except (TypeError, ValueError) as exc:
                raise encode_error(key.name, value, exc, i) from None
    return False


def _encoded_keys(model: _Model, keys: list[Any]) -> list[Any]:
    """Parent keys as stored, for the ``parent_key`` column of child tables."""
    to_db = model.schema.primary_key.info.to_db  # type: ignore[union-attr]
    return [to_db(k) for k in keys] if to_db else keys


def _column_from_binds(model: _Model, values: dict[str, Any]) -> str | None:
    """The first column whose bind processor rejects its value (errors raised in Python)."""
    for name, bind in zip(model.names, model.binds, strict=True):
        if bind is not None and values.get(name) is not None:
            try:
                bind(values[name])
            except Exception:
                return name
    return None




def _error_text(exc: BaseException) -> str:
    orig = getattr(exc, "orig", None) or exc
    lines = [line.strip() for line in str(orig).strip().splitlines() if line.strip()]
    if not lines:
        return type(orig).__name__
    # PostgreSQL names the offending key in its DETAIL line.
    detail = [line for line in lines[1:] if line.startswith("DETAIL:")]
    column = getattr(getattr(orig, "diag", None), "column_name", None)
    extra = [f"(column \"{column}\")"] if column and f'"{column}"' not in lines[0] else []
    return " ".join([lines[0], *detail, *extra])


_COLUMN_PATTERNS = [
    re.compile(r"cannot store \w+ value in \w+ column (?:.*\.)?([^.]+)$"),  # sqlite STRICT
    re.compile(r"constraint failed: (?:[^\s.]+\.)?\"?([^\s,\"]+)"),  # sqlite
    re.compile(r"Key \(([^)]+)\)="),                                  # postgresql unique
    re.compile(r"column \"([^\"]+)\""),                               # postgresql
    re.compile(r"[Cc]olumn [`'\"]([^`'\"]+)[`'\"]"),                  # mariadb
    re.compile(r"for column [`'\"](?:[^`'\"]+[`'\"]\.[`'\"])*([^`'\"]+)[`'\"]"),
    re.compile(r"for key '(?:[^'.]+\.)?([^']+)'"),                    # mariadb duplicates
    re.compile(r"FOREIGN KEY \(`([^`]+)`\)"),                          # mariadb references
]


def _column_refused_here(dialect: str, model: _Model, values: Mapping[str, Any] | None
                         ) -> str | None:
    """The first column of a refused row holding a value this backend alone cannot store,
    whose error names no column: NaN or an infinity in a MariaDB DOUBLE, NUL in PostgreSQL
    text (the values are the row's encoded ones)."""
    for name in model.names if values else ():
        value = values.get(name)  # type: ignore[union-attr]
        if dialect in _MYSQL and isinstance(value, float) and not math.isfinite(value):
            return name
        if dialect == "postgresql" and isinstance(value, str) and "\x00" in value:
            return name
    return None


def _column_from_types(model: _Model, values: dict[str, Any]) -> str | None:
    """The first plain column holding a value of the wrong Python type."""
    for c in model.schema.columns:
        value = values.get(c.name)
        expected = c.info.python_type
        if value is None or c.info.to_db is not None or not isinstance(expected, type):
            continue
        if expected is float and isinstance(value, int):
            continue
        if not isinstance(value, expected):
            return c.name
    return None


def _column_from_message(message: str, names: list[str], key: str | None = None,
                         table: sa.Table | None = None) -> str | None:
    """The column a database error names; ``table`` translates the names of columns called
    otherwise in SQL (``column(name=...)``) back to their fields'."""
    fields = {c.name: c.key for c in table.columns} if table is not None else {}
    for pattern in _COLUMN_PATTERNS:
        m = pattern.search(message)
        if not m:
            continue
        candidate = m.group(1)
        if candidate.startswith("type_"):
            candidate = "type_" + fields.get(candidate[5:], candidate[5:])
        candidate = fields.get(candidate, candidate)
        if candidate.startswith("type_") and candidate[5:] in names:
            return candidate[5:]
        if candidate in names:
            return candidate
        if key and (candidate.upper() == "PRIMARY" or candidate.endswith("_pkey")):
            return key
    if key and re.search(r"_pkey\b|PRIMARY", message):
        return key
    return None


__all__ = ["Store"]

"""The Store's engine: URL, ``create_engine`` options, and each connection's set-up.

Kept apart from the Store because it runs once per engine, before any table is known: it
checks the options that would break the Store's transactions and installs the per-dialect
connection events (pragmas, ``sql_mode``, our own ``BEGIN``), once however many Stores share
an engine.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.pool import StaticPool

from ..errors import ConfigurationError
from . import sqltypes
from .filters import LIKE_FUNCTION, like_matches
from .log import INFO, log_statement, sql_logger

_MYSQL = ("mysql", "mariadb")

def _connection_charset(dbapi_connection: Any) -> str | None:
    """The character set of a MySQL driver connection (``utf8mb4`` unless the URL says)."""
    name = getattr(dbapi_connection, "character_set_name", None)
    return name() if callable(name) else None


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
    "poolclass": None,  # refused on in-memory SQLite only (see checked_options)
}


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value == value


def sqlite_memory(url: sa.URL) -> bool:
    return url.database in (None, "", ":memory:")


def checked_options(options: Mapping[str, Any] | None, url: sa.URL) -> dict[str, Any]:
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
        if name == "poolclass" and sqlite and sqlite_memory(url):
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


def adopted_url(engine: Any) -> sa.URL:
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
    if dialect.name == "sqlite" and sqlite_memory(engine.url) and not isinstance(
            engine.pool, StaticPool):
        raise ConfigurationError(
            f"engine=: an in-memory SQLite engine with a {type(engine.pool).__name__}: "
            "connections could see different databases; create it with "
            "poolclass=sqlalchemy.pool.StaticPool and "
            "connect_args={'check_same_thread': False}")
    return engine.url


_READY = "entityworks_ready"
#: Held while listeners are added, so that Stores made at once on one engine add them once.
_CONFIGURING = threading.Lock()


def _marked(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn._entityworks = True  # type: ignore[attr-defined]
    return fn


def _has_ours(listeners: Any) -> bool:
    return any(getattr(fn, "_entityworks", False) for fn in listeners)


def configure_engine(engine: sa.Engine, busy_timeout: float, *, adopted: bool) -> None:
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
        memory = sqlite_memory(url)
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


def normalise_url(url: str | sa.URL | Path) -> sa.URL:
    if isinstance(url, sa.URL):
        return url
    text = str(url)
    if "://" not in text:  # a plain path means an SQLite file
        return sa.make_url(f"sqlite:///{text}")
    return sa.make_url(text)

def make_engine(url: sa.URL, echo: bool, options: dict[str, Any], busy_timeout: float
                ) -> sa.Engine:
    """The store's own engine for ``url``; its connections are set up by
    :func:`configure_engine`. ``options`` (checked) go to ``create_engine``."""
    if url.get_backend_name() != "sqlite":
        mysql = url.get_backend_name() in _MYSQL
        if mysql and "charset" not in url.query:
            url = url.update_query_dict({"charset": "utf8mb4"})
        return _create_engine(url, {"echo": echo, "pool_pre_ping": True, **options})
    kwargs: dict[str, Any] = {"echo": echo, **options}
    kwargs["connect_args"] = {"timeout": busy_timeout, "check_same_thread": False,
                              **options.get("connect_args", {})}
    if sqlite_memory(url):
        kwargs["poolclass"] = StaticPool  # one connection: one database
    return _create_engine(url, kwargs)


__all__ = ["adopted_url", "checked_options", "configure_engine", "make_engine", "normalise_url",
           "sqlite_memory"]

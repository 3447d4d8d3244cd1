"""The Store's engine: URL, ``create_engine`` options, and each connection's set-up.

Kept apart from the Store because it runs once per engine, before any table is known: it
checks the options that would break the Store's transactions and installs the per-dialect
connection events (pragmas, ``sql_mode``, our own ``BEGIN``), once however many Stores share
an engine.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from time import monotonic
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy import event

from ..errors import ConfigurationError
from .backends import file_backend, for_name, names_where, url_examples
from .backends.base import CONFIGURING, Backend, has_ours, marked

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine

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
    "poolclass": None,  # refused where the dialect sets it (in-memory SQLite)
}


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value == value


def backend_of_url(url: sa.URL) -> Backend:
    """The Backend of ``url``'s dialect (the one lookup a Store makes)."""
    return for_name(url.get_backend_name())


def checked_options(
    options: Mapping[str, Any] | None, url: sa.URL, backend: Backend | None = None
) -> dict[str, Any]:
    """``engine_options`` checked before anything is created: each known option's value,
    no option the Store sets itself, nothing that would break its transactions
    (``backend``: ``url``'s, when the caller has it)."""
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise ConfigurationError(
            f"engine_options must be a dict of create_engine options, got {options!r}"
        )
    dialect = backend if backend is not None else backend_of_url(url)
    checked: dict[str, Any] = {}
    for name, value in options.items():
        if not isinstance(name, str):
            raise ConfigurationError(f"engine_options: option names are str, got {name!r}")
        if name == "echo":
            raise ConfigurationError(
                f"engine_options: {name!r} is set by the Store; {_OWN_OPTIONS[name]}"
            )
        refused = dialect.refused_option(name, url)
        if refused is not None:
            raise ConfigurationError(refused)
        if name in _OPTION_CHECKS:
            what, ok = _OPTION_CHECKS[name]
            if not ok(value):
                raise ConfigurationError(f"engine_options: {name!r} must be {what}, got {value!r}")
        checked[name] = value
    refused = dialect.refused_options(checked)
    if refused is not None:
        raise ConfigurationError(refused)
    levels = [
        checked.get("isolation_level"),
        checked.get("execution_options", {}).get("isolation_level"),
    ]
    for level in filter(None, levels):
        refused = dialect.refused_isolation(level)
        if refused is not None:
            raise ConfigurationError(refused)
        if str(level).upper() == "AUTOCOMMIT":
            raise ConfigurationError(_AUTOCOMMIT)
    return checked


_AUTOCOMMIT = (
    "isolation_level AUTOCOMMIT would let every statement commit on its own, so a "
    "refused write could leave half of its rows behind; the Store needs "
    "transactions"
)


def checked_busy_timeout(busy_timeout: Any) -> float:
    """``busy_timeout`` if it is a number of seconds a driver takes, else ConfigurationError."""
    if (
        isinstance(busy_timeout, bool)
        or not isinstance(busy_timeout, int | float)
        or not 0 <= busy_timeout < 2**31 / 1000
    ):
        raise ConfigurationError(
            f"busy_timeout must be a number of seconds >= 0 (and finite), got {busy_timeout!r}"
        )
    return busy_timeout


def _create_engine(
    url: sa.URL,
    kwargs: dict[str, Any],
    backend: Backend,
    create: Callable[..., Any] = sa.create_engine,
    extra: str | None = None,
) -> Any:
    """``create`` (``sa.create_engine``) with its refusals of bad options as a
    ConfigurationError (``extra``: the one that installs the driver, if not the backend's)."""
    try:
        return create(url, **kwargs)
    except sa.exc.NoSuchModuleError:
        raise ConfigurationError(
            f"no SQLAlchemy dialect for {url.render_as_string(hide_password=True)}; {_url_forms()}"
        ) from None
    except ModuleNotFoundError as exc:
        extra = backend.driver_extra if extra is None else extra
        hint = f' (pip install "entityworks[{extra}]")' if extra else ""
        raise ConfigurationError(
            f"the driver for {url.drivername}:// is not installed: {exc.name}{hint}; {_url_forms()}"
        ) from None
    except (TypeError, ValueError, sa.exc.ArgumentError) as exc:
        raise ConfigurationError(
            f"engine_options refused by SQLAlchemy for "
            f"{url.render_as_string(hide_password=True)}: {exc}"
        ) from exc


def adopted_url(engine: Any, backend: Backend | None = None) -> sa.URL:
    """The URL of an engine given to ``Store(engine=...)``, once the engine is checked
    (``backend``: the engine's, when the caller has it)."""
    if not isinstance(engine, sa.Engine):
        kind = type(engine).__qualname__
        hint = (
            " (the Store is synchronous: create a sync engine for the same database)"
            if "Async" in kind
            else ""
        )
        raise ConfigurationError(f"engine= takes a sqlalchemy.Engine, got {kind}{hint}")
    dialect = backend if backend is not None else for_name(engine.dialect.name)
    refused = dialect.refused_driver(engine)
    if refused is not None:
        raise ConfigurationError(refused)
    levels = [
        getattr(engine.dialect, "_on_connect_isolation_level", None),
        engine.get_execution_options().get("isolation_level"),
    ]
    if any(str(level).upper() == "AUTOCOMMIT" for level in levels if level):
        raise ConfigurationError(f"engine=: {_AUTOCOMMIT}")
    refused = dialect.refused_pool(engine)
    if refused is not None:
        raise ConfigurationError(refused)
    return engine.url


_READY = "entityworks_ready"
_RETURNED = "entityworks_returned"
#: Seconds a pooled connection may sit in the pool before it is pinged when checked out.
PING_AFTER_IDLE = 1.0


def _pinging(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn._entityworks_ping = True  # type: ignore[attr-defined]
    return fn


def ping_idle(engine: sa.Engine, after: float = PING_AFTER_IDLE) -> None:
    """Ping a pooled connection of ``engine`` when it is checked out after more than
    ``after`` seconds in the pool, and replace it if the server has gone (restarted, or
    the connection killed), as pools usually do: one round trip after idleness instead of
    ``pool_pre_ping``'s one per checkout."""

    @_pinging
    def connect(_dbapi_connection: Any, record: Any) -> None:
        record.info[_RETURNED] = monotonic()

    @_pinging
    def checkin(_dbapi_connection: Any, record: Any) -> None:
        if record is not None:
            record.info[_RETURNED] = monotonic()

    @_pinging
    def checkout(dbapi_connection: Any, record: Any, _proxy: Any) -> None:
        returned = record.info.get(_RETURNED)
        if returned is not None and monotonic() - returned <= after:
            return
        try:
            engine.dialect.do_ping(dbapi_connection)
        except Exception as exc:  # noqa: BLE001 - any failure: not usable
            # the pool drops this connection and checks out a new one
            raise sa.exc.DisconnectionError(f"an idle connection is gone: {exc}") from exc

    with CONFIGURING:
        if not any(getattr(fn, "_entityworks_ping", False) for fn in engine.pool.dispatch.checkout):
            event.listen(engine, "connect", connect)
            event.listen(engine, "checkin", checkin)
            event.listen(engine, "checkout", checkout)


def refuse_unopenable(engine: sa.Engine, backend: Backend | None = None) -> None:
    """Make a database that cannot be opened (a PostgreSQL or MariaDB database that does not
    exist, an SQLite file in a missing folder or that is not a database) a
    :class:`ConfigurationError` saying which database and what to do, whichever call first
    connects; other connection errors stay the driver's. Engines that connect through a
    ``creator`` of their own keep its errors. (``backend``: the engine's, when the caller
    has it.)"""
    if backend is None:
        backend = for_name(engine.dialect.name)

    def do_connect(dialect: sa.Dialect, _record: Any, cargs: Any, cparams: Any) -> Any:
        try:
            connection = dialect.connect(*cargs, **cparams)
        except dialect.loaded_dbapi.Error as exc:
            _refuse(backend.unopenable(exc, engine.url, _shown(engine.url)), exc)
            raise
        try:
            backend.check_opened(connection)
        except dialect.loaded_dbapi.Error as exc:
            connection.close()
            _refuse(backend.unopenable(exc, engine.url, _shown(engine.url)), exc)
            raise
        return connection

    do_connect._entityworks_open = True  # type: ignore[attr-defined]
    with CONFIGURING:
        if not any(
            getattr(fn, "_entityworks_open", False) for fn in engine.dialect.dispatch.do_connect
        ):
            event.listen(engine, "do_connect", do_connect)


def _shown(url: sa.URL) -> str:
    from .urls import display_db

    return display_db(url.set(query={}))  # not the driver options the Store added


def _refuse(reason: str | None, exc: BaseException) -> None:
    if reason is not None:
        raise ConfigurationError(reason) from exc


def configure_engine(
    engine: sa.Engine,
    busy_timeout: float,
    *,
    adopted: bool,
    pings: bool = False,
    backend: Backend | None = None,
) -> None:
    """Give ``engine`` the Store's per-dialect connection set-up, once however many Stores
    share it: SQLite pragmas and transactions that the Store begins itself; MariaDB's strict
    ``sql_mode`` and binary collation; with ``pings``, the ping of connections checked
    out after idleness (see :func:`ping_idle`) on a database server.

    The store's own engines set up each new connection. An engine given to
    ``Store(engine=...)`` may hold connections made before: each is set up when it is first
    checked out (its pool record remembers it). (``backend``: the engine's, when the caller
    has it.)
    """
    if backend is None:
        backend = for_name(engine.dialect.name)
    refuse_unopenable(engine, backend)
    if pings and backend.pings_idle:
        ping_idle(engine)
    setup = backend.connection_setup(engine, busy_timeout, adopted=adopted)
    if setup is None:
        return

    @marked
    def connect(dbapi_connection: Any, record: Any) -> None:
        setup(dbapi_connection)
        record.info[_READY] = True

    @marked
    def checkout(dbapi_connection: Any, record: Any, _proxy: Any) -> None:
        if not record.info.get(_READY):
            setup(dbapi_connection)
            record.info[_READY] = True

    with CONFIGURING:
        if not has_ours(engine.pool.dispatch.connect):
            event.listen(engine, "connect", connect)
            if adopted:
                event.listen(engine, "checkout", checkout)


def normalise_url(url: str | sa.URL | Path) -> sa.URL:
    """``url`` as a SQLAlchemy URL; a plain path names a database file (SQLite's)."""
    if isinstance(url, sa.URL):
        return url
    text = str(url)
    if "://" not in text:  # a plain path means a database file
        return sa.make_url(f"{file_backend().name}:///{text}")
    try:
        parsed = sa.make_url(text)
    except sa.exc.ArgumentError as exc:
        raise ConfigurationError(f"not a database URL ({exc}); {_url_forms()}") from None
    alias = _scheme_alias(parsed.drivername)
    if alias is not None:
        raise ConfigurationError(
            f"{parsed.drivername}:// is not a scheme SQLAlchemy knows: write "
            f"{parsed.set(drivername=alias).render_as_string(hide_password=True)}"
        )
    return parsed


def _scheme_alias(drivername: str) -> str | None:
    """The scheme SQLAlchemy knows for one other tools write (libpq, Heroku, Django's
    dj-database-url), which a backend lists among its ``scheme_aliases``; else None."""
    for name in names_where(lambda backend: drivername in backend.scheme_aliases):
        return for_name(name).scheme_aliases[drivername]
    return None


def _url_forms() -> str:
    """The URLs a message suggests: each backend's example, and a plain file path."""
    *some, last = url_examples()
    return f"use {', '.join(some)} or {last} (or a plain file path for {file_backend().title})"


def make_engine(
    url: sa.URL,
    echo: bool,
    options: dict[str, Any],
    busy_timeout: float,
    backend: Backend | None = None,
) -> sa.Engine:
    """The store's own engine for ``url``; its connections are set up by
    :func:`configure_engine`. ``options`` (checked) go to ``create_engine``. (``backend``:
    ``url``'s, when the caller has it.)"""
    if backend is None:
        backend = backend_of_url(url)
    url, kwargs = backend.engine_arguments(url, echo, options, busy_timeout)
    engine: sa.Engine = _create_engine(url, kwargs, backend)
    return engine


def make_async_engine(
    url: sa.URL, echo: bool, options: dict[str, Any], busy_timeout: float, backend: Backend
) -> AsyncEngine:
    """An AsyncStore's engine for ``url`` (an asyncio driver's), made as
    :func:`make_engine` makes the Store's; its ``sync_engine`` gets
    :func:`configure_engine`'s set-up."""
    from sqlalchemy.ext.asyncio import create_async_engine

    url, kwargs = backend.engine_arguments(url, echo, options, busy_timeout)
    engine: AsyncEngine = _create_engine(url, kwargs, backend, create_async_engine, "async")
    return engine


__all__ = [
    "PING_AFTER_IDLE",
    "adopted_url",
    "backend_of_url",
    "checked_busy_timeout",
    "checked_options",
    "configure_engine",
    "make_async_engine",
    "make_engine",
    "normalise_url",
    "ping_idle",
    "refuse_unopenable",
]

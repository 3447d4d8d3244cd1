"""``AsyncStore``: the :class:`~entityworks.sql.store.Store`'s API as coroutines, on
SQLAlchemy's asyncio engines (aiosqlite, psycopg's async mode, aiomysql).

It runs the Store's own pipeline, not a copy of it: each call checks a connection out of
the asyncio engine's pool and hands the pipeline (the same functions of :mod:`._write`,
:mod:`._read`, :mod:`._ddl` the Store calls) to ``AsyncConnection.run_sync``, SQLAlchemy's
greenlet bridge, where every statement the sync code sends is awaited on the event loop. The
pipeline sees an ordinary ``sqlalchemy.Connection`` whose driver connection is SQLAlchemy's
adapted asyncio one; which of its driver-level fast paths still serve there is each
backend's decision (:meth:`~entityworks.sql.backends.base.Backend.for_asyncio`).

The per-thread state of a Store (its ``transaction()`` connection) is per task here
(:class:`~entityworks.sql._database.TaskLocal`): tasks sharing an AsyncStore never see each
other's transaction.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager, nullcontext
from contextvars import ContextVar
from itertools import chain, islice
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar, overload

import sqlalchemy as sa

from ..compat.sqlalchemy import bridged_call, cancelled_since_call
from ..errors import ConfigurationError, EntityworksError
from ..model.schema import TableSchema
from ..registry import TypeRegistry, the_registry
from ..registry import registry as default_registry
from . import _ddl as ddl
from . import _existing as existing
from . import _read as read
from . import _write as write
from ._bulk import BATCH
from ._database import Database, TaskLocal
from ._log import store_logger, watch
from ._point import PointPath
from .backends import Backend
from .engine import (
    backend_of_url,
    checked_busy_timeout,
    checked_options,
    configure_engine,
    make_async_engine,
    normalise_url,
)

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, AsyncTransaction

T = TypeVar("T")
R = TypeVar("R")
_NOTHING = object()
#: Rows an ``async for`` over :meth:`AsyncStore.select` takes from the pipeline per step
#: (one trip through the greenlet bridge each).
STREAM_BATCH = 1_000


class AsyncStore:
    """A database holding dataclass tables, for asyncio code: the :class:`Store`'s calls as
    coroutines.

    ``AsyncStore(url)`` takes the Store's URLs and maps each to SQLAlchemy's asyncio driver
    of its database: ``sqlite:///x.db`` (or a plain path) runs on aiosqlite,
    ``postgresql+psycopg://...`` on psycopg's async mode (``postgresql+psycopg_async``),
    ``mysql+pymysql://...`` on aiomysql; a URL naming the asyncio driver is kept. The
    drivers come with ``pip install "entityworks[async]"``.

    Every call is atomic as the Store's is (a refused ``insert_many`` writes nothing and
    :class:`WriteError` names the row and column), also when its task is cancelled
    part-way: the call's transaction is rolled back. Calls of concurrent tasks each take a
    connection of the pool (``engine_options={"pool_size": ...}``). :meth:`transaction`
    belongs to the task that entered it: the calls that task makes inside it join it, and
    another task (one it starts too) cannot use it.

    ``select`` is an async iterator (``async for obj in store.select(Cls)``): its arguments
    are checked at the first step, rows are read in batches while you iterate, and the
    connection it holds is given back when it ends; leave one early inside
    ``contextlib.aclosing(...)`` to give it back at once.
    """

    def __init__(
        self,
        url: str | sa.URL | Path | None = None,
        *,
        engine_options: Mapping[str, Any] | None = None,
        registry: TypeRegistry | None = None,
        busy_timeout: float = 30.0,
        echo: bool = False,
    ) -> None:
        from .store import DEFAULT_DATABASE

        self.busy_timeout: float = checked_busy_timeout(busy_timeout)
        self.registry: TypeRegistry = the_registry(registry or default_registry)
        given = normalise_url(DEFAULT_DATABASE if url is None else url)
        sync_backend = backend_of_url(given)
        mapped = sync_backend.asyncio_url(given)
        if isinstance(mapped, str):
            raise ConfigurationError(mapped)
        #: The URL the engine opens (with its asyncio driver).
        self.url: sa.URL = mapped
        backend = sync_backend.for_asyncio()
        options = checked_options(engine_options, mapped, backend)
        #: SQLAlchemy's asyncio engine; its ``sync_engine`` is what the pipeline sees.
        self.engine: AsyncEngine = make_async_engine(mapped, echo, options, busy_timeout, backend)
        sync = self.engine.sync_engine
        configure_engine(
            sync,
            busy_timeout,
            adopted=False,
            pings="pool_pre_ping" not in (engine_options or {}),
            backend=backend,
        )
        watch(sync)
        store_logger.debug("async store on %s", mapped.render_as_string(hide_password=True))
        self.dialect: sa.Dialect = sync.dialect
        self._db = Database(mapped, sync, self.registry, backend, local=TaskLocal())
        # no backend keeps a point connection on asyncio (see Backend.point_path): every
        # call takes the general path, on the connection lent to it
        self._point = PointPath(self._db)
        self._binding = asyncio.Lock()
        self._transaction: ContextVar[tuple[asyncio.Task[Any] | None, AsyncConnection] | None] = (
            ContextVar(f"entityworks_async_transaction_{id(self)}", default=None)
        )

    # -- lifecycle -----------------------------------------------------------------------
    async def close(self) -> None:
        """Release every pooled connection."""
        await self.engine.dispose()

    async def __aenter__(self) -> AsyncStore:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    def __repr__(self) -> str:
        return f"Async{self._db!r}"

    @property
    def backend(self) -> Backend:
        """What this store does differently on its kind of database, on asyncio."""
        return self._db.backend

    def schema(self, cls: type) -> TableSchema:
        """The inferred schema of ``cls`` (see :func:`entityworks.table_schema`)."""
        return self._db.schema(cls)

    # -- the bridge ----------------------------------------------------------------------
    def _joined(self) -> AsyncConnection | None:
        """The connection of the calling task's :meth:`transaction`, if any."""
        held = self._transaction.get()
        if held is None:
            return None
        owner, conn = held
        if owner is not asyncio.current_task():
            raise EntityworksError(
                f"{self!r}: a transaction() belongs to the task that entered it; this task "
                "was started inside it: await its calls in that task, or give this task a "
                "transaction() of its own"
            )
        return conn

    def _in_call(
        self, conn: sa.Connection, joined: bool, fn: Callable[..., R], *args: Any, **kw: Any
    ) -> R:
        """Run ``fn`` (the sync pipeline) inside ``run_sync``, on ``conn``: the task's
        transaction connection (``joined``), or one lent for this call alone."""
        local = self._db.local
        if joined:
            local.conn = conn
        else:
            local.lent = conn
        try:
            return fn(*args, **kw)
        finally:
            local.conn = None
            local.lent = None

    def _connection(self) -> AbstractAsyncContextManager[tuple[AsyncConnection, bool]]:
        joined = self._joined()
        if joined is not None:
            return nullcontext((joined, True))
        return self._lent()

    @asynccontextmanager
    async def _lent(self) -> AsyncIterator[tuple[AsyncConnection, bool]]:
        async with self.engine.connect() as conn:
            yield conn, False

    async def _run(self, fn: Callable[..., R], *args: Any, **kw: Any) -> R:
        async with self._connection() as (conn, joined):
            return await self._step(conn, joined, fn, *args, **kw)

    async def _bound(self, cls: Any) -> None:
        """Bind ``cls`` to the database before a call uses it, one task at a time: binding
        reads the live tables (other tasks run while it waits), and the Database's lock,
        a thread's, does not keep apart the tasks one thread runs. A class that cannot be
        bound is left to the call, which reports it as the Store does."""
        if not isinstance(cls, type) or cls in self._db.models:
            return
        async with self._binding:
            if cls not in self._db.models:
                with contextlib.suppress(Exception):
                    await self._run(self._db.model, cls)

    async def _bound_first(self, objs: Iterable[Any]) -> Iterable[Any]:
        """``objs`` (as it was, or re-chained after a peek), their class bound first."""
        if isinstance(objs, Sequence):
            if objs:
                await self._bound(type(objs[0]))
            return objs
        rows = iter(objs)
        first = next(rows, _NOTHING)
        if first is _NOTHING:
            return ()
        await self._bound(type(first))
        return chain([first], rows)

    # -- DDL -----------------------------------------------------------------------------
    async def create(self, cls: type) -> sa.Table:
        """Create the table of ``cls`` and its child tables if they do not exist (as
        :meth:`Store.create`)."""

        def create() -> sa.Table:
            existing.refuse_other_tables(self._db, self._db.model(cls))
            return ddl.create(self._db, cls)

        await self._bound(cls)
        return await self._run(create)

    async def drop(self, cls: type) -> None:
        """Drop the table of ``cls`` and its child tables if they exist."""
        await self._bound(cls)
        async with self._binding:  # unbound at the end: no task binds it meanwhile
            await self._run(ddl.drop, self._db, cls)

    async def table_names(self) -> list[str]:
        """Names of the tables in the database."""
        return await self._run(ddl.table_names, self._db)

    # -- transactions --------------------------------------------------------------------
    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[AsyncStore]:
        """Group the calling task's operations: all of them are kept, or (on an exception,
        or the task's cancellation) none. Nested use becomes a savepoint."""
        outer = self._joined()
        if outer is not None:
            savepoint = await outer.begin_nested()
            try:
                yield self
            except BaseException:
                await _rolled_back(savepoint, outer)
                raise
            await savepoint.commit()
            return
        async with self.engine.connect() as conn:
            await conn.execution_options(entityworks_write=True)
            transaction = await conn.begin()
            token = self._transaction.set((asyncio.current_task(), conn))
            try:
                yield self
            except BaseException:
                await _rolled_back(transaction, conn)
                raise
            finally:
                self._transaction.reset(token)
            await transaction.commit()

    @property
    def in_transaction(self) -> bool:
        """True inside :meth:`transaction` in the calling task."""
        return self._transaction.get() is not None

    # -- writing -------------------------------------------------------------------------
    async def insert(self, obj: T) -> T:
        """Insert one instance (and its child rows); a generated key is set on ``obj``."""
        await self._bound(type(obj))
        await self._run(write.insert_many, self._db, [obj])
        return obj

    async def insert_many(self, objs: Iterable[Any], *, batch_size: int = BATCH) -> int:
        """Insert instances of one dataclass in one transaction; returns the row count. If
        any row fails, nothing is written and :class:`WriteError` names the row index and
        the column."""
        rows = await self._bound_first(objs)
        return await self._run(write.insert_many, self._db, rows, batch_size=batch_size)

    async def upsert(self, obj: T) -> T:
        """Insert ``obj`` or, if its key exists, replace that row (and its child rows)."""
        await self._bound(type(obj))
        await self._run(write.upsert_many, self._db, [obj])
        return obj

    async def upsert_many(self, objs: Iterable[Any], *, batch_size: int = BATCH) -> int:
        """Insert-or-replace by primary key, in one transaction; returns the row count."""
        rows = await self._bound_first(objs)
        return await self._run(write.upsert_many, self._db, rows, batch_size=batch_size)

    @overload
    async def update(self, target: type, values: Mapping[str, Any], *, where: Any) -> int: ...

    @overload
    async def update(self, target: object) -> None: ...

    async def update(
        self, target: Any, values: Mapping[str, Any] | None = None, *, where: Any = None
    ) -> int | None:
        """Write every field of an instance to the row with its key, or, given a class, set
        ``values`` on the rows matching ``where`` (as :meth:`Store.update`)."""
        await self._bound(target if isinstance(target, type) else type(target))
        return await self._run(write.update, self._db, self._point, target, values, where=where)

    async def delete(self, target: Any, *, where: Any = None) -> int:
        """Delete one instance (by its key) or, given a class, the rows matching ``where``
        (required: ``where={}`` deletes every row)."""
        await self._bound(target if isinstance(target, type) else type(target))
        return await self._run(write.delete, self._db, self._point, target, where=where)

    # -- reading -------------------------------------------------------------------------
    async def get(self, cls: type[T], key: Any) -> T | None:
        """The instance whose primary key is ``key``, or ``None``."""
        await self._bound(cls)
        found: T | None = await self._run(read.get, self._db, self._point, cls, key)
        return found

    async def count(self, cls: type, where: Any = None) -> int:
        """Number of rows matching ``where``."""
        await self._bound(cls)
        return await self._run(read.count, self._db, cls, where)

    @overload
    def select(
        self,
        cls: type[T],
        where: Any = None,
        order_by: Any = None,
        limit: int | None = None,
        offset: int | None = None,
        *,
        columns: None = None,
        as_dict: Literal[False] = False,
    ) -> AsyncIterator[T]: ...

    @overload
    def select(
        self,
        cls: type,
        where: Any = None,
        order_by: Any = None,
        limit: int | None = None,
        offset: int | None = None,
        *,
        columns: Sequence[str],
        as_dict: Literal[False] = False,
    ) -> AsyncIterator[tuple[Any, ...]]: ...

    @overload
    def select(
        self,
        cls: type,
        where: Any = None,
        order_by: Any = None,
        limit: int | None = None,
        offset: int | None = None,
        *,
        columns: Sequence[str] | None = None,
        as_dict: Literal[True],
    ) -> AsyncIterator[dict[str, Any]]: ...

    def select(
        self,
        cls: type,
        where: Any = None,
        order_by: Any = None,
        limit: int | None = None,
        offset: int | None = None,
        *,
        columns: Sequence[str] | None = None,
        as_dict: bool = False,
    ) -> AsyncIterator[Any]:
        """Stream instances of ``cls`` (``async for``); ``columns`` and ``as_dict`` as for
        :meth:`Store.select`. The rows come through one connection, given back when the
        iteration ends."""
        return self._stream(
            cls,
            read.select,
            self._db,
            cls,
            where,
            order_by,
            limit,
            offset,
            columns=columns,
            as_dict=as_dict,
        )

    async def _stream(
        self, cls: type, make: Callable[..., Iterator[Any]], *args: Any, **kw: Any
    ) -> AsyncIterator[Any]:
        await self._bound(cls)
        async with self._connection() as (conn, joined):
            rows = await self._step(conn, joined, make, *args, **kw)
            try:
                while True:
                    batch = await self._step(conn, joined, _take, rows)
                    if not batch:
                        return
                    for item in batch:
                        yield item
            finally:
                close = getattr(rows, "close", None)
                if close is not None and not conn.invalidated:
                    await self._step(conn, joined, close)  # a generator left early: end it

    async def _step(
        self, conn: AsyncConnection, joined: bool, fn: Callable[..., R], *args: Any, **kw: Any
    ) -> R:
        with bridged_call():
            try:
                result: R = await conn.run_sync(self._in_call, joined, fn, *args, **kw)
            except Exception as exc:
                await _cancelled(conn, exc)
                raise
            if cancelled_since_call():  # yet the call went on: a driver lost the error
                raise asyncio.CancelledError()
        return result


async def _cancelled(conn: AsyncConnection, exc: Exception) -> None:
    """Raise CancelledError for ``exc`` if the calling task is being cancelled: the error
    then comes of the cancellation (aiomysql closes a connection cancelled during a
    statement; psycopg's is left inside its COPY), and the task must end with it. The
    connection, in a state no one knows, is invalidated: the server rolls back what it had
    not committed (the whole transaction() the call was part of)."""
    task = asyncio.current_task()
    if task is None or not task.cancelling():
        return
    await conn.invalidate()
    raise asyncio.CancelledError() from exc


async def _rolled_back(transaction: AsyncTransaction, conn: AsyncConnection) -> None:
    """Roll back a transaction() (or its savepoint) that an exception ends; on a
    connection invalidated meanwhile there is nothing to roll back (the server does), and
    a rollback that fails while the task is being cancelled ends as :func:`_cancelled`."""
    if conn.invalidated:
        return
    try:
        await transaction.rollback()
    except Exception as exc:
        await _cancelled(conn, exc)
        raise


def _take(rows: Iterator[Any]) -> list[Any]:
    return list(islice(rows, STREAM_BATCH))


__all__ = ["STREAM_BATCH", "AsyncStore"]

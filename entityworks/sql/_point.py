"""The point path: one-row ``get``, ``insert``, ``update`` and ``delete`` (by instance, or
by a ``where`` that is exactly the key) in one statement, one round trip.

Each thread keeps a driver connection of its own for these calls, out of the pool and in
autocommit: one statement is its own transaction, so a read sends the ``SELECT`` alone (no
``BEGIN``, no server-side cursor, no rollback on return to a pool) and a write its statement
alone. Their SQL is compiled once per (table, shape) and sent with the driver's own
parameters (psycopg prepares a statement it sees often). A connection idle for longer than
:attr:`PointPath.ping_after_idle` seconds is pinged first, as pools do, and replaced if the
server has gone (restarted, or the connection killed); a read that still meets a dead
connection is sent once more on a new one.

A one-row call through SQLAlchemy costs more than the row itself; this path skips it where
nothing would notice (no echo, no listener, not inside ``Store.transaction()``, no child
tables, not an in-memory SQLite database). Anything else, and any error to report, is left to
the general path.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import weakref
from collections.abc import Callable, Mapping, Sequence
from time import monotonic
from typing import Any

import sqlalchemy as sa

from ..errors import NotFoundError, WriteError
from ._bound import BoundModel, Processor, counting_from
from ._bulk import as_dicts, encode, restated_keys
from ._database import Database
from ._locate import BIND_ERRORS, error_text, identical, refusal
from ._log import INFO, listened, log_statement, sql_logger
from .filters import encode_value

#: Seconds a point connection may sit idle before its next call pings it first.
PING_AFTER_IDLE = 1.0


@dataclasses.dataclass(frozen=True)
class Statement:
    """One compiled point statement: its SQL and, per parameter, its source.

    ``sources[i]`` is where parameter ``i`` comes from (an index into the SQL row, or the
    key for ``-1``); ``names`` the parameter names for a driver that binds by name (psycopg,
    PyMySQL), ``None`` for one that binds by position (sqlite3).
    """

    sql: str
    sources: tuple[int, ...]
    names: tuple[str, ...] | None

    def params(self, values: Sequence[Any], key: Any = None) -> Any:
        picked = [key if i < 0 else values[i] for i in self.sources]
        if self.names is None:
            return picked
        return dict(zip(self.names, picked, strict=True))


#: Every PointPath of the process, for :func:`_forked`.
_LIVE: weakref.WeakSet[PointPath] = weakref.WeakSet()


def _forked() -> None:
    """In a forked child: forget the parent's connections, unclosed (closing one would end
    the parent's session on the shared socket); the child's threads open their own."""
    for point in list(_LIVE):
        point._generation += 1
        point._connections = []


os.register_at_fork(after_in_child=_forked)


class _Local(threading.local):
    """A thread's point connection (class defaults: asking costs no AttributeError)."""

    point: Any = None
    point_cursor: Any = None
    point_generation: int | None = None
    point_used: float = 0.0


class PointPath:
    """The one-row path of a Store (see the module docstring)."""

    def __init__(self, db: Database) -> None:
        self.db = db
        #: False for in-memory SQLite (and databases without a point path): every call
        #: takes the general path.
        self.usable: bool = db.backend.point_path(db.url)
        #: Seconds of idleness after which a connection is pinged before it is used.
        self.ping_after_idle: float = PING_AFTER_IDLE
        self.local: threading.local = _Local()
        # Closing the store starts a new generation of connections.
        self._generation = 0
        self._connections: list[Any] = []
        self._pings = db.backend.pings_idle
        _LIVE.add(self)  # a forked child opens connections of its own
        # PostgreSQL has no lastrowid: a generated key comes back with RETURNING
        self._returning = not getattr(db.dialect, "postfetch_lastrowid", True)
        # rows read from the driver's cursor are decoded as SQLAlchemy would, unless the
        # codec has its result processors already (see Backend.reads_raw_cursor)
        self._processed = db.backend.reads_raw_cursor()
        # the bulk path's encoders, or the complete checks first where the driver would
        # convert a value of another type itself (see Backend.refuses_other_types)
        self._fast_writes = db.backend.refuses_other_types()

    # -- connections ---------------------------------------------------------------------
    def close(self) -> None:
        """Close every connection the threads hold; they open new ones if used again."""
        with self.db.lock:
            self._generation += 1
            held, self._connections = self._connections, []
        for raw in held:
            try:
                raw.close()
            except Exception:  # pragma: no cover - a connection already gone
                pass

    def connection(self, model: BoundModel) -> Any | None:
        """The driver connection this thread keeps for one-row calls, or None when they
        take the general path: an in-memory database, a class with child tables, inside
        ``Store.transaction()``, or while SQL is echoed or listened to."""
        db = self.db
        if not self.usable or model.children or db.in_transaction:
            return None
        engine = db.engine
        if engine.echo or listened(engine):
            return None
        local: Any = self.local
        if local.point_generation != self._generation:
            return self._open(monotonic())
        raw = local.point
        if self._pings:  # only idleness asks for the time
            now = monotonic()
            if now - local.point_used > self.ping_after_idle:
                raw = self._ping(raw, now)
            local.point_used = now
        return raw

    def _open(self, now: float) -> Any:
        """A new connection for this thread, set up as the pool's are, then taken out of
        the pool (it stays in autocommit, which pooled connections must not)."""
        proxy = self.db.engine.raw_connection()
        raw: Any = proxy.driver_connection
        proxy.detach()
        self.db.backend.point_connection(raw)
        local = self.local
        with self.db.lock:
            self._connections.append(raw)
            local.point_generation = self._generation
        local.point = raw
        local.point_cursor = raw.cursor()
        local.point_used = now
        return raw

    def _drop(self, raw: Any) -> None:
        """Forget and close this thread's connection ``raw`` (the server has gone)."""
        with self.db.lock:
            if raw in self._connections:
                self._connections.remove(raw)
        self.local.point_generation = None
        try:
            raw.close()
        except Exception:  # pragma: no cover - closing a dead connection
            pass

    def _ping(self, raw: Any, now: float) -> Any:
        """``raw`` if the server answers, else a new connection."""
        try:
            self.db.dialect.do_ping(raw)
            return raw
        except Exception:  # noqa: BLE001 - any failure: the connection is not usable
            self._drop(raw)
            return self._open(now)

    def _execute(self, model: BoundModel, sql: str, params: Any, read: bool) -> Any:
        """Run one statement on this thread's connection; its cursor.

        A lost connection is dropped; a read is then sent once more on a new one, a write
        raises :class:`sqlalchemy.exc.DBAPIError` (``connection_invalidated``): whether the
        server ran it is not known.
        """
        if sql_logger.isEnabledFor(INFO):
            log_statement(sql, values=params)
        cursor = self.local.point_cursor
        try:
            cursor.execute(sql, params)
            return cursor
        except self.db.dbapi_error as exc:
            if read:
                again = self._reconnected(exc, sql, params)
                if again is not None:
                    return again
                raise
            if not self._lost(exc):
                raise
            raise sa.exc.DBAPIError.instance(
                sql,
                params,
                exc,
                self.db.dbapi_error,
                connection_invalidated=True,
                dialect=self.db.dialect,
            ) from exc

    def _lost(self, exc: Exception) -> bool:
        """True (and the connection dropped) when ``exc`` says the connection is lost."""
        raw = self.local.point
        if not (self._pings and self.db.dialect.is_disconnect(exc, raw, self.local.point_cursor)):  # type: ignore[arg-type]
            return False
        self._drop(raw)
        return True

    def _reconnected(self, exc: Exception, sql: str, params: Any) -> Any | None:
        """After a read failed with ``exc``: None if the connection is not lost, else the
        cursor of the read sent again on a new connection."""
        if not self._lost(exc):
            return None
        self._open(monotonic())
        cursor = self.local.point_cursor
        cursor.execute(sql, params)
        return cursor

    # -- statements ----------------------------------------------------------------------
    def _statement(self, model: BoundModel, kind: str, columns: tuple[str, ...] = ()) -> Statement:
        """The compiled statement ``kind`` of ``model`` (``columns``: the SET list of an
        update by key), built once per (table, shape)."""
        cache_key = f"point:{kind}:{','.join(columns)}" if columns else "point:" + kind
        cached = model.sql_cache.get(cache_key)
        if cached is not None:
            return cached  # type: ignore[return-value]
        table = model.table
        key = model.schema.require_key(kind.split("_")[0]).name
        names = model.names
        # parameters named after their SQL row index (a column's own name is reserved in
        # an INSERT's or UPDATE's VALUES); -1: the key in the WHERE clause
        where = table.c[key] == sa.bindparam("_ew_key")

        def params(chosen: Sequence[str]) -> dict[str, Any]:
            return {n: sa.bindparam(f"_ew_{names.index(n)}") for n in chosen}

        stmt: Any
        if kind == "get":
            stmt = model.codec.select(table).where(where)
        elif kind == "insert":
            stmt = table.insert().values(params(names))
        elif kind == "insert_generated":
            stmt = table.insert().values(params([n for n in names if n != key]))
            if self._returning:
                stmt = stmt.returning(table.c[key])
        elif kind == "update":
            restated = restated_keys(self.db, model)  # a Decimal key's new exponent
            stmt = (
                table.update()
                .where(where)
                .values(params([n for n in names if n != key or n in restated]))
            )
        elif kind == "update_key":
            stmt = table.update().where(where).values(params(columns))
        else:
            stmt = table.delete().where(where)
        compiled = stmt.compile(dialect=self.db.dialect)
        escaped = compiled.escaped_bind_names
        order = (
            list(compiled.positiontup) if compiled.positiontup is not None else list(compiled.binds)
        )
        bound = (
            None if compiled.positiontup is not None else tuple(escaped.get(n, n) for n in order)
        )
        sources = tuple(
            -1 if compiled.binds[n].key == "_ew_key" else int(compiled.binds[n].key[4:])
            for n in order
        )
        statement = Statement(compiled.string, sources, bound)
        model.sql_cache[cache_key] = statement  # type: ignore[assignment]
        return statement

    def _key(self, model: BoundModel, key: Any) -> Any:
        """``key`` as the driver binds it (checked and encoded as a filter's value)."""
        column = model.schema.primary_key
        value = encode_value(column, key)
        bind = model.binds[model.names.index(column.name)]  # type: ignore[union-attr]
        return bind(value) if bind is not None and value is not None else value

    # -- reads ---------------------------------------------------------------------------
    def get(self, raw: Any, model: BoundModel, key: Any) -> Any:
        """The instance of ``model`` with ``key``, or None: one ``SELECT``."""
        plan: Any = model.sql_cache.get("point:get+")
        if plan is None:
            plan = self._get_plan(model)
        sql, column, bind, name = plan
        value = encode_value(column, key)
        if bind is not None and value is not None:
            value = bind(value)
        params = (value,) if name is None else {name: value}
        if sql_logger.isEnabledFor(INFO):
            log_statement(sql, values=params)
        cursor = self.local.point_cursor
        try:
            cursor.execute(sql, params)
        except self.db.dbapi_error as exc:
            cursor = self._reconnected(exc, sql, params)  # a lost connection: sent again
            if cursor is None:
                with self.db.reading(model):  # a table never created: NoSuchTableError
                    raise
        row = cursor.fetchone()
        if row is None:
            return None
        if not self._processed:
            row = self._result(model)(row)
        read = model.codec.read
        if read is not None:
            row = read(row)
        if model.plain:
            return model.cls(*row)
        offset = model.field_index[0] if model.field_index else len(model.fields)
        return model.build(*row[offset:])

    def _get_plan(self, model: BoundModel) -> tuple[str, Any, Processor, str | None]:
        """The SQL of ``get``, its key column, the key's bind processor and the name of
        its parameter (None: by position), built once per class."""
        statement = self._statement(model, "get")
        column = model.schema.primary_key
        bind = model.binds[model.names.index(column.name)]  # type: ignore[union-attr]
        plan = (
            statement.sql,
            column,
            bind,
            None if statement.names is None else statement.names[0],
        )
        model.sql_cache["point:get+"] = plan  # type: ignore[assignment]
        return plan

    def _result(self, model: BoundModel) -> Callable[[Sequence[Any]], Sequence[Any]]:
        """SQLAlchemy's result processors for rows of ``model`` read from this driver's
        cursor (by the column types the cursor describes), built once per class."""
        cached = model.sql_cache.get("point:result")
        if cached is not None:
            return cached  # type: ignore[return-value]
        description = self.local.point_cursor.description
        dialect = self.db.dialect
        processors: list[Processor] = [
            model.table.c[name].type.dialect_impl(dialect).result_processor(dialect, d[1])
            for name, d in zip(model.names, description, strict=True)
        ]
        active = [(i, p) for i, p in enumerate(processors) if p is not None]

        def process(row: Sequence[Any]) -> Sequence[Any]:
            if not active:
                return row
            out = list(row)
            for i, fn in active:
                out[i] = fn(out[i])
            return out

        model.sql_cache["point:result"] = process  # type: ignore[assignment]
        return process

    # -- writes --------------------------------------------------------------------------
    def write(self, obj: Any, kind: str) -> int:
        """Insert, update or delete ``obj`` alone, in one statement (its own transaction).
        Returns 0 when the general path must run instead (child tables, inside a
        transaction, a value the encoders refuse, which it names), else 1 + rows affected.

        A statement the database refuses is not run again: the row is checked as the
        general path checks it (which names a value of the wrong type), written once more
        only if that check changed a value, and otherwise reported as the general path
        reports it (see :func:`entityworks.sql._locate.refusal`).
        """
        model = self.db.models.get(type(obj))
        if model is None:
            if not self.usable or isinstance(obj, type) or not dataclasses.is_dataclass(obj):
                return 0
            model = self.db.model(type(obj))
        key = model.schema.primary_key
        if key is None or model.schema.composite:
            return 0
        raw = self.connection(model)
        if raw is None:
            return 0
        key_value = getattr(obj, key.name)
        if kind == "delete":
            if key_value is None:
                return 0
            return self._delete(model, key_value)
        generated = kind == "insert" and key_value is None and key.autoincrement
        if (key_value is None and not generated) or len(model.names) == 1:
            return 0
        encoders = model.encoders if self._fast_writes else model.codec.checked
        try:
            statement = self._statement(model, "insert_generated" if generated else kind)
            row = self._encoder(model, encoders is model.encoders)(obj)
            params = statement.params(row, row[model.names.index(key.name)])
        except Exception:
            return 0  # the general path names the column
        try:
            cursor = self._run(model, statement.sql, params, kind, key_value)
        except (self.db.dbapi_error, *BIND_ERRORS) as exc:
            # the general path's checks: they name a value of the wrong type, or convert
            # what typing allows (then the row is written with the converted values)
            [row] = encode(model, [obj], counting_from(0), model.codec.checked)
            checked = statement.params(row, row[model.names.index(key.name)])
            if encoders is model.codec.checked or identical(params, checked):
                raise self._refusal(model, obj, kind, generated, row, exc) from exc
            try:
                cursor = self._run(model, statement.sql, checked, kind, key_value)
            except (self.db.dbapi_error, *BIND_ERRORS) as again:
                raise self._refusal(model, obj, kind, generated, row, again) from again
        if generated:
            new = cursor.fetchone()[0] if self._returning else cursor.lastrowid
            object.__setattr__(obj, key.name, new)
        count: int = cursor.rowcount
        return 1 + max(count, 0)

    def _encoder(self, model: BoundModel, fast: bool) -> Callable[[Any], Sequence[Any]]:
        """``obj -> SQL row`` of one instance of ``model`` through its fast encoders (or
        the complete checks), compiled once per class (see ``RowCodec.row_encoder``)."""
        cache_key = "point:row" if fast else "point:row-checked"
        cached = model.sql_cache.get(cache_key)
        if cached is not None:
            return cached  # type: ignore[return-value]
        processors = model.encoders if fast else model.codec.checked
        attributes = [model.fields[i] for i in model.field_index]
        encoder: Callable[[Any], Sequence[Any]] | None = None
        if model.schema.parent is None:
            encoder = model.codec.row_encoder(attributes, processors)
        if encoder is None:

            def encoder(obj: Any) -> Sequence[Any]:
                [row] = encode(model, [obj], counting_from(0), processors)
                return row

        model.sql_cache[cache_key] = encoder  # type: ignore[assignment]
        return encoder

    def delete_key(self, model: BoundModel, key: Any) -> int:
        """Delete the row of ``model`` whose key is ``key``: 0 when the general path must
        run instead, else 1 + rows deleted."""
        if model.schema.composite or self.connection(model) is None:
            return 0
        return self._delete(model, key)

    def _delete(self, model: BoundModel, key: Any) -> int:
        try:
            statement = self._statement(model, "delete")
            params = statement.params((), self._key(model, key))
        except Exception:
            return 0  # the general path names the value
        try:
            cursor = self._execute(model, statement.sql, params, read=False)
        except (self.db.dbapi_error, *BIND_ERRORS) as exc:
            raise WriteError(
                f"{model.schema.name}: cannot delete: {error_text(exc)}; nothing was deleted",
                table=model.schema.name,
            ) from exc
        deleted: int = cursor.rowcount
        return 1 + max(deleted, 0)

    def update_key(self, model: BoundModel, assignments: Mapping[str, Any], key: Any) -> int | None:
        """``UPDATE ... SET assignments WHERE key = key`` (``assignments``: SQL column ->
        value encoded by the registry, as the general path gets them): the rows matched,
        or None when the general path must run instead (it also reports a refusal)."""
        if model.schema.composite or self.connection(model) is None:
            return None
        columns = tuple(sorted(assignments))
        try:
            statement = self._statement(model, "update_key", columns)
            binds = model.binds
            values: list[Any] = [None] * len(model.names)
            for name, value in assignments.items():
                i = model.names.index(name)
                bind = binds[i]
                values[i] = bind(value) if bind is not None and value is not None else value
            params = statement.params(values, self._key(model, key))
        except Exception:
            return None
        try:
            cursor = self._execute(model, statement.sql, params, read=False)
        except (self.db.dbapi_error, *BIND_ERRORS):
            return None  # refused, nothing written: the general path says why
        matched: int = cursor.rowcount
        return max(matched, 0)

    def _run(self, model: BoundModel, sql: str, params: Any, kind: str, key_value: Any) -> Any:
        """Execute one write statement (its own transaction); its cursor."""
        cursor = self._execute(model, sql, params, read=False)
        if kind == "update" and cursor.rowcount == 0:
            key = model.schema.primary_key.name  # type: ignore[union-attr]
            raise NotFoundError(f"{model.schema.name!r} has no row with {key}={key_value!r}")
        return cursor

    def _refusal(
        self,
        model: BoundModel,
        obj: Any,
        kind: str,
        generated: bool,
        row: Sequence[Any],
        exc: BaseException,
    ) -> WriteError:
        """The error the general path gives for the refused one-row write of ``obj``
        (``row``: its checked SQL row), found without running the statement again."""
        message = error_text(exc)
        number = counting_from(0)
        with self.db.connection() as conn:  # reads only: a missing reference's column
            if kind == "insert" and not generated and self._fast_writes:
                # the general path's raw executemany (SQLite)
                values = dict(zip(model.names, row, strict=True))
                return refusal(self.db, conn, model, message, 0, values, number, bound=True)
            [values] = as_dicts(model, [obj], number)  # what SQLAlchemy binds there
            if kind == "update":
                return refusal(
                    self.db, conn, model, message, None, None, number, bound=False, single=values
                )
            if generated:
                values.pop(model.schema.primary_key.name)  # type: ignore[union-attr]
            return refusal(self.db, conn, model, message, 0, values, number, bound=False)


__all__ = ["PING_AFTER_IDLE", "PointPath", "Statement"]

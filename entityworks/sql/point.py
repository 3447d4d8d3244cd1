"""The point path: one-row ``get``, ``insert``, ``update`` and ``delete`` on an SQLite file,
run on a raw sqlite3 connection kept per thread, with SQL compiled once per class.

A one-row call through SQLAlchemy costs more than the row itself; this path skips it where
nothing would notice (no echo, no listener, not inside ``Store.transaction()``, no child
tables). Anything else, and any error to report, is left to the general path.
"""

from __future__ import annotations

import dataclasses
import os
import threading
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from ..errors import NotFoundError, WriteError
from .bound import BoundModel, counting_from
from .bulk import as_dicts, encode_rows
from .database import Database
from .filters import encode_value
from .locate import BIND_ERRORS, error_text, identical, refusal
from .log import INFO, listened, log_statement, sql_logger


class PointPath:
    """The one-row fast path of a Store on an SQLite file (see the module docstring)."""

    def __init__(self, db: Database) -> None:
        self.db = db
        url = db.url
        #: False on other databases and in-memory SQLite: every call takes the general path.
        self.usable: bool = db.backend.point_path(url)
        self.local: threading.local = threading.local()
        # Closing the store starts a new generation of connections.
        self._generation = 0
        self._connections: list[Any] = []

    def close(self) -> None:
        """Close every raw connection the threads hold; they open new ones if used again."""
        with self.db.lock:
            self._generation += 1
            held, self._connections = self._connections, []
        for raw in held:
            try:
                raw.close()
            except Exception:  # pragma: no cover - a connection already gone
                pass

    def connection(self, model: BoundModel) -> Any | None:
        """The raw sqlite3 connection this thread keeps for single-row calls, or None when
        they take the general path: another database, an in-memory one, a class with child
        tables, inside ``Store.transaction()``, or while SQL is echoed or listened to."""
        if (not self.usable or model.children or self.db.in_transaction or self.db.engine.echo
                or listened(self.db.engine)):
            return None
        local = self.local
        if (getattr(local, "point_generation", None) != self._generation
                or local.point_pid != os.getpid()):
            proxy = self.db.engine.raw_connection()  # a pooled connection, configured as usual
            with self.db.lock:
                self._connections.append(proxy)
            local.point = proxy.driver_connection
            local.point_generation = self._generation
            local.point_pid = os.getpid()
        return local.point

    def _sql(self, model: BoundModel, kind: str) -> tuple[str, list[str]]:
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
        compiled = stmt.compile(dialect=self.db.dialect,
                                column_keys=names if kind.startswith("insert") else None)
        order = [compiled.binds[n].key for n in (compiled.positiontup or [])]
        value = (compiled.string, order)
        model.sql_cache[f"point:{kind}"] = value  # type: ignore[assignment]
        return value

    def get(self, raw: Any, model: BoundModel, key: Any) -> Any:
        sql, _order = self._sql(model, "get")
        column = model.schema.primary_key
        value = encode_value(column, key)
        bind = model.binds[model.names.index(column.name)]  # type: ignore[union-attr]
        params = (bind(value) if bind is not None else value,)
        if sql_logger.isEnabledFor(INFO):
            log_statement(sql, values=params)
        with self.db.reading(model):
            row = raw.execute(sql, params).fetchone()
        if row is None:
            return None
        if model.codec.read is not None:
            row = model.codec.read(row)
        if model.plain:
            return model.cls(*row)
        offset = model.field_index[0] if model.field_index else len(model.fields)
        return model.build(*row[offset:])

    def _plan(self, model: BoundModel, kind: str) -> tuple[str, list[int]]:
        """For a single-row write: the SQL and which values of the encoded SQL row its
        parameters take (by index); built once per model."""
        plan = model.sql_cache.get(f"plan:{kind}")
        if plan is None:
            sql, order = self._sql(model, kind)
            key = model.schema.require_key(kind).name
            # "_ew_key" is the key in an UPDATE's WHERE clause
            plan = (sql, [model.names.index(key if n == "_ew_key" else n)  # type: ignore[assignment]
                          for n in order])
            model.sql_cache[f"plan:{kind}"] = plan  # type: ignore[assignment]
        return plan  # type: ignore[return-value]

    def write(self, obj: Any, kind: str) -> int:
        """Insert, update or delete ``obj`` alone on the thread's raw connection, in a
        transaction of its own. Returns 0 when the general path must run instead (another
        database, child tables, a value the encoders refuse, which it names), else 1 + rows
        affected.

        A statement the database refuses is not run again: the row is checked as the
        general path checks it (which names a value of the wrong type), written once more
        only if that check changed a value, and otherwise reported as the general path
        reports it (see :func:`entityworks.sql.locate.refusal`).
        """
        model = self.db.models.get(type(obj))
        if model is None:
            if (not self.usable or isinstance(obj, type)
                    or not dataclasses.is_dataclass(obj)):
                return 0
            model = self.db.model(type(obj))
        raw = self.connection(model)
        key = model.schema.primary_key
        if raw is None or key is None:
            return 0
        key_value = getattr(obj, key.name)
        generated = kind == "insert" and key_value is None and key.autoincrement
        if key_value is None and not generated:
            return 0
        where: list[int] = []
        try:
            if kind == "delete":
                sql, _order = self._sql(model, "delete")
                value = encode_value(key, key_value)
                bind = model.binds[model.names.index(key.name)]
                params: Sequence[Any] = (bind(value) if bind is not None else value,)
            else:
                sql, where = self._plan(model, "insert_generated" if generated else kind)
                [row] = encode_rows(model, [obj], counting_from(0), model.encoders)
                params = [row[i] for i in where]
        except Exception:
            return 0  # the general path names the column
        try:
            cursor = self._run(raw, model, sql, params, kind, key_value)
        except (self.db.dbapi_error, *BIND_ERRORS) as exc:
            if kind == "delete":
                raise WriteError(f"{model.schema.name}: cannot delete: {error_text(exc)}; "
                                 "nothing was deleted", table=model.schema.name) from exc
            # the general path's checks: they name a value of the wrong type, or convert
            # what typing allows (then the row is written with the converted values)
            [row] = encode_rows(model, [obj], counting_from(0), model.codec.checked)
            checked = [row[i] for i in where]
            if identical(params, checked):
                raise self._refusal(model, obj, kind, generated, row, exc) from exc
            try:
                cursor = self._run(raw, model, sql, checked, kind, key_value)
            except (self.db.dbapi_error, *BIND_ERRORS) as again:
                raise self._refusal(model, obj, kind, generated, row, again) from again
        if generated:
            object.__setattr__(obj, key.name, cursor.lastrowid)
        count: int = cursor.rowcount
        return 1 + max(count, 0)

    def _run(self, raw: Any, model: BoundModel, sql: str, params: Sequence[Any], kind: str,
             key_value: Any) -> Any:
        """Execute one statement in a transaction of its own; its cursor."""
        logged = sql_logger.isEnabledFor(INFO)
        if logged:
            log_statement("BEGIN IMMEDIATE")
            log_statement(sql, values=params)
        raw.execute("BEGIN IMMEDIATE")
        try:
            cursor = raw.execute(sql, params)
            if kind == "update" and cursor.rowcount == 0:
                raw.execute("ROLLBACK")
                key = model.schema.primary_key.name  # type: ignore[union-attr]
                raise NotFoundError(f"{model.schema.name!r} has no row with "
                                    f"{key}={key_value!r}")
            raw.execute("COMMIT")
            if logged:
                log_statement("COMMIT")
        except BaseException:
            if raw.in_transaction:
                raw.execute("ROLLBACK")
            if logged:
                log_statement("ROLLBACK")
            raise
        return cursor

    def _refusal(self, model: BoundModel, obj: Any, kind: str, generated: bool,
                 row: Sequence[Any], exc: BaseException) -> WriteError:
        """The error the general path gives for the refused one-row write of ``obj``
        (``row``: its checked SQL row), found without running the statement again."""
        message = error_text(exc)
        number = counting_from(0)
        with self.db.connection() as conn:  # reads only: a missing reference's column
            if kind == "insert" and not generated:  # the general path's raw executemany
                values = dict(zip(model.names, row, strict=True))
                return refusal(self.db, conn, model, message, 0, values, number, bound=True)
            [values] = as_dicts(model, [obj], number)  # what SQLAlchemy binds there
            if kind == "update":
                return refusal(self.db, conn, model, message, None, None, number,
                               bound=False, single=values)
            values.pop(model.schema.primary_key.name)  # type: ignore[union-attr]
            return refusal(self.db, conn, model, message, 0, values, number, bound=False)

__all__ = ["PointPath"]

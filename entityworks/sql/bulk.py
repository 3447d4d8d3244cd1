"""Bulk writing: instances encoded to SQL rows and sent in batches by the dialect's fastest
path (SQLite's ``executemany`` on the raw cursor, inserts 64 rows to a statement, PostgreSQL's
binary COPY, SQLAlchemy's ``executemany`` elsewhere), with the compiled INSERT and upsert
statements cached per model.

Kept apart from :mod:`~entityworks.sql.write`, which decides what to write (keys, child
rows, updates, deletes); this module only moves rows.
"""

from __future__ import annotations

import decimal
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from itertools import chain, islice
from typing import Any

import sqlalchemy as sa

from .._gcpause import paused_gc
from ..errors import EntityworksError
from ..model.construct import column_getter, fields_getter
from ..registry import encode_error
from .bound import BoundModel, Processor, RowNumber
from .database import Database
from .locate import (
    attempt,
    error_text,
    guard,
    identical,
    refusal,
    refused,
    unique_clash,
)
from .log import INFO, logged, sql_logger
from .rowcodec import GateRefused

BATCH = 20_000


def row_getter(model: BoundModel) -> Callable[[Any], tuple[Any, ...]]:
    """Row tuple of one instance (or of a ``(parent_key, position, item)`` child row)."""
    inner = fields_getter(tuple(model.fields[i] for i in model.field_index))
    if model.schema.parent is not None:
        links = model.schema.links
        if links > 2:  # a child of a child: (parent_key, position_1, ..., position, item)
            return lambda r: (*r[:links], *inner(r[links]))
        return lambda r: (r[0], r[1], *inner(r[2]))
    return inner


def encode_rows(
    model: BoundModel, objs: list[Any], number: RowNumber, encoders: list[Processor]
) -> list[Sequence[Any]]:
    """SQL rows of ``objs``: each schema column through its encoder, then the companions."""
    getter = row_getter(model)
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


def encode_fast(model: BoundModel, objs: list[Any], number: RowNumber) -> list[Sequence[Any]]:
    """``encode_rows(model, objs, number, model.encoders)``, a column at a time.

    The rows are turned into columns (``zip(*rows)``), each column checked and encoded as a
    whole (``RowCodec.fast_columns``: a type test per value at C speed, the costly parts of
    a rule only where a type has them), and turned back into rows. When a column holds a
    value its rule refuses, :func:`encode_rows` encodes the batch again row by row: it
    names the class, field and row, as it always did.
    """
    steps = model.codec.fast_columns
    if not objs or not any(steps):
        return list(map(row_getter(model), objs))
    # Tuples by the ten thousand, holding plain values: the collector's passes over them
    # would find nothing (see entityworks._gcpause) and cost a third of the encoding.
    with paused_gc():
        if model.schema.parent is None:  # each column straight from the instances
            columns: list[Sequence[Any]] = [
                column_getter(model.fields[i])(objs) for i in model.field_index
            ]
        else:  # child rows: (parent key, positions..., item)
            columns = list(zip(*map(row_getter(model), objs), strict=True))
        try:
            encoded = model.codec.encode_columns(columns)
        except Exception:
            return encode_rows(model, objs, number, model.encoders)
        return list(zip(*encoded, strict=True))


def insert_sql(db: Database, model: BoundModel) -> str:
    sql: str = cached_statement(db, model, "insert", lambda: model.table.insert())
    return sql


#: Rows per statement of :func:`insert_driver_rows`: one INSERT of many rows runs one
#: prepared statement for all of them, about a third less work for SQLite than as many
#: one-row executions (measured on a catalog's corridor rows).
ROWS_PER_INSERT = 64
#: Parameters a statement may hold on the oldest SQLite the driver may link (999; 32766
#: since 3.32).
_SQLITE_PARAMETERS = 999


def multi_insert_sql(db: Database, model: BoundModel, rows: int) -> str | None:
    """The INSERT of ``rows`` rows in one statement, compiled, its positional parameters
    each row's ``model.names`` in turn; ``None`` where the compiled order differs."""
    kind = f"insert:{rows}"
    if kind not in model.sql_cache:
        names = model.names
        stmt = model.table.insert().values(
            [{name: sa.bindparam(f"r{r}_{i}") for i, name in enumerate(names)} for r in range(rows)]
        )
        compiled = stmt.compile(dialect=db.dialect)
        expected = [f"r{r}_{i}" for r in range(rows) for i in range(len(names))]
        columns = [c.key for c in model.table.columns if c.key in names]
        same = list(compiled.positiontup or []) == expected and columns == names
        model.sql_cache[kind] = compiled.string if same else ""
    return model.sql_cache[kind] or None


def insert_driver_rows(
    db: Database, cursor: Any, model: BoundModel, rows: Iterable[Sequence[Any]], count: int
) -> None:
    """Insert the ``count`` SQL rows of ``rows`` (bound for the driver, a list or a stream)
    with the driver's own cursor (SQLite): as many as fill whole statements of
    :data:`ROWS_PER_INSERT` rows (fewer for a wide table) that way, the rest one row per
    execution. A refused row fails its statement; the caller's savepoint undoes the call,
    and the caller finds the row with the one-row statement."""
    per = min(ROWS_PER_INSERT, _SQLITE_PARAMETERS // max(1, len(model.names)))
    whole = count // per if per > 1 else 0
    statement = multi_insert_sql(db, model, per) if whole else None
    single = insert_sql(db, model)
    # logged as the one-row statement it repeats (the rows listed only at DEBUG)
    how = "executemany" if statement is None else f"executemany, {per} to a statement"
    rest = iter(logged(single, rows, how, db.engine))
    if statement is not None:
        cursor.executemany(
            statement, (tuple(chain.from_iterable(islice(rest, per))) for _ in range(whole))
        )
        whole *= per
    else:
        whole = 0
    if whole < count:
        cursor.executemany(single, rest)


def raw_insert_sql(db: Database, model: BoundModel) -> str | None:
    """The INSERT compiled for the driver's own ``executemany`` (``Backend.raw_inserts``)
    with positional parameters in the order of ``model.names``; ``None`` (SQLAlchemy's
    path) if the positional form differs from the dialect's own before its VALUES."""
    if "insert:raw" not in model.sql_cache:
        dialect = db.dialect
        positional = type(dialect)(paramstyle="format")  # type: ignore[call-arg]
        for attribute in (
            "is_mariadb",
            "server_version_info",
            "_backslash_escapes",
            "default_schema_name",
        ):
            if hasattr(dialect, attribute):
                setattr(positional, attribute, getattr(dialect, attribute))
        insert = model.table.insert()
        compiled = insert.compile(dialect=positional, column_keys=model.names)
        own = insert.compile(dialect=dialect, column_keys=model.names).string
        order = [compiled.binds[name].key for name in compiled.positiontup or []]
        same = (
            order == model.names
            and compiled.string.partition(" VALUES ")[0] == own.partition(" VALUES ")[0]
        )
        model.sql_cache["insert:raw"] = compiled.string if same else ""
    return model.sql_cache["insert:raw"] or None


def upsert_sql(db: Database, model: BoundModel) -> sa.Executable:
    table = model.table
    keys = [c.name for c in model.schema.require_keys("upsert")]
    others = [n for n in model.names if n not in keys]
    restated = restated_keys(db, model)

    def build() -> sa.Executable:
        return db.backend.upsert(table, keys, others, restated)

    stmt: sa.Executable = cached_statement(db, model, "upsert", build)
    return stmt


def cached_statement(db: Database, model: BoundModel, kind: str, build: Callable[[], Any]) -> Any:
    """The statement for ``kind``: compiled SQL text on SQLite, the construct elsewhere."""
    if kind in model.sql_cache:
        return model.sql_cache[kind]
    stmt = build()
    if db.backend.raw_rows:
        compiled = stmt.compile(dialect=db.dialect, column_keys=model.names)
        order = list(compiled.positiontup or [])
        expected = [compiled.binds[name].key for name in order]
        if expected != model.names:  # pragma: no cover - guards the raw fast path
            raise EntityworksError(f"unexpected parameter order {expected}")
        value: Any = compiled.string
    else:
        value = stmt
    model.sql_cache[kind] = value
    return value


def write_rows(
    db: Database,
    conn: sa.Connection,
    model: BoundModel,
    objs: list[Any],
    number: RowNumber,
    statement: Any,
    kind: str,
    batch_size: int,
    *,
    instances: bool = True,
) -> None:
    """Write ``objs`` with the fastest path the dialect offers, in batches.

    ``number(i)`` is the caller's row number of ``objs[i]``, used in error messages.
    ``instances``: try one COPY straight from the instances first (PostgreSQL).
    """
    raw_rows = db.backend.raw_rows
    engine = db.engine
    copy = kind == "insert" and db.backend.copies
    streamed = raw_rows and not any(model.encoders) and model.codec.spread is None
    if streamed:
        # rows streamed from the objects hold nothing in memory: one executemany (one
        # savepoint, one cursor) instead of one per batch, a tenth of a Row8 insert's
        # time beyond the driver's own
        batch_size = max(batch_size, len(objs))
    for start in range(0, len(objs), batch_size):
        part = objs if start == 0 and batch_size >= len(objs) else objs[start : start + batch_size]
        at: RowNumber = lambda i, s=start: number(s + i)  # type: ignore[misc]  # noqa: E731
        if raw_rows:
            cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
            if not streamed:
                rows: Any = encode_fast(model, part, at)
            else:  # stream straight from the objects (SQLite's CHECKs refuse bad types)
                rows = map(row_getter(model), part)
            if len(part) == 1:
                rows = list(rows)  # compared with its checked form if refused
            if kind == "insert":  # whole statements of many rows, then one row each
                count = len(part)
                error = refused(
                    db,
                    conn,
                    lambda r=rows, c=cursor, n=count: (  # type: ignore[misc]
                        insert_driver_rows(db, c, model, r, n)
                    ),
                )
            else:
                error = refused(
                    db,
                    conn,
                    lambda r=rows, c=cursor: c.executemany(  # type: ignore[misc]
                        statement, logged(statement, r, "executemany", engine)
                    ),
                )
            if error is not None:
                # Refused: check every value in Python, which names a value of the wrong
                # type (or converts what typing allows, an int in a float field), then
                # write again, locating the row if the database still refuses.
                checked = encode_rows(model, part, at, model.codec.checked)
                if len(part) == 1 and identical(rows[0], checked[0]):
                    # the one row, refused as the checks leave it: named, not run again
                    values = dict(zip(model.names, checked[0], strict=True))
                    raise refusal(
                        db, conn, model, error_text(error), 0, values, at, bound=True
                    ) from error
                guard(
                    db,
                    conn,
                    model,
                    lambda r=checked, c=cursor: c.executemany(  # type: ignore[misc]
                        statement, logged(statement, r, "executemany", engine)
                    ),
                    at,
                    raw=(statement, lambda r=checked: r),  # type: ignore[misc]
                )
        elif copy:
            if start == 0 and instances and copy_instances(db, conn, model, objs):
                return
            rows = encode_fast(model, part, at)
            if not (
                model.codec.gates_pass(rows)
                and attempt(db, conn, lambda r=rows: copy_rows(db, conn, model, [r]))  # type: ignore[misc]
            ):
                # Refused: every value through the complete checks, then an ordinary
                # INSERT that locates the row the database still refuses.
                dicts = as_dicts(model, part, at)
                insert = model.table.insert()
                guard(
                    db,
                    conn,
                    model,
                    lambda d=dicts, i=insert: conn.execute(i, d),  # type: ignore[misc]
                    at,
                    replay=(insert, dicts),
                )
        else:
            sql = (
                raw_insert_sql(db, model) if (kind == "insert" and db.backend.raw_inserts) else None
            )
            if sql is not None:
                # the driver's executemany, its rows encoded a column at a time; refused,
                # the batch goes through SQLAlchemy below, which locates the row
                encoded = encode_fast(model, part, at)
                cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
                try:
                    if attempt(
                        db,
                        conn,
                        lambda r=encoded, c=cursor, s=sql: c.executemany(  # type: ignore[misc]
                            s, logged(s, r, "executemany", engine)
                        ),
                    ):
                        continue
                finally:
                    cursor.close()
            dicts = as_dicts(model, part, at)
            explain = (
                partial(unique_clash, db)
                if kind == "upsert" and db.backend.upsert_guarded
                else None
            )
            guard(
                db,
                conn,
                model,
                lambda d=dicts: conn.execute(statement, d),  # type: ignore[misc]
                at,
                replay=(statement, dicts),
                explain=explain,
            )


def as_dicts(model: BoundModel, objs: list[Any], number: RowNumber) -> list[dict[str, Any]]:
    """Rows as column -> value dicts, encoded by the registry (SQLAlchemy does the rest)."""
    rows = encode_rows(model, objs, number, model.registry_encoders)
    names = model.names
    return [dict(zip(names, row, strict=True)) for row in rows]


def copy_keys_gated(db: Database, model: BoundModel) -> bool:
    """True when :func:`copy_instances` applies on this dialect and its gate checks the
    primary key (an int key: exactly an int, never None) on every row."""
    key = model.schema.primary_key
    if not db.backend.copies or key is None:
        return False
    index = model.codec.fields.index(key.name)
    return any(i == index and not nullable for i, _kind, nullable in model.codec.gates)


def copy_instances(db: Database, conn: sa.Connection, model: BoundModel, objs: list[Any]) -> bool:
    """Write every instance in one binary COPY when the table's values go to psycopg as
    they are once checked (no bind processor, no companion: ``RowCodec.copy_checks``).
    The rows are read from the objects and checked (the gated columns hold their exact
    types, the others pass their type's ``check_column``) a chunk at a time while psycopg
    sends them, so that the client
    works while the server writes; False, with nothing written (the COPY is abandoned
    at the first chunk that fails), leaves the batches to the checked path."""
    codec = model.codec
    if model.schema.parent is not None or codec.copy_types is None or codec.copy_checks is None:
        return False
    chunks = codec.gated_chunks(objs, row_getter(model))
    try:  # the first chunk before any statement: a key to generate is usually there
        first = next(chunks, [])
    except GateRefused:
        return False
    return attempt(db, conn, lambda: copy_rows(db, conn, model, chain((first,), chunks)))


#: A binary COPY stream's header (signature, flags, no extension) and trailer, from
#: PostgreSQL's documentation of the format.
_COPY_HEADER = b"PGCOPY\n\xff\r\n\x00" + bytes(8)
_COPY_TRAILER = b"\xff\xff"


def _binary_rows(copy: Any) -> tuple[Callable[[Any, Any, bytearray], None], Any] | None:
    """psycopg's own row formatter of a binary COPY (the C function ``write_row`` calls)
    and its transformer, or ``None`` where this psycopg lays them out otherwise."""
    try:
        from psycopg import _copy_base

        fmt = _copy_base.format_row_binary
        tx = copy.formatter.transformer
    except (ImportError, AttributeError):
        return None
    return fmt, tx


def copy_rows(
    db: Database, conn: sa.Connection, model: BoundModel, chunks: Iterable[Sequence[Sequence[Any]]]
) -> None:
    """One COPY of the rows of ``chunks`` (an iterable of row lists).

    A binary COPY formats each chunk with psycopg's own row formatter (what ``write_row``
    calls) into one buffer and writes that: the same bytes, without two Python calls per
    row (a sixth of the client's time on the Mixed row)."""
    preparer = db.dialect.identifier_preparer
    columns = ", ".join(preparer.quote(model.table.c[n].name) for n in model.names)
    # Identifiers quoted by SQLAlchemy; the data travels in the COPY stream, not in SQL.
    sql = f"COPY {preparer.format_table(model.table)} ({columns}) FROM STDIN"
    types = model.codec.copy_types
    if types is not None:  # binary: psycopg dumps each value as its column's exact type
        sql += " (FORMAT BINARY)"
    if db.engine.echo or sql_logger.isEnabledFor(INFO):
        chunks = [logged(sql, list(chain.from_iterable(chunks)), "COPY", db.engine)]
    raw = conn.connection.dbapi_connection
    with raw.cursor() as cursor:  # type: ignore[union-attr]
        with cursor.copy(sql) as copy:
            if types is not None:
                copy.set_types(types)
            direct = _binary_rows(copy) if types is not None else None
            parts = iter(chunks)
            if direct is not None:
                fmt, tx = direct
                # the first chunk is formatted before anything is sent: a psycopg whose
                # private formatter takes other arguments (a TypeError at once) falls back
                # to its public write_row, which also raises again for a value it refuses
                first = next(parts, None)
                out = bytearray(_COPY_HEADER)
                try:
                    for row in first or ():
                        fmt(row, tx, out)
                except TypeError:
                    parts = chain([first] if first is not None else [], parts)
                else:
                    send = copy.write
                    send(out)
                    for part in parts:
                        out = bytearray()
                        for row in part:
                            fmt(row, tx, out)
                        send(out)
                    send(_COPY_TRAILER)
                    return
            write = copy.write_row
            for part in parts:
                for row in part:
                    write(row)


def restated_keys(db: Database, model: BoundModel) -> list[str]:
    """Key columns an upsert or ``update(obj)`` sets although they match the row: a
    Decimal key equals the row's by value (1.5 = 1.50), and where the column itself keeps
    the scale (PostgreSQL's NUMERIC) the row takes the one just written, as its other
    columns do. (Elsewhere a companion column holds it, which is set anyway.)"""
    if not db.backend.keeps_decimal_scale:
        return []
    return [c.name for c in model.schema.key_columns if c.info.python_type is decimal.Decimal]


__all__ = [
    "BATCH",
    "ROWS_PER_INSERT",
    "as_dicts",
    "cached_statement",
    "copy_instances",
    "copy_keys_gated",
    "copy_rows",
    "encode_fast",
    "encode_rows",
    "insert_driver_rows",
    "insert_sql",
    "multi_insert_sql",
    "raw_insert_sql",
    "restated_keys",
    "row_getter",
    "upsert_sql",
    "write_rows",
]

"""PostgreSQL's binary COPY of a batch's rows: psycopg's ``Copy`` (or, under an AsyncStore,
its ``AsyncCopy`` through SQLAlchemy's greenlet bridge), fed either the bytes of the rows
made in C (:mod:`.native.pgrows`, each chunk's tuples formatted at once) or, where a value is
not the common case of its column, psycopg's own ``write_row``.

The C formatter writes the bytes psycopg's binary dumpers write for the same values (the
tests compare what the server gives back of both, byte for byte); it answers None for a
value it leaves to psycopg (another type, even a subclass; an int beyond its column; a
NaN Decimal; a naive datetime for TIMESTAMPTZ; a str UTF-8 cannot hold), and the batch
is then copied again by ``write_row`` (:func:`copied`), which gives the same rows or its
own error. A text column is formatted in C only on a connection whose client encoding is
UTF-8.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from itertools import chain
from typing import Any

from ...compat.sqlalchemy import awaited, turn
from ...errors import GateRefused
from .base import RowWriter
from .native import pgrows

#: A binary COPY stream's header (signature, flags, no extension) and trailer, from
#: PostgreSQL's documentation of the format.
COPY_HEADER = b"PGCOPY\n\xff\r\n\x00" + bytes(8)
COPY_TRAILER = b"\xff\xff"

#: Rows an AsyncStore's COPY writes per awaited call: small enough that the event loop gets
#: a turn often, large enough that bridging the call costs nothing per row.
COPY_SLICE = 1024


class _AwaitedCopy:
    """psycopg's ``AsyncCopy`` with the calls :func:`copy_rows` makes as sync ones, each
    awaited through SQLAlchemy's greenlet bridge (under an AsyncStore). Rows are written a
    slice of :data:`COPY_SLICE` at a time, each slice one awaited coroutine (psycopg's own
    ``write_row`` per row inside it, not one bridged call per row); the event loop gets a
    turn after every slice, whether or not the driver waited on the network (psycopg 3.1
    buffers them): other tasks run meanwhile, and a cancellation lands during a long COPY
    rather than after it."""

    def __init__(self, copy: Any) -> None:
        self._copy = copy

    def set_types(self, types: Sequence[str]) -> None:
        self._copy.set_types(types)

    def write(self, buffer: bytes | bytearray) -> None:
        awaited(self._copy.write(buffer))
        turn()

    def write_rows(self, rows: Sequence[Sequence[Any]]) -> None:
        """``rows``, each through psycopg's ``write_row``, a slice per bridged await."""
        for start in range(0, len(rows), COPY_SLICE):
            awaited(self._write_slice(rows[start : start + COPY_SLICE]))
            turn()

    async def _write_slice(self, rows: Sequence[Sequence[Any]]) -> None:
        write = self._copy.write_row
        for row in rows:
            await write(row)


@contextmanager
def copying(rows: RowWriter, sql: str) -> Iterator[Any]:
    """psycopg's COPY of ``sql`` on the batch's connection: its ``Copy``, or on asyncio (an
    AsyncStore's psycopg_async dialect) its ``AsyncCopy`` on the psycopg connection under
    SQLAlchemy's adapted one (the same connection and transaction), each call awaited
    (:class:`_AwaitedCopy`)."""
    if not rows.dialect.is_async:
        with rows.cursor() as cursor, cursor.copy(sql) as copy:
            yield copy
        return
    driver: Any = rows.conn.connection.driver_connection
    cursor = driver.cursor()
    try:
        manager = cursor.copy(sql)
        copy = awaited(manager.__aenter__())
        try:
            yield _AwaitedCopy(copy)
        except BaseException as exc:
            awaited(manager.__aexit__(type(exc), exc, exc.__traceback__))
            raise
        awaited(manager.__aexit__(None, None, None))
    finally:
        awaited(cursor.close())
    turn()  # after each COPY too: a batch's COPY may be shorter than a slice


def copy_rows(
    rows: RowWriter, chunks: Iterable[Sequence[Sequence[Any]]], *, without: int | None = None
) -> None:
    """One COPY of the SQL rows of ``chunks`` (an iterable of row lists); ``without``: the
    index of a column the rows leave out (the key, which the column's default gives).

    Binary (every column of a type psycopg can be told): each chunk's tuples formatted in
    C at once (see the module), else each row through psycopg's own ``write_row`` (each
    value dumped as its column's exact type), which buffers what it formats and sends it
    in large writes; text COPY where a column's type is not one of those."""
    model = rows.model
    preparer = rows.dialect.identifier_preparer
    names = [n for i, n in enumerate(model.names) if i != without]
    columns = ", ".join(preparer.quote(model.table.c[n].name) for n in names)
    # Identifiers quoted by SQLAlchemy; the data travels in the COPY stream, not in SQL.
    sql = f"COPY {preparer.format_table(model.table)} ({columns}) FROM STDIN"
    types = model.codec.copy_types
    if types is not None and without is not None:
        types = [t for i, t in enumerate(types) if i != without]
    if types is not None:  # binary: psycopg dumps each value as its column's exact type
        sql += " (FORMAT BINARY)"
    if rows.logging():
        chunks = [rows.logged(sql, list(chain.from_iterable(chunks)), "COPY")]
    codes = None if types is None else _codes(rows, types)
    with copying(rows, sql) as copy:
        if codes is not None:
            _write_native(copy, chunks, codes, rows)
            return
        if types is not None:
            copy.set_types(types)
        if isinstance(copy, _AwaitedCopy):
            for part in chunks:
                copy.write_rows(part)
            return
        write = copy.write_row
        for part in chunks:
            for row in part:
                write(row)


def copy_body(rows: RowWriter, body: Any) -> None:
    """One binary COPY of every column of ``rows``' table, its rows those ``body`` makes
    a slice at a time (see :meth:`PostgreSQL.arrow_rows`)."""
    model = rows.model
    preparer = rows.dialect.identifier_preparer
    columns = ", ".join(preparer.quote(model.table.c[n].name) for n in model.names)
    # Identifiers quoted by SQLAlchemy; the data travels in the COPY stream, not in SQL.
    sql = f"COPY {preparer.format_table(model.table)} ({columns}) FROM STDIN (FORMAT BINARY)"
    with copying(rows, sql) as copy:
        copy.write(COPY_HEADER)
        for part in body.parts():
            copy.write(part)
        copy.write(COPY_TRAILER)


#: The letter of each COPY type the C formatter writes (see :mod:`.native.pgrows`).
NATIVE = {
    "bool": "b",
    "int2": "2",
    "int4": "4",
    "int8": "8",
    "float8": "f",
    "text": "t",
    "bytea": "y",
    "uuid": "u",
    "date": "d",
    "time": "T",
    "timestamp": "s",
    "timestamptz": "z",
    "numeric": "n",
    "jsonb": "j",  # a str: version 1 and its UTF-8 (as the jsonb dumper, see postgresql.py)
}
#: The call's mark (``RowWriter.cache``) of rows the C formatter left to psycopg.
NOT_NATIVE = "postgresql:not-native"


class NotNative(GateRefused):
    """A value of the rows is not the common case the C formatter writes: psycopg's
    ``write_row`` copies them (:func:`copied`)."""

    def __init__(self) -> None:
        super().__init__("(left to psycopg's dumpers)", 0)


@cache
def native_codes(types: tuple[str, ...]) -> bytes | None:
    """The C formatter's codes of the COPY ``types``, None where one is not its own."""
    if not all(t in NATIVE for t in types):
        return None
    return "".join(NATIVE[t] for t in types).encode()


def _codes(rows: RowWriter, types: Sequence[str]) -> bytes | None:
    """The codes of ``types`` for this call's rows: None once a batch of the call was left
    to psycopg, or for text on a connection whose client encoding is not UTF-8."""
    if rows.cache.get(NOT_NATIVE):
        return None
    codes = native_codes(tuple(types))
    if codes is not None and b"t" in codes:
        utf8 = rows.cache.get("postgresql:utf8")
        if utf8 is None:
            driver: Any = rows.conn.connection.driver_connection
            utf8 = rows.cache["postgresql:utf8"] = driver.info.encoding == "utf-8"
        if not utf8:
            return None
    return codes


def _write_native(
    copy: Any, chunks: Iterable[Sequence[Sequence[Any]]], codes: bytes, rows: RowWriter
) -> None:
    """The whole binary COPY stream of ``chunks``, each chunk's tuples formatted in C;
    :class:`NotNative` (the call's rows then go through psycopg) at a chunk it leaves."""
    copy.write(COPY_HEADER)
    for part in chunks:
        body = pgrows.rows(part if type(part) is list else list(part), codes)
        if body is None:
            rows.cache[NOT_NATIVE] = True
            raise NotNative
        copy.write(body)
    copy.write(COPY_TRAILER)


def copied(
    rows: RowWriter,
    chunks: Iterable[Sequence[Sequence[Any]]],
    again: Callable[[], Iterable[Sequence[Sequence[Any]]] | None],
    *,
    copy: Callable[..., None] | None = None,
) -> bool:
    """:func:`copy_rows` of ``chunks`` in a savepoint (``RowWriter.attempt``); a batch the C
    formatter left to psycopg is copied again, its rows from ``again()``, by psycopg's
    ``write_row``. False, with nothing kept, when the rows are refused. ``copy``: the
    function that copies (``copy_rows`` as its caller's module names it)."""
    send = copy_rows if copy is None else copy
    refusal = rows.refused(lambda: send(rows, chunks))
    if refusal is None:
        return True
    if not isinstance(refusal, NotNative):
        return False
    retry = again()
    return retry is not None and rows.attempt(lambda: send(rows, retry))


__all__ = [
    "COPY_HEADER",
    "COPY_SLICE",
    "COPY_TRAILER",
    "NotNative",
    "copied",
    "copy_body",
    "copy_rows",
    "copying",
    "native_codes",
]

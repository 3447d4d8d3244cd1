"""PostgreSQL's reads of a query alone, its rows in chunks (libpq 17's chunked rows mode):
for a read whose connection sends nothing else until it ends (see
``PostgreSQL.read_batches``)."""

from __future__ import annotations

from collections.abc import Generator, Sequence
from functools import cache
from inspect import signature
from itertools import islice
from typing import Any

from .fetching import until_short


@cache
def chunked_rows() -> bool:
    """Whether psycopg can stream a query's rows in chunks of many rows (``Cursor.stream``
    with ``size``: psycopg 3.2 and a libpq of version 17 or later)."""
    import psycopg

    return psycopg.pq.version() >= 170000 and "size" in signature(psycopg.Cursor.stream).parameters


def streamed_batches(
    cursor: Any, sql: str, params: Any, size: int
) -> Generator[Sequence[Sequence[Any]], None, None]:
    """The rows of ``sql``, ``size`` at a time, as the server sends them in chunks of that
    many (libpq's chunked rows mode): one query, one round trip, no cursor on the server,
    never more than a chunk in memory. The connection answers nothing else until the rows
    are read or the read is left (psycopg then cancels the query and drains what came)."""
    rows = cursor.stream(sql, params, size=size)
    try:
        yield from until_short(lambda: list(islice(rows, size)), size)
    finally:
        rows.close()
        cursor.close()

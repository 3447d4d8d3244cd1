"""PostgreSQL: rows by binary COPY, NUMERIC keeping its scale, text without NUL, the schema
lock as a transaction-level advisory lock.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from contextlib import closing, contextmanager
from functools import cache
from itertools import count
from types import MappingProxyType
from typing import Any

import sqlalchemy as sa

from ...types.columns import all_of
from ...types.encoding import Processor, rule, skip_none
from . import pgread
from .base import Backend, RowWriter, setup_statement
from .binds import plain_binary
from .pgcopy import COPY_HEADER, COPY_TRAILER, NotNative, copied, copy_body, copy_rows
from .upserts import on_conflict

#: The advisory lock key of entityworks' schema changes.
LOCK_KEY = 0x656E74_6D6967
#: psycopg needs the exact PostgreSQL type of every column for a binary COPY; these are the
#: SQL names SQLAlchemy compiles our types to.
COPY_TYPES = {
    "BIGINT": "int8",
    "INTEGER": "int4",
    "SMALLINT": "int2",
    "TEXT": "text",
    "DOUBLE PRECISION": "float8",
    "NUMERIC": "numeric",
    "BOOLEAN": "bool",
    "BYTEA": "bytea",
    "DATE": "date",
    "TIME WITHOUT TIME ZONE": "time",
    "TIMESTAMP WITHOUT TIME ZONE": "timestamp",
    "TIMESTAMP WITH TIME ZONE": "timestamptz",
    "UUID": "uuid",
    # json's binary form is its text (json_recv): our JSON text goes as text, unparsed;
    # jsonb's is a version byte and the text (see _JsonbText, registered per connection)
    "JSON": "text",
    "JSONB": "jsonb",
}


#: Takes ``:n`` values of the sequence ``:seq``, one per row ``g`` of ``generate_series``,
#: and answers in one row: when every value minus its row number is the same (consecutive,
#: ascending: the usual case) that difference alone (no array); otherwise also the array
#: of the values in row order. The series is read from a subquery (``OFFSET 0`` keeps it
#: one): a function scan would store its rows first, and ``nextval`` beside
#: ``generate_series`` in one select list runs once more than it has rows.
RESERVE = sa.text(
    "SELECT min(k - g), max(k - g), "
    "CASE WHEN min(k - g) = max(k - g) THEN NULL ELSE array_agg(k) END "
    "FROM (SELECT nextval(CAST(:seq AS regclass)) AS k, g "
    "FROM (SELECT generate_series(1, :n) AS g OFFSET 0) AS series) AS s"
).bindparams(sa.bindparam("seq", type_=sa.Text), sa.bindparam("n", type_=sa.Integer))


#: A sequence's step, how many values a session caches, its first value and the last value
#: any session took (NULL before the first ``nextval``), in one row: read before each
#: keyless COPY (``{}``: the place of the sequence's name).
_SEQUENCE_STATE = (
    "SELECT seqincrement, seqcache, seqstart, pg_catalog.pg_sequence_last_value(seqrelid) "
    "FROM pg_catalog.pg_sequence WHERE seqrelid = CAST({} AS regclass)"
)
#: A batch of at least this many rows takes its keys aside first (see
#: ``PostgreSQL._reserve_aside``).
RESERVE_ASIDE_ROWS = 10_000
#: The cache's mark of a sequence whose keys cannot be taken aside.
ASIDE_UNFIT = "postgresql:aside-unfit"
#: A call's keys taken aside and not used yet: (sequence, value before the next, last).
ASIDE_KEYS = "postgresql:aside-keys"
#: A sequence's step, how many values a session caches, and its schema and name as the
#: catalog spells them, in one row.
SEQUENCE_SHAPE = sa.text(
    "SELECT s.seqincrement, s.seqcache, n.nspname, c.relname FROM pg_catalog.pg_sequence s "
    "JOIN pg_catalog.pg_class c ON c.oid = s.seqrelid "
    "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
    "WHERE s.seqrelid = CAST(:seq AS regclass)"
).bindparams(sa.bindparam("seq", type_=sa.Text))
#: Takes ``:n`` consecutive values of the sequence ``:seq`` (its next value, then its last
#: set ``:n - 1`` further) and answers the value before the first.
TAKE = sa.text(
    "SELECT pg_catalog.setval(CAST(:seq AS regclass), "
    "pg_catalog.nextval(CAST(:seq AS regclass)) + :n - 1) - :n"
).bindparams(sa.bindparam("seq", type_=sa.Text), sa.bindparam("n", type_=sa.BigInteger))

#: The last value this session took from a sequence.
_CURRVAL = "SELECT currval(CAST({} AS regclass))"

#: Each as SQLAlchemy's statement and as the driver's own cursor takes it.
SEQUENCE_STATE = (
    sa.text(_SEQUENCE_STATE.format(":seq")).bindparams(sa.bindparam("seq", type_=sa.Text)),
    _SEQUENCE_STATE.format("%s"),
)
CURRVAL = (
    sa.text(_CURRVAL.format(":seq")).bindparams(sa.bindparam("seq", type_=sa.Text)),
    _CURRVAL.format("%s"),
)


def sequence_row(rows: RowWriter, query: tuple[sa.TextClause, str], sequence: str) -> Any:
    """The row (None: no row) of ``query`` about ``sequence``: by the driver's own cursor
    (one round trip, no SQLAlchemy statement), or through SQLAlchemy when its statements
    are logged or listened to."""
    statement, sql = query
    if rows.logging() or rows.listened():
        return rows.conn.execute(statement, {"seq": sequence}).first()
    with closing(rows.cursor()) as cursor:
        cursor.execute(sql, (sequence,))
        return cursor.fetchone()


class Interleaved(Exception):
    """Another session took values of the sequence while a keyless COPY ran (its keys are
    then not the consecutive run that follows the sequence's value before it), or the
    sequence's shape (a step other than 1, values cached per session) cannot tell them."""


#: Names of the server-side cursors of reads (unique per process; a cursor's name lives in
#: its transaction only).
_CURSORS = count()


def _in_transaction(dbapi_connection: Any) -> bool:
    """The psycopg connection is in a transaction that has not failed (its cursors can
    still be closed)."""
    # (by name: no import in a ``finally`` that may run while Python shuts down)
    return bool(dbapi_connection.info.transaction_status.name == "INTRANS")


def _type_oid(impl: sa.types.TypeEngine[Any], dialect: sa.Dialect) -> int | None:
    """The oid psycopg describes a column of ``impl`` with (what SQLAlchemy's Result gives
    its result processors), from the SQL type name the column is created with; None for
    a name psycopg does not know."""
    import psycopg

    compiled = impl.compile(dialect=dialect).lower()
    name, _, size = compiled.partition("(")
    name = name.strip()
    if name == "float":  # FLOAT(p): real up to 24 bits of precision, else double
        digits = size.rstrip(") ")
        name = "float4" if digits.isdigit() and int(digits) <= 24 else "float8"
    info = psycopg.postgres.types.get(name)
    return None if info is None else int(info.oid)


class PostgreSQL(Backend):
    """PostgreSQL through psycopg 3."""

    name = "postgresql"
    asyncio_drivers: Mapping[str, str] = MappingProxyType(
        {"": "psycopg_async", "psycopg": "psycopg_async", "psycopg2": "psycopg_async"}
    )
    copies = True
    text_holds_nul = False
    script_driver = "psycopg"
    native_paramstyle = "pyformat"

    # -- engine and tables ------------------------------------------------------------------
    scheme_aliases: Mapping[str, str] = MappingProxyType(
        {
            "postgres": "postgresql+psycopg",
            "postgres+psycopg": "postgresql+psycopg",
            "pg": "postgresql+psycopg",
        }
    )
    dialect_aliases: tuple[str, ...] = ("postgres",)

    def json_type(self) -> sa.types.TypeEngine[Any] | None:
        return _PgJsonb()

    def json_type_of(self, declared: str) -> sa.types.TypeEngine[Any] | None:
        # a table of entityworks 0.8 keeps json, whose text it keeps as written
        return {"JSON": _PgJson, "JSONB": _PgJsonb}.get(declared, lambda: None)()

    def connection_setup(
        self, engine: sa.Engine, busy_timeout: float, *, adopted: bool
    ) -> Callable[[Any], None] | None:
        def setup(dbapi_connection: Any) -> None:
            # jsonb and json read as their text, which the registry's decoder reads (psycopg
            # would parse it into Python objects first)
            from psycopg.types.string import TextLoader

            for name in ("jsonb", "json"):
                dbapi_connection.adapters.register_loader(name, TextLoader)
            # a binary COPY into jsonb sends our JSON text as it is (set_types' dumper)
            dbapi_connection.adapters.register_dumper(None, _jsonb_text_dumper())
            if not adopted and dbapi_connection.info.parameter_status("TimeZone") != b"UTC":
                # Timestamps read in the session's zone: under 'UTC' psycopg gives
                # datetime.UTC datetimes (under another name of it, 'Etc/UTC', ZoneInfo
                # ones, converted a value at a time), which an aware datetime column
                # shows at its offset in C. Same instants either way; a connection of
                # the caller's engine keeps its zone.
                # closing(): an AsyncStore's adapted cursor is no context manager
                with closing(dbapi_connection.cursor()) as cursor:
                    setup_statement(cursor, "SET TIME ZONE 'UTC'")
                dbapi_connection.commit()

        return setup

    def json_compare(
        self,
        column: Any,
        path: tuple[str | int, ...],
        op: str,
        value: Any,
        *,
        definite: bool = False,
    ) -> sa.ColumnElement[bool]:
        from ._json import path_text

        # jsonpath filters in strict mode, read as jsonb: a missing key or an index past
        # the end selects nothing (the last argument: silent); a value of another type
        # makes the comparison NULL, as a missing one does
        shape = {bool: "boolean", str: "string"}.get(type(value), "number")
        doc = sa.cast(column, _jsonb())
        where = path_text(path)
        holds = _path_exists(doc, f'strict {where} ? (@.type() == "{shape}")', {})
        test = _path_exists(doc, f"strict {where} ? (@ {op} $v)", {"v": value})
        if definite:
            return sa.and_(holds, test)
        return sa.case((holds, test))

    def json_contains(
        self, column: Any, path: tuple[str | int, ...], candidate: Any
    ) -> sa.ColumnElement[bool]:
        from ._json import path_text

        doc: Any = sa.cast(column, _jsonb())
        if path:  # NULL where the path leads nowhere
            query = sa.cast(sa.literal(f"strict {path_text(path)}", sa.Text()), _JsonPathType())
            doc = sa.func.jsonb_path_query_first(
                doc,
                query,
                sa.cast(sa.literal("{}", sa.Text()), _jsonb()),
                sa.true(),
                type_=_jsonb(),
            )
        wanted = sa.cast(sa.literal(json.dumps(candidate), sa.Text()), _jsonb())
        return doc.op("@>", return_type=sa.Boolean())(wanted)  # type: ignore[no-any-return]

    def missing_table(self, error: BaseException) -> bool:
        return getattr(error, "sqlstate", None) == "42P01"  # undefined_table

    def names_missing(self, error: BaseException, name: str) -> bool:
        return f'relation "{name}" does not exist' in str(error)

    # -- command line (cli, web, catalog upgrade) -------------------------------------------
    url_aliases: tuple[str, ...] = ("postgres",)
    suggested_driver = "psycopg"
    driver_extra = "postgres"
    url_example = "postgresql+psycopg://USER@HOST/DB"

    def read_only_connect_args(self, url: sa.URL) -> dict[str, Any]:
        # every statement prepared: a prepared statement is one statement (without
        # parameters psycopg sends the simple protocol, which runs "...; COMMIT; ...")
        return {"prepare_threshold": 0}

    def begin_read_only(self, conn: sa.Connection) -> None:
        # COPY ... TO a file or PROGRAM runs in a read-only transaction: 'sql' runs the
        # statement in a server-side cursor, which takes a query only
        conn.exec_driver_sql("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
        conn.exec_driver_sql("SET TRANSACTION READ ONLY")

    def quick_connect_args(self, seconds: int) -> dict[str, Any]:
        return {"connect_timeout": seconds}

    @contextmanager
    def schema_lock(self, conn: sa.Connection, seconds: int) -> Iterator[None]:
        # released with the transaction: the change and the lock end together
        conn.execute(
            sa.select(
                sa.func.pg_advisory_xact_lock(sa.bindparam("key", LOCK_KEY, type_=sa.BigInteger))
            )
        )
        yield

    def advance_key(self, conn: sa.Connection, table: sa.Table, column: str) -> None:
        # a serial's sequence does not see explicit values: move it past the largest one
        sequence = sa.func.pg_get_serial_sequence(table.name, column)
        conn.execute(
            sa.select(
                sa.func.setval(
                    sequence,
                    sa.select(
                        sa.func.coalesce(sa.func.max(table.c[column]), 0) + 1
                    ).scalar_subquery(),
                    False,
                )
            )
        )

    def upsert(
        self, table: sa.Table, keys: list[str], others: list[str], restated: list[str]
    ) -> sa.Executable:
        from sqlalchemy.dialects import postgresql

        return on_conflict(postgresql.insert(table), table, keys, others, restated)

    def script_upsert(
        self, table: sa.Table, keys: list[str], others: list[str], restated: list[str]
    ) -> sa.Executable | None:
        return self.upsert(table, keys, others, restated)

    def refuses_value(self, value: Any) -> bool:
        return isinstance(value, str) and "\x00" in value

    def point_path(self, url: sa.URL) -> bool:
        # asyncio: the point path's connection kept per thread is a sync driver's
        return not self.on_asyncio

    def point_connection(self, dbapi_connection: Any) -> None:
        dbapi_connection.autocommit = True  # psycopg: no BEGIN before a one-row statement

    # -- reading ---------------------------------------------------------------------------
    reads_own_cursor = True

    def reads_raw_cursor(self) -> bool:
        # SQLAlchemy's Result costs a third of a read of small rows; under an AsyncStore
        # its Result reads the adapted driver's rows (it buffers a streamed cursor's)
        return not self.on_asyncio

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
        """A streamed read. On a connection that sends nothing else until the read ends
        (``alone``, outside ``Store.transaction()``), the query alone, its rows coming in
        chunks of ``size`` (:func:`_streamed_batches`, libpq 17's chunked rows mode): one
        round trip and no cursor on the server. Otherwise from a server-side cursor of our
        own, which leaves the connection free between fetches: ``DECLARE`` and the first
        ``FETCH`` sent together (one round trip, psycopg's pipeline mode, where the libpq
        has it), then a ``FETCH`` of ``size`` rows per batch; ``CLOSE`` once the rows are
        read, or the read is left, where the transaction is ``kept`` (otherwise its end
        closes the cursor). psycopg's named cursor would take a round trip more for the
        ``DECLARE``, one to describe the rows, one for the empty last ``FETCH`` and one to
        close it: on small reads, more than reading the rows."""
        if not stream:
            yield from super().read_batches(dbapi_connection, sql, params, size, stream, kept)
            return
        if alone and not kept and not self.on_asyncio and pgread.chunked_rows():
            yield from pgread.streamed_batches(
                self.read_cursor(dbapi_connection, False), sql, params, size
            )
            return
        import psycopg

        name = f"ew_read_{next(_CURSORS)}"
        fetch = f"FETCH FORWARD {int(size)} FROM {name}"
        declare = f"DECLARE {name} NO SCROLL CURSOR WITHOUT HOLD FOR {sql}"
        cursor = self.read_cursor(dbapi_connection, False)
        declared = False
        try:
            # the DECLARE on a cursor of its own: psycopg 3.1 leaves a cursor that ran two
            # statements in one pipeline with the first one's result
            with closing(self.read_cursor(dbapi_connection, False)) as declaring:
                if psycopg.Pipeline.is_supported():
                    with dbapi_connection.pipeline():
                        declaring.execute(declare, params, prepare=False)
                        cursor.execute(fetch, prepare=False)
                else:
                    declaring.execute(declare, params, prepare=False)
                    cursor.execute(fetch, prepare=False)
            declared = True
            while True:
                batch = cursor.fetchmany(size)
                if len(batch) < size:
                    if batch:
                        yield batch
                    return
                yield batch
                del batch  # the caller may free it while the next one is fetched
                cursor.execute(fetch, prepare=False)
        finally:
            if declared and kept and _in_transaction(dbapi_connection):
                cursor.execute(f"CLOSE {name}", prepare=False)
            cursor.close()

    def result_processor(self, impl: sa.types.TypeEngine[Any], dialect: sa.Dialect) -> Processor:
        """SQLAlchemy's result processor of the column as its Result would choose it: by
        the type the cursor describes (psycopg's type oid), which for our tables is the
        column's own declared type (a NUMERIC or a DOUBLE PRECISION needs it)."""
        own = getattr(impl, "result_value", None)
        mine = own(dialect) if own is not None else None
        if mine is not None:
            return skip_none(mine)
        processor: Processor = impl.result_processor(dialect, _type_oid(impl, dialect))
        return processor

    # -- writing (pipeline) ----------------------------------------------------------------
    def bind_processor(
        self, impl: sa.types.TypeEngine[Any], dialect: sa.Dialect, stored: str | None
    ) -> Processor:
        # psycopg binds bytes as bytea itself, in a statement and a binary COPY alike
        # (SQLAlchemy's processor wraps each in psycopg's Binary, dumped in Python)
        if plain_binary(impl):
            return None
        return super().bind_processor(impl, dialect, stored)

    def copy_types(self, table: sa.Table, dialect: sa.Dialect) -> list[str] | None:
        names = []
        for c in table.columns:
            name = COPY_TYPES.get(c.type.compile(dialect=dialect).upper())
            if name is None:
                return None
            names.append(name)
        return names

    def list_batch(self, model: Any, length: int) -> int:
        # one COPY for the whole list (each COPY ends waiting for the server, which then
        # waits for the next one), where the rows stream from the instances a chunk at a time
        return length if model.codec.copy_types is not None and not model.children else 0

    def write_rows(self, conn: sa.Connection, rows: RowWriter) -> None:
        """An insert by binary COPY: straight from the instances where every value goes to
        psycopg as it is once checked (a chunk checked while the previous one is sent),
        else of the bound rows whose gated columns hold their exact types (encoded a chunk
        at a time, while the previous one is sent); refused, an ordinary INSERT of the
        checked values, which locates the row. Upserts: the
        default ``executemany``. Under an AsyncStore the same, the COPY being psycopg's
        async one, driven through SQLAlchemy's greenlet bridge (see :func:`copying`)."""
        if rows.kind != "insert":
            super().write_rows(conn, rows)
            return
        body = rows.arrow()
        if (
            body is not None
            and not rows.logging()
            and not rows.listened()
            and rows.attempt(lambda: copy_body(rows, body))
        ):
            return
        chunks = rows.gated_chunks()
        if chunks is not None and copied(rows, chunks, rows.gated_chunks, copy=copy_rows):
            return
        if chunks is None and rows.model.codec.copy_types is not None:
            # encoded a chunk at a time while the previous one is sent and stored
            encoded = rows.bound_chunks()
            if encoded is not None and copied(rows, encoded, rows.bound_chunks, copy=copy_rows):
                return
        bound = rows.bound()
        if rows.model.codec.gates_pass(bound) and copied(
            rows, [bound], lambda: [bound], copy=copy_rows
        ):
            return
        super().write_rows(conn, rows)

    def arrow_rows(self, model: Any, table: Any) -> Any | None:
        """The rows of ``table`` as binary COPY rows made a column at a time, a slice at a
        time while they are sent (:class:`._arrowcopy.ArrowRows`), where the table's
        columns all have such a form."""
        codec = model.codec
        if codec.copy_types is None:
            return None
        from ._arrowcopy import ArrowRows

        fields = []
        for c, (main, extra, _parts, info) in zip(model.schema.columns, codec.plan, strict=True):
            types = tuple(codec.copy_types[i] for i in (main, *extra))
            # (a type whose SQL codec encodes its values is not what its rule names)
            check = info.check if rule(info) is info.check else None
            fields.append((c.name, c.nullable, check, types))
        return ArrowRows.of(table, fields)

    def insert_generated(self, conn: sa.Connection, rows: RowWriter) -> Sequence[Any]:
        """The rows COPYed without their key, the keys known from the sequence afterwards
        (see :meth:`_copy_keyless`); where they cannot be known so, the keys reserved
        first, one ``nextval`` a row in one statement (the sequence's own values: other
        sessions may take keys meanwhile), then the rows written with them as keys given
        (one COPY). That statement answers with the first key when the keys follow each
        other (an array of them all otherwise, see :data:`RESERVE`)."""
        model = rows.model
        name = model.schema.primary_key.name
        sequence = rows.cache.get("postgresql:sequence")
        if sequence is None:
            sequence = rows.cache["postgresql:sequence"] = (
                conn.execute(
                    sa.select(
                        sa.func.pg_get_serial_sequence(model.table.name, model.table.c[name].name)
                    )
                ).scalar_one_or_none()
                or ""
            )
        if not sequence:  # an identity or default of another kind
            return super().insert_generated(conn, rows)
        count = len(rows)
        aside = self._taken_aside(rows, sequence)
        if aside is not None:
            keys: Sequence[Any] = range(aside + 1, aside + 1 + count)
        else:
            copied = self._copy_keyless(conn, rows, sequence)
            if copied is not None:
                return copied
            low, _high, each = conn.execute(RESERVE, {"n": count, "seq": sequence}).one()
            # the usual case, every key its row number apart: the first key gives them all
            keys = range(low + 1, low + 1 + count) if each is None else list(each)
        keyed = rows.with_keys(keys)
        try:
            self.write_rows(conn, keyed)
        except BaseException:
            rows.with_keys([None] * len(keys))  # the instances as they were given
            raise
        return keys

    def _taken_aside(self, rows: RowWriter, sequence: str) -> int | None:
        """The value before this batch's keys, from keys taken aside for the rows of its
        call still to come (:meth:`_reserve_aside`: once for a list, whose length is known,
        else once per batch); None for a call of fewer than :data:`RESERVE_ASIDE_ROWS` rows,
        or where none can be taken so."""
        count = len(rows)
        held = rows.call.get(ASIDE_KEYS)
        if held is not None and held[0] == sequence and held[2] - held[1] >= count:
            rows.call[ASIDE_KEYS] = (sequence, held[1] + count, held[2])
            return int(held[1])
        if rows.ahead < RESERVE_ASIDE_ROWS:
            return None
        low = self._reserve_aside(rows, sequence, rows.ahead)
        if low is None:
            return None
        rows.call[ASIDE_KEYS] = (sequence, low + count, low + rows.ahead)
        return low

    def _reserve_aside(self, rows: RowWriter, sequence: str, count: int) -> int | None:
        """The value before ``count`` consecutive keys taken from ``sequence`` at once,
        on a connection of its own in a transaction of a few statements (None where that
        cannot be done: the caller takes keys its other ways). So a big batch is written as
        keys given, and the server runs no ``nextval`` per row (a tenth of a COPY's time).

        Holding the sequence while the range is taken is what ``ALTER SEQUENCE`` does (a
        lock that every other session's ``nextval`` waits for, released at once by that
        short transaction's commit; sequences take no ``LOCK``): only the sequence's owner
        may, and only a sequence that steps by 1 and caches no values per session (its
        values are then exactly those after its last one). The second connection comes
        from the engine's pool only where it need not wait for one (an idle place in a
        ``QueuePool``, or ``NullPool``), never on asyncio; an error there (not the owner,
        the sequence's maximum) leaves the batch's own transaction untouched."""
        engine = rows.conn.engine
        pool = engine.pool
        free = isinstance(pool, sa.pool.NullPool) or (
            isinstance(pool, sa.pool.QueuePool) and pool.checkedout() < pool.size()
        )
        if rows.dialect.is_async or not free or rows.cache.get(ASIDE_UNFIT) == sequence:
            return None
        try:
            with engine.connect() as side, side.begin():
                shape = side.execute(SEQUENCE_SHAPE, {"seq": sequence}).one_or_none()
                if shape is None or shape[0] != 1 or shape[1] != 1:  # step, cache
                    rows.cache[ASIDE_UNFIT] = sequence
                    return None
                where, name = shape[2], shape[3]
                preparer = rows.dialect.identifier_preparer
                quoted = f"{preparer.quote_schema(where)}.{preparer.quote(name)}"
                # (the identifiers quoted by SQLAlchemy, as the catalog spells them)
                side.execute(sa.text(f"ALTER SEQUENCE {quoted} INCREMENT BY 1"))
                low = int(side.execute(TAKE, {"seq": sequence, "n": count}).scalar_one())
        except sa.exc.DBAPIError:
            rows.cache[ASIDE_UNFIT] = sequence
            return None
        return low

    def _copy_keyless(
        self, conn: sa.Connection, rows: RowWriter, sequence: str
    ) -> Sequence[Any] | None:
        """The rows COPYed without their key, which the column's default takes from the
        sequence while the rows stream (the server's ``nextval`` calls overlap the
        client's encoding), and the keys then known from the sequence: when the values
        it took during the COPY are exactly the ``len(rows)`` that follow its value
        before, they are this batch's keys, in row order. Otherwise (another session took
        some meanwhile, a sequence that steps by more than 1 or caches values per session,
        a value a gate or the server refuses) the COPY is rolled back to its savepoint, the
        instances' keys are None again and None is returned: the caller reserves the keys
        first.

        The sequence's shape and its last value are read in one statement inside the
        savepoint, just before the COPY (a shape found unfit is remembered). Rows taken
        straight from the instances get their expected keys a chunk at a time once the
        chunk is sent, while the server stores the rows; the keys stand only once the
        sequence confirms them."""
        unfit = "postgresql:sequence-unfit"
        codec = rows.model.codec
        if codec.copy_types is None or rows.cache.get(unfit) == sequence:
            return None
        at = rows.key_index()
        count = len(rows)
        # straight from the instances, each chunk gated while the previous one is sent;
        # else the rows encoded a column at a time, when their gated columns pass
        chunks: Iterable[Sequence[Sequence[Any]]] | None = rows.gated_chunks(keyless=True)
        streamed = chunks is not None
        if chunks is None:
            keyless = rows.keyless()
            if keyless is None or not codec.gates_pass(keyless, without=at):
                return None
            chunks = [keyless]
        found: list[int] = []

        def keyed(low: int, parts: Iterable[Sequence[Sequence[Any]]]) -> Iterator[Any]:
            # each chunk's expected keys set once it is formatted and sent (the next one
            # is asked for then), while the server stores it
            done = 0
            for part in parts:
                yield part
                size = len(part)
                rows.set_keys(range(low + 1 + done, low + 1 + done + size), done)
                done += size

        def copy() -> None:
            state = sequence_row(rows, SEQUENCE_STATE, sequence)
            if state is None or state[0] != 1 or state[1] != 1:  # step, cache
                rows.cache[unfit] = sequence
                raise Interleaved(sequence)
            start, before = state[2], state[3]
            low = start - 1 if before is None else before
            copy_rows(rows, keyed(low, chunks) if streamed else chunks, without=at)
            (last,) = sequence_row(rows, CURRVAL, sequence)
            if last - count != low:
                raise Interleaved(sequence)
            found.append(low)

        def undone() -> None:  # the instances' keys as they were given
            if rows.keys_written:
                rows.set_keys([None] * count)
                rows.keys_written = False

        refusal: BaseException | None = None
        try:
            refusal = rows.refused(copy)
            kept = refusal is None
        except Interleaved:  # rolled back to the savepoint by ``refused``
            kept = False
        except BaseException:
            undone()
            raise
        if not kept:
            undone()
            if isinstance(refusal, NotNative):  # again, by psycopg's write_row
                return self._copy_keyless(conn, rows, sequence)
            return None
        keys = range(found[0] + 1, found[0] + 1 + count)
        if not streamed:
            rows.set_keys(keys)
        return keys

    def unopenable(self, exc: BaseException, url: sa.URL, shown: str) -> str | None:
        # libpq reports a missing database as a connection failure, without a SQLSTATE
        name = url.database or url.username or ""
        if getattr(
            exc, "sqlstate", None
        ) != "3D000" and f'database "{name}" does not exist' not in str(exc):
            return None
        return (
            f"database {name!r} does not exist on the PostgreSQL server of {shown}; "
            f'create it first (createdb {name}, or CREATE DATABASE "{name}" in psql)'
        )


__all__ = ["COPY_HEADER", "COPY_TRAILER", "LOCK_KEY", "PostgreSQL", "copy_rows"]


class _PgJson(sa.types.UserDefinedType[Any]):
    """PostgreSQL's json: the JSON text entityworks writes, kept as it is (key order, number
    spelling, -0.0: jsonb would sort the keys and drop the sign of zero), bound with a cast
    to json and read as its text (see :meth:`PostgreSQL.connection_setup`). Filters read
    it as jsonb (``CAST(col AS jsonb)``), which cannot hold NUL: text with ``\\u0000`` is
    refused, as NaN and Infinity are (no JSON)."""

    cache_ok = True
    render_bind_cast = True

    def get_col_spec(self, **kw: Any) -> str:
        return "JSON"

    def bind_processor(self, dialect: sa.Dialect) -> Callable[[Any], Any] | None:
        from ._json import json_text_for_jsonb

        return json_text_for_jsonb


class _PgJsonb(_PgJson):
    """PostgreSQL's jsonb, the JSON type of a new table: what the filters read and a GIN
    index serves. It keeps values, not text: a dict's keys come back in jsonb's order (the
    same dict), and what jsonb would change is written so that it reads back the same or
    refused (see :func:`~._json.json_text_for_jsonb_column`: ``1e+16`` as
    ``10000000000000000.0``; ``-0.0`` refused, as NaN, Infinity and NUL are)."""

    cache_ok = True

    def get_col_spec(self, **kw: Any) -> str:
        return "JSONB"

    def bind_processor(self, dialect: sa.Dialect) -> Callable[[Any], Any] | None:
        from ._json import json_text_for_jsonb_column

        return json_text_for_jsonb_column

    def bind_column(self, dialect: sa.Dialect) -> Callable[[Sequence[Any]], Sequence[Any]]:
        """:meth:`bind_processor` of a whole column of JSON texts (``None`` kept)."""
        return _jsonb_texts


#: What :func:`~._json.json_text_for_jsonb_column` looks for in a text before it changes or
#: refuses it; a column whose texts hold none of them goes as it is.
_JSONB_MARKS = ("\\u0000", "NaN", "Infinity", "e+", "E+", "-0")


def _jsonb_texts(texts: Sequence[Any]) -> Sequence[Any]:
    """``json_text_for_jsonb_column`` of each text of a column, ``None`` kept: the texts as
    they are when none holds what it looks for (one search of their concatenation, where
    a mark that spans two texts only sends the column the slow way), else text by text."""
    from ._json import json_text_for_jsonb_column

    if all_of(texts, str, nullable=True):
        joined = "".join(filter(None, texts))
        if not any(mark in joined for mark in _JSONB_MARKS):
            return texts
    return [None if t is None else json_text_for_jsonb_column(t) for t in texts]


@cache
def _jsonb_text_dumper() -> type[Any]:
    """psycopg's binary dumper of JSON text (a str, as the column's bind processor gave
    it) for a COPY into a jsonb column: jsonb's binary form, version 1 and the text.
    Registered by oid only (``register_dumper(None, ...)``): a COPY's ``set_types`` finds
    it, statements' parameters do not."""
    import psycopg
    from psycopg import pq
    from psycopg.adapt import Dumper

    class JsonbText(Dumper):
        format = pq.Format.BINARY
        oid = psycopg.postgres.types["jsonb"].oid

        def dump(self, obj: Any) -> bytes:
            text = obj if isinstance(obj, str) else json.dumps(obj)
            return b"\x01" + text.encode()

    return JsonbText


class _JsonPathType(sa.types.UserDefinedType[Any]):
    cache_ok = True

    def get_col_spec(self, **kw: Any) -> str:
        return "JSONPATH"


class _JsonbCast(sa.types.UserDefinedType[Any]):
    cache_ok = True

    def get_col_spec(self, **kw: Any) -> str:
        return "JSONB"


def _path_exists(doc: Any, query: str, variables: dict[str, Any]) -> sa.ColumnElement[bool]:
    """``jsonb_path_exists(doc, query, variables, silent => true)``, all bound."""
    return sa.func.jsonb_path_exists(
        doc,
        sa.cast(sa.literal(query, sa.Text()), _JsonPathType()),
        sa.cast(sa.literal(json.dumps(variables), sa.Text()), _jsonb()),
        sa.true(),
        type_=sa.Boolean(),
    )


def _jsonb() -> sa.types.TypeEngine[Any]:
    return _JsonbCast()

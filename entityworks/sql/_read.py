"""Reading: ``get``, ``select``, ``count`` and ``rows``: statements built from filters, rows
fetched in batches and decoded, instances built with their child lists.

Kept apart from writing: nothing here changes the database, and the decode path (SQLite's raw
cursor, column-wise child rows) is tuned separately from the bulk write path.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import partial
from itertools import chain, groupby, repeat, starmap
from operator import itemgetter
from typing import Any

import sqlalchemy as sa

from .._gcpause import paused_gc
from ..errors import EntityworksError, FilterError
from ..model.schema import PARENT_COLUMN
from ..types.columns import build_rows
from ._bound import BoundModel, encoded_keys, key_label
from ._database import Database
from ._log import INFO, listened, log_statement, sql_logger
from ._point import PointPath
from .filters import compile_order_by, compile_where, encode_value
from .tables import table_companions

FETCH = 2_000
#: Parent keys per child query (one IN list).
CHILD_KEYS = 500
#: ``BoundModel.sql_cache``'s key of the SQL of ``BoundModel.select_all``.
SELECT_ALL = "read:select-all"


def get(db: Database, point: PointPath, cls: type, key: Any) -> Any:
    """The instance whose primary key is ``key``, or ``None``."""
    model = db.model(cls)
    model.schema.require_keys("get")
    raw = point.connection(model) if not model.schema.composite else None
    if raw is not None and key is not None:
        return point.get(raw, model, key)
    stmt = model.codec.select(model.table).where(key_condition(model, key)).limit(1)
    # one row: no server-side cursor (DECLARE, FETCH, CLOSE) to stream it
    return next(iter(_iterate(db, model, stmt, stream=False)), None)


def select(
    db: Database,
    cls: type,
    where: Any = None,
    order_by: Any = None,
    limit: int | None = None,
    offset: int | None = None,
    *,
    columns: Sequence[str] | None = None,
    as_dict: bool = False,
) -> Iterator[Any]:
    """Stream instances of ``cls``; see :mod:`entityworks.sql.filters` for ``where``.

    ``columns=["a", "b"]`` streams tuples of just those columns instead, and
    ``as_dict=True`` dicts (of ``columns``, or of every column), decoded as the instances
    would hold them. Arguments are checked at once; rows are fetched in batches while you
    iterate.
    """
    model = db.model(cls)
    stmt = _select_stmt(db, model, where, order_by, limit, offset)
    stream = can_be_big(limit)
    if columns is None and not as_dict:
        return _iterate(db, model, stmt, stream=stream)
    names = _projected_names(model, columns)
    batches = _projected_batches(db, model, stmt, names, stream=stream)
    if as_dict:
        return (dict(zip(names, row, strict=True)) for batch in batches for row in batch)
    return (row for batch in batches for row in batch)


def count(db: Database, cls: type, where: Any = None) -> int:
    """Number of rows matching ``where``."""
    model = db.model(cls)
    stmt = sa.select(sa.func.count()).select_from(model.table)
    condition = where_clause(db, model, where)
    if condition is not None:
        stmt = stmt.where(condition)
    with db.connection() as conn, db.reading(model):
        return int(conn.execute(stmt).scalar_one())


def row_batches(
    db: Database,
    cls: type,
    where: Any = None,
    order_by: Any = None,
    limit: int | None = None,
    offset: int | None = None,
    *,
    columns: Sequence[str] | None = None,
) -> Iterator[list[tuple[Any, ...]]]:
    """Batches of decoded column tuples (table columns, in order) without building objects;
    with ``columns=[...]``, tuples of just those columns, in that order.

    The building block of the Arrow and XML exporters and of ``select(columns=...)``.
    """
    model = db.model(cls)
    stmt = _select_stmt(db, model, where, order_by, limit, offset)
    stream = can_be_big(limit)
    if columns is None:
        return _batches(db, model, stmt, stream=stream)
    return _projected_batches(db, model, stmt, _projected_names(model, columns), stream=stream)


#: Per child table (a child's child: by the path ``field.field``), for each row of a batch,
#: its rows of that table decoded (the link columns first), in list order.
ChildRowLists = dict[str, list[list[tuple[Any, ...]]]]


def family_batches(
    db: Database,
    cls: type,
    where: Any = None,
    order_by: Any = None,
    limit: int | None = None,
    offset: int | None = None,
) -> Iterator[tuple[list[tuple[Any, ...]], ChildRowLists]]:
    """Batches of decoded column tuples (as :func:`row_batches`), each with the child rows
    of its rows (see :data:`ChildRowLists`), without building objects: what ``select``
    builds its instances and their child lists from. The rows and their child queries share
    one connection."""
    model = db.model(cls)
    stmt = _select_stmt(db, model, where, order_by, limit, offset)
    return _family_batches(db, model, stmt)


def _family_batches(
    db: Database, model: BoundModel, stmt: sa.Select[*tuple[Any, ...]]
) -> Iterator[tuple[list[tuple[Any, ...]], ChildRowLists]]:
    with db.connection() as conn:
        for batch in _batches(db, model, stmt, conn):
            yield batch, _child_row_lists(db, model, batch, conn)


def _paths(model: BoundModel, prefix: str = "") -> list[tuple[str, BoundModel]]:
    """Every child table's model below ``model`` by its field path, parents first."""
    out: list[tuple[str, BoundModel]] = []
    for fname, child in model.children:
        out.append((prefix + fname, child))
        out.extend(_paths(child, f"{prefix}{fname}."))
    return out


def _child_row_lists(
    db: Database, model: BoundModel, batch: Sequence[Sequence[Any]], conn: sa.Connection
) -> ChildRowLists:
    """The decoded child rows of ``batch``'s rows (see :data:`ChildRowLists`)."""
    paths = _paths(model)
    if not paths or not batch:
        return {path: [[] for _ in batch] for path, _ in paths}
    at = model.fields.index(model.schema.require_key("child rows").name)
    keys = [row[at] for row in batch]
    encoded = encoded_keys(model, keys)
    out: ChildRowLists = {}
    for path, child in paths:
        # every level refers to the root row by its key (parent_key, the first column)
        owned: dict[Any, list[tuple[Any, ...]]] = {key: [] for key in keys}
        for start in range(0, len(encoded), CHILD_KEYS):
            chunk = encoded[start : start + CHILD_KEYS]
            for columns in _child_columns(db, child, chunk, conn):
                for key, run in groupby(zip(*columns, strict=True), itemgetter(0)):
                    owned[key].extend(run)
        out[path] = [owned[key] for key in keys]
    return out


def _projected_names(model: BoundModel, columns: Any) -> list[str]:
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
            raise FilterError(
                f"{name!r} is a child table of {schema.name!r}, not a "
                "column; select the instances to read it"
            )
        schema.column(name)  # UnknownColumnError names the real ones
        if name in names[:i]:
            raise FilterError(f"column {name!r} appears twice in columns=")
    return names


def _projected_batches(
    db: Database,
    model: BoundModel,
    stmt: sa.Select[Any],
    names: list[str],
    *,
    stream: bool = True,
) -> Iterator[list[tuple[Any, ...]]]:
    """Batches of the ``names`` columns of ``stmt``'s rows.

    Only those columns (and their companions) are read; the others are selected as NULL,
    so that the table's own row decoder, the one instances are built from, decodes them.
    """
    table = model.table
    wanted = set(names)
    # the row's key too: a stored value that cannot be read is refused naming its row
    schema = model.schema
    needed = set(names) | {c.name for c in schema.naming_columns}
    for c in model.schema.columns:
        if c.name in wanted:
            needed.update(part.column(c.name) for part in table_companions(table, c, db.backend))
    read = model.codec.selected or list(table.columns)
    stmt = stmt.with_only_columns(
        *(
            read[i] if n in needed else sa.null().label(f"_ew_unread_{i}")
            for i, n in enumerate(model.names)
        ),
        maintain_column_froms=True,
    )
    where = [model.fields.index(n) for n in names]
    pick: Callable[[Sequence[Any]], tuple[Any, ...]]
    if len(where) == 1:
        only = where[0]
        pick = lambda row: (row[only],)  # noqa: E731
    else:
        pick = itemgetter(*where)
    return (list(map(pick, batch)) for batch in _batches(db, model, stmt, stream=stream))


def can_be_big(limit: int | None) -> bool:
    """Whether a read of at most ``limit`` rows (None: no limit) can be more than a fetch:
    only such a read streams from a server-side cursor (its DECLARE, FETCHes and CLOSE are
    round trips a read of one fetch does not need)."""
    return limit is None or limit > FETCH


def where_clause(db: Database, model: BoundModel, where: Any) -> sa.ColumnElement[bool] | None:
    """``where`` compiled for ``model``'s table, refused before any SQL where this
    backend could not even compare a value: PostgreSQL's text holds no NUL, and its
    driver fails on such a parameter (SQLite and MariaDB compare it as stored)."""
    condition = compile_where(where, model.table, model.schema)
    if condition is not None and not db.backend.text_holds_nul:
        for element in sa.sql.visitors.iterate(condition):
            if isinstance(element, sa.BindParameter):
                values = (
                    element.value if isinstance(element.value, list | tuple) else [element.value]
                )
                held = [v for v in values if isinstance(v, str) and "\x00" in v]
                if held:
                    raise FilterError(
                        f"{model.schema.cls.__name__}: the filter value {held[0]!r} holds "
                        f"NUL (0x00), which {db.backend.title} text cannot hold: no row can "
                        "match"
                    )
    return condition


def _select_stmt(
    db: Database,
    model: BoundModel,
    where: Any,
    order_by: Any,
    limit: int | None,
    offset: int | None,
) -> sa.Select[*tuple[Any, ...]]:
    if where is None and order_by is None and limit is None and offset is None:
        if model.select_all is None:
            model.select_all = model.codec.select(model.table)
        return model.select_all
    stmt = model.codec.select(model.table)
    condition = where_clause(db, model, where)
    if condition is not None:
        stmt = stmt.where(condition)
    clauses = compile_order_by(order_by, model.table, model.schema)
    if clauses:
        stmt = stmt.order_by(*clauses)
    for name, value in (("limit", limit), ("offset", offset)):
        if value is not None and (
            not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 2**63
        ):
            raise EntityworksError(f"{name} must be a non-negative int, got {value!r}")
    if limit is not None:
        stmt = stmt.limit(limit)
    if offset is not None:
        if limit is None and db.backend.no_limit is not None:
            stmt = stmt.limit(db.backend.no_limit)
        stmt = stmt.offset(offset)
    return stmt


def _batches(
    db: Database,
    model: BoundModel,
    stmt: sa.Select[*tuple[Any, ...]],
    conn: sa.Connection | None = None,
    *,
    decode: bool = True,
    stream: bool = True,
) -> Iterator[list[tuple[Any, ...]]]:
    """Rows of ``stmt``, decoded (``decode=False``: as the driver gives them);
    ``stream=False``: never on a server-side cursor (a one-row read)."""
    if not decode or model.codec.read is None:
        yield from _fetched(db, model, stmt, conn, stream=stream)  # type: ignore[misc]
        return
    columns = model.codec.columns
    assert columns is not None
    for batch in _fetched(db, model, stmt, conn, stream=stream):
        yield list(zip(*columns(batch), strict=True))


def _fetched(
    db: Database,
    model: BoundModel,
    stmt: sa.Select[*tuple[Any, ...]],
    conn: sa.Connection | None = None,
    *,
    stream: bool = True,
) -> Iterator[Sequence[Sequence[Any]]]:
    """Rows of ``stmt`` as the driver gives them, a fetch at a time (``stream=False``: never
    on a server-side cursor)."""
    if conn is None:
        with db.connection() as own:
            yield from _fetched(db, model, stmt, own, stream=stream)
        return
    backend = db.backend
    raw = backend.reads_raw_cursor()
    # A server-side cursor streams where the dialect has one that can share the connection
    # with the child queries of the same rows (see Backend.streams).
    streamed = stream and backend.streams(bool(model.children))
    if backend.reads_own_cursor:
        yield from _own_cursor(db, model, stmt, conn, streamed)
        return
    # Options for this statement only: ``Connection.execution_options`` would change the
    # connection itself, and a later SAVEPOINT would then be sent as a cursor.
    options: dict[str, Any] = {}
    if streamed:
        options = {"stream_results": True, "max_row_buffer": FETCH}
    with db.reading(model):
        result = conn.execute(stmt, execution_options=options)
    # SQLite: the raw cursor, decoded by our own processors (fast); elsewhere the
    # SQLAlchemy result, whose processors need the driver's column types.
    fetch = result.cursor.fetchmany if raw else result.fetchmany
    try:
        # DB-API rows: tuples, or Rows (tuples too); no local holds a batch handed out,
        # so that the caller can free it (see _object_batches)
        yield from iter(partial(fetch, FETCH), [])
    finally:
        result.close()


def _own_cursor(
    db: Database,
    model: BoundModel,
    stmt: sa.Select[*tuple[Any, ...]],
    conn: sa.Connection,
    streamed: bool,
) -> Iterator[Sequence[Sequence[Any]]]:
    """Rows of ``stmt`` from a driver cursor of the backend's own (``streamed``: a
    server-side one), as the driver gives them, a fetch at a time; the row codec applies
    the result processors SQLAlchemy's Result would (``Backend.result_processor``).

    The statement is compiled here and its parameters bound as SQLAlchemy binds them.
    Under ``echo`` or a cursor listener it is sent through SQLAlchemy, which reports it,
    as text: its Result then has no column types, so it hands the driver's values on as
    they are."""
    if stmt is model.select_all:  # compiled once: it binds no parameter
        sql = model.sql_cache.get(SELECT_ALL)
        if sql is None:
            sql = model.sql_cache[SELECT_ALL] = _compiled(db, stmt)[0]
        params: dict[str, Any] = {}
    else:
        sql, params = _compiled(db, stmt)
    if db.engine.echo or listened(db.engine):
        options: dict[str, Any] = (
            {"stream_results": True, "max_row_buffer": FETCH} if streamed else {}
        )
        with db.reading(model):
            result = conn.exec_driver_sql(sql, params, execution_options=options)
        try:
            yield from iter(partial(result.fetchmany, FETCH), [])
        finally:
            result.close()
        return
    if sql_logger.isEnabledFor(INFO):
        log_statement(sql, values=params)
    # outside Store.transaction() the read's own transaction ends right after it
    # ``alone``: nothing else is sent on the connection until the read ends (the child
    # rows of a family are read on it meanwhile)
    batches = db.backend.read_batches(
        conn.connection.dbapi_connection,
        sql,
        params,
        FETCH,
        streamed,
        db.in_transaction,
        alone=not model.children and model.schema.parent is None,
    )
    try:
        with db.reading(model):
            try:
                first = next(batches, None)
            except db.dbapi_error as exc:  # reported as SQLAlchemy reports it
                raise sa.exc.DBAPIError.instance(
                    sql, params, exc, db.dbapi_error, dialect=db.dialect
                ) from exc
        if first is None:
            return
        yield first
        del first  # the caller may free it while the next one is fetched
        yield from batches
    finally:
        batches.close()


def _compiled(db: Database, stmt: sa.Select[Any]) -> tuple[str, dict[str, Any]]:
    """The SQL of ``stmt`` for the driver, and its parameters by name as SQLAlchemy
    binds them: each through its type's bind processor, an IN list's values each as one
    parameter (rendered in the SQL, as SQLAlchemy renders them before it executes)."""
    dialect = db.dialect
    compiled = stmt.compile(dialect=dialect, compile_kwargs={"render_postcompile": True})
    if compiled.positiontup is not None:  # pragma: no cover - backends that bind by name
        raise EntityworksError(f"{db.backend.title}: reads bind parameters by name")
    binds = compiled.binds
    escaped = compiled.escaped_bind_names
    params: dict[str, Any] = {}
    for name, value in compiled.construct_params(escape_names=False).items():
        bind = binds.get(name)
        if bind is None:  # one value of an IN list: ``<name>_<n>``
            base, _, _n = name.rpartition("_")
            bind = binds[base]
            name = f"{escaped.get(base, base)}_{_n}"
        else:
            name = escaped.get(name, name)
        processor = bind.type.dialect_impl(dialect).bind_processor(dialect)
        params[name] = value if processor is None else processor(value)
    return compiled.string, params


def _iterate(
    db: Database, model: BoundModel, stmt: sa.Select[*tuple[Any, ...]], *, stream: bool = True
) -> Iterator[Any]:
    """The instances of ``stmt``'s rows, one at a time (a fetch's objects built at once:
    ``chain`` hands them out in C, where a generator would be resumed for each)."""
    return chain.from_iterable(_object_batches(db, model, stmt, stream=stream))


def _object_batches(
    db: Database, model: BoundModel, stmt: sa.Select[*tuple[Any, ...]], *, stream: bool = True
) -> Iterator[list[Any]]:
    cls = model.cls
    # One connection for the rows and their children (an in-memory database has only one).
    with db.connection() as conn:
        if model.plain and model.codec.read is not None:  # built from decoded columns
            decode = model.codec.columns
            assert decode is not None
            direct = model.codec.direct
            for batch in _fetched(db, model, stmt, conn, stream=stream):
                with paused_gc():  # a fetch's objects at once, as in _build
                    # no column to decode, no companion to join: straight from the rows
                    objs = None if direct is None else build_rows(cls, batch, *direct)
                    if objs is None:
                        objs = list(map(cls, *decode(batch)))
                    # the rows go before the collector is back: its next pass walks the
                    # new objects only
                    del batch
                yield objs
            return
        for batch in _batches(db, model, stmt, conn, stream=stream):
            if model.plain:
                yield list(starmap(cls, batch))
            else:
                # objects with child lists come by the thousand (a dungeon's corridors
                # and their cells): collections during the build would find nothing to
                # free, but walk the heap when the survivors reach the old generation
                with paused_gc():
                    objs = _build(db, model, batch, conn)
                yield objs


def _build(
    db: Database, model: BoundModel, batch: Sequence[Sequence[Any]], conn: sa.Connection
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
        _load_children(db, model, by_key, encoded_keys(model, list(by_key)), conn)
    return objs


def _load_children(
    db: Database, model: BoundModel, owners: dict[Any, Any], encoded: list[Any], conn: sa.Connection
) -> None:
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
        for start in range(0, len(encoded), CHILD_KEYS):
            chunk = encoded[start : start + CHILD_KEYS]
            for columns in _child_columns(db, child, chunk, conn):
                size = len(columns[0])
                values = columns[offset:]
                if lists:  # children of children: each item starts with empty lists
                    rows = zip(*values, strict=True) if values else repeat((), size)
                    objs = [build(*row, *[[] for _ in range(lists)]) for row in rows]
                elif values:
                    objs = list(map(build, *values))
                else:
                    objs = [build() for _ in range(size)]
                keys = columns[0] if links == 2 else list(zip(*columns[: links - 1], strict=True))
                at = 0
                for key, run in groupby(keys):
                    end = at + sum(1 for _ in run)
                    getattr(owners[key], fname).extend(objs[at:end])
                    at = end
                if child.children:
                    items.update(zip(zip(*columns[:links], strict=True), objs, strict=True))
        if child.children and items:
            _load_children(db, child, items, encoded, conn)


def _child_columns(
    db: Database, child: BoundModel, keys: list[Any], conn: sa.Connection
) -> Iterator[list[Sequence[Any]]]:
    """The decoded columns of ``child``'s rows whose root key is in ``keys``, ordered by
    owner and position, a fetch at a time.

    On SQLite the statement is compiled once per key count (rounded up to a power of
    two, the last key repeated) and run on the connection's raw cursor: SQLAlchemy's
    per-execution work would cost more than reading a few hundred rows. Echoed or
    listened-to statements take SQLAlchemy's path, which reports them.
    """
    table = child.table
    order = [table.c[n] for n in child.fields[: child.schema.links]]
    columns = child.codec.columns
    assert columns is not None
    if not db.backend.reads_raw_cursor() or db.engine.echo or listened(db.engine):
        stmt = child.codec.select(table).where(table.c[PARENT_COLUMN].in_(keys)).order_by(*order)
        for batch in _batches(db, child, stmt, conn, decode=False):
            yield columns(batch)
        return
    size = 1 << (len(keys) - 1).bit_length()
    sql = child.sql_cache.get(f"children:{size}")
    if sql is None:
        stmt = (
            child.codec.select(table)
            .where(table.c[PARENT_COLUMN].in_([sa.bindparam(f"k{i}") for i in range(size)]))
            .order_by(*order)
        )
        compiled = stmt.compile(dialect=db.dialect)
        sql = compiled.string
        child.sql_cache[f"children:{size}"] = sql
        if compiled.positiontup is None:  # bound by name: k0, k1, ... as escaped
            escaped = compiled.escaped_bind_names
            child.sql_cache[f"children:{size}:names"] = [  # type: ignore[assignment]
                escaped.get(f"k{i}", f"k{i}") for i in range(size)
            ]
    bind = child.codec.encoded_bound[child.fields.index(PARENT_COLUMN)]
    values = [*keys, *[keys[-1]] * (size - len(keys))]
    if bind is not None:  # the driver gets the keys as SQLAlchemy would bind them
        values = list(map(bind, values))
    names: Any = child.sql_cache.get(f"children:{size}:names")
    params: Any = values if names is None else dict(zip(names, values, strict=True))
    if sql_logger.isEnabledFor(INFO):
        log_statement(sql, values=params)
    cursor = db.backend.read_cursor(conn.connection.dbapi_connection, False)
    try:
        with db.reading(child):
            cursor.execute(sql, params)
        while fetched := cursor.fetchmany(FETCH):
            yield columns(fetched)
    finally:
        cursor.close()


def key_condition(model: BoundModel, key: Any) -> sa.ColumnElement[bool]:
    columns = model.schema.require_keys("a key lookup")
    if key is None:
        raise EntityworksError(f"{model.schema.name!r}: key must not be None")
    if len(columns) == 1:
        condition: sa.ColumnElement[bool] = model.table.c[columns[0].name] == encode_value(
            columns[0], key
        )
        return condition
    if not isinstance(key, tuple) or len(key) != len(columns) or None in key:
        raise EntityworksError(
            f"{model.schema.name!r} has a composite key ({key_label(model)}): pass a "
            f"tuple of {len(columns)} values, none of them None; got {key!r}"
        )
    return sa.and_(
        *(model.table.c[c.name] == encode_value(c, v) for c, v in zip(columns, key, strict=True))
    )


__all__ = [
    "FETCH",
    "ChildRowLists",
    "count",
    "family_batches",
    "get",
    "key_condition",
    "row_batches",
    "select",
    "where_clause",
]

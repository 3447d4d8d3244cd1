"""Writing: insert, upsert, update and delete, with child rows, keys to generate and the
checks that refuse a row before any SQL is sent.

Each call runs in one transaction (or a savepoint inside ``Store.transaction()``); the rows
themselves travel through :mod:`~entityworks.sql.bulk`, and a refusal is located by
:mod:`~entityworks.sql.locate`. One-row calls try the :mod:`~entityworks.sql.point` path first.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from itertools import accumulate, chain, repeat
from operator import add, attrgetter, countOf
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from ..errors import EntityworksError, NotFoundError, ValueEncodingError, WriteError
from ..model.schema import PARENT_COLUMN
from ..registry import encode_error
from .bound import (
    BoundModel,
    RowNumber,
    counting_from,
    descendants,
    encoded_keys,
    key_label,
    key_of,
)
from .bulk import (
    BATCH,
    as_dicts,
    copy_instances,
    copy_keys_gated,
    copy_rows,
    insert_driver_rows,
    insert_sql,
    restated_keys,
    upsert_sql,
    write_rows,
)
from .database import Database
from .locate import attempt, error_text, guard
from .log import logged
from .point import PointPath
from .read import key_condition, where_clause
from .tables import is_rowid, table_companions

if TYPE_CHECKING:
    from .encoded import EncodedRows


def insert_many(db: Database, objs: Iterable[Any], *, batch_size: int = BATCH) -> int:
    """Insert instances of one dataclass in one transaction; returns the row count.

    Rows whose integer key is ``None`` get a generated key, written back to the instance.
    If any row fails, nothing is written and :class:`WriteError` names the row index and
    the column.
    """
    objs = objs if isinstance(objs, list) else list(objs)
    if not objs:
        return 0
    model = _model_for(db, objs)
    with _unset_fields_named(model, objs), db.connection(write=True) as conn:
        insert_rows(db, conn, model, objs, batch_size)
    return len(objs)


def insert_encoded(db: Database, batch: EncodedRows) -> list[Any]:
    """Insert rows that :func:`entityworks.sql.encoded.encode_rows` encoded (usually in the
    process that made the objects), with their child rows, in one transaction; returns
    their keys (generated where they were ``None``), in order.

    Only the dialect's part of the work is left here: bind processors, SQLite's checks,
    companion columns. A refused row raises :class:`WriteError` naming it; nothing of
    the batch is then kept.
    """
    from .encoded import layout

    model = db.model(batch.cls)
    if batch.layout != layout(model.schema):
        raise WriteError(
            f"{model.schema.name}: rows encoded for columns "
            f"{list(batch.layout)}, the table has {list(layout(model.schema))}",
            table=model.schema.name,
        )
    if not batch.rows:
        return []
    if batch.children and (model.schema.primary_key is None or model.schema.composite):
        raise WriteError(
            f"{model.schema.name}: child rows need the parent's single key", table=model.schema.name
        )  # pragma: no cover - refused by schema
    children = dict(model.children)
    with db.connection(write=True) as conn:
        keys = _write_encoded(db, conn, model, batch.rows, counting_from(0))
        for part in batch.children:
            child = children[part.field]
            links = child.schema.links
            if links != 2 or part.layout != layout(child.schema, links):
                raise WriteError(
                    f"{child.schema.name}: rows encoded for other columns", table=child.schema.name
                )
            prefixes = chain.from_iterable(map(repeat, [(k,) for k in keys], part.counts))
            rows = list(map(add, prefixes, part.rows))
            starts = list(accumulate(part.counts, initial=0))
            # a child row's number in errors: its owner's
            _write_encoded(db, conn, child, rows, lambda i, s=starts: bisect_right(s, i) - 1)  # type: ignore[misc]
    return keys


def _write_encoded(
    db: Database,
    conn: sa.Connection,
    model: BoundModel,
    rows: list[tuple[Any, ...]],
    number: RowNumber,
) -> list[Any]:
    """Write encoded schema rows; the keys of a top-level table's rows (generated where
    ``None``), else ``[]``."""
    codec = model.codec
    # encoded elsewhere, by anyone: SQLite's INTEGER, REAL and TEXT columns would convert
    # a value of another type, so those columns are checked here (a column at a time)
    rows = codec.exact_rows(rows, number)
    raw_rows = db.backend.raw_rows
    key = model.schema.primary_key if model.schema.parent is None else None
    at = model.fields.index(key.name) if key is not None else -1
    keys = [row[at] for row in rows] if key is not None else []
    generated = [i for i, k in enumerate(keys) if k is None] if key is not None else []
    if generated and not key.autoincrement:  # type: ignore[union-attr]
        raise WriteError(
            f"{model.schema.name}: row {number(generated[0])} has no key",
            table=model.schema.name,
            row=number(generated[0]),
            column=key.name,  # type: ignore[union-attr]
        )
    spread = codec.spread

    def sql_rows(indexes: Sequence[int], bound: bool) -> list[Sequence[Any]]:
        """SQL rows: bound for the driver itself, else for SQLAlchemy (which binds)."""
        encoders = [
            (i, e)
            for i, e in enumerate(codec.encoded_bound if bound else codec.encoded)
            if e is not None
        ]
        if not encoders and spread is None:
            return [rows[i] for i in indexes]
        out: list[Sequence[Any]] = []
        for n in indexes:
            values = rows[n]
            row = list(values)
            for i, enc in encoders:
                try:
                    row[i] = enc(row[i])
                except (TypeError, ValueError) as exc:
                    raise encode_error(model.fields[i], row[i], exc, number(n)) from None
            out.append(row if spread is None else spread(values, row))
        return out

    chosen = set(generated)
    given = [i for i in range(len(rows)) if i not in chosen] if chosen else range(len(rows))
    if generated:
        table = model.table
        name = key.name  # type: ignore[union-attr]
        rowid = raw_rows and is_rowid(key, model.schema)  # type: ignore[arg-type]
        part = sql_rows(generated, rowid)
        at_new: RowNumber = lambda i: number(generated[i])  # noqa: E731
        if rowid:
            # NULL makes SQLite pick the rowid: one executemany where the keys it gives
            # can be known, else one statement per row (sqlite3's executemany returns
            # nothing)
            new = _rowids_in_one_go(db, conn, model, part, at_new)
            if new is None:
                new = _rowids_one_by_one(db, conn, model, part, at_new)
        else:
            stmt = table.insert().returning(table.c[name], sort_by_parameter_order=True)
            dicts = [
                {n: v for n, v in zip(model.names, r, strict=True) if n != name} for r in part
            ]  # the registry's values: SQLAlchemy binds them
            new = [
                k
                for (k,) in guard(
                    db,
                    conn,
                    model,
                    lambda: conn.execute(stmt, dicts).all(),
                    at_new,
                    replay=(stmt, dicts),
                )
            ]
        for i, k in zip(generated, new, strict=True):
            keys[i] = k
    if given:
        at_row: RowNumber = lambda i: number(given[i])  # noqa: E731
        if raw_rows:
            sqlrows = sql_rows(given, True)
            cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
            guard(
                db,
                conn,
                model,
                lambda: insert_driver_rows(db, cursor, model, sqlrows, len(sqlrows)),
                at_row,
                raw=(insert_sql(db, model), lambda: sqlrows),
            )
            return keys
        if db.backend.copies:  # one COPY of the bound rows
            bound = sql_rows(given, True)
            if codec.gates_pass(bound) and attempt(
                db, conn, lambda: copy_rows(db, conn, model, [bound])
            ):
                return keys
        # refused by COPY (then located row by row) or another database
        insert = model.table.insert()
        dicts = [dict(zip(model.names, r, strict=True)) for r in sql_rows(given, False)]
        guard(db, conn, model, lambda: conn.execute(insert, dicts), at_row, replay=(insert, dicts))
    return keys


#: SQLite's largest rowid: past it, a NULL key gets a random unused one.
_MAX_ROWID = 2**63 - 1


def _rowids_in_one_go(
    db: Database,
    conn: sa.Connection,
    model: BoundModel,
    rows: list[Sequence[Any]],
    number: RowNumber,
) -> list[int] | None:
    """Insert ``rows`` (their rowid key NULL) in one ``executemany`` and return the rowids
    SQLite gave them; ``None``, with nothing written, where those could not be known.

    In the write transaction no one else inserts, and SQLite gives each NULL key one more
    than the largest rowid (with AUTOINCREMENT, than the largest ever used): the rows get
    consecutive keys ending at ``last_insert_rowid()``. Only past the largest rowid would
    it pick random ones, which the table's present largest key rules out beforehand."""
    table = model.table
    key = model.schema.primary_key
    assert key is not None
    cache = model.sql_cache
    if "encoded:largest" not in cache:
        cache["encoded:largest"] = str(
            sa.select(sa.func.max(table.c[key.name])).compile(dialect=db.dialect)
        )
        cache["encoded:last"] = str(
            sa.select(sa.func.last_insert_rowid()).compile(dialect=db.dialect)
        )
    cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
    largest = cursor.execute(cache["encoded:largest"]).fetchone()[0]
    if largest is not None and (type(largest) is not int or largest > _MAX_ROWID - len(rows)):
        return None
    statement = insert_sql(db, model)
    guard(
        db,
        conn,
        model,
        lambda: cursor.executemany(statement, logged(statement, rows, "executemany", db.engine)),
        number,
        raw=(statement, lambda: rows),
    )
    last: int = cursor.execute(cache["encoded:last"]).fetchone()[0]
    return list(range(last - len(rows) + 1, last + 1))


def _rowids_one_by_one(
    db: Database,
    conn: sa.Connection,
    model: BoundModel,
    rows: list[Sequence[Any]],
    number: RowNumber,
) -> list[int]:
    """Insert ``rows`` (their rowid key NULL) one ``INSERT ... RETURNING`` each and return
    the rowids SQLite gave them."""
    table = model.table
    sql = model.sql_cache.get("encoded:returning")
    if sql is None:
        compiled = (
            table.insert()
            .returning(
                table.c[model.schema.primary_key.name]  # type: ignore[union-attr]
            )
            .compile(dialect=db.dialect, column_keys=model.names)
        )
        if [
            compiled.binds[b].key for b in compiled.positiontup or []
        ] != model.names:  # pragma: no cover - guards the raw path
            raise EntityworksError("unexpected parameter order")
        sql = model.sql_cache["encoded:returning"] = compiled.string
    cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
    return guard(  # type: ignore[no-any-return]
        db,
        conn,
        model,
        lambda: [
            cursor.execute(sql, r).fetchone()[0] for r in logged(sql, rows, "execute", db.engine)
        ],
        number,
        raw=(sql, lambda: rows),
    )


def upsert_many(db: Database, objs: Iterable[Any], *, batch_size: int = BATCH) -> int:
    """Insert-or-replace by primary key, in one transaction; returns the row count."""
    objs = objs if isinstance(objs, list) else list(objs)
    if not objs:
        return 0
    model = _model_for(db, objs)
    if model.schema.composite:
        _upsert_composite(db, model, objs, batch_size)
        return len(objs)
    key = model.schema.require_key("upsert")
    with _unset_fields_named(model, objs):
        keys = list(map(attrgetter(key.name), objs))
    if not _check_keys(model, keys) and None in keys:
        raise WriteError(
            f"upsert needs a key on every row; row {keys.index(None)} of "
            f"{model.schema.name!r} has {key.name}=None",
            table=model.schema.name,
            row=keys.index(None),
            column=key.name,
        )
    with _unset_fields_named(model, objs), db.connection(write=True) as conn:
        if model.children:
            _delete_children(db, conn, model, keys)
        write_rows(
            db, conn, model, objs, counting_from(0), upsert_sql(db, model), "upsert", batch_size
        )
        _insert_children(db, conn, model, objs, keys, batch_size)
    return len(objs)


def _upsert_composite(db: Database, model: BoundModel, objs: list[Any], batch_size: int) -> None:
    """Upsert rows of a table with a composite key (no child tables, no generated key)."""
    columns = model.schema.key_columns
    with _unset_fields_named(model, objs):
        keys = list(map(attrgetter(*(c.name for c in columns)), objs))
    for row, key in enumerate(keys):
        for c, value in zip(columns, key, strict=True):
            if value is None:
                raise WriteError(
                    f"upsert needs a key on every row; row {row} of "
                    f"{model.schema.name!r} has {c.name}=None",
                    table=model.schema.name,
                    row=row,
                    column=c.name,
                )
    with _unset_fields_named(model, objs), db.connection(write=True) as conn:
        write_rows(
            db, conn, model, objs, counting_from(0), upsert_sql(db, model), "upsert", batch_size
        )


def update(
    db: Database,
    point: PointPath,
    target: Any,
    values: Mapping[str, Any] | None = None,
    *,
    where: Any = None,
) -> int | None:
    """Write every field of an instance to the row with its key (child rows are
    replaced), or, given a class, set ``values`` on the rows matching ``where``.

    ``update(obj)`` raises :class:`NotFoundError` when no row has the key of ``obj``.
    ``update(Cls, values={...}, where=...)`` returns the number of rows matched; see
    :func:`_update_where`.
    """
    if isinstance(target, type):
        return _update_where(db, point, target, values, where)
    if values is not None or where is not None:
        raise EntityworksError(
            "update(instance) writes the fields of the instance; values= and where= are "
            "for a class: update(Cls, values={...}, where=...)"
        )
    obj = target
    if point.write(obj, "update"):
        return None
    model = _model_for(db, [obj])
    keys = model.schema.require_keys("update")
    with _unset_fields_named(model, [obj]):
        key_value = key_of(model, obj)
        row = as_dicts(model, [obj], counting_from(0))[0]
    table = model.table
    names = [k.name for k in keys]
    params = [f"_ew_key{i or ''}" for i in range(len(keys))]
    stmt = table.update().where(
        *(
            table.c[name] == sa.bindparam(param, type_=table.c[name].type)
            for name, param in zip(names, params, strict=True)
        )
    )
    kept = set(names) - set(restated_keys(db, model))
    with _unset_fields_named(model, [obj]), db.connection(write=True) as conn:
        result = guard(
            db,
            conn,
            model,
            lambda: conn.execute(
                stmt.values({k: v for k, v in row.items() if k not in kept}),
                {param: row[name] for name, param in zip(names, params, strict=True)},
            ),
            counting_from(0),
            single=row,
        )
        if result.rowcount == 0:
            raise NotFoundError(
                f"{model.schema.name!r} has no row with {key_label(model)}={key_value!r}"
            )
        if model.children:
            _delete_children(db, conn, model, [key_value])
            _insert_children(db, conn, model, [obj], [key_value], BATCH)
    return None


def _update_where(
    db: Database, point: PointPath, cls: type, values: Mapping[str, Any] | None, where: Any
) -> int:
    """``UPDATE ... SET values WHERE where``, in one statement; returns the rows matched.

    Every value goes through its column's registry rule and codec, as an inserted one
    does: a value of the wrong type raises :class:`ValueEncodingError` naming the column,
    and nothing is written. ``where`` is required (``where={}`` updates every row), as for
    :meth:`Store.delete`. The primary key and child-table fields cannot be set this way.
    """
    model = db.model(cls)
    if where is None:
        raise EntityworksError(
            "update(cls, values=...) needs where=...; pass where={} to update every row"
        )
    assignments = _update_assignments(db, model, values)
    key = _where_key(model, where)
    if key is not None:  # exactly one row's key: one statement, as update(obj)
        done = point.update_key(model, assignments, key)
        if done is not None:
            return done
    table = model.table
    stmt = table.update().values(assignments)
    condition = where_clause(db, model, where)
    if condition is not None:
        stmt = stmt.where(condition)
    with db.connection(write=True) as conn:
        # a refusal names the column (a broken foreign key's too) and keeps nothing
        result = guard(
            db, conn, model, lambda: conn.execute(stmt), counting_from(0), single=assignments
        )
        return int(result.rowcount)


def _update_assignments(db: Database, model: BoundModel, values: Any) -> dict[str, Any]:
    """``values`` (field column -> value) as SQL column -> encoded value, companion
    columns included, each checked and encoded by the registry like an inserted row."""
    schema = model.schema
    if not isinstance(values, Mapping) or not values:
        raise EntityworksError(
            f"update({model.cls.__qualname__}, values=...) takes a non-empty dict of "
            f"column -> value, got {values!r}"
        )
    children = {child.field for child in schema.children}
    fields = model.fields
    given: list[Any] = [None] * len(fields)
    encoded: list[Any] = [None] * len(fields)
    chosen: set[str] = set()
    for name, value in values.items():
        if not isinstance(name, str):
            raise EntityworksError(f"update values= keys must be column names, got {name!r}")
        if name in children:
            raise WriteError(
                f"{schema.name}.{name} is a child table, which update(cls, values=...) "
                "cannot set; update each instance with update(obj), which replaces its "
                "child rows; nothing was written",
                table=schema.name,
                column=name,
            )
        column = schema.column(name)  # UnknownColumnError names the real ones
        if column.primary_key:
            raise WriteError(
                f"{schema.name}: update(cls, values=...) cannot change the primary key "
                f"{name!r} (child rows and other references hold it); insert the rows "
                "under their new keys and delete the old ones; nothing was written",
                table=schema.name,
                column=name,
            )
        i = fields.index(name)
        if value is None and not column.nullable:
            raise encode_error(
                name,
                value,
                ValueError(
                    "the column is not nullable (annotate the field Optional to allow None)"
                ),
            )
        encoder = model.registry_encoders[i]
        try:
            encoded[i] = encoder(value) if encoder is not None else value
        except Exception as exc:
            raise encode_error(name, value, exc) from None
        given[i] = value
        chosen.add(name)
    try:
        spread = model.codec.spread
        row = spread(given, encoded) if spread is not None else encoded
    except Exception as exc:  # pragma: no cover - the rule above refuses first
        raise encode_error(", ".join(sorted(chosen)), values, exc) from None
    dialect = db.dialect.name
    owned = set(chosen)
    for c in schema.columns:
        if c.name in chosen:
            owned.update(part.column(c.name) for part in table_companions(model.table, c, dialect))
    return {n: v for n, v in zip(model.names, row, strict=True) if n in owned}


def delete(db: Database, point: PointPath, target: Any, *, where: Any = None) -> int:
    """Delete one instance (by its key) or, given a class, the rows matching ``where``.

    ``where={}`` deletes every row; ``where`` is required for a class so that a
    forgotten filter cannot empty a table. Child rows go with their parents.
    """
    if isinstance(target, type):
        model = db.model(target)
        if where is None:
            raise EntityworksError("delete(cls) needs where=...; pass where={} to delete every row")
        key = _where_key(model, where)
        if key is not None:  # exactly one row's key: one statement, as delete(obj)
            done = point.delete_key(model, key)
            if done:
                return done - 1
        condition = where_clause(db, model, where)
    else:
        if where is not None:
            raise EntityworksError("delete(instance) deletes by key; where= is for a class")
        done = point.write(target, "delete")
        if done:
            return done - 1
        model = db.model(type(target))
        model.schema.require_keys("delete")
        condition = key_condition(model, key_of(model, target))
    table = model.table
    with db.connection(write=True) as conn:
        try:
            if model.children:
                key = model.schema.require_key("delete")
                parents = sa.select(table.c[key.name])
                if condition is not None:
                    parents = parents.where(condition)
                for child in reversed(descendants(model)):  # the deepest first
                    conn.execute(
                        child.table.delete().where(child.table.c[PARENT_COLUMN].in_(parents))
                    )
            stmt = table.delete()
            if condition is not None:
                stmt = stmt.where(condition)
            return conn.execute(stmt).rowcount
        except (sa.exc.StatementError, db.dbapi_error) as exc:
            # The savepoint (or transaction) of this call rolls back: child rows stay.
            raise WriteError(
                f"{model.schema.name}: cannot delete: {error_text(exc)}; nothing was deleted",
                table=model.schema.name,
            ) from exc


def _where_key(model: BoundModel, where: Any) -> Any:
    """The key value of a ``where`` that is exactly ``{key: value}`` for the single key,
    the value of the key's own type (an ``int`` for an ``int`` key); else None."""
    if type(where) is not dict or len(where) != 1:
        return None
    column = model.schema.primary_key
    if column is None or model.schema.composite:
        return None
    native = column.info.native
    value = where.get(column.name)
    if native is None or type(value) is not native:
        return None
    return value


def _model_for(db: Database, objs: Sequence[Any]) -> BoundModel:
    cls = type(objs[0])
    if countOf(map(type, objs), cls) != len(objs):
        odd = next(i for i, o in enumerate(objs) if type(o) is not cls)
        raise WriteError(
            f"row {odd} is a {type(objs[odd]).__qualname__}, not a "
            f"{cls.__qualname__}: one call writes one table",
            row=odd,
        )
    return db.model(cls)


def insert_rows(
    db: Database, conn: sa.Connection, model: BoundModel, objs: list[Any], batch_size: int
) -> None:
    key = model.schema.primary_key
    # PostgreSQL: first the COPY straight from the instances. Its gate passes a key only
    # of exactly the key's type, so when it succeeds no key was left to generate, and
    # the scan of the keys below (serial work before the first row is sent) is saved.
    tried = copy_keys_gated(db, model)
    if not (tried and copy_instances(db, conn, model, objs)):
        generated: list[int] = []
        if key is not None and (
            key.info.native is None
            or countOf(map(type, map(attrgetter(key.name), objs)), key.info.native) != len(objs)
        ):
            keys = list(map(attrgetter(key.name), objs))
            if not _check_keys(model, keys) and key.autoincrement:
                generated = [i for i, k in enumerate(keys) if k is None]
        if generated:
            _insert_generated(db, conn, model, objs, generated, key.name)  # type: ignore
            gen = set(generated)
            rest = [i for i in range(len(objs)) if i not in gen]
            write_rows(
                db,
                conn,
                model,
                [objs[i] for i in rest],
                rest.__getitem__,
                insert_sql(db, model),
                "insert",
                batch_size,
            )
        else:  # the COPY from the instances, if tried, was refused: not again
            write_rows(
                db,
                conn,
                model,
                objs,
                counting_from(0),
                insert_sql(db, model),
                "insert",
                batch_size,
                instances=not tried,
            )
    if model.children:
        key_name = model.schema.primary_key.name  # type: ignore[union-attr]
        _insert_children(db, conn, model, objs, list(map(attrgetter(key_name), objs)), batch_size)


def _insert_generated(
    db: Database,
    conn: sa.Connection,
    model: BoundModel,
    objs: list[Any],
    indexes: list[int],
    key: str,
) -> None:
    table = model.table
    stmt = table.insert().returning(table.c[key], sort_by_parameter_order=True)
    for start in range(0, len(indexes), BATCH):
        part = indexes[start : start + BATCH]
        chosen = [objs[i] for i in part]
        dicts = as_dicts(model, chosen, part.__getitem__)
        for d in dicts:
            d.pop(key)
        if not dicts[0] and db.backend.key_only_rows_one_by_one:
            # rows of the key alone: SQLAlchemy would send VALUES (DEFAULT), (DEFAULT),
            # which NO_AUTO_VALUE_ON_ZERO makes two rows of key 0; one row at a time is
            # VALUES (), which takes the next value (a rare shape: the children dominate)
            new_keys = [conn.execute(table.insert().returning(table.c[key])).one() for _ in dicts]
        else:
            new_keys = guard(
                db,
                conn,
                model,
                lambda d=dicts: conn.execute(stmt, d).all(),  # type: ignore[misc]
                part.__getitem__,
                replay=(stmt, dicts),
            )
        for obj, (new_key,) in zip(chosen, new_keys, strict=True):
            object.__setattr__(obj, key, new_key)


def _insert_children(
    db: Database,
    conn: sa.Connection,
    model: BoundModel,
    objs: list[Any],
    keys: list[Any],
    batch_size: int,
    numbers: list[int] | None = None,
) -> None:
    """Insert the child rows of ``objs``: ``(*key, position, item)``, where ``key`` is
    the root's key (and, below the first level, the ancestors' positions); then theirs.
    ``numbers``: the caller's row of each object (by default its index)."""
    optional = {c.field for c in model.schema.children if c.optional}
    for fname, child in model.children:
        rows = []
        owners: list[int] = []  # each child row's parent row, the number errors give
        for number, (parent, key) in enumerate(zip(objs, keys, strict=True)):
            items = getattr(parent, fname)
            if items is None and fname in optional:
                continue  # None: the column of the field's name says so, no rows
            if items is None:
                raise WriteError(
                    f"{model.schema.name}.{fname} is None; use an empty list",
                    table=model.schema.name,
                    column=fname,
                )
            prefix = (key,) if model.schema.parent is None else key
            for position, item in enumerate(items):
                if type(item) is not child.cls:
                    raise WriteError(
                        f"{model.schema.name}.{fname}[{position}] is a "
                        f"{type(item).__qualname__}, not a {child.cls.__qualname__}",
                        table=model.schema.name,
                        column=fname,
                    )
                rows.append((*prefix, position, item))
            owners.extend([number if numbers is None else numbers[number]] * len(items))
        if rows:
            try:  # errors give the child row's index: named below with its owner
                write_rows(db, conn, child, rows, int, insert_sql(db, child), "insert", batch_size)
            except (ValueEncodingError, WriteError) as exc:
                raise _child_error(exc, model, fname, child, rows, owners) from None
            if child.children:
                _insert_children(
                    db,
                    conn,
                    child,
                    [r[-1] for r in rows],
                    [r[:-1] for r in rows],
                    batch_size,
                    owners,
                )


def _child_error(
    exc: ValueEncodingError | WriteError,
    model: BoundModel,
    fname: str,
    child: BoundModel,
    rows: list[tuple[Any, ...]],
    owners: list[int],
) -> ValueEncodingError | WriteError:
    """``exc``, raised for child row ``exc.row`` of ``rows``, told as the row of its owner
    and the item's table and index: ``row 1 (runs_steps item 1000 of row 1,
    Run.steps[1000]), column 'n': ...``; ``row`` stays the owner's row, as for the owner's
    own columns."""
    k = exc.row
    if k is None or not 0 <= k < len(rows):
        return exc
    owner, position = owners[k], rows[k][-2]
    where = (
        f"{child.schema.name} item {position} of row {owner}, "
        f"{model.cls.__qualname__}.{fname}[{position}]"
    )
    text = str(exc)
    mark = f"row {k}, "
    if mark in text:
        text = text.replace(mark, f"row {owner} ({where}), ", 1)
    else:
        text = f"{text} ({where})"
    if isinstance(exc, ValueEncodingError):
        return ValueEncodingError(text, column=exc.column, row=owner, value=exc.value)
    return WriteError(text, table=exc.table, row=owner, column=exc.column)


def _delete_children(db: Database, conn: sa.Connection, model: BoundModel, keys: list[Any]) -> None:
    encoded = encoded_keys(model, keys)
    for child in reversed(descendants(model)):  # the deepest first
        for start in range(0, len(encoded), 500):
            conn.execute(
                child.table.delete().where(
                    child.table.c[PARENT_COLUMN].in_(encoded[start : start + 500])
                )
            )


@contextmanager
def _unset_fields_named(model: BoundModel, objs: list[Any]) -> Iterator[None]:
    """Turn the AttributeError of a field nobody set (``field(init=False)`` without a
    default, left unset by ``__post_init__``) into a WriteError naming row and field."""
    try:
        yield
    except AttributeError as exc:
        error = _unset_field(model, objs)
        if error is None:
            raise
        raise error from exc


def _unset_field(model: BoundModel, objs: list[Any]) -> WriteError | None:
    names = [model.fields[i] for i in model.field_index]
    children = model.children
    for row, obj in enumerate(objs):
        owners = [(obj, names, "")]
        for fname, child in children:
            items = getattr(obj, fname, None) or []
            child_names = [child.fields[i] for i in child.field_index]
            owners += [(item, child_names, f".{fname}[{i}]") for i, item in enumerate(items)]
        for owner, fields, where in owners:
            for name in fields:
                if not hasattr(owner, name):
                    what = f"{type(owner).__qualname__}.{name}"
                    return WriteError(
                        f"{model.schema.name}: row {row}, column {name!r}: {what} is not "
                        f"set{f' (in {where[1:]})' if where else ''}; a field(init=False) "
                        "without a default must be set by __post_init__; nothing was written",
                        table=model.schema.name,
                        row=row,
                        column=name,
                    )
    return None


def _check_keys(model: BoundModel, keys: list[Any]) -> bool:
    """True when every key has exactly the key's native type; otherwise refuse a key of
    another type (SQLite's rowid would turn ``'12'`` into 12), ``None`` being left to the
    caller (a generated key, or an error)."""
    key = model.schema.primary_key
    assert key is not None
    native = key.info.native
    if native is None or countOf(map(type, keys), native) == len(keys):
        return native is not None
    for i, value in enumerate(keys):
        if value is not None and type(value) is not native:
            try:
                key.info.checked(value)
            except (TypeError, ValueError) as exc:
                raise encode_error(key.name, value, exc, i) from None
    return False


__all__ = ["delete", "insert_encoded", "insert_many", "insert_rows", "update", "upsert_many"]

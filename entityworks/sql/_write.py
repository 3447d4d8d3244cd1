"""Writing: insert, upsert, update and delete, with child rows, keys to generate and the
checks that refuse a row before any SQL is sent.

Each call runs in one transaction (or a savepoint inside ``Store.transaction()``). Inserts
and upserts go through the one write pipeline (:mod:`~entityworks.sql._pipeline`: objects ->
encoded rows -> the backend's ``write_rows``); a refusal is located by
:mod:`~entityworks.sql._locate`. One-row calls try the :mod:`~entityworks.sql._point` path first.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa

from ..errors import EntityworksError, NotFoundError, WriteError
from ..model.schema import PARENT_COLUMN
from ..registry import encode_error
from ._bound import (
    BoundModel,
    counting_from,
    descendants,
    key_label,
    key_of,
)
from ._bulk import BATCH, as_dicts, restated_keys
from ._database import Database
from ._locate import error_text, guard
from ._pipeline import (
    delete_children,
    insert_children,
    insert_encoded,
    insert_many,
    unset_fields_named,
    upsert_many,
)
from ._point import PointPath
from ._read import key_condition, where_clause
from .tables import table_companions


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
    model = db.model(type(obj))
    keys = model.schema.require_keys("update")
    with unset_fields_named(model, [obj]):
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
    with unset_fields_named(model, [obj]), db.connection(write=True) as conn:
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
            delete_children(db, conn, model, [key_value])
            insert_children(db, conn, model, [obj], [key_value], BATCH)
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


__all__ = ["delete", "insert_encoded", "insert_many", "update", "upsert_many"]

"""A :class:`TableSchema` -> SQLAlchemy Core ``Table`` objects (the SQL side of reflection).

SQLite stores any value in any column unless the table is STRICT, so our SQLite tables are
STRICT, and each column is declared with its natural type name (INTEGER, REAL, TEXT, BLOB):
that name gives the column SQLite's type affinity, so that other tools comparing a column
with a value bound as text (Datasette's ``?width=60``, ``parent_key = '3'`` in the sqlite3
shell, ``pandas.read_sql`` with a string parameter) find the rows, as they do in any SQLite
table. Affinity also converts what is written (``'12'`` into 12, 12 into ``'12'``, -0.0 into
0.0), so the database does not hold exactness for us: the Store checks the values of the
columns that receive them without a codec (int, float, str: ``backends.base.storage_class``) itself,
a whole column at a time on the bulk paths (see ``rowcodec``), and a float's sign of zero goes
into a ``__negzero`` companion, as on MariaDB. (What a table looks like on one backend, its
options, CHECKs and older column forms, is the backend's: see ``Backend.table_options``.)

Tables written by entityworks 0.2.3 and before declared those columns ``ANY`` with a ``CHECK``
on ``typeof`` (which refused other types but compared no text with numbers); given their
``live`` columns, such a column is mirrored as it is (``ANY`` keeps -0.0 itself, so it has no
``__negzero`` companion). ``entityworks migrate`` converts the catalog's.

This module is also the one place that adds companion columns (``registry.Companion``): a
field whose type needs them on the dialect gets them right after its own column. One that
other tools must read takes the field's column name instead (a SQLite Decimal's plain text),
and the field's own column is renamed beside it (``amount__key``, see :func:`layout`).

Given the ``live`` columns of tables that already exist, the ``Table`` mirrors them instead:
a table created before a companion existed (or by other means) lacks it, and the Store then
refuses the values that would need it rather than lose what it would keep.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import sqlalchemy as sa

from ..errors import InvalidNameError, SchemaError
from ..model.defaults import field_default
from ..model.names import check_name, index_name
from ..model.schema import PARENT_COLUMN, Column, TableSchema, table_schema
from ..registry import Companion
from ..types import storage
from . import sqltypes
from .backends import for_name
from .backends.base import Backend
from .defaults import column_defaults

#: Existing tables: table name -> {column name: declared SQL type, upper case}.
Live = Mapping[str, Mapping[str, str]]
#: The backend tables are built for: its Backend, or SQLAlchemy's name of its dialect.
On = Backend | str


def backend_of(on: On) -> Backend:
    """The Backend of ``on`` (looked up when given by its dialect's name)."""
    return on if isinstance(on, Backend) else for_name(on)


def sql_type(column: Column, keyed: bool = False) -> sa.types.TypeEngine[Any]:
    """The SQLAlchemy type of a column: the registry's, narrowed for keys on MariaDB.

    ``keyed``: the column is part of a composite index or unique constraint.
    """
    column_type = column.info.sql_codec.column_type
    if column.info.python_type is str or column_type in (storage.text, sqltypes.text):
        if column.max_length is not None:
            return sqltypes.bounded_text(column.max_length)
        if column.primary_key or column.unique or column.index or keyed:
            return sqltypes.key_text()
    made: sa.types.TypeEngine[Any] = column_type()
    return made


def companions(column: Column, dialect: On) -> tuple[Companion, ...]:
    """The companion columns ``column`` has on ``dialect`` (usually none) in a new table."""
    return column.info.companions_for(dialect if isinstance(dialect, str) else dialect.name)


def _older(parts: tuple[Companion, ...]) -> tuple[Companion, ...]:
    return tuple(q for p in parts for q in (p.older if p.own is not None else (p,)))


def layout(
    column: Column, dialect: On, live: Mapping[str, str] | None
) -> tuple[str, tuple[Companion, ...]]:
    """The SQL name of ``column``'s own column and its companions on ``dialect``.

    A companion that takes the field's name (``Companion.own``) renames the field's own
    column, unless ``live`` (the columns of the existing table) has the field's column
    without the renamed one: a table built before that companion existed keeps its layout
    and the companions of that time (``Companion.older``).
    """
    parts = companions(column, dialect)
    own = next((p for p in parts if p.own is not None), None)
    name = column.sql_name
    if own is None:
        return name, parts
    if live is not None and name in live and own.own_column(name) not in live:
        return name, _older(parts)
    return own.own_column(name), parts


def table_companions(table: sa.Table, column: Column, dialect: On) -> tuple[Companion, ...]:
    """The companions ``column`` has in ``table`` as it was built (see :func:`layout`);
    ``table`` may lack some of them (see the module docstring)."""
    backend = backend_of(dialect)
    parts = companions(column, backend)
    if keeps_sign(table, column, backend):
        parts = tuple(p for p in parts if not p.any_keeps)
    if any(p.own is not None for p in parts) and table.c[column.name].name == column.sql_name:
        return _older(parts)
    return parts


#: How a referenced dataclass becomes its schema (the Store passes its own, with its registry).
Resolve = Callable[[type], TableSchema]

#: The :class:`TableSchema` each table was built from (kept out of ``Table.info``, which
#: Alembic writes into revisions).
_SCHEMAS: weakref.WeakKeyDictionary[sa.Table, TableSchema] = weakref.WeakKeyDictionary()


def schema_of(table: sa.Table) -> TableSchema | None:
    """The schema ``table`` was built from by :func:`build_tables` (None for others)."""
    return _SCHEMAS.get(table)


def build_tables(
    schema: TableSchema,
    metadata: sa.MetaData,
    dialect: On,
    live: Live | None = None,
    resolve: Resolve | None = None,
    *,
    layouts: Live | None = None,
) -> sa.Table:
    """Add the table of ``schema`` (and its child tables) to ``metadata``; return the root.

    ``live`` describes tables that exist already (see the module docstring). The tables
    that ``column(references=...)`` fields refer to are built first when ``metadata`` does
    not hold them yet (``resolve`` turns their classes into schemas). ``layouts``, for tables
    not in ``live``, says only which layout (see :func:`layout`) an existing table has: a
    schema comparison (``entityworks.migrate``) then sees the companions that table is to
    have, without proposing another layout.
    """
    return _build_tree(
        schema,
        metadata,
        backend_of(dialect),
        live or {},
        resolve or table_schema,
        (),
        layouts or {},
    )


def metadata_of(
    classes: Iterable[type], dialect: On, *, layouts: Live | None = None
) -> sa.MetaData:
    """The tables of ``classes`` (child tables and the tables their foreign keys refer to
    included) as :func:`build_tables` builds them for ``dialect``, each table once."""
    metadata = sa.MetaData()
    backend = backend_of(dialect)
    for cls in classes:
        schema = table_schema(cls)
        if built_for(metadata, schema) is None:  # not built already as a referenced table
            build_tables(schema, metadata, backend, layouts=layouts)
    return metadata


def built_for(metadata: sa.MetaData, schema: TableSchema) -> sa.Table | None:
    """The table of ``schema`` in ``metadata`` if it was built from that class."""
    table = metadata.tables.get(schema.name)
    if table is not None and getattr(schema_of(table), "cls", None) is schema.cls:
        return table
    return None


def _build_tree(
    schema: TableSchema,
    metadata: sa.MetaData,
    backend: Backend,
    live: Live,
    resolve: Resolve,
    stack: tuple[type, ...],
    layouts: Live,
) -> sa.Table:
    stack = (*stack, schema.cls)
    for c in schema.columns:
        target = c.references
        if target is None or target is schema.cls:
            continue
        if target in stack:
            path = " -> ".join(cls.__qualname__ for cls in (*stack, target))
            raise SchemaError(
                f"{schema.cls.__qualname__}.{c.name}: the references between "
                f"tables form a cycle ({path}); only a table referring to "
                "itself is supported",
                cls=schema.cls,
                field=c.name,
            )
        target_schema = resolve(target)
        if built_for(metadata, target_schema) is None:
            _build_tree(target_schema, metadata, backend, {}, resolve, stack, layouts)
    root = _build_one(
        schema, metadata, backend, live.get(schema.name), resolve, layouts.get(schema.name)
    )
    for child in schema.descendants:  # parents first: a foreign key needs its target
        _build_one(child, metadata, backend, live.get(child.name), resolve, layouts.get(child.name))
    return root


def referenced_key(
    column: Column, schema: TableSchema, resolve: Resolve
) -> tuple[TableSchema, Column]:
    """The schema and key column ``column`` (a ``references=`` field) refers to; SchemaError
    when the target has no single-column key or its key's type differs."""
    assert column.references is not None
    target = schema if column.references is schema.cls else resolve(column.references)
    where = f"{schema.cls.__qualname__}.{column.name}"
    if target.parent is not None or target.primary_key is None:
        what = (
            "a composite key; a foreign key refers to a single-column key"
            if target.composite
            else "no primary key; a foreign key refers to a primary key"
        )
        raise SchemaError(
            f"{where} refers to {target.cls.__qualname__}, which has {what}",
            cls=schema.cls,
            field=column.name,
        )
    key = target.primary_key
    if key.info.python_type is not column.info.python_type or key.info.name != column.info.name:
        raise SchemaError(
            f"{where} is {column.info.name} but refers to "
            f"{target.cls.__qualname__}.{key.name}, which is {key.info.name}; a "
            "foreign key has the type of the key it refers to",
            cls=schema.cls,
            field=column.name,
        )
    return target, key


def _build_one(
    schema: TableSchema,
    metadata: sa.MetaData,
    backend: Backend,
    live: Mapping[str, str] | None,
    resolve: Resolve,
    existing: Mapping[str, str] | None = None,
) -> sa.Table:
    is_child = schema.parent is not None
    links = set(schema.column_names[: schema.links])  # (parent_key, position_1..., position)
    items: list[sa.schema.SchemaItem] = []
    taken = {c.sql_name.casefold() for c in schema.columns}
    keyed = {name for group in (*schema.indexes, *schema.unique) for name in group}
    for c in schema.columns:
        pk = c.primary_key and not is_child
        kwargs: dict[str, Any] = {"nullable": c.nullable, "primary_key": pk}
        if pk and c.autoincrement and not schema.composite:
            kwargs["autoincrement"] = True
        elif pk:
            kwargs["autoincrement"] = False
        if c.name in links:
            kwargs["primary_key"] = True
            kwargs["autoincrement"] = False
        unique = c.unique or (is_child and c.primary_key)
        # a column an older entityworks declared otherwise keeps that form (and its CHECKs)
        older = backend.older_column(c, schema, live if live is not None else existing)
        checks: list[sa.schema.SchemaItem] = [] if older is None else older[1]
        type_ = sql_type(c, c.name in keyed) if older is None else older[0]
        foreign: sa.ForeignKey | None = None
        if c.references is not None:
            target, key = referenced_key(c, schema, resolve)
            if older is None and c.max_length is None:
                type_ = sql_type(key)  # the key's own type (VARCHAR on MariaDB, collation)
            if target is schema:
                spec: str | sa.Column[Any] = f"{schema.name}.{key.name}"
            else:
                built = built_for(metadata, target)
                assert built is not None  # built first by _build_tree
                spec = built.c[key.name]
            ondelete = None if c.on_delete in (None, "no action") else c.on_delete.upper()
            foreign = sa.ForeignKey(
                spec, ondelete=ondelete, name=index_name(schema.name, [c.sql_name], "fk")
            )
        if is_child and c.name == PARENT_COLUMN and older is None:
            # The parent's key type exactly (a str key is VARCHAR on MariaDB, which cannot
            # put LONGTEXT in a key, and a foreign key needs the same collation).
            type_ = sql_type(schema.root.primary_key)  # type: ignore[arg-type]
        own_name, parts = layout(c, backend, live if live is not None else existing)
        if older is not None and backend.keeps_values(type_):  # keeps what these would
            parts = tuple(p for p in parts if not p.any_keeps)
        if own_name != c.sql_name:
            check_name(own_name, "column name", schema.cls, c.name)
            if own_name.casefold() in taken:
                raise InvalidNameError(
                    f"{schema.cls.__qualname__}.{c.name}: its column {own_name!r} would "
                    "clash with another column; rename the field",
                    cls=schema.cls,
                    field=c.name,
                )
        # a literal field default is also the column's DDL DEFAULT (see entityworks.sql.defaults)
        default, companion_defaults = column_defaults(
            c, field_default(schema, c), type_, backend.name, parts
        )
        # ``key``: the field's name, which every statement and row uses; the SQL has the other
        col = sa.Column(
            own_name,
            type_,
            *checks,
            key=c.name,
            unique=unique or None,
            index=c.index or None,
            server_default=default,
            **kwargs,
        )
        if foreign is not None:
            col.append_foreign_key(foreign)
        if is_child and c.name == PARENT_COLUMN and schema.depth == 1:
            parent_table = schema.parent.name  # type: ignore[union-attr]
            parent_key = schema.parent.primary_key.name  # type: ignore[union-attr]
            col.append_foreign_key(
                sa.ForeignKey(f"{parent_table}.{parent_key}", ondelete="CASCADE")
            )
        items.append(col)
        for part in parts:
            name = c.sql_name if part.own is not None else part.column(c.sql_name)
            if live is not None and name not in live:
                continue  # an older table without it: the Store refuses what it would keep
            check_name(name, "companion column name", schema.cls, c.name)
            if part.own is None and name.casefold() in taken:
                raise InvalidNameError(
                    f"{schema.cls.__qualname__}.{c.name}: its {part.suffix} column {name!r} "
                    "would clash with another column; rename the field",
                    cls=schema.cls,
                    field=c.name,
                )
            items.append(
                sa.Column(
                    name,
                    part.sql(),
                    key=part.column(c.name),
                    nullable=True,
                    server_default=companion_defaults.get(part.suffix),
                )
            )
        items.extend(backend.column_checks(c, col))
    table = sa.Table(schema.name, metadata, *items, **backend.table_options(schema, items))
    _SCHEMAS[table] = schema
    if schema.depth > 1:  # a child of a child: its parent row is (parent_key, positions...)
        parent = schema.parent
        assert parent is not None
        table.append_constraint(
            sa.ForeignKeyConstraint(
                schema.column_names[: schema.links - 1],
                [f"{parent.name}.{n}" for n in parent.column_names[: parent.links]],
                ondelete="CASCADE",
            )
        )
    for columns in schema.indexes:
        sa.Index(
            index_name(schema.name, [table.c[c].name for c in columns]),
            *(table.c[c] for c in columns),
        )
    for columns in schema.unique:
        table.append_constraint(
            sa.UniqueConstraint(
                *(table.c[c] for c in columns),
                name=index_name(schema.name, [table.c[c].name for c in columns], "uq"),
            )
        )
    return table


def keeps_sign(table: sa.Table, column: Column, backend: Backend) -> bool:
    """True when ``column``'s SQL column in ``table`` keeps each value as bound (SQLite's
    ``ANY``), and so what a column with type affinity loses (the sign of -0.0): its field
    needs no companion for that (``Companion.any_keeps``)."""
    return backend.keeps_values(table.c[column.name].type)

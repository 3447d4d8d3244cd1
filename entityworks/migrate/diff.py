"""Schema drift: how the live tables differ from dataclasses, as Alembic operations (renames
made one operation), each said in one line, and drift raised as an error.

Apart from :mod:`.apply`, which runs the operations that keep data: a diff only reads.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from alembic.autogenerate import produce_migrations
from alembic.migration import MigrationContext
from alembic.operations import ops

from ..errors import EntityworksError, SchemaError
from ..registry import COMPANION_SEPARATOR
from ..sql.store import Store
from ..sql.tables import schema_of, table_companions
from . import dialects
from .connection import opened
from .hooks import compare_server_default, compare_type
from .metadata import default_text, include_tables, sql_column, target_metadata
from .versions import VERSION_TABLE


def _flatten(items: Iterable[ops.MigrateOperation]) -> list[ops.MigrateOperation]:
    out: list[ops.MigrateOperation] = []
    for item in items:
        if isinstance(item, ops.OpContainer):
            out += _flatten(item.ops)
        else:
            out.append(item)
    return out


def _context(conn: sa.Connection, classes: Sequence[type]) -> MigrationContext:
    return MigrationContext.configure(
        conn,
        opts={
            "include_name": include_tables(classes),
            "compare_type": compare_type,
            "compare_server_default": compare_server_default,
            "version_table": VERSION_TABLE,
        },
    )


def diff_tables(
    conn: sa.Connection, classes: Sequence[type], renames: Mapping[str, str] | None = None
) -> list[ops.MigrateOperation]:
    """:func:`diff` on an open connection."""
    context = _context(conn, classes)
    metadata = target_metadata(classes, conn.dialect.name, conn)
    script = produce_migrations(context, metadata)
    found = _flatten(script.upgrade_ops.ops) if script.upgrade_ops else []
    if dialects.hides_text_defaults(conn.dialect):
        found += dialects.unseen_defaults(context, metadata, found)
    return _renamed(context, metadata, found, renames) if renames else found


def diff(
    target: Store | str | Path,
    classes: type | Sequence[type],
    *,
    renames: Mapping[str, str] | None = None,
) -> list[ops.MigrateOperation]:
    """Alembic operations that would bring the live tables in line with ``classes``.

    Only the tables of ``classes`` (and their child tables) are compared. Typical results:
    ``CreateTableOp`` (no such table yet), ``AddColumnOp`` (the dataclass gained a field),
    ``AlterColumnOp`` with ``modify_nullable`` (``X`` became ``X | None`` or back) or
    ``modify_server_default`` (a field's literal default changed), ``DropColumnOp`` (a field
    went away).

    ``renames`` maps an old column (``"column"`` or ``"table.column"``) to its new name: the
    drop of the old column and the add of the new one become one ``AlterColumnOp`` with
    ``modify_name``, which keeps the column's data (see :func:`apply`).
    """
    classes = [classes] if isinstance(classes, type) else list(classes)
    with opened(target) as store, store.engine.connect() as conn:
        return diff_tables(conn, classes, renames)


def parse_renames(specs: Iterable[str]) -> dict[str, str]:
    """``["note=remark", "levels.kind=theme"]`` -> ``{"note": "remark", "levels.kind":
    "theme"}``; a spec that is no ``OLD=NEW`` raises SchemaError."""
    renames: dict[str, str] = {}
    for spec in specs:
        old, sep, new = spec.partition("=")
        old, new = old.strip(), new.strip()
        if (
            not sep
            or not old
            or not new
            or "." in new
            and not new.startswith(old.rpartition(".")[0] + ".")
        ):
            raise SchemaError(
                f"rename {spec!r}: expected OLD=NEW, where OLD is COLUMN or "
                "TABLE.COLUMN and NEW a column name of the same table"
            )
        if old in renames:
            raise SchemaError(f"rename {spec!r}: {old!r} is renamed twice")
        renames[old] = new.rpartition(".")[2]
    return renames


def _renamed(
    context: MigrationContext,
    metadata: sa.MetaData,
    found: list[ops.MigrateOperation],
    renames: Mapping[str, str],
) -> list[ops.MigrateOperation]:
    """Turn each (drop old column, add new column) pair named in ``renames`` into one
    ``AlterColumnOp`` renaming the column."""
    out = list(found)
    for spec, new in renames.items():
        table, _, old = spec.rpartition(".")
        drops = [
            o
            for o in out
            if isinstance(o, ops.DropColumnOp)
            and o.column_name == old
            and (not table or o.table_name == table)
        ]
        if not drops:
            raise SchemaError(
                f"rename {spec}={new}: no column {spec!r} in the database "
                "that the dataclass no longer has"
            )
        if len(drops) > 1:
            names = ", ".join(sorted(f"{d.table_name}.{old}" for d in drops))
            raise SchemaError(
                f"rename {spec}={new}: {spec!r} is in several tables ({names}); "
                "name one as TABLE.COLUMN"
            )
        drop = drops[0]
        target = metadata.tables.get(drop.table_name)
        if target is not None and sql_column(target, new) is None and new in target.c:
            new = target.c[new].name  # a field name: its column(name=...) is the new column
        adds = [
            o
            for o in out
            if isinstance(o, ops.AddColumnOp)
            and o.table_name == drop.table_name
            and o.column.name == new
        ]
        if not adds:
            raise SchemaError(
                f"rename {spec}={new}: the dataclass of {drop.table_name} has no new field {new!r}"
            )
        pairs = [(drop, adds[0], old, new)]
        pairs += _companion_pairs(out, metadata, context.dialect.name, drop.table_name, old, new)
        for drop_, add_, old_, new_ in pairs:
            rename = _rename(context, metadata, drop_, old_, new_)
            out.remove(drop_)
            out.remove(add_)
            out.insert(0, rename)  # before the indexes on the new name are made
    return out


def _rename(
    context: MigrationContext, metadata: sa.MetaData, drop: ops.DropColumnOp, old: str, new: str
) -> ops.AlterColumnOp:
    """The operation renaming column ``old`` (dropped by ``drop``) to ``new``."""
    wanted = sql_column(metadata.tables[drop.table_name], new)
    was = drop.to_column()
    if context.impl.compare_type(was, wanted) or dialects.typeof_differs(
        context, drop.table_name, old, wanted
    ):
        raise SchemaError(
            f"rename {drop.table_name}.{old} -> {new}: the type changes too "
            f"({_type_name(was.type)} -> {_type_name(wanted.type)}), which could lose "
            "data; write an Alembic revision for it"
        )
    defaults_differ = compare_server_default(
        context, was, wanted, default_text(was), wanted.server_default, None
    )
    return ops.AlterColumnOp(
        drop.table_name,
        old,
        existing_type=wanted.type,
        existing_nullable=was.nullable,
        existing_server_default=was.server_default,
        modify_name=new,
        modify_nullable=wanted.nullable if wanted.nullable != was.nullable else None,
        modify_server_default=wanted.server_default if defaults_differ else False,
    )


def _companion_pairs(
    found: list[ops.MigrateOperation],
    metadata: sa.MetaData,
    dialect: str,
    table: str,
    old: str,
    new: str,
) -> list[tuple[ops.DropColumnOp, ops.AddColumnOp, str, str]]:
    """The companion columns that follow a renamed column: each (drop ``old__x``, add
    ``new__x``) pair of the new field's companions (its UTC offset, its scale, the sign of
    -0.0; a SQLite Decimal's key beside its text), renamed with it so that their values are
    kept. A companion of ``old`` that the new field does not have the same way (an older
    layout) is refused rather than dropped."""
    target = metadata.tables[table]
    schema = schema_of(target)
    field = schema.by_sql_name(new) if schema is not None else None
    if field is None:
        return []
    parts = table_companions(target, field, dialect)
    names = {target.c[part.column(field.name)].name for part in parts}
    names.add(target.c[field.name].name)  # the field's own column (``new`` or ``new__key``)
    prefix = f"{new}{COMPANION_SEPARATOR}"
    wanted = {name[len(prefix) :] for name in names if name.startswith(prefix)}
    drops = {
        o.column_name: o
        for o in found
        if isinstance(o, ops.DropColumnOp)
        and o.table_name == table
        and o.column_name.startswith(f"{old}{COMPANION_SEPARATOR}")
    }
    adds = {
        o.column.name: o for o in found if isinstance(o, ops.AddColumnOp) and o.table_name == table
    }
    pairs = []
    for suffix in sorted(wanted):
        drop = drops.pop(f"{old}{COMPANION_SEPARATOR}{suffix}", None)
        add = adds.get(f"{new}{COMPANION_SEPARATOR}{suffix}")
        if drop is not None and add is not None:
            pairs.append((drop, add, drop.column_name, add.column.name))
    kinds = (
        {part.suffix for part in parts}
        | {q.suffix for p in parts for q in p.older}
        | {p.own for p in parts if p.own is not None}
    )
    left = sorted(name for name in drops if name[len(old) + len(COMPANION_SEPARATOR) :] in kinds)
    if left:
        raise SchemaError(
            f"rename {table}.{old} -> {new}: the companion column {left[0]!r} of {old!r} has "
            f"no counterpart beside {new!r} (the table has an older layout), so renaming "
            "would lose what it keeps; write an Alembic revision for it"
        )
    return pairs


def _type_name(type_: Any) -> str:
    try:
        return str(type_)
    except Exception:  # a type that cannot compile without a dialect
        return type(type_).__name__


def _quoted(text: str) -> str:
    shown = text if len(text) <= 40 else text[:37] + "..."
    return "'" + shown.replace("'", "''") + "'"


def describe(op: ops.MigrateOperation) -> str:
    """One line saying what an operation does, e.g. ``add column maps.theme TEXT NOT NULL``."""
    if isinstance(op, ops.CreateTableOp):
        width = sum(isinstance(c, sa.Column) for c in op.columns)
        return f"create table {op.table_name} ({width} columns)"
    if isinstance(op, ops.DropTableOp):
        return f"drop table {op.table_name}"
    if isinstance(op, ops.AddColumnOp):
        c = op.column
        null = "NULL" if c.nullable else "NOT NULL"
        default = default_text(c)
        return f"add column {op.table_name}.{c.name} {_type_name(c.type)} {null}" + (
            f" DEFAULT {_quoted(default)}" if default is not None else ""
        )
    if isinstance(op, ops.DropColumnOp):
        return f"drop column {op.table_name}.{op.column_name}"
    if isinstance(op, ops.CreateForeignKeyOp):
        return (
            f"add foreign key {op.source_table}({', '.join(op.local_cols)}) -> "
            f"{op.referent_table}({', '.join(op.remote_cols)})"
        )
    if isinstance(op, ops.CreateUniqueConstraintOp):
        return (
            f"add unique constraint {op.constraint_name or ''} on {op.table_name} "
            f"({', '.join(map(str, op.columns))})"
        ).replace("  ", " ")
    if isinstance(op, ops.DropConstraintOp):
        kind = {"foreignkey": "foreign key", "unique": "unique constraint"}.get(
            op.constraint_type or "", "constraint"
        )
        return f"drop {kind} {op.constraint_name} on {op.table_name}"
    if isinstance(op, ops.AlterColumnOp):
        parts = []
        if op.modify_name is not None:
            parts.append(f"rename to {op.modify_name}")
        if op.modify_nullable is not None:
            parts.append("allow NULL" if op.modify_nullable else "set NOT NULL")
        if op.modify_type is not None:
            parts.append(f"type {_type_name(op.existing_type)} -> {_type_name(op.modify_type)}")
        if op.modify_server_default is not False:
            default = (
                default_text(sa.Column("_", sa.Integer, server_default=op.modify_server_default))
                if op.modify_server_default is not None
                else None
            )
            parts.append(
                f"set DEFAULT {_quoted(default)}" if default is not None else "drop DEFAULT"
            )
        return f"alter column {op.table_name}.{op.column_name}: {', '.join(parts) or 'other'}"
    if isinstance(op, ops.CreateIndexOp):
        columns = ", ".join(map(str, op.columns))
        return f"create index {op.index_name} on {op.table_name} ({columns})"
    if isinstance(op, ops.DropIndexOp):
        return f"drop index {op.index_name} on {op.table_name}"
    return f"{type(op).__name__}: {op.to_diff_tuple()!r}"


def check_clean(target: Store | str | Path, classes: type | Sequence[type]) -> None:
    """Raise EntityworksError listing the drift when the tables differ from ``classes``."""
    drift = diff(target, classes)
    if drift:
        raise EntityworksError("schema drift: " + "; ".join(describe(d) for d in drift))


__all__ = ["check_clean", "describe", "diff", "diff_tables", "parse_renames"]

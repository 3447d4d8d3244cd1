"""Applying a diff: the operations that keep data (new table, new column, nullability,
DEFAULT, rename), run in one transaction with every table's rows counted before and after.

A new NOT NULL column of a populated table is filled from the field's default; operations
that could lose data are refused, as is a database under a user's own Alembic.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from alembic.migration import MigrationContext
from alembic.operations import Operations, ops

from ..errors import SchemaError
from ..model.schema import table_schema
from ..sql.store import Store
from ..sql.tables import build_tables
from . import dialects
from .connection import migration_connection, opened
from .diff import describe, diff
from .metadata import sql_column, table_names, target_metadata
from .versions import refuse_if_managed

SAFE = (ops.CreateTableOp, ops.AddColumnOp, ops.AlterColumnOp, ops.CreateIndexOp)


def _field_name(cls: type, column: str) -> str:
    """The field of ``cls`` stored in SQL column ``column`` (``column(name=...)``)."""
    found = table_schema(cls).by_sql_name(column)
    return found.name if found is not None else column


def _field_default(cls_by_table: dict[str, type], table: str, column: str) -> Any:
    cls = cls_by_table.get(table)
    if cls is None:
        return dataclasses.MISSING
    column = _field_name(cls, column)
    for f in dataclasses.fields(cls):
        if f.name == column:
            if f.default is not dataclasses.MISSING:
                return f.default
            if f.default_factory is not dataclasses.MISSING:
                return f.default_factory()
    return dataclasses.MISSING


def _index_columns(op: ops.DropIndexOp) -> list[str]:
    try:
        index = op.to_index()
    except (ValueError, AttributeError):
        return []
    return [str(getattr(e, "name", e)) for e in index.expressions]


def _renamed_index(op: ops.MigrateOperation, todo: Sequence[ops.MigrateOperation]) -> bool:
    """A drop of an index on one column that ``todo`` renames: the index on the new name is
    created by ``todo`` too, and an index holds no data."""
    if not isinstance(op, ops.DropIndexOp):
        return False
    columns = _index_columns(op)
    return len(columns) == 1 and any(
        isinstance(o, ops.AlterColumnOp)
        and o.table_name == op.table_name
        and o.column_name == columns[0]
        and o.modify_name is not None
        for o in todo
    )


class Applied(list[str]):
    """What :func:`apply` ran (one line per operation), with ``rows``: the row count of
    every table that existed before, child tables included, checked equal afterwards."""

    rows: dict[str, int]


def apply(
    target: Store | str | Path,
    classes: type | Sequence[type],
    operations: Sequence[ops.MigrateOperation] | None = None,
    *,
    renames: Mapping[str, str] | None = None,
) -> Applied:
    """Run the data-keeping operations of :func:`diff` in one transaction; returns what ran.

    A new NOT NULL column of a populated table gets the field's default: the database fills
    it from the column's DEFAULT when the default is literal, else the field's default
    (a ``default_factory`` too) is written into every row before the column becomes NOT
    NULL, as for a column becoming NOT NULL while it holds NULLs; without a default
    SchemaError says so and nothing changes. A changed literal default changes the DEFAULT;
    ``renames`` (see :func:`diff`) rename columns with their data. Operations that would lose
    data (drop column or table, type changes) raise SchemaError unless they were left out of
    ``operations``.

    A database under a user's own Alembic (a version table such as ``alembic_version``) is
    refused: a change made here would make the database and the revisions disagree, so it
    belongs in a revision (``alembic revision --autogenerate``).

    Every row is kept, child tables included: the rows of each table are counted before and
    after, and a difference raises SchemaError (SQLite and PostgreSQL then roll the change
    back; MariaDB commits each DDL statement as it runs, so it cannot).
    """
    classes = [classes] if isinstance(classes, type) else list(classes)
    with opened(target) as store:
        with store.engine.connect() as conn:
            refuse_if_managed(conn, store)
        todo = diff(store, classes, renames=renames) if operations is None else list(operations)
        for op in todo:
            if _renamed_index(op, todo):
                continue
            if not isinstance(op, SAFE) or (
                isinstance(op, ops.AlterColumnOp) and op.modify_type is not None
            ):
                raise SchemaError(
                    f"not applied automatically (it could lose data): "
                    f"{describe(op)}; write an Alembic revision for it"
                )
        return _apply(store, classes, todo)


def _apply(store: Store, classes: list[type], todo: list[ops.MigrateOperation]) -> Applied:
    schemas = {table_schema(c).name: c for c in classes}
    done = Applied()
    with migration_connection(store) as conn:
        for op in todo:  # MariaDB cannot roll DDL back: refuse before changing anything
            _preflight(conn, op, schemas)
        live = set(sa.inspect(conn).get_table_names())
        counted = sorted(table_names(classes) & live)
        before = _row_counts(conn, counted)
        metadata = target_metadata(classes, conn.dialect.name, conn)
        operations_ = Operations(MigrationContext.configure(conn))
        inspector = sa.inspect(conn)
        had = {name: {c["name"] for c in inspector.get_columns(name)} for name in counted}
        kinds = store.registry.companion_types(conn.dialect.name)
        for op in todo:
            if isinstance(op, ops.AddColumnOp):
                _add_column(conn, operations_, op, schemas)
                base, sep, suffix = op.column.name.rpartition("__")
                if sep and suffix in kinds and base in had.get(op.table_name, ()):
                    # A companion of a column that had values: NULL reads each as it was
                    # (the DEFAULT, the field default's part, would change them).
                    added = sa.table(op.table_name, sa.column(op.column.name))
                    conn.execute(added.update().values({op.column.name: None}))
            elif isinstance(op, ops.AlterColumnOp):
                _alter_column(conn, operations_, op, schemas, metadata)
            else:
                operations_.invoke(op)
            done.append(describe(op))
        after = _row_counts(conn, counted)
        if after != before:
            lost = ", ".join(
                f"{t}: {before[t]} -> {after[t]}" for t in counted if before[t] != after[t]
            )
            undone = dialects.failed_change_outcome(conn.dialect)
            raise SchemaError(
                f"applying the schema change would not keep every row ({lost}); {undone}"
            )
    done.rows = after
    return done


def _row_counts(conn: sa.Connection, tables: Sequence[str]) -> dict[str, int]:
    counts = {}
    for name in tables:
        stmt = sa.select(sa.func.count()).select_from(sa.table(name))
        counts[name] = int(conn.execute(stmt).scalar_one())
    return counts


def _batch(operations: Operations, table: str, schemas: dict[str, type]) -> Any:
    """A batch context (SQLite rebuilds the table) keeping the options entityworks gives the
    table, such as SQLite STRICT."""
    kwargs: dict[str, Any] = {}
    cls = schemas.get(table)
    dialect = operations.get_context().dialect.name
    if cls is not None:
        built = build_tables(table_schema(cls), sa.MetaData(), dialect)
        kwargs = dict(built.dialect_kwargs)
    return operations.batch_alter_table(table, recreate="auto", table_kwargs=kwargs)


def _missing_values(conn: sa.Connection, table: str, column: str, added: bool) -> int:
    """Rows that would hold NULL in ``column`` (all rows when the column is new)."""
    live = sa.table(table, sa.column(column))
    stmt = sa.select(sa.func.count()).select_from(live)
    if not added:
        stmt = stmt.where(live.c[column].is_(None))
    return int(conn.execute(stmt).scalar_one())


def _preflight(conn: sa.Connection, op: ops.MigrateOperation, schemas: dict[str, type]) -> None:
    if (
        isinstance(op, ops.AddColumnOp)
        and not op.column.nullable
        and op.column.server_default is None
    ):
        table, column, field, added = op.table_name, op.column.name, op.column.name, True
    elif isinstance(op, ops.AlterColumnOp) and op.modify_nullable is False:
        table, column, added = op.table_name, op.column_name, False
        field = op.modify_name or op.column_name
    else:
        return
    if _field_default(schemas, table, field) is not dataclasses.MISSING:
        return
    missing = _missing_values(conn, table, column, added)
    if missing:
        raise SchemaError(
            f"{table}.{field} must be NOT NULL but {missing} row(s) have no value and the "
            f"field has no default; give the field a default or make it Optional"
        )


def _fill_nulls(
    conn: sa.Connection,
    table: str,
    column: sa.Column[Any],
    schemas: dict[str, type],
    field: str | None = None,
) -> None:
    """Give the NULLs of ``column`` the default of ``field`` (by default the field of the
    column's name): a bound parameter, encoded by the registry. With no default and NULLs
    present, SchemaError."""
    field = field or column.name
    nulls = _missing_values(conn, table, column.name, added=False)
    if not nulls:
        return
    default = _field_default(schemas, table, field)
    if default is dataclasses.MISSING:
        raise SchemaError(
            f"{table}.{field} must be NOT NULL but {nulls} row(s) have no value and the "
            f"field has no default; give the field a default or make it Optional"
        )
    info = table_schema(schemas[table]).column(_field_name(schemas[table], field)).info
    to_db = info.sql_codec.encode
    value = to_db(default) if to_db is not None else default
    typed = sa.table(table, sa.column(column.name, column.type))
    conn.execute(
        typed.update()
        .where(typed.c[column.name].is_(None))
        .values({column.name: sa.bindparam("fill", value, type_=column.type)})
    )


def _add_column(
    conn: sa.Connection, operations: Operations, op: ops.AddColumnOp, schemas: dict[str, type]
) -> None:
    column = op.column
    # The column's own CHECKs come along (SQLite's typeof check of an ANY column).
    checks = [
        sa.CheckConstraint(c.sqltext, name=c.name)
        for c in column.constraints
        if isinstance(c, sa.CheckConstraint)
    ]
    default = (
        column.server_default.arg if isinstance(column.server_default, sa.DefaultClause) else None
    )
    if column.nullable or default is not None:
        # a literal default: the database fills the rows, and no table is rebuilt
        operations.add_column(
            op.table_name,
            sa.Column(
                column.name,
                column.type,
                *checks,
                nullable=column.nullable,
                server_default=default,  # type: ignore[arg-type]
            ),
        )  # a DefaultClause's own arg
        return
    operations.add_column(
        op.table_name, sa.Column(column.name, column.type, *checks, nullable=True)
    )
    _fill_nulls(conn, op.table_name, column, schemas)
    with _batch(operations, op.table_name, schemas) as batch:
        batch.alter_column(column.name, existing_type=column.type, nullable=False)


def _alter_column(
    conn: sa.Connection,
    operations: Operations,
    op: ops.AlterColumnOp,
    schemas: dict[str, type],
    metadata: sa.MetaData,
) -> None:
    """Nullability, DEFAULT and name; every other property of the column is restated as it
    is (MariaDB's MODIFY/CHANGE would otherwise drop a DEFAULT)."""
    name = op.modify_name or op.column_name
    if op.modify_nullable is False:
        _fill_nulls(
            conn, op.table_name, sa.Column(op.column_name, op.existing_type), schemas, field=name
        )
    target = metadata.tables.get(op.table_name)
    wanted = sql_column(target, name) if target is not None else None
    if op.modify_server_default is False and wanted is not None:
        existing: Any = _default_arg(wanted.server_default)  # the database's (compared so)
    else:
        existing = _default_arg(op.existing_server_default or None)
    existing_type = op.existing_type
    if dialects.rebuilds_tables(conn.dialect) and isinstance(existing_type, sa.types.TypeDecorator):
        # the batch copies the live column; Alembic looks for a constraint named after a
        # type (Boolean, Enum), which a decorator's implementation (TEXT) has no name for
        existing_type = existing_type.load_dialect_impl(conn.dialect)
    kwargs: dict[str, Any] = {
        "existing_type": existing_type,
        "existing_nullable": op.existing_nullable,
        "existing_server_default": existing,
    }
    if op.modify_nullable is not None:
        kwargs["nullable"] = op.modify_nullable
    if op.modify_server_default is not False:
        kwargs["server_default"] = _default_arg(op.modify_server_default)
    if op.modify_name is not None:
        kwargs["new_column_name"] = op.modify_name
    with _batch(operations, op.table_name, schemas) as batch:
        batch.alter_column(op.column_name, **kwargs)
        if op.modify_name is not None and target is not None:
            dialects.rename_checks(conn, batch, target, op.column_name, wanted)


def _default_arg(default: Any) -> Any:
    """What ``alter_column`` takes for a DEFAULT: the text or clause inside a DefaultClause."""
    return default.arg if isinstance(default, sa.DefaultClause) else default


__all__ = ["SAFE", "Applied", "apply"]

"""Migrations: the catalog's Alembic revisions, and schema drift between a dataclass and a table.

:func:`upgrade` runs the revisions in the ``migrations`` package up to head on any database
(no ``alembic.ini`` needed). :func:`diff` compares dataclasses with the live tables through
Alembic's autogenerate and returns Alembic operations; :func:`apply` runs the ones that keep
data (new table, new column, nullability change), filling a new NOT NULL column of a populated
table from the field's default, so a dataclass that gained a field migrates without losing rows.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import produce_migrations
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.operations import Operations, ops
from alembic.util import CommandError

from .errors import EntityworksError, SchemaError
from .schema import table_schema
from .store import Store
from .tables import build_tables

#: Alembic's version table for the catalog (kept apart from a user's own ``alembic_version``).
VERSION_TABLE = "entityworks_version"
MIGRATIONS_DIR = Path(__file__).resolve().parent.parent / "migrations"


def _migrations_dir() -> Path:
    """The folder of the ``migrations`` package (the Alembic script directory)."""
    try:
        import migrations
    except ImportError:  # pragma: no cover - the package ships with entityworks
        return MIGRATIONS_DIR
    for entry in getattr(migrations, "__path__", []):
        folder = Path(entry)
        if (folder / "env.py").is_file():
            return folder.resolve()
    return MIGRATIONS_DIR


def _target_metadata(classes: Sequence[type], dialect: str) -> tuple[sa.MetaData, set[str]]:
    """Tables of ``classes`` built by entityworks for ``dialect``, and their names."""
    metadata = sa.MetaData()
    names: set[str] = set()
    for cls in classes:
        schema = table_schema(cls)
        build_tables(schema, metadata, dialect)
        names.add(schema.name)
        names.update(child.schema.name for child in schema.children)
    return metadata, names


def catalog_classes() -> list[type]:
    from .catalog import TABLES

    return list(TABLES.values())


def catalog_table_names() -> set[str]:
    """Every table of the catalog, child tables included."""
    return _target_metadata(catalog_classes(), "sqlite")[1]


def catalog_metadata(dialect: str) -> sa.MetaData:
    """The catalog's tables as entityworks builds them for ``dialect``."""
    return _target_metadata(catalog_classes(), dialect)[0]


def include_catalog_name(name: str | None, type_: str, _parents: Any) -> bool:
    """Alembic ``include_name`` hook: compare catalog tables only."""
    return type_ != "table" or name in catalog_table_names()


def alembic_config() -> Config:
    """A programmatic Alembic config pointing at the ``migrations`` package."""
    folder = _migrations_dir()
    config = Config()
    config.set_main_option("script_location", str(folder))
    return config


@contextmanager
def _opened(target: Store | str | Path) -> Iterator[Store]:
    """``target`` as a Store; one opened here from a URL or path is closed afterwards."""
    if isinstance(target, Store):
        yield target
        return
    store = Store(target)
    try:
        yield store
    finally:
        store.close()


@contextmanager
def _connect(store: Store) -> Iterator[sa.Connection]:
    with store.engine.connect() as conn:
        conn = conn.execution_options(entityworks_write=True)
        yield conn
        conn.commit()


def current(target: Store | str | Path) -> str | None:
    """The catalog revision of a database (``None``: not under migration control)."""
    with _opened(target) as store, store.engine.connect() as conn:
        context = MigrationContext.configure(conn, opts={"version_table": VERSION_TABLE})
        return context.get_current_revision()


def head() -> str:
    """The newest revision in ``migrations/versions``."""
    from alembic.script import ScriptDirectory

    revision = ScriptDirectory.from_config(alembic_config()).get_current_head()
    if revision is None:  # pragma: no cover - the package ships its revisions
        raise EntityworksError(f"no Alembic revisions in {_migrations_dir()}")
    return revision


def upgrade(target: Store | str | Path, revision: str = "head") -> str | None:
    """Upgrade a database to ``revision``; returns the revision it is at afterwards.

    A catalog created without migrations (``Store.create``) whose tables already match the
    dataclasses is stamped instead of re-created; one that differs raises SchemaError.
    """
    config = alembic_config()
    with _opened(target) as store, _connect(store) as conn:
        config.attributes["connection"] = conn
        context = MigrationContext.configure(conn, opts={"version_table": VERSION_TABLE})
        existing: set[str] = set()
        if context.get_current_revision() is None:
            existing = catalog_table_names() & set(sa.inspect(conn).get_table_names())
        if existing:
            drift = _diff(conn, catalog_classes())
            if drift:
                raise SchemaError(
                    f"{store!r} has catalog tables ({', '.join(sorted(existing))}) that are "
                    f"not under migration control and differ from the catalog: "
                    f"{describe(drift[0])}")
            _alembic(command.stamp, config, revision)
        else:
            _alembic(command.upgrade, config, revision)
        return context.get_current_revision()


def _alembic(step: Any, config: Config, revision: str) -> None:
    """Run an Alembic command; its refusals (an unknown revision...) are ours to report."""
    try:
        step(config, revision)
    except CommandError as exc:
        raise EntityworksError(f"cannot migrate to revision {revision!r}: {exc}") from None


# -- helpers for revision files ---------------------------------------------------------------


def create_tables(classes: Sequence[type]) -> None:
    """Inside a revision: create the tables of ``classes`` (and child tables) with
    ``op.create_table``, exactly as entityworks maps them for the dialect being migrated."""
    from alembic import op

    metadata, _names = _target_metadata(classes, op.get_context().dialect.name)
    for table in metadata.sorted_tables:
        items: list[Any] = [c._copy() for c in table.columns]
        items += [c._copy() for c in table.constraints if isinstance(c, sa.CheckConstraint)]
        items += [sa.ForeignKeyConstraint(
            [e.parent.name for e in fk.elements], [e.target_fullname for e in fk.elements],
            name=fk.name, ondelete=fk.ondelete, onupdate=fk.onupdate)
            for fk in table.foreign_key_constraints]
        op.create_table(table.name, *items, **dict(table.dialect_kwargs))


def drop_tables(classes: Sequence[type]) -> None:
    """Inside a revision: drop the tables of ``classes``, children first."""
    from alembic import op

    metadata, _names = _target_metadata(classes, op.get_context().dialect.name)
    for table in reversed(metadata.sorted_tables):
        op.drop_table(table.name)


# -- schema drift --------------------------------------------------------------------------


def _flatten(items: Iterable[ops.MigrateOperation]) -> list[ops.MigrateOperation]:
    out: list[ops.MigrateOperation] = []
    for item in items:
        if isinstance(item, ops.OpContainer):
            out += _flatten(item.ops)
        else:
            out.append(item)
    return out


def _diff(conn: sa.Connection, classes: Sequence[type]) -> list[ops.MigrateOperation]:
    metadata, names = _target_metadata(classes, conn.dialect.name)

    def include_name(name: str | None, type_: str, _parents: Any) -> bool:
        return type_ != "table" or name in names

    context = MigrationContext.configure(conn, opts={
        "include_name": include_name, "compare_type": True, "version_table": VERSION_TABLE})
    script = produce_migrations(context, metadata)
    return _flatten(script.upgrade_ops.ops) if script.upgrade_ops else []


def diff(target: Store | str | Path, classes: type | Sequence[type]) -> list[ops.MigrateOperation]:
    """Alembic operations that would bring the live tables in line with ``classes``.

    Only the tables of ``classes`` (and their child tables) are compared. Typical results:
    ``CreateTableOp`` (no such table yet), ``AddColumnOp`` (the dataclass gained a field),
    ``AlterColumnOp`` with ``modify_nullable`` (``X`` became ``X | None`` or back),
    ``DropColumnOp`` (a field went away).
    """
    classes = [classes] if isinstance(classes, type) else list(classes)
    with _opened(target) as store, store.engine.connect() as conn:
        return _diff(conn, classes)


def _type_name(type_: Any) -> str:
    try:
        return str(type_)
    except Exception:  # a type that cannot compile without a dialect
        return type(type_).__name__


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
        return f"add column {op.table_name}.{c.name} {_type_name(c.type)} {null}"
    if isinstance(op, ops.DropColumnOp):
        return f"drop column {op.table_name}.{op.column_name}"
    if isinstance(op, ops.AlterColumnOp):
        parts = []
        if op.modify_nullable is not None:
            parts.append("allow NULL" if op.modify_nullable else "set NOT NULL")
        if op.modify_type is not None:
            parts.append(f"type {_type_name(op.existing_type)} -> "
                         f"{_type_name(op.modify_type)}")
        return f"alter column {op.table_name}.{op.column_name}: {', '.join(parts) or 'other'}"
    if isinstance(op, ops.CreateIndexOp):
        columns = ", ".join(map(str, op.columns))
        return f"create index {op.index_name} on {op.table_name} ({columns})"
    if isinstance(op, ops.DropIndexOp):
        return f"drop index {op.index_name} on {op.table_name}"
    return f"{type(op).__name__}: {op.to_diff_tuple()!r}"


SAFE = (ops.CreateTableOp, ops.AddColumnOp, ops.AlterColumnOp, ops.CreateIndexOp)


def _field_default(cls_by_table: dict[str, type], table: str, column: str) -> Any:
    cls = cls_by_table.get(table)
    if cls is None:
        return dataclasses.MISSING
    for f in dataclasses.fields(cls):
        if f.name == column:
            if f.default is not dataclasses.MISSING:
                return f.default
            if f.default_factory is not dataclasses.MISSING:
                return f.default_factory()
    return dataclasses.MISSING


def apply(target: Store | str | Path, classes: type | Sequence[type],
          operations: Sequence[ops.MigrateOperation] | None = None) -> list[str]:
    """Run the data-keeping operations of :func:`diff` in one transaction; returns what ran.

    A new NOT NULL column of a populated table (or a column becoming NOT NULL while it holds
    NULLs) is filled from the field's default; without a default SchemaError says so and
    nothing changes. Operations that would lose data (drop column or table, type changes)
    raise SchemaError unless they were left out of ``operations``.
    """
    classes = [classes] if isinstance(classes, type) else list(classes)
    todo = diff(target, classes) if operations is None else list(operations)
    for op in todo:
        if not isinstance(op, SAFE) or (isinstance(op, ops.AlterColumnOp)
                                         and op.modify_type is not None):
            raise SchemaError(f"not applied automatically (it could lose data): "
                              f"{describe(op)}; write an Alembic revision for it")
    schemas = {table_schema(c).name: c for c in classes}
    done = []
    with _opened(target) as store, _connect(store) as conn:
        for op in todo:  # MariaDB cannot roll DDL back: refuse before changing anything
            _preflight(conn, op, schemas)
        operations_ = Operations(MigrationContext.configure(conn))
        for op in todo:
            if isinstance(op, ops.AddColumnOp):
                _add_column(conn, operations_, op, schemas)
            elif isinstance(op, ops.AlterColumnOp):
                _alter_nullable(conn, operations_, op, schemas)
            else:
                operations_.invoke(op)
            done.append(describe(op))
    return done


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


def _preflight(conn: sa.Connection, op: ops.MigrateOperation, schemas: dict[str, type]
               ) -> None:
    if isinstance(op, ops.AddColumnOp) and not op.column.nullable:
        table, column, added = op.table_name, op.column.name, True
    elif isinstance(op, ops.AlterColumnOp) and op.modify_nullable is False:
        table, column, added = op.table_name, op.column_name, False
    else:
        return
    if _field_default(schemas, table, column) is not dataclasses.MISSING:
        return
    missing = _missing_values(conn, table, column, added)
    if missing:
        raise SchemaError(
            f"{table}.{column} must be NOT NULL but {missing} row(s) have no value and the "
            f"field has no default; give the field a default or make it Optional")


def _fill_nulls(conn: sa.Connection, table: str, column: sa.Column, schemas: dict[str, type]
                ) -> None:
    """Give the NULLs of ``column`` the field's default (a bound parameter, encoded by the
    registry); with no default and NULLs present, SchemaError."""
    nulls = _missing_values(conn, table, column.name, added=False)
    if not nulls:
        return
    default = _field_default(schemas, table, column.name)
    if default is dataclasses.MISSING:
        raise SchemaError(
            f"{table}.{column.name} must be NOT NULL but {nulls} row(s) have no value and the "
            f"field has no default; give the field a default or make it Optional")
    info = table_schema(schemas[table]).column(column.name).info
    value = info.to_db(default) if info.to_db is not None else default
    typed = sa.table(table, sa.column(column.name, column.type))
    conn.execute(typed.update().where(typed.c[column.name].is_(None))
                 .values({column.name: sa.bindparam("fill", value, type_=column.type)}))


def _add_column(conn: sa.Connection, operations: Operations, op: ops.AddColumnOp,
                schemas: dict[str, type]) -> None:
    column = op.column
    operations.add_column(op.table_name, sa.Column(column.name, column.type, nullable=True))
    if column.nullable:
        return
    _fill_nulls(conn, op.table_name, column, schemas)
    with _batch(operations, op.table_name, schemas) as batch:
        batch.alter_column(column.name, existing_type=column.type, nullable=False)


def _alter_nullable(conn: sa.Connection, operations: Operations, op: ops.AlterColumnOp,
                    schemas: dict[str, type]) -> None:
    column = sa.Column(op.column_name, op.existing_type)
    if op.modify_nullable is False:
        _fill_nulls(conn, op.table_name, column, schemas)
    with _batch(operations, op.table_name, schemas) as batch:
        batch.alter_column(op.column_name, existing_type=op.existing_type,
                           nullable=op.modify_nullable)


def check_clean(target: Store | str | Path, classes: type | Sequence[type]) -> None:
    """Raise EntityworksError listing the drift when the tables differ from ``classes``."""
    drift = diff(target, classes)
    if drift:
        raise EntityworksError("schema drift: " + "; ".join(describe(d) for d in drift))


__all__ = [
    "VERSION_TABLE",
    "alembic_config",
    "apply",
    "catalog_metadata",
    "check_clean",
    "create_tables",
    "current",
    "describe",
    "diff",
    "drop_tables",
    "head",
    "include_catalog_name",
    "upgrade",
]

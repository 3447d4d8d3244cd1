"""Migrations: the catalog's Alembic revisions, and schema drift between a dataclass and a table.

:func:`upgrade` runs the revisions in the ``migrations`` package up to head on any database
(no ``alembic.ini`` needed). :func:`diff` compares dataclasses with the live tables through
Alembic's autogenerate and returns Alembic operations; :func:`apply` runs the ones that keep
data (new table, new column, nullability change), filling a new NOT NULL column of a populated
table from the field's default, so a dataclass that gained a field migrates without losing rows.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
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

from ..errors import EntityworksError, SchemaError
from ..model.defaults import NUMBER, is_text, parse_reflected, same_default
from ..model.schema import table_schema
from ..sql.ddllock import schema_lock
from ..sql.store import Store
from ..sql.tables import build_tables, built_for

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


def target_metadata(classes: Iterable[type], dialect: str,
                    conn: sa.Connection | None = None) -> sa.MetaData:
    """The tables of ``classes`` (child tables and the tables their foreign keys refer to
    included) as entityworks builds them for ``dialect``: what Alembic's autogenerate
    compares a database with. Given ``conn``, a table it has keeps its layout (a SQLite
    table written before Decimals kept their plain text: see ``tables.layout``)."""
    classes = list(classes)
    layouts = _layouts(conn, classes) if conn is not None else None
    metadata = sa.MetaData()
    for cls in classes:
        schema = table_schema(cls)
        if built_for(metadata, schema) is None:  # not built already as a referenced table
            build_tables(schema, metadata, dialect, layouts=layouts)
    return metadata


def _layouts(conn: sa.Connection, classes: Sequence[type]) -> dict[str, dict[str, str]]:
    """The column names of the tables of ``classes`` that ``conn``'s database has."""
    inspector = sa.inspect(conn)
    return {name: {c["name"]: "" for c in inspector.get_columns(name)}
            for name in sorted(table_names(classes)) if inspector.has_table(name)}


def metadata_for(*models: type, dialect: str | sa.Dialect | sa.Connection | sa.Engine | None
                 = None) -> sa.MetaData:
    """The SQLAlchemy ``MetaData`` of your own dataclasses (child tables included), exactly as
    ``Store.create`` builds them: the ``target_metadata`` of an Alembic ``env.py``.

    ``dialect`` is the backend the tables are for (a name, a Dialect, an Engine or a
    Connection): the scaffolded ``env.py`` (``entityworks migrations init``) passes Alembic's
    connection. Without it the tables are built for SQLite, whose options (STRICT, the length
    CHECK of ``max_length`` text) other backends ignore or do not compare.
    """
    if not models:
        raise EntityworksError("metadata_for() needs at least one dataclass")
    for model in models:
        table_schema(model)  # refuse a class that is no table before anything is built
    conn = dialect if isinstance(dialect, sa.Connection) else None
    return target_metadata(models, _dialect_name(dialect), conn)


def _dialect_name(dialect: str | sa.Dialect | sa.Connection | sa.Engine | None) -> str:
    if dialect is None:
        return "sqlite"
    if isinstance(dialect, str):
        return dialect
    if isinstance(dialect, (sa.Connection, sa.Engine)):
        return dialect.dialect.name
    return dialect.name


def compare_server_default(context: MigrationContext, inspected_column: sa.Column[Any],
                           metadata_column: sa.Column[Any], inspected_default: str | None,
                           metadata_default: Any, rendered_metadata_default: str | None
                           ) -> bool | None:
    """Alembic's ``compare_server_default`` hook: True when a column's DEFAULT in the
    database differs from the one entityworks writes for the field's literal default.

    Backends spell one default differently (``'10'::bigint``, ``(10)``, ``10``; MariaDB
    ``1.500...`` for ``1.50``), and SQLAlchemy cannot read every MariaDB text default, so
    MariaDB's own ``information_schema`` is read and both sides are compared as values (see
    :func:`entityworks.model.defaults.same_default`). A generated key's sequence default is no
    difference; a DEFAULT entityworks did not write (an expression, a user's own) is left to
    Alembic.
    """
    ours = metadata_column.server_default
    wanted = _default_text(metadata_column)
    if ours is not None and (wanted is None or not isinstance(ours.arg, str)  # type: ignore[attr-defined]
                             and not NUMBER.fullmatch(wanted)):
        return None
    if ours is None and metadata_column.primary_key and metadata_column.autoincrement in (
            True, "auto"):
        return False  # SERIAL's nextval(...), an identity: the key generator itself
    text = inspected_default
    mysql = context.dialect.name in ("mysql", "mariadb")
    reflected = parse_reflected(text)
    if mysql and context.connection is not None:
        table, name = metadata_column.table.name, inspected_column.name
        reflected = parse_reflected(_mysql_column_default(context.connection, table, name),
                                    backslashes=True)
        if (reflected is not None and wanted is not None and is_text(metadata_column.type)
                and _mysql_shown_as(wanted, reflected)):
            return False
    return not same_default(reflected, wanted, metadata_column.type)


_MYSQL_COLUMNS = sa.table("COLUMNS", sa.column("TABLE_SCHEMA"), sa.column("TABLE_NAME"),
                          sa.column("COLUMN_NAME"), sa.column("COLUMN_DEFAULT"),
                          schema="information_schema")


def _mysql_column_default(conn: sa.Connection, table: str, column: str) -> str | None:
    """MariaDB's own text of a column's DEFAULT (``'NULL'`` for a nullable column without
    one), which SQLAlchemy's parser of SHOW CREATE TABLE misses for text with quotes."""
    c = _MYSQL_COLUMNS.c
    stmt = sa.select(c.COLUMN_DEFAULT).where(
        c.TABLE_SCHEMA == sa.func.database(), c.TABLE_NAME == table, c.COLUMN_NAME == column)
    value = conn.execute(stmt).scalar()
    return None if value is None else str(value)


def _mysql_shown_as(ours: str, shown: str) -> bool:
    """True when MariaDB's metadata ``shown`` is how it displays ``ours``: it writes each
    character beyond U+FFFF of a DEFAULT as ``?`` (one, or one per UTF-8 byte), though the
    rows get the character itself."""
    if "?" not in shown or ours == shown:
        return ours == shown
    parts = re.split(r"(\?+)", shown)
    pattern = "".join("(?:\\?|[\U00010000-\U0010ffff])+" if part.startswith("?")
                      else re.escape(part) for part in parts)
    return re.fullmatch(pattern, ours) is not None


def render_item(type_: str, obj: Any, autogen_context: Any) -> Any:
    """Alembic's ``render_item`` hook: a revision that names one of entityworks' column types
    (``entityworks.sql.sqltypes.ExactDecimal()``...) imports its module."""
    if type_ == "type":
        module = type(obj).__module__
        if module.startswith("entityworks."):
            autogen_context.imports.add(f"import {module}")
    if (type_ == "column" and isinstance(obj, sa.Column)
            and not getattr(autogen_context, "_entityworks_column", False)):
        autogen_context._entityworks_column = True  # Alembic renders it, not this hook again
        try:
            return _render_column_checks(obj, autogen_context)
        finally:
            autogen_context._entityworks_column = False
    return False


def _render_column_checks(column: sa.Column[Any], autogen_context: Any) -> Any:
    """A column with CHECKs of its own (SQLite's ``typeof`` check of an ANY column), which
    Alembic would leave out of ``add_column``/``create_table``: rendered with them."""
    checks = [c for c in column.constraints if isinstance(c, sa.CheckConstraint) and c.name]
    if not checks:
        return False
    from alembic.autogenerate import render as alembic_render

    text = alembic_render._render_column(column, autogen_context)
    type_text = alembic_render._repr_type(column.type, autogen_context)
    at = text.find(type_text)
    if at < 0:  # pragma: no cover - Alembic changed its rendering: keep it as it is
        return False
    prefix = alembic_render._sqlalchemy_autogenerate_prefix(autogen_context)
    rendered = ", ".join(f"{prefix}CheckConstraint({str(c.sqltext)!r}, name={c.name!r})"
                         for c in checks)
    cut = at + len(type_text)
    return f"{text[:cut]}, {rendered}{text[cut:]}"


def alembic_options(models: Iterable[type], dialect: str | sa.Dialect | sa.Connection
                    | sa.Engine | None = None, *, version_table: str = "alembic_version"
                    ) -> dict[str, Any]:
    """The ``context.configure`` options of an ``env.py`` migrating ``models``: their
    metadata, only their tables compared (other tables in the database are left alone),
    types and server defaults compared, SQLite changes in batch mode, and the version table
    (``alembic_version``: the catalog keeps its own, ``entityworks_version``)."""
    models = list(models)
    name = _dialect_name(dialect)
    return {"target_metadata": metadata_for(*models, dialect=dialect),
            "include_name": include_tables(models), "compare_type": True,
            "compare_server_default": compare_server_default, "render_item": render_item,
            "render_as_batch": name == "sqlite", "version_table": version_table}


def version_tables(conn: sa.Connection) -> dict[str, tuple[str, ...]]:
    """Alembic version tables in a database (a table whose one column is ``version_num``),
    with the revisions each holds."""
    found: dict[str, tuple[str, ...]] = {}
    inspector = sa.inspect(conn)
    for (_schema, name), columns in inspector.get_multi_columns().items():
        if [c["name"] for c in columns] == ["version_num"]:
            stmt = sa.select(sa.column("version_num", sa.String)).select_from(sa.table(name))
            found[name] = tuple(sorted(str(v) for v in conn.execute(stmt).scalars()))
    return found


def managed_by_alembic(conn: sa.Connection) -> dict[str, tuple[str, ...]]:
    """The version tables of a user's own Alembic (the catalog's ``entityworks_version``
    excluded): a database with one is changed through revisions only."""
    return {name: revisions for name, revisions in version_tables(conn).items()
            if name != VERSION_TABLE}


def table_names(classes: Iterable[type]) -> set[str]:
    """Every table of ``classes``: child tables and the tables foreign keys refer to
    included."""
    names: set[str] = set()
    todo, seen = list(classes), set()
    while todo:
        cls = todo.pop()
        if cls in seen:
            continue
        seen.add(cls)
        schema = table_schema(cls)
        names.add(schema.name)
        names.update(child.name for child in schema.descendants)
        todo += [c.references for c in schema.columns if c.references is not None]
    return names


def include_tables(classes: Iterable[type]) -> Callable[[str | None, str, Any], bool]:
    """An Alembic ``include_name`` hook comparing the tables of ``classes`` only."""
    names = table_names(classes)

    def include_name(name: str | None, type_: str, _parents: Any) -> bool:
        return type_ != "table" or name in names

    return include_name


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
    """A write connection for schema changes, committed when the block ends without error.

    On SQLite, foreign keys are off while it is open. A batch operation rebuilds a table by
    copying it and dropping the original, and with foreign keys on that drop would empty
    every child table through ON DELETE CASCADE. SQLite ignores the pragma inside a
    transaction, so it is set before the transaction begins (on this connection only) and
    restored after it ends; ``PRAGMA foreign_key_check`` runs before the commit, and a
    violation rolls everything back.
    """
    with store.engine.connect() as conn:
        sqlite = conn.dialect.name == "sqlite"
        if sqlite:
            _sqlite_foreign_keys(conn, on=False)
        try:
            conn = conn.execution_options(entityworks_write=True)
            yield conn
            if sqlite:
                _check_foreign_keys(conn)
            conn.commit()
        finally:
            if sqlite:
                if conn.in_transaction():
                    conn.rollback()
                _sqlite_foreign_keys(conn, on=True)


def _sqlite_foreign_keys(conn: sa.Connection, *, on: bool) -> None:
    """Switch SQLite's foreign keys on this connection (outside any transaction)."""
    raw = conn.connection.dbapi_connection
    raw.execute(f"PRAGMA foreign_keys={'ON' if on else 'OFF'}")  # type: ignore[union-attr]


def _check_foreign_keys(conn: sa.Connection) -> None:
    """Refuse (and so roll back) a schema change after which a row breaks a foreign key."""
    problems = conn.exec_driver_sql("PRAGMA foreign_key_check").all()
    if problems:
        table, rowid, parent, _fk = problems[0]
        raise SchemaError(
            f"{len(problems)} row(s) would break a foreign key (first: {table} rowid {rowid} "
            f"-> {parent}); the schema change was rolled back")


#: The connection every migration runs on (also used by ``migrations/env.py``).
migration_connection = _connect


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


def upgrade(target: Store | str | Path, revision: str = "head", *,
            classes: Iterable[type]) -> str | None:
    """Upgrade a database to ``revision``; returns the revision it is at afterwards.

    ``classes`` are the dataclasses the revisions create (the catalog passes its own: see
    :func:`entityworks.catalog.upgrade_catalog`). A database created without migrations
    (``Store.create``) whose tables already match them is stamped instead of re-created;
    one that differs raises SchemaError.
    """
    classes = list(classes)
    config = alembic_config()
    config.attributes["entityworks_classes"] = classes
    with _opened(target) as store, _connect(store) as conn, schema_lock(conn):
        config.attributes["connection"] = conn
        context = MigrationContext.configure(conn, opts={"version_table": VERSION_TABLE})
        existing: set[str] = set()
        if context.get_current_revision() is None:
            existing = table_names(classes) & set(sa.inspect(conn).get_table_names())
        if existing:
            drift = _diff(conn, classes)
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


def create_tables(classes: Sequence[type], only: Collection[str] | None = None) -> None:
    """Inside a revision: create the tables of ``classes`` (and child tables) with
    ``op.create_table``, exactly as entityworks maps them for the dialect being migrated.

    ``only`` names the tables to create (e.g. a child table added to an existing parent).
    """
    from alembic import op

    metadata = target_metadata(classes, op.get_context().dialect.name)
    for table in metadata.sorted_tables:
        if only is not None and table.name not in only:
            continue
        items: list[Any] = [c._copy() for c in table.columns]
        items += [c._copy() for c in table.constraints if isinstance(c, sa.CheckConstraint)]
        items += [sa.ForeignKeyConstraint(
            [e.parent.name for e in fk.elements], [e.target_fullname for e in fk.elements],
            name=fk.name, ondelete=fk.ondelete, onupdate=fk.onupdate)
            for fk in table.foreign_key_constraints]
        # composite indexes (those of ``index=True`` columns come with the columns)
        items += [sa.Index(ix.name, *[c.name for c in ix.columns])
                  for ix in table.indexes if not getattr(ix, "_column_flag", False)]
        op.create_table(table.name, *items, **dict(table.dialect_kwargs))


def drop_tables(classes: Sequence[type], only: Collection[str] | None = None) -> None:
    """Inside a revision: drop the tables of ``classes`` (or the ``only`` ones), children
    first."""
    from alembic import op

    metadata = target_metadata(classes, op.get_context().dialect.name)
    for table in reversed(metadata.sorted_tables):
        if only is None or table.name in only:
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


def _context(conn: sa.Connection, classes: Sequence[type]) -> MigrationContext:
    return MigrationContext.configure(conn, opts={
        "include_name": include_tables(classes), "compare_type": True,
        "compare_server_default": compare_server_default, "version_table": VERSION_TABLE})


def _diff(conn: sa.Connection, classes: Sequence[type],
          renames: Mapping[str, str] | None = None) -> list[ops.MigrateOperation]:
    context = _context(conn, classes)
    metadata = target_metadata(classes, conn.dialect.name, conn)
    script = produce_migrations(context, metadata)
    found = _flatten(script.upgrade_ops.ops) if script.upgrade_ops else []
    if conn.dialect.name in ("mysql", "mariadb"):
        found += _mysql_unseen_defaults(context, metadata, found)
    return _renamed(context, metadata, found, renames) if renames else found


def _mysql_unseen_defaults(context: MigrationContext, metadata: sa.MetaData,
                           found: Sequence[ops.MigrateOperation]) -> list[ops.AlterColumnOp]:
    """DEFAULTs SQLAlchemy cannot read on MariaDB (text with a quote or backslash), where the
    field has none: Alembic never compares them, so they are found here."""
    conn = context.connection
    assert conn is not None
    seen = {(o.table_name, o.column_name) for o in found
            if isinstance(o, (ops.AlterColumnOp, ops.DropColumnOp))}
    created = {o.table_name for o in found if isinstance(o, ops.CreateTableOp)}
    live = set(sa.inspect(conn).get_table_names())
    out = []
    c = _MYSQL_COLUMNS.c
    for table in metadata.sorted_tables:
        if table.name not in live or table.name in created:
            continue
        stmt = sa.select(c.COLUMN_NAME, c.COLUMN_DEFAULT).where(
            c.TABLE_SCHEMA == sa.func.database(), c.TABLE_NAME == table.name)
        defaults = {str(name): value for name, value in conn.execute(stmt)}
        for column in table.columns:
            if column.server_default is not None or (table.name, column.name) in seen:
                continue
            if column.primary_key and column.autoincrement in (True, "auto"):
                continue
            value = defaults.get(column.name)
            text = parse_reflected(None if value is None else str(value), backslashes=True)
            if text is not None:
                out.append(ops.AlterColumnOp(
                    table.name, column.name, existing_type=column.type,
                    existing_nullable=column.nullable, modify_server_default=None))
    return out


def diff(target: Store | str | Path, classes: type | Sequence[type], *,
         renames: Mapping[str, str] | None = None) -> list[ops.MigrateOperation]:
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
    with _opened(target) as store, store.engine.connect() as conn:
        return _diff(conn, classes, renames)


def parse_renames(specs: Iterable[str]) -> dict[str, str]:
    """``["note=remark", "levels.kind=theme"]`` -> ``{"note": "remark", "levels.kind":
    "theme"}``; a spec that is no ``OLD=NEW`` raises SchemaError."""
    renames: dict[str, str] = {}
    for spec in specs:
        old, sep, new = spec.partition("=")
        old, new = old.strip(), new.strip()
        if not sep or not old or not new or "." in new and not new.startswith(
                old.rpartition(".")[0] + "."):
            raise SchemaError(f"rename {spec!r}: expected OLD=NEW, where OLD is COLUMN or "
                              "TABLE.COLUMN and NEW a column name of the same table")
        if old in renames:
            raise SchemaError(f"rename {spec!r}: {old!r} is renamed twice")
        renames[old] = new.rpartition(".")[2]
    return renames


def _renamed(context: MigrationContext, metadata: sa.MetaData,
             found: list[ops.MigrateOperation], renames: Mapping[str, str]
             ) -> list[ops.MigrateOperation]:
    """Turn each (drop old column, add new column) pair named in ``renames`` into one
    ``AlterColumnOp`` renaming the column."""
    out = list(found)
    for spec, new in renames.items():
        table, _, old = spec.rpartition(".")
        drops = [o for o in out if isinstance(o, ops.DropColumnOp) and o.column_name == old
                 and (not table or o.table_name == table)]
        if not drops:
            raise SchemaError(f"rename {spec}={new}: no column {spec!r} in the database "
                              "that the dataclass no longer has")
        if len(drops) > 1:
            names = ", ".join(sorted(f"{d.table_name}.{old}" for d in drops))
            raise SchemaError(f"rename {spec}={new}: {spec!r} is in several tables ({names}); "
                              "name one as TABLE.COLUMN")
        drop = drops[0]
        target = metadata.tables.get(drop.table_name)
        if target is not None and _sql_column(target, new) is None and new in target.c:
            new = target.c[new].name  # a field name: its column(name=...) is the new column
        adds = [o for o in out if isinstance(o, ops.AddColumnOp)
                and o.table_name == drop.table_name and o.column.name == new]
        if not adds:
            raise SchemaError(f"rename {spec}={new}: the dataclass of {drop.table_name} has no "
                              f"new field {new!r}")
        add = adds[0]
        wanted = _sql_column(metadata.tables[drop.table_name], new)
        was = drop.to_column()
        if context.impl.compare_type(was, wanted) or _typeof_differs(
                context, drop.table_name, old, wanted):
            raise SchemaError(
                f"rename {drop.table_name}.{old} -> {new}: the type changes too "
                f"({_type_name(was.type)} -> {_type_name(wanted.type)}), which could lose "
                "data; write an Alembic revision for it")
        defaults_differ = compare_server_default(
            context, was, wanted, _default_text(was), wanted.server_default, None)
        rename = ops.AlterColumnOp(
            drop.table_name, old, existing_type=wanted.type,
            existing_nullable=was.nullable, existing_server_default=was.server_default,
            modify_name=new,
            modify_nullable=wanted.nullable if wanted.nullable != was.nullable else None,
            modify_server_default=wanted.server_default if defaults_differ else False)
        out.remove(drop)
        out.remove(add)
        out.insert(0, rename)  # before the indexes on the new name are made
    return out


def _typeof_differs(context: MigrationContext, table: str, old: str,
                    wanted: sa.Column[Any]) -> bool:
    """On SQLite, an int and a str column are both ANY; their ``typeof`` CHECKs differ."""
    if context.dialect.name != "sqlite" or context.connection is None:
        return False
    checks = {str(c.get("name")): str(c.get("sqltext", "")) for c in
              sa.inspect(context.connection).get_check_constraints(table)}
    was = re.findall(r"typeof\([^)]*\)\s*=\s*'(\w+)'", checks.get(f"type_{old}", ""))
    now = [re.findall(r"typeof\([^)]*\)\s*=\s*'(\w+)'", str(c.sqltext))
           for c in wanted.constraints if isinstance(c, sa.CheckConstraint)]
    return was != (now[0] if now else [])


def _default_text(column: sa.Column[Any]) -> str | None:
    default = column.server_default
    if isinstance(default, sa.DefaultClause):
        arg = default.arg
        return arg if isinstance(arg, str) else str(getattr(arg, "text", arg))
    return None


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
        default = _default_text(c)
        return (f"add column {op.table_name}.{c.name} {_type_name(c.type)} {null}"
                + (f" DEFAULT {_quoted(default)}" if default is not None else ""))
    if isinstance(op, ops.DropColumnOp):
        return f"drop column {op.table_name}.{op.column_name}"
    if isinstance(op, ops.CreateForeignKeyOp):
        return (f"add foreign key {op.source_table}({', '.join(op.local_cols)}) -> "
                f"{op.referent_table}({', '.join(op.remote_cols)})")
    if isinstance(op, ops.CreateUniqueConstraintOp):
        return (f"add unique constraint {op.constraint_name or ''} on {op.table_name} "
                f"({', '.join(map(str, op.columns))})").replace("  ", " ")
    if isinstance(op, ops.DropConstraintOp):
        kind = {"foreignkey": "foreign key", "unique": "unique constraint"}.get(
            op.constraint_type or "", "constraint")
        return f"drop {kind} {op.constraint_name} on {op.table_name}"
    if isinstance(op, ops.AlterColumnOp):
        parts = []
        if op.modify_name is not None:
            parts.append(f"rename to {op.modify_name}")
        if op.modify_nullable is not None:
            parts.append("allow NULL" if op.modify_nullable else "set NOT NULL")
        if op.modify_type is not None:
            parts.append(f"type {_type_name(op.existing_type)} -> "
                         f"{_type_name(op.modify_type)}")
        if op.modify_server_default is not False:
            default = (_default_text(sa.Column("_", sa.Integer,
                                               server_default=op.modify_server_default))
                       if op.modify_server_default is not None else None)
            parts.append(f"set DEFAULT {_quoted(default)}" if default is not None
                         else "drop DEFAULT")
        return f"alter column {op.table_name}.{op.column_name}: {', '.join(parts) or 'other'}"
    if isinstance(op, ops.CreateIndexOp):
        columns = ", ".join(map(str, op.columns))
        return f"create index {op.index_name} on {op.table_name} ({columns})"
    if isinstance(op, ops.DropIndexOp):
        return f"drop index {op.index_name} on {op.table_name}"
    return f"{type(op).__name__}: {op.to_diff_tuple()!r}"


SAFE = (ops.CreateTableOp, ops.AddColumnOp, ops.AlterColumnOp, ops.CreateIndexOp)


def _sql_column(table: sa.Table, name: str) -> Any:
    """The column of ``table`` called ``name`` in SQL (``table.c`` is keyed by field names,
    which ``column(name=...)`` makes differ); ``None`` if there is none."""
    return next((c for c in table.columns if c.name == name), None)


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
        isinstance(o, ops.AlterColumnOp) and o.table_name == op.table_name
        and o.column_name == columns[0] and o.modify_name is not None for o in todo)


class Applied(list[str]):
    """What :func:`apply` ran (one line per operation), with ``rows``: the row count of
    every table that existed before, child tables included, checked equal afterwards."""

    rows: dict[str, int]


def apply(target: Store | str | Path, classes: type | Sequence[type],
          operations: Sequence[ops.MigrateOperation] | None = None, *,
          renames: Mapping[str, str] | None = None) -> Applied:
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
    with _opened(target) as store:
        with store.engine.connect() as conn:
            refuse_if_managed(conn, store)
        todo = diff(store, classes, renames=renames) if operations is None else list(operations)
        for op in todo:
            if _renamed_index(op, todo):
                continue
            if not isinstance(op, SAFE) or (isinstance(op, ops.AlterColumnOp)
                                             and op.modify_type is not None):
                raise SchemaError(f"not applied automatically (it could lose data): "
                                  f"{describe(op)}; write an Alembic revision for it")
        return _apply(store, classes, todo)


def refuse_if_managed(conn: sa.Connection, where: object) -> None:
    """SchemaError when the database is under a user's own Alembic (see :func:`apply`)."""
    managed = managed_by_alembic(conn)
    if managed:
        name, revisions = next(iter(managed.items()))
        at = ", ".join(revisions) or "no revision yet"
        raise SchemaError(
            f"{where} is managed by Alembic (version table {name}: {at}); changing its "
            "tables here would leave the database and the revisions disagreeing. Write a "
            "revision instead: alembic revision --autogenerate -m '...', then alembic "
            "upgrade head")


def _apply(store: Store, classes: list[type], todo: list[ops.MigrateOperation]) -> Applied:
    schemas = {table_schema(c).name: c for c in classes}
    done = Applied()
    with _connect(store) as conn:
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
            lost = ", ".join(f"{t}: {before[t]} -> {after[t]}" for t in counted
                             if before[t] != after[t])
            undone = ("MariaDB committed the schema change (it cannot roll DDL back)"
                      if conn.dialect.name in ("mysql", "mariadb") else "nothing was changed")
            raise SchemaError(f"applying the schema change would not keep every row "
                              f"({lost}); {undone}")
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


def _preflight(conn: sa.Connection, op: ops.MigrateOperation, schemas: dict[str, type]
               ) -> None:
    if (isinstance(op, ops.AddColumnOp) and not op.column.nullable
            and op.column.server_default is None):
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
            f"field has no default; give the field a default or make it Optional")


def _fill_nulls(conn: sa.Connection, table: str, column: sa.Column[Any], schemas: dict[str, type],
                field: str | None = None) -> None:
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
            f"field has no default; give the field a default or make it Optional")
    info = table_schema(schemas[table]).column(_field_name(schemas[table], field)).info
    value = info.to_db(default) if info.to_db is not None else default
    typed = sa.table(table, sa.column(column.name, column.type))
    conn.execute(typed.update().where(typed.c[column.name].is_(None))
                 .values({column.name: sa.bindparam("fill", value, type_=column.type)}))


def _add_column(conn: sa.Connection, operations: Operations, op: ops.AddColumnOp,
                schemas: dict[str, type]) -> None:
    column = op.column
    # The column's own CHECKs come along (SQLite's typeof check of an ANY column).
    checks = [c._copy() for c in column.constraints if isinstance(c, sa.CheckConstraint)]
    default = column.server_default.arg if isinstance(column.server_default,
                                                      sa.DefaultClause) else None
    if column.nullable or default is not None:
        # a literal default: the database fills the rows, and no table is rebuilt
        operations.add_column(op.table_name, sa.Column(
            column.name, column.type, *checks, nullable=column.nullable,
            server_default=default))  # type: ignore[arg-type]  # a DefaultClause's own arg
        return
    operations.add_column(op.table_name, sa.Column(column.name, column.type, *checks,
                                                   nullable=True))
    _fill_nulls(conn, op.table_name, column, schemas)
    with _batch(operations, op.table_name, schemas) as batch:
        batch.alter_column(column.name, existing_type=column.type, nullable=False)


def _alter_column(conn: sa.Connection, operations: Operations, op: ops.AlterColumnOp,
                  schemas: dict[str, type], metadata: sa.MetaData) -> None:
    """Nullability, DEFAULT and name; every other property of the column is restated as it
    is (MariaDB's MODIFY/CHANGE would otherwise drop a DEFAULT)."""
    name = op.modify_name or op.column_name
    if op.modify_nullable is False:
        _fill_nulls(conn, op.table_name, sa.Column(op.column_name, op.existing_type), schemas,
                    field=name)
    target = metadata.tables.get(op.table_name)
    wanted = _sql_column(target, name) if target is not None else None
    if op.modify_server_default is False and wanted is not None:
        existing: Any = _default_arg(wanted.server_default)  # the database's (compared so)
    else:
        existing = _default_arg(op.existing_server_default or None)
    kwargs: dict[str, Any] = {"existing_type": op.existing_type,
                              "existing_nullable": op.existing_nullable,
                              "existing_server_default": existing}
    if op.modify_nullable is not None:
        kwargs["nullable"] = op.modify_nullable
    if op.modify_server_default is not False:
        kwargs["server_default"] = _default_arg(op.modify_server_default)
    if op.modify_name is not None:
        kwargs["new_column_name"] = op.modify_name
    with _batch(operations, op.table_name, schemas) as batch:
        batch.alter_column(op.column_name, **kwargs)
        if op.modify_name is not None and conn.dialect.name == "sqlite" and target is not None:
            _rename_checks(conn, batch, target, op.column_name, op.modify_name)


def _default_arg(default: Any) -> Any:
    """What ``alter_column`` takes for a DEFAULT: the text or clause inside a DefaultClause."""
    return default.arg if isinstance(default, sa.DefaultClause) else default


def _rename_checks(conn: sa.Connection, batch: Any, target: sa.Table, old: str, new: str
                   ) -> None:
    """SQLite keeps a CHECK's text as written: when the table is rebuilt, the checks on the
    old column name (its ``typeof``, a ``max_length``) are replaced by the new column's."""
    quoted = {f'"{old}"', f"({old})", f"{old} ", f"({old} "}
    for check in sa.inspect(conn).get_check_constraints(target.name):
        text = str(check.get("sqltext", ""))
        if check.get("name") and any(q in text for q in quoted):
            batch.drop_constraint(check["name"], type_="check")
    column = _sql_column(target, new)
    checks = [c for c in column.constraints if isinstance(c, sa.CheckConstraint)]
    checks += [c for c in target.constraints if isinstance(c, sa.CheckConstraint)
               and c.name == f"length_{new}"]
    for made in checks:  # as text: an expression would name the column of another table
        sql = made.sqltext.compile(dialect=conn.dialect, compile_kwargs={
            "literal_binds": True, "include_table": False})
        batch.create_check_constraint(made.name, sa.text(str(sql)))


def check_clean(target: Store | str | Path, classes: type | Sequence[type]) -> None:
    """Raise EntityworksError listing the drift when the tables differ from ``classes``."""
    drift = diff(target, classes)
    if drift:
        raise EntityworksError("schema drift: " + "; ".join(describe(d) for d in drift))


__all__ = [
    "VERSION_TABLE",
    "Applied",
    "alembic_config",
    "apply",
    "check_clean",
    "create_tables",
    "current",
    "describe",
    "diff",
    "drop_tables",
    "head",
    "include_tables",
    "table_names",
    "target_metadata",
    "upgrade",
]

"""The schema commands: ``schema TABLE`` (columns and types), ``schema diff`` (dataclasses
against live tables, and ``--apply``), ``ddl`` (CREATE TABLE for a dialect), ``migrate`` (the
catalog's own revisions) and ``migrations init`` (Alembic for a user's dataclasses).

They mirror :mod:`entityworks.model`, :mod:`entityworks.sql.scripts` and
:mod:`entityworks.migrate`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..sql.backends.light import FILE_BACKEND, FILE_TITLE, TITLES
from ..sql.urls import display_db
from ._stores import (
    check_writable_table,
    complete_table,
    file_path,
    for_the_command,
    open_store,
    resolve_table,
)
from .errors import Group
from .options import DEFAULT_DB, check_db, db_option, load_class

if TYPE_CHECKING:
    import sqlalchemy as sa

    from ..model.schema import TableSchema
    from ..sql.store import Store


class SchemaGroup(Group):
    """``schema TABLE`` shows a table; ``schema diff`` compares; a table name means ``show``."""

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            args = ["show", *args]
        return super().resolve_command(ctx, args)


@click.group(cls=SchemaGroup)
def schema() -> None:
    """Show a table's schema (schema TABLE) or compare classes with a database (schema diff)."""


@schema.command("show")
@click.argument("table_name", metavar="TABLE", shell_complete=complete_table)
@db_option
def schema_show(table_name: str, db: str) -> None:
    """Columns of TABLE: Python type, SQL type, nullability, key; child tables too.

    Catalog tables need no database; other tables are reflected from --db.
    """
    from .. import catalog
    from ..model.schema import table_schema
    from ..sql.backends import file_backend
    from ..sql.store import Store

    if table_name in catalog.TABLES:
        path = file_path(db)
        missing = path is not None and not path.exists()
        # no file: the types of the database a file would hold, nothing created
        store = for_the_command(Store(file_backend().memory_url())) if missing else open_store(db)
        cls = catalog.TABLES[table_name]
    else:
        from ..sql.exchange.children import with_child_tables

        store = open_store(db, must_exist=True)
        # a table Store.create made with list fields: its child tables are shown under it
        cls = with_child_tables(store, resolve_table(store, table_name))
    info = table_schema(cls, store.registry)
    sql = store.table(cls)
    click.echo(f"{info.name} ({cls.__qualname__}) on {store.dialect.name}")
    _print_columns(info, sql.metadata, store.dialect)


def _print_columns(
    info: TableSchema, metadata: sa.MetaData, dialect: sa.Dialect, indent: str = "  "
) -> None:
    from sqlalchemy import DefaultClause

    table = metadata.tables[info.name]
    rows = []
    for c in info.columns:
        sql_type = table.c[c.name].type.compile(dialect=dialect)
        flags = ["NULL" if c.nullable else "NOT NULL"]
        if c.primary_key and info.parent is None:
            flags.append("PRIMARY KEY")
        if c.unique:
            flags.append("UNIQUE")
        if c.index:
            flags.append("INDEX")
        default = table.c[c.name].server_default
        if isinstance(default, DefaultClause):  # a literal field default
            arg = default.arg
            shown = arg if not isinstance(arg, str) else "'" + arg.replace("'", "''") + "'"
            flags.append(f"DEFAULT {getattr(shown, 'text', shown)}")
        rows.append((c.name, c.info.name, sql_type, " ".join(flags)))
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    for r in rows:
        click.echo(
            indent
            + "  ".join(v.ljust(w) for v, w in zip(r[:3], widths, strict=False))
            + "  "
            + r[3]
        )
    for child in info.children:
        links = child.schema.column_names[: child.schema.links]
        root = child.schema.root
        click.echo(
            f"{indent}{child.field}: child table {child.schema.name} "
            f"(key {', '.join(links)}; parent_key -> "
            f"{root.name}.{root.primary_key.name})"  # type: ignore[union-attr]
        )
        _print_columns(child.schema, metadata, dialect, indent + "    ")


@schema.command("diff")
@click.argument("tables", nargs=-1, metavar="[TABLE]...")
@click.option(
    "--dataclass",
    "dataclasses_",
    multiple=True,
    metavar="MODULE:CLASS",
    help="Compare this dataclass instead of the catalog's (repeatable).",
)
@click.option(
    "--rename",
    "renames",
    multiple=True,
    metavar="OLD=NEW",
    help="Column OLD (or TABLE.OLD) became NEW: rename it, keeping its data, "
    "instead of a drop and an add (repeatable).",
)
@click.option(
    "--check",
    "check",
    is_flag=True,
    help="Exit with status 1 when there are differences (0 when there are none).",
)
@click.option(
    "--apply",
    "apply_",
    is_flag=True,
    help="Run the data-keeping operations (new table, new column, nullability, "
    "DEFAULT, rename). Refused on a database under Alembic: write a revision.",
)
@db_option
def schema_diff(
    tables: Sequence[str],
    dataclasses_: Sequence[str],
    renames: Sequence[str],
    check: bool,
    apply_: bool,
    db: str,
) -> None:
    """Compare dataclasses with the live tables and print the Alembic operations.

    Drift is reported with exit status 0 (1 with --check).

    \b
    Examples:
      entityworks schema diff --dataclass mygame.models:Level --check --db game.db
      entityworks schema diff --dataclass mygame.models:Level --rename note=remark --apply
    """
    from .. import migrate

    if check and apply_:
        raise click.UsageError("--check and --apply exclude each other")
    renamed = migrate.parse_renames(renames)
    store = open_store(db, must_exist=True)
    try:
        _schema_diff(store, tables, dataclasses_, apply_, check, renamed)
    finally:
        store.close()  # its pooled connections would outlive the command in-process


def _schema_diff(
    store: Store,
    tables: Sequence[str],
    dataclasses_: Sequence[str],
    apply_: bool,
    check: bool,
    renamed: dict[str, str],
) -> None:
    from .. import catalog, migrate
    from ..model.schema import table_schema

    classes = (
        [load_class(s) for s in dataclasses_]
        or [catalog.check_catalog_table(t) for t in tables]
        or list(catalog.TABLES.values())
    )
    if apply_:
        names: set[str] = set()
        for cls in classes:
            info = table_schema(cls, store.registry)
            names.update([info.name, *(child.schema.name for child in info.children)])
        for name in sorted(names):
            check_writable_table(name)
    operations = migrate.diff(store, classes, renames=renamed)
    if not operations:
        click.echo("no differences")
        return
    if apply_:  # before any output, so that a refusal is the one line there is
        _refuse_managed(store, names & migrate.table_names(catalog.TABLES.values()))
    for op in operations:
        click.echo(migrate.describe(op))
    if apply_:
        done = migrate.apply(store, classes, operations)  # raises unless every row is kept
        kept = ", ".join(f"{name}: {count}" for name, count in done.rows.items())
        click.echo(f"applied {len(done)} operation(s); rows kept" + (f" ({kept})" if kept else ""))
        return
    click.echo(
        f"drift: {len(operations)} difference(s) between the dataclasses and {display_db(store)}"
    )
    if check:
        click.get_current_context().exit(1)


def _refuse_managed(store: Store, catalog_tables: set[str]) -> None:
    """--apply never changes what Alembic revisions manage: a user's own (a version table
    such as alembic_version) or the catalog's (entityworks_version)."""
    from .. import migrate

    with store.engine.connect() as conn:
        migrate.refuse_if_managed(conn, display_db(store))
        versions = migrate.version_tables(conn)
    if catalog_tables and migrate.VERSION_TABLE in versions:
        raise click.ClickException(
            f"{', '.join(sorted(catalog_tables))}: the catalog's tables change through its "
            f"revisions, not --apply; run 'entityworks migrate --db ...'"
        )


def _schema_class(table_name: str, db: str) -> type:
    """A catalog class by name (no database needed), else a table reflected from ``db``."""
    from .. import catalog

    if table_name in catalog.TABLES:
        return catalog.TABLES[table_name]
    return resolve_table(open_store(db, must_exist=True), table_name)


@click.command()
@click.argument("table_name", metavar="TABLE", shell_complete=complete_table)
@click.option(
    "--dialect",
    "-d",
    default=FILE_BACKEND,
    show_default=True,
    type=click.Choice(list(TITLES)),
)
@click.option(
    "--templates",
    is_flag=True,
    help="Also print the insert/update/upsert/select/delete statement templates.",
)
@db_option
def ddl(table_name: str, dialect: str, templates: bool, db: str) -> None:
    """Print the CREATE TABLE script of TABLE for a SQL dialect (child tables included).

    Statement templates use named placeholders only; no value is ever put into SQL text.

    \b
    Example:
      entityworks ddl maps --dialect postgresql
    """
    from ..sql.scripts import create_script, statement_templates

    cls = _schema_class(table_name, db)
    click.echo(create_script(cls, dialect).rstrip("\n"))
    if templates:
        found = statement_templates(cls, dialect)
        for kind in ("insert", "update", "upsert", "select_by_key", "delete_by_key"):
            text = getattr(found, kind)
            if text:
                click.echo(f"\n-- {kind}\n{text};")


@click.command()
@click.option(
    "--db",
    "--url",
    "db",
    default=DEFAULT_DB,
    envvar="ENTITYWORKS_DB",
    show_default=True,
    callback=check_db,
    help=f"{FILE_TITLE} file path or SQLAlchemy URL.",
)
@click.option(
    "--revision",
    default="head",
    show_default=True,
    help="Target revision: head, an id, +1; with --downgrade an older id, -1 or base.",
)
@click.option(
    "--downgrade",
    is_flag=True,
    help="Go back to an older --revision, dropping what the newer revisions added.",
)
def migrate(db: str, revision: str, downgrade: bool) -> None:
    """Create, upgrade or downgrade the catalog schema through its Alembic revisions.

    A --revision older than the database's is refused without --downgrade (an upgrade to
    it would do nothing).
    """
    if not revision.strip():
        raise click.BadParameter(
            "give a revision: head, an id, or a relative step like +1", param_hint="--revision"
        )
    if downgrade and revision == "head":
        raise click.BadParameter(
            "--downgrade needs an older revision: an id, -1 or base", param_hint="--revision"
        )
    from .. import catalog
    from .. import migrate as migrations

    store = open_store(db)
    before = migrations.current(store)
    if downgrade:
        after = catalog.downgrade_catalog(store, revision)
    else:
        after = catalog.upgrade_catalog(store, revision)
    where = display_db(store)
    if before == after:
        click.echo(f"{where} is at revision {after} (nothing to do)")
    else:
        verb = "downgraded" if downgrade else "upgraded"
        click.echo(f"{where} {verb} from {before or 'empty'} to {after or 'base (no catalog)'}")


@click.group(cls=Group)
def migrations() -> None:
    """Alembic migrations for your own dataclasses (see 'migrations init')."""


@migrations.command("init")
@click.argument("directory", metavar="DIR", type=click.Path(file_okay=False))
@click.option(
    "--model",
    "-m",
    "models",
    multiple=True,
    required=True,
    metavar="MODULE:CLASS",
    help="A dataclass whose table the revisions manage (repeatable).",
)
@click.option(
    "--db",
    "--url",
    "db",
    default=None,
    callback=check_db,
    metavar="URL",
    help="Written to alembic.ini as sqlalchemy.url (never one with a password). "
    "Without it give Alembic -x db=URL or set ENTITYWORKS_DB.",
)
def migrations_init(directory: str, models: Sequence[str], db: str | None) -> None:
    """Write an Alembic environment (alembic.ini, env.py, script.py.mako, versions/) for
    your dataclasses into DIR, which must be new or empty.

    \b
    Example, then the first revision:
      entityworks migrations init migrations --model library:Author --model library:Book
      alembic -c migrations/alembic.ini revision --autogenerate -m first
    """
    from ..migrate.scaffold import init_migrations

    written = init_migrations(directory, models, url=db)
    shown = ", ".join(
        p.name + ("/" if p.suffix == "" and p.name == "versions" else "") for p in written
    )
    ini = Path(directory) / "alembic.ini"
    click.echo(f"wrote {shown} in {directory}")
    click.echo(f'next: alembic -c {ini} revision --autogenerate -m "first revision"')
    click.echo(f"      alembic -c {ini} upgrade head")

"""The XML commands, mirroring :mod:`entityworks.xml`: ``export-xml`` (a table or a DataSet,
XSD beside or inline, or a DiffGram), ``import-xml`` (validated, all rows or none; a DiffGram
is applied) and ``codegen`` (dataclasses from an XSD).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import click

from ..sql.urls import display_db
from ._stores import check_writable_table, complete_table, open_catalog, open_store, resolve_table
from .options import ByteSize, check_db, db_option, parse_where, progress_option
from .output import progress_bar


@click.command("export-xml")
@click.argument(
    "tables", nargs=-1, required=True, metavar="TABLE...", shell_complete=complete_table
)
@click.argument("out", type=click.Path(dir_okay=False, allow_dash=True))
@click.option(
    "--xsd",
    type=click.Path(dir_okay=False),
    help="Where the XSD goes (default: OUT with the suffix .xsd; none for '-').",
)
@click.option(
    "--where",
    "-w",
    "wheres",
    multiple=True,
    metavar="EXPR",
    help="Export only matching rows (as in 'query').",
)
@click.option("--order-by", "-o", multiple=True, metavar="COLUMN", help="Row order.")
@click.option(
    "--dataset",
    metavar="NAME",
    help="Root element / DataSet name (default: as imported, else DocumentElement).",
)
@click.option(
    "--inline-schema",
    is_flag=True,
    help="Write the XSD inside the document (then no .xsd file unless --xsd).",
)
@click.option(
    "--nested/--flat",
    default=None,
    help="Several tables: child rows inside their parent rows, or after them "
    "(default: as imported, else flat).",
)
@click.option(
    "--diffgram", is_flag=True, help="Write a .NET DiffGram (every row current and unchanged)."
)
@progress_option
@db_option
def export_xml(
    tables: Sequence[str],
    out: str,
    xsd: str | None,
    wheres: Sequence[str],
    order_by: Sequence[str],
    dataset: str | None,
    inline_schema: bool,
    nested: bool | None,
    diffgram: bool,
    progress: bool | None,
    db: str,
) -> None:
    """Export a table to XML plus XSD in the .NET DataTable.WriteXml shape.

    Child tables (a map's caves, rooms, corridors) travel in the same document. Several
    tables make one .NET DataSet, with their relations (--dataset NAME, --nested). OUT must
    be a regular file (or nothing yet), or '-' for standard output; either way the document
    appears only once complete (a refused export writes nothing). With '-' no XSD file is
    written unless --xsd FILE; --inline-schema puts the schema in the stream.

    \b
    Examples:
      entityworks export-xml maps maps.xml --db levels.db
      entityworks export-xml customers orders shop.xml --dataset Shop --nested
    """
    from contextlib import ExitStack

    from .._files import check_output_path, is_stdio, stdout_output

    if diffgram and inline_schema:
        raise click.UsageError("a DiffGram carries no schema; drop --inline-schema")
    to_stdout = is_stdio(out)
    if is_stdio(xsd):
        raise click.BadParameter(
            "the XSD needs a file path (standard output carries the XML); "
            "for one stream with its schema use --inline-schema",
            param_hint="--xsd",
        )
    several = len(tables) > 1 or nested is not None or diffgram  # a DataSet
    if several and (wheres or order_by):
        raise click.UsageError(
            "--where and --order-by apply to one table; a DataSet is exported whole"
        )
    xsd_path = (
        Path(xsd) if xsd else None if to_stdout or inline_schema else Path(out).with_suffix(".xsd")
    )
    for path in ([] if to_stdout else [out]) + ([] if xsd_path is None else [xsd_path]):
        check_output_path(path)  # before opening the database
    store = open_store(db, must_exist=True)
    classes = [resolve_table(store, name) for name in tables]
    if not several:  # a table Store.create made with list fields: its child rows come too
        from ..sql.exchange.children import with_child_tables

        classes = [with_child_tables(store, classes[0])]
    schema_note = f" (schema {xsd_path})" if xsd_path is not None else ""
    where_to = f"{'stdout' if to_stdout else out}{schema_note}"
    with ExitStack() as stack:  # standard output gets the document once it is complete
        target: Any = stack.enter_context(stdout_output()) if to_stdout else out
        if several:
            counts = store.export_dataset(
                classes,
                target,
                xsd_path,
                dataset=dataset,
                nested=nested,
                inline_schema=inline_schema,
                diffgram=diffgram,
            )
        else:
            where = [parse_where(w, store.schema(classes[0])) for w in wheres]
            total = store.count(classes[0], where=where)
            with progress_bar(total, "rows", progress) as bar:
                counts = {
                    tables[0]: store.export_xml(
                        classes[0],
                        target,
                        xsd_path,
                        where=where,
                        order_by=list(order_by) or None,
                        dataset=dataset,
                        inline_schema=inline_schema,
                        progress=bar.update,
                    )
                }
    done = ", ".join(f"{n} rows of {t}" for t, n in counts.items())
    click.echo(f"exported {done} to {where_to}", err=to_stdout)


@click.command()
@click.argument("sources", nargs=-1, metavar="FILE.xsd | --db URL [TABLE...]")
@click.option(
    "--db",
    "db",
    default=None,
    callback=check_db,
    help="Write the classes of this database's tables instead (a file path or an "
    "SQLAlchemy URL; only read: a database file is opened read-only).",
)
def codegen(sources: Sequence[str], db: str | None) -> None:
    """Print Python dataclasses for the tables of an XSD, or of an existing database.

    From an XSD (ours or one written by .NET): types, Optional fields, the key, maxLength
    and the XSD spelling .NET needs back are kept; child tables become list fields.
    FILE.xsd may be '-' (standard input).

    With --db: the tables named (default: every table but the internal ones), and those
    their foreign keys refer to, from any database (SQLite, PostgreSQL, MariaDB; made by
    entityworks or not): types from the column types, Optional from nullability, the
    primary key, foreign keys, a string column's length; child tables as entityworks
    makes them become list fields and its companion columns one field. A column whose name
    is no Python identifier gets a field of its own name with column(name=...).

    \b
    Examples:
      entityworks codegen shop.xsd > shop_model.py
      entityworks codegen --db legacy.db > legacy_model.py
      entityworks codegen --db postgresql+psycopg://me@host/shop orders customers
    """
    if db is not None:
        from ..sql.codegen import codegen_from_db
        from ._tables import open_read_only

        store = open_read_only(db)
        try:
            click.echo(codegen_from_db(store, list(sources) or None), nl=False)
        finally:
            store.close()
        return
    if len(sources) != 1:
        raise click.UsageError("give one FILE.xsd, or --db URL (and optionally its TABLEs)")
    from .._files import input_path
    from ..xml.codegen import codegen as generate
    from ..xml.xsdwrite import MAX_XSD_BYTES

    xsd_file = str(  # checked as the argument was when it was FILE.xsd alone
        click.Path(exists=True, dir_okay=False, allow_dash=True).convert(
            sources[0], None, click.get_current_context()
        )
    )
    with input_path(
        xsd_file, max_bytes=MAX_XSD_BYTES, hint="the largest XSD entityworks reads"
    ) as path:
        click.echo(generate(path), nl=False)


@click.command("import-xml")
@click.argument(
    "xml_file", metavar="IN.xml", type=click.Path(exists=True, dir_okay=False, allow_dash=True)
)
@click.option(
    "--xsd",
    type=click.Path(exists=True, dir_okay=False, allow_dash=True),
    help="The XSD to validate against (ours or .NET's; default without --table: "
    "the file's inline schema, else IN.xsd beside IN.xml if there is one).",
)
@click.option(
    "--table",
    "table_name",
    help="Target table (default: the XSD's table); created when missing. The "
    "document keeps the XSD's names; its rows (and child rows, into "
    "TABLE_<field>) go into TABLE. Not for a DataSet or a DiffGram.",
)
@click.option(
    "--max-size",
    type=ByteSize(),
    default="1G",
    show_default=True,
    help="Refuse an input longer than this (K, M, G, T suffixes; 0: no limit).",
)
@progress_option
@db_option
def import_xml(
    xml_file: str,
    xsd: str | None,
    table_name: str | None,
    max_size: int | None,
    progress: bool | None,
    db: str,
) -> None:
    """Validate an XML file against its XSD and insert every row in one transaction.

    Nothing is written when any row is invalid; the error names the row and column, and
    neither the table nor a new database file is left behind. Internal tables
    (entityworks_version, alembic_version, entityworks_schema, sqlite_*, and any table shaped
    like an Alembic version table) are refused, however they are named: --table, the XSD,
    a DataSet's tables or a DiffGram's rows. IN.xml or the XSD may be
    '-' (standard input) or a FIFO: it is read once, up to --max-size, into a private
    temporary file that is removed afterwards. A .NET DiffGram (root diffgr:diffgram) is
    applied to the stored tables instead: inserts, updates and deletes by key, all or none.

    \b
    Examples:
      entityworks import-xml maps.xml --xsd maps.xsd --db copy.db
      gunzip -c maps.xml.gz | entityworks import-xml - --xsd maps.xsd --db copy.db
    """
    from contextlib import ExitStack

    from .._files import input_path, is_stdio
    from ._xmlpaths import xsd_beside

    xsd = xsd if table_name is not None else xsd_beside(xml_file, xsd)  # big.xsd beside
    if is_stdio(xml_file) and is_stdio(xsd):
        raise click.BadParameter(
            "'-' (standard input) can be read only once: give the XML or the XSD as a file",
            param_hint="--xsd",
        )
    if table_name is not None:
        check_writable_table(table_name)
    with ExitStack() as stack:
        xml_path = stack.enter_context(input_path(xml_file, max_bytes=max_size))
        xsd_path = None if xsd is None else stack.enter_context(input_path(xsd, max_bytes=max_size))
        _import_xml(
            xml_path,
            "stdin" if is_stdio(xml_file) else xml_file,
            xsd_path,
            table_name,
            db,
            progress,
        )


def _import_xml(
    xml_file: Path,
    shown: str,
    xsd: Path | None,
    table_name: str | None,
    db: str,
    progress: bool | None = None,
) -> None:
    from .. import catalog
    from ..sql.exchange.xml import import_into, import_store
    from ..xml.diffgram import diffgram_tables, is_diffgram
    from ..xml.xsd import dataclass_for, is_dataset, load_inline_xsd, load_xsd
    from ..xml.xsdwrite import decode_name

    if is_diffgram(xml_file):  # .NET's WriteXml(..., XmlWriteMode.DiffGram): changes
        if table_name is not None:
            raise click.UsageError(
                "--table does not apply to a DiffGram, which changes the "
                "tables its rows name; drop --table"
            )
        for name in sorted(diffgram_tables(xml_file, xsd)):
            check_writable_table(name)
        store = open_store(db, must_exist=True)
        changes = store.import_diffgram(xml_file, xsd)
        done = ", ".join(
            f"{t}: {c.inserted} inserted, {c.updated} updated, "
            f"{c.deleted} deleted, {c.unchanged} unchanged"
            for t, c in changes.items()
        )
        click.echo(f"applied {shown} ({done}) ({display_db(store)})")
        return

    model = load_xsd(xsd) if xsd else load_inline_xsd(xml_file)
    if model is not None:  # every table the XSD names, as the document spells it and decoded
        for name in model.tables:
            check_writable_table(name)
            check_writable_table(decode_name(name))
        if is_dataset(model):  # several related tables
            if table_name is not None:
                names = ", ".join(repr(decode_name(t)) for t in model.tables)
                raise click.UsageError(
                    f"--table names one table, but the XSD describes a DataSet of "
                    f"{len(model.tables)} tables ({names}); drop --table (each table keeps "
                    "its name)"
                )
            store = open_store(db)
            counts = store.import_dataset(xml_file, xsd)
            done = ", ".join(f"{n} rows of {t}" for t, n in counts.items())
            click.echo(f"imported {done} from {shown} ({display_db(store)})")
            return
    if model is None and table_name is None:
        raise click.UsageError(
            "give --xsd (or --table for a table that already exists); the file has no inline schema"
        )
    # The rows go into --table when given (the XSD's table, and its child tables, renamed:
    # the document keeps the XSD's names), else into the XSD's table.
    source = None if model is None else decode_name(model.main_table)
    target = table_name or source
    assert target is not None
    check_writable_table(target)
    renamed = source if source is not None and source != target else None
    children: dict[str, int] = {}
    with progress_bar(None, "rows", progress) as bar:

        def on_rows(count: int, child_rows: Mapping[str, int]) -> None:
            bar.update(count)
            for name, n in child_rows.items():
                children[name] = children.get(name, 0) + n

        if target in catalog.TABLES:  # opening a catalog migrates it: nothing before the data
            count = import_into(
                open_catalog,
                db,
                catalog.TABLES[target],
                xml_file,
                xsd,
                on_rows=on_rows,
                source=renamed,
            )
            store = open_store(db)
        else:
            # no XSD: the table must be there, and the document is read as its own
            store = open_store(db, must_exist=model is None)
            cls = (
                resolve_table(store, target)
                if model is None
                else dataclass_for(model, registry=store.registry, table=target)
            )
            count = import_store(store, cls, xml_file, xsd, on_rows=on_rows, source=renamed)
    more = "".join(f", {n} rows of {t}" for t, n in children.items() if n)
    click.echo(f"imported {count} rows from {shown} into {target}{more} ({display_db(store)})")

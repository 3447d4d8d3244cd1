"""The ``entityworks`` command line: a level catalog, sudoku and entropy tools, XML/Parquet export.

Every command is a thin layer over a library function. ``--db`` takes an SQLite path or any
SQLAlchemy URL (``ENTITYWORKS_DB`` sets the default). Bad input (a missing file, an unknown
table or column, a malformed filter, an invalid puzzle, a bad parameter) ends with one line on
stderr and exit status 2, never a traceback (set ``ENTITYWORKS_TRACEBACK=1`` to see one).
"""

from __future__ import annotations

import csv
import datetime as dt
import decimal
import enum
import io
import json
import os
import re
import sys
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

import click
import numpy as np
import sqlalchemy as sa

from . import catalog
from .errors import EntityworksError, FilterError, UnknownTableError
from .filters import Comparison, col
from .schema import TableSchema, table_schema
from .store import Store

DEFAULT_DB = "entityworks.db"
USER_ERRORS: tuple[type[BaseException], ...] = (
    click.ClickException, EntityworksError, ValueError, OSError, sa.exc.SQLAlchemyError)


# -- errors: one line, exit status 2 ----------------------------------------------------------


def error_message(exc: BaseException) -> str:
    """The one-line text shown for a user error."""
    if isinstance(exc, click.ClickException):
        text = exc.format_message()
        if isinstance(exc, click.UsageError) and exc.ctx is not None:
            text = f"{exc.ctx.command_path}: {text}"
    elif isinstance(exc, sa.exc.SQLAlchemyError):
        orig = getattr(exc, "orig", None)
        text = str(orig if orig is not None else exc).split("\n[SQL:")[0]
    else:
        text = str(exc)
    text = " ".join(text.split()) or type(exc).__name__
    return text


def fail(exc: BaseException) -> NoReturn:
    """Print ``error: <one line>`` on stderr and exit with status 2."""
    click.echo(f"error: {error_message(exc)}", err=True)
    sys.exit(2)


class _Group(click.Group):
    """A group whose ``main`` maps user errors to one stderr line and exit status 2."""

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True,
             **extra: Any) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        try:
            status = super().main(args, prog_name, complete_var, False, **extra)
        except click.exceptions.Abort:
            click.echo("error: aborted", err=True)
            sys.exit(1)
        except USER_ERRORS as exc:
            if os.environ.get("ENTITYWORKS_TRACEBACK"):
                raise
            fail(exc)
        sys.exit(status if isinstance(status, int) else 0)


class _SchemaGroup(_Group):
    """``schema TABLE`` shows a table; ``schema diff`` compares; a table name means ``show``."""

    def resolve_command(self, ctx: click.Context, args: list[str]
                        ) -> tuple[str | None, click.Command | None, list[str]]:
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            args = ["show", *args]
        return super().resolve_command(ctx, args)


# -- shared options and helpers ---------------------------------------------------------------


def check_db(_ctx: Any, _param: Any, value: str | None) -> str | None:
    """Refuse a URL whose dialect is unknown or whose driver is not installed, up front."""
    if value is None or "://" not in value:
        return value
    try:
        url = sa.make_url(value)
        url.get_dialect().import_dbapi()
    except ImportError as exc:
        raise click.BadParameter(f"the driver for {url.drivername!r} is not installed ({exc})",
                                 param_hint="--db") from None
    except sa.exc.ArgumentError as exc:
        raise click.BadParameter(str(exc), param_hint="--db") from None
    return value


def db_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--db", default=DEFAULT_DB, envvar="ENTITYWORKS_DB", show_default=True,
        callback=check_db, help="SQLite file path or SQLAlchemy URL (env: ENTITYWORKS_DB).")(fn)


def progress_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--progress/--no-progress", default=None,
                        help="Show a progress bar (default: when stderr is a terminal).")(fn)


def cores() -> int:
    """CPUs this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def open_store(db: str, *, must_exist: bool = False) -> Store:
    """A Store for ``--db``; with ``must_exist`` a missing SQLite file is an error."""
    store = Store(db)
    path = store.url.database
    if must_exist and store.url.get_backend_name() == "sqlite" and path not in (
            None, "", ":memory:") and not Path(path).exists():
        store.close()
        raise EntityworksError(f"no database at {path}")
    return store


def resolve_table(store: Store, name: str) -> type:
    """The dataclass for table ``name``: the catalog's own class, or one reflected from the
    live table."""
    tables = store.table_names()
    known = catalog.table_class(name)
    if known is not None:
        if name not in tables:
            raise UnknownTableError(f"no table {name!r} in {store.url.database or store!r}; "
                                    f"run 'entityworks migrate' or generate something first")
        return known
    if name not in tables:
        known = ", ".join(sorted(tables)) or "none"
        raise UnknownTableError(f"no table {name!r}; tables are: {known}")
    return store.reflect(name)


_WHERE = re.compile(r"^\s*([^\s=!<>]+)\s*(==|=|!=|<>|>=|<=|>|<)\s*(.*?)\s*$")


def parse_where(text: str, schema: TableSchema) -> Comparison:
    """``"col>=value"`` -> a filter; the value is parsed as the column's type."""
    match = _WHERE.match(text)
    if match is None:
        raise FilterError(f"--where {text!r}: expected COLUMN OP VALUE with OP one of "
                          f"= != < <= > >=, e.g. 'width>=80'")
    name, op, raw = match.groups()
    column = schema.column(name)
    op = {"=": "==", "<>": "!="}.get(op, op)
    if raw.lower() == "null":
        if op not in ("==", "!="):
            raise FilterError(f"--where {text!r}: null only works with = and !=")
        return col(name) == None if op == "==" else col(name) != None  # noqa: E711
    try:
        value = column.info.from_text(raw)
    except (ValueError, TypeError, ArithmeticError) as exc:
        raise FilterError(f"--where {text!r}: {raw!r} is not a valid {column.info.name} "
                          f"for column {name!r} ({exc})") from None
    return Comparison(name, op, value)


def parse_params(items: Sequence[str]) -> dict[str, Any]:
    """``k=v`` pairs; values are JSON when they parse (``3``, ``true``, ``0.5``), else text."""
    params: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"{item!r} is not KEY=VALUE", param_hint="--param")
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        params[key.strip()] = value
    return params


def display(value: Any, *, text: bool = True) -> Any:
    """A value as shown by ``query``: grids and blobs summarised, JSON for containers."""
    if isinstance(value, np.ndarray):
        shape = "x".join(str(n) for n in value.shape[::-1]) if value.ndim == 2 else value.shape
        return f"<ndarray {shape} {value.dtype}>"
    if isinstance(value, bytes | bytearray | memoryview):
        return f"<{len(value)} bytes>"
    if isinstance(value, dict | list | tuple):
        return json.dumps(value, default=str) if text else value
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return str(value)
    if isinstance(value, decimal.Decimal | uuid.UUID):
        return str(value)
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, float) and text:
        return format(value, ".6g")
    return value


def format_rows(columns: list[str], rows: list[tuple[Any, ...]], fmt: str) -> str:
    """Rows as an aligned text table, CSV or JSON (a list of objects)."""
    if fmt == "json":
        data = [{c: display(v, text=False) for c, v in zip(columns, r, strict=True)}
                for r in rows]
        return json.dumps(data, indent=2, default=str, allow_nan=True)
    if fmt == "csv":
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(columns)
        for r in rows:
            writer.writerow(["" if v is None else display(v) if not isinstance(v, float)
                             else repr(v) for v in r])
        return buffer.getvalue().rstrip("\n")
    cells = [[("NULL" if v is None else str(display(v))) for v in r] for r in rows]
    cells = [[c if len(c) <= 60 else c[:57] + "..." for c in r] for r in cells]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip(),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
              for r in cells]
    return "\n".join(lines)


def _bar(total: int | None, unit: str, progress: bool | None) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, unit=unit, disable=None if progress is None else not progress,
                file=sys.stderr, dynamic_ncols=True)


# -- the group -------------------------------------------------------------------------------


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="entityworks")
def cli() -> None:
    """Dataclasses to SQL, XML+XSD and Parquet, with a catalog of generated levels.

    Start with 'entityworks demo'; 'entityworks COMMAND --help' explains each command.
    """


# -- generate / query ------------------------------------------------------------------------


_KINDS_HELP = "\b\nKinds (defaults in brackets):\n" + "\n".join(
    f"  {k.name:<10} {k.help}" for k in catalog.KINDS.values())


@cli.command(epilog=_KINDS_HELP)
@click.argument("kind", type=click.Choice(sorted(catalog.KINDS)), metavar="KIND")
@click.option("--count", "-n", type=click.IntRange(min=1), default=1, show_default=True,
              help="How many maps.")
@click.option("--width", type=click.IntRange(min=1), help="Map width (generator default).")
@click.option("--height", type=click.IntRange(min=1), help="Map height (generator default).")
@click.option("--seed", type=click.IntRange(min=0),
              help="Seed of the first map; map i gets seed+i. Default: a fresh seed per map.")
@click.option("--param", "-p", "params", multiple=True, metavar="KEY=VALUE",
              help="A generator parameter, e.g. -p close_cell_prob=48 (repeatable).")
@click.option("--workers", "-j", type=click.IntRange(min=1), default=cores,
              show_default="the CPU count", help="Worker processes.")
@progress_option
@db_option
def generate(kind: str, count: int, width: int | None, height: int | None, seed: int | None,
             params: Sequence[str], workers: int, progress: bool | None, db: str) -> None:
    """Generate maps into the catalog; every row keeps the seed that rebuilds it.

    Example: entityworks generate caves --count 20 --seed 1 --db levels.db
    """
    values = parse_params(params)
    for name, value in (("width", width), ("height", height)):
        if value is not None:
            values[name] = value
    catalog.check_parameters(kind, values)
    store = catalog.open_catalog(db)
    with _bar(count, "map", progress) as bar:
        stats = catalog.generate_into(store, kind, count, seed=seed, params=values,
                                      workers=workers, progress=bar.update)
    ids = f"ids {stats.ids[0]}-{stats.ids[1]}" if stats.ids else "no ids"
    seeds = (f"seeds {stats.seeds[0]}-{stats.seeds[1]}" if seed is not None
             else "a fresh seed per map, stored")
    click.echo(f"stored {stats.count} {kind} maps in {store.url.database or db} ({ids}, "
               f"{seeds}) in {stats.seconds:.2f} s: {stats.maps_per_second:.1f} maps/s, "
               f"storage {stats.storage_share:.0%} of the time, {workers} worker(s)")


@cli.command()
@click.argument("table_name", metavar="TABLE")
@click.option("--where", "-w", "wheres", multiple=True, metavar="EXPR",
              help="Filter like 'kind=caves' or 'open_ratio>=0.45' (repeatable, all apply).")
@click.option("--order-by", "-o", multiple=True, metavar="COLUMN",
              help="Sort column, '-column' for descending (repeatable).")
@click.option("--limit", type=click.IntRange(min=0), help="At most this many rows.")
@click.option("--offset", type=click.IntRange(min=0), help="Skip this many rows.")
@click.option("--columns", "-c", metavar="A,B,...", help="Only these columns, in this order.")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]),
              default="table", show_default=True)
@db_option
def query(table_name: str, wheres: Sequence[str], order_by: Sequence[str], limit: int | None,
          offset: int | None, columns: str | None, fmt: str, db: str) -> None:
    """Print rows of a table; filters become bound parameters, never SQL text.

    Example: entityworks query maps -w kind=caves -w region_count=1 -o -largest_region
    """
    store = open_store(db, must_exist=True)
    cls = resolve_table(store, table_name)
    schema = store.schema(cls)
    where = [parse_where(w, schema) for w in wheres]
    rows = [r for batch in store.rows(cls, where=where, order_by=list(order_by) or None,
                                      limit=limit, offset=offset) for r in batch]
    names = schema.column_names
    if columns:
        chosen = [c.strip() for c in columns.split(",") if c.strip()]
        picks = [names.index(schema.column(c).name) for c in chosen]
        rows = [tuple(r[i] for i in picks) for r in rows]
        names = chosen
    click.echo(format_rows(names, rows, fmt))


def _load_map(db: str, map_id: int) -> catalog.MapRecord:
    store = open_store(db, must_exist=True)
    resolve_table(store, "maps")
    record = store.get(catalog.MapRecord, map_id)
    if record is None:
        raise EntityworksError(f"no map with id {map_id} in {store.url.database or db}")
    return record


@cli.command()
@click.argument("map_id", type=int)
@click.option("--png", type=click.Path(dir_okay=False), help="Write a PNG here.")
@click.option("--ascii", "ascii_", type=click.Path(dir_okay=False, allow_dash=True),
              help="Write '#'/'.' text here ('-' prints it).")
@click.option("--tiled", type=click.Path(dir_okay=False),
              help="Write a Tiled JSON map here (its tileset PNG goes beside it).")
@click.option("--block", type=click.IntRange(min=1), default=5, show_default=True,
              help="PNG pixels per cell.")
@db_option
def render(map_id: int, png: str | None, ascii_: str | None, tiled: str | None, block: int,
           db: str) -> None:
    """Render a stored map as PNG, ASCII and/or Tiled JSON.

    Example: entityworks render 3 --png cave.png --ascii -
    """
    from generators import render as rd

    if not (png or ascii_ or tiled):
        raise click.UsageError("choose at least one of --png, --ascii, --tiled")
    record = _load_map(db, map_id)
    if png:
        rd.to_png(record.grid, png, block=block)
        click.echo(f"map {map_id} ({record.kind} {record.width}x{record.height}) -> {png}")
    if tiled:
        tiles = rd.write_tiled(record.grid, tiled)
        click.echo(f"map {map_id} -> {tiled} (tileset {tiles})")
    if ascii_ == "-":
        click.echo(rd.to_ascii(record.grid))
    elif ascii_:
        Path(ascii_).write_text(rd.to_ascii(record.grid) + "\n", encoding="utf-8")
        click.echo(f"map {map_id} -> {ascii_}")


@cli.command()
@click.argument("files", nargs=-1, required=True,
                type=click.Path(exists=True, dir_okay=False))
@click.option("--terse", "-t", is_flag=True, help="ent's CSV output (-t).")
@db_option
def entropy(files: Sequence[str], terse: bool, db: str) -> None:
    """Analyse files as ent does, print the reports and store them in the catalog.

    Example: entityworks entropy level.png catalog.db --db reports.db
    """
    store = catalog.open_catalog(db)
    for row, report in catalog.store_entropy(store, list(files)):
        if not terse:
            click.echo(f"== {row.path}: {row.size} bytes, sha256 {row.sha256[:16]}..., "
                       f"entropy_reports id {row.id}")
        click.echo(report.to_ent(terse=terse).rstrip("\n"))
        if not terse:
            click.echo()


@cli.command("export-xml")
@click.argument("table_name", metavar="TABLE")
@click.argument("out", type=click.Path(dir_okay=False))
@click.option("--xsd", type=click.Path(dir_okay=False),
              help="Where the XSD goes (default: OUT with the suffix .xsd).")
@click.option("--where", "-w", "wheres", multiple=True, metavar="EXPR",
              help="Export only matching rows (as in 'query').")
@click.option("--order-by", "-o", multiple=True, metavar="COLUMN", help="Row order.")
@db_option
def export_xml(table_name: str, out: str, xsd: str | None, wheres: Sequence[str],
               order_by: Sequence[str], db: str) -> None:
    """Export a table to XML plus XSD in the .NET DataTable.WriteXml shape.

    Child tables (a map's caves, rooms, corridors) travel in the same document.
    Example: entityworks export-xml maps maps.xml --db levels.db
    """
    store = open_store(db, must_exist=True)
    cls = resolve_table(store, table_name)
    where = [parse_where(w, store.schema(cls)) for w in wheres]
    xsd_path = Path(xsd) if xsd else Path(out).with_suffix(".xsd")
    count = store.export_xml(cls, out, xsd_path, where=where, order_by=list(order_by) or None)
    click.echo(f"exported {count} rows of {table_name} to {out} (schema {xsd_path})")


@cli.command("import-xml")
@click.argument("xml_file", metavar="IN.xml", type=click.Path(exists=True, dir_okay=False))
@click.option("--xsd", type=click.Path(exists=True, dir_okay=False),
              help="The XSD to validate against (ours or one written by .NET).")
@click.option("--table", "table_name",
              help="Target table (default: the XSD's table); created when missing.")
@db_option
def import_xml(xml_file: str, xsd: str | None, table_name: str | None, db: str) -> None:
    """Validate an XML file against its XSD and insert every row in one transaction.

    Nothing is written when any row is invalid; the error names the row and column.
    Example: entityworks import-xml maps.xml --xsd maps.xsd --db copy.db
    """
    from .xsd import read_xsd

    if table_name is None and xsd is None:
        raise click.UsageError("give --xsd (or --table for a table that already exists)")
    cls = read_xsd(xsd) if xsd else None
    name = table_name or cls.__tablename__  # type: ignore[union-attr]
    if name in catalog.TABLES:
        store = catalog.open_catalog(db)
        cls = catalog.TABLES[name]
    else:
        store = open_store(db)
        if cls is None:
            cls = resolve_table(store, name)
    count = store.import_xml(cls, xml_file, xsd)
    click.echo(f"imported {count} rows from {xml_file} into {name} "
               f"({store.url.database or db})")


@cli.command()
@click.argument("table_name", metavar="TABLE")
@click.argument("out", type=click.Path(dir_okay=False))
@click.option("--where", "-w", "wheres", multiple=True, metavar="EXPR",
              help="Convert only matching rows (as in 'query').")
@click.option("--compression", type=click.Choice(["zstd", "snappy", "gzip", "none"]),
              default="zstd", show_default=True)
@db_option
def parquet(table_name: str, out: str, wheres: Sequence[str], compression: str,
            db: str) -> None:
    """Convert a table to Parquet (types from the registry; child rows as nested lists).

    Example: entityworks parquet maps maps.parquet -w kind=caves --db levels.db
    """
    import pyarrow.parquet as pq

    store = open_store(db, must_exist=True)
    cls = resolve_table(store, table_name)
    where = [parse_where(w, store.schema(cls)) for w in wheres]
    table = store.to_arrow(cls, where=where)
    pq.write_table(table, out, compression=compression)
    click.echo(f"wrote {table.num_rows} rows x {table.num_columns} columns of {table_name} "
               f"to {out}")


# -- sudoku ---------------------------------------------------------------------------------


@cli.group(cls=_Group)
def sudoku() -> None:
    """Solve sudoku files (Project Euler 96 or one 81-char puzzle per line)."""


def _read_puzzles(path: str, fmt: str) -> tuple[list[Any], str]:
    from generators import sudoku as sd

    if fmt == "auto":
        with open(path, encoding="utf-8-sig", errors="replace") as fh:
            head = fh.read(1 << 16)  # bounded: a huge one-line file must not be read here
        first = next((line.strip() for line in head.splitlines() if line.strip()), "")
        fmt = "euler" if first.lower().startswith("grid") else "lines"
    entries = sd.read_euler(path) if fmt == "euler" else sd.read_lines(path)
    return entries, fmt


@sudoku.command("solve")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(["auto", "euler", "lines"]), default="auto",
              show_default=True, help="Euler 96 'Grid NN' blocks or one puzzle per line.")
@click.option("--workers", "-j", type=click.IntRange(min=1), default=cores,
              show_default="the CPU count")
@progress_option
@db_option
def sudoku_solve(file: str, fmt: str, workers: int, progress: bool | None, db: str) -> None:
    """Solve every puzzle of FILE and store puzzles and solutions in the catalog.

    A puzzle already stored is skipped (the puzzle text is unique). Example:
    entityworks sudoku solve p096_sudoku.txt --db puzzles.db
    """
    from generators import sudoku as sd

    entries, fmt = _read_puzzles(file, fmt)
    store = catalog.open_catalog(db)
    with _bar(len(entries), "puzzle", progress) as bar:
        done = [0]

        def advance(finished: int, _total: int) -> None:
            bar.update(finished - done[0])
            done[0] = finished

        solutions = sd.solve_many(entries, workers=workers, progress=advance)
    result = catalog.store_sudokus(store, Path(file).name, entries, solutions)
    solved = sum(s is not None for s in solutions)
    several = sum(s is not None and s.unique is False for s in solutions)
    click.echo(f"{len(entries)} puzzles read from {file} ({fmt} format): {solved} solved, "
               f"{several} with several solutions, {len(result.unsolved)} without a solution")
    click.echo(f"{result.stored} stored in {store.url.database or db}, {result.duplicates} "
               f"skipped as already stored or repeated")
    for name in result.unsolved:
        click.echo(f"no solution: {name}")
    if fmt == "euler" and solved == len(entries) and not several:
        answer = sum(s.top_left for s in solutions if s is not None)
        click.echo(f"Euler 96 answer: {answer}")


@sudoku.command("euler96")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--workers", "-j", type=click.IntRange(min=1), default=cores,
              show_default="the CPU count")
def sudoku_euler96(file: str, workers: int) -> None:
    """Print the Project Euler 96 answer for FILE (sum of the top-left 3-digit numbers)."""
    from generators import sudoku as sd

    click.echo(sd.euler96(file, workers=workers))


# -- schema / migrations ----------------------------------------------------------------------


@cli.group(cls=_SchemaGroup)
def schema() -> None:
    """Show a table's schema (schema TABLE) or compare classes with a database (schema diff)."""


@schema.command("show")
@click.argument("table_name", metavar="TABLE")
@db_option
def schema_show(table_name: str, db: str) -> None:
    """Columns of TABLE: Python type, SQL type, nullability, key; child tables too.

    Catalog tables need no database; other tables are reflected from --db.
    """
    if table_name in catalog.TABLES:
        missing = "://" not in db and not Path(db).exists()
        store = Store("sqlite://") if missing else Store(db)
        cls = catalog.TABLES[table_name]
    else:
        store = open_store(db, must_exist=True)
        cls = resolve_table(store, table_name)
    info = table_schema(cls, store.registry)
    sql = store.table(cls)
    click.echo(f"{info.name} ({cls.__qualname__}) on {store.dialect.name}")
    _print_columns(info, sql.metadata, store.dialect)


def _print_columns(info: TableSchema, metadata: sa.MetaData, dialect: sa.Dialect,
                   indent: str = "  ") -> None:
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
        rows.append((c.name, c.info.name, sql_type, " ".join(flags)))
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    for r in rows:
        click.echo(indent + "  ".join(v.ljust(w) for v, w in zip(r[:3], widths, strict=False))
                   + "  " + r[3])
    for child in info.children:
        click.echo(f"{indent}{child.field}: child table {child.schema.name} "
                   f"(key parent_key -> {info.name}.{info.primary_key.name}, position)")  # type: ignore[union-attr]
        _print_columns(child.schema, metadata, dialect, indent + "    ")


def _load_class(spec: str) -> type:
    import importlib

    module_name, _, attr = spec.partition(":")
    if not attr:
        raise click.BadParameter(f"{spec!r} is not MODULE:CLASS", param_hint="--dataclass")
    if os.getcwd() not in sys.path:  # modules next to the user, as with ``python -m``
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise click.BadParameter(f"cannot import {module_name!r}: {exc}",
                                 param_hint="--dataclass") from None
    cls = getattr(module, attr, None)
    if not isinstance(cls, type):
        raise click.BadParameter(f"{module_name!r} has no class {attr!r}",
                                 param_hint="--dataclass")
    return cls


@schema.command("diff")
@click.argument("tables", nargs=-1, metavar="[TABLE]...")
@click.option("--dataclass", "dataclasses_", multiple=True, metavar="MODULE:CLASS",
              help="Compare this dataclass instead of the catalog's (repeatable).")
@click.option("--apply", "apply_", is_flag=True,
              help="Run the data-keeping operations (new table, new column, nullability).")
@db_option
def schema_diff(tables: Sequence[str], dataclasses_: Sequence[str], apply_: bool,
                db: str) -> None:
    """Compare dataclasses with the live tables and print the Alembic operations.

    Example: entityworks schema diff --dataclass mygame.models:Level --apply --db game.db
    """
    from . import migrate

    store = open_store(db, must_exist=True)
    classes = [_load_class(s) for s in dataclasses_] or [
        catalog.check_catalog_table(t) for t in tables] or list(catalog.TABLES.values())
    operations = migrate.diff(store, classes)
    if not operations:
        click.echo("no differences")
        return
    for op in operations:
        click.echo(migrate.describe(op))
    if apply_:
        done = migrate.apply(store, classes, operations)
        click.echo(f"applied {len(done)} operation(s); rows kept")


def _schema_class(table_name: str, db: str) -> type:
    """A catalog class by name (no database needed), else a table reflected from ``db``."""
    if table_name in catalog.TABLES:
        return catalog.TABLES[table_name]
    return resolve_table(open_store(db, must_exist=True), table_name)


@cli.command()
@click.argument("table_name", metavar="TABLE")
@click.option("--dialect", "-d", default="sqlite", show_default=True,
              type=click.Choice(["sqlite", "postgresql", "mysql", "mariadb", "mssql"]))
@click.option("--templates", is_flag=True,
              help="Also print the insert/update/upsert/select/delete statement templates.")
@db_option
def ddl(table_name: str, dialect: str, templates: bool, db: str) -> None:
    """Print the CREATE TABLE script of TABLE for a SQL dialect (child tables included).

    Statement templates use named placeholders only; no value is ever put into SQL text.
    Example: entityworks ddl maps --dialect postgresql
    """
    from .scripts import create_script, statement_templates

    cls = _schema_class(table_name, db)
    click.echo(create_script(cls, dialect).rstrip("\n"))
    if templates:
        found = statement_templates(cls, dialect)
        for kind in ("insert", "update", "upsert", "select_by_key", "delete_by_key"):
            text = getattr(found, kind)
            if text:
                click.echo(f"\n-- {kind}\n{text};")


@cli.command()
@click.option("--db", "--url", "db", default=DEFAULT_DB, envvar="ENTITYWORKS_DB",
              show_default=True, callback=check_db, help="SQLite file path or SQLAlchemy URL.")
@click.option("--revision", default="head", show_default=True, help="Target revision.")
def migrate(db: str, revision: str) -> None:
    """Create or upgrade the catalog schema through its Alembic revisions."""
    from . import migrate as migrations

    store = Store(db)
    before = migrations.current(store)
    after = migrations.upgrade(store, revision)
    where = store.url.render_as_string(hide_password=True)
    if before == after:
        click.echo(f"{where} is at revision {after} (nothing to do)")
    else:
        click.echo(f"{where} upgraded from {before or 'empty'} to {after}")


# -- demo ------------------------------------------------------------------------------------


@cli.command()
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default="entityworks-demo",
              show_default=True, help="Folder for everything the demo writes.")
@click.option("--db", default=None, help="Catalog database (default: OUT/catalog.db, "
                                         "replaced on each run).")
def demo(out_dir: str, db: str | None) -> None:
    """The tour: build a small level catalog and show every output format.

    Generates caves, dungeons and islands, solves a few generated sudokus, writes an entropy
    report, exports a table to XML+XSD, renders a PNG, and prints where everything went.
    """
    from .demo import run_demo

    run_demo(Path(out_dir), db, echo=click.echo)


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point."""
    cli.main(args=list(argv) if argv is not None else None, prog_name="entityworks")


__all__ = ["cli", "error_message", "format_rows", "main", "parse_params", "parse_where"]

"""The ``entityworks`` command line: a level catalog, sudoku and entropy tools, XML/Parquet export.

Every command is a thin layer over a library function. ``--db`` takes an SQLite path or any
SQLAlchemy URL (``ENTITYWORKS_DB`` sets the default). Bad input (a missing file, an unknown
table or column, a malformed filter, an invalid puzzle, a bad parameter) ends with one line on
stderr and exit status 2, never a traceback (set ``ENTITYWORKS_TRACEBACK=1`` to see one);
Ctrl-C ends with ``error: aborted`` and status 1. No output shows a password: databases are
named through :func:`entityworks.sql.urls.display_db` and every error text through ``redact``.

Start-up cost: this module imports only click, the standard library and the light modules
``errors``, ``kinds`` and ``urls``, so ``--help`` and ``--version`` load nothing heavy. A
command imports what it needs inside its function body::

    @cli.command()
    def mycommand(db: str) -> None:
        from ..sql.store import Store            # SQLAlchemy, NumPy: only when the command runs
        import pyarrow.parquet as pq        # likewise pandas, pyarrow, scipy, PIL, lxml...

and the shared helpers below do the same (``open_store``, ``resolve_table``). Type hints name
heavy types as strings under ``TYPE_CHECKING``. ``tests/entityworks/test_cli_startup.py``
fails when ``import entityworks.cli`` pulls in pandas, pyarrow, scipy, PIL, lxml, alembic,
numba, SQLAlchemy or NumPy.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NoReturn

import click

from .. import __version__
from ..catalog.kinds import KINDS
from ..errors import EntityworksError, FilterError, UnknownTableError
from ..sql.urls import display_db, redact, remember_password

if TYPE_CHECKING:
    import sqlalchemy as sa

    from ..catalog import MapRecord
    from ..model.schema import TableSchema
    from ..sql.filters import Comparison
    from ..sql.store import Store

DEFAULT_DB = "entityworks.db"
#: The Parquet codecs ``entityworks parquet --compression`` offers.
_Compression = Literal["zstd", "snappy", "gzip", "none"]
#: Tables the command line never writes into: the catalog's revision table, Alembic's default
#: one and SQLite's own (``sqlite_sequence``, ``sqlite_stat1``...).
INTERNAL_TABLES = ("entityworks_version", "alembic_version", "entityworks_schema")
INTERNAL_PREFIXES = ("sqlite_",)


# -- errors: one line, exit status 2 ----------------------------------------------------------


class Aborted(BaseException):
    """Ctrl-C inside a command, carried past click's own handler to ``main``."""


def _sa_error() -> tuple[type[BaseException], ...]:
    sa_exc = sys.modules.get("sqlalchemy.exc")
    return (sa_exc.SQLAlchemyError,) if sa_exc is not None else ()


def _dbapi_error() -> tuple[type[BaseException], ...]:
    sqlite3 = sys.modules.get("sqlite3")
    return (sqlite3.Error,) if sqlite3 is not None else ()


def is_user_error(exc: BaseException) -> bool:
    """True for what bad input causes (exit 2); anything else is a bug (exit 1)."""
    return isinstance(exc, (click.ClickException, EntityworksError, ValueError, OSError,
                            RecursionError, MemoryError, *_sa_error(), *_dbapi_error()))


def error_message(exc: BaseException) -> str:
    """The one-line text shown for a user error, passwords removed."""
    if isinstance(exc, click.ClickException):
        text = exc.format_message()
        if isinstance(exc, click.UsageError) and exc.ctx is not None:
            text = f"{exc.ctx.command_path}: {text}"
    elif _sa_error() and isinstance(exc, _sa_error()):
        orig = getattr(exc, "orig", None)
        text = str(orig if orig is not None else exc).split("\n[SQL:")[0]
        text = text.split("\n(Background on this error")[0]
    elif isinstance(exc, RecursionError):
        text = "input nested too deeply to process"
    elif isinstance(exc, MemoryError):
        text = f"not enough memory for this input{': ' + str(exc) if str(exc) else ''}"
    else:
        text = str(exc)
    text = " ".join(text.split()) or type(exc).__name__
    return redact(text)


def fail(exc: BaseException) -> NoReturn:
    """Print ``error: <one line>`` on stderr and exit with status 2 (1 for a bug)."""
    if is_user_error(exc):
        click.echo(f"error: {error_message(exc)}", err=True)
        sys.exit(2)
    text = redact(" ".join(str(exc).split()))
    click.echo(f"error: unexpected {type(exc).__name__}{': ' + text if text else ''} "
               f"(a bug: please report it; ENTITYWORKS_TRACEBACK=1 shows the traceback)",
               err=True)
    sys.exit(1)


def aborted() -> NoReturn:
    """Ctrl-C: one line and status 1; further Ctrl-C while the process ends are ignored."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    click.echo("error: aborted", err=True)
    sys.exit(1)


#: click >= 8.2 raises this for a group called without a command (older ones print the help)
_NO_ARGS_IS_HELP: tuple[type[click.UsageError], ...] = tuple(
    c for c in [getattr(click.exceptions, "NoArgsIsHelpError", None)] if c is not None)


class _Group(click.Group):
    """A group whose ``main`` maps user errors to one stderr line and exit status 2, Ctrl-C to
    ``error: aborted`` and status 1 (click's own ``main`` would add a blank line)."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:  # click would print a blank line first
            raise Aborted from None

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True,
             **extra: Any) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        args = sys.argv[1:] if args is None else list(args)
        prog_name = prog_name or "entityworks"
        status = 0
        try:
            self._main_shell_completion(extra, prog_name, complete_var)
            try:
                with self.make_context(prog_name, args, **extra) as ctx:
                    self.invoke(ctx)
            except click.exceptions.Exit as done:  # --help, --version, ctx.exit()
                status = done.exit_code
        except _NO_ARGS_IS_HELP as shown:  # a bare group: its help, as with --help
            click.echo(shown.ctx.get_help() if shown.ctx is not None else shown.message)
            sys.exit(0)
        except (Aborted, KeyboardInterrupt, EOFError, click.exceptions.Abort):
            aborted()
        except BrokenPipeError:  # e.g. 'entityworks query ... | head': the reader left
            sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - nothing more to report
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115
            sys.exit(1)
        except Exception as exc:
            if os.environ.get("ENTITYWORKS_TRACEBACK"):
                raise
            fail(exc)
        sys.exit(status)


class _SchemaGroup(_Group):
    """``schema TABLE`` shows a table; ``schema diff`` compares; a table name means ``show``."""

    def resolve_command(self, ctx: click.Context, args: list[str]
                        ) -> tuple[str | None, click.Command | None, list[str]]:
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            args = ["show", *args]
        return super().resolve_command(ctx, args)


# -- shared options and helpers ---------------------------------------------------------------

#: Drivers to suggest when a URL names a dialect without one (or with one not installed).
SUGGESTED_DRIVERS = {"mysql": "mysql+pymysql", "mariadb": "mariadb+pymysql",
                     "postgresql": "postgresql+psycopg", "postgres": "postgresql+psycopg"}


def check_db(_ctx: Any, _param: Any, value: str | None) -> str | None:
    """Refuse a URL whose dialect is unknown or whose driver is not installed, up front."""
    if value is None or "://" not in value:
        return value
    remember_password(value)
    import sqlalchemy as sa

    try:
        url = sa.make_url(value)
        url.get_dialect().import_dbapi()
    except ImportError as exc:
        hint = ""
        scheme = value.partition("://")[0]
        better = SUGGESTED_DRIVERS.get(scheme.partition("+")[0])
        if better and better != scheme:
            hint = f"; use {better}://... (the extra entityworks[{_extra(better)}] installs it)"
        raise click.BadParameter(f"the driver for {scheme!r} is not installed ({exc}){hint}",
                                 param_hint="--db") from None
    except (sa.exc.ArgumentError, ValueError) as exc:
        raise click.BadParameter(redact(str(exc)), param_hint="--db") from None
    _check_charset(url)
    return value


def _extra(driver: str) -> str:
    return "postgres" if driver.startswith("postgres") else "mariadb"


def _check_charset(url: sa.URL) -> None:
    """``?charset=`` of a MySQL/MariaDB URL must name a character set the driver knows."""
    if url.get_backend_name() not in ("mysql", "mariadb") or "charset" not in url.query:
        return
    charset = url.query["charset"]
    names = [charset] if isinstance(charset, str) else list(charset)
    if url.get_driver_name() == "pymysql":
        from pymysql.charset import charset_by_name

        for name in names:
            try:
                known = charset_by_name(name) is not None
            except (KeyError, AttributeError):
                known = False
            if not known:
                raise click.BadParameter(f"unknown MySQL character set {name!r} in ?charset= "
                                         f"(entityworks uses utf8mb4 when none is given)",
                                         param_hint="--db")


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


def sqlite_path(db: str) -> Path | None:
    """The file of an SQLite ``--db`` (None for a server or an in-memory database)."""
    if "://" not in db:
        return Path(db) if db not in ("", ":memory:") else None
    if not db.startswith("sqlite"):
        return None
    from sqlalchemy import make_url

    database = make_url(db).database
    return Path(database) if database not in (None, "", ":memory:") else None


def open_store(db: str, *, must_exist: bool = False) -> Store:
    """A Store for ``--db``; with ``must_exist`` a missing SQLite file is an error."""
    path = sqlite_path(db)
    if must_exist and path is not None and not path.exists():
        raise EntityworksError(f"no database at {path}")
    if path is not None and path.exists() and not path.is_file():
        raise EntityworksError(f"{path} is not a database file")
    from ..sql.store import Store

    return Store(db)


def open_catalog(db: str) -> Store:
    """The catalog at ``--db`` (created or upgraded): call it only once the input is known to
    be good, so that a refused command leaves no new database behind."""
    from .. import catalog

    return catalog.open_catalog(open_store(db))


def check_writable_table(name: str) -> None:
    """Refuse writing into an internal table (schema revisions, SQLite's own tables)."""
    if name.lower() in INTERNAL_TABLES or name.lower().startswith(INTERNAL_PREFIXES):
        raise EntityworksError(f"{name!r} is an internal table; entityworks does not write "
                               f"into it (internal: {', '.join(INTERNAL_TABLES)}, sqlite_*)")


def resolve_table(store: Store, name: str) -> type:
    """The dataclass for table ``name``: the catalog's own class, or one reflected from the
    live table."""
    from .. import catalog

    tables = store.table_names()
    known = catalog.table_class(name)
    if known is not None:
        if name not in tables:
            raise UnknownTableError(f"no table {name!r} in {display_db(store)}; "
                                    f"run 'entityworks migrate' or generate something first")
        return known
    if name not in tables:
        names = ", ".join(sorted(tables)) or "none"
        raise UnknownTableError(f"no table {name!r}; tables are: {names}")
    return store.reflect(name)


_WHERE = re.compile(r"^\s*([^\s=!<>]+)\s*(==|=|!=|<>|>=|<=|>|<)\s*(.*?)\s*$")


def parse_where(text: str, schema: TableSchema) -> Comparison:
    """``"col>=value"`` -> a filter; the value is parsed as the column's type."""
    from ..sql.filters import Comparison, col

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
    except RecursionError:
        raise FilterError(f"--where for column {name!r}: the value is nested too deeply"
                          ) from None
    except (ValueError, TypeError, ArithmeticError) as exc:
        raise FilterError(f"--where {text!r}: {raw!r} is not a valid {column.info.name} "
                          f"for column {name!r} ({exc})") from None
    return Comparison(name, op, value)


def parse_params(items: Sequence[str]) -> dict[str, Any]:
    """``k=v`` pairs; values are JSON when they parse (``3``, ``true``, ``0.5``), else text."""
    import json

    params: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"{item!r} is not KEY=VALUE", param_hint="--param")
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        except RecursionError:
            raise click.BadParameter(f"the value of {key.strip()!r} is nested too deeply",
                                     param_hint="--param") from None
        params[key.strip()] = value
    return params


def display(value: Any, *, text: bool = True) -> Any:
    """A value as shown by ``query``: grids and blobs summarised, JSON for containers."""
    import datetime as dt
    import decimal
    import enum
    import uuid

    np = sys.modules.get("numpy")
    if np is not None and isinstance(value, np.ndarray):
        shape = "x".join(str(n) for n in value.shape[::-1]) if value.ndim == 2 else value.shape
        return f"<ndarray {shape} {value.dtype}>"
    if isinstance(value, bytes | bytearray | memoryview):
        return f"<{len(value)} bytes>"
    if isinstance(value, dict | list | tuple):
        from .jsonout import dumps

        return dumps(value) if text else value
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


def format_rows(columns: list[str], rows: list[tuple[Any, ...]], fmt: str, *,
                arrays: str = "lists") -> str:
    """Rows as an aligned text table, CSV, JSON (an array of objects, one per line) or JSON
    Lines; JSON in the standard forms of :mod:`entityworks.cli.jsonout`."""
    if fmt in ("json", "jsonl"):
        from .jsonout import rows_json

        return rows_json(columns, rows, arrays=arrays, lines=fmt == "jsonl")
    if fmt == "csv":
        import csv
        import io

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
@click.version_option(__version__, package_name="entityworks")
def cli() -> None:
    """Dataclasses to SQL, XML+XSD and Parquet, with a catalog of generated levels.

    Start with 'entityworks demo'; 'entityworks COMMAND --help' explains each command.
    """


# -- generate / query ------------------------------------------------------------------------


_KINDS_HELP = "\b\nKinds (defaults in brackets):\n" + "\n".join(
    f"  {k.name:<10} {k.help}" for k in KINDS.values())


@cli.command(epilog=_KINDS_HELP)
@click.argument("kind", type=click.Choice(sorted(KINDS)), metavar="KIND")
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
@click.option("--cluster", metavar="ADDRESS",
              help="Generate on this Dask scheduler (tcp://host:8786) instead of local "
                   "processes; this process stores the maps (needs entityworks[dask]).")
@click.option("--refuse-short", is_flag=True,
              help="Store nothing and fail if any build falls short (a dungeon with fewer "
                   "rooms than asked or a split floor).")
@progress_option
@db_option
def generate(kind: str, count: int, width: int | None, height: int | None, seed: int | None,
             params: Sequence[str], workers: int, cluster: str | None, refuse_short: bool,
             progress: bool | None, db: str) -> None:
    """Generate maps into the catalog; every row keeps the seed that rebuilds it.

    A map has at most 4096x4096 cells. Nothing is created when a parameter is refused.
    Each dungeon row records its build's outcome (build_success, rooms_asked, rooms_built,
    connected), and a line sums them up; --refuse-short refuses the whole batch instead.
    Example: entityworks generate caves --count 20 --seed 1 --db levels.db
    """
    from .. import catalog

    values = parse_params(params)
    for name, value in (("width", width), ("height", height)):
        if value is not None:
            values[name] = value
    catalog.check_parameters(kind, values)
    opened: list[Store] = []

    def open_when_first_map_is_built() -> Store:  # a bad value fails before this
        opened.append(open_catalog(db))
        return opened[0]

    client = _cluster_client(cluster)
    try:
        with _bar(count, "map", progress) as bar:
            stats = catalog.generate_into(open_when_first_map_is_built, kind, count, seed=seed,
                                          params=values, workers=workers, progress=bar.update,
                                          client=client, refuse_short=refuse_short)
    except catalog.ShortBuild as exc:
        raise click.ClickException(f"{exc} (--refuse-short)") from None
    else:
        where = (f"on {cluster} ({sum(client.nthreads().values())} worker thread(s))"
                 if client is not None else f"{workers} worker(s)")
    finally:
        if client is not None:
            client.close()
    ids = f"ids {stats.ids[0]}-{stats.ids[1]}" if stats.ids else "no ids"
    seeds = (f"seeds {stats.seeds[0]}-{stats.seeds[1]}" if seed is not None and stats.seeds
             else "a fresh seed per map, stored")
    click.echo(f"stored {stats.count} {kind} maps in {display_db(opened[0] if opened else db)} "
               f"({ids}, {seeds}) in {stats.seconds:.2f} s: {stats.maps_per_second:.1f} maps/s, "
               f"storage {stats.storage_share:.0%} of the time, {where}")
    if stats.builds is not None:
        click.echo(f"{kind} builds: {stats.builds}")


def _cluster_client(address: str | None) -> Any:
    """A Dask client for ``--cluster`` (dask is imported only here), or None."""
    if address is None:
        return None
    from ..catalog.cluster import connect

    try:
        return connect(address)
    except RuntimeError as exc:
        raise click.UsageError(str(exc)) from None


@cli.command()
@click.argument("table_name", metavar="TABLE")
@click.option("--where", "-w", "wheres", multiple=True, metavar="EXPR",
              help="Filter like 'kind=caves' or 'open_ratio>=0.45' (repeatable, all apply).")
@click.option("--order-by", "-o", multiple=True, metavar="COLUMN",
              help="Sort column, '-column' for descending (repeatable).")
@click.option("--limit", type=click.IntRange(min=0), help="At most this many rows.")
@click.option("--offset", type=click.IntRange(min=0), help="Skip this many rows.")
@click.option("--columns", "-c", metavar="A,B,...", help="Only these columns, in this order.")
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json", "jsonl"]),
              default="table", show_default=True,
              help="json: an array of objects, one per line; jsonl: one object per line.")
@click.option("--arrays", type=click.Choice(["lists", "base64"]), default="lists",
              show_default=True,
              help="JSON form of grids: nested lists (grid[y][x]), or base64 of the C-order "
                   "bytes with dtype and shape.")
@db_option
def query(table_name: str, wheres: Sequence[str], order_by: Sequence[str], limit: int | None,
          offset: int | None, columns: str | None, fmt: str, arrays: str, db: str) -> None:
    """Print rows of a table; filters become bound parameters, never SQL text.

    JSON output is strict (json.loads, jq): grids as nested lists (or --arrays base64),
    NaN and infinities as the strings "NaN", "INF", "-INF", Decimals, dates, times,
    durations, UUIDs and bytes as their XML text (bytes in base64).
    Example: entityworks query maps -w kind=caves -w region_count=1 -o -largest_region
    Example: entityworks query maps --format json -c id,grid --limit 1 | jq '.[0].grid[0]'
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
    click.echo(format_rows(names, rows, fmt, arrays=arrays))


def _load_map(db: str, map_id: int) -> MapRecord:
    from ..catalog import MapRecord

    store = open_store(db, must_exist=True)
    resolve_table(store, "maps")
    record = store.get(MapRecord, map_id)
    if record is None:
        raise EntityworksError(f"no map with id {map_id} in {display_db(store)}")
    return record


#: Largest PNG ``render`` writes, in pixels (width x block by height x block).
MAX_PNG_PIXELS = 100_000_000


@cli.command()
@click.argument("map_id", type=int)
@click.option("--png", type=click.Path(dir_okay=False, allow_dash=True),
              help="Write a PNG here ('-': standard output).")
@click.option("--ascii", "ascii_", type=click.Path(dir_okay=False, allow_dash=True),
              help="Write '#'/'.' text here ('-' prints it).")
@click.option("--tiled", type=click.Path(dir_okay=False),
              help="Write a Tiled JSON map here (its tileset PNG goes beside it, so this "
                   "needs a file path).")
@click.option("--block", type=click.IntRange(min=1, max=1024), default=5, show_default=True,
              help="PNG pixels per cell (the PNG may have at most 100 million pixels).")
@db_option
def render(map_id: int, png: str | None, ascii_: str | None, tiled: str | None, block: int,
           db: str) -> None:
    """Render a stored map as PNG, ASCII and/or Tiled JSON.

    Every file appears whole or not at all. One of --png and --ascii may be '-' (standard
    output); the other messages then go to stderr.
    Example: entityworks render 3 --png cave.png --ascii -
    """
    from ..files import check_output_path, is_stdio

    if not (png or ascii_ or tiled):
        raise click.UsageError("choose at least one of --png, --ascii, --tiled")
    if is_stdio(png) and is_stdio(ascii_):
        raise click.UsageError("only one of --png and --ascii can be '-' (standard output)")
    if is_stdio(tiled):
        raise click.BadParameter("a Tiled map needs a file path: its tileset PNG is written "
                                 "beside it", param_hint="--tiled")
    for path in (png, ascii_, tiled, tiled and _tileset_path(tiled)):
        if path and not is_stdio(path):
            check_output_path(path)  # before reading the map
    record = _load_map(db, map_id)
    points = [(p.x, p.y) for p in record.placements]
    if png:
        pixels = record.width * block * record.height * block
        if pixels > MAX_PNG_PIXELS:
            raise click.BadParameter(
                f"a {record.width}x{record.height} map at {block} pixels per cell makes a "
                f"{record.width * block}x{record.height * block} PNG ({pixels:,} pixels), more "
                f"than {MAX_PNG_PIXELS:,}; use a smaller --block", param_hint="--block")
    from generators.maps import render as rd

    from ..files import open_output

    status = is_stdio(png)  # messages to stderr when the PNG takes standard output
    if png:
        with open_output(png) as f:
            rd.to_png(record.grid, f, block=block, placements=points)
        shown = "stdout" if is_stdio(png) else png
        click.echo(f"map {map_id} ({record.kind} {record.width}x{record.height}) -> {shown}",
                   err=status)
    if tiled:
        _write_tiled(rd, record.grid, tiled)
        click.echo(f"map {map_id} -> {tiled} (tileset {_tileset_path(tiled)})", err=status)
    marks = {(p.x, p.y): PLACEMENT_MARKS.get(p.label, "*") for p in record.placements}
    if ascii_ == "-":
        click.echo(rd.to_ascii(record.grid, marks))
    elif ascii_:
        with open_output(ascii_) as f:
            f.write((rd.to_ascii(record.grid, marks) + "\n").encode("utf-8"))
        click.echo(f"map {map_id} -> {ascii_}", err=status)


def _tileset_path(tiled: str) -> Path:
    target = Path(tiled)
    return target.with_name(target.stem + "_tiles.png")


def _write_tiled(rd: Any, grid: Any, tiled: str, tile_size: int = 16) -> None:
    """The Tiled JSON and its tileset PNG, both through ``files``: both or neither."""
    import io
    import json
    from contextlib import ExitStack

    from ..files import atomic_output

    image = _tileset_path(tiled)
    document = rd.to_tiled_json(grid, tile_size, image.name)
    picture = io.BytesIO()
    rd.tileset_image(tile_size).save(picture, format="PNG")
    with ExitStack() as stack:
        png_file = stack.enter_context(atomic_output(image))
        json_file = stack.enter_context(atomic_output(tiled))
        png_file.write(picture.getvalue())
        json_file.write(json.dumps(document, separators=(",", ":")).encode("utf-8"))


if TYPE_CHECKING:
    _IntParam = click.ParamType[int | None]
else:  # ParamType is generic from click 8.3 on; 8.2 cannot subscript it
    _IntParam = click.ParamType


class ByteSize(_IntParam):
    """A size in bytes: ``1048576``, ``512K``, ``100M``, ``4G``, ``1T`` (powers of 1024);
    ``0`` means no limit (None)."""

    name = "SIZE"
    _UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> int | None:
        if value is None or isinstance(value, int):
            return value or None
        match = re.fullmatch(r"\s*(\d{1,15})\s*([KMGT]?)(?:i?B)?\s*", str(value), re.IGNORECASE)
        if match is None:
            self.fail(f"{value!r} is not a size like 1048576, 512K, 100M or 4G", param, ctx)
        number = int(match.group(1)) * self._UNITS[match.group(2).upper()]
        return number or None


@cli.command()
@click.argument("files", nargs=-1, required=True,
                type=click.Path(exists=True, dir_okay=False, allow_dash=True))
@click.option("--terse", "-t", is_flag=True, help="ent's CSV output (-t).")
@click.option("--max-size", type=ByteSize(), default="1G", show_default=True,
              help="Refuse an input longer than this (K, M, G, T suffixes; 0: no limit).")
@db_option
def entropy(files: Sequence[str], terse: bool, max_size: int | None, db: str) -> None:
    """Analyse files as ent does, print the reports and store them in the catalog.

    Each input is read exactly once, so the stored SHA-256 always belongs to the bytes the
    figures describe; FIFOs, devices and '-' (standard input) are read as streams up to
    --max-size. Nothing is stored unless every input was read.
    Example: entityworks entropy level.png catalog.db --db reports.db
    """
    from .. import catalog

    if list(files).count("-") > 1:
        raise click.BadParameter("'-' (standard input) can be read only once",
                                 param_hint="FILES")
    pairs = []
    for file in files:
        if file == "-":
            pairs.append(catalog.analyse_entropy(sys.stdin.buffer, name="<stdin>",
                                                 max_bytes=max_size))
        else:
            pairs.append(catalog.analyse_entropy(file, max_bytes=max_size))
    store = open_catalog(db)
    store.insert_many([row for row, _ in pairs])
    for row, report in pairs:
        if not terse:
            click.echo(f"== {row.path}: {row.size} bytes, sha256 {row.sha256[:16]}..., "
                       f"entropy_reports id {row.id}")
        click.echo(report.to_ent(terse=terse).rstrip("\n"))
        if not terse:
            click.echo()


@cli.command("export-xml")
@click.argument("tables", nargs=-1, required=True, metavar="TABLE...")
@click.argument("out", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--xsd", type=click.Path(dir_okay=False),
              help="Where the XSD goes (default: OUT with the suffix .xsd; none for '-').")
@click.option("--where", "-w", "wheres", multiple=True, metavar="EXPR",
              help="Export only matching rows (as in 'query').")
@click.option("--order-by", "-o", multiple=True, metavar="COLUMN", help="Row order.")
@click.option("--dataset", metavar="NAME",
              help="Root element / DataSet name (default: as imported, else DocumentElement).")
@click.option("--inline-schema", is_flag=True,
              help="Write the XSD inside the document (then no .xsd file unless --xsd).")
@click.option("--nested/--flat", default=None,
              help="Several tables: child rows inside their parent rows, or after them "
                   "(default: as imported, else flat).")
@click.option("--diffgram", is_flag=True,
              help="Write a .NET DiffGram (every row current and unchanged).")
@db_option
def export_xml(tables: Sequence[str], out: str, xsd: str | None, wheres: Sequence[str],
               order_by: Sequence[str], dataset: str | None, inline_schema: bool,
               nested: bool | None, diffgram: bool, db: str) -> None:
    """Export a table to XML plus XSD in the .NET DataTable.WriteXml shape.

    Child tables (a map's caves, rooms, corridors) travel in the same document. Several
    tables make one .NET DataSet, with their relations (--dataset NAME, --nested). OUT must
    be a regular file (or nothing yet), or '-' for standard output; either way the document
    appears only once complete (a refused export writes nothing). With '-' no XSD file is
    written unless --xsd FILE; --inline-schema puts the schema in the stream.
    Example: entityworks export-xml maps maps.xml --db levels.db
    Example: entityworks export-xml customers orders shop.xml --dataset Shop --nested
    """
    from contextlib import ExitStack

    from ..files import check_output_path, is_stdio, stdout_output

    if diffgram and inline_schema:
        raise click.UsageError("a DiffGram carries no schema; drop --inline-schema")
    to_stdout = is_stdio(out)
    if is_stdio(xsd):
        raise click.BadParameter("the XSD needs a file path (standard output carries the XML); "
                                 "for one stream with its schema use --inline-schema",
                                 param_hint="--xsd")
    several = len(tables) > 1 or nested is not None or diffgram  # a DataSet
    if several and (wheres or order_by):
        raise click.UsageError("--where and --order-by apply to one table; a DataSet "
                               "is exported whole")
    xsd_path = (Path(xsd) if xsd else None if to_stdout or inline_schema
                else Path(out).with_suffix(".xsd"))
    for path in ([] if to_stdout else [out]) + ([] if xsd_path is None else [xsd_path]):
        check_output_path(path)  # before opening the database
    store = open_store(db, must_exist=True)
    classes = [resolve_table(store, name) for name in tables]
    schema_note = f" (schema {xsd_path})" if xsd_path is not None else ""
    where_to = f"{'stdout' if to_stdout else out}{schema_note}"
    with ExitStack() as stack:  # standard output gets the document once it is complete
        target: Any = stack.enter_context(stdout_output()) if to_stdout else out
        if several:
            counts = store.export_dataset(classes, target, xsd_path, dataset=dataset,
                                          nested=nested, inline_schema=inline_schema,
                                          diffgram=diffgram)
        else:
            where = [parse_where(w, store.schema(classes[0])) for w in wheres]
            counts = {tables[0]: store.export_xml(
                classes[0], target, xsd_path, where=where, order_by=list(order_by) or None,
                dataset=dataset, inline_schema=inline_schema)}
    done = ", ".join(f"{n} rows of {t}" for t, n in counts.items())
    click.echo(f"exported {done} to {where_to}", err=to_stdout)


@cli.command()
@click.argument("xsd_file", metavar="FILE.xsd",
                type=click.Path(exists=True, dir_okay=False, allow_dash=True))
def codegen(xsd_file: str) -> None:
    """Print Python dataclasses for the tables of an XSD (ours or one written by .NET).

    Types, Optional fields, the key, maxLength and the XSD spelling .NET needs back are kept;
    child tables become list fields. FILE.xsd may be '-' (standard input).
    Example: entityworks codegen shop.xsd > shop_model.py
    """
    from ..files import input_path
    from ..xml.codegen import codegen as generate
    from ..xml.xsd import MAX_XSD_BYTES

    with input_path(xsd_file, max_bytes=MAX_XSD_BYTES,
                    hint="the largest XSD entityworks reads") as path:
        click.echo(generate(path), nl=False)


@cli.command("import-xml")
@click.argument("xml_file", metavar="IN.xml",
                type=click.Path(exists=True, dir_okay=False, allow_dash=True))
@click.option("--xsd", type=click.Path(exists=True, dir_okay=False, allow_dash=True),
              help="The XSD to validate against (ours or .NET's; default: the file's "
                   "inline schema).")
@click.option("--table", "table_name",
              help="Target table (default: the XSD's table); created when missing.")
@click.option("--max-size", type=ByteSize(), default="1G", show_default=True,
              help="Refuse an input longer than this (K, M, G, T suffixes; 0: no limit).")
@db_option
def import_xml(xml_file: str, xsd: str | None, table_name: str | None, max_size: int | None,
               db: str) -> None:
    """Validate an XML file against its XSD and insert every row in one transaction.

    Nothing is written when any row is invalid; the error names the row and column, and
    neither the table nor a new database file is left behind. Internal tables
    (entityworks_version, alembic_version, sqlite_*) are refused. IN.xml or the XSD may be
    '-' (standard input) or a FIFO: it is read once, up to --max-size, into a private
    temporary file that is removed afterwards. A .NET DiffGram (root diffgr:diffgram) is
    applied to the stored tables instead: inserts, updates and deletes by key, all or none.
    Example: entityworks import-xml maps.xml --xsd maps.xsd --db copy.db
    Example: gunzip -c maps.xml.gz | entityworks import-xml - --xsd maps.xsd --db copy.db
    """
    from contextlib import ExitStack

    from ..files import input_path, is_stdio

    if is_stdio(xml_file) and is_stdio(xsd):
        raise click.BadParameter("'-' (standard input) can be read only once: give the XML "
                                 "or the XSD as a file", param_hint="--xsd")
    if table_name is not None:
        check_writable_table(table_name)
    with ExitStack() as stack:
        xml_path = stack.enter_context(input_path(xml_file, max_bytes=max_size))
        xsd_path = None if xsd is None else stack.enter_context(
            input_path(xsd, max_bytes=max_size))
        _import_xml(xml_path, "stdin" if is_stdio(xml_file) else xml_file, xsd_path,
                    table_name, db)


def _import_xml(xml_file: Path, shown: str, xsd: Path | None, table_name: str | None,
                db: str) -> None:
    from .. import catalog
    from ..xml.table import import_into
    from ..xml.xsd import read_inline_xsd, read_xsd

    if table_name is None:
        from ..xml.dataset import is_dataset
        from ..xml.diffgram import diffgram_tables, is_diffgram
        from ..xml.xsd import load_inline_xsd, load_xsd

        if is_diffgram(xml_file):  # .NET's WriteXml(..., XmlWriteMode.DiffGram): changes
            for name in sorted(diffgram_tables(xml_file, xsd)):
                check_writable_table(name)
            store = open_store(db, must_exist=True)
            changes = store.import_diffgram(xml_file, xsd)
            done = ", ".join(f"{t}: {c.inserted} inserted, {c.updated} updated, "
                             f"{c.deleted} deleted, {c.unchanged} unchanged"
                             for t, c in changes.items())
            click.echo(f"applied {shown} ({done}) ({display_db(store)})")
            return

        model = load_xsd(xsd) if xsd else load_inline_xsd(xml_file)
        if model is not None and is_dataset(model):  # several related tables
            for name in model.tables:
                check_writable_table(name)
            store = open_store(db)
            counts = store.import_dataset(xml_file, xsd)
            done = ", ".join(f"{n} rows of {t}" for t, n in counts.items())
            click.echo(f"imported {done} from {shown} ({display_db(store)})")
            return
    cls = read_xsd(xsd) if xsd else None
    if cls is None and table_name is None:
        cls = read_inline_xsd(xml_file)  # .NET's WriteXml(..., XmlWriteMode.WriteSchema)
        if cls is None:
            raise click.UsageError("give --xsd (or --table for a table that already "
                                   "exists); the file has no inline schema")
    name = table_name or cls.__tablename__  # type: ignore[union-attr]
    check_writable_table(name)
    if name in catalog.TABLES:  # opening a catalog migrates it: nothing before the data
        count = import_into(open_catalog, db, catalog.TABLES[name], xml_file, xsd)
        store = open_store(db)
    else:
        store = open_store(db, must_exist=cls is None)  # no XSD: the table must be there
        if cls is None:
            cls = resolve_table(store, name)
        count = store.import_xml(cls, xml_file, xsd)
    click.echo(f"imported {count} rows from {shown} into {name} ({display_db(store)})")


@cli.command()
@click.argument("table_name", metavar="TABLE")
@click.argument("out", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--where", "-w", "wheres", multiple=True, metavar="EXPR",
              help="Convert only matching rows (as in 'query').")
@click.option("--compression", type=click.Choice(["zstd", "snappy", "gzip", "none"]),
              default="zstd", show_default=True)
@db_option
def parquet(table_name: str, out: str, wheres: Sequence[str], compression: _Compression,
            db: str) -> None:
    """Convert a table to Parquet (types from the registry; child rows as nested lists).

    OUT must be a regular file (or nothing yet), or '-' for standard output; either way the
    file appears only once complete (a refused conversion writes nothing).
    Example: entityworks parquet maps maps.parquet -w kind=caves --db levels.db
    """
    from ..arrow import write_parquet_table
    from ..files import check_output_path, is_stdio, stdout_output

    to_stdout = is_stdio(out)
    if not to_stdout:
        check_output_path(out)  # before opening the database
    store = open_store(db, must_exist=True)
    cls = resolve_table(store, table_name)
    where = [parse_where(w, store.schema(cls)) for w in wheres]
    table = store.to_arrow(cls, where=where)
    if to_stdout:
        import pyarrow.parquet as pq

        with stdout_output() as f:  # the file reaches standard output once complete
            pq.write_table(table, f, compression=compression)
    else:
        write_parquet_table(table, out, compression=compression)
    click.echo(f"wrote {table.num_rows} rows x {table.num_columns} columns of {table_name} "
               f"to {'stdout' if to_stdout else out}", err=to_stdout)


# -- sudoku ---------------------------------------------------------------------------------


@cli.group(cls=_Group)
def sudoku() -> None:
    """Solve sudoku files (Project Euler 96 or one 81-char puzzle per line)."""


def _stdin_puzzles() -> Any:
    """Standard input, read once up to one byte past the puzzle readers' limit (they refuse
    more), as a stream the readers' messages call ``<stdin>``."""
    import io

    from generators import sudoku as sd

    source = io.BytesIO(sys.stdin.buffer.read(sd.MAX_FILE_BYTES + 1))
    source.name = "<stdin>"
    return source


def _read_puzzles(path: str, fmt: str) -> tuple[list[Any], str]:
    """Puzzles of ``path`` ('-': standard input), read exactly once: a FIFO or a pipe works
    like a file. Input over the readers' limit (64 MiB) is refused."""
    import io

    from generators import sudoku as sd

    if path == "-":
        source = _stdin_puzzles()
    else:
        with open(path, "rb") as fh:
            source = io.BytesIO(fh.read(sd.MAX_FILE_BYTES + 1))
        source.name = path  # for the readers' messages
    raw = source.getvalue()
    if fmt == "auto":
        head = raw[: 1 << 16].decode("utf-8-sig", errors="replace")
        first = next((line.strip() for line in head.splitlines() if line.strip()), "")
        fmt = "euler" if first.lower().startswith("grid") else "lines"
    entries = sd.read_euler(source) if fmt == "euler" else sd.read_lines(source)
    return entries, fmt


@sudoku.command("solve")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, allow_dash=True))
@click.option("--format", "fmt", type=click.Choice(["auto", "euler", "lines"]), default="auto",
              show_default=True, help="Euler 96 'Grid NN' blocks or one puzzle per line.")
@click.option("--workers", "-j", type=click.IntRange(min=1), default=None,
              show_default="every core, when the job is big enough to repay it")
@click.option("--cluster", metavar="ADDRESS",
              help="Solve on this Dask scheduler (tcp://host:8786); this process stores the "
                   "results (needs entityworks[dask]).")
@click.option("--source", metavar="NAME",
              help="Record the entries under this source name (default: FILE's name, "
                   "'stdin' for '-').")
@progress_option
@db_option
def sudoku_solve(file: str, fmt: str, workers: int | None, cluster: str | None,
                 source: str | None, progress: bool | None,
                 db: str) -> None:
    """Solve every puzzle of FILE and store puzzles, solutions and the file's entries.

    FILE may be '-' (standard input) or a FIFO; it is read once, up to 64 MiB. A puzzle is
    stored once (the puzzle text is unique); every entry of FILE (its source name, position,
    name and line) is recorded in sudoku_entries, so that a repeated puzzle keeps each of its
    names. Storing a file again adds nothing. Example:
    entityworks sudoku solve p096_sudoku.txt --db puzzles.db
    """
    from generators import sudoku as sd

    from .. import catalog

    entries, fmt = _read_puzzles(file, fmt)
    with _bar(len(entries), "puzzle", progress) as bar:
        done = [0]

        def advance(finished: int, _total: int) -> None:
            bar.update(finished - done[0])
            done[0] = finished

        if cluster is None:
            solutions = sd.solve_many(entries, workers=workers, progress=advance)
        else:
            from ..catalog.cluster import solve_sudokus_on

            client = _cluster_client(cluster)
            try:
                solutions = solve_sudokus_on(client, entries, progress=advance)
            finally:
                client.close()
    store = open_catalog(db)
    if source is None:
        source = "stdin" if file == "-" else Path(file).name
    try:
        result = catalog.store_sudokus(store, source, entries, solutions)
    except catalog.EntryConflict as exc:
        raise click.ClickException(f"{exc} (--source NAME)") from None
    solved = sum(s is not None for s in solutions)
    several = sum(s is not None and s.unique is False for s in solutions)
    click.echo(f"{len(entries)} puzzles read from {file} ({fmt} format): {solved} solved, "
               f"{several} with several solutions, {len(result.unsolved)} without a solution")
    click.echo(f"{result.stored} stored in {display_db(store)}, {result.duplicates} "
               f"skipped as already stored or repeated; entries of {source!r}: "
               f"{result.entries} recorded, {result.entries_known} recorded before")
    for name in result.unsolved:
        click.echo(f"no solution: {name}")
    if fmt == "euler" and solved == len(entries) and not several:
        answer = sum(s.top_left for s in solutions if s is not None)
        click.echo(f"Euler 96 answer: {answer}")


@sudoku.command("euler96")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, allow_dash=True))
@click.option("--workers", "-j", type=click.IntRange(min=1), default=None,
              show_default="every core, when the job is big enough to repay it")
def sudoku_euler96(file: str, workers: int | None) -> None:
    """Print the Project Euler 96 answer for FILE (sum of the top-left 3-digit numbers).

    FILE may be '-' (standard input) or a FIFO, read once as in 'sudoku solve'.
    """
    from generators import sudoku as sd

    click.echo(sd.euler96(_stdin_puzzles() if file == "-" else file, workers=workers))


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
    from .. import catalog
    from ..model.schema import table_schema
    from ..sql.store import Store

    if table_name in catalog.TABLES:
        path = sqlite_path(db)
        missing = path is not None and not path.exists()
        store = Store("sqlite://") if missing else open_store(db)
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
        click.echo(indent + "  ".join(v.ljust(w) for v, w in zip(r[:3], widths, strict=False))
                   + "  " + r[3])
    for child in info.children:
        links = child.schema.column_names[:child.schema.links]
        root = child.schema.root
        click.echo(f"{indent}{child.field}: child table {child.schema.name} "
                   f"(key {', '.join(links)}; parent_key -> "
                   f"{root.name}.{root.primary_key.name})")  # type: ignore[union-attr]
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
@click.option("--rename", "renames", multiple=True, metavar="OLD=NEW",
              help="Column OLD (or TABLE.OLD) became NEW: rename it, keeping its data, "
                   "instead of a drop and an add (repeatable).")
@click.option("--check", "check", is_flag=True,
              help="Exit with status 1 when there are differences (0 when there are none).")
@click.option("--apply", "apply_", is_flag=True,
              help="Run the data-keeping operations (new table, new column, nullability, "
                   "DEFAULT, rename). Refused on a database under Alembic: write a revision.")
@db_option
def schema_diff(tables: Sequence[str], dataclasses_: Sequence[str], renames: Sequence[str],
                check: bool, apply_: bool, db: str) -> None:
    """Compare dataclasses with the live tables and print the Alembic operations.

    Drift is reported with exit status 0 (1 with --check). Examples:
    entityworks schema diff --dataclass mygame.models:Level --check --db game.db;
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


def _schema_diff(store: Store, tables: Sequence[str], dataclasses_: Sequence[str],
                 apply_: bool, check: bool, renamed: dict[str, str]) -> None:
    from .. import catalog, migrate
    from ..model.schema import table_schema

    classes = [_load_class(s) for s in dataclasses_] or [
        catalog.check_catalog_table(t) for t in tables] or list(catalog.TABLES.values())
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
    click.echo(f"drift: {len(operations)} difference(s) between the dataclasses and "
               f"{display_db(store)}")
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
            f"revisions, not --apply; run 'entityworks migrate --db ...'")


def _schema_class(table_name: str, db: str) -> type:
    """A catalog class by name (no database needed), else a table reflected from ``db``."""
    from .. import catalog

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
    from ..sql.scripts import create_script, statement_templates

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
    if not revision.strip():
        raise click.BadParameter("give a revision: head, an id, or a relative step like +1",
                                 param_hint="--revision")
    from .. import catalog
    from .. import migrate as migrations

    store = open_store(db)
    before = migrations.current(store)
    after = catalog.upgrade_catalog(store, revision)
    where = display_db(store)
    if before == after:
        click.echo(f"{where} is at revision {after} (nothing to do)")
    else:
        click.echo(f"{where} upgraded from {before or 'empty'} to {after}")


# -- migrations for a user's own dataclasses -------------------------------------------------


@cli.group(cls=_Group)
def migrations() -> None:
    """Alembic migrations for your own dataclasses (see 'migrations init')."""


@migrations.command("init")
@click.argument("directory", metavar="DIR", type=click.Path(file_okay=False))
@click.option("--model", "-m", "models", multiple=True, required=True, metavar="MODULE:CLASS",
              help="A dataclass whose table the revisions manage (repeatable).")
@click.option("--db", "--url", "db", default=None, callback=check_db, metavar="URL",
              help="Written to alembic.ini as sqlalchemy.url (never one with a password). "
                   "Without it give Alembic -x db=URL or set ENTITYWORKS_DB.")
def migrations_init(directory: str, models: Sequence[str], db: str | None) -> None:
    """Write an Alembic environment (alembic.ini, env.py, script.py.mako, versions/) for
    your dataclasses into DIR, which must be new or empty.

    Example: entityworks migrations init migrations --model library:Author --model
    library:Book, then: alembic -c migrations/alembic.ini revision --autogenerate -m first
    """
    from ..migrate.scaffold import init_migrations

    written = init_migrations(directory, models, url=db)
    shown = ", ".join(p.name + ("/" if p.suffix == "" and p.name == "versions" else "")
                      for p in written)
    ini = Path(directory) / "alembic.ini"
    click.echo(f"wrote {shown} in {directory}")
    click.echo(f'next: alembic -c {ini} revision --autogenerate -m "first revision"')
    click.echo(f"      alembic -c {ini} upgrade head")


# -- demo ------------------------------------------------------------------------------------


@cli.command()
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default="entityworks-demo",
              show_default=True, help="Folder for everything the demo writes.")
@click.option("--db", default=None, callback=check_db,
              help="Catalog database (default: OUT/catalog.db, replaced on each run).")
def demo(out_dir: str, db: str | None) -> None:
    """The tour: build a small level catalog and show every output format.

    Generates caves, dungeons and islands, solves a few generated sudokus, writes an entropy
    report, exports a table to XML+XSD, renders a PNG, and prints where everything went.
    """
    from ..catalog.demo import run_demo

    run_demo(Path(out_dir), db, echo=click.echo)


# -- placements, copying, browsing and playing (issue 13) ---------------------------------

#: ASCII characters for placement labels (``render --ascii``, ``play``): roguelike stairs.
PLACEMENT_MARKS = {"stairs_up": "<", "stairs_down": ">", "item": "*"}


@cli.command()
@click.argument("map_ids", nargs=-1, required=True, type=int, metavar="MAP_ID...")
@click.option("--count", "-n", type=click.IntRange(min=1), default=2, show_default=True,
              help="How many cells: stairs up, stairs down, then items.")
@click.option("--clearance", "-r", type=click.IntRange(min=0), default=2, show_default=True,
              help="Radius around each cell that must be floor.")
@click.option("--min-distance", type=click.IntRange(min=0), default=0, show_default=True,
              help="Keep the cells at least this many cells apart.")
@click.option("--seed", type=click.IntRange(min=0),
              help="Seed of the draw (default: each map's own seed).")
@db_option
def place(map_ids: Sequence[int], count: int, clearance: int, min_distance: int,
          seed: int | None, db: str) -> None:
    """Place stairs and items on stored maps: floor cells with room around them, reachable
    from each other. Replaces the maps' earlier placements.

    Example: entityworks place 3 4 5 --count 3 --clearance 2 --db levels.db
    """
    from .. import catalog

    store = open_store(db, must_exist=True)
    resolve_table(store, "maps")
    catalog.open_catalog(store)
    placed = catalog.store_placements(store, list(map_ids), count, clearance, seed=seed,
                                      min_distance=min_distance)
    for map_id, items in placed.items():
        cells = ", ".join(f"{p.label} ({p.x},{p.y})" for p in items)
        click.echo(f"map {map_id}: {cells}")


@cli.command("copy")
@click.option("--from", "source", required=True, callback=check_db, metavar="URL",
              help="The catalog to read (SQLite path or SQLAlchemy URL).")
@click.option("--to", "target", required=True, callback=check_db, metavar="URL",
              help="Where to write it; an SQLite path makes a file Datasette can browse.")
def copy_command(source: str, target: str) -> None:
    """Copy a whole catalog (maps with their child rows, puzzles, entropy reports) to
    another database, ids kept, in one transaction.

    Example: entityworks copy --from postgresql+psycopg://user@host/levels --to levels.db
    """
    from .. import catalog
    from ..sql.store import Store

    src = open_store(source, must_exist=True)
    dst = Store(target)
    try:
        if src.url.render_as_string(hide_password=False) == dst.url.render_as_string(
                hide_password=False):
            raise EntityworksError("--from and --to name the same database")
        stats = catalog.copy_catalog(src, dst)
    finally:
        src.close()
        dst.close()
    where = display_db(dst)
    counts = ", ".join(f"{rows} {name}" for name, rows in stats.rows.items())
    click.echo(f"copied {counts} to {where} in {stats.seconds:.2f} s")


@cli.command()
@click.argument("database", metavar="DB", type=click.Path(dir_okay=False))
@click.option("--port", "-p", type=click.IntRange(0, 65535), default=8001, show_default=True,
              help="Port to serve on (0 picks a free one).")
@click.option("--host", "-h", default="127.0.0.1", show_default=True,
              help="Address to listen on; 0.0.0.0 lets other machines in.")
@click.option("--open", "open_browser", is_flag=True,
              help="Open the catalog in a web browser (default: open nothing).")
def browse(database: str, port: int, host: str, open_browser: bool) -> None:
    """Browse a catalog in Datasette: map thumbnails, map pages, sudoku grids, histograms.

    Needs the web extra: pip install "entityworks[web]". DB is an SQLite file; copy a
    server catalog into one first with 'entityworks copy --from URL --to DB'. Stop with
    Ctrl-C. Example: entityworks browse levels.db --port 8001
    """
    import importlib.util

    if "://" in database:
        raise click.BadParameter(
            "Datasette browses SQLite files; copy the catalog into one first: entityworks "
            f"copy --from {redact(database)} --to catalog.db", param_hint="DB")
    path = Path(database)
    if not path.is_file():
        raise EntityworksError(f"no database at {database}")
    with open(path, "rb") as fh:
        if fh.read(16) != b"SQLite format 3\x00":
            raise EntityworksError(f"{database} is not an SQLite database")
    where = str(path.absolute())
    if re.search(r"[#?]|%[0-9A-Fa-f]{2}", where):
        # Datasette opens "file:PATH?mode=ro" unquoted: it would open (and create) another
        # file, "a" for "a#b.db", "aA.db" for "a%41.db"
        raise EntityworksError(
            f"{database}: Datasette cannot open a file whose path holds '#', '?' or '%' "
            "and two hex digits (it would open another file); rename or copy it")
    if importlib.util.find_spec("datasette") is None:
        raise EntityworksError('browse needs Datasette: pip install "entityworks[web]"')
    from datasette.cli import serve
    from datasette.plugins import pm

    from ..web import plugin

    if not pm.is_registered(plugin):  # e.g. run from a source tree without an install
        pm.register(plugin, name="entityworks")
    args = ["--port", str(port), "--host", host]
    if open_browser:
        args.append("--open")
    # The file absolute and after "--": str(Path("./--root")) is "--root", which Datasette
    # would take as its option (the root actor), and so "./--load-extension=x.db" too.
    args += ["--", where]
    serve.main(args=args, prog_name="entityworks browse", standalone_mode=False)


def _point(_ctx: Any, _param: Any, value: str | None) -> tuple[int, int] | None:
    if value is None:
        return None
    parts = value.split(",")
    try:
        x, y = (int(p) for p in parts)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not X,Y (two integers)") from None
    return x, y


@cli.command()
@click.argument("map_id", type=int)
@click.option("--at", "at", callback=_point, metavar="X,Y",
              help="Start here (default: the stairs up, else the floor nearest the centre).")
@click.option("--radius", "-r", type=click.IntRange(min=0), default=8, show_default=True,
              help="How far the player sees.")
@click.option("--symmetric", is_flag=True,
              help="Symmetric shadowcasting: if you see a floor cell, it sees you.")
@db_option
def play(map_id: int, at: tuple[int, int] | None, radius: int, symmetric: bool,
         db: str) -> None:
    """Walk a stored map in the terminal: what you see is bright, what you saw is dim.

    Arrows, vi keys (hjklyubn) or the QWE/ADZXC layout move; walls block; q quits.
    Example: entityworks play 3 --db levels.db --radius 10
    """
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise EntityworksError("play needs a terminal (stdin and stdout must be a tty)")
    from .play import play as run
    from .play import start_cell

    record = _load_map(db, map_id)
    grid = record.grid
    height, width = grid.shape
    if at is None:
        start = start_cell(grid, record.placements)
    else:
        x, y = at
        if not (0 <= x < width and 0 <= y < height):
            raise click.BadParameter(f"{x},{y} is outside the {width}x{height} map",
                                     param_hint="--at")
        if grid[y, x]:
            raise click.BadParameter(f"{x},{y} is a wall", param_hint="--at")
        start = (x, y)
    marks = {(p.x, p.y): PLACEMENT_MARKS.get(p.label, "*") for p in record.placements}
    title = f"map {map_id} {record.kind} {width}x{height}"
    final = run(grid, start, radius=radius, symmetric=symmetric, marks=marks, title=title)
    x, y = final.position
    click.echo(f"left map {map_id} at {x},{y} having seen {final.explored_mask.mean():.0%} "
               f"of it")


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point (``entityworks._entry.main`` wraps it for early Ctrl-C)."""
    cli.main(args=list(argv) if argv is not None else None, prog_name="entityworks")


__all__ = ["cli", "display_db", "error_message", "format_rows", "main", "parse_params",
           "parse_where"]

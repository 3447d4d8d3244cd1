"""Commands on the level catalog as a whole: ``generate`` maps into it, ``query`` any table,
``copy`` it to another database, and ``demo``, the tour that builds one.

One module per command family (see :mod:`.group`): these mirror :mod:`entityworks.catalog`'s
generate, query and copy functions.
"""

from __future__ import annotations

import atexit
import gc
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..catalog.kinds import KINDS
from ..errors import EntityworksError
from ..sql.backends.light import FILE_TITLE
from ..sql.urls import display_db
from ._stores import (
    complete_table,
    file_path,
    for_the_command,
    open_catalog,
    open_store,
    refuse_missing,
    resolve_file_table,
    resolve_table,
)
from .options import (
    check_db,
    cluster_client,
    cores,
    db_option,
    parse_params,
    parse_where,
    progress_option,
)
from .output import format_rows, progress_bar

if TYPE_CHECKING:
    from ..model.schema import TableSchema
    from ..sql.filters import Expr
    from ..sql.store import Store


_KINDS_HELP = "\b\nKinds (defaults in brackets):\n" + "\n".join(
    f"  {k.name:<10} {k.help}" for k in KINDS.values()
)


@click.command(epilog=_KINDS_HELP)
@click.argument("kind", type=click.Choice(sorted(KINDS)), metavar="KIND")
@click.option(
    "--count", "-n", type=click.IntRange(min=1), default=1, show_default=True, help="How many maps."
)
@click.option("--width", type=click.IntRange(min=1), help="Map width (generator default).")
@click.option("--height", type=click.IntRange(min=1), help="Map height (generator default).")
@click.option(
    "--seed",
    type=click.IntRange(min=0),
    help="Seed of the first map; map i gets seed+i. Default: a fresh seed per map.",
)
@click.option(
    "--param",
    "-p",
    "params",
    multiple=True,
    metavar="KEY=VALUE",
    help="A generator parameter, e.g. -p close_cell_prob=48 (repeatable).",
)
@click.option(
    "--workers",
    "-j",
    type=click.IntRange(min=1),
    default=cores,
    show_default="the CPU count",
    help="Worker processes.",
)
@click.option(
    "--cluster",
    metavar="ADDRESS",
    help="Generate on this Dask scheduler (tcp://host:8786) instead of local "
    "processes; this process stores the maps (needs entityworks[dask]).",
)
@click.option(
    "--refuse-short",
    is_flag=True,
    help="Store nothing and fail if any build falls short (a dungeon with fewer "
    "rooms than asked or a split floor).",
)
@click.option(
    "--mix-versions",
    is_flag=True,
    help="Store the maps even if the catalog holds maps of another version of the "
    "same generator (refused by default).",
)
@progress_option
@db_option
def generate(
    kind: str,
    count: int,
    width: int | None,
    height: int | None,
    seed: int | None,
    params: Sequence[str],
    workers: int,
    cluster: str | None,
    refuse_short: bool,
    mix_versions: bool,
    progress: bool | None,
    db: str,
) -> None:
    """Generate maps into the catalog; every row keeps the seed that rebuilds it, the
    generator's version and its grid's SHA-256 (see 'verify').

    A map has at most 4096x4096 cells. Nothing is created when a parameter is refused.
    Each dungeon row records its build's outcome (build_success, rooms_asked, rooms_built,
    connected), each caves row whether its floor is one region (build_success, connected),
    and a line sums them up. With --refuse-short a short build refuses the whole batch. If
    a worker process dies, the maps built are kept and the error says how to build the rest.
    A catalog holding maps of another version of the same generator is refused, nothing
    stored, unless --mix-versions.

    \b
    Example:
      entityworks generate caves --count 20 --seed 1 --db levels.db
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

    client = cluster_client(cluster)
    try:
        with progress_bar(count, "map", progress) as bar:
            stats = catalog.generate_into(
                open_when_first_map_is_built,
                kind,
                count,
                seed=seed,
                params=values,
                workers=workers,
                progress=bar.update,
                client=client,
                refuse_short=refuse_short,
                mix_versions=mix_versions,
            )
    except catalog.ShortBuild as exc:
        raise click.ClickException(f"{exc} (--refuse-short)") from None
    except catalog.MixedVersions as exc:
        for store in opened:
            store.close()
        raise click.ClickException(
            str(exc).replace("mix_versions=True / --mix-versions", "--mix-versions")
            + "; nothing was stored"
        ) from None
    except catalog.WorkerLost as exc:
        for store in opened:
            store.close()
        again = exc.resume("--count ", "--seed ").replace(",", "")
        raise click.ClickException(
            "a worker process died (killed, or out of memory): "
            f"{exc.stored_text().replace('refuse_short:', '--refuse-short:')}; "
            f"to build the rest, run the same command with {again}"
            + (" (fresh seeds are drawn again)" if exc.fresh else "")
        ) from None
    else:
        where = (
            f"on {cluster} ({sum(client.nthreads().values())} worker thread(s))"
            if client is not None
            else f"{workers} worker(s)"
        )
    finally:
        if client is not None:
            client.close()
    ids = f"ids {stats.ids[0]}-{stats.ids[1]}" if stats.ids else "no ids"
    seeds = (
        f"seeds {stats.seeds[0]}-{stats.seeds[1]}"
        if seed is not None and stats.seeds
        else "a fresh seed per map, stored"
    )
    click.echo(
        f"stored {stats.count} {kind} maps in {display_db(opened[0] if opened else db)} "
        f"({ids}, {seeds}) in {stats.seconds:.2f} s: {stats.maps_per_second:.1f} maps/s, "
        f"storage {stats.storage_share:.0%} of the time, {where}"
    )
    if stats.builds is not None:
        click.echo(f"{kind} builds: {stats.builds}")
    for store in opened:
        store.close()
    # The interpreter's last collection would walk everything this process imported and
    # built (SQLAlchemy, NumPy, SciPy: a fifth of a second) to free memory the OS frees
    # at exit anyway; the Store is closed above, and nothing else waits for a finalizer.
    atexit.register(gc.freeze)


@click.command()
@click.argument("table_name", metavar="TABLE", shell_complete=complete_table)
@click.option(
    "--where",
    "-w",
    "wheres",
    multiple=True,
    metavar="EXPR",
    help="Filter like 'kind=caves', 'open_ratio>=0.45', 'kind in caves,islands', "
    "'kind not in dungeon', 'name like cave%' or, inside a JSON field, "
    "'parameters.smoothing>=2' or 'tags[0]=x' (repeatable, all apply).",
)
@click.option(
    "--order-by",
    "-o",
    multiple=True,
    metavar="COLUMN",
    help="Sort column, '-column' for descending (repeatable).",
)
@click.option("--limit", type=click.IntRange(min=0), help="At most this many rows.")
@click.option("--offset", type=click.IntRange(min=0), help="Skip this many rows.")
@click.option(
    "--columns",
    "-c",
    metavar="A,B,...",
    help="Only these columns, in this order; each at most once (a column named twice is refused).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "csv", "json", "jsonl"]),
    default="table",
    show_default=True,
    help="json: an array of objects, one per line; jsonl: one object per line.",
)
@click.option(
    "--arrays",
    type=click.Choice(["lists", "base64"]),
    default="lists",
    show_default=True,
    help="JSON form of grids: nested lists (grid[y][x]), or base64 of the C-order "
    "bytes with dtype and shape.",
)
@click.option("--count", "count_only", is_flag=True, help="Print only the number of matching rows.")
@db_option
def query(
    table_name: str,
    wheres: Sequence[str],
    order_by: Sequence[str],
    limit: int | None,
    offset: int | None,
    columns: str | None,
    fmt: str,
    arrays: str,
    count_only: bool,
    db: str,
) -> None:
    """Print rows of a table; filters become bound parameters, never SQL text.

    No format prints a control character raw: table and csv text shows a backslash as
    \\\\, tab, newline and carriage return as \\t, \\n, \\r, and other control,
    line-separator and bidi characters as \\xHH or \\uHHHH; JSON writes them as \\uHHHH.

    JSON output is strict (json.loads, jq): grids as nested lists (or --arrays base64),
    NaN and infinities as the strings "NaN", "INF", "-INF", Decimals, dates, times,
    durations, UUIDs and bytes as their XML text (bytes in base64).

    \b
    Examples:
      entityworks query maps -w kind=caves -w region_count=1 -o -largest_region
      entityworks query maps --format json -c id,grid --limit 1 | jq '.[0].grid[0]'
      entityworks query maps -w 'kind in caves,islands' --count
    """
    request = _Query(wheres, order_by, limit, offset, columns, fmt, arrays, count_only)
    path = file_path(db) if READ_FILES_DIRECTLY and "://" not in db else None
    if path is not None:
        refuse_missing(path)
        text = _from_file(path, db, table_name, request)
        if text is not None:
            _print(text, fmt)
            return
    store = open_store(db, must_exist=True)
    click.get_current_context().call_on_close(store.close)  # its connections, not at exit
    cls = resolve_table(store, table_name)
    schema = store.schema(cls)
    where = request.filters(schema)
    if count_only:
        _print(str(store.count(cls, where=where)), fmt)
        return
    picks = request.picks(schema)
    rows = [
        r
        for batch in store.rows(
            cls,
            where=where,
            order_by=list(order_by) or None,
            limit=limit,
            offset=offset,
            columns=request.read(schema, picks),
        )
        for r in batch
    ]
    _print(request.render(schema, rows, picks), fmt)


#: ``query`` reads a database file itself (:mod:`entityworks.sql.backends.sqlitefile`, without
#: SQLAlchemy) where it reads exactly as the Store would; False: always through the Store
#: (the tests compare the two).
READ_FILES_DIRECTLY = True


@dataclass(frozen=True)
class _Query:
    """The options of one ``query``, checked the same way whichever path reads the rows."""

    wheres: Sequence[str]
    order_by: Sequence[str]
    limit: int | None
    offset: int | None
    columns: str | None
    fmt: str
    arrays: str
    count_only: bool

    def filters(self, schema: TableSchema) -> list[Expr]:
        """The ``--where`` filters; a UsageError for ``--count`` with options it takes not."""
        where = [parse_where(w, schema) for w in self.wheres]
        if self.count_only and (
            self.limit is not None or self.offset is not None or self.order_by or self.columns
        ):
            raise click.UsageError(
                "--count counts every matching row: it takes no --limit, "
                "--offset, --order-by or --columns"
            )
        return where

    def picks(self, schema: TableSchema) -> list[int]:
        """The positions of the ``--columns`` in the rows (empty: every column)."""
        names = schema.column_names
        chosen = self.chosen()
        picks = [names.index(schema.column(c).name) for c in chosen]
        twice = sorted({names[i] for i in picks if picks.count(i) > 1})
        if twice:  # a JSON object cannot hold one key twice
            raise click.UsageError(
                f"--columns names {', '.join(map(repr, twice))} more than once; "
                "name each column once"
            )
        return picks

    def chosen(self) -> list[str]:
        return [c.strip() for c in (self.columns or "").split(",") if c.strip()]

    def read(self, schema: TableSchema, picks: list[int]) -> list[str] | None:
        """The columns to read and decode (those of ``--columns``; None: every one)."""
        return [schema.column_names[i] for i in picks] if picks else None

    def render(self, schema: TableSchema, rows: list[tuple[Any, ...]], picks: list[int]) -> str:
        """The text of ``rows``, read with the columns :meth:`read` names."""
        names = self.chosen() if picks else schema.column_names
        return format_rows(names, rows, self.fmt, arrays=self.arrays)


def _print(text: str, fmt: str) -> None:
    """What ``query`` prints, the last thing it does."""
    if text or fmt != "jsonl":  # JSON Lines of no rows: no line at all (not an empty one)
        click.echo(text)
    # The interpreter's last collection would walk the objects of every module imported
    # (NumPy's, the registry's: a seventh of the whole command) to free memory the OS frees
    # at exit anyway; the database file is closed, and nothing else waits for a finalizer.
    atexit.register(gc.freeze)


def _from_file(path: Path, db: str, table_name: str, request: _Query) -> str | None:
    """What ``query`` prints, read from the database file at ``path`` without SQLAlchemy;
    None where only the Store reads the table exactly (the caller then reads it so)."""
    from ..model.schema import table_schema
    from ..sql.backends.sqlitefile import Elsewhere, FileDatabase

    try:
        file = FileDatabase(path)
    except Elsewhere:
        return None
    try:
        cls = resolve_file_table(file, display_db(db), table_name)
        schema = table_schema(cls)
        where = request.filters(schema)
        table = file.bind(schema)
        if request.count_only:
            return str(table.count(where))
        picks = request.picks(schema)
        rows = table.rows(
            where,
            list(request.order_by) or None,
            request.limit,
            request.offset,
            request.read(schema, picks),
        )
        return request.render(schema, rows, picks)
    except Elsewhere:
        return None
    finally:
        file.close()


@click.command()
@click.option(
    "--where",
    "-w",
    "wheres",
    multiple=True,
    metavar="EXPR",
    help="Only the maps matching this filter, as in 'query maps' (repeatable, all apply).",
)
@click.option(
    "--fill",
    is_flag=True,
    help="Record the installed generator's version and the grid's hash on each map it "
    "rebuilds exactly whose row has none (stored before they were recorded) or another "
    "version; maps that differ are not changed.",
)
@progress_option
@db_option
def verify(wheres: Sequence[str], fill: bool, progress: bool | None, db: str) -> None:
    """Rebuild each map from its kind, seed and parameters and report those that differ.

    One line per finding: 'edited' (the grid does not match the hash it was stored with),
    'version' (built by another generator version than the installed one), 'regenerated'
    (the installed generator builds another grid: it changed), 'unverifiable' (no seed,
    kind not installed, parameters refused). Then a summary line. The exit status is 1
    when any map differs, 0 otherwise.

    \b
    Examples:
      entityworks verify --db levels.db
      entityworks verify -w kind=caves -w 'id>=100' --db levels.db
      entityworks verify --fill --db levels.db
    """
    from .. import catalog
    from .output import escape_text

    store = open_store(db, must_exist=True)
    click.get_current_context().call_on_close(store.close)
    from ..migrate.versions import VERSION_TABLE

    if VERSION_TABLE not in store.table_names():
        raise click.ClickException(
            f"{display_db(store)} holds no level catalog (no {VERSION_TABLE} table): "
            "'verify' checks the maps 'generate' stores"
        )
    catalog.open_catalog(store)  # upgraded to the revision that records provenance
    schema = store.schema(catalog.MapRecord)
    where = [parse_where(w, schema) for w in wheres]
    total = store.count(catalog.MapRecord, where=where)
    with progress_bar(total, "map", progress) as bar:
        report = catalog.verify_catalog(store, where, fill=fill, progress=bar.update)
    for finding in report.findings:
        click.echo(escape_text(str(finding)))
    click.echo(report.summary(display_db(store)).replace("(fill records", "(--fill records"))
    if not report.ok:
        raise SystemExit(1)


@click.command("copy")
@click.option(
    "--from",
    "source",
    required=True,
    callback=check_db,
    metavar="URL",
    help=f"The catalog to read ({FILE_TITLE} path or SQLAlchemy URL).",
)
@click.option(
    "--to",
    "target",
    required=True,
    callback=check_db,
    metavar="URL",
    help=f"Where to write it; an {FILE_TITLE} path makes a file Datasette can browse.",
)
@progress_option
def copy_command(source: str, target: str, progress: bool | None) -> None:
    """Copy a whole catalog (maps with their child rows, puzzles, entropy reports) to
    another database, ids kept, in one transaction.

    \b
    Example:
      entityworks copy --from postgresql+psycopg://user@host/levels --to levels.db
    """
    from .. import catalog
    from ..sql.store import Store

    src = open_store(source, must_exist=True)
    dst = for_the_command(Store(_copy_target(target)))
    try:
        if src.url.render_as_string(hide_password=False) == dst.url.render_as_string(
            hide_password=False
        ):
            raise EntityworksError("--from and --to name the same database")
        held = _catalog_tables(src, source, target)
        total = sum(src.count(cls) for name, cls in catalog.TABLES.items() if name in held)
        with progress_bar(total, "rows", progress) as bar:
            done: dict[str, int] = {}

            def advance(table: str, rows: int) -> None:
                bar.update(rows - done.get(table, 0))
                done[table] = rows

            stats = catalog.copy_catalog(src, dst, progress=advance)
    finally:
        src.close()
        dst.close()
    where = display_db(dst)
    counts = ", ".join(f"{rows} {name}" for name, rows in stats.rows.items())
    click.echo(f"copied {counts} to {where} in {stats.seconds:.2f} s")


def _copy_target(target: str) -> str:
    """``--to``, refused when it is a database file's path holding a symbolic link to nothing
    (the new catalog would be created wherever it points)."""
    from .._files import refuse_dangling_link
    from ._stores import file_path

    path = file_path(target)
    if path is not None:
        refuse_dangling_link(path, "the catalog")
    return target


def _catalog_tables(src: Store, source: str, target: str) -> set[str]:
    """The tables of ``src``, refused with what to run instead when it holds no level
    catalog (no revision table: its tables were not made by 'generate', 'demo' or
    'migrate')."""
    from ..migrate.versions import VERSION_TABLE
    from ._stores import INTERNAL_TABLES
    from .output import escape_text

    tables = set(src.table_names())
    if VERSION_TABLE in tables:
        return tables
    listed = ", ".join(escape_text(t) for t in sorted(tables - set(INTERNAL_TABLES))) or "none"
    raise click.ClickException(
        f"{display_db(src)} holds no level catalog (no {VERSION_TABLE} table; its tables: "
        f"{listed}): 'copy' copies what 'generate' and 'demo' store. To copy other tables, "
        f"export them and import the file: entityworks export-xml TABLE... tables.xml --db "
        f"{_shell_word(source)} && entityworks import-xml tables.xml --db {_shell_word(target)}"
    )


def _shell_word(db: str) -> str:
    """``db`` as a shell word (no password), control characters escaped."""
    import shlex

    from .output import escape_text

    return escape_text(shlex.quote(display_db(db)))


@click.command()
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False),
    default="entityworks-demo",
    show_default=True,
    help="Folder for everything the demo writes.",
)
@click.option(
    "--db",
    default=None,
    callback=check_db,
    help="Catalog database (default: OUT/catalog.db, replaced on each run).",
)
def demo(out_dir: str, db: str | None) -> None:
    """The tour: build a small level catalog and show every output format.

    Generates caves, dungeons and islands, solves a few generated sudokus, writes an entropy
    report, exports a table to XML+XSD, renders a PNG, and prints where everything went.
    """
    from ..catalog.demo import run_demo

    run_demo(Path(out_dir), db, echo=click.echo)

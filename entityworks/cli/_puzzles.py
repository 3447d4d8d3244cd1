"""The puzzle and byte-statistics commands: ``sudoku solve`` and ``sudoku euler96`` (files of
puzzles, solved and stored), ``entropy`` (ent's report on files, stored).

Both store into the catalog through :mod:`entityworks.catalog` and compute with
:mod:`generators` (imported inside the commands: it is heavy).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from ..sql.urls import display_db
from ._stores import open_catalog
from .errors import Group
from .options import ByteSize, cluster_client, db_option, progress_option
from .output import progress_bar


@click.group(cls=Group)
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


def _read_puzzles(path: str, fmt: str) -> tuple[Any, str]:
    """Puzzles of ``path`` ('-': standard input) as columns (``PuzzleColumns``), read
    exactly once: a FIFO or a pipe works like a file. Input over the readers' limit
    (64 MiB) is refused."""
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
    return sd.read_columns(source, fmt), fmt


@sudoku.command("solve")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, allow_dash=True))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["auto", "euler", "lines"]),
    default="auto",
    show_default=True,
    help="Euler 96 'Grid NN' blocks or one puzzle per line.",
)
@click.option(
    "--workers",
    "-j",
    type=click.IntRange(min=1),
    default=None,
    show_default="every core, when the job is big enough to repay it",
)
@click.option(
    "--cluster",
    metavar="ADDRESS",
    help="Solve on this Dask scheduler (tcp://host:8786); this process stores the "
    "results (needs entityworks[dask]).",
)
@click.option(
    "--source",
    metavar="NAME",
    help="Record the entries under this source name (default: FILE's name, 'stdin' for '-').",
)
@progress_option
@db_option
def sudoku_solve(
    file: str,
    fmt: str,
    workers: int | None,
    cluster: str | None,
    source: str | None,
    progress: bool | None,
    db: str,
) -> None:
    """Solve every puzzle of FILE and store puzzles, solutions and the file's entries.

    FILE may be '-' (standard input) or a FIFO; it is read once, up to 64 MiB. A puzzle is
    stored once (the puzzle text is unique); every entry of FILE (its source name, position,
    name and line) is recorded in sudoku_entries, so that a repeated puzzle keeps each of its
    names. Storing a file again adds nothing.

    \b
    Example:
      entityworks sudoku solve p096_sudoku.txt --db puzzles.db
    """
    from generators import sudoku as sd

    from .. import catalog

    entries, fmt = _read_puzzles(file, fmt)
    with progress_bar(len(entries), "puzzle", progress) as bar:
        done = [0]

        def advance(finished: int, _total: int) -> None:
            bar.update(finished - done[0])
            done[0] = finished

        if cluster is None:
            found = sd.solve_array(entries.text(), workers=workers, progress=advance)
        else:
            from ..catalog.cluster import solve_sudokus_on

            client = cluster_client(cluster)
            try:
                found = solve_sudokus_on(client, entries.puzzles, progress=advance, arrays=True)
            finally:
                client.close()
    store = open_catalog(db)
    if source is None:
        source = "stdin" if file == "-" else Path(file).name
    try:
        result = catalog.store_sudoku_arrays(store, source, entries, found)
    except catalog.EntryConflict as exc:
        raise click.ClickException(f"{exc} (--source NAME)") from None
    solved = int((found.counts > 0).sum())
    several = int((found.counts > 1).sum())
    click.echo(
        f"{len(entries)} puzzles read from {file} ({fmt} format): {solved} solved, "
        f"{several} with several solutions, {len(result.unsolved)} without a solution"
    )
    click.echo(
        f"{result.stored} stored in {display_db(store)}, {result.duplicates} "
        f"skipped as already stored or repeated; entries of {source!r}: "
        f"{result.entries} recorded, {result.entries_known} recorded before"
    )
    for name in result.unsolved:
        click.echo(f"no solution: {name}")
    if fmt == "euler" and solved == len(entries) and not several:
        answer = int(found.top_left().sum())
        click.echo(f"Euler 96 answer: {answer}")


@sudoku.command("euler96")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, allow_dash=True))
@click.option(
    "--workers",
    "-j",
    type=click.IntRange(min=1),
    default=None,
    show_default="every core, when the job is big enough to repay it",
)
def sudoku_euler96(file: str, workers: int | None) -> None:
    """Print the Project Euler 96 answer for FILE (sum of the top-left 3-digit numbers).

    FILE may be '-' (standard input) or a FIFO, read once as in 'sudoku solve'.
    """
    from generators import sudoku as sd

    click.echo(sd.euler96(_stdin_puzzles() if file == "-" else file, workers=workers))


@click.command(context_settings={"help_option_names": ["-h", "--help", "-u"]})
@click.argument(
    "files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, allow_dash=True)
)
@click.option("--terse", "-t", is_flag=True, help="ent's CSV output (-t).")
@click.option("--bits", "-b", is_flag=True, help="Treat the input as a stream of bits (ent -b).")
@click.option(
    "--counts", "-c", is_flag=True, help="Print the occurrence count of each value (ent -c)."
)
@click.option(
    "--fold", "-f", is_flag=True, help="Fold upper to lower case letters before counting (ent -f)."
)
@click.option(
    "--max-size",
    type=ByteSize(),
    default="1G",
    show_default=True,
    help="Refuse an input longer than this (K, M, G, T suffixes; 0: no limit).",
)
@click.option(
    "--store/--no-store",
    default=None,
    help="Store the reports in the catalog (default: only when --db or ENTITYWORKS_DB is given).",
)
@db_option
@click.pass_context
def entropy(
    ctx: click.Context,
    files: Sequence[str],
    terse: bool,
    bits: bool,
    counts: bool,
    fold: bool,
    max_size: int | None,
    store: bool | None,
    db: str,
) -> None:
    """Analyse files as ent does and print the reports; with --db, store them in the catalog.

    Options as ent's: -b, -c, -f, -t, and -u for this help. Each input is read exactly once,
    so a stored SHA-256 always belongs to the bytes the figures describe; FIFOs, devices and
    '-' (standard input) are read as streams up to --max-size. Nothing is stored unless every
    input was read; a file already stored with the same path and SHA-256 is not stored again.

    \b
    Examples:
      entityworks entropy level.png -c
      entityworks entropy level.png catalog.db --db reports.db
    """
    from .. import catalog
    from ..sql.filters import col

    if store is None:
        source = ctx.get_parameter_source("db")
        store = source not in (None, click.core.ParameterSource.DEFAULT)
    if store and (bits or fold):
        raise click.UsageError(
            "the catalog keeps byte reports of the bytes as they are: "
            "-b and -f reports are printed, not stored (add --no-store)"
        )
    if list(files).count("-") > 1:
        raise click.BadParameter("'-' (standard input) can be read only once", param_hint="FILES")
    pairs = []
    for file in files:
        if file == "-":
            pairs.append(
                catalog.analyse_entropy(
                    sys.stdin.buffer, name="<stdin>", max_bytes=max_size, bits=bits, fold=fold
                )
            )
        else:
            pairs.append(catalog.analyse_entropy(file, max_bytes=max_size, bits=bits, fold=fold))
    stored: dict[int, str] = {}
    if store:
        catalog_store = open_catalog(db)
        new: list[Any] = []
        for i, (row, _) in enumerate(pairs):
            same = list(
                catalog_store.select(
                    catalog.EntropyRecord,
                    where=[col("path") == row.path, col("sha256") == row.sha256],
                    limit=1,
                )
            )
            if same:
                stored[i] = f"already stored as entropy_reports id {same[0].id}"
            elif any(r.path == row.path and r.sha256 == row.sha256 for r in new):
                stored[i] = "stored once above"
            else:
                new.append(row)
        catalog_store.insert_many(new)
        for i, (row, _) in enumerate(pairs):
            stored.setdefault(i, f"entropy_reports id {row.id}")
    for i, (row, report) in enumerate(pairs):
        if not terse:
            where = f", {stored[i]}" if i in stored else ""
            click.echo(f"== {row.path}: {row.size} bytes, sha256 {row.sha256[:16]}...{where}")
        click.echo(report.to_ent(terse=terse, counts=counts).rstrip("\n"))
        if not terse:
            click.echo()

"""``entityworks browse``: a catalog in Datasette, with the :mod:`entityworks.web` plugin.

Its own module because it is the one command that serves (and the one that needs the web
extra); the checks before Datasette starts are its substance.
"""

from __future__ import annotations

import re
from pathlib import Path

import click

from ..errors import EntityworksError
from ..sql.backends.light import FILE_TITLE, is_database_file
from ..sql.urls import redact


@click.command()
@click.argument("database", metavar="DB", type=click.Path(dir_okay=False))
@click.option(
    "--port",
    "-p",
    type=click.IntRange(0, 65535),
    default=8001,
    show_default=True,
    help="Port to serve on (0 picks a free one).",
)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on; 0.0.0.0 lets other machines in.",
)
@click.option(
    "--open",
    "open_browser",
    is_flag=True,
    help="Open the catalog in a web browser (default: open nothing).",
)
def browse(database: str, port: int, host: str, open_browser: bool) -> None:
    """Browse a catalog in Datasette: map thumbnails, map pages, sudoku grids, histograms.

    Needs the web extra: pip install "entityworks[web]". DB is an SQLite file; copy a
    server catalog into one first with 'entityworks copy --from URL --to DB'. Stop with
    Ctrl-C.

    \b
    Example:
      entityworks browse levels.db --port 8001
    """
    import importlib.util

    if "://" in database:
        raise click.BadParameter(
            f"Datasette browses {FILE_TITLE} files; copy the catalog into one first: entityworks "
            f"copy --from {redact(database)} --to catalog.db",
            param_hint="DB",
        )
    path = Path(database)
    if not path.is_file():
        raise EntityworksError(f"no database at {database}")
    if not is_database_file(path):
        raise EntityworksError(f"{database} is not an {FILE_TITLE} database")
    where = str(path.absolute())
    if re.search(r"[#?]|%[0-9A-Fa-f]{2}", where):
        # Datasette opens "file:PATH?mode=ro" unquoted: it would open (and create) another
        # file, "a" for "a#b.db", "aA.db" for "a%41.db"
        raise EntityworksError(
            f"{database}: Datasette cannot open a file whose path holds '#', '?' or '%' "
            "and two hex digits (it would open another file); rename or copy it"
        )
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

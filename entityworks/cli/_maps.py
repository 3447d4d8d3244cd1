"""Commands on stored maps, one at a time or a few: ``render`` one as PNG, ASCII or Tiled
JSON, ``place`` stairs and items on some, ``play`` one in the terminal.

The terminal game itself is :mod:`._play`, imported only when ``play`` runs (it needs NumPy,
which ``--help`` must not load).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..errors import EntityworksError
from ..sql.urls import display_db
from ._stores import open_store, resolve_table
from .options import db_option

if TYPE_CHECKING:
    from ..catalog import MapRecord

#: ASCII characters for placement labels (``render --ascii``, ``play``): roguelike stairs.
PLACEMENT_MARKS = {"stairs_up": "<", "stairs_down": ">", "item": "*"}


def _load_map(db: str, map_id: int) -> MapRecord:
    from ..catalog import load_map

    store = open_store(db, must_exist=True)
    resolve_table(store, "maps")
    record = load_map(store, map_id)  # a grid that is not the row's size: refused unread
    if record is None:
        raise EntityworksError(f"no map with id {map_id} in {display_db(store)}")
    return record


#: Largest PNG ``render`` writes, in pixels (width x block by height x block).
MAX_PNG_PIXELS = 100_000_000


@click.command()
@click.argument("map_id", type=int)
@click.option(
    "--png",
    type=click.Path(dir_okay=False, allow_dash=True),
    help="Write a PNG here ('-': standard output).",
)
@click.option(
    "--ascii",
    "ascii_",
    type=click.Path(dir_okay=False, allow_dash=True),
    help="Write '#'/'.' text here ('-' prints it).",
)
@click.option(
    "--tiled",
    type=click.Path(dir_okay=False),
    help="Write a Tiled JSON map here (its tileset PNG goes beside it, so this needs a file path).",
)
@click.option(
    "--block",
    type=click.IntRange(min=1, max=1024),
    default=5,
    show_default=True,
    help="PNG pixels per cell (the PNG may have at most 100 million pixels).",
)
@click.option(
    "--scheme",
    type=click.Choice(["walls", "getmapimage"]),
    default="walls",
    show_default=True,
    help="PNG colours: 'walls' draws walls black on white floor (greyscale); "
    "'getmapimage' those of the cave post's GetMapImage: floor opaque black, "
    "walls transparent (RGBA).",
)
@db_option
def render(
    map_id: int,
    png: str | None,
    ascii_: str | None,
    tiled: str | None,
    block: int,
    scheme: str,
    db: str,
) -> None:
    """Render a stored map as PNG, ASCII and/or Tiled JSON.

    Without --png, --ascii or --tiled the ASCII map is printed ('#' wall, '.' floor).
    Every file appears whole or not at all. One of --png and --ascii may be '-' (standard
    output); the other messages then go to stderr.

    \b
    Example:
      entityworks render 3 --png cave.png --scheme getmapimage --ascii -
    """
    from .._files import check_output_path, is_stdio

    if scheme != "walls" and not png:
        raise click.UsageError("--scheme sets the PNG's colours: add --png PATH (or --png -)")
    if not (png or ascii_ or tiled):
        ascii_ = "-"  # the map itself, on standard output
    if is_stdio(png) and is_stdio(ascii_):
        raise click.UsageError("only one of --png and --ascii can be '-' (standard output)")
    if is_stdio(tiled):
        raise click.BadParameter(
            "a Tiled map needs a file path: its tileset PNG is written beside it",
            param_hint="--tiled",
        )
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
                f"than {MAX_PNG_PIXELS:,}; use a smaller --block",
                param_hint="--block",
            )
    from generators.maps import render as rd

    from .._files import open_output

    status = is_stdio(png)  # messages to stderr when the PNG takes standard output
    if png:
        with open_output(png) as f:
            rd.to_png(record.grid, f, block=block, scheme=scheme, placements=points)
        shown = "stdout" if is_stdio(png) else png
        click.echo(
            f"map {map_id} ({record.kind} {record.width}x{record.height}) -> {shown}", err=status
        )
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

    from .._files import atomic_output

    image = _tileset_path(tiled)
    document = rd.to_tiled_json(grid, tile_size, image.name)
    picture = io.BytesIO()
    rd.tileset_image(tile_size).save(picture, format="PNG")
    with ExitStack() as stack:
        png_file = stack.enter_context(atomic_output(image))
        json_file = stack.enter_context(atomic_output(tiled))
        png_file.write(picture.getvalue())
        json_file.write(json.dumps(document, separators=(",", ":")).encode("utf-8"))


@click.command()
@click.argument("map_ids", nargs=-1, required=True, type=int, metavar="MAP_ID...")
@click.option(
    "--count",
    "-n",
    type=click.IntRange(min=1),
    default=2,
    show_default=True,
    help="How many cells: stairs up, stairs down, then items.",
)
@click.option(
    "--clearance",
    "-r",
    type=click.IntRange(min=0),
    default=2,
    show_default=True,
    help="Radius around each cell that must be floor.",
)
@click.option(
    "--min-distance",
    type=click.IntRange(min=0),
    default=0,
    show_default=True,
    help="Keep the cells at least this many cells apart.",
)
@click.option(
    "--seed", type=click.IntRange(min=0), help="Seed of the draw (default: each map's own seed)."
)
@db_option
def place(
    map_ids: Sequence[int], count: int, clearance: int, min_distance: int, seed: int | None, db: str
) -> None:
    """Place stairs and items on stored maps: floor cells with room around them, reachable
    from each other. Replaces the maps' earlier placements.

    \b
    Example:
      entityworks place 3 4 5 --count 3 --clearance 2 --db levels.db
    """
    from .. import catalog

    store = open_store(db, must_exist=True)
    resolve_table(store, "maps")
    catalog.open_catalog(store)
    placed = catalog.store_placements(
        store, list(map_ids), count, clearance, seed=seed, min_distance=min_distance
    )
    for map_id, items in placed.items():
        cells = ", ".join(f"{p.label} ({p.x},{p.y})" for p in items)
        click.echo(f"map {map_id}: {cells}")


def _point(_ctx: Any, _param: Any, value: str | None) -> tuple[int, int] | None:
    if value is None:
        return None
    parts = value.split(",")
    try:
        x, y = (int(p) for p in parts)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not X,Y (two integers)") from None
    return x, y


@click.command()
@click.argument("map_id", type=int)
@click.option(
    "--at",
    "at",
    callback=_point,
    metavar="X,Y",
    help="Start here (default: the stairs up, else the floor nearest the centre).",
)
@click.option(
    "--radius",
    "-r",
    type=click.IntRange(min=0),
    default=8,
    show_default=True,
    help="How far the player sees.",
)
@click.option(
    "--symmetric",
    is_flag=True,
    help="Symmetric shadowcasting: if you see a floor cell, it sees you.",
)
@db_option
def play(map_id: int, at: tuple[int, int] | None, radius: int, symmetric: bool, db: str) -> None:
    """Walk a stored map in the terminal: what you see is bright, what you saw is dim.

    Arrows, vi keys (hjklyubn) or the QWE/ADZXC layout move; walls block; q quits.

    \b
    Example:
      entityworks play 3 --db levels.db --radius 10
    """
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise EntityworksError("play needs a terminal (stdin and stdout must be a tty)")
    from ._play import play as run
    from ._play import start_cell

    record = _load_map(db, map_id)
    grid = record.grid
    height, width = grid.shape
    if at is None:
        start = start_cell(grid, record.placements)
    else:
        x, y = at
        if not (0 <= x < width and 0 <= y < height):
            raise click.BadParameter(
                f"{x},{y} is outside the {width}x{height} map", param_hint="--at"
            )
        if grid[y, x]:
            raise click.BadParameter(f"{x},{y} is a wall", param_hint="--at")
        start = (x, y)
    marks = {(p.x, p.y): PLACEMENT_MARKS.get(p.label, "*") for p in record.placements}
    title = f"map {map_id} {record.kind} {width}x{height}"
    final = run(grid, start, radius=radius, symmetric=symmetric, marks=marks, title=title)
    x, y = final.position
    click.echo(f"left map {map_id} at {x},{y} having seen {final.explored_mask.mean():.0%} of it")

"""Turn maps into pictures and files: PNG, ASCII and Tiled JSON.

PNG takes the layout of the cave generator's bitmap export (seed 002, ``GetMapImage``):
every cell is a ``block`` x ``block`` square, 5 pixels by default. Its colours are ours:
walls black on white floor, an 8-bit greyscale PNG written by Pillow. ``GetMapImage`` paints
its map's 1 cells black on a transparent bitmap, and in csCaveGenerator 1 is *cave floor*,
so its picture is black caves in transparent rock. We keep dark walls and light floor
because our grids store 1 = wall, because the FOV fog, the Tiled tileset, the catalog's
thumbnails and the golden pictures all read that way, and because a transparent
background shows as black in some viewers and white in others. ``scheme="getmapimage"``
gives the original's picture instead: RGBA, floor opaque black, walls fully transparent.
Given a ``visible`` mask (from ``generators.view.fov.visible``) the floor outside it is drawn
grey, as fog; ``placements`` are drawn as red squares inside their cells.

``thumbnail`` makes a small picture for a catalog browser (one pixel per cell, or the
share of wall per pixel for maps larger than the box) and ``overlay_image`` a large one
with rooms, caves, corridors and placements drawn in colour.

ASCII uses ``#`` for wall and ``.`` for floor, one text line per map row, the symbols
of the *MapHandler* console print (seed 001); ``from_ascii`` reads it back. ``marks``
(``{(x, y): "<"}``) put other characters on chosen cells, e.g. placed stairs.

``to_tiled_json`` builds a map for the Tiled editor: orthogonal, one tile layer, and one
embedded two-tile tileset (tile 1 floor, tile 2 wall) whose image ``write_tiled`` saves
beside the JSON, so Tiled opens the pair as is.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

import numpy as np
from PIL import Image, ImageDraw

from generators._checks import check_choice, check_grid, check_int

FLOOR_SHADE = 255
WALL_SHADE = 0
FOG_SHADE = 128

SCHEMES = ("walls", "getmapimage")

#: Colours (RGB) of ``overlay_image`` and of placements on a PNG.
OVERLAY_WALL = (40, 42, 48)
OVERLAY_FLOOR = (236, 233, 224)
OVERLAY_CORRIDOR = (236, 196, 120)
OVERLAY_ROOM = (44, 110, 200)
OVERLAY_CAVE = (60, 150, 80)
PLACEMENT_COLOUR = (210, 30, 40)

#: Largest picture ``overlay_image`` and ``thumbnail`` will make, in pixels per side.
MAX_SIDE = 4096

Point = tuple[int, int]
Box = tuple[int, int, int, int]

WALL_CHAR = "#"
FLOOR_CHAR = "."

TILED_VERSION = "1.10"
TILED_EDITOR_VERSION = "1.10.2"
#: Global tile ids in the Tiled layer (0 would mean "no tile").
FLOOR_GID = 1
WALL_GID = 2


def _shades(grid: np.ndarray, visible: np.ndarray | None) -> np.ndarray:
    cells = check_grid(grid)
    shades = np.where(cells == 1, WALL_SHADE, FLOOR_SHADE).astype(np.uint8)
    if visible is not None:
        mask = np.asarray(visible)
        if mask.shape != cells.shape:
            raise ValueError(f"visible must have the grid's shape {cells.shape}, got {mask.shape}")
        shades[(cells == 0) & ~mask.astype(bool)] = FOG_SHADE
    return shades


def _points(name: str, points: Iterable[Any] | None, shape: tuple[int, ...]) -> list[Point]:
    """Validate ``(x, y)`` pairs that must lie on a map of ``shape``."""
    out: list[Point] = []
    for point in points or ():
        if not isinstance(point, tuple | list) or len(point) != 2:
            raise ValueError(f"{name} must hold (x, y) pairs, got {point!r}")
        x, y = check_int(f"{name} x", point[0]), check_int(f"{name} y", point[1])
        if not (0 <= x < shape[1] and 0 <= y < shape[0]):
            raise ValueError(f"{name} point {(x, y)!r} is outside the {shape[1]}x{shape[0]} map")
        out.append((x, y))
    return out


def _scale(pixels: np.ndarray, block: int) -> np.ndarray:
    return np.repeat(np.repeat(pixels, block, axis=0), block, axis=1)


def _mark(image: Image.Image, points: Sequence[Point], block: int, grow: int = 0) -> None:
    """Red squares inside the cells of ``points`` (a quarter of the cell left as margin),
    or ``grow`` pixels beyond the cell on every side, ringed in white."""
    draw = ImageDraw.Draw(image)
    inset = block // 4 - grow
    colour: Any = PLACEMENT_COLOUR if image.mode == "RGB" else (*PLACEMENT_COLOUR, 255)
    for x, y in points:
        box = (
            x * block + inset,
            y * block + inset,
            (x + 1) * block - 1 - inset,
            (y + 1) * block - 1 - inset,
        )
        if grow:
            draw.rectangle((box[0] - 1, box[1] - 1, box[2] + 1, box[3] + 1), fill="white")
        draw.rectangle(box, fill=colour)


def to_image(
    grid: np.ndarray,
    block: int = 5,
    visible: np.ndarray | None = None,
    *,
    scheme: str = "walls",
    placements: Iterable[Point] | None = None,
) -> Image.Image:
    """Picture of the map, ``block`` pixels per cell side (see the module docstring).

    Greyscale for the default scheme, RGB once ``placements`` are drawn, RGBA for
    ``scheme="getmapimage"``.
    """
    block = check_int("block", block, 1)
    scheme = check_choice("scheme", scheme, SCHEMES)
    shades = _shades(grid, visible)
    points = _points("placements", placements, shades.shape)
    if scheme == "getmapimage":
        # black floor (fog: grey), walls left transparent, as GetMapImage draws
        alpha = np.where(shades == WALL_SHADE, 0, 255).astype(np.uint8)
        grey = np.where(shades == FOG_SHADE, FOG_SHADE, 0).astype(np.uint8)
        rgba = np.dstack([grey, grey, grey, alpha])
        image = Image.fromarray(_scale(rgba, block), mode="RGBA")
    else:
        image = Image.fromarray(_scale(shades, block), mode="L")
        if points:
            image = image.convert("RGB")
    _mark(image, points, block)
    return image


def to_png(
    grid: np.ndarray,
    path: str | os.PathLike[str] | IO[bytes],
    block: int = 5,
    visible: np.ndarray | None = None,
    *,
    scheme: str = "walls",
    placements: Iterable[Point] | None = None,
) -> None:
    """Write the map as a PNG of ``(width * block) x (height * block)`` pixels."""
    to_image(grid, block, visible, scheme=scheme, placements=placements).save(
        path, format="PNG", optimize=True
    )


def thumbnail(grid: np.ndarray, box: int = 96) -> Image.Image:
    """A small greyscale picture whose longer side is at most ``box`` pixels.

    A map that fits gets one pixel per cell (show it scaled up with nearest-neighbour
    sampling, e.g. CSS ``image-rendering: pixelated``); a larger one is shrunk by a whole
    factor ``k``, each pixel's shade the share of floor among its ``k`` x ``k`` cells.
    """
    cells = check_grid(grid)
    box = check_int("box", box, 1, MAX_SIDE)
    height, width = cells.shape
    factor = -(-max(height, width) // box)
    if factor == 1:
        return Image.fromarray(_shades(cells, None), mode="L")
    pad_h, pad_w = -height % factor, -width % factor
    # cells beyond the edge count as wall, so edge pixels are not brightened
    padded = np.pad(cells, ((0, pad_h), (0, pad_w)), constant_values=1)
    blocks = padded.reshape(padded.shape[0] // factor, factor, padded.shape[1] // factor, factor)
    floor_share = 1.0 - blocks.mean(axis=(1, 3))
    span = FLOOR_SHADE - WALL_SHADE
    shades = np.rint(WALL_SHADE + span * floor_share).astype(np.uint8)
    return Image.fromarray(shades, mode="L")


def overlay_image(
    grid: np.ndarray,
    block: int = 6,
    *,
    rooms: Iterable[Box] = (),
    caves: Iterable[Box] = (),
    corridors: Iterable[Iterable[Point]] = (),
    placements: Iterable[Point] | None = None,
) -> Image.Image:
    """An RGB picture with features drawn over the map.

    Walls dark and floor light; corridor cells amber; ``rooms`` and ``caves`` (boxes
    ``(x, y, width, height)`` in cells) outlined in blue and green; placements as red
    squares a cell and a half wide, ringed in white. ``block`` is reduced when the picture
    would exceed ``MAX_SIDE`` pixels.
    """
    cells = check_grid(grid)
    block = check_int("block", block, 1)
    height, width = cells.shape
    block = max(1, min(block, MAX_SIDE // max(height, width)))
    palette = np.array([OVERLAY_FLOOR, OVERLAY_WALL, OVERLAY_CORRIDOR], dtype=np.uint8)
    kinds = cells.astype(np.uint8).copy()
    for path in corridors:
        for x, y in _points("corridors", path, cells.shape):
            if kinds[y, x] == 0:
                kinds[y, x] = 2
    image = Image.fromarray(_scale(palette[kinds], block), mode="RGB")
    draw = ImageDraw.Draw(image)
    line = max(1, block // 3)
    for boxes, colour in ((caves, OVERLAY_CAVE), (rooms, OVERLAY_ROOM)):
        for x, y, w, h in boxes:
            draw.rectangle(
                (x * block, y * block, (x + w) * block - 1, (y + h) * block - 1),
                outline=colour,
                width=line,
            )
    # placements stand out over outlines: a cell and a half wide, ringed in white
    _mark(image, _points("placements", placements, cells.shape), block, grow=block // 2)
    return image


def to_ascii(grid: np.ndarray, marks: Mapping[Point, str] | None = None) -> str:
    """One line per row, ``#`` wall and ``.`` floor, lines joined by ``\\n``.

    ``marks`` maps ``(x, y)`` cells to single characters drawn instead.
    """
    cells = check_grid(grid)
    symbols = np.array([FLOOR_CHAR, WALL_CHAR])
    rows = symbols[cells].tolist()
    for (x, y), char in (marks or {}).items():
        if not isinstance(char, str) or len(char) != 1 or char in "\r\n":
            raise ValueError(f"a mark must be one character, got {char!r} at {(x, y)!r}")
        _points("marks", [(x, y)], cells.shape)
        rows[y][x] = char
    return "\n".join("".join(row) for row in rows)


def from_ascii(text: str) -> np.ndarray:
    """Parse ``to_ascii`` output (CRLF and one trailing newline tolerated)."""
    if not isinstance(text, str):
        raise ValueError(f"text must be a str, got {type(text).__name__}")
    lines = text.replace("\r\n", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if not lines or not lines[0]:
        raise ValueError("text holds no map rows")
    width = len(lines[0])
    grid = np.empty((len(lines), width), dtype=np.uint8)
    for y, line in enumerate(lines):
        if len(line) != width:
            raise ValueError(f"text row {y} has {len(line)} cells, expected {width}")
        for x, char in enumerate(line):
            if char == WALL_CHAR:
                grid[y, x] = 1
            elif char == FLOOR_CHAR:
                grid[y, x] = 0
            else:
                raise ValueError(f"text has {char!r} at row {y}, column {x}; expected '#' or '.'")
    return grid


def tileset_image(tile_size: int = 16) -> Image.Image:
    """The two-tile strip the Tiled export refers to: floor (white), then wall (black)."""
    tile_size = check_int("tile_size", tile_size, 1)
    strip = np.full((tile_size, 2 * tile_size), FLOOR_SHADE, dtype=np.uint8)
    strip[:, tile_size:] = WALL_SHADE
    return Image.fromarray(strip, mode="L")


def to_tiled_json(
    grid: np.ndarray,
    tile_size: int = 16,
    tileset_image_path: str = "entityworks_tiles.png",
    layer_name: str = "map",
) -> dict[str, Any]:
    """A Tiled JSON map (as a dict ready for ``json.dump``) with one tile layer."""
    cells = check_grid(grid)
    tile_size = check_int("tile_size", tile_size, 1)
    height, width = cells.shape
    data = np.where(cells == 1, WALL_GID, FLOOR_GID).ravel().tolist()
    return {
        "type": "map",
        "version": TILED_VERSION,
        "tiledversion": TILED_EDITOR_VERSION,
        "orientation": "orthogonal",
        "renderorder": "right-down",
        "compressionlevel": -1,
        "infinite": False,
        "width": width,
        "height": height,
        "tilewidth": tile_size,
        "tileheight": tile_size,
        "nextlayerid": 2,
        "nextobjectid": 1,
        "layers": [
            {
                "id": 1,
                "name": layer_name,
                "type": "tilelayer",
                "x": 0,
                "y": 0,
                "width": width,
                "height": height,
                "opacity": 1,
                "visible": True,
                "data": data,
            }
        ],
        "tilesets": [
            {
                "firstgid": FLOOR_GID,
                "name": "entityworks",
                "image": tileset_image_path,
                "imagewidth": 2 * tile_size,
                "imageheight": tile_size,
                "tilewidth": tile_size,
                "tileheight": tile_size,
                "tilecount": 2,
                "columns": 2,
                "margin": 0,
                "spacing": 0,
            }
        ],
    }


def write_tiled(grid: np.ndarray, path: str | os.PathLike[str], tile_size: int = 16) -> Path:
    """Write ``path`` (Tiled JSON) and its tileset PNG beside it; returns the PNG's path."""
    target = Path(path)
    image_path = target.with_name(target.stem + "_tiles.png")
    document = to_tiled_json(grid, tile_size, image_path.name)
    tileset_image(tile_size).save(image_path, format="PNG")
    target.write_text(json.dumps(document, separators=(",", ":")), encoding="utf-8")
    return image_path

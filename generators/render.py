"""Turn maps into pictures and files: PNG, ASCII and Tiled JSON.

PNG follows the cave generator's bitmap export (seed 002): every cell is a ``block`` x
``block`` square, walls black on white floor. Given a ``visible`` mask (from
``generators.fov.visible``) the floor outside it is drawn grey, as fog. We write an
8-bit greyscale PNG with Pillow instead of a GDI+ bitmap.

ASCII uses ``#`` for wall and ``.`` for floor, one text line per map row, the symbols
of the *MapHandler* console print (seed 001); ``from_ascii`` reads it back.

``to_tiled_json`` builds a map for the Tiled editor: orthogonal, one tile layer, and one
embedded two-tile tileset (tile 1 floor, tile 2 wall) whose image ``write_tiled`` saves
beside the JSON, so Tiled opens the pair as is.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import IO, Any

import numpy as np
from PIL import Image

from generators._rng import check_grid, check_int

FLOOR_SHADE = 255
WALL_SHADE = 0
FOG_SHADE = 128

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


def to_image(grid: np.ndarray, block: int = 5, visible: np.ndarray | None = None) -> Image.Image:
    """Greyscale picture of the map, ``block`` pixels per cell side."""
    block = check_int("block", block, 1)
    shades = _shades(grid, visible)
    pixels = np.repeat(np.repeat(shades, block, axis=0), block, axis=1)
    return Image.fromarray(pixels, mode="L")


def to_png(
    grid: np.ndarray,
    path: str | os.PathLike[str] | IO[bytes],
    block: int = 5,
    visible: np.ndarray | None = None,
) -> None:
    """Write the map as a PNG of ``(width * block) x (height * block)`` pixels."""
    to_image(grid, block, visible).save(path, format="PNG", optimize=True)


def to_ascii(grid: np.ndarray) -> str:
    """One line per row, ``#`` wall and ``.`` floor, lines joined by ``\\n``."""
    cells = check_grid(grid)
    symbols = np.array([FLOOR_CHAR, WALL_CHAR])
    return "\n".join("".join(row) for row in symbols[cells].tolist())


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

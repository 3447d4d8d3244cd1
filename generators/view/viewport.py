"""The game view: which part of the map is on screen (seed 003, "Creating a RogueLike
Game View").

The view's top-left corner is the player position minus half the view size, pushed
back inside the map when it would show space beyond an edge, so the player is centred
except near the edges.

Deliberate difference from the C#: it assumes the view is smaller than the map; when it
is not, its correction pushes the origin to ``map - view`` (negative), pinning the map
to the view's right or bottom edge. We centre the map in the view instead: along an
axis where the view is at least as large as the map the origin is
``-((view - map) // 2)``, and ``view()`` fills the margin with wall.
"""

from __future__ import annotations

import numpy as np

from generators._checks import check_grid, check_int

Point = tuple[int, int]


def _pair(name: str, value: object, low: int) -> tuple[int, int]:
    if not isinstance(value, tuple | list) or len(value) != 2:
        raise ValueError(f"{name} must be a pair of integers, got {value!r}")
    return check_int(name, value[0], low), check_int(name, value[1], low)


def _axis(player: int, view: int, size: int) -> int:
    if view >= size:
        return -((view - size) // 2)
    start = player - view // 2
    return min(max(start, 0), size - view)


def origin(player: Point, view_size: tuple[int, int], map_size: tuple[int, int]) -> Point:
    """Top-left map cell ``(x, y)`` of a ``view_size = (width, height)`` view.

    ``player`` must lie on the ``map_size = (width, height)`` map.
    """
    view_w, view_h = _pair("view_size", view_size, 1)
    map_w, map_h = _pair("map_size", map_size, 1)
    px, py = _pair("player", player, 0)
    if px >= map_w or py >= map_h:
        raise ValueError(f"player {player!r} is outside the {map_w}x{map_h} map")
    return _axis(px, view_w, map_w), _axis(py, view_h, map_h)


def view(grid: np.ndarray, player: Point, view_size: tuple[int, int], fill: int = 1) -> np.ndarray:
    """The cells on screen, shape ``(view_height, view_width)``; off-map cells are ``fill``."""
    cells = check_grid(grid)
    fill = check_int("fill", fill, 0, 1)
    height, width = cells.shape
    ox, oy = origin(player, view_size, (width, height))
    view_w, view_h = int(view_size[0]), int(view_size[1])
    out = np.full((view_h, view_w), fill, dtype=np.uint8)
    x0, y0 = max(ox, 0), max(oy, 0)
    x1, y1 = min(ox + view_w, width), min(oy + view_h, height)
    out[y0 - oy : y1 - oy, x0 - ox : x1 - ox] = cells[y0:y1, x0:x1]
    return out

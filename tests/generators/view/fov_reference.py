"""Pure-Python field of view: the reference the compiled views are checked against.

This is the interpreter version the project shipped before the views were compiled, kept
only as a test oracle (cell for cell, including ``libtcod_ties``, which it computes with
NumPy's ``float32`` scalars as libtcod computes with C's ``float``). It reads a window given
as nested lists and returns the lit cells as window coordinates.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

import numpy as np

_OCTANTS: tuple[tuple[int, int, int, int], ...] = (
    (1, 0, 0, 1),
    (0, 1, 1, 0),
    (0, 1, -1, 0),
    (-1, 0, 0, 1),
    (-1, 0, 0, -1),
    (0, -1, -1, 0),
    (0, -1, 1, 0),
    (1, 0, 0, -1),
)

#: Quadrants for the symmetric variant as (depth step, column step). The exact result
#: does not depend on the column orientation; this one matches libtcod's, which matters
#: only when reproducing its rounding (``libtcod_ties``).
_QUADRANTS: tuple[tuple[int, int, int, int], ...] = (
    (1, 0, 0, 1),  # east, columns run south
    (0, 1, 1, 0),  # south, columns run east
    (0, -1, -1, 0),  # north, columns run west
    (-1, 0, 0, -1),  # west, columns run north
)


def visible(
    grid: np.ndarray,
    origin: tuple[int, int],
    radius: int | None,
    light_walls: bool = True,
    symmetric: bool = False,
    libtcod_ties: bool = False,
) -> np.ndarray:
    """The reference view (no argument checks: tests pass valid arguments)."""
    height, width = grid.shape
    ox, oy = origin
    if radius is None:
        reach = max(ox, width - 1 - ox, oy, height - 1 - oy)
        radius_sq = 2 * reach * reach
    else:
        reach = radius
        radius_sq = reach * reach
    x0, y0 = max(0, ox - reach), max(0, oy - reach)
    x1, y1 = min(width, ox + reach + 1), min(height, oy + reach + 1)
    window = np.asarray(grid, dtype=np.uint8)[y0:y1, x0:x1].tolist()
    if symmetric:
        cast = _libtcod if libtcod_ties else _symmetric
        xs, ys = cast(window, ox - x0, oy - y0, reach, radius_sq, light_walls)
    else:
        xs, ys = _shadowcast(window, ox - x0, oy - y0, reach, radius_sq, light_walls)
    result = np.zeros((height, width), dtype=bool)
    if xs:
        result[np.array(ys) + y0, np.array(xs) + x0] = True
    result[oy, ox] = True
    return result


def _shadowcast(
    window: list[list[int]], ox: int, oy: int, reach: int, radius_sq: int, light_walls: bool
) -> tuple[list[int], list[int]]:
    """Plain shadowcasting on ``window``; returns the lit cells as window coordinates."""
    height, width = len(window), len(window[0])
    lit_x: list[int] = []
    lit_y: list[int] = []
    for ax, ay, dx, dy in _OCTANTS:
        stack = [(1, 1.0, 0.0)]
        while stack:
            depth, high, low = stack.pop()
            if high < low or depth > reach:
                continue
            row_x, row_y = ox + depth * dx, oy + depth * dy
            if not (0 <= row_x < width and 0 <= row_y < height):
                continue
            blocked = False
            near, far = depth - 0.5, depth + 0.5
            depth_sq = depth * depth
            # first angle whose square can reach the wedge: (a - 0.5) / far <= high
            angle = min(depth, int(high * far + 0.5) + 1)
            while angle >= 0:
                if (angle - 0.5) / far > high:
                    angle -= 1
                    continue
                tile_high = (angle + 0.5) / near
                if tile_high < low:
                    break
                x, y = row_x + angle * ax, row_y + angle * ay
                if 0 <= x < width and 0 <= y < height:
                    wall = window[y][x]
                    if angle * angle + depth_sq <= radius_sq and (light_walls or not wall):
                        lit_x.append(x)
                        lit_y.append(y)
                    if wall:
                        if not blocked:
                            stack.append((depth + 1, high, tile_high))
                            blocked = True
                    elif blocked:
                        high = (angle + 0.5) / far
                        blocked = False
                angle -= 1
            if not blocked:
                stack.append((depth + 1, high, low))
    return lit_x, lit_y


def _symmetric(
    window: list[list[int]],
    ox: int,
    oy: int,
    reach: int,
    radius_sq: int,
    light_walls: bool,
) -> tuple[list[int], list[int]]:
    """Symmetric shadowcasting; slopes are fractions ``num / den`` kept as integer pairs."""
    height, width = len(window), len(window[0])
    lit_x: list[int] = []
    lit_y: list[int] = []
    for ddx, ddy, cdx, cdy in _QUADRANTS:
        # (depth, low_num, low_den, high_num, high_den)
        stack = [(1, -1, 1, 1, 1)]
        while stack:
            depth, low_n, low_d, high_n, high_d = stack.pop()
            if depth > reach:
                continue
            row_x, row_y = ox + depth * ddx, oy + depth * ddy
            if not (0 <= row_x < width and 0 <= row_y < height):
                continue
            # round half up of depth * low, round half down of depth * high
            col_min = (2 * depth * low_n + low_d) // (2 * low_d)
            col_max = -((high_d - 2 * depth * high_n) // (2 * high_d))
            prev_wall = False
            for col in range(col_min, col_max + 1):
                x, y = row_x + col * cdx, row_y + col * cdy
                if not (0 <= x < width and 0 <= y < height):
                    continue
                wall = bool(window[y][x])
                dist_sq = depth * depth + col * col
                if dist_sq <= radius_sq and (
                    (wall and light_walls)
                    or (
                        not wall and col * low_d >= depth * low_n and col * high_d <= depth * high_n
                    )
                ):
                    lit_x.append(x)
                    lit_y.append(y)
                if prev_wall and not wall:
                    low_n, low_d = 2 * col - 1, 2 * depth
                if wall and not prev_wall and col != col_min:
                    stack.append((depth + 1, low_n, low_d, 2 * col - 1, 2 * depth))
                prev_wall = wall
            if not prev_wall:
                stack.append((depth + 1, low_n, low_d, high_n, high_d))
    return lit_x, lit_y


_F32 = np.float32


def _roundf(value: np.float32) -> int:
    """C's ``roundf``: halves away from zero (``ROUND_HALF_UP`` in ``decimal``'s terms), on
    the exact value of the single-precision number."""
    return int(Decimal(float(value)).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def _libtcod(
    window: list[list[int]], ox: int, oy: int, reach: int, radius_sq: int, light_walls: bool
) -> tuple[list[int], list[int]]:
    """Symmetric shadowcasting in libtcod's single-precision arithmetic
    (``FOV_SYMMETRIC_SHADOWCAST``): NumPy ``float32`` scalars for its ``float`` slopes."""
    height, width = len(window), len(window[0])
    eps = _F32(np.finfo(np.float32).eps)
    up, down = _F32(1) + eps, _F32(1) - eps
    lit_x: list[int] = []
    lit_y: list[int] = []
    for ddx, ddy, cdx, cdy in _QUADRANTS:
        stack: list[tuple[int, np.float32, np.float32]] = [(1, _F32(-1), _F32(1))]
        while stack:
            depth, low, high = stack.pop()
            if depth > reach:
                continue
            row_x, row_y = ox + depth * ddx, oy + depth * ddy
            if not (0 <= row_x < width and 0 <= row_y < height):
                continue
            fdepth = _F32(depth)
            col_min = _roundf(_F32(fdepth * low) * up)
            col_max = _roundf(_F32(fdepth * high) * down)
            prev_wall = False
            for col in range(col_min, col_max + 1):
                x, y = row_x + col * cdx, row_y + col * cdy
                if not (0 <= x < width and 0 <= y < height):
                    continue
                wall = bool(window[y][x])
                centre_in = _F32(col) >= fdepth * low and _F32(col) <= fdepth * high
                if depth * depth + col * col <= radius_sq and (
                    (wall and light_walls) or (not wall and centre_in)
                ):
                    lit_x.append(x)
                    lit_y.append(y)
                edge = (_F32(2) * _F32(col) - _F32(1)) / (_F32(2) * fdepth)
                if prev_wall and not wall:
                    low = edge
                if wall and not prev_wall and col != col_min:
                    stack.append((depth + 1, low, edge))
                prev_wall = wall
            if not prev_wall:
                stack.append((depth + 1, low, high))
    return lit_x, lit_y

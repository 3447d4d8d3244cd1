"""Compiled shadowcasting for :mod:`generators.view.shadowcast` (internal engine).

The two views, plain and symmetric, compiled by numba (see :mod:`generators._compiled.jit`),
and their one C entry point (:func:`native_entry`), which :mod:`generators.view.shadowcast`
calls through :mod:`generators._compiled.native`: a fresh process loads its machine code
without importing numba.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import types
from numba.np.numpy_support import carray

from generators._compiled.jit import array_data, cfunc, jit
from generators._compiled.jit import py_object as _object
from generators.view.shadowcast import OCTANTS, QUADRANTS


@jit
def _bad_values(cells, x0, y0, x1, y1):  # type: ignore[no-untyped-def]
    """True when the window holds a value other than 0 and 1 (row slices vectorise)."""
    worst = np.uint8(0)
    for y in range(y0, y1):
        row = cells[y, x0:x1]
        for i in range(row.shape[0]):
            worst |= row[i]
    return worst > 1


@jit
def _cast_plain(cells, x0, y0, x1, y1, ox, oy, reach, radius_sq, light_walls, out, dx, dy,  # type: ignore[no-untyped-def]
                depths, highs, lows):  # fmt: skip
    """Plain shadowcasting over eight octants; False when the stack arrays overflowed.

    A row of an octant runs from the diagonal towards the axis; a cell is lit when any
    part of its square lies inside the wedge ``[low, high]``, a wall starts a narrower
    scan of the next row (pushed on the explicit stack) and floor after walls narrows
    the wedge again.
    """
    capacity = depths.shape[0]
    for octant in range(8):
        ax = OCTANTS[octant, 0]
        ay = OCTANTS[octant, 1]
        sx = OCTANTS[octant, 2]
        sy = OCTANTS[octant, 3]
        depths[0] = 1
        highs[0] = 1.0
        lows[0] = 0.0
        top = 1
        while top > 0:
            top -= 1
            depth = depths[top]
            high = highs[top]
            low = lows[top]
            if high < low or depth > reach:
                continue
            row_x = ox + depth * sx
            row_y = oy + depth * sy
            if not (x0 <= row_x < x1 and y0 <= row_y < y1):
                continue
            blocked = False
            near = depth - 0.5
            far = depth + 0.5
            depth_sq = depth * depth
            angle = min(depth, int(high * far + 0.5) + 1)
            while angle >= 0:
                if (angle - 0.5) / far > high:
                    angle -= 1
                    continue
                tile_high = (angle + 0.5) / near
                if tile_high < low:
                    break
                x = row_x + angle * ax
                y = row_y + angle * ay
                if x0 <= x < x1 and y0 <= y < y1:
                    wall = cells[y, x] != 0
                    if angle * angle + depth_sq <= radius_sq and (light_walls or not wall):
                        out[y - dy, x - dx] = True
                    if wall:
                        if not blocked:
                            if top == capacity:
                                return False
                            depths[top] = depth + 1
                            highs[top] = high
                            lows[top] = tile_high
                            top += 1
                            blocked = True
                    elif blocked:
                        high = (angle + 0.5) / far
                        blocked = False
                angle -= 1
            if not blocked:
                if top == capacity:
                    return False
                depths[top] = depth + 1
                highs[top] = high
                lows[top] = low
                top += 1
    return True


@jit
def _shadowcast(cells, unchecked, x0, y0, x1, y1, ox, oy, reach, radius_sq, light_walls,  # type: ignore[no-untyped-def]
                out, dx, dy):  # fmt: skip
    """Plain view into ``out``; returns 1 on a bad cell value, else 0.

    The stack starts small and, in the rare view that needs more, the scan runs again
    with four times the room (lighting is idempotent, so a partial first pass is harmless).
    """
    if unchecked and _bad_values(cells, x0, y0, x1, y1):
        return 1
    out[oy - dy, ox - dx] = True
    capacity = 64
    while True:
        depths = np.empty(capacity, dtype=np.int64)
        highs = np.empty(capacity, dtype=np.float64)
        lows = np.empty(capacity, dtype=np.float64)
        if _cast_plain(cells, x0, y0, x1, y1, ox, oy, reach, radius_sq, light_walls, out,
                       dx, dy, depths, highs, lows):  # fmt: skip
            return 0
        capacity *= 4


@jit
def _negative_half(num, den):  # type: ignore[no-untyped-def]
    """1 when ``num / den`` (``den > 0``) is a negative half-integer such as -2.5, else 0."""
    twice = 2 * num
    if num < 0 and twice % den == 0 and (twice // den) % 2 != 0:
        return 1
    return 0


@jit
def _cast_symmetric(cells, x0, y0, x1, y1, ox, oy, reach, radius_sq, light_walls, ties,  # type: ignore[no-untyped-def]
                    out, dx, dy, stack):  # fmt: skip
    """Symmetric shadowcasting over four quadrants; False when ``stack`` overflowed.

    Slopes are exact fractions ``n / d``. A floor cell is lit only when its centre lies in
    the sector, a wall when its square is reached.
    """
    capacity = stack.shape[0]
    for quadrant in range(4):
        ddx = QUADRANTS[quadrant, 0]
        ddy = QUADRANTS[quadrant, 1]
        cdx = QUADRANTS[quadrant, 2]
        cdy = QUADRANTS[quadrant, 3]
        stack[0, 0] = 1  # depth, low_n, low_d, high_n, high_d
        stack[0, 1] = -1
        stack[0, 2] = 1
        stack[0, 3] = 1
        stack[0, 4] = 1
        top = 1
        while top > 0:
            top -= 1
            depth = stack[top, 0]
            low_n = stack[top, 1]
            low_d = stack[top, 2]
            high_n = stack[top, 3]
            high_d = stack[top, 4]
            if depth > reach:
                continue
            row_x = ox + depth * ddx
            row_y = oy + depth * ddy
            if not (x0 <= row_x < x1 and y0 <= row_y < y1):
                continue
            # round half up of depth * low, round half down of depth * high
            col_min = (2 * depth * low_n + low_d) // (2 * low_d)
            col_max = -((high_d - 2 * depth * high_n) // (2 * high_d))
            if ties:
                col_min -= _negative_half(depth * low_n, low_d)
                col_max += _negative_half(depth * high_n, high_d)
            prev_wall = False
            depth_sq = depth * depth
            for col in range(col_min, col_max + 1):
                x = row_x + col * cdx
                y = row_y + col * cdy
                if not (x0 <= x < x1 and y0 <= y < y1):
                    continue
                wall = cells[y, x] != 0
                if col * col + depth_sq <= radius_sq and (
                    (wall and light_walls)
                    or (
                        not wall and col * low_d >= depth * low_n and col * high_d <= depth * high_n
                    )
                ):
                    out[y - dy, x - dx] = True
                if prev_wall and not wall:
                    low_n = 2 * col - 1
                    low_d = 2 * depth
                if wall and not prev_wall and col != col_min:
                    if top == capacity:
                        return False
                    stack[top, 0] = depth + 1
                    stack[top, 1] = low_n
                    stack[top, 2] = low_d
                    stack[top, 3] = 2 * col - 1
                    stack[top, 4] = 2 * depth
                    top += 1
                prev_wall = wall
            if not prev_wall:
                if top == capacity:
                    return False
                stack[top, 0] = depth + 1
                stack[top, 1] = low_n
                stack[top, 2] = low_d
                stack[top, 3] = high_n
                stack[top, 4] = high_d
                top += 1
    return True


@jit
def _symmetric(cells, unchecked, x0, y0, x1, y1, ox, oy, reach, radius_sq, light_walls,  # type: ignore[no-untyped-def]
               ties, out, dx, dy):  # fmt: skip
    """Symmetric view into ``out``; returns 1 on a bad cell value, else 0 (stack as above)."""
    if unchecked and _bad_values(cells, x0, y0, x1, y1):
        return 1
    out[oy - dy, ox - dx] = True
    capacity = 64
    while True:
        stack = np.empty((capacity, 5), dtype=np.int64)
        if _cast_symmetric(cells, x0, y0, x1, y1, ox, oy, reach, radius_sq, light_walls, ties,
                           out, dx, dy, stack):  # fmt: skip
            return 0
        capacity *= 4


def _entry(block):  # type: ignore[no-untyped-def]
    (cells, out, height, width, out_height, out_width, x0, y0, x1, y1, ox, oy, reach,
     radius_sq, flags, dx, dy) = carray(block, (17,))  # fmt: skip
    grid = carray(array_data(cells), (height, width), np.uint8)
    view = carray(array_data(out), (out_height, out_width), np.bool_)
    unchecked, light_walls = (flags & 1) != 0, (flags & 2) != 0
    if flags & 4:
        return _symmetric(grid, unchecked, x0, y0, x1, y1, ox, oy, reach, radius_sq, light_walls,
                          (flags & 8) != 0, view, dx, dy)  # fmt: skip
    return _shadowcast(grid, unchecked, x0, y0, x1, y1, ox, oy, reach, radius_sq, light_walls,
                       view, dx, dy)  # fmt: skip


def native_entry(cache: bool = True) -> Any:
    """One view as a C function ``int64 f(int64 *block)`` for :mod:`generators._compiled.native`.

    ``block`` holds ``id(cells), id(out), height, width, out_height, out_width, x0, y0,
    x1, y1, ox, oy, reach, radius_sq, flags, dx, dy``: ``cells`` (``uint8``) and ``out``
    (``bool``) are C-contiguous arrays the caller keeps alive, read through their objects
    (:func:`generators._compiled.jit.array_data`); ``flags`` has bit 0 unchecked, 1 light_walls,
    2 symmetric, 3 libtcod ties. Returns 1 on a bad cell value, else 0.
    """
    return cfunc(types.int64(types.CPointer(types.int64)), _entry, cache)


def python_entry(values: list[int]) -> int:
    """:func:`_entry` under ``NUMBA_DISABLE_JIT`` (numba's debugging mode, where nothing is
    compiled): the same call on the array objects the block names."""
    (cells, out, _, _, _, _, x0, y0, x1, y1, ox, oy, reach, radius_sq, flags, dx,
     dy) = values[:17]  # fmt: skip
    grid, view = _object(cells), _object(out)
    unchecked, light_walls = (flags & 1) != 0, (flags & 2) != 0
    if flags & 4:
        return int(_symmetric(grid, unchecked, x0, y0, x1, y1, ox, oy, reach, radius_sq,
                              light_walls, (flags & 8) != 0, view, dx, dy))  # fmt: skip
    return int(_shadowcast(grid, unchecked, x0, y0, x1, y1, ox, oy, reach, radius_sq,
                           light_walls, view, dx, dy))  # fmt: skip

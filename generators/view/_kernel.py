"""Compiled shadowcasting for :mod:`generators.view._shadowcast` (internal engine).

The two views, plain and symmetric, compiled by numba (see :mod:`generators._compiled.jit`),
and their one C entry point (:func:`native_entry`), which :mod:`generators.view._shadowcast`
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
from generators.view._shadowcast import OCTANTS, QUADRANTS


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
    """Plain shadowcasting over eight octants: the deepest row scanned (every lit cell is
    within that many steps of the origin on both axes), or -1 when the stack arrays
    overflowed.

    A row of an octant runs from the diagonal towards the axis; a cell is lit when any
    part of its square lies inside the wedge ``[low, high]``, a wall starts a narrower
    scan of the next row (pushed on the explicit stack) and floor after walls narrows
    the wedge again.
    """
    capacity = depths.shape[0]
    deepest = 0
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
            if depth > deepest:
                deepest = depth
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
                                return -1
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
                    return -1
                depths[top] = depth + 1
                highs[top] = high
                lows[top] = low
                top += 1
    return deepest


@jit
def _shadowcast(cells, unchecked, x0, y0, x1, y1, ox, oy, reach, radius_sq, light_walls,  # type: ignore[no-untyped-def]
                out, dx, dy):  # fmt: skip
    """Plain view into ``out``: the deepest row scanned, or -1 on a bad cell value.

    The stack starts small and, in the rare view that needs more, the scan runs again
    with four times the room (lighting is idempotent, so a partial first pass is harmless).
    """
    if unchecked and _bad_values(cells, x0, y0, x1, y1):
        return -1
    out[oy - dy, ox - dx] = True
    capacity = 64
    while True:
        depths = np.empty(capacity, dtype=np.int64)
        highs = np.empty(capacity, dtype=np.float64)
        lows = np.empty(capacity, dtype=np.float64)
        deepest = _cast_plain(cells, x0, y0, x1, y1, ox, oy, reach, radius_sq, light_walls,
                              out, dx, dy, depths, highs, lows)  # fmt: skip
        if deepest >= 0:
            return deepest
        capacity *= 4


@jit
def _cast_symmetric(cells, x0, y0, x1, y1, ox, oy, reach, radius_sq, light_walls,  # type: ignore[no-untyped-def]
                    out, dx, dy, stack):  # fmt: skip
    """Symmetric shadowcasting over four quadrants: the deepest row scanned, or -1 when
    ``stack`` overflowed.

    Slopes are exact fractions ``n / d``. A floor cell is lit only when its centre lies in
    the sector, a wall when its square is reached.
    """
    capacity = stack.shape[0]
    deepest = 0
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
            if depth > deepest:
                deepest = depth
            # round half up of depth * low, round half down of depth * high
            col_min = (2 * depth * low_n + low_d) // (2 * low_d)
            col_max = -((high_d - 2 * depth * high_n) // (2 * high_d))
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
                        return -1
                    stack[top, 0] = depth + 1
                    stack[top, 1] = low_n
                    stack[top, 2] = low_d
                    stack[top, 3] = 2 * col - 1
                    stack[top, 4] = 2 * depth
                    top += 1
                prev_wall = wall
            if not prev_wall:
                if top == capacity:
                    return -1
                stack[top, 0] = depth + 1
                stack[top, 1] = low_n
                stack[top, 2] = low_d
                stack[top, 3] = high_n
                stack[top, 4] = high_d
                top += 1
    return deepest


@jit
def _round_float(value):  # type: ignore[no-untyped-def]
    """C's ``roundf`` of a ``float32`` (half away from zero), as an integer; in double
    precision, where adding 0.5 to a single-precision value is exact."""
    wide = np.float64(value)
    if wide < 0:
        return -int(np.floor(-wide + 0.5))
    return int(np.floor(wide + 0.5))


@jit
def _cast_libtcod(cells, x0, y0, x1, y1, ox, oy, reach, radius_sq, light_walls,  # type: ignore[no-untyped-def]
                  out, dx, dy, depths, lows, highs):  # fmt: skip
    """:func:`_cast_symmetric` in libtcod's arithmetic (``FOV_SYMMETRIC_SHADOWCAST``):
    single-precision slopes ``(2c - 1) / (2d)``, a row's bounds as ``roundf(d * slope *
    (1 +/- FLT_EPSILON))`` and the centre test ``c >= d * low`` in single precision. The
    slopes are kept as ``float32`` values in double arrays (exactly). Returns the deepest
    row scanned, or -1 when the stack overflowed.
    """
    capacity = depths.shape[0]
    up = np.float32(1.0000001192092896)  # 1 + FLT_EPSILON
    down = np.float32(0.9999998807907104)  # 1 - FLT_EPSILON
    one = np.float32(1.0)
    two = np.float32(2.0)
    deepest = 0
    for quadrant in range(4):
        ddx = QUADRANTS[quadrant, 0]
        ddy = QUADRANTS[quadrant, 1]
        cdx = QUADRANTS[quadrant, 2]
        cdy = QUADRANTS[quadrant, 3]
        depths[0] = 1
        lows[0] = -1.0
        highs[0] = 1.0
        top = 1
        while top > 0:
            top -= 1
            depth = depths[top]
            low = np.float32(lows[top])
            high = np.float32(highs[top])
            if depth > reach:
                continue
            row_x = ox + depth * ddx
            row_y = oy + depth * ddy
            if not (x0 <= row_x < x1 and y0 <= row_y < y1):
                continue
            if depth > deepest:
                deepest = depth
            # every product and quotient is rounded to float32 explicitly, as C rounds
            # each float operation (exact in double first: products of two float32 fit, and
            # a quotient rounded twice this way is still the float32 one)
            fdepth = np.float32(depth)
            twice_depth = two * fdepth
            low_edge = np.float32(fdepth * low)
            high_edge = np.float32(fdepth * high)
            col_min = _round_float(np.float32(low_edge * up))
            col_max = _round_float(np.float32(high_edge * down))
            prev_wall = False
            depth_sq = depth * depth
            for col in range(col_min, col_max + 1):
                x = row_x + col * cdx
                y = row_y + col * cdy
                if not (x0 <= x < x1 and y0 <= y < y1):
                    continue
                wall = cells[y, x] != 0
                if col * col + depth_sq <= radius_sq and (
                    (wall and light_walls) or (not wall and col >= low_edge and col <= high_edge)
                ):
                    out[y - dy, x - dx] = True
                if prev_wall and not wall:
                    low = np.float32((two * np.float32(col) - one) / twice_depth)
                    low_edge = np.float32(fdepth * low)
                if wall and not prev_wall and col != col_min:
                    if top == capacity:
                        return -1
                    depths[top] = depth + 1
                    lows[top] = low
                    highs[top] = np.float32((two * np.float32(col) - one) / twice_depth)
                    top += 1
                prev_wall = wall
            if not prev_wall:
                if top == capacity:
                    return -1
                depths[top] = depth + 1
                lows[top] = low
                highs[top] = high
                top += 1
    return deepest


@jit
def _symmetric(cells, unchecked, x0, y0, x1, y1, ox, oy, reach, radius_sq, light_walls,  # type: ignore[no-untyped-def]
               ties, out, dx, dy):  # fmt: skip
    """Symmetric view into ``out``: the deepest row scanned, or -1 on a bad cell value
    (stack as above). ``ties`` computes in libtcod's arithmetic (:func:`_cast_libtcod`)."""
    if unchecked and _bad_values(cells, x0, y0, x1, y1):
        return -1
    out[oy - dy, ox - dx] = True
    capacity = 64
    while True:
        if ties:
            depths = np.empty(capacity, dtype=np.int64)
            lows = np.empty(capacity, dtype=np.float64)
            highs = np.empty(capacity, dtype=np.float64)
            deepest = _cast_libtcod(cells, x0, y0, x1, y1, ox, oy, reach, radius_sq,
                                    light_walls, out, dx, dy, depths, lows, highs)  # fmt: skip
        else:
            stack = np.empty((capacity, 5), dtype=np.int64)
            deepest = _cast_symmetric(cells, x0, y0, x1, y1, ox, oy, reach, radius_sq,
                                      light_walls, out, dx, dy, stack)  # fmt: skip
        if deepest >= 0:
            return deepest
        capacity *= 4


def _entry(block):  # type: ignore[no-untyped-def]
    (cells, out, height, width, out_height, out_width, x0, y0, x1, y1, ox, oy, reach,
     radius_sq, flags, dx, dy) = carray(block, (17,))  # fmt: skip
    grid = carray(array_data(cells), (height, width), np.uint8)
    view = carray(array_data(out), (out_height, out_width), np.bool_)
    unchecked, light_walls = (flags & 1) != 0, (flags & 2) != 0
    if flags & 4:
        deepest = _symmetric(grid, unchecked, x0, y0, x1, y1, ox, oy, reach, radius_sq,
                             light_walls, (flags & 8) != 0, view, dx, dy)  # fmt: skip
    else:
        deepest = _shadowcast(grid, unchecked, x0, y0, x1, y1, ox, oy, reach, radius_sq,
                              light_walls, view, dx, dy)  # fmt: skip
    return 1 if deepest < 0 else 0


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
        deepest = _symmetric(grid, unchecked, x0, y0, x1, y1, ox, oy, reach, radius_sq,
                             light_walls, (flags & 8) != 0, view, dx, dy)  # fmt: skip
    else:
        deepest = _shadowcast(grid, unchecked, x0, y0, x1, y1, ox, oy, reach, radius_sq,
                              light_walls, view, dx, dy)  # fmt: skip
    return 1 if deepest < 0 else 0


# --- the reusable view (generators.view.field.FieldOfView) ------------------------------------


@jit
def _field(cells, out, lit, ox, oy, radius, light_walls, symmetric, ties):  # type: ignore[no-untyped-def]
    """One view of a :class:`~generators.view.field.FieldOfView` into its full-size ``out``.

    ``cells`` was checked to hold 0/1 when the view was made, so nothing is checked here.
    ``lit`` (``x0, y0, x1, y1``) is the window the previous view may have lit: only that
    window is cleared, then this view's is written back, so a radius-10 view on a big map
    touches a few hundred cells, not the map. ``radius < 0`` is unlimited. Returns 1 for an
    origin off the map (the caller checks it first), else 0.
    """
    height, width = cells.shape
    # the window is clipped: whatever ``lit`` holds, only the map is ever written
    cx0, cy0 = max(0, lit[0]), max(0, lit[1])
    cx1, cy1 = min(width, lit[2]), min(height, lit[3])
    for y in range(cy0, cy1):
        out[y, cx0:cx1] = False
    lit[0] = lit[1] = lit[2] = lit[3] = 0
    if not (0 <= ox < width and 0 <= oy < height):
        return 1
    if radius < 0 or radius > width + height:  # beyond every cell of the map: unlimited
        reach = max(ox, width - 1 - ox, oy, height - 1 - oy)
        radius_sq = 2 * reach * reach
    else:
        reach = radius
        radius_sq = radius * radius
    x0, y0 = max(0, ox - reach), max(0, oy - reach)
    x1, y1 = min(width, ox + reach + 1), min(height, oy + reach + 1)
    if symmetric != 0:
        deepest = _symmetric(cells, False, x0, y0, x1, y1, ox, oy, reach, radius_sq,
                             light_walls != 0, ties != 0, out, 0, 0)  # fmt: skip
    else:
        deepest = _shadowcast(cells, False, x0, y0, x1, y1, ox, oy, reach, radius_sq,
                              light_walls != 0, out, 0, 0)  # fmt: skip
    lit[0], lit[1] = max(x0, ox - deepest), max(y0, oy - deepest)
    lit[2], lit[3] = min(x1, ox + deepest + 1), min(y1, oy + deepest + 1)
    return 0


def _field_entry(block):  # type: ignore[no-untyped-def]
    (cells, out, lit, height, width, ox, oy, radius, light_walls, symmetric,
     ties) = carray(block, (11,))  # fmt: skip
    grid = carray(array_data(cells), (height, width), np.uint8)
    view = carray(array_data(out), (height, width), np.bool_)
    window = carray(array_data(lit), (4,), np.int64)
    return _field(grid, view, window, ox, oy, radius, light_walls, symmetric, ties)


def native_field_entry(cache: bool = True) -> Any:
    """The reusable view as a C function ``int64 f(int64 *block)``.

    ``block`` holds ``id(cells), id(out), id(lit), height, width, ox, oy, radius,
    light_walls, symmetric, ties``: ``cells`` (``uint8``, ``height x width``), ``out``
    (``bool``, the same shape) and ``lit`` (4 ``int64``) are C-contiguous arrays the caller
    keeps alive; ``radius`` -1 is unlimited; the three flags are 0 or 1 (packed as they
    come: no bit arithmetic per call). See :func:`_field`.
    """
    return cfunc(types.int64(types.CPointer(types.int64)), _field_entry, cache)


def python_field_entry(values: list[int]) -> int:
    """:func:`_field_entry` under ``NUMBA_DISABLE_JIT``: the same call on the block's arrays."""
    cells, out, lit, _, _, ox, oy, radius, light_walls, symmetric, ties = values[:11]
    return int(_field(_object(cells), _object(out), _object(lit), ox, oy, radius, light_walls,
                      symmetric, ties))  # fmt: skip

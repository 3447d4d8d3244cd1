"""Field of view by shadowcasting, after *FOVRecurse* (seed 003).

``visible(grid, origin, radius)`` returns a boolean mask of the cells seen from
``origin = (x, y)`` within the Euclidean ``radius`` (``dx*dx + dy*dy <= radius*radius``).
Walls block sight; a wall is itself visible when light reaches it (``light_walls``).

Plain variant (``symmetric=False``): recursive shadowcasting over eight octants. Each
octant is scanned row by row, moving away from the origin; in a row the cells run from
the diagonal towards the axis. A cell is lit when any part of its square lies inside the
current view wedge; a floor-to-wall change launches a narrower scan of the next row for
the open part, a wall-to-floor change narrows the wedge. Slopes of tile corners are
ratios of small integers, so double precision orders them exactly, and the result is
cell for cell that of libtcod's ``FOV_SHADOW`` (the tests check this on random caves).
The "recursion" is an explicit stack, so unlimited radii on big maps cannot hit Python's
recursion limit. Only the ``(2r+1)^2`` window around the origin is read, so the cost
does not grow with the map. Both variants are compiled with numba (cached on disk, see
:mod:`generators._jit`) and write straight into the result array.

Symmetric variant (``symmetric=True``): Albert Ford's symmetric shadowcasting, four
quadrants, exact integer arithmetic for the slopes. A floor cell is visible only when
its centre lies in the view sector, which makes sight symmetric between floor cells: if
floor A sees floor B then B sees A. Walls are visible when their square is reached.

Deliberate differences from the C# original:

* the origin cell is visible (the C# list leaves the player's own cell out);
* a cell is lit when its square overlaps the view wedge (the C# tests the slope of the
  cell centre against the wedge, and decides whether to scan the next row from the last
  cell of the row only, so it loses cells behind some wall corners);
* bounds are checked on the right axis in every octant (the C# octant 5 compares
  ``x + 1`` with the map height);
* ``radius=None`` means unlimited and ``light_walls=False`` hides walls, options the C#
  lacks; ``radius=0`` shows the origin alone (libtcod reads 0 as unlimited).
"""

from __future__ import annotations

import numpy as np

from generators._jit import jit
from generators._rng import check_bool, check_int

Point = tuple[int, int]

#: Octants as (angle step, distance step): every pairing of one axis direction for the
#: scan rows with a perpendicular one along the rows.
OCTANTS = np.array([
    (1, 0, 0, 1),
    (0, 1, 1, 0),
    (0, 1, -1, 0),
    (-1, 0, 0, 1),
    (-1, 0, 0, -1),
    (0, -1, -1, 0),
    (0, -1, 1, 0),
    (1, 0, 0, -1),
], dtype=np.int64)  # fmt: skip

#: Quadrants for the symmetric variant as (depth step, column step). The exact result
#: does not depend on the column orientation; this one matches libtcod's, which matters
#: only when reproducing its rounding (``libtcod_ties``).
QUADRANTS = np.array([
    (1, 0, 0, 1),  # east, columns run south
    (0, 1, 1, 0),  # south, columns run east
    (0, -1, -1, 0),  # north, columns run west
    (-1, 0, 0, -1),  # west, columns run north
], dtype=np.int64)  # fmt: skip


#: Windows larger than this (cells) are checked for 0/1 values by NumPy's vectorised max
#: before the view; smaller ones by the compiled view itself, which is faster up to about
#: this size (measured) and saves a call.
_NUMPY_CHECK = 40_000

_Args = tuple[np.ndarray, int, int, bool, int, int, int, int, int, int, int, int, bool, bool, bool]
"""Checked arguments of a view, in the coordinates of ``cells`` (see :func:`_check`)."""


def _check(
    grid: object,
    origin: object,
    radius: object,
    light_walls: object,
    symmetric: object,
    libtcod_ties: object,
) -> _Args:
    """Validate the arguments of :func:`visible` and work out the window.

    Returns ``(cells, shift_x, shift_y, unchecked, x0, y0, x1, y1, ox, oy, reach,
    radius_sq, light_walls, symmetric, libtcod_ties)``: ``cells`` is the map as ``uint8``
    (or only the window, converted, for other integer dtypes) whose cell ``[0, 0]`` is map
    cell ``(shift_x, shift_y)``; the window is ``cells[y0:y1, x0:x1]``; ``unchecked`` says
    that the compiled view must still check the window's values. Only the window that
    ``radius`` can reach is read, so only its values are checked: the cost of a small
    view does not grow with the map (``radius=None`` reads, and checks, the whole map).
    The common case (an ndarray, a tuple of ints, an int radius, real bools) takes a fast
    path: these checks cost more than a small view itself.
    """
    array = grid if type(grid) is np.ndarray else np.asarray(grid)
    shape = array.shape
    if len(shape) != 2 or shape[0] < 1 or shape[1] < 1:
        raise ValueError(f"grid must be a non-empty 2-D array, got shape {shape}")
    if type(light_walls) is not bool:
        light_walls = check_bool("light_walls", light_walls)
    if type(symmetric) is not bool:
        symmetric = check_bool("symmetric", symmetric)
    if type(libtcod_ties) is not bool:
        libtcod_ties = check_bool("libtcod_ties", libtcod_ties)
    height, width = shape
    if not (
        type(origin) is tuple
        and len(origin) == 2
        and type(origin[0]) is int
        and type(origin[1]) is int
    ) and (
        not isinstance(origin, tuple | list)
        or len(origin) != 2
        or not all(isinstance(v, int | np.integer) and not isinstance(v, bool) for v in origin)
    ):
        raise ValueError(f"origin must be an (x, y) pair of integers, got {origin!r}")
    ox, oy = int(origin[0]), int(origin[1])
    if not (0 <= ox < width and 0 <= oy < height):
        raise ValueError(f"origin {origin!r} is outside the {width}x{height} map")
    if radius is None:
        reach = max(ox, width - 1 - ox, oy, height - 1 - oy)
        radius_sq = 2 * reach * reach
    else:
        reach = radius if type(radius) is int and radius >= 0 else check_int("radius", radius, 0)
        radius_sq = reach * reach
    x0 = ox - reach if ox > reach else 0
    y0 = oy - reach if oy > reach else 0
    x1 = min(width, ox + reach + 1)
    y1 = min(height, oy + reach + 1)
    kind = array.dtype
    if kind == np.uint8:
        unchecked = (x1 - x0) * (y1 - y0) <= _NUMPY_CHECK
        if not unchecked and array[y0:y1, x0:x1].max() > 1:
            raise ValueError("grid must hold only 0 (floor) and 1 (wall)")
        return (array, 0, 0, unchecked, x0, y0, x1, y1, ox, oy, reach, radius_sq,
                light_walls, symmetric, libtcod_ties)  # fmt: skip
    if kind == np.bool_:
        return (array.view(np.uint8), 0, 0, False, x0, y0, x1, y1, ox, oy, reach,
                radius_sq, light_walls, symmetric, libtcod_ties)  # fmt: skip
    if not np.issubdtype(kind, np.integer):
        raise ValueError(f"grid must hold integers 0 (floor) and 1 (wall), got {kind}")
    part = array[y0:y1, x0:x1]  # other integer types: convert (and check) the window only
    if part.min() < 0 or part.max() > 1:
        raise ValueError("grid must hold only 0 (floor) and 1 (wall)")
    return (part.astype(np.uint8), x0, y0, False, 0, 0, x1 - x0, y1 - y0, ox - x0,
            oy - y0, reach, radius_sq, light_walls, symmetric, libtcod_ties)  # fmt: skip


def _run(args: _Args, out: np.ndarray, out_x: int, out_y: int) -> None:
    """Fill ``out`` (whose cell ``[0, 0]`` is map cell ``(out_x, out_y)``) with the view."""
    (cells, shift_x, shift_y, unchecked, x0, y0, x1, y1, ox, oy, reach, radius_sq,
     light_walls, symmetric, ties) = args  # fmt: skip
    if symmetric:
        status = _symmetric(cells, unchecked, x0, y0, x1, y1, ox, oy, reach, radius_sq,
                            light_walls, ties, out, out_x - shift_x, out_y - shift_y)  # fmt: skip
    else:
        status = _shadowcast(cells, unchecked, x0, y0, x1, y1, ox, oy, reach, radius_sq,
                             light_walls, out, out_x - shift_x, out_y - shift_y)  # fmt: skip
    if status:
        raise ValueError("grid must hold only 0 (floor) and 1 (wall)")


def visible(
    grid: np.ndarray,
    origin: Point,
    radius: int | None,
    light_walls: bool = True,
    symmetric: bool = False,
    *,
    libtcod_ties: bool = False,
) -> np.ndarray:
    """Boolean mask, shaped like ``grid``, of the cells visible from ``origin``.

    ``libtcod_ties`` (symmetric variant only, for cross-checking) reproduces how libtcod
    rounds a row's column bounds when they fall on a negative half-integer: its
    ``roundf(n * (1 +/- FLT_EPSILON))`` rounds those away from zero for the low bound and
    towards zero for the high bound, where the algorithm (and we) round half up and half
    down. On maps of ordinary size that is the only difference between the two; hundreds
    of cells from the origin libtcod's single-precision slopes also move a few cells.

    Only the square of side ``2 * radius + 1`` around ``origin`` is read (and checked to
    hold 0/1). With a small radius on a big map, clearing the full-size result costs more
    than the view itself: :func:`visible_window` returns just the window.
    """
    args = _check(grid, origin, radius, light_walls, symmetric, libtcod_ties)
    result = np.zeros(np.shape(grid), dtype=bool)
    _run(args, result, 0, 0)
    return result


def visible_window(
    grid: np.ndarray,
    origin: Point,
    radius: int | None,
    light_walls: bool = True,
    symmetric: bool = False,
    *,
    libtcod_ties: bool = False,
) -> tuple[np.ndarray, Point]:
    """:func:`visible` for the window the radius can reach: ``(mask, (x0, y0))``.

    ``mask[j, i]`` is map cell ``(x0 + i, y0 + j)``; every cell outside the mask is unseen.
    The window is the square of side ``2 * radius + 1`` around ``origin``, cut at the
    map's edges, so neither the work nor the result grows with the map.
    """
    args = _check(grid, origin, radius, light_walls, symmetric, libtcod_ties)
    x0 = args[4] + args[1]
    y0 = args[5] + args[2]
    mask = np.zeros((args[7] - args[5], args[6] - args[4]), dtype=bool)
    _run(args, mask, x0, y0)
    return mask, (x0, y0)


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


from generators.explore import Explorer as Explorer  # noqa: E402  (stateful API, re-exported)

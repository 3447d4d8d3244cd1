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
does not grow with the map. Both variants are C, compiled when the package is built
(``generators/_native/_cfov.c``, which checks every array and number it is handed), and write
straight into the result array.

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

from generators._checks import check_bool, check_int
from generators._native._cfov import view as _c_view

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
    radius, light_walls, symmetric, libtcod_ties)``: ``cells`` is the map as ``uint8`` or
    ``bool`` (or only the window, converted, for other dtypes and layouts) whose cell
    ``[0, 0]`` is map cell ``(shift_x, shift_y)``; the window is ``cells[y0:y1, x0:x1]``;
    ``radius`` is -1 for unlimited; ``unchecked`` says that the compiled view must still
    check the window's values. Only the window that ``radius`` can reach is read, so only
    its values are checked: the cost of a small view does not grow with the map
    (``radius=None`` reads, and checks, the whole map).
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
        limit = -1
    else:
        reach = radius if type(radius) is int and radius >= 0 else check_int("radius", radius, 0)
        limit = reach
    x0 = ox - reach if ox > reach else 0
    y0 = oy - reach if oy > reach else 0
    x1 = min(width, ox + reach + 1)
    y1 = min(height, oy + reach + 1)
    kind = array.dtype
    if (kind == np.uint8 or kind == np.bool_) and array.flags.c_contiguous:
        # read in place; the compiled view checks a uint8 window for 0/1 values itself
        return (array, 0, 0, kind == np.uint8, x0, y0, x1, y1, ox, oy, reach, limit,
                light_walls, symmetric, libtcod_ties)  # fmt: skip
    if not (np.issubdtype(kind, np.integer) or kind == np.bool_):
        raise ValueError(f"grid must hold integers 0 (floor) and 1 (wall), got {kind}")
    # other integer types, and maps not laid out row after row: the window only, converted
    part = array[y0:y1, x0:x1]
    if part.min() < 0 or part.max() > 1:
        raise ValueError("grid must hold only 0 (floor) and 1 (wall)")
    return (np.ascontiguousarray(part, dtype=np.uint8), x0, y0, False, 0, 0, x1 - x0,
            y1 - y0, ox - x0, oy - y0, reach, limit, light_walls, symmetric,
            libtcod_ties)  # fmt: skip


def _run(args: _Args, out: np.ndarray, out_x: int, out_y: int) -> None:
    """Fill ``out`` (whose cell ``[0, 0]`` is map cell ``(out_x, out_y)``) with the view of
    checked arguments (see :func:`_check`)."""
    (cells, shift_x, shift_y, unchecked, _, _, _, _, ox, oy, _, radius, light_walls,
     symmetric, ties) = args  # fmt: skip
    _c_view(cells, out, ox, oy, radius, unchecked | light_walls << 1 | symmetric << 2
               | ties << 3, out_x - shift_x, out_y - shift_y)  # fmt: skip


_UINT8 = np.dtype(np.uint8)


def _everyday(grid: object, origin: object, radius: object, light_walls: object,
              symmetric: object, ties: object,
              whole: bool) -> tuple[np.ndarray, Point] | None:  # fmt: skip
    """The everyday view in one go: a C-contiguous ``uint8`` map, an ``(x, y)`` tuple of
    ints inside it, an int radius, real bools. Returns ``(mask, corner)`` (the full-size
    mask when ``whole``), or None for any other call, which :func:`_check` then validates
    and explains: at a few microseconds a view, the general path's checks would dominate.
    The compiled view checks the window's values (and, again, every argument)."""
    if not (type(grid) is np.ndarray and grid.dtype is _UINT8 and type(origin) is tuple
            and type(radius) is int and type(light_walls) is bool and type(symmetric) is bool
            and type(ties) is bool and len(origin) == 2 and radius >= 0
            and grid.ndim == 2 and grid.flags.c_contiguous):  # fmt: skip
        return None
    ox, oy = origin
    height, width = grid.shape
    if type(ox) is not int or type(oy) is not int or not (0 <= ox < width and 0 <= oy < height):
        return None
    if whole:
        out = np.zeros((height, width), dtype=bool)
        dx = dy = 0
    else:
        x0 = ox - radius if ox > radius else 0
        y0 = oy - radius if oy > radius else 0
        out = np.zeros((min(height, oy + radius + 1) - y0, min(width, ox + radius + 1) - x0),
                       dtype=bool)  # fmt: skip
        dx, dy = x0, y0
    _c_view(grid, out, ox, oy, radius, 1 | light_walls << 1 | symmetric << 2 | ties << 3,
               dx, dy)  # fmt: skip
    return out, (dx, dy)


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

    ``libtcod_ties`` (symmetric variant only, for cross-checking) computes in libtcod's
    arithmetic, so that the view equals its ``FOV_SYMMETRIC_SHADOWCAST`` cell for cell
    (within our radius, ``<=``, where libtcod cuts at ``<``): single-precision slopes, and
    a row's column bounds as ``roundf(n * (1 +/- FLT_EPSILON))``, which rounds a negative
    half-integer bound away from zero (low) or towards it (high) where the algorithm (and
    the default exact view) rounds half up and half down. On maps of ordinary size the
    rounding is the only difference; hundreds of cells from the origin the single-precision
    slopes also move the odd cell.

    Only the square of side ``2 * radius + 1`` around ``origin`` is read (and checked to
    hold 0/1). With a small radius on a big map, clearing the full-size result costs more
    than the view itself: :func:`visible_window` returns just the window.
    """
    fast = _everyday(grid, origin, radius, light_walls, symmetric, libtcod_ties, True)
    if fast is not None:
        return fast[0]
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
    fast = _everyday(grid, origin, radius, light_walls, symmetric, libtcod_ties, False)
    if fast is not None:
        return fast
    args = _check(grid, origin, radius, light_walls, symmetric, libtcod_ties)
    x0 = args[4] + args[1]
    y0 = args[5] + args[2]
    mask = np.zeros((args[7] - args[5], args[6] - args[4]), dtype=bool)
    _run(args, mask, x0, y0)
    return mask, (x0, y0)

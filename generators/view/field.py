"""A field of view kept between calls: one map, many origins (a game loop, a server).

:func:`generators.view._shadowcast.visible` takes the map on every call, so every call
checks the cells it reads for 0/1 values and allocates its result. A game computes the view
of the same map after every step: :class:`FieldOfView` checks and copies the map once, into
the layout the compiled view reads, keeps one full-size result and, per call, clears only
the window the previous view lit. A call is then the compiled view and little else::

    view = FieldOfView(grid)
    seen = view.compute((x, y), 10)           # plain, like libtcod's FOV_SHADOW
    seen = view.compute((x, y), None, symmetric=True)

The views are those of :func:`~generators.view._shadowcast.visible`, cell for cell, with the
same arguments. The result is the object's own buffer, read-only, overwritten by the next
call (as libtcod's ``Map.fov``): copy it to keep it. :attr:`FieldOfView.bounds` is the
window that may hold lit cells, for callers that only need that part (an explored-cells
memory, a screen).

One object serves one thread at a time: calls from several threads at once on the same
object compute garbage (never outside its buffers). Give each thread its own.
"""

from __future__ import annotations

import numpy as np

from generators._checks import check_bool, check_grid, check_int
from generators._native._cfov import Field as _CField

Point = tuple[int, int]


class FieldOfView:
    """The field of view of one map, computed from any origin, as often as needed.

    ``grid`` is the map, 1 for a wall (blocks sight) and 0 for floor, in any 2-D integer
    or bool array (or nested lists); it is checked and copied once, so later changes to
    ``grid`` do not reach the view: use :meth:`set_wall` (a door opening) or make a new
    object. :meth:`compute` gives the view from an origin; the arguments and the result are
    those of :func:`generators.view._shadowcast.visible`.
    """

    # ``_field`` (the compiled view) holds the buffers of ``_cells``, ``_out`` and ``_lit``
    # until it goes; ``_compute`` is its bound method
    __slots__ = ("_cells", "_compute", "_field", "_grid", "_height", "_lit", "_out",
                 "_visible", "_width")  # fmt: skip

    def __init__(self, grid: np.ndarray) -> None:
        cells = np.array(check_grid(grid), dtype=np.uint8, order="C", copy=True)
        self._height, self._width = cells.shape
        self._cells = cells
        self._out = np.zeros(cells.shape, dtype=bool)
        self._lit = np.zeros(4, dtype=np.int64)
        self._field = _CField(cells, self._out, self._lit)
        self._compute = self._field.compute
        self._grid = cells.view()
        self._grid.setflags(write=False)
        self._visible = self._out.view()
        self._visible.setflags(write=False)

    @property
    def grid(self) -> np.ndarray:
        """The map as the view sees it (read-only ``uint8``; 1 = wall, 0 = floor)."""
        return self._grid

    @property
    def shape(self) -> tuple[int, int]:
        """``(height, width)`` of the map."""
        return self._height, self._width

    @property
    def visible(self) -> np.ndarray:
        """The last view (read-only; all False before the first :meth:`compute`). It is the
        object's own buffer: the next call overwrites it."""
        return self._visible

    @property
    def bounds(self) -> tuple[int, int, int, int]:
        """``(x0, y0, x1, y1)``: every cell lit by the last view lies in
        ``visible[y0:y1, x0:x1]`` (all zero before the first view)."""
        x0, y0, x1, y1 = self._lit.tolist()
        return x0, y0, x1, y1

    def set_wall(self, x: int, y: int, wall: bool) -> None:
        """Make cell ``(x, y)`` a wall (``True``) or floor (``False``): a door opening or
        closing. The current :attr:`visible` is not recomputed."""
        x = check_int("x", x, 0, self._width - 1)
        y = check_int("y", y, 0, self._height - 1)
        self._cells[y, x] = check_bool("wall", wall)

    def compute(
        self,
        origin: Point,
        radius: int | None,
        light_walls: bool = True,
        symmetric: bool = False,
        *,
        libtcod_ties: bool = False,
    ) -> np.ndarray:
        """The cells visible from ``origin = (x, y)``: a read-only bool mask shaped like the
        map, the object's own buffer (see :attr:`visible`).

        ``radius`` is Euclidean (``dx*dx + dy*dy <= radius*radius``; ``None`` unlimited, 0
        the origin alone), ``light_walls`` shows the walls that light reaches,
        ``symmetric`` chooses the symmetric variant and ``libtcod_ties`` its libtcod
        rounding, as in :func:`generators.view._shadowcast.visible`. A bad argument raises
        ``ValueError`` naming it, and leaves the last view as it was.
        """
        # the everyday call (a tuple of ints, an int or None, real bools) goes straight to
        # the compiled view, which checks every value; other spellings come back False
        if self._compute(origin, radius, light_walls, symmetric, libtcod_ties):
            return self._visible
        ox, oy = self._check_origin(origin)
        return self.compute(
            (ox, oy),
            None if radius is None else check_int("radius", radius, 0),
            check_bool("light_walls", light_walls),
            check_bool("symmetric", symmetric),
            libtcod_ties=check_bool("libtcod_ties", libtcod_ties),
        )

    def _check_origin(self, origin: object) -> Point:
        if (not isinstance(origin, tuple | list) or len(origin) != 2
                or not all(isinstance(v, int | np.integer) and not isinstance(v, bool)
                           for v in origin)):  # fmt: skip
            raise ValueError(f"origin must be an (x, y) pair of integers, got {origin!r}")
        ox, oy = int(origin[0]), int(origin[1])
        if not (0 <= ox < self._width and 0 <= oy < self._height):
            raise ValueError(f"origin {(ox, oy)!r} is outside the {self._width}x{self._height}"
                             " map")  # fmt: skip
        return ox, oy

    def __reduce__(self) -> tuple[object, tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Copies and pickles are new objects with their own buffers (and compiled view,
        which holds them), holding the same map and view."""
        return _rebuild, (self._cells, self._out, self._lit)

    def __repr__(self) -> str:
        return f"FieldOfView({self._width}x{self._height})"


def _rebuild(cells: np.ndarray, out: np.ndarray, lit: np.ndarray) -> FieldOfView:
    """A :class:`FieldOfView` of map ``cells`` whose last view is ``out`` (lit in ``lit``),
    from :meth:`FieldOfView.__reduce__`: checked again, as any map and view it is given."""
    view = FieldOfView(cells)
    mask = np.asarray(out, dtype=bool)
    window = np.asarray(lit, dtype=np.int64)
    if mask.shape != view.shape or window.shape != (4,):
        raise ValueError("a FieldOfView's saved view does not fit its map")
    view._out[...] = mask
    height, width = view.shape
    view._lit[...] = np.clip(window, 0, [width, height, width, height])
    # the saved window must hold every lit cell, or the next call would leave some lit
    outside = view._out.copy()
    x0, y0, x1, y1 = view._lit.tolist()
    outside[y0:y1, x0:x1] = False
    if outside.any():
        view._lit[...] = (0, 0, width, height)
    return view


__all__ = ["FieldOfView"]

"""A player walking a map and what they see: the stateful side of *FOVRecurse* (seed 003).

The seed's FOV class keeps the player's position, moves the player one cell at a time
(refusing walls), recomputes the visible cells after every move and hands them to the
view. :class:`Explorer` does the same on top of a :class:`generators.view.field.FieldOfView`
(the map checked once, the view's buffer reused from step to step), and also remembers
every cell ever seen (``explored``), which the *MapHandler* post's game view promised: a
view draws visible cells bright, explored ones dim and the rest blank. A step costs the
view and the window it lit, not the map: memory is updated in that window only.

``generators.view.fov.Explorer`` is the same class: :mod:`generators.view.fov` is the
field-of-view API, one-shot views and this walker together.
"""

from __future__ import annotations

import numpy as np

from generators._checks import check_bool, check_int
from generators.view.field import FieldOfView

Point = tuple[int, int]

#: The eight steps a player may take, as ``(dx, dy)``.
STEPS: frozenset[Point] = frozenset(
    (dx, dy) for dx in (-1, 0, 1) for dy in (-1, 0, 1) if (dx, dy) != (0, 0)
)


class Explorer:
    """A position on a map, its field of view and the cells seen so far.

    ``radius`` (``None``: unlimited), ``symmetric`` and ``light_walls`` are those of
    :func:`generators.view._shadowcast.visible`; changing one recomputes the view. Positions are
    ``(x, y)``; the start must be a floor cell. The map is copied: later changes to
    ``grid`` do not reach the explorer.
    """

    def __init__(
        self,
        grid: np.ndarray,
        position: Point,
        radius: int | None = 10,
        *,
        symmetric: bool = False,
        light_walls: bool = True,
    ) -> None:
        self._view = FieldOfView(grid)
        self._grid = self._view.grid
        self._radius = None if radius is None else check_int("radius", radius, 0)
        self._symmetric = check_bool("symmetric", symmetric)
        self._light_walls = check_bool("light_walls", light_walls)
        self._explored = np.zeros(self._grid.shape, dtype=bool)
        self._position = self._check_floor("position", position)
        self._update()

    # -- state -------------------------------------------------------------------------

    @property
    def grid(self) -> np.ndarray:
        """The map (read-only; 1 = wall, 0 = floor)."""
        return self._grid

    @property
    def position(self) -> Point:
        """Where the player stands, ``(x, y)``."""
        return self._position

    @property
    def radius(self) -> int | None:
        return self._radius

    @radius.setter
    def radius(self, value: int | None) -> None:
        self._radius = None if value is None else check_int("radius", value, 0)
        self._update()

    @property
    def symmetric(self) -> bool:
        return self._symmetric

    @symmetric.setter
    def symmetric(self, value: bool) -> None:
        self._symmetric = check_bool("symmetric", value)
        self._update()

    @property
    def visible(self) -> np.ndarray:
        """Boolean mask of the cells seen from the current position (read-only). It is the
        explorer's own buffer, updated in place by every move: copy it to keep a view."""
        return self._view.visible

    @property
    def visible_points(self) -> list[Point]:
        """The visible cells as ``(x, y)`` pairs, row by row."""
        x0, y0, x1, y1 = self._view.bounds
        ys, xs = np.nonzero(self._view.visible[y0:y1, x0:x1])
        return list(zip((xs + x0).tolist(), (ys + y0).tolist(), strict=True))

    @property
    def explored_mask(self) -> np.ndarray:
        """Boolean mask of every cell seen since the start, visible ones included."""
        view = self._explored.view()
        view.setflags(write=False)
        return view

    @property
    def explored(self) -> set[Point]:
        """Every cell seen since the start, as a set of ``(x, y)`` pairs."""
        ys, xs = np.nonzero(self._explored)
        return set(zip(xs.tolist(), ys.tolist(), strict=True))

    @property
    def remembered(self) -> np.ndarray:
        """Cells seen before but not visible now: what a view draws dim."""
        remembered: np.ndarray = self._explored & ~self._view.visible
        return remembered

    # -- moving ------------------------------------------------------------------------

    def can_enter(self, x: int, y: int) -> bool:
        """True for a floor cell on the map."""
        height, width = self._grid.shape
        return 0 <= x < width and 0 <= y < height and not self._grid[y, x]

    def move(self, dx: int, dy: int) -> bool:
        """Step by ``(dx, dy)`` (each -1, 0 or 1); a wall or the map's edge refuses the
        step (returns False, nothing changes), otherwise the view follows (True)."""
        step = (check_int("dx", dx, -1, 1), check_int("dy", dy, -1, 1))
        if step == (0, 0):
            return True
        x, y = self._position[0] + step[0], self._position[1] + step[1]
        if not self.can_enter(x, y):
            return False
        self._position = (x, y)
        self._update()
        return True

    def teleport(self, position: Point) -> None:
        """Jump to another floor cell (memory is kept)."""
        self._position = self._check_floor("position", position)
        self._update()

    # -- internals ---------------------------------------------------------------------

    def _check_floor(self, name: str, position: Point) -> Point:
        if not isinstance(position, tuple | list) or len(position) != 2:
            raise ValueError(f"{name} must be an (x, y) pair, got {position!r}")
        x, y = check_int(f"{name} x", position[0]), check_int(f"{name} y", position[1])
        height, width = self._grid.shape
        if not (0 <= x < width and 0 <= y < height):
            raise ValueError(f"{name} {(x, y)!r} is outside the {width}x{height} map")
        if self._grid[y, x]:
            raise ValueError(f"{name} {(x, y)!r} is a wall")
        return x, y

    def _update(self) -> None:
        seen = self._view.compute(self._position, self._radius, self._light_walls,
                                  self._symmetric)  # fmt: skip
        x0, y0, x1, y1 = self._view.bounds
        self._explored[y0:y1, x0:x1] |= seen[y0:y1, x0:x1]


__all__ = ["STEPS", "Explorer"]

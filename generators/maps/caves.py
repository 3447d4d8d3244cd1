"""Cave systems joined by twisting corridors, after *csCaveGenerator* (seeds 002 and 004).

Pipeline (the original stores 1 for cave floor; we return the package convention,
1 = wall / rock, 0 = floor):

1. every cell becomes cave with probability ``close_cell_prob`` %;
2. ``visits`` random cells are visited one by one: a visited cell becomes cave when
   more than ``neighbours`` cells of its 3x3 block (itself included, off-map cells not
   counted) are cave, and rock otherwise;
3. ``smoothing`` passes remove every cave cell that has at least ``empty_neighbours``
   rock cells among its 4 neighbours on the map;
4. one filling pass turns every rock cell with at least ``filling_neighbours`` cave
   neighbours (of 4) into cave;
5. caves are the 4-connected cave regions; those with ``<= lower_limit`` or
   ``> upper_limit`` cells are turned back into rock;
6. ``connect=True`` runs the corridor builder: start from one random cave; repeatedly
   pick a start (a random connected cave, walking from a random cell of it in a random
   direction to the first rock cell, or, about half the time once corridors exist, a
   rock cell beside a built corridor), grow a corridor of up to ``max_turns + 1``
   straight segments of ``corridor_min .. corridor_max - 1`` cells, each new cell needing
   ``corridor_space`` rock cells on both sides across its direction; when it runs into
   a cave that is not yet connected, the corridor is dug and that cave joins. This stops
   when every cave is connected or after ``breakout`` attempts.

The C# names: ``CloseCellProb`` = ``close_cell_prob``, ``Iterations`` = ``visits``,
``Neighbours`` = ``neighbours``, ``EmptyNeighbours`` (shown as "Smoothing") =
``empty_neighbours``, ``EmptyCellNeighbours`` (shown as "Filling") = ``filling_neighbours``,
``LowerLimit`` / ``MinSizeToRemove`` = ``lower_limit``, ``UpperLimit`` / ``MaxSizeToRemove``
= ``upper_limit``; the post's "Several Large Caves" are ``lower_limit=450,
upper_limit=1500, filling_neighbours=3``.

Where the post's prose and its C# code disagree, we follow the code, the exact statement
of the algorithm that sets its defaults (``docs/explanation/seeds.md`` has the figures):

* Close Cell Prob, "the chance of closing a visited cell": the code uses it once, for the
  random fill of step 1, and never at a visit;
* Neighbours, "when this value is equalled or exceeded": the code's test is *greater than*
  (``count > neighbours``, the visited cell counted), and so is ours. Read as ``>=``, the
  post's settings make one cave of most of the map;
* "Smoothing" in the post's property grid is the threshold ``EmptyNeighbours`` (our
  ``empty_neighbours``); the code makes 5 smoothing passes, a fixed loop count, which our
  ``smoothing`` parameter sets (default 5): ``smoothing`` counts passes, it is no
  threshold;
* Lower Limit, "if a cave is smaller than this number, it will be removed": the code
  removes caves of ``<= LowerLimit`` cells, and so do we (``<= lower_limit``);
* Filling, "an open cell with this number closed neighbours is closed": at least that
  number (``>=``) in the code and here.

``connect(grid, ...)`` runs step 6 alone on any map (a cellular cave, an island map, a
hand-drawn one): its 4-connected floor regions are the caves, and the corridors it digs
are returned with the joined grid.

Steps 2-4 run faithfully in ``mode="faithful"`` (visits one at a time; smoothing and
filling update cells in place, column by column, x outer and y inner, as the C# loops
do). ``mode="fast"`` applies the same visit sequence in NumPy batches and smooths and
fills synchronously: different maps, same statistics (checked by the tests and the
benchmark). Steps 1, 5 and 6 are the same in both modes.

Deliberate differences from the C# original:

* NumPy's PCG64 instead of ``System.Random(12345)``; a uniform draw of the visited cell
  instead of x then y (same distribution); exactly ``visits`` visits (the C# loop runs
  ``Iterations + 1``);
* the direction of the walk out of a cave: the C# picks it with ``Direction_Get(p)``,
  which keeps drawing *while* the new direction differs from ``-p`` in both coordinates,
  so it returns ``p`` or ``-p`` (never a turn) whenever ``p`` is a real direction, and
  ``p`` is whatever the previous attempt left behind. Ours is uniform over the four;
* a corridor may turn after each of its ``max_turns + 1`` segments but the last (the C#
  loop stops turning two segments early, so its last three segments run straight);
* a corridor start is chosen uniformly among all built corridor cells (the C# skips the
  first and last entries of the flat corridor list) and the list of candidate
  directions is cleared between tries (the C# lets it grow across retries);
* the start-point searches give up after 100 tries and count as a failed attempt
  (the C# loops forever when no start exists);
* exactly ``breakout`` attempts at most (the C# allows ``BreakOut + 2``);
* flood fill by ``scipy.ndimage.label`` (the C# recursive fill overflows on big caves);
  caves are numbered in the C#'s discovery order (x outer, y inner);
* ``connected`` is measured on the finished map (one 4-connected floor region), not
  inferred from the builder's bookkeeping, and ``unreached`` lists the caves the
  builder did not reach when it broke out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import ndimage

from generators._checks import check_bool, check_choice, check_grid, check_int
from generators._native._cmaps import smooth_fill as _c_smooth_fill
from generators._seeds import DrawBuffer, SeedLike, make_rng
from generators.maps._visits import random_fill, run_visits
from generators.maps.regions import MapShape, label, open_ratio, region_stats

MODES = ("faithful", "fast")

Point = tuple[int, int]

_DIRECTIONS: tuple[Point, ...] = ((0, -1), (0, 1), (1, 0), (-1, 0))
_START_TRIES = 100

#: Directions a corridor may take next, keyed by (dx, dy, first direction): never back
#: the way it came, never against its first direction (the C#'s PreventBackTracking).
_TURNS: dict[tuple[int, int, Point], tuple[Point, ...]] = {
    (dx, dy, first): tuple(d for d in _DIRECTIONS if d not in ((-dx, -dy), (-first[0], -first[1])))
    for dx, dy in _DIRECTIONS
    for first in _DIRECTIONS
}


@dataclass(frozen=True)
class Cave:
    """One cave found after cleaning: id, size, bounding box ``(x, y, width, height)``
    and centroid ``(x, y)`` of its own cells (corridors excluded)."""

    id: int
    cells: int
    bbox: tuple[int, int, int, int]
    centroid: tuple[float, float]


@dataclass
class Connection(MapShape):
    """What :func:`connect` did to a map: the joined grid and the corridors it dug."""

    grid: np.ndarray
    seed: int | None
    params: dict[str, Any]
    caves: list[Cave]
    corridors: list[list[Point]]
    connected: bool
    attempts: int
    unreached: list[int]
    regions: int
    largest_region: int
    open_ratio: float


@dataclass
class CaveSystem(Connection):
    """A generated cave system with everything a catalog stores about it: what
    :func:`connect` reports, for a map this module made (``kind`` names it in a catalog)."""

    kind: str = field(default="caves", init=False)


def _neighbour_sum(cave: np.ndarray) -> np.ndarray:
    """Cave cells among the 4 on-map neighbours of every cell."""
    padded = np.pad(cave, 1).astype(np.uint8)
    return padded[:-2, 1:-1] + padded[2:, 1:-1] + padded[1:-1, :-2] + padded[1:-1, 2:]


def _on_map_neighbours(height: int, width: int) -> np.ndarray:
    """How many of each cell's 4 neighbours lie on the map (2 at corners, 3 on edges)."""
    return _neighbour_sum(np.ones((height, width), dtype=np.uint8))


def _smooth_fill_fast(cave: np.ndarray, smoothing: int, empty: int, filling: int) -> np.ndarray:
    on_map = _on_map_neighbours(*cave.shape)
    for _ in range(smoothing):
        rock_around = on_map - _neighbour_sum(cave)
        cave = np.where((cave == 1) & (rock_around >= empty), 0, cave).astype(np.uint8)
    fill = (cave == 0) & (_neighbour_sum(cave) >= filling)
    return np.where(fill, 1, cave).astype(np.uint8)


def _smooth_fill_faithful(cave: np.ndarray, smoothing: int, empty: int, filling: int) -> np.ndarray:
    """In-place passes in the C# order (x outer, y inner), in C (``generators/_native/_cmaps.c``),
    on a padded transposed copy (``cells[x + 1, y + 1]`` is map cell (x, y), so each column
    of the map is a row of the copy; the zero border stands for off-map cells); each cell
    sees its neighbours as already updated earlier in the same pass."""
    cells = np.zeros((cave.shape[1] + 2, cave.shape[0] + 2), dtype=np.uint8)
    cells[1:-1, 1:-1] = cave.T
    _c_smooth_fill(cells, smoothing, empty, filling)
    return np.ascontiguousarray(cells[1:-1, 1:-1].T)


def _find_caves(cave: np.ndarray, lower: int, upper: int) -> tuple[np.ndarray, list[Cave]]:
    """Label caves, drop those outside the size limits, renumber in C# discovery order.

    Returns ``(ids, caves)``: ``ids`` holds each kept cave's id (1..n), 0 elsewhere.
    """
    labels, count = label(cave, 4, value=1)
    ids = np.zeros(cave.shape, dtype=np.int32)
    if count == 0:
        return ids, []
    sizes = np.bincount(labels.ravel(), minlength=count + 1)
    # first cell of each label in column-major order (x outer, y inner)
    values, starts = np.unique(labels.T.ravel(), return_index=True)
    first = np.zeros(count + 1, dtype=np.int64)
    first[values] = starts
    keep = [k for k in range(1, count + 1) if lower < sizes[k] <= upper]
    keep.sort(key=lambda k: first[k])
    remap = np.zeros(count + 1, dtype=np.int32)
    for new_id, k in enumerate(keep, start=1):
        remap[k] = new_id
    ids = remap[labels]
    caves: list[Cave] = []
    if keep:
        objects = ndimage.find_objects(ids)
        ys, xs = np.indices(cave.shape)
        n = len(keep)
        index = np.arange(1, n + 1)
        sum_x = ndimage.sum_labels(xs, ids, index)
        sum_y = ndimage.sum_labels(ys, ids, index)
        counts = np.bincount(ids.ravel(), minlength=n + 1)[1:]
        for new_id in range(1, n + 1):
            rows, cols = objects[new_id - 1]
            size = int(counts[new_id - 1])
            caves.append(
                Cave(
                    id=new_id,
                    cells=size,
                    bbox=(cols.start, rows.start, cols.stop - cols.start, rows.stop - rows.start),
                    centroid=(float(sum_x[new_id - 1]) / size, float(sum_y[new_id - 1]) / size),
                )
            )
    return ids, caves


class _CorridorBuilder:
    """The ConnectCaves loop on flat Python lists (y * width + x)."""

    def __init__(
        self,
        ids: np.ndarray,
        draw: DrawBuffer,
        corridor_min: int,
        corridor_max: int,
        max_turns: int,
        space: int,
    ) -> None:
        self.height, self.width = ids.shape
        self.draw = draw
        self.corridor_min = corridor_min
        self.corridor_max = corridor_max
        self.max_turns = max_turns
        self.space = space
        # 0 rock, > 0 cave id, -1 corridor
        self.state: list[int] = ids.ravel().tolist()
        self.cells_of: dict[int, list[int]] = {}
        flat = ids.ravel()
        order = np.argsort(flat, kind="stable")
        bounds = np.searchsorted(flat[order], np.arange(1, int(flat.max(initial=0)) + 2))
        for cave_id in range(1, len(bounds)):
            self.cells_of[cave_id] = order[bounds[cave_id - 1] : bounds[cave_id]].tolist()
        self.corridor_cells: list[int] = []
        self._refresh_clearance()

    def _refresh_clearance(self) -> None:
        """Which rock cells have ``space`` rock cells on both sides, per travel axis.

        Computed once with NumPy; ``dig`` keeps it up to date cell by cell.
        """
        rock = np.array(self.state, dtype=np.int32).reshape(self.height, self.width) == 0
        s = self.space
        if s == 0:
            self.clear_vertical = rock.ravel().tolist()
            self.clear_horizontal = list(self.clear_vertical)
            return
        # off-map cells do not block, as in the original's bounds-checked test
        padded = np.pad(rock, s, constant_values=True)
        across_x = np.ones_like(rock)
        across_y = np.ones_like(rock)
        for r in range(-s, s + 1):
            across_x &= padded[s : s + self.height, s + r : s + r + self.width]
            across_y &= padded[s + r : s + r + self.height, s : s + self.width]
        self.clear_vertical = across_x.ravel().tolist()  # moving north/south
        self.clear_horizontal = across_y.ravel().tolist()  # moving east/west

    def cave_start(self, cave_id: int) -> tuple[int, int, int, int] | None:
        """Walk from a random cell of the cave in a random direction to the first rock."""
        cells = self.cells_of[cave_id]
        width, height, state, draw = self.width, self.height, self.state, self.draw
        for _ in range(_START_TRIES):
            pos = cells[draw.below(len(cells))]
            x, y = pos % width, pos // width
            dx, dy = _DIRECTIONS[draw.below(4)]
            while True:
                x += dx
                y += dy
                if not (0 <= x < width and 0 <= y < height):
                    break
                if state[y * width + x] == 0:
                    return x, y, dx, dy
        return None

    def corridor_start(self) -> tuple[int, int, int, int] | None:
        """A rock cell beside a random built corridor cell, and the direction to it."""
        width, height, state, draw = self.width, self.height, self.state, self.draw
        for _ in range(_START_TRIES):
            pos = self.corridor_cells[draw.below(len(self.corridor_cells))]
            x, y = pos % width, pos // width
            options = [
                (dx, dy)
                for dx, dy in _DIRECTIONS
                if 0 <= x + dx < width
                and 0 <= y + dy < height
                and state[(y + dy) * width + x + dx] == 0
            ]
            if options:
                dx, dy = options[draw.below(len(options))]
                return x + dx, y + dy, dx, dy
        return None

    def grow(self, x: int, y: int, dx: int, dy: int) -> list[int] | None:
        """Grow a corridor; returns its cells ending with the open cell it hit, or None."""
        width, height, state, draw = self.width, self.height, self.state, self.draw
        path = [y * width + x]
        first = (dx, dy)
        for segment in range(self.max_turns + 1):
            clear = self.clear_vertical if dx == 0 else self.clear_horizontal
            for _ in range(draw.between(self.corridor_min, self.corridor_max)):
                x += dx
                y += dy
                if not (0 <= x < width and 0 <= y < height):
                    return None
                pos = y * width + x
                path.append(pos)
                if state[pos] != 0:
                    return path
                if not clear[pos]:
                    return None
            if segment < self.max_turns:
                options = _TURNS[(dx, dy, first)]
                dx, dy = options[draw.below(len(options))]
        return None

    def dig(self, path: list[int]) -> None:
        """Open the corridor; cells near it lose their clearance (it only ever shrinks)."""
        width, height, space = self.width, self.height, self.space
        vertical, horizontal = self.clear_vertical, self.clear_horizontal
        for pos in path:
            self.state[pos] = -1
            x, y = pos % width, pos // width
            for r in range(-space, space + 1):
                if 0 <= x + r < width:
                    vertical[pos + r] = False
                if 0 <= y + r < height:
                    horizontal[pos + r * width] = False
        self.corridor_cells.extend(path)


def _connect(
    ids: np.ndarray,
    draw: DrawBuffer,
    corridor_min: int,
    corridor_max: int,
    max_turns: int,
    space: int,
    breakout: int,
    joinable: int | None = None,
) -> tuple[list[list[int]], int, list[int]]:
    """Run the corridor builder; returns (corridors as flat indices, attempts, unreached).

    Caves ``1 .. joinable`` (default: all) are joined; a higher id marks floor that blocks
    corridors like a cave but is never a target.
    """
    builder = _CorridorBuilder(ids, draw, corridor_min, corridor_max, max_turns, space)
    cave_ids = sorted(builder.cells_of)
    if joinable is not None:
        cave_ids = [c for c in cave_ids if c <= joinable]
    if not cave_ids:
        return [], 0, []
    first = cave_ids[draw.below(len(cave_ids))]
    connected = [first]
    waiting = set(cave_ids) - {first}
    corridors: list[list[int]] = []
    attempts = 0
    while waiting and attempts < breakout:
        attempts += 1
        # the C# draws Next(0, 100) > 50 to pick a cave (49 %), else a corridor
        if not builder.corridor_cells or draw.percent() > 50:
            start = builder.cave_start(connected[draw.below(len(connected))])
        else:
            start = builder.corridor_start()
        if start is None:
            continue
        path = builder.grow(*start)
        if path is None:
            continue
        hit = builder.state[path[-1]]
        if hit in waiting:
            dug = path[:-1]
            builder.dig(dug)
            corridors.append(dug)
            waiting.discard(hit)
            connected.append(hit)
    return corridors, attempts, sorted(waiting)


def connect(
    grid: np.ndarray,
    corridor_min: int = 2,
    corridor_max: int = 5,
    max_turns: int = 10,
    corridor_space: int = 2,
    breakout: int = 100_000,
    lower_limit: int = 0,
    seed: SeedLike = None,
) -> Connection:
    """Join the caves of ``grid`` (1 = wall, 0 = floor) with ConnectCaves corridors.

    Every 4-connected floor region with more than ``lower_limit`` cells is a cave (smaller
    ones are left as they are and not joined); corridors are grown through wall cells as in
    :func:`generate` (same parameters, same rules). The input is not modified. The result's
    ``corridors`` list the dug cells of each corridor in order, ``connected`` tells whether
    the finished map is one region and ``unreached`` lists the caves (numbered as in
    ``caves``) the builder could not reach within ``breakout`` attempts.
    """
    cells = check_grid(grid)
    corridor_min = check_int("corridor_min", corridor_min, 1)
    corridor_max = check_int("corridor_max", corridor_max, corridor_min + 1)
    max_turns = check_int("max_turns", max_turns, 0)
    corridor_space = check_int("corridor_space", corridor_space, 0)
    breakout = check_int("breakout", breakout, 0)
    lower_limit = check_int("lower_limit", lower_limit, 0)
    rng, recorded = make_rng(seed)
    height, width = cells.shape
    ids, caves = _find_caves((cells == 0).astype(np.uint8), lower_limit, cells.size)
    # floor outside the kept caves must not be dug through: mark it as a cave of its own
    # that never needs joining (id above every real one)
    stray = (cells == 0) & (ids == 0)
    if stray.any():
        ids = np.where(stray, len(caves) + 1, ids)
    draw = DrawBuffer(rng)
    flat_paths, attempts, unreached = _connect(
        ids,
        draw,
        corridor_min,
        corridor_max,
        max_turns,
        corridor_space,
        breakout,
        joinable=len(caves),
    )
    joined = cells.copy()
    flat = joined.ravel()
    for path in flat_paths:
        flat[path] = 0
    stats = region_stats(joined, 4)
    params: dict[str, Any] = {
        "corridor_min": corridor_min,
        "corridor_max": corridor_max,
        "max_turns": max_turns,
        "corridor_space": corridor_space,
        "breakout": breakout,
        "lower_limit": lower_limit,
    }
    return Connection(
        grid=joined,
        seed=recorded,
        params=params,
        caves=caves,
        corridors=[[(pos % width, pos // width) for pos in path] for path in flat_paths],
        connected=stats.count == 1,
        attempts=attempts,
        unreached=unreached,
        regions=stats.count,
        largest_region=stats.largest,
        open_ratio=open_ratio(joined),
    )


def generate(
    width: int = 100,
    height: int = 100,
    close_cell_prob: int = 45,
    visits: int = 50_000,
    neighbours: int = 4,
    smoothing: int = 5,
    empty_neighbours: int = 3,
    filling_neighbours: int = 4,
    lower_limit: int = 16,
    upper_limit: int = 500,
    connect: bool = True,
    corridor_min: int = 2,
    corridor_max: int = 5,
    max_turns: int = 10,
    corridor_space: int = 2,
    breakout: int = 100_000,
    seed: SeedLike = None,
    mode: str = "faithful",
) -> CaveSystem:
    """Generate a cave system; see the module docstring for the steps and parameters."""
    width = check_int("width", width, 3)
    height = check_int("height", height, 3)
    close_cell_prob = check_int("close_cell_prob", close_cell_prob, 0, 100)
    visits = check_int("visits", visits, 0)
    neighbours = check_int("neighbours", neighbours, 0, 9)
    smoothing = check_int("smoothing", smoothing, 0)
    empty_neighbours = check_int("empty_neighbours", empty_neighbours, 0, 5)
    filling_neighbours = check_int("filling_neighbours", filling_neighbours, 0, 5)
    lower_limit = check_int("lower_limit", lower_limit, 0)
    upper_limit = check_int("upper_limit", upper_limit, lower_limit)
    connect = check_bool("connect", connect)
    corridor_min = check_int("corridor_min", corridor_min, 1)
    corridor_max = check_int("corridor_max", corridor_max, corridor_min + 1)
    max_turns = check_int("max_turns", max_turns, 0)
    corridor_space = check_int("corridor_space", corridor_space, 0)
    breakout = check_int("breakout", breakout, 0)
    mode = check_choice("mode", mode, MODES)
    rng, recorded = make_rng(seed)

    fast = mode == "fast"
    cave = random_fill(width, height, close_cell_prob, rng)
    cave = run_visits(cave, visits, neighbours, rng, fast)
    smooth = _smooth_fill_fast if fast else _smooth_fill_faithful
    cave = smooth(cave, smoothing, empty_neighbours, filling_neighbours)
    ids, caves = _find_caves(cave, lower_limit, upper_limit)

    corridors_flat: list[list[int]] = []
    attempts = 0
    unreached: list[int] = []
    if connect:
        draw = DrawBuffer(rng)
        corridors_flat, attempts, unreached = _connect(
            ids, draw, corridor_min, corridor_max, max_turns, corridor_space, breakout
        )
    grid = np.where(ids > 0, 0, 1).astype(np.uint8)
    flat = grid.ravel()
    for path in corridors_flat:
        flat[path] = 0
    corridors = [[(pos % width, pos // width) for pos in path] for path in corridors_flat]

    stats = region_stats(grid, 4)
    params: dict[str, Any] = {
        "width": width,
        "height": height,
        "close_cell_prob": close_cell_prob,
        "visits": visits,
        "neighbours": neighbours,
        "smoothing": smoothing,
        "empty_neighbours": empty_neighbours,
        "filling_neighbours": filling_neighbours,
        "lower_limit": lower_limit,
        "upper_limit": upper_limit,
        "connect": connect,
        "corridor_min": corridor_min,
        "corridor_max": corridor_max,
        "max_turns": max_turns,
        "corridor_space": corridor_space,
        "breakout": breakout,
        "mode": mode,
    }
    return CaveSystem(
        grid=grid,
        seed=recorded,
        params=params,
        caves=caves,
        corridors=corridors,
        connected=stats.count == 1,
        attempts=attempts,
        unreached=unreached,
        regions=stats.count,
        largest_region=stats.largest,
        open_ratio=open_ratio(grid),
    )

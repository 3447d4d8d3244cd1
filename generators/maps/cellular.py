"""Cellular-automaton caves in the manner of the 2013 *MapHandler* post (seed 001).

Recipe: a ``width`` x ``height`` map whose outer ring is always wall; every inner cell is
a wall with probability ``wall_percent`` %; a horizontal band through the middle is
cleared ("horizontal blanking", so no unbroken vertical wall can split the cave); then
the 4-5 rule is applied ``passes`` times. In terms of R1 (walls among the 3x3 block,
the cell itself included, cells off the map counted as wall) the 4-5 rule reads simply
*wall iff R1 >= 5*: a wall stays with >= 4 wall neighbours, a floor turns at >= 5.

``mode="faithful"`` repeats the original's in-place raster pass: rows top to bottom,
cells left to right, each cell already seeing the new values of the cells before it
(in C, compiled when the package is built: ``generators/_native/_cmaps.c``; its cost is
within a small factor of the synchronous pass).
``mode="synchronous"`` computes every cell of a pass from the previous pass (the usual
textbook automaton) with NumPy box sums; its maps differ in detail but not in kind.

``rule="roguebasin"`` is the variant from the RogueBasin article the post links to:
for the first ``r2_passes`` passes a cell is a wall iff R1 >= 5 *or* R2 <= 2 (R2: walls
in the 5x5 block), which seeds pillars in wide open areas; the remaining passes use
R1 >= 5 alone.

Deliberate differences from the C# original:

* the random stream is NumPy's PCG64, not ``System.Random``: same distribution (a cell
  is a wall when a uniform draw from 1..100 is <= ``wall_percent``), different maps;
* the blanked band is ``blank_rows`` tall (the code blanks 1 row, ``height // 2``; the
  post recommends 3-4); for taller bands it is centred on that row;
* ``passes`` defaults to 4 (the demo smooths once and waits for a key press per extra
  pass; the post calls 4-5 passes typical);
* the array is indexed ``grid[y, x]`` (NumPy row-major) instead of ``Map[x, y]``; the
  faithful pass visits cells in exactly the same order as the original.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from generators._checks import check_choice, check_grid, check_int
from generators._native._cmaps import raster_pass as _c_raster_pass
from generators._seeds import SeedLike, make_rng
from generators.maps.regions import MapShape, open_ratio, region_stats

MODES = ("faithful", "synchronous")
RULES = ("4-5", "roguebasin")

_DEFAULT_PASSES = {"4-5": 4, "roguebasin": 7}


@dataclass
class CellularCave(MapShape):
    """A generated cellular cave: the grid, how it was made and what it contains."""

    grid: np.ndarray
    seed: int | None
    params: dict[str, Any]
    regions: int
    largest_region: int
    open_ratio: float
    kind: str = field(default="cellular", init=False)


def blank_band(height: int, blank_rows: int) -> range:
    """Rows cleared by horizontal blanking: ``blank_rows`` rows centred on ``height // 2``.

    The band never touches the border rows, so it may be shorter than asked on tiny maps.
    """
    start = height // 2 - blank_rows // 2
    return range(max(1, start), min(height - 1, start + blank_rows))


def fill(
    width: int = 40,
    height: int = 21,
    wall_percent: int = 40,
    blank_rows: int = 1,
    seed: SeedLike = None,
) -> np.ndarray:
    """Random fill plus horizontal blanking: the map before any smoothing pass."""
    width = check_int("width", width, 3)
    height = check_int("height", height, 3)
    wall_percent = check_int("wall_percent", wall_percent, 0, 100)
    blank_rows = check_int("blank_rows", blank_rows, 0, height - 2)
    rng, _ = make_rng(seed)
    return _fill(width, height, wall_percent, blank_rows, rng)


def _fill(
    width: int, height: int, wall_percent: int, blank_rows: int, rng: np.random.Generator
) -> np.ndarray:
    grid = np.ones((height, width), dtype=np.uint8)
    draws = rng.integers(1, 101, size=(height - 2, width - 2))
    grid[1:-1, 1:-1] = draws <= wall_percent
    band = blank_band(height, blank_rows)
    if len(band):
        grid[band.start : band.stop, 1:-1] = 0
    return grid


def step(grid: np.ndarray, mode: str = "faithful", r2: bool = False) -> np.ndarray:
    """One smoothing pass; returns a new array and leaves ``grid`` untouched.

    ``r2=True`` adds the RogueBasin clause (a cell with at most 2 walls in its 5x5 block
    becomes a wall).
    """
    array = check_grid(grid)
    check_choice("mode", mode, MODES)
    if mode == "faithful":
        return _step_in_place(array, r2)
    return _step_synchronous(array, r2)


def _box_sum(padded: np.ndarray, reach: int) -> np.ndarray:
    """Sum of each (2*reach+1)^2 block of ``padded`` (separable: rows, then columns)."""
    span = 2 * reach + 1
    rows = padded[: padded.shape[0] - span + 1].copy()
    for offset in range(1, span):
        rows += padded[offset : padded.shape[0] - span + 1 + offset]
    total = rows[:, : rows.shape[1] - span + 1].copy()
    for offset in range(1, span):
        total += rows[:, offset : rows.shape[1] - span + 1 + offset]
    return total


def _step_synchronous(grid: np.ndarray, r2: bool) -> np.ndarray:
    reach = 2 if r2 else 1
    padded = np.pad(grid, reach, mode="constant", constant_values=1)
    if not r2:
        return (_box_sum(padded, 1) >= 5).astype(np.uint8)
    r1 = _box_sum(padded[1:-1, 1:-1], 1)
    r2_sum = _box_sum(padded, 2)
    return ((r1 >= 5) | (r2_sum <= 2)).astype(np.uint8)


def _step_in_place(grid: np.ndarray, r2: bool) -> np.ndarray:
    """The original update order (compiled): a new array, ``grid`` left as it was."""
    cells = np.array(grid, dtype=np.uint8, order="C")  # always a private copy
    _c_raster_pass(cells, r2)
    return cells


def generate(
    width: int = 40,
    height: int = 21,
    wall_percent: int = 40,
    blank_rows: int = 1,
    passes: int | None = None,
    mode: str = "faithful",
    seed: SeedLike = None,
    rule: str = "4-5",
    r2_passes: int = 4,
) -> CellularCave:
    """Build a cellular cave. ``passes=None`` means 4 for ``"4-5"`` and 7 for ``"roguebasin"``."""
    width = check_int("width", width, 3)
    height = check_int("height", height, 3)
    wall_percent = check_int("wall_percent", wall_percent, 0, 100)
    blank_rows = check_int("blank_rows", blank_rows, 0, height - 2)
    mode = check_choice("mode", mode, MODES)
    rule = check_choice("rule", rule, RULES)
    passes = _DEFAULT_PASSES[rule] if passes is None else check_int("passes", passes, 0)
    r2_passes = check_int("r2_passes", r2_passes, 0)
    rng, recorded = make_rng(seed)

    grid = _fill(width, height, wall_percent, blank_rows, rng)  # a fresh C-contiguous uint8 map
    for index in range(passes):
        use_r2 = rule == "roguebasin" and index < r2_passes
        if mode == "faithful":
            _c_raster_pass(grid, use_r2)  # in place: the map is this function's own
        else:
            grid = _step_synchronous(grid, use_r2)

    stats = region_stats(grid, 4)
    params: dict[str, Any] = {
        "width": width,
        "height": height,
        "wall_percent": wall_percent,
        "blank_rows": blank_rows,
        "passes": passes,
        "mode": mode,
        "rule": rule,
        "r2_passes": r2_passes,
    }
    return CellularCave(
        grid=grid,
        seed=recorded,
        params=params,
        regions=stats.count,
        largest_region=stats.largest,
        open_ratio=open_ratio(grid),
    )

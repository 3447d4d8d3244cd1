"""Island and labyrinth maps, after *csIslandMaze* (seed 003).

Every cell is closed (wall) with probability ``close_cell_prob`` %, then ``visits``
random cells are examined one by one: with ``c`` the closed cells in the 3x3 block
(the cell itself included, off-map cells not counted), the island rule (``island=True``,
the post's ``h = true``) closes the cell when ``c > neighbours`` and opens it otherwise;
the labyrinth rule (``island=False``) does the opposite. Closed cells are walls (1),
as in the original, so no value flip is needed here.

The post's prose puts the close probability inside the loop ("if the cell is open use p
to determine whether we close it", then count and apply the rule); its code, which we
follow, uses ``p`` once, for the random fill before the visits, and never at a visit.
``docs/explanation/seeds.md`` measures both readings.

``mode="faithful"`` makes the visits one at a time, ``mode="fast"`` applies the same visit
sequence in NumPy batches (see ``generators.maps._visits``).

Deliberate differences from the C# original: NumPy's PCG64 instead of a clock-seeded
``System.Random``; the visited cell is one uniform draw over the map instead of x then y
(same distribution); exactly ``visits`` visits (the C# loop runs ``Iterations + 1``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from generators._checks import check_bool, check_choice, check_int
from generators._seeds import SeedLike, make_rng
from generators.maps._visits import random_fill, run_visits
from generators.maps.regions import MapShape, open_ratio, region_stats

MODES = ("faithful", "fast")


@dataclass
class IslandMap(MapShape):
    """A generated island or labyrinth map."""

    grid: np.ndarray
    seed: int | None
    params: dict[str, Any]
    regions: int
    largest_region: int
    open_ratio: float
    kind: str = field(default="islands", init=False)


def generate(
    width: int = 99,
    height: int = 99,
    close_cell_prob: int = 45,
    island: bool = True,
    neighbours: int = 4,
    visits: int = 50_000,
    seed: SeedLike = None,
    mode: str = "faithful",
) -> IslandMap:
    """Generate an island (``island=True``) or labyrinth (``island=False``) map."""
    width = check_int("width", width, 1)
    height = check_int("height", height, 1)
    close_cell_prob = check_int("close_cell_prob", close_cell_prob, 0, 100)
    island = check_bool("island", island)
    neighbours = check_int("neighbours", neighbours, 0, 9)
    visits = check_int("visits", visits, 0)
    mode = check_choice("mode", mode, MODES)
    rng, recorded = make_rng(seed)

    grid = random_fill(width, height, close_cell_prob, rng)
    grid = run_visits(grid, visits, neighbours, rng, fast=mode == "fast", invert=not island)
    stats = region_stats(grid, 4)
    params: dict[str, Any] = {
        "width": width,
        "height": height,
        "close_cell_prob": close_cell_prob,
        "island": island,
        "neighbours": neighbours,
        "visits": visits,
        "mode": mode,
    }
    return IslandMap(
        grid=grid,
        seed=recorded,
        params=params,
        regions=stats.count,
        largest_region=stats.largest,
        open_ratio=open_ratio(grid),
    )

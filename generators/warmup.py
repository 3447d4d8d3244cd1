"""Compile (or load from numba's disk cache) every compiled hot loop ahead of first use.

    python -m generators.warmup

The first call of a compiled function in a fresh install compiles it (seconds); later
processes load machine code from the cache instead. Running this once after installing
(for example in a container build) moves that one-off cost out of the first real call.
It runs each public entry point on tiny inputs, so exactly the specialisations that real
calls use are compiled, and prints how long each group took.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

import numpy as np


def _sudoku() -> None:
    from generators import sudoku

    puzzle = "003020600900305001001806400008102900700000008006708200002609500800203009005010300"
    sudoku.validate(puzzle)  # the file readers' check
    sudoku.solve(puzzle)
    sudoku.solve_many([puzzle, puzzle], workers=1)


def _fov() -> None:
    from generators.view import fov

    grid = np.zeros((9, 9), dtype=np.uint8)
    grid[2, 2] = 1
    frozen = grid.copy()
    frozen.setflags(write=False)  # read-only maps (the Explorer's) are another specialisation
    for cells in (grid, frozen):
        for symmetric in (False, True):
            fov.visible(cells, (4, 4), 3, symmetric=symmetric)
            fov.visible_window(cells, (4, 4), None, symmetric=symmetric)
    view = fov.FieldOfView(grid)  # the reusable view's own kernel (the Explorer's)
    for symmetric in (False, True):
        for ties in (False, True):
            view.compute((4, 4), 3, symmetric=symmetric, libtcod_ties=ties)


def _maps() -> None:
    from generators.maps import caves, cellular, islands

    for rule in ("4-5", "roguebasin"):
        cellular.generate(12, 9, seed=1, mode="faithful", rule=rule)
    islands.generate(12, 9, visits=50, seed=1, mode="faithful")
    caves.generate(12, 9, visits=50, seed=1, mode="faithful", connect=False)


GROUPS: dict[str, Callable[[], None]] = {"sudoku": _sudoku, "fov": _fov, "maps": _maps}


def warm_up(report: Callable[[str], None] | None = None) -> dict[str, float]:
    """Run every group; returns (and reports) the seconds each took."""
    took: dict[str, float] = {}
    for name, run in GROUPS.items():
        start = time.perf_counter()
        run()
        took[name] = time.perf_counter() - start
        if report is not None:
            report(f"{name}: {took[name]:.2f} s")
    return took


def main() -> int:
    start = time.perf_counter()
    warm_up(print)
    print(f"compiled code ready in {time.perf_counter() - start:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Run every engine once on tiny inputs, and say how long each group took.

    python -m generators.warmup

Since 0.8 nothing is compiled on the user's machine: the engines are C extensions built
when the package is (``pip install .``), so a fresh install's first call is as fast as any
later one. This stays for the image builds and scripts that call it: it imports each C
extension and runs each public entry point once (a smoke test of the build), which takes
milliseconds.
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
    print(f"engines ready in {time.perf_counter() - start:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

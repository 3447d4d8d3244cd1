"""Sudoku throughput: our solver (which also proves uniqueness) against a classic baseline.

The baseline is the textbook constraint-propagation solver written out below: a dict of
candidate sets per cell, elimination with naked singles, depth-first search on the cell with
the fewest candidates, stopping at the first solution. Ours counts up to two solutions, so it
does strictly more work per puzzle, and must still be at least 5x faster (issue 5).

Run: ``python benchmarks/bench_sudoku.py [--baseline-limit N] [--workers N]``
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from generators import sudoku  # noqa: E402

DATA = Path(os.environ.get("ENTITYWORKS_DATA_DIR", ROOT.parent / "shared" / "data"))


class BaselineSolver:
    """A dict of candidate-digit sets per cell (0..80); propagation of naked singles only.

    Written plainly but without handicaps (integer cells, precomputed peer lists, loops
    rather than generator expressions) so that the comparison is against a fair version.
    """

    def __init__(self) -> None:
        units = [[9 * r + c for c in range(9)] for r in range(9)]
        units += [[9 * r + c for r in range(9)] for c in range(9)]
        units += [
            [9 * (r0 + dr) + c0 + dc for dr in range(3) for dc in range(3)]
            for r0 in (0, 3, 6)
            for c0 in (0, 3, 6)
        ]
        self.peers = [
            sorted({other for unit in units if cell in unit for other in unit} - {cell})
            for cell in range(81)
        ]

    def strike(self, grid: dict[int, set[str]], cell: int, digit: str) -> bool:
        """Remove ``digit`` from ``cell``; a cell left with one digit strikes it from peers."""
        options = grid[cell]
        if digit not in options:
            return True
        options.discard(digit)
        if not options:
            return False
        if len(options) == 1:
            (last,) = options
            for other in self.peers[cell]:
                if not self.strike(grid, other, last):
                    return False
        return True

    def place(self, grid: dict[int, set[str]], cell: int, digit: str) -> bool:
        for other in grid[cell] - {digit}:
            if not self.strike(grid, cell, other):
                return False
        return True

    def search(self, grid: dict[int, set[str]]) -> dict[int, set[str]] | None:
        best, fewest = -1, 10
        for cell, options in grid.items():
            n = len(options)
            if 1 < n < fewest:
                best, fewest = cell, n
        if best < 0:
            return grid
        for digit in sorted(grid[best]):
            trial = {cell: set(options) for cell, options in grid.items()}
            if self.place(trial, best, digit):
                found = self.search(trial)
                if found is not None:
                    return found
        return None

    def solve(self, puzzle: str) -> str | None:
        grid = {cell: set("123456789") for cell in range(81)}
        for cell, ch in enumerate(puzzle):
            if ch in "123456789" and not self.place(grid, cell, ch):
                return None
        found = self.search(grid)
        if found is None:
            return None
        return "".join(min(found[cell]) for cell in range(81))


def rate(count: int, seconds: float) -> float:
    return count / seconds if seconds > 0 else float("inf")


def time_ours(puzzles: list[str]) -> tuple[float, list[sudoku.Solution | None]]:
    start = time.perf_counter()
    solutions = [sudoku.solve(p) for p in puzzles]
    return time.perf_counter() - start, solutions


def time_many(puzzles: list[str], workers: int | None) -> float:
    start = time.perf_counter()
    sudoku.solve_many(puzzles, workers=workers)
    return time.perf_counter() - start


def load(name: str) -> list[str]:
    return [entry.puzzle for entry in sudoku.read_lines(DATA / name)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--baseline-limit",
        type=int,
        default=None,
        help="time the baseline on the first N puzzles of each set only",
    )
    parser.add_argument(
        "--workers", type=int, default=None, help="processes for solve_many (default: all cores)"
    )
    args = parser.parse_args()
    cores = args.workers or len(os.sched_getaffinity(0))
    baseline = BaselineSolver()
    print(f"{'set':<24}{'puzzles':>8}{'baseline/s':>12}{'ours/s':>10}{'ratio':>8}  notes")
    for name in ("top95.txt", "magictour_top1465.txt"):
        puzzles = load(name)
        sample = puzzles[: args.baseline_limit] if args.baseline_limit else puzzles
        start = time.perf_counter()
        answers = [baseline.solve(p) for p in sample]
        base_rate = rate(len(sample), time.perf_counter() - start)
        seconds, ours = time_ours(puzzles)
        our_rate = rate(len(puzzles), seconds)
        agree = all(
            s is not None and s.unique and s.grid == a for s, a in zip(ours, answers, strict=False)
        )
        note = f"same grids: {agree}; ours proves uniqueness"
        if len(sample) < len(puzzles):
            note += f"; baseline on first {len(sample)}"
        print(
            f"{name:<24}{len(puzzles):>8}{base_rate:>12.1f}{our_rate:>10.1f}"
            f"{our_rate / base_rate:>7.1f}x  {note}"
        )
    print()
    print(f"{'set':<34}{'puzzles':>8}{'1 core/s':>10}{f'{cores} cores/s':>12}{'speed-up':>10}")
    for name in ("forum_hardest_1106.txt", "17_clue_first10000.txt"):
        puzzles = load(name)
        seconds, ours = time_ours(puzzles)
        assert all(s is not None and s.unique for s in ours)
        single = rate(len(puzzles), seconds)
        multi = rate(len(puzzles), time_many(puzzles, cores))
        print(f"{name:<34}{len(puzzles):>8}{single:>10.1f}{multi:>12.1f}{multi / single:>9.2f}x")


if __name__ == "__main__":
    main()

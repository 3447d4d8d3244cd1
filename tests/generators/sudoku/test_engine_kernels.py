"""Every form of the band engine against the cell engine on puzzles made at random.

The band engine's kernels (BMI2/AVX2 and portable) must give the same counts, nodes, guesses
and grids, and the cell engine, a different search over the same rules of sudoku, is the
independent oracle for what does not depend on the order of the search: how many solutions
there are up to the limit, the solution itself when it is unique, and no grid when there is
none. The puzzles span the paths the engine takes: a few givens (many solutions), a solution
grid with most cells kept (bands where a digit's three rows are all given, which the band
engine settles before propagating), and such grids with one given changed (often no
solution at all, found by propagation or deep in the search).
"""

from __future__ import annotations

import numpy as np
import pytest

from generators import sudoku
from generators.sudoku import _engine as engine
from generators.sudoku import _tables as tables

#: seeds of the random puzzles; each makes one batch
SEEDS = range(4)
PER_KIND = 60


def _clashes(grid: list[int], cell: int, digit: int) -> bool:
    r, c = divmod(cell, 9)
    box = [9 * (3 * (r // 3) + i // 3) + 3 * (c // 3) + i % 3 for i in range(9)]
    peers = [9 * r + i for i in range(9)] + [9 * i + c for i in range(9)] + box
    return any(grid[p] == digit for p in peers if p != cell)


def _puzzles(seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    solved = sudoku.generate(30, seed=seed).solution
    full = [int(ch) for ch in solved]
    out = []
    for _ in range(PER_KIND):  # random givens that clash nowhere: 20 to 30 of them
        grid = [0] * 81
        want = int(rng.integers(20, 31))
        while sum(1 for v in grid if v) < want:
            cell, digit = int(rng.integers(81)), int(rng.integers(1, 10))
            if grid[cell] == 0 and not _clashes(grid, cell, digit):
                grid[cell] = digit
        out.append(grid)
    for _ in range(PER_KIND):  # a solution with 30 to 75 of its cells kept
        keep = set(rng.permutation(81)[: int(rng.integers(30, 76))].tolist())
        out.append([full[i] if i in keep else 0 for i in range(81)])
    for _ in range(PER_KIND):  # the same with one given changed (where it clashes nowhere)
        grid = out[PER_KIND + len(out) % PER_KIND][:]
        given = [i for i, v in enumerate(grid) if v]
        cell = given[int(rng.integers(len(given)))]
        for digit in rng.permutation(np.arange(1, 10)).tolist():
            if digit != grid[cell] and not _clashes(grid, cell, digit):
                grid[cell] = digit
                break
        out.append(grid)
    return ["".join(str(v) for v in grid) for grid in out]


def _solve(puzzles: list[str], limit: int, houses: bool,
           kernel: str | None) -> tuple[np.ndarray, ...]:  # fmt: skip
    rows = tables.text_rows("".join(puzzles).encode())
    n = len(rows)
    out = (np.zeros(n, np.int32), np.zeros(n, np.int64), np.zeros(n, np.int64),
           np.full((n, 81), 48, np.uint8))  # fmt: skip
    assert engine.solve_rows(rows, 0, n, limit, houses, *out, kernel) == -1
    return out


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("limit", [1, 2])
def test_kernels_agree_and_the_cell_engine_confirms(seed: int, limit: int) -> None:
    puzzles = _puzzles(seed)
    results = {kernel: _solve(puzzles, limit, True, kernel) for kernel in engine.KERNELS}
    first = results[engine.KERNELS[0]]
    for kernel, result in results.items():
        for mine, theirs in zip(result, first, strict=True):
            assert np.array_equal(mine, theirs), kernel
    counts, _, _, grids = first
    cell_counts, _, _, cell_grids = _solve(puzzles, limit, False, None)
    assert np.array_equal(counts, cell_counts)
    assert set(counts.tolist()) >= {0, 1}  # the batch holds puzzles without a solution
    for i, puzzle in enumerate(puzzles):
        grid = grids[i].tobytes().decode()
        if counts[i] == 0:
            assert grid == "0" * 81
            continue
        assert sudoku.is_solution(puzzle, grid), (puzzle, grid)
        if counts[i] == 1 and limit == 2:  # unique: both searches found the one grid
            assert grid == cell_grids[i].tobytes().decode()

"""The engine against tdoku, an independent solver, on the four benchmark sets.

tdoku's driver (``../shared/peers/build_tdoku.sh`` builds it with gcc/g++) prints, per
puzzle, its solution count up to two and its solution. Our verdict must equal tdoku's on
every puzzle (first 1,000 of the big files), and our grid must be a valid completion of the
puzzle, the same as tdoku's when the puzzle is unique. Skipped, saying why, when the peer
sources or a C/C++ compiler are missing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generators import sudoku

ROOT = Path(__file__).resolve().parents[3]
SHARED = ROOT.parent / "shared"
DATA = Path(os.environ.get("ENTITYWORKS_DATA_DIR", SHARED / "data"))
SETS = ["top95.txt", "magictour_top1465.txt", "17_clue_first10000.txt", "forum_hardest_1106.txt"]
FIRST = 1000


def _driver() -> Path:
    script = SHARED / "peers" / "build_tdoku.sh"
    if not script.exists():
        pytest.skip(f"tdoku peer sources not present ({script})")
    if shutil.which(os.environ.get("CC", "gcc")) is None or shutil.which(
            os.environ.get("CXX", "g++")) is None:  # fmt: skip
        pytest.skip("no C/C++ compiler (gcc/g++ or $CC/$CXX) to build tdoku's driver")
    done = subprocess.run(["bash", str(script)], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"tdoku's driver did not build: {done.stderr.strip()[-200:]}")
    return Path(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def driver() -> Path:
    return _driver()


@pytest.mark.parametrize("name", SETS)
def test_verdicts_and_grids_agree_with_tdoku(driver: Path, name: str) -> None:
    path = DATA / name
    if not path.exists():
        pytest.skip(f"data set {path} not present")
    puzzles = [entry.puzzle for entry in sudoku.read_lines(path)][:FIRST]
    out = subprocess.run([str(driver), "--verify", str(path), str(FIRST)], check=True,
                         capture_output=True, text=True).stdout.splitlines()  # fmt: skip
    assert len(out) == len(puzzles)
    counted = sudoku.solve_many(puzzles, workers=1)
    first = sudoku.solve_many(puzzles, workers=1, prove_unique=False)
    for puzzle, line, ours, ours_first in zip(puzzles, out, counted, first, strict=True):
        count, tdoku_first, _ = line.split()
        ours_count = 0 if ours is None else (1 if ours.unique else 2)
        assert ours_count == int(count), puzzle
        if ours is not None and ours_first is not None:
            assert sudoku.is_solution(puzzle, ours.grid)
            assert sudoku.is_solution(puzzle, ours_first.grid)
            if ours.unique:
                assert ours.grid == ours_first.grid == tdoku_first


def _grid_of(seed: int) -> str:
    return sudoku.generate(clues=30, seed=seed).solution


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(17, 60), st.integers(0, 2**32 - 1))
def test_blanked_grids_are_completed_and_counted_like_the_cell_search(
    grid_seed: int, keep: int, order_seed: int
) -> None:
    """Any subset of a full grid's cells is solvable: the band engine finds a valid
    completion, and its count (up to 3) equals the cell-order kernel's, another search."""
    from generators.sudoku import _engine

    rng = np.random.default_rng(grid_seed)
    full = _grid_of(int(rng.integers(0, 50)))
    cells = list(full)
    for cell in np.random.default_rng(order_seed).permutation(81)[: 81 - keep]:
        cells[cell] = "0"
    puzzle = "".join(cells)
    count, grid, nodes, guesses = _engine.solve_digits(puzzle, 3)
    assert count >= 1 and grid is not None and sudoku.is_solution(puzzle, grid)
    assert nodes <= guesses + 1
    assert _engine.solve_digits(puzzle, 3, houses=False)[0] == count


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 49), st.integers(0, 80), st.integers(1, 9))
def test_a_clash_with_the_solution_is_refused_or_solved_validly(
    grid_index: int, cell: int, digit: int
) -> None:
    """A puzzle made from a unique one with one given changed: either no solution (both
    engines agree) or every grid returned is a valid completion."""
    from generators.sudoku import _engine

    puzzles = [e.puzzle for e in sudoku.read_lines(DATA / "top95.txt")] if (
        DATA / "top95.txt").exists() else []  # fmt: skip
    if not puzzles:
        pytest.skip("top95.txt not present")
    cells = list(puzzles[grid_index % len(puzzles)].replace(".", "0"))
    cells[cell] = str(digit)
    puzzle = "".join(cells)
    try:
        sudoku.validate(puzzle)
    except sudoku.InvalidPuzzle:
        return
    count, grid, _, _ = _engine.solve_digits(puzzle, 2)
    assert _engine.solve_digits(puzzle, 2, houses=False)[0] == count
    if count:
        assert grid is not None and sudoku.is_solution(puzzle, grid)

"""Calls into the sudoku engine, C compiled when the package is built
(:mod:`generators._native._csolve`).

:func:`solve_rows` is the one door to the engine for arrays of puzzles: the C side checks
every array it is given (dtype, shape, strides, writability, ranges) and solves with the GIL
released, so threads run it side by side. The helpers below it keep the shapes that the
rest of :mod:`generators.sudoku` and the tests use.

The engine has two searches over the same checks (``houses`` selects):

* the band engine (the default). The grid is three bands of three rows; for each digit and
  band one 64-bit word holds, in its low 27 bits, where the digit may still go in that band
  (bit ``9 * row + column``), in bits 27-29 the rows where it is placed and propagated, in
  bits 32-40 its triad pattern and in bits 41-49 of word ``3 * d + j`` its pattern in stack
  ``j``, as propagation last saw them. Within a band a digit occupies one cell of each row
  and box: the triads (a row crossing a box) it may use form a 3x3 pattern, and a placement
  is one of the six permutations inside it, so one table lookup does box/line eliminations
  and hidden singles for a digit and band. Bit-sliced counting across the nine digit words
  finds empty cells and naked singles; columns and stacks are handled alike, and a triad
  that three digits certainly hold is closed to the others. The search branches as tdoku
  does, on a digit with two permutations left in the band or stack with the fewest
  permutations overall, else on a cell with two candidates, else a digit with two places in
  a row, else the cell with the fewest candidates.
* the cell engine (``houses=False``): a candidate mask per cell, naked and hidden singles and
  box/line eliminations to a fixpoint, branching on the first cell with the fewest
  candidates: the order of version 0.1, kept so that seeded generation makes the same grids.

Both count solutions up to a limit on an explicit stack, so one call proves a puzzle unique
(limit 2); ``nodes`` counts consistent states reached, ``guesses`` trial branches. Their
order of work is part of the contract: a seed, nodes and guesses must not change.
"""

from __future__ import annotations

import numpy as np

from generators._native._csolve import kernels as _c_kernels
from generators._native._csolve import solve_rows as _c_solve_rows
from generators._native._csolve import solve_text as _c_solve_text
from generators.sudoku._tables import text_rows

#: The forms of the band engine this CPU runs (BMI2's ``pext``, compiled for AVX2, where both
#: exist, and the portable one, which every CPU runs); the first is the default.
KERNELS: tuple[str, ...] = _c_kernels()


def solve_rows(text: np.ndarray, start: int, stop: int, limit: int, houses: bool,
               counts: np.ndarray, nodes: np.ndarray, guesses: np.ndarray,
               grids: np.ndarray, kernel: str | None = None) -> int:  # fmt: skip
    """Check and solve rows ``start:stop`` of ``text`` (``uint8[n, 81]``, ASCII as typed)
    into row ``p`` of ``counts`` (int32), ``nodes``, ``guesses`` (int64) and ``grids``
    (uint8, ASCII digits of the first solution); returns -1, or the first invalid row.
    Safe to call from several threads at once on disjoint row ranges. ``kernel`` names a
    form of the band engine (:data:`KERNELS`; None: the default)."""
    return int(_c_solve_rows(text, start, stop, limit, houses, counts, nodes, guesses,
                                  grids, kernel=kernel))  # fmt: skip


def solve_batch(
    puzzles: np.ndarray, limit: int, houses: bool = True, kernel: str | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Solve every row of ``puzzles`` (``int8[n, 81]``, digits 0-9, 0 for blank).

    Returns ``(counts, nodes, guesses, grids)``: solutions found (up to ``limit``), search
    effort, and the first solution as digits (zeros when there is none). Raises ValueError
    for a row with a digit outside 0-9 or a given repeated in a house.
    """
    digits = np.asarray(puzzles, dtype=np.int8).reshape(-1, 81)
    n = len(digits)
    if n and (digits.min() < 0 or digits.max() > 9):
        raise ValueError("puzzle digits must be 0-9")
    rows = text_rows((digits + 48).astype(np.uint8).tobytes())
    counts = np.zeros(n, dtype=np.int32)
    nodes = np.zeros(n, dtype=np.int64)
    guesses = np.zeros(n, dtype=np.int64)
    grids = np.full((n, 81), 48, dtype=np.uint8)
    bad = solve_rows(rows, 0, n, limit, houses, counts, nodes, guesses, grids, kernel)
    if bad >= 0:
        raise ValueError(f"row {bad} is not a valid puzzle")
    return counts, nodes, guesses, (grids - 48).astype(np.int8)


def solve_one(
    text: str, limit: int, houses: bool = True
) -> tuple[int, str | None, int, int] | None:
    """(solutions up to ``limit``, first solution, nodes, guesses) for one 81-char puzzle
    (``0`` or ``.`` for blanks), or None when it is not a valid puzzle."""
    result: tuple[int, str | None, int, int] | None = _c_solve_text(text, limit, houses)
    return result


def solve_digits(digits: str, limit: int, houses: bool = True) -> tuple[int, str | None, int, int]:
    """(solutions up to ``limit``, first solution, nodes, guesses) for a validated puzzle."""
    result = solve_one(digits, limit, houses)
    if result is None:
        raise ValueError(f"not a valid puzzle: {digits!r}")
    return result

"""Sudoku generation: a unique-solution puzzle with an exact number of clues, by seed.

Apart from :mod:`generators.sudoku.solver` because it is the solver's client: it blanks
cells of a random full grid and asks the compiled engine whether the solution stays unique.
"""

from __future__ import annotations

import numbers
import secrets
from dataclasses import dataclass

import numpy as np

from generators.sudoku import _engine as engine
from generators.sudoku import _tables as tables
from generators.sudoku.puzzles import Puzzle


class GenerationError(ValueError):
    """``generate`` could not reach the requested clue count within its attempts."""


@dataclass(frozen=True)
class GeneratedPuzzle:
    """Output of :func:`generate`: a unique-solution puzzle, its solution and the seed used.

    ``attempts`` is how many full grids were tried before the clue target was reached.
    """

    puzzle: Puzzle
    solution: str
    clues: int
    seed: int | None
    attempts: int


def _full_grid(rng: np.random.Generator) -> str:
    """A random complete grid: random independent diagonal boxes, the rest by the solver."""
    cells = ["0"] * 81
    for box in (0, 4, 8):
        digits = rng.permutation(9) + 1
        for cell, d in zip(tables.HOUSES[18 + box], digits, strict=True):
            cells[cell] = str(int(d))
    # Cell-only branching: the first completion found is the one version 0.1 found, so a
    # seed keeps giving the same puzzle. Three independent boxes on the diagonal never
    # conflict, so a completion always exists.
    _, grid, _, _ = engine.solve_digits("".join(cells), 1, houses=False)
    assert grid is not None
    return grid


def generate(
    clues: int = 30,
    seed: int | np.random.Generator | None = None,
    *,
    attempts: int = 50,
) -> GeneratedPuzzle:
    """A puzzle with exactly ``clues`` givens and exactly one solution, reproducible by seed.

    Starts from a random full grid and blanks cells in a random order, keeping a removal only
    when the puzzle stays unique. Without a ``seed`` a fresh one is drawn and recorded in the
    result (``seed`` is None only when a Generator was passed). Low targets (below ~22) are
    rarely reachable this way: after ``attempts`` fresh grids it raises
    :class:`GenerationError` with the best count reached.
    """
    if isinstance(clues, bool) or not isinstance(clues, int) or not 17 <= clues <= 81:
        raise ValueError(f"clues must be an integer between 17 and 81, got {clues!r}")
    if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 1:
        raise ValueError(f"attempts must be an integer >= 1, got {attempts!r}")
    if seed is not None and not isinstance(seed, np.random.Generator):
        if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
            raise ValueError(
                f"seed must be a non-negative int, a numpy Generator or None, got {seed!r}"
            )
    if seed is None:  # draw one, and report it, so that even this result can be reproduced
        seed = secrets.randbits(63)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(int(seed))
    best = 82
    for attempt in range(1, attempts + 1):
        solution = _full_grid(rng)
        cells = list(solution)
        remaining = 81
        for cell in rng.permutation(81):
            if remaining == clues:
                break
            kept = cells[cell]
            cells[cell] = "0"
            if engine.solve_digits("".join(cells), 2)[0] == 1:
                remaining -= 1
            else:
                cells[cell] = kept
        if remaining == clues:
            return GeneratedPuzzle(
                "".join(cells),
                solution,
                clues,
                None if isinstance(seed, np.random.Generator) else int(seed),
                attempt,
            )
        best = min(best, remaining)
    raise GenerationError(
        f"clues={clues} not reached in {attempts} attempts (fewest unique: {best}); "
        f"ask for more clues or more attempts"
    )

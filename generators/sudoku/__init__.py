"""Sudoku: parse, check, solve (proving uniqueness), generate, and Project Euler 96.

The API is gathered here, so ``from generators import sudoku; sudoku.solve(...)`` reads as
the task does; it lives in :mod:`.solver`. The compiled engine is private to this package
(:mod:`._tables`, :mod:`._kernel`, :mod:`._engine`), and :mod:`.euler` holds the small
number-theory helpers of the same Project Euler seed.
"""

from generators.sudoku.solver import (
    MAX_FILE_BYTES,
    GeneratedPuzzle,
    GenerationError,
    InvalidPuzzle,
    NamedPuzzle,
    ProgressCallback,
    Puzzle,
    PuzzleFileError,
    Solution,
    cell_name,
    count_solutions,
    euler96,
    format_grid,
    generate,
    is_solution,
    is_unique,
    parse,
    read_euler,
    read_lines,
    solve,
    solve_many,
    validate,
)

__all__ = [
    "MAX_FILE_BYTES",
    "GeneratedPuzzle",
    "GenerationError",
    "InvalidPuzzle",
    "NamedPuzzle",
    "ProgressCallback",
    "Puzzle",
    "PuzzleFileError",
    "Solution",
    "cell_name",
    "count_solutions",
    "euler96",
    "format_grid",
    "generate",
    "is_solution",
    "is_unique",
    "parse",
    "read_euler",
    "read_lines",
    "solve",
    "solve_many",
    "validate",
]

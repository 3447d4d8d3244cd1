"""Sudoku: parse, check, solve (proving uniqueness), generate, and Project Euler 96.

The API is gathered here, so ``from generators import sudoku; sudoku.solve(...)`` reads as
the task does. :mod:`.puzzles` says what a puzzle is and reads puzzle files, :mod:`.solver`
solves one or many, :mod:`.generation` makes new ones; the compiled engine is private to
this package (:mod:`._tables`, :mod:`._engine`, and its C in
:mod:`generators._native._csolve`), and :mod:`.euler` holds the small number-theory helpers
of the same Project Euler seed.
"""

from generators.sudoku.generation import GeneratedPuzzle, GenerationError, generate
from generators.sudoku.puzzles import (
    MAX_FILE_BYTES,
    InvalidPuzzle,
    NamedPuzzle,
    Puzzle,
    PuzzleColumns,
    PuzzleFileError,
    cell_name,
    format_grid,
    is_solution,
    parse,
    read_columns,
    read_euler,
    read_lines,
    validate,
)
from generators.sudoku.solver import (
    ProgressCallback,
    Solution,
    SolvedArray,
    count_solutions,
    euler96,
    is_unique,
    solve,
    solve_array,
    solve_many,
)

__all__ = [
    "MAX_FILE_BYTES",
    "GeneratedPuzzle",
    "GenerationError",
    "InvalidPuzzle",
    "NamedPuzzle",
    "ProgressCallback",
    "Puzzle",
    "PuzzleColumns",
    "PuzzleFileError",
    "Solution",
    "SolvedArray",
    "cell_name",
    "count_solutions",
    "euler96",
    "format_grid",
    "generate",
    "is_solution",
    "is_unique",
    "parse",
    "read_columns",
    "read_euler",
    "read_lines",
    "solve",
    "solve_array",
    "solve_many",
    "validate",
]

"""Sudoku's houses and the plain-NumPy helpers around the compiled engine.

:mod:`generators.sudoku` checks puzzles and converts them with these alone, and reaches the
engine (:mod:`generators.sudoku._engine`, C) only to solve.
"""

from __future__ import annotations

import numpy as np


def _houses() -> np.ndarray:
    houses = np.zeros((27, 9), dtype=np.int64)
    for r in range(9):
        for c in range(9):
            houses[r, c] = 9 * r + c
            houses[9 + c, r] = 9 * r + c
            b = 3 * (r // 3) + c // 3
            houses[18 + b, 3 * (r % 3) + c % 3] = 9 * r + c
    return houses


HOUSES_ARRAY = _houses()

#: The 27 houses (9 rows, 9 columns, 9 boxes) as tuples of cell indices.
HOUSES: tuple[tuple[int, ...], ...] = tuple(tuple(int(c) for c in h) for h in HOUSES_ARRAY)


#: Rows of :func:`givens_clash` checked at a time: its temporaries (the houses, sorted, and
#: their comparisons) take about 1 KiB a row, so a file of 780,000 puzzles (the readers'
#: limit) would otherwise need most of a GiB for them at once.
CLASH_CHUNK = 8192


def givens_clash(puzzles: np.ndarray) -> np.ndarray:
    """Per row of ``puzzles`` (``int8[n, 81]``, digits 0-9): True when a house holds a
    given twice. Sorting each house's digits puts a repeated given next to itself;
    :data:`CLASH_CHUNK` rows at a time."""
    rows = np.asarray(puzzles).reshape(-1, 81)
    clash = np.zeros(len(rows), dtype=bool)
    for start in range(0, len(rows), CLASH_CHUNK):
        houses = np.sort(rows[start : start + CLASH_CHUNK, HOUSES_ARRAY], axis=2)
        repeated = (houses[:, :, 1:] == houses[:, :, :-1]) & (houses[:, :, 1:] != 0)
        clash[start : start + CLASH_CHUNK] = repeated.any(axis=(1, 2))
    return clash


def to_array(digits: str) -> np.ndarray:
    """``int8[n, 81]`` digits of ``n`` validated puzzles joined into one string."""
    return (np.frombuffer(digits.encode("ascii"), dtype=np.int8) - 48).reshape(-1, 81)


def to_strings(grids: np.ndarray) -> list[str]:
    """81-char digit strings of the rows of an ``int8[n, 81]`` array."""
    text = (grids + 48).tobytes().decode("ascii")
    return [text[i : i + 81] for i in range(0, len(text), 81)]


def text_rows(data: bytes) -> np.ndarray:
    """The ``uint8[n, 81]`` view of ``n`` puzzles of 81 ASCII bytes each, as the compiled
    engine takes them."""
    return np.frombuffer(data, dtype=np.uint8).reshape(-1, 81)

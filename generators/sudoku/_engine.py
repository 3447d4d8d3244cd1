"""Calls into the compiled sudoku engine, loaded without numba when its machine code is kept.

:func:`solve_rows` is the one door to :func:`generators.sudoku._kernel.solve_text`: it checks
the arrays it is given (the kernel trusts them) and calls it through
:mod:`generators._compiled.native`, with the GIL released. The helpers below
it keep the shapes that the rest of :mod:`generators.sudoku` and the tests use.
"""

from __future__ import annotations

import ctypes
import struct

import numpy as np

from generators._compiled import native
from generators.sudoku._tables import text_rows

KERNEL = native.Kernel(
    name="sudoku_solve_text",
    builder="generators.sudoku._kernel:native_entry",
    python="generators.sudoku._kernel:python_entry",
    sources=(
        "generators.sudoku._kernel",
        "generators.sudoku._bands",
        "generators.sudoku._tables",
        "generators._compiled.jit",
    ),
    restype=ctypes.c_int64,
    argtypes=(ctypes.c_void_p,),
)
_pack = struct.Struct("<10q").pack_into


def _expect(name: str, array: np.ndarray, dtype: type, shape: tuple[int, ...]) -> None:
    if (not isinstance(array, np.ndarray) or array.dtype != dtype or array.shape != shape
            or not array.flags.c_contiguous):  # fmt: skip
        raise ValueError(f"{name} must be a C-contiguous {np.dtype(dtype).name} array of "
                         f"shape {shape}")  # fmt: skip
    if name != "text" and not array.flags.writeable:
        raise ValueError(f"{name} must be writable")


def solve_rows(text: np.ndarray, start: int, stop: int, limit: int, houses: bool,
               counts: np.ndarray, nodes: np.ndarray, guesses: np.ndarray,
               grids: np.ndarray) -> int:  # fmt: skip
    """Check and solve rows ``start:stop`` of ``text`` (``uint8[n, 81]``, ASCII as typed)
    into row ``p`` of ``counts`` (int32), ``nodes``, ``guesses`` (int64) and ``grids``
    (uint8, ASCII digits of the first solution); returns -1, or the first invalid row.
    Safe to call from several threads at once on disjoint row ranges."""
    n = text.shape[0] if isinstance(text, np.ndarray) and text.ndim == 2 else -1
    _expect("text", text, np.uint8, (n, 81))
    _expect("counts", counts, np.int32, (n,))
    _expect("nodes", nodes, np.int64, (n,))
    _expect("guesses", guesses, np.int64, (n,))
    _expect("grids", grids, np.uint8, (n, 81))
    if not 0 <= start <= stop <= n:
        raise ValueError(f"rows {start}:{stop} are outside 0:{n}")
    if limit < 1:
        raise ValueError(f"limit must be >= 1, got {limit}")
    solve = native.kernel(KERNEL)
    block, address = native.argument_block()
    _pack(block, 0, id(text), n, start, stop, limit, int(bool(houses)), id(counts), id(nodes),
          id(guesses), id(grids))  # fmt: skip
    return int(solve(address))


def solve_batch(
    puzzles: np.ndarray, limit: int, houses: bool = True
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
    bad = solve_rows(rows, 0, n, limit, houses, counts, nodes, guesses, grids)
    if bad >= 0:
        raise ValueError(f"row {bad} is not a valid puzzle")
    return counts, nodes, guesses, (grids - 48).astype(np.int8)


def solve_one(
    text: str, limit: int, houses: bool = True
) -> tuple[int, str | None, int, int] | None:
    """(solutions up to ``limit``, first solution, nodes, guesses) for one 81-char puzzle
    (``0`` or ``.`` for blanks), or None when it is not a valid puzzle."""
    try:
        rows = text_rows(text.encode("ascii"))
    except (UnicodeEncodeError, ValueError):
        return None
    if rows.shape[0] != 1:
        return None
    counts = np.zeros(1, dtype=np.int32)
    nodes = np.zeros(1, dtype=np.int64)
    guesses = np.zeros(1, dtype=np.int64)
    grids = np.empty((1, 81), dtype=np.uint8)
    if solve_rows(rows, 0, 1, limit, houses, counts, nodes, guesses, grids) >= 0:
        return None
    grid = grids[0].tobytes().decode("ascii") if counts[0] else None
    return int(counts[0]), grid, int(nodes[0]), int(guesses[0])


def solve_digits(digits: str, limit: int, houses: bool = True) -> tuple[int, str | None, int, int]:
    """(solutions up to ``limit``, first solution, nodes, guesses) for a validated puzzle."""
    result = solve_one(digits, limit, houses)
    if result is None:
        raise ValueError(f"not a valid puzzle: {digits!r}")
    return result

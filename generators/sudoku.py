"""Sudoku: parsing, validation, an exact solver that proves uniqueness, generation, Euler 96.

Representation: a puzzle is a plain ``str`` of 81 characters, row by row from the top-left
cell, ``"1"``-``"9"`` for givens and ``"0"`` for blanks (the Project Euler convention). Every
function accepts ``"."`` for blanks as well and returns the canonical ``"0"`` form, so that a
puzzle is hashable, compact in a database column and printable as is. Cells are numbered
``0..80`` (``9 * row + col``) in code and named ``r1c1``..``r9c9`` in messages.

The solver (see :mod:`generators._sudoku_core`) propagates naked and hidden singles and box/line
eliminations on bitmasks and searches the cell with the fewest candidates. By default it keeps
searching after the first solution until it has either found a second one or exhausted the
tree, so every :class:`Solution` says whether the puzzle is unique.
"""

from __future__ import annotations

import numbers
import os
import re
import secrets
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass

import numpy as np

from generators import _sudoku_core as core

Puzzle = str
"""An 81-char string, ``"0"`` for blanks (see the module docstring)."""

ProgressCallback = Callable[[int, int], None]
"""Called as ``progress(done, total)`` after each finished batch of puzzles."""

_DIGITS = frozenset("0123456789")
_HEADER = re.compile(r"^grid\s*(\S.*)?$", re.IGNORECASE)
_ROW = re.compile(r"^[0-9.]{9}$")


class InvalidPuzzle(ValueError):
    """A puzzle (or puzzle file) that cannot be a sudoku; ``cells`` lists offending cells."""

    def __init__(self, message: str, cells: Sequence[int] = ()) -> None:
        super().__init__(message)
        self.cells: tuple[int, ...] = tuple(cells)


class PuzzleFileError(InvalidPuzzle):
    """A malformed puzzle file; the message names the file, the grid and the line."""


class GenerationError(ValueError):
    """``generate`` could not reach the requested clue count within its attempts."""


@dataclass(frozen=True)
class NamedPuzzle:
    """A puzzle read from a file, with where it came from (kept for catalogs and errors)."""

    name: str
    puzzle: Puzzle
    line: int


@dataclass(frozen=True)
class Solution:
    """A solved grid plus what it cost to find it.

    ``unique`` is True/False when the search went on to look for a second solution (the
    default) and None when it stopped at the first. ``nodes`` (states expanded) and
    ``guesses`` (trial placements) measure difficulty: 0 guesses means singles alone solve it.
    """

    puzzle: Puzzle
    grid: str
    unique: bool | None
    nodes: int
    guesses: int

    @property
    def rows(self) -> list[str]:
        """The solved grid as nine 9-char strings."""
        return [self.grid[9 * r : 9 * r + 9] for r in range(9)]

    @property
    def top_left(self) -> int:
        """The three-digit number in the top-left corner (the Euler 96 quantity)."""
        return int(self.grid[:3])


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


def cell_name(index: int) -> str:
    """``r1c1``-style name of a cell index, used in every error message."""
    return f"r{index // 9 + 1}c{index % 9 + 1}"


def validate(puzzle: str) -> Puzzle:
    """Check length, characters and duplicate givens; return the canonical ``0`` form.

    Raises :class:`InvalidPuzzle` naming the cells at fault, so that a user can find the typo.
    """
    if not isinstance(puzzle, str):
        raise InvalidPuzzle(f"a puzzle must be a str of 81 cells, got {type(puzzle).__name__}")
    if len(puzzle) != 81:
        raise InvalidPuzzle(f"a puzzle has 81 cells, got {len(puzzle)} characters")
    digits = puzzle.replace(".", "0")
    bad = [i for i, ch in enumerate(digits) if ch not in _DIGITS]
    if bad:
        shown = ", ".join(f"{puzzle[i]!r} at {cell_name(i)}" for i in bad[:5])
        more = f" (and {len(bad) - 5} more)" if len(bad) > 5 else ""
        raise InvalidPuzzle(f"invalid characters: {shown}{more}; use 1-9, 0 or .", bad)
    for kind, houses in (
        ("row", core.HOUSES[:9]),
        ("column", core.HOUSES[9:18]),
        ("box", core.HOUSES[18:]),
    ):
        for number, house in enumerate(houses, start=1):
            seen: dict[str, int] = {}
            for cell in house:
                ch = digits[cell]
                if ch == "0":
                    continue
                if ch in seen:
                    first = seen[ch]
                    raise InvalidPuzzle(
                        f"duplicate given {ch} in {kind} {number}: "
                        f"{cell_name(first)} and {cell_name(cell)}",
                        (first, cell),
                    )
                seen[ch] = cell
    return digits


def parse(text: str) -> Puzzle:
    """Parse one 81-char line (``0`` or ``.`` for blanks, surrounding whitespace ignored)."""
    if not isinstance(text, str):
        raise InvalidPuzzle(f"expected text, got {type(text).__name__}")
    return validate(text.strip())


#: Largest puzzle file read (about 780,000 one-line puzzles): the readers return lists, so a
#: bigger file is refused with a clear error instead of exhausting memory.
MAX_FILE_BYTES = 64 << 20


def _read_text(path: str | os.PathLike[str]) -> list[str]:
    """Lines of a text file, any line ending, with a clear error for non-text content."""
    with open(path, "rb") as fh:
        raw = fh.read(MAX_FILE_BYTES + 1)
    if len(raw) > MAX_FILE_BYTES:
        raise PuzzleFileError(
            f"{path}: larger than {MAX_FILE_BYTES >> 20} MiB; split it into smaller files"
        )
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise PuzzleFileError(
            f"{path}: not a text file ({exc.reason} at byte {exc.start})"
        ) from None
    return text.splitlines()


def read_euler(path: str | os.PathLike[str]) -> list[NamedPuzzle]:
    """Read a Project Euler 96 file: ``Grid NN`` then 9 rows of 9 digits, repeated.

    LF and CRLF both work and blank lines are skipped anywhere. A header without 9 valid rows
    after it, or stray text, raises :class:`PuzzleFileError` naming the grid and the line.
    """
    lines = _read_text(path)
    result: list[NamedPuzzle] = []
    n = 0
    total = len(lines)
    while n < total:
        line = lines[n].strip()
        n += 1
        if not line:
            continue
        header = _HEADER.match(line)
        if header is None:
            raise PuzzleFileError(
                f"{path}, line {n}: expected a 'Grid NN' header, got {line[:40]!r}"
            )
        name = line
        start = n
        rows: list[str] = []
        while len(rows) < 9:
            if n >= total:
                raise PuzzleFileError(
                    f"{path}: {name} (line {start}) has only {len(rows)} of 9 rows "
                    f"before the end of the file"
                )
            row = lines[n].strip()
            n += 1
            if not row:
                continue
            if _ROW.match(row) is None:
                raise PuzzleFileError(
                    f"{path}: {name} (line {start}), line {n}: expected a row of 9 digits, "
                    f"got {row[:40]!r}"
                )
            rows.append(row)
        try:
            puzzle = validate("".join(rows))
        except InvalidPuzzle as exc:
            raise PuzzleFileError(f"{path}: {name} (line {start}): {exc}", exc.cells) from None
        result.append(NamedPuzzle(name, puzzle, start))
    return result


def read_lines(path: str | os.PathLike[str]) -> list[NamedPuzzle]:
    """Read one puzzle per line; blank lines and ``#`` comments (whole or trailing) skipped."""
    result: list[NamedPuzzle] = []
    for n, raw in enumerate(_read_text(path), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        try:
            puzzle = validate(line)
        except InvalidPuzzle as exc:
            raise PuzzleFileError(f"{path}, line {n}: {exc}", exc.cells) from None
        result.append(NamedPuzzle(f"line {n}", puzzle, n))
    return result


def _check_limit(limit: int) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError(f"limit must be an integer >= 1, got {limit!r}")
    return limit


def _as_puzzle(item: str | NamedPuzzle) -> Puzzle:
    return validate(item.puzzle if isinstance(item, NamedPuzzle) else item)


def solve(puzzle: str | NamedPuzzle, *, prove_unique: bool = True) -> Solution | None:
    """Solve a puzzle; None when it has no solution.

    With ``prove_unique`` (default) the search continues for a second solution, so that
    ``Solution.unique`` is meaningful; turn it off only when speed matters more than the proof.
    """
    digits = _as_puzzle(puzzle)
    found, nodes, guesses = core.solve_digits(digits, 2 if prove_unique else 1)
    if not found:
        return None
    unique = len(found) == 1 if prove_unique else None
    return Solution(digits, found[0], unique, nodes, guesses)


def count_solutions(puzzle: str | NamedPuzzle, limit: int = 2) -> int:
    """Number of solutions, counted up to ``limit`` (``limit=2`` tells 0 / 1 / many apart)."""
    _check_limit(limit)
    found, _, _ = core.solve_digits(_as_puzzle(puzzle), limit)
    return len(found)


def is_unique(puzzle: str | NamedPuzzle) -> bool:
    """True when the puzzle has exactly one solution."""
    return count_solutions(puzzle, 2) == 1


def is_solution(puzzle: str, grid: str) -> bool:
    """True when ``grid`` is a complete valid sudoku that keeps every given of ``puzzle``."""
    digits = validate(puzzle)
    if len(grid) != 81 or "0" in grid or "." in grid:
        return False
    try:
        validate(grid)
    except InvalidPuzzle:
        return False
    return all(g == "0" or g == s for g, s in zip(digits, grid, strict=True))


def format_grid(puzzle: str) -> str:
    """A 9x9 text picture with box separators (``.`` for blanks), for humans and logs."""
    digits = puzzle.replace("0", ".")
    out: list[str] = []
    for r in range(9):
        if r in (3, 6):
            out.append("------+-------+------")
        row = digits[9 * r : 9 * r + 9]
        out.append(" | ".join(" ".join(row[c : c + 3]) for c in (0, 3, 6)))
    return "\n".join(out)


def _solve_batch(puzzles: list[str], limit: int) -> list[tuple[list[str], int, int]]:
    """Worker entry point: plain tuples pickle cheaply across processes."""
    return [core.solve_digits(p, limit) for p in puzzles]


def _check_workers(workers: int | None) -> int:
    if workers is None:
        try:
            return max(1, len(os.sched_getaffinity(0)))
        except AttributeError:  # pragma: no cover - non-Linux
            return max(1, os.cpu_count() or 1)
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be None or an integer >= 1, got {workers!r}")
    return workers


def solve_many(
    puzzles: Iterable[str | NamedPuzzle],
    workers: int | None = None,
    progress: ProgressCallback | None = None,
    *,
    prove_unique: bool = True,
    batch_size: int = 64,
) -> list[Solution | None]:
    """Solve many puzzles on ``workers`` processes (default: every available core).

    Results come back in input order and equal ``[solve(p) for p in puzzles]``. Every puzzle is
    validated first, so a bad one fails fast with its position in the message. ``progress``
    is called as ``progress(done, total)`` in this process after each batch.
    """
    items = list(puzzles)
    digits: list[str] = []
    for index, item in enumerate(items):
        try:
            digits.append(_as_puzzle(item))
        except InvalidPuzzle as exc:
            raise InvalidPuzzle(f"puzzle #{index}: {exc}", exc.cells) from None
    n_workers = _check_workers(workers)
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be an integer >= 1, got {batch_size!r}")
    if progress is not None and not callable(progress):
        raise ValueError("progress must be a callable progress(done, total) or None")
    limit = 2 if prove_unique else 1
    total = len(digits)
    batches = [digits[i : i + batch_size] for i in range(0, total, batch_size)]
    raw: list[list[tuple[list[str], int, int]]] = [[] for _ in batches]
    done = 0
    if n_workers == 1 or len(batches) <= 1:
        for k, batch in enumerate(batches):
            raw[k] = _solve_batch(batch, limit)
            done += len(batch)
            if progress is not None:
                progress(done, total)
    else:
        with ProcessPoolExecutor(max_workers=min(n_workers, len(batches))) as pool:
            futures = {pool.submit(_solve_batch, b, limit): k for k, b in enumerate(batches)}
            for future in as_completed(futures):
                k = futures[future]
                raw[k] = future.result()
                done += len(batches[k])
                if progress is not None:
                    progress(done, total)
    results: list[Solution | None] = []
    for batch, outcome in zip(batches, raw, strict=True):
        for puzzle, (found, nodes, guesses) in zip(batch, outcome, strict=True):
            if not found:
                results.append(None)
            else:
                unique = len(found) == 1 if prove_unique else None
                results.append(Solution(puzzle, found[0], unique, nodes, guesses))
    return results


def euler96(path: str | os.PathLike[str], workers: int | None = 1) -> int:
    """Project Euler 96: the sum of the top-left three-digit numbers of every solved grid.

    A grid without a solution, or with several, makes the answer meaningless, so it raises
    :class:`InvalidPuzzle` naming the grid instead of returning a wrong sum.
    """
    entries = read_euler(path)
    solutions = solve_many(entries, workers=workers)
    total = 0
    for entry, solution in zip(entries, solutions, strict=True):
        if solution is None:
            raise InvalidPuzzle(f"{path}: {entry.name} (line {entry.line}) has no solution")
        if not solution.unique:
            raise InvalidPuzzle(f"{path}: {entry.name} (line {entry.line}) is not unique")
        total += solution.top_left
    return total


def _full_grid(rng: np.random.Generator) -> str:
    """A random complete grid: random independent diagonal boxes, the rest by the solver."""
    cells = ["0"] * 81
    for box in (0, 4, 8):
        digits = rng.permutation(9) + 1
        for cell, d in zip(core.HOUSES[18 + box], digits, strict=True):
            cells[cell] = str(int(d))
    found, _, _ = core.solve_digits("".join(cells), 1)
    # Three independent boxes on the diagonal never conflict, so a completion always exists.
    return found[0]


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
            found, _, _ = core.solve_digits("".join(cells), 2)
            if len(found) == 1:
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

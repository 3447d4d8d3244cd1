"""Sudoku: parsing, validation, an exact solver that proves uniqueness, generation, Euler 96.

Representation: a puzzle is a plain ``str`` of 81 characters, row by row from the top-left
cell, ``"1"``-``"9"`` for givens and ``"0"`` for blanks (the Project Euler convention). Every
function accepts ``"."`` for blanks as well and returns the canonical ``"0"`` form, so that a
puzzle is hashable, compact in a database column and printable as is. Cells are numbered
``0..80`` (``9 * row + col``) in code and named ``r1c1``..``r9c9`` in messages.

The seed's brute force (*csSudokuBruteForce*) fills the blanks one after another in reading
order, trying digits 1-9 and backing up on a conflict. That is fine for the easy Euler grids,
but its cost grows exponentially with the blanks it cannot settle: it stops at the first
solution, so it cannot tell a unique puzzle from one with many, and a puzzle without a solution
(Norvig's "impossible" one) makes it walk a tree of millions of dead ends. This solver instead
reasons before it guesses: candidate bitmasks, naked and hidden singles and box/line
eliminations to a fixpoint, then a depth-first search on the smallest choice (a cell with the
fewest candidates or a digit with only two places in a house), with the same reasoning after
every guess. It keeps searching after the first solution until it has found a second one or
exhausted the tree, so every :class:`Solution` says whether the puzzle is unique, and its
``nodes`` and ``guesses`` measure how hard the puzzle was. The engine is compiled with numba
(see :mod:`generators.sudoku._kernel`), and a later process loads its machine code without
numba (:mod:`generators._compiled.native`); :func:`solve_many` solves whole arrays of puzzles per
compiled call and spreads large jobs over threads, which run the GIL-free engine in parallel.
"""

from __future__ import annotations

import numbers
import os
import queue
import re
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from itertools import chain, repeat
from operator import itemgetter
from typing import BinaryIO, NoReturn

import numpy as np

from generators.sudoku import _engine as engine
from generators.sudoku import _tables as tables

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
    if digits.isascii() and digits.isdigit():
        if not tables.givens_clash(tables.to_array(digits)).any():
            return digits
    return _explain(puzzle, digits)


def _explain(puzzle: str, digits: str) -> Puzzle:
    """The slow check behind :func:`validate`: finds the offending cells and raises."""
    bad = [i for i, ch in enumerate(digits) if ch not in _DIGITS]
    if bad:
        shown = ", ".join(f"{puzzle[i]!r} at {cell_name(i)}" for i in bad[:5])
        more = f" (and {len(bad) - 5} more)" if len(bad) > 5 else ""
        raise InvalidPuzzle(f"invalid characters: {shown}{more}; use 1-9, 0 or .", bad)
    for kind, houses in (
        ("row", tables.HOUSES[:9]),
        ("column", tables.HOUSES[9:18]),
        ("box", tables.HOUSES[18:]),
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


def _source_name(source: str | os.PathLike[str] | BinaryIO) -> str:
    """How messages name a puzzle source: a path, or a stream's ``name``."""
    if isinstance(source, str | os.PathLike):
        return os.fspath(source)
    return str(getattr(source, "name", "<stream>"))


def _read_text(path: str | os.PathLike[str] | BinaryIO) -> list[str]:
    """Lines of a text file or binary stream (read once), any line ending, with a clear error
    for non-text content."""
    if hasattr(path, "read"):
        raw = path.read(MAX_FILE_BYTES + 1)
        path = _source_name(path)
    else:
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


def read_euler(path: str | os.PathLike[str] | BinaryIO) -> list[NamedPuzzle]:
    """Read a Project Euler 96 file (a path, or a binary stream read once): ``Grid NN`` then
    9 rows of 9 digits, repeated.

    LF and CRLF both work and blank lines are skipped anywhere. A header without 9 valid rows
    after it, or stray text, raises :class:`PuzzleFileError` naming the grid and the line.
    """
    lines = _read_text(path)
    path = _source_name(path)
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


def read_lines(path: str | os.PathLike[str] | BinaryIO) -> list[NamedPuzzle]:
    """Read one puzzle per line (a path, or a binary stream read once); blank lines and ``#``
    comments (whole or trailing) skipped."""
    lines = _read_text(path)
    path = _source_name(path)
    numbers: list[int] = []
    texts: list[str] = []
    for n, raw in enumerate(lines, start=1):
        line = raw.split("#", 1)[0].strip()
        if line:
            numbers.append(n)
            texts.append(line)
    puzzles = _valid_in_bulk(texts)
    if puzzles is None:  # something is wrong: find the first bad line and name it
        for n, line in zip(numbers, texts, strict=True):
            try:
                validate(line)
            except InvalidPuzzle as exc:
                raise PuzzleFileError(f"{path}, line {n}: {exc}", exc.cells) from None
        raise AssertionError("bulk validation disagrees with validate()")  # pragma: no cover
    return [NamedPuzzle(f"line {n}", puzzle, n) for n, puzzle in zip(numbers, puzzles, strict=True)]


def _valid_in_bulk(texts: list[str]) -> list[Puzzle] | None:
    """The canonical digits of every text when all are valid puzzles (one compiled check for
    all of them), else None; :func:`validate` then explains the first bad one."""
    if not texts:
        return []
    if set(map(len, texts)) != {81}:
        return None
    joined = "".join(texts).replace(".", "0")
    if not (joined.isascii() and joined.isdigit()):
        return None
    if tables.givens_clash(tables.to_array(joined)).any():
        return None
    return [joined[i : i + 81] for i in range(0, len(joined), 81)]


def _check_limit(limit: int) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError(f"limit must be an integer >= 1, got {limit!r}")
    return limit


def _as_puzzle(item: str | NamedPuzzle) -> Puzzle:
    return validate(item.puzzle if isinstance(item, NamedPuzzle) else item)


def _solve_text(puzzle: str | NamedPuzzle, limit: int, houses: bool = True
                ) -> tuple[Puzzle, tuple[int, str | None, int, int]]:
    """Check and solve one puzzle in one compiled call; the canonical digits and
    (count, grid, nodes, guesses). Only an invalid puzzle takes the slow, explaining path."""
    text = puzzle.puzzle if isinstance(puzzle, NamedPuzzle) else puzzle
    if isinstance(text, str) and len(text) == 81:
        result = engine.solve_one(text, limit, houses)
        if result is not None:
            return text.replace(".", "0"), result
    validate(text)  # raises, naming what is wrong
    raise AssertionError("the compiled check disagrees with validate()")  # pragma: no cover


def solve(puzzle: str | NamedPuzzle, *, prove_unique: bool = True) -> Solution | None:
    """Solve a puzzle; None when it has no solution.

    With ``prove_unique`` (default) the search continues for a second solution, so that
    ``Solution.unique`` is meaningful; turn it off only when speed matters more than the proof.
    """
    digits, (count, grid, nodes, guesses) = _solve_text(puzzle, 2 if prove_unique else 1)
    if grid is None:
        return None
    unique = count == 1 if prove_unique else None
    return Solution(digits, grid, unique, nodes, guesses)


def count_solutions(puzzle: str | NamedPuzzle, limit: int = 2) -> int:
    """Number of solutions, counted up to ``limit`` (``limit=2`` tells 0 / 1 / many apart)."""
    _check_limit(limit)
    return _solve_text(puzzle, limit)[1][0]


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


def _check_workers(workers: int | None) -> int:
    if workers is None:
        try:
            return max(1, len(os.sched_getaffinity(0)))
        except AttributeError:  # pragma: no cover - non-Linux
            return max(1, os.cpu_count() or 1)
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be None or an integer >= 1, got {workers!r}")
    return workers


def _texts(items: Sequence[str | NamedPuzzle]) -> tuple[list[str], bytes] | None:
    """The puzzle texts of ``items`` and their ASCII bytes joined, checked in bulk for type,
    length and ASCII (characters and clashes are checked by the compiled workers); None
    when one of them is wrong (:func:`_name_first_bad` then names it)."""
    kinds = set(map(type, items))
    if kinds <= {str}:
        texts: list[str] = items  # type: ignore[assignment]
    else:
        texts = [item.puzzle if isinstance(item, NamedPuzzle) else item for item in items]
    try:
        joined = "".join(texts)
    except TypeError:
        return None
    if texts and set(map(len, texts)) != {81}:
        return None
    try:
        return texts, joined.encode("ascii")
    except UnicodeEncodeError:
        return None


def _name_first_bad(items: Sequence[str | NamedPuzzle]) -> NoReturn:
    """Raise :class:`InvalidPuzzle` for the first invalid puzzle, naming its position."""
    for index, item in enumerate(items):
        try:
            _as_puzzle(item)
        except InvalidPuzzle as exc:
            raise InvalidPuzzle(f"puzzle #{index}: {exc}", exc.cells) from None
    raise AssertionError("the compiled check disagrees with validate()")  # pragma: no cover


#: Chunk sizes when ``batch_size`` is None: a worker takes at most ``_MAX_CHUNK`` puzzles at
#: a time (progress is reported at least that often) and at least ``_MIN_CHUNK``; with more
#: than one worker a chunk is an eighth of each worker's share of what is left, so that
#: chunks shrink towards the end and the workers finish together, hard puzzles or not.
_MAX_CHUNK = 256
_MIN_CHUNK = 4

#: With ``workers=None`` the calling thread starts alone, on small chunks, and starts the
#: other workers only once it has spent this long (seconds) with work left: a job smaller
#: than that (a hundred easy puzzles) is not worth a thread.
_PARALLEL_AFTER = 0.002


class _Chunks:
    """Hands out ``[start, stop)`` ranges of puzzles to the workers, in order, under a lock."""

    def __init__(self, total: int, size: int | None, workers: int) -> None:
        self.total = total
        self.size = size
        self.workers = workers
        self.next = 0
        self.stopped = False
        self.lock = threading.Lock()

    def take(self, most: int | None = None) -> tuple[int, int] | None:
        """The next range, or None when no work is left or the job was stopped. ``most``
        caps automatic chunks (a fixed ``size`` is what progress reports promise)."""
        with self.lock:
            start = self.next
            if start >= self.total or self.stopped:
                return None
            if self.size is not None:
                size = self.size
            elif self.workers == 1:
                size = _MAX_CHUNK
            else:
                share = (self.total - start) // (8 * self.workers)
                size = min(_MAX_CHUNK, max(_MIN_CHUNK, share))
                if most is not None:
                    size = min(size, most)
            self.next = min(start + size, self.total)
            return start, self.next


def _solutions(puzzles: Iterable[Puzzle], grids: Iterable[str], unique: Iterable[bool | None],
               nodes: Iterable[int], guesses: Iterable[int]) -> list[Solution | None]:  # fmt: skip
    """``Solution`` objects built field by field, bypassing the frozen dataclass's
    ``__init__`` (one ``object.__setattr__`` call per field): equal objects at a quarter of
    the cost, which is most of what one thread of :func:`solve_many` does alone."""
    make = object.__new__
    built: list[Solution | None] = []
    rows = zip(puzzles, grids, unique, nodes, guesses, strict=False)  # unique may repeat None
    for puzzle, grid, one, node_count, guess_count in rows:
        solution = make(Solution)
        fields = solution.__dict__
        fields["puzzle"] = puzzle
        fields["grid"] = grid
        fields["unique"] = one
        fields["nodes"] = node_count
        fields["guesses"] = guess_count
        built.append(solution)
    return built


def solve_many(
    puzzles: Iterable[str | NamedPuzzle],
    workers: int | None = None,
    progress: ProgressCallback | None = None,
    *,
    prove_unique: bool = True,
    batch_size: int | None = None,
) -> list[Solution | None]:
    """Solve many puzzles, a chunk of them per compiled call, on up to ``workers`` cores.

    Results come back in input order and equal ``[solve(p) for p in puzzles]``. An invalid
    puzzle stops the job: :class:`InvalidPuzzle` names the first one and its position, and
    nothing is returned. ``progress`` is called as ``progress(done, total)`` in the calling
    thread after each finished chunk: ``batch_size`` puzzles when given, otherwise up to
    256, smaller near the end. ``workers=None`` means every available core, used only when
    the job proves big enough to repay it (a couple of milliseconds of solving); an
    explicit ``workers > 1`` starts that many workers whenever there is more than one chunk.

    The workers are threads, the calling thread among them, taking chunks from a shared
    counter until none is left: the compiled engine checks and solves a chunk with the GIL
    released, so the threads run it on separate cores in parallel, sharing the puzzles and
    the results without copying. A worker turns its own chunk into :class:`Solution`
    objects as well, while the others go on solving, so nothing but a little bookkeeping
    is left for one thread alone. Worker processes would pay a fork (or a fresh interpreter
    and numba start-up) and pickling for every job instead.
    """
    items = list(puzzles)
    n_workers = _check_workers(workers)
    if batch_size is not None and (
        isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1
    ):
        raise ValueError(f"batch_size must be None or an integer >= 1, got {batch_size!r}")
    if progress is not None and not callable(progress):
        raise ValueError("progress must be a callable progress(done, total) or None")
    checked = _texts(items)
    if checked is None:
        _name_first_bad(items)
    texts, data = checked
    total = len(texts)
    if total == 0:
        return []
    limit = 2 if prove_unique else 1
    rows = tables.text_rows(data)
    counts = np.zeros(total, dtype=np.int32)
    nodes = np.zeros(total, dtype=np.int64)
    guesses = np.zeros(total, dtype=np.int64)
    grids = np.zeros((total, 81), dtype=np.uint8)
    if b"." in data or not set(map(type, texts)) <= {str}:
        canonical = data.replace(b".", b"0").decode("ascii")
        texts = [canonical[i : i + 81] for i in range(0, len(canonical), 81)]
    chunks = _Chunks(total, batch_size, n_workers)
    pieces: list[tuple[int, list[Solution | None]]] = []
    reports: queue.SimpleQueue[int | None] = queue.SimpleQueue()
    errors: list[BaseException] = []

    def solve_chunk(start: int, stop: int) -> bool:
        """Solve one chunk and keep its results; False when it holds an invalid puzzle."""
        if engine.solve_rows(rows, start, stop, limit, True, counts, nodes, guesses, grids) >= 0:
            chunks.stopped = True
            return False
        found = counts[start:stop].tolist()
        text = grids[start:stop].tobytes().decode("ascii")
        unique: Iterable[bool | None] = map((1).__eq__, found) if prove_unique else repeat(None)
        solved: list[Solution | None] = _solutions(
            texts[start:stop],
            [text[i : i + 81] for i in range(0, len(text), 81)],
            unique,
            nodes[start:stop].tolist(),
            guesses[start:stop].tolist(),
        )
        if 0 in found:
            for i, count in enumerate(found):
                if count == 0:
                    solved[i] = None
        pieces.append((start, solved))
        return True

    def helper() -> None:
        try:
            while (span := chunks.take()) is not None:
                if not solve_chunk(*span):
                    break
                reports.put(span[1] - span[0])
        except BaseException as exc:  # handed to the calling thread, which re-raises it
            chunks.stopped = True
            errors.append(exc)
        reports.put(None)

    threads: list[threading.Thread] = []
    running = 0  # helpers that have not reported their end yet
    done = 0

    def start_helpers() -> None:
        nonlocal running
        for _ in range(n_workers - 1):
            thread = threading.Thread(target=helper, name="sudoku-solve_many", daemon=True)
            running += 1
            thread.start()
            threads.append(thread)

    def report(size: int | None) -> None:
        nonlocal done, running
        if size is None:
            running -= 1
            return
        done += size
        if progress is not None:
            progress(done, total)

    explicit = n_workers > 1 and workers is not None
    probing = n_workers > 1 and workers is None
    began = time.perf_counter()
    most = _MIN_CHUNK
    try:
        while (span := chunks.take(most if probing else None)) is not None:
            if explicit and not threads and span[1] < total:  # more than one chunk
                start_helpers()
            if not solve_chunk(*span):
                break
            report(span[1] - span[0])
            while not reports.empty():
                report(reports.get())
            if probing:
                most *= 2
                if time.perf_counter() - began > _PARALLEL_AFTER and chunks.next < total:
                    probing = False
                    start_helpers()
        while running:  # the helpers' last chunks
            report(reports.get())
    finally:
        chunks.stopped = True
        for thread in threads:
            thread.join()
    if errors:
        raise errors[0]
    if done < total:
        _name_first_bad(items)
    pieces.sort(key=itemgetter(0))
    return list(chain.from_iterable(piece for _, piece in pieces))


def euler96(path: str | os.PathLike[str] | BinaryIO, workers: int | None = 1) -> int:
    """Project Euler 96: the sum of the top-left three-digit numbers of every solved grid.

    ``path`` may be a binary stream, read once (its ``name`` names it in messages). A grid
    without a solution, or with several, makes the answer meaningless, so it raises
    :class:`InvalidPuzzle` naming the grid instead of returning a wrong sum.
    """
    entries = read_euler(path)
    name = _source_name(path)
    solutions = solve_many(entries, workers=workers)
    total = 0
    for entry, solution in zip(entries, solutions, strict=True):
        if solution is None:
            raise InvalidPuzzle(f"{name}: {entry.name} (line {entry.line}) has no solution")
        if not solution.unique:
            raise InvalidPuzzle(f"{name}: {entry.name} (line {entry.line}) is not unique")
        total += solution.top_left
    return total


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

"""Sudoku solving: an exact solver that proves uniqueness, many puzzles at once, Euler 96.

Puzzles are the 81-character strings of :mod:`generators.sudoku.puzzles`.

The seed's brute force (*csSudokuBruteForce*) fills the blanks one after another in reading
order, trying digits 1-9 and backing up on a conflict. That is fine for the easy Euler grids,
but its cost grows exponentially with the blanks it cannot settle: it stops at the first
solution, so it cannot tell a unique puzzle from one with many, and a puzzle without a solution
(Norvig's "impossible" one) makes it walk a tree of millions of dead ends. This solver instead
reasons before it guesses: naked and hidden singles, box/line and triad eliminations to a
fixpoint, then a depth-first search on a small choice (a digit with two placements left in a
band or stack, as tdoku chooses, else a cell with the fewest candidates), with the same
reasoning after every guess. It keeps searching after the first solution until it has found a
second one or exhausted the tree, so every :class:`Solution` says whether the puzzle is unique,
and its ``nodes`` and ``guesses`` measure how hard the puzzle was. The engine keeps, per digit
and band, a 27-bit word of where the digit may go, so box/line reasoning and singles are a few
table lookups and bit operations (see :mod:`generators.sudoku._engine`); it is C, compiled
when the package is built (``generators/_native/_csolve.c``), and :func:`solve_many` solves whole
arrays of puzzles per call and spreads large jobs over threads, which run the GIL-free engine in
parallel.
"""

from __future__ import annotations

import os
import queue
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
from generators.sudoku.puzzles import (
    InvalidPuzzle,
    NamedPuzzle,
    Puzzle,
    read_columns,
    source_name,
    validate,
)

ProgressCallback = Callable[[int, int], None]
"""Called as ``progress(done, total)`` after each finished batch of puzzles."""


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


def _check_limit(limit: int) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ValueError(f"limit must be an integer >= 1, got {limit!r}")
    return limit


def _as_puzzle(item: str | NamedPuzzle) -> Puzzle:
    return validate(item.puzzle if isinstance(item, NamedPuzzle) else item)


def _solve_text(
    puzzle: str | NamedPuzzle, limit: int, houses: bool = True
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
    ``__init__`` (one ``object.__setattr__`` call per field): equal objects, much cheaper,
    and that is most of what one thread of :func:`solve_many` does alone."""
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


def _check_batch(workers: int | None, progress: ProgressCallback | None,
                 batch_size: int | None) -> int:  # fmt: skip
    n_workers = _check_workers(workers)
    if batch_size is not None and (
        isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1
    ):
        raise ValueError(f"batch_size must be None or an integer >= 1, got {batch_size!r}")
    if progress is not None and not callable(progress):
        raise ValueError("progress must be a callable progress(done, total) or None")
    return n_workers


def _solve_chunks(
    rows: np.ndarray,
    limit: int,
    workers: int | None,
    n_workers: int,
    progress: ProgressCallback | None,
    batch_size: int | None,
    outputs: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    finish: Callable[[int, int], None] | None = None,
) -> bool:
    """Solve every row of ``rows`` into ``outputs`` (counts, nodes, guesses, grids), a chunk
    per engine call, on up to ``n_workers`` threads (see :func:`solve_many`); ``finish(start,
    stop)`` runs in the worker after each chunk. False when a row is not a valid puzzle (the
    job then stops early)."""
    total = len(rows)
    counts, nodes, guesses, grids = outputs
    chunks = _Chunks(total, batch_size, n_workers)
    reports: queue.SimpleQueue[int | None] = queue.SimpleQueue()
    errors: list[BaseException] = []

    def solve_chunk(start: int, stop: int) -> bool:
        """Solve one chunk and keep its results; False when it holds an invalid puzzle."""
        if engine.solve_rows(rows, start, stop, limit, True, counts, nodes, guesses, grids) >= 0:
            chunks.stopped = True
            return False
        if finish is not None:
            finish(start, stop)
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
    return done >= total


def _outputs(total: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    return (np.zeros(total, dtype=np.int32), np.zeros(total, dtype=np.int64),
            np.zeros(total, dtype=np.int64), np.zeros((total, 81), dtype=np.uint8))  # fmt: skip


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
    start-up) and pickling for every job instead. :func:`solve_array` gives the same
    results as arrays, without an object per puzzle.
    """
    items = list(puzzles)
    n_workers = _check_batch(workers, progress, batch_size)
    checked = _texts(items)
    if checked is None:
        _name_first_bad(items)
    texts, data = checked
    total = len(texts)
    if total == 0:
        return []
    limit = 2 if prove_unique else 1
    rows = tables.text_rows(data)
    outputs = _outputs(total)
    counts, nodes, guesses, grids = outputs
    if b"." in data or not set(map(type, texts)) <= {str}:
        canonical = data.replace(b".", b"0").decode("ascii")
        texts = [canonical[i : i + 81] for i in range(0, len(canonical), 81)]
    pieces: list[tuple[int, list[Solution | None]]] = []

    def finish(start: int, stop: int) -> None:
        """Turn a solved chunk into :class:`Solution` objects (in the worker that solved it)."""
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

    if not _solve_chunks(rows, limit, workers, n_workers, progress, batch_size, outputs, finish):
        _name_first_bad(items)
    pieces.sort(key=itemgetter(0))
    return list(chain.from_iterable(piece for _, piece in pieces))


@dataclass(frozen=True)
class SolvedArray:
    """What :func:`solve_array` found, one row per puzzle, as arrays.

    ``counts`` (int32): solutions found, up to the limit (0: none; with ``prove_unique``, 1
    means unique and 2 several). ``nodes`` and ``guesses`` (int64): the search effort, as in
    :class:`Solution`. ``grids`` (``uint8[n, 81]``): the first solution as ASCII digits, all
    ``"0"`` where there is none.
    """

    counts: np.ndarray
    nodes: np.ndarray
    guesses: np.ndarray
    grids: np.ndarray

    def __len__(self) -> int:
        return len(self.counts)

    def top_left(self) -> np.ndarray:
        """The three-digit number in the top-left corner of each grid (int64; 0 for a puzzle
        without a solution): :attr:`Solution.top_left`, the Euler 96 quantity, of every row."""
        corner = self.grids[:, :3].astype(np.int64) - 48
        return corner @ np.array([100, 10, 1], dtype=np.int64)

    def text(self) -> str:
        """The solutions as text, one line of 81 digits per puzzle (81 zeros for none)."""
        if not len(self.grids):
            return ""
        lines = np.empty((len(self.grids), 82), dtype=np.uint8)
        lines[:, :81] = self.grids
        lines[:, 81] = 10
        return lines.tobytes().decode("ascii")


def _rows_of(puzzles: bytes | np.ndarray | Iterable[str | NamedPuzzle]) -> np.ndarray:
    """``uint8[n, 81]`` ASCII rows for :func:`solve_array`'s input; InvalidPuzzle naming the
    first bad puzzle when they cannot be (wrong length, not ASCII...)."""
    if isinstance(puzzles, (bytes, bytearray, memoryview)):
        data = bytes(puzzles)
        if len(data) % 81:
            raise InvalidPuzzle(f"puzzle text of {len(data)} bytes is not a whole number of "
                                "81-byte puzzles")  # fmt: skip
        return tables.text_rows(data)
    if isinstance(puzzles, np.ndarray):
        if puzzles.dtype != np.uint8 or puzzles.ndim != 2 or puzzles.shape[1] != 81:
            raise ValueError("a puzzle array must be uint8[n, 81] (ASCII characters)")
        return np.ascontiguousarray(puzzles)
    items = list(puzzles)
    checked = _texts(items)
    if checked is None:
        _name_first_bad(items)
    return tables.text_rows(checked[1])


def solve_array(
    puzzles: bytes | np.ndarray | Iterable[str | NamedPuzzle],
    workers: int | None = None,
    progress: ProgressCallback | None = None,
    *,
    prove_unique: bool = True,
    batch_size: int | None = None,
) -> SolvedArray:
    """:func:`solve_many` without an object per puzzle: the results as arrays.

    ``puzzles`` is what :func:`solve_many` takes, or the puzzles' ASCII text joined (bytes,
    81 per puzzle, ``0`` or ``.`` for blanks), or a ``uint8[n, 81]`` array of such text.
    Row ``i`` of the result answers puzzle ``i``, exactly as ``solve_many`` would (same
    grids, counts, nodes, guesses); ``workers``, ``progress`` and ``batch_size`` work as
    there, and an invalid puzzle raises :class:`InvalidPuzzle` naming its position.
    """
    n_workers = _check_batch(workers, progress, batch_size)
    rows = _rows_of(puzzles)
    outputs = _outputs(len(rows))
    limit = 2 if prove_unique else 1
    if not _solve_chunks(rows, limit, workers, n_workers, progress, batch_size, outputs):
        digits = np.where(rows == 46, 48, rows).astype(np.int16) - 48
        wrong = ((digits < 0) | (digits > 9)).any(axis=1)
        wrong |= tables.givens_clash(np.clip(digits, 0, 9)) & ~wrong
        bad = int(np.argmax(wrong))
        text = rows[bad].tobytes().decode("latin-1")
        try:
            validate(text)
        except InvalidPuzzle as exc:
            raise InvalidPuzzle(f"puzzle #{bad}: {exc}", exc.cells) from None
        raise AssertionError("the compiled check disagrees with validate()")  # pragma: no cover
    counts, nodes, guesses, grids = outputs
    grids[counts == 0] = 48
    return SolvedArray(counts, nodes, guesses, grids)


def euler96(path: str | os.PathLike[str] | BinaryIO, workers: int | None = 1) -> int:
    """Project Euler 96: the sum of the top-left three-digit numbers of every solved grid.

    ``path`` may be a binary stream, read once (its ``name`` names it in messages). A grid
    without a solution, or with several, makes the answer meaningless, so it raises
    :class:`InvalidPuzzle` naming the grid instead of returning a wrong sum. The grids are
    read as columns and solved as arrays (:func:`solve_array`), without an object per grid.
    """
    entries = read_columns(path, "euler")
    name = source_name(path)
    solved = solve_array(entries.text(), workers=workers)
    wrong = np.flatnonzero(solved.counts != 1)
    if len(wrong):
        entry = entries.entry(int(wrong[0]))
        how = "has no solution" if solved.counts[wrong[0]] == 0 else "is not unique"
        raise InvalidPuzzle(f"{name}: {entry.name} (line {entry.line}) {how}")
    return int(solved.top_left().sum())

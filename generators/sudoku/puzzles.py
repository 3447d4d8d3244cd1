"""What a sudoku puzzle is and how it is written: checks, names of cells, puzzle files.

Representation: a puzzle is a plain ``str`` of 81 characters, row by row from the top-left
cell, ``"1"``-``"9"`` for givens and ``"0"`` for blanks (the Project Euler convention). Every
function accepts ``"."`` for blanks as well and returns the canonical ``"0"`` form, so that a
puzzle is hashable, compact in a database column and printable as is. Cells are numbered
``0..80`` (``9 * row + col``) in code and named ``r1c1``..``r9c9`` in messages.

Apart from :mod:`generators.sudoku.solver` because reading and checking puzzles needs no
compiled engine: only the tables (:mod:`generators.sudoku._tables`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import BinaryIO

from generators.sudoku import _tables as tables

Puzzle = str
"""An 81-char string, ``"0"`` for blanks (see the module docstring)."""

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


@dataclass(frozen=True)
class NamedPuzzle:
    """A puzzle read from a file, with where it came from (kept for catalogs and errors)."""

    name: str
    puzzle: Puzzle
    line: int


@dataclass(frozen=True)
class PuzzleColumns:
    """Puzzles read from a file as three columns (:func:`read_columns`): what a list of
    :class:`NamedPuzzle` holds, without an object per puzzle. Entry ``i`` is
    ``names[i]``, ``puzzles[i]`` (canonical, ``0`` for blanks) and ``lines[i]``."""

    names: list[str]
    puzzles: list[Puzzle]
    lines: list[int]

    def __len__(self) -> int:
        return len(self.puzzles)

    def entry(self, index: int) -> NamedPuzzle:
        """Entry ``index`` as a :class:`NamedPuzzle`."""
        return NamedPuzzle(self.names[index], self.puzzles[index], self.lines[index])

    def text(self) -> bytes:
        """The puzzles' ASCII text joined, 81 bytes each: what :func:`~generators.sudoku.
        solve_array` reads as one buffer."""
        return "".join(self.puzzles).encode("ascii")


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


def source_name(source: str | os.PathLike[str] | BinaryIO) -> str:
    """How messages name a puzzle source: a path, or a stream's ``name``."""
    if isinstance(source, str | os.PathLike):
        return os.fspath(source)
    return str(getattr(source, "name", "<stream>"))


def _read_text(path: str | os.PathLike[str] | BinaryIO) -> list[str]:
    """Lines of a text file or binary stream (read once), any line ending, with a clear error
    for non-text content."""
    if hasattr(path, "read"):
        raw = path.read(MAX_FILE_BYTES + 1)
        path = source_name(path)
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
    found = _euler_columns(path)
    return [
        NamedPuzzle(*entry) for entry in zip(found.names, found.puzzles, found.lines, strict=True)
    ]


def _euler_columns(path: str | os.PathLike[str] | BinaryIO) -> PuzzleColumns:
    """:func:`read_euler`'s entries as columns."""
    lines = _read_text(path)
    path = source_name(path)
    names: list[str] = []
    puzzles: list[Puzzle] = []
    starts: list[int] = []
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
        names.append(name)
        puzzles.append(puzzle)
        starts.append(start)
    return PuzzleColumns(names, puzzles, starts)


def read_lines(path: str | os.PathLike[str] | BinaryIO) -> list[NamedPuzzle]:
    """Read one puzzle per line (a path, or a binary stream read once); blank lines and ``#``
    comments (whole or trailing) skipped."""
    found = _lines_columns(path)
    return [
        NamedPuzzle(*entry) for entry in zip(found.names, found.puzzles, found.lines, strict=True)
    ]


def _lines_columns(path: str | os.PathLike[str] | BinaryIO) -> PuzzleColumns:
    """:func:`read_lines`'s entries as columns."""
    lines = _read_text(path)
    path = source_name(path)
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
    return PuzzleColumns([f"line {n}" for n in numbers], puzzles, numbers)


def read_columns(path: str | os.PathLike[str] | BinaryIO, fmt: str = "lines") -> PuzzleColumns:
    """:func:`read_lines` (``fmt="lines"``) or :func:`read_euler` (``fmt="euler"``) as
    columns: the same entries, the same checks and messages, no object per puzzle."""
    if fmt not in ("lines", "euler"):
        raise ValueError(f"fmt must be 'lines' or 'euler', got {fmt!r}")
    return _lines_columns(path) if fmt == "lines" else _euler_columns(path)


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

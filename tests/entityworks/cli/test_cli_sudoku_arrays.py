"""``sudoku solve`` solves and stores from arrays (issue 33): no ``Solution``, no
``SudokuPuzzle`` and no ``SudokuEntry`` per puzzle, and the database ends up exactly as the
object path leaves it.

The oracle is the object path: ``generators.sudoku.solve_many`` (a ``Solution`` per
puzzle) stored by ``catalog.store_sudokus`` (a dataclass per row, ``Store.insert_many``).
Each scenario runs once through it and once through the command line on an emptied
database, and every row of both tables is compared (``created_at`` only for its type and
its time: it is the time of the write).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import sqlalchemy as sa
from click.testing import CliRunner, Result

from entityworks.catalog import (
    EntryConflict,
    SudokuPuzzle,
    open_catalog,
    store_sudoku_arrays,
    store_sudokus,
)
from entityworks.cli import cli
from generators import sudoku
from tests.entityworks.conftest import _drop_everything

#: No solution: r1c9 can only be 9 (the row holds 1-8), and r9c9 is a 9 in its column.
IMPOSSIBLE = "123456780" + "0" * 71 + "9"
#: The empty grid: many solutions.
EMPTY = "0" * 81


def _made(count: int, clues: int, first_seed: int) -> list[str]:
    return [sudoku.generate(clues, seed=s).puzzle for s in range(first_seed, first_seed + count)]


def _several() -> str:
    """A puzzle with several solutions: a solved grid's first 20 cells (checked below)."""
    grid = sudoku.generate(30, seed=7).solution
    return grid[:20] + "0" * 61


def _lines_file(path: Path, puzzles: list[str]) -> Path:
    """One puzzle per line, with a comment, a blank line and '.' blanks in the first."""
    text = ["# made for the test", puzzles[0].replace("0", "."), ""] + puzzles[1:]
    path.write_text("\n".join(text) + "\n")
    return path


def _euler_file(path: Path, puzzles: list[str]) -> Path:
    blocks = []
    for number, puzzle in enumerate(puzzles, start=1):
        blocks.append(f"Grid {number:02d}")
        blocks += [puzzle[r : r + 9] for r in range(0, 81, 9)]
    path.write_text("\n".join(blocks) + "\n")
    return path


def _rows(url: str) -> dict[str, list[dict[str, Any]]]:
    """Every row of both tables, read with SQLAlchemy alone, ordered by key."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return {
                table: [
                    dict(row._mapping)
                    for row in conn.execute(sa.text(f"SELECT * FROM {table} ORDER BY id"))
                ]
                for table in ("sudoku_puzzles", "sudoku_entries")
            }
    finally:
        engine.dispose()


def _comparable(tables: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """The rows without ``created_at`` (the time of the write), after checking it."""
    now = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    out = {}
    for table, rows in tables.items():
        kept = []
        for row in rows:
            row = dict(row)
            if table == "sudoku_puzzles":
                stamp = row.pop("created_at")
                if not isinstance(stamp, dt.datetime):  # SQLite's text, read without types
                    stamp = dt.datetime.fromisoformat(stamp)
                assert abs((now - stamp).total_seconds()) < 600, stamp
            kept.append(row)
        out[table] = kept
    return out


def _fresh(url: str) -> None:
    if url.startswith("sqlite"):
        Path(url.removeprefix("sqlite:///")).unlink(missing_ok=True)
    else:
        _drop_everything(url)


def _solve(url: str, *args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(cli, ["sudoku", "solve", *args, "--db", url], input=input)


def _expected_output(path: str, fmt: str, source: str, entries: list[Any], url: str) -> str:
    """What ``sudoku solve`` printed before issue 33, from ``solve_many`` and
    ``store_sudokus`` (the object path) on the database at ``url``."""
    solutions = sudoku.solve_many(entries, workers=1)
    store = open_catalog(url)
    try:
        result = store_sudokus(store, source, entries, solutions)
    finally:
        store.close()
    solved = sum(s is not None for s in solutions)
    several = sum(s is not None and s.unique is False for s in solutions)
    lines = [
        f"{len(entries)} puzzles read from {path} ({fmt} format): {solved} solved, "
        f"{several} with several solutions, {len(result.unsolved)} without a solution",
        f"{result.stored} stored in @DB@, {result.duplicates} skipped as already stored or "
        f"repeated; entries of {source!r}: {result.entries} recorded, "
        f"{result.entries_known} recorded before",
    ]
    lines += [f"no solution: {name}" for name in result.unsolved]
    if fmt == "euler" and solved == len(entries) and not several:
        lines.append(f"Euler 96 answer: {sum(s.top_left for s in solutions if s is not None)}")
    return "\n".join(lines) + "\n"


def _same_as_objects(
    url: str, steps: list[tuple[str, str, str, Callable[[], list[Any]], str | None]]
) -> None:
    """Run ``steps`` (file argument, format, source, the entries as the readers give them,
    stdin) through the object path, then through the command line on an emptied database:
    the same output, line for line (the database named as the command names it), and the
    same rows."""
    _fresh(url)
    expected = [_expected_output(arg, fmt, src, read(), url) for arg, fmt, src, read, _ in steps]
    before = _comparable(_rows(url))
    _fresh(url)
    for (arg, _fmt, src, _read, stdin), want in zip(steps, expected, strict=True):
        extra = [] if src == ("stdin" if arg == "-" else Path(arg).name) else ["--source", src]
        result = _solve(url, arg, "--workers", "2", *extra, input=stdin)
        assert result.exit_code == 0, (result.stdout, result.stderr)
        shown = result.stdout.splitlines()[1].split(" stored in ")[1].split(", ")[0]
        assert result.stdout == want.replace("@DB@", shown)
    after = _comparable(_rows(url))
    assert after == before
    assert after["sudoku_puzzles"] and after["sudoku_entries"]  # the comparison saw rows


def test_cli_rows_equal_the_object_paths(backend_url, tmp_path):
    """Unique, unsolvable and several-solution puzzles, repeats inside a file and across
    files, a file stored twice, another source, and standard input."""
    several = _several()
    assert sudoku.count_solutions(several) == 2 and sudoku.count_solutions(EMPTY) == 2
    assert sudoku.count_solutions(IMPOSSIBLE) == 0
    unique = _made(12, 26, 100)
    first = unique[:6] + [IMPOSSIBLE, several, unique[2], EMPTY, unique[0], IMPOSSIBLE]
    second = [unique[5], *unique[6:], several, unique[6]]
    one = _lines_file(tmp_path / "one.txt", first)
    two = _lines_file(tmp_path / "two.txt", second)
    stdin = "\n".join([unique[3], IMPOSSIBLE, unique[11], unique[3]]) + "\n"

    def from_stdin() -> list[Any]:
        path = tmp_path / "stdin.txt"
        path.write_text(stdin)
        return sudoku.read_lines(path)

    steps: list[tuple[str, str, str, Callable[[], list[Any]], str | None]] = [
        (str(one), "lines", "one.txt", lambda: sudoku.read_lines(one), None),
        (str(one), "lines", "one.txt", lambda: sudoku.read_lines(one), None),  # again
        (str(two), "lines", "two.txt", lambda: sudoku.read_lines(two), None),
        (str(one), "lines", "copy", lambda: sudoku.read_lines(one), None),  # --source
        ("-", "lines", "stdin", from_stdin, stdin),
    ]
    _same_as_objects(backend_url, steps)


def test_cli_euler_file_rows_and_answer_equal_the_object_paths(backend_url, tmp_path):
    """An Euler 96 file (one grid twice) prints the same answer and stores the same rows;
    one with a grid of several solutions prints no answer, as before."""
    unique = _made(6, 28, 300)
    euler = _euler_file(tmp_path / "euler.txt", [*unique, unique[1]])
    broken = _euler_file(tmp_path / "broken.txt", [*unique[:3], _several()])
    steps: list[tuple[str, str, str, Callable[[], list[Any]], str | None]] = [
        (str(euler), "euler", "euler.txt", lambda: sudoku.read_euler(euler), None),
        (str(broken), "euler", "broken.txt", lambda: sudoku.read_euler(broken), None),
    ]
    _same_as_objects(backend_url, steps)
    again = _solve(backend_url, str(euler), "-j", "1")
    assert again.exit_code == 0 and "Euler 96 answer: " in again.stdout
    answer = sum(sudoku.solve(p).top_left for p in [*unique, unique[1]])  # type: ignore[union-attr]
    assert f"Euler 96 answer: {answer}\n" in again.stdout


def test_cli_conflicting_file_writes_nothing(backend_url, tmp_path):
    """Another file under a source name already stored: refused in one line, and the
    database is as it was."""
    unique = _made(5, 26, 500)
    path = tmp_path / "f.txt"
    _lines_file(path, unique[:3])
    assert _solve(backend_url, str(path)).exit_code == 0
    before = _rows(backend_url)
    _lines_file(path, [unique[0], unique[3], unique[4]])  # entry 1 is another puzzle now
    refused = _solve(backend_url, str(path))
    assert refused.exit_code == 2 and refused.stdout == ""
    lines = refused.stderr.splitlines()
    assert len(lines) == 1 and "f.txt: entry 1 (line 4) is recorded with another" in lines[0]
    assert lines[0].endswith("(--source NAME)") and "Traceback" not in refused.stderr
    assert _rows(backend_url) == before


def test_store_sudoku_arrays_equals_store_sudokus(backend_url):
    """The library function, without the command: the same rows and the same result as
    ``store_sudokus`` (its ``records`` aside), also without the proof of uniqueness, and
    the same EntryConflict."""
    unique = _made(4, 26, 700)
    entries = [
        sudoku.NamedPuzzle(f"p{i}", p, i + 1)
        for i, p in enumerate([*unique, IMPOSSIBLE, _several(), unique[1]])
    ]
    outcomes = []
    for prove in (True, False):
        tables = []
        for path in ("objects", "arrays", "columns"):
            _fresh(backend_url)
            store = open_catalog(backend_url)
            try:
                if path == "objects":
                    solutions = sudoku.solve_many(entries, workers=1, prove_unique=prove)
                    result = store_sudokus(store, "s", entries, solutions)
                else:
                    solved = sudoku.solve_array(entries, workers=1, prove_unique=prove)
                    given: Any = entries
                    if path == "columns":  # what read_columns gives
                        given = sudoku.PuzzleColumns(
                            [e.name for e in entries],
                            [e.puzzle for e in entries],
                            [e.line for e in entries],
                        )
                    result = store_sudoku_arrays(store, "s", given, solved)
                outcomes.append(result)
                conflict = [sudoku.NamedPuzzle("x", unique[3], 1)]
                with pytest.raises(EntryConflict, match=r"^s: entry 0 \(x\) is recorded"):
                    store_sudoku_arrays(
                        store, "s", conflict, sudoku.solve_array(conflict, workers=1)
                    )
                assert store.count(SudokuPuzzle) == 6  # nothing written by the refused call
            finally:
                store.close()
            tables.append(_comparable(_rows(backend_url)))
        assert tables[0] == tables[1] == tables[2]
        counts = {row["solution_count"] for row in tables[0]["sudoku_puzzles"]}
        assert counts == ({0, 1, 2} if prove else {0, 1})
    same = ("stored", "duplicates", "unsolved", "entries", "entries_known")
    for objects, arrays, columns in (outcomes[0:3], outcomes[3:6]):
        assert len(objects.records) == 6 and arrays.records == columns.records == []
        assert [getattr(objects, f) for f in same] == [getattr(arrays, f) for f in same]
        assert [getattr(columns, f) for f in same] == [getattr(arrays, f) for f in same]
        assert arrays.unsolved == ["p4"] and (arrays.stored, arrays.duplicates) == (6, 1)


def test_store_sudoku_arrays_refuses_mismatched_lengths(tmp_path):
    store = open_catalog(tmp_path / "m.db")
    entries = [sudoku.NamedPuzzle("a", _made(1, 26, 900)[0], 1)]
    with pytest.raises(ValueError, match="1 entries but 0 solutions"):
        store_sudoku_arrays(store, "m", entries, sudoku.solve_array([], workers=1))
    assert store.count(SudokuPuzzle) == 0
    store.close()


def test_solved_array_top_left_is_each_solutions():
    puzzles = [*_made(5, 26, 1000), IMPOSSIBLE]
    solved = sudoku.solve_array(puzzles, workers=1)
    expected = [s.top_left if s else 0 for s in sudoku.solve_many(puzzles, workers=1)]
    assert solved.top_left().tolist() == expected
    assert solved.top_left().dtype == np.int64
    assert sudoku.solve_array([], workers=1).top_left().tolist() == []

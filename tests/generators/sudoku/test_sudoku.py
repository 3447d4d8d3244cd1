"""Sudoku engine: file formats, validation, exact solving, solution counts, generation."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generators import sudoku
from generators.sudoku import InvalidPuzzle, PuzzleFileError, puzzles, solver
from generators.sudoku import _engine as core
from generators.sudoku import _tables as tables
from tests.conftest import require_data

EULER_ANSWER = 24702  # published answer to Project Euler problem 96
EULER_PUZZLE = "003020600900305001001806400008102900700000008006708200002609500800203009005010300"


def grid_is_valid(puzzle: str, grid: str) -> bool:
    """Independent check (no solver code): rows, columns, boxes hold 1-9, givens are kept."""
    if len(grid) != 81 or set(grid) - set("123456789"):
        return False
    full = set("123456789")
    rows = [grid[9 * r : 9 * r + 9] for r in range(9)]
    cols = ["".join(grid[9 * r + c] for r in range(9)) for c in range(9)]
    boxes = [
        "".join(grid[9 * (br + r) + bc + c] for r in range(3) for c in range(3))
        for br in (0, 3, 6)
        for bc in (0, 3, 6)
    ]
    if any(set(unit) != full for unit in rows + cols + boxes):
        return False
    givens = puzzle.replace(".", "0")
    return all(g in ("0", s) for g, s in zip(givens, grid, strict=True))


# --- Project Euler 96 ------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["p096_sudoku.txt", "p096_sudoku_crlf.txt"])
def test_euler_file_reads_all_50_grids(name: str) -> None:
    entries = sudoku.read_euler(require_data(name))
    assert [e.name for e in entries] == [f"Grid {n:02d}" for n in range(1, 51)]
    assert [e.line for e in entries] == [1 + 10 * k for k in range(50)]
    assert all(len(e.puzzle) == 81 and set(e.puzzle) <= set("0123456789") for e in entries)


def test_euler_lf_and_crlf_agree_with_the_one_per_line_copy() -> None:
    lf = sudoku.read_euler(require_data("p096_sudoku.txt"))
    crlf = sudoku.read_euler(require_data("p096_sudoku_crlf.txt"))
    lines = sudoku.read_lines(require_data("easy50.txt"))
    assert [e.puzzle for e in lf] == [e.puzzle for e in crlf] == [e.puzzle for e in lines]
    assert lf[8].puzzle == lf[40].puzzle  # the data README: grids 09 and 41 are identical


@pytest.mark.parametrize("name", ["p096_sudoku.txt", "p096_sudoku_crlf.txt"])
def test_euler_grids_solve_uniquely_and_give_the_answer(name: str) -> None:
    path = require_data(name)
    entries = sudoku.read_euler(path)
    for entry in entries:
        solution = sudoku.solve(entry.puzzle)
        assert solution is not None, entry.name
        assert solution.unique is True, entry.name
        assert grid_is_valid(entry.puzzle, solution.grid), entry.name
    assert sudoku.euler96(path) == EULER_ANSWER


def test_euler96_refuses_a_grid_without_solution(tmp_path: Path) -> None:
    # Valid givens, but r1c9 can hold nothing: its row has 1-8 and its column a 9.
    rows = ["123456780", "000000009"] + ["000000000"] * 7
    path = tmp_path / "bad.txt"
    path.write_text("Grid 01\n" + "\n".join(rows) + "\n")
    with pytest.raises(InvalidPuzzle, match="Grid 01.*no solution"):
        sudoku.euler96(path)


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("p096_sudoku.txt", "euler"),
        ("p096_sudoku_crlf.txt", "euler"),
        ("top95.txt", "lines"),
        ("magictour_top1465.txt", "lines"),
    ],
)
def test_read_columns_holds_what_the_readers_give(name: str, fmt: str) -> None:
    path = require_data(name)
    entries = sudoku.read_euler(path) if fmt == "euler" else sudoku.read_lines(path)
    columns = sudoku.read_columns(path, fmt)
    assert len(columns) == len(entries) > 0
    assert columns.names == [e.name for e in entries]
    assert columns.puzzles == [e.puzzle for e in entries]
    assert columns.lines == [e.line for e in entries]
    assert [columns.entry(i) for i in range(len(columns))] == entries
    assert columns.text() == "".join(e.puzzle for e in entries).encode("ascii")


def test_read_columns_refuses_as_the_readers_do(tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("# one bad line\n" + "1" * 2 + "0" * 79 + "\n")
    for fmt, reader in (("lines", sudoku.read_lines), ("euler", sudoku.read_euler)):
        with pytest.raises(InvalidPuzzle) as expected:
            reader(bad)
        with pytest.raises(InvalidPuzzle) as got:
            sudoku.read_columns(bad, fmt)
        assert str(got.value) == str(expected.value) and type(got.value) is type(expected.value)
    with pytest.raises(ValueError, match="fmt must be 'lines' or 'euler'"):
        sudoku.read_columns(bad, "auto")


def test_givens_clash_in_chunks_is_each_rows_answer() -> None:
    """More rows than one chunk, clashes on both sides of each chunk boundary: the answer
    of every row is that of a plain check of its 27 houses."""
    chunk = tables.CLASH_CHUNK
    rng = np.random.default_rng(33)
    rows = np.zeros((2 * chunk + 5, 81), dtype=np.int8)
    for row in rows:  # 8 random givens: some rows clash, some do not
        row[rng.choice(81, 8, replace=False)] = rng.integers(1, 10, 8)
    clean = "".join(str(d) for d in sudoku.generate(30, seed=1).puzzle)
    for at in (chunk - 1, chunk, 2 * chunk - 1, 2 * chunk):
        rows[at] = np.frombuffer(clean.encode(), dtype=np.uint8) - 48
    rows[chunk + 1, [0, 1]] = 5  # a clash right after the boundary

    def clashes(row: np.ndarray) -> bool:
        for house in tables.HOUSES:
            digits = [int(row[c]) for c in house if row[c]]
            if len(digits) != len(set(digits)):
                return True
        return False

    expected = [clashes(row) for row in rows]
    assert 0 < sum(expected) < len(rows) and expected[chunk + 1]
    assert not any(expected[at] for at in (chunk - 1, chunk, 2 * chunk - 1, 2 * chunk))
    assert tables.givens_clash(rows).tolist() == expected
    assert tables.givens_clash(rows[:0]).tolist() == []


def test_euler96_names_the_first_grid_it_cannot_count(tmp_path: Path) -> None:
    """The first grid without exactly one solution is named, whichever way it fails, and
    a file of good grids sums their top-left numbers (each solved alone as the oracle)."""
    good = [sudoku.generate(28, seed=s).puzzle for s in range(3)]
    several = "0" * 81
    impossible = "123456780000000009" + "0" * 63

    def euler(path: Path, puzzles: list[str]) -> Path:
        blocks = []
        for number, puzzle in enumerate(puzzles, start=1):
            blocks += [f"Grid {number:02d}"] + [puzzle[r : r + 9] for r in range(0, 81, 9)]
        path.write_text("\n".join(blocks) + "\n")
        return path

    with pytest.raises(InvalidPuzzle, match=r"Grid 02 \(line 11\) is not unique"):
        sudoku.euler96(euler(tmp_path / "a.txt", [good[0], several, impossible]))
    with pytest.raises(InvalidPuzzle, match=r"Grid 02 \(line 11\) has no solution"):
        sudoku.euler96(euler(tmp_path / "b.txt", [good[0], impossible, several]))
    expected = sum(int(sudoku.solve(p).grid[:3]) for p in good + good[:1])  # type: ignore[union-attr]
    assert sudoku.euler96(euler(tmp_path / "c.txt", good + good[:1]), workers=2) == expected


# --- hard sets: every puzzle solves to a valid grid that keeps its givens -------------------

HARD_SETS = {
    "top95.txt": 95,
    "hardest.txt": 11,
    "magictour_top1465.txt": 1465,
    "forum_hardest_1106.txt": 375,
}


@pytest.mark.parametrize("name", sorted(HARD_SETS))
def test_hard_set_solves_validly(name: str) -> None:
    entries = sudoku.read_lines(require_data(name))
    assert len(entries) == HARD_SETS[name]
    solutions = sudoku.solve_many(entries)
    for entry, solution in zip(entries, solutions, strict=True):
        assert solution is not None, entry.line
        assert solution.puzzle == entry.puzzle
        assert grid_is_valid(entry.puzzle, solution.grid), entry.line
        # These collections are published as proper puzzles: uniqueness must be proven.
        assert solution.unique is True, entry.line


def test_solve_many_matches_sequential_solve_and_reports_progress() -> None:
    puzzles = [e.puzzle for e in sudoku.read_lines(require_data("top95.txt"))]
    calls: list[tuple[int, int]] = []
    parallel = sudoku.solve_many(
        puzzles, workers=2, batch_size=10, progress=lambda d, t: calls.append((d, t))
    )
    sequential = [sudoku.solve(p) for p in puzzles]
    assert parallel == sequential  # same grids and the same difficulty figures
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)
    assert calls[-1] == (95, 95) and len(calls) == 10
    assert sudoku.solve_many([], workers=2) == []


def test_difficulty_measure_tracks_search_effort() -> None:
    easy = sudoku.solve(sudoku.read_euler(require_data("p096_sudoku.txt"))[0].puzzle)
    hard = [sudoku.solve(e.puzzle) for e in sudoku.read_lines(require_data("hardest.txt"))]
    assert easy is not None and easy.guesses == 0 and easy.nodes == 1
    assert all(s is not None and s.nodes >= 1 for s in hard)
    assert max(s.guesses for s in hard if s) > 0
    assert all(s.nodes <= s.guesses + 1 for s in hard if s)


# --- solution counts -------------------------------------------------------------------------


def test_tdoku_solution_counts_are_reproduced() -> None:
    lines = require_data("tdoku_test_puzzles.txt").read_text().split()
    seen = set()
    for line in lines:
        fields = line.split(":")
        puzzle, expected = fields[0], int(fields[1])
        seen.add(min(expected, 2))
        assert sudoku.count_solutions(puzzle, limit=expected + 1) == expected, line
        assert sudoku.count_solutions(puzzle) == min(expected, 2), line
        assert sudoku.is_unique(puzzle) is (expected == 1)
        solution = sudoku.solve(puzzle)
        if expected == 0:
            assert solution is None
        else:
            assert solution is not None and solution.unique is (expected == 1)
            assert grid_is_valid(puzzle, solution.grid)
            if len(fields) > 2:
                assert solution.grid == fields[2]
    assert seen == {0, 1, 2}


def test_serg_puzzles_have_several_solutions() -> None:
    entries = sudoku.read_lines(require_data("serg_benchmark_first2000.txt"))
    assert len(entries) == 2000
    for entry in entries:
        assert sudoku.count_solutions(entry.puzzle, limit=2) == 2, entry.line
    sample = sudoku.solve_many(entries[:50], workers=1)
    assert all(s is not None and s.unique is False for s in sample)


def test_counting_an_empty_grid_stops_at_the_limit() -> None:
    empty = "0" * 81
    assert sudoku.count_solutions(empty, limit=1) == 1
    assert sudoku.count_solutions(empty, limit=25) == 25
    first = sudoku.solve(empty, prove_unique=False)
    assert first is not None and first.unique is None and grid_is_valid(empty, first.grid)


def test_solution_helpers() -> None:
    puzzle = sudoku.read_euler(require_data("p096_sudoku.txt"))[0].puzzle
    solution = sudoku.solve(puzzle)
    assert solution is not None
    assert "".join(solution.rows) == solution.grid and len(solution.rows) == 9
    assert solution.top_left == int(solution.grid[:3])
    assert sudoku.is_solution(puzzle, solution.grid)
    broken = ("2" if solution.grid[0] == "1" else "1") + solution.grid[1:]
    assert not sudoku.is_solution(puzzle, broken)
    picture = sudoku.format_grid(puzzle).splitlines()
    assert len(picture) == 11 and picture[3] == "------+-------+------"
    assert picture[0].replace(" ", "").replace("|", "") == puzzle[:9].replace("0", ".")


# --- generation ------------------------------------------------------------------------------


@pytest.mark.parametrize("clues", [24, 30, 40])
def test_generated_puzzles_are_unique_for_many_seeds(clues: int) -> None:
    puzzles = set()
    for seed in range(12):
        made = sudoku.generate(clues=clues, seed=seed)
        assert made.clues == clues == 81 - made.puzzle.count("0")
        assert sudoku.count_solutions(made.puzzle, limit=3) == 1
        assert grid_is_valid(made.puzzle, made.solution)
        solved = sudoku.solve(made.puzzle)
        assert solved is not None and solved.grid == made.solution
        puzzles.add(made.puzzle)
    assert len(puzzles) == 12  # different seeds, different puzzles


def test_generation_is_reproducible() -> None:
    assert sudoku.generate(clues=26, seed=7) == sudoku.generate(clues=26, seed=7)
    a = sudoku.generate(clues=26, seed=np.random.default_rng(3))
    b = sudoku.generate(clues=26, seed=np.random.default_rng(3))
    assert a.puzzle == b.puzzle and a.seed is None
    drawn = sudoku.generate(clues=30)  # no seed: one is drawn and recorded
    assert isinstance(drawn.seed, int)
    assert sudoku.generate(clues=30, seed=drawn.seed) == drawn
    assert sudoku.generate(clues=30, seed=np.int64(5)) == sudoku.generate(clues=30, seed=5)


def test_generation_reports_an_unreachable_target() -> None:
    with pytest.raises(sudoku.GenerationError, match="clues=17"):
        sudoku.generate(clues=17, seed=1, attempts=2)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"clues": 16}, "clues"),
        ({"clues": 82}, "clues"),
        ({"clues": "30"}, "clues"),
        ({"attempts": 0}, "attempts"),
        ({"seed": -1}, "seed"),
        ({"seed": 1.5}, "seed"),
    ],
)
def test_generate_validates_parameters(kwargs: dict[str, object], name: str) -> None:
    with pytest.raises(ValueError, match=name):
        sudoku.generate(**kwargs)  # type: ignore[arg-type]


# --- parsing and validation ------------------------------------------------------------------


def test_parse_normalises_blanks_and_whitespace() -> None:
    dotted = "4.....8.5.3..........7......2.....6.....8.4......1.......6.3.7.5..2.....1.4......"
    canonical = sudoku.parse(f"  {dotted}\r\n")
    assert canonical == dotted.replace(".", "0")
    assert sudoku.parse(canonical) == canonical


def test_wrong_length_is_rejected() -> None:
    with pytest.raises(InvalidPuzzle, match="81 cells, got 80"):
        sudoku.parse("0" * 80)


def test_bad_characters_name_the_cells() -> None:
    with pytest.raises(InvalidPuzzle, match="'x' at r1c5") as info:
        sudoku.validate("0000x" + "0" * 76)
    assert info.value.cells == (4,)


@pytest.mark.parametrize(
    ("first", "second", "kind"),
    [(0, 8, "row 1"), (4, 76, "column 5"), (60, 80, "box 9")],
)
def test_duplicate_givens_name_both_cells(first: int, second: int, kind: str) -> None:
    cells = ["0"] * 81
    cells[first] = cells[second] = "7"
    with pytest.raises(InvalidPuzzle, match=kind) as info:
        sudoku.validate("".join(cells))
    assert info.value.cells == (first, second)
    assert sudoku.cell_name(first) in str(info.value)
    assert sudoku.cell_name(second) in str(info.value)
    assert isinstance(info.value, ValueError)


def test_non_string_puzzle_is_rejected() -> None:
    with pytest.raises(InvalidPuzzle, match="list"):
        sudoku.validate(list("0" * 81))  # type: ignore[arg-type]


EULER_GRID = ["003020600", "900305001", "001806400", "008102900", "700000008", "006708200",
              "002609500", "800203009", "005010300"]  # fmt: skip


def write(tmp_path: Path, text: str, name: str = "grids.txt") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode())
    return path


def test_euler_reader_tolerates_blank_lines(tmp_path: Path) -> None:
    text = (
        "\n\nGrid 01\r\n"
        + "\r\n\r\n".join(EULER_GRID)
        + "\r\n\n\nGrid 02\n"
        + "\n".join(EULER_GRID)
    )
    entries = sudoku.read_euler(write(tmp_path, text))
    assert [(e.name, e.line) for e in entries] == [("Grid 01", 3), ("Grid 02", 23)]
    assert entries[0].puzzle == entries[1].puzzle == "".join(EULER_GRID)


def test_euler_header_followed_by_too_few_rows(tmp_path: Path) -> None:
    text = "Grid 01\n" + "\n".join(EULER_GRID[:8]) + "\nGrid 02\n" + "\n".join(EULER_GRID)
    with pytest.raises(PuzzleFileError, match=r"Grid 01 \(line 1\), line 10.*'Grid 02'"):
        sudoku.read_euler(write(tmp_path, text))


def test_euler_file_ending_inside_a_grid(tmp_path: Path) -> None:
    text = "Grid 01\n" + "\n".join(EULER_GRID) + "\nGrid 02\n" + "\n".join(EULER_GRID[:4])
    with pytest.raises(PuzzleFileError, match=r"Grid 02 \(line 11\) has only 4 of 9 rows"):
        sudoku.read_euler(write(tmp_path, text))


def test_euler_short_row_names_grid_and_line(tmp_path: Path) -> None:
    rows = list(EULER_GRID)
    rows[3] = "00810290"
    with pytest.raises(PuzzleFileError, match=r"Grid 07 \(line 1\), line 5.*'00810290'"):
        sudoku.read_euler(write(tmp_path, "Grid 07\n" + "\n".join(rows)))


def test_euler_duplicate_given_names_grid_and_cells(tmp_path: Path) -> None:
    rows = list(EULER_GRID)
    rows[0] = "303020600"
    with pytest.raises(PuzzleFileError, match=r"Grid 01 \(line 1\).*r1c1 and r1c3") as info:
        sudoku.read_euler(write(tmp_path, "Grid 01\n" + "\n".join(rows)))
    assert info.value.cells == (0, 2)


def test_euler_stray_text_before_a_header(tmp_path: Path) -> None:
    with pytest.raises(PuzzleFileError, match="line 1: expected a 'Grid NN' header"):
        sudoku.read_euler(write(tmp_path, "\n".join(EULER_GRID)))


def test_binary_file_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "noise.bin"
    path.write_bytes(bytes(range(128, 256)))
    with pytest.raises(PuzzleFileError, match="not a text file"):
        sudoku.read_lines(path)


def test_line_reader_skips_comments_and_names_bad_lines(tmp_path: Path) -> None:
    good = "".join(EULER_GRID)
    text = f"# header\n\n{good}  # trailing note\n{good.replace('0', '.')}\n"
    entries = sudoku.read_lines(write(tmp_path, text))
    assert [(e.line, e.puzzle) for e in entries] == [(3, good), (4, good)]
    with pytest.raises(PuzzleFileError, match="line 2: a puzzle has 81 cells, got 82"):
        sudoku.read_lines(write(tmp_path, f"{good}\n{good}0\n"))


@pytest.mark.parametrize("limit", [0, -1, 1.5, True, "2"])
def test_count_solutions_validates_limit(limit: object) -> None:
    with pytest.raises(ValueError, match="limit"):
        sudoku.count_solutions("0" * 81, limit=limit)  # type: ignore[arg-type]


def test_solve_many_validates_input() -> None:
    good = "".join(EULER_GRID)
    with pytest.raises(InvalidPuzzle, match=r"puzzle #1: .*row 1"):
        sudoku.solve_many([good, "11" + "0" * 79])
    with pytest.raises(ValueError, match="workers"):
        sudoku.solve_many([good], workers=0)
    with pytest.raises(ValueError, match="batch_size"):
        sudoku.solve_many([good], batch_size=0)
    with pytest.raises(ValueError, match="progress"):
        sudoku.solve_many([good], progress="yes")  # type: ignore[arg-type]


# --- the compiled engine -----------------------------------------------------------------------

NORVIG_IMPOSSIBLE = (
    ".....5.8....6.1.43..........1.5........1.6...3.......553.....61........4........."
)


def test_norvig_impossible_puzzle_is_refused_by_reasoning_not_exhaustion() -> None:
    """Valid givens, no solution. Branching on the smallest choice (cells and house places)
    refutes it in a few thousand nodes; branching on cells alone needs over two million."""
    assert sudoku.validate(NORVIG_IMPOSSIBLE) == NORVIG_IMPOSSIBLE.replace(".", "0")
    assert sudoku.solve(NORVIG_IMPOSSIBLE) is None
    assert sudoku.count_solutions(NORVIG_IMPOSSIBLE, limit=5) == 0
    count, grid, nodes, guesses = core.solve_digits(NORVIG_IMPOSSIBLE.replace(".", "0"), 2)
    assert (count, grid) == (0, None)
    assert nodes < 10_000 and guesses < 20_000
    assert sudoku.solve_many([NORVIG_IMPOSSIBLE, "0" * 81], workers=1)[0] is None


def test_batch_entry_point_equals_one_call_per_puzzle() -> None:
    entries = sudoku.read_lines(require_data("top95.txt"))[:40]
    puzzles = [e.puzzle for e in entries] + [NORVIG_IMPOSSIBLE.replace(".", "0"), "0" * 81]
    counts, nodes, guesses, grids = core.solve_batch(tables.to_array("".join(puzzles)), 3)
    assert counts.dtype == np.int32 and grids.shape == (len(puzzles), 81)
    for i, puzzle in enumerate(puzzles):
        count, grid, n, g = core.solve_digits(puzzle, 3)
        assert (int(counts[i]), int(nodes[i]), int(guesses[i])) == (count, n, g)
        assert tables.to_strings(grids[i : i + 1])[0] == (grid or "0" * 81)
    assert counts.tolist()[-2:] == [0, 3]


def test_solve_many_default_workers_gives_the_sequential_answers() -> None:
    puzzles = [e.puzzle for e in sudoku.read_lines(require_data("magictour_top1465.txt"))[:300]]
    assert sudoku.solve_many(puzzles) == [sudoku.solve(p) for p in puzzles]
    assert sudoku.solve_many(puzzles, prove_unique=False, batch_size=7) == [
        sudoku.solve(p, prove_unique=False) for p in puzzles
    ]


def _mixed_job() -> list[str | sudoku.NamedPuzzle]:
    """Hard and easy puzzles, dots and zeros, named entries, one without a solution and one
    with many: everything the workers must hand back in place."""
    entries = sudoku.read_lines(require_data("magictour_top1465.txt"))[:300]
    job: list[str | sudoku.NamedPuzzle] = []
    for i, entry in enumerate(entries):
        if i % 3 == 0:
            job.append(entry)
        elif i % 3 == 1:
            job.append(entry.puzzle.replace("0", "."))
        else:
            job.append(entry.puzzle)
    job[17:17] = [NORVIG_IMPOSSIBLE, "0" * 81]
    return job


@pytest.mark.parametrize(
    ("workers", "batch_size"), [(2, None), (3, 5), (2, 1000), (None, 7), (None, None)]
)
def test_threaded_solve_many_keeps_order_answers_and_progress(
    workers: int, batch_size: int | None
) -> None:
    job = _mixed_job()
    calls: list[tuple[int, int]] = []
    got = sudoku.solve_many(
        job, workers=workers, batch_size=batch_size, progress=lambda d, t: calls.append((d, t))
    )
    assert got == [sudoku.solve(p) for p in job]
    assert got[17] is None and got[18] is not None and got[18].unique is False
    assert all(s is None or s.puzzle == s.puzzle.replace(".", "0") for s in got)
    done = [d for d, _ in calls]
    assert done == sorted(set(done)) and calls[-1] == (len(job), len(job))
    if batch_size is not None:
        assert len(calls) == -(-len(job) // batch_size)


def test_guided_chunks_cover_the_job_in_order_and_shrink_towards_the_end() -> None:
    chunks = solver._Chunks(10_000, None, 2)
    spans = []
    while (span := chunks.take()) is not None:
        spans.append(span)
    assert spans[0][0] == 0 and spans[-1][1] == 10_000
    assert all(a[1] == b[0] for a, b in zip(spans, spans[1:], strict=False))
    sizes = [stop - start for start, stop in spans]
    assert max(sizes) == solver._MAX_CHUNK and sizes[-2] == solver._MIN_CHUNK
    assert sizes == sorted(sizes, reverse=True)
    capped = solver._Chunks(40, None, 2)  # 37 left: 37 // 16 < 4
    assert capped.take(3) == (0, 3) and capped.take() == (3, 3 + solver._MIN_CHUNK)
    fixed = solver._Chunks(10, 4, 2)  # a given batch size is kept, whatever the cap
    assert [fixed.take(1), fixed.take(), fixed.take(), fixed.take()] == [
        (0, 4),
        (4, 8),
        (8, 10),
        None,
    ]


def test_a_bad_puzzle_stops_every_worker_and_the_first_one_is_named() -> None:
    """Workers check their own chunks; whichever trips first, the error names the earliest
    bad puzzle, no result is returned and no worker thread is left behind."""
    import threading

    good = [e.puzzle for e in sudoku.read_lines(require_data("top95.txt"))]
    job = good * 3
    job[150] = "55" + job[150][2:]  # a clash
    job[250] = "x" + job[0][1:]
    before = threading.active_count()
    for workers, batch_size in ((2, 1), (2, None), (None, 3), (1, None)):
        with pytest.raises(InvalidPuzzle, match=r"^puzzle #150: duplicate given 5 in row 1"):
            sudoku.solve_many(job, workers=workers, batch_size=batch_size)
    assert threading.active_count() == before


def test_an_exception_in_progress_stops_the_workers() -> None:
    import threading

    job = [e.puzzle for e in sudoku.read_lines(require_data("top95.txt"))] * 4
    before = threading.active_count()

    def stop(done: int, total: int) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        sudoku.solve_many(job, workers=2, batch_size=8, progress=stop)
    assert threading.active_count() == before


_cells = st.sampled_from("0123456789.")


@settings(max_examples=300, deadline=None)
@given(
    body=st.lists(_cells, min_size=81, max_size=81).map("".join),
    clash=st.booleans(),
    where=st.tuples(st.integers(0, 80), st.integers(0, 80)),
)
def test_fast_validation_agrees_with_the_cell_by_cell_check(
    body: str, clash: bool, where: tuple[int, int]
) -> None:
    cells = list(body.replace(".", "0") if clash else body)
    if clash:  # sparse grids, so that both valid and clashing ones come up
        cells = [c if i % 4 == 0 else "0" for i, c in enumerate(cells)]
        cells[where[0]] = cells[where[1]] = "5"
    text = "".join(cells)
    try:
        expected: object = puzzles._explain(text, text.replace(".", "0"))
    except InvalidPuzzle as exc:
        expected = (str(exc), exc.cells)
    try:
        got: object = sudoku.validate(text)
    except InvalidPuzzle as exc:
        got = (str(exc), exc.cells)
    assert got == expected
    try:  # solve_many checks in its compiled workers: same verdict, same message
        sudoku.solve_many([text], workers=1)
        bulk: object = text.replace(".", "0")
    except InvalidPuzzle as exc:
        bulk = (str(exc).removeprefix("puzzle #0: "), exc.cells)
    assert bulk == expected
    lines = f"{EULER_PUZZLE}\n# a comment\n{text}\n{EULER_PUZZLE}\n".encode()
    try:  # the line reader checks a whole file in one compiled call
        read: object = sudoku.read_lines(io.BytesIO(lines))[1].puzzle
    except InvalidPuzzle as exc:
        read = (str(exc).removeprefix("<stream>, line 3: "), exc.cells)
    assert read == expected


def test_bulk_validation_names_the_first_bad_puzzle() -> None:
    good = "".join(EULER_GRID)
    with pytest.raises(InvalidPuzzle, match=r"puzzle #2: invalid characters: 'x' at r1c1"):
        sudoku.solve_many([good, good.replace("0", "."), "x" + good[1:]])
    with pytest.raises(InvalidPuzzle, match=r"puzzle #1: a puzzle has 81 cells"):
        sudoku.solve_many([good, good[:80]])
    with pytest.raises(InvalidPuzzle, match=r"puzzle #0: invalid characters: 'é' at r1c1"):
        sudoku.solve_many(["é" + good[1:]])


def test_seeded_generation_gives_the_puzzles_of_version_0_1() -> None:
    """The faster search must not change what a seed means: the full grid comes from the
    same cell-by-cell search order as before (the README's example, made with v0.1)."""
    made = sudoku.generate(clues=26, seed=42)
    assert made.puzzle[:27] == "000200000307009120069038000"
    assert made.attempts == 1 and sudoku.is_solution(made.puzzle, made.solution)


def test_every_form_of_the_band_engine_gives_the_same_results() -> None:
    """The band engine is compiled once per form of its triad pattern (BMI2's ``pext`` where
    the CPU has it, table lookups everywhere): on the same puzzles, hard, easy, without a
    solution and with many, every form this CPU runs gives the same counts, nodes, guesses
    and grids, for the first solution and counting on."""
    assert "portable" in core.KERNELS
    puzzles = [e.puzzle for e in sudoku.read_lines(require_data("magictour_top1465.txt"))[:300]]
    puzzles += [e.puzzle for e in sudoku.read_lines(require_data("top95.txt"))]
    rng = np.random.default_rng(11)
    for grid in [s.grid for s in sudoku.solve_many(puzzles[:60], workers=1) if s]:
        cells = np.frombuffer(grid.encode(), dtype=np.uint8).copy()
        cells[rng.permutation(81)[: rng.integers(30, 75)]] = 48
        puzzles.append(cells.tobytes().decode())
    puzzles += [NORVIG_IMPOSSIBLE, "0" * 81]
    rows = tables.text_rows("".join(puzzles).encode())
    for limit in (1, 2, 5):
        results = []
        for kernel in core.KERNELS:
            out = (
                np.zeros(len(rows), np.int32),
                np.zeros(len(rows), np.int64),
                np.zeros(len(rows), np.int64),
                np.zeros((len(rows), 81), np.uint8),
            )
            assert core.solve_rows(rows, 0, len(rows), limit, True, *out, kernel=kernel) == -1
            results.append(out)
        for other in results[1:]:
            for a, b in zip(results[0], other, strict=True):
                assert np.array_equal(a, b)
        assert results[0][0].min() >= 0 and results[0][0][-1] == limit


@pytest.mark.parametrize(("workers", "batch_size"), [(1, None), (2, 7), (None, None)])
def test_solve_array_answers_as_solve_many_without_objects(
    workers: int | None, batch_size: int | None
) -> None:
    """The same puzzles as a list, as joined bytes and as a uint8 array: row ``i`` of every
    result equals ``solve_many``'s answer ``i`` (grid, uniqueness, nodes, guesses), and the
    progress reaches the total."""
    job = _mixed_job()
    expected = sudoku.solve_many(job, workers=1)
    texts = [item.puzzle if isinstance(item, sudoku.NamedPuzzle) else item for item in job]
    data = "".join(texts).encode()
    seen: list[tuple[int, int]] = []
    results = [
        sudoku.solve_array(job, workers=workers, batch_size=batch_size,
                           progress=lambda done, total: seen.append((done, total))),
        sudoku.solve_array(data, workers=workers, batch_size=batch_size),
        sudoku.solve_array(np.frombuffer(data, np.uint8).reshape(-1, 81), workers=workers),
    ]  # fmt: skip
    assert seen[-1] == (len(job), len(job))
    for result in results:
        assert len(result) == len(job)
        lines = result.text().splitlines()
        for i, want in enumerate(expected):
            count = int(result.counts[i])
            if want is None:
                assert count == 0 and lines[i] == "0" * 81
                continue
            assert lines[i] == want.grid and (count == 1) == want.unique
            assert (int(result.nodes[i]), int(result.guesses[i])) == (want.nodes, want.guesses)
    first = sudoku.solve_array(data, prove_unique=False)
    assert first.counts.max() == 1
    plain = sudoku.solve_many(job, prove_unique=False)
    assert [s.grid if s else "0" * 81 for s in plain] == first.text().splitlines()


def test_solve_array_names_the_first_bad_puzzle() -> None:
    good = "".join(EULER_GRID)
    clash = "11" + good[2:]
    with pytest.raises(InvalidPuzzle, match=r"puzzle #2: invalid characters: 'x' at r1c1"):
        sudoku.solve_array((good + good + "x" + good[1:] + clash).encode())
    with pytest.raises(InvalidPuzzle, match=r"puzzle #1: .*r1c1"):
        sudoku.solve_array([good, clash, "x" * 81])
    with pytest.raises(InvalidPuzzle, match="not a whole number"):
        sudoku.solve_array(good.encode()[:80])
    with pytest.raises(ValueError, match=r"uint8\[n, 81\]"):
        sudoku.solve_array(np.zeros((2, 80), np.uint8))
    assert len(sudoku.solve_array(b"")) == 0 and sudoku.solve_array([]).text() == ""

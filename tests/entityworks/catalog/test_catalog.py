"""The level catalog: map rows from generator results, the designer's queries, sudoku and
entropy rows, through SQLite and (when configured) PostgreSQL and MariaDB."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
import sqlalchemy as sa

from entityworks import Store, col
from entityworks.catalog import (
    EntropyRecord,
    MapRecord,
    SudokuPuzzle,
    build_map,
    find_maps,
    generate_into,
    generate_maps,
    largest_maps,
    map_record,
    map_stats,
    open_catalog,
    sample_maps,
    single_region_maps,
    store_entropy,
    store_sudokus,
)
from entityworks.catalog import _generate as catalog_generate
from entityworks.catalog import _queries as catalog_queries
from generators import sudoku
from generators.maps import caves, dungeon
from generators.maps.regions import region_stats
from tests.conftest import require_data

SMALL = {
    "caves": {"width": 60, "height": 40},
    "dungeon": {"width": 60, "height": 40},
    "islands": {"width": 40, "height": 30},
}


def _fill(store: Store) -> list[MapRecord]:
    records = []
    for kind, params in SMALL.items():
        for chunk in generate_maps(kind, 4, seed=10, params=params):
            records += chunk
    store.insert_many(records)
    return records


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory) -> tuple[Store, list[MapRecord]]:
    store = open_catalog(tmp_path_factory.mktemp("catalog") / "catalog.db")
    records = _fill(store)
    yield store, records
    store.close()


def drop_all(url: str) -> None:
    engine = sa.create_engine(url)
    metadata = sa.MetaData()
    metadata.reflect(engine)
    metadata.drop_all(engine)
    engine.dispose()


def test_map_record_keeps_grid_seed_parameters_and_features():
    result = caves.generate(60, 40, seed=3)
    record = map_record(result)
    assert record.kind == "caves" and record.seed == 3
    assert record.parameters == result.params
    assert record.grid.dtype == np.uint8 and np.array_equal(record.grid, result.grid)
    stats = region_stats(result.grid)
    assert (record.region_count, record.largest_region) == (stats.count, stats.largest)
    assert record.open_ratio == pytest.approx(float((result.grid == 0).mean()))
    assert [c.number for c in record.caves] == [c.id for c in result.caves]
    assert [c.length for c in record.corridors] == [len(p) for p in result.corridors]
    first = result.corridors[0]
    assert record.corridors[0].path[0] == list(first[0])
    rooms = map_record(dungeon.generate(60, 40, seed=3)).rooms
    assert rooms and all(r.width >= 3 for r in rooms)


def test_map_stats_measures_floor_regions():
    grid = np.ones((5, 7), np.uint8)
    grid[1, 1:3] = 0
    grid[3, 4:6] = 0
    assert map_stats(grid) == (4 / 35, 2, 2)


def test_rows_round_trip_with_children(filled):
    store, records = filled
    loaded = {m.id: m for m in store.select(MapRecord)}
    assert len(loaded) == len(records)
    for original in records:
        back = loaded[original.id]
        assert np.array_equal(back.grid, original.grid)
        assert back.caves == original.caves
        assert back.rooms == original.rooms
        assert back.corridors == original.corridors
        assert back.parameters == original.parameters and back.seed == original.seed


def test_queries_by_kind_size_ratio_regions_and_seed(filled):
    store, records = filled
    assert {m.kind for m in find_maps(store, kind="dungeon")} == {"dungeon"}
    wide = find_maps(store, width=(50, None))
    assert sorted(m.id for m in wide) == sorted(r.id for r in records if r.width >= 50)
    band = find_maps(store, width=(30, 50), height=(20, 35))
    assert {m.kind for m in band} == {"islands"}
    airy = find_maps(store, open_ratio=(0.5, None))
    assert sorted(m.id for m in airy) == sorted(r.id for r in records if r.open_ratio >= 0.5)
    assert all(m.seed == 11 for m in find_maps(store, seed=11))
    assert len(find_maps(store, seed=11)) == 3
    two_plus = find_maps(store, regions=(2, None))
    assert all(m.region_count >= 2 for m in two_plus)
    one = single_region_maps(store)
    assert sorted(m.id for m in one) == sorted(r.id for r in records if r.region_count == 1)
    assert find_maps(store, kind="caves", width=60, limit=2, order_by="-id")[0].id == max(
        r.id for r in records if r.kind == "caves"
    )


def test_largest_and_random_sample(filled):
    store, records = filled
    top = largest_maps(store, 3)
    expected = sorted(records, key=lambda r: (-r.largest_region, -r.id))[:3]
    assert [m.id for m in top] == [r.id for r in expected]
    assert [m.id for m in largest_maps(store, 2, kind="islands", by="open_ratio")] == [
        r.id
        for r in sorted(
            (r for r in records if r.kind == "islands"), key=lambda r: (-r.open_ratio, -r.id)
        )[:2]
    ]
    sample = sample_maps(store, 5, seed=7)
    assert len({m.id for m in sample}) == 5
    assert [m.id for m in sample] == [m.id for m in sample_maps(store, 5, seed=7)]
    assert len(sample_maps(store, 100, kind="caves")) == 4


def test_sample_maps_draws_every_matching_map_equally_often(tmp_path, monkeypatch):
    """Keys drawn between the smallest and largest id, with gaps in the ids and a kind
    filter: over 1,000 seeded draws of 2 maps each, every matching map is drawn about as often
    as the others (a fixed set of seeds: the counts are the same on every run) and no other
    map ever is. With the tries used up at once, the listed keys give the same spread."""
    import entityworks.catalog as catalog

    store = open_catalog(tmp_path / "s.db")
    rows = [
        r
        for c in generate_maps("islands", 12, seed=1, params={"width": 12, "height": 9})
        for r in c
    ]
    rows += [
        r for c in generate_maps("caves", 12, seed=1, params={"width": 12, "height": 9}) for r in c
    ]
    rows.sort(key=lambda r: r.seed * 2 + (r.kind == "caves"))  # kinds interleaved
    store.insert_many(rows)
    store.delete(MapRecord, where=col("id").in_([2, 3, 4, 5, 6, 9, 10, 11, 17]))  # gaps
    caves = {r.id for r in store.select(MapRecord, where={"kind": "caves"})}
    assert len(caves) == 8
    for tries in (catalog.SAMPLE_TRIES, 0):
        monkeypatch.setattr(catalog_queries, "SAMPLE_TRIES", tries)
        counts = dict.fromkeys(caves, 0)
        for seed in range(1000):
            sample = sample_maps(store, 2, kind="caves", seed=seed)
            assert len({m.id for m in sample}) == 2
            assert [m.id for m in sample] == sorted(m.id for m in sample)
            for m in sample:
                counts[m.id] += 1  # a KeyError if a map of another kind were drawn
        expected = 1000 * 2 / len(caves)
        chi2 = sum((c - expected) ** 2 / expected for c in counts.values())
        assert chi2 < 24.3, (tries, counts)  # chi-square, 7 degrees of freedom, p = 0.001
    assert sample_maps(store, 0, kind="caves") == []
    assert len(sample_maps(store, 50, kind="caves", seed=1)) == 8
    store.delete(MapRecord, where=col("id") >= 0)
    assert sample_maps(store, 3, seed=1) == []
    store.close()


def test_generation_is_reproducible_and_parallel_equals_serial():
    params = {"width": 30, "height": 20}
    serial = [r for c in generate_maps("caves", 5, seed=5, params=params, chunk=2) for r in c]
    parallel = [
        r for c in generate_maps("caves", 5, seed=5, params=params, workers=2, chunk=2) for r in c
    ]
    assert [r.seed for r in parallel] == [5, 6, 7, 8, 9]
    for a, b in zip(serial, parallel, strict=True):
        assert np.array_equal(a.grid, b.grid) and a.caves == b.caves
    again = build_map("caves", 5, params)
    assert np.array_equal(again.grid, serial[0].grid)
    unseeded = [
        r for c in generate_maps("islands", 2, params={"width": 20, "height": 20}) for r in c
    ]
    assert all(isinstance(r.seed, int) for r in unseeded)
    rebuilt = build_map("islands", unseeded[1].seed, {"width": 20, "height": 20})
    assert np.array_equal(rebuilt.grid, unseeded[1].grid)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"params": {"colour": 1}}, "caves has no parameter 'colour'"),
        ({"params": {"close_cell_prob": 300}}, "close_cell_prob must be <= 100"),
        ({"count": -1}, "count must be an integer >= 0"),
        ({"workers": 0}, "workers must be an integer >= 1"),
        ({"seed": -3}, "seed must be a non-negative integer"),
    ],
)
def test_generation_refuses_bad_arguments(kwargs, message):
    args = {"count": 2, **kwargs}
    count = args.pop("count")
    with pytest.raises(ValueError, match=message):
        list(generate_maps("caves", count, **args))


def test_unknown_kind():
    with pytest.raises(ValueError, match="unknown map kind 'volcano'; choose from caves"):
        list(generate_maps("volcano", 1))


def test_generate_into_counts_storage_time(tmp_path):
    store = open_catalog(tmp_path / "g.db")
    stats = generate_into(store, "dungeon", 5, seed=1, params={"width": 40, "height": 30})
    assert stats.count == 5 and stats.ids == (1, 5) and stats.seeds == (1, 5)
    assert 0 < stats.storage_seconds <= stats.seconds and 0 < stats.storage_share < 1
    assert store.count(MapRecord, where={"kind": "dungeon"}) == 5


def test_sudoku_rows_are_unique_by_puzzle(tmp_path):
    store = open_catalog(tmp_path / "s.db")
    made = [sudoku.generate(30, seed=s) for s in (1, 2)]
    entries = [sudoku.NamedPuzzle(f"p{i}", m.puzzle, i) for i, m in enumerate(made)]
    entries.append(sudoku.NamedPuzzle("again", made[0].puzzle, 9))
    broken = "11" + "0" * 79  # duplicate givens are refused by the parser, so build one
    impossible = "123456780" + "0" * 71 + "9"  # r1c9 can only be 9, but r9c9 already is
    entries.append(sudoku.NamedPuzzle("impossible", impossible, 10))
    solutions = sudoku.solve_many(entries, workers=1)
    result = store_sudokus(store, "unit", entries, solutions)
    assert (result.stored, result.duplicates, result.unsolved) == (3, 1, ["impossible"])
    rows = {r.name: r for r in store.select(SudokuPuzzle)}
    assert rows["p0"].solution == made[0].solution and rows["p0"].solution_count == 1
    assert rows["p0"].clues == 30 and rows["impossible"].solution is None
    assert rows["impossible"].solution_count == 0
    second = store_sudokus(store, "unit", entries[:2], solutions[:2])
    assert (second.stored, second.duplicates) == (0, 2)
    assert store.count(SudokuPuzzle) == 3
    with pytest.raises(ValueError):
        sudoku.parse(broken)


def test_euler96_file_gives_49_distinct_puzzles(tmp_path):
    path = require_data("p096_sudoku.txt")
    entries = sudoku.read_euler(path)
    solutions = sudoku.solve_many(entries, workers=1)
    store = open_catalog(tmp_path / "e.db")
    result = store_sudokus(store, path.name, entries, solutions)
    assert sum(s.top_left for s in solutions) == 24702
    assert (result.stored, result.duplicates) == (49, 1)
    names = {r.name for r in store.select(SudokuPuzzle)}
    assert "Grid 09" in names and "Grid 41" not in names


def test_entropy_report_is_stored_and_queried(tmp_path):
    data = tmp_path / "blob.bin"
    payload = bytes(range(256)) * 40 + b"tail"
    data.write_bytes(payload)
    store = open_catalog(tmp_path / "h.db")
    [(row, report)] = store_entropy(store, [data])
    digest = hashlib.sha256(payload).hexdigest()
    [back] = store.select(EntropyRecord, where={"sha256": digest})
    assert back.id == row.id and back.size == len(payload) and back.path == str(data)
    assert back.entropy == report.entropy and back.chi_square == report.chi_square
    assert back.distribution == list(report.distribution) and sum(back.distribution) == len(payload)
    assert back.unique_symbols == 256


@pytest.mark.parametrize("server", ["pg_url", "mariadb_url"])
def test_catalog_on_a_server(server, request):
    url = request.getfixturevalue(server)
    drop_all(url)
    store = open_catalog(url)
    try:
        records = _fill(store)
        assert store.count(MapRecord) == len(records)
        one = single_region_maps(store, kind="dungeon")
        assert sorted(m.id for m in one) == sorted(
            r.id for r in records if r.kind == "dungeon" and r.region_count == 1
        )
        back = find_maps(store, seed=10, kind="caves")[0]
        assert np.array_equal(back.grid, records[0].grid) and back.caves == records[0].caves
        assert len(sample_maps(store, 3, seed=1)) == 3
    finally:
        store.close()
        drop_all(url)


# -- every entry of a puzzle file is recorded ----------------------------------------------

#: Project Euler 96 answered from the database alone: the top-left three digits of the
#: solution of every entry of the file (a puzzle that occurs twice counts twice).
EULER96_SQL = """
SELECT SUM(CAST(SUBSTR(p.solution, 1, 3) AS INTEGER))
FROM sudoku_entries e JOIN sudoku_puzzles p ON p.id = e.puzzle_id
WHERE e.source = :source
"""


def _scalar(url: str, sql: str, **params: object) -> object:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return conn.execute(sa.text(sql), params).scalar()
    finally:
        engine.dispose()


def _solve(*args: str) -> object:
    from click.testing import CliRunner

    from entityworks.cli import cli

    return CliRunner().invoke(cli, ["sudoku", "solve", *args], catch_exceptions=False)


def test_every_euler96_grid_is_recorded_and_sql_gives_the_answer(backend_url):
    """Grid 09 and Grid 41 are the same puzzle: one puzzle row, two entries, and the answer
    recomputed from the stored rows by plain SQL is Euler's 24702. Storing the file again
    adds nothing."""
    from entityworks.catalog import SudokuEntry

    path = require_data("p096_sudoku.txt")
    first = _solve(str(path), "--db", backend_url, "-j", "1")
    assert first.exit_code == 0, first.stderr
    assert "Euler 96 answer: 24702" in first.stdout
    assert "entries of 'p096_sudoku.txt': 50 recorded, 0 recorded before" in first.stdout
    assert int(_scalar(backend_url, EULER96_SQL, source=path.name)) == 24702
    again = _solve(str(path), "--db", backend_url, "-j", "1")
    assert again.exit_code == 0, again.stderr
    assert "0 stored" in again.stdout and "0 recorded, 50 recorded before" in again.stdout
    assert int(_scalar(backend_url, EULER96_SQL, source=path.name)) == 24702
    store = Store(backend_url)
    try:
        entries = list(store.select(SudokuEntry, order_by="position"))
        assert [e.name for e in entries] == [f"Grid {i:02d}" for i in range(1, 51)]
        assert [e.position for e in entries] == list(range(50))
        assert entries[8].puzzle_id == entries[40].puzzle_id  # Grid 09 is Grid 41
        assert len({e.puzzle_id for e in entries}) == store.count(SudokuPuzzle) == 49
        text = path.read_text().splitlines()
        assert all(text[e.line - 1].strip() == e.name for e in entries)
    finally:
        store.close()


def test_store_sudokus_records_each_entry_once(backend_url):
    from entityworks.catalog import SudokuEntry

    store = open_catalog(backend_url)
    try:
        made = [sudoku.generate(30, seed=s) for s in (1, 2)]
        entries = [
            sudoku.NamedPuzzle("a", made[0].puzzle, 1),
            sudoku.NamedPuzzle("b", made[1].puzzle, 2),
            sudoku.NamedPuzzle("c", made[0].puzzle, 3),
        ]
        solutions = sudoku.solve_many(entries, workers=1)
        done = store_sudokus(store, "f.txt", entries, solutions)
        assert (done.stored, done.duplicates, done.entries, done.entries_known) == (2, 1, 3, 0)
        again = store_sudokus(store, "f.txt", entries, solutions)
        assert (again.stored, again.entries, again.entries_known) == (0, 0, 3)
        other = store_sudokus(store, "g.txt", entries[2:], solutions[2:])
        assert (other.stored, other.entries) == (0, 1)
        rows = [(e.source, e.position, e.name) for e in store.select(SudokuEntry, order_by="id")]
        assert rows == [("f.txt", 0, "a"), ("f.txt", 1, "b"), ("f.txt", 2, "c"), ("g.txt", 0, "c")]
        ids = {p.puzzle: p.id for p in store.select(SudokuPuzzle)}
        assert [e.puzzle_id for e in store.select(SudokuEntry, order_by="id")] == [
            ids[made[0].puzzle],
            ids[made[1].puzzle],
            ids[made[0].puzzle],
            ids[made[0].puzzle],
        ]
    finally:
        store.close()


def test_another_file_of_the_same_name_is_refused_whole(tmp_path):
    """An entry recorded at the same source and position with another puzzle: refused,
    nothing written; ``--source`` records the second file under its own name."""
    from entityworks.catalog import SudokuEntry

    db = str(tmp_path / "p.db")
    made = [sudoku.generate(30, seed=s).puzzle for s in (1, 2, 3)]
    first = tmp_path / "a" / "puzzles.txt"
    second = tmp_path / "b" / "puzzles.txt"
    for path, puzzles in ((first, made[:2]), (second, [made[0], made[2]])):
        path.parent.mkdir()
        path.write_text("\n".join(puzzles) + "\n")
    assert _solve(str(first), "--db", db, "-j", "1").exit_code == 0
    refused = _solve(str(second), "--db", db, "-j", "1")
    assert refused.exit_code == 2 and refused.stdout == ""
    assert refused.stderr == (
        "error: puzzles.txt: entry 1 (line 2) is recorded with another "
        "puzzle: another file of that name was stored before; store "
        "this one under a source name of its own (--source NAME)\n"
    )
    store = Store(db)
    assert store.count(SudokuPuzzle) == 2 and store.count(SudokuEntry) == 2
    done = _solve(str(second), "--db", db, "-j", "1", "--source", "b/puzzles.txt")
    assert done.exit_code == 0 and "entries of 'b/puzzles.txt': 2 recorded" in done.stdout
    assert store.count(SudokuPuzzle) == 3 and store.count(SudokuEntry) == 4
    store.close()


# -- the build's outcome is stored with the map --------------------------------------------

SHORT = {"width": 40, "height": 40, "rooms": 100, "breakout": 50}


def _connected(grid: np.ndarray) -> bool:
    from scipy import ndimage

    return int(ndimage.label(grid == 0)[1]) == 1


def test_dungeon_outcome_is_stored_with_the_map(backend_url):
    """The issue's command stored maps of 1-3 rooms like any other: now each row says the
    build fell short (rooms asked and built, connected: checked here independently)."""
    store = open_catalog(backend_url)
    try:
        stats = generate_into(store, "dungeon", 4, seed=1, params=SHORT)
        generate_into(store, "caves", 1, seed=1, params={"width": 40, "height": 30})
        maps = list(store.select(MapRecord, order_by="id"))
        for m in maps[:4]:
            assert m.build_success is False and m.rooms_asked == 100
            assert m.rooms_built == len(m.rooms) < 100
            assert m.connected is _connected(m.grid) is True
        # a cave system has no rooms: its outcome is its floor, one region or not
        whole = _connected(maps[4].grid)
        assert (
            maps[4].build_success,
            maps[4].rooms_asked,
            maps[4].rooms_built,
            maps[4].connected,
        ) == (whole, None, None, whole)
        built = sorted(len(m.rooms) for m in maps[:4])
        span = str(built[0]) if built[0] == built[-1] else f"{built[0]}-{built[-1]}"
        assert str(stats.builds) == f"0 complete, 4 short (asked 100 rooms, built {span})"
        short = _scalar(
            backend_url, "SELECT COUNT(*) FROM maps WHERE build_success = :no", no=False
        )
        assert short == 4
    finally:
        store.close()


COMPLETE_THEN_SHORT = {"width": 60, "height": 30, "rooms": 3}


def test_refuse_short_stores_nothing_even_after_earlier_batches(backend_url, monkeypatch):
    """With ``refuse_short`` the call is one transaction: batches written before the short
    build are rolled back with it."""
    import entityworks.catalog as catalog

    outcomes = [dungeon.generate(seed=s, **COMPLETE_THEN_SHORT).success for s in range(8, 19)]
    assert outcomes == [True] * 10 + [False]  # seeds 8-17 complete, 18 short
    monkeypatch.setattr(catalog_generate, "STORE_BATCH", 1)  # every chunk written as it comes
    store = open_catalog(backend_url)
    try:
        with pytest.raises(
            catalog.ShortBuild,
            match=r"seed 18 fell short \(\d of 3 rooms "
            r"built\); nothing was stored",
        ):
            generate_into(
                store, "dungeon", 11, seed=8, params=COMPLETE_THEN_SHORT, refuse_short=True
            )
        assert store.count(MapRecord) == 0
        stats = generate_into(
            store, "dungeon", 10, seed=8, params=COMPLETE_THEN_SHORT, refuse_short=True
        )
        assert str(stats.builds) == "10 complete, 0 short" and store.count(MapRecord) == 10
    finally:
        store.close()


def _generate(*args: str) -> object:
    from click.testing import CliRunner

    from entityworks.cli import cli

    return CliRunner().invoke(cli, ["generate", *args], catch_exceptions=False)


def test_generate_reports_short_builds_and_can_refuse_them(tmp_path):
    """The issue's command: a one-line summary of the builds, and ``--refuse-short`` refusing
    the whole batch (one stderr line, exit 2, no map stored)."""
    db = str(tmp_path / "levels.db")
    args = [
        "dungeon",
        "--width",
        "40",
        "--height",
        "40",
        "-p",
        "rooms=100",
        "-p",
        "breakout=50",
        "-n",
        "3",
        "--seed",
        "1",
        "-j",
        "1",
        "--db",
    ]
    built = [
        dungeon.generate(width=40, height=40, rooms=100, breakout=50, seed=s).rooms_built
        for s in (1, 2, 3)
    ]
    done = _generate(*args, db)
    assert done.exit_code == 0, done.stderr
    span = f"{min(built)}-{max(built)}" if min(built) != max(built) else str(built[0])
    assert done.stdout.splitlines()[1] == (
        f"dungeon builds: 0 complete, 3 short (asked 100 rooms, built {span})"
    )
    refused = _generate(*args, str(tmp_path / "strict.db"), "--refuse-short")
    assert refused.exit_code == 2 and refused.stdout == ""
    assert refused.stderr == (
        f"error: the build of seed 1 fell short ({built[0]} of 100 rooms "
        f"built); nothing was stored (--refuse-short)\n"
    )
    assert not (tmp_path / "strict.db").exists()
    fine = _generate(
        "dungeon",
        "--width",
        "60",
        "--height",
        "30",
        "-p",
        "rooms=3",
        "-n",
        "3",
        "--seed",
        "8",
        "-j",
        "1",
        "--refuse-short",
        "--db",
        db,
    )
    assert fine.exit_code == 0 and "dungeon builds: 3 complete, 0 short" in fine.stdout
    caves = _generate("caves", "-n", "1", "--width", "40", "--height", "30", "--db", db)
    store = Store(db)
    maps = list(store.select(MapRecord, order_by="id"))
    store.close()
    whole = _connected(maps[-1].grid)  # a cave system's outcome: its floor in one region
    assert caves.exit_code == 0 and caves.stdout.splitlines()[1] == (
        f"caves builds: {int(whole)} complete, {int(not whole)} short"
        + ("" if whole else " (1 not connected)")
    )
    assert [m.build_success for m in maps] == [False, False, False, True, True, True, whole]

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
from generators import caves, dungeon, sudoku
from generators.regions import region_stats
from tests.conftest import require_data

SMALL = {"caves": {"width": 60, "height": 40}, "dungeon": {"width": 60, "height": 40},
         "islands": {"width": 40, "height": 30}}


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
        r.id for r in records if r.kind == "caves")


def test_largest_and_random_sample(filled):
    store, records = filled
    top = largest_maps(store, 3)
    expected = sorted(records, key=lambda r: (-r.largest_region, -r.id))[:3]
    assert [m.id for m in top] == [r.id for r in expected]
    assert [m.id for m in largest_maps(store, 2, kind="islands", by="open_ratio")] == [
        r.id for r in sorted((r for r in records if r.kind == "islands"),
                             key=lambda r: (-r.open_ratio, -r.id))[:2]]
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
    rows = [r for c in generate_maps("islands", 12, seed=1, params={"width": 12, "height": 9})
            for r in c]
    rows += [r for c in generate_maps("caves", 12, seed=1, params={"width": 12, "height": 9})
             for r in c]
    rows.sort(key=lambda r: r.seed * 2 + (r.kind == "caves"))  # kinds interleaved
    store.insert_many(rows)
    store.delete(MapRecord, where=col("id").in_([2, 3, 4, 5, 6, 9, 10, 11, 17]))  # gaps
    caves = {r.id for r in store.select(MapRecord, where={"kind": "caves"})}
    assert len(caves) == 8
    for tries in (catalog.SAMPLE_TRIES, 0):
        monkeypatch.setattr(catalog, "SAMPLE_TRIES", tries)
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
    parallel = [r for c in generate_maps("caves", 5, seed=5, params=params, workers=2,
                                         chunk=2) for r in c]
    assert [r.seed for r in parallel] == [5, 6, 7, 8, 9]
    for a, b in zip(serial, parallel, strict=True):
        assert np.array_equal(a.grid, b.grid) and a.caves == b.caves
    again = build_map("caves", 5, params)
    assert np.array_equal(again.grid, serial[0].grid)
    unseeded = [r for c in generate_maps("islands", 2, params={"width": 20, "height": 20})
                for r in c]
    assert all(isinstance(r.seed, int) for r in unseeded)
    rebuilt = build_map("islands", unseeded[1].seed, {"width": 20, "height": 20})
    assert np.array_equal(rebuilt.grid, unseeded[1].grid)


@pytest.mark.parametrize("kwargs, message", [
    ({"params": {"colour": 1}}, "caves has no parameter 'colour'"),
    ({"params": {"close_cell_prob": 300}}, "close_cell_prob must be <= 100"),
    ({"count": -1}, "count must be an integer >= 0"),
    ({"workers": 0}, "workers must be an integer >= 1"),
    ({"seed": -3}, "seed must be a non-negative integer"),
])
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
    assert back.distribution == list(report.distribution) and sum(back.distribution) == len(
        payload)
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
            r.id for r in records if r.kind == "dungeon" and r.region_count == 1)
        back = find_maps(store, seed=10, kind="caves")[0]
        assert np.array_equal(back.grid, records[0].grid) and back.caves == records[0].caves
        assert len(sample_maps(store, 3, seed=1)) == 3
    finally:
        store.close()
        drop_all(url)

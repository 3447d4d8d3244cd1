"""Placements in the catalog (child table maps_placements) and copying a whole catalog.

Placements round-trip on every backend, draw on PNG and ASCII, and a PostgreSQL catalog
copied into an SQLite file with ``entityworks copy`` is the same catalog, row for row.
"""

from __future__ import annotations

import io

import numpy as np
import pytest
import sqlalchemy as sa
from click.testing import CliRunner
from PIL import Image

from entityworks import Store
from entityworks.catalog import (
    TABLES,
    EntropyRecord,
    MapRecord,
    SudokuEntry,
    SudokuPuzzle,
    copy_catalog,
    generate_into,
    load_grid,
    load_map,
    open_catalog,
    place_on_map,
    store_placements,
)
from entityworks.cli import cli
from entityworks.errors import EntityworksError
from generators.maps import placement, regions, render


def _drop_all(url: str) -> None:
    engine = sa.create_engine(url)
    metadata = sa.MetaData()
    metadata.reflect(engine)
    metadata.drop_all(engine)
    engine.dispose()


def _fill(store: Store) -> None:
    generate_into(store, "cellular", 3, seed=1)
    generate_into(store, "dungeon", 2, seed=5, params={"width": 60, "height": 40})
    puzzle = SudokuPuzzle(None, "test", "one", "1" + "0" * 80, None, 1, 2)
    store.insert(puzzle)
    store.insert(SudokuEntry(None, "test", 0, "one", 1, puzzle.id))
    store.insert(
        EntropyRecord(
            None,
            "x.bin",
            3,
            "ab" * 32,
            1.5,
            0.0,
            None,
            None,
            1.0,
            None,
            None,
            None,
            2,
            [1, 2] + [0] * 254,
        )
    )


def test_placements_round_trip_and_follow_the_generator(backend_url: str) -> None:
    store = open_catalog(backend_url)
    _fill(store)
    placed = store_placements(store, [1, 4], 3, 2)
    for map_id in (1, 4):
        record = load_map(store, map_id)
        assert record is not None
        assert record.placements == placed[map_id]
        assert [p.label for p in record.placements] == ["stairs_up", "stairs_down", "item"]
        expected = placement.place(record.grid, 3, 2, record.seed).points
        assert [(p.x, p.y) for p in record.placements] == expected
        reach = regions.reachable(record.grid, expected[0])
        assert all(reach[y, x] for x, y in expected)
    # placing again replaces, never appends; other maps are untouched
    store_placements(store, [1], 1, 0, seed=3)
    assert len(load_map(store, 1).placements) == 1
    assert load_map(store, 2).placements == []
    assert np.array_equal(load_grid(store, 4), load_map(store, 4).grid)
    assert load_grid(store, 999) is None and load_map(store, 999) is None
    store.close()


def test_a_failed_placement_writes_nothing(tmp_path) -> None:
    store = open_catalog(tmp_path / "c.db")
    _fill(store)
    store_placements(store, [2], 2, 1)
    before = load_map(store, 2).placements
    with pytest.raises(EntityworksError, match="no map with id 77"):
        store_placements(store, [2, 77], 3, 0, seed=8)  # map 2 would change, then 77 fails
    assert load_map(store, 2).placements == before
    with pytest.raises(EntityworksError, match="map 1: cannot place 3 point"):
        store_placements(store, [1, 2], 3, 40)
    assert load_map(store, 1).placements == [] and load_map(store, 2).placements == before


def test_renderers_draw_stored_placements(tmp_path) -> None:
    db = str(tmp_path / "r.db")
    store = open_catalog(db)
    _fill(store)
    record = load_map(store, 1)
    place_on_map(record, 3, 1, seed=2)
    store.update(record)
    runner = CliRunner()
    out = runner.invoke(
        cli,
        [
            "render",
            "1",
            "--ascii",
            "-",
            "--png",
            str(tmp_path / "m.png"),
            "--block",
            "4",
            "--db",
            db,
        ],
    )
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()[1:]
    marks = {(p.x, p.y): ch for p, ch in zip(record.placements, "<>*", strict=True)}
    for (x, y), ch in marks.items():
        assert lines[y][x] == ch
    assert (
        render.from_ascii(
            "\n".join(line.translate(str.maketrans("<>*", "...")) for line in lines)
        ).tolist()
        == record.grid.tolist()
    )
    with Image.open(tmp_path / "m.png") as image:
        rgb = np.asarray(image.convert("RGB"))
    red = (rgb[2::4, 2::4] == render.PLACEMENT_COLOUR).all(axis=2)
    assert {(int(x), int(y)) for y, x in np.argwhere(red)} == set(marks)


def test_place_command_and_its_errors(tmp_path) -> None:
    db = str(tmp_path / "p.db")
    _fill(open_catalog(db))
    runner = CliRunner()
    ok = runner.invoke(cli, ["place", "1", "2", "-n", "2", "-r", "1", "--seed", "4", "--db", db])
    assert ok.exit_code == 0
    assert ok.stdout.startswith("map 1: stairs_up (") and "map 2: stairs_up" in ok.stdout
    bad = runner.invoke(cli, ["place", "1", "-r", "50", "--db", db])
    assert bad.exit_code == 2 and bad.stderr.startswith("error: map 1: cannot place 2")
    assert len(bad.stderr.splitlines()) == 1


def _catalog_rows(store: Store) -> dict[str, list]:
    return {name: list(store.select(cls, order_by="id")) for name, cls in TABLES.items()}


def _same(a: dict[str, list], b: dict[str, list]) -> None:
    assert a.keys() == b.keys()
    for name in a:
        assert len(a[name]) == len(b[name]) > 0, name
        for x, y in zip(a[name], b[name], strict=True):
            for f in x.__dataclass_fields__:
                left, right = getattr(x, f), getattr(y, f)
                if isinstance(left, np.ndarray):
                    assert left.dtype == right.dtype and np.array_equal(left, right)
                else:
                    assert left == right, (name, f)


def test_a_postgresql_catalog_copied_to_sqlite_is_the_same(pg_url: str, tmp_path) -> None:
    _drop_all(pg_url)
    source = open_catalog(pg_url)
    try:
        _fill(source)
        store_placements(source, [1, 2], 2, 1)
        target_path = tmp_path / "copy.db"
        out = CliRunner().invoke(
            cli, ["copy", "--from", pg_url, "--to", str(target_path), "--progress"]
        )
        assert out.exit_code == 0, out.output
        assert out.stdout.startswith(
            "copied 5 maps, 1 sudoku_puzzles, 1 sudoku_entries, 1 entropy_reports to "
        )
        # the bar on stderr counts every top-level row the copy wrote
        assert "100%" in out.stderr and "8/8 [" in out.stderr
        assert "@" not in out.stdout or "***" in out.stdout  # never a password
        target = Store(target_path)
        _same(_catalog_rows(source), _catalog_rows(target))
        # a copy never merges into a filled catalog
        again = CliRunner().invoke(cli, ["copy", "--from", pg_url, "--to", str(target_path)])
        assert again.exit_code == 2 and "already has rows in 'maps'" in again.stderr
        target.close()
    finally:
        source.close()
        _drop_all(pg_url)


def test_copy_into_postgresql_keeps_ids_and_later_inserts_work(pg_url: str, tmp_path) -> None:
    _drop_all(pg_url)
    source = open_catalog(tmp_path / "src.db")
    _fill(source)
    target = Store(pg_url)
    try:
        stats = copy_catalog(source, target)
        assert stats.rows == {
            "maps": 5,
            "sudoku_puzzles": 1,
            "sudoku_entries": 1,
            "entropy_reports": 1,
        }
        _same(_catalog_rows(source), _catalog_rows(target))
        generate_into(target, "cellular", 1, seed=9)  # the id sequence was moved on
        assert max(m.id for m in target.select(MapRecord)) == 6
    finally:
        target.close()
        _drop_all(pg_url)


def test_copy_refuses_a_database_without_a_catalog_and_the_same_database(tmp_path) -> None:
    empty = tmp_path / "empty.db"
    Store(empty).close()
    with pytest.raises(EntityworksError, match="holds no entityworks catalog"):
        copy_catalog(Store(empty), Store(tmp_path / "t.db"))
    db = str(tmp_path / "same.db")
    _fill(open_catalog(db))
    out = CliRunner().invoke(cli, ["copy", "--from", db, "--to", db])
    assert out.exit_code == 2 and out.stderr == "error: --from and --to name the same database\n"
    missing = CliRunner().invoke(cli, ["copy", "--from", str(tmp_path / "nope.db"), "--to", db])
    assert missing.exit_code == 2 and "no database at" in missing.stderr


def test_png_of_a_stored_map_equals_the_generator_picture(tmp_path) -> None:
    store = open_catalog(tmp_path / "g.db")
    _fill(store)
    buffer = io.BytesIO()
    render.to_png(load_grid(store, 3), buffer, block=2)
    from generators.maps import cellular

    expected = io.BytesIO()
    render.to_png(cellular.generate(seed=3).grid, expected, block=2)
    assert buffer.getvalue() == expected.getvalue()

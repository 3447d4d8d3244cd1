"""Catalogs that prove how each map was made: every map keeps its generator's version and its
grid's hash, ``verify_catalog`` rebuilds maps and names the ones that differ (an edited
row, a changed generator, another version), ``generate_into`` refuses to mix versions, and
solved puzzles keep the solver's version and figures. On each backend.

The oracles: the generators called directly (not through the catalog), ``hashlib`` over the
grid's bytes, rows changed through the database's own driver (its DB-API connection).
"""

from __future__ import annotations

import functools
import hashlib
from typing import Any

import numpy as np
import pytest
import sqlalchemy as sa

import generators
from entityworks import Store, col
from entityworks.catalog import (
    MapRecord,
    MixedVersions,
    SudokuPuzzle,
    generate_into,
    open_catalog,
    store_sudokus,
    verify_catalog,
)
from generators import sudoku
from generators.maps import dungeon

PARAMS = {"width": 30, "height": 20}


def _digest(grid: np.ndarray) -> str:
    """The documented hash, computed here from the generator's own grid."""
    cells = np.ascontiguousarray(grid, dtype=np.uint8)
    return hashlib.sha256(
        f"{cells.shape[0]}x{cells.shape[1]}\n".encode() + cells.tobytes()
    ).hexdigest()


def _raw(url: str, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    """Run ``sql`` (``?`` placeholders) through the database driver's own connection."""
    engine = sa.create_engine(url)
    try:
        conn = engine.raw_connection()
        try:
            style = engine.dialect.dbapi.paramstyle  # type: ignore[union-attr]
            if style in ("format", "pyformat"):
                sql = sql.replace("?", "%s")
            cursor = conn.cursor()
            cursor.execute(sql, params)
            rows = list(cursor.fetchall()) if cursor.description else []
            conn.commit()
            return rows
        finally:
            conn.close()
    finally:
        engine.dispose()


@pytest.fixture
def catalog(backend_url: str):
    store = open_catalog(backend_url)
    generate_into(store, "dungeon", 4, seed=11, params=PARAMS)
    yield store
    store.close()


def test_each_map_keeps_its_generator_version_and_grid_hash(catalog, backend_url):
    rows = _raw(backend_url, "SELECT seed, generator_version, grid_sha256 FROM maps ORDER BY id")
    assert [r[0] for r in rows] == [11, 12, 13, 14]
    for seed, version, digest in rows:
        assert version == generators.__version__
        assert digest == _digest(dungeon.generate(**PARAMS, seed=seed).grid)


def test_verify_passes_a_clean_catalog(catalog):
    seen: list[int] = []
    report = verify_catalog(catalog, progress=seen.append)
    assert report.ok and report.findings == []
    assert report.checked == 4 and sum(seen) == 4
    assert (report.unrecorded, report.filled) == (0, 0)


def test_verify_finds_a_row_whose_grid_was_edited(catalog, backend_url):
    other = _raw(backend_url, "SELECT grid FROM maps WHERE seed = ?", 14)[0][0]
    _raw(backend_url, "UPDATE maps SET grid = ? WHERE seed = ?", bytes(other), 12)
    report = verify_catalog(catalog)
    assert not report.ok
    (edited,) = report.findings
    assert (edited.seed, edited.problem, edited.kind) == (12, "edited", "dungeon")
    assert "grid was changed" in str(edited) and "\n" not in str(edited)
    # the filter selects the maps checked
    assert verify_catalog(catalog, col("seed") != 12).ok


def test_verify_finds_a_row_whose_hash_was_edited(catalog, backend_url):
    _raw(backend_url, "UPDATE maps SET grid_sha256 = ? WHERE seed = ?", "0" * 64, 13)
    (edited,) = verify_catalog(catalog).findings
    assert (edited.seed, edited.problem) == (13, "edited")
    assert "grid_sha256 was changed" in edited.detail


def test_verify_finds_a_changed_generator(catalog, monkeypatch):
    made = dungeon.generate

    @functools.wraps(made)  # the same signature
    def changed(**kwargs: Any) -> Any:
        result = made(**kwargs)
        result.grid[0, 0] ^= 1  # one cell differs
        return result

    monkeypatch.setattr(dungeon, "generate", changed)
    report = verify_catalog(catalog)
    assert [(f.seed, f.problem) for f in report.findings] == [
        (s, "regenerated") for s in (11, 12, 13, 14)
    ]
    assert report.differing == 4


def test_a_new_generator_version_is_reported_and_not_mixed_in(catalog, monkeypatch):
    original = generators.__version__
    monkeypatch.setattr(generators, "__version__", "99.0.0")
    report = verify_catalog(catalog)
    assert {(f.problem, f.seed) for f in report.findings} == {
        ("version", s) for s in (11, 12, 13, 14)
    }
    assert all(original in f.detail and "99.0.0" in f.detail for f in report.findings)
    with pytest.raises(MixedVersions):
        generate_into(catalog, "dungeon", 2, seed=20, params=PARAMS)
    with pytest.raises(MixedVersions):  # the same package's other kinds too
        generate_into(catalog, "cellular", 1, seed=20)
    assert catalog.count(MapRecord) == 4  # nothing written
    generate_into(catalog, "dungeon", 2, seed=20, params=PARAMS, mix_versions=True)
    assert catalog.count(MapRecord) == 6
    assert sorted(v for (v,) in _raw_versions(catalog)) == sorted([original] * 4 + ["99.0.0"] * 2)


def _raw_versions(store: Store) -> list[tuple[str]]:
    table = store.table(MapRecord)
    with store.connection() as conn:
        return [tuple(r) for r in conn.execute(sa.select(table.c.generator_version))]


def test_fill_restamps_maps_the_new_version_rebuilds_exactly(catalog, monkeypatch):
    monkeypatch.setattr(generators, "__version__", "99.0.0")
    report = verify_catalog(catalog, fill=True)
    assert report.ok and report.filled == 4
    assert {v for (v,) in _raw_versions(catalog)} == {"99.0.0"}
    assert verify_catalog(catalog).ok
    generate_into(catalog, "dungeon", 1, seed=30, params=PARAMS)  # one version again


def test_solved_puzzles_keep_the_solver_version_and_figures(backend_url):
    store = open_catalog(backend_url)
    try:
        puzzles = [sudoku.generate(28, seed=s) for s in (1, 2)]
        entries = [sudoku.NamedPuzzle(f"Grid {i}", p.puzzle, i) for i, p in enumerate(puzzles)]
        solutions = [sudoku.solve(p.puzzle) for p in puzzles]
        store_sudokus(store, "made.txt", entries, solutions)
        rows = {r.puzzle: r for r in store.select(SudokuPuzzle)}
        for entry, solution in zip(entries, solutions, strict=True):
            row = rows[entry.puzzle]
            assert row.solver_version == generators.__version__
            assert (row.nodes, row.difficulty) == (solution.nodes, solution.guesses)
    finally:
        store.close()

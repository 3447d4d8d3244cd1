"""Cave systems record their build's outcome as dungeons do (issue 29, item 11):
``entityworks generate caves -p breakout=3`` stored a 33-region map with ``build_success`` and
``connected`` NULL, and ``--refuse-short`` let it through. A cave system has no rooms: its build
succeeded when its floor is one 4-connected region. Every figure here is checked against
``scipy.ndimage.label`` run on the grid as stored, an independent count of the regions.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import sqlalchemy as sa
from click.testing import CliRunner
from scipy import ndimage

from entityworks import Store, catalog
from entityworks.catalog import MapRecord
from entityworks.cli import cli

SPLIT = {"width": 60, "height": 40, "breakout": 3}  # the builder gives up: floors split
WHOLE = {"width": 60, "height": 40}  # the default breakout joins every cave


def _regions(grid: np.ndarray) -> int:
    """4-connected floor regions of ``grid`` (1 = wall, 0 = floor), by SciPy."""
    return int(ndimage.label(grid == 0)[1])


def _generate(*args: str) -> object:
    return CliRunner().invoke(cli, ["generate", "caves", *args])


def test_split_and_whole_cave_floors_are_recorded(backend_url: str) -> None:
    store = catalog.open_catalog(backend_url)
    try:
        split = catalog.generate_into(store, "caves", 4, seed=1, params=SPLIT)
        whole = catalog.generate_into(store, "caves", 4, seed=1, params=WHOLE)
        maps = list(store.select(MapRecord, order_by="id"))
        counts = [_regions(m.grid) for m in maps]
        assert all(c > 1 for c in counts[:4]) and counts[4:] == [1] * 4  # the premise
        for m, count in zip(maps, counts, strict=True):
            assert m.region_count == count
            assert m.build_success is m.connected is (count == 1)
            assert m.rooms_asked is None and m.rooms_built is None  # caves have no rooms
        assert str(split.builds) == "0 complete, 4 short (4 not connected)"
        assert str(whole.builds) == "4 complete, 0 short"
        # the stored columns, read by SQL itself: no NULL left, the split ones false
        engine = sa.create_engine(backend_url)
        try:
            with engine.connect() as conn:
                rows = conn.execute(
                    sa.text(
                        "SELECT COUNT(*) FROM maps WHERE build_success IS NULL OR connected IS NULL"
                    )
                ).scalar_one()
                short = conn.execute(
                    sa.text(
                        "SELECT COUNT(*) FROM maps WHERE build_success = :no AND connected = :no"
                    ),
                    {"no": False},
                ).scalar_one()
        finally:
            engine.dispose()
        assert (rows, short) == (0, 4)
    finally:
        store.close()


def test_build_map_and_the_encoded_rows_agree() -> None:
    """The two ways a map becomes a row (objects, and rows encoded in the worker)."""
    record = catalog.build_map("caves", 2, dict(SPLIT))
    count = _regions(record.grid)
    assert count > 1
    assert (record.build_success, record.rooms_asked, record.rooms_built, record.connected) == (
        False,
        None,
        None,
        False,
    )
    joined = catalog.build_map("caves", 2, {**SPLIT, "breakout": 100_000})
    assert _regions(joined.grid) == 1 and joined.build_success is joined.connected is True
    unjoined = catalog.build_map("caves", 2, {**WHOLE, "connect": False})
    assert unjoined.connected is (_regions(unjoined.grid) == 1)


def test_the_issue_command_and_refuse_short(tmp_path: Path) -> None:
    db = tmp_path / "levels.db"
    done = _generate("-p", "breakout=3", "--seed", "1", "-n", "3", "-j", "1", "--db", str(db))
    assert done.exit_code == 0, done.output
    store = Store(db)
    try:
        maps = list(store.select(MapRecord, order_by="id"))
    finally:
        store.close()
    counts = [_regions(m.grid) for m in maps]
    assert all(c > 1 for c in counts)  # the issue's 33-region maps
    assert [m.build_success for m in maps] == [m.connected for m in maps] == [False] * 3
    assert done.stdout.splitlines()[1] == "caves builds: 0 complete, 3 short (3 not connected)"

    strict = tmp_path / "strict.db"
    refused = _generate(
        "-p",
        "breakout=3",
        "--seed",
        "1",
        "-n",
        "3",
        "-j",
        "1",
        "--refuse-short",
        "--db",
        str(strict),
    )
    assert refused.exit_code == 2 and refused.stdout == ""
    assert refused.stderr == (
        f"error: the build of seed 1 fell short (floor split into "
        f"{counts[0]} regions); nothing was stored (--refuse-short)\n"
    )
    assert not strict.exists()

    fine = _generate(
        "--width",
        "60",
        "--height",
        "40",
        "--seed",
        "1",
        "-n",
        "3",
        "-j",
        "1",
        "--refuse-short",
        "--db",
        str(strict),
    )
    assert fine.exit_code == 0, fine.output
    assert "caves builds: 3 complete, 0 short" in fine.stdout


def test_refuse_short_rolls_back_caves_stored_before_a_split_one(
    tmp_path: Path, monkeypatch
) -> None:
    """One transaction: whole cave systems written in earlier batches go with the split one."""
    from entityworks.catalog import _generate as catalog_generate

    params = {"width": 40, "height": 40, "breakout": 80}
    counts = {s: _regions(catalog.build_map("caves", s, dict(params)).grid) for s in range(1, 20)}
    start = next(s for s, c in counts.items() if c == 1)
    split = next(s for s, c in counts.items() if s > start and c != 1)
    monkeypatch.setattr(catalog_generate, "STORE_BATCH", 1)
    store = catalog.open_catalog(tmp_path / "levels.db")
    try:
        with pytest.raises(
            catalog.ShortBuild,
            match=f"seed {split} fell short \\(floor split into {counts[split]} regions",
        ):
            catalog.generate_into(
                store, "caves", split - start + 1, seed=start, params=params, refuse_short=True
            )
        assert store.count(MapRecord) == 0
    finally:
        store.close()

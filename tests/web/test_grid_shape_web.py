"""A ``maps`` row whose grid blob claims another size than the row (issue 29, item 6), planted
with sqlite3 in a catalog Datasette serves: 2 KB of deflated bits claiming 4096x4096 in a 40x21
row. Within the cell limit, so it used to be unpacked and drawn (``tiled.json`` answered 33 MB);
every picture and the Tiled export now answer a 500 naming the map at once, from the blob's
header, and Datasette's own pages and JSON of the row still answer (they never unpack it).
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sqlite3
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from tests.entityworks.catalog.test_grid_shape import deflated_bits, deflated_npy
from tests.web.conftest import need_datasette

#: The planted map: a 40x21 cellular map of the fixture catalog.
MAP_ID = 5
#: Peak traced bytes allowed for one request (Datasette's own work included); unpacking the
#: claimed grid takes 16 MB, drawing it far more.
SMALL = 8 << 20


def _planted(catalog_file: Path, folder: Path, blob: bytes) -> Path:
    bomb = folder / "liar.db"
    shutil.copyfile(catalog_file, bomb)
    with sqlite3.connect(bomb) as conn:
        width, height = conn.execute(
            "SELECT width, height FROM maps WHERE id = ?", (MAP_ID,)
        ).fetchone()
        assert (width, height) == (40, 21)
        conn.execute("UPDATE maps SET grid = ? WHERE id = ?", (blob, MAP_ID))
    conn.close()
    return bomb


async def _timed(ds: Any, path: str) -> tuple[Any, int, float]:
    tracemalloc.start()
    start = time.perf_counter()
    response = await ds.client.get(path)
    seconds = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return response, peak, seconds


@pytest.mark.parametrize("make", [deflated_bits, deflated_npy], ids=["bits", "npy"])
def test_the_plugin_refuses_a_grid_of_another_size(
    catalog_file: Path, tmp_path: Path, make: Any
) -> None:
    need_datasette()
    from datasette.app import Datasette

    bomb = _planted(catalog_file, tmp_path, make())
    ds = Datasette([str(bomb)])

    async def go() -> None:
        await ds.invoke_startup()
        for tail in (
            f"{MAP_ID}/thumb.png",
            f"{MAP_ID}.png",
            f"{MAP_ID}/overlay.png",
            f"{MAP_ID}.tiled.json",
        ):
            response, peak, seconds = await _timed(ds, f"/-/entityworks/liar/maps/{tail}")
            assert response.status_code == 500, (tail, response.status_code)
            assert f"map {MAP_ID}: its grid is 4096x4096 cells but its row says 40x21" in (
                response.text
            ), (tail, response.text)
            assert len(response.content) < 1000, tail  # the reason, not 33 MB of tiles
            assert peak < SMALL, (tail, peak)
        # Datasette's own JSON and pages of the row answer: they never unpack the grid
        for path in (
            f"/liar/maps/{MAP_ID}.json",
            f"/liar/maps.json?id={MAP_ID}",
            f"/liar/maps/{MAP_ID}",
        ):
            response, peak, seconds = await _timed(ds, path)
            assert response.status_code == 200, (path, response.status_code)
            assert peak < SMALL, (path, peak)
        row = (await ds.client.get(f"/liar/maps/{MAP_ID}.json?_shape=objects")).json()
        assert [r["width"] for r in row["rows"]] == [40]
        page = await ds.client.get(f"/liar/maps/{MAP_ID}")
        assert "ew-map-page" not in page.text  # the row alone, no picture of it
        other = await ds.client.get("/-/entityworks/liar/maps/6.tiled.json")
        assert other.status_code == 200  # the other maps still draw
        tiled = json.loads(other.content)
        assert (tiled["width"], tiled["height"]) == (40, 21)

    asyncio.run(go())

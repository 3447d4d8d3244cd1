"""Datasette's own filters and foreign-key links on a catalog entityworks wrote: the ``=``
filter (which Datasette binds as text), the "rows from parent_key" links of a map's row page
and range filters find the rows sqlite3 finds with numbers (our SQLite columns have type
affinity; 0.2.3's ANY columns found nothing for ``?width=60``)."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

from tests.web.conftest import need_datasette


def _oracle(path: Path, sql: str, *params: Any) -> list[Any]:
    """Rows as sqlite3 finds them with numbers bound as numbers."""
    with sqlite3.connect(path) as conn:
        rows = [r[0] if len(r) == 1 else tuple(r) for r in conn.execute(sql, params)]
    conn.close()
    return rows


def _get(path: Path, *urls: str) -> list[Any]:
    need_datasette()
    from datasette.app import Datasette

    async def go() -> list[Any]:
        ds = Datasette([str(path)])
        out = []
        for url in urls:
            response = await ds.client.get(url)
            assert response.status_code == 200, (url, response.text[:300])
            out.append(response.json())
        return out

    return asyncio.run(go())


def test_the_equality_filter_finds_rows_of_numeric_columns(catalog_file):
    db = f"/{catalog_file.stem}"
    width, seed = _oracle(
        catalog_file, "SELECT width, seed FROM maps WHERE kind = 'dungeon' ORDER BY id"
    )[0]
    ratio = _oracle(catalog_file, "SELECT open_ratio FROM maps ORDER BY id")[0]
    wide, seeded, exact, ratios, kinds, ranged = _get(
        catalog_file,
        f"{db}/maps.json?width={width}&_shape=array&_col=id",
        f"{db}/maps.json?seed={seed}&_shape=array&_col=id",
        f"{db}/maps.json?width__exact={width}&_shape=array&_col=id",
        f"{db}/maps.json?open_ratio={ratio!r}&_shape=array&_col=id",
        f"{db}/maps.json?kind=dungeon&_shape=array&_col=id",
        f"{db}/maps.json?width__gte={width}&_shape=array&_col=id",
    )
    expected = _oracle(catalog_file, "SELECT id FROM maps WHERE width = ? ORDER BY id", width)
    assert expected and [r["id"] for r in wide] == expected
    assert [r["id"] for r in exact] == expected
    assert [r["id"] for r in seeded] == _oracle(
        catalog_file, "SELECT id FROM maps WHERE seed = ? ORDER BY id", seed
    )
    assert [r["id"] for r in ratios] == _oracle(
        catalog_file, "SELECT id FROM maps WHERE open_ratio = ? ORDER BY id", ratio
    )
    assert [r["id"] for r in kinds] == _oracle(
        catalog_file, "SELECT id FROM maps WHERE kind = 'dungeon' ORDER BY id"
    )
    assert [r["id"] for r in ranged] == _oracle(
        catalog_file, "SELECT id FROM maps WHERE width >= ? ORDER BY id", width
    )


def test_the_foreign_key_filter_and_links_find_the_child_rows(catalog_file):
    db = f"/{catalog_file.stem}"
    map_id = _oracle(
        catalog_file, "SELECT parent_key FROM maps_rooms GROUP BY parent_key ORDER BY count(*) DESC"
    )[0]
    rooms = _oracle(
        catalog_file,
        "SELECT position, x, y FROM maps_rooms WHERE parent_key = ? ORDER BY position",
        map_id,
    )
    filtered, row = _get(
        catalog_file,
        f"{db}/maps_rooms.json?parent_key={map_id}&_shape=array&_size=max",
        f"{db}/maps/{map_id}.json?_extras=foreign_key_tables",
    )
    assert len(rooms) > 1
    assert sorted((r["position"], r["x"], r["y"]) for r in filtered) == rooms
    assert {r["parent_key"] for r in filtered} == {map_id}
    # the row page's "N rows from parent_key" links: their counts and what they open
    links = {t["other_table"]: t for t in row["foreign_key_tables"]}
    for child in ("maps_rooms", "maps_corridors", "maps_caves"):
        count = _oracle(catalog_file, f"SELECT count(*) FROM {child} WHERE parent_key = ?", map_id)[
            0
        ]
        assert links[child]["count"] == count
        path, _, query = links[child]["link"].partition("?")
        [opened] = _get(catalog_file, f"{path}.json?{query}&_shape=array&_size=max")
        assert len(opened) == count and {r["parent_key"] for r in opened} <= {map_id}

"""Another application's ``maps`` table beside the plugin (issue 29, item 10): Datasette's own
row page, table page and JSON answer as without the plugin (never a 500), with no picture and
no map page, and the plugin's routes are a 404. A catalog row another tool edited so that it
cannot be read leaves its row page to Datasette and its pictures answer the reason."""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.web.conftest import need_datasette

ROUTES = ("1.png", "1/thumb.png", "1/overlay.png", "1.tiled.json", "entityworks_tiles.png")


def _real_grid(catalog_file: Path) -> tuple[Any, ...]:
    with sqlite3.connect(catalog_file) as conn:
        row: tuple[Any, ...] = conn.execute(
            "SELECT kind, width, height, grid FROM maps ORDER BY id LIMIT 1"
        ).fetchone()
    conn.close()
    return row


def _foreign(folder: Path, name: str, ddl: str, row: tuple[Any, ...]) -> Path:
    path = folder / f"{name}.db"
    with sqlite3.connect(path) as conn:
        conn.execute(ddl)
        conn.execute(f"INSERT INTO maps VALUES ({', '.join('?' * len(row))})", row)
    conn.close()
    return path


def _foreign_tables(catalog_file: Path, folder: Path) -> list[Path]:
    kind, width, height, grid = _real_grid(catalog_file)
    return [
        _foreign(
            folder,
            "plain",
            "CREATE TABLE maps (id INTEGER PRIMARY KEY, name TEXT)",
            (1, "a map of somewhere"),
        ),
        # the five columns the plugin once took for a catalog, a real grid blob in them
        _foreign(
            folder,
            "lookalike",
            "CREATE TABLE maps (id INTEGER PRIMARY KEY, kind TEXT, "
            "width INTEGER, height INTEGER, grid BLOB)",
            (1, kind, width, height, grid),
        ),
        _foreign(
            folder,
            "textgrid",
            "CREATE TABLE maps (id INTEGER PRIMARY KEY, kind TEXT, "
            "width INTEGER, height INTEGER, grid TEXT, name TEXT)",
            (1, "x", 3, 2, "abc", "n"),
        ),
    ]


def test_a_foreign_maps_table_is_left_to_datasette(catalog_file: Path, tmp_path: Path) -> None:
    need_datasette()
    from datasette.app import Datasette

    files = _foreign_tables(catalog_file, tmp_path)
    ds = Datasette([str(f) for f in files])

    async def go() -> None:
        await ds.invoke_startup()
        for path in files:
            name = path.stem
            page = await ds.client.get(f"/{name}/maps/1")
            assert page.status_code == 200, (name, page.text[-500:])
            assert "ew-map-page" not in page.text
            table = await ds.client.get(f"/{name}/maps")
            assert table.status_code == 200 and 'class="ew-map"' not in table.text, name
            data = (await ds.client.get(f"/{name}/maps/1.json?_shape=objects")).json()
            assert [r["id"] for r in data["rows"]] == [1]
            for tail in ROUTES:
                route = await ds.client.get(f"/-/entityworks/{name}/maps/{tail}")
                assert route.status_code == 404, (name, tail, route.status_code)

    asyncio.run(go())


@pytest.mark.parametrize(
    "edit, value",
    [("parameters", "{broken"), ("created_at", "yesterday"), ("grid", b"\x00not a grid")],
)
def test_an_edited_catalog_row_keeps_its_row_page(
    catalog_file: Path, tmp_path: Path, edit: str, value: Any
) -> None:
    need_datasette()
    from datasette.app import Datasette

    edited = tmp_path / "edited.db"
    shutil.copyfile(catalog_file, edited)
    with sqlite3.connect(edited) as conn:
        conn.execute(f"UPDATE maps SET {edit} = ? WHERE id = 1", (value,))
    conn.close()
    ds = Datasette([str(edited)])

    async def go() -> None:
        await ds.invoke_startup()
        page = await ds.client.get("/edited/maps/1")
        assert page.status_code == 200 and "ew-map-page" not in page.text
        assert "ew-map-page" in (await ds.client.get("/edited/maps/2")).text  # the others
        overlay = await ds.client.get("/-/entityworks/edited/maps/1/overlay.png")
        assert overlay.status_code == 500
        assert overlay.text.startswith("map 1 cannot be read: ")
        assert "Traceback" not in overlay.text and len(overlay.text) < 1000

    asyncio.run(go())

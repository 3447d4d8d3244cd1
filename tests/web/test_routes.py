"""Every route of the plugin over plain HTTP against a real ``datasette serve``.

Pictures are compared pixel for pixel with what ``generators.maps.render`` makes of the grid the
catalog returns; pages are checked for the markup a browser needs. A second group runs
Datasette in this process to count grid reads and to check permissions.
"""

from __future__ import annotations

import asyncio
import io
import json
import re
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from entityworks import Store
from entityworks.catalog import EntropyRecord, SudokuPuzzle, load_grid, load_map
from entityworks.web import _pictures as pictures
from generators.maps import render
from tests.web.conftest import Server, need_datasette


def fetch(
    server: Server, path: str, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(server.base + path, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return (
                response.status,
                {k.lower(): v for k, v in response.headers.items()},
                response.read(),
            )
    except urllib.error.HTTPError as error:
        return error.code, {k.lower(): v for k, v in error.headers.items()}, error.read()


def png_pixels(body: bytes) -> np.ndarray:
    with Image.open(io.BytesIO(body)) as image:
        assert image.format == "PNG"
        return np.asarray(image)


@pytest.fixture(scope="module")
def store(catalog_file: Path):
    s = Store(catalog_file)
    yield s
    s.close()


def maps_url(server: Server, catalog_file: Path, tail: str) -> str:
    return f"/-/entityworks/{catalog_file.stem}/maps/{tail}"


def test_thumbnails_are_the_grid_one_pixel_per_cell_or_shrunk(server, catalog_file, store):
    for map_id in range(1, 9):
        grid = load_grid(store, map_id)
        status, headers, body = fetch(server, maps_url(server, catalog_file, f"{map_id}/thumb.png"))
        assert status == 200 and headers["content-type"] == "image/png"
        pixels = png_pixels(body)
        assert np.array_equal(pixels, np.asarray(render.thumbnail(grid, 96)))
        height, width = grid.shape
        assert pixels.shape[::-1] == pictures.thumbnail_size(width, height)
    # the 300x120 map is shrunk by 4: each pixel is the share of floor of 4x4 cells
    assert png_pixels(fetch(server, maps_url(server, catalog_file, "8/thumb.png"))[2]).shape == (
        30,
        75,
    )
    status, _, body = fetch(server, maps_url(server, catalog_file, "8/thumb.png?size=32"))
    assert status == 200 and max(png_pixels(body).shape) <= 32


def test_a_known_picture_comes_back_as_304(server, catalog_file):
    status, headers, _ = fetch(server, maps_url(server, catalog_file, "2/thumb.png"))
    etag = headers["etag"]
    again, _, body = fetch(
        server, maps_url(server, catalog_file, "2/thumb.png"), {"If-None-Match": etag}
    )
    assert status == 200 and again == 304 and body == b""


def test_full_png_equals_render_png_with_placements(server, catalog_file, store, tmp_path):
    for map_id in (1, 3, 5):
        record = load_map(store, map_id)
        marks = [(p.x, p.y) for p in record.placements]
        status, _, body = fetch(server, maps_url(server, catalog_file, f"{map_id}.png"))
        assert status == 200
        expected = render.to_image(record.grid, 5, placements=marks)
        assert np.array_equal(png_pixels(body), np.asarray(expected))
        assert bool(marks) == (map_id in (1, 3))
    status, _, body = fetch(server, maps_url(server, catalog_file, "5.png?block=2"))
    assert png_pixels(body).shape[:2] == (
        load_grid(store, 5).shape[0] * 2,
        load_grid(store, 5).shape[1] * 2,
    )


def test_overlay_is_the_row_page_picture(server, catalog_file, store):
    record = load_map(store, 3)  # a dungeon with rooms, corridors and placements
    status, _, body = fetch(server, maps_url(server, catalog_file, "3/overlay.png"))
    assert status == 200
    block = pictures.page_block(record.width, record.height)
    expected = png_pixels(pictures.overlay_png(record, block))
    pixels = png_pixels(body)
    assert np.array_equal(pixels, expected)
    room = record.rooms[0]
    assert tuple(pixels[room.y * block, (room.x + 1) * block]) == render.OVERLAY_ROOM


def test_tiled_json_and_its_tileset(server, catalog_file, store):
    status, headers, body = fetch(server, maps_url(server, catalog_file, "4.tiled.json"))
    assert status == 200 and headers["content-type"].startswith("application/json")
    document = json.loads(body)
    grid = load_grid(store, 4)
    assert document == render.to_tiled_json(grid, 16, "entityworks_tiles.png")
    layer = np.array(document["layers"][0]["data"]).reshape(grid.shape)
    assert np.array_equal(layer == render.WALL_GID, grid == 1)
    status, _, body = fetch(server, maps_url(server, catalog_file, "entityworks_tiles.png"))
    assert status == 200 and png_pixels(body).shape == (16, 32)


@pytest.mark.parametrize(
    ("tail", "status", "text"),
    [
        ("999/thumb.png", 404, "no map 999"),
        ("999.png", 404, "no map 999"),
        ("999.tiled.json", 404, "no map 999"),
        ("1/thumb.png?size=4", 400, "size must be between 8 and 256, got 4"),
        ("1/thumb.png?size=big", 400, "size must be an integer"),
        ("1.png?block=33", 400, "block must be between 1 and 32, got 33"),
        ("1/overlay.png?block=0", 400, "block must be between 1 and 32, got 0"),
    ],
)
def test_bad_requests_are_refused_with_a_reason(server, catalog_file, tail, status, text):
    got, _, body = fetch(server, maps_url(server, catalog_file, tail))
    assert got == status and text in body.decode()


def test_unknown_database_is_404(server):
    status, _, _ = fetch(server, "/-/entityworks/nowhere/maps/1.png")
    assert status == 404


def test_table_page_writes_one_lazy_thumbnail_per_row(server, catalog_file, store):
    status, _, body = fetch(server, f"/{catalog_file.stem}/maps")
    page = body.decode()
    assert status == 200
    images = re.findall(
        r'<img class="ew-map" src="([^"]+)" width="(\d+)" height="(\d+)" '
        r'loading="lazy"',
        page,
    )
    assert [src for src, _, _ in images] == [
        maps_url(server, catalog_file, f"{i}/thumb.png") for i in range(1, 9)
    ]
    grid = load_grid(store, 8)
    assert (int(images[7][1]), int(images[7][2])) == pictures.display_size(
        grid.shape[1], grid.shape[0]
    )
    assert "&lt;Binary" not in page  # no grid is shown as a blob any more
    assert "entityworks.css" in page and "17 parameters" in page


def test_row_page_shows_the_map_large_and_lists_its_features(server, catalog_file, store):
    record = load_map(store, 3)
    status, _, body = fetch(server, f"/{catalog_file.stem}/maps/3")
    page = body.decode()
    assert status == 200
    block = pictures.page_block(record.width, record.height)
    assert (
        f'src="{maps_url(server, catalog_file, "3/overlay.png")}" '
        f'width="{record.width * block}" height="{record.height * block}"'
    ) in page
    assert f"<h3>Rooms ({len(record.rooms)})" in page
    assert f"<h3>Corridors ({len(record.corridors)})" in page
    assert "<h3>Placements (3)" in page and "stairs_down" in page
    assert maps_url(server, catalog_file, "3.tiled.json") in page
    other = fetch(server, f"/{catalog_file.stem}/sudoku_puzzles/1")[2].decode()
    assert "ew-map-page" not in other


def test_sudoku_and_entropy_tables_render_grids_and_histograms(server, catalog_file, store):
    page = fetch(server, f"/{catalog_file.stem}/sudoku_puzzles")[2].decode()
    puzzles = list(store.select(SudokuPuzzle, order_by="id"))
    assert page.count('<table class="ew-sudoku"') == 2 * len(puzzles)
    for puzzle in puzzles:
        assert pictures.sudoku_html(puzzle.puzzle, puzzle.solution) in page
        assert page.count('class="ew-clue') >= puzzle.clues
    report = next(iter(store.select(EntropyRecord)))
    page = fetch(server, f"/{catalog_file.stem}/entropy_reports")[2].decode()
    assert pictures.histogram_svg(report.distribution) in page


def test_the_stylesheet_is_served(server):
    status, headers, body = fetch(server, "/-/static-plugins/entityworks/entityworks.css")
    assert status == 200 and b"image-rendering: pixelated" in body


# -- in this process: grid reads, permissions, a PostgreSQL catalog copied to SQLite ------


def _datasette(path: Path, **kwargs):
    need_datasette()
    from datasette.app import Datasette

    return Datasette([str(path)], **kwargs)


def test_the_table_page_decodes_no_grid(catalog_file, monkeypatch):
    from entityworks.web import plugin

    reads: list[int] = []
    original = plugin.READER.grid

    def counting(path, map_id):
        reads.append(map_id)
        return original(path, map_id)

    monkeypatch.setattr(plugin.READER, "grid", counting)
    ds = _datasette(catalog_file)

    async def go():
        page = await ds.client.get(f"/{catalog_file.stem}/maps")
        assert page.status_code == 200 and page.text.count('class="ew-map"') == 8
        assert reads == []  # thumbnails are separate requests, rendered then
        thumb = await ds.client.get(f"/-/entityworks/{catalog_file.stem}/maps/2/thumb.png")
        assert thumb.status_code == 200 and reads == [2]

    asyncio.run(go())


def test_routes_respect_datasette_permissions(catalog_file):
    ds = _datasette(
        catalog_file,
        metadata={
            "databases": {catalog_file.stem: {"tables": {"maps": {"allow": {"id": "nobody"}}}}}
        },
    )

    async def go():
        for tail in ("1/thumb.png", "1.png", "1/overlay.png", "1.tiled.json"):
            response = await ds.client.get(f"/-/entityworks/{catalog_file.stem}/maps/{tail}")
            assert response.status_code == 403, tail
        assert (await ds.client.get(f"/{catalog_file.stem}/maps")).status_code == 403

    asyncio.run(go())


def test_a_database_without_a_catalog_gets_no_pictures(tmp_path):
    other = tmp_path / "other.db"
    import sqlite3

    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE maps (id INTEGER PRIMARY KEY, name TEXT)")
        conn.execute("INSERT INTO maps VALUES (1, 'a map of somewhere')")
    ds = _datasette(other)

    async def go():
        assert (await ds.client.get("/-/entityworks/other/maps/1.png")).status_code == 404
        page = await ds.client.get("/other/maps/1")
        assert page.status_code == 200 and "ew-map-page" not in page.text

    asyncio.run(go())


def test_a_postgresql_catalog_copied_to_sqlite_browses_the_same(pg_url, tmp_path):
    import sqlalchemy as sa
    from click.testing import CliRunner

    from entityworks.catalog import generate_into, open_catalog, store_placements
    from entityworks.cli import cli

    engine = sa.create_engine(pg_url)
    metadata = sa.MetaData()
    metadata.reflect(engine)
    metadata.drop_all(engine)
    engine.dispose()
    source = open_catalog(pg_url)
    try:
        generate_into(source, "caves", 2, seed=4)
        generate_into(source, "dungeon", 1, seed=4, params={"width": 60, "height": 40})
        store_placements(source, [3], 2, 1)
        copy = tmp_path / "fromserver.db"
        result = CliRunner().invoke(cli, ["copy", "--from", pg_url, "--to", str(copy)])
        assert result.exit_code == 0, result.output
        ds = _datasette(copy)

        async def go():
            for map_id in (1, 2, 3):
                thumb = await ds.client.get(f"/-/entityworks/fromserver/maps/{map_id}/thumb.png")
                assert thumb.status_code == 200
                assert thumb.content == pictures.thumbnail_png(load_grid(source, map_id))
            page = await ds.client.get("/fromserver/maps/3")
            assert "<h3>Placements (2)" in page.text and "<h3>Rooms (" in page.text

        asyncio.run(go())
    finally:
        source.close()
        engine = sa.create_engine(pg_url)
        metadata = sa.MetaData()
        metadata.reflect(engine)
        metadata.drop_all(engine)
        engine.dispose()


def test_a_read_only_catalog_in_rollback_journal_mode_is_browsed(catalog_file, tmp_path):
    """A published catalog (journal_mode=DELETE, served immutable) is read, never converted."""
    import sqlite3

    published = tmp_path / "published.db"
    with sqlite3.connect(catalog_file) as source, sqlite3.connect(published) as target:
        source.backup(target)
        target.execute("PRAGMA journal_mode=DELETE")
    ds = _datasette(published)
    from datasette.app import Datasette

    ds_immutable = Datasette(immutables=[str(published)])
    store = Store(catalog_file)
    expected = pictures.thumbnail_png(load_grid(store, 3))
    store.close()

    async def go():
        for app in (ds, ds_immutable):
            thumb = await app.client.get("/-/entityworks/published/maps/3/thumb.png")
            assert thumb.status_code == 200 and thumb.content == expected
            page = await app.client.get("/published/maps/3")
            assert "<h3>Placements (3)" in page.text

    asyncio.run(go())
    with sqlite3.connect(published) as check:
        assert check.execute("PRAGMA journal_mode").fetchone()[0] == "delete"

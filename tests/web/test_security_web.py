"""What a stranger can do to the plugin: name a database file with markup or URL syntax, deny
tables with Datasette's permissions, store a grid blob that claims a huge shape.

* Hostile file names: headless Chromium loads the maps table and a map page of each; no
  script may run and every picture must load. The markup is also checked in this process.
* Permissions: with ``allow`` on a child table (``maps_rooms``...), the map page neither lists
  nor draws its rows, for the actor of the request; the picture is compared pixel for pixel
  with what ``pictures`` draws of the map without them.
* A crafted 8 KB grid blob: the thumbnail answers an error at once, without inflating it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import io
import shutil
import sqlite3
import sys
import time
import tracemalloc
import urllib.request
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from entityworks import Store
from entityworks.catalog import load_map
from entityworks.web import _pictures as pictures
from tests.entityworks.catalog.test_security_blobs import bit_bomb
from tests.web.conftest import Server, free_port, need_datasette

#: Database file names (without ``.db``) a stranger could hand over: markup that would run a
#: script if it reached a page unescaped, and characters that end or change a URL. None holds
#: "/" (no file name can).
FILE_NAMES = [
    'q"><svg onload=alert(1)>',
    "x'><img src=x onerror=window.__xss=1>",
    'my maps "quoted"',
    "100% ~tilde+plus&amp;",
    "<details open ontoggle=window.__xss=2>",
]
#: Database names with '#', '?' or '%' and two hex digits. Datasette opens a file by the SQLite
#: URI "file:PATH?mode=ro" unquoted, so it cannot open a file named so (``browse`` refuses
#: one); such names reach the plugin as names given to a database (``add_database``).
ROUTE_NAMES = ['maps #1? "x"', "50%41 off <b>?&#x"]


def _tilde(name: str) -> str:
    from datasette.utils import tilde_encode

    encoded: str = tilde_encode(name)
    return encoded


def _datasette(paths: list[Path], **kwargs: Any) -> Any:
    need_datasette()
    from datasette.app import Datasette

    return Datasette([str(p) for p in paths], **kwargs)


@pytest.fixture(scope="module")
def hostile_dir(catalog_file: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("hostile")
    for name in FILE_NAMES:
        shutil.copyfile(catalog_file, folder / f"{name}.db")
    for i, _name in enumerate(ROUTE_NAMES):
        shutil.copyfile(catalog_file, folder / f"named{i}.db")
    return folder


def _hostile_datasette(folder: Path) -> Any:
    """Datasette serving every hostile file by its own name, and a copy under each of
    ``ROUTE_NAMES``."""
    from datasette.database import Database

    ds = _datasette([folder / f"{name}.db" for name in FILE_NAMES])
    for i, name in enumerate(ROUTE_NAMES):
        ds.add_database(Database(ds, path=str(folder / f"named{i}.db")), name=name)
    return ds


# -- hostile names: the markup, in this process ------------------------------------------------


def test_thumbnail_markup_is_escaped_and_its_url_tilde_encoded(hostile_dir: Path) -> None:
    ds = _hostile_datasette(hostile_dir)

    async def go() -> None:
        for name in FILE_NAMES + ROUTE_NAMES:
            assert ds.get_database(name).route == name
            page = await ds.client.get(f"/{_tilde(name)}/maps")
            assert page.status_code == 200, name
            for map_id in range(1, 9):
                src = f"/-/entityworks/{_tilde(name)}/maps/{map_id}/thumb.png"
                assert f'<img class="ew-map" src="{src}" ' in page.text, (name, map_id)
                thumb = await ds.client.get(src)
                assert thumb.status_code == 200 and thumb.headers["content-type"] == "image/png"
            assert "<svg onload" not in page.text and "<img src=x" not in page.text
            assert "<details open" not in page.text and "<b>" not in page.text
            row = await ds.client.get(f"/{_tilde(name)}/maps/3")
            prefix = f"/-/entityworks/{_tilde(name)}/maps/3"
            for url in (f"{prefix}/overlay.png", f"{prefix}.png", f"{prefix}.tiled.json"):
                assert f'"{url}"' in row.text, (name, url)
                assert (await ds.client.get(url)).status_code == 200, (name, url)
            assert "<svg onload" not in row.text and "<img src=x" not in row.text

    asyncio.run(go())


def test_a_kind_with_markup_is_escaped_in_the_thumbnail(catalog_file: Path, tmp_path: Path) -> None:
    copy = tmp_path / "kinds.db"
    shutil.copyfile(catalog_file, copy)
    with sqlite3.connect(copy) as conn:
        conn.execute("""UPDATE maps SET kind = '"><svg onload=alert(1)>' WHERE id = 2""")
    ds = _datasette([copy])

    async def go() -> None:
        page = (await ds.client.get("/kinds/maps")).text
        assert "<svg onload" not in page
        assert 'alt="map 2: &#34;&gt;&lt;svg onload=alert(1)&gt; ' in page

    asyncio.run(go())


def test_the_reader_opens_the_file_it_is_given_whatever_its_name(
    catalog_file: Path, tmp_path: Path
) -> None:
    """An SQLite URI ends its path at '#' or '?' and decodes '%41': unquoted, the reader of
    "a#b.db" would read the file "a", and of "a%41.db" the file "aA.db"."""
    source = Store(catalog_file)
    try:
        expected = load_map(source, 3)
    finally:
        source.close()
    assert expected is not None
    for name, decoy in (("a#b.db", "a"), ("c?d.db", "c"), ("e%41f.db", "eAf.db")):
        shutil.copyfile(catalog_file, tmp_path / name)
        decoy_store = Store(tmp_path / decoy)  # another catalog where the URI would lead
        try:
            from entityworks.catalog import generate_into, open_catalog

            generate_into(open_catalog(decoy_store), "caves", 3, seed=99)
        finally:
            decoy_store.close()
        reader = pictures.CatalogReader()
        try:
            assert np.array_equal(reader.grid(tmp_path / name, 3), expected.grid), name
            assert reader.record(tmp_path / name, 3).rooms == expected.rooms, name
        finally:
            reader.close()


# -- hostile names: a person's browser ---------------------------------------------------------

SERVE = """\
import sys
from pathlib import Path

import uvicorn
from datasette.app import Datasette
from datasette.database import Database

port, folder = int(sys.argv[1]), Path(sys.argv[2])
files, names = sys.argv[3].split("\\n"), sys.argv[4].split("\\n")
ds = Datasette([str(folder / f"{name}.db") for name in files])
for i, name in enumerate(names):
    ds.add_database(Database(ds, path=str(folder / f"named{i}.db")), name=name)
uvicorn.run(ds.app(), host="127.0.0.1", port=port, log_level="warning")
"""


@pytest.fixture(scope="module")
def hostile_server(hostile_dir: Path):
    need_datasette()
    script = hostile_dir / "serve.py"
    script.write_text(SERVE)
    port = free_port()
    command = [
        sys.executable,
        str(script),
        str(port),
        str(hostile_dir),
        "\n".join(FILE_NAMES),
        "\n".join(ROUTE_NAMES),
    ]
    running = Server(command, port, hostile_dir)
    yield running
    running.stop()


def _no_script_ran(driver: Any) -> None:
    from selenium.common.exceptions import NoAlertPresentException

    try:
        alert = driver.switch_to.alert
        text = alert.text
        alert.accept()  # closed, so that the browser goes on to the next test
    except NoAlertPresentException:
        text = None
    assert text is None, f"a script ran: alert({text!r})"
    assert driver.execute_script("return typeof window.__xss") == "undefined"


def _loaded_images(driver: Any) -> list[dict[str, Any]]:
    count = driver.execute_script("return document.images.length")
    for i in range(count):  # they are lazy: scroll each into view
        driver.execute_script("document.images[arguments[0]].scrollIntoView()", i)
    deadline = time.monotonic() + 30
    while not driver.execute_script("return Array.from(document.images).every(i => i.complete)"):
        assert time.monotonic() < deadline, "images still loading"
        time.sleep(0.1)
    images: list[dict[str, Any]] = driver.execute_script(
        "return Array.from(document.images).map(i => ({src: i.getAttribute('src'), "
        "width: i.naturalWidth, cls: i.className}))"
    )
    return images


@pytest.mark.parametrize("name", FILE_NAMES + ROUTE_NAMES)
def test_chromium_runs_no_script_and_loads_every_picture(
    hostile_server: Server, browser: Any, name: str
) -> None:
    browser.get(f"{hostile_server.base}/{_tilde(name)}/maps")
    _no_script_ran(browser)
    assert browser.title.startswith(f"{name}: maps")  # the page of that database
    thumbs = [i for i in _loaded_images(browser) if "ew-map" in i["cls"]]
    assert len(thumbs) == 8
    assert all(i["width"] > 0 for i in thumbs), thumbs  # each decoded: its URL worked
    _no_script_ran(browser)
    browser.get(f"{hostile_server.base}/{_tilde(name)}/maps/3")
    _no_script_ran(browser)
    large = [i for i in _loaded_images(browser) if "ew-map-large" in i["cls"]]
    assert len(large) == 1 and large[0]["width"] > 0, large
    link = browser.find_element("link text", "Tiled JSON").get_attribute("href")
    with urllib.request.urlopen(link, timeout=30) as response:
        assert response.status == 200 and b'"layers"' in response.read()
    _no_script_ran(browser)


# -- permissions -------------------------------------------------------------------------------

CHILDREN = {
    "maps_caves": "caves",
    "maps_rooms": "rooms",
    "maps_corridors": "corridors",
    "maps_placements": "placements",
}
HEADINGS = {
    "caves": "<h3>Caves (",
    "rooms": "<h3>Rooms (",
    "corridors": "<h3>Corridors (",
    "placements": "<h3>Placements (",
}


def _png(body: bytes) -> np.ndarray:
    with Image.open(io.BytesIO(body)) as image:
        return np.asarray(image)


def _deny(stem: str, tables: dict[str, Any]) -> dict[str, Any]:
    return {"databases": {stem: {"tables": {t: {"allow": rule} for t, rule in tables.items()}}}}


@pytest.mark.parametrize("table", list(CHILDREN))
def test_a_denied_child_table_is_neither_listed_nor_drawn(catalog_file: Path, table: str) -> None:
    stem = catalog_file.stem
    store = Store(catalog_file)
    try:
        records = {i: load_map(store, i) for i in (1, 3)}  # a cave system, a dungeon
    finally:
        store.close()
    field = CHILDREN[table]
    map_id = 1 if field == "caves" else 3
    record = records[map_id]
    assert record is not None and getattr(record, field)  # something to hide
    hidden = dataclasses.replace(record, **{field: []})
    allowed = _datasette([catalog_file])
    denied = _datasette([catalog_file], metadata=_deny(stem, {table: False}))
    block = pictures.page_block(record.width, record.height)
    base = f"/-/entityworks/{stem}/maps/{map_id}"

    async def go() -> None:
        shown = await allowed.client.get(f"/{stem}/maps/{map_id}")
        kept = await denied.client.get(f"/{stem}/maps/{map_id}")
        assert HEADINGS[field] in shown.text and HEADINGS[field] not in kept.text
        assert (await denied.client.get(f"/{stem}/{table}")).status_code == 403
        for other in set(CHILDREN.values()) - {field}:
            if getattr(record, other):
                assert HEADINGS[other] in kept.text  # only the denied table is hidden
        full = await allowed.client.get(f"{base}/overlay.png")
        part = await denied.client.get(f"{base}/overlay.png")
        assert full.status_code == part.status_code == 200
        assert np.array_equal(_png(full.content), _png(pictures.overlay_png(record, block)))
        assert np.array_equal(_png(part.content), _png(pictures.overlay_png(hidden, block)))
        assert not np.array_equal(_png(full.content), _png(part.content))
        # the ETag of the whole picture does not stand for the reduced one
        again = await denied.client.get(
            f"{base}/overlay.png", headers={"if-none-match": full.headers["etag"]}
        )
        assert again.status_code == 200 and again.content == part.content
        marks = [(p.x, p.y) for p in record.placements]
        png = await denied.client.get(f"{base}.png")
        expected = pictures.full_png(record.grid, 5, [] if field == "placements" else marks)
        assert np.array_equal(_png(png.content), _png(expected))

    asyncio.run(go())


def test_permissions_follow_the_actor_of_the_request(catalog_file: Path) -> None:
    stem = catalog_file.stem
    ds = _datasette(
        [catalog_file],
        metadata=_deny(stem, {"maps_rooms": {"id": "alice"}, "maps_corridors": False}),
    )
    alice = {"ds_actor": ds.sign({"a": {"id": "alice"}}, "actor")}
    bob = {"ds_actor": ds.sign({"a": {"id": "bob"}}, "actor")}

    async def go() -> None:
        for cookies, rooms in ((alice, True), (bob, False), (None, False)):
            page = await ds.client.get(f"/{stem}/maps/3", cookies=cookies)
            assert page.status_code == 200
            assert (HEADINGS["rooms"] in page.text) is rooms
            assert HEADINGS["corridors"] not in page.text
            assert HEADINGS["placements"] in page.text
        seen = await ds.client.get(f"/-/entityworks/{stem}/maps/3/overlay.png", cookies=alice)
        unseen = await ds.client.get(f"/-/entityworks/{stem}/maps/3/overlay.png", cookies=bob)
        assert seen.content != unseen.content

    asyncio.run(go())


@pytest.mark.parametrize(
    "metadata",
    [
        {"allow": False},
        {"databases": {"levels": {"allow": False}}},
        {"databases": {"levels": {"tables": {"maps": {"allow": False}}}}},
    ],
    ids=["instance", "database", "maps table"],
)
def test_a_denied_maps_table_database_or_instance_is_403(
    catalog_file: Path, metadata: dict[str, Any]
) -> None:
    assert catalog_file.stem == "levels"
    ds = _datasette([catalog_file], metadata=metadata)

    async def go() -> None:
        assert (await ds.client.get("/levels/maps/3")).status_code == 403  # Datasette's own
        for tail in (
            "3/thumb.png",
            "3.png",
            "3/overlay.png",
            "3.tiled.json",
            "entityworks_tiles.png",
        ):
            response = await ds.client.get(f"/-/entityworks/levels/maps/{tail}")
            assert response.status_code == 403, tail

    asyncio.run(go())


# -- a crafted grid blob -----------------------------------------------------------------------


def test_a_crafted_grid_blob_is_refused_fast_and_small(catalog_file: Path, tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.db"
    shutil.copyfile(catalog_file, bomb)
    with sqlite3.connect(bomb) as conn:
        conn.execute("UPDATE maps SET grid = ? WHERE id = 2", (bit_bomb(),))
    ds = _datasette([bomb])

    async def go() -> None:
        for tail in ("2/thumb.png", "2.png", "2/overlay.png", "2.tiled.json"):
            tracemalloc.start()
            response = await ds.client.get(f"/-/entityworks/bomb/maps/{tail}")
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            assert response.status_code == 500, tail
            assert "map 2 cannot be read" in response.text and "8192x8192" in response.text
            assert peak < 50 << 20, (tail, peak)  # the unguarded read took 0.6 GB
        page = await ds.client.get("/bomb/maps/2")  # the row itself is still shown
        assert page.status_code == 200 and "ew-map-page" not in page.text
        other = await ds.client.get("/-/entityworks/bomb/maps/1/thumb.png")
        assert other.status_code == 200  # and the other maps still draw

    asyncio.run(go())

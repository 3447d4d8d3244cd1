"""A person's view: headless Chromium loads the maps table and a map page from a running
Datasette; every picture must decode and the screenshots must show a picture, not a blank.

Set ``ENTITYWORKS_SCREENSHOTS=DIR`` to keep the screenshots (the README's comes from here).
"""

from __future__ import annotations

import io
import os
import time
from pathlib import Path

import numpy as np
from PIL import Image

from entityworks import Store
from entityworks.catalog import load_map
from entityworks.web import _pictures as pictures

WAIT_SECONDS = 30


def _load_every_image(driver) -> list[dict]:
    """Scroll each <img> into view (they are lazy) and wait until all have loaded."""
    count = driver.execute_script("return document.images.length")
    for i in range(count):
        driver.execute_script("document.images[arguments[0]].scrollIntoView()", i)
    deadline = time.monotonic() + WAIT_SECONDS
    while not driver.execute_script("return Array.from(document.images).every(i => i.complete)"):
        assert time.monotonic() < deadline, "images still loading"
        time.sleep(0.1)
    driver.execute_script("window.scrollTo(0, 0)")
    return driver.execute_script(
        "return Array.from(document.images).map(i => ({src: i.getAttribute('src'), "
        "natural: [i.naturalWidth, i.naturalHeight], shown: [i.width, i.height], "
        "rendering: getComputedStyle(i).imageRendering}))"
    )


def _screenshot(driver, name: str) -> np.ndarray:
    png = driver.get_screenshot_as_png()
    keep = os.environ.get("ENTITYWORKS_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        (Path(keep) / name).write_bytes(png)
    with Image.open(io.BytesIO(png)) as image:
        return np.asarray(image.convert("RGB"))


def _not_blank(pixels: np.ndarray) -> None:
    grey = pixels.mean(axis=2)
    assert grey.std() > 20, "the screenshot is (nearly) one colour"
    assert (grey < 60).mean() > 0.02 and (grey > 200).mean() > 0.2  # dark walls, light page


def test_maps_table_thumbnails_decode_in_chromium(server, browser, catalog_file):
    browser.get(f"{server.base}/{catalog_file.stem}/maps")
    images = [i for i in _load_every_image(browser) if "/thumb.png" in i["src"]]
    assert len(images) == 8
    store = Store(catalog_file)
    try:
        for image in images:
            map_id = int(image["src"].split("/")[-2])
            record = load_map(store, map_id)
            assert image["natural"] == list(pictures.thumbnail_size(record.width, record.height))
            assert image["shown"] == list(pictures.display_size(record.width, record.height))
            assert image["rendering"] == "pixelated"
    finally:
        store.close()
    pixels = _screenshot(browser, "datasette-maps-table.png")
    _not_blank(pixels)


def test_map_page_shows_the_large_picture_and_lists(server, browser, catalog_file):
    browser.get(f"{server.base}/{catalog_file.stem}/maps/3")
    images = _load_every_image(browser)
    large = [i for i in images if i["src"].endswith("/3/overlay.png")]
    assert len(large) == 1 and large[0]["natural"][0] > 0
    assert all(i["natural"][0] > 0 for i in images)
    headings = [h.text for h in browser.find_elements("css selector", ".ew-lists h3")]
    assert any(h.startswith("Rooms (") for h in headings)
    assert "Placements (3)" in headings
    pixels = _screenshot(browser, "datasette-map-page.png")
    _not_blank(pixels)


def test_sudoku_grids_show_clues_in_bold(server, browser, catalog_file):
    browser.get(f"{server.base}/{catalog_file.stem}/sudoku_puzzles")
    clue = browser.find_element("css selector", "table.ew-sudoku td.ew-clue")
    solved = browser.find_element("css selector", "table.ew-sudoku td.ew-solved")
    assert int(clue.value_of_css_property("font-weight")) >= 700
    assert clue.value_of_css_property("color") != solved.value_of_css_property("color")
    grid = browser.find_element("css selector", "table.ew-sudoku")
    assert grid.size["width"] > 100 and grid.size["height"] > 100

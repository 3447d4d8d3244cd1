"""Renderers (PNG, ASCII, Tiled JSON) and the golden maps shown in the README."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from PIL import Image

from generators import cellular, fov, render
from tests.golden import make_golden

GOLDEN = Path(__file__).resolve().parents[1] / "golden"

grids = arrays(
    np.uint8, st.tuples(st.integers(1, 15), st.integers(1, 15)), elements=st.integers(0, 1)
)


def _read_png(source) -> np.ndarray:
    with Image.open(source) as image:
        assert image.format == "PNG"
        return np.asarray(image.convert("L"))


@settings(max_examples=40, deadline=None)
@given(grid=grids, block=st.integers(1, 6))
def test_png_has_one_block_per_cell(grid: np.ndarray, block: int) -> None:
    buffer = io.BytesIO()
    render.to_png(grid, buffer, block=block)
    pixels = _read_png(io.BytesIO(buffer.getvalue()))
    height, width = grid.shape
    assert pixels.shape == (height * block, width * block)
    for y in range(height):
        for x in range(width):
            square = pixels[y * block : (y + 1) * block, x * block : (x + 1) * block]
            expected = render.WALL_SHADE if grid[y, x] else render.FLOOR_SHADE
            assert (square == expected).all()


def test_png_default_block_and_file_path(tmp_path: Path) -> None:
    grid = cellular.generate(seed=3).grid
    target = tmp_path / "cave.png"
    render.to_png(grid, target)
    pixels = _read_png(target)
    assert pixels.shape == (21 * 5, 40 * 5)
    assert np.array_equal(pixels[::5, ::5] == 0, grid == 1)


def test_png_fog_greys_unseen_floor_only() -> None:
    grid = cellular.generate(seed=11).grid
    floor = np.argwhere(grid == 0)[0]
    visible = fov.visible(grid, (int(floor[1]), int(floor[0])), 6)
    pixels = _read_png(_to_buffer(grid, visible))[::2, ::2]
    assert (pixels[grid == 1] == render.WALL_SHADE).all()
    assert (pixels[(grid == 0) & visible] == render.FLOOR_SHADE).all()
    assert (pixels[(grid == 0) & ~visible] == render.FOG_SHADE).all()
    assert ((grid == 0) & ~visible).any() and ((grid == 0) & visible).any()


def _to_buffer(grid: np.ndarray, visible: np.ndarray) -> io.BytesIO:
    buffer = io.BytesIO()
    render.to_png(grid, buffer, block=2, visible=visible)
    buffer.seek(0)
    return buffer


def test_png_rejects_a_mask_of_the_wrong_shape() -> None:
    with pytest.raises(ValueError, match="visible"):
        render.to_image(np.zeros((3, 3), dtype=np.uint8), visible=np.zeros((3, 4), dtype=bool))
    with pytest.raises(ValueError, match="block"):
        render.to_image(np.zeros((3, 3), dtype=np.uint8), block=0)


@settings(max_examples=80, deadline=None)
@given(grid=grids)
def test_ascii_round_trips(grid: np.ndarray) -> None:
    text = render.to_ascii(grid)
    lines = text.split("\n")
    assert len(lines) == grid.shape[0] and {len(line) for line in lines} == {grid.shape[1]}
    assert set(text) <= {"#", ".", "\n"}
    assert np.array_equal(render.from_ascii(text), grid)
    assert np.array_equal(render.from_ascii(text.replace("\n", "\r\n") + "\r\n"), grid)


@pytest.mark.parametrize(
    ("text", "message"),
    [("", "no map rows"), ("##\n#", "row 1"), ("#x#", "'x'"), (b"#", "str")],
)
def test_from_ascii_rejects_bad_text(text, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        render.from_ascii(text)


def test_tiled_json_has_what_tiled_needs(tmp_path: Path) -> None:
    grid = cellular.generate(seed=5, width=23, height=17).grid
    document = json.loads(json.dumps(render.to_tiled_json(grid, tile_size=8)))
    for key in (
        "type",
        "version",
        "orientation",
        "renderorder",
        "width",
        "height",
        "tilewidth",
        "tileheight",
        "infinite",
        "nextlayerid",
        "nextobjectid",
        "layers",
        "tilesets",
    ):
        assert key in document, key
    assert document["type"] == "map" and document["orientation"] == "orthogonal"
    assert (document["width"], document["height"]) == (23, 17)
    assert document["infinite"] is False
    (layer,) = document["layers"]
    assert layer["type"] == "tilelayer" and (layer["width"], layer["height"]) == (23, 17)
    assert layer["id"] < document["nextlayerid"]
    data = np.array(layer["data"]).reshape(17, 23)
    assert np.array_equal(data == render.WALL_GID, grid == 1)
    assert np.array_equal(data == render.FLOOR_GID, grid == 0)
    (tileset,) = document["tilesets"]
    assert tileset["firstgid"] == 1 and tileset["tilecount"] == 2
    assert tileset["imagewidth"] == tileset["columns"] * tileset["tilewidth"] == 16
    assert tileset["imageheight"] == tileset["tileheight"] == 8

    target = tmp_path / "level.json"
    image_path = render.write_tiled(grid, target, tile_size=8)
    written = json.loads(target.read_text(encoding="utf-8"))
    assert written["tilesets"][0]["image"] == image_path.name
    strip = _read_png(image_path)
    assert strip.shape == (8, 16)
    assert (strip[:, :8] == render.FLOOR_SHADE).all() and (strip[:, 8:] == render.WALL_SHADE).all()


@pytest.mark.parametrize("entry", make_golden.load_manifest(), ids=lambda e: e["file"])
def test_golden_maps_are_regenerated_exactly(entry: dict) -> None:
    """The README's maps: same seed and parameters, same map (run make_golden.py to update)."""
    grid, visible = make_golden.build(entry)
    path = GOLDEN / entry["file"]
    if path.suffix == ".txt":
        stored = path.read_text(encoding="utf-8")
        assert stored == render.to_ascii(grid) + "\n"
        assert np.array_equal(render.from_ascii(stored), grid)
    else:
        expected = np.asarray(render.to_image(grid, entry.get("block", 5), visible))
        assert np.array_equal(_read_png(path), expected)

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

from generators.maps import cellular, render
from generators.view import fov
from tests.golden import make_golden

GOLDEN = Path(__file__).resolve().parents[2] / "golden"

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


# -- colour schemes, placements, thumbnails and overlays ------------------------------------


def test_getmapimage_scheme_paints_floor_black_on_transparent_rock() -> None:
    """The C# GetMapImage: Map[x, y] == 1 (cave floor there) filled black, the rest untouched."""
    grid = cellular.generate(seed=5).grid
    with Image.open(_save(render.to_image(grid, scheme="getmapimage"))) as image:
        assert image.mode == "RGBA" and image.size == (40 * 5, 21 * 5)
        rgba = np.asarray(image)
    cells = rgba[::5, ::5]
    assert np.array_equal(cells[..., 3] == 255, grid == 0)
    assert (cells[grid == 0][:, :3] == 0).all()
    assert (cells[grid == 1][:, 3] == 0).all()
    with pytest.raises(ValueError, match="scheme"):
        render.to_image(grid, scheme="sepia")


def _save(image: Image.Image) -> io.BytesIO:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    buffer.seek(0)
    return buffer


def test_placements_are_red_squares_in_their_cells_only() -> None:
    grid = np.zeros((6, 8), dtype=np.uint8)
    grid[0, :] = 1
    buffer = io.BytesIO()
    render.to_png(grid, buffer, block=8, placements=[(2, 3), (7, 5)])
    with Image.open(io.BytesIO(buffer.getvalue())) as image:
        rgb = np.asarray(image.convert("RGB"))
    red = (rgb == render.PLACEMENT_COLOUR).all(axis=2)
    marked = {(x // 8, y // 8) for y, x in zip(*np.nonzero(red), strict=True)}
    assert marked == {(2, 3), (7, 5)}
    assert red[3 * 8 + 4, 2 * 8 + 4] and not red[3 * 8, 2 * 8]  # centre, not the corner
    with pytest.raises(ValueError, match="outside the 8x6 map"):
        render.to_png(grid, io.BytesIO(), placements=[(8, 0)])


@settings(max_examples=40, deadline=None)
@given(grid=grids, box=st.integers(1, 20))
def test_thumbnail_fits_the_box_and_keeps_the_wall_share(grid: np.ndarray, box: int) -> None:
    image = render.thumbnail(grid, box)
    height, width = grid.shape
    assert max(image.size) <= box
    pixels = np.asarray(image)
    if max(height, width) <= box:
        assert image.size == (width, height)
        assert np.array_equal(pixels == render.WALL_SHADE, grid == 1)
    else:
        factor = -(-max(height, width) // box)
        assert image.size == (-(-width // factor), -(-height // factor))
        # a pixel is as light as its share of floor: all floor white, all wall black
        for py in range(image.size[1]):
            for px in range(image.size[0]):
                part = grid[py * factor : (py + 1) * factor, px * factor : (px + 1) * factor]
                floor = int((part == 0).sum())
                assert abs(int(pixels[py, px]) - round(255 * floor / factor**2)) <= 1


def test_overlay_draws_corridors_rooms_caves_and_placements() -> None:
    grid = np.ones((20, 30), dtype=np.uint8)
    grid[2:8, 2:10] = 0
    grid[5, 10:20] = 0
    image = render.overlay_image(
        grid,
        block=4,
        rooms=[(2, 2, 8, 6)],
        caves=[(14, 10, 5, 5)],
        corridors=[[(x, 5) for x in range(10, 20)]],
        placements=[(4, 4)],
    )
    rgb = np.asarray(image)
    assert image.size == (120, 80)
    assert tuple(rgb[5 * 4 + 2, 15 * 4 + 2]) == render.OVERLAY_CORRIDOR
    assert tuple(rgb[2 * 4, 5 * 4 + 2]) == render.OVERLAY_ROOM  # room's top edge
    assert tuple(rgb[10 * 4, 16 * 4]) == render.OVERLAY_CAVE
    assert tuple(rgb[4 * 4 + 2, 4 * 4 + 2]) == render.PLACEMENT_COLOUR
    assert tuple(rgb[15 * 4 + 2, 2 * 4 + 2]) == render.OVERLAY_WALL
    big = render.overlay_image(np.zeros((1000, 2000), dtype=np.uint8), block=8)
    assert big.size == (4000, 2000)  # block cut to stay within MAX_SIDE


def test_ascii_marks_and_their_validation() -> None:
    grid = render.from_ascii("####\n#..#\n####")
    assert render.to_ascii(grid, {(1, 1): "<", (2, 1): ">"}) == "####\n#<>#\n####"
    with pytest.raises(ValueError, match="one character"):
        render.to_ascii(grid, {(1, 1): "<<"})
    with pytest.raises(ValueError, match="outside"):
        render.to_ascii(grid, {(4, 1): "*"})

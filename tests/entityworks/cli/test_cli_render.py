"""``entityworks render``: the original GetMapImage colours (``--scheme getmapimage``) and
the ASCII map printed when no output is named."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner, Result
from PIL import Image

from entityworks import Store
from entityworks.catalog import MapRecord, generate_into, open_catalog
from entityworks.cli import cli
from entityworks.cli._maps import render as render_command
from generators.maps import render

ROOT = Path(__file__).resolve().parents[3]


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


@pytest.fixture(scope="module")
def catalog_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("render") / "catalog.db"
    store = open_catalog(path)
    generate_into(store, "caves", 1, seed=3, params={"width": 40, "height": 30})
    generate_into(store, "cellular", 1, seed=4)
    store.close()
    return path


def grid_of(db: Path, map_id: int) -> np.ndarray:
    store = Store(db)
    try:
        record = store.get(MapRecord, map_id)
        assert record is not None
        return np.asarray(record.grid)
    finally:
        store.close()


def blocks(pixels: np.ndarray, block: int, shape: tuple[int, int]) -> np.ndarray:
    """(rows, cols, block*block, channels): every pixel of every cell's square."""
    height, width = shape
    channels = pixels.shape[2]
    cells = pixels.reshape(height, block, width, block, channels).transpose(0, 2, 1, 3, 4)
    return cells.reshape(height, width, block * block, channels)


@pytest.mark.parametrize("block", [1, 3, 5])
def test_getmapimage_colours_pixel_by_pixel(catalog_db: Path, tmp_path: Path, block: int) -> None:
    """GetMapImage fills the C#'s 1 cells (cave floor) with Color.Black on a new Bitmap, whose
    pixels start as transparent black (ARGB 0): floor (0,0,0,255), rock (0,0,0,0)."""
    grid = grid_of(catalog_db, 1)
    target = tmp_path / "orig.png"
    done = run(
        "render",
        "1",
        "--png",
        str(target),
        "--scheme",
        "getmapimage",
        "--block",
        str(block),
        "--db",
        str(catalog_db),
    )
    assert done.exit_code == 0, done.output
    with Image.open(target) as image:
        assert image.format == "PNG" and image.mode == "RGBA"
        assert image.size == (40 * block, 30 * block)
        pixels = np.asarray(image)
    squares = blocks(pixels, block, grid.shape)
    floor, wall = np.array([0, 0, 0, 255]), np.array([0, 0, 0, 0])
    assert (squares[grid == 0] == floor).all()
    assert (squares[grid == 1] == wall).all()
    assert (grid == 0).any() and (grid == 1).any()


def test_default_scheme_unchanged_and_stdout(catalog_db: Path, tmp_path: Path) -> None:
    grid = grid_of(catalog_db, 2)
    ours = run("render", "2", "--png", "-", "--block", "2", "--db", str(catalog_db))
    assert ours.exit_code == 0
    with Image.open(io.BytesIO(ours.stdout_bytes)) as image:
        assert image.mode == "L"
        squares = blocks(np.asarray(image)[..., None], 2, grid.shape)
    assert (squares[grid == 1] == render.WALL_SHADE).all()
    assert (squares[grid == 0] == render.FLOOR_SHADE).all()
    original = run(
        "render",
        "2",
        "--png",
        "-",
        "--block",
        "2",
        "--scheme",
        "getmapimage",
        "--db",
        str(catalog_db),
    )
    with Image.open(io.BytesIO(original.stdout_bytes)) as image:
        alpha = np.asarray(image)[::2, ::2, 3]
    assert np.array_equal(alpha == 255, grid == 0)


def test_scheme_choices_are_the_library_schemes() -> None:
    option = next(p for p in render_command.params if p.name == "scheme")
    assert tuple(option.type.choices) == render.SCHEMES  # type: ignore[attr-defined]


def test_scheme_without_png_is_refused(catalog_db: Path) -> None:
    done = run("render", "1", "--scheme", "getmapimage", "--db", str(catalog_db))
    assert done.exit_code == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [
        "error: cli render: --scheme sets the PNG's colours: add --png PATH (or --png -)"
    ]
    bad = run("render", "1", "--png", "-", "--scheme", "sepia", "--db", str(catalog_db))
    assert bad.exit_code == 2 and "'sepia' is not one of" in bad.stderr


def test_render_without_outputs_prints_the_ascii_map(catalog_db: Path) -> None:
    for map_id in (1, 2):
        done = run("render", str(map_id), "--db", str(catalog_db))
        assert done.exit_code == 0, done.output
        assert done.stderr == ""
        assert np.array_equal(render.from_ascii(done.stdout), grid_of(catalog_db, map_id))
        explicit = run("render", str(map_id), "--ascii", "-", "--db", str(catalog_db))
        assert done.stdout == explicit.stdout


def test_the_real_command_prints_the_map(catalog_db: Path) -> None:
    script = Path(sys.executable).parent / "entityworks"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "entityworks"]
    done = subprocess.run(
        [*command, "render", "2", "--db", str(catalog_db)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0 and done.stderr == ""
    lines = done.stdout.splitlines()
    assert len(lines) == 21 and all(len(line) == 40 for line in lines)  # cellular: 40x21
    assert np.array_equal(render.from_ascii(done.stdout), grid_of(catalog_db, 2))

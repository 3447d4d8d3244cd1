"""What the plugin draws, checked without Datasette: the picture cache and the HTML pieces."""

from __future__ import annotations

import io
import json
import re
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from entityworks.web import _pictures as pictures
from generators import sudoku
from generators.maps import cellular, render


def test_cache_is_bounded_by_items_and_bytes_and_evicts_the_least_recent() -> None:
    cache = pictures.PictureCache(max_items=3, max_bytes=100)
    calls: list[str] = []

    def make(name: str, size: int):
        def render_it() -> bytes:
            calls.append(name)
            return name.encode() * size

        return render_it

    for name in "abc":
        cache.get_or_render((name,), make(name, 10))
    cache.get_or_render(("a",), make("a", 10))  # a is now the most recent
    cache.get_or_render(("d",), make("d", 10))  # evicts b, the least recent
    assert calls == ["a", "b", "c", "d"] and len(cache) == 3
    cache.get_or_render(("b",), make("b", 10))
    assert calls[-1] == "b"  # b had to be rendered again
    cache.get_or_render(("e",), make("e", 90))  # 90 bytes: only e and one more can stay
    assert cache.size <= 100 and len(cache) <= 2
    big = cache.get_or_render(("f",), make("f", 500))  # larger than the cache: served, not kept
    assert len(big) == 500 and ("f",) not in cache._items and cache.size <= 100
    assert cache.hits == 1 and cache.misses == 7
    with pytest.raises(ValueError):
        pictures.PictureCache(max_items=0)


def test_cache_renders_once_per_key_under_threads() -> None:
    cache = pictures.PictureCache()
    done = []

    def work() -> None:
        for i in range(200):
            done.append(cache.get_or_render((i % 20,), lambda i=i: str(i % 20).encode()))

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(done) == 800 and len(cache) == 20
    assert all(cache.get_or_render((k,), lambda: b"x") == str(k).encode() for k in range(20))


def test_digest_changes_with_any_cell_or_the_shape() -> None:
    grid = cellular.generate(seed=1).grid
    other = grid.copy()
    other[3, 4] ^= 1
    assert pictures.grid_digest(grid) == pictures.grid_digest(grid.copy())
    assert pictures.grid_digest(grid) != pictures.grid_digest(other)
    assert pictures.grid_digest(np.zeros((2, 6), np.uint8)) != pictures.grid_digest(
        np.zeros((3, 4), np.uint8)
    )


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 700), st.integers(1, 700), st.integers(8, 256))
def test_thumbnail_size_from_the_row_matches_the_picture(width: int, height: int, box: int) -> None:
    grid = np.zeros((height, width), dtype=np.uint8)
    with Image.open(io.BytesIO(pictures.thumbnail_png(grid, box))) as image:
        assert image.size == pictures.thumbnail_size(width, height, box)
    w, h = pictures.display_size(width, height, box)
    assert max(w, h) == box and min(w, h) >= 1
    assert abs(w * height - h * width) <= width + height  # proportions, up to rounding


def test_full_png_is_what_render_draws_and_stays_bounded() -> None:
    grid = cellular.generate(seed=4).grid
    with Image.open(io.BytesIO(pictures.full_png(grid, 5, [(1, 10)]))) as image:
        assert np.array_equal(
            np.asarray(image), np.asarray(render.to_image(grid, 5, placements=[(1, 10)]))
        )
    huge = np.zeros((10, 2000), dtype=np.uint8)
    with Image.open(io.BytesIO(pictures.full_png(huge, 32))) as image:
        assert image.size == (4000, 20)  # block cut to 2 so no side passes MAX_SIDE


def test_sudoku_grid_marks_clues_and_solved_digits() -> None:
    puzzle = sudoku.generate(30, seed=5).puzzle
    solution = sudoku.solve(puzzle).grid
    shown = pictures.sudoku_html(puzzle, solution)
    cells = re.findall(r'<td class="([^"]*)">(\d?)</td>', shown)
    assert len(cells) == 81
    assert "".join(d for _, d in cells) == solution
    clue_cells = [i for i, (cls, _) in enumerate(cells) if "ew-clue" in cls]
    assert clue_cells == [i for i, ch in enumerate(puzzle) if ch != "0"]
    assert all("ew-solved" in cls for i, (cls, _) in enumerate(cells) if puzzle[i] == "0")
    only = re.findall(r'<td class="([^"]*)">(\d?)</td>', pictures.sudoku_html(puzzle))
    assert "".join(d or "0" for _, d in only) == puzzle
    assert sum("ew-right" in cls for cls, _ in only) == 18  # two box edges on 9 rows
    assert pictures.sudoku_html("12") is None and pictures.sudoku_html(puzzle, "x" * 81) is None


def test_histogram_has_one_bar_per_used_byte_value() -> None:
    counts = [0] * 256
    counts[0], counts[65], counts[255] = 10, 5, 1
    svg = pictures.histogram_svg(json.dumps(counts))
    bars = re.findall(r"M([\d.]+) 64v-([\d.]+)h", svg)
    assert [float(x) for x, _ in bars] == [0.0, 65.0, 255.0]
    assert [float(h) for _, h in bars] == [64.0, 32.0, 6.4]
    assert "16 bytes, 3 distinct values" in svg
    assert pictures.histogram_svg("[1, 2]") is None and pictures.histogram_svg("nope") is None


def test_parameters_fold_into_a_summary() -> None:
    text = pictures.parameters_html(json.dumps({"width": 40, "note": "<b>"}))
    assert "<summary>2 parameters</summary>" in text and "&lt;b&gt;" in text
    assert pictures.parameters_html("[1]") is None

"""Cellular caves: the MapHandler recipe, its two update orders and the RogueBasin rule."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy import ndimage

from generators.maps import cellular, regions


def _walls_around(grid: np.ndarray, x: int, y: int, reach: int) -> int:
    """Walls in the block of side 2*reach+1 around (x, y), off-map cells counted as wall."""
    height, width = grid.shape
    total = 0
    for yy in range(y - reach, y + reach + 1):
        for xx in range(x - reach, x + reach + 1):
            inside = 0 <= xx < width and 0 <= yy < height
            total += 1 if not inside else int(grid[yy, xx])
    return total


def _reference_in_place(grid: np.ndarray, r2: bool) -> np.ndarray:
    """The MapHandler pass as literally as possible: rows, then cells, updating in place."""
    out = grid.copy()
    height, width = out.shape
    for y in range(height):
        for x in range(width):
            neighbours = _walls_around(out, x, y, 1) - int(out[y, x])
            if out[y, x] == 1:
                wall = neighbours >= 4
            else:
                wall = neighbours >= 5
            if r2 and _walls_around(out, x, y, 2) <= 2:
                wall = True
            out[y, x] = 1 if wall else 0
    return out


small_grids = arrays(
    np.uint8, st.tuples(st.integers(1, 9), st.integers(1, 9)), elements=st.integers(0, 1)
)


@settings(max_examples=120, deadline=None)
@given(grid=small_grids, r2=st.booleans())
def test_faithful_step_is_the_in_place_raster_pass(grid: np.ndarray, r2: bool) -> None:
    assert np.array_equal(cellular.step(grid, "faithful", r2=r2), _reference_in_place(grid, r2))


@settings(max_examples=120, deadline=None)
@given(grid=small_grids, r2=st.booleans())
def test_synchronous_step_matches_a_convolution(grid: np.ndarray, r2: bool) -> None:
    r1 = ndimage.convolve(grid.astype(int), np.ones((3, 3), int), mode="constant", cval=1)
    expected = r1 >= 5
    if r2:
        r2_sum = ndimage.convolve(grid.astype(int), np.ones((5, 5), int), mode="constant", cval=1)
        expected |= r2_sum <= 2
    before = grid.copy()
    assert np.array_equal(cellular.step(grid, "synchronous", r2=r2), expected.astype(np.uint8))
    assert np.array_equal(grid, before)  # the input is left alone


def test_update_order_matters() -> None:
    """The faithful pass is not the synchronous one in disguise."""
    differing = 0
    for seed in range(10):
        start = cellular.fill(seed=seed)
        differing += not np.array_equal(
            cellular.step(start, "faithful"), cellular.step(start, "synchronous")
        )
    assert differing >= 5


@pytest.mark.parametrize("blank_rows", [0, 1, 3, 4])
def test_fill_has_wall_border_and_blanked_band(blank_rows: int) -> None:
    for seed in range(20):
        grid = cellular.fill(40, 21, 40, blank_rows, seed=seed)
        assert grid.dtype == np.uint8 and grid.shape == (21, 40)
        assert grid[0].all() and grid[-1].all() and grid[:, 0].all() and grid[:, -1].all()
        band = cellular.blank_band(21, blank_rows)
        assert len(band) == blank_rows
        assert 10 in band or blank_rows == 0  # centred on height // 2
        for row in band:
            assert not grid[row, 1:-1].any()
        others = [row for row in range(1, 20) if row not in band]
        # about 40 % walls outside the band
        assert 0.25 < grid[others, 1:-1].mean() < 0.55


def test_fill_extremes() -> None:
    empty = cellular.fill(12, 9, 0, 1, seed=1)
    assert not empty[1:-1, 1:-1].any()
    full = cellular.fill(12, 9, 100, 1, seed=1)
    assert full[[1, 2, 3, 5, 6, 7], 1:-1].all()
    assert not full[4, 1:-1].any()


@pytest.mark.parametrize("mode", cellular.MODES)
@pytest.mark.parametrize("rule", cellular.RULES)
def test_generate_is_fill_then_passes(mode: str, rule: str) -> None:
    result = cellular.generate(seed=7, mode=mode, rule=rule)
    grid = cellular.fill(seed=7)
    passes = result.params["passes"]
    for index in range(passes):
        grid = cellular.step(grid, mode, r2=rule == "roguebasin" and index < 4)
    assert np.array_equal(result.grid, grid)
    assert passes == (4 if rule == "4-5" else 7)


@pytest.mark.parametrize("mode", cellular.MODES)
def test_border_stays_wall_and_results_are_consistent(mode: str) -> None:
    for seed in range(30):
        result = cellular.generate(seed=seed, mode=mode, width=30 + seed, height=15 + seed % 7)
        grid = result.grid
        assert grid[0].all() and grid[-1].all() and grid[:, 0].all() and grid[:, -1].all()
        stats = regions.region_stats(grid)
        assert (result.regions, result.largest_region) == (stats.count, stats.largest)
        assert result.open_ratio == pytest.approx(regions.open_ratio(grid))
        assert (result.width, result.height) == (30 + seed, 15 + seed % 7)


def test_horizontal_blanking_keeps_the_cave_in_one_piece() -> None:
    """The post's promise: with a 3-row band only small pockets can be cut off."""
    whole = {0: 0, 3: 0}
    for blank_rows in whole:
        for seed in range(200):
            grid = cellular.generate(seed=seed, blank_rows=blank_rows).grid
            stats = regions.region_stats(grid)
            whole[blank_rows] += stats.count == 1
            if blank_rows == 3 and stats.count > 1:
                assert np.sort(stats.sizes)[-2] <= 25
    assert whole[3] >= 190
    assert whole[3] > whole[0]


def test_roguebasin_clause_plants_pillars_in_open_space() -> None:
    open_room = np.ones((15, 15), dtype=np.uint8)
    open_room[1:-1, 1:-1] = 0
    assert cellular.step(open_room, "synchronous", r2=True)[7, 7] == 1
    for mode in cellular.MODES:
        assert not cellular.step(open_room, mode, r2=False)[3:-3, 3:-3].any()
        assert cellular.step(open_room, mode, r2=True)[3:-3, 3:-3].any()


def test_same_seed_same_map_and_params_rebuild_it() -> None:
    first = cellular.generate(seed=123, width=50, height=30, wall_percent=45, blank_rows=3)
    again = cellular.generate(seed=123, width=50, height=30, wall_percent=45, blank_rows=3)
    assert np.array_equal(first.grid, again.grid)
    other = cellular.generate(seed=124, width=50, height=30, wall_percent=45, blank_rows=3)
    assert not np.array_equal(first.grid, other.grid)
    params = json.loads(json.dumps(first.params))
    rebuilt = cellular.generate(**params, seed=first.seed)
    assert np.array_equal(rebuilt.grid, first.grid)


def test_unseeded_maps_record_a_seed_that_reproduces_them() -> None:
    result = cellular.generate()
    assert isinstance(result.seed, int)
    assert np.array_equal(cellular.generate(seed=result.seed).grid, result.grid)


def test_generator_seed_is_accepted_but_not_recorded() -> None:
    result = cellular.generate(seed=np.random.default_rng(5))
    assert result.seed is None
    assert np.array_equal(result.grid, cellular.generate(seed=np.random.default_rng(5)).grid)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"width": 2}, "width"),
        ({"height": 0}, "height"),
        ({"wall_percent": 101}, "wall_percent"),
        ({"wall_percent": 4.5}, "wall_percent"),
        ({"blank_rows": 20}, "blank_rows"),
        ({"passes": -1}, "passes"),
        ({"mode": "parallel"}, "mode"),
        ({"rule": "b3s23"}, "rule"),
        ({"seed": -3}, "seed"),
        ({"seed": True}, "seed"),
        ({"seed": "x"}, "seed"),
    ],
)
def test_bad_parameters_name_themselves(kwargs: dict, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        cellular.generate(**kwargs)

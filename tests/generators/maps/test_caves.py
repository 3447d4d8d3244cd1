"""Cave systems: the csCaveGenerator pipeline, its promises and the fast path."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import ndimage

from generators.maps import _visits, caves, regions

FOUR = np.array([[0, 1, 0], [1, 1, 1], [0, 1, 0]], dtype=bool)


def _corridor_mask(result: caves.CaveSystem) -> np.ndarray:
    mask = np.zeros(result.grid.shape, dtype=bool)
    for path in result.corridors:
        for x, y in path:
            mask[y, x] = True
    return mask


def _reference_visits(grid: np.ndarray, order: list[int], threshold: int) -> np.ndarray:
    """One visit after another on a plain 2-D array (off-map cells not counted)."""
    out = grid.copy()
    height, width = out.shape
    stride = width + 2
    for padded_index in order:
        y, x = padded_index // stride - 1, padded_index % stride - 1
        block = out[max(0, y - 1) : y + 2, max(0, x - 1) : x + 2]
        out[y, x] = 1 if int(block.sum()) > threshold else 0
    return out


def test_faithful_visits_update_one_cell_at_a_time() -> None:
    rng = np.random.default_rng(3)
    grid = _visits.random_fill(23, 17, 45, rng)
    order = np.concatenate(list(_visits._visit_chunks(np.random.default_rng(11), 23, 17, 3000)))
    first_inner = (23 + 2) + 1  # visits are offsets from the padded map's first inner cell
    expected = _reference_visits(grid, (order + first_inner).tolist(), 4)
    got = _visits.run_visits(grid, 3000, 4, np.random.default_rng(11), fast=False)
    assert np.array_equal(got, expected)


def test_fast_visits_equal_faithful_when_no_two_visits_touch() -> None:
    """The batches only differ from one-by-one where visits fall next to each other."""
    checked = 0
    for seed in range(30):
        grid = _visits.random_fill(100, 100, 45, np.random.default_rng(seed))
        order = np.concatenate(
            list(_visits._visit_chunks(np.random.default_rng(seed), 100, 100, 40))
        )
        ys, xs = order // 102, order % 102
        apart = all(
            max(abs(int(xs[i]) - int(xs[j])), abs(int(ys[i]) - int(ys[j]))) >= 2
            for i in range(len(order))
            for j in range(i)
        )
        if not apart:
            continue
        checked += 1
        slow = _visits.run_visits(grid, 40, 4, np.random.default_rng(seed), fast=False)
        fast = _visits.run_visits(grid, 40, 4, np.random.default_rng(seed), fast=True)
        assert np.array_equal(slow, fast)
    assert checked >= 10


def _reference_smooth_fill(cave: np.ndarray, passes: int, empty: int, filling: int) -> np.ndarray:
    out = cave.copy()
    height, width = out.shape

    def around(x: int, y: int) -> tuple[int, int]:
        on_map = open_ = 0
        for dx, dy in ((0, -1), (0, 1), (1, 0), (-1, 0)):
            if 0 <= x + dx < width and 0 <= y + dy < height:
                on_map += 1
                open_ += int(out[y + dy, x + dx])
        return on_map, open_

    for _ in range(passes):
        for x in range(width):
            for y in range(height):
                on_map, open_ = around(x, y)
                if out[y, x] and on_map - open_ >= empty:
                    out[y, x] = 0
    for x in range(width):
        for y in range(height):
            if not out[y, x] and around(x, y)[1] >= filling:
                out[y, x] = 1
    return out


def test_faithful_smoothing_and_filling_run_column_by_column_in_place() -> None:
    cases = [(31, 19, 55, 5, 3, 4), (3, 3, 50, 2, 1, 2), (40, 7, 45, 0, 3, 4),
             (9, 33, 60, 3, 2, 3), (25, 25, 45, 7, 5, 0), (17, 12, 30, 1, 0, 5)]  # fmt: skip
    for seed, (width, height, prob, passes, empty, filling) in enumerate(cases * 3):
        cave = _visits.random_fill(width, height, prob, np.random.default_rng(seed))
        expected = _reference_smooth_fill(cave, passes, empty, filling)
        got = caves._smooth_fill_faithful(cave, passes, empty, filling)
        assert got.dtype == np.uint8 and got.flags.c_contiguous
        assert np.array_equal(got, expected), (width, height, passes, empty, filling)


@pytest.mark.parametrize("mode", caves.MODES)
def test_caves_respect_size_limits_and_features_match_cells(mode: str) -> None:
    for seed in range(8):
        result = caves.generate(seed=seed, mode=mode, lower_limit=20, upper_limit=400)
        corridor = _corridor_mask(result)
        assert not result.grid[corridor].any()  # corridors are dug
        rock_again = result.grid.copy()
        rock_again[corridor] = 1
        labels, count = ndimage.label(rock_again == 0, structure=FOUR)
        assert count == len(result.caves)
        sizes = sorted(np.bincount(labels.ravel())[1:].tolist())
        assert sizes == sorted(c.cells for c in result.caves)
        for cave in result.caves:
            assert 20 < cave.cells <= 400
            x, y, w, h = cave.bbox
            cx, cy = cave.centroid
            inside = labels[y : y + h, x : x + w]
            label = np.bincount(inside[inside > 0]).argmax()
            ys, xs = np.nonzero(labels == label)
            assert (xs.min(), ys.min(), xs.max() - xs.min() + 1, ys.max() - ys.min() + 1) == (
                x,
                y,
                w,
                h,
            )
            assert (cx, cy) == pytest.approx((xs.mean(), ys.mean()))
        assert [c.id for c in result.caves] == list(range(1, len(result.caves) + 1))


def test_corridors_are_orthogonal_paths_through_former_rock() -> None:
    result = caves.generate(seed=5)
    assert result.corridors
    unconnected = caves.generate(seed=5, connect=False)
    for path in result.corridors:
        for (x0, y0), (x1, y1) in zip(path, path[1:], strict=False):
            assert abs(x1 - x0) + abs(y1 - y0) == 1
        for x, y in path:
            assert unconnected.grid[y, x] == 1
    # apart from the corridors the map is the unconnected one
    assert np.array_equal(result.grid | _corridor_mask(result), unconnected.grid)


def test_connect_caves_joins_everything_on_most_seeds() -> None:
    """Issue promise: one 4-connected floor region on >= 95 % of 200 default seeds."""
    connected = 0
    for seed in range(200):
        result = caves.generate(seed=seed)
        stats = regions.region_stats(result.grid, 4)
        assert result.connected == (stats.count == 1)
        if not result.unreached:
            assert result.connected
        else:
            assert result.attempts == 100_000
        if not result.connected:
            assert result.unreached
        connected += result.connected
    assert connected >= 190


def test_breakout_is_reported() -> None:
    result = caves.generate(seed=2, breakout=3)
    assert len(result.caves) > 4
    assert result.attempts == 3
    assert not result.connected
    assert result.unreached


def test_without_connecting_there_are_no_corridors() -> None:
    result = caves.generate(seed=9, connect=False)
    assert result.corridors == [] and result.attempts == 0
    assert result.regions == len(result.caves) > 1
    assert not result.connected


def test_fast_mode_keeps_the_statistics() -> None:
    """Same open ratio and cave count within a few percent over 20 seeds."""
    stats: dict[str, tuple[float, float]] = {}
    for mode in caves.MODES:
        maps = [caves.generate(seed=seed, mode=mode, connect=False) for seed in range(20)]
        stats[mode] = (
            float(np.mean([m.open_ratio for m in maps])),
            float(np.mean([len(m.caves) for m in maps])),
        )
    (open_a, count_a), (open_b, count_b) = stats["faithful"], stats["fast"]
    assert abs(open_a - open_b) / open_a < 0.05
    assert abs(count_a - count_b) / count_a < 0.08


def test_the_original_defaults_are_the_defaults() -> None:
    result = caves.generate(seed=1, visits=10)
    assert result.params == {
        "width": 100,
        "height": 100,
        "close_cell_prob": 45,
        "visits": 10,
        "neighbours": 4,
        "smoothing": 5,
        "empty_neighbours": 3,
        "filling_neighbours": 4,
        "lower_limit": 16,
        "upper_limit": 500,
        "connect": True,
        "corridor_min": 2,
        "corridor_max": 5,
        "max_turns": 10,
        "corridor_space": 2,
        "breakout": 100_000,
        "mode": "faithful",
    }
    assert result.grid.shape == (100, 100) and result.grid.dtype == np.uint8


@pytest.mark.parametrize("mode", caves.MODES)
def test_same_seed_same_system_and_params_rebuild_it(mode: str) -> None:
    first = caves.generate(width=80, height=60, seed=77, mode=mode)
    again = caves.generate(width=80, height=60, seed=77, mode=mode)
    assert np.array_equal(first.grid, again.grid)
    assert first.corridors == again.corridors and first.caves == again.caves
    params = json.loads(json.dumps(first.params))
    assert np.array_equal(caves.generate(**params, seed=77).grid, first.grid)
    assert not np.array_equal(
        caves.generate(width=80, height=60, seed=78, mode=mode).grid, first.grid
    )


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"width": 1}, "width"),
        ({"close_cell_prob": -1}, "close_cell_prob"),
        ({"visits": -5}, "visits"),
        ({"neighbours": 10}, "neighbours"),
        ({"upper_limit": 3}, "upper_limit"),
        ({"corridor_min": 0}, "corridor_min"),
        ({"corridor_max": 2}, "corridor_max"),
        ({"connect": 1}, "connect"),
        ({"breakout": -1}, "breakout"),
        ({"mode": "quick"}, "mode"),
    ],
)
def test_bad_parameters_name_themselves(kwargs: dict, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        caves.generate(**kwargs)


# -- connect(): ConnectCaves on any grid ------------------------------------------------------


def _split_cellular(seed: int) -> np.ndarray:
    """A cellular cave cut into pieces by two solid walls: several caves to join."""
    from generators.maps import cellular

    grid = cellular.generate(width=70, height=40, wall_percent=45, seed=seed).grid.copy()
    grid[:, 22:24] = 1
    grid[:, 46:48] = 1
    return grid


def test_connect_joins_the_caves_of_a_cellular_map() -> None:
    joined_maps = 0
    for seed in range(30):
        grid = _split_cellular(seed)
        before = grid.copy()
        result = caves.connect(grid, seed=seed)
        assert np.array_equal(grid, before)  # the input is left alone
        assert len(result.caves) == regions.region_count(grid, 4)
        # corridors run through former wall, cell by orthogonal cell, and nothing else moved
        mask = np.zeros(grid.shape, dtype=bool)
        for path in result.corridors:
            for (x0, y0), (x1, y1) in zip(path, path[1:], strict=False):
                assert abs(x1 - x0) + abs(y1 - y0) == 1
            for x, y in path:
                assert grid[y, x] == 1
                mask[y, x] = True
        assert np.array_equal(result.grid, np.where(mask, 0, grid))
        assert result.connected == regions.is_connected(result.grid, 4)
        assert result.connected == (not result.unreached)
        joined_maps += result.connected
    assert joined_maps >= 27


def test_connect_is_seeded_and_records_its_parameters() -> None:
    grid = caves.generate(seed=11, connect=False).grid
    first = caves.connect(grid, corridor_space=1, seed=4)
    again = caves.connect(grid, **json.loads(json.dumps(first.params)), seed=4)
    assert np.array_equal(first.grid, again.grid) and first.corridors == again.corridors
    other = caves.connect(grid, corridor_space=1, seed=5)
    assert first.corridors != other.corridors
    assert first.seed == 4 and caves.connect(grid).seed is not None


def test_connect_leaves_small_regions_out_with_lower_limit() -> None:
    grid = np.ones((30, 60), dtype=np.uint8)
    grid[5:15, 5:15] = 0  # 100 cells
    grid[5:15, 40:50] = 0  # 100 cells
    grid[25, 28] = 0  # a single-cell pocket
    result = caves.connect(grid, lower_limit=1, corridor_space=0, seed=1)
    assert [c.cells for c in result.caves] == [100, 100]
    assert result.unreached == []
    labels, _ = regions.label(result.grid, 4)
    assert labels[5, 5] == labels[5, 40] != labels[25, 28]  # both rooms joined, pocket not


def test_connect_reports_a_breakout_and_a_map_with_one_cave() -> None:
    grid = _split_cellular(3)
    stuck = caves.connect(grid, breakout=0, seed=1)
    assert stuck.attempts == 0 and not stuck.connected and stuck.corridors == []
    assert stuck.unreached and len(stuck.unreached) == len(stuck.caves) - 1
    single = np.ones((10, 10), dtype=np.uint8)
    single[2:8, 2:8] = 0
    alone = caves.connect(single, seed=1)
    assert alone.connected and alone.corridors == [] and alone.attempts == 0


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"corridor_max": 2}, "corridor_max"),
        ({"breakout": -1}, "breakout"),
        ({"lower_limit": -2}, "lower_limit"),
        ({"seed": -1}, "seed"),
    ],
)
def test_connect_names_a_bad_parameter(kwargs: dict, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        caves.connect(np.ones((5, 5), dtype=np.uint8), **kwargs)
    with pytest.raises(ValueError, match="grid"):
        caves.connect(np.full((4, 4), 2))

"""Stairs and items: clear room around each pick, every pick reachable from the others."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from generators.maps import caves, cellular, placement, regions


def _clear_by_hand(grid: np.ndarray, x: int, y: int, r: int) -> bool:
    height, width = grid.shape
    for dy in range(-r, r + 1):
        for dx in range(-r, r + 1):
            if dx * dx + dy * dy > r * r:
                continue
            cx, cy = x + dx, y + dy
            if not (0 <= cx < width and 0 <= cy < height) or grid[cy, cx]:
                return False
    return True


@settings(max_examples=60, deadline=None)
@given(
    arrays(np.uint8, st.tuples(st.integers(1, 14), st.integers(1, 14)), elements=st.integers(0, 1)),
    st.integers(0, 3),
)
def test_clear_cells_matches_a_cell_by_cell_check(grid: np.ndarray, r: int) -> None:
    mask = placement.clear_cells(grid, r)
    height, width = grid.shape
    for y in range(height):
        for x in range(width):
            assert mask[y, x] == _clear_by_hand(grid, x, y, r)


@pytest.mark.parametrize("clearance", [0, 1, 2, 3])
def test_picks_have_room_and_reach_each_other(clearance: int) -> None:
    for seed in range(10):
        grid = cellular.generate(width=60, height=30, seed=seed).grid
        result = placement.place(grid, 4, clearance, seed=seed)
        assert len(result.points) == len(set(result.points)) == 4
        reach = regions.reachable(grid, result.points[0])
        for x, y in result.points:
            assert _clear_by_hand(grid, x, y, clearance)
            assert reach[y, x]


def test_the_region_with_most_room_is_used_even_if_not_first() -> None:
    grid = np.ones((20, 40), dtype=np.uint8)
    grid[2:5, 2:5] = 0  # a small room first in row order
    grid[8:18, 10:38] = 0  # a big hall
    for seed in range(20):
        points = placement.place(grid, 3, 1, seed=seed).points
        assert all(8 <= y < 18 and 10 <= x < 38 for x, y in points)


def test_same_seed_same_points_and_min_distance_spreads_them() -> None:
    grid = caves.generate(seed=2013).grid
    first = placement.place(grid, 5, 2, seed=9)
    assert first.points == placement.place(grid, 5, 2, seed=9).points
    assert first.seed == 9 and first.params == {"count": 5, "clearance": 2, "min_distance": 0}
    apart = placement.place(grid, 5, 2, seed=9, min_distance=15).points
    for (ax, ay), (bx, by) in itertools.combinations(apart, 2):
        assert (ax - bx) ** 2 + (ay - by) ** 2 >= 15 * 15


def test_impossible_requests_say_how_many_fit() -> None:
    grid = np.ones((9, 9), dtype=np.uint8)
    grid[1:8, 1:8] = 0  # 7x7 room: radius 3 fits at its centre only
    assert placement.place(grid, 1, 3, seed=1).points == [(4, 4)]
    with pytest.raises(ValueError, match="only 1 cell"):
        placement.place(grid, 2, 3, seed=1)
    with pytest.raises(ValueError, match="only 0 cell"):
        placement.place(np.ones((5, 5), dtype=np.uint8), 1, 0)
    with pytest.raises(ValueError, match="at least 9 cell"):
        placement.place(grid, 2, 0, seed=1, min_distance=9)  # corners are 8.5 cells apart
    with pytest.raises(ValueError, match="count"):
        placement.place(grid, 0, 1)
    with pytest.raises(ValueError, match="clearance"):
        placement.place(grid, 1, -1)

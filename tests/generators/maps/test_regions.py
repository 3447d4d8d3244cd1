"""Connected-region helpers, checked against a plain breadth-first flood fill."""

from __future__ import annotations

from collections import deque

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from generators.maps import regions


def _bfs_regions(grid: np.ndarray, connectivity: int) -> list[int]:
    """Sizes of the floor regions by breadth-first search (the test's own oracle)."""
    height, width = grid.shape
    steps = [(0, 1), (0, -1), (1, 0), (-1, 0)]
    if connectivity == 8:
        steps += [(1, 1), (1, -1), (-1, 1), (-1, -1)]
    seen = np.zeros(grid.shape, dtype=bool)
    sizes = []
    for y in range(height):
        for x in range(width):
            if grid[y, x] or seen[y, x]:
                continue
            seen[y, x] = True
            queue = deque([(x, y)])
            size = 0
            while queue:
                cx, cy = queue.popleft()
                size += 1
                for dx, dy in steps:
                    nx, ny = cx + dx, cy + dy
                    if 0 <= nx < width and 0 <= ny < height and not grid[ny, nx]:
                        if not seen[ny, nx]:
                            seen[ny, nx] = True
                            queue.append((nx, ny))
            sizes.append(size)
    return sizes


grids = arrays(
    np.uint8, st.tuples(st.integers(1, 12), st.integers(1, 12)), elements=st.integers(0, 1)
)


@settings(max_examples=150, deadline=None)
@given(grid=grids, connectivity=st.sampled_from([4, 8]))
def test_region_stats_match_flood_fill(grid: np.ndarray, connectivity: int) -> None:
    expected = _bfs_regions(grid, connectivity)
    stats = regions.region_stats(grid, connectivity)
    assert stats.count == len(expected)
    assert stats.largest == (max(expected) if expected else 0)
    assert sorted(stats.sizes.tolist()) == sorted(expected)
    # labels: 0 exactly on walls, every floor cell labelled 1..count
    assert np.array_equal(stats.labels == 0, grid == 1)
    assert stats.connected == (len(expected) == 1)
    assert regions.is_connected(grid, connectivity) == (len(expected) == 1)


def test_diagonal_neighbours_join_only_with_8_connectivity() -> None:
    grid = np.array([[0, 1], [1, 0]], dtype=np.uint8)
    assert regions.region_count(grid, 4) == 2
    assert regions.region_count(grid, 8) == 1


def test_reachable_marks_only_the_start_region() -> None:
    grid = np.array(
        [
            [0, 0, 1, 0],
            [1, 0, 1, 0],
            [1, 1, 1, 0],
        ],
        dtype=np.uint8,
    )
    mask = regions.reachable(grid, (0, 0))
    assert mask.tolist() == [
        [True, True, False, False],
        [False, True, False, False],
        [False, False, False, False],
    ]
    with pytest.raises(ValueError, match="wall"):
        regions.reachable(grid, (2, 0))
    with pytest.raises(ValueError, match="outside"):
        regions.reachable(grid, (4, 0))


def test_open_ratio_and_empty_map() -> None:
    grid = np.ones((4, 5), dtype=np.uint8)
    grid[1, 1:4] = 0
    assert regions.open_ratio(grid) == pytest.approx(3 / 20)
    stats = regions.region_stats(np.ones((3, 3), dtype=np.uint8))
    assert (stats.count, stats.largest, stats.connected) == (0, 0, False)


@pytest.mark.parametrize(
    ("grid", "message"),
    [
        (np.zeros((2, 2, 2), dtype=np.uint8), "2-D"),
        (np.full((2, 2), 2, dtype=np.uint8), "only 0"),
        (np.zeros((2, 2), dtype=float), "integers"),
    ],
)
def test_bad_grids_are_refused(grid: np.ndarray, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        regions.region_stats(grid)


def test_bad_connectivity_is_refused() -> None:
    with pytest.raises(ValueError, match="connectivity"):
        regions.label(np.zeros((2, 2), dtype=np.uint8), connectivity=6)

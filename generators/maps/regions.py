"""Connected regions of a map, shared by every generator and by the catalog's statistics.

A *region* is a maximal set of floor cells (value 0) joined through 4-neighbours
(orthogonal steps only, the way a roguelike hero walks in the cave and dungeon posts) or
through 8-neighbours (diagonal steps allowed). Labelling is done by
``scipy.ndimage.label`` so it costs one C pass instead of the recursive flood fill of the
originals, which overflows the stack on large caves.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import ndimage

from generators._checks import check_grid

_STRUCTURES = {
    4: np.array([[0, 1, 0], [1, 1, 1], [0, 1, 0]], dtype=bool),
    8: np.ones((3, 3), dtype=bool),
}


class MapShape:
    """``width`` and ``height`` read off ``grid``: shared by every map result dataclass."""

    grid: np.ndarray

    @property
    def width(self) -> int:
        return int(self.grid.shape[1])

    @property
    def height(self) -> int:
        return int(self.grid.shape[0])


@dataclass(frozen=True)
class RegionStats:
    """Region summary of one map: what a catalog row stores, plus the label image."""

    count: int
    largest: int
    labels: np.ndarray
    sizes: np.ndarray
    connectivity: int

    @property
    def connected(self) -> bool:
        """True when all floor forms exactly one region."""
        return self.count == 1


def _structure(connectivity: int) -> np.ndarray:
    if connectivity not in _STRUCTURES:
        raise ValueError(f"connectivity must be 4 or 8, got {connectivity!r}")
    return _STRUCTURES[connectivity]


def label(grid: np.ndarray, connectivity: int = 4, value: int = 0) -> tuple[np.ndarray, int]:
    """Label the cells equal to ``value`` (floor by default).

    Returns ``(labels, count)``: ``labels`` is an ``int32`` array, 0 outside the regions,
    1..count inside, numbered in row-major order of each region's first cell.
    """
    mask = check_grid(grid) == value
    labels, count = ndimage.label(mask, structure=_structure(connectivity))
    return labels.astype(np.int32, copy=False), int(count)


def region_stats(grid: np.ndarray, connectivity: int = 4) -> RegionStats:
    """Count floor regions, measure the largest and return the labels (catalog stats)."""
    labels, count = label(grid, connectivity)
    sizes = np.bincount(labels.ravel(), minlength=count + 1)[1:].astype(np.int64)
    largest = int(sizes.max()) if count else 0
    return RegionStats(count, largest, labels, sizes, connectivity)


def region_count(grid: np.ndarray, connectivity: int = 4) -> int:
    """Number of floor regions."""
    return label(grid, connectivity)[1]


def is_connected(grid: np.ndarray, connectivity: int = 4) -> bool:
    """True when the floor is a single region (a map without floor is not connected)."""
    return region_count(grid, connectivity) == 1


def reachable(grid: np.ndarray, start: tuple[int, int], connectivity: int = 4) -> np.ndarray:
    """Boolean mask of the floor cells reachable from ``start`` = ``(x, y)``.

    Raises ``ValueError`` when ``start`` lies outside the map or on a wall.
    """
    array = check_grid(grid)
    x, y = start
    height, width = array.shape
    if not (0 <= x < width and 0 <= y < height):
        raise ValueError(f"start {start!r} is outside the {width}x{height} map")
    if array[y, x] != 0:
        raise ValueError(f"start {start!r} is a wall")
    labels, _ = label(array, connectivity)
    region: np.ndarray = labels == labels[y, x]
    return region


def open_ratio(grid: np.ndarray) -> float:
    """Share of floor cells, 0.0 .. 1.0."""
    array = check_grid(grid)
    return float(np.count_nonzero(array == 0)) / array.size

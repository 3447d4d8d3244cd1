"""Where to put stairs and items: floor cells with room around them, reachable from each other.

The *MapHandler* post (seed 001) ends on a rule for must-find objects such as stairwells: a
cellular cave can keep a tiny pocket that the automaton never opened up, so only place
such an object where a radius of 2-3 cells around it is clear of walls.
``place(grid, count, clearance, seed)`` applies that rule and one more that the post leaves
implicit: all the picked cells lie in the same 4-connected floor region, so a player can
walk from any of them to any other.

A cell qualifies when every cell within Euclidean distance ``clearance`` of it
(``dx*dx + dy*dy <= clearance**2``) is floor on the map (cells off the map count as
wall). Among the regions holding at least ``count`` qualifying cells the one with the
most of them is used; within it the cells are drawn uniformly without replacement
(``min_distance`` > 0 keeps the picks that far apart, in cells, e.g. to spread up and down
stairs: each drawn cell too close to an earlier pick is skipped, a greedy rule that can
give up on a tight request another order would satisfy). Without a region that can hold
them all, a ``ValueError`` says how many fit; a clearance whose disk is wider than the map is
refused before any work.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import ndimage

from generators._checks import check_grid, check_int
from generators._seeds import SeedLike, make_rng
from generators.maps.regions import label

Point = tuple[int, int]


@dataclass(frozen=True)
class Placement:
    """Cells picked by :func:`place`, in draw order, and how to pick them again."""

    points: list[Point]
    seed: int | None
    params: dict[str, Any]
    candidates: int


def _disk(radius: int) -> np.ndarray:
    span = np.arange(-radius, radius + 1)
    return (span[:, None] ** 2 + span[None, :] ** 2) <= radius * radius


def _fits(shape: tuple[int, ...], clearance: int) -> bool:
    """Whether a disk of radius ``clearance`` (``2 * clearance + 1`` cells across) fits in a
    map of ``shape`` at all: cells off the map count as wall, so a larger one never does."""
    return 2 * clearance + 1 <= min(shape)


def clear_cells(grid: np.ndarray, clearance: int) -> np.ndarray:
    """Boolean mask of the floor cells whose ``clearance`` disk holds only floor."""
    cells = check_grid(grid)
    clearance = check_int("clearance", clearance, 0)
    floor: np.ndarray = cells == 0
    if clearance == 0:
        return floor
    if not _fits(cells.shape, clearance):  # known without building the disk (its side
        return np.zeros(cells.shape, dtype=bool)  # squared: 2 GB for a radius of 16,000)
    kept: np.ndarray = ndimage.binary_erosion(floor, structure=_disk(clearance), border_value=0)
    return kept


def place(
    grid: np.ndarray,
    count: int,
    clearance: int = 2,
    seed: SeedLike = None,
    *,
    min_distance: int = 0,
) -> Placement:
    """Pick ``count`` mutually reachable floor cells with ``clearance`` cells of floor around.

    Returns a :class:`Placement` whose ``points`` are ``(x, y)`` pairs; the same grid and
    seed give the same points.
    """
    cells = check_grid(grid)
    count = check_int("count", count, 1)
    clearance = check_int("clearance", clearance, 0)
    min_distance = check_int("min_distance", min_distance, 0)
    if not _fits(cells.shape, clearance):
        height, width = cells.shape
        raise ValueError(
            f"cannot place {count} point(s) with clearance {clearance}: a clear disk of that "
            f"radius is {2 * clearance + 1} cells across, more than the {width}x{height} map "
            "holds"
        )
    rng, recorded = make_rng(seed)
    ok = clear_cells(cells, clearance)
    labels, regions = label(cells, 4)
    per_region = np.bincount(labels[ok], minlength=regions + 1)
    per_region[0] = 0
    best = int(per_region.argmax()) if regions else 0
    available = int(per_region[best]) if regions else 0
    if available < count:
        raise ValueError(
            f"cannot place {count} point(s) with clearance {clearance}: the best floor region "
            f"has only {available} cell(s) with that much room"
        )
    ys, xs = np.nonzero(ok & (labels == best))
    order = rng.permutation(len(xs))
    chosen: list[Point] = []
    limit = min_distance * min_distance
    for i in order.tolist():
        x, y = int(xs[i]), int(ys[i])
        if limit and any((x - cx) ** 2 + (y - cy) ** 2 < limit for cx, cy in chosen):
            continue
        chosen.append((x, y))
        if len(chosen) == count:
            break
    if len(chosen) < count:
        raise ValueError(
            f"cannot place {count} point(s) with clearance {clearance} at least "
            f"{min_distance} cell(s) apart: only {len(chosen)} fit"
        )
    params = {"count": count, "clearance": clearance, "min_distance": min_distance}
    return Placement(chosen, recorded, params, available)


__all__ = ["Placement", "clear_cells", "place"]

"""Islands and labyrinths: csIslandMaze's visit rule and its fast path."""

from __future__ import annotations

import json

import numpy as np
import pytest

from generators.maps import _visits, islands, regions


def test_rule_direction_island_versus_labyrinth() -> None:
    # neighbours=9 can never be exceeded, so every visited cell takes the "else" branch:
    # opened on an island map, closed on a labyrinth map. 5000 visits on 100 cells
    # leave no cell unvisited (chance about e**-50).
    island = islands.generate(10, 10, close_cell_prob=50, neighbours=9, visits=5000, seed=1)
    maze = islands.generate(
        10, 10, close_cell_prob=50, island=False, neighbours=9, visits=5000, seed=1
    )
    assert not island.grid.any()
    assert maze.grid.all()


def test_visited_count_includes_the_cell_and_skips_the_edge(monkeypatch) -> None:
    """A lone closed corner cell has a 3x3 count of 1: kept at threshold 0, opened at 1."""
    grid = np.zeros((5, 5), dtype=np.uint8)
    grid[0, 0] = 1
    corner = 0  # (0, 0): visits are offsets from the first inner cell of the padded map
    monkeypatch.setattr(_visits, "_visit_chunks", lambda rng, w, h, n: iter([np.array([corner])]))
    rng = np.random.default_rng(0)
    stays = _visits.run_visits(grid, 1, 0, rng, fast=False)
    opens = _visits.run_visits(grid, 1, 1, rng, fast=False)
    flips = _visits.run_visits(grid, 1, 0, rng, fast=False, invert=True)
    batched = _visits.run_visits(grid, 1, 0, rng, fast=True)
    assert stays[0, 0] == 1 and opens[0, 0] == 0 and flips[0, 0] == 0 and batched[0, 0] == 1
    assert stays.sum() == 1 and opens.sum() == 0


def test_island_and_labyrinth_look_different() -> None:
    island = [islands.generate(seed=s) for s in range(5)]
    maze = [islands.generate(seed=s, island=False) for s in range(5)]
    # islands: few large open seas; labyrinths: hundreds of small pockets, about half open
    assert max(m.regions for m in island) < 30
    assert min(m.regions for m in maze) > 150
    assert all(0.6 < m.open_ratio < 0.85 for m in island)
    assert all(0.4 < m.open_ratio < 0.6 for m in maze)


@pytest.mark.parametrize("island", [True, False])
def test_fast_mode_keeps_the_statistics(island: bool) -> None:
    stats = {}
    for mode in islands.MODES:
        maps = [islands.generate(seed=s, island=island, mode=mode) for s in range(20)]
        stats[mode] = (
            float(np.mean([m.open_ratio for m in maps])),
            float(np.mean([m.regions for m in maps])),
        )
    (open_a, regions_a), (open_b, regions_b) = stats["faithful"], stats["fast"]
    assert abs(open_a - open_b) / open_a < 0.03
    assert abs(regions_a - regions_b) <= max(1.5, 0.08 * regions_a)


def test_results_are_consistent_and_reproducible() -> None:
    first = islands.generate(width=120, height=70, seed=31, island=False)
    assert first.grid.shape == (70, 120)
    stats = regions.region_stats(first.grid)
    assert (first.regions, first.largest_region) == (stats.count, stats.largest)
    params = json.loads(json.dumps(first.params))
    assert np.array_equal(islands.generate(**params, seed=31).grid, first.grid)
    assert not np.array_equal(islands.generate(**params, seed=32).grid, first.grid)
    assert params == {
        "width": 120,
        "height": 70,
        "close_cell_prob": 45,
        "island": False,
        "neighbours": 4,
        "visits": 50_000,
        "mode": "faithful",
    }


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"width": 0}, "width"),
        ({"close_cell_prob": 200}, "close_cell_prob"),
        ({"island": "yes"}, "island"),
        ({"neighbours": -1}, "neighbours"),
        ({"visits": 1.5}, "visits"),
        ({"mode": "turbo"}, "mode"),
    ],
)
def test_bad_parameters_name_themselves(kwargs: dict, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        islands.generate(**kwargs)

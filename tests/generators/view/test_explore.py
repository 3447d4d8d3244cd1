"""The stateful FOV API: a player that moves, sees and remembers (seed 003's FOVRecurse)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generators.maps import caves, cellular, render
from generators.view import fov
from generators.view.explore import STEPS, Explorer

ROOMS = render.from_ascii("##########\n#....#...#\n#....#...#\n#........#\n##########")


def test_fov_module_re_exports_the_class() -> None:
    assert fov.Explorer is Explorer


def test_view_is_fov_visible_and_memory_accumulates() -> None:
    walker = Explorer(ROOMS, (1, 1), radius=20)
    assert walker.position == (1, 1)
    assert np.array_equal(walker.visible, fov.visible(ROOMS, (1, 1), 20))
    assert not walker.visible[1, 7]  # the right room is behind the wall
    assert walker.explored == set(walker.visible_points)
    first_view = set(walker.visible_points)
    for _ in range(6):
        assert walker.move(1, 1) or walker.move(1, 0)
    assert walker.position[0] >= 6
    assert walker.visible[1, 7]
    assert walker.explored >= first_view | set(walker.visible_points)
    # what is remembered but not seen now is exactly explored minus visible
    assert np.array_equal(walker.remembered, walker.explored_mask & ~walker.visible)


def test_walls_and_the_edge_refuse_a_step() -> None:
    walker = Explorer(ROOMS, (4, 1))
    before = walker.visible.copy()
    assert not walker.move(1, 0)  # (5, 1) is wall
    assert not walker.move(0, -1)  # (4, 0) is wall
    assert walker.position == (4, 1) and np.array_equal(walker.visible, before)
    assert walker.move(0, 1) and walker.position == (4, 2)
    assert walker.move(0, 0) and walker.position == (4, 2)
    with pytest.raises(ValueError, match="dx must be <= 1"):
        walker.move(2, 0)


def test_radius_and_symmetric_options_recompute_the_view() -> None:
    grid = caves.generate(seed=2013).grid
    walker = Explorer(grid, (54, 22), radius=15, symmetric=False)
    assert np.array_equal(walker.visible, fov.visible(grid, (54, 22), 15))
    walker.symmetric = True
    assert np.array_equal(walker.visible, fov.visible(grid, (54, 22), 15, symmetric=True))
    walker.radius = 3
    assert np.array_equal(walker.visible, fov.visible(grid, (54, 22), 3, symmetric=True))
    walker.radius = None
    assert walker.visible.sum() >= fov.visible(grid, (54, 22), 15, symmetric=True).sum()


def test_bad_starts_are_refused() -> None:
    with pytest.raises(ValueError, match="is a wall"):
        Explorer(ROOMS, (0, 0))
    with pytest.raises(ValueError, match="outside the 10x5 map"):
        Explorer(ROOMS, (10, 1))
    with pytest.raises(ValueError, match="radius"):
        Explorer(ROOMS, (1, 1), radius=-1)
    walker = Explorer(ROOMS, (1, 1))
    with pytest.raises(ValueError, match="is a wall"):
        walker.teleport((5, 1))
    walker.teleport((7, 2))
    assert walker.position == (7, 2)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.sampled_from(sorted(STEPS)), max_size=60), st.integers(0, 50))
def test_random_walks_stay_on_floor_and_never_forget(steps: list, seed: int) -> None:
    grid = cellular.generate(width=40, height=30, seed=seed).grid
    start = tuple(int(v) for v in np.argwhere(grid == 0)[0][::-1])
    walker = Explorer(grid, start, radius=6)
    seen = walker.explored_mask.copy()
    for dx, dy in steps:
        x, y = walker.position
        moved = walker.move(dx, dy)
        assert moved == (
            grid[y + dy, x + dx] == 0 if 0 <= x + dx < 40 and 0 <= y + dy < 30 else False
        )
        x, y = walker.position
        assert grid[y, x] == 0 and walker.visible[y, x]
        assert (walker.explored_mask >= seen).all()  # memory only grows
        seen = walker.explored_mask.copy()
    assert walker.explored == {(int(x), int(y)) for y, x in np.argwhere(seen)}


def test_a_copied_explorer_walks_on_its_own() -> None:
    import copy

    walker = Explorer(ROOMS, (1, 1), radius=20)
    twin = copy.deepcopy(walker)
    assert np.array_equal(twin.visible, walker.visible) and twin.explored == walker.explored
    for _ in range(6):
        assert twin.move(1, 1) or twin.move(1, 0)
    assert np.array_equal(walker.visible, fov.visible(ROOMS, (1, 1), 20))
    assert np.array_equal(twin.visible, fov.visible(ROOMS, twin.position, 20))
    assert walker.position == (1, 1) and twin.explored > walker.explored

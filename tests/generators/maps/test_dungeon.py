"""Rooms and corridors: the csMapbuilder loop with the size it is asked for."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from generators.maps import dungeon, regions


def _gap(a: dungeon.Room, b: dungeon.Room) -> int:
    """Wall cells between two rooms along the axis where they are furthest apart."""
    gap_x = max(b.x - (a.x + a.width), a.x - (b.x + b.width))
    gap_y = max(b.y - (a.y + a.height), a.y - (b.y + b.height))
    return max(gap_x, gap_y)


def _check_layout(result: dungeon.Dungeon) -> None:
    params = result.params
    grid = result.grid
    height, width = grid.shape
    assert (width, height) == (params["width"], params["height"])
    painted = np.zeros(grid.shape, dtype=bool)
    for room in result.rooms:
        assert params["room_min_width"] <= room.width <= params["room_max_width"]
        assert params["room_min_height"] <= room.height <= params["room_max_height"]
        assert 0 < room.x and room.x + room.width < width
        assert 0 < room.y and room.y + room.height < height
        painted[room.y : room.y + room.height, room.x : room.x + room.width] = True
    for a, b in itertools.combinations(result.rooms, 2):
        assert _gap(a, b) >= params["room_distance"], (a, b)  # never overlap, keep apart
    # the positions are the same corridors, cell by cell, as indices into grid.ravel()
    assert [
        [divmod(p, width)[::-1] for p in path] for path in result.corridor_positions
    ] == result.corridors
    assert all(type(p) is int for path in result.corridor_positions for p in path)
    for path in result.corridors:
        for (x0, y0), (x1, y1) in zip(path, path[1:], strict=False):
            assert abs(x1 - x0) + abs(y1 - y0) == 1
        for x, y in path:
            painted[y, x] = True
    # the floor is exactly the rooms plus the corridors ...
    assert np.array_equal(grid == 0, painted)
    # ... and every floor cell can be walked to from every other
    assert result.regions == 1 and regions.is_connected(grid, 4)
    assert sum(result.outcomes.values()) + result.rejected_starts == result.attempts
    assert result.success == (len(result.rooms) == params["rooms"])


@pytest.mark.parametrize("method", dungeon.METHODS)
def test_rooms_never_overlap_and_all_floor_is_reachable(method: str) -> None:
    successes = 0
    for seed in range(40):
        result = dungeon.generate(method=method, seed=seed)
        if not result.success and not result.rooms:
            continue  # the two start rooms were never linked: an empty, failed map
        _check_layout(result)
        successes += result.success
    assert successes >= 36


@pytest.mark.parametrize(("width", "height"), [(60, 45), (200, 80), (40, 120)])
def test_the_requested_size_is_honoured(width: int, height: int) -> None:
    for method in dungeon.METHODS:
        for seed in range(5):
            result = dungeon.generate(
                width=width, height=height, method=method, rooms=8, room_max=10, seed=seed
            )
            assert result.grid.shape == (height, width)
            if result.rooms:
                _check_layout(result)


def test_breakout_stops_an_impossible_request() -> None:
    result = dungeon.generate(width=40, height=40, rooms=200, breakout=120, seed=4)
    assert not result.success
    assert result.attempts == 120
    assert 1 <= len(result.rooms) < 200
    _check_layout(result)


def test_outcomes_are_counted() -> None:
    totals = dict.fromkeys(dungeon.OUTCOMES, 0)
    for seed in range(20):
        for name, count in dungeon.generate(seed=seed).outcomes.items():
            totals[name] += count
    assert set(totals) == set(dungeon.OUTCOMES)
    for common in ("invalid", "existing_corridor", "existing_room", "completed", "too_close"):
        assert totals[common] > 0, common


def test_build_probability_zero_builds_only_from_rooms() -> None:
    """With build_prob 0 every corridor starts where a straight walk out of a room ends."""
    result = dungeon.generate(build_prob=0, seed=8)
    assert len(result.corridors) > 3
    in_room = np.zeros(result.grid.shape, dtype=bool)
    for room in result.rooms:
        in_room[room.y : room.y + room.height, room.x : room.x + room.width] = True
    for path in result.corridors:
        if len(path) < 2:
            continue
        (x, y), (x1, y1) = path[0], path[1]
        dx, dy = x1 - x, y1 - y
        x, y = x - dx, y - dy  # walk back the way the start walk came
        while result.grid[y, x] == 0 and not in_room[y, x]:
            x, y = x - dx, y - dy
        assert in_room[y, x]


def test_one_start_room_is_centred() -> None:
    result = dungeon.generate(seed=3)
    first = result.rooms[0]
    assert abs((first.x + first.width / 2) - 75) <= 1
    assert abs((first.y + first.height / 2) - 75) <= 1


def test_connected_start_rooms_sit_at_opposite_ends() -> None:
    for seed in range(10):
        result = dungeon.generate(method="connected_start_rooms", seed=seed)
        if not result.rooms:
            continue
        a, b = result.rooms[:2]
        top_bottom = a.y == 1 and b.y + b.height == result.height - 1
        left_right = a.x == 1 and b.x + b.width == result.width - 1
        assert top_bottom or left_right


def test_same_seed_same_dungeon_and_params_rebuild_it() -> None:
    first = dungeon.generate(seed=21, method="connected_start_rooms")
    again = dungeon.generate(seed=21, method="connected_start_rooms")
    assert np.array_equal(first.grid, again.grid)
    assert first.rooms == again.rooms and first.outcomes == again.outcomes
    params = json.loads(json.dumps(first.params))
    assert np.array_equal(dungeon.generate(**params, seed=21).grid, first.grid)
    assert not np.array_equal(dungeon.generate(seed=22).grid, first.grid)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"method": "bsp"}, "method"),
        ({"rooms": 0}, "rooms"),
        ({"room_min": 0}, "room_min"),
        ({"room_max": 2}, "room_max"),
        ({"width": 10}, "width"),
        ({"height": 16}, "height"),
        ({"corridor_max": 3}, "corridor_max"),
        ({"build_prob": 101}, "build_prob"),
        ({"breakout": -1}, "breakout"),
        ({"max_turns": "5"}, "max_turns"),
        ({"room_min_width": 0}, "room_min_width"),
        ({"room_min_height": 4, "room_max_height": 3}, "room_max_height"),
        ({"room_max_width": 60, "width": 61}, "width"),
        ({"room_max_height": 30, "height": 31}, "height"),
    ],
)
def test_bad_parameters_name_themselves(kwargs: dict, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        dungeon.generate(**kwargs)


@pytest.mark.parametrize("method", dungeon.METHODS)
def test_room_width_and_height_have_their_own_bounds(method: str) -> None:
    """csMapbuilder's separate minimum/maximum room width and height."""
    widths: set[int] = set()
    heights: set[int] = set()
    for seed in range(12):
        result = dungeon.generate(
            width=120,
            height=90,
            method=method,
            rooms=10,
            room_min_width=9,
            room_max_width=14,
            room_min_height=2,
            room_max_height=4,
            seed=seed,
        )
        if not result.rooms:
            continue
        _check_layout(result)
        widths |= {room.width for room in result.rooms}
        heights |= {room.height for room in result.rooms}
    assert widths and widths <= set(range(9, 15)) and len(widths) > 2
    assert heights and heights <= {2, 3, 4} and len(heights) > 1


def test_room_min_and_max_still_bound_both_sides_and_old_seeds_are_unchanged() -> None:
    """Setting the per-axis bounds to the shared ones changes nothing, map for map."""
    for seed in range(6):
        shared = dungeon.generate(room_min=4, room_max=9, seed=seed)
        split = dungeon.generate(
            room_min_width=4, room_max_width=9, room_min_height=4, room_max_height=9, seed=seed
        )
        assert np.array_equal(shared.grid, split.grid) and shared.rooms == split.rooms
        assert {r.width for r in shared.rooms} <= set(range(4, 10))
        assert (shared.params["room_min_width"], shared.params["room_max_height"]) == (4, 9)


def test_a_rebuilt_map_with_separate_room_bounds_is_the_same_map() -> None:
    first = dungeon.generate(room_min_width=2, room_max_width=3, room_max_height=12, seed=5)
    params = json.loads(json.dumps(first.params))
    assert np.array_equal(dungeon.generate(**params, seed=5).grid, first.grid)


def _floor_connected(grid: np.ndarray) -> bool:
    """The oracle: SciPy labels the 4-connected floor regions; one region means connected."""
    from scipy import ndimage

    _labels, count = ndimage.label(grid == 0)
    return int(count) == 1


@pytest.mark.parametrize(
    "kwargs",
    [
        {"width": 40, "height": 40, "rooms": 100, "breakout": 50},  # far more than fits
        {"width": 60, "height": 30, "rooms": 8},  # the README's example, default room sizes
        {"width": 80, "height": 60, "rooms": 6, "room_max": 8},  # usually complete
        {"method": "connected_start_rooms", "rooms": 2, "breakout": 0},  # links often fail
    ],
)
def test_the_build_reports_its_own_outcome(kwargs: dict) -> None:
    """Rooms asked and built, connectivity (checked here with SciPy, independently) and
    success = every room built and one connected floor: a short build says so."""
    seen = set()
    for seed in range(12):
        result = dungeon.generate(**kwargs, seed=seed)
        assert result.rooms_asked == kwargs["rooms"]
        assert result.rooms_built == len(result.rooms)
        assert result.connected == _floor_connected(result.grid)
        complete = len(result.rooms) >= kwargs["rooms"] and _floor_connected(result.grid)
        assert result.success == complete
        seen.add(complete)
    if kwargs["rooms"] > 8:
        assert seen == {False}  # 100 rooms never fit on 40x40
    elif "method" in kwargs:
        assert seen == {True, False}


def test_a_short_build_is_no_success() -> None:
    """The issue's case: 100 rooms asked on 40x40 with 50 attempts build 1-3 rooms."""
    for seed in range(8):
        result = dungeon.generate(width=40, height=40, rooms=100, breakout=50, seed=seed)
        assert not result.success and result.connected
        assert 1 <= result.rooms_built < result.rooms_asked == 100

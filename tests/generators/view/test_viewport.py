"""The game view origin: centred on the player, clamped to the map."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from generators.view import viewport


@st.composite
def scenes(draw):
    map_w, map_h = draw(st.integers(1, 200)), draw(st.integers(1, 200))
    view_w, view_h = draw(st.integers(1, 250)), draw(st.integers(1, 250))
    player = (draw(st.integers(0, map_w - 1)), draw(st.integers(0, map_h - 1)))
    return player, (view_w, view_h), (map_w, map_h)


@given(scenes())
def test_origin_properties(scene) -> None:
    player, view, size = scene
    ox, oy = viewport.origin(player, view, size)
    for o, p, v, m in ((ox, player[0], view[0], size[0]), (oy, player[1], view[1], size[1])):
        assert o <= p < o + v  # the player is always on screen
        if v <= m:
            assert 0 <= o <= m - v  # never shows space beyond the map
            if v // 2 <= p < m - (v - v // 2):
                assert o == p - v // 2  # centred away from the edges
        else:
            # the whole map is on screen, centred (an odd spare cell goes right/down)
            assert o <= 0 and o + v >= m
            assert -o == (v - m) // 2


def test_the_posts_corrections() -> None:
    assert viewport.origin((50, 50), (21, 15), (100, 80)) == (40, 43)
    assert viewport.origin((3, 2), (21, 15), (100, 80)) == (0, 0)
    assert viewport.origin((97, 79), (21, 15), (100, 80)) == (79, 65)
    assert viewport.origin((5, 5), (21, 21), (11, 11)) == (-5, -5)


def test_view_cuts_the_screen_and_pads_with_wall() -> None:
    grid = np.arange(30).reshape(5, 6) % 2
    grid = grid.astype(np.uint8)
    screen = viewport.view(grid, (5, 4), (3, 3))
    assert np.array_equal(screen, grid[2:5, 3:6])
    padded = viewport.view(grid, (0, 0), (8, 7), fill=1)
    assert padded.shape == (7, 8)
    assert np.array_equal(padded[1:6, 1:7], grid)
    assert padded[0].all() and padded[:, 0].all() and padded[6].all() and padded[:, 7].all()


@pytest.mark.parametrize(
    ("args", "name"),
    [
        (((5, 5), (0, 3), (10, 10)), "view_size"),
        (((5, 5), (3, 3), (10, -1)), "map_size"),
        (((10, 5), (3, 3), (10, 10)), "player"),
        (((5,), (3, 3), (10, 10)), "player"),
    ],
)
def test_bad_arguments_name_themselves(args, name: str) -> None:
    with pytest.raises(ValueError, match=name):
        viewport.origin(*args)

"""The game view of ``entityworks play`` without a terminal: keys, start cell, frames."""

from __future__ import annotations

import numpy as np
import pytest

from entityworks.catalog import MapPlacement
from entityworks.cli._play import BLANK, BRIGHT, DIM, PLAYER, frame, key_step, start_cell
from generators.maps import render
from generators.view import viewport
from generators.view.explore import Explorer

ROOMS = render.from_ascii(
    "##############################\n"
    "#......#######################\n"
    "#......##############........#\n"
    "#............................#\n"
    "#......##############........#\n"
    "#......##############........#\n"
    "##############################"
)


@pytest.mark.parametrize(
    ("key", "step"),
    [
        ("KEY_UP", (0, -1)),
        ("KEY_DOWN", (0, 1)),
        ("KEY_LEFT", (-1, 0)),
        ("KEY_RIGHT", (1, 0)),
        ("KEY_HOME", (-1, -1)),
        ("KEY_NPAGE", (1, 1)),
        ("h", (-1, 0)),
        ("j", (0, 1)),
        ("k", (0, -1)),
        ("l", (1, 0)),
        ("y", (-1, -1)),
        ("u", (1, -1)),
        ("b", (-1, 1)),
        ("n", (1, 1)),
        ("w", (0, -1)),
        ("W", (0, -1)),
        ("x", (0, 1)),
        ("s", (0, 1)),
        ("a", (-1, 0)),
        ("d", (1, 0)),
        ("e", (1, -1)),
        ("z", (-1, 1)),
        ("C", (1, 1)),
        ("Q", (-1, -1)),
        ("q", None),
        ("p", None),
        ("KEY_F1", None),
    ],
)
def test_every_layout_maps_to_its_step(key: str, step) -> None:
    assert key_step(key) == step


def test_start_is_the_stairs_up_else_the_floor_nearest_the_centre() -> None:
    assert start_cell(ROOMS, [MapPlacement(22, 2, "stairs_up", 1)]) == (22, 2)
    assert start_cell(ROOMS) == (14, 3)  # the corridor cell nearest the centre (14.5, 3)
    assert start_cell(ROOMS, [MapPlacement(22, 2, "item", 1)]) == (14, 3)
    two = ROOMS.copy()
    two[3, 7:21] = 1  # cut the corridor: the right room (8x4) is now the largest region
    assert start_cell(two) == (21, 3)
    with pytest.raises(ValueError, match="no floor"):
        start_cell(np.ones((3, 3), dtype=np.uint8))


def test_frame_draws_visible_bright_memory_dim_and_the_rest_blank() -> None:
    walker = Explorer(ROOMS, (3, 3), radius=4)
    for _ in range(11):
        assert walker.move(1, 0)
    view = frame(walker, (30, 7))
    assert view.origin == viewport.origin(walker.position, (30, 7), (30, 7)) == (0, 0)
    assert view.rows[3][14] == "@" and view.styles[3][14] == PLAYER
    for y in range(7):
        for x in range(30):
            if (x, y) == walker.position:
                continue
            expected = (
                BRIGHT if walker.visible[y, x] else DIM if walker.explored_mask[y, x] else BLANK
            )
            assert view.styles[y][x] == expected, (x, y)
            if expected == BLANK:
                assert view.rows[y][x] == " "
            else:
                assert view.rows[y][x] == ("#" if ROOMS[y, x] else ".")
    assert view.styles[3][2] == DIM and view.rows[3][2] == "."  # the room left behind
    assert view.styles[2][26] == BLANK  # never seen


def test_frame_follows_the_player_on_a_big_map_and_shows_marks() -> None:
    grid = np.zeros((100, 200), dtype=np.uint8)
    walker = Explorer(grid, (150, 96), radius=3)
    view = frame(walker, (41, 11), {(151, 96): "<", (10, 10): ">"})
    assert view.origin == (130, 89)  # pushed back inside the map at the bottom edge
    assert view.rows[7][20] == "@" and view.rows[7][21] == "<"
    assert ">" not in "".join(view.rows)

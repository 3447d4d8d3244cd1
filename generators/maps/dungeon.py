"""Rooms and corridors, after *csMapbuilder* (seeds 003 and 004).

Two ways to start: ``method="one_start_room"`` puts one room in the middle of the map;
``method="connected_start_rooms"`` puts a room at each end of the map (top and bottom,
or left and right) and keeps trying until a long corridor from one reaches the other.

Then, until ``rooms`` rooms stand or ``breakout`` attempts are spent:

1. pick a start: with probability ``build_prob`` % (once corridors exist) a wall cell
   beside a random corridor cell, otherwise the first wall cell met walking in a random
   direction from inside a random room (that room is the corridor's *origin*);
2. test the start like any corridor cell (below); a bad start ends the attempt;
3. grow a corridor of ``1 .. max_turns`` + 1 straight segments, each
   ``corridor_min .. corridor_max - 1`` cells long, turning at random between segments
   (never straight back; half of the corridors also never turn against their first
   direction). Each new cell gets an outcome: ``invalid`` (off the map),
   ``existing_corridor``, ``self`` (its own earlier cell), ``origin_room``,
   ``existing_room``, ``too_close`` (a floor cell within ``corridor_space`` cells across
   the direction of travel) or fine; the first non-fine outcome stops the corridor, and
   a corridor that runs all its segments is ``completed``;
4. a corridor that hit an existing room, an existing corridor or itself is dug; a
   completed one gets a random room just beyond its end (width drawn from
   ``room_min_width .. room_max_width``, height from ``room_min_height ..
   room_max_height``; each defaults to ``room_min`` / ``room_max``), dug
   together with the room only when the room verifies: the room and a ring of
   ``room_distance`` cells around it lie on the map and are all wall (so rooms keep at
   least ``room_distance`` wall cells between them), no built corridor lies within
   ``corridor_distance`` cells, and the room does not cover the new corridor.

The build's outcome is part of the result: ``rooms_asked`` and ``rooms_built``, ``connected``
(every floor cell reaches every other, 4-connected, checked on the finished grid) and
``success``: every room asked for was built and the floor is connected. A build that runs
out of ``breakout`` attempts (rooms too big or too far apart for the map) is no success;
``outcomes`` counts every corridor outcome.

Deliberate differences from the C# original:

* the requested ``width`` x ``height`` is honoured (the C# constructor overwrites its
  size with 150 x 150 and its clearing loop bounds y by the width);
* rooms are exactly ``width`` x ``height`` cells, each side drawn from its own
  inclusive range, as csMapbuilder's separate minimum and maximum room width and height
  (the C# draws ``Next(min, max)`` but paints ``Right`` and ``Bottom`` inclusively, so
  its rooms are one cell wider and taller than their rectangles, which also makes
  corridors approaching from the east or south stop as ``too_close`` instead of
  reaching the room);
* the start room is centred (the C# puts its top-left corner at the centre);
* a corridor has ``0 .. max_turns`` turns, drawn uniformly, and may turn after every
  segment but its last (the C# draws ``Next(1, MaxTurns)`` segments and stops turning
  two segments before the end);
* corridor starts are drawn from all corridor cells (the C# skips the first and last
  list entries), and start searches give up after 100 tries instead of looping forever;
  the connected start rooms must keep ``room_distance`` between them and give up after
  ``20 * breakout`` tries (the C# retries forever);
* a room may not cover cells of the corridor that leads to it;
* NumPy's PCG64 instead of ``System.Random``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from generators._checks import check_choice, check_int
from generators._seeds import DrawBuffer, SeedLike, make_rng
from generators.maps.regions import MapShape, open_ratio, region_stats

METHODS = ("one_start_room", "connected_start_rooms")
OUTCOMES = (
    "invalid",
    "self",
    "existing_corridor",
    "origin_room",
    "existing_room",
    "completed",
    "too_close",
)

Point = tuple[int, int]

_DIRECTIONS: tuple[Point, ...] = ((0, -1), (0, 1), (1, 0), (-1, 0))
_START_TRIES = 100
#: Turns allowed to the corridor joining the two connected start rooms (as in the C#).
_LINK_TURNS = 100

#: The linked start rooms get this many tries per unit of ``breakout`` (about 1 in 80
#: tries links them with the default settings, as in the C#, which retries forever).
_LINK_TRIES_PER_BREAKOUT = 20

_WALL, _ROOM, _CORRIDOR = 0, 1, 2
_OK = "ok"


@dataclass(frozen=True)
class Room:
    """A room: top-left corner ``(x, y)`` and size in cells."""

    x: int
    y: int
    width: int
    height: int

    def contains(self, x: int, y: int) -> bool:
        return self.x <= x < self.x + self.width and self.y <= y < self.y + self.height


@dataclass
class Dungeon(MapShape):
    """A generated dungeon with its rooms, corridors and the builder's statistics.

    ``success`` is the build's own verdict: ``rooms_built >= rooms_asked`` and ``connected``
    (two linked start rooms count as built even when one room was asked for).
    """

    grid: np.ndarray
    seed: int | None
    params: dict[str, Any]
    rooms: list[Room]
    corridors: list[list[Point]]
    #: The same corridors as cell positions ``y * width + x`` (indices into
    #: ``grid.ravel()``), the form the builder keeps them in: for a consumer that would
    #: otherwise turn every ``(x, y)`` pair back into numbers (a catalog packing paths).
    corridor_positions: list[list[int]]
    success: bool
    outcomes: dict[str, int]
    attempts: int
    rejected_starts: int
    rejected_rooms: int
    regions: int
    largest_region: int
    open_ratio: float
    rooms_asked: int
    connected: bool
    kind: str = field(default="dungeon", init=False)

    @property
    def rooms_built(self) -> int:
        """How many rooms stand (``len(rooms)``)."""
        return len(self.rooms)


class _Builder:
    def __init__(self, width: int, height: int, draw: DrawBuffer, settings: dict[str, int]):
        self.width = width
        self.height = height
        self.draw = draw
        self.room_width = (settings["room_min_width"], settings["room_max_width"] + 1)
        self.room_height = (settings["room_min_height"], settings["room_max_height"] + 1)
        self.room_distance = settings["room_distance"]
        self.corridor_distance = settings["corridor_distance"]
        self.corridor_min = settings["corridor_min"]
        self.corridor_max = settings["corridor_max"]
        self.max_turns = settings["max_turns"]
        self.space = settings["corridor_space"]
        self.build_prob = settings["build_prob"]
        self.outcomes = dict.fromkeys(OUTCOMES, 0)
        self.rejected_starts = 0
        self.rejected_rooms = 0
        self.reset()

    def reset(self) -> None:
        self.state = [_WALL] * (self.width * self.height)
        self.floor = np.zeros((self.height, self.width), dtype=bool)
        self.corridor_mask = np.zeros((self.height, self.width), dtype=bool)
        self.rooms: list[Room] = []
        self.corridors: list[list[int]] = []
        self.corridor_cells: list[int] = []

    # -- cells -------------------------------------------------------------------------

    def test_point(self, x: int, y: int, dx: int, origin: Room | None, pending: set[int]) -> str:
        """Outcome of putting a corridor cell at ``(x, y)`` while moving along ``dx``."""
        width, height = self.width, self.height
        if not (0 <= x < width and 0 <= y < height):
            return "invalid"
        pos = y * width + x
        kind = self.state[pos]
        if kind == _CORRIDOR:
            return "existing_corridor"
        if pos in pending:
            return "self"
        if origin is not None and origin.contains(x, y):
            return "origin_room"
        if kind == _ROOM:
            return "existing_room"
        state, space = self.state, self.space
        if dx == 0:  # moving north or south: look east and west
            for cx in range(max(0, x - space), min(width, x + space + 1)):
                if state[y * width + cx] != _WALL:
                    return "too_close"
        else:
            for cy in range(max(0, y - space), min(height, y + space + 1)):
                if state[cy * width + x] != _WALL:
                    return "too_close"
        return _OK

    # -- starts ------------------------------------------------------------------------

    def room_start(self) -> tuple[int, int, int, int, Room | None]:
        draw = self.draw
        room = self.rooms[draw.below(len(self.rooms))]
        if room.width >= 3:
            x = draw.between(room.x + 1, room.x + room.width - 1)
        else:
            x = draw.between(room.x, room.x + room.width)
        if room.height >= 3:
            y = draw.between(room.y + 1, room.y + room.height - 1)
        else:
            y = draw.between(room.y, room.y + room.height)
        dx, dy = _DIRECTIONS[draw.below(4)]
        while True:
            x += dx
            y += dy
            if not (0 <= x < self.width and 0 <= y < self.height):
                break
            if self.state[y * self.width + x] == _WALL:
                break
        return x, y, dx, dy, room

    def corridor_start(self) -> tuple[int, int, int, int, Room | None] | None:
        width, height, state, draw = self.width, self.height, self.state, self.draw
        for _ in range(_START_TRIES):
            pos = self.corridor_cells[draw.below(len(self.corridor_cells))]
            x, y = pos % width, pos // width
            options = [
                (dx, dy)
                for dx, dy in _DIRECTIONS
                if 0 <= x + dx < width
                and 0 <= y + dy < height
                and state[(y + dy) * width + x + dx] == _WALL
            ]
            if options:
                dx, dy = options[draw.below(len(options))]
                return x + dx, y + dy, dx, dy, None
        return None

    # -- corridors ---------------------------------------------------------------------

    def grow(
        self, x: int, y: int, dx: int, dy: int, origin: Room | None, turns: int, no_back: bool
    ) -> tuple[str, list[int], int, int]:
        """Grow a corridor from the (already tested) start ``(x, y)``.

        Returns ``(outcome, cells, dx, dy)`` with the final direction of travel.
        """
        draw = self.draw
        path = [y * self.width + x]
        pending = set(path)
        first = (dx, dy)
        for segment in range(turns + 1):
            for _ in range(draw.between(self.corridor_min, self.corridor_max)):
                x += dx
                y += dy
                outcome = self.test_point(x, y, dx, origin, pending)
                if outcome != _OK:
                    return outcome, path, dx, dy
                pos = y * self.width + x
                path.append(pos)
                pending.add(pos)
            if segment < turns:
                back = (-dx, -dy)
                against = (-first[0], -first[1]) if no_back else back
                options = [d for d in _DIRECTIONS if d != back and d != against]
                dx, dy = options[draw.below(len(options))]
        return "completed", path, dx, dy

    def dig_corridor(self, path: list[int]) -> None:
        width = self.width
        for pos in path:
            if self.state[pos] == _WALL:
                self.state[pos] = _CORRIDOR
                self.corridor_cells.append(pos)
        ys = np.array(path, dtype=np.int64) // width
        xs = np.array(path, dtype=np.int64) % width
        self.floor[ys, xs] = True
        self.corridor_mask[ys, xs] = True
        self.corridors.append(path)

    # -- rooms -------------------------------------------------------------------------

    def random_room_size(self) -> tuple[int, int]:
        draw = self.draw
        return draw.between(*self.room_width), draw.between(*self.room_height)

    def room_fits(self, room: Room, pending: list[int]) -> bool:
        d = self.room_distance
        x0, y0 = room.x - d, room.y - d
        x1, y1 = room.x + room.width + d, room.y + room.height + d
        if x0 < 0 or y0 < 0 or x1 > self.width or y1 > self.height:
            return False
        if self.floor[y0:y1, x0:x1].any():
            return False
        c = self.corridor_distance
        cx0, cy0 = max(0, room.x - c), max(0, room.y - c)
        cx1 = min(self.width, room.x + room.width + c)
        cy1 = min(self.height, room.y + room.height + c)
        if self.corridor_mask[cy0:cy1, cx0:cx1].any():
            return False
        width = self.width
        return not any(room.contains(pos % width, pos // width) for pos in pending)

    def room_after(self, end: int, dx: int, dy: int) -> Room:
        """A random room just beyond the corridor end ``end`` in direction ``(dx, dy)``."""
        ex, ey = end % self.width, end // self.width
        w, h = self.random_room_size()
        draw = self.draw
        if dx == 0:
            x = draw.between(ex - w + 1, ex + 1)
            y = ey + 1 if dy == 1 else ey - h
        else:
            y = draw.between(ey - h + 1, ey + 1)
            x = ex + 1 if dx == 1 else ex - w
        return Room(x, y, w, h)

    def _paint(self, room: Room, state: int, floor: bool) -> None:
        width = self.width
        for y in range(room.y, room.y + room.height):
            row = y * width
            for x in range(room.x, room.x + room.width):
                self.state[row + x] = state
        self.floor[room.y : room.y + room.height, room.x : room.x + room.width] = floor

    def dig_room(self, room: Room) -> None:
        self._paint(room, _ROOM, True)
        self.rooms.append(room)

    # -- the loop ----------------------------------------------------------------------

    def attempt(self) -> None:
        """One pass of the build loop: a start, a corridor, maybe a room."""
        draw = self.draw
        if self.corridor_cells and draw.percent() < self.build_prob:
            start = self.corridor_start()
        else:
            start = self.room_start()
        if start is None:
            self.rejected_starts += 1
            return
        x, y, dx, dy, origin = start
        if self.test_point(x, y, dx, origin, set()) != _OK:
            self.rejected_starts += 1
            return
        turns = draw.below(self.max_turns + 1)
        no_back = draw.percent() > 50
        outcome, path, dx, dy = self.grow(x, y, dx, dy, origin, turns, no_back)
        self.outcomes[outcome] += 1
        if outcome in ("existing_room", "existing_corridor", "self"):
            self.dig_corridor(path)
        elif outcome == "completed":
            room = self.room_after(path[-1], dx, dy)
            if self.room_fits(room, path):
                self.dig_corridor(path)
                self.dig_room(room)
            else:
                self.rejected_rooms += 1

    def place_centre_room(self) -> None:
        w, h = self.random_room_size()
        self.dig_room(Room((self.width - w) // 2, (self.height - h) // 2, w, h))

    def undo_room(self, room: Room) -> None:
        self._paint(room, _WALL, False)
        self.rooms.remove(room)

    def place_linked_rooms(self, tries: int) -> bool:
        """Two rooms at opposite ends joined by one corridor; False if ``tries`` ran out."""
        draw = self.draw
        for _ in range(tries):
            dx, _dy = _DIRECTIONS[draw.below(4)]
            first_w, first_h = self.random_room_size()
            second_w, second_h = self.random_room_size()
            if dx == 0:  # rooms at the top and the bottom
                first = Room(draw.between(1, self.width - first_w), 1, first_w, first_h)
                second = Room(
                    draw.between(1, self.width - second_w),
                    self.height - second_h - 1,
                    second_w,
                    second_h,
                )
                gap = second.y - (first.y + first.height)
            else:  # rooms on the west and east sides
                first = Room(1, draw.between(1, self.height - first_h), first_w, first_h)
                second = Room(
                    self.width - second_w - 1,
                    draw.between(1, self.height - second_h),
                    second_w,
                    second_h,
                )
                gap = second.x - (first.x + first.width)
            if gap < self.room_distance:
                continue
            self.dig_room(first)
            self.dig_room(second)
            x, y, sx, sy, origin = self.room_start()
            if self.test_point(x, y, sx, origin, set()) == _OK:
                outcome, path, _, _ = self.grow(x, y, sx, sy, origin, _LINK_TURNS, True)
                if outcome == "existing_room":
                    self.dig_corridor(path)
                    return True
            self.undo_room(second)
            self.undo_room(first)
        return False


def generate(
    width: int = 150,
    height: int = 150,
    method: str = "one_start_room",
    rooms: int = 15,
    room_min: int = 3,
    room_max: int = 15,
    room_distance: int = 5,
    corridor_distance: int = 2,
    corridor_min: int = 3,
    corridor_max: int = 15,
    max_turns: int = 5,
    corridor_space: int = 2,
    build_prob: int = 50,
    breakout: int = 250,
    seed: SeedLike = None,
    room_min_width: int | None = None,
    room_max_width: int | None = None,
    room_min_height: int | None = None,
    room_max_height: int | None = None,
) -> Dungeon:
    """Generate a rooms-and-corridors dungeon; see the module docstring.

    ``room_min`` / ``room_max`` bound both sides of a room; ``room_min_width``,
    ``room_max_width``, ``room_min_height`` and ``room_max_height`` (``None``: take
    ``room_min`` / ``room_max``) bound one side each. With them unset a seed gives the same
    map as before they existed.
    """
    method = check_choice("method", method, METHODS)
    rooms = check_int("rooms", rooms, 1)
    room_min = check_int("room_min", room_min, 1)
    room_max = check_int("room_max", room_max, room_min)
    min_w = room_min if room_min_width is None else check_int("room_min_width", room_min_width, 1)
    min_h = (
        room_min if room_min_height is None else check_int("room_min_height", room_min_height, 1)
    )
    max_w = (
        max(room_max, min_w)
        if room_max_width is None
        else check_int("room_max_width", room_max_width, min_w)
    )
    max_h = (
        max(room_max, min_h)
        if room_max_height is None
        else check_int("room_max_height", room_max_height, min_h)
    )
    width = check_int("width", width, max_w + 2)
    height = check_int("height", height, max_h + 2)
    room_distance = check_int("room_distance", room_distance, 0)
    corridor_distance = check_int("corridor_distance", corridor_distance, 0)
    corridor_min = check_int("corridor_min", corridor_min, 1)
    corridor_max = check_int("corridor_max", corridor_max, corridor_min + 1)
    max_turns = check_int("max_turns", max_turns, 0)
    corridor_space = check_int("corridor_space", corridor_space, 0)
    build_prob = check_int("build_prob", build_prob, 0, 100)
    breakout = check_int("breakout", breakout, 0)
    rng, recorded = make_rng(seed)

    settings = {
        "room_min": room_min,
        "room_max": room_max,
        "room_min_width": min_w,
        "room_max_width": max_w,
        "room_min_height": min_h,
        "room_max_height": max_h,
        "room_distance": room_distance,
        "corridor_distance": corridor_distance,
        "corridor_min": corridor_min,
        "corridor_max": corridor_max,
        "max_turns": max_turns,
        "corridor_space": corridor_space,
        "build_prob": build_prob,
    }
    builder = _Builder(width, height, DrawBuffer(rng), settings)
    if method == "one_start_room":
        builder.place_centre_room()
        started = True
    else:
        started = builder.place_linked_rooms(_LINK_TRIES_PER_BREAKOUT * max(1, breakout))
    attempts = 0
    if started:
        while len(builder.rooms) < rooms and attempts < breakout:
            attempts += 1
            builder.attempt()

    grid = np.where(builder.floor, 0, 1).astype(np.uint8)
    stats = region_stats(grid, 4)
    connected = stats.count == 1  # no floor at all (start rooms never linked): not connected
    params: dict[str, Any] = {"width": width, "height": height, "method": method, "rooms": rooms}
    params.update(settings)
    params["breakout"] = breakout
    return Dungeon(
        grid=grid,
        seed=recorded,
        params=params,
        rooms=list(builder.rooms),
        corridors=[[(pos % width, pos // width) for pos in path] for path in builder.corridors],
        corridor_positions=builder.corridors,
        success=len(builder.rooms) >= rooms and connected,
        outcomes=dict(builder.outcomes),
        attempts=attempts,
        rejected_starts=builder.rejected_starts,
        rejected_rooms=builder.rejected_rooms,
        regions=stats.count,
        largest_region=stats.largest,
        open_ratio=open_ratio(grid),
        rooms_asked=rooms,
        connected=connected,
    )

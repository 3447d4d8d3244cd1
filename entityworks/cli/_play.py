"""``entityworks play``: walk a stored map in the terminal with field of view and memory.

The screen is the seed's game view (``generators.view.viewport``): the player stays centred
except near the map's edges. The view is the :class:`~generators.view.explore.Explorer`'s,
computed after every step by one :class:`~generators.view.field.FieldOfView` of the map
(checked once; each step clears and recomputes only the window around the player). What
the player sees now is drawn bright, what they saw before is drawn dim (the memory the
*MapHandler* post promised), the rest stays blank. Walls block.

Keys: arrows (Home/End/PgUp/PgDn for diagonals), vi keys ``h j k l y u b n`` and the seed's
``Q W E / A D / Z X C`` layout (``S`` steps down too, as the post describes it); ``q`` or
Esc quits, so the up-left step of that layout is ``Q`` (shift). The terminal is restored on
every way out, Ctrl-C included.

:func:`frame` builds the screen as text and styles without curses, so it is testable; the
curses loop only paints it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from generators.view import viewport
from generators.view.explore import Explorer

Point = tuple[int, int]

#: Styles of a screen cell.
BLANK, BRIGHT, DIM, PLAYER = 0, 1, 2, 3

WALL_CHAR, FLOOR_CHAR, PLAYER_CHAR = "#", ".", "@"

_VI = {
    "h": (-1, 0),
    "j": (0, 1),
    "k": (0, -1),
    "l": (1, 0),
    "y": (-1, -1),
    "u": (1, -1),
    "b": (-1, 1),
    "n": (1, 1),
}
_SEED = {
    "Q": (-1, -1),
    "W": (0, -1),
    "E": (1, -1),
    "A": (-1, 0),
    "D": (1, 0),
    "Z": (-1, 1),
    "X": (0, 1),
    "C": (1, 1),
    "S": (0, 1),
}
QUIT_KEYS = frozenset({"q", "\x1b"})


def key_step(key: str) -> Point | None:
    """The ``(dx, dy)`` step of a key name (a character or a curses ``KEY_*`` name)."""
    arrows = {
        "KEY_UP": (0, -1),
        "KEY_DOWN": (0, 1),
        "KEY_LEFT": (-1, 0),
        "KEY_RIGHT": (1, 0),
        "KEY_HOME": (-1, -1),
        "KEY_PPAGE": (1, -1),
        "KEY_END": (-1, 1),
        "KEY_NPAGE": (1, 1),
        "KEY_A1": (-1, -1),
        "KEY_A3": (1, -1),
        "KEY_C1": (-1, 1),
        "KEY_C3": (1, 1),
    }
    if key in arrows:
        return arrows[key]
    if key in _VI:
        return _VI[key]
    if len(key) == 1 and key != "q" and key.upper() in _SEED:
        return _SEED[key.upper()]
    return None


def start_cell(grid: np.ndarray, placements: Sequence[Any] = ()) -> Point:
    """Where play starts: the placed stairs up, else the floor cell of the largest
    4-connected region closest to the map's centre."""
    for p in placements:
        if p.label == "stairs_up" and not grid[p.y, p.x]:
            return int(p.x), int(p.y)
    from generators.maps.regions import region_stats

    stats = region_stats(grid, 4)
    if not stats.count:
        raise ValueError("the map has no floor to stand on")
    largest = int(np.argmax(stats.sizes)) + 1
    ys, xs = np.nonzero(stats.labels == largest)
    height, width = grid.shape
    distance = (xs - (width - 1) / 2) ** 2 + (ys - (height - 1) / 2) ** 2
    best = int(np.lexsort((xs, ys, distance))[0])  # nearest, then top-most, then left-most
    return int(xs[best]), int(ys[best])


@dataclass(frozen=True)
class Frame:
    """One screen: ``rows`` of text and, cell for cell, their styles; the map cell shown at
    the top-left corner."""

    rows: list[str]
    styles: list[list[int]]
    origin: Point


def frame(
    explorer: Explorer, size: tuple[int, int], marks: Mapping[Point, str] | None = None
) -> Frame:
    """The game view of ``size = (columns, rows)`` around the player."""
    cols, lines = size
    grid = explorer.grid
    height, width = grid.shape
    ox, oy = viewport.origin(explorer.position, (cols, lines), (width, height))
    visible = explorer.visible
    explored = explorer.explored_mask
    marks = marks or {}
    rows: list[str] = []
    styles: list[list[int]] = []
    for sy in range(lines):
        y = oy + sy
        chars: list[str] = []
        row_styles: list[int] = []
        for sx in range(cols):
            x = ox + sx
            if not (0 <= x < width and 0 <= y < height) or not explored[y, x]:
                chars.append(" ")
                row_styles.append(BLANK)
                continue
            char = marks.get((x, y)) or (WALL_CHAR if grid[y, x] else FLOOR_CHAR)
            chars.append(char)
            row_styles.append(BRIGHT if visible[y, x] else DIM)
        rows.append("".join(chars))
        styles.append(row_styles)
    px, py = explorer.position
    sx, sy = px - ox, py - oy
    if 0 <= sy < lines and 0 <= sx < cols:
        rows[sy] = rows[sy][:sx] + PLAYER_CHAR + rows[sy][sx + 1 :]
        styles[sy][sx] = PLAYER
    return Frame(rows, styles, (ox, oy))


HELP = "arrows/hjklyubn/QWEADZXC move, q quits"


def status_line(title: str, explorer: Explorer, message: str, width: int) -> str:
    x, y = explorer.position
    seen = explorer.explored_mask.mean()
    text = f"{title}  @ {x},{y}  seen {seen:.0%}  {message or HELP}"
    return text[: max(0, width - 1)]


def play(
    grid: np.ndarray,
    start: Point,
    *,
    radius: int | None = 8,
    symmetric: bool = False,
    marks: Mapping[Point, str] | None = None,
    title: str = "",
) -> Explorer:
    """Run the explorer in the terminal until ``q``/Esc (or Ctrl-C); returns the final state.

    The terminal is restored however the loop ends.
    """
    import curses

    explorer = Explorer(grid, start, radius, symmetric=symmetric)
    try:
        curses.wrapper(_loop, explorer, marks or {}, title)
    except KeyboardInterrupt:
        pass  # Ctrl-C is a way out like q; curses.wrapper has restored the terminal
    return explorer


def _loop(screen: Any, explorer: Explorer, marks: Mapping[Point, str], title: str) -> None:
    import curses

    if hasattr(curses, "set_escdelay"):
        curses.set_escdelay(25)  # Esc quits at once instead of after a second
    try:
        curses.curs_set(0)
    except curses.error:  # pragma: no cover - a terminal without cursor control
        pass
    screen.keypad(True)
    styles = {
        BLANK: curses.A_NORMAL,
        BRIGHT: curses.A_BOLD,
        DIM: curses.A_DIM,
        PLAYER: curses.A_BOLD | curses.A_REVERSE,
    }
    message = ""
    while True:
        lines, cols = screen.getmaxyx()
        screen.erase()
        if lines >= 2 and cols >= 2:
            view = frame(explorer, (cols, lines - 1), marks)
            for sy, (row, row_styles) in enumerate(zip(view.rows, view.styles, strict=True)):
                start = 0
                for sx in range(1, len(row) + 1):  # one addstr per run of one style
                    if sx == len(row) or row_styles[sx] != row_styles[start]:
                        if row_styles[start] != BLANK:
                            _put(screen, sy, start, row[start:sx], styles[row_styles[start]])
                        start = sx
            _put(screen, lines - 1, 0, status_line(title, explorer, message, cols), curses.A_NORMAL)
        screen.refresh()
        code = screen.getch()
        if code == curses.KEY_RESIZE or code == -1:
            continue
        key = curses.keyname(code).decode("ascii", "replace") if code > 255 else chr(code)
        if key in QUIT_KEYS:
            return
        step = key_step(key)
        if step is None:
            message = f"unknown key {key!r}; {HELP}"
        elif explorer.move(*step):
            message = ""
        else:
            message = "a wall blocks the way"


def _put(screen: Any, y: int, x: int, text: str, attr: int) -> None:
    import curses

    try:
        screen.addstr(y, x, text, attr)
    except curses.error:
        pass  # writing the bottom-right cell moves the cursor off screen; the text is drawn


__all__ = ["Frame", "QUIT_KEYS", "frame", "key_step", "play", "start_cell", "status_line"]

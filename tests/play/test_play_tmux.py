"""``entityworks play`` as a person uses it: in tmux, keys sent, the screen read back.

A detached tmux session of fixed size runs a shell; the test types the command, sends keys
and reads the pane with ``capture-pane -e`` (SGR attributes kept), so it checks what a
person sees: the player glyph moving, walls blocking, what was seen before drawn dim, the
shell prompt back after ``q`` and after Ctrl-C, and the terminal back in cooked mode.
Needs tmux (skipped without it, a failure under CI=true).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from entityworks.catalog import MapPlacement, MapRecord, map_stats, open_catalog
from generators.maps import render
from generators.view import viewport
from tests.conftest import IN_CI

COLS, ROWS = 60, 20
MAP = render.from_ascii(
    "##############################\n"
    "#......#######################\n"
    "#......##############........#\n"
    "#............................#\n"
    "#......##############........#\n"
    "#......##############........#\n"
    "##############################"
)
PROMPT = "ready$ "
BIN = Path(sys.executable).parent / "entityworks"


@dataclass
class Cell:
    char: str
    bold: bool = False
    dim: bool = False
    reverse: bool = False


_SGR = re.compile(r"\x1b\[([0-9;]*)m")


def parse_screen(text: str) -> list[list[Cell]]:
    """``capture-pane -e`` output as rows of cells with their attributes."""
    bold = dim = reverse = False
    screen = []
    for line in text.split("\n"):
        row: list[Cell] = []
        pos = 0
        for match in _SGR.finditer(line):
            row += [Cell(c, bold, dim, reverse) for c in line[pos : match.start()]]
            pos = match.end()
            for code in (match.group(1) or "0").split(";"):
                if code in ("0", ""):
                    bold = dim = reverse = False
                elif code == "1":
                    bold = True
                elif code == "2":
                    dim = True
                elif code == "22":
                    bold = dim = False
                elif code == "7":
                    reverse = True
                elif code == "27":
                    reverse = False
        row += [Cell(c, bold, dim, reverse) for c in line[pos:]]
        screen.append(row)
    return screen


class Pane:
    """A shell in a detached tmux session on a private socket."""

    def __init__(self, socket: str, cwd: Path) -> None:
        self.socket = socket
        self.tmux(
            "new-session",
            "-d",
            "-s",
            "play",
            "-x",
            str(COLS),
            "-y",
            str(ROWS),
            "-c",
            str(cwd),
            f"env PS1='{PROMPT}' bash --norc --noprofile",
        )
        try:
            self.tmux("set-option", "-t", "play", "status", "off")
            self.wait_for(lambda text: text.rstrip().endswith(PROMPT.rstrip()))
        except BaseException:
            self.close()
            raise

    def tmux(self, *args: str) -> str:
        return subprocess.run(
            ["tmux", "-L", self.socket, *args],
            capture_output=True,
            text=True,
            check=True,
            timeout=30,
        ).stdout

    def send(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "play", *keys)

    def type(self, text: str) -> None:
        self.tmux("send-keys", "-t", "play", "-l", text)
        self.send("Enter")

    def text(self) -> str:
        return self.tmux("capture-pane", "-t", "play", "-p")

    def screen(self) -> list[list[Cell]]:
        return parse_screen(self.tmux("capture-pane", "-t", "play", "-p", "-e"))

    def wait_for(self, condition, timeout: float = 30) -> str:
        deadline = time.monotonic() + timeout
        while True:
            text = self.text()
            if condition(text):
                return text
            if time.monotonic() > deadline:
                raise AssertionError(f"screen never matched; it shows:\n{text}")
            time.sleep(0.1)

    def close(self) -> None:
        path = self.tmux("display-message", "-p", "#{socket_path}").strip()
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, timeout=30)
        if path.endswith(self.socket):
            Path(path).unlink(missing_ok=True)


@pytest.fixture
def pane(tmp_path: Path) -> Iterator[Pane]:
    if shutil.which("tmux") is None:
        if IN_CI:
            pytest.fail("tmux is not installed (required under CI=true)")
        pytest.skip("tmux is not installed")
    running = Pane(f"entityworks-play-{os.getpid()}-{time.monotonic_ns()}", tmp_path)
    yield running
    running.close()


@pytest.fixture
def level(tmp_path: Path) -> str:
    db = tmp_path / "level.db"
    store = open_catalog(db)
    ratio, regions, largest = map_stats(MAP)
    store.insert(
        MapRecord(
            id=None,
            kind="handmade",
            generator="tests",
            parameters={},
            seed=None,
            width=30,
            height=7,
            grid=MAP,
            open_ratio=ratio,
            region_count=regions,
            largest_region=largest,
            placements=[MapPlacement(27, 5, "stairs_down", 0)],
        )
    )
    store.close()
    return str(db)


def screen_xy(x: int, y: int) -> tuple[int, int]:
    """Where map cell (x, y) is on the pane (the view is the pane less its status line)."""
    ox, oy = viewport.origin((x, y), (COLS, ROWS - 1), (30, 7))  # the map is smaller: fixed
    return x - ox, y - oy


def player(screen: list[list[Cell]]) -> tuple[int, int]:
    found = [
        (sx, sy)
        for sy, row in enumerate(screen[: ROWS - 1])
        for sx, c in enumerate(row)
        if c.char == "@"
    ]  # the last row is the status line
    assert len(found) == 1, found
    sx, sy = found[0]
    assert screen[sy][sx].reverse and screen[sy][sx].bold
    return sx, sy


def at(screen: list[list[Cell]], x: int, y: int) -> Cell:
    sx, sy = screen_xy(x, y)
    row = screen[sy]
    return row[sx] if sx < len(row) else Cell(" ")


def test_walk_see_remember_and_quit(pane: Pane, level: str) -> None:
    pane.type(f"{BIN} play 1 --db {level} --at 3,3 --radius 4")
    pane.wait_for(lambda text: "map 1 handmade 30x7" in text)
    screen = pane.screen()
    assert player(screen) == screen_xy(3, 3)
    assert at(screen, 2, 2).char == "." and at(screen, 2, 2).bold  # seen now: bright
    assert at(screen, 0, 3).char == "#" and at(screen, 0, 3).bold
    assert at(screen, 20, 3).char == " "  # not seen yet: blank
    assert at(screen, 27, 5).char == " "  # the stairs far away are unknown too

    pane.send("l", "l", "l")  # vi keys
    pane.wait_for(lambda text: "@ 6,3" in text)
    assert player(pane.screen()) == screen_xy(6, 3)

    pane.send("w", "w", "w")  # the seed's layout: up twice, then a wall
    text = pane.wait_for(lambda text: "a wall blocks the way" in text)
    assert "@ 6,1" in text and player(pane.screen()) == screen_xy(6, 1)

    pane.send("Down", "Down")  # arrows
    pane.wait_for(lambda text: "@ 6,3" in text)
    for _ in range(14):
        pane.send("d")
    pane.wait_for(lambda text: "@ 20,3" in text)
    screen = pane.screen()
    assert player(screen) == screen_xy(20, 3)
    left_behind = at(screen, 2, 2)
    assert left_behind.char == "." and left_behind.dim and not left_behind.bold  # memory
    assert at(screen, 10, 3).char == "." and at(screen, 10, 3).dim
    assert at(screen, 22, 3).char == "." and at(screen, 22, 3).bold  # in sight
    assert at(screen, 28, 5).char == " "  # still never seen

    pane.send("n", "n", "d", "d", "d", "d")  # into the right room, next to the stairs
    pane.wait_for(lambda text: "@ 26,5" in text)
    stairs = at(pane.screen(), 27, 5)
    assert stairs.char == ">" and stairs.bold

    pane.send("q")
    text = pane.wait_for(
        lambda text: "left map 1 at" in text and text.rstrip().endswith(PROMPT.rstrip())
    )
    assert "Traceback" not in text
    pane.type("stty -a | tr ' ;' '\\n\\n' | grep -x -e icanon -e -icanon -e echo -e -echo")
    restored = pane.wait_for(lambda text: text.count(PROMPT.rstrip()) >= 3)
    lines = restored.split("\n")
    assert "icanon" in lines and "echo" in lines  # cooked mode again
    assert "-icanon" not in lines and "-echo" not in lines


def test_ctrl_c_restores_the_terminal(pane: Pane, level: str) -> None:
    pane.type(f"{BIN} play 1 --db {level} --symmetric")
    pane.wait_for(lambda text: "map 1 handmade 30x7" in text)
    assert player(pane.screen()) == screen_xy(14, 3)  # the floor nearest the centre
    pane.send("h")
    pane.wait_for(lambda text: "@ 13,3" in text)
    pane.send("C-c")
    text = pane.wait_for(
        lambda text: "left map 1 at" in text and text.rstrip().endswith(PROMPT.rstrip())
    )
    assert "Traceback" not in text and "aborted" not in text
    pane.type("stty -a | tr ' ;' '\\n\\n' | grep -x -e icanon -e -icanon -e echo -e -echo")
    lines = pane.wait_for(lambda text: text.count(PROMPT.rstrip()) >= 3).split("\n")
    assert "icanon" in lines and "echo" in lines


def test_play_outside_a_terminal_and_a_bad_start_are_one_line_errors(level: str) -> None:
    piped = subprocess.run(
        [str(BIN), "play", "1", "--db", level],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert piped.returncode == 2
    assert piped.stderr == "error: play needs a terminal (stdin and stdout must be a tty)\n"


def test_bad_starts_are_refused_in_the_terminal(pane: Pane, level: str) -> None:
    done = re.compile(r"^status=\d", re.MULTILINE)
    pane.type(f"{BIN} play 1 --db {level} --at 0,0; echo status=$?")
    text = pane.wait_for(lambda text: len(done.findall(text)) == 1)
    assert "error: entityworks play: Invalid value for --at: 0,0 is a wall" in text.replace(
        "\n", ""
    )
    assert "status=2" in done.findall(text)[0] + text[text.rindex("status=") :]
    pane.type(f"{BIN} play 1 --db {level} --at 3; echo status=$?")
    text = pane.wait_for(lambda text: len(done.findall(text)) == 2)
    assert "'3' is not X,Y" in text.replace("\n", "")
    assert [m for m in re.findall(r"^status=(\d+)", text, re.MULTILINE)] == ["2", "2"]

"""Stored text cannot drive the terminal through ``entityworks query``.

A value written through the Python API may hold ESC, BEL, a CSI or an OSC 52 sequence (a
clipboard write), C1 controls (U+009B is a one-character CSI), U+2028/U+2029 or a bidi
override (U+202E). Every output format prints none of them raw: table and csv show backslash
escapes that decode back to the stored text (a literal backslash sequence shows differently),
JSON writes ``\\uXXXX``. One case runs in tmux: the screen shows the escapes and the OSC 52
write never reaches tmux's clipboard.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from entityworks import Store
from entityworks.cli import cli
from entityworks.cli.output import TERMINAL_CONTROLS
from tests.conftest import IN_CI
from tests.play.test_play_tmux import BIN, PROMPT, Pane

OSC52 = "\x1b]52;c;aGVsbG8=\x07"
HOSTILE = [
    "plain",
    "esc \x1b alone",
    "bell \x07",
    "csi \x1b[2J\x1b[H cleared",
    f"osc52 {OSC52}",
    "csi c1 \x9b31m red",
    "line\u2028separator",
    "para\u2029separator",
    "bidi \u202egnp.exe",
    "isolates \u2066x\u2069 \u200f\u061c",
    "cr overwrite\rSAFE",
    "tab\tnew\nline",
    "del \x7f",
    "literal \\x1b and \\u2028 and \\\\",
    *[f"c0 {chr(cp)}" for cp in range(1, 0x20)],
    *[f"c1 {chr(cp)}" for cp in range(0x80, 0xA0)],
]
RAW = {chr(cp) for cp in TERMINAL_CONTROLS}


@dataclass
class Note:
    id: int
    text: str
    meta: dict[str, Any]


def unescape(shown: str) -> str:
    """The documented way back from the table and csv escapes."""
    return shown.encode("latin-1", "backslashreplace").decode("unicode_escape")


def query(url: str, *args: str) -> str:
    result = CliRunner().invoke(cli, ["query", "note", "--db", url, "-o", "id", *args])
    assert result.exit_code == 0, (result.stdout, result.stderr)
    return result.stdout


@pytest.fixture
def notes(backend_url: str) -> str:
    store = Store(backend_url)
    store.create(Note)
    store.insert_many([Note(i, text, {"k": text}) for i, text in enumerate(HOSTILE)])
    store.close()
    return backend_url


def meta(shown: Any) -> Any:
    """A dict field as ``query`` prints it: its JSON text (a string) or the object."""
    return json.loads(shown) if isinstance(shown, str) else shown


def raw_controls(out: str) -> set[str]:
    return {ch for ch in out if ch in RAW and ch != "\n"}


@pytest.mark.parametrize("fmt", ["table", "csv", "json", "jsonl"])
def test_no_format_prints_a_control_character_raw(notes: str, fmt: str):
    out = query(notes, "--format", fmt)
    assert raw_controls(out) == set()
    lines = out.rstrip("\n").split("\n")
    assert len(lines) == {"table": 2, "csv": 1, "json": 2, "jsonl": 0}[fmt] + len(HOSTILE)


def test_json_and_jsonl_read_back_exactly(notes: str):
    rows = json.loads(query(notes, "--format", "json"))
    assert [(r["text"], meta(r["meta"])) for r in rows] == [(t, {"k": t}) for t in HOSTILE]
    lines = query(notes, "--format", "jsonl").splitlines()
    assert [json.loads(line)["text"] for line in lines] == HOSTILE
    assert "\\u2028" in lines[HOSTILE.index("line\u2028separator")]


def test_csv_escapes_decode_to_the_stored_text(notes: str):
    rows = list(csv.DictReader(io.StringIO(query(notes, "--format", "csv"))))
    assert [unescape(r["text"]) for r in rows] == HOSTILE
    assert [json.loads(r["meta"]) for r in rows] == [{"k": t} for t in HOSTILE]  # JSON
    shown = {HOSTILE[int(r["id"])]: r["text"] for r in rows}
    assert shown[f"osc52 {OSC52}"] == "osc52 \\x1b]52;c;aGVsbG8=\\x07"
    # an escaped control and the same escape typed literally never look alike
    assert shown["esc \x1b alone"] == "esc \\x1b alone"
    assert (
        shown["literal \\x1b and \\u2028 and \\\\"] == "literal \\\\x1b and \\\\u2028 and \\\\\\\\"
    )


def table_column(out: str, name: str) -> list[str]:
    """The cells of column ``name`` of ``query``'s table output (placed by its rule line)."""
    header, rule, *body = out.rstrip("\n").split("\n")
    starts = [i for i, ch in enumerate(rule) if ch == "-" and (i == 0 or rule[i - 1] == " ")]
    ends = [*(s - 2 for s in starts[1:]), None]
    index = [header[s:e].strip() for s, e in zip(starts, ends, strict=True)].index(name)
    return [line[starts[index] : ends[index]].rstrip() for line in body]


def test_table_escapes_decode_to_the_stored_text(notes: str):
    texts = table_column(query(notes, "--format", "table"), "text")
    assert [unescape(t) for t in texts] == HOSTILE
    assert texts[HOSTILE.index("bidi \u202egnp.exe")] == "bidi \\u202egnp.exe"


def test_a_cut_table_cell_never_splits_an_escape(backend_url: str):
    store = Store(backend_url)
    store.create(Note)
    store.insert(Note(1, "\x1b" * 40, {}))
    store.close()
    [cell] = table_column(query(backend_url, "--format", "table"), "text")
    assert cell == "\\x1b" * 14 + "..."  # 56 characters of whole escapes, then the cut


@pytest.fixture
def pane(tmp_path: Path) -> Iterator[Pane]:
    if shutil.which("tmux") is None:
        if IN_CI:
            pytest.fail("tmux is not installed (required under CI=true)")
        pytest.skip("tmux is not installed")
    running = Pane(f"entityworks-osc52-{time.monotonic_ns()}", tmp_path)
    running.tmux("set-option", "-s", "set-clipboard", "on")  # OSC 52 would fill a buffer
    yield running
    running.close()


def test_tmux_shows_the_escapes_and_its_clipboard_stays_empty(pane: Pane, tmp_path: Path):
    store = Store(tmp_path / "notes.db")
    store.create(Note)
    store.insert(Note(1, f"copy{OSC52}me\u202eevil", {}))
    store.close()
    pane.type(f"{BIN} query note --db notes.db -c text; echo done")
    screen = pane.wait_for(lambda text: "\ndone" in text)
    assert "copy\\x1b]52;c;aGVsbG8=\\x07me\\u202eevil" in screen
    assert pane.tmux("list-buffers") == ""
    # the oracle works: the same bytes printed raw do reach tmux's clipboard
    pane.type(
        f"printf '{OSC52.replace(chr(27), chr(92) + '033').replace(chr(7), chr(92) + 'a')}'"
        f"; echo; echo again"
    )
    pane.wait_for(lambda text: text.rstrip().endswith(PROMPT.rstrip()) and "\nagain" in text)
    assert "hello" in pane.tmux("show-buffer")

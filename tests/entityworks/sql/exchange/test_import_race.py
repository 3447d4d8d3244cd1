"""Two processes import into the same new database at once; one of them is refused late.

The refused import once cleaned up by deleting the new SQLite file, or dropping the new
MariaDB table, it believed it had made -- while the other process had just filled it and
reported "imported 20000 rows". Here two processes start together (a start file releases
both) again and again, into a new SQLite file or a new table on each backend: whoever
reports its rows imported has them in the database afterwards, and the refused one leaves
nothing of its own (no rows, no table, no file).

The rounds take turns between three ways of being refused late: the command line with a
value that cannot be decoded in the last row; ``Store.import_xml`` with a last row whose key
repeats an earlier one, which only the database refuses (the XSD declares no key); and the
command line into a catalog table (whose import opens, and so creates, the catalog first)
with a last puzzle that repeats an earlier one, which only the database's UNIQUE refuses.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from entityworks.catalog import SudokuPuzzle, open_catalog
from entityworks.xml.table import write_xml
from entityworks.xml.xsdwrite import xsd_bytes

ROOT = Path(__file__).resolve().parents[4]
# Enough rows that both imports are still writing when one is refused at its last row;
# three rounds of each way of being refused
ROWS = 8_000
ROUNDS = 9
MODES = ("cli", "api", "catalog")


@dataclass
class Token:
    id: int
    label: str


RUNNER = '''
"""One side of the race: for each round, wait for its start file, import, tell the result."""
import json, sys, time, traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from entityworks import Store, XMLImportError
from entityworks.cli import cli


@dataclass
class Token:
    id: int
    label: str


work, role, rounds = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
(work / f"ready-{role}").touch()
for n in range(rounds):
    go = work / f"go-{n}"
    while not go.exists():
        time.sleep(0.0005)
    task = json.loads(go.read_text())[role]
    status, out, err = 0, "", ""
    if task["how"] == "cli":
        result = CliRunner().invoke(cli, ["import-xml", task["xml"], "--xsd", task["xsd"],
                                          "--db", task["db"]])
        status, out, err = result.exit_code, result.stdout, result.stderr
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            err += "".join(traceback.format_exception(result.exception))
    else:
        try:
            with Store(task["db"]) as store:
                out = f"imported {store.import_xml(Token, task['xml'], task['xsd'])} rows"
        except XMLImportError as exc:
            status, err = 2, str(exc)
        except BaseException:
            status, err = 1, traceback.format_exc()
    done = work / f"done-{n}-{role}.tmp"
    done.write_text(json.dumps({"status": status, "out": out, "err": err}))
    done.rename(work / f"done-{n}-{role}")
'''


def documents(tmp_path: Path) -> dict[str, tuple[Path, Path]]:
    """The good documents (keys 1..ROWS) and those refused at their last row (keys after
    ROWS: they never clash with the good ones')."""
    good, xsd = tmp_path / "good.xml", tmp_path / "token.xsd"
    write_xml(Token, [Token(i, f"good {i}") for i in range(1, ROWS + 1)], good, xsd)
    bad = tmp_path / "bad.xml"
    write_xml(Token, [Token(i, f"bad {i}") for i in range(ROWS + 1, 2 * ROWS + 1)], bad)
    text = bad.read_text()
    last = f"<token><id>{2 * ROWS}</id>"
    assert text.count(last) == 1
    value = tmp_path / "value.xml"  # not a number: the decoder refuses it, at the end
    value.write_text(text.replace(last, "<token><id>x</id>"))
    twice = tmp_path / "twice.xml"  # an earlier key again: only the database refuses it
    twice.write_text(text.replace(last, f"<token><id>{ROWS + 1}</id>"))
    keyless = tmp_path / "keyless.xsd"
    schema = xsd_bytes(Token).decode()
    start, end = schema.index("<xs:unique"), schema.index("</xs:unique>") + len("</xs:unique>")
    keyless.write_text(schema[:start] + schema[end:])

    def puzzles(first: int) -> list[SudokuPuzzle]:
        made = dt.datetime(2024, 1, 1)
        return [
            SudokuPuzzle(i, "race", f"p{i}", f"{i:081d}", None, 0, 0, None, None, made)
            for i in range(first, first + ROWS)
        ]

    sudoku, sudoku_xsd = tmp_path / "sudoku.xml", tmp_path / "sudoku.xsd"
    write_xml(SudokuPuzzle, puzzles(1), sudoku, sudoku_xsd)
    repeated = tmp_path / "repeated.xml"  # the last puzzle text again: UNIQUE refuses it
    write_xml(SudokuPuzzle, puzzles(ROWS + 1), repeated)
    text = repeated.read_text()
    last_puzzle = f"<puzzle>{2 * ROWS:081d}</puzzle>"
    assert text.count(last_puzzle) == 1
    repeated.write_text(text.replace(last_puzzle, f"<puzzle>{ROWS + 1:081d}</puzzle>"))
    return {
        "cli": (good, xsd),
        "api": (good, xsd),
        "catalog": (sudoku, sudoku_xsd),
        "bad cli": (value, xsd),
        "bad api": (twice, keyless),
        "bad catalog": (repeated, sudoku_xsd),
    }


def database_url(backend_url: str, tmp_path: Path, n: int) -> str:
    """A new SQLite file (in a directory of its own) per round; a server database emptied."""
    if backend_url.startswith("sqlite"):
        folder = tmp_path / f"round-{n}"
        folder.mkdir()
        return f"sqlite:///{folder / 'race.db'}"
    engine = sa.create_engine(backend_url)
    try:
        metadata = sa.MetaData()
        metadata.reflect(engine)
        metadata.drop_all(engine)
    finally:
        engine.dispose()
    return backend_url


def wait_for(path: Path, proc: subprocess.Popen[str], seconds: float = 300) -> str:
    """The text of ``path`` once ``proc`` has written it."""
    deadline = time.monotonic() + seconds
    while not path.exists():
        if proc.poll() is not None and not path.exists():
            pytest.fail(f"a racer stopped: {proc.communicate()}")
        if time.monotonic() > deadline:
            pytest.fail(f"no {path.name} after {seconds} s")
        time.sleep(0.005)
    return path.read_text()


def check_round(
    url: str, n: int, good: dict[str, Any], bad: dict[str, Any], mode: str, catalog: set[str]
) -> None:
    where = f"round {n} ({mode})"
    assert good["status"] == 0, (where, good)
    assert good["out"].startswith(f"imported {ROWS} rows"), (where, good)
    assert bad["status"] == 2, (where, bad)
    column = "puzzle" if mode == "catalog" else "id"
    assert f"row {ROWS}" in bad["err"] and f"column {column!r}" in bad["err"], (where, bad)
    table = "sudoku_puzzles" if mode == "catalog" else "token"
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            tables = set(sa.inspect(conn).get_table_names())
            expected = {"token", "entityworks_schema"} if mode != "catalog" else catalog
            assert tables == expected, (where, tables)
            quoted = conn.dialect.identifier_preparer.quote(table)
            count, low, high = conn.execute(
                sa.text(f"SELECT count(*), min(id), max(id) FROM {quoted}")
            ).one()
            assert (count, low, high) == (ROWS, 1, ROWS), where  # the good rows, all of them
            if mode != "catalog":
                recorded = conn.execute(
                    sa.text("SELECT count(*) FROM entityworks_schema WHERE table_name = 'token'")
                ).scalar()
                assert recorded == 3, where  # the table and its two columns
    finally:
        engine.dispose()
    if url.startswith("sqlite"):
        path = Path(sa.make_url(url).database or "")
        left = {p.name for p in path.parent.iterdir()}
        assert left <= {"race.db", "race.db-wal", "race.db-shm"}, (where, left)


@pytest.mark.slow
def test_a_refused_import_never_takes_away_what_a_concurrent_one_committed(
    backend_url: str, tmp_path: Path
) -> None:
    docs = documents(tmp_path)
    with open_catalog(tmp_path / "catalog.db") as fresh:  # the tables a new catalog has
        catalog = set(fresh.table_names())
    work = tmp_path / "work"
    work.mkdir()
    runner = tmp_path / "racer.py"
    runner.write_text(RUNNER)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = {
        role: subprocess.Popen(
            [sys.executable, str(runner), str(work), role, str(ROUNDS)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for role in ("good", "bad")
    }
    try:
        for role, proc in procs.items():
            wait_for(work / f"ready-{role}", proc)
        for n in range(ROUNDS):
            mode = MODES[n % len(MODES)]
            how = "api" if mode == "api" else "cli"
            url = database_url(backend_url, tmp_path, n)
            task = {
                role: {"how": how, "db": url, "xml": str(docs[name][0]), "xsd": str(docs[name][1])}
                for role, name in (("good", mode), ("bad", f"bad {mode}"))
            }
            go = work / f"go-{n}.tmp"
            go.write_text(json.dumps(task))
            go.rename(work / f"go-{n}")  # both start now
            results = {
                role: json.loads(wait_for(work / f"done-{n}-{role}", proc))
                for role, proc in procs.items()
            }
            check_round(url, n, results["good"], results["bad"], mode, catalog)
    finally:
        for proc in procs.values():
            proc.kill()
            proc.communicate()


def test_a_killed_import_into_a_new_file_leaves_nothing_the_next_one_keeps(tmp_path: Path) -> None:
    """An import into a new SQLite file works on a private ``.NAME.<token>.importing`` file;
    killed (SIGKILL), it leaves that file behind. The next import into the same name removes
    it -- but never the file of an import still running, whose lock is held."""
    import fcntl
    import signal

    rows = [Token(i, f"token {i}") for i in range(400_000)]
    xml, xsd = tmp_path / "tokens.xml", tmp_path / "tokens.xsd"
    write_xml(Token, rows, xml, xsd)
    target = tmp_path / "new.db"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [
        sys.executable,
        "-m",
        "entityworks",
        "import-xml",
        str(xml),
        "--xsd",
        str(xsd),
        "--db",
        str(target),
    ]
    child = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    found: list[Path] = []
    while time.monotonic() < deadline and child.poll() is None:
        found = list(tmp_path.glob(".new.db.*.importing"))
        if found and found[0].stat().st_size > 0:
            break
        time.sleep(0.02)
    assert found and child.poll() is None, "the import ended before it could be killed"
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert list(tmp_path.glob(".new.db.*.importing")) == found  # left behind by the kill
    assert not target.exists()

    # an import that is still running: its file is locked, and must be left alone
    running = tmp_path / ".new.db.0123456789abcdef.importing"
    held = os.open(running, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(held, fcntl.LOCK_EX)
    try:
        small_xml = tmp_path / "small.xml"
        write_xml(Token, rows[:50], small_xml, xsd)
        done = subprocess.run(
            [*command[:4], str(small_xml), *command[5:]],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        assert "imported 50 rows" in done.stdout
        left = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".new.db"))
        assert left == [running.name]
    finally:
        os.close(held)
    engine = sa.create_engine(f"sqlite:///{target}")
    with engine.connect() as conn:
        assert conn.execute(sa.text("SELECT count(*) FROM token")).scalar() == 50
    engine.dispose()

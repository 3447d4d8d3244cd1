"""Crash safety: writers killed with SIGKILL at random moments, ``generate`` interrupted with
SIGINT. Afterwards the SQLite file passes ``PRAGMA integrity_check`` and every transaction is
either wholly present or absent; a re-run completes the work."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.reliability.conftest import ROOT, SEED, child_command, child_env
from tests.reliability.workload import BATCH_ID_STRIDE

ROWS = 1_000_000


def integrity(db: Path) -> str:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        conn.close()


def check_batches(db: Path, first: int = 0) -> tuple[int, int]:
    """Batches from ``first`` on are complete (``size`` rows, seq 0..size-1, payloads
    intact) and numbered without a gap; returns (last batch + 1, rows checked)."""
    assert integrity(db) == "ok"
    conn = sqlite3.connect(db)
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        if "crash_row" not in tables:
            return 0, 0
        low_id = first * BATCH_ID_STRIDE
        groups = conn.execute(
            "SELECT batch, count(*), count(DISTINCT seq), min(seq), max(seq), min(size), "
            "max(size) FROM crash_row WHERE id >= ? GROUP BY batch ORDER BY batch",
            (low_id,),
        ).fetchall()
        bad_payloads = conn.execute(
            "SELECT count(*) FROM crash_row WHERE id >= ? AND (substr(payload, 1, "
            "length(batch || ':' || seq || ':')) != batch || ':' || seq || ':' "
            "OR id != batch * ? + seq)",
            (low_id, BATCH_ID_STRIDE),
        ).fetchone()[0]
    finally:
        conn.close()
    assert bad_payloads == 0
    for number, (batch, count, distinct, low, high, size, size2) in enumerate(groups, first):
        assert batch == number, f"batch {number} missing while batch {batch} is present"
        assert size == size2 and count == distinct == size, (
            f"batch {batch} is partial: {count} of {size} rows"
        )
        assert (low, high) == (0, size - 1)
    return first + len(groups), sum(g[1] for g in groups)


def _read_ready(proc: subprocess.Popen[str], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    line = proc.stdout.readline()  # type: ignore[union-attr]
    assert line.strip() == "ready" or proc.poll() is not None, line
    assert time.monotonic() < deadline


def _read_begin(proc: subprocess.Popen[str]) -> str:
    """Read the writer's output up to its next ``begin N`` line (or its end); return it."""
    seen = []
    while True:
        line = proc.stdout.readline()  # type: ignore[union-attr]
        seen.append(line)
        if not line or line.startswith("begin "):
            return "".join(seen)


def kill_runs(
    args: list[str], db: Path, kills: int, rng: random.Random, window: float
) -> dict[str, Any]:
    """Start the writer ``kills`` times and SIGKILL it at a random moment each time; check
    the database after every kill."""
    mid_transaction = early = checked = 0
    for _ in range(kills):
        read = ""
        proc = subprocess.Popen(
            child_command(*args),
            cwd=ROOT,
            env=child_env(),
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        draw = rng.random()
        if draw < 0.2:  # sometimes while it starts up, opens or creates the table
            time.sleep(rng.uniform(0.0, 0.8))
            early += 1
        elif draw < 0.55:
            # right after a batch began: its rows are being written, whatever the machine's
            # load does to the timing of the random kills below
            _read_ready(proc)
            read = _read_begin(proc)
            time.sleep(rng.uniform(0.0, 0.002))
        else:
            _read_ready(proc)
            time.sleep(rng.uniform(0.0, window))
        proc.send_signal(signal.SIGKILL)
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == -signal.SIGKILL, (proc.returncode, err)
        lines = (read + out).split()
        begun = [int(lines[i + 1]) for i, w in enumerate(lines) if w == "begin"]
        committed = {int(lines[i + 1]) for i, w in enumerate(lines) if w == "commit"}
        if begun and begun[-1] not in committed:
            mid_transaction += 1
        # Only the last batches can have been touched by this run: check those (the whole
        # file is checked at the end).
        checked, _rows = check_batches(db, max(checked - 1, 0))
    return {"kills": kills, "mid_transaction": mid_transaction, "during_startup": early}


def finish(args: list[str], db: Path) -> tuple[int, int]:
    """A last, uninterrupted run writes up to the target; then check everything."""
    done = subprocess.run(
        child_command(*args),
        cwd=ROOT,
        env=child_env(),
        text=True,
        capture_output=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return check_batches(db)


@pytest.mark.slow
def test_insert_many_survives_sigkill(tmp_path, figures):
    rng = random.Random(SEED)
    db = tmp_path / "crash.db"
    endless = ["crash-insert", str(db), "0", str(SEED)]
    stats = kill_runs(endless, db, kills=24, rng=rng, window=0.15)
    batches, rows = finish(["crash-insert", str(db), str(ROWS), str(SEED)], db)
    assert rows >= ROWS
    assert stats["mid_transaction"] >= 1, stats  # the case that matters did happen
    figures["crash_insert_many"] = {**stats, "batches": batches, "rows_checked": rows}


@pytest.mark.slow
def test_import_xml_survives_sigkill(tmp_path, figures):
    rng = random.Random(SEED + 1)
    db = tmp_path / "crash_xml.db"
    folder = tmp_path / "xml"
    folder.mkdir()
    endless = ["crash-xml", str(db), str(folder), "0", str(SEED)]
    stats = kill_runs(endless, db, kills=12, rng=rng, window=0.4)
    batches, rows = finish(["crash-xml", str(db), str(folder), str(ROWS), str(SEED)], db)
    assert rows >= ROWS
    assert stats["mid_transaction"] >= 1, stats
    figures["crash_import_xml"] = {**stats, "batches": batches, "rows_checked": rows}


# -- entityworks generate, interrupted with Ctrl-C -------------------------------------------

ENTITYWORKS = Path(sys.executable).with_name("entityworks")
GENERATE = ["generate", "dungeon", "--width", "60", "--height", "40", "--workers", "2"]
PARAMS = {"width": 60, "height": 40}


def _entityworks(*args: str) -> list[str]:
    if ENTITYWORKS.exists():
        return [str(ENTITYWORKS), *args]
    return [sys.executable, "-m", "entityworks", *args]


def check_catalog(db: Path, rng: random.Random, seeds: dict[int, int]) -> int:
    """Every stored map has exactly the child rows its seed rebuilds; seeds of each run form
    a prefix; no orphan child rows. Returns the number of maps."""
    from entityworks.catalog import MapRecord, build_map, open_catalog

    assert integrity(db) == "ok"
    store = open_catalog(db)  # also proves the schema is at head (or finishes creating it)
    try:
        maps = list(store.select(MapRecord, order_by="id"))
        conn = sqlite3.connect(db)
        try:
            orphans = sum(
                conn.execute(
                    f"SELECT count(*) FROM {t} WHERE parent_key NOT IN (SELECT id FROM maps)"
                ).fetchone()[0]
                for t in ("maps_rooms", "maps_corridors", "maps_caves")
            )
        finally:
            conn.close()
        assert orphans == 0
        by_run: dict[int, list[int]] = {}
        for m in maps:
            by_run.setdefault(m.seed // 100_000, []).append(m.seed)
        for run, found in by_run.items():
            first = seeds[run]
            assert found == list(range(first, first + len(found))), f"run {run}: a gap"
        tail = maps[-8:]
        sample = tail + rng.sample(maps, min(len(maps), 24))
        for m in sample:
            again = build_map("dungeon", m.seed, PARAMS)
            assert (len(m.rooms), len(m.corridors)) == (len(again.rooms), len(again.corridors))
            assert m.rooms == again.rooms and [c.path for c in m.corridors] == [
                c.path for c in again.corridors
            ]
        return len(maps)
    finally:
        store.close()


@pytest.mark.slow
def test_generate_interrupted_with_ctrl_c_keeps_the_catalog_consistent(tmp_path, figures):
    rng = random.Random(SEED + 2)
    db = tmp_path / "catalog.db"
    seeds: dict[int, int] = {}
    interrupts = 6
    outcomes: dict[str, int] = {}
    for run in range(interrupts):
        seeds[run] = run * 100_000
        proc = subprocess.Popen(
            _entityworks(*GENERATE, "--count", "3000", "--seed", str(seeds[run]), "--db", str(db)),
            cwd=tmp_path,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )  # its own process group, as a terminal's Ctrl-C reaches
        time.sleep(rng.uniform(0.2, 3.0))
        os.killpg(proc.pid, signal.SIGINT)
        _out, err = proc.communicate(timeout=60)
        # 0: the interrupt landed in one of Python's own at-fork hooks, which swallows it
        # ("Exception ignored"), and the run finished; the catalog must be consistent anyway.
        assert proc.returncode in (0, 1, -signal.SIGINT, 130), (proc.returncode, err)
        key = "aborted" if "error: aborted" in err else f"exit {proc.returncode}"
        outcomes[key] = outcomes.get(key, 0) + 1
        check_catalog(db, rng, seeds)
    before = check_catalog(db, rng, seeds)
    seeds[interrupts] = interrupts * 100_000
    rerun = subprocess.run(
        _entityworks(*GENERATE, "--count", "24", "--seed", str(seeds[interrupts]), "--db", str(db)),
        cwd=tmp_path,
        text=True,
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert rerun.returncode == 0, rerun.stderr
    assert rerun.stdout.startswith("stored 24 dungeon maps")
    after = check_catalog(db, rng, seeds)
    assert after == before + 24
    figures["generate_sigint"] = {
        "interrupts": interrupts,
        "outcomes": outcomes,
        "maps_checked": after,
    }

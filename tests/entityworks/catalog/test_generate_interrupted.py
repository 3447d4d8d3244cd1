"""A worker process of ``generate`` killed mid-run (issue 29, item 9): the maps built before it
died are stored, the error says which (count, seeds, ids) and how to build the rest, and doing
so stores every seed exactly once. Checked against the database itself (the seeds stored) and
against the generator (a resumed map is the map of its seed).
"""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from entityworks import catalog
from entityworks.catalog import MapRecord
from entityworks.catalog import _generate as catalog_generate
from entityworks.catalog._build import encode_chunk
from generators.maps import caves

#: The worker building this seed dies (as under kill -9 or the OOM killer).
DOOMED_SEED = 41
SMALL = {"width": 40, "height": 30}


def dying_chunk(kind: str, seeds: list[int | None], params: dict[str, Any]) -> Any:
    """``encode_chunk``, except that the worker building :data:`DOOMED_SEED` dies at once."""
    if DOOMED_SEED in seeds:
        os._exit(9)
    return encode_chunk(kind, seeds, params)


def _seeds(url: str) -> list[int]:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            return [s for (s,) in conn.execute(sa.text("SELECT seed FROM maps ORDER BY id"))]
    finally:
        engine.dispose()


def test_a_dead_worker_keeps_what_was_built_and_says_how_to_resume(
    backend_url: str, monkeypatch
) -> None:
    monkeypatch.setattr(catalog_generate, "encode_chunk", dying_chunk)
    monkeypatch.setattr(catalog_generate, "STORE_BATCH", 4)  # batches written as they come
    store = catalog.open_catalog(backend_url)
    try:
        with pytest.raises(catalog.WorkerLost) as caught:
            catalog.generate_into(store, "caves", 100, seed=1, params=SMALL, workers=2)
        lost = caught.value
        stored = _seeds(backend_url)
        # what the database holds is what the error says: a run of seeds from the first
        assert stored == list(range(1, 1 + lost.stored)) and lost.stored < DOOMED_SEED
        assert lost.seeds == tuple(stored)
        assert (lost.next_seed, lost.remaining) == (1 + lost.stored, 100 - lost.stored)
        text = str(lost)
        assert text.startswith(
            "a worker process died (killed, or out of memory) while generating caves maps: "
        )
        if lost.stored > 1:
            assert f"stored {lost.stored} of 100 caves maps (seeds 1-{lost.stored}, " in text
        assert f"build the rest with count={100 - lost.stored}, seed={1 + lost.stored}" in text
        # the resume it names, without the dying worker: every seed once
        monkeypatch.setattr(catalog_generate, "encode_chunk", encode_chunk)
        catalog.generate_into(
            store, "caves", lost.remaining, seed=lost.next_seed, params=SMALL, workers=2
        )
        assert sorted(_seeds(backend_url)) == list(range(1, 101))
        resumed = catalog.find_maps(store, seed=DOOMED_SEED)
        assert len(resumed) == 1
        expected = caves.generate(seed=DOOMED_SEED, **SMALL)
        assert (resumed[0].grid == expected.grid).all()
    finally:
        store.close()


def test_a_dead_worker_under_refuse_short_stores_nothing(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(catalog_generate, "encode_chunk", dying_chunk)
    monkeypatch.setattr(catalog_generate, "STORE_BATCH", 4)
    url = f"sqlite:///{tmp_path / 'levels.db'}"
    store = catalog.open_catalog(url)
    try:
        with pytest.raises(
            catalog.WorkerLost,
            match="stored none of the 100 caves maps "
            r"\(refuse_short: one transaction, "
            r"rolled back\); build the rest with "
            r"count=100, seed=1",
        ) as caught:
            catalog.generate_into(
                store, "caves", 100, seed=1, params=SMALL, workers=2, refuse_short=True
            )
        assert caught.value.rolled_back and store.count(MapRecord) == 0
    finally:
        store.close()


def test_a_dead_worker_without_a_seed_says_how_many_are_left(tmp_path: Path, monkeypatch) -> None:
    """Fresh seeds: the rest is the count alone (its maps draw fresh seeds again). The pool
    breaking is what ``concurrent.futures`` reports when a worker dies."""
    real = catalog_generate.generate_encoded

    def dies_after_five(kind: str, count: int, **kwargs: Any) -> Any:
        yield from real(kind, 5, **kwargs)
        raise BrokenProcessPool("A process in the process pool was terminated abruptly")

    monkeypatch.setattr(catalog_generate, "generate_encoded", dies_after_five)
    store = catalog.open_catalog(tmp_path / "levels.db")
    try:
        with pytest.raises(catalog.WorkerLost) as caught:
            catalog.generate_into(store, "caves", 20, params=SMALL)
        lost = caught.value
        assert lost.stored == store.count(MapRecord) == 5
        assert lost.next_seed is None and lost.remaining == 15
        assert "stored 5 of 20 caves maps (a fresh seed each, ids 1-5)" in str(lost)
        assert "build the rest with count=15, the other arguments unchanged" in str(lost)
    finally:
        store.close()


# -- the command line, with a real kill -9 ----------------------------------------------------


def _pool_workers(pid: int) -> list[int]:
    """The pool's worker processes: children forked from ``pid`` (same command line)."""
    try:
        own = Path(f"/proc/{pid}/cmdline").read_bytes()
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return []
    workers = []
    for child in map(int, children):
        try:
            if Path(f"/proc/{child}/cmdline").read_bytes() == own:
                workers.append(child)
        except OSError:
            continue
    return workers


def _count_rows(db: Path) -> int:
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=0.1) as conn:
            return int(conn.execute("SELECT COUNT(*) FROM maps").fetchone()[0])
    except sqlite3.Error:
        return 0


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs Linux's /proc")
def test_cli_generate_after_kill_9_of_a_worker(tmp_path: Path) -> None:
    db = tmp_path / "levels.db"
    command = [
        sys.executable,
        "-m",
        "entityworks",
        "generate",
        "caves",
        "-n",
        "300",
        "--seed",
        "10",
        "-j",
        "2",
        "--no-progress",
        "--db",
        str(db),
    ]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while _count_rows(db) == 0 and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        workers = _pool_workers(process.pid)
        assert process.poll() is None and workers, "the run ended before a worker was killed"
        os.kill(workers[0], signal.SIGKILL)
        stdout, stderr = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 2, (stdout, stderr)
    assert stdout == "" and len(stderr.splitlines()) == 1, stderr
    assert "a bug" not in stderr and "Traceback" not in stderr
    stored = _seeds(f"sqlite:///{db}")
    k = len(stored)
    assert k >= 1 and stored == list(range(10, 10 + k))
    seeds = "seed 10" if k == 1 else f"seeds 10-{9 + k}"
    ids = "id 1" if k == 1 else f"ids 1-{k}"
    assert stderr == (
        f"error: a worker process died (killed, or out of memory): stored {k} "
        f"of 300 caves maps ({seeds}, {ids}); to build the rest, run the same "
        f"command with --count {300 - k} --seed {10 + k}\n"
    )
    again = re.search(r"--count (\d+) --seed (\d+)", stderr)
    assert again is not None
    resume = [*command[:5], "-n", again[1], "--seed", again[2], *command[9:]]
    done = subprocess.run(resume, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    everything = _seeds(f"sqlite:///{db}")
    assert sorted(everything) == list(range(10, 310))  # each seed exactly once

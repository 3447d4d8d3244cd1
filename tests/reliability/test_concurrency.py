"""Concurrent writers: 4 processes and 8 threads sharing one Store write one catalog at once
for 30 s (``ENTITYWORKS_RELIABILITY_SECONDS`` shortens it outside CI). No row is lost, every
count matches what the writers committed, and no locking error reaches a writer."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from typing import Any

import pytest

from entityworks.catalog import MapRecord, open_catalog
from tests.reliability.conftest import ROOT, child_command, child_env, writer_seconds
from tests.reliability.workload import SLOTS, Slot, Tick, sample_map, write_for, writer_base

PROCESSES = 4
THREADS = 8


def run_writers(url: str, seconds: float) -> list[dict[str, Any]]:
    names = [f"p{i}" for i in range(PROCESSES)] + [f"t{i}" for i in range(THREADS)]
    start_at = time.time() + 3.0  # children import, then all start together
    procs = [
        subprocess.Popen(
            child_command("concurrent", url, name, str(seconds), str(start_at), ",".join(names)),
            cwd=ROOT,
            env=child_env(),
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for name in names[:PROCESSES]
    ]
    template = sample_map()
    time.sleep(max(0.0, start_at - time.time()))
    store = open_catalog(url)  # races the children's migrations and table creation
    store.create(Tick)
    store.create(Slot)
    results: list[dict[str, Any]] = []

    def thread_writer(name: str) -> None:
        results.append(write_for(store, name, seconds, names, template))

    threads = [threading.Thread(target=thread_writer, args=(name,)) for name in names[PROCESSES:]]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for proc in procs:
        out, err = proc.communicate(timeout=seconds + 120)
        assert proc.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))
    try:
        verify(store, results, names)
    finally:
        store.close()
    return results


def verify(store: Any, results: list[dict[str, Any]], names: list[str]) -> None:
    errors = [f"{r['name']}: {e}" for r in results for e in r["errors"]]
    assert not errors, "\n".join(errors[:20])
    assert sorted(r["name"] for r in results) == sorted(names)
    for r in results:
        name = r["name"]
        ticks = sorted(t.seq for t in store.select(Tick, where={"writer": name}))
        assert ticks == list(range(r["ticks"])), f"{name}: rows lost or duplicated"
        maps = list(store.select(MapRecord, where={"kind": f"w:{name}"}))
        assert len(maps) == r["maps"]
        assert all(
            len(m.rooms) == len(maps[0].rooms) and len(m.corridors) == len(maps[0].corridors)
            for m in maps
        )
        base = writer_base(name, names)
        slots = {s.id: s.version for s in store.select(Slot, where=[{"writer": name}])}
        assert slots == {int(k): v for k, v in r["slots"].items()}
        assert all(base <= k < base + SLOTS for k in slots)
    assert store.count(Tick) == sum(r["ticks"] for r in results)
    assert store.count(MapRecord) == sum(r["maps"] for r in results)


def summary(results: list[dict[str, Any]], seconds: float) -> dict[str, Any]:
    return {
        "processes": PROCESSES,
        "threads": THREADS,
        "seconds": seconds,
        "operations": sum(r["ops"] for r in results),
        "ticks": sum(r["ticks"] for r in results),
        "maps": sum(r["maps"] for r in results),
        "worst_call_seconds": max(r["worst_seconds"] for r in results),
    }


@pytest.mark.slow
def test_sqlite_catalog_with_concurrent_writers(tmp_path, figures):
    seconds = writer_seconds()
    url = f"sqlite:///{tmp_path / 'shared.db'}"
    results = run_writers(url, seconds)
    figures["concurrency_sqlite"] = summary(results, seconds)


@pytest.mark.slow
def test_postgresql_catalog_with_concurrent_writers(pg_url, figures):
    seconds = writer_seconds()
    results = run_writers(pg_url, seconds)
    figures["concurrency_postgresql"] = summary(results, seconds)

"""Row classes and writer loops shared by the reliability tests and their child processes.

Everything a child process does lives here so that the test process and the children agree
on the tables. Children are started as ``python -m tests.reliability.child MODE ...``.
"""

from __future__ import annotations

import dataclasses
import gc
import json
import random
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from entityworks import Store, primary_key

# -- crash safety ------------------------------------------------------------------------------


@dataclass
class CrashRow:
    """One row of a batch written in one transaction: the batch is checkable as a whole
    (``size`` rows, ``seq`` 0..size-1, ``payload`` derived from both)."""

    id: int
    batch: int
    seq: int
    size: int
    payload: str


BATCH_ID_STRIDE = 1_000_000


def batch_size(seed: int, batch: int, low: int, high: int) -> int:
    return random.Random(seed * 1_000_003 + batch).randint(low, high)


def batch_rows(batch: int, size: int) -> list[CrashRow]:
    base = batch * BATCH_ID_STRIDE
    return [
        CrashRow(base + i, batch, i, size, f"{batch}:{i}:{'x' * (i % 17)}") for i in range(size)
    ]


def _described(exc: BaseException) -> str:
    """The error and where in entityworks it was raised (the innermost frames of ours), so
    that a failure seen once in CI says which statement met it."""
    ours = [
        f"{Path(f.filename).name}:{f.lineno} {f.name}"
        for f in traceback.extract_tb(exc.__traceback__)
        if "/entityworks/" in f.filename
    ][-6:]
    return (
        f"{type(exc).__module__}.{type(exc).__name__}: {str(exc)[:400]} "
        f"[at {' <- '.join(reversed(ours))}]"
    )


def _say(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def _resume(store: Store) -> tuple[int, int]:
    """(next batch number, rows already committed)."""
    last = next(iter(store.select(CrashRow, order_by="-id", limit=1)), None)
    return (0 if last is None else last.batch + 1), store.count(CrashRow)


def crash_insert(db: str, target: int, seed: int) -> None:
    """Write batches with ``insert_many`` (odd batches: two calls in one ``transaction()``)
    until ``target`` rows are committed; prints ``begin N`` / ``commit N`` around each."""
    store = Store(db)
    store.create(CrashRow)
    batch, total = _resume(store)
    # A full collection now, not at whatever moment start-up's allocations leave it to: kills
    # are timed from "ready" and must land inside batches as often as between them.
    gc.collect()
    _say("ready")
    while target <= 0 or total < target:
        size = batch_size(seed, batch, 2_000, 20_000)
        rows = batch_rows(batch, size)
        _say(f"begin {batch}")
        if batch % 2:
            with store.transaction():
                half = size // 2
                store.insert_many(rows[:half])
                store.insert_many(rows[half:])
        else:
            store.insert_many(rows)
        _say(f"commit {batch}")
        total += size
        batch += 1
    store.close()


def crash_xml(db: str, folder: str, target: int, seed: int) -> None:
    """Write each batch as an XML file, then ``import_xml`` it (one transaction per file)."""
    from entityworks import write_xml

    store = Store(db)
    store.create(CrashRow)
    batch, total = _resume(store)
    _say("ready")
    while target <= 0 or total < target:
        size = batch_size(seed, batch, 5_000, 25_000)
        path = Path(folder) / f"batch_{batch}.xml"
        if not path.exists():  # a killed run may have left it complete (written atomically)
            write_xml(CrashRow, batch_rows(batch, size), path)
        _say(f"begin {batch}")
        count = store.import_xml(CrashRow, path)
        _say(f"commit {batch}")
        assert count == size, (count, size)
        path.unlink()
        total += size
        batch += 1
    store.close()


# -- concurrency ---------------------------------------------------------------------------------


@dataclass
class Tick:
    """A row written by one concurrent writer; ``seq`` counts that writer's rows from 0."""

    id: int | None = primary_key()
    writer: str = ""
    seq: int = 0
    note: str = ""


@dataclass
class Slot:
    """Upserted by one writer over its own key range, again and again."""

    id: int
    writer: str
    version: int


SLOTS = 16  # keys per writer


def writer_base(name: str, names: list[str]) -> int:
    return 1_000 * (names.index(name) + 1)


def sample_map() -> Any:
    """A small dungeon map with rooms and corridors (child rows)."""
    from entityworks.catalog import build_map

    return build_map("dungeon", 7, {"width": 40, "height": 30})


def write_for(
    store: Store, name: str, seconds: float, names: list[str], template: Any
) -> dict[str, Any]:
    """Write as fast as possible for ``seconds``; return what was committed.

    Operations rotate: a batch of ticks with generated keys, two batches in one
    ``transaction()``, a map with its child rows, an upsert of the writer's slots, and a
    read-your-writes count. Every exception is recorded: none should happen.
    """
    from entityworks.catalog import MapRecord

    rng = random.Random(name)
    ticks = maps = ops = 0
    versions: dict[int, int] = {}
    errors: list[str] = []
    base = writer_base(name, names)
    deadline = time.monotonic() + seconds
    step = 0
    worst = 0.0
    while time.monotonic() < deadline:
        kind = step % 5
        step += 1
        started = time.monotonic()
        try:
            if kind == 0:
                n = rng.randint(1, 40)
                batch = [Tick(None, name, ticks + i, "t" * rng.randint(0, 60)) for i in range(n)]
                store.insert_many(batch)
                ticks += n
            elif kind == 1:
                n = rng.randint(1, 20)
                first = [Tick(None, name, ticks + i) for i in range(n)]
                second = [Tick(None, name, ticks + n + i) for i in range(n)]
                with store.transaction():
                    store.insert_many(first)
                    store.insert_many(second)
                ticks += 2 * n
            elif kind == 2:
                record = dataclasses.replace(
                    template,
                    id=None,
                    kind=f"w:{name}",
                    rooms=list(template.rooms),
                    corridors=list(template.corridors),
                    caves=list(template.caves),
                )
                store.insert(record)
                maps += 1
            elif kind == 3:
                keys = rng.sample(range(SLOTS), rng.randint(1, SLOTS))
                rows = [Slot(base + k, name, versions.get(k, 0) + 1) for k in keys]
                store.upsert_many(rows)
                for k in keys:
                    versions[k] = versions.get(k, 0) + 1
            else:
                seen = store.count(Tick, where={"writer": name})
                if seen != ticks:
                    errors.append(f"read-your-writes: counted {seen}, committed {ticks}")
                seen_maps = store.count(MapRecord, where={"kind": f"w:{name}"})
                if seen_maps != maps:
                    errors.append(f"read-your-writes: {seen_maps} maps, committed {maps}")
            ops += 1
        except Exception as exc:  # recorded, reported and failed on by the test
            errors.append(_described(exc))
        worst = max(worst, time.monotonic() - started)
    return {
        "name": name,
        "ticks": ticks,
        "maps": maps,
        "ops": ops,
        "slots": {str(base + k): v for k, v in versions.items()},
        "errors": errors,
        "worst_seconds": round(worst, 3),
    }


def concurrent_child(
    url: str, name: str, seconds: float, start_at: float, names: list[str]
) -> None:
    """One writer process: open the catalog (racing the others), then write until done."""
    from entityworks.catalog import open_catalog

    template = sample_map()
    errors: list[str] = []
    delay = start_at - time.time()
    if delay > 0:
        time.sleep(delay)
    try:
        store = open_catalog(url)
        store.create(Tick)
        store.create(Slot)
    except Exception as exc:
        errors.append("open: " + _described(exc))
        _say(
            json.dumps(
                {
                    "name": name,
                    "ticks": 0,
                    "maps": 0,
                    "ops": 0,
                    "slots": {},
                    "errors": errors,
                    "worst_seconds": 0,
                }
            )
        )
        return
    result = write_for(store, name, seconds, names, template)
    result["errors"] = errors + result["errors"]
    store.close()
    _say(json.dumps(result))

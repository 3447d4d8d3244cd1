"""Shared pieces of the benchmarks: the realistic ``Mixed`` row, one row class per type, the
int-heavy ``Row8``, the alternating timer and the figures' record (``record``)."""

from __future__ import annotations

import gc
import json
import os
import platform
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any


@dataclass
class Row8:
    """The benchmark row: int key, five ints, an Optional[str] with nulls, a float."""

    id: int
    a: int
    b: int
    c: int
    d: int
    e: int
    label: str | None
    value: float


def make_rows(n: int = 200_000, seed: int = 7) -> list[Row8]:
    rng = random.Random(seed)
    return [
        Row8(
            i,
            rng.randrange(1000),
            rng.randrange(10**6),
            i * 3,
            -i,
            rng.randrange(2),
            None if i % 5 == 0 else f"label-{i % 977}",
            rng.random(),
        )
        for i in range(1, n + 1)
    ]


@dataclass
class Mixed:
    """The realistic row: int key, int, float, str, bool, datetime, ``str | None`` (20 % None)
    and a Decimal with two places."""

    id: int
    n: int
    x: float
    s: str
    flag: bool
    at: datetime
    note: str | None
    amount: Decimal


def make_mixed(n: int = 200_000, seed: int = 7) -> list[Mixed]:
    rng = random.Random(seed)
    base = datetime(2024, 1, 1)
    return [
        Mixed(
            i,
            rng.randrange(-(10**9), 10**9),
            rng.uniform(-1e6, 1e6),
            f"text {rng.randrange(10**6)}",
            rng.random() < 0.5,
            base + timedelta(seconds=rng.randrange(10**8), microseconds=rng.randrange(10**6)),
            None if i % 5 == 0 else f"note {i % 977}",
            Decimal(rng.randrange(-(10**9), 10**9)).scaleb(-2),
        )
        for i in range(1, n + 1)
    ]


@dataclass
class Ints:
    id: int
    a: int
    b: int


@dataclass
class Floats:
    id: int
    a: float
    b: float


@dataclass
class Texts:
    id: int
    a: str
    b: str


@dataclass
class Bools:
    id: int
    a: bool
    b: bool


@dataclass
class Datetimes:
    id: int
    a: datetime
    b: datetime


@dataclass
class Decimals:
    id: int
    a: Decimal
    b: Decimal


def make_per_type(n: int = 200_000, seed: int = 7) -> dict[str, list[Any]]:
    """One row class per type (key + two columns of that type), ``n`` rows each."""
    mixed = make_mixed(n, seed)
    return {
        "int": [Ints(m.id, m.n, m.id * 3) for m in mixed],
        "float": [Floats(m.id, m.x, m.x / 3) for m in mixed],
        "str": [Texts(m.id, m.s, m.note or "") for m in mixed],
        "bool": [Bools(m.id, m.flag, not m.flag) for m in mixed],
        "datetime": [Datetimes(m.id, m.at, m.at + timedelta(days=1)) for m in mixed],
        "Decimal": [Decimals(m.id, m.amount, -m.amount) for m in mixed],
    }


def best_run(
    fn: Callable[[], Any], repeat: int = 3, setup: Callable[[], Any] | None = None
) -> tuple[float, Any]:
    """Best wall time of ``repeat`` runs (setup excluded) and the last run's result."""
    best, result = float("inf"), None
    for _ in range(repeat):
        if setup is not None:
            setup()
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def best_of(
    fn: Callable[[], Any], repeat: int = 3, setup: Callable[[], Any] | None = None
) -> float:
    """Best wall time of ``repeat`` runs (setup excluded)."""
    return best_run(fn, repeat, setup)[0]


def alternate(*fns: Callable[[], Any], repeat: int = 3) -> list[float]:
    """Best wall time of each function, the runs interleaved and each after a full collect.

    Interleaving gives both sides the same garbage-collector state and machine load; a
    baseline timed entirely before the contender would not.
    """
    best = [float("inf")] * len(fns)
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            gc.collect()
            start = time.perf_counter()
            fn()
            best[i] = min(best[i], time.perf_counter() - start)
    return best


def line(
    name: str, baseline: str, base_rate: float, ours_rate: float, unit: str = "rows/s"
) -> None:
    print(
        f"{name:<34} baseline {baseline}: {base_rate:>12,.0f} {unit}   "
        f"ours: {ours_rate:>12,.0f} {unit}   ratio {ours_rate / base_rate:5.2f}x"
    )


#: When set, every figure a benchmark prints is also appended to this file as one JSON line;
#: ``benchmarks/report.py`` runs the benchmarks with it set and renders the docs' tables from
#: what they recorded, so no figure in the docs is typed by hand.
RECORD_ENV = "ENTITYWORKS_BENCH_RECORD"


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for text in info:
                if text.startswith("model name"):
                    return text.split(":", 1)[1].strip()
    except OSError:  # pragma: no cover - not Linux
        pass
    return platform.processor() or platform.machine()


def record(
    bench: str,
    work: str,
    row: str,
    peer: str,
    peer_value: float,
    ours_value: float,
    unit: str,
    *,
    lower_is_better: bool = False,
) -> None:
    """Append one figure (ours and the peer, measured in the same run) to the record file.

    ``unit`` is what both values count (``rows/s``, ``us/call``...); ``lower_is_better`` for
    times. The record keeps the machine and its load beside the figure.
    """
    path = os.environ.get(RECORD_ENV)
    if not path:
        return
    speed = peer_value / ours_value if lower_is_better else ours_value / peer_value
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        cores = os.cpu_count() or 1
    entry = {
        "bench": bench,
        "work": work,
        "row": row,
        "peer": peer,
        "unit": unit,
        "peer_value": peer_value,
        "ours_value": ours_value,
        "lower_is_better": lower_is_better,
        "speed": speed,
        "load": round(os.getloadavg()[0], 2),
        "cores": cores,
        "cpu": _cpu_model(),
        "python": platform.python_version(),
    }
    with open(path, "a", encoding="utf-8") as out:
        out.write(json.dumps(entry) + "\n")

"""Shared pieces of the benchmarks: the 8-column row class and a timer."""

from __future__ import annotations

import gc
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
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
    return [Row8(i, rng.randrange(1000), rng.randrange(10**6), i * 3, -i, rng.randrange(2),
                 None if i % 5 == 0 else f"label-{i % 977}", rng.random())
            for i in range(1, n + 1)]


def best_run(fn: Callable[[], Any], repeat: int = 3, setup: Callable[[], Any] | None = None
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


def best_of(fn: Callable[[], Any], repeat: int = 3, setup: Callable[[], Any] | None = None
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


def line(name: str, baseline: str, base_rate: float, ours_rate: float, unit: str = "rows/s"
         ) -> None:
    print(f"{name:<34} baseline {baseline}: {base_rate:>12,.0f} {unit}   "
          f"ours: {ours_rate:>12,.0f} {unit}   ratio {ours_rate / base_rate:5.2f}x")

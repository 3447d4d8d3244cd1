"""Catalog generation throughput: ``entityworks generate caves --count 1000`` on 1 worker
(the baseline) and on one worker per core, each into a fresh SQLite catalog.

    python benchmarks/bench_generate.py               # 1000 default 100x100 caves (~2 min)
    python benchmarks/bench_generate.py --count 200   # quicker

Targets (issue 6): at least 1.7x the single-worker rate on 2 cores, and storage (the time the
main process spends writing rows) under 10 % of the wall time. The figures come from the same
library call the command makes (``entityworks.catalog.generate_into``). On a shared machine the
parallel figure depends on what else runs, so the benchmark also prints the CPU time per map
and a probe of the machine's own ceiling: the same number of independent processes doing
plain generation, with no catalog at all.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from entityworks.catalog import GenerateStats, generate_into, open_catalog  # noqa: E402


def cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def cpu_seconds() -> float:
    """User + system CPU of this process and of its finished children (the workers)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def timed_run(kind: str, count: int, workers: int, folder: Path) -> tuple[GenerateStats, float]:
    store = open_catalog(folder / f"catalog_{workers}.db")
    try:
        before = cpu_seconds()
        stats = generate_into(store, kind, count, seed=1, workers=workers)
        return stats, cpu_seconds() - before
    finally:
        store.close()


def _plain_generation(kind: str, count: int) -> float:
    """Generate ``count`` maps with no storage and no catalog rows; returns the wall time."""
    from entityworks.catalog import map_kind

    generate = map_kind(kind).function()
    start = time.perf_counter()
    for seed in range(count):
        generate(seed=seed)
    return time.perf_counter() - start


def machine_ceiling(kind: str, workers: int, count: int) -> float:
    """How much faster ``workers`` independent processes go than one (same work each):
    the best scaling this machine allows right now, whatever the program."""
    with ProcessPoolExecutor(max_workers=workers) as pool:
        pool.submit(_plain_generation, kind, 1).result()  # start-up outside the timing
        one = pool.submit(_plain_generation, kind, count).result()
        start = time.perf_counter()
        list(pool.map(_plain_generation, [kind] * workers, [count] * workers))
        together = time.perf_counter() - start
    return workers * one / together


def line(label: str, stats: GenerateStats, cpu: float) -> str:
    return (f"  {label:<22} {stats.count} maps in {stats.seconds:7.2f} s = "
            f"{stats.maps_per_second:7.1f} maps/s; storage {stats.storage_seconds:.2f} s "
            f"({stats.storage_share:.1%} of the time, "
            f"{1e3 * stats.storage_cpu_seconds / stats.count:.2f} ms/map of this process's "
            f"CPU); CPU {1e3 * cpu / stats.count:.1f} ms/map")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--kind", default="caves")
    parser.add_argument("--workers", type=int, default=cores())
    parser.add_argument("--probe", type=int, default=40,
                        help="maps per process for the machine-ceiling probe (0: skip)")
    args = parser.parse_args()
    print(f"generate {args.kind} --count {args.count} (generator defaults), "
          f"{cores()} core(s) available")
    print(f"  load average before: {os.getloadavg()[0]:.2f} (other work on the machine "
          f"lowers the parallel figure; the CPU per map shows the work itself)")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        single, single_cpu = timed_run(args.kind, args.count, 1, folder)
        print(line("baseline (1 worker):", single, single_cpu))
        multi, multi_cpu = timed_run(args.kind, args.count, args.workers, folder)
        print(line(f"ours ({args.workers} workers):", multi, multi_cpu))
    ratio = multi.maps_per_second / single.maps_per_second
    print(f"  scaling ours/baseline: {ratio:.2f}x   (target >= 1.7x on 2 cores)")
    print(f"  storage share with {args.workers} workers: {multi.storage_share:.1%}   "
          f"(target < 10 %)")
    print(f"  load average after: {os.getloadavg()[0]:.2f}")
    if args.probe:
        ceiling = machine_ceiling(args.kind, args.workers, args.probe)
        print(f"  machine ceiling now: {args.workers} independent generator processes run "
              f"{ceiling:.2f}x one (no catalog, no storage; {args.probe} maps each)")


if __name__ == "__main__":
    main()

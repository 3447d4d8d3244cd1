"""Catalog generation throughput: ``entityworks generate caves --count 1000`` on 1 worker
(the baseline) and on one worker per core, each into a fresh SQLite catalog.

    python benchmarks/bench_generate.py               # 1000 default 100x100 caves (~2 min)
    python benchmarks/bench_generate.py --count 200   # quicker

Targets (issue 6): at least 1.7x the single-worker rate on 2 cores, and storage (the time the
main process spends writing rows) under 10 % of the wall time. The figures come from the same
library call the command makes (``entityworks.catalog.generate_into``).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
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


def line(label: str, stats: GenerateStats, cpu: float) -> str:
    return (f"  {label:<22} {stats.count} maps in {stats.seconds:7.2f} s = "
            f"{stats.maps_per_second:7.1f} maps/s; storage {stats.storage_seconds:.2f} s "
            f"({stats.storage_share:.1%} of the time); CPU {1e3 * cpu / stats.count:.1f} ms/map")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--kind", default="caves")
    parser.add_argument("--workers", type=int, default=cores())
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


if __name__ == "__main__":
    main()

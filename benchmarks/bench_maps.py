"""Map benchmarks: each prints the baseline, our figure and their ratio, timed in one run.

    python benchmarks/bench_maps.py            # everything (under a minute)
    python benchmarks/bench_maps.py --quick    # faithful visits timed on 1M, extrapolated

Targets (issue 4): synchronous 4-5 step within 4x of a bare NumPy 3x3 neighbour sum;
fast random visits at least 20x faster than the faithful loop (1000x1000, 5,000,000
visits) with the same statistics; FOV radius 10 on a 1000x1000 cave faster per call than
``tcod`` FOV_SHADOW; dungeon with defaults under 50 ms. Numbers on a shared machine are
noisy: every figure is the best of several repeats.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import best_of  # noqa: E402

from generators import cellular, dungeon, fov, islands  # noqa: E402
from generators._visits import random_fill, run_visits  # noqa: E402


def report(name: str, baseline_label: str, baseline: float, ours: float, target: str) -> None:
    print(
        f"{name}\n  baseline ({baseline_label}): {baseline * 1e3:10.3f} ms\n"
        f"  ours:{'':{len(baseline_label) + 8}}{ours * 1e3:10.3f} ms\n"
        f"  ratio ours/baseline: {ours / baseline:.3f}   ({target})"
    )


def bench_step() -> None:
    grid = cellular.fill(1000, 1000, 45, 1, seed=1)

    def numpy_neighbour_sum() -> np.ndarray:
        padded = np.pad(grid, 1, mode="constant", constant_values=1)
        total = padded[:-2, :-2] + padded[:-2, 1:-1]
        total += padded[:-2, 2:]
        total += padded[1:-1, :-2]
        total += padded[1:-1, 2:]
        total += padded[2:, :-2]
        total += padded[2:, 1:-1]
        total += padded[2:, 2:]
        return total

    baseline = best_of(numpy_neighbour_sum, 15)
    ours = best_of(lambda: cellular.step(grid, "synchronous"), 15)
    report(
        "synchronous 4-5 step, 1000x1000",
        "NumPy padded-slice 3x3 neighbour sum",
        baseline,
        ours,
        "target <= 4",
    )


def bench_visits(quick: bool) -> None:
    size, visits = 1000, 5_000_000
    start = random_fill(size, size, 45, np.random.default_rng(3))

    fast = best_of(lambda: run_visits(start, visits, 4, np.random.default_rng(4), fast=True), 3)
    if quick:
        sample = 1_000_000
        slow = best_of(
            lambda: run_visits(start, sample, 4, np.random.default_rng(4), fast=False), 1
        )
        slow *= visits / sample
        label = f"faithful loop, timed on {sample:,} visits x {visits // sample}"
    else:
        slow = best_of(
            lambda: run_visits(start, visits, 4, np.random.default_rng(4), fast=False), 2
        )
        label = f"faithful one-by-one loop, {visits:,} visits"
    report(
        f"random visits, {size}x{size}, {visits:,} visits",
        label,
        slow,
        fast,
        f"speed-up {slow / fast:.1f}x, target >= 20x",
    )

    # statistics: same density of visits (5 per cell) on maps the faithful loop can afford
    print("  statistics over 4 seeds, 300x300 maps, 450,000 visits (faithful vs fast):")
    for island in (True, False):
        rows = {}
        for mode in islands.MODES:
            maps = [
                islands.generate(300, 300, island=island, visits=450_000, seed=s, mode=mode)
                for s in range(4)
            ]
            rows[mode] = (
                statistics.mean(m.open_ratio for m in maps),
                statistics.mean(m.regions for m in maps),
            )
        (o1, r1), (o2, r2) = rows["faithful"], rows["fast"]
        kind = "island   " if island else "labyrinth"
        print(
            f"    {kind} open ratio {o1:.4f} vs {o2:.4f} ({(o2 - o1) / o1:+.2%}),"
            f" regions {r1:.1f} vs {r2:.1f} ({(r2 - r1) / r1:+.2%})"
        )


def bench_fov() -> None:
    import tcod.constants
    import tcod.map

    grid = cellular.generate(1000, 1000, 45, blank_rows=3, mode="synchronous", seed=5).grid
    transparency = grid == 0
    rng = np.random.default_rng(6)
    floors = np.argwhere(transparency)
    origins = [(int(x), int(y)) for y, x in floors[rng.choice(len(floors), 200, replace=False)]]

    def theirs() -> None:
        for x, y in origins:
            tcod.map.compute_fov(
                transparency, (y, x), radius=10, algorithm=tcod.constants.FOV_SHADOW
            )

    def ours() -> None:
        for origin in origins:
            fov.visible(grid, origin, 10)

    for x, y in origins[:20]:  # same answer, or the timing means nothing
        expected = tcod.map.compute_fov(
            transparency, (y, x), radius=10, algorithm=tcod.constants.FOV_SHADOW
        )
        assert np.array_equal(fov.visible(grid, (x, y), 10), expected)
    per_call_theirs = best_of(theirs, 3) / len(origins)
    per_call_ours = best_of(ours, 3) / len(origins)
    report(
        "FOV radius 10 on a 1000x1000 cave (per call, identical results)",
        "tcod.map.compute_fov FOV_SHADOW",
        per_call_theirs,
        per_call_ours,
        "target < 1",
    )


def bench_dungeon() -> None:
    times = []
    for seed in range(60):
        start = time.perf_counter()
        dungeon.generate(seed=seed)
        times.append(time.perf_counter() - start)
    print(
        "dungeon, defaults (150x150, one_start_room, 15 rooms), 60 seeds\n"
        f"  median {statistics.median(times) * 1e3:.2f} ms, max {max(times) * 1e3:.2f} ms"
        "   (target < 50 ms)"
    )
    linked = []
    for seed in range(30):
        start = time.perf_counter()
        dungeon.generate(seed=seed, method="connected_start_rooms")
        linked.append(time.perf_counter() - start)
    print(
        "  connected_start_rooms: median "
        f"{statistics.median(linked) * 1e3:.2f} ms, max {max(linked) * 1e3:.2f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick", action="store_true", help="time the faithful visit loop on 1M visits only"
    )
    args = parser.parse_args()
    bench_step()
    bench_visits(args.quick)
    bench_fov()
    bench_dungeon()


if __name__ == "__main__":
    main()

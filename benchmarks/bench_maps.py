"""Map benchmarks: each prints the baseline, our figure and their ratio, timed in one run.

    python benchmarks/bench_maps.py            # everything (a few minutes)
    python benchmarks/bench_maps.py --quick    # FOV at radius 10 and unlimited only
    python benchmarks/bench_maps.py --fov      # the FOV tables alone

Targets: synchronous 4-5 step within 4x of a bare NumPy 3x3 neighbour sum (issue 4); the
faithful (in-place, seed-order) step, the caves' faithful smoothing and filling and the
faithful random-visit loop within 2x of the synchronous step, the fast smoothing and the
batched visits (issue 11); FOV at or below tcod's time at radii
5, 10, 20, 50 and unlimited on 200x200 and 1000x1000 caves, plain (``FOV_SHADOW``) and
symmetric (``FOV_SYMMETRIC_SHADOWCAST``), every result checked equal first (issue 11); the
reusable view (``FieldOfView``) at or below a reused ``tcod.map.Map`` at radius 10 and
unlimited on both maps, plain and symmetric, cell for cell equal (issue 22);
dungeon with defaults under 50 ms. Paired figures alternate baseline and ours, collect
garbage before each run and keep the best of several; the load average is printed with
each group, since the machine is shared.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import alternate, best_of, record  # noqa: E402

from generators.maps import caves, cellular, dungeon, islands  # noqa: E402
from generators.maps._visits import random_fill, run_visits  # noqa: E402
from generators.view import fov  # noqa: E402
from generators.view.field import FieldOfView  # noqa: E402


def load_avg() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


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


def bench_faithful_step() -> None:
    grid = cellular.fill(1000, 1000, 45, 1, seed=1)
    for r2, label in ((False, "4-5 rule"), (True, "4-5 + RogueBasin R2 clause")):
        sync, faithful = alternate(
            lambda r2=r2: cellular.step(grid, "synchronous", r2=r2),
            lambda r2=r2: cellular.step(grid, "faithful", r2=r2),
            repeat=15,
        )
        report(f"faithful (in-place) step vs synchronous, 1000x1000, {label}",
               "synchronous step (NumPy)", sync, faithful, "target <= 2")  # fmt: skip
    print(f"  # {load_avg()}")


def bench_caves_smoothing() -> None:
    cave = random_fill(1000, 1000, 45, np.random.default_rng(5))
    fast, faithful = alternate(
        lambda: caves._smooth_fill_fast(cave, 5, 3, 4),
        lambda: caves._smooth_fill_faithful(cave, 5, 3, 4),
        repeat=15,
    )
    report("caves: 5 smoothing passes + filling, faithful (in place) vs fast, 1000x1000",
           "fast (NumPy, synchronous)", fast, faithful, "target <= 2")  # fmt: skip
    print(f"  # {load_avg()}")


def bench_visits() -> None:
    size, visits = 1000, 5_000_000
    start = random_fill(size, size, 45, np.random.default_rng(3))
    fast, faithful = alternate(
        lambda: run_visits(start, visits, 4, np.random.default_rng(4), fast=True),
        lambda: run_visits(start, visits, 4, np.random.default_rng(4), fast=False),
        repeat=3,
    )
    report(f"faithful random visits vs batched, {size}x{size}, {visits:,} visits",
           "fast (NumPy batches)", fast, faithful, "target <= 2")  # fmt: skip
    print(f"  # {load_avg()}")

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


def _fov_case(grid: np.ndarray, origins: list[tuple[int, int]], radius: int | None,
              symmetric: bool) -> tuple[float, float, float, float]:  # fmt: skip
    """Per-call seconds: tcod on the window, visible_window, tcod on the map, visible."""
    import tcod.constants
    import tcod.map

    algorithm = (tcod.constants.FOV_SYMMETRIC_SHADOWCAST if symmetric
                 else tcod.constants.FOV_SHADOW)  # fmt: skip
    transparency = grid == 0
    size = max(grid.shape)
    reach = size if radius is None else radius
    windows = []
    for x, y in origins:
        x0, y0 = max(0, x - reach), max(0, y - reach)
        windows.append((transparency[y0 : y + reach + 1, x0 : x + reach + 1], (y - y0, x - x0)))

    # identical answers first, or the timing means nothing. libtcod's symmetric view cuts
    # at distance < radius where ours, like FOV_SHADOW, keeps <= radius: its unlimited view
    # cut to our disc is compared with ours in its arithmetic (libtcod_ties).
    for (window, pov), origin in list(zip(windows, origins, strict=True))[:20]:
        mask, corner = fov.visible_window(grid, origin, radius, symmetric=symmetric,
                                          libtcod_ties=symmetric)  # fmt: skip
        if symmetric:
            ys, xs = np.indices(window.shape)
            expected = tcod.map.compute_fov(window, pov, radius=0, algorithm=algorithm)
            if radius is not None:
                expected &= (xs - pov[1]) ** 2 + (ys - pov[0]) ** 2 <= radius * radius
        else:
            expected = tcod.map.compute_fov(window, pov, radius=radius or 0, algorithm=algorithm)
        assert np.array_equal(mask, expected), (origin, radius, symmetric)

    def theirs_window() -> None:
        for window, pov in windows:
            tcod.map.compute_fov(window, pov, radius=radius or 0, algorithm=algorithm)

    def ours_window() -> None:
        for origin in origins:
            fov.visible_window(grid, origin, radius, symmetric=symmetric)

    def theirs_map() -> None:
        for x, y in origins:
            tcod.map.compute_fov(transparency, (y, x), radius=radius or 0, algorithm=algorithm)

    def ours_map() -> None:
        for origin in origins:
            fov.visible(grid, origin, radius, symmetric=symmetric)

    times = alternate(theirs_window, ours_window, theirs_map, ours_map, repeat=5)
    tw, ow, tm, om = (t / len(origins) for t in times)
    return tw, ow, tm, om


def bench_fov(quick: bool) -> None:
    """Per call, on 200 random floor origins of a cave. "window": tcod gets the window the
    radius can reach (its fastest use), ours is ``fov.visible_window`` on the whole map;
    "map": full-map masks, tcod on the whole map against ``fov.visible``."""
    radii: tuple[int | None, ...] = (10, None) if quick else (5, 10, 20, 50, None)
    print("FOV per call (us), 200 origins, identical results checked first")
    print(f"  {'map':<10}{'radius':>9}{'variant':>10}{'tcod window':>13}{'ours':>9}"
          f"{'ratio':>7}{'tcod map':>11}{'ours':>9}{'ratio':>7}")  # fmt: skip
    for size in (200, 1000):
        grid = cellular.generate(size, size, 45, blank_rows=3, mode="synchronous", seed=5).grid
        rng = np.random.default_rng(6)
        floors = np.argwhere(grid == 0)
        picks = floors[rng.choice(len(floors), 200, replace=False)]
        origins = [(int(x), int(y)) for y, x in picks]
        for radius in radii:
            for symmetric in (False, True):
                tw, ow, tm, om = (t * 1e6 for t in _fov_case(grid, origins, radius, symmetric))
                label = "unlimited" if radius is None else str(radius)
                kind = "symmetric" if symmetric else "plain"
                print(f"  {f'{size}x{size}':<10}{label:>9}{kind:>10}{tw:>13.1f}{ow:>9.1f}"
                      f"{ow / tw:>7.2f}{tm:>11.1f}{om:>9.1f}{om / tm:>7.2f}")  # fmt: skip
        print(f"  # {load_avg()}")


def _fov_maps() -> list[tuple[int, np.ndarray, list[tuple[int, int]]]]:
    """The benchmark's caves (our cellular generator, seeded) and 200 floor origins each."""
    maps = []
    for size in (200, 1000):
        grid = cellular.generate(size, size, 45, blank_rows=3, mode="synchronous", seed=5).grid
        rng = np.random.default_rng(6)
        floors = np.argwhere(grid == 0)
        picks = floors[rng.choice(len(floors), 200, replace=False)]
        maps.append((size, grid, [(int(x), int(y)) for y, x in picks]))
    return maps


def _fov_reused_times(view: FieldOfView, reused: Any, transparency: np.ndarray,
                      origins: list[tuple[int, int]], radius: int | None,
                      symmetric: bool) -> list[float]:  # fmt: skip
    """Per-call microseconds, alternated: ours, tcod's reused Map, tcod's function and, for
    the symmetric view, ours in libtcod's arithmetic."""
    import tcod.constants
    import tcod.map

    algorithm = (tcod.constants.FOV_SYMMETRIC_SHADOWCAST if symmetric
                 else tcod.constants.FOV_SHADOW)  # fmt: skip
    reach = radius or 0

    def ours(ties: bool = False) -> None:
        compute = view.compute
        for origin in origins:
            compute(origin, radius, True, symmetric, libtcod_ties=ties)

    def tcod_map() -> None:
        compute = reused.compute_fov
        for x, y in origins:
            compute(x, y, reach, True, algorithm)
            reused.fov  # noqa: B018 - reading the result is part of a call

    def tcod_function() -> None:
        for x, y in origins:
            tcod.map.compute_fov(transparency, (y, x), radius=reach, algorithm=algorithm)

    runs = [ours, tcod_map, tcod_function]
    if symmetric:
        runs.append(lambda: ours(True))
    # best of 9: on a shared machine the best run is the one least disturbed
    return [t / len(origins) * 1e6 for t in alternate(*runs, repeat=9)]


def bench_fov_reused() -> None:
    """The reusable view against both ways of calling tcod, per call, on the same origins:
    ``FieldOfView.compute`` (map checked once, its buffer reused) against a reused
    ``tcod.map.Map`` (transparency set once; ``compute_fov`` then reading ``map.fov``) and
    against the ``tcod.map.compute_fov`` function (a libtcod map built per call). Symmetric
    rows time our default (exact) view and, as "libtcod arith.", ``libtcod_ties=True``: the
    view computed in libtcod's single-precision arithmetic, which is the one equal to
    ``FOV_SYMMETRIC_SHADOWCAST`` cell for cell. Every view of every origin is checked equal
    first (plain: ``FOV_SHADOW``; symmetric: libtcod's unlimited view cut to our disc, since
    it cuts at ``< radius`` where we and ``FOV_SHADOW`` keep ``<=``). Ratios are our time
    over tcod's: below 1 we are faster."""
    import warnings

    import tcod.constants
    import tcod.map

    print("FOV, reusable view, per call (us), 200 floor origins, every view checked equal first;"
          " ratio = ours / tcod time")  # fmt: skip
    print(f"  {'map':<10}{'radius':>9}{'variant':>17}{'ours':>9}{'tcod Map':>10}"
          f"{'tcod fn':>10}{'/Map':>7}{'/fn':>7}  load")  # fmt: skip
    for size, grid, origins in _fov_maps():
        transparency = grid == 0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # "no longer needed": timed
            reused = tcod.map.Map(size, size)
        reused.transparent[:] = transparency
        view = FieldOfView(grid)
        ys, xs = np.indices(grid.shape)
        for radius in (10, None):
            for symmetric in (False, True):
                algorithm = (tcod.constants.FOV_SYMMETRIC_SHADOWCAST if symmetric
                             else tcod.constants.FOV_SHADOW)  # fmt: skip
                reach = radius or 0
                for x, y in origins:
                    seen = view.compute((x, y), radius, True, symmetric, libtcod_ties=symmetric)
                    if symmetric:
                        reused.compute_fov(x, y, 0, True, algorithm)
                        expected = reused.fov.copy()
                        if radius is not None:
                            expected &= (xs - x) ** 2 + (ys - y) ** 2 <= radius * radius
                    else:
                        reused.compute_fov(x, y, reach, True, algorithm)
                        expected = reused.fov
                        function = tcod.map.compute_fov(transparency, (y, x), radius=reach,
                                                        algorithm=algorithm)  # fmt: skip
                        assert np.array_equal(function, expected), (size, x, y, radius)
                    assert np.array_equal(seen, expected), (size, x, y, radius, symmetric)

                times = _fov_reused_times(view, reused, transparency, origins, radius,
                                          symmetric)  # fmt: skip
                label = "unlimited" if radius is None else str(radius)
                kinds = ["symmetric", "libtcod arith."] if symmetric else ["plain"]
                for kind, mine in zip(kinds, [times[0], *times[3:]], strict=True):
                    print(f"  {f'{size}x{size}':<10}{label:>9}{kind:>17}{mine:>9.2f}"
                          f"{times[1]:>10.2f}{times[2]:>10.1f}{mine / times[1]:>7.3f}"
                          f"{mine / times[2]:>7.3f}  {os.getloadavg()[0]:.2f}")  # fmt: skip
                    reach_text = "unlimited radius" if radius is None else f"radius {radius}"
                    record(
                        "fov",
                        f"{size}x{size}, {reach_text}, {kind}",
                        "cave map, 200 floor origins",
                        "reused tcod.map.Map",
                        times[1],
                        mine,
                        "us/call",
                        lower_is_better=True,
                    )
        print(f"  # {load_avg()}")


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
    parser.add_argument("--quick", action="store_true", help="FOV at radius 10 and unlimited only")
    parser.add_argument("--fov", action="store_true", help="the FOV tables alone")
    args = parser.parse_args()
    print(f"# {load_avg()}")
    if args.fov:
        bench_fov_reused()
        bench_fov(args.quick)
        return
    bench_step()
    bench_faithful_step()
    bench_caves_smoothing()
    bench_visits()
    bench_fov_reused()
    bench_fov(args.quick)
    bench_dungeon()


if __name__ == "__main__":
    main()

"""How many caves the cave post's "Several Large Caves" settings give, and why not always three.

The post (csCaveGenerator, seeds 002/004) sets MaxSizeToRemove 1500, MinSizeToRemove 450 and
EmptyCells > EmptyCellNeighbours 3 (the filling threshold), clicks Build "a few times" and shows
three caves. This script counts the caves of many maps under those settings, each way the
post can be read, and prints the distribution (the figures of docs/explanation/seeds.md):

* ``code``: our generator as the C# code is written (the default, ``mode="faithful"``);
* ``prose-neighbours``: the prose's "when this value is equalled or exceeded" (``>= 4``)
  instead of the code's ``> 4`` for the visit rule;
* ``prose-lower``: the prose's "smaller than" (``< 450`` removed) instead of ``<= 450``;
* ``prose-close``: the prose's "the chance of closing a visited cell": every visit first
  closes an open visited cell with that chance, then applies the rule (the code uses the
  chance only for the initial fill);
* ``prose-all``: the three prose readings together;
* ``dotnet``: the whole C# pipeline in plain Python driven by a port of .NET's
  ``System.Random`` (the seeded Knuth subtractive generator), seeds 0, 1, ...: shows
  whether the random source matters;
* ``clicks``: the demo application's own stream, ``new Random(12345)`` once, then Build
  clicked again and again: the exact maps the post's author saw, click after click.

Only cave finding matters here (the counts are taken before corridors, which never change
them). It also prints the cave sizes before the size limits, the counts with one parameter
changed, and the islands' two readings of their close probability. Usage (the page's
figures): ``python benchmarks/cave_counts.py --maps 2000 --slow-maps 200 --clicks 400``.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import time
from collections.abc import Callable, Iterable

import numpy as np
from scipy import ndimage

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from generators.maps import caves  # noqa: E402

POST = {"lower_limit": 450, "upper_limit": 1500, "filling_neighbours": 3}
DEFAULTS = {
    "width": 100,
    "height": 100,
    "close_cell_prob": 45,
    "visits": 50_000,
    "neighbours": 4,
    "smoothing": 5,
    "empty_neighbours": 3,
}


def _i32(value: int) -> int:
    """C#'s ``int`` arithmetic: wrap to 32-bit two's complement."""
    return (value + 2**31) % 2**32 - 2**31


class DotNetRandom:
    """.NET's seeded ``System.Random`` (Knuth's subtractive generator, 55 words), with the
    C# ``int`` overflow of its seeding kept (large seeds depend on it)."""

    MBIG = 2**31 - 1
    MSEED = 161803398

    def __init__(self, seed: int) -> None:
        table = [0] * 56
        subtraction = self.MBIG if seed == -(2**31) else abs(seed)
        mj = _i32(self.MSEED - subtraction)
        table[55] = mj
        mk = 1
        for i in range(1, 55):
            ii = (21 * i) % 55
            table[ii] = mk
            mk = _i32(mj - mk)
            if mk < 0:
                mk = _i32(mk + self.MBIG)
            mj = table[ii]
        for _ in range(4):
            for i in range(1, 56):
                table[i] = _i32(table[i] - table[1 + (i + 30) % 55])
                if table[i] < 0:
                    table[i] = _i32(table[i] + self.MBIG)
        self.table = table
        self.inext = 0
        self.inextp = 21

    def _sample(self) -> int:
        inext = self.inext + 1 if self.inext < 55 else 1
        inextp = self.inextp + 1 if self.inextp < 55 else 1
        value = _i32(self.table[inext] - self.table[inextp])
        if value == self.MBIG:
            value -= 1
        if value < 0:
            value = _i32(value + self.MBIG)
        self.table[inext] = value
        self.inext, self.inextp = inext, inextp
        return value

    def next(self, low: int, high: int) -> int:
        """``Next(low, high)``: ``low .. high - 1`` (ranges below 2**31 only)."""
        return int(self._sample() * (1.0 / self.MBIG) * (high - low)) + low


def csharp_caves(
    rnd: DotNetRandom,
    lower: int,
    upper: int,
    filling: int,
    width: int = 100,
    height: int = 100,
    close_prob: int = 45,
    iterations: int = 50_000,
    neighbours: int = 4,
    empty: int = 3,
) -> int:
    """BuildCaves + GetCaves as the C# runs them (1 = cave), with its loop bounds and draw
    order; returns the number of caves kept."""
    cells = [[0] * height for _ in range(width)]  # cells[x][y], as Map[x, y]
    for x in range(width):
        column = cells[x]
        for y in range(height):
            if rnd.next(0, 100) < close_prob:
                column[y] = 1
    for _ in range(iterations + 1):
        cx = rnd.next(0, width)
        cy = rnd.next(0, height)
        count = 0
        for x in range(max(cx - 1, 0), min(cx + 2, width)):
            column = cells[x]
            for y in range(max(cy - 1, 0), min(cy + 2, height)):
                count += column[y]
        cells[cx][cy] = 1 if count > neighbours else 0

    def around(x: int, y: int, value: int) -> int:
        n = 0
        for nx, ny in ((x, y - 1), (x, y + 1), (x + 1, y), (x - 1, y)):
            if 0 <= nx < width and 0 <= ny < height and cells[nx][ny] == value:
                n += 1
        return n

    for _ in range(5):
        for x in range(width):
            for y in range(height):
                if cells[x][y] > 0 and around(x, y, 0) >= empty:
                    cells[x][y] = 0
    for x in range(width):
        for y in range(height):
            if cells[x][y] == 0 and around(x, y, 1) >= filling:
                cells[x][y] = 1
    return _count_caves(np.array(cells, dtype=np.uint8), lower, upper)


def _count_caves(cave: np.ndarray, lower: int, upper: int) -> int:
    labels, count = ndimage.label(cave)  # 4-connected: scipy's default structure
    sizes = np.bincount(labels.ravel())[1:]
    return int(np.count_nonzero((sizes > lower) & (sizes <= upper)))


def prose_close_caves(
    seed: int,
    lower: int,
    upper: int,
    filling: int,
    neighbours_ge: bool,
    width: int = 100,
    height: int = 100,
    close_prob: int = 45,
    visits: int = 50_000,
    neighbours: int = 4,
    empty: int = 3,
) -> int:
    """The prose's reading of Close Cell Prob: each visit closes an open visited cell with
    that chance before the neighbour rule (initial fill as the code); numpy random source."""
    rng = np.random.default_rng(seed)
    cave = (rng.integers(0, 100, size=(height, width)) < close_prob).astype(np.uint8)
    padded = np.pad(cave, 1).tolist()
    spots = rng.integers(0, width * height, size=visits).tolist()
    rolls = rng.integers(0, 100, size=visits).tolist()
    threshold = neighbours - 1 if neighbours_ge else neighbours
    for spot, roll in zip(spots, rolls, strict=True):
        y, x = divmod(spot, width)
        y += 1
        x += 1
        if padded[y][x] == 0 and roll < close_prob:
            padded[y][x] = 1
        count = (
            sum(padded[y - 1][x - 1 : x + 2])
            + sum(padded[y][x - 1 : x + 2])
            + sum(padded[y + 1][x - 1 : x + 2])
        )
        padded[y][x] = 1 if count > threshold else 0
    grid = np.array(padded, dtype=np.uint8)[1:-1, 1:-1]
    smoothed = caves._smooth_fill_faithful(grid, 5, empty, filling)
    return _count_caves(smoothed, lower, upper)


def ours(seed: int, **params: int) -> int:
    settings = {**DEFAULTS, **POST, **params}
    return len(caves.generate(seed=seed, connect=False, **settings).caves)  # type: ignore[arg-type]


def distribution(counts: Iterable[int]) -> collections.Counter[int]:
    return collections.Counter(counts)


def row(name: str, counter: collections.Counter[int], seconds: float) -> str:
    total = sum(counter.values())
    share = [100.0 * counter.get(k, 0) / total for k in range(4)]
    more = 100.0 * sum(v for k, v in counter.items() if k >= 4) / total
    three_up = 100.0 * sum(v for k, v in counter.items() if k >= 3) / total
    mean = sum(k * v for k, v in counter.items()) / total
    top = max(counter)
    cells = "  ".join(f"{s:5.1f}" for s in share)
    return (
        f"{name:18s} {total:6d}  {cells}  {more:5.1f}   {three_up:5.1f}  {mean:5.2f}  "
        f"{top:3d}  {seconds:6.1f}"
    )


def prose_islands(
    seed: int,
    width: int = 99,
    height: int = 99,
    close_prob: int = 45,
    neighbours: int = 4,
    visits: int = 50_000,
) -> np.ndarray:
    """csIslandMaze's prose: every visit first closes an open visited cell with chance p,
    then applies the island rule (the code only fills at random once, before the visits)."""
    rng = np.random.default_rng(seed)
    grid = (rng.integers(0, 100, size=(height, width)) < close_prob).astype(np.uint8)
    padded = np.pad(grid, 1).tolist()
    spots = rng.integers(0, width * height, size=visits).tolist()
    rolls = rng.integers(0, 100, size=visits).tolist()
    for spot, roll in zip(spots, rolls, strict=True):
        y, x = divmod(spot, width)
        y += 1
        x += 1
        if padded[y][x] == 0 and roll < close_prob:
            padded[y][x] = 1
        count = (
            sum(padded[y - 1][x - 1 : x + 2])
            + sum(padded[y][x - 1 : x + 2])
            + sum(padded[y + 1][x - 1 : x + 2])
        )
        padded[y][x] = 1 if count > neighbours else 0
    return np.array(padded, dtype=np.uint8)[1:-1, 1:-1]


def island_figures(grids: Iterable[np.ndarray]) -> str:
    opens, regions = [], []
    for grid in grids:
        opens.append(float((grid == 0).mean()))
        regions.append(ndimage.label(grid == 0)[1])
    return (
        f"open {100 * np.mean(opens):5.1f} % (sd {100 * np.std(opens):4.1f}), "
        f"floor regions {np.mean(regions):6.1f}"
    )


HEADER = (
    f"{'variant':18s} {'maps':>6s}  {'0':>5s}  {'1':>5s}  {'2':>5s}  {'3':>5s}  "
    f"{'>=4':>5s}   {'>=3':>5s}  {'mean':>5s}  {'max':>3s}  {'s':>6s}   (% of maps)"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--maps", type=int, default=1000, help="maps per variant")
    parser.add_argument(
        "--slow-maps",
        type=int,
        default=200,
        help="maps for the pure-Python variants (prose-close, dotnet)",
    )
    parser.add_argument(
        "--clicks", type=int, default=400, help="Build clicks replayed from new Random(12345)"
    )
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    print(f"settings: {POST} (others at the C# defaults)")
    print(HEADER)
    variants: list[tuple[str, int, Callable[[int], int]]] = [
        ("code", args.maps, lambda s: ours(s)),
        ("prose-neighbours", args.maps, lambda s: ours(s, neighbours=3)),
        ("prose-lower", args.maps, lambda s: ours(s, lower_limit=449)),
        (
            "prose-close",
            args.slow_maps,
            lambda s: prose_close_caves(s, 450, 1500, 3, neighbours_ge=False),
        ),
        (
            "prose-all",
            args.slow_maps,
            lambda s: prose_close_caves(s, 449, 1500, 3, neighbours_ge=True),
        ),
        ("dotnet", args.slow_maps, lambda s: csharp_caves(DotNetRandom(s), 450, 1500, 3)),
        (
            "defaults 16/500/4",
            args.maps,
            lambda s: ours(s, lower_limit=16, upper_limit=500, filling_neighbours=4),
        ),
    ]
    for name, n, make in variants:
        start = time.perf_counter()
        counter = distribution(make(seed) for seed in range(n))
        print(row(name, counter, time.perf_counter() - start), flush=True)

    print("\nwhat the count depends on (code reading, one parameter changed):")
    print(HEADER)
    sizes: list[int] = []
    for seed in range(args.maps):
        found = caves.generate(
            seed=seed,
            connect=False,
            **{
                **DEFAULTS,
                **POST,  # type: ignore[arg-type]
                "lower_limit": 0,
                "upper_limit": 10**6,
            },
        )
        sizes.extend(c.cells for c in found.caves)
    cells = np.array(sizes)
    print(
        f"cave sizes before the size limits: {len(cells) / args.maps:.1f} caves a map, "
        f"{np.count_nonzero(cells > 16) / args.maps:.1f} over 16 cells, median of those "
        f"{np.median(cells[cells > 16]):.0f}, 90th percentile "
        f"{np.percentile(cells[cells > 16], 90):.0f}, over 450: "
        f"{np.count_nonzero(cells > 450) / args.maps:.2f} a map, over 1500: "
        f"{np.count_nonzero(cells > 1500)} in {args.maps} maps"
    )
    for name, change in [
        ("close_cell_prob=46", {"close_cell_prob": 46}),
        ("close_cell_prob=47", {"close_cell_prob": 47}),
        ("close_cell_prob=48", {"close_cell_prob": 48}),
        ("close_cell_prob=50", {"close_cell_prob": 50}),
        ("close_cell_prob=55", {"close_cell_prob": 55}),
        ("filling 4", {"filling_neighbours": 4}),
        ("visits=250000", {"visits": 250_000}),
        ("150x150 map", {"width": 150, "height": 150}),
    ]:
        start = time.perf_counter()
        counter = distribution(ours(seed, **change) for seed in range(args.maps))
        print(row(name, counter, time.perf_counter() - start), flush=True)

    if args.clicks:
        rnd = DotNetRandom(12345)
        start = time.perf_counter()
        clicks = [csharp_caves(rnd, 450, 1500, 3) for _ in range(args.clicks)]
        print()
        print(HEADER)
        print(row("clicks", distribution(clicks), time.perf_counter() - start))
        print(
            "caves per click of Build, new Random(12345), first 30:",
            " ".join(map(str, clicks[:30])),
        )
        threes = [i + 1 for i, n in enumerate(clicks) if n == 3]
        print(f"clicks giving three caves: {threes or 'none'} of {len(clicks)}")

    n = args.slow_maps
    print(f"\nislands, {n} maps of 99x99 (p 45, n 4, 50,000 visits):")
    from generators.maps import islands

    print(
        "  code  (random fill once)     ",
        island_figures(islands.generate(seed=s).grid for s in range(n)),
    )
    print("  prose (p at every visit)     ", island_figures(prose_islands(s) for s in range(n)))
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()

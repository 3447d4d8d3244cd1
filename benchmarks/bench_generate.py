"""Catalog generation throughput: ``entityworks generate KIND --count N`` end to end against
the machine's ceiling, the same generation in independent processes that return nothing.

    python benchmarks/bench_generate.py                       # dungeon 2000, caves 1000
    python benchmarks/bench_generate.py --kind caves --count 200 --rounds 2
    python benchmarks/bench_generate.py --kind caves --scaling  # also 1 worker vs N, in-process

Target (issue 21): the command reaches at least 0.85x of the ceiling on 2 cores. Both sides
are whole processes timed from launch to exit: ours is the command (``python -m entityworks
generate KIND --count N --seed 1`` into a fresh SQLite catalog, one worker per core); the
ceiling is one ``python`` per core, each importing the generator and generating its share of
the same seeds with the generator's defaults, keeping nothing. Each round also compares the
two after start-up: the command's own figure for its library call (``generate_into``, which
opens the catalog, builds, encodes and stores) against the longest generation loop of the
ceiling's processes, as each timed it after its imports. They alternate in the same run
(the machine is shared: the load average is printed with every round). Both load our
packages' compiled bytecode, as an installed copy does (:func:`compiled`).

``--scaling`` adds the earlier figures (issue 6): ``generate_into`` on 1 worker and on N, in
this process, with the storage share and CPU per map.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import record  # noqa: E402

from entityworks.catalog import GenerateStats, generate_into, open_catalog  # noqa: E402
from entityworks.catalog.kinds import map_kind  # noqa: E402

#: Maps per kind when ``--count`` is not given: the issue's figures.
DEFAULT_COUNTS = {"dungeon": 2000, "caves": 1000}

#: What each ceiling process runs: the kind's generator on its seeds, results dropped.
_PLAIN = """
import gc, sys, time
from entityworks.catalog.kinds import map_kind
spec = map_kind(sys.argv[1])
generate, fixed = spec.function(), dict(spec.fixed)
paused = sys.argv[4] == "paused"
start = time.perf_counter()
for first in range(int(sys.argv[2]), int(sys.argv[3]), spec.chunk):
    if paused:
        gc.disable()
    for seed in range(first, min(first + spec.chunk, int(sys.argv[3]))):
        generate(**fixed, seed=seed)
    gc.enable()
print(time.perf_counter() - start)
"""


def cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def children_cpu() -> float:
    """User + system CPU of the finished child processes (and theirs: the pool workers)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def ceiling_run(
    kind: str, count: int, processes: int, paused: bool = False
) -> tuple[float, float, float]:
    """Wall seconds for ``processes`` fresh interpreters to generate seeds ``1..count``
    between them (consecutive shares), returning nothing; their CPU seconds; and the
    longest generation alone (after the imports), as each timed its own loop."""
    cpu = children_cpu()
    bounds = [1 + count * i // processes for i in range(processes + 1)]
    start = time.perf_counter()
    running = [
        subprocess.Popen(
            [sys.executable, "-c", _PLAIN, kind, str(a), str(b), "paused" if paused else "plain"],
            env=_env(),
            stdout=subprocess.PIPE,
            text=True,
        )
        for a, b in zip(bounds, bounds[1:], strict=False)
    ]
    loops = []
    for proc in running:
        out, _ = proc.communicate()
        if proc.returncode != 0:
            raise SystemExit(f"a ceiling process failed ({proc.returncode})")
        loops.append(float(out))
    return time.perf_counter() - start, children_cpu() - cpu, max(loops)


def command_run(
    kind: str, count: int, workers: int, folder: Path
) -> tuple[float, float, float, int]:
    """Wall seconds of the command, launch to exit, into a fresh catalog; its CPU seconds
    (its workers' too); and what it said: the seconds of its library call
    (``generate_into``: no interpreter start-up, no imports) and the storage share."""
    cpu = children_cpu()
    db = folder / f"{kind}_{time.monotonic_ns()}.db"
    start = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "entityworks",
            "generate",
            kind,
            "--count",
            str(count),
            "--seed",
            "1",
            "--workers",
            str(workers),
            "--db",
            str(db),
            "--no-progress",
        ],
        env=_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - start
    cpu = children_cpu() - cpu
    if done.returncode != 0:
        raise SystemExit(f"the command failed:\n{done.stdout}{done.stderr}")
    db.unlink()
    said = re.search(r"in ([\d.]+) s: [\d.]+ maps/s, storage (\d+)%", done.stdout)
    if said is None:
        raise SystemExit(f"the command said something else:\n{done.stdout}")
    return seconds, cpu, float(said[1]), int(said[2])


def compiled() -> None:
    """Compile our packages' bytecode before the first round, as installing them does: where
    ``PYTHONDONTWRITEBYTECODE`` is set, every run would compile the modules it imports
    again (the command more of them than the ceiling's processes)."""
    import compileall

    for package in ("entityworks", "generators"):
        compileall.compile_dir(str(ROOT / package), quiet=1)


def load() -> str:
    return "load " + " ".join(f"{v:.2f}" for v in os.getloadavg())


def compare(kind: str, count: int, workers: int, rounds: int) -> float:
    """Alternate the command and the ceiling ``rounds`` times; returns the median ratio.

    Each round also runs the stricter ceiling whose processes pause the collector for each
    chunk of maps (the kind's ``MapKind.chunk``), as the command's workers do: it shows what
    the command's storage costs with the collector's share taken out of both sides."""
    print(
        f"generate {kind} --count {count} (generator defaults), {workers} worker(s) vs "
        f"{workers} independent processes, {cores()} core(s)"
    )
    ratios: list[float] = []
    strict: list[float] = []
    cpu_ratios: list[float] = []
    call_ratios: list[float] = []
    best = [float("inf")] * 3  # ceiling, ours, ceiling with the collector paused
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(rounds):
            before = load()
            # rotate which goes first, so that none always meets another's tail
            runs = ["ceiling", "ours", "paused"]
            for what in runs[r % 3 :] + runs[: r % 3]:
                if what == "ours":
                    ours, ours_cpu, call, storage = command_run(kind, count, workers, Path(tmp))
                elif what == "ceiling":
                    ceiling, ceiling_cpu, loop = ceiling_run(kind, count, workers)
                else:
                    paused, _, _ = ceiling_run(kind, count, workers, paused=True)
            ratios.append(ceiling / ours)
            strict.append(paused / ours)
            best = [min(best[0], ceiling), min(best[1], ours), min(best[2], paused)]
            cpu_ratios.append(ceiling_cpu / ours_cpu)
            call_ratios.append(loop / call)
            print(
                f"  round {r + 1}: end to end: ceiling {count / ceiling:6.1f} maps/s "
                f"({ceiling:5.2f} s, CPU {ceiling_cpu:5.2f} s), ours {count / ours:6.1f} "
                f"maps/s ({ours:5.2f} s, CPU {ours_cpu:5.2f} s), ratio {ratios[-1]:.2f}; "
                f"paused ceiling {count / paused:6.1f} maps/s, ratio {strict[-1]:.2f}; "
                f"after start-up: ceiling {count / loop:6.1f} maps/s, ours (generate_into, "
                f"storage {storage}%) {count / call:6.1f} maps/s, ratio {call_ratios[-1]:.2f}"
                f"   {before} -> {load()}"
            )
    median = statistics.median(ratios)
    print(
        f"  ours/ceiling end to end: median {median:.2f}x, best rounds {count / best[1]:.1f} "
        f"vs {count / best[0]:.1f} maps/s = {best[0] / best[1]:.2f}x (target >= 0.85x); "
        f"after start-up: median {statistics.median(call_ratios):.2f}x; CPU ceiling/ours: "
        f"median {statistics.median(cpu_ratios):.2f}; against the paused ceiling: median "
        f"{statistics.median(strict):.2f}x, best rounds {best[2] / best[1]:.2f}x"
    )
    record(
        "generate",
        f"generate {kind} --count {count}, end to end, {workers} workers",
        f"{kind} maps, generator defaults",
        f"the same generation in {workers} plain processes, nothing kept",
        count / best[0],
        count / best[1],
        "maps/s",
    )
    record(
        "generate",
        f"generate {kind} --count {count}, end to end, {workers} workers",
        f"{kind} maps, generator defaults",
        f"the same, each process pausing the collector per {map_kind(kind).chunk} maps as ours do",
        count / best[2],
        count / best[1],
        "maps/s",
    )
    return median


# -- the in-process scaling figures (issue 6) --------------------------------------------------


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
    return (
        f"  {label:<22} {stats.count} maps in {stats.seconds:7.2f} s = "
        f"{stats.maps_per_second:7.1f} maps/s; storage {stats.storage_seconds:.2f} s "
        f"({stats.storage_share:.1%} of the time, "
        f"{1e3 * stats.storage_cpu_seconds / stats.count:.2f} ms/map of this process's "
        f"CPU); CPU {1e3 * cpu / stats.count:.1f} ms/map"
    )


def scaling(kind: str, count: int, workers: int) -> None:
    print(f"generate_into {kind} {count} in this process: 1 worker vs {workers} ({load()})")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        single, single_cpu = timed_run(kind, count, 1, folder)
        print(line("baseline (1 worker):", single, single_cpu))
        multi, multi_cpu = timed_run(kind, count, workers, folder)
        print(line(f"ours ({workers} workers):", multi, multi_cpu))
    print(
        f"  scaling ours/baseline: {multi.maps_per_second / single.maps_per_second:.2f}x"
        f"   (target >= 1.7x on 2 cores); storage share {multi.storage_share:.1%} "
        f"(target < 10 %); {load()}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--kind", action="append", help="map kind (repeatable; default: dungeon and caves)"
    )
    parser.add_argument(
        "--count", type=int, help="maps per run (default: 2000 dungeons, 1000 caves, else 500)"
    )
    parser.add_argument("--workers", type=int, default=cores())
    parser.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="command/ceiling pairs per kind, alternating which goes first",
    )
    parser.add_argument(
        "--scaling",
        action="store_true",
        help="also time generate_into on 1 worker and on --workers",
    )
    args = parser.parse_args()
    compiled()
    for kind in args.kind or list(DEFAULT_COUNTS):
        count = args.count or DEFAULT_COUNTS.get(kind, 500)
        compare(kind, count, args.workers, args.rounds)
        if args.scaling:
            scaling(kind, count, args.workers)


if __name__ == "__main__":
    main()

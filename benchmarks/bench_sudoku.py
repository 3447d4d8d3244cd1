"""Sudoku throughput: our compiled engine against the strongest peers we can run here.

Peers, each on the same puzzles as ours in the same run (runs alternate, best of repeats):

* a Norvig-style constraint-propagation solver in pure Python (below): candidate strings per
  cell, naked singles *and* hidden singles propagated on every assignment, depth-first
  search on the cell with the fewest candidates; timed for the first solution and for
  count-to-2 (what proving uniqueness costs);
* OR-Tools CP-SAT (``pip install -e ".[bench]"``), one model per puzzle with AllDifferent
  rows, columns and boxes, enumerating solutions until a second one is found;
* tdoku (C, SIMD): built from ``../shared/peers`` with ``build_tdoku.sh`` when a C compiler
  is present (skipped with a message otherwise) and run through its driver on the first
  ``--tdoku N`` puzzles of each set, count-to-2 and first solution, both sides pinned to
  one core, alternating with ours; the published figure is printed for reference too.

Against tdoku, ours runs ``solve_array`` (results as arrays, as tdoku's driver keeps no object
per puzzle) and, beside it, ``solve_many`` (a ``Solution`` per puzzle), in both modes, on the
four files and on puzzles of 26, 35 and 45 clues made by our generator (seeds 0..N-1, kept in
the temporary folder). Elsewhere ours always counts to two (uniqueness proved) and solves with
``solve_many``, one compiled call per chunk; "2 cores" is ``solve_many(workers=2)``. Rates
are from the best wall time; single-process rates are also given from CPU time, which waiting
for a core on a busy machine does not inflate (the two agree on a quiet machine). For 2 cores
the CPU time of both threads together is printed too: close to the 1-core CPU time means
threading added no work, so the wall speed-up is what idle cores allow.

Run: ``python benchmarks/bench_sudoku.py [--sample N] [--cpsat N] [--repeat N] [--tdoku N]
[--tdoku-only]``
"""

from __future__ import annotations

import argparse
import gc
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import record  # noqa: E402

from generators import sudoku  # noqa: E402

DATA = Path(os.environ.get("ENTITYWORKS_DATA_DIR", ROOT.parent / "shared" / "data"))
NORVIG_IMPOSSIBLE = (
    ".....5.8....6.1.43..........1.5........1.6...3.......553.....61........4........."
)
#: tdoku's README (its own machine, first solution only): magictour_top1465 ~140,000/s.
TDOKU_PUBLISHED = "tdoku (C, SIMD, published, other machine): ~140,000/s first solution"

SETS = ["top95.txt", "magictour_top1465.txt", "17_clue_first10000.txt", "forum_hardest_1106.txt"]


class PropagationSolver:
    """Norvig-style: a dict cell -> string of candidate digits, naked and hidden singles.

    ``assign`` removes every other digit from a cell; ``eliminate`` removes one digit and
    propagates both rules: a cell left with one digit removes it from its peers, and a unit
    left with one place for a digit puts it there. Written for speed within plain Python
    (integer cells, precomputed units and peers, string candidates, dict copies on branch).
    """

    def __init__(self) -> None:
        rows = [[9 * r + c for c in range(9)] for r in range(9)]
        cols = [[9 * r + c for r in range(9)] for c in range(9)]
        boxes = [[9 * (br + r) + bc + c for r in range(3) for c in range(3)]
                 for br in (0, 3, 6) for bc in (0, 3, 6)]  # fmt: skip
        all_units = rows + cols + boxes
        self.units = [[u for u in all_units if cell in u] for cell in range(81)]
        self.peers = [sorted({p for u in self.units[cell] for p in u} - {cell})
                      for cell in range(81)]  # fmt: skip

    def assign(self, values: dict[int, str], cell: int, digit: str) -> bool:
        for other in values[cell].replace(digit, ""):
            if not self.eliminate(values, cell, other):
                return False
        return True

    def eliminate(self, values: dict[int, str], cell: int, digit: str) -> bool:
        options = values[cell]
        if digit not in options:
            return True
        options = options.replace(digit, "")
        values[cell] = options
        if not options:
            return False
        if len(options) == 1:
            last = options
            for peer in self.peers[cell]:
                if not self.eliminate(values, peer, last):
                    return False
        for unit in self.units[cell]:
            places = [c for c in unit if digit in values[c]]
            if not places:
                return False
            if len(places) == 1 and len(values[places[0]]) > 1:
                if not self.assign(values, places[0], digit):
                    return False
        return True

    def parse(self, puzzle: str) -> dict[int, str] | None:
        values = {cell: "123456789" for cell in range(81)}
        for cell, ch in enumerate(puzzle):
            if ch in "123456789" and not self.assign(values, cell, ch):
                return None
        return values

    def search(self, values: dict[int, str], found: list[dict[int, str]], limit: int) -> None:
        best, fewest = -1, 10
        for cell, options in values.items():
            n = len(options)
            if 1 < n < fewest:
                best, fewest = cell, n
                if n == 2:
                    break
        if best < 0:
            found.append(values)
            return
        for digit in values[best]:
            trial = values.copy()
            if self.assign(trial, best, digit):
                self.search(trial, found, limit)
                if len(found) >= limit:
                    return

    def count(self, puzzle: str, limit: int) -> tuple[int, str | None]:
        values = self.parse(puzzle)
        if values is None:
            return 0, None
        found: list[dict[int, str]] = []
        self.search(values, found, limit)
        first = "".join(found[0][c] for c in range(81)) if found else None
        return len(found), first


def cpsat_count(puzzle: str, limit: int = 2) -> int:
    """Solutions (up to ``limit``) found by OR-Tools CP-SAT for one puzzle."""
    from ortools.sat.python import cp_model

    model = cp_model.CpModel()
    cells = [model.NewIntVar(1, 9, f"c{i}") for i in range(81)]
    for r in range(9):
        model.AddAllDifferent(cells[9 * r : 9 * r + 9])
        model.AddAllDifferent(cells[r::9])
    for br in (0, 3, 6):
        for bc in (0, 3, 6):
            model.AddAllDifferent([cells[9 * (br + r) + bc + c] for r in range(3)
                                   for c in range(3)])  # fmt: skip
    for i, ch in enumerate(puzzle):
        if ch not in "0.":
            model.Add(cells[i] == int(ch))

    class Stop(cp_model.CpSolverSolutionCallback):
        def __init__(self) -> None:
            super().__init__()
            self.count = 0

        def on_solution_callback(self) -> None:
            self.count += 1
            if self.count >= limit:
                self.StopSearch()

    solver = cp_model.CpSolver()
    solver.parameters.enumerate_all_solutions = True
    solver.parameters.num_workers = 1
    stop = Stop()
    solver.Solve(model, stop)
    return stop.count


def load(name: str) -> list[str]:
    return [entry.puzzle for entry in sudoku.read_lines(DATA / name)]


def load_avg() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


#: Best CPU seconds (this process) of the last ``alternate`` call: on a busy shared machine
#: wall time includes waiting for a core, CPU time does not. Printed beside the wall figure.
CPU_BEST: list[float] = []


def _solve_file(name: str, times: int) -> float:
    """Seconds to solve set ``name`` ``times`` times on one core (a probe process's job)."""
    puzzles = load(name)
    sudoku.solve_many(puzzles[:5], workers=1)
    start = time.perf_counter()
    for _ in range(times):
        sudoku.solve_many(puzzles, workers=1)
    return time.perf_counter() - start


def machine_ceiling(name: str, times: int = 5) -> float:
    """How much faster two independent processes solve set ``name`` than one (the same
    work each): the most that two threads can gain on this machine right now, whatever
    the program (on a virtual machine, two busy cores often each run slower than one)."""
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=2) as pool:
        pool.submit(_solve_file, name, 1).result()  # start-up outside the timing
        one = min(pool.submit(_solve_file, name, times).result() for _ in range(2))
        start = time.perf_counter()
        list(pool.map(_solve_file, [name, name], [times, times]))
        return 2 * one / (time.perf_counter() - start)


def alternate(fns: list[Callable[[], Any]], repeat: int) -> list[float]:
    """Best wall time of each function, runs interleaved, garbage collected before each."""
    best = [float("inf")] * len(fns)
    cpu = [float("inf")] * len(fns)
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            gc.collect()
            start, start_cpu = time.perf_counter(), time.process_time()
            fn()
            best[i] = min(best[i], time.perf_counter() - start)
            cpu[i] = min(cpu[i], time.process_time() - start_cpu)
    CPU_BEST[:] = cpu
    return best


PEERS = Path(os.environ.get("ENTITYWORKS_PEERS_DIR", ROOT.parent / "shared" / "peers"))


def build_tdoku() -> Path | None:
    """Path of tdoku's benchmark driver, built by ``peers/build_tdoku.sh`` (cached), or None
    with the reason printed."""
    import shutil

    script = PEERS / "build_tdoku.sh"
    if not script.exists():
        print(f"tdoku skipped: no {script}")
        return None
    if shutil.which(os.environ.get("CC", "gcc")) is None or shutil.which(
            os.environ.get("CXX", "g++")) is None:  # fmt: skip
        print("tdoku skipped: no C/C++ compiler (gcc and g++, or $CC and $CXX) to build it")
        return None
    done = subprocess.run(["bash", str(script)], capture_output=True, text=True)
    if done.returncode != 0 or not done.stdout.strip():
        print(f"tdoku skipped: build_tdoku.sh failed: {done.stderr.strip()[-300:]}")
        return None
    return Path(done.stdout.strip().splitlines()[-1])


def _one_core() -> list[int]:
    """Pin this process to one core (the last one it may use); returns the previous set."""
    before = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {before[-1]})
    return before


def tdoku_rate(driver: Path, path: Path, n: int, limit: int, seconds: float = 0.3) -> float:
    """Puzzles per second of tdoku's driver on the first ``n`` puzzles of the file ``path``,
    one core (the driver inherits this process's affinity), repeating for ``seconds``."""
    out = subprocess.run([str(driver), str(path), str(n), str(limit), str(seconds)],
                         check=True, capture_output=True, text=True).stdout  # fmt: skip
    return float(out.split("rate=")[1].split("/")[0])


def ours_rate(puzzles: list[str], prove_unique: bool, seconds: float = 0.3,
              objects: bool = False) -> float:  # fmt: skip
    """Puzzles per second on one core, repeating for ``seconds``: ``solve_array`` (arrays,
    no object per puzzle, as tdoku's driver keeps none), or ``solve_many`` with
    ``objects`` (a :class:`Solution` per puzzle)."""
    solve = sudoku.solve_many if objects else sudoku.solve_array
    done = 0
    start = time.perf_counter()
    while True:
        solve(puzzles, workers=1, prove_unique=prove_unique)
        done += len(puzzles)
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            return done / elapsed


#: Generated sets (the project's own generator, seeds 0..n-1) beside the files: clue counts
GENERATED = [26, 35, 45]


def generated_file(clues: int, n: int) -> Path:
    """A file of ``n`` generated ``clues``-clue puzzles (seeds 0..n-1), made once and kept
    under the system's temporary folder (tdoku's driver reads puzzles from a file)."""
    import tempfile

    folder = Path(tempfile.gettempdir()) / "entityworks-bench-sudoku"
    folder.mkdir(exist_ok=True)
    path = folder / f"generated_{clues}_{n}.txt"
    if not path.exists():
        lines = [sudoku.generate(clues, seed=seed).puzzle for seed in range(n)]
        partial = path.with_suffix(f".{os.getpid()}.tmp")
        partial.write_text("\n".join(lines) + "\n")
        partial.replace(path)
    return path


def tdoku_section(n: int, repeat: int) -> None:
    """Ours against tdoku on one core, both modes, alternating; best rate of each."""
    driver = build_tdoku()
    if driver is None:
        return
    files = [(name, DATA / name) for name in SETS]
    files += [(f"generated {clues} clues", generated_file(clues, n)) for clues in GENERATED]
    before = _one_core()
    try:
        cpus = sorted(os.sched_getaffinity(0))
        print(f"# ours vs tdoku, one core (cpu {cpus}), first {n} puzzles per set, best of "
              f"{repeat} alternating runs; {load_avg()} (before)")  # fmt: skip
        print("# ours: solve_array (arrays, as tdoku's driver: no object per puzzle); "
              "objects: solve_many (a Solution per puzzle)")  # fmt: skip
        print(f"{'set':<26}{'mode':<7}{'puzzles':>8}{'ours/s':>11}{'tdoku/s':>11}{'ratio':>8}"
              f"{'objects/s':>11}{'ratio':>8}")  # fmt: skip
        for name, path in files:
            puzzles = [entry.puzzle for entry in sudoku.read_lines(path)][:n]
            sudoku.solve_many(puzzles, workers=1)  # warm
            for mode, limit in (("cnt2", 2), ("first", 1)):
                ours = peer = objects = 0.0
                for _ in range(repeat):
                    ours = max(ours, ours_rate(puzzles, limit == 2))
                    objects = max(objects, ours_rate(puzzles, limit == 2, objects=True))
                    peer = max(peer, tdoku_rate(driver, path, n, limit))
                print(f"{name:<26}{mode:<7}{len(puzzles):>8}{ours:>11,.0f}{peer:>11,.0f}"
                      f"{ours / peer:>7.2f}x{objects:>11,.0f}{objects / peer:>7.2f}x   "
                      f"{load_avg()}")  # fmt: skip
                work = "count to 2 (uniqueness)" if limit == 2 else "first solution"
                record(
                    "sudoku",
                    f"{work}, one core",
                    f"{name}, first {len(puzzles):,}",
                    "tdoku",
                    peer,
                    ours,
                    "puzzles/s",
                )
    finally:
        os.sched_setaffinity(0, before)
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sample",
        type=int,
        default=100,
        help="puzzles per set for the pure-Python peer (same ones for ours)",
    )
    parser.add_argument(
        "--cpsat", type=int, default=50, help="puzzles per set for CP-SAT (0 to skip)"
    )
    parser.add_argument("--repeat", type=int, default=5, help="alternating repeats")
    parser.add_argument(
        "--tdoku", type=int, default=1000, help="puzzles per set against tdoku (0 to skip)"
    )
    parser.add_argument(
        "--tdoku-only", action="store_true", help="run only the comparison with tdoku"
    )
    args = parser.parse_args()
    if args.tdoku > 0:
        tdoku_section(args.tdoku, min(args.repeat, 3))
    if args.tdoku_only:
        return

    try:
        import ortools  # noqa: F401

        have_cpsat = args.cpsat > 0
    except ImportError:
        have_cpsat = False
        print("OR-Tools not installed: CP-SAT column skipped (pip install -e '.[bench]')")
    peer = PropagationSolver()
    sudoku.solve_many(load("top95.txt")[:5], workers=1)  # load the compiled code
    print(f"# {load_avg()} (before)")
    print(
        f"{'set':<24}{'sample':>7}{'peer 1st/s':>12}{'peer cnt2/s':>12}"
        f"{'CP-SAT cnt2/s':>14}{'ours cnt2/s':>13}{'vs peer cnt2':>14}{'vs CP-SAT':>11}"
    )
    for name in SETS:
        puzzles = load(name)
        sample = puzzles[: args.sample]
        cp_sample = puzzles[: args.cpsat] if have_cpsat else []
        ours_answers = sudoku.solve_many(sample, workers=1)
        assert all(s is not None and s.unique for s in ours_answers)
        for s, p in zip(ours_answers[:10], sample[:10], strict=True):  # same grids as the peer
            assert s is not None and peer.count(p, 1)[1] == s.grid
        fns: list[Callable[[], Any]] = [
            lambda s=sample: [peer.count(p, 1) for p in s],
            lambda s=sample: [peer.count(p, 2) for p in s],
            lambda s=sample: sudoku.solve_many(s, workers=1),
        ]
        if cp_sample:
            assert all(cpsat_count(p) == 1 for p in cp_sample[:5])
            fns += [lambda s=cp_sample: [cpsat_count(p) for p in s],
                    lambda s=cp_sample: sudoku.solve_many(s, workers=1)]  # fmt: skip
        times = alternate(fns, args.repeat)
        first, count2, ours = (len(sample) / t for t in times[:3])
        cp = ours_cp = float("nan")
        if cp_sample:
            cp, ours_cp = (len(cp_sample) / t for t in times[3:])
        print(
            f"{name:<24}{len(sample):>7}{first:>12,.0f}{count2:>12,.0f}{cp:>14,.0f}"
            f"{ours:>13,.0f}{ours / count2:>13,.0f}x{ours_cp / cp:>10,.0f}x"
        )
        cpu = [len(sample) / t for t in CPU_BEST[:3]]
        print(
            f"{'  (CPU time)':<31}{cpu[0]:>12,.0f}{cpu[1]:>12,.0f}{'':>14}"
            f"{cpu[2]:>13,.0f}{cpu[2] / cpu[1]:>13,.0f}x"
        )
    print(f"# {load_avg()} (after)")
    print(f"# reference only: {TDOKU_PUBLISHED}")
    print()

    print(
        f"{'set, whole file, uniqueness proved':<40}{'puzzles':>8}{'1 core/s':>11}"
        f"{'2 cores/s':>11}{'speed-up':>10}   (ceiling: two processes against one)"
    )
    for name in SETS:
        puzzles = load(name)
        one, two = alternate([lambda s=puzzles: sudoku.solve_many(s, workers=1),
                              lambda s=puzzles: sudoku.solve_many(s, workers=2)],
                             args.repeat)  # fmt: skip
        cpu = list(CPU_BEST)
        print(
            f"{name:<40}{len(puzzles):>8}{len(puzzles) / one:>11,.0f}"
            f"{len(puzzles) / two:>11,.0f}{one / two:>9.2f}x"
            f"   (machine ceiling {machine_ceiling(name):.2f}x; CPU time: 1 core "
            f"{len(puzzles) / cpu[0]:,.0f}/s, 2 cores {len(puzzles) / cpu[1]:,.0f}/s)"
        )
    print(f"# {load_avg()}")
    print()

    refuse = alternate([lambda: sudoku.solve(NORVIG_IMPOSSIBLE)], 5)[0]
    from generators.sudoku import _engine

    count, _, nodes, _ = _engine.solve_digits(NORVIG_IMPOSSIBLE.replace(".", "0"), 2)
    print(
        f"Norvig's impossible puzzle refused ({count} solutions, {nodes:,} nodes): "
        f"{refuse * 1e3:.2f} ms (the peer is not run: Norvig reports minutes)"
    )
    euler = DATA / "p096_sudoku.txt"
    command = [str(Path(sys.executable).parent / "entityworks"), "sudoku", "euler96", str(euler)]
    subprocess.run(command, check=True, capture_output=True)  # warm the cache
    runs = []
    for _ in range(5):
        start = time.perf_counter()
        done = subprocess.run(command, check=True, capture_output=True, text=True)
        runs.append(time.perf_counter() - start)
    print(
        f"'entityworks sudoku euler96' end to end, warm cache: best {min(runs):.2f} s, "
        f"median {sorted(runs)[2]:.2f} s (answer {done.stdout.strip()})"
    )
    print(f"# {load_avg()}")


if __name__ == "__main__":
    main()

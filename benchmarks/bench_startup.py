"""First-call cost of the compiled code: a fresh process, with an empty and a warm cache.

Each case runs in a new interpreter with ``NUMBA_CACHE_DIR`` pointing at a temporary
folder: the first run compiles (the first-ever call after an install), the next ones load
machine code from that cache (every later process). The figures split a process into
importing NumPy (what any caller pays anyway), importing our modules and the first call,
in wall and CPU seconds; CPU time is what a quiet machine shows as wall time, and it is
not inflated by waiting for a core on a busy one. The last column says whether the
process imported numba: with a warm cache the sudoku and FOV kernels load without it
(``generators._compiled.native``); the warm-up also runs the map kernels, which use numba's cache.

Run: ``python benchmarks/bench_startup.py [--runs N]``
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PROBE = """
import json, sys, time
w0, c0 = time.perf_counter(), time.process_time()
import numpy as np
w1, c1 = time.perf_counter(), time.process_time()
from generators import sudoku, warmup
from generators.view import fov
w2, c2 = time.perf_counter(), time.process_time()
case = sys.argv[1]
if case == "sudoku":
    sudoku.solve("003020600900305001001806400008102900700000008006708200002609500800203009005010300")
elif case == "fov":
    fov.visible(np.zeros((50, 50), np.uint8), (3, 3), 10)
else:
    warmup.warm_up()
w3, c3 = time.perf_counter(), time.process_time()
print(json.dumps({"numpy": [w1 - w0, c1 - c0], "import": [w2 - w1, c2 - c1],
                  "first call": [w3 - w2, c3 - c2], "numba": "numba" in sys.modules}))
"""


def run(case: str, cache: str) -> dict[str, list[float]]:
    env = {**os.environ, "NUMBA_CACHE_DIR": cache, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", PROBE, case], env=env, check=True,
                          capture_output=True, text=True)  # fmt: skip
    return json.loads(done.stdout.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="warm runs per case (best kept)")
    args = parser.parse_args()
    print(f"# load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'case':<26}{'import ours':>16}{'first call':>16}{'added':>16}  numba?  (wall / CPU s)")
    for case in ("sudoku", "fov", "all (warmup)"):
        with tempfile.TemporaryDirectory() as cache:
            key = case.split()[0]
            cold = run(key, cache)
            warm = min((run(key, cache) for _ in range(args.runs)),
                       key=lambda r: r["import"][1] + r["first call"][1])  # fmt: skip
        for label, r in (("empty cache", cold), ("warm cache", warm)):
            added = [r["import"][i] + r["first call"][i] for i in (0, 1)]
            print(f"{case + ', ' + label:<26}"
                  f"{r['import'][0]:>9.2f} /{r['import'][1]:>5.2f}"
                  f"{r['first call'][0]:>9.2f} /{r['first call'][1]:>5.2f}"
                  f"{added[0]:>9.2f} /{added[1]:>5.2f}"
                  f"  {'yes' if r['numba'] else 'no':>6}")  # fmt: skip
    print(f"# load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()

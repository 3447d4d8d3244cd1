"""The compiled hot loops: numba's on-disk cache and the warm-up entry point."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from generators import warmup

PROBE = """
import json, sys
import numpy as np
from generators import _sudoku_core, fov, sudoku
sudoku.validate("0" * 81)
fov.visible(np.zeros((5, 5), dtype=np.uint8), (2, 2), 2)
kernels = {"givens_clash": _sudoku_core.givens_clash, "shadowcast": fov._shadowcast}
print(json.dumps({name: [sum(k.stats.cache_hits.values()), sum(k.stats.cache_misses.values())]
                  for name, k in kernels.items()}))
"""


def _probe(cache: Path) -> dict[str, list[int]]:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    done = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True,
                          text=True, timeout=600, check=True)  # fmt: skip
    return json.loads(done.stdout.splitlines()[-1])


def test_a_second_process_loads_the_compiled_code_from_the_cache(tmp_path: Path) -> None:
    """A user's NUMBA_CACHE_DIR is honoured: the first process compiles and writes the
    cache there, the next one loads machine code from it instead of compiling."""
    first = _probe(tmp_path)
    assert all(hits == 0 and misses >= 1 for hits, misses in first.values()), first
    index = sorted(p.name for p in tmp_path.rglob("*.nbi"))
    assert any("givens_clash" in n for n in index) and any("shadowcast" in n for n in index)
    assert list(tmp_path.rglob("*.nbc"))
    second = _probe(tmp_path)
    assert all(hits >= 1 and misses == 0 for hits, misses in second.values()), second


def test_warm_up_runs_every_group_and_reports_it(capsys) -> None:
    took = warmup.warm_up(print)
    assert set(took) == {"sudoku", "fov", "maps"}
    assert all(seconds >= 0 for seconds in took.values())
    assert warmup.main() == 0
    out = capsys.readouterr().out
    assert "sudoku: " in out and "compiled code ready in" in out

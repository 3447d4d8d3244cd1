"""The compiled hot loops: machine code kept on disk (numba's cache and the kernels that a
fresh process loads without numba), and the warm-up entry point."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from generators import warmup
from generators._compiled import native as _native

# Solves puzzles (unique, several solutions, none, invalid) and views a cave both ways, and
# says how each kernel was obtained and whether numba was imported.
PROBE = """
import hashlib, json, sys
import numpy as np
from generators import sudoku
from generators._compiled import native as _native
from generators.view import fov
puzzles = ["003020600900305001001806400008102900700000008006708200002609500800203009005010300",
           "." * 81,
           ".....5.8....6.1.43..........1.5........1.6...3.......553.....61........4.........",
           "4.....8.5.3..........7......2.....6.....8.4......1.......6.3.7.5..2.....1.4......"]
solved = [None if s is None else [s.grid, s.unique, s.nodes, s.guesses]
          for s in sudoku.solve_many(puzzles, workers=1)]
try:
    sudoku.solve("11" + "0" * 79)
    refused = None
except sudoku.InvalidPuzzle as exc:
    refused = str(exc)
grid = np.load(sys.argv[1])
views = hashlib.sha256()
for origin in [(5, 5), (30, 12), (50, 30)]:
    for radius in (4, None):
        for symmetric in (False, True):
            views.update(np.packbits(fov.visible(grid, origin, radius, symmetric=symmetric)))
report = {"solved": solved, "refused": refused, "views": views.hexdigest(),
          "how": {k: _native.how_loaded(k) for k in ("fov_view",)},
          "numba imported": "numba" in sys.modules}
if len(sys.argv) > 2:  # also a kernel that stays on numba's own cache
    from generators.maps import cellular

    cellular.generate(12, 9, seed=1, mode="faithful")
    stats = cellular._raster_pass.stats
    report["cellular"] = [sum(stats.cache_hits.values()), sum(stats.cache_misses.values())]
print(json.dumps(report))
"""


@pytest.fixture(scope="module")
def cave(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import numpy as np

    from generators.maps import caves

    path = tmp_path_factory.mktemp("cave") / "cave.npy"
    np.save(path, caves.generate(64, 40, seed=5).grid.astype(np.uint8))
    return path


def _probe(cache: Path, cave: Path, *extra: str) -> dict:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    done = subprocess.run([sys.executable, "-c", PROBE, str(cave), *extra], env=env,
                          capture_output=True, text=True, timeout=900)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def _kernels(cache: Path) -> dict[str, Path]:
    return {p.name.rsplit("-", 1)[0]: p for p in (cache / "generators-native").glob("*.kernel")}


def _opened(path: Path) -> tuple[bytes, bytes]:
    """(header, code) of a kept kernel file, authenticated with its folder's key."""
    opened = _native._unseal((path.parent / "key").read_bytes(), path.name, path.read_bytes())
    assert opened is not None
    return opened


def _sealed(path: Path, header: bytes, code: bytes) -> bytes:
    """A kernel file for ``path`` that passes the HMAC check, holding ``header`` and ``code``."""
    return _native._seal((path.parent / "key").read_bytes(), path.name, header, code)


@pytest.mark.slow
def test_a_second_process_runs_the_kept_machine_code_without_numba(tmp_path: Path,
                                                                   cave: Path) -> None:  # fmt: skip
    """The first process compiles with numba and keeps each kernel's machine code under the
    user's NUMBA_CACHE_DIR; the next one loads it without importing numba at all, and
    computes exactly the same (solutions, effort counts, refusals, views)."""
    first = _probe(tmp_path, cave, "cellular")
    assert first["how"] == {"fov_view": "numba"}
    assert first["numba imported"]
    assert set(_kernels(tmp_path)) == {"fov_view"}  # sudoku is C, compiled at build time
    assert first["cellular"][0] == 0 and first["cellular"][1] >= 1  # compiled and cached
    assert first["solved"][0][1] is True and first["solved"][1][1] is False
    assert first["solved"][2] is None  # Norvig's impossible puzzle has no solution
    assert "r1c1" in first["refused"] and "r1c2" in first["refused"]

    second = _probe(tmp_path, cave)
    assert second["how"] == {"fov_view": "file"}
    assert not second["numba imported"]
    assert {k: second[k] for k in ("solved", "refused", "views")} == {
        k: first[k] for k in ("solved", "refused", "views")}  # fmt: skip

    third = _probe(tmp_path, cave, "cellular")  # numba's own cache still serves the rest
    assert third["cellular"][0] >= 1 and third["cellular"][1] == 0


@pytest.mark.slow
def test_a_damaged_or_foreign_kernel_file_is_compiled_again(tmp_path: Path, cave: Path) -> None:
    """Whatever is wrong with a kept file, the process compiles with numba instead (same
    results) and writes a good file back: the fast path can never change an answer."""
    good = _probe(tmp_path, cave)
    files = _kernels(tmp_path)
    intact = files["fov_view"].read_bytes()
    header, code = _opened(files["fov_view"])
    for damage in (intact[: len(intact) // 2],  # cut short
                   b"\x7fELF" + os.urandom(300)):  # not a real object file  # fmt: skip
        files["fov_view"].write_bytes(damage)
        again = _probe(tmp_path, cave)
        assert again["how"] == {"fov_view": "numba"}
        assert again["solved"] == good["solved"] and again["views"] == good["views"]
        rewritten = _probe(tmp_path, cave)  # a good file was written back
        assert rewritten["how"] == {"fov_view": "file"}
        assert rewritten["solved"] == good["solved"] and rewritten["views"] == good["views"]

    # a file naming a symbol it does not define, or needing one nobody provides (both
    # authenticated, so that these checks, behind the HMAC's, are what refuses them)
    missing = code.replace(b"numba_gil_ensure", b"numba_gil_ensurX")
    assert missing != code
    for header_, code_ in ((json.dumps({"symbol": "no_such_kernel"}).encode(), code),
                           (header, missing)):  # fmt: skip
        files["fov_view"].write_bytes(_sealed(files["fov_view"], header_, code_))
        third = _probe(tmp_path, cave)
        assert third["how"] == {"fov_view": "numba"}
        assert third["solved"] == good["solved"] and third["views"] == good["views"]


UNCOMPILED = """
import json, sys
import numpy as np
from generators import sudoku
from generators._compiled import native as _native
from generators.view import fov
grid = np.load(sys.argv[1])
views = [np.flatnonzero(fov.visible(grid, (30, 12), 6, symmetric=sym)).tolist()
         for sym in (False, True)]
solved = sudoku.solve(
    "003020600900305001001806400008102900700000008006708200002609500800203009005010300").grid
print(json.dumps({"views": views, "solved": solved,
                  "how": [_native.how_loaded(k) for k in ("fov_view",)]}))
"""


@pytest.mark.slow
def test_numba_s_debugging_mode_runs_the_view_as_python(tmp_path: Path, cave: Path) -> None:
    """Under NUMBA_DISABLE_JIT nothing is compiled: the view's Python twin reads the same
    argument block and gives the same cells as the compiled kernel; the sudoku engine (C,
    compiled at build time) does not depend on numba and answers the same."""
    answers = {}
    for mode in ("0", "1"):
        env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path), "NUMBA_DISABLE_JIT": mode}
        done = subprocess.run([sys.executable, "-c", UNCOMPILED, str(cave)], env=env,
                              capture_output=True, text=True, timeout=900)  # fmt: skip
        assert done.returncode == 0, done.stderr
        answers[mode] = json.loads(done.stdout.splitlines()[-1])
    assert answers["1"]["how"] == ["python"]
    assert answers["0"]["how"] == ["numba"]
    assert answers["1"]["views"] == answers["0"]["views"] and answers["0"]["views"][0]
    assert answers["1"]["solved"] == answers["0"]["solved"]
    assert answers["0"]["solved"].startswith("483921657")


def test_the_file_name_follows_what_the_machine_code_depends_on(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from generators.view import _shadowcast as shadowcast

    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    plain = _native._path(shadowcast._KERNEL)
    assert plain is not None and plain.parent == tmp_path / "generators-native"
    monkeypatch.setenv("NUMBA_OPT", "1")  # another optimisation level: other code
    assert _native._path(shadowcast._KERNEL) not in (None, plain)
    monkeypatch.delenv("NUMBA_OPT")
    assert _native._path(shadowcast._KERNEL) == plain


def test_elf_symbols_reads_an_object_file_and_refuses_anything_else() -> None:
    assert _native._elf_symbols(b"MZ\x90\x00" + bytes(200)) is None
    assert _native._elf_symbols(b"\x7fELF\x02\x01" + bytes(20)) is None  # cut short
    import numpy as np

    from generators.view import _shadowcast as shadowcast
    from generators.view import fov

    fov.visible(np.zeros((9, 9), dtype=np.uint8), (4, 4), 3)  # loads or compiles the kernel
    kept = _native._path(shadowcast._KERNEL)
    assert kept is not None and kept.is_file()
    code = _opened(kept)[1]
    symbols = _native._elf_symbols(code)
    assert symbols is not None
    defined, undefined = symbols
    assert any(name.startswith("cfunc.") for name in defined)
    assert "numba_gil_ensure" in undefined  # the error path reports through numba's helper


def test_warm_up_runs_every_group_and_reports_it(capsys) -> None:
    took = warmup.warm_up(print)
    assert set(took) == {"sudoku", "fov", "maps"}
    assert all(seconds >= 0 for seconds in took.values())
    assert warmup.main() == 0
    out = capsys.readouterr().out
    assert "sudoku: " in out and "compiled code ready in" in out

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

# Solves puzzles (unique, several solutions, none, invalid) and says how the kernel was
# obtained and whether numba was imported. (The field of view and the map generators are C
# compiled when the package is built: nothing of theirs is kept here.)
PROBE = """
import json, sys
from generators import sudoku
from generators._compiled import native as _native
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
report = {"solved": solved, "refused": refused,
          "how": {k: _native.how_loaded(k) for k in ("sudoku_solve_text",)},
          "numba imported": "numba" in sys.modules}
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
    computes exactly the same (solutions, effort counts, refusals)."""
    first = _probe(tmp_path, cave)
    assert first["how"] == {"sudoku_solve_text": "numba"}
    assert first["numba imported"]
    assert set(_kernels(tmp_path)) == {"sudoku_solve_text"}
    assert first["solved"][0][1] is True and first["solved"][1][1] is False
    assert first["solved"][2] is None  # Norvig's impossible puzzle has no solution
    assert "r1c1" in first["refused"] and "r1c2" in first["refused"]

    second = _probe(tmp_path, cave)
    assert second["how"] == {"sudoku_solve_text": "file"}
    assert not second["numba imported"]
    assert {k: second[k] for k in ("solved", "refused")} == {
        k: first[k] for k in ("solved", "refused")}  # fmt: skip


@pytest.mark.slow
def test_a_damaged_or_foreign_kernel_file_is_compiled_again(tmp_path: Path, cave: Path) -> None:
    """Whatever is wrong with a kept file, the process compiles with numba instead (same
    results) and writes a good file back: the fast path can never change an answer."""
    good = _probe(tmp_path, cave)
    files = _kernels(tmp_path)
    intact = files["sudoku_solve_text"].read_bytes()
    header, code = _opened(files["sudoku_solve_text"])
    for data in (intact[: len(intact) // 2],  # cut short
                 b"\x7fELF" + os.urandom(300)):  # not a real object file  # fmt: skip
        files["sudoku_solve_text"].write_bytes(data)
        again = _probe(tmp_path, cave)
        assert again["how"] == {"sudoku_solve_text": "numba"}
        assert again["solved"] == good["solved"]
        rewritten = _probe(tmp_path, cave)  # a good file was written back
        assert rewritten["how"] == {"sudoku_solve_text": "file"}
        assert rewritten["solved"] == good["solved"]

    # a file naming a symbol it does not define, or needing one nobody provides (both
    # authenticated, so that these checks, behind the HMAC's, are what refuses them)
    missing = code.replace(b"numba_gil_ensure", b"numba_gil_ensurX")
    assert missing != code
    for header_, code_ in ((json.dumps({"symbol": "no_such_kernel"}).encode(), code),
                           (header, missing)):  # fmt: skip
        files["sudoku_solve_text"].write_bytes(_sealed(files["sudoku_solve_text"], header_, code_))
        third = _probe(tmp_path, cave)
        assert third["how"] == {"sudoku_solve_text": "numba"}
        assert third["solved"] == good["solved"]


UNCOMPILED = """
import json, sys
from generators import sudoku
from generators._compiled import native as _native
try:
    sudoku.solve("003020600900305001001806400008102900700000008006708200002609500800203009005010300")
    refused = None
except RuntimeError as exc:
    refused = str(exc)
print(json.dumps({"refused": refused, "how": [_native.how_loaded("sudoku_solve_text")]}))
"""


@pytest.mark.slow
def test_numba_s_debugging_mode_refuses_the_sudoku_engine(tmp_path: Path, cave: Path) -> None:
    """Under NUMBA_DISABLE_JIT nothing is compiled: the sudoku engine, which is wrong as
    plain Python, refuses with a clear error instead of answering."""
    answers = {}
    for mode in ("0", "1"):
        env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path), "NUMBA_DISABLE_JIT": mode}
        done = subprocess.run([sys.executable, "-c", UNCOMPILED, str(cave)], env=env,
                              capture_output=True, text=True, timeout=900)  # fmt: skip
        assert done.returncode == 0, done.stderr
        answers[mode] = json.loads(done.stdout.splitlines()[-1])
    assert answers["1"]["how"] == ["python"]
    assert answers["0"]["how"] == ["numba"] and answers["0"]["refused"] is None
    assert "NUMBA_DISABLE_JIT" in answers["1"]["refused"]


def test_the_file_name_follows_what_the_machine_code_depends_on(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from generators.sudoku import _engine as _sudoku_engine

    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    plain = _native._path(_sudoku_engine.KERNEL)
    assert plain is not None and plain.parent == tmp_path / "generators-native"
    monkeypatch.setenv("NUMBA_OPT", "1")  # another optimisation level: other code
    assert _native._path(_sudoku_engine.KERNEL) not in (None, plain)
    monkeypatch.delenv("NUMBA_OPT")
    assert _native._path(_sudoku_engine.KERNEL) == plain


def test_elf_symbols_reads_an_object_file_and_refuses_anything_else() -> None:
    assert _native._elf_symbols(b"MZ\x90\x00" + bytes(200)) is None
    assert _native._elf_symbols(b"\x7fELF\x02\x01" + bytes(20)) is None  # cut short
    from generators.sudoku import _engine as _sudoku_engine

    _sudoku_engine.solve_digits("0" * 81, 1)  # loads or compiles (and keeps) the kernel
    kept = _native._path(_sudoku_engine.KERNEL)
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

"""The compiled-code cache runs only code this user wrote (generators._compiled: private,
native, jit).

Machine code kept on disk runs as whoever loads it: the kernels that ``generators._compiled.native``
links without numba, and numba's own cache (whose index files are pickles). The tests below
plant code that would leave a marker file if it ever ran, and check that it never does,
that answers stay right, and that nothing is written outside this user's private folder.
The strongest ones run as root against files that the user ``nobody`` planted in a shared,
world-writable ``NUMBA_CACHE_DIR``, as in a container or on CI.
"""

from __future__ import annotations

import hashlib
import hmac
import importlib
import inspect
import json
import os
import pickle
import pwd
import shlex
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from generators._compiled import native as _native
from generators._compiled import private as _private
from tests.generators.view import fov_reference

ROOT = Path(__file__).resolve().parents[3]
PUZZLE = "003020600900305001001806400008102900700000008006708200002609500800203009005010300"
#: Project Euler 96, grid 01: checked against the puzzle and the rules in _check_solution.
SOLUTION = "483921657967345821251876493548132976729564138136798245372689514814253769695417382"
ORIGINS = [(5, 5), (30, 12), (50, 30)]
#: The kernel file layout, written out here rather than taken from the module under test.
MAGIC = b"generators-kernel 2\n"

# Views the grid in argv[1] from every origin in argv[2] both ways; with a puzzle in argv[3],
# also solves it and makes a faithful cellular map (a kernel on numba's own cache). Says how
# each kernel was obtained.
PROBE = """
import json, sys
import numpy as np
from generators._compiled import native as _native
from generators.view import fov
grid = np.load(sys.argv[1])
views = [np.flatnonzero(fov.visible(grid, tuple(origin), 7, symmetric=sym)).tolist()
         for origin in json.loads(sys.argv[2]) for sym in (False, True)]
report = {"views": views}
if len(sys.argv) > 3:
    from generators import sudoku
    from generators.maps import cellular
    cellular.generate(12, 9, seed=1, mode="faithful")
    report["solution"] = sudoku.solve(sys.argv[3]).grid
report["how"] = {k: _native.how_loaded(k) for k in ("fov_view",)}
print(json.dumps(report))
"""


def _check_solution(puzzle: str, solution: str) -> None:
    """The rules of sudoku, as an oracle independent of the solver."""
    assert len(solution) == 81
    assert all(c in ("0", s) for c, s in zip(puzzle, solution, strict=True))
    rows = [solution[9 * r : 9 * r + 9] for r in range(9)]
    cols = ["".join(row[c] for row in rows) for c in range(9)]
    boxes = ["".join(rows[r][c] for r in range(b // 3 * 3, b // 3 * 3 + 3)
                     for c in range(b % 3 * 3, b % 3 * 3 + 3)) for b in range(9)]  # fmt: skip
    assert all(sorted(house) == list("123456789") for house in rows + cols + boxes)


def test_the_known_solution_is_right() -> None:
    _check_solution(PUZZLE, SOLUTION)


@pytest.fixture(scope="module")
def grid_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    grid = (np.random.default_rng(5).random((40, 64)) < 0.3).astype(np.uint8)
    path = tmp_path_factory.mktemp("grid") / "grid.npy"
    np.save(path, grid)
    return path


def _reference_views(grid_file: Path) -> list[list[int]]:
    grid = np.load(grid_file)
    return [np.flatnonzero(fov_reference.visible(grid, origin, 7, symmetric=sym)).tolist()
            for origin in ORIGINS for sym in (False, True)]  # fmt: skip


def _run(args: list[str], env: dict[str, str]) -> str:
    done = subprocess.run(args, env={**os.environ, "PYTHONPATH": str(ROOT), **env},
                          capture_output=True, text=True, timeout=900, cwd=ROOT)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def _probe(grid_file: Path, env: dict[str, str], *puzzle: str) -> dict[str, Any]:
    args = [sys.executable, "-c", PROBE, str(grid_file), json.dumps(ORIGINS), *puzzle]
    report: dict[str, Any] = json.loads(_run(args, env).splitlines()[-1])
    return report


def _mac(secret: bytes, name: str, body: bytes) -> bytes:
    return hmac.new(secret, MAGIC + name.encode() + b"\0" + body, hashlib.sha256).digest()


def _seal(secret: bytes, name: str, header: bytes, code: bytes) -> bytes:
    body = header + b"\n" + code
    return MAGIC + _mac(secret, name, body) + body


def _authentic(path: Path) -> bool:
    """Whether kernel file ``path`` carries the right HMAC for its folder's key."""
    data, secret = path.read_bytes(), (path.parent / "key").read_bytes()
    mac, body = data[len(MAGIC) : len(MAGIC) + 32], data[len(MAGIC) + 32 :]
    return data.startswith(MAGIC) and hmac.compare_digest(mac, _mac(secret, path.name, body))


def _planted_object(command: str, symbol: str = "planted") -> bytes:
    """A well-formed ELF object defining ``int64 symbol(int64 *)``, which runs ``command``
    through the C library's ``system`` and returns 0 (a wrong answer for every kernel)."""
    import llvmlite.binding as ll
    from llvmlite import ir

    ll.initialize_native_target()
    ll.initialize_native_asmprinter()
    module = ir.Module(name="planted")
    module.triple = ll.get_process_triple()
    i8, i32, i64 = ir.IntType(8), ir.IntType(32), ir.IntType(64)
    system = ir.Function(module, ir.FunctionType(i32, [i8.as_pointer()]), name="system")
    text = bytearray(command.encode() + b"\0")
    line = ir.GlobalVariable(module, ir.ArrayType(i8, len(text)), name="command")
    line.initializer = ir.Constant(ir.ArrayType(i8, len(text)), text)
    line.global_constant = True
    function = ir.Function(module, ir.FunctionType(i64, [i64.as_pointer()]), name=symbol)
    builder = ir.IRBuilder(function.append_basic_block())
    builder.call(system, [builder.bitcast(line, i8.as_pointer())])
    builder.ret(ir.Constant(i64, 0))
    machine = ll.Target.from_default_triple().create_target_machine()
    return bytes(machine.emit_object(ll.parse_assembly(str(module))))


class _Runs:
    """Unpickling this runs a shell command (what a planted numba index file can do)."""

    def __init__(self, command: str) -> None:
        self.command = command

    def __reduce__(self) -> tuple[Any, tuple[str]]:
        return os.system, (self.command,)


# -- the folder, its key and its files ------------------------------------------------------


def _use(monkeypatch: pytest.MonkeyPatch, cache: Path | None, user: Path) -> None:
    if cache is None:
        monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    else:
        monkeypatch.setenv("NUMBA_CACHE_DIR", str(cache))
    monkeypatch.setenv("XDG_CACHE_HOME", str(user))


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def test_the_folder_is_created_private_and_its_key_is_0600(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _use(monkeypatch, tmp_path / "cache", tmp_path / "user")
    place = _private.folder()
    assert place is not None and place.path == tmp_path / "cache" / "generators-native"
    assert _mode(place.path) == 0o700 and place.path.stat().st_uid == os.geteuid()
    assert _mode(tmp_path / "cache") == 0o755 & ~_umask()  # made missing, as numba did
    secret = _private.key(place)
    assert secret is not None and len(secret) == 32
    keyfile = place.path / "key"
    assert _mode(keyfile) == 0o600 and keyfile.stat().st_uid == os.geteuid()
    assert keyfile.read_bytes() == secret and _private.key(place) == secret
    keyfile.chmod(0o644)  # others could have read it: a new one replaces it
    fresh = _private.key(place)
    assert fresh is not None and fresh != secret and _mode(keyfile) == 0o600
    assert keyfile.read_bytes() == fresh
    assert _private.write(place, "x.kernel", b"data") and _mode(place.path / "x.kernel") == 0o600
    assert sorted(p.name for p in place.path.iterdir()) == ["key", "x.kernel"]  # no leftovers


@pytest.mark.parametrize("mode", [0o770, 0o707, 0o720], ids=oct)
def test_a_folder_others_can_write_to_is_not_used(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, mode: int
) -> None:
    """Group- or world-writable: refused and left as it was; the per-user folder is used."""
    refused = tmp_path / "cache" / "generators-native"
    refused.mkdir(parents=True)
    refused.chmod(mode)
    (refused / "key").write_bytes(bytes(32))
    _use(monkeypatch, tmp_path / "cache", tmp_path / "user")
    place = _private.folder()
    assert place is not None and place.path == tmp_path / "user" / "generators" / "native"
    assert _mode(refused) == mode and [p.name for p in refused.iterdir()] == ["key"]


def test_a_cache_dir_others_can_write_to_gets_nothing_unless_it_is_sticky(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Without the sticky bit, anyone could rename our folder and put theirs in its place:
    nothing is created there. With it (like /tmp), a fresh private folder is safe there."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    _use(monkeypatch, shared, tmp_path / "user")
    place = _private.folder()
    assert place is not None and place.path == tmp_path / "user" / "generators" / "native"
    assert list(shared.iterdir()) == []
    sticky = tmp_path / "sticky"
    sticky.mkdir()
    sticky.chmod(0o1777)
    _use(monkeypatch, sticky, tmp_path / "user")
    place = _private.folder()
    assert place is not None and place.path == sticky / "generators-native"
    assert _mode(place.path) == 0o700


def test_a_symbolic_link_in_place_of_the_folder_is_not_followed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "generators-native").symlink_to(elsewhere)
    _use(monkeypatch, tmp_path / "cache", tmp_path / "user")
    place = _private.folder()
    assert place is not None and place.path == tmp_path / "user" / "generators" / "native"
    assert list(elsewhere.iterdir()) == []
    # a link of ours above the folder is followed, and the path given out has none left
    (tmp_path / "link").symlink_to(tmp_path / "real")
    _use(monkeypatch, tmp_path / "link", tmp_path / "user")
    place = _private.folder()
    assert place is not None and place.path == tmp_path / "real" / "generators-native"
    (tmp_path / "sub").mkdir()
    (tmp_path / "relative").symlink_to("sub/../other")
    _use(monkeypatch, tmp_path / "relative", tmp_path / "user")
    place = _private.folder()
    assert place is not None and place.path == tmp_path / "other" / "generators-native"


def test_only_regular_private_files_of_ours_are_read(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _use(monkeypatch, tmp_path / "cache", tmp_path / "user")
    place = _private.folder()
    assert place is not None
    assert _private.write(place, "good", b"kept")
    assert _private.read(place, "good") == b"kept"
    (place.path / "writable").write_bytes(b"kept")
    (place.path / "writable").chmod(0o620)
    assert _private.read(place, "writable") is None
    (place.path / "link").symlink_to(place.path / "good")
    assert _private.read(place, "link") is None
    os.mkfifo(place.path / "fifo", 0o600)
    assert _private.read(place, "fifo") is None  # and does not wait for a writer
    assert _private.read(place, "../good") is None and _private.read(place, "missing") is None
    if os.geteuid() == 0 and _nobody() is not None:
        foreign = place.path / "foreign"
        foreign.write_bytes(b"kept")
        os.chown(foreign, _nobody().pw_uid, -1)  # type: ignore[union-attr]
        assert _private.read(place, "foreign") is None
        assert not _private.write(place, "foreign", b"ours")  # never replaced
        assert foreign.read_bytes() == b"kept"


def test_a_file_sealed_for_one_kernel_does_not_pass_for_another() -> None:
    secret = os.urandom(32)
    sealed = _native._seal(secret, "a.kernel", b"{}", b"code")
    assert sealed == _seal(secret, "a.kernel", b"{}", b"code")  # the layout written above
    assert _native._unseal(secret, "a.kernel", sealed) == (b"{}", b"code")
    assert _native._unseal(secret, "b.kernel", sealed) is None
    assert _native._unseal(os.urandom(32), "a.kernel", sealed) is None
    assert _native._unseal(secret, "a.kernel", sealed[:-1] + b"x") is None


def test_every_compiled_function_keeps_numba_s_cache_in_the_private_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """numba's index files are pickles: numba's own locators (NUMBA_CACHE_DIR as it is, the
    source's __pycache__) are never used, whatever NUMBA_CACHE_LOCATOR_CLASSES says."""
    import numba
    from numba.core.dispatcher import Dispatcher

    from generators._compiled import jit as _jit
    from generators._compiled import numba_compat

    _use(monkeypatch, tmp_path / "cache", tmp_path / "user")
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(
        numba.config, "CACHE_LOCATOR_CLASSES", "UserProvidedCacheLocator", raising=False
    )  # numba >= 0.62 reads it; older ones have no such knob
    place = _private.folder()
    assert place is not None
    seen = 0
    for _source, name in _sources():
        module = importlib.import_module(name)
        for value in vars(module).values():
            if isinstance(value, Dispatcher) and value.py_func.__module__ == module.__name__:
                function = value.py_func
            elif inspect.isfunction(value) and value.__name__ == "_entry":
                function = value  # a C entry point's body, compiled by _jit.cfunc
            else:
                continue
            cache = _jit._private_cache(function)  # what jit() and cfunc() attach
            assert numba_compat.is_function_cache(cache), function
            assert Path(cache.cache_path).is_relative_to(place.path / "numba"), function
            if isinstance(value, Dispatcher):  # decorated before this test: the same kind
                assert numba_compat.is_function_cache(value._cache), function
            seen += 1
    assert seen >= 10


@pytest.mark.slow
def test_a_kernel_file_with_a_wrong_hmac_is_never_run_but_compiled_again_and_replaced(
    tmp_path: Path, grid_file: Path
) -> None:
    """A file in our own folder holding machine code that would leave a marker, authenticated
    with another key: not run, the view is compiled by numba (right), the file replaced."""
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "cache"), "XDG_CACHE_HOME": str(tmp_path / "u")}
    first = _probe(grid_file, env)
    assert first["how"]["fov_view"] == "numba" and first["views"] == _reference_views(grid_file)
    [kept] = (tmp_path / "cache" / "generators-native").glob("fov_view-*.kernel")
    assert _authentic(kept) and _mode(kept) == 0o600
    marker = tmp_path / "marker"
    planted = _seal(os.urandom(32), kept.name, json.dumps({"symbol": "planted"}).encode(),
                    _planted_object(f"touch {shlex.quote(str(marker))}"))  # fmt: skip
    kept.write_bytes(planted)
    second = _probe(grid_file, env)
    assert not marker.exists()
    assert second["how"]["fov_view"] == "numba" and second["views"] == _reference_views(grid_file)
    assert kept.read_bytes() != planted and _authentic(kept) and _mode(kept) == 0o600
    third = _probe(grid_file, env)
    assert third["how"]["fov_view"] == "file" and third["views"] == _reference_views(grid_file)


# -- files planted by another user in a shared folder, read by root -------------------------


def _nobody() -> pwd.struct_passwd | None:
    try:
        return pwd.getpwnam("nobody")
    except KeyError:
        return None


@pytest.fixture
def as_root() -> pwd.struct_passwd:
    """The user ``nobody``, for tests that must run as root (skipped otherwise, failed on CI)."""
    nobody = _nobody()
    reason = ("needs root (to read files another user planted)" if os.geteuid() != 0 else
              "needs a user 'nobody'" if nobody is None else None)  # fmt: skip
    if reason is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    assert nobody is not None
    return nobody


@pytest.fixture
def scratch() -> Iterator[Path]:
    """A folder under /tmp (others can reach it, unlike pytest's own), removed afterwards."""
    path = Path(tempfile.mkdtemp(prefix="generators-shared-", dir="/tmp"))
    path.chmod(0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path)


def _as(user: pwd.struct_passwd, script: str) -> None:
    """Run a shell script as ``user`` (a process of theirs, no groups of ours)."""
    done = subprocess.run(["/bin/sh", "-c", "set -e; umask 000; " + script], cwd="/",
                          user=user.pw_uid, group=user.pw_gid, extra_groups=[],
                          env={"PATH": "/usr/bin:/bin"}, capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr


def _snapshot(root: Path) -> dict[str, Any]:
    """Everything about a tree that a write would change (links are not followed)."""
    seen: dict[str, Any] = {}
    for folder, dirs, files in os.walk(root):
        for path in [Path(folder)] + [Path(folder, name) for name in dirs + files]:
            st = path.lstat()
            content = (path.read_bytes() if stat.S_ISREG(st.st_mode) else
                       os.readlink(path) if stat.S_ISLNK(st.st_mode) else None)  # fmt: skip
            seen[str(path)] = (st.st_uid, st.st_mode, st.st_mtime_ns, content)
    return seen


def _sources() -> list[tuple[Path, str]]:
    """Every module of the package (its subpackages included): source file and name."""
    return [(path, ".".join(path.relative_to(ROOT).with_suffix("").parts))
            for path in sorted((ROOT / "generators").rglob("*.py"))
            if path.stem != "__init__" and "__pycache__" not in path.parts]  # fmt: skip


def _numba_index_files(shared: Path) -> list[Path]:
    """The index files numba's own cache would look up under NUMBA_CACHE_DIR=shared for every
    compiled function of the package (``folder/module.qualname-line.pyXY.nbi``)."""
    from numba.core.dispatcher import Dispatcher

    files = set()
    for source, name in _sources():
        if "generators._compiled.jit import" not in source.read_text():
            continue  # compiles nothing
        module = importlib.import_module(name)
        for value in vars(module).values():
            function = value.py_func if isinstance(value, Dispatcher) else value
            if inspect.isfunction(function) and function.__module__ == module.__name__:
                files.add(_numba_default_folder(shared, source.parent)
                          / f"{source.stem}.{function.__qualname__}-"
                          f"{function.__code__.co_firstlineno}.py{sys.version_info[0]}"
                          f"{sys.version_info[1]}{sys.abiflags}.nbi")  # fmt: skip
    return sorted(files)


def _numba_default_folder(shared: Path, source: Path) -> Path:
    """Where numba's own locator keeps the cache of the sources in the folder ``source``
    under NUMBA_CACHE_DIR=shared."""
    return shared / f"{source.name}_{hashlib.sha1(str(source).encode()).hexdigest()}"


def _numba_default_folders(shared: Path) -> list[Path]:
    """numba's own cache folders for every folder of the package that compiles code."""
    return sorted({path.parent for path in _numba_index_files(shared)})


def _kernel_names(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[str, str]:
    """The names the kernel files have for this configuration (public: the same digest in
    every process of this install), found here in a folder of the test's own."""
    from generators.view import _shadowcast as shadowcast

    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "names"))
    names = {}
    for spec in (shadowcast._KERNEL,):
        path = _native._path(spec)
        assert path is not None
        names[spec.name] = path.name
    monkeypatch.delenv("NUMBA_CACHE_DIR")
    return names


@pytest.mark.slow
def test_code_planted_by_another_user_in_a_shared_cache_dir_never_runs(
    as_root: pwd.struct_passwd, scratch: Path, tmp_path: Path, grid_file: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """Root solves with NUMBA_CACHE_DIR set to a world-writable folder where ``nobody`` made
    ``generators-native`` first, holding the view's kernel file under its right name
    (authenticated with a key of theirs, left beside it), and numba index files that run a
    command when unpickled (the solver itself is C, compiled at build time). None of it
    runs, the answers are right, the shared folder is exactly as ``nobody`` left it, and
    root's code is kept in its per-user folder."""
    shared, stage = scratch / "shared", scratch / "stage"
    shared.mkdir(mode=0o777)
    shared.chmod(0o1777)
    stage.mkdir(mode=0o755)
    markers = [tmp_path / "ran-kernel", tmp_path / "ran-index"]
    names = _kernel_names(monkeypatch, tmp_path)
    their_key = os.urandom(32)
    header = json.dumps({"symbol": "planted"}).encode()
    (stage / "key").write_bytes(their_key)
    planted = _planted_object(f"touch {shlex.quote(str(markers[0]))}")
    (stage / "fov").write_bytes(_seal(their_key, names["fov_view"], header, planted))
    (stage / "index").write_bytes(pickle.dumps(_Runs(f"touch {shlex.quote(str(markers[1]))}")))
    for path in stage.iterdir():
        path.chmod(0o644)
    folder, index_files = shared / "generators-native", _numba_index_files(shared)
    q = shlex.quote
    script = [
        f"mkdir {q(str(folder))} " + " ".join(q(str(f)) for f in _numba_default_folders(shared)),
        f"cp {q(str(stage / 'key'))} {q(str(folder / 'key'))}",
        f"chmod 600 {q(str(folder / 'key'))}",
        f"cp {q(str(stage / 'fov'))} {q(str(folder / names['fov_view']))}",
    ]
    script += [f"cp {q(str(stage / 'index'))} {q(str(index))}"
               for index in index_files]  # fmt: skip
    _as(as_root, "; ".join(script))
    assert folder.stat().st_uid == as_root.pw_uid
    assert (folder / names["fov_view"]).stat().st_uid == as_root.pw_uid
    before = _snapshot(shared)

    puzzles = tmp_path / "puzzles.txt"
    puzzles.write_text(PUZZLE + "\n")
    env = {"NUMBA_CACHE_DIR": str(shared), "XDG_CACHE_HOME": str(tmp_path / "user"),
           "HOME": str(tmp_path / "home")}  # fmt: skip
    solved = subprocess.run([sys.executable, "-m", "entityworks", "sudoku", "solve",
                             str(puzzles), "--db", str(tmp_path / "catalog.db")],
                            env={**os.environ, "PYTHONPATH": str(ROOT), **env}, cwd=ROOT,
                            capture_output=True, text=True, timeout=900)  # fmt: skip
    ran = [m.name for m in markers if m.exists()]  # before anything else can fail
    assert ran == [], solved.stderr
    assert solved.returncode == 0 and "1 solved" in solved.stdout, solved.stderr
    with sqlite3.connect(tmp_path / "catalog.db") as db:
        assert db.execute("SELECT solution FROM sudoku_puzzles").fetchall() == [(SOLUTION,)]
    probe = _probe(grid_file, env, PUZZLE)
    assert [m.name for m in markers if m.exists()] == []
    assert probe["solution"] == SOLUTION and probe["views"] == _reference_views(grid_file)
    # the probe compiled the view (the solver is C) and kept it in root's own folder
    assert probe["how"] == {"fov_view": "numba"}
    assert _snapshot(shared) == before
    private = tmp_path / "user" / "generators" / "native"
    assert _mode(private) == 0o700 and private.stat().st_uid == 0
    kept = sorted(private.glob("*.kernel"))
    assert sorted(p.name for p in kept) == sorted(names.values())
    assert all(_mode(p) == 0o600 and _authentic(p) for p in kept)
    assert _mode(private / "key") == 0o600
    assert any((private / "numba").rglob("*.nbi"))  # numba's own cache went there too


@pytest.mark.slow
def test_a_link_planted_in_place_of_the_folder_is_not_followed_as_root(
    as_root: pwd.struct_passwd, scratch: Path, tmp_path: Path, grid_file: Path
) -> None:
    """``nobody`` puts links to folders of root's where ``generators-native`` and numba's own
    folder would be: root writes nothing through them and computes the same."""
    shared = scratch / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    targets = [scratch / "root-only-1", scratch / "root-only-2"]
    for target in targets:
        target.mkdir(mode=0o700)
    q = shlex.quote
    _as(
        as_root,
        f"ln -s {q(str(targets[0]))} {q(str(shared / 'generators-native'))}; "
        + "; ".join(
            f"ln -s {q(str(targets[1]))} {q(str(folder))}"
            for folder in _numba_default_folders(shared)
        ),
    )
    before = {**_snapshot(shared), **_snapshot(targets[0]), **_snapshot(targets[1])}
    env = {"NUMBA_CACHE_DIR": str(shared), "XDG_CACHE_HOME": str(tmp_path / "user"),
           "HOME": str(tmp_path / "home")}  # fmt: skip
    probe = _probe(grid_file, env)
    assert probe["views"] == _reference_views(grid_file)
    assert {**_snapshot(shared), **_snapshot(targets[0]), **_snapshot(targets[1])} == before
    assert any((tmp_path / "user" / "generators" / "native").glob("fov_view-*.kernel"))

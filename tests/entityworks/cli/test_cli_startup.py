"""The command line starts light: ``import entityworks.cli`` and ``--help``/``--version`` load no
heavy library (checked through ``sys.modules`` in a fresh interpreter, not by timing), and
Ctrl-C at any early moment ends with ``error: aborted`` and status 1, never a traceback."""

from __future__ import annotations

import importlib.metadata
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import entityworks

ROOT = Path(__file__).resolve().parents[3]
HEAVY = (
    "pandas",
    "pyarrow",
    "scipy",
    "PIL",
    "lxml",
    "alembic",
    "numba",
    "sqlalchemy",
    "numpy",
    "dask",
    "datasette",
)


def loaded_after(code: str) -> list[str]:
    """Top-level packages of HEAVY present in sys.modules after running ``code``."""
    probe = (
        f"import sys\n{code}\nimport json\n"
        f"print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & "
        f"set({list(HEAVY)!r}))))"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_importing_the_cli_loads_no_heavy_module():
    assert loaded_after("import entityworks.cli") == []
    assert loaded_after("import entityworks") == []


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["--version"],
        ["query", "--help"],
        ["generate", "--help"],
        ["sudoku", "solve", "--help"],
    ],
)
def test_help_and_version_load_no_heavy_module(args):
    code = (
        "from click.testing import CliRunner\nfrom entityworks.cli import cli\n"
        f"result = CliRunner().invoke(cli, {args!r})\n"
        "assert result.exit_code == 0, result.output\n"
    )
    assert loaded_after(code) == []


def test_a_command_loads_only_its_own_module():
    """The root group imports a command's module when the command is looked up, no other."""
    code = (
        "from click.testing import CliRunner\nfrom entityworks.cli import cli\n"
        "result = CliRunner().invoke(cli, ['query', '--help'])\n"
        "assert result.exit_code == 0, result.output\n"
        "print(' '.join(m for m in sys.modules if m.startswith('entityworks.cli.')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", "import sys\n" + code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    loaded = {m.rpartition(".")[2] for m in done.stdout.strip().splitlines()[-1].split()}
    expected = {"_catalog", "_controls", "errors", "group", "options", "output", "_stores"}
    assert loaded == expected, loaded


def test_every_command_is_found_under_its_own_name():
    from entityworks.cli import cli
    from entityworks.cli.group import COMMANDS

    assert sorted(cli.commands) == sorted(COMMANDS)
    for name in COMMANDS:
        assert cli.commands[name].name == name


def test_query_loads_only_what_it_needs(tmp_path):
    from entityworks.catalog import generate_into, open_catalog

    db = tmp_path / "c.db"
    generate_into(open_catalog(db), "cellular", 1, seed=1)
    code = (
        "from click.testing import CliRunner\nfrom entityworks.cli import cli\n"
        f"result = CliRunner().invoke(cli, ['query', 'maps', '--db', {str(db)!r}])\n"
        "assert result.exit_code == 0, result.output\n"
        "assert '<ndarray 40x21 uint8>' in result.output, result.output\n"
    )
    # an SQLite file is read without SQLAlchemy (entityworks.sql.backends.sqlitefile)
    assert loaded_after(code) == ["numpy"]


@pytest.mark.parametrize(
    "args",
    [
        ["-c", "id,kind,seed,width,height", "--limit", "5"],
        ["-w", "kind=cellular", "-o", "-open_ratio", "-c", "id,open_ratio", "--format", "json"],
        ["-w", "width>=40", "--count"],
    ],
)
def test_a_query_that_shows_no_grid_loads_no_numpy(tmp_path, args):
    """The catalog's tables are named, their schemas built and their rows read without
    NumPy when no grid is shown: ``PackedGrid``'s base is named, not imported, and
    ``--columns`` decodes only its columns. The same query shows the grid once asked."""
    from entityworks.catalog import generate_into, open_catalog

    db = tmp_path / "c.db"
    generate_into(open_catalog(db), "cellular", 2, seed=1)
    run = f"result = CliRunner().invoke(cli, ['query', 'maps', '--db', {str(db)!r}, *{{}}])\n"
    head = "from click.testing import CliRunner\nfrom entityworks.cli import cli\n"
    code = head + run.format(repr(args)) + "assert result.exit_code == 0, result.output\n"
    assert loaded_after(code) == []
    code = (
        head
        + run.format(repr(["-c", "id,grid", "--limit", "1"]))
        + (
            "assert result.exit_code == 0, result.output\n"
            "assert '<ndarray 40x21 uint8>' in result.output, result.output\n"
        )
    )
    assert loaded_after(code) == ["numpy"]


def test_the_lazy_package_keeps_its_api():
    assert entityworks.__version__ == importlib.metadata.version("entityworks")
    for name in entityworks.__all__:
        assert getattr(entityworks, name) is not None, name
    import entityworks.registry as registry_module
    from entityworks.registry import TypeRegistry

    # the package's name is the module (it used to be patched into the default registry,
    # so that this import gave the registry), which speaks for the default registry
    assert entityworks.registry is registry_module
    assert isinstance(registry_module.registry, TypeRegistry)
    assert entityworks.registry.lookup(int) is registry_module.registry.lookup(int)
    assert set(entityworks.__all__) <= set(dir(entityworks))
    with pytest.raises(AttributeError):
        entityworks.no_such_name  # noqa: B018


def _command() -> list[str]:
    script = Path(sys.executable).parent / "entityworks"
    return [str(script)] if script.exists() else [sys.executable, "-m", "entityworks"]


def _python_is_up(pid: int) -> bool:
    """True once the child runs Python with its own SIGINT handler installed (before that,
    SIGINT would end it the way it ends any program that has not started yet)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    caught = next(line for line in status.splitlines() if line.startswith("SigCgt:"))
    return bool(int(caught.split()[1], 16) & (1 << (signal.SIGINT - 1)))


def _as_from_a_terminal() -> None:
    """The child's SIGINT as a shell with job control starts a program: not ignored, even
    when this test runs where SIGINT is (a background job of a script inherits SIG_IGN,
    which a child would keep, and never see its Ctrl-C)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _interrupt(tmp_path: Path, delay: float) -> tuple[int, str, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("ENTITYWORKS_TRACEBACK", None)
    proc = subprocess.Popen(
        _command()
        + ["generate", "caves", "--count", "200", "--workers", "1", "--db", str(tmp_path / "c.db")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
        preexec_fn=_as_from_a_terminal,
    )
    deadline = time.monotonic() + 30
    while not _python_is_up(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.0005)
    time.sleep(delay)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    return proc.returncode, out, err


def _before_entityworks(err: str) -> bool:
    """The interrupt came before any entityworks code ran: in CPython's own initialisation
    (``Fatal Python error: init_...``, ``failed to set __main__.__loader__``) or while the
    console script's first import was still locating or starting its first module (frames of
    the launcher script, importlib, path hooks and the first lines of ``entityworks_launch``
    only, or none at all). No program can answer a signal there; from the first line of
    ``entityworks/__init__`` on, a traceback would show our frames."""
    if "error: aborted" in err:
        return False
    # CPython interrupted while initialising may report the interrupt as another error
    # (``init_sys_streams: ... TypeError: expected a message argument``)
    if "KeyboardInterrupt" not in err and "Fatal Python error: init_" not in err:
        return False
    frames = [line.strip() for line in err.splitlines() if line.lstrip().startswith("File ")]
    return not any("/entityworks/" in frame or "/generators/" in frame for frame in frames)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc")
@pytest.mark.parametrize("delay", [0.0, 0.01, 0.03, 0.06, 0.1, 0.2, 0.35, 0.6, 1.0])
def test_ctrl_c_early_in_a_command_is_one_line(tmp_path, delay):
    """SIGINT while the interpreter imports the command line or while the command runs.

    The delay counts from the moment the child's Python catches SIGINT; tries that land in
    CPython's own start-up or the launcher's first line (before any entityworks code) are
    repeated later, with a growing delay."""
    for attempt in range(20):
        # later and later: on a loaded machine CPython's start-up alone can take a second
        waited = delay + 0.005 * attempt * attempt
        status, out, err = _interrupt(tmp_path, waited)
        if not _before_entityworks(err):
            break
    else:
        pytest.fail(f"every interrupt landed in Python's own start-up: {err}")
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    if status == 0:  # it finished first: possible only for the last delays
        assert waited >= 0.6 and out.startswith("stored 200"), (out, err)
        return
    assert (status, err) == (1, "error: aborted\n"), (status, out, err)


_HALF_MADE = """
from entityworks.cli.errors import aborted


class HalfMade:
    # an object an interrupt left half made: its finalizer fails (llvmlite's did)
    def __del__(self):
        raise AttributeError("'HalfMade' object has no attribute '_as_parameter_'")


held = HalfMade()  # finalized as the interpreter ends
aborted()
"""


@pytest.mark.parametrize("traceback", [False, True])
def test_an_interrupt_ends_quietly_despite_a_failing_finalizer(traceback):
    """Ctrl-C that lands while a library builds an object (numba compiling): the object's
    finalizer fails as the interpreter ends, which Python would print as "Exception ignored
    in ..." and a traceback after ``error: aborted``; only ENTITYWORKS_TRACEBACK shows it."""
    env = {**os.environ}
    env.pop("ENTITYWORKS_TRACEBACK", None)
    if traceback:
        env["ENTITYWORKS_TRACEBACK"] = "1"
    done = subprocess.run(
        [sys.executable, "-c", _HALF_MADE], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 1
    if traceback:
        assert done.stderr.startswith("error: aborted\n")
        assert "Exception ignored" in done.stderr and "_as_parameter_" in done.stderr
    else:
        assert done.stderr == "error: aborted\n"


def test_a_sqlite_query_loads_no_other_sql_dialect(tmp_path):
    """The MariaDB, SQL Server and PostgreSQL forms of the column types are built only when
    a statement is compiled for those dialects (``sqltypes._Variants``)."""
    from entityworks.catalog import generate_into, open_catalog

    db = tmp_path / "c.db"
    generate_into(open_catalog(db), "dungeon", 1, seed=1, params={"width": 30, "height": 20})
    probe = (
        "import sys, json\nfrom click.testing import CliRunner\n"
        "from entityworks.cli import cli\n"
        # through the Store (the query of a file reads it without SQLAlchemy)
        "import entityworks.cli._catalog as command\ncommand.READ_FILES_DIRECTLY = False\n"
        f"result = CliRunner().invoke(cli, ['query', 'maps_corridors', '--db', {str(db)!r}])\n"
        "assert result.exit_code == 0, result.output\n"
        "print(json.dumps(sorted(m for m in sys.modules "
        "if m.startswith('sqlalchemy.dialects.'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    loaded = {m.split(".")[2] for m in json.loads(done.stdout.strip().splitlines()[-1])}
    assert "sqlite" in loaded
    assert not loaded & {"mysql", "mssql", "postgresql", "oracle"}, loaded


@pytest.mark.parametrize(
    "args",
    [
        ["--limit", "2"],
        ["-w", "kind=cellular", "--format", "json", "-c", "id,kind"],
        ["-w", "kind in cellular,caves", "-o", "-open_ratio", "--format", "csv"],
        ["-w", "kind like cell%", "--count"],
    ],
)
def test_a_query_of_a_database_file_imports_no_sqlalchemy(tmp_path, args):
    """``entityworks query`` on an SQLite file, in a fresh interpreter: the rows printed,
    and no SQLAlchemy module loaded (checked through ``sys.modules``)."""
    from entityworks.catalog import generate_into, open_catalog

    db = tmp_path / "c.db"
    generate_into(open_catalog(db), "cellular", 2, seed=1)
    probe = (
        "import sys, json\nfrom click.testing import CliRunner\n"
        "from entityworks.cli import cli\n"
        f"result = CliRunner().invoke(cli, ['query', 'maps', '--db', {str(db)!r}, *{args!r}])\n"
        "assert result.exit_code == 0, result.output\n"
        "print(json.dumps([result.output, sorted(m for m in sys.modules "
        "if m.split('.')[0] == 'sqlalchemy')]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    output, sqlalchemy = json.loads(done.stdout.strip().splitlines()[-1])
    assert sqlalchemy == []
    assert "cellular" in output or output.strip() == "2"


def test_an_interrupt_inside_cpython_s_own_start_up_is_recognised() -> None:
    """What CPython printed when SIGINT landed in its stream set-up (seen in CI): no
    KeyboardInterrupt in the text, no entityworks frame; an interrupt that reached our code
    is not mistaken for it."""
    inside = (
        "Fatal Python error: init_sys_streams: can't initialize sys standard streams\n"
        "Python runtime state: core initialized\nTraceback (most recent call last):\n"
        '  File "<frozen importlib._bootstrap>", line 1176, in _find_and_load\n'
        '  File "<frozen io>", line 111, in <module>\n'
        "TypeError: expected a message argument\n"
    )
    assert _before_entityworks(inside)
    ours = (
        "Traceback (most recent call last):\n"
        '  File "/x/entityworks/cli/group.py", line 3, in main\nKeyboardInterrupt\n'
    )
    assert not _before_entityworks(ours)
    assert not _before_entityworks("error: aborted\n")

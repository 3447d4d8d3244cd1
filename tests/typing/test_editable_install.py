"""The README's ``pip install -e ".[test]"`` gives an install both type checkers find.

setuptools installs an editable project either as a plain path in a ``.pth`` file or through
an import hook (a finder module the ``.pth`` imports); mypy and pyright follow the first only,
and found no ``entityworks`` at all behind the second. Here the project's editable wheel is
built as pip builds it (setuptools' PEP 660 hook, from a copy of the checkout), installed
into a fresh virtual environment as pip installs a wheel (its files unpacked into
site-packages; no dependencies, no network), and each checker, pointed at that environment's
interpreter with no PYTHONPATH or MYPYPATH, checks a user's module that imports entityworks.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.typing.test_type_checks import _require

ROOT = Path(__file__).resolve().parents[2]

USER_MODULE = """from __future__ import annotations

from typing import assert_type

from entityworks import Store, entity, primary_key


@entity()
class Item:
    sku: str = primary_key(max_length=20)
    name: str


def find(store: Store, sku: str) -> Item | None:
    found = store.get(Item, sku)
    assert_type(found, Item | None)
    return found
"""


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MYPYPATH")}
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the checkout's copy, the python of a fresh environment it is installed in)."""
    _require("setuptools")
    base = tmp_path_factory.mktemp("editable")
    source = base / "source"
    shutil.copytree(
        ROOT,
        source,
        ignore=shutil.ignore_patterns(
            ".git",
            ".venv*",
            ".ci-venv*",
            "*.egg-info",
            "build",
            "dist",
            "__pycache__",
            "*.db",
            ".*_cache",
            ".hypothesis",
            "demo-output",
            "entityworks-demo",
        ),
    )
    out = base / "wheel"
    out.mkdir()
    done = _run(
        [
            sys.executable,
            "-c",
            f"from setuptools import build_meta; print(build_meta.build_editable({str(out)!r}))",
        ],
        source,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    [wheel] = out.glob("entityworks-*.whl")
    venv = base / "venv"
    done = _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], base)
    assert done.returncode == 0, done.stderr
    python = venv / "bin" / "python"
    site = _run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], base
    ).stdout.strip()
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        assert not [n for n in names if "finder" in n], names  # no import hook
        [pth] = [n for n in names if n.endswith(".pth")]
        lines = [line for line in archive.read(pth).decode().splitlines() if line.strip()]
        assert lines == [str(source)], lines  # a plain path: the checkout itself
        archive.extractall(site)
    return source, python


def test_the_install_is_the_checkout(installed: tuple[Path, Path], tmp_path: Path) -> None:
    source, python = installed
    done = _run([str(python), "-c", "import entityworks; print(entityworks.__file__)"], tmp_path)
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()) == source / "entityworks" / "__init__.py"


def test_mypy_finds_the_editable_install(installed: tuple[Path, Path], tmp_path: Path) -> None:
    _require("mypy")
    _source, python = installed
    user = tmp_path / "user_models.py"
    user.write_text(USER_MODULE, encoding="utf-8")
    done = _run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--follow-imports=silent",
            "--python-executable",
            str(python),
            "--cache-dir",
            str(tmp_path / "cache"),
            str(user),
        ],
        tmp_path,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    # and what it found is the typed package: a wrong type is an error
    user.write_text(USER_MODULE.replace("Item | None)", "int)"), encoding="utf-8")
    done = _run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--follow-imports=silent",
            "--python-executable",
            str(python),
            "--cache-dir",
            str(tmp_path / "cache"),
            str(user),
        ],
        tmp_path,
    )
    assert done.returncode == 1 and '"Item | None", not "int"  [assert-type]' in done.stdout, (
        done.stdout
    )


def test_pyright_finds_the_editable_install(installed: tuple[Path, Path], tmp_path: Path) -> None:
    _require("pyright")
    _source, python = installed
    user = tmp_path / "user_models.py"
    user.write_text(USER_MODULE, encoding="utf-8")
    done = _run(
        [sys.executable, "-m", "pyright", "--outputjson", "--pythonpath", str(python), str(user)],
        tmp_path,
    )
    report = json.loads(done.stdout)
    errors = [d["message"] for d in report["generalDiagnostics"] if d["severity"] == "error"]
    assert errors == [], errors
    user.write_text(USER_MODULE.replace("Item | None)", "int)"), encoding="utf-8")
    done = _run(
        [sys.executable, "-m", "pyright", "--outputjson", "--pythonpath", str(python), str(user)],
        tmp_path,
    )
    report = json.loads(done.stdout)
    errors = [d["message"] for d in report["generalDiagnostics"] if d["severity"] == "error"]
    assert len(errors) == 1 and "assert_type" in errors[0], errors

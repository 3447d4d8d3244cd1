"""mypy --strict and pyright (strict) on a user's module (``sample_models.py``).

Each checker must accept the sample (field orders the runtime accepts, precise return types
asserted with ``assert_type``) and must reject a wrong one, so a type that silently became
``Any`` fails here. A checker that is not installed skips the test, except under CI.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import IN_CI

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = Path(__file__).with_name("sample_models.py")

WRONG = """# pyright: strict
from __future__ import annotations
from typing import assert_type

import pyarrow as pa

from entityworks import Store, column, entity, primary_key


@entity()
class Item:
    sku: str = primary_key(max_length=20)
    name: str
    count: str = column(default=0)


def rows(store: Store) -> None:
    assert_type(store.to_arrow(Item), pa.Table)
    assert_type(store.get(Item, "x"), int)
"""


def _require(module: str) -> None:
    if importlib.util.find_spec(module) is None:
        message = f"{module} is not installed (pip install -e '.[test]')"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)


def _env() -> dict[str, str]:
    # The checkout under test, whatever the environment has installed (another checkout, or
    # an install made before the editable install became a plain path: an import hook
    # neither checker follows; test_editable_install.py checks the install itself).
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path, "MYPYPATH": str(ROOT)}


def _mypy(path: Path) -> subprocess.CompletedProcess[str]:
    _require("mypy")
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--follow-imports=silent",
            "--config-file",
            str(ROOT / "pyproject.toml"),
            str(path),
        ],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )


def _pyright(path: Path) -> dict[str, object]:
    _require("pyright")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pyright",
            "--outputjson",
            "--pythonpath",
            sys.executable,
            "--pythonversion",
            "3.11",
            str(path),
        ],
        cwd=ROOT,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    try:
        report: dict[str, object] = json.loads(done.stdout)
    except json.JSONDecodeError:
        pytest.fail(f"pyright did not run: {done.stdout[-2000:]}{done.stderr[-2000:]}")
    return report


def _errors(report: dict[str, object]) -> list[str]:
    diagnostics = report["generalDiagnostics"]
    assert isinstance(diagnostics, list)
    return [
        f"{d['file']}:{d['range']['start']['line'] + 1}: {d['message']}"
        for d in diagnostics
        if d["severity"] == "error"
    ]


def test_sample_runs_as_declared() -> None:
    from tests.typing.sample_models import main

    assert main() == 5  # one cheap product, two rows in Arrow, one in the frame, a shipment


def test_mypy_strict_accepts_the_sample() -> None:
    done = _mypy(SAMPLE)
    assert done.returncode == 0, done.stdout + done.stderr


def test_pyright_strict_accepts_the_sample() -> None:
    assert _errors(_pyright(SAMPLE)) == []


@pytest.mark.slow
def test_mypy_rejects_wrong_types(tmp_path: Path) -> None:
    wrong = tmp_path / "wrong_models.py"
    wrong.write_text(WRONG, encoding="utf-8")
    done = _mypy(wrong)
    assert done.returncode == 1
    lines = [line for line in done.stdout.splitlines() if ": error:" in line]
    assert [line.split(":")[1] for line in lines] == ["14", "19"], done.stdout


def test_pyright_rejects_wrong_types(tmp_path: Path) -> None:
    wrong = tmp_path / "wrong_models.py"
    wrong.write_text(WRONG, encoding="utf-8")
    lines = sorted({int(e.split(":")[1]) for e in _errors(_pyright(wrong))})
    assert lines == [14, 19]


#: Every option of column() on primary_key() and column(), under @entity (where a key or a
#: column without a default may be followed by fields without one) and under a plain
#: @dataclass (where checkers know dataclasses.field() alone as no default, so the fields
#: after a primary_key(...) have defaults). The two lines marked "error" must be refused: the
#: options are checked, not swallowed.
OPTIONS = """# pyright: strict
from __future__ import annotations

from dataclasses import dataclass

from entityworks import column, entity, primary_key, table


@entity("accounts")
class Account:
    code: str = primary_key(max_length=20, name="Account Code", unique=True, index=True,
                            init=True, repr=True, hash=None, compare=True, metadata={"k": 1},
                            kw_only=False)
    owner: str
    email: str = column(max_length=80, unique=True, index=True, name="e_mail")
    balance: int
    parent: str | None = column(default=None, references="Account", on_delete="set null",
                                max_length=20)
    tags: list[str] = column(default_factory=list[str], init=True, repr=True, hash=None,
                             compare=True, metadata={"k": 1}, kw_only=False)


@table("isbn_books")
@dataclass
class Book:
    isbn: str = primary_key(max_length=20, references=Account, on_delete="cascade")
    title: str = column(default="", max_length=200)
    pages: int = 0


@entity()
class Wrong:
    key: str = primary_key(max_lenght=20)  # error: no such option
    count: int = primary_key(default="many")  # error: the default is no int


def use() -> tuple[Account, Book]:
    return Account("a", "ann", "a@x", 1), Book("978-0")
"""
OPTION_ERRORS = [33, 34]


def test_mypy_takes_every_option_of_primary_key_and_column(tmp_path: Path) -> None:
    sample = tmp_path / "options_models.py"
    sample.write_text(OPTIONS, encoding="utf-8")
    done = _mypy(sample)
    lines = [line for line in done.stdout.splitlines() if ": error:" in line]
    assert [int(line.split(":")[1]) for line in lines] == OPTION_ERRORS, done.stdout


def test_pyright_takes_every_option_of_primary_key_and_column(tmp_path: Path) -> None:
    sample = tmp_path / "options_models.py"
    sample.write_text(OPTIONS, encoding="utf-8")
    errors = _errors(_pyright(sample))
    assert sorted({int(e.split(":")[1]) for e in errors}) == OPTION_ERRORS, errors

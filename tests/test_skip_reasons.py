"""A skip tells a newcomer what to install: every skip reason (and every hint of the run's skip
summary) that names an extra names one that installs the missing package, read from
pyproject.toml's optional-dependencies, never another."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from tests.conftest import RESOURCES, skip_summary

ROOT = Path(__file__).resolve().parents[1]
EXTRAS: dict[str, list[str]] = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))[
    "project"
]["optional-dependencies"]
CORE: list[str] = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
    "dependencies"
]

#: "<package> is not installed ... .[<extra>]", "entityworks[<extra>]" or "the <extra> extra"
NAMED = re.compile(
    r"([\w.-]+) (?:is|are) not installed[^\n]*?"
    r"(?:\.\[|entityworks\[|the )(\w+)(?:\]| extra)",
    re.IGNORECASE,
)


def _name(requirement: str) -> str:
    return re.split(r"[\[<>=!~ ;]", requirement, maxsplit=1)[0].lower()


def provided(extra: str) -> set[str]:
    """The distributions ``pip install ".[extra]"`` adds, through entityworks[...] too."""
    names: set[str] = set()
    for requirement in EXTRAS[extra]:
        if _name(requirement) == "entityworks":
            inner = re.search(r"\[(.*?)\]", requirement)
            assert inner is not None
            for sub in inner.group(1).split(","):
                names |= provided(sub.strip())
        else:
            names.add(_name(requirement))
    return names


def test_every_skip_reason_names_the_extra_that_installs_the_package() -> None:
    found = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        for match in NAMED.finditer(path.read_text(encoding="utf-8")):
            package, extra = match.group(1).lower(), match.group(2)
            found.append((path.name, package, extra))
            assert extra in EXTRAS, f"{path}: {match.group(0)!r} names no extra of pyproject"
            assert package in provided(extra), (
                f"{path}: {match.group(0)!r}: the {extra} extra does not install {package}"
            )
    assert len(found) >= 4  # the reasons are recognised (Datasette, selenium, mkdocs, ...)


def test_the_summary_hints_name_the_right_extra() -> None:
    hints = {name: enable for _, name, enable in RESOURCES}
    assert "distributed" in provided("dask") and "[dask]" in hints["Dask"]
    assert {"pyarrow", "pandas"} <= {_name(r) for r in CORE}
    line = skip_summary(
        [
            "could not import 'pyarrow': No module named 'pyarrow'",
            "could not import 'distributed': No module named 'distributed'",
        ]
    )
    assert line is not None
    assert "(pip install -e .)" in line and "'.[dask]'" in line
    for extra in re.findall(r"\.\[(\w+)\]", " ".join(hints.values())):
        assert extra in EXTRAS

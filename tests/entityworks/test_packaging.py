"""Packaging hygiene (issue 14): the license, its SPDX metadata, the changelog, and the shell
completion line the README gives, run as a user would."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from importlib.metadata import metadata
from pathlib import Path

import pytest

from tests.conftest import IN_CI

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_license_is_mit_with_spdx_metadata() -> None:
    project = _pyproject()["project"]
    assert project["license"] == "MIT"  # an SPDX expression, not the deprecated table
    assert project["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License\n")
    assert "Copyright (c) 2026 entityworks contributors" in text
    assert 'THE SOFTWARE IS PROVIDED "AS IS"' in text
    # no license classifier beside an SPDX expression (setuptools refuses the pair)
    assert not [c for c in project["classifiers"] if c.startswith("License ::")]
    requires = _pyproject()["build-system"]["requires"]
    floor = [r for r in requires if r.startswith("setuptools")][0]
    version = tuple(int(p) for p in re.search(r">=([\d.]+)", floor).group(1).split("."))
    assert version >= (77, 0, 3)  # the first setuptools reading PEP 639 license fields


def test_urls_are_real_addresses_and_the_documents_ship() -> None:
    project = _pyproject()["project"]
    for url in project.get("urls", {}).values():  # none until there is a public home
        assert re.fullmatch(r"https?://[^\s/]+\.[^\s/]+(/\S*)?", url), url
    manifest = (ROOT / "MANIFEST.in").read_text(encoding="utf-8")
    for document in ("README.md", "LICENSE", "CHANGELOG.md"):
        assert (ROOT / document).is_file()
        assert document in ("README.md", "LICENSE") or f"include {document}" in manifest
    assert "Programming Language :: Python :: 3.11" in project["classifiers"]
    assert "Typing :: Typed" in project["classifiers"]


def test_the_release_is_one_version_everywhere_with_a_dated_changelog_entry() -> None:
    """pyproject, both packages' ``__version__``, ``--version`` and the newest CHANGELOG
    heading name the same release, dated no later than today; 0.1.0 stays listed below."""
    import datetime

    from click.testing import CliRunner

    import generators
    from entityworks import __version__
    from entityworks.cli import cli

    version = _pyproject()["project"]["version"]
    assert __version__ == generators.__version__ == version
    shown = CliRunner().invoke(cli, ["--version"])
    assert shown.exit_code == 0 and version in shown.output
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## (.+)$", text, re.MULTILINE)
    newest = re.fullmatch(r"(\d+\.\d+\.\d+) — (\d{4}-\d{2}-\d{2})", headings[0])
    assert newest is not None, headings[0]
    assert newest[1] == version
    assert datetime.date.fromisoformat(newest[2]) <= datetime.date.today()
    assert any(h.startswith("0.1.0 — ") for h in headings[1:])
    assert "0007_covering_indexes" in text  # the latest catalog revision is listed


def test_installed_metadata_matches_pyproject() -> None:
    """The editable install carries the new metadata (reinstall after changing it)."""
    meta = metadata("entityworks")
    if meta.get("License-Expression") is None:
        pytest.skip("the installed metadata predates the SPDX license; run pip install -e .")
    assert meta["License-Expression"] == "MIT"
    assert not meta.get_all("Project-URL")  # no invented addresses


def _completion_line() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    lines = [
        line
        for line in readme.splitlines()
        if "_ENTITYWORKS_COMPLETE=bash_source entityworks" in line
    ]
    assert lines, "the README lost its shell-completion line"
    return lines[0].strip()


def test_readme_completion_line_completes_commands() -> None:
    """The README's line, evaluated in bash as ~/.bashrc would, completes our commands."""
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash is not installed")
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    source = subprocess.run(
        [str(BIN / "entityworks")],
        env={**env, "_ENTITYWORKS_COMPLETE": "bash_source"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert source.returncode == 0 and source.stderr == ""
    assert "complete -o nosort -F _entityworks_completion entityworks" in source.stdout
    script = f"""{_completion_line()}
complete -p entityworks
for words in "entityworks sch" "entityworks migrations i" "entityworks schema diff --ch"; do
  COMP_WORDS=($words); COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 )); COMPREPLY=()
  _entityworks_completion entityworks
  echo "${{COMPREPLY[*]}}"
done
"""
    done = subprocess.run(
        [bash, "--norc", "--noprofile", "-c", script],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("complete ") and lines[0].endswith(" entityworks")
    assert lines[1:] == ["schema", "init", "--check"]


def test_readme_starts_with_the_install_and_test_commands() -> None:
    """The first block of the README is the two commands a newcomer runs, exactly."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    first = re.search(r"```bash\n(.*?)```", readme, re.DOTALL)
    assert first and readme.index(first.group(0)) < readme.index("\n## ")
    commands = [line for line in first.group(1).splitlines() if line and line[0] != "#"]
    assert commands == [
        "python3 -m pip install . && entityworks demo",
        'python3 -m pip install -e ".[test]" && python3 -m pytest -n auto',
    ]


def test_contributing_guide_covers_the_set_up() -> None:
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    for needed in (
        "`LICENSE`",
        "`CHANGELOG.md`",
        '"Unreleased"',
        'pip install -e ".[test',
        "python -m pytest",
        "ruff check .",
        "ENTITYWORKS_TEST_POSTGRES_URL",
        "ENTITYWORKS_TEST_MARIADB_URL",
        "benchmarks/",
        "mkdocs build --strict",
    ):
        assert needed in text, f"CONTRIBUTING.md lost {needed}"
    assert "CONTRIBUTING.md" in (ROOT / "README.md").read_text(encoding="utf-8")


def skip_or_fail(message: str) -> None:
    if IN_CI:
        pytest.fail(message + "; required under CI=true")
    pytest.skip(message)


def test_sdist_carries_the_license_changelog_and_spdx_metadata(tmp_path: Path) -> None:
    """Build the sdist as a packager would (setuptools' PEP 517 hooks, warnings shown)."""
    import tarfile

    try:
        import setuptools
    except ImportError:
        skip_or_fail("setuptools is not installed in this environment (the test extra has it)")
    if tuple(int(p) for p in setuptools.__version__.split(".")[:2]) < (77, 0):
        skip_or_fail(
            f"setuptools {setuptools.__version__} predates PEP 639 (the test extra "
            "asks for >= 77.0.3)"
        )
    # a copy of the tree: the build writes entityworks.egg-info, which importlib.metadata
    # would otherwise find beside the checkout
    source = tmp_path / "source"
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
    out = tmp_path / "dist"
    out.mkdir()
    done = subprocess.run(
        [
            sys.executable,
            "-W",
            "always",
            "-c",
            f"from setuptools import build_meta; print(build_meta.build_sdist({str(out)!r}))",
        ],
        cwd=source,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    complaints = [
        line
        for line in (done.stdout + done.stderr).lower().splitlines()
        if "licen" in line and ("deprecat" in line or "warn" in line)
    ]
    assert not complaints, complaints
    [sdist] = out.glob("entityworks-*.tar.gz")
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
        info = tar.extractfile(f"{sdist.name[: -len('.tar.gz')]}/PKG-INFO").read().decode()
    assert {"LICENSE", "CHANGELOG.md", "README.md", "pyproject.toml"} <= names
    assert "License-Expression: MIT\n" in info and "License-File: LICENSE\n" in info
    assert "\nLicense: " not in info  # the deprecated free-text field is gone
    assert "Classifier: Typing :: Typed\n" in info


def test_wheel_carries_every_package_its_data_and_entry_points(tmp_path: Path) -> None:
    """The wheel holds every tracked file of the three packages (modules and package data;
    the C sources as their compiled modules), the console script's launcher module, and
    both entry points; the editable wheel is a
    plain path to the checkout (tests/typing/test_editable_install.py: what checkers see)."""
    import configparser
    import zipfile

    try:
        import setuptools  # noqa: F401
    except ImportError:
        skip_or_fail("setuptools is not installed in this environment (the test extra has it)")
    source = tmp_path / "source"
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
    out = tmp_path / "dist"
    out.mkdir()
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from setuptools import build_meta; "
            f"print(build_meta.build_wheel({str(out)!r}), build_meta.build_editable({str(out)!r}))",
        ],
        cwd=source,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    [wheel] = [p for p in out.glob("entityworks-*.whl") if "editable" not in p.name]
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        [entry_points] = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
        entries = configparser.ConfigParser()
        entries.read_string(archive.read(entry_points).decode())
    packaged = {n for n in names if ".dist-info/" not in n}
    shipped = set()
    for package in ("entityworks", "generators"):
        shipped |= {
            p.relative_to(ROOT).as_posix()
            for p in (ROOT / package).rglob("*")
            if p.is_file() and "__pycache__" not in p.parts
        }
    # the C engines (generators/**/_c*.c, and the header they share) travel compiled, one
    # extension module each, never as sources; what a build in place left in the checkout
    # is no tracked file
    sources = {s for s in shipped if s.endswith(".c")}
    headers = {s for s in shipped if s.endswith(".h")}
    built = {n for n in packaged if n.endswith(".so")}
    shipped -= sources | headers | {s for s in shipped if s.endswith(".so")}
    assert sources and not (sources | headers) & packaged
    assert {s[: -len(".c")] for s in sources} == {n.split(".")[0] for n in built}, built
    packaged -= built
    assert shipped <= packaged, sorted(shipped - packaged)
    assert {
        "entityworks/py.typed",
        "generators/py.typed",
        "entityworks/_migrations/alembic.ini",
        "entityworks/_migrations/script.py.mako",
        "entityworks/_migrations/env.py",
        "entityworks/web/plugin/templates/row.html",
        "entityworks/web/plugin/static/entityworks.css",
        "entityworks_launch.py",
    } <= packaged
    assert packaged - shipped == {"entityworks_launch.py"}  # nothing else: no tests, docs
    # the catalog's revisions ship inside entityworks: no top-level ``migrations`` (or any
    # other name) that would shadow a project's own package
    assert {n.split("/", 1)[0] for n in packaged} == {"entityworks", "generators",
                                                      "entityworks_launch.py"}  # fmt: skip
    revisions = sorted(
        p.name for p in (ROOT / "entityworks" / "_migrations" / "versions").glob("0*.py")
    )
    assert revisions and {f"entityworks/_migrations/versions/{r}" for r in revisions} <= packaged
    [top_level] = [n for n in names if n.endswith(".dist-info/top_level.txt")] or [None]
    if top_level is not None:
        with zipfile.ZipFile(wheel) as archive:
            listed = set(archive.read(top_level).decode().split())
        assert listed == {"entityworks", "generators", "entityworks_launch"}
    assert dict(entries["console_scripts"]) == {"entityworks": "entityworks_launch:main"}
    assert dict(entries["datasette"]) == {"entityworks": "entityworks.web.plugin"}
    [editable] = out.glob("entityworks-*editable*.whl")
    with zipfile.ZipFile(editable) as archive:
        [pth] = [n for n in archive.namelist() if n.endswith(".pth")]
        assert archive.read(pth).decode().split() == [str(source)]


def test_catalog_revisions_live_inside_the_package() -> None:
    """The catalog's Alembic script directory is ``entityworks/_migrations`` (issue 30): found
    beside the package's own modules, with its environment, template, ini and revisions, and
    no top-level ``migrations`` folder left in the checkout to shadow a project's own."""
    from alembic.script import ScriptDirectory

    import entityworks
    from entityworks.migrate import MIGRATIONS_DIR, alembic_config, head
    from entityworks.migrate.revisions import migrations_dir

    folder = Path(entityworks.__file__).resolve().parent / "_migrations"
    assert migrations_dir() == MIGRATIONS_DIR == folder
    for name in ("env.py", "script.py.mako", "alembic.ini"):
        assert (folder / name).is_file(), name
    script = ScriptDirectory.from_config(alembic_config())
    assert Path(script.dir).resolve() == folder
    assert script.get_current_head() == head()
    assert all(Path(r.path).parent == folder / "versions" for r in script.walk_revisions())
    assert not (ROOT / "migrations").exists()

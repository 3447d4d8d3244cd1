"""One migration story (issue 14; the how-to docs/how-to/alembic.md runs through tests/docs on
every backend): the ``migrations init`` scaffold, ``schema diff --check``, ``--rename`` and
``--apply`` against Alembic-managed databases, on SQLite, PostgreSQL and MariaDB."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from alembic.operations import ops
from click.testing import CliRunner

from entityworks import EntityworksError, SchemaError, Store, WriteError, column, table
from entityworks.catalog import open_catalog
from entityworks.cli import cli
from entityworks.migrate import (
    apply,
    describe,
    diff,
    managed_by_alembic,
    metadata_for,
    parse_renames,
)
from entityworks.migrate.scaffold import init_migrations

ROOT = Path(__file__).resolve().parents[3]
BIN = Path(sys.executable).parent


def _env(url: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "ENTITYWORKS_DB": url,
            "PYTHONUNBUFFERED": "1",
            "PATH": f"{BIN}{os.pathsep}{env.get('PATH', '')}",
            "PYTHONPATH": str(ROOT),
        }
    )  # the test modules' own classes (tests.*)
    env.pop("ENTITYWORKS_TRACEBACK", None)
    return env


# -- migrations init ------------------------------------------------------------------------


MODELS = """
from dataclasses import dataclass

from entityworks import table


@dataclass
class Shelf:
    id: int | None
    label: str


@table("alembic_version")
@dataclass
class Clash:
    version_num: str
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "shelves.py").write_text(MODELS, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("shelves", None)
    return tmp_path


def _cli(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_init_writes_an_alembic_environment(project: Path) -> None:
    result = _cli(
        "migrations",
        "init",
        "db/migrations",
        "--model",
        "shelves:Shelf",
        "--db",
        "sqlite:///shelves.db",
    )
    assert result.exit_code == 0, result.output
    folder = project / "db" / "migrations"
    assert sorted(p.name for p in folder.iterdir()) == [
        "alembic.ini",
        "env.py",
        "script.py.mako",
        "versions",
    ]
    env_py = (folder / "env.py").read_text()
    assert "from shelves import Shelf" in env_py and "MODELS = [Shelf]" in env_py
    ini = (folder / "alembic.ini").read_text()
    assert "sqlalchemy.url = sqlite:///shelves.db" in ini
    assert f"prepend_sys_path = %(here)s{os.sep}..{os.sep}.." in ini
    # Alembic itself, from another folder: the models import through prepend_sys_path
    elsewhere = project / "elsewhere"
    elsewhere.mkdir()
    env = _env(f"sqlite:///{project / 'shelves.db'}")
    for args in (
        ["revision", "--autogenerate", "--rev-id", "s1", "-m", "shelves"],
        ["upgrade", "head"],
        ["check"],
    ):
        done = subprocess.run(
            [str(BIN / "alembic"), "-c", str(folder / "alembic.ini"), *args],
            cwd=elsewhere,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, (args, done.stdout, done.stderr)
    store = Store(project / "shelves.db")
    assert set(store.table_names()) == {"alembic_version", "shelf"}
    store.close()
    offline = subprocess.run(
        [str(BIN / "alembic"), "-c", str(folder / "alembic.ini"), "upgrade", "head", "--sql"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert offline.returncode == 0 and "CREATE TABLE shelf" in offline.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--model", "shelves"], "expected MODULE:CLASS"),
        (["--model", "nowhere:Shelf"], "cannot import 'nowhere'"),
        (["--model", "shelves:Missing"], "has no class 'Missing'"),
        (["--model", "shelves:Clash"], "Alembic's version table"),
        (
            ["--model", "shelves:Shelf", "--db", "postgresql+psycopg://u:secret@h/d"],
            "a URL with a password is not written",
        ),
    ],
)
def test_init_refusals_write_nothing(project: Path, args: list[str], message: str) -> None:
    result = _cli("migrations", "init", "migrations", *args)
    assert result.exit_code == 2
    assert message in result.stderr and "secret" not in result.output + result.stderr
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: ")
    assert not (project / "migrations").exists()
    assert [p.name for p in project.iterdir() if p.name.startswith(".")] == []


def test_init_refuses_a_folder_in_use(project: Path) -> None:
    (project / "migrations").mkdir()
    (project / "migrations" / "keep.txt").write_text("mine")
    result = _cli("migrations", "init", "migrations", "--model", "shelves:Shelf")
    assert result.exit_code == 2 and "not an empty folder" in result.stderr
    assert [p.name for p in (project / "migrations").iterdir()] == ["keep.txt"]
    with pytest.raises(EntityworksError, match="at least one"):
        init_migrations(project / "other", [])


def test_metadata_for_matches_the_store(backend_url: str) -> None:
    store = Store(backend_url)
    try:
        store.create(LevelV1)
        with store.engine.connect() as conn:
            built = metadata_for(LevelV1, dialect=conn).tables["levels"]
        assert [c.name for c in built.c] == [c.name for c in store.table(LevelV1).c]
        assert diff(store, LevelV1) == []
        with pytest.raises(EntityworksError, match="at least one"):
            metadata_for()
        assert dict(metadata_for(LevelV1).tables["levels"].dialect_kwargs)["sqlite_strict"]
    finally:
        store.close()


# -- schema diff --check / --apply / --rename -----------------------------------------------


@table("levels")
@dataclass
class LevelV1:
    id: int | None
    name: str
    note: str | None = column(default=None, index=True, max_length=20)


@table("levels")
@dataclass
class LevelRenamed:
    id: int | None
    name: str
    remark: str = column(default="none", index=True, max_length=20)  # note -> remark
    theme: str = "stone"


@table("levels")
@dataclass
class LevelRetyped:
    id: int | None
    name: str
    remark: int | None = None


def _populate(store: Store) -> None:
    store.create(LevelV1)
    store.insert_many([LevelV1(None, f"level {i}", "easy" if i % 2 else None) for i in range(1, 7)])


MODULE = "from tests.entityworks.cli.test_migrations_cli import LevelV1, LevelRenamed\n"


@pytest.fixture
def models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    (tmp_path / "level_models.py").write_text(MODULE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    return "level_models"


def test_rename_keeps_the_data(backend_url: str) -> None:
    store = Store(backend_url)
    _populate(store)
    renames = parse_renames(["levels.note=remark"])
    operations = diff(store, LevelRenamed, renames=renames)
    assert describe(operations[0]) == (
        "alter column levels.note: rename to remark, set NOT NULL, set DEFAULT 'none'"
    )
    assert not any(
        isinstance(o, (ops.DropColumnOp, ops.AddColumnOp))
        and (getattr(o, "column_name", None) == "note")
        for o in operations
    )
    done = apply(store, LevelRenamed, renames=renames)
    assert done.rows == {"levels": 6}
    assert diff(store, LevelRenamed) == []
    rows = sorted(store.select(LevelRenamed), key=lambda r: r.id)
    assert [r.remark for r in rows] == ["easy", "none"] * 3  # NULLs took the default
    assert {r.theme for r in rows} == {"stone"}
    with pytest.raises(WriteError):  # the length rule moved along (each server words it
        store.insert(LevelRenamed(None, "long", "x" * 21))  # its own way)
    assert store.count(LevelRenamed) == 6
    store.close()


def test_rename_refusals(sqlite_store: Store) -> None:
    _populate(sqlite_store)
    with pytest.raises(SchemaError, match="no column 'nope'"):
        diff(sqlite_store, LevelRenamed, renames={"nope": "remark"})
    with pytest.raises(SchemaError, match="has no new field 'other'"):
        diff(sqlite_store, LevelRenamed, renames={"note": "other"})
    with pytest.raises(SchemaError, match="the type changes too"):
        diff(sqlite_store, LevelRetyped, renames={"note": "remark"})
    for bad in ("note", "=x", "note=", "a.note=b.remark"):
        with pytest.raises(SchemaError, match="expected OLD=NEW"):
            parse_renames([bad])
    with pytest.raises(SchemaError, match="renamed twice"):
        parse_renames(["note=a", "note=b"])
    assert sqlite_store.count(LevelV1) == 6


def test_check_exit_status(backend_url: str, models: str) -> None:
    store = Store(backend_url)
    _populate(store)
    store.close()
    clean = _cli(
        "schema", "diff", "--dataclass", f"{models}:LevelV1", "--check", "--db", backend_url
    )
    assert clean.exit_code == 0 and clean.stdout == "no differences\n"
    spec = f"{models}:LevelRenamed"
    plain = _cli("schema", "diff", "--dataclass", spec, "--db", backend_url)
    assert plain.exit_code == 0 and plain.stdout.splitlines()[-1].startswith("drift: ")
    checked = _cli("schema", "diff", "--dataclass", spec, "--check", "--db", backend_url)
    assert checked.exit_code == 1 and checked.stdout == plain.stdout
    both = _cli("schema", "diff", "--dataclass", spec, "--check", "--apply", "--db", backend_url)
    assert both.exit_code == 2 and "exclude each other" in both.stderr
    renamed = _cli(
        "schema",
        "diff",
        "--dataclass",
        spec,
        "--rename",
        "note=remark",
        "--apply",
        "--db",
        backend_url,
    )
    assert renamed.exit_code == 0, renamed.stderr
    assert "rows kept (levels: 6)" in renamed.stdout
    after = _cli("schema", "diff", "--dataclass", spec, "--check", "--db", backend_url)
    assert after.exit_code == 0 and after.stdout == "no differences\n"


def test_apply_refuses_an_alembic_managed_database(
    backend_url: str, models: str, tmp_path: Path
) -> None:
    """--apply would leave `alembic upgrade head` failing on a duplicate column: refused,
    and Alembic stays in charge (its upgrade and check are clean afterwards)."""
    folder = tmp_path / "migrations"
    env = _env(backend_url)
    init_migrations(folder, [f"{models}:LevelV1"])

    def alembic(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(BIN / "alembic"), "-c", str(folder / "alembic.ini"), *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    assert alembic("revision", "--autogenerate", "--rev-id", "r1", "-m", "v1").returncode == 0
    assert alembic("upgrade", "head").returncode == 0
    store = Store(backend_url)
    store.insert(LevelV1(None, "one"))
    result = _cli(
        "schema", "diff", "--dataclass", f"{models}:LevelRenamed", "--apply", "--db", backend_url
    )
    assert result.exit_code == 2 and result.stdout == ""
    assert "managed by Alembic (version table alembic_version: r1)" in result.stderr
    assert "alembic revision --autogenerate" in result.stderr
    with pytest.raises(SchemaError, match="managed by Alembic"):
        apply(store, LevelRenamed)
    with store.engine.connect() as conn:
        assert managed_by_alembic(conn) == {"alembic_version": ("r1",)}
    assert [c["name"] for c in sa.inspect(store.engine).get_columns("levels")] == [
        "id",
        "name",
        "note",
    ] or store.dialect.name == "sqlite"
    done = alembic("upgrade", "head")
    checked = alembic("check")
    assert done.returncode == 0 and checked.returncode == 0, checked.stderr
    assert store.count(LevelV1) == 1
    store.close()


def test_apply_refuses_catalog_tables_under_revisions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "cat.db"
    open_catalog(db).close()
    (tmp_path / "maps_models.py").write_text(
        "from dataclasses import dataclass\nfrom entityworks import table\n\n"
        "@table('sudoku_puzzles')\n@dataclass\nclass Puzzles:\n    id: int | None\n"
        "    puzzle: str\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    result = _cli(
        "schema", "diff", "--dataclass", "maps_models:Puzzles", "--apply", "--db", str(db)
    )
    assert result.exit_code == 2 and "entityworks migrate" in result.stderr
    store = Store(db)
    assert "clues" in {c["name"] for c in sa.inspect(store.engine).get_columns("sudoku_puzzles")}
    store.close()


def test_migrate_to_an_older_revision_is_refused_or_downgraded(backend_url):
    """``migrate --revision OLDER`` refuses (an upgrade would do nothing) and leaves the
    database as it was; with ``--downgrade`` it goes back, and an upgrade comes forward again
    with the rows the older revisions keep."""
    from entityworks.catalog import generate_into
    from entityworks.migrate import current, head

    runner = CliRunner()

    def migrate(*args: str) -> Any:
        return runner.invoke(cli, ["migrate", "--db", backend_url, *args])

    assert migrate().exit_code == 0
    store = open_catalog(backend_url)
    generate_into(store, "caves", 2, seed=3, params={"width": 30, "height": 20})
    store.close()
    latest = head()
    refused = migrate("--revision", "0007_covering_indexes")
    assert refused.exit_code != 0
    assert "older than the database's" in refused.output and "--downgrade" in refused.output
    assert current(backend_url) == latest
    down = migrate("--revision", "0007_covering_indexes", "--downgrade")
    assert down.exit_code == 0, down.output
    assert f"downgraded from {latest} to 0007_covering_indexes" in down.output
    assert current(backend_url) == "0007_covering_indexes"
    wrong_way = migrate("--revision", latest, "--downgrade")
    assert wrong_way.exit_code != 0 and "not older" in wrong_way.output
    assert migrate().exit_code == 0 and current(backend_url) == latest
    with Store(backend_url) as check:
        assert check.count(check.reflect("maps")) == 2
    assert migrate("--revision", "base", "--downgrade").exit_code == 0
    assert current(backend_url) is None

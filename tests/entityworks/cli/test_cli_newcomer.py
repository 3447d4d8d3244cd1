"""What a newcomer hit (issue 29, item 16): ``import-xml big.xml`` finds the ``big.xsd``
that ``export-xml`` wrote beside it; ``copy`` of a database that holds no catalog says so, and
what to run instead, in one line; ``entityworks --help`` groups the commands by what they
work on.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import sqlalchemy as sa
from click.testing import CliRunner, Result

from entityworks import Store
from entityworks.cli import cli
from entityworks.cli.group import COMMANDS
from entityworks.xml.table import write_xml

ROOT = Path(__file__).resolve().parents[3]


@dataclass
class Token:
    id: int
    label: str


@dataclass
class Other:
    key: int
    word: str


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def rows(url: str, table: str) -> list[tuple[object, ...]]:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            quoted = conn.dialect.identifier_preparer.quote(table)
            return [tuple(r) for r in conn.execute(sa.text(f"SELECT * FROM {quoted} ORDER BY 1"))]
    finally:
        engine.dispose()


# -- import-xml finds the XSD beside the document -------------------------------------------


def test_export_then_import_without_xsd_round_trips(backend_url: str, tmp_path: Path) -> None:
    source = f"sqlite:///{tmp_path / 'source.db'}"
    with Store(source) as store:
        store.create(Token)
        store.insert_many([Token(1, "one"), Token(2, "two")])
    big = tmp_path / "big.xml"
    exported = run("export-xml", "token", str(big), "--db", source)
    assert exported.exit_code == 0, exported.stderr
    assert (tmp_path / "big.xsd").is_file()
    imported = run("import-xml", str(big), "--db", backend_url)
    assert imported.exit_code == 0, imported.stderr
    assert imported.stderr.count("\n") == 1 and str(tmp_path / "big.xsd") in imported.stderr
    assert imported.stdout.startswith("imported 2 rows from")
    assert rows(backend_url, "token") == [(1, "one"), (2, "two")]


def test_a_dataset_finds_its_xsd_beside_it(tmp_path: Path) -> None:
    source = tmp_path / "source.db"
    with Store(source) as store:
        store.create(Token)
        store.create(Other)
        store.insert_many([Token(1, "one")])
        store.insert_many([Other(7, "seven"), Other(8, "eight")])
    shop = tmp_path / "shop.xml"
    assert run("export-xml", "token", "other", str(shop), "--db", str(source)).exit_code == 0
    target = f"sqlite:///{tmp_path / 'copy.db'}"
    imported = run("import-xml", str(shop), "--db", target)
    assert imported.exit_code == 0, imported.stderr
    assert rows(target, "token") == [(1, "one")]
    assert rows(target, "other") == [(7, "seven"), (8, "eight")]


def test_an_inline_schema_wins_over_the_file_beside(tmp_path: Path) -> None:
    doc = tmp_path / "doc.xml"
    write_xml(Token, [Token(1, "one")], doc, inline_schema=True)
    (tmp_path / "doc.xsd").write_text("not a schema at all")
    target = f"sqlite:///{tmp_path / 'copy.db'}"
    imported = run("import-xml", str(doc), "--db", target)
    assert imported.exit_code == 0, imported.stderr
    assert imported.stderr == ""
    assert rows(target, "token") == [(1, "one")]


def test_an_explicit_xsd_wins_over_the_file_beside(tmp_path: Path) -> None:
    doc, xsd = tmp_path / "doc.xml", tmp_path / "token.xsd"
    write_xml(Token, [Token(1, "one")], doc, xsd)
    (tmp_path / "doc.xsd").write_text("not a schema at all")
    target = f"sqlite:///{tmp_path / 'copy.db'}"
    imported = run("import-xml", str(doc), "--xsd", str(xsd), "--db", target)
    assert imported.exit_code == 0, imported.stderr
    assert imported.stderr == ""


def test_a_bad_file_beside_is_reported_and_nothing_is_imported(tmp_path: Path) -> None:
    doc = tmp_path / "doc.xml"
    write_xml(Token, [Token(1, "one")], doc, tmp_path / "token.xsd")
    (tmp_path / "doc.xsd").write_text("not a schema at all")
    imported = run("import-xml", str(doc), "--db", str(tmp_path / "copy.db"))
    assert imported.exit_code == 2
    lines = imported.stderr.splitlines()
    assert "doc.xsd" in lines[0] and lines[1].startswith("error: ") and len(lines) == 2
    assert not (tmp_path / "copy.db").exists()


def test_without_a_file_beside_the_refusal_stays(tmp_path: Path) -> None:
    doc = tmp_path / "doc.xml"
    write_xml(Token, [Token(1, "one")], doc, tmp_path / "token.xsd")  # another name
    imported = run("import-xml", str(doc), "--db", str(tmp_path / "copy.db"))
    assert imported.exit_code == 2 and "--xsd" in imported.stderr
    assert not (tmp_path / "copy.db").exists()


def test_standard_input_is_not_matched_to_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = tmp_path / "doc.xml"
    write_xml(Token, [Token(1, "one")], doc, tmp_path / "doc.xsd")
    monkeypatch.chdir(tmp_path)  # a '-.xsd' here would be a guess: it is not read
    (tmp_path / "-.xsd").write_bytes((tmp_path / "doc.xsd").read_bytes())
    result = CliRunner().invoke(cli, ["import-xml", "-", "--db", "copy.db"], input=doc.read_bytes())
    assert result.exit_code == 2 and "--xsd" in result.stderr


def test_with_table_no_file_is_guessed(tmp_path: Path) -> None:
    """--table without --xsd reads the rows against the existing table, as before: neither
    the inline schema nor a file beside is consulted."""
    doc = tmp_path / "doc.xml"
    write_xml(Token, [Token(1, "one")], doc, tmp_path / "doc.xsd")
    db = tmp_path / "copy.db"
    with Store(db) as store:
        store.create(Token)
    imported = run("import-xml", str(doc), "--table", "token", "--db", str(db))
    assert imported.exit_code == 0, imported.stderr
    assert imported.stderr == ""
    assert rows(f"sqlite:///{db}", "token") == [(1, "one")]


def test_the_help_says_where_the_default_xsd_comes_from() -> None:
    text = run("import-xml", "--help").stdout
    assert "IN.xsd beside IN.xml" in " ".join(text.split())


# -- copy of a database that holds no catalog -------------------------------------------------


def test_copy_of_a_non_catalog_database_says_what_to_run(backend_url: str, tmp_path: Path) -> None:
    with Store(backend_url) as store:
        store.create(Token)
        store.insert_many([Token(1, "one")])
    target = tmp_path / "copy.db"
    result = run("copy", "--from", backend_url, "--to", str(target))
    assert result.exit_code == 2
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("error: ")
    text = result.stderr
    assert "holds no level catalog" in text and "token" in text
    assert "entityworks export-xml" in text and "entityworks import-xml" in text
    assert "store.create" not in text and "Traceback" not in text
    assert not target.exists()


def test_the_commands_copy_suggests_work(tmp_path: Path) -> None:
    """The advice, run as printed (through a shell), copies the table."""
    source = tmp_path / "plain.db"
    with Store(source) as store:
        store.create(Token)
        store.insert_many([Token(1, "one"), Token(2, "two")])
    bin_dir = Path(sys.executable).parent
    if not (bin_dir / "entityworks").exists():
        pytest.skip("needs the entityworks console script")
    result = run("copy", "--from", str(source), "--to", str(tmp_path / "copy.db"))
    advice = result.stderr.split("import the file: ", 1)[1].strip()
    assert "TABLE..." in advice
    command = advice.replace("TABLE...", "token")
    done = subprocess.run(
        command,
        shell=True,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    with sqlite3.connect(tmp_path / "copy.db") as conn:
        assert conn.execute("SELECT id, label FROM token ORDER BY id").fetchall() == [
            (1, "one"),
            (2, "two"),
        ]


def test_copy_refuses_a_dangling_link_as_target(tmp_path: Path) -> None:
    from entityworks.catalog import generate_into, open_catalog

    source = tmp_path / "levels.db"
    generate_into(open_catalog(source), "cellular", 1, seed=1)
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "copy.db").symlink_to(outside / "copy.db")
    result = run("copy", "--from", str(source), "--to", str(tmp_path / "copy.db"))
    assert result.exit_code == 2 and "symbolic link" in result.stderr
    assert list(outside.iterdir()) == []


# -- the root help, by section ------------------------------------------------------------


def sections(help_text: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    current = None
    for line in help_text.splitlines():
        if line and not line.startswith(" ") and line.endswith(":"):
            current = line[:-1]
            found[current] = []
        elif current is not None and line.startswith("  ") and line.strip():
            found[current].append(line.split()[0])
    return found


def test_the_root_help_groups_every_command_once() -> None:
    text = run("--help").stdout
    found = sections(text)
    listed = [name for title, names in found.items() if title != "Options" for name in names]
    assert sorted(listed) == sorted(COMMANDS)
    assert "tables" in found["Any table"] and "query" in found["Any table"]
    assert {"generate", "copy", "demo", "migrate"} <= set(found["Level catalog"])
    assert {"sudoku", "entropy", "codec"} == set(found["Puzzles and bytes"])
    assert "Commands" not in found


def test_any_table_commands_work_on_a_database_that_is_no_catalog(tmp_path: Path) -> None:
    """The section's claim, checked: each of its commands that reads a database runs on a
    file holding only a user's table."""
    db = tmp_path / "plain.db"
    with Store(db) as store:
        store.create(Token)
        store.insert_many([Token(1, "one")])
    checks = {
        "tables": ["tables", "--db", str(db)],
        "schema": ["schema", "token", "--db", str(db)],
        "query": ["query", "token", "--format", "json", "--db", str(db)],
        "export-xml": ["export-xml", "token", str(tmp_path / "t.xml"), "--db", str(db)],
        "parquet": ["parquet", "token", str(tmp_path / "t.parquet"), "--db", str(db)],
        "ddl": ["ddl", "token", "--db", str(db)],
    }
    for name, args in checks.items():
        result = run(*args)
        assert result.exit_code == 0, (name, result.stderr)
    assert json.loads(run(*checks["query"]).stdout) == [{"id": 1, "label": "one"}]
    found = sections(run("--help").stdout)
    assert set(checks) <= set(found["Any table"])

"""No output, error or log line of the command line ever shows a database password (issue 10
item 11): every command runs against password-bearing URLs, reachable or not, well formed or
not, given by ``--db`` or by ``ENTITYWORKS_DB``, and the secret must not appear in stdout or
stderr, raw or URL-encoded."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import pytest
import sqlalchemy as sa
from click.testing import CliRunner

from entityworks.catalog import MapRecord, generate_into, open_catalog
from entityworks.sql.urls import display_db, redact

SECRET = "Pw-7f3e-SECRET"
ODD = "p@ss/w:rd%7f?#"  # needs URL encoding: the encoded and decoded forms must both vanish
FORMS = [SECRET, ODD, quote(ODD, safe="")]


def urls_without_a_server() -> list[str]:
    odd = quote(ODD, safe="")
    return [
        f"postgresql+psycopg://postgres:{SECRET}@127.0.0.1:1/x",  # nothing listens
        f"postgresql+psycopg://postgres:{odd}@127.0.0.1:1/?dbname=x",
        f"postgresql+psycopg:///x?host=127.0.0.1&port=1&user=u&password={SECRET}",
        f"postgresql+psycopg://postgres:{SECRET}@127.0.0.1:notaport/x",  # malformed
        f"mysql+pymysql://root:{SECRET}@127.0.0.1:1/x",
        f"mysql+pymysql://root:{SECRET}@127.0.0.1:1/x?charset=bogus",
        f"mysql://root:{SECRET}@127.0.0.1/x",  # no driver given
        f"nosuchdialect://root:{SECRET}@127.0.0.1/x",
        f"postgresql+psycopg://postgres:{SECRET}@[::1/x",  # broken host
    ]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("secrets")
    store = open_catalog(folder / "cat.db")
    generate_into(store, "cellular", 1, seed=1)
    store.export_xml(MapRecord, folder / "maps.xml", folder / "maps.xsd")
    store.close()
    (folder / "blob.bin").write_bytes(bytes(range(256)))
    (folder / "p.txt").write_text("0" * 81 + "\n")
    return {
        "xml": str(folder / "maps.xml"),
        "xsd": str(folder / "maps.xsd"),
        "blob": str(folder / "blob.bin"),
        "puzzles": str(folder / "p.txt"),
        "out": str(folder / "out"),
        "dir": str(folder),
    }


def command_lines(f: dict[str, str]) -> list[list[str]]:
    return [
        ["generate", "cellular", "-n", "2", "--seed", "1", "-j", "1"],
        ["query", "maps"],
        ["query", "maps", "-w", "kind=cellular", "-c", "id,kind"],
        ["query", "nope"],
        ["render", "1", "--ascii", "-"],
        ["render", "999", "--ascii", "-"],
        ["entropy", f["blob"]],
        ["export-xml", "maps", f["out"] + ".xml"],
        ["import-xml", f["xml"], "--xsd", f["xsd"], "--table", "maps_copy"],
        ["parquet", "maps", f["out"] + ".parquet"],
        ["sudoku", "solve", f["puzzles"], "-j", "1"],
        ["schema", "maps"],
        ["schema", "nope"],
        ["schema", "diff"],
        ["ddl", "nope"],
        ["migrate"],
        ["migrate", "--revision", "garbage"],
        ["demo", "--out", f["out"] + "-demo"],
    ]


def assert_no_secret(text: str, where: str) -> None:
    for form in FORMS:
        assert form not in text, f"{where}: the password shows:\n{text}"


def run_all(url: str, files: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> set[int]:
    runner = CliRunner()
    codes = set()
    monkeypatch.chdir(files["dir"])
    for args in command_lines(files):
        both = args[0] in ("generate", "query", "migrate")
        for how in ("option", "env") if both else ("option",):
            if how == "option":
                result = runner.invoke(main_cli(), [*args, "--db", url])
            else:
                result = runner.invoke(main_cli(), args, env={"ENTITYWORKS_DB": url})
            where = f"entityworks {' '.join(args)} ({how} {redact(url)})"
            assert_no_secret(result.stdout + result.stderr, where)
            assert "Traceback" not in result.stdout + result.stderr, where
            assert result.exit_code in (0, 2), (where, result.exit_code, result.stderr)
            if result.exit_code == 2:
                assert len(result.stderr.splitlines()) == 1, (where, result.stderr)
            codes.add(result.exit_code)
    return codes


def main_cli():  # imported here so that the module imports without the CLI's state
    from entityworks.cli import cli

    return cli


@pytest.mark.parametrize("url", urls_without_a_server(), ids=range(9))
def test_no_command_shows_the_password_of_an_unreachable_or_broken_url(url, files, monkeypatch):
    assert 2 in run_all(url, files, monkeypatch)


def _with_password(url: str, password: str) -> str:
    return sa.make_url(url).set(password=password).render_as_string(hide_password=False)


def test_no_command_shows_the_password_of_a_working_postgresql_url(pg_url, files, monkeypatch):
    """PostgreSQL here trusts local users, so the password is accepted and ignored: every
    command really runs, and its normal output names the database without the password."""
    url = _with_password(pg_url, ODD)
    assert run_all(url, files, monkeypatch) == {0, 2}
    shown = (
        CliRunner()
        .invoke(main_cli(), ["generate", "cellular", "-n", "1", "-j", "1", "--db", url])
        .stdout
    )
    assert f":{'*' * 3}@" in shown and "stored 1 cellular maps in postgresql+psycopg://" in shown


def test_no_command_shows_the_password_mariadb_refuses(mariadb_url, files, monkeypatch):
    url = _with_password(mariadb_url, SECRET)  # root has no password: access denied
    assert 2 in run_all(url, files, monkeypatch)


def test_a_real_process_does_not_show_it_either(files):
    """Through the console script: warnings, logging and exit handlers included."""
    script = Path(sys.executable).parent / "entityworks"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "entityworks"]
    for url in urls_without_a_server()[:3]:
        done = subprocess.run(
            [*command, "query", "maps", "--db", url],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "PYTHONWARNINGS": "always"},
        )
        assert done.returncode == 2 and done.stderr.startswith("error: "), done.stderr
        assert_no_secret(done.stdout + done.stderr, url)


def test_display_and_redact():
    assert display_db("levels.db") == "levels.db"
    assert display_db(f"sqlite:///{'/tmp/x.db'}") == "/tmp/x.db"
    shown = display_db(f"postgresql+psycopg://u:{SECRET}@h/?dbname=x")
    assert shown == "postgresql+psycopg://u:***@h/?dbname=x"
    assert (
        redact(f"could not parse 'mysql://u:{SECRET}@h:x/d' in 'password={SECRET}'")
        == "could not parse 'mysql://u:***@h:x/d' in 'password=***'"
    )

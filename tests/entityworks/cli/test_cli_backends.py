"""The command line names no database itself: what differs per backend (its name in messages,
URL examples and suggested drivers, ``ddl``'s dialects, a driver's error text, read-only
files) comes from the Backend objects, and what it needs before a backend is loaded from the
standard-library module ``sql.backends.light``."""

from __future__ import annotations

import sqlite3
import subprocess
import sys

import pytest
import sqlalchemy as sa
from click.testing import CliRunner

from entityworks.cli import cli, error_message
from entityworks.cli.errors import is_user_error
from entityworks.sql.backends import (
    driver_message,
    file_backend,
    for_name,
    for_written_name,
    names_where,
    url_examples,
)
from entityworks.sql.backends.light import FILE_BACKEND, FILE_TITLE, TITLES
from entityworks.sql.store import Store

from .test_cli_startup import loaded_after


def test_the_backends_package_and_its_light_module_load_no_heavy_module():
    assert loaded_after("import entityworks.sql.backends.light") == []
    assert loaded_after("import entityworks.sql.backends") == []
    assert loaded_after("import entityworks.cli.errors, entityworks.cli.options") == []


def test_the_light_names_are_those_of_the_backend_objects():
    assert set(TITLES) == set(names_where(lambda _backend: True))
    for name, title in TITLES.items():
        assert for_name(name).title == title
        assert for_written_name(name) is for_name(name)
    assert file_backend() is for_name(FILE_BACKEND)
    assert for_name("oracle").title == "oracle"  # no module: named as SQLAlchemy names it
    assert for_written_name("oracle") is None


def test_ddl_offers_every_backend_and_defaults_to_the_file_one():
    help_text = CliRunner().invoke(cli, ["ddl", "--help"]).output
    for name in TITLES:
        assert name in help_text
    assert f"default: {FILE_BACKEND}" in " ".join(help_text.split())


def test_the_db_help_names_the_file_backend():
    help_text = " ".join(CliRunner().invoke(cli, ["tables", "--help"]).output.split())
    assert f"{FILE_TITLE} file path or SQLAlchemy URL" in help_text


def test_an_unknown_scheme_lists_one_example_url_per_backend(tmp_path):
    examples = url_examples()
    assert len(examples) == len(set(examples)) >= 3
    done = subprocess.run(
        [sys.executable, "-m", "entityworks", "tables", "--db", "nosuch://x/y"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2 and done.stdout == ""
    (line,) = done.stderr.strip().splitlines()
    for example in examples:
        assert example in line
    assert f"a plain {FILE_TITLE} file path" in line


@pytest.mark.parametrize(
    ("written", "suggested"),
    [
        ("postgres", "postgresql+psycopg"),
        ("postgresql", "postgresql+psycopg"),
        ("mysql", "mysql+pymysql"),
        ("mariadb", "mariadb+pymysql"),
        (FILE_BACKEND, ""),
    ],
)
def test_each_backend_suggests_the_driver_entityworks_installs(written, suggested):
    backend = for_written_name(written)
    assert backend is not None
    assert backend.suggested_scheme(written) == suggested


def test_a_driver_error_given_as_code_and_text_becomes_a_sentence():
    pymysql = pytest.importorskip("pymysql")
    refused = pymysql.err.OperationalError(1045, "Access denied for user 'u'")
    assert driver_message(refused) == "Access denied for user 'u' (MariaDB error 1045)"
    assert driver_message(sqlite3.OperationalError("disk I/O error")) == "disk I/O error"
    wrapped = sa.exc.OperationalError("SELECT 1", {}, refused)
    assert error_message(wrapped) == "Access denied for user 'u' (MariaDB error 1045)"


def test_the_file_driver_s_own_errors_are_bad_input_once_a_backend_ran():
    file_backend()  # loaded, as by any Store
    assert is_user_error(sqlite3.OperationalError("database is locked"))


def test_a_read_only_url_opens_that_file_and_never_writes(tmp_path):
    path = tmp_path / "we#ird%41?.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t (x INTEGER)")
    conn.close()
    before = sorted(p.name for p in tmp_path.iterdir())
    store = Store(file_backend().read_only_url(path))
    try:
        assert store.table_names() == ["t"]
        with pytest.raises(sa.exc.OperationalError), store.engine.begin() as c:
            c.execute(sa.text("CREATE TABLE u (y INTEGER)"))
    finally:
        store.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert file_backend().database_file(sa.make_url("sqlite://")) is None
    plain = tmp_path / "plain.db"
    assert file_backend().database_file(sa.make_url(f"sqlite:///{plain}")) == plain

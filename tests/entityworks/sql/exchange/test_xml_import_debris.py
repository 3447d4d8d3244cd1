"""A refused XML import leaves nothing behind: no table, no new database file (issue 10, item 14).

Everything is checked first (the class, the XSD, then the data, in the same transaction as
the table's creation), on SQLite, PostgreSQL and MariaDB, through ``Store.import_xml`` and the
``import-xml`` command. On MariaDB, whose DDL commits at once, an import killed half-way
leaves tables that the next import removes (issue 19, item 10).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import sqlalchemy as sa
from click.testing import CliRunner

from entityworks import EntityworksError, Store, XMLImportError, column, table
from entityworks.catalog import open_catalog
from entityworks.cli import cli
from entityworks.xml.dataset import dataset_of, write_dataset
from entityworks.xml.table import write_xml
from entityworks.xml.xsdwrite import xsd_bytes

ROOT = Path(__file__).resolve().parents[4]


@dataclass
class Part:
    label: str


@dataclass
class Gadget:
    id: int
    name: str
    parts: list[Part] = field(default_factory=list)


def gadgets(n: int) -> list[Gadget]:
    return [Gadget(i, f"g{i}", [Part(f"p{i}")]) for i in range(1, n + 1)]


def bad_document(tmp_path: Path, n: int = 12_000) -> tuple[Path, Path]:
    """A valid XSD and a document whose last-but-one row is invalid (after several batches)."""
    xml, xsd = tmp_path / "g.xml", tmp_path / "g.xsd"
    write_xml(Gadget, gadgets(n), xml, xsd)
    text = xml.read_text()
    last = f"<gadget><id>{n - 1}</id>"
    assert last in text
    xml.write_text(text.replace(last, "<gadget><id>x</id>"))
    return xml, xsd


def duplicate_keys(tmp_path: Path) -> tuple[Path, Path]:
    """Rows that are valid against an XSD without a key: only the database refuses them."""
    xml, xsd = tmp_path / "d.xml", tmp_path / "d.xsd"
    write_xml(Gadget, [Gadget(1, "a"), Gadget(2, "b")], xml)
    xml.write_text(xml.read_text().replace("<id>2</id>", "<id>1</id>"))
    text = xsd_bytes(Gadget).decode()
    start, end = text.index("<xs:unique"), text.rindex("</xs:keyref>") + len("</xs:keyref>")
    xsd.write_text(text[:start] + text[end:])
    return xml, xsd


def tables(store: Store) -> set[str]:
    return set(store.table_names())


def test_a_refused_import_creates_no_table(store: Store, tmp_path: Path) -> None:
    before = tables(store)
    for xml, xsd in (bad_document(tmp_path), duplicate_keys(tmp_path)):
        with pytest.raises(XMLImportError):
            store.import_xml(Gadget, xml, xsd)
        assert tables(store) == before, store.url.get_backend_name()


def test_a_good_import_creates_its_tables(store: Store, tmp_path: Path) -> None:
    xml, xsd = tmp_path / "g.xml", tmp_path / "g.xsd"
    write_xml(Gadget, gadgets(30), xml, xsd)
    assert store.import_xml(Gadget, xml, xsd) == 30
    assert store.get(Gadget, 7) == gadgets(30)[6]
    xml2 = tmp_path / "more.xml"
    write_xml(Gadget, [Gadget(40, "x"), Gadget(7, "again")], xml2)
    with pytest.raises(XMLImportError, match="row 2"):
        store.import_xml(Gadget, xml2)  # into the existing table: conflicts on the key
    assert store.count(Gadget) == 30  # the existing table and its rows are untouched


def test_an_import_inside_a_transaction(store: Store, tmp_path: Path) -> None:
    """Inside ``Store.transaction()`` an import is part of it; on MariaDB, whose CREATE TABLE
    would commit the open transaction, only into tables that are there already."""
    xml, xsd = tmp_path / "g.xml", tmp_path / "g.xsd"
    write_xml(Gadget, gadgets(5), xml, xsd)
    if store.url.get_backend_name() == "mysql":
        with store.transaction():
            with pytest.raises(EntityworksError, match="'gadget' inside transaction"):
                store.import_xml(Gadget, xml, xsd)
        assert tables(store) == set()
        store.create(Gadget)
    with store.transaction():
        assert store.import_xml(Gadget, xml, xsd) == 5
        assert store.count(Gadget) == 5
    more = tmp_path / "more.xml"
    write_xml(Gadget, [Gadget(i, f"g{i}") for i in range(10, 13)], more)
    with pytest.raises(RuntimeError), store.transaction():
        assert store.import_xml(Gadget, more, xsd) == 3
        raise RuntimeError("the transaction is rolled back, the import with it")
    assert store.count(Gadget) == 5


@pytest.mark.parametrize("case", ["bad row", "duplicate key", "bad xsd"])
def test_a_refused_import_leaves_no_new_sqlite_file(tmp_path: Path, case: str) -> None:
    if case == "bad row":
        xml, xsd = bad_document(tmp_path, 300)
    elif case == "duplicate key":
        xml, xsd = duplicate_keys(tmp_path)
    else:
        xml, xsd = bad_document(tmp_path, 3)
        xsd.write_text(xsd.read_text().replace('type="xs:long"', 'type="xs:QName"', 1))
    db = tmp_path / "new" / "fresh.db"
    db.parent.mkdir()
    store = Store(db)
    with pytest.raises(XMLImportError):
        store.import_xml(Gadget, xml, xsd)
    assert list(db.parent.iterdir()) == []


def cli_import(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["import-xml", *args], catch_exceptions=False)
    return result.exit_code, result.stderr


def test_the_command_leaves_no_new_database_file(tmp_path: Path) -> None:
    xml, xsd = bad_document(tmp_path, 300)
    db = tmp_path / "new" / "copy.db"
    db.parent.mkdir()
    status, err = cli_import(str(xml), "--xsd", str(xsd), "--db", str(db))
    assert status == 2 and err.startswith("error: ") and len(err.splitlines()) == 1
    assert "row 299" in err and "column 'id'" in err
    assert list(db.parent.iterdir()) == []
    status, err = cli_import(str(xml), "--table", "gadget", "--db", str(db))
    assert status == 2 and "no database at" in err
    assert list(db.parent.iterdir()) == []


def test_the_command_leaves_no_new_catalog_file(tmp_path: Path) -> None:
    source = tmp_path / "levels.db"
    catalog = open_catalog(source)
    from entityworks.catalog import generate_into

    generate_into(catalog, "caves", 3, seed=1, params={"width": 20, "height": 20})
    catalog.close()
    xml, xsd = tmp_path / "maps.xml", tmp_path / "maps.xsd"
    result = CliRunner().invoke(
        cli, ["export-xml", "maps", str(xml), "--db", str(source)], catch_exceptions=False
    )
    assert result.exit_code == 0, result.stderr
    text = xml.read_text()
    xml.write_text(text.replace("<width>20</width>", "<width>twenty</width>", 1))
    db = tmp_path / "new" / "copy.db"
    db.parent.mkdir()
    status, err = cli_import(str(xml), "--xsd", str(xsd), "--db", str(db))
    assert status == 2 and "column 'width'" in err
    assert list(db.parent.iterdir()) == []
    xml.write_text(text)
    status, err = cli_import(str(xml), "--xsd", str(xsd), "--db", str(db))
    assert status == 0, err
    assert Store(db).count(open_catalog(db).reflect("maps")) == 3


# -- MariaDB: an import killed half-way ---------------------------------------------------------


@table("hub")
@dataclass
class Hub:
    id: int
    name: str


@table("spoke")
@dataclass
class Spoke:
    id: int
    hub_id: int = column(metadata={"references": "hub.id"})
    note: str = ""


@table("memo")
@dataclass
class Memo:
    id: int
    text: str


@pytest.fixture
def mariadb(mariadb_url: str) -> Iterator[str]:
    """The session's MariaDB database, empty before and after the test."""

    def empty() -> None:
        engine = sa.create_engine(mariadb_url)
        try:
            metadata = sa.MetaData()
            metadata.reflect(engine)
            metadata.drop_all(engine)
        finally:
            engine.dispose()

    empty()
    yield mariadb_url
    empty()


def state(url: str) -> tuple[dict[str, str], set[str]]:
    """The database's tables with their comments, and the tables its logical schema names."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            tables = dict(
                conn.execute(
                    sa.text(
                        "SELECT table_name, table_comment FROM information_schema.tables "
                        "WHERE table_schema = DATABASE()"
                    )
                ).all()
            )
            recorded = (
                set()
                if "entityworks_schema" not in tables
                else set(
                    conn.execute(
                        sa.text("SELECT DISTINCT table_name FROM entityworks_schema")
                    ).scalars()
                )
            )
    finally:
        engine.dispose()
    return tables, recorded


def when(url: str, condition: str, proc: subprocess.Popen[bytes]) -> bool:
    """Wait until ``condition`` (SQL) holds while ``proc`` runs: ``False`` if it ends first."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            while not conn.execute(sa.text(condition)).scalar():
                conn.rollback()
                if proc.poll() is not None:
                    return False
                time.sleep(0.002)
    finally:
        engine.dispose()
    return True


def session_gone(url: str) -> None:
    """Wait until the server has ended the killed process's session (its locks with it)."""
    engine = sa.create_engine(url, poolclass=sa.pool.NullPool)
    deadline = time.monotonic() + 60
    try:
        with engine.connect() as conn:
            while conn.execute(
                sa.text(
                    "SELECT count(*) FROM information_schema.processlist "
                    "WHERE db = DATABASE() AND id <> CONNECTION_ID()"
                )
            ).scalar():
                assert time.monotonic() < deadline, "the killed session stays"
                time.sleep(0.05)
    finally:
        engine.dispose()


MOMENTS = {
    # a table is there: the import is creating its tables
    "creating tables": "SELECT count(*) FROM information_schema.tables "
    "WHERE table_schema = DATABASE()",
    # the import's transaction writes the rows of its second table: tables all made
    "writing rows": "SELECT count(*) FROM information_schema.processlist "
    "WHERE db = DATABASE() AND info LIKE 'INSERT INTO spoke%'",
}


@pytest.mark.parametrize("moment", list(MOMENTS))
def test_a_killed_dataset_import_leaves_nothing_a_later_import_trips_over(
    mariadb: str, tmp_path: Path, moment: str
) -> None:
    """MariaDB commits each CREATE TABLE: a DataSet import killed (SIGKILL) once its first
    table is there, or while it writes its rows, leaves empty tables. The next import on the
    database, whatever it imports, removes them (they are marked as an unfinished import's,
    and that import's lock is free), and the same DataSet then imports as into an empty
    database: the same tables, logical schema and rows."""
    shop = dataset_of([Hub, Spoke], name="Hubs")
    xml, xsd = tmp_path / "hubs.xml", tmp_path / "hubs.xsd"
    hubs, spokes = 2_000, 60_000
    write_dataset(
        shop,
        {
            "hub": [(i, f"hub {i}") for i in range(hubs)],
            "spoke": [(i, i % hubs, f"spoke {i}") for i in range(spokes)],
        },
        xml,
        xsd,
    )
    script = (
        "import sys\nfrom entityworks import Store\n"
        "Store(sys.argv[1]).import_dataset(sys.argv[2], sys.argv[3])\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script, mariadb, str(xml), str(xsd)],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stderr=subprocess.PIPE,
    )
    try:
        caught = when(mariadb, MOMENTS[moment], proc)
    finally:
        proc.send_signal(signal.SIGKILL)
        _, err = proc.communicate()
    assert caught, f"the import ended ({proc.returncode}) before it was killed: {err!r}"
    assert proc.returncode == -signal.SIGKILL, err
    session_gone(mariadb)
    tables, _ = state(mariadb)
    assert tables, "the import was killed before it made a table"

    other = dataset_of([Memo], name="Memos")
    memos, memos_xsd = tmp_path / "memos.xml", tmp_path / "memos.xsd"
    write_dataset(other, {"memo": [(1, "a"), (2, "b")]}, memos, memos_xsd)
    with Store(mariadb) as store:
        assert store.import_dataset(memos, memos_xsd) == {"memo": 2}
    assert state(mariadb) == ({"memo": "", "entityworks_schema": ""}, {"memo"})

    with Store(mariadb) as store:
        assert store.import_dataset(xml, xsd) == {"hub": hubs, "spoke": spokes}
        assert store.count(store.reflect("spoke")) == spokes
        assert store.reflect("spoke").__dataset__ == "Hubs"
    tables, recorded = state(mariadb)
    assert tables == dict.fromkeys(["hub", "spoke", "memo", "entityworks_schema"], "")
    assert recorded == {"hub", "spoke", "memo"}

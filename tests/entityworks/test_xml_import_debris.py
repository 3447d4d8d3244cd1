"""A refused XML import leaves nothing behind: no table, no new database file (issue 10, item 14).

Everything is checked first (the class, the XSD, then the data, in the same transaction as
the table's creation), on SQLite, PostgreSQL and MariaDB, through ``Store.import_xml`` and the
``import-xml`` command.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest
from click.testing import CliRunner

from entityworks import Store, XMLImportError
from entityworks.catalog import open_catalog
from entityworks.cli import cli
from entityworks.xmlio import write_xml
from entityworks.xsd import xsd_bytes


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
    result = CliRunner().invoke(cli, ["export-xml", "maps", str(xml), "--db", str(source)],
                                catch_exceptions=False)
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

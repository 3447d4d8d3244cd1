"""Inline schemas: a document carrying its XSD before the rows, as .NET's
``WriteXml(path, XmlWriteMode.WriteSchema)`` writes it (issue 15)."""

from __future__ import annotations

import dataclasses
import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from click.testing import CliRunner

from entityworks import Store, XMLImportError
from entityworks.cli import cli
from entityworks.xml.table import read_xml, write_xml
from entityworks.xml.xsd import read_inline_xsd
from entityworks.xml.xsdwrite import MAX_XSD_BYTES, xsd_bytes


@dataclass
class Tag:
    word: str


@dataclass
class Note:
    id: int
    text: str | None
    at: dt.datetime
    tags: list[Tag] = field(default_factory=list)


NOTES = [
    Note(1, "a < b", dt.datetime(2024, 1, 2, 3, 4, 5), [Tag("x"), Tag("y")]),
    Note(2, None, dt.datetime(1, 1, 1)),
    Note(3, "  ", dt.datetime(9999, 1, 1), [Tag("")]),
]


def inline_file(tmp_path: Path) -> Path:
    path = tmp_path / "notes.xml"
    write_xml(Note, NOTES, path, inline_schema=True)
    return path


def test_the_schema_comes_first_and_the_document_reads_back(tmp_path: Path) -> None:
    path = inline_file(tmp_path)
    lines = path.read_text().splitlines()
    assert lines[1] == "<DocumentElement>" and lines[2].startswith("<xs:schema ")
    assert read_xml(Note, path) == NOTES
    cls = read_inline_xsd(path)
    assert [f.name for f in dataclasses.fields(cls)] == ["id", "text", "at", "tags"]
    loaded = read_xml(cls, path)
    assert [dataclasses.astuple(n) for n in loaded] == [dataclasses.astuple(n) for n in NOTES]
    assert (
        read_inline_xsd(
            tmp_path / "plain.xml" if write_xml(Note, NOTES, tmp_path / "plain.xml") else path
        )
        is None
    )


def test_rows_are_counted_after_the_schema(tmp_path: Path) -> None:
    path = inline_file(tmp_path)
    path.write_text(path.read_text().replace("<id>2</id>", "<id>two</id>"))
    with pytest.raises(XMLImportError) as info:
        read_xml(Note, path)
    assert (info.value.row, info.value.column) == (2, "id")  # the schema is no row


def test_the_command_imports_and_exports_inline_schemas(tmp_path: Path) -> None:
    path = inline_file(tmp_path)
    db = tmp_path / "n.db"
    runner = CliRunner()
    done = runner.invoke(cli, ["import-xml", str(path), "--db", str(db)], catch_exceptions=False)
    assert done.exit_code == 0 and "imported 3 rows" in done.stdout, done.stderr
    out = tmp_path / "out.xml"
    done = runner.invoke(
        cli,
        ["export-xml", "note", str(out), "--inline-schema", "--db", str(db)],
        catch_exceptions=False,
    )
    assert done.exit_code == 0, done.stderr
    assert not out.with_suffix(".xsd").exists()
    cls = read_inline_xsd(out)
    assert [dataclasses.astuple(n) for n in read_xml(cls, out)] == [
        dataclasses.astuple(n) for n in NOTES
    ]
    plain = tmp_path / "plain.xml"
    write_xml(Note, NOTES, plain)
    done = runner.invoke(cli, ["import-xml", str(plain), "--db", str(tmp_path / "x.db")])
    assert done.exit_code == 2 and "no inline schema" in done.stderr
    assert not (tmp_path / "x.db").exists()


def test_store_import_uses_the_inline_schema(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    assert store.import_xml(Note, inline_file(tmp_path)) == 3
    assert store.get(Note, 1) == NOTES[0]


@pytest.mark.parametrize(
    "trick, message",
    [
        ('<xs:include schemaLocation="http://127.0.0.1:9/a.xsd"/>', "another schema"),
        ('<xs:import namespace="urn:x" schemaLocation="file:///etc/passwd"/>', "another schema"),
    ],
)
def test_hostile_inline_schemas_are_refused(tmp_path: Path, trick: str, message: str) -> None:
    path = inline_file(tmp_path)
    text = path.read_text()
    path.write_text(
        text.replace(
            '<xs:element name="DocumentElement"', trick + '<xs:element name="DocumentElement"', 1
        )
    )
    with pytest.raises(XMLImportError, match=message):
        read_xml(Note, path)


def test_a_doctype_or_a_huge_inline_schema_is_refused(tmp_path: Path) -> None:
    path = inline_file(tmp_path)
    text = path.read_text()
    path.write_text(
        text.replace("<DocumentElement>", '<!DOCTYPE d [<!ENTITY x "y">]><DocumentElement>', 1)
    )
    with pytest.raises(XMLImportError, match="DOCTYPE"):
        read_inline_xsd(path)
    padding = (
        "<xs:annotation><xs:documentation>" + "x" * 2**20 + "</xs:documentation></xs:annotation>"
    )
    body = xsd_bytes(Note).decode().split("?>", 1)[1]
    schema = body.replace(
        "<xs:element name=", padding * (MAX_XSD_BYTES // 2**20 + 1) + "<xs:element name=", 1
    )
    path.write_text(f"<DocumentElement>{schema}</DocumentElement>")
    with pytest.raises(XMLImportError, match="larger than"):
        read_xml(Note, path)

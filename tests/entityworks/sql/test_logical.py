"""The persisted logical schema: a table made from a .NET XSD keeps its types in the database,
so reflection, queries, frames and ``export-xml`` give back what .NET wrote (issue 15)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import typing
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner

from entityworks import AwareDatetime, Store, XMLImportError
from entityworks.cli import cli
from entityworks.sql.logical import TABLE
from entityworks.xml.table import read_xml, write_xml
from entityworks.xml.xsd import read_xsd
from entityworks.xml.xsdwrite import xsd_bytes

GUID = "System.Guid, mscorlib, Version=4.0.0.0, Culture=neutral, PublicKeyToken=b77a5c561934e089"
DOTNET_XSD = f"""<?xml version="1.0" standalone="yes"?>
<xs:schema id="Shop" xmlns="" xmlns:xs="http://www.w3.org/2001/XMLSchema"
    xmlns:msdata="urn:schemas-microsoft-com:xml-msdata">
  <xs:element name="Shop" msdata:IsDataSet="true" msdata:UseCurrentLocale="true">
    <xs:complexType>
      <xs:choice minOccurs="0" maxOccurs="unbounded">
        <xs:element name="item">
          <xs:complexType>
            <xs:sequence>
              <xs:element name="id" msdata:AutoIncrement="true" type="xs:int" />
              <xs:element name="uid" msdata:DataType="{GUID}" type="xs:string" minOccurs="0" />
              <xs:element name="label" msdata:Caption="Label" minOccurs="0">
                <xs:simpleType>
                  <xs:restriction base="xs:string"><xs:maxLength value="8" /></xs:restriction>
                </xs:simpleType>
              </xs:element>
              <xs:element name="price" type="xs:decimal" minOccurs="0" />
              <xs:element name="ok" type="xs:boolean" default="true" minOccurs="0" />
              <xs:element name="small" type="xs:short" minOccurs="0" />
              <xs:element name="span" type="xs:duration" minOccurs="0" />
              <xs:element name="at" msdata:DateTimeMode="Utc" type="xs:dateTime" minOccurs="0" />
              <xs:element name="ratio" type="xs:float" minOccurs="0" />
            </xs:sequence>
          </xs:complexType>
        </xs:element>
      </xs:choice>
    </xs:complexType>
    <xs:unique name="Constraint1" msdata:PrimaryKey="true">
      <xs:selector xpath=".//item" />
      <xs:field xpath="id" />
    </xs:unique>
  </xs:element>
</xs:schema>
"""
DOTNET_XML = """<?xml version="1.0" standalone="yes"?>
<Shop>
  <item>
    <id>1</id><uid>0f8fad5b-d9cb-469f-a165-70867728950e</uid><label>caf&#233;</label>
    <price>12.3400</price><ok>true</ok><small>-32768</small><span>-P1DT2H</span>
    <at>2024-02-29T23:59:59.1234560Z</at><ratio>0.1</ratio>
  </item>
  <item><id>2</id></item>
</Shop>
"""


@pytest.fixture
def dotnet_files(tmp_path: Path) -> tuple[Path, Path]:
    xsd, xml = tmp_path / "shop.xsd", tmp_path / "shop.xml"
    xsd.write_text(DOTNET_XSD)
    xml.write_text(DOTNET_XML)
    return xml, xsd


def hints(cls: type) -> dict[str, typing.Any]:
    return {f.name: f.type for f in dataclasses.fields(cls)}


def test_reflection_gives_back_the_types_the_xsd_declared(
    store: Store, dotnet_files: tuple[Path, Path]
) -> None:
    xml, xsd = dotnet_files
    cls = read_xsd(xsd)
    assert store.import_xml(cls, xml, xsd) == 2
    reflected = store.reflect("item")
    assert (
        hints(reflected)
        == hints(cls)
        == {
            "id": int,
            "uid": uuid.UUID | None,
            "label": str | None,
            "price": decimal.Decimal | None,
            "ok": bool | None,
            "small": int | None,
            "span": dt.timedelta | None,
            "at": AwareDatetime | None,
            "ratio": float | None,
        }
    )
    assert reflected.__dataset__ == "Shop"
    first = store.get(reflected, 1)
    assert first.uid == uuid.UUID("0f8fad5b-d9cb-469f-a165-70867728950e")
    assert first.label == "café" and first.small == -32768 and first.ok is True
    assert first.span == -dt.timedelta(days=1, hours=2)
    assert first.at == dt.datetime(2024, 2, 29, 23, 59, 59, 123456, tzinfo=dt.UTC)
    assert first.price == decimal.Decimal("12.34")
    # the XSD written for the reflected table is the one read_xsd's class writes: .NET's
    # types (xs:short, xs:float, Guid), MaxLength, Caption, AutoIncrement, the default
    assert xsd_bytes(reflected) == xsd_bytes(cls)
    text = xsd_bytes(reflected).decode()
    for spelling in (
        'type="xs:short"',
        'type="xs:float"',
        'msdata:AutoIncrement="true"',
        'msdata:Caption="Label"',
        '<xs:maxLength value="8"/>',
        'default="true"',
        'name="Shop"',
    ):
        assert spelling in text, spelling


def test_export_of_the_reflected_table_reads_back_equal(
    tmp_path: Path, dotnet_files: tuple[Path, Path]
) -> None:
    xml, xsd = dotnet_files
    db = tmp_path / "shop.db"
    result = CliRunner().invoke(
        cli, ["import-xml", str(xml), "--xsd", str(xsd), "--db", str(db)], catch_exceptions=False
    )
    assert result.exit_code == 0, result.stderr
    out = tmp_path / "back.xml"
    result = CliRunner().invoke(
        cli, ["export-xml", "item", str(out), "--db", str(db)], catch_exceptions=False
    )
    assert result.exit_code == 0, result.stderr
    assert out.read_text().splitlines()[1] == "<Shop>"
    cls = read_xsd(xsd)
    assert [dataclasses.astuple(r) for r in read_xml(cls, out, tmp_path / "back.xsd")] == [
        dataclasses.astuple(r) for r in read_xml(cls, xml, xsd)
    ]
    query = CliRunner().invoke(
        cli, ["query", "item", "--db", str(db), "--format", "json"], catch_exceptions=False
    )
    assert '"uid": "0f8fad5b-d9cb-469f-a165-70867728950e"' in query.stdout


def test_values_beyond_the_dotnet_type_are_refused_at_export(
    tmp_path: Path, dotnet_files: tuple[Path, Path]
) -> None:
    _xml, xsd = dotnet_files
    cls = read_xsd(xsd)
    for change, message in (
        ({"small": 40_000}, "out of the range of xs:short"),
        ({"label": "too long by far"}, "maxLength 8"),
        ({"ratio": 0.123456789}, "single-precision"),
    ):
        row = cls(**{**{f.name: None for f in dataclasses.fields(cls)}, "id": 1, **change})
        with pytest.raises(ValueError, match=message):
            write_xml(cls, [row], tmp_path / "x.xml")
        assert not (tmp_path / "x.xml").exists()


def test_nothing_is_recorded_for_a_refused_import(
    store: Store, dotnet_files: tuple[Path, Path]
) -> None:
    xml, xsd = dotnet_files
    xml.write_text(DOTNET_XML.replace("<small>-32768</small>", "<small>99999</small>"))
    with pytest.raises(XMLImportError, match="small"):
        store.import_xml(read_xsd(xsd), xml, xsd)
    assert TABLE not in store.table_names() and "item" not in store.table_names()


def test_a_record_that_no_longer_matches_the_table_is_ignored(
    tmp_path: Path, dotnet_files: tuple[Path, Path]
) -> None:
    xml, xsd = dotnet_files
    store = Store(tmp_path / "s.db")
    cls = read_xsd(xsd)
    store.import_xml(cls, xml, xsd)
    store.drop(cls)

    @dataclasses.dataclass
    class Item:
        id: int
        uid: str | None

    store.create(Item)
    reflected = store.reflect("item")
    assert hints(reflected) == {"id": int, "uid": str | None}


@dataclasses.dataclass
class Step:
    at: dt.timedelta
    note: str | None


@dataclasses.dataclass
class Route:
    id: uuid.UUID
    name: str
    steps: list[Step] = dataclasses.field(default_factory=list)


def test_reflection_rebuilds_child_tables(tmp_path: Path) -> None:
    routes = [
        Route(uuid.UUID(int=1), "a", [Step(dt.timedelta(seconds=5), None)]),
        Route(uuid.UUID(int=2), "b"),
    ]
    write_xml(Route, routes, tmp_path / "r.xml", tmp_path / "r.xsd")
    store = Store(tmp_path / "r.db")
    store.import_xml(read_xsd(tmp_path / "r.xsd"), tmp_path / "r.xml", tmp_path / "r.xsd")
    reflected = store.reflect("route")
    assert hints(reflected)["id"] is uuid.UUID
    (first, second) = sorted(store.select(reflected), key=lambda r: r.name)
    assert [dataclasses.astuple(s) for s in first.steps] == [(dt.timedelta(seconds=5), None)]
    assert second.steps == []

"""The XSD in the .NET DataTable shape, and dataclasses built back from such schemas."""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import typing
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lxml import etree

from entityworks import AwareDatetime, SchemaError, XMLImportError, primary_key, registry, table
from entityworks.registry import unwrap_optional
from entityworks.xml.table import read_xml, write_xml
from entityworks.xml.xsd import read_xsd, write_xsd
from entityworks.xml.xsdwrite import MSDATA_NS, XS_NS, decode_name, encode_name, xsd_tree

from ..strategies import AllTypes

NS = {"xs": XS_NS, "msdata": MSDATA_NS}
GUID = "System.Guid, mscorlib, Version=4.0.0.0, Culture=neutral, PublicKeyToken=b77a5c561934e089"


@dataclass
class Sample:
    key: str = primary_key()
    count: int = 0
    ratio: float | None = None
    price: decimal.Decimal | None = None
    when: dt.datetime | None = None
    seen: AwareDatetime | None = None
    day: dt.date | None = None
    took: dt.timedelta | None = None
    uid: uuid.UUID | None = None
    blob: bytes = b""
    ok: bool = False


@dataclass
class Part:
    label: str


@table("order table")
@dataclass
class Order:
    id: int
    parts: list[Part] = field(default_factory=list)


def columns(tree: etree._ElementTree, table_name: str) -> list[etree._Element]:
    return tree.xpath(
        f"//xs:choice/xs:element[@name='{table_name}']//xs:sequence/xs:element", namespaces=NS
    )


def test_dataset_wrapper_and_row_shape() -> None:
    tree = xsd_tree(Sample)
    root = tree.getroot()
    assert root.tag == f"{{{XS_NS}}}schema" and root.get("id") == "DocumentElement"
    (wrapper,) = root.findall(f"{{{XS_NS}}}element")
    assert wrapper.get("name") == "DocumentElement"
    assert wrapper.get(f"{{{MSDATA_NS}}}IsDataSet") == "true"
    assert wrapper.get(f"{{{MSDATA_NS}}}MainDataTable") == "sample"
    choice = wrapper.find(f"{{{XS_NS}}}complexType/{{{XS_NS}}}choice")
    assert (choice.get("minOccurs"), choice.get("maxOccurs")) == ("0", "unbounded")
    cols = columns(tree, "sample")
    assert [c.get("name") for c in cols] == [f.name for f in dataclasses.fields(Sample)]


def test_minoccurs_exactly_for_nullable_columns_and_dotnet_types() -> None:
    cols = {c.get("name"): c for c in columns(xsd_tree(Sample), "sample")}
    nullable = {name for name, c in cols.items() if c.get("minOccurs") == "0"}
    assert nullable == {"ratio", "price", "when", "seen", "day", "took", "uid"}
    assert {name: c.get("type") for name, c in cols.items()} == {
        "key": "xs:string",
        "count": "xs:long",
        "ratio": "xs:double",
        "price": "xs:decimal",
        "when": "xs:dateTime",
        "seen": "xs:dateTime",
        "day": "xs:date",
        "took": "xs:duration",
        "uid": "xs:string",
        "blob": "xs:base64Binary",
        "ok": "xs:boolean",
    }
    assert cols["uid"].get(f"{{{MSDATA_NS}}}DataType") == GUID
    assert cols["when"].get(f"{{{MSDATA_NS}}}DateTimeMode") == "Unspecified"
    assert cols["seen"].get(f"{{{MSDATA_NS}}}DateTimeMode") == "Utc"


def test_types_come_from_the_registry() -> None:
    cols = {c.get("name"): c.get("type") for c in columns(xsd_tree(AllTypes), "all_types")}
    hints = typing.get_type_hints(AllTypes, include_extras=True)
    for name, xsd_type in cols.items():
        inner, _ = unwrap_optional(hints[name])
        assert xsd_type == registry.lookup(inner).xsd, name


def test_primary_key_is_a_unique_constraint() -> None:
    (unique,) = xsd_tree(Sample).xpath("//xs:unique", namespaces=NS)
    assert unique.get(f"{{{MSDATA_NS}}}PrimaryKey") == "true"
    assert unique.find(f"{{{XS_NS}}}selector").get("xpath") == ".//sample"
    assert [f.get("xpath") for f in unique.findall(f"{{{XS_NS}}}field")] == ["key"]


def test_a_table_without_key_has_no_unique() -> None:
    @dataclass
    class Loose:
        a: int

    assert xsd_tree(Loose).xpath("//xs:unique", namespaces=NS) == []


def test_child_tables_are_siblings_with_key_and_keyref() -> None:
    tree = xsd_tree(Order)
    names = tree.xpath("//xs:choice/xs:element/@name", namespaces=NS)
    assert names == ["order_x0020_table", "order_x0020_table_parts"]
    assert [c.get("name") for c in columns(tree, "order_x0020_table_parts")] == [
        "parent_key",
        "position",
        "label",
    ]
    (keyref,) = tree.xpath("//xs:keyref", namespaces=NS)
    assert keyref.get("refer") == "Constraint1"
    assert keyref.find(f"{{{XS_NS}}}selector").get("xpath") == ".//order_x0020_table_parts"


def test_the_dataset_name_cannot_be_a_table_name() -> None:
    with pytest.raises(SchemaError, match="clashes"):
        xsd_tree(Sample, dataset="sample")


@given(st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=12))
def test_names_encode_to_ncnames_and_back(name: str) -> None:
    encoded = encode_name(name)
    etree.Element(encoded)  # a valid element name, or lxml raises
    assert ":" not in encoded and decode_name(encoded) == name


def test_read_xsd_rebuilds_the_dataclass(tmp_path: Path) -> None:
    write_xsd(Sample, tmp_path / "s.xsd")
    cls = read_xsd(tmp_path / "s.xsd")
    assert cls.__tablename__ == "sample"
    hints = typing.get_type_hints(cls, include_extras=True)
    assert hints == typing.get_type_hints(Sample, include_extras=True)
    key = [f.name for f in dataclasses.fields(cls) if f.metadata.get("primary_key")]
    assert key == ["key"]
    rows = [Sample("a", 1, None, decimal.Decimal("2.50"), uid=uuid.UUID(int=5))]
    write_xml(Sample, rows, tmp_path / "s.xml")
    (loaded,) = read_xml(cls, tmp_path / "s.xml", tmp_path / "s.xsd")
    assert dataclasses.astuple(loaded) == dataclasses.astuple(rows[0])


def test_read_xsd_with_child_tables(tmp_path: Path) -> None:
    write_xsd(Order, tmp_path / "o.xsd")
    cls = read_xsd(tmp_path / "o.xsd")
    assert [f.name for f in dataclasses.fields(cls)] == ["id", "parts"]
    write_xml(Order, [Order(1, [Part("x"), Part("y")]), Order(2)], tmp_path / "o.xml")
    loaded = read_xml(cls, tmp_path / "o.xml", tmp_path / "o.xsd")
    assert [[p.label for p in o.parts] for o in loaded] == [["x", "y"], []]


DOTNET_XSD = """<?xml version="1.0" standalone="yes"?>
<xs:schema id="NewDataSet" xmlns="" xmlns:xs="http://www.w3.org/2001/XMLSchema"
    xmlns:msdata="urn:schemas-microsoft-com:xml-msdata">
  <xs:element name="NewDataSet" msdata:IsDataSet="true" msdata:MainDataTable="Customer"
      msdata:UseCurrentLocale="true">
    <xs:complexType>
      <xs:choice minOccurs="0" maxOccurs="unbounded">
        <xs:element name="Customer">
          <xs:complexType>
            <xs:sequence>
              <xs:element name="Id" type="xs:int" />
              <xs:element name="Name" minOccurs="0">
                <xs:simpleType>
                  <xs:restriction base="xs:string"><xs:maxLength value="5" /></xs:restriction>
                </xs:simpleType>
              </xs:element>
              <xs:element name="Weight" type="xs:float" minOccurs="0" />
              <xs:element name="Tiny" type="xs:unsignedByte" minOccurs="0" />
            </xs:sequence>
          </xs:complexType>
        </xs:element>
      </xs:choice>
    </xs:complexType>
    <xs:unique name="Constraint1" msdata:PrimaryKey="true">
      <xs:selector xpath=".//Customer" />
      <xs:field xpath="Id" />
    </xs:unique>
  </xs:element>
</xs:schema>
"""


def test_read_xsd_of_a_dotnet_schema(tmp_path: Path) -> None:
    (tmp_path / "c.xsd").write_text(DOTNET_XSD)
    cls = read_xsd(tmp_path / "c.xsd")
    assert typing.get_type_hints(cls) == {
        "Id": int,
        "Name": str | None,
        "Weight": float | None,
        "Tiny": int | None,
    }
    (tmp_path / "c.xml").write_text(
        "<DocumentElement><Customer><Id>1</Id><Name>Ann</Name><Weight>1.5</Weight>"
        "<Tiny>255</Tiny></Customer><Customer><Id>2</Id></Customer></DocumentElement>"
    )
    rows = read_xml(cls, tmp_path / "c.xml", tmp_path / "c.xsd")
    assert [dataclasses.astuple(r) for r in rows] == [(1, "Ann", 1.5, 255), (2, None, None, None)]
    (tmp_path / "bad.xml").write_text(
        "<DocumentElement><Customer><Id>1</Id><Name>toolong</Name></Customer></DocumentElement>"
    )
    with pytest.raises(XMLImportError, match="row 1.*column 'Name'"):
        read_xml(cls, tmp_path / "bad.xml", tmp_path / "c.xsd")


def test_read_xsd_refuses_shapes_it_cannot_map(tmp_path: Path) -> None:
    path = tmp_path / "x.xsd"
    path.write_text(DOTNET_XSD.replace('type="xs:int"', 'type="xs:QName"'))
    with pytest.raises(XMLImportError, match="column 'Id'.*xs:QName"):
        read_xsd(path)
    path.write_text("<root/>")
    with pytest.raises(XMLImportError, match="not an XSD document"):
        read_xsd(path)
    path.write_text(
        DOTNET_XSD.replace("<xs:sequence>", '<xs:sequence><xs:element name="x y" type="xs:int"/>')
    )
    with pytest.raises(XMLImportError, match="not a valid Python field name"):
        read_xsd(path)

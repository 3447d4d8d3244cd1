"""Whole .NET DataSets: several tables with keys and relations, flat and nested (issue 15)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
from pathlib import Path

import pytest
import sqlalchemy as sa
from click.testing import CliRunner

from entityworks import SchemaError, Store, WriteError, XMLImportError, primary_key, table_schema
from entityworks.cli import cli
from entityworks.sql.logical import TABLE
from entityworks.xml.dataset import dataset_of, read_dataset, write_dataset

SHOP_XSD = """<?xml version="1.0" standalone="yes"?>
<xs:schema id="Shop" xmlns="" xmlns:xs="http://www.w3.org/2001/XMLSchema"
    xmlns:msdata="urn:schemas-microsoft-com:xml-msdata">
  <xs:element name="Shop" msdata:IsDataSet="true" msdata:UseCurrentLocale="true">
    <xs:complexType>
      <xs:choice minOccurs="0" maxOccurs="unbounded">
        <xs:element name="customers">
          <xs:complexType>
            <xs:sequence>
              <xs:element name="id" type="xs:int" />
              <xs:element name="name" type="xs:string" minOccurs="0" />
              NESTED
            </xs:sequence>
          </xs:complexType>
        </xs:element>
        FLAT
      </xs:choice>
    </xs:complexType>
    <xs:unique name="Constraint1" msdata:PrimaryKey="true">
      <xs:selector xpath=".//customers" />
      <xs:field xpath="id" />
    </xs:unique>
    <xs:unique name="orders_Constraint1" msdata:ConstraintName="Constraint1"
        msdata:PrimaryKey="true">
      <xs:selector xpath=".//orders" />
      <xs:field xpath="order_id" />
    </xs:unique>
    <xs:keyref name="customer_orders" refer="Constraint1" ISNESTED>
      <xs:selector xpath=".//orders" />
      <xs:field xpath="customer_id" />
    </xs:keyref>
  </xs:element>
</xs:schema>
"""
ORDERS = """<xs:element name="orders" MANY>
          <xs:complexType>
            <xs:sequence>
              <xs:element name="order_id" type="xs:int" />
              <xs:element name="customer_id" type="xs:int" minOccurs="0" />
              <xs:element name="total" type="xs:decimal" minOccurs="0" />
              <xs:element name="placed" msdata:DateTimeMode="Utc" type="xs:dateTime"
                  minOccurs="0" />
            </xs:sequence>
          </xs:complexType>
        </xs:element>"""


def shop_xsd(nested: bool) -> str:
    orders = ORDERS.replace("MANY", 'minOccurs="0" maxOccurs="unbounded"' if nested else "")
    return (
        SHOP_XSD.replace("ISNESTED", 'msdata:IsNested="true"' if nested else "")
        .replace("NESTED", orders if nested else "")
        .replace("FLAT", "" if nested else orders)
    )


FLAT_XML = """<Shop>
  <customers><id>1</id><name>Ada</name></customers>
  <customers><id>2</id></customers>
  <orders><order_id>10</order_id><customer_id>1</customer_id><total>9.50</total>
    <placed>2024-05-01T08:00:00Z</placed></orders>
  <orders><order_id>11</order_id><customer_id>1</customer_id></orders>
  <orders><order_id>12</order_id><customer_id>2</customer_id><total>3</total></orders>
</Shop>"""
NESTED_XML = """<Shop>
  <customers><id>1</id><name>Ada</name>
    <orders><order_id>10</order_id><customer_id>1</customer_id><total>9.50</total>
      <placed>2024-05-01T08:00:00Z</placed></orders>
    <orders><order_id>11</order_id><customer_id>1</customer_id></orders>
  </customers>
  <customers><id>2</id>
    <orders><order_id>12</order_id><customer_id>2</customer_id><total>3</total></orders>
  </customers>
</Shop>"""


def files(tmp_path: Path, nested: bool, xml: str | None = None) -> tuple[Path, Path]:
    xsd_path, xml_path = tmp_path / "shop.xsd", tmp_path / "shop.xml"
    xsd_path.write_text(shop_xsd(nested))
    xml_path.write_text(xml or (NESTED_XML if nested else FLAT_XML))
    return xml_path, xsd_path


def rows(store: Store, data_name: str) -> list[tuple]:
    cls = store.reflect(data_name)
    key = dataclasses.fields(cls)[0].name
    return [
        dataclasses.astuple(r) for r in sorted(store.select(cls), key=lambda r: getattr(r, key))
    ]


@pytest.mark.parametrize("nested", [False, True], ids=["flat", "nested"])
def test_read_dataset_gives_a_class_per_table_and_the_relation(
    tmp_path: Path, nested: bool
) -> None:
    _xml, xsd = files(tmp_path, nested)
    data = read_dataset(xsd)
    assert data.name == "Shop" and list(data.tables) == ["customers", "orders"]
    (relation,) = data.relations
    assert (
        relation.name,
        relation.parent,
        relation.parent_column,
        relation.child,
        relation.child_column,
        relation.nested,
    ) == ("customer_orders", "customers", "id", "orders", "customer_id", nested)
    field = {f.name: f for f in dataclasses.fields(data["orders"])}["customer_id"]
    assert field.metadata["references"] == "customers.id"


@pytest.mark.parametrize("nested", [False, True], ids=["flat", "nested"])
def test_a_dataset_imports_into_tables_with_a_foreign_key(
    store: Store, tmp_path: Path, nested: bool
) -> None:
    xml, xsd = files(tmp_path, nested)
    assert store.import_dataset(xml, xsd) == {"customers": 2, "orders": 3}
    assert rows(store, "customers") == [(1, "Ada"), (2, None)]
    assert rows(store, "orders") == [
        (10, 1, decimal.Decimal("9.50"), dt.datetime(2024, 5, 1, 8, tzinfo=dt.UTC)),
        (11, 1, None, None),
        (12, 2, decimal.Decimal("3"), None),
    ]
    with store.engine.connect() as conn:
        (fk,) = sa.inspect(conn).get_foreign_keys("orders")
    assert (fk["referred_table"], fk["constrained_columns"]) == ("customers", ["customer_id"])
    orders = store.reflect("orders")
    with pytest.raises(WriteError):  # the database itself refuses an orphan
        store.insert(orders(99, 42, None, None))
    assert store.reflect("orders").__dataset__ == "Shop"


@pytest.mark.parametrize("nested", [False, True], ids=["flat", "nested"])
def test_export_writes_the_same_dataset_back(store: Store, tmp_path: Path, nested: bool) -> None:
    xml, xsd = files(tmp_path, nested)
    store.import_dataset(xml, xsd)
    out = tmp_path / "back.xml"
    counts = store.export_dataset(["customers", "orders"], out, tmp_path / "back.xsd")
    assert counts == {"customers": 2, "orders": 3}
    text = out.read_text()
    assert ("<customers><id>1</id><name>Ada</name><orders>" in text) is nested
    again = Store(tmp_path / "again.db")
    assert again.import_dataset(out, tmp_path / "back.xsd") == counts
    assert rows(again, "orders") == rows(store, "orders")
    assert read_dataset(tmp_path / "back.xsd").relations == read_dataset(xsd).relations


def test_an_orphan_or_a_bad_row_imports_nothing(store: Store, tmp_path: Path) -> None:
    before = set(store.table_names())
    for nested, bad in (
        (False, FLAT_XML.replace("<customer_id>2</customer_id>", "<customer_id>7</customer_id>")),
        (True, NESTED_XML.replace("<total>3</total>", "<total>x</total>")),
    ):
        xml, xsd = files(tmp_path, nested, bad)
        with pytest.raises(XMLImportError):
            store.import_dataset(xml, xsd)
        assert set(store.table_names()) == before
    assert TABLE not in store.table_names()


def test_the_command_imports_a_dataset_and_exports_it_nested(tmp_path: Path) -> None:
    xml, xsd = files(tmp_path, False)
    db = tmp_path / "shop.db"
    runner = CliRunner()
    done = runner.invoke(
        cli, ["import-xml", str(xml), "--xsd", str(xsd), "--db", str(db)], catch_exceptions=False
    )
    assert done.exit_code == 0, done.stderr
    assert "2 rows of customers, 3 rows of orders" in done.stdout
    out = tmp_path / "nested.xml"
    done = runner.invoke(
        cli,
        [
            "export-xml",
            "customers",
            "orders",
            str(out),
            "--nested",
            "--dataset",
            "Store",
            "--db",
            str(db),
        ],
        catch_exceptions=False,
    )
    assert done.exit_code == 0, done.stderr
    assert out.read_text().splitlines()[1] == "<Store>"
    data = read_dataset(out.with_suffix(".xsd"))
    assert data.name == "Store" and data.relations[0].nested
    done = runner.invoke(
        cli, ["export-xml", "customers", "orders", str(out), "-w", "id=1", "--db", str(db)]
    )
    assert done.exit_code == 2 and "exported whole" in done.stderr


def test_an_optional_key_part_and_cycles_are_refused(tmp_path: Path) -> None:
    xsd = tmp_path / "k.xsd"
    xsd.write_text(
        shop_xsd(False).replace(
            '<xs:field xpath="order_id" />',
            '<xs:field xpath="order_id" /><xs:field xpath="customer_id" />',
        )
    )
    # customer_id may be missing (minOccurs=0), which no key part may be (.NET's primary
    # key columns never allow DBNull); a composite key of required columns imports (below)
    with pytest.raises(
        SchemaError, match="customer_id: a part of a composite key cannot be Optional"
    ):
        table_schema(read_dataset(xsd)["orders"])
    xsd.write_text(
        shop_xsd(False).replace(
            "</xs:element>\n</xs:schema>",
            '<xs:keyref name="back" refer="orders_Constraint1"><xs:selector xpath=".//customers"'
            ' /><xs:field xpath="id" /></xs:keyref></xs:element>\n</xs:schema>',
        )
    )
    with pytest.raises(XMLImportError, match="cycle"):
        read_dataset(xsd)


def test_datasets_from_our_own_classes(tmp_path: Path) -> None:
    from entityworks import column, table

    @table("authors")
    @dataclasses.dataclass
    class Author:
        id: int
        name: str

    @table("books")
    @dataclasses.dataclass
    class Book:
        id: int
        author: int = column(metadata={"references": "authors.id"})
        title: str = ""

    data = dataset_of([Book, Author], name="Library")
    assert list(data.tables) == ["authors", "books"]  # parents first
    out = tmp_path / "lib.xml"
    write_dataset(
        data,
        {"authors": [(1, "Le Guin")], "books": [(7, 1, "Lathe"), (8, 1, "Dispossessed")]},
        out,
        tmp_path / "lib.xsd",
        nested=True,
    )
    store = Store(tmp_path / "lib.db")
    assert store.import_dataset(out, tmp_path / "lib.xsd") == {"authors": 1, "books": 2}
    with pytest.raises(XMLImportError, match="no parent row"):
        write_dataset(
            data, {"authors": [], "books": [(7, 1, "x")]}, tmp_path / "o.xml", nested=True
        )
    assert not (tmp_path / "o.xml").exists()


@dataclasses.dataclass
class Leaf:
    v: int


@dataclasses.dataclass
class Tree:
    id: int
    leaves: list[Leaf] = dataclasses.field(default_factory=list)


def test_a_table_with_child_rows_is_refused_not_exported_without_them(
    store: Store, tmp_path: Path
) -> None:
    """A DataSet holds flat tables: exporting a table whose rows own child rows, by class or
    by name (reflection knows no child lists), once wrote the parents alone."""
    store.create(Tree)
    store.insert(Tree(1, [Leaf(2), Leaf(3)]))
    out = tmp_path / "out"
    out.mkdir()
    for tables in ([Tree], ["tree"]):
        with pytest.raises(SchemaError, match=r"'tree' has child tables \(tree_leaves\)"):
            store.export_dataset(tables, out / "t.xml")
        assert list(out.iterdir()) == []


def test_the_command_refuses_a_catalog_dataset_that_would_drop_child_rows(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    runner = CliRunner()
    made = runner.invoke(
        cli,
        ["generate", "caves", "--count", "1", "--width", "30", "--height", "20", "--db", str(db)],
    )
    assert made.exit_code == 0, made.output
    out = tmp_path / "levels.xml"
    result = runner.invoke(
        cli,
        ["export-xml", "maps", "entropy_reports", str(out), "--dataset", "Levels", "--db", str(db)],
    )
    assert result.exit_code == 2
    assert "'maps' has child tables (maps_caves" in result.output
    assert not out.exists() and not out.with_suffix(".xsd").exists()


@dataclasses.dataclass
class Line:
    order: int = primary_key()
    pos: int = primary_key()
    sku: str = ""


@dataclasses.dataclass
class Label:
    id: int
    name: str


def test_composite_keys_round_trip_through_a_dataset(store: Store, tmp_path: Path) -> None:
    """What export_dataset writes (every key column, a composite xs:unique) imports back:
    the same rows, found by the whole key; a repeated key refuses the whole document."""
    store.create(Line)
    store.create(Label)
    store.insert_many([Line(1, 1, "a"), Line(1, 2, "b"), Line(2, 1, "c")])
    store.insert(Label(1, "x"))
    xml, xsd = tmp_path / "d.xml", tmp_path / "d.xsd"
    assert store.export_dataset([Line, Label], xml, xsd) == {"line": 3, "label": 1}
    with Store(f"sqlite:///{tmp_path / 'copy.db'}") as copy:
        assert copy.import_dataset(xml, xsd) == {"line": 3, "label": 1}
        lines = read_dataset(xsd)["line"]
        back = copy.select(lines, order_by=["order", "pos"])
        assert [(r.order, r.pos, r.sku) for r in back] == [(1, 1, "a"), (1, 2, "b"), (2, 1, "c")]
        assert copy.get(lines, (1, 2)).sku == "b"
        # a DiffGram matches rows by a single-column key: refused, naming why
        gram = tmp_path / "g.xml"
        store.export_dataset([Line], gram, tmp_path / "g.xsd", diffgram=True)
        with pytest.raises(XMLImportError, match="composite primary key"):
            copy.import_diffgram(gram, tmp_path / "g.xsd")
    twice = tmp_path / "twice.xml"
    twice.write_text(xml.read_text().replace("<pos>2</pos>", "<pos>1</pos>"))
    with Store(f"sqlite:///{tmp_path / 'none.db'}") as fresh:
        with pytest.raises(XMLImportError, match="duplicate value"):
            fresh.import_dataset(twice, xsd)
        assert fresh.table_names() == []


ORG_XSD = """<?xml version="1.0" standalone="yes"?>
<xs:schema id="Org" xmlns="" xmlns:xs="http://www.w3.org/2001/XMLSchema"
    xmlns:msdata="urn:schemas-microsoft-com:xml-msdata">
  <xs:element name="Org" msdata:IsDataSet="true">
    <xs:complexType>
      <xs:choice minOccurs="0" maxOccurs="unbounded">
        <xs:element name="staff">
          <xs:complexType>
            <xs:sequence>
              <xs:element name="id" type="xs:int" />
              <xs:element name="boss_id" type="xs:int" minOccurs="0" />
              <xs:element name="mentor_id" type="xs:int" minOccurs="0" />
            </xs:sequence>
          </xs:complexType>
        </xs:element>
      </xs:choice>
    </xs:complexType>
    <xs:unique name="Constraint1" msdata:PrimaryKey="true">
      <xs:selector xpath=".//staff" />
      <xs:field xpath="id" />
    </xs:unique>
    <xs:keyref name="staff_boss" refer="Constraint1">
      <xs:selector xpath=".//staff" />
      <xs:field xpath="boss_id" />
    </xs:keyref>
    <xs:keyref name="staff_mentor" refer="Constraint1">
      <xs:selector xpath=".//staff" />
      <xs:field xpath="mentor_id" />
    </xs:keyref>
  </xs:element>
</xs:schema>
"""


def org(tmp_path: Path, staff: list[tuple[int, int | None, int | None]]) -> tuple[Path, Path]:
    xml, xsd = tmp_path / "org.xml", tmp_path / "org.xsd"
    xsd.write_text(ORG_XSD)
    cells = [
        "<staff>"
        + f"<id>{i}</id>"
        + ("" if b is None else f"<boss_id>{b}</boss_id>")
        + ("" if m is None else f"<mentor_id>{m}</mentor_id>")
        + "</staff>"
        for i, b, m in staff
    ]
    xml.write_text("<Org>\n" + "\n".join(cells) + "\n</Org>\n")
    return xml, xsd


def test_a_self_referencing_table_imports_children_before_their_parents(
    store: Store, tmp_path: Path
) -> None:
    """Rows before the rows they refer to (System.Data reads them so: it checks constraints
    once the document is read) import on every backend, into a table whose own foreign keys
    the database enforces; a long chain listed children first, a row that is its own boss,
    and two relations of one table included."""
    chain = [(i, i - 1 if i > 1 else None, None) for i in range(3_000, 0, -1)]
    staff = [(5001, 5003, 5002), (5002, 5003, None), (5003, None, 5003), *chain]
    xml, xsd = org(tmp_path, staff)
    assert store.import_dataset(xml, xsd) == {"staff": len(staff)}
    assert rows(store, "staff") == sorted(staff)
    with store.engine.connect() as conn:
        keys = sa.inspect(conn).get_foreign_keys("staff")
    assert sorted((fk["constrained_columns"], fk["referred_table"]) for fk in keys) == [
        (["boss_id"], "staff"),
        (["mentor_id"], "staff"),
    ]
    cls = store.reflect("staff")
    with pytest.raises(WriteError):  # the database keeps the reference, as .NET does
        store.insert(cls(9_999, 8_888, None))


def test_rows_that_refer_to_each_other_are_refused_clearly(store: Store, tmp_path: Path) -> None:
    """A cycle of rows (no order lets a foreign key checked row by row take them) is
    refused before anything is created, naming the row, the table and the column."""
    xml, xsd = org(tmp_path, [(1, None, None), (2, 3, None), (3, 4, None), (4, 2, 1)])
    with pytest.raises(XMLImportError) as info:
        store.import_dataset(xml, xsd)
    message = str(info.value)
    assert message.startswith("org.xml: row 4 of table 'staff', column 'boss_id': ")
    assert "cycle (id 2 -> 3 -> 4 -> 2)" in message and message.endswith("nothing was imported")
    assert (info.value.row, info.value.column) == (4, "boss_id")
    assert store.table_names() == []


def test_a_row_the_database_refuses_is_named_by_table_and_column(
    store: Store, tmp_path: Path
) -> None:
    """A foreign key only the database knows (the table has it from an earlier import, the
    document's XSD has no relation): the error names the document's row, the table and the
    column on every backend (SQLite's own message names no column), in one clean sentence."""
    xml, xsd = files(tmp_path, False)
    store.import_dataset(xml, xsd)
    alone = tmp_path / "alone.xsd"
    text = shop_xsd(False)
    start = text.index('<xs:element name="customers">')
    end = text.index("</xs:element>", text.index("</xs:complexType>", start)) + 13
    start_key, end_key = text.index("<xs:unique"), text.index("</xs:unique>") + 12
    start_ref, end_ref = text.index("<xs:keyref"), text.index("</xs:keyref>") + 12
    alone.write_text(text[:start] + text[end:start_key] + text[end_key:start_ref] + text[end_ref:])
    data = read_dataset(alone)
    assert list(data.tables) == ["orders"] and not data.relations
    orders = tmp_path / "orders.xml"
    orders.write_text(
        "<Shop><orders><order_id>20</order_id><customer_id>1</customer_id>"
        "</orders><orders><order_id>21</order_id><customer_id>99</customer_id>"
        "</orders></Shop>"
    )
    with pytest.raises(XMLImportError) as info:
        store.import_dataset(orders, alone)
    message = str(info.value)
    assert message.startswith("orders.xml: row 2 of table 'orders', column 'customer_id': ")
    assert ", :" not in message and message.endswith("nothing was written")
    assert (info.value.row, info.value.column) == (2, "customer_id")
    assert [r[0] for r in rows(store, "orders")] == [10, 11, 12]


@pytest.mark.parametrize("case", ["contradicting", "missing"])
def test_a_nested_row_refers_to_its_enclosing_row(store: Store, tmp_path: Path, case: str) -> None:
    """As in System.Data (see test_dotnet_interop), a nested row's reference is the key of
    the row it sits in, whatever its own element says or when it has none."""
    own = "<orders><order_id>11</order_id><customer_id>1</customer_id></orders>"
    assert own in NESTED_XML
    row = (
        "<orders><order_id>11</order_id><customer_id>2</customer_id></orders>"
        if case == "contradicting"
        else "<orders><order_id>11</order_id></orders>"
    )
    xml, xsd = files(tmp_path, True, NESTED_XML.replace(own, row))
    assert store.import_dataset(xml, xsd) == {"customers": 2, "orders": 3}
    assert [r[:2] for r in rows(store, "orders")] == [(10, 1), (11, 1), (12, 2)]


def test_a_nested_row_before_its_parents_key_is_refused(store: Store, tmp_path: Path) -> None:
    """A hand-written XSD may put the nested rows before the parent's key column: the key
    they take is not read yet, so the document is refused, naming the row and column."""
    text = shop_xsd(True)
    start = text.index('<xs:element name="orders"')
    end = text.index("</xs:element>", text.index("</xs:complexType>", start)) + 13
    orders = text[start:end]
    key = '<xs:element name="id" type="xs:int" />'
    xsd_text = text[:start] + text[end:]
    xsd_text = xsd_text.replace(key, orders + key)
    xml = NESTED_XML.replace("<customers><id>1</id><name>Ada</name>", "<customers>")
    xml = xml.replace(
        "</orders>\n  </customers>\n  <customers><id>2</id>",
        "</orders><id>1</id><name>Ada</name>\n  </customers>\n  <customers>",
    )
    xml = xml.replace("<total>3</total></orders>", "<total>3</total></orders><id>2</id>")
    xml_path, xsd = files(tmp_path, True, xml)
    xsd.write_text(xsd_text)
    with pytest.raises(
        XMLImportError, match="row 1 .*column 'customer_id'.*'id' does not come before it"
    ) as info:
        store.import_dataset(xml_path, xsd)
    assert info.value.row == 1
    assert store.table_names() == []


@pytest.mark.parametrize("nested", [False, True], ids=["flat", "nested"])
def test_a_column_named_like_a_table_is_a_column(
    store: Store, tmp_path: Path, nested: bool
) -> None:
    """An ``orders`` column named ``customers`` (like the table beside it): its element is a
    value of its order row, never a row of ``customers`` (which failed to decode, or would
    be counted as a customer)."""
    xml_path, xsd_path = files(tmp_path, nested)
    xsd_path.write_text(shop_xsd(nested).replace('name="total"', 'name="customers"'))
    text = (NESTED_XML if nested else FLAT_XML).replace("total>", "customers>")
    assert text.count("<customers>9.50</customers>") == 1
    xml_path.write_text(text)
    assert store.import_dataset(xml_path, xsd_path) == {"customers": 2, "orders": 3}
    assert rows(store, "customers") == [(1, "Ada"), (2, None)]
    assert [r[:3] for r in rows(store, "orders")] == [
        (10, 1, decimal.Decimal("9.50")),
        (11, 1, None),
        (12, 2, decimal.Decimal("3")),
    ]

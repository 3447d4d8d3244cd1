"""Door parity (issue 29 item 2): a table made by ``Store.create`` of a class with ``list[Child]``
fields, read through the Python API and through the command line, gives the same rows, child
rows included, on every backend: ``export-xml`` against ``Store.export_xml`` (parsed with lxml),
``parquet`` against ``Store.to_arrow`` (read with pyarrow), and ``schema show`` lists the
child tables and their columns. The command line reflects the table from the database (it
has no class), so what it carries comes from the tables alone.
"""

from __future__ import annotations

import decimal
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner, Result
from lxml import etree

from entityworks import Store, table
from entityworks.cli import cli


@dataclass
class Line:
    sku: str
    qty: int
    price: decimal.Decimal


@dataclass
class Note:
    text: str


@table("orders")
@dataclass
class Order:
    id: int
    customer: str
    lines: list[Line] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)


@table("tagged")
@dataclass
class Tagged:  # an Optional child list: XML and Arrow cannot tell None from []
    id: int
    tags: list[Note] | None = None


ORDERS = [
    Order(
        1,
        "ann",
        [Line("a", 1, decimal.Decimal("1.50")), Line("b", 2, decimal.Decimal("0.25"))],
        [Note("fragile")],
    ),
    Order(2, "bob", [], []),
    Order(3, "cy", [Line("c", 3, decimal.Decimal("10"))], []),
]


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def rows(path: Path) -> list[tuple[str, list[tuple[str, str | None]]]]:
    """The row elements of an XML document: their tag and columns, in document order."""
    root = etree.parse(str(path)).getroot()
    return [
        (str(row.tag), [(str(c.tag), c.text) for c in row])
        for row in root
        if isinstance(row.tag, str)
    ]


def xsd_tables(path: Path) -> dict[str, list[str]]:
    """The tables an XSD declares and their columns."""
    xs = "{http://www.w3.org/2001/XMLSchema}"
    tree = etree.parse(str(path))
    return {
        str(e.get("name")): [
            str(c.get("name")) for c in e.iterfind(f"{xs}complexType/{xs}sequence/{xs}element")
        ]
        for e in tree.iterfind(f".//{xs}choice/{xs}element")
    }


@pytest.fixture
def orders(backend_url: str) -> str:
    with Store(backend_url) as store:
        store.create(Order)
        store.insert_many(ORDERS)
    return backend_url


def test_export_xml_carries_the_child_rows_as_the_python_api_does(
    tmp_path: Path, orders: str
) -> None:
    api_xml, api_xsd = tmp_path / "api.xml", tmp_path / "api.xsd"
    with Store(orders) as store:
        store.export_xml(Order, api_xml, api_xsd, order_by="id")
    cli_xml = tmp_path / "cli.xml"
    result = run("export-xml", "orders", str(cli_xml), "--order-by", "id", "--db", orders)
    assert result.exit_code == 0, result.stderr
    expected = rows(api_xml)
    assert [tag for tag, _ in expected].count("orders_lines") == 3  # the oracle has them
    assert rows(cli_xml) == expected
    assert xsd_tables(tmp_path / "cli.xsd") == xsd_tables(api_xsd)
    assert set(xsd_tables(api_xsd)) == {"orders", "orders_lines", "orders_notes"}

    api_one, cli_one = tmp_path / "api1.xml", tmp_path / "cli1.xml"  # a filter: same rows
    with Store(orders) as store:
        store.export_xml(Order, api_one, where={"customer": "ann"})
    result = run("export-xml", "orders", str(cli_one), "-w", "customer=ann", "--db", orders)
    assert result.exit_code == 0, result.stderr
    assert rows(cli_one) == rows(api_one)
    assert len(rows(cli_one)) == 1 + 2 + 1


def test_parquet_carries_the_child_rows_as_the_python_api_does(tmp_path: Path, orders: str) -> None:
    with Store(orders) as store:
        api = store.to_arrow(Order, order_by="id")
    out = tmp_path / "cli.parquet"
    result = run("parquet", "orders", str(out), "--db", orders)
    assert result.exit_code == 0, result.stderr
    read = pq.read_table(out)
    assert read.column_names == api.column_names == ["id", "customer", "lines", "notes"]
    by_id: list[dict[str, Any]] = sorted(read.to_pylist(), key=lambda r: r["id"])
    assert by_id == api.to_pylist()
    assert [(item["sku"], item["qty"]) for r in by_id for item in r["lines"]] == [
        ("a", 1),
        ("b", 2),
        ("c", 3),
    ]  # the child rows are there (not only equal to the API's)
    assert [r["notes"] for r in by_id] == [[{"text": "fragile"}], [], []]
    assert read.schema.field("lines").type == api.schema.field("lines").type


def test_schema_show_lists_the_child_tables(orders: str) -> None:
    result = run("schema", "show", "orders", "--db", orders)
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert any(line.strip().startswith("lines: child table orders_lines") for line in lines)
    assert any(line.strip().startswith("notes: child table orders_notes") for line in lines)
    columns = [
        line.split()[0]
        for line in lines[1:]
        if not line.strip().endswith(")") and "child table" not in line
    ]
    assert columns == [
        "id",
        "customer",
        "parent_key",
        "position",
        "sku",
        "qty",
        "price",
        "parent_key",
        "position",
        "text",
    ]


def test_what_the_python_api_refuses_the_command_line_refuses(tmp_path: Path, orders: str) -> None:
    """An Optional child list: Store.export_xml and to_arrow refuse it, naming the field;
    the commands refuse it the same way (never an export without the child rows)."""
    from entityworks import SchemaError

    with Store(orders) as store:
        store.create(Tagged)
        store.insert_many([Tagged(1, [Note("x")]), Tagged(2, None)])
        with pytest.raises(SchemaError, match="tags: an Optional child list") as api_xml:
            store.export_xml(Tagged, tmp_path / "api.xml")
        with pytest.raises(SchemaError, match="tags: an Optional child list") as api_arrow:
            store.to_arrow(Tagged)
    for args, api in (
        (["export-xml", "tagged", str(tmp_path / "cli.xml")], api_xml),
        (["parquet", "tagged", str(tmp_path / "cli.parquet")], api_arrow),
    ):
        result = run(*args, "--db", orders)
        assert result.exit_code == 2, result.stdout
        assert "tags: an Optional child list" in result.stderr
        assert str(api.value).split(".", 1)[1] in result.stderr  # the same words
        assert not list(tmp_path.glob("cli.*"))
    result = run("schema", "show", "tagged", "--db", orders)  # showing it is fine
    assert result.exit_code == 0, result.stderr
    assert "tags: child table tagged_tags" in result.stdout


@dataclass
class Leaf:
    g: int


@dataclass
class Branch:
    c: str
    leaves: list[Leaf] = field(default_factory=list)


@table("trees")
@dataclass
class Tree:  # children of children: found and rebuilt, refused where the API refuses
    id: int
    branches: list[Branch] = field(default_factory=list)


def test_children_of_children_are_found_and_refused_as_the_api_does(
    tmp_path: Path, orders: str
) -> None:
    from entityworks import SchemaError
    from entityworks.sql.exchange.children import with_child_tables

    trees = [Tree(1, [Branch("x", [Leaf(1), Leaf(2)]), Branch("y")]), Tree(2)]
    with Store(orders) as store:
        store.create(Tree)
        store.insert_many(trees)
        rebuilt = with_child_tables(store, store.reflect("trees"))
        got = list(store.select(rebuilt, order_by="id"))
        assert [
            (t.id, [(b.c, [leaf.g for leaf in b.leaves]) for b in t.branches]) for t in got
        ] == [(1, [("x", [1, 2]), ("y", [])]), (2, [])]
        with pytest.raises(SchemaError, match="child tables of their own") as api:
            store.export_xml(Tree, tmp_path / "api.xml")
    result = run("export-xml", "trees", str(tmp_path / "cli.xml"), "--db", orders)
    assert result.exit_code == 2 and not (tmp_path / "cli.xml").exists()
    assert str(api.value).split(".", 1)[1] in result.stderr
    result = run("schema", "show", "trees", "--db", orders)
    assert result.exit_code == 0, result.stderr
    assert "leaves: child table trees_branches_leaves" in result.stdout

"""``import-xml --table`` and internal tables (issue 29 item 1), on every backend.

``--table T`` puts the rows (and the child rows) into ``T`` and ``T_<field>``, the document
keeping the XSD's names; a DataSet or a DiffGram, whose tables keep their names, refuses it.
An internal table (entityworks_version, alembic_version, entityworks_schema, sqlite_*, or a
table shaped like an Alembic version table) is refused however it is named -- ``--table``, the
XSD's table or child table, a DataSet's table, a DiffGram's rows, an encoded XML name, another
letter case -- through the command line and the Python API, and the database, and
``migrate``, are unchanged.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from click.testing import CliRunner, Result

from entityworks import SchemaError, Store, table
from entityworks.catalog import open_catalog
from entityworks.cli import cli
from entityworks.xml.table import write_xml


@dataclass
class Line:
    sku: str
    qty: int


@table("orders")
@dataclass
class Order:
    id: int
    customer: str
    lines: list[Line] = field(default_factory=list)


@table("copy")
@dataclass
class Copy:  # Order under the name import-xml --table copy gives it
    id: int
    customer: str
    lines: list[Line] = field(default_factory=list)


ORDERS = [
    Order(1, "ann", [Line("a", 1), Line("b", 2)]),
    Order(2, "bob", []),
    Order(3, "cy", [Line("c", 3)]),
]


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def refused(result: Result, message: str) -> None:
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert message in lines[0], lines[0]
    assert "Traceback" not in result.stdout + result.stderr


def snapshot(url: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every table of the database and its rows (an oracle independent of entityworks)."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            metadata = sa.MetaData()
            metadata.reflect(conn)
            return {
                name: sorted(map(tuple, conn.execute(sa.select(t)).all()), key=repr)
                for name, t in metadata.tables.items()
            }
    finally:
        engine.dispose()


def raw_rows(url: str, name: str, order: str) -> list[tuple[Any, ...]]:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            t = sa.Table(name, sa.MetaData(), autoload_with=conn)
            return [
                tuple(r)
                for r in conn.execute(sa.select(t).order_by(*[t.c[c] for c in order.split(",")]))
            ]
    finally:
        engine.dispose()


def test_table_option_puts_the_rows_and_child_rows_into_that_table(
    tmp_path: Path, backend_url: str
) -> None:
    xml, xsd = tmp_path / "orders.xml", tmp_path / "orders.xsd"
    write_xml(Order, ORDERS, xml, xsd)
    with Store(backend_url) as store:  # the XSD's own table exists, with other rows
        store.create(Order)
        store.insert_many([Order(9, "zed", [Line("z", 9)])])
    before = snapshot(backend_url)
    result = run("import-xml", str(xml), "--xsd", str(xsd), "--table", "copy", "--db", backend_url)
    assert result.exit_code == 0, result.stderr
    assert "into copy, 3 rows of copy_lines" in result.stdout
    after = snapshot(backend_url)
    # entityworks_schema (made by create(Order)) gains the logical schema of the new tables
    # copy and copy_lines; what it held about orders stays as it was
    recorded = before.pop("entityworks_schema")
    assert set(recorded) <= set(after["entityworks_schema"])
    assert {r[0] for r in set(after["entityworks_schema"]) - set(recorded)} == {
        "copy",
        "copy_lines",
    }
    assert {k: v for k, v in after.items() if k in before} == before  # orders untouched
    assert raw_rows(backend_url, "copy", "id") == [(1, "ann"), (2, "bob"), (3, "cy")]
    assert raw_rows(backend_url, "copy_lines", "parent_key,position") == [
        (1, 0, "a", 1),
        (1, 1, "b", 2),
        (3, 0, "c", 3),
    ]
    with Store(backend_url) as store:  # the Python API reads the renamed table whole
        assert [(o.id, o.customer, o.lines) for o in store.select(Copy, order_by="id")] == [
            (o.id, o.customer, o.lines) for o in ORDERS
        ]

    inline = tmp_path / "inline.xml"  # the document's own schema, renamed the same way
    write_xml(Order, ORDERS[:1], inline, inline_schema=True)
    result = run("import-xml", str(inline), "--table", "copy2", "--db", backend_url)
    assert result.exit_code == 0, result.stderr
    assert raw_rows(backend_url, "copy2_lines", "parent_key,position") == [
        (1, 0, "a", 1),
        (1, 1, "b", 2),
    ]
    assert snapshot(backend_url)["orders"] == before["orders"]


def test_table_option_is_refused_where_it_cannot_apply(tmp_path: Path, backend_url: str) -> None:
    from tests.entityworks.xml.test_dataset import FLAT_XML, shop_xsd

    xml, xsd = tmp_path / "shop.xml", tmp_path / "shop.xsd"
    xml.write_text(FLAT_XML)
    xsd.write_text(shop_xsd(False))
    with Store(backend_url) as store:
        store.create(Order)
    before = snapshot(backend_url)
    refused(
        run("import-xml", str(xml), "--xsd", str(xsd), "--table", "orders", "--db", backend_url),
        "--table names one table, but the XSD describes a DataSet",
    )
    with Store(backend_url) as store:  # a DiffGram changes the tables its rows name
        store.create(Customer)
        store.insert_many([Customer(1, "ann")])
        store.export_dataset(
            [Customer], tmp_path / "changes.xml", tmp_path / "changes.xsd", diffgram=True
        )
    before = snapshot(backend_url)
    refused(
        run(
            "import-xml",
            str(tmp_path / "changes.xml"),
            "--xsd",
            str(tmp_path / "changes.xsd"),
            "--table",
            "orders",
            "--db",
            backend_url,
        ),
        "--table does not apply to a DiffGram",
    )
    assert snapshot(backend_url) == before


@table("entityworks_version")
@dataclass
class Version:
    version_num: str


@table("my_versions")
@dataclass
class Shaped:  # any name: 'migrate' takes a table of this shape for a version table
    version_num: str


@dataclass
class Note:
    text: str


@table("entityworks")
@dataclass
class Entityworks:  # its child table is entityworks_version
    id: int
    version: list[Note] = field(default_factory=list)


@table("things")
@dataclass
class Things:  # renamed to entityworks, its child table is entityworks_version
    id: int
    version: list[Note] = field(default_factory=list)


@table("customers")
@dataclass
class Customer:
    id: int
    name: str


SOURCES: dict[str, tuple[type, list[Any]]] = {
    "version": (Version, [Version("deadbeef")]),
    "shaped": (Shaped, [Shaped("deadbeef")]),
    "child": (Entityworks, [Entityworks(1, [Note("x")])]),
    "things": (Things, [Things(1, [Note("x")])]),
    "customers": (Customer, [Customer(1, "ann")]),
}


def _documents(tmp_path: Path) -> dict[str, tuple[Path, Path | None]]:
    """Documents that name internal tables in each way: with their XSD beside them, and
    (``<name>-inline``) with it inside."""
    out: dict[str, tuple[Path, Path | None]] = {}
    for name, (cls, rows) in SOURCES.items():
        xml, xsd = tmp_path / f"{name}.xml", tmp_path / f"{name}.xsd"
        write_xml(cls, rows, xml, xsd)
        out[name] = (xml, xsd)
        inline = tmp_path / f"{name}-inline.xml"
        write_xml(cls, rows, inline, inline_schema=True)
        out[f"{name}-inline"] = (inline, None)
    xml, xsd = out["version"]  # the same table, its name spelled with an XML escape
    for path in (xml, xsd):
        spelled = tmp_path / f"encoded{path.suffix}"
        spelled.write_text(
            path.read_text().replace("entityworks_version", "entityworks_x005F_version")
        )
    out["encoded"] = (tmp_path / "encoded.xml", tmp_path / "encoded.xsd")
    scratch = Store(tmp_path / "scratch.db")  # a DataSet with an internal table
    users = table("users")(dataclasses.make_dataclass("Users", [("id", int), ("name", str)]))
    internal = table("alembic_version")(
        dataclasses.make_dataclass("Alembic", [("id", int), ("note", str)])
    )
    scratch.create(users)
    scratch.create(internal)
    scratch.insert_many([users(1, "u")])
    scratch.insert_many([internal(1, "n")])
    scratch.export_dataset([users, internal], tmp_path / "ds.xml", tmp_path / "ds.xsd")
    scratch.export_dataset([users, internal], tmp_path / "ds-inline.xml", inline_schema=True)
    scratch.close()
    out["dataset"] = (tmp_path / "ds.xml", tmp_path / "ds.xsd")
    out["dataset-inline"] = (tmp_path / "ds-inline.xml", None)
    return out


@pytest.mark.parametrize("catalog", [False, True], ids=["user-db", "catalog"])
def test_internal_tables_are_refused_through_every_name(
    tmp_path: Path, backend_url: str, catalog: bool
) -> None:
    """Security: an XSD, a DataSet, a DiffGram or an option that names an internal table
    (the bug: an XSD naming entityworks_version, with --table, wrote a second revision into
    it and broke 'migrate') is refused and leaves the database and 'migrate' unchanged."""
    docs = _documents(tmp_path)
    if catalog:
        open_catalog(backend_url).close()
    with Store(backend_url) as store:
        store.create(Customer)
    before = snapshot(backend_url)
    db = ("--db", backend_url)
    cases = [
        (("version", "--table", "other"), "'entityworks_version' is an internal table"),
        (("version",), "'entityworks_version' is an internal table"),
        (("encoded", "--table", "other"), "'entityworks_version' is an internal table"),
        (("encoded",), "'entityworks_version' is an internal table"),
        (("child",), "'entityworks_version' is an internal table"),
        (("things", "--table", "entityworks"), "'entityworks_version' is an internal table"),
        (("shaped",), "shape of an Alembic version table"),
        (("shaped", "--table", "other"), "shape of an Alembic version table"),
        (("dataset",), "'alembic_version' is an internal table"),
    ]
    for table_name in (
        "entityworks_version",
        "ENTITYWORKS_Version",
        "alembic_version",
        "entityworks_schema",
        "sqlite_sequence",
        "SQLITE_MASTER",
    ):
        cases.append((("customers", "--table", table_name), "is an internal table"))
    for (name, *options), message in cases:
        for doc in (name, f"{name}-inline"):
            if doc not in docs:
                continue
            xml, xsd = docs[doc]
            schema = () if xsd is None else ("--xsd", str(xsd))
            refused(run("import-xml", str(xml), *schema, *options, *db), message)
            assert snapshot(backend_url) == before, (doc, options)

    with Store(backend_url) as store:  # the Python API refuses the same
        with pytest.raises(SchemaError, match="'entityworks_version' is an internal table"):
            store.import_xml(Version, *docs["version"])
        with pytest.raises(SchemaError, match="'entityworks_version' is an internal table"):
            store.import_xml(Entityworks, *docs["child"])
        with pytest.raises(SchemaError, match="shape of an Alembic version table"):
            store.import_xml(Shaped, *docs["shaped"])
        with pytest.raises(SchemaError, match="'alembic_version' is an internal table"):
            store.import_dataset(*docs["dataset"])
        with pytest.raises(SchemaError, match="'alembic_version' is an internal table"):
            store.import_dataset(docs["dataset-inline"][0])
        with pytest.raises(SchemaError, match="'entityworks_version' is an internal table"):
            store.import_diffgram(*docs["version"])
    assert snapshot(backend_url) == before
    if catalog:
        result = run("migrate", *db)
        assert result.exit_code == 0, result.stderr
        assert "nothing to do" in result.stdout
        assert snapshot(backend_url) == before


def test_the_internal_names_are_those_the_code_keeps_for_itself() -> None:
    """The import's list names the tables migrate, Alembic, the logical schema and the
    command line treat as internal (one list to grow when another bookkeeping table comes)."""
    from entityworks.cli._stores import INTERNAL_PREFIXES as CLI_PREFIXES
    from entityworks.cli._stores import INTERNAL_TABLES as CLI_TABLES
    from entityworks.migrate import VERSION_TABLE
    from entityworks.migrate.scaffold import USER_VERSION_TABLE
    from entityworks.sql import logical
    from entityworks.sql.exchange.internal import INTERNAL_PREFIXES, INTERNAL_TABLES

    assert {VERSION_TABLE, USER_VERSION_TABLE, logical.TABLE} == set(INTERNAL_TABLES)
    assert set(CLI_TABLES) == set(INTERNAL_TABLES)
    assert set(CLI_PREFIXES) == set(INTERNAL_PREFIXES)

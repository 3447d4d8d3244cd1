"""Clear errors instead of a driver's or Python's own: each names the class, table, row and
column as they apply, on every backend where the case arises, and the command line prints
them as one line (exit 2, no traceback)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import importlib.util
import math
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import sqlalchemy as sa
from click.testing import CliRunner, Result

from entityworks import (
    AwareDatetime,
    EntityworksError,
    InvalidNameError,
    NoSuchTableError,
    SchemaError,
    Store,
    UnknownTableError,
    WriteError,
    XMLImportError,
    column,
    primary_key,
    table,
    table_schema,
    to_arrow,
)
from entityworks.cli import cli
from entityworks.xml.codegen import codegen
from entityworks.xml.dataset import dataset_of, dataset_xsd_bytes, read_dataset
from entityworks.xml.table import read_xml, write_xml
from entityworks.xml.xsd import read_xsd, write_xsd
from entityworks.xml.xsdwrite import xsd_bytes

from .sql.test_logical import DOTNET_XSD
from .xml.test_dataset import FLAT_XML, shop_xsd


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def refused(result: Result, *parts: str) -> str:
    """One ``error:`` line naming every one of ``parts``, exit 2, no traceback."""
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    for part in parts:
        assert part in lines[0], (part, lines[0])
    return lines[0]


def load_source(source: str, path: Path) -> ModuleType:
    """Import ``source`` as a module of its own (annotations resolve through it)."""
    path.write_text(source, encoding="utf-8")
    name = f"generated_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def same_schema(a: type, b: type) -> None:
    sa_, sb = table_schema(a), table_schema(b)
    assert sa_.name == sb.name
    assert [
        (c.name, c.python_type, c.nullable, c.primary_key, c.max_length) for c in sa_.columns
    ] == [(c.name, c.python_type, c.nullable, c.primary_key, c.max_length) for c in sb.columns]
    assert [child.field for child in sa_.children] == [child.field for child in sb.children]


# -- a table never created -----------------------------------------------------------------------


@dataclass
class Ghost:
    id: int | None
    name: str
    x: float = 0.0


@dataclass
class Twig:
    n: int


@dataclass
class Bush:
    id: int | None
    twigs: list[Twig] = field(default_factory=list)


def _missing(call: Any, cls: type, table_name: str) -> NoSuchTableError:
    with pytest.raises(NoSuchTableError) as info:
        call()
    error = info.value
    assert isinstance(error, UnknownTableError) and isinstance(error, EntityworksError)
    assert error.cls is cls and error.table == table_name
    assert str(error).startswith(f"{cls.__qualname__}: ")
    assert f"table {table_name!r}" in str(error) and "does not exist" in str(error)
    assert f"store.create({cls.__qualname__})" in str(error)
    return error


def test_reading_a_table_never_created(store: Store) -> None:
    for call in (
        lambda: list(store.select(Ghost)),
        lambda: store.count(Ghost),
        lambda: store.get(Ghost, 1),
        lambda: store.to_arrow(Ghost),
        lambda: list(store.select(Ghost, columns=["name"])),
        lambda: list(store.select(Ghost, where={"name": "a"}, order_by="x")),
        lambda: [r for batch in store.rows(Ghost) for r in batch],
    ):
        _missing(call, Ghost, "ghost")
    # the store goes on working, in and out of transactions
    store.create(Ghost)
    store.insert(Ghost(None, "a"))
    assert store.count(Ghost) == 1 and store.get(Ghost, 1) == Ghost(1, "a")


def test_reading_a_child_table_never_created(store: Store) -> None:
    store.create(Bush)
    store.insert(Bush(None, [Twig(1)]))
    store.insert(Bush(None, []))
    with store.engine.begin() as conn:
        conn.execute(sa.text(f"DROP TABLE {store.dialect.identifier_preparer.quote('bush_twigs')}"))
    for call in (lambda: list(store.select(Bush)), lambda: store.get(Bush, 1)):
        error = _missing(call, Bush, "bush_twigs")
        assert "child table 'bush_twigs' (of table 'bush')" in str(error)
    assert store.count(Bush) == 2  # the table that is there still reads


# -- column names Python normalises (NFKC) -------------------------------------------------------

NFKC_NAMES = ["µ", "ﬁx"]  # MICRO SIGN (read as GREEK SMALL LETTER MU), LATIN SMALL LIGATURE FI


@pytest.mark.parametrize("name", NFKC_NAMES)
def test_reflecting_a_column_python_renames(backend_url: str, tmp_path: Path, name: str) -> None:
    engine = sa.create_engine(backend_url)
    metadata = sa.MetaData()
    sa.Table(
        "nfkc",
        metadata,
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column(name, sa.String(20)),
    )
    metadata.create_all(engine)
    with engine.begin() as conn:
        conn.execute(metadata.tables["nfkc"].insert(), [{"id": 1, name: "a"}])
    engine.dispose()
    store = Store(backend_url)
    try:
        with pytest.raises(SchemaError) as info:
            store.reflect("nfkc")
        message = str(info.value)
        assert f"table 'nfkc', column {name!r}" in message and "NFKC" in message
        normal = {"µ": "μ", "ﬁx": "fix"}[name]
        assert f"reads this name as {normal!r}" in message
        # what the message offers works: a field of another name mapped to the column
        mapped = dataclasses.make_dataclass(
            "Nfkc", [("id", int), ("value", str, column(name=name, max_length=20))]
        )
        assert list(store.select(mapped)) == [mapped(1, "a")]
    finally:
        store.close()
    out = tmp_path / "out"
    for args in (
        ["query", "nfkc"],
        ["schema", "show", "nfkc"],
        ["export-xml", "nfkc", f"{out}.xml"],
        ["parquet", "nfkc", f"{out}.parquet"],
    ):
        refused(run(*args, "--db", backend_url), "table 'nfkc'", f"column {name!r}", "NFKC")
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("out")]


@pytest.mark.parametrize("name", NFKC_NAMES)
def test_an_xsd_column_python_renames(tmp_path: Path, name: str) -> None:
    xsd = tmp_path / "k.xsd"
    xsd.write_text(DOTNET_XSD.replace('name="small"', f'name="{name}"'), encoding="utf-8")
    with pytest.raises(XMLImportError) as info:
        read_xsd(xsd)
    assert f"XSD column {name!r} of table 'item'" in str(info.value) and info.value.column == name
    refused(run("codegen", str(xsd)), f"XSD column {name!r}", "NFKC")
    xml = tmp_path / "k.xml"
    xml.write_text("<Shop><item><id>1</id></item></Shop>", encoding="utf-8")
    refused(
        run("import-xml", str(xml), "--xsd", str(xsd), "--db", str(tmp_path / "k.db")),
        f"XSD column {name!r}",
        "NFKC",
    )
    assert not (tmp_path / "k.db").exists()


# -- codegen: no table or column name shadows what the module imports ----------------------------

#: Every name a generated module imports; tables and columns are called so below.
IMPORTED = ["AwareDatetime", "dt", "decimal", "uuid", "dataclass", "field", "column", "table"]


@dataclass
class Leaf:
    column: str = column(max_length=5)
    table: int = 0


@dataclass
class Stem:
    field: int


def _shadowing_class() -> type:
    """A table ``aware_datetime`` (class ``AwareDatetime``) whose columns are called like the
    imports, each of the type that needs that import, and a child list after ``field``."""
    fields: list[tuple[str, Any, Any]] = [
        ("id", int, primary_key()),
        ("AwareDatetime", AwareDatetime, dataclasses.field()),
        ("dt", dt.datetime, dataclasses.field()),
        ("decimal", decimal.Decimal, dataclasses.field()),
        ("uuid", uuid.UUID | None, dataclasses.field()),
        ("column", str, column(max_length=10)),
        ("table", int, column(unique=True)),
        ("dataclass", bool, dataclasses.field()),
        ("list", str, column(max_length=7)),  # a builtin the class body would then hide
        ("field", list[Leaf], dataclasses.field(default_factory=list)),
        ("stems", list[Stem], dataclasses.field(default_factory=list)),
    ]
    cls = dataclasses.make_dataclass("AwareDatetime", fields)
    cls.__tablename__ = "aware datetime"  # type: ignore[attr-defined]  # @table(...) too
    return cls


def test_codegen_imports_survive_tables_and_columns_named_like_them(tmp_path: Path) -> None:
    cls = _shadowing_class()
    xsd = tmp_path / "aware.xsd"
    write_xsd(cls, xsd)
    source = codegen(xsd)
    module = load_source(source, tmp_path / "aware_model.py")
    generated = module.AwareDatetime
    same_schema(generated, read_xsd(xsd))
    assert xsd_bytes(generated) == xsd_bytes(read_xsd(xsd))
    at = dt.datetime(2024, 1, 2, 3, 4, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    row = generated(
        1,
        at,
        dt.datetime(2024, 5, 6),
        decimal.Decimal("1.50"),
        uuid.UUID(int=7),
        "col",
        3,
        True,
        "nine",
        [module.AwareDatetimeField("ab", 1)],
        [module.AwareDatetimeStems(4)],
    )
    bare = generated(
        2, at, dt.datetime(2024, 5, 6), decimal.Decimal("1"), None, "c", 4, False, "eight"
    )  # the child lists from their default_factory
    assert (bare.field, bare.stems) == ([], [])
    with Store(tmp_path / "a.db") as store:
        store.create(generated)
        store.insert_many([row, bare])
        assert store.get(generated, 1) == row and store.get(generated, 2) == bare
    write_xml(generated, [row], tmp_path / "a.xml")
    assert read_xml(generated, tmp_path / "a.xml", xsd) == [row]
    for name in ("AwareDatetime", "column", "field"):
        assert f"{name} as _{name}" in source, source  # aliased, the others not
    # the classes are made by entity() (no name of the class clashes with it): dataclass
    # and table are not imported, so the fields named so shadow nothing
    assert "import dataclass" not in source and "table as" not in source
    assert "from entityworks import" in source and " entity" in source
    assert "import datetime as _dt" in source and "import uuid as _uuid" in source


def _dataset_of_imported_names() -> list[type]:
    """One table per imported name, each with a column of that name; every table but the
    first refers to the first (a DataSet with relations)."""
    classes = []
    for i, name in enumerate(IMPORTED):
        fields: list[tuple[str, Any, Any]] = [("id", int, primary_key())]
        if i:
            fields.append(
                ("parent", int | None, column(metadata={"references": f"{IMPORTED[0].lower()}.id"}))
            )
        fields.append((name, str | None, column(max_length=30)))
        cls = dataclasses.make_dataclass(name.capitalize() if name.islower() else name, fields)
        cls.__tablename__ = name.lower() if i == 0 else name  # type: ignore[attr-defined]
        classes.append(cls)
    return classes


def test_codegen_of_a_dataset_writes_every_table(tmp_path: Path) -> None:
    xsd, xml = tmp_path / "shop.xsd", tmp_path / "shop.xml"
    xsd.write_text(shop_xsd(False), encoding="utf-8")
    xml.write_text(FLAT_XML, encoding="utf-8")
    with pytest.raises(XMLImportError, match=r"DataSet of 2 tables \('customers', 'orders'\)"):
        read_xsd(xsd)  # one class cannot hold them: refused, not cut to the first table
    result = run("codegen", str(xsd))
    assert result.exit_code == 0, result.stderr
    module = load_source(result.stdout, tmp_path / "shop_model.py")
    data = read_dataset(xsd)
    generated = dataset_of([module.Customers, module.Orders])
    assert list(generated.tables) == ["customers", "orders"]
    assert generated.relations == data.relations and generated.name == data.name == "Shop"
    for name, cls in data.tables.items():
        same_schema(generated.tables[name], cls)
    assert dataset_xsd_bytes(generated) == dataset_xsd_bytes(data)
    with Store(tmp_path / "shop.db") as store:
        assert store.import_dataset(xml, xsd) == {"customers": 2, "orders": 3}
        assert store.count(module.Orders, where={"customer_id": 1}) == 2


def test_codegen_of_a_dataset_named_like_the_imports(tmp_path: Path) -> None:
    xsd = tmp_path / "names.xsd"
    xsd.write_bytes(dataset_xsd_bytes(dataset_of(_dataset_of_imported_names(), name="Names")))
    module = load_source(codegen(xsd), tmp_path / "names_model.py")
    data = read_dataset(xsd)
    assert len(data.tables) == len(IMPORTED)
    classes = [getattr(module, cls.__name__) for cls in data.tables.values()]
    generated = dataset_of(classes)
    assert generated.relations == data.relations
    assert dataset_xsd_bytes(generated) == dataset_xsd_bytes(data)
    with Store(tmp_path / "names.db") as store:
        for cls in classes:
            store.create(cls)
            values = [1] + [None] * (len(dataclasses.fields(cls)) - 1)
            store.insert(cls(*values))
            assert store.get(cls, 1) == cls(*values)


def test_codegen_refuses_a_name_a_class_body_mangles(tmp_path: Path) -> None:
    xsd = tmp_path / "m.xsd"
    xsd.write_text(DOTNET_XSD.replace('name="small"', 'name="__small"'), encoding="utf-8")
    refused(run("codegen", str(xsd)), "Item.__small", "rename the column")


# -- a cycle of nested dataclasses --------------------------------------------------------------


@dataclass
class Husband:
    id: int
    wife: Wife | None = None


@dataclass
class Wife:
    husband: Husband | None = None


@dataclass
class Node:
    value: int
    next: Node | None = None


@dataclass
class Chain:
    id: int
    first: Node


def test_nested_dataclasses_in_a_cycle_are_refused(store: Store, tmp_path: Path) -> None:
    cases = [
        (Husband, "Husband.wife: ", "(Husband.wife -> Wife.husband -> Husband)"),
        (Chain, "Chain.first: ", "(Node.next -> Node)"),
    ]
    for cls, where, cycle in cases:
        for call in (
            lambda c=cls: store.create(c),
            lambda c=cls: table_schema(c),
            lambda c=cls: to_arrow(c, []),
            lambda c=cls: write_xml(c, [], tmp_path / "x.xml"),
        ):
            with pytest.raises(SchemaError) as info:
                call()
            message = str(info.value)
            assert message.startswith(where) and cycle in message, message
            assert info.value.cls is cls
    assert store.table_names() == [] and not (tmp_path / "x.xml").exists()


# -- children of children ---------------------------------------------------------------------


@dataclass
class Knob:
    color: str


@dataclass
class Door:  # no column of its own: only a list of child rows
    knobs: list[Knob] = field(default_factory=list)


@dataclass
class Hall:
    id: int | None
    name: str
    doors: list[Door] = field(default_factory=list)


def test_grandchildren_read_back_and_arrow_refuses_before_reading(store: Store) -> None:
    store.create(Hall)
    halls = [
        Hall(None, "a", [Door([Knob("red"), Knob("blue")]), Door([])]),
        Hall(None, "b", []),
        Hall(None, "c", [Door([Knob("green")])]),
    ]
    store.insert_many(halls)
    assert list(store.select(Hall, order_by="id")) == halls
    assert store.get(Hall, 3) == halls[2]
    statements: list[str] = []
    sa.event.listen(
        store.engine,
        "before_cursor_execute",
        lambda _c, _cur, statement, *_a: statements.append(statement),
    )
    with pytest.raises(SchemaError) as info:
        store.to_arrow(Hall)
    assert str(info.value).startswith(
        "Hall.doors: its items have child tables of their own (knobs)"
    )
    assert info.value.cls is Hall and info.value.field == "doors"
    assert not [s for s in statements if s.lstrip().upper().startswith("SELECT")]


# -- table names SQLite does not tell apart ---------------------------------------------------


@table("maps")
@dataclass
class Lower:
    id: int
    x: str


@table("MAPS")
@dataclass
class Upper:
    id: int
    y: int


def test_sqlite_tables_differing_in_case_are_refused(sqlite_store: Store) -> None:
    sqlite_store.create(Lower)
    sqlite_store.insert(Lower(1, "a"))
    for call in (
        lambda: sqlite_store.create(Upper),
        lambda: list(sqlite_store.select(Upper)),
        lambda: sqlite_store.insert(Upper(1, 2)),
    ):
        with pytest.raises(InvalidNameError) as info:
            call()
        assert str(info.value).startswith(
            "Upper: table 'MAPS' and the existing table 'maps' differ only in case"
        )
        assert info.value.cls is Upper
    # create(Lower) also made entityworks_schema, the logical schema reflection reads
    assert sqlite_store.table_names() == ["entityworks_schema", "maps"]
    assert list(sqlite_store.select(Lower)) == [Lower(1, "a")]


def test_the_command_refuses_an_import_beside_a_table_differing_in_case(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    with Store(db) as store:
        store.create(Lower)
    write_xsd(Upper, tmp_path / "u.xsd")
    write_xml(Upper, [Upper(1, 2)], tmp_path / "u.xml")
    refused(
        run(
            "import-xml", str(tmp_path / "u.xml"), "--xsd", str(tmp_path / "u.xsd"), "--db", str(db)
        ),
        "table 'MAPS' and the existing table 'maps'",
    )
    with Store(db) as store:  # entityworks_schema: made by create(Lower) (its logical schema)
        assert store.table_names() == ["entityworks_schema", "maps"]


# -- values one backend refuses: the column is named ----------------------------------------------


@dataclass
class Reading:
    id: int | None
    name: str
    x: float | None = 0.0
    note: str | None = column(name="Note Text", default=None)


def _refused_write(store: Store, call: Any, row: int | None, field_name: str) -> None:
    with pytest.raises(WriteError) as info:
        call()
    error = info.value
    assert (error.table, error.row, error.column) == ("reading", row, field_name)
    where = "a row" if row is None else f"row {row}"
    assert str(error).startswith(f"reading: {where}, column {field_name!r}: "), str(error)


@pytest.mark.parametrize("bad", [math.inf, -math.inf, math.nan])
def test_a_float_mariadb_cannot_store_names_its_column(store: Store, bad: float) -> None:
    store.create(Reading)
    store.insert(Reading(None, "kept", 1.0))
    if store.dialect.name not in ("mysql", "mariadb"):
        if store.dialect.name == "sqlite" and math.isnan(bad):
            return  # SQLite's own refusal, named as ever (test_store_hostile)
        store.insert(Reading(None, "b", bad))
        assert store.get(Reading, 2).x == bad or math.isnan(bad)
        return
    _refused_write(
        store, lambda: store.insert_many([Reading(None, "a", 2.0), Reading(None, "b", bad)]), 1, "x"
    )
    _refused_write(store, lambda: store.insert(Reading(None, "b", bad)), 0, "x")
    _refused_write(store, lambda: store.upsert_many([Reading(1, "b", bad)]), 0, "x")
    _refused_write(store, lambda: store.update(Reading(1, "b", bad)), None, "x")
    assert list(store.select(Reading)) == [Reading(1, "kept", 1.0)]


def test_text_postgresql_cannot_store_names_its_column(store: Store) -> None:
    store.create(Reading)
    store.insert(Reading(None, "kept"))
    if store.dialect.name != "postgresql":
        store.insert(Reading(None, "a\x00b", note="c\x00"))
        assert store.get(Reading, 2) == Reading(2, "a\x00b", note="c\x00")
        return
    _refused_write(
        store, lambda: store.insert_many([Reading(None, "a"), Reading(None, "a\x00b")]), 1, "name"
    )
    _refused_write(store, lambda: store.insert(Reading(None, "ok", note="\x00")), 0, "note")
    _refused_write(store, lambda: store.upsert_many([Reading(1, "b\x00")]), 0, "name")
    _refused_write(store, lambda: store.update(Reading(1, "b\x00")), None, "name")
    assert list(store.select(Reading)) == [Reading(1, "kept")]

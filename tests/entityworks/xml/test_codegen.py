"""``entityworks codegen FILE.xsd``: the generated source defines the classes ``read_xsd`` builds
(same table, columns, key and XSD), for our schemas and .NET's (issue 15)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import importlib.util
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import pytest
from click.testing import CliRunner

from entityworks import AwareDatetime, XMLImportError, column, table, table_schema
from entityworks.cli import cli
from entityworks.xml.table import read_xml, write_xml
from entityworks.xml.xsd import read_xsd, write_xsd
from entityworks.xml.xsdwrite import xsd_bytes

from ..sql.test_logical import DOTNET_XML, DOTNET_XSD


def load_source(source: str, path: Path) -> ModuleType:
    """Import ``source`` as a module (dataclasses resolve annotations through it)."""
    path.write_text(source)
    name = f"generated_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def generated(xsd: Path, tmp_path: Path) -> ModuleType:
    result = CliRunner().invoke(cli, ["codegen", str(xsd)], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    return load_source(result.stdout, tmp_path / f"{xsd.stem}_model.py")


def same_schema(a: type, b: type) -> None:
    sa_, sb = table_schema(a), table_schema(b)
    assert sa_.name == sb.name
    assert [
        (c.name, c.python_type, c.nullable, c.primary_key, c.max_length) for c in sa_.columns
    ] == [(c.name, c.python_type, c.nullable, c.primary_key, c.max_length) for c in sb.columns]
    assert [child.field for child in sa_.children] == [child.field for child in sb.children]
    assert xsd_bytes(a) == xsd_bytes(b)


def test_a_dotnet_schema_becomes_a_model(tmp_path: Path) -> None:
    xsd, xml = tmp_path / "shop.xsd", tmp_path / "shop.xml"
    xsd.write_text(DOTNET_XSD)
    xml.write_text(DOTNET_XML)
    module = generated(xsd, tmp_path)
    source = (tmp_path / "shop_model.py").read_text()
    assert "class Item:" in source and "__dataset__ = 'Shop'" in source
    assert "uid: uuid.UUID | None" in source and "at: AwareDatetime | None" in source
    assert "id: int = column(primary_key=True" in source
    same_schema(module.Item, read_xsd(xsd))
    rows = read_xml(module.Item, xml, xsd)
    assert rows[0].small == -32768 and rows[1].uid is None


@dataclass
class Part:
    label: str
    weight: float | None


@table("order table")
@dataclass
class Order:
    id: int
    placed: AwareDatetime
    ref: uuid.UUID = column(unique=True)
    note: str | None = column(max_length=20)
    parts: list[Part] = field(default_factory=list)


def test_our_schema_with_a_child_table_becomes_the_same_classes(tmp_path: Path) -> None:
    xsd = tmp_path / "order.xsd"
    write_xsd(Order, xsd)
    module = generated(xsd, tmp_path)
    same_schema(module.OrderTable, read_xsd(xsd))
    assert "@entity('order table')" in (tmp_path / "order_model.py").read_text()
    order = module.OrderTable(
        1,
        dt.datetime(2024, 1, 1, tzinfo=dt.UTC),
        uuid.UUID(int=3),
        "n",
        [module.OrderTableParts("a", 1.5)],
    )
    write_xml(module.OrderTable, [order], tmp_path / "o.xml")
    (back,) = read_xml(module.OrderTable, tmp_path / "o.xml", xsd)
    assert dataclasses.astuple(back) == dataclasses.astuple(order)


def test_a_bad_xsd_is_one_error_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.xsd"
    bad.write_text("<root/>")
    result = CliRunner().invoke(cli, ["codegen", str(bad)])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: ") and len(result.stderr.splitlines()) == 1


@pytest.mark.parametrize("name", ["class", "2fast"])
def test_names_python_cannot_use_are_refused_clearly(tmp_path: Path, name: str) -> None:
    xsd = tmp_path / "k.xsd"
    xsd.write_text(DOTNET_XSD.replace('name="small"', f'name="{name}"'))
    result = CliRunner().invoke(cli, ["codegen", str(xsd)])
    assert result.exit_code == 2 and "error: " in result.stderr


@pytest.mark.parametrize(
    "reference",
    [
        '<xs:include schemaLocation="other.xsd"/>',
        '<xs:import namespace="urn:x" schemaLocation="http://127.0.0.1:9/a.xsd"/>',
        '<xs:redefine schemaLocation="other.xsd"/>',
    ],
)
def test_codegen_refuses_what_import_refuses(tmp_path: Path, reference: str) -> None:
    """Issue 29 item 12: an XSD that refers to another schema is refused by codegen as by
    import-xml (one check, in the XSD reader both use), and neither reads the other file."""

    @table("notes")
    @dataclass
    class Note:
        id: int
        text: str

    xml, xsd = tmp_path / "notes.xml", tmp_path / "notes.xsd"
    write_xml(Note, [Note(1, "a")], xml, xsd)
    (tmp_path / "other.xsd").write_text("<not-a-schema/>")  # reading it would fail otherwise
    text = xsd.read_text()
    assert text.count('<xs:element name="DocumentElement"') == 1
    xsd.write_text(
        text.replace(
            '<xs:element name="DocumentElement"',
            reference + '<xs:element name="DocumentElement"',
            1,
        )
    )
    runner = CliRunner()
    outputs = []
    for args in (
        ["codegen", str(xsd)],
        ["import-xml", str(xml), "--xsd", str(xsd), "--db", str(tmp_path / "n.db")],
    ):
        result = runner.invoke(cli, args)
        assert result.exit_code == 2, (args, result.stdout)
        assert result.stdout == "" or args[0] == "import-xml"
        assert "Traceback" not in result.stderr
        outputs.append(result.stderr)
    assert outputs[0] == outputs[1]
    assert "refers to another schema" in outputs[0]
    assert not (tmp_path / "n.db").exists()
    with pytest.raises(XMLImportError, match="refers to another schema"):
        read_xsd(xsd)

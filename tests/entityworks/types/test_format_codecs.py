"""What a type becomes in SQL, Arrow and XML is said by each format's package, through the
``register_codecs`` hook: the type layer builds no codec record and names no codec family's
storage; a registry without a format's makers refuses to build an entry, naming the format;
a plugin's maker for a built-in family changes that format of every type of the family in
the registries made after it, and only that format."""

from __future__ import annotations

import ast
import datetime as dt
import decimal
import enum
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import entityworks
from entityworks import Store, hooks
from entityworks.registry import (
    ArrowCodec,
    SqlCodec,
    TypeRegistry,
    XmlCodec,
)
from entityworks.types import storage
from entityworks.types.default import default_registry, plugin_registry

PACKAGE = Path(entityworks.__file__).parent
RECORDS = {"SqlCodec", "ArrowCodec", "XmlCodec"}


def _records_built(path: Path) -> list[str]:
    """``line: Name(`` for each codec record the module at ``path`` constructs."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            name = ast.unparse(node.func).rsplit(".", 1)[-1]
            if name in RECORDS:
                found.append(f"{path.name}:{node.lineno}: {name}(")
    return found


def test_the_type_layer_builds_no_codec_record() -> None:
    # registry.py builds records only of the flat arguments users pass (kind(**flat))
    modules = sorted((PACKAGE / "types").glob("*.py"))
    assert len(modules) > 8
    assert [line for path in modules for line in _records_built(path)] == []


def test_each_format_builds_its_own_records_only() -> None:
    for package, own in (("sql", "SqlCodec"), ("arrow", "ArrowCodec"), ("xml", "XmlCodec")):
        built = _records_built(PACKAGE / package / "codecs.py")
        assert built, package
        assert {line.rsplit(" ", 1)[1] for line in built} == {f"{own}("}


def test_the_scan_finds_a_record(tmp_path: Path) -> None:
    path = tmp_path / "probe.py"
    path.write_text(
        "from x import SqlCodec\n"
        "A = SqlCodec(column_type=int)\n"
        "B = codecs.XmlCodec('a', str, str)\n",
        encoding="utf-8",
    )
    assert _records_built(path) == ["probe.py:2: SqlCodec(", "probe.py:3: XmlCodec("]


def test_every_built_in_family_has_a_record_in_every_format() -> None:
    families = default_registry().codec_families()
    expected = {
        "bool", "int", "float", "str", "bytes", "Decimal", "datetime", "AwareDatetime",
        "date", "time", "timedelta", "UUID", "enum", "json", "npy",
    }  # fmt: skip
    assert set(families) == expected
    assert set(families.values()) == {("SQL", "Arrow", "XML")}


def test_the_scalars_records_come_from_the_formats() -> None:
    from entityworks.arrow import codecs as arrow_codecs
    from entityworks.sql import codecs as sql_codecs
    from entityworks.xml import codecs as xml_codecs

    registry = default_registry()
    for name, record in sql_codecs.SCALARS.items():
        info = next(i for _k, i in registry.entries() if i.name == name)
        assert info.sql_codec is record
        assert info.arrow_codec is arrow_codecs.SCALARS[name]
        assert info.xml_codec is xml_codecs.SCALARS[name]


def test_a_registry_without_a_format_refuses_to_build_an_entry() -> None:
    registry = TypeRegistry()
    registry.register_codec_maker(ArrowCodec, "int", lambda: ArrowCodec(lambda: None))
    registry.register_codec_maker(XmlCodec, "int", lambda: XmlCodec("xs:long", str, int))
    with pytest.raises(entityworks.UnsupportedTypeError, match="no SQL codec.*'int'"):
        registry.codecs("int")
    with pytest.raises(TypeError, match="SqlCodec, ArrowCodec or XmlCodec"):
        registry.register_codec_maker(str, "int", lambda: None)  # type: ignore[arg-type]
    registry.register_codec_maker(SqlCodec, "int", lambda: XmlCodec("xs:long", str, int))  # type: ignore[arg-type,return-value]
    with pytest.raises(TypeError, match="not a SqlCodec"):
        registry.codecs("int")


def test_a_copy_keeps_the_makers() -> None:
    copied = default_registry().copy()
    assert copied.codec_families() == default_registry().codec_families()
    assert copied.lookup(list[int]).name == "list[int]"


# -- a plugin's maker for a built-in family -------------------------------------------------


def _json_as_bytes(*, dumps: Any, loads: Any) -> SqlCodec:
    """JSON kept as UTF-8 bytes in a binary column (the plugin's own choice)."""
    return SqlCodec(
        column_type=storage.binary,
        encode=lambda value: dumps(value).encode(),
        decode=lambda data: loads(bytes(data).decode()),
    )


class JsonAsBytes:
    @hooks.hookimpl
    def register_codecs(self, registry: TypeRegistry) -> None:
        registry.register_codec_maker(SqlCodec, "json", _json_as_bytes)


@pytest.fixture
def json_as_bytes() -> Iterator[None]:
    manager = hooks.plugin_manager()
    manager.register(JsonAsBytes(), "json-as-bytes")
    try:
        yield
    finally:
        manager.unregister(name="json-as-bytes")


class Colour(enum.Enum):
    RED = "red"


@dataclass
class Shape:
    id: int
    points: list[int]
    meta: dict[str, decimal.Decimal]
    colour: Colour
    at: dt.date


def test_a_plugin_changes_one_format_of_a_family(json_as_bytes: None, tmp_path: Path) -> None:
    registry = plugin_registry()
    info = registry.lookup(list[int])
    assert info.sql_codec.column_type is storage.binary
    # the other formats and the other families as the formats made them
    core = default_registry()
    assert info.xml_codec.xsd_type == core.lookup(list[int]).xml_codec.xsd_type == "xs:string"
    assert core.lookup(list[int]).sql_codec.column_type is storage.json_text
    assert registry.lookup(Colour).sql_codec.column_type is storage.text
    # and a Store of that registry stores and reads it so
    path = tmp_path / "shapes.db"
    shape = Shape(1, [1, 2, 3], {"w": decimal.Decimal("2.50")}, Colour.RED, dt.date(2026, 12, 6))
    with Store(f"sqlite:///{path}", registry=registry) as store:
        store.create(Shape)
        store.insert(shape)
        assert store.get(Shape, 1) == shape
    with sqlite3.connect(path) as raw:
        stored = raw.execute("SELECT typeof(points), points, typeof(colour) FROM shape").fetchone()
    assert stored == ("blob", b"[1,2,3]", "text")


def test_registries_made_after_the_plugin_left_store_json_as_text() -> None:
    manager = hooks.plugin_manager()
    manager.register(JsonAsBytes(), "json-as-bytes")
    assert plugin_registry().lookup(list[int]).sql_codec.column_type is storage.binary
    manager.unregister(name="json-as-bytes")
    assert plugin_registry().lookup(list[int]).sql_codec.column_type is storage.json_text

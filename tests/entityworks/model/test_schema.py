"""Schema inference: names, order, nullability, keys, child tables and the errors."""

import dataclasses
import datetime as dt
from dataclasses import dataclass, field
from typing import Annotated, Union

import pytest

from entityworks import (
    PK,
    InvalidNameError,
    SchemaError,
    UnsupportedTypeError,
    column,
    entity,
    primary_key,
    table,
    table_schema,
)


@dataclass
class LevelMap:
    id: int | None
    name: str
    width: int = 40
    note: str | None = None
    seen: dt.datetime | None = None


def test_names_order_and_nullability():
    s = table_schema(LevelMap)
    assert s.name == "level_map"
    assert s.column_names == ["id", "name", "width", "note", "seen"]
    nullable = {c.name: c.nullable for c in s.columns}
    # a default never makes a column nullable; the key is never NULL in the table
    assert nullable == {"id": False, "name": False, "width": False, "note": True, "seen": True}
    assert s.primary_key.name == "id" and s.primary_key.autoincrement


def test_primary_key_by_metadata_and_by_annotated_marker():
    @dataclass
    class A:
        code: str = primary_key(default="x")
        id: int = 0

    @dataclass
    class B:
        code: Annotated[str, PK]
        id: int

    assert table_schema(A).primary_key.name == "code"
    assert table_schema(B).primary_key.name == "code"
    assert not table_schema(B).column("id").primary_key


def test_table_name_override():
    @table("levels")
    @dataclass
    class Whatever:
        id: int

    @dataclass
    class HTTPLog:
        id: int
        __tablename__ = "logs"

    assert table_schema(Whatever).name == "levels"
    assert table_schema(HTTPLog).name == "logs"


def test_child_tables():
    @dataclass
    class Room:
        x: int
        y: int

    @dataclass
    class Dungeon:
        id: int | None
        rooms: list[Room] = field(default_factory=list)
        tags: list[str] = field(default_factory=list)

    s = table_schema(Dungeon)
    assert s.column_names == ["id", "tags"]  # list[str] is a JSON column, list[Room] a table
    (child,) = s.children
    assert child.field == "rooms" and child.schema.name == "dungeon_rooms"
    assert child.schema.column_names == ["parent_key", "position", "x", "y"]
    assert [c.name for c in child.schema.field_columns] == ["x", "y"]


def test_column_options():
    @dataclass
    class Puzzle:
        id: int | None
        text: str = column(unique=True, max_length=81, default="")

    c = table_schema(Puzzle).column("text")
    assert c.unique and c.max_length == 81


@pytest.mark.parametrize(
    ("annotation", "fragment"),
    [
        (set, "set"),
        (Union[int, str], "only X | None"),  # noqa: UP007 - the old spelling on purpose
        (int | str | None, "only X | None"),
        (complex, "complex"),
    ],
)
def test_unsupported_types_name_class_field_and_type(annotation, fragment):
    cls = dataclasses.make_dataclass("Bad", [("id", int), ("value", annotation)])
    with pytest.raises(UnsupportedTypeError) as info:
        table_schema(cls)
    message = str(info.value)
    assert "Bad.value" in message and fragment in message
    assert info.value.field == "value" and info.value.cls is cls


def test_not_a_dataclass():
    class Plain:
        id: int

    with pytest.raises(SchemaError, match="Plain is not a dataclass"):
        table_schema(Plain)
    with pytest.raises(SchemaError, match="not a dataclass"):
        table_schema(LevelMap(1, "x"))


@pytest.mark.parametrize("name", ["", "a.b", "tab\x00le", "x" * 64, " padded", "sqlite_master"])
def test_names_a_database_cannot_hold(name):
    cls = dataclasses.make_dataclass("Ok", [("id", int)])
    cls.__tablename__ = name
    with pytest.raises(InvalidNameError):
        table_schema(cls)


def test_columns_differing_only_in_case_are_refused():
    cls = dataclasses.make_dataclass("Twins", [("id", int), ("Name", str), ("name", str)])
    with pytest.raises(InvalidNameError, match="differ only in case"):
        table_schema(cls)


def test_two_primary_keys_make_a_composite_key():
    @dataclass
    class Two:
        a: int = primary_key(default=0)
        name: str = ""
        b: int = primary_key(default=0)

    schema = table_schema(Two)
    assert [c.name for c in schema.key_columns] == ["a", "b"]
    assert schema.primary_key is None and schema.composite
    with pytest.raises(SchemaError, match="composite key"):
        schema.require_key("this")

    @dataclass
    class Generated:
        a: int | None = primary_key(default=None)
        b: int = primary_key(default=0)

    with pytest.raises(SchemaError, match="cannot be Optional"):
        table_schema(Generated)


def test_child_of_child_columns():
    @dataclass
    class Leaf:
        v: int

    @dataclass
    class Mid:
        leaves: list[Leaf]

    @dataclass
    class Root:
        id: int
        mids: list[Mid]

    schema = table_schema(Root)
    [mids] = schema.children
    [leaves] = mids.schema.children
    assert leaves.schema.name == "root_mids_leaves"
    assert leaves.schema.column_names == ["parent_key", "position_1", "position", "v"]
    assert [c.name for c in leaves.schema.field_columns] == ["v"]
    assert leaves.schema.root is schema and leaves.schema.depth == 2
    assert [d.name for d in schema.descendants] == ["root_mids", "root_mids_leaves"]


def test_entity_is_table_over_dataclass():
    @entity("parcels", indexes=[("carrier", "grams")], frozen=True)
    class Parcel:
        id: int | None = primary_key()
        carrier: str = column(index=True, max_length=20)  # no default, and neither after it
        grams: int
        note: str = ""

    parcel = Parcel(None, "post", 5)
    assert dataclasses.is_dataclass(Parcel) and parcel.note == ""
    with pytest.raises(dataclasses.FrozenInstanceError):
        parcel.grams = 6  # type: ignore[misc]
    schema = table_schema(Parcel)
    assert schema.name == "parcels" and schema.indexes == (("carrier", "grams"),)
    assert schema.primary_key is not None and schema.primary_key.name == "id"
    assert [(c.name, c.index, c.max_length) for c in schema.columns][:2] == [
        ("id", False, None),
        ("carrier", True, 20),
    ]

    @entity()
    class LooseEnd:
        id: int

    assert table_schema(LooseEnd).name == "loose_end"
    with pytest.raises(TypeError):  # the dataclass rule still holds at run time
        entity()(type("Late", (), {"__annotations__": {"a": int, "b": int}, "a": 1}))

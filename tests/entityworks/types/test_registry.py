"""The type registry: built-ins, user types, lookup order and the errors."""

import dataclasses
import datetime as dt
import enum
import typing
from dataclasses import dataclass

import pytest
import sqlalchemy as sa

from entityworks import AwareDatetime, Store, TypeInfo, TypeRegistry, UnsupportedTypeError
from entityworks.registry import registry, unwrap_optional


class Point:
    """A user type with no registry entry of its own."""

    def __init__(self, x: int, y: int) -> None:
        self.x, self.y = x, y

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Point) and (self.x, self.y) == (other.x, other.y)

    def __repr__(self) -> str:
        return f"Point({self.x}, {self.y})"


def point_info() -> TypeInfo:
    def to_text(p: Point) -> str:
        return f"{p.x},{p.y}"

    def from_text(t: str) -> Point:
        x, y = t.split(",")
        return Point(int(x), int(y))

    return TypeInfo(
        "Point",
        Point,
        sa.Text,
        lambda: __import__("pyarrow").string(),
        "xs:string",
        to_text,
        from_text,
        to_db=to_text,
        from_db=from_text,
        to_arrow=to_text,
        from_arrow=from_text,
    )


def test_user_type_round_trips_through_a_store(tmp_path):
    reg = registry.copy()
    reg.register(point_info())

    @dataclass
    class Marker:
        id: int
        at: Point
        maybe: Point | None = None

    with Store(tmp_path / "p.db", registry=reg) as store:
        store.create(Marker)
        store.insert_many([Marker(1, Point(3, 4)), Marker(2, Point(-1, 0), Point(9, 9))])
        assert store.get(Marker, 2) == Marker(2, Point(-1, 0), Point(9, 9))
        assert [m.id for m in store.select(Marker, where={"at": Point(3, 4)})] == [1]
    # the default registry was not touched
    with pytest.raises(UnsupportedTypeError, match="Point"):
        registry.lookup(Point)


def test_lookup_follows_mro_and_registration_clears_the_memo():
    reg = TypeRegistry()
    base = point_info()
    reg.register(base)

    class Point3(Point):
        pass

    assert reg.lookup(Point3) is base  # through the MRO
    special = dataclasses.replace(base, name="Point3")
    reg.register(special, Point3)
    assert reg.lookup(Point3) is special  # memo cleared by register


def test_factories_newest_first():
    reg = registry.copy()
    seen = []

    def factory(tp, r):
        seen.append(tp)
        return dataclasses.replace(r.lookup(str), name="custom-enum")

    reg.register_factory(lambda tp: isinstance(tp, type) and issubclass(tp, enum.Enum), factory)

    class Mood(enum.Enum):
        OK = "ok"

    assert reg.lookup(Mood).name == "custom-enum" and seen == [Mood]
    assert registry.lookup(Mood).name.endswith("Mood")  # built-in Enum factory


def test_builtins_and_markers():
    assert registry.lookup(int).xsd == "xs:long"
    assert registry.lookup(dt.datetime).name == "datetime"
    assert registry.lookup(AwareDatetime).name == "AwareDatetime"
    assert registry.lookup(list[int]).name.startswith("list")
    with pytest.raises(UnsupportedTypeError, match="register one"):
        registry.lookup(complex)


def test_enum_with_mixed_value_types_is_refused():
    class Mixed(enum.Enum):
        A = 1
        B = "b"

    with pytest.raises(UnsupportedTypeError, match="all of one type"):
        registry.lookup(Mixed)


def test_unwrap_optional_keeps_annotated_markers():
    tp, nullable = unwrap_optional(typing.Optional[AwareDatetime])  # noqa: UP045
    assert nullable and registry.lookup(tp).name == "AwareDatetime"
    assert unwrap_optional(int | None) == (int, True)
    assert unwrap_optional(str) == (str, False)
    with pytest.raises(UnsupportedTypeError):
        unwrap_optional(int | str)

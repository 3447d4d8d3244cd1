"""Every reader builds instances of every kind of dataclass (issue 10, item 8): ``kw_only``,
``slots``, ``frozen``, ``KW_ONLY`` markers, ``field(init=False)`` and ``InitVar``, as parents
and as child-table items. Each class goes through the Store (every backend), Arrow, pandas,
Parquet and XML, and must come back equal. A class that could be written but never rebuilt
(an ``InitVar`` without a default) is refused when its schema is first inferred, before any
table or file exists."""

from __future__ import annotations

import dataclasses
import datetime as dt
from dataclasses import KW_ONLY, InitVar, dataclass, field
from pathlib import Path
from typing import Any

import pytest

from entityworks import (
    SchemaError,
    Store,
    WriteError,
    from_arrow,
    from_pandas,
    read_parquet,
    read_xml,
    table_schema,
    to_arrow,
    to_pandas,
    write_parquet,
    write_xml,
)
from entityworks.model.schema import instance_builder
from entityworks.types.construct import column_getter, fields_getter

STAMP = dt.datetime(2024, 5, 6, 7, 8, 9, 123456)


@dataclass(kw_only=True, frozen=True)
class KwItem:
    x: int
    note: str | None = None


@dataclass(kw_only=True)
class KwOnly:
    id: int
    name: str
    at: dt.datetime
    items: list[KwItem] = field(default_factory=list)


@dataclass(slots=True)
class SlotItem:
    x: int
    y: int


@dataclass(slots=True)
class Slotted:
    id: int
    name: str
    items: list[SlotItem] = field(default_factory=list)


@dataclass(frozen=True)
class Frozen:
    id: int | None  # generated on insert, written back into the frozen instance
    name: str
    at: dt.datetime = STAMP
    items: list[SlotItem] = field(default_factory=list)


@dataclass(kw_only=True, slots=True, frozen=True)
class AllAtOnce:
    id: int
    label: str
    at: dt.datetime
    items: list[KwItem] = field(default_factory=list)


@dataclass
class Marker:
    id: int
    _: KW_ONLY
    name: str
    size: int = 0


@dataclass
class Area:
    w: int
    h: int
    area: int = field(init=False)  # computed by __post_init__, no default

    def __post_init__(self) -> None:
        self.area = self.w * self.h


@dataclass
class Computed:
    id: int
    w: int
    h: int
    area: int = field(init=False)
    checked: bool = field(init=False, default=False)
    rooms: list[Area] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.area = self.w * self.h


@dataclass
class Scaled:
    id: int
    name: str
    scale: InitVar[int] = 1
    weight: int = field(init=False, default=0)

    def __post_init__(self, scale: int) -> None:
        self.weight = len(self.name) * scale


@dataclass
class ChildFirst:  # the child list is not the last field
    id: int
    items: list[SlotItem] = field(default_factory=list)
    _: KW_ONLY
    name: str = "x"


def _computed(i: int) -> Computed:
    c = Computed(i, i + 1, 3, [Area(1, 2), Area(i, 5)])
    c.checked = i % 2 == 0
    return c


SAMPLES: dict[type, list[Any]] = {
    KwOnly: [
        KwOnly(id=i, name=f"k{i}", at=STAMP, items=[KwItem(x=i), KwItem(x=9, note="n")])
        for i in range(3)
    ],
    Slotted: [Slotted(i, f"s{i}", [SlotItem(i, 2)] * (i % 3)) for i in range(3)],
    Frozen: [Frozen(i, f"f{i}", STAMP, [SlotItem(1, i)]) for i in range(1, 4)],
    AllAtOnce: [
        AllAtOnce(id=i, label="a", at=STAMP, items=[KwItem(x=i, note="z")]) for i in range(3)
    ],
    Marker: [Marker(i, name=f"m{i}", size=i * 2) for i in range(3)],
    Computed: [_computed(i) for i in range(3)],
    Scaled: [Scaled(i, "abcd"[: i + 1], scale=10) for i in range(3)],
    ChildFirst: [ChildFirst(i, [SlotItem(i, i)], name=f"c{i}") for i in range(3)],
}
CLASSES = list(SAMPLES)
IDS = [c.__name__ for c in CLASSES]


def _check(got: list[Any], want: list[Any]) -> None:
    assert [type(g) for g in got] == [type(w) for w in want]
    assert got == want
    for g, w in zip(got, want, strict=True):  # init=False fields compare too, but be sure
        assert dataclasses.asdict(g) == dataclasses.asdict(w)


@pytest.mark.parametrize("cls", CLASSES, ids=IDS)
def test_store_reads_back_every_kind(store: Store, cls: type) -> None:
    rows = SAMPLES[cls]
    store.create(cls)
    store.insert_many(rows)
    key = table_schema(cls).primary_key.name  # type: ignore[union-attr]
    _check(sorted(store.select(cls), key=lambda o: getattr(o, key)), rows)
    first = rows[0]
    _check([store.get(cls, getattr(first, key))], [first])
    store.upsert(first)
    _check([store.get(cls, getattr(first, key))], [first])


def test_frozen_instance_gets_its_generated_key(store: Store) -> None:
    store.create(Frozen)
    made = store.insert(Frozen(None, "new", STAMP, [SlotItem(5, 6)]))
    assert isinstance(made.id, int)
    assert store.get(Frozen, made.id) == made


@pytest.mark.parametrize("cls", CLASSES, ids=IDS)
def test_frames_read_back_every_kind(cls: type, tmp_path: Path) -> None:
    rows = SAMPLES[cls]
    _check(from_arrow(cls, to_arrow(cls, rows)), rows)
    _check(from_pandas(cls, to_pandas(cls, rows)), rows)
    write_parquet(cls, rows, tmp_path / "rows.parquet")
    _check(read_parquet(cls, tmp_path / "rows.parquet"), rows)


@pytest.mark.parametrize("cls", CLASSES, ids=IDS)
def test_xml_reads_back_every_kind(cls: type, tmp_path: Path) -> None:
    rows = SAMPLES[cls]
    write_xml(cls, rows, tmp_path / "rows.xml")
    _check(read_xml(cls, tmp_path / "rows.xml"), rows)


def test_store_export_and_import_xml(store: Store, tmp_path: Path) -> None:
    rows = SAMPLES[AllAtOnce]
    store.create(AllAtOnce)
    store.insert_many(rows)
    store.export_xml(AllAtOnce, tmp_path / "a.xml", tmp_path / "a.xsd")
    _check(read_xml(AllAtOnce, tmp_path / "a.xml", tmp_path / "a.xsd"), rows)
    assert store.delete(AllAtOnce, where={}) == 3
    assert store.import_xml(AllAtOnce, tmp_path / "a.xml", tmp_path / "a.xsd") == 3
    _check(sorted(store.select(AllAtOnce), key=lambda o: o.id), rows)
    _check(from_arrow(AllAtOnce, store.to_arrow(AllAtOnce, order_by="id")), rows)


# -- what cannot work is refused up front -------------------------------------------------------


@dataclass
class NeedsSecret:
    id: int
    secret: InitVar[str]
    digest: int = field(init=False, default=0)

    def __post_init__(self, secret: str) -> None:
        self.digest = len(secret)


@dataclass
class Box:
    id: int


@dataclass
class HasBadChild:
    id: int
    items: list[NeedsSecret] = field(default_factory=list)


@pytest.mark.parametrize("cls,field_name", [(NeedsSecret, "secret"), (HasBadChild, "secret")])
def test_initvar_without_default_is_refused_before_anything_is_written(
    store: Store, tmp_path: Path, cls: type, field_name: str
) -> None:
    with pytest.raises(
        SchemaError,
        match=rf"NeedsSecret\.{field_name}: an InitVar without "
        "a default",
    ) as info:
        store.create(cls)
    assert info.value.field == field_name
    assert store.table_names() == []
    files = tmp_path / "files"
    files.mkdir()
    with pytest.raises(SchemaError, match="InitVar"):
        write_parquet(cls, [], files / "x.parquet")
    with pytest.raises(SchemaError, match="InitVar"):
        write_xml(cls, [], files / "x.xml")
    assert not list(files.iterdir())


def test_unset_init_false_field_is_a_clear_write_error(store: Store) -> None:
    @dataclass
    class Lazy:
        id: int
        cache: int = field(init=False)  # nobody sets it

    store.create(Lazy)
    with pytest.raises(WriteError, match=r"row 1.*Lazy\.cache is not set") as info:
        store.insert_many([_lazy(Lazy, 1, 5), Lazy(2)])
    assert info.value.row == 1 and info.value.column == "cache"
    assert store.count(Lazy) == 0


def _lazy(cls: type, i: int, cache: int) -> Any:
    obj = cls(i)
    obj.cache = cache
    return obj


def test_ordinary_classes_keep_the_fast_path() -> None:
    assert instance_builder(Box, ["id"]) is Box
    assert instance_builder(Slotted, ["id", "name", "items"]) is Slotted
    assert instance_builder(Frozen, ["id", "name", "at", "items"]) is Frozen
    assert instance_builder(KwOnly, ["id", "name", "at", "items"]) is not KwOnly
    build = instance_builder(Computed, ["id", "w", "h", "area", "checked", "rooms"])
    made = build(1, 2, 3, 99, True, [])
    assert (made.area, made.checked) == (99, True)  # the stored values, not recomputed ones
    with pytest.raises(SchemaError, match="fields are"):
        instance_builder(Box, ["id", "other"])


class Odd:
    """Attributes a generated getter must read as ``getattr`` does: a property and a name
    Python would mangle inside a class body (the slotted dataclasses above have slots)."""

    def __init__(self) -> None:
        setattr(self, "__private", 1)  # the attribute named exactly "__private"
        self.plain = 2

    @property
    def computed(self) -> int:
        return self.plain * 10


@pytest.mark.parametrize("cls", [*CLASSES, Odd], ids=[*IDS, "Odd"])
def test_fields_getter_reads_what_getattr_reads(cls: type) -> None:
    objs = SAMPLES.get(cls) or [Odd()]
    names = (
        [f.name for f in dataclasses.fields(cls)]
        if dataclasses.is_dataclass(cls)
        else ["__private", "plain", "computed"]
    )
    for obj in objs:
        for chosen in (names, names[:1], names[::-1], []):
            want = tuple(getattr(obj, n) for n in chosen)
            assert fields_getter(tuple(chosen))(obj) == want
    for name in names:
        assert column_getter(name)(objs) == [getattr(o, name) for o in objs]
        assert column_getter(name)(iter(objs)) == [getattr(o, name) for o in objs]
    # a name no lambda can spell falls back to attrgetter, the same values
    thing = type("Thing", (), {})()
    setattr(thing, "not an identifier", 5)
    setattr(thing, "class", 6)
    assert fields_getter(("not an identifier", "class"))(thing) == (5, 6)
    assert fields_getter(("class",))(thing) == (6,)
    assert column_getter("not an identifier")([thing]) == [5]
    assert column_getter("class")([thing, thing]) == [6, 6]
    with pytest.raises(AttributeError):
        fields_getter(("missing",))(thing)
    # an identifier the compiler would normalise ("\ufb01" is the "fi" ligature) must read
    # its own attribute, not the one it normalises to
    ligature = "\ufb01eld"
    setattr(thing, ligature, 7)  # not thing.<name> = 7: source code would normalise it
    thing.field = 8  # type: ignore[attr-defined]
    assert fields_getter((ligature, "field"))(thing) == (7, 8)
    assert column_getter(ligature)([thing]) == [7]


@dataclass(kw_only=True, frozen=True)
class Badge:
    name: str
    level: int = 1
    code: str = field(init=False, default="")

    def __post_init__(self) -> None:
        object.__setattr__(self, "code", f"{self.name}:{self.level}")


@dataclass
class Wearer:
    id: int
    badge: Badge  # a nested dataclass, stored as JSON in one column
    spare: Badge | None = None


def test_nested_dataclass_in_a_column_reads_back(store: Store, tmp_path: Path) -> None:
    rows = [Wearer(1, Badge(name="a", level=3), None), Wearer(2, Badge(name="b"), Badge(name="c"))]
    store.create(Wearer)
    store.insert_many(rows)
    _check(sorted(store.select(Wearer), key=lambda w: w.id), rows)
    _check(from_arrow(Wearer, to_arrow(Wearer, rows)), rows)
    write_xml(Wearer, rows, tmp_path / "w.xml")
    _check(read_xml(Wearer, tmp_path / "w.xml"), rows)


def test_nested_dataclass_needing_an_initvar_is_refused(store: Store) -> None:
    @dataclass
    class Holder:
        id: int
        inner: NeedsSecret

    with pytest.raises(SchemaError, match=r"NeedsSecret\.secret: an InitVar"):
        store.create(Holder)
    assert store.table_names() == []

"""Imports write decoded rows through the Store's encoded-row path (issue 30): XML, a DataSet
and a DiffGram go into the database with no instance of the table's dataclass built per row,
and keep every guarantee: a refused row is named (row, table, column) and nothing is written.
A class whose instances may change or refuse a value (``__post_init__``) is still built."""

from __future__ import annotations

import dataclasses
import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

from entityworks import Store, XMLImportError, column, table, write_xml
from entityworks.model.schema import table_schema
from entityworks.sql.exchange._rows import builds_plainly

ROWS = 300  # a per-row instance would be built at least this many times


@dataclasses.dataclass
class Room:
    name: str
    size: int | None


@dataclasses.dataclass
class House:
    id: int
    street: str
    rooms: list[Room] = dataclasses.field(default_factory=list)


@table("owners")
@dataclasses.dataclass
class Owner:
    id: int
    name: str


@table("pets")
@dataclasses.dataclass
class Pet:
    id: int
    owner: int = column(metadata={"references": "owners.id"})
    name: str = ""


@contextmanager
def built() -> Iterator[Counter[type]]:
    """Count the ``__init__`` calls per class while the block runs (every Python-level
    ``__init__``, a dataclass's included, whoever calls it)."""
    calls: Counter[type] = Counter()
    previous = sys.getprofile()

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code.co_name == "__init__":
            self = frame.f_locals.get("self")
            if self is not None:
                calls[type(self)] += 1

    sys.setprofile(profile)
    try:
        yield calls
    finally:
        sys.setprofile(previous)


def per_row(calls: Counter[type]) -> dict[str, int]:
    """The table classes (ours, and those a DataSet's XSD makes) built once per row or more:
    none should be. (SQLAlchemy's objects and the readers' own bookkeeping, such as a
    DiffGram row's marks, are no instances of a table's class.)"""
    return {
        cls.__qualname__: n
        for cls, n in calls.items()
        if n >= ROWS and (cls in (House, Room, Owner, Pet) or "__tablename__" in cls.__dict__)
    }


def houses() -> list[House]:
    return [
        House(i, f"street {i}", [Room(f"r{i}.{j}", j or None) for j in range(i % 3)])
        for i in range(1, ROWS + 1)
    ]


def test_an_xml_import_builds_no_instance_per_row(store: Store, tmp_path: Path) -> None:
    want = houses()
    write_xml(House, want, tmp_path / "h.xml", tmp_path / "h.xsd")
    with built() as calls:
        assert store.import_xml(House, tmp_path / "h.xml", tmp_path / "h.xsd") == ROWS
    assert calls[House] == 0 and calls[Room] == 0
    assert per_row(calls) == {}
    assert sorted(store.select(House), key=lambda h: h.id) == want


def test_a_refused_xml_row_is_named_and_nothing_is_written(store: Store, tmp_path: Path) -> None:
    """A row the database refuses (its key is taken) is named by its row in the document
    and its column; no row of the document, and no child row, is kept."""
    want = houses()
    write_xml(House, want, tmp_path / "h.xml", tmp_path / "h.xsd")
    store.create(House)
    store.insert(House(7, "taken", [Room("kept", 1)]))
    with built() as calls, pytest.raises(XMLImportError) as info:
        store.import_xml(House, tmp_path / "h.xml", tmp_path / "h.xsd")
    assert calls[House] == 0
    assert (info.value.row, info.value.column) == (7, "id")
    assert str(info.value).startswith("h.xml: row 7, column 'id': ")
    assert list(store.select(House)) == [House(7, "taken", [Room("kept", 1)])]


def test_on_batch_is_handed_the_inserted_rows_as_instances(store: Store, tmp_path: Path) -> None:
    want = houses()[:50]
    write_xml(House, want, tmp_path / "h.xml", tmp_path / "h.xsd")
    handed: list[House] = []
    store.import_xml(House, tmp_path / "h.xml", tmp_path / "h.xsd", on_batch=handed.extend)
    assert handed == want


def dataset(tmp_path: Path, owners: list[Owner], pets: list[Pet], name: str) -> tuple[Path, Path]:
    """A DataSet document of ``owners`` and ``pets`` (and its XSD), written by a Store."""
    source = Store(tmp_path / f"{name}.db")
    try:
        source.create(Owner)
        source.create(Pet)
        source.insert_many(owners)
        source.insert_many(pets)
        xml, xsd = tmp_path / f"{name}.xml", tmp_path / f"{name}.xsd"
        source.export_dataset([Owner, Pet], xml, xsd, dataset="Shelter")
    finally:
        source.close()
    return xml, xsd


def stored(store: Store, name: str) -> list[tuple[Any, ...]]:
    objs: list[Any] = list(store.select(store.reflect(name)))
    return sorted(dataclasses.astuple(o) for o in objs)


def test_a_dataset_import_builds_no_instance_per_row(store: Store, tmp_path: Path) -> None:
    owners = [Owner(i, f"o{i}") for i in range(1, ROWS + 1)]
    pets = [Pet(i, i % ROWS + 1, f"p{i}") for i in range(1, ROWS + 1)]
    xml, xsd = dataset(tmp_path, owners, pets, "all")
    with built() as calls:
        assert store.import_dataset(xml, xsd) == {"owners": ROWS, "pets": ROWS}
    assert per_row(calls) == {}
    assert stored(store, "owners") == [(o.id, o.name) for o in owners]
    assert stored(store, "pets") == [(p.id, p.owner, p.name) for p in pets]


def test_a_refused_dataset_row_is_named_and_nothing_is_written(
    store: Store, tmp_path: Path
) -> None:
    """The second import's owner 5 is in the database already: refused, naming the
    document's row, the table and the column, and neither table gains a row."""
    first = dataset(tmp_path, [Owner(5, "first")], [Pet(1, 5, "kept")], "first")
    store.import_dataset(*first)
    owners = [Owner(i, f"o{i}") for i in range(1, ROWS + 1)]
    pets = [Pet(i, 1, f"p{i}") for i in range(2, ROWS + 1)]
    second = dataset(tmp_path, owners, pets, "second")
    with built() as calls, pytest.raises(XMLImportError) as info:
        store.import_dataset(*second)
    assert per_row(calls) == {}
    assert (info.value.row, info.value.column) == (5, "id")
    assert str(info.value).startswith("second.xml: row 5 of table 'owners', column 'id': ")
    assert stored(store, "owners") == [(5, "first")]
    assert stored(store, "pets") == [(1, 5, "kept")]


def test_a_diffgram_inserts_its_rows_without_instances(store: Store, tmp_path: Path) -> None:
    """The rows of a DiffGram that no stored row has are inserted as decoded values."""
    owners = [Owner(i, f"o{i}") for i in range(1, ROWS + 1)]
    source = Store(tmp_path / "source.db")
    try:
        source.create(Owner)
        source.insert_many(owners)
        source.export_dataset([Owner], tmp_path / "d.xml", tmp_path / "d.xsd", diffgram=True)
    finally:
        source.close()
    store.create(Owner)
    with built() as calls:
        changes = store.import_diffgram(tmp_path / "d.xml", tmp_path / "d.xsd")
    assert changes["owners"].inserted == ROWS
    assert per_row(calls) == {}
    assert sorted(store.select(Owner), key=lambda o: o.id) == owners


# -- a class that checks or changes its values is still built ---------------------------------


@dataclasses.dataclass
class Tag:
    id: int
    name: str

    def __post_init__(self) -> None:
        if self.name.startswith("!"):
            raise ValueError(f"a tag cannot start with '!': {self.name!r}")
        self.name = self.name.strip()


def tags_xml(tmp_path: Path, names: list[str]) -> tuple[Path, Path]:
    made = [Tag(i, "x") for i in range(len(names))]
    for tag, name in zip(made, names, strict=True):
        tag.name = name  # what __post_init__ would not let through
    write_xml(Tag, made, tmp_path / "t.xml", tmp_path / "t.xsd")
    return tmp_path / "t.xml", tmp_path / "t.xsd"


def test_which_classes_are_built_plainly() -> None:
    @dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
    class Frozen:
        id: int

    @dataclasses.dataclass  # its own __init__ is kept
    class Own:
        id: int

        def __init__(self, id: int) -> None:
            self.id = id

    assert builds_plainly(table_schema(House)) and builds_plainly(table_schema(Frozen))
    assert not builds_plainly(table_schema(Tag)) and not builds_plainly(table_schema(Own))


def test_a_class_with_post_init_still_changes_its_values(store: Store, tmp_path: Path) -> None:
    xml, xsd = tags_xml(tmp_path, ["  padded  ", "plain"])
    assert store.import_xml(Tag, xml, xsd) == 2
    assert [t.name for t in store.select(Tag, order_by="id")] == ["padded", "plain"]
    assert store.count(Tag, where={"name": "padded"}) == 1  # stored as the instance holds it


def test_a_class_with_post_init_still_refuses_a_row(store: Store, tmp_path: Path) -> None:
    xml, xsd = tags_xml(tmp_path, ["ok", "!bad"])
    with pytest.raises(ValueError, match="cannot start with '!'"):
        store.import_xml(Tag, xml, xsd)
    assert "tag" not in store.table_names() or store.count(Tag) == 0

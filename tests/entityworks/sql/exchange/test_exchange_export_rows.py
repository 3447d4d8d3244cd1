"""Exports of a class with child lists read decoded rows (issue 30): ``Store.export_xml``
and ``Store.to_arrow`` (and so ``export-xml`` and ``parquet``) build no instance of the class
or of its items per row, and write what the instance path writes: the document and the XSD
byte for byte as :func:`entityworks.write_xml` writes the selected instances, the Arrow table
equal to :func:`entityworks.to_arrow`'s, both read back as the rows that were stored.
``import-xml`` counts its rows and child rows without instances too."""

from __future__ import annotations

import dataclasses
import decimal
import io
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from entityworks import Store, ValueEncodingError, col, read_xml, table, to_arrow, write_xml
from entityworks.arrow.write import write_parquet_table
from entityworks.cli import cli
from entityworks.xml.reader import BATCH

from .test_exchange_encoded import built

#: More rows than a batch of the XML writer and a fetch of the Store, whose boundaries
#: the document follows (a batch's rows, then its child rows).
ROWS = BATCH + 2_001


@dataclasses.dataclass
class Room:
    name: str
    size: int | None
    price: decimal.Decimal | None = None


@dataclasses.dataclass
class Door:
    label: str


@table("houses")
@dataclasses.dataclass
class House:
    id: int
    street: str
    rooms: list[Room] = dataclasses.field(default_factory=list)
    note: str | None = None
    doors: list[Door] = dataclasses.field(default_factory=list)


def houses(n: int = ROWS) -> list[House]:
    return [
        House(
            i,
            f"street <{i}> & co" if i % 7 == 0 else f"street {i}",
            [
                Room(f"r{i}.{j}", j or None, None if j == 1 else decimal.Decimal(f"{i}.{j}5"))
                for j in range(i % 3)
            ],
            None if i % 2 else f"note {i}",
            [Door(f"d{i}")] if i % 5 == 0 else [],
        )
        for i in range(1, n + 1)
    ]


def per_row(calls: Any, rows: int) -> dict[str, int]:
    """The dataclasses built once per row or more (none should be)."""
    return {
        cls.__qualname__: n
        for cls, n in calls.items()
        if n >= rows and dataclasses.is_dataclass(cls)
    }


@pytest.fixture
def filled(store: Store) -> tuple[Store, list[House]]:
    want = houses()
    store.create(House)
    store.insert_many(reversed(want))  # stored out of order: order_by matters
    return store, want


def test_an_xml_export_with_child_rows_builds_no_instance(
    filled: tuple[Store, list[House]], tmp_path: Path
) -> None:
    store, want = filled
    told: list[int] = []
    with built() as calls:
        n = store.export_xml(
            House, tmp_path / "a.xml", tmp_path / "a.xsd", order_by="id", progress=told.append
        )
    assert n == ROWS and sum(told) == ROWS
    assert calls[House] == 0 and calls[Room] == 0 and calls[Door] == 0
    assert per_row(calls, ROWS // 10) == {}
    # the oracle: the instance path, write_xml of the selected instances
    write_xml(
        House, list(store.select(House, order_by="id")), tmp_path / "b.xml", tmp_path / "b.xsd"
    )
    assert (tmp_path / "a.xml").read_bytes() == (tmp_path / "b.xml").read_bytes()
    assert (tmp_path / "a.xsd").read_bytes() == (tmp_path / "b.xsd").read_bytes()
    # and the rows that were stored, read back
    assert read_xml(House, tmp_path / "a.xml", tmp_path / "a.xsd") == want


def test_an_xml_export_with_child_rows_keeps_its_options(
    filled: tuple[Store, list[House]], tmp_path: Path
) -> None:
    """A filter, an order, a dataset name and an inline schema, into a stream."""
    store, want = filled
    where = col("id") <= 40
    ours, theirs = io.BytesIO(), io.BytesIO()
    stream: Any = ours  # Store.export_xml takes a binary stream too, as export-xml gives it
    with built() as calls:
        store.export_xml(
            House, stream, where=where, order_by="-id", dataset="Town", inline_schema=True
        )
    assert calls[House] == 0 and calls[Room] == 0
    objs = list(store.select(House, where=where, order_by="-id"))
    assert [h.id for h in objs] == list(range(40, 0, -1))
    write_xml(House, objs, theirs, dataset="Town", inline_schema=True)
    assert ours.getvalue() == theirs.getvalue()
    (tmp_path / "t.xml").write_bytes(ours.getvalue())
    assert read_xml(House, tmp_path / "t.xml") == want[:40][::-1]


def test_an_empty_export_with_child_rows(store: Store, tmp_path: Path) -> None:
    store.create(House)
    assert store.export_xml(House, tmp_path / "a.xml", tmp_path / "a.xsd") == 0
    write_xml(House, [], tmp_path / "b.xml", tmp_path / "b.xsd")
    assert (tmp_path / "a.xml").read_bytes() == (tmp_path / "b.xml").read_bytes()
    assert store.to_arrow(House).equals(to_arrow(House, []), check_metadata=True)


def test_an_arrow_export_with_child_rows_builds_no_instance(
    filled: tuple[Store, list[House]], tmp_path: Path
) -> None:
    store, want = filled
    told: list[int] = []
    with built() as calls:
        got = store.to_arrow(House, order_by="id", progress=told.append)
    assert sum(told) == ROWS
    assert calls[House] == 0 and calls[Room] == 0 and calls[Door] == 0
    assert per_row(calls, ROWS // 10) == {}
    # the oracles: to_arrow of the selected instances, and of the rows that were stored
    oracle = to_arrow(House, list(store.select(House, order_by="id")))
    assert got.equals(oracle, check_metadata=True)
    assert got.equals(to_arrow(House, want), check_metadata=True)
    # a decimal column's type is fitted to all of its values, child rows' too
    price = got.schema.field("rooms").type.value_type.field("price").type.field("value")
    assert (price.type.precision, price.type.scale) == (len(str(ROWS)) + 2, 2)
    write_parquet_table(got, tmp_path / "a.parquet")
    write_parquet_table(oracle, tmp_path / "b.parquet")
    assert pq.read_table(tmp_path / "a.parquet").equals(pq.read_table(tmp_path / "b.parquet"))


def test_a_value_xml_cannot_hold_names_the_row_that_owns_it(store: Store, tmp_path: Path) -> None:
    """A child row's value refused on the way out is told by its owner's row and its item,
    as the instance path tells it; no file is left."""
    store.create(House)
    store.insert_many(
        [
            House(1, "a", [Room("ok", 1)]),
            House(2, "b", [Room("ok", 1), Room("bad \x01", 2)], doors=[Door("x")]),
        ]
    )
    with pytest.raises(ValueEncodingError) as ours:
        store.export_xml(House, tmp_path / "a.xml", tmp_path / "a.xsd", order_by="id")
    with pytest.raises(ValueEncodingError) as theirs:
        write_xml(House, list(store.select(House, order_by="id")), tmp_path / "b.xml")
    assert str(ours.value) == str(theirs.value)
    assert (
        (ours.value.row, ours.value.column)
        == (1, "name")
        == (theirs.value.row, theirs.value.column)
    )
    assert "rooms[1]" in str(ours.value)
    assert not (tmp_path / "a.xml").exists() and not (tmp_path / "a.xsd").exists()


# -- a class that changes its values is read as instances, as before ---------------------------


@dataclasses.dataclass
class Trimmed:
    id: int
    name: str
    rooms: list[Room] = dataclasses.field(default_factory=list)

    def __post_init__(self) -> None:
        self.name = self.name.upper()


def test_a_class_with_post_init_exports_its_instances(store: Store, tmp_path: Path) -> None:
    store.create(Trimmed)
    store.insert_many([Trimmed(i, f"n{i}", [Room("r", i)]) for i in range(1, 4)])
    store.export_xml(Trimmed, tmp_path / "a.xml", order_by="id")
    objs = list(store.select(Trimmed, order_by="id"))
    write_xml(Trimmed, objs, tmp_path / "b.xml")
    assert (tmp_path / "a.xml").read_bytes() == (tmp_path / "b.xml").read_bytes()
    assert store.to_arrow(Trimmed, order_by="id").equals(to_arrow(Trimmed, objs))


# -- the Store's rows with their child rows ----------------------------------------------------


@dataclasses.dataclass
class Cell:
    x: int


@dataclasses.dataclass
class Corridor:
    name: str
    cells: list[Cell] = dataclasses.field(default_factory=list)


@table("dungeons")
@dataclasses.dataclass
class Dungeon:
    id: int
    corridors: list[Corridor] = dataclasses.field(default_factory=list)


def test_rows_with_children_gives_what_select_builds(store: Store) -> None:
    """Children of children too, by their field path; each list as the instances hold it."""
    want = [
        Dungeon(i, [Corridor(f"c{i}.{j}", [Cell(k) for k in range(j)]) for j in range(i % 4)])
        for i in range(1, 60)
    ]
    store.create(Dungeon)
    store.insert_many(want)
    rows: list[tuple[Any, ...]] = []
    corridors: list[list[tuple[Any, ...]]] = []
    cells: list[list[tuple[Any, ...]]] = []
    for batch, children in store.rows_with_children(Dungeon, order_by="id"):
        assert set(children) == {"corridors", "corridors.cells"}
        rows += batch
        corridors += children["corridors"]
        cells += children["corridors.cells"]
    assert rows == [(d.id,) for d in want]
    assert corridors == [[(d.id, j, c.name) for j, c in enumerate(d.corridors)] for d in want]
    assert cells == [
        [(d.id, j, k, cell.x) for j, c in enumerate(d.corridors) for k, cell in enumerate(c.cells)]
        for d in want
    ]


# -- import-xml counts rows and child rows without instances -----------------------------------


def test_import_xml_counts_its_child_rows_without_instances(
    backend_url: str, tmp_path: Path
) -> None:
    want = houses(3_000)
    write_xml(House, want, tmp_path / "h.xml", tmp_path / "h.xsd")
    with built() as calls:
        result = CliRunner().invoke(
            cli, ["import-xml", str(tmp_path / "h.xml"), "--no-progress", "--db", backend_url]
        )
    assert result.exit_code == 0, result.output
    rooms = sum(len(h.rooms) for h in want)
    doors = sum(len(h.doors) for h in want)
    assert (
        f"imported 3000 rows from {tmp_path / 'h.xml'} into houses, "
        f"{rooms} rows of houses_rooms, {doors} rows of houses_doors" in result.stdout
    )
    assert per_row(calls, 1_000) == {}
    with Store(backend_url) as store:
        assert store.count(store.reflect("houses_rooms")) == rooms


def test_store_import_xml_tells_on_rows_its_counts_without_instances(
    store: Store, tmp_path: Path
) -> None:
    want = houses()
    write_xml(House, want, tmp_path / "h.xml", tmp_path / "h.xsd")
    told: list[tuple[int, dict[str, int]]] = []
    with built() as calls:
        count = store.import_xml(
            House, tmp_path / "h.xml", on_rows=lambda n, children: told.append((n, dict(children)))
        )
    assert count == ROWS == sum(n for n, _c in told)
    assert len(told) > 1  # batch by batch, as a progress bar wants it
    assert per_row(calls, 1_000) == {}
    told_children: dict[str, int] = {}
    for _n, children in told:
        for name, rows in children.items():
            told_children[name] = told_children.get(name, 0) + rows
    assert told_children == {
        "houses_rooms": sum(len(h.rooms) for h in want),
        "houses_doors": sum(len(h.doors) for h in want),
    }
    # what was told is what the database holds
    assert store.count(store.reflect("houses_rooms")) == told_children["houses_rooms"]
    assert store.count(store.reflect("houses_doors")) == told_children["houses_doors"]
    assert list(store.select(House, order_by="id")) == want

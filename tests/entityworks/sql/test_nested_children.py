"""Children of children: ``list[Item]`` fields whose items have ``list[...]`` fields."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
import sqlalchemy as sa

from entityworks import SchemaError, Store, ValueEncodingError, WriteError, table
from entityworks.migrate import diff, metadata_for


@dataclass
class Knob:
    color: str
    size: int | None = None


@dataclass
class Door:
    name: str
    knobs: list[Knob] = field(default_factory=list)


@dataclass
class Room:
    x: int
    y: int
    doors: list[Door] = field(default_factory=list)
    tags: list[Knob] = field(default_factory=list)


@table("nc_house")
@dataclass
class House:
    id: int | None
    name: str
    rooms: list[Room] = field(default_factory=list)


def _houses() -> list[House]:
    return [
        House(
            None,
            "a",
            [
                Room(
                    1,
                    2,
                    [Door("front", [Knob("red", 1), Knob("blue")]), Door("back")],
                    [Knob("tag")],
                ),
                Room(3, 4),
            ],
        ),
        House(None, "b"),
        House(None, "c", [Room(5, 6, [Door("only", [Knob("green", 3)])])]),
    ]


def test_nested_round_trip(store: Store) -> None:
    store.create(House)
    names = set(store.table_names())
    assert {
        "nc_house",
        "nc_house_rooms",
        "nc_house_rooms_doors",
        "nc_house_rooms_doors_knobs",
        "nc_house_rooms_tags",
    } <= names
    with store.engine.connect() as conn:
        inspector = sa.inspect(conn)
        pk = inspector.get_pk_constraint("nc_house_rooms_doors_knobs")["constrained_columns"]
        [fk] = inspector.get_foreign_keys("nc_house_rooms_doors_knobs")
    assert pk == ["parent_key", "position_1", "position_2", "position"]
    assert fk["referred_table"] == "nc_house_rooms_doors"
    assert fk["constrained_columns"] == ["parent_key", "position_1", "position_2"]
    assert fk["referred_columns"] == ["parent_key", "position_1", "position"]

    houses = _houses()
    store.insert_many(houses)
    assert list(store.select(House, order_by="id")) == houses
    assert store.get(House, houses[0].id) == houses[0]
    # update and upsert replace every level
    houses[0].rooms[0].doors[0].knobs = [Knob("gold", 9)]
    houses[0].rooms.append(Room(7, 8, [Door("new", [Knob("x")])]))
    store.update(houses[0])
    assert store.get(House, houses[0].id) == houses[0]
    houses[2].rooms = []
    store.upsert(houses[2])
    assert store.get(House, houses[2].id) == houses[2]
    # delete takes every level with it
    store.delete(houses[0])
    assert store.delete(House, where={"name": "b"}) == 1
    with store.engine.connect() as conn:
        for name in ("nc_house_rooms", "nc_house_rooms_doors", "nc_house_rooms_doors_knobs"):
            assert (
                conn.execute(sa.select(sa.func.count()).select_from(sa.table(name))).scalar_one()
                == 0
            )
    assert list(store.select(House)) == [houses[2]]


def test_nested_write_error_names_the_parent_row(store: Store) -> None:
    store.create(House)
    bad = _houses()
    bad[2].rooms[0].doors[0].knobs.append(Knob(42))  # type: ignore[arg-type]
    with pytest.raises(ValueEncodingError) as err:
        store.insert_many(bad)
    assert err.value.row == 2 and err.value.column == "color"
    bad[2].rooms[0].doors[0].knobs[-1] = "not a knob"  # type: ignore[call-overload]
    with pytest.raises(WriteError, match="is a str, not a Knob"):
        store.insert_many(bad)
    assert store.count(House) == 0
    with store.engine.connect() as conn:
        assert (
            conn.execute(
                sa.select(sa.func.count()).select_from(sa.table("nc_house_rooms_doors"))
            ).scalar_one()
            == 0
        )


def test_nested_migrations(backend_url: str) -> None:
    metadata = metadata_for(House)
    assert "nc_house_rooms_doors_knobs" in metadata.tables
    with Store(backend_url) as store:
        store.create(House)
        assert diff(store, House) == []


def test_formats_with_one_level_refuse_nested(tmp_path) -> None:
    from entityworks.xml.xsd import write_xsd

    with pytest.raises(SchemaError, match="one level of child tables"):
        write_xsd(House, tmp_path / "h.xsd")
    assert not (tmp_path / "h.xsd").exists()
    pytest.importorskip("pyarrow")
    from entityworks.arrow import to_arrow

    with pytest.raises(SchemaError, match="one level of child tables"):
        to_arrow(House, _houses())


@dataclass
class Shelf:
    label: str
    books: list[Knob] | None = None


@table("nc_case")
@dataclass
class Case:
    id: int
    shelves: list[Shelf] | None = None
    spares: list[Knob] | None = field(default_factory=list)


def test_optional_child_lists_keep_none_apart_from_empty(store: Store) -> None:
    store.create(Case)
    cases = [
        Case(1),
        Case(2, [], None),
        Case(3, [Shelf("a"), Shelf("b", []), Shelf("c", [Knob("k", 1)])], [Knob("s")]),
        Case(4, None, []),
    ]
    store.insert_many(cases)
    back = list(store.select(Case, order_by="id"))
    assert back == cases
    assert [c.shelves for c in back[:2]] == [None, []]
    assert back[0].spares == [] and back[1].spares is None
    assert back[2].shelves[0].books is None and back[2].shelves[1].books == []
    assert store.count(Case, where={"shelves": None}) == 2
    cases[1].shelves = None
    cases[3].shelves = [Shelf("d", None)]
    store.update(cases[1])
    store.upsert(cases[3])
    assert list(store.select(Case, order_by="id")) == cases
    with pytest.raises(ValueEncodingError, match="expected a list"):
        store.insert(Case(5, "shelf"))  # type: ignore[arg-type]
    assert store.get(Case, 5) is None


def test_formats_refuse_optional_child_lists(tmp_path) -> None:
    from entityworks.xml.xsd import write_xsd

    with pytest.raises(SchemaError, match="Optional child list"):
        write_xsd(Case, tmp_path / "c.xsd")


@table("nc_hall")
@dataclass
class Hall:
    """A table of its generated key alone: every other field is a child list."""

    id: int | None
    doors: list[Door]


def test_a_table_of_its_generated_key_alone_takes_new_keys(store: Store) -> None:
    """MariaDB turned ``VALUES (DEFAULT), (DEFAULT)`` into two rows of key 0 (a duplicate)."""
    store.create(Hall)
    halls = [Hall(None, [Door("a")]), Hall(None, []), Hall(None, [Door("b"), Door("c")])]
    assert store.insert_many(halls) == 3
    one = store.insert(Hall(None, [Door("d", [Knob("red")])]))
    keys = [h.id for h in halls] + [one.id]
    assert all(isinstance(k, int) and k > 0 for k in keys) and len(set(keys)) == 4
    assert sorted(store.select(Hall), key=lambda h: h.id) == sorted(
        [*halls, one], key=lambda h: h.id
    )

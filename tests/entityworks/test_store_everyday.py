"""The everyday Store API of issue 14 on every backend: update by filter, projections of a
few columns, bringing one's own Engine, engine options and SQL logging."""

from __future__ import annotations

import datetime as dt
import decimal
import math
from dataclasses import dataclass, field

import pytest

from entityworks import (
    AwareDatetime,
    EntityworksError,
    Store,
    UnknownColumnError,
    ValueEncodingError,
    WriteError,
    col,
    column,
)

UTC_PLUS_2 = dt.timezone(dt.timedelta(hours=2))


@dataclass
class Tag:
    label: str


@dataclass
class Item:
    id: int | None
    name: str = column(unique=True, max_length=40)
    price: decimal.Decimal = decimal.Decimal("0")
    weight: float = 0.0
    seen: AwareDatetime | None = None
    note: str | None = None
    active: bool = True
    tags: list[Tag] = field(default_factory=list)


def _items() -> list[Item]:
    return [Item(None, f"item-{i}", decimal.Decimal(f"{i}.5"), float(i), note=None,
                 tags=[Tag(f"t{i}")]) for i in range(6)]


def _snapshot(store: Store) -> list[Item]:
    return list(store.select(Item, order_by="id"))


@pytest.fixture
def items(store: Store) -> Store:
    store.create(Item)
    store.insert_many(_items())
    return store


# -- update(Model, values=..., where=...) ------------------------------------------------------
def test_update_by_filter_sets_exact_values_on_matching_rows(items: Store) -> None:
    before = _snapshot(items)
    seen = dt.datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=UTC_PLUS_2)
    count = items.update(Item, values={"price": decimal.Decimal("1.2300"), "weight": -0.0,
                                       "seen": seen, "note": "cheap", "active": False},
                         where=col("id") <= 3)
    assert count == 3
    after = _snapshot(items)
    for old, new in zip(before, after, strict=True):
        if old.id <= 3:
            assert new.price == decimal.Decimal("1.2300")
            assert new.price.as_tuple() == decimal.Decimal("1.2300").as_tuple()  # exponent kept
            assert new.weight == 0.0 and math.copysign(1.0, new.weight) < 0
            assert new.seen == seen and new.seen.utcoffset() == dt.timedelta(hours=2)
            assert (new.note, new.active, new.name, new.tags) == ("cheap", False, old.name,
                                                                  old.tags)
        else:
            assert new == old


def test_update_by_filter_reads_back_like_an_inserted_row(items: Store) -> None:
    values = {"price": decimal.Decimal("-12.34500"), "seen": dt.datetime(
        2001, 2, 3, 4, 5, 6, tzinfo=dt.timezone(dt.timedelta(hours=-9, minutes=-30)))}
    items.update(Item, values=values, where={"name": "item-2"})
    inserted = items.insert(Item(None, "fresh", **values))  # type: ignore[arg-type]
    updated = items.select(Item, where={"name": "item-2"})
    [row] = list(updated)
    [fresh] = list(items.select(Item, where={"id": inserted.id}))
    assert (row.price.as_tuple(), row.seen, row.seen.utcoffset()) == (
        fresh.price.as_tuple(), fresh.seen, fresh.seen.utcoffset())


def test_update_by_filter_counts_matched_rows_even_when_unchanged(items: Store) -> None:
    assert items.update(Item, values={"active": True}, where={"active": True}) == 6
    assert items.update(Item, values={"note": "x"}, where=col("name") == "none") == 0


def test_update_every_row_needs_an_explicit_empty_filter(items: Store) -> None:
    with pytest.raises(EntityworksError, match="where="):
        items.update(Item, values={"note": "all"})  # type: ignore[call-overload]
    assert items.count(Item, where={"note": "all"}) == 0
    assert items.update(Item, values={"note": "all"}, where={}) == 6
    assert items.count(Item, where={"note": "all"}) == 6


@pytest.mark.parametrize(("values", "column_name"), [
    ({"note": "ok", "weight": "heavy"}, "weight"),
    ({"price": 1.5}, "price"),                      # a float is not an exact Decimal
    ({"active": 1}, "active"),
    ({"name": None}, "name"),                       # NOT NULL
    ({"seen": dt.datetime(2020, 1, 1)}, "seen"),   # naive in an aware column
])
def test_update_refuses_a_wrong_value_naming_its_column(items: Store, values: dict,
                                                        column_name: str) -> None:
    before = _snapshot(items)
    with pytest.raises(ValueEncodingError, match=repr(column_name)) as info:
        items.update(Item, values=values, where={})
    assert info.value.column == column_name
    assert _snapshot(items) == before


def test_update_refuses_unknown_columns_the_key_and_child_tables(items: Store) -> None:
    before = _snapshot(items)
    with pytest.raises(UnknownColumnError, match="'colour'"):
        items.update(Item, values={"note": "x", "colour": "red"}, where={})
    with pytest.raises(UnknownColumnError):
        items.update(Item, values={"note": "x"}, where={"colour": "red"})
    with pytest.raises(WriteError, match="primary key") as key:
        items.update(Item, values={"id": 99}, where={"id": 1})
    assert key.value.column == "id"
    with pytest.raises(WriteError, match="child table") as child:
        items.update(Item, values={"tags": []}, where={})
    assert child.value.column == "tags"
    with pytest.raises(EntityworksError, match="non-empty dict"):
        items.update(Item, values={}, where={})
    with pytest.raises(EntityworksError, match="for a class"):
        items.update(before[0], values={"note": "x"})  # type: ignore[call-overload]
    assert _snapshot(items) == before


def test_update_refused_by_the_database_writes_nothing(items: Store) -> None:
    before = _snapshot(items)
    with pytest.raises(WriteError, match="nothing was written") as info:
        items.update(Item, values={"name": "same", "note": "changed"}, where=col("id") <= 2)
    assert info.value.column == "name"
    assert _snapshot(items) == before


def test_update_by_filter_is_atomic_inside_a_transaction(items: Store) -> None:
    before = _snapshot(items)
    with items.transaction():
        assert items.update(Item, values={"note": "kept"}, where={"id": 1}) == 1
        with pytest.raises(WriteError):
            items.update(Item, values={"name": "same"}, where={})
        assert [i.note for i in items.select(Item, order_by="id")][:2] == ["kept", None]
    assert items.get(Item, 1).note == "kept"
    with pytest.raises(RuntimeError), items.transaction():
        items.update(Item, values={"note": "gone"}, where={})
        raise RuntimeError
    assert [i.note for i in _snapshot(items)] == ["kept"] + [None] * 5
    assert [i.tags for i in _snapshot(items)] == [i.tags for i in before]


def test_update_of_one_instance_still_works(items: Store) -> None:
    obj = items.get(Item, 2)
    obj.note = "one"
    obj.tags = [Tag("a"), Tag("b")]
    assert items.update(obj) is None
    assert items.get(Item, 2) == obj

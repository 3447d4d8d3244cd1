"""``column(name=...)``: a column called otherwise in the database than its field."""

from __future__ import annotations

import datetime as dt
import decimal
from dataclasses import dataclass

import pytest
import sqlalchemy as sa

from entityworks import (
    AwareDatetime,
    Store,
    WriteError,
    col,
    column,
    primary_key,
    table,
)
from entityworks.migrate import apply, describe, diff


@table("cn_owner")
@dataclass
class Owner:
    code: str = primary_key(name="Owner Code", max_length=10)
    label: str = ""


@table("cn_item", unique=[("shelf", "slot")], indexes=[("shelf", "price")])
@dataclass
class Item:
    id: int | None = primary_key(name="item_id", default=None)
    owner: str = column(references=Owner, name="owner_code", default="")
    shelf: str = column(name="shelf_name", default="")
    slot: int = column(name="slot_no", default=0)
    price: decimal.Decimal = column(name="unit_price", default=decimal.Decimal("0.00"))
    seen: AwareDatetime | None = column(name="seen_at", default=None)
    note: str | None = column(name="remark", unique=True, default=None)


UTC2 = dt.timezone(dt.timedelta(hours=2))


def _items() -> list[Item]:
    return [
        Item(
            None,
            "o1",
            "A",
            1,
            decimal.Decimal("1.50"),
            dt.datetime(2026, 1, 1, 12, 0, tzinfo=UTC2),
            "first",
        ),
        Item(None, "o1", "A", 2, decimal.Decimal("-0.10"), None, None),
        Item(None, "o2", "B", 1, decimal.Decimal("7"), None, "third"),
    ]


def test_sql_names_differ_python_names_stay(store: Store) -> None:
    store.create(Item)
    with store.engine.connect() as conn:
        inspector = sa.inspect(conn)
        names = [c["name"] for c in inspector.get_columns("cn_item")]
        owner_names = [c["name"] for c in inspector.get_columns("cn_owner")]
        [fk] = inspector.get_foreign_keys("cn_item")
        pk = inspector.get_pk_constraint("cn_item")["constrained_columns"]
    assert {"item_id", "owner_code", "shelf_name", "slot_no", "unit_price", "remark"} <= set(names)
    assert "seen_at" in names and not {"id", "owner", "shelf", "note"} & set(names)
    assert "Owner Code" in owner_names and pk == ["item_id"]
    assert fk["constrained_columns"] == ["owner_code"]
    assert fk["referred_columns"] == ["Owner Code"]

    store.insert_many([Owner("o1", "one"), Owner("o2", "two")])
    items = _items()
    store.insert_many(items)
    assert [i.id for i in items] == [1, 2, 3]
    assert list(store.select(Item, order_by="id")) == items
    assert store.get(Item, 2) == items[1]
    # filters, order, relations, projections and updates by field name
    assert [i.id for i in store.select(Item, where=(col("shelf") == "A") & {"note": None})] == [2]
    assert [i.id for i in store.select(Item, order_by=["-price"])] == [3, 1, 2]
    assert store.count(Item, where={"owner.label": "two"}) == 1
    assert list(store.select(Item, columns=["shelf", "slot"], where={"id": 3})) == [("B", 1)]
    assert store.update(Item, values={"note": "edited"}, where={"slot": 2}) == 1
    items[1].note = "edited"
    items[0].price = decimal.Decimal("2.250")
    store.update(items[0])
    store.upsert(Item(3, "o2", "C", 9, decimal.Decimal("8"), None, "third"))
    assert list(store.select(Item, order_by="id")) == [
        items[0],
        items[1],
        Item(3, "o2", "C", 9, decimal.Decimal("8"), None, "third"),
    ]
    # errors name the field
    with pytest.raises(WriteError) as err:
        store.insert(Item(None, "o1", "Z", 1, note="first"))
    assert err.value.column == "note"
    with pytest.raises(WriteError) as err:
        store.insert(Item(None, "nobody"))
    assert err.value.column == "owner"
    assert store.delete(Item(3, "o2")) == 1
    assert store.count(Item) == 2
    # the schema matches what it created
    assert diff(store, Item) == []


def test_arrow_and_xml_use_field_names(tmp_path) -> None:
    pytest.importorskip("pyarrow")
    with Store(tmp_path / "x.db") as store:
        store.create(Item)
        store.insert_many([Owner("o1", "one"), Owner("o2", "two")])
        store.insert_many(_items())
        frame = store.to_arrow(Item)
        assert frame.column_names[:3] == ["id", "owner", "shelf"]
        store.export_xml(Item, tmp_path / "items.xml", tmp_path / "items.xsd")
        text = (tmp_path / "items.xml").read_text(encoding="utf-8")
        assert "<shelf>A</shelf>" in text and "shelf_name" not in text
        store.delete(Item, where={})
        assert store.import_xml(Item, tmp_path / "items.xml", tmp_path / "items.xsd") == 3
        assert list(store.select(Item, order_by="id")) == _items_with_ids()


def _items_with_ids() -> list[Item]:
    items = _items()
    for n, item in enumerate(items, 1):
        item.id = n
    return items


@table("cn_level")
@dataclass
class LevelV1:
    id: int
    note: str | None = None


@table("cn_level")
@dataclass
class LevelV2:  # the field is renamed; the column keeps its name: nothing to migrate
    id: int
    remark: str | None = column(name="note", default=None)


@table("cn_level")
@dataclass
class LevelV3:  # now the column is renamed too
    id: int
    remark: str | None = column(name="memo", default=None)


def test_renames_and_schema_diff(backend_url: str) -> None:
    with Store(backend_url) as store:
        store.create(LevelV1)
        store.insert_many([LevelV1(1, "a"), LevelV1(2, None)])
        assert diff(store, LevelV2) == []
        assert [lv.remark for lv in store.select(LevelV2, order_by="id")] == ["a", None]
        ops = diff(store, LevelV3, renames={"note": "memo"})
        assert [type(o).__name__ for o in ops] == ["AlterColumnOp"]
        # the new name may be the field's too (its column is the one column(name=) says)
        again = diff(store, LevelV3, renames={"note": "remark"})
        assert [describe(o) for o in again] == [describe(o) for o in ops]
        assert "rename to memo" in describe(ops[0])
        apply(store, LevelV3, renames={"note": "memo"})
    with Store(backend_url) as store:
        assert diff(store, LevelV3) == []
        assert list(store.select(LevelV3, order_by="id")) == [LevelV3(1, "a"), LevelV3(2)]


def test_clashing_sql_names_refused() -> None:
    from entityworks import InvalidNameError, table_schema

    @dataclass
    class Clash:
        id: int
        a: int = column(name="b", default=0)
        b: int = 0

    with pytest.raises(InvalidNameError, match="'b'"):
        table_schema(Clash)
    with pytest.raises(InvalidNameError):
        column(name="bad.name")

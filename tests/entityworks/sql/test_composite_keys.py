"""Composite primary keys and composite unique constraints on every backend."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

import pytest
import sqlalchemy as sa

from entityworks import (
    EntityworksError,
    NotFoundError,
    SchemaError,
    Store,
    WriteError,
    column,
    primary_key,
    table,
)
from entityworks.migrate import diff, metadata_for


@table("ck_stock", unique=[("shelf", "slot")])
@dataclass
class Stock:
    store_code: str = primary_key()
    sku: str = primary_key()
    day: dt.date = primary_key()
    count: int = 0
    shelf: str = ""
    slot: int = 0
    note: str | None = None


def _rows() -> list[Stock]:
    return [
        Stock("s1", "apple", dt.date(2026, 1, 1), 3, "A", 1),
        Stock("s1", "apple", dt.date(2026, 1, 2), 5, "A", 2),
        Stock("s1", "pear", dt.date(2026, 1, 1), 7, "B", 1),
        Stock("s2", "apple", dt.date(2026, 1, 1), 9, "B", 2),
    ]


def test_composite_key_crud(store: Store) -> None:
    store.create(Stock)
    with store.engine.connect() as conn:
        inspector = sa.inspect(conn)
        pk = inspector.get_pk_constraint("ck_stock")["constrained_columns"]
        uniques = [u["column_names"] for u in inspector.get_unique_constraints("ck_stock")]
    assert pk == ["store_code", "sku", "day"]
    assert ["shelf", "slot"] in uniques
    store.insert_many(_rows())
    key = ("s1", "apple", dt.date(2026, 1, 2))
    assert store.get(Stock, key) == _rows()[1]
    assert store.get(Stock, ("s9", "apple", dt.date(2026, 1, 2))) is None
    # update by key
    changed = Stock("s1", "apple", dt.date(2026, 1, 2), 50, "A", 2, "recount")
    store.update(changed)
    assert store.get(Stock, key) == changed
    with pytest.raises(NotFoundError, match="store_code, sku, day"):
        store.update(Stock("s3", "fig", dt.date(2026, 1, 1)))
    # upsert: one row replaced, one new, decided on the whole key
    store.upsert_many(
        [
            Stock("s1", "pear", dt.date(2026, 1, 1), 70, "B", 1),
            Stock("s1", "pear", dt.date(2026, 1, 3), 1, "C", 1),
        ]
    )
    assert store.count(Stock) == 5
    assert store.get(Stock, ("s1", "pear", dt.date(2026, 1, 1))).count == 70
    # delete by instance and by filter
    assert store.delete(changed) == 1
    assert store.get(Stock, key) is None
    assert store.delete(Stock, where={"store_code": "s2"}) == 1
    assert sorted((s.sku, s.day.day) for s in store.select(Stock)) == [
        ("apple", 1),
        ("pear", 1),
        ("pear", 3),
    ]
    back = store.reflect("ck_stock")  # a reflected class keeps the composite key
    assert [c.name for c in store.schema(back).key_columns] == ["store_code", "sku", "day"]


def test_composite_key_refusals(store: Store) -> None:
    store.create(Stock)
    store.insert_many(_rows())
    # a duplicate key: the row and the key's columns are named, nothing is written
    with pytest.raises(WriteError) as err:
        store.insert_many(
            [
                Stock("s3", "fig", dt.date(2026, 1, 1), 1, "Z", 1),
                Stock("s1", "apple", dt.date(2026, 1, 1), 1, "Z", 2),
            ]
        )
    assert err.value.row == 1
    assert store.count(Stock) == 4
    # the composite unique constraint
    with pytest.raises(WriteError) as err:
        store.insert(Stock("s3", "fig", dt.date(2026, 1, 1), 1, "A", 1))
    assert store.count(Stock) == 4
    # upsert decides on the key alone: a row clashing on (shelf, slot) is refused, not merged
    with pytest.raises(WriteError) as err:
        store.upsert(Stock("s3", "fig", dt.date(2026, 1, 1), 1, "A", 2))
    assert store.count(Stock) == 4
    assert store.get(Stock, ("s1", "apple", dt.date(2026, 1, 2))).count == 5
    with pytest.raises(WriteError, match="sku=None"):
        store.upsert(Stock("s1", None, dt.date(2026, 1, 1)))  # type: ignore[arg-type]
    for bad in [("s1", "apple"), "s1", ("s1", "apple", None), ["s1", "apple", dt.date.today()]]:
        with pytest.raises(EntityworksError, match="tuple of 3"):
            store.get(Stock, bad)
    with pytest.raises(EntityworksError):  # a value of the wrong type
        store.get(Stock, ("s1", "apple", "2026-01-01"))


def test_composite_key_migrations(backend_url: str) -> None:
    metadata = metadata_for(Stock)
    assert [c.name for c in metadata.tables["ck_stock"].primary_key] == ["store_code", "sku", "day"]
    with Store(backend_url) as store:
        store.create(Stock)
        assert diff(store, Stock) == []


@dataclass
class Leaf:
    v: int


@dataclass
class WithChildren:
    a: int = primary_key()
    b: int = primary_key()
    leaves: list[Leaf] = field(default_factory=list)


@dataclass
class Pair:
    a: int = primary_key()
    b: int = primary_key()


@dataclass
class ToPair:
    id: int
    pair: int = column(references=Pair, default=0)


def test_composite_shapes_refused() -> None:
    with pytest.raises(SchemaError, match="cannot have child tables"):
        Store("sqlite://").create(WithChildren)
    with pytest.raises(SchemaError, match="composite key"):
        Store("sqlite://").create(ToPair)
    with pytest.raises(SchemaError, match="sequences of column names"):
        table("t", unique=["a", "b"])
    with pytest.raises(SchemaError, match="distinct column names"):
        table("t", unique=[("a", "a")])

    @table("ck_bad", unique=[("a", "nope")])
    @dataclass
    class BadUnique:
        a: int = primary_key()

    with pytest.raises(KeyError, match="nope"):
        Store("sqlite://").create(BadUnique)


def test_composite_key_xsd_keeps_every_key_column(tmp_path) -> None:
    from entityworks.xml.xsd import read_xsd, write_xsd

    path = tmp_path / "stock.xsd"
    write_xsd(Stock, path)
    back = read_xsd(path)
    from entityworks import table_schema

    assert [c.name for c in table_schema(back).key_columns] == ["store_code", "sku", "day"]


def test_composite_key_tables_through_xml_and_arrow(tmp_path) -> None:
    pytest.importorskip("pyarrow")
    from entityworks.arrow import from_arrow

    with Store(tmp_path / "s.db") as store:
        store.create(Stock)
        store.insert_many(_rows())
        assert from_arrow(Stock, store.to_arrow(Stock)) == _rows()
        assert store.export_xml(Stock, tmp_path / "s.xml", tmp_path / "s.xsd") == 4
        store.delete(Stock, where={})
        assert store.import_xml(Stock, tmp_path / "s.xml", tmp_path / "s.xsd") == 4
        assert sorted(store.select(Stock), key=lambda s: (s.store_code, s.sku, s.day)) == sorted(
            _rows(), key=lambda s: (s.store_code, s.sku, s.day)
        )
        # a document repeating a key is refused whole, by the XSD's composite xs:unique
        text = (tmp_path / "s.xml").read_text(encoding="utf-8")
        rows = text.split("<ck_stock>")
        doubled = text.replace(
            "</DocumentElement>",
            "<ck_stock>" + rows[1].split("</ck_stock>")[0] + "</ck_stock></DocumentElement>",
        )
        (tmp_path / "bad.xml").write_text(doubled, encoding="utf-8")
        store.delete(Stock, where={})
        with pytest.raises(EntityworksError, match="duplicate value"):
            store.import_xml(Stock, tmp_path / "bad.xml", tmp_path / "s.xsd")
        assert store.count(Stock) == 0

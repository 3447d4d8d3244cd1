# pyright: strict
"""A user's module as a type checker sees it: checked by mypy --strict and pyright (strict).

It also runs (``test_type_checks.py`` imports and calls :func:`main`), so the field orders it
declares are the ones the runtime accepts, and the types it asserts are the runtime's.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import assert_type

import pandas as pd
import pyarrow as pa

from entityworks import (
    Store,
    col,
    column,
    entity,
    primary_key,
    table,
    table_schema,
    to_arrow,
    to_pandas,
)


@entity("products")
class Product:
    # a key without a default, then fields without one: valid at run time, and for checkers
    # under @entity (a plain @dataclass makes them count any call but dataclasses.field()
    # as a default); max_length: what a MariaDB text key needs
    sku: str = primary_key(max_length=20)
    name: str
    price_cents: int
    note: str | None = column(default=None, max_length=200)
    tags: list[str] = column(default_factory=list[str])  # pyright strict: not bare list


@table("books")
@dataclass
class Book:
    # under a plain @dataclass a key with column options, the fields after it with defaults
    isbn: str = primary_key(max_length=20, name="ISBN")
    title: str = ""


@dataclass
class Order:
    id: int | None = primary_key(default=None)
    product_sku: str = column(default="", index=True)
    quantity: int = 1
    lines: list[Line] = field(default_factory=list["Line"])


@dataclass
class Line:
    text: str = column(default="")


@entity("shipments", indexes=[("carrier", "weight_grams")])
class Shipment:
    # under @entity, column() without a default is no default for checkers either
    id: int | None = primary_key()
    carrier: str = column(index=True, max_length=40)
    weight_grams: int
    insured: bool = False


def main() -> int:
    """Every call a user makes, with the type each returns."""
    store = Store("sqlite://")
    store.create(Product)
    store.create(Order)
    product = store.insert(Product("a-1", "anvil", 1999))
    assert_type(product, Product)
    assert_type(store.insert_many([Product("b-2", "bell", 250, note="loud")]), int)
    order = store.insert(Order(None, "a-1", 2, [Line("fragile")]))
    assert_type(order.id, int | None)
    found = store.get(Product, "a-1")
    assert_type(found, Product | None)
    cheap: Iterator[Product] = store.select(
        Product, where=col("price_cents") < 1000, order_by="name"
    )
    names = [p.name for p in cheap]
    assert_type(store.count(Product), int)
    arrow = store.to_arrow(Product)
    assert_type(arrow, pa.Table)
    frame = to_pandas(Product, [product])
    assert_type(frame, pd.DataFrame)
    assert_type(to_arrow(Order, [order]), pa.Table)
    store.create(Book)
    assert_type(store.insert(Book("b-1", "Lathe")), Book)
    assert_type(store.get(Book, "b-1"), Book | None)
    store.create(Shipment)
    shipment = store.insert(Shipment(None, "post", 1200))
    assert_type(shipment.weight_grams, int)
    assert table_schema(Shipment).column("carrier").index
    return len(names) + arrow.num_rows + len(frame) + store.count(Shipment)

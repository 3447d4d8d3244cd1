"""Decimals mean the same on every backend: keys compare by value, a write keeps the exponent
it was given, and SQLite's column reads as the number in other tools."""

from __future__ import annotations

import decimal
import sqlite3
from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from entityworks import Store, col, column

from .strategies import decimals

D = decimal.Decimal
FAST = settings(max_examples=25, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])


@dataclass
class Price:
    amount: D = field(metadata={"primary_key": True})
    label: str = ""


@dataclass
class Slot:
    shelf: int = field(metadata={"primary_key": True})
    amount: D = field(metadata={"primary_key": True})
    label: str = ""


@dataclass
class Line:
    note: str


@dataclass
class Order:
    amount: D = field(metadata={"primary_key": True})
    lines: list[Line] = field(default_factory=list)


@dataclass
class Refund:
    id: int = field(metadata={"primary_key": True})
    order: D = column(references=Order, on_delete="cascade", default=D(0))


def exact(value: D | None) -> tuple[object, ...] | None:
    """A Decimal with its exponent (``1.5`` and ``1.50`` differ)."""
    return None if value is None else value.as_tuple()


# -- a Decimal key: equal by value, the stored form is the last one written ----------------

def test_upsert_over_an_equal_key_keeps_the_new_exponent(store: Store) -> None:
    store.create(Price)
    store.insert(Price(D("1.5"), "old"))
    store.upsert(Price(D("1.50"), "new"))
    got = store.get(Price, D("1.5"))
    assert got is not None and got.label == "new"
    assert exact(got.amount) == exact(D("1.50"))
    assert store.count(Price) == 1
    store.upsert_many([Price(D("1.500"), "bulk"), Price(D("2"), "two")])
    assert [(exact(p.amount), p.label) for p in store.select(Price, order_by="amount")] == [
        (exact(D("1.500")), "bulk"), (exact(D("2")), "two")]


def test_update_of_an_instance_keeps_the_new_exponent(store: Store) -> None:
    store.create(Price)
    store.insert(Price(D("1.5"), "old"))
    store.update(Price(D("1.50"), "new"))
    got = store.get(Price, D("1.500"))
    assert got is not None and got.label == "new"
    assert exact(got.amount) == exact(D("1.50"))
    with store.transaction():  # the general path (no single-row shortcut)
        store.update(Price(D("1.5000"), "again"))
    [row] = store.select(Price)
    assert exact(row.amount) == exact(D("1.5000")) and row.label == "again"


def test_a_composite_key_with_a_decimal_part(store: Store) -> None:
    store.create(Slot)
    store.insert_many([Slot(1, D("1.5"), "a"), Slot(2, D("1.5"), "b")])
    store.upsert(Slot(1, D("1.50"), "upserted"))
    store.update(Slot(2, D("1.500"), "updated"))
    got = {s.shelf: s for s in store.select(Slot)}
    assert store.count(Slot) == 2
    assert (exact(got[1].amount), got[1].label) == (exact(D("1.50")), "upserted")
    assert (exact(got[2].amount), got[2].label) == (exact(D("1.500")), "updated")
    found = store.get(Slot, (1, D("1.5000")))
    assert found is not None and exact(found.amount) == exact(D("1.50"))


def rescaled(value: D, places: int) -> D:
    """``value`` written with ``places`` digits after the point, or with as few as it needs
    when it needs more (no digit is ever dropped)."""
    sign, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)
    while exponent < 0 and len(digits) > 1 and digits[-1] == 0:
        digits, exponent = digits[:-1], exponent + 1
    if places > -exponent:
        digits, exponent = digits + (0,) * (places + exponent), -places
    return D((sign, digits, exponent))


@st.composite
def equal_pairs(draw: st.DrawFn) -> tuple[D, D]:
    """Two Decimals equal by value, usually with different exponents."""
    first = draw(decimals())
    second = rescaled(first, draw(st.integers(0, 30)))
    assert second == first
    return first, second


@FAST
@given(pairs=st.lists(equal_pairs(), min_size=1, max_size=4))
def test_property_upsert_of_equal_keys_replaces_the_representation(
        store: Store, pairs: list[tuple[D, D]]) -> None:
    store.create(Price)
    store.delete(Price, where={})
    olds = {first: first for first, _ in pairs}  # one row per value
    store.insert_many([Price(v, "old") for v in olds.values()])
    news = {second: second for _, second in pairs}
    store.upsert_many([Price(v, "new") for v in news.values()])
    assert store.count(Price) == len(news)
    for value in news.values():
        got = store.get(Price, value)
        assert got is not None and got.label == "new"
        assert exact(got.amount) == exact(value)


def test_child_rows_and_references_follow_a_decimal_key_by_value(store: Store) -> None:
    store.create(Order)
    store.create(Refund)
    store.insert(Order(D("1.5"), [Line("a"), Line("b")]))
    store.insert(Refund(1, D("1.50")))  # refers to the order by value
    store.upsert(Order(D("1.500"), [Line("c")]))
    [order] = store.select(Order)
    assert exact(order.amount) == exact(D("1.500"))
    assert [line.note for line in order.lines] == ["c"]  # the old child rows went
    store.update(Order(D("1.5"), [Line("d")]))
    got = store.get(Order, D("1.50"))
    assert got is not None and exact(got.amount) == exact(D("1.5"))
    assert [line.note for line in got.lines] == ["d"]
    refund = store.get(Refund, 1)
    assert refund is not None and exact(refund.order) == exact(D("1.50"))
    assert [r.id for r in store.select(Refund, where={"order": D("1.5000")})] == [1]
    store.delete(Order, where={"amount": D("1.50")})
    assert store.count(Order) == 0 and store.count(Refund) == 0  # cascaded by value

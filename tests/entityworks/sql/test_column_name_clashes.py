"""Names that clash, refused or reported the same way on every backend (issue 29 item 12):
a field named like another field's companion column (``price__scale`` beside a Decimal
``price``), two fields sharing one column (``column(name="y")`` beside ``y``), and a row that
breaks a composite UNIQUE constraint, whose error names the constraint's columns."""

from __future__ import annotations

import datetime as dt
import decimal
from dataclasses import dataclass

import pytest

from entityworks import (
    AwareDatetime,
    InvalidNameError,
    Store,
    WriteError,
    column,
    table,
    table_schema,
    to_arrow,
)

D = decimal.Decimal


@dataclass
class ScaleBeside:
    id: int
    price: D = D(0)
    price__scale: int = 0


@dataclass
class KeyBeside:
    id: int
    price: D = D(0)
    price__key: str = ""


@dataclass
class OffsetBeside:
    id: int
    at: AwareDatetime | None = None
    at__offset: int = 0


@dataclass
class SignBeside:
    id: int
    level: float = 0.0
    level__negzero: int = 0


@dataclass
class RenamedBeside:
    id: int
    cost: D = column(name="price", default=D(0))
    price__scale: int = 0


CLASHES = [
    (ScaleBeside, "price", "price__scale"),
    (KeyBeside, "price", "price__key"),
    (OffsetBeside, "at", "at__offset"),
    (SignBeside, "level", "level__negzero"),
    (RenamedBeside, "cost", "price__scale"),
]


@pytest.mark.parametrize(
    ("cls", "owner", "clash"), CLASHES, ids=[c.__name__ for c, _, _ in CLASHES]
)
def test_a_field_named_like_a_companion_is_refused_on_every_backend(
    store: Store, cls: type, owner: str, clash: str
) -> None:
    """Refused when the class becomes a table, whichever backend has that companion, and
    naming both fields; nothing is created."""
    for call in (lambda: store.create(cls), lambda: table_schema(cls), lambda: to_arrow(cls, [])):
        with pytest.raises(InvalidNameError) as caught:
            call()
        assert f"{owner!r}" in str(caught.value) and f"{clash!r}" in str(caught.value)
        assert caught.value.field == clash
    assert store.table_names() == []


def test_an_ordinary_double_underscore_field_is_accepted(store: Store) -> None:
    @dataclass
    class Fine:
        id: int
        price: D = D(0)
        price__note: str = ""
        at__offset: int = 0  # no field ``at``

    store.create(Fine)
    store.insert(Fine(1, D("1.50"), "n", 3))
    got = store.get(Fine, 1)
    assert got is not None and str(got.price) == "1.50" and got.at__offset == 3


# -- two fields, one column -------------------------------------------------------------------


@dataclass
class Shared:
    id: int
    x: int = column(name="y", default=0)
    y: int = 0


@dataclass
class CaseOnly:
    id: int
    y: int = 0
    x: int = column(name="Y", default=0)


def test_two_fields_sharing_a_column_name_both_fields_and_the_column(store: Store) -> None:
    with pytest.raises(InvalidNameError) as caught:
        store.create(Shared)
    message = str(caught.value)
    assert "fields 'x' and 'y'" in message and "column 'y'" in message
    assert "'y' and 'y'" not in message
    with pytest.raises(InvalidNameError) as caught:
        store.create(CaseOnly)
    message = str(caught.value)
    assert "fields 'y' and 'x'" in message and "'y' and 'Y'" in message
    assert "differ only in case" in message
    assert store.table_names() == []


# -- a composite UNIQUE constraint: the error names its columns ------------------------------


@table("pairs", unique=[("a", "b")])
@dataclass
class Pair:
    id: int
    a: int
    b: str = column(name="b_text", default="")


@table("slots")
@dataclass
class Slot:
    shelf: int = column(primary_key=True, default=0)
    place: int = column(primary_key=True, default=0)
    label: str = ""


def test_a_composite_unique_clash_names_its_columns(store: Store) -> None:
    store.create(Pair)
    store.insert(Pair(1, 1, "x"))
    store.insert(Pair(5, 9, "z"))
    attempts = {
        "insert": lambda: store.insert(Pair(2, 1, "x")),
        "insert_many": lambda: store.insert_many([Pair(3, 2, "y"), Pair(4, 1, "x")]),
        "update": lambda: store.update(Pair(5, 1, "x")),
        "upsert": lambda: store.upsert(Pair(6, 1, "x")),
    }
    for name, attempt in attempts.items():
        with pytest.raises(WriteError) as caught:
            attempt()
        assert caught.value.column == "a, b", (name, str(caught.value))
        assert "column 'a, b'" in str(caught.value), name
    assert sorted((p.id, p.a, p.b) for p in store.select(Pair)) == [(1, 1, "x"), (5, 9, "z")]


def test_a_composite_key_clash_names_the_key_columns(store: Store) -> None:
    store.create(Slot)
    store.insert(Slot(1, 2, "a"))
    for attempt in (
        lambda: store.insert(Slot(1, 2, "b")),
        lambda: store.insert_many([Slot(3, 3), Slot(1, 2)]),
    ):
        with pytest.raises(WriteError) as caught:
            attempt()
        assert caught.value.column == "shelf, place", str(caught.value)
    assert [(s.shelf, s.place, s.label) for s in store.select(Slot)] == [(1, 2, "a")]


def test_a_unique_single_column_clash_still_names_that_column(store: Store) -> None:
    @table("tags")
    @dataclass
    class Tag:
        id: int
        code: str = column(unique=True, max_length=20, default="")
        when: dt.date | None = None

    store.create(Tag)
    store.insert(Tag(1, "a"))
    with pytest.raises(WriteError) as caught:
        store.insert(Tag(2, "a"))
    assert caught.value.column == "code"
    assert [t.code for t in store.select(Tag)] == ["a"]

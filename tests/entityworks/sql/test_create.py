"""``Store.create`` is all or nothing on every backend (issue 10, item 12, the MariaDB part):
a ``str`` primary key with a child table works, a failing create leaves no table behind, and
a name MariaDB cannot hold (an emoji) is an :class:`InvalidNameError`, not a server error."""

from __future__ import annotations

from dataclasses import dataclass, field, make_dataclass

import pytest

from entityworks import EntityworksError, InvalidNameError, SchemaError, Store, column, table


@dataclass
class Page:
    n: int
    text: str


@dataclass
class Book:
    title: str = column(primary_key=True)
    pages: list[Page] = field(default_factory=list)


@dataclass
class Chapter:
    code: str = column(primary_key=True, max_length=12)
    pages: list[Page] = field(default_factory=list)


@pytest.mark.parametrize("cls", [Book, Chapter])
def test_str_key_with_a_child_table(store: Store, cls: type) -> None:
    store.create(cls)
    key = "title" if cls is Book else "code"
    rows = [
        cls(**{key: "Caves", "pages": [Page(1, "a"), Page(2, "b")]}),
        cls(**{key: "caves", "pages": [Page(1, "c")]}),
        cls(**{key: "é" * 12, "pages": []}),
    ]
    store.insert_many(rows)
    assert sorted(store.select(cls), key=lambda r: getattr(r, key)) == sorted(
        rows, key=lambda r: getattr(r, key)
    )
    store.upsert(cls(**{key: "caves", "pages": [Page(9, "z")]}))
    assert store.get(cls, "Caves") == rows[0]
    assert store.get(cls, "caves").pages == [Page(9, "z")]
    store.delete(rows[0])
    assert store.count(cls) == 2


#: A child item wider than any of the three databases allows (SQLite: 2,000 columns,
#: PostgreSQL: 1,600, MariaDB's InnoDB: 1,017): its table fails after the parent's was made.
Wide = make_dataclass("Wide", [(f"c{i}", int) for i in range(2100)])


@table("trap")
@dataclass
class Trap:
    id: int
    entries: list[Wide] = field(default_factory=list)  # type: ignore[valid-type]


def test_failing_create_leaves_no_table(store: Store) -> None:
    before = set(store.table_names())
    with pytest.raises(SchemaError, match=r"cannot create table 'trap'.*no table was created"):
        store.create(Trap)
    assert set(store.table_names()) == before
    with store.transaction():  # inside a transaction too (SQLite and PostgreSQL: a savepoint)
        with pytest.raises(EntityworksError):
            store.create(Trap)
    assert set(store.table_names()) == before


@table("niveau_🐉")
@dataclass
class Dragon:
    id: int
    name: str


#: A field name beyond U+FFFF: emoji cannot be Python identifiers, but CJK Extension B
#: letters (U+20000...) can.
Scales = make_dataclass("Scales", [("id", int), ("colour_\U00020000", str)])


@pytest.mark.parametrize(
    "cls,what", [(Dragon, "table name 'niveau_🐉'"), (Scales, "column name 'colour_\U00020000'")]
)
def test_emoji_names(store: Store, cls: type, what: str) -> None:
    if store.dialect.name not in ("mysql", "mariadb"):
        store.create(cls)  # SQLite and PostgreSQL hold such names
        row = cls(1, "x")
        store.insert(row)
        assert store.get(cls, 1) == row
        return
    before = store.table_names()
    with pytest.raises(InvalidNameError, match=rf"{what}.*on MariaDB.*beyond U\+FFFF"):
        store.create(cls)
    with pytest.raises(InvalidNameError):
        list(store.select(cls))
    assert store.table_names() == before


def test_mariadb_refuses_ddl_inside_a_transaction(mariadb_url: str) -> None:
    """MariaDB commits an open transaction on CREATE/DROP TABLE: refused, not done."""
    from tests.entityworks.conftest import _drop_everything

    _drop_everything(mariadb_url)
    store = Store(mariadb_url)
    try:
        store.create(Book)
        with pytest.raises(EntityworksError, match="inside transaction"):
            with store.transaction():
                store.insert(Book("kept?", [Page(1, "p")]))
                store.create(Book)  # exists: nothing to do, allowed
                store.create(Chapter)  # would commit the insert above
        assert store.count(Book) == 0 and "chapter" not in store.table_names()
        with pytest.raises(EntityworksError, match="inside transaction"):
            with store.transaction():
                store.drop(Book)
        assert "book" in store.table_names()
    finally:
        store.close()
        _drop_everything(mariadb_url)

"""Relations between top-level tables: ``column(references=...)`` on every backend."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated

import pytest
import sqlalchemy as sa

from entityworks import (
    FilterError,
    References,
    SchemaError,
    Store,
    WriteError,
    col,
    column,
    primary_key,
    table,
)
from entityworks.migrate import diff, metadata_for


@table("rel_publisher")
@dataclass
class Publisher:
    id: int
    name: str


@table("rel_author")
@dataclass
class Author:
    id: int
    name: str
    publisher_id: int | None = column(references=Publisher, on_delete="set null", default=None)


@dataclass
class Note:
    text: str


@table("rel_book")
@dataclass
class Book:
    isbn: str = primary_key(max_length=20)
    title: str = ""
    author_id: int = column(references=Author, on_delete="cascade", default=0)
    notes: list[Note] = field(default_factory=list)


@table("rel_review")
@dataclass
class Review:
    id: int
    book_isbn: str = column(references=Book, on_delete="restrict", default="")
    stars: int = 0


@table("rel_employee")
@dataclass
class Employee:
    id: int
    name: str
    manager_id: int | None = column(references="Employee", default=None)  # type: ignore[arg-type]


def _fill(store: Store) -> None:
    store.create(Review)  # creates publisher, author, book (and its child table) first
    store.insert_many([Publisher(1, "North"), Publisher(2, "South")])
    store.insert_many([Author(1, "Ann", 1), Author(2, "Bob", 2), Author(3, "Cy", None)])
    store.insert_many(
        [Book("b1", "One", 1, [Note("n")]), Book("b2", "Two", 2), Book("b3", "Three", 1)]
    )


def test_create_orders_by_dependency_and_makes_real_foreign_keys(store: Store) -> None:
    store.create(Review)
    names = set(store.table_names())
    assert {"rel_publisher", "rel_author", "rel_book", "rel_book_notes", "rel_review"} <= names
    with store.engine.connect() as conn:
        fks = sa.inspect(conn).get_foreign_keys("rel_book")
    [fk] = fks
    assert fk["constrained_columns"] == ["author_id"]
    assert fk["referred_table"] == "rel_author" and fk["referred_columns"] == ["id"]
    assert (fk.get("options") or {}).get("ondelete", "").upper() == "CASCADE"


def test_write_breaking_a_foreign_key_names_row_and_column(store: Store) -> None:
    _fill(store)
    with pytest.raises(WriteError) as err:
        store.insert_many([Book("b4", "Four", 1), Book("b5", "Five", 99)])
    assert err.value.row == 1 and err.value.column == "author_id"
    assert store.count(Book) == 3  # nothing written
    with pytest.raises(WriteError) as err:
        store.insert(Book("b6", "Six", 42))
    assert err.value.column == "author_id"
    with pytest.raises(WriteError) as err:
        store.upsert_many([Author(4, "Di", 1), Author(5, "Ed", 77)])
    assert err.value.row == 1 and err.value.column == "publisher_id"
    assert store.get(Author, 4) is None
    with pytest.raises(WriteError) as err:
        store.update(Book("b1", "One", 55))
    assert err.value.column == "author_id"
    assert store.get(Book, "b1") == Book("b1", "One", 1, [Note("n")])


def test_on_delete_actions(store: Store) -> None:
    _fill(store)
    store.insert(Review(1, "b2", 5))
    with pytest.raises(WriteError):  # restrict: a reviewed book stays
        store.delete(Book("b2", "Two", 2))
    assert store.get(Book, "b2") is not None
    store.delete(Publisher(1, "North"))  # set null
    assert store.get(Author, 1) == Author(1, "Ann", None)
    store.delete(Author, where={"id": 3})
    store.delete(Author(1, "Ann", None))  # cascade: b1 and b3 (and b1's notes) go
    assert [b.isbn for b in store.select(Book, order_by="isbn")] == ["b2"]
    with store.engine.connect() as conn:
        left = conn.execute(sa.text("SELECT COUNT(*) FROM rel_book_notes")).scalar_one()
    assert left == 0


def test_filter_through_relations(store: Store) -> None:
    _fill(store)
    titles = [b.title for b in store.select(Book, where={"author.name": "Ann"}, order_by="title")]
    assert titles == ["One", "Three"]
    assert store.count(Book, where={"author_id.name": "Bob"}) == 1
    # two steps, with expressions, combined with the table's own columns
    where = (col("author.publisher.name") == "South") | (col("title") == "Three")
    assert sorted(b.isbn for b in store.select(Book, where=where)) == ["b2", "b3"]
    assert store.count(Author, where=col("publisher.name").in_(["North", "South"])) == 2
    assert store.count(Author, where={"publisher.name": None}) == 0
    # values are bound: a hostile value is only a value
    assert store.count(Book, where={"author.name": "x' OR '1'='1"}) == 0
    assert store.delete(Book, where={"author.name": "Bob"}) == 1
    with pytest.raises(FilterError, match="no relation"):
        store.count(Book, where={"title.x": 1})
    with pytest.raises(KeyError, match="no column 'nope'"):
        store.count(Book, where={"author.nope": 1})


def test_self_reference(store: Store) -> None:
    store.create(Employee)
    store.insert_many([Employee(1, "Boss"), Employee(2, "Mid", 1), Employee(3, "Low", 2)])
    assert [e.name for e in store.select(Employee, where={"manager.manager.name": "Boss"})] == [
        "Low"
    ]
    with pytest.raises(WriteError) as err:
        store.insert(Employee(4, "Lost", 9))
    assert err.value.column == "manager_id"


def test_relations_refused_clearly() -> None:
    with pytest.raises(SchemaError, match="on_delete"):
        column(references=Author, on_delete="explode")
    with pytest.raises(SchemaError, match="dataclass type"):
        column(references=42)  # type: ignore[arg-type]
    with pytest.raises(SchemaError, match="Optional"):

        @dataclass
        class Bad:
            id: int
            author_id: int = column(references=Author, on_delete="set null", default=0)

        Store("sqlite://").table(Bad)

    @dataclass
    class WrongType:
        id: int
        author_id: str = column(references=Author, default="")

    with pytest.raises(SchemaError, match="foreign key has the type"):
        Store("sqlite://").create(WrongType)

    @dataclass
    class NoKey:
        name: str

    @dataclass
    class ToNoKey:
        id: int
        ref: str = column(references=NoKey, default="")

    with pytest.raises(SchemaError, match="no primary key"):
        Store("sqlite://").create(ToNoKey)


@dataclass
class CycleA:
    id: int
    b_id: int = column(references="CycleB", default=0)  # type: ignore[arg-type]


@dataclass
class CycleB:
    id: int
    a_id: int = column(references=CycleA, default=0)


def test_cycles_are_refused() -> None:
    with pytest.raises(SchemaError, match="cycle"):
        Store("sqlite://").create(CycleB)


def test_one_metadata_per_store(sqlite_store: Store) -> None:
    book = sqlite_store.table(Book)
    assert book.metadata is sqlite_store.table(Author).metadata
    # the escape hatch of issue 14 works now: a constraint naming another table resolves
    assert {t.name for t in book.metadata.sorted_tables} >= {"rel_author", "rel_book"}


def test_migrations_see_foreign_keys(backend_url: str) -> None:
    metadata = metadata_for(Book)  # the referenced tables come along
    assert {"rel_publisher", "rel_author", "rel_book"} <= set(metadata.tables)
    [fk] = metadata.tables["rel_book"].foreign_keys
    assert fk.column.table.name == "rel_author" and fk.ondelete == "CASCADE"
    with Store(backend_url) as store:
        store.create(Review)
        assert diff(store, [Review, Book, Author, Publisher]) == []
        # a table without its foreign key is drift
        with store.engine.begin() as conn:
            conn.execute(sa.text("DROP TABLE rel_review"))
            conn.execute(sa.text("CREATE TABLE rel_review (id BIGINT NOT NULL PRIMARY KEY)"))
    with Store(backend_url) as store:
        kinds = {type(op).__name__ for op in diff(store, [Review])}
        assert "AddColumnOp" in kinds


@table("rel_book")
@dataclass
class PlainBook:  # the same table before its relation was declared
    isbn: str = primary_key(max_length=20)
    title: str = ""
    author_id: int = 0


def test_schema_diff_describes_a_new_foreign_key(backend_url: str) -> None:
    from entityworks.migrate import describe

    with Store(backend_url) as store:
        store.create(Author)
        store.create(PlainBook)
        lines = [describe(op) for op in diff(store, [Book, Author, Publisher])]
    assert "add foreign key rel_book(author_id) -> rel_author(id)" in lines


def test_export_dataset_carries_declared_relations(tmp_path) -> None:
    from entityworks.xml.dataset import read_dataset

    with Store(tmp_path / "a.db") as store:
        _fill(store)
        store.export_dataset([Publisher, Author], tmp_path / "d.xml", tmp_path / "d.xsd")
    data = read_dataset(tmp_path / "d.xsd")
    assert [(r.parent, r.parent_column, r.child, r.child_column) for r in data.relations] == [
        ("rel_publisher", "id", "rel_author", "publisher_id")
    ]
    with Store(tmp_path / "b.db") as store:
        assert store.import_dataset(tmp_path / "d.xml", tmp_path / "d.xsd") == {
            "rel_publisher": 2,
            "rel_author": 3,
        }
        with store.engine.connect() as conn:
            [fk] = sa.inspect(conn).get_foreign_keys("rel_author")
        assert fk["referred_table"] == "rel_publisher"


@table("rel_loan")
@dataclass
class Loan:
    id: int
    book_isbn: Annotated[str, References(Book, on_delete="cascade")]
    reader_id: Annotated[int, References(Author)] | None = None


def test_annotated_marker(store: Store) -> None:
    _fill(store)
    store.create(Loan)
    with store.engine.connect() as conn:
        fks = {
            fk["constrained_columns"][0]: fk for fk in sa.inspect(conn).get_foreign_keys("rel_loan")
        }
    assert fks["book_isbn"]["referred_table"] == "rel_book"
    assert fks["reader_id"]["referred_table"] == "rel_author"
    store.insert_many([Loan(1, "b1", 2), Loan(2, "b2")])
    assert store.count(Loan, where={"book.title": "One"}) == 1
    with pytest.raises(WriteError) as err:
        store.insert(Loan(3, "nope"))
    assert err.value.column == "book_isbn"
    store.delete(Book("b1"))  # cascade
    assert [loan.id for loan in store.select(Loan)] == [2]
    with pytest.raises(SchemaError, match="on_delete"):
        References(Book, on_delete="sometimes")

    @dataclass
    class Twice:
        id: int
        b: Annotated[str, References(Book)] = column(references=Book, default="")

    with pytest.raises(SchemaError, match="given twice"):
        Store("sqlite://").table(Twice)


def test_dropping_a_referenced_table_is_refused_clearly(store: Store) -> None:
    _fill(store)
    with pytest.raises(SchemaError, match="cannot drop table .rel_author.: table .rel_book."):
        store.drop(Author)
    assert store.count(Author) == 3 and store.count(Book) == 3  # (SQLite would cascade)
    store.drop(Review)
    store.drop(Book)
    store.drop(Author)
    assert "rel_author" not in store.table_names()

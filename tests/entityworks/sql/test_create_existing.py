"""``Store.create`` over a table that exists already (issue 29, item 8): a table made by
other means with other columns is refused on every backend, naming the missing, extra and
differently typed columns, and nothing is created; a table entityworks made itself (every
registry type, child tables included) is kept as it is."""

from __future__ import annotations

import datetime as dt
import decimal
from dataclasses import dataclass, field

import pytest
import sqlalchemy as sa

from entityworks import SchemaError, Store
from tests.entityworks.strategies import AllTypes


@dataclass
class Part:
    label: str


@dataclass
class Gadget:
    id: int
    title: str
    price: decimal.Decimal
    made: dt.datetime
    parts: list[Part] = field(default_factory=list)


def plain_sql(url: str, *statements: str) -> None:
    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            for statement in statements:
                conn.exec_driver_sql(statement)
    finally:
        engine.dispose()


def tables(url: str) -> set[str]:
    engine = sa.create_engine(url)
    try:
        return set(sa.inspect(engine).get_table_names())
    finally:
        engine.dispose()


def refusal(url: str, cls: type) -> str:
    store = Store(url)
    try:
        with pytest.raises(SchemaError) as caught:
            store.create(cls)
    finally:
        store.close()
    return str(caught.value)


def test_other_columns_are_named_and_nothing_is_created(backend_url: str) -> None:
    plain_sql(
        backend_url,
        "CREATE TABLE gadget (id INTEGER PRIMARY KEY, title INTEGER, "
        "name VARCHAR(20), made TIMESTAMP)",
    )
    message = refusal(backend_url, Gadget)
    assert "Gadget: table 'gadget' exists" in message
    assert "missing column(s) price" in message  # the Decimal field's column(s)
    assert "extra column(s) name (" in message
    assert "title is INTEGER" in message  # a text field over an integer column
    assert "made" not in message.split("extra")[0]  # present, of a timestamp family
    assert tables(backend_url) == {"gadget"}  # the child table was not created either


@pytest.mark.parametrize(
    "columns, named",
    [
        ("id INTEGER PRIMARY KEY", "missing column(s) title"),
        ("id INTEGER PRIMARY KEY, title TEXT, colour TEXT", "extra column(s) colour"),
        ("id VARCHAR(20) PRIMARY KEY, title TEXT", "other type(s): id is VARCHAR(20)"),
    ],
)
def test_each_kind_of_difference_alone(backend_url: str, columns: str, named: str) -> None:
    @dataclass
    class Note:
        id: int
        title: str

    plain_sql(backend_url, f"CREATE TABLE note ({columns})")
    message = refusal(backend_url, Note)
    assert named in message
    assert "Nothing was created" in message


def test_a_matching_table_of_other_origin_is_kept(backend_url: str) -> None:
    @dataclass
    class Note:
        id: int
        title: str

    plain_sql(
        backend_url,
        "CREATE TABLE note (id INTEGER PRIMARY KEY, title VARCHAR(200))",
        "INSERT INTO note (id, title) VALUES (1, 'kept')",
    )
    store = Store(backend_url)
    try:
        store.create(Note)
        assert store.get(Note, 1) == Note(1, "kept")
    finally:
        store.close()


def test_tables_entityworks_made_are_kept(backend_url: str) -> None:
    first = Store(backend_url)
    first.create(AllTypes)
    first.create(Gadget)
    first.close()
    again = Store(backend_url)  # a new Store reflects the tables afresh
    try:
        again.create(AllTypes)
        again.create(Gadget)
        again.insert(Gadget(1, "x", decimal.Decimal("1.50"), dt.datetime(2026, 1, 2), [Part("a")]))
        assert again.get(Gadget, 1).parts == [Part("a")]
    finally:
        again.close()


def test_a_child_table_of_other_columns_is_refused(backend_url: str) -> None:
    store = Store(backend_url)
    store.create(Gadget)
    child = store.table(Gadget).name + "_parts"
    store.close()
    assert child in tables(backend_url)
    plain_sql(backend_url, f"ALTER TABLE {child} ADD COLUMN extra INTEGER")
    assert f"table {child!r} exists" in refusal(backend_url, Gadget)

"""Single-row calls (``get``, ``insert``, ``update``, ``delete``) on an SQLite file take a
short path on a raw connection kept per thread: the same results, errors and atomicity as the
general path, which still runs inside ``transaction()``, for classes with child tables and
while SQL is listened to."""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field

import pytest
import sqlalchemy as sa

from entityworks import NotFoundError, Store, WriteError, column
from entityworks.errors import EntityworksError


@dataclass
class Item:
    id: int | None
    name: str
    weight: float | None = None


@dataclass
class Tag:
    label: str


@dataclass
class Tagged:
    id: int | None
    name: str
    tags: list[Tag] = field(default_factory=list)


@pytest.fixture
def store(tmp_path):
    s = Store(tmp_path / "point.db")
    s.create(Item)
    s.create(Tagged)
    yield s
    s.close()


def _rows(store: Store) -> list[tuple]:
    with store.engine.connect() as conn:
        # the fields' own columns (a float's sign-of-zero companion left out)
        return [
            tuple(r) for r in conn.execute(sa.text("SELECT id, name, weight FROM item ORDER BY id"))
        ]


def test_round_trip_by_key(store):
    first = store.insert(Item(None, "axe", 2.5))
    second = store.insert(Item(None, "bow"))
    assert (first.id, second.id) == (1, 2)
    assert store._point.local.point is not None  # the short path ran
    assert store.get(Item, 1) == Item(1, "axe", 2.5) and store.get(Item, 3) is None
    store.update(Item(2, "longbow", 1.25))
    assert store.get(Item, 2) == Item(2, "longbow", 1.25)
    with pytest.raises(NotFoundError, match="no row with id=9"):
        store.update(Item(9, "ghost"))
    assert store.delete(Item(1, "axe")) == 1 and store.delete(Item(1, "axe")) == 0
    assert _rows(store) == [(2, "longbow", 1.25)]
    store.insert(Item(10, "explicit"))
    assert store.get(Item, 10) == Item(10, "explicit")


def test_errors_match_the_general_path_and_write_nothing(store):
    store.insert(Item(1, "axe"))
    with pytest.raises(WriteError) as point:
        store.insert(Item(1, "again"))
    with pytest.raises(WriteError) as bulk:
        store.insert_many([Item(1, "again")])
    assert str(point.value) == str(bulk.value) and point.value.column == "id"
    with pytest.raises(EntityworksError, match="NaN") as point_nan:
        store.insert(Item(2, "nan", math.nan))
    with pytest.raises(EntityworksError, match="NaN") as bulk_nan:
        store.insert_many([Item(2, "nan", math.nan)])
    assert str(point_nan.value) == str(bulk_nan.value)
    with pytest.raises(EntityworksError):
        store.get(Item, "one")
    assert _rows(store) == [(1, "axe", None)]


def test_inside_a_transaction_the_general_path_keeps_atomicity(store):
    with pytest.raises(RuntimeError), store.transaction():
        store.insert(Item(None, "lost"))
        store.update(Item(1, "lost too")) if store.get(Item, 1) else None
        raise RuntimeError
    assert _rows(store) == []
    with store.transaction():
        store.insert(Item(None, "kept"))
        assert store.get(Item, 1) == Item(1, "kept")
    assert _rows(store) == [(1, "kept", None)]


def test_child_tables_and_listeners_take_the_general_path(store):
    tagged = store.insert(Tagged(None, "t", [Tag("a"), Tag("b")]))
    assert store.get(Tagged, tagged.id).tags == [Tag("a"), Tag("b")]
    assert store.delete(tagged) == 1 and store.get(Tagged, tagged.id) is None
    seen: list[str] = []
    sa.event.listen(store.engine, "before_cursor_execute", lambda *args: seen.append(args[2]))
    store.insert(Item(None, "heard"))
    store.get(Item, 1)
    assert any(s.startswith("INSERT INTO item") for s in seen)
    assert any(s.startswith("SELECT") and "item" in s for s in seen)


def test_close_then_reuse_and_many_threads(tmp_path):
    store = Store(tmp_path / "threads.db")
    store.create(Item)
    store.insert(Item(None, "before"))
    store.close()
    assert store.get(Item, 1) == Item(1, "before")  # a new connection after close()

    def work(n: int) -> None:
        for i in range(50):
            store.insert(Item(None, f"t{n}-{i}"))
            store.get(Item, 1)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert store.count(Item) == 201
    assert len({i.name for i in store.select(Item)}) == 201
    store.close()


def test_memory_databases_keep_the_general_path():
    store = Store("sqlite://")
    store.create(Item)
    store.insert(Item(None, "m"))
    assert store.get(Item, 1) == Item(1, "m") and getattr(store._point.local, "point", None) is None
    store.close()


@dataclass
class Owner:
    id: int


@dataclass
class Pet:
    id: int | None
    name: str
    owner: int = column(references=Owner)


def _counted(store: Store) -> list[str]:
    """Every statement the driver runs, the point path's raw ones included.

    (A ``before_cursor_execute`` listener would turn the point path off, and SQLAlchemy's
    events do not see the raw cursor's statements: sqlite3's trace callback sees them all.)
    """
    statements: list[str] = []
    sa.event.listen(
        store.engine, "connect", lambda dbapi, _record: dbapi.set_trace_callback(statements.append)
    )
    return statements


@pytest.mark.parametrize("kind", ["insert", "insert_generated", "update"])
def test_a_refused_one_row_write_runs_once(tmp_path, kind):
    """The point path and the general path each run the refused statement once."""
    store = Store(tmp_path / "once.db")
    statements = _counted(store)
    store.create(Item)
    store.create(Owner)
    store.create(Pet)
    store.insert(Owner(1))
    store.insert(Pet(1, "rex", 1))
    store.insert(Item(1, "axe"))
    assert store._point.local.point is not None
    verb = "UPDATE" if kind == "update" else "INSERT"
    before = sum(s.startswith(verb) for s in statements)
    with pytest.raises(WriteError) as point:
        if kind == "insert":
            store.insert(Item(1, "again"))  # the key exists
        elif kind == "insert_generated":
            store.insert(Pet(None, "tom", 7))  # no owner 7
        else:
            store.update(Pet(1, "rex", 7))
    assert sum(s.startswith(verb) for s in statements) == before + 1
    before = sum(s.startswith(verb) for s in statements)
    with store.transaction():  # the general path, for the same error, runs it once too
        with pytest.raises(WriteError) as general:
            if kind == "insert":
                store.insert(Item(1, "again"))
            elif kind == "insert_generated":
                store.insert(Pet(None, "tom", 7))
            else:
                store.update(Pet(1, "rex", 7))
    assert sum(s.startswith(verb) for s in statements) == before + 1
    assert str(point.value) == str(general.value)
    assert (point.value.row, point.value.column) == (general.value.row, general.value.column)
    store.close()

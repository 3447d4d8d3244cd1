"""PostgreSQL reads outside ``Store.transaction()`` whose connection serves nothing else come
as the server sends them, in chunks of a fetch (libpq 17's chunked rows mode, no cursor on
the server); inside a transaction, and for a family whose child rows are read meanwhile,
from a server-side cursor. Whichever way, the rows are the same, a read left early or
refused part-way leaves the connection as usable as before, and the pool keeps no busy
connection."""

from __future__ import annotations

import gc
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import psycopg
import pytest
import sqlalchemy as sa

from entityworks import Store, table
from entityworks.errors import EntityworksError
from entityworks.sql import _read
from entityworks.sql.backends import pgread

N = 2 * _read.FETCH + 123


@table("chunked_items")
@dataclass
class Item:
    id: int
    label: str
    token: uuid.UUID


@dataclass
class Part:
    name: str
    weight: int


@table("chunked_owner")
@dataclass
class Owner:
    id: int
    parts: list[Part] = field(default_factory=list)


@pytest.fixture
def store(pg_url: str) -> Iterator[Store]:
    s = Store(pg_url)
    s.drop(Item)
    s.drop(Owner)
    s.create(Item)
    s.create(Owner)
    yield s
    s.drop(Item)
    s.drop(Owner)
    s.close()


def _items() -> list[Item]:
    return [Item(i, f"item {i}", uuid.UUID(int=i)) for i in range(N)]


@pytest.fixture
def ways(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """How each read went: 'chunks' or 'cursor'."""
    seen: list[str] = []
    chunks = pgread.streamed_batches

    def spy(*args: Any) -> Any:
        seen.append("chunks")
        return chunks(*args)

    monkeypatch.setattr(pgread, "streamed_batches", spy)
    return seen


needs_chunks = pytest.mark.skipif(
    not pgread.chunked_rows(), reason="this psycopg or libpq has no chunked rows mode"
)


@needs_chunks
def test_reads_outside_a_transaction_come_in_chunks(store: Store, ways: list[str]) -> None:
    given = _items()
    store.insert_many(given)
    assert list(store.select(Item, order_by="id")) == given
    assert [r for (r,) in store.select(Item, order_by="id", columns=["label"])] == [
        i.label for i in given
    ]
    assert ways == ["chunks", "chunks"]
    with store.transaction():  # the transaction's connection stays free between fetches
        assert list(store.select(Item, order_by="id")) == given
    assert ways == ["chunks", "chunks"]


@needs_chunks
def test_a_read_left_early_leaves_the_connections_usable(store: Store, ways: list[str]) -> None:
    given = _items()
    store.insert_many(given)
    for _ in range(8):  # more than the pool keeps: a busy connection would show
        rows = store.select(Item, order_by="id")
        assert [next(rows) for _ in range(3)] == given[:3]
        # left after the first chunk: the query is cancelled, its rows drained, the
        # read's transaction ended and its connection back in the pool
        del rows
        gc.collect()
        assert store.count(Item) == N
    store.insert(Item(N, "after", uuid.UUID(int=N)))
    assert store.get(Item, N) == Item(N, "after", uuid.UUID(int=N))
    assert list(store.select(Item, order_by="id"))[-1].label == "after"
    assert ways.count("chunks") == 9


@needs_chunks
def test_a_row_refused_part_way_leaves_the_connection_usable(
    store: Store, pg_url: str, ways: list[str]
) -> None:
    given = _items()
    store.insert_many(given)
    # a value that is no uuid in the third chunk, written past entityworks
    engine = sa.create_engine(pg_url)
    with engine.begin() as conn:
        conn.execute(sa.text("ALTER TABLE chunked_items ALTER COLUMN token TYPE text"))
        conn.execute(
            sa.text("UPDATE chunked_items SET token = 'not a uuid' WHERE id = :i"), {"i": N - 5}
        )
    engine.dispose()
    with pytest.raises(EntityworksError, match="row") as refused:
        list(store.select(Item, order_by="id"))
    assert str(N - 5) in str(refused.value)
    assert store.count(Item) == N  # the connection went back to the pool clean
    assert list(store.select(Item, order_by="id", limit=3)) == given[:3]
    assert "chunks" in ways


def test_a_family_reads_its_children_on_the_same_connection(store: Store, ways: list[str]) -> None:
    owners = [Owner(i, [Part(f"p{j}", j) for j in range(i % 4)]) for i in range(_read.FETCH + 50)]
    store.insert_many(owners)
    assert list(store.select(Owner, order_by="id")) == owners
    assert ways == []  # rows and child rows share the connection: a server-side cursor


def test_without_chunked_rows_the_server_side_cursor_reads_the_same(
    store: Store, ways: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    given = _items()
    store.insert_many(given)
    monkeypatch.setattr(pgread, "chunked_rows", lambda: False)
    assert list(store.select(Item, order_by="id")) == given
    rows = store.select(Item, order_by="id")
    assert next(rows) == given[0]
    del rows
    gc.collect()
    assert store.count(Item) == N
    assert ways == []


def test_chunked_rows_is_what_psycopg_and_its_libpq_offer() -> None:
    import inspect

    offered = (
        psycopg.pq.version() >= 170000
        and "size" in inspect.signature(psycopg.Cursor.stream).parameters
    )
    assert pgread.chunked_rows() is offered

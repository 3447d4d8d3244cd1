"""``insert_many`` with generated keys sends a small constant number of statements per batch
(not one per row) on every backend, the keys correct and in input order, child rows under
them. Statements are counted at the driver: a counting sqlite3 cursor, psycopg's and
PyMySQL's calls that send a statement."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from entityworks import Store, table

#: Statements that are not writes of rows: transactions and savepoints.
_BOOKKEEPING = ("SAVEPOINT", "RELEASE", "ROLLBACK", "BEGIN", "COMMIT", "PRAGMA", "SET ")


@dataclass
class Kid:
    name: str
    age: int


@table("pl_parent")
@dataclass
class Parent:
    id: int | None
    name: str
    score: float
    kids: list[Kid] = field(default_factory=list)


@table("pl_plain")
@dataclass
class Plain:
    id: int | None
    name: str
    n: int


class _Cursor(sqlite3.Cursor):
    sent: list[str]

    def execute(self, sql: str, *args: Any) -> Any:  # type: ignore[override]
        self.sent.append(sql)
        return super().execute(sql, *args)

    def executemany(self, sql: str, *args: Any) -> Any:  # type: ignore[override]
        self.sent.append(sql)
        return super().executemany(sql, *args)


def _counting_sqlite(sent: list[str]) -> type[sqlite3.Connection]:
    class Cursor(_Cursor):
        pass

    Cursor.sent = sent

    class Connection(sqlite3.Connection):
        def cursor(self, factory: Any = Cursor) -> Any:  # type: ignore[override]
            return super().cursor(factory)

    return Connection


def _rows_sent(sent: list[str]) -> list[str]:
    # (";": the pool's ping of a connection it hands out, with SQLAlchemy 2.0's first
    # releases)
    return [s for s in sent if not s.lstrip().upper().startswith(_BOOKKEEPING) and s.strip() != ";"]


@pytest.fixture(params=["sqlite", "postgresql", "mariadb"])
def counted(
    request: pytest.FixtureRequest, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Store, list[str]]]:
    """A Store and the list of statements its driver is given (appended as they go)."""
    sent: list[str] = []
    if request.param == "sqlite":
        store = Store(
            f"sqlite:///{tmp_path / 'count.db'}",
            engine_options={"connect_args": {"factory": _counting_sqlite(sent)}},
        )
    else:
        url = request.getfixturevalue("pg_url" if request.param == "postgresql" else "mariadb_url")
        store = Store(url)
        if request.param == "postgresql":
            import psycopg

            for name in ("execute", "executemany", "copy"):
                original = getattr(psycopg.Cursor, name)

                def counting(self: Any, sql: Any, *a: Any, _f: Any = original, **k: Any) -> Any:
                    sent.append(sql if isinstance(sql, str) else str(sql))
                    return _f(self, sql, *a, **k)

                monkeypatch.setattr(psycopg.Cursor, name, counting)
        else:
            import pymysql.connections

            original = pymysql.connections.Connection.query

            def query(self: Any, sql: Any, *a: Any, **k: Any) -> Any:
                sent.append(sql.decode() if isinstance(sql, bytes) else str(sql))
                return original(self, sql, *a, **k)

            monkeypatch.setattr(pymysql.connections.Connection, "query", query)
    try:
        yield store, sent
    finally:
        for cls in (Parent, Plain):
            store.drop(cls)
        store.close()


BATCH = 10_000
BATCHES = 2


def test_generated_keys_take_a_few_statements_per_batch(counted: tuple[Store, list[str]]) -> None:
    store, sent = counted
    store.drop(Plain)
    store.create(Plain)
    store.insert_many([Plain(None, "before", -1)])  # a key generated before
    objs = [Plain(None, f"p{i}", i) for i in range(BATCH * BATCHES)]
    sent.clear()
    assert store.insert_many(iter(objs), batch_size=BATCH) == len(objs)
    statements = _rows_sent(sent)
    assert len(statements) <= 4 * BATCHES + 2, statements[:20]
    keys = [o.id for o in objs]
    assert all(type(k) is int for k in keys)
    assert keys == sorted(keys) and len(set(keys)) == len(keys) and keys[0] > 1
    stored = {p.id: (p.name, p.n) for p in store.select(Plain)}
    assert all(stored[o.id] == (o.name, o.n) for o in objs)
    assert len(stored) == len(objs) + 1


def test_children_are_written_under_the_generated_keys(counted: tuple[Store, list[str]]) -> None:
    store, sent = counted
    store.drop(Parent)
    store.create(Parent)
    objs = [
        Parent(None, f"p{i}", i / 2, [Kid(f"k{i}.{j}", j) for j in range(i % 3)])
        for i in range(2_000)
    ]
    sent.clear()
    store.insert_many((o for o in objs), batch_size=700)
    # per batch: the parents' few statements and the kids' few
    assert len(_rows_sent(sent)) <= 8 * 3 + 2
    assert len({o.id for o in objs}) == len(objs)
    back = {p.id: p for p in store.select(Parent)}
    assert [back[o.id] for o in objs] == objs

"""One-row calls (``get``, ``insert``, ``update(obj)``, ``delete(obj)``, ``delete(Cls,
where={"id": k})``) against the driver doing the same statement, timed in the same run.

    python benchmarks/bench_point.py [--ops 50] [--repeat 21] [--postgres URL] [--mariadb URL]

The row is ``Mixed`` (``_common``). The peers are the drivers themselves on one connection,
each write its own transaction:

* SQLite: ``sqlite3`` with the Store's pragmas (WAL, synchronous=NORMAL, foreign_keys,
  case_sensitive_like, the busy timeout), the same statement, ``commit()`` after each write.
* PostgreSQL: a psycopg 3 connection in autocommit, ``execute(...)`` (``.fetchone()``).
* MariaDB: a PyMySQL connection in autocommit, ``execute(...)`` (``.fetchone()``).

Each peer converts inside its clock as the table stores the values (SQLite: datetime and
Decimal as text, the sortable Decimal key; MariaDB: the Decimal's scale and -0.0 columns) and
builds the same ``Mixed`` objects on reads. Connecting and DDL are outside both clocks; ours
and the peer alternate; the tables both sides wrote are compared once.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import math
import os
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime
from decimal import Decimal
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import sqlalchemy as sa

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import Mixed, make_mixed, record  # noqa: E402

from entityworks import Store  # noqa: E402
from entityworks.sql.sqltypes import decimal_key  # noqa: E402

T = TypeVar("T")
OURS = "ew_point_mixed"
PEER = "ew_point_peer"
Mixed.__tablename__ = OURS  # type: ignore[attr-defined]  # unique to this benchmark


def changed(obj: Mixed) -> Mixed:
    return dataclasses.replace(
        obj,
        n=obj.n + 1,
        x=obj.x / 2,
        s=obj.s + "!",
        flag=not obj.flag,
        note=None if obj.note else "now set",
        amount=obj.amount + Decimal("0.01"),
    )


class SQLitePeer:
    COLS = "id, n, x, s, flag, at, note, amount__key, amount"

    def __init__(self, path: Path) -> None:
        conn = sqlite3.connect(path, timeout=30.0)  # implicit BEGIN before writes
        for pragma in (
            "journal_mode=WAL",
            "synchronous=NORMAL",
            "foreign_keys=ON",
            "case_sensitive_like=ON",
        ):
            conn.execute(f"PRAGMA {pragma}")
        self.conn = conn
        self.get_sql = f"SELECT {self.COLS} FROM {PEER} WHERE id = ?"
        self.insert_sql = f"INSERT INTO {PEER} ({self.COLS}) VALUES ({', '.join('?' * 9)})"
        self.update_sql = (
            f"UPDATE {PEER} SET n = ?, x = ?, s = ?, flag = ?, at = ?, "
            "note = ?, amount__key = ?, amount = ? WHERE id = ?"
        )
        self.delete_sql = f"DELETE FROM {PEER} WHERE id = ?"

    @staticmethod
    def values(o: Mixed) -> tuple[Any, ...]:
        return (
            o.n,
            o.x,
            o.s,
            o.flag,
            o.at.isoformat(" ", "microseconds"),
            o.note,
            decimal_key(o.amount),
            format(o.amount, "f"),
        )

    def get(self, key: int) -> Mixed | None:
        r = self.conn.execute(self.get_sql, (key,)).fetchone()
        if r is None:
            return None
        return Mixed(
            r[0], r[1], r[2], r[3], bool(r[4]), datetime.fromisoformat(r[5]), r[6], Decimal(r[8])
        )

    def insert(self, o: Mixed) -> None:
        self.conn.execute(self.insert_sql, (o.id, *self.values(o)))
        self.conn.commit()

    def insert_many(self, objs: list[Mixed]) -> None:
        self.conn.executemany(self.insert_sql, [(o.id, *self.values(o)) for o in objs])
        self.conn.commit()

    def update(self, o: Mixed) -> None:
        if self.conn.execute(self.update_sql, (*self.values(o), o.id)).rowcount != 1:
            raise LookupError(o.id)
        self.conn.commit()

    def delete(self, key: int) -> None:
        self.conn.execute(self.delete_sql, (key,))
        self.conn.commit()

    def rows(self) -> list[tuple[Any, ...]]:
        return self.conn.execute(f"SELECT {self.COLS} FROM {PEER} ORDER BY id").fetchall()

    def close(self) -> None:
        self.conn.close()


class PostgresPeer:
    COLS = "id, n, x, s, flag, at, note, amount"

    def __init__(self, url: sa.URL) -> None:
        import psycopg

        self.conn = psycopg.connect(
            host=url.host,
            port=url.port,
            user=url.username,
            password=url.password,
            dbname=url.database,
            autocommit=True,
        )
        self.get_sql = f"SELECT {self.COLS} FROM {PEER} WHERE id = %s"
        self.insert_sql = f"INSERT INTO {PEER} ({self.COLS}) VALUES ({', '.join(['%s'] * 8)})"
        self.update_sql = (
            f"UPDATE {PEER} SET n = %s, x = %s, s = %s, flag = %s, at = %s, "
            "note = %s, amount = %s WHERE id = %s"
        )
        self.delete_sql = f"DELETE FROM {PEER} WHERE id = %s"

    def get(self, key: int) -> Mixed | None:
        r = self.conn.execute(self.get_sql, (key,)).fetchone()
        return None if r is None else Mixed(*r)

    def insert(self, o: Mixed) -> None:
        self.conn.execute(self.insert_sql, (o.id, o.n, o.x, o.s, o.flag, o.at, o.note, o.amount))

    def insert_many(self, objs: list[Mixed]) -> None:
        with self.conn.cursor() as cur:
            cur.executemany(self.insert_sql, [dataclasses.astuple(o) for o in objs])

    def update(self, o: Mixed) -> None:
        cur = self.conn.execute(
            self.update_sql, (o.n, o.x, o.s, o.flag, o.at, o.note, o.amount, o.id)
        )
        if cur.rowcount != 1:
            raise LookupError(o.id)

    def delete(self, key: int) -> None:
        self.conn.execute(self.delete_sql, (key,))

    def rows(self) -> list[tuple[Any, ...]]:
        return self.conn.execute(f"SELECT {self.COLS} FROM {PEER} ORDER BY id").fetchall()

    def close(self) -> None:
        self.conn.close()


class MariaDBPeer:
    COLS = "id, n, x, x__negzero, s, flag, at, note, amount, amount__scale"

    def __init__(self, url: sa.URL) -> None:
        import pymysql

        self.conn = pymysql.connect(
            host=url.host,
            port=url.port or 3306,
            user=url.username,
            password=url.password or "",
            database=url.database,
            charset="utf8mb4",
            autocommit=True,
        )
        cur = self.conn.cursor()
        cur.execute(
            "SET SESSION sql_mode = CONCAT_WS(',', @@sql_mode, 'STRICT_ALL_TABLES', "
            "'NO_AUTO_VALUE_ON_ZERO', 'ERROR_FOR_DIVISION_BY_ZERO')"
        )
        cur.execute("SET collation_connection = utf8mb4_nopad_bin")
        self.cur = cur
        self.get_sql = f"SELECT {self.COLS} FROM {PEER} WHERE id = %s"
        self.insert_sql = f"INSERT INTO {PEER} ({self.COLS}) VALUES ({', '.join(['%s'] * 10)})"
        self.update_sql = (
            f"UPDATE {PEER} SET n = %s, x = %s, x__negzero = %s, s = %s, "
            "flag = %s, at = %s, note = %s, amount = %s, amount__scale = %s "
            "WHERE id = %s"
        )
        self.delete_sql = f"DELETE FROM {PEER} WHERE id = %s"

    @staticmethod
    def values(o: Mixed) -> tuple[Any, ...]:
        negzero = 1 if o.x == 0 and math.copysign(1.0, o.x) < 0 else None
        exponent = o.amount.as_tuple().exponent
        return (
            o.n,
            o.x,
            negzero,
            o.s,
            o.flag,
            o.at,
            o.note,
            o.amount,
            -exponent if isinstance(exponent, int) else None,
        )

    def get(self, key: int) -> Mixed | None:
        self.cur.execute(self.get_sql, (key,))
        r = self.cur.fetchone()
        if r is None:
            return None
        x = -0.0 if r[3] else r[2]
        amount = r[8] if r[9] is None else r[8].quantize(Decimal(1).scaleb(-r[9]))
        return Mixed(r[0], r[1], x, r[4], bool(r[5]), r[6], r[7], amount)

    def insert(self, o: Mixed) -> None:
        self.cur.execute(self.insert_sql, (o.id, *self.values(o)))

    def insert_many(self, objs: list[Mixed]) -> None:
        self.cur.executemany(self.insert_sql, [(o.id, *self.values(o)) for o in objs])

    def update(self, o: Mixed) -> None:
        if self.cur.execute(self.update_sql, (*self.values(o), o.id)) != 1:
            raise LookupError(o.id)

    def delete(self, key: int) -> None:
        self.cur.execute(self.delete_sql, (key,))

    def rows(self) -> list[tuple[Any, ...]]:
        self.cur.execute(f"SELECT {self.COLS} FROM {PEER} ORDER BY id")
        return list(self.cur.fetchall())

    def close(self) -> None:
        self.conn.close()


def ours_rows(store: Store, columns: str = "*") -> list[tuple[Any, ...]]:
    """Our table's rows, in the peer's ``columns`` (our companion columns, such as a float's
    ``__negzero``, which are NULL for these values, are not the peer's)."""
    with store.engine.connect() as conn:
        sql = f"SELECT {columns} FROM {OURS} ORDER BY id"
        return [tuple(r) for r in conn.execute(sa.text(sql))]


#: How the docs name each backend and the peer the calls race against.
BACKEND_NAMES = {"sqlite": "SQLite", "postgresql": "PostgreSQL", "mariadb": "MariaDB"}
PEER_NAMES = {
    "sqlite": "sqlite3, same statement, own commit",
    "postgresql": "psycopg 3 execute (+ fetchone), autocommit",
    "mariadb": "PyMySQL execute (+ fetchone), autocommit",
}

#: The clock: wall time; ``--cpu``: this process's CPU time (the client's work alone, which a
#: loaded machine disturbs less; the server's work is then not counted on either side).
CLOCK: Callable[[], float] = time.perf_counter


def timed(ops: list[Callable[[], Any]]) -> float:
    start = CLOCK()
    for op in ops:
        op()
    return CLOCK() - start


def race(
    name: str,
    backend: str,
    ours: Callable[[int], list[Callable[[], Any]]],
    peer: Callable[[int], list[Callable[[], Any]]],
    repeat: int,
    n: int,
) -> None:
    """Best per-call time of ours and the peer, runs alternating (run ``r`` of each side
    gets its own ops from ``ours(r)`` / ``peer(r)``, made outside the clock)."""
    best = [math.inf, math.inf]
    for r in range(repeat):
        order = (0, 1) if r % 2 == 0 else (1, 0)  # each side goes first every other run
        for side in order:
            ops = (ours, peer)[side](r)
            gc.collect()
            best[side] = min(best[side], timed(ops))
    us = [b / n * 1e6 for b in best]
    load = os.getloadavg()[0]
    print(
        f"{backend:<10} {name:<22} ours {us[0]:8.1f} us   peer {us[1]:8.1f} us   "
        f"ratio {us[0] / us[1]:5.2f}x   load {load:.2f}",
        flush=True,
    )
    record(
        "point",
        f"{BACKEND_NAMES[backend]} {name}",
        "Mixed",
        PEER_NAMES[backend],
        us[1],
        us[0],
        "us/call",
        lower_is_better=True,
    )


def run(backend: str, store: Store, peer: Any, n: int, repeat: int) -> None:
    rows = make_mixed(4 * n * repeat, seed=11)
    inserted = rows[: n * repeat]
    by_where = rows[n * repeat : 2 * n * repeat]
    by_obj = rows[2 * n * repeat : 3 * n * repeat]

    def runs(objs: list[T], r: int) -> list[T]:
        return objs[r * n : (r + 1) * n]

    # insert: each run writes its own n rows (on both sides)
    race(
        "insert",
        backend,
        lambda r: [partial(store.insert, o) for o in runs(inserted, r)],
        lambda r: [partial(peer.insert, o) for o in runs(inserted, r)],
        repeat,
        n,
    )
    got = ours_rows(store, peer.COLS)
    if backend == "sqlite":  # the peer's table has the same columns
        same = got == peer.rows()
    else:
        same = got == [tuple(r) for r in peer.rows()]
    if not same:
        raise SystemExit(f"{backend}: the rows written differ: {got[:1]} vs {peer.rows()[:1]}")
    keys = [o.id for o in inserted]
    race(
        "get",
        backend,
        lambda r: [partial(store.get, Mixed, k) for k in runs(keys, r)],
        lambda r: [partial(peer.get, k) for k in runs(keys, r)],
        repeat,
        n,
    )
    assert store.get(Mixed, keys[0]) == peer.get(keys[0]) == inserted[0]
    new = [changed(o) for o in inserted]
    race(
        "update(obj)",
        backend,
        lambda r: [partial(store.update, o) for o in runs(new, r)],
        lambda r: [partial(peer.update, o) for o in runs(new, r)],
        repeat,
        n,
    )
    assert store.get(Mixed, keys[-1]) == peer.get(keys[-1]) == new[-1]
    # the rows the deletes remove, written outside the clocks
    store.insert_many(by_where + by_obj)
    peer.insert_many(by_where + by_obj)
    race(
        "delete(obj)",
        backend,
        lambda r: [partial(store.delete, o) for o in runs(by_obj, r)],
        lambda r: [partial(peer.delete, o.id) for o in runs(by_obj, r)],
        repeat,
        n,
    )
    race(
        "delete(where id=k)",
        backend,
        lambda r: [partial(store.delete, Mixed, where={"id": o.id}) for o in runs(by_where, r)],
        lambda r: [partial(peer.delete, o.id) for o in runs(by_where, r)],
        repeat,
        n,
    )
    assert store.count(Mixed) == len(inserted) and len(peer.rows()) == len(inserted)


def peer_table(store: Store, url: sa.URL) -> None:
    ddl = str(sa.schema.CreateTable(store.table(Mixed)).compile(dialect=store.dialect))
    with store.engine.begin() as conn:
        conn.exec_driver_sql(f"DROP TABLE IF EXISTS {PEER}")
        conn.exec_driver_sql(ddl.replace(f"TABLE {OURS} ", f"TABLE {PEER} ", 1))


def bench(backend: str, url: sa.URL | str, n: int, repeat: int) -> None:
    store = Store(url)
    try:
        if OURS in store.table_names():
            store.drop(Mixed)
        store.create(Mixed)
        peer_table(store, store.url)
        if backend == "sqlite":
            peer: Any = SQLitePeer(Path(store.url.database or ""))
        elif backend == "postgresql":
            peer = PostgresPeer(store.url)
        else:
            peer = MariaDBPeer(store.url)
        try:
            run(backend, store, peer, n, repeat)
        finally:
            peer.close()
    finally:
        with store.engine.begin() as conn:
            conn.exec_driver_sql(f"DROP TABLE IF EXISTS {PEER}")
        store.drop(Mixed)
        store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ops", type=int, default=50, help="calls per timed run")
    parser.add_argument(
        "--repeat",
        type=int,
        default=21,
        help="timed runs per side (short runs, many: a loaded machine preempts long ones)",
    )
    parser.add_argument("--postgres", default=os.environ.get("ENTITYWORKS_TEST_POSTGRES_URL"))
    parser.add_argument("--mariadb", default=os.environ.get("ENTITYWORKS_TEST_MARIADB_URL"))
    parser.add_argument("--only", choices=["sqlite", "postgresql", "mariadb"])
    parser.add_argument(
        "--cpu", action="store_true", help="time this process's CPU time instead of wall time"
    )
    args = parser.parse_args()
    global CLOCK
    if args.cpu:
        CLOCK = time.process_time
    print(
        f"Mixed row, {args.ops} calls per run, best of {args.repeat} alternating runs; "
        f"{'client CPU' if args.cpu else 'wall'} time per call:"
    )
    with tempfile.TemporaryDirectory() as tmp:
        if args.only in (None, "sqlite"):
            bench("sqlite", f"sqlite:///{tmp}/point.db", args.ops, args.repeat)
    if args.postgres and args.only in (None, "postgresql"):
        bench("postgresql", args.postgres, args.ops, args.repeat)
    if args.mariadb and args.only in (None, "mariadb"):
        bench("mariadb", args.mariadb, args.ops, args.repeat)


if __name__ == "__main__":
    main()

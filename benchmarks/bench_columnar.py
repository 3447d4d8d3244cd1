"""The columnar lane: a ready ``pyarrow.Table`` into a table, against the database's fastest
native ingest of the same table and against today's ``insert_many`` of the same rows.

    python benchmarks/bench_columnar.py [--rows 100000] [--repeat 3]
                                        [--backends sqlite,postgresql,mariadb]
                                        [--postgres URL] [--mariadb URL]

Rows: ``Mixed`` (int key, int, float, str, bool, naive datetime, ``str | None``, a Decimal
of two places) and ``Aware``, the same with an ``AwareDatetime`` (offsets +05:30, -03:00
and UTC). The input is ``to_arrow`` of the rows, made outside the clock; the peer gets the
same table in its natural form, also made outside the clock: each struct column (an aware
datetime, a Decimal with its scale) reduced to its ``value`` (the instant, the decimal),
and on SQLite the decimals as text (ADBC's SQLite driver takes no decimal type).

* SQLite: ``Store.insert_arrow`` against ADBC's ``adbc_ingest`` (``adbc-driver-sqlite``)
  appending to a table of the same columns (both WAL, ``synchronous=NORMAL``);
* PostgreSQL: against ADBC's ``adbc_ingest`` (``adbc-driver-postgresql``: binary COPY of
  the Arrow columns) appending to the table ADBC made of the table, given the same primary
  key as ours (without it the server skips the index: not the same work);
* MariaDB: against PyMySQL ``executemany`` of the table's rows (``to_pylist`` inside the
  clock).

Each cell also times ``insert_many`` of the rows as instances (made outside the clock):
the lane's speed over it is the second figure. Timed alternating (ours, peer, today),
best of ``--repeat``, tables emptied outside the clock; the row counts are checked.
Recorded under the bench name ``columnar``.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
from dataclasses import dataclass, fields
from datetime import UTC, timedelta, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import sqlalchemy as sa

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import Mixed, line, make_mixed, record  # noqa: E402
from bench_store import timed  # noqa: E402

from entityworks import AwareDatetime, Store, table, to_arrow  # noqa: E402


@table("aware_mixed")
@dataclass
class Aware:
    """``Mixed`` with an aware datetime."""

    id: int
    n: int
    x: float
    s: str
    flag: bool
    at: AwareDatetime
    note: str | None
    amount: Decimal


def make_aware(n: int) -> list[Aware]:
    zones = [UTC, timezone(timedelta(hours=5, minutes=30)), timezone(-timedelta(hours=3))]
    rng = random.Random(11)
    return [
        Aware(
            **{f.name: getattr(m, f.name) for f in fields(Mixed) if f.name != "at"},
            at=(m.at + timedelta(microseconds=rng.randrange(10**6))).replace(tzinfo=zones[i % 3]),
        )
        for i, m in enumerate(make_mixed(n))
    ]


ROWS = {"Mixed": make_mixed, "Aware": make_aware}


def natural(data: pa.Table, *, decimals_as_text: bool) -> pa.Table:
    """The peer's form of ``data``: struct columns reduced to their ``value``."""
    columns = []
    for name in data.column_names:
        column = data.column(name)
        if pa.types.is_struct(column.type):
            column = pc.struct_field(column, "value")
        if decimals_as_text and pa.types.is_decimal(column.type):
            column = column.cast(pa.string())
        columns.append(column)
    return pa.table(columns, names=data.column_names)


class Cell:
    """One backend: our Store and table, the peer's connection and table."""

    def __init__(self, backend: str, url: str | None, workdir: Path, cls: type) -> None:
        self.backend, self.cls = backend, cls
        self.store = Store(workdir / "ours.db") if backend == "sqlite" else Store(url or "")
        name = self.store.schema(cls).name
        self.peer_table = name + "_peer"
        if name in self.store.table_names():
            self.store.drop(cls)
        self.store.create(cls)
        self.url = url
        self.workdir = workdir
        self.peer: Any = None

    def clear_ours(self) -> None:
        if self.backend == "sqlite":
            self.store.delete(self.cls, where={})
            return
        word = "TRUNCATE" if self.backend == "postgresql" else "TRUNCATE TABLE"
        with self.store.engine.begin() as conn:
            conn.execute(sa.text(f"{word} {self.store.table(self.cls).name}"))

    # -- the peers ---------------------------------------------------------------------
    def open_peer(self, ready: pa.Table) -> None:
        if self.backend == "sqlite":
            import sqlite3

            import adbc_driver_sqlite.dbapi as adbc

            path = str(self.workdir / "peer.db")
            with sqlite3.connect(path) as raw:  # (the file keeps WAL mode)
                raw.execute("PRAGMA journal_mode=WAL")
            raw.close()
            # autocommit, each ingest in its own BEGIN ... COMMIT (a connection in a
            # transaction cannot set its synchronous level)
            self.peer = adbc.connect(path, autocommit=True)
            with self.peer.cursor() as cur:
                cur.execute("PRAGMA synchronous=NORMAL")
                cur.execute(f"DROP TABLE IF EXISTS {self.peer_table}")
                cur.adbc_ingest(self.peer_table, ready.slice(0, 0), mode="create")
            self.peer.commit()
        elif self.backend == "postgresql":
            import adbc_driver_postgresql.dbapi as adbc

            u = sa.make_url(self.url or "")
            dsn = u.set(drivername="postgresql").render_as_string(hide_password=False)
            self.peer = adbc.connect(dsn)
            with self.peer.cursor() as cur:
                cur.execute(f"DROP TABLE IF EXISTS {self.peer_table}")
                cur.adbc_ingest(self.peer_table, ready.slice(0, 0), mode="create")
                # the same key as ours: a primary key's index is maintained by both sides
                cur.execute(f"ALTER TABLE {self.peer_table} ADD PRIMARY KEY (id)")
            self.peer.commit()
        else:
            import pymysql

            u = sa.make_url(self.url or "")
            self.peer = pymysql.connect(
                host=u.host or "127.0.0.1",
                port=u.port or 3306,
                user=u.username or "root",
                password=u.password or "",
                database=u.database,
                charset="utf8mb4",
                autocommit=False,
            )
            with self.peer.cursor() as cur:
                cur.execute(f"DROP TABLE IF EXISTS {self.peer_table}")
                cur.execute(
                    f"CREATE TABLE {self.peer_table} (id BIGINT PRIMARY KEY, n BIGINT NOT NULL, "
                    "x DOUBLE NOT NULL, s TEXT NOT NULL, flag BOOL NOT NULL, "
                    "at DATETIME(6) NOT NULL, note TEXT, amount DECIMAL(65,30) NOT NULL)"
                )
            self.peer.commit()

    def clear_peer(self) -> None:
        with self.peer.cursor() as cur:
            cur.execute(f"DELETE FROM {self.peer_table}")
        self.peer.commit()

    def peer_insert(self, ready: pa.Table) -> None:
        if self.backend == "sqlite":
            with self.peer.cursor() as cur:
                cur.execute("BEGIN")
                cur.adbc_ingest(self.peer_table, ready, mode="append")
                cur.execute("COMMIT")
            return
        if self.backend == "postgresql":
            with self.peer.cursor() as cur:
                cur.adbc_ingest(self.peer_table, ready, mode="append")
            self.peer.commit()
            return
        columns = [ready.column(n).to_pylist() for n in ready.column_names]
        names = ", ".join(ready.column_names)
        marks = ", ".join(["%s"] * len(columns))
        with self.peer.cursor() as cur:
            cur.executemany(
                f"INSERT INTO {self.peer_table} ({names}) VALUES ({marks})",
                list(zip(*columns, strict=True)),
            )
        self.peer.commit()

    def peer_count(self) -> int:
        with self.peer.cursor() as cur:
            cur.execute(f"SELECT count(*) FROM {self.peer_table}")
            return int(cur.fetchone()[0])

    def close(self) -> None:
        with self.peer.cursor() as cur:
            cur.execute(f"DROP TABLE IF EXISTS {self.peer_table}")
        self.peer.commit()
        self.peer.close()
        self.store.drop(self.cls)
        self.store.close()


TITLES = {"sqlite": "SQLite", "postgresql": "PostgreSQL", "mariadb": "MariaDB"}
PEERS = {
    "sqlite": "ADBC adbc_ingest",
    "postgresql": "ADBC adbc_ingest (binary COPY)",
    "mariadb": "PyMySQL executemany",
}


def run_cell(backend: str, url: str | None, label: str, n: int, repeat: int) -> None:
    objs = ROWS[label](n)
    cls = type(objs[0])
    data = to_arrow(cls, objs)
    ready = natural(data, decimals_as_text=backend == "sqlite")
    with tempfile.TemporaryDirectory() as tmp:
        cell = Cell(backend, url, Path(tmp), cls)
        try:
            cell.open_peer(ready)
            ours_t, peer_t, today_t = timed(
                [
                    (cell.clear_ours, lambda: cell.store.insert_arrow(cls, data)),
                    (cell.clear_peer, lambda: cell.peer_insert(ready)),
                    (cell.clear_ours, lambda: cell.store.insert_many(objs)),
                ],
                repeat,
            )
            if cell.store.count(cls) != n or cell.peer_count() != n:
                raise AssertionError("a side stored another number of rows")
        finally:
            if cell.peer is not None:
                cell.close()
    title = TITLES[backend]
    load = os.getloadavg()[0]
    row = f"{label}, {n:,} rows"
    line(f"{title} from_arrow {row}", PEERS[backend], n / peer_t, n / ours_t)
    line(f"{title} from_arrow {row}", "insert_many", n / today_t, n / ours_t)
    print(f"  (load {load:.2f})")
    record("columnar", f"{title} from_arrow", row, PEERS[backend], n / peer_t, n / ours_t, "rows/s")
    record(
        "columnar",
        f"{title} from_arrow",
        row,
        "insert_many of the objects",
        n / today_t,
        n / ours_t,
        "rows/s",
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--backends", default="sqlite,postgresql,mariadb")
    parser.add_argument("--row", default="Mixed,Aware")
    parser.add_argument("--postgres", default=os.environ.get("ENTITYWORKS_TEST_POSTGRES_URL"))
    parser.add_argument("--mariadb", default=os.environ.get("ENTITYWORKS_TEST_MARIADB_URL"))
    args = parser.parse_args(argv)
    urls = {"sqlite": None, "postgresql": args.postgres, "mariadb": args.mariadb}
    for backend in args.backends.split(","):
        if backend != "sqlite" and not urls[backend]:
            print(f"{TITLES[backend]}: no URL (--postgres / --mariadb or the test env); skipped")
            continue
        for label in args.row.split(","):
            run_cell(backend, urls[backend], label, args.rows, args.repeat)


if __name__ == "__main__":
    main()

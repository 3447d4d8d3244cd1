"""Store throughput against the honest alternatives, timed in the same run.

    python benchmarks/bench_store.py [--rows 200000] [--postgres URL]

SQLite runs on a file in a temporary directory; both sides use WAL with synchronous=NORMAL
(the Store's settings) so that only the code path differs.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import tempfile
from operator import attrgetter
from pathlib import Path
from typing import Any

import sqlalchemy as sa

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import Row8, alternate, best_of, line, make_rows  # noqa: E402

from entityworks import Store  # noqa: E402

NAMES = ("id", "a", "b", "c", "d", "e", "label", "value")
DDL = ("CREATE TABLE row8 (id INTEGER PRIMARY KEY, a BIGINT NOT NULL, b BIGINT NOT NULL, "
       "c BIGINT NOT NULL, d BIGINT NOT NULL, e BIGINT NOT NULL, label TEXT, "
       "value DOUBLE NOT NULL)")


def as_dicts(rows: list[Row8]) -> list[dict]:
    getter = attrgetter(*NAMES)
    return [dict(zip(NAMES, getter(r), strict=True)) for r in rows]


def raw_connection(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    return conn


def _sqlmodel_insert(rows: list[Row8], path: Path) -> float:
    """Time the ORM way: SQLModel objects added to a session and committed once."""
    import time

    from sqlmodel import Field, Session, SQLModel, create_engine

    class Row8Model(SQLModel, table=True):  # type: ignore[call-arg]
        __tablename__ = "row8"
        id: int = Field(primary_key=True)
        a: int
        b: int
        c: int
        d: int
        e: int
        label: str | None = None
        value: float

    engine = create_engine(f"sqlite:///{path}")
    SQLModel.metadata.create_all(engine)
    getter = attrgetter(*NAMES)
    start = time.perf_counter()
    with Session(engine) as session:
        session.add_all(Row8Model(**dict(zip(NAMES, getter(r), strict=True))) for r in rows)
        session.commit()
    elapsed = time.perf_counter() - start
    engine.dispose()
    SQLModel.metadata.clear()
    return elapsed


def sqlite_benchmarks(rows: list[Row8], workdir: Path) -> None:
    n = len(rows)
    counter = iter(range(10**6))

    def fresh(name: str) -> Path:
        return workdir / f"{name}-{next(counter)}.db"

    # -- insert ----------------------------------------------------------------------------
    def raw_insert() -> None:
        conn = raw_connection(fresh("raw"))
        conn.execute(DDL)
        getter = attrgetter(*NAMES)
        with conn:
            conn.executemany("INSERT INTO row8 VALUES (?,?,?,?,?,?,?,?)", map(getter, rows))
        conn.close()

    stores: list[Store] = []

    def new_store() -> None:
        store = Store(fresh("ours"))
        store.create(Row8)
        stores.append(store)

    def ours_insert() -> None:
        stores[-1].insert_many(rows)

    raw_t = best_of(raw_insert)
    ours_t = best_of(ours_insert, setup=new_store)
    line("SQLite insert_many", "sqlite3 executemany", n / raw_t, n / ours_t)

    def core_insert() -> None:
        engine = sa.create_engine(f"sqlite:///{fresh('core')}")
        table = Store(engine.url).table(Row8)
        table.metadata.create_all(engine)
        with engine.begin() as conn:
            conn.execute(table.insert(), as_dicts(rows))
        engine.dispose()

    core_t = best_of(core_insert, repeat=1)
    line("  peer: SQLAlchemy Core executemany", "sqlite3 executemany", n / raw_t, n / core_t)
    try:
        import pandas as pd

        frame = pd.DataFrame([attrgetter(*NAMES)(r) for r in rows], columns=list(NAMES))

        def pandas_insert() -> None:
            conn = raw_connection(fresh("pandas"))
            frame.to_sql("row8", conn, index=False)
            conn.close()

        pandas_t = best_of(pandas_insert, repeat=1)
        line("  peer: pandas to_sql (frame prebuilt)", "sqlite3 executemany", n / raw_t,
             n / pandas_t)
    except ImportError:
        print("  peer: pandas not installed")
    try:
        sqlmodel_t = _sqlmodel_insert(rows, fresh("sqlmodel"))
        line("  peer: SQLModel session.add_all", "sqlite3 executemany", n / raw_t,
             n / sqlmodel_t)
    except ImportError:
        print("  peer: SQLModel not installed (pip install -e '.[bench]'); skipped")

    # -- select ----------------------------------------------------------------------------
    path = stores[-1].url.database

    def raw_select() -> None:
        conn = raw_connection(Path(path))
        out = [Row8(*r) for r in conn.execute("SELECT * FROM row8").fetchall()]
        assert len(out) == n
        conn.close()

    def ours_select() -> None:
        out = list(stores[-1].select(Row8))
        assert len(out) == n

    raw_t, ours_t = alternate(raw_select, ours_select)
    line("SQLite select -> dataclasses", "fetchall + cls(*row)", n / raw_t, n / ours_t)
    assert list(stores[-1].select(Row8, order_by="id")) == rows
    for s in stores:
        s.close()


def point_benchmarks(workdir: Path, n: int = 2_000) -> None:
    """One row per call: ``get``, ``insert``, ``update``, ``delete`` against raw sqlite3 doing
    the same work (each write its own ``BEGIN IMMEDIATE`` ... ``COMMIT``), alternated.
    Target (issue 12): each call within 3x of raw sqlite3."""
    import dataclasses

    rows = make_rows(2 * n, seed=11)
    raw = raw_connection(workdir / "point-raw.db")
    raw.isolation_level = None
    raw.execute(DDL)
    raw.execute("BEGIN")
    raw.executemany("INSERT INTO row8 VALUES (?,?,?,?,?,?,?,?)", map(attrgetter(*NAMES), rows))
    raw.execute("COMMIT")
    store = Store(workdir / "point-ours.db")
    store.create(Row8)
    store.insert_many(rows)
    getter = attrgetter(*NAMES)
    fresh = make_rows(6 * n, seed=12)
    raw_new = iter(dataclasses.replace(r, id=10**6 + i) for i, r in enumerate(fresh))
    our_new = iter(dataclasses.replace(r, id=10**6 + i) for i, r in enumerate(fresh))
    raw_del = iter(range(1, 2 * n + 1))
    our_del = iter(range(1, 2 * n + 1))
    updated = [dataclasses.replace(r, a=r.a + 1, label="changed") for r in rows[:n]]

    def raw_get() -> None:
        for i in range(1, n + 1):
            Row8(*raw.execute("SELECT * FROM row8 WHERE id = ?", (i,)).fetchone())

    def our_get() -> None:
        for i in range(1, n + 1):
            store.get(Row8, i)

    def raw_write(sql: str, values: Any) -> None:
        raw.execute("BEGIN IMMEDIATE")
        raw.execute(sql, values)
        raw.execute("COMMIT")

    def raw_insert() -> None:
        for _ in range(n // 4):
            raw_write("INSERT INTO row8 VALUES (?,?,?,?,?,?,?,?)", getter(next(raw_new)))

    def our_insert() -> None:
        for _ in range(n // 4):
            store.insert(next(our_new))

    update_sql = ("UPDATE row8 SET a = ?, b = ?, c = ?, d = ?, e = ?, label = ?, value = ? "
                  "WHERE id = ?")

    def raw_update() -> None:
        for r in updated[: n // 4]:
            raw_write(update_sql, (*getter(r)[1:], r.id))

    def our_update() -> None:
        for r in updated[: n // 4]:
            store.update(r)

    def raw_delete() -> None:
        for _ in range(n // 8):
            raw_write("DELETE FROM row8 WHERE id = ?", (next(raw_del),))

    def our_delete() -> None:
        for _ in range(n // 8):
            store.delete(Row8(next(our_del), 0, 0, 0, 0, 0, None, 0.0))

    for name, base, ours, calls in [("get", raw_get, our_get, n),
                                    ("insert", raw_insert, our_insert, n // 4),
                                    ("update", raw_update, our_update, n // 4),
                                    ("delete", raw_delete, our_delete, n // 8)]:
        base_t, ours_t = alternate(base, ours, repeat=3)
        print(f"SQLite {name:<7} one row per call   raw sqlite3: {base_t / calls * 1e6:8.1f} us   "
              f"ours: {ours_t / calls * 1e6:8.1f} us   {ours_t / base_t:5.2f}x the time "
              f"(target <= 3x; load {os.getloadavg()[0]:.2f})")
    raw.close()
    store.close()


def postgres_benchmarks(rows: list[Row8], url: str) -> None:
    n = len(rows)
    store = Store(url)
    store.drop(Row8)
    store.create(Row8)
    table = store.table(Row8)
    engine = sa.create_engine(url)

    def clear() -> None:
        store.delete(Row8, where={})

    def core_insert() -> None:
        with engine.begin() as conn:
            conn.execute(table.insert(), as_dicts(rows))

    def ours_insert() -> None:
        store.insert_many(rows)

    getter = attrgetter(*NAMES)
    columns = ", ".join(NAMES)

    def psycopg_copy(binary: bool) -> None:
        """What a user of psycopg alone writes: one COPY, ``write_row`` per object's tuple
        (text format, or binary with the column types set)."""
        raw = engine.raw_connection()
        try:
            conn = raw.driver_connection
            sql = f"COPY row8 ({columns}) FROM STDIN" + (" (FORMAT BINARY)" if binary else "")
            with conn.cursor() as cursor, cursor.copy(sql) as copy:
                if binary:
                    copy.set_types(["int8"] * 6 + ["text", "float8"])
                write = copy.write_row
                for r in rows:
                    write(getter(r))
            conn.commit()
        finally:
            raw.close()

    core_t = best_of(core_insert, repeat=2, setup=clear)
    ours_t = best_of(ours_insert, repeat=2, setup=clear)
    line("PostgreSQL insert_many (COPY)", "SQLAlchemy Core executemany", n / core_t, n / ours_t)
    # psycopg's own COPY loops, alternated with ours (each run into an emptied table)
    timings: dict[str, float] = {}
    for _ in range(3):
        for name, fn in (("text", lambda: psycopg_copy(False)),
                         ("binary", lambda: psycopg_copy(True)), ("ours", ours_insert)):
            clear()
            took = best_of(fn, repeat=1)
            timings[name] = min(timings.get(name, float("inf")), took)
    best = min(("text", "binary"), key=timings.__getitem__)
    line("PostgreSQL insert_many (COPY)", f"psycopg copy.write_row ({best})",
         n / timings[best], n / timings["ours"])
    print(f"  (psycopg text {n / timings['text']:,.0f} rows/s, binary "
          f"{n / timings['binary']:,.0f} rows/s; target ratio >= 0.85; "
          f"load {os.getloadavg()[0]:.2f})")
    raw_t = best_of(lambda: list(store.select(Row8)), repeat=2)
    print(f"PostgreSQL select -> dataclasses       ours: {n / raw_t:>12,.0f} rows/s")
    store.drop(Row8)
    store.close()
    engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--point-only", action="store_true",
                        help="only the single-row get/insert/update/delete figures")
    parser.add_argument("--postgres", default=os.environ.get("ENTITYWORKS_TEST_POSTGRES_URL"))
    parser.add_argument("--postgres-only", action="store_true",
                        help="only the PostgreSQL figures (insert_many via COPY, select)")
    args = parser.parse_args()
    rows = make_rows(args.rows)
    print(f"{args.rows:,} rows of an 8-column dataclass; CPU count {os.cpu_count()}")
    if args.postgres_only:
        postgres_benchmarks(rows, args.postgres)
        return
    with tempfile.TemporaryDirectory() as tmp:
        if not args.point_only:
            sqlite_benchmarks(rows, Path(tmp))
        point_benchmarks(Path(tmp))
    if args.point_only:
        return
    if args.postgres:
        postgres_benchmarks(rows, args.postgres)
    else:
        print("PostgreSQL: no URL (--postgres or ENTITYWORKS_TEST_POSTGRES_URL); skipped")


if __name__ == "__main__":
    main()

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

    core_t = best_of(core_insert, repeat=2, setup=clear)
    ours_t = best_of(ours_insert, repeat=2, setup=clear)
    line("PostgreSQL insert_many (COPY)", "SQLAlchemy Core executemany", n / core_t, n / ours_t)
    raw_t = best_of(lambda: list(store.select(Row8)), repeat=2)
    print(f"PostgreSQL select -> dataclasses       ours: {n / raw_t:>12,.0f} rows/s")
    store.drop(Row8)
    store.close()
    engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--postgres", default=os.environ.get("ENTITYWORKS_TEST_POSTGRES_URL"))
    args = parser.parse_args()
    rows = make_rows(args.rows)
    print(f"{args.rows:,} rows of an 8-column dataclass; CPU count {os.cpu_count()}")
    with tempfile.TemporaryDirectory() as tmp:
        sqlite_benchmarks(rows, Path(tmp))
    if args.postgres:
        postgres_benchmarks(rows, args.postgres)
    else:
        print("PostgreSQL: no URL (--postgres or ENTITYWORKS_TEST_POSTGRES_URL); skipped")


if __name__ == "__main__":
    main()

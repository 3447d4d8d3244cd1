"""The write pipeline: ``insert_many`` with keys generated against keys given and the raw
driver, and the peak memory of ``insert_many`` from a generator.

    python benchmarks/bench_pipeline.py [--rows N] [--repeat N] [--memory-rows N]
                                        [--only sqlite] [--postgres URL] [--mariadb URL]

Row: ``Row8`` (an int key, five ints, an ``Optional[str]`` with nulls, a float). For each
backend, timed alternating (each after a full collect, best of 3, the table emptied and
the objects made outside the clock; ``--repeat`` rounds on a busy machine):

* ``insert_many`` of rows whose key is ``None`` (generated, written back to each object);
* ``insert_many`` of the same rows with their keys given;
* the raw driver storing the same rows: SQLite ``sqlite3.executemany`` (keys generated),
  PostgreSQL psycopg's binary COPY, MariaDB PyMySQL's ``executemany``.

Memory: ``insert_many`` of a generator of ``--memory-rows`` rows (1M) on an SQLite file, in
a subprocess; the figure is its peak resident memory above what the interpreter held once
entityworks was imported and the table created. PostgreSQL and MariaDB run when their URL
is given (or ``ENTITYWORKS_TEST_POSTGRES_URL`` / ``ENTITYWORKS_TEST_MARIADB_URL`` is set).
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path
from typing import Any

import sqlalchemy as sa

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import record  # noqa: E402

from entityworks import Store, table  # noqa: E402

FIELDS = ("a", "b", "c", "d", "e", "label", "value")


@table("bench_pipeline")
@dataclass
class Row8:
    """``Row8`` of the other benchmarks, its key generated where it is ``None``."""

    id: int | None
    a: int
    b: int
    c: int
    d: int
    e: int
    label: str | None
    value: float


def make(n: int, keys: bool, seed: int = 7) -> list[Row8]:
    rng = random.Random(seed)
    return [
        Row8(
            i if keys else None,
            rng.randrange(1000),
            rng.randrange(10**6),
            i * 3,
            -i,
            rng.randrange(2),
            None if i % 5 == 0 else f"label-{i % 977}",
            rng.random(),
        )
        for i in range(1, n + 1)
    ]


def alternate(
    runs: list[tuple[Callable[[], Any], Callable[[], Any]]], repeat: int = 3
) -> list[float]:
    """Best wall time of each ``(setup, run)``, the runs interleaved, setup outside the clock."""
    best = [float("inf")] * len(runs)
    for _ in range(repeat):
        for i, (setup, run) in enumerate(runs):
            setup()
            gc.collect()
            start = time.perf_counter()
            run()
            best[i] = min(best[i], time.perf_counter() - start)
    return best


def report(backend: str, rows: int, generated: float, given: float, raw: float, peer: str) -> None:
    print(
        f"{backend:<11} {rows:>8,} rows   keys generated {generated:7.3f} s   keys given "
        f"{given:7.3f} s   ratio {given / generated:5.2f}x   {peer} {raw:7.3f} s   "
        f"generated vs raw {raw / generated:5.2f}x"
    )
    record(
        "pipeline",
        "insert_many, keys generated",
        "Row8",
        "keys given",
        given,
        generated,
        "s",
        lower_is_better=True,
    )
    record(
        "pipeline",
        "insert_many, keys generated",
        "Row8",
        peer,
        raw,
        generated,
        "s",
        lower_is_better=True,
    )


def bench_backend(store: Store, backend: str, rows: int, repeat: int = 3) -> None:
    store.drop(Row8)
    store.create(Row8)
    objs: dict[str, list[Row8]] = {}

    def empty() -> None:
        # PostgreSQL: TRUNCATE, not DELETE, so that keys given again do not meet the dead
        # index entries of the previous round (which would slow the given side only; the
        # sequence is not reset, generated keys stay new)
        if backend == "postgresql":
            with store.engine.begin() as conn:
                conn.execute(sa.text(f"TRUNCATE {store.table(Row8).name}"))
        else:
            empty()

    def emptied(kind: str) -> Callable[[], None]:
        def setup() -> None:
            empty()
            objs[kind] = make(rows, keys=kind == "given")

        return setup

    table_name = store.table(Row8).name
    values = attrgetter(*FIELDS)
    if backend == "sqlite":
        path = str(store.url.database)

        def raw() -> None:
            conn = sqlite3.connect(path, isolation_level=None)
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("BEGIN IMMEDIATE")
            conn.executemany(
                f"INSERT INTO {table_name} (a, b, c, d, e, label, value) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                map(values, objs["raw"]),
            )
            conn.execute("COMMIT")
            conn.close()

        peer = "sqlite3.executemany"
    elif backend == "postgresql":
        import psycopg

        dsn = store.url.set(drivername="postgresql").render_as_string(hide_password=False)

        def raw() -> None:
            every = attrgetter("id", *FIELDS)
            with psycopg.connect(dsn) as conn, conn.cursor() as cur:
                sql = (
                    f"COPY {table_name} (id, a, b, c, d, e, label, value) "
                    "FROM STDIN (FORMAT BINARY)"
                )
                with cur.copy(sql) as copy:
                    copy.set_types(
                        ["int8", "int8", "int8", "int8", "int8", "int8", "text", "float8"]
                    )
                    for obj in objs["raw"]:
                        copy.write_row(every(obj))

        peer = "psycopg binary COPY"
    else:
        import pymysql

        url = store.url

        def raw() -> None:
            conn = pymysql.connect(
                host=url.host,
                port=url.port or 3306,
                user=url.username,
                password=url.password or "",
                database=url.database,
                charset="utf8mb4",
            )
            with conn.cursor() as cur:
                cur.executemany(
                    f"INSERT INTO {table_name} (a, b, c, d, e, label, value) "
                    "VALUES (%s, %s, %s, %s, %s, %s, %s)",
                    [values(o) for o in objs["raw"]],
                )
            conn.commit()
            conn.close()

        peer = "PyMySQL executemany"

    def raw_setup() -> None:
        empty()
        objs["raw"] = make(rows, keys=backend == "postgresql")

    generated, given, raw_time = alternate(
        [
            (emptied("generated"), lambda: store.insert_many(objs["generated"])),
            (emptied("given"), lambda: store.insert_many(objs["given"])),
            (raw_setup, raw),
        ],
        repeat,
    )
    assert objs["generated"][-1].id is not None
    report(backend, rows, generated, given, raw_time, peer)
    store.drop(Row8)


_MEMORY_CHILD = """
import resource, sys
from dataclasses import dataclass
sys.path.insert(0, {here!r})
from bench_pipeline import Row8
from entityworks import Store

def rss_kb(field):
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field):
                return int(line.split()[1])

store = Store({url!r})
store.create(Row8)
store.count(Row8)
base = rss_kb("VmRSS:")
rows = (
    Row8(None, i, i * 7, i * 3, -i, i % 2, None if i % 5 == 0 else "label-%d" % (i % 977), i / 3)
    for i in range({rows})
)
assert store.insert_many(rows) == {rows}
peak = rss_kb("VmHWM:")
print(base, peak)
"""


def memory(rows: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'memory.db'}"
        code = _MEMORY_CHILD.format(here=str(Path(__file__).resolve().parent), url=url, rows=rows)
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout.split()
    base, peak = int(out[0]), int(out[1])
    above = (peak - base) / 1024
    print(
        f"memory      {rows:>8,} rows from a generator: peak {peak / 1024:7.1f} MB, "
        f"{above:6.1f} MB above the baseline of {base / 1024:.1f} MB"
    )
    record(
        "pipeline",
        "insert_many from a generator, MB above baseline",
        "Row8",
        "-",
        above,
        above,
        "MB",
        lower_is_better=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3, help="rounds, the best kept")
    parser.add_argument("--memory-rows", type=int, default=1_000_000)
    parser.add_argument("--only", choices=["sqlite", "postgresql", "mariadb", "memory"])
    parser.add_argument("--postgres", default=os.environ.get("ENTITYWORKS_TEST_POSTGRES_URL"))
    parser.add_argument("--mariadb", default=os.environ.get("ENTITYWORKS_TEST_MARIADB_URL"))
    args = parser.parse_args()
    print(f"load: {os.getloadavg()[0]:.2f} (1 min)")
    urls: dict[str, str | None] = {"postgresql": args.postgres, "mariadb": args.mariadb}
    for backend in ("sqlite", "postgresql", "mariadb"):
        if args.only not in (None, backend):
            continue
        if backend == "sqlite":
            with tempfile.TemporaryDirectory() as tmp:
                store = Store(f"sqlite:///{Path(tmp) / 'bench.db'}")
                bench_backend(store, backend, args.rows, args.repeat)
                store.close()
            continue
        url = urls[backend]
        if not url:
            continue
        try:
            store = Store(url)
            store.table_names()
        except sa.exc.DBAPIError as exc:  # a server that cannot serve: skipped
            print(f"{backend}: skipped ({exc.__class__.__name__})")
            continue
        bench_backend(store, backend, args.rows, args.repeat)
        store.close()
    if args.only in (None, "memory"):
        memory(args.memory_rows)


if __name__ == "__main__":
    main()

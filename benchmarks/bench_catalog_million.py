"""A million maps: build a catalog of 1,000,000 small maps on SQLite and on PostgreSQL and
report the build time, the size, every designer query's latency, and the peak memory while
streaming a query's results. A benchmark, not a test (it takes a while).

    python benchmarks/bench_catalog_million.py                       # SQLite, and PostgreSQL
    python benchmarks/bench_catalog_million.py --rows 200000 --postgres ''   # SQLite only

The rows cycle through a pool of real small maps (cellular 40x21 and 100x50, caves 60x40 and
100x50, islands 40x30, dungeons 60x40, with their caves, rooms and corridors), each row with a
seed of its own, written by ``Store.insert_many`` in batches (explicit keys, so PostgreSQL
takes the COPY path). PostgreSQL must be a scratch database: its catalog tables are replaced.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import sqlalchemy as sa  # noqa: E402
from bench_catalog import (  # noqa: E402
    designer_queries,
    fresh,
    load,
    map_pool,
    time_query,
)

from entityworks import Store  # noqa: E402
from entityworks.catalog import TABLES, MapRecord, upgrade_catalog  # noqa: E402


def peak_rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def reset_peak_rss() -> bool:
    """Reset VmHWM to the current RSS (Linux), so a peak measures one phase alone."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def build(store: Store, pool: list[MapRecord], total: int, batch: int) -> float:
    start = time.perf_counter()
    made = 0
    last = start
    while made < total:
        n = min(batch, total - made)
        rows = [fresh(pool[(made + i) % len(pool)], seed=1_000_000 + made + i) for i in range(n)]
        for i, row in enumerate(rows):
            row.id = made + i + 1
        store.insert_many(rows)
        made += n
        if time.perf_counter() - last > 60:
            last = time.perf_counter()
            print(f"    {made:,} rows, {made / (last - start):,.0f} rows/s ({load()})", flush=True)
    return time.perf_counter() - start


def stream(store: Store, kind: str) -> tuple[int, float, float]:
    """Rows of ``kind`` streamed through ``select``; (count, seconds, peak RSS growth MB)."""
    reset_peak_rss()
    before = peak_rss_mb()
    start = time.perf_counter()
    count = 0
    for record in store.select(MapRecord, where={"kind": kind}):
        count += record.grid.shape[0] > 0
    seconds = time.perf_counter() - start
    return count, seconds, peak_rss_mb() - before


def report_queries(store: Store, total: int) -> None:
    for name, query in designer_queries(total).items():
        best = time_query(store, query, repeat=7)
        print(f"  {name:<68} {best * 1e3:8.3f} ms   {'ok' if best <= 0.002 else 'over 2 ms'}")


def run(
    store: Store,
    label: str,
    pool: list[MapRecord],
    total: int,
    batch: int,
    size: Any,
    reuse: bool = False,
) -> None:
    if reuse:  # measure a catalog an earlier run built
        total = store.count(MapRecord)
        print(f"{label}: the {total:,} maps already there ({load()})", flush=True)
    else:
        print(f"{label}: building {total:,} maps ({load()})", flush=True)
        took = build(store, pool, total, batch)
        print(f"  built in {took:,.0f} s = {total / took:,.0f} maps/s ({load()})", flush=True)
    if store.dialect.name == "postgresql":  # fresh statistics, as after any bulk load
        with store.engine.begin() as conn:
            conn.exec_driver_sql("ANALYZE")
    print(f"  size {size() / 2**20:,.0f} MB = {size() / total:,.0f} bytes/map", flush=True)
    report_queries(store, total)
    count, seconds, growth = stream(store, "cellular")
    print(
        f"  streaming select(kind='cellular'): {count:,} maps in {seconds:.1f} s "
        f"({count / seconds:,.0f} maps/s), peak RSS grew {growth:.1f} MB "
        f"(peak {peak_rss_mb():.0f} MB) ({load()})",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--batch", type=int, default=10_000)
    parser.add_argument("--postgres", default=os.environ.get("ENTITYWORKS_TEST_POSTGRES_URL"))
    parser.add_argument("--folder", default=None, help="where the SQLite file goes")
    parser.add_argument("--skip-sqlite", action="store_true")
    parser.add_argument(
        "--reuse-postgres",
        action="store_true",
        help="measure the catalog already in --postgres instead of building",
    )
    parser.add_argument("--keep", action="store_true", help="leave the PostgreSQL catalog")
    args = parser.parse_args()
    pool = map_pool(600)
    print(f"pool of {len(pool)} real small maps; {os.cpu_count()} CPUs ({load()})")
    if not args.skip_sqlite:
        with tempfile.TemporaryDirectory(dir=args.folder) as tmp:
            path = Path(tmp) / "million.db"
            store = Store(path)
            upgrade_catalog(store)

            def sqlite_size() -> int:
                conn = sqlite3.connect(path)
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                conn.close()
                return path.stat().st_size

            run(store, "SQLite", pool, args.rows, args.batch, sqlite_size)
            store.close()
    if args.postgres:
        store = Store(args.postgres)
        if not args.reuse_postgres:
            for cls in TABLES.values():
                store.drop(cls)
            with store.engine.begin() as conn:
                conn.exec_driver_sql("DROP TABLE IF EXISTS entityworks_version")
        upgrade_catalog(store)

        def pg_size() -> int:
            pg_class = sa.table(
                "pg_class", sa.column("oid"), sa.column("relkind"), sa.column("relname")
            )
            stmt = sa.select(sa.func.sum(sa.func.pg_total_relation_size(pg_class.c.oid))).where(
                pg_class.c.relkind == "r", pg_class.c.relname.like("maps%")
            )
            with store.engine.connect() as conn:
                return int(conn.execute(stmt).scalar_one())

        run(store, "PostgreSQL", pool, args.rows, args.batch, pg_size, reuse=args.reuse_postgres)
        if not args.keep:
            for cls in TABLES.values():
                store.drop(cls)
        store.close()


if __name__ == "__main__":
    main()

"""The level catalog at scale (issue 12): storage per map, grid decode, generation's storage
share and the designer queries on 100,000 maps, each against the v0.1 form in the same run.

    python benchmarks/bench_catalog.py                    # everything (several minutes)
    python benchmarks/bench_catalog.py --maps 2000 --rows 100000 --only storage,decode
    python benchmarks/bench_catalog.py --postgres URL     # also the queries on PostgreSQL

* storage: the same 150x150 dungeons (rooms and corridors included) stored at revision
  0001 (``.npy`` grids mid-row, JSON corridor paths; the baseline) and at head; bytes per
  map of the SQLite file after a checkpoint. Target <= 6 KB.
* decode: ``np.lib.format.read_array`` of the ``.npy`` bytes (baseline) against
  ``catalog.decode_grid`` of the stored form, alternated. Target <= 10 us.
* generate: ``generate_into(store, "dungeon", N, workers=cores)`` (what ``entityworks
  generate dungeon --count N`` runs: the workers encode the rows) and, alternated with it,
  the same generation with nothing stored, and with the objects sent to this process to be
  encoded and stored here (the design before). Storage's share of the wall time and this
  process's CPU time per map while storing. Target: storage <= 15 % of the wall time.
* cluster: the same ``generate`` on a local Dask cluster (``--cluster``) against the
  process pool with as many workers, alternated.
* queries: a catalog of ``--rows`` maps at 0001 (no composite indexes, the grid mid-row;
  baseline) and at head; every designer query, best of several runs. Target <= 2 ms.

Timings on a shared machine are noisy: the load average is printed beside each section.
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import os
import random
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import alternate  # noqa: E402

from entityworks import Store, col  # noqa: E402
from entityworks.catalog import (  # noqa: E402
    STORE_BATCH,
    MapRecord,
    decode_grid,
    find_maps,
    generate_into,
    generate_maps,
    largest_maps,
    sample_maps,
    save_maps,
    single_region_maps,
    upgrade_catalog,  # noqa: E402
)
from entityworks.migrate import alembic_config  # noqa: E402


def load() -> str:
    return f"load {os.getloadavg()[0]:.2f}"


def cores() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def revision_0001() -> Any:
    """The frozen classes of revision 0001: the v0.1 storage form."""
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(alembic_config()).get_revision("0001_catalog").module


def as_0001(old: Any, record: MapRecord) -> Any:
    """``record`` as revision 0001 stored it (its own classes: ``.npy`` grid, JSON paths)."""
    return old.MapRecord(
        None,
        record.kind,
        record.generator,
        record.parameters,
        record.seed,
        record.width,
        record.height,
        record.grid,
        record.open_ratio,
        record.region_count,
        record.largest_region,
        record.created_at,
        caves=[old.MapCave(**dataclasses.asdict(c)) for c in record.caves],
        rooms=[old.MapRoom(**dataclasses.asdict(r)) for r in record.rooms],
        corridors=[old.MapCorridor(**dataclasses.asdict(c)) for c in record.corridors],
    )


def fresh(record: MapRecord, **changes: Any) -> MapRecord:
    """A copy of ``record`` without a key (child lists copied), for inserting again."""
    return dataclasses.replace(
        record,
        id=None,
        caves=list(record.caves),
        rooms=list(record.rooms),
        corridors=list(record.corridors),
        **changes,
    )


def file_bytes(path: Path) -> int:
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return path.stat().st_size


def open_at(path: Path, revision: str) -> Store:
    store = Store(path)
    upgrade_catalog(store, revision)
    return store


# -- storage and decode -----------------------------------------------------------------------


def bench_storage(maps: list[MapRecord], folder: Path) -> dict[str, float]:
    old = revision_0001()
    base = open_at(folder / "v01.db", "0001_catalog")
    base.insert_many([as_0001(old, m) for m in maps])
    base.close()
    ours = open_at(folder / "head.db", "head")
    ours.insert_many([fresh(m) for m in maps])
    ours.close()
    n = len(maps)
    base_size, ours_size = file_bytes(folder / "v01.db") / n, file_bytes(folder / "head.db") / n
    conn = sqlite3.connect(folder / "head.db")
    grid = conn.execute("SELECT avg(length(grid)) FROM maps").fetchone()[0]
    path = conn.execute("SELECT avg(length(path)) FROM maps_corridors").fetchone()[0]
    conn.close()
    conn = sqlite3.connect(folder / "v01.db")
    old_grid = conn.execute("SELECT avg(length(grid)) FROM maps").fetchone()[0]
    old_path = conn.execute("SELECT avg(length(path)) FROM maps_corridors").fetchone()[0]
    per_map = conn.execute("SELECT count(*) FROM maps_corridors").fetchone()[0] / n
    conn.close()
    print(f"storage, {n} dungeons 150x150 with rooms and corridors ({load()})")
    print(
        f"  baseline (revision 0001: .npy grid, JSON paths): {base_size:8,.0f} bytes/map "
        f"(grid {old_grid:,.0f} B, corridor path {old_path:,.0f} B x {per_map:.1f})"
    )
    print(
        f"  ours (packed grid last, packed paths, indexes):  {ours_size:8,.0f} bytes/map "
        f"(grid {grid:,.0f} B, corridor path {path:,.0f} B x {per_map:.1f})"
    )
    print(f"  ratio ours/baseline: {ours_size / base_size:.3f}   (target <= 6,144 bytes/map)")
    return {"base": base_size, "ours": ours_size}


def bench_decode(maps: list[MapRecord], folder: Path) -> None:
    from entityworks.catalog.packing import pack_grid

    npy, packed = [], []
    for m in maps[:200]:
        buffer = io.BytesIO()
        np.lib.format.write_array(buffer, m.grid, allow_pickle=False)
        npy.append(buffer.getvalue())
        packed.append(pack_grid(m.grid))
    reps = 50

    def baseline() -> None:
        for _ in range(reps):
            for blob in npy:
                np.lib.format.read_array(io.BytesIO(blob), allow_pickle=False)

    def ours() -> None:
        for _ in range(reps):
            for blob in packed:
                decode_grid(blob)

    base_t, ours_t = alternate(baseline, ours, repeat=5)
    # CPU time as well: on a shared machine the wall time also counts the waits for a core
    cpu = {"base": float("inf"), "ours": float("inf")}
    for _ in range(5):
        for name, fn in (("base", baseline), ("ours", ours)):
            start = time.process_time()
            fn()
            cpu[name] = min(cpu[name], time.process_time() - start)
    calls = reps * len(npy)
    size = np.mean([len(p) for p in packed])
    print(f"grid decode, 150x150 dungeon ({load()}; stored form {size:.0f} B)")
    print(
        f"  baseline (.npy read_array): {base_t / calls * 1e6:7.2f} us wall, "
        f"{cpu['base'] / calls * 1e6:7.2f} us CPU"
    )
    print(
        f"  ours (catalog.decode_grid): {ours_t / calls * 1e6:7.2f} us wall, "
        f"{cpu['ours'] / calls * 1e6:7.2f} us CPU   ratio {ours_t / base_t:.3f} of the time "
        f"(target <= 10 us)"
    )


# -- generation -------------------------------------------------------------------------------


def _store_objects(store: Store, count: int, workers: int) -> dict[str, float]:
    """What ``generate_into`` did before the workers encoded the rows: the workers send the
    ``MapRecord`` objects and this process encodes and writes them (``save_maps``), in
    batches of ``STORE_BATCH``; the storage's wall and CPU time."""
    start = time.perf_counter()
    wall = cpu = 0.0
    pending: list[MapRecord] = []

    def flush() -> None:
        nonlocal wall, cpu
        t, c = time.perf_counter(), time.process_time()
        save_maps(store, pending)
        wall += time.perf_counter() - t
        cpu += time.process_time() - c
        pending.clear()

    for chunk in generate_maps("dungeon", count, seed=1, workers=workers):
        pending += chunk
        if len(pending) >= STORE_BATCH:
            flush()
    if pending:
        flush()
    return {"seconds": time.perf_counter() - start, "storage": wall, "cpu": cpu}


def bench_generate(count: int, folder: Path, workers: int) -> None:
    print(f"generate dungeon --count {count}, {workers} workers ({load()})")
    runs = iter(range(100))

    def bare() -> None:
        for _chunk in generate_maps("dungeon", count, seed=1, workers=workers):
            pass

    stats: list[Any] = []
    objects: list[dict[str, float]] = []

    def stored() -> None:
        store = open_at(folder / f"gen{next(runs)}.db", "head")
        stats.append(generate_into(store, "dungeon", count, seed=1, workers=workers))
        store.close()

    def sent_as_objects() -> None:
        store = open_at(folder / f"gen{next(runs)}.db", "head")
        objects.append(_store_objects(store, count, workers))
        store.close()

    bare_t, _, _ = alternate(bare, sent_as_objects, stored, repeat=2)
    best = min(stats, key=lambda s: s.seconds)
    old = min(objects, key=lambda s: s["seconds"])
    cpu = min(s.storage_cpu_seconds for s in stats) / count * 1e3
    old_cpu = min(s["cpu"] for s in objects) / count * 1e3
    print(f"  baseline (generation, nothing stored): {count / bare_t:7.1f} maps/s")
    print(
        f"  objects sent, encoded and stored here: {count / old['seconds']:7.1f} maps/s, "
        f"storage {old['storage'] / old['seconds']:.1%} of the time "
        f"({old['storage'] / count * 1e3:.2f} ms/map wall, {old_cpu:.2f} ms/map CPU)"
    )
    print(
        f"  ours (generate_into, stored):          {best.maps_per_second:7.1f} maps/s, "
        f"storage {best.storage_share:.1%} of the time "
        f"({best.storage_seconds / best.count * 1e3:.2f} ms/map wall, {cpu:.2f} ms/map "
        f"CPU)   (target <= 15 %)"
    )
    print(
        f"  ratio ours/baseline: {best.maps_per_second / (count / bare_t):.3f}; storage "
        f"CPU ours/objects: {cpu / old_cpu:.3f}   ({load()})"
    )


def bench_cluster(count: int, folder: Path, workers: int) -> None:
    """``generate dungeon --count N`` on a local Dask cluster of ``workers`` processes
    against the process pool of the same size, alternated, each into a fresh catalog."""
    from distributed import Client, LocalCluster

    runs = iter(range(100))
    results: dict[str, list[Any]] = {"pool": [], "dask": []}
    with (
        LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
    ):

        def pool() -> None:
            store = open_at(folder / f"pool{next(runs)}.db", "head")
            results["pool"].append(generate_into(store, "dungeon", count, seed=1, workers=workers))
            store.close()

        def dask() -> None:
            store = open_at(folder / f"dask{next(runs)}.db", "head")
            results["dask"].append(generate_into(store, "dungeon", count, seed=1, client=client))
            store.close()

        print(
            f"generate dungeon --count {count}: process pool vs local Dask cluster, "
            f"{workers} worker processes each ({load()})"
        )
        alternate(pool, dask, repeat=2)
    best = {k: max(v, key=lambda s: s.maps_per_second) for k, v in results.items()}
    print(
        f"  baseline (process pool, --workers {workers}): "
        f"{best['pool'].maps_per_second:7.1f} maps/s, storage {best['pool'].storage_share:.1%}"
    )
    print(
        f"  ours (--cluster, LocalCluster {workers} workers): "
        f"{best['dask'].maps_per_second:7.1f} maps/s, storage {best['dask'].storage_share:.1%}"
    )
    print(
        f"  ratio dask/pool: {best['dask'].maps_per_second / best['pool'].maps_per_second:.3f}"
        f"   ({load()})"
    )


# -- queries ----------------------------------------------------------------------------------

SMALL = [
    ("cellular", {}),
    ("caves", {"width": 60, "height": 40}),
    ("islands", {"width": 40, "height": 30}),
    ("dungeon", {"width": 60, "height": 40}),
    ("caves", {"width": 100, "height": 50}),
    ("cellular", {"width": 100, "height": 50}),
]


def map_pool(size: int, seed: int = 1) -> list[MapRecord]:
    """``size`` real small maps of several kinds and sizes (the rows the catalogs repeat)."""
    per = max(1, size // len(SMALL))
    pool: list[MapRecord] = []
    for i, (kind, params) in enumerate(SMALL):
        for chunk in generate_maps(
            kind, per, seed=seed + 100_000 * i, params=params, workers=cores()
        ):
            pool += chunk
    return pool


def rows_from(pool: list[MapRecord], total: int, batch: int = 5_000) -> Iterator[list[MapRecord]]:
    """``total`` rows cycling through ``pool``, each with a seed of its own."""
    made = 0
    while made < total:
        n = min(batch, total - made)
        yield [fresh(pool[(made + i) % len(pool)], seed=1_000_000 + made + i) for i in range(n)]
        made += n


def designer_queries(total: int) -> dict[str, Callable[[Store], Any]]:
    rng = random.Random(3)
    some_seed = 1_000_000 + rng.randrange(total)
    some_id = 1 + rng.randrange(total)
    return {
        "README: 80-120 x 40-60, 1 region, >= 45 % open, -open_ratio, limit 3": lambda s: list(
            s.select(
                MapRecord,
                where=[
                    col("width") >= 80,
                    col("width") <= 120,
                    col("height") >= 40,
                    col("height") <= 60,
                    col("region_count") == 1,
                    col("open_ratio") >= 0.45,
                ],
                order_by="-open_ratio",
                limit=3,
            )
        ),
        "README: kind=caves, -largest_region, limit 3": lambda s: list(
            s.select(MapRecord, where={"kind": "caves"}, order_by="-largest_region", limit=3)
        ),
        "find_maps caves 80-120 x 40-60, 1 region, >= 45 % open, limit 20": lambda s: find_maps(
            s,
            kind="caves",
            width=(80, 120),
            height=(40, 60),
            regions=1,
            open_ratio=(0.45, None),
            limit=20,
        ),
        "find_maps 1 region, open 0.40-0.41, limit 20": lambda s: find_maps(
            s, regions=1, open_ratio=(0.40, 0.41), limit=20
        ),
        "largest_maps 10": lambda s: largest_maps(s, 10),
        "largest_maps 10 kind=dungeon": lambda s: largest_maps(s, 10, kind="dungeon"),
        "single_region_maps kind=islands, limit 20": lambda s: single_region_maps(
            s, kind="islands", limit=20
        ),
        "find_maps seed=...": lambda s: find_maps(s, seed=some_seed),
        "sample_maps 5 kind=caves": lambda s: sample_maps(s, 5, kind="caves", seed=1),
        "Store.get(MapRecord, id)": lambda s: s.get(MapRecord, some_id),
    }


def time_query(store: Store, query: Callable[[Store], Any], repeat: int = 7) -> float:
    query(store)  # warm the cache and the model
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        query(store)
        best = min(best, time.perf_counter() - start)
    return best


def build(store: Store, pool: list[MapRecord], total: int, old: Any | None) -> float:
    start = time.perf_counter()
    for batch in rows_from(pool, total):
        store.insert_many([as_0001(old, m) for m in batch] if old is not None else batch)
    return time.perf_counter() - start


def bench_queries(total: int, folder: Path, postgres: str | None) -> None:
    pool = map_pool(600)
    old = revision_0001()
    base = open_at(folder / "q01.db", "0001_catalog")
    base_build = build(base, pool, total, old)
    ours = open_at(folder / "qhead.db", "head")
    ours_build = build(ours, pool, total, None)
    print(
        f"designer queries on {total:,} maps, SQLite ({load()}; built in "
        f"{base_build:.0f} s at 0001, {ours_build:.0f} s at head)"
    )
    base_old = Store(folder / "q01.db")
    for name, query in designer_queries(total).items():
        b = _time_on_0001(base_old, old, query)
        o = time_query(ours, query)
        print(
            f"  {name:<68} baseline {b * 1e3:8.3f} ms   ours {o * 1e3:7.3f} ms   "
            f"ratio {o / b:6.3f}   {'ok' if o <= 0.002 else 'OVER 2 ms'}"
        )
    print(f"  ({load()})")
    for s in (base, ours, base_old):
        s.close()
    if postgres:
        bench_queries_postgres(pool, total, postgres)


def _time_on_0001(store: Store, old: Any, query: Callable[[Store], Any]) -> float:
    """Run a catalog query against the 0001 tables: the same statements through 0001's
    frozen class (the catalog helpers select ``MapRecord``; swap it for the old class)."""
    import entityworks.catalog as catalog

    current = catalog.MapRecord
    catalog.MapRecord = old.MapRecord
    try:
        shim = _Shim(store, old.MapRecord, current)
        return time_query(shim, query)  # type: ignore[arg-type]
    finally:
        catalog.MapRecord = current


class _Shim:
    """A Store whose reads of the new ``MapRecord`` go to the 0001 class."""

    def __init__(self, store: Store, old_cls: type, new_cls: type) -> None:
        self._store, self._old, self._new = store, old_cls, new_cls

    def _cls(self, cls: type) -> type:
        return self._old if cls is self._new else cls

    def select(self, cls: type, *args: Any, **kwargs: Any) -> Any:
        return self._store.select(self._cls(cls), *args, **kwargs)

    def count(self, cls: type, *args: Any, **kwargs: Any) -> int:
        return self._store.count(self._cls(cls), *args, **kwargs)

    def get(self, cls: type, key: Any) -> Any:
        return self._store.get(self._cls(cls), key)


def bench_queries_postgres(pool: list[MapRecord], total: int, url: str) -> None:
    store = Store(url)
    for cls in (MapRecord,):
        store.drop(cls)
    upgrade_catalog(store, "head")
    took = build(store, pool, total, None)
    print(f"designer queries on {total:,} maps, PostgreSQL ({load()}; built in {took:.0f} s)")
    with store.engine.begin() as conn:
        conn.exec_driver_sql("ANALYZE")
    for name, query in designer_queries(total).items():
        o = time_query(store, query)
        print(f"  {name:<68} ours {o * 1e3:7.3f} ms   {'ok' if o <= 0.002 else 'OVER 2 ms'}")
    store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--maps", type=int, default=2000, help="dungeons for storage/decode")
    parser.add_argument("--count", type=int, default=2000, help="maps for the generate run")
    parser.add_argument("--rows", type=int, default=100_000, help="maps for the queries")
    parser.add_argument("--workers", type=int, default=cores())
    parser.add_argument("--only", default="storage,decode,generate,cluster,queries")
    parser.add_argument(
        "--postgres",
        default=None,
        help="also time the queries here (a scratch database: its catalog tables are replaced)",
    )
    args = parser.parse_args()
    only = set(args.only.split(","))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if only & {"storage", "decode"}:
            maps = [
                m
                for c in generate_maps("dungeon", args.maps, seed=1, workers=args.workers)
                for m in c
            ]
            if "storage" in only:
                bench_storage(maps, folder)
            if "decode" in only:
                bench_decode(maps, folder)
        if "generate" in only:
            bench_generate(args.count, folder, args.workers)
        if "cluster" in only:
            bench_cluster(args.count, folder, args.workers)
        if "queries" in only:
            bench_queries(args.rows, folder, args.postgres)


if __name__ == "__main__":
    main()

"""The Datasette plugin on a big catalog: does it slow the maps table down, and what do the
thumbnails cost?

Builds (once, then reuses) a catalog of ``--maps`` maps: 200 generated ones (cellular caves
40x21 and dungeons 60x30 with their rooms and corridors) and copies of their rows without
child rows up to the count. Then, in this process through Datasette's own ASGI client:

* the maps table page (first page, 100 rows, and a deep page by keyset) with the plugin and
  without it (the same Datasette with the plugin unregistered: Datasette's own page showing
  ``<Binary: n bytes>``), runs interleaved, best of ``--repeat``;
* the thumbnails of one page: rendered (cache empty) and cached, per picture;
* a map's row page (large picture's markup and its lists) and its overlay picture.

    python benchmarks/bench_browse.py --maps 100000
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._common import alternate, best_of  # noqa: E402


def build(path: Path, count: int) -> None:
    from entityworks.catalog import MapRecord, generate_maps, open_catalog

    store = open_catalog(path)
    if store.count(MapRecord) >= count:
        store.close()
        return
    start = time.perf_counter()
    bases = [
        r
        for kind, params in (("cellular", {}), ("dungeon", {"width": 60, "height": 30, "rooms": 8}))
        for chunk in generate_maps(kind, 100, seed=1, params=params, workers=2)
        for r in chunk
    ]
    store.insert_many(bases)
    done = len(bases)
    while done < count:
        batch = []
        for i in range(done, min(count, done + 5000)):
            base = bases[i % len(bases)]
            batch.append(
                MapRecord(
                    id=None,
                    kind=base.kind,
                    generator=base.generator,
                    parameters=base.parameters,
                    seed=i,
                    width=base.width,
                    height=base.height,
                    grid=base.grid,
                    open_ratio=base.open_ratio,
                    region_count=base.region_count,
                    largest_region=base.largest_region,
                )
            )
        store.insert_many(batch)
        done += len(batch)
    store.close()
    print(
        f"built {path} with {count:,} maps in {time.perf_counter() - start:.1f} s "
        f"({path.stat().st_size / 1e6:.0f} MB)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--maps", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/entityworks-bench-browse"))
    args = parser.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    path = args.dir / f"catalog_{args.maps}.db"
    build(path, args.maps)

    from datasette.app import Datasette
    from datasette.plugins import pm

    from entityworks.web import _pictures as pictures
    from entityworks.web import plugin

    if not pm.is_registered(plugin):
        pm.register(plugin, name="entityworks")
    ds = Datasette([str(path)])
    name = path.stem
    loop = asyncio.new_event_loop()

    def get(url: str) -> bytes:
        response = loop.run_until_complete(ds.client.get(url))
        assert response.status_code == 200, (url, response.status_code)
        return response.content

    def without_plugin(url: str):
        def run() -> bytes:
            pm.unregister(plugin)
            try:
                return get(url)
            finally:
                pm.register(plugin, name="entityworks")

        return run

    load = os.getloadavg()
    print(f"catalog: {args.maps:,} maps; machine load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    first = f"/{name}/maps"
    deep = f"/{name}/maps?_next={args.maps - 150}"
    for label, url in (("maps table, first page", first), ("maps table, deep page", deep)):
        get(url)  # warm: schema, counts, SQLite page cache
        page = get(url).decode()
        assert page.count('class="ew-map"') == min(100, args.maps), label
        base, ours = alternate(without_plugin(url), lambda url=url: get(url), repeat=args.repeat)
        print(
            f"{label:<30} Datasette alone: {base * 1000:7.1f} ms   with the plugin: "
            f"{ours * 1000:7.1f} ms   ratio {ours / base:4.2f}x the time"
        )

    trivial = best_of(lambda: get("/-/versions.json"), args.repeat)
    print(f"(for scale: Datasette's own /-/versions.json answers in {trivial * 1000:.2f} ms)")
    page = get(first).decode()
    thumbs = re.findall(r'<img class="ew-map" src="([^"]+)"', page)

    def all_thumbs() -> None:
        for src in thumbs:
            get(src)

    cold = best_of(all_thumbs, args.repeat, setup=plugin.CACHE.clear)
    all_thumbs()
    warm = best_of(all_thumbs, args.repeat)
    print(
        f"{len(thumbs)} thumbnails of one page     rendered: {cold / len(thumbs) * 1000:6.2f} "
        f"ms each   cached: {warm / len(thumbs) * 1000:6.2f} ms each   "
        f"(cache {len(plugin.CACHE)} pictures, {plugin.CACHE.size / 1024:.0f} KiB)"
    )

    grid_only = (
        best_of(
            lambda: [pictures.thumbnail_png(plugin.READER.grid(path, 150)) for _ in range(100)],
            args.repeat,
        )
        / 100
    )
    print(f"thumbnail render alone (60x30 dungeon grid -> PNG): {grid_only * 1000:.2f} ms")
    row = best_of(lambda: get(f"/{name}/maps/150"), args.repeat)
    overlay = best_of(
        lambda: get(f"/-/entityworks/{name}/maps/150/overlay.png"),
        args.repeat,
        setup=plugin.CACHE.clear,
    )
    print(
        f"row page of a dungeon: {row * 1000:.1f} ms; its overlay picture rendered: "
        f"{overlay * 1000:.1f} ms"
    )
    load = os.getloadavg()
    print(f"machine load after: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    loop.close()


if __name__ == "__main__":
    main()

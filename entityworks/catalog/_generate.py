"""Generating many maps: in chunks, on worker processes (or a Dask cluster), and storing
them in batches as they arrive.

The builds themselves are :mod:`._build`'s; this module holds the fan-out, the one writer and
what a run reports (:class:`GenerateStats`, :class:`BuildSummary`).
"""

from __future__ import annotations

import contextlib
import signal
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._gcpause import frozen_heap
from ..errors import EntityworksError
from ..registry import registry as default_registry
from ..sql.encoded import EncodedRows
from ._build import build_chunk, check_parameters, encode_chunk
from ._models import MapRecord
from .kinds import map_kind
from .packing import check_grid_shape, grid_shape

if TYPE_CHECKING:
    from ..sql.store import Store


def generate_maps(
    kind: str,
    count: int,
    *,
    seed: int | None = None,
    params: dict[str, Any] | None = None,
    workers: int = 1,
    chunk: int | None = None,
    client: Any = None,
) -> Iterator[list[MapRecord]]:
    """Generate ``count`` maps in chunks of ``chunk`` (by default the kind's
    :attr:`~entityworks.catalog.kinds.MapKind.chunk`), on ``workers`` processes, in seed
    order.

    With ``seed`` the maps get seeds ``seed, seed + 1, ...``; without, each map draws its own
    seed from the OS. Either way every row records the seed that rebuilds it. With
    ``client`` (a ``dask.distributed.Client``) the maps are built on its cluster instead
    (see :mod:`entityworks.catalog.cluster`); ``workers`` is then ignored.
    """
    yield from _generate(
        kind,
        count,
        seed=seed,
        params=params,
        workers=workers,
        chunk=chunk,
        client=client,
        encoded=False,
    )


def generate_encoded(
    kind: str,
    count: int,
    *,
    seed: int | None = None,
    params: dict[str, Any] | None = None,
    workers: int = 1,
    chunk: int | None = None,
    client: Any = None,
) -> Iterator[EncodedRows]:
    """:func:`generate_maps` with each chunk encoded where it was built (a worker process,
    a Dask worker) for ``Store.insert_encoded``: the workers pack the grids and paths, and
    send the rows instead of the objects. What :func:`generate_into` stores."""
    yield from _generate(
        kind,
        count,
        seed=seed,
        params=params,
        workers=workers,
        chunk=chunk,
        client=client,
        encoded=True,
    )


def _generate(
    kind: str,
    count: int,
    *,
    seed: int | None,
    params: dict[str, Any] | None,
    workers: int,
    chunk: int | None,
    client: Any,
    encoded: bool,
) -> Iterator[Any]:
    if client is not None:
        from .cluster import generate_maps_on

        yield from generate_maps_on(client, kind, count, seed=seed, params=params, encoded=encoded)
        return
    params = dict(params or {})
    check_parameters(kind, params)
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise ValueError(f"count must be an integer >= 0, got {count!r}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be an integer >= 1, got {workers!r}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    if chunk is None:
        chunk = map_kind(kind).chunk
    elif isinstance(chunk, bool) or not isinstance(chunk, int) or chunk < 1:
        raise ValueError(f"chunk must be an integer >= 1, got {chunk!r}")
    seeds: list[int | None] = [None if seed is None else seed + i for i in range(count)]
    build = encode_chunk if encoded else build_chunk
    if not count:
        return
    # The first map is built here: a bad parameter value fails fast, in this process, and
    # the generator is imported before the workers fork (they inherit it).
    first = build(kind, seeds[:1], params)
    chunks = _chunks(seeds[1:], chunk, workers)
    if workers == 1 or len(chunks) <= 1:
        yield first
        for part in chunks:
            yield build(kind, part, params)
        return
    # Every chunk is handed to the pool before the first map is yielded, so that the workers
    # generate while the caller opens its database and writes. They run at this process's
    # priority (the writer only writes: a few percent of one core), and ignore Ctrl-C: only
    # this process stops, cancels the chunks not started and drains the running ones (a
    # worker interrupted while sending its result would block the pool's shutdown for ever).
    pool = ProcessPoolExecutor(max_workers=workers, initializer=_worker_setup)
    try:
        # The workers fork with what this process holds (the generator, the registry,
        # SQLAlchemy) out of the collector's sight: it is never garbage, and a worker's full
        # collections would walk all of it again (and copy it page by page) for nothing.
        # (generate_into keeps this process's heap frozen for the whole run as well.)
        with frozen_heap():
            results = pool.map(build, [kind] * len(chunks), chunks, [params] * len(chunks))
        yield first
        yield from results
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _chunks(seeds: list[int | None], size: int, workers: int) -> list[list[int | None]]:
    """``seeds`` in chunks of ``size``, in order; on several workers the last
    ``workers * size`` seeds or so go in quarter chunks, so that the workers end within a
    small chunk of one another (the run lasts until the last one ends)."""
    head = len(seeds) if workers == 1 else max(0, (len(seeds) - workers * size) // size * size)
    small = max(1, size // 4)
    return [seeds[i : i + size] for i in range(0, head, size)] + [
        seeds[i : i + small] for i in range(head, len(seeds), small)
    ]


def _worker_setup() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


#: Maps :func:`generate_into` stores per write.
STORE_BATCH = 128
#: Longest :func:`generate_into` holds built maps before writing them (slow kinds, a busy
#: machine): each write has a cost of its own (a transaction, a commit), so not much less.
STORE_SECONDS = 1.0


def save_maps(store: Store, records: Iterable[MapRecord]) -> int:
    """Insert map rows (and their caves, rooms and corridors); returns how many. A map whose
    grid is not its ``height`` x ``width`` (changed since it was built) is refused before
    anything is written (:class:`~.packing.GridShapeMismatch`)."""
    rows = list(records)
    for record in rows:
        shape = getattr(record.grid, "shape", None)
        if shape is not None:
            check_grid_shape(shape, record.width, record.height, record.id)
    return store.insert_many(rows)


@dataclass
class BuildSummary:
    """How the builds of one :func:`generate_into` call went (generators that report an
    outcome): complete ones, short ones (a room missing or the floor split), and the room
    counts of the short ones (dungeons; a cave system has no rooms, only its floor)."""

    complete: int = 0
    short: int = 0
    disconnected: int = 0
    rooms_asked: int | None = None
    short_built: tuple[int, int] | None = None

    def add(self, success: bool, asked: int | None, built: int | None, connected: bool) -> None:
        self.rooms_asked = asked if self.rooms_asked is None else self.rooms_asked
        if success:
            self.complete += 1
            return
        self.short += 1
        self.disconnected += not connected
        if built is not None:
            low, high = self.short_built or (built, built)
            self.short_built = (min(low, built), max(high, built))

    def __str__(self) -> str:
        """``17 complete, 3 short (asked 8 rooms, built 5-7)``."""
        text = f"{self.complete} complete, {self.short} short"
        if self.short_built is not None:
            low, high = self.short_built
            built = str(low) if low == high else f"{low}-{high}"
            text += f" (asked {self.rooms_asked} rooms, built {built}"
            if self.disconnected:
                text += f"; {self.disconnected} not connected"
            text += ")"
        elif self.disconnected:
            text += f" ({self.disconnected} not connected)"
        return text


class ShortBuild(EntityworksError):
    """A build fell short while :func:`generate_into` was told to refuse short builds."""


@dataclass(frozen=True)
class GenerateStats:
    """What :func:`generate_into` did and where its time went."""

    kind: str
    count: int
    seconds: float
    storage_seconds: float
    ids: tuple[int, int] | None
    seeds: tuple[int | None, int | None] | None
    #: CPU time of this process while storing (the wall time above also counts waits for a
    #: core that the generating workers hold).
    storage_cpu_seconds: float = 0.0
    #: The outcomes of the builds stored, for kinds whose generator reports one (dungeons).
    builds: BuildSummary | None = None

    @property
    def maps_per_second(self) -> float:
        return self.count / self.seconds if self.seconds > 0 else float("inf")

    @property
    def storage_share(self) -> float:
        """Fraction of the wall time spent writing to the database."""
        return self.storage_seconds / self.seconds if self.seconds > 0 else 0.0


def generate_into(
    store: Store | Callable[[], Store],
    kind: str,
    count: int,
    *,
    seed: int | None = None,
    params: dict[str, Any] | None = None,
    workers: int = 1,
    progress: Callable[[int], None] | None = None,
    client: Any = None,
    refuse_short: bool = False,
    mix_versions: bool = False,
) -> GenerateStats:
    """Generate ``count`` maps on ``workers`` processes (or on the Dask cluster of
    ``client``) and store them in batches as they arrive, in seed order.

    The builds' outcomes (dungeons: rooms asked and built, connected; caves: connected) are
    stored with the maps and summed up in ``GenerateStats.builds``. With ``refuse_short`` the
    whole call is one transaction and the first short build raises :class:`ShortBuild`:
    nothing is stored. A worker process that dies (killed, out of memory) raises
    :class:`WorkerLost` once the maps built before it are stored (none with
    ``refuse_short``): it names them and how to build the rest without storing a seed twice.

    ``store`` may be a function that opens the Store: it is called once the first map is
    built, so that a bad parameter value leaves no new database behind. Only this process
    writes, once per map: a seed already stored by this call is never stored again, even if
    a cluster were to deliver a re-run task's result twice.
    ``progress(n)`` is called after each stored batch with the number of maps it held.

    Each map records its generator's version (``generator_version``) and its grid's hash.
    A catalog holding maps of another version of the same generator is refused before
    anything is written (:class:`~._verify.MixedVersions`, see
    :func:`~._verify.check_versions`), unless ``mix_versions``.

    The workers build each map's rows too (:func:`generate_encoded`): this process only
    writes them, so that it keeps up with the workers. The Store must use the default
    type registry, the one the rows were encoded with.
    """
    start = time.perf_counter()
    storage = 0.0
    storage_cpu = 0.0
    ids: list[int] = []
    seeds: list[int | None] = []
    pending: list[EncodedRows] = []
    waiting = 0
    flushed = time.perf_counter()
    stored: set[int | None] = set()
    builds: BuildSummary | None = None
    whole = contextlib.ExitStack()  # with refuse_short: one transaction for every batch
    in_transaction = False

    def flush() -> None:
        nonlocal storage, storage_cpu, flushed, store, waiting, in_transaction
        # imported here, after the workers forked: they only encode, and never need
        # SQLAlchemy, which this process then imports while they generate
        from ..sql.store import Store
        from ._verify import check_versions

        if not isinstance(store, Store):
            store = store()
            freeze()  # the Store and what opening it imported
        if store.registry is not default_registry:
            raise EntityworksError(
                "generate_into stores rows encoded with the default type "
                "registry; open the catalog's Store without registry="
            )
        if not mix_versions and not in_transaction and not seeds:  # before the first write
            check_versions(store, kind)
        if refuse_short and not in_transaction:
            whole.enter_context(store.transaction())
            in_transaction = True
        t = time.perf_counter()
        cpu = time.process_time()
        batch = EncodedRows.join(pending)
        ids.extend(store.insert_encoded(batch))
        storage_cpu += time.process_time() - cpu
        flushed = time.perf_counter()
        storage += flushed - t
        seeds.extend(batch.column("seed"))
        if progress is not None:
            progress(len(batch))
        pending.clear()
        waiting = 0

    lost = False
    with whole, frozen_heap() as freeze:
        try:
            for rows in generate_encoded(
                kind, count, seed=seed, params=params, workers=workers, client=client
            ):
                keep = []
                for i, value in enumerate(rows.column("seed")):
                    if value is None or value not in stored:
                        stored.add(value)
                        keep.append(i)
                if keep:
                    part = rows if len(keep) == len(rows) else rows.take(keep)
                    _check_grids(part)
                    builds = _count_builds(part, builds, refuse_short)
                    pending.append(part)
                    waiting += len(keep)
                # One write per batch: per-call costs (transaction, key generation)
                # amortised.
                if pending and (
                    waiting >= STORE_BATCH or time.perf_counter() - flushed > STORE_SECONDS
                ):
                    flush()
        except BrokenProcessPool:
            if refuse_short:  # one transaction: leaving this block rolls it back
                raise WorkerLost(kind, count, [], [], seed=seed, rolled_back=True) from None
            lost = True  # the maps built so far are whole: they are stored below
        if pending:
            flush()
    if lost:
        raise WorkerLost(kind, count, seeds, ids, seed=seed)
    elapsed = time.perf_counter() - start
    return GenerateStats(
        kind,
        len(seeds),
        elapsed,
        storage,
        (min(ids), max(ids)) if ids else None,
        (seeds[0], seeds[-1]) if seeds else None,
        storage_cpu,
        builds,
    )


def _check_grids(rows: EncodedRows) -> None:
    """Refuse a packed grid whose shape is not its row's height and width (from the
    blob's header; :class:`~.packing.GridShapeMismatch`) before it is written."""
    for blob, width, height in zip(
        rows.column("grid"), rows.column("width"), rows.column("height"), strict=True
    ):
        check_grid_shape(grid_shape(blob), width, height)


class WorkerLost(EntityworksError):
    """A worker process of :func:`generate_into` died (killed, or out of memory) before
    every map was built: what was stored, and how to go on without storing a seed twice.

    The maps are stored in seed order, so with a first ``seed`` the stored seeds are
    ``seed .. next_seed - 1`` and the rest is ``count=remaining, seed=next_seed``
    (``--count``, ``--seed``); without one, each stored map drew a fresh seed and the rest
    is ``count=remaining`` again. With ``refuse_short`` (one transaction) nothing was
    stored (``rolled_back``).
    """

    def __init__(
        self,
        kind: str,
        count: int,
        seeds: list[int | None],
        ids: list[int],
        *,
        seed: int | None,
        rolled_back: bool = False,
    ) -> None:
        self.kind: str = kind
        self.count: int = count
        self.stored: int = len(seeds)
        self.seeds: tuple[int | None, ...] = tuple(seeds)
        self.ids: tuple[int, int] | None = (min(ids), max(ids)) if ids else None
        self.remaining: int = count - self.stored
        self.rolled_back: bool = rolled_back
        #: No first seed: each map drew a fresh one (``seeds`` holds what they drew).
        self.fresh: bool = seed is None
        self.next_seed: int | None = None if seed is None else seed + self.stored
        if seed is not None and list(self.seeds) != list(range(seed, seed + self.stored)):
            self.next_seed = None  # never so (seed order); then no resume is offered
        super().__init__(self._message())

    def stored_text(self) -> str:
        """``stored 40 of 100 caves maps (seeds 1-40, ids 1-40)``, or ``stored none of
        ...``."""
        if self.rolled_back:
            return (
                f"stored none of the {self.count} {self.kind} maps (refuse_short: one "
                "transaction, rolled back)"
            )
        if not self.stored:
            return f"stored none of the {self.count} {self.kind} maps"
        ids = (
            "no ids"
            if self.ids is None
            else f"id {self.ids[0]}"
            if self.ids[0] == self.ids[1]
            else f"ids {self.ids[0]}-{self.ids[1]}"
        )
        if self.fresh:
            seeds = "a fresh seed each"
        elif self.next_seed is not None:
            seeds = (
                f"seed {self.seeds[0]}"
                if self.stored == 1
                else f"seeds {self.seeds[0]}-{self.seeds[-1]}"
            )
        else:
            seeds = "seeds " + ", ".join(map(str, self.seeds))
        return f"stored {self.stored} of {self.count} {self.kind} maps ({seeds}, {ids})"

    def resume(self, count: str = "count=", seed: str = "seed=") -> str:
        """How to build the rest: ``count=60, seed=41`` (the option names given)."""
        if self.rolled_back or not self.stored:
            return f"{count}{self.count}" + (
                "" if self.next_seed is None else f", {seed}{self.next_seed}"
            )
        if self.next_seed is not None:
            return f"{count}{self.remaining}, {seed}{self.next_seed}"
        return f"{count}{self.remaining}"

    def _message(self) -> str:
        if self.next_seed is None and not self.fresh and self.stored:
            again = "the seeds stored are named above: build the others with their own seeds"
        else:
            again = f"build the rest with {self.resume()}, the other arguments unchanged" + (
                " (fresh seeds are drawn)" if self.fresh else ": no seed is stored twice"
            )
        return (
            f"a worker process died (killed, or out of memory) while generating "
            f"{self.kind} maps: {self.stored_text()}; {again}"
        )


def _count_builds(
    rows: EncodedRows, builds: BuildSummary | None, refuse_short: bool
) -> BuildSummary | None:
    """Add the outcomes of ``rows`` (NULL: the generator reports none) to ``builds``; with
    ``refuse_short`` a short build raises :class:`ShortBuild`."""
    outcomes = zip(
        rows.column("build_success"),
        rows.column("rooms_asked"),
        rows.column("rooms_built"),
        rows.column("connected"),
        rows.column("seed"),
        rows.column("region_count"),
        strict=True,
    )
    for success, asked, built, connected, seed, regions in outcomes:
        if success is None:
            continue
        builds = builds or BuildSummary()
        builds.add(bool(success), asked, built, bool(connected))
        if refuse_short and not success:
            if asked is None:  # no rooms: the floor alone (a cave system)
                what = f"floor split into {regions} regions" if regions else "no floor"
            else:
                floor = "" if connected else ", floor not connected"
                what = f"{built} of {asked} rooms built{floor}"
            raise ShortBuild(f"the build of seed {seed} fell short ({what}); nothing was stored")
    return builds


__all__ = [
    "STORE_BATCH",
    "STORE_SECONDS",
    "BuildSummary",
    "GenerateStats",
    "ShortBuild",
    "WorkerLost",
    "generate_encoded",
    "generate_into",
    "generate_maps",
    "save_maps",
]

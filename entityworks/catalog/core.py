"""The level catalog: generated maps, sudoku puzzles and entropy reports as entityworks tables.

Everything here is stored and queried through :class:`~entityworks.Store`; the module holds no
SQL. A map row keeps the parameters and seed that rebuild it, statistics derived from the grid
(open ratio, 4-connected region count, largest region) and, in its last column, the grid itself
bit-packed (:data:`~entityworks.catalog.packing.PackedGrid`: dtype and shape intact; read raw blobs
with :func:`decode_grid`), with its caves, rooms and corridors in child tables::

    store = open_catalog("levels.db")
    save_maps(store, generate_maps("caves", count=20, seed=1))
    find_maps(store, kind="caves", width=(80, 120), open_ratio=(0.45, None), regions=1)
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import hashlib
import inspect
import os
import random
import signal
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import EntityworksError, InputTooLarge
from ..model.schema import column, entity, primary_key, table_schema
from ..registry import registry as default_registry
from ..sql.encoded import EncodedRows, encode_rows
from ..sql.filters import col
from ..sql.store import Store
from .kinds import KINDS, MapKind, map_kind
from .packing import PackedGrid, PointPath, unpack_grid

# -- the tables ----------------------------------------------------------------------------


@dataclass
class MapCave:
    """A cave of a cave-system map: its cells, bounding box and centroid."""

    number: int
    cells: int
    x: int
    y: int
    width: int
    height: int
    centroid_x: float
    centroid_y: float


@dataclass
class MapRoom:
    """A rectangular room of a dungeon map."""

    x: int
    y: int
    width: int
    height: int


@dataclass
class MapCorridor:
    """A dug corridor: its end points, length and the cells ``[[x, y], ...]`` in order
    (stored as two bits per step, see :func:`entityworks.catalog.packing.pack_points`)."""

    length: int
    start_x: int
    start_y: int
    end_x: int
    end_y: int
    path: PointPath


@dataclass
class MapPlacement:
    """A cell picked for stairs or an item (``generators.maps.placement.place``): its position,
    what goes there and the clear radius it was picked with."""

    x: int
    y: int
    label: str
    clearance: int


def _utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(tzinfo=None, microsecond=0)


#: Composite indexes of ``maps``, one per kind of designer query: :func:`find_maps` by kind
#: and size, by region count and open ratio (each also holding the other columns those
#: queries filter on, so that the filters are checked in the index and only matching rows are
#: read; revision ``0007_covering_indexes``), :func:`largest_maps` by kind.
MAP_INDEXES = (("kind", "width", "height", "region_count", "open_ratio"),
               ("region_count", "open_ratio", "width", "height"),
               ("kind", "largest_region"))


@entity("maps", indexes=MAP_INDEXES, compact_children=True)
class MapRecord:
    """One generated map. ``open_ratio``, ``region_count`` and ``largest_region`` are measured
    on ``grid`` (1 = wall, 0 = floor; regions are 4-connected).

    The build's own outcome, for generators that report one (dungeons; NULL for other kinds
    and for maps stored before revision ``0008_entries_and_outcomes``): ``build_success``
    (every room asked for was built and the floor is connected), ``rooms_asked``,
    ``rooms_built`` and ``connected``. A failed build is stored as what it is, not as a map
    that looks like any other.

    ``grid`` is keyword-only so that it is the table's last column: a scan of the statistics
    stops before the grid bytes.
    """

    id: int | None = primary_key()
    kind: str = column(index=True)
    generator: str
    parameters: dict[str, Any]
    seed: int | None = column(index=True)
    width: int
    height: int
    open_ratio: float
    region_count: int
    largest_region: int = column(index=True)
    created_at: dt.datetime = field(default_factory=_utc_now)
    build_success: bool | None = None
    rooms_asked: int | None = None
    rooms_built: int | None = None
    connected: bool | None = None
    grid: PackedGrid = field(kw_only=True)
    caves: list[MapCave] = field(default_factory=list)
    rooms: list[MapRoom] = field(default_factory=list)
    corridors: list[MapCorridor] = field(default_factory=list)
    placements: list[MapPlacement] = field(default_factory=list)


@entity("sudoku_puzzles")  # checkers then take primary_key() as no default, as the runtime
class SudokuPuzzle:
    """A puzzle (81 chars, ``0`` = blank) with its solution; the puzzle text is unique.

    ``solution_count`` is 0, 1 or 2 (2 meaning "more than one"); ``difficulty`` counts the
    solver's guesses (0: singles alone solve it) and ``nodes`` the states it expanded.
    ``source`` and ``name`` are those of the first entry that brought the puzzle; every
    entry of every file is a :class:`SudokuEntry`.
    """

    id: int | None = primary_key()
    source: str
    name: str
    puzzle: str = column(unique=True)
    solution: str | None = None
    clues: int = 0
    solution_count: int = 0
    difficulty: int | None = None
    nodes: int | None = None
    created_at: dt.datetime = field(default_factory=_utc_now)


@entity("sudoku_entries", unique=[("source", "position")])
class SudokuEntry:
    """One entry of a stored puzzle file: the ``position``-th puzzle (from 0) of ``source``,
    its name there (``Grid 41``) and line, and the puzzle (``sudoku_puzzles`` row) it is.

    Two entries of a file may be the same puzzle (Project Euler 96's Grid 09 and Grid 41):
    the puzzle is stored once, each entry has its row, so a file's answer can be computed
    from the database. ``(source, position)`` is unique: storing a file again adds nothing.
    """

    id: int | None = primary_key()
    source: str
    position: int
    name: str
    line: int
    puzzle_id: int = column(references=SudokuPuzzle, index=True, on_delete="cascade")


@entity("entropy_reports")
class EntropyRecord:
    """What ``ent`` says about a file (``generators.bytes.entropy.report``), plus its path, size,
    SHA-256 and byte distribution. Figures ``ent`` calls undefined are NULL."""

    id: int | None = primary_key()
    path: str
    size: int
    sha256: str = column(index=True)
    entropy: float
    optimum_compression: float
    chi_square: float | None
    chi_square_probability: float | None
    mean: float | None
    monte_carlo_pi: float | None
    monte_carlo_error: float | None
    serial_correlation: float | None
    unique_symbols: int
    distribution: list[int]
    created_at: dt.datetime = field(default_factory=_utc_now)


#: The catalog's top-level classes, by table name.
TABLES: dict[str, type[Any]] = {"maps": MapRecord, "sudoku_puzzles": SudokuPuzzle,
                                "sudoku_entries": SudokuEntry,
                                "entropy_reports": EntropyRecord}


def open_catalog(url: str | os.PathLike[str] | Store) -> Store:
    """A Store whose database holds the catalog at the latest revision (see ``migrate``)."""
    store = url if isinstance(url, Store) else Store(os.fspath(url))
    upgrade_catalog(store)
    return store


def upgrade_catalog(store: Store, revision: str = "head") -> str | None:
    """Bring the catalog of ``store`` to ``revision`` through its Alembic revisions; returns
    the revision it is at afterwards. The catalog hands its classes to ``migrate``, which
    never imports this module."""
    from ..migrate import upgrade

    return upgrade(store, revision, classes=list(TABLES.values()))


# -- maps from generator results -----------------------------------------------------------


def map_stats(grid: np.ndarray) -> tuple[float, int, int]:
    """``(open_ratio, region_count, largest_region)`` of a grid (4-connected floor regions)."""
    from generators.maps.regions import region_stats

    stats = region_stats(grid, 4)
    ratio = float(np.count_nonzero(grid == 0)) / grid.size
    return ratio, int(stats.count), int(stats.largest)


def _corridor(path: Sequence[tuple[int, int]]) -> MapCorridor:
    (sx, sy), (ex, ey) = path[0], path[-1]
    return MapCorridor(len(path), int(sx), int(sy), int(ex), int(ey),
                       [[int(x), int(y)] for x, y in path])


def map_record(result: Any, *, kind: str | None = None, generator: str | None = None
               ) -> MapRecord:
    """Turn a ``generators`` result (caves, dungeon, islands, cellular) into a catalog row."""
    grid = np.ascontiguousarray(result.grid, dtype=np.uint8)
    ratio, regions, largest = map_stats(grid)
    caves = [MapCave(c.id, c.cells, *c.bbox, *c.centroid) for c in getattr(result, "caves", [])]
    rooms = [MapRoom(r.x, r.y, r.width, r.height) for r in getattr(result, "rooms", [])]
    corridors = [_corridor(p) for p in getattr(result, "corridors", []) if len(p)]
    module = type(result).__module__
    return MapRecord(
        None, kind or result.kind, generator or f"{module}.{type(result).__name__}",
        dict(result.params), result.seed, int(grid.shape[1]), int(grid.shape[0]),
        ratio, regions, largest, _utc_now(), *build_outcome(result), grid=grid, caves=caves,
        rooms=rooms, corridors=corridors)


def build_outcome(result: Any) -> tuple[bool | None, int | None, int | None, bool | None]:
    """``(build_success, rooms_asked, rooms_built, connected)`` as a generator result reports
    them (``generators.maps.dungeon``); all None for a result that reports no outcome."""
    asked = getattr(result, "rooms_asked", None)
    if asked is None:
        return None, None, None, None
    return (bool(result.success), int(asked), int(result.rooms_built),
            bool(result.connected))


def decode_grid(blob: bytes | bytearray | memoryview) -> np.ndarray:
    """The grid held by a ``maps.grid`` value as read straight from the database.

    The one decoder for raw catalog rows (a web view, a script reading SQL itself): it reads
    the bit-packed form of revision ``0005_compact_grids`` and the ``.npy`` bytes of older catalogs.
    """
    return unpack_grid(blob)


# -- generating ----------------------------------------------------------------------------


#: Most cells (width x height) a catalog map may have: 4096 x 4096. A grid this size is 16 MiB
#: of bytes before the generators' working copies; far larger ones exhaust memory.
MAX_MAP_CELLS = 1 << 24


def check_parameters(kind: str, params: dict[str, Any]) -> None:
    """Refuse parameter names the generator of ``kind`` does not take, and map sizes over
    :data:`MAX_MAP_CELLS` (width x height, with the generator's defaults)."""
    spec = map_kind(kind)
    accepted = spec.parameters()
    for name in params:
        if name not in accepted:
            raise ValueError(f"{kind} has no parameter {name!r}; parameters are: "
                             f"{', '.join(accepted)}")
    defaults = {name: p.default for name, p in
                inspect.signature(spec.function()).parameters.items()}
    width, height = (params.get(n, defaults.get(n)) for n in ("width", "height"))
    if (isinstance(width, int) and isinstance(height, int) and not isinstance(width, bool)
            and not isinstance(height, bool) and width * height > MAX_MAP_CELLS):
        raise ValueError(f"a {width}x{height} map has {width * height:,} cells, more than "
                         f"the {MAX_MAP_CELLS:,} (4096x4096) a catalog map may have")


def build_map(kind: str, seed: int | None, params: dict[str, Any]) -> MapRecord:
    """Generate one map of ``kind`` and return its catalog row (runs in worker processes)."""
    spec = map_kind(kind)
    result = spec.function()(**params, **dict(spec.fixed), seed=seed)
    return map_record(result, kind=kind, generator=spec.module)


def _build_chunk(kind: str, seeds: list[int | None], params: dict[str, Any]
                 ) -> list[MapRecord]:
    return [build_map(kind, s, params) for s in seeds]


def _encode_chunk(kind: str, seeds: list[int | None], params: dict[str, Any]
                  ) -> EncodedRows:
    """The maps of ``seeds`` as rows ready for ``Store.insert_encoded``: built and encoded
    in the worker, a fraction of the objects' pickle."""
    return encode_rows(_build_chunk(kind, seeds, params))


def generate_maps(kind: str, count: int, *, seed: int | None = None,
                  params: dict[str, Any] | None = None, workers: int = 1,
                  chunk: int = 8, client: Any = None) -> Iterator[list[MapRecord]]:
    """Generate ``count`` maps in chunks, on ``workers`` processes, in seed order.

    With ``seed`` the maps get seeds ``seed, seed + 1, ...``; without, each map draws its own
    seed from the OS. Either way every row records the seed that rebuilds it. With
    ``client`` (a ``dask.distributed.Client``) the maps are built on its cluster instead
    (see :mod:`entityworks.catalog.cluster`); ``workers`` is then ignored.
    """
    yield from _generate(kind, count, seed=seed, params=params, workers=workers, chunk=chunk,
                         client=client, encoded=False)


def generate_encoded(kind: str, count: int, *, seed: int | None = None,
                     params: dict[str, Any] | None = None, workers: int = 1,
                     chunk: int = 8, client: Any = None) -> Iterator[EncodedRows]:
    """:func:`generate_maps` with each chunk encoded where it was built (a worker process,
    a Dask worker) for ``Store.insert_encoded``: the workers pack the grids and paths, and
    send the rows instead of the objects. What :func:`generate_into` stores."""
    yield from _generate(kind, count, seed=seed, params=params, workers=workers, chunk=chunk,
                         client=client, encoded=True)


def _generate(kind: str, count: int, *, seed: int | None, params: dict[str, Any] | None,
              workers: int, chunk: int, client: Any, encoded: bool) -> Iterator[Any]:
    if client is not None:
        from .cluster import generate_maps_on

        yield from generate_maps_on(client, kind, count, seed=seed, params=params,
                                    encoded=encoded)
        return
    params = dict(params or {})
    check_parameters(kind, params)
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise ValueError(f"count must be an integer >= 0, got {count!r}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be an integer >= 1, got {workers!r}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    seeds: list[int | None] = [None if seed is None else seed + i for i in range(count)]
    build = _encode_chunk if encoded else _build_chunk
    if count:  # fail fast, in this process, on a bad parameter value
        first = [build_map(kind, seeds[0], params)]
        yield encode_rows(first) if encoded else first
        seeds = seeds[1:]
    chunks = [seeds[i:i + chunk] for i in range(0, len(seeds), chunk)]
    if workers == 1 or len(chunks) <= 1:
        for part in chunks:
            yield build(kind, part, params)
        return
    # Workers ignore Ctrl-C: only this process stops, cancels the chunks not started and
    # drains the running ones (a worker interrupted while sending its result would block the
    # pool's shutdown for ever), and run at a lower priority than this process, the writer.
    pool = ProcessPoolExecutor(max_workers=workers, initializer=_worker_setup)
    try:
        yield from pool.map(build, [kind] * len(chunks), chunks, [params] * len(chunks))
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


#: How much lower the generating workers' CPU priority is than this process's (``nice``):
#: with as many workers as cores, the one writer would otherwise wait for a core each time a
#: batch arrives, and the results pile up behind it.
WORKER_NICENESS = 10


def _worker_setup() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        os.nice(WORKER_NICENESS)
    except (AttributeError, OSError):  # pragma: no cover - no nice on this platform
        pass


#: Maps :func:`generate_into` stores per write.
STORE_BATCH = 128


def save_maps(store: Store, records: Iterable[MapRecord]) -> int:
    """Insert map rows (and their caves, rooms and corridors); returns how many."""
    return store.insert_many(list(records))


@dataclass
class BuildSummary:
    """How the builds of one :func:`generate_into` call went (generators that report an
    outcome): complete ones, short ones (a room missing or the floor split), and the room
    counts of the short ones."""

    complete: int = 0
    short: int = 0
    disconnected: int = 0
    rooms_asked: int | None = None
    short_built: tuple[int, int] | None = None

    def add(self, success: bool, asked: int, built: int, connected: bool) -> None:
        self.rooms_asked = asked if self.rooms_asked is None else self.rooms_asked
        if success:
            self.complete += 1
            return
        self.short += 1
        self.disconnected += not connected
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


def generate_into(store: Store | Callable[[], Store], kind: str, count: int, *,
                  seed: int | None = None, params: dict[str, Any] | None = None,
                  workers: int = 1, progress: Callable[[int], None] | None = None,
                  client: Any = None, refuse_short: bool = False) -> GenerateStats:
    """Generate ``count`` maps on ``workers`` processes (or on the Dask cluster of
    ``client``) and store them in batches as they arrive, in seed order.

    The builds' outcomes (dungeons: rooms asked and built, connected) are stored with the
    maps and summed up in ``GenerateStats.builds``. With ``refuse_short`` the whole call is
    one transaction and the first short build raises :class:`ShortBuild`: nothing is stored.

    ``store`` may be a function that opens the Store: it is called once the first map is
    built, so that a bad parameter value leaves no new database behind. Only this process
    writes, once per map: a seed already stored by this call is never stored again, even if
    a cluster were to deliver a re-run task's result twice.
    ``progress(n)`` is called after each stored batch with the number of maps it held.

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
        if not isinstance(store, Store):
            store = store()
        if store.registry is not default_registry:
            raise EntityworksError("generate_into stores rows encoded with the default type "
                                   "registry; open the catalog's Store without registry=")
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

    with whole:
        for rows in generate_encoded(kind, count, seed=seed, params=params, workers=workers,
                                     client=client):
            keep = []
            for i, value in enumerate(rows.column("seed")):
                if value is None or value not in stored:
                    stored.add(value)
                    keep.append(i)
            if keep:
                part = rows if len(keep) == len(rows) else rows.take(keep)
                builds = _count_builds(part, builds, refuse_short)
                pending.append(part)
                waiting += len(keep)
            # One write per batch: per-call costs (transaction, key generation) amortised.
            if pending and (waiting >= STORE_BATCH or time.perf_counter() - flushed > 0.5):
                flush()
        if pending:
            flush()
    elapsed = time.perf_counter() - start
    return GenerateStats(kind, len(seeds), elapsed, storage,
                         (min(ids), max(ids)) if ids else None,
                         (seeds[0], seeds[-1]) if seeds else None, storage_cpu, builds)


def _count_builds(rows: EncodedRows, builds: BuildSummary | None, refuse_short: bool
                  ) -> BuildSummary | None:
    """Add the outcomes of ``rows`` (NULL: the generator reports none) to ``builds``; with
    ``refuse_short`` a short build raises :class:`ShortBuild`."""
    outcomes = zip(rows.column("build_success"), rows.column("rooms_asked"),
                   rows.column("rooms_built"), rows.column("connected"), rows.column("seed"),
                   strict=True)
    for success, asked, built, connected, seed in outcomes:
        if success is None:
            continue
        builds = builds or BuildSummary()
        builds.add(bool(success), asked, built, bool(connected))
        if refuse_short and not success:
            floor = "" if connected else ", floor not connected"
            raise ShortBuild(f"the build of seed {seed} fell short "
                             f"({built} of {asked} rooms built{floor}); nothing was stored")
    return builds


# -- one map: its grid, its row, its placements --------------------------------------------


def load_map(store: Store, map_id: int) -> MapRecord | None:
    """The map ``map_id`` with its caves, rooms, corridors and placements (None if absent)."""
    return store.get(MapRecord, map_id)


def load_grid(store: Store, map_id: int) -> np.ndarray | None:
    """Only the grid of map ``map_id`` (1 = wall, 0 = floor), without its child rows.

    The one place that turns a stored grid back into an array for readers that need
    nothing else (the Datasette plugin's pictures): however the catalog stores grids,
    callers go through here.
    """
    index = table_schema(MapRecord).column_names.index("grid")
    for batch in store.rows(MapRecord, where={"id": map_id}, limit=1):
        for row in batch:
            return row[index]  # type: ignore[no-any-return]
    return None


#: Labels given to placements in order; the rest are items.
PLACEMENT_LABELS = ("stairs_up", "stairs_down")


def placement_labels(count: int) -> list[str]:
    """``stairs_up``, ``stairs_down``, then ``item`` for every further placement."""
    return [PLACEMENT_LABELS[i] if i < len(PLACEMENT_LABELS) else "item"
            for i in range(count)]


def place_on_map(record: MapRecord, count: int, clearance: int = 2, *,
                 seed: int | None = None, min_distance: int = 0) -> list[MapPlacement]:
    """Pick placements for ``record`` (``generators.maps.placement.place``) and set them on it.

    Without ``seed`` the map's own seed (else its id) seeds the draw, so placing again
    gives the same cells.
    """
    from generators.maps.placement import place

    if seed is None:
        seed = record.seed if record.seed is not None else (record.id or 0)
    found = place(record.grid, count, clearance, seed, min_distance=min_distance)
    record.placements = [MapPlacement(x, y, label, clearance) for (x, y), label in
                         zip(found.points, placement_labels(count), strict=True)]
    return record.placements


def store_placements(store: Store, map_ids: Sequence[int], count: int, clearance: int = 2,
                     *, seed: int | None = None, min_distance: int = 0
                     ) -> dict[int, list[MapPlacement]]:
    """Place on each map and replace its stored placements, all maps in one transaction.

    A missing map or a map without room for the request raises before anything is written
    (every map is placed first, then all are written).
    """
    records: list[MapRecord] = []
    for map_id in map_ids:
        record = load_map(store, map_id)
        if record is None:
            raise EntityworksError(f"no map with id {map_id}")
        try:
            place_on_map(record, count, clearance, seed=seed, min_distance=min_distance)
        except ValueError as exc:
            raise EntityworksError(f"map {map_id}: {exc}") from None
        records.append(record)
    with store.transaction():
        for record in records:
            store.update(record)
    return {record.id: record.placements for record in records}  # type: ignore[misc]


# -- copying a catalog between databases ----------------------------------------------------


@dataclass(frozen=True)
class CopyStats:
    """Rows :func:`copy_catalog` wrote, per top-level table (child rows travel along)."""

    rows: dict[str, int]
    seconds: float


def copy_catalog(source: Store, target: Store, *, batch: int = 500,
                 progress: Callable[[str, int], None] | None = None) -> CopyStats:
    """Copy every catalog table from ``source`` to ``target`` with ids kept.

    The usual use is a server catalog (PostgreSQL, MariaDB) turned into one SQLite file for
    Datasette or a laptop. ``target`` is migrated to the latest revision first and must
    hold no catalog rows; everything is written in one transaction, so a failure leaves it
    as it was. ``progress(table, rows)`` is called after each batch.
    """
    from ..migrate import current

    start = time.perf_counter()
    if current(source) is None:
        raise EntityworksError(f"{source!r} holds no entityworks catalog")
    upgrade_catalog(source)
    upgrade_catalog(target)
    for name, cls in TABLES.items():
        if target.count(cls):
            raise EntityworksError(f"the target already has rows in {name!r}; copy into an "
                                   f"empty catalog")
    rows: dict[str, int] = {}
    with target.transaction():
        for name, cls in TABLES.items():
            rows[name] = 0
            chunk: list[Any] = []
            for obj in source.select(cls, order_by="id"):
                chunk.append(obj)
                if len(chunk) >= batch:
                    rows[name] += target.insert_many(chunk)
                    chunk = []
                    if progress is not None:
                        progress(name, rows[name])
            if chunk:
                rows[name] += target.insert_many(chunk)
                if progress is not None:
                    progress(name, rows[name])
    if target.dialect.name == "postgresql":
        _advance_sequences(target)
    return CopyStats(rows, time.perf_counter() - start)


def _advance_sequences(store: Store) -> None:
    """After rows with explicit ids, move PostgreSQL's id sequences past the largest id."""
    import sqlalchemy as sa

    with store.engine.begin() as conn:
        for cls in TABLES.values():
            table = store.table(cls)
            sequence = sa.func.pg_get_serial_sequence(table.name, "id")
            conn.execute(sa.select(sa.func.setval(
                sequence, sa.select(sa.func.coalesce(sa.func.max(table.c.id), 0) + 1)
                .scalar_subquery(), False)))


# -- queries a level designer needs --------------------------------------------------------

Range = tuple[float | None, float | None]


def _bounds(name: str, value: float | Range | None) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, tuple | list):
        if len(value) != 2:
            raise ValueError(f"{name} range must be (low, high), got {value!r}")
        low, high = value
        parts = []
        if low is not None:
            parts.append(col(name) >= low)
        if high is not None:
            parts.append(col(name) <= high)
        return parts
    return [col(name) == value]


def map_filter(*, kind: str | None = None, width: float | Range | None = None,
               height: float | Range | None = None, open_ratio: float | Range | None = None,
               regions: float | Range | None = None, seed: int | None = None) -> list[Any]:
    """The ``where`` for :func:`find_maps`: exact values or ``(low, high)`` ranges (inclusive,
    ``None`` leaves an end open)."""
    parts: list[Any] = []
    if kind is not None:
        parts.append(col("kind") == kind)
    if seed is not None:
        parts.append(col("seed") == seed)
    for name, value in (("width", width), ("height", height), ("open_ratio", open_ratio),
                        ("region_count", regions)):
        parts += _bounds(name, value)
    return parts


def find_maps(store: Store, *, kind: str | None = None, width: float | Range | None = None,
              height: float | Range | None = None, open_ratio: float | Range | None = None,
              regions: float | Range | None = None, seed: int | None = None,
              order_by: str | Sequence[str] = "id", limit: int | None = None
              ) -> list[MapRecord]:
    """Maps matching every given criterion, e.g. caves between 80x40 and 120x60 with one
    region and at least 45 % floor::

        find_maps(store, kind="caves", width=(80, 120), height=(40, 60), regions=1,
                  open_ratio=(0.45, None))
    """
    where = map_filter(kind=kind, width=width, height=height, open_ratio=open_ratio,
                       regions=regions, seed=seed)
    return list(store.select(MapRecord, where=where, order_by=order_by, limit=limit))


def largest_maps(store: Store, n: int, *, kind: str | None = None,
                 by: str = "largest_region") -> list[MapRecord]:
    """The ``n`` maps with the most ``by`` (default: the largest connected floor region);
    among equals the newest first, the order the indexes hold them in (no sort of the ties,
    which a catalog of small maps has by the thousand)."""
    where = map_filter(kind=kind)
    return list(store.select(MapRecord, where=where, order_by=[f"-{by}", "-id"], limit=n))


def single_region_maps(store: Store, *, kind: str | None = None, limit: int | None = None
                       ) -> list[MapRecord]:
    """Maps whose floor is exactly one connected region."""
    return find_maps(store, kind=kind, regions=1, limit=limit)


#: Candidate keys :func:`sample_maps` tries per wanted map before it lists the matching keys
#: instead (a filter that few rows pass makes random keys miss too often).
SAMPLE_TRIES = 16


def sample_maps(store: Store, n: int, *, kind: str | None = None, seed: int | None = None
                ) -> list[MapRecord]:
    """``n`` maps drawn at random without replacement (fewer when fewer exist), in id order.

    Keys are drawn uniformly between the smallest and the largest id (a seeded
    ``random.Random``) and a drawn key is kept when its row exists, matches and was not kept
    before: every matching map is equally likely, and the cost does not grow with the
    catalog (a few lookups by key, not a count and a walk to each drawn position). When the
    draws miss too often (ids with large gaps, a rare kind), the matching keys are listed
    and the rest drawn among them. The same seed draws the same maps on every database.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"n must be an integer >= 0, got {n!r}")
    where = map_filter(kind=kind)
    id_only = ["id"]  # only the key is read until the maps are fetched
    first = next(iter(store.select(MapRecord, order_by="id", limit=1, columns=id_only)), None)
    if first is None or n == 0:
        return []
    low = first[0]
    high = next(iter(store.select(MapRecord, order_by="-id", limit=1, columns=id_only)))[0]
    rng = random.Random(seed)
    chosen: dict[int, None] = {}  # insertion-ordered: the order of the draws
    tries = SAMPLE_TRIES * n
    while len(chosen) < n and tries > 0:
        want = n - len(chosen)
        draws = [rng.randint(low, high) for _ in range(min(tries, 4 * want + 8))]
        tries -= len(draws)
        found = {k for (k,) in store.select(
            MapRecord, where=[col("id").in_(sorted(set(draws))), *where], columns=id_only)}
        for key in draws:
            if key in found and key not in chosen and len(chosen) < n:
                chosen[key] = None
    if len(chosen) < n:  # the matching keys not drawn yet, listed through an index
        listed = store.select(MapRecord, where=where, order_by="id", columns=id_only)
        rest = [k for (k,) in listed if k not in chosen]
        chosen.update(dict.fromkeys(rng.sample(rest, min(n - len(chosen), len(rest)))))
    return list(store.select(MapRecord, where=col("id").in_(sorted(chosen)), order_by="id"))


# -- sudoku --------------------------------------------------------------------------------


@dataclass(frozen=True)
class SudokuResult:
    """What :func:`store_sudokus` did: puzzle rows written, puzzles not written again
    (already stored, or repeated in the file), unsolvable entries, the new puzzle rows, and
    the file's entries recorded now and found recorded before."""

    stored: int
    duplicates: int
    unsolved: list[str]
    records: list[SudokuPuzzle]
    entries: int = 0
    entries_known: int = 0


class EntryConflict(EntityworksError):
    """A file's entry is recorded, at the same source and position, with another puzzle."""


#: Values per ``IN (...)`` lookup of :func:`store_sudokus`.
_LOOKUP = 500


def store_sudokus(store: Store, source: str, entries: Sequence[Any],
                  solutions: Sequence[Any]) -> SudokuResult:
    """Store solved puzzles (``generators.sudoku`` ``NamedPuzzle`` + ``Solution`` lists)
    and every entry of the file they came from, all in one transaction.

    A puzzle is one ``sudoku_puzzles`` row however often it occurs (the text is unique);
    each entry of ``entries`` is a ``sudoku_entries`` row (``source``, its position, name
    and line) naming that puzzle. Entries already recorded for ``source`` are kept as they
    are, so storing a file again adds nothing. An entry recorded for ``source`` at the same
    position with another puzzle (another file of the same name) raises
    :class:`EntryConflict` and nothing is written. Puzzles without a solution are stored
    with ``solution=None``.
    """
    fresh: dict[str, SudokuPuzzle] = {}
    unsolved = []
    for entry, solution in zip(entries, solutions, strict=True):
        puzzle = entry.puzzle
        if solution is None:
            unsolved.append(entry.name)
        if puzzle in fresh:
            continue
        count = 0 if solution is None else (1 if solution.unique in (True, None) else 2)
        fresh[puzzle] = SudokuPuzzle(
            None, source, entry.name, puzzle, None if solution is None else solution.grid,
            81 - puzzle.count("0"), count, None if solution is None else solution.guesses,
            None if solution is None else solution.nodes)
    known = list(fresh)
    ids: dict[str, int] = {}
    with store.transaction():
        for start in range(0, len(known), _LOOKUP):
            existing = store.select(SudokuPuzzle, columns=["id", "puzzle"],
                                    where=col("puzzle").in_(known[start:start + _LOOKUP]))
            for key, text in existing:
                ids[text] = key
                fresh.pop(text, None)
        rows = list(fresh.values())
        store.insert_many(rows)
        ids.update((row.puzzle, row.id) for row in rows)  # type: ignore[misc]
        recorded: dict[int, int] = {}  # position -> puzzle id, as stored before
        for start in range(0, len(entries), _LOOKUP):
            where = [col("source") == source, col("position") >= start,
                     col("position") < start + _LOOKUP]
            recorded.update(store.select(SudokuEntry, columns=["position", "puzzle_id"],
                                         where=where))
        new = []
        for position, entry in enumerate(entries):
            puzzle_id = ids[entry.puzzle]
            was = recorded.get(position)
            if was is None:
                new.append(SudokuEntry(None, source, position, entry.name, entry.line,
                                       puzzle_id))
            elif was != puzzle_id:
                raise EntryConflict(
                    f"{source}: entry {position} ({entry.name}) is recorded with another "
                    f"puzzle: another file of that name was stored before; store this one "
                    f"under a source name of its own")
        store.insert_many(new)
    return SudokuResult(len(rows), len(entries) - len(rows), unsolved, rows, len(new),
                        len(entries) - len(new))


# -- entropy -------------------------------------------------------------------------------


def sha256_of(path: str | os.PathLike[str], chunk: int = 1 << 20) -> str:
    """Hex SHA-256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            digest.update(block)
    return digest.hexdigest()


#: Largest input :func:`analyse_entropy` reads by default (``entityworks entropy --max-size``).
MAX_ENTROPY_BYTES = 1 << 30


class _HashingReader:
    """A binary stream that hashes and counts what passes through, and stops at a limit."""

    def __init__(self, stream: Any, name: str, max_bytes: int | None) -> None:
        self.stream = stream
        self.name = name
        self.max_bytes = max_bytes
        self.digest = hashlib.sha256()
        self.size = 0

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer)
        if self.max_bytes is not None:  # read at most one byte past the limit
            view = view[: max(1, min(len(view), self.max_bytes + 1 - self.size))]
        readinto = getattr(self.stream, "readinto", None)
        if readinto is not None:
            n = readinto(view) or 0
        else:
            data = self.stream.read(len(view))
            n = len(data)
            view[:n] = data
        self.size += n
        if self.max_bytes is not None and self.size > self.max_bytes:
            raise InputTooLarge(f"{self.name}: more than {self.max_bytes:,} bytes, the size "
                                f"limit (raise it with --max-size / max_bytes)")
        self.digest.update(view[:n])
        return n

    def read(self, size: int = 1 << 20) -> bytes:
        buffer = bytearray(size)
        return bytes(buffer[: self.readinto(buffer)])


def analyse_entropy(source: str | os.PathLike[str] | Any, *, name: str | None = None,
                    max_bytes: int | None = MAX_ENTROPY_BYTES
                    ) -> tuple[EntropyRecord, Any]:
    """Read ``source`` (a path or a binary stream: a FIFO, a device, stdin) exactly once and
    return its catalog row and ``generators.bytes.entropy`` report: the figures and the SHA-256
    describe the same bytes. More than ``max_bytes`` bytes (None: no limit) raise
    :class:`InputTooLarge`; a regular file is checked before it is read."""
    from generators.bytes import entropy

    if isinstance(source, str | os.PathLike):
        label = name or os.fspath(source)
        with open(source, "rb") as stream:
            size = os.fstat(stream.fileno()).st_size
            if max_bytes is not None and size > max_bytes and _regular(stream):
                raise InputTooLarge(f"{label}: {size:,} bytes, more than the size limit of "
                                    f"{max_bytes:,} (raise it with --max-size / max_bytes)")
            return analyse_entropy(stream, name=label, max_bytes=max_bytes)
    label = name or str(getattr(source, "name", "<stream>"))
    reader = _HashingReader(source, label, max_bytes)
    report = entropy.report(reader)  # type: ignore[arg-type]  # a binary stream: readinto
    return entropy_record(label, report, sha256=reader.digest.hexdigest()), report


def _regular(stream: Any) -> bool:
    import stat

    return stat.S_ISREG(os.fstat(stream.fileno()).st_mode)


def entropy_record(path: str | os.PathLike[str], report: Any, *, sha256: str | None = None
                   ) -> EntropyRecord:
    """The catalog row for ``report``, a ``generators.bytes.entropy.report`` of the file ``path``.

    Without ``sha256`` the file is read again to hash it; :func:`analyse_entropy` reads once.
    """
    return EntropyRecord(
        None, str(path), int(report.size), sha256 or sha256_of(path), report.entropy,
        report.optimum_compression, report.chi_square, report.chi_square_probability,
        report.mean, report.monte_carlo_pi, report.monte_carlo_error,
        report.serial_correlation, int(report.unique_symbols),
        [int(v) for v in report.distribution])


def store_entropy(store: Store, paths: Sequence[str | os.PathLike[str]], *,
                  max_bytes: int | None = None) -> list[tuple[EntropyRecord, Any]]:
    """Analyse each file (read once), store one row per file, return ``(row, report)``
    pairs. Nothing is stored unless every file could be read."""
    pairs = [analyse_entropy(p, max_bytes=max_bytes) for p in paths]
    store.insert_many([row for row, _ in pairs])
    return pairs


_views: dict[str, type] = {}


def table_class(name: str) -> type | None:
    """The dataclass to read catalog table ``name`` with, or None for other tables.

    A child table (``maps_caves``...) gets a flat class of its own: ``parent_key``,
    ``position`` and the item's fields, typed as the catalog declares them (not as a database
    reflects them, which can differ: MariaDB reflects DOUBLE as Decimal).
    """
    if name in TABLES:
        return TABLES[name]
    if name not in _views:
        for cls in TABLES.values():
            for child in table_schema(cls).children:
                if child.schema.name == name:
                    specs = [(c.name, c.python_type | None if c.nullable else c.python_type)
                             for c in child.schema.columns]
                    view = dataclasses.make_dataclass(
                        "".join(p.capitalize() for p in name.split("_")), specs)
                    view.__tablename__ = name  # type: ignore[attr-defined]
                    _views[name] = view
    return _views.get(name)


def check_catalog_table(name: str) -> type:
    """The catalog class stored in table ``name``; EntityworksError when it is not one."""
    try:
        return TABLES[name]
    except KeyError:
        raise EntityworksError(f"{name!r} is not a catalog table; catalog tables are: "
                               f"{', '.join(TABLES)}") from None


__all__ = [
    "KINDS",
    "TABLES",
    "BuildSummary",
    "EntropyRecord",
    "GenerateStats",
    "InputTooLarge",
    "MapCave",
    "MapCorridor",
    "MapKind",
    "MapPlacement",
    "MapRecord",
    "MapRoom",
    "MAX_ENTROPY_BYTES",
    "MAX_MAP_CELLS",
    "ShortBuild",
    "SudokuEntry",
    "SudokuPuzzle",
    "SudokuResult",
    "CopyStats",
    "EntryConflict",
    "PLACEMENT_LABELS",
    "analyse_entropy",
    "build_map",
    "build_outcome",
    "check_parameters",
    "copy_catalog",
    "decode_grid",
    "entropy_record",
    "find_maps",
    "generate_encoded",
    "generate_into",
    "generate_maps",
    "largest_maps",
    "load_grid",
    "load_map",
    "map_filter",
    "map_kind",
    "map_record",
    "map_stats",
    "open_catalog",
    "place_on_map",
    "placement_labels",
    "sample_maps",
    "save_maps",
    "sha256_of",
    "single_region_maps",
    "store_entropy",
    "store_placements",
    "store_sudokus",
    "table_class",
    "upgrade_catalog",
]

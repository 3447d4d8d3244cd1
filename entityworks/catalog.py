"""The level catalog: generated maps, sudoku puzzles and entropy reports as entityworks tables.

Everything here is stored and queried through :class:`~entityworks.Store`; the module holds no
SQL. A map row keeps the grid itself (``.npy`` bytes, dtype and shape intact), the parameters
and seed that rebuild it, and statistics derived from the grid (open ratio, 4-connected region
count, largest region), with its caves, rooms and corridors in child tables::

    store = open_catalog("levels.db")
    save_maps(store, generate_maps("caves", count=20, seed=1))
    find_maps(store, kind="caves", width=(80, 120), open_ratio=(0.45, None), regions=1)
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import importlib
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

from .errors import EntityworksError
from .filters import col
from .schema import column, primary_key, table, table_schema
from .store import Store

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
    """A dug corridor: its end points, length and the cells ``[[x, y], ...]`` in order."""

    length: int
    start_x: int
    start_y: int
    end_x: int
    end_y: int
    path: list[list[int]]


def _utc_now() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(tzinfo=None, microsecond=0)


@table("maps")
@dataclass
class MapRecord:
    """One generated map. ``open_ratio``, ``region_count`` and ``largest_region`` are measured
    on ``grid`` (1 = wall, 0 = floor; regions are 4-connected)."""

    id: int | None = primary_key()
    kind: str = column(index=True)
    generator: str
    parameters: dict[str, Any]
    seed: int | None = column(index=True)
    width: int
    height: int
    grid: np.ndarray
    open_ratio: float
    region_count: int
    largest_region: int
    created_at: dt.datetime = field(default_factory=_utc_now)
    caves: list[MapCave] = field(default_factory=list)
    rooms: list[MapRoom] = field(default_factory=list)
    corridors: list[MapCorridor] = field(default_factory=list)


@table("sudoku_puzzles")
@dataclass
class SudokuPuzzle:
    """A puzzle (81 chars, ``0`` = blank) with its solution; the puzzle text is unique.

    ``solution_count`` is 0, 1 or 2 (2 meaning "more than one"); ``difficulty`` counts the
    solver's guesses (0: singles alone solve it) and ``nodes`` the states it expanded.
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


@table("entropy_reports")
@dataclass
class EntropyRecord:
    """What ``ent`` says about a file (``generators.entropy.report``), plus its path, size,
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
TABLES: dict[str, type] = {"maps": MapRecord, "sudoku_puzzles": SudokuPuzzle,
                           "entropy_reports": EntropyRecord}


def open_catalog(url: str | os.PathLike[str] | Store) -> Store:
    """A Store whose database holds the catalog at the latest revision (see ``migrate``)."""
    from .migrate import upgrade

    store = url if isinstance(url, Store) else Store(url)
    upgrade(store)
    return store


# -- maps from generator results -----------------------------------------------------------


def map_stats(grid: np.ndarray) -> tuple[float, int, int]:
    """``(open_ratio, region_count, largest_region)`` of a grid (4-connected floor regions)."""
    from generators.regions import region_stats

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
        dict(result.params), result.seed, int(grid.shape[1]), int(grid.shape[0]), grid,
        ratio, regions, largest, _utc_now(), caves, rooms, corridors)


# -- generating ----------------------------------------------------------------------------


@dataclass(frozen=True)
class MapKind:
    """A kind of map the catalog can generate: a generator function and fixed arguments."""

    name: str
    module: str
    fixed: tuple[tuple[str, Any], ...] = ()
    help: str = ""

    def function(self) -> Callable[..., Any]:
        return importlib.import_module(self.module).generate  # type: ignore[no-any-return]

    def parameters(self) -> list[str]:
        """Names the generator accepts (besides ``seed``) that are not fixed by the kind."""
        fixed = dict(self.fixed)
        return [p for p in inspect.signature(self.function()).parameters
                if p != "seed" and p not in fixed]


KINDS: dict[str, MapKind] = {k.name: k for k in (
    MapKind("caves", "generators.caves", help="cave systems joined by corridors [100x100]"),
    MapKind("dungeon", "generators.dungeon", help="rooms joined by corridors [150x150]"),
    MapKind("islands", "generators.islands", (("island", True),), "island maps [99x99]"),
    MapKind("labyrinth", "generators.islands", (("island", False),), "labyrinth maps [99x99]"),
    MapKind("cellular", "generators.cellular", help="cellular-automaton caves, 4-5 rule [40x21]"),
)}


def map_kind(name: str) -> MapKind:
    """The :class:`MapKind` called ``name``; a ValueError lists the known kinds."""
    try:
        return KINDS[name]
    except KeyError:
        raise ValueError(f"unknown map kind {name!r}; choose from "
                         f"{', '.join(sorted(KINDS))}") from None


def check_parameters(kind: str, params: dict[str, Any]) -> None:
    """Refuse parameter names the generator of ``kind`` does not take."""
    spec = map_kind(kind)
    accepted = spec.parameters()
    for name in params:
        if name not in accepted:
            raise ValueError(f"{kind} has no parameter {name!r}; parameters are: "
                             f"{', '.join(accepted)}")


def build_map(kind: str, seed: int | None, params: dict[str, Any]) -> MapRecord:
    """Generate one map of ``kind`` and return its catalog row (runs in worker processes)."""
    spec = map_kind(kind)
    result = spec.function()(**params, **dict(spec.fixed), seed=seed)
    return map_record(result, kind=kind, generator=spec.module)


def _build_chunk(kind: str, seeds: list[int | None], params: dict[str, Any]
                 ) -> list[MapRecord]:
    return [build_map(kind, s, params) for s in seeds]


def generate_maps(kind: str, count: int, *, seed: int | None = None,
                  params: dict[str, Any] | None = None, workers: int = 1,
                  chunk: int = 8) -> Iterator[list[MapRecord]]:
    """Generate ``count`` maps in chunks, on ``workers`` processes, in seed order.

    With ``seed`` the maps get seeds ``seed, seed + 1, ...``; without, each map draws its own
    seed from the OS. Either way every row records the seed that rebuilds it.
    """
    params = dict(params or {})
    check_parameters(kind, params)
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise ValueError(f"count must be an integer >= 0, got {count!r}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be an integer >= 1, got {workers!r}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    seeds: list[int | None] = [None if seed is None else seed + i for i in range(count)]
    if count:  # fail fast, in this process, on a bad parameter value
        first = build_map(kind, seeds[0], params)
        yield [first]
        seeds = seeds[1:]
    chunks = [seeds[i:i + chunk] for i in range(0, len(seeds), chunk)]
    if workers == 1 or len(chunks) <= 1:
        for part in chunks:
            yield _build_chunk(kind, part, params)
        return
    # Workers ignore Ctrl-C: only this process stops, cancels the chunks not started and
    # drains the running ones (a worker interrupted while sending its result would block the
    # pool's shutdown for ever).
    pool = ProcessPoolExecutor(max_workers=workers, initializer=_ignore_interrupts)
    try:
        yield from pool.map(_build_chunk, [kind] * len(chunks), chunks,
                            [params] * len(chunks))
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _ignore_interrupts() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def save_maps(store: Store, records: Iterable[MapRecord]) -> int:
    """Insert map rows (and their caves, rooms and corridors); returns how many."""
    return store.insert_many(list(records))


@dataclass(frozen=True)
class GenerateStats:
    """What :func:`generate_into` did and where its time went."""

    kind: str
    count: int
    seconds: float
    storage_seconds: float
    ids: tuple[int, int] | None
    seeds: tuple[int | None, int | None] | None

    @property
    def maps_per_second(self) -> float:
        return self.count / self.seconds if self.seconds > 0 else float("inf")

    @property
    def storage_share(self) -> float:
        """Fraction of the wall time spent writing to the database."""
        return self.storage_seconds / self.seconds if self.seconds > 0 else 0.0


def generate_into(store: Store, kind: str, count: int, *, seed: int | None = None,
                  params: dict[str, Any] | None = None, workers: int = 1,
                  progress: Callable[[int], None] | None = None) -> GenerateStats:
    """Generate ``count`` maps on ``workers`` processes and store them as they arrive.

    ``progress(n)`` is called after each stored chunk with the number of maps it held.
    """
    start = time.perf_counter()
    storage = 0.0
    ids: list[int] = []
    seeds: list[int | None] = []
    for records in generate_maps(kind, count, seed=seed, params=params, workers=workers):
        t = time.perf_counter()
        save_maps(store, records)
        storage += time.perf_counter() - t
        ids += [r.id for r in records if r.id is not None]
        seeds += [r.seed for r in records]
        if progress is not None:
            progress(len(records))
    elapsed = time.perf_counter() - start
    return GenerateStats(kind, len(seeds), elapsed, storage,
                         (min(ids), max(ids)) if ids else None,
                         (seeds[0], seeds[-1]) if seeds else None)


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
    """The ``n`` maps with the most ``by`` (default: the largest connected floor region)."""
    where = map_filter(kind=kind)
    return list(store.select(MapRecord, where=where, order_by=[f"-{by}", "id"], limit=n))


def single_region_maps(store: Store, *, kind: str | None = None, limit: int | None = None
                       ) -> list[MapRecord]:
    """Maps whose floor is exactly one connected region."""
    return find_maps(store, kind=kind, regions=1, limit=limit)


def sample_maps(store: Store, n: int, *, kind: str | None = None, seed: int | None = None
                ) -> list[MapRecord]:
    """``n`` maps drawn at random without replacement (fewer when fewer exist).

    The draw happens here (a seeded ``random.Random``) and rows are fetched by position, so
    it behaves the same on every database.
    """
    where = map_filter(kind=kind)
    total = store.count(MapRecord, where=where)
    picks = sorted(random.Random(seed).sample(range(total), min(n, total)))
    out = []
    for position in picks:
        out += store.select(MapRecord, where=where, order_by="id", limit=1, offset=position)
    return out


# -- sudoku --------------------------------------------------------------------------------


@dataclass(frozen=True)
class SudokuResult:
    """What :func:`store_sudokus` did: rows written, duplicates skipped, unsolvable ones."""

    stored: int
    duplicates: int
    unsolved: list[str]
    records: list[SudokuPuzzle]


def store_sudokus(store: Store, source: str, entries: Sequence[Any],
                  solutions: Sequence[Any]) -> SudokuResult:
    """Store solved puzzles (``generators.sudoku`` ``NamedPuzzle`` + ``Solution`` lists).

    A puzzle already in the catalog, or repeated in ``entries``, is skipped: the puzzle text
    is unique. Rows for puzzles without a solution are stored with ``solution=None``.
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
    with store.transaction():
        for start in range(0, len(known), 500):
            existing = store.select(SudokuPuzzle,
                                    where=col("puzzle").in_(known[start:start + 500]))
            for row in existing:
                fresh.pop(row.puzzle, None)
        rows = list(fresh.values())
        store.insert_many(rows)
    return SudokuResult(len(rows), len(entries) - len(rows), unsolved, rows)


# -- entropy -------------------------------------------------------------------------------


def sha256_of(path: str | os.PathLike[str], chunk: int = 1 << 20) -> str:
    """Hex SHA-256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def entropy_record(path: str | os.PathLike[str], report: Any) -> EntropyRecord:
    """The catalog row for ``report``, a ``generators.entropy.report`` of the file ``path``."""
    return EntropyRecord(
        None, str(path), int(report.size), sha256_of(path), report.entropy,
        report.optimum_compression, report.chi_square, report.chi_square_probability,
        report.mean, report.monte_carlo_pi, report.monte_carlo_error,
        report.serial_correlation, int(report.unique_symbols),
        [int(v) for v in report.distribution])


def store_entropy(store: Store, paths: Sequence[str | os.PathLike[str]]
                  ) -> list[tuple[EntropyRecord, Any]]:
    """Analyse each file, store one row per file, return ``(row, report)`` pairs."""
    from generators import entropy

    pairs = [(entropy_record(p, rep), rep) for p in paths for rep in [entropy.report(p)]]
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
    "EntropyRecord",
    "GenerateStats",
    "MapCave",
    "MapCorridor",
    "MapKind",
    "MapRecord",
    "MapRoom",
    "SudokuPuzzle",
    "SudokuResult",
    "build_map",
    "check_parameters",
    "entropy_record",
    "find_maps",
    "generate_into",
    "generate_maps",
    "largest_maps",
    "map_filter",
    "map_kind",
    "map_record",
    "map_stats",
    "open_catalog",
    "sample_maps",
    "save_maps",
    "sha256_of",
    "single_region_maps",
    "store_entropy",
    "store_sudokus",
    "table_class",
]

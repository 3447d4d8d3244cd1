"""The catalog's tables: maps (with their caves, rooms, corridors and placements), sudoku
puzzles and the entries of the files they came from, and entropy reports.

Only the dataclasses and what names them (:data:`TABLES`, :func:`table_class`): every other
catalog module reads and writes these, so they sit at the bottom, importing no generator.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import sys
from dataclasses import dataclass, field
from typing import Any

from ..errors import EntityworksError
from ..model.schema import column, entity, primary_key, table_schema
from .packing import PackedGrid, PointPath, check_grid_shape


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


def utc_now() -> dt.datetime:
    """The time a new row is stamped with: UTC, naive, to the second."""
    return dt.datetime.now(dt.UTC).replace(tzinfo=None, microsecond=0)


#: Composite indexes of ``maps``, one per kind of designer query: :func:`find_maps` by kind
#: and size, by region count and open ratio (each also holding the other columns those
#: queries filter on, so that the filters are checked in the index and only matching rows are
#: read; revision ``0007_covering_indexes``), :func:`largest_maps` by kind.
MAP_INDEXES = (
    ("kind", "width", "height", "region_count", "open_ratio"),
    ("region_count", "open_ratio", "width", "height"),
    ("kind", "largest_region"),
)


@entity("maps", indexes=MAP_INDEXES, compact_children=True)
class MapRecord:
    """One generated map. ``open_ratio``, ``region_count`` and ``largest_region`` are measured
    on ``grid`` (1 = wall, 0 = floor; regions are 4-connected).

    The build's own outcome, for generators that report one (dungeons and caves; NULL for
    other kinds and for maps stored before revision ``0008_entries_and_outcomes``):
    ``build_success`` (every room asked for was built and the floor is connected; for a cave
    system, which has no rooms, its floor is one 4-connected region), ``rooms_asked``,
    ``rooms_built`` (NULL for caves) and ``connected``. A failed build is stored as what it
    is, not as a map that looks like any other.

    Its provenance (revision ``0010_provenance``): ``generator_version``, the version of the
    generator that built it (:meth:`~.kinds.MapKind.generator_version`), and ``grid_sha256``,
    the SHA-256 of its grid (:func:`~._build.grid_sha256`) as built. Both are NULL for maps
    stored before that revision until ``verify --fill`` records them
    (:func:`~._verify.verify_catalog`).

    ``grid.shape`` is always ``(height, width)``: a map whose grid is of another size is
    refused when it is built, read or written (:class:`~.packing.GridShapeMismatch`).

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
    created_at: dt.datetime = field(default_factory=utc_now)
    build_success: bool | None = None
    rooms_asked: int | None = None
    rooms_built: int | None = None
    connected: bool | None = None
    generator_version: str | None = column(default=None, index=True, max_length=64)
    grid_sha256: str | None = None
    grid: PackedGrid = field(kw_only=True)
    caves: list[MapCave] = field(default_factory=list)
    rooms: list[MapRoom] = field(default_factory=list)
    corridors: list[MapCorridor] = field(default_factory=list)
    placements: list[MapPlacement] = field(default_factory=list)

    def __post_init__(self) -> None:
        """Refuse a grid whose shape is not ``(height, width)``: every reader (the Store,
        XML, Arrow/pandas/Parquet, DiffGram) builds its rows through here, and so does a
        new map, so a row whose grid disagrees with its size is never read nor written.
        (The catalog's own readers refuse such a row from the blob's header already,
        before unpacking it: :func:`~._queries.load_map`, :func:`~._queries.load_grid`.)"""
        grid = self.grid
        numpy = sys.modules.get("numpy")  # no array before NumPy is imported
        if numpy is not None and isinstance(grid, numpy.ndarray):
            check_grid_shape(grid.shape, self.width, self.height, self.id)


@entity("sudoku_puzzles")  # checkers then take primary_key() as no default, as the runtime
class SudokuPuzzle:
    """A puzzle (81 chars, ``0`` = blank) with its solution; the puzzle text is unique.

    ``solution_count`` is 0, 1 or 2 (2 meaning "more than one"); ``difficulty`` counts the
    solver's guesses (0: singles alone solve it) and ``nodes`` the states it expanded;
    ``solver_version`` is the version of the solver (``generators.__version__``) that found
    those figures (NULL for puzzles stored before revision ``0010_provenance``).
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
    created_at: dt.datetime = field(default_factory=utc_now)
    solver_version: str | None = None


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
    created_at: dt.datetime = field(default_factory=utc_now)


#: The catalog's top-level classes, by table name.
TABLES: dict[str, type[Any]] = {
    "maps": MapRecord,
    "sudoku_puzzles": SudokuPuzzle,
    "sudoku_entries": SudokuEntry,
    "entropy_reports": EntropyRecord,
}

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
                    specs = [
                        (c.name, c.python_type | None if c.nullable else c.python_type)
                        for c in child.schema.columns
                    ]
                    view = dataclasses.make_dataclass(
                        "".join(p.capitalize() for p in name.split("_")), specs
                    )
                    view.__tablename__ = name  # type: ignore[attr-defined]
                    _views[name] = view
    return _views.get(name)


def check_catalog_table(name: str) -> type:
    """The catalog class stored in table ``name``; EntityworksError when it is not one."""
    try:
        return TABLES[name]
    except KeyError:
        raise EntityworksError(
            f"{name!r} is not a catalog table; catalog tables are: {', '.join(TABLES)}"
        ) from None


__all__ = [
    "MAP_INDEXES",
    "TABLES",
    "EntropyRecord",
    "MapCave",
    "MapCorridor",
    "MapPlacement",
    "MapRecord",
    "MapRoom",
    "SudokuEntry",
    "SudokuPuzzle",
    "check_catalog_table",
    "table_class",
    "utc_now",
]

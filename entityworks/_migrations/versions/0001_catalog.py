"""The level catalog: maps with caves, rooms and corridors, sudoku puzzles, entropy reports.

Revision ID: 0001_catalog
Revises:
Create Date: 2026-11-21

The tables are described by dataclasses frozen in this file (copies of the catalog classes as
they were at this revision) and turned into tables by entityworks' own reflection, so a
catalog created through the migrations is exactly what ``Store.create`` would build for the
same classes (types, keys, indexes, SQLite STRICT), while later changes to
``entityworks.catalog`` need a new revision instead of silently changing this one.
"""

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from entityworks.migrate import create_tables, drop_tables
from entityworks.model.schema import column, primary_key, table

revision = "0001_catalog"
down_revision = None
branch_labels = None
depends_on = None


@dataclass
class MapCave:
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
    x: int
    y: int
    width: int
    height: int


@dataclass
class MapCorridor:
    length: int
    start_x: int
    start_y: int
    end_x: int
    end_y: int
    path: list[list[int]]


@table("maps")
@dataclass
class MapRecord:
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
    created_at: dt.datetime
    caves: list[MapCave] = field(default_factory=list)
    rooms: list[MapRoom] = field(default_factory=list)
    corridors: list[MapCorridor] = field(default_factory=list)


@table("sudoku_puzzles")
@dataclass
class SudokuPuzzle:
    id: int | None = primary_key()
    source: str
    name: str
    puzzle: str = column(unique=True)
    solution: str | None
    clues: int
    solution_count: int
    difficulty: int | None
    nodes: int | None
    created_at: dt.datetime


@table("entropy_reports")
@dataclass
class EntropyRecord:
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
    created_at: dt.datetime


TABLES = [MapRecord, SudokuPuzzle, EntropyRecord]


def upgrade() -> None:
    create_tables(TABLES)


def downgrade() -> None:
    drop_tables(TABLES)

"""Every entry of a sudoku file, and the outcome of each map's build.

Revision ID: 0008_entries_and_outcomes
Revises: 0007_covering_indexes
Create Date: 2026-11-24

* ``sudoku_entries`` (``source``, ``position``, ``name``, ``line``, ``puzzle_id`` ->
  ``sudoku_puzzles.id``, unique ``(source, position)``): one row per entry of a stored file.
  A puzzle stays one row however often it occurs; before this revision a file's second
  entry of a puzzle (Project Euler 96's Grid 41, which is Grid 09) left no trace, and the
  file's answer could not be computed from the database. Puzzles stored before keep no
  entries: storing their file again records them (the puzzles are not duplicated).
* ``maps.build_success``, ``rooms_asked``, ``rooms_built``, ``connected`` (nullable; NULL for
  the rows already there and for kinds whose generator reports no outcome). ``grid`` stays
  the table's last column: SQLite rebuilds the table with the new columns before it,
  MariaDB adds them ``AFTER created_at``, PostgreSQL (which only appends columns) moves the
  grid behind them in one ``UPDATE``.

The downgrade drops the table and the columns.
"""

import datetime as dt
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.schema import CreateColumn

from entityworks.catalog.packing import PackedGrid
from entityworks.migrate import drop_tables, target_metadata
from entityworks.migrate.dialects import (
    places_added_columns,
    rebuilds_tables,
    rebuilt_table_options,
)
from entityworks.model.schema import column, primary_key, table

revision = "0008_entries_and_outcomes"
down_revision = "0007_covering_indexes"
branch_labels = None
depends_on = None

#: The new columns of ``maps``, in table order (before ``grid``).
NEW_COLUMNS = ["build_success", "rooms_asked", "rooms_built", "connected"]
#: The composite indexes of ``maps`` at revision 0007 (frozen here).
MAP_INDEXES = (
    ("kind", "width", "height", "region_count", "open_ratio"),
    ("region_count", "open_ratio", "width", "height"),
    ("kind", "largest_region"),
)


@table("maps", indexes=MAP_INDEXES)
@dataclass
class MapsBefore:
    """``maps`` as revision 0007 leaves it (for offline SQL, which cannot reflect it)."""

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
    created_at: dt.datetime
    grid: PackedGrid


@table("maps", indexes=MAP_INDEXES)
@dataclass
class MapsAfter:
    """``maps`` as this revision leaves it."""

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
    created_at: dt.datetime
    build_success: bool | None
    rooms_asked: int | None
    rooms_built: int | None
    connected: bool | None
    grid: PackedGrid


@table("sudoku_puzzles")
@dataclass
class SudokuPuzzle:
    """The key the entries refer to (the table itself is not changed)."""

    id: int | None = primary_key()


@table("sudoku_entries", unique=[("source", "position")])
@dataclass
class SudokuEntry:
    id: int | None = primary_key()
    source: str
    position: int
    name: str
    line: int
    puzzle_id: int = column(references=SudokuPuzzle, index=True, on_delete="cascade")


def _dialect() -> str:
    return op.get_context().dialect.name


def _maps(cls: type) -> sa.Table:
    return target_metadata([cls], _dialect()).tables["maps"]


def _create_entries() -> None:
    """``sudoku_entries`` exactly as entityworks builds it, its composite unique included."""
    built = target_metadata([SudokuEntry], _dialect()).tables["sudoku_entries"]
    op.get_context().impl.create_table(built)  # CREATE TABLE, then its index


def upgrade() -> None:
    _create_entries()
    dialect = op.get_context().dialect
    after = _maps(MapsAfter)
    new = [after.c[n] for n in NEW_COLUMNS]
    if rebuilds_tables(dialect):
        copy_from = _maps(MapsBefore) if op.get_context().as_sql else None
        with op.batch_alter_table(
            "maps",
            recreate="always",
            copy_from=copy_from,
            table_kwargs=rebuilt_table_options(dialect),
        ) as batch:
            for c in new:
                batch.add_column(c, insert_before="grid")  # Alembic adds a copy
    elif places_added_columns(dialect):
        quote = dialect.identifier_preparer.quote
        previous = "created_at"
        for c in new:  # identifiers quoted and types rendered by the dialect: no values
            spec = CreateColumn(c).compile(dialect=dialect)
            op.execute(f"ALTER TABLE {quote('maps')} ADD COLUMN {spec} AFTER {quote(previous)}")
            previous = c.name
    else:  # PostgreSQL appends columns: the grid moves behind the new ones
        for c in new:
            op.add_column("maps", c)  # Alembic adds a copy
        blob = after.c["grid"].type
        op.add_column("maps", sa.Column("grid_moved", blob, nullable=True))
        op.execute("UPDATE maps SET grid_moved = grid")
        op.drop_column("maps", "grid")
        op.alter_column(
            "maps", "grid_moved", new_column_name="grid", nullable=False, existing_type=blob
        )


def downgrade() -> None:
    dialect = op.get_context().dialect
    if rebuilds_tables(dialect):
        offline = op.get_context().as_sql
        copy_from = _maps(MapsAfter) if offline else None
        with op.batch_alter_table(
            "maps",
            recreate="always",
            copy_from=copy_from,
            table_kwargs=rebuilt_table_options(dialect),
        ) as batch:
            if not offline:  # reflected as table CHECKs, which would outlive their columns
                checks = {
                    c["name"] for c in sa.inspect(op.get_bind()).get_check_constraints("maps")
                }
                for name in NEW_COLUMNS:
                    if f"type_{name}" in checks:
                        batch.drop_constraint(f"type_{name}", type_="check")
            for name in NEW_COLUMNS:
                batch.drop_column(name)
    else:
        for name in reversed(NEW_COLUMNS):
            op.drop_column("maps", name)
    drop_tables([SudokuEntry], only=["sudoku_entries"])

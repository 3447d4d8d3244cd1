"""Provenance: the generator version and grid hash of each map, the solver's version of each
puzzle.

Revision ID: 0010_provenance
Revises: 0009_sqlite_affinity
Create Date: 2026-12-06

* ``maps.generator_version`` (at most 64 characters, indexed) and ``maps.grid_sha256``
  (nullable): the version of the generator that built the map and the SHA-256 of its grid
  as built (``entityworks.catalog.grid_sha256``). ``grid`` stays the table's last column,
  as in revision 0008: SQLite rebuilds the table with the new columns before it, MariaDB
  adds them ``AFTER connected``, PostgreSQL (which only appends columns) moves the grid
  behind them in one ``UPDATE``.
* ``sudoku_puzzles.solver_version`` (nullable, the table's last column).

The rows already there keep NULL in the new columns: nothing records what made them.
``entityworks verify --fill`` regenerates each such map and records the version and hash
of the generator installed when it rebuilds the stored grid exactly.

The downgrade drops the columns and the index.
"""

import datetime as dt
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.schema import CreateColumn

from entityworks.catalog.packing import PackedGrid
from entityworks.migrate import target_metadata
from entityworks.migrate.dialects import (
    places_added_columns,
    rebuilds_tables,
    rebuilt_table_options,
)
from entityworks.model.schema import column, primary_key, table

revision = "0010_provenance"
down_revision = "0009_sqlite_affinity"
branch_labels = None
depends_on = None

#: The new columns of ``maps``, in table order (before ``grid``).
NEW_COLUMNS = ["generator_version", "grid_sha256"]
#: The longest ``generator_version`` (SQLite checks it in a named CHECK).
VERSION_LENGTH = 64
INDEX = "ix_maps_generator_version"
#: The composite indexes of ``maps`` at revision 0009 (frozen here).
MAP_INDEXES = (
    ("kind", "width", "height", "region_count", "open_ratio"),
    ("region_count", "open_ratio", "width", "height"),
    ("kind", "largest_region"),
)


@table("maps", indexes=MAP_INDEXES)
@dataclass
class MapsBefore:
    """``maps`` as revision 0009 leaves it (for offline SQL, which cannot reflect it)."""

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
    generator_version: str | None = column(index=True, max_length=VERSION_LENGTH)
    grid_sha256: str | None
    grid: PackedGrid


@table("sudoku_puzzles")
@dataclass
class PuzzlesAfter:
    """The new column of ``sudoku_puzzles`` (the rest of the table is not changed)."""

    id: int | None = primary_key()
    solver_version: str | None


def _dialect() -> str:
    return op.get_context().dialect.name


def _maps(cls: type) -> sa.Table:
    return target_metadata([cls], _dialect()).tables["maps"]


def _quote(name: str) -> str:
    return op.get_context().dialect.identifier_preparer.quote(name)


def _length_check() -> tuple[str, Any]:
    """SQLite's CHECK on the version's length, as a new catalog declares it."""
    name = "generator_version"
    return f"length_{name}", sa.text(f"length({_quote(name)}) <= {VERSION_LENGTH}")


def upgrade() -> None:
    dialect = op.get_context().dialect
    after = _maps(MapsAfter)
    new = [after.c[n] for n in NEW_COLUMNS]
    for c in new:  # the index is created below, under its own name
        c.index = None
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
            batch.create_check_constraint(*_length_check())
    elif places_added_columns(dialect):
        previous = "connected"
        for c in new:  # identifiers quoted and types rendered by the dialect: no values
            spec = CreateColumn(c).compile(dialect=dialect)
            op.execute(f"ALTER TABLE {_quote('maps')} ADD COLUMN {spec} AFTER {_quote(previous)}")
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
    op.create_index(INDEX, "maps", ["generator_version"])
    puzzles = target_metadata([PuzzlesAfter], _dialect()).tables["sudoku_puzzles"]
    op.add_column("sudoku_puzzles", puzzles.c["solver_version"])  # Alembic adds a copy


def downgrade() -> None:
    dialect = op.get_context().dialect
    op.drop_index(INDEX, table_name="maps")
    if rebuilds_tables(dialect):
        offline = op.get_context().as_sql
        with op.batch_alter_table(
            "maps",
            recreate="always",
            copy_from=_maps(MapsAfter) if offline else None,
            table_kwargs=rebuilt_table_options(dialect),
        ) as batch:
            if offline or _length_check()[0] in {
                c["name"] for c in sa.inspect(op.get_bind()).get_check_constraints("maps")
            }:
                batch.drop_constraint(_length_check()[0], type_="check")
            for name in NEW_COLUMNS:
                batch.drop_column(name)
        with op.batch_alter_table(
            "sudoku_puzzles", recreate="always", table_kwargs=rebuilt_table_options(dialect)
        ) as batch:
            batch.drop_column("solver_version")
    else:
        for name in reversed(NEW_COLUMNS):
            op.drop_column("maps", name)
        op.drop_column("sudoku_puzzles", "solver_version")

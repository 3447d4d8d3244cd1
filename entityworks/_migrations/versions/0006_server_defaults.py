"""Literal field defaults become DDL DEFAULTs: ``sudoku_puzzles.clues`` and ``solution_count``.

Revision ID: 0006_server_defaults
Revises: 0005_compact_grids
Create Date: 2026-11-23

entityworks now writes a field's literal default into the column's DDL (``clues: int = 0``
-> ``clues BIGINT NOT NULL DEFAULT 0``; see ``entityworks.model.defaults``), so that a table can
gain a defaulted NOT NULL column while it holds rows. The catalog's two literal defaults get
their DEFAULT here; rows are not touched. SQLite cannot alter a column's default in place, so
there the table is rebuilt (rows, the unique puzzle index and STRICT kept).
"""

import datetime as dt
from dataclasses import dataclass

import sqlalchemy as sa
from alembic import context, op

from entityworks.migrate import target_metadata
from entityworks.migrate.dialects import (
    declared_integer,
    dialect_name,
    rebuilds_tables,
    rebuilt_table_options,
)
from entityworks.model.schema import column, primary_key, table

revision = "0006_server_defaults"
down_revision = "0005_compact_grids"
branch_labels = None
depends_on = None

TABLE = "sudoku_puzzles"
#: column -> the DEFAULT at this revision (frozen: a later change needs a revision); a number
#: unquoted, as SQLite's ANY columns must get it
DEFAULTS = {"clues": "0", "solution_count": "0"}


@table("sudoku_puzzles")
@dataclass
class SudokuPuzzle:
    """The table as revisions 0001-0005 left it (for ``alembic upgrade --sql``, which cannot
    reflect it)."""

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


def _set(defaults: dict) -> None:
    dialect = op.get_context().dialect
    integer = declared_integer()
    copy_from = None
    if rebuilds_tables(dialect) and context.is_offline_mode():
        copy_from = target_metadata([SudokuPuzzle], dialect_name(dialect)).tables[TABLE]
    with op.batch_alter_table(
        TABLE,
        recreate="auto",
        table_kwargs=rebuilt_table_options(dialect),
        copy_from=copy_from,
    ) as batch:
        for column, default in defaults.items():
            batch.alter_column(
                column, existing_type=integer, existing_nullable=False, server_default=default
            )


def upgrade() -> None:
    _set({column: sa.text(default) for column, default in DEFAULTS.items()})


def downgrade() -> None:
    _set(dict.fromkeys(DEFAULTS))

"""MariaDB: the catalog's text columns compare exactly (binary, no pad).

Revision ID: 0003_mariadb_exact_text
Revises: 0002_map_placements
Create Date: 2026-11-22

Before this revision, a catalog on MariaDB kept its text columns in the database's default
collation (``utf8mb4_general_ci`` on a stock server). That collation ignores case, accents and
trailing spaces, so one filter matched other rows than on SQLite and PostgreSQL, and a unique
puzzle text or a text key clashed with a different one. Every text column of the catalog
tables becomes ``utf8mb4_nopad_bin``, which new tables get anyway
(``entityworks.sql.sqltypes.MARIADB_COLLATION``).

``ALTER TABLE ... CONVERT TO`` rebuilds a table with all its rows. A binary collation tells
apart every pair of values the old one did, so no unique index can break on the way up. Tables
that are already converted are left alone. SQLite and PostgreSQL already compare text exactly,
so there the revision does nothing. The way down restores the character set's default
collation; MariaDB refuses it if two rows now differ only in case or accents under a unique
index.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from entityworks.migrate.dialects import collates_text

revision = "0003_mariadb_exact_text"
down_revision = "0002_map_placements"
branch_labels = None
depends_on = None

#: The catalog's tables at this revision (child tables included).
TABLES = [
    "maps",
    "maps_caves",
    "maps_rooms",
    "maps_corridors",
    "maps_placements",
    "sudoku_puzzles",
    "entropy_reports",
]
CHARSET = "utf8mb4"
EXACT = "utf8mb4_nopad_bin"  # frozen here: a later change of the constant needs a revision

_COLUMNS = sa.table(
    "COLUMNS",
    sa.column("TABLE_SCHEMA"),
    sa.column("TABLE_NAME"),
    sa.column("COLLATION_NAME"),
    schema="information_schema",
)


def _text_collations(conn: sa.Connection, table: str) -> set[str]:
    """The collations of the text columns of ``table`` in the current database."""
    stmt = (
        sa.select(_COLUMNS.c.COLLATION_NAME)
        .distinct()
        .where(_COLUMNS.c.TABLE_SCHEMA == sa.func.database())
        .where(_COLUMNS.c.TABLE_NAME == table)
        .where(_COLUMNS.c.COLLATION_NAME.is_not(None))
    )
    return {row[0] for row in conn.execute(stmt)}


def _convert(collation: str | None) -> None:
    conn = op.get_bind()
    if not collates_text(conn.dialect):
        return
    quote = conn.dialect.identifier_preparer.quote
    live = set(sa.inspect(conn).get_table_names())
    for table in TABLES:
        if table not in live:
            continue
        if collation is not None and _text_collations(conn, table) <= {collation}:
            continue  # already exact
        target = f"CHARACTER SET {CHARSET}" + (f" COLLATE {collation}" if collation else "")
        # Identifiers quoted by the dialect; the rest is constant text: no value in the SQL.
        op.execute(f"ALTER TABLE {quote(table)} CONVERT TO {target}")


def upgrade() -> None:
    _convert(EXACT)


def downgrade() -> None:
    _convert(None)

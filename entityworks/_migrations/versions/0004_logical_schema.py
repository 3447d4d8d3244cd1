"""The logical schema table: what each column of an XSD-made table holds.

Revision ID: 0004_logical_schema
Revises: 0003_mariadb_exact_text
Create Date: 2026-11-22

``entityworks_schema`` records, per table created from an XSD (``import-xml``), each column's
registry type and original XSD spelling (see ``entityworks.sql.logical``), so that reflection gives
back UUIDs, Decimals, timedeltas and .NET's DataTypes instead of TEXT and INTEGER. The Store
creates the table by itself in databases that are no catalog, so it may already be there: it is
created only when missing. Its definition is frozen here.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from entityworks.sql import sqltypes

revision = "0004_logical_schema"
down_revision = "0003_mariadb_exact_text"
branch_labels = None
depends_on = None

TABLE = "entityworks_schema"


def _table() -> sa.Table:
    return sa.Table(
        TABLE,
        sa.MetaData(),
        sa.Column("table_name", sqltypes.key_text(63), primary_key=True),
        sa.Column("column_name", sqltypes.key_text(63), primary_key=True),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("logical_type", sqltypes.key_text(40), nullable=False),
        sa.Column("nullable", sa.Boolean(), nullable=False),
        sa.Column("primary_key", sa.Boolean(), nullable=False),
        sa.Column("max_length", sa.Integer(), nullable=True),
        sa.Column("details", sqltypes.text(), nullable=True),
    )


def upgrade() -> None:
    _table().create(op.get_bind(), checkfirst=True)


def downgrade() -> None:
    _table().drop(op.get_bind(), checkfirst=True)

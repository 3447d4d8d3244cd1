"""Covering indexes for the designer queries on ``maps``.

Revision ID: 0007_covering_indexes
Revises: 0006_server_defaults
Create Date: 2026-11-23

Two of the composite indexes of ``0005_compact_grids`` gain the columns the catalog's range
queries also filter on, so that those filters are checked in the index and only matching rows
are read (on 100,000 maps a range query left thousands of rows to read, each beside its grid):

* ``(kind, width, height)`` -> ``(kind, width, height, region_count, open_ratio)``
  (``find_maps`` by kind, size, region count and open ratio);
* ``(region_count, open_ratio)`` -> ``(region_count, open_ratio, width, height)``
  (the README's query: region count and open ratio, size ranges, ordered by open ratio).

Only indexes change: every row stays as it is. The downgrade restores the 0005 indexes.
"""

from __future__ import annotations

from alembic import op

revision = "0007_covering_indexes"
down_revision = "0006_server_defaults"
branch_labels = None
depends_on = None

#: (old name, old columns) -> (new name, new columns), as ``entityworks.model.schema.index_name``
#: names them
CHANGES = [
    (
        ("ix_maps_kind_width_height", ["kind", "width", "height"]),
        (
            "ix_maps_kind_width_height_region_count_open_ratio",
            ["kind", "width", "height", "region_count", "open_ratio"],
        ),
    ),
    (
        ("ix_maps_region_count_open_ratio", ["region_count", "open_ratio"]),
        (
            "ix_maps_region_count_open_ratio_width_height",
            ["region_count", "open_ratio", "width", "height"],
        ),
    ),
]


def upgrade() -> None:
    for (old, _), (new, columns) in CHANGES:
        op.create_index(new, "maps", columns)
        op.drop_index(old, table_name="maps")


def downgrade() -> None:
    for (old, columns), (new, _) in CHANGES:
        op.create_index(old, "maps", columns)
        op.drop_index(new, table_name="maps")

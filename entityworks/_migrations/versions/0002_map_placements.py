"""Placements: cells picked on a map for stairs and items, a child table of maps.

Revision ID: 0002_map_placements
Revises: 0001_catalog
Create Date: 2026-11-22

Adds ``maps_placements`` (``parent_key`` -> ``maps.id``, ``position``, ``x``, ``y``,
``label``, ``clearance``), filled by ``entityworks place`` / ``catalog.store_placements``.
The classes below freeze the table as it is at this revision; only the child table is
created, the maps table is left as it is.
"""

from dataclasses import dataclass, field

from entityworks.migrate import create_tables, drop_tables
from entityworks.model.schema import primary_key, table

revision = "0002_map_placements"
down_revision = "0001_catalog"
branch_labels = None
depends_on = None


@dataclass
class MapPlacement:
    x: int
    y: int
    label: str
    clearance: int


@table("maps")
@dataclass
class MapRecord:
    id: int | None = primary_key()
    placements: list[MapPlacement] = field(default_factory=list)


NEW_TABLES = ["maps_placements"]


def upgrade() -> None:
    create_tables([MapRecord], only=NEW_TABLES)


def downgrade() -> None:
    drop_tables([MapRecord], only=NEW_TABLES)

"""Compact grids and corridors, and indexes for the designer queries.

Revision ID: 0005_compact_grids
Revises: 0004_logical_schema
Create Date: 2026-11-22

* ``maps.grid``: ``.npy`` bytes -> bit-packed (``entityworks.catalog.packing.pack_grid``), moved to
  the table's last column so that scans of the statistics stop before it;
* ``maps_corridors.path``: JSON text -> two bits per step (``pack_points``);
* SQLite: the child tables of maps ``WITHOUT ROWID``, clustered by their key;
* indexes on ``maps`` for the queries the catalog offers: (kind, width, height),
  (region_count, open_ratio), (kind, largest_region) and largest_region.

Every row is kept: values are re-encoded in batches inside the migration's transaction
(PostgreSQL and SQLite roll everything back on an error; MariaDB commits each DDL statement
itself). The codecs used here are this file's own calls into ``entityworks.catalog.packing``, whose
forms are tagged and never change meaning, so the revision stays valid as the code moves on.
The downgrade restores ``.npy`` bytes and JSON text.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from typing import Any

import numpy as np
import sqlalchemy as sa
from alembic import op

from entityworks.catalog.packing import pack_grid, pack_points, unpack_grid, unpack_points
from entityworks.migrate.dialects import dialect_name, rebuilds_tables, rebuilt_table_options
from entityworks.sql import sqltypes

revision = "0005_compact_grids"
down_revision = "0004_logical_schema"
branch_labels = None
depends_on = None

#: name, columns (as ``entityworks.model.schema.index_name`` names them)
INDEXES = [
    ("ix_maps_kind_width_height", ["kind", "width", "height"]),
    ("ix_maps_region_count_open_ratio", ["region_count", "open_ratio"]),
    ("ix_maps_kind_largest_region", ["kind", "largest_region"]),
    ("ix_maps_largest_region", ["largest_region"]),
]
BATCH = 500
#: The other child tables of maps, and the revision that created each.
CHILDREN = [
    ("maps_caves", "0001_catalog"),
    ("maps_rooms", "0001_catalog"),
    ("maps_placements", "0002_map_placements"),
]


def _npy(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, np.ascontiguousarray(array), allow_pickle=False)
    return buffer.getvalue()


def _json(path: list[list[int]]) -> str:
    return json.dumps(path, separators=(",", ":"))


def _recode(
    table: str,
    key: list[str],
    old: str,
    new: str,
    old_type: Any,
    new_type: Any,
    convert: Callable[[Any], Any],
) -> None:
    """Fill ``table.new`` from ``table.old`` through ``convert``, ``BATCH`` rows at a time in
    key order (keyset pagination: no OFFSET, every row read once)."""
    conn = op.get_bind()
    columns = [sa.column(k, sa.BigInteger()) for k in key]
    live = sa.table(table, *columns, sa.column(old, old_type), sa.column(new, new_type))
    keys = [live.c[k] for k in key]
    last: tuple[Any, ...] | None = None
    update = (
        live.update()
        .where(*[live.c[k] == sa.bindparam(f"k_{k}") for k in key])
        .values({new: sa.bindparam("value", type_=new_type)})
    )
    while True:
        stmt = sa.select(*keys, live.c[old]).order_by(*keys).limit(BATCH)
        if last is not None and len(keys) == 1:
            stmt = stmt.where(keys[0] > last[0])
        elif last is not None:
            stmt = stmt.where(sa.tuple_(*keys) > sa.tuple_(*last))
        rows = conn.execute(stmt).all()
        if not rows:
            return
        conn.execute(
            update,
            [
                {**{f"k_{k}": r[i] for i, k in enumerate(key)}, "value": convert(r[-1])}
                for r in rows
            ],
        )
        last = tuple(rows[-1][: len(key)])


def _swap_column(
    table: str,
    key: list[str],
    name: str,
    old_type: Any,
    new_type: Any,
    convert: Callable[[Any], Any],
    clustered: bool = False,
) -> None:
    """Replace column ``name`` by one of ``new_type`` holding ``convert(value)``, appended
    as the table's last column (SQLite rebuilds the table, keeping it STRICT, and makes it
    ``WITHOUT ROWID`` when ``clustered``)."""
    temporary = f"{name}_recoded"
    op.add_column(table, sa.Column(temporary, new_type, nullable=True))
    if op.get_context().as_sql:  # offline SQL: fine for an empty catalog only
        op.execute(
            f"-- {table}.{name}: existing rows are re-encoded only by an online "
            f"upgrade (entityworks migrate)"
        )
    else:
        _recode(table, key, name, temporary, old_type, new_type, convert)
    copy_from = None
    if (
        rebuilds_tables(op.get_context().dialect) and op.get_context().as_sql
    ):  # no database to reflect: the 0001 shape
        copy_from = _table_at("0001_catalog", table)
        copy_from.append_column(sa.Column(temporary, new_type, nullable=True))
    with op.batch_alter_table(
        table, recreate="auto", table_kwargs=_options(clustered), copy_from=copy_from
    ) as batch:
        batch.drop_column(name)
        batch.alter_column(temporary, new_column_name=name, existing_type=new_type, nullable=False)


def _options(clustered: bool) -> dict[str, bool]:
    return rebuilt_table_options(op.get_context().dialect, clustered=clustered)


def _cluster_children(clustered: bool) -> None:
    """SQLite: rebuild the other child tables of maps ``WITHOUT ROWID`` (clustered by
    ``(parent_key, position)``: no separate index repeating the key), or back."""
    if not rebuilds_tables(op.get_context().dialect):
        return
    for name, born in CHILDREN:
        copy_from = _table_at(born, name) if op.get_context().as_sql else None
        with op.batch_alter_table(
            name, recreate="always", table_kwargs=_options(clustered), copy_from=copy_from
        ):
            pass


def _table_at(revision_id: str, name: str) -> sa.Table:
    """Table ``name`` as revision ``revision_id`` created it where tables are rebuilt
    (SQLite; for offline SQL)."""
    from alembic.script import ScriptDirectory

    from entityworks.model.schema import table_schema
    from entityworks.sql.tables import build_tables

    module = ScriptDirectory.from_config(op.get_context().config).get_revision(revision_id).module
    metadata = sa.MetaData()
    for cls in getattr(module, "TABLES", None) or [module.MapRecord]:
        build_tables(table_schema(cls), metadata, dialect_name(op.get_context().dialect))
    return metadata.tables[name]


def upgrade() -> None:
    blob = sqltypes.binary()
    _swap_column("maps", ["id"], "grid", blob, blob, lambda b: pack_grid(unpack_grid(b)))
    _swap_column(
        "maps_corridors",
        ["parent_key", "position"],
        "path",
        sqltypes.json_text(),
        blob,
        lambda t: pack_points(json.loads(t)),
        clustered=True,
    )
    _cluster_children(True)
    for name, columns in INDEXES:
        op.create_index(name, "maps", columns)


def downgrade() -> None:
    for name, _columns in INDEXES:
        op.drop_index(name, table_name="maps")
    _cluster_children(False)
    blob = sqltypes.binary()
    _swap_column(
        "maps_corridors",
        ["parent_key", "position"],
        "path",
        blob,
        sqltypes.json_text(),
        lambda b: _json(unpack_points(b)),
    )
    _swap_column("maps", ["id"], "grid", blob, blob, lambda b: _npy(unpack_grid(b)))

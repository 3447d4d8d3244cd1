"""Migrations: the catalog's Alembic revisions, and schema drift between a dataclass and a table.

:func:`upgrade` runs the catalog's revisions (``entityworks/_migrations``, shipped in the
package) up to head on any database (no ``alembic.ini`` needed). :func:`diff` compares
dataclasses with the live tables through Alembic's autogenerate and returns Alembic
operations; :func:`apply` runs the ones that keep data (new table, new column, nullability
change), filling a new NOT NULL column of a populated table from the field's default, so a
dataclass that gained a field migrates without losing rows.

This face only re-exports. One module per job: :mod:`.revisions` (the catalog's revisions),
:mod:`.versions` (version tables), :mod:`.metadata` (tables as entityworks builds them),
:mod:`.hooks` (Alembic's comparison and rendering hooks), :mod:`.diff`, :mod:`.apply`,
:mod:`.connection` (the connection changes run on), :mod:`.dialects` (every backend
difference) and :mod:`.scaffold` (``entityworks migrations init``).
"""

from __future__ import annotations

from .apply import SAFE as SAFE
from .apply import Applied, apply
from .connection import migration_connection as migration_connection
from .diff import check_clean, describe, diff
from .diff import parse_renames as parse_renames
from .hooks import alembic_options as alembic_options
from .hooks import compare_server_default as compare_server_default
from .hooks import compare_type as compare_type
from .hooks import render_item as render_item
from .metadata import include_tables, table_names, target_metadata
from .metadata import metadata_for as metadata_for
from .revisions import MIGRATIONS_DIR as MIGRATIONS_DIR
from .revisions import (
    alembic_config,
    create_tables,
    current,
    downgrade,
    drop_tables,
    head,
    upgrade,
)
from .versions import VERSION_TABLE
from .versions import managed_by_alembic as managed_by_alembic
from .versions import refuse_if_managed as refuse_if_managed
from .versions import version_tables as version_tables

__all__ = [
    "VERSION_TABLE",
    "Applied",
    "alembic_config",
    "apply",
    "check_clean",
    "create_tables",
    "current",
    "downgrade",
    "describe",
    "diff",
    "drop_tables",
    "head",
    "include_tables",
    "table_names",
    "target_metadata",
    "upgrade",
]

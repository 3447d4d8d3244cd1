"""Reflection: a dataclass made for a table that exists, from its columns, keys, our
companion columns and the logical types recorded beside it.

Kept apart from the Store's row paths: it reads the catalog of the database, not rows. What
the class is made of is decided by :mod:`.reflection`; this module asks SQLAlchemy's
inspector.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import sqlalchemy as sa

from ..errors import UnknownTableError
from ..registry import AwareDatetime
from ._database import Database
from .logical import ConnectionSource
from .reflection import LiveColumn, reflected_class


def column_python_type(type_: Any) -> Any:
    """The Python type of a reflected column's values."""
    # a native JSON column (PostgreSQL's json and jsonb) reads as its JSON text, which a
    # str field writes back as the column's JSON (see Backend.older_column)
    if isinstance(type_, sa.JSON):
        return str
    # MariaDB's DOUBLE is a Numeric that defaults to Decimal; a float is a float.
    if isinstance(type_, sa.Float):
        return float
    # a timestamp with time zone (PostgreSQL's timestamptz) reads as aware datetimes
    if isinstance(type_, sa.DateTime) and type_.timezone:
        return AwareDatetime
    return type_.python_type


def reflect(db: Database, table_name: str) -> type:
    """Build a dataclass for an existing table (columns, nullability, primary key)."""
    with db.connection() as conn:
        inspector = sa.inspect(conn)
        if not inspector.has_table(table_name):
            raise UnknownTableError(f"no table {table_name!r} in {db!r}")
        columns = [
            LiveColumn(
                c["name"],
                bool(c.get("nullable", True)),
                str(c["type"]),
                partial(column_python_type, c["type"]),
            )
            for c in inspector.get_columns(table_name)
        ]
        pk = inspector.get_pk_constraint(table_name).get("constrained_columns") or []
        checked = db.backend.checked_python_types(inspector, table_name)
        return reflected_class(
            table_name, columns, pk, checked, db.registry, ConnectionSource(conn)
        )


__all__ = ["column_python_type", "reflect"]

"""A field's literal default: what a column's DDL ``DEFAULT`` is made from.

A field ``theme: str = "stone"`` has the literal default ``"stone"``; a ``default_factory``
has none (its value is decided at each call). Whether and how that default becomes the
column's server ``DEFAULT`` is the SQL layer's to say (:mod:`entityworks.sql.defaults`):
this module knows no SQL.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .schema import Column, TableSchema


def field_default(schema: TableSchema, column: Column) -> Any:
    """The literal default of the field behind ``column`` (``dataclasses.MISSING`` for none, a
    ``default_factory`` or a column that is no field, such as a child's ``parent_key``)."""
    if not any(c is column for c in schema.field_columns):
        return dataclasses.MISSING
    f = schema.cls.__dataclass_fields__.get(column.name)  # type: ignore[attr-defined]
    return dataclasses.MISSING if f is None else f.default


__all__ = ["field_default"]

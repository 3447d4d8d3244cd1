"""``BoundModel``: a dataclass bound to one database (its tables, row codec and cached SQL).

Every stage of the Store (read, write, the point path, DDL) works on one; it is built once
per class and Store (see :meth:`entityworks.sql._database.Database.model`). Kept apart so
that the stages share the type and its small helpers without importing each other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from ..model.schema import TableSchema
from ._rowcodec import RowCodec

Processor = Callable[[Any], Any] | None
#: Maps an index within a batch to the row number the caller sees in errors.
RowNumber = Callable[[int], int]


@dataclass
class BoundModel:
    """A dataclass bound to one database: its tables and per-column processors."""

    schema: TableSchema
    table: sa.Table
    codec: RowCodec  # row encoders and decoders (see rowcodec)
    names: list[str]  # SQL columns, companions included
    fields: list[str]  # schema columns (one per field, parent key...)
    field_index: list[int]  # which schema columns are dataclass fields
    encoders: list[Processor]  # bulk path, per schema column (codec.fast)
    binds: list[Processor]  # the dialect's bind processor, per SQL column
    registry_encoders: list[Processor]  # rule + registry codec (SQLAlchemy executes)
    plain: bool  # rows map 1:1 onto cls(*row)
    build: Callable[..., Any]  # field values (columns, then child lists) -> obj
    children: list[tuple[str, BoundModel]]
    sql_cache: dict[str, str]
    #: ``SELECT`` of every row (no filter, order or limit), made once: the statement a
    #: plain ``Store.select(cls)`` runs, whose SQL is compiled once (``sql_cache``)
    select_all: sa.Select[Any] | None = None

    @property
    def cls(self) -> type:
        return self.schema.cls


def counting_from(first: int) -> RowNumber:
    """Row numbers ``first``, ``first + 1``, ... for a batch's indexes."""
    return first.__add__


def descendants(model: BoundModel) -> list[BoundModel]:
    """The models of every child table below ``model``, children of children included,
    parents first."""
    out: list[BoundModel] = []
    for _, child in model.children:
        out.append(child)
        out.extend(descendants(child))
    return out


def key_of(model: BoundModel, obj: Any) -> Any:
    """The key of an instance: its key field, or a tuple of them for a composite key."""
    columns = model.schema.key_columns
    if len(columns) == 1:
        return getattr(obj, columns[0].name)
    return tuple(getattr(obj, c.name) for c in columns)


def key_label(model: BoundModel) -> str | None:
    """The key's column (``"a, b"`` for a composite key), for messages."""
    return ", ".join(c.name for c in model.schema.key_columns) or None


def encoded_keys(model: BoundModel, keys: list[Any]) -> list[Any]:
    """Parent keys as stored, for the ``parent_key`` column of child tables."""
    to_db = model.schema.primary_key.info.sql_codec.encode  # type: ignore[union-attr]
    return [to_db(k) for k in keys] if to_db else keys


__all__ = [
    "BoundModel",
    "Processor",
    "RowNumber",
    "counting_from",
    "descendants",
    "encoded_keys",
    "key_label",
    "key_of",
]

"""The Arrow layout of a class (see :mod:`entityworks.arrow`): one field per dataclass field,
a type with Arrow companions as a struct of its ``value`` and them, a child table as a
``list<struct>``; and the decimal type that fits a column's values."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from ..errors import ValueEncodingError
from ..model.schema import (
    Column,
    TableSchema,
    refuse_nested_children,
    table_schema,
)
from ..registry import ARROW, Companion, TypeRegistry
from ..registry import registry as default_registry

#: The field of a column's struct (see ``_column_type``) that holds the field's own value.
VALUE = "value"


def arrow_companions(c: Column) -> tuple[Companion, ...]:
    return c.info.companions_for(ARROW)


def companion_type(companion: Companion) -> Any:
    assert companion.arrow is not None, "companions_for(ARROW) gives Arrow companions only"
    return companion.arrow()


def struct_of(own: Any, parts: tuple[Companion, ...], types: Sequence[Any] | None = None) -> Any:
    """``struct<value: own, <suffix>: ...>``: a field's own Arrow type and its companions'
    (``types``: theirs, else the registry's)."""
    kinds = types if types is not None else [companion_type(p) for p in parts]
    return pa.struct(
        [pa.field(VALUE, own), *(pa.field(p.suffix, t) for p, t in zip(parts, kinds, strict=True))]
    )


def _column_type(c: Column) -> Any:
    """The Arrow type of one column: the registry's, or for a type with Arrow companions
    a struct of the value and what its Arrow type loses (see ``struct_of``)."""
    parts = arrow_companions(c)
    if not parts:
        return c.info.arrow_codec.arrow_type()
    clash = [p.suffix for p in parts if p.suffix == VALUE]
    if clash:  # pragma: no cover - a registry entry's mistake
        raise ValueEncodingError(
            f"column {c.name!r}: a companion may not be named {VALUE!r}", column=c.name
        )
    return struct_of(c.info.arrow_codec.arrow_type(), parts)


def column_field(c: Column) -> pa.Field[Any]:
    """The one Arrow field of a column, named after its dataclass field."""
    return pa.field(c.name, _column_type(c), nullable=c.nullable)


def field_layout(schema: TableSchema) -> list[tuple[str, Column | None, TableSchema | None]]:
    """The dataclass fields in order: a column, or a child table's schema."""
    refuse_nested_children(schema, "Arrow, pandas and Parquet")
    columns = {c.name: c for c in schema.field_columns}
    children = {child.field: child.schema for child in schema.children}
    return [
        (f.name, columns.get(f.name), children.get(f.name))
        for f in dataclasses.fields(schema.cls)
        if f.name in columns or f.name in children
    ]


def arrow_schema(cls: type, *, registry: TypeRegistry = default_registry) -> pa.Schema:
    """The Arrow schema of ``cls``: one field per dataclass field, named after it, types
    from the registry. A type with Arrow companions is a struct of its ``value`` and them
    (an ``AwareDatetime``: ``struct<value: timestamp[us, tz=UTC], offset: int16>``; a
    Decimal: ``struct<value: decimal256(65, 30), scale: int8>``, which the values' own
    narrower decimal type casts to)."""
    schema = table_schema(cls, registry)
    fields = []
    for name, column, child in field_layout(schema):
        if column is not None:
            fields.append(column_field(column))
        else:
            assert child is not None
            item = pa.struct([column_field(c) for c in child.field_columns])
            fields.append(
                pa.field(name, pa.list_(pa.field("item", item, nullable=False)), nullable=False)
            )
    return pa.schema(fields, metadata={b"entityworks.table": schema.name.encode()})


def decimal_type(integer: int, scale: int) -> Any:
    """decimal128(p, s) for ``integer`` digits before the point and ``scale`` after, or
    decimal256(p, s) beyond decimal128's 38 digits (the registry allows 35 + 30)."""
    precision = max(1, integer + scale)
    return pa.decimal128(precision, scale) if precision <= 38 else pa.decimal256(precision, scale)


def older_names(columns: Sequence[Column], present: set[str]) -> dict[str, Companion]:
    """The companion columns beside their fields' among ``present`` (the layout of
    entityworks 0.2, before each field became one column), by name."""
    fields = {c.name for c in columns}
    return {
        p.column(c.name): p
        for c in columns
        for p in arrow_companions(c)
        if p.column(c.name) in present and p.column(c.name) not in fields
    }


__all__ = [
    "VALUE",
    "arrow_companions",
    "arrow_schema",
    "column_field",
    "companion_type",
    "decimal_type",
    "field_layout",
    "older_names",
    "struct_of",
]

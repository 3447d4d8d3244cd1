"""Reading the logical schema back (see :mod:`.logical`, which records it): the dataclass
fields of a table from its rows in ``entityworks_schema`` and the live table's columns, read
through a :class:`SchemaSource`: a SQLAlchemy connection's (:mod:`.logical`), or an SQLite
file's without SQLAlchemy (:mod:`.backends.sqlitefile`).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import json
import re
import uuid
from typing import Any, NamedTuple, Protocol

from ..model.fields import XSD_METADATA
from ..registry import COMPANION_SEPARATOR, AwareDatetime, TypeRegistry
from ..types.registry import Target

TABLE = "entityworks_schema"
#: ``logical_type`` of the row describing the table itself.
TABLE_ROW = "table"


class Recorded(NamedTuple):
    """One row of ``entityworks_schema``."""

    table_name: str
    column_name: str
    position: int
    logical_type: str
    nullable: bool
    primary_key: bool
    max_length: int | None
    details: str | None


class SchemaSource(Protocol):
    """What reading the logical schema asks of a database."""

    #: The storage target of the database (its companion columns).
    target: Target | str

    def has_table(self, name: str) -> bool:
        """True when the table exists."""
        ...

    def columns(self, name: str) -> list[tuple[str, bool]]:
        """The live table's columns in order: (name, nullable)."""
        ...

    def recorded(self, name: str) -> list[Recorded]:
        """The recorded rows of the table, in order (table row first); empty if none."""
        ...


#: Names of types inside a recorded JSON annotation that are not registry entries.
SPECIAL: dict[str, Any] = {
    "Any": Any,
    "None": type(None),
    "list": list,
    "dict": dict,
    "tuple": tuple,
}


#: The scalar types a recorded JSON annotation may name, by their names.
SCALARS: dict[str, type] = {
    t.__name__: t
    for t in (
        bool,
        int,
        float,
        str,
        bytes,
        decimal.Decimal,
        dt.datetime,
        dt.date,
        dt.time,
        dt.timedelta,
        uuid.UUID,
    )
}
_TOKEN = re.compile(r"\s*(\w+|\.\.\.|[\[\],|])")


def parse_type(text: str) -> Any:
    """The annotation :func:`spell` wrote as ``text``; ``None`` if it names anything else."""
    tokens: list[str] = []
    at = 0
    while at < len(text.rstrip()):
        match = _TOKEN.match(text, at)
        if match is None:
            return None
        tokens.append(match.group(1))
        at = match.end()

    def expression(i: int) -> tuple[Any, int]:
        tp, i = atom(i)
        if i < len(tokens) and tokens[i] == "|":
            if tokens[i + 1 : i + 2] != ["None"]:
                raise ValueError(text)
            return tp | None, i + 2
        return tp, i

    def atom(i: int) -> tuple[Any, int]:
        name = tokens[i]
        if name == "AwareDatetime":
            return AwareDatetime, i + 1
        tp = SPECIAL.get(name) or SCALARS.get(name)
        if tp is None or tp is type(None):
            raise ValueError(text)
        i += 1
        if i < len(tokens) and tokens[i] == "[":
            if tp not in (list, dict, tuple):
                raise ValueError(text)
            args: list[Any] = []
            i += 1
            while True:
                if tokens[i] == "...":
                    args.append(Ellipsis)
                    i += 1
                else:
                    arg, i = expression(i)
                    args.append(arg)
                if tokens[i] == "]":
                    return tp[tuple(args) if len(args) > 1 else args[0]], i + 1
                if tokens[i] != ",":
                    raise ValueError(text)
                i += 1
        return tp, i

    try:
        tp, end = expression(0)
    except (ValueError, IndexError, TypeError):
        return None
    return tp if end == len(tokens) else None


def logical_type(name: str, registry: TypeRegistry) -> Any:
    """The Python type a recorded ``logical_type`` names (``None``: not a built-in one)."""
    if name == "AwareDatetime":
        return AwareDatetime
    if name in ("list", "dict", "tuple"):
        return {"list": list, "dict": dict, "tuple": tuple}[name]
    if name == "ndarray":
        import numpy as np

        return np.ndarray
    for key, info in registry._exact.items():  # noqa: SLF001 - the registry's own table
        if info.name == name and isinstance(key, type):
            return info.python_type
    return None


Spec = tuple[str, Any, Any]


def recorded_fields(
    source: SchemaSource, table_name: str, live_columns: list[str], registry: TypeRegistry
) -> tuple[list[Spec], dict[str, Any]] | None:
    """Dataclass field specs for ``table_name`` from its recorded logical schema, and the
    table's recorded facts (``{"dataset": ...}``); ``None`` when nothing is recorded, or
    what is recorded no longer matches the live columns (or names a type this registry
    does not know)."""
    rows = source.recorded(table_name)
    columns = [r for r in rows if r.logical_type != TABLE_ROW]
    if [r.column_name for r in columns] != live_columns:
        return None  # recorded for another table of that name, or changed since
    table_row = next((r for r in rows if r.logical_type == TABLE_ROW), None)
    table_details = json.loads(table_row.details) if table_row and table_row.details else {}
    nullable = _live_nullable(source, table_name, columns, registry)
    specs = _with_children(source, columns, table_details, registry, nullable, depth=0)
    if specs is None:
        return None
    for relation in table_details.get("relations", []):  # this table's foreign keys
        if relation["child"] != table_name:
            continue
        for i, (name, annotation, spec) in enumerate(specs):
            if name == relation["child_column"]:
                metadata = {
                    **spec.metadata,
                    "references": f"{relation['parent']}.{relation['parent_column']}",
                    "relation": relation["name"],
                    "nested": relation["nested"],
                }
                specs[i] = (name, annotation, dataclasses.field(metadata=metadata))
    return specs, table_details


def _with_children(
    source: SchemaSource,
    columns: list[Recorded],
    table_details: dict[str, Any],
    registry: TypeRegistry,
    nullable: dict[str, bool],
    depth: int,
) -> list[Spec] | None:
    """The specs of a table's recorded ``columns`` (a child table's without its links,
    ``parent_key``, ``position_1``... ``position``), then a ``list[Item]`` field per recorded
    child table (``list[Item] | None`` when a column of the field's name tells None from an
    empty list)."""
    children = [(entry[0], entry[1]) for entry in table_details.get("children", [])]
    present = {r.column_name for r in columns} & {field for field, _t in children}
    specs = _specs([r for r in columns if r.column_name not in present], registry, nullable)
    if specs is None:
        return None
    for field_name, child_table in children:
        item = _child_item(source, child_table, registry, depth + 1)
        if item is None:
            return None
        if field_name in present:
            specs.append(
                (
                    field_name,
                    list[item] | None,  # type: ignore[valid-type]
                    dataclasses.field(default=None),
                )
            )
        else:
            specs.append(
                (
                    field_name,
                    list[item],  # type: ignore[valid-type]
                    dataclasses.field(default_factory=list),
                )
            )
    return specs


def _child_item(
    source: SchemaSource, child_table: str, registry: TypeRegistry, depth: int
) -> type | None:
    """The item class of a recorded child table at ``depth`` (1: a child of the table
    itself): its columns after the links, and its own recorded child tables."""
    from ..model.schema import PARENT_COLUMN, POSITION_COLUMN

    if not source.has_table(child_table):
        return None
    live = [name for name, _nullable in source.columns(child_table)]
    rows = source.recorded(child_table)
    columns = [r for r in rows if r.logical_type != TABLE_ROW]
    names = [r.column_name for r in columns]
    links = [PARENT_COLUMN, *(f"{POSITION_COLUMN}_{i}" for i in range(1, depth)), POSITION_COLUMN]
    if names[: len(links)] != links or not set(names) <= set(live):
        return None
    table_row = next((r for r in rows if r.logical_type == TABLE_ROW), None)
    details = json.loads(table_row.details) if table_row and table_row.details else {}
    nullable = _live_nullable(source, child_table, columns, registry)
    specs = _with_children(source, columns[len(links) :], details, registry, nullable, depth)
    if specs is None:
        return None
    item = dataclasses.make_dataclass(_class_name(child_table), specs)
    item.__tablename__ = child_table  # type: ignore[attr-defined]
    return item


def _live_nullable(
    source: SchemaSource, table: str, columns: list[Recorded], registry: TypeRegistry
) -> dict[str, bool]:
    """Whether each recorded column's field is nullable in the live table: a migration may
    have made ``X`` into ``X | None`` or back since it was recorded (the live table says).
    A field is nullable when its column and its companions are (a SQLite Decimal's text
    column is nullable beside its NOT NULL key column)."""
    live = dict(source.columns(table))
    suffixes = registry.companion_types(source.target)
    out: dict[str, bool] = {}
    for r in columns:
        if r.column_name in live:
            group = [
                r.column_name,
                *(f"{r.column_name}{COMPANION_SEPARATOR}{suffix}" for suffix in suffixes),
            ]
            out[r.column_name] = all(live.get(name, True) for name in group)
    return out


def _class_name(table: str) -> str:
    parts = [p for p in re.split(r"[^0-9A-Za-z]+", table) if p]
    name = "".join(p[:1].upper() + p[1:] for p in parts) or "Row"
    return name if name.isidentifier() else f"T{name}"


def _specs(
    columns: list[Recorded], registry: TypeRegistry, nullable: dict[str, bool]
) -> list[Spec] | None:
    from ..model.names import unusable_field_name

    specs: list[Spec] = []
    for r in columns:
        if unusable_field_name(r.column_name) is not None:
            return None  # reflection without the record names the column
        details = json.loads(r.details) if r.details else {}
        tp = logical_type(r.logical_type, registry)
        if tp is None:
            return None
        if details.get("type"):  # a JSON column's whole annotation
            tp = parse_type(details["type"]) or tp
        metadata: dict[str, Any] = {"primary_key": bool(r.primary_key)}
        if r.max_length is not None:
            metadata["max_length"] = r.max_length
        if details.get("xsd"):
            metadata[XSD_METADATA] = details["xsd"]
        optional = nullable.get(r.column_name, bool(r.nullable))  # the live table's say
        annotation = tp | None if optional and not r.primary_key else tp
        specs.append((r.column_name, annotation, dataclasses.field(metadata=metadata)))
    return specs


__all__ = [
    "SCALARS",
    "TABLE",
    "TABLE_ROW",
    "Recorded",
    "SchemaSource",
    "Spec",
    "logical_type",
    "parse_type",
    "recorded_fields",
]

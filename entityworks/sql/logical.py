"""The logical schema: what each column of a table holds, beyond what its SQL type can say.

SQLite keeps a UUID, a Decimal, a timedelta or an aware datetime as TEXT or INTEGER, so a table
reflected without its class comes back as strings and ints. When a table is created from an
XSD (``import-xml``, :meth:`Store.import_xml`) or recorded with :func:`record`, each column's
registry type and its original XSD spelling (``xs:short``, ``msdata:DataType``,
``DateTimeMode``, ``AutoIncrement``, ``Caption``, a default, ``maxLength``) go into one small
table per database, ``entityworks_schema``, created with the first such table (and by the
catalog's Alembic revision ``0003_logical_schema``). :meth:`Store.reflect` reads it back, so
that ``export-xml``, ``query``, frames and ``read_xsd`` all see the types .NET wrote.

One row per column (``position`` from 0) and one per table (``column_name`` empty,
``position`` -1) holding table-level facts such as the dataset name.
"""

from __future__ import annotations

import dataclasses
import json
import re
import typing
from typing import Any

import sqlalchemy as sa

from ..model.schema import XSD_METADATA, TableSchema
from ..registry import AwareDatetime, TypeInfo, TypeRegistry
from . import sqltypes

TABLE = "entityworks_schema"
#: ``logical_type`` of the row describing the table itself.
TABLE_ROW = "table"
_NAME = 63


def schema_table(metadata: sa.MetaData | None = None) -> sa.Table:
    """The ``entityworks_schema`` table (the Alembic revision creates the same)."""
    return sa.Table(
        TABLE, metadata if metadata is not None else sa.MetaData(),
        sa.Column("table_name", sqltypes.key_text(_NAME), primary_key=True),
        sa.Column("column_name", sqltypes.key_text(_NAME), primary_key=True),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("logical_type", sqltypes.key_text(40), nullable=False),
        sa.Column("nullable", sa.Boolean(), nullable=False),
        sa.Column("primary_key", sa.Boolean(), nullable=False),
        sa.Column("max_length", sa.Integer(), nullable=True),
        sa.Column("details", sqltypes.text(), nullable=True),
    )


_TABLE = schema_table()


def _type_name(info: TypeInfo) -> str:
    origin = typing.get_origin(info.python_type)
    if info.python_type is AwareDatetime:
        return "AwareDatetime"
    if origin in (list, dict, tuple) or info.python_type in (list, dict, tuple):
        name: str = (origin or info.python_type).__name__
        return name
    return info.name


def record(conn: sa.Connection, schema: TableSchema, *, dataset: str | None = None,
           facts: dict[str, Any] | None = None) -> None:
    """Record the columns of ``schema`` (child tables included) on ``conn``, replacing what
    was recorded for those tables before; ``facts`` go with the table itself (a DataSet's
    ``relations``). Creates the table on first use."""
    _TABLE.create(conn, checkfirst=True)
    for table in [schema, *(child.schema for child in schema.children)]:
        conn.execute(_TABLE.delete().where(_TABLE.c.table_name == table.name))
        fields = {f.name: f for f in dataclasses.fields(table.cls)}
        table_facts: dict[str, Any] = {"dataset": dataset} if dataset else {}
        if table is schema and facts:
            table_facts.update(facts)
        if table.children:  # list fields held in child tables: reflection rebuilds them
            table_facts["children"] = [[child.field, child.schema.name]
                                       for child in table.children]
        rows = [{"table_name": table.name, "column_name": "", "position": -1,
                 "logical_type": TABLE_ROW, "nullable": False, "primary_key": False,
                 "max_length": None, "details": json.dumps(table_facts)}]
        for position, c in enumerate(table.columns):
            field = fields.get(c.name)
            spelling = dict(field.metadata.get(XSD_METADATA) or {}) if field else {}
            rows.append({"table_name": table.name, "column_name": c.name,
                         "position": position, "logical_type": _type_name(c.info),
                         "nullable": c.nullable, "primary_key": c.primary_key,
                         "max_length": c.max_length,
                         "details": json.dumps({"xsd": spelling}) if spelling else None})
        conn.execute(_TABLE.insert(), rows)


def forget(conn: sa.Connection, names: list[str]) -> None:
    """Remove what was recorded for the tables ``names`` (when they are dropped)."""
    if sa.inspect(conn).has_table(TABLE):
        conn.execute(_TABLE.delete().where(_TABLE.c.table_name.in_(names)))


def recorded(conn: sa.Connection, table_name: str) -> list[sa.Row[Any]]:
    """The recorded rows of ``table_name`` in order (table row first); empty if none."""
    if not sa.inspect(conn).has_table(TABLE):
        return []
    return list(conn.execute(sa.select(_TABLE).where(_TABLE.c.table_name == table_name)
                             .order_by(_TABLE.c.position)))


def logical_type(name: str, registry: TypeRegistry) -> Any:
    """The Python type a recorded ``logical_type`` names (``None``: not a built-in one)."""
    if name == "AwareDatetime":
        return AwareDatetime
    if name in ("list", "dict", "tuple"):
        return {"list": list, "dict": dict, "tuple": tuple}[name]
    for key, info in registry._exact.items():  # noqa: SLF001 - the registry's own table
        if info.name == name and isinstance(key, type):
            return info.python_type
    return None


Spec = tuple[str, Any, Any]


def recorded_fields(conn: sa.Connection, table_name: str, live_columns: list[str],
                    registry: TypeRegistry) -> tuple[list[Spec], dict[str, Any]] | None:
    """Dataclass field specs for ``table_name`` from its recorded logical schema, and the
    table's recorded facts (``{"dataset": ...}``); ``None`` when nothing is recorded, or
    what is recorded no longer matches the live columns."""
    rows = recorded(conn, table_name)
    columns = [r for r in rows if r.logical_type != TABLE_ROW]
    if [r.column_name for r in columns] != live_columns:
        return None  # recorded for another table of that name, or changed since
    specs = _specs(columns, registry)
    if specs is None:
        return None
    table_row = next((r for r in rows if r.logical_type == TABLE_ROW), None)
    table_details = json.loads(table_row.details) if table_row and table_row.details else {}
    for relation in table_details.get("relations", []):  # this table's foreign keys
        if relation["child"] != table_name:
            continue
        for i, (name, annotation, spec) in enumerate(specs):
            if name == relation["child_column"]:
                metadata = {**spec.metadata, "references":
                            f"{relation['parent']}.{relation['parent_column']}",
                            "relation": relation["name"], "nested": relation["nested"]}
                specs[i] = (name, annotation, dataclasses.field(metadata=metadata))
    for field_name, child_table in table_details.get("children", []):
        item = _child_item(conn, child_table, registry)
        if item is None:
            return None
        specs.append((field_name, list[item],  # type: ignore[valid-type]
                      dataclasses.field(default_factory=list)))
    return specs, table_details


def _child_item(conn: sa.Connection, child_table: str, registry: TypeRegistry
                ) -> type | None:
    """The item class of a recorded child table (its columns after parent_key, position)."""
    from ..model.schema import PARENT_COLUMN, POSITION_COLUMN

    inspector = sa.inspect(conn)
    if not inspector.has_table(child_table):
        return None
    live = [c["name"] for c in inspector.get_columns(child_table)]
    columns = [r for r in recorded(conn, child_table) if r.logical_type != TABLE_ROW]
    names = [r.column_name for r in columns]
    if names[:2] != [PARENT_COLUMN, POSITION_COLUMN] or not set(names) <= set(live):
        return None
    specs = _specs(columns[2:], registry)
    if specs is None:
        return None
    item = dataclasses.make_dataclass(_class_name(child_table), specs)
    item.__tablename__ = child_table  # type: ignore[attr-defined]
    return item


def _class_name(table: str) -> str:
    parts = [p for p in re.split(r"[^0-9A-Za-z]+", table) if p]
    name = "".join(p[:1].upper() + p[1:] for p in parts) or "Row"
    return name if name.isidentifier() else f"T{name}"


def _specs(columns: list[sa.Row[Any]], registry: TypeRegistry) -> list[Spec] | None:
    specs: list[Spec] = []
    for r in columns:
        tp = logical_type(r.logical_type, registry)
        if tp is None:
            return None
        details = json.loads(r.details) if r.details else {}
        metadata: dict[str, Any] = {"primary_key": bool(r.primary_key)}
        if r.max_length is not None:
            metadata["max_length"] = r.max_length
        if details.get("xsd"):
            metadata[XSD_METADATA] = details["xsd"]
        annotation = tp | None if r.nullable and not r.primary_key else tp
        specs.append((r.column_name, annotation, dataclasses.field(metadata=metadata)))
    return specs


__all__ = ["TABLE", "forget", "record", "recorded", "recorded_fields",
           "schema_table"]

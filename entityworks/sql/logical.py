"""The logical schema: what each column of a table holds, beyond what its SQL type can say.

SQLite keeps a UUID, a Decimal, a timedelta or an aware datetime as TEXT or INTEGER, so a table
reflected without its class comes back as strings and ints. When a table is created by
:meth:`Store.create` or from an XSD (``import-xml``, :meth:`Store.import_xml`), or recorded
with :func:`record`, each column's registry type (and, from an XSD, its original spelling:
``xs:short``, ``msdata:DataType``, ``DateTimeMode``, ``AutoIncrement``, ``Caption``, a default,
``maxLength``) goes into one small table per database, ``entityworks_schema``, created with
the first such table in the same transaction (and by the catalog's Alembic revision
``0004_logical_schema``). :meth:`Store.reflect` reads it back, so that ``export-xml``,
``parquet``, ``query``, frames and ``read_xsd`` all see the types the class or .NET declared.

Types are recorded by name (``Decimal``, ``AwareDatetime``, ``ndarray``; a JSON column's
whole annotation, ``list[tuple[int, int]]``, in ``details``). A type no name brings back in
another program is recorded as what its values are stored as: a user's Enum as ``int`` or
``str``, a nested dataclass as ``dict`` (its JSON object), the class's name kept in
``details`` (``{"python": "Mood"}``); such a field reflects as that type, whose SQL column,
Arrow type, XML text and values are those of the original. A type the reflecting registry
does not know (a user's registered type) makes reflection fall back to the SQL types.

One row per column (``position`` from 0, the column's name in the database) and one per table
(``column_name`` empty, ``position`` -1) holding table-level facts such as the dataset name
and the child tables (``children``: field and table, rebuilt as ``list[Item]`` fields).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import enum
import json
import re
import types
import typing
import uuid
from collections.abc import Collection
from typing import Any

import sqlalchemy as sa

from ..model.fields import XSD_METADATA
from ..model.schema import TableSchema
from ..registry import COMPANION_SEPARATOR, AwareDatetime, TypeInfo, TypeRegistry
from . import sqltypes

TABLE = "entityworks_schema"
#: ``logical_type`` of the row describing the table itself.
TABLE_ROW = "table"
_NAME = 63


def schema_table(metadata: sa.MetaData | None = None) -> sa.Table:
    """The ``entityworks_schema`` table (the Alembic revision creates the same)."""
    return sa.Table(
        TABLE,
        metadata if metadata is not None else sa.MetaData(),
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


def _type_name(info: TypeInfo) -> tuple[str, dict[str, Any]]:
    """The ``logical_type`` recorded for a column of ``info``'s type, and what ``details``
    add: the whole annotation of a JSON column (``{"type": "list[tuple[int, int]]"}``); for a
    type that no name brings back in another program (a user's Enum, a nested dataclass),
    the type its values are stored as (an Enum's ``int`` or ``str``, a nested dataclass's
    JSON object: ``dict``) and the class's name (``{"python": "Mood"}``)."""
    tp = info.python_type
    origin = typing.get_origin(tp)
    if tp is AwareDatetime:
        return "AwareDatetime", {}
    if origin in (list, dict, tuple) or tp in (list, dict, tuple):
        name: str = (origin or tp).__name__
        spelled = spell(tp)
        return name, ({"type": spelled} if spelled is not None and spelled != name else {})
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        stored = {type(m.value) for m in tp}
        if len(stored) == 1:
            return next(iter(stored)).__name__, {"python": tp.__qualname__}
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return "dict", {"python": tp.__qualname__}
    if info.name == "ndarray":
        return "ndarray", {}
    return info.name, {}


#: Names of types inside a recorded JSON annotation that are not registry entries.
_SPECIAL: dict[str, Any] = {
    "Any": Any,
    "None": type(None),
    "list": list,
    "dict": dict,
    "tuple": tuple,
}


def spell(tp: Any) -> str | None:
    """``tp`` (a JSON column's annotation) as text that :func:`parse_type` reads back equal:
    ``list[tuple[int, int]]``, ``dict[str, Any]``, ``list[Decimal | None]``; ``None`` when
    a part has no such name (an Enum, a nested dataclass)."""
    if tp is Any:
        return "Any"
    if tp is AwareDatetime:
        return "AwareDatetime"
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        rest = [a for a in args if a is not type(None)]
        inner = spell(rest[0]) if len(rest) == 1 and len(args) == 2 else None
        return None if inner is None else f"{inner} | None"
    if origin in (list, dict, tuple) or tp in (list, dict, tuple):
        name: str = (origin or tp).__name__
        if not args:
            return name
        parts = ["..." if a is Ellipsis else spell(a) for a in args]
        if any(p is None for p in parts):
            return None
        return f"{name}[{', '.join(p for p in parts if p is not None)}]"
    if isinstance(tp, type) and tp.__name__ in _SCALARS and _SCALARS[tp.__name__] is tp:
        return tp.__name__
    return None


#: The scalar types a recorded JSON annotation may name, by their names.
_SCALARS: dict[str, type] = {
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
        tp = _SPECIAL.get(name) or _SCALARS.get(name)
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


def record(
    conn: sa.Connection,
    schema: TableSchema,
    *,
    dataset: str | None = None,
    facts: dict[str, Any] | None = None,
    only: Collection[str] | None = None,
) -> None:
    """Record the columns of ``schema`` (child tables, and theirs, included; with ``only``,
    those of the tables it names) on ``conn``, replacing what was recorded for those tables
    before; ``facts`` go with the table itself (a DataSet's ``relations``). Creates the table
    on first use. Columns are recorded by their names in the database; a table whose name,
    or a column's, is longer than 63 characters is not recorded (reflection then reads its
    SQL types alone)."""
    tables = [
        t
        for t in [schema, *schema.descendants]
        if (only is None or t.name in only)
        and len(t.name) <= _NAME
        and all(len(c.sql_name) <= _NAME for c in t.columns)
    ]
    if not tables:
        return
    _TABLE.create(conn, checkfirst=True)
    for table in tables:
        conn.execute(_TABLE.delete().where(_TABLE.c.table_name == table.name))
        fields = {f.name: f for f in dataclasses.fields(table.cls)}
        table_facts: dict[str, Any] = {"dataset": dataset} if dataset else {}
        if table is schema and facts:
            table_facts.update(facts)
        if table.children:  # list fields held in child tables: reflection rebuilds them
            table_facts["children"] = [[child.field, child.schema.name] for child in table.children]
        rows = [
            {
                "table_name": table.name,
                "column_name": "",
                "position": -1,
                "logical_type": TABLE_ROW,
                "nullable": False,
                "primary_key": False,
                "max_length": None,
                "details": json.dumps(table_facts),
            }
        ]
        for position, c in enumerate(table.columns):
            field = fields.get(c.name)
            spelling = dict(field.metadata.get(XSD_METADATA) or {}) if field else {}
            name, details = _type_name(c.info)
            if spelling:
                details["xsd"] = spelling
            rows.append(
                {
                    "table_name": table.name,
                    "column_name": c.sql_name,
                    "position": position,
                    "logical_type": name,
                    "nullable": c.nullable,
                    "primary_key": c.primary_key,
                    "max_length": c.max_length,
                    "details": json.dumps(details) if details else None,
                }
            )
        conn.execute(_TABLE.insert(), rows)


def forget(conn: sa.Connection, names: list[str]) -> None:
    """Remove what was recorded for the tables ``names`` (when they are dropped)."""
    if sa.inspect(conn).has_table(TABLE):
        conn.execute(_TABLE.delete().where(_TABLE.c.table_name.in_(names)))


def recorded(conn: sa.Connection, table_name: str) -> list[sa.Row[Any]]:
    """The recorded rows of ``table_name`` in order (table row first); empty if none."""
    if not sa.inspect(conn).has_table(TABLE):
        return []
    return list(
        conn.execute(
            sa.select(_TABLE).where(_TABLE.c.table_name == table_name).order_by(_TABLE.c.position)
        )
    )


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
    conn: sa.Connection, table_name: str, live_columns: list[str], registry: TypeRegistry
) -> tuple[list[Spec], dict[str, Any]] | None:
    """Dataclass field specs for ``table_name`` from its recorded logical schema, and the
    table's recorded facts (``{"dataset": ...}``); ``None`` when nothing is recorded, or
    what is recorded no longer matches the live columns (or names a type this registry
    does not know)."""
    rows = recorded(conn, table_name)
    columns = [r for r in rows if r.logical_type != TABLE_ROW]
    if [r.column_name for r in columns] != live_columns:
        return None  # recorded for another table of that name, or changed since
    table_row = next((r for r in rows if r.logical_type == TABLE_ROW), None)
    table_details = json.loads(table_row.details) if table_row and table_row.details else {}
    nullable = _live_nullable(conn, table_name, columns, registry)
    specs = _with_children(conn, columns, table_details, registry, nullable, depth=0)
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
    conn: sa.Connection,
    columns: list[sa.Row[Any]],
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
        item = _child_item(conn, child_table, registry, depth + 1)
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
    conn: sa.Connection, child_table: str, registry: TypeRegistry, depth: int
) -> type | None:
    """The item class of a recorded child table at ``depth`` (1: a child of the table
    itself): its columns after the links, and its own recorded child tables."""
    from ..model.schema import PARENT_COLUMN, POSITION_COLUMN

    inspector = sa.inspect(conn)
    if not inspector.has_table(child_table):
        return None
    live = [c["name"] for c in inspector.get_columns(child_table)]
    rows = recorded(conn, child_table)
    columns = [r for r in rows if r.logical_type != TABLE_ROW]
    names = [r.column_name for r in columns]
    links = [PARENT_COLUMN, *(f"{POSITION_COLUMN}_{i}" for i in range(1, depth)), POSITION_COLUMN]
    if names[: len(links)] != links or not set(names) <= set(live):
        return None
    table_row = next((r for r in rows if r.logical_type == TABLE_ROW), None)
    details = json.loads(table_row.details) if table_row and table_row.details else {}
    nullable = _live_nullable(conn, child_table, columns, registry)
    specs = _with_children(conn, columns[len(links) :], details, registry, nullable, depth)
    if specs is None:
        return None
    item = dataclasses.make_dataclass(_class_name(child_table), specs)
    item.__tablename__ = child_table  # type: ignore[attr-defined]
    return item


def _live_nullable(
    conn: sa.Connection, table: str, columns: list[sa.Row[Any]], registry: TypeRegistry
) -> dict[str, bool]:
    """Whether each recorded column's field is nullable in the live table: a migration may
    have made ``X`` into ``X | None`` or back since it was recorded (the live table says).
    A field is nullable when its column and its companions are (a SQLite Decimal's text
    column is nullable beside its NOT NULL key column)."""
    live = {c["name"]: bool(c.get("nullable", True)) for c in sa.inspect(conn).get_columns(table)}
    suffixes = registry.companion_types(sqltypes.target_of(conn.dialect.name))
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
    columns: list[sa.Row[Any]], registry: TypeRegistry, nullable: dict[str, bool]
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
    "TABLE",
    "forget",
    "parse_type",
    "record",
    "recorded",
    "recorded_fields",
    "schema_table",
    "spell",
]

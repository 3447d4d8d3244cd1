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
import enum
import json
import types
import typing
from collections.abc import Collection
from typing import Any

import sqlalchemy as sa

from ..model.fields import XSD_METADATA
from ..model.schema import TableSchema
from ..registry import AwareDatetime, TypeInfo, TypeRegistry
from ..types.registry import Target
from . import sqltypes
from .logicalread import SCALARS, TABLE, TABLE_ROW, Recorded, SchemaSource, Spec
from .logicalread import parse_type as parse_type
from .logicalread import recorded_fields as read_fields

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
    if isinstance(tp, type) and tp.__name__ in SCALARS and SCALARS[tp.__name__] is tp:
        return tp.__name__
    return None


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


class ConnectionSource:
    """:class:`~.logicalread.SchemaSource` of a SQLAlchemy connection."""

    def __init__(self, conn: sa.Connection) -> None:
        self.conn = conn
        self.inspector: sa.Inspector = sa.inspect(conn)
        self.target: Target | str = sqltypes.target_of(conn.dialect.name)

    def has_table(self, name: str) -> bool:
        return bool(self.inspector.has_table(name))

    def columns(self, name: str) -> list[tuple[str, bool]]:
        return [
            (c["name"], bool(c.get("nullable", True))) for c in self.inspector.get_columns(name)
        ]

    def recorded(self, name: str) -> list[Recorded]:
        return [Recorded(*tuple(row)) for row in recorded(self.conn, name)]


def recorded_fields(
    conn: sa.Connection, table_name: str, live_columns: list[str], registry: TypeRegistry
) -> tuple[list[Spec], dict[str, Any]] | None:
    """:func:`.logicalread.recorded_fields` on ``conn``."""
    source: SchemaSource = ConnectionSource(conn)
    return read_fields(source, table_name, live_columns, registry)


__all__ = [
    "ConnectionSource",
    "TABLE",
    "TABLE_ROW",
    "forget",
    "parse_type",
    "record",
    "recorded",
    "recorded_fields",
    "schema_table",
    "spell",
]

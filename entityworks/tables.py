"""A :class:`TableSchema` -> SQLAlchemy Core ``Table`` objects (the SQL side of reflection).

SQLite stores any value in any column unless the table is STRICT, so our SQLite tables are
STRICT (every storage type maps to INTEGER, REAL, TEXT or BLOB there): a string in an integer
column is refused by the database itself, at C speed, instead of being kept as wrong data.
"""

from __future__ import annotations

import sqlite3

import sqlalchemy as sa
from sqlalchemy.dialects import sqlite as sqlite_dialect

from . import sqltypes
from .schema import PARENT_COLUMN, POSITION_COLUMN, Column, TableSchema


def sql_type(column: Column) -> sa.types.TypeEngine:
    """The SQLAlchemy type of a column: the registry's, narrowed for keys on MariaDB."""
    if column.info.python_type is str or column.info.sql is sqltypes.text:
        if column.max_length is not None:
            return sqltypes.bounded_text(column.max_length)
        if column.primary_key or column.unique or column.index:
            return sqltypes.key_text()
    return column.info.sql()


def build_tables(schema: TableSchema, metadata: sa.MetaData, dialect: str) -> sa.Table:
    """Add the table of ``schema`` (and its child tables) to ``metadata``; return the root."""
    root = _build_one(schema, metadata, dialect)
    for child in schema.children:
        _build_one(child.schema, metadata, dialect)
    return root


def _build_one(schema: TableSchema, metadata: sa.MetaData, dialect: str) -> sa.Table:
    is_child = schema.parent is not None
    items: list[sa.SchemaItem] = []
    for c in schema.columns:
        pk = c.primary_key and not is_child
        kwargs: dict = {"nullable": c.nullable, "primary_key": pk}
        if pk and c.autoincrement:
            kwargs["autoincrement"] = True
        elif pk:
            kwargs["autoincrement"] = False
        if is_child and c.name in (PARENT_COLUMN, POSITION_COLUMN):
            kwargs["primary_key"] = True
            kwargs["autoincrement"] = False
        unique = c.unique or (is_child and c.primary_key)
        col = sa.Column(c.name, sql_type(c), unique=unique or None, index=c.index or None,
                        **kwargs)
        if is_child and c.name == PARENT_COLUMN:
            parent_table = schema.parent.name  # type: ignore[union-attr]
            parent_key = schema.parent.primary_key.name  # type: ignore[union-attr]
            col.append_foreign_key(
                sa.ForeignKey(f"{parent_table}.{parent_key}", ondelete="CASCADE"))
        items.append(col)
        if dialect == "sqlite" and c.max_length is not None:
            # SQLite's TEXT has no length; keep VARCHAR(n)'s promise with a CHECK.
            items.append(sa.CheckConstraint(sa.func.length(col) <= c.max_length,
                                            name=f"length_{c.name}"))
    options = {"sqlite_strict": True} if dialect == "sqlite" and strict_ok(items) else {}
    return sa.Table(schema.name, metadata, *items, **options)


#: Column type names an SQLite STRICT table accepts.
STRICT_TYPES = frozenset({"INT", "INTEGER", "REAL", "TEXT", "BLOB", "ANY"})


def strict_ok(items: list[sa.SchemaItem]) -> bool:
    """True when SQLite supports STRICT and every column type has a STRICT name.

    A user-registered type with another SQL name keeps an ordinary table.
    """
    if sqlite3.sqlite_version_info < (3, 37, 0):
        return False
    dialect = sqlite_dialect.dialect()
    names = [i.type.compile(dialect=dialect).split("(")[0].upper()
             for i in items if isinstance(i, sa.Column)]
    return all(name in STRICT_TYPES for name in names)

"""Reflection: a dataclass made for a table that exists, from its columns, keys, our
companion columns and the logical types recorded beside it.

Kept apart from the Store's row paths: it reads the catalog of the database, not rows.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import sqlalchemy as sa

from ..errors import SchemaError, UnknownTableError
from ..model.names import snake_case, unusable_field_name
from ..registry import COMPANION_SEPARATOR
from ._database import Database
from .logical import recorded_fields


def reflect(db: Database, table_name: str) -> type:
    """Build a dataclass for an existing table (columns, nullability, primary key)."""
    with db.connection() as conn:
        inspector = sa.inspect(conn)
        if not inspector.has_table(table_name):
            raise UnknownTableError(f"no table {table_name!r} in {db!r}")
        columns = inspector.get_columns(table_name)
        pk = inspector.get_pk_constraint(table_name).get("constrained_columns") or []
        checked = db.backend.checked_python_types(inspector, table_name)
    # Our own tables: a companion column says what its field's type is (an ``offset``
    # beside a timestamp: AwareDatetime) and is not a field; an SQLite ANY column's
    # type is the one its CHECK on typeof names.
    kinds = db.registry.companion_types(db.dialect.name)
    names = {c["name"] for c in columns}
    typed: dict[str, Any] = {}
    for c in columns:
        base, sep, suffix = c["name"].rpartition(COMPANION_SEPARATOR)
        if sep and base in names and suffix in kinds:
            typed[base] = kinds[suffix]

    def companion(name: str) -> bool:
        base, sep, suffix = name.rpartition(COMPANION_SEPARATOR)
        return bool(sep) and base in typed and suffix in kinds

    # A field's columns: its own and its companions (a SQLite Decimal's key column,
    # beside the text under the field's name, is the NOT NULL primary key).
    group: dict[str, list[dict[str, Any]]] = {}
    for c in columns:
        if companion(c["name"]):
            group.setdefault(c["name"].rpartition(COMPANION_SEPARATOR)[0], []).append(dict(c))

    # the types recorded when the table was made from an XSD (see logical.py)
    with db.connection() as conn:
        logical = recorded_fields(
            conn, table_name, [c["name"] for c in columns if not companion(c["name"])], db.registry
        )
    specs = []
    for c in columns if logical is None else ():
        if companion(c["name"]):
            continue
        try:
            # MariaDB's DOUBLE is a Numeric that defaults to Decimal; a float is a float.
            python_type = (
                typed.get(c["name"])
                or checked.get(c["name"])
                or (float if isinstance(c["type"], sa.Float) else c["type"].python_type)
            )
        except NotImplementedError:
            raise SchemaError(
                f"table {table_name!r}, column {c['name']!r}: type "
                f"{c['type']} has no Python equivalent"
            ) from None
        if python_type is dict or python_type is list:
            raise SchemaError(
                f"table {table_name!r}, column {c['name']!r}: native JSON columns are not reflected"
            )
        if not db.registry.supports(python_type):
            raise SchemaError(
                f"table {table_name!r}, column {c['name']!r}: type "
                f"{c['type']} ({python_type!r}) is not registered"
            )
        problem = unusable_field_name(c["name"])
        if problem is not None:
            raise SchemaError(
                f"table {table_name!r}, column {c['name']!r}: {problem}; "
                "rename the column to read this table (or map a field of "
                "a dataclass of yours to it: column(name=...))"
            )
        members = [dict(c), *group.get(c["name"], [])]
        is_key = any(m["name"] in pk for m in members)  # several: a composite key
        nullable = all(m.get("nullable", True) for m in members) and not is_key
        annotation = python_type | None if nullable else python_type
        specs.append((c["name"], annotation, dataclasses.field(metadata={"primary_key": is_key})))
    class_name = (
        "".join(
            part.capitalize() or "_" for part in re.split(r"[^0-9A-Za-z]+", snake_case(table_name))
        )
        or "Table"
    )
    if not class_name.isidentifier():
        class_name = "T" + class_name
    if logical is not None:
        specs, facts = logical
    cls = dataclasses.make_dataclass(class_name, specs)
    cls.__tablename__ = table_name  # type: ignore[attr-defined]
    if logical is not None and facts.get("dataset"):
        cls.__dataset__ = facts["dataset"]  # type: ignore[attr-defined]
    return cls


__all__ = ["reflect"]

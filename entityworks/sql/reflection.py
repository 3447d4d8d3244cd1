"""The dataclass of a table that exists, from what the database says of its columns: our
companion columns (an ``offset`` beside a timestamp says the field is an AwareDatetime; a
companion is no field), the logical types recorded beside it (:mod:`.logicalread`), else
each column's own type.

The database is read elsewhere (:mod:`._reflect` through SQLAlchemy's inspector,
:mod:`.backends.sqlitefile` from an SQLite file's own tables): this module only decides, so
that both make the same class, or refuse the same table with the same message.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import SchemaError
from ..model.names import snake_case, unusable_field_name
from ..registry import COMPANION_SEPARATOR, TypeRegistry
from .logicalread import SchemaSource, recorded_fields


@dataclass(frozen=True)
class LiveColumn:
    """A column of the live table: its name, whether it takes NULL, its SQL type as messages
    show it, and the Python type of its values (raises NotImplementedError for a type that
    has none)."""

    name: str
    nullable: bool
    type_text: str
    python_type: Callable[[], type]


def reflected_class(
    table_name: str,
    columns: Sequence[LiveColumn],
    pk: Sequence[str],
    checked: Mapping[str, type],
    registry: TypeRegistry,
    source: SchemaSource,
) -> type:
    """The dataclass of ``table_name`` (columns in order, the primary key's names ``pk``, the
    Python types ``checked`` that a column's CHECK names) with ``registry``'s types; the
    logical schema read from ``source``."""
    # Our own tables: a companion column says what its field's type is (an ``offset``
    # beside a timestamp: AwareDatetime) and is not a field; an SQLite ANY column's
    # type is the one its CHECK on typeof names.
    kinds = registry.companion_types(source.target)
    names = {c.name for c in columns}
    typed: dict[str, Any] = {}
    for c in columns:
        base, sep, suffix = c.name.rpartition(COMPANION_SEPARATOR)
        if sep and base in names and suffix in kinds:
            typed[base] = kinds[suffix]

    def companion(name: str) -> bool:
        base, sep, suffix = name.rpartition(COMPANION_SEPARATOR)
        return bool(sep) and base in typed and suffix in kinds

    # A field's columns: its own and its companions (a SQLite Decimal's key column,
    # beside the text under the field's name, is the NOT NULL primary key).
    group: dict[str, list[LiveColumn]] = {}
    for c in columns:
        if companion(c.name):
            group.setdefault(c.name.rpartition(COMPANION_SEPARATOR)[0], []).append(c)

    # the types recorded when the table was made (see logical.py)
    logical = recorded_fields(
        source, table_name, [c.name for c in columns if not companion(c.name)], registry
    )
    specs = []
    for c in columns if logical is None else ():
        if companion(c.name):
            continue
        try:
            python_type = typed.get(c.name) or checked.get(c.name) or c.python_type()
        except NotImplementedError:
            raise SchemaError(
                f"table {table_name!r}, column {c.name!r}: type "
                f"{c.type_text} has no Python equivalent"
            ) from None
        if python_type is dict or python_type is list:
            raise SchemaError(
                f"table {table_name!r}, column {c.name!r}: native JSON columns are not reflected"
            )
        if not registry.supports(python_type):
            raise SchemaError(
                f"table {table_name!r}, column {c.name!r}: type "
                f"{c.type_text} ({python_type!r}) is not registered"
            )
        problem = unusable_field_name(c.name)
        if problem is not None:
            raise SchemaError(
                f"table {table_name!r}, column {c.name!r}: {problem}; "
                "rename the column to read this table (or map a field of "
                "a dataclass of yours to it: column(name=...))"
            )
        members = [c, *group.get(c.name, [])]
        is_key = any(m.name in pk for m in members)  # several: a composite key
        nullable = all(m.nullable for m in members) and not is_key
        annotation = python_type | None if nullable else python_type
        specs.append((c.name, annotation, dataclasses.field(metadata={"primary_key": is_key})))
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


__all__ = ["LiveColumn", "reflected_class"]

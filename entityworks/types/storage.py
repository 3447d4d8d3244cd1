"""The SQL storage types the registry's entries name, made when a table is built.

An entry's ``sql`` is a function giving its SQLAlchemy type (:mod:`entityworks.sql.sqltypes`).
The built-in entries name them here instead of importing that module, so that building the
registry, and encoding rows with it, never imports SQLAlchemy: a catalog's worker processes,
forked before the writer opens its database, only encode.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import sqlalchemy as sa


class StorageType:
    """The storage type ``name`` of :mod:`entityworks.sql.sqltypes` (a function or a type
    class there): calling this calls that, importing the module then."""

    __slots__ = ("name",)
    name: str

    def __init__(self, name: str) -> None:
        self.name = name

    def __call__(self) -> sa.types.TypeEngine[Any]:
        from ..sql import sqltypes

        made: sa.types.TypeEngine[Any] = getattr(sqltypes, self.name)()
        return made

    def __repr__(self) -> str:
        return f"StorageType({self.name!r})"

    def __eq__(self, other: object) -> bool:
        return type(other) is StorageType and other.name == self.name

    def __hash__(self) -> int:
        return hash((StorageType, self.name))

    def __reduce__(self) -> tuple[Any, ...]:
        return (named, (self.name,))


def named(name: str) -> StorageType:
    """The storage type called ``name``: one object per name, kept across pickling."""
    made = _NAMED.get(name)
    if made is None:
        made = _NAMED.setdefault(name, StorageType(name))
    return made


_NAMED: dict[str, StorageType] = {
    n: StorageType(n)
    for n in (
        "big_integer",
        "small_integer",
        "boolean",
        "double",
        "text",
        "binary",
        "json_text",
        "date",
        "time",
        "uuid_type",
        "ExactDecimal",
        "NaiveDateTime",
        "AwareDateTime",
    )
}

big_integer: StorageType = _NAMED["big_integer"]
small_integer: StorageType = _NAMED["small_integer"]
boolean: StorageType = _NAMED["boolean"]
double: StorageType = _NAMED["double"]
text: StorageType = _NAMED["text"]
binary: StorageType = _NAMED["binary"]
json_text: StorageType = _NAMED["json_text"]
date: StorageType = _NAMED["date"]
time: StorageType = _NAMED["time"]
uuid_type: StorageType = _NAMED["uuid_type"]
exact_decimal: StorageType = _NAMED["ExactDecimal"]
naive_datetime: StorageType = _NAMED["NaiveDateTime"]
aware_datetime: StorageType = _NAMED["AwareDateTime"]

__all__ = [
    "StorageType",
    "aware_datetime",
    "big_integer",
    "binary",
    "boolean",
    "date",
    "double",
    "exact_decimal",
    "json_text",
    "naive_datetime",
    "named",
    "small_integer",
    "text",
    "time",
    "uuid_type",
]

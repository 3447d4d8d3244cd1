"""The SQL storage types the registry's entries name, made when a table is built.

An entry's ``sql`` is a function giving its SQLAlchemy type. The built-in entries give a
:class:`StorageType` instead: a name, which the SQL layer resolves through its own table
(:mod:`entityworks.sql.sqltypes` declares what each name makes with :func:`provide`). So
building the registry, and encoding rows with it, never imports SQLAlchemy (a catalog's
worker processes, forked before the writer opens its database, only encode), and this
layer never imports the SQL one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: Storage name -> what makes its SQL column type (filled by the SQL layer: :func:`provide`).
_MAKERS: dict[str, Callable[[], Any]] = {}


class StorageType:
    """The storage type ``name``: calling this makes the SQL column type the SQL layer
    declared for the name (:func:`provide`)."""

    __slots__ = ("name",)
    name: str

    def __init__(self, name: str) -> None:
        self.name = name

    def __call__(self) -> Any:
        maker = _MAKERS.get(self.name)
        if maker is None:
            raise LookupError(
                f"no SQL type for the storage type {self.name!r}: the SQL layer "
                "(entityworks.sql.sqltypes) declares them when it is imported"
            )
        return maker()

    def __repr__(self) -> str:
        return f"StorageType({self.name!r})"

    def __eq__(self, other: object) -> bool:
        return type(other) is StorageType and other.name == self.name

    def __hash__(self) -> int:
        return hash((StorageType, self.name))

    def __reduce__(self) -> tuple[Any, ...]:
        return (named, (self.name,))


def provide(name: str, maker: Callable[[], Any]) -> StorageType:
    """Declare what the storage type ``name`` makes (the SQL layer's side of the table);
    a later declaration replaces an earlier one."""
    _MAKERS[name] = maker
    return named(name)


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
    "provide",
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

"""entityworks: point it at a dataclass, get a table, and move rows between Python, SQL,
Arrow/pandas/Parquet and XML+XSD, with parameterized SQL only.

>>> from dataclasses import dataclass
>>> from entityworks import Store
>>> @dataclass
... class Level:
...     id: int | None
...     name: str
>>> store = Store("sqlite://")
>>> _ = store.create(Level)
>>> store.insert(Level(None, "first")).id
1
"""

from .errors import (
    EntityworksError,
    FilterError,
    InvalidNameError,
    NotFoundError,
    SchemaError,
    UnknownColumnError,
    UnknownTableError,
    UnsupportedTypeError,
    ValueEncodingError,
    WriteError,
    XMLImportError,
)
from .filters import col
from .registry import AWARE, AwareDatetime, TypeInfo, TypeRegistry, register_type, registry
from .schema import PK, ChildTable, Column, TableSchema, column, primary_key, table, table_schema
from .store import Store

__version__ = "0.1.0"

__all__ = [
    "AWARE",
    "PK",
    "AwareDatetime",
    "ChildTable",
    "Column",
    "EntityworksError",
    "FilterError",
    "InvalidNameError",
    "NotFoundError",
    "SchemaError",
    "Store",
    "TableSchema",
    "TypeInfo",
    "TypeRegistry",
    "UnknownColumnError",
    "UnknownTableError",
    "UnsupportedTypeError",
    "ValueEncodingError",
    "WriteError",
    "XMLImportError",
    "col",
    "column",
    "primary_key",
    "register_type",
    "registry",
    "table",
    "table_schema",
]

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
from .frames import (
    arrow_schema,
    from_arrow,
    from_pandas,
    read_parquet,
    to_arrow,
    to_pandas,
    write_parquet,
)
from .registry import AWARE, AwareDatetime, TypeInfo, TypeRegistry, register_type, registry
from .schema import PK, ChildTable, Column, TableSchema, column, primary_key, table, table_schema
from .scripts import StatementTemplates, create_script, statement_templates
from .store import Store
from .xmlio import read_xml, write_xml
from .xsd import read_xsd, write_xsd

__version__ = "0.1.0"

__all__ = [
    "AWARE",
    "AwareDatetime",
    "ChildTable",
    "Column",
    "EntityworksError",
    "FilterError",
    "InvalidNameError",
    "NotFoundError",
    "PK",
    "SchemaError",
    "StatementTemplates",
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
    "arrow_schema",
    "col",
    "column",
    "create_script",
    "from_arrow",
    "from_pandas",
    "primary_key",
    "read_parquet",
    "read_xml",
    "read_xsd",
    "register_type",
    "registry",
    "statement_templates",
    "table",
    "table_schema",
    "to_arrow",
    "to_pandas",
    "write_parquet",
    "write_xml",
    "write_xsd",
]

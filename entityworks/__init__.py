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

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: see below

# The API is imported on first use (PEP 562), so that ``import entityworks`` costs next to
# nothing: the command line starts without SQLAlchemy, NumPy, pyarrow or lxml, and its
# Ctrl-C handling (``entityworks_launch``) is in place a moment after the interpreter starts.
# Add a new public name here (module -> names) and to ``__all__``; the TYPE_CHECKING block
# mirrors it for tools.
_LAZY: dict[str, tuple[str, ...]] = {
    "errors": (
        "ConfigurationError",
        "EntityworksError",
        "FilterError",
        "InvalidNameError",
        "NoSuchTableError",
        "NotFoundError",
        "OutputPathError",
        "SchemaError",
        "StoredValueError",
        "UnknownColumnError",
        "UnknownTableError",
        "UnsupportedTypeError",
        "ValueEncodingError",
        "WriteError",
        "XMLImportError",
    ),
    "sql.filters": ("col",),
    "arrow": (
        "arrow_schema",
        "from_arrow",
        "from_pandas",
        "read_parquet",
        "to_arrow",
        "to_pandas",
        "write_parquet",
    ),
    "registry": ("AWARE", "AwareDatetime", "TypeInfo", "TypeRegistry", "register_type"),
    "model.schema": (
        "PK",
        "ChildTable",
        "Column",
        "References",
        "TableSchema",
        "column",
        "entity",
        "primary_key",
        "table",
        "table_schema",
    ),
    "sql.codegen": ("codegen_from_db",),
    "sql.scripts": ("StatementTemplates", "create_script", "statement_templates"),
    "sql.store": ("Store",),
    "sql.asyncstore": ("AsyncStore",),
    "xml.table": ("read_xml", "write_xml"),
    "xml.xsd": ("read_xsd", "write_xsd"),
}
_WHERE = {name: module for module, names in _LAZY.items() for name in names}
#: Public submodules that are names of the package too: ``entityworks.registry`` is the module
#: of the type registry, which also speaks for the default registry (``registry.lookup(int)``,
#: ``registry.register(...)``: see its end), so that ``import entityworks.registry as r`` and
#: ``from entityworks import registry`` give one object.
_MODULES = ("registry",)

if TYPE_CHECKING:
    from typing import Any

    from . import registry as registry
    from .arrow import (
        arrow_schema,
        from_arrow,
        from_pandas,
        read_parquet,
        to_arrow,
        to_pandas,
        write_parquet,
    )
    from .errors import (
        ConfigurationError,
        EntityworksError,
        FilterError,
        InvalidNameError,
        NoSuchTableError,
        NotFoundError,
        OutputPathError,
        SchemaError,
        StoredValueError,
        UnknownColumnError,
        UnknownTableError,
        UnsupportedTypeError,
        ValueEncodingError,
        WriteError,
        XMLImportError,
    )
    from .model.schema import (
        PK,
        ChildTable,
        Column,
        References,
        TableSchema,
        column,
        entity,
        primary_key,
        table,
        table_schema,
    )
    from .registry import AWARE, AwareDatetime, TypeInfo, TypeRegistry, register_type
    from .sql.asyncstore import AsyncStore
    from .sql.codegen import codegen_from_db
    from .sql.filters import col
    from .sql.scripts import StatementTemplates, create_script, statement_templates
    from .sql.store import Store
    from .xml.table import read_xml, write_xml
    from .xml.xsd import read_xsd, write_xsd


def __getattr__(name: str) -> Any:
    import importlib

    if name in _MODULES:  # importing it binds the name here
        return importlib.import_module(f".{name}", __name__)
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'entityworks' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE) | set(_MODULES))


__version__ = "0.16.0"

__all__ = [
    "AWARE",
    "AwareDatetime",
    "ChildTable",
    "Column",
    "ConfigurationError",
    "EntityworksError",
    "FilterError",
    "InvalidNameError",
    "NoSuchTableError",
    "NotFoundError",
    "OutputPathError",
    "PK",
    "SchemaError",
    "StatementTemplates",
    "References",
    "AsyncStore",
    "Store",
    "StoredValueError",
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
    "codegen_from_db",
    "col",
    "column",
    "create_script",
    "entity",
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

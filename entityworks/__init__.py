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

import sys
import types

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: see below

# The API is imported on first use (PEP 562), so that ``import entityworks`` costs next to
# nothing: the command line starts without SQLAlchemy, NumPy, pyarrow or lxml, and its Ctrl-C
# handling (``_entry``) is in place a moment after the interpreter starts. Add a new public
# name here (module -> names) and to ``__all__``; the TYPE_CHECKING block mirrors it for tools.
_LAZY: dict[str, tuple[str, ...]] = {
    "errors": ("ConfigurationError", "EntityworksError", "FilterError", "InvalidNameError",
               "NotFoundError", "OutputPathError", "SchemaError", "UnknownColumnError",
               "UnknownTableError", "UnsupportedTypeError", "ValueEncodingError", "WriteError",
               "XMLImportError"),
    "filters": ("col",),
    "frames": ("arrow_schema", "from_arrow", "from_pandas", "read_parquet", "to_arrow",
               "to_pandas", "write_parquet"),
    "registry": ("AWARE", "AwareDatetime", "TypeInfo", "TypeRegistry", "register_type",
                 "registry"),
    "schema": ("PK", "ChildTable", "Column", "References", "TableSchema", "column", "entity",
               "primary_key", "table", "table_schema"),
    "scripts": ("StatementTemplates", "create_script", "statement_templates"),
    "store": ("Store",),
    "xmlio": ("read_xml", "write_xml"),
    "xsd": ("read_xsd", "write_xsd"),
}
_WHERE = {name: module for module, names in _LAZY.items() for name in names}

if TYPE_CHECKING:
    from typing import Any

    from .errors import (
        ConfigurationError,
        EntityworksError,
        FilterError,
        InvalidNameError,
        NotFoundError,
        OutputPathError,
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
    from .schema import (
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
    from .scripts import StatementTemplates, create_script, statement_templates
    from .store import Store
    from .xmlio import read_xml, write_xml
    from .xsd import read_xsd, write_xsd


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'entityworks' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE))


class _Package(types.ModuleType):
    """Keeps ``entityworks.registry`` the default TypeRegistry (as the eager package had it):
    importing the submodule ``entityworks.registry`` would otherwise bind the module there."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "registry" and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


__version__ = "0.1.0"

__all__ = [
    "AWARE",
    "AwareDatetime",
    "ChildTable",
    "Column",
    "ConfigurationError",
    "EntityworksError",
    "FilterError",
    "InvalidNameError",
    "NotFoundError",
    "OutputPathError",
    "PK",
    "SchemaError",
    "StatementTemplates",
    "References",
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

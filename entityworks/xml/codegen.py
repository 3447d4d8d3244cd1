"""Python source for the dataclasses an XSD describes (``entityworks codegen FILE.xsd``).

The classes are those :func:`entityworks.xml.xsd.read_xsd` builds, written out so that a .NET
schema becomes a model to keep in a project: ``@entity`` classes (dataclasses that mypy
--strict and pyright accept in any field order the runtime accepts) with field names and
types (``X | None`` for ``minOccurs="0"``), the key (``column(primary_key=True)``),
``max_length``, the XSD spelling that .NET needs back (``metadata={"xsd": ...}``), the table
name when it is not the class name in snake case, ``__dataset__`` for a DataSet's name,
and child tables as ``list[Item]`` fields; for a DataSet of several tables, a class per
table with its relations (``metadata={"references": ...}``). Executing the source gives
classes with the same schema and XSD as ``read_xsd``'s (``read_dataset``'s). The imports
take private aliases where a class or a field has their names, so that no table or column
name shadows them.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import keyword
import types
import typing
import uuid
from pathlib import Path
from typing import Any

from ..errors import SchemaError
from ..model.fields import FOREIGN_KEY
from ..model.names import snake_case
from ..model.schema import table_name
from ..registry import AWARE, TypeRegistry
from ..registry import registry as default_registry
from .dataset import dataset_for
from .xsd import dataclass_for, is_dataset, load_xsd

#: Source spelling of each type: (import key, attribute) or a builtin's name.
_NAMES: dict[Any, tuple[str, str] | str] = {
    int: "int",
    str: "str",
    float: "float",
    bool: "bool",
    bytes: "bytes",
    decimal.Decimal: ("decimal", "Decimal"),
    dt.datetime: ("dt", "datetime"),
    dt.date: ("dt", "date"),
    dt.time: ("dt", "time"),
    dt.timedelta: ("dt", "timedelta"),
    uuid.UUID: ("uuid", "UUID"),
    list: "list",
    dict: "dict",
    tuple: "tuple",
}

#: Every name the generated module imports: its key (the name it has when nothing clashes)
#: -> the import statement's two parts.
_IMPORTS: dict[str, tuple[str, str]] = {
    "builtins": ("import", "builtins"),
    "decimal": ("import", "decimal"),
    "dt": ("import", "datetime"),
    "uuid": ("import", "uuid"),
    "field": ("dataclasses", "field"),
    "AwareDatetime": ("entityworks", "AwareDatetime"),
    "column": ("entityworks", "column"),
    "entity": ("entityworks", "entity"),
}


class _Names:
    """The names the generated module gives its imports: their usual ones, unless a class
    or a field is called so (a table ``aware_datetime`` is a class ``AwareDatetime``, a
    column ``column`` a field that ``column(...)`` below it in the class body would call),
    then a private alias no class or field has. Which imports are used is recorded."""

    def __init__(self, taken: set[str]) -> None:
        self.taken = taken
        self.aliases: dict[str, str] = {}

    def __call__(self, key: str) -> str:
        alias = self.aliases.get(key)
        if alias is None:
            alias, n = key, 1
            while alias in self.taken:
                alias, n = f"_{key}" + (f"_{n}" if n > 1 else ""), n + 1
            self.aliases[key] = alias
        return alias

    def imports(self) -> list[str]:
        lines = []
        for key in ("builtins", "dt", "decimal", "uuid"):  # builtins, datetime, decimal, uuid
            if key in self.aliases:
                module = _IMPORTS[key][1]
                alias = self.aliases[key]
                lines.append(
                    f"import {module}" if alias == module else f"import {module} as {alias}"
                )
        for source in ("dataclasses", "entityworks"):
            parts = sorted(
                _IMPORTS[key][1] if alias == key else f"{_IMPORTS[key][1]} as {alias}"
                for key, alias in self.aliases.items()
                if _IMPORTS[key][0] == source
            )
            if source == "entityworks" and lines and parts:
                lines.append("")
            if parts:
                lines.append(f"from {source} import {', '.join(parts)}")
        return lines


def _builtin(name: str, names: _Names) -> str:
    """A builtin type as an annotation: ``str``, or ``builtins.str`` when a field or a
    class is called ``str`` (type checkers would take the field for the type in its class)."""
    return f"{names('builtins')}.{name}" if name in names.taken else name


def _annotation(tp: Any, classes: dict[type, str], names: _Names) -> str:
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return f"{_annotation(args[0], classes, names)} | None"
    if origin is typing.Annotated and AWARE in typing.get_args(tp)[1:]:
        return names("AwareDatetime")
    if origin is list and typing.get_args(tp):
        (item,) = typing.get_args(tp)
        return (
            f"{_builtin('list', names)}[{classes.get(item) or _annotation(item, classes, names)}]"
        )
    spelling = _NAMES.get(tp)
    if isinstance(spelling, tuple):
        return f"{names(spelling[0])}.{spelling[1]}"
    if spelling is not None:
        return _builtin(spelling, names)
    raise ValueError(f"no source spelling for the type {tp!r}")


def _field_source(f: dataclasses.Field[Any], classes: dict[type, str], names: _Names) -> str:
    annotation = _annotation(f.type, classes, names)
    if f.default_factory is not dataclasses.MISSING:  # a child list
        # list[Item], not list: strict checkers (pyright) call a bare list's items Unknown. A
        # field called "list" above it would be found first in the class body: then a lambda,
        # whose [] takes the field's declared type
        item = annotation.removesuffix(" | None")
        factory = "lambda: []" if "list" in names.taken else item
        return f"    {f.name}: {annotation} = {names('field')}(default_factory={factory})"
    meta = dict(f.metadata or {})
    args = []
    if meta.pop("primary_key", False):
        args.append("primary_key=True")
    for option in ("unique", "index"):
        if meta.pop(option, False):
            args.append(f"{option}=True")
    if meta.get("max_length") is not None:
        args.append(f"max_length={meta.pop('max_length')!r}")
    foreign_key = meta.pop(FOREIGN_KEY, None)
    if foreign_key is not None:  # a target class is written by the name it has here
        target, action = foreign_key
        written = target if isinstance(target, str) else classes[target]
        args.append(f"references={written!r}")
        if action != "no action":
            args.append(f"on_delete={action!r}")
    if meta.get("column_name") is not None:  # a column no field can be called
        args.append(f"name={meta.pop('column_name')!r}")
    meta = {k: v for k, v in meta.items() if v not in (None, False, {})}
    if meta:
        args.append(f"metadata={meta!r}")
    default = f" = {names('column')}({', '.join(args)})" if args else ""
    return f"    {f.name}: {annotation}{default}"


def _class_source(cls: type, classes: dict[type, str], names: _Names) -> str:
    # @entity, not @dataclass: type checkers (mypy --strict, pyright) take a column(...)
    # without a default as no default only under @entity, whose field specifier it is, so a
    # field without a default may follow the key there, as it may at run time
    name = classes[cls]
    table = table_name(cls)
    named = f"{table!r}" if snake_case(name) != table else ""
    lines = [f"@{names('entity')}({named})", f"class {name}:"]
    dataset = getattr(cls, "__dataset__", None)
    if dataset:
        lines.append(f"    __dataset__ = {dataset!r}")
    fields = dataclasses.fields(cls)
    lines += [_field_source(f, classes, names) for f in fields] or ["    pass"]
    return "\n".join(lines)


def classes_in_order(classes: list[type]) -> list[type]:
    """``classes`` with the item classes of their list fields (and theirs), each item class
    before the class that refers to it, each class once."""
    ordered: list[type] = []

    def visit(cls: type) -> None:
        if cls in ordered:
            return
        hints = typing.get_type_hints(cls, include_extras=True)
        for f in dataclasses.fields(cls):
            hint = hints[f.name]
            args = [a for a in typing.get_args(hint) if a is not type(None)]
            if typing.get_origin(hint) in (typing.Union, types.UnionType) and args:
                hint = args[0]  # list[Item] | None
            if typing.get_origin(hint) is list:
                (item,) = typing.get_args(hint)
                if isinstance(item, type) and dataclasses.is_dataclass(item):
                    visit(item)
        ordered.append(cls)

    for cls in classes:
        visit(cls)
    return ordered


def _python_name(name: str, taken: set[str]) -> str:
    if keyword.iskeyword(name) or not name.isidentifier():
        name = f"T{name}"
    base, n = name, 2
    while name in taken:
        name, n = f"{base}{n}", n + 1
    taken.add(name)
    return name


def _check_fields(cls: type) -> None:
    """Refuse a field a class body would not define under its name: ``__x`` becomes
    ``_Class__x`` there (private name mangling); ``__dataset__`` is the class's DataSet."""
    for f in dataclasses.fields(cls):
        if f.name.startswith("__") and not f.name.endswith("__") or f.name == "__dataset__":
            raise SchemaError(
                f"{cls.__qualname__}.{f.name}: a field of this name cannot be "
                "written in a class body (Python renames '__x' to "
                "'_Class__x'); rename the column",
                cls=cls,
                field=f.name,
            )


def source_for(classes: list[type], *, origin: str = "an XSD") -> str:
    """Module source defining ``classes`` (dependencies first), made from ``origin`` (as the
    module's docstring says it); SchemaError for a field no class body can define."""
    classes_named: dict[type, str] = {}
    taken: set[str] = set()
    for cls in classes:
        _check_fields(cls)
        classes_named[cls] = _python_name(cls.__name__, taken)
    fields = {f.name for cls in classes for f in dataclasses.fields(cls)}
    names = _Names(taken | fields)
    body = "\n\n\n".join(_class_source(cls, classes_named, names) for cls in classes)
    imports = ["from __future__ import annotations", "", *names.imports()]
    header = f'"""Generated by entityworks codegen from {origin}; edit freely."""'
    return "\n".join([header, "", *imports, "", "", body, ""])


def codegen(xsd_path: str | Path, *, registry: TypeRegistry = default_registry) -> str:
    """Python source of the dataclasses ``xsd_path`` describes (see the module docstring):
    one table with its child tables, or every table of a DataSet."""
    model = load_xsd(xsd_path)
    if is_dataset(model):
        return source_for(list(dataset_for(model, registry=registry).tables.values()))
    return source_for(classes_in_order([dataclass_for(model, registry=registry)]))


__all__ = ["classes_in_order", "codegen", "source_for"]

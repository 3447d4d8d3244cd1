"""Writing XSD in the shape .NET's ``DataTable.WriteXmlSchema`` writes.

The schema is a dataset wrapper element (``msdata:IsDataSet``) holding an ``xs:choice`` of row
elements, one per table; each row is an ``xs:sequence`` of column elements in column order,
``minOccurs="0"`` exactly for nullable columns, and the primary key is an ``xs:unique`` marked
``msdata:PrimaryKey``. Type names and ``msdata:*`` attributes come from the registry.

Child tables (``list[Item]`` fields) are *sibling* row elements in the same ``xs:choice``,
carrying ``parent_key`` and ``position`` columns, an ``xs:unique`` on both and an
``xs:keyref`` to the parent's key: that is how a .NET ``DataSet`` writes a non-nested relation,
and it keeps rows flat so that export and import stream.

Also here, shared with the reading side (:mod:`entityworks.xml.xsd`): the XML name encoding
(``_x0020_``), the namespaces and the limits on tables and columns.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lxml import etree

from .._files import write_bytes
from ..errors import SchemaError, XMLImportError
from ..model.fields import XSD_METADATA
from ..model.schema import (
    PARENT_COLUMN,
    POSITION_COLUMN,
    TableSchema,
    refuse_nested_children,
    table_schema,
)
from ..registry import TypeRegistry
from ..registry import registry as default_registry

XS_NS = "http://www.w3.org/2001/XMLSchema"
MSDATA_NS = "urn:schemas-microsoft-com:xml-msdata"
XML_NS = "http://www.w3.org/XML/1998/namespace"
_PREFIXES = {"xs": XS_NS, "msdata": MSDATA_NS}
_XS = f"{{{XS_NS}}}"
_MSDATA = f"{{{MSDATA_NS}}}"

#: Name of our dataset wrapper and data root; .NET's ``DataTable.WriteXml`` uses it too.
DEFAULT_DATASET = "DocumentElement"

# Limits on the schemas we read and write. libxml2 compiles a row of optional columns into
# an automaton whose cost grows with the cube of the column count (500 columns: under a
# second; 2,000: nearly a minute), so a hostile XSD could otherwise hold an import for
# hours. The limits are checked before anything is compiled or created.
#: Largest XSD file read, in bytes.
MAX_XSD_BYTES = 4 * 2**20
#: Most tables (row elements) in one dataset.
MAX_TABLES = 100
#: Most columns in one table.
MAX_COLUMNS = 500
#: Most columns in all the tables of one dataset together.
MAX_DATASET_COLUMNS = 2_000

# XML 1.0 (fifth edition) name characters, without ':' (element names here are NCNames).
_START = (
    "A-Z_a-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u02ff\u0370-\u037d\u037f-\u1fff"
    "\u200c-\u200d\u2070-\u218f\u2c00-\u2fef\u3001-\ud7ff\uf900-\ufdcf\ufdf0-\ufffd"
    "\U00010000-\U000effff"
)
_NAME_START = re.compile(f"[{_START}]")
_NAME_CHAR = re.compile(f"[{_START}\\-.0-9\u00b7\u0300-\u036f\u203f-\u2040]")
_ENCODED = re.compile(r"_[Xx]([0-9A-Fa-f]{4}|[0-9A-Fa-f]{8})_")
_ESCAPE_LIKE = _ENCODED


def encode_name(name: str) -> str:
    """A column or table name as an XML element name, escaped the way .NET's XmlConvert does.

    Characters an NCName cannot hold become ``_xHHHH_``; an ``_`` that would read as such an
    escape is itself escaped, so :func:`decode_name` is an exact inverse.
    """
    out = []
    for i, ch in enumerate(name):
        ok = (_NAME_START if i == 0 else _NAME_CHAR).fullmatch(ch)
        if ch == "_" and _ESCAPE_LIKE.match(name, i):
            ok = None
        if ok:
            out.append(ch)
        elif ord(ch) > 0xFFFF:
            out.append(f"_x{ord(ch):08X}_")
        else:
            out.append(f"_x{ord(ch):04X}_")
    return "".join(out)


def decode_name(name: str) -> str:
    """Inverse of :func:`encode_name`.

    An escape of something that is not a character (``_xFFFFFFFF_``, a lone surrogate
    ``_xD800_``) raises :class:`XMLImportError`: no name we write holds one, and no
    database could.
    """
    if "_" not in name:
        return name
    return _ENCODED.sub(lambda m: _escaped_char(m.group(1), name), name)


def _escaped_char(digits: str, name: str) -> str:
    code = int(digits, 16)
    if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
        raise XMLImportError(f"name {name!r} escapes U+{code:04X}, which is not a character")
    return chr(code)


# -- writing ---------------------------------------------------------------------------------


def _qualified(attribute: str) -> str:
    prefix, _, local = attribute.partition(":")
    return f"{{{_PREFIXES[prefix]}}}{local}" if local else attribute


def _xs(parent: etree._Element, tag: str, **attrs: str) -> etree._Element:
    return etree.SubElement(parent, _XS + tag, {k: v for k, v in attrs.items()})


#: The value ranges of XSD's narrower integer types (.NET's Byte, Int16, Int32, UInt...).
INT_RANGES: dict[str, tuple[int, int]] = {
    "xs:byte": (-(2**7), 2**7 - 1),
    "xs:short": (-(2**15), 2**15 - 1),
    "xs:int": (-(2**31), 2**31 - 1),
    "xs:long": (-(2**63), 2**63 - 1),
    "xs:unsignedByte": (0, 2**8 - 1),
    "xs:unsignedShort": (0, 2**16 - 1),
    "xs:unsignedInt": (0, 2**32 - 1),
    "xs:unsignedLong": (0, 2**64 - 1),
}


@dataclass(frozen=True)
class ColumnXsd:
    """How one column is spelled in the XSD we write."""

    type: str
    attributes: dict[str, str]
    max_length: int | None = None
    default: str | None = None


def column_xsd(schema: TableSchema, column: Any) -> ColumnXsd:
    """The XSD type and attributes of ``column``: the field's own (kept from a .NET
    schema by :func:`read_xsd`) or else the registry's."""
    meta: dict[str, Any] = {}
    if column.name in _field_names(schema.cls):
        meta = dict(_field(schema.cls, column.name).metadata.get(XSD_METADATA) or {})
    xsd_type = meta.get("type") or column.info.xml_codec.xsd_type
    attributes = meta.get("attributes")
    if attributes is None:
        attributes = dict(column.info.xml_codec.attributes)
    return ColumnXsd(xsd_type, dict(attributes), column.max_length, meta.get("default"))


def _field_names(cls: type) -> set[str]:
    return {f.name for f in dataclasses.fields(cls)}


def _field(cls: type, name: str) -> dataclasses.Field[Any]:
    return next(f for f in dataclasses.fields(cls) if f.name == name)


def value_check(spelling: ColumnXsd, python_type: Any) -> Any:
    """A function refusing values the column's XSD type cannot hold (``None``: no check).

    Our own types never need one; a type kept from a .NET schema (xs:short for an ``int``,
    xs:float for a ``float``) or a ``max_length`` does.
    """
    # xs:long is the registry's own type for int: its 64-bit range is checked there
    limits = (
        INT_RANGES.get(spelling.type) if python_type is int and spelling.type != "xs:long" else None
    )
    single = spelling.type == "xs:float" and python_type is float
    longest = spelling.max_length

    def check(value: Any) -> None:
        if limits is not None and not limits[0] <= value <= limits[1]:
            raise ValueError(
                f"{value} is out of the range of {spelling.type} ({limits[0]}..{limits[1]})"
            )
        if single and not _single_shortest(value):
            raise ValueError(
                f"{value!r} is not a single-precision (xs:float) value as .NET "
                "prints them; it would come back different"
            )
        if longest is not None and len(value) > longest:
            raise ValueError(f"{len(value)} characters, more than the column's maxLength {longest}")

    return check if limits is not None or single or longest is not None else None


def _single_shortest(value: float) -> bool:
    """True when ``value`` is the shortest decimal of a single (``0.1`` for 0.1f), the form
    in which xs:float values are written by .NET and read by us, or NaN or an infinity."""
    import numpy as np

    if value != value or value in (math.inf, -math.inf):
        return True
    with np.errstate(over="ignore"):
        single = np.float32(value)
    if not np.isfinite(single):
        return False
    exact = float(single)  # .NET's "R" format: 7 digits if they round-trip, else 9
    return value in (float(str(single)), float(f"{exact:.7g}"), float(f"{exact:.9g}"))


def _row_element(choice: etree._Element, schema: TableSchema) -> None:
    row = _xs(choice, "element", name=encode_name(schema.name))
    sequence = _xs(_xs(row, "complexType"), "sequence")
    for c in schema.columns:
        spelling = column_xsd(schema, c)
        col = _xs(sequence, "element", name=encode_name(c.name))
        for key, value in spelling.attributes.items():
            col.set(_qualified(key), value)
        if spelling.default is not None:
            col.set("default", spelling.default)
        if spelling.max_length is None:
            col.set("type", spelling.type)
        else:  # as .NET writes a MaxLength
            restriction = _xs(_xs(col, "simpleType"), "restriction", base=spelling.type)
            _xs(restriction, "maxLength", value=str(spelling.max_length))
        if c.nullable:
            col.set("minOccurs", "0")


def _unique(
    dataset: etree._Element,
    name: str,
    table: str,
    fields: list[str],
    constraint_name: str | None = None,
) -> None:
    unique = _xs(dataset, "unique", name=name)
    if constraint_name:
        unique.set(_MSDATA + "ConstraintName", constraint_name)
    unique.set(_MSDATA + "PrimaryKey", "true")
    _xs(unique, "selector", xpath=f".//{encode_name(table)}")
    for f in fields:
        _xs(unique, "field", xpath=encode_name(f))


def dataset_xsd_tree(
    schemas: list[TableSchema], relations: list[Any], dataset: str, *, nested: bool = False
) -> etree._ElementTree:
    """The XSD of a DataSet of several tables, as .NET's ``DataSet.WriteXmlSchema`` writes it.

    ``relations`` hold ``name, parent, parent_column, child, child_column`` (the tables'
    names); each becomes an ``xs:keyref`` to the parent's key, ``msdata:IsNested`` with
    ``nested`` (the child's row element then sits inside the parent's). Keys are
    ``xs:unique msdata:PrimaryKey``, named ``Constraint1`` and ``<table>_Constraint1``.
    """
    names = {schema.name for schema in schemas}
    if dataset in names:
        raise SchemaError(f"dataset name {dataset!r} clashes with a table name")
    total = 0
    for n, schema in enumerate(schemas, 1):
        total += len(schema.columns)
        check_limits(encode_name(schema.name), n, len(schema.columns), total, SchemaError)
    root = etree.Element(_XS + "schema", nsmap={None: "", "xs": XS_NS, "msdata": MSDATA_NS})
    root.set("id", dataset)
    wrapper = _xs(root, "element", name=encode_name(dataset))
    wrapper.set(_MSDATA + "IsDataSet", "true")
    wrapper.set(_MSDATA + "UseCurrentLocale", "true")
    choice = _xs(_xs(wrapper, "complexType"), "choice", minOccurs="0", maxOccurs="unbounded")
    nested_in = {r.child: r.parent for r in relations} if nested else {}
    sequences: dict[str, etree._Element] = {}
    for schema in schemas:  # parents come first
        parent = nested_in.get(schema.name)
        holder = choice if parent is None else sequences[parent]
        _row_element(holder, schema)
        row = holder[-1]
        if parent is not None:
            row.set("minOccurs", "0")
            row.set("maxOccurs", "unbounded")
        sequence = row.find(f"{_XS}complexType/{_XS}sequence")
        assert sequence is not None  # _row_element made it
        sequences[schema.name] = sequence
    key_names: dict[str, str] = {}
    for n, schema in enumerate(schemas):
        if not schema.key_columns:
            continue
        name = "Constraint1" if n == 0 else f"{schema.name}_Constraint1"
        _unique(
            wrapper,
            name,
            schema.name,
            [c.name for c in schema.key_columns],
            constraint_name=None if n == 0 else "Constraint1",
        )
        key_names[schema.name] = name
    for r in relations:
        if r.parent not in key_names:
            raise SchemaError(f"relation {r.name!r}: table {r.parent!r} has no primary key")
        keyref = _xs(wrapper, "keyref", name=r.name, refer=key_names[r.parent])
        if nested:
            keyref.set(_MSDATA + "IsNested", "true")
        _xs(keyref, "selector", xpath=f".//{encode_name(r.child)}")
        _xs(keyref, "field", xpath=encode_name(r.child_column))
    return etree.ElementTree(root)


def dataset_name(cls: type, dataset: str | None = None) -> str:
    """The dataset (root element) name to write: ``dataset``, else the class's own
    ``__dataset__`` (a .NET DataSet's name, kept by :func:`read_xsd` and the logical
    schema), else :data:`DEFAULT_DATASET`."""
    return dataset or getattr(cls, "__dataset__", None) or DEFAULT_DATASET


def xsd_tree(
    cls: type, *, dataset: str | None = None, registry: TypeRegistry = default_registry
) -> etree._ElementTree:
    """The XSD document for ``cls`` (and its child tables) as an lxml tree."""
    dataset = dataset_name(cls, dataset)
    schema = table_schema(cls, registry)
    check_schema_limits(schema)
    names = {schema.name} | {child.schema.name for child in schema.children}
    if dataset in names:
        raise SchemaError(f"dataset name {dataset!r} clashes with a table name", cls=cls)
    root = etree.Element(_XS + "schema", nsmap={None: "", "xs": XS_NS, "msdata": MSDATA_NS})
    root.set("id", dataset)
    wrapper = _xs(root, "element", name=encode_name(dataset))
    wrapper.set(_MSDATA + "IsDataSet", "true")
    wrapper.set(_MSDATA + "MainDataTable", encode_name(schema.name))
    wrapper.set(_MSDATA + "UseCurrentLocale", "true")
    choice = _xs(_xs(wrapper, "complexType"), "choice", minOccurs="0", maxOccurs="unbounded")
    _row_element(choice, schema)
    for child in schema.children:
        _row_element(choice, child.schema)
    if schema.key_columns:  # one column, or several (a composite key)
        _unique(wrapper, "Constraint1", schema.name, [c.name for c in schema.key_columns])
    for child in schema.children:
        child_name = child.schema.name
        _unique(
            wrapper,
            f"{child_name}_Constraint1",
            child_name,
            [PARENT_COLUMN, POSITION_COLUMN],
            constraint_name="Constraint1",
        )
        keyref = _xs(wrapper, "keyref", name=f"FK_{schema.name}_{child_name}", refer="Constraint1")
        _xs(keyref, "selector", xpath=f".//{encode_name(child_name)}")
        _xs(keyref, "field", xpath=PARENT_COLUMN)
    return etree.ElementTree(root)


def xsd_bytes(
    cls: type, *, dataset: str | None = None, registry: TypeRegistry = default_registry
) -> bytes:
    """The XSD document for ``cls``, serialised as UTF-8."""
    return etree.tostring(
        xsd_tree(cls, dataset=dataset, registry=registry),
        xml_declaration=True,
        encoding="utf-8",
        standalone=True,
        pretty_print=True,
    )


def write_xsd(
    cls: type,
    xsd_path: str | Path,
    *,
    dataset: str | None = None,
    registry: TypeRegistry = default_registry,
) -> Path:
    """Write the XSD of ``cls`` in the .NET DataTable shape; returns the path.

    Only a regular file is written, whole or not at all (see :mod:`entityworks._files`).
    """
    return write_bytes(xsd_path, xsd_bytes(cls, dataset=dataset, registry=registry))


# -- reading ---------------------------------------------------------------------------------


def check_limits(table: str, tables: int, columns: int, total: int, error: type[Exception]) -> None:
    """Refuse a dataset beyond :data:`MAX_TABLES`, :data:`MAX_COLUMNS` or
    :data:`MAX_DATASET_COLUMNS` (``tables``/``total``: counts so far, this table included)."""
    if tables > MAX_TABLES:
        raise error(
            f"the dataset has more than {MAX_TABLES} tables, the most entityworks "
            "reads or writes in one XSD"
        )
    if columns > MAX_COLUMNS:
        raise error(
            f"table {decode_name(table)!r} has {columns:,} columns; at most "
            f"{MAX_COLUMNS} per table are read or written as XML (XSD validation "
            "of wider rows costs too much)"
        )
    if total > MAX_DATASET_COLUMNS:
        raise error(
            f"the dataset has more than {MAX_DATASET_COLUMNS:,} columns in all; "
            "that is the most read or written as XML in one XSD"
        )


def check_schema_limits(schema: TableSchema) -> None:
    """Refuse (:class:`SchemaError`) to write a class whose XSD our import would refuse."""
    refuse_nested_children(schema, "XML and XSD")
    total = 0
    for n, table in enumerate([schema, *(child.schema for child in schema.children)], 1):
        total += len(table.columns)
        check_limits(encode_name(table.name), n, len(table.columns), total, SchemaError)


__all__ = [
    "DEFAULT_DATASET",
    "MAX_COLUMNS",
    "MAX_DATASET_COLUMNS",
    "MAX_TABLES",
    "MAX_XSD_BYTES",
    "ColumnXsd",
    "INT_RANGES",
    "check_limits",
    "column_xsd",
    "check_schema_limits",
    "dataset_xsd_tree",
    "dataset_name",
    "decode_name",
    "encode_name",
    "value_check",
    "write_xsd",
    "xsd_bytes",
    "xsd_tree",
    "MSDATA_NS",
    "XS_NS",
    "XML_NS",
]

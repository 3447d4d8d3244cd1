"""XSD in the shape .NET's ``DataTable.WriteXmlSchema`` writes, and back.

The schema is a dataset wrapper element (``msdata:IsDataSet``) holding an ``xs:choice`` of row
elements, one per table; each row is an ``xs:sequence`` of column elements in column order,
``minOccurs="0"`` exactly for nullable columns, and the primary key is an ``xs:unique`` marked
``msdata:PrimaryKey``. Type names and ``msdata:*`` attributes come from the registry.

Child tables (``list[Item]`` fields) are *sibling* row elements in the same ``xs:choice``,
carrying ``parent_key`` and ``position`` columns, an ``xs:unique`` on both and an
``xs:keyref`` to the parent's key: that is how a .NET ``DataSet`` writes a non-nested relation,
and it keeps rows flat so that export and import stream.

For validation the schema is rewritten in memory (:func:`validation_schema`): the wrapper takes
the name of the document's root (.NET writes data under ``DocumentElement`` but names the
schema wrapper ``NewDataSet``), column elements accept ``xml:space`` (which .NET writes on
whitespace-only strings but never declares), and identity constraints are checked by the
reader in Python instead of by libxml2, whose key tables would not stream.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import re
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lxml import etree

from ..errors import SchemaError, UnsupportedTypeError, XMLImportError
from ..files import write_bytes
from ..model.schema import (
    PARENT_COLUMN,
    POSITION_COLUMN,
    XSD_METADATA,
    TableSchema,
    refuse_nested_children,
    table_schema,
    unusable_field_name,
)
from ..registry import TypeRegistry
from ..registry import registry as default_registry
from .parser import inline_schema, parse_document

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
    xsd_type = meta.get("type") or column.info.xsd
    attributes = meta.get("attributes")
    if attributes is None:
        attributes = dict(column.info.xsd_attributes)
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

    Only a regular file is written, whole or not at all (see :mod:`entityworks.files`).
    """
    return write_bytes(xsd_path, xsd_bytes(cls, dataset=dataset, registry=registry))


# -- reading ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class XsdColumn:
    """A column element of a row: its (encoded) name, XSD type and ``msdata:*`` attributes."""

    name: str
    xsd_type: str
    nullable: bool
    attributes: dict[str, str] = field(default_factory=dict)
    max_length: int | None = None
    default: str | None = None


@dataclass(frozen=True)
class XsdTable:
    name: str
    columns: tuple[XsdColumn, ...]
    #: The table whose row elements hold this table's rows (a nested .NET relation).
    nested_in: str | None = None


@dataclass(frozen=True)
class XsdConstraint:
    """An ``xs:unique`` / ``xs:key`` / ``xs:keyref`` over columns of one table."""

    kind: str
    name: str
    table: str
    fields: tuple[str, ...]
    refer: str | None = None
    primary_key: bool = False
    #: A keyref of a nested relation (``msdata:IsNested``): child rows inside parent rows.
    nested: bool = False


@dataclass(frozen=True)
class XsdModel:
    """What the reader needs from a dataset XSD (ours or one written by .NET)."""

    dataset: str
    main_table: str
    tables: dict[str, XsdTable]
    constraints: tuple[XsdConstraint, ...]
    tree: etree._ElementTree = dataclasses.field(repr=False, compare=False)
    #: True when the dataset element names a main table (a DataTable's schema, whose data
    #: root .NET calls DocumentElement), False for a DataSet's.
    has_main_table: bool = True


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


def _local(qname: str) -> str:
    return qname.rpartition(":")[2]


def _xs_type(element: etree._Element, qname: str) -> str:
    prefix, _, local = qname.rpartition(":")
    namespace = element.nsmap.get(prefix or None)
    if namespace != XS_NS:
        raise XMLImportError(f"column type {qname!r} is not a built-in XSD type")
    return f"xs:{local}"


def _column(element: etree._Element) -> XsdColumn:
    name = element.get("name")
    if name is None:
        raise XMLImportError("a column element of the XSD has no name")
    qname = element.get("type")
    max_length = None
    if qname is None:  # .NET writes <xs:simpleType><xs:restriction base=...> for MaxLength
        restriction = element.find(f"{_XS}simpleType/{_XS}restriction")
        if restriction is None or restriction.get("base") is None:
            raise XMLImportError(f"XSD column {name!r} has no simple type")
        qname = restriction.get("base", "")
        facet = restriction.find(_XS + "maxLength")
        if facet is not None:
            try:
                max_length = int(facet.get("value", ""))
            except ValueError:
                raise XMLImportError(
                    f"XSD column {name!r}: maxLength {facet.get('value')!r} is not a number"
                ) from None
    attributes = {
        f"msdata:{etree.QName(k).localname}": v
        for k, v in element.attrib.items()
        if k.startswith(_MSDATA)
    }
    return XsdColumn(
        name,
        _xs_type(element, qname),
        element.get("minOccurs") == "0",
        attributes,
        max_length,
        element.get("default"),
    )


def _dataset_element(root: etree._Element) -> etree._Element:
    if root.tag != _XS + "schema":
        raise XMLImportError(f"not an XSD document (root is {root.tag!r})")
    if root.get("targetNamespace"):
        raise XMLImportError("datasets with a targetNamespace are not supported")
    elements = root.findall(_XS + "element")
    marked = [e for e in elements if e.get(_MSDATA + "IsDataSet") == "true"]
    if marked:
        return marked[0]
    if len(elements) == 1:
        return elements[0]
    raise XMLImportError('the XSD has no dataset element (msdata:IsDataSet="true")')


def _selector_table(xpath: str) -> str:
    return _local(xpath.strip().removeprefix(".//").removeprefix("./"))


def refuse_external_schemas(root: etree._Element) -> None:
    """Refuse (:class:`XMLImportError`) an XSD that refers to another schema (``xs:import``,
    ``xs:include``, ``xs:redefine``, ``xs:override``): only self-contained schemas are read,
    by every reader of XSDs (import, DataSets, DiffGrams, ``codegen``)."""
    for node in root.iter(_XS + "import", _XS + "include", _XS + "redefine", _XS + "override"):
        raise XMLImportError(
            f"the XSD refers to another schema ({node.get('schemaLocation')!r}"
            "); only self-contained schemas are read"
        )


def parse_xsd_tree(tree: etree._ElementTree) -> XsdModel:
    """Read the tables, columns and constraints of a dataset XSD (a self-contained one:
    :func:`refuse_external_schemas`)."""
    refuse_external_schemas(tree.getroot())
    dataset = _dataset_element(tree.getroot())
    choice = dataset.find(f"{_XS}complexType/{_XS}choice")
    if choice is None:
        choice = dataset.find(f"{_XS}complexType/{_XS}sequence")
    if choice is None:
        raise XMLImportError("the dataset element of the XSD has no xs:choice of tables")
    tables: dict[str, XsdTable] = {}
    total = 0
    pending: list[tuple[etree._Element, str | None]] = [
        (row, None) for row in choice.findall(_XS + "element")
    ]
    while pending:
        row, parent = pending.pop(0)
        name = row.get("name") or _local(row.get("ref", ""))
        complex_type = row.find(_XS + "complexType")
        if complex_type is None:
            raise XMLImportError(f"XSD table {name!r} has no inline complexType")
        if complex_type.find(_XS + "attribute") is not None:
            raise XMLImportError(
                f"XSD table {name!r} maps columns to attributes, which is not supported"
            )
        if name in tables:
            raise XMLImportError(f"the XSD declares table {name!r} twice")
        sequence = complex_type.find(_XS + "sequence")
        elements = [] if sequence is None else sequence.findall(_XS + "element")
        nested = [e for e in elements if _is_nested_table(e)]
        columns = [e for e in elements if not _is_nested_table(e)]
        total += len(columns)
        check_limits(name, len(tables) + 1, len(columns), total, XMLImportError)
        tables[name] = XsdTable(name, tuple(map(_column, columns)), parent)
        pending += [(e, name) for e in nested]
    if not tables:
        raise XMLImportError("the XSD declares no table")
    constraints = []
    for element in dataset:
        kind = etree.QName(element).localname if isinstance(element.tag, str) else ""
        if kind not in ("unique", "key", "keyref"):
            continue
        selector = element.find(_XS + "selector")
        fields = tuple(_local(f.get("xpath", "")) for f in element.findall(_XS + "field"))
        if selector is None or not fields:
            raise XMLImportError(f"XSD constraint {element.get('name')!r} is incomplete")
        constraints.append(
            XsdConstraint(
                kind,
                element.get("name", ""),
                _selector_table(selector.get("xpath", "")),
                fields,
                _local(element.get("refer", "")) or None,
                element.get(_MSDATA + "PrimaryKey") == "true",
                element.get(_MSDATA + "IsNested") == "true",
            )
        )
    declared = _local(dataset.get(_MSDATA + "MainDataTable", ""))
    main = declared or next(iter(tables))
    if main not in tables:
        raise XMLImportError(f"msdata:MainDataTable {main!r} is not a table of the XSD")
    return XsdModel(dataset.get("name", ""), main, tables, tuple(constraints), tree, bool(declared))


def _is_nested_table(element: etree._Element) -> bool:
    """A table nested in a row (.NET's nested relation), not a column: its own sequence."""
    return (
        element.get("type") is None and element.find(f"{_XS}complexType/{_XS}sequence") is not None
    )


def load_xsd(xsd_path: str | Path) -> XsdModel:
    """Parse an XSD file with the hardened parser and read its dataset shape."""
    return parse_xsd_tree(parse_document(xsd_path, what="XSD", max_bytes=MAX_XSD_BYTES))


def load_inline_xsd(xml_path: str | Path) -> XsdModel | None:
    """The dataset shape of the schema a document carries inline (``None``: it has none)."""
    tree = inline_schema(Path(xml_path), MAX_XSD_BYTES)
    return None if tree is None else parse_xsd_tree(tree)


def read_inline_xsd(
    xml_path: str | Path, *, registry: TypeRegistry = default_registry
) -> type | None:
    """:func:`read_xsd` for the schema inside a document (``None`` if it has none)."""
    model = load_inline_xsd(xml_path)
    return None if model is None else dataclass_for(model, registry=registry)


def model_for(
    cls: type, *, dataset: str | None = None, registry: TypeRegistry = default_registry
) -> XsdModel:
    """The :class:`XsdModel` of our own XSD for ``cls`` (no file involved)."""
    return parse_xsd_tree(xsd_tree(cls, dataset=dataset_name(cls, dataset), registry=registry))


# .NET keeps xs:date and xs:time columns in DateTime and writes them back as full dateTime
# values (against its own schema); the registry's decoders accept both forms.
_WIDENED = {
    "ew_date_or_dateTime": "xs:date xs:dateTime",
    "ew_time_or_dateTime": "xs:time xs:dateTime",
}


def validation_tree(model: XsdModel, root_name: str) -> etree._ElementTree:
    """The schema document :func:`validation_schema` compiles (see the module docstring)."""
    """A validator for documents whose root is ``root_name`` (see the module docstring)."""
    tree = copy.deepcopy(model.tree)
    root = tree.getroot()
    refuse_external_schemas(root)
    dataset = _dataset_element(root)
    dataset.set("name", root_name)
    _allow_inline_schema(dataset)
    for constraint in (
        dataset.findall(_XS + "unique")
        + dataset.findall(_XS + "key")
        + dataset.findall(_XS + "keyref")
    ):
        dataset.remove(constraint)
    for name, members in _WIDENED.items():
        etree.SubElement(
            etree.SubElement(root, _XS + "simpleType", name=name),
            _XS + "union",
            memberTypes=members,
        )
    for column in dataset.iterfind(f".//{_XS}sequence/{_XS}element[@type]"):
        base = column.attrib.pop("type")
        if _xs_type(column, base) in ("xs:date", "xs:time"):
            base = f"ew_{_local(base)}_or_dateTime"
        extension = etree.SubElement(
            etree.SubElement(etree.SubElement(column, _XS + "complexType"), _XS + "simpleContent"),
            _XS + "extension",
            base=base,
        )
        etree.SubElement(extension, _XS + "anyAttribute", namespace=XML_NS, processContents="skip")
    return tree


def _allow_inline_schema(dataset: etree._Element) -> None:
    """Let the rows follow an ``xs:schema`` (a document's inline schema, not validated)."""
    complex_type = dataset.find(_XS + "complexType")
    if complex_type is None or not len(complex_type):
        return
    rows = complex_type[0]
    sequence = etree.Element(_XS + "sequence")
    complex_type.insert(0, sequence)
    etree.SubElement(sequence, _XS + "any", namespace=XS_NS, processContents="skip", minOccurs="0")
    sequence.append(rows)


def validation_schema(model: XsdModel, root_name: str) -> etree.XMLSchema:
    """A validator for documents whose root is ``root_name`` (see the module docstring)."""
    return _compile(validation_tree(model, root_name))


def row_schema(model: XsdModel, root_name: str) -> etree.XMLSchema:
    """A validator for single row elements, used to locate the row a document error is in."""
    tree = validation_tree(model, root_name)
    root = tree.getroot()
    rows = f"{_XS}complexType/{_XS}sequence/*/{_XS}element"
    for row in _dataset_element(root).iterfind(rows):
        root.append(copy.deepcopy(row))
    return _compile(tree)


def _compile(tree: etree._ElementTree) -> etree.XMLSchema:
    try:
        return etree.XMLSchema(tree)
    except etree.XMLSchemaParseError as exc:
        raise XMLImportError(f"the XSD is not a valid schema: {exc}") from None


def read_xsd(xsd_path: str | Path, *, registry: TypeRegistry = default_registry) -> type:
    """Build a dataclass from a dataset XSD (ours or .NET's), ready for :func:`read_xml`.

    Column types come from the registry's XSD names and ``msdata`` attributes; ``minOccurs=0``
    makes a field Optional; the ``msdata:PrimaryKey`` constraint marks the key. Child tables
    of our own shape (``parent_key`` + ``position`` + keyref) become ``list[Item]`` fields.
    """
    return dataclass_for(load_xsd(xsd_path), registry=registry)


def is_dataset(model: XsdModel) -> bool:
    """True for a DataSet of independent tables (or of one table that refers to itself),
    False for one table (with child tables in our own ``parent_key``/``position`` shape,
    which :func:`read_xsd` reads)."""
    if any(c.kind == "keyref" and c.table == model.main_table for c in model.constraints):
        return True  # a relation of the main table: a foreign key only a DataSet keeps
    for name, table in model.tables.items():
        if name == model.main_table:
            continue
        ours = [c.name for c in table.columns[:2]] == [PARENT_COLUMN, POSITION_COLUMN] and any(
            c.kind == "keyref" and c.table == name and c.fields == (PARENT_COLUMN,)
            for c in model.constraints
        )
        if not ours:
            return True
    return False


def dataclass_for(
    model: XsdModel, *, registry: TypeRegistry = default_registry, table: str | None = None
) -> type:
    """The dataclass described by an :class:`XsdModel` (see :func:`read_xsd`); a DataSet of
    several tables, which one class cannot hold, is refused (not cut to its first table).

    ``table`` names the class's table instead of the XSD (its child tables then
    ``<table>_<field>``): rows read with ``Reader(..., table=<the XSD's name>)`` go there."""
    if is_dataset(model):
        names = ", ".join(repr(decode_name(t)) for t in model.tables)
        raise XMLImportError(
            f"the XSD describes a DataSet of {len(model.tables)} tables ({names}), not one "
            "table with its child tables; read_dataset() reads every table (and "
            "`entityworks codegen` writes a class for each)"
        )
    specs = _field_specs(model, model.main_table, registry, skip=0)
    main_name = decode_name(model.main_table)
    for keyref in model.constraints:
        if (
            keyref.kind != "keyref"
            or keyref.table == model.main_table
            or keyref.fields != (PARENT_COLUMN,)
        ):
            continue
        child_name = decode_name(keyref.table)
        if not child_name.startswith(f"{main_name}_"):
            raise XMLImportError(
                f"child table {child_name!r} is not named "
                f"{main_name}_<field>, so no field can hold it"
            )
        field_name = child_name.removeprefix(f"{main_name}_")
        item = _new_class(
            child_name if table is None else f"{table}_{field_name}",
            _field_specs(model, keyref.table, registry, skip=2),
        )
        specs.append(
            (field_name, types.GenericAlias(list, item), dataclasses.field(default_factory=list))
        )
    cls = _new_class(main_name if table is None else table, specs)
    if not model.has_main_table and model.dataset:
        # a DataSet's schema (a DataTable's names its table and writes DocumentElement)
        cls.__dataset__ = model.dataset  # type: ignore[attr-defined]
    return cls


def dataclass_for_table(
    model: XsdModel,
    table: str,
    *,
    registry: TypeRegistry = default_registry,
    extra: Callable[[str], dict[str, Any]] | None = None,
) -> type:
    """The dataclass of one table (encoded name ``table``) of a dataset XSD; ``extra(name)``
    adds field metadata to column ``name`` (a DataSet's ``references``)."""
    return _new_class(decode_name(table), _field_specs(model, table, registry, skip=0, extra=extra))


def _field_specs(
    model: XsdModel,
    table: str,
    registry: TypeRegistry,
    skip: int,
    extra: Callable[[str], dict[str, Any]] | None = None,
) -> list[tuple[str, Any, Any]]:
    xsd_table = model.tables[table]
    keys = [
        c
        for c in model.constraints
        if c.table == table and c.primary_key and c.kind in ("unique", "key")
    ]
    key = set(keys[0].fields) if keys and skip == 0 else set()  # several: a composite key
    specs: list[tuple[str, Any, Any]] = []
    for column in xsd_table.columns[skip:]:
        name = decode_name(column.name)
        problem = unusable_field_name(name)
        if problem is not None:
            raise XMLImportError(
                f"XSD column {name!r} of table {decode_name(table)!r} is not "
                f"a valid Python field name: {problem}",
                column=name,
            )
        try:
            info = registry.for_xsd(column.xsd_type, _dotnet_attributes(model, column))
        except UnsupportedTypeError as exc:
            raise XMLImportError(f"table {table!r}, column {name!r}: {exc}", column=name) from None
        annotation = info.python_type | None if column.nullable else info.python_type
        metadata: dict[str, Any] = {"primary_key": column.name in key}
        if column.max_length is not None and info.python_type is str:
            metadata["max_length"] = column.max_length
        spelling = _spelling(column, info)
        if spelling:
            metadata[XSD_METADATA] = spelling
        if extra is not None:
            metadata.update(extra(name))
        specs.append((name, annotation, dataclasses.field(metadata=metadata)))
    return specs


def _spelling(column: XsdColumn, info: Any) -> dict[str, Any]:
    """What the XSD said that the registry would not write back by itself."""
    out: dict[str, Any] = {}
    if column.xsd_type != info.xsd:
        out["type"] = column.xsd_type
    if column.attributes != info.xsd_attributes:
        out["attributes"] = dict(column.attributes)
    if column.default is not None:
        out["default"] = column.default
    return out


#: .NET DateTime modes whose values carry the writer's local offset.
_LOCAL_MODES = ("UnspecifiedLocal", "Local")


def _dotnet_attributes(model: XsdModel, column: XsdColumn) -> dict[str, str]:
    """The column's ``msdata`` attributes, with .NET's implicit DateTime mode made explicit.

    A .NET DataSet column of DateTime without ``msdata:DateTimeMode`` is in the default
    mode, UnspecifiedLocal: its values are written with the local offset, so they are read
    as aware datetimes (a naive column would refuse every one of them).
    """
    attributes = column.attributes
    if column.xsd_type != "xs:dateTime":
        return attributes
    mode = attributes.get("msdata:DateTimeMode")
    dataset = _dataset_element(model.tree.getroot())
    dotnet = dataset.get(_MSDATA + "IsDataSet") == "true"
    if mode in _LOCAL_MODES or (mode is None and dotnet):
        return {**attributes, "msdata:DateTimeMode": "Utc"}
    return attributes


def _new_class(table: str, specs: list[tuple[str, Any, Any]]) -> type:
    parts = [p for p in re.split(r"[^0-9A-Za-z]+", table) if p]
    class_name = "".join(p[:1].upper() + p[1:] for p in parts) or "Row"
    if not class_name.isidentifier():
        class_name = "T" + class_name
    try:
        cls = dataclasses.make_dataclass(class_name, specs)
    except TypeError as exc:  # duplicate column, keyword as a column name...
        raise XMLImportError(f"XSD table {table!r} cannot be a dataclass: {exc}") from None
    cls.__tablename__ = table  # type: ignore[attr-defined]
    return cls


__all__ = [
    "DEFAULT_DATASET",
    "MAX_COLUMNS",
    "MAX_DATASET_COLUMNS",
    "MAX_TABLES",
    "MAX_XSD_BYTES",
    "XsdColumn",
    "XsdConstraint",
    "XsdModel",
    "XsdTable",
    "ColumnXsd",
    "INT_RANGES",
    "check_limits",
    "column_xsd",
    "check_schema_limits",
    "dataclass_for",
    "dataclass_for_table",
    "dataset_xsd_tree",
    "dataset_name",
    "decode_name",
    "encode_name",
    "is_dataset",
    "load_inline_xsd",
    "load_xsd",
    "model_for",
    "read_inline_xsd",
    "read_xsd",
    "refuse_external_schemas",
    "row_schema",
    "validation_schema",
    "validation_tree",
    "value_check",
    "write_xsd",
    "xsd_bytes",
    "xsd_tree",
]

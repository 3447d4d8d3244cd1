"""Reading XSD in the shape .NET's ``DataTable.WriteXmlSchema`` writes (written by
:mod:`entityworks.xml.xsdwrite`), and building dataclasses from it.

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
import re
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lxml import etree

from ..errors import UnsupportedTypeError, XMLImportError
from ..model.fields import XSD_METADATA
from ..model.names import unusable_field_name
from ..model.schema import PARENT_COLUMN, POSITION_COLUMN
from ..registry import TypeRegistry
from ..registry import registry as default_registry
from .parser import inline_schema, parse_document
from .xsdwrite import (
    MAX_XSD_BYTES,
    MSDATA_NS,
    XML_NS,
    XS_NS,
    check_limits,
    dataset_name,
    decode_name,
    write_xsd,
    xsd_tree,
)

_XS = f"{{{XS_NS}}}"
_MSDATA = f"{{{MSDATA_NS}}}"


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
    if column.xsd_type != info.xml_codec.xsd_type:
        out["type"] = column.xsd_type
    if column.attributes != info.xml_codec.attributes:
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
    "XsdColumn",
    "XsdConstraint",
    "XsdModel",
    "XsdTable",
    "dataclass_for",
    "dataclass_for_table",
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
    "write_xsd",
]

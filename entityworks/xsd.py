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
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lxml import etree

from .errors import SchemaError, UnsupportedTypeError, XMLImportError
from .registry import TypeRegistry
from .registry import registry as default_registry
from .schema import PARENT_COLUMN, POSITION_COLUMN, TableSchema, table_schema

XS_NS = "http://www.w3.org/2001/XMLSchema"
MSDATA_NS = "urn:schemas-microsoft-com:xml-msdata"
XML_NS = "http://www.w3.org/XML/1998/namespace"
_PREFIXES = {"xs": XS_NS, "msdata": MSDATA_NS}
_XS = f"{{{XS_NS}}}"
_MSDATA = f"{{{MSDATA_NS}}}"

#: Name of our dataset wrapper and data root; .NET's ``DataTable.WriteXml`` uses it too.
DEFAULT_DATASET = "DocumentElement"

# XML 1.0 (fifth edition) name characters, without ':' (element names here are NCNames).
_START = ("A-Z_a-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u02ff\u0370-\u037d\u037f-\u1fff"
          "\u200c-\u200d\u2070-\u218f\u2c00-\u2fef\u3001-\ud7ff\uf900-\ufdcf\ufdf0-\ufffd"
          "\U00010000-\U000effff")
_NAME_START = re.compile(f"[{_START}]")
_NAME_CHAR = re.compile(f"[{_START}\\-.0-9\u00b7\u0300-\u036f\u203f-\u2040]")
_ESCAPE_LIKE = re.compile(r"_x[0-9A-Fa-f]{4}_")
_ENCODED = re.compile(r"_x([0-9A-Fa-f]{4}|[0-9A-Fa-f]{8})_")


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
    """Inverse of :func:`encode_name`."""
    return _ENCODED.sub(lambda m: chr(int(m.group(1), 16)), name)


# -- writing ---------------------------------------------------------------------------------

def _qualified(attribute: str) -> str:
    prefix, _, local = attribute.partition(":")
    return f"{{{_PREFIXES[prefix]}}}{local}" if local else attribute


def _xs(parent: etree._Element, tag: str, **attrs: str) -> etree._Element:
    return etree.SubElement(parent, _XS + tag, {k: v for k, v in attrs.items()})


def _row_element(choice: etree._Element, schema: TableSchema) -> None:
    row = _xs(choice, "element", name=encode_name(schema.name))
    sequence = _xs(_xs(row, "complexType"), "sequence")
    for c in schema.columns:
        col = _xs(sequence, "element", name=encode_name(c.name))
        for key, value in c.info.xsd_attributes.items():
            col.set(_qualified(key), value)
        col.set("type", c.info.xsd)
        if c.nullable:
            col.set("minOccurs", "0")


def _unique(dataset: etree._Element, name: str, table: str, fields: list[str],
            constraint_name: str | None = None) -> None:
    unique = _xs(dataset, "unique", name=name)
    if constraint_name:
        unique.set(_MSDATA + "ConstraintName", constraint_name)
    unique.set(_MSDATA + "PrimaryKey", "true")
    _xs(unique, "selector", xpath=f".//{encode_name(table)}")
    for f in fields:
        _xs(unique, "field", xpath=encode_name(f))


def xsd_tree(cls: type, *, dataset: str = DEFAULT_DATASET,
             registry: TypeRegistry = default_registry) -> etree._ElementTree:
    """The XSD document for ``cls`` (and its child tables) as an lxml tree."""
    schema = table_schema(cls, registry)
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
    if schema.primary_key is not None:
        _unique(wrapper, "Constraint1", schema.name, [schema.primary_key.name])
    for child in schema.children:
        child_name = child.schema.name
        _unique(wrapper, f"{child_name}_Constraint1", child_name,
                [PARENT_COLUMN, POSITION_COLUMN], constraint_name="Constraint1")
        keyref = _xs(wrapper, "keyref", name=f"FK_{schema.name}_{child_name}",
                     refer="Constraint1")
        _xs(keyref, "selector", xpath=f".//{encode_name(child_name)}")
        _xs(keyref, "field", xpath=PARENT_COLUMN)
    return etree.ElementTree(root)


def xsd_bytes(cls: type, *, dataset: str = DEFAULT_DATASET,
              registry: TypeRegistry = default_registry) -> bytes:
    """The XSD document for ``cls``, serialised as UTF-8."""
    return etree.tostring(xsd_tree(cls, dataset=dataset, registry=registry),
                          xml_declaration=True, encoding="utf-8", standalone=True,
                          pretty_print=True)


def write_xsd(cls: type, xsd_path: str | Path, *, dataset: str = DEFAULT_DATASET,
              registry: TypeRegistry = default_registry) -> Path:
    """Write the XSD of ``cls`` in the .NET DataTable shape; returns the path."""
    path = Path(xsd_path)
    path.write_bytes(xsd_bytes(cls, dataset=dataset, registry=registry))
    return path


# -- reading ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class XsdColumn:
    """A column element of a row: its (encoded) name, XSD type and ``msdata:*`` attributes."""

    name: str
    xsd_type: str
    nullable: bool
    attributes: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class XsdTable:
    name: str
    columns: tuple[XsdColumn, ...]


@dataclass(frozen=True)
class XsdConstraint:
    """An ``xs:unique`` / ``xs:key`` / ``xs:keyref`` over columns of one table."""

    kind: str
    name: str
    table: str
    fields: tuple[str, ...]
    refer: str | None = None
    primary_key: bool = False


@dataclass(frozen=True)
class XsdModel:
    """What the reader needs from a dataset XSD (ours or one written by .NET)."""

    dataset: str
    main_table: str
    tables: dict[str, XsdTable]
    constraints: tuple[XsdConstraint, ...]
    tree: etree._ElementTree = dataclasses.field(repr=False, compare=False)


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
    if qname is None:  # .NET writes <xs:simpleType><xs:restriction base=...> for MaxLength
        restriction = element.find(f"{_XS}simpleType/{_XS}restriction")
        if restriction is None or restriction.get("base") is None:
            raise XMLImportError(f"XSD column {name!r} has no simple type")
        qname = restriction.get("base")
    attributes = {f"msdata:{etree.QName(k).localname}": v for k, v in element.attrib.items()
                  if k.startswith(_MSDATA)}
    return XsdColumn(name, _xs_type(element, qname), element.get("minOccurs") == "0",
                     attributes)


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
    raise XMLImportError("the XSD has no dataset element (msdata:IsDataSet=\"true\")")


def _selector_table(xpath: str) -> str:
    return _local(xpath.strip().removeprefix(".//").removeprefix("./"))


def parse_xsd_tree(tree: etree._ElementTree) -> XsdModel:
    """Read the tables, columns and constraints of a dataset XSD."""
    dataset = _dataset_element(tree.getroot())
    choice = dataset.find(f"{_XS}complexType/{_XS}choice")
    if choice is None:
        choice = dataset.find(f"{_XS}complexType/{_XS}sequence")
    if choice is None:
        raise XMLImportError("the dataset element of the XSD has no xs:choice of tables")
    tables: dict[str, XsdTable] = {}
    for row in choice.findall(_XS + "element"):
        name = row.get("name") or _local(row.get("ref", ""))
        complex_type = row.find(_XS + "complexType")
        if complex_type is None:
            raise XMLImportError(f"XSD table {name!r} has no inline complexType")
        if complex_type.find(_XS + "attribute") is not None:
            raise XMLImportError(f"XSD table {name!r} maps columns to attributes, which is "
                                 "not supported")
        sequence = complex_type.find(_XS + "sequence")
        columns = () if sequence is None else tuple(
            _column(e) for e in sequence.findall(_XS + "element"))
        tables[name] = XsdTable(name, columns)
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
        constraints.append(XsdConstraint(
            kind, element.get("name", ""), _selector_table(selector.get("xpath", "")), fields,
            _local(element.get("refer", "")) or None,
            element.get(_MSDATA + "PrimaryKey") == "true"))
    main = _local(dataset.get(_MSDATA + "MainDataTable", "")) or next(iter(tables))
    if main not in tables:
        raise XMLImportError(f"msdata:MainDataTable {main!r} is not a table of the XSD")
    return XsdModel(dataset.get("name", ""), main, tables, tuple(constraints), tree)


def load_xsd(xsd_path: str | Path) -> XsdModel:
    """Parse an XSD file with the hardened parser and read its dataset shape."""
    from .xmlio import parse_document

    return parse_xsd_tree(parse_document(xsd_path, what="XSD"))


def model_for(cls: type, *, dataset: str = DEFAULT_DATASET,
              registry: TypeRegistry = default_registry) -> XsdModel:
    """The :class:`XsdModel` of our own XSD for ``cls`` (no file involved)."""
    return parse_xsd_tree(xsd_tree(cls, dataset=dataset, registry=registry))


# .NET keeps xs:date and xs:time columns in DateTime and writes them back as full dateTime
# values (against its own schema); the registry's decoders accept both forms.
_WIDENED = {"ew_date_or_dateTime": "xs:date xs:dateTime",
            "ew_time_or_dateTime": "xs:time xs:dateTime"}


def validation_tree(model: XsdModel, root_name: str) -> etree._ElementTree:
    """The schema document :func:`validation_schema` compiles (see the module docstring)."""
    """A validator for documents whose root is ``root_name`` (see the module docstring)."""
    tree = copy.deepcopy(model.tree)
    root = tree.getroot()
    for node in root.iter(_XS + "import", _XS + "include", _XS + "redefine", _XS + "override"):
        raise XMLImportError(f"the XSD refers to another schema ({node.get('schemaLocation')!r}"
                             "); only self-contained schemas are read")
    dataset = _dataset_element(root)
    dataset.set("name", root_name)
    for constraint in dataset.findall(_XS + "unique") + dataset.findall(_XS + "key") + \
            dataset.findall(_XS + "keyref"):
        dataset.remove(constraint)
    for name, members in _WIDENED.items():
        etree.SubElement(etree.SubElement(root, _XS + "simpleType", name=name),
                         _XS + "union", memberTypes=members)
    for column in dataset.iterfind(f".//{_XS}sequence/{_XS}element[@type]"):
        base = column.attrib.pop("type")
        if _xs_type(column, base) in ("xs:date", "xs:time"):
            base = f"ew_{_local(base)}_or_dateTime"
        extension = etree.SubElement(
            etree.SubElement(etree.SubElement(column, _XS + "complexType"),
                             _XS + "simpleContent"), _XS + "extension", base=base)
        etree.SubElement(extension, _XS + "anyAttribute", namespace=XML_NS,
                         processContents="skip")
    return tree


def validation_schema(model: XsdModel, root_name: str) -> etree.XMLSchema:
    """A validator for documents whose root is ``root_name`` (see the module docstring)."""
    return _compile(validation_tree(model, root_name))


def row_schema(model: XsdModel, root_name: str) -> etree.XMLSchema:
    """A validator for single row elements, used to locate the row a document error is in."""
    tree = validation_tree(model, root_name)
    root = tree.getroot()
    for row in _dataset_element(root).iterfind(f"{_XS}complexType/{_XS}choice/{_XS}element"):
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


def dataclass_for(model: XsdModel, *, registry: TypeRegistry = default_registry) -> type:
    """The dataclass described by an :class:`XsdModel` (see :func:`read_xsd`)."""
    specs = _field_specs(model, model.main_table, registry, skip=0)
    main_name = decode_name(model.main_table)
    for keyref in model.constraints:
        if (keyref.kind != "keyref" or keyref.table == model.main_table
                or keyref.fields != (PARENT_COLUMN,)):
            continue
        child_name = decode_name(keyref.table)
        if not child_name.startswith(f"{main_name}_"):
            raise XMLImportError(f"child table {child_name!r} is not named "
                                 f"{main_name}_<field>, so no field can hold it")
        item = _new_class(child_name, _field_specs(model, keyref.table, registry, skip=2))
        specs.append((child_name.removeprefix(f"{main_name}_"), list[item],
                      dataclasses.field(default_factory=list)))
    return _new_class(main_name, specs)


def _field_specs(model: XsdModel, table: str, registry: TypeRegistry, skip: int
                 ) -> list[tuple[str, Any, Any]]:
    xsd_table = model.tables[table]
    keys = [c for c in model.constraints if c.table == table and c.primary_key
            and c.kind in ("unique", "key") and len(c.fields) == 1]
    key = keys[0].fields[0] if keys and skip == 0 else None
    specs: list[tuple[str, Any, Any]] = []
    for column in xsd_table.columns[skip:]:
        name = decode_name(column.name)
        if not name.isidentifier():
            raise XMLImportError(f"XSD column {name!r} of table {table!r} is not a valid "
                                 "Python field name", column=name)
        try:
            info = registry.for_xsd(column.xsd_type, column.attributes)
        except UnsupportedTypeError as exc:
            raise XMLImportError(f"table {table!r}, column {name!r}: {exc}",
                                 column=name) from None
        annotation = info.python_type | None if column.nullable else info.python_type
        specs.append((name, annotation,
                      dataclasses.field(metadata={"primary_key": column.name == key})))
    return specs


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
    "XsdColumn",
    "XsdConstraint",
    "XsdModel",
    "XsdTable",
    "dataclass_for",
    "decode_name",
    "encode_name",
    "load_xsd",
    "model_for",
    "read_xsd",
    "row_schema",
    "validation_schema",
    "validation_tree",
    "write_xsd",
    "xsd_bytes",
    "xsd_tree",
]

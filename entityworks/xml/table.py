"""XML data in the .NET ``DataTable.WriteXml`` shape: streaming export and validated import.

Export writes the document frame (declaration, dataset root) with ``lxml.etree.xmlfile`` and
the rows as text produced column by column from the registry's ``to_text``: building an lxml
element per value would cost several times more than the whole format step. Every value is
checked on the way out (type, characters XML 1.0 cannot hold), so a file we write can always
be read back; the file appears under its name only once it is complete.

Import never trusts the document: a hardened parser (no DTD, no entities, no network, no
huge nodes, compressed input refused) feeds ``iterparse`` with XSD validation switched on,
and rows are decoded through the registry as they stream by. Errors name the row (1-based,
counting row elements in document order), the line and the column.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
import secrets
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack, closing
from itertools import starmap
from operator import attrgetter, call
from pathlib import Path
from typing import Any, BinaryIO, TypeVar, get_args, get_origin

import sqlalchemy as sa
from lxml import etree

from .._gcpause import paused_gc
from ..errors import EntityworksError, SchemaError, ValueEncodingError, WriteError, XMLImportError
from ..files import atomic_output, check_output_path, write_bytes
from ..model.schema import TableSchema, instance_builder, refuse_nested_children, table_schema
from ..registry import INT64_MAX, INT64_MIN, TypeRegistry, encode_error
from ..registry import registry as default_registry
from ..sql import logical
from ..sql.ddllock import LOCK_SECONDS, schema_lock
from .parser import (
    DIFFGRAM_NS,
    DIFFGRAM_ROOT,
    SAFE_OPTIONS,
    STREAM_OPTIONS,
    RefuseResolver,
    hardened_parser,
    parse_document,
    refuse_doctype,
)
from .parser import (
    root_name as document_root,
)
from .xsd import (
    XsdModel,
    check_schema_limits,
    column_xsd,
    dataset_name,
    decode_name,
    encode_name,
    load_inline_xsd,
    load_xsd,
    model_for,
    row_schema,
    validation_schema,
    value_check,
    xsd_bytes,
    xsd_tree,
)

T = TypeVar("T")
BATCH = 5_000

# -- export ------------------------------------------------------------------------------------

# Characters XML 1.0 cannot represent at all (not even as character references).
_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
_NEEDS_WORK = re.compile("[&<>\r\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _escape(text: str) -> str:
    bad = _XML_INVALID.search(text)
    if bad:
        raise ValueError(f"contains U+{ord(bad.group()):04X} at index {bad.start()}, which "
                         "XML 1.0 cannot hold (not even escaped)")
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace("\r", "&#13;"))


def _runtime_class(python_type: Any) -> Any:
    if get_origin(python_type) is not None and get_args(python_type):
        origin = get_origin(python_type)
        if origin.__module__ == "typing":  # Annotated[X, ...]
            return _runtime_class(get_args(python_type)[0])
        return origin
    return python_type


class _RowFormatter:
    """Turns batches of column tuples of one table into row elements (text)."""

    def __init__(self, schema: TableSchema) -> None:
        self.schema = schema
        self.names = schema.column_names
        tag = encode_name(schema.name)
        parts = [f"<{tag}>"]
        self.encoders: list[Callable[[Sequence[Any], int], list[str]]] = []
        for c in schema.columns:
            ctag = encode_name(c.name)
            inline = c.info.plain_text and not c.nullable
            parts.append(f"<{ctag}>%s</{ctag}>" if inline else "%s")
            extra = value_check(column_xsd(schema, c), c.info.python_type)
            self.encoders.append(self._encoder(c.name, ctag, c.info, c.nullable, inline,
                                               extra))
        self.open_template = "".join(parts)
        self.close = f"</{tag}>\n"
        parts.append(self.close)  # a row per line: error lines then name rows
        self.template = "".join(parts)

    def _encoder(self, name: str, tag: str, info: Any, nullable: bool, inline: bool,
                 extra: Callable[[Any], None] | None = None
                 ) -> Callable[[Sequence[Any], int], list[str]]:
        cls = _runtime_class(info.python_type)
        allowed = {cls} | ({type(None)} if nullable else set()) | ({int} if cls is float else set())
        to_text = info.to_text
        plain = info.plain_text
        open_tag, close_tag = f"<{tag}>", f"</{tag}>"
        preserve = f'<{tag} xml:space="preserve">'

        def element(value: Any) -> str:
            if value is None:
                return ""
            text: str = to_text(value)
            if plain:
                return open_tag + text + close_tag
            if text and not text.strip(" \t\n\r"):  # whitespace only: .NET would drop it
                return preserve + _escape(text) + close_tag
            if _NEEDS_WORK.search(text):
                text = _escape(text)
            return open_tag + text + close_tag

        one = to_text if inline else element
        if extra is not None:  # a narrower XSD type than the registry's (from .NET)
            unchecked = one

            def one(value: Any) -> str:
                if value is not None:
                    extra(value)
                return unchecked(value)

        rule = info.checked  # the registry's rule, as in the Store and frames

        def check(value: Any) -> Any:
            if value is None:
                if not nullable:
                    raise ValueError("None in a column that is not Optional")
                return None
            return rule(value)

        def encode(values: Sequence[Any], first: int) -> list[str]:
            try:
                if not set(map(type, values)) <= allowed:
                    raise TypeError
                if cls is int and values and not (INT64_MIN <= min(values)
                                                  and max(values) <= INT64_MAX):
                    raise TypeError  # xs:long's range, which import validates
                return list(map(one, values))
            except Exception:
                out = []
                for i, value in enumerate(values):  # the rule per value: convert or refuse
                    try:
                        out.append(one(check(value)))
                    except Exception as exc:
                        raise encode_error(name, value, exc, first + i) from None
                return out
        return encode

    def open_rows(self, rows: Sequence[Sequence[Any]], first: int) -> list[str]:
        """Each row's element without its end tag (:attr:`close`), for nested rows."""
        if not rows:
            return []
        columns = list(zip(*rows, strict=True))
        texts = [enc(col, first) for enc, col in zip(self.encoders, columns, strict=True)]
        return list(map(self.open_template.__mod__, zip(*texts, strict=True)))

    def format(self, rows: Sequence[Sequence[Any]], first: int) -> str:
        """Row elements for ``rows``; ``first`` is the index of rows[0] for error messages."""
        if not rows:
            return ""
        columns = list(zip(*rows, strict=True))
        texts = [enc(col, first) for enc, col in zip(self.encoders, columns, strict=True)]
        return "".join(map(self.template.__mod__, zip(*texts, strict=True)))


class _Writer:
    """Formats instances (and their child rows) of one dataclass."""

    def __init__(self, schema: TableSchema) -> None:
        self.schema = schema
        self.parent = _RowFormatter(schema)
        fields = [c.name for c in schema.field_columns]
        self.getter = _tuple_getter(fields)
        self.children = [(child.field, _RowFormatter(child.schema),
                          _tuple_getter([c.name for c in child.schema.field_columns]))
                         for child in schema.children]
        self.child_counts = [0] * len(self.children)

    def objects(self, objs: Sequence[Any], first: int) -> str:
        text = self.parent.format(list(map(self.getter, objs)), first)
        if not self.children:
            return text
        parts = [text]
        key = self.schema.require_key("an XML export with child rows").name
        for n, (fname, formatter, getter) in enumerate(self.children):
            rows = []
            for i, obj in enumerate(objs):
                parent_key = getattr(obj, key)
                items = getattr(obj, fname)
                if items and parent_key is None:
                    raise ValueEncodingError(
                        f"row {first + i}, column {key!r}: the key is None, so its "
                        f"{fname} rows could not refer to it", column=key, row=first + i)
                for position, item in enumerate(items or ()):
                    rows.append((parent_key, position, *getter(item)))
            try:
                parts.append(formatter.format(rows, self.child_counts[n]))
            except ValueEncodingError as exc:
                raise _owner_error(exc, objs, fname, first, self.child_counts[n]) from exc
            self.child_counts[n] += len(rows)
        return "".join(parts)


_ROW_PREFIX = re.compile(r"row \d+, column '[^']*': ")


def _owner_error(exc: ValueEncodingError, objs: Sequence[Any], fname: str, first: int,
                 numbered_from: int) -> ValueEncodingError:
    """A child item's error, told by the row that owns the item (the child rows are numbered
    on their own while they are formatted): found again only when there is an error."""
    if exc.row is None:
        return exc
    left = exc.row - numbered_from
    for i, obj in enumerate(objs):
        items = getattr(obj, fname) or ()
        if left < len(items):
            detail = _ROW_PREFIX.sub("", str(exc), count=1)
            return ValueEncodingError(
                f"row {first + i}, column {exc.column!r} of {fname}[{left}]: {detail}",
                column=exc.column, row=first + i, value=exc.value)
        left -= len(items)
    return exc


def _tuple_getter(names: list[str]) -> Callable[[Any], tuple[Any, ...]]:
    if not names:
        return lambda _obj: ()
    if len(names) == 1:
        single = attrgetter(names[0])
        return lambda obj: (single(obj),)
    return attrgetter(*names)


#: Where a document goes: a path (written whole or not at all) or an open binary stream.
Target = str | os.PathLike[str] | BinaryIO


_DIFFGRAM_NSMAP = {"msdata": "urn:schemas-microsoft-com:xml-msdata", "diffgr": DIFFGRAM_NS}


def _stream_document(f: BinaryIO, chunks: Iterable[str], dataset: str,
                     inline: Callable[[], etree._Element] | None = None,
                     diffgram: bool = False) -> None:
    """Stream ``chunks`` of row elements into ``f`` inside the dataset root element, after
    the ``inline`` schema if one is given (inside ``diffgr:diffgram`` for a DiffGram)."""
    with etree.xmlfile(f, encoding="utf-8") as xf, ExitStack() as frame:
        xf.write_declaration(standalone=True)
        if diffgram:
            frame.enter_context(xf.element(DIFFGRAM_ROOT, nsmap=_DIFFGRAM_NSMAP))
            xf.write("\n")
        with xf.element(encode_name(dataset)):
            xf.write("\n")
            if inline is not None:
                xf.write(inline())
                xf.write("\n")
            for chunk in chunks:
                if chunk:
                    xf.flush()  # keep lxml's buffered output ahead of our rows
                    f.write(chunk.encode("utf-8"))
            xf.flush()


def _write_document(target: Target, chunks: Iterable[str], dataset: str,
                    xsd: tuple[str | os.PathLike[str], Callable[[], bytes]] | None = None,
                    inline: Callable[[], etree._Element] | None = None,
                    diffgram: bool = False) -> None:
    """Write the document (and the XSD ``(path, content)``), each whole or not at all.

    Both paths are checked (regular file or nothing) before the first row is formatted;
    on any error neither file changes. A stream target gets the rows as they come.
    """
    if hasattr(target, "write"):
        if xsd is not None:
            check_output_path(xsd[0])
        _stream_document(target, chunks, dataset, inline,  # type: ignore[arg-type]
                         diffgram)
        if xsd is not None:
            write_bytes(xsd[0], xsd[1]())
        return
    with ExitStack() as stack:
        xsd_file = stack.enter_context(atomic_output(xsd[0])) if xsd is not None else None
        f = stack.enter_context(atomic_output(target))
        _stream_document(f, chunks, dataset, inline, diffgram)
        if xsd_file is not None:
            xsd_file.write(xsd[1]())  # type: ignore[index]


def _chunks(objs: Iterable[Any], size: int) -> Iterator[list[Any]]:
    if isinstance(objs, list):
        for start in range(0, len(objs), size):
            yield objs[start:start + size]
        return
    batch: list[Any] = []
    for obj in objs:
        batch.append(obj)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def write_xml(cls: type, rows: Iterable[Any], xml_path: Target,
              xsd_path: str | Path | None = None, *, dataset: str | None = None,
              registry: TypeRegistry = default_registry, inline_schema: bool = False) -> int:
    """Write instances of ``cls`` as XML in the .NET DataTable shape; returns the row count.

    ``rows`` may be any iterable (it is consumed in batches). With ``xsd_path`` the matching
    XSD is written too. A value XML cannot hold raises :class:`ValueEncodingError` naming
    the row index and column, and no file is left behind. Only regular files are written
    (:class:`OutputPathError` for a device, FIFO, directory or link); ``xml_path`` may also
    be an open binary stream. ``inline_schema`` puts the XSD inside the document, before
    the rows, as .NET's ``WriteXml(..., XmlWriteMode.WriteSchema)`` does.
    """
    schema = table_schema(cls, registry)
    check_schema_limits(schema)
    dataset = dataset_name(cls, dataset)
    writer = _Writer(schema)
    count = 0

    def chunks() -> Iterator[str]:
        nonlocal count
        for batch in _chunks(rows, BATCH):
            if set(map(type, batch)) != {cls}:
                bad = next(i for i, o in enumerate(batch) if type(o) is not cls)
                raise ValueEncodingError(f"row {count + bad} is a "
                                         f"{type(batch[bad]).__qualname__}, not a "
                                         f"{cls.__qualname__}", row=count + bad)
            yield writer.objects(batch, count)
            count += len(batch)

    xsd = None if xsd_path is None else (
        xsd_path, lambda: xsd_bytes(cls, dataset=dataset, registry=registry))
    inline = (lambda: xsd_tree(cls, dataset=dataset, registry=registry).getroot()
              ) if inline_schema else None
    with paused_gc():
        _write_document(xml_path, chunks(), dataset, xsd, inline)
    return count


def write_xml_rows(schema: TableSchema, batches: Iterable[Sequence[Sequence[Any]]],
                   xml_path: Target, xsd_path: str | Path | None = None, *,
                   dataset: str | None = None,
                   registry: TypeRegistry = default_registry,
                   inline_schema: bool = False) -> int:
    """Write batches of column tuples (table column order) of a table without children."""
    check_schema_limits(schema)
    dataset = dataset_name(schema.cls, dataset)
    formatter = _RowFormatter(schema)
    count = 0

    def chunks() -> Iterator[str]:
        nonlocal count
        for batch in batches:
            yield formatter.format(batch, count)
            count += len(batch)

    xsd = None if xsd_path is None else (
        xsd_path, lambda: xsd_bytes(schema.cls, dataset=dataset, registry=registry))
    inline = (lambda: xsd_tree(schema.cls, dataset=dataset, registry=registry).getroot()
              ) if inline_schema else None
    with paused_gc():
        _write_document(xml_path, chunks(), dataset, xsd, inline)
    return count


# -- import ------------------------------------------------------------------------------------

@dataclasses.dataclass
class _TablePlan:
    """How to decode the row elements of one table into column tuples (table column order)."""

    schema: TableSchema
    tag: str
    width: int
    index: dict[str, int]
    decoders: list[Callable[[str | None], Any]]    # by column index
    in_order: list[Callable[[str | None], Any]] | None   # by position, when XSD order == ours
    required: list[int]
    constraints: list[tuple[str, str, list[int], str | None]]  # kind, name, columns, refer


def _empty_as_text(decode: Callable[[str], Any]) -> Callable[[str | None], Any]:
    """lxml gives ``None`` for an empty element; decoders expect the empty string.

    ``int`` and ``float`` reject ``None`` themselves, which is the right answer for them.
    """
    if decode is int or decode is float:
        return decode  # type: ignore[return-value]  # int(None) and float(None) refuse None
    return lambda text: decode("" if text is None else text)


def _plan(schema: TableSchema, model: XsdModel, tag: str) -> _TablePlan:
    xsd_table = model.tables[tag]
    names = schema.column_names
    index: dict[str, int] = {}
    decoders: list[Callable[[str | None], Any] | None] = [None] * len(names)
    for column in xsd_table.columns:
        name = decode_name(column.name)
        if name not in names:
            raise XMLImportError(f"the XSD's table {tag!r} has a column {name!r} that "
                                 f"{schema.cls.__qualname__} has no field for", column=name)
        i = names.index(name)
        index[column.name] = i
        info = schema.columns[i].info
        fast = info.from_valid_text is not None and (
            column.xsd_type == info.xsd or column.xsd_type in info.xsd_aliases)
        decoders[i] = _empty_as_text(
            info.from_valid_text if fast else info.from_text)  # type: ignore[arg-type]  # fast: set
    missing = [c.name for c in schema.columns
               if encode_name(c.name) not in index and not c.nullable]
    if missing:
        raise XMLImportError(f"the XSD's table {tag!r} lacks the column {missing[0]!r}, which "
                             f"{schema.cls.__qualname__} requires", column=missing[0])
    nullable_in_xsd = {c.name for c in xsd_table.columns if c.nullable}
    required = [i for name, i in index.items()
                if not schema.columns[i].nullable and name in nullable_in_xsd]
    order = [index[c.name] for c in xsd_table.columns]
    in_order = ([d for d in decoders if d is not None]
                if order == list(range(len(names))) else None)
    constraints = []
    for c in model.constraints:
        if c.table != tag:
            continue
        cols = []
        for f in c.fields:
            if f not in index:
                raise XMLImportError(f"XSD constraint {c.name!r} uses column {f!r}, which "
                                     f"table {tag!r} does not have")
            cols.append(index[f])
        constraints.append((c.kind, c.name, cols, c.refer))
    return _TablePlan(schema, tag, len(names), index,
                      [d or (lambda t: None) for d in decoders], in_order, required,
                      constraints)


def _plans(schema: TableSchema, model: XsdModel) -> list[_TablePlan]:
    refuse_nested_children(schema, "XML and XSD")
    tag = encode_name(schema.name)
    if model.main_table != tag:
        raise XMLImportError(f"the XSD describes table {decode_name(model.main_table)!r}, not "
                             f"{schema.name!r} ({schema.cls.__qualname__})")
    plans = [_plan(schema, model, tag)]
    for child in schema.children:
        child_tag = encode_name(child.schema.name)
        if child_tag in model.tables:
            plans.append(_plan(child.schema, model, child_tag))
    unknown = set(model.tables) - {p.tag for p in plans}
    if unknown:
        raise XMLImportError(f"the XSD declares table {sorted(unknown)[0]!r}, which "
                             f"{schema.cls.__qualname__} does not hold")
    if len(plans) > 1:
        _require_relations(schema, plans)
    return plans


def _require_relations(schema: TableSchema, plans: list[_TablePlan]) -> None:
    """Child rows must point at exactly one parent, whatever the XSD declares.

    A schema may lack the parent's key constraint or the child's keyref (a hand-written
    one, or .NET's for a table without a relation): the checks the class needs are then
    added here, so that an orphan or a duplicate is refused with its row like any other.
    Added names hold a space, which no XSD constraint name can.
    """
    parent = plans[0]
    key = parent.schema.column_names.index(schema.require_key("child rows").name)
    refer = next((name for kind, name, cols, _ in parent.constraints
                  if kind in ("unique", "key") and cols == [key]), None)
    if refer is None:
        refer = f"key of {parent.tag}"
        parent.constraints.append(("key", refer, [key], None))
    for plan in plans[1:]:
        kinds = {(kind, tuple(cols)) for kind, _, cols, _ in plan.constraints}
        if ("keyref", (0,)) not in kinds:
            plan.constraints.append(("keyref", f"parent of {plan.tag}", [0], refer))
        if not kinds & {("unique", (0, 1)), ("key", (0, 1))}:
            plan.constraints.append(("unique", f"position in {plan.tag}", [0, 1], None))


@dataclasses.dataclass(frozen=True)
class _NestedLink:
    """How a nested table's rows refer to the row element they sit in."""

    column: int  # the child's referring column (table column order)
    child_column: str  # its XSD name
    parent: str  # the parent table's tag
    parent_key: str  # the tag of the parent's key column
    decode: Callable[[str | None], Any]  # the parent plan's decoder of that column


def _nested_links(model: XsdModel, by_tag: dict[str, _TablePlan]) -> dict[str, _NestedLink]:
    """The single-column nested relations (``msdata:IsNested`` keyrefs) between read tables,
    by child tag."""
    keys = {c.name: c for c in model.constraints if c.kind in ("unique", "key")}
    links = {}
    for ref in model.constraints:
        target = keys.get(ref.refer or "")
        if (ref.kind != "keyref" or not ref.nested or target is None or len(ref.fields) != 1
                or len(target.fields) != 1):
            continue
        child, parent = by_tag.get(ref.table), by_tag.get(target.table)
        if (child is None or parent is None or model.tables[ref.table].nested_in != target.table
                or ref.fields[0] not in child.index or target.fields[0] not in parent.index):
            continue
        links[ref.table] = _NestedLink(child.index[ref.fields[0]], ref.fields[0], target.table,
                                       target.fields[0],
                                       parent.decoders[parent.index[target.fields[0]]])
    return links


_XINCLUDE = "http://www.w3.org/2001/XInclude"
_XS_SCHEMA = "{http://www.w3.org/2001/XMLSchema}schema"
_ELEMENT = re.compile(r"Element '([^']+)'")
_EXPECTED = re.compile(r"Expected is (?:one of )?\( ?([^ ,)]+)")


class _Reader:
    """Streams one XML file into batches of decoded column tuples, per table."""

    def __init__(self, schema: TableSchema, xml_path: str | Path,
                 xsd_path: str | Path | None, batch: int = BATCH, *,
                 model: XsdModel | None = None,
                 plans: Callable[[XsdModel], list[_TablePlan]] | None = None) -> None:
        self.path: Path = Path(xml_path)
        self.schema = schema
        self.batch = batch
        root = document_root(self.path)
        if model is not None:
            pass
        elif xsd_path is None:  # the document's own inline schema, else the class's
            model = load_inline_xsd(self.path) or model_for(schema.cls, dataset=root)
        else:
            model = load_xsd(xsd_path)
        self.model: XsdModel = model
        self.root_name: str = root
        self.plans: list[_TablePlan] = plans(model) if plans is not None else _plans(schema, model)
        #: Row elements that sit inside other rows (a nested relation's child table).
        self.nested: set[str] = {p.tag for p in self.plans if model.tables[p.tag].nested_in}
        self.by_tag: dict[str, _TablePlan] = {p.tag: p for p in self.plans}
        self.links: dict[str, _NestedLink] = _nested_links(model, self.by_tag)
        #: The document row numbers of the rows :meth:`batches` yielded last.
        self.numbers: list[int] = []
        self.validator: etree.XMLSchema = validation_schema(model, root)
        self.rows_validator: etree.XMLSchema | None = None
        self.seen: dict[str, set[Any]] = {}
        self.references: list[tuple[str | None, Any, int, str]] = []
        self.row: int = 0
        self.line: int | None = None

    def error(self, message: str, column: str | None = None) -> XMLImportError:
        where = f"row {self.row}" + (f" (line {self.line})" if self.line else "")
        col = f", column {decode_name(column)!r}" if column else ""
        return XMLImportError(f"{self.path.name}: {where}{col}: {message.rstrip('.')}; "
                              "nothing was imported", row=self.row, column=decode_name(column)
                              if column else None)

    def batches(self) -> Iterator[tuple[_TablePlan, list[tuple[Any, ...]]]]:
        """Yield ``(plan, rows)`` batches; constraints are checked batch by batch.

        Each call reads the document again from the start (the schema stays compiled).
        """
        self.seen, self.references, self.row, self.line = {}, [], 0, None
        pending: dict[str, tuple[list[tuple[Any, ...]], list[int]]] = {
            p.tag: ([], []) for p in self.plans}
        by_tag, root_name, batch, nested = self.by_tag, self.root_name, self.batch, self.nested
        text_of = attrgetter("text")
        element: Any = None
        plan: _TablePlan | None = None
        n = 0
        with open(self.path, "rb") as f:
            events = etree.iterparse(f, events=("end",), tag=[*by_tag, root_name],
                                     schema=self.validator, **STREAM_OPTIONS)
            events.resolvers.add(RefuseResolver())
            root = None
            complete = False
            try:
                for _, element in events:
                    tag = element.tag
                    if tag == root_name and element.getparent() is None:
                        complete = True
                        continue
                    parent = element.getparent()
                    # (rows freed from the root below leave the next ones without a parent)
                    if parent is not None and parent.getparent() is not None and not (
                            tag in self.links and parent.tag == self.links[tag].parent):
                        continue  # a column named like a table: the row around it reads it
                    n += 1
                    if root is None:
                        root = element.getroottree().getroot()
                        refuse_doctype(element.getroottree(), self.path, "XML file")
                    plan = by_tag[tag]
                    fast = plan.in_order
                    if fast is not None and len(element) == plan.width:
                        values = tuple(map(call, fast, map(text_of, element)))
                    else:
                        values = self._decode_slow(plan, element, n)
                    if nested and tag in self.links:
                        values = self._from_parent(self.links[tag], element, values, n)
                    rows, numbers = pending[tag]
                    rows.append(values)
                    numbers.append(n)
                    element.clear()
                    if nested and tag in nested:  # out of its parent row, which is not done
                        element.getparent().remove(element)
                    elif not n % 1000:
                        del root[:]  # rows handled so far: free them
                    if len(rows) >= batch:
                        self._check(plan, rows, numbers)
                        self.numbers = numbers
                        yield plan, rows
                        pending[tag] = ([], [])
            except etree.XMLSyntaxError as exc:
                raise self._parse_error(exc) from None
            except XMLImportError:
                raise
            except Exception as exc:  # a decoder refused a value: find which one
                assert plan is not None
                raise self._decode_error(plan, element, n, exc) from None
        if not complete:
            raise XMLImportError(f"{self.path.name}: the document ends before its root element "
                                 f"is closed (truncated after row {n}); nothing was "
                                 "imported", row=n + 1)
        if root is None:  # no rows: still refuse a DOCTYPE and check the root was valid
            document_root(self.path)
        for plan in self.plans:
            rows, numbers = pending[plan.tag]
            self._check(plan, rows, numbers)
        self._check_references()
        for plan in self.plans:
            if pending[plan.tag][0]:
                self.numbers = pending[plan.tag][1]
                yield plan, pending[plan.tag][0]

    def _from_parent(self, link: _NestedLink, element: etree._Element,
                     values: tuple[Any, ...], n: int) -> tuple[Any, ...]:
        """A nested row's reference to its parent, as .NET's ``ReadXml`` sets it: the key of
        the row element it sits in, whatever the row's own element says (or if it is absent).
        """
        for column in element.getparent():  # type: ignore[union-attr]  # a nested row has one
            if column is element:  # the parser may have read further: not past this row
                break
            if column.tag == link.parent_key:
                try:
                    value = link.decode(column.text)
                except Exception:  # the parent row's own decoding names the error
                    return values
                if values[link.column] == value:
                    return values
                return (*values[:link.column], value, *values[link.column + 1:])
        self.row, self.line = n, element.sourceline
        raise self.error(f"nested in a row of {decode_name(link.parent)!r} whose key column "
                         f"{decode_name(link.parent_key)!r} does not come before it; the "
                         "nested row takes its reference from that key (as .NET does)",
                         link.child_column)

    def _check(self, plan: _TablePlan, rows: list[tuple[Any, ...]], numbers: list[int]
               ) -> None:
        """Check the XSD's unique / key / keyref constraints on a batch of decoded rows."""
        for kind, name, cols, refer in plan.constraints:
            if len(cols) == 1:
                i = cols[0]
                keys: list[Any] = [r[i] for r in rows]
                present = [k is not None for k in keys]
            else:
                keys = [tuple(r[i] for i in cols) for r in rows]
                present = [None not in k for k in keys]
            column = plan.schema.columns[cols[0]].name
            if kind == "keyref":
                self.references.extend((refer, k, numbers[j], column)
                                       for j, k in enumerate(keys) if present[j])
                continue
            if not all(present):
                if kind == "key":
                    self.row, self.line = numbers[present.index(False)], None
                    raise self.error(f"key {name!r} needs a value", column)
                keys = [k for k, p in zip(keys, present, strict=True) if p]
            bucket = self.seen.setdefault(name, set())
            size = len(bucket)
            bucket.update(keys)
            if len(bucket) != size + len(keys):  # a duplicate: find the first one
                bucket.difference_update(keys)
                for j, k in enumerate(keys):
                    if k in bucket:
                        present_rows = [m for m, p in zip(numbers, present, strict=True) if p]
                        self.row, self.line = present_rows[j], None
                        raise self.error(f"duplicate value {k!r} for {name!r}", column)
                    bucket.add(k)

    def _check_references(self) -> None:
        for refer, key, row, column in self.references:
            if key not in self.seen.get(refer, ()):  # type: ignore[arg-type]  # None: no table
                self.row, self.line = row, None
                raise self.error(f"value {key!r} refers to no row of {refer!r}", column)

    def _decode_slow(self, plan: _TablePlan, element: etree._Element, n: int
                     ) -> tuple[Any, ...]:
        """Decode a row whose columns are not all present (or not in our order)."""
        values: list[Any] = [None] * plan.width
        index, decoders = plan.index, plan.decoders
        for child in element:
            i = index[child.tag]  # type: ignore[index]  # lxml types a tag as str | bytes | QName
            values[i] = decoders[i](child.text)
        for i in plan.required:
            if values[i] is None:
                self.row, self.line = n, element.sourceline
                raise self.error(f"missing, but {plan.schema.cls.__qualname__}."
                                 f"{plan.schema.columns[i].name} is not Optional",
                                 plan.schema.columns[i].name)
        return tuple(values)

    def _decode_error(self, plan: _TablePlan, element: etree._Element, n: int,
                      exc: Exception) -> XMLImportError:
        self.row, self.line = n, element.sourceline
        invalid = self._invalid_row(element)
        if invalid is not None:  # the schema has a clearer word for it
            return invalid
        for child in element:
            i = plan.index.get(child.tag)  # type: ignore[arg-type]  # lxml types a tag as str | bytes | QName
            if i is None:
                return self.error("unknown column", child.tag)  # type: ignore[arg-type]  # lxml types a tag as str | bytes | QName
            try:
                plan.decoders[i](child.text)
            except Exception as inner:
                self.line = child.sourceline or self.line
                return self.error(f"cannot decode {(child.text or '')[:60]!r}: {inner}",
                                  child.tag)  # type: ignore[arg-type]  # lxml types a tag as str | bytes | QName
        return self.error(f"cannot decode the row: {exc}")

    def _invalid_row(self, element: etree._Element) -> XMLImportError | None:
        """The schema's error for one row, if it has one (decoding assumes a valid row)."""
        if self.rows_validator is None:
            self.rows_validator = row_schema(self.model, self.root_name)
        try:
            if self.rows_validator.validate(element):
                return None
        except etree.Error as exc:  # libxml2 gave up (a pattern too costly to match)
            self.line = element.sourceline or self.line
            return self.error(f"the XSD could not be checked on this row ({exc}); a pattern "
                              "facet too complex for libxml2 is the usual cause")
        for node in element.iter(f"{{{_XINCLUDE}}}*"):
            parent = node.getparent()
            column = parent.tag if parent is not None and parent is not element else None
            self.line = node.sourceline or self.line
            return self.error(f"XInclude is not processed: {node.tag!r} refused",
                              column)  # type: ignore[arg-type]  # lxml types a tag as str | bytes | QName
        entry = self.rows_validator.error_log[0]
        self.line = entry.line or self.line
        return self.error(entry.message,
                          self._column(entry.message, element.tag))  # type: ignore[arg-type]  # lxml types a tag as str | bytes | QName

    def _parse_error(self, exc: etree.XMLSyntaxError) -> XMLImportError:
        # libxml2 reports validity errors at the end of the stream and without a line, so
        # a second pass finds the first row that is invalid (or not well-formed).
        entries = [e.message for e in exc.error_log if e.level_name in ("ERROR", "FATAL")]
        first = entries[0] if entries else str(exc)
        return self._locate_invalid(first)

    def _locate_invalid(self, first_message: str) -> XMLImportError:
        """Re-read the file, validating row by row, to name the first invalid row."""
        self.row = 0
        with open(self.path, "rb") as f:
            depth = 0
            events = etree.iterparse(f, events=("start", "end"), **SAFE_OPTIONS)
            try:
                for event, element in events:
                    if event == "start":
                        depth += 1
                        continue
                    depth -= 1
                    if depth != 1 or (element.tag == _XS_SCHEMA and self.row == 0):
                        continue  # not a row (or the inline schema before the rows)
                    self.row += 1
                    self.line = element.sourceline
                    tag = element.tag if isinstance(element.tag, str) else "?"
                    if tag not in self.by_tag:
                        what = ("XInclude is not processed" if _XINCLUDE in tag
                                else "unexpected element")
                        return self.error(f"{what}: {tag!r} is not a row of this dataset")
                    invalid = self._invalid_row(element)
                    if invalid is not None:
                        return invalid
                    element.clear()
            except etree.XMLSyntaxError as exc:  # not well-formed: that is the real error
                return self._syntax(exc)
        self.row, self.line = 0, None
        return XMLImportError(f"{self.path.name}: {first_message}; nothing was imported")

    def _syntax(self, exc: etree.XMLSyntaxError) -> XMLImportError:
        message = str(exc.msg if getattr(exc, "msg", None) else exc)
        self.line = exc.lineno or self.line
        return XMLImportError(f"{self.path.name}: not well-formed XML at line {self.line} "
                              f"(row {self.row + 1}): {message}; nothing was imported",
                              row=self.row + 1)

    def _column(self, message: str, row_tag: str) -> str | None:
        match = _ELEMENT.search(message)
        if not match:
            return None
        name = match.group(1)
        expected = _EXPECTED.search(message)
        known = self.by_tag[row_tag].index if row_tag in self.by_tag else {}
        if expected and (name == row_tag or name in known):
            return expected.group(1)  # a column is missing where that one was expected
        return None if name == row_tag else name


def iter_xml(cls: type, xml_path: str | Path, xsd_path: str | Path | None = None, *,
             registry: TypeRegistry = default_registry, batch: int = BATCH
             ) -> Iterator[list[Any]]:
    """Stream validated instances of ``cls`` from an XML file, in batches.

    A class without child tables streams in constant memory. With child tables the
    parents are held until the end, where their child rows are attached.
    """
    schema = table_schema(cls, registry)
    return _instances(schema, _Reader(schema, xml_path, xsd_path, batch), batch)


def _instances(schema: TableSchema, reader: _Reader, batch: int) -> Iterator[list[Any]]:
    """Instances from a prepared reader (its XSD is already checked), in batches."""
    build = _builder(schema)
    if not schema.children:
        for _, rows in reader.batches():
            yield build(rows)
        return
    parents: list[Any] = []
    items: dict[str, list[tuple[Any, ...]]] = {child.field: [] for child in schema.children}
    fields = {child.schema.name: child.field for child in schema.children}
    for plan, rows in reader.batches():
        if plan.schema is schema:
            parents.extend(build(rows))
        else:
            items[fields[plan.schema.name]].extend(rows)
    key = schema.require_key("child rows").name
    by_key = {getattr(p, key): p for p in parents}
    for child in schema.children:
        item_build = _builder(child.schema)
        rows = sorted(items[child.field], key=lambda r: r[1])
        for parent_key, obj in zip((r[0] for r in rows), item_build(rows), strict=True):
            getattr(by_key[parent_key], child.field).append(obj)
    for start in range(0, len(parents), batch):
        yield parents[start:start + batch]


def _builder(schema: TableSchema) -> Callable[[list[tuple[Any, ...]]], list[Any]]:
    names = [c.name for c in schema.field_columns]
    offset = len(schema.columns) - len(names)
    children = len(schema.children)
    build = instance_builder(schema.cls, [*names, *(child.field for child in schema.children)])
    if build is schema.cls and not offset and not children:
        return lambda rows: list(starmap(build, rows))

    def build_all(rows: list[tuple[Any, ...]]) -> list[Any]:
        return [build(*row[offset:], *[[] for _ in range(children)]) for row in rows]

    return build_all


def read_xml(cls: type[T], xml_path: str | Path, xsd_path: str | Path | None = None, *,
             registry: TypeRegistry = default_registry) -> list[T]:
    """Read, validate and decode an XML file into instances of ``cls``.

    Without ``xsd_path`` the document is validated against the XSD of ``cls``; with it,
    against that file (ours or one written by .NET). Any problem raises
    :class:`XMLImportError` naming the row, line and column.
    """
    out: list[T] = []
    with paused_gc():
        for batch in iter_xml(cls, xml_path, xsd_path, registry=registry):
            out.extend(batch)
    return out


# -- the Store side ----------------------------------------------------------------------------

def export_store(store: Any, cls: type, xml_path: Target,
                 xsd_path: str | Path | None = None, *, where: Any = None,
                 order_by: Any = None, dataset: str | None = None,
                 inline_schema: bool = False) -> int:
    """Stream a query's rows to XML (see :meth:`Store.export_xml`)."""
    schema = store.schema(cls)
    if schema.children:  # child rows come with their parents, through instances
        # One connection for the parents' cursor and the child queries it triggers.
        with store.transaction():
            return write_xml(cls, store.select(cls, where=where, order_by=order_by),
                             xml_path, xsd_path, dataset=dataset, registry=store.registry,
                             inline_schema=inline_schema)
    return write_xml_rows(schema, store.rows(cls, where=where, order_by=order_by),
                          xml_path, xsd_path, dataset=dataset, registry=store.registry,
                          inline_schema=inline_schema)


_NON_TRANSACTIONAL_DDL = ("mysql", "mariadb")  # CREATE TABLE commits there


def import_store(store: Any, cls: type, xml_path: str | Path,
                 xsd_path: str | Path | None = None, *, reader: _Reader | None = None) -> int:
    """Insert a validated XML file in one transaction (see :meth:`Store.import_xml`).

    A refused document writes nothing, and never undoes what another writer did: the class
    and the XSD are checked before the database is touched; a missing table is created in
    the import's own transaction (SQLite, PostgreSQL); a new SQLite file is filled under a
    private name and linked into place only once the import has succeeded
    (:func:`into_new_sqlite_file`); MariaDB, whose DDL commits at once, goes through
    :func:`import_committed_ddl`.
    """
    schema = store.schema(cls)
    if reader is None or reader.schema is not schema:
        reader = _Reader(schema, xml_path, xsd_path)  # the XSD: no database touched yet
    new_file = new_sqlite_file(store.url)
    if new_file is not None:
        from ..sql.store import Store

        def fill(path: Path) -> int:
            with Store(path, registry=store.registry, busy_timeout=store.busy_timeout) as new:
                return _import_transactional(new, cls, reader, xml_path)

        done = into_new_sqlite_file(new_file, fill)
        if done is not None:
            return done
    if store.dialect.name in _NON_TRANSACTIONAL_DDL:
        return _import_committed_ddl(store, cls, reader, xml_path)
    return _import_transactional(store, cls, reader, xml_path)


def _import_transactional(store: Any, cls: type, reader: _Reader, xml_path: str | Path
                          ) -> int:
    """Create what is missing and insert, all in one transaction (transactional DDL)."""
    schema = reader.schema
    with store.transaction():
        # Under the schema lock (PostgreSQL keeps it to the end of the transaction; an
        # SQLite writer holds the database from BEGIN IMMEDIATE): what is missing now is
        # missing until this transaction ends, so the logical schema is recorded only here.
        with store._connection(write=True) as conn, schema_lock(conn):
            missing = _missing_tables(store, schema)
        store.create(cls)  # rolled back with the rows on any error
        if missing:
            _record(store, schema, reader)
        return _insert_batches(store, _instances(schema, reader, BATCH), xml_path)


def _validate(schema: TableSchema, reader: _Reader) -> None:
    """Read the whole document once, keeping nothing (the reader can read it again)."""
    for _ in _instances(schema, reader, BATCH):
        pass


def _missing_tables(store: Any, schema: TableSchema) -> set[str]:
    names = {schema.name, *(child.schema.name for child in schema.children)}
    return names - set(store.table_names())


def _record(store: Any, schema: TableSchema, reader: _Reader) -> None:
    """Keep the logical schema of tables this import creates (see :mod:`logical`)."""
    with store._connection(write=True) as conn:  # the import's own transaction
        logical.record(conn, schema, dataset=reader.root_name)


def _import_committed_ddl(store: Any, cls: type, reader: _Reader, xml_path: str | Path
                          ) -> int:
    schema = reader.schema
    own = {schema.name, *(child.schema.name for child in schema.children)}

    def record(created: set[str]) -> None:
        if created & own:
            _record(store, schema, reader)

    return import_committed_ddl(
        store, store._tables_with_references(store._model(cls)),
        validate=lambda: _validate(schema, reader), record=record,
        insert=lambda: _insert_batches(store, _instances(schema, reader, BATCH), xml_path))


# -- MariaDB: DDL that commits -----------------------------------------------------------------

#: The comment of a table that an import has created and not finished with, followed by the
#: name of a lock that import holds until it is done (:func:`import_committed_ddl`).
PENDING = "entityworks import in progress, lock "
_TOKEN = re.compile(r"entityworks_import_[0-9a-f]{32}")


def import_committed_ddl(store: Any, tables: Sequence[sa.Table], *,
                         validate: Callable[[], None] | None,
                         record: Callable[[set[str]], None],
                         insert: Callable[[], T]) -> T:
    """An import where DDL commits at once (MariaDB): create the ``tables`` that are missing
    (listed parents first), then ``record`` the logical schema of those created and
    ``insert`` the rows in one transaction. Nothing of its own is left when anything fails,
    or when the process dies, and nothing another writer committed is ever dropped:

    - imports that write the same table run one after the other (a named lock per table), so
      none writes into a table another may still take away again;
    - each table created here carries the comment :data:`PENDING` and the name of a lock this
      import holds until it is done: such a table whose lock is free was left by an import
      that died, and the next import drops it if it is still empty;
    - on failure, a table created here is dropped only if it is still empty, seen under
      ``LOCK TABLES ... WRITE``, which waits for every open transaction on it (rows another
      writer committed meanwhile keep it);
    - the logical schema is written in the rows' transaction, so it is there exactly when
      they are. ``validate`` reads the document before any table is created.
    """
    if getattr(store._local, "conn", None) is not None:  # inside Store.transaction()
        missing = sorted({t.name for t in tables} - set(store.table_names()))
        if missing:
            raise EntityworksError(
                f"cannot create table {missing[0]!r} inside transaction(): MariaDB would "
                "commit the open transaction; import outside it, or create the tables first")
        with store.transaction():
            return insert()
    token = f"entityworks_import_{uuid.uuid4().hex}"
    database = store.url.database or ""
    names = [token, *sorted({_table_lock(database, t.name) for t in tables})]
    with store.engine.connect() as conn:  # the session that holds the locks throughout
        held: list[str] = []
        try:
            for name in names:
                _get_lock(conn, name, tables)
                held.append(name)
            return _locked_import(store, conn, tables, token, validate, record, insert)
        finally:
            try:
                conn.rollback()
                for name in reversed(held):
                    conn.execute(sa.select(sa.func.release_lock(sa.bindparam("n", name))))
                conn.commit()
            except Exception:  # a broken session: its locks went with it; never reuse it
                conn.invalidate()


def _table_lock(database: str, table: str) -> str:
    """The named lock of imports into ``table`` (lock names are server-wide, and short)."""
    digest = hashlib.sha256(f"{database}\0{table}".encode()).hexdigest()[:40]
    return f"entityworks_table_{digest}"


def _get_lock(conn: sa.Connection, name: str, tables: Sequence[sa.Table]) -> None:
    got = conn.execute(sa.select(sa.func.get_lock(
        sa.bindparam("n", name), sa.bindparam("s", LOCK_SECONDS)))).scalar()
    if got != 1:
        listed = ", ".join(repr(t.name) for t in tables)
        raise EntityworksError(f"another import into {listed} has run for over {LOCK_SECONDS}"
                               " s; try again when it has finished")


def _locked_import(store: Any, conn: sa.Connection, tables: Sequence[sa.Table], token: str,
                   validate: Callable[[], None] | None, record: Callable[[set[str]], None],
                   insert: Callable[[], T]) -> T:
    with schema_lock(conn):
        remove_import_debris(conn)
    existing = set(sa.inspect(conn).get_table_names())
    conn.commit()
    if validate is not None and any(t.name not in existing for t in tables):
        validate()
    created: list[str] = []
    schema_held = ExitStack()
    try:
        if any(t.name not in existing for t in tables):
            schema_held.enter_context(schema_lock(conn))
            _create_pending(store, conn, tables, token, created)
        with store.transaction():
            if set(created) - {logical.TABLE}:
                record(set(created) - {logical.TABLE})
            schema_held.close()  # the recorded rows hold entityworks_schema from here on
            result = insert()
    except BaseException:
        schema_held.close()
        if created:
            try:
                conn.rollback()
                with schema_lock(conn):
                    _drop_if_empty(conn, created)
            except Exception:  # the import's own error is the one to tell; the tables
                pass  # keep their mark, and the next import removes them if still empty
        raise
    for name in created:  # done: an ordinary table now
        conn.execute(sa.schema.DropTableComment(sa.Table(name, sa.MetaData())))
    conn.commit()
    return result


def _create_pending(store: Any, conn: sa.Connection, tables: Sequence[sa.Table], token: str,
                    created: list[str]) -> None:
    """Create the missing ``tables`` (and ``entityworks_schema``), marked as this import's
    until it is done; ``created`` lists them as they come. Called under the schema lock."""
    existing = set(sa.inspect(conn).get_table_names())
    metadata = sa.MetaData()
    copies = [t.to_metadata(metadata) for t in tables]  # private: the comment is ours alone
    missing = [t for t in copies if t.name not in existing]
    if missing and logical.TABLE not in existing:
        missing.insert(0, logical.schema_table(metadata))
    for table in missing:
        table.comment = PENDING + token
        try:
            table.create(conn)
        except (sa.exc.StatementError, store._dbapi_error) as exc:
            raise SchemaError(f"cannot create table {table.name!r}: "
                              f"{getattr(exc, 'orig', exc)}; no table was kept") from exc
        created.append(table.name)


def remove_import_debris(conn: sa.Connection) -> None:
    """Drop what imports that died left (MariaDB): tables still marked :data:`PENDING` whose
    import's lock is free, if they are empty; a marked table that holds rows is kept as an
    ordinary table. Called under the schema lock."""
    marked = conn.execute(sa.text(
        "SELECT table_name, table_comment FROM information_schema.tables "
        "WHERE table_schema = DATABASE() AND table_comment LIKE :marked"),
        {"marked": PENDING + "%"}).all()
    dead = [name for name, comment in marked
            if _TOKEN.fullmatch(comment[len(PENDING):]) and conn.execute(sa.select(
                sa.func.is_free_lock(sa.bindparam("n", comment[len(PENDING):])))).scalar() == 1]
    conn.commit()
    if dead:
        _drop_if_empty(conn, dead)


def _drop_if_empty(conn: sa.Connection, names: Sequence[str]) -> None:
    """Drop those of the marked tables ``names`` that hold no row (and their logical schema);
    unmark the others. Empty is seen under ``LOCK TABLES ... WRITE``, which waits for every
    transaction that has written to them, and keeps new writes out until they are gone. A
    table that a kept table refers to stays too. Called under the schema lock."""
    existing = set(sa.inspect(conn).get_table_names())
    conn.commit()
    names = sorted(set(names) & existing)
    if not names:
        return
    quote = conn.dialect.identifier_preparer.quote
    locked = [*names, *([logical.TABLE] if logical.TABLE in existing
                        and logical.TABLE not in names else [])]
    conn.exec_driver_sql("LOCK TABLES " + ", ".join(f"{quote(n)} WRITE" for n in locked))
    try:
        empty = {n for n in names if n != logical.TABLE and conn.execute(
            sa.select(sa.literal(1)).select_from(sa.table(n)).limit(1)).first() is None}
        references = [(child, parent) for child, parent in conn.execute(sa.text(
            "SELECT table_name, referenced_table_name FROM "
            "information_schema.referential_constraints WHERE constraint_schema = DATABASE()"))
            if child != parent]
        drop = set(empty)
        while True:  # a table that a kept one refers to is kept
            kept = {parent for child, parent in references
                    if parent in drop and child not in drop}
            if not kept:
                break
            drop -= kept
        for name in _referring_first(drop, references):
            conn.execute(sa.schema.DropTable(sa.Table(name, sa.MetaData())))
        schema_rows = logical.schema_table()
        if logical.TABLE in existing and drop:
            conn.execute(schema_rows.delete().where(schema_rows.c.table_name.in_(sorted(drop))))
        if logical.TABLE in names and conn.execute(sa.select(sa.literal(1)).select_from(
                schema_rows).limit(1)).first() is None:
            conn.execute(sa.schema.DropTable(schema_rows))
            drop.add(logical.TABLE)
        conn.commit()
    finally:
        conn.exec_driver_sql("UNLOCK TABLES")
    for name in sorted(set(names) - drop):
        conn.execute(sa.schema.DropTableComment(sa.Table(name, sa.MetaData())))
    conn.commit()


def _referring_first(names: set[str], references: list[tuple[str, str]]) -> list[str]:
    """``names`` ordered so that a table comes before those it refers to."""
    order: list[str] = []
    left = set(names)
    while left:
        free = sorted(n for n in left
                      if not any(parent == n and child in left for child, parent in references))
        if not free:  # a cycle between tables: foreign keys do not stop DROP of them all
            free = sorted(left)
        order += free
        left -= set(free)
    return order


def _insert_batches(store: Any, batches: Iterable[list[Any]], xml_path: str | Path,
                    numbers: Sequence[int] | None = None) -> int:
    """Insert ``batches`` (rows numbered from 1, or by ``numbers`` in the document)."""
    with paused_gc():  # the rows hold plain values: nothing for the collector to find
        return _insert_each(store, batches, xml_path, numbers)


def _insert_each(store: Any, batches: Iterable[list[Any]], xml_path: str | Path,
                 numbers: Sequence[int] | None) -> int:
    count = 0
    for batch in batches:
        try:
            store.insert_many(batch)
        except WriteError as exc:
            raise insert_error(exc, xml_path, None if exc.row is None else (
                numbers[count + exc.row] if numbers is not None else count + exc.row + 1)
                ) from exc
        count += len(batch)
    return count


_WRITE_PREFIX = re.compile(r"[^:]*: (?:row \d+|a row)")  # the Store's "table: row N"


def insert_error(exc: WriteError, xml_path: str | Path, row: int | None, *,
                 table: str | None = None, column: str | None = None) -> XMLImportError:
    """The Store's refusal of a row, told by the document's ``row`` (and ``table``, and the
    ``column`` when the caller found it where the Store could not)."""
    detail = str(exc)
    prefix = _WRITE_PREFIX.match(detail)
    if prefix is not None:
        detail = detail[prefix.end():]
        if exc.column is not None:
            detail = detail.removeprefix(f", column {exc.column!r}")
        detail = detail.removeprefix(": ")
    column = column or exc.column
    where = ("a row" if row is None else f"row {row}") + (
        "" if table is None else f" of table {table!r}") + (
        "" if column is None else f", column {column!r}")
    return XMLImportError(f"{Path(xml_path).name}: {where}: {detail}", row=row, column=column)


def _sqlite_path(url: Any) -> str | None:
    """The file an SQLite URL or plain path names (``None``: memory, URI or another DBMS)."""
    if isinstance(url, str) and "://" in url:
        url = sa.make_url(url)
    if isinstance(url, str | os.PathLike):
        path: str | None = os.fspath(url)
    elif url.get_backend_name() == "sqlite":
        path = url.database
    else:
        return None
    if not path or path == ":memory:" or path.startswith("file:"):
        return None
    return path


def new_sqlite_file(url: Any) -> Path | None:
    """The file of an SQLite URL or path if it does not exist yet."""
    path = _sqlite_path(url)
    return None if path is None or os.path.lexists(path) else Path(path)


def into_new_sqlite_file(path: Path, fill: Callable[[Path], T]) -> T | None:
    """Run ``fill`` on a private new database file beside ``path``, then link it into place.

    SQLite makes its file when it connects, and another process may open and fill a new file
    before a refused import could take it away again: deleting it then destroys what that
    process committed. So the import goes into a file nobody else knows of, removed on any
    error; once it is complete it is linked to ``path``, which fails if ``path`` exists by
    then. ``None`` then (and where the directory takes no new file or no hard link): the
    caller imports into ``path`` as into any existing database.

    The private file is locked (``flock``) for as long as its import runs, so that the next
    import into ``path`` can tell the file of a killed import (nobody holds its lock) from
    one still running, and removes the former.
    """
    _remove_abandoned(path)
    try:
        private, held = _private_file_beside(path)
    except OSError:
        return None  # SQLite will tell why, on the ordinary path
    try:
        result = fill(private)
        _seal(private)
        try:
            os.link(private, path)
        except OSError:  # FileExistsError: another process made the database meanwhile
            return None
        return result
    finally:
        _unlink_database(private)
        os.close(held)


_PRIVATE = re.compile(r"\.(?P<name>.+)\.[0-9a-f]{16}\.importing")


def _private_file_beside(path: Path) -> tuple[Path, int]:
    """A new empty file in the directory of ``path`` (a hard link needs the same file
    system), made exclusively and locked before it takes its ``.importing`` name: a file
    of that name that nobody has locked belongs to an import that died. Returns the file and
    the descriptor holding the lock."""
    import fcntl

    while True:
        token = secrets.token_hex(8)
        creating = path.with_name(f".{path.name}.{token}.creating")
        try:
            held = os.open(creating, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666)
        except FileExistsError:
            continue
        try:
            fcntl.flock(held, fcntl.LOCK_EX)
            private = path.with_name(f".{path.name}.{token}.importing")
            os.rename(creating, private)
        except BaseException:
            os.close(held)
            creating.unlink(missing_ok=True)
            raise
        return private, held


def _remove_abandoned(path: Path) -> None:
    """Remove the private files of imports into ``path`` that were killed: this user's
    ``.importing`` files beside it whose lock nobody holds (best effort: never an error)."""
    import fcntl
    import stat

    try:
        entries = list(os.scandir(path.parent))
    except OSError:
        return
    for entry in entries:
        match = _PRIVATE.fullmatch(entry.name)
        if match is None or match["name"] != path.name:
            continue
        try:
            fd = os.open(entry.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid():
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # an import is still filling it
            _unlink_database(Path(entry.path))
        finally:
            os.close(fd)


def _unlink_database(path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def _seal(path: Path) -> None:
    """Make the database file whole on its own: its write-ahead log checkpointed into it and
    removed (the Store turns WAL on again when it opens the file)."""
    import sqlite3

    with closing(sqlite3.connect(path)) as conn:
        mode = conn.execute("PRAGMA journal_mode=DELETE").fetchone()[0]
    if mode != "delete":
        raise EntityworksError(f"could not complete the new database {path.name}: its "
                               f"journal stays in {mode!r} mode")


def import_into(open_store: Callable[[str], Any], db: str, cls: type, xml_path: str | Path,
                xsd_path: str | Path | None = None) -> int:
    """``open_store(db)`` then :func:`import_store`, for an opener that creates things (a
    catalog's runs its migrations); returns the row count.

    When ``db`` names an SQLite file that does not exist yet, the whole document is read
    before ``open_store`` runs, and then the opener and the import run on a private new
    file that becomes ``db`` only once the import has succeeded (:func:`into_new_sqlite_file`).
    """
    schema = table_schema(cls)
    reader = _Reader(schema, xml_path, xsd_path)  # the XSD, before any database is opened
    new_file = new_sqlite_file(db)
    if new_file is not None:
        _validate(schema, reader)

        def fill(path: Path) -> int:
            store = open_store(os.fspath(path))
            try:
                return import_store(store, cls, xml_path, xsd_path, reader=reader)
            finally:
                store.close()

        done = into_new_sqlite_file(new_file, fill)
        if done is not None:
            return done
    store = open_store(db)
    try:
        return import_store(store, cls, xml_path, xsd_path, reader=reader)
    finally:
        store.close()


__all__ = [
    "SAFE_OPTIONS",
    "export_store",
    "import_into",
    "import_store",
    "hardened_parser",
    "iter_xml",
    "parse_document",
    "read_xml",
    "write_xml",
    "write_xml_rows",
]

"""The validating XML reader: a document streamed into decoded column tuples, per table.

The engine under :mod:`~entityworks.xml.table`, :mod:`~entityworks.xml.dataset` and
:mod:`~entityworks.xml.diffgram` (and the database side of imports). It never trusts the
document: a hardened parser (no DTD, no entities, no network, no huge nodes, compressed input
refused) feeds ``iterparse`` with XSD validation switched on, and rows are decoded through
the registry as they stream by (:class:`TablePlan`, one per table). Errors name the row
(1-based, counting row elements in document order), the line and the column.
:func:`row_builder` and :func:`instances` turn the tuples into dataclass instances.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterator
from itertools import starmap
from operator import attrgetter, call
from pathlib import Path
from typing import Any, cast

from lxml import etree

from ..errors import XMLImportError
from ..model.schema import TableSchema, instance_builder, refuse_nested_children
from .parser import (
    SAFE_OPTIONS,
    STREAM_OPTIONS,
    RefuseResolver,
    refuse_doctype,
)
from .parser import (
    root_name as document_root,
)
from .xsd import XsdModel, load_inline_xsd, load_xsd, model_for, row_schema, validation_schema
from .xsdwrite import decode_name, encode_name

#: Rows per batch, read or written.
BATCH = 5_000


@dataclasses.dataclass
class TablePlan:
    """How to decode the row elements of one table into column tuples (table column order)."""

    schema: TableSchema
    tag: str
    width: int
    index: dict[str, int]
    decoders: list[Callable[[str | None], Any]]  # by column index
    in_order: list[Callable[[str | None], Any]] | None  # by position, when XSD order == ours
    required: list[int]
    constraints: list[tuple[str, str, list[int], str | None]]  # kind, name, columns, refer
    #: Decoders for the streaming pass, by column index (see ``_refuses_empty``).
    stream: list[Callable[[str | None], Any]] = dataclasses.field(default_factory=list)
    #: Row shapes seen (the tags of a row's columns, some absent) -> their decoders and the
    #: indexes of the absent columns; ``None``: the row goes to ``Reader._decode_slow``.
    shapes: dict[tuple[Any, ...], tuple[list[Callable[[str | None], Any]], list[int]] | None] = (
        dataclasses.field(default_factory=dict)
    )

    def shape(
        self, tags: tuple[Any, ...]
    ) -> tuple[list[Callable[[str | None], Any]], list[int]] | None:
        """How to decode a row whose columns have ``tags``, in our order, absent ones
        Optional; ``None`` for anything else."""
        try:
            return self.shapes[tags]
        except KeyError:
            pass
        positions = [self.index.get(tag) for tag in tags]
        found: tuple[list[Callable[[str | None], Any]], list[int]] | None = None
        if (
            None not in positions
            and all(
                a < b  # type: ignore[operator]
                for a, b in zip(positions, positions[1:], strict=False)
            )
        ):
            absent = [i for i in range(self.width) if i not in positions]
            if not set(absent) & set(self.required) and len(self.stream) == self.width:
                found = [self.stream[i] for i in positions], absent  # type: ignore[index]
        if len(self.shapes) < 64:
            self.shapes[tags] = found
        return found


def _empty_as_text(decode: Callable[[str], Any]) -> Callable[[str | None], Any]:
    """lxml gives ``None`` for an empty element; decoders expect the empty string.

    ``int`` and ``float`` reject ``None`` themselves, which is the right answer for them.
    """
    if decode is int or decode is float:
        return decode  # type: ignore[return-value]  # int(None) and float(None) refuse None
    if decode is str:
        return _text_or_empty
    return lambda text: decode("" if text is None else text)


def _text_or_empty(text: str | None) -> str:
    return "" if text is None else text


def _refuses_empty(decode: Callable[[str], Any]) -> bool:
    """True when ``decode`` refuses both ``""`` and ``None``: an empty element is then an
    error either way, so the streaming pass may call it without the wrapper (a refusal goes
    to the error path, whose decoders see ``""`` as always)."""
    for empty in ("", None):
        try:
            decode(empty)  # type: ignore[arg-type]
        except Exception:  # noqa: BLE001, PERF203 - any refusal will do
            continue
        return False
    return True


def table_plan(schema: TableSchema, model: XsdModel, tag: str) -> TablePlan:
    xsd_table = model.tables[tag]
    names = schema.column_names
    index: dict[str, int] = {}
    decoders: list[Callable[[str | None], Any] | None] = [None] * len(names)
    raw: list[Callable[[str], Any] | None] = [None] * len(names)
    for column in xsd_table.columns:
        name = decode_name(column.name)
        if name not in names:
            raise XMLImportError(
                f"the XSD's table {tag!r} has a column {name!r} that "
                f"{schema.cls.__qualname__} has no field for",
                column=name,
            )
        i = names.index(name)
        index[column.name] = i
        info = schema.columns[i].info
        xml_codec = info.xml_codec
        fast = xml_codec.from_valid_text is not None and xml_codec.accepts(column.xsd_type)
        raw[i] = xml_codec.from_valid_text if fast else xml_codec.from_text
        decoders[i] = _empty_as_text(raw[i])  # type: ignore[arg-type]  # fast: set
    missing = [
        c.name for c in schema.columns if encode_name(c.name) not in index and not c.nullable
    ]
    if missing:
        raise XMLImportError(
            f"the XSD's table {tag!r} lacks the column {missing[0]!r}, which "
            f"{schema.cls.__qualname__} requires",
            column=missing[0],
        )
    nullable_in_xsd = {c.name for c in xsd_table.columns if c.nullable}
    required = [
        i for name, i in index.items() if not schema.columns[i].nullable and name in nullable_in_xsd
    ]
    order = [index[c.name] for c in xsd_table.columns]
    stream: list[Callable[[str | None], Any] | None] = [
        cast("Callable[[str | None], Any]", decode)  # it refuses None itself
        if decode is not None and _refuses_empty(decode)
        else d
        for decode, d in zip(raw, decoders, strict=True)
    ]
    in_order = (
        cast("list[Callable[[str | None], Any]]", stream)
        if order == list(range(len(names))) and None not in stream
        else None
    )
    constraints = []
    for c in model.constraints:
        if c.table != tag:
            continue
        cols = []
        for f in c.fields:
            if f not in index:
                raise XMLImportError(
                    f"XSD constraint {c.name!r} uses column {f!r}, which "
                    f"table {tag!r} does not have"
                )
            cols.append(index[f])
        constraints.append((c.kind, c.name, cols, c.refer))
    return TablePlan(
        schema,
        tag,
        len(names),
        index,
        [d or (lambda t: None) for d in decoders],
        in_order,
        required,
        constraints,
        [d or (lambda t: None) for d in stream],
    )


def _plans(schema: TableSchema, model: XsdModel, table: str | None = None) -> list[TablePlan]:
    """The plans of ``schema`` and its child tables, whose rows the XSD and the document name
    ``table`` (and ``<table>_<field>``; default: the schema's own names)."""
    refuse_nested_children(schema, "XML and XSD")
    source = schema.name if table is None else table
    tag = encode_name(source)
    if model.main_table != tag:
        raise XMLImportError(
            f"the XSD describes table {decode_name(model.main_table)!r}, not "
            f"{source!r} ({schema.cls.__qualname__})"
        )
    plans = [table_plan(schema, model, tag)]
    for child in schema.children:
        child_tag = encode_name(f"{source}_{child.field}")
        if child_tag in model.tables:
            plans.append(table_plan(child.schema, model, child_tag))
    unknown = set(model.tables) - {p.tag for p in plans}
    if unknown:
        raise XMLImportError(
            f"the XSD declares table {sorted(unknown)[0]!r}, which "
            f"{schema.cls.__qualname__} does not hold"
        )
    if len(plans) > 1:
        _require_relations(schema, plans)
    return plans


def _require_relations(schema: TableSchema, plans: list[TablePlan]) -> None:
    """Child rows must point at exactly one parent, whatever the XSD declares.

    A schema may lack the parent's key constraint or the child's keyref (a hand-written
    one, or .NET's for a table without a relation): the checks the class needs are then
    added here, so that an orphan or a duplicate is refused with its row like any other.
    Added names hold a space, which no XSD constraint name can.
    """
    parent = plans[0]
    key = parent.schema.column_names.index(schema.require_key("child rows").name)
    refer = next(
        (
            name
            for kind, name, cols, _ in parent.constraints
            if kind in ("unique", "key") and cols == [key]
        ),
        None,
    )
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


def _nested_links(model: XsdModel, by_tag: dict[str, TablePlan]) -> dict[str, _NestedLink]:
    """The single-column nested relations (``msdata:IsNested`` keyrefs) between read tables,
    by child tag."""
    keys = {c.name: c for c in model.constraints if c.kind in ("unique", "key")}
    links = {}
    for ref in model.constraints:
        target = keys.get(ref.refer or "")
        if (
            ref.kind != "keyref"
            or not ref.nested
            or target is None
            or len(ref.fields) != 1
            or len(target.fields) != 1
        ):
            continue
        child, parent = by_tag.get(ref.table), by_tag.get(target.table)
        if (
            child is None
            or parent is None
            or model.tables[ref.table].nested_in != target.table
            or ref.fields[0] not in child.index
            or target.fields[0] not in parent.index
        ):
            continue
        links[ref.table] = _NestedLink(
            child.index[ref.fields[0]],
            ref.fields[0],
            target.table,
            target.fields[0],
            parent.decoders[parent.index[target.fields[0]]],
        )
    return links


_XINCLUDE = "http://www.w3.org/2001/XInclude"
_XS_SCHEMA = "{http://www.w3.org/2001/XMLSchema}schema"
_ELEMENT = re.compile(r"Element '([^']+)'")
_EXPECTED = re.compile(r"Expected is (?:one of )?\( ?([^ ,)]+)")


class Reader:
    """Streams one XML file into batches of decoded column tuples, per table."""

    def __init__(
        self,
        schema: TableSchema,
        xml_path: str | Path,
        xsd_path: str | Path | None,
        batch: int = BATCH,
        *,
        model: XsdModel | None = None,
        plans: Callable[[XsdModel], list[TablePlan]] | None = None,
        table: str | None = None,
    ) -> None:
        """``table``: the XSD's and the document's name for the table of ``schema`` when it
        is stored under another name (its child tables then ``<table>_<field>``)."""
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
        self.plans: list[TablePlan] = (
            plans(model) if plans is not None else _plans(schema, model, table)
        )
        #: Row elements that sit inside other rows (a nested relation's child table).
        self.nested: set[str] = {p.tag for p in self.plans if model.tables[p.tag].nested_in}
        self.by_tag: dict[str, TablePlan] = {p.tag: p for p in self.plans}
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
        return XMLImportError(
            f"{self.path.name}: {where}{col}: {message.rstrip('.')}; nothing was imported",
            row=self.row,
            column=decode_name(column) if column else None,
        )

    def batches(self) -> Iterator[tuple[TablePlan, list[tuple[Any, ...]]]]:
        """Yield ``(plan, rows)`` batches; constraints are checked batch by batch.

        Each call reads the document again from the start (the schema stays compiled).
        """
        self.seen, self.references, self.row, self.line = {}, [], 0, None
        pending: dict[str, tuple[list[tuple[Any, ...]], list[int]]] = {
            p.tag: ([], []) for p in self.plans
        }
        by_tag, root_name, batch, nested = self.by_tag, self.root_name, self.batch, self.nested
        text_of, tag_of = attrgetter("text"), attrgetter("tag")
        element: Any = None
        plan: TablePlan | None = None
        n = 0
        with open(self.path, "rb") as f:
            events = etree.iterparse(
                f,
                events=("end",),
                tag=[*by_tag, root_name],
                schema=self.validator,
                **STREAM_OPTIONS,
            )
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
                    if (
                        parent is not None
                        and parent.getparent() is not None
                        and not (tag in self.links and parent.tag == self.links[tag].parent)
                    ):
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
                        shape = plan.shape(tuple(map(tag_of, element)))
                        if shape is None:
                            values = self._decode_slow(plan, element, n)
                        else:  # some Optional columns absent
                            decoded = list(map(call, shape[0], map(text_of, element)))
                            for i in shape[1]:
                                decoded.insert(i, None)
                            values = tuple(decoded)
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
            raise XMLImportError(
                f"{self.path.name}: the document ends before its root element "
                f"is closed (truncated after row {n}); nothing was "
                "imported",
                row=n + 1,
            )
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

    def _from_parent(
        self, link: _NestedLink, element: etree._Element, values: tuple[Any, ...], n: int
    ) -> tuple[Any, ...]:
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
                return (*values[: link.column], value, *values[link.column + 1 :])
        self.row, self.line = n, element.sourceline
        raise self.error(
            f"nested in a row of {decode_name(link.parent)!r} whose key column "
            f"{decode_name(link.parent_key)!r} does not come before it; the "
            "nested row takes its reference from that key (as .NET does)",
            link.child_column,
        )

    def _check(self, plan: TablePlan, rows: list[tuple[Any, ...]], numbers: list[int]) -> None:
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
                self.references.extend(
                    (refer, k, numbers[j], column) for j, k in enumerate(keys) if present[j]
                )
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

    def _decode_slow(self, plan: TablePlan, element: etree._Element, n: int) -> tuple[Any, ...]:
        """Decode a row whose columns are not all present (or not in our order)."""
        values: list[Any] = [None] * plan.width
        index, decoders = plan.index, plan.decoders
        for child in element:
            i = index[child.tag]  # type: ignore[index]  # lxml types a tag as str | bytes | QName
            values[i] = decoders[i](child.text)
        for i in plan.required:
            if values[i] is None:
                self.row, self.line = n, element.sourceline
                raise self.error(
                    f"missing, but {plan.schema.cls.__qualname__}."
                    f"{plan.schema.columns[i].name} is not Optional",
                    plan.schema.columns[i].name,
                )
        return tuple(values)

    def _decode_error(
        self, plan: TablePlan, element: etree._Element, n: int, exc: Exception
    ) -> XMLImportError:
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
                return self.error(f"cannot decode {(child.text or '')[:60]!r}: {inner}", child.tag)  # type: ignore[arg-type]  # lxml types a tag as str | bytes | QName
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
            return self.error(
                f"the XSD could not be checked on this row ({exc}); a pattern "
                "facet too complex for libxml2 is the usual cause"
            )
        for node in element.iter(f"{{{_XINCLUDE}}}*"):
            parent = node.getparent()
            column = parent.tag if parent is not None and parent is not element else None
            self.line = node.sourceline or self.line
            return self.error(f"XInclude is not processed: {node.tag!r} refused", column)  # type: ignore[arg-type]  # lxml types a tag as str | bytes | QName
        entry = self.rows_validator.error_log[0]
        self.line = entry.line or self.line
        return self.error(entry.message, self._column(entry.message, element.tag))  # type: ignore[arg-type]  # lxml types a tag as str | bytes | QName

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
                        what = (
                            "XInclude is not processed"
                            if _XINCLUDE in tag
                            else "unexpected element"
                        )
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
        return XMLImportError(
            f"{self.path.name}: not well-formed XML at line {self.line} "
            f"(row {self.row + 1}): {message}; nothing was imported",
            row=self.row + 1,
        )

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


def instances(schema: TableSchema, reader: Reader, batch: int) -> Iterator[list[Any]]:
    """Instances from a prepared reader (its XSD is already checked), in batches."""
    build = row_builder(schema)
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
        item_build = row_builder(child.schema)
        rows = sorted(items[child.field], key=lambda r: r[1])
        for parent_key, obj in zip((r[0] for r in rows), item_build(rows), strict=True):
            getattr(by_key[parent_key], child.field).append(obj)
    for start in range(0, len(parents), batch):
        yield parents[start : start + batch]


def row_builder(schema: TableSchema) -> Callable[[list[tuple[Any, ...]]], list[Any]]:
    names = [c.name for c in schema.field_columns]
    offset = len(schema.columns) - len(names)
    children = len(schema.children)
    build = instance_builder(schema.cls, [*names, *(child.field for child in schema.children)])
    if build is schema.cls and not offset and not children:
        return lambda rows: list(starmap(build, rows))

    def build_all(rows: list[tuple[Any, ...]]) -> list[Any]:
        return [build(*row[offset:], *[[] for _ in range(children)]) for row in rows]

    return build_all


__all__ = ["BATCH", "Reader", "TablePlan", "instances", "row_builder", "table_plan"]

""".NET DiffGrams (``DataSet.WriteXml(..., XmlWriteMode.DiffGram)``): a DataSet's changes,
read into its current rows and its before images (:func:`read_diffgram`).

A DiffGram holds the current rows (``diffgr:hasChanges="inserted"`` or ``"modified"``, or
none for an unchanged row) and, in ``diffgr:before``, the original image of every modified
or deleted row, paired with its current row by ``diffgr:id`` (each row's :class:`Mark`).
``diffgr:errors`` and row errors are annotations and are not kept. Applying the changes to
the tables that hold the DataSet is the SQL side's (:mod:`entityworks.sql.exchange.diffgram`).

Reading keeps every guarantee of :mod:`entityworks.xml.reader`: the hardened parser (no DTD,
entities, XInclude or network; compressed input refused; libxml2's limits on text size and
depth), one streaming pass that splits the document into its two sections (each a plain
DataSet document, line numbers kept), then the XSD validation and typed decoding of the
DataSet import, with errors naming the section, row, line and column. The rows are held in
memory (a DiffGram is one DataSet's changes).
"""

from __future__ import annotations

import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from lxml import etree

from ..errors import XMLImportError
from ..model.schema import TableSchema, table_schema
from ..registry import TypeRegistry
from ..registry import registry as default_registry
from .dataset import DataSet, numbered_rows
from .parser import (
    DIFFGRAM_NS,
    DIFFGRAM_ROOT,
    SAFE_OPTIONS,
    RefuseResolver,
    check_prolog,
    refuse_doctype,
    root_tag,
    syntax_error,
)
from .reader import Reader, TablePlan, table_plan
from .xsd import XsdModel, load_xsd, parse_xsd_tree
from .xsdwrite import dataset_xsd_tree, decode_name, encode_name

MSDATA_NS = "urn:schemas-microsoft-com:xml-msdata"
_BEFORE = f"{{{DIFFGRAM_NS}}}before"
_ERRORS = f"{{{DIFFGRAM_NS}}}errors"
_ID = f"{{{DIFFGRAM_NS}}}id"
_STATE = f"{{{DIFFGRAM_NS}}}hasChanges"
#: Row attributes that describe the DiffGram itself; any other attribute is refused by the
#: XSD validation like in any document.
_BOOKKEEPING = (
    _ID,
    _STATE,
    f"{{{DIFFGRAM_NS}}}hasErrors",
    f"{{{DIFFGRAM_NS}}}parentId",
    f"{{{MSDATA_NS}}}rowOrder",
)
#: ``diffgr:hasChanges`` values; "descent" marks an unchanged row with changed nested rows.
_STATES = {
    None: "unchanged",
    "descent": "unchanged",
    "inserted": "inserted",
    "modified": "modified",
}


@dataclass(frozen=True)
class Mark:
    """One row element of a section: its ``diffgr:id``, state, row number and line."""

    id: str | None
    state: str
    row: int
    line: int | None


def is_diffgram(path: str | Path) -> bool:
    """True if the document's root is ``diffgr:diffgram`` (read safely, first element only)."""
    return root_tag(Path(path)) == DIFFGRAM_ROOT


# -- splitting the document into two plain DataSet documents ----------------------------------


class _Section:
    """A section's rows copied into a plain DataSet document, on the lines they came from."""

    def __init__(self, path: Path, what: str) -> None:
        self.path = path
        self.what = what
        self.file: TextIO | None = None
        self.line = 1
        self.marks: dict[str, list[Mark]] = defaultdict(list)
        self.rows = 0
        self.root = ""

    def open(self, root: str, line: int | None) -> None:
        self.root = root
        self.file = open(self.path, "w", encoding="utf-8")  # noqa: SIM115 - closed in close()
        self.file.write('<?xml version="1.0" encoding="utf-8"?>')
        self._pad(line)
        self.file.write(f"<{root}>")

    def _pad(self, line: int | None) -> None:
        assert self.file is not None
        if line is not None and line > self.line:
            self.file.write("\n" * (line - self.line))
            self.line = line

    def mark(self, element: etree._Element) -> None:
        state = element.get(_STATE)
        if state not in _STATES:
            raise XMLImportError(
                f"{self.path.name}: {self.what}row {self.rows + 1} (line "
                f"{element.sourceline}): diffgr:hasChanges={state!r} is "
                "not inserted, modified or descent",
                row=self.rows + 1,
            )
        self.rows += 1
        self.marks[decode_name(str(element.tag))].append(
            Mark(element.get(_ID), _STATES[state], self.rows, element.sourceline)
        )
        for name in _BOOKKEEPING:
            element.attrib.pop(name, None)

    def write(self, element: etree._Element) -> None:
        assert self.file is not None
        self._pad(element.sourceline)
        text = etree.tostring(element, encoding="unicode", with_tail=False)
        self.file.write(text)
        self.line += text.count("\n")

    def close(self) -> None:
        if self.file is not None:
            self.file.write(f"</{self.root}>\n")
            self.file.close()
            self.file = None


def _text(element: etree._Element, path: Path, where: str, *, tail_only: bool = False) -> None:
    """Refuse text between elements where only rows belong (nothing may be dropped)."""
    texts = [element.tail] if tail_only else [element.text, *(c.tail for c in element)]
    for text in texts:
        if text and text.strip():
            raise XMLImportError(
                f"{path.name}: text {text.strip()[:40]!r} inside {where} "
                f"(line {element.sourceline}), where only rows belong"
            )


def _split(path: Path, model: XsdModel, workdir: Path) -> tuple[_Section, _Section]:
    """Copy the current rows and the before images into two documents of their own."""
    current = _Section(workdir / "current" / path.name, "")
    before = _Section(workdir / "before" / path.name, "diffgr:before ")
    for part in (current, before):
        part.path.parent.mkdir()
    nested = {name: table.nested_in for name, table in model.tables.items()}
    check_prolog(path, "XML file")
    stack: list[tuple[str, bool]] = []  # (tag, is a row) per open element
    section: _Section | None = None
    seen: set[str] = set()
    dataset = model.dataset
    written: list[etree._Element] = []
    try:
        with open(path, "rb") as f:
            events = etree.iterparse(f, events=("start", "end"), **SAFE_OPTIONS)
            events.resolvers.add(RefuseResolver())
            for event, element in events:
                tag = element.tag if isinstance(element.tag, str) else "?"
                depth = len(stack) + (event == "start")
                if event == "start":
                    if depth == 1:
                        refuse_doctype(element.getroottree(), path, "XML file")
                        if tag != DIFFGRAM_ROOT:
                            raise XMLImportError(
                                f"{path.name}: the root element is {tag!r}, not diffgr:diffgram"
                            )
                    elif depth == 2:
                        kind = (
                            "before"
                            if tag == _BEFORE
                            else "errors"
                            if tag == _ERRORS
                            else "current"
                            if "}" not in tag
                            else None
                        )
                        if kind is None or kind in seen:
                            what = "a second" if kind else "an unexpected element"
                            raise XMLImportError(
                                f"{path.name}: {what} {tag!r} in the DiffGram "
                                f"(line {element.sourceline})"
                            )
                        seen.add(kind)
                        section = (
                            None if kind == "errors" else (current if kind == "current" else before)
                        )
                        if kind == "current":
                            dataset = tag
                        if section is not None:
                            section.open(dataset if kind == "before" else tag, element.sourceline)
                    row = (
                        section is not None
                        and depth >= 3
                        and (
                            depth == 3
                            or (
                                section is current
                                and stack[-1][1]
                                and nested.get(tag) == stack[-1][0]
                            )
                        )
                    )
                    stack.append((tag, row))
                    continue
                _, row = stack.pop()
                if section is not None and row:
                    section.mark(element)
                    if depth == 3:
                        section.write(element)
                        for done in written:  # their tails are complete by now
                            _text(
                                done, path, f"the {section.what or 'current '}rows", tail_only=True
                            )
                            element.getparent().remove(done)
                        written = [element]
                elif depth == 2:
                    if section is not None:
                        _text(element, path, f"the {section.what or 'current '}rows")
                        section.close()
                    written = []
                    element.clear()
                    section = None
                elif depth == 1:
                    _text(element, path, "diffgr:diffgram")
                elif section is None and depth > 2:
                    element.clear()  # diffgr:errors: annotations, not kept
    except etree.XMLSyntaxError as exc:
        raise syntax_error(exc, path, "XML file") from None
    finally:
        current.close()
        before.close()
    if stack:
        raise XMLImportError(
            f"{path.name}: the document ends before its root element is "
            "closed; nothing was imported"
        )
    return current, before


# -- which tables ------------------------------------------------------------------------------


def peek_diffgram(path: Path) -> tuple[str | None, set[str]]:
    """The dataset element's name and the row tags directly under it and diffgr:before."""
    names: set[str] = set()
    dataset = None
    depth = 0
    check_prolog(path, "XML file")
    with open(path, "rb") as f:
        events = etree.iterparse(f, events=("start", "end"), **SAFE_OPTIONS)
        events.resolvers.add(RefuseResolver())
        parent = ""
        try:
            for event, element in events:
                if event == "end":
                    depth -= 1
                    if depth >= 1:
                        element.clear()
                    continue
                depth += 1
                if depth == 1:
                    refuse_doctype(element.getroottree(), path, "XML file")
                elif depth == 2:
                    parent = str(element.tag)
                    if "}" not in parent:
                        dataset = parent
                elif depth == 3 and parent != _ERRORS:
                    names.add(decode_name(str(element.tag)))
        except etree.XMLSyntaxError as exc:
            raise syntax_error(exc, path, "XML file") from None
    return dataset, names


def diffgram_tables(xml_path: str | Path, xsd_path: str | Path | None = None) -> set[str]:
    """The tables a DiffGram may write: its XSD's, else those its rows name at the top."""
    if xsd_path is not None:
        return {decode_name(t) for t in load_xsd(xsd_path).tables}
    return peek_diffgram(Path(xml_path))[1]


def _models(data: DataSet, schemas: list[TableSchema]) -> tuple[XsdModel, XsdModel]:
    """Schemas for the current rows (nested as the DataSet is) and the before images
    (always flat: .NET writes them so)."""
    flat = parse_xsd_tree(dataset_xsd_tree(schemas, list(data.relations), data.name))
    if not data.nested:
        return flat, flat
    return parse_xsd_tree(
        dataset_xsd_tree(schemas, list(data.relations), data.name, nested=True)
    ), flat


# -- reading each section ---------------------------------------------------------------------


def _read(
    schemas: dict[str, TableSchema], model: XsdModel, section: _Section, name: str
) -> dict[str, list[tuple[Any, ...]]]:
    """The section's rows per table: validated, decoded, keys unique (references are the
    database's to check: a DiffGram need not hold the parents of its rows)."""
    if not section.rows:
        return {}

    def plans(model: XsdModel) -> list[TablePlan]:
        out = []
        for table, schema in schemas.items():
            if encode_name(table) in model.tables:
                plan = table_plan(schema, model, encode_name(table))
                plan.constraints = [c for c in plan.constraints if c[0] != "keyref"]
                out.append(plan)
        return out

    try:
        reader = Reader(next(iter(schemas.values())), section.path, None, model=model, plans=plans)
        rows = numbered_rows(reader)[0]
    except XMLImportError as exc:
        message = str(exc)
        if section.what and message.startswith(f"{name}: "):
            message = f"{name}: {section.what}{message[len(name) + 2 :]}"
        raise XMLImportError(message, row=exc.row, column=exc.column) from None
    for table, marks in section.marks.items():
        if len(rows.get(table, ())) != len(marks):  # pragma: no cover - the split's own check
            raise XMLImportError(f"{name}: rows of {table!r} were miscounted")
    return rows


# -- reading a DiffGram -----------------------------------------------------------------------


@dataclass(frozen=True)
class DiffGramSection:
    """The rows of one section of a DiffGram (current rows, or ``diffgr:before``), decoded,
    per table, and the :class:`Mark` of each, in document order."""

    rows: dict[str, list[tuple[Any, ...]]]
    marks: dict[str, list[Mark]]


def read_diffgram(
    xml_path: str | Path, data: DataSet, *, registry: TypeRegistry = default_registry
) -> tuple[DiffGramSection, DiffGramSection]:
    """The current rows and the before images of a DiffGram of the DataSet ``data``,
    validated and decoded (see the module); nothing is compared with any database here."""
    path = Path(xml_path)
    schemas = {t: table_schema(cls, registry) for t, cls in data.tables.items()}
    current_model, before_model = _models(data, list(schemas.values()))
    with tempfile.TemporaryDirectory(prefix="entityworks-diffgram-") as tmp:
        current, before = _split(path, current_model, Path(tmp))
        now = _read(schemas, current_model, current, path.name)
        was = _read(schemas, before_model, before, path.name)
    return DiffGramSection(now, dict(current.marks)), DiffGramSection(was, dict(before.marks))


__all__ = [
    "MSDATA_NS",
    "DiffGramSection",
    "Mark",
    "diffgram_tables",
    "is_diffgram",
    "peek_diffgram",
    "read_diffgram",
]

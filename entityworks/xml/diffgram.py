""".NET DiffGrams: a DataSet's changes (``DataSet.WriteXml(..., XmlWriteMode.DiffGram)``)
applied to the tables that hold the DataSet, in one transaction.

A DiffGram holds the current rows (``diffgr:hasChanges="inserted"`` or ``"modified"``, or
none for an unchanged row) and, in ``diffgr:before``, the original image of every modified
or deleted row, paired with its current row by ``diffgr:id``. Rows are matched with the
database by primary key, and the document is applied only if the database holds exactly
what the DiffGram says it started from; anything else is a conflict that refuses the whole
document (nothing is written):

- a before image (of a modified or deleted row) must equal the stored row with its key;
  a stored row that is missing, or differs in any column, is a conflict;
- an inserted row (or a modified row whose key changed) must not have a stored row under
  its new key, unless a before image frees that key in the same DiffGram;
- an unchanged row is inserted when no stored row has its key, and must equal the stored
  row otherwise.

Changes are then made per key: rows whose key only the current rows hold are inserted
(parents first), keys both sections hold are updated to the current row (parents first),
keys only ``diffgr:before`` holds are deleted (children first) -- so a changed key, a moved
child and a delete followed by an insert under the same key all keep the foreign keys.
The result is what .NET's ``AcceptChanges()`` gives. ``diffgr:errors`` and row errors are
annotations and are not kept.

Reading keeps every guarantee of :mod:`entityworks.xml.table`: the hardened parser (no DTD,
entities, XInclude or network; compressed input refused; libxml2's limits on text size and
depth), one streaming pass that splits the document into its two sections (each a plain
DataSet document, line numbers kept), then the XSD validation and typed decoding of the
DataSet import, with errors naming the section, row, line and column. The rows are held in
memory (a DiffGram is one DataSet's changes).
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
import re
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from lxml import etree

from .._gcpause import paused_gc
from ..errors import ValueEncodingError, WriteError, XMLImportError
from ..sql.filters import col
from .dataset import DataSet, dataset_for, dataset_of
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
from .xsd import (
    XsdModel,
    dataset_xsd_tree,
    decode_name,
    encode_name,
    is_dataset,
    load_xsd,
    parse_xsd_tree,
)

MSDATA_NS = "urn:schemas-microsoft-com:xml-msdata"
_BEFORE = f"{{{DIFFGRAM_NS}}}before"
_ERRORS = f"{{{DIFFGRAM_NS}}}errors"
_ID = f"{{{DIFFGRAM_NS}}}id"
_STATE = f"{{{DIFFGRAM_NS}}}hasChanges"
#: Row attributes that describe the DiffGram itself; any other attribute is refused by the
#: XSD validation like in any document.
_BOOKKEEPING = (_ID, _STATE, f"{{{DIFFGRAM_NS}}}hasErrors", f"{{{DIFFGRAM_NS}}}parentId",
                f"{{{MSDATA_NS}}}rowOrder")
#: ``diffgr:hasChanges`` values; "descent" marks an unchanged row with changed nested rows.
_STATES = {None: "unchanged", "descent": "unchanged", "inserted": "inserted",
           "modified": "modified"}
_CHUNK = 500


@dataclass(frozen=True)
class Changes:
    """What a DiffGram did to one table (by key: a changed key is a delete and an insert)."""

    inserted: int = 0
    updated: int = 0
    deleted: int = 0
    unchanged: int = 0


@dataclass(frozen=True)
class _Mark:
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
        self.marks: dict[str, list[_Mark]] = defaultdict(list)
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
            raise XMLImportError(f"{self.path.name}: {self.what}row {self.rows + 1} (line "
                                 f"{element.sourceline}): diffgr:hasChanges={state!r} is "
                                 "not inserted, modified or descent", row=self.rows + 1)
        self.rows += 1
        self.marks[decode_name(str(element.tag))].append(
            _Mark(element.get(_ID), _STATES[state], self.rows, element.sourceline))
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


def _text(element: etree._Element, path: Path, where: str, *, tail_only: bool = False
          ) -> None:
    """Refuse text between elements where only rows belong (nothing may be dropped)."""
    texts = [element.tail] if tail_only else [element.text, *(c.tail for c in element)]
    for text in texts:
        if text and text.strip():
            raise XMLImportError(f"{path.name}: text {text.strip()[:40]!r} inside {where} "
                                 f"(line {element.sourceline}), where only rows belong")


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
                            raise XMLImportError(f"{path.name}: the root element is {tag!r}, "
                                                 "not diffgr:diffgram")
                    elif depth == 2:
                        kind = ("before" if tag == _BEFORE else "errors" if tag == _ERRORS
                                else "current" if "}" not in tag else None)
                        if kind is None or kind in seen:
                            what = "a second" if kind else "an unexpected element"
                            raise XMLImportError(f"{path.name}: {what} {tag!r} in the DiffGram "
                                                 f"(line {element.sourceline})")
                        seen.add(kind)
                        section = None if kind == "errors" else (
                            current if kind == "current" else before)
                        if kind == "current":
                            dataset = tag
                        if section is not None:
                            section.open(dataset if kind == "before" else tag,
                                         element.sourceline)
                    row = section is not None and depth >= 3 and (
                        depth == 3 or (section is current and stack[-1][1]
                                       and nested.get(tag) == stack[-1][0]))
                    stack.append((tag, row))
                    continue
                _, row = stack.pop()
                if section is not None and row:
                    section.mark(element)
                    if depth == 3:
                        section.write(element)
                        for done in written:  # their tails are complete by now
                            _text(done, path, f"the {section.what or 'current '}rows",
                                  tail_only=True)
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
        raise XMLImportError(f"{path.name}: the document ends before its root element is "
                             "closed; nothing was imported")
    return current, before


# -- which tables ------------------------------------------------------------------------------

def _peek(path: Path) -> tuple[str | None, set[str]]:
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
    return _peek(Path(xml_path))[1]


def _recorded_relations(store: Any, table: str) -> list[dict[str, Any]]:
    from ..sql import logical

    with store._connection() as conn:
        rows = logical.recorded(conn, table)
    facts: dict[str, Any] = next((json.loads(r.details or "{}") for r in rows
                  if r.logical_type == logical.TABLE_ROW), {})
    return list(facts.get("relations", []))


def _reflected(store: Any, path: Path) -> DataSet:
    """The DataSet of the tables the DiffGram's rows belong to, with every table related to
    them (as recorded when they were imported), from the database itself."""
    dataset, names = _peek(path)
    existing = set(store.table_names())
    chosen: list[str] = []
    queue = sorted(names)
    while queue:
        table = queue.pop(0)
        if table in chosen:
            continue
        if table not in existing:
            raise XMLImportError(f"{path.name}: rows of table {table!r}, which the database "
                                 "does not have; a DiffGram changes existing tables (import "
                                 "the DataSet first, or give its XSD)")
        chosen.append(table)
        for r in _recorded_relations(store, table):
            queue += [r["parent"], r["child"]]
    classes = [store.reflect(t) for t in chosen]
    return dataset_of(classes, name=dataset or None, registry=store.registry)


def _models(data: DataSet, registry: Any) -> tuple[XsdModel, XsdModel]:
    """Schemas for the current rows (nested as the DataSet is) and the before images
    (always flat: .NET writes them so)."""
    from ..model.schema import table_schema

    schemas = [table_schema(cls, registry) for cls in data.tables.values()]
    flat = parse_xsd_tree(dataset_xsd_tree(schemas, list(data.relations), data.name))
    if not data.nested:
        return flat, flat
    return parse_xsd_tree(dataset_xsd_tree(schemas, list(data.relations), data.name,
                                           nested=True)), flat


# -- reading each section ---------------------------------------------------------------------

def _read(store: Any, data: DataSet, model: XsdModel, section: _Section, name: str
          ) -> dict[str, list[tuple[Any, ...]]]:
    """The section's rows per table: validated, decoded, keys unique (references are the
    database's to check: a DiffGram need not hold the parents of its rows)."""
    from .dataset import _rows
    from .table import _plan, _Reader

    if not section.rows:
        return {}
    schemas = {t: store.schema(cls) for t, cls in data.tables.items()}

    def plans(model: XsdModel) -> list[Any]:
        out = []
        for table, schema in schemas.items():
            if encode_name(table) in model.tables:
                plan = _plan(schema, model, encode_name(table))
                plan.constraints = [c for c in plan.constraints if c[0] != "keyref"]
                out.append(plan)
        return out

    try:
        reader = _Reader(next(iter(schemas.values())), section.path, None, model=model,
                         plans=plans)
        rows = _rows(reader)
    except XMLImportError as exc:
        message = str(exc)
        if section.what and message.startswith(f"{name}: "):
            message = f"{name}: {section.what}{message[len(name) + 2:]}"
        raise XMLImportError(message, row=exc.row, column=exc.column) from None
    for table, marks in section.marks.items():
        if len(rows.get(table, ())) != len(marks):  # pragma: no cover - the split's own check
            raise XMLImportError(f"{name}: rows of {table!r} were miscounted")
    return rows


# -- comparing and applying -------------------------------------------------------------------

def _same(a: Any, b: Any) -> bool:
    """Equal and of one type: floats to the bit (NaN equals NaN, -0.0 is not 0.0),
    datetimes with their offsets, Decimals by value."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (
            a == b and math.copysign(1.0, a) == math.copysign(1.0, b))
    if isinstance(a, dt.datetime):
        return bool(a == b and a.utcoffset() == b.utcoffset())
    if isinstance(a, decimal.Decimal):
        return bool(a == b)
    return bool(a == b)


def _difference(stored: tuple[Any, ...], row: tuple[Any, ...], names: list[str]
                ) -> str | None:
    for column, a, b in zip(names, stored, row, strict=True):
        if not _same(a, b):
            return column
    return None


def _lock(store: Any, cls: type, where: Any) -> None:
    """Lock the stored rows the checks read until the transaction ends (PostgreSQL,
    MariaDB: ``SELECT ... FOR UPDATE``), so that no other writer changes them between the
    check and the write. SQLite locks the whole database for the first write instead, and
    refuses the write if another connection committed since the read began."""
    if store.dialect.name == "sqlite":
        return
    import sqlalchemy as sa

    from ..sql.filters import compile_where

    model = store._model(cls)
    key = model.table.c[store.schema(cls).require_key("a DiffGram").name]
    condition = compile_where(where, model.table, model.schema)
    with store._connection() as conn:  # no filter: every row (.where(None) is WHERE NULL)
        conn.execute(sa.select(key).where(sa.true() if condition is None else condition)
                     .with_for_update()).fetchall()


@dataclass
class _Plan:
    """The writes of one table."""

    inserts: list[tuple[Any, ...]]
    updates: list[tuple[Any, ...]]
    deletes: list[Any]
    unchanged: int


def _conflict(name: str, table: str, key: str, value: Any, mark: _Mark, what: str,
              message: str, column: str | None = None) -> XMLImportError:
    line = f", line {mark.line}" if mark.line else ""
    return XMLImportError(f"{name}: conflict in table {table!r}, {what}row {mark.row}{line} "
                          f"({key}={value!r}): {message}; nothing was changed",
                          row=mark.row, column=column)


def _plan_table(store: Any, cls: type, table: str, name: str,
                current: list[tuple[Any, ...]], current_marks: list[_Mark],
                before: list[tuple[Any, ...]], before_marks: list[_Mark]) -> _Plan:
    schema = store.schema(cls)
    names = schema.column_names
    key = schema.primary_key
    if key is None and schema.composite:
        raise XMLImportError(f"{name}: table {table!r} has a composite primary key; DiffGram "
                             "rows are matched with stored rows by a single-column key")
    if key is None:
        raise XMLImportError(f"{name}: table {table!r} has no primary key; DiffGram rows are "
                             "matched with stored rows by key")
    k = names.index(key.name)
    by_id: dict[str, _Mark] = {}
    for mark in current_marks:
        if mark.id is not None:
            if mark.id in by_id:
                raise _conflict(name, table, key.name, mark.id, mark, "",
                                f"diffgr:id {mark.id!r} is used twice")
            by_id[mark.id] = mark
    before_by_key: dict[Any, tuple[tuple[Any, ...], _Mark]] = {}
    before_ids: set[str] = set()
    for row, mark in zip(before, before_marks, strict=True):
        partner = by_id.get(mark.id) if mark.id is not None else None
        if mark.id is None or mark.id in before_ids or (
                partner is not None and partner.state != "modified"):
            why = ("has no diffgr:id" if mark.id is None else "repeats a diffgr:id"
                   if mark.id in before_ids or partner is None
                   else f"belongs to a row marked {partner.state}")
            raise _conflict(name, table, key.name, row[k], mark, "diffgr:before ",
                            f"the before image {why}")
        before_ids.add(mark.id)
        if row[k] in before_by_key:
            raise _conflict(name, table, key.name, row[k], mark, "diffgr:before ",
                            "two before images have this key")
        before_by_key[row[k]] = (row, mark)
    keys = {row[k] for row in current} | set(before_by_key)
    stored: dict[Any, tuple[Any, ...]] = {}
    listed = sorted(keys, key=repr)
    for start in range(0, len(listed), _CHUNK):
        where = col(key.name).in_(listed[start:start + _CHUNK])
        _lock(store, cls, where)
        for batch in store.rows(cls, where=where):
            stored.update((r[k], tuple(r)) for r in batch)
    plan = _Plan([], [], [], 0)
    current_keys: set[Any] = set()
    for row, mark in zip(current, current_marks, strict=True):
        value = row[k]
        if value in current_keys:
            raise _conflict(name, table, key.name, value, mark, "", "two current rows have "
                            "this key")
        current_keys.add(value)
        if mark.state == "modified" and mark.id not in before_ids:
            raise _conflict(name, table, key.name, value, mark, "",
                            "a modified row without a before image (diffgr:before)")
        have = stored.get(value)
        if mark.state == "unchanged":
            if value in before_by_key:
                raise _conflict(name, table, key.name, value, mark, "", "an unchanged row "
                                "whose key a before image (diffgr:before) also has")
            if have is None:
                plan.inserts.append(row)
                continue
            column = _difference(have, row, names)
            if column is not None:
                raise _conflict(name, table, key.name, value, mark, "",
                                f"unchanged in the DiffGram, but the stored row differs in "
                                f"column {column!r} ({have[names.index(column)]!r}, not "
                                f"{row[names.index(column)]!r})", column)
            plan.unchanged += 1
        elif value in before_by_key:
            plan.updates.append(row)
        elif have is not None:
            raise _conflict(name, table, key.name, value, mark, "",
                            f"{mark.state}, but a stored row already has this key")
        else:
            plan.inserts.append(row)
    for value, (row, mark) in before_by_key.items():
        have = stored.get(value)
        if have is None:
            what = "changes" if value in current_keys else "deletes"
            raise _conflict(name, table, key.name, value, mark, "diffgr:before ",
                            f"the DiffGram {what} this row, but no stored row has its key")
        column = _difference(have, row, names)
        if column is not None:
            raise _conflict(name, table, key.name, value, mark, "diffgr:before ",
                            f"the stored row differs from the before image in column "
                            f"{column!r} ({have[names.index(column)]!r}, not "
                            f"{row[names.index(column)]!r})", column)
        if value not in current_keys:
            plan.deletes.append(value)
    return plan


def _write(store: Any, data: DataSet, plans: dict[str, _Plan], name: str) -> None:
    from .table import _builder

    order = [t for t in data.tables if t in plans]
    step, table, rows = "", "", []  # what was being written, for the error
    try:
        with store.transaction():
            for table in order:  # parents first
                step, rows = "insert", plans[table].inserts
                store.insert_many(_builder(store.schema(data.tables[table]))(rows))
            for table in order:
                step = "update"
                built = _builder(store.schema(data.tables[table]))(plans[table].updates)
                for n, obj in enumerate(built):
                    rows = [plans[table].updates[n]]
                    store.update(obj)
            for table in reversed(order):  # children first
                step, rows = "delete", []
                cls = data.tables[table]
                key = store.schema(cls).require_key("a DiffGram").name
                deletes = plans[table].deletes
                for start in range(0, len(deletes), _CHUNK):
                    store.delete(cls, where=col(key).in_(deletes[start:start + _CHUNK]))
    except (WriteError, ValueEncodingError) as exc:
        schema = store.schema(data.tables[table])
        which = ""
        if schema.primary_key is not None and rows and (exc.row or 0) < len(rows):
            k = schema.column_names.index(schema.primary_key.name)
            which = f" ({schema.primary_key.name}={rows[exc.row or 0][k]!r})"
        detail = re.sub(r"^(row \d+, )", "", str(exc))
        raise XMLImportError(f"{name}: cannot {step} a row of {table!r}{which}: {detail}; "
                             "nothing was changed", column=getattr(exc, "column", None)
                             ) from exc


def import_diffgram(store: Any, xml_path: str | Path, xsd_path: str | Path | None = None
                    ) -> dict[str, Changes]:
    """Apply a DiffGram to the tables of ``store`` in one transaction (see the module).

    The DataSet's schema comes from ``xsd_path`` (the ``WriteXmlSchema`` file; .NET writes
    no schema into a DiffGram), else from the database: the tables the rows name, as
    recorded when they were imported, with their relations. Returns what changed per table.
    """
    with paused_gc():  # every row is held: collections would walk them again and again
        return _import_diffgram(store, xml_path, xsd_path)


def _import_diffgram(store: Any, xml_path: str | Path, xsd_path: str | Path | None
                     ) -> dict[str, Changes]:
    path = Path(xml_path)
    if xsd_path is not None:
        model = load_xsd(xsd_path)
        if len(model.tables) > 1 and not is_dataset(model):
            raise XMLImportError(f"{Path(xsd_path).name} describes a table with child rows; "
                                 "DiffGrams are applied to DataSets of related tables")
        data = dataset_for(model, registry=store.registry)
    else:
        if not is_diffgram(path):
            raise XMLImportError(f"{path.name} is not a DiffGram (its root is not "
                                 "diffgr:diffgram)")
        data = _reflected(store, path)
        if not data.tables:  # no rows at all: nothing to change
            return {}
    current_model, before_model = _models(data, store.registry)
    with tempfile.TemporaryDirectory(prefix="entityworks-diffgram-") as tmp:
        current, before = _split(path, current_model, Path(tmp))
        now = _read(store, data, current_model, current, path.name)
        was = _read(store, data, before_model, before, path.name)
    existing = set(store.table_names())
    missing = [t for t in data.tables if (t in now or t in was) and t not in existing]
    if missing:
        raise XMLImportError(f"{path.name}: table {missing[0]!r} does not exist; a DiffGram "
                             "changes existing tables (import the DataSet first)")
    plans = {}
    with store.transaction():  # one snapshot for the checks and the writes
        for table, cls in data.tables.items():
            if table in current.marks or table in before.marks:
                plans[table] = _plan_table(store, cls, table, path.name,
                                           now.get(table, []), current.marks.get(table, []),
                                           was.get(table, []), before.marks.get(table, []))
        _write(store, data, plans, path.name)
    return {t: Changes(len(p.inserts), len(p.updates), len(p.deletes), p.unchanged)
            for t, p in plans.items()}


__all__ = ["Changes", "MSDATA_NS", "diffgram_tables", "import_diffgram", "is_diffgram"]

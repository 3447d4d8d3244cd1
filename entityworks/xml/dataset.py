"""Whole .NET DataSets: several tables, their keys and relations, flat or nested, in one file.

A DataSet's XSD declares one row element per table, an ``xs:unique msdata:PrimaryKey`` per
key and an ``xs:keyref`` per ``DataRelation`` (``msdata:IsNested="true"`` when the child's rows
sit inside their parent's row elements). :func:`read_dataset` turns it into one dataclass per
table and the relations between them; :func:`dataset_reader` validates a document against
it (``Store.import_dataset`` imports every table in one transaction, as tables with real
foreign keys: :mod:`entityworks.sql.exchange.dataset`); :func:`write_dataset` writes tables
back in the same shape, which .NET's ``DataSet.ReadXml`` reads to the same tables, columns,
keys, relations and values.

Import holds the rows in memory until the document has been read (the tables go in parents
first, while a nested document gives children first); single tables stream instead. As in
System.Data, a nested row refers to the row element it sits in: its foreign key column takes
that row's key, whatever the column's own element says (or when it has none). A table that
refers to itself is inserted parents first (a document may list a row before the row it
refers to; SQLite and MariaDB check a foreign key row by row), and rows whose references form
a cycle are refused. Relations are over one column each, and keys are single columns: a
composite key or relation is refused with a clear error.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._gcpause import paused_gc
from ..errors import SchemaError, XMLImportError
from ..model.schema import TableSchema, table_schema
from ..registry import TypeRegistry
from ..registry import registry as default_registry
from .reader import Reader, TablePlan, table_plan
from .writer import RowFormatter, write_document
from .xsd import XsdModel, dataclass_for_table, load_inline_xsd, load_xsd
from .xsdwrite import dataset_xsd_tree, decode_name, encode_name

#: Field metadata key of a column that refers to another table's key: ``"customers.id"``.
REFERENCES = "references"


@dataclass(frozen=True)
class Relation:
    """A foreign key between two tables of a DataSet (a .NET ``DataRelation``)."""

    name: str
    parent: str
    parent_column: str
    child: str
    child_column: str
    nested: bool = False


@dataclass(frozen=True)
class DataSet:
    """The tables (parents before children) and relations of a DataSet."""

    name: str
    tables: dict[str, type]
    relations: tuple[Relation, ...] = ()

    def __getitem__(self, table: str) -> type:
        return self.tables[table]

    @property
    def nested(self) -> bool:
        return any(r.nested for r in self.relations)


# -- reading the schema ------------------------------------------------------------------------


def _relations(model: XsdModel) -> list[Relation]:
    keys = {c.name: c for c in model.constraints if c.kind in ("unique", "key")}
    out = []
    for ref in (c for c in model.constraints if c.kind == "keyref"):
        target = keys.get(ref.refer or "")
        if target is None:
            raise XMLImportError(
                f"relation {ref.name!r} refers to {ref.refer!r}, which is no key of the XSD"
            )
        if len(ref.fields) != 1 or len(target.fields) != 1:
            raise XMLImportError(
                f"relation {ref.name!r} is over several columns; only "
                "single-column relations are imported"
            )
        out.append(
            Relation(
                ref.name,
                decode_name(target.table),
                decode_name(target.fields[0]),
                decode_name(ref.table),
                decode_name(ref.fields[0]),
                ref.nested,
            )
        )
    for name, table in model.tables.items():
        if table.nested_in and not any(r.child == decode_name(name) and r.nested for r in out):
            raise XMLImportError(
                f"table {decode_name(name)!r} is nested in "
                f"{decode_name(table.nested_in)!r} without a relation "
                "(xs:keyref msdata:IsNested) saying which column refers to "
                "its parent"
            )
    return out


def _parents_first(names: list[str], relations: list[Relation]) -> list[str]:
    order: list[str] = []
    parents = defaultdict(set)
    for r in relations:
        if r.parent != r.child:
            parents[r.child].add(r.parent)
    visiting: set[str] = set()

    def visit(name: str) -> None:
        if name in order:
            return
        if name in visiting:
            raise XMLImportError(f"the relations of table {name!r} form a cycle")
        visiting.add(name)
        for parent in sorted(parents[name]):
            visit(parent)
        visiting.discard(name)
        order.append(name)

    for name in names:
        visit(name)
    return order


def dataset_for(model: XsdModel, *, registry: TypeRegistry = default_registry) -> DataSet:
    """The :class:`DataSet` an :class:`XsdModel` describes (see :func:`read_dataset`)."""
    relations = _relations(model)
    refers = {(r.child, r.child_column): r for r in relations}
    names = _parents_first([decode_name(t) for t in model.tables], relations)
    tables = {}
    for name in names:
        cls = dataclass_for_table(
            model,
            encode_name(name),
            registry=registry,
            extra=functools.partial(_reference, refers, name),
        )
        cls.__dataset__ = model.dataset  # type: ignore[attr-defined]
        tables[name] = cls
    for r in relations:
        key = table_schema(tables[r.parent], registry).primary_key
        if key is None or key.name != r.parent_column:
            raise XMLImportError(
                f"relation {r.name!r} refers to {r.parent}."
                f"{r.parent_column}, which is not the key of {r.parent!r}"
            )
    return DataSet(model.dataset, tables, tuple(relations))


def _reference(refers: dict[tuple[str, str], Relation], table: str, column: str) -> dict[str, Any]:
    r = refers.get((table, column))
    if r is None:
        return {}
    return {REFERENCES: f"{r.parent}.{r.parent_column}", "relation": r.name, "nested": r.nested}


def read_dataset(xsd_path: str | Path, *, registry: TypeRegistry = default_registry) -> DataSet:
    """Read a DataSet's XSD (or a document's inline one) into its tables and relations."""
    model = load_inline_xsd(xsd_path) if _is_document(xsd_path) else load_xsd(xsd_path)
    assert model is not None
    return dataset_for(model, registry=registry)


def _is_document(path: str | Path) -> bool:
    """True for an XML document carrying its schema inline (not an XSD itself)."""
    try:
        return load_inline_xsd(path) is not None
    except XMLImportError:
        return False


def dataset_of(
    classes: Sequence[type],
    *,
    name: str | None = None,
    nested: bool | None = None,
    registry: TypeRegistry = default_registry,
) -> DataSet:
    """A :class:`DataSet` of dataclasses whose fields name their ``references`` (field
    metadata, as read from an XSD, or ``column(references=...)`` foreign keys)."""
    tables = {table_schema(cls, registry).name: cls for cls in classes}
    relations = []
    for child, cls in tables.items():
        for f in dataclasses.fields(cls):
            target = f.metadata.get(REFERENCES)
            if not target:
                continue
            parent, _, column = target.partition(".")
            if parent not in tables:
                raise SchemaError(
                    f"{cls.__qualname__}.{f.name} refers to table {parent!r}, "
                    "which is not part of the DataSet",
                    cls=cls,
                    field=f.name,
                )
            relations.append(
                Relation(
                    f.metadata.get("relation") or f"{parent}_{child}",
                    parent,
                    column,
                    child,
                    f.name,
                    bool(f.metadata.get("nested")) if nested is None else nested,
                )
            )
        # foreign keys declared with column(references=...) to a table of the DataSet
        for c in table_schema(cls, registry).columns:
            if c.references is None:
                continue
            target = table_schema(c.references, registry)
            if target.name in tables and target.primary_key is not None:
                relations.append(
                    Relation(
                        f"{target.name}_{child}",
                        target.name,
                        target.primary_key.name,
                        child,
                        c.name,
                        bool(nested),
                    )
                )
    order = _parents_first(list(tables), relations)
    first = tables[order[0]] if order else None
    dataset = name or getattr(first, "__dataset__", None) or "NewDataSet"
    return DataSet(dataset, {n: tables[n] for n in order}, tuple(relations))


# -- reading ------------------------------------------------------------------------------------


def dataset_reader(
    schemas: Mapping[str, TableSchema], model: XsdModel, xml_path: str | Path
) -> Reader:
    """A reader of a DataSet document holding the tables ``schemas`` (by table name), as
    ``model`` describes them."""

    def plans(model: XsdModel) -> list[TablePlan]:
        missing = set(model.tables) - {encode_name(n) for n in schemas}
        if missing:
            raise XMLImportError(
                f"the XSD declares table {decode_name(sorted(missing)[0])!r}"
                ", which the DataSet does not hold"
            )
        return [
            table_plan(schema, model, encode_name(name))
            for name, schema in schemas.items()
            if encode_name(name) in model.tables
        ]

    first = next(iter(schemas.values()))
    return Reader(first, xml_path, None, model=model, plans=plans)


def numbered_rows(reader: Reader) -> tuple[dict[str, list[tuple[Any, ...]]], dict[str, list[int]]]:
    """Every row of the document, per table (validated, keys and references checked), and
    each row's number in the document (for errors)."""
    out: dict[str, list[tuple[Any, ...]]] = defaultdict(list)
    numbers: dict[str, list[int]] = defaultdict(list)
    for plan, rows in reader.batches():
        out[decode_name(plan.tag)].extend(rows)
        numbers[decode_name(plan.tag)].extend(reader.numbers)
    return out, numbers


# -- writing -----------------------------------------------------------------------------------


def dataset_xsd_bytes(
    data: DataSet, *, nested: bool | None = None, registry: TypeRegistry = default_registry
) -> bytes:
    from lxml import etree

    tree = _xsd_tree(data, nested, registry)
    return etree.tostring(
        tree, xml_declaration=True, encoding="utf-8", standalone=True, pretty_print=True
    )


def _xsd_tree(data: DataSet, nested: bool | None, registry: TypeRegistry) -> Any:
    schemas = [table_schema(cls, registry) for cls in data.tables.values()]
    return dataset_xsd_tree(
        schemas, list(data.relations), data.name, nested=data.nested if nested is None else nested
    )


def write_dataset(
    data: DataSet,
    rows: Mapping[str, Iterable[Sequence[Any]]],
    xml_path: Any,
    xsd_path: str | Path | None = None,
    *,
    nested: bool | None = None,
    inline_schema: bool = False,
    registry: TypeRegistry = default_registry,
    diffgram: bool = False,
) -> dict[str, int]:
    """Write a DataSet document: ``rows`` per table name, as column tuples (table order).

    Flat: each table's rows in turn, parents first. Nested: each child row inside its
    parent's row element (the whole child tables are held in memory to group them).
    ``diffgram``: a .NET DiffGram whose rows are all current and unchanged (each with the
    ``diffgr:id`` and ``msdata:rowOrder`` .NET gives it), no ``diffgr:before``.
    """
    if diffgram and inline_schema:
        raise SchemaError("a DiffGram carries no schema; write the XSD beside it")
    nested = data.nested if nested is None else nested
    schemas = {name: table_schema(cls, registry) for name, cls in data.tables.items()}
    formatters = {name: RowFormatter(schema) for name, schema in schemas.items()}
    counts = dict.fromkeys(schemas, 0)
    starts = {name: f"<{encode_name(name)}>" for name in schemas}

    def opened(name: str, batch: Sequence[Sequence[Any]]) -> list[str]:
        texts = formatters[name].open_rows(batch, counts[name])
        if diffgram:  # .NET's own row ids: the table name and the 1-based row number
            start, size, tag = counts[name], len(starts[name]), encode_name(name)
            texts = [
                f'<{tag} diffgr:id="{tag}{start + i + 1}" msdata:rowOrder="{start + i}">'
                + text[size:]
                for i, text in enumerate(texts)
            ]
        counts[name] += len(batch)
        return texts

    def flat() -> Iterator[str]:
        for name, formatter in formatters.items():
            for batch in _batches(rows.get(name, ())):
                if diffgram:
                    yield formatter.close.join(opened(name, batch)) + formatter.close
                    continue
                yield formatter.format(batch, counts[name])
                counts[name] += len(batch)

    def nest() -> Iterator[str]:
        children = defaultdict(list)  # parent table -> [(relation, grouped rows)]
        roots = [n for n in schemas if not any(r.child == n for r in data.relations)]
        for r in data.relations:
            index = schemas[r.child].column_names.index(r.child_column)
            grouped: dict[Any, list[Sequence[Any]]] = defaultdict(list)
            for row in rows.get(r.child, ()):
                grouped[row[index]].append(row)
            children[r.parent].append((r, grouped))

        def render(name: str, batch: Sequence[Sequence[Any]]) -> Iterator[str]:
            pk = schemas[name].primary_key
            key = schemas[name].column_names.index(pk.name) if pk else None
            for row, text in zip(batch, opened(name, batch), strict=True):
                yield text
                for r, grouped in children[name]:
                    kids = grouped.get(
                        row[schemas[name].column_names.index(r.parent_column)]
                        if key is not None
                        else None,
                        [],
                    )
                    if kids:
                        yield from render(r.child, kids)
                yield formatters[name].close

        for name in roots:
            for batch in _batches(rows.get(name, ())):
                yield "".join(render(name, batch))
        # nest() runs on the lists ``rows`` is turned into below
        orphans = sum(
            len(v)  # type: ignore[arg-type, misc]
            for n, v in rows.items()
            if n not in roots
        ) - sum(c for n, c in counts.items() if n not in roots)
        if orphans:
            raise XMLImportError(f"{orphans} child row(s) have no parent row to nest in")

    rows = {name: list(r) for name, r in rows.items()} if nested else rows
    xsd = (
        None
        if xsd_path is None
        else (xsd_path, lambda: dataset_xsd_bytes(data, nested=nested, registry=registry))
    )
    inline = (lambda: _xsd_tree(data, nested, registry).getroot()) if inline_schema else None
    with paused_gc():  # as write_xml: the rows hold plain values, nothing to collect
        write_document(xml_path, nest() if nested else flat(), data.name, xsd, inline, diffgram)
    return counts


class Batched:
    """Rows that come in batches (a Store query): flat writing keeps the batches as they are,
    iterating gives the rows."""

    def __init__(self, batches: Iterable[Sequence[Sequence[Any]]]) -> None:
        self.batches = batches

    def __iter__(self) -> Iterator[Sequence[Any]]:
        for batch in self.batches:
            yield from batch


def _batches(rows: Iterable[Sequence[Any]], size: int = 5_000) -> Iterator[list[Any]]:
    if isinstance(rows, Batched):
        yield from (
            batch if isinstance(batch, list) else list(batch) for batch in rows.batches if batch
        )
        return
    batch: list[Any] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def relations_json(data: DataSet) -> str:
    return json.dumps([dataclasses.asdict(r) for r in data.relations])


__all__ = [
    "REFERENCES",
    "Batched",
    "DataSet",
    "Relation",
    "dataset_for",
    "dataset_of",
    "dataset_reader",
    "dataset_xsd_bytes",
    "numbered_rows",
    "read_dataset",
    "write_dataset",
]

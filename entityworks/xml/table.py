"""XML data in the .NET ``DataTable.WriteXml`` shape: one dataclass (and its child rows).

Export writes instances (or column tuples) through the streaming writer
(:mod:`~entityworks.xml.writer`); import reads them back through the validating reader
(:mod:`~entityworks.xml.reader`), which never trusts the document. Moving rows between a
database and XML is the SQL side's (:mod:`entityworks.sql.exchange.xml`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from operator import attrgetter
from pathlib import Path
from typing import Any, TypeVar

from .._gcpause import paused_gc
from ..errors import ValueEncodingError
from ..model.schema import TableSchema, table_schema
from ..registry import TypeRegistry
from ..registry import registry as default_registry
from .reader import BATCH, Reader, instances
from .writer import RowFormatter, Target, write_document
from .xsdwrite import check_schema_limits, dataset_name, xsd_bytes, xsd_tree

T = TypeVar("T")

# -- export ------------------------------------------------------------------------------------


class _Writer:
    """Formats instances (and their child rows) of one dataclass."""

    def __init__(self, schema: TableSchema) -> None:
        self.schema = schema
        self.parent = RowFormatter(schema)
        fields = [c.name for c in schema.field_columns]
        self.getter = _tuple_getter(fields)
        #: One getter per column: rows become columns without a tuple per row.
        self.columns = (
            [attrgetter(name) for name in fields] if len(fields) == len(schema.columns) else []
        )
        self.children = [
            (
                child.field,
                RowFormatter(child.schema),
                _tuple_getter([c.name for c in child.schema.field_columns]),
            )
            for child in schema.children
        ]
        self.child_counts = [0] * len(self.children)

    def objects(self, objs: Sequence[Any], first: int) -> str:
        text = (
            self.parent.format_columns([list(map(get, objs)) for get in self.columns], first)
            if self.columns
            else self.parent.format(list(map(self.getter, objs)), first)
        )
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
                        f"{fname} rows could not refer to it",
                        column=key,
                        row=first + i,
                    )
                for position, item in enumerate(items or ()):
                    rows.append((parent_key, position, *getter(item)))
            try:
                parts.append(formatter.format(rows, self.child_counts[n]))
            except ValueEncodingError as exc:
                raise _owner_error(exc, objs, fname, first, self.child_counts[n]) from exc
            self.child_counts[n] += len(rows)
        return "".join(parts)


_ROW_PREFIX = re.compile(r"row \d+, column '[^']*': ")


def _owner_error(
    exc: ValueEncodingError, objs: Sequence[Any], fname: str, first: int, numbered_from: int
) -> ValueEncodingError:
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
                column=exc.column,
                row=first + i,
                value=exc.value,
            )
        left -= len(items)
    return exc


def _tuple_getter(names: list[str]) -> Callable[[Any], tuple[Any, ...]]:
    if not names:
        return lambda _obj: ()
    if len(names) == 1:
        single = attrgetter(names[0])
        return lambda obj: (single(obj),)
    return attrgetter(*names)


def _chunks(objs: Iterable[Any], size: int) -> Iterator[list[Any]]:
    if isinstance(objs, list):
        for start in range(0, len(objs), size):
            yield objs[start : start + size]
        return
    batch: list[Any] = []
    for obj in objs:
        batch.append(obj)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def write_xml(
    cls: type,
    rows: Iterable[Any],
    xml_path: Target,
    xsd_path: str | Path | None = None,
    *,
    dataset: str | None = None,
    registry: TypeRegistry = default_registry,
    inline_schema: bool = False,
) -> int:
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
                raise ValueEncodingError(
                    f"row {count + bad} is a "
                    f"{type(batch[bad]).__qualname__}, not a "
                    f"{cls.__qualname__}",
                    row=count + bad,
                )
            yield writer.objects(batch, count)
            count += len(batch)

    xsd = (
        None
        if xsd_path is None
        else (xsd_path, lambda: xsd_bytes(cls, dataset=dataset, registry=registry))
    )
    inline = (
        (lambda: xsd_tree(cls, dataset=dataset, registry=registry).getroot())
        if inline_schema
        else None
    )
    with paused_gc():
        write_document(xml_path, chunks(), dataset, xsd, inline)
    return count


def write_xml_rows(
    schema: TableSchema,
    batches: Iterable[Sequence[Sequence[Any]]],
    xml_path: Target,
    xsd_path: str | Path | None = None,
    *,
    dataset: str | None = None,
    registry: TypeRegistry = default_registry,
    inline_schema: bool = False,
) -> int:
    """Write batches of column tuples (table column order) of a table without children."""
    check_schema_limits(schema)
    dataset = dataset_name(schema.cls, dataset)
    formatter = RowFormatter(schema)
    count = 0

    def chunks() -> Iterator[str]:
        nonlocal count
        for batch in batches:
            yield formatter.format(batch, count)
            count += len(batch)

    xsd = (
        None
        if xsd_path is None
        else (xsd_path, lambda: xsd_bytes(schema.cls, dataset=dataset, registry=registry))
    )
    inline = (
        (lambda: xsd_tree(schema.cls, dataset=dataset, registry=registry).getroot())
        if inline_schema
        else None
    )
    with paused_gc():
        write_document(xml_path, chunks(), dataset, xsd, inline)
    return count


# -- import ------------------------------------------------------------------------------------


def iter_xml(
    cls: type,
    xml_path: str | Path,
    xsd_path: str | Path | None = None,
    *,
    registry: TypeRegistry = default_registry,
    batch: int = BATCH,
) -> Iterator[list[Any]]:
    """Stream validated instances of ``cls`` from an XML file, in batches.

    A class without child tables streams in constant memory. With child tables the
    parents are held until the end, where their child rows are attached.
    """
    schema = table_schema(cls, registry)
    return instances(schema, Reader(schema, xml_path, xsd_path, batch), batch)


def read_xml(
    cls: type[T],
    xml_path: str | Path,
    xsd_path: str | Path | None = None,
    *,
    registry: TypeRegistry = default_registry,
) -> list[T]:
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


__all__ = ["iter_xml", "read_xml", "write_xml", "write_xml_rows"]

"""One table (and its child rows) between a database and XML: ``Store.export_xml`` and
``Store.import_xml``, and the command line's import into a database it opens.

A refused document writes nothing, and never undoes what another writer did: the class
and the XSD are checked before the database is touched; a missing table is created in the
import's own transaction (SQLite, PostgreSQL); a new SQLite file is filled under a private
name and linked into place only once the import has succeeded (:mod:`._new_file`); MariaDB,
whose DDL commits at once, goes through :mod:`._committed_ddl`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

from ..._gcpause import paused_gc
from ...errors import WriteError, XMLImportError
from ...model.schema import TableSchema, table_schema
from ...registry import TypeRegistry
from ...xml.reader import BATCH, Reader
from ...xml.table import write_xml, write_xml_rows
from ...xml.writer import ChildRows as RowChildren
from ...xml.writer import FamilyFormatter, Target, write_document
from ...xml.xsdwrite import check_schema_limits, dataset_name, xsd_bytes, xsd_tree
from .. import logical
from ..ddllock import schema_lock
from ._committed_ddl import import_committed_ddl
from ._facade import StoreFacade
from ._new_file import into_new_file, new_database_file
from ._progress import BatchHook, Progress, RowsHook, counted, counted_batches, counted_families
from ._rows import ChildRows, builds_plainly, insert_rows, instances
from .internal import refuse_internal, refuse_internal_names


def export_store(
    store: StoreFacade,
    cls: type,
    xml_path: Target,
    xsd_path: str | Path | None = None,
    *,
    where: Any = None,
    order_by: Any = None,
    dataset: str | None = None,
    inline_schema: bool = False,
    progress: Progress | None = None,
) -> int:
    """Stream a query's rows to XML (see :meth:`Store.export_xml`)."""
    schema = store.schema(cls)
    if schema.children and not builds_plainly(schema):
        # instances that may hold other values than their rows (a __post_init__...): the
        # document is theirs, as write_xml makes it
        with store.transaction():  # one connection for the parents and their child rows
            objs: Iterator[Any] = store.select(cls, where=where, order_by=order_by)
            return write_xml(
                cls,
                objs if progress is None else counted(objs, progress),
                xml_path,
                xsd_path,
                dataset=dataset,
                registry=store.registry,
                inline_schema=inline_schema,
            )
    if schema.children:  # decoded rows with their child rows: no instance per row
        families: Iterable[Family] = store.rows_with_children(cls, where=where, order_by=order_by)
        if progress is not None:
            families = counted_families(families, progress)
        return write_family_rows(
            schema,
            families,
            xml_path,
            xsd_path,
            dataset=dataset,
            registry=store.registry,
            inline_schema=inline_schema,
        )
    batches = store.rows(cls, where=where, order_by=order_by)
    return write_xml_rows(
        schema,
        batches if progress is None else counted_batches(batches, progress),
        xml_path,
        xsd_path,
        dataset=dataset,
        registry=store.registry,
        inline_schema=inline_schema,
    )


#: A batch of decoded rows and their child rows (see :data:`entityworks.xml.writer.ChildRows`).
Family = tuple[Sequence[Sequence[Any]], RowChildren]


def _rebatched(families: Iterable[Family], size: int) -> Iterator[Family]:
    """``families`` (batches of rows, each with its child rows) in batches of ``size``
    rows (the last may be shorter)."""
    rows: list[Sequence[Any]] = []
    children: dict[str, list[Sequence[Sequence[Any]]]] = {}
    for batch, owned in families:
        at = 0
        while at < len(batch):
            take = min(size - len(rows), len(batch) - at)
            rows.extend(batch[at : at + take])
            for fname, lists in owned.items():
                children.setdefault(fname, []).extend(lists[at : at + take])
            at += take
            if len(rows) == size:
                yield rows, children
                rows, children = [], {}
    if rows:
        yield rows, children


def write_family_rows(
    schema: TableSchema,
    families: Iterable[Family],
    xml_path: Target,
    xsd_path: str | Path | None = None,
    *,
    dataset: str | None = None,
    registry: TypeRegistry,
    inline_schema: bool = False,
) -> int:
    """Write batches of decoded rows of a table with child lists, each with its child rows
    (see :data:`entityworks.xml.writer.ChildRows`), as :func:`entityworks.write_xml` writes
    their instances: the same document, byte for byte (rows are written in the same batches
    of :data:`~entityworks.xml.reader.BATCH`), and the same XSD. Returns the row count."""
    check_schema_limits(schema)
    dataset = dataset_name(schema.cls, dataset)
    formatter = FamilyFormatter(schema)
    count = 0

    def chunks() -> Iterator[str]:
        nonlocal count
        for rows, children in _rebatched(families, BATCH):
            yield formatter.format(rows, children, count)
            count += len(rows)

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


def import_store(
    store: StoreFacade,
    cls: type,
    xml_path: str | Path,
    xsd_path: str | Path | None = None,
    *,
    reader: Reader | None = None,
    on_batch: BatchHook | None = None,
    source: str | None = None,
    on_rows: RowsHook | None = None,
) -> int:
    """Insert a validated XML file in one transaction (see :meth:`Store.import_xml`).

    A refused document writes nothing, and never undoes what another writer did: the class
    and the XSD are checked before the database is touched; a missing table is created in
    the import's own transaction (transactional DDL); a database file that does not exist
    yet is filled under a private name and linked into place only once the import has
    succeeded (:func:`._new_file.into_new_file`); where DDL commits at once (MariaDB) the
    import goes through :func:`._committed_ddl.import_committed_ddl`.

    The rows go from the reader's decoded values to the Store's encoded-row path, with no
    instance built per row (see :mod:`._rows`); ``on_batch`` is handed instances, built for
    it once their batch is inserted; ``on_rows`` is told each inserted batch's row count
    and child rows per child table, with no instance built for it.

    ``source`` is the XSD's and the document's name for the table when its rows go into the
    table of ``cls`` under another name (``import-xml --table``). An internal table (see
    :mod:`.internal`) is refused, whatever names it.
    """
    schema = store.schema(cls)
    refuse_internal([schema])
    if source is not None:
        refuse_internal_names([source])
    if reader is None or reader.schema is not schema:
        # the XSD: no database touched yet
        reader = Reader(schema, xml_path, xsd_path, table=source)
    new_file = new_database_file(store.url)
    if new_file is not None:

        def fill(path: Path) -> int:
            with closing(sibling(store, path)) as new:
                return _import_transactional(new, cls, reader, xml_path, on_batch, on_rows)

        done = into_new_file(new_file, fill)
        if done is not None:
            return done
    if not store.backend.transactional_ddl:  # CREATE TABLE commits at once
        return _import_committed_ddl(store, cls, reader, xml_path, on_batch, on_rows)
    return _import_transactional(store, cls, reader, xml_path, on_batch, on_rows)


def _import_transactional(
    store: StoreFacade,
    cls: type,
    reader: Reader,
    xml_path: str | Path,
    on_batch: BatchHook | None = None,
    on_rows: RowsHook | None = None,
) -> int:
    """Create what is missing and insert, all in one transaction (transactional DDL)."""
    schema = reader.schema
    with store.transaction():
        # Under the schema lock (PostgreSQL keeps it to the end of the transaction; an
        # SQLite writer holds the database from BEGIN IMMEDIATE): what is missing now is
        # missing until this transaction ends, so the logical schema is recorded only here.
        with store.connection(write=True) as conn, schema_lock(conn):
            missing = _missing_tables(store, schema)
        store.create(cls)  # rolled back with the rows on any error
        if missing:
            _record(store, schema, reader)
        return _insert_batches(
            store, schema, _row_batches(schema, reader), xml_path, on_batch, on_rows
        )


def _row_batches(
    schema: TableSchema, reader: Reader, batch: int = BATCH
) -> Iterator[tuple[list[tuple[Any, ...]], ChildRows]]:
    """The document's rows of ``schema`` in batches of decoded values, each with its child
    rows (per child field, per row, in list order): what the reader gives, no instances.

    Without child tables the batches stream as the reader reads them; with them, every row
    is read first (a child row may come after its parent's batch), as
    :func:`entityworks.xml.reader.instances` does.
    """
    if not schema.children:
        for _, rows in reader.batches():
            yield rows, {}
        return
    parents: list[tuple[Any, ...]] = []
    items: dict[str, list[tuple[Any, ...]]] = {child.field: [] for child in schema.children}
    fields = {child.schema.name: child.field for child in schema.children}
    for plan, rows in reader.batches():
        if plan.schema is schema:
            parents.extend(rows)
        else:
            items[fields[plan.schema.name]].extend(rows)
    at = schema.column_names.index(schema.require_key("child rows").name)
    owner = {row[at]: i for i, row in enumerate(parents)}
    owned: dict[str, list[list[tuple[Any, ...]]]] = {}
    for child in schema.children:
        lists: list[list[tuple[Any, ...]]] = [[] for _ in parents]
        # in list order: by the position the document gives (its order among equal ones)
        for row in sorted(items[child.field], key=lambda r: r[1]):
            lists[owner[row[0]]].append(row)
        owned[child.field] = lists
    for start in range(0, len(parents), batch):
        yield (
            parents[start : start + batch],
            {field: lists[start : start + batch] for field, lists in owned.items()},
        )


def _validate(schema: TableSchema, reader: Reader) -> None:
    """Read the whole document once, keeping nothing (the reader can read it again); the
    instances are built too where building them may refuse a row (see :mod:`._rows`)."""
    plain = builds_plainly(schema)
    for rows, children in _row_batches(schema, reader):
        if not plain:
            instances(schema, rows, children)


def _missing_tables(store: StoreFacade, schema: TableSchema) -> set[str]:
    names = {schema.name, *(child.schema.name for child in schema.children)}
    return names - set(store.table_names())


def _record(store: StoreFacade, schema: TableSchema, reader: Reader) -> None:
    """Keep the logical schema of tables this import creates (see :mod:`..logical`)."""
    with store.connection(write=True) as conn:  # the import's own transaction
        logical.record(conn, schema, dataset=reader.root_name)


def _import_committed_ddl(
    store: StoreFacade,
    cls: type,
    reader: Reader,
    xml_path: str | Path,
    on_batch: BatchHook | None = None,
    on_rows: RowsHook | None = None,
) -> int:
    schema = reader.schema
    own = {schema.name, *(child.schema.name for child in schema.children)}

    def record(created: set[str]) -> None:
        if created & own:
            _record(store, schema, reader)

    return import_committed_ddl(
        store,
        store.tables_with_references(store.model(cls)),
        validate=lambda: _validate(schema, reader),
        record=record,
        insert=lambda: _insert_batches(
            store, schema, _row_batches(schema, reader), xml_path, on_batch, on_rows
        ),
    )


def _insert_batches(
    store: StoreFacade,
    schema: TableSchema,
    batches: Iterator[tuple[list[tuple[Any, ...]], ChildRows]],
    xml_path: str | Path,
    on_batch: BatchHook | None = None,
    on_rows: RowsHook | None = None,
) -> int:
    """Insert ``batches`` of decoded rows (numbered from 1 in the document's order)."""
    tables = {child.field: child.schema.name for child in schema.children}
    with paused_gc():  # the rows hold plain values: nothing for the collector to find
        count = 0
        for rows, children in batches:
            try:
                objs = insert_rows(store, schema, rows, children, built=on_batch is not None)
            except WriteError as exc:
                raise insert_error(
                    exc, xml_path, None if exc.row is None else count + exc.row + 1
                ) from exc
            count += len(rows)
            if on_batch is not None and objs is not None:
                on_batch(objs)
            if on_rows is not None:
                on_rows(
                    len(rows),
                    {
                        tables[fname]: sum(map(len, owned))
                        for fname, owned in children.items()
                        if fname in tables
                    },
                )
        return count


_WRITE_PREFIX = re.compile(r"[^:]*: (?:row \d+|a row)")  # the Store's "table: row N"


def insert_error(
    exc: WriteError,
    xml_path: str | Path,
    row: int | None,
    *,
    table: str | None = None,
    column: str | None = None,
) -> XMLImportError:
    """The Store's refusal of a row, told by the document's ``row`` (and ``table``, and the
    ``column`` when the caller found it where the Store could not)."""
    detail = str(exc)
    prefix = _WRITE_PREFIX.match(detail)
    if prefix is not None:
        detail = detail[prefix.end() :]
        if exc.column is not None:
            detail = detail.removeprefix(f", column {exc.column!r}")
        detail = detail.removeprefix(": ")
    column = column or exc.column
    where = (
        ("a row" if row is None else f"row {row}")
        + ("" if table is None else f" of table {table!r}")
        + ("" if column is None else f", column {column!r}")
    )
    return XMLImportError(f"{Path(xml_path).name}: {where}: {detail}", row=row, column=column)


def sibling(store: StoreFacade, path: Path) -> StoreFacade:
    """A Store like ``store`` (its class, registry and busy timeout) on another database
    file: the private new file an import fills before it takes the database's name."""
    opener: Callable[..., StoreFacade] = type(store)
    return opener(path, registry=store.registry, busy_timeout=store.busy_timeout)


def import_into(
    open_store: Callable[[str], StoreFacade],
    db: str,
    cls: type,
    xml_path: str | Path,
    xsd_path: str | Path | None = None,
    *,
    on_batch: BatchHook | None = None,
    source: str | None = None,
    on_rows: RowsHook | None = None,
) -> int:
    """``open_store(db)`` then :func:`import_store`, for an opener that creates things (a
    catalog's runs its migrations); returns the row count.

    When ``db`` names a database file that does not exist yet, the whole document is read
    before ``open_store`` runs, and then the opener and the import run on a private new
    file that becomes ``db`` only once the import has succeeded (:func:`into_new_file`).
    ``source``, ``on_rows``: as for :func:`import_store`.
    """
    schema = table_schema(cls)
    refuse_internal([schema])
    if source is not None:
        refuse_internal_names([source])
    # the XSD, before any database is opened
    reader = Reader(schema, xml_path, xsd_path, table=source)
    new_file = new_database_file(db)
    if new_file is not None:
        _validate(schema, reader)

        def fill(path: Path) -> int:
            store = open_store(os.fspath(path))
            try:
                return import_store(
                    store,
                    cls,
                    xml_path,
                    xsd_path,
                    reader=reader,
                    on_batch=on_batch,
                    source=source,
                    on_rows=on_rows,
                )
            finally:
                store.close()

        done = into_new_file(new_file, fill)
        if done is not None:
            return done
    store = open_store(db)
    try:
        return import_store(
            store,
            cls,
            xml_path,
            xsd_path,
            reader=reader,
            on_batch=on_batch,
            source=source,
            on_rows=on_rows,
        )
    finally:
        store.close()


__all__ = [
    "export_store",
    "import_into",
    "import_store",
    "insert_error",
    "sibling",
    "write_family_rows",
]

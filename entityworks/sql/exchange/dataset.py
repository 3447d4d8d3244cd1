"""A .NET DataSet document (several related tables) between a database and XML:
``Store.import_dataset`` and ``Store.export_dataset`` (the format: :mod:`entityworks.xml.dataset`).

Import reads and checks the whole document before any DDL, then creates the missing tables
with foreign keys for the relations and inserts every table, parents first, in one
transaction; a refused document writes nothing, and nothing another writer made is taken
away (as for :func:`.xml.import_store`). Export writes the tables from one snapshot.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping, Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from ..._gcpause import paused_gc
from ...errors import SchemaError, WriteError, XMLImportError
from ...model.schema import TableSchema
from ...xml.dataset import (
    Batched,
    DataSet,
    dataset_for,
    dataset_of,
    dataset_reader,
    numbered_rows,
    write_dataset,
)
from ...xml.xsd import load_inline_xsd, load_xsd
from .. import logical
from ..ddllock import schema_lock
from ..tables import build_tables
from ._committed_ddl import import_committed_ddl
from ._facade import StoreFacade
from ._new_file import into_new_file, new_database_file
from ._rows import insert_rows
from .children import child_tables
from .internal import refuse_internal, refuse_internal_names
from .xml import insert_error, sibling

#: Table name -> its schema (of the Store that imports), in the DataSet's order.
Schemas = Mapping[str, TableSchema]


def _metadata(
    store: StoreFacade, data: DataSet, schemas: Schemas
) -> tuple[sa.MetaData, list[sa.Table]]:
    """The DataSet's tables with their foreign keys, built as the Store builds tables."""
    metadata = sa.MetaData()
    built = []
    for schema in schemas.values():
        if schema.children:
            raise SchemaError(
                f"{schema.cls.__qualname__} has child tables; a DataSet's "
                "tables relate through foreign keys instead",
                cls=schema.cls,
            )
        built.append(build_tables(schema, metadata, store.backend))
    for r in data.relations:
        child = metadata.tables[r.child]
        child.append_constraint(
            sa.ForeignKeyConstraint(
                [r.child_column],
                [metadata.tables[r.parent].c[r.parent_column]],
                name=f"fk_{r.child}_{r.child_column}"[:63],
            )
        )
    return metadata, built


def _parents_first_rows(
    data: DataSet,
    name: str,
    schema: TableSchema,
    rows: list[tuple[Any, ...]],
    numbers: list[int],
    xml_path: str | Path,
) -> tuple[list[tuple[Any, ...]], list[int]]:
    """The rows of a self-referencing table with every referenced row before the rows that
    refer to it, in document order otherwise.

    A document may list a child row before its parent (.NET checks constraints once the
    whole document is read); SQLite and MariaDB check a foreign key row by row. Rows whose
    references form a cycle (two rows referring to each other) fit no order: refused.
    """
    relations = [r for r in data.relations if r.parent == r.child == name]
    if not relations or len(rows) < 2:
        return rows, numbers
    names = schema.column_names
    key = names.index(relations[0].parent_column)  # the key (see dataset_for)
    refs = [names.index(r.child_column) for r in relations]
    where = {row[key]: i for i, row in enumerate(rows)}
    state = [0] * len(rows)  # 0: not placed, 1: its parents are being placed, 2: placed
    order: list[int] = []
    for start in range(len(rows)):
        if state[start]:
            continue
        state[start] = 1
        stack = [[start, 0]]  # (row, next reference to follow): no recursion, any depth
        while stack:
            top = stack[-1]
            i, k = top
            if k == len(refs):
                stack.pop()
                state[i] = 2
                order.append(i)
                continue
            top[1] += 1
            parent = where.get(rows[i][refs[k]])
            if parent is None or parent == i or state[parent] == 2:
                continue
            if state[parent] == 1:
                cycle = [rows[j][key] for j, _ in stack[[j for j, _ in stack].index(parent) :]]
                chain = f"{names[key]} " + " -> ".join(map(repr, [*cycle, rows[parent][key]]))
                raise XMLImportError(
                    f"{Path(xml_path).name}: row {numbers[i]} of table {name!r}, column "
                    f"{names[refs[k]]!r}: the rows' references form a cycle ({chain}), "
                    "which a foreign key checked row by row cannot take in any order; "
                    "nothing was imported",
                    row=numbers[i],
                    column=names[refs[k]],
                )
            state[parent] = 1
            stack.append([parent, 0])
    return [rows[i] for i in order], [numbers[i] for i in order]


def import_dataset(
    store: StoreFacade,
    xml_path: str | Path,
    xsd_path: str | Path | None = None,
    *,
    data: DataSet | None = None,
) -> dict[str, int]:
    """Import every table of a DataSet document in one transaction; rows per table.

    The schema comes from ``xsd_path``, else from the document itself (inline). Missing
    tables are created, with foreign keys for the relations; nothing is created or written
    if anything is refused, and nothing another writer made is taken away (as for
    :func:`.xml.import_store`). The rows go from the reader's decoded values to the Store's
    encoded-row path, with no instance built per row (see :mod:`._rows`).
    """
    with paused_gc():  # every row is held: collections would walk them again and again
        return _import_dataset(store, xml_path, xsd_path, data)


def _import_dataset(
    store: StoreFacade, xml_path: str | Path, xsd_path: str | Path | None, data: DataSet | None
) -> dict[str, int]:
    model = load_xsd(xsd_path) if xsd_path is not None else load_inline_xsd(xml_path)
    if model is None:
        raise XMLImportError(f"{Path(xml_path).name} has no inline schema; give its XSD")
    data = data or dataset_for(model, registry=store.registry)
    refuse_internal_names(model.tables)  # the document's names, as they are spelled there
    # everything, before any DDL
    schemas = {name: store.schema(cls) for name, cls in data.tables.items()}
    refuse_internal(schemas.values())
    rows, numbers = numbered_rows(dataset_reader(schemas, model, xml_path))
    for name, schema in schemas.items():
        rows[name], numbers[name] = _parents_first_rows(
            data, name, schema, rows.get(name, []), numbers.get(name, []), xml_path
        )
    new_file = new_database_file(store.url)
    if new_file is not None:

        def fill(path: Path) -> dict[str, int]:
            with closing(sibling(store, path)) as new:
                return _import_transactional(new, data, rows, numbers, xml_path)

        done = into_new_file(new_file, fill)
        if done is not None:
            return done
    if not store.backend.transactional_ddl:  # CREATE TABLE commits at once
        _, built = _metadata(store, data, schemas)

        def record(created: set[str]) -> None:
            with store.connection(write=True) as conn:  # the rows' transaction
                _record(conn, data, schemas, created)

        return import_committed_ddl(
            store,
            built,
            validate=None,
            record=record,
            insert=lambda: _insert(store, data, schemas, rows, numbers, xml_path),
        )
    return _import_transactional(store, data, rows, numbers, xml_path)


def _import_transactional(
    store: StoreFacade,
    data: DataSet,
    rows: dict[str, list[Any]],
    numbers: dict[str, list[int]],
    xml_path: str | Path,
) -> dict[str, int]:
    """Create the missing tables and insert every row in one transaction (SQLite,
    PostgreSQL: DDL is rolled back with the rows)."""
    # this store's schemas (a new file's store has its own)
    schemas = {name: store.schema(cls) for name, cls in data.tables.items()}
    metadata, built = _metadata(store, data, schemas)
    with store.transaction():
        with store.connection(write=True) as conn, schema_lock(conn):
            existing = set(sa.inspect(conn).get_table_names())
            missing = [t for t in built if t.name not in existing]
            metadata.create_all(conn, tables=missing, checkfirst=True)
            if missing:
                _record(conn, data, schemas, {t.name for t in missing})
        return _insert(store, data, schemas, rows, numbers, xml_path)


def _record(conn: sa.Connection, data: DataSet, schemas: Schemas, names: set[str]) -> None:
    for name, schema in schemas.items():
        if name in names:
            facts = {
                "relations": [
                    dataclasses.asdict(r) for r in data.relations if name in (r.parent, r.child)
                ]
            }
            logical.record(conn, schema, dataset=data.name, facts=facts)


def _insert(
    store: StoreFacade,
    data: DataSet,
    schemas: Schemas,
    rows: dict[str, list[Any]],
    numbers: dict[str, list[int]],
    xml_path: str | Path,
) -> dict[str, int]:
    """Insert the tables parents first (so the foreign keys hold), as decoded values through
    the encoded-row path; an error names the document's row, the table and the column."""
    counts = {}
    for name, schema in schemas.items():
        values = rows.get(name, [])
        done = 0
        for batch in _chunks(values):
            try:
                insert_rows(store, schema, batch)
            except WriteError as exc:
                i = None if exc.row is None else done + exc.row
                column = None
                if i is not None and exc.column is None and "foreign key" in str(exc).lower():
                    column = _broken_reference(store, data, schemas, name, values[i])
                raise insert_error(
                    exc,
                    xml_path,
                    None if i is None else numbers[name][i],
                    table=name,
                    column=column,
                ) from exc
            done += len(batch)
        counts[name] = done
    return counts


def _broken_reference(
    store: StoreFacade, data: DataSet, schemas: Schemas, name: str, row: tuple[Any, ...]
) -> str | None:
    """The column of a refused row whose value no row of the table it refers to holds
    (SQLite does not say which foreign key failed), by the table's live foreign keys."""
    schema = schemas[name]
    with store.connection() as conn:  # the import's transaction: its earlier rows count
        for fk in sa.inspect(conn).get_foreign_keys(name):
            target = data.tables.get(fk["referred_table"]) or store.reflect(
                fk["referred_table"]
            )  # a table outside the DataSet
            column = schema.by_sql_name(fk["constrained_columns"][0])
            if len(fk["constrained_columns"]) != 1 or target is None or column is None:
                continue
            value = row[schema.column_names.index(column.name)]
            referred = store.schema(target).by_sql_name(fk["referred_columns"][0])
            if value is None or referred is None:
                continue
            key = store.table(target).c[referred.name]
            found = conn.execute(
                sa.select(key).where(key == sa.bindparam("v", value, type_=key.type)).limit(1)
            ).first()
            if found is None:
                return str(column.name)
    return None


def _chunks(rows: list[Any], size: int = 20_000) -> Iterator[list[Any]]:
    for start in range(0, len(rows), size):
        yield rows[start : start + size]


def _refuse_child_tables(store: StoreFacade, classes: list[type]) -> None:
    """A DataSet holds flat tables: a table whose rows own child rows (a ``list[Item]``
    field, or a reflected table's ``<table>_<field>`` child tables) would lose them, so it is
    refused before anything is written."""
    for cls in classes:
        schema = store.schema(cls)
        owned = [child.schema.name for child in schema.children] or [
            child.name for child in child_tables(store, schema.name)
        ]
        if owned:
            raise SchemaError(
                f"table {schema.name!r} has child tables ({', '.join(owned)}), "
                "which a DataSet cannot carry; export it on its own (its child "
                "rows travel with it) or list tables without child rows",
                cls=schema.cls,
            )


def export_dataset(
    store: StoreFacade,
    tables: Sequence[type | str],
    xml_path: Any,
    xsd_path: str | Path | None = None,
    *,
    dataset: str | None = None,
    nested: bool | None = None,
    inline_schema: bool = False,
    diffgram: bool = False,
) -> dict[str, int]:
    """Write tables of ``store`` as one DataSet document (see :meth:`Store.export_dataset`)."""
    classes = [store.reflect(t) if isinstance(t, str) else t for t in tables]
    _refuse_child_tables(store, classes)
    data = dataset_of(classes, name=dataset, nested=nested, registry=store.registry)
    with store.transaction():  # one snapshot of every table
        rows = {name: Batched(store.rows(cls)) for name, cls in data.tables.items()}
        return write_dataset(
            data,
            rows,
            xml_path,
            xsd_path,
            nested=nested,
            inline_schema=inline_schema,
            registry=store.registry,
            diffgram=diffgram,
        )


__all__ = ["export_dataset", "import_dataset"]

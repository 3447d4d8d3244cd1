"""A .NET DiffGram applied to the tables that hold its DataSet, in one transaction:
``Store.import_diffgram`` (reading the document: :mod:`entityworks.xml.diffgram`).

Rows are matched with the database by primary key, and the document is applied only if the
database holds exactly what the DiffGram says it started from; anything else is a conflict
that refuses the whole document (nothing is written):

- a before image (of a modified or deleted row) must equal the stored row with its key;
  a stored row that is missing, or differs in any column, is a conflict. Equal means exactly
  what the Store keeps, one rule for every type (:func:`_same`): floats to the bit (``-0.0``
  is not ``0``), Decimals with their exponent (``1.50`` is not ``1.5``), datetimes with their
  offsets; rows are matched by key value, as the database's key matches them;
- an inserted row (or a modified row whose key changed) must not have a stored row under
  its new key, unless a before image frees that key in the same DiffGram;
- an unchanged row is inserted when no stored row has its key, and must equal the stored
  row otherwise.

Changes are then made per key: rows whose key only the current rows hold are inserted
(parents first), keys both sections hold are updated to the current row (parents first),
keys only ``diffgr:before`` holds are deleted (children first) -- so a changed key, a moved
child and a delete followed by an insert under the same key all keep the foreign keys.
The result is what .NET's ``AcceptChanges()`` gives.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from ..._gcpause import paused_gc
from ...errors import ValueEncodingError, WriteError, XMLImportError
from ...types.storage import json_text
from ...xml.dataset import DataSet, dataset_for, dataset_of
from ...xml.diffgram import Mark, is_diffgram, peek_diffgram, read_diffgram
from ...xml.reader import row_builder
from ...xml.xsd import is_dataset, load_xsd
from .. import logical
from ..filters import col, compile_where
from ._facade import StoreFacade
from ._rows import insert_rows
from .internal import refuse_internal

_CHUNK = 500


@dataclass(frozen=True)
class Changes:
    """What a DiffGram did to one table (by key: a changed key is a delete and an insert)."""

    inserted: int = 0
    updated: int = 0
    deleted: int = 0
    unchanged: int = 0


def _recorded_relations(store: StoreFacade, table: str) -> list[dict[str, Any]]:
    with store.connection() as conn:
        rows = logical.recorded(conn, table)
    facts: dict[str, Any] = next(
        (json.loads(r.details or "{}") for r in rows if r.logical_type == logical.TABLE_ROW), {}
    )
    return list(facts.get("relations", []))


def _reflected(store: StoreFacade, path: Path) -> DataSet:
    """The DataSet of the tables the DiffGram's rows belong to, with every table related to
    them (as recorded when they were imported), from the database itself."""
    dataset, names = peek_diffgram(path)
    existing = set(store.table_names())
    chosen: list[str] = []
    queue = sorted(names)
    while queue:
        table = queue.pop(0)
        if table in chosen:
            continue
        if table not in existing:
            raise XMLImportError(
                f"{path.name}: rows of table {table!r}, which the database "
                "does not have; a DiffGram changes existing tables (import "
                "the DataSet first, or give its XSD)"
            )
        chosen.append(table)
        for r in _recorded_relations(store, table):
            queue += [r["parent"], r["child"]]
    classes = [store.reflect(t) for t in chosen]
    return dataset_of(classes, name=dataset or None, registry=store.registry)


# -- comparing and applying -------------------------------------------------------------------


def _same(a: Any, b: Any) -> bool:
    """Equal and of one type, exactly as the Store keeps values ("exact or refused": what a
    write accepts comes back so), one rule for every type:

    - floats to the bit: NaN equals NaN, and ``-0.0`` is not ``0.0`` (a stored ``-0.0``
      comes back ``-0.0`` on every backend, so a before image of ``0`` describes another
      value);
    - Decimals by value and exponent: ``1.50`` is not ``1.5`` (the Store keeps ``1.50``;
      ``-0`` is outside the Decimal domain, refused on write);
    - datetimes as the same instant with the same UTC offset;
    - JSON lists and tuples item by item, dicts key by key (in any order) under these rules;
      arrays by dtype, shape and bytes;
    - anything else by ``==``.

    Rows are still *matched* by key value, as the database's key matches them (a key
    ``1.50`` finds the stored ``1.5``); this compares what the matched rows hold.
    """
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or (
            a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
        )
    if isinstance(a, decimal.Decimal):
        return bool(a == b and a.as_tuple().exponent == b.as_tuple().exponent)
    if isinstance(a, dt.datetime):
        return bool(a == b and a.utcoffset() == b.utcoffset())
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if hasattr(a, "dtype") and hasattr(a, "tobytes"):  # a NumPy array: == is elementwise
        return bool(a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes())
    return bool(a == b)


def _difference(
    stored: tuple[Any, ...], row: tuple[Any, ...], names: list[str], json_at: frozenset[int]
) -> str | None:
    """The first column (by name) whose values differ; ``json_at``: the indexes of JSON
    columns, whose text is compared as the values it holds (PostgreSQL's jsonb gives back
    its own spelling of the text entityworks wrote)."""
    for i, (column, a, b) in enumerate(zip(names, stored, row, strict=True)):
        if i in json_at and isinstance(a, str) and isinstance(b, str) and a != b:
            try:
                if _same(json.loads(a), json.loads(b)):
                    continue
            except (ValueError, RecursionError):
                pass
            return column
        if not _same(a, b):
            return column
    return None


def _json_columns(store: StoreFacade, schema: Any) -> frozenset[int]:
    """The indexes of ``schema``'s columns that hold JSON: a JSON field's, or a str field's
    on a column of the database's JSON type (a class read from the XSD)."""
    with store.connection() as conn:
        live = store.backend.live_columns(conn, schema, [schema.name]).get(schema.name, {})
    return frozenset(
        i
        for i, c in enumerate(schema.columns)
        if c.info.sql_codec.column_type == json_text
        or store.backend.json_type_of(live.get(c.sql_name, "")) is not None
    )


def _lock(store: StoreFacade, cls: type, where: Any) -> None:
    """Lock the stored rows the checks read until the transaction ends (PostgreSQL,
    MariaDB: ``SELECT ... FOR UPDATE``), so that no other writer changes them between the
    check and the write. SQLite locks the whole database for the first write instead, and
    refuses the write if another connection committed since the read began."""
    if not store.backend.locks_rows:
        return
    model = store.model(cls)
    key = model.table.c[store.schema(cls).require_key("a DiffGram").name]
    condition = compile_where(where, model.table, model.schema)
    with store.connection() as conn:  # no filter: every row (.where(None) is WHERE NULL)
        conn.execute(
            sa.select(key).where(sa.true() if condition is None else condition).with_for_update()
        ).fetchall()


@dataclass
class _Plan:
    """The writes of one table."""

    inserts: list[tuple[Any, ...]]
    updates: list[tuple[Any, ...]]
    deletes: list[Any]
    unchanged: int


def _conflict(
    name: str,
    table: str,
    key: str,
    value: Any,
    mark: Mark,
    what: str,
    message: str,
    column: str | None = None,
) -> XMLImportError:
    line = f", line {mark.line}" if mark.line else ""
    return XMLImportError(
        f"{name}: conflict in table {table!r}, {what}row {mark.row}{line} "
        f"({key}={value!r}): {message}; nothing was changed",
        row=mark.row,
        column=column,
    )


def _plan_table(
    store: StoreFacade,
    cls: type,
    table: str,
    name: str,
    current: list[tuple[Any, ...]],
    current_marks: list[Mark],
    before: list[tuple[Any, ...]],
    before_marks: list[Mark],
) -> _Plan:
    schema = store.schema(cls)
    names = schema.column_names
    json_at = _json_columns(store, schema)
    key = schema.primary_key
    if key is None and schema.composite:
        raise XMLImportError(
            f"{name}: table {table!r} has a composite primary key; DiffGram "
            "rows are matched with stored rows by a single-column key"
        )
    if key is None:
        raise XMLImportError(
            f"{name}: table {table!r} has no primary key; DiffGram rows are "
            "matched with stored rows by key"
        )
    k = names.index(key.name)
    by_id: dict[str, Mark] = {}
    for mark in current_marks:
        if mark.id is not None:
            if mark.id in by_id:
                raise _conflict(
                    name, table, key.name, mark.id, mark, "", f"diffgr:id {mark.id!r} is used twice"
                )
            by_id[mark.id] = mark
    before_by_key: dict[Any, tuple[tuple[Any, ...], Mark]] = {}
    before_ids: set[str] = set()
    for row, mark in zip(before, before_marks, strict=True):
        partner = by_id.get(mark.id) if mark.id is not None else None
        if (
            mark.id is None
            or mark.id in before_ids
            or (partner is not None and partner.state != "modified")
        ):
            why = (
                "has no diffgr:id"
                if mark.id is None
                else "repeats a diffgr:id"
                if mark.id in before_ids or partner is None
                else f"belongs to a row marked {partner.state}"
            )
            raise _conflict(
                name, table, key.name, row[k], mark, "diffgr:before ", f"the before image {why}"
            )
        before_ids.add(mark.id)
        if row[k] in before_by_key:
            raise _conflict(
                name,
                table,
                key.name,
                row[k],
                mark,
                "diffgr:before ",
                "two before images have this key",
            )
        before_by_key[row[k]] = (row, mark)
    keys = {row[k] for row in current} | set(before_by_key)
    stored: dict[Any, tuple[Any, ...]] = {}
    listed = sorted(keys, key=repr)
    for start in range(0, len(listed), _CHUNK):
        where = col(key.name).in_(listed[start : start + _CHUNK])
        _lock(store, cls, where)
        for batch in store.rows(cls, where=where):
            stored.update((r[k], tuple(r)) for r in batch)
    plan = _Plan([], [], [], 0)
    current_keys: set[Any] = set()
    for row, mark in zip(current, current_marks, strict=True):
        value = row[k]
        if value in current_keys:
            raise _conflict(
                name, table, key.name, value, mark, "", "two current rows have this key"
            )
        current_keys.add(value)
        if mark.state == "modified" and mark.id not in before_ids:
            raise _conflict(
                name,
                table,
                key.name,
                value,
                mark,
                "",
                "a modified row without a before image (diffgr:before)",
            )
        have = stored.get(value)
        if mark.state == "unchanged":
            if value in before_by_key:
                raise _conflict(
                    name,
                    table,
                    key.name,
                    value,
                    mark,
                    "",
                    "an unchanged row whose key a before image (diffgr:before) also has",
                )
            if have is None:
                plan.inserts.append(row)
                continue
            column = _difference(have, row, names, json_at)
            if column is not None:
                raise _conflict(
                    name,
                    table,
                    key.name,
                    value,
                    mark,
                    "",
                    f"unchanged in the DiffGram, but the stored row differs in "
                    f"column {column!r} ({have[names.index(column)]!r}, not "
                    f"{row[names.index(column)]!r})",
                    column,
                )
            plan.unchanged += 1
        elif value in before_by_key:
            plan.updates.append(row)
        elif have is not None:
            raise _conflict(
                name,
                table,
                key.name,
                value,
                mark,
                "",
                f"{mark.state}, but a stored row already has this key",
            )
        else:
            plan.inserts.append(row)
    for value, (row, mark) in before_by_key.items():
        have = stored.get(value)
        if have is None:
            what = "changes" if value in current_keys else "deletes"
            raise _conflict(
                name,
                table,
                key.name,
                value,
                mark,
                "diffgr:before ",
                f"the DiffGram {what} this row, but no stored row has its key",
            )
        column = _difference(have, row, names, json_at)
        if column is not None:
            raise _conflict(
                name,
                table,
                key.name,
                value,
                mark,
                "diffgr:before ",
                f"the stored row differs from the before image in column "
                f"{column!r} ({have[names.index(column)]!r}, not "
                f"{row[names.index(column)]!r})",
                column,
            )
        if value not in current_keys:
            plan.deletes.append(value)
    return plan


def _write(store: StoreFacade, data: DataSet, plans: dict[str, _Plan], name: str) -> None:
    order = [t for t in data.tables if t in plans]
    step, table, rows = "", "", []  # what was being written, for the error
    try:
        with store.transaction():
            for table in order:  # parents first: decoded values, no instances
                step, rows = "insert", plans[table].inserts
                if rows:
                    insert_rows(store, store.schema(data.tables[table]), rows)
            for table in order:
                # a whole row replaced by its key, as update(obj) writes it (a Decimal key
                # takes the scale of the current row): one instance per updated row
                step = "update"
                built = row_builder(store.schema(data.tables[table]))(plans[table].updates)
                for n, obj in enumerate(built):
                    rows = [plans[table].updates[n]]
                    store.update(obj)
            for table in reversed(order):  # children first
                step, rows = "delete", []
                cls = data.tables[table]
                key = store.schema(cls).require_key("a DiffGram").name
                deletes = plans[table].deletes
                for start in range(0, len(deletes), _CHUNK):
                    store.delete(cls, where=col(key).in_(deletes[start : start + _CHUNK]))
    except (WriteError, ValueEncodingError) as exc:
        schema = store.schema(data.tables[table])
        which = ""
        if schema.primary_key is not None and rows and (exc.row or 0) < len(rows):
            k = schema.column_names.index(schema.primary_key.name)
            which = f" ({schema.primary_key.name}={rows[exc.row or 0][k]!r})"
        detail = re.sub(r"^(row \d+, )", "", str(exc))
        raise XMLImportError(
            f"{name}: cannot {step} a row of {table!r}{which}: {detail}; nothing was changed",
            column=getattr(exc, "column", None),
        ) from exc


def import_diffgram(
    store: StoreFacade, xml_path: str | Path, xsd_path: str | Path | None = None
) -> dict[str, Changes]:
    """Apply a DiffGram to the tables of ``store`` in one transaction (see the module).

    The DataSet's schema comes from ``xsd_path`` (the ``WriteXmlSchema`` file; .NET writes
    no schema into a DiffGram), else from the database: the tables the rows name, as
    recorded when they were imported, with their relations. Returns what changed per table.
    """
    with paused_gc():  # every row is held: collections would walk them again and again
        return _import_diffgram(store, xml_path, xsd_path)


def _import_diffgram(
    store: StoreFacade, xml_path: str | Path, xsd_path: str | Path | None
) -> dict[str, Changes]:
    path = Path(xml_path)
    if xsd_path is not None:
        model = load_xsd(xsd_path)
        if len(model.tables) > 1 and not is_dataset(model):
            raise XMLImportError(
                f"{Path(xsd_path).name} describes a table with child rows; "
                "DiffGrams are applied to DataSets of related tables"
            )
        data = dataset_for(model, registry=store.registry)
    else:
        if not is_diffgram(path):
            raise XMLImportError(f"{path.name} is not a DiffGram (its root is not diffgr:diffgram)")
        data = _reflected(store, path)
        if not data.tables:  # no rows at all: nothing to change
            return {}
    refuse_internal(store.schema(cls) for cls in data.tables.values())
    current, before = read_diffgram(path, data, registry=store.registry)
    now, was = current.rows, before.rows
    existing = set(store.table_names())
    missing = [t for t in data.tables if (t in now or t in was) and t not in existing]
    if missing:
        raise XMLImportError(
            f"{path.name}: table {missing[0]!r} does not exist; a DiffGram "
            "changes existing tables (import the DataSet first)"
        )
    plans = {}
    with store.transaction():  # one snapshot for the checks and the writes
        for table, cls in data.tables.items():
            if table in current.marks or table in before.marks:
                plans[table] = _plan_table(
                    store,
                    cls,
                    table,
                    path.name,
                    now.get(table, []),
                    current.marks.get(table, []),
                    was.get(table, []),
                    before.marks.get(table, []),
                )
        _write(store, data, plans, path.name)
    return {
        t: Changes(len(p.inserts), len(p.updates), len(p.deletes), p.unchanged)
        for t, p in plans.items()
    }


__all__ = ["Changes", "import_diffgram"]

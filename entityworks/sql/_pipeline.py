"""The write pipeline: objects -> encoded rows -> ``backend.write_rows``, in batches.

``insert_many``, ``upsert_many`` (and through them ``insert`` and ``upsert``) and
``insert_encoded`` take any iterable and write it a batch at a time inside one
transaction, holding one batch in memory: never the whole input. A refused row is named by
its index in the whole input, and nothing is written (the transaction rolls back). Each
batch's rows are encoded by :func:`entityworks.sql._bulk.encode` and written by the
backend (:meth:`~entityworks.sql.backends.base.Backend.write_rows`); rows whose key the
database generates go to
:meth:`~entityworks.sql.backends.base.Backend.insert_generated`, one round trip per batch,
and the keys are written back to the instances before their child rows are written.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence, Sized
from contextlib import contextmanager
from itertools import accumulate, chain, islice, repeat
from operator import add, attrgetter, countOf
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from .._gcpause import paused_gc
from ..errors import ValueEncodingError, WriteError
from ..model.schema import PARENT_COLUMN
from ..registry import encode_error
from ..types.columns import count_type
from ._bound import BoundModel, RowNumber, counting_from, descendants, encoded_keys
from ._bulk import BATCH, ColumnRows, Rows, set_attribute
from ._database import Database

if TYPE_CHECKING:
    from .encoded import EncodedRows


def batches(objs: Iterable[Any], size: int) -> Iterator[tuple[int, Sequence[Any]]]:
    """``(start, rows)`` of ``objs`` taken ``size`` at a time (a list is sliced, any other
    iterable read as it goes: one batch held at a time)."""
    size = max(1, size)
    if isinstance(objs, list | tuple):
        if len(objs) <= size:
            if objs:
                yield 0, objs
            return
        for start in range(0, len(objs), size):
            yield start, objs[start : start + size]
        return
    it = iter(objs)
    start = 0
    while True:
        part = list(islice(it, size))
        if not part:
            return
        yield start, part
        start += len(part)


def one_class(cls: type, objs: Sequence[Any], start: int) -> None:
    """Refuse a row of another class than ``cls`` (named by its index in the input)."""
    if count_type(objs, cls) != len(objs):
        odd = next(i for i, o in enumerate(objs) if type(o) is not cls)
        raise WriteError(
            f"row {start + odd} is a {type(objs[odd]).__qualname__}, not a "
            f"{cls.__qualname__}: one call writes one table",
            row=start + odd,
        )


def insert_many(db: Database, objs: Iterable[Any], *, batch_size: int = BATCH) -> int:
    """Insert instances of one dataclass in one transaction, a batch at a time; returns
    the row count.

    Rows whose integer key is ``None`` get a generated key, written back to the instance.
    If any row fails, nothing is written and :class:`WriteError` names the row index (in
    the whole input) and the column.
    """
    if (
        isinstance(objs, list | tuple)
        and len(objs) > batch_size == BATCH
        and count_type(objs, type(objs[0])) == len(objs)
    ):  # held by the caller already: in the batches the backend writes best (one COPY)
        batch_size = max(batch_size, db.backend.list_batch(db.model(type(objs[0])), len(objs)))
    parts = batches(objs, batch_size)
    first = next(parts, None)
    if first is None:
        return 0
    cls = type(first[1][0])
    one_class(cls, first[1], 0)
    model = db.model(cls)
    count = 0
    total = len(objs) if isinstance(objs, Sized) else None
    call: dict[str, Any] = {}  # what the backend keeps from batch to batch
    # the instances of a list given generated keys, batch by batch (the caller holds them:
    # a refused batch gives them their None keys back); an iterator's are not kept, which
    # would hold every row of it
    keyed: list[Sequence[Any]] = []
    try:
        with db.connection(write=True) as conn:
            for start, part in chain([first], parts):
                one_class(cls, part, start)
                ahead = None if total is None else total - start
                # the batch's rows (tuples by the ten thousand, of plain values) are made,
                # sent and freed before the collector is back: its next pass walks none
                # of them (see entityworks._gcpause)
                with unset_fields_named(model, part, start), paused_gc():
                    done = insert_rows(
                        db, conn, model, part, start, batch_size, call=call, ahead=ahead
                    )
                if total is not None and done:
                    keyed.append(done)
                count += len(part)
    except BaseException:
        # nothing was written: the earlier batches' instances get their None keys back
        name = model.schema.primary_key.name if model.schema.primary_key else None
        for done in keyed:
            if done and name is not None:
                set_attribute(done, name, [None] * len(done))
        raise
    return count


def insert_rows(
    db: Database,
    conn: sa.Connection,
    model: BoundModel,
    objs: Sequence[Any],
    start: int,
    batch_size: int,
    *,
    call: dict[str, Any] | None = None,
    ahead: int | None = None,
) -> Sequence[Any]:
    """Insert one batch of instances (``start``: the index of the first in the input),
    with their child rows; generated keys are set on the instances. ``call``: what the
    backend keeps between the batches of one call; ``ahead``: the rows of the call from
    this batch on, where the input's length says. Returns the instances given generated
    keys."""
    key = model.schema.primary_key
    backend = db.backend
    generated: Sequence[int] = ()
    if key is not None and (
        key.info.native is None
        or count_type(map(attrgetter(key.name), objs), key.info.native) != len(objs)
    ):
        keys = list(map(attrgetter(key.name), objs))
        if countOf(keys, None) == len(keys):  # every key to generate (the usual case)
            generated = range(len(keys)) if key.autoincrement else ()
        elif not check_keys(model, keys, start) and key.autoincrement:
            generated = [i for i, k in enumerate(keys) if k is None]
    if generated:
        every = len(generated) == len(objs)
        chosen = objs if every else [objs[i] for i in generated]
        number: RowNumber = counting_from(start) if every else lambda i: start + generated[i]
        batch = Rows(db, conn, model, chosen, number, call=call, ahead=ahead if every else None)
        new = backend.insert_generated(conn, batch)
        if not batch.keys_written:  # (a backend that reserved them set them already)
            set_attribute(chosen, key.name, new)  # type: ignore[union-attr]
    else:
        backend.write_rows(conn, Rows(db, conn, model, objs, counting_from(start)))
        chosen = ()
    try:
        if len(generated) not in (0, len(objs)):  # the rows whose keys were given
            gen = set(generated)
            rest = [i for i in range(len(objs)) if i not in gen]
            backend.write_rows(
                conn, Rows(db, conn, model, [objs[i] for i in rest], lambda i: start + rest[i])
            )
        if model.children:
            key_name = model.schema.primary_key.name  # type: ignore[union-attr]
            insert_children(
                db,
                conn,
                model,
                objs,
                list(map(attrgetter(key_name), objs)),
                batch_size,
                range(start, start + len(objs)),
            )
    except BaseException:
        if chosen:  # the batch's instances as they were given
            set_attribute(chosen, key.name, [None] * len(chosen))  # type: ignore[union-attr]
        raise
    return chosen


def upsert_many(db: Database, objs: Iterable[Any], *, batch_size: int = BATCH) -> int:
    """Insert-or-replace by primary key, in one transaction, a batch at a time; returns the
    row count."""
    parts = batches(objs, batch_size)
    first = next(parts, None)
    if first is None:
        return 0
    cls = type(first[1][0])
    one_class(cls, first[1], 0)
    model = db.model(cls)
    columns = model.schema.require_keys("upsert")
    count = 0
    with db.connection(write=True) as conn:
        for start, part in chain([first], parts):
            one_class(cls, part, start)
            with unset_fields_named(model, part, start):
                _upsert_rows(db, conn, model, part, start, batch_size, columns)
            count += len(part)
    return count


def _upsert_rows(
    db: Database,
    conn: sa.Connection,
    model: BoundModel,
    objs: Sequence[Any],
    start: int,
    batch_size: int,
    columns: Sequence[Any],
) -> None:
    """Upsert one batch (``start``: the index of its first row in the input)."""
    if model.schema.composite:  # no child tables, no generated key
        for row, key in enumerate(map(attrgetter(*(c.name for c in columns)), objs)):
            for c, value in zip(columns, key, strict=True):
                if value is None:
                    raise WriteError(
                        f"upsert needs a key on every row; row {start + row} of "
                        f"{model.schema.name!r} has {c.name}=None",
                        table=model.schema.name,
                        row=start + row,
                        column=c.name,
                    )
        db.backend.write_rows(conn, Rows(db, conn, model, objs, counting_from(start), "upsert"))
        return
    key = columns[0]
    keys: list[Any] = list(map(attrgetter(key.name), objs))
    if not check_keys(model, keys, start) and None in keys:
        raise WriteError(
            f"upsert needs a key on every row; row {start + keys.index(None)} of "
            f"{model.schema.name!r} has {key.name}=None",
            table=model.schema.name,
            row=start + keys.index(None),
            column=key.name,
        )
    if model.children:
        delete_children(db, conn, model, keys)
    db.backend.write_rows(conn, Rows(db, conn, model, objs, counting_from(start), "upsert"))
    insert_children(db, conn, model, objs, keys, batch_size, range(start, start + len(objs)))


def insert_encoded(db: Database, batch: EncodedRows) -> list[Any]:
    """Insert rows that :func:`entityworks.sql.encoded.encode_rows` encoded (usually in the
    process that made the objects), with their child rows, in one transaction; returns
    their keys (generated where they were ``None``), in order.

    The same backend write as ``insert_many``; only the dialect's part of the encoding is
    left (bind processors, SQLite's checks, companion columns). A refused row raises
    :class:`WriteError` naming it; nothing of the batch is then kept.
    """
    from .encoded import layout

    model = db.model(batch.cls)
    if batch.layout != layout(model.schema):
        raise WriteError(
            f"{model.schema.name}: rows encoded for columns "
            f"{list(batch.layout)}, the table has {list(layout(model.schema))}",
            table=model.schema.name,
        )
    if not batch.rows:
        return []
    if batch.children and (model.schema.primary_key is None or model.schema.composite):
        raise WriteError(
            f"{model.schema.name}: child rows need the parent's single key", table=model.schema.name
        )  # pragma: no cover - refused by schema
    children = dict(model.children)
    with db.connection(write=True) as conn:
        keys = write_encoded(db, conn, model, batch.rows, counting_from(0))
        for part in batch.children:
            child = children[part.field]
            links = child.schema.links
            if links != 2 or part.layout != layout(child.schema, links):
                raise WriteError(
                    f"{child.schema.name}: rows encoded for other columns", table=child.schema.name
                )
            prefixes = chain.from_iterable(map(repeat, [(k,) for k in keys], part.counts))
            rows = list(map(add, prefixes, part.rows))
            starts = list(accumulate(part.counts, initial=0))
            # a child row's number in errors: its owner's
            write_encoded(db, conn, child, rows, lambda i, s=starts: bisect_right(s, i) - 1)  # type: ignore[misc]
    return keys


def write_encoded(
    db: Database,
    conn: sa.Connection,
    model: BoundModel,
    rows: Sequence[tuple[Any, ...]],
    number: RowNumber,
    *,
    values: bool = False,
) -> list[Any]:
    """Write encoded schema rows; the keys of a top-level table's rows (generated where
    ``None``), else ``[]``. ``values``: rows of field values as instances hold them (the
    columnar lane), encoded and checked here as the instances' rows are."""
    if not rows:
        return []
    key = model.schema.primary_key if model.schema.parent is None else None
    backend = db.backend
    if key is None:
        backend.write_rows(
            conn, Rows(db, conn, model, rows, number, schema_rows=not values, value_rows=values)
        )
        return []
    at = model.fields.index(key.name)
    keys = list(rows.columns[at]) if isinstance(rows, ColumnRows) else [row[at] for row in rows]
    generated = [i for i, k in enumerate(keys) if k is None]
    if generated and not key.autoincrement:
        raise WriteError(
            f"{model.schema.name}: row {number(generated[0])} has no key",
            table=model.schema.name,
            row=number(generated[0]),
            column=key.name,
        )
    if generated:
        new = backend.insert_generated(
            conn,
            Rows(
                db,
                conn,
                model,
                _taken(rows, generated),
                lambda i: number(generated[i]),
                schema_rows=not values,
                value_rows=values,
            ),
        )
        for i, k in zip(generated, new, strict=True):
            keys[i] = k
    if len(generated) < len(rows):
        chosen = set(generated)
        given = [i for i in range(len(rows)) if i not in chosen] if chosen else range(len(rows))
        backend.write_rows(
            conn,
            Rows(
                db,
                conn,
                model,
                _taken(rows, given) if chosen else rows,
                (lambda i: number(given[i])) if chosen else number,
                schema_rows=not values,
                value_rows=values,
            ),
        )
    return keys


def _taken(rows: Sequence[tuple[Any, ...]], indexes: Sequence[int]) -> Sequence[tuple[Any, ...]]:
    """The rows at ``indexes`` (all of them: ``rows`` itself)."""
    if len(indexes) == len(rows):
        return rows
    if isinstance(rows, ColumnRows):
        return rows.take(indexes)
    return [rows[i] for i in indexes]


def insert_children(
    db: Database,
    conn: sa.Connection,
    model: BoundModel,
    objs: Sequence[Any],
    keys: Sequence[Any],
    batch_size: int,
    numbers: Sequence[int] | None = None,
) -> None:
    """Insert the child rows of ``objs``: ``(*key, position, item)``, where ``key`` is
    the root's key (and, below the first level, the ancestors' positions); then theirs.
    ``numbers``: the caller's row of each object (by default its index)."""
    optional = {c.field for c in model.schema.children if c.optional}
    for fname, child in model.children:
        rows = []
        owners: list[int] = []  # each child row's parent row, the number errors give
        for number, (parent, key) in enumerate(zip(objs, keys, strict=True)):
            items = getattr(parent, fname)
            if items is None and fname in optional:
                continue  # None: the column of the field's name says so, no rows
            if items is None:
                raise WriteError(
                    f"{model.schema.name}.{fname} is None; use an empty list",
                    table=model.schema.name,
                    column=fname,
                )
            prefix = (key,) if model.schema.parent is None else key
            for position, item in enumerate(items):
                if type(item) is not child.cls:
                    raise WriteError(
                        f"{model.schema.name}.{fname}[{position}] is a "
                        f"{type(item).__qualname__}, not a {child.cls.__qualname__}",
                        table=model.schema.name,
                        column=fname,
                    )
                rows.append((*prefix, position, item))
            owners.extend([number if numbers is None else numbers[number]] * len(items))
        if rows:
            try:  # errors give the child row's index: named below with its owner
                for start, part in batches(rows, batch_size):
                    db.backend.write_rows(
                        conn, Rows(db, conn, child, part, counting_from(start), "insert")
                    )
            except (ValueEncodingError, WriteError) as exc:
                raise _child_error(exc, model, fname, child, rows, owners) from None
            if child.children:
                insert_children(
                    db,
                    conn,
                    child,
                    [r[-1] for r in rows],
                    [r[:-1] for r in rows],
                    batch_size,
                    owners,
                )


def _child_error(
    exc: ValueEncodingError | WriteError,
    model: BoundModel,
    fname: str,
    child: BoundModel,
    rows: list[tuple[Any, ...]],
    owners: list[int],
) -> ValueEncodingError | WriteError:
    """``exc``, raised for child row ``exc.row`` of ``rows``, told as the row of its owner
    and the item's table and index: ``row 1 (runs_steps item 1000 of row 1,
    Run.steps[1000]), column 'n': ...``; ``row`` stays the owner's row, as for the owner's
    own columns."""
    k = exc.row
    if k is None or not 0 <= k < len(rows):
        return exc
    owner, position = owners[k], rows[k][-2]
    where = (
        f"{child.schema.name} item {position} of row {owner}, "
        f"{model.cls.__qualname__}.{fname}[{position}]"
    )
    text = str(exc)
    mark = f"row {k}, "
    if mark in text:
        text = text.replace(mark, f"row {owner} ({where}), ", 1)
    else:
        text = f"{text} ({where})"
    if isinstance(exc, ValueEncodingError):
        return ValueEncodingError(text, column=exc.column, row=owner, value=exc.value)
    return WriteError(text, table=exc.table, row=owner, column=exc.column)


def delete_children(
    db: Database, conn: sa.Connection, model: BoundModel, keys: Sequence[Any]
) -> None:
    """Delete the child rows (children of children first) of the rows with ``keys``."""
    encoded = encoded_keys(model, list(keys))
    for child in reversed(descendants(model)):  # the deepest first
        for start in range(0, len(encoded), 500):
            conn.execute(
                child.table.delete().where(
                    child.table.c[PARENT_COLUMN].in_(encoded[start : start + 500])
                )
            )


@contextmanager
def unset_fields_named(model: BoundModel, objs: Sequence[Any], start: int = 0) -> Iterator[None]:
    """Turn the AttributeError of a field nobody set (``field(init=False)`` without a
    default, left unset by ``__post_init__``) into a WriteError naming row and field
    (``start``: the input index of ``objs[0]``)."""
    try:
        yield
    except AttributeError as exc:
        error = _unset_field(model, objs, start)
        if error is None:
            raise
        raise error from exc


def _unset_field(model: BoundModel, objs: Sequence[Any], start: int) -> WriteError | None:
    names = [model.fields[i] for i in model.field_index]
    children = model.children
    for row, obj in enumerate(objs, start):
        owners = [(obj, names, "")]
        for fname, child in children:
            items = getattr(obj, fname, None) or []
            child_names = [child.fields[i] for i in child.field_index]
            owners += [(item, child_names, f".{fname}[{i}]") for i, item in enumerate(items)]
        for owner, fields, where in owners:
            for name in fields:
                if not hasattr(owner, name):
                    what = f"{type(owner).__qualname__}.{name}"
                    return WriteError(
                        f"{model.schema.name}: row {row}, column {name!r}: {what} is not "
                        f"set{f' (in {where[1:]})' if where else ''}; a field(init=False) "
                        "without a default must be set by __post_init__; nothing was written",
                        table=model.schema.name,
                        row=row,
                        column=name,
                    )
    return None


def check_keys(model: BoundModel, keys: list[Any], start: int = 0) -> bool:
    """True when every key has exactly the key's native type; otherwise refuse a key of
    another type (SQLite's rowid would turn ``'12'`` into 12), ``None`` being left to the
    caller (a generated key, or an error). ``start``: the input index of ``keys[0]``."""
    key = model.schema.primary_key
    assert key is not None
    native = key.info.native
    if native is None or count_type(keys, native) == len(keys):
        return native is not None
    for i, value in enumerate(keys):
        if value is not None and type(value) is not native:
            try:
                key.info.checked(value)
            except (TypeError, ValueError) as exc:
                raise encode_error(key.name, value, exc, start + i) from None
    return False


__all__ = [
    "batches",
    "check_keys",
    "delete_children",
    "insert_children",
    "insert_encoded",
    "insert_many",
    "insert_rows",
    "one_class",
    "unset_fields_named",
    "upsert_many",
    "write_encoded",
]

"""The columnar lane: Arrow, pandas and Parquet rows into a table, no instance per row.

``Store.insert_arrow`` / ``insert_pandas`` / ``insert_parquet`` read their input a batch
at a time (a Parquet file by record batches: bounded memory) and hand each batch to the
one write pipeline (``write_encoded`` with ``values``) as :class:`ColumnRows`:

* where the backend makes a field's SQL columns from its Arrow column itself
  (``Backend.arrow_form``: SQLite's text of dates, times, datetimes and Decimals, made by
  Arrow's kernels), those columns, ready;
* where the backend makes the whole batch ready for its bulk writer
  (``Backend.arrow_rows``: PostgreSQL's binary COPY rows), that, which it sends as it is;
* every other field's values decoded as :func:`~entityworks.arrow.from_arrow` decodes them,
  then encoded and checked a column at a time by the same ``RowCodec.fast_columns`` as
  ``insert_many``'s rows of instances.

The values of a field taken the first two ways are decoded only if they are asked for (a
refused batch written again the usual way, a row located), so the same values are
stored, or refused where ``insert_many`` would refuse them. The whole call is one
transaction: a refused row writes nothing and its error names the class, the row (its
index in the whole input) and the column.

A class with child lists is refused (its rows go through ``insert_many``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._gcpause import paused_gc
from ..errors import EntityworksError, WriteError
from ._bound import BoundModel, counting_from
from ._bulk import BATCH, ColumnRows, LazyColumn
from ._database import Database
from ._pipeline import write_encoded

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa


def _columnar_model(db: Database, cls: type) -> BoundModel:
    model = db.model(cls)
    if model.schema.children:
        fields = ", ".join(child.field for child in model.schema.children)
        raise WriteError(
            f"{cls.__qualname__} has child lists ({fields}): the columnar lane writes one "
            "table; read the rows with entityworks.from_arrow and write them with "
            "Store.insert_many",
            table=model.schema.name,
        )
    return model


def _generated_key(model: BoundModel) -> str | None:
    """The field whose column the input may leave out: a single key the database makes."""
    key = model.schema.primary_key
    if key is None or model.schema.composite or not key.autoincrement:
        return None
    return key.name


def _slices(tables: Iterable[pa.Table], size: int) -> Iterator[pa.Table]:
    """``tables`` cut into tables of at most ``size`` rows (zero-copy slices)."""
    for table in tables:
        if table.num_rows <= size:
            if table.num_rows:
                yield table
            continue
        for start in range(0, table.num_rows, size):
            yield table.slice(start, size)


def _as_tables(data: Any) -> Iterator[pa.Table]:
    """A table, a record batch, a ``RecordBatchReader`` or an iterable of record batches
    (or tables), as tables, read as they come."""
    import pyarrow as pa

    if isinstance(data, pa.Table):
        yield data
        return
    if isinstance(data, pa.RecordBatch):
        yield pa.Table.from_batches([data])
        return
    if isinstance(data, str | bytes | Path) or not isinstance(data, Iterable):
        raise TypeError(
            "insert_arrow takes a pyarrow Table, a RecordBatch, a RecordBatchReader or an "
            f"iterable of record batches, not a {type(data).__qualname__}"
        )
    for part in data:
        if isinstance(part, pa.RecordBatch):
            yield pa.Table.from_batches([part])
        elif isinstance(part, pa.Table):
            yield part
        else:
            raise TypeError(
                f"insert_arrow takes record batches (or tables), not a {type(part).__qualname__}"
            )


def _arrow_forms(db: Database, model: BoundModel) -> list[tuple[int, str, bool, Any]]:
    """``(schema index, field, Optional, form)`` of the fields whose SQL columns the
    backend computes from their Arrow column (``Backend.arrow_form``); the key is not."""
    key = model.schema.primary_key
    found = []
    for i, c in enumerate(model.schema.columns):
        if key is not None and c.name == key.name:
            continue
        parts = model.codec.plan[i][2] if model.codec.plan else ()
        form = db.backend.arrow_form(c.info, tuple(p.suffix for p in parts))
        if form is not None:
            found.append((i, c.name, c.nullable, form))
    return found


def insert_arrow(db: Database, cls: type, data: Any, *, batch_size: int = BATCH) -> int:
    """Write the rows of ``data`` (see :func:`_as_tables`) into ``cls``'s table in one
    transaction, ``batch_size`` rows at a time; returns the row count."""
    from ..arrow.columns import older_names
    from ..arrow.read import value_columns

    model = _columnar_model(db, cls)
    schema = model.schema
    may_lack = _generated_key(model)
    key = schema.primary_key.name if schema.primary_key is not None else None
    forms = _arrow_forms(db, model)
    count = 0
    parts = _slices(_as_tables(data), max(1, batch_size))
    with db.connection(write=True) as conn:
        for part in parts:
            size = part.num_rows
            # the SQL columns made from Arrow where the backend can (each column's values
            # then decoded only if asked for: a row refused, located value by value)
            ready: dict[int, list[Sequence[Any]]] = {}
            made: set[str] = set()
            # (a field with companion columns beside it, as entityworks 0.2 wrote them,
            # is read by from_arrow's rules)
            older = older_names(schema.field_columns, set(part.column_names))
            # the whole batch made ready for the backend's bulk writer where it can: then
            # only the key is decoded now (the rest only if the database refuses the rows)
            whole = None if forms or older else db.backend.arrow_rows(model, part)
            if whole is not None:
                made = {c.name for c in schema.field_columns if c.name != key}
            if forms:
                for i, name, nullable, form in forms:
                    if name in part.column_names and not any(
                        p.column(name) == n for n, p in older.items()
                    ):
                        sql = form(part.column(name), nullable)
                        if sql is not None:
                            ready[i] = sql
                            made.add(name)
            try:
                columns: dict[str, Sequence[Any]] = dict(
                    value_columns(schema, part, may_lack=may_lack, skip=made)
                )
            except EntityworksError as exc:
                raise _named(exc, cls, count) from None
            for name in made:
                columns[name] = LazyColumn(
                    partial(_decoded, schema, part, name, may_lack, cls, count), size
                )
            absent = [None] * size  # a key the database generates
            rows = ColumnRows(
                [columns.get(c.name, absent) for c in schema.columns], size, ready, whole
            )
            # checked, encoded and written as insert_many's rows of instances are (its
            # errors name the row in the whole input); the rows' tuples and the driver's
            # parameters hold plain values: the collector's passes would find nothing
            with paused_gc():
                write_encoded(db, conn, model, rows, counting_from(count), values=True)
            count += size
    return count


def _decoded(
    schema: Any, part: pa.Table, name: str, may_lack: str | None, cls: type, start: int
) -> list[Any]:
    """The values of field ``name`` decoded from ``part`` (as ``from_arrow`` does)."""
    from ..arrow.read import value_columns

    others = {c.name for c in schema.field_columns} - {name}
    try:
        return value_columns(schema, part, may_lack=may_lack, skip=others)[name]
    except EntityworksError as exc:  # (a null found past the first slice of a COPY)
        raise _named(exc, cls, start) from None


def _named(exc: EntityworksError, cls: type, start: int) -> EntityworksError:
    """``exc`` with the class named first (as a refused write names it), and the row of a
    column-wide refusal (numbered within its batch) counted in the whole input."""
    row = getattr(exc, "row", None)
    text = str(exc)
    if row is not None and start and text.startswith(f"row {row},"):
        row += start
        text = f"row {row}," + text[len(f"row {exc.row},") :]  # type: ignore[attr-defined]
    if not text.startswith(cls.__qualname__):
        text = f"{cls.__qualname__}: {text}"
    try:
        new = type(exc)(text, **_details(exc, row))
    except TypeError:  # pragma: no cover - an error type of other arguments
        return exc
    return new


def _details(exc: EntityworksError, row: int | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in ("column", "value", "table"):
        if getattr(exc, name, None) is not None:
            out[name] = getattr(exc, name)
    if row is not None:
        out["row"] = row
    return out


def insert_pandas(db: Database, cls: type, frame: pd.DataFrame, *, batch_size: int = BATCH) -> int:
    """Write the rows of ``frame`` (read as :func:`~entityworks.from_pandas` reads it)."""
    from ..arrow.read import pandas_table

    model = _columnar_model(db, cls)
    try:
        table = pandas_table(cls, frame, registry=db.registry, may_lack=_generated_key(model))
    except EntityworksError as exc:
        raise _named(exc, cls, 0) from None
    return insert_arrow(db, cls, table, batch_size=batch_size)


def insert_parquet(db: Database, cls: type, path: str | Path, *, batch_size: int = BATCH) -> int:
    """Write the rows of the Parquet file ``path``, read a record batch at a time."""
    import pyarrow.parquet as pq
    from pyarrow import ArrowException

    from ..arrow.columns import arrow_schema, older_names

    model = _columnar_model(db, cls)
    names = [f.name for f in arrow_schema(cls, registry=db.registry)]
    try:
        opened = pq.ParquetFile(str(path))
    except (ArrowException, ValueError) as exc:
        raise WriteError(f"{path}: not a Parquet file ({exc})", table=model.schema.name) from None
    with opened as file:
        available = set(file.schema_arrow.names)
        older = older_names(model.schema.field_columns, available)
        wanted = [*(n for n in names if n in available), *older]
        return insert_arrow(
            db,
            cls,
            file.iter_batches(batch_size=max(1, batch_size), columns=wanted),
            batch_size=batch_size,
        )


__all__ = ["insert_arrow", "insert_pandas", "insert_parquet"]

"""Dataclass lists <-> ``pyarrow.Table`` <-> ``pandas.DataFrame`` <-> Parquet.

The Arrow schema is built from the registry (``TypeInfo.arrow``), never inferred from the
values, so an all-``None`` column still has its type and an ``Optional[int]`` stays int64.
Conversion is column-wise: one attribute getter and one ``pyarrow.array`` call per column,
with the registry's ``to_arrow`` / ``from_arrow`` applied only where a type needs them. In
pandas every column uses ``pandas.ArrowDtype``: nullable ints stay integers, and ``None``
stays distinct from ``NaN`` and from the empty string, so the round trip is exact.

A ``list[Item]`` field (a child table in SQL) becomes an Arrow ``list<struct>`` column.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from operator import attrgetter
from pathlib import Path
from typing import Any, TypeVar

import pyarrow as pa

from ._gcpause import paused_gc
from .errors import ValueEncodingError
from .registry import TypeRegistry, encode_error
from .registry import registry as default_registry
from .schema import Column, TableSchema, table_schema

T = TypeVar("T")
_NUMPY_FAST = (pa.types.is_int64, pa.types.is_float64, pa.types.is_boolean)


def _column_field(c: Column) -> pa.Field:
    return pa.field(c.name, c.info.arrow(), nullable=c.nullable)


def _layout(schema: TableSchema) -> list[tuple[str, Column | None, TableSchema | None]]:
    """The dataclass fields in order: a column, or a child table's schema."""
    columns = {c.name: c for c in schema.field_columns}
    children = {child.field: child.schema for child in schema.children}
    return [(f.name, columns.get(f.name), children.get(f.name))
            for f in dataclasses.fields(schema.cls) if f.name in columns or f.name in children]


def arrow_schema(cls: type, *, registry: TypeRegistry = default_registry) -> pa.Schema:
    """The Arrow schema of ``cls``: one field per dataclass field, types from the registry."""
    schema = table_schema(cls, registry)
    fields = []
    for name, column, child in _layout(schema):
        if column is not None:
            fields.append(_column_field(column))
        else:
            assert child is not None
            item = pa.struct([_column_field(c) for c in child.field_columns])
            fields.append(pa.field(name, pa.list_(pa.field("item", item, nullable=False)),
                                   nullable=False))
    return pa.schema(fields, metadata={b"entityworks.table": schema.name.encode()})


def _encode_values(column: Column, values: list[Any], first: int = 0) -> pa.Array:
    info = column.info
    arrow_type = info.arrow()
    try:
        if info.to_arrow is not None:
            encode = info.to_arrow
            values = [None if v is None else encode(v) for v in values]
        if not column.nullable and None in values:
            raise ValueError("None in a column that is not Optional")
        return pa.array(values, type=arrow_type, from_pandas=False)
    except Exception:
        for i, value in enumerate(values):  # locate the row and say why
            try:
                if value is None and not column.nullable:
                    raise ValueError("None in a column that is not Optional")
                if value is not None:
                    if info.to_arrow is not None:
                        value = info.to_arrow(value)
                    pa.array([value], type=arrow_type, from_pandas=False)
            except Exception as exc:
                raise encode_error(column.name, values[i], exc, first + i) from None
        raise


def _child_array(child: TableSchema, lists: list[Any], first: int) -> pa.Array:
    columns = child.field_columns
    getter = attrgetter(*(c.name for c in columns)) if columns else (lambda _o: ())
    flat: list[Any] = []
    offsets = [0]
    for i, items in enumerate(lists):
        if items is None:
            raise ValueEncodingError(f"row {first + i}: a child list is None; use []",
                                     row=first + i)
        flat.extend(items)
        offsets.append(len(flat))
    rows = [getter(o) if len(columns) != 1 else (getter(o),) for o in flat]
    arrays = [_encode_values(c, [r[j] for r in rows]) for j, c in enumerate(columns)]
    struct = pa.StructArray.from_arrays(arrays, fields=[_column_field(c) for c in columns]) \
        if columns else pa.array([{}] * len(flat), type=pa.struct([]))
    return pa.ListArray.from_arrays(pa.array(offsets, type=pa.int32()), struct)


def to_arrow(cls: type, rows: Iterable[Any], *, registry: TypeRegistry = default_registry
             ) -> pa.Table:
    """Instances of ``cls`` -> ``pyarrow.Table`` with the registry's schema."""
    schema = table_schema(cls, registry)
    objs = rows if isinstance(rows, list) else list(rows)
    bad = next((i for i, o in enumerate(objs) if type(o) is not cls), None)
    if bad is not None:
        raise ValueEncodingError(f"row {bad} is a {type(objs[bad]).__qualname__}, not a "
                                 f"{cls.__qualname__}", row=bad)
    arrays = []
    with paused_gc():
        for name, column, child in _layout(schema):
            values = list(map(attrgetter(name), objs))
            if column is not None:
                arrays.append(_encode_values(column, values))
            else:
                assert child is not None
                arrays.append(_child_array(child, values, 0))
    return pa.Table.from_arrays(arrays, schema=arrow_schema(cls, registry=registry))


def _decode_column(column: Column, array: pa.ChunkedArray | pa.Array) -> list[Any]:
    expected = column.info.arrow()
    if array.type != expected:
        try:
            array = array.cast(expected)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
            raise ValueEncodingError(f"column {column.name!r}: Arrow type {array.type} cannot "
                                     f"become {expected}: {exc}", column=column.name) from None
    if array.null_count and not column.nullable:
        import pyarrow.compute as pc

        row = pc.index(pc.is_null(array), True).as_py()
        raise ValueEncodingError(f"row {row}, column {column.name!r}: null in a column that "
                                 "is not Optional", column=column.name, row=row)
    if not array.null_count and any(check(array.type) for check in _NUMPY_FAST):
        values = array.to_numpy().tolist()   # much faster than to_pylist for plain numbers
    else:
        values = array.to_pylist()
    decode = column.info.from_arrow
    if decode is not None:
        try:
            values = [None if v is None else decode(v) for v in values]
        except Exception as exc:
            raise ValueEncodingError(f"column {column.name!r}: cannot decode: {exc}",
                                     column=column.name) from None
    return values


def _constructor(schema: TableSchema, names: list[str]) -> Callable[..., Any]:
    cls = schema.cls
    init = [f.name for f in dataclasses.fields(cls) if f.init]
    if init == names:
        return cls

    def build(*values: Any) -> Any:
        kwargs = dict(zip(names, values, strict=True))
        obj = cls(**{k: v for k, v in kwargs.items() if k in init})
        for k, v in kwargs.items():
            if k not in init:
                object.__setattr__(obj, k, v)
        return obj

    return build


def _child_lists(child: TableSchema, array: Any) -> list[list[Any]]:
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    struct = array.flatten()
    columns = child.field_columns
    decoded = [_decode_column(c, struct.field(c.name)) for c in columns]
    build = _constructor(child, [c.name for c in columns])
    items = list(map(build, *decoded)) if columns else [build() for _ in range(len(struct))]
    offsets = array.offsets.to_pylist()
    return [items[offsets[i]:offsets[i + 1]] for i in range(len(array))]


def from_arrow(cls: type[T], table: pa.Table, *, registry: TypeRegistry = default_registry
               ) -> list[T]:
    """``pyarrow.Table`` -> instances of ``cls`` (columns matched by name, cast if needed)."""
    schema = table_schema(cls, registry)
    layout = _layout(schema)
    missing = [name for name, _c, _ch in layout if name not in table.column_names]
    if missing:
        raise ValueEncodingError(f"the table has no column {missing[0]!r} for "
                                 f"{cls.__qualname__}; it has {table.column_names}",
                                 column=missing[0])
    build = _constructor(schema, [name for name, _c, _ch in layout])
    if not layout:
        return [build() for _ in range(table.num_rows)]
    with paused_gc():
        columns = []
        for name, column, child in layout:
            if column is not None:
                columns.append(_decode_column(column, table.column(name)))
            else:
                assert child is not None
                columns.append(_child_lists(child, table.column(name)))
        return list(map(build, *columns))


def to_pandas(cls: type, rows: Iterable[Any], *, registry: TypeRegistry = default_registry
              ) -> Any:
    """Instances -> ``pandas.DataFrame`` with ``ArrowDtype`` columns (exact, nullable)."""
    import pandas as pd

    return to_arrow(cls, rows, registry=registry).to_pandas(types_mapper=pd.ArrowDtype)


def from_pandas(cls: type[T], frame: Any, *, registry: TypeRegistry = default_registry
                ) -> list[T]:
    """``pandas.DataFrame`` -> instances of ``cls``.

    ``ArrowDtype`` columns convert exactly. NumPy float columns keep ``NaN`` as NaN (a NumPy
    float cannot say "missing"); other columns take ``None``/``NA``/``NaT`` as missing.
    """
    target = arrow_schema(cls, registry=registry)
    arrays = []
    for f in target:
        if f.name not in frame.columns:
            raise ValueEncodingError(f"the DataFrame has no column {f.name!r} for "
                                     f"{cls.__qualname__}", column=f.name)
        series = frame[f.name]
        try:
            arrays.append(pa.array(series, type=f.type,
                                   from_pandas=not pa.types.is_floating(f.type)))
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError) as exc:
            raise ValueEncodingError(f"column {f.name!r}: cannot convert to {f.type}: {exc}",
                                     column=f.name) from None
    return from_arrow(cls, pa.Table.from_arrays(arrays, names=target.names),
                      registry=registry)


def write_parquet(cls: type, rows: Iterable[Any], path: str | Path, *,
                  registry: TypeRegistry = default_registry, **options: Any) -> Path:
    """Write instances to a Parquet file (``options`` go to ``pyarrow.parquet.write_table``)."""
    import pyarrow.parquet as pq

    pq.write_table(to_arrow(cls, rows, registry=registry), str(path), **options)
    return Path(path)


def read_parquet(cls: type[T], path: str | Path, *,
                 registry: TypeRegistry = default_registry) -> list[T]:
    """Read a Parquet file into instances of ``cls``."""
    import pyarrow.parquet as pq

    names = [f.name for f in arrow_schema(cls, registry=registry)]
    available = pq.read_schema(str(path)).names
    return from_arrow(cls, pq.read_table(str(path), columns=[n for n in names
                                                              if n in available]),
                      registry=registry)


def rows_to_arrow(schema: TableSchema, batches: Iterable[Sequence[Sequence[Any]]]
                  ) -> pa.Table:
    """Batches of column tuples (table column order, no child tables) -> ``pyarrow.Table``."""
    target = pa.schema([_column_field(c) for c in schema.columns],
                       metadata={b"entityworks.table": schema.name.encode()})
    record_batches = []
    first = 0
    for batch in batches:
        if not batch:
            continue
        columns = list(zip(*batch, strict=True))
        arrays = [_encode_values(c, list(values), first)
                  for c, values in zip(schema.columns, columns, strict=True)]
        record_batches.append(pa.RecordBatch.from_arrays(arrays, schema=target))
        first += len(batch)
    return pa.Table.from_batches(record_batches, schema=target)


def store_to_arrow(store: Any, cls: type, *, where: Any = None, order_by: Any = None
                   ) -> pa.Table:
    """A query's rows as Arrow (see :meth:`Store.to_arrow`)."""
    schema = store.schema(cls)
    if schema.children:
        with store.transaction():  # one connection for parents and the child queries
            return to_arrow(cls, list(store.select(cls, where=where, order_by=order_by)),
                            registry=store.registry)
    table = rows_to_arrow(schema, store.rows(cls, where=where, order_by=order_by))
    names = [name for name, _c, _ch in _layout(schema)]
    return table.select(names)


__all__ = [
    "arrow_schema",
    "from_arrow",
    "from_pandas",
    "read_parquet",
    "rows_to_arrow",
    "store_to_arrow",
    "to_arrow",
    "to_pandas",
    "write_parquet",
]

"""Writing Arrow (see :mod:`entityworks.arrow`): instances or rows of a query -> Arrow
arrays, each value held to the registry's rule, a decimal column fitted to its values; and
the pandas and Parquet outputs made from them."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from operator import attrgetter, countOf
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from .._files import atomic_output
from .._gcpause import paused_gc
from ..errors import ValueEncodingError
from ..model.schema import (
    TableSchema,
    table_schema,
)
from ..registry import TypeRegistry
from ..registry import registry as default_registry
from ..types.construct import column_getter
from ._encode import encode_column
from .columns import (
    arrow_schema,
    column_field,
    decimal_type,
    field_layout,
)

if TYPE_CHECKING:
    import pandas as pd


def _widest(types: list[Any]) -> Any:
    """One type that holds the arrays of every type in ``types`` (batches of one column):
    for decimals, the most digits before the point and the largest scale; a lossless cast."""
    if all(t == types[0] for t in types):
        return types[0]
    names = [f.name for f in types[0]] if pa.types.is_struct(types[0]) else None
    if names is not None and all(
        pa.types.is_struct(t) and [f.name for f in t] == names for t in types
    ):
        return pa.struct(
            [
                pa.field(f.name, _widest([t.field(i).type for t in types]))
                for i, f in enumerate(types[0])
            ]
        )  # a value and its companions
    if not all(pa.types.is_decimal(t) for t in types):  # pragma: no cover - decimals only
        raise ValueEncodingError(f"batches of one column have the types {types}")
    return decimal_type(max(t.precision - t.scale for t in types), max(t.scale for t in types))


def _child_array(child: TableSchema, lists: list[Any], first: int) -> pa.Array[Any]:
    columns = child.field_columns
    getter = attrgetter(*(c.name for c in columns)) if columns else (lambda _o: ())
    flat: list[Any] = []
    offsets = [0]
    owners: list[int] = []  # each item's parent row, the number errors give
    for i, items in enumerate(lists):
        if items is None:
            raise ValueEncodingError(
                f"row {first + i}: a child list is None; use []", row=first + i
            )
        flat.extend(items)
        offsets.append(len(flat))
        owners.extend([first + i] * len(items))
    rows = [getter(o) if len(columns) != 1 else (getter(o),) for o in flat]
    return _list_array(
        child, [[r[j] for r in rows] for j in range(len(columns))], offsets, owners.__getitem__
    )


def _list_array(
    child: TableSchema,
    values: list[list[Any]],
    offsets: list[int],
    number: Callable[[int], int],
) -> pa.Array[Any]:
    """The ``list<struct>`` array of a child table: its items' values per field column
    (``values``), each row's items from ``offsets[i]`` to ``offsets[i + 1]``; ``number``
    gives the row that owns an item (for errors)."""
    columns = child.field_columns
    arrays = [
        encode_column(c, data, number=number) for c, data in zip(columns, values, strict=True)
    ]
    fields = [column_field(c) for c in columns]
    struct = (
        pa.StructArray.from_arrays(
            arrays, fields=[f.with_type(a.type) for f, a in zip(fields, arrays, strict=True)]
        )
        if columns
        else pa.array([{}] * offsets[-1], type=pa.struct([]))
    )
    return pa.ListArray.from_arrays(pa.array(offsets, type=pa.int32()), struct)


def _typed_as(schema: pa.Schema, arrays: list[pa.Array[Any]]) -> pa.Schema:
    """``schema`` with the types of ``arrays`` (a decimal column's type follows its values,
    in a child table's struct too)."""
    fields = []
    for f, array in zip(schema, arrays, strict=True):
        if f.type == array.type:
            fields.append(f)
        elif pa.types.is_list(f.type):
            item = f.type.value_field
            fields.append(
                pa.field(
                    f.name, pa.list_(item.with_type(array.type.value_type)), nullable=f.nullable
                )
            )
        else:
            fields.append(f.with_type(array.type))
    metadata: dict[bytes | str, bytes | str] = {k: v for k, v in (schema.metadata or {}).items()}
    return pa.schema(fields, metadata=metadata)


#: Rows converted at a time by :func:`to_arrow`: each chunk's objects and values stay in
#: the CPU cache from the attribute reads through the type test to pyarrow's conversion
#: (1M rows column by column read every object from memory once per pass).
ROWS_PER_CHUNK = 8192


def to_arrow(
    cls: type, rows: Iterable[Any], *, registry: TypeRegistry = default_registry
) -> pa.Table:
    """Instances of ``cls`` -> ``pyarrow.Table`` with the registry's schema: one column per
    dataclass field, named after it (see :func:`arrow_schema`).

    The rows are converted ``ROWS_PER_CHUNK`` at a time (a table with child lists at
    once), each column's arrays joined at the end: a decimal column's chunks, each of the
    type its values fit, are cast (without loss) to the widest first."""
    schema = table_schema(cls, registry)
    objs = rows if isinstance(rows, list) else list(rows)
    layout = field_layout(schema)
    size = ROWS_PER_CHUNK if not schema.children else max(len(objs), 1)
    getters = [column_getter(name) for name, _column, _child in layout]
    chunks: list[list[pa.Array[Any]]] = []
    with paused_gc():
        for start in range(0, max(len(objs), 1), size):
            part = objs[start : start + size]
            if countOf(map(type, part), cls) != len(part):
                bad = start + next(i for i, o in enumerate(part) if type(o) is not cls)
                raise ValueEncodingError(
                    f"row {bad} is a {type(objs[bad]).__qualname__}, not a {cls.__qualname__}",
                    row=bad,
                )
            arrays = []
            for get, (_name, column, child) in zip(getters, layout, strict=True):
                values = get(part)
                if column is not None:
                    arrays.append(encode_column(column, values, start))
                else:
                    assert child is not None
                    arrays.append(_child_array(child, values, start))
            chunks.append(arrays)
    joined = [_joined([arrays[j] for arrays in chunks]) for j in range(len(chunks[0]))]
    target = _typed_as(arrow_schema(cls, registry=registry), joined)
    return pa.Table.from_arrays(joined, schema=target)


def _joined(arrays: list[pa.Array[Any]]) -> pa.Array[Any]:
    """One array of one column's chunks; a chunk without a value (its type the
    registry's, which decides nothing) takes the type of those with one."""
    if len(arrays) == 1:
        return arrays[0]
    kind = _widest([a.type for a in arrays if a.null_count < len(a)] or [arrays[0].type])
    return pa.concat_arrays([a if a.type == kind else a.cast(kind) for a in arrays])


def rows_to_arrow(schema: TableSchema, batches: Iterable[Sequence[Sequence[Any]]]) -> pa.Table:
    """Batches of column tuples (table column order, no child tables) -> ``pyarrow.Table``.

    A decimal column's type fits all of its values: each batch is encoded with its own,
    then every batch is cast (without loss) to the widest.
    """
    target = pa.schema(
        [column_field(c) for c in schema.columns],
        metadata={b"entityworks.table": schema.name.encode()},
    )
    encoded: list[list[pa.Array[Any]]] = []
    first = 0
    for batch in batches:
        if not batch:
            continue
        columns = list(zip(*batch, strict=True))
        encoded.append(
            [
                encode_column(c, list(values), first)
                for c, values in zip(schema.columns, columns, strict=True)
            ]
        )
        first += len(batch)
    if encoded:
        # a batch without a value keeps the registry's type, which decides nothing
        types = [
            _widest(
                [arrays[j].type for arrays in encoded if arrays[j].null_count < len(arrays[j])]
                or [f.type]
            )
            for j, f in enumerate(target)
        ]
        target = _typed_as(target, [pa.nulls(0, t) for t in types])
    record_batches = [
        pa.RecordBatch.from_arrays(
            [
                a if a.type == f.type else a.cast(f.type)
                for a, f in zip(arrays, target, strict=True)
            ],
            schema=target,
        )
        for arrays in encoded
    ]
    return pa.Table.from_batches(record_batches, schema=target)


def family_rows_to_arrow(
    schema: TableSchema,
    families: Iterable[tuple[Sequence[Sequence[Any]], Mapping[str, Sequence[Sequence[Any]]]]],
    *,
    registry: TypeRegistry = default_registry,
) -> pa.Table:
    """Batches of column tuples of a table with child lists (table column order), each with
    its child rows (per list field, for each row, its rows of the child table, the link
    columns first, in list order) -> ``pyarrow.Table``: the table :func:`to_arrow` makes of
    the same rows as instances (one field per dataclass field, a child list as
    ``list<struct>``, each column's type fitted to all of its values).

    The rows are gathered a column at a time (no tuple nor instance kept per row) and
    converted at the end, as :func:`to_arrow` converts a table with child lists at once.
    """
    layout = field_layout(schema)
    at = {c.name: i for i, c in enumerate(schema.columns)}
    own: dict[str, list[Any]] = {name: [] for name, column, _ in layout if column is not None}
    lists = {child.field: child.schema for child in schema.children}
    values: dict[str, list[list[Any]]] = {
        name: [[] for _ in child.field_columns] for name, child in lists.items()
    }
    offsets: dict[str, list[int]] = {name: [0] for name in lists}
    count = 0
    with paused_gc():
        for rows, children in families:
            if not rows:
                continue
            columns = list(zip(*rows, strict=True))
            for name, data in own.items():
                data.extend(columns[at[name]])
            for name, item_schema in lists.items():
                owned = children.get(name) or [()] * len(rows)
                ends = offsets[name]
                end = ends[-1]
                for items in owned:
                    end += len(items)
                    ends.append(end)
                flat = [item for items in owned for item in items]
                if flat:
                    item_columns = list(zip(*flat, strict=True))[item_schema.links :]
                    for data, item_values in zip(values[name], item_columns, strict=True):
                        data.extend(item_values)
            count += len(rows)
        arrays = []
        for name, column, child in layout:
            if column is not None:
                arrays.append(encode_column(column, own[name]))
            else:
                assert child is not None
                ends = offsets[name]
                arrays.append(_list_array(child, values[name], ends, partial(_owner, ends)))
    target = _typed_as(arrow_schema(schema.cls, registry=registry), arrays)
    return pa.Table.from_arrays(arrays, schema=target)


def _owner(offsets: list[int], item: int) -> int:
    """The row that owns child item ``item`` (each row's items start at its offset)."""
    return bisect_right(offsets, item) - 1


def to_pandas(
    cls: type, rows: Iterable[Any], *, registry: TypeRegistry = default_registry
) -> pd.DataFrame:
    """Instances -> ``pandas.DataFrame`` with ``ArrowDtype`` columns (exact, nullable)."""
    import pandas as pd

    return to_arrow(cls, rows, registry=registry).to_pandas(types_mapper=pd.ArrowDtype)


def write_parquet(
    cls: type,
    rows: Iterable[Any],
    path: str | Path,
    *,
    registry: TypeRegistry = default_registry,
    **options: Any,
) -> Path:
    """Write instances to a Parquet file (``options`` go to ``pyarrow.parquet.write_table``).

    Only a regular file is written, whole or not at all (see :mod:`entityworks._files`).
    """
    return write_parquet_table(to_arrow(cls, rows, registry=registry), path, **options)


def write_parquet_table(table: pa.Table, path: str | Path, **options: Any) -> Path:
    """Write an Arrow table to a Parquet file through :func:`entityworks._files.atomic_output`."""
    import pyarrow.parquet as pq

    with atomic_output(path) as f:
        pq.write_table(table, f, **options)
    return Path(path)


__all__ = [
    "ROWS_PER_CHUNK",
    "family_rows_to_arrow",
    "rows_to_arrow",
    "to_arrow",
    "to_pandas",
    "write_parquet",
    "write_parquet_table",
]

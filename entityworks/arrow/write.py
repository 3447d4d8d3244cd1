"""Writing Arrow (see :mod:`entityworks.arrow`): instances or rows of a query -> Arrow
arrays, each value held to the registry's rule, a decimal column fitted to its values; and
the pandas and Parquet outputs made from them."""

from __future__ import annotations

import datetime
import decimal
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
    Column,
    TableSchema,
    table_schema,
)
from ..registry import TypeRegistry, encode_error
from ..registry import registry as default_registry
from ..types import columns
from ..types.construct import column_getter
from .columns import (
    arrow_companions,
    arrow_schema,
    column_field,
    companion_type,
    decimal_type,
    field_layout,
    struct_of,
)

if TYPE_CHECKING:
    import pandas as pd

_NoneType = type(None)


def _fitted(arrow_type: Any, data: list[Any]) -> Any:
    """``arrow_type``, or for a decimal column the narrowest type that holds every value of
    ``data`` (Decimals, or None): the digits before the point and the scale of the widest
    ones. A column without a value keeps the registry's type."""
    if not pa.types.is_decimal(arrow_type):
        return arrow_type
    integer = scale = -1
    for value in data:
        if value is not None:
            _sign, digits, exponent = value.as_tuple()
            integer = max(integer, len(digits) + exponent)
            scale = max(scale, -exponent)
    return arrow_type if scale < 0 else decimal_type(max(integer, 0), scale)


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


_timedelta = datetime.timedelta
_MICROSECONDS = pa.duration("us")


def _to_array(data: list[Any], arrow_type: Any) -> pa.Array[Any]:
    """``pyarrow.array(data, type=arrow_type)``; timedeltas through their microseconds,
    exactly: pyarrow's own conversion overflows within a day of -2**63 microseconds."""
    if arrow_type == _MICROSECONDS and countOf(map(type, data), _timedelta) + countOf(
        data, None
    ) == len(data):
        micros = [
            None if v is None else (v.days * 86_400 + v.seconds) * 1_000_000 + v.microseconds
            for v in data
        ]
        durations: pa.Array[Any] = pa.array(micros, type=pa.int64()).cast(arrow_type)
        return durations
    array: pa.Array[Any] = pa.array(data, type=arrow_type, from_pandas=False)
    return array


def _encode_values(
    column: Column, values: list[Any], first: int = 0, number: Callable[[int], int] | None = None
) -> pa.Array[Any]:
    """One column's values -> an Arrow array, each value held to the type's rule.

    Errors name row ``first + i``, or ``number(i)`` (a child row's parent).
    """
    at = number or first.__add__
    info = column.info
    arrow_codec = info.arrow_codec
    arrow_type = arrow_codec.arrow_type()
    native = info.native
    try:
        data = values
        if arrow_codec.encode is not None:
            encode = arrow_codec.encode
            data = [None if v is None else encode(v) for v in values]
        arrow_type = _fitted(arrow_type, data)
        array: pa.Array[Any] = _to_array(data, arrow_type)
        if native is not None and countOf(map(type, values), native) + array.null_count != len(
            values
        ):
            raise TypeError  # pyarrow converts what the rule refuses (1.0 -> 1): check each
        if array.null_count and not column.nullable:
            raise ValueError("None in a column that is not Optional")
        return array
    except Exception:
        pass
    data = []
    for i, value in enumerate(values):  # the rule per value: it converts or names the row
        try:
            if value is None:
                if not column.nullable:
                    raise ValueError("None in a column that is not Optional")
                data.append(None)
                continue
            if native is not None:
                value = info.checked(value)
            data.append(value if arrow_codec.encode is None else arrow_codec.encode(value))
        except Exception as exc:
            raise encode_error(column.name, values[i], exc, at(i)) from None
    arrow_type = _fitted(arrow_codec.arrow_type(), data)
    try:
        converted: pa.Array[Any] = _to_array(data, arrow_type)
        return converted
    except Exception:
        for i, value in enumerate(data):
            try:
                _to_array([value], arrow_type)
            except Exception as exc:
                raise encode_error(column.name, values[i], exc, at(i)) from None
        raise


def _checked_array(
    column: Column, values: list[Any]
) -> tuple[pa.Array[Any], columns.DecimalFacts | None] | None:
    """One column's values -> an Arrow array, checked a column at a time, or ``None`` when
    the test cannot vouch for every value (then ``_encode_values`` holds each to the rule and
    names the row it refuses). With the array: a decimal column's facts.

    The test is the exact type at C speed for the registry's ``native`` types (Arrow itself
    enforces what else their rule says: int64's range, UTF-8), else the entry's
    ``check_column``, only for types whose ``to_arrow`` is nothing or their ``check``:
    values that pass go to pyarrow as they are. A decimal column's type is fitted from the
    facts the test found (digits before and after the point), with no second pass.
    """
    info = column.info
    native = info.native
    arrow_codec = info.arrow_codec
    if native is None and (
        info.check_column is None or arrow_codec.encode not in (None, info.check)
    ):
        return None
    facts = None
    arrow_type = arrow_codec.arrow_type()
    if native is not None:  # Arrow counts the None: one pass for the type
        try:
            array: pa.Array[Any] = pa.array(values, type=arrow_type, from_pandas=False)
        except Exception:  # noqa: BLE001 - a value Arrow cannot hold: the rule per value says
            return None
        if (
            countOf(map(type, values), native) + array.null_count != len(values)
            or array.null_count
            and not column.nullable
        ):
            return None
        return array, None
    test = info.check_column
    assert test is not None
    if pa.types.is_decimal(arrow_type):
        decimals = countOf(map(type, values), decimal.Decimal)
        present = values
        if decimals != len(values):  # None among them (anything else: the rule per value)
            nulls = countOf(map(type, values), _NoneType)
            if decimals + nulls != len(values) or not column.nullable:
                return None
            present = [v for v in values if v is not None]
        if present:
            facts = columns.decimal_facts(present, exact=True)
            # the facts hold every value to the Decimal rule: the column test adds nothing
            if facts is None or not (test is columns.decimal_column or test(present)):
                return None
            arrow_type = decimal_type(max(facts.integer, 0), facts.scale)
    elif not test(values):  # the column tests pass None: Arrow counts them below
        return None
    try:
        array = pa.array(values, type=arrow_type, from_pandas=False)
    except Exception:  # noqa: BLE001 - a value Arrow cannot hold: the rule per value says which
        return None
    if array.null_count and not column.nullable:
        return None  # the rule per value names the row
    return array, facts


def _encode_column(
    column: Column, values: list[Any], first: int = 0, number: Callable[[int], int] | None = None
) -> pa.Array[Any]:
    """The array of one column (see ``columns._column_type``): its values', or a struct of them and
    their companions'. Errors name row ``first + i``, or ``number(i)``.

    Private to the arrow package (read.py uses it too): pyright reads ``pa.Array`` with a
    second, unknown type argument under pandas-stubs 3.1, which a public signature cannot
    state the same way for mypy."""
    fast = _checked_array(column, values)
    own = fast[0] if fast is not None else _encode_values(column, values, first, number)
    if pa.types.is_duration(own.type):
        _refuse_missing_duration(column, values, own, first, number)
    parts = arrow_companions(column)
    if not parts:
        return own
    arrays = [own]
    for part in parts:
        if fast is not None and part.split_column is not None:
            facts = fast[1]
            if (
                facts is not None
                and facts.exponent is not None
                and part.split_column is columns.scale_column
            ):
                # one exponent for the column, which the test found: each value's scale
                scale = -facts.exponent
                if not own.null_count:  # one value repeated, made by Arrow
                    arrays.append(
                        pa.repeat(pa.scalar(scale, type=companion_type(part)), len(values))
                    )
                    continue
                data = [None if v is None else scale for v in values]
            elif own.null_count:
                split = iter(part.split_column([v for v in values if v is not None]))
                data = [None if v is None else next(split) for v in values]
            else:
                data = part.split_column(values)
        else:
            check = column.info.checked
            data = [None if v is None else part.split(check(v)) for v in values]
        arrays.append(pa.array(data, type=companion_type(part)))
    kind = struct_of(own.type, parts, [a.type for a in arrays[1:]])
    return pa.StructArray.from_arrays(
        arrays, fields=list(kind), mask=own.is_null() if own.null_count else None
    )


#: A duration of -2**63 units is pandas' NaT: pandas, and ``pandas.read_parquet`` of the
#: file, would read it as a missing value. Frames refuse it (see ``_refuse_missing_duration``).
_DURATION_NAT = -(2**63)


def _refuse_missing_duration(
    column: Column,
    values: list[Any],
    array: pa.Array[Any],
    first: int,
    number: Callable[[int], int] | None,
) -> None:
    """Refuse, naming its row, a duration of -2**63 units (-2**63 µs for a ``timedelta``):
    Arrow holds it, but pandas reads it as NaT, a missing value, so no frame may carry it."""
    import pyarrow.compute as pc

    ints = array.cast(pa.int64())
    if not len(ints) or pc.min(ints).as_py() != _DURATION_NAT:
        return
    i = pc.index(ints, _DURATION_NAT).as_py()
    at = number or first.__add__
    raise encode_error(
        column.name,
        values[i],
        ValueError(
            "-2**63 microseconds is pandas' NaT (a missing value) in pandas and in what pandas "
            "reads of a Parquet file: frames hold timedeltas from -(2**63 - 1) to 2**63 - 1 "
            "microseconds"
        ),
        at(i),
    )


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
        _encode_column(c, data, number=number) for c, data in zip(columns, values, strict=True)
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
                    arrays.append(_encode_column(column, values, start))
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
                _encode_column(c, list(values), first)
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
                arrays.append(_encode_column(column, own[name]))
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

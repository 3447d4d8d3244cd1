"""Reading Arrow (see :mod:`entityworks.arrow`): a ``pyarrow.Table``, a ``pandas.DataFrame``
or a Parquet file -> instances, a field's column as :mod:`.write` writes it or its value
alone with older companion columns beside it."""

from __future__ import annotations

import dataclasses
import datetime
import decimal
from collections.abc import Callable, Collection
from functools import partial
from operator import countOf
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pyarrow as pa

from .._gcpause import paused_gc
from ..errors import ValueEncodingError
from ..model.schema import (
    Column,
    TableSchema,
    instance_builder,
    table_schema,
)
from ..registry import DECIMAL_FRACTION_DIGITS, Companion, TypeRegistry, with_offset
from ..registry import registry as default_registry
from ._encode import encode_column
from .columns import (
    VALUE,
    arrow_companions,
    arrow_schema,
    companion_type,
    field_layout,
    older_names,
)

if TYPE_CHECKING:
    import pandas as pd

T = TypeVar("T")
_datetime = datetime.datetime
_NoneType = type(None)
_MAX_SCALE = DECIMAL_FRACTION_DIGITS
_UTC_NAMES = ("UTC", "+00:00", "Etc/UTC")
_MAX_OFFSET_MINUTES = 14 * 60  # the offsets ``with_offset`` takes
_NUMPY_FAST = (pa.types.is_int64, pa.types.is_float64, pa.types.is_boolean)


def _decode_field(
    column: Column,
    array: pa.ChunkedArray[Any] | pa.Array[Any],
    beside: Callable[[str], pa.ChunkedArray[Any] | pa.Array[Any] | None],
) -> list[Any]:
    """One field's values from its column: for a type with Arrow companions, a struct of
    the value and its companions (as ``to_arrow`` writes them), or the value alone, then
    with the companions in the columns ``beside(name)`` finds (``<field>__<suffix>``, as
    entityworks 0.2 wrote them; ``None``: no such column, the value is read as it is)."""
    parts = arrow_companions(column)
    if not parts or not pa.types.is_struct(array.type):
        return _decode_with(column, array, [beside(p.column(column.name)) for p in parts])
    import pyarrow.compute as pc

    names = [f.name for f in array.type]
    expected = [VALUE, *(p.suffix for p in parts)]
    if VALUE not in names or not set(names) <= set(expected):
        raise ValueEncodingError(
            f"column {column.name!r}: a struct of {names}; a "
            f"{column.info.name} field's has {expected}",
            column=column.name,
        )
    return _decode_with(
        column,
        pc.struct_field(array, VALUE),
        [pc.struct_field(array, p.suffix) if p.suffix in names else None for p in parts],
    )


def _decode_with(
    column: Column,
    array: pa.ChunkedArray[Any] | pa.Array[Any],
    parts: list[pa.ChunkedArray[Any] | pa.Array[Any] | None],
) -> list[Any]:
    """A column's values, joined with its companions' arrays (``None``: field absent)."""
    companions = arrow_companions(column)
    if len(parts) == 1 and parts[0] is not None and companions[0].join is with_offset:
        local = _aware_in_arrow(column, array, parts[0])
        if local is not None:
            return local
    values = _decode_column(column, array)
    for part, extra in zip(companions, parts, strict=True):
        if extra is None:
            continue
        if extra.type != companion_type(part):
            try:
                extra = extra.cast(companion_type(part))
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                raise ValueEncodingError(
                    f"column {part.column(column.name)!r}: {exc}", column=column.name
                ) from None
        stored = extra.to_pylist()
        if part.split_column is not None and _split_again(part, values) == stored:
            continue  # the values already have what the companion keeps: join(v, split(v)) is v
        join = part.join
        try:
            values = [v if v is None else join(v, p) for v, p in zip(values, stored, strict=True)]
        except Exception as exc:
            raise _refused(column.name, values, exc, partial(_join_at, join, stored)) from None
    return values


def _aware_in_arrow(
    column: Column,
    array: pa.ChunkedArray[Any] | pa.Array[Any],
    offsets: pa.ChunkedArray[Any] | pa.Array[Any],
) -> list[Any] | None:
    """The aware datetimes of UTC instants ``array`` at their ``offsets`` (minutes east of
    UTC, null for UTC), as ``with_offset`` joins them, each wall time computed by Arrow and
    only its zone set in Python; ``None`` where the general path must say what is wrong or
    decide (another type, an offset no write stores, a wall time outside the years 1-9999,
    a null in a column that is not Optional)."""
    kind = array.type
    if not (
        pa.types.is_timestamp(kind)
        and kind.unit == "us"
        and kind.tz in _UTC_NAMES
        and pa.types.is_integer(offsets.type)
        and len(offsets) == len(array)
        and (column.nullable or not array.null_count)
    ):
        return None
    import pyarrow.compute as pc

    minutes: Any = offsets.cast(pa.int64())  # (pyarrow-stubs type compute calls narrowly)
    if minutes.null_count < len(minutes):
        largest = pc.max(pc.abs(minutes)).as_py()
        if largest > _MAX_OFFSET_MINUTES:
            return None
    try:
        shift = pc.multiply(pc.fill_null(minutes, 0), 60_000_000)
        micros = array.cast(pa.timestamp("us")).cast(pa.int64())
        walls: Any = pc.add_checked(micros, shift).cast(pa.timestamp("us"))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OverflowError):
        return None
    given: list[int | None] = minutes.to_pylist()
    zones: dict[int | None, datetime.tzinfo] = {None: datetime.UTC}
    for offset in set(given) - {None}:
        zones[offset] = datetime.timezone(datetime.timedelta(minutes=offset))  # type: ignore[arg-type]
    try:
        if not walls.null_count:
            # each datetime made at C speed from its fields, with its zone
            fields = [
                f(walls).to_numpy().tolist()
                for f in (pc.year, pc.month, pc.day, pc.hour, pc.minute, pc.second)
            ]
            sub = pc.add(pc.multiply(pc.millisecond(walls), 1000), pc.microsecond(walls))
            return list(
                map(_datetime, *fields, sub.to_numpy().tolist(), map(zones.__getitem__, given))
            )
        values = walls.to_numpy(zero_copy_only=False).tolist()
        if countOf(map(type, values), _datetime) + walls.null_count != len(values):
            return None  # (beyond datetime's years NumPy gives ints)
        return [
            None if wall is None else wall.replace(tzinfo=zones[offset])
            for wall, offset in zip(values, given, strict=True)
        ]
    except (ValueError, OverflowError):  # a wall time outside the years 1-9999
        return None


def _join_at(join: Callable[[Any, Any], Any], stored: list[Any], value: Any, row: int) -> Any:
    return join(value, stored[row])


def _refused(
    name: str, values: list[Any], exc: Exception, decode: Callable[[Any, int], Any]
) -> ValueEncodingError:
    """The error of a column whose values ``decode`` refused, naming the first refused
    value's row (found again value by value)."""
    for row, value in enumerate(values):
        if value is None:
            continue
        try:
            decode(value, row)
        except Exception as inner:  # noqa: BLE001 - named below
            return ValueEncodingError(
                f"row {row}, column {name!r}: cannot decode: {inner}",
                column=name,
                row=row,
                value=value,
            )
    return ValueEncodingError(f"column {name!r}: cannot decode: {exc}", column=name)


def _split_again(part: Companion, values: list[Any]) -> list[Any] | None:
    """What ``part`` would store for the decoded ``values`` (``None`` where a value is), a
    column at a time; ``None`` when a value cannot be split (the join then says why)."""
    assert part.split_column is not None
    try:
        if not countOf(map(type, values), _NoneType):
            return part.split_column(values)
        split = iter(part.split_column([v for v in values if v is not None]))
        return [None if v is None else next(split) for v in values]
    except Exception:  # noqa: BLE001 - value by value below
        return None


def _as_read(expected: Any, actual: Any) -> bool:
    """True when a column of Arrow type ``actual`` is decoded as it is for a field whose
    type is ``expected``: any decimal type (its scale is the values'), or the text of a
    Decimal (as written before Arrow decimals)."""
    return (
        actual == expected
        or pa.types.is_decimal(expected)
        and (
            pa.types.is_decimal(actual)
            or pa.types.is_string(actual)
            or pa.types.is_large_string(actual)
        )
    )


def _decode_column(column: Column, array: pa.ChunkedArray[Any] | pa.Array[Any]) -> list[Any]:
    expected = column.info.arrow_codec.arrow_type()
    if pa.types.is_decimal(expected) and not _as_read(expected, array.type):
        expected = pa.string()  # a number of another type: read as its text
    if not _as_read(expected, array.type):
        try:
            array = array.cast(expected)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
            raise ValueEncodingError(
                f"column {column.name!r}: Arrow type {array.type} cannot become {expected}: {exc}",
                column=column.name,
            ) from None
    if array.null_count and not column.nullable:
        import pyarrow.compute as pc

        row = pc.index(pc.is_null(array), True).as_py()
        raise ValueEncodingError(
            f"row {row}, column {column.name!r}: null in a column that is not Optional",
            column=column.name,
            row=row,
        )
    values: list[Any]
    if not array.null_count and any(check(array.type) for check in _NUMPY_FAST):
        values = array.to_numpy().tolist()  # faster than to_pylist for numbers
    else:
        values = _fast_pylist(array)
    decode = column.info.arrow_codec.decode
    test = column.info.check_column
    if (
        decode is not None
        and test is not None
        and array.null_count < len(array)
        and pa.types.is_decimal(array.type)
        and array.type.scale <= _MAX_SCALE
    ):
        # Decimals of a scale the rule allows: the rule, a column at a time, may vouch for all
        if test([v for v in values if v is not None] if array.null_count else values):
            return values
    if decode is not None:
        try:
            values = [None if v is None else decode(v) for v in values]
        except Exception as exc:
            one = decode
            raise _refused(column.name, values, exc, lambda v, _i: one(v)) from None
    return values


def _fast_pylist(array: pa.ChunkedArray[Any] | pa.Array[Any]) -> list[Any]:
    """``array.to_pylist()``, the same values, sooner for the types where pyarrow's is slow:
    a naive timestamp[us] through NumPy, a decimal through its text (``Decimal(text)`` keeps
    the column's scale as ``to_pylist`` does)."""
    kind = array.type
    if pa.types.is_timestamp(kind) and kind.unit == "us" and kind.tz is None:
        values: list[Any] = array.to_numpy(zero_copy_only=False).tolist()
        if countOf(map(type, values), _datetime) + array.null_count == len(values):
            return values  # (beyond datetime's years NumPy gives ints: pyarrow then says why)
    elif pa.types.is_timestamp(kind) and kind.unit == "us" and kind.tz in _UTC_NAMES:
        # UTC instants: NumPy's naive datetimes made aware, 4x sooner than to_pylist's
        values = array.cast(pa.timestamp("us")).to_numpy(zero_copy_only=False).tolist()
        if countOf(map(type, values), _datetime) + array.null_count == len(values):
            utc = datetime.UTC
            return [None if v is None else v.replace(tzinfo=utc) for v in values]
    elif pa.types.is_decimal(kind):
        texts = array.cast(pa.string()).to_pylist()
        if not array.null_count:
            return list(map(decimal.Decimal, texts))  # type: ignore[arg-type]  # no nulls
        return [None if t is None else decimal.Decimal(t) for t in texts]
    return array.to_pylist()


def _constructor(schema: TableSchema, names: list[str]) -> Callable[..., Any]:
    return instance_builder(schema.cls, names)


def _child_lists(child: TableSchema, array: Any) -> list[list[Any]]:
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    struct = array.flatten()
    columns = child.field_columns
    older = older_names(columns, {struct.type.field(i).name for i in range(struct.type.num_fields)})
    decoded = [
        _decode_field(c, struct.field(c.name), lambda n: struct.field(n) if n in older else None)
        for c in columns
    ]
    build = _constructor(child, [c.name for c in columns])
    items = list(map(build, *decoded)) if columns else [build() for _ in range(len(struct))]
    offsets = array.offsets.to_pylist()
    return [items[offsets[i] : offsets[i + 1]] for i in range(len(array))]


def from_arrow(
    cls: type[T], table: pa.Table, *, registry: TypeRegistry = default_registry
) -> list[T]:
    """``pyarrow.Table`` -> instances of ``cls`` (columns matched by name, cast if needed).

    A field's column is what :func:`to_arrow` writes, or its value alone (a plain timestamp
    reads as UTC, a decimal column at its scale), with its companions beside it in columns
    ``<field>__<suffix>`` as entityworks 0.2 wrote them."""
    schema = table_schema(cls, registry)
    layout = field_layout(schema)
    missing = [name for name, _c, _ch in layout if name not in table.column_names]
    if missing:
        raise ValueEncodingError(
            f"the table has no column {missing[0]!r} for "
            f"{cls.__qualname__}; it has {table.column_names}",
            column=missing[0],
        )
    build = _constructor(schema, [name for name, _c, _ch in layout])
    if not layout:
        return [build() for _ in range(table.num_rows)]
    with paused_gc():
        columns = []
        older = older_names(schema.field_columns, set(table.column_names))
        for name, column, child in layout:
            if column is not None:
                columns.append(
                    _decode_field(
                        column,
                        table.column(name),
                        lambda n: table.column(n) if n in older else None,
                    )
                )
            else:
                assert child is not None
                columns.append(_child_lists(child, table.column(name)))
        return list(map(build, *columns))


def value_columns(
    schema: TableSchema,
    table: pa.Table,
    *,
    may_lack: str | None = None,
    skip: Collection[str] = (),
) -> dict[str, list[Any]]:
    """Each field column's values decoded from ``table``, by field name: what
    :func:`from_arrow` makes instances of, without the instances (the Store's columnar
    writes). Child lists are not read; ``may_lack``: a field whose column may be absent
    (a key the database generates), then left out; ``skip``: fields not read."""
    missing = [c.name for c in schema.field_columns if c.name not in table.column_names]
    if missing and missing != [may_lack]:
        first = next(n for n in missing if n != may_lack)
        raise ValueEncodingError(
            f"the table has no column {first!r} for "
            f"{schema.cls.__qualname__}; it has {table.column_names}",
            column=first,
        )
    older = older_names(schema.field_columns, set(table.column_names))
    out: dict[str, list[Any]] = {}
    with paused_gc():
        for c in schema.field_columns:
            if c.name in missing or c.name in skip:
                continue
            array = table.column(c.name)
            if c.name == may_lack and array.null_count:
                if array.null_count == len(array):
                    continue  # every key generated
                c = dataclasses.replace(c, nullable=True)  # some keys generated
            out[c.name] = _decode_field(c, array, lambda n: table.column(n) if n in older else None)
    return out


def from_pandas(
    cls: type[T], frame: pd.DataFrame, *, registry: TypeRegistry = default_registry
) -> list[T]:
    """``pandas.DataFrame`` -> instances of ``cls``.

    ``ArrowDtype`` columns convert exactly. NumPy float columns keep ``NaN`` as NaN (a NumPy
    float cannot say "missing"); other columns take ``None``/``NA``/``NaT`` as missing. An
    aware datetime column that is not an ``ArrowDtype`` struct (``datetime64[ns, tz]``, or
    objects) keeps each value's own offset; a Decimal one each value's exponent.
    """
    return from_arrow(cls, pandas_table(cls, frame, registry=registry), registry=registry)


def pandas_table(
    cls: type,
    frame: pd.DataFrame,
    *,
    registry: TypeRegistry = default_registry,
    may_lack: str | None = None,
) -> pa.Table:
    """``frame`` as the Arrow table :func:`from_arrow` reads for ``cls`` (see
    :func:`from_pandas`, which reads it); ``may_lack``: a field whose column may be absent
    (then absent from the table too)."""
    import pandas as pd

    schema = table_schema(cls, registry)
    target = arrow_schema(cls, registry=registry)
    columns = {c.name: c for c in schema.field_columns}
    arrays, names = [], []
    for f in target:
        if f.name not in frame.columns:
            if f.name == may_lack:
                continue
            raise ValueEncodingError(
                f"the DataFrame has no column {f.name!r} for {cls.__qualname__}", column=f.name
            )
        series = frame[f.name]
        column = columns.get(f.name)
        try:
            if (
                column is not None
                and arrow_companions(column)
                and isinstance(series.dtype, pd.ArrowDtype)
            ):
                arrays.append(pa.array(series))  # as it is: from_arrow reads it, scale kept
            elif column is not None and pa.types.is_decimal(column.info.arrow_codec.arrow_type()):
                arrays.append(_decimal_series(series))
            elif column is not None and arrow_companions(column):
                arrays.append(
                    encode_column(column, [None if _missing(v) else v for v in series.tolist()])
                )
            else:
                arrays.append(
                    pa.array(series, type=f.type, from_pandas=not pa.types.is_floating(f.type))
                )
        except ValueEncodingError:
            raise
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError) as exc:
            raise ValueEncodingError(
                f"column {f.name!r}: cannot convert to {f.type}: {exc}", column=f.name
            ) from None
        names.append(f.name)
    for name, part in older_names(schema.field_columns, set(frame.columns)).items():
        try:
            arrays.append(pa.array(frame[name], type=companion_type(part), from_pandas=True))
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError) as exc:
            raise ValueEncodingError(
                f"column {name!r}: cannot convert to {companion_type(part)}: {exc}", column=name
            ) from None
        names.append(name)
    return pa.Table.from_arrays(arrays, names=names)


def _missing(value: Any) -> bool:
    """True for what pandas means by a missing value in a column of objects."""
    import pandas as pd

    return (
        value is None
        or value is pd.NaT
        or value is pd.NA
        or (type(value) is float and value != value)
    )


def _decimal_series(series: pd.Series[Any]) -> pa.Array[Any]:
    """A Decimal field's column of a DataFrame as Arrow: an Arrow column (decimal, or text)
    as it is, so its scale is kept; Python Decimals as their text, each with its exponent
    (an Arrow decimal would give them all the scale of the widest)."""
    import pandas as pd

    array: pa.Array[Any]
    if isinstance(series.dtype, pd.ArrowDtype):
        array = pa.array(series)
    else:
        values = [str(v) if isinstance(v, decimal.Decimal) else v for v in series]
        array = pa.array(values, type=pa.string(), from_pandas=True)
    return array


def read_parquet(
    cls: type[T], path: str | Path, *, registry: TypeRegistry = default_registry
) -> list[T]:
    """Read a Parquet file into instances of ``cls``."""
    import pyarrow.parquet as pq

    names = [f.name for f in arrow_schema(cls, registry=registry)]
    available = set(pq.read_schema(str(path)).names)
    older = older_names(table_schema(cls, registry).field_columns, available)
    return from_arrow(
        cls,
        pq.read_table(str(path), columns=[*(n for n in names if n in available), *older]),
        registry=registry,
    )


__all__ = [
    "from_arrow",
    "from_pandas",
    "pandas_table",
    "read_parquet",
    "value_columns",
]

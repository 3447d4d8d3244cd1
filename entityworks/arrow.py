"""Dataclass lists <-> ``pyarrow.Table`` <-> ``pandas.DataFrame`` <-> Parquet.

The Arrow schema is built from the registry (``TypeInfo.arrow``), never inferred from the
values, so an all-``None`` column still has its type and an ``Optional[int]`` stays int64.
The one exception is the size of a decimal type: a ``Decimal`` column's ``value`` is the
narrowest ``decimal128(p, s)`` holding all of its values (``s``: the most digits after the
point of any value; ``p``: ``s`` plus the most digits before it), ``decimal256(p, s)`` when
``p`` exceeds decimal128's 38 (the registry's rule allows 35 + 30 digits), so pyarrow,
pandas, Parquet readers and SQL engines compute with it as numbers. A column without a value
(an empty table, only ``None``) is ``decimal256(65, 30)``, MariaDB's DECIMAL(65, 30), where
every accepted value fits. Batches of one query (``rows_to_arrow``) are cast, without loss,
to the widest. Conversion is column-wise: one attribute getter and one ``pyarrow.array``
call per column, with the registry's ``to_arrow`` / ``from_arrow`` applied only where a type
needs them. In pandas every column uses ``pandas.ArrowDtype``: nullable ints stay integers,
and ``None`` stays distinct from ``NaN`` and from the empty string, so the round trip is
exact.

Every dataclass field is one column named after it, and nothing else is: a ``list[Item]``
field (a child table in SQL) becomes an Arrow ``list<struct>`` column whose struct has one
field per ``Item`` field.

Values are held to the registry's rules (``TypeInfo.check``), as in the Store and XML: pyarrow
would turn ``1.0`` into an int64 1 or ``b"x"`` into the string ``"x"``; here a value of the
wrong type is refused with its row and column. A type whose values Arrow's own type cannot
hold whole has companions for Arrow (``registry.Companion``): its column is then a struct
of the value (field ``value``, of the registry's Arrow type) and one field per companion
(named by its suffix). An ``AwareDatetime`` is ``struct<value: timestamp[us, tz=UTC],
offset: int16>``: the instant (pandas computes with it as usual) and the value's UTC offset
in minutes (null for UTC). A ``Decimal`` is ``struct<value: decimal128(p, s), scale:
int8>``: a decimal column pads every value to its scale (1.5 and 1.50 both become 1.50 at
scale 2), so ``scale`` keeps each value's own number of digits after the point.

Read back, such a column may also be the value alone: a plain timestamp reads as UTC, a
decimal column at its scale (a foreign column's places beyond 30 are dropped when they are
zeros, refused otherwise), text for a Decimal field (written before Arrow decimals, or by
hand) as the text says, and so do Python Decimals in a DataFrame's object column. The
companions then may stand in columns beside it named ``<field>__<suffix>``
(``placed_at__offset``, ``total__scale``), as entityworks 0.2 wrote them.

A ``timedelta`` is ``duration[us]`` for every value the registry accepts except -2**63
microseconds, which is pandas' NaT (a missing value to pandas and to ``pandas.read_parquet``
of the file): frames refuse it, naming its row and column.
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
from collections.abc import Callable, Iterable, Sequence
from operator import attrgetter, countOf
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pyarrow as pa

from ._gcpause import paused_gc
from .errors import ValueEncodingError
from .files import atomic_output
from .model.construct import column_getter
from .model.schema import (
    Column,
    TableSchema,
    instance_builder,
    refuse_nested_children,
    table_schema,
)
from .registry import ARROW, DECIMAL_FRACTION_DIGITS, Companion, TypeRegistry, encode_error
from .registry import registry as default_registry
from .types import columns

if TYPE_CHECKING:
    import pandas as pd

T = TypeVar("T")
_datetime = datetime.datetime
_NoneType = type(None)
_MAX_SCALE = DECIMAL_FRACTION_DIGITS
_NUMPY_FAST = (pa.types.is_int64, pa.types.is_float64, pa.types.is_boolean)


#: The field of a column's struct (see ``_column_type``) that holds the field's own value.
VALUE = "value"


def _companions(c: Column) -> tuple[Companion, ...]:
    return c.info.companions_for(ARROW)


def _arrow_type(companion: Companion) -> Any:
    assert companion.arrow is not None, "companions_for(ARROW) gives Arrow companions only"
    return companion.arrow()


def _struct_of(own: Any, parts: tuple[Companion, ...], types: Sequence[Any] | None = None) -> Any:
    """``struct<value: own, <suffix>: ...>``: a field's own Arrow type and its companions'
    (``types``: theirs, else the registry's)."""
    kinds = types if types is not None else [_arrow_type(p) for p in parts]
    return pa.struct(
        [pa.field(VALUE, own), *(pa.field(p.suffix, t) for p, t in zip(parts, kinds, strict=True))]
    )


def _column_type(c: Column) -> Any:
    """The Arrow type of one column: the registry's, or for a type with Arrow companions
    a struct of the value and what its Arrow type loses (see ``_struct_of``)."""
    parts = _companions(c)
    if not parts:
        return c.info.arrow()
    clash = [p.suffix for p in parts if p.suffix == VALUE]
    if clash:  # pragma: no cover - a registry entry's mistake
        raise ValueEncodingError(
            f"column {c.name!r}: a companion may not be named {VALUE!r}", column=c.name
        )
    return _struct_of(c.info.arrow(), parts)


def _column_field(c: Column) -> pa.Field[Any]:
    """The one Arrow field of a column, named after its dataclass field."""
    return pa.field(c.name, _column_type(c), nullable=c.nullable)


def _layout(schema: TableSchema) -> list[tuple[str, Column | None, TableSchema | None]]:
    """The dataclass fields in order: a column, or a child table's schema."""
    refuse_nested_children(schema, "Arrow, pandas and Parquet")
    columns = {c.name: c for c in schema.field_columns}
    children = {child.field: child.schema for child in schema.children}
    return [
        (f.name, columns.get(f.name), children.get(f.name))
        for f in dataclasses.fields(schema.cls)
        if f.name in columns or f.name in children
    ]


def arrow_schema(cls: type, *, registry: TypeRegistry = default_registry) -> pa.Schema:
    """The Arrow schema of ``cls``: one field per dataclass field, named after it, types
    from the registry. A type with Arrow companions is a struct of its ``value`` and them
    (an ``AwareDatetime``: ``struct<value: timestamp[us, tz=UTC], offset: int16>``; a
    Decimal: ``struct<value: decimal256(65, 30), scale: int8>``, which the values' own
    narrower decimal type casts to)."""
    schema = table_schema(cls, registry)
    fields = []
    for name, column, child in _layout(schema):
        if column is not None:
            fields.append(_column_field(column))
        else:
            assert child is not None
            item = pa.struct([_column_field(c) for c in child.field_columns])
            fields.append(
                pa.field(name, pa.list_(pa.field("item", item, nullable=False)), nullable=False)
            )
    return pa.schema(fields, metadata={b"entityworks.table": schema.name.encode()})


def _decimal_type(integer: int, scale: int) -> Any:
    """decimal128(p, s) for ``integer`` digits before the point and ``scale`` after, or
    decimal256(p, s) beyond decimal128's 38 digits (the registry allows 35 + 30)."""
    precision = max(1, integer + scale)
    return pa.decimal128(precision, scale) if precision <= 38 else pa.decimal256(precision, scale)


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
    return arrow_type if scale < 0 else _decimal_type(max(integer, 0), scale)


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
    return _decimal_type(max(t.precision - t.scale for t in types), max(t.scale for t in types))


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
    arrow_type = info.arrow()
    native = info.native
    try:
        data = values
        if info.to_arrow is not None:
            encode = info.to_arrow
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
            data.append(value if info.to_arrow is None else info.to_arrow(value))
        except Exception as exc:
            raise encode_error(column.name, values[i], exc, at(i)) from None
    arrow_type = _fitted(info.arrow(), data)
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
    if native is None and (info.check_column is None or info.to_arrow not in (None, info.check)):
        return None
    facts = None
    arrow_type = info.arrow()
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
            arrow_type = _decimal_type(max(facts.integer, 0), facts.scale)
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
    """The array of one column (see ``_column_type``): its values', or a struct of them and
    their companions'. Errors name row ``first + i``, or ``number(i)``."""
    fast = _checked_array(column, values)
    own = fast[0] if fast is not None else _encode_values(column, values, first, number)
    if pa.types.is_duration(own.type):
        _refuse_missing_duration(column, values, own, first, number)
    parts = _companions(column)
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
                    arrays.append(pa.repeat(pa.scalar(scale, type=_arrow_type(part)), len(values)))
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
        arrays.append(pa.array(data, type=_arrow_type(part)))
    kind = _struct_of(own.type, parts, [a.type for a in arrays[1:]])
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
    arrays = [
        _encode_column(c, [r[j] for r in rows], number=owners.__getitem__)
        for j, c in enumerate(columns)
    ]
    fields = [_column_field(c) for c in columns]
    struct = (
        pa.StructArray.from_arrays(
            arrays, fields=[f.with_type(a.type) for f, a in zip(fields, arrays, strict=True)]
        )
        if columns
        else pa.array([{}] * len(flat), type=pa.struct([]))
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
    layout = _layout(schema)
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


def _decode_field(
    column: Column,
    array: pa.ChunkedArray[Any] | pa.Array[Any],
    beside: Callable[[str], pa.ChunkedArray[Any] | pa.Array[Any] | None],
) -> list[Any]:
    """One field's values from its column: for a type with Arrow companions, a struct of
    the value and its companions (as ``to_arrow`` writes them), or the value alone, then
    with the companions in the columns ``beside(name)`` finds (``<field>__<suffix>``, as
    entityworks 0.2 wrote them; ``None``: no such column, the value is read as it is)."""
    parts = _companions(column)
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
    values = _decode_column(column, array)
    for part, extra in zip(_companions(column), parts, strict=True):
        if extra is None:
            continue
        if extra.type != _arrow_type(part):
            try:
                extra = extra.cast(_arrow_type(part))
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
            raise ValueEncodingError(
                f"column {column.name!r}: cannot decode: {exc}", column=column.name
            ) from None
    return values


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
    expected = column.info.arrow()
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
    decode = column.info.from_arrow
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
            raise ValueEncodingError(
                f"column {column.name!r}: cannot decode: {exc}", column=column.name
            ) from None
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
    older = _older_names(
        columns, {struct.type.field(i).name for i in range(struct.type.num_fields)}
    )
    decoded = [
        _decode_field(c, struct.field(c.name), lambda n: struct.field(n) if n in older else None)
        for c in columns
    ]
    build = _constructor(child, [c.name for c in columns])
    items = list(map(build, *decoded)) if columns else [build() for _ in range(len(struct))]
    offsets = array.offsets.to_pylist()
    return [items[offsets[i] : offsets[i + 1]] for i in range(len(array))]


def _older_names(columns: Sequence[Column], present: set[str]) -> dict[str, Companion]:
    """The companion columns beside their fields' among ``present`` (the layout of
    entityworks 0.2, before each field became one column), by name."""
    fields = {c.name for c in columns}
    return {
        p.column(c.name): p
        for c in columns
        for p in _companions(c)
        if p.column(c.name) in present and p.column(c.name) not in fields
    }


def from_arrow(
    cls: type[T], table: pa.Table, *, registry: TypeRegistry = default_registry
) -> list[T]:
    """``pyarrow.Table`` -> instances of ``cls`` (columns matched by name, cast if needed).

    A field's column is what :func:`to_arrow` writes, or its value alone (a plain timestamp
    reads as UTC, a decimal column at its scale), with its companions beside it in columns
    ``<field>__<suffix>`` as entityworks 0.2 wrote them."""
    schema = table_schema(cls, registry)
    layout = _layout(schema)
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
        older = _older_names(schema.field_columns, set(table.column_names))
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


def to_pandas(
    cls: type, rows: Iterable[Any], *, registry: TypeRegistry = default_registry
) -> pd.DataFrame:
    """Instances -> ``pandas.DataFrame`` with ``ArrowDtype`` columns (exact, nullable)."""
    import pandas as pd

    return to_arrow(cls, rows, registry=registry).to_pandas(types_mapper=pd.ArrowDtype)


def from_pandas(
    cls: type[T], frame: pd.DataFrame, *, registry: TypeRegistry = default_registry
) -> list[T]:
    """``pandas.DataFrame`` -> instances of ``cls``.

    ``ArrowDtype`` columns convert exactly. NumPy float columns keep ``NaN`` as NaN (a NumPy
    float cannot say "missing"); other columns take ``None``/``NA``/``NaT`` as missing. An
    aware datetime column that is not an ``ArrowDtype`` struct (``datetime64[ns, tz]``, or
    objects) keeps each value's own offset; a Decimal one each value's exponent.
    """
    import pandas as pd

    schema = table_schema(cls, registry)
    target = arrow_schema(cls, registry=registry)
    columns = {c.name: c for c in schema.field_columns}
    arrays, names = [], []
    for f in target:
        if f.name not in frame.columns:
            raise ValueEncodingError(
                f"the DataFrame has no column {f.name!r} for {cls.__qualname__}", column=f.name
            )
        series = frame[f.name]
        column = columns.get(f.name)
        try:
            if (
                column is not None
                and _companions(column)
                and isinstance(series.dtype, pd.ArrowDtype)
            ):
                arrays.append(pa.array(series))  # as it is: from_arrow reads it, scale kept
            elif column is not None and pa.types.is_decimal(column.info.arrow()):
                arrays.append(_decimal_series(series))
            elif column is not None and _companions(column):
                arrays.append(
                    _encode_column(column, [None if _missing(v) else v for v in series.tolist()])
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
    for name, part in _older_names(schema.field_columns, set(frame.columns)).items():
        try:
            arrays.append(pa.array(frame[name], type=_arrow_type(part), from_pandas=True))
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError) as exc:
            raise ValueEncodingError(
                f"column {name!r}: cannot convert to {_arrow_type(part)}: {exc}", column=name
            ) from None
        names.append(name)
    return from_arrow(cls, pa.Table.from_arrays(arrays, names=names), registry=registry)


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


def write_parquet(
    cls: type,
    rows: Iterable[Any],
    path: str | Path,
    *,
    registry: TypeRegistry = default_registry,
    **options: Any,
) -> Path:
    """Write instances to a Parquet file (``options`` go to ``pyarrow.parquet.write_table``).

    Only a regular file is written, whole or not at all (see :mod:`entityworks.files`).
    """
    return write_parquet_table(to_arrow(cls, rows, registry=registry), path, **options)


def write_parquet_table(table: pa.Table, path: str | Path, **options: Any) -> Path:
    """Write an Arrow table to a Parquet file through :func:`entityworks.files.atomic_output`."""
    import pyarrow.parquet as pq

    with atomic_output(path) as f:
        pq.write_table(table, f, **options)
    return Path(path)


def read_parquet(
    cls: type[T], path: str | Path, *, registry: TypeRegistry = default_registry
) -> list[T]:
    """Read a Parquet file into instances of ``cls``."""
    import pyarrow.parquet as pq

    names = [f.name for f in arrow_schema(cls, registry=registry)]
    available = set(pq.read_schema(str(path)).names)
    older = _older_names(table_schema(cls, registry).field_columns, available)
    return from_arrow(
        cls,
        pq.read_table(str(path), columns=[*(n for n in names if n in available), *older]),
        registry=registry,
    )


def rows_to_arrow(schema: TableSchema, batches: Iterable[Sequence[Sequence[Any]]]) -> pa.Table:
    """Batches of column tuples (table column order, no child tables) -> ``pyarrow.Table``.

    A decimal column's type fits all of its values: each batch is encoded with its own,
    then every batch is cast (without loss) to the widest.
    """
    target = pa.schema(
        [_column_field(c) for c in schema.columns],
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


__all__ = [
    "arrow_schema",
    "from_arrow",
    "from_pandas",
    "read_parquet",
    "rows_to_arrow",
    "to_arrow",
    "to_pandas",
    "write_parquet",
    "write_parquet_table",
]

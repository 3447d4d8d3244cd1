"""PostgreSQL's binary COPY rows made from Arrow columns (the columnar lane's batches).

A batch of ``Store.insert_arrow`` whose every field is of a type listed here (an int, a
float, a bool, a str, a naive or an aware datetime, a Decimal of at most 15 digits) and
whose Arrow columns hold only values the type's rule passes as they are goes to the
server as the bytes of a binary COPY made a column at a time: each SQL column's fields
(the length, then the value in PostgreSQL's binary form: big-endian integers and
floats, UTF-8 text, microseconds since 2000 for a timestamp, base-10000 digits for a
numeric) by NumPy and Arrow's kernels, and each row's fields joined by
``binary_join_element_wise``. They are the values psycopg's dumpers would send for the
decoded values: the same int64s, floats, texts, instants and offsets, and numerics of
the same digits and scale (``dscale``). The server refuses what it would refuse of those
(a NUL in a text); the batch is then written by the usual path, which names the row.

Anything else (another Arrow type, a value out of range, a null where the field is not
Optional, a wider Decimal) makes :func:`binary_rows` answer ``None``: the usual path.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from ...errors import GateRefused
from ...registry import (
    DECIMAL_FRACTION_DIGITS,
    check_aware_datetime,
    check_bool,
    check_datetime,
    check_decimal,
    check_float,
    check_int,
    check_str,
)
from .._arrowforms import UTC_NAMES, checked_offsets, micros_in_range

#: Microseconds from 1970 to 2000 (PostgreSQL's timestamps count from 2000).
_PG_EPOCH_US = (dt.datetime(2000, 1, 1) - dt.datetime(1970, 1, 1)) // dt.timedelta(microseconds=1)
_VALUE = "value"
#: The most digits of a Decimal column made here (its unscaled integers, padded to a
#: whole base-10000 digit after the point, stay within int64).
_NUMERIC_DIGITS = 15


def _fields(values: Any, valid: Any, width: int) -> Any:
    """The COPY fields of one SQL column: ``values`` (an ``(n, width)`` array of bytes,
    big-endian) each after its length, or the length -1 where ``valid`` is False; a
    binary Arrow array of one field a row."""
    import numpy as np
    import pyarrow as pa

    n = len(values)
    block = np.empty((n, 4 + width), np.uint8)
    block[:, :4] = np.frombuffer(width.to_bytes(4, "big"), np.uint8)
    block[:, 4:] = values
    if valid is None or valid.all():
        ends = np.arange(0, (4 + width) * (n + 1), 4 + width, dtype=np.int32)
        data = block.reshape(-1)
    else:
        block[~valid, :4] = 0xFF  # -1: NULL, no bytes
        sizes = np.where(valid, 4 + width, 4).astype(np.int32)
        ends = np.zeros(n + 1, np.int32)
        np.cumsum(sizes, out=ends[1:])
        keep = np.ones((n, 4 + width), bool)
        keep[~valid, 4:] = False
        data = block[keep]
    return pa.Array.from_buffers(
        pa.binary(), n, [None, pa.py_buffer(ends.data), pa.py_buffer(data.data)]
    )


def _valid(array: Any) -> Any:
    """A NumPy mask of the non-null values of ``array`` (None: no null)."""
    import pyarrow.compute as pc

    if not array.null_count:
        return None
    return pc.is_valid(array).to_numpy(zero_copy_only=False)


def _big_endian(array: Any, kind: str, fill: Any = 0) -> Any:
    """The values of a numeric Arrow array as ``(n, size)`` big-endian bytes (nulls as
    ``fill``)."""
    import numpy as np
    import pyarrow.compute as pc

    if array.null_count:
        array = pc.fill_null(array, fill)
    values = np.ascontiguousarray(array.to_numpy(zero_copy_only=False)).astype(kind)
    return values.view(np.uint8).reshape(len(array), -1)


def _int8(array: Any) -> list[Any] | None:
    import pyarrow as pa

    if not pa.types.is_integer(array.type):
        return None
    try:
        array = array.cast(pa.int64())  # (safe: a uint64 past int64 raises)
    except (pa.ArrowInvalid, OverflowError):
        return None
    return [_fields(_big_endian(array, ">i8"), _valid(array), 8)]


def _float8(array: Any) -> list[Any] | None:
    import pyarrow as pa

    if not pa.types.is_floating(array.type):
        return None
    array = array.cast(pa.float64())
    return [_fields(_big_endian(array, ">f8"), _valid(array), 8)]


def _bool(array: Any) -> list[Any] | None:
    import pyarrow as pa

    if not pa.types.is_boolean(array.type):
        return None
    return [_fields(_big_endian(array, "u1", False), _valid(array), 1)]


def _text(array: Any) -> list[Any] | None:
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    if not pa.types.is_string(array.type):
        return None
    lengths = pc.binary_length(array).to_numpy(zero_copy_only=False)
    valid = _valid(array)
    if valid is not None:
        lengths = np.where(valid, lengths, -1)
    prefix = np.ascontiguousarray(lengths.astype(">i4")).view(np.uint8).reshape(len(array), 4)
    body = pc.fill_null(array, "").cast(pa.binary())
    heads = pa.Array.from_buffers(
        pa.binary(),
        len(array),
        [
            None,
            pa.py_buffer((np.arange(0, 4 * (len(array) + 1), 4, dtype=np.int32)).data),
            pa.py_buffer((np.ascontiguousarray(prefix).reshape(-1)).data),
        ],
    )
    return [pc.binary_join_element_wise(heads, body, b"")]


def _micros(array: Any, tz: bool) -> Any | None:
    """The int64 microseconds since 1970 of a ``timestamp[us]`` column (UTC instants when
    ``tz``), when each is a datetime of the years 1 to 9999; else None."""
    import pyarrow as pa

    kind = array.type
    if not pa.types.is_timestamp(kind) or kind.unit != "us":
        return None
    if (kind.tz in UTC_NAMES) != tz or (not tz and kind.tz is not None):
        return None
    return micros_in_range(array)


def _timestamp(array: Any) -> list[Any] | None:
    import pyarrow as pa
    import pyarrow.compute as pc

    micros = _micros(array, False)
    if micros is None:
        return None
    since = pc.subtract(micros, pa.scalar(_PG_EPOCH_US))
    return [_fields(_big_endian(since, ">i8"), _valid(micros), 8)]


def _timestamptz(array: Any, offsets: Any) -> list[Any] | None:
    import pyarrow as pa
    import pyarrow.compute as pc

    micros = _micros(array, True)
    if micros is None:
        return None
    minutes = checked_offsets(micros, offsets)
    if minutes is None:
        return None
    since = pc.subtract(micros, pa.scalar(_PG_EPOCH_US))
    # an offset of 0 is UTC's: no companion value; none where the value is None
    zero = pc.equal(pc.fill_null(minutes, 0), pa.scalar(0))
    kept = pc.if_else(pc.or_(zero, pc.is_null(micros)), pa.scalar(None, pa.int64()), minutes)
    return [
        _fields(_big_endian(since, ">i8"), _valid(micros), 8),
        _fields(_big_endian(kept, ">i2"), _valid(kept), 2),
    ]


def _numeric(array: Any, scales: Any) -> list[Any] | None:
    """A ``decimal128`` column of at most 15 digits as numerics: each value's base-10000
    digits (a fixed count for the column: leading zero digits, which the server strips),
    its weight, its sign and the column's scale as ``dscale`` (psycopg's for a Decimal
    of that exponent)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = array.type
    if not pa.types.is_decimal128(kind):
        return None
    scale, precision = kind.scale, kind.precision
    pad = -scale % 4  # digits after the point made a whole base-10000 digit
    if not 0 <= scale <= DECIMAL_FRACTION_DIGITS or precision + pad > _NUMERIC_DIGITS + 3:
        return None
    if scales is not None and scales.null_count < len(scales):
        if not pa.types.is_integer(scales.type):
            return None
        if pc.any(pc.not_equal(scales.cast(pa.int64()), pa.scalar(scale))).as_py():
            return None
    n = len(array)
    valid = _valid(array)
    # the unscaled integers: the low 64 bits of each 128-bit value (within int64 here)
    words = np.frombuffer(array.buffers()[1], np.int64, 2 * n, array.offset * 16)
    unscaled = words[0::2].copy()
    if valid is not None:
        unscaled[~valid] = 0
    negative = unscaled < 0
    magnitude = np.abs(unscaled) * 10**pad
    groups = max(1, -(-(precision + pad) // 4))
    digits = np.empty((n, groups), np.int64)
    rest = magnitude
    for k in range(groups - 1, -1, -1):
        rest, digits[:, k] = np.divmod(rest, 10_000)
    header = np.empty((n, 4), np.int64)
    header[:, 0] = groups  # ndigits
    header[:, 1] = groups - 1 - (scale + pad) // 4  # weight of the first digit
    header[:, 2] = np.where(negative, 0x4000, 0)  # sign
    header[:, 3] = scale  # dscale
    words16 = np.concatenate([header, digits], axis=1).astype(">i2")
    body = np.ascontiguousarray(words16).view(np.uint8).reshape(n, -1)
    return [_fields(body, valid, body.shape[1])]


#: By the rule (``TypeInfo.check``): the SQL types of the field's columns (its own, then
#: its companions') and how its Arrow values (and companions' arrays) become their fields.
_FORMS: dict[Any, tuple[tuple[str, ...], Callable[..., list[Any] | None]]] = {
    check_int: (("int8",), _int8),
    check_float: (("float8",), _float8),
    check_bool: (("bool",), _bool),
    check_str: (("text",), _text),
    check_datetime: (("timestamp",), _timestamp),
    check_aware_datetime: (("timestamptz", "int2"), _timestamptz),
    check_decimal: (("numeric",), _numeric),
}
#: The Arrow companions (as ``to_arrow`` writes them in a struct beside ``value``) each
#: form reads.
_ARROW_PARTS: dict[Any, tuple[str, ...]] = {
    check_aware_datetime: ("offset",),
    check_decimal: ("scale",),
}


def binary_rows(table: Any, fields: Sequence[tuple[str, bool, Any, tuple[str, ...]]]) -> Any | None:
    """The rows of ``table`` (a ``pyarrow.Table``) as binary COPY rows, one binary value a
    row (without the COPY's header and trailer); ``fields``: per schema column, in
    order, its name, whether it is Optional, its rule and its SQL columns' COPY types.
    None where a field's column is not made here (see the module docstring)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    columns: list[Any] = []
    count = 0
    for name, nullable, check, types in fields:
        form = _FORMS.get(check)
        if form is None or form[0] != types or name not in table.column_names:
            return None
        array = table.column(name)
        if isinstance(array, pa.ChunkedArray):
            array = array.combine_chunks()
        wanted = _ARROW_PARTS.get(check, ())
        parts: list[Any] = [None] * len(wanted)
        if pa.types.is_struct(array.type):
            names = [f.name for f in array.type]
            if not wanted or _VALUE not in names or not set(names) <= {_VALUE, *wanted}:
                return None
            parts = [pc.struct_field(array, s) if s in names else None for s in wanted]
            array = pc.struct_field(array, _VALUE)
        if array.null_count and not nullable:
            return None
        made = form[1](array, *parts)
        if made is None:
            return None
        columns += made
        count += len(types)
    if not columns:
        return None
    head = count.to_bytes(2, "big")
    return pc.binary_join_element_wise(pa.scalar(head, pa.binary()), *columns, b"")


#: Rows made and sent at a time by :class:`ArrowRows`: the server stores one slice while
#: the next is made (a few hundred kilobytes).
SLICE = 4096


class Declined(GateRefused):
    """A slice of the rows has a column :func:`binary_rows` does not make (refused as a
    gate refuses a batch: the caller's savepoint is undone, the rows go the usual way)."""

    def __init__(self, start: int) -> None:
        super().__init__("(a column from Arrow)", start)


class ArrowRows:
    """The binary COPY rows of a table, made a slice of :data:`SLICE` rows at a time as
    they are sent (:meth:`parts`), so that the server stores each while the next is made.
    Made only where the first slice is (:meth:`of`); a later slice that is not raises
    :class:`Declined` while the rows are sent (the caller's savepoint then undoes the
    COPY, and the rows go the usual way)."""

    def __init__(self, table: Any, fields: Sequence[tuple[str, bool, Any, tuple[str, ...]]]):
        self.table = table
        self.fields = fields
        self.first: Any = None

    @classmethod
    def of(
        cls, table: Any, fields: Sequence[tuple[str, bool, Any, tuple[str, ...]]]
    ) -> ArrowRows | None:
        """The rows of ``table`` (see :func:`binary_rows`), or None where the first slice
        has a column that is not made so."""
        rows = cls(table, fields)
        rows.first = binary_rows(table.slice(0, SLICE), fields)
        return None if rows.first is None else rows

    def __len__(self) -> int:
        return int(self.table.num_rows)

    def parts(self) -> Iterator[Any]:
        """Each slice's rows, as bytes (a buffer): the rows one after another."""
        import numpy as np

        for start in range(0, len(self), SLICE):
            made = (
                self.first
                if start == 0
                else binary_rows(self.table.slice(start, SLICE), self.fields)
            )
            if made is None:
                raise Declined(start)
            _validity, offsets, data = made.buffers()
            ends = np.frombuffer(offsets, np.int32, len(made) + 1, made.offset * 4)
            yield memoryview(data)[int(ends[0]) : int(ends[-1])]
        self.first = None


__all__ = ["SLICE", "ArrowRows", "Declined", "binary_rows"]

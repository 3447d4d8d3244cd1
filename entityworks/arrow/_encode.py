"""One column of instances as an Arrow array (see :mod:`entityworks.arrow`): its values
held to the registry's rule, a decimal column fitted to its values, companions beside a
value Arrow cannot hold whole. Shared by :mod:`.write` and :mod:`.read`."""

from __future__ import annotations

import datetime
import decimal
from collections.abc import Callable
from operator import countOf
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from ..model.schema import (
    Column,
)
from ..registry import encode_error
from ..types import columns
from .columns import (
    arrow_companions,
    companion_type,
    decimal_type,
    struct_of,
)

if TYPE_CHECKING:
    pass


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


def encode_column(
    column: Column, values: list[Any], first: int = 0, number: Callable[[int], int] | None = None
) -> pa.Array[Any]:
    """The array of one column (see ``columns._column_type``): its values', or a struct of them and
    their companions'. Errors name row ``first + i``, or ``number(i)``.

    In a private module: pyright reads ``pa.Array`` with a second, unknown type argument
    under pandas-stubs 3.1, which a public signature cannot state the same way for mypy."""
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


__all__ = ["encode_column"]

"""SQL columns computed from Arrow columns, for the columnar lane (``Store.insert_arrow``).

On a backend that keeps dates, times, datetimes and Decimals as text
(``Backend.text_values``: SQLite), the costly part of writing an Arrow column of them is
making one Python object per value and then its text. Here the text is made by Arrow's
kernels a whole column at a time, spelled exactly as the registry's codecs spell it
(:mod:`.textvalues`): ``YYYY-MM-DD HH:MM:SS.ffffff`` for a naive datetime, the UTC
instant's ``YYYY-MM-DDTHH:MM:SS.ffffff+00:00`` and its offset in minutes (``None`` for UTC)
for an aware one, ``YYYY-MM-DD`` and ``HH:MM:SS.ffffff`` for a date and a time, a
Decimal's sortable key (:func:`.textvalues.decimal_key`) and its plain text.

Each form covers the Arrow columns whose every value the type's rule would pass as it is,
and tells so from the whole column (its Arrow type, its range, its nulls): it returns
``None`` for anything else (another Arrow type, a value out of range, a null where the
field is not Optional, an exponent in a Decimal's text), and the lane then decodes that
column into values and encodes them value by value as ``insert_many`` does, which
converts or refuses them and names the row. So a form never refuses and never decides
what a value becomes where the codecs would decide otherwise: the tests compare it with
the codecs over many values.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..registry import (
    DECIMAL_FRACTION_DIGITS,
    DECIMAL_INTEGER_DIGITS,
    check_aware_datetime,
    check_date,
    check_datetime,
    check_decimal,
    check_time,
)

if TYPE_CHECKING:
    pass

#: An Arrow column (the field's own, or a struct of it and its companions) and whether
#: the field is Optional -> the SQL columns (the field's own, then each companion's), or
#: ``None``: the lane's value-by-value path.
ArrowForm = Callable[[Any, bool], list[Sequence[Any]] | None]

_EPOCH = dt.datetime(1970, 1, 1)
_MICRO = dt.timedelta(microseconds=1)
#: The microseconds since 1970 of the first and the last datetime (years 1 to 9999).
_FIRST_US = (dt.datetime.min - _EPOCH) // _MICRO
_LAST_US = (dt.datetime.max - _EPOCH) // _MICRO
#: The days since 1970 of the first and the last date.
_FIRST_DAY = (dt.date.min - _EPOCH.date()).days
_LAST_DAY = (dt.date.max - _EPOCH.date()).days
_DAY_US = 86_400_000_000
_MAX_OFFSET_MINUTES = 14 * 60
UTC_NAMES: tuple[str, ...] = ("UTC", "+00:00", "Etc/UTC")
_VALUE = "value"
#: The nines' complement of each digit (a negative number's key, :func:`.textvalues.decimal_key`).
_NINES = str.maketrans("0123456789", "9876543210")


def _values_and_parts(
    array: Any, suffixes: tuple[str, ...], nullable: bool
) -> tuple[Any, list[Any]] | None:
    """The field's own Arrow values and its companions' (``None`` for one not given) of
    ``array``: a struct of ``value`` and companions as ``to_arrow`` writes it, or the value
    alone; ``None`` for another struct, or for nulls in a field that is not Optional (the
    value-by-value path says what is wrong)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    parts: list[Any] = [None] * len(suffixes)
    if pa.types.is_struct(array.type):
        names = [f.name for f in array.type]
        if _VALUE not in names or not set(names) <= {_VALUE, *suffixes}:
            return None
        parts = [pc.struct_field(array, s) if s in names else None for s in suffixes]
        array = pc.struct_field(array, _VALUE)
    if array.null_count and not nullable:
        return None
    return array, parts


def micros_in_range(array: Any) -> Any | None:
    """The int64 microseconds of a ``timestamp[us]`` column when every one is a datetime
    of the years 1 to 9999, else ``None``."""
    import pyarrow as pa
    import pyarrow.compute as pc

    micros = array.view(pa.int64()) if array.type.tz is None else array.cast(pa.int64())
    if micros.null_count == len(micros):
        return micros
    low, high = pc.min_max(micros).values()
    if low.as_py() < _FIRST_US or high.as_py() > _LAST_US:
        return None
    return micros


def naive_datetime_text(array: Any, nullable: bool) -> list[Sequence[Any]] | None:
    """``naive_text`` of each value of a ``timestamp[us]`` column without a time zone."""
    import pyarrow as pa

    got = _values_and_parts(array, (), nullable)
    if got is None:
        return None
    values = got[0]
    kind = values.type
    if not pa.types.is_timestamp(kind) or kind.unit != "us" or kind.tz is not None:
        return None
    if micros_in_range(values) is None:
        return None
    # (Arrow's text of a timestamp[us]: a four-digit year, six digits of microseconds)
    return [values.cast(pa.string()).to_pylist()]


def checked_offsets(micros: Any, offsets: Any) -> Any | None:
    """The offsets (minutes east of UTC, ``int64``; all null for ``None``: UTC) beside the
    instants ``micros`` (microseconds since 1970), or None when one is no offset a write
    stores (beyond ±14:00) or moves its instant's wall time out of the years 1-9999."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if offsets is None:
        minutes: Any = pa.nulls(len(micros), pa.int64())
    elif pa.types.is_integer(offsets.type):
        minutes = offsets.cast(pa.int64())
    else:
        return None
    if minutes.null_count < len(minutes):
        if pc.max(pc.abs(minutes)).as_py() > _MAX_OFFSET_MINUTES:
            return None
        # the wall time at the offset must be a datetime too
        walls = pc.add(micros, pc.multiply(pc.fill_null(minutes, 0), pa.scalar(60_000_000)))
        if walls.null_count < len(walls):
            low, high = pc.min_max(walls).values()
            if low.as_py() < _FIRST_US or high.as_py() > _LAST_US:
                return None
    return minutes


def aware_datetime_text(array: Any, nullable: bool) -> list[Sequence[Any]] | None:
    """``utc_text`` of each value of an aware datetime column (UTC ``timestamp[us]``
    instants, with their offsets in minutes east of UTC beside them as ``to_arrow``
    writes them, or alone: UTC), and its ``offset`` companion (``None`` for UTC)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    got = _values_and_parts(array, ("offset",), nullable)
    if got is None:
        return None
    values, (offsets,) = got
    kind = values.type
    if not pa.types.is_timestamp(kind) or kind.unit != "us" or kind.tz not in UTC_NAMES:
        return None
    micros = micros_in_range(values)
    if micros is None:
        return None
    minutes = checked_offsets(micros, offsets)
    if minutes is None:
        return None
    # the instant's naive UTC text, its space a T, and UTC's offset
    naive = values.cast(pa.timestamp("us", tz="UTC")).cast(pa.timestamp("us"))
    text = pc.binary_join_element_wise(
        pc.utf8_replace_slice(naive.cast(pa.string()), start=10, stop=11, replacement="T"),
        "+00:00",
        "",
    )
    # (an offset of 0 is UTC's: no companion value; none where the value is None)
    zero = pc.equal(pc.fill_null(minutes, 0), pa.scalar(0))
    kept = pc.if_else(pc.or_(zero, pc.is_null(values)), pa.scalar(None, pa.int64()), minutes)
    return [text.to_pylist(), kept.to_pylist()]


def date_text(array: Any, nullable: bool) -> list[Sequence[Any]] | None:
    """``date.isoformat()`` of each value of a ``date32`` column."""
    import pyarrow as pa
    import pyarrow.compute as pc

    got = _values_and_parts(array, (), nullable)
    if got is None or not pa.types.is_date32(got[0].type):
        return None
    values = got[0]
    days = values.view(pa.int32())
    if days.null_count < len(days):
        low, high = pc.min_max(days).values()
        if low.as_py() < _FIRST_DAY or high.as_py() > _LAST_DAY:
            return None
    return [values.cast(pa.string()).to_pylist()]


def time_text(array: Any, nullable: bool) -> list[Sequence[Any]] | None:
    """``time.isoformat("microseconds")`` of each value of a ``time64[us]`` column."""
    import pyarrow as pa
    import pyarrow.compute as pc

    got = _values_and_parts(array, (), nullable)
    if got is None or got[0].type != pa.time64("us"):
        return None
    values = got[0]
    micros = values.view(pa.int64())
    if micros.null_count < len(micros):
        low, high = pc.min_max(micros).values()
        if low.as_py() < 0 or high.as_py() >= _DAY_US:
            return None
    return [values.cast(pa.string()).to_pylist()]


def decimal_text(array: Any, nullable: bool) -> list[Sequence[Any]] | None:
    """:func:`.textvalues.decimal_key` of each value of a ``decimal128`` column and its
    plain text (``format(v, "f")``), when every value is a Decimal the rule passes as it
    is: a scale of 0 to 30 and at most 35 digits before the point; its ``scale`` beside
    it (as ``to_arrow`` writes it) the column's own on every row. Arrow writes the text
    of the numbers; the key pads and trims it, the negative ones' digits complemented
    in one ``str.translate``."""
    import pyarrow as pa
    import pyarrow.compute as pc

    got = _values_and_parts(array, ("scale",), nullable)
    if got is None:
        return None
    values, (scales,) = got
    kind = values.type
    if not pa.types.is_decimal128(kind):
        return None
    scale = kind.scale
    if not 0 <= scale <= DECIMAL_FRACTION_DIGITS or kind.precision - scale > DECIMAL_INTEGER_DIGITS:
        return None
    if scales is not None and scales.null_count < len(scales):
        if not pa.types.is_integer(scales.type):
            return None
        # a value of another scale than the column's: value by value (the scale joined)
        if pc.any(pc.not_equal(scales.cast(pa.int64()), scale)).as_py():
            return None
    text = values.cast(pa.string())
    if text.null_count < len(text) and pc.any(pc.match_substring(text, "E")).as_py():
        return None  # (Arrow writes a small number with an exponent)
    magnitude = pc.utf8_ltrim(text, characters="-")
    if scale:
        integer = pc.utf8_slice_codeunits(magnitude, 0, -(scale + 1))
        fraction = pc.utf8_rtrim(pc.utf8_slice_codeunits(magnitude, -scale), characters="0")
        tail = pc.if_else(
            pc.equal(pc.utf8_length(fraction), pa.scalar(0)),
            "",
            pc.binary_join_element_wise("", fraction, "."),
        )
    else:
        integer, tail = magnitude, pa.scalar("")
    key = pc.binary_join_element_wise(
        pc.utf8_lpad(integer, width=DECIMAL_INTEGER_DIGITS, padding="0"), tail, ""
    )
    keys: list[Any] = key.to_pylist()
    negative = pc.fill_null(pc.starts_with(text, "-"), False)
    if pc.any(negative).as_py():
        rows = pc.indices_nonzero(negative).to_pylist()
        complements = "\n".join([keys[i] for i in rows]).translate(_NINES).split("\n")
        for i, complement in zip(rows, complements, strict=True):
            keys[i] = f"-{complement}~"
    return [keys, text.to_pylist()]


#: The form of each rule that has one, by the rule (``TypeInfo.check``), with the
#: companions its SQL columns take (by suffix, in order); the storage name it writes.
TEXT_ARROW_FORMS: dict[Any, tuple[str, tuple[str, ...], ArrowForm]] = {
    check_datetime: ("NaiveDateTime", (), naive_datetime_text),
    check_aware_datetime: ("AwareDateTime", ("offset",), aware_datetime_text),
    check_date: ("date", (), date_text),
    check_time: ("time", (), time_text),
    check_decimal: ("ExactDecimal", ("text",), decimal_text),
}


__all__ = [
    "TEXT_ARROW_FORMS",
    "UTC_NAMES",
    "ArrowForm",
    "aware_datetime_text",
    "checked_offsets",
    "date_text",
    "decimal_text",
    "micros_in_range",
    "naive_datetime_text",
    "time_text",
]

"""The built-in value rules a whole column at a time.

A bulk writer holds its values column by column (``zip(*rows)``). For the common case, a
column whose values all already are what their type's rule (``check_*`` in
:mod:`.scalars`) would return, these functions say so with a few passes at C speed
(``count_type(column, int)``, ``min``/``max``, one ``str.join``) instead of one
Python call per value; the costly parts of a rule (a Decimal's exponent and digits, a
datetime's offset) are tested only for the types that have them.

Each ``*_column(values)`` returns True when every non-``None`` value of ``values`` passes
its rule *unchanged* (``check(v) is v``). False means nothing more than "not certain": the
caller then applies the rule value by value, which converts what typing allows (an ``int``
in a ``float`` field) or names the refused value, exactly as before. So these functions
never decide that a value is refused, and never change one: exact-or-refused stays with
the value rules. They are registered as ``TypeInfo.check_column``.

The column forms that follow a passing test are here too, with the same contract (equal,
value for value, to the per-value functions applied to checked values): the companions'
(``Companion.split_column`` / ``join_column``), the lexical forms (``XmlCodec.to_text_column``)
and, for a Decimal column, its :class:`DecimalFacts` (the Arrow writer fits its decimal type
from them). :mod:`.scalars` registers each with its type.
"""

from __future__ import annotations

import datetime as dt
import decimal
import math
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import compress, filterfalse, repeat
from operator import attrgetter, countOf, eq, is_not, ne
from typing import Any

# the C module by its package (import-linter sees no module it cannot read as source)
from entityworks.types import cloops

from .scalars import offset_minutes

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
_NONE = type(None)
_ZERO = decimal.Decimal(0)  # compared with Decimals, faster than the int 0
_TZINFO = attrgetter("tzinfo")
_ADJUSTED = decimal.Decimal.adjusted
_SIGNED = decimal.Decimal.is_signed
#: The registry's Decimal limits (DECIMAL(65, 30)); :mod:`.scalars` holds the same numbers.
_INTEGER_DIGITS, _FRACTION_DIGITS = 35, 30
#: Deletes the characters of plain decimal text (no exponent, finite): a text of at most 30
#: characters that this leaves empty is a Decimal the rule passes, unless it is -0.
NOT_PLAIN = str.maketrans("", "", "0123456789.-")


def count_type(values: Iterable[Any], kind: type) -> int:
    """How many items of ``values`` are exactly of the type ``kind`` (``NoneType``: how
    many are None): ``countOf(map(type, values), kind)`` in one C loop."""
    return cloops.kinds(values, kind)[0]


def all_of(values: Sequence[Any], kind: type, nullable: bool = False) -> bool:
    """True when every item of ``values`` is exactly of the type ``kind`` (or None, where
    ``nullable``): one C pass."""
    found, none = cloops.kinds(values, kind)
    return found == len(values) or (nullable and found + none == len(values))


def has_none(values: Sequence[Any]) -> bool:
    """True when ``values`` holds ``None`` (by identity, in one C loop: ``None in values``
    would compare each value with None, which costs a Decimal a microsecond)."""
    return cloops.kinds(values, _NONE)[1] > 0


_PRESENT = partial(is_not, None)

#: ``each(fn, values)``: ``fn`` of each present value of a column, ``None`` kept, in one C
#: loop (:mod:`.cloops`, the column loops in C, which only this package imports).
each: Callable[[Callable[[Any], Any], Sequence[Any]], list[Any]] = cloops.each
#: The sortable keys of a column of Decimals (SQLite's ``__key`` column, as
#: ``sql.textvalues.decimal_key`` writes them), ``None`` kept, from each value's ``str`` in
#: one C loop; ``None`` for a column with any other value (the caller's Python path then).
decimal_keys_at_once: Callable[[Sequence[Any]], list[Any] | None] = cloops.keys
#: The UTC ISO text with microseconds (``v.astimezone(UTC).isoformat(timespec="microseconds")``)
#: of each checked aware datetime of a column without ``None``, in one C loop; ``None`` where
#: one is not the usual case (a zone other than a fixed-offset ``datetime.timezone``, ...).
utc_texts_at_once: Callable[[Sequence[Any]], list[Any] | None] = cloops.utc_texts
#: ``build_rows(cls, rows, fields, nulls, kinds)``: ``cls(*(row[i] for i in fields))`` of
#: each row (a tuple) whose items at ``nulls`` are all ``None`` and whose item of a field
#: with a kind (``kinds[k]``, not None) is None or exactly of that type, a vectorcall a row
#: in one C loop; ``None``, and no object made, where a row is not so (the caller's usual
#: path then).
build_rows: Callable[
    [
        Callable[..., Any],
        Sequence[Any],
        tuple[int, ...],
        tuple[int, ...],
        tuple[type | None, ...] | None,
    ],
    list[Any] | None,
] = cloops.build_rows


def on_present(fn: Callable[..., Sequence[Any]], values: Sequence[Any], *beside: Any) -> list[Any]:
    """``fn`` (whole columns of non-None values -> one result each) of the present values
    of a column (and of the items of the columns ``beside`` in the same rows), each result
    in its value's place, ``None`` kept: a column function that takes no None serves an
    Optional column with no Python call a value."""
    if not has_none(values):
        result = fn(values, *beside)
        return result if type(result) is list else list(result)
    if not beside:
        return cloops.fill(values, fn(cloops.present(values)))
    present = list(map(_PRESENT, values))
    others = [list(compress(column, present)) for column in beside]
    return cloops.fill(values, fn(list(compress(values, present)), *others))


def _present(values: Sequence[Any], kind: type) -> tuple[bool, list[Any] | Sequence[Any]]:
    """(all non-None values are exactly ``kind``, the non-None values)."""
    found, none = cloops.kinds(values, kind)
    if found == len(values):
        return True, values
    if found + none != len(values):
        return False, values
    return True, cloops.present(values)


def int_column(values: Sequence[Any]) -> bool:
    """Exactly ``int`` and within the signed 64-bit range (``check_int``)."""
    exact, present = _present(values, int)
    return exact and (not present or (INT64_MIN <= min(present) and max(present) <= INT64_MAX))


def float_column(values: Sequence[Any]) -> bool:
    """Exactly ``float`` (``check_float``: NaN, infinities and -0.0 pass as they are)."""
    return _present(values, float)[0]


def bool_column(values: Sequence[Any]) -> bool:
    """Exactly ``bool`` (``check_bool``)."""
    return _present(values, bool)[0]


def str_column(values: Sequence[Any]) -> bool:
    """Exactly ``str`` and encodable as UTF-8, no lone surrogate (``check_str``)."""
    exact, present = _present(values, str)
    if not exact:
        return False
    text = "".join(present)
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def naive_datetime_column(values: Sequence[Any]) -> bool:
    """Exactly ``datetime`` without a tzinfo (``check_datetime``)."""
    exact, present = _present(values, dt.datetime)
    return exact and countOf(map(_TZINFO, present), None) == len(present)


#: The offsets ``check_aware_datetime`` passes: whole minutes within ±14:00.
_MINUTE = dt.timedelta(minutes=1)
_MAX_OFFSET = dt.timedelta(hours=14)
_AS_UTC_CHECK = dt.UTC


def _fixed_offset_ok(zone: Any) -> bool:
    """True for a ``datetime.timezone`` (one offset for every value) whose offset the rule
    passes; anything else (``None``, a ``zoneinfo`` zone whose offset moves) is left to the
    rule value by value."""
    if type(zone) is not dt.timezone:
        return False
    offset = zone.utcoffset(None)
    return not offset % _MINUTE and abs(offset) <= _MAX_OFFSET


def aware_datetime_column(values: Sequence[Any]) -> bool:
    """Exactly ``datetime``, each with a fixed-offset ``datetime.timezone`` of whole minutes
    within ±14:00 whose UTC instant lies within the years 1-9999 (``check_aware_datetime``).

    The offsets are tested once per zone, and the instants at the two ends only: the
    earliest and the latest instants of the column are the only ones that could leave the
    years 1-9999 in UTC. Where every year is within 2-9998 (an offset moves a time by less
    than a day), none can, and the ends are not looked for: comparing datetimes of
    different zones costs two ``utcoffset`` calls each."""
    exact, present = _present(values, dt.datetime)
    if not exact:
        return False
    if not present:
        return True
    if not all(map(_fixed_offset_ok, set(map(_TZINFO, present)))):
        return False
    years = list(map(_YEAR, present))
    if min(years) > dt.MINYEAR and max(years) < dt.MAXYEAR:
        return True
    try:
        min(present).astimezone(_AS_UTC_CHECK)
        max(present).astimezone(_AS_UTC_CHECK)
    except OverflowError:
        return False
    return True


_YEAR = attrgetter("year")


def offset_minutes_column(values: Sequence[Any]) -> list[Any]:
    """``offset_minutes`` of each checked aware datetime (``None`` staying ``None``): minutes
    east of UTC, ``None`` for UTC itself; once per fixed-offset zone."""
    if has_none(values):
        return on_present(offset_minutes_column, values)
    zones = set(map(_TZINFO, values))
    if not all(type(z) is dt.timezone for z in zones):
        return list(map(offset_minutes, values))
    minutes = {z: z.utcoffset(None) // _MINUTE or None for z in zones}
    return list(map(minutes.__getitem__, map(_TZINFO, values)))


def uuid_column(values: Sequence[Any]) -> bool:
    """Exactly ``uuid.UUID`` (``check_uuid``)."""
    return _present(values, uuid.UUID)[0]


def date_column(values: Sequence[Any]) -> bool:
    """Exactly ``date`` (``check_date``: a ``datetime`` is refused there, not here)."""
    return _present(values, dt.date)[0]


def time_column(values: Sequence[Any]) -> bool:
    """Exactly ``time`` without a tzinfo (``check_time``)."""
    exact, present = _present(values, dt.time)
    return exact and countOf(map(_TZINFO, present), None) == len(present)


def exact_type(cls: type) -> Callable[[Sequence[Any]], bool]:
    """The column test of a type whose rule passes every value of exactly that type
    (``None`` beside them, as every column test: nullability is the schema's)."""

    def test(values: Sequence[Any]) -> bool:
        return all_of(values, cls, nullable=True)

    return test


@dataclass(frozen=True, slots=True)
class DecimalFacts:
    """What a Decimal column's values have in common, once they passed ``check_decimal``."""

    #: The most digits before the point of any value (``len(digits) + exponent``).
    integer: int
    #: The most digits after the point of any value.
    scale: int
    #: The exponent every value has, or ``None`` when they differ.
    exponent: int | None


def _facts(values: Sequence[Any], low: int, high: int, uniform: int | None) -> DecimalFacts | None:
    """The facts of exact, finite Decimals whose exponents lie in ``[low, high]``, or
    ``None`` when the rule would refuse one (an exponent or a digit count out of range,
    a negative zero)."""
    if high > 0 or -low > _FRACTION_DIGITS:
        return None
    integer = max(map(_ADJUSTED, values)) + 1  # == len(digits) + exponent
    if integer > _INTEGER_DIGITS:
        return None
    if any(map(_SIGNED, filterfalse(None, values))):
        return None  # a negative zero
    return DecimalFacts(integer, -low, uniform)


def decimal_facts(values: Sequence[Any], exact: bool = False) -> DecimalFacts | None:
    """The facts of a column of exact Decimals that all pass ``check_decimal`` unchanged
    (finite, exponent <= 0, no -0, at most 35 digits before the point and 30 after);
    ``None`` otherwise (or for an empty column). ``exact``: the caller found every value
    to be exactly a Decimal already.

    One exponent for the whole column (``same_quantum`` against the first value) is the
    common case and costs a C call per value; differing exponents cost ``as_tuple``.
    """
    if not values or not exact and count_type(values, decimal.Decimal) != len(values):
        return None
    first = values[0]
    exponent = first.as_tuple().exponent
    if not isinstance(exponent, int):
        return None  # NaN / infinity
    if all(map(first.same_quantum, values)):
        return _facts(values, exponent, exponent, exponent)
    exponents = [d.as_tuple().exponent for d in values]
    try:
        low, high = min(exponents), max(exponents)
    except TypeError:  # a NaN's 'n' or an infinity's 'F' among the ints
        return None
    return _facts(values, low, high, None)


def decimal_column(values: Sequence[Any]) -> bool:
    """Exactly ``Decimal``, finite, no positive exponent, not -0, at most 35 digits before
    the point and 30 after (``check_decimal``).

    A column of one exponent (the usual money column: ``same_quantum`` with the first value,
    a C call per value) is answered by its facts (:func:`decimal_facts`). Otherwise: a
    Decimal's ``str`` is plain decimal text (digits, a point, a minus) exactly when it is
    finite with an exponent of at most 0 and no more than six zeros after the point before
    its first digit; its length then bounds both digit counts. Anything else (``1E-7``,
    which the rule accepts, included) is left to the rule.
    """
    exact, present = _present(values, decimal.Decimal)
    if not exact:
        return False
    if not present:
        return True
    first = present[0]
    if all(map(first.same_quantum, present)):  # stops at the first other exponent
        exponent = first.as_tuple().exponent
        return (
            isinstance(exponent, int) and _facts(present, exponent, exponent, exponent) is not None
        )
    texts = list(map(str, present))
    if "".join(texts).translate(NOT_PLAIN) or max(map(len, texts)) > 30:
        return False
    if countOf(present, _ZERO):  # a zero: is one negative? (-0 and -0.00 are refused)
        return not any(t[0] == "-" for v, t in zip(present, texts, strict=True) if not v)
    return True


def negative_zero_column(values: Sequence[Any]) -> list[Any]:
    """``_negative_zero`` of each checked float (``None`` for None): 1 for -0.0."""
    if not countOf(values, 0.0):  # None == 0.0 is False, as 0.0 == None
        return [None] * len(values)
    return [1 if v is not None and v == 0.0 and math.copysign(1.0, v) < 0 else None for v in values]


def signed_zeros(
    values: Sequence[Any], marks: Sequence[Any], one: Callable[[Any, Any], Any]
) -> list[Any]:
    """``one(value, mark)`` (``_signed_zero``: -0.0 where the mark says so) for whole
    columns, a ``None`` value kept. A column without a mark (the usual one: no -0.0 was
    written) is the values as they are; any other goes value by value."""
    if countOf(marks, None) == len(marks):
        return list(values)
    return [v if v is None else one(v, m) for v, m in zip(values, marks, strict=True)]


def has_nan(values: Sequence[Any]) -> bool:
    """True when a value of ``values`` (floats or None) is NaN."""
    return any(map(ne, values, values))


def scale_column(values: Sequence[Any]) -> list[Any]:
    """``-exponent`` of each checked Decimal (``None`` for None): its digits after the point.
    A column of one exponent (the usual money column) is found with one ``same_quantum``
    pass instead of an ``as_tuple`` per value."""
    if values and not has_none(values):
        first = values[0]
        if countOf(map(first.same_quantum, values), True) == len(values):
            return [-first.as_tuple().exponent] * len(values)
    return [None if v is None else -v.as_tuple().exponent for v in values]


#: ``Decimal('1E-n')`` for each scale a write stores (0 to 30): what ``quantize`` takes.
_EXPONENTS = {n: decimal.Decimal(1).scaleb(-n) for n in range(31)}
#: An exact ``quantize``: cutting a digit other than a zero (Inexact) or holding more
#: digits than any column does (InvalidOperation) raises.
_EXACT = decimal.Context(prec=100, traps=[decimal.Inexact, decimal.InvalidOperation])


def decimals_with_scales(
    values: Sequence[Any], scales: Sequence[Any], one: Callable[[Any, Any], Any]
) -> list[Any]:
    """``one(value, scale)`` (the value written with ``scale`` digits after the point:
    padded, or trimmed of zeros a column added) for whole columns. The common case, no
    None and every scale one a write stores, is one exact ``quantize`` per value at C
    speed; anything else (a digit it would cut included) goes value by value, where
    ``one`` names what is wrong. Scales all None (none stored, or MariaDB's reads of values
    already cut to their scale: ``Backend.read_form``) keep the values."""
    if scales.count(None) == len(scales):
        return list(values)
    if not has_none(values) and count_type(scales, int) == len(scales):
        exponents: list[Any] = list(map(_EXPONENTS.get, scales))
        if not has_none(exponents):
            try:
                return list(
                    map(decimal.Decimal.quantize, values, exponents, repeat(None), repeat(_EXACT))
                )
            except (ArithmeticError, TypeError):
                pass
    return [v if v is None else one(v, s) for v, s in zip(values, scales, strict=True)]


#: The time zone of each offset the offset companion holds (``None``: UTC itself).
_ZONES: dict[Any, dt.timezone] = {
    None: dt.UTC,
    **{m: dt.timezone(dt.timedelta(minutes=m)) for m in range(-14 * 60, 14 * 60 + 1)},
}


#: The zone of each offset from -14:00 to +14:00, by minutes + 840 (``cloops.at_offsets``).
_ZONE_TUPLE = tuple(_ZONES[m] for m in range(-14 * 60, 14 * 60 + 1))


def instants_at_offsets(stamps: Sequence[Any], minutes: Sequence[Any]) -> list[Any] | None:
    """``with_offsets`` of the stored instants themselves (``Companion.join_raw``): the UTC
    text SQLite holds, the UTC datetimes PostgreSQL's session gives, the naive UTC ones of
    MariaDB, each made at its offset at once, or None when one is not such a pair."""
    return cloops.at_offsets(stamps, minutes, _ZONE_TUPLE, dt.UTC)


def with_offsets(
    instants: Sequence[Any], minutes: Sequence[Any], one: Callable[[Any, Any], Any]
) -> list[Any]:
    """``one(instant, minutes)`` (the UTC instant shown at its offset: ``with_offset``) for
    whole columns. The common case, no None instant and every offset one a write stores,
    is one ``astimezone`` per value at C speed; anything else goes value by value, where
    ``one`` names what is wrong."""
    if has_none(instants):
        return on_present(partial(with_offsets, one=one), instants, minutes)
    if all_of(minutes, int, nullable=True):
        zones: list[Any] = list(map(_ZONES.get, minutes))
        if not has_none(zones):
            try:
                return list(map(dt.datetime.astimezone, instants, zones))
            except (ArithmeticError, TypeError, ValueError):
                pass
    return [v if v is None else one(v, m) for v, m in zip(instants, minutes, strict=True)]


def decimal_text_column(values: Sequence[Any]) -> list[Any]:
    """``format(v, "f")`` of each Decimal (``None`` for None): ``values.decimal_text``.
    A Decimal's ``str`` is the same text when it has no exponent (twice as fast)."""
    if has_none(values):
        return on_present(decimal_text_column, values)
    texts = list(map(str, values))
    if "E" not in "".join(texts):
        return texts
    return list(map(format, values, repeat("f")))


def _plain_texts(texts: Sequence[Any]) -> bool:
    """True when every text is a plain decimal of at most 30 characters (digits, point,
    minus: no exponent, finite), so its Decimal passes the rule unless it is -0."""
    return (
        count_type(texts, str) == len(texts)
        and not "".join(texts).translate(NOT_PLAIN)
        and max(map(len, texts), default=0) <= 30
    )


def decimals_as_written(
    values: Sequence[Any], texts: Sequence[Any], one: Callable[[Any, Any], Any]
) -> list[Any]:
    """``one(value, text)`` (``_decimal_as_written``: the Decimal read from SQLite's key,
    with the exponent of the plain text beside it when that is the same number) for whole
    columns. The common case, every text plain and equal to its key's number, costs one
    ``Decimal(text)`` and one comparison per value; any other goes value by value."""
    if not has_none(values) and _plain_texts(texts):
        try:
            written = list(map(decimal.Decimal, texts))
        except (ArithmeticError, ValueError):
            written = None
        if (
            written is not None
            and countOf(map(eq, written, values), True) == len(values)
            and not (
                countOf(written, _ZERO)
                and any(t[0] == "-" for w, t in zip(written, texts, strict=True) if not w)
            )
        ):
            return written
    return [v if v is None else one(v, t) for v, t in zip(values, texts, strict=True)]


# -- lexical forms a column at a time (``XmlCodec.to_text_column``) -------------------------
# Each takes a list of values that passed the type's column test and gives ``to_text`` of
# every one, the same strings, with the per-value work at C speed.

_BOOL_TEXT = {True: "true", False: "false"}
_FLOAT_SPECIAL = {"nan": "NaN", "inf": "INF", "-inf": "-INF"}


def int_texts(values: Sequence[Any]) -> list[str]:
    return list(map(int.__repr__, values))


def float_texts(values: Sequence[Any]) -> list[str]:
    texts = list(map(float.__repr__, values))
    if "nan" in texts or "inf" in texts or "-inf" in texts:  # XSD's spellings
        get = _FLOAT_SPECIAL.get
        texts = [get(t, t) for t in texts]
    return texts


def bool_texts(values: Sequence[Any]) -> list[str]:
    return list(map(_BOOL_TEXT.__getitem__, values))


def str_texts(values: Sequence[Any]) -> list[str]:
    return list(values)


def datetime_texts(values: Sequence[Any]) -> list[str]:
    return list(map(dt.datetime.isoformat, values))


def decimal_texts(values: Sequence[Any]) -> list[str]:
    return list(map(format, values, repeat("f")))


__all__ = [
    "INT64_MAX",
    "INT64_MIN",
    "NOT_PLAIN",
    "DecimalFacts",
    "all_of",
    "build_rows",
    "aware_datetime_column",
    "date_column",
    "bool_column",
    "bool_texts",
    "datetime_texts",
    "decimal_column",
    "decimal_facts",
    "decimal_text_column",
    "signed_zeros",
    "decimal_texts",
    "decimals_as_written",
    "exact_type",
    "float_column",
    "float_texts",
    "has_nan",
    "count_type",
    "has_none",
    "int_column",
    "int_texts",
    "naive_datetime_column",
    "negative_zero_column",
    "offset_minutes_column",
    "scale_column",
    "str_column",
    "str_texts",
    "time_column",
    "uuid_column",
]

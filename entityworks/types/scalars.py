"""The built-in scalar types: int, float, str, bool, bytes, Decimal, datetime (naive and
aware), date, time, timedelta, UUID and Enum.

For each: its value rule (``check_*``), its XML lexical forms, its storage codecs and the
companion columns that keep what a backend loses. They are one module because they are one
table: the entries at the end name these functions, and the rules are shared by the JSON
columns that hold such values. :func:`register` adds them to a registry.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import enum
import math
import re
import reprlib
import typing
import uuid
from typing import Any

from ..errors import UnsupportedTypeError
from . import columns, storage, values
from .registry import ARROW, Companion, TypeInfo, TypeMarker, TypeRegistry, pyarrow_module

# -- value rules: what each built-in type accepts ------------------------------------------
#
# One rule per type, used by every writer (Store, frames, XML) and by filters. A value is
# accepted when it has the field's type, or a type Python's typing accepts in its place (a
# subclass; an int where a float is expected): it is then stored, and comes back, as the
# field's type. Everything else is refused with the reason, before anything is written.

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
#: Digits a Decimal may have before and after the point: DECIMAL(65, 30), the widest column
#: MariaDB has, so that a Decimal stored on one backend can be stored on every other one.
DECIMAL_INTEGER_DIGITS, DECIMAL_FRACTION_DIGITS = 35, 30
#: The largest UTC offset xs:dateTime can write (and so the largest any backend keeps).
MAX_UTC_OFFSET = dt.timedelta(hours=14)
_MINUTE = dt.timedelta(minutes=1)


def refused(expected: str, value: Any, hint: str = "") -> TypeError:
    """The TypeError every value rule raises: what was expected, what came."""
    return TypeError(f"expected {expected}, got {type(value).__qualname__}{hint}")


def check_bool(value: Any) -> bool:
    if type(value) is bool:
        return value
    hint = "; an int is not stored as a bool" if isinstance(value, int) else ""
    raise refused("a bool", value, hint)


def check_int(value: object) -> int:
    if type(value) is not int:
        if not isinstance(value, int):
            raise refused("an int", value)
        value = int(value)  # a bool or an IntEnum is stored (and comes back) as its int
    if not INT64_MIN <= value <= INT64_MAX:
        raise ValueError("outside the signed 64-bit range every backend holds")
    return value


def check_float(value: Any) -> float:
    if type(value) is float:
        return value
    if isinstance(value, float):
        return float(value)
    if isinstance(value, int):  # typing accepts an int for a float; it comes back a float
        try:
            converted = float(value)
        except OverflowError:
            raise ValueError("an int too large for a float") from None
        if converted != value:
            raise ValueError(f"the int has no exact float (it would become {converted!r})")
        return converted
    raise refused("a float", value)


def check_str(value: object) -> str:
    if type(value) is not str:
        if not isinstance(value, str):
            raise refused("a str", value)
        value = str.__str__(value)  # the text of a str subclass (a StrEnum member...)
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError("a lone surrogate cannot be stored as UTF-8") from None
    return value


def check_bytes(value: Any) -> bytes:
    if type(value) is bytes:
        return value
    if isinstance(value, bytes):
        return bytes(value)
    hint = "; convert it with bytes(...)" if isinstance(value, bytearray | memoryview) else ""
    raise refused("bytes", value, hint)


def check_decimal(value: object) -> decimal.Decimal:
    """Finite, not -0, no positive exponent, at most 35 digits before the point and 30 after.

    Every backend and format keeps such a Decimal exactly, exponent included; xs:decimal and
    the SQL columns have no way to write ``1E+2`` or ``-0``, and MariaDB no room for more.
    """
    if type(value) is not decimal.Decimal:
        if not isinstance(value, decimal.Decimal):
            raise refused("a Decimal", value)
        value = decimal.Decimal(value)
    if not value.is_finite():
        raise ValueError(f"Decimal {value} is not finite (no column or xs:decimal holds it)")
    sign, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)
    if exponent > 0:
        raise ValueError(
            f"{value} has a positive exponent, which no column or xs:decimal "
            f"keeps; write it as Decimal('{value:f}')"
        )
    if sign and not any(digits):
        raise ValueError(
            f"{value} is a negative zero, which no column or xs:decimal keeps; "
            f"write it as Decimal('{-value:f}')"
        )
    if -exponent > DECIMAL_FRACTION_DIGITS or len(digits) + exponent > DECIMAL_INTEGER_DIGITS:
        raise ValueError(
            f"{value} has more than {DECIMAL_INTEGER_DIGITS} digits before the point or "
            f"{DECIMAL_FRACTION_DIGITS} after (DECIMAL(65, 30), the widest MariaDB column)"
        )
    return value


def _plain_datetime(value: dt.datetime) -> dt.datetime:
    """A datetime subclass (pandas' Timestamp...) as a datetime, refusing lost nanoseconds."""
    if getattr(value, "nanosecond", 0):
        raise ValueError("its nanoseconds would be lost (datetime keeps microseconds)")
    return dt.datetime(
        value.year,
        value.month,
        value.day,
        value.hour,
        value.minute,
        value.second,
        value.microsecond,
        value.tzinfo,
        fold=value.fold,
    )


def check_datetime(value: object) -> dt.datetime:
    if type(value) is not dt.datetime:
        if not isinstance(value, dt.datetime):
            raise refused("a datetime", value)
        value = _plain_datetime(value)
    if value.tzinfo is not None:
        raise ValueError(
            "timezone-aware datetime in a naive datetime column; annotate the field as "
            "entityworks.AwareDatetime to store aware values"
        )
    return value


def format_offset(offset: dt.timedelta) -> str:
    """``+05:30``, ``-19:46``, ``+00:00:30``, ``+00:00:00.000001`` (only the parts it has)."""
    sign = "-" if offset < dt.timedelta(0) else "+"
    seconds, micros = divmod(abs(offset) // dt.timedelta(microseconds=1), 1_000_000)
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    text = f"{sign}{hours:02d}:{minutes:02d}"
    if seconds or micros:
        text += f":{seconds:02d}" + (f".{micros:06d}" if micros else "")
    return text


def check_aware_datetime(value: object) -> dt.datetime:
    """A datetime with a UTC offset of whole minutes within ±14:00 (xs:dateTime's offsets),
    whose UTC instant is a datetime too."""
    if type(value) is not dt.datetime:
        if not isinstance(value, dt.datetime):
            raise refused("a datetime", value)
        value = _plain_datetime(value)
    offset = value.utcoffset() if value.tzinfo is not None else None
    if offset is None:
        raise ValueError("naive datetime in an AwareDatetime column; attach a tzinfo")
    if offset % _MINUTE:
        raise ValueError(
            f"its UTC offset {format_offset(offset)} is not a whole number of "
            "minutes, which xs:dateTime and the offset columns require; convert "
            "it with .astimezone(datetime.timezone.utc)"
        )
    if abs(offset) > MAX_UTC_OFFSET:
        raise ValueError(
            f"its UTC offset {format_offset(offset)} is beyond ±14:00, the "
            "range xs:dateTime allows; convert it with .astimezone(...)"
        )
    try:
        value.astimezone(dt.UTC)
    except OverflowError:
        raise ValueError("its UTC instant falls outside the years 1-9999") from None
    return value


def check_date(value: Any) -> dt.date:
    if type(value) is dt.date:
        return value
    if isinstance(value, dt.datetime):  # a date subclass: refuse it rather than drop its time
        raise refused("a date", value, "; use .date() to store only the day")
    if not isinstance(value, dt.date):
        raise refused("a date", value)
    return dt.date(value.year, value.month, value.day)


def check_time(value: object) -> dt.time:
    if type(value) is not dt.time:
        if not isinstance(value, dt.time):
            raise refused("a time", value)
        value = dt.time(
            value.hour, value.minute, value.second, value.microsecond, value.tzinfo, fold=value.fold
        )
    if value.tzinfo is not None:
        raise ValueError("times with a tzinfo are not stored; use a naive time")
    return value


def check_timedelta(value: object) -> dt.timedelta:
    if type(value) is not dt.timedelta:
        if not isinstance(value, dt.timedelta):
            raise refused("a timedelta", value)
        if getattr(value, "nanoseconds", 0):
            raise ValueError("its nanoseconds would be lost (timedelta keeps microseconds)")
        value = dt.timedelta(value.days, value.seconds, value.microseconds)
    if not INT64_MIN <= _timedelta_to_micros(value) <= INT64_MAX:
        raise ValueError("more microseconds than a signed 64-bit integer holds")
    return value


def check_uuid(value: Any) -> uuid.UUID:
    if type(value) is uuid.UUID:
        return value
    if isinstance(value, uuid.UUID):
        return uuid.UUID(int=value.int)
    raise refused("a UUID", value)


# -- lexical forms for XML ---------------------------------------------------------------


def _bool_from_text(text: str) -> bool:
    t = text.strip()
    if t in ("true", "1"):
        return True
    if t in ("false", "0"):
        return False
    raise ValueError(f"not an xs:boolean: {text!r}")


def int_from_text(text: str) -> int:
    """An xs:integer's text (any of its sizes) as an int."""
    t = text.strip()
    if not re.fullmatch(r"[+-]?\d+", t):
        raise ValueError(f"not an integer: {text!r}")
    return int(t)


_FLOAT_SPECIAL = {"nan": "NaN", "inf": "INF", "-inf": "-INF"}


def _float_to_text(x: float) -> str:
    # repr is the shortest exact form; only its spellings of NaN and infinity differ in XSD
    text = repr(x if type(x) is float else check_float(x))
    return _FLOAT_SPECIAL.get(text, text)


def _float_from_text(text: str) -> float:
    t = text.strip()
    special = {
        "NaN": math.nan,
        "INF": math.inf,
        "-INF": -math.inf,
        "+INF": math.inf,
        "Infinity": math.inf,
        "-Infinity": -math.inf,
    }
    if t in special:
        return special[t]
    if not re.fullmatch(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?", t):
        raise ValueError(f"not an xs:double: {text!r}")
    return float(t)


def _decimal_to_text(d: decimal.Decimal) -> str:
    return format(check_decimal(d), "f")


_DECIMAL_TEXT = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)")


def _decimal_from_text(text: str) -> decimal.Decimal:
    t = text.strip()
    if not _DECIMAL_TEXT.fullmatch(t):
        raise ValueError(f"not an xs:decimal: {text!r}")
    return check_decimal(decimal.Decimal(t))


def _decimal_from_valid_text(text: str) -> decimal.Decimal:
    """Text the validator accepted as xs:decimal (no exponent syntax), held to the rule.

    Such text is finite with an exponent <= 0; at most 31 characters cannot hold more than
    30 digits after the point or 35 before, so only a negative zero is left to refuse."""
    value = decimal.Decimal(text)
    if len(text) <= 31 and (value or not value.is_signed()):
        return value
    return check_decimal(value)


#: Arrow type of a Decimal field with no value to fit a type to (an empty table, a column of
#: None): decimal256(65, 30), MariaDB's DECIMAL(65, 30), where every accepted value fits.
#: ``entityworks.arrow`` writes values as the narrowest decimal128(p, s) that holds all of
#: a column's values (decimal256 beyond 38 digits) and each value's exponent beside it.
DECIMAL_ARROW_PRECISION = DECIMAL_INTEGER_DIGITS + DECIMAL_FRACTION_DIGITS


def _decimal_from_arrow(value: str | decimal.Decimal) -> decimal.Decimal:
    """An Arrow decimal's value, or the text of a string column (as written before Arrow
    decimals, or by hand). A decimal column's scale beyond 30 places loses its zeros."""
    if isinstance(value, decimal.Decimal):
        if value.is_finite() and -int(value.as_tuple().exponent) > DECIMAL_FRACTION_DIGITS:
            value = values.with_scale(value, DECIMAL_FRACTION_DIGITS)
        return check_decimal(value)
    try:
        number = decimal.Decimal(value)
    except decimal.InvalidOperation:
        raise ValueError(f"not a decimal number: {value!r}") from None
    return check_decimal(number)


_FRACTION = re.compile(r"(\.\d{6})(\d+)")


def _microseconds_only(match: re.Match[str]) -> str:
    # .NET writes up to 7 fractional digits (ticks of 100 ns); Python keeps microseconds:
    # trailing zeros go, a finer value is refused rather than cut.
    if match[2].strip("0"):
        raise ValueError(
            f"{match[0]!r}: finer than a microsecond, which Python's datetime "
            "and timedelta cannot hold"
        )
    return match[1]


def _datetime_from_text(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(_FRACTION.sub(_microseconds_only, text.strip()))


def _naive_datetime_from_text(text: str) -> dt.datetime:
    # the Store's rule: an offset in a naive column is refused, never dropped
    return values.require_naive(_datetime_from_text(text))


_fromisoformat = dt.datetime.fromisoformat


def _naive_datetime_from_valid_text(text: str) -> dt.datetime:
    """Text the validator accepted as xs:dateTime: at most 26 characters hold at most six
    digits of a second (``fromisoformat`` would cut a seventh), so those parse directly."""
    if len(text) <= 26:
        try:
            value = _fromisoformat(text)
        except ValueError:
            pass  # (surrounding whitespace, 24:00:00...): the full rule says
        else:
            if value.tzinfo is None:
                return value
    return _naive_datetime_from_text(text)


def _aware_to_utc(value: dt.datetime) -> dt.datetime:
    # Arrow keeps one time zone per column: the instant goes there, the offset beside it.
    return check_aware_datetime(value).astimezone(dt.UTC)


def _aware_datetime_to_text(value: dt.datetime) -> str:
    return check_aware_datetime(value).isoformat()


def _aware_datetime_from_text(text: str) -> dt.datetime:
    value = _datetime_from_text(text)
    if value.tzinfo is None:
        raise ValueError(f"timezone-aware dateTime expected, got {text!r}")
    return value


def _offset_minutes(value: dt.datetime) -> int | None:
    """Minutes east of UTC; ``None`` for UTC itself (so a UTC value needs no companion)."""
    return value.utcoffset() // _MINUTE or None  # type: ignore[operator]


_OFFSETS: dict[int, dt.timezone] = {}
_MAX_OFFSET_MINUTES = MAX_UTC_OFFSET // _MINUTE


def with_offset(instant: dt.datetime, minutes: Any) -> dt.datetime:
    """The UTC ``instant`` shown at ``minutes`` east of UTC (unchanged for ``None``).

    ``minutes`` is what the offset companion holds: an offset no write stores (not an int,
    beyond ±14:00) or one that moves the instant out of the years 1-9999 raises ValueError
    (a reader names the row and column: another tool changed it)."""
    if minutes is None:
        return instant
    zone = _OFFSETS.get(minutes)
    if zone is None:
        if type(minutes) is not int or abs(minutes) > _MAX_OFFSET_MINUTES:
            raise ValueError(
                f"the UTC offset {minutes!r} (minutes) is no whole number of "
                "minutes within ±14:00 (±840), the offsets entityworks writes"
            )
        zone = _OFFSETS[minutes] = dt.timezone(dt.timedelta(minutes=minutes))
    try:
        return instant.astimezone(zone)
    except OverflowError:
        raise ValueError(
            f"{instant} at the UTC offset {minutes!r} (minutes) falls outside the years 1-9999"
        ) from None


def _date_to_text(value: dt.date) -> str:
    return check_date(value).isoformat()


def _date_from_text(text: str) -> dt.date:
    t = text.strip()
    if "T" in t:  # .NET writes DataColumn DateTime values even for xs:date
        return _datetime_from_text(t).date()
    return dt.date.fromisoformat(t[:10])


def _time_from_text(text: str) -> dt.time:
    t = _FRACTION.sub(_microseconds_only, text.strip())
    if "T" in t:  # .NET keeps xs:time in a local DateTime and writes a full dateTime:
        return _datetime_from_text(t).time()  # its wall-clock time is the value
    return values.require_naive_time(dt.time.fromisoformat(t))  # the Store's rule


_DURATION = re.compile(
    r"(?P<sign>-)?P(?:(?P<days>\d+)D)?(?:T(?:(?P<hours>\d+)H)?(?:(?P<minutes>\d+)M)?"
    r"(?:(?P<seconds>\d+)(?:\.(?P<fraction>\d+))?S)?)?"
)


def _timedelta_to_text(td: dt.timedelta) -> str:
    td = check_timedelta(td)
    sign = "-" if td < dt.timedelta(0) else ""
    td = abs(td)
    hours, rest = divmod(td.seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    frac = f".{td.microseconds:06d}".rstrip("0") if td.microseconds else ""
    return f"{sign}P{td.days}DT{hours}H{minutes}M{seconds}{frac}S"


def _timedelta_from_text(text: str) -> dt.timedelta:
    m = _DURATION.fullmatch(text.strip())
    if not m or text.strip() in ("P", "-P") or text.strip().endswith("T"):
        raise ValueError(f"not an xs:duration of days and time: {text!r}")
    fraction = m["fraction"] or "0"
    if fraction[6:].strip("0"):
        raise ValueError(
            f"{text.strip()!r}: finer than a microsecond, which Python's timedelta cannot hold"
        )
    fraction = fraction[:6].ljust(6, "0")
    td = dt.timedelta(
        days=int(m["days"] or 0),
        hours=int(m["hours"] or 0),
        minutes=int(m["minutes"] or 0),
        seconds=int(m["seconds"] or 0),
        microseconds=int(fraction),
    )
    return -td if m["sign"] else td


def _timedelta_to_micros(td: dt.timedelta) -> int:
    return (td.days * 86_400 + td.seconds) * 1_000_000 + td.microseconds


def _timedelta_to_db(td: dt.timedelta) -> int:
    return _timedelta_to_micros(check_timedelta(td))


def _micros_to_timedelta(us: int) -> dt.timedelta:
    return dt.timedelta(microseconds=us)


def bytes_from_text(text: str) -> bytes:
    """xs:base64Binary text (whitespace allowed) as bytes."""
    return base64.b64decode("".join(text.split()), validate=True)


def bytes_to_text(b: bytes) -> str:
    """bytes as xs:base64Binary text."""
    return base64.b64encode(b).decode("ascii")


def _as_uuid(value: Any) -> uuid.UUID:
    return value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))


def _uuid_to_text(value: uuid.UUID) -> str:
    return str(check_uuid(value))


# -- timezone-aware datetimes --------------------------------------------------------------

#: Marker for timezone-aware datetimes: ``Annotated[datetime, AWARE]``.
AWARE = TypeMarker("AWARE")
AwareDatetime = typing.Annotated[dt.datetime, AWARE]


# -- companions: what a backend's own column type loses ------------------------------------


def _negative_zero(value: float) -> int | None:
    return 1 if value == 0.0 and math.copysign(1.0, value) < 0 else None


def _signed_zero(value: Any, negative: Any) -> Any:
    """``value`` with the sign ``negative`` (the companion) keeps: 1 beside a zero is -0.0,
    NULL leaves the value as it is; anything else is no sign entityworks writes."""
    if negative is None:
        return value
    if negative == 1 and value == 0.0 and type(negative) is not bool:
        return -0.0
    raise ValueError(
        f"the negative-zero mark {negative!r} beside {value!r}: entityworks "
        "writes 1 beside a zero only (NULL otherwise)"
    )


def _with_stored_scale(value: decimal.Decimal, scale: Any) -> decimal.Decimal:
    """``value`` with the digits after the point its scale companion holds (``None``: as it
    is): a scale no write stores (not an int from 0 to 30) or one that would cut a digit the
    column holds raises ValueError."""
    if scale is None:
        return value
    if type(scale) is not int or not 0 <= scale <= DECIMAL_FRACTION_DIGITS:
        raise ValueError(
            f"the scale {scale!r} is no number of digits after the point "
            f"entityworks writes (0 to {DECIMAL_FRACTION_DIGITS})"
        )
    return values.with_scale(value, scale)


def _decimal_as_written(value: decimal.Decimal, text: Any) -> decimal.Decimal:
    """The Decimal of ``text``, the plain decimal text SQLite's column holds (what other
    tools read), when it is the number of ``value``, read from the sortable key beside it
    (what filters, keys and ORDER BY compare); else ValueError: the two columns disagree
    (another tool changed one of them) and no value would be the same for every tool."""
    if type(text) is str and len(text) <= 30 and not text.translate(columns.NOT_PLAIN):
        # plain decimal text (the usual case): its Decimal passes the rule unless it is -0
        try:
            written = decimal.Decimal(text)
        except ArithmeticError:  # "", "-", "1.2.3"
            raise ValueError(f"its text {text!r} is no decimal number") from None
        if written == value:
            return written if written or text[0] != "-" else written.copy_abs()
        raise ValueError(f"its text {text!r} and its key ({value}) are different numbers")
    if type(text) is not str:
        what = "NULL" if text is None else f"{reprlib.repr(text)}, a {type(text).__name__}"
        raise ValueError(
            f"its text is {what} beside the key {value}: entityworks writes the plain decimal text"
        )
    if not _PLAIN_DECIMAL.fullmatch(text):
        raise ValueError(f"its text {reprlib.repr(text)} is no plain decimal number")
    number = decimal.Decimal(text)
    if number.is_zero():
        number = number.copy_abs()  # "-0.000": a zero by every reading
    shown = reprlib.repr(text)
    try:
        written = check_decimal(number)
    except ValueError:  # (what the pattern leaves: too many digits)
        raise ValueError(
            f"its text {shown} has more than {DECIMAL_INTEGER_DIGITS} digits "
            f"before the point or {DECIMAL_FRACTION_DIGITS} after"
        ) from None
    if written != value:
        raise ValueError(f"its text {shown} and its key ({value}) are different numbers")
    return written


#: The decimal text SQLite and every other tool read as that number (ASCII digits only).
_PLAIN_DECIMAL = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)")


_OFFSET = Companion(
    "offset",
    _offset_minutes,
    with_offset,
    "the UTC offset",
    storage.small_integer,
    lambda: pyarrow_module().int16(),
)
_SCALE = Companion(
    "scale",
    lambda d: -d.as_tuple().exponent,
    _with_stored_scale,
    "the exponent",
    arrow=lambda: pyarrow_module().int8(),
    split_column=columns.scale_column,
)
#: SQLite has no decimal type: the column named after the field holds the plain decimal
#: text (``-1.50``, exponent kept), which ``sqlite3``, Datasette and pandas show and SQL's
#: ``sum()`` adds; entityworks compares, keys and orders by the sortable key
#: (``sqltypes.decimal_key``) in ``<name>__key``. Tables written before keep the key under
#: the field's name and the exponent in ``<name>__scale``.
_PLAIN = Companion(
    "text",
    values.decimal_text,
    _decimal_as_written,
    "the exponent",
    storage.text,
    own="key",
    older=(_SCALE,),
    split_column=columns.decimal_text_column,
    join_column=lambda mains, texts: columns.decimals_as_written(mains, texts, _decimal_as_written),
)
_NEGZERO = Companion(
    "negzero",
    _negative_zero,
    _signed_zero,
    "the sign of -0.0",
    split_column=columns.negative_zero_column,
    any_keeps=True,
)


def _aware_companions(target: str) -> tuple[Companion, ...]:
    # TIMESTAMPTZ, DATETIME(6) and Arrow's timestamp keep the instant, never the offset.
    return (_OFFSET,)


def _decimal_companions(target: str) -> tuple[Companion, ...]:
    # PostgreSQL's NUMERIC keeps the scale it is given; DECIMAL(65, 30) pads to 30 places and
    # Arrow's decimal128(p, s) to its column's scale, so the exponent goes beside them.
    # SQLite's sortable key is normalised: the plain text beside it keeps the exponent.
    if target == "sqlite":
        return (_PLAIN,)
    if target == ARROW:
        return (_SCALE,)
    from ..sql.sqltypes import SCALED_DECIMAL_BACKENDS  # a SQL table's: SQLAlchemy is there

    return (_SCALE,) if target in SCALED_DECIMAL_BACKENDS else ()


def _float_companions(target: str) -> tuple[Companion, ...]:
    # MariaDB turns -0.0 into 0 in every DOUBLE expression, SQLite's REAL column when it
    # stores it: the sign goes beside it.
    if target == ARROW:
        return ()
    from ..sql.sqltypes import NEGATIVE_ZERO_BACKENDS  # a SQL table's: SQLAlchemy is there

    return (_NEGZERO,) if target in NEGATIVE_ZERO_BACKENDS else ()


# -- the built-in entries ----------------------------------------------------------------

_INT_ALIASES = (
    "xs:int",
    "xs:short",
    "xs:byte",
    "xs:unsignedByte",
    "xs:unsignedShort",
    "xs:unsignedInt",
    "xs:unsignedLong",
    "xs:integer",
    "xs:nonNegativeInteger",
    "xs:positiveInteger",
    "xs:negativeInteger",
    "xs:nonPositiveInteger",
)
_MSDATA_GUID = (
    "System.Guid, mscorlib, Version=4.0.0.0, Culture=neutral, PublicKeyToken=b77a5c561934e089"
)


def _bool_from_valid_text(text: str) -> bool:
    return text.strip() in ("true", "1")


def _builtin_entries() -> list[tuple[Any, TypeInfo]]:
    pa = pyarrow_module
    return [
        (
            bool,
            TypeInfo(
                "bool",
                bool,
                storage.boolean,
                lambda: pa().bool_(),
                "xs:boolean",
                lambda b: "true" if check_bool(b) else "false",
                _bool_from_text,
                from_valid_text=_bool_from_valid_text,
                from_db=bool,
                plain_text=True,
                check=check_bool,
                native=bool,
                check_column=columns.bool_column,
                to_text_column=columns.bool_texts,
            ),
        ),
        (
            int,
            TypeInfo(
                "int",
                int,
                storage.big_integer,
                lambda: pa().int64(),
                "xs:long",
                str,
                int_from_text,
                autoincrement=True,
                xsd_aliases=_INT_ALIASES,
                from_valid_text=int,
                plain_text=True,
                check=check_int,
                native=int,
                sqlite_typeof="integer",
                check_column=columns.int_column,
                to_text_column=columns.int_texts,
            ),
        ),
        (
            float,
            TypeInfo(
                "float",
                float,
                storage.double,
                lambda: pa().float64(),
                "xs:double",
                _float_to_text,
                _float_from_text,
                xsd_aliases=("xs:float",),
                from_valid_text=float,
                plain_text=True,
                check=check_float,
                native=float,
                sqlite_typeof="real",
                companions=_float_companions,
                check_column=columns.float_column,
                to_text_column=columns.float_texts,
            ),
        ),
        (
            str,
            TypeInfo(
                "str",
                str,
                storage.text,
                lambda: pa().string(),
                "xs:string",
                str,
                str,
                xsd_aliases=("xs:normalizedString", "xs:token", "xs:anyURI"),
                check=check_str,
                native=str,
                sqlite_typeof="text",
                check_column=columns.str_column,
                to_text_column=columns.str_texts,
            ),
        ),
        (
            bytes,
            TypeInfo(
                "bytes",
                bytes,
                storage.binary,
                lambda: pa().binary(),
                "xs:base64Binary",
                bytes_to_text,
                bytes_from_text,
                from_db=bytes,
                plain_text=True,
                check=check_bytes,
                native=bytes,
                check_column=columns.exact_type(bytes),
            ),
        ),
        (
            decimal.Decimal,
            TypeInfo(
                "Decimal",
                decimal.Decimal,
                storage.exact_decimal,
                lambda: pa().decimal256(DECIMAL_ARROW_PRECISION, DECIMAL_FRACTION_DIGITS),
                "xs:decimal",
                _decimal_to_text,
                _decimal_from_text,
                to_db=check_decimal,
                to_arrow=check_decimal,
                from_arrow=_decimal_from_arrow,
                from_valid_text=_decimal_from_valid_text,
                plain_text=True,
                check=check_decimal,
                checked_codecs=True,
                check_column=columns.decimal_column,
                to_text_column=columns.decimal_texts,
                companions=_decimal_companions,
            ),
        ),
        (
            dt.datetime,
            TypeInfo(
                "datetime",
                dt.datetime,
                storage.naive_datetime,
                lambda: pa().timestamp("us"),
                "xs:dateTime",
                lambda v: check_datetime(v).isoformat(),
                _naive_datetime_from_text,
                from_valid_text=_naive_datetime_from_valid_text,
                to_db=check_datetime,
                to_arrow=check_datetime,
                plain_text=True,
                check=check_datetime,
                checked_codecs=True,
                check_column=columns.naive_datetime_column,
                to_text_column=columns.datetime_texts,
                # .NET would otherwise read a naive value as local time and shift it.
                xsd_attributes={"msdata:DateTimeMode": "Unspecified"},
            ),
        ),
        (
            AWARE,
            TypeInfo(
                "AwareDatetime",
                AwareDatetime,
                storage.aware_datetime,
                lambda: pa().timestamp("us", tz="UTC"),
                "xs:dateTime",
                _aware_datetime_to_text,
                _aware_datetime_from_text,
                to_db=check_aware_datetime,
                to_arrow=_aware_to_utc,
                plain_text=True,
                check=check_aware_datetime,
                companions=_aware_companions,
                checked_codecs=True,
                xsd_attributes={"msdata:DateTimeMode": "Utc"},
            ),
        ),
        (
            dt.date,
            TypeInfo(
                "date",
                dt.date,
                storage.date,
                lambda: pa().date32(),
                "xs:date",
                _date_to_text,
                _date_from_text,
                to_db=check_date,
                to_arrow=check_date,
                plain_text=True,
                check=check_date,
                checked_codecs=True,
            ),
        ),
        (
            dt.time,
            TypeInfo(
                "time",
                dt.time,
                storage.time,
                lambda: pa().time64("us"),
                "xs:time",
                lambda v: check_time(v).isoformat(),
                _time_from_text,
                to_db=check_time,
                to_arrow=check_time,
                plain_text=True,
                check=check_time,
                checked_codecs=True,
            ),
        ),
        (
            dt.timedelta,
            TypeInfo(
                "timedelta",
                dt.timedelta,
                storage.big_integer,
                lambda: pa().duration("us"),
                "xs:duration",
                _timedelta_to_text,
                _timedelta_from_text,
                to_db=_timedelta_to_db,
                from_db=_micros_to_timedelta,
                to_arrow=check_timedelta,
                plain_text=True,
                check=check_timedelta,
                checked_codecs=True,
            ),
        ),
        (
            uuid.UUID,
            TypeInfo(
                "UUID",
                uuid.UUID,
                storage.uuid_type,
                lambda: pa().string(),
                "xs:string",
                _uuid_to_text,
                lambda t: uuid.UUID(t.strip()),
                to_db=check_uuid,
                from_db=_as_uuid,
                to_arrow=_uuid_to_text,
                from_arrow=uuid.UUID,
                plain_text=True,
                check=check_uuid,
                checked_codecs=True,
                xsd_attributes={"msdata:DataType": _MSDATA_GUID},
            ),
        ),
    ]


# -- enums: stored as their values --------------------------------------------------------


def _is_enum(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, enum.Enum)


def _enum_info(tp: type[enum.Enum], registry: TypeRegistry) -> TypeInfo:
    """An Enum of int or str values: stored, written and read as its value's type."""
    value_types = {type(m.value) for m in tp}
    if len(value_types) != 1 or next(iter(value_types)) not in (int, str):
        raise UnsupportedTypeError(
            f"Enum {tp.__qualname__} must have values all of one type, int or str "
            f"(found {sorted(t.__name__ for t in value_types)})",
            type_=tp,
        )
    base = registry.lookup(next(iter(value_types)))

    def check(member: Any) -> Any:
        if not isinstance(member, tp):
            raise ValueError(f"{member!r} is not a member of {tp.__qualname__}")
        return member

    def to_value(member: Any) -> Any:
        return check(member).value

    def from_text(text: str) -> enum.Enum:
        return tp(base.from_text(text))

    return TypeInfo(
        tp.__qualname__,
        tp,
        base.sql,
        base.arrow,
        base.xsd,
        lambda m: base.to_text(to_value(m)),
        from_text,
        to_db=to_value,
        from_db=tp,
        to_arrow=to_value,
        from_arrow=tp,
        plain_text=base.plain_text,
        check=check,
        checked_codecs=True,
    )


def register(registry: TypeRegistry) -> None:
    """Add the built-in scalar entries to ``registry``."""
    for key, info in _builtin_entries():
        registry.register(info, key)


def register_enums(registry: TypeRegistry) -> None:
    """Add the factory of Enum subclasses to ``registry``."""
    registry.register_factory(_is_enum, _enum_info)

"""The built-in scalar types' rules: int, float, str, bool, bytes, Decimal, datetime (naive
and aware), date, time, timedelta and UUID.

For each: its value rule (``check_*``), its XML lexical forms and its storage codecs. The
registry entries that name these functions, with the companion columns, are in
:mod:`.entries`; the rules are shared by the JSON columns that hold such values.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import math
import re
import typing
import uuid
from collections.abc import Sequence
from itertools import repeat
from operator import floordiv
from typing import Any

from entityworks.types import cloops

from . import values
from .registry import TypeMarker

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
            f"{DECIMAL_FRACTION_DIGITS} after (DECIMAL(65, 30), some databases' widest)"
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


def bool_from_text(text: str) -> bool:
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


def float_to_text(x: float) -> str:
    # repr is the shortest exact form; only its spellings of NaN and infinity differ in XSD
    text = repr(x if type(x) is float else check_float(x))
    return _FLOAT_SPECIAL.get(text, text)


def float_from_text(text: str) -> float:
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


def decimal_to_text(d: decimal.Decimal) -> str:
    return format(check_decimal(d), "f")


_DECIMAL_TEXT = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)")


def decimal_from_text(text: str) -> decimal.Decimal:
    t = text.strip()
    if not _DECIMAL_TEXT.fullmatch(t):
        raise ValueError(f"not an xs:decimal: {text!r}")
    return check_decimal(decimal.Decimal(t))


def decimal_from_valid_text(text: str) -> decimal.Decimal:
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


def decimal_from_arrow(value: str | decimal.Decimal) -> decimal.Decimal:
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


def naive_datetime_from_text(text: str) -> dt.datetime:
    # the Store's rule: an offset in a naive column is refused, never dropped
    return values.require_naive(_datetime_from_text(text))


_fromisoformat = dt.datetime.fromisoformat


def naive_datetime_from_valid_text(text: str) -> dt.datetime:
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
    return naive_datetime_from_text(text)


def aware_to_utc(value: dt.datetime) -> dt.datetime:
    # Arrow keeps one time zone per column: the instant goes there, the offset beside it.
    return check_aware_datetime(value).astimezone(dt.UTC)


def aware_datetime_to_text(value: dt.datetime) -> str:
    return check_aware_datetime(value).isoformat()


def aware_datetime_from_text(text: str) -> dt.datetime:
    value = _datetime_from_text(text)
    if value.tzinfo is None:
        raise ValueError(f"timezone-aware dateTime expected, got {text!r}")
    return value


def offset_minutes(value: dt.datetime) -> int | None:
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


def date_to_text(value: dt.date) -> str:
    return check_date(value).isoformat()


def date_from_text(text: str) -> dt.date:
    t = text.strip()
    if "T" in t:  # .NET writes DataColumn DateTime values even for xs:date
        return _datetime_from_text(t).date()
    return dt.date.fromisoformat(t[:10])


def time_from_text(text: str) -> dt.time:
    t = _FRACTION.sub(_microseconds_only, text.strip())
    if "T" in t:  # .NET keeps xs:time in a local DateTime and writes a full dateTime:
        return _datetime_from_text(t).time()  # its wall-clock time is the value
    return values.require_naive_time(dt.time.fromisoformat(t))  # the Store's rule


_DURATION = re.compile(
    r"(?P<sign>-)?P(?:(?P<days>\d+)D)?(?:T(?:(?P<hours>\d+)H)?(?:(?P<minutes>\d+)M)?"
    r"(?:(?P<seconds>\d+)(?:\.(?P<fraction>\d+))?S)?)?"
)


def timedelta_to_text(td: dt.timedelta) -> str:
    td = check_timedelta(td)
    sign = "-" if td < dt.timedelta(0) else ""
    td = abs(td)
    hours, rest = divmod(td.seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    frac = f".{td.microseconds:06d}".rstrip("0") if td.microseconds else ""
    return f"{sign}P{td.days}DT{hours}H{minutes}M{seconds}{frac}S"


def timedelta_from_text(text: str) -> dt.timedelta:
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


def timedelta_to_db(td: dt.timedelta) -> int:
    return _timedelta_to_micros(check_timedelta(td))


def micros_to_timedelta(us: int) -> dt.timedelta:
    return dt.timedelta(microseconds=us)


_MICROSECOND = dt.timedelta(microseconds=1)


def timedeltas_to_db(values: Sequence[Any]) -> list[int]:
    """:func:`timedelta_to_db` of each value of a column (non-None): a column of exact
    timedeltas is divided by one microsecond at C speed (exact: a timedelta is a whole
    number of them), then its range checked; anything else value by value."""
    if cloops.kinds(values, dt.timedelta)[0] == len(values):
        micros = list(map(floordiv, values, repeat(_MICROSECOND)))
        if not micros or (INT64_MIN <= min(micros) and max(micros) <= INT64_MAX):
            return micros
    return list(map(timedelta_to_db, values))


def micros_to_timedeltas(values: Sequence[Any]) -> list[dt.timedelta]:
    """:func:`micros_to_timedelta` of each stored value of a column (non-None): a column
    of 64-bit ints in one C loop (``cloops.timedeltas``), anything else value by value."""
    made = cloops.timedeltas(values)
    if made is not None:
        return made
    return list(map(dt.timedelta, repeat(0), repeat(0), values))


def bytes_from_text(text: str) -> bytes:
    """xs:base64Binary text (whitespace allowed) as bytes."""
    return base64.b64decode("".join(text.split()), validate=True)


def bytes_to_text(b: bytes) -> str:
    """bytes as xs:base64Binary text."""
    return base64.b64encode(b).decode("ascii")


def as_uuid(value: Any) -> uuid.UUID:
    return value if isinstance(value, uuid.UUID) else uuid.UUID(str(value))


def as_uuids(values: Sequence[Any]) -> list[uuid.UUID]:
    """:func:`as_uuid` of each value of a column (non-None): a column of UUIDs (what
    SQLite's and PostgreSQL's reads give) as it is."""
    if cloops.kinds(values, uuid.UUID)[0] == len(values):
        return list(values)
    return list(map(as_uuid, values))


def uuid_to_text(value: uuid.UUID) -> str:
    return str(check_uuid(value))


# -- timezone-aware datetimes --------------------------------------------------------------

#: Marker for timezone-aware datetimes: ``Annotated[datetime, AWARE]``.
AWARE = TypeMarker("AWARE")
AwareDatetime = typing.Annotated[dt.datetime, AWARE]

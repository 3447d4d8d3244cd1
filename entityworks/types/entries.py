"""The built-in scalar types' registry entries: for int, float, str, bool, bytes, Decimal,
datetime (naive and aware), date, time, timedelta and UUID, the entry that names its value
rule, XML lexical forms and storage codecs (all in :mod:`.scalars`), the companion columns
that keep what a backend loses, and the factory of Enum entries. :func:`register` adds them
to a registry.
"""

from __future__ import annotations

import datetime as dt
import decimal
import enum
import math
import re
import reprlib
import uuid
from typing import Any

# the C module by its package (import-linter sees no module it cannot read as source)
from entityworks.types import cloops

from ..errors import UnsupportedTypeError
from . import columns, storage, values
from .registry import Companion, Target, TypeInfo, TypeRegistry, pyarrow_module
from .scalars import (
    AWARE,
    DECIMAL_FRACTION_DIGITS,
    DECIMAL_INTEGER_DIGITS,
    AwareDatetime,
    check_aware_datetime,
    check_bool,
    check_bytes,
    check_date,
    check_datetime,
    check_decimal,
    check_float,
    check_int,
    check_str,
    check_time,
    check_timedelta,
    check_uuid,
    offset_minutes,
    with_offset,
)

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
    offset_minutes,
    with_offset,
    "the UTC offset",
    storage.small_integer,
    lambda: pyarrow_module().int16(),
    split_column=columns.offset_minutes_column,
    join_column=lambda instants, minutes: columns.with_offsets(instants, minutes, with_offset),
    join_raw=columns.instants_at_offsets,
)
_SCALE = Companion(
    "scale",
    lambda d: -d.as_tuple().exponent,
    _with_stored_scale,
    "the exponent",
    arrow=lambda: pyarrow_module().int8(),
    split_column=columns.scale_column,
    join_column=lambda mains, scales: columns.decimals_with_scales(
        mains, scales, _with_stored_scale
    ),
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
    join_raw=cloops.as_written,
    split_raw=cloops.keys_and_texts,
)
_NEGZERO = Companion(
    "negzero",
    _negative_zero,
    _signed_zero,
    "the sign of -0.0",
    split_column=columns.negative_zero_column,
    join_column=lambda values, marks: columns.signed_zeros(values, marks, _signed_zero),
    any_keeps=True,
)


def _aware_companions(target: Target) -> tuple[Companion, ...]:
    # A time zone column type, a UTC one and Arrow's timestamp keep the instant, never the
    # offset.
    return (_OFFSET,)


def _decimal_companions(target: Target) -> tuple[Companion, ...]:
    # A NUMERIC that keeps the scale it is given needs nothing; one that pads to its scale
    # (DECIMAL(65, 30), Arrow's decimal256(p, s)) gets the exponent beside it; a sortable key
    # is normalised: the plain text beside it keeps the exponent.
    if target.decimal_as_key:
        return (_PLAIN,)
    return () if target.keeps_decimal_scale else (_SCALE,)


def _float_companions(target: Target) -> tuple[Companion, ...]:
    # A float column that turns -0.0 into 0 (in every DOUBLE expression, or when a REAL
    # column stores it) gets the sign beside it.
    return () if target.keeps_negative_zero else (_NEGZERO,)


# -- the built-in entries ----------------------------------------------------------------

#: Each built-in scalar: its key, its name (which is its codec family:
#: :meth:`TypeRegistry.codecs` gives what it becomes in SQL, Arrow and XML, as each format's
#: package says) and what it is: its value rule and the facts bulk paths use.
_SCALARS: list[tuple[Any, str, dict[str, Any]]] = [
    (bool, "bool", {"check": check_bool, "native": bool, "check_column": columns.bool_column}),
    (
        int,
        "int",
        {
            "check": check_int,
            "native": int,
            "check_column": columns.int_column,
            "autoincrement": True,
        },
    ),
    (
        float,
        "float",
        {
            "check": check_float,
            "native": float,
            "check_column": columns.float_column,
            "companions": _float_companions,
        },
    ),
    (str, "str", {"check": check_str, "native": str, "check_column": columns.str_column}),
    (
        bytes,
        "bytes",
        {"check": check_bytes, "native": bytes, "check_column": columns.exact_type(bytes)},
    ),
    (
        decimal.Decimal,
        "Decimal",
        {
            "check": check_decimal,
            "checked_codecs": True,
            "check_column": columns.decimal_column,
            "companions": _decimal_companions,
        },
    ),
    (
        dt.datetime,
        "datetime",
        {
            "check": check_datetime,
            "checked_codecs": True,
            "check_column": columns.naive_datetime_column,
        },
    ),
    (
        AWARE,
        "AwareDatetime",
        {
            "check": check_aware_datetime,
            "checked_codecs": True,
            "companions": _aware_companions,
            "check_column": columns.aware_datetime_column,
        },
    ),
    (
        dt.date,
        "date",
        {"check": check_date, "checked_codecs": True, "check_column": columns.date_column},
    ),
    (
        dt.time,
        "time",
        {"check": check_time, "checked_codecs": True, "check_column": columns.time_column},
    ),
    (dt.timedelta, "timedelta", {"check": check_timedelta, "checked_codecs": True}),
    (
        uuid.UUID,
        "UUID",
        {"check": check_uuid, "checked_codecs": True, "check_column": columns.uuid_column},
    ),
]

#: The Python type each scalar's entry names (``AWARE`` is a marker for ``datetime``).
_PYTHON_TYPES: dict[str, Any] = {"AwareDatetime": AwareDatetime}


def _builtin_entries(registry: TypeRegistry) -> list[tuple[Any, TypeInfo]]:
    """The built-in scalars' entries, of what each is and of the records ``registry``'s
    codec makers give for its name."""
    return [
        (
            key,
            TypeInfo(name, _PYTHON_TYPES.get(name, key), **registry.codecs(name), **facts),
        )
        for key, name, facts in _SCALARS
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

    return TypeInfo(
        tp.__qualname__,
        tp,
        **registry.codecs("enum", enum=tp, base=base, to_value=to_value),
        check=check,
        checked_codecs=True,
    )


def register(registry: TypeRegistry) -> None:
    """Add the built-in scalar entries to ``registry``."""
    for key, info in _builtin_entries(registry):
        registry.register(info, key)


def register_enums(registry: TypeRegistry) -> None:
    """Add the factory of Enum subclasses to ``registry``."""
    registry.register_factory(_is_enum, _enum_info)

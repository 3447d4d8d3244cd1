"""What the built-in types become in SQL: the SQL layer's codec makers, one per codec family
(:meth:`~entityworks.registry.TypeRegistry.codecs`), registered through the
``register_codecs`` hook (:mod:`entityworks.hooks`).

A column type here is a :class:`~entityworks.types.storage.StorageType`, a name that
:mod:`.sqltypes` resolves when a table is built, so that filling a registry and encoding
rows never import SQLAlchemy. Each backend then decides how a column of that type is bound
and read (:mod:`.backends`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import attrgetter
from typing import Any

from ..hooks import hookimpl
from ..types import storage
from ..types.codecs import SqlCodec
from ..types.columns import count_type
from ..types.registry import TypeInfo, TypeRegistry
from ..types.scalars import (
    as_uuid,
    as_uuids,
    check_aware_datetime,
    check_date,
    check_datetime,
    check_decimal,
    check_time,
    check_uuid,
    micros_to_timedelta,
    micros_to_timedeltas,
    timedelta_to_db,
    timedeltas_to_db,
)


def _as_given(kind: type) -> Callable[[Sequence[Any]], list[Any]]:
    """``kind`` of each stored value of a column (non-None): a column whose values are all
    exactly ``kind`` already (psycopg's booleans, every driver's bytes) as it is, no call
    per value."""

    def column(values: Sequence[Any]) -> list[Any]:
        if count_type(values, kind) == len(values):
            return list(values)
        return list(map(kind, values))

    # a reader may build objects straight from rows whose values are all this kind already
    # (Readers.direct)
    column.given = kind  # type: ignore[attr-defined]
    return column


_bools = _as_given(bool)
_bytes = _as_given(bytes)

#: The built-in scalars' records, by codec family (the entry's name).
SCALARS: dict[str, SqlCodec] = {
    "bool": SqlCodec(column_type=storage.boolean, decode=bool, decode_many=_bools),
    "int": SqlCodec(column_type=storage.big_integer),
    "float": SqlCodec(column_type=storage.double),
    "str": SqlCodec(column_type=storage.text),
    "bytes": SqlCodec(column_type=storage.binary, decode=bytes, decode_many=_bytes),
    "Decimal": SqlCodec(column_type=storage.exact_decimal, encode=check_decimal),
    "datetime": SqlCodec(column_type=storage.naive_datetime, encode=check_datetime),
    "AwareDatetime": SqlCodec(column_type=storage.aware_datetime, encode=check_aware_datetime),
    "date": SqlCodec(column_type=storage.date, encode=check_date),
    "time": SqlCodec(column_type=storage.time, encode=check_time),
    # microseconds in a BIGINT: every backend compares and sums them exactly
    "timedelta": SqlCodec(
        column_type=storage.big_integer,
        encode=timedelta_to_db,
        decode=micros_to_timedelta,
        encode_many=timedeltas_to_db,
        decode_many=micros_to_timedeltas,
    ),
    "UUID": SqlCodec(
        column_type=storage.uuid_type, encode=check_uuid, decode=as_uuid, decode_many=as_uuids
    ),
}


def enum_codec(*, enum: type, base: TypeInfo, to_value: Callable[[Any], Any]) -> SqlCodec:
    """An Enum stored as its value, in its value type's column; a whole column at a time
    where each value is a member (writing) or a member's value (reading)."""
    members = {m.value: m for m in enum}  # type: ignore[attr-defined]
    member = members.__getitem__

    def values_of(column: Sequence[Any]) -> list[Any]:
        if count_type(column, enum) == len(column):
            return list(map(_VALUE, column))
        return list(map(to_value, column))

    def members_of(column: Sequence[Any]) -> list[Any]:
        try:
            return list(map(member, column))
        except (KeyError, TypeError):  # another value (an Enum's _missing_ may take it)
            return list(map(enum, column))

    return SqlCodec(
        column_type=base.sql_codec.column_type,
        encode=to_value,
        decode=enum,
        encode_many=values_of,
        decode_many=members_of,
    )


#: A member's value (``Enum._value_``, the attribute ``.value`` reads).
_VALUE = attrgetter("_value_")


def json_codec(*, dumps: Callable[[Any], str], loads: Callable[[str], Any]) -> SqlCodec:
    """A JSON container or nested dataclass stored as its JSON text."""
    return SqlCodec(column_type=storage.json_text, encode=dumps, decode=loads)


def npy_codec(*, to_bytes: Callable[[Any], bytes], from_bytes: Callable[[bytes], Any]) -> SqlCodec:
    """A NumPy array stored as its ``.npy`` bytes."""
    return SqlCodec(column_type=storage.binary, encode=to_bytes, decode=from_bytes)


@hookimpl(tryfirst=True)
def register_codecs(registry: TypeRegistry) -> None:
    """The SQL records of the built-in codec families."""
    registry.register_codec_makers(
        SqlCodec, SCALARS, {"enum": enum_codec, "json": json_codec, "npy": npy_codec}
    )


__all__ = ["SCALARS", "enum_codec", "json_codec", "npy_codec", "register_codecs"]

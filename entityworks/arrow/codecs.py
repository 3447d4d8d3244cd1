"""What the built-in types become in Arrow: the Arrow layer's codec makers, one per codec
family (:meth:`~entityworks.registry.TypeRegistry.codecs`), registered through the
``register_codecs`` hook (:mod:`entityworks.hooks`).

An Arrow type here is a function giving it: pyarrow is imported when a schema is built,
never when a registry is filled. What Arrow's type loses of a value (an aware datetime's
offset, a Decimal's exponent) its companions keep (:mod:`.columns`).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from ..hooks import hookimpl
from ..types.codecs import ArrowCodec
from ..types.registry import TypeInfo, TypeRegistry, pyarrow_module
from ..types.scalars import (
    DECIMAL_ARROW_PRECISION,
    DECIMAL_FRACTION_DIGITS,
    aware_to_utc,
    check_date,
    check_datetime,
    check_decimal,
    check_time,
    check_timedelta,
    decimal_from_arrow,
    uuid_to_text,
)

pa = pyarrow_module

#: The built-in scalars' records, by codec family (the entry's name).
SCALARS: dict[str, ArrowCodec] = {
    "bool": ArrowCodec(arrow_type=lambda: pa().bool_()),
    "int": ArrowCodec(arrow_type=lambda: pa().int64()),
    "float": ArrowCodec(arrow_type=lambda: pa().float64()),
    "str": ArrowCodec(arrow_type=lambda: pa().string()),
    "bytes": ArrowCodec(arrow_type=lambda: pa().binary()),
    # the widest decimal a value may need; a column is written at its values' own size
    "Decimal": ArrowCodec(
        arrow_type=lambda: pa().decimal256(DECIMAL_ARROW_PRECISION, DECIMAL_FRACTION_DIGITS),
        encode=check_decimal,
        decode=decimal_from_arrow,
    ),
    "datetime": ArrowCodec(arrow_type=lambda: pa().timestamp("us"), encode=check_datetime),
    "AwareDatetime": ArrowCodec(
        arrow_type=lambda: pa().timestamp("us", tz="UTC"), encode=aware_to_utc
    ),
    "date": ArrowCodec(arrow_type=lambda: pa().date32(), encode=check_date),
    "time": ArrowCodec(arrow_type=lambda: pa().time64("us"), encode=check_time),
    "timedelta": ArrowCodec(arrow_type=lambda: pa().duration("us"), encode=check_timedelta),
    "UUID": ArrowCodec(arrow_type=lambda: pa().string(), encode=uuid_to_text, decode=uuid.UUID),
}


def enum_codec(*, enum: type, base: TypeInfo, to_value: Callable[[Any], Any]) -> ArrowCodec:
    """An Enum as its value, in its value type's Arrow type."""
    return ArrowCodec(arrow_type=base.arrow_codec.arrow_type, encode=to_value, decode=enum)


def json_codec(*, dumps: Callable[[Any], str], loads: Callable[[str], Any]) -> ArrowCodec:
    """A JSON container or nested dataclass as its JSON text."""
    return ArrowCodec(arrow_type=lambda: pa().string(), encode=dumps, decode=loads)


def npy_codec(
    *, to_bytes: Callable[[Any], bytes], from_bytes: Callable[[bytes], Any]
) -> ArrowCodec:
    """A NumPy array as its ``.npy`` bytes."""
    return ArrowCodec(arrow_type=lambda: pa().binary(), encode=to_bytes, decode=from_bytes)


@hookimpl(tryfirst=True)
def register_codecs(registry: TypeRegistry) -> None:
    """The Arrow records of the built-in codec families."""
    registry.register_codec_makers(
        ArrowCodec, SCALARS, {"enum": enum_codec, "json": json_codec, "npy": npy_codec}
    )


__all__ = ["SCALARS", "enum_codec", "json_codec", "npy_codec", "register_codecs"]

"""What the built-in types become in XML: the XML layer's codec makers, one per codec family
(:meth:`~entityworks.registry.TypeRegistry.codecs`), registered through the
``register_codecs`` hook (:mod:`entityworks.hooks`).

Each record names the XSD type of the type's elements, the other XSD types .NET writes for
it (read back as this type), the ``msdata`` attributes .NET's ``DataSet`` needs to read a
value as entityworks wrote it, and the lexical forms (XSD 1.0 / .NET ``XmlConvert``; the
text functions live beside the value rules in :mod:`entityworks.types.scalars`, which the
command line and JSON columns share).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from ..hooks import hookimpl
from ..types import columns
from ..types.codecs import XmlCodec
from ..types.registry import TypeInfo, TypeRegistry
from ..types.scalars import (
    aware_datetime_from_text,
    aware_datetime_to_text,
    bool_from_text,
    bytes_from_text,
    bytes_to_text,
    check_bool,
    check_datetime,
    check_time,
    date_from_text,
    date_to_text,
    decimal_from_text,
    decimal_from_valid_text,
    decimal_to_text,
    float_from_text,
    float_to_text,
    int_from_text,
    naive_datetime_from_text,
    naive_datetime_from_valid_text,
    time_from_text,
    timedelta_from_text,
    timedelta_to_text,
    uuid_to_text,
)

#: The integer XSD types .NET writes (``Int32`` is ``xs:int``...), all read as ``int``.
INT_ALIASES = (
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
#: .NET's name of its Guid type, which a ``DataSet`` schema gives an ``xs:string`` column.
MSDATA_GUID = (
    "System.Guid, mscorlib, Version=4.0.0.0, Culture=neutral, PublicKeyToken=b77a5c561934e089"
)


def _bool_from_valid_text(text: str) -> bool:
    return text.strip() in ("true", "1")


def _uuid_from_text(text: str) -> uuid.UUID:
    return uuid.UUID(text.strip())


#: The built-in scalars' records, by codec family (the entry's name).
SCALARS: dict[str, XmlCodec] = {
    "bool": XmlCodec(
        xsd_type="xs:boolean",
        to_text=lambda b: "true" if check_bool(b) else "false",
        from_text=bool_from_text,
        from_valid_text=_bool_from_valid_text,
        plain_text=True,
        to_text_column=columns.bool_texts,
    ),
    "int": XmlCodec(
        xsd_type="xs:long",
        to_text=str,
        from_text=int_from_text,
        from_valid_text=int,
        plain_text=True,
        aliases=INT_ALIASES,
        to_text_column=columns.int_texts,
    ),
    "float": XmlCodec(
        xsd_type="xs:double",
        to_text=float_to_text,
        from_text=float_from_text,
        from_valid_text=float,
        plain_text=True,
        aliases=("xs:float",),
        to_text_column=columns.float_texts,
    ),
    "str": XmlCodec(
        xsd_type="xs:string",
        to_text=str,
        from_text=str,
        aliases=("xs:normalizedString", "xs:token", "xs:anyURI"),
        to_text_column=columns.str_texts,
    ),
    "bytes": XmlCodec(
        xsd_type="xs:base64Binary",
        to_text=bytes_to_text,
        from_text=bytes_from_text,
        plain_text=True,
    ),
    "Decimal": XmlCodec(
        xsd_type="xs:decimal",
        to_text=decimal_to_text,
        from_text=decimal_from_text,
        from_valid_text=decimal_from_valid_text,
        plain_text=True,
        to_text_column=columns.decimal_texts,
    ),
    "datetime": XmlCodec(
        xsd_type="xs:dateTime",
        to_text=lambda v: check_datetime(v).isoformat(),
        from_text=naive_datetime_from_text,
        from_valid_text=naive_datetime_from_valid_text,
        plain_text=True,
        # .NET would otherwise read a naive value as local time and shift it.
        attributes={"msdata:DateTimeMode": "Unspecified"},
        to_text_column=columns.datetime_texts,
    ),
    "AwareDatetime": XmlCodec(
        xsd_type="xs:dateTime",
        to_text=aware_datetime_to_text,
        from_text=aware_datetime_from_text,
        plain_text=True,
        attributes={"msdata:DateTimeMode": "Utc"},
    ),
    "date": XmlCodec(
        xsd_type="xs:date", to_text=date_to_text, from_text=date_from_text, plain_text=True
    ),
    "time": XmlCodec(
        xsd_type="xs:time",
        to_text=lambda v: check_time(v).isoformat(),
        from_text=time_from_text,
        plain_text=True,
    ),
    "timedelta": XmlCodec(
        xsd_type="xs:duration",
        to_text=timedelta_to_text,
        from_text=timedelta_from_text,
        plain_text=True,
    ),
    "UUID": XmlCodec(
        xsd_type="xs:string",
        to_text=uuid_to_text,
        from_text=_uuid_from_text,
        plain_text=True,
        attributes={"msdata:DataType": MSDATA_GUID},
    ),
}


def enum_codec(*, enum: type, base: TypeInfo, to_value: Callable[[Any], Any]) -> XmlCodec:
    """An Enum as its value's lexical form, of its value type's XSD type."""
    base_codec = base.xml_codec

    def to_text(member: Any) -> str:
        return base_codec.to_text(to_value(member))

    def from_text(text: str) -> Any:
        return enum(base_codec.from_text(text))

    return XmlCodec(
        xsd_type=base_codec.xsd_type,
        to_text=to_text,
        from_text=from_text,
        plain_text=base_codec.plain_text,
    )


def json_codec(*, dumps: Callable[[Any], str], loads: Callable[[str], Any]) -> XmlCodec:
    """A JSON container or nested dataclass as its JSON text, an ``xs:string``."""
    return XmlCodec(xsd_type="xs:string", to_text=dumps, from_text=loads)


def npy_codec(*, to_bytes: Callable[[Any], bytes], from_bytes: Callable[[bytes], Any]) -> XmlCodec:
    """A NumPy array as the base64 of its ``.npy`` bytes."""

    def to_text(array: Any) -> str:
        return bytes_to_text(to_bytes(array))

    def from_text(text: str) -> Any:
        return from_bytes(bytes_from_text(text))

    return XmlCodec(
        xsd_type="xs:base64Binary", to_text=to_text, from_text=from_text, plain_text=True
    )


@hookimpl(tryfirst=True)
def register_codecs(registry: TypeRegistry) -> None:
    """The XML records of the built-in codec families."""
    registry.register_codec_makers(
        XmlCodec, SCALARS, {"enum": enum_codec, "json": json_codec, "npy": npy_codec}
    )


__all__ = [
    "INT_ALIASES",
    "MSDATA_GUID",
    "SCALARS",
    "enum_codec",
    "json_codec",
    "npy_codec",
    "register_codecs",
]

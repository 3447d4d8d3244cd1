"""The type registry's public face: ``entityworks.registry``.

It re-exports the type layer (:mod:`entityworks.types`: the registry's machinery, the
built-in entries and their value rules) and speaks for the default registry, as
``random``'s functions do for its Random: ``registry.lookup(int)`` or
``registry.register(info)`` act on :data:`registry`, the default :class:`TypeRegistry`.
``import entityworks.registry as r`` and ``from entityworks import registry`` give this
module. It holds nothing else, so the parts can change without moving a public name.
"""

from __future__ import annotations

import sys
import types
import typing
from collections.abc import Callable
from typing import Any

from .types.arrays import check_ndarray, ndarray_from_bytes, ndarray_to_bytes
from .types.codecs import ArrowCodec, Codec, SqlCodec, XmlCodec
from .types.default import fill_default, registry
from .types.encoding import encode_error
from .types.json import NestedCodec, looking_up
from .types.registry import (
    ARROW,
    COMPANION_SEPARATOR,
    ClassByName,
    CodecMaker,
    CodecRecords,
    Companion,
    Factory,
    Target,
    TypeInfo,
    TypeMarker,
    TypeRegistry,
    runtime_base,
    unwrap_optional,
)
from .types.scalars import (
    AWARE,
    DECIMAL_ARROW_PRECISION,
    DECIMAL_FRACTION_DIGITS,
    DECIMAL_INTEGER_DIGITS,
    INT64_MAX,
    INT64_MIN,
    MAX_UTC_OFFSET,
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
    format_offset,
    with_offset,
)


def the_registry(given: TypeRegistry | types.ModuleType) -> TypeRegistry:
    """``given``, or the default registry for this module given in its place (code written
    when ``entityworks.registry`` was the default registry itself passes the module)."""
    if given is sys.modules[__name__]:
        return registry
    return given  # type: ignore[return-value]


@typing.overload
def register_factory(
    predicate: Callable[[Any], bool], factory: None = None
) -> Callable[[Factory], Factory]: ...
@typing.overload
def register_factory(predicate: Callable[[Any], bool], factory: Factory) -> Factory: ...
def register_factory(
    predicate: Callable[[Any], bool], factory: Factory | None = None
) -> Callable[[Factory], Factory] | Factory:
    """:meth:`TypeRegistry.register_factory` on the default registry."""
    return registry.register_factory(predicate, factory)


def lookup(tp: Any) -> TypeInfo:
    """:meth:`TypeRegistry.lookup` on the default registry."""
    return registry.lookup(tp)


def for_xsd(xsd_type: str, attributes: dict[str, str] | None = None) -> TypeInfo:
    """:meth:`TypeRegistry.for_xsd` on the default registry."""
    return registry.for_xsd(xsd_type, attributes)


def companion_types(target: str) -> dict[str, Any]:
    """:meth:`TypeRegistry.companion_types` on the default registry (``target``: a
    :class:`Target`, or the name of one the SQL layer declared, such as ``"mysql"``)."""
    return registry.companion_types(target)


def supports(tp: Any) -> bool:
    """:meth:`TypeRegistry.supports` on the default registry."""
    return registry.supports(tp)


def copy() -> TypeRegistry:
    """:meth:`TypeRegistry.copy` of the default registry."""
    return registry.copy()


def register_type(info: TypeInfo, key: Any = None) -> TypeInfo:
    """Register a user type in the default registry: :meth:`TypeRegistry.register` on it
    (``key``, default ``info.python_type``, selects the entry; any entry it had is replaced).
    For a package's types, a plugin's ``register_types`` hook (:mod:`entityworks.hooks`)
    fills every registry instead."""
    return registry.register(info, key)


#: An alias of :func:`register_type` (the name of :meth:`TypeRegistry.register`, as the
#: other functions here bear their method's name).
register = register_type

# The default registry is filled last, through the plugins' hooks (entityworks.hooks): a
# plugin module loaded meanwhile may import this module and finds every name bound.
fill_default()


__all__ = [
    "ARROW",
    "AWARE",
    "AwareDatetime",
    "COMPANION_SEPARATOR",
    "ArrowCodec",
    "Codec",
    "CodecMaker",
    "CodecRecords",
    "Companion",
    "DECIMAL_ARROW_PRECISION",
    "DECIMAL_FRACTION_DIGITS",
    "DECIMAL_INTEGER_DIGITS",
    "ClassByName",
    "Factory",
    "INT64_MAX",
    "INT64_MIN",
    "MAX_UTC_OFFSET",
    "NestedCodec",
    "SqlCodec",
    "Target",
    "TypeInfo",
    "TypeMarker",
    "TypeRegistry",
    "XmlCodec",
    "check_aware_datetime",
    "check_bool",
    "check_bytes",
    "check_date",
    "check_datetime",
    "check_decimal",
    "check_float",
    "check_int",
    "check_ndarray",
    "check_str",
    "check_time",
    "check_timedelta",
    "check_uuid",
    "companion_types",
    "copy",
    "encode_error",
    "for_xsd",
    "format_offset",
    "looking_up",
    "lookup",
    "ndarray_from_bytes",
    "ndarray_to_bytes",
    "register",
    "register_factory",
    "register_type",
    "registry",
    "runtime_base",
    "supports",
    "the_registry",
    "unwrap_optional",
    "with_offset",
]

"""JSON columns: list, dict and tuple fields, and dataclasses nested in one column.

A list / dict / tuple field is stored as JSON text. JSON knows str, int, float, bool, null,
arrays and string-keyed objects, nothing else: an unannotated position (``dict``,
``dict[str, Any]``) accepts exactly those, so that what is read back has the types that
were written. An annotation says more, and decoding rebuilds it: ``dict[int, str]`` keys,
``tuple[int, ...]`` and ``list[tuple[int, int]]`` tuples, and any registered type inside
(``list[Decimal]``, ``dict[str, datetime]``) as its XML text form. A nested dataclass is a
JSON object whose fields go through their own entries (:class:`NestedCodec`).

Separate from the scalars because these entries are built per annotation, from the entries
of what they hold, by factories; :func:`register` adds the factories to a registry.
"""

from __future__ import annotations

import dataclasses
import json
import threading
import typing
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from itertools import chain, repeat
from operator import countOf
from typing import Any, get_args, get_origin

from ..errors import SchemaError, UnsupportedTypeError
from .columns import count_type
from .construct import check_constructible, instance_builder
from .registry import TypeInfo, TypeRegistry, type_name, unwrap_optional
from .scalars import check_bool, check_float, check_int, check_str, int_from_text, refused

_JSON_ORIGINS = (list, dict, tuple)
_JSON_SCALARS: dict[Any, Callable[[Any], Any]] = {
    str: check_str,
    int: check_int,
    float: check_float,
    bool: check_bool,
}
_MAX_JSON_DEPTH = 200


def _is_json(tp: Any) -> bool:
    origin = get_origin(tp) or tp
    if origin not in _JSON_ORIGINS:
        return False
    # list[SomeDataclass] is a child table, decided by the schema before it gets here.
    return not any(dataclasses.is_dataclass(a) for a in get_args(tp))


#: ``json.dumps`` with the options of :func:`json_text`, its encoder made once (``dumps``
#: with options other than the defaults makes one per call).
_TEXT = json.JSONEncoder(ensure_ascii=False, allow_nan=True, separators=(",", ":")).encode
_BRACKETED = "[{}]".format


def json_text(value: Any) -> str:
    """``value`` as compact JSON text, the form every JSON column stores."""
    return _TEXT(value)


def _untyped(value: Any, depth: int = 0) -> Any:
    """Refuse what JSON would hand back as another type (a tuple, an int key, an IntEnum)."""
    kind = type(value)
    if kind is str or kind is int or kind is float or kind is bool or value is None:
        return value
    if depth > _MAX_JSON_DEPTH:
        raise ValueError(f"JSON nested deeper than {_MAX_JSON_DEPTH} levels")
    if kind is list:
        for item in value:
            _untyped(item, depth + 1)
        return value
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str:
                _str_key(key)
            _untyped(item, depth + 1)
        return value
    if kind is tuple:
        raise ValueError(
            "a tuple inside an untyped JSON value would come back a list; use a "
            "list, or annotate it (tuple[int, ...], list[tuple[int, int]])"
        )
    raise ValueError(
        f"a {kind.__qualname__} inside an untyped JSON value would not come back "
        "as itself; JSON holds str, int, float, bool, None, list and dict: "
        "annotate the field's type"
    )


def _str_key(key: Any) -> str:
    if type(key) is str:
        return key
    if isinstance(key, str):
        return check_str(key)
    raise ValueError(
        f"dict key {key!r} is a {type(key).__qualname__}; JSON keys are text, so "
        "it would come back a str: annotate the keys (dict[int, ...]) or use str"
    )


def _int_key(key: Any) -> str:
    try:
        return str(check_int(key))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"dict key {key!r}: {exc}") from None


class _JsonShape:
    """Encoder/decoder for one annotation inside a JSON value (the whole value included)."""

    def __init__(self, tp: Any, registry: TypeRegistry) -> None:
        tp, self.nullable = unwrap_optional(tp) if tp is not Any else (tp, True)
        origin = get_origin(tp) or tp
        args = get_args(tp)
        self.kind = "any"
        self.items: list[_JsonShape] = []
        self.scalar: Callable[[Any], Any] | None = None
        if tp is Any or tp is object:
            return
        if origin is list or origin is tuple:
            self.kind = origin.__name__
            if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
                args = (args[0],)
            elif origin is tuple and args:
                self.kind = "fixed"
            self.items = [_JsonShape(a, registry) for a in (args or (Any,))]
        elif origin is dict:
            key, value = args or (str, Any)
            if key not in (str, int):
                raise UnsupportedTypeError(
                    f"dict keys in a JSON column must be str or int, not {type_name(key)}", type_=tp
                )
            self.kind = "dict"
            self.key = key
            self.items = [_JsonShape(value, registry)]
        elif tp in _JSON_SCALARS:
            self.kind = "scalar"
            self.type = tp
            self.scalar = _JSON_SCALARS[tp]
        else:
            info = registry.lookup(tp)
            if get_origin(info.python_type) in _JSON_ORIGINS:  # pragma: no cover - guarded
                raise UnsupportedTypeError(f"unsupported JSON element {tp!r}", type_=tp)
            self.kind = "text"
            self.info = info

    def encode(self, value: Any, depth: int = 0) -> Any:
        """``value`` checked and turned into what ``json.dumps`` writes."""
        if value is None:
            if self.nullable:
                return None
            raise ValueError("None where the annotation does not allow it")
        kind = self.kind
        if kind == "scalar":
            return self.scalar(value)  # type: ignore[misc]
        if kind == "any":
            return _untyped(value, depth)
        if depth > _MAX_JSON_DEPTH:
            raise ValueError(f"JSON nested deeper than {_MAX_JSON_DEPTH} levels")
        if kind == "text":
            return self.info.xml_codec.to_text(self.info.checked(value))
        if kind == "dict":
            if not isinstance(value, dict):
                raise refused("a dict", value)
            item = self.items[0]
            key = _str_key if self.key is str else _int_key
            return {key(k): item.encode(v, depth + 1) for k, v in value.items()}
        expected = list if kind == "list" else tuple
        if not isinstance(value, expected):
            raise refused(f"a {expected.__name__}", value)
        if kind == "fixed":
            if len(value) != len(self.items):
                raise ValueError(f"expected {len(self.items)} items, got {len(value)}")
            return [s.encode(v, depth + 1) for s, v in zip(self.items, value, strict=True)]
        item = self.items[0]
        if (
            item.kind == "scalar"
            and not item.nullable
            and count_type(value, item.type) == len(value)
        ):
            return value  # only exact ints / floats / str / bools: nothing to convert
        return [item.encode(v, depth + 1) for v in value]

    def decode(self, data: Any) -> Any:
        """What ``json.loads`` read -> the annotated Python value (checked again)."""
        if data is None:
            if self.nullable:
                return None
            raise ValueError("null where the annotation does not allow it")
        kind = self.kind
        if kind == "scalar":
            if type(data) is not self.type and not (self.type is float and type(data) is int):
                raise refused(f"a {self.type.__name__}", data)
            return self.scalar(data)  # type: ignore[misc]
        if kind == "any":
            return data
        if kind == "text":
            if type(data) is not str:
                raise refused("text", data)
            return self.info.checked(self.info.xml_codec.from_text(data))
        if kind == "dict":
            if type(data) is not dict:
                raise refused("an object", data)
            item = self.items[0]
            if self.key is str:
                return {k: item.decode(v) for k, v in data.items()}
            return {int_from_text(k): item.decode(v) for k, v in data.items()}
        if type(data) is not list:
            raise refused("an array", data)
        if kind == "fixed":
            if len(data) != len(self.items):
                raise ValueError(f"expected {len(self.items)} items, got {len(data)}")
            return tuple(s.decode(v) for s, v in zip(self.items, data, strict=True))
        item = self.items[0]
        if item.kind == "any" or (
            item.kind == "scalar" and not item.nullable and count_type(data, item.type) == len(data)
        ):
            values = data
        else:
            values = [item.decode(v) for v in data]
        return tuple(values) if kind == "tuple" else values


def _json_info(tp: Any, registry: TypeRegistry) -> TypeInfo:
    shape = _JsonShape(tp, registry)
    shape.nullable = False  # None is the column's business (Optional), not the JSON's

    def encode(value: Any) -> Any:
        try:
            return shape.encode(value)
        except RecursionError:
            raise ValueError("JSON nested too deeply") from None

    def check(value: Any) -> Any:
        encode(value)
        return value

    def dumps(value: Any) -> str:
        return _TEXT(encode(value))

    def loads(text: str) -> Any:
        try:
            return shape.decode(json.loads(text))
        except RecursionError:
            raise ValueError("JSON nested too deeply") from None

    records = registry.codecs("json", dumps=dumps, loads=loads)
    sql = records["sql_codec"]
    if sql.encode is dumps and sql.encode_many is None:  # (not a plugin's own maker)
        sql = dataclasses.replace(sql, encode_many=_dumps_many(shape, dumps))
    if sql.decode is loads and sql.decode_many is None:
        sql = dataclasses.replace(sql, decode_many=_loads_many(shape, loads))
    records["sql_codec"] = sql
    return TypeInfo(type_name(tp), tp, **records, check=check, checked_codecs=True)


def _dumps_many(shape: _JsonShape, dumps: Callable[[Any], str]) -> Callable[[Any], list[str]]:
    """``dumps`` of a whole column of non-None values (``SqlCodec.encode_many``). A list or
    a ``tuple[X, ...]`` of exact str, int, float or bool items, which ``dumps`` writes as
    they are, is checked a column at a time (a type test per item at C speed) and written
    by the one encoder; anything else value by value (raising on the value ``dumps``
    refuses)."""
    item = shape.items[0] if shape.kind in ("list", "tuple") and shape.items else None
    if item is None or item.kind != "scalar" or item.nullable:
        return lambda values: list(map(dumps, values))
    container = list if shape.kind == "list" else tuple
    scalar = item.type

    def many(values: Any) -> list[str]:
        if count_type(values, container) == len(values):
            items = list(chain.from_iterable(values))
            if count_type(items, scalar) == len(items):
                if scalar is not str:
                    # numbers and booleans never write a bracket: the column's one text
                    # "[[1,2],[],[3]]" parts into each value's text at each "],["
                    parts = _TEXT(values)[2:-2].split("],[")
                    if len(parts) == len(values):
                        return list(map(_BRACKETED, parts))
                return list(map(_TEXT, values))
        return list(map(dumps, values))

    return many


def _loads_many(
    shape: _JsonShape, loads: Callable[[str], Any]
) -> Callable[[Sequence[Any]], list[Any]] | None:
    """``loads`` of a whole column of stored texts (``SqlCodec.decode_many``) for a list
    or a ``tuple[X, ...]`` of exact int, float or bool items, the texts ``_dumps_many``
    writes; None (value by value) for any other shape.

    The column's texts joined by commas inside one more pair of brackets are read by one
    ``json.loads``. Where each text starts with ``[`` and ends with ``]``, and that array
    has one item per text, each a list of items exactly of the item type, each item is
    exactly its text's own array: every text's last ``]`` closes an item (a flat one, the
    outer array closing only at the end), so n texts close n items only when each item
    opens at its text's first ``[``. Those values are kept as they are (as ``decode``
    keeps them); anything else is read value by value (which converts an int in a float
    list, or raises on the value it refuses)."""
    item = shape.items[0] if shape.kind in ("list", "tuple") and shape.items else None
    if item is None or item.kind != "scalar" or item.nullable:
        return None
    scalar = item.type
    if scalar not in (int, float, bool):
        return None  # a str item may hold any bracket or quote
    tuples = shape.kind == "tuple"

    def many(texts: Sequence[Any]) -> list[Any]:
        n = len(texts)
        if (
            n
            and count_type(texts, str) == n
            and countOf(map(str.startswith, texts, repeat("[")), True) == n
            and countOf(map(str.endswith, texts, repeat("]")), True) == n
        ):
            try:
                values = json.loads(f"[{','.join(texts)}]")
            except ValueError:  # one of them is no JSON: named value by value
                values = None
            if values is not None and len(values) == n and count_type(values, list) == n:
                items = list(chain.from_iterable(values))
                if count_type(items, scalar) == len(items):
                    return list(map(tuple, values)) if tuples else values
        return list(map(loads, texts))

    return many


# -- dataclasses nested in a column -----------------------------------------------------------


def _is_nested_dataclass(tp: Any) -> bool:
    return isinstance(tp, type) and dataclasses.is_dataclass(tp)


def _nested_info(tp: type, registry: TypeRegistry) -> TypeInfo:
    codec = NestedCodec(tp, registry)
    return TypeInfo(
        tp.__qualname__,
        tp,
        **registry.codecs("json", dumps=codec.dumps, loads=codec.loads),
        check=codec.check,
        checked_codecs=True,
    )


_JSON_NATIVE = (bool, int, str)

#: Per thread, the (class, field) pairs whose types are being looked up, outermost first:
#: a nested dataclass met again while its own fields are looked up refers back to itself.
_looking_up = threading.local()


@contextmanager
def looking_up(cls: type, field: str) -> Iterator[None]:
    """Mark the lookup of ``cls.field``'s type (reflection marks a table's fields), so that
    a cycle of nested dataclasses is reported from there: ``A.b -> B.a -> A``."""
    path: list[tuple[type, str]] = _looking_up.__dict__.setdefault("path", [])
    path.append((cls, field))
    try:
        yield
    finally:
        path.pop()


def _refuse_cycle(cls: type) -> None:
    """SchemaError when ``cls`` is already being looked up: its fields lead back to it, and
    building its codec would never end (a RecursionError)."""
    path: list[tuple[type, str]] = getattr(_looking_up, "path", [])
    start = next((i for i, (owner, _f) in enumerate(path) if owner is cls), None)
    if start is None:
        return
    cycle = " -> ".join(
        [*(f"{owner.__qualname__}.{f}" for owner, f in path[start:]), cls.__qualname__]
    )
    root, field = path[0]
    raise SchemaError(
        f"{root.__qualname__}.{field}: nested dataclasses refer back to themselves ({cycle}); "
        "a JSON column holds a nested dataclass of a fixed shape, so a recursive one is not "
        "supported (keep such a structure in tables of its own, e.g. with "
        "column(references=...))",
        cls=root,
        field=field,
    )


class NestedCodec:
    """JSON codec for a dataclass stored inside one column.

    Each field goes through its own registry entry (its rule, then its text form), so a
    nested dataclass may hold any registered type (dates, Decimals, enums, arrays, other
    dataclasses); bool, int and str fields stay JSON values.
    """

    def __init__(self, cls: type, registry: TypeRegistry) -> None:
        self.cls = cls
        _refuse_cycle(cls)
        check_constructible(cls)
        hints = typing.get_type_hints(cls, include_extras=True)
        self.fields: list[tuple[str, bool, TypeInfo]] = []
        for f in dataclasses.fields(cls):
            tp, nullable = unwrap_optional(hints[f.name])
            try:
                with looking_up(cls, f.name):
                    info = registry.lookup(tp)
            except UnsupportedTypeError as exc:
                raise UnsupportedTypeError(
                    f"{cls.__qualname__}.{f.name}: {exc}", cls=cls, field=f.name, type_=tp
                ) from None
            self.fields.append((f.name, nullable, info))
        self.build: Callable[..., Any] = instance_builder(
            cls, [name for name, _n, _i in self.fields]
        )

    def to_jsonable(self, obj: Any) -> dict[str, Any]:
        if type(obj) is not self.cls:
            raise ValueError(f"expected a {self.cls.__qualname__}, got {type(obj).__name__}")
        out: dict[str, Any] = {}
        for name, nullable, info in self.fields:
            value = getattr(obj, name)
            if value is None:
                if not nullable:
                    raise ValueError(f"{self.cls.__qualname__}.{name} is None but not Optional")
                out[name] = None
                continue
            try:
                value = info.checked(value)
                out[name] = (
                    value if info.python_type in _JSON_NATIVE else info.xml_codec.to_text(value)
                )
            except (TypeError, ValueError) as exc:
                raise ValueError(f"{self.cls.__qualname__}.{name}: {exc}") from None
        return out

    def from_jsonable(self, data: Any) -> Any:
        if type(data) is not dict:
            raise ValueError(f"expected a JSON object for {self.cls.__qualname__}")
        kwargs = {}
        for name, nullable, info in self.fields:
            if name in data:
                value = data[name]
                if value is None:
                    if not nullable:
                        raise ValueError(f"{self.cls.__qualname__}.{name} is null but not Optional")
                elif info.python_type in _JSON_NATIVE:
                    if type(value) is not info.python_type:
                        raise refused(f"{info.name} for {self.cls.__qualname__}.{name}", value)
                elif type(value) is not str:
                    raise refused(f"text for {self.cls.__qualname__}.{name}", value)
                else:
                    value = info.checked(info.xml_codec.from_text(value))
                kwargs[name] = value
        if len(kwargs) == len(self.fields):  # the shared builder (kw_only, init=False...)
            return self.build(*kwargs.values())
        return self.cls(**kwargs)  # older JSON without some fields: their defaults

    def check(self, obj: Any) -> Any:
        self.to_jsonable(obj)
        return obj

    def dumps(self, obj: Any) -> str:
        return json_text(self.to_jsonable(obj))

    def loads(self, text: str) -> Any:
        return self.from_jsonable(json.loads(text))


def register_nested(registry: TypeRegistry) -> None:
    """Add the factory of dataclasses nested in a column to ``registry``."""
    registry.register_factory(_is_nested_dataclass, _nested_info)


def register(registry: TypeRegistry) -> None:
    """Add the factory of list, dict and tuple fields to ``registry``."""
    registry.register_factory(_is_json, _json_info)

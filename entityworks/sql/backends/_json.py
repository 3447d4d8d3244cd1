"""What the backends share about JSON columns: the JSON path text of a filter's path, the
kind of a compared value, and the checks of a JSON text that a native JSON type would not
keep exactly (see ``docs/how-to/json-queries.md``).

Each backend's own SQL for a path or a containment is in its module
(:meth:`~.base.Backend.json_compare`, :meth:`~.base.Backend.json_contains`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import Any

import sqlalchemy as sa

#: ``\\u0000`` in JSON text: NUL (not an escaped backslash followed by ``u0000``).
_NUL = re.compile(r"(?<!\\)(?:\\\\)*\\u0000")

#: A filter's path into a JSON value: keys (str) and array indexes (int).
JsonPath = tuple[str | int, ...]


def is_json(info: Any) -> bool:
    """True for a registry entry stored as JSON text (list, dict, tuple, nested dataclass)."""
    made = info.sql_codec.column_type
    return (getattr(made, "name", None) or getattr(made, "__name__", None)) == "json_text"


def is_text(info: Any) -> bool:
    """True for a registry entry stored as plain text (``str``)."""
    made = info.sql_codec.column_type
    return (getattr(made, "name", None) or getattr(made, "__name__", None)) == "text"


class CheckedJson(sa.types.TypeDecorator[Any]):
    """A str field's text on a JSON column (``native``, the backend's JSON type): checked
    to be JSON before it is bound (the database's own refusal names no column), then bound
    as the column's JSON."""

    impl = sa.types.Text
    cache_ok = True

    def __init__(self, native: sa.types.TypeEngine[Any]) -> None:
        super().__init__()
        self.native = native

    def load_dialect_impl(self, dialect: sa.Dialect) -> sa.types.TypeEngine[Any]:
        return dialect.type_descriptor(self.native)

    def process_bind_param(self, value: Any, dialect: sa.Dialect) -> Any:
        if isinstance(value, str):
            try:
                json.loads(value, parse_constant=_no_constant)
            except json.JSONDecodeError as exc:
                raise ValueError(f"the text is no JSON, which the column holds ({exc})") from None
        return value


def path_text(path: JsonPath) -> str:
    """``path`` as the JSON path ``$."a"[0]`` all three backends read (keys were checked by
    the filter: no ``"``, backslash or control character)."""
    return "$" + "".join(f"[{p}]" if isinstance(p, int) else f'."{p}"' for p in path)


def kind(value: Any) -> str:
    """How a filter compares ``value``: ``bool``, ``number`` or ``text``."""
    if isinstance(value, bool):
        return "bool"
    return "number" if isinstance(value, int | float) else "text"


def _no_constant(name: str) -> Any:
    raise ValueError(
        f"{name} is no JSON number, and the database's JSON type refuses it; "
        "keep it in a float field of its own, or use SQLite (JSON text)"
    )


def json_text_for_jsonb(text: str | None) -> str | None:
    """``text`` (JSON written by entityworks) unless PostgreSQL's filters, which read it as
    jsonb, could not: NaN and Infinity (no JSON at all) and NUL (``\\u0000``, which
    jsonb's text cannot hold) raise ValueError."""
    if text is not None and "\\u0000" in text and _NUL.search(text):
        raise ValueError(
            "the text holds NUL (\\u0000), which PostgreSQL's jsonb (what its JSON "
            "filters read) cannot hold; keep such text out of JSON fields"
        )
    return refuse_constants(text)


#: A JSON string (skipped) or number (rewritten where jsonb would change it) in JSON text.
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?')


def _jsonb_number(match: re.Match[str]) -> str:
    token = match.group()
    if token[0] == '"' or not any(c in token for c in ".eE"):
        return token  # a string, or an int: jsonb keeps both as they are
    if float(token) == 0.0 and token[0] == "-":
        raise ValueError(
            "-0.0 inside a JSON value: PostgreSQL's jsonb keeps no sign of zero (it would "
            "come back 0.0); keep it in a float field of its own, or write 0.0"
        )
    mantissa, _, exponent = token.lower().partition("e")
    if exponent and 0 < int(exponent) <= 400:
        number = Decimal(token)
        if number == number.to_integral_value():
            # jsonb writes 1e+16 as 10000000000000000, which reads back as an int: the
            # digits with a fraction of .0 read back as the float (jsonb keeps the scale)
            return f"{int(number)}.0"
    return token


def json_text_for_jsonb_column(text: str | None) -> str | None:
    """``text`` as a ``jsonb`` column stores it so that it reads back as the same values
    (:func:`json_text_for_jsonb`'s refusals too): a float written with a positive
    exponent (``1e+16``: what ``repr`` writes from 1e16 up, always a whole number) as its
    digits and ``.0``, since jsonb would print it as an integer; ``-0.0`` refused, which
    jsonb turns into ``0.0``."""
    text = json_text_for_jsonb(text)
    if text is None or ("e+" not in text and "E+" not in text and "-0" not in text):
        return text
    return _TOKEN.sub(_jsonb_number, text)


def refuse_constants(text: str | None) -> str | None:
    """``text`` unless it holds NaN or Infinity, which no JSON type stores (None: NULL)."""
    if text is not None and ("NaN" in text or "Infinity" in text):
        json.loads(text, parse_constant=_no_constant)
    return text


#: The comparisons a path takes, as SQLAlchemy operators.
COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    "==": lambda a, b: a == b,
    "!=": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}

#: What SQLite's ``json_type`` answers for each kind of compared value.
_JSON1_KINDS = {"number": ("integer", "real"), "text": ("text",), "bool": ("true", "false")}


def json1_compare(
    column: Any, path: JsonPath, op: str, value: Any, *, definite: bool = False
) -> sa.ColumnElement[bool]:
    """SQLite: ``json_type`` says the kind, ``json_extract`` gives the SQL value. NULL
    where the value is missing or of another kind (``definite``: false)."""
    where = sa.literal(path_text(path), sa.String())
    found = sa.func.json_type(column, where)
    what = kind(value)
    if what == "bool":
        same = found == ("true" if value else "false")
        return maybe(found, _JSON1_KINDS["bool"], same if op == "==" else sa.not_(same), definite)
    scalar = sa.func.json_extract(column, where)
    bound = sa.literal(value, sa.Double() if isinstance(value, float) else None)
    return maybe(found, _JSON1_KINDS[what], COMPARE[op](scalar, bound), definite)


def maybe(found: Any, kinds: Sequence[str], test: Any, definite: bool) -> sa.ColumnElement[bool]:
    """``test`` where ``found`` (the JSON type at a path, NULL when missing) is one of
    ``kinds``; else NULL (SQL's unknown: ``~`` keeps no such row either) or, ``definite``,
    false (inside a containment)."""
    if definite:
        return sa.and_(sa.func.coalesce(found, "").in_(kinds), test)
    return sa.case((found.in_(kinds), test))


def _json1_shape(column: Any, path: JsonPath, shape: str) -> sa.ColumnElement[bool]:
    found = sa.func.json_type(column, sa.literal(path_text(path), sa.String()))
    return sa.func.coalesce(found, "") == shape


def _json1_array_has(column: Any, path: JsonPath, value: Any) -> sa.ColumnElement[bool]:
    """SQLite: an element of the array at ``path`` of ``value``'s kind equal to it."""
    items = (
        sa.func.json_each(column, sa.literal(path_text(path), sa.String()))
        .table_valued("type", "value")
        .alias("ew_items")
    )
    what = kind(value)
    if what == "bool":
        test = items.c.type == ("true" if value else "false")
    else:
        test = sa.and_(items.c.type.in_(_JSON1_KINDS[what]), items.c.value == sa.literal(value))
    return sa.exists(sa.select(sa.literal(1)).select_from(items).where(test))


def json1_contains(column: Any, path: JsonPath, candidate: Any) -> sa.ColumnElement[bool]:
    """SQLite: :func:`contained_parts` with JSON1's functions; NULL where ``path`` leads
    nowhere."""
    inside = contained_parts(column, path, candidate, json1_compare, _json1_shape, _json1_array_has)
    found = sa.func.json_type(column, sa.literal(path_text(path), sa.String()))
    return sa.case((found.is_not(None), inside))


def contained_parts(
    column: Any,
    path: JsonPath,
    candidate: Any,
    compare: Callable[..., sa.ColumnElement[bool]],
    shape: Callable[[Any, JsonPath, str], sa.ColumnElement[bool]],
    array_has: Callable[[Any, JsonPath, Any], sa.ColumnElement[bool]],
) -> sa.ColumnElement[bool]:
    """Containment as PostgreSQL's ``@>`` means it, spelled out: an object holds each key
    of the candidate with a value containing the candidate's, an array holds an equal
    element for each of the candidate's (scalars: the filter allows no other), a scalar is
    equal and of the same kind. ``shape(column, path, "object" | "array")``: the value at
    ``path`` is one; ``compare(column, path, "==", value, definite=True)``: false where
    the value is missing or of another kind."""
    if isinstance(candidate, dict):
        parts = [shape(column, path, "object")]
        for key, value in candidate.items():
            at = (*path, key)
            if isinstance(value, dict | list):
                parts.append(contained_parts(column, at, value, compare, shape, array_has))
            else:
                parts.append(compare(column, at, "==", value, definite=True))
        return sa.and_(*parts)
    return sa.and_(shape(column, path, "array"), *(array_has(column, path, v) for v in candidate))


__all__ = [
    "COMPARE",
    "JsonPath",
    "contained_parts",
    "json1_compare",
    "json1_contains",
    "is_json",
    "json_text_for_jsonb",
    "json_text_for_jsonb_column",
    "kind",
    "maybe",
    "path_text",
    "refuse_constants",
]

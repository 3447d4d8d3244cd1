"""Server defaults: a field's literal default (``model.defaults.field_default``) as the
column's DDL ``DEFAULT``.

A table whose NOT NULL column has a ``DEFAULT`` can gain that column while it holds rows: the
database fills them. So a field ``theme: str = "stone"`` becomes ``theme TEXT NOT NULL
DEFAULT 'stone'``, and Alembic's autogenerate writes a migration that upgrades a populated
table on every backend.

The default is the value Python would write, spelled as the database stores it: the field's
default goes through the registry's ``to_db`` and the column type's bind step for the dialect
(an Enum member becomes its value, a Decimal where there is no decimal type its sortable text,
an aware datetime its UTC instant). A number is written as a number (``DEFAULT 10``:
SQLite's ANY columns keep what they get), anything else as a string literal (``DEFAULT
'stone'``), which every backend converts to the column's type exactly. A ``DEFAULT`` is only
written when that is exact, so the database never fills a row with anything but the Python default:

* types: ``bool``, ``int`` (64-bit), ``float``, ``str``, ``Decimal``, ``Enum`` members,
  ``date``, ``time``, naive ``datetime``, ``AwareDatetime``, ``timedelta``, ``UUID``;
* never a ``default_factory`` (its value is decided at each call), never ``None`` (NULL is
  the implicit default anyway), never a primary key;
* refused (no ``DEFAULT``; the default stays in Python): NaN, infinities and ``-0.0`` (no
  backend keeps them through a literal), a float the backend's literal parser would round
  (``Backend.reads_float_literal``), text with NUL or lone surrogates, text over
  :data:`MAX_TEXT_DEFAULT` characters (MariaDB caps a DEFAULT near 64 KiB) or longer than the
  column, and any value the type refuses to encode for the dialect (a Decimal beyond a
  DECIMAL(65, 30)).

What a column type is (a number, text) is asked through SQLAlchemy's public API: a
``TypeDecorator``'s own implementation (``impl_instance``), then ``isinstance``.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import enum
import functools
import math
import re
import uuid
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from ..model.schema import Column
from ..registry import Companion
from . import sqltypes
from .backends import for_name, names_where

#: Longest text default written to DDL, in characters.
MAX_TEXT_DEFAULT = 1000

_LITERAL_TYPES = (
    bool,
    int,
    float,
    str,
    decimal.Decimal,
    dt.date,
    dt.time,
    dt.datetime,
    dt.timedelta,
    uuid.UUID,
)
_INT64 = (-(2**63), 2**63 - 1)


@functools.lru_cache(maxsize=16)
def _dialect(name: str) -> sa.Dialect | None:
    """SQLAlchemy's dialect ``name``, loaded without connecting (None: no backend module)."""
    if name not in names_where(lambda _backend: True):
        return None
    return sa.make_url(f"{name}://").get_dialect()()


def _literal_type(column: Column) -> bool:
    python_type = column.info.python_type
    if isinstance(python_type, type) and issubclass(python_type, enum.Enum):
        return True
    return python_type in _LITERAL_TYPES or column.info.name == "AwareDatetime"


#: How a number is spelled as a DEFAULT (unquoted, so that SQLite's ANY columns store a
#: number, not text); the comparison recognises entityworks' numeric DEFAULTs by it.
NUMBER = re.compile(r"-?\d+(\.\d+)?([eE][-+]?\d+)?")


def server_default(
    column: Column, default: Any, type_: sa.types.TypeEngine[Any], dialect: str
) -> str | sa.TextClause | None:
    """The DDL ``DEFAULT`` for a column whose field defaults to ``default``: a number as
    SQL text (``DEFAULT 10``), anything else as a string literal (``DEFAULT 'stone'``), or
    ``None`` when no exact one can be written (see the module's rules)."""
    if default is dataclasses.MISSING or default is None or column.primary_key:
        return None
    if not _literal_type(column):
        return None
    d = _dialect(dialect)
    if d is None:
        return None
    try:
        to_db = column.info.sql_codec.encode
        value = to_db(default) if to_db is not None else default
        bind = type_.dialect_impl(d).bind_processor(d)
        stored = bind(value) if bind is not None else value
    except Exception:  # the Store would refuse to write it: no DEFAULT either
        return None
    text = _as_text(stored)
    if text is None or not _fits(column, type_, d, text):
        return None
    if isinstance(stored, float) and not for_name(dialect).reads_float_literal(text, stored):
        return None
    if isinstance(stored, (int, float)) and not isinstance(stored, bool):
        return sa.text(text)
    return text


def column_defaults(
    column: Column,
    default: Any,
    type_: sa.types.TypeEngine[Any],
    dialect: str,
    companions: Sequence[Companion] = (),
) -> tuple[str | sa.TextClause | None, dict[str, str | sa.TextClause]]:
    """The DEFAULT of a column (see :func:`server_default`) and those of its companion
    columns, by suffix: the part of the value the column loses (a Decimal's scale, an aware
    datetime's offset) must be filled too, or the row would read back different. When a
    companion's part cannot be written, neither DEFAULT is."""
    main = server_default(column, default, type_, dialect)
    if main is None or not companions:
        return main, {}
    try:
        value = column.info.check(default) if column.info.check is not None else default
        parts = {part.suffix: part.split(value) for part in companions}
    except Exception:
        return None, {}
    extras: dict[str, str | sa.TextClause] = {}
    for suffix, part in parts.items():
        if part is None:
            continue  # NULL: nothing lost, the column's value stands
        if isinstance(part, str):
            extras[suffix] = part  # a quoted literal (a SQLite Decimal's plain text)
            continue
        if not isinstance(part, int) or isinstance(part, bool):
            return None, {}
        extras[suffix] = sa.text(str(part))
    return main, extras


def _as_text(stored: Any) -> str | None:
    """The literal text of a storage value, or None when it has no exact one."""
    if isinstance(stored, bool):
        return "1" if stored else "0"
    if isinstance(stored, int):
        return str(stored) if _INT64[0] <= stored <= _INT64[1] else None
    if isinstance(stored, float):
        if not math.isfinite(stored) or (stored == 0 and math.copysign(1, stored) < 0):
            return None
        return repr(stored)
    if isinstance(stored, dt.datetime):
        return stored.isoformat(sep=" ")
    if isinstance(stored, (str, decimal.Decimal, dt.date, dt.time, uuid.UUID)):
        return str(stored)
    return None


def _fits(column: Column, type_: sa.types.TypeEngine[Any], d: sa.Dialect, text: str) -> bool:
    if "\x00" in text or len(text) > MAX_TEXT_DEFAULT:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate
        return False
    limits = [column.max_length, getattr(type_.dialect_impl(d), "length", None)]
    return all(not isinstance(n, int) or len(text) <= n for n in limits)


# -- comparing a reflected DEFAULT with the one entityworks would write -----------------------

_CAST = re.compile(r"::[A-Za-z_][A-Za-z0-9_ ]*(\(\s*\d+\s*(,\s*\d+\s*)?\))?(\[\])?\s*$")
_QUOTED = re.compile(r"^[A-Za-z]?'(.*)'$", re.DOTALL)
_BACKSLASH_ESCAPES = {
    "0": "\x00",
    "b": "\b",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "Z": "\x1a",
    "%": "\\%",
    "_": "\\_",
}


def parse_reflected(text: str | None, *, backslashes: bool = False) -> str | None:
    """The value of a reflected literal DEFAULT as text: ``'it''s'::text`` -> ``it's``,
    ``(10)`` -> ``10``, ``NULL`` -> None. ``backslashes``: strings escape with backslashes
    (as MariaDB's do).

    Anything that is no literal comes back as it is (it then differs from ours).
    """
    if text is None:
        return None
    t = text.strip()
    while True:
        stripped = _CAST.sub("", t).strip()
        if stripped.startswith("(") and stripped.endswith(")") and _balanced(stripped[1:-1]):
            stripped = stripped[1:-1].strip()
        if stripped == t:
            break
        t = stripped
    if t.upper() == "NULL":
        return None
    quoted = _QUOTED.match(t)
    if quoted is None:
        return t
    body = quoted.group(1)
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "'" and body[i + 1 : i + 2] == "'":
            out.append("'")
            i += 2
        elif ch == "\\" and backslashes and i + 1 < len(body):
            nxt = body[i + 1]
            out.append(_BACKSLASH_ESCAPES.get(nxt, nxt))
            i += 2
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _balanced(text: str) -> bool:
    depth = 0
    quoted = False
    for ch in text:
        if ch == "'":
            quoted = not quoted
        elif not quoted and ch == "(":
            depth += 1
        elif not quoted and ch == ")":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0 and not quoted


_TRUE = {"true": "1", "false": "0", "t": "1", "f": "0"}


def same_default(reflected: str | None, ours: str | None, type_: sa.types.TypeEngine[Any]) -> bool:
    """True when a reflected DEFAULT (already parsed) and ours fill a row with one value.

    Text columns compare exactly; numbers by value (MariaDB shows ``1.50`` in a DECIMAL(65,
    30) as ``1.500...``, PostgreSQL ``1e-300`` as ``0.000...1``); dates and times as
    values (PostgreSQL writes ``+00`` for ``+00:00``).
    """
    if reflected is None or ours is None:
        return reflected is ours
    if reflected == ours:
        return True
    if isinstance(
        type_,
        (
            sqltypes.NaiveDateTime,
            sqltypes.AwareDateTime,
            sqltypes.ISODate,
            sqltypes.ISOTime,
            sqltypes.UUIDType,
        ),
    ):
        return _temporal(reflected, type_) == _temporal(ours, type_) is not None
    if is_number(type_):
        return _number(reflected) == _number(ours) is not None
    return False


def generic(type_: sa.types.TypeEngine[Any]) -> sa.types.TypeEngine[Any]:
    """The type a ``TypeDecorator`` stands on (its ``impl_instance``, down to one that is
    no decorator); any other type itself."""
    while isinstance(type_, sa.types.TypeDecorator):
        type_ = type_.impl_instance
    return type_


def is_number(type_: sa.types.TypeEngine[Any]) -> bool:
    """True for integer, decimal, float and boolean column types."""
    return isinstance(generic(type_), (sa.Integer, sa.Numeric, sa.Float, sa.Boolean))


def is_text(type_: sa.types.TypeEngine[Any]) -> bool:
    """True for text column types (the ISO-text temporal types of SQLite excluded)."""
    if isinstance(
        type_,
        (
            sqltypes.NaiveDateTime,
            sqltypes.AwareDateTime,
            sqltypes.ISODate,
            sqltypes.ISOTime,
            sqltypes.UUIDType,
        ),
    ):
        return False
    return isinstance(generic(type_), sa.String)


def _temporal(text: str, type_: sa.types.TypeEngine[Any]) -> dt.date | dt.time | uuid.UUID | None:
    try:
        if isinstance(type_, sqltypes.ISODate):
            return dt.date.fromisoformat(text)
        if isinstance(type_, sqltypes.ISOTime):
            return dt.time.fromisoformat(text)
        if isinstance(type_, sqltypes.UUIDType):
            return uuid.UUID(text)
        value = dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    if isinstance(type_, sqltypes.AwareDateTime) and value.tzinfo is None:
        value = value.replace(tzinfo=dt.UTC)  # MariaDB keeps the UTC instant, naive
    return value


def _number(text: str) -> decimal.Decimal | None:
    text = _TRUE.get(text.lower(), text)
    try:
        number = decimal.Decimal(text)
    except decimal.InvalidOperation:
        return None
    return number if number.is_finite() else None


__all__ = [
    "MAX_TEXT_DEFAULT",
    "NUMBER",
    "column_defaults",
    "generic",
    "is_number",
    "is_text",
    "parse_reflected",
    "same_default",
    "server_default",
]

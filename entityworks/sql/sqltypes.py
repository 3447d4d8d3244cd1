"""SQLAlchemy storage types whose representation differs per dialect.

The registry names these as the ``sql`` of its entries; they exist so that a value comes back
from every backend exactly as it went in: Decimals, datetimes with microseconds and (for aware
ones) their instant, long text and blobs on MariaDB. What a column type cannot hold at all (an
aware datetime's offset, a Decimal's exponent where the column pads or normalises it, the sign
of -0.0 on MariaDB) goes into a companion column (see ``registry.Companion``); the functions
that those companions use are ``small_integer`` here and :mod:`entityworks.types.values`'s
``with_scale`` and ``decimal_text``.
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Callable, Sequence
from functools import partial
from operator import countOf, methodcaller
from typing import Any, cast

import sqlalchemy as sa

from ..types.columns import has_none
from ..types.values import require_aware
from .backends import Backend, for_name, names_where

#: Dialects that store an instant as naive UTC (MariaDB and MySQL).
MYSQL_BACKENDS = names_where(lambda d: d.naive_utc)
#: Dialects whose Decimal column does not keep the exponent it is given (SQLite's sortable key
#: is normalised, DECIMAL(65, 30) and SQL Server's DECIMAL pad to their scale).
SCALED_DECIMAL_BACKENDS = names_where(lambda d: not d.keeps_decimal_scale)
#: Dialects whose STRICT tables know only INTEGER and REAL among numbers (SQLite).
_STRICT = names_where(lambda d: d.strict_numbers)
#: Dialects whose float column turns -0.0 into 0 (MariaDB in every DOUBLE expression,
#: SQLite's REAL column when it stores the value): the sign goes into a companion.
NEGATIVE_ZERO_BACKENDS = (*MYSQL_BACKENDS, *_STRICT)
UTC = dt.UTC


def big_integer() -> sa.types.TypeEngine[Any]:
    """BIGINT, but INTEGER on SQLite so that an integer key is the rowid (autoincrement)."""
    return sa.BigInteger().with_variant(sa.Integer(), *_STRICT)


def small_integer() -> sa.types.TypeEngine[Any]:
    """SMALLINT (INTEGER on SQLite, whose STRICT tables know no SMALLINT): companion values."""
    return sa.SmallInteger().with_variant(sa.Integer(), *_STRICT)


class _Variants(sa.types.TypeDecorator[Any]):
    """A generic type (``impl``) with other forms on some dialects, built when a statement
    is first compiled for one of them: a ``with_variant`` would import the MariaDB and SQL
    Server dialects (a sixth of a second) in every process, a SQLite-only one included."""

    cache_ok: bool | None = True
    #: Alembic reads ``name`` of a column type that takes schema events (as a TypeDecorator
    #: does) when it renames the column; these types have no constraint to name.
    name = None

    def variant(self, dialect: Backend) -> sa.types.TypeEngine[Any] | None:
        """This type on ``dialect`` when it is not ``impl`` there."""
        raise NotImplementedError

    def load_dialect_impl(self, dialect: sa.Dialect) -> sa.types.TypeEngine[Any]:
        variant = self.variant(for_name(dialect.name))
        return self.impl_instance if variant is None else dialect.type_descriptor(variant)


class LongText(_Variants):
    """Unbounded text: TEXT; LONGTEXT on MariaDB, NVARCHAR(max) on SQL Server."""

    impl: sa.types.TypeEngine[Any] | type[sa.types.TypeEngine[Any]] = sa.Text
    cache_ok: bool | None = True

    def variant(self, dialect: Backend) -> sa.types.TypeEngine[Any] | None:
        return dialect.long_text()


class KeyText(_Variants):
    """Indexable text: TEXT; VARCHAR(length) on MariaDB, NVARCHAR(length) on SQL Server."""

    impl: sa.types.TypeEngine[Any] | type[sa.types.TypeEngine[Any]] = sa.Text
    cache_ok: bool | None = True

    def __init__(self, length: int = 255) -> None:
        super().__init__()
        # not ``self.length``: where no variant applies the column is TEXT, without a length
        self.key_length = length

    def __repr__(self) -> str:  # what Alembic writes into a revision
        return f"{type(self).__name__}({self.key_length})"

    def variant(self, dialect: Backend) -> sa.types.TypeEngine[Any] | None:
        return dialect.key_text(self.key_length)


class BoundedText(_Variants):
    """VARCHAR(length); TEXT on SQLite (STRICT tables know no VARCHAR)."""

    impl: sa.types.TypeEngine[Any] | type[sa.types.TypeEngine[Any]] = sa.String
    cache_ok: bool | None = True

    def __init__(self, length: int) -> None:
        super().__init__(length)

    def variant(self, dialect: Backend) -> sa.types.TypeEngine[Any] | None:
        length = cast(sa.String, self.impl_instance).length
        return dialect.bounded_text(length)  # type: ignore[arg-type]


class Blob(_Variants):
    """Unbounded bytes: BLOB/BYTEA; LONGBLOB on MariaDB, VARBINARY(max) on SQL Server."""

    impl: sa.types.TypeEngine[Any] | type[sa.types.TypeEngine[Any]] = sa.LargeBinary
    cache_ok: bool | None = True

    def variant(self, dialect: Backend) -> sa.types.TypeEngine[Any] | None:
        return dialect.blob()


def text() -> sa.types.TypeEngine[Any]:
    """Unbounded text (LONGTEXT on MariaDB, where TEXT stops at 64 KiB)."""
    return LongText()


def key_text(length: int = 255) -> sa.types.TypeEngine[Any]:
    """Text usable in a key or unique index (MariaDB cannot index LONGTEXT)."""
    return KeyText(length)


def bounded_text(length: int) -> sa.types.TypeEngine[Any]:
    """VARCHAR(length); plain TEXT on SQLite, whose STRICT tables know no VARCHAR."""
    return BoundedText(length)


def double() -> sa.types.TypeEngine[Any]:
    """DOUBLE PRECISION; REAL on SQLite (the name its STRICT tables accept)."""
    return sa.Double().with_variant(sa.REAL(), *_STRICT)


def boolean() -> sa.types.TypeEngine[Any]:
    """BOOLEAN; INTEGER 0/1 on SQLite."""
    return sa.Boolean().with_variant(sa.Integer(), *_STRICT)


def binary() -> sa.types.TypeEngine[Any]:
    """Unbounded bytes (LONGBLOB on MariaDB)."""
    return Blob()


def json_text() -> sa.types.TypeEngine[Any]:
    """JSON kept as the exact text we wrote (key order and float spelling preserved)."""
    return text()


def date() -> sa.types.TypeEngine[Any]:
    return ISODate()


def time() -> sa.types.TypeEngine[Any]:
    return ISOTime()


def uuid_type() -> sa.types.TypeEngine[Any]:
    return UUIDType()


class ExactDecimal(sa.types.TypeDecorator[decimal.Decimal]):
    """Decimal as a number: NUMERIC on PostgreSQL, DECIMAL(65, 30) on MariaDB, sortable text
    on SQLite.

    SQLite has no decimal storage (REAL would round), so it keeps :func:`decimal_key`: text that
    sorts and compares like the numbers, so that filters, ORDER BY, keys and UNIQUE mean the
    same on every backend. Where the column loses the exponent a companion column keeps it: on
    SQLite the plain decimal text (:func:`decimal_text`), which takes the field's column name
    so that other tools read the number (the key column is ``<name>__key``); on MariaDB the
    ``scale``.
    """

    impl: sa.types.TypeEngine[Any] | type[sa.types.TypeEngine[Any]] = sa.Numeric
    cache_ok: bool | None = True

    def load_dialect_impl(self, dialect: sa.Dialect) -> sa.types.TypeEngine[Any]:
        backend = for_name(dialect.name)
        return dialect.type_descriptor(
            sa.Text() if backend.text_values else backend.exact_decimal()
        )

    def process_bind_param(self, value: Any, dialect: sa.Dialect) -> Any:
        if value is None:
            return None
        if not isinstance(value, decimal.Decimal):
            raise ValueError(f"expected a Decimal, got {type(value).__name__}")
        if for_name(dialect.name).text_values:
            return decimal_key(value)
        return value

    def process_result_value(self, value: Any, dialect: sa.Dialect) -> Any:
        if value is None or isinstance(value, decimal.Decimal):
            return value
        return (
            decimal_from_key(value)
            if for_name(dialect.name).text_values
            else decimal.Decimal(value)
        )

    def bind_column(self, dialect: sa.Dialect) -> ColumnProcessor | None:
        """The bind processor of a whole column of checked Decimals (``None``: the
        values are bound as they are)."""
        if for_name(dialect.name).text_values:
            return decimal_keys
        return _impl_column(self, dialect)

    def result_column(self, dialect: sa.Dialect) -> ColumnProcessor | None:
        """The result processor of a whole column (raw SQLite rows: the keys)."""
        if for_name(dialect.name).text_values:
            return decimals_from_keys
        return None

    def result_value(self, dialect: sa.Dialect) -> Callable[[Any], Any] | None:
        """The result processor of one value of a raw SQLite row (a key, never None: the
        caller skips those), without SQLAlchemy's wrapper around ``process_result_value``."""
        return decimal_from_key if for_name(dialect.name).text_values else None


#: A whole column -> its processed values (``None`` stays ``None``).
ColumnProcessor = Callable[[Sequence[Any]], Sequence[Any]]
_ISO_MICROSECONDS = methodcaller("isoformat", " ", "microseconds")


def _each(fn: Callable[[Any], Any], values: Sequence[Any]) -> list[Any]:
    """``fn`` of each value of a column, ``None`` kept."""
    if has_none(values):
        return [None if v is None else fn(v) for v in values]
    return list(map(fn, values))


def _impl_column(
    decorator: sa.types.TypeDecorator[Any], dialect: sa.Dialect
) -> ColumnProcessor | None:
    """A decorator that passes its values through: its implementation's bind processor."""
    impl = (
        decorator.impl_instance.dialect_impl(dialect)
        if hasattr(decorator, "impl_instance")
        else None
    )
    fn = impl.bind_processor(dialect) if impl is not None else None
    return None if fn is None else partial(_each, fn)


_ZERO = decimal.Decimal(0)
_KEY_DIGITS = 35  # digits before the point in a key: DECIMAL(65, 30)'s 35
_NINES = str.maketrans("0123456789", "9876543210")


def decimal_key(value: decimal.Decimal) -> str:
    """Text that sorts like the numbers and is equal for equal numbers (``1.5`` and ``1.50``).

    The integer part is zero-padded to 35 digits and trailing zeros of the fraction dropped:
    ``00…01.5``. A negative number is ``-`` and the nines' complement of those digits, ended by
    ``~`` so that a longer fraction sorts first: ``-1.55 < -1.5 < -1 < 0``.
    """
    sign, digits, exponent = value.as_tuple()
    if not value.is_finite() or not isinstance(exponent, int):
        raise ValueError(f"{value} is not a finite number")
    text = "".join(map(str, digits))
    if exponent >= 0:
        integer, fraction = text + "0" * exponent, ""
    else:
        text = text.rjust(-exponent, "0")
        integer, fraction = text[:exponent], text[exponent:]
    integer, fraction = integer.lstrip("0"), fraction.rstrip("0")
    if len(integer) > _KEY_DIGITS:
        raise ValueError(f"{value} has more than {_KEY_DIGITS} digits before the point")
    integer = integer.rjust(_KEY_DIGITS, "0")
    tail = "." + fraction if fraction else ""
    if not sign or not (integer.strip("0") or fraction):
        return integer + tail
    return "-" + integer.translate(_NINES) + tail.translate(_NINES) + "~"


def decimal_keys(values: Sequence[Any]) -> list[Any]:
    """:func:`decimal_key` of each Decimal of a column (``None`` for None), the values
    checked by the registry's rule (at most 35 digits before the point and 30 after).

    Each value is written once, in C, with its sign (a space for a positive number) and
    35 + 30 digits (``format(v, " 067.30f")``: exact, since no value has more places),
    trailing zeros dropped; the nines' complement of the negative ones is taken for the
    whole column in one ``str.translate``. Zeros go through :func:`decimal_key`."""
    if has_none(values) or countOf(values, _ZERO):
        return [None if v is None else decimal_key(v) for v in values]
    texts = [format(v, " 067.30f").rstrip("0").rstrip(".") for v in values]
    joined = "\n".join(texts)
    if "-" not in joined:
        return [t[1:] for t in texts]
    complements = joined.translate(_NINES).split("\n")
    return [t[1:] if t[0] == " " else c + "~" for t, c in zip(texts, complements, strict=True)]


def decimal_from_key(key: str) -> decimal.Decimal:
    """The number of a :func:`decimal_key` (plain decimal text, as older tables hold, too)."""
    if key.startswith("-") and key.endswith("~"):
        return decimal.Decimal("-" + key[1:-1].translate(_NINES))
    return decimal.Decimal(key)


def decimals_from_keys(keys: Sequence[Any]) -> list[Any]:
    """:func:`decimal_from_key` of each key of a column (``None`` kept); a negative key's
    nines' complement taken for the whole column in one ``str.translate``."""
    if countOf(map(type, keys), str) != len(keys):
        return [None if k is None else decimal_from_key(k) for k in keys]
    joined = "\n".join(keys)
    if "~" not in joined:
        return list(map(decimal.Decimal, keys))
    complements = joined.translate(_NINES).split("\n")
    if len(complements) != len(keys):  # a key holding a line break (not one of ours)
        return [decimal_from_key(k) for k in keys]
    number = decimal.Decimal  # ``c[:-1]`` is ``"-" + c[1:-1]``: translate keeps the minus
    return [
        number(c[:-1]) if k[0] == "-" and k[-1] == "~" else number(k)
        for k, c in zip(keys, complements, strict=True)
    ]


class _SQLiteText(sa.types.TypeDecorator[Any]):
    """A native type elsewhere, ISO 8601 text on SQLite (sortable, exact, STRICT-friendly).

    Subclasses name the native type (``native``) and the text form (``to_iso``/``from_iso``).
    """

    impl: sa.types.TypeEngine[Any] | type[sa.types.TypeEngine[Any]] = sa.Text
    cache_ok: bool | None = True

    def native(self, dialect: Backend) -> sa.types.TypeEngine[Any]:
        raise NotImplementedError

    def to_iso(self, value: Any) -> str:
        return str(value.isoformat())

    def from_iso(self, text: str) -> Any:
        raise NotImplementedError

    def load_dialect_impl(self, dialect: sa.Dialect) -> sa.types.TypeEngine[Any]:
        backend = for_name(dialect.name)
        if backend.text_values:
            return dialect.type_descriptor(sa.Text())
        return dialect.type_descriptor(self.native(backend))

    def process_bind_param(self, value: Any, dialect: sa.Dialect) -> Any:
        if value is None or not for_name(dialect.name).text_values:
            return value
        return self.to_iso(value)

    def process_result_value(self, value: Any, dialect: sa.Dialect) -> Any:
        if value is None or not for_name(dialect.name).text_values:
            return value
        return self.from_iso(value)

    def bind_column(self, dialect: sa.Dialect) -> ColumnProcessor | None:
        """The bind processor of a whole column of checked values (``None``: bound as
        they are)."""
        if not for_name(dialect.name).text_values:
            return _impl_column(self, dialect)
        return partial(_each, self.to_iso)

    def result_column(self, dialect: sa.Dialect) -> ColumnProcessor | None:
        """The result processor of a whole column (raw SQLite rows: the ISO text)."""
        if not for_name(dialect.name).text_values:
            return None
        return partial(_each, self.from_iso)

    def result_value(self, dialect: sa.Dialect) -> Callable[[Any], Any] | None:
        """The result processor of one value of a raw SQLite row (the ISO text, never
        None: the caller skips those), without SQLAlchemy's wrapper."""
        return self.from_iso if for_name(dialect.name).text_values else None


class NaiveDateTime(_SQLiteText):
    """Naive timestamp with microseconds on every backend."""

    cache_ok: bool | None = True

    def bind_column(self, dialect: sa.Dialect) -> ColumnProcessor | None:
        if not for_name(dialect.name).text_values:
            return _impl_column(self, dialect)
        return partial(_each, _ISO_MICROSECONDS)

    def result_column(self, dialect: sa.Dialect) -> ColumnProcessor | None:
        if not for_name(dialect.name).text_values:
            return None
        return partial(_each, dt.datetime.fromisoformat)

    def result_value(self, dialect: sa.Dialect) -> Callable[[Any], Any] | None:
        return dt.datetime.fromisoformat if for_name(dialect.name).text_values else None

    def native(self, dialect: Backend) -> sa.types.TypeEngine[Any]:
        return dialect.naive_datetime()

    def to_iso(self, value: dt.datetime) -> str:
        return value.isoformat(sep=" ", timespec="microseconds")

    def from_iso(self, text: str) -> dt.datetime:
        return dt.datetime.fromisoformat(text)


class ISODate(_SQLiteText):
    """DATE; ``YYYY-MM-DD`` on SQLite."""

    cache_ok: bool | None = True

    def native(self, dialect: Backend) -> sa.types.TypeEngine[Any]:
        return dialect.date()

    def to_iso(self, value: Any) -> str:
        # A datetime's text would be stored, then never read back as a date.
        if not isinstance(value, dt.date) or isinstance(value, dt.datetime):
            raise ValueError(f"expected a date, got {type(value).__name__}")
        return value.isoformat()

    def from_iso(self, text: str) -> dt.date:
        return dt.date.fromisoformat(text)


class ISOTime(_SQLiteText):
    """TIME with microseconds; ``HH:MM:SS.ffffff`` on SQLite."""

    cache_ok: bool | None = True

    def native(self, dialect: Backend) -> sa.types.TypeEngine[Any]:
        return dialect.time()

    def to_iso(self, value: dt.time) -> str:
        return value.isoformat(timespec="microseconds")

    def from_iso(self, text: str) -> dt.time:
        return dt.time.fromisoformat(text)


class UUIDType(_SQLiteText):
    """Native UUID on PostgreSQL, 32 hex digits (CHAR(32)) on MariaDB, canonical text on SQLite.

    Every form sorts like the 128-bit number, as Python orders UUIDs. MariaDB's own UUID type
    (10.7+) refuses UUIDs of some variants and sorts by a rearranged byte order, so it is not
    used.
    """

    cache_ok: bool | None = True

    def native(self, dialect: Backend) -> sa.types.TypeEngine[Any]:
        return dialect.uuid()

    def to_iso(self, value: Any) -> str:
        import uuid

        if not isinstance(value, uuid.UUID):  # str(0) would be stored, then never read back
            raise ValueError(f"expected a UUID, got {type(value).__name__}")
        return str(value)

    def from_iso(self, text: str) -> Any:
        import uuid

        return uuid.UUID(text)


class AwareDateTime(sa.types.TypeDecorator[dt.datetime]):
    """An instant: TIMESTAMPTZ on PostgreSQL, UTC DATETIME(6) on MariaDB, UTC ISO text on SQLite.

    The column holds the instant alone, in UTC, so that filters and ORDER BY compare instants
    as Python does; the value's own UTC offset is kept in an ``offset`` companion column.
    """

    impl: sa.types.TypeEngine[Any] | type[sa.types.TypeEngine[Any]] = sa.DateTime
    cache_ok: bool | None = True

    def load_dialect_impl(self, dialect: sa.Dialect) -> sa.types.TypeEngine[Any]:
        backend = for_name(dialect.name)
        return dialect.type_descriptor(
            sa.Text() if backend.text_values else backend.aware_datetime()
        )

    def process_bind_param(self, value: Any, dialect: sa.Dialect) -> Any:
        if value is None:
            return None
        utc = require_aware(value).astimezone(UTC)
        backend = for_name(dialect.name)
        if backend.text_values:
            return utc.isoformat(timespec="microseconds")
        if backend.naive_utc:
            return utc.replace(tzinfo=None)
        return utc

    def process_result_value(self, value: Any, dialect: sa.Dialect) -> Any:
        if value is None:
            return None
        if isinstance(value, str):
            value = dt.datetime.fromisoformat(value)
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)

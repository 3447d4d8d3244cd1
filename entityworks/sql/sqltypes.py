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
import uuid
from collections.abc import Callable, Sequence
from functools import partial
from itertools import repeat
from operator import add, attrgetter, countOf, methodcaller, sub
from typing import Any, cast

import sqlalchemy as sa

from ..types import storage
from ..types.columns import all_of, count_type, has_none, on_present, utc_texts_at_once
from ..types.columns import each as columns_each
from ..types.registry import Target, declare_target
from .backends import Backend, for_name, names_where
from .textvalues import (
    date_text,
    decimal_key_of,
    decimal_keys,
    decimals_from_keys,
    instant,
    instants_of_text,
    naive_text,
    time_text,
    utc,
    utc_text,
    uuid_text,
)
from .textvalues import decimal_from_key as decimal_from_key
from .textvalues import decimal_key as decimal_key

UTC = dt.UTC


def _with_variants(
    generic: sa.types.TypeEngine[Any],
    variant: Callable[[Backend], sa.types.TypeEngine[Any] | None],
) -> sa.types.TypeEngine[Any]:
    """``generic`` with ``variant(backend)`` on each backend that has one (a plain
    ``with_variant``: Alembic writes it into a revision as it is)."""
    for name in names_where(lambda backend: variant(backend) is not None):
        form = variant(for_name(name))
        assert form is not None
        generic = generic.with_variant(form, name)
    return generic


def big_integer() -> sa.types.TypeEngine[Any]:
    """BIGINT, or the backend's own (INTEGER where an integer key must be the rowid to be
    generated)."""
    return _with_variants(sa.BigInteger(), methodcaller("big_integer"))


def small_integer() -> sa.types.TypeEngine[Any]:
    """SMALLINT, or the backend's own (INTEGER where STRICT tables know no SMALLINT):
    companion values."""
    return _with_variants(sa.SmallInteger(), methodcaller("small_integer"))


class _Variants(sa.types.TypeDecorator[Any]):
    """A generic type (``impl``) with other forms on some dialects, built when a statement
    is first compiled for one of them: a ``with_variant`` would import the MariaDB and SQL
    Server dialects in every process, a SQLite-only one included."""

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


class JsonText(_Variants):
    """JSON text: TEXT; the backend's JSON type where it has one (``Backend.json_type``),
    which binds and reads the same text."""

    impl: sa.types.TypeEngine[Any] | type[sa.types.TypeEngine[Any]] = sa.Text
    cache_ok: bool | None = True

    def variant(self, dialect: Backend) -> sa.types.TypeEngine[Any] | None:
        return dialect.json_type() or dialect.long_text()


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
    """DOUBLE PRECISION, or the backend's own (REAL, the name STRICT tables accept)."""
    return _with_variants(sa.Double(), methodcaller("double"))


def boolean() -> sa.types.TypeEngine[Any]:
    """BOOLEAN, or the backend's own (INTEGER 0/1 where there is no BOOLEAN)."""
    return _with_variants(sa.Boolean(), methodcaller("boolean"))


def binary() -> sa.types.TypeEngine[Any]:
    """Unbounded bytes (LONGBLOB on MariaDB)."""
    return Blob()


def json_text() -> sa.types.TypeEngine[Any]:
    """JSON kept as the exact text we wrote (key order and float spelling preserved): the
    column of JSON fields up to 0.x, which the catalog's revisions name."""
    return text()


def json_column() -> sa.types.TypeEngine[Any]:
    """A JSON field's column: the backend's own JSON type for a new table (PostgreSQL's
    json, MariaDB's JSON), else text; both keep the exact text we wrote."""
    return JsonText()


def date() -> sa.types.TypeEngine[Any]:
    return ISODate()


def time() -> sa.types.TypeEngine[Any]:
    return ISOTime()


def uuid_type() -> sa.types.TypeEngine[Any]:
    return UUIDType()


class _PerBackend(sa.types.TypeDecorator[Any]):
    """A type whose values are bound and read differently per backend: the functions are
    chosen once per dialect (:meth:`binder`, :meth:`reader`), in the bind and result
    processors SQLAlchemy keeps per dialect and column type, never value by value."""

    cache_ok: bool | None = True

    def binder(self, backend: Backend) -> Callable[[Any], Any] | None:
        """What a non-None value becomes when bound on ``backend`` (``None``: itself)."""
        return None

    def reader(self, backend: Backend) -> Callable[[Any], Any] | None:
        """What a non-None stored value read on ``backend`` becomes (``None``: itself)."""
        return None

    def process_bind_param(self, value: Any, dialect: sa.Dialect) -> Any:
        fn = self.binder(for_name(dialect.name))
        return value if value is None or fn is None else fn(value)

    def process_result_value(self, value: Any, dialect: sa.Dialect) -> Any:
        fn = self.reader(for_name(dialect.name))
        return value if value is None or fn is None else fn(value)

    def bind_processor(self, dialect: sa.Dialect) -> Callable[[Any], Any] | None:
        fn = self.binder(for_name(dialect.name))
        impl = self.impl_instance.bind_processor(dialect)
        if fn is None:
            return impl
        if impl is None:
            return partial(_unless_none, fn)
        return partial(_then, fn, impl)

    def result_processor(self, dialect: sa.Dialect, coltype: Any) -> Callable[[Any], Any] | None:
        fn = self.reader(for_name(dialect.name))
        impl = self.impl_instance.result_processor(dialect, coltype)
        if fn is None:
            return impl
        if impl is None:
            return partial(_unless_none, fn)
        return partial(_after, fn, impl)


def _unless_none(fn: Callable[[Any], Any], value: Any) -> Any:
    return None if value is None else fn(value)


def _then(fn: Callable[[Any], Any], impl: Callable[[Any], Any], value: Any) -> Any:
    """``impl`` of ``fn`` of a bound value (``None`` not given to ``fn``)."""
    return impl(None if value is None else fn(value))


def _after(fn: Callable[[Any], Any], impl: Callable[[Any], Any], value: Any) -> Any:
    """``fn`` of ``impl`` of a read value (``None`` not given to ``fn``)."""
    value = impl(value)
    return None if value is None else fn(value)


def _require_decimal(value: Any) -> decimal.Decimal:
    if not isinstance(value, decimal.Decimal):
        raise ValueError(f"expected a Decimal, got {type(value).__name__}")
    return value


def _decimal_of_key(value: Any) -> decimal.Decimal:
    return value if isinstance(value, decimal.Decimal) else decimal_from_key(value)


def _decimal_of(value: Any) -> decimal.Decimal:
    return value if isinstance(value, decimal.Decimal) else decimal.Decimal(value)


class ExactDecimal(_PerBackend):
    """Decimal as a number: the backend's exact decimal column (NUMERIC, DECIMAL(65, 30)),
    or sortable text where there is none.

    A backend without decimal storage (whose REAL would round: ``Backend.text_values``)
    keeps :func:`decimal_key`: text that sorts and compares like the numbers, so that
    filters, ORDER BY, keys and UNIQUE mean the same on every backend. Where the column
    loses the exponent a companion column keeps it (see ``types.entries``): beside a key
    the plain decimal text (:func:`decimal_text`), which takes the field's column name so
    that other tools read the number (the key column is ``<name>__key``); beside a padded
    DECIMAL the ``scale``.
    """

    impl: sa.types.TypeEngine[Any] | type[sa.types.TypeEngine[Any]] = sa.Numeric
    cache_ok: bool | None = True

    def load_dialect_impl(self, dialect: sa.Dialect) -> sa.types.TypeEngine[Any]:
        backend = for_name(dialect.name)
        return dialect.type_descriptor(
            sa.Text() if backend.text_values else backend.exact_decimal()
        )

    def binder(self, backend: Backend) -> Callable[[Any], Any]:
        return decimal_key_of if backend.text_values else _require_decimal

    def reader(self, backend: Backend) -> Callable[[Any], Any]:
        return _decimal_of_key if backend.text_values else _decimal_of

    def bind_column(self, dialect: sa.Dialect) -> ColumnProcessor | None:
        """The bind processor of a whole column of checked Decimals (``None``: the
        values are bound as they are)."""
        if for_name(dialect.name).text_values:
            return decimal_keys
        return _impl_column(self, dialect)

    def result_column(self, dialect: sa.Dialect) -> ColumnProcessor | None:
        """The result processor of a whole column (raw rows of a text backend: the keys;
        elsewhere the driver's Decimals, passed as they are)."""
        if for_name(dialect.name).text_values:
            return decimals_from_keys
        return _decimals_column

    def result_value(self, dialect: sa.Dialect) -> Callable[[Any], Any] | None:
        """The result processor of one value of a raw row (a key, never None: the caller
        skips those), without SQLAlchemy's wrapper around ``process_result_value``."""
        return decimal_from_key if for_name(dialect.name).text_values else None


#: A whole column -> its processed values (``None`` stays ``None``).
ColumnProcessor = Callable[[Sequence[Any]], Sequence[Any]]
_ISO_MICROSECONDS = methodcaller("isoformat", " ", "microseconds")


def _each(fn: Callable[[Any], Any], values: Sequence[Any]) -> list[Any]:
    """``fn`` of each value of a column, ``None`` kept."""
    return columns_each(fn, values)  # one C loop


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


class _TextOrNative(_PerBackend):
    """A native type, or ISO 8601 text on a backend without one (``Backend.text_values``:
    sortable, exact, STRICT-friendly).

    Subclasses name the native type (``native``) and the text form (``to_iso``/``from_iso``).
    """

    impl: sa.types.TypeEngine[Any] | type[sa.types.TypeEngine[Any]] = sa.Text
    cache_ok: bool | None = True

    def native(self, dialect: Backend) -> sa.types.TypeEngine[Any]:
        raise NotImplementedError

    def to_iso(self, value: Any) -> str:
        return str(value.isoformat())

    #: The value of its ISO text (a read calls it once per value: where it can, a C parser
    #: itself, with no Python call around it).
    from_iso: Callable[[str], Any]

    def load_dialect_impl(self, dialect: sa.Dialect) -> sa.types.TypeEngine[Any]:
        backend = for_name(dialect.name)
        if backend.text_values:
            return dialect.type_descriptor(sa.Text())
        return dialect.type_descriptor(self.native(backend))

    def binder(self, backend: Backend) -> Callable[[Any], Any] | None:
        return self.to_iso if backend.text_values else None

    def reader(self, backend: Backend) -> Callable[[Any], Any] | None:
        return self.from_iso if backend.text_values else None

    #: ``to_iso`` of a value its rule passed (of exactly the column's type), with no
    #: Python call of its own (``None``: ``to_iso``).
    checked_iso: Callable[[Any], str] | None = None

    def bind_column(self, dialect: sa.Dialect) -> ColumnProcessor | None:
        """The bind processor of a whole column of checked values (``None``: bound as
        they are)."""
        if not for_name(dialect.name).text_values:
            return _impl_column(self, dialect)
        return partial(_each, self.checked_iso or self.to_iso)

    def result_column(self, dialect: sa.Dialect) -> ColumnProcessor | None:
        """The result processor of a whole column (raw rows of a text backend: the ISO
        text)."""
        if not for_name(dialect.name).text_values:
            return None
        return partial(_each, self.from_iso)

    def result_value(self, dialect: sa.Dialect) -> Callable[[Any], Any] | None:
        """The result processor of one value of a raw row (the ISO text, never None: the
        caller skips those), without SQLAlchemy's wrapper."""
        return self.from_iso if for_name(dialect.name).text_values else None


class NaiveDateTime(_TextOrNative):
    """Naive timestamp with microseconds on every backend."""

    cache_ok: bool | None = True

    def bind_column(self, dialect: sa.Dialect) -> ColumnProcessor | None:
        if not for_name(dialect.name).text_values:
            return _impl_column(self, dialect)
        return partial(_each, _ISO_MICROSECONDS)

    def native(self, dialect: Backend) -> sa.types.TypeEngine[Any]:
        return dialect.naive_datetime()

    def to_iso(self, value: dt.datetime) -> str:
        return naive_text(value)

    from_iso: Callable[[str], Any] = staticmethod(dt.datetime.fromisoformat)


class ISODate(_TextOrNative):
    """DATE; ``YYYY-MM-DD`` on SQLite."""

    cache_ok: bool | None = True

    def native(self, dialect: Backend) -> sa.types.TypeEngine[Any]:
        return dialect.date()

    checked_iso: Callable[[Any], str] | None = methodcaller("isoformat")

    def to_iso(self, value: Any) -> str:
        return date_text(value)

    from_iso: Callable[[str], Any] = staticmethod(dt.date.fromisoformat)


class ISOTime(_TextOrNative):
    """TIME with microseconds; ``HH:MM:SS.ffffff`` on SQLite."""

    cache_ok: bool | None = True

    def native(self, dialect: Backend) -> sa.types.TypeEngine[Any]:
        return dialect.time()

    checked_iso: Callable[[Any], str] | None = methodcaller("isoformat", "microseconds")

    def to_iso(self, value: dt.time) -> str:
        return time_text(value)

    from_iso: Callable[[str], Any] = staticmethod(dt.time.fromisoformat)


class UUIDType(_TextOrNative):
    """Native UUID on PostgreSQL, 32 hex digits (CHAR(32)) on MariaDB, canonical text on SQLite.

    Every form sorts like the 128-bit number, as Python orders UUIDs. MariaDB's own UUID type
    (10.7+) refuses UUIDs of some variants and sorts by a rearranged byte order, so it is not
    used.
    """

    cache_ok: bool | None = True

    def native(self, dialect: Backend) -> sa.types.TypeEngine[Any]:
        return dialect.uuid()

    checked_iso: Callable[[Any], str] | None = str

    def to_iso(self, value: Any) -> str:
        return uuid_text(value)

    def from_iso(self, text: str) -> Any:
        return uuid.UUID(text)

    def result_column(self, dialect: sa.Dialect) -> ColumnProcessor | None:
        if not for_name(dialect.name).text_values:
            return None
        return partial(_each, uuid.UUID)  # the class itself: no Python call of ours a value


class AwareDateTime(_PerBackend):
    """An instant: the backend's time zone timestamp (TIMESTAMPTZ), a UTC DATETIME(6) where
    instants are naive UTC (``Backend.naive_utc``), UTC ISO text where there is no
    timestamp type (``Backend.text_values``).

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

    def binder(self, backend: Backend) -> Callable[[Any], Any]:
        if backend.text_values:
            return utc_text
        return _naive_utc if backend.naive_utc else utc

    def reader(self, backend: Backend) -> Callable[[Any], Any]:
        return instant

    def result_column(self, dialect: sa.Dialect) -> ColumnProcessor | None:
        """The result processor of a whole column of a timestamp column (the driver's
        datetimes: naive UTC, or aware in the session's time zone), :func:`instant` of
        each; on a text backend, of its ISO text (:func:`_instants_of_text`)."""
        if for_name(dialect.name).text_values:
            return instants_of_text
        return _instants_column

    def bind_column(self, dialect: sa.Dialect) -> ColumnProcessor | None:
        """The bind processor of a whole column of checked aware datetimes (their rule has
        passed: no second test of the offset), equal value for value to
        :meth:`bind_processor`'s (the same instants; ``None``: bound as they are)."""
        backend = for_name(dialect.name)
        if backend.text_values:
            return _utc_text_column
        impl = self.impl_instance.bind_processor(dialect)
        if not backend.naive_utc:
            # a time zone column type takes any offset: the same instant, no conversion
            return None if impl is None else partial(_each, impl)
        if impl is None:
            return _naive_utc_column
        return partial(_each, partial(_then, _checked_naive_utc, impl))


_NONE = type(None)
_TZINFO = attrgetter("tzinfo")
#: The Unix epoch, naive and in UTC. ``_UTC_EPOCH + (v - _NAIVE_EPOCH)`` is the naive ``v``
#: with UTC as its tzinfo (the same fields), and ``_NAIVE_EPOCH + (v - _UTC_EPOCH)`` the
#: naive UTC time of an aware ``v`` (the difference of two aware datetimes is that of their
#: instants): each at C speed, where ``replace(tzinfo=...)`` parses its keyword per value.
_NAIVE_EPOCH = dt.datetime(1970, 1, 1)
_UTC_EPOCH = dt.datetime(1970, 1, 1, tzinfo=UTC)


def _instants_column(values: Sequence[Any]) -> Sequence[Any]:
    """:func:`instant` of each datetime of a column, ``None`` kept. The driver gives a
    column of naive UTC datetimes (MariaDB's DATETIME), or of aware ones in the session's
    zone (PostgreSQL's TIMESTAMPTZ): either is made UTC at C speed."""
    if has_none(values):
        return on_present(_instants_column, values)
    total = len(values)
    if total and count_type(values, dt.datetime) == total:
        naive = countOf(map(_TZINFO, values), None)
        if naive == total:
            return list(map(add, repeat(_UTC_EPOCH), map(sub, values, repeat(_NAIVE_EPOCH))))
        if not naive:
            return list(map(dt.datetime.astimezone, values, repeat(UTC)))
    return list(map(instant, values))


def _decimals_column(values: Sequence[Any]) -> Sequence[Any]:
    """The driver's Decimals of a column as they are (anything else, such as MariaDB's
    text of a Decimal cut to its scale, ``Backend.read_form``: ``Decimal`` of it, ``None``
    kept)."""
    if all_of(values, decimal.Decimal, nullable=True):
        return values
    return _each(decimal.Decimal, values)


#: A checked aware datetime's instant in UTC, and its ISO text (``textvalues.utc_text``'s).
_AS_UTC = methodcaller("astimezone", UTC)
_ISO_T_MICROSECONDS = methodcaller("isoformat", "T", "microseconds")


def _checked_utc_text(value: dt.datetime) -> str:
    return _ISO_T_MICROSECONDS(value.astimezone(UTC))


def _utc_text_column(values: Sequence[Any]) -> list[Any]:
    """:func:`_checked_utc_text` of each value of a column, ``None`` kept (no Python call
    per value when there is no ``None``)."""
    if has_none(values):
        return on_present(_utc_text_column, values)
    texts = utc_texts_at_once(values)  # fixed-offset zones: one C loop
    if texts is not None:
        return texts
    return list(map(_ISO_T_MICROSECONDS, map(_AS_UTC, values)))


def _checked_naive_utc(value: dt.datetime) -> dt.datetime:
    return value.astimezone(UTC).replace(tzinfo=None)


def _naive_utc_column(values: Sequence[Any]) -> list[Any]:
    """:func:`_checked_naive_utc` of each value of a column, ``None`` kept (no Python call
    per value when there is no ``None``)."""
    if has_none(values):
        return _each(_checked_naive_utc, values)
    return list(map(add, repeat(_NAIVE_EPOCH), map(sub, values, repeat(_UTC_EPOCH))))


def _naive_utc(value: Any) -> dt.datetime:
    return utc(value).replace(tzinfo=None)


#: What each storage type name of the registry's entries makes (see ``types.storage``).
_STORAGE: dict[str, Callable[[], sa.types.TypeEngine[Any]]] = {
    "big_integer": big_integer,
    "small_integer": small_integer,
    "boolean": boolean,
    "double": double,
    "text": text,
    "binary": binary,
    "json_text": json_column,
    "date": date,
    "time": time,
    "uuid_type": uuid_type,
    "ExactDecimal": ExactDecimal,
    "NaiveDateTime": NaiveDateTime,
    "AwareDateTime": AwareDateTime,
}


def target_of(dialect_name: str) -> Target:
    """The type layer's :class:`~entityworks.types.registry.Target` of SQLAlchemy's dialect
    ``dialect_name``: what its backend keeps, which decides the companions."""
    return for_name(dialect_name).storage_target(dialect_name)


def _declare() -> None:
    """Give the type layer this layer's side: what each storage type name makes, and the
    backends' targets under their dialect names (for callers that pass a name)."""
    for name, maker in _STORAGE.items():
        storage.provide(name, maker)
    for dialect_name in names_where(lambda _backend: True):
        declare_target(target_of(dialect_name))


_declare()

"""SQLAlchemy storage types whose representation differs per dialect.

The registry names these as the ``sql`` of its entries; they exist so that a value comes back
from every backend exactly as it went in: Decimals with any number of digits, datetimes with
microseconds and (for aware ones) their instant, long text and blobs on MariaDB.
"""

from __future__ import annotations

import datetime as dt
import decimal
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import mssql, mysql, postgresql

_MYSQL = ("mysql", "mariadb")
UTC = dt.UTC


def big_integer() -> sa.types.TypeEngine:
    """BIGINT, but INTEGER on SQLite so that an integer key is the rowid (autoincrement)."""
    return sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def text() -> sa.types.TypeEngine:
    """Unbounded text (LONGTEXT on MariaDB, where TEXT stops at 64 KiB)."""
    return sa.Text().with_variant(mysql.LONGTEXT(), *_MYSQL).with_variant(
        mssql.NVARCHAR("max"), "mssql")


def key_text(length: int = 255) -> sa.types.TypeEngine:
    """Text usable in a key or unique index (MariaDB cannot index LONGTEXT)."""
    return sa.Text().with_variant(sa.String(length), *_MYSQL).with_variant(
        sa.Unicode(length), "mssql")


def bounded_text(length: int) -> sa.types.TypeEngine:
    """VARCHAR(length); plain TEXT on SQLite, whose STRICT tables know no VARCHAR."""
    return sa.String(length).with_variant(sa.Text(), "sqlite")


def double() -> sa.types.TypeEngine:
    """DOUBLE PRECISION; REAL on SQLite (the name its STRICT tables accept)."""
    return sa.Double().with_variant(sa.REAL(), "sqlite")


def boolean() -> sa.types.TypeEngine:
    """BOOLEAN; INTEGER 0/1 on SQLite."""
    return sa.Boolean().with_variant(sa.Integer(), "sqlite")


def binary() -> sa.types.TypeEngine:
    """Unbounded bytes (LONGBLOB on MariaDB)."""
    return sa.LargeBinary().with_variant(mysql.LONGBLOB(), *_MYSQL).with_variant(
        mssql.VARBINARY("max"), "mssql")


def json_text() -> sa.types.TypeEngine:
    """JSON kept as the exact text we wrote (key order and float spelling preserved)."""
    return text()


def date() -> sa.types.TypeEngine:
    return ISODate()


def time() -> sa.types.TypeEngine:
    return ISOTime()


def uuid_type() -> sa.types.TypeEngine:
    return UUIDType()


def require_naive(value: Any) -> dt.datetime:
    if not isinstance(value, dt.datetime):
        raise ValueError(f"expected a datetime, got {type(value).__name__}")
    if value.tzinfo is not None:
        raise ValueError(
            "timezone-aware datetime in a naive datetime column; annotate the field as "
            "entityworks.AwareDatetime to store aware values")
    return value


def require_aware(value: Any) -> dt.datetime:
    if not isinstance(value, dt.datetime):
        raise ValueError(f"expected a datetime, got {type(value).__name__}")
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError("naive datetime in an AwareDatetime column; attach a tzinfo")
    return value


def require_naive_time(value: Any) -> dt.time:
    if not isinstance(value, dt.time):
        raise ValueError(f"expected a time, got {type(value).__name__}")
    if value.tzinfo is not None:
        raise ValueError("times with a tzinfo are not stored; use a naive time")
    return value


class ExactDecimal(sa.types.TypeDecorator):
    """Decimal without loss: NUMERIC on PostgreSQL, DECIMAL(65, 30) on MariaDB, text on SQLite.

    SQLite has no decimal storage (it would round through a double), so the exact string is
    kept there.
    """

    impl = sa.Numeric
    cache_ok = True

    def load_dialect_impl(self, dialect: sa.Dialect) -> sa.types.TypeEngine:
        if dialect.name == "sqlite":
            return dialect.type_descriptor(sa.Text())
        if dialect.name in _MYSQL:
            return dialect.type_descriptor(mysql.DECIMAL(precision=65, scale=30))
        if dialect.name == "mssql":  # the widest SQL Server has
            return dialect.type_descriptor(mssql.DECIMAL(precision=38, scale=10))
        return dialect.type_descriptor(sa.Numeric(asdecimal=True))

    def process_bind_param(self, value: Any, dialect: sa.Dialect) -> Any:
        if value is None:
            return None
        if not isinstance(value, decimal.Decimal):
            raise ValueError(f"expected a Decimal, got {type(value).__name__}")
        if dialect.name == "sqlite":
            return str(value)
        if dialect.name in _MYSQL:
            _check_mysql_decimal(value)
        return value

    def process_result_value(self, value: Any, dialect: sa.Dialect) -> Any:
        if value is None or isinstance(value, decimal.Decimal):
            return value
        return decimal.Decimal(value)


def _check_mysql_decimal(value: decimal.Decimal) -> None:
    """Refuse what DECIMAL(65, 30) would round, instead of storing a different number."""
    if not value.is_finite():
        raise ValueError(f"MariaDB DECIMAL cannot hold {value}")
    _sign, digits, exponent = value.as_tuple()
    digits, exponent = list(digits), int(exponent)
    while len(digits) > 1 and digits[-1] == 0 and exponent < 0:  # trailing zeros are free
        digits.pop()
        exponent += 1
    scale = max(0, -exponent)
    integer_digits = max(0, len(digits) + exponent)
    if scale > 30 or integer_digits > 35:
        raise ValueError(
            f"{value} does not fit MariaDB's DECIMAL(65, 30) (at most 35 integer and 30 "
            "fractional digits); it would be rounded")


class _SQLiteText(sa.types.TypeDecorator):
    """A native type elsewhere, ISO 8601 text on SQLite (sortable, exact, STRICT-friendly).

    Subclasses name the native type (``native``) and the text form (``to_iso``/``from_iso``).
    """

    impl = sa.Text
    cache_ok = True

    def native(self, dialect: sa.Dialect) -> sa.types.TypeEngine:
        raise NotImplementedError

    def to_iso(self, value: Any) -> str:
        return value.isoformat()

    def from_iso(self, text: str) -> Any:
        raise NotImplementedError

    def load_dialect_impl(self, dialect: sa.Dialect) -> sa.types.TypeEngine:
        if dialect.name == "sqlite":
            return dialect.type_descriptor(sa.Text())
        return dialect.type_descriptor(self.native(dialect))

    def process_bind_param(self, value: Any, dialect: sa.Dialect) -> Any:
        if value is None or dialect.name != "sqlite":
            return value
        return self.to_iso(value)

    def process_result_value(self, value: Any, dialect: sa.Dialect) -> Any:
        if value is None or dialect.name != "sqlite":
            return value
        return self.from_iso(value)


class NaiveDateTime(_SQLiteText):
    """Naive timestamp with microseconds on every backend."""

    cache_ok = True

    def native(self, dialect: sa.Dialect) -> sa.types.TypeEngine:
        if dialect.name in _MYSQL:
            return mysql.DATETIME(fsp=6)
        if dialect.name == "mssql":
            return mssql.DATETIME2(precision=6)
        return sa.DateTime(timezone=False)

    def to_iso(self, value: dt.datetime) -> str:
        return value.isoformat(sep=" ", timespec="microseconds")

    def from_iso(self, text: str) -> dt.datetime:
        return dt.datetime.fromisoformat(text)


class ISODate(_SQLiteText):
    """DATE; ``YYYY-MM-DD`` on SQLite."""

    cache_ok = True

    def native(self, dialect: sa.Dialect) -> sa.types.TypeEngine:
        return mssql.DATE() if dialect.name == "mssql" else sa.Date()

    def to_iso(self, value: Any) -> str:
        # A datetime's text would be stored, then never read back as a date.
        if not isinstance(value, dt.date) or isinstance(value, dt.datetime):
            raise ValueError(f"expected a date, got {type(value).__name__}")
        return value.isoformat()

    def from_iso(self, text: str) -> dt.date:
        return dt.date.fromisoformat(text)


class ISOTime(_SQLiteText):
    """TIME with microseconds; ``HH:MM:SS.ffffff`` on SQLite."""

    cache_ok = True

    def native(self, dialect: sa.Dialect) -> sa.types.TypeEngine:
        if dialect.name == "mssql":
            return mssql.TIME(precision=6)
        return mysql.TIME(fsp=6) if dialect.name in _MYSQL else sa.Time()

    def to_iso(self, value: dt.time) -> str:
        return value.isoformat(timespec="microseconds")

    def from_iso(self, text: str) -> dt.time:
        return dt.time.fromisoformat(text)


class UUIDType(_SQLiteText):
    """Native UUID where there is one (CHAR(32) on MariaDB); canonical text on SQLite."""

    cache_ok = True

    def native(self, dialect: sa.Dialect) -> sa.types.TypeEngine:
        return sa.Uuid()

    def to_iso(self, value: Any) -> str:
        import uuid

        if not isinstance(value, uuid.UUID):  # str(0) would be stored, then never read back
            raise ValueError(f"expected a UUID, got {type(value).__name__}")
        return str(value)

    def from_iso(self, text: str) -> Any:
        import uuid

        return uuid.UUID(text)


class AwareDateTime(sa.types.TypeDecorator):
    """An instant: TIMESTAMPTZ on PostgreSQL, UTC DATETIME(6) on MariaDB, UTC ISO text on SQLite.

    Values come back in UTC; they compare equal to what was written.
    """

    impl = sa.DateTime
    cache_ok = True

    def load_dialect_impl(self, dialect: sa.Dialect) -> sa.types.TypeEngine:
        if dialect.name == "sqlite":
            return dialect.type_descriptor(sa.Text())
        if dialect.name in _MYSQL:
            return dialect.type_descriptor(mysql.DATETIME(fsp=6))
        if dialect.name == "mssql":
            return dialect.type_descriptor(mssql.DATETIMEOFFSET(precision=6))
        return dialect.type_descriptor(postgresql.TIMESTAMP(timezone=True))

    def process_bind_param(self, value: Any, dialect: sa.Dialect) -> Any:
        if value is None:
            return None
        utc = require_aware(value).astimezone(UTC)
        if dialect.name == "sqlite":
            return utc.isoformat(timespec="microseconds")
        if dialect.name in _MYSQL:
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

"""SQL Server (scripts only: ``entityworks sql-script --dialect mssql``): NVARCHAR and
VARBINARY(max), DATETIME2 and DATETIMEOFFSET, and a DECIMAL that does not keep the scale of
each value, as SQLite's and MariaDB's do not.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from .base import Backend


def _mssql() -> Any:
    """SQLAlchemy's SQL Server dialect module, imported when a type is first compiled."""
    from sqlalchemy.dialects import mssql

    return mssql


class MSSQL(Backend):
    """Microsoft SQL Server."""

    name = "mssql"
    keeps_decimal_scale = False
    script_driver = "pyodbc"

    # -- engine and tables ------------------------------------------------------------------
    dialect_aliases: tuple[str, ...] = ("sqlserver",)

    def prepare_offline(self, dialect: sa.Dialect) -> None:
        # Offline, SQLAlchemy assumes SQL Server 2000 and renders DATE and TIME as DATETIME;
        # script for SQL Server 2016 and later.
        dialect.server_version_info = (13,)
        dialect._setup_version_attributes()  # type: ignore[attr-defined]

    def long_text(self) -> sa.types.TypeEngine[Any] | None:
        return _mssql().NVARCHAR("max")  # type: ignore[no-any-return]

    def key_text(self, length: int) -> sa.types.TypeEngine[Any] | None:
        return sa.Unicode(length)

    def blob(self) -> sa.types.TypeEngine[Any] | None:
        return _mssql().VARBINARY("max")  # type: ignore[no-any-return]

    def exact_decimal(self) -> sa.types.TypeEngine[Any]:
        return _mssql().DECIMAL(precision=38, scale=10)  # type: ignore[no-any-return]  # the widest

    def naive_datetime(self) -> sa.types.TypeEngine[Any]:
        return _mssql().DATETIME2(precision=6)  # type: ignore[no-any-return]

    def date(self) -> sa.types.TypeEngine[Any]:
        return _mssql().DATE()  # type: ignore[no-any-return]

    def time(self) -> sa.types.TypeEngine[Any]:
        return _mssql().TIME(precision=6)  # type: ignore[no-any-return]

    def aware_datetime(self) -> sa.types.TypeEngine[Any]:
        return _mssql().DATETIMEOFFSET(precision=6)  # type: ignore[no-any-return]


__all__ = ["MSSQL"]

"""SQL Server (scripts only: ``entityworks sql-script --dialect mssql``): a DECIMAL that does
not keep the scale of each value, as SQLite's and MariaDB's do not.
"""

from __future__ import annotations

from .base import Dialect


class MSSQL(Dialect):
    """Microsoft SQL Server."""

    name = "mssql"
    keeps_decimal_scale = False


__all__ = ["MSSQL"]

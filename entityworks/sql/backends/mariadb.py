"""MariaDB (and MySQL): a strict ``sql_mode`` and binary collation on each connection, DDL
that commits as it runs, identifiers within U+FFFF, an upsert guarded against clashes on
other unique indexes, and no NaN or infinity in a DOUBLE.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from ...errors import ConfigurationError, EntityworksError, InvalidNameError
from .base import Backend, setup_statement

if TYPE_CHECKING:
    from ...model.schema import TableSchema

#: MariaDB's text columns compare exactly: binary (case and accents count) and NO PAD
#: (trailing spaces count), as text compares on SQLite and PostgreSQL. Its default collation
#: would find ``'caves'`` equal to ``'CAVES'``, ``'cavés'`` and ``'caves  '``.
CHARSET = "utf8mb4"
COLLATION = "utf8mb4_nopad_bin"
#: The lock name of entityworks' schema changes.
LOCK_NAME = "entityworks_schema_change"
#: The server's error number for a database that does not exist (ER_BAD_DB_ERROR).
UNKNOWN_DATABASE = 1049


def _connection_charset(dbapi_connection: Any) -> str | None:
    """The character set of a MySQL driver connection (``utf8mb4`` unless the URL says)."""
    name = getattr(dbapi_connection, "character_set_name", None)
    return name() if callable(name) else None


def _mysql() -> Any:
    """SQLAlchemy's MySQL dialect module, imported when a type is first compiled for it (a
    sixth of a second that a SQLite-only process never pays)."""
    from sqlalchemy.dialects import mysql

    return mysql


class MariaDB(Backend):
    """MariaDB or MySQL through PyMySQL (SQLAlchemy names them ``mariadb`` or ``mysql``)."""

    name = "mariadb"
    transactional_ddl = False
    keeps_decimal_scale: bool = False
    no_limit: int | None = 2**64 - 1
    key_only_rows_one_by_one = True
    upsert_guarded = True
    naive_utc = True
    raw_inserts = True
    script_driver = "pymysql"
    native_paramstyle = "pyformat"

    def engine_arguments(
        self, url: sa.URL, echo: bool, options: dict[str, Any], busy_timeout: float
    ) -> tuple[sa.URL, dict[str, Any]]:
        if "charset" not in url.query:
            url = url.update_query_dict({"charset": "utf8mb4"})
        return super().engine_arguments(url, echo, options, busy_timeout)

    def connection_setup(
        self, engine: sa.Engine, busy_timeout: float, *, adopted: bool
    ) -> Callable[[Any], None] | None:
        explicit = "charset" in engine.url.query

        def setup(dbapi_connection: Any) -> None:
            charset = _connection_charset(dbapi_connection)
            if adopted and not explicit and charset not in (None, CHARSET):
                raise ConfigurationError(
                    f"engine=: its connections use the character set {charset!r}, which "
                    "cannot hold every character; create the engine with the charset "
                    "utf8mb4 (?charset=utf8mb4 in its URL)"
                )
            # Refuse bad values instead of truncating them, keep an explicit 0 key (MariaDB
            # would otherwise replace it with a generated one), and make a division by zero
            # an error (the upsert guard relies on it).
            cursor = dbapi_connection.cursor()
            setup_statement(
                cursor,
                "SET SESSION sql_mode = CONCAT_WS(',', @@sql_mode, "
                "'STRICT_ALL_TABLES', 'NO_AUTO_VALUE_ON_ZERO', "
                "'ERROR_FOR_DIVISION_BY_ZERO')",
            )
            # Literals in the collation of our text columns (binary, no pad). With the
            # default one, MariaDB 10.11 answers some BETWEEN filters on an indexed column
            # from the wrong index range.
            if charset == CHARSET:
                setup_statement(cursor, f"SET collation_connection = {COLLATION}")
            cursor.close()

        return setup

    def long_text(self) -> sa.types.TypeEngine[Any] | None:
        # LONGTEXT: TEXT stops at 64 KiB
        return _mysql().LONGTEXT(charset=CHARSET, collation=COLLATION)  # type: ignore[no-any-return]

    def key_text(self, length: int) -> sa.types.TypeEngine[Any] | None:
        # VARCHAR: MariaDB cannot index LONGTEXT
        return _mysql().VARCHAR(length, charset=CHARSET, collation=COLLATION)  # type: ignore[no-any-return]

    def bounded_text(self, length: int) -> sa.types.TypeEngine[Any] | None:
        return _mysql().VARCHAR(length, charset=CHARSET, collation=COLLATION)  # type: ignore[no-any-return]

    def blob(self) -> sa.types.TypeEngine[Any] | None:
        return _mysql().LONGBLOB()  # type: ignore[no-any-return]

    def exact_decimal(self) -> sa.types.TypeEngine[Any]:
        return _mysql().DECIMAL(precision=65, scale=30)  # type: ignore[no-any-return]

    def naive_datetime(self) -> sa.types.TypeEngine[Any]:
        return _mysql().DATETIME(fsp=6)  # type: ignore[no-any-return]

    def time(self) -> sa.types.TypeEngine[Any]:
        return _mysql().TIME(fsp=6)  # type: ignore[no-any-return]

    def uuid(self) -> sa.types.TypeEngine[Any]:
        return sa.Uuid(native_uuid=False)  # 32 hex digits: MariaDB's UUID misorders them

    def aware_datetime(self) -> sa.types.TypeEngine[Any]:
        return _mysql().DATETIME(fsp=6)  # type: ignore[no-any-return]

    def check_names(self, schema: TableSchema) -> None:
        """MariaDB identifiers hold characters up to U+FFFF only (no emoji): refuse others
        with a clear error instead of the server's."""
        for table in [schema, *schema.descendants]:
            names: list[tuple[str, str, str | None]] = [("table name", table.name, None)]
            names += [("column name", c.sql_name, c.name) for c in table.columns]
            for what, name, field in names:
                wide = next((ch for ch in name if ord(ch) > 0xFFFF), None)
                if wide is not None:
                    raise InvalidNameError(
                        f"invalid {what} {name!r} ({table.cls.__qualname__}) on MariaDB: its "
                        f"identifiers cannot hold {wide!r} (U+{ord(wide):X}) or any "
                        "character beyond U+FFFF, such as emoji",
                        cls=table.cls,
                        field=field,
                    )

    @contextmanager
    def schema_lock(self, conn: sa.Connection, seconds: int) -> Iterator[None]:
        got = conn.execute(
            sa.select(
                sa.func.get_lock(sa.bindparam("name", LOCK_NAME), sa.bindparam("seconds", seconds))
            )
        ).scalar()
        if got != 1:
            raise EntityworksError(
                f"another process has held the schema-change lock for over {seconds} s; "
                "try again when its change has finished"
            )
        try:
            yield
            conn.commit()  # the next holder must see what this one wrote
        finally:
            conn.execute(sa.select(sa.func.release_lock(sa.bindparam("name", LOCK_NAME))))

    def upsert(
        self, table: sa.Table, keys: list[str], others: list[str], restated: list[str]
    ) -> sa.Executable:
        from sqlalchemy.dialects import mysql

        insert = mysql.insert(table)
        # ON DUPLICATE KEY UPDATE also fires on a clash with another UNIQUE index, and would
        # then overwrite the row holding that value. The first assignment (MariaDB runs them
        # in order) keeps the key when the clash is on the key and otherwise divides by zero,
        # an error in strict mode: the statement fails, as an INSERT ... ON CONFLICT (key)
        # does on SQLite and PostgreSQL. (A composite key: the first assignment checks every
        # part of it.)
        current = table.c[keys[0]]
        same = sa.and_(*(table.c[k].is_not_distinct_from(insert.inserted[k]) for k in keys))
        guard = sa.func.if_(same, current, sa.literal_column("1/0"))
        return insert.on_duplicate_key_update(
            [(keys[0], guard), *((n, insert.inserted[n]) for n in others)]
        )

    def script_upsert(
        self, table: sa.Table, keys: list[str], others: list[str], restated: list[str]
    ) -> sa.Executable | None:
        from sqlalchemy.dialects import mysql

        insert = mysql.insert(table)
        return insert.on_duplicate_key_update({n: insert.inserted[n] for n in others or keys})

    def refuses_value(self, value: Any) -> bool:
        return isinstance(value, float) and not math.isfinite(value)

    def point_path(self, url: sa.URL) -> bool:
        return True

    def point_connection(self, dbapi_connection: Any) -> None:
        dbapi_connection.autocommit(True)  # PyMySQL: each statement commits as it runs

    def unopenable(self, exc: BaseException, url: sa.URL, shown: str) -> str | None:
        if not (exc.args and exc.args[0] == UNKNOWN_DATABASE):
            return None
        name = url.database or ""
        return (
            f"database {name!r} does not exist on the MariaDB server of {shown}; create "
            f"it first (CREATE DATABASE `{name}` in the mariadb client)"
        )

    def streams(self, children: bool) -> bool:
        # its server-side cursor cannot share the connection with the child queries
        return not children


__all__ = ["CHARSET", "COLLATION", "LOCK_NAME", "MariaDB"]

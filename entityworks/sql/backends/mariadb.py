"""MariaDB (and MySQL): a strict ``sql_mode`` and binary collation on each connection, DDL
that commits as it runs, identifiers within U+FFFF, an upsert guarded against clashes on
other unique indexes, and no NaN or infinity in a DOUBLE.
"""

from __future__ import annotations

import math
import weakref
from bisect import bisect_left
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from itertools import accumulate, chain
from operator import add, countOf, itemgetter
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy.ext.compiler import compiles

from ...compat.sqlalchemy import dialect_twin
from ...errors import ConfigurationError, EntityworksError, InvalidNameError
from .base import Backend, RowWriter, setup_statement
from .binds import plain_binary

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
#: About the bytes of one multi-row INSERT of generated keys (the server's
#: max_allowed_packet is 16 MiB by default, at least 1 MiB; escaping may double a text).
INSERT_BYTES = 400_000
#: Most placeholders one statement may hold on MariaDB (a prepared statement's limit).
_MAX_PARAMETERS = 65_535
#: ``innodb_autoinc_lock_mode`` per engine: 0 and 1 give the rows of one multi-row INSERT
#: consecutive keys, 2 ("interleaved") may not.
_LOCK_MODES: weakref.WeakKeyDictionary[sa.Engine, int] = weakref.WeakKeyDictionary()


#: MySQL client capability flags (the same in every driver: the protocol's own numbers).
_FOUND_ROWS = 1 << 1
_MULTI_STATEMENTS = 1 << 16


def _connection_charset(dbapi_connection: Any) -> str | None:
    """The character set of a MySQL driver connection (``utf8mb4`` unless the URL says);
    under an AsyncStore, of the aiomysql connection SQLAlchemy's adapted one wraps."""
    driver = getattr(dbapi_connection, "driver_connection", dbapi_connection)
    name = getattr(driver, "character_set_name", None)
    return name() if callable(name) else None


def _mysql() -> Any:
    """SQLAlchemy's MySQL dialect module, imported when a type is first compiled for it (a
    sixth of a second that a SQLite-only process never pays)."""
    from sqlalchemy.dialects import mysql

    return mysql


def _json_found(column: Any, path: tuple[str | int, ...]) -> Any:
    """``JSON_TYPE`` of what ``path`` leads to in ``column``, NULL where it leads nowhere.
    MariaDB reads an index into a value that is no array as an index into an array of that
    value alone (``$.size[0]`` of ``{"size": false}`` is ``false``): an index counts only
    where the value before it is an array, as in Python and on the other backends."""
    from ._json import path_text

    found: Any = sa.func.json_type(
        sa.func.json_extract(column, sa.literal(path_text(path), sa.String()))
    )
    arrays = [
        sa.func.json_type(
            sa.func.json_extract(column, sa.literal(path_text(path[:i]), sa.String()))
        )
        == "ARRAY"
        for i, step in enumerate(path)
        if isinstance(step, int)
    ]
    if arrays:
        found = sa.case((sa.and_(*arrays), found))
    return found


#: The texts a URL's boolean option is true by (as PyMySQL's ``ssl_disabled`` reads it).
_TRUE = frozenset({"1", "true", "yes", "on"})


class MariaDB(Backend):
    """MariaDB or MySQL through PyMySQL (SQLAlchemy names them ``mariadb`` or ``mysql``)."""

    name = "mariadb"
    asyncio_drivers: Mapping[str, str] = MappingProxyType(
        {"": "aiomysql", "pymysql": "aiomysql", "mysqldb": "aiomysql"}
    )
    transactional_ddl = False
    keeps_decimal_scale: bool = False
    no_limit: int | None = 2**64 - 1
    key_only_rows_one_by_one = True
    upsert_guarded = True
    naive_utc = True
    raw_inserts = True
    script_driver = "pymysql"
    native_paramstyle = "pyformat"

    def asyncio_url(self, url: sa.URL) -> sa.URL | str:
        # PyMySQL's TLS options: aiomysql takes an SSLContext only, and connects without TLS
        # unless given one, so ``ssl_disabled=true`` is its default and goes; the others
        # would reach aiomysql.connect as arguments it does not know
        mapped = super().asyncio_url(url)
        if isinstance(mapped, str) or mapped.get_driver_name() == url.get_driver_name():
            return mapped
        tls = sorted(k for k in mapped.query if k.startswith("ssl"))
        if tls == ["ssl_disabled"] and str(mapped.query["ssl_disabled"]).lower() in _TRUE:
            return mapped.difference_update_query(tls)
        if tls:
            return (
                f"AsyncStore's driver aiomysql takes no {', '.join(tls)} option of "
                "PyMySQL: its TLS needs an ssl.SSLContext (engine_options="
                "{'connect_args': {'ssl': context}}), and it connects without TLS unless "
                "given one"
            )
        return mapped

    # -- engine and tables ------------------------------------------------------------------
    scheme_aliases: Mapping[str, str] = MappingProxyType({"maria": "mariadb+pymysql"})
    #: InnoDB refuses a delete whose ON DELETE CASCADE / SET NULL reaches rows 15 levels down.
    max_cascade_levels: int | None = 14

    def missing_table(self, error: BaseException) -> bool:
        codes = {getattr(error, "sqlstate", None), error.args[0] if error.args else None}
        return bool(codes & {"42S02", 1146})  # ER_NO_SUCH_TABLE

    def names_missing(self, error: BaseException, name: str) -> bool:
        return f".{name}' doesn't exist" in str(error)

    # -- command line (cli, web, catalog upgrade) -------------------------------------------
    suggested_driver = "pymysql"
    driver_extra = "mariadb"
    url_example = "mysql+pymysql://USER@HOST/DB"
    #: The modules of the drivers whose errors are ``(code, message)``.
    coded_drivers: tuple[str, ...] = ("pymysql", "MySQLdb")

    def refused_url(self, url: sa.URL) -> str | None:
        """``?charset=`` must name a character set the driver knows."""
        if "charset" not in url.query or url.get_driver_name() != "pymysql":
            return None
        from pymysql.charset import charset_by_name

        charset = url.query["charset"]
        for name in [charset] if isinstance(charset, str) else list(charset):
            try:
                known = charset_by_name(name) is not None
            except (KeyError, AttributeError):
                known = False
            if not known:
                return (
                    f"unknown MySQL character set {name!r} in ?charset= "
                    f"(entityworks uses {CHARSET} when none is given)"
                )
        return None

    def read_only_connect_args(self, url: sa.URL) -> dict[str, Any]:
        # the client flags the URL gives (client_flag=...), less MULTI_STATEMENTS, plus the
        # FOUND_ROWS SQLAlchemy adds (these connect_args replace its value)
        try:
            given = int(str(url.query.get("client_flag", 0)))
        except ValueError:
            given = 0
        return {"client_flag": (given & ~_MULTI_STATEMENTS) | _FOUND_ROWS}

    def begin_read_only(self, conn: sa.Connection) -> None:
        # the session's too: inside START TRANSACTION READ ONLY alone, DDL commits
        # implicitly and runs (the driver runs one statement a call: no multi-statements)
        conn.exec_driver_sql("SET SESSION TRANSACTION READ ONLY")
        conn.exec_driver_sql("START TRANSACTION READ ONLY")

    def quick_connect_args(self, seconds: int) -> dict[str, Any]:
        return {"connect_timeout": seconds, "read_timeout": seconds}

    def declared_columns(
        self, conn: sa.Connection, inspector: Any, table_name: str
    ) -> list[tuple[str, str]]:
        # information_schema has the declared COLUMN_TYPE (SQLAlchemy reads SHOW CREATE
        # TABLE, and loses a column whose name holds a line break); the name is bound
        rows = conn.execute(
            sa.text(
                "SELECT COLUMN_NAME, COLUMN_TYPE FROM information_schema.COLUMNS "
                "WHERE TABLE_SCHEMA = DATABASE() AND BINARY TABLE_NAME = BINARY :name "
                "ORDER BY ORDINAL_POSITION"
            ),
            {"name": table_name},
        ).all()
        return [(str(n), str(t)) for n, t in rows]

    def driver_message(self, error: BaseException) -> str | None:
        # PyMySQL's (1045, "Access denied ...") as "Access denied ... (MariaDB error 1045)"
        args = error.args
        if (
            len(args) == 2
            and isinstance(args[0], int)
            and isinstance(args[1], str)
            and type(error).__module__.startswith(self.coded_drivers)
        ):
            return f"{args[1]} ({self.title} error {args[0]})"
        return None

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

    #: JSON is LONGTEXT with a CHECK: a text column of an older table is bound alike
    json_as_text = True

    def json_type(self) -> sa.types.TypeEngine[Any] | None:
        return _MariaDBJson()

    def json_compare(
        self,
        column: Any,
        path: tuple[str | int, ...],
        op: str,
        value: Any,
        *,
        definite: bool = False,
    ) -> sa.ColumnElement[bool]:
        from ._json import COMPARE, kind, maybe, path_text

        where = sa.literal(path_text(path), sa.String())
        found = _json_found(column, path)
        what = kind(value)
        if what == "bool":  # == and != only (the filter refuses the others)
            same = sa.func.json_extract(column, where) == ("true" if value else "false")
            return maybe(found, ["BOOLEAN"], same if op == "==" else sa.not_(same), definite)
        scalar = sa.func.json_value(column, where)
        if what == "number":
            # a number as a DOUBLE (see the how-to: ints beyond 2**53 compare rounded)
            target: Any = sa.cast(scalar, sa.Double())
            bound: Any = sa.literal(float(value), sa.Double())
            kinds = ["INTEGER", "DOUBLE"]
        else:
            # text by its UTF-8 bytes: by code point, as Python compares str
            target = sa.cast(scalar, sa.LargeBinary())
            bound = sa.literal(value.encode(), sa.LargeBinary())
            kinds = ["STRING"]
        return maybe(found, kinds, COMPARE[op](target, bound), definite)

    def json_contains(
        self, column: Any, path: tuple[str | int, ...], candidate: Any
    ) -> sa.ColumnElement[bool]:
        from ._json import contained_parts

        inside = contained_parts(
            column, path, candidate, self.json_compare, _json_shape, self._json_array_has
        )
        found = _json_found(column, path)
        return sa.case((found.is_not(None), inside))

    def _json_array_has(
        self, column: Any, path: tuple[str | int, ...], value: Any
    ) -> sa.ColumnElement[bool]:
        """The array at ``path`` has an element of ``value``'s kind equal to it (by
        JSON_TABLE over the array; JSON_CONTAINS would also look into nested arrays)."""
        from ._json import path_text

        return _ArrayHas(column, sa.literal(path_text(path) + "[*]", sa.String()), value)

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

    # -- types --
    #: Every DOUBLE expression turns -0.0 into 0.
    keeps_negative_zero = False

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
        # asyncio: the point path's connection kept per thread is a sync driver's
        return not self.on_asyncio

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

    reads_own_cursor = True

    def reads_raw_cursor(self) -> bool:
        # SQLAlchemy's Result costs a third of a read of small rows; under an AsyncStore
        # its Result reads the adapted driver's rows (it buffers a streamed cursor's)
        return not self.on_asyncio

    def read_form(
        self, impl: sa.types.TypeEngine[Any], column: sa.Column[Any], parts: Sequence[Any]
    ) -> tuple[sa.ColumnElement[Any], ...] | None:
        # A DECIMAL(65, 30) beside its scale companion: the server cuts the column's text to
        # the scale, so that the driver reads one short text and no companion (PyMySQL
        # reads a third column and makes a Decimal of 36 digits, which a quantize then
        # cuts: 0.75x of the two-column read). Only where the cut digits are zeros and the
        # scale one a write stores; else the whole text beside the scale, which the
        # companion's join reads, or refuses, as it reads the stored columns.
        places = getattr(impl, "scale", None)
        if len(parts) != 1 or parts[0][0].suffix != "scale" or not isinstance(places, int):
            return None
        value, scale = column, parts[0][1]
        whole: sa.ColumnElement[int] = sa.literal_column(str(places))
        cut = whole - scale
        usual = sa.and_(
            scale.between(sa.literal_column("0"), whole), value == sa.func.truncate(value, scale)
        )
        text = sa.case(
            (usual, sa.func.left(value, sa.func.char_length(value) - cut)),
            else_=sa.cast(value, sa.CHAR),
        )
        return (
            sa.type_coerce(text, column.type).label(column.name),
            sa.type_coerce(sa.case((usual, sa.null()), else_=scale), scale.type).label(scale.name),
        )

    def read_cursor(self, dbapi_connection: Any, stream: bool) -> Any:
        if not stream:
            return super().read_cursor(dbapi_connection, stream)
        # unbuffered: rows read from the socket as they are fetched (another driver: its
        # default cursor)
        if type(dbapi_connection).__module__.startswith("pymysql"):
            from pymysql.cursors import SSCursor

            return dbapi_connection.cursor(SSCursor)
        return super().read_cursor(dbapi_connection, stream)

    # -- exchange --
    def take_named_lock(self, conn: sa.Connection, name: str, seconds: int) -> bool:
        got = conn.execute(
            sa.select(sa.func.get_lock(sa.bindparam("n", name), sa.bindparam("s", seconds)))
        ).scalar()
        return got == 1

    def release_named_lock(self, conn: sa.Connection, name: str) -> None:
        conn.execute(sa.select(sa.func.release_lock(sa.bindparam("n", name))))

    def named_lock_free(self, conn: sa.Connection, name: str) -> bool:
        free = conn.execute(sa.select(sa.func.is_free_lock(sa.bindparam("n", name)))).scalar()
        return free == 1

    def commented_tables(self, conn: sa.Connection, prefix: str) -> list[tuple[str, str]]:
        # one query (SQLAlchemy's reflection reads SHOW CREATE TABLE table by table)
        rows = conn.execute(
            sa.text(
                "SELECT table_name, table_comment FROM information_schema.tables "
                "WHERE table_schema = DATABASE() AND table_comment LIKE :marked"
            ),
            {"marked": prefix + "%"},
        ).all()
        # LIKE narrows (a wildcard in the prefix matches more); the prefix itself decides
        return [(str(n), str(c)) for n, c in rows if str(c).startswith(prefix)]

    def table_references(self, conn: sa.Connection) -> list[tuple[str, str]]:
        rows = conn.execute(
            sa.text(
                "SELECT table_name, referenced_table_name FROM "
                "information_schema.referential_constraints "
                "WHERE constraint_schema = DATABASE()"
            )
        ).all()
        return [(str(child), str(parent)) for child, parent in rows]

    @contextmanager
    def tables_write_locked(self, conn: sa.Connection, names: Sequence[str]) -> Iterator[None]:
        """``LOCK TABLES ... WRITE``, which waits for every transaction that has written to
        them and keeps other sessions out until ``UNLOCK TABLES``."""
        quote = conn.dialect.identifier_preparer.quote
        conn.exec_driver_sql("LOCK TABLES " + ", ".join(f"{quote(n)} WRITE" for n in names))
        try:
            yield
        finally:
            conn.exec_driver_sql("UNLOCK TABLES")

    # -- writing (pipeline) ----------------------------------------------------------------
    def bind_processor(
        self, impl: sa.types.TypeEngine[Any], dialect: sa.Dialect, stored: str | None
    ) -> Callable[[Any], Any] | None:
        # PyMySQL binds bytes as a binary literal itself (SQLAlchemy's processor calls its
        # Binary, which is ``bytes()`` of each value)
        if plain_binary(impl):
            return None
        return super().bind_processor(impl, dialect, stored)

    def _raw_insert(self, rows: RowWriter) -> str | None:
        """The INSERT compiled for PyMySQL's own ``executemany`` (``%s`` placeholders in
        the order of ``model.names``), or None where its text before VALUES differs from
        the store's dialect's."""
        cache = rows.cache
        if "mariadb:insert" not in cache:
            twin = _format_twin(rows.dialect)
            compiled, own = rows.compiled_for(twin)
            same = compiled and compiled.partition(" VALUES ")[0] == own.partition(" VALUES ")[0]
            cache["mariadb:insert"] = compiled if same else ""
        return cache["mariadb:insert"] or None

    def _raw_keyless_insert(self, rows: RowWriter) -> str | None:
        """:meth:`_raw_insert` without the single key column, whose AUTO_INCREMENT gives
        each row its key (the rows of ``RowWriter.keyless``: no NULL key sent and escaped
        per row), or None where its placeholders or its text before VALUES differ from
        the store's dialect's."""
        names = _keyless_names(rows)
        return None if names is None else self._raw_insert_of(rows, names)

    def _raw_insert_of(self, rows: RowWriter, names: Sequence[str]) -> str | None:
        """The INSERT of the columns ``names`` (in that order) for PyMySQL's own
        ``executemany``, or None where its placeholders or its text before VALUES differ
        from the store's dialect's; the others take their default (NULL)."""
        cache = rows.cache
        kind = "mariadb:insert-of:" + "\x00".join(names)  # (no SQL name holds a NUL)
        if kind not in cache:
            insert = rows.model.table.insert()
            compiled = insert.compile(dialect=_format_twin(rows.dialect), column_keys=names)
            order = [compiled.binds[n].key for n in compiled.positiontup or []]
            own = insert.compile(dialect=rows.dialect, column_keys=names).string
            same = (
                order == list(names)
                and compiled.string.partition(" VALUES ")[0] == own.partition(" VALUES ")[0]
            )
            cache[kind] = compiled.string if same else ""
        return cache[kind] or None

    def _without_null_companions(
        self, rows: RowWriter, sql: str, bound: list[Sequence[Any]], names: Sequence[str]
    ) -> tuple[str, list[Sequence[Any]]]:
        """``(sql, bound)`` without the companion columns that are NULL in every row (a
        float column's -0.0 mark, most of the time): PyMySQL escapes each value sent, a
        NULL as dearly as a number, and the column's default is that NULL already. As
        given where no companion column is NULL throughout, or where that INSERT differs."""
        plan = rows.model.codec.plan
        all_names = rows.model.names
        companions = {all_names[j] for _main, extra, _parts, _info in plan for j in extra}
        if not companions or not bound:
            return sql, bound
        total = len(bound)
        dropped = {
            i
            for i, name in enumerate(names)
            if name in companions and countOf(map(itemgetter(i), bound), None) == total
        }
        if not dropped or len(dropped) == len(names):
            return sql, bound
        kept = [i for i in range(len(names)) if i not in dropped]
        narrower = self._raw_insert_of(rows, [names[i] for i in kept])
        if narrower is None:
            return sql, bound
        if len(kept) == 1:
            (only,) = kept
            return narrower, [(row[only],) for row in bound]
        return narrower, list(map(itemgetter(*kept), bound))

    def write_rows(self, conn: sa.Connection, rows: RowWriter) -> None:
        """An insert: PyMySQL's ``executemany`` (multi-row INSERTs) of the rows encoded a
        column at a time; refused, SQLAlchemy's, which locates the row. Upserts: the
        default, its guard's error explained."""
        sql = self._raw_insert(rows) if rows.kind == "insert" else None
        if sql is not None:
            sql, bound = self._without_null_companions(rows, sql, rows.bound(), rows.model.names)
            cursor = rows.cursor()
            try:
                if rows.attempt(
                    lambda: cursor.executemany(sql, rows.logged(sql, bound, "executemany"))
                ):
                    return
            finally:
                cursor.close()
        super().write_rows(conn, rows)

    def _consecutive(self, conn: sa.Connection) -> int:
        """The step between the keys of one multi-row INSERT's rows, or 0 where they may
        not be consecutive (``innodb_autoinc_lock_mode`` 2)."""
        engine = conn.engine
        mode = _LOCK_MODES.get(engine)
        if mode is None:
            mode = _LOCK_MODES[engine] = int(
                conn.exec_driver_sql("SELECT @@innodb_autoinc_lock_mode").scalar_one()
            )
        if mode not in (0, 1):
            return 0
        return int(conn.exec_driver_sql("SELECT @@auto_increment_increment").scalar_one())

    def insert_generated(self, conn: sa.Connection, rows: RowWriter) -> Sequence[Any]:
        """Multi-row INSERTs of about :data:`INSERT_BYTES` each (one for most batches), the
        key left out (or NULL where the rows cannot go without it) and every value a bound
        parameter: under ``innodb_autoinc_lock_mode`` 0 or
        1 the rows of one such INSERT get consecutive keys (``auto_increment_increment``
        apart) from ``LAST_INSERT_ID()``, which PyMySQL reads as the cursor's ``lastrowid``.
        Elsewhere, or for a refused batch (then located), the default ``INSERT ...
        RETURNING``."""
        sql = self._raw_insert(rows)
        step = self._consecutive(conn) if sql is not None else 0
        if sql is None or not step:
            return super().insert_generated(conn, rows)
        # the rows without their key where that form applies (the key's NULL not sent)
        keyless = self._raw_keyless_insert(rows)
        sent = rows.keyless() if keyless is not None else None
        names: Sequence[str] | None = rows.model.names
        if keyless is not None and sent is not None:
            sql, bound, names = keyless, sent, _keyless_names(rows)
        else:
            bound = rows.bound()
        sql, bound = self._without_null_companions(rows, sql, bound, names or rows.model.names)
        head, _, values = sql.partition(" VALUES ")
        width = max(1, values.count("%s"))
        per = max(1, _MAX_PARAMETERS // width)
        keys: list[Any] = []
        statements: dict[int, str] = {}

        def send() -> None:
            cursor = rows.cursor()
            try:
                sent = rows.logged(sql, bound, "multi-row INSERT")
                for start, end in _statement_rows(sent, per):
                    flush(cursor, sent[start:end])
            finally:
                cursor.close()

        def flush(cursor: Any, chunk: Sequence[Any]) -> None:
            count = len(chunk)
            statement = statements.get(count)
            if statement is None:
                statement = statements[count] = f"{head} VALUES {','.join([values] * count)}"
            cursor.execute(statement, list(chain.from_iterable(chunk)))
            first = cursor.lastrowid
            keys.extend(range(first, first + step * count, step))

        if rows.attempt(send):
            return keys
        return super().insert_generated(conn, rows)


def _keyless_names(rows: RowWriter) -> list[str] | None:
    """The table's SQL column names but its single key's, or None where it has no single
    key column."""
    model = rows.model
    key = model.schema.primary_key
    if key is None:
        return None
    names = [n for n in model.names if n != key.name]
    return names if len(names) == len(model.names) - 1 else None


def _format_twin(dialect: sa.Dialect) -> Any:
    """The store's dialect compiling with PyMySQL's own ``%s`` placeholders."""
    return dialect_twin(
        dialect, "format", ("is_mariadb", "server_version_info", "default_schema_name")
    )


def _statement_rows(rows: Sequence[Sequence[Any]], most: int) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of the rows of each multi-row INSERT: at most ``most`` rows, and
    each ends with the row that brings its bytes to :data:`INSERT_BYTES` (a text or bytes
    value counts its length, any other 24). The sizes are counted a column at a time."""
    total = len(rows)
    if not total:
        return
    sizes: list[int] | None = None  # None: every row's size is ``fixed``
    fixed = 0
    for column in zip(*rows, strict=True):
        kinds = list(map(type, column))
        if not countOf(kinds, str) + countOf(kinds, bytes):
            fixed += 24
            continue
        lengths = [
            len(v) if k is str or k is bytes else 24 for v, k in zip(column, kinds, strict=True)
        ]
        sizes = lengths if sizes is None else list(map(add, sizes, lengths))
    if sizes is None:  # no text: as many rows as reach INSERT_BYTES, at most ``most``
        step = min(most, max(1, -(-INSERT_BYTES // fixed))) if fixed else most
        for start in range(0, total, step):
            yield start, min(start + step, total)
        return
    if fixed:
        sizes = [size + fixed for size in sizes]
    ends = list(accumulate(sizes))  # bytes of the rows up to each one, inclusive
    start = 0
    while start < total:
        before = ends[start - 1] if start else 0
        # the first row whose running size from ``start`` reaches INSERT_BYTES ends it
        end = min(bisect_left(ends, before + INSERT_BYTES, start) + 1, start + most, total)
        yield start, end
        start = end


__all__ = ["CHARSET", "COLLATION", "INSERT_BYTES", "LOCK_NAME", "MariaDB"]


class _MariaDBJson(sa.types.UserDefinedType[Any]):
    """MariaDB's JSON (LONGTEXT with a CHECK of ``JSON_VALID``): the JSON text entityworks
    writes, kept as it is (key order, float spelling); NaN and Infinity, which are no JSON,
    are refused before the server's CHECK would."""

    cache_ok = True

    def get_col_spec(self, **kw: Any) -> str:
        return "JSON"

    def bind_processor(self, dialect: sa.Dialect) -> Callable[[Any], Any] | None:
        from ._json import refuse_constants

        return refuse_constants


def _json_shape(column: Any, path: tuple[str | int, ...], shape: str) -> sa.ColumnElement[bool]:
    return sa.func.coalesce(_json_found(column, path), "") == shape.upper()


class _ArrayHas(sa.sql.expression.ColumnElement[bool]):
    """``EXISTS (SELECT 1 FROM JSON_TABLE(doc, path COLUMNS (v JSON PATH '$')) ...)``:
    an element of the array at ``path`` (ending in ``[*]``) of ``value``'s kind equal to
    it; ``value`` is a bound parameter."""

    inherit_cache = False
    type = sa.Boolean()

    def __init__(self, doc: Any, path: Any, value: Any) -> None:
        self.doc = doc
        self.path = path
        self.value = value


@compiles(_ArrayHas, "mariadb")
@compiles(_ArrayHas, "mysql")
def _array_has_sql(element: _ArrayHas, compiler: Any, **kw: Any) -> str:
    from ._json import kind

    doc = compiler.process(element.doc, **kw)
    path = compiler.process(element.path, **kw)
    value = element.value
    what = kind(value)
    if what == "bool":
        test = "JSON_TYPE(ew_items.v) = 'BOOLEAN' AND ew_items.v = " + (
            "'true'" if value else "'false'"
        )
    elif what == "number":
        bound = compiler.process(sa.literal(float(value), sa.Double()), **kw)
        test = (
            "JSON_TYPE(ew_items.v) IN ('INTEGER', 'DOUBLE') AND "
            f"CAST(ew_items.v AS DOUBLE) = {bound}"
        )
    else:
        bound = compiler.process(sa.literal(value.encode(), sa.LargeBinary()), **kw)
        test = (
            "JSON_TYPE(ew_items.v) = 'STRING' AND "
            f"CAST(JSON_UNQUOTE(ew_items.v) AS BINARY) = {bound}"
        )
    return (
        f"EXISTS (SELECT 1 FROM JSON_TABLE({doc}, {path} COLUMNS "
        f"(v JSON PATH '$')) AS ew_items WHERE {test})"
    )

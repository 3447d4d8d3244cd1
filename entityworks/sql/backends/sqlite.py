"""SQLite: pragmas and our own ``BEGIN`` on each connection, rows on the raw cursor, the
one-row point path on files, STRICT tables (INTEGER, REAL, TEXT columns with type affinity;
the ANY columns, held by a CHECK on ``typeof``, of tables entityworks 0.2.3 wrote).
"""

from __future__ import annotations

import functools
import sqlite3
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import closing
from itertools import chain, islice
from operator import ne
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.pool import StaticPool
from sqlalchemy.sql.compiler import SQLCompiler

from ...errors import InvalidNameError
from ...types.encoding import Processor, rule, skip_none
from .._like import LIKE_FUNCTION, like_matches
from .._likesql import LikeMatch
from .base import (
    CONFIGURING,
    TYPEOF_CHECK,
    Backend,
    RowWriter,
    has_ours,
    marked,
    setup_statement,
    storage_class,
)
from .light import quote
from .upserts import on_conflict

if TYPE_CHECKING:
    from ...model.schema import Column, TableSchema


class SQLiteAny(sa.types.UserDefinedType[Any]):
    """SQLite's ``ANY``: a STRICT column that stores each value as it is bound, never converting
    it, with a ``CHECK`` on ``typeof``: how entityworks 0.2.3 declared int, float and str
    columns, mirrored for such tables (see ``tables``)."""

    cache_ok: bool | None = True

    def get_col_spec(self, **_kw: Any) -> str:
        return "ANY"

    def compare_against_backend(self, dialect: sa.Dialect, conn_type: Any) -> bool | None:
        """For Alembic's autogenerate: SQLAlchemy reflects ``ANY`` as NUMERIC (SQLite's
        affinity for an unknown name), which is this type; anything else is a difference."""
        return isinstance(conn_type, sa.Numeric | sa.types.NullType) or None


#: SQLite's primary result codes for "database is locked", "unable to open database file"
#: and "file is not a database".
SQLITE_BUSY = 5
SQLITE_CANTOPEN = 14
SQLITE_NOTADB = 26


def switch_to_wal(cursor: Any, busy_timeout: float) -> None:
    """Put the connection's database in WAL mode, waiting up to ``busy_timeout`` seconds
    for another connection's write lock.

    The switch writes the file's header from inside a read transaction, and SQLite answers
    such an upgrade with "database is locked" at once, without its busy handler: two
    processes opening one new file together would fail the second. So the wait is here."""
    deadline = time.monotonic() + busy_timeout
    pause = 0.001
    while True:
        try:
            setup_statement(cursor, "PRAGMA journal_mode=WAL")
            return
        except Exception as exc:
            busy = (getattr(exc, "sqlite_errorcode", 0) & 0xFF) == SQLITE_BUSY
            if not busy or time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


#: Rows per statement of :func:`insert_driver_rows`: one INSERT of many rows runs one
#: prepared statement for all of them, less work for SQLite than as many one-row
#: executions (see the benchmark record).
ROWS_PER_INSERT = 64
#: Parameters a statement may hold on the oldest SQLite the driver may link (999; 32766
#: since 3.32).
SQLITE_PARAMETERS = 999
#: SQLite's largest rowid: past it, a NULL key gets a random unused one.
MAX_ROWID = 2**63 - 1


def refuse_nan(value: Any) -> Any:
    """A float SQLite can store: NaN would become NULL."""
    if value != value:
        raise ValueError(
            "SQLite cannot store NaN (it would become NULL); use PostgreSQL or "
            "a NOT NULL column, where it is refused"
        )
    return value


def no_nan(values: Sequence[Any]) -> bool:
    """True when a column holds no NaN (which SQLite would store as NULL)."""
    return not any(map(ne, values, values))


def insert_driver_rows(
    rows: RowWriter,
    cursor: Any,
    sql_rows: Iterable[Sequence[Any]],
    count: int,
    compiled: Callable[[int], str | None] | None = None,
) -> None:
    """Insert the ``count`` SQL rows of ``sql_rows`` (bound for the driver, a list or a
    stream) with the driver's own cursor: as many as fill whole statements of
    :data:`ROWS_PER_INSERT` rows (fewer for a wide table) that way, the rest one row per
    execution. ``compiled``: the INSERT of n rows (by default ``rows.compiled``)."""
    compiled = compiled or rows.compiled
    per = min(ROWS_PER_INSERT, SQLITE_PARAMETERS // max(1, len(rows.model.names)))
    whole = count // per if per > 1 else 0
    statement = compiled(per) if whole else None
    single = compiled(1)
    assert single is not None
    # logged as the one-row statement it repeats (the rows listed only at DEBUG)
    how = "executemany" if statement is None else f"executemany, {per} to a statement"
    rest = iter(rows.logged(single, sql_rows, how))
    if statement is not None:
        cursor.executemany(
            statement, (tuple(chain.from_iterable(islice(rest, per))) for _ in range(whole))
        )
        whole *= per
    else:
        whole = 0
    if whole < count:
        cursor.executemany(single, rest)


def memory(url: sa.URL) -> bool:
    """True for an in-memory database (one connection: one database)."""
    return url.database in (None, "", ":memory:")


# -- engine and tables ----------------------------------------------------------------------
#: Column type names a STRICT table accepts.
STRICT_TYPES = frozenset({"INT", "INTEGER", "REAL", "TEXT", "BLOB", "ANY"})
#: The storage classes (``typeof``) of an ANY column's CHECK, as Python types.
TYPEOF_TYPES: dict[str, type] = {"integer": int, "real": float, "text": str}


def is_rowid(column: Column, schema: TableSchema) -> bool:
    """True for an integer key SQLite keeps as the rowid (it must be declared INTEGER)."""
    return (
        column.primary_key
        and schema.parent is None
        and not schema.composite
        and storage_class(column.info) == "integer"
    )


def legacy_any(column: Column, schema: TableSchema, live: Mapping[str, str] | None) -> str | None:
    """The ``typeof`` of ``column`` when its existing table (``live``) declares it ``ANY``
    with our ``CHECK`` on ``typeof`` (entityworks 0.2.3 and before), else ``None``: a new
    column gets its natural type (see ``entityworks.sql.tables``)."""
    typeof = storage_class(column.info)
    if typeof is None or live is None or live.get(column.sql_name) != "ANY":
        return None
    if is_rowid(column, schema):
        return None  # declared INTEGER in any case (the rowid)
    return typeof


def strict_ok(items: Sequence[sa.schema.SchemaItem]) -> bool:
    """True when SQLite supports STRICT and every column type has a STRICT name.

    A user-registered type with another SQL name keeps an ordinary table.
    """
    if sqlite3.sqlite_version_info < (3, 37, 0):
        return False
    from sqlalchemy.dialects import sqlite

    dialect = sqlite.dialect()
    names = [
        i.type.compile(dialect=dialect).split("(")[0].upper()
        for i in items
        if isinstance(i, sa.Column)
    ]
    return all(name in STRICT_TYPES for name in names)


def _no_attach(action: int, *_args: Any) -> int:
    """An SQLite authorizer that refuses ATTACH and DETACH (see ``begin_read_only``)."""
    return (
        sqlite3.SQLITE_DENY
        if action in (sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH)
        else sqlite3.SQLITE_OK
    )


class SQLite(Backend):
    """SQLite through sqlite3 (pysqlite)."""

    name = "sqlite"
    asyncio_drivers: Mapping[str, str] = MappingProxyType(
        {"": "aiosqlite", "pysqlite": "aiosqlite"}
    )
    locks_rows = False
    text_values = True
    strict_numbers = True
    keeps_decimal_scale: bool = False
    no_limit: int | None = -1
    pings_idle = False

    # -- command line (cli, web, catalog upgrade) -------------------------------------------
    url_example = "sqlite:///PATH"
    serial_writes = True

    def database_file(self, url: sa.URL) -> Path | None:
        return None if memory(url) else Path(str(url.database))

    def read_only_url(self, path: Path) -> sa.URL:
        # an SQLite URI ('#', '?' and '%' quoted: else "a#b.db" opens the file "a"), in a
        # URL object, as SQLAlchemy would unquote them in a URL string
        return sa.URL.create(
            "sqlite", database=path.resolve().as_uri(), query={"mode": "ro", "uri": "true"}
        )

    def begin_read_only(self, conn: sa.Connection) -> None:
        # with a file opened mode=ro (read_only_url); the driver runs one statement a call.
        # ATTACH would create the file it names (and could open it read-write): refused by
        # SQLite's authorizer, as DETACH
        conn.exec_driver_sql("PRAGMA query_only = ON")
        dbapi_connection: Any = conn.connection.dbapi_connection
        dbapi_connection.set_authorizer(_no_attach)

    def memory_url(self) -> sa.URL:
        return sa.make_url("sqlite://")

    def declared_columns(
        self, conn: sa.Connection, inspector: Any, table_name: str
    ) -> list[tuple[str, str]]:
        # each column's type as written (SQLAlchemy's reflection gives its affinity instead)
        rows: Sequence[Any] = conn.execute(
            sa.select(sa.column("name"), sa.column("type"), sa.column("hidden"))
            .select_from(sa.func.pragma_table_xinfo(table_name))
            .order_by(sa.column("cid"))
        ).all()
        return [(str(n), str(t or "")) for n, t, hidden in rows if hidden != 1]

    def foreign_keys(
        self, conn: sa.Connection, inspector: Any, table_name: str
    ) -> list[tuple[list[str], str, list[str], str]]:
        # SQLAlchemy reads ON DELETE from a FOREIGN KEY clause only, not from a column's
        # own REFERENCES ... ON DELETE CASCADE; the pragma knows both
        rows: Sequence[Any] = conn.execute(
            sa.select(
                sa.column("id"),
                sa.column("seq"),
                sa.column("table"),
                sa.column("from"),
                sa.column("to"),
                sa.column("on_delete"),
            )
            .select_from(sa.func.pragma_foreign_key_list(table_name))
            .order_by(sa.column("id"), sa.column("seq"))
        ).all()
        keys: dict[int, tuple[list[str], str, list[str], str]] = {}
        for key, _seq, referred, column, to, on_delete in rows:
            found = keys.setdefault(key, ([], str(referred), [], str(on_delete).lower()))
            found[0].append(str(column))
            if to is not None:
                found[2].append(str(to))
        for _columns, referred, to, _action in keys.values():
            if not to:  # REFERENCES t without columns: t's primary key
                pk = inspector.get_pk_constraint(referred).get("constrained_columns") or []
                to.extend(pk)
        return list(keys.values())

    def driver_errors(self) -> tuple[type[BaseException], ...]:
        driver = sys.modules.get("sqlite3")
        return (driver.Error,) if driver is not None else ()

    def engine_arguments(
        self, url: sa.URL, echo: bool, options: dict[str, Any], busy_timeout: float
    ) -> tuple[sa.URL, dict[str, Any]]:
        kwargs: dict[str, Any] = {"echo": echo, **options}
        kwargs["connect_args"] = {
            "timeout": busy_timeout,
            "check_same_thread": False,
            **options.get("connect_args", {}),
        }
        if memory(url):
            kwargs["poolclass"] = StaticPool  # one connection: one database
        return url, kwargs

    def refused_option(self, name: str, url: sa.URL) -> str | None:
        if name == "poolclass" and memory(url):
            return (
                "engine_options: 'poolclass' is set by the Store for an in-memory SQLite "
                "database (StaticPool: every connection sees the same database)"
            )
        return None

    def refused_options(self, options: dict[str, Any]) -> str | None:
        if "timeout" in options.get("connect_args", {}):
            return (
                "engine_options: connect_args 'timeout' is the Store's busy_timeout; use "
                "Store(busy_timeout=...)"
            )
        return None

    def refused_isolation(self, level: Any) -> str | None:
        return (
            f"engine_options: isolation_level {level!r} on SQLite: the Store begins its "
            "own transactions there (BEGIN, or BEGIN IMMEDIATE to write)"
        )

    def refused_driver(self, engine: sa.Engine) -> str | None:
        driver = engine.dialect.driver
        if driver not in ("pysqlite", "pysqlcipher"):
            return (
                f"engine=: SQLite through the {driver!r} driver: the Store sets up "
                "sqlite3 connections only (its own transactions, pragmas); use "
                "sqlite+pysqlite"
            )
        return None

    def refused_pool(self, engine: sa.Engine) -> str | None:
        if memory(engine.url) and not isinstance(engine.pool, StaticPool):
            return (
                f"engine=: an in-memory SQLite engine with a {type(engine.pool).__name__}: "
                "connections could see different databases; create it with "
                "poolclass=sqlalchemy.pool.StaticPool and "
                "connect_args={'check_same_thread': False}"
            )
        return None

    def connection_setup(
        self, engine: sa.Engine, busy_timeout: float, *, adopted: bool
    ) -> Callable[[Any], None] | None:
        url = engine.url
        in_memory = memory(url)
        # a read-only URI (sqlite:///file:x.db?mode=ro&uri=true) must not switch the file's
        # journal to WAL: that is a write, refused on a file in rollback-journal mode
        read_only = url.query.get("mode") == "ro" or url.query.get("immutable") == "1"
        # Reflect our STRICT tables' ANY columns as ANY (SQLAlchemy would say NUMERIC, by
        # SQLite's affinity rules), so that schema comparisons see the real type.
        engine.dialect.ischema_names = {  # type: ignore[attr-defined]
            **engine.dialect.ischema_names,  # type: ignore
            "ANY": SQLiteAny,
        }

        def setup(dbapi_connection: Any) -> None:
            dbapi_connection.isolation_level = None  # BEGIN is ours (see begin)
            cursor = dbapi_connection.cursor()
            if adopted:  # the store's own engines pass it as the driver's timeout
                setup_statement(cursor, f"PRAGMA busy_timeout={int(busy_timeout * 1000)}")
            if not in_memory and not read_only:
                switch_to_wal(cursor, busy_timeout)
                setup_statement(cursor, "PRAGMA synchronous=NORMAL")
            setup_statement(cursor, "PRAGMA foreign_keys=ON")
            # LIKE compares case as PostgreSQL's and MariaDB's (binary collation) LIKE do.
            setup_statement(cursor, "PRAGMA case_sensitive_like=ON")
            cursor.close()
            # LIKE filters match text holding NUL with it (SQLite's LIKE stops at a NUL).
            dbapi_connection.create_function(LIKE_FUNCTION, 2, like_matches, deterministic=True)

        @marked
        def begin(conn: sa.Connection) -> None:
            # Writers take the lock up front so that the busy timeout applies instead of a
            # deadlock-avoidance error when two readers both try to upgrade.
            # (the driver's connection: sqlite3's, or aiosqlite's under an AsyncStore)
            if conn.connection.driver_connection.in_transaction:  # type: ignore[union-attr]
                return  # begun by a listener of an engine sharing this one's pool
            write = conn.get_execution_options().get("entityworks_write", False)
            conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

        with CONFIGURING:
            if not has_ours(engine.dispatch.begin):
                event.listen(engine, "begin", begin)
        return setup

    def bounded_text(self, length: int) -> sa.types.TypeEngine[Any] | None:
        return sa.Text()  # STRICT tables know no VARCHAR (a CHECK keeps the length)

    # -- types --
    #: A REAL column stores -0.0 as 0.
    keeps_negative_zero = False

    def big_integer(self) -> sa.types.TypeEngine[Any] | None:
        return sa.Integer()  # an integer key is the rowid (generated) only as INTEGER

    def small_integer(self) -> sa.types.TypeEngine[Any] | None:
        return sa.Integer()  # STRICT tables know no SMALLINT

    def double(self) -> sa.types.TypeEngine[Any] | None:
        return sa.REAL()  # the name STRICT tables accept

    def boolean(self) -> sa.types.TypeEngine[Any] | None:
        return sa.Integer()  # 0/1

    def reads_float_literal(self, text: str, value: float) -> bool:
        return _reads_float(text, value)

    def point_path(self, url: sa.URL) -> bool:
        # asyncio: the point path's connection kept per thread is a sync driver's
        return not self.on_asyncio and not memory(url) and "mode=memory" not in str(url)

    def point_connection(self, dbapi_connection: Any) -> None:
        # the set-up left it in autocommit (isolation_level None): a write statement takes
        # the write lock as it starts, waiting up to the busy timeout
        dbapi_connection.isolation_level = None

    def check_opened(self, dbapi_connection: Any) -> None:
        cursor = dbapi_connection.cursor()
        setup_statement(cursor, "PRAGMA schema_version")  # reads the file's header
        cursor.close()

    def unopenable(self, exc: BaseException, url: sa.URL, shown: str) -> str | None:
        code = getattr(exc, "sqlite_errorcode", 0) & 0xFF
        if memory(url) or code not in (SQLITE_CANTOPEN, SQLITE_NOTADB):
            return None
        path = Path(str(url.database).removeprefix("file:").partition("?")[0])
        if code == SQLITE_NOTADB:
            return (
                f"{shown} is not an SQLite database (SQLite: {exc}); give the path of a "
                "database file, or a new path to create one there"
            )
        if not path.parent.is_dir():
            return (
                f"cannot open SQLite database {shown}: the folder {path.parent} does not "
                f"exist; create it first (mkdir -p {path.parent})"
            )
        if path.is_dir():
            return f"cannot open SQLite database {shown}: it is a folder, not a file"
        return (
            f"cannot open SQLite database {shown} (SQLite: {exc}); check that you may "
            f"read it{'' if path.exists() else ' and create files in ' + str(path.parent)}"
        )

    def live_columns(
        self, conn: sa.Connection, schema: TableSchema, names: Sequence[str]
    ) -> dict[str, dict[str, str]]:
        inspector = sa.inspect(conn)
        live: dict[str, dict[str, str]] = {}
        for name in names:
            # a table-valued pragma: the table name is a bound parameter
            rows: Sequence[Any] = conn.execute(
                sa.select(sa.column("name"), sa.column("type")).select_from(
                    sa.func.pragma_table_info(name)
                )
            ).all()
            if rows:
                _same_name_in_case(schema, name, inspector.get_table_names())
                # An ANY column is trusted only with the CHECK on typeof we give it.
                checked = {
                    m.group(1)
                    for check in inspector.get_check_constraints(name)
                    if (m := TYPEOF_CHECK.search(check.get("sqltext") or ""))
                }
                live[name] = {n: (t or "").upper() + ("" if n in checked else "?") for n, t in rows}
        return live

    def stored_types(self, inspector: Any, table_name: str) -> dict[str, str]:
        return {
            m.group(1): m.group(2)
            for check in inspector.get_check_constraints(table_name)
            if (m := TYPEOF_CHECK.search(check.get("sqltext") or ""))
        }

    # -- engine and tables ------------------------------------------------------------------
    scheme_aliases: Mapping[str, str] = MappingProxyType({"sqlite3": "sqlite"})

    def older_column(
        self, column: Column, schema: TableSchema, live: Mapping[str, str] | None
    ) -> tuple[sa.types.TypeEngine[Any], list[sa.schema.SchemaItem]] | None:
        typeof = legacy_any(column, schema, live)
        if typeof is None:
            return None
        # On the column itself, so that an added column (ALTER TABLE ADD) keeps it too;
        # NULL passes here and NOT NULL decides, so adding a column can fill it later.
        # (This form costs SQLite a third less than ``typeof(x) IN (..., 'null')``.)
        name = quote(column.sql_name)
        check = sa.CheckConstraint(
            f"typeof({name}) = '{typeof}' OR {name} IS NULL", name=f"type_{column.sql_name}"
        )
        return SQLiteAny(), [check]

    def keeps_values(self, type_: sa.types.TypeEngine[Any]) -> bool:
        return isinstance(type_, SQLiteAny)

    def column_checks(self, column: Column, col: sa.Column[Any]) -> list[sa.schema.SchemaItem]:
        if column.max_length is None:
            return []
        # SQLite's TEXT has no length; keep VARCHAR(n)'s promise with a CHECK.
        return [
            sa.CheckConstraint(
                sa.func.length(col) <= column.max_length, name=f"length_{column.sql_name}"
            )
        ]

    def table_options(
        self, schema: TableSchema, items: Sequence[sa.schema.SchemaItem]
    ) -> dict[str, Any]:
        options: dict[str, Any] = {"sqlite_strict": True} if strict_ok(items) else {}
        if schema.parent is not None and schema.root.compact_children:
            options["sqlite_with_rowid"] = False
        return options

    def checked_python_types(self, inspector: Any, table_name: str) -> dict[str, type]:
        return {
            column: TYPEOF_TYPES[typeof]
            for column, typeof in self.stored_types(inspector, table_name).items()
            if typeof in TYPEOF_TYPES
        }

    def missing_table(self, error: BaseException) -> bool:
        return "no such table: " in str(error)

    def names_missing(self, error: BaseException, name: str) -> bool:
        message = str(error)
        return f"no such table: {name}" in message or f"no such table: main.{name}" in message

    def upsert(
        self, table: sa.Table, keys: list[str], others: list[str], restated: list[str]
    ) -> sa.Executable:
        from sqlalchemy.dialects import sqlite

        return on_conflict(sqlite.insert(table), table, keys, others, restated)

    def streams(self, children: bool) -> bool:
        return False

    # -- exchange --
    file_companions: tuple[str, ...] = ("-wal", "-shm", "-journal")

    def plain_file(self, url: sa.URL) -> str | None:
        path = url.database
        if not path or path == ":memory:" or path.startswith("file:"):
            return None
        return path

    def seal_file(self, path: Path) -> None:
        """Its write-ahead log checkpointed into it and removed (the Store turns WAL on
        again when it opens the file)."""
        from ...errors import EntityworksError

        with closing(sqlite3.connect(path)) as conn:
            mode = conn.execute("PRAGMA journal_mode=DELETE").fetchone()[0]
        if mode != "delete":
            raise EntityworksError(
                f"could not complete the new database {path.name}: its journal stays in "
                f"{mode!r} mode"
            )

    # -- writing (pipeline) ----------------------------------------------------------------
    def arrow_form(
        self, info: Any, suffixes: tuple[str, ...]
    ) -> Callable[[Any, bool], list[Sequence[Any]] | None] | None:
        """The text forms Arrow's kernels make of a field's column (``_arrowforms``), for a
        type whose rule is its whole SQL codec and a table of exactly the companions the
        form makes; None (one by one) for any other."""
        from .._arrowforms import TEXT_ARROW_FORMS

        found = TEXT_ARROW_FORMS.get(info.check) if info.check is not None else None
        if found is None or rule(info) is not info.check:
            return None
        storage, expected, form = found
        if getattr(info.sql_codec.column_type, "name", None) != storage or suffixes != expected:
            return None
        return form

    def value_refusal(
        self, info: Any, nullable: bool
    ) -> tuple[Callable[[Any], Any], Callable[[Sequence[Any]], bool]] | None:
        # a nullable REAL column would store NaN as NULL
        if storage_class(info) == "real" and nullable:
            return refuse_nan, no_nan
        return None

    def bind_processor(
        self, impl: sa.types.TypeEngine[Any], dialect: sa.Dialect, stored: str | None
    ) -> Processor:
        # STRICT tables: sqlite3 binds a value of one storage class itself, and bytes as a
        # BLOB (SQLAlchemy's processor would only wrap them)
        if stored is not None or isinstance(getattr(impl, "impl_instance", impl), sa.LargeBinary):
            return None
        return impl.bind_processor(dialect)

    def fast_processor(
        self,
        info: Any,
        checked: Processor,
        refusal: Processor,
        stored: str | None,
        any_column: bool,
        binary_copy: bool,
    ) -> Processor:
        if stored is not None and any_column:
            # ANY + CHECK (typeof) refuses every other type (a table of 0.2.3 and before)
            if refusal is not None:
                return skip_none(refusal)  # NaN would pass as NULL
            return None
        # INTEGER, REAL, TEXT (the rowid key too) convert: the rule, a column at a time on
        # the bulk paths, value by value on the point path
        return checked

    def reads_raw_cursor(self) -> bool:
        # SQLAlchemy's per-row work would cost more than the row (on asyncio too: the
        # cursor is then SQLAlchemy's adapted aiosqlite one, whose fetches are buffered)
        return True

    def refuses_other_types(self) -> bool:
        return True  # STRICT tables (where a column converts, RowCodec.fast checks)

    def write_rows(self, conn: sa.Connection, rows: RowWriter) -> None:
        """The raw cursor's ``executemany`` (64 rows to an INSERT), the rows read straight
        from the objects where nothing needs encoding (the STRICT table's types refuse
        the rest); a refused batch is checked in Python and written again. Under an
        AsyncStore, SQLAlchemy's ``executemany``: through aiosqlite's adapted cursor the
        raw path ran in aiosqlite's thread, which a cancelled task cannot stop, and the
        connection it left kept the write lock past the busy timeout (about one run in
        ten of the cancellation test)."""
        if rows.listened() or self.on_asyncio:  # SQLAlchemy's: its listeners see the rows
            super().write_rows(conn, rows)
            return
        self._send(rows, rows.streamed() or rows.bound())

    def insert_generated(self, conn: sa.Connection, rows: RowWriter) -> Sequence[Any]:
        """NULL makes SQLite pick the rowid. In the write transaction no one else
        inserts, and SQLite gives each NULL key one more than the largest rowid (with
        AUTOINCREMENT, than the largest ever used): the rows of one ``executemany`` get
        consecutive keys ending at ``last_insert_rowid()``. Only past the largest rowid
        would it pick random ones, which the table's present largest key rules out
        beforehand (then one ``INSERT ... RETURNING`` per row). The INSERT leaves the key
        column out (SQLite then picks the rowid as for NULL, with less work per row); a
        refused batch is written again with NULL keys, which locates the row (a single
        row is sent that way at once)."""
        model = rows.model
        key = model.schema.primary_key
        cache = rows.cache
        rowid = cache.get("sqlite:rowid")
        if rowid is None:
            rowid = cache["sqlite:rowid"] = str(
                model.table.c[key.name].type.compile(dialect=rows.dialect) == "INTEGER"
            )
        if rowid != "True" or rows.listened() or self.on_asyncio:
            # not the rowid, listened to, or on asyncio (see write_rows)
            return super().insert_generated(conn, rows)
        if "sqlite:largest" not in cache:
            table = model.table
            cache["sqlite:largest"] = str(
                sa.select(sa.func.max(table.c[key.name])).compile(dialect=rows.dialect)
            )
            cache["sqlite:last"] = str(
                sa.select(sa.func.last_insert_rowid()).compile(dialect=rows.dialect)
            )
        cursor = rows.cursor()
        largest = cursor.execute(cache["sqlite:largest"]).fetchone()[0]
        count = len(rows)
        if largest is not None and (type(largest) is not int or largest > MAX_ROWID - count):
            return self._one_by_one(rows)
        # one row: refused, run once
        keyless = rows.keyless() if count > 1 and rows.keyless_sql() is not None else None
        if keyless is None or not rows.attempt(
            lambda: insert_driver_rows(rows, cursor, keyless, count, rows.keyless_sql)
        ):
            self._send(rows, rows.bound())
        last: int = cursor.execute(cache["sqlite:last"]).fetchone()[0]
        return list(range(last - count + 1, last + 1))

    def _send(self, rows: RowWriter, first: Iterable[Sequence[Any]]) -> None:
        """Write the SQL rows ``first`` in one savepoint; refused, again with the rows
        through the complete checks, which name the value or the row."""
        cursor = rows.cursor()
        count = len(rows)
        sql = rows.compiled()
        assert sql is not None
        if rows.kind == "insert":

            def send(sql_rows: Iterable[Sequence[Any]]) -> None:
                insert_driver_rows(rows, cursor, sql_rows, count)

        else:

            def send(sql_rows: Iterable[Sequence[Any]]) -> None:
                cursor.executemany(sql, rows.logged(sql, sql_rows, "executemany"))

        if count == 1:
            first = list(first)  # compared with its checked form if refused
        error = rows.refused(lambda: send(first))
        if error is not None:
            rows.checked_again(error, first, send, sql)  # type: ignore[arg-type]

    def _one_by_one(self, rows: RowWriter) -> list[int]:
        """Insert the rows one ``INSERT ... RETURNING`` each; the rowids SQLite gave them."""
        model = rows.model
        table = model.table
        sql = rows.cache.get("sqlite:returning")
        if sql is None:
            compiled = (
                table.insert()
                .returning(table.c[model.schema.primary_key.name])
                .compile(dialect=rows.dialect, column_keys=model.names)
            )
            if [
                compiled.binds[b].key for b in compiled.positiontup or []
            ] != model.names:  # pragma: no cover - guards the raw path
                raise ValueError("unexpected parameter order")
            sql = rows.cache["sqlite:returning"] = compiled.string
        cursor = rows.cursor()
        sql_rows = rows.bound()
        return rows.guard(  # type: ignore[no-any-return]
            lambda: [
                cursor.execute(sql, r).fetchone()[0] for r in rows.logged(sql, sql_rows, "execute")
            ],
            raw=(sql, lambda: sql_rows),
        )

    def script_upsert(
        self, table: sa.Table, keys: list[str], others: list[str], restated: list[str]
    ) -> sa.Executable | None:
        return self.upsert(table, keys, others, restated)


@functools.lru_cache(maxsize=4096)
def _reads_float(text: str, value: float) -> bool:
    """True when SQLite turns ``text`` into exactly ``value`` (its parser rounds a few
    17-digit floats differently from Python)."""
    with closing(sqlite3.connect(":memory:")) as conn:
        got = conn.execute("SELECT CAST(? AS REAL)", (text,)).fetchone()[0]
    return isinstance(got, float) and got == value and repr(got) == repr(value)


@compiles(LikeMatch, "sqlite")
def _like_sqlite(element: LikeMatch, compiler: SQLCompiler, **kw: Any) -> str:
    """SQLite's LIKE stops reading text at a NUL: such text is matched by LIKE_FUNCTION."""
    text, pattern = element.clauses
    nul = sa.func.instr(text, sa.func.char(0)) > 0
    exact = sa.case(
        (nul, getattr(sa.func, LIKE_FUNCTION)(pattern, text)),
        else_=text.like(pattern, escape=chr(92)),
    )
    return f"({compiler.process(exact, **kw)})"


def _same_name_in_case(schema: TableSchema, name: str, tables: list[str]) -> None:
    """InvalidNameError when the table SQLite finds for ``name`` is another one whose name
    differs only in (ASCII) case: SQLite does not tell them apart, so ``MAPS`` would be
    read and written as ``maps``."""
    if name in tables:
        return
    folded = name.encode("utf-8").lower()  # SQLite folds ASCII letters only
    other = next((t for t in tables if t.encode("utf-8").lower() == folded), None)
    if other is not None:
        owner = next((t for t in [schema, *schema.descendants] if t.name == name), schema)
        raise InvalidNameError(
            f"{owner.cls.__qualname__}: table {name!r} and the existing table {other!r} "
            "differ only in case, which SQLite does not tell apart; rename one of them",
            cls=owner.cls,
        )


__all__ = [
    "ROWS_PER_INSERT",
    "STRICT_TYPES",
    "TYPEOF_TYPES",
    "SQLite",
    "SQLiteAny",
    "insert_driver_rows",
    "is_rowid",
    "legacy_any",
    "memory",
    "strict_ok",
]

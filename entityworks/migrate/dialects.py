"""Every difference between the backends that schema changes must know, in one place.

SQLite rebuilds a table for most ALTERs (Alembic's batch mode), which with foreign keys on
would cascade; it keeps CHECK texts as written and types columns by ``typeof`` CHECKs.
MariaDB commits each DDL statement as it runs and hides some text DEFAULTs from SQLAlchemy's
reflection. PostgreSQL needs nothing of its own here. The rest of :mod:`entityworks.migrate`
asks these functions, named for the behaviour they answer for, and never tests a dialect's
name itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import sqlalchemy as sa
from alembic.migration import MigrationContext
from alembic.operations import ops

from ..errors import SchemaError
from ..sql.backends.sqlite import SQLiteAny
from ..sql.defaults import parse_reflected

#: The backend tables are built for when none is named (its options, such as STRICT and
#: the length CHECK of ``max_length`` text, other backends ignore or do not compare).
DEFAULT_DIALECT = "sqlite"

_MARIADB = ("mysql", "mariadb")


def dialect_name(dialect: str | sa.Dialect | sa.Connection | sa.Engine | None) -> str:
    """The backend name of ``dialect`` (a name, a Backend, an Engine or a Connection)."""
    if dialect is None:
        return DEFAULT_DIALECT
    if isinstance(dialect, str):
        return dialect
    if isinstance(dialect, (sa.Connection, sa.Engine)):
        return dialect.dialect.name
    return dialect.name


def rebuilds_tables(dialect: str | sa.Dialect) -> bool:
    """True when most ALTERs rebuild the table (SQLite): Alembic must run them in batch mode."""
    return dialect_name(dialect) == "sqlite"


def rolls_back_ddl(dialect: sa.Dialect) -> bool:
    """False where each DDL statement commits as it runs (MariaDB)."""
    return dialect.name not in _MARIADB


def failed_change_outcome(dialect: sa.Dialect) -> str:
    """What a refused schema change left behind, said to the user."""
    if rolls_back_ddl(dialect):
        return "nothing was changed"
    return "MariaDB committed the schema change (it cannot roll DDL back)"


def collates_text(dialect: sa.Dialect) -> bool:
    """True where text columns carry a collation of their own, which the catalog sets to one
    that compares exactly (MariaDB: binary, no pad); other backends compare text exactly."""
    return dialect.name in _MARIADB


def places_added_columns(dialect: sa.Dialect) -> bool:
    """True where ``ALTER TABLE ... ADD COLUMN`` can place the column ``AFTER`` another
    (MariaDB); elsewhere a column is appended, or the table rebuilt (:func:`rebuilds_tables`)."""
    return dialect.name in _MARIADB


def rebuilt_table_options(dialect: str | sa.Dialect, *, clustered: bool = False) -> dict[str, bool]:
    """The options a catalog table keeps when it is rebuilt on ``dialect``: STRICT, and
    ``WITHOUT ROWID`` when ``clustered`` (SQLite); none elsewhere."""
    if not rebuilds_tables(dialect):
        return {}
    return {"sqlite_strict": True, "sqlite_with_rowid": not clustered}


def declared_integer() -> sa.types.TypeEngine[Any]:
    """An integer column as the catalog declared it up to revision 0008 (frozen: revisions
    use it as the existing type): BIGINT, INTEGER where tables are rebuilt (SQLite)."""
    return sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def hides_text_defaults(dialect: sa.Dialect) -> bool:
    """True where SQLAlchemy cannot read every text DEFAULT (MariaDB: text with a quote or a
    backslash), so that the backend's own ``information_schema`` is read instead."""
    return dialect.name in _MARIADB


# -- SQLite: foreign keys while a table is rebuilt, CHECK texts, typeof checks ------------


@contextmanager
def schema_transaction(conn: sa.Connection) -> Iterator[None]:
    """Run the block's schema changes on ``conn`` and commit them when it ends without error.

    On SQLite, foreign keys are off while it is open. A batch operation rebuilds a table by
    copying it and dropping the original, and with foreign keys on that drop would empty
    every child table through ON DELETE CASCADE. SQLite ignores the pragma inside a
    transaction, so it is set before the transaction begins (on this connection only) and
    restored after it ends; ``PRAGMA foreign_key_check`` runs before the commit, and a
    violation rolls everything back.
    """
    sqlite = rebuilds_tables(conn.dialect)
    if sqlite:
        sqlite_foreign_keys(conn, on=False)
    try:
        yield
        if sqlite:
            check_foreign_keys(conn)
        conn.commit()
    finally:
        if sqlite:
            if conn.in_transaction():
                conn.rollback()
            sqlite_foreign_keys(conn, on=True)


def sqlite_foreign_keys(conn: sa.Connection, *, on: bool) -> None:
    """Switch SQLite's foreign keys on this connection (outside any transaction)."""
    raw = conn.connection.dbapi_connection
    raw.execute(f"PRAGMA foreign_keys={'ON' if on else 'OFF'}")  # type: ignore[union-attr]


def check_foreign_keys(conn: sa.Connection) -> None:
    """Refuse (and so roll back) a schema change after which a row breaks a foreign key."""
    problems = conn.exec_driver_sql("PRAGMA foreign_key_check").all()
    if problems:
        table, rowid, parent, _fk = problems[0]
        raise SchemaError(
            f"{len(problems)} row(s) would break a foreign key (first: {table} rowid {rowid} "
            f"-> {parent}); the schema change was rolled back"
        )


def rename_checks(conn: sa.Connection, batch: Any, target: sa.Table, old: str, column: Any) -> None:
    """After a column was renamed from ``old`` to ``column``'s name in ``batch``: SQLite
    keeps a CHECK's text as written, so when the table is rebuilt the checks on the old
    column name (its ``typeof``, a ``max_length``) are replaced by the new column's. Other
    backends rename the column in their checks themselves."""
    if not rebuilds_tables(conn.dialect):
        return
    new = column.name
    quoted = {f'"{old}"', f"({old})", f"{old} ", f"({old} "}
    for check in sa.inspect(conn).get_check_constraints(target.name):
        text = str(check.get("sqltext", ""))
        if check.get("name") and any(q in text for q in quoted):
            batch.drop_constraint(check["name"], type_="check")
    checks = [c for c in column.constraints if isinstance(c, sa.CheckConstraint)]
    checks += [
        c
        for c in target.constraints
        if isinstance(c, sa.CheckConstraint) and c.name == f"length_{new}"
    ]
    for made in checks:  # as text: an expression would name the column of another table
        sql = made.sqltext.compile(
            dialect=conn.dialect, compile_kwargs={"literal_binds": True, "include_table": False}
        )
        batch.create_check_constraint(made.name, sa.text(str(sql)))


def checks_typeof(dialect: sa.Dialect) -> bool:
    """True where catalogs of entityworks 0.2.3 declared columns ``ANY`` with a ``CHECK`` on
    ``typeof`` (SQLite), which revision 0009 declares by their type name instead."""
    return rebuilds_tables(dialect)


def without_rowid(conn: sa.Connection, table: str) -> bool:
    """True when ``table`` was created ``WITHOUT ROWID`` (SQLite; the table name is bound)."""
    if not rebuilds_tables(conn.dialect):
        return False
    sql = conn.execute(
        sa.text("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = :name"),
        {"name": table},
    ).scalar()
    return bool(re.search(r"\bWITHOUT\s+ROWID\b", str(sql or ""), re.IGNORECASE))


def declared_any(column: Any) -> bool:
    """True for a reflected column (an inspector's ``get_columns`` entry) declared ``ANY``
    (SQLAlchemy reflects the name as NUMERIC, SQLite's affinity for it, unless the engine is
    the Store's)."""
    return isinstance(column["type"], sa.Numeric | SQLiteAny) and not isinstance(
        column["type"], sa.Float
    )


def typeof_differs(context: MigrationContext, table: str, old: str, wanted: sa.Column[Any]) -> bool:
    """On SQLite, an int and a str column are both ANY; their ``typeof`` CHECKs differ."""
    if not rebuilds_tables(context.dialect) or context.connection is None:
        return False
    checks = {
        str(c.get("name")): str(c.get("sqltext", ""))
        for c in sa.inspect(context.connection).get_check_constraints(table)
    }
    was = re.findall(r"typeof\([^)]*\)\s*=\s*'(\w+)'", checks.get(f"type_{old}", ""))
    now = [
        re.findall(r"typeof\([^)]*\)\s*=\s*'(\w+)'", str(c.sqltext))
        for c in wanted.constraints
        if isinstance(c, sa.CheckConstraint)
    ]
    return was != (now[0] if now else [])


# -- MariaDB: DEFAULTs its reflection misses -----------------------------------------------


_MARIADB_COLUMNS = sa.table(
    "COLUMNS",
    sa.column("TABLE_SCHEMA"),
    sa.column("TABLE_NAME"),
    sa.column("COLUMN_NAME"),
    sa.column("COLUMN_DEFAULT"),
    schema="information_schema",
)


def shown_column_default(conn: sa.Connection, table: str, column: str) -> str | None:
    """MariaDB's own text of a column's DEFAULT (``'NULL'`` for a nullable column without
    one), which SQLAlchemy's parser of SHOW CREATE TABLE misses for text with quotes."""
    c = _MARIADB_COLUMNS.c
    stmt = sa.select(c.COLUMN_DEFAULT).where(
        c.TABLE_SCHEMA == sa.func.database(), c.TABLE_NAME == table, c.COLUMN_NAME == column
    )
    value = conn.execute(stmt).scalar()
    return None if value is None else str(value)


def shown_as(ours: str, shown: str) -> bool:
    """True when MariaDB's metadata ``shown`` is how it displays ``ours``: it writes each
    character beyond U+FFFF of a DEFAULT as ``?`` (one, or one per UTF-8 byte), though the
    rows get the character itself."""
    if "?" not in shown or ours == shown:
        return ours == shown
    parts = re.split(r"(\?+)", shown)
    pattern = "".join(
        "(?:\\?|[\U00010000-\U0010ffff])+" if part.startswith("?") else re.escape(part)
        for part in parts
    )
    return re.fullmatch(pattern, ours) is not None


def unseen_defaults(
    context: MigrationContext, metadata: sa.MetaData, found: Sequence[ops.MigrateOperation]
) -> list[ops.AlterColumnOp]:
    """DEFAULTs SQLAlchemy cannot read on MariaDB (text with a quote or backslash), where the
    field has none: Alembic never compares them, so they are found here."""
    conn = context.connection
    assert conn is not None
    seen = {
        (o.table_name, o.column_name)
        for o in found
        if isinstance(o, (ops.AlterColumnOp, ops.DropColumnOp))
    }
    created = {o.table_name for o in found if isinstance(o, ops.CreateTableOp)}
    live = set(sa.inspect(conn).get_table_names())
    out = []
    c = _MARIADB_COLUMNS.c
    for table in metadata.sorted_tables:
        if table.name not in live or table.name in created:
            continue
        stmt = sa.select(c.COLUMN_NAME, c.COLUMN_DEFAULT).where(
            c.TABLE_SCHEMA == sa.func.database(), c.TABLE_NAME == table.name
        )
        defaults = {str(name): value for name, value in conn.execute(stmt)}
        for column in table.columns:
            if column.server_default is not None or (table.name, column.name) in seen:
                continue
            if column.primary_key and column.autoincrement in (True, "auto"):
                continue
            value = defaults.get(column.name)
            text = parse_reflected(None if value is None else str(value), backslashes=True)
            if text is not None:
                out.append(
                    ops.AlterColumnOp(
                        table.name,
                        column.name,
                        existing_type=column.type,
                        existing_nullable=column.nullable,
                        modify_server_default=None,
                    )
                )
    return out


__all__ = [
    "DEFAULT_DIALECT",
    "check_foreign_keys",
    "checks_typeof",
    "collates_text",
    "declared_any",
    "declared_integer",
    "dialect_name",
    "failed_change_outcome",
    "hides_text_defaults",
    "places_added_columns",
    "rebuilds_tables",
    "rebuilt_table_options",
    "rename_checks",
    "rolls_back_ddl",
    "schema_transaction",
    "shown_as",
    "shown_column_default",
    "sqlite_foreign_keys",
    "typeof_differs",
    "unseen_defaults",
    "without_rowid",
]

"""Locating a refused write: which row, which column, and a message that names both.

A batch runs in a savepoint; when the database (or the driver, binding a value) refuses it,
the batch is replayed row by row in another savepoint, rolled back, to find the row, and the
column is read from the error, the row's values or the backend's known refusals.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import sqlalchemy as sa

from ..errors import GateRefused, WriteError
from ..model.schema import PARENT_COLUMN
from ._bound import BoundModel, RowNumber, key_label
from ._database import Database
from ._log import logged

#: Raised by drivers while binding a value they cannot hold (sqlite3: an int beyond 64 bits,
#: a str with a lone surrogate; psycopg's COPY: a value of the wrong type). They locate a bad
#: row like database errors do.
BIND_ERRORS = (OverflowError, UnicodeEncodeError, TypeError)


def attempt(db: Database, conn: sa.Connection, action: Callable[[], Any]) -> bool:
    """Run ``action`` in a savepoint: ``False``, with nothing kept, if it is refused.
    Any other error (an unset field met mid-COPY) rolls the savepoint back too, so that
    an outer transaction goes on from where it was."""
    return refused(db, conn, action) is None


def refused(db: Database, conn: sa.Connection, action: Callable[[], Any]) -> BaseException | None:
    """:func:`attempt`, giving the refusal (None: ``action`` was kept)."""
    savepoint = conn.begin_nested()
    try:
        action()
    except (sa.exc.StatementError, db.dbapi_error, GateRefused, *BIND_ERRORS) as exc:
        savepoint.rollback()
        return exc
    except BaseException:
        savepoint.rollback()
        raise
    savepoint.commit()
    return None


def identical(sent: Sequence[Any], checked: Sequence[Any]) -> bool:
    """True when the checks left a refused row exactly as it was sent (same values of the
    same types: an int the checks made a float, 1 to 1.0, is another row to try)."""
    return len(sent) == len(checked) and all(
        type(a) is type(b) and a == b for a, b in zip(sent, checked, strict=True)
    )


def guard(
    db: Database,
    conn: sa.Connection,
    model: BoundModel,
    action: Callable[[], Any],
    number: RowNumber,
    *,
    raw: tuple[str, Callable[[], list[Any]]] | None = None,
    replay: tuple[Any, list[dict[str, Any]]] | None = None,
    explain: Callable[..., tuple[str | None, str]] | None = None,
    single: dict[str, Any] | None = None,
) -> Any:
    """Run ``action`` in a savepoint; on a database error, locate the row and re-raise.

    ``explain(conn, model, values, earlier)`` turns the MariaDB upsert guard's error into
    what really happened (see :func:`unique_clash`). ``single``: the values of a
    one-row statement (an update), to name the column of a broken foreign key.
    """
    savepoint = conn.begin_nested()
    try:
        result = action()
    except (sa.exc.StatementError, db.dbapi_error, *BIND_ERRORS) as exc:
        savepoint.rollback()
        row: int | None = 0
        if replay is not None and len(replay[1]) == 1:  # its one row: nothing to replay
            message = error_text(exc)
        else:
            row, message = locate(db, conn, raw, replay, exc)
        values = None
        if row is not None:
            values = (
                replay[1][row]
                if replay is not None
                else dict(zip(model.names, raw[1]()[row], strict=True))  # type: ignore[index]
            )
        earlier = replay[1][:row] if replay is not None and row is not None else None
        raise refusal(
            db,
            conn,
            model,
            message,
            row,
            values,
            number,
            bound=replay is None,
            explain=explain,
            earlier=earlier,
            single=single,
        ) from exc
    savepoint.commit()
    return result


def refusal(
    db: Database,
    conn: sa.Connection,
    model: BoundModel,
    message: str,
    row: int | None,
    values: dict[str, Any] | None,
    number: RowNumber,
    *,
    bound: bool,
    explain: Callable[..., tuple[str | None, str]] | None = None,
    earlier: list[dict[str, Any]] | None = None,
    single: dict[str, Any] | None = None,
) -> WriteError:
    """The WriteError for a refused row whose place is known (``row``, ``None``: a one-row
    statement, such as an update), naming its column: from the values, the error message,
    or a query for a missing reference. Nothing is executed again.

    ``values``: the row's values, ``bound`` for the driver (else the registry's, which
    SQLAlchemy binds); ``earlier``: the rows before it in its batch, for ``explain``;
    ``single``: a one-row statement's values, to name the column of a broken foreign key.
    """
    column = None
    if values is not None and not bound:
        column = _column_from_binds(model, values)
    if explain is not None and earlier is not None and _GUARD_ERROR in message:
        column, message = explain(conn, model, values, earlier)
    if "foreign key" in message.lower() and (values or single) is not None:
        column = (
            missing_reference(
                db,
                conn,
                model,
                values or single,  # type: ignore[arg-type]
                raw=values is not None and bound,
            )
            or column
        )
    column = (
        column
        or _column_from_message(message, model.names, key_label(model), model.table)
        or (_column_from_types(model, values) if values else None)
        or _column_refused_here(db, model, values or single)
    )
    reported = None if row is None else number(row)
    where = "a row" if reported is None else f"row {reported}"
    return WriteError(
        f"{model.schema.name}: {where}"
        + (f", column {column!r}" if column else "")
        + f": {message}; nothing was written",
        table=model.schema.name,
        row=reported,
        column=column,
    )


def missing_reference(
    db: Database, conn: sa.Connection, model: BoundModel, values: dict[str, Any], *, raw: bool
) -> str | None:
    """The first foreign-key column of a refused row whose value no referenced row
    holds (SQLite and MariaDB do not name it). ``raw``: ``values`` are the driver's."""
    for foreign in model.table.foreign_keys:
        name = foreign.parent.key
        value = values.get(name)
        if name == PARENT_COLUMN or value is None:
            continue
        key = foreign.column
        stmt = sa.select(key).where(key == sa.bindparam("v", type_=key.type))
        if raw:
            sql = str(stmt.compile(dialect=db.dialect))
            found = conn.exec_driver_sql(sql, (value,)).first()
        else:
            found = conn.execute(stmt, {"v": value}).first()
        if found is None:
            return name
    return None


def unique_clash(
    db: Database,
    conn: sa.Connection,
    model: BoundModel,
    values: dict[str, Any],
    earlier: list[dict[str, Any]],
) -> tuple[str | None, str]:
    """Which UNIQUE column (or composite unique constraint) of an upserted row another
    row already holds (MariaDB)."""
    keys = [c.name for c in model.schema.require_keys("upsert")]
    table = model.table
    groups: list[tuple[str, ...]] = [
        (c.name,) for c in model.schema.columns if c.unique and not c.primary_key
    ]
    groups += list(model.schema.unique)
    mine = tuple(values[k] for k in keys)
    for group in groups:
        value = tuple(values.get(n) for n in group)
        if None in value:
            continue
        clash = any(
            tuple(d.get(n) for n in group) == value and tuple(d[k] for k in keys) != mine
            for d in earlier
        )
        if not clash:
            stmt = (
                sa.select(table.c[keys[0]])
                .where(*(table.c[n] == v for n, v in zip(group, value, strict=True)))
                .where(sa.not_(sa.and_(*(table.c[k] == values[k] for k in keys))))
                .limit(1)
            )
            clash = conn.execute(stmt).first() is not None
        if clash:
            what = (
                f"unique column {group[0]!r}"
                if len(group) == 1
                else f"unique columns ({', '.join(group)})"
            )
            return ", ".join(group), (
                f"duplicate value in {what}: another row holds it "
                "(upsert matches rows by the primary key alone)"
            )
    return None, (
        "duplicate value in a unique index: another row holds it (upsert "
        "matches rows by the primary key alone)"
    )


def locate(
    db: Database, conn: sa.Connection, raw: Any, replay: Any, exc: BaseException
) -> tuple[int | None, str]:
    """Replay a failed batch row by row inside a savepoint to find the failing row."""
    message = error_text(exc)
    savepoint = conn.begin_nested()
    try:
        if raw is not None:
            sql, rebuild = raw
            rows = logged(sql, rebuild(), "row by row", db.engine)
            cursor = conn.connection.dbapi_connection.cursor()  # type: ignore
            for i, row in enumerate(rows):
                try:
                    cursor.execute(sql, row)
                except (db.dbapi_error, *BIND_ERRORS) as inner:
                    return i, error_text(inner)
        elif replay is not None:
            stmt, dicts = replay
            for i, d in enumerate(dicts):
                inner_sp = conn.begin_nested()
                try:
                    conn.execute(stmt, d)
                except (sa.exc.StatementError, db.dbapi_error, *BIND_ERRORS) as inner:
                    inner_sp.rollback()
                    return i, error_text(inner)
                inner_sp.commit()
        return None, message
    finally:
        savepoint.rollback()


_GUARD_ERROR = "Division by 0"


def _column_from_binds(model: BoundModel, values: dict[str, Any]) -> str | None:
    """The first column whose bind processor rejects its value (errors raised in Python)."""
    for name, bind in zip(model.names, model.binds, strict=True):
        if bind is not None and values.get(name) is not None:
            try:
                bind(values[name])
            except Exception:
                return name
    return None


def error_text(exc: BaseException) -> str:
    orig = getattr(exc, "orig", None) or exc
    lines = [line.strip() for line in str(orig).strip().splitlines() if line.strip()]
    if not lines:
        return type(orig).__name__
    # PostgreSQL names the offending key in its DETAIL line.
    detail = [line for line in lines[1:] if line.startswith("DETAIL:")]
    column = getattr(getattr(orig, "diag", None), "column_name", None)
    extra = [f'(column "{column}")'] if column and f'"{column}"' not in lines[0] else []
    return " ".join([lines[0], *detail, *extra])


_COLUMN_PATTERNS = [
    re.compile(r"cannot store \w+ value in \w+ column (?:.*\.)?([^.]+)$"),  # sqlite STRICT
    re.compile(r"constraint failed: (?:[^\s.]+\.)?\"?([^\s,\"]+)"),  # sqlite
    re.compile(r"Key \(([^)]+)\)="),  # postgresql unique
    re.compile(r"column \"([^\"]+)\""),  # postgresql
    re.compile(r"[Cc]olumn [`'\"]([^`'\"]+)[`'\"]"),  # mariadb
    re.compile(r"for column [`'\"](?:[^`'\"]+[`'\"]\.[`'\"])*([^`'\"]+)[`'\"]"),
    re.compile(r"for key '(?:[^'.]+\.)?([^']+)'"),  # mariadb duplicates
    re.compile(r"FOREIGN KEY \(`([^`]+)`\)"),  # mariadb references
    re.compile(r"CONSTRAINT `(?:[^`.]+\.)?([^`]+)` failed"),  # mariadb CHECK (a JSON column's)
]


def _column_refused_here(
    db: Database, model: BoundModel, values: Mapping[str, Any] | None
) -> str | None:
    """The first column of a refused row holding a value this backend alone cannot store,
    whose error names no column: NaN or an infinity in a MariaDB DOUBLE, NUL in PostgreSQL
    text (the values are the row's encoded ones)."""
    for name in model.names if values else ():
        value = values.get(name)  # type: ignore[union-attr]
        if db.backend.refuses_value(value):
            return name
    return None


def _column_from_types(model: BoundModel, values: dict[str, Any]) -> str | None:
    """The first plain column holding a value of the wrong Python type."""
    for c in model.schema.columns:
        value = values.get(c.name)
        expected = c.info.python_type
        if value is None or c.info.sql_codec.encode is not None or not isinstance(expected, type):
            continue
        if expected is float and isinstance(value, int):
            continue
        if not isinstance(value, expected):
            return c.name
    return None


_NAMED = [
    re.compile(r'constraint "([^"]+)"'),  # postgresql
    re.compile(r"for key '(?:[^'.]+\.)?([^']+)'"),
]  # mariadb
_LISTED = [
    re.compile(r"Key \((.+?)\)="),  # postgresql's DETAIL
    re.compile(r"UNIQUE constraint failed: (.+)$"),
]  # sqlite


def _constraint_columns(message: str, table: sa.Table) -> str | None:
    """The columns (``"a, b"``, by field name) of the composite UNIQUE constraint or primary
    key a database error names: by the constraint's name (PostgreSQL, MariaDB) or by its
    columns (PostgreSQL's DETAIL, SQLite), so that a clash names its columns the same on
    every backend. None when the error names no such constraint."""
    named = {m.group(1) for p in _NAMED if (m := p.search(message))}
    listed = []
    for pattern in _LISTED:
        m = pattern.search(message)
        if m:
            listed = [
                part.strip().strip('"').rpartition(f"{table.name}.")[2]
                for part in m.group(1).split(",")
            ]
    groups: list[tuple[set[str], list[sa.Column[Any]]]] = []
    for constraint in table.constraints:
        if isinstance(constraint, sa.PrimaryKeyConstraint):
            names = {f"{table.name}_pkey", "PRIMARY"}
        elif isinstance(constraint, sa.UniqueConstraint):
            names = set()
        else:
            continue
        if isinstance(constraint.name, str):
            names.add(constraint.name)
        groups.append((names, list(constraint.columns)))
    groups += [
        ({index.name} if isinstance(index.name, str) else set(), list(index.columns))
        for index in table.indexes
        if index.unique
    ]
    for names, columns in groups:
        if len(columns) > 1 and (names & named or listed == [c.name for c in columns]):
            return ", ".join(c.key for c in columns)
    return None


def _column_from_message(
    message: str, names: list[str], key: str | None = None, table: sa.Table | None = None
) -> str | None:
    """The column a database error names; ``table`` translates the names of columns called
    otherwise in SQL (``column(name=...)``) back to their fields'."""
    fields = {c.name: c.key for c in table.columns} if table is not None else {}
    group = _constraint_columns(message, table) if table is not None else None
    if group is not None:
        return group
    for pattern in _COLUMN_PATTERNS:
        m = pattern.search(message)
        if not m:
            continue
        candidate = m.group(1)
        if candidate.startswith("type_"):
            candidate = "type_" + fields.get(candidate[5:], candidate[5:])
        candidate = fields.get(candidate, candidate)
        if candidate.startswith("type_") and candidate[5:] in names:
            return candidate[5:]
        if candidate in names:
            return candidate
        if key and (candidate.upper() == "PRIMARY" or candidate.endswith("_pkey")):
            return key
    if key and re.search(r"_pkey\b|PRIMARY", message):
        return key
    return None


__all__ = [
    "BIND_ERRORS",
    "attempt",
    "error_text",
    "guard",
    "identical",
    "locate",
    "missing_reference",
    "refusal",
    "refused",
    "unique_clash",
]

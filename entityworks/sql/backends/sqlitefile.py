"""Reading a table of an SQLite file without SQLAlchemy: ``entityworks query`` on a database
file, which must start in a fraction of what importing SQLAlchemy takes.

It reads what the Store reads and decodes it with the same functions: the table's dataclass
(the catalog's own, or one made as :meth:`Store.reflect` makes it: :mod:`.reflection`, from
the logical schema or the columns' declared types), the registry's decoders and companions
for the SQLite target, the text forms of :mod:`.textvalues`, the row and column readers of
:mod:`._rowdecode`, the filter checks of :mod:`.filters`. Anything it cannot read exactly as
the Store would (a column layout other than the one the Store builds, a type named by a
function rather than a storage name, an older table's ``ANY`` column, a filter through a
relation, a table the Store would refuse) raises :class:`Elsewhere`, and the caller reads it
through the Store instead.

Statements are parameterized: every value is a bound ``?``. Identifiers are only the names of
the table and of the columns that the schema and the live table both have, written with
SQLite's own quoting rule (:func:`~.light.quote`: double quotes, a double quote
inside doubled), under which any text is a name; SQLAlchemy's quoting (its dialect's
``IdentifierPreparer``) would need SQLAlchemy, and quotes only the names it must, which SQLite
reads the same.
"""

from __future__ import annotations

import datetime as dt
import decimal
import re
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing
from functools import partial
from pathlib import Path
from typing import Any

from ...errors import FilterError
from ...model.schema import Column, TableSchema
from ...registry import Companion, TypeRegistry
from ...types.encoding import skip_none
from ...types.registry import Target
from ...types.storage import StorageType
from .._like import LIKE_FUNCTION, like_matches
from .._rowdecode import Readers
from ..filters import (
    Comparison,
    Expr,
    check_like,
    encode_value,
    filtered_column,
    order_items,
    refuse_encoded,
)
from ..logicalread import TABLE, Recorded
from ..reflection import LiveColumn, reflected_class
from ..textvalues import TEXT_FORMS
from .light import quote

#: The SQLite backend's storage target (``Backend.storage_target``: no decimal scale, no sign
#: of zero in a REAL, Decimals as sortable keys).
FILE_TARGET = Target(
    "sqlite", keeps_decimal_scale=False, keeps_negative_zero=False, decimal_as_key=True
)
#: Storage types the driver reads and binds as they are on SQLite (INTEGER, REAL, TEXT, BLOB).
PLAIN = frozenset(
    {"big_integer", "small_integer", "boolean", "double", "text", "binary", "json_text"}
)
#: Rows per fetch (as the Store's read path).
FETCH = 2_000
_OPERATORS = {"==": "=", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


class Elsewhere(Exception):  # noqa: N818 - a signal to the caller, not an error
    """This read is left to the Store, which reads it as before."""


class FileDatabase:
    """An SQLite database file opened read-only, as a source of tables, their logical schema
    (:class:`~.logicalread.SchemaSource`) and their rows."""

    target: Target | str = FILE_TARGET

    def __init__(self, path: Path, busy_timeout: float = 30.0) -> None:
        uri = f"{path.resolve().as_uri()}?mode=ro"
        try:
            self.conn: sqlite3.Connection = sqlite3.connect(uri, uri=True, timeout=busy_timeout)
            self.conn.execute("PRAGMA case_sensitive_like=ON")  # as the Store's connections
            self.conn.create_function(LIKE_FUNCTION, 2, like_matches, deterministic=True)
            self._tables = self._names()
        except sqlite3.Error as exc:  # the Store's path says what is wrong with it
            raise Elsewhere(str(exc)) from exc

    def close(self) -> None:
        self.conn.close()

    def _names(self) -> list[str]:
        # what SQLAlchemy's inspector lists (case_sensitive_like on, as on the Store's)
        rows = self._all(
            "SELECT name FROM sqlite_master WHERE type='table' "
            "AND name NOT LIKE 'sqlite~_%' ESCAPE '~' ORDER BY name"
        )
        return [str(r[0]) for r in rows]

    def table_names(self) -> list[str]:
        """Names of the tables in the database (as :meth:`Store.table_names`)."""
        return list(self._tables)

    # -- SchemaSource --------------------------------------------------------------------
    def has_table(self, name: str) -> bool:
        return name in self._tables

    def live(self, name: str) -> list[tuple[str, str, bool, int, int]]:
        """``(name, declared type, nullable, position in the key, hidden)`` of each column."""
        rows = self._all(
            'SELECT name, type, "notnull", pk, hidden FROM pragma_table_xinfo(?) ORDER BY cid',
            (name,),
        )
        return [(str(n), str(t or ""), not nn, int(pk), int(h)) for n, t, nn, pk, h in rows]

    def columns(self, name: str) -> list[tuple[str, bool]]:
        return [(n, nullable) for n, _t, nullable, _pk, hidden in self.live(name) if not hidden]

    def recorded(self, name: str) -> list[Recorded]:
        if TABLE not in self._tables:
            return []
        rows = self._all(
            f"SELECT table_name, column_name, position, logical_type, nullable, primary_key, "
            f"max_length, details FROM {quote(TABLE)} WHERE table_name = ? ORDER BY position",
            (name,),
        )
        return [
            Recorded(t, c, p, lt, bool(nl), bool(pk), ml, d) for t, c, p, lt, nl, pk, ml, d in rows
        ]

    # -- reflection ----------------------------------------------------------------------
    def reflect(self, name: str, registry: TypeRegistry) -> type:
        """The dataclass :meth:`Store.reflect` makes for table ``name``; :class:`Elsewhere`
        where this module cannot tell what SQLAlchemy's inspector would say (an ``ANY``
        column, a CHECK on typeof, a generated column, a declared type outside
        :func:`declared_type`), or where the Store would refuse the table (its message is
        the Store's)."""
        live = self.live(name)
        # a CHECK on typeof types an ANY column (Backend.checked_python_types)
        if any(hidden for *_rest, hidden in live) or "TYPEOF" in self._sql(name).upper():
            raise Elsewhere(f"table {name!r}: generated columns or a CHECK on typeof")
        columns = [
            LiveColumn(n, nullable, t, partial(declared_type, t))
            for n, t, nullable, _pk, _h in live
        ]
        pk = [n for n, _t, _nl, at, _h in sorted(live, key=lambda c: c[3]) if at]
        try:
            return reflected_class(name, columns, pk, {}, registry, self)
        except Exception as exc:  # the Store's path refuses it, in its own words
            raise Elsewhere(str(exc)) from exc

    def _sql(self, name: str) -> str:
        rows = self._all("SELECT sql FROM sqlite_master WHERE type='table' AND name = ?", (name,))
        return str(rows[0][0] or "") if rows else ""

    # -- rows ----------------------------------------------------------------------------
    def bind(self, schema: TableSchema) -> FileTable:
        """How ``schema``'s rows are read from its live table (:class:`Elsewhere` unless the
        table has the layout the Store would read it with)."""
        if schema.name not in self._tables:
            raise Elsewhere(f"no table {schema.name!r}")
        live = self.live(schema.name)
        declared = {n: t.upper() for n, t, _nl, _pk, _h in live}
        if any(t.partition("(")[0].strip() == "ANY" for t in declared.values()):
            raise Elsewhere("an ANY column (a table of entityworks 0.2.3 and before)")
        if "TYPEOF" in self._sql(schema.name).upper():
            raise Elsewhere("a CHECK on typeof")
        return FileTable(self, schema, declared)

    def _all(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        return [row for batch in self.fetch(sql, params) for row in batch]

    def fetch(self, sql: str, params: Sequence[Any]) -> Iterator[list[Any]]:
        """The rows of ``sql``, a fetch at a time; :class:`Elsewhere` for any error of the
        database (locked, damaged...), which the Store's path then reports in its words."""
        try:
            with closing(self.conn.cursor()) as cursor:
                cursor.execute(sql, params)
                while batch := cursor.fetchmany(FETCH):
                    yield batch
        except sqlite3.Error as exc:
            raise Elsewhere(str(exc)) from exc


#: SQLAlchemy's SQLite type names (``ischema_names``) -> the Python type of their values.
_NAMED: dict[str, type] = {
    "BIGINT": int,
    "INT": int,
    "INTEGER": int,
    "SMALLINT": int,
    "BLOB": bytes,
    "BOOL": bool,
    "BOOLEAN": bool,
    "CHAR": str,
    "TEXT": str,
    "VARCHAR": str,
    "NVARCHAR": str,
    "NCHAR": str,
    "DATE": dt.date,
    "DATE_CHAR": dt.date,
    "DATETIME": dt.datetime,
    "DATETIME_CHAR": dt.datetime,
    "TIMESTAMP": dt.datetime,
    "TIME": dt.time,
    "TIME_CHAR": dt.time,
    "DOUBLE": float,
    "FLOAT": float,
    "REAL": float,
    "DECIMAL": decimal.Decimal,
    "NUMERIC": decimal.Decimal,
}


def declared_type(declared: str) -> type:
    """The Python type SQLAlchemy's SQLite dialect reflects a column declared ``declared``
    as (its type-name table, then SQLite's affinity rules; a REAL is a float), for the
    declared types whose reading is known here; :class:`Elsewhere` for the others (types
    with arguments other than digits, JSON, no type at all)."""
    match = re.match(r"([\w ]+)(\(.*?\))?", declared.upper())
    name, args = (match.group(1), match.group(2)) if match else ("", None)
    if args is not None and not re.fullmatch(r"\(\s*\d+\s*(,\s*\d+\s*)?\)", args):
        raise Elsewhere(f"declared type {declared!r}")
    if name in _NAMED:
        return _NAMED[name]
    # (ANY: the Store's own name for a type with no Python equivalent, see SQLiteAny)
    if name in ("JSON", "JSONB", "ANY") or not name or "BLOB" in name:
        raise Elsewhere(f"declared type {declared!r}")
    if "INT" in name:
        return int
    if "CHAR" in name or "CLOB" in name or "TEXT" in name:
        return str
    if "REAL" in name or "FLOA" in name or "DOUB" in name:
        return float
    return decimal.Decimal


def _storage(column: Column) -> str:
    """The storage name of ``column``'s type; Elsewhere for a type that names its SQL type
    by a function (only SQLAlchemy can tell how that reads and binds)."""
    made = column.info.sql_codec.column_type
    if type(made) is not StorageType or (made.name not in PLAIN and made.name not in TEXT_FORMS):
        raise Elsewhere(f"column {column.name!r}: storage {made!r}")
    return made.name


def _sql_name(column: Column, part: Companion) -> str:
    """The SQL name of ``column``'s companion ``part`` (one other tools read takes the
    field's name)."""
    return column.sql_name if part.own is not None else part.column(column.sql_name)


def _older(parts: tuple[Companion, ...]) -> tuple[Companion, ...]:
    return tuple(q for p in parts for q in (p.older if p.own is not None else (p,)))


class FileTable:
    """One table's statements and readers (see :meth:`FileDatabase.bind`)."""

    def __init__(self, db: FileDatabase, schema: TableSchema, declared: dict[str, str]) -> None:
        self.db = db
        self.schema = schema
        #: field name -> the SQL name of its own column, and its bind function
        self.own: dict[str, str] = {}
        self.binds: dict[str, Callable[[Any], Any] | None] = {}
        select: list[str] = []  # the SQL columns read, in order
        owners: list[str] = []  # the field each of them belongs to
        keys: dict[str, str] = {}  # SQL row key -> SQL name (as the Store's table's)
        entries = []
        for c in schema.columns:
            if c.name != c.sql_name:
                raise Elsewhere(f"column {c.name!r} is named {c.sql_name!r} in SQL")
            storage = _storage(c)
            form = TEXT_FORMS.get(storage)
            parts = c.info.companions_for(FILE_TARGET)
            own = next((p for p in parts if p.own is not None), None)
            name = c.sql_name
            if own is not None:
                if name in declared and own.own_column(name) not in declared:
                    parts, own = _older(parts), None  # a table from before that companion
                else:
                    name = own.own_column(name)
            if name not in declared:
                raise Elsewhere(f"column {name!r} is missing")
            present = tuple(
                p
                for p in parts
                if (c.sql_name if p.own is not None else p.column(name)) in declared
            )
            main = len(select)
            select.append(name)
            owners.append(c.name)
            keys[c.name] = name
            extra = []
            for p in present:
                extra.append(len(select))
                sql_name = _sql_name(c, p)
                select.append(sql_name)
                owners.append(c.name)
                keys[p.column(c.name)] = sql_name
            self.own[c.name] = name
            self.binds[c.name] = form.bind if form is not None else None
            result = skip_none(form.read) if form is not None and form.read else None
            read_column = form.read_column if form is not None else None
            entries.append((main, extra, present, c.info, result, read_column))
        readers = Readers(schema, schema.name, keys)
        for entry in entries:
            readers.add(*entry)
        _read, columns = readers.readers()
        #: The rows' decoder, a column at a time (the Store's own).
        self.columns: Callable[[Sequence[Sequence[Any]]], list[Sequence[Any]]] = columns
        #: The table's and the read columns' SQL names, quoted.
        self.table: str = quote(schema.name)
        self.select: str = ", ".join(map(quote, select))
        self._read = list(zip(owners, map(quote, select), strict=True))
        #: the columns read whatever is asked for: a value that cannot be read is refused
        #: naming its row
        self._always = {c.name for c in schema.naming_columns}

    # -- statements ----------------------------------------------------------------------
    def _value(self, column: Column, value: Any) -> Any:
        encoded = encode_value(column, value)
        bind = self.binds[column.name]
        return encoded if bind is None or encoded is None else bind(encoded)

    def _condition(self, where: Expr, params: list[Any]) -> str:
        """SQL for one comparison, as :meth:`Comparison.compile` builds it on SQLite."""
        if not isinstance(where, Comparison) or "." in where.column:
            raise Elsewhere(f"filter {where!r}")
        schema = self.schema
        column = filtered_column(schema, where.column)
        target = quote(self.own[column.name])
        op, value = where.op, where.value
        if op in ("is_null", "is_not_null"):
            return f"{target} IS NULL" if op == "is_null" else f"{target} IS NOT NULL"
        if value is not None or op not in ("==", "!="):
            refuse_encoded(schema, column, op)
        if op in ("in", "not_in"):
            values = [self._value(column, v) for v in value if v is not None]
            null = len(values) < len(value)
            params.extend(values)
            listed = f"({', '.join('?' * len(values))})"
            if op == "in":
                return (
                    f"({target} IN {listed} OR {target} IS NULL)"
                    if null
                    else f"{target} IN {listed}"
                )
            return (
                f"({target} NOT IN {listed} AND {target} IS NOT NULL)"
                if null
                else f"{target} NOT IN {listed}"
            )
        if op == "between":
            params.extend(self._value(column, v) for v in value)
            return f"{target} BETWEEN ? AND ?"
        if op == "like":
            check_like(schema, column, value)
            pattern = self._value(column, value)
            params.extend([pattern, pattern])
            # SQLite's LIKE stops reading text at a NUL: such text is matched by the
            # function of the same rule (as the SQLite backend compiles LikeMatch)
            return (
                f"(CASE WHEN (instr({target}, char(0)) > 0) THEN {LIKE_FUNCTION}(?, {target}) "
                f"ELSE {target} LIKE ? ESCAPE '\\' END)"
            )
        if value is None:
            if op == "==":
                return f"{target} IS NULL"
            if op == "!=":
                return f"{target} IS NOT NULL"
            raise FilterError(f"cannot compare column {column.name!r} {op} None")
        if op not in _OPERATORS:
            raise Elsewhere(f"operator {op!r}")
        params.append(self._value(column, value))
        return f"{target} {_OPERATORS[op]} ?"

    def _where(self, where: Sequence[Expr], params: list[Any]) -> str:
        parts = [self._condition(w, params) for w in where]
        return f" WHERE {' AND '.join(f'({p})' for p in parts)}" if parts else ""

    def count(self, where: Sequence[Expr]) -> int:
        """Number of rows matching every comparison of ``where``."""
        params: list[Any] = []
        sql = f"SELECT count(*) FROM {self.table}{self._where(where, params)}"
        return int(next(self.db.fetch(sql, params))[0][0])

    def rows(
        self,
        where: Sequence[Expr],
        order_by: Sequence[str] | None,
        limit: int | None,
        offset: int | None,
        columns: Sequence[str] | None = None,
    ) -> list[tuple[Any, ...]]:
        """The decoded rows (the schema's columns, in order), as :meth:`Store.rows` gives
        them; with ``columns`` (checked field names), tuples of just those columns, in that
        order: the other columns are selected as NULL, as the Store's ``rows(columns=...)``
        does, so that the same decoder reads them and nothing else is decoded."""
        params: list[Any] = []
        select = self.select
        picked: list[int] | None = None
        if columns is not None:
            needed = self._always.union(columns)
            select = ", ".join(sql if owner in needed else "NULL" for owner, sql in self._read)
            picked = [self.schema.column_names.index(name) for name in columns]
        sql = f"SELECT {select} FROM {self.table}{self._where(where, params)}"
        clauses = []
        for column, descending in order_items(order_by, self.schema):
            target = quote(self.own[column.name])
            if column.nullable:  # NULLs first ascending, last descending (see filters)
                clauses.append(f"{target} IS NULL {'ASC' if descending else 'DESC'}")
            clauses.append(f"{target} {'DESC' if descending else 'ASC'}")
        if clauses:
            sql += " ORDER BY " + ", ".join(clauses)
        if limit is not None or offset is not None:
            sql += " LIMIT ?"
            params.append(-1 if limit is None else limit)
            if offset is not None:
                sql += " OFFSET ?"
                params.append(offset)
        out: list[tuple[Any, ...]] = []
        for batch in self.db.fetch(sql, params):  # decoded a fetch at a time, as the Store's
            decoded = self.columns(batch)
            if picked is not None:
                decoded = [decoded[i] for i in picked]
            out.extend(zip(*decoded, strict=True))
        return out


__all__ = ["FILE_TARGET", "Elsewhere", "FileDatabase", "FileTable", "declared_type"]

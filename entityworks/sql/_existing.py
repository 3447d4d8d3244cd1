"""Tables that exist already: ``Store.create`` keeps one only if it has the columns the class
needs, each of a type that holds its values; otherwise it refuses, naming the difference.

``CREATE TABLE IF NOT EXISTS`` alone would keep any table of the name, and the first write or
read would then fail (or, worse, succeed on columns meaning something else). Types are
compared by family (integer, float, decimal, text, bytes, timestamp, date, time, interval,
uuid), read from the declared type names as SQLite reads affinity from them: what entityworks
itself declared, in this version or an earlier one, always matches its family, while a column
of text where the class has an integer does not. A type name of no family (SQLite's ``ANY``)
is not compared.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from ..errors import SchemaError
from ._bound import BoundModel
from ._database import Database

#: (part of a declared type name, its family), the first match wins (INTERVAL before INT,
#: DATETIME before DATE and TIME, POINT is no integer).
_FAMILIES = (
    ("INTERVAL", "interval"),
    ("POINT", ""),
    ("BOOL", "integer"),
    ("INT", "integer"),
    ("SERIAL", "integer"),
    ("CHAR", "text"),
    ("CLOB", "text"),
    ("TEXT", "text"),
    ("JSON", "text"),
    ("BLOB", "bytes"),
    ("BYTEA", "bytes"),
    ("BINARY", "bytes"),
    ("REAL", "float"),
    ("FLOA", "float"),
    ("DOUB", "float"),
    ("NUMERIC", "decimal"),
    ("DECIMAL", "decimal"),
    ("TIMESTAMP", "timestamp"),
    ("DATETIME", "timestamp"),
    ("DATE", "date"),
    ("TIME", "time"),
    ("UUID", "uuid"),
)


def type_name(type_: Any, dialect: sa.Dialect) -> str:
    """A column type as ``dialect`` declares it, without character set and collation (""
    when it has no SQL name)."""
    try:
        text = str(type_.compile(dialect=dialect))
    except (sa.exc.CompileError, sa.exc.UnsupportedCompilationError, TypeError):
        return ""
    return text.split(" CHARACTER SET ")[0].split(" COLLATE ")[0].upper()


def family(name: str) -> str:
    """The family of a declared type name ("" for none)."""
    return next((kind for part, kind in _FAMILIES if part in name), "")


def differences(table: sa.Table, live: dict[str, Any], dialect: sa.Dialect) -> list[str]:
    """How the existing table (``live``: column name -> reflected type) differs from
    ``table``: missing, extra and differently typed columns, in that order."""
    wanted = {c.name: type_name(c.type, dialect) for c in table.columns}
    fields = {c.name: c.key for c in table.columns}
    found = {name: type_name(t, dialect) for name, t in live.items()}
    out: list[str] = []
    missing = [
        f"{n} ({'' if fields[n] == n else 'of field ' + fields[n] + ', '}{t or '?'})"
        for n, t in wanted.items()
        if n not in found
    ]
    extra = [f"{n} ({t or '?'})" for n, t in found.items() if n not in wanted]
    typed = [
        f"{n} is {found[n]}, not {t}"
        for n, t in wanted.items()
        if n in found and family(t) and family(found[n]) and family(t) != family(found[n])
    ]
    if missing:
        out.append(f"missing column(s) {', '.join(missing)}")
    if extra:
        out.append(f"extra column(s) {', '.join(extra)}")
    if typed:
        out.append(f"other type(s): {'; '.join(typed)}")
    return out


def refuse_other_tables(db: Database, model: BoundModel) -> None:
    """SchemaError when a table ``create`` would make for ``model`` exists already with
    other columns (see the module docstring)."""
    tables = db.tables_with_references(model)
    with db.connection() as conn:
        inspector = sa.inspect(conn)
        present = set(inspector.get_table_names())
        for table in tables:
            if table.name not in present:
                continue
            live = {c["name"]: c["type"] for c in inspector.get_columns(table.name)}
            found = differences(table, live, db.dialect)
            if found:
                owner = model.cls.__qualname__
                raise SchemaError(
                    f"{owner}: table {table.name!r} exists in {db!r} with other columns than "
                    f"{owner} needs: {'; '.join(found)}. Nothing was created; drop or rename "
                    f"that table, or map it with a class that matches it",
                    cls=model.cls,
                )


__all__ = ["differences", "family", "refuse_other_tables", "type_name"]

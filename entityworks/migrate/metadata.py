"""The tables of dataclasses as entityworks builds them for a backend: what Alembic compares
a database with, and the small column lookups every comparison needs.

Apart from the diff and the revisions because both (and a user's ``env.py``) start here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

import sqlalchemy as sa

from ..errors import EntityworksError
from ..model.schema import table_schema
from ..sql.backends import for_name
from ..sql.tables import metadata_of
from .dialects import declared_any, dialect_name


def target_metadata(
    classes: Iterable[type], dialect: str, conn: sa.Connection | None = None
) -> sa.MetaData:
    """The tables of ``classes`` (child tables and the tables their foreign keys refer to
    included) as entityworks builds them for ``dialect``: what Alembic's autogenerate
    compares a database with. Given ``conn``, a table it has keeps its layout (a SQLite
    table written before Decimals kept their plain text: see ``tables.layout``) and its
    ``ANY`` columns (entityworks 0.2.3's: see ``tables.legacy_any``)."""
    classes = list(classes)
    layouts = _layouts(conn, classes) if conn is not None else None
    return metadata_of(classes, dialect, layouts=layouts)


def _layouts(conn: sa.Connection, classes: Sequence[type]) -> dict[str, dict[str, str]]:
    """The column names of the tables of ``classes`` that ``conn``'s database has, each
    with ``"ANY"`` for an SQLite ``ANY`` column with our ``CHECK`` on ``typeof``, else
    ``""``."""
    inspector = sa.inspect(conn)
    backend = for_name(conn.dialect.name)
    out: dict[str, dict[str, str]] = {}
    for name in sorted(table_names(classes)):
        if not inspector.has_table(name):
            continue
        checked = backend.stored_types(inspector, name)  # {} where no CHECK holds a type
        out[name] = {
            c["name"]: "ANY" if c["name"] in checked and declared_any(c) else ""
            for c in inspector.get_columns(name)
        }
    return out


def metadata_for(
    *models: type, dialect: str | sa.Dialect | sa.Connection | sa.Engine | None = None
) -> sa.MetaData:
    """The SQLAlchemy ``MetaData`` of your own dataclasses (child tables included), exactly as
    ``Store.create`` builds them: the ``target_metadata`` of an Alembic ``env.py``.

    ``dialect`` is the backend the tables are for (a name, a Backend, an Engine or a
    Connection): the scaffolded ``env.py`` (``entityworks migrations init``) passes Alembic's
    connection. Without it the tables are built for SQLite, whose options (STRICT, the length
    CHECK of ``max_length`` text) other backends ignore or do not compare.
    """
    if not models:
        raise EntityworksError("metadata_for() needs at least one dataclass")
    for model in models:
        table_schema(model)  # refuse a class that is no table before anything is built
    conn = dialect if isinstance(dialect, sa.Connection) else None
    return target_metadata(models, dialect_name(dialect), conn)


def table_names(classes: Iterable[type]) -> set[str]:
    """Every table of ``classes``: child tables and the tables foreign keys refer to
    included."""
    names: set[str] = set()
    todo, seen = list(classes), set()
    while todo:
        cls = todo.pop()
        if cls in seen:
            continue
        seen.add(cls)
        schema = table_schema(cls)
        names.add(schema.name)
        names.update(child.name for child in schema.descendants)
        todo += [c.references for c in schema.columns if c.references is not None]
    return names


def include_tables(classes: Iterable[type]) -> Callable[[str | None, str, Any], bool]:
    """An Alembic ``include_name`` hook comparing the tables of ``classes`` only."""
    names = table_names(classes)

    def include_name(name: str | None, type_: str, _parents: Any) -> bool:
        return type_ != "table" or name in names

    return include_name


def sql_column(table: sa.Table, name: str) -> Any:
    """The column of ``table`` called ``name`` in SQL (``table.c`` is keyed by field names,
    which ``column(name=...)`` makes differ); ``None`` if there is none."""
    return next((c for c in table.columns if c.name == name), None)


def default_text(column: sa.Column[Any]) -> str | None:
    """The text of a column's literal DEFAULT (None without one)."""
    default = column.server_default
    if isinstance(default, sa.DefaultClause):
        arg = default.arg
        return arg if isinstance(arg, str) else str(getattr(arg, "text", arg))
    return None


__all__ = [
    "default_text",
    "include_tables",
    "metadata_for",
    "sql_column",
    "table_names",
    "target_metadata",
]

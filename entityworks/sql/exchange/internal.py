"""Tables no import writes into: the bookkeeping of entityworks, Alembic and SQLite.

Every import (one table, a DataSet, a DiffGram; the Python API and ``import-xml``) checks the
tables it would write with :func:`refuse_internal` before it touches the database, whatever
named them: the class, ``--table``, the XSD, the DataSet or the document's row elements. The
names are compared case-insensitively (SQLite's table names are; MariaDB's may be), and a
table shaped like an Alembic version table (one column, ``version_num``) is refused under any
name, since :func:`entityworks.migrate.version_tables` would take it for one.
"""

from __future__ import annotations

from collections.abc import Iterable

from ...errors import SchemaError
from ...model.schema import TableSchema
from ..backends.light import INTERNAL_PREFIXES

#: The catalog's revision table (:data:`entityworks.migrate.VERSION_TABLE`), Alembic's
#: default one (a user's own migrations), and the logical schema (:data:`..logical.TABLE`).
INTERNAL_TABLES = ("entityworks_version", "alembic_version", "entityworks_schema")
#: SQLite's own tables (``sqlite_sequence``, ``sqlite_stat1``, ``sqlite_master``...) are
#: those named with one of :data:`INTERNAL_PREFIXES` (the backend's, re-exported here).
#: The one column of an Alembic version table.
VERSION_COLUMN = "version_num"


_PREFIXED = [f"{prefix}*" for prefix in INTERNAL_PREFIXES]


def is_internal(name: str) -> bool:
    """True for the name of a table entityworks, Alembic or SQLite keeps for itself."""
    folded = name.casefold()
    return folded in INTERNAL_TABLES or folded.startswith(INTERNAL_PREFIXES)


def refuse_internal_names(names: Iterable[str]) -> None:
    """:class:`SchemaError` naming the first internal table among ``names``."""
    for name in names:
        if is_internal(name):
            raise SchemaError(
                f"{name!r} is an internal table; entityworks does not write into "
                f"it (internal: {', '.join([*INTERNAL_TABLES, *_PREFIXED])}); "
                "nothing was imported"
            )


def refuse_internal(schemas: Iterable[TableSchema]) -> None:
    """Refuse (:class:`SchemaError`) an import into an internal table: any of ``schemas``
    or of their child tables named as one, or shaped as an Alembic version table."""
    tables = [t for schema in schemas for t in (schema, *schema.descendants)]
    refuse_internal_names(t.name for t in tables)
    for t in tables:
        if [c.sql_name for c in t.columns] == [VERSION_COLUMN]:
            raise SchemaError(
                f"table {t.name!r} has the shape of an Alembic version table "
                f"(one column, {VERSION_COLUMN}), which 'migrate' would take "
                "for one; entityworks does not import into it; nothing was "
                "imported",
                cls=t.cls,
            )


__all__ = [
    "INTERNAL_PREFIXES",
    "INTERNAL_TABLES",
    "VERSION_COLUMN",
    "is_internal",
    "refuse_internal",
    "refuse_internal_names",
]

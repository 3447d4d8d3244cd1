"""Alembic version tables in a database: the catalog's own (``entityworks_version``) and a
user's, whose presence means the database changes through revisions only.
"""

from __future__ import annotations

import sqlalchemy as sa

from ..errors import SchemaError

#: Alembic's version table for the catalog (kept apart from a user's own ``alembic_version``).
VERSION_TABLE = "entityworks_version"


def version_tables(conn: sa.Connection) -> dict[str, tuple[str, ...]]:
    """Alembic version tables in a database (a table whose one column is ``version_num``),
    with the revisions each holds."""
    found: dict[str, tuple[str, ...]] = {}
    inspector = sa.inspect(conn)
    for (_schema, name), columns in inspector.get_multi_columns().items():
        if [c["name"] for c in columns] == ["version_num"]:
            stmt = sa.select(sa.column("version_num", sa.String)).select_from(sa.table(name))
            found[name] = tuple(sorted(str(v) for v in conn.execute(stmt).scalars()))
    return found


def managed_by_alembic(conn: sa.Connection) -> dict[str, tuple[str, ...]]:
    """The version tables of a user's own Alembic (the catalog's ``entityworks_version``
    excluded): a database with one is changed through revisions only."""
    return {
        name: revisions for name, revisions in version_tables(conn).items() if name != VERSION_TABLE
    }


def refuse_if_managed(conn: sa.Connection, where: object) -> None:
    """SchemaError when the database is under a user's own Alembic (see :func:`apply`)."""
    managed = managed_by_alembic(conn)
    if managed:
        name, revisions = next(iter(managed.items()))
        at = ", ".join(revisions) or "no revision yet"
        raise SchemaError(
            f"{where} is managed by Alembic (version table {name}: {at}); changing its "
            "tables here would leave the database and the revisions disagreeing. Write a "
            "revision instead: alembic revision --autogenerate -m '...', then alembic "
            "upgrade head"
        )


__all__ = ["VERSION_TABLE", "managed_by_alembic", "refuse_if_managed", "version_tables"]

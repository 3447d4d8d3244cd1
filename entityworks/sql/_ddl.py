"""Tables: ``create``, ``drop`` and ``table_names``, all of a class's tables or none.

Kept apart because DDL follows other rules than rows: it takes the schema lock, MariaDB commits
each statement as it runs (so its tables are made one by one and undone on failure), and a
table others refer to is never dropped.
"""

from __future__ import annotations

import sqlalchemy as sa

from ..errors import EntityworksError, SchemaError
from ..model.schema import TableSchema
from . import logical
from ._bound import BoundModel, descendants
from ._database import Database
from ._locate import error_text
from .ddllock import schema_lock


def create(db: Database, cls: type) -> sa.Table:
    """Create the table of ``cls`` and its child tables if they do not exist.

    All of them or none: a failure raises SchemaError and leaves no new table behind.
    The logical schema of each table created (:mod:`.logical`: each column's registry type)
    is recorded with it, so that :meth:`Store.reflect` gives back the types of ``cls``.
    """
    model = db.model(cls)
    tables = db.tables_with_references(model)
    if not db.backend.transactional_ddl:
        _create_one_by_one(db, model, tables)
        return model.table
    try:  # SQLite and PostgreSQL roll DDL back with the transaction (or savepoint)
        with db.connection(write=True) as conn, schema_lock(conn):
            inspector = sa.inspect(conn)
            missing = {t.name for t in tables if not inspector.has_table(t.name)}
            model.table.metadata.create_all(conn, tables=tables, checkfirst=True)
            _record(db, model, conn, missing)
    except (sa.exc.StatementError, db.dbapi_error) as exc:
        raise _create_error(model, exc) from exc
    return model.table


def _roots(db: Database, model: BoundModel) -> list[TableSchema]:
    """The schemas of the tables :func:`create` makes for ``model`` that are no child
    tables: its own and those its foreign keys refer to (and theirs)."""
    out: list[TableSchema] = []

    def visit(m: BoundModel) -> None:
        if any(s.cls is m.cls for s in out):
            return
        out.append(m.schema)
        for c in m.schema.columns:
            if c.references is not None and c.references is not m.cls:
                visit(db.model(c.references))

    visit(model)
    return out


def _record(db: Database, model: BoundModel, conn: sa.Connection, created: set[str]) -> None:
    """Record the logical schema of the tables ``created`` (see :mod:`.logical`)."""
    if created:
        for schema in _roots(db, model):
            logical.record(conn, schema, only=created)


def _create_one_by_one(db: Database, model: BoundModel, tables: list[sa.Table]) -> None:
    """MariaDB commits every CREATE TABLE as it runs: create the missing tables one by
    one and, if one fails, drop those this call created."""
    with db.connection() as conn:
        inspector = sa.inspect(conn)
        missing = [t for t in tables if not inspector.has_table(t.name)]
    if not missing:
        return
    if db.in_transaction:
        raise EntityworksError(
            f"cannot create table {missing[0].name!r} inside transaction(): "
            f"{db.backend.title} would commit the open transaction; create the tables before it"
        )
    created: list[sa.Table] = []
    with db.connect() as conn, schema_lock(conn):
        # look again under the lock: another process may have created them meanwhile
        inspector = sa.inspect(conn)
        missing = [t for t in missing if not inspector.has_table(t.name)]
        schema_rows = logical.schema_table(sa.MetaData())
        if missing and not inspector.has_table(schema_rows.name):
            missing.insert(0, schema_rows)  # the logical schema's table, made here too
        try:
            for table in missing:  # referenced tables come first
                table.create(conn)
                created.append(table)
            _record(db, model, conn, {t.name for t in created} - {schema_rows.name})
            conn.commit()
        except (sa.exc.StatementError, db.dbapi_error) as exc:
            conn.rollback()
            for table in reversed(created):
                table.drop(conn, checkfirst=True)
            conn.commit()
            raise _create_error(model, exc) from exc


def drop(db: Database, cls: type) -> None:
    """Drop the table of ``cls`` and its child tables if they exist."""
    model = db.model(cls)
    tables = [model.table] + [child.table for child in descendants(model)]
    if not db.backend.transactional_ddl and db.in_transaction:
        with db.connection() as conn:
            inspector = sa.inspect(conn)
            if any(inspector.has_table(t.name) for t in tables):
                raise EntityworksError(
                    f"cannot drop table {model.schema.name!r} inside transaction(): "
                    f"{db.backend.title} would commit the open transaction; drop it outside"
                )
        return
    try:
        with db.connection(write=True) as conn:
            _refuse_referenced(conn, model, {t.name for t in tables})
            model.table.metadata.drop_all(conn, tables=tables, checkfirst=True)
            logical.forget(conn, [t.name for t in tables])
    except (sa.exc.StatementError, db.dbapi_error) as exc:
        raise SchemaError(
            f"cannot drop table {model.schema.name!r}: {error_text(exc)}", cls=model.cls
        ) from exc
    db.forget(cls)  # bound again, to what is live, when next used


def table_names(db: Database) -> list[str]:
    """Names of the tables in the database."""
    with db.connection() as conn:
        return sa.inspect(conn).get_table_names()


def _create_error(model: BoundModel, exc: BaseException) -> SchemaError:
    return SchemaError(
        f"cannot create table {model.schema.name!r} (or one of its child "
        "tables or the tables it refers to) for "
        f"{model.cls.__qualname__}: {error_text(exc)}; no table was created",
        cls=model.cls,
    )


def _refuse_referenced(conn: sa.Connection, model: BoundModel, dropped: set[str]) -> None:
    """SchemaError when a table that stays has a foreign key to one of ``dropped``: SQLite
    would empty it (or set its references to NULL) through the foreign key's ON DELETE
    action, the other backends refuse; entityworks refuses on all three, saying which."""
    inspector = sa.inspect(conn)
    for name in inspector.get_table_names():
        if name in dropped:
            continue
        for fk in inspector.get_foreign_keys(name):
            if fk.get("referred_table") in dropped:
                raise SchemaError(
                    f"cannot drop table {fk['referred_table']!r}: table {name!r} refers to it "
                    f"({', '.join(fk['constrained_columns'])}); drop {name!r} first",
                    cls=model.cls,
                )


__all__ = ["create", "drop", "table_names"]

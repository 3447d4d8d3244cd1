"""Alembic environment of the entityworks level catalog.

The target schema is the catalog's dataclasses as entityworks itself maps them, built for the
dialect being migrated, so ``alembic revision --autogenerate`` compares a database with what
the code would create. Only catalog tables are compared; other tables are left alone.

The database is, first found: a connection handed over by :mod:`entityworks.migrate`,
``-x db=URL`` (or a path), the ``ENTITYWORKS_DB`` environment variable, ``sqlalchemy.url``.
"""

from __future__ import annotations

import os
from typing import Any

import sqlalchemy as sa
from alembic import context

from entityworks import Store
from entityworks.migrate import (
    VERSION_TABLE,
    compare_server_default,
    compare_type,
    include_tables,
    migration_connection,
    render_item,
    target_metadata,
)
from entityworks.migrate.dialects import rebuilds_tables

config = context.config


def _classes() -> list[type]:
    """The catalog's dataclasses: handed over by :func:`entityworks.migrate.upgrade`, else
    (the ``alembic`` command line) those of :mod:`entityworks.catalog`."""
    given = config.attributes.get("entityworks_classes")
    if given is not None:
        return list(given)
    from entityworks.catalog import TABLES

    return list(TABLES.values())


def _url() -> str:
    given = (
        context.get_x_argument(as_dictionary=True).get("db")
        or os.environ.get("ENTITYWORKS_DB")
        or config.get_main_option("sqlalchemy.url")
    )
    if not given:
        raise RuntimeError("no database: pass -x db=URL or set ENTITYWORKS_DB")
    return given


def _configure(**kwargs: Any) -> None:
    context.configure(
        version_table=VERSION_TABLE,
        include_name=include_tables(_classes()),
        compare_type=compare_type,
        compare_server_default=compare_server_default,
        render_item=render_item,
        **kwargs,
    )


def run_offline() -> None:
    """Write the SQL of the migrations instead of running them (``alembic upgrade --sql``)."""
    url = Store(_url()).url
    _configure(
        url=url,
        target_metadata=target_metadata(_classes(), url.get_backend_name()),
        literal_binds=True,
        render_as_batch=rebuilds_tables(url.get_backend_name()),
    )
    with context.begin_transaction():
        context.run_migrations()


def _run(connection: sa.Connection) -> None:
    name = connection.dialect.name
    _configure(
        connection=connection,
        target_metadata=target_metadata(_classes(), name),
        render_as_batch=rebuilds_tables(name),
    )
    with context.begin_transaction():
        context.run_migrations()


def run_online() -> None:
    """Migrate a live database (SQLite pragmas come from entityworks' own engine)."""
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    store = Store(_url())
    try:
        with migration_connection(store) as conn:
            _run(conn)
    finally:
        store.close()


if context.is_offline_mode():
    run_offline()
else:
    run_online()

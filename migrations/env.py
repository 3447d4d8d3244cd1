"""Alembic environment of the entityworks level catalog.

The target schema is the catalog's dataclasses as entityworks itself maps them, built for the
dialect being migrated, so ``alembic revision --autogenerate`` compares a database with what
the code would create. Only catalog tables are compared; other tables are left alone.

The database is, first found: a connection handed over by :mod:`entityworks.migrate`,
``-x db=URL`` (or a path), the ``ENTITYWORKS_DB`` environment variable, ``sqlalchemy.url``.
"""

from __future__ import annotations

import os

import sqlalchemy as sa
from alembic import context

from entityworks import Store
from entityworks.migrate import VERSION_TABLE, catalog_metadata, include_catalog_name

config = context.config


def _url() -> str:
    given = context.get_x_argument(as_dictionary=True).get("db") or os.environ.get(
        "ENTITYWORKS_DB") or config.get_main_option("sqlalchemy.url")
    if not given:
        raise RuntimeError("no database: pass -x db=URL or set ENTITYWORKS_DB")
    return given


def _configure(**kwargs: object) -> None:
    context.configure(version_table=VERSION_TABLE, include_name=include_catalog_name,
                      compare_type=True, **kwargs)


def run_offline() -> None:
    """Write the SQL of the migrations instead of running them (``alembic upgrade --sql``)."""
    url = Store(_url()).url
    _configure(url=url, target_metadata=catalog_metadata(url.get_backend_name()),
               literal_binds=True, render_as_batch=url.get_backend_name() == "sqlite")
    with context.begin_transaction():
        context.run_migrations()


def _run(connection: sa.Connection) -> None:
    name = connection.dialect.name
    _configure(connection=connection, target_metadata=catalog_metadata(name),
               render_as_batch=name == "sqlite")
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
        with store.engine.connect() as conn:
            _run(conn.execution_options(entityworks_write=True))
            conn.commit()
    finally:
        store.close()


if context.is_offline_mode():
    run_offline()
else:
    run_online()

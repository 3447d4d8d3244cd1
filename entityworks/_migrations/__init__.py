"""The catalog's Alembic script directory: ``env.py``, ``script.py.mako``, ``alembic.ini`` and
the revisions in ``versions/``.

Shipped inside the package (never a top-level ``migrations`` that would shadow a project's
own) and found by :func:`entityworks.migrate.migrations_dir`; Alembic loads these files by
path, so nothing imports this package. From a checkout::

    alembic -c entityworks/_migrations/alembic.ini -x db=sqlite:///catalog.db upgrade head
    alembic -c entityworks/_migrations/alembic.ini -x db=sqlite:///catalog.db \
        revision --autogenerate -m "what changed"
"""

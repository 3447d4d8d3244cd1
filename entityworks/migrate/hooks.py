"""What Alembic is configured with to compare and render entityworks tables: the
``compare_server_default`` and ``render_item`` hooks, and the ``context.configure`` options
of an ``env.py`` (the catalog's and a user's scaffolded one).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import sqlalchemy as sa
from alembic.migration import MigrationContext

from ..model.defaults import NUMBER, is_text, parse_reflected, same_default
from . import dialects
from .metadata import default_text, include_tables, metadata_for


def compare_server_default(
    context: MigrationContext,
    inspected_column: sa.Column[Any],
    metadata_column: sa.Column[Any],
    inspected_default: str | None,
    metadata_default: Any,
    rendered_metadata_default: str | None,
) -> bool | None:
    """Alembic's ``compare_server_default`` hook: True when a column's DEFAULT in the
    database differs from the one entityworks writes for the field's literal default.

    Backends spell one default differently (``'10'::bigint``, ``(10)``, ``10``; MariaDB
    ``1.500...`` for ``1.50``), and SQLAlchemy cannot read every MariaDB text default, so
    MariaDB's own ``information_schema`` is read and both sides are compared as values (see
    :func:`entityworks.model.defaults.same_default`). A generated key's sequence default is no
    difference; a DEFAULT entityworks did not write (an expression, a user's own) is left to
    Alembic.
    """
    ours = metadata_column.server_default
    wanted = default_text(metadata_column)
    if ours is not None and (
        wanted is None
        or not isinstance(ours.arg, str)  # type: ignore[attr-defined]
        and not NUMBER.fullmatch(wanted)
    ):
        return None
    if (
        ours is None
        and metadata_column.primary_key
        and metadata_column.autoincrement in (True, "auto")
    ):
        return False  # SERIAL's nextval(...), an identity: the key generator itself
    text = inspected_default
    reflected = parse_reflected(text)
    if dialects.hides_text_defaults(context.dialect) and context.connection is not None:
        table, name = metadata_column.table.name, inspected_column.name
        shown = dialects.mariadb_column_default(context.connection, table, name)
        reflected = parse_reflected(shown, backslashes=True)
        if (
            reflected is not None
            and wanted is not None
            and is_text(metadata_column.type)
            and dialects.mariadb_shown_as(wanted, reflected)
        ):
            return False
    return not same_default(reflected, wanted, metadata_column.type)


def render_item(type_: str, obj: Any, autogen_context: Any) -> Any:
    """Alembic's ``render_item`` hook: a revision that names one of entityworks' column types
    (``entityworks.sql.sqltypes.ExactDecimal()``...) imports its module."""
    if type_ == "type":
        module = type(obj).__module__
        if module.startswith("entityworks."):
            autogen_context.imports.add(f"import {module}")
    if (
        type_ == "column"
        and isinstance(obj, sa.Column)
        and not getattr(autogen_context, "_entityworks_column", False)
    ):
        autogen_context._entityworks_column = True  # Alembic renders it, not this hook again
        try:
            return _render_column_checks(obj, autogen_context)
        finally:
            autogen_context._entityworks_column = False
    return False


def _render_column_checks(column: sa.Column[Any], autogen_context: Any) -> Any:
    """A column with CHECKs of its own (SQLite's ``typeof`` check of an ANY column), which
    Alembic would leave out of ``add_column``/``create_table``: rendered with them."""
    checks = [c for c in column.constraints if isinstance(c, sa.CheckConstraint) and c.name]
    if not checks:
        return False
    from alembic.autogenerate import render as alembic_render

    text = alembic_render._render_column(column, autogen_context)
    type_text = alembic_render._repr_type(column.type, autogen_context)
    at = text.find(type_text)
    if at < 0:  # pragma: no cover - Alembic changed its rendering: keep it as it is
        return False
    prefix = alembic_render._sqlalchemy_autogenerate_prefix(autogen_context)
    rendered = ", ".join(
        f"{prefix}CheckConstraint({str(c.sqltext)!r}, name={c.name!r})" for c in checks
    )
    cut = at + len(type_text)
    return f"{text[:cut]}, {rendered}{text[cut:]}"


def alembic_options(
    models: Iterable[type],
    dialect: str | sa.Dialect | sa.Connection | sa.Engine | None = None,
    *,
    version_table: str = "alembic_version",
) -> dict[str, Any]:
    """The ``context.configure`` options of an ``env.py`` migrating ``models``: their
    metadata, only their tables compared (other tables in the database are left alone),
    types and server defaults compared, SQLite changes in batch mode, and the version table
    (``alembic_version``: the catalog keeps its own, ``entityworks_version``)."""
    models = list(models)
    name = dialects.dialect_name(dialect)
    return {
        "target_metadata": metadata_for(*models, dialect=dialect),
        "include_name": include_tables(models),
        "compare_type": True,
        "compare_server_default": compare_server_default,
        "render_item": render_item,
        "render_as_batch": dialects.rebuilds_tables(name),
        "version_table": version_table,
    }


__all__ = ["alembic_options", "compare_server_default", "render_item"]

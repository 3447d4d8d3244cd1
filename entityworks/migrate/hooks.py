"""What Alembic is configured with to compare and render entityworks tables: the
``compare_server_default`` and ``render_item`` hooks, and the ``context.configure`` options
of an ``env.py`` (the catalog's and a user's scaffolded one).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from typing import Any, Literal

import sqlalchemy as sa
from alembic.autogenerate import render_python_code
from alembic.autogenerate.api import AutogenContext
from alembic.migration import MigrationContext
from alembic.operations import ops

from ..sql.defaults import NUMBER, is_text, parse_reflected, same_default
from . import dialects
from .metadata import default_text, include_tables, metadata_for


def compare_type(
    context: MigrationContext,
    inspected_column: Any,
    metadata_column: Any,
    inspected_type: Any,
    metadata_type: Any,
) -> bool | None:
    """Alembic's type comparison, except that a JSON field's column (the database's JSON
    type in a new table) is no change from the text column an older table keeps its JSON
    in, nor from a JSON column: both hold the same text. Converting one is a revision of
    its own (``docs/how-to/json-queries.md``). None: Alembic's own comparison."""
    from ..sql.sqltypes import JsonText

    if isinstance(metadata_type, JsonText) and (
        isinstance(inspected_type, sa.Text | sa.JSON)
        or "JSON" in type(inspected_type).__name__.upper()
    ):
        return False
    return None


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
    :func:`entityworks.sql.defaults.same_default`). A generated key's sequence default is no
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
        shown = dialects.shown_column_default(context.connection, table, name)
        reflected = parse_reflected(shown, backslashes=True)
        if (
            reflected is not None
            and wanted is not None
            and is_text(metadata_column.type)
            and dialects.shown_as(wanted, reflected)
        ):
            return False
    return not same_default(reflected, wanted, metadata_column.type)


def render_item(type_: str, obj: Any, autogen_context: AutogenContext) -> str | Literal[False]:
    """Alembic's ``render_item`` hook: a revision that names one of entityworks' column types
    (``entityworks.sql.sqltypes.ExactDecimal()``...) imports its module, and a column keeps
    the CHECKs of its own (see :func:`_render_column_checks`)."""
    if type_ == "type":
        module = type(obj).__module__
        if module.startswith("entityworks."):
            autogen_context.imports.add(f"import {module}")
    if type_ == "column" and isinstance(obj, sa.Column):
        return _render_column_checks(obj, autogen_context)
    return False


def _render_column_checks(
    column: sa.Column[Any], autogen_context: AutogenContext
) -> str | Literal[False]:
    """A column with CHECKs of its own (SQLite's ``typeof`` check of an ANY column), which
    Alembic would leave out of ``add_column``/``create_table``: rendered with them.

    Alembic renders the column as it always does, through its public
    ``render_python_code`` (an ``add_column`` of it, with the same prefixes, migration
    context and ``render_item`` hook, the column itself left to Alembic); the checks go in
    right after the column's type, and the imports that rendering asked for join the
    revision's."""
    checks = [c for c in column.constraints if isinstance(c, sa.CheckConstraint) and c.name]
    if not checks:
        return False
    opts = autogen_context.opts
    outer: Any = opts.get("render_item")
    inner: list[AutogenContext] = []

    def hook(kind: str, obj: Any, context: AutogenContext) -> str | Literal[False]:
        inner.append(context)
        if obj is column or outer is None:
            return False
        rendered: str | Literal[False] = outer(kind, obj, autogen_context)
        return rendered

    code = render_python_code(
        ops.UpgradeOps(
            [ops.AddColumnOp(column.table.name if column.table is not None else "t", column)]
        ),  # fmt: skip
        sqlalchemy_module_prefix=opts.get("sqlalchemy_module_prefix") or "",
        alembic_module_prefix=opts.get("alembic_module_prefix") or "",
        render_item=hook,
        migration_context=autogen_context.migration_context,
        user_module_prefix=opts.get("user_module_prefix"),
    )
    if inner:  # one context: the one render_python_code made
        autogen_context.imports.update(inner[0].imports)
    text = _column_call(code)
    if text is None:  # pragma: no cover - Alembic changed its rendering: keep it as it is
        return False
    call, source = text
    prefix = _segment(source, call.func)[: -len("Column")]
    cut = _offset(source, call.args[1].end_lineno, call.args[1].end_col_offset)
    rendered = ", ".join(
        f"{prefix}CheckConstraint({str(c.sqltext)!r}, name={c.name!r})" for c in checks
    )
    return f"{source[:cut]}, {rendered}{source[cut:]}"


def _column_call(code: str) -> tuple[ast.Call, str] | None:
    """The ``Column(...)`` call of the rendered ``add_column`` in ``code`` (and its text).

    ``code`` is a function body whose first line is not indented: each line is taken
    without its indentation (Alembic writes one operation per line, and a repr has no
    line break)."""
    source = "\n".join(line.strip() for line in code.splitlines())
    try:
        tree = ast.parse(source)
    except SyntaxError:  # pragma: no cover - not Python: Alembic changed its rendering
        return None
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and _segment(source, node.func).endswith("Column")
            and len(node.args) >= 2
        ):
            text = _segment(source, node)
            again = ast.parse(text).body[0]
            assert isinstance(again, ast.Expr) and isinstance(again.value, ast.Call)
            return again.value, text
    return None  # pragma: no cover


def _segment(source: str, node: ast.AST) -> str:
    return ast.get_source_segment(source, node) or ""


def _offset(source: str, line: int | None, column: int | None) -> int:
    """The string index of ``ast``'s (line, UTF-8 byte column) position in ``source``."""
    lines = source.splitlines(keepends=True)
    row = (line or 1) - 1
    before = sum(len(text) for text in lines[:row])
    return before + len(lines[row].encode()[: column or 0].decode())


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
        "compare_type": compare_type,
        "compare_server_default": compare_server_default,
        "render_item": render_item,
        "render_as_batch": dialects.rebuilds_tables(name),
        "version_table": version_table,
    }


__all__ = ["alembic_options", "compare_server_default", "compare_type", "render_item"]

"""The ``render_item`` hook on the Alembic installed: a column with CHECKs of its own (SQLite's
``typeof`` check of an ANY column) is rendered as Alembic renders it, with its checks right
after the type, and the imports its rendering needs reach the revision (issue 30: through
Alembic's public ``render_python_code``, no private renderer)."""

from __future__ import annotations

import ast

import sqlalchemy as sa
from alembic.autogenerate import render_python_code
from alembic.autogenerate.api import AutogenContext
from alembic.migration import MigrationContext
from alembic.operations import ops
from sqlalchemy.dialects import mysql

from entityworks.migrate import render_item
from entityworks.sql import sqltypes


def _context(prefix: str = "sa.") -> AutogenContext:
    migration = MigrationContext.configure(dialect_name="sqlite")
    return AutogenContext(
        migration,
        opts={
            "sqlalchemy_module_prefix": prefix,
            "alembic_module_prefix": "op.",
            "render_item": render_item,
            "user_module_prefix": None,
        },
    )


def _call(text: str) -> ast.Call:
    node = ast.parse(text).body[0]
    assert isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
    return node.value


def test_a_column_s_checks_follow_its_type() -> None:
    table = sa.Table(
        "t",
        sa.MetaData(),
        sa.Column(
            "x",
            mysql.VARCHAR(10),
            sa.CheckConstraint("typeof(x) = 'text'", name="type_x"),
            server_default="a'b",
            nullable=False,
            comment="é",
        ),
    )
    context = _context()
    text = render_item("column", table.c.x, context)
    assert isinstance(text, str)
    call = _call(text)
    assert ast.unparse(call.func) == "sa.Column"
    assert [ast.literal_eval(a) for a in call.args[:1]] == ["x"]
    assert ast.unparse(call.args[1]) == "mysql.VARCHAR(length=10)"
    check = call.args[2]
    assert isinstance(check, ast.Call) and ast.unparse(check.func) == "sa.CheckConstraint"
    assert ast.literal_eval(check.args[0]) == "typeof(x) = 'text'"
    assert {k.arg: ast.literal_eval(k.value) for k in call.keywords} == {
        "server_default": "a'b",
        "nullable": False,
        "comment": "é",
    }
    assert {k.arg: ast.literal_eval(k.value) for k in check.keywords} == {"name": "type_x"}
    assert "from sqlalchemy.dialects import mysql" in context.imports  # the type's module


def test_our_types_are_imported_and_the_prefix_is_the_revision_s() -> None:
    table = sa.Table(
        "t",
        sa.MetaData(),
        sa.Column(
            "ñ",
            sqltypes.ExactDecimal(),
            sa.CheckConstraint("typeof(\"ñ\") = 'text'", name="type_ñ"),
            sa.Identity(),
        ),
    )
    context = _context(prefix="sqlalchemy.")
    text = render_item("column", table.c["ñ"], context)
    assert isinstance(text, str)
    call = _call(text)
    assert ast.unparse(call.func) == "sqlalchemy.Column"
    assert ast.unparse(call.args[1]) == "entityworks.sql.sqltypes.ExactDecimal()"
    assert ast.unparse(call.args[2].func) == "sqlalchemy.CheckConstraint"  # type: ignore[attr-defined]
    assert ast.unparse(call.args[3]).startswith("sqlalchemy.Identity(")
    assert "import entityworks.sql.sqltypes" in context.imports


def test_a_column_without_checks_is_left_to_alembic() -> None:
    context = _context()
    assert render_item("column", sa.Column("y", sa.Integer()), context) is False
    unnamed = sa.Column("z", sa.Integer(), sa.CheckConstraint("z > 0"))
    assert render_item("column", unnamed, context) is False


def test_a_whole_add_column_renders_once_with_its_checks() -> None:
    """Through Alembic's own rendering of an operation: the hook is used for the column,
    and what it returns is what the revision says (the check appears exactly once)."""
    column = sa.Column(
        "n", sa.Integer(), sa.CheckConstraint("typeof(n) = 'integer'", name="type_n")
    )
    sa.Table("t", sa.MetaData(), column)
    code = render_python_code(
        ops.UpgradeOps([ops.AddColumnOp("t", column)]),
        render_item=render_item,
        migration_context=MigrationContext.configure(dialect_name="sqlite"),
    )
    assert code.count("CheckConstraint(") == 1
    assert "sa.Column('n', sa.Integer(), sa.CheckConstraint(" in code

"""The SQL of a filter into a JSON column, chosen when the statement is compiled for its
database: each backend spells a path and a containment its own way
(:meth:`~.backends.base.Backend.json_compare`, :meth:`~.backends.base.Backend.json_contains`)."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.compiler import compiles

from .backends import for_name


class JsonFilter(sa.sql.expression.ColumnElement[bool]):
    """``column`` at ``path`` compared (``how``: ``==``, ``<``..., with ``value``) or
    containing ``value`` (``how``: ``"contains"``), as the dialect compiling it spells
    it."""

    inherit_cache = False
    type = sa.Boolean()

    def __init__(self, column: Any, path: tuple[str | int, ...], op: str, value: Any) -> None:
        self.column = column
        self.path = path
        self.how = op
        self.value = value

    @property
    def _from_objects(self) -> list[Any]:
        return list(self.column._from_objects)

    def spelled(self, dialect_name: str) -> sa.ColumnElement[bool]:
        """This filter in SQLAlchemy's terms for the dialect ``dialect_name``."""
        backend = for_name(dialect_name)
        if self.how == "contains":
            return backend.json_contains(self.column, self.path, self.value)
        return backend.json_compare(self.column, self.path, self.how, self.value)


@compiles(JsonFilter)
def _json_filter_sql(element: JsonFilter, compiler: Any, **kw: Any) -> str:
    return str(compiler.process(element.spelled(compiler.dialect.name), **kw))


__all__ = ["JsonFilter"]

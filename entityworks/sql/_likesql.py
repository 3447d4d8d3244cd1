"""The LIKE filter as an SQLAlchemy element (:class:`LikeMatch`), compiled with ESCAPE '\\'
by default and otherwise by a dialect that must (SQLite: see :mod:`.backends.sqlite`); the
rule itself is :mod:`._like`'s."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.functions import FunctionElement


class LikeMatch(FunctionElement[bool]):
    """``text LIKE pattern ESCAPE '\\'`` (a validated pattern); a dialect may compile it
    otherwise (SQLite: exact for text holding NUL too)."""

    type: sa.Boolean = sa.Boolean()
    name: str = "like"
    inherit_cache: bool = True


@compiles(LikeMatch)
def _like_sql(element: LikeMatch, compiler: SQLCompiler, **kw: Any) -> str:
    text, pattern = element.clauses
    return f"({compiler.process(text.like(pattern, escape=chr(92)), **kw)})"


__all__ = ["LikeMatch"]

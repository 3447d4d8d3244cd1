"""What the backends' upserts share: SQLite's and PostgreSQL's ``INSERT ... ON CONFLICT``."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa


def on_conflict(
    insert: Any, table: sa.Table, keys: list[str], others: list[str], restated: list[str]
) -> sa.Executable:
    """``INSERT ... ON CONFLICT (keys) DO UPDATE`` (SQLite's and PostgreSQL's upsert)."""
    elements = [table.c[k] for k in keys]
    if not others and not restated:
        return insert.on_conflict_do_nothing(index_elements=elements)  # type: ignore[no-any-return]
    return insert.on_conflict_do_update(  # type: ignore[no-any-return]
        index_elements=elements, set_={n: insert.excluded[n] for n in [*restated, *others]}
    )


__all__ = ["on_conflict"]

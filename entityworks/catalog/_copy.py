"""Copying a whole catalog from one database to another, ids kept (a server catalog turned
into one SQLite file, for Datasette or a laptop).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import EntityworksError
from ..sql.store import Store
from ._models import TABLES
from ._upgrade import upgrade_catalog


@dataclass(frozen=True)
class CopyStats:
    """Rows :func:`copy_catalog` wrote, per top-level table (child rows travel along)."""

    rows: dict[str, int]
    seconds: float


def copy_catalog(
    source: Store,
    target: Store,
    *,
    batch: int = 500,
    progress: Callable[[str, int], None] | None = None,
) -> CopyStats:
    """Copy every catalog table from ``source`` to ``target`` with ids kept.

    The usual use is a server catalog (PostgreSQL, MariaDB) turned into one SQLite file for
    Datasette or a laptop. ``target`` is migrated to the latest revision first and must
    hold no catalog rows; everything is written in one transaction, so a failure leaves it
    as it was. ``progress(table, rows)`` is called after each batch.
    """
    from ..migrate import current

    start = time.perf_counter()
    if current(source) is None:
        raise EntityworksError(f"{source!r} holds no entityworks catalog")
    upgrade_catalog(source)
    upgrade_catalog(target)
    for name, cls in TABLES.items():
        if target.count(cls):
            raise EntityworksError(
                f"the target already has rows in {name!r}; copy into an empty catalog"
            )
    rows: dict[str, int] = {}
    with target.transaction():
        for name, cls in TABLES.items():
            rows[name] = 0
            chunk: list[Any] = []
            for obj in source.select(cls, order_by="id"):
                chunk.append(obj)
                if len(chunk) >= batch:
                    rows[name] += target.insert_many(chunk)
                    chunk = []
                    if progress is not None:
                        progress(name, rows[name])
            if chunk:
                rows[name] += target.insert_many(chunk)
                if progress is not None:
                    progress(name, rows[name])
    _advance_keys(target)
    return CopyStats(rows, time.perf_counter() - start)


def _advance_keys(store: Store) -> None:
    """After rows copied with their ids, the next generated id follows the largest one."""
    with store.engine.begin() as conn:
        for cls in TABLES.values():
            store.backend.advance_key(conn, store.table(cls), "id")


__all__ = ["CopyStats", "copy_catalog"]

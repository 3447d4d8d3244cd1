"""A query's rows as Arrow: ``Store.to_arrow``, on :mod:`entityworks.arrow`'s public API."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import pyarrow as pa

from ...arrow import arrow_schema, to_arrow
from ...arrow.write import family_rows_to_arrow, rows_to_arrow
from ._facade import StoreFacade
from ._progress import counted, counted_batches, counted_families
from ._rows import builds_plainly


def store_to_arrow(
    store: StoreFacade,
    cls: type,
    *,
    where: Any = None,
    order_by: Any = None,
    progress: Callable[[int], None] | None = None,
) -> pa.Table:
    """A query's rows as Arrow (see :meth:`Store.to_arrow`); ``progress`` is told how many
    more rows were read."""
    schema = store.schema(cls)
    # a class Arrow cannot hold is refused before its rows are read
    names = arrow_schema(cls, registry=store.registry).names
    if schema.children and not builds_plainly(schema):
        # instances that may hold other values than their rows (a __post_init__...): the
        # table is theirs, as to_arrow makes it
        with store.transaction():  # one connection for parents and the child queries
            objs: Iterable[Any] = store.select(cls, where=where, order_by=order_by)
            if progress is not None:
                objs = counted(objs, progress)
            return to_arrow(cls, list(objs), registry=store.registry)
    if schema.children:  # decoded rows with their child rows: no instance per row
        families: Iterable[Any] = store.rows_with_children(cls, where=where, order_by=order_by)
        if progress is not None:
            families = counted_families(families, progress)
        return family_rows_to_arrow(schema, families, registry=store.registry)
    batches: Iterable[Any] = store.rows(cls, where=where, order_by=order_by)
    if progress is not None:
        batches = counted_batches(batches, progress)
    return rows_to_arrow(schema, batches).select(names)


__all__ = ["store_to_arrow"]

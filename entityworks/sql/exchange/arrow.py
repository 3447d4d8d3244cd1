"""A query's rows as Arrow: ``Store.to_arrow``, on :mod:`entityworks.arrow`'s public API."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pyarrow as pa

from ...arrow import arrow_schema, rows_to_arrow, to_arrow

if TYPE_CHECKING:
    from ..store import Store


def store_to_arrow(store: Store, cls: type, *, where: Any = None, order_by: Any = None
                   ) -> pa.Table:
    """A query's rows as Arrow (see :meth:`Store.to_arrow`)."""
    schema = store.schema(cls)
    # a class Arrow cannot hold is refused before its rows are read
    names = arrow_schema(cls, registry=store.registry).names
    if schema.children:
        with store.transaction():  # one connection for parents and the child queries
            return to_arrow(cls, list(store.select(cls, where=where, order_by=order_by)),
                            registry=store.registry)
    return rows_to_arrow(schema, store.rows(cls, where=where, order_by=order_by)).select(names)


__all__ = ["store_to_arrow"]

"""Decoded rows into a database by the Store's encoded-row path, with no instance per row.

The readers (one XML table, a DataSet, a DiffGram) decode each row into the values its
instance would hold, one per column in table order, and each child row likewise (its link
columns first). Building an instance only to read its fields back costs a call per row and
changes nothing, so :func:`insert_rows` hands the values to
:func:`entityworks.sql.encoded.encode_values` and :meth:`entityworks.Store.insert_encoded`:
the same registry rule and codec per value as ``insert_many`` applies, the same refusals,
errors naming the row and column, and nothing written when a row is refused.

An instance is built only where building it may change or refuse a value
(:func:`builds_plainly` is False: a ``__post_init__``, an ``__init__``, ``__new__`` or
``__setattr__`` of the class's own, a descriptor field): those rows go through their instances
and ``Store.insert_many``, as they always did.
"""

from __future__ import annotations

import dataclasses
import functools
import types
from collections.abc import Mapping, Sequence
from typing import Any

from ...errors import ValueEncodingError
from ...model.schema import TableSchema
from ...xml.reader import row_builder
from ..encoded import encode_values
from ._facade import StoreFacade

#: Per child list field: for each row, its child rows as the reader decodes them (the
#: child table's link columns first, then the item's fields), in list order.
ChildRows = Mapping[str, Sequence[Sequence[tuple[Any, ...]]]]

#: The file name of the functions :mod:`dataclasses` writes (it ``exec``s their source).
_GENERATED = "<string>"


@functools.lru_cache(maxsize=1024)
def _plain_class(cls: type) -> bool:
    if not dataclasses.is_dataclass(cls):
        return False
    if hasattr(cls, "__post_init__") or cls.__new__ is not object.__new__:
        return False
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.init:
        return False
    if cls.__setattr__ is not object.__setattr__ and not params.frozen:
        return False
    owner = next(c for c in cls.__mro__ if "__init__" in c.__dict__)
    init = owner.__dict__["__init__"]
    code = getattr(init, "__code__", None)
    if not dataclasses.is_dataclass(owner) or code is None or code.co_filename != _GENERATED:
        return False  # an __init__ of the class's own
    # a descriptor would see (and may change) the value; a slot only holds it
    found = [getattr(cls, f.name, None) for f in dataclasses.fields(cls)]
    return not any(
        hasattr(d, "__set__") and not isinstance(d, types.MemberDescriptorType) for d in found
    )


def builds_plainly(schema: TableSchema) -> bool:
    """True when building the instances of ``schema`` (and of its child rows) keeps every
    value as given and refuses none: a dataclass whose ``__init__`` is the one
    :mod:`dataclasses` wrote, with nothing of its own run on the way (see the module)."""
    return _plain_class(schema.cls) and all(
        builds_plainly(child.schema) for child in schema.children
    )


def instances(
    schema: TableSchema, rows: Sequence[tuple[Any, ...]], children: ChildRows
) -> list[Any]:
    """The instances of decoded ``rows`` with their child rows (see :data:`ChildRows`)."""
    objs = row_builder(schema)(list(rows))
    for child in schema.children:
        build = row_builder(child.schema)
        owned = children.get(child.field)
        if owned is None:
            continue
        for obj, items in zip(objs, owned, strict=True):
            getattr(obj, child.field).extend(build(list(items)))
    return objs


def insert_rows(
    store: StoreFacade,
    schema: TableSchema,
    rows: Sequence[tuple[Any, ...]],
    children: ChildRows | None = None,
    *,
    built: bool = False,
) -> list[Any] | None:
    """Insert decoded ``rows`` of ``schema`` with their child rows in one call (all or none:
    a refused row raises the Store's error, naming it by its index in ``rows``).

    Returns the instances when ``built`` (made after the write, with the keys the database
    generated) or when the class needs them to be written, else None.
    """
    children = children or {}
    if not builds_plainly(schema):
        objs = instances(schema, rows, children)
        store.insert_many(objs)
        return objs
    links = {child.field: child.schema.links for child in schema.children}
    try:
        batch = encode_values(
            schema.cls,
            rows,
            {
                field: [[item[links[field] :] for item in items] for items in owned]
                for field, owned in children.items()
            },
            registry=store.registry,
        )
    except ValueEncodingError:
        if not children:
            raise
        # a child row's value: the Store tells it as its owner's row and the item
        objs = instances(schema, rows, children)
        store.insert_many(objs)
        return objs
    keys = store.insert_encoded(batch)
    if not built:
        return None
    key = schema.primary_key
    if key is not None and not schema.composite:
        at = schema.column_names.index(key.name)
        rows = [
            row if row[at] is not None else (*row[:at], new, *row[at + 1 :])
            for row, new in zip(rows, keys, strict=True)
        ]
    return instances(schema, rows, children)


__all__ = ["ChildRows", "builds_plainly", "insert_rows", "instances"]

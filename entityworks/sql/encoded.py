"""Rows encoded where the objects are made, written where the database is.

A process that generates objects (a worker of a process pool, a Dask worker) can also do the
CPU-heavy part of storing them: each field through its registry rule and codec (a grid
bit-packed, a path packed, a dict made JSON), the child lists flattened into rows. What it
sends back is an :class:`EncodedRows`: plain tuples of ints, floats, strings and bytes, far
smaller to pickle than the objects, which :meth:`entityworks.Store.insert_encoded` writes
with the dialect's remaining work only (bind processors, SQLite's checks, companions).

The encoding is the registry's own (:func:`entityworks.sql.rowcodec.rule`, the function the
Store applies), so a row encoded here is stored exactly as the same object given to
``insert_many`` would be. Classes with children of children are not handled (none needs it
yet): :func:`encode_rows` refuses them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from operator import attrgetter
from typing import Any

from ..errors import SchemaError, WriteError
from ..model.schema import TableSchema, table_schema
from ..registry import TypeRegistry, encode_error
from ..registry import registry as default_registry
from .rowcodec import Processor, rule, skip_none

#: ``(column name, registry type name)`` of each schema column: what the rows were encoded
#: for, checked by the Store that writes them.
Layout = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class EncodedChild:
    """The rows of one child list: ``(position, *fields)`` encoded, and how many rows each
    owner (by its index in :attr:`EncodedRows.rows`) has, in owner order."""

    field: str
    layout: Layout
    rows: list[tuple[Any, ...]]
    counts: list[int]


@dataclass(frozen=True)
class EncodedRows:
    """Instances of ``cls`` as registry-encoded schema rows, picklable and dialect-free."""

    cls: type
    layout: Layout
    rows: list[tuple[Any, ...]]
    children: tuple[EncodedChild, ...]

    def __len__(self) -> int:
        return len(self.rows)

    def column(self, name: str) -> list[Any]:
        """The encoded values of column ``name`` (a key, a seed: types stored as they are)."""
        at = [n for n, _ in self.layout].index(name)
        return [row[at] for row in self.rows]

    def take(self, indexes: Sequence[int]) -> EncodedRows:
        """Only the rows at ``indexes`` (in that order), with their child rows."""
        children = []
        for child in self.children:
            starts = [0]
            for n in child.counts:
                starts.append(starts[-1] + n)
            rows: list[tuple[Any, ...]] = []
            for i in indexes:
                rows += child.rows[starts[i]:starts[i + 1]]
            children.append(EncodedChild(child.field, child.layout, rows,
                                         [child.counts[i] for i in indexes]))
        return EncodedRows(self.cls, self.layout, [self.rows[i] for i in indexes],
                           tuple(children))

    @staticmethod
    def join(parts: Sequence[EncodedRows]) -> EncodedRows:
        """One batch of several (of one class and layout), in order."""
        if not parts:
            raise ValueError("nothing to join")
        first = parts[0]
        for part in parts:
            if part.cls is not first.cls or part.layout != first.layout:
                raise ValueError(f"cannot join rows of {part.cls.__qualname__} with rows of "
                                 f"{first.cls.__qualname__}")
        children = []
        for i, child in enumerate(first.children):
            rows: list[tuple[Any, ...]] = []
            counts: list[int] = []
            for part in parts:
                rows += part.children[i].rows
                counts += part.children[i].counts
            children.append(EncodedChild(child.field, child.layout, rows, counts))
        return EncodedRows(first.cls, first.layout,
                           [row for part in parts for row in part.rows], tuple(children))


def layout(schema: TableSchema, links: int = 0) -> Layout:
    """The layout of ``schema``'s columns after its first ``links`` (a child's key links)."""
    return tuple((c.name, c.info.name) for c in schema.columns[links:])


def _encoders(schema: TableSchema, links: int) -> list[Processor]:
    return [skip_none(rule(c.info)) for c in schema.columns[links:]]


def _encode(values: Callable[[Any], tuple[Any, ...]], names: list[str],
            encoders: list[Processor], objs: Sequence[Any], rows: list[tuple[Any, ...]],
            prefix: Callable[[int], tuple[Any, ...]] = lambda _i: ()) -> None:
    active = [(i, e) for i, e in enumerate(encoders) if e is not None]
    for number, obj in enumerate(objs):
        row = list(values(obj))
        for i, enc in active:
            try:
                row[i] = enc(row[i])
            except (TypeError, ValueError, OverflowError) as exc:
                raise encode_error(names[i], row[i], exc, number) from None
        rows.append((*prefix(number), *row))


def encode_rows(objs: Sequence[Any], registry: TypeRegistry | None = None) -> EncodedRows:
    """Encode instances of one dataclass (and their child lists) for
    :meth:`~entityworks.Store.insert_encoded`, as ``Store.insert_many`` would encode them.

    ``registry`` must be the one of the Store that will write the rows (the default one
    unless the Store was given another). A key left ``None`` is generated when written.
    """
    if not objs:
        raise ValueError("no objects to encode")
    cls = type(objs[0])
    for number, obj in enumerate(objs):
        if type(obj) is not cls:
            raise WriteError(f"row {number} is a {type(obj).__qualname__}, not a "
                             f"{cls.__qualname__}: one call writes one table", row=number)
    schema = table_schema(cls, registry or default_registry)
    names = [c.name for c in schema.columns]
    rows: list[tuple[Any, ...]] = []
    _encode(_getter(names), names, _encoders(schema, 0), objs, rows)
    children = []
    for child in schema.children:
        sub = child.schema
        if sub.children:
            raise SchemaError(f"{cls.__qualname__}.{child.field}: children of children are "
                              "not encoded ahead; use Store.insert_many", cls=cls)
        links = sub.links
        fields = [c.name for c in sub.columns[links:]]
        items: list[Any] = []
        counts: list[int] = []
        for obj in objs:
            value = getattr(obj, child.field)
            if value is None and child.optional:
                counts.append(0)
                continue
            if value is None:
                raise WriteError(f"{schema.name}.{child.field} is None; use an empty list",
                                 table=schema.name, column=child.field)
            for position, item in enumerate(value):
                if type(item) is not sub.cls:
                    raise WriteError(
                        f"{schema.name}.{child.field}[{position}] is a "
                        f"{type(item).__qualname__}, not a {sub.cls.__qualname__}",
                        table=schema.name, column=child.field)
            items += value
            counts.append(len(value))
        positions = [p for n in counts for p in range(n)]
        child_rows: list[tuple[Any, ...]] = []
        _encode(_getter(fields), fields, _encoders(sub, links), items, child_rows,
                partial(_position, positions))
        children.append(EncodedChild(child.field, layout(sub, links), child_rows, counts))
    return EncodedRows(cls, layout(schema), rows, tuple(children))


def _position(positions: list[int], i: int) -> tuple[int]:
    return (positions[i],)


def _getter(names: list[str]) -> Callable[[Any], tuple[Any, ...]]:
    if not names:
        return lambda _o: ()
    if len(names) == 1:
        single = attrgetter(names[0])
        return lambda o: (single(o),)
    return attrgetter(*names)


__all__ = ["EncodedChild", "EncodedRows", "encode_rows", "layout"]

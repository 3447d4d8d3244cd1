"""Rows encoded where the objects are made, written where the database is.

A process that generates objects (a worker of a process pool, a Dask worker) can also do the
CPU-heavy part of storing them: each field through its registry rule and codec (a grid
bit-packed, a path packed, a dict made JSON), the child lists flattened into rows. What it
sends back is an :class:`EncodedRows`: plain tuples of ints, floats, strings and bytes, far
smaller to pickle than the objects, which :meth:`entityworks.Store.insert_encoded` writes
with the dialect's remaining work only (bind processors, SQLite's checks, companions).

The encoding is the registry's own (:func:`entityworks.types.encoding.rule`, the function the
Store applies), so a row encoded here is stored exactly as the same object given to
``insert_many`` would be. Classes with children of children are not handled (none needs it
yet): :func:`encode_rows` refuses them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

from ..errors import SchemaError, WriteError
from ..model.schema import ChildTable, TableSchema, table_schema
from ..registry import TypeInfo, TypeRegistry, encode_error
from ..registry import registry as default_registry
from ..types.columns import has_none
from ..types.encoding import rule, skip_none

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
                rows += child.rows[starts[i] : starts[i + 1]]
            children.append(
                EncodedChild(child.field, child.layout, rows, [child.counts[i] for i in indexes])
            )
        return EncodedRows(self.cls, self.layout, [self.rows[i] for i in indexes], tuple(children))

    @staticmethod
    def join(parts: Sequence[EncodedRows]) -> EncodedRows:
        """One batch of several (of one class and layout), in order."""
        if not parts:
            raise ValueError("nothing to join")
        first = parts[0]
        for part in parts:
            if part.cls is not first.cls or part.layout != first.layout:
                raise ValueError(
                    f"cannot join rows of {part.cls.__qualname__} with rows of "
                    f"{first.cls.__qualname__}"
                )
        children = []
        for i, child in enumerate(first.children):
            rows: list[tuple[Any, ...]] = []
            counts: list[int] = []
            for part in parts:
                rows += part.children[i].rows
                counts += part.children[i].counts
            children.append(EncodedChild(child.field, child.layout, rows, counts))
        return EncodedRows(
            first.cls, first.layout, [row for part in parts for row in part.rows], tuple(children)
        )


def layout(schema: TableSchema, links: int = 0) -> Layout:
    """The layout of ``schema``'s columns after its first ``links`` (a child's key links)."""
    return tuple((c.name, c.info.name) for c in schema.columns[links:])


def _encoders(schema: TableSchema, links: int) -> list[_Column]:
    return [_Column(c.info) for c in schema.columns[links:]]


class _Column:
    """How one column's values are encoded: the registry rule value by value, and its
    column forms (``check_column``, ``to_db_many``) when the type has them."""

    def __init__(self, info: TypeInfo) -> None:
        fn = rule(info)
        self.value = skip_none(fn)
        # the rule is the check alone: a column it passes unchanged needs no call per value
        sql_codec = info.sql_codec
        self.check_column = info.check_column if sql_codec.encode is None else None
        # the rule is the codec alone: a column of non-None values may go at once
        self.many = sql_codec.encode_many if fn is sql_codec.encode and fn is not None else None

    def encode(self, name: str, values: Sequence[Any]) -> Sequence[Any]:
        """``values`` encoded (the same sequence when nothing changes); a refused value
        raises its :func:`encode_error`, naming its row (its index in ``values``)."""
        if self.value is None or not values:
            return values
        if self.check_column is not None and self.check_column(values):
            return values
        if self.many is not None and not has_none(values):
            try:
                return self.many(values)
            except (TypeError, ValueError, OverflowError):
                pass  # value by value below, which names the refused one
        out = []
        fn = self.value
        for number, value in enumerate(values):
            try:
                out.append(fn(value))
            except (TypeError, ValueError, OverflowError) as exc:
                raise encode_error(name, value, exc, number) from None
        return out


def _encode(
    values: Callable[[Any], tuple[Any, ...]],
    names: list[str],
    encoders: list[_Column],
    objs: Sequence[Any],
    rows: list[tuple[Any, ...]],
    positions: list[int] | None = None,
) -> None:
    """Append the encoded rows of ``objs`` to ``rows`` (each after its position, when
    ``positions`` are given): a column at a time, so that a column of values its rule
    leaves as they are (checked at C speed) or that its type packs together costs no
    Python call per value."""
    if not objs:
        return
    given: list[Sequence[Any]] = list(zip(*map(values, objs), strict=True))
    if len(given) != len(names):  # rows with no values at all
        given = [() for _ in names]
    columns = [
        enc.encode(name, column) for enc, name, column in zip(encoders, names, given, strict=True)
    ]
    if positions is not None:
        columns.insert(0, positions)
    if not columns:  # a table of no columns: one empty row per object all the same
        rows.extend(() for _ in objs)
        return
    rows.extend(zip(*columns, strict=True))


def _flat_child(cls: type, child: ChildTable) -> TableSchema:
    """A child list's schema; a child list with children of its own is not encoded ahead."""
    if child.schema.children:
        raise SchemaError(
            f"{cls.__qualname__}.{child.field}: children of children are "
            "not encoded ahead; use Store.insert_many",
            cls=cls,
        )
    return child.schema


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
            raise WriteError(
                f"row {number} is a {type(obj).__qualname__}, not a "
                f"{cls.__qualname__}: one call writes one table",
                row=number,
            )
    schema = table_schema(cls, registry or default_registry)
    names = [c.name for c in schema.columns]
    rows: list[tuple[Any, ...]] = []
    _encode(_getter(names), names, _encoders(schema, 0), objs, rows)
    children = []
    for child in schema.children:
        sub = _flat_child(cls, child)
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
                raise WriteError(
                    f"{schema.name}.{child.field} is None; use an empty list",
                    table=schema.name,
                    column=child.field,
                )
            for position, item in enumerate(value):
                if type(item) is not sub.cls:
                    raise WriteError(
                        f"{schema.name}.{child.field}[{position}] is a "
                        f"{type(item).__qualname__}, not a {sub.cls.__qualname__}",
                        table=schema.name,
                        column=child.field,
                    )
            items += value
            counts.append(len(value))
        positions = [p for n in counts for p in range(n)]
        child_rows: list[tuple[Any, ...]] = []
        _encode(_getter(fields), fields, _encoders(sub, links), items, child_rows, positions)
        children.append(EncodedChild(child.field, layout(sub, links), child_rows, counts))
    return EncodedRows(cls, layout(schema), rows, tuple(children))


def encode_values(
    cls: type,
    rows: Sequence[tuple[Any, ...]],
    children: Mapping[str, Sequence[Sequence[tuple[Any, ...]]]],
    registry: TypeRegistry | None = None,
) -> EncodedRows:
    """:func:`encode_rows` of values that were never made objects: what a worker that
    builds rows straight from its results sends, with no dataclass per row and child item.

    ``rows`` hold one value per column of ``cls``'s table, in :func:`fields` order;
    ``children[field]`` holds, per row, that child list's items as tuples in its
    :func:`fields` order (a child list left out is empty). Every value goes through the same
    registry rule and codec as :func:`encode_rows` applies to the field, so the rows are
    equal to encoding the objects those values make, and a value that rule refuses is
    refused here with its row and column.
    """
    schema = table_schema(cls, registry or default_registry)
    names = [c.name for c in schema.columns]
    out: list[tuple[Any, ...]] = []
    for number, row in enumerate(rows):
        if len(row) != len(names):
            raise WriteError(
                f"row {number} has {len(row)} values; {schema.name} has {len(names)} columns",
                row=number,
                table=schema.name,
            )
    _encode(tuple, names, _encoders(schema, 0), rows, out)
    unknown = set(children) - {child.field for child in schema.children}
    if unknown:
        raise SchemaError(f"{cls.__qualname__} has no child list {sorted(unknown)[0]!r}", cls=cls)
    encoded = []
    for child in schema.children:
        sub = _flat_child(cls, child)
        fields = [c.name for c in sub.columns[sub.links :]]
        given = children.get(child.field)
        if given is None:
            encoded.append(EncodedChild(child.field, layout(sub, sub.links), [], [0] * len(rows)))
            continue
        if len(given) != len(rows):
            raise WriteError(
                f"{schema.name}.{child.field} has items for {len(given)} rows, not {len(rows)}",
                table=schema.name,
                column=child.field,
            )
        items = [item for owned in given for item in owned]
        for position, item in enumerate(items):
            if len(item) != len(fields):
                raise WriteError(
                    f"{schema.name}.{child.field}: an item has {len(item)} "
                    f"values, not {len(fields)}",
                    table=schema.name,
                    column=child.field,
                    row=position,
                )
        counts = [len(owned) for owned in given]
        positions = [p for n in counts for p in range(n)]
        child_rows: list[tuple[Any, ...]] = []
        _encode(tuple, fields, _encoders(sub, sub.links), items, child_rows, positions)
        encoded.append(EncodedChild(child.field, layout(sub, sub.links), child_rows, counts))
    return EncodedRows(cls, layout(schema), out, tuple(encoded))


def fields(
    cls: type, child: str | None = None, registry: TypeRegistry | None = None
) -> tuple[str, ...]:
    """The value order :func:`encode_values` takes for ``cls``'s rows, or for the items of
    its child list ``child``."""
    schema = table_schema(cls, registry or default_registry)
    if child is None:
        return tuple(c.name for c in schema.columns)
    for link in schema.children:
        if link.field == child:
            return tuple(c.name for c in link.schema.columns[link.schema.links :])
    raise SchemaError(f"{cls.__qualname__} has no child list {child!r}", cls=cls)


def _getter(names: list[str]) -> Callable[[Any], tuple[Any, ...]]:
    if not names:
        return lambda _o: ()
    if len(names) == 1:
        single = attrgetter(names[0])
        return lambda o: (single(o),)
    return attrgetter(*names)


__all__ = ["EncodedChild", "EncodedRows", "encode_rows", "encode_values", "fields", "layout"]

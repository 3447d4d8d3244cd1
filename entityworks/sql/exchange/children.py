"""A table's child tables found in the database itself: what a reflected class lacks.

``Store.create`` of a class with a ``list[Item]`` field makes the table and a child table
``<table>_<field>`` (``parent_key``, ``position``, the item's columns; a child of a child
also ``position_1``...), and records nothing else; :meth:`Store.reflect` of the table gives
its own columns only. :func:`child_tables` finds the child tables by their shape (name,
link columns, foreign key to their parent) and :func:`with_child_tables` rebuilds the class
with its list fields, so that the command line exports, converts and shows a table with its
child rows exactly as the Python API does with the class that made it.
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Any

import sqlalchemy as sa

from ...errors import SchemaError
from ...model.names import unusable_field_name
from ...model.schema import PARENT_COLUMN, POSITION_COLUMN
from ._facade import StoreFacade


@dataclasses.dataclass(frozen=True)
class ChildTableFound:
    """A child table of a stored table: its list field, name, depth and its own children."""

    field: str
    name: str
    depth: int
    children: tuple[ChildTableFound, ...] = ()


def _links(depth: int) -> list[str]:
    """The link columns of a child table at ``depth`` (1: a child of the table itself)."""
    return [PARENT_COLUMN, *(f"{POSITION_COLUMN}_{i}" for i in range(1, depth)), POSITION_COLUMN]


def _find(inspector: Any, names: list[str], parent: str, depth: int) -> tuple[ChildTableFound, ...]:
    found = []
    for name in names:
        if not name.startswith(f"{parent}_"):
            continue
        columns = [c["name"] for c in inspector.get_columns(name)]
        links = _links(depth)
        if columns[: len(links)] != links:
            continue
        refers = links[:-1] if depth > 1 else [PARENT_COLUMN]
        if not any(
            fk["referred_table"] == parent and fk["constrained_columns"] == refers
            for fk in inspector.get_foreign_keys(name)
        ):
            continue
        found.append(
            ChildTableFound(
                name.removeprefix(f"{parent}_"),
                name,
                depth,
                _find(inspector, names, name, depth + 1),
            )
        )
    return tuple(found)


def child_tables(store: StoreFacade, table: str) -> tuple[ChildTableFound, ...]:
    """The child tables of ``table`` (and theirs) that the database holds."""
    names = sorted(store.table_names())
    if not any(name.startswith(f"{table}_") for name in names):
        return ()
    with store.engine.connect() as conn:
        return _find(sa.inspect(conn), names, table, 1)


def with_child_tables(store: StoreFacade, cls: type) -> type:
    """``cls`` (a class reflected from a stored table) with a ``list[Item]`` field for each
    child table the database holds for it, its items reflected from that table; ``cls``
    itself when it has its child tables already or the table has none.

    A child table whose field name is no Python identifier is refused, naming it (the rows
    would not travel with their parents otherwise).
    """
    schema = store.schema(cls)
    if schema.children or schema.parent is not None:
        return cls
    found = child_tables(store, schema.name)
    if not found:
        return cls
    rebuilt = _rebuild(store, cls, found, skip=0)
    for attribute in ("__tablename__", "__dataset__"):
        if attribute in cls.__dict__:
            setattr(rebuilt, attribute, cls.__dict__[attribute])
    return rebuilt


def _rebuild(store: StoreFacade, cls: type, found: tuple[ChildTableFound, ...], skip: int) -> type:
    """``cls`` without its first ``skip`` fields (a child table's links), with a list field
    per child table in ``found``; a column named as a child field (an Optional list's
    presence) becomes that field, ``list[Item] | None``."""
    hints = typing.get_type_hints(cls, include_extras=True)  # AwareDatetime kept
    optional = {child.field for child in found}
    specs: list[tuple[str, Any, Any]] = []
    for f in dataclasses.fields(cls)[skip:]:
        if f.name in optional:
            continue
        specs.append((f.name, hints[f.name], dataclasses.field(metadata=f.metadata)))
    present = {f.name for f in dataclasses.fields(cls)} & optional
    for child in found:
        problem = unusable_field_name(child.field)
        if problem is not None:
            raise SchemaError(
                f"child table {child.name!r}: its field name {child.field!r} "
                f"cannot be a Python field ({problem}); its rows cannot travel "
                "with their parents",
                cls=cls,
            )
        item = _rebuild(
            store, store.reflect(child.name), child.children, skip=len(_links(child.depth))
        )
        if child.field in present:
            specs.append(
                (
                    child.field,
                    list[item] | None,  # type: ignore[valid-type]
                    dataclasses.field(default=None),
                )
            )
        else:
            specs.append(
                (
                    child.field,
                    list[item],  # type: ignore[valid-type]
                    dataclasses.field(default_factory=list),
                )
            )
    made = dataclasses.make_dataclass(cls.__name__, specs)
    made.__tablename__ = cls.__dict__.get("__tablename__", "")  # type: ignore[attr-defined]
    return made


__all__ = ["ChildTableFound", "child_tables", "with_child_tables"]

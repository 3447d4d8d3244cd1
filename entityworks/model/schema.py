"""Reflection: a dataclass -> a frozen :class:`TableSchema` (the single input of every backend).

Rules (SPEC 3.1): one column per field in field order; ``X | None`` is nullable and nothing
else is; the primary key is the field marked ``primary_key`` (field metadata or the
``Annotated`` marker :data:`PK`), else a field named ``id``; ``list[SomeDataclass]`` is a
child table holding a foreign key to the parent and the item's position.
"""

from __future__ import annotations

import dataclasses
import typing
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, dataclass_transform, get_args, get_origin

from ..errors import SchemaError, UnknownColumnError, UnsupportedTypeError
from ..registry import (
    TypeInfo,
    TypeMarker,
    TypeRegistry,
    looking_up,
    registry,
    the_registry,
    unwrap_optional,
)
from ..types.construct import check_constructible, instance_builder
from .fields import FOREIGN_KEY, References, column, primary_key
from .names import check_companion_names, check_name, check_unique_names, snake_case

#: ``Annotated[int, PK]`` marks the primary key without ``field(metadata=...)``.
PK = TypeMarker("PK")

#: Names of the two columns a child table adds in front of the item's own fields.
PARENT_COLUMN = "parent_key"
POSITION_COLUMN = "position"


def refuse_nested_children(schema: TableSchema, where: str) -> None:
    """SchemaError when ``schema`` has children of children or an Optional child list,
    which ``where`` (a format holding one level of plain child lists) would lose."""
    for child in schema.children:
        if child.optional:
            raise SchemaError(
                f"{schema.cls.__qualname__}.{child.field}: an Optional child list, which "
                f"{where} cannot tell from an empty one; make it list[...] with "
                "default_factory=list",
                cls=schema.cls,
                field=child.field,
            )
        if child.schema.children:
            raise SchemaError(
                f"{schema.cls.__qualname__}.{child.field}: its items have child tables of "
                f"their own ({child.schema.children[0].field}), which {where} cannot hold "
                "(one level of child tables only)",
                cls=schema.cls,
                field=child.field,
            )


_M = TypeVar("_M")
_C = TypeVar("_C")


@dataclass(frozen=True, slots=True)
class Column:
    """One column of a table, derived from one dataclass field."""

    name: str
    python_type: Any
    info: TypeInfo
    nullable: bool
    primary_key: bool = False
    unique: bool = False
    index: bool = False
    max_length: int | None = None
    #: The dataclass whose primary key this column refers to (``column(references=...)``).
    references: type | None = None
    #: What deleting the referenced row does (one of :data:`ON_DELETE`).
    on_delete: str | None = None
    #: The column's name in the database when it is not the field's (``column(name=...)``).
    column_name: str | None = None

    @property
    def sql_name(self) -> str:
        """The column's name in the database (``name`` is the field's)."""
        return self.column_name or self.name

    @property
    def autoincrement(self) -> bool:
        """True when the database generates this key if the instance leaves it ``None``."""
        return self.primary_key and self.info.autoincrement


@dataclass(frozen=True, slots=True)
class ChildTable:
    """A ``list[Item]`` field stored as rows of its own table."""

    field: str
    schema: TableSchema
    #: ``list[Item] | None``: the parent table has a column of the field's name telling an
    #: empty list (TRUE) from None (NULL).
    optional: bool = False


@dataclass(frozen=True, slots=True)
class TableSchema:
    """What entityworks knows about a dataclass as a table."""

    cls: type
    name: str
    columns: tuple[Column, ...]
    primary_key: Column | None
    children: tuple[ChildTable, ...] = ()
    #: For a child table: the parent's schema (its key type defines ``parent_key``).
    parent: TableSchema | None = None
    #: Composite indexes (column names in order), from ``@table(name, indexes=...)``.
    indexes: tuple[tuple[str, ...], ...] = ()
    #: Child tables stored clustered by their key (SQLite ``WITHOUT ROWID``), from
    #: ``@table(name, compact_children=True)``.
    compact_children: bool = False
    #: Every column of the primary key, in field order: one, several (a composite key, for
    #: which :attr:`primary_key` is ``None``) or none.
    key_columns: tuple[Column, ...] = ()
    #: Composite unique constraints (column names in order), from ``@table(unique=...)``.
    unique: tuple[tuple[str, ...], ...] = ()

    @property
    def column_names(self) -> list[str]:
        return [c.name for c in self.columns]

    @property
    def field_columns(self) -> tuple[Column, ...]:
        """The columns that are fields of the dataclass (a child's extra columns excluded)."""
        return self.columns[self.links :]

    @property
    def depth(self) -> int:
        """0 for a table, 1 for its child tables, 2 for theirs..."""
        return 0 if self.parent is None else self.parent.depth + 1

    @property
    def links(self) -> int:
        """How many columns a child table adds in front of the item's fields: the root's key
        (``parent_key``), the positions of the ancestors (``position_1``...) and its own
        (``position``); 0 for a table that is no child."""
        return 0 if self.parent is None else self.depth + 1

    @property
    def naming_columns(self) -> tuple[Column, ...]:
        """The columns that name a row in messages: a child row's links (its root's key and
        the positions), any other row's key columns (none for a table without a key)."""
        return self.columns[: self.links] if self.parent is not None else self.key_columns

    @property
    def root(self) -> TableSchema:
        """The table at the top of a chain of child tables (itself for a table)."""
        return self if self.parent is None else self.parent.root

    @property
    def descendants(self) -> list[TableSchema]:
        """Every child table below this one, children of children included, parents first."""
        out: list[TableSchema] = []
        for child in self.children:
            out.append(child.schema)
            out.extend(child.schema.descendants)
        return out

    @property
    def renamed(self) -> bool:
        """True when a column's name in the database differs from its field's."""
        return any(c.column_name is not None for c in self.columns)

    def by_sql_name(self, name: str) -> Column | None:
        """The column whose name in the database is ``name``."""
        return next((c for c in self.columns if c.sql_name == name), None)

    def column(self, name: str) -> Column:
        """The column called ``name``; :class:`UnknownColumnError` if there is none."""
        for c in self.columns:
            if c.name == name:
                return c
        raise UnknownColumnError(self.name, name, self.column_names)

    def relation(self, name: str) -> Column | None:
        """The foreign-key column a filter path's first part names: the field itself
        (``author_id``) or the field without its ``_id`` suffix (``author``)."""
        for c in self.columns:
            if c.references is not None and name in (c.name, _relation_name(c.name)):
                return c
        return None

    @property
    def relations(self) -> list[str]:
        """The names :meth:`relation` accepts."""
        return sorted(
            {
                n
                for c in self.columns
                if c.references is not None
                for n in (c.name, _relation_name(c.name))
            }
        )

    @property
    def composite(self) -> bool:
        """True when the primary key has several columns."""
        return len(self.key_columns) > 1

    def require_keys(self, action: str) -> tuple[Column, ...]:
        """The key columns (one or several); SchemaError when there is no key."""
        if not self.key_columns:
            self.require_key(action)
        return self.key_columns

    def require_key(self, action: str) -> Column:
        if self.composite:
            raise SchemaError(
                f"{self.cls.__qualname__} has a composite key "
                f"({', '.join(c.name for c in self.key_columns)}), which {action} does not "
                "support",
                cls=self.cls,
            )
        if self.primary_key is None:
            raise SchemaError(
                f"{self.cls.__qualname__} has no primary key, which {action} needs; mark one "
                "with entityworks.primary_key() or name a field 'id'",
                cls=self.cls,
            )
        return self.primary_key


def _relation_name(field: str) -> str:
    return field[:-3] if field.endswith("_id") and len(field) > 3 else field


def table(
    name: str,
    *,
    indexes: Sequence[Sequence[str]] = (),
    unique: Sequence[Sequence[str]] = (),
    compact_children: bool = False,
) -> Callable[[type[_C]], type[_C]]:
    """Class decorator setting the table name: ``@table("levels")``.

    ``indexes`` adds composite indexes, each a sequence of column names, e.g.
    ``@table("levels", indexes=[("kind", "width")])`` for queries filtering on both;
    ``unique`` adds composite unique constraints the same way (``unique=[("kind", "name")]``:
    no two rows share both).
    ``compact_children`` stores the child tables clustered by ``(parent_key, position)``
    on SQLite (``WITHOUT ROWID``: no second copy of the key in a separate index).
    """
    check_name(name, "table name")
    for group in (*indexes, *unique):
        if isinstance(group, str):
            raise SchemaError(
                f"table {name!r}: indexes and unique take sequences of column "
                f"names, e.g. [({group!r}, ...)], got the string {group!r}"
            )
    wanted = tuple(tuple(index) for index in indexes)
    uniques = tuple(tuple(group) for group in unique)
    for what, groups in (("an index", wanted), ("a unique constraint", uniques)):
        for group in groups:
            if (
                not group
                or not all(isinstance(c, str) for c in group)
                or len(set(group)) != len(group)
            ):
                raise SchemaError(
                    f"table {name!r}: {what} is a non-empty sequence of "
                    f"distinct column names, got {group!r}"
                )

    def apply(cls: type[_C]) -> type[_C]:
        cls.__tablename__ = name  # type: ignore[attr-defined]
        cls.__table_indexes__ = wanted  # type: ignore[attr-defined]
        cls.__table_unique__ = uniques  # type: ignore[attr-defined]
        cls.__table_compact_children__ = compact_children  # type: ignore[attr-defined]
        if _SCHEMAS in cls.__dict__:  # reflected before: its table name may have changed
            delattr(cls, _SCHEMAS)
        return cls

    return apply


@dataclass_transform(field_specifiers=(dataclasses.field, dataclasses.Field, column, primary_key))
def entity(
    name: str | None = None,
    *,
    indexes: Sequence[Sequence[str]] = (),
    unique: Sequence[Sequence[str]] = (),
    compact_children: bool = False,
    eq: bool = True,
    order: bool = False,
    frozen: bool = False,
    kw_only: bool = False,
    slots: bool = False,
) -> Callable[[type[_C]], type[_C]]:
    """``@table(name, ...)`` over ``@dataclass(...)`` in one decorator: ``@entity("levels")``.

    Type checkers know ``column()`` as a field specifier of this decorator, so a
    ``column(index=True)`` without a default may be followed by fields without one, as at run
    time; under a plain ``@dataclass`` they count any ``column()`` as a default. ``name``
    defaults to the class name in snake_case.
    """
    named = (
        None
        if name is None
        else table(name, indexes=indexes, unique=unique, compact_children=compact_children)
    )

    def apply(cls: type[_C]) -> type[_C]:
        made = dataclass(cls, eq=eq, order=order, frozen=frozen, kw_only=kw_only, slots=slots)
        if named is not None:
            return named(made)
        return table(
            table_name(made), indexes=indexes, unique=unique, compact_children=compact_children
        )(made)

    return apply


def table_name(cls: type) -> str:
    name = cls.__dict__.get("__tablename__", snake_case(cls.__name__))
    return check_name(name, "table name", cls)


#: The attribute of a reflected class that caches its schemas: registry -> (the registry's
#: generation when it was built, schema). Kept on the class, and keyed weakly by the
#: registry, so that a schema lives exactly as long as its class and its registry (a
#: module-level cache keyed by ``id(registry)`` grew with every class reflected and served
#: a dead registry's schemas to a new one at its address); a registration in the registry
#: (a new generation) makes the schemas built before it stale.
_SCHEMAS = "__entityworks_schemas__"


def _cached(cls: type, registry: TypeRegistry) -> TableSchema | None:
    try:
        found = cls.__dict__[_SCHEMAS].get(registry)
    except (KeyError, AttributeError, TypeError):  # not cached, or no class at all
        return None
    if found is None or found[0] != registry.generation:
        return None
    schema: TableSchema = found[1]
    return schema


def _remember(cls: type, registry: TypeRegistry, schema: TableSchema) -> None:
    cache = cls.__dict__.get(_SCHEMAS)
    if cache is None:
        cache = weakref.WeakKeyDictionary()
        try:
            setattr(cls, _SCHEMAS, cache)
        except (AttributeError, TypeError):  # a class that takes no attributes: no cache
            return
    cache[registry] = (registry.generation, schema)


def table_schema(cls: type, registry: TypeRegistry = registry) -> TableSchema:
    """Infer (and cache) the table schema of a dataclass type."""
    registry = the_registry(registry)
    cached = _cached(cls, registry)
    if cached is not None:
        return cached
    if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)):
        what = cls.__qualname__ if isinstance(cls, type) else repr(cls)
        raise SchemaError(f"{what} is not a dataclass type; decorate it with @dataclass", cls=cls)
    schema = _build(cls, table_name(cls), registry, parent=None)
    check_constructible(cls)  # refuse now a class that could be written but never read back
    for child in schema.children:
        check_constructible(child.schema.cls)
    _remember(cls, registry, schema)
    return schema


def _child_item(tp: Any) -> type | None:
    if get_origin(tp) is list:
        (item,) = get_args(tp) or (None,)
        if isinstance(item, type) and dataclasses.is_dataclass(item):
            return item
    return None


def _build(cls: type, name: str, reg: TypeRegistry, parent: TableSchema | None) -> TableSchema:
    try:
        hints = typing.get_type_hints(cls, include_extras=True)
    except Exception as exc:  # unresolvable forward reference, etc.
        raise SchemaError(
            f"cannot resolve the annotations of {cls.__qualname__}: {exc}", cls=cls
        ) from exc
    columns: list[Column] = []
    child_fields: list[tuple[str, type, bool]] = []
    marked: list[str] = []
    if parent is not None:
        # every level of child tables refers to the root row by its key, then to each
        # ancestor item by its position: (parent_key, position_1, ..., position)
        pk = parent.root.require_key("a child table")
        columns.append(Column(PARENT_COLUMN, pk.python_type, pk.info, False))
        columns += [
            Column(f"{POSITION_COLUMN}_{i}", int, reg.lookup(int), False)
            for i in range(1, parent.depth + 1)
        ]
        columns.append(Column(POSITION_COLUMN, int, reg.lookup(int), False))
    for f in dataclasses.fields(cls):
        check_name(f.name, "column name", cls, f.name)
        annotation = hints[f.name]
        try:
            tp, nullable = unwrap_optional(annotation)
        except UnsupportedTypeError as exc:
            raise UnsupportedTypeError(
                f"{cls.__qualname__}.{f.name}: {exc}", cls=cls, field=f.name, type_=annotation
            ) from None
        item = _child_item(tp)
        if item is not None:
            if nullable:  # the list's presence: a column of the field's name
                columns.append(Column(f.name, list, _present(reg), True))
            child_fields.append((f.name, item, nullable))
            continue
        meta: Mapping[str, Any] = f.metadata or {}
        is_pk = bool(meta.get("primary_key")) or _has_marker(annotation, PK)
        if is_pk:
            marked.append(f.name)
        try:
            with looking_up(cls, f.name):  # a cycle of nested dataclasses is named from here
                info = reg.lookup(tp)
        except UnsupportedTypeError as exc:
            raise UnsupportedTypeError(
                f"{cls.__qualname__}.{f.name}: unsupported type {_describe(annotation)} ({exc})",
                cls=cls,
                field=f.name,
                type_=annotation,
            ) from None
        marker = _marker_of(annotation, References)
        if marker is not None and meta.get(FOREIGN_KEY):
            raise SchemaError(
                f"{cls.__qualname__}.{f.name}: a foreign key given twice "
                "(References marker and column(references=...))",
                cls=cls,
                field=f.name,
            )
        references, on_delete = (
            marker.foreign_key if marker is not None else meta.get(FOREIGN_KEY) or (None, None)
        )
        if isinstance(references, str):
            references = _named_class(cls, f.name, references)
        if on_delete == "set null" and not nullable:
            raise SchemaError(
                f"{cls.__qualname__}.{f.name}: on_delete='set null' needs an Optional field",
                cls=cls,
                field=f.name,
            )
        columns.append(
            Column(
                f.name,
                tp,
                info,
                nullable,
                primary_key=is_pk,
                unique=bool(meta.get("unique")),
                index=bool(meta.get("index")),
                max_length=meta.get("max_length"),
                references=references,
                on_delete=on_delete,
                column_name=meta.get("column_name"),
            )
        )
    if len(marked) > 1:
        if parent is not None:
            raise SchemaError(
                f"{cls.__qualname__}: the items of a child table cannot have a "
                f"composite key ({', '.join(marked)})",
                cls=cls,
            )
        if child_fields:
            raise SchemaError(
                f"{cls.__qualname__}: a class with a composite key "
                f"({', '.join(marked)}) cannot have child tables (their rows "
                "refer to a single-column key)",
                cls=cls,
            )
        optional = [c.name for c in columns if c.primary_key and c.nullable]
        if optional:
            raise SchemaError(
                f"{cls.__qualname__}.{optional[0]}: a part of a composite key "
                "cannot be Optional (no database generates it)",
                cls=cls,
                field=optional[0],
            )
    if not marked and parent is None:
        for i, c in enumerate(columns):
            if c.name == "id":
                columns[i] = dataclasses.replace(c, primary_key=True)
    check_unique_names(cls, columns)
    check_companion_names(cls, columns)
    for c in columns:
        if c.primary_key and c.info.python_type is float:
            raise SchemaError(
                f"{cls.__qualname__}.{c.name}: a float cannot be a primary key",
                cls=cls,
                field=c.name,
            )
    # A key is never NULL in the table; `int | None` only means "generated if None".
    columns = [dataclasses.replace(c, nullable=False) if c.primary_key else c for c in columns]
    keys = tuple(c for c in columns if c.primary_key)
    key = keys[0] if len(keys) == 1 else None
    names = {c.name for c in columns}
    indexes: tuple[tuple[str, ...], ...] = cls.__dict__.get("__table_indexes__", ())
    uniques: tuple[tuple[str, ...], ...] = cls.__dict__.get("__table_unique__", ())
    for group in (*indexes, *uniques):
        for wanted in group:
            if wanted not in names:
                raise UnknownColumnError(name, wanted, [c.name for c in columns])
    compact = bool(cls.__dict__.get("__table_compact_children__", False))
    schema = TableSchema(
        cls,
        name,
        tuple(columns),
        key,
        (),
        parent,
        indexes,
        compact,
        key_columns=keys,
        unique=uniques,
    )
    if child_fields:
        children = tuple(
            ChildTable(
                fname,
                _build(
                    item, check_name(f"{name}_{fname}", "child table name", cls, fname), reg, schema
                ),
                optional,
            )
            for fname, item, optional in child_fields
        )
        object.__setattr__(schema, "children", children)
    return schema


def _check_present(value: Any) -> Any:
    if not isinstance(value, list):
        raise TypeError(f"expected a list (or None), got {type(value).__name__}")
    return value


def _present(reg: TypeRegistry) -> TypeInfo:
    """The type of the column saying whether an Optional child list is None (NULL) or a list
    (TRUE, its items in the child table): stored as the registry's bool, read as a new
    empty list that the child rows then fill."""
    flag = reg.lookup(bool)
    return dataclasses.replace(
        flag,
        name="child list present",
        python_type=list,
        check=_check_present,
        sql_codec=dataclasses.replace(  # no whole-column forms: those are the bool's
            flag.sql_codec,
            encode=lambda _items: True,
            decode=lambda _flag: [],
            encode_many=None,
            decode_many=None,
        ),
        xml_codec=dataclasses.replace(flag.xml_codec, plain_text=False),
        native=None,
        checked_codecs=False,
    )


def _named_class(cls: type, field: str, name: str) -> type:
    """The class a ``references="Name"`` string names: ``cls`` itself or a dataclass of
    ``cls``'s module."""
    if name == cls.__name__:
        return cls
    import sys

    found = getattr(sys.modules.get(cls.__module__), name, None)
    if not (isinstance(found, type) and dataclasses.is_dataclass(found)):
        raise SchemaError(
            f"{cls.__qualname__}.{field}: references={name!r} names no dataclass "
            f"of module {cls.__module__}",
            cls=cls,
            field=field,
        )
    return found


def _marker_of(annotation: Any, kind: type[_M]) -> _M | None:
    """The first ``Annotated`` metadata of type ``kind`` (inside ``Optional`` too)."""
    if get_origin(annotation) is typing.Annotated:
        return next((m for m in get_args(annotation)[1:] if isinstance(m, kind)), None)
    for arg in get_args(annotation):  # X | None
        if get_origin(arg) is typing.Annotated:
            return _marker_of(arg, kind)
    return None


def _has_marker(annotation: Any, marker: TypeMarker) -> bool:
    if get_origin(annotation) is typing.Annotated:
        return any(m is marker for m in get_args(annotation)[1:])
    try:
        inner, _ = unwrap_optional(annotation)
    except UnsupportedTypeError:
        return False
    return inner is not annotation and _has_marker(inner, marker)


def _describe(tp: Any) -> str:
    return tp.__qualname__ if isinstance(tp, type) else repr(tp)


__all__ = [
    "PK",
    "References",
    "ChildTable",
    "Column",
    "TableSchema",
    "column",
    "instance_builder",
    "primary_key",
    "table",
    "table_schema",
]

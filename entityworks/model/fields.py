"""Field specifiers: :func:`column` and :func:`primary_key` (``dataclasses.field`` with a
column's options as field metadata), the :class:`References` marker of a foreign key, and the
field metadata keys the model and the SQL side read."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, overload

from ..errors import SchemaError
from .names import check_name

#: ``on_delete`` choices of :func:`column` ``(references=...)``: what deleting a referenced
#: row does to the rows referring to it. ``"no action"`` and ``"restrict"`` refuse the delete.
ON_DELETE = ("no action", "restrict", "cascade", "set null")

#: Field metadata key of a foreign key made by ``column(references=...)``.
FOREIGN_KEY = "foreign_key"

#: Field metadata key for a column's own XSD spelling, kept from the schema it was read from
#: (``read_xsd``) so that writing it again gives .NET the same DataType:
#: ``{"type": "xs:short", "attributes": {"msdata:Caption": "..."}, "default": "0"}``. It lives
#: here, with the other field metadata keys, because the SQL side records it too
#: (:mod:`entityworks.sql.logical`) and must not depend on the XML package for it.
XSD_METADATA = "xsd"


_T = TypeVar("_T")


# The overloads tell type checkers what ``dataclasses.field`` tells them: a field given a
# ``default`` or ``default_factory`` has that value's type, and otherwise ``column()`` is no
# value at all (``Any``), so ``name: str = column(unique=True)`` type-checks as a ``str``.
@overload
def column(
    *,
    default: _T,
    primary_key: bool = ...,
    unique: bool = ...,
    index: bool = ...,
    max_length: int | None = ...,
    references: type | str | None = ...,
    on_delete: str | None = ...,
    name: str | None = ...,
    init: bool = ...,
    repr: bool = ...,
    hash: bool | None = ...,
    compare: bool = ...,
    metadata: Mapping[Any, Any] | None = ...,
    kw_only: bool = ...,
) -> _T: ...
@overload
def column(
    *,
    default_factory: Callable[[], _T],
    primary_key: bool = ...,
    unique: bool = ...,
    index: bool = ...,
    max_length: int | None = ...,
    references: type | str | None = ...,
    on_delete: str | None = ...,
    name: str | None = ...,
    init: bool = ...,
    repr: bool = ...,
    hash: bool | None = ...,
    compare: bool = ...,
    metadata: Mapping[Any, Any] | None = ...,
    kw_only: bool = ...,
) -> _T: ...
@overload
def column(
    *,
    primary_key: bool = ...,
    unique: bool = ...,
    index: bool = ...,
    max_length: int | None = ...,
    references: type | str | None = ...,
    on_delete: str | None = ...,
    name: str | None = ...,
    init: bool = ...,
    repr: bool = ...,
    hash: bool | None = ...,
    compare: bool = ...,
    metadata: Mapping[Any, Any] | None = ...,
    kw_only: bool = ...,
) -> Any: ...
def column(
    *,
    primary_key: bool = False,
    unique: bool = False,
    index: bool = False,
    max_length: int | None = None,
    references: type | str | None = None,
    on_delete: str | None = None,
    name: str | None = None,
    **field_kwargs: Any,
) -> Any:
    """A ``dataclasses.field`` carrying column options.

    ``max_length`` bounds a ``str`` column (VARCHAR) so it can be indexed everywhere.
    ``references=Author`` makes the column a foreign key to the primary key of ``Author``'s
    table; ``on_delete`` (one of :data:`ON_DELETE`, default ``"no action"``) says what
    deleting an author does to the rows referring to it. A class not defined yet (the
    class itself, for a tree) is named by a string: ``references="Employee"``.
    ``name`` is the column's name in the database when it differs from the field's (the
    Python side, filters, XML and Arrow keep the field's name).
    """
    metadata = dict(field_kwargs.pop("metadata", None) or {})
    metadata.update({"primary_key": primary_key, "unique": unique, "index": index})
    if max_length is not None:
        metadata["max_length"] = max_length
    if name is not None:
        metadata["column_name"] = check_name(name, "column name")
    if references is not None or on_delete is not None:
        metadata[FOREIGN_KEY] = _foreign_key(references, on_delete)
    return dataclasses.field(metadata=metadata, **field_kwargs)


def _foreign_key(references: Any, on_delete: Any) -> tuple[type | str, str]:
    """``(target, action)`` of a foreign key, checked; SchemaError names what is wrong."""
    if not (
        isinstance(references, str)
        and references.isidentifier()
        or isinstance(references, type)
        and dataclasses.is_dataclass(references)
    ):
        raise SchemaError(
            f"column(references=...) takes a dataclass type (or the name "
            f"of one in the same module), got {references!r}"
        )
    action = "no action" if on_delete is None else on_delete
    if not isinstance(action, str) or action.lower() not in ON_DELETE:
        raise SchemaError(
            f"column(on_delete=...) must be one of "
            f"{', '.join(map(repr, ON_DELETE))}; got {on_delete!r}"
        )
    return references, action.lower()


class References:
    """``author_id: Annotated[int, References(Author, on_delete="cascade")]``: the
    ``Annotated`` form of ``column(references=Author, on_delete="cascade")``."""

    __slots__ = ("foreign_key",)

    def __init__(self, target: type | str, *, on_delete: str | None = None) -> None:
        self.foreign_key: tuple[type | str, str] = _foreign_key(target, on_delete)

    def __repr__(self) -> str:
        target, action = self.foreign_key
        name = target if isinstance(target, str) else target.__qualname__
        return f"References({name}, on_delete={action!r})"


# The same overloads as column()'s: ``primary_key(max_length=20)`` (which a MariaDB text key
# needs) and every other column option type-check. Under ``@entity`` checkers take a
# ``primary_key()`` without a default as no default, as the runtime does; under a plain
# ``@dataclass`` they recognise ``dataclasses.field`` alone and count any other call as a
# default (a field without one may not follow it there), which no typing of ours can change.
@overload
def primary_key(
    *,
    default: _T,
    unique: bool = ...,
    index: bool = ...,
    max_length: int | None = ...,
    references: type | str | None = ...,
    on_delete: str | None = ...,
    name: str | None = ...,
    init: bool = ...,
    repr: bool = ...,
    hash: bool | None = ...,
    compare: bool = ...,
    metadata: Mapping[Any, Any] | None = ...,
    kw_only: bool = ...,
) -> _T: ...
@overload
def primary_key(
    *,
    default_factory: Callable[[], _T],
    unique: bool = ...,
    index: bool = ...,
    max_length: int | None = ...,
    references: type | str | None = ...,
    on_delete: str | None = ...,
    name: str | None = ...,
    init: bool = ...,
    repr: bool = ...,
    hash: bool | None = ...,
    compare: bool = ...,
    metadata: Mapping[Any, Any] | None = ...,
    kw_only: bool = ...,
) -> _T: ...
@overload
def primary_key(
    *,
    unique: bool = ...,
    index: bool = ...,
    max_length: int | None = ...,
    references: type | str | None = ...,
    on_delete: str | None = ...,
    name: str | None = ...,
    init: bool = ...,
    repr: bool = ...,
    hash: bool | None = ...,
    compare: bool = ...,
    metadata: Mapping[Any, Any] | None = ...,
    kw_only: bool = ...,
) -> Any: ...
def primary_key(**options: Any) -> Any:
    """Mark a field as the primary key: ``id: int | None = primary_key(default=None)``;
    takes :func:`column`'s options (``primary_key(max_length=20)``)."""
    return column(primary_key=True, **options)


__all__ = [
    "FOREIGN_KEY",
    "ON_DELETE",
    "XSD_METADATA",
    "References",
    "column",
    "primary_key",
]

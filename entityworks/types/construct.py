"""Rebuilding dataclass instances from the stored values of their fields.

One function serves every reader (the Store, Arrow/pandas/Parquet, XML, and dataclasses
nested in a JSON column): :func:`instance_builder`. It sits below the schema and the registry
so that both can use it without importing each other; :mod:`entityworks.model.schema` re-exports it.
Its reverse for the writers, an instance's field values as a tuple, is :func:`fields_getter`
(and one field of many instances, :func:`column_getter`).
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import keyword
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

from ..errors import SchemaError


@dataclass(frozen=True)
class _InitPlan:
    """How the ``__init__`` of a dataclass takes its stored fields."""

    positional: tuple[str, ...]  # positional-only parameters, in order
    keywords: tuple[str, ...]  # the other parameters that are fields
    later: tuple[str, ...]  # fields ``__init__`` does not take (``init=False``...)
    by_position: bool  # ``cls(*values)`` with values in ``keywords`` order works


@functools.lru_cache(maxsize=1024)
def _init_plan(cls: type) -> _InitPlan:
    """Check that ``cls`` can be rebuilt from its fields' values, and say how.

    A parameter of ``__init__`` that is no field (an ``InitVar``, a hand-written
    ``__init__``'s extra argument) must have a default: rows hold fields only, so there is
    nothing else to pass. That is the one case refused, when the schema is inferred.
    """
    try:
        parameters = list(inspect.signature(cls).parameters.values())
    except (TypeError, ValueError) as exc:
        raise SchemaError(
            f"{cls.__qualname__}: cannot read the signature of its __init__ ({exc})", cls=cls
        ) from None
    fields = [f.name for f in dataclasses.fields(cls)]
    known = set(fields)
    positional: list[str] = []
    keywords: list[str] = []
    skipped = False  # a positional-only parameter left to its default
    by_position = True
    for p in parameters:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        by_position = by_position and p.kind is p.POSITIONAL_OR_KEYWORD and p.name in known
        if p.name not in known:
            if p.default is p.empty:
                declared = getattr(cls, "__dataclass_fields__", {})
                initvar = isinstance(declared.get(p.name), dataclasses.Field)
                what = "an InitVar" if initvar else "an __init__ parameter that is no field"
                raise SchemaError(
                    f"{cls.__qualname__}.{p.name}: {what} without a default; rows hold the "
                    f"fields only, so instances of {cls.__qualname__} could not be rebuilt "
                    f"when read back. Give {p.name!r} a default",
                    cls=cls,
                    field=p.name,
                )
            skipped = skipped or p.kind is p.POSITIONAL_ONLY
            continue
        if p.kind is p.POSITIONAL_ONLY:
            if skipped:
                raise SchemaError(
                    f"{cls.__qualname__}.{p.name}: a positional-only __init__ parameter after "
                    "one that is no field cannot be passed",
                    cls=cls,
                    field=p.name,
                )
            positional.append(p.name)
        else:
            keywords.append(p.name)
    taken = set(positional) | set(keywords)
    return _InitPlan(
        tuple(positional), tuple(keywords), tuple(n for n in fields if n not in taken), by_position
    )


def check_constructible(cls: type) -> None:
    """Raise SchemaError if instances of ``cls`` cannot be rebuilt from their fields."""
    _init_plan(cls)


def instance_builder(cls: type, names: Sequence[str]) -> Callable[..., Any]:
    """A function building an instance of ``cls`` from the values of its fields, passed
    positionally in the order of ``names`` (every field of ``cls``, in any order).

    The one constructor every reader uses (Store, Arrow/pandas/Parquet, XML). For an
    ordinary dataclass read in field order it is ``cls`` itself, the fast path. Otherwise
    ``kw_only`` fields go by keyword, ``slots`` and ``frozen`` classes are built through
    ``__init__`` (so ``__post_init__`` runs, InitVars taking their defaults), and the fields
    ``__init__`` does not take (``field(init=False)``) get their stored values afterwards.
    """
    return _builder(cls, tuple(names))


@functools.lru_cache(maxsize=1024)
def _builder(cls: type, names: tuple[str, ...]) -> Callable[..., Any]:
    plan = _init_plan(cls)
    expected = sorted(f.name for f in dataclasses.fields(cls))
    if sorted(names) != expected:
        raise SchemaError(
            f"{cls.__qualname__}: values for {list(names)} cannot build it; its "
            f"fields are {expected}",
            cls=cls,
        )
    at = {n: i for i, n in enumerate(names)}
    if plan.by_position and not plan.later and plan.keywords == names:
        return cls
    args = [at[n] for n in plan.positional]
    keywords = [(n, at[n]) for n in plan.keywords]
    later = [(n, at[n]) for n in plan.later]
    setter = object.__setattr__  # also for frozen classes, as their own __init__ does

    def build(*values: Any) -> Any:
        obj = cls(*[values[i] for i in args], **{n: values[i] for n, i in keywords})
        for n, i in later:
            setter(obj, n, values[i])
        return obj

    return build


def plain_identifier(name: str) -> bool:
    """A name that means itself in source code: an identifier, not a keyword, and unchanged
    by the NFKC normalisation the compiler applies (``"\ufb01eld"`` would read ``field``)."""
    return (
        name.isidentifier()
        and not keyword.iskeyword(name)
        and unicodedata.normalize("NFKC", name) == name
    )


@functools.lru_cache(maxsize=1024)
def fields_getter(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """``obj -> (obj.<name>, ...)`` for ``names``, always a tuple (one name too).

    The same values as ``operator.attrgetter(*names)``, read by a compiled
    ``lambda o: (o.a, o.b, ...)``: Python 3.11 specialises each attribute load to the
    instance's own layout, which makes it about twice as fast as attrgetter's generic
    lookups; bulk writers read every field of every row this way. The source holds the
    names alone, each checked to be an identifier (a dataclass field always is); any other
    name falls back to attrgetter.
    """
    if not all(map(plain_identifier, names)):
        if len(names) == 1:
            single = attrgetter(names[0])
            return lambda o: (single(o),)
        return attrgetter(*names) if names else (lambda _o: ())
    source = f"lambda o: ({''.join(f'o.{n}, ' for n in names)})"
    getter: Callable[[Any], tuple[Any, ...]] = eval(source, {})  # noqa: S307 - identifiers only
    return getter


@functools.lru_cache(maxsize=1024)
def column_getter(name: str) -> Callable[[Iterable[Any]], list[Any]]:
    """``objs -> [o.<name> for o in objs]``: one field of every instance, compiled like
    :func:`fields_getter` (a fifth faster than ``list(map(attrgetter(name), objs))``)."""
    if not plain_identifier(name):
        get = attrgetter(name)
        return lambda objs: list(map(get, objs))
    getter: Callable[[Iterable[Any]], list[Any]] = eval(  # noqa: S307 - an identifier only
        f"lambda objs: [o.{name} for o in objs]", {}
    )
    return getter


__all__ = [
    "check_constructible",
    "column_getter",
    "fields_getter",
    "instance_builder",
    "plain_identifier",
]

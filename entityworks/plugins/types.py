"""The built-in types as a plugin: what every registry the hooks fill starts with."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..hooks import hookimpl

if TYPE_CHECKING:
    from ..types.registry import TypeRegistry


@hookimpl(tryfirst=True)
def register_types(registry: TypeRegistry) -> None:
    """The scalars' entries, then the factories, tried newest first: Enums, JSON containers,
    NumPy arrays (whose test imports NumPy, so a ``list[int]`` is settled before it), nested
    dataclasses. First of all plugins, so that another's entry for a built-in type wins."""
    from ..types import arrays, entries, json

    entries.register(registry)
    json.register_nested(registry)
    arrays.register(registry)
    json.register(registry)
    entries.register_enums(registry)

"""The default registry: every built-in entry, the one ``entityworks.registry`` speaks for.

Separate from :mod:`.registry` so that the registry's machinery knows no particular type;
applications add theirs to it when imported (the catalog's packed grids and point paths:
``entityworks.catalog.packing.register``).
"""

from __future__ import annotations

from . import arrays, json, scalars
from .registry import TypeRegistry


def default_registry() -> TypeRegistry:
    """A new registry holding the built-in entries (the scalars) and factories.

    Factories are tried newest first: Enums, JSON containers, NumPy arrays (whose test
    imports NumPy, so a ``list[int]`` is settled before it), nested dataclasses.
    """
    registry = TypeRegistry()
    scalars.register(registry)
    json.register_nested(registry)
    arrays.register(registry)
    json.register(registry)
    scalars.register_enums(registry)
    return registry


#: The registry every layer uses unless given another.
registry: TypeRegistry = default_registry()

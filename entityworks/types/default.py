"""The default registry: the one ``entityworks.registry`` speaks for, filled by the plugins.

Separate from :mod:`.registry` so that the registry's machinery knows no particular type.
The entries come through the ``register_types`` hook (:mod:`entityworks.hooks`): the
built-in types from :mod:`entityworks.plugins.types`, the catalog's packed grids and point
paths from :mod:`entityworks.plugins.catalog`, then those of installed plugins; the public
face ``entityworks.registry`` has them filled when imported (:func:`fill_default`).
"""

from __future__ import annotations

from .. import hooks
from .registry import TypeRegistry

#: The plugin whose entries are the core: what :func:`default_registry` holds.
BUILTIN_TYPES = "entityworks.plugins.types"


def default_registry() -> TypeRegistry:
    """A new registry holding the built-in entries and factories alone (the core, which
    knows no application's types): the built-in types plugin's ``register_types``.

    Factories are tried newest first: Enums, JSON containers, NumPy arrays (whose test
    imports NumPy, so a ``list[int]`` is settled before it), nested dataclasses.
    """
    return hooks.add_types(TypeRegistry(), only=[BUILTIN_TYPES])


def plugin_registry() -> TypeRegistry:
    """A new registry filled by every plugin's ``register_types``, as the default one is."""
    return hooks.add_types(TypeRegistry())


#: The registry every layer uses unless given another, filled by :func:`fill_default` when
#: ``entityworks.registry`` (every layer's way to it) is first imported.
registry: TypeRegistry = TypeRegistry()
_filled = False


def fill_default() -> None:
    """Fill :data:`registry` through every plugin's ``register_types``, once.

    ``entityworks.registry`` calls it as its last line, once every name of it is bound, so
    that an installed plugin's module, loaded meanwhile, may import it (and read the default
    registry, the built-in types being registered first)."""
    global _filled
    if not _filled:
        _filled = True
        hooks.add_types(registry)

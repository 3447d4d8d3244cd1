"""The kinds of map the catalog generates, without importing any generator.

Kept apart from :mod:`entityworks.catalog` (which needs NumPy and the Store) so that the
command line can list kinds in ``--help`` and check ``generate KIND`` without them; a
generator module is imported only when its function is asked for. The kinds themselves are
registered by plugins (:mod:`entityworks.hooks`), the catalog's own by
:mod:`entityworks.plugins.catalog`.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from .. import hooks


@dataclass(frozen=True)
class MapKind:
    """A kind of map the catalog can generate: a generator function and fixed arguments."""

    name: str
    module: str
    fixed: tuple[tuple[str, Any], ...] = ()
    help: str = ""
    #: Maps per worker task, sized to the kind's generation time at the defaults (8 caves:
    #: about 0.2 s; 32 dungeons: about 0.07 s): enough for a task's own costs (the pool's
    #: messages, packing the chunk's rows at once, the collector's pass after it) to stay
    #: small beside the builds, few enough for the last tasks of a run to end close together.
    chunk: int = 8
    #: The version recorded with each map of this kind (``maps.generator_version``); None:
    #: the version of the package the generator module belongs to (:func:`package_version`).
    version: str | None = None

    def function(self) -> Callable[..., Any]:
        return importlib.import_module(self.module).generate  # type: ignore[no-any-return]

    def generator_version(self) -> str | None:
        """The version each map of this kind records: :attr:`version` if the kind gives
        one, else the ``__version__`` (or installed distribution version) of the generator
        module's top-level package: ``generators.__version__`` for the catalog's own kinds."""
        return self.version if self.version is not None else package_version(self.module)

    def parameters(self) -> list[str]:
        """Names the generator accepts (besides ``seed``) that are not fixed by the kind."""
        fixed = dict(self.fixed)
        return [
            p
            for p in inspect.signature(self.function()).parameters
            if p != "seed" and p not in fixed
        ]


def package_version(module: str) -> str | None:
    """The version of the top-level package of ``module`` (``generators.maps.caves`` ->
    ``generators.__version__``), or of its installed distribution; None when it has none."""
    top = module.partition(".")[0]
    version = getattr(importlib.import_module(top), "__version__", None)
    if isinstance(version, str):
        return version
    from importlib import metadata

    try:
        return metadata.version(top)
    except metadata.PackageNotFoundError:
        return None


class Kinds(Mapping[str, MapKind]):
    """Name -> :class:`MapKind` of every plugin (the ``register_map_kinds`` hook of
    :mod:`entityworks.hooks`; the catalog's own come from :mod:`entityworks.plugins.catalog`),
    asked for when first read and again after a plugin is registered."""

    def __getitem__(self, name: str) -> MapKind:
        return _kinds()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(_kinds())

    def __len__(self) -> int:
        return len(_kinds())

    def __repr__(self) -> str:
        return f"Kinds({list(self)!r})"


def _kinds() -> dict[str, MapKind]:
    kinds = hooks.map_kinds()
    for name, kind in kinds.items():
        if not isinstance(kind, MapKind):
            raise TypeError(f"map kind {name!r} from a plugin is not a MapKind: {kind!r}")
    return kinds


#: The map kinds of every plugin, the catalog's first: caves, dungeon, islands, labyrinth,
#: cellular.
KINDS: Mapping[str, MapKind] = Kinds()


def map_kind(name: str) -> MapKind:
    """The :class:`MapKind` called ``name``; a ValueError lists the known kinds."""
    try:
        return KINDS[name]
    except KeyError:
        raise ValueError(
            f"unknown map kind {name!r}; choose from {', '.join(sorted(KINDS))}"
        ) from None


__all__ = ["KINDS", "Kinds", "MapKind", "map_kind", "package_version"]

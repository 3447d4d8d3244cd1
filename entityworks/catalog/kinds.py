"""The kinds of map the catalog generates, without importing any generator.

Kept apart from :mod:`entityworks.catalog` (which needs NumPy and the Store) so that the
command line can list kinds in ``--help`` and check ``generate KIND`` at start-up cost zero;
a generator module is imported only when its function is asked for.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


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

    def function(self) -> Callable[..., Any]:
        return importlib.import_module(self.module).generate  # type: ignore[no-any-return]

    def parameters(self) -> list[str]:
        """Names the generator accepts (besides ``seed``) that are not fixed by the kind."""
        fixed = dict(self.fixed)
        return [
            p
            for p in inspect.signature(self.function()).parameters
            if p != "seed" and p not in fixed
        ]


KINDS: dict[str, MapKind] = {
    k.name: k
    for k in (
        MapKind(
            "caves", "generators.maps.caves", help="cave systems joined by corridors [100x100]"
        ),
        MapKind(
            "dungeon",
            "generators.maps.dungeon",
            help="rooms joined by corridors [150x150]",
            chunk=32,
        ),
        MapKind(
            "islands",
            "generators.maps.islands",
            (("island", True),),
            "island maps [99x99]",
            chunk=64,
        ),
        MapKind(
            "labyrinth",
            "generators.maps.islands",
            (("island", False),),
            "labyrinth maps [99x99]",
            chunk=64,
        ),
        MapKind(
            "cellular",
            "generators.maps.cellular",
            help="cellular-automaton caves, 4-5 rule [40x21]",
            chunk=64,
        ),
    )
}


def map_kind(name: str) -> MapKind:
    """The :class:`MapKind` called ``name``; a ValueError lists the known kinds."""
    try:
        return KINDS[name]
    except KeyError:
        raise ValueError(
            f"unknown map kind {name!r}; choose from {', '.join(sorted(KINDS))}"
        ) from None


__all__ = ["KINDS", "MapKind", "map_kind"]

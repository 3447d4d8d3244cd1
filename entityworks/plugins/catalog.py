"""The catalog as a plugin: its column types (packed grids, point paths) and its map kinds.

Both are registered without importing the catalog: a registry filled by the hooks (the
default one) knows :data:`~entityworks.catalog.packing.PackedGrid` and
:data:`~entityworks.catalog.packing.PointPath` without loading NumPy or
:mod:`entityworks.catalog.packing`, which is imported when such a type is first looked up;
the map kinds name their generator modules, imported when a map is built.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..hooks import hookimpl

if TYPE_CHECKING:
    from ..catalog.kinds import MapKind
    from ..types.registry import TypeInfo, TypeRegistry

#: The module that defines the markers (and whose functions build the entries).
PACKING = "entityworks.catalog.packing"


def _marked(test: str) -> Callable[[Any], bool]:
    """A factory's predicate: ``packing.<test>(tp)``. An annotation can carry the catalog's
    markers only once the module defining them is imported: until then nothing matches,
    and nothing is imported to find that out."""

    def predicate(tp: Any) -> bool:
        packing = sys.modules.get(PACKING)
        return packing is not None and bool(getattr(packing, test)(tp))

    return predicate


def _packed_grid(tp: Any, registry: TypeRegistry) -> TypeInfo:
    from ..catalog import packing

    return packing.packed_grid_info(tp, registry)


def _point_path(tp: Any, registry: TypeRegistry) -> TypeInfo:
    from ..catalog import packing

    return packing.point_path_info(tp, registry)


@hookimpl
def register_types(registry: TypeRegistry) -> None:
    """:data:`~entityworks.catalog.packing.PackedGrid` and
    :data:`~entityworks.catalog.packing.PointPath` (what ``packing.register`` adds)."""
    registry.register_factory(_marked("is_packed_grid"), _packed_grid)
    registry.register_factory(_marked("is_point_path"), _point_path)


@hookimpl
def register_map_kinds() -> list[MapKind]:
    """The kinds the catalog generates (``entityworks generate KIND``)."""
    from ..catalog.kinds import MapKind

    return [
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
    ]

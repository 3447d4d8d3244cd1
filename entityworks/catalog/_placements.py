"""Placing stairs and items on stored maps (``generators.maps.placement``) and storing them.

Apart from the queries because it writes: every map of a request is placed first, then all
are written in one transaction.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import EntityworksError
from ..sql.store import Store
from ._models import MapPlacement, MapRecord
from ._queries import load_map

#: Labels given to placements in order; the rest are items.
PLACEMENT_LABELS = ("stairs_up", "stairs_down")


def placement_labels(count: int) -> list[str]:
    """``stairs_up``, ``stairs_down``, then ``item`` for every further placement."""
    return [PLACEMENT_LABELS[i] if i < len(PLACEMENT_LABELS) else "item" for i in range(count)]


def place_on_map(
    record: MapRecord,
    count: int,
    clearance: int = 2,
    *,
    seed: int | None = None,
    min_distance: int = 0,
) -> list[MapPlacement]:
    """Pick placements for ``record`` (``generators.maps.placement.place``) and set them on it.

    Without ``seed`` the map's own seed (else its id) seeds the draw, so placing again
    gives the same cells.
    """
    from generators.maps.placement import place

    if seed is None:
        seed = record.seed if record.seed is not None else (record.id or 0)
    found = place(record.grid, count, clearance, seed, min_distance=min_distance)
    record.placements = [
        MapPlacement(x, y, label, clearance)
        for (x, y), label in zip(found.points, placement_labels(count), strict=True)
    ]
    return record.placements


def store_placements(
    store: Store,
    map_ids: Sequence[int],
    count: int,
    clearance: int = 2,
    *,
    seed: int | None = None,
    min_distance: int = 0,
) -> dict[int, list[MapPlacement]]:
    """Place on each map and replace its stored placements, all maps in one transaction.

    A missing map or a map without room for the request raises before anything is written
    (every map is placed first, then all are written).
    """
    records: list[MapRecord] = []
    for map_id in map_ids:
        record = load_map(store, map_id)
        if record is None:
            raise EntityworksError(f"no map with id {map_id}")
        try:
            place_on_map(record, count, clearance, seed=seed, min_distance=min_distance)
        except ValueError as exc:
            raise EntityworksError(f"map {map_id}: {exc}") from None
        records.append(record)
    with store.transaction():
        for record in records:
            store.update(record)
    return {record.id: record.placements for record in records}  # type: ignore[misc]


__all__ = ["PLACEMENT_LABELS", "place_on_map", "placement_labels", "store_placements"]

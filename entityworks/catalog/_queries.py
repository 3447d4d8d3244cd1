"""Reading the catalog: one map or only its grid, and the queries a level designer needs
(by kind, size, open ratio and region count; the largest; a random sample).

Filters are built with :func:`entityworks.col` and run through the Store's indexes
(``models.MAP_INDEXES``); nothing here writes.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any, Literal, overload

import numpy as np
import sqlalchemy as sa

from ..sql.filters import col
from ..sql.store import Store
from ._build import decode_grid
from ._models import MapRecord
from .packing import check_grid_shape, grid_shape


def load_map(store: Store, map_id: int) -> MapRecord | None:
    """The map ``map_id`` with its caves, rooms, corridors and placements (None if absent).

    Its grid's header is checked against its row's width and height first
    (:func:`~._build.decode_grid`): a row whose grid claims another size is refused with
    :class:`~.packing.GridShapeMismatch` before the grid is unpacked."""
    if _stored_grid(store, map_id) is None:
        return None
    return store.get(MapRecord, map_id)


def load_grid(store: Store, map_id: int) -> np.ndarray | None:
    """Only the grid of map ``map_id`` (1 = wall, 0 = floor), without its child rows.

    The one place that turns a stored grid back into an array for readers that need
    nothing else (the Datasette plugin's pictures): however the catalog stores grids,
    callers go through here. A grid whose header claims another size than its row's
    width and height is refused before it is unpacked, naming the map.
    """
    return _stored_grid(store, map_id, decode=True)


@overload
def _stored_grid(store: Store, map_id: int) -> bool | None: ...
@overload
def _stored_grid(store: Store, map_id: int, *, decode: Literal[True]) -> np.ndarray | None: ...
def _stored_grid(store: Store, map_id: int, *, decode: bool = False) -> np.ndarray | bool | None:
    """Map ``map_id``'s stored grid checked against its row's size from the blob's header
    (:func:`~._build.decode_grid`); the grid itself with ``decode``, else True. None when
    the map does not exist."""
    if not -(2**63) <= map_id < 2**63:
        return None  # no key of the table's 64-bit integers
    table = store.table(MapRecord)
    stmt = sa.select(table.c.width, table.c.height, table.c.grid).where(table.c.id == map_id)
    with store.connection() as conn:
        row = conn.execute(stmt).first()
    if row is None:
        return None
    width, height, blob = row
    if blob is None:  # the column is NOT NULL: another tool's edit
        raise ValueError(f"map {map_id}: its grid is NULL; the row is damaged or was edited")
    if not decode:
        check_grid_shape(grid_shape(blob), width, height, map_id)
        return True
    return decode_grid(blob, width=width, height=height, map_id=map_id)


Range = tuple[float | None, float | None]


def _bounds(name: str, value: float | Range | None) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, tuple | list):
        if len(value) != 2:
            raise ValueError(f"{name} range must be (low, high), got {value!r}")
        low, high = value
        parts = []
        if low is not None:
            parts.append(col(name) >= low)
        if high is not None:
            parts.append(col(name) <= high)
        return parts
    return [col(name) == value]


def map_filter(
    *,
    kind: str | None = None,
    width: float | Range | None = None,
    height: float | Range | None = None,
    open_ratio: float | Range | None = None,
    regions: float | Range | None = None,
    seed: int | None = None,
) -> list[Any]:
    """The ``where`` for :func:`find_maps`: exact values or ``(low, high)`` ranges (inclusive,
    ``None`` leaves an end open)."""
    parts: list[Any] = []
    if kind is not None:
        parts.append(col("kind") == kind)
    if seed is not None:
        parts.append(col("seed") == seed)
    for name, value in (
        ("width", width),
        ("height", height),
        ("open_ratio", open_ratio),
        ("region_count", regions),
    ):
        parts += _bounds(name, value)
    return parts


def find_maps(
    store: Store,
    *,
    kind: str | None = None,
    width: float | Range | None = None,
    height: float | Range | None = None,
    open_ratio: float | Range | None = None,
    regions: float | Range | None = None,
    seed: int | None = None,
    order_by: str | Sequence[str] = "id",
    limit: int | None = None,
) -> list[MapRecord]:
    """Maps matching every given criterion, e.g. caves between 80x40 and 120x60 with one
    region and at least 45 % floor::

        find_maps(store, kind="caves", width=(80, 120), height=(40, 60), regions=1,
                  open_ratio=(0.45, None))
    """
    where = map_filter(
        kind=kind, width=width, height=height, open_ratio=open_ratio, regions=regions, seed=seed
    )
    return list(store.select(MapRecord, where=where, order_by=order_by, limit=limit))


def largest_maps(
    store: Store, n: int, *, kind: str | None = None, by: str = "largest_region"
) -> list[MapRecord]:
    """The ``n`` maps with the most ``by`` (default: the largest connected floor region);
    among equals the newest first, the order the indexes hold them in (no sort of the ties,
    which a catalog of small maps has by the thousand)."""
    where = map_filter(kind=kind)
    return list(store.select(MapRecord, where=where, order_by=[f"-{by}", "-id"], limit=n))


def single_region_maps(
    store: Store, *, kind: str | None = None, limit: int | None = None
) -> list[MapRecord]:
    """Maps whose floor is exactly one connected region."""
    return find_maps(store, kind=kind, regions=1, limit=limit)


#: Candidate keys :func:`sample_maps` tries per wanted map before it lists the matching keys
#: instead (a filter that few rows pass makes random keys miss too often).
SAMPLE_TRIES = 16


def sample_maps(
    store: Store, n: int, *, kind: str | None = None, seed: int | None = None
) -> list[MapRecord]:
    """``n`` maps drawn at random without replacement (fewer when fewer exist), in id order.

    Keys are drawn uniformly between the smallest and the largest id (a seeded
    ``random.Random``) and a drawn key is kept when its row exists, matches and was not kept
    before: every matching map is equally likely, and the cost does not grow with the
    catalog (a few lookups by key, not a count and a walk to each drawn position). When the
    draws miss too often (ids with large gaps, a rare kind), the matching keys are listed
    and the rest drawn among them. The same seed draws the same maps on every database.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"n must be an integer >= 0, got {n!r}")
    where = map_filter(kind=kind)
    id_only = ["id"]  # only the key is read until the maps are fetched
    first = next(iter(store.select(MapRecord, order_by="id", limit=1, columns=id_only)), None)
    if first is None or n == 0:
        return []
    low = first[0]
    high = next(iter(store.select(MapRecord, order_by="-id", limit=1, columns=id_only)))[0]
    rng = random.Random(seed)
    chosen: dict[int, None] = {}  # insertion-ordered: the order of the draws
    tries = SAMPLE_TRIES * n
    while len(chosen) < n and tries > 0:
        want = n - len(chosen)
        draws = [rng.randint(low, high) for _ in range(min(tries, 4 * want + 8))]
        tries -= len(draws)
        found = {
            k
            for (k,) in store.select(
                MapRecord, where=[col("id").in_(sorted(set(draws))), *where], columns=id_only
            )
        }
        for key in draws:
            if key in found and key not in chosen and len(chosen) < n:
                chosen[key] = None
    if len(chosen) < n:  # the matching keys not drawn yet, listed through an index
        listed = store.select(MapRecord, where=where, order_by="id", columns=id_only)
        rest = [k for (k,) in listed if k not in chosen]
        chosen.update(dict.fromkeys(rng.sample(rest, min(n - len(chosen), len(rest)))))
    return list(store.select(MapRecord, where=col("id").in_(sorted(chosen)), order_by="id"))


__all__ = [
    "SAMPLE_TRIES",
    "Range",
    "find_maps",
    "largest_maps",
    "load_grid",
    "load_map",
    "map_filter",
    "sample_maps",
    "single_region_maps",
]

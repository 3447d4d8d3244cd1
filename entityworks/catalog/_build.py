"""One map built: a ``generators`` result turned into a catalog row, and the checks of a
request (kind, parameters, size) before anything is built.

Everything here is a pure function of its arguments, run in this process, in a worker process
or on a Dask worker (:mod:`._generate`, :mod:`.cluster`): both sit on top of this module.
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._gcpause import paused_gc
from ..errors import EntityworksError
from ..sql.encoded import EncodedRows, encode_values, fields
from ._models import MapCave, MapCorridor, MapRecord, MapRoom, utc_now
from .kinds import map_kind, package_version
from .packing import CellPath, check_grid_shape, grid_shape, unpack_grid


def map_stats(grid: np.ndarray) -> tuple[float, int, int]:
    """``(open_ratio, region_count, largest_region)`` of a grid (4-connected floor regions)."""
    from generators.maps.regions import region_stats

    stats = region_stats(grid, 4)
    ratio = float(np.count_nonzero(grid == 0)) / grid.size
    return ratio, int(stats.count), int(stats.largest)


def grid_sha256(grid: np.ndarray) -> str:
    """The hash a map keeps of its grid (``maps.grid_sha256``): the SHA-256, in hex, of
    ``b"<height>x<width>\\n"`` followed by the grid's cells as bytes (``uint8``, row after
    row, C order). The shape is part of it, so two grids of the same cells in other shapes
    differ; it does not depend on how the catalog packs grids."""
    cells = np.ascontiguousarray(grid, dtype=np.uint8)
    if cells.ndim != 2:
        raise ValueError(f"a map grid has two dimensions, got shape {cells.shape}")
    digest = hashlib.sha256(b"%dx%d\n" % cells.shape)
    digest.update(cells.tobytes())
    return digest.hexdigest()


def map_record(
    result: Any,
    *,
    kind: str | None = None,
    generator: str | None = None,
    version: str | None = None,
) -> MapRecord:
    """Turn a ``generators`` result (caves, dungeon, islands, cellular) into a catalog row.

    ``version`` (the row's ``generator_version``) defaults to the version of the package
    that made ``result`` (:func:`~.kinds.package_version`).

    The values are :func:`map_values`' (the one statement of the row's fields and their
    order: :data:`MAP_FIELDS`, :data:`CHILD_FIELDS`), named by their columns, so the objects
    and the encoded rows of a result cannot differ."""
    if generator is None:
        generator = f"{type(result).__module__}.{type(result).__name__}"
    row, children = map_values(
        result, kind=kind or result.kind, generator=generator, version=version
    )
    caves, rooms, corridors = (CHILD_FIELDS[name] for name in ("caves", "rooms", "corridors"))
    return MapRecord(
        **dict(zip(MAP_FIELDS, row, strict=True)),
        caves=[MapCave(**dict(zip(caves, c, strict=True))) for c in children["caves"]],
        rooms=[MapRoom(**dict(zip(rooms, r, strict=True))) for r in children["rooms"]],
        corridors=[_corridor(dict(zip(corridors, c, strict=True))) for c in children["corridors"]],
    )


def _corridor(values: dict[str, Any]) -> MapCorridor:
    """A corridor of :func:`map_values`, its path as the ``[x, y]`` lists of a MapCorridor."""
    path = values.pop("path")
    return MapCorridor(**values, path=[[int(x), int(y)] for x, y in path])


def build_outcome(
    result: Any, regions: int | None = None
) -> tuple[bool | None, int | None, int | None, bool | None]:
    """``(build_success, rooms_asked, rooms_built, connected)`` of a generator result.

    A dungeon (``generators.maps.dungeon``) reports all four. A result that reports only
    whether its floor is ``connected`` (a cave system, whose corridor builder may give up
    after ``breakout`` attempts) has no rooms: its build succeeded when its floor is one
    4-connected region, counted on the finished grid (``regions``: the count the row
    stores; the result's own ``regions`` when not given), not taken from the builder's
    bookkeeping. All None for a result that reports no outcome (islands, cellular)."""
    asked = getattr(result, "rooms_asked", None)
    if asked is None:
        if getattr(result, "connected", None) is None:
            return None, None, None, None
        count = getattr(result, "regions", None) if regions is None else regions
        if count is None:
            count = map_stats(np.ascontiguousarray(result.grid, dtype=np.uint8))[1]
        connected = int(count) == 1
        return connected, None, None, connected
    return (bool(result.success), int(asked), int(result.rooms_built), bool(result.connected))


def decode_grid(
    blob: bytes | bytearray | memoryview,
    *,
    width: int | None = None,
    height: int | None = None,
    map_id: object = None,
) -> np.ndarray:
    """The grid held by a ``maps.grid`` value as read straight from the database.

    The one decoder for raw catalog rows (a web view, a script reading SQL itself): it reads
    the bit-packed form of revision ``0005_compact_grids`` and the ``.npy`` bytes of older catalogs.
    Given the row's ``width`` and ``height``, a grid of another shape is refused from its
    header alone (:class:`~.packing.GridShapeMismatch`, naming ``map_id``), before any cell
    is unpacked: pass them whenever the row is at hand.
    """
    if width is not None or height is not None:
        check_grid_shape(grid_shape(blob), width, height, map_id)
    return unpack_grid(blob)


#: Most cells (width x height) a catalog map may have: 4096 x 4096. A grid this size is 16 MiB
#: of bytes before the generators' working copies; far larger ones exhaust memory.
MAX_MAP_CELLS = 1 << 24


def check_parameters(kind: str, params: dict[str, Any]) -> None:
    """Refuse parameter names the generator of ``kind`` does not take, and map sizes over
    :data:`MAX_MAP_CELLS` (width x height, with the generator's defaults)."""
    spec = map_kind(kind)
    accepted = spec.parameters()
    for name in params:
        if name not in accepted:
            raise ValueError(
                f"{kind} has no parameter {name!r}; parameters are: {', '.join(accepted)}"
            )
    defaults = {
        name: p.default for name, p in inspect.signature(spec.function()).parameters.items()
    }
    width, height = (params.get(n, defaults.get(n)) for n in ("width", "height"))
    if (
        isinstance(width, int)
        and isinstance(height, int)
        and not isinstance(width, bool)
        and not isinstance(height, bool)
        and width * height > MAX_MAP_CELLS
    ):
        raise ValueError(
            f"a {width}x{height} map has {width * height:,} cells, more than "
            f"the {MAX_MAP_CELLS:,} (4096x4096) a catalog map may have"
        )


def build_map(kind: str, seed: int | None, params: dict[str, Any]) -> MapRecord:
    """Generate one map of ``kind`` and return its catalog row (runs in worker processes)."""
    spec = map_kind(kind)
    result = spec.function()(**params, **dict(spec.fixed), seed=seed)
    return map_record(result, kind=kind, generator=spec.module, version=spec.generator_version())


def build_chunk(kind: str, seeds: list[int | None], params: dict[str, Any]) -> list[MapRecord]:
    """The maps of ``seeds`` (a worker's task), built with the collector paused (see
    :func:`encode_chunk`)."""
    with paused_gc():
        return [build_map(kind, s, params) for s in seeds]


def encode_chunk(kind: str, seeds: list[int | None], params: dict[str, Any]) -> EncodedRows:
    """The maps of ``seeds`` as rows ready for ``Store.insert_encoded``, built and encoded
    in the worker: a fraction of the objects' pickle, and the writer only writes.

    The rows come straight from the generator's results (:func:`map_values`), with no
    ``MapRecord`` and no corridor lists of ``[x, y]`` lists in between (for a dungeon those
    would cost a large part of the generation itself); each value still goes through its
    column's registry rule, so the rows equal ``encode_rows(build_chunk(...))``.

    A chunk is built with the collector paused: its passes over a generator's lists and
    tuples, which hold plain values, cost a fourteenth of a dungeon's build and find
    nothing to free (garbage the generators might leave in cycles is collected after).
    """
    with paused_gc():
        return _encode_chunk(kind, seeds, params)


def _encode_chunk(kind: str, seeds: list[int | None], params: dict[str, Any]) -> EncodedRows:
    spec = map_kind(kind)
    function = spec.function()
    fixed = dict(spec.fixed)
    version = spec.generator_version()
    rows = []
    caves: list[list[tuple[Any, ...]]] = []
    rooms: list[list[tuple[Any, ...]]] = []
    corridors: list[list[tuple[Any, ...]]] = []
    for seed in seeds:
        row, children = map_values(
            function(**params, **fixed, seed=seed),
            kind=kind,
            generator=spec.module,
            version=version,
        )
        rows.append(row)
        caves.append(children["caves"])
        rooms.append(children["rooms"])
        corridors.append(children["corridors"])
    return encode_values(MapRecord, rows, {"caves": caves, "rooms": rooms, "corridors": corridors})


#: ``maps`` columns in the order :func:`map_values` fills its rows (checked against the
#: schema's own order when first used); :func:`map_record` names the values by them.
MAP_FIELDS = (
    "id",
    "kind",
    "generator",
    "parameters",
    "seed",
    "width",
    "height",
    "open_ratio",
    "region_count",
    "largest_region",
    "created_at",
    "build_success",
    "rooms_asked",
    "rooms_built",
    "connected",
    "generator_version",
    "grid_sha256",
    "grid",
)
#: The same for the rows of each child list.
CHILD_FIELDS: dict[str, tuple[str, ...]] = {
    "caves": ("number", "cells", "x", "y", "width", "height", "centroid_x", "centroid_y"),
    "rooms": ("x", "y", "width", "height"),
    "corridors": ("length", "start_x", "start_y", "end_x", "end_y", "path"),
}
_checked_fields = False


def map_values(
    result: Any, *, kind: str, generator: str, version: str | None = None
) -> tuple[tuple[Any, ...], dict[str, list[tuple[Any, ...]]]]:
    """A generator's result as plain values: the ``maps`` row (in ``encode_values`` order,
    :data:`MAP_FIELDS`) and the caves, rooms and corridors as tuples (:data:`CHILD_FIELDS`);
    no placements (a new map has none). :func:`map_record` is made of them. ``version`` is
    the row's ``generator_version`` (by default the version of the package that made
    ``result``, :func:`~.kinds.package_version`); its ``grid_sha256`` is the grid's
    (:func:`grid_sha256`).

    A result that reports its own ``open_ratio``, ``regions`` and ``largest_region`` (every
    catalog generator's does) is not measured again."""
    global _checked_fields
    if not _checked_fields:  # the orders above are the schema's, or nothing is encoded
        if fields(MapRecord) != MAP_FIELDS or any(
            fields(MapRecord, name) != order for name, order in CHILD_FIELDS.items()
        ):
            raise EntityworksError(
                "catalog.build's field orders differ from MapRecord's "
                "columns: update MAP_FIELDS and CHILD_FIELDS"
            )
        _checked_fields = True
    grid = np.ascontiguousarray(result.grid, dtype=np.uint8)
    if version is None:
        version = package_version(type(result).__module__)
    # Every catalog generator measures the grid it returns with the functions map_stats
    # applies (region_stats(grid, 4), open_ratio): its figures are taken, not measured again
    # (a dungeon's labelling is a twentieth of its generation).
    reported = (
        getattr(result, "open_ratio", None),
        getattr(result, "regions", None),
        getattr(result, "largest_region", None),
    )
    ratio, regions, largest = map_stats(grid) if None in reported else reported
    row = (
        None,
        kind,
        generator,
        dict(result.params),
        result.seed,
        int(grid.shape[1]),
        int(grid.shape[0]),
        ratio,
        regions,
        largest,
        utc_now(),
        *build_outcome(result, regions),
        version,
        grid_sha256(grid),
        grid,
    )
    caves = [(c.id, c.cells, *c.bbox, *c.centroid) for c in getattr(result, "caves", [])]
    rooms = [(r.x, r.y, r.width, r.height) for r in getattr(result, "rooms", [])]
    positions = getattr(result, "corridor_positions", None)
    if positions is not None:  # the generator's own form: no pair per cell to pack
        width = int(grid.shape[1])
        corridors = [_positions_values(p, width) for p in positions if len(p)]
    else:
        corridors = [_corridor_values(p) for p in getattr(result, "corridors", []) if len(p)]
    return row, {"caves": caves, "rooms": rooms, "corridors": corridors}


def _positions_values(positions: Sequence[int], width: int) -> tuple[Any, ...]:
    """A corridor's values from its cell positions (``y * width + x``); the path a
    :class:`~.packing.CellPath`, packed as the list of its points would be."""
    path = CellPath(positions, width)
    first, last = positions[0], positions[-1]
    if type(first) is int and type(last) is int:
        (sy, sx), (ey, ex) = divmod(first, width), divmod(last, width)
    else:  # a numpy integer made int, anything else refused
        (sx, sy), (ex, ey) = path[0], path[-1]
    return len(positions), sx, sy, ex, ey, path


def _corridor_values(path: Any) -> tuple[Any, ...]:
    """A corridor's values; the path as the generator made it when it is a list of pairs
    (``pack_points`` stores it as it would the ``[x, y]`` lists of a MapCorridor)."""
    (sx, sy), (ex, ey) = path[0], path[-1]
    cells = path if type(path) is list else [[int(x), int(y)] for x, y in path]
    return len(path), int(sx), int(sy), int(ex), int(ey), cells


__all__ = [
    "CHILD_FIELDS",
    "MAP_FIELDS",
    "MAX_MAP_CELLS",
    "build_chunk",
    "build_map",
    "build_outcome",
    "check_parameters",
    "decode_grid",
    "encode_chunk",
    "grid_sha256",
    "map_record",
    "map_stats",
    "map_values",
]

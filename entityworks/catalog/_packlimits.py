"""The catalog's stored-form limits and the errors of its packed columns, without NumPy:
the face (:mod:`.packing`) and the NumPy forms (:mod:`._packforms`) both use them, and the
models check a grid's shape against its row with them before anything is unpacked."""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import EntityworksError

#: Most cells (elements) a stored grid may have: the catalog's own map limit
#: (``entityworks.catalog.MAX_MAP_CELLS``, 4096 x 4096). A blob's header names its shape, so
#: a crafted one (a few KB of deflated bits claiming 8192 x 8192) is refused before anything
#: is inflated or allocated; :func:`pack_grid` refuses to write what could not be read back.
MAX_GRID_CELLS = 1 << 24
#: Most bytes a grid's cells may take: the cell limit at 16 bytes a cell (complex128).
MAX_INFLATED = 16 * MAX_GRID_CELLS
#: Most points a stored path may have. A path decodes to one Python list per point (about
#: 100 bytes each, from two bits of blob), so a long blob would otherwise cost hundreds of
#: times its size; a corridor of the largest map is far shorter. Longer paths are refused
#: when written and when read, before any point is built.
MAX_PATH_POINTS = 1 << 20


class GridShapeMismatch(EntityworksError, ValueError):
    """A stored map whose grid's shape is not the ``height`` x ``width`` of its own row (a
    damaged row, or one edited by another tool): refused before the grid is unpacked."""


def _dims(shape: Sequence[int]) -> str:
    """``WxH`` of a 2-D shape ``(height, width)``; any other shape as its tuple."""
    if len(shape) == 2:
        return f"{shape[1]}x{shape[0]}"
    return f"{len(shape)}-D {tuple(int(n) for n in shape)}"


def check_grid_shape(
    shape: Sequence[int], width: object, height: object, map_id: object = None
) -> None:
    """Refuse (:class:`GridShapeMismatch`, naming map ``map_id``) a grid whose ``shape`` is
    not ``(height, width)``, the size its ``maps`` row gives."""
    if tuple(shape) != (height, width):
        who = "a new map" if map_id is None else f"map {map_id}"
        raise GridShapeMismatch(
            f"{who}: its grid is {_dims(shape)} cells but its row says {width}x{height} "
            "(width x height); the row is damaged or was edited, and is refused"
        )


class GridTooLarge(EntityworksError, ValueError):
    """A grid (written, or claimed by a stored blob's header) over :data:`MAX_GRID_CELLS`
    cells or :data:`MAX_INFLATED` bytes."""


class PathTooLong(EntityworksError, ValueError):
    """A path (written, or claimed by a stored blob) over :data:`MAX_PATH_POINTS` points."""

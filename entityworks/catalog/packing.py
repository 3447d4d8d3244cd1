"""Compact, lossless storage forms for map grids and point paths (used by the type registry).

A catalog grid is a 2-D integer array holding two values (1 = wall, 0 = floor); as ``.npy``
bytes it costs one byte per cell. :func:`pack_grid` stores such an array bit-packed
(``np.packbits``: one bit per cell) with its dtype, shape and the two values, so it comes back
equal and of its type; any other array (floats, more than two values, structured dtypes)
keeps its ``.npy`` form, zlib-compressed. :func:`unpack_grid` also reads plain ``.npy``
bytes, the form catalogs used before revision ``0005_compact_grids``.

A corridor is a list of ``[x, y]`` cells, each a 4-neighbour of the one before;
:func:`pack_points` stores the first cell and two bits per step, and any other path as
64-bit integer pairs.

Both forms start with a tag byte, so new forms can be added without breaking old blobs.

The two forms are types of their own, :data:`PackedGrid` and :data:`PointPath`, marked with
:data:`PACKED` and :data:`POINTS`. The catalog plugin (:mod:`entityworks.plugins.catalog`)
adds their entries to every registry the hooks fill, the default one among them, and
:func:`register` to any other; importing this module changes no registry.

Importing this module, naming these types and looking them up import no NumPy: the forms
themselves live in :mod:`._packforms`, imported when a grid or a path is first packed or
read, and :data:`PackedGrid`'s base is :class:`~entityworks.types.registry.ClassByName`
``numpy.ndarray`` at run time (type checkers see ``numpy.ndarray``). So ``entityworks
query`` on the catalog's tables loads NumPy only when it shows a grid.
"""

from __future__ import annotations

import typing
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..types import storage
from ..types.codecs import ArrowCodec, SqlCodec, XmlCodec
from ..types.registry import ClassByName, TypeInfo, TypeMarker, TypeRegistry, pyarrow_module
from ..types.scalars import bytes_from_text, bytes_to_text
from ._packlimits import (
    MAX_GRID_CELLS,
    MAX_INFLATED,
    MAX_PATH_POINTS,
    GridShapeMismatch,
    GridTooLarge,
    PathTooLong,
    check_grid_shape,
)

if TYPE_CHECKING:
    import numpy as np

    from ._packforms import CellPath as CellPath

#: Marker for arrays stored bit-packed by :func:`pack_grid`: ``PackedGrid``.
PACKED = TypeMarker("PACKED")
#: Marker for ``[x, y]`` point paths stored as steps by :func:`pack_points`: ``PointPath``.
POINTS = TypeMarker("POINTS")

if TYPE_CHECKING:
    PackedGrid = typing.Annotated[np.ndarray, PACKED]
else:
    #: ``Annotated[np.ndarray, PACKED]``: an array column stored by :func:`pack_grid` (its
    #: base named, not imported: see the module's docstring).
    PackedGrid = typing.Annotated[ClassByName("numpy", "ndarray"), PACKED]
#: ``Annotated[list[list[int]], POINTS]``: a path of ``[x, y]`` cells stored by
#: :func:`pack_points` (its XML and Arrow forms stay JSON text).
PointPath = typing.Annotated[list[list[int]], POINTS]


def _forms() -> Any:
    from . import _packforms

    return _packforms


def __getattr__(name: str) -> Any:
    """:class:`CellPath`, from the NumPy forms when first asked for."""
    if name == "CellPath":
        return _forms().CellPath
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def pack_grid(array: Any) -> bytes:
    """The compact form of ``array``: bit-packed when it holds at most two integer values,
    its ``.npy`` bytes deflated otherwise."""
    return _forms().pack_grid(array)  # type: ignore[no-any-return]


def unpack_grid(blob: bytes | bytearray | memoryview) -> np.ndarray:
    """The array :func:`pack_grid` stored (plain ``.npy`` bytes are read too)."""
    return _forms().unpack_grid(blob)  # type: ignore[no-any-return]


def grid_shape(blob: bytes | bytearray | memoryview) -> tuple[int, ...]:
    """The shape a stored grid claims, read from its header alone: no cell is unpacked or
    allocated (a damaged header is a ValueError, a shape over the limits
    :class:`GridTooLarge`, as :func:`unpack_grid` would raise)."""
    return _forms().grid_shape(blob)  # type: ignore[no-any-return]


def pack_points(path: Any) -> bytes:
    """The compact form of a path of ``[x, y]`` cells (a :class:`CellPath` too): its first
    cell and two bits per step, or 64-bit pairs when a step is not to a 4-neighbour."""
    return _forms().pack_points(path)  # type: ignore[no-any-return]


def unpack_points(blob: bytes | bytearray | memoryview) -> list[list[int]]:
    """The ``[x, y]`` cells :func:`pack_points` stored."""
    return _forms().unpack_points(blob)  # type: ignore[no-any-return]


def pack_points_many(paths: Sequence[Any]) -> list[bytes]:
    """:func:`pack_points` of each path, a column at a time."""
    return _forms().pack_points_many(paths)  # type: ignore[no-any-return]


def unpack_points_many(blobs: Sequence[bytes | bytearray | memoryview]) -> list[list[list[int]]]:
    """:func:`unpack_points` of each blob, a column at a time."""
    return _forms().unpack_points_many(blobs)  # type: ignore[no-any-return]


def points_to_json(path: Any) -> str:
    """A path's XML and Arrow text: JSON of its integer ``[x, y]`` pairs."""
    return _forms().points_to_json(path)  # type: ignore[no-any-return]


def points_from_json(text: str) -> list[list[int]]:
    """The path :func:`points_to_json` wrote."""
    return _forms().points_from_json(text)  # type: ignore[no-any-return]


def _has_marker(tp: Any, marker: TypeMarker) -> bool:
    return typing.get_origin(tp) is typing.Annotated and any(
        m is marker for m in typing.get_args(tp)[1:]
    )


def is_packed_grid(tp: Any) -> bool:
    """True for an annotation marked :data:`PACKED` (:data:`PackedGrid`)."""
    return _has_marker(tp, PACKED)


def is_point_path(tp: Any) -> bool:
    """True for an annotation marked :data:`POINTS` (:data:`PointPath`)."""
    return _has_marker(tp, POINTS)


def packed_grid_info(tp: Any, registry: TypeRegistry) -> TypeInfo:
    """``Annotated[np.ndarray, PACKED]``: bit-packed bytes in SQL and Arrow, base64 of the
    same bytes in XML (plain ``.npy`` bytes are read too)."""
    return TypeInfo(
        "PackedGrid",
        tp,
        sql_codec=SqlCodec(
            column_type=storage.binary,
            encode=pack_grid,
            decode=unpack_grid,
            opaque_as="packed bytes",
        ),
        arrow_codec=ArrowCodec(lambda: pyarrow_module().binary(), pack_grid, unpack_grid),
        xml_codec=XmlCodec(
            xsd_type="xs:base64Binary",
            to_text=lambda a: bytes_to_text(pack_grid(a)),
            from_text=lambda t: unpack_grid(bytes_from_text(t)),
            plain_text=True,
        ),
    )


def point_path_info(tp: Any, registry: TypeRegistry) -> TypeInfo:
    """``Annotated[list[list[int]], POINTS]``: steps packed in SQL, JSON text in XML and
    Arrow (as a plain ``list[list[int]]`` would be)."""
    return TypeInfo(
        "PointPath",
        tp,
        sql_codec=SqlCodec(
            column_type=storage.binary,
            encode=pack_points,
            decode=unpack_points,
            encode_many=pack_points_many,
            decode_many=unpack_points_many,
            opaque_as="packed bytes",
        ),
        arrow_codec=ArrowCodec(lambda: pyarrow_module().string(), points_to_json, points_from_json),
        xml_codec=XmlCodec("xs:string", points_to_json, points_from_json),
    )


def register(registry: TypeRegistry) -> None:
    """Add the entries of :data:`PackedGrid` and :data:`PointPath` to ``registry``, one built
    without the catalog plugin (``TypeRegistry()``, ``types.default.default_registry()``).
    Registries filled by the hooks have them already: the catalog plugin
    (:mod:`entityworks.plugins.catalog`) adds them, without importing this module."""
    registry.register_factory(is_packed_grid, packed_grid_info)
    registry.register_factory(is_point_path, point_path_info)


__all__ = [
    "MAX_GRID_CELLS",
    "MAX_INFLATED",
    "MAX_PATH_POINTS",
    "PACKED",
    "POINTS",
    "GridShapeMismatch",
    "GridTooLarge",
    "PathTooLong",
    "CellPath",
    "PackedGrid",
    "PointPath",
    "check_grid_shape",
    "grid_shape",
    "is_packed_grid",
    "is_point_path",
    "pack_grid",
    "pack_points",
    "pack_points_many",
    "packed_grid_info",
    "point_path_info",
    "points_from_json",
    "points_to_json",
    "register",
    "unpack_grid",
    "unpack_points",
    "unpack_points_many",
]

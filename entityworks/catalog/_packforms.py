"""The stored forms of :data:`~.packing.PackedGrid` and :data:`~.packing.PointPath`, in NumPy:
what :mod:`.packing` describes and its codecs call. This module is imported when a grid or a
path is first packed or read, so that naming the catalog's tables costs no NumPy import."""

from __future__ import annotations

import io
import json
import struct
import typing
import zlib
from collections.abc import Sequence
from itertools import chain, repeat
from operator import add, countOf, sub
from typing import Any

import numpy as np

from ..types.arrays import ndarray_from_bytes
from ..types.json import json_text
from ._packlimits import MAX_GRID_CELLS, MAX_INFLATED, MAX_PATH_POINTS, GridTooLarge, PathTooLong

_NPY_MAGIC = b"\x93NUMPY"
_TWO_VALUES = 1  # tag, dtype code, ndim, shape (uint32 each), low, high (int64), packbits
_NPY_ZLIB = 2  # tag, zlib(.npy bytes)
_TWO_VALUES_ZLIB = 3  # as _TWO_VALUES with the bits deflated (read, never written)
_STEPS = 1  # tag, x0, y0, count (zigzag varints), two bits per step
_PAIRS = 2  # tag, int64 x, y pairs

#: Integer dtypes a two-valued grid may have; the code is the dtype's index here.
_DTYPES = tuple(
    np.dtype(d)
    for d in (
        "|b1",
        "|u1",
        "|i1",
        "<u2",
        "<i2",
        "<u4",
        "<i4",
        "<u8",
        "<i8",
        ">u2",
        ">i2",
        ">u4",
        ">i4",
        ">u8",
        ">i8",
    )
)
_CODE = {d: i for i, d in enumerate(_DTYPES)}
_HEAD = struct.Struct("<BBB")
_VALUES = struct.Struct("<qq")
_U1 = np.dtype(np.uint8)
#: The longest ``.npy`` header read (NumPy's own default limit), plus magic and length.
_NPY_HEAD_MAX = 10_000 + 12


def pack_grid(array: Any) -> bytes:
    """The compact form of ``array``: bit-packed when it holds at most two integer values."""
    if not isinstance(array, np.ndarray):
        raise ValueError(f"expected a numpy.ndarray, got {type(array).__name__}")
    if array.dtype.hasobject:
        raise ValueError("arrays of Python objects are not stored (they would need pickle)")
    _check_size(array.shape, array.dtype)
    code = _CODE.get(array.dtype)
    if code is None or array.size == 0 or array.ndim == 0 or max(array.shape) >= 2**32:
        return _pack_general(array)
    flat = np.ascontiguousarray(array).reshape(-1)
    low = int(flat.min())
    high = int(flat.max())
    if high > 2**63 - 1:  # beyond the header's int64 (uint64 only)
        return _pack_general(array)
    if low == high:
        bits = np.zeros(flat.size, dtype=bool)
    elif high - low == 1:  # integers: every cell is one or the other, nothing to count
        bits = flat if low == 0 else flat == high  # packbits sets a bit per nonzero cell
    else:
        bits = flat == high
        if np.count_nonzero(bits) + np.count_nonzero(flat == low) != flat.size:
            return _pack_general(array)
    # The bits as they are: deflating them would shrink a dungeon's 2.8 KB to 0.6 KB but
    # triple the decode time (inflating costs more than unpacking), and reading grids fast
    # is what the catalog is for.
    head = (
        _HEAD.pack(_TWO_VALUES, code, array.ndim)
        + struct.pack(f"<{array.ndim}I", *array.shape)
        + _VALUES.pack(low, high)
    )
    return head + np.packbits(bits).tobytes()


def _pack_general(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array(
        buffer, np.ascontiguousarray(array) if array.ndim else array, allow_pickle=False
    )
    return bytes([_NPY_ZLIB]) + zlib.compress(buffer.getvalue(), 6)


def _two_values_header(data: bytes) -> tuple[int, tuple[int, ...], int]:
    """A two-valued grid's dtype code, shape and the offset of its two values, checked
    against the blob's length and the known dtype codes (damage: ValueError)."""
    if len(data) < _HEAD.size or len(data) < _HEAD.size + 4 * data[2] + _VALUES.size:
        raise ValueError(f"packed grid of {len(data)} bytes ends inside its header")
    _, code, ndim = _HEAD.unpack_from(data)
    if code >= len(_DTYPES):
        raise ValueError(f"packed grid has an unknown dtype code {code}: damaged data")
    return code, tuple(struct.unpack_from(f"<{ndim}I", data, 3)), 3 + 4 * ndim


def unpack_grid(blob: bytes | bytearray | memoryview) -> np.ndarray:
    """The array :func:`pack_grid` packed (or the array of plain ``.npy`` bytes)."""
    data = bytes(blob) if not isinstance(blob, bytes) else blob
    if not data:
        raise ValueError("an empty blob is not a packed grid")
    tag = data[0]
    if tag == _TWO_VALUES or tag == _TWO_VALUES_ZLIB:
        code, shape, at = _two_values_header(data)
        low, high = _VALUES.unpack_from(data, at)
        size = _check_size(shape, _DTYPES[code])
        if tag == _TWO_VALUES:
            packed = np.frombuffer(data, _U1, offset=at + 16)
        else:
            packed = np.frombuffer(_inflate(data[at + 16 :], (size + 7) // 8 + 1), _U1)
        if packed.size != (size + 7) // 8:
            raise ValueError(
                f"packed grid of shape {shape} needs {(size + 7) // 8} bytes, got {packed.size}"
            )
        bits = np.unpackbits(packed, count=size).reshape(shape)
        dtype = _DTYPES[code]
        if low == 0 and high == 1:
            return bits if code == 1 else bits.astype(dtype)
        out = np.full(shape, low, dtype=dtype)
        out[bits.view(bool)] = high
        return out
    if tag == _NPY_ZLIB:
        return _read_npy(_inflate_npy(data[1:]))
    if data.startswith(_NPY_MAGIC):
        array = _read_npy(data)  # no larger than the blob: its header must match its length
        _check_size(array.shape, array.dtype)
        return array
    raise ValueError(f"not a packed grid (unknown form {tag})")


def grid_shape(blob: bytes | bytearray | memoryview) -> tuple[int, ...]:
    """The shape a stored grid claims, read from its header alone: no cell is unpacked or
    allocated, and of a deflated ``.npy`` form only the header is inflated. A reader that
    knows the shape the grid must have (a ``maps`` row's height and width) checks this
    before :func:`unpack_grid` (see :func:`check_grid_shape`). A damaged header is a
    ValueError and a shape over the limits :class:`GridTooLarge`, as :func:`unpack_grid`
    would raise."""
    data = bytes(blob) if not isinstance(blob, bytes) else blob
    if not data:
        raise ValueError("an empty blob is not a packed grid")
    tag = data[0]
    if tag == _TWO_VALUES or tag == _TWO_VALUES_ZLIB:
        code, shape, _ = _two_values_header(data)
        _check_size(shape, _DTYPES[code])
        return shape
    if tag == _NPY_ZLIB:
        head = _inflate_head(data)
    elif data.startswith(_NPY_MAGIC):
        head = data[:_NPY_HEAD_MAX]
    else:
        raise ValueError(f"not a packed grid (unknown form {tag})")
    length, shape, dtype = _npy_header(head)
    if tag != _NPY_ZLIB:  # plain .npy bytes: the cells follow, as many as the shape says
        claimed = int(np.prod(shape, dtype=object)) * dtype.itemsize
        present = len(data) - length
        if claimed != present:  # the words of ndarray_from_bytes, which reads these
            raise ValueError(
                f".npy header claims shape {shape} of {dtype} ({claimed:,} "
                f"bytes) but {present:,} bytes follow it: damaged data"
            )
    _check_size(shape, dtype)
    return shape


def _inflate_head(data: bytes, step: int = 4096) -> bytes:
    """The inflated start of a deflated ``.npy`` form, enough for its header: the input is
    fed a little at a time (zlib keeps a copy of the input it has not consumed yet)."""
    inflater = zlib.decompressobj()
    view = memoryview(data)
    head = b""
    try:
        for start in range(1, len(data), step):
            head += inflater.decompress(view[start : start + step], _NPY_HEAD_MAX - len(head))
            if len(head) >= _NPY_HEAD_MAX or (len(head) >= 12 and len(head) >= _npy_end(head)):
                break
    except zlib.error as exc:
        raise ValueError(f"packed grid does not inflate: {exc}") from None
    return head


def _npy_end(head: bytes) -> int:
    """Where the ``.npy`` header that ``head`` (12 bytes at least) starts ends."""
    if head[6:7] == b"\x01":
        return 10 + int.from_bytes(head[8:10], "little")
    return 12 + int.from_bytes(head[8:12], "little")


def _check_points(points: int) -> None:
    if points > MAX_PATH_POINTS:
        raise PathTooLong(
            f"a path of {points:,} points is longer than the "
            f"{MAX_PATH_POINTS:,} points a stored path may have"
        )


def _check_size(shape: Sequence[int], dtype: np.dtype[Any]) -> int:
    """The cell count of ``shape``, refused past the limits (checked before allocating)."""
    cells = 1
    for n in shape:
        cells *= int(n)
    if cells > MAX_GRID_CELLS or cells * dtype.itemsize > MAX_INFLATED:
        dims = "x".join(map(str, shape))
        raise GridTooLarge(
            f"a {dims} grid of {dtype} has {cells:,} cells ({cells * dtype.itemsize:,} "
            f"bytes), more than the {MAX_GRID_CELLS:,} cells (4096x4096) or "
            f"{MAX_INFLATED:,} bytes a stored grid may have"
        )
    return cells


def _npy_length(data: bytes) -> int:
    """The length of the ``.npy`` bytes ``data`` starts with (header and cells), from its
    header alone, refused when the header claims a grid over the limits."""
    head, shape, dtype = _npy_header(data)
    return head + _check_size(shape, dtype) * dtype.itemsize


def _npy_header(data: bytes) -> tuple[int, tuple[int, ...], np.dtype[Any]]:
    """``(header length, shape, dtype)`` of the ``.npy`` bytes ``data`` starts with."""
    stream = io.BytesIO(data)
    try:
        version = np.lib.format.read_magic(stream)
        if version == (1, 0):
            shape, _fortran, dtype = np.lib.format.read_array_header_1_0(stream)
        elif version == (2, 0):
            shape, _fortran, dtype = np.lib.format.read_array_header_2_0(stream)
        else:
            raise ValueError(f".npy version {version} is not read")
    except ValueError as exc:
        raise ValueError(f"damaged .npy header: {exc}") from None
    if dtype.hasobject:
        raise ValueError(".npy data holds Python objects (pickle is never read)")
    return stream.tell(), tuple(int(n) for n in shape), dtype


def _read_npy(data: bytes) -> np.ndarray:
    return ndarray_from_bytes(data)  # type: ignore[no-any-return]  # refuses a huge shape


def _inflate(data: bytes, limit: int) -> bytes:
    """Deflated bytes, refused when they would grow past ``limit`` (a crafted blob)."""
    inflater = zlib.decompressobj()
    try:
        out = inflater.decompress(data, limit)
    except zlib.error as exc:
        raise ValueError(f"packed grid does not inflate: {exc}") from None
    if inflater.unconsumed_tail:
        raise ValueError(f"packed data inflates past {limit:,} bytes: damaged data")
    return out


def _inflate_npy(data: bytes) -> bytes:
    """Deflated ``.npy`` bytes: the header inflated first and checked, then at most the
    bytes it claims, so a crafted header costs nothing."""
    inflater = zlib.decompressobj()
    try:
        head = inflater.decompress(data, _NPY_HEAD_MAX)
        need = _npy_length(head)
        rest = inflater.decompress(inflater.unconsumed_tail, max(1, need - len(head) + 1))
    except zlib.error as exc:
        raise ValueError(f"packed grid does not inflate: {exc}") from None
    if inflater.unconsumed_tail:
        raise ValueError(f"packed data inflates past {need:,} bytes: damaged data")
    return head + rest


# -- point paths ----------------------------------------------------------------------------

#: Step codes: 0 east, 1 south, 2 west, 3 north (x grows east, y grows south).
_STEP_CODE = {(1, 0): 0, (0, 1): 1, (-1, 0): 2, (0, -1): 3}
_STEP_DELTA = ((1, 0), (0, 1), (-1, 0), (0, -1))
#: The four steps held by each byte value (first step in the high bits).
_BYTE_STEPS = tuple(
    tuple(_STEP_DELTA[(b >> shift) & 3] for shift in (6, 4, 2, 0)) for b in range(256)
)
_INT64 = (-(2**63), 2**63 - 1)
_NEAR = 2**62
#: Four step codes -> the byte holding them.
_QUAD = {
    (a, b, c, d): (a << 6) | (b << 4) | (c << 2) | d
    for a in range(4)
    for b in range(4)
    for c in range(4)
    for d in range(4)
}
_SEQUENCES = {list, tuple}
#: One move along x (``dx + 1``: 0, 1, 2 for -1, 0, +1) -> its bit of a step code byte;
#: any other move -> 0x80. The same for y.
_DX_BITS = bytes([0x10, 0x00, 0x20] + [0x80] * 253)
_DY_BITS = bytes([0x01, 0x00, 0x02] + [0x80] * 253)
#: Both moves' bits -> the step's code as a base-4 digit (east, south, west, north); not a
#: unit step (no move, a diagonal, a jump) -> ``x``.
_DIGITS = bytes(
    b"0123"[(0x20, 0x02, 0x10, 0x01).index(b)] if b in (0x20, 0x02, 0x10, 0x01) else ord("x")
    for b in range(256)
)


class CellPath(Sequence[tuple[int, int]]):
    """A path given by the positions of its cells in a grid ``width`` cells wide
    (``y * width + x``: indices into ``grid.ravel()``), the form the dungeon generator keeps
    its corridors in (``Dungeon.corridor_positions``).

    :func:`pack_points` stores it exactly as it stores the list of its ``(x, y)`` points,
    and :func:`pack_points_many` packs a column of them from the positions alone, without
    the pair per cell (and its checks) that the points would cost. A position must be an
    integer; the points are worked out when asked for."""

    __slots__ = ("positions", "width")
    positions: Sequence[int]
    width: int

    def __init__(self, positions: Sequence[int], width: int) -> None:
        if type(width) is not int or width < 1:
            raise ValueError(f"a grid width is an integer >= 1, got {width!r}")
        self.positions = positions
        self.width = width

    def __len__(self) -> int:
        return len(self.positions)

    @typing.overload
    def __getitem__(self, index: int) -> tuple[int, int]: ...
    @typing.overload
    def __getitem__(self, index: slice) -> list[tuple[int, int]]: ...
    def __getitem__(self, index: int | slice) -> tuple[int, int] | list[tuple[int, int]]:
        if isinstance(index, slice):
            return self.points()[index]
        return self._point(self.positions[index])

    def __repr__(self) -> str:
        return f"CellPath({self.positions!r}, width={self.width})"

    def _point(self, position: object) -> tuple[int, int]:
        if type(position) is not int:
            if isinstance(position, bool) or not isinstance(position, int | np.integer):
                raise ValueError(f"cell position {position!r} is not an integer")
            position = int(position)
        y, x = divmod(position, self.width)
        return x, y

    def points(self) -> list[tuple[int, int]]:
        """The ``(x, y)`` points, plain ints; a position that is not an integer is refused."""
        positions = self.positions
        if countOf(map(type, positions), int) != len(positions):
            return list(map(self._point, positions))
        width = self.width
        return [(p % width, p // width) for p in positions]


def _coordinate(value: object, i: int, point: Any) -> int:
    if type(value) is int:
        pass
    elif isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise ValueError(f"point {i} is {point!r}: coordinates must be integers")
    value = int(value)
    if not _INT64[0] <= value <= _INT64[1]:
        raise ValueError(f"point {i} is {point!r}: coordinates must fit 64 bits")
    return value


def _flat_points(path: Any) -> list[int]:
    """``path`` checked (a list of integer ``[x, y]`` pairs) as ``[x0, y0, x1, y1, ...]``."""
    if type(path) is CellPath:
        path = path.points()
    if not isinstance(path, list | tuple):
        raise ValueError(f"expected a list of [x, y] points, got {type(path).__name__}")
    # the usual case at C speed: lists of two plain ints within 64 bits
    if set(map(type, path)) <= _SEQUENCES and set(map(len, path)) <= {2}:
        flat = list(chain.from_iterable(path))
        if set(map(type, flat)) <= {int} and (
            not flat or (min(flat) >= _INT64[0] and max(flat) <= _INT64[1])
        ):
            return flat
    flat = []
    for i, point in enumerate(path):
        if not isinstance(point, list | tuple) or len(point) != 2:
            raise ValueError(f"point {i} is {point!r}, not an [x, y] pair")
        flat += (_coordinate(point[0], i, point), _coordinate(point[1], i, point))
    return flat


def _points(path: Any) -> list[list[int]]:
    """``path`` checked, as a new list of ``[x, y]`` lists of plain ints."""
    flat = _flat_points(path)
    return [[x, y] for x, y in zip(flat[0::2], flat[1::2], strict=True)]


def _varint(value: int, out: bytearray) -> None:
    value = (value << 1) ^ (value >> 127)  # zigzag: small magnitudes take few bytes
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def _read_varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(data):
            raise ValueError("packed path ends inside its header")
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return (value >> 1) ^ -(value & 1), at


def _pack_steps(path: Any) -> bytes | None:
    """:func:`pack_points` of the usual path (lists of two plain ints, unit steps, a first
    point within 64 bits) at C speed, or None for anything else.

    The moves along x and along y become bytes (a move beyond one byte does not fit: None),
    each translated to a bit per direction; OR-ing the two as integers gives one byte per
    step, translated to base-4 digits that ``int(digits, 4)`` packs two bits each, the first
    step in the high bits.
    """
    if not path or not set(map(type, path)) <= _SEQUENCES:
        return None
    try:
        xs, ys = zip(*path, strict=True)
        if not set(map(type, xs)) <= {int} >= set(map(type, ys)):
            return None
        n = len(xs) - 1
        dx = bytes(map(add, map(sub, xs[1:], xs), repeat(1, n))).translate(_DX_BITS)
        dy = bytes(map(add, map(sub, ys[1:], ys), repeat(1, n))).translate(_DY_BITS)
    except ValueError:  # points that are not pairs, moves outside 0..255 once shifted
        return None
    digits = (int.from_bytes(dx) | int.from_bytes(dy)).to_bytes(n).translate(_DIGITS)
    x, y = xs[0], ys[0]
    # unit steps stay within n of the first point: one within 2**62 keeps them all in 64 bits
    if b"x" in digits or not (-_NEAR <= x <= _NEAR and -_NEAR <= y <= _NEAR) or n > _NEAR:
        return None
    out = bytearray([_STEPS])
    _varint(x, out)
    _varint(y, out)
    _varint(n, out)
    if n:
        digits += b"0" * (-n % 4)
        out += int(digits, 4).to_bytes(len(digits) // 4)
    return bytes(out)


def pack_points(path: Any) -> bytes:
    """The compact form of a path of ``[x, y]`` integer points: the first point and the
    count as varints, then two bits per unit step; other paths as 64-bit pairs. A
    :class:`CellPath` is stored as the list of its points."""
    if type(path) is CellPath:
        path = path.points()
    if not isinstance(path, list | tuple):
        raise ValueError(f"expected a list of [x, y] points, got {type(path).__name__}")
    _check_points(len(path))
    packed = _pack_steps(path)
    if packed is not None:
        return packed
    flat = _flat_points(path)
    if flat:
        xs = flat[0::2]
        ys = flat[1::2]
        codes = list(
            map(_STEP_CODE.get, zip(map(sub, xs[1:], xs), map(sub, ys[1:], ys), strict=True))
        )
        if None not in codes:
            out = bytearray([_STEPS])
            _varint(xs[0], out)
            _varint(ys[0], out)
            _varint(len(codes), out)
            codes += [0] * (-len(codes) % 4)
            quads = iter(typing.cast(list[int], codes))  # no None in it
            out += bytes(map(_QUAD.__getitem__, zip(quads, quads, quads, quads, strict=True)))
            return bytes(out)
    return bytes([_PAIRS]) + struct.pack(f"<{len(flat)}q", *flat)


def unpack_points(blob: bytes | bytearray | memoryview) -> list[list[int]]:
    """The path :func:`pack_points` packed, as a list of ``[x, y]`` lists of ``int``."""
    data = bytes(blob) if not isinstance(blob, bytes) else blob
    if not data:
        raise ValueError("an empty blob is not a packed path")
    if data[0] == _STEPS:
        x, at = _read_varint(data, 1)
        y, at = _read_varint(data, at)
        count, at = _read_varint(data, at)
        _check_points(count + 1)
        if count < 0 or len(data) - at != (count + 3) // 4:
            raise ValueError(
                f"packed path of {count} steps needs {(count + 3) // 4} bytes, got {len(data) - at}"
            )
        path = [[x, y]]
        append = path.append
        left = count
        for byte in data[at:]:
            for dx, dy in _BYTE_STEPS[byte][:left]:
                x += dx
                y += dy
                append([x, y])
            left -= 4
        return path
    if data[0] == _PAIRS:
        if (len(data) - 1) % 16:
            raise ValueError(
                f"packed path of pairs has {len(data) - 1} bytes, not a multiple of 16"
            )
        _check_points((len(data) - 1) // 16)
        flat = struct.unpack(f"<{(len(data) - 1) // 8}q", data[1:])
        return [[flat[i], flat[i + 1]] for i in range(0, len(flat), 2)]
    raise ValueError(f"not a packed path (unknown form {data[0]})")


#: Each byte's four step codes (first step in the high bits), and each code's move.
_CODES = np.array([[(b >> shift) & 3 for shift in (6, 4, 2, 0)] for b in range(256)], dtype=np.intp)
_DX = np.array([dx for dx, _ in _STEP_DELTA] + [0], dtype=np.int64)
_DY = np.array([dy for _, dy in _STEP_DELTA] + [0], dtype=np.int64)
#: Fewer paths than this are read one by one (numpy's fixed cost outweighs its speed).
_MANY = 8


def unpack_points_many(blobs: Sequence[bytes | bytearray | memoryview]) -> list[list[list[int]]]:
    """``[unpack_points(b) for b in blobs]``, equal values and types, at numpy speed.

    A catalog query reads corridors by the hundred, ten cells each: decoded one by one,
    each path pays Python's per-step loop. Here the usual form (tag, then the first cell
    and the count in one varint byte each) of all paths is decoded at once: the step
    codes looked up per byte, the padding dropped, the moves summed per path, and the
    cells made lists in one ``tolist``. Any blob of another form, or damaged, sends the
    whole column through :func:`unpack_points`, which reads or names it.
    """
    data = blobs if type(blobs) is list else list(blobs)
    if len(data) < _MANY or not all(type(b) is bytes for b in data):
        return list(map(unpack_points, data))
    lengths = np.fromiter(map(len, data), np.int64, len(data))
    if int(lengths.min()) < 4:
        return list(map(unpack_points, data))
    # the heads are checked before the bodies are joined: a blob of another form (a long
    # path of pairs, say) must not be copied at all before it is read or refused alone
    head = np.frombuffer(b"".join([b[:4] for b in data]), np.uint8).reshape(-1, 4)
    zigzag = head[:, 1:].astype(np.int64)
    values = (zigzag >> 1) ^ -(zigzag & 1)
    x0, y0, count = values[:, 0], values[:, 1], values[:, 2]
    nbytes = lengths - 4
    if (
        (head[:, 0] != _STEPS).any()
        or (head[:, 1:] >= 0x80).any()
        or (count < 0).any()
        or ((count + 3) // 4 != nbytes).any()
    ):
        return list(map(unpack_points, data))
    joined = np.frombuffer(b"".join(data), np.uint8)
    ends = np.cumsum(lengths)
    heads = (ends - lengths)[:, None] + np.arange(4)
    body = np.ones(joined.size, dtype=bool)
    body[heads] = False
    codes = _CODES[joined[body]].reshape(-1)
    slots = 4 * nbytes  # each path's codes, its padding included
    slot_start = np.cumsum(slots) - slots
    codes = codes[np.arange(codes.size) - np.repeat(slot_start, slots) < np.repeat(count, slots)]
    points = count + 1
    ends = np.cumsum(points)
    first = ends - points
    # a "no move" code (4) before each path's steps stands for its first cell
    moves = np.insert(codes, first - np.arange(first.size), 4)
    summed = np.empty((moves.size, 2), dtype=np.int64)
    np.cumsum(_DX[moves], out=summed[:, 0])  # moves alone (small sums), then each path's
    np.cumsum(_DY[moves], out=summed[:, 1])  # first cell
    summed -= np.repeat(summed[first] - np.stack((x0, y0), axis=1), points, axis=0)
    cells = summed.tolist()
    bounds = ends.tolist()
    return [cells[a:b] for a, b in zip(first.tolist(), bounds, strict=True)]


def pack_points_many(paths: Sequence[Any]) -> list[bytes]:
    """``[pack_points(p) for p in paths]``, equal bytes, at numpy speed.

    A worker encoding its maps packs their corridors by the hundred, ten cells each: one by
    one, each path pays Python's per-step work. Here the usual paths (lists of two plain
    ints, unit steps, coordinates within 2**62) are packed at once: the steps of all paths
    coded from one array of their cells, padded per path to whole bytes, four codes a byte,
    and each path's header (three one-byte varints when small) put before its bytes. A
    column of :class:`CellPath` gives that array from its positions, with no pair per cell.
    Any other column goes through :func:`pack_points` path by path, which packs or refuses
    it.
    """
    data = paths if type(paths) is list else list(paths)
    if len(data) < _MANY:
        return list(map(pack_points, data))
    kinds = set(map(type, data))
    if kinds == {CellPath}:
        packed = _pack_cell_paths(data)
    elif kinds <= _SEQUENCES:
        packed = _pack_point_lists(data)
    else:
        packed = None
    return list(map(pack_points, data)) if packed is None else packed


def _pack_point_lists(data: list[Any]) -> list[bytes] | None:
    """:func:`pack_points_many` of lists of ``[x, y]`` pairs, or None to go one by one."""
    lengths = list(map(len, data))
    if min(lengths) < 1 or max(lengths) > MAX_PATH_POINTS:
        return None
    points = list(chain.from_iterable(data))
    if not set(map(type, points)) <= _SEQUENCES or set(map(len, points)) != {2}:
        return None
    flat = list(chain.from_iterable(points))
    if countOf(map(type, flat), int) != len(flat):
        return None
    try:
        cells = np.fromiter(flat, np.int64, len(flat))
    except OverflowError:  # beyond 64 bits: stored as pairs or refused, one by one
        return None
    return _pack_cells(cells[0::2], cells[1::2], lengths)


def _pack_cell_paths(data: list[CellPath]) -> list[bytes] | None:
    """:func:`pack_points_many` of :class:`CellPath` values, or None to go one by one."""
    lengths = [len(p.positions) for p in data]
    if min(lengths) < 1 or max(lengths) > MAX_PATH_POINTS:
        return None
    flat = list(chain.from_iterable([p.positions for p in data]))
    if countOf(map(type, flat), int) != len(flat):
        return None
    try:
        positions = np.fromiter(flat, np.int64, len(flat))
    except OverflowError:
        return None
    widths = np.repeat(np.fromiter([p.width for p in data], np.int64, len(data)), lengths)
    ys, xs = np.divmod(positions, widths)  # floor division, as Python's divmod
    return _pack_cells(xs, ys, lengths)


def _pack_cells(xs: np.ndarray, ys: np.ndarray, lengths: list[int]) -> list[bytes] | None:
    """The packed paths of the points ``(xs[i], ys[i])`` (every path's points, one path
    after the other, ``lengths`` points each, none empty), or None when one is not all unit
    steps or its numbers need the long form."""
    if min(int(xs.min()), int(ys.min())) < -_NEAR or max(int(xs.max()), int(ys.max())) > _NEAR:
        return None
    paths = len(lengths)
    count = np.fromiter(lengths, np.int64, paths)
    ends = np.cumsum(count)
    firsts = ends - count
    steps = count - 1
    # each move (dx, dy), clipped to -2..2, -> 0 east, 1 south, 2 west, 3 north, or 255
    move = np.clip(xs[1:] - xs[:-1], -2, 2) * 5 + np.clip(ys[1:] - ys[:-1], -2, 2) + 12
    code = _MOVE_CODES[move]
    keep = np.ones(code.size, dtype=bool)
    keep[ends[:-1] - 1] = False  # from one path's last cell to the next path's first
    code = code[keep]
    if (code == 255).any():  # a path that is not all unit steps: stored as pairs
        return None
    nbytes = (steps + 3) // 4
    padded = np.zeros(4 * int(nbytes.sum()), dtype=np.uint8)
    slot = np.cumsum(4 * nbytes) - 4 * nbytes  # each path's first code slot
    step_start = np.cumsum(steps) - steps
    padded[np.arange(code.size) - np.repeat(step_start - slot, steps)] = code
    body = (padded.reshape(-1, 4) << _SHIFTS).sum(axis=1, dtype=np.uint8)
    heads = np.column_stack((xs[firsts], ys[firsts], steps))
    zigzag = (heads << 1) ^ (heads >> 63)
    if int(zigzag.max()) >= 1 << 21:  # a varint of four bytes or more: Python's own
        return None
    # each varint as three 7-bit groups, the continuation bit on all but its last; the
    # header is the tag and the groups a value uses (one to three)
    groups = np.stack(
        (
            (zigzag & 0x7F) | ((zigzag >= 0x80) << 7),
            ((zigzag >> 7) & 0x7F) | ((zigzag >= 0x4000) << 7),
            zigzag >> 14,
        ),
        axis=2,
    ).reshape(paths, 9)
    used = np.stack(
        (np.ones_like(zigzag, dtype=bool), zigzag >= 0x80, zigzag >= 0x4000), axis=2
    ).reshape(paths, 9)
    slots = np.column_stack((np.full(paths, _STEPS), groups)).astype(np.uint8)
    mask = np.column_stack((np.ones(paths, dtype=bool), used))
    head = slots[mask]
    # every path's header then its steps, in one buffer cut once per path
    head_sizes = mask.sum(axis=1)
    sizes = head_sizes + nbytes
    bounds = np.cumsum(sizes)
    starts = bounds - sizes
    out = np.empty(int(bounds[-1]), dtype=np.uint8)
    out[
        np.arange(head.size) + np.repeat(starts - (np.cumsum(head_sizes) - head_sizes), head_sizes)
    ] = head
    out[np.arange(body.size) + np.repeat(starts + head_sizes - (slot >> 2), nbytes)] = body
    blob = out.tobytes()
    ends_ = bounds.tolist()
    return [blob[a:b] for a, b in zip([0, *ends_[:-1]], ends_, strict=True)]


#: A move's ``(dx + 2) * 5 + (dy + 2)`` (each clipped to -2..2) -> its step code, 255 when
#: it is not a unit step.
_MOVE_CODES = np.full(25, 255, dtype=np.uint8)
for _code, (_dx, _dy) in enumerate(_STEP_DELTA):
    _MOVE_CODES[(_dx + 2) * 5 + _dy + 2] = _code
_SHIFTS = np.array([6, 4, 2, 0], dtype=np.uint8)


# -- the text form of a path (XML and Arrow) -------------------------------------------------


def points_to_json(path: Any) -> str:
    # the same rule as the database form: integer [x, y] pairs
    return json_text(_points(path))


def points_from_json(text: str) -> list[list[int]]:
    return _points(json.loads(text))

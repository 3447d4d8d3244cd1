"""Hostile arguments for the C engines' entry points (shared by their fuzz tests).

Whatever a caller hands a C entry point, the process must survive it: an argument of the
wrong kind or out of range is refused with ``ValueError`` or ``TypeError`` (``MemoryError``
is allowed for a size the machine cannot hold, ``OverflowError`` never happens: ranges are
checked), and an accepted call reads and writes only inside its buffers. These strategies
draw the arguments: arrays of every dtype, 0 to 3 dimensions (sides of 0 included), laid out
row after row or not (steps, transposes, offsets into a bigger array), writable or read-only,
and objects that are no array at all; integers from the expected range to far beyond 64 bits.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st

#: What an accepted call may raise instead of answering.
REFUSALS = (ValueError, TypeError, MemoryError)

DTYPES = [np.uint8, np.bool_, np.int8, np.uint16, np.int32, np.int64, np.uint64, np.float32,
          np.float64, np.complex64]  # fmt: skip

NOT_ARRAYS = [None, 0, 1.5, "abc", b"\x00\x01\x00\x01", bytearray(b"\x00\x01"), [[0, 1], [1, 0]],
              object(), memoryview(b"\x00" * 6).cast("B", (2, 3))]  # fmt: skip


def _layout(data: st.DataObject, array: np.ndarray) -> np.ndarray:
    """The same values in another layout: a view with steps, transposed, offset into a
    bigger array, or as it is; read-only sometimes."""
    kind = data.draw(st.sampled_from(["plain", "step", "transpose", "offset", "fortran"]))
    if kind == "step" and array.ndim >= 1:
        bigger = np.repeat(array, 2, axis=array.ndim - 1)
        array = bigger[..., ::2]
    elif kind == "transpose" and array.ndim >= 2:
        array = np.ascontiguousarray(np.swapaxes(array, 0, 1)).swapaxes(0, 1)
    elif kind == "offset" and array.ndim >= 1:
        # a contiguous block of rows inside a bigger array: still C-contiguous
        bigger = np.concatenate([array[:1], array, array[:1]]) if len(array) else array
        array = bigger[1:-1] if len(array) else bigger
    elif kind == "fortran":
        array = np.asfortranarray(array)
    if data.draw(st.booleans()):
        array = array.view()
        array.setflags(write=False)
    return array


def arrays(
    data: st.DataObject,
    *,
    max_side: int = 12,
    values: tuple[int, ...] = (0, 1),
    fits: tuple[int, tuple[type, ...], bool] | None = None,
    min_side: int = 1,
) -> Any:
    """An array of any dtype, 0 to 3 dimensions, any layout; or, rarely, no array at all.

    ``fits = (ndim, dtypes, writable)`` describes what the entry point accepts: four draws
    in five then give such an array (sides from ``min_side``, C-contiguous, perhaps a block
    of rows inside a bigger array, read-only sometimes when ``writable`` is False), so that
    the calls that run are many too."""
    if fits is not None and data.draw(st.integers(0, 4)) > 0:
        ndim, kinds, writable = fits
        shape = tuple(data.draw(st.integers(min_side, max_side)) for _ in range(ndim))
        picks = data.draw(st.lists(st.sampled_from(values), min_size=1, max_size=40))
        flat = np.resize(np.array(picks), int(np.prod(shape, dtype=np.int64)))
        array = flat.reshape(shape).astype(data.draw(st.sampled_from(kinds)))
        if ndim >= 1 and data.draw(st.booleans()):
            bigger = np.concatenate([array[:1], array, array[:1]])
            array = bigger[1:-1]  # rows inside a bigger array: still C-contiguous
        if not writable and data.draw(st.booleans()):
            array.setflags(write=False)
        return array
    if data.draw(st.integers(0, 9)) == 0:
        return data.draw(st.sampled_from(NOT_ARRAYS))
    ndim = data.draw(st.sampled_from([2, 2, 2, 2, 0, 1, 3]))
    shape = tuple(data.draw(st.integers(0, max_side)) for _ in range(ndim))
    dtype = data.draw(st.sampled_from(DTYPES))
    picks = data.draw(st.lists(st.sampled_from(values), min_size=1, max_size=40))
    flat = np.resize(np.array(picks), int(np.prod(shape, dtype=np.int64)))
    array = flat.reshape(shape).astype(dtype)
    return _layout(data, array)


def ints(low: int, high: int) -> st.SearchStrategy[Any]:
    """Integers mostly in ``[low, high]`` (six draws in seven), else just outside or far
    beyond 64 bits, or bools, floats, None and NumPy integers."""
    beyond = st.one_of(
        st.integers(low - 3, high + 3),
        st.integers(-(2**70), 2**70),
        st.sampled_from(
            [2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 2**64, True, False, 1.0, None, np.int64(1)]
        ),  # fmt: skip
    )
    return likely(st.integers(low, high), beyond)


def likely(usual: st.SearchStrategy[Any], rare: st.SearchStrategy[Any],
           odds: int = 6) -> st.SearchStrategy[Any]:  # fmt: skip
    """``usual`` ``odds`` times in ``odds + 1``, else ``rare`` (``st.one_of`` would draw
    each about as often, whatever the list repeats)."""
    return st.integers(0, odds).flatmap(lambda pick: usual if pick else rare)


def is_layout(array: Any, ndim: int, kinds: tuple[type, ...], writable: bool) -> bool:
    """True when ``array`` is what a C entry point accepts for one argument: a NumPy array
    of ``ndim`` dimensions, one of the dtypes ``kinds``, C-contiguous, writable if asked
    (or a memoryview of the same: any object with the buffer protocol will do)."""
    if isinstance(array, memoryview):
        array = np.asarray(array)
    return (
        isinstance(array, np.ndarray)
        and array.ndim == ndim
        and any(array.dtype == kind for kind in kinds)
        and array.flags.c_contiguous
        and (array.flags.writeable or not writable)
    )

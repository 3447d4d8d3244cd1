"""NumPy array fields: stored as ``.npy`` bytes (dtype, shape and order kept, never pickle).

Separate because NumPy is imported only when an array is met: the default registry is built
without it, so ``import entityworks`` stays light. :func:`register` adds the factory.
"""

from __future__ import annotations

import io
import math
from typing import Any, get_origin

from .registry import TypeInfo, TypeRegistry
from .scalars import refused


def _is_ndarray(tp: Any) -> bool:
    try:
        import numpy as np
    except ImportError:  # pragma: no cover - numpy is a dependency
        return False
    return tp is np.ndarray or get_origin(tp) is np.ndarray


def check_ndarray(array: Any) -> Any:
    """The value rule of array fields: a plain ndarray holding no Python objects."""
    import numpy as np

    if type(array) is not np.ndarray:
        # a subclass (masked array, matrix) would come back a plain ndarray, its extras lost
        raise refused("a numpy.ndarray", array)
    if array.dtype.hasobject:
        raise ValueError("arrays of Python objects are not stored (they would need pickle)")
    return array


def ndarray_to_bytes(array: Any) -> bytes:
    """Encode an array as ``.npy`` bytes (dtype, shape and order kept, pickling refused)."""
    import numpy as np

    check_ndarray(array)
    if not (array.flags.c_contiguous or array.flags.f_contiguous):
        array = np.ascontiguousarray(array)  # (ascontiguousarray would make 0-d arrays 1-d)
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def ndarray_from_bytes(blob: bytes) -> Any:
    """Decode ``.npy`` bytes. The header's shape and dtype must account for exactly the bytes
    that follow it: a damaged or crafted header claiming a huge shape is refused before any
    memory is allocated for it (NumPy would allocate the whole array first)."""
    import numpy as np

    data = bytes(blob)
    stream = io.BytesIO(data)
    version = np.lib.format.read_magic(stream)
    readers = {
        (1, 0): np.lib.format.read_array_header_1_0,
        (2, 0): np.lib.format.read_array_header_2_0,
    }
    if version in readers:
        shape, _fortran, dtype = readers[version](stream)
        if dtype.hasobject:
            raise ValueError(".npy data holds Python objects (pickle is never read)")
        claimed = math.prod(shape) * dtype.itemsize
        present = len(data) - stream.tell()
        if claimed != present:
            raise ValueError(
                f".npy header claims shape {shape} of {dtype} ({claimed:,} bytes) "
                f"but {present:,} bytes follow it: damaged data"
            )
        stream.seek(0)
    return np.lib.format.read_array(stream, allow_pickle=False)


def _ndarray_info(tp: Any, registry: TypeRegistry) -> TypeInfo:
    return TypeInfo(
        "ndarray",
        tp,
        **registry.codecs("npy", to_bytes=ndarray_to_bytes, from_bytes=ndarray_from_bytes),
        check=check_ndarray,
        checked_codecs=True,
    )


def register(registry: TypeRegistry) -> None:
    """Add the factory of ``numpy.ndarray`` fields to ``registry``."""
    registry.register_factory(_is_ndarray, _ndarray_info)

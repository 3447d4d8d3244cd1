"""One decorator for the compiled hot loops: numba ``njit`` with its on-disk cache.

A compiled function is cached the first time it runs, so later processes load machine code
instead of compiling (seconds) again. Numba looks for a writable place in this order: the
``NUMBA_CACHE_DIR`` a user set (never overridden here), the ``__pycache__`` folder beside
the source, then the per-user cache folder (``~/.cache/numba`` on Linux, the platform's
equivalent elsewhere), which covers installs into a read-only ``site-packages``. Only when
none of these is writable does a function go uncached; it still works, compiled once per
process. ``python -m generators.warmup`` compiles everything ahead of the first real call.

:func:`array_data` serves the C entry points that :mod:`generators._native` loads without
numba: they take NumPy arrays as object addresses.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import Any, TypeVar, cast

import numba
from llvmlite import ir
from numba.core import types
from numba.extending import intrinsic

F = TypeVar("F", bound=Callable[..., Any])

#: Where a NumPy array object keeps its data pointer: right after the object header
#: (``PyArrayObject_fields.data``, the field NumPy's own ``PyArray_DATA`` reads).
_DATA_OFFSET = object.__basicsize__


def jit(function: F) -> F:
    """``numba.njit(cache=True)``, falling back to no cache when no folder is writable."""
    try:
        return cast(F, numba.njit(cache=True, nogil=True)(function))
    except RuntimeError:  # numba: "cannot cache function ...: no locator available"
        return cast(F, numba.njit(nogil=True)(function))


def _array_data(typingctx: Any, address: Any) -> Any:
    """``array_data(address)`` in compiled code: the data pointer (``void*``, for
    ``carray(pointer, shape, dtype)``) of the NumPy array whose object is at ``address``
    (its ``id``), for C entry points that take arrays as object addresses.

    ctypes needs about a microsecond to turn an array into a pointer; reading the pointer
    here costs nothing. The caller must keep the array alive and C-contiguous.
    """

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        slot = builder.add(args[0], ir.Constant(ir.IntType(64), _DATA_OFFSET))
        return builder.load(builder.inttoptr(slot, ir.IntType(8).as_pointer().as_pointer()))

    return types.voidptr(types.int64), codegen


array_data: Any = intrinsic(_array_data)


def py_object(address: int) -> Any:
    """The object whose ``id`` is ``address`` (the caller keeps it alive): how the Python
    twins of the C entry points read the arrays an argument block names."""
    return ctypes.cast(address, ctypes.py_object).value

"""One decorator for the compiled hot loops: numba ``njit`` with an on-disk cache that only
this user can have written.

A compiled function is cached the first time it runs, so later processes load machine code
instead of compiling (seconds) again. numba's cache files are pickles (its index files are
unpickled before anything else is checked), so reading one is running code: numba's own
choice of folder (``NUMBA_CACHE_DIR``, ``__pycache__`` beside the source, the per-user
cache) is therefore never used here. :func:`jit` and :func:`cfunc` give each function
numba's own cache (``FunctionCache``) with one locator, which keeps it under ``numba/`` in
the private folder of :mod:`generators._compiled.private` (``NUMBA_CACHE_DIR/generators-native``,
``generators/__pycache__/native`` or ``~/.cache/generators/native``, whichever is first to
pass the ownership and permission checks, never a folder another user can write), whatever
``NUMBA_CACHE_LOCATOR_CLASSES`` says. When there is no such folder, or this numba lays its
cache out differently, a function goes uncached: it still works, compiled once per
process. ``python -m generators.warmup`` compiles everything ahead of the first real call.

:func:`array_data` serves the C entry points that :mod:`generators._compiled.native` loads without
numba: they take NumPy arrays as object addresses.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import Any, TypeVar, cast

import numba
from llvmlite import ir
from numba.core import types
from numba.core.dispatcher import Dispatcher
from numba.extending import intrinsic

from generators._compiled import numba_compat, private

F = TypeVar("F", bound=Callable[..., Any])

#: Where a NumPy array object keeps its data pointer: right after the object header
#: (``PyArrayObject_fields.data``, the field NumPy's own ``PyArray_DATA`` reads).
_DATA_OFFSET = object.__basicsize__


def jit(function: F) -> F:
    """``numba.njit(nogil=True)`` with numba's disk cache kept in the private folder (none
    when there is no such folder)."""
    compiled = numba.njit(nogil=True)(function)
    if isinstance(compiled, Dispatcher):  # under NUMBA_DISABLE_JIT: the function itself
        cache = _private_cache(function)
        if cache is not None:
            numba_compat.use_cache(compiled, cache)
    return cast(F, compiled)


def cfunc(signature: Any, function: Callable[..., Any], cache: bool) -> Any:
    """``numba.cfunc(signature)(function)``, compiled now, with numba's disk cache kept in
    the private folder when ``cache`` (and there is such a folder)."""
    return numba_compat.compiled_cfunc(
        signature, function, _private_cache(function) if cache else None
    )


def _private_cache(function: Callable[..., Any]) -> Any:
    """numba's cache for ``function`` under ``numba/`` in the private folder, or None
    (compile uncached)."""
    place = private.folder()
    if place is None:
        return None
    try:
        return numba_compat.function_cache(function, str(place.path / "numba"))
    except Exception:  # noqa: BLE001 - another numba's cache layout
        return None


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

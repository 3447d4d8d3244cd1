"""Everything :mod:`generators._compiled` needs from numba that numba has no public API for,
in one place: the rest of the package imports these functions and never reads a numba name
that starts with an underscore.

* :func:`function_cache`, :func:`use_cache`, :func:`compiled_cfunc`: numba's own disk cache
  (``FunctionCache``) of one function, with a locator of ours that keeps its files in the
  private folder (numba's locators read any folder, and ``NUMBA_CACHE_LOCATOR_CLASSES``
  could add more); numba offers ``cache=True`` only with its own locators.
* :func:`object_code`: the machine code of a compiled ``cfunc`` as an object file (numba
  keeps it in its code library, and has no call that returns it).
* :func:`register_helpers`: the addresses of numba's C helpers for LLVM, from numba's
  extension modules loaded on their own, without importing numba (what numba's CPU target
  does when it starts).

Each is tested on the numba installed (``tests/generators/compiled/test_numba_compat.py``;
``.ci/run`` runs the suite on the lowest supported numba too). This module imports numba
on the first :func:`function_cache` or :func:`compiled_cfunc`: :mod:`.native` loads kept
machine code without numba.
"""

from __future__ import annotations

import builtins
import functools
import hashlib
import importlib.machinery
import importlib.util
import inspect
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: numba's extension modules holding the C helpers that compiled code calls (errors,
#: reference counts, memory), each as its module name and its file's path in the numba
#: package without the extension suffix.
HELPER_EXTENSIONS = (
    ("numba._helperlib", ("_helperlib",)),
    ("numba._dynfunc", ("_dynfunc",)),
    ("numba.core.runtime._nrt_python", ("core", "runtime", "_nrt_python")),
)


def function_cache(function: Callable[..., Any], root: str) -> Any:
    """numba's per-function disk cache (a ``FunctionCache``) for ``function``, keeping its
    files under ``root`` (one sub-folder per source folder, named as numba names it) and
    nowhere else. Raises when this numba lays its cache out differently."""
    make: Any = _cache_class(root)
    return make(function)


def is_function_cache(cache: Any) -> bool:
    """True when ``cache`` was made by :func:`function_cache` (under any root)."""
    return isinstance(cache, _classes()[1])


@functools.cache
def _classes() -> tuple[type, type]:
    """numba's cache implementation and per-function cache with our locator (made once, on
    first use: importing numba is left to the first compile)."""
    from numba.core import caching

    class PrivateLocator(caching._SourceFileBackedLocatorMixin, caching._CacheLocator):
        """numba's cache files of one source file, under ``root``."""

        def __init__(self, py_func: Callable[..., Any], source: str, root: str) -> None:
            self._py_file = source
            self._lineno = py_func.__code__.co_firstlineno
            folder = os.path.dirname(os.path.abspath(source))  # as numba names it, per folder
            digest = hashlib.sha1(folder.encode(), usedforsecurity=False).hexdigest()
            self._cache_path = os.path.join(root, f"{os.path.basename(folder)}_{digest}")

        def get_cache_path(self) -> str:
            return self._cache_path

    class PrivateImpl(caching.CompileResultCacheImpl):
        """numba's ``CacheImpl`` with :class:`PrivateLocator` as its only locator (numba's
        would also honour ``NUMBA_CACHE_LOCATOR_CLASSES``, and its defaults, which read any
        folder)."""

        root = ""  #: set by :func:`_cache_class`

        def __init__(self, py_func: Callable[..., Any]) -> None:
            source = inspect.getfile(py_func)
            self._lineno = py_func.__code__.co_firstlineno
            self._locator = PrivateLocator(py_func, source, self.root)
            self._locator.ensure_cache_path()
            module = os.path.splitext(os.path.basename(source))[0]
            name_base: Any = self.get_filename_base
            self._filename_base = name_base(f"{module}.{py_func.__qualname__}",
                                            getattr(sys, "abiflags", ""))  # fmt: skip

    class PrivateCache(caching.FunctionCache):
        """numba's per-function cache, kept where :class:`PrivateImpl` says."""

        _impl_class = PrivateImpl

    return PrivateImpl, PrivateCache


@functools.cache
def _cache_class(root: str) -> type:
    """The cache class keeping its files under ``root`` (one per root)."""
    impl, cache = _classes()
    rooted = type(impl.__name__, (impl,), {"root": root})
    return type(cache.__name__, (cache,), {"_impl_class": rooted})


def use_cache(compiled: Any, cache: Any) -> None:
    """Make the dispatcher or ``CFunc`` ``compiled`` keep its machine code in ``cache`` (what
    numba's ``enable_caching`` sets, with our cache instead of numba's)."""
    compiled._cache = cache


def compiled_cfunc(signature: Any, function: Callable[..., Any], cache: Any) -> Any:
    """``numba.cfunc(signature)(function)`` compiled now, with ``cache`` (from
    :func:`function_cache`, or None: uncached) as its disk cache: ``numba.cfunc`` compiles
    as it decorates, before a cache of ours could be set."""
    from numba.core import sigutils
    from numba.core.ccallback import CFunc

    normalize: Any = sigutils.normalize_signature
    compiled: Any = CFunc(function, normalize(signature), locals={}, options={})
    if cache is not None:
        use_cache(compiled, cache)
    compiled.compile()
    return compiled


def object_code(compiled: Any) -> bytes:
    """The machine code of the freshly compiled ``cfunc`` ``compiled`` as an object file,
    emitted from the optimised module its code library holds. Raises (AttributeError...)
    when there is none (a ``cfunc`` numba loaded from its own cache) or this numba keeps
    it elsewhere."""
    library = compiled._library
    code: bytes = library.codegen._tm.emit_object(library._final_module)
    return code


def register_helpers(ll: Any) -> None:
    """Give LLVM (``ll``: ``llvmlite.binding``) the addresses of numba's C helpers, as
    numba's CPU target does when it starts, without importing numba: its helper extensions
    are loaded on their own (the same module objects numba gets later, if it does); loading
    the runtime extension also sets up numba's memory system."""
    found = importlib.util.find_spec("numba")
    if found is None or found.origin is None:
        raise ImportError("numba is not installed")
    root = Path(found.origin).parent
    helperlib, dynfunc, runtime = (
        _extension(name, root.joinpath(*parts)) for name, parts in HELPER_EXTENSIONS
    )
    ll.add_symbol("_Py_NoneStruct", id(None))
    for module in (helperlib, dynfunc):
        for name, address in module.c_helpers.items():
            ll.add_symbol("numba_" + name, address)
    for value in vars(builtins).values():
        if isinstance(value, type) and issubclass(value, BaseException):
            ll.add_symbol("PyExc_" + value.__name__, id(value))
    for name, address in runtime.c_helpers.items():
        ll.add_symbol(name if name.startswith("_") else "NRT_" + name, address)


def _extension(name: str, stem: Path) -> Any:
    """The extension module ``name`` from the file ``stem`` + this Python's suffix, loaded
    without importing its package (the same module object numba gets later, if it does)."""
    if name in sys.modules:
        return sys.modules[name]
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        path = stem.with_name(stem.name + suffix)
        if path.is_file():
            loader = importlib.machinery.ExtensionFileLoader(name, str(path))
            spec = importlib.util.spec_from_loader(name, loader, origin=str(path))
            if spec is None:
                break
            module = importlib.util.module_from_spec(spec)
            loader.exec_module(module)
            return module
    raise ImportError(f"no extension module {stem.name} in {stem.parent}")


__all__ = [
    "HELPER_EXTENSIONS",
    "compiled_cfunc",
    "function_cache",
    "is_function_cache",
    "object_code",
    "register_helpers",
    "use_cache",
]

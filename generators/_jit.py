"""One decorator for the compiled hot loops: numba ``njit`` with its on-disk cache.

A compiled function is cached the first time it runs, so later processes load machine code
instead of compiling (seconds) again. Numba looks for a writable place in this order: the
``NUMBA_CACHE_DIR`` a user set (never overridden here), the ``__pycache__`` folder beside
the source, then the per-user cache folder (``~/.cache/numba`` on Linux, the platform's
equivalent elsewhere), which covers installs into a read-only ``site-packages``. Only when
none of these is writable does a function go uncached; it still works, compiled once per
process. ``python -m generators.warmup`` compiles everything ahead of the first real call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

import numba

F = TypeVar("F", bound=Callable[..., Any])


def jit(function: F) -> F:
    """``numba.njit(cache=True)``, falling back to no cache when no folder is writable."""
    try:
        return cast(F, numba.njit(cache=True, nogil=True)(function))
    except RuntimeError:  # numba: "cannot cache function ...: no locator available"
        return cast(F, numba.njit(nogil=True)(function))

"""Pausing the cyclic garbage collector while a bulk call builds many objects.

Building 200,000 dataclass instances triggers dozens of collections, each walking every
young object, and full collections that walk the whole heap: that costs more than building
the objects. The objects these calls create hold plain values and cannot form cycles, so
those collections would find nothing; reference counting still frees everything as usual.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    """Disable the cyclic collector for the duration of the block (re-entrant)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()

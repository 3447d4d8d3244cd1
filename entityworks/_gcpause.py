"""Pausing the cyclic garbage collector while a bulk call builds many objects.

Building 200,000 dataclass instances triggers dozens of collections, each walking every
young object, and full collections that walk the whole heap: that costs more than building
the objects. The objects these calls create hold plain values and cannot form cycles, so
those collections would find nothing; reference counting still frees everything as usual.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
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


#: How many :func:`frozen_heap` blocks are open (only the outermost unfreezes).
_frozen = 0


@contextmanager
def frozen_heap() -> Iterator[Callable[[], None]]:
    """Keep what the process holds out of the collector's sight for the block
    (``gc.freeze``): a long run that makes objects by the million (a catalog's generation,
    its rows) would otherwise walk all of it again at each full collection, and workers
    forked meanwhile would copy it page by page doing so. Yields a function that freezes
    what was made since (a Store opened, a generator imported); an inner block does too.

    Nothing frozen is collected until the outermost block ends. A heap the process froze
    itself (a pre-forking server) is left as it is."""
    global _frozen
    if not _frozen and gc.get_freeze_count():
        yield lambda: None
        return
    gc.freeze()
    _frozen += 1
    try:
        yield gc.freeze
    finally:
        _frozen -= 1
        if not _frozen:
            gc.unfreeze()

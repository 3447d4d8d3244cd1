"""Reading a result a batch at a time, shared by the backends' reads."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any


def until_short(take: Callable[[], Sequence[Any]], size: int) -> Iterator[Sequence[Any]]:
    """Each batch ``take()`` gives until one holds fewer than ``size`` rows, which is the
    last (yielded unless empty): no empty fetch after it, which on a server is a round
    trip. No local holds a batch once handed out, so that the caller may free it while
    the next one is fetched."""
    while True:
        batch = take()
        if len(batch) < size:
            if batch:
                yield batch
            return
        yield batch
        del batch

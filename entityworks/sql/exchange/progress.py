"""Progress of the long exchanges (XML, Arrow): the hooks the command line's bars hang on.

The library stays silent; a caller that wants a bar passes a function and is told how many
more rows were read or written, or is handed each inserted batch (to count its child rows).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

#: Told how many more top-level rows were read or written.
Progress = Callable[[int], None]
#: Given each batch of instances once it is inserted (a progress bar, child-row counts).
BatchHook = Callable[[Sequence[Any]], None]


def counted(objs: Iterable[Any], progress: Progress, every: int = 1000) -> Iterator[Any]:
    """``objs`` as they are, telling ``progress`` every ``every`` items and at the end."""
    pending = 0
    for obj in objs:
        yield obj
        pending += 1
        if pending == every:
            progress(pending)
            pending = 0
    if pending:
        progress(pending)


def counted_batches(
    batches: Iterable[Sequence[Any]], progress: Progress
) -> Iterator[Sequence[Any]]:
    """``batches`` as they are, telling ``progress`` each one's length after it is used."""
    for batch in batches:
        yield batch
        progress(len(batch))


__all__ = ["BatchHook", "Progress", "counted", "counted_batches"]

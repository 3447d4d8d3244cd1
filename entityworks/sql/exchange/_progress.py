"""Progress of the long exchanges (XML, Arrow): the hooks the command line's bars hang on.

The library stays silent; a caller that wants a bar passes a function and is told how many
more rows were read or written, or is handed each inserted batch (to count its child rows).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

#: Told how many more top-level rows were read or written.
Progress = Callable[[int], None]
#: Given each batch of instances once it is inserted (a progress bar, child-row counts).
BatchHook = Callable[[Sequence[Any]], None]
#: Told, once each batch is inserted, its row count and its child rows per child table
#: (by table name): a progress bar's counts, no instance built for them.
RowsHook = Callable[[int, Mapping[str, int]], None]
_Children = Mapping[str, Sequence[Sequence[Any]]]


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


def counted_families(
    families: Iterable[tuple[Sequence[Any], _Children]], progress: Progress
) -> Iterator[tuple[Sequence[Any], _Children]]:
    """Batches of rows, each with its child rows (``Store.rows_with_children``), as they
    are, telling ``progress`` each batch's row count after it is used."""
    for rows, children in families:
        yield rows, children
        progress(len(rows))


__all__ = ["BatchHook", "Progress", "RowsHook", "counted", "counted_batches", "counted_families"]

"""The random-visit automaton behind the cave system (seed 002/004) and islands (seed 003).

Both originals fill the map at random (a cell is *set* with probability ``p`` %), then
visit random cells one at a time: a visited cell is set when more than ``threshold``
cells of its 3x3 block (itself included, cells off the map not counted) are set, and
cleared otherwise (the labyrinth variant swaps the two outcomes).

``faithful`` replays that loop literally, one visit after the other (in C, compiled when
the package is built: ``generators/_native/_cmaps.c``, so it costs about what the batches
cost). ``fast`` draws the very same visit sequence but applies it in NumPy batches, each
visit of a batch reading the map as it stood when the batch began. Visits of one batch
only interfere when they fall within one cell of each other, so with batches a small
fraction of the map (1/64 of the cells) the maps keep the faithful maps' statistics (open
ratio, number and size of caves), which the tests and benchmarks check.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from generators._native._cmaps import visits as _c_visits

#: Visits drawn from the generator per chunk (bounds memory for millions of visits).
_CHUNK = 1 << 20

#: Cells per fast batch = map area // _BATCH_DIVISOR.
_BATCH_DIVISOR = 64


def random_fill(width: int, height: int, percent: int, rng: np.random.Generator) -> np.ndarray:
    """``uint8`` map whose cells are 1 with probability ``percent`` % (draw 0..99 < percent)."""
    return (rng.integers(0, 100, size=(height, width)) < percent).astype(np.uint8)


def _visit_chunks(
    rng: np.random.Generator, width: int, height: int, visits: int
) -> Iterator[np.ndarray]:
    """Visit offsets from the first inner cell of the 1-cell padded map, chunk by chunk.

    Each visit is one uniform draw over the ``width * height`` cells (the original draws
    x, then y: the same distribution), mapped to the padded layout. The offsets come as
    ``intp``, the index type ``np.take`` uses, so no gather converts them again.
    """
    left = visits
    while left > 0:
        size = min(left, _CHUNK)
        cells = rng.integers(0, width * height, size=size, dtype=np.int32)
        offsets = np.floor_divide(cells, width, dtype=np.intp)  # the row: 2 pad cells each
        offsets *= 2
        offsets += cells
        yield offsets
        left -= size


def run_visits(
    grid: np.ndarray,
    visits: int,
    threshold: int,
    rng: np.random.Generator,
    fast: bool,
    invert: bool = False,
) -> np.ndarray:
    """Apply ``visits`` random visits to the 0/1 ``grid``; returns a new ``uint8`` array.

    A visited cell becomes 1 when its 3x3 count exceeds ``threshold`` (0 when ``invert``).
    """
    height, width = grid.shape
    stride = width + 2
    padded = np.pad(grid.astype(np.uint8), 1, mode="constant", constant_values=0)
    chunks = _visit_chunks(rng, width, height, visits)
    if fast:
        batch = max(1, grid.size // _BATCH_DIVISOR)
        _visits_batched(padded.ravel(), chunks, stride, threshold, invert, batch)
    else:
        for chunk in chunks:  # the compiled loop checks every offset before the first visit
            _c_visits(padded, chunk, threshold, invert)
    return padded[1:-1, 1:-1].copy()


def _visits_batched(
    padded: np.ndarray,
    chunks: Iterator[np.ndarray],
    stride: int,
    threshold: int,
    invert: bool,
    batch: int,
) -> None:
    # Gather through nine shifted views of the padded map, indexed by the visit's offset
    # from the first inner cell: no index arithmetic per neighbour.
    base = stride + 1
    views = [
        padded[base + dy * stride + dx : padded.size - base + dy * stride + dx]
        for dy in (-1, 0, 1)
        for dx in (-1, 0, 1)
    ]
    centre = views[4]
    decide = np.less_equal if invert else np.greater
    for offsets in chunks:
        for start in range(0, offsets.size, batch):
            idx = offsets[start : start + batch]
            count = np.take(views[0], idx)
            for view in views[1:]:
                count += np.take(view, idx)
            centre[idx] = decide(count, threshold).view(np.uint8)

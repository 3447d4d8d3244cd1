"""The map generators' C loops (``generators._native._cmaps``) handed anything at all: every
call is refused with a clear exception, having changed nothing, or computes exactly what the
plain Python loops of the tests compute."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from generators._native import _cmaps
from tests.generators import hostile
from tests.generators.maps.test_caves import _reference_smooth_fill
from tests.generators.maps.test_cellular import _reference_in_place


def _reference_visits(padded: np.ndarray, offsets: np.ndarray, threshold: int,
                      invert: bool) -> np.ndarray:  # fmt: skip
    """The visits one after the other on the padded map, as plain Python."""
    out = padded.astype(np.int64)
    stride = out.shape[1]
    flat = out.ravel()
    for offset in offsets.tolist():
        i = offset + stride + 1
        block = [flat[i + dy * stride + dx] for dy in (-1, 0, 1) for dx in (-1, 0, 1)]
        flat[i] = (sum(block) > threshold) != invert
    return out.astype(np.uint8)


@settings(max_examples=300)
@given(data=st.data())
def test_visits_refuse_what_they_cannot_read_and_apply_the_rest_exactly(
    data: st.DataObject,
) -> None:
    padded = hostile.arrays(data, values=(0, 1), fits=(2, (np.uint8,), True), min_side=3)
    offsets = hostile.arrays(data, values=(-1, 0, 1, 2, 7, 13, 30, 2**40),
                             fits=(1, (np.int64,), False))  # fmt: skip
    if data.draw(st.booleans()) and isinstance(padded, np.ndarray) and padded.ndim == 2:
        # offsets that fit, often: the visits then run
        last = max(0, (padded.shape[0] - 2) * padded.shape[1] - 3)
        picks = data.draw(st.lists(st.integers(0, last), max_size=30))
        offsets = np.array(picks, dtype=np.int64)
    threshold = data.draw(hostile.ints(0, 9))
    invert = data.draw(st.sampled_from([True, False] * 4 + [1, None]))
    before = padded.copy() if isinstance(padded, np.ndarray) else None
    try:
        _cmaps.visits(padded, offsets, threshold, invert)
    except hostile.REFUSALS as refusal:
        event(f"refused: {type(refusal).__name__}")
        if before is not None:
            assert np.array_equal(padded, before)
        return
    event("applied")
    assert hostile.is_layout(padded, 2, (np.uint8,), writable=True)
    assert hostile.is_layout(offsets, 1, (np.int64, np.intp), writable=False)
    assert padded.shape[0] >= 3 and padded.shape[1] >= 3
    assert type(threshold) is int and 0 <= threshold <= 9 and type(invert) is bool
    last = (padded.shape[0] - 2) * padded.shape[1] - 3
    assert offsets.size == 0 or (offsets.min() >= 0 and offsets.max() <= last)
    assert before is not None
    assert np.array_equal(padded, _reference_visits(before, offsets, threshold, invert))


@settings(max_examples=300)
@given(data=st.data())
def test_raster_pass_refuses_what_it_cannot_read_and_runs_the_rest_exactly(
    data: st.DataObject,
) -> None:
    cells = hostile.arrays(data, values=(0, 1), fits=(2, (np.uint8,), True))
    r2 = data.draw(st.sampled_from([True, False] * 4 + [1, None]))
    before = cells.copy() if isinstance(cells, np.ndarray) else None
    try:
        _cmaps.raster_pass(cells, r2)
    except hostile.REFUSALS as refusal:
        event(f"refused: {type(refusal).__name__}")
        if before is not None:
            assert np.array_equal(cells, before)
        return
    event("ran")
    assert hostile.is_layout(cells, 2, (np.uint8,), writable=True) and cells.size >= 1
    assert type(r2) is bool and before is not None
    assert np.array_equal(cells, _reference_in_place(before, r2))


@settings(max_examples=300)
@given(data=st.data())
def test_smooth_fill_refuses_what_it_cannot_read_and_runs_the_rest_exactly(
    data: st.DataObject,
) -> None:
    cells: Any = hostile.arrays(data, values=(0, 1, 1, 2) if data.draw(st.integers(0, 4)) == 0
                                else (0, 1), fits=(2, (np.uint8,), True), min_side=3)  # fmt: skip
    if (data.draw(st.integers(0, 5)) > 0 and isinstance(cells, np.ndarray) and cells.ndim == 2
            and cells.flags.writeable):  # fmt: skip
        cells[:1] = cells[-1:] = 0  # a zero border, often (when writable)
        cells[:, :1] = cells[:, -1:] = 0
    smoothing = data.draw(hostile.likely(
        st.integers(0, 4),
        st.one_of(st.integers(-3, -1), st.integers(2**31, 2**70), st.integers(-(2**70), -1),
                  st.sampled_from([True, None])),
        odds=3,
    ))  # fmt: skip
    empty = data.draw(hostile.ints(0, 5))
    filling = data.draw(hostile.ints(0, 5))
    before = cells.copy() if isinstance(cells, np.ndarray) else None
    try:
        _cmaps.smooth_fill(cells, smoothing, empty, filling)
    except hostile.REFUSALS as refusal:
        event(f"refused: {type(refusal).__name__}")
        if before is not None:
            assert np.array_equal(cells, before)
        return
    event("ran")
    assert hostile.is_layout(cells, 2, (np.uint8,), writable=True)
    assert cells.shape[0] >= 3 and cells.shape[1] >= 3 and before is not None
    assert before.max() <= 1
    assert not before[[0, -1]].any() and not before[:, [0, -1]].any()
    assert type(smoothing) is int and 0 <= smoothing
    assert 0 <= empty <= 5 and 0 <= filling <= 5
    # the padded copy is transposed: its rows are the map's columns
    inner = before[1:-1, 1:-1].T
    expected = np.zeros_like(before)
    expected[1:-1, 1:-1] = _reference_smooth_fill(inner, smoothing, empty, filling).T
    assert np.array_equal(cells, expected)


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (
            lambda: _cmaps.visits(np.zeros((4, 4), np.uint8), np.array([0, 5, 6]), 4, False),
            ValueError,
            r"offsets\[2\] = 6 is off the 2 x 2 map",
        ),
        (
            lambda: _cmaps.visits(np.zeros((4, 4), np.uint8), np.array([-1]), 4, False),
            ValueError,
            r"offsets\[0\] = -1",
        ),
        (
            lambda: _cmaps.visits(np.zeros((4, 4), np.uint8), np.array([0], np.int32), 4, False),
            ValueError,
            "offsets must hold int64",
        ),
        (
            lambda: _cmaps.visits(np.zeros((2, 4), np.uint8), np.array([0]), 4, False),
            ValueError,
            "padded has 2 cells along axis 0",
        ),
        (
            lambda: _cmaps.visits(np.zeros((4, 4), np.uint8), np.array([0]), 10, False),
            ValueError,
            "threshold must be from 0 to 9",
        ),
        (
            lambda: _cmaps.visits(np.zeros((4, 4), np.uint8), np.array([0]), 1, 0),
            TypeError,
            "invert must be a bool",
        ),
        (
            lambda: _cmaps.raster_pass(np.zeros((4, 4), np.uint8).T[:, ::2], False),
            ValueError,
            "C-contiguous",
        ),
        (
            lambda: _cmaps.raster_pass(np.zeros((4, 4), np.int64), False),
            ValueError,
            "cells must hold uint8",
        ),
        (
            lambda: _cmaps.smooth_fill(np.ones((4, 4), np.uint8), 1, 3, 4),
            ValueError,
            "border of zeros",
        ),
        (
            lambda: _cmaps.smooth_fill(np.pad(np.full((2, 2), 2, np.uint8), 1), 1, 3, 4),
            ValueError,
            r"only 0 \(rock\) and 1 \(cave\)",
        ),
        (
            lambda: _cmaps.smooth_fill(np.zeros((4, 4), np.uint8), -1, 3, 4),
            ValueError,
            "smoothing must be from 0",
        ),
        (
            lambda: _cmaps.smooth_fill(np.zeros((4, 4), np.uint8), 1, 6, 4),
            ValueError,
            "empty must be from 0 to 5",
        ),
    ],
)
def test_the_loops_name_what_they_refuse(call: Any, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        call()


def test_a_bad_offset_anywhere_stops_every_visit() -> None:
    """Every offset is checked before the first visit: a bad one late in the list leaves
    the map as it was."""
    padded = np.pad(np.ones((5, 5), np.uint8), 1)
    before = padded.copy()
    offsets = np.zeros(1000, dtype=np.int64)
    offsets[-1] = 10**6
    with pytest.raises(ValueError, match=r"offsets\[999\]"):
        _cmaps.visits(padded, offsets, 9, False)  # each visit would clear a cell
    assert np.array_equal(padded, before)


def test_no_visits_is_no_change() -> None:
    """An empty list of offsets (a side of zero: the sanitizer build once caught a division
    by that zero in the layout check) visits nothing."""
    padded = np.pad(np.ones((4, 4), np.uint8), 1)
    before = padded.copy()
    _cmaps.visits(padded, np.zeros(0, dtype=np.int64), 0, False)
    assert np.array_equal(padded, before)


@pytest.mark.parametrize("width", [63, 64, 65, 128, 130, 200])
def test_raster_pass_on_long_rows_equals_the_reference(width: int) -> None:
    """Rows of one, two and more 64-cell words and a tail (the 4-5 pass resolves its chain a
    word at a time): the plain Python pass, cell for cell, on maps of every wall density."""
    rng = np.random.default_rng(width)
    for density in (0.2, 0.45, 0.6):
        grid = (rng.random((7, width)) < density).astype(np.uint8)
        for r2 in (False, True):
            cells = grid.copy()
            _cmaps.raster_pass(cells, r2)
            assert np.array_equal(cells, _reference_in_place(grid, r2)), (density, r2)

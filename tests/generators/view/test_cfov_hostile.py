"""The C field of view (``generators._native._cfov``) handed anything at all: every call is
refused with a clear exception, having changed nothing, or answers exactly what the Python
reference computes, writing nowhere but its own view (a row of sentinels on each side of the
result would show a stray write; the sanitizer build shows stray reads)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from generators._native import _cfov
from tests.generators import hostile
from tests.generators.view import fov_reference


def _framed(data: st.DataObject, shape: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """A writable bool result of ``shape`` inside a bigger array with a sentinel row above
    and below (the result is still C-contiguous): ``(big, result)``."""
    big = np.zeros((shape[0] + 2, shape[1]), dtype=bool)
    return big, big[1:-1]


def _reference(cells: np.ndarray, ox: int, oy: int, radius: int | None, flags: int) -> np.ndarray:
    """The full-size reference view (a cell other than 0 is a wall, as the C view reads it)."""
    grid = (np.asarray(cells) != 0).astype(np.uint8)
    return fov_reference.visible(grid, (ox, oy), radius, bool(flags & 2), bool(flags & 4),
                                 bool(flags & 8))  # fmt: skip


def _window(width: int, height: int, ox: int, oy: int, radius: int) -> tuple[int, int, int, int]:
    if radius < 0 or radius > width + height:
        return 0, 0, width, height
    return (max(0, ox - radius), max(0, oy - radius), min(width, ox + radius + 1),
            min(height, oy + radius + 1))  # fmt: skip


@settings(max_examples=400)
@given(data=st.data())
def test_view_refuses_what_it_cannot_read_and_answers_the_rest_exactly(data: st.DataObject) -> None:
    # half the calls are friendly (every number in range), so that many views run
    friendly = data.draw(st.booleans())
    cells = hostile.arrays(data, values=(0, 1, 1, 2) if data.draw(st.integers(0, 3)) == 0
                           else (0, 1), fits=(2, (np.uint8, np.bool_), False))  # fmt: skip
    shape = getattr(cells, "shape", (3, 3))
    side_y, side_x = (shape + (3, 3))[:2] if len(shape) < 2 else shape[:2]
    if friendly:
        ox = data.draw(st.integers(0, max(0, side_x - 1)))
        oy = data.draw(st.integers(0, max(0, side_y - 1)))
        radius = data.draw(st.one_of(st.integers(-1, 14), st.integers(0, 2**70)))
        flags = data.draw(st.integers(0, 15))
    else:
        ox = data.draw(hostile.ints(-1, side_x))
        oy = data.draw(hostile.ints(-1, side_y))
        radius = data.draw(hostile.ints(-2, 14))
        flags = data.draw(hostile.ints(0, 15))
    whole = data.draw(st.booleans())
    big: np.ndarray | None = None
    out: Any
    out_x: Any = 0
    out_y: Any = 0
    if not friendly and data.draw(st.integers(0, 6)) == 0:
        out = hostile.arrays(data)
    elif whole or not all(type(v) is int for v in (ox, oy, radius)):
        big, out = _framed(data, (max(1, side_y), max(1, side_x)))
    else:
        x0, y0, x1, y1 = _window(side_x, side_y, ox, oy, radius)
        big, out = _framed(data, (max(1, y1 - y0), max(1, x1 - x0)))
        out_x, out_y = x0, y0
    if not friendly and data.draw(st.integers(0, 6)) == 0:
        out_x = data.draw(hostile.ints(-3, 20))
        out_y = data.draw(hostile.ints(-3, 20))
    before = None if big is None else big.copy()
    try:
        deepest = _cfov.view(cells, out, ox, oy, radius, flags, out_x, out_y)
    except hostile.REFUSALS as refusal:
        event(f"refused: {type(refusal).__name__}")
        if big is not None:
            assert np.array_equal(big, before), "a refused call changed the result"
        return
    # accepted: everything was what the C view promises to check
    event("answered")
    assert hostile.is_layout(cells, 2, (np.uint8, np.bool_), writable=False)
    assert hostile.is_layout(out, 2, (np.bool_,), writable=True)
    assert all(type(v) is int for v in (ox, oy, radius, flags, out_x, out_y))
    cells = np.asarray(cells)
    height, width = cells.shape
    assert 0 <= ox < width and 0 <= oy < height and radius >= -1 and 0 <= flags <= 15
    assert isinstance(deepest, int) and deepest >= 0
    x0, y0, x1, y1 = _window(width, height, ox, oy, radius)
    assert out_x <= x0 and out_y <= y0
    assert x1 - out_x <= out.shape[1] and y1 - out_y <= out.shape[0]
    if flags & 1 and cells.dtype == np.uint8:
        assert cells[y0:y1, x0:x1].max() <= 1
    expected = _reference(cells, ox, oy, None if radius == -1 else radius, flags)
    ys, xs = np.nonzero(expected)
    placed = np.zeros(out.shape, dtype=bool)
    placed[ys - out_y, xs - out_x] = True
    assert np.array_equal(out, placed)
    if big is not None:
        assert not big[0].any() and not big[-1].any(), "a write outside the result"


def _field_parts(data: st.DataObject) -> tuple[Any, Any, Any, np.ndarray | None]:
    """cells, out and lit for a Field, hostile or fitting; and the framed out's frame."""
    cells = hostile.arrays(data, values=(0, 1, 1, 2) if data.draw(st.integers(0, 6)) == 0
                           else (0, 1), fits=(2, (np.uint8,), False))  # fmt: skip
    shape = getattr(cells, "shape", (3, 3))
    big = None
    if data.draw(st.integers(0, 6)) == 0 or len(shape) != 2 or 0 in shape:
        out = hostile.arrays(data)
    else:
        big, out = _framed(data, shape)
    if data.draw(st.integers(0, 6)) == 0:
        lit = hostile.arrays(data, values=(-(2**62), -1, 0, 1, 3, 2**62))
    else:
        values = data.draw(st.lists(st.integers(-(2**63), 2**63 - 1), min_size=4, max_size=4))
        lit = np.array(values, dtype=np.int64)
    return cells, out, lit, big


def _origins(data: st.DataObject, width: int, height: int) -> Any:
    return data.draw(hostile.likely(
        st.tuples(st.integers(0, max(0, width - 1)), st.integers(0, max(0, height - 1))),
        st.one_of(
            st.tuples(hostile.ints(-1, width), hostile.ints(-1, height)),
            st.sampled_from([(1, 2, 3), (1,), [1, 1], "ab", None, (True, 0), (1.0, 2),
                             (np.int64(0), 0)]),
        ),
        odds=3,
    ))  # fmt: skip


@settings(max_examples=300)
@given(data=st.data())
def test_field_refuses_what_it_cannot_hold_and_computes_the_rest_exactly(
    data: st.DataObject,
) -> None:
    cells, out, lit, big = _field_parts(data)
    try:
        field = _cfov.Field(cells, out, lit)
    except hostile.REFUSALS as refusal:
        event(f"refused: {type(refusal).__name__}")
        return
    assert hostile.is_layout(cells, 2, (np.uint8,), writable=False)
    assert hostile.is_layout(out, 2, (np.bool_,), writable=True)
    assert hostile.is_layout(lit, 1, (np.int64, np.intp), writable=True) and lit.shape == (4,)
    cells = np.asarray(cells)
    assert out.shape == cells.shape and cells.max() <= 1
    height, width = cells.shape
    for _ in range(data.draw(st.integers(1, 4))):
        origin = _origins(data, width, height)
        radius = data.draw(hostile.likely(st.none(), hostile.ints(-2, 14), odds=1))
        bools = [data.draw(st.sampled_from([True, False] * 6 + [1, None, np.bool_(True)]))
                 for _ in range(3)]  # fmt: skip
        if not out.any():
            # a fresh view: whatever ``lit`` holds, the result is exactly the view
            lit[...] = data.draw(st.lists(st.integers(-(2**63), 2**63 - 1), min_size=4,
                                          max_size=4))  # fmt: skip
        seen_before, lit_before = out.copy(), lit.copy()
        try:
            done = field.compute(origin, radius, *bools)
        except hostile.REFUSALS as refusal:
            event(f"compute refused: {type(refusal).__name__}")
            assert np.array_equal(out, seen_before) and np.array_equal(lit, lit_before)
            continue
        exact = (type(origin) is tuple and len(origin) == 2
                 and all(type(v) is int for v in origin)
                 and (radius is None or type(radius) is int)
                 and all(b is True or b is False for b in bools))  # fmt: skip
        assert done is exact
        if not done:  # other spellings: nothing changed, the caller converts them
            assert np.array_equal(out, seen_before) and np.array_equal(lit, lit_before)
            continue
        event("computed")
        ox, oy = origin
        assert 0 <= ox < width and 0 <= oy < height and (radius is None or radius >= 0)
        light_walls, symmetric, ties = bools
        expected = fov_reference.visible(cells, (ox, oy), radius, light_walls, symmetric,
                                         ties)  # fmt: skip
        leftover = seen_before.copy()  # cells of the last view outside its recorded window
        x0, y0, x1, y1 = (int(v) for v in np.clip(lit_before, 0, [width, height] * 2))
        leftover[y0:y1, x0:x1] = False
        assert np.array_equal(out, expected | leftover)
        x0, y0, x1, y1 = lit.tolist()
        assert 0 <= x0 <= ox < x1 <= width and 0 <= y0 <= oy < y1 <= height
        outside = expected.copy()
        outside[y0:y1, x0:x1] = False
        assert not outside.any()
        if big is not None:
            assert not big[0].any() and not big[-1].any(), "a write outside the view"


def test_field_holds_its_arrays_until_it_goes() -> None:
    """A Field holds a reference to each array it reads (through its buffer), so NumPy's
    checked resize refuses to move them while the Field lives (``refcheck=False``, which
    tells NumPy to trust the caller, is outside what any library can defend)."""
    cells = np.zeros((4, 5), dtype=np.uint8)
    out = np.zeros((4, 5), dtype=bool)
    lit = np.zeros(4, dtype=np.int64)
    field = _cfov.Field(cells, out, lit)
    for array in (cells, out, lit):
        with pytest.raises(ValueError, match="referenced"):
            array.resize(50)
    assert field.compute((2, 2), None, True, False, False) is True
    assert out.all() and lit.tolist() == [0, 0, 5, 4]
    del field
    out.resize(50)  # released


@pytest.mark.parametrize(
    ("args", "error", "match"),
    [
        (
            (np.zeros((3, 3), np.uint8), np.zeros((3, 3), bool), 1, 1, 1, 0, 0),
            TypeError,
            "8 arguments",
        ),
        (
            (np.zeros((3, 3), np.float64), np.zeros((3, 3), bool), 1, 1, 1, 0, 0, 0),
            ValueError,
            "cells must hold uint8 or bool",
        ),
        (
            (np.zeros((3, 3), np.uint8), np.zeros((3, 3), np.uint8), 1, 1, 1, 0, 0, 0),
            ValueError,
            "out must hold bool",
        ),
        (
            (np.zeros((3, 3), np.uint8), np.zeros((3, 3), bool)[:, ::2], 1, 1, 1, 0, 0, 0),
            ValueError,
            "C-contiguous",
        ),
        (
            (np.zeros((3, 3), np.uint8), np.zeros((3, 3), bool), 3, 1, 1, 0, 0, 0),
            ValueError,
            "outside the 3x3 map",
        ),
        (
            (np.zeros((3, 3), np.uint8), np.zeros((3, 3), bool), 1, 1, -2, 0, 0, 0),
            ValueError,
            "radius",
        ),
        (
            (np.zeros((3, 3), np.uint8), np.zeros((3, 3), bool), 1, 1, 1, 16, 0, 0),
            ValueError,
            "flags",
        ),
        (
            (np.zeros((3, 3), np.uint8), np.zeros((2, 3), bool), 1, 1, 1, 0, 0, 0),
            ValueError,
            "does not hold the view's window",
        ),
        (
            (np.full((3, 3), 2, np.uint8), np.zeros((3, 3), bool), 1, 1, 1, 1, 0, 0),
            ValueError,
            r"only 0 \(floor\) and 1 \(wall\)",
        ),
        (
            (np.zeros((0, 3), np.uint8), np.zeros((3, 3), bool), 0, 0, 1, 0, 0, 0),
            ValueError,
            "cells has 0 cells along axis 0",
        ),
        (("abc", np.zeros((3, 3), bool), 0, 0, 1, 0, 0, 0), TypeError, "cells must be"),
    ],
)
def test_view_names_what_it_refuses(args: tuple[Any, ...], error: type, match: str) -> None:
    out = args[1] if len(args) > 1 else None
    before = out.copy() if isinstance(out, np.ndarray) else None
    with pytest.raises(error, match=match):
        _cfov.view(*args)
    if before is not None:
        assert np.array_equal(out, before)


def test_a_read_only_result_is_refused() -> None:
    out = np.zeros((3, 3), bool)
    out.setflags(write=False)
    with pytest.raises(ValueError, match="writable"):
        _cfov.view(np.zeros((3, 3), np.uint8), out, 1, 1, 1, 0, 0, 0)
    with pytest.raises(ValueError, match="writable"):
        _cfov.Field(np.zeros((3, 3), np.uint8), out, np.zeros(4, np.int64))

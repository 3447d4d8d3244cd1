"""The C engine's entry points (generators._native._csolve) against hostile input.

Whatever a caller hands them (odd shapes, non-contiguous, read-only or byte-swapped arrays,
wrong dtypes, objects that are not arrays, out-of-range numbers, arbitrary bytes), they
answer or raise ValueError/TypeError: never a crash, never a write outside the output rows
asked for. CI runs this file once more with the extension built with
``ENTITYWORKS_SANITIZE=1`` (AddressSanitizer and UndefinedBehaviorSanitizer, see setup.py),
where an out-of-bounds read or write, or undefined behaviour, aborts the process.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from generators import sudoku
from generators._native import _csolve
from generators.sudoku import _engine as engine

PUZZLE = "003020600900305001001806400008102900700000008006708200002609500800203009005010300"
SOLUTION = "483921657967345821251876493548132976729564138136798245372689514814253769695417382"
SIGNATURE = {
    "text": (np.uint8, 81),
    "counts": (np.int32, None),
    "nodes": (np.int64, None),
    "guesses": (np.int64, None),
    "grids": (np.uint8, 81),
}
DTYPES = [np.uint8, np.int8, np.uint16, np.int16, np.int32, np.uint32, np.int64, np.uint64,
          np.float32, np.float64, np.bool_, np.dtype(">i8"), np.dtype(">i4"),
          np.dtype("<i8")]  # fmt: skip


def _good(n: int) -> dict[str, np.ndarray]:
    text = np.frombuffer((PUZZLE * n).encode(), dtype=np.uint8).reshape(n, 81).copy()
    return {
        "text": text,
        "counts": np.zeros(n, np.int32),
        "nodes": np.zeros(n, np.int64),
        "guesses": np.zeros(n, np.int64),
        "grids": np.zeros((n, 81), np.uint8),
    }


def _call(arrays: dict[str, Any], start: Any = 0, stop: Any = None, limit: Any = 2,
          houses: Any = True, kernel: Any = None) -> Any:  # fmt: skip
    n = len(arrays["counts"]) if stop is None and hasattr(arrays["counts"], "__len__") else stop
    return _csolve.solve_rows(arrays["text"], start, n, limit, houses, arrays["counts"],
                              arrays["nodes"], arrays["guesses"], arrays["grids"],
                              kernel=kernel)  # fmt: skip


def test_good_arrays_are_solved_by_every_kernel_and_engine() -> None:
    for kernel in (*engine.KERNELS, None):
        for houses in (True, False):
            arrays = _good(3)
            assert _call(arrays, houses=houses, kernel=kernel) == -1
            assert arrays["counts"].tolist() == [1, 1, 1]
            assert arrays["grids"][2].tobytes().decode() == SOLUTION


@st.composite
def _hostile_array(draw: st.DrawFn, role: str) -> Any:
    """An argument for ``role``: usually close to right, wrong in one or more ways."""
    dtype, width = SIGNATURE[role]
    n = draw(st.integers(0, 4))
    kind = draw(st.sampled_from(["right", "dtype", "shape", "strided", "fortran", "readonly",
                                 "ndim", "object", "bytes", "scalar", "list"]))  # fmt: skip
    shape: tuple[int, ...] = (n, width) if width else (n,)
    if kind == "object":
        return draw(st.sampled_from([None, 3, "x" * 81, object(), 1.5]))
    if kind == "bytes":
        return bytes(draw(st.integers(0, 200)))
    if kind == "list":
        return [0] * n
    if kind == "scalar":
        return np.zeros((), dtype)
    if kind == "dtype":
        dtype = draw(st.sampled_from(DTYPES))
    if kind == "shape":
        shape = draw(st.sampled_from([(n, 80), (n, 82), (n + 1,), (n, 81), (n + 2, 81), (0,)]))
    if kind == "ndim":
        shape = draw(st.sampled_from([(n, 9, 9), (n * 81,), (1, n, 81)]))
    array = np.zeros(shape, dtype=dtype)
    if role == "text" and array.dtype == np.uint8:
        array[...] = np.frombuffer(draw(st.binary(min_size=array.size, max_size=array.size)),
                                   dtype=np.uint8).reshape(shape)  # fmt: skip
    if kind == "strided":
        big = np.zeros(tuple(2 * s + 1 for s in shape), dtype=dtype)
        array = big[tuple(slice(None, None, 2) for _ in shape)]
    if kind == "fortran":
        array = np.asfortranarray(np.zeros(shape[::-1], dtype=dtype).T)
    if kind == "readonly":
        array.setflags(write=False)
    return array


@settings(max_examples=400, deadline=None)
@given(
    st.fixed_dictionaries({role: _hostile_array(role) for role in SIGNATURE}),
    st.one_of(st.integers(-3, 6), st.sampled_from([2**63, -(2**63) - 1, 2**31, True, 1.0, None])),
    st.one_of(st.integers(-3, 6), st.sampled_from([2**62, 2**64, False, "1", None])),
    st.one_of(st.integers(-3, 4), st.sampled_from([2**31, 2**31 - 1, 2**70, 0.5, None])),
    st.sampled_from([True, False, 0, 1, None, "yes"]),
    st.sampled_from([None, "portable", "bmi2", "auto", "avx9", 3, b"portable"]),
)
def test_hostile_arguments_raise_clean_errors(arrays: dict[str, Any], start: Any, stop: Any,
                                              limit: Any, houses: Any,
                                              kernel: Any) -> None:  # fmt: skip
    """Every combination either solves (a result of -1 or a row index in range) or raises
    ValueError/TypeError with a message; the outputs outside ``start:stop`` stay as they
    were."""
    before = {k: v.copy() for k, v in arrays.items() if isinstance(v, np.ndarray)}
    try:
        result = _csolve.solve_rows(arrays["text"], start, stop, limit, houses,
                                    arrays["counts"], arrays["nodes"], arrays["guesses"],
                                    arrays["grids"], kernel=kernel)  # fmt: skip
    except (ValueError, TypeError) as exc:
        assert str(exc)
        for key, value in before.items():  # nothing written when refused
            assert np.array_equal(arrays[key], value, equal_nan=value.dtype.kind == "f")
        return
    n = len(arrays["text"])
    assert isinstance(result, int) and -1 <= result < n
    assert start <= stop
    for key in ("counts", "nodes", "guesses", "grids"):
        for row in [*range(0, start), *range(stop, n)]:
            assert np.array_equal(arrays[key][row], before[key][row])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.binary(min_size=81, max_size=81),
                          st.lists(st.sampled_from(b"0000000000.123456789x "), min_size=81,
                                   max_size=81).map(bytes)), min_size=1, max_size=5),
       st.integers(1, 3), st.booleans())  # fmt: skip
def test_arbitrary_bytes_stop_at_the_first_invalid_row(rows: list[bytes], limit: int,
                                                       houses: bool) -> None:  # fmt: skip
    """Arbitrary bytes as puzzles: the engine returns the first row that :func:`validate`
    (an independent check in Python) refuses, and solves the rows before it."""
    text = np.frombuffer(b"".join(rows), dtype=np.uint8).reshape(len(rows), 81)
    arrays = _good(len(rows))
    arrays["text"] = text
    expected = -1
    for i, row in enumerate(rows):
        try:
            sudoku.validate(row.decode("latin-1"))
        except sudoku.InvalidPuzzle:
            expected = i
            break
    assume(houses or expected == 0)  # the cell engine may search long on random givens
    assert _call(arrays, limit=limit, houses=houses) == expected


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.binary(max_size=100), st.text(max_size=100), st.none(), st.integers(),
                 st.binary(min_size=81, max_size=81),
                 st.text(alphabet="0123456789.", min_size=81, max_size=81)),
       st.one_of(st.integers(-2, 3), st.sampled_from([2**40, None, 1.0])))  # fmt: skip
def test_solve_text_takes_anything(text: Any, limit: Any) -> None:
    try:
        result = _csolve.solve_text(text, limit)
    except (ValueError, TypeError) as exc:
        assert str(exc)
        return
    if result is None:
        return
    count, grid, nodes, guesses = result
    assert 0 <= count <= limit and nodes >= 1 and guesses >= 0
    assert (grid is None) == (count == 0)
    if grid is not None:
        puzzle = text.decode() if isinstance(text, bytes) else text
        assert sudoku.is_solution(puzzle.replace(".", "0"), grid)


def test_the_errors_name_what_is_wrong() -> None:
    arrays = _good(2)
    with pytest.raises(TypeError, match="counts must be a int32 array"):
        _call({**arrays, "counts": np.zeros(2, np.int64)})
    with pytest.raises(ValueError, match="grids must be writable"):
        grids = arrays["grids"].copy()
        grids.setflags(write=False)
        _call({**arrays, "grids": grids})
    with pytest.raises(ValueError, match="text must be C-contiguous"):
        _call({**arrays, "text": np.zeros((4, 81), np.uint8)[::2]})
    with pytest.raises(ValueError, match="nodes must have 2 rows"):
        _call({**arrays, "nodes": np.zeros(3, np.int64)})
    with pytest.raises(ValueError, match="rows 1:3 are outside 0:2"):
        _call(arrays, start=1, stop=3)
    with pytest.raises(ValueError, match="limit must be between 1"):
        _call(arrays, limit=0)
    with pytest.raises(TypeError, match="byte order"):
        _call({**arrays, "nodes": np.zeros(2, ">i8")})
    with pytest.raises(ValueError, match="unknown kernel"):
        _call(arrays, kernel="avx9")

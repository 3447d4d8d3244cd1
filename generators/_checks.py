"""Argument checks every generator shares: integers, options, flags and 0/1 maps.

Kept apart from :mod:`generators._seeds` because the checks serve every room (maps, view,
sudoku), while seeds serve only the generators that draw at random. Each check raises a
``ValueError`` that names the argument and the value received.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def check_int(name: str, value: Any, low: int | None = None, high: int | None = None) -> int:
    """Validate an integer parameter (bounds inclusive) and return it as a plain ``int``."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    result = int(value)
    if low is not None and result < low:
        raise ValueError(f"{name} must be >= {low}, got {result}")
    if high is not None and result > high:
        raise ValueError(f"{name} must be <= {high}, got {result}")
    return result


def check_choice(name: str, value: Any, choices: Sequence[str]) -> str:
    """Validate a string option against ``choices``."""
    if not isinstance(value, str) or value not in choices:
        options = ", ".join(repr(c) for c in choices)
        raise ValueError(f"{name} must be one of {options}, got {value!r}")
    return value


def check_bool(name: str, value: Any) -> bool:
    """Validate a flag: only real booleans (``numpy.bool_`` included) are accepted."""
    if not isinstance(value, bool | np.bool_):
        raise ValueError(f"{name} must be a bool, got {value!r}")
    return bool(value)


def check_grid(grid: Any, name: str = "grid") -> np.ndarray:
    """Validate a map: a 2-D array of 0/1 values, returned as ``uint8`` (no copy if already)."""
    array = np.asarray(grid)
    if array.ndim != 2 or array.shape[0] < 1 or array.shape[1] < 1:
        raise ValueError(f"{name} must be a non-empty 2-D array, got shape {array.shape}")
    if array.dtype == np.bool_:
        return array.astype(np.uint8)
    if not np.issubdtype(array.dtype, np.integer):
        raise ValueError(f"{name} must hold integers 0 (floor) and 1 (wall), got {array.dtype}")
    if array.size and (array.min() < 0 or array.max() > 1):
        raise ValueError(f"{name} must hold only 0 (floor) and 1 (wall)")
    return array.astype(np.uint8, copy=False)

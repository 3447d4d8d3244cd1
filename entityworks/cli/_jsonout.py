"""Standard JSON for what the command line prints: strict JSON that ``json.loads`` and ``jq``
read, with one documented form for every value JSON has no type for.

- ``None``, ``bool``, ``int``, ``str`` and finite ``float`` values are themselves (``-0.0``
  keeps its sign); an ``Enum`` member is its value.
- A non-finite float is the string its XML form uses: ``"NaN"``, ``"INF"``, ``"-INF"``
  (``float()`` reads each back). JSON has no NaN or Infinity, so a bare one would make the
  whole document unreadable.
- Every other value is the text the type registry writes into XML for it (one registry, one
  text form): ``Decimal`` as plain digits with its exponent kept (``"1.50"``), datetimes,
  dates and times in ISO 8601 (an aware datetime with its offset), a ``timedelta`` as an
  ISO 8601 duration (``"P1DT2H0M0.5S"``), a ``UUID`` in its hyphenated form, ``bytes`` in
  standard base64. A type the registry does not know is refused, never guessed at.
- A NumPy array (a map's grid) is, by default, nested lists, row by row (``grid[y][x]``),
  non-finite floats as above. With ``arrays="base64"`` it is an object
  ``{"dtype": "|u1", "shape": [30, 40], "base64": "..."}``: the C-order bytes of the array
  and NumPy's exact dtype string, so
  ``np.frombuffer(base64.b64decode(v["base64"]), v["dtype"]).reshape(v["shape"])`` rebuilds
  it exactly. Arrays of complex numbers, bytes or dates have no list form and need base64.
- Lists, tuples and dicts are JSON arrays and objects; a key that is not text becomes its JSON
  text (``3`` -> ``"3"``).
- Text is written as UTF-8, except the characters a terminal acts on rather than shows
  (:data:`._controls.TERMINAL_CONTROLS`: C0 and C1 controls, DEL, U+2028/U+2029 and the
  bidirectional controls), which are always ``\\uXXXX`` escapes, so printing the JSON
  cannot move the cursor, write the clipboard (OSC 52) or reorder a line; ``json.loads``
  reads the same text.
"""

from __future__ import annotations

import base64
import datetime as dt
import enum
import json
import math
import sys
from collections.abc import Iterable, Sequence
from typing import Any

from ._controls import TERMINAL_CONTROLS

#: The forms ``arrays=`` accepts.
ARRAY_FORMS = ("lists", "base64")

# json.dumps(ensure_ascii=False) escapes C0 itself; these it would write raw.
_JSON_ESCAPES = {cp: f"\\u{cp:04x}" for cp in TERMINAL_CONTROLS if cp >= 0x20}
_LIST_KINDS = "biufU"  # bool, signed, unsigned, float, unicode


def _non_finite(x: float) -> str:
    return "NaN" if math.isnan(x) else "INF" if x > 0 else "-INF"


def _registry_text(value: Any) -> str:
    """The registry's XML text for ``value`` (the one place types get their text form)."""
    from ..registry import AwareDatetime
    from ..registry import registry as default_registry

    kind: Any = type(value)
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        kind = AwareDatetime
    elif isinstance(value, bytearray | memoryview):
        value, kind = bytes(value), bytes
    return default_registry.lookup(kind).xml_codec.to_text(value)


def _array(array: Any, arrays: str) -> Any:
    import numpy as np

    if arrays == "base64":
        data = np.ascontiguousarray(array).tobytes()
        return {
            "dtype": array.dtype.str,
            "shape": list(array.shape),
            "base64": base64.b64encode(data).decode("ascii"),
        }
    if array.dtype.kind not in _LIST_KINDS:
        raise ValueError(
            f"an array of {array.dtype} has no JSON list form; use base64 arrays (--arrays base64)"
        )
    items = array.tolist()
    if array.dtype.kind == "f" and not bool(np.isfinite(array).all()):
        return _finite(items)
    return items


def _finite(items: Any) -> Any:
    if isinstance(items, list):
        return [_finite(item) for item in items]
    return _non_finite(items) if isinstance(items, float) and not math.isfinite(items) else items


def _key(key: Any, arrays: str) -> str:
    if isinstance(key, str) and not isinstance(key, enum.Enum):
        return str(key)
    value = json_value(key, arrays=arrays)
    return value if isinstance(value, str) else json.dumps(value, allow_nan=False)


def json_value(value: Any, *, arrays: str = "lists") -> Any:
    """``value`` as plain JSON data (dict, list, str, int, float, bool, None) in the forms
    the module docstring lists; ``json.dumps(..., allow_nan=False)`` accepts the result."""
    if value is None or value is True or value is False:
        return value
    kind = type(value)
    if kind is str or kind is int:
        return value
    if kind is float:
        return value if math.isfinite(value) else _non_finite(value)
    if isinstance(value, enum.Enum):
        return json_value(value.value, arrays=arrays)
    if isinstance(value, dict):
        return {_key(k, arrays): json_value(v, arrays=arrays) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_value(v, arrays=arrays) for v in value]
    np = sys.modules.get("numpy")
    if np is not None:
        if isinstance(value, np.ndarray):
            return _array(value, arrays)
        if isinstance(value, np.generic):
            return json_value(value.item(), arrays=arrays)
    if isinstance(value, int):  # subclasses of the JSON types: their plain value
        return int(value)
    if isinstance(value, float):
        return json_value(float(value), arrays=arrays)
    if isinstance(value, str):
        return str.__str__(value)
    return _registry_text(value)


def check_arrays(arrays: str) -> str:
    if arrays not in ARRAY_FORMS:
        raise ValueError(f"arrays={arrays!r}: expected one of {', '.join(ARRAY_FORMS)}")
    return arrays


def dumps(value: Any, *, arrays: str = "lists") -> str:
    """``value`` as one line of strict JSON."""
    return json.dumps(
        json_value(value, arrays=check_arrays(arrays)),
        allow_nan=False,
        ensure_ascii=False,
        separators=(",", ":"),
    ).translate(_JSON_ESCAPES)


def rows_json(
    columns: Sequence[str],
    rows: Iterable[Sequence[Any]],
    *,
    arrays: str = "lists",
    lines: bool = False,
) -> str:
    """Rows as a JSON array of objects, one object per line (``lines``: JSON Lines, one
    object per line and no enclosing array)."""
    check_arrays(arrays)
    objects = [
        json.dumps(
            {c: json_value(v, arrays=arrays) for c, v in zip(columns, row, strict=True)},
            allow_nan=False,
            ensure_ascii=False,
            separators=(", ", ": "),
        ).translate(_JSON_ESCAPES)
        for row in rows
    ]
    if lines:
        return "\n".join(objects)
    if not objects:
        return "[]"
    return "[\n" + ",\n".join("  " + o for o in objects) + "\n]"


__all__ = ["ARRAY_FORMS", "dumps", "json_value", "rows_json"]

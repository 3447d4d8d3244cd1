"""What the commands print: rows as a text table, CSV, JSON or JSON Lines (values shown the
way ``query`` shows them), and the progress bar on stderr.

JSON's standard forms are :mod:`._jsonout`'s; this module chooses between the formats.

Text in the table and CSV formats is shown with the backslash escapes of a Python or JSON
string literal, so a stored value can never drive the terminal (an OSC 52 clipboard write, a
cursor move, a right-to-left override) and an escaped value is never mistaken for another:
a backslash is ``\\\\``, a tab, newline and carriage return ``\\t``, ``\\n``, ``\\r``, any other
of :data:`TERMINAL_CONTROLS` ``\\xHH`` (up to U+00FF) or ``\\uHHHH``; all other text
is itself. ``s.encode("latin-1", "backslashreplace").decode("unicode_escape")`` gives the
stored text back. Grids, lists and dicts are shown as their JSON (:mod:`._jsonout`).
"""

from __future__ import annotations

import sys
from typing import Any

from ._controls import TERMINAL_CONTROLS

_SHORT = {"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"}
_TEXT_ESCAPES = {
    cp: _SHORT.get(chr(cp)) or (f"\\x{cp:02x}" if cp < 0x100 else f"\\u{cp:04x}")
    for cp in (*TERMINAL_CONTROLS, ord("\\"))
}
_CELL_WIDTH = 60


def escape_text(text: str) -> str:
    """``text`` with backslash escapes for the backslash itself and every character of
    :data:`TERMINAL_CONTROLS` (the module docstring lists the forms)."""
    return text.translate(_TEXT_ESCAPES)


def _cell(value: Any, width: int | None = None) -> str:
    """A non-NULL value as the table and CSV formats show it, cut to ``width`` characters
    (ending "...") never inside an escape; containers are their JSON text, which
    :mod:`._jsonout` has escaped."""
    shown = str(display(value))
    text = shown if isinstance(value, dict | list | tuple) else escape_text(shown)
    if width is None or len(text) <= width:
        return text
    if text == shown:
        return text[: width - 3] + "..."
    kept: list[str] = []
    room = width - 3
    for piece in map(escape_text, shown):
        room -= len(piece)
        if room < 0:
            break
        kept.append(piece)
    return "".join(kept) + "..."


def display(value: Any, *, text: bool = True) -> Any:
    """A value as shown by ``query``: grids and blobs summarised, JSON for containers."""
    import datetime as dt
    import decimal
    import enum
    import uuid

    np = sys.modules.get("numpy")
    if np is not None and isinstance(value, np.ndarray):
        shape = "x".join(str(n) for n in value.shape[::-1]) if value.ndim == 2 else value.shape
        return f"<ndarray {shape} {value.dtype}>"
    if isinstance(value, bytes | bytearray | memoryview):
        return f"<{len(value)} bytes>"
    if isinstance(value, dict | list | tuple):
        from ._jsonout import dumps

        return dumps(value) if text else value
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return str(value)
    if isinstance(value, decimal.Decimal | uuid.UUID):
        return str(value)
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, float) and text:
        return format(value, ".6g")
    return value


def format_rows(
    columns: list[str], rows: list[tuple[Any, ...]], fmt: str, *, arrays: str = "lists"
) -> str:
    """Rows as an aligned text table, CSV, JSON (an array of objects, one per line) or JSON
    Lines; JSON in the standard forms of :mod:`entityworks.cli._jsonout`."""
    if fmt in ("json", "jsonl"):
        from ._jsonout import rows_json

        return rows_json(columns, rows, arrays=arrays, lines=fmt == "jsonl")
    if fmt == "csv":
        import csv
        import io

        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow([escape_text(c) for c in columns])
        for r in rows:
            writer.writerow(
                ["" if v is None else repr(v) if isinstance(v, float) else _cell(v) for v in r]
            )
        return buffer.getvalue().rstrip("\n")
    columns = [escape_text(c) for c in columns]
    cells = [[("NULL" if v is None else _cell(v, _CELL_WIDTH)) for v in r] for r in rows]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip(),
        "  ".join("-" * w for w in widths),
    ]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in cells]
    return "\n".join(lines)


def progress_bar(total: int | None, unit: str, progress: bool | None) -> Any:
    """A tqdm bar on stderr; ``progress`` None shows it only when stderr is a terminal."""
    from tqdm import tqdm

    return tqdm(
        total=total,
        unit=unit,
        disable=None if progress is None else not progress,
        file=sys.stderr,
        dynamic_ncols=True,
    )

"""What the commands print: rows as a text table, CSV, JSON or JSON Lines (values shown the
way ``query`` shows them), and the progress bar on stderr.

JSON's standard forms are :mod:`.jsonout`'s; this module chooses between the formats.
"""

from __future__ import annotations

import sys
from typing import Any


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
        from .jsonout import dumps

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


def format_rows(columns: list[str], rows: list[tuple[Any, ...]], fmt: str, *,
                arrays: str = "lists") -> str:
    """Rows as an aligned text table, CSV, JSON (an array of objects, one per line) or JSON
    Lines; JSON in the standard forms of :mod:`entityworks.cli.jsonout`."""
    if fmt in ("json", "jsonl"):
        from .jsonout import rows_json

        return rows_json(columns, rows, arrays=arrays, lines=fmt == "jsonl")
    if fmt == "csv":
        import csv
        import io

        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(columns)
        for r in rows:
            writer.writerow(["" if v is None else display(v) if not isinstance(v, float)
                             else repr(v) for v in r])
        return buffer.getvalue().rstrip("\n")
    cells = [[("NULL" if v is None else str(display(v))) for v in r] for r in rows]
    cells = [[c if len(c) <= 60 else c[:57] + "..." for c in r] for r in cells]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip(),
             "  ".join("-" * w for w in widths)]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
              for r in cells]
    return "\n".join(lines)


def progress_bar(total: int | None, unit: str, progress: bool | None) -> Any:
    """A tqdm bar on stderr; ``progress`` None shows it only when stderr is a terminal."""
    from tqdm import tqdm

    return tqdm(total=total, unit=unit, disable=None if progress is None else not progress,
                file=sys.stderr, dynamic_ncols=True)

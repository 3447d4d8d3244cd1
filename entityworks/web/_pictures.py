"""What the Datasette plugin shows, without Datasette: map pictures and their cache, the
Tiled export, sudoku grids and entropy histograms as HTML.

Grids are read only through :func:`entityworks.catalog.load_grid` / ``load_map`` on a
read-only :class:`~entityworks.Store`, so however the catalog stores a grid, the pictures
follow. Pictures are rendered on request and kept in a bounded LRU cache keyed by a digest
of the grid, so a changed map never shows a stale picture and an unchanged one is rendered
once.
"""

from __future__ import annotations

import hashlib
import html
import io
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

#: Thumbnail box (pixels of the longer side) shown in table views, and the allowed range.
THUMB_BOX = 96
THUMB_RANGE = (8, 256)
#: Default pixels per cell of the full-size PNG, the allowed range, and the longest side of
#: the large picture on a map's row page.
FULL_BLOCK = 5
BLOCK_RANGE = (1, 32)
PAGE_SIDE = 800
#: At most this many caves, rooms, corridors or placements are listed on a row page.
LIST_LIMIT = 200


# -- the cache ---------------------------------------------------------------------------------


class PictureCache:
    """A thread-safe LRU of rendered pictures, bounded in entries and in bytes."""

    def __init__(self, max_items: int = 4096, max_bytes: int = 64 << 20) -> None:
        if max_items < 1 or max_bytes < 1:
            raise ValueError("a picture cache needs room for at least one item and byte")
        self.max_items = max_items
        self.max_bytes = max_bytes
        self._items: OrderedDict[tuple[Any, ...], bytes] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits: int = 0
        self.misses: int = 0

    def __len__(self) -> int:
        return len(self._items)

    @property
    def size(self) -> int:
        """Bytes held."""
        return self._bytes

    def get_or_render(self, key: tuple[Any, ...], render: Callable[[], bytes]) -> bytes:
        """The cached bytes for ``key``, rendering (outside the lock) on a miss."""
        with self._lock:
            found = self._items.get(key)
            if found is not None:
                self._items.move_to_end(key)
                self.hits += 1
                return found
            self.misses += 1
        data = render()
        if len(data) > self.max_bytes:
            return data  # too big to keep; never evict everything for one picture
        with self._lock:
            if key not in self._items:
                self._items[key] = data
                self._bytes += len(data)
            while len(self._items) > self.max_items or self._bytes > self.max_bytes:
                _, dropped = self._items.popitem(last=False)
                self._bytes -= len(dropped)
        return data

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._bytes = 0


def grid_digest(grid: np.ndarray) -> str:
    """A digest of a grid's cells and shape: the cache key of its pictures."""
    cells = np.ascontiguousarray(grid, dtype=np.uint8)
    digest = hashlib.blake2b(cells.tobytes(), digest_size=16)
    digest.update(repr(cells.shape).encode())
    return digest.hexdigest()


def record_digest(record: Any, *, features: bool = True) -> str:
    """A digest of a map row's grid and of what its pictures draw over it (placements, and
    with ``features`` its caves, rooms and corridors)."""
    digest = hashlib.blake2b(grid_digest(record.grid).encode(), digest_size=16)
    drawn: tuple[Any, ...] = (getattr(record, "placements", []),)
    if features:
        drawn += (record.caves, record.rooms, record.corridors)
    digest.update(repr(drawn).encode())
    return digest.hexdigest()


# -- reading the catalog -----------------------------------------------------------------------


class CatalogReader:
    """Read-only Stores on catalog files, one per path, opened on first use."""

    def __init__(self) -> None:
        self._stores: dict[str, Any] = {}
        self._lock = threading.Lock()

    def store(self, path: str | Path) -> Any:
        from ..sql.backends import file_backend
        from ..sql.store import Store

        key = str(Path(path).resolve())
        with self._lock:
            found = self._stores.get(key)
            if found is None:
                # read-only, and '#', '?' and '%' in the path name this file, no other
                found = Store(file_backend().read_only_url(Path(key)))
                self._stores[key] = found
            return found

    def grid(self, path: str | Path, map_id: int) -> np.ndarray | None:
        from ..catalog import load_grid

        return load_grid(self.store(path), map_id)

    def record(self, path: str | Path, map_id: int) -> Any:
        from ..catalog import load_map

        return load_map(self.store(path), map_id)

    def close(self) -> None:
        with self._lock:
            for store in self._stores.values():
                store.close()
            self._stores.clear()


# -- pictures ----------------------------------------------------------------------------------


def _png(image: Any) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=image.width * image.height <= 1 << 16)
    return buffer.getvalue()


def thumbnail_png(grid: np.ndarray, box: int = THUMB_BOX) -> bytes:
    """A one-pixel-per-cell (or shrunk) greyscale PNG; CSS scales it up crisply."""
    from generators.maps import render

    return _png(render.thumbnail(grid, box))


def thumbnail_size(width: int, height: int, box: int = THUMB_BOX) -> tuple[int, int]:
    """Pixel size of :func:`thumbnail_png` for a ``width`` x ``height`` map, and so the
    size to show it at before scaling: computed from the row alone, no grid needed."""
    factor = -(-max(width, height, 1) // box)
    return -(-width // factor), -(-height // factor)


def display_size(width: int, height: int, box: int = THUMB_BOX) -> tuple[int, int]:
    """CSS size of a thumbnail: the longer side ``box`` pixels, proportions kept."""
    longest = max(width, height, 1)
    return max(1, round(width * box / longest)), max(1, round(height * box / longest))


def full_png(
    grid: np.ndarray, block: int = FULL_BLOCK, placements: Sequence[tuple[int, int]] = ()
) -> bytes:
    """The map as ``entityworks render --png`` draws it: walls black on white floor,
    placements as red squares; ``block`` is cut so that no side exceeds ``MAX_SIDE``."""
    from generators.maps import render

    cells = np.asarray(grid)
    block = max(1, min(block, render.MAX_SIDE // max(cells.shape)))
    return _png(render.to_image(cells, block, placements=placements))


def overlay_png(record: Any, block: int | None = None) -> bytes:
    """The map with its corridors, rooms, caves and placements drawn in colour."""
    from generators.maps import render

    grid = np.asarray(record.grid)
    if block is None:
        block = page_block(int(grid.shape[1]), int(grid.shape[0]))
    image = render.overlay_image(
        grid,
        block,
        rooms=[(r.x, r.y, r.width, r.height) for r in record.rooms],
        caves=[(c.x, c.y, c.width, c.height) for c in record.caves],
        corridors=[[(int(x), int(y)) for x, y in c.path] for c in record.corridors],
        placements=[(p.x, p.y) for p in getattr(record, "placements", [])],
    )
    return _png(image)


def page_block(width: int, height: int) -> int:
    """Pixels per cell of the large picture on a row page (longer side near PAGE_SIDE)."""
    return max(1, min(16, PAGE_SIDE // max(width, height, 1)))


def tiled_json(grid: np.ndarray, tileset: str = "entityworks_tiles.png") -> bytes:
    """The Tiled map of ``entityworks render --tiled``, its tileset named ``tileset``."""
    from generators.maps import render

    return json.dumps(render.to_tiled_json(grid, 16, tileset), separators=(",", ":")).encode()


def tileset_png() -> bytes:
    from generators.maps import render

    return _png(render.tileset_image(16))


# -- cells of other catalog tables ------------------------------------------------------------


def _digits(value: Any) -> str | None:
    if not isinstance(value, str) or len(value) != 81 or not value.isdigit():
        return None
    return value


def sudoku_html(puzzle: Any, solution: Any = None) -> str | None:
    """A 9x9 grid: the puzzle's clues in bold, solved digits lighter (None if not a puzzle).

    With ``solution`` the grid shows the solution and marks which digits were given.
    """
    clues = _digits(puzzle)
    if clues is None:
        return None
    shown = _digits(solution) if solution is not None else clues
    if shown is None:
        return None
    rows = []
    for r in range(9):
        cells = []
        for c in range(9):
            i = r * 9 + c
            given = clues[i] != "0"
            digit = shown[i] if shown[i] != "0" else ""
            kind = "ew-clue" if given else ("ew-solved" if digit else "ew-blank")
            edges = []
            if c % 3 == 2 and c < 8:
                edges.append("ew-right")
            if r % 3 == 2 and r < 8:
                edges.append("ew-bottom")
            classes = " ".join([kind, *edges])
            cells.append(f'<td class="{classes}">{digit}</td>')
        rows.append("<tr>" + "".join(cells) + "</tr>")
    label = "solution" if solution is not None else "puzzle"
    return f'<table class="ew-sudoku" aria-label="sudoku {label}">' + "".join(rows) + "</table>"


def _histogram_counts(value: Any) -> list[int] | None:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return None
    if (
        not isinstance(value, list)
        or len(value) != 256
        or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value)
    ):
        return None
    return value


def histogram_svg(value: Any, width: int = 256, height: int = 64) -> str | None:
    """An SVG bar chart of a 256-bucket byte distribution (None if ``value`` is not one)."""
    counts = _histogram_counts(value)
    if counts is None:
        return None
    top = max(counts) or 1
    step = width / 256
    parts = []
    for byte, count in enumerate(counts):
        if count:
            bar = max(0.5, height * count / top)
            parts.append(f"M{byte * step:.2f} {height}v-{bar:.2f}h{step:.2f}v{bar:.2f}z")
    total = sum(counts)
    title = (
        f"byte histogram: {total:,} bytes, {sum(1 for c in counts if c)} distinct values, "
        f"most frequent {counts.index(max(counts))} ({max(counts):,} times)"
    )
    return (
        f'<svg class="ew-histogram" xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{html.escape(title)}"><title>{html.escape(title)}</title>'
        f'<rect width="{width}" height="{height}" class="ew-histogram-bg"/>'
        f'<path d="{"".join(parts)}" class="ew-histogram-bars"/></svg>'
    )


def parameters_html(value: Any) -> str | None:
    """A map's generator parameters folded: a one-line summary that opens to the JSON."""
    if not isinstance(value, str):
        return None
    try:
        params = json.loads(value)
    except ValueError:
        return None
    if not isinstance(params, dict):
        return None
    pretty = html.escape(json.dumps(params, indent=1))
    return (
        f'<details class="ew-parameters"><summary>{len(params)} parameters</summary>'
        f"<pre>{pretty}</pre></details>"
    )


# -- a map's row page --------------------------------------------------------------------------


@dataclass(frozen=True)
class Listing:
    """One list on a map's row page: a heading, column names, rows, and how many exist."""

    title: str
    columns: Sequence[str]
    rows: Sequence[Sequence[Any]]
    total: int


def listings(record: Any, limit: int = LIST_LIMIT) -> list[Listing]:
    """The caves, rooms, corridors and placements of a map, as lists for its row page."""
    out = []
    caves = [
        (
            c.number,
            c.cells,
            f"{c.x},{c.y}",
            f"{c.width}x{c.height}",
            f"{c.centroid_x:.1f},{c.centroid_y:.1f}",
        )
        for c in record.caves
    ]
    rooms = [(i + 1, f"{r.x},{r.y}", f"{r.width}x{r.height}") for i, r in enumerate(record.rooms)]
    corridors = [
        (i + 1, c.length, f"{c.start_x},{c.start_y}", f"{c.end_x},{c.end_y}")
        for i, c in enumerate(record.corridors)
    ]
    placements = [(p.label, f"{p.x},{p.y}", p.clearance) for p in getattr(record, "placements", [])]
    for title, columns, rows in (
        ("Caves", ("cave", "cells", "top-left", "size", "centroid"), caves),
        ("Rooms", ("room", "top-left", "size"), rooms),
        ("Corridors", ("corridor", "length", "start", "end"), corridors),
        ("Placements", ("label", "cell", "clearance"), placements),
    ):
        if rows:
            out.append(Listing(title, columns, rows[:limit], len(rows)))
    return out

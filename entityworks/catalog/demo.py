"""``entityworks demo``: build a small level catalog and write one of every output.

Runs in a few seconds on an embedded SQLite file: caves, dungeons, islands and a cellular cave
generated into the catalog with fixed seeds (so the output is the same on every machine),
sudokus generated, solved and stored, an entropy report, an XML+XSD export and a PNG.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import catalog
from ..sql.store import Store
from ..sql.urls import display_db

#: (kind, count, first seed, parameters) of the demo catalog
MAPS: list[tuple[str, int, int, dict[str, Any]]] = [
    ("caves", 6, 1, {}),
    # rooms of at most 9x9 cells, 3 apart, and breakout enough: all ten fit every seed
    (
        "dungeon",
        6,
        1,
        {
            "width": 80,
            "height": 50,
            "rooms": 10,
            "room_max": 9,
            "room_distance": 3,
            "breakout": 1000,
        },
    ),
    ("islands", 6, 1, {"width": 80, "height": 50}),
    ("cellular", 1, 7, {}),
]
SUDOKU_CLUES = (26, 28, 30, 32)


def _fresh_database(path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        candidate = path.with_name(path.name + suffix)
        if candidate.exists():
            candidate.unlink()


def run_demo(
    out: Path,
    db: str | None = None,
    *,
    echo: Callable[[str], Any] = print,
    workers: int | None = None,
) -> dict[str, Path]:
    """Run the tour into folder ``out``; returns the files it wrote by role.

    Without ``db`` the catalog is ``out/catalog.db``, replaced on every run.
    """
    from generators import sudoku
    from generators.maps import render

    started = time.perf_counter()
    out.mkdir(parents=True, exist_ok=True)
    if db is None:
        db_path = out / "catalog.db"
        _fresh_database(db_path)
        db = str(db_path)
    store = catalog.open_catalog(Store(db))
    where = display_db(store)
    echo(f"catalog: {where} (schema revision {_revision(store)})")

    for kind, count, seed, params in MAPS:
        stats = catalog.generate_into(
            store, kind, count, seed=seed, params=params, workers=workers or 1, refuse_short=True
        )
        echo(
            f"  generated {stats.count} {kind} map(s), seeds {seed}-{seed + count - 1}, "
            f"in {stats.seconds:.2f} s"
        )

    puzzles = [sudoku.generate(clues, seed=i) for i, clues in enumerate(SUDOKU_CLUES, 1)]
    entries = [
        sudoku.NamedPuzzle(f"demo {p.clues} clues, seed {p.seed}", p.puzzle, 0) for p in puzzles
    ]
    solutions = sudoku.solve_many(entries, workers=1)
    result = catalog.store_sudokus(store, "entityworks demo", entries, solutions)
    echo(
        f"  solved and stored {result.stored} generated sudokus "
        f"({', '.join(str(c) for c in SUDOKU_CLUES)} clues), every one unique: "
        f"{all(s is not None and s.unique for s in solutions)}"
    )

    files: dict[str, Path] = {"catalog": Path(where)}
    best = catalog.largest_maps(store, 1, kind="caves")[0]
    files["png"] = out / f"cave_{best.id}.png"
    render.to_png(best.grid, files["png"], block=4)
    small = catalog.find_maps(store, kind="cellular", limit=1)[0]
    files["ascii"] = out / f"cellular_{small.id}.txt"
    files["ascii"].write_text(render.to_ascii(small.grid) + "\n", encoding="utf-8")

    files.update(_export(store, out))
    echo(f"  exported sudoku_puzzles to {files['xml'].name} + {files['xsd'].name}")
    ((record, report),) = catalog.store_entropy(store, [files["png"]])
    echo(
        f"  entropy of {files['png'].name}: {report.entropy:.4f} bits per byte, "
        f"stored as entropy_reports id {record.id}"
    )

    counts = {name: store.count(cls) for name, cls in catalog.TABLES.items()}
    echo("")
    echo("tables: " + ", ".join(f"{name} {n} rows" for name, n in counts.items()))
    echo(
        f"largest cave: map {best.id}, {best.width}x{best.height}, "
        f"{best.region_count} region(s), {best.open_ratio:.0%} open"
    )
    echo("")
    echo(f"cellular cave {small.id} ({small.width}x{small.height}, seed {small.seed}):")
    echo(render.to_ascii(small.grid))
    echo("")
    echo("written:")
    for role, path in files.items():
        echo(f"  {role:<8} {path}")
    echo("")
    echo(f"done in {time.perf_counter() - started:.1f} s. Try:")
    echo(
        f"  entityworks query maps --db {where} -w region_count=1 -o -largest_region "
        f"--limit 5 -c id,kind,seed,width,height,open_ratio,largest_region"
    )
    echo(f"  entityworks render {best.id} --ascii - --db {where}")
    store.close()
    return files


def _revision(store: Store) -> str | None:
    from ..migrate import current

    return current(store)


def _export(store: Store, out: Path) -> dict[str, Path]:
    """Export the sudoku table to XML + XSD in the .NET DataTable shape."""
    xml, xsd = out / "sudoku_puzzles.xml", out / "sudoku_puzzles.xsd"
    store.export_xml(catalog.SudokuPuzzle, xml, xsd, order_by="id")
    return {"xml": xml, "xsd": xsd}

"""The performance page's figures are the benchmarks' record, rendered: no table is typed by
hand, none is missing, and each names its row and its peer."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _report() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_report", ROOT / "benchmarks" / "report.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_report"] = module
    spec.loader.exec_module(module)
    return module


report = _report()


def test_the_page_is_the_record_rendered() -> None:
    page = report.PAGE.read_text(encoding="utf-8")
    assert report.render(page, report.load_records()) == page, (
        "docs/explanation/performance.md differs from benchmarks/results/figures.jsonl: run "
        "`python benchmarks/report.py render`"
    )


def test_every_benchmark_run_has_figures_and_a_block_on_the_page() -> None:
    page = report.PAGE.read_text(encoding="utf-8")
    blocks = set(re.findall(r"<!-- figures: ([a-z_]+) -->", page))
    recorded = {r["bench"] for r in report.load_records()}
    assert set(report.RUNS) <= blocks, set(report.RUNS) - blocks
    assert set(report.RUNS) <= recorded, set(report.RUNS) - recorded


def test_every_figure_names_its_row_and_peer_and_is_consistent() -> None:
    for r in report.load_records():
        assert r["row"].strip() and r["peer"].strip() and r["work"].strip(), r
        assert r["peer_value"] > 0 and r["ours_value"] > 0, r
        expected = (
            r["peer_value"] / r["ours_value"]
            if r["lower_is_better"]
            else r["ours_value"] / r["peer_value"]
        )
        assert r["speed"] == pytest.approx(expected), r


def test_a_hand_edited_table_is_caught(tmp_path: Path) -> None:
    records = [
        {
            "bench": "store",
            "work": "SQLite insert_many",
            "row": "Mixed",
            "peer": "sqlite3 executemany",
            "unit": "rows/s",
            "peer_value": 400_000.0,
            "ours_value": 300_000.0,
            "lower_is_better": False,
            "speed": 0.75,
            "load": 1.0,
            "cores": 2,
            "cpu": "x",
            "python": "3.11",
        }
    ]
    page = (
        "<!-- figures: store -->\n<!-- /figures -->\n<!-- figures: behind -->\n<!-- /figures -->\n"
    )
    rendered = report.render(page, records)
    assert (
        "| SQLite insert_many | Mixed | sqlite3 executemany | 400,000 rows/s | 300,000 rows/s"
        " | **0.75x (behind)** |" in rendered
    )
    assert "- SQLite insert_many (Mixed): 0.75x the speed of sqlite3 executemany" in rendered
    assert report.render(rendered, records) == rendered
    edited = rendered.replace("300,000 rows/s", "390,000 rows/s")
    assert report.render(edited, records) != edited
    path = tmp_path / "figures.jsonl"
    path.write_text(json.dumps(records[0]) + "\n", encoding="utf-8")
    assert report.load_records(path) == records


def _cell(work: str, row: str, peer: float, ours: float, load: float = 1.5) -> dict[str, object]:
    return {
        "bench": "matrix",
        "work": work,
        "row": row,
        "peer": "raw driver",
        "unit": "rows/s",
        "peer_value": peer,
        "ours_value": ours,
        "lower_is_better": False,
        "speed": ours / peer,
        "load": load,
        "cores": 2,
        "cpu": "x",
        "python": "3.11",
    }


def test_the_matrix_is_a_table_per_backend_and_names_its_worst_cells() -> None:
    records = [
        _cell("SQLite insert_many keys given", "int 10k", 100.0, 120.0),
        _cell("SQLite insert_many keys given", "int 100k", 100.0, 90.0),
        _cell("SQLite select -> objects", "int 10k", 100.0, 50.0, load=2.25),
        _cell("SQLite select -> objects", "int 100k", 100.0, 97.0),
        _cell("SQLite insert_many keys given", "JSON list[int] 10k", 100.0, 70.0),
        _cell("MariaDB insert_many keys given", "wide Optional 100k", 200.0, 300.0),
    ]
    page = (
        "<!-- figures: matrix -->\n<!-- /figures -->\n<!-- figures: behind -->\n<!-- /figures -->\n"
    )
    rendered = report.render(page, records)
    header = (
        "| type | insert_many keys given, 10k | insert_many keys given, 100k "
        "| select -> objects, 10k | select -> objects, 100k |"
    )
    assert header in rendered
    assert "| int | 1.20x | **0.90x** | **0.50x** | 0.97x |" in rendered
    assert "| JSON list[int] | **0.70x** |  |  |  |" in rendered
    assert "| wide Optional |  | 1.50x |  |  |" in rendered
    # a backend's table has no row for a type it has no cell of
    sqlite_table = rendered.split("**SQLite**")[1].split("**MariaDB**")[0]
    assert "wide Optional" not in sqlite_table
    assert "load 1.50-2.25" in sqlite_table
    worst = rendered.split("**The worst cells**")[1]
    assert (
        "- SQLite: select -> objects, int 10k: 0.50x (ours 50.0 rows/s, raw driver "
        "100 rows/s, load 2.25); insert_many keys given, JSON list[int] 10k: 0.70x" in worst
    )
    assert "- MariaDB: insert_many keys given, wide Optional 100k: 1.50x" in worst
    # the "behind" list counts the matrix's cells instead of naming each
    assert "- The matrix of types, paths and backends: 3 of 6 cells, from 0.50x" in rendered
    assert "select -> objects (int 10k)" not in rendered
    assert report.render(rendered, records) == rendered

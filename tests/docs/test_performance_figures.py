"""The performance page's figures are the benchmarks' record, rendered: no table is typed by
hand, none is missing, and each names its row and its peer."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
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
    blocks = set(re.findall(r"<!-- figures: ([a-z0-9_-]+) -->", page))
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


def _cell(
    work: str,
    row: str,
    peer: float,
    ours: float,
    load: float = 1.5,
    bench: str = "matrix",
    unit: str = "rows/s",
) -> dict[str, object]:
    memory = unit == "MB"
    return {
        "bench": bench,
        "work": work,
        "row": row,
        "peer": "raw driver",
        "unit": unit,
        "peer_value": peer,
        "ours_value": ours,
        "lower_is_better": memory,
        "speed": peer / ours if memory else ours / peer,
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


def test_the_million_row_matrix_has_its_block_and_names_its_largest_peaks() -> None:
    big = "matrix-1m"
    records = [
        _cell("SQLite insert_many(generator), peak MB", "int 1M", 2.0, 40.0, bench=big, unit="MB"),
        _cell("SQLite insert_many keys given", "int 1M", 100.0, 90.0, bench=big),
        _cell(
            "SQLite insert_many(generator), peak MB", "wide 1M", 8.0, 120.0, bench=big, unit="MB"
        ),
        _cell("SQLite iterate select, peak MB", "int 1M", 3.0, 3.0, bench=big, unit="MB"),
        _cell("MariaDB iterate select, peak MB", "wide 1M", 9.0, 6.0, bench=big, unit="MB"),
        _cell("SQLite insert_many keys given", "int 10k", 100.0, 120.0),
    ]
    page = (
        "<!-- figures: matrix -->\n<!-- /figures -->\n<!-- figures: matrix-1m -->\n"
        "<!-- /figures -->\n<!-- figures: behind -->\n<!-- /figures -->\n"
    )
    rendered = report.render(page, records)
    small, million = rendered.split("<!-- figures: matrix-1m -->")
    assert "int 1M" not in small and "1M" not in small.split("<!-- /figures -->")[0]
    block = million.split("<!-- /figures -->")[0]
    assert (
        "| type | insert_many keys given, 1M | insert_many(generator), peak MB, 1M "
        "| iterate select, peak MB, 1M |" in block
    )
    # a memory cell: the peer's MB above the baseline over ours, and ours
    assert "| int | **0.90x** | **0.05x** (40.0 MB) | 1.00x (3.00 MB) |" in block
    assert "| wide |  | **0.07x** (120 MB) |  |" in block
    assert "| wide |  |  | 1.50x (6.00 MB) |" in block
    assert "the peer's MB above the baseline / ours" in block
    worst = block.split("**The worst cells**")[1].split("**The largest peaks**")[0]
    assert "- SQLite: insert_many keys given, int 1M: 0.90x" in worst
    assert "MB" not in worst and "MariaDB" not in worst
    peaks = block.split("**The largest peaks**")[1]
    assert (
        "- SQLite: insert_many(generator), peak MB, wide 1M: 0.07x (ours 120 MB, raw driver "
        "8.00 MB, load 1.50); insert_many(generator), peak MB, int 1M: 0.05x (ours 40.0 MB"
    ) in peaks
    assert "- MariaDB: iterate select, peak MB, wide 1M: 1.50x (ours 6.00 MB" in peaks
    # the "behind" list: the speeds and the peaks counted apart, the largest peak named
    behind = rendered.split("<!-- figures: behind -->")[1]
    assert "- The matrix at one million rows: 1 of 1 cells, from 0.90x" in behind
    assert (
        "- The matrix at one million rows, peak memory: ours above the peer's in 2 of 4 cells, "
        "from 0.05x; at most 120 MB above the interpreter's (SQLite insert_many(generator), "
        "peak MB, wide 1M)"
    ) in behind
    assert "The matrix of types" not in behind  # nothing behind in the 10k matrix
    assert report.render(rendered, records) == rendered
    assert "matrix-1m" in report.RUNS and "matrix-1m" in report.MATRICES


def test_a_memory_cell_is_measured_in_subprocesses_and_recorded(tmp_path: Path) -> None:
    """The memory paths on SQLite, 300 rows: each side's child writes (and reads) the rows,
    checked against the rows made again, and the parent records both figures."""
    fresh = tmp_path / "figures.jsonl"
    env = {
        **os.environ,
        "ENTITYWORKS_BENCH_RECORD": str(fresh),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    command = [
        sys.executable,
        str(ROOT / "benchmarks" / "bench_matrix.py"),
        "--record-as",
        "matrix-test",
        "--backends",
        "sqlite",
        "--types",
        "wide Optional",
        "--rows",
        "300",
        "--memory",
        "--paths",
        "given",
        "--repeat",
        "1",
    ]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    records = report.load_records(fresh)
    assert [(r["bench"], r["work"], r["row"], r["unit"]) for r in records] == [
        ("matrix-test", "SQLite insert_many(generator), peak MB", "wide Optional 300", "MB"),
        ("matrix-test", "SQLite iterate select, peak MB", "wide Optional 300", "MB"),
        ("matrix-test", "SQLite insert_many keys given", "wide Optional 300", "rows/s"),
    ]
    for r in records[:2]:
        assert r["lower_is_better"] and r["peer_value"] >= 1.0 and r["ours_value"] >= 1.0, r
        assert r["speed"] == pytest.approx(r["peer_value"] / r["ours_value"])
    assert records[0]["peer"] == "sqlite3 executemany of a generator"
    assert "insert_many(generator), peak MB" in done.stdout


def _bench_matrix() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "bench_matrix_under_test", ROOT / "benchmarks" / "bench_matrix.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_matrix_under_test"] = module
    spec.loader.exec_module(module)
    return module


def test_a_failing_or_late_memory_child_stops_the_run_naming_it(tmp_path: Path) -> None:
    matrix = _bench_matrix()
    args = ["ours", "write", "nosuch", "int", "10", str(tmp_path), "-"]
    with pytest.raises(RuntimeError, match=r"memory child \(ours write nosuch int 10\) failed"):
        matrix._child(args, 600)
    args = ["ours", "write", "sqlite", "int", "10", str(tmp_path), "-"]
    with pytest.raises(RuntimeError, match=r"\(ours write sqlite int 10\) did not finish in 0 s"):
        matrix._child(args, 0.01)


def test_a_memory_figure_behind_is_said_in_mb_not_as_a_speed() -> None:
    record = _cell("SQLite insert_many from a generator", "Row8", 0.5, 25.0, unit="MB")
    record["bench"] = "pipeline"
    rendered = report.render("<!-- figures: behind -->\n<!-- /figures -->\n", [record])
    assert (
        "- SQLite insert_many from a generator (Row8): 25.0 MB against 0.50 MB of raw driver "
        "(0.02x)\n" in rendered
    )
    assert "the speed of" not in rendered

"""Resource bounds: inputs far larger than what a job should hold in memory are streamed, or
refused with a clear error, in a child process whose peak RSS (``getrusage``) is measured."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.reliability.conftest import run_child

XML_MB = 300
ENTROPY_BYTES = 2 << 30  # 2 GiB, generated on the fly: no disk used
PAYLOAD = "p" * 1000


def rss(*args: str) -> dict[str, Any]:
    done = run_child("rss", *args, timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def growth(result: dict[str, Any]) -> float:
    return result["peak_mb"] - result["baseline_mb"]


def write_big_xml(path: Path, megabytes: int) -> int:
    """A valid CrashRow document of about ``megabytes`` MB, written a block at a time."""
    rows = 0
    with open(path, "w", encoding="utf-8") as f:
        f.write("<?xml version='1.0' encoding='utf-8' standalone='yes'?>\n<DocumentElement>\n")
        while f.tell() < megabytes << 20:
            block = []
            for _ in range(1000):
                block.append(
                    f"<crash_row><id>{rows}</id><batch>0</batch><seq>{rows}</seq>"
                    f"<size>0</size><payload>{PAYLOAD}</payload></crash_row>\n"
                )
                rows += 1
            f.write("".join(block))
        f.write("</DocumentElement>\n")
    return rows


@pytest.fixture(scope="module")
def big_xml(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    path = tmp_path_factory.mktemp("big") / "big.xml"
    rows = write_big_xml(path, XML_MB)
    yield path, rows
    path.unlink()


@pytest.mark.slow
def test_huge_xml_streams_in_bounded_memory(big_xml, tmp_path, figures):
    path, rows = big_xml
    streamed = rss("xml-iter", str(path))
    assert streamed.get("rows") == rows, streamed
    assert growth(streamed) < 120, streamed
    imported = rss("xml-import", str(path), str(tmp_path / "big.db"))
    assert imported.get("rows") == imported.get("stored") == rows, imported
    assert growth(imported) < 150, imported
    figures["resources_xml"] = {
        "file_mb": round(path.stat().st_size / 2**20),
        "rows": rows,
        "iter_growth_mb": round(growth(streamed), 1),
        "iter_seconds": streamed["seconds"],
        "import_growth_mb": round(growth(imported), 1),
        "import_seconds": imported["seconds"],
    }


@pytest.mark.slow
def test_huge_text_node_and_deep_nesting_are_refused(tmp_path, figures):
    node = tmp_path / "node.xml"
    with open(node, "w") as f:
        f.write(
            "<DocumentElement><crash_row><id>1</id><batch>0</batch><seq>0</seq>"
            "<size>0</size><payload>"
        )
        for _ in range(64):
            f.write("x" * (1 << 20))
        f.write("</payload></crash_row></DocumentElement>")
    result = rss("xml-iter", str(node))
    assert result.get("error") == "XMLImportError", result
    assert growth(result) < 120, result
    deep = tmp_path / "deep.xml"
    deep.write_text("<DocumentElement>" + "<crash_row>" * 100_000)
    nested = rss("xml-iter", str(deep))
    assert nested.get("error") == "XMLImportError", nested
    figures["resources_xml_refused"] = {
        "text_node_mb": 64,
        "message": result["message"][:160],
        "growth_mb": round(growth(result), 1),
        "nesting_message": nested["message"][:160],
    }


@pytest.mark.slow
def test_huge_puzzle_files_are_refused_in_bounded_memory(tmp_path, figures):
    line = "4.....8.5.3..........7......2.....6.....8.4......1.......6.3.7.5..2.....1.4......"
    lines = tmp_path / "lines.txt"
    with open(lines, "w") as f:
        block = (line + "\n") * 10_000
        while f.tell() < 200 << 20:
            f.write(block)
    sparse = tmp_path / "sparse.txt"
    with open(sparse, "wb") as f:
        f.truncate(1 << 30)  # 1 GiB of NUL bytes, one "line", no disk blocks
    out: dict[str, Any] = {}
    for name, path, kind in (
        ("lines", lines, "sudoku-lines"),
        ("sparse_euler", sparse, "sudoku-euler"),
        ("sparse_lines", sparse, "sudoku-lines"),
    ):
        result = rss(kind, str(path))
        assert result.get("error") == "PuzzleFileError", result
        assert "MiB" in result["message"]
        assert growth(result) < 150, result
        out[name] = {
            "file_mb": path.stat().st_size >> 20,
            "growth_mb": round(growth(result), 1),
            "seconds": result["seconds"],
        }
    figures["resources_puzzles"] = out
    os.unlink(lines)


@pytest.mark.slow
def test_entropy_of_2_gib_runs_in_bounded_memory(figures):
    result = rss("entropy-stream", str(ENTROPY_BYTES), "7")
    assert result.get("size") == ENTROPY_BYTES, result
    assert result["distribution_ok"] and result["entropy"] > 7.99
    assert growth(result) < 100, result
    figures["resources_entropy"] = {
        "bytes": ENTROPY_BYTES,
        "growth_mb": round(growth(result), 1),
        "seconds": result["seconds"],
    }

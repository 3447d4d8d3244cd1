"""The docs' performance figures, from the benchmarks themselves.

    python benchmarks/report.py run [--only store point ...]   # run, record, render the page
    python benchmarks/report.py render                          # re-render from the record
    python benchmarks/report.py render --check                  # fail when the page differs

``run`` starts each benchmark below with ``ENTITYWORKS_BENCH_RECORD`` set, so that every
figure the benchmark prints (ours and its peer, measured alternately in the same run) is also
appended to ``benchmarks/results/figures.jsonl`` (with ``--only``, the named benchmarks' lines
are replaced and the others kept). ``render`` writes the tables between the
``<!-- figures: NAME -->`` and ``<!-- /figures -->`` markers of
``docs/explanation/performance.md`` from that file alone; the docs test runs ``--check``, so
a table can neither be typed by hand nor go stale against the record.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results" / "figures.jsonl"
PAGE = ROOT / "docs" / "explanation" / "performance.md"

#: What ``run`` starts, by the name the records carry (``_common.record``'s first argument).
RUNS: dict[str, list[str]] = {
    "store": ["bench_store.py", "--rows", "200000", "--mariadb-rows", "100000", "--repeat", "5"],
    "point": ["bench_point.py"],
    "pipeline": ["bench_pipeline.py", "--rows", "100000", "--repeat", "5"],
    "frames": [
        "bench_frames.py",
        "--rows",
        "1000000",
        "--per-type-rows",
        "200000",
        "--repeat",
        "3",
    ],
    "xml": ["bench_xml.py", "--rows", "200000"],
    "fov": ["bench_maps.py", "--fov", "--quick"],
    "sudoku": ["bench_sudoku.py", "--tdoku-only", "--tdoku", "1000", "--repeat", "3"],
    "entropy": ["bench_entropy.py", "--mb", "100"],
    "generate": ["bench_generate.py", "--rounds", "5"],
    "matrix": ["bench_matrix.py", "--rows", "10000,100000", "--repeat", "3"],
    "columnar": ["bench_columnar.py", "--rows", "100000", "--repeat", "3"],
}

#: Benchmarks whose figures are rendered as a matrix (``matrix_tables``), not one line each:
#: the "behind" list counts their cells and leaves naming them to the matrix's own block.
MATRICES = {"matrix"}

#: How many of a backend's lowest cells the matrix block names.
WORST = 3

#: A figure within this band of the peer's is "level"; below it, "behind".
LEVEL = 0.05

_BLOCK = re.compile(
    r"(<!-- figures: (?P<name>[a-z_]+) -->\n)(?P<body>.*?)(<!-- /figures -->)", re.S
)


def load_records(path: Path = RESULTS) -> list[dict[str, Any]]:
    """The recorded figures, in the order they were measured."""
    if not path.exists():
        return []
    return [json.loads(text) for text in path.read_text(encoding="utf-8").splitlines() if text]


def _value(value: float, unit: str) -> str:
    if unit == "us/call":
        return f"{value:,.1f} µs"
    digits = 0 if value >= 100 else 1 if value >= 10 else 2
    return f"{value:,.{digits}f} {unit}"


def _verdict(speed: float) -> str:
    if speed >= 1 + LEVEL:
        return f"{speed:.2f}x"
    if speed >= 1 - LEVEL:
        return f"{speed:.2f}x (level)"
    return f"**{speed:.2f}x (behind)**"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def table(records: Iterable[dict[str, Any]]) -> str:
    """A Markdown table of figures: what, on which row, against which peer, both, the ratio."""
    lines = [
        "| work | row | peer | peer's figure | ours | our speed / peer's |",
        "| --- | --- | --- | ---: | ---: | ---: |",
    ]
    for r in records:
        lines.append(
            f"| {_cell(r['work'])} | {_cell(r['row'])} | {_cell(r['peer'])} | "
            f"{_value(r['peer_value'], r['unit'])} | {_value(r['ours_value'], r['unit'])}"
            f" | {_verdict(r['speed'])} |"
        )
    return "\n".join(lines) + "\n"


def _machine(records: list[dict[str, Any]]) -> str:
    # a benchmark pinned to one core records one: the machine is the largest count seen
    machines: dict[tuple[str, str], int] = {}
    for r in records:
        key = (r["cpu"], r["python"])
        machines[key] = max(machines.get(key, 0), r["cores"])
    said = "; ".join(
        f"{cores} cores ({cpu}), Python {python}"
        for (cpu, python), cores in sorted(machines.items())
    )
    return f"Measured on {said}, by `python benchmarks/report.py run` ({len(records)} figures).\n"


def _behind(records: list[dict[str, Any]]) -> str:
    late = [r for r in records if r["speed"] < 1 - LEVEL and r["bench"] not in MATRICES]
    text = "".join(
        f"- {r['work']} ({r['row']}): {r['speed']:.2f}x the speed of {r['peer']}\n" for r in late
    )
    for name in sorted(MATRICES):
        cells = [r for r in records if r["bench"] == name]
        behind = [r for r in cells if r["speed"] < 1 - LEVEL]
        if behind:
            text += (
                f"- The {name} of types, paths and backends: {len(behind)} of {len(cells)} "
                f"cells, from {min(r['speed'] for r in behind):.2f}x (its worst cells are "
                "named below it)\n"
            )
    return text or "Nowhere: every figure is level with its peer or ahead of it.\n"


def _split_matrix(r: dict[str, Any]) -> tuple[str, str, str, str]:
    """(backend, path, row, size) of a matrix cell: its work is ``"<Backend> <path>"``,
    its row ``"<type> <size>"``."""
    backend, _, path = r["work"].partition(" ")
    row, _, size = r["row"].rpartition(" ")
    return backend, path, row, size


def _ratio(speed: float) -> str:
    return f"**{speed:.2f}x**" if speed < 1 - LEVEL else f"{speed:.2f}x"


def matrix_tables(records: list[dict[str, Any]]) -> str:
    """One table per backend (a row per type, a column per path and size, each cell our
    speed over the peer's, bold when behind) and, per backend, its lowest cells."""
    backends: list[str] = []
    paths: list[str] = []
    rows: list[str] = []
    sizes: list[str] = []
    cells: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    for r in records:
        key = _split_matrix(r)
        for seen, value in zip((backends, paths, rows, sizes), key, strict=True):
            if value not in seen:
                seen.append(value)
        cells[key] = r  # a cell measured twice: the later figure
    columns = [(path, size) for path in paths for size in sizes]
    out: list[str] = []
    for backend in backends:
        mine = {k: r for k, r in cells.items() if k[0] == backend}
        peers = sorted({r["peer"] for r in mine.values()})
        loads = [r["load"] for r in mine.values()]
        out.append(
            f"**{backend}** (our speed / the peer's; peers: {'; '.join(peers)}; "
            f"load {min(loads):.2f}-{max(loads):.2f}):\n\n"
        )
        out.append("| type | " + " | ".join(f"{p}, {s}" for p, s in columns) + " |\n")
        out.append("| --- |" + " ---: |" * len(columns) + "\n")
        for row in rows:
            got = [mine.get((backend, p, row, s)) for p, s in columns]
            if not any(got):
                continue
            out.append(
                f"| {_cell(row)} | "
                + " | ".join(_ratio(r["speed"]) if r else "" for r in got)
                + " |\n"
            )
        out.append("\n")
    out.append("**The worst cells** (lowest ratios) of each backend:\n\n")
    for backend in backends:
        worst = sorted((r for k, r in cells.items() if k[0] == backend), key=lambda r: r["speed"])
        named = "; ".join(
            f"{_split_matrix(r)[1]}, {r['row']}: {r['speed']:.2f}x (ours "
            f"{_value(r['ours_value'], r['unit'])}, {r['peer']} "
            f"{_value(r['peer_value'], r['unit'])}, load {r['load']:.2f})"
            for r in worst[:WORST]
        )
        out.append(f"- {backend}: {named}\n")
    return "".join(out)


def render(page: str, records: list[dict[str, Any]]) -> str:
    """The page with every figures block regenerated from ``records``."""

    def block(match: re.Match[str]) -> str:
        name = match["name"]
        if name == "machine":
            body = _machine(records)
        elif name == "behind":
            body = _behind(records)
        else:
            mine = [r for r in records if r["bench"] == name]
            if not mine:
                raise SystemExit(
                    f"no recorded figures for the {name!r} block; run "
                    f"`python benchmarks/report.py run --only {name}`"
                )
            body = matrix_tables(mine) if name in MATRICES else table(mine)
        return f"{match[1]}{body}{match[4]}"

    return _BLOCK.sub(block, page)


def run(names: list[str]) -> None:
    """Run the named benchmarks with the record on; replace their lines in the results."""
    kept = [r for r in load_records() if r["bench"] not in names]
    with tempfile.TemporaryDirectory() as tmp:
        fresh = Path(tmp) / "figures.jsonl"
        env = {
            **os.environ,
            "ENTITYWORKS_BENCH_RECORD": str(fresh),
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        }
        for name in names:
            command = [sys.executable, str(HERE / RUNS[name][0]), *RUNS[name][1:]]
            print(f"$ {' '.join(command[1:])}", flush=True)
            subprocess.run(command, env=env, check=True)
        records = kept + load_records(fresh)
    order = list(RUNS)
    records.sort(key=lambda r: order.index(r["bench"]) if r["bench"] in order else len(order))
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    running = sub.add_parser("run", help="run the benchmarks, record, render the page")
    running.add_argument("--only", nargs="+", choices=list(RUNS), default=list(RUNS))
    rendering = sub.add_parser("render", help="render the page from the record")
    rendering.add_argument("--check", action="store_true", help="fail when the page differs")
    args = parser.parse_args(argv)
    if args.command == "run":
        run(args.only)
    page = PAGE.read_text(encoding="utf-8")
    fresh = render(page, load_records())
    if getattr(args, "check", False):
        if fresh != page:
            print(
                f"{PAGE.relative_to(ROOT)} differs from {RESULTS.relative_to(ROOT)}: run "
                "`python benchmarks/report.py render`",
                file=sys.stderr,
            )
            return 1
        return 0
    PAGE.write_text(fresh, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

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
    "matrix": ["bench_matrix.py", "--rows", "10000,100000", "--repeat", "5"],
    # one million rows on SQLite: the worst rows of the matrix and int for reference, timed
    # once, and the peak memory of insert_many from a generator (each side in a subprocess
    # of its own); the servers' one-million-row figures are bench_pipeline's (Row8)
    "matrix-1m": [
        "bench_matrix.py",
        "--record-as",
        "matrix-1m",
        "--rows",
        "1000000",
        "--repeat",
        "1",
        "--backends",
        "sqlite",
        "--types",
        "int,Decimal,AwareDatetime,wide",
        "--paths",
        "given,select,memory",
    ],
    "columnar": ["bench_columnar.py", "--rows", "100000", "--repeat", "3"],
}

#: Benchmarks whose figures are rendered as a matrix (``matrix_tables``), not one line each,
#: and what the "behind" list calls them: it counts their cells and leaves naming them to
#: the matrix's own block.
MATRICES = {
    "matrix": "The matrix of types, paths and backends",
    "matrix-1m": "The matrix at one million rows",
}

#: The unit of a memory figure (MB above the interpreter's baseline, lower is better): a
#: matrix's memory cells are counted and named apart from its speeds.
MEMORY_UNIT = "MB"

#: How many of a backend's lowest cells the matrix block names.
WORST = 3

#: A figure within this band of the peer's is "level"; below it, "behind".
LEVEL = 0.05

_BLOCK = re.compile(
    r"(<!-- figures: (?P<name>[a-z0-9_-]+) -->\n)(?P<body>.*?)(<!-- /figures -->)", re.S
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


def _late(r: dict[str, Any]) -> str:
    """One line of the "behind" list: a speed, or a memory figure with both sides' MB."""
    if r["unit"] == MEMORY_UNIT:
        return (
            f"- {r['work']} ({r['row']}): {_value(r['ours_value'], MEMORY_UNIT)} against "
            f"{_value(r['peer_value'], MEMORY_UNIT)} of {r['peer']} ({r['speed']:.2f}x)\n"
        )
    return f"- {r['work']} ({r['row']}): {r['speed']:.2f}x the speed of {r['peer']}\n"


def _behind(records: list[dict[str, Any]]) -> str:
    late = [r for r in records if r["speed"] < 1 - LEVEL and r["bench"] not in MATRICES]
    text = "".join(map(_late, late))
    for name, title in MATRICES.items():
        mine = [r for r in records if r["bench"] == name]
        cells = [r for r in mine if r["unit"] != MEMORY_UNIT]
        behind = [r for r in cells if r["speed"] < 1 - LEVEL]
        if behind:
            text += (
                f"- {title}: {len(behind)} of {len(cells)} "
                f"cells, from {min(r['speed'] for r in behind):.2f}x (its worst cells are "
                "named below it)\n"
            )
        memory = [r for r in mine if r["unit"] == MEMORY_UNIT]
        more = [r for r in memory if r["speed"] < 1 - LEVEL]
        if more:
            top = max(memory, key=lambda r: r["ours_value"])
            backend, path, _, _ = _split_matrix(top)
            text += (
                f"- {title}, peak memory: ours above the peer's in {len(more)} of "
                f"{len(memory)} cells, from {min(r['speed'] for r in more):.2f}x; at most "
                f"{_value(top['ours_value'], MEMORY_UNIT)} above the interpreter's "
                f"({backend} {path}, {top['row']})\n"
            )
    return text or "Nowhere: every figure is level with its peer or ahead of it.\n"


def _split_matrix(r: dict[str, Any]) -> tuple[str, str, str, str]:
    """(backend, path, row, size) of a matrix cell: its work is ``"<Backend> <path>"``,
    its row ``"<type> <size>"``."""
    backend, _, path = r["work"].partition(" ")
    row, _, size = r["row"].rpartition(" ")
    return backend, path, row, size


def _ratio(r: dict[str, Any]) -> str:
    """A matrix cell: the ratio (bold when behind); a memory cell adds our MB above."""
    speed = r["speed"]
    text = f"**{speed:.2f}x**" if speed < 1 - LEVEL else f"{speed:.2f}x"
    if r["unit"] == MEMORY_UNIT:
        text += f" ({_value(r['ours_value'], MEMORY_UNIT)})"
    return text


def _named(r: dict[str, Any]) -> str:
    return (
        f"{_split_matrix(r)[1]}, {r['row']}: {r['speed']:.2f}x (ours "
        f"{_value(r['ours_value'], r['unit'])}, {r['peer']} "
        f"{_value(r['peer_value'], r['unit'])}, load {r['load']:.2f})"
    )


def matrix_tables(records: list[dict[str, Any]]) -> str:
    """One table per backend (a row per type, a column per path and size, each cell our
    speed over the peer's, bold when behind; a memory cell the peer's MB above the baseline
    over ours, and ours) and, per backend, its lowest cells and its largest peaks."""
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
    # the timed paths first, then the memory paths, each in the order measured
    peak_paths = {k[1] for k, r in cells.items() if r["unit"] == MEMORY_UNIT}
    paths.sort(key=lambda path: path in peak_paths)
    columns = [(path, size) for path in paths for size in sizes]
    out: list[str] = []
    for backend in backends:
        mine = {k: r for k, r in cells.items() if k[0] == backend}
        peers = sorted({r["peer"] for r in mine.values()})
        loads = [r["load"] for r in mine.values()]
        memory = (
            "; a peak MB column: the peer's MB above the baseline / ours, ours in parentheses"
            if any(r["unit"] == MEMORY_UNIT for r in mine.values())
            else ""
        )
        out.append(
            f"**{backend}** (our speed / the peer's{memory}; peers: {'; '.join(peers)}; "
            f"load {min(loads):.2f}-{max(loads):.2f}):\n\n"
        )
        out.append("| type | " + " | ".join(f"{p}, {s}" for p, s in columns) + " |\n")
        out.append("| --- |" + " ---: |" * len(columns) + "\n")
        for row in rows:
            got = [mine.get((backend, p, row, s)) for p, s in columns]
            if not any(got):
                continue
            out.append(
                f"| {_cell(row)} | " + " | ".join(_ratio(r) if r else "" for r in got) + " |\n"
            )
        out.append("\n")
    speeds = {k: r for k, r in cells.items() if r["unit"] != MEMORY_UNIT}
    peaks = {k: r for k, r in cells.items() if r["unit"] == MEMORY_UNIT}
    if speeds:
        out.append("**The worst cells** (lowest ratios) of each backend:\n\n")
        for backend in backends:
            worst = sorted((r for k, r in speeds.items() if k[0] == backend), key=_speed)
            if worst:
                out.append(f"- {backend}: {'; '.join(map(_named, worst[:WORST]))}\n")
    if speeds and peaks:
        out.append("\n")
    if peaks:
        out.append("**The largest peaks** (our MB above the baseline) of each backend:\n\n")
        for backend in backends:
            worst = sorted(
                (r for k, r in peaks.items() if k[0] == backend), key=_ours, reverse=True
            )
            if worst:
                out.append(f"- {backend}: {'; '.join(map(_named, worst[:WORST]))}\n")
    return "".join(out)


def _speed(r: dict[str, Any]) -> float:
    return float(r["speed"])


def _ours(r: dict[str, Any]) -> float:
    return float(r["ours_value"])


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

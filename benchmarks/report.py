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
}

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
    late = [r for r in records if r["speed"] < 1 - LEVEL]
    if not late:
        return "Nowhere: every figure is level with its peer or ahead of it.\n"
    return "".join(
        f"- {r['work']} ({r['row']}): {r['speed']:.2f}x the speed of {r['peer']}\n" for r in late
    )


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
            body = table(mine)
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

"""Dataclasses <-> Arrow throughput against pyarrow's own dict path, timed in the same run.

    python benchmarks/bench_frames.py [--rows 200000] [--repeat 3]

To Arrow: ``frames.to_arrow`` against ``pa.Table.from_pylist([asdict(r) ...])``.
From Arrow: ``frames.from_arrow`` against ``[cls(**d) for d in table.to_pylist()]``.
Both sides start from the same rows / the same table and must produce equal results.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import Row8, alternate, line, make_rows  # noqa: E402

from entityworks.arrow import from_arrow, to_arrow  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    n, repeat = args.rows, args.repeat
    rows = make_rows(n)

    tables: dict[str, pa.Table] = {}
    base, ours = alternate(lambda: tables.__setitem__(
        "base", pa.Table.from_pylist([dataclasses.asdict(r) for r in rows])),
        lambda: tables.__setitem__("ours", to_arrow(Row8, rows)), repeat=repeat)
    assert tables["ours"].to_pylist() == tables["base"].to_pylist()
    line("dataclasses -> Arrow", "from_pylist(asdict)", n / base, n / ours)

    table = tables["ours"]
    results: dict[str, list[Row8]] = {}
    base, ours = alternate(lambda: results.__setitem__(
        "base", [Row8(**d) for d in table.to_pylist()]),
        lambda: results.__setitem__("ours", from_arrow(Row8, table)), repeat=repeat)
    assert results["ours"] == results["base"] == rows
    line("Arrow -> dataclasses", "to_pylist + cls(**d)", n / base, n / ours)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Dataclasses <-> Arrow / pandas / Parquet throughput against pyarrow's own column path,
timed in the same run, alternating.

    python benchmarks/bench_frames.py [--rows 1000000] [--per-type-rows 200000] [--repeat 3]
    python benchmarks/bench_frames.py --quick        # 200k Mixed rows, 100k per type

The row is ``Mixed`` (int key, int, float, str, bool, datetime, ``str | None`` 20 % None,
2-place Decimal), plus one row class per type for Arrow. The strongest peer does the same
conversions inside its clock:

* to Arrow: rows -> column lists (``list(map(attrgetter(name), rows))``, faster than
  ``zip(*map(attrgetter(...)))``), the Decimal column's exponents (the ``scale`` beside ``value`` in
  our ``amount`` struct; one ``same_quantum`` pass when they are all the same, else ``as_tuple``),
  ``pa.Table.from_pydict(columns, schema)`` with the schema our table has (given to the
  peer for free, the fitted decimal type included);
* to pandas: the same table ``.to_pandas(types_mapper=pd.ArrowDtype)`` (our frame's dtypes);
* Parquet: the same table through ``pq.write_table`` (ours: ``write_parquet``, which writes
  a temporary file and renames it);
* back: ``table.column(name).to_pylist()`` per column -> ``map(cls, *columns)``; from
  pandas through ``pa.Table.from_pandas``; from Parquet through ``pq.read_table``.

Outputs are checked equal once (tables, frames, the objects). ``pa.Table.from_pylist`` of
``dataclasses.asdict`` rows, a weak peer, is printed beside the to-Arrow line. ``uptime`` is
printed first.
"""

from __future__ import annotations

import argparse
import dataclasses
import subprocess
import sys
import tempfile
from operator import attrgetter, countOf
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import Mixed, alternate, make_mixed, make_per_type, record  # noqa: E402

from entityworks.arrow import (  # noqa: E402
    from_arrow,
    from_pandas,
    read_parquet,
    to_arrow,
    to_pandas,
    write_parquet,
)


def report(path: str, row: str, n: int, peer_name: str, peer: float, ours: float) -> None:
    print(
        f"{path:<22} {row:<9} {n:>9,} rows  peer {peer_name}: {n / peer:>12,.0f} rows/s   "
        f"ours: {n / ours:>12,.0f} rows/s   ratio {peer / ours:5.2f}x",
        flush=True,
    )
    record("frames", path, row, peer_name, n / peer, n / ours, "rows/s")


def peer_scales(column: list[Any]) -> list[Any]:
    """The peer's exponents: one for the whole column when ``same_quantum`` says so."""
    first = column[0] if column else None
    if first is not None and countOf(map(first.same_quantum, column), True) == len(column):
        return [-first.as_tuple().exponent] * len(column)
    return [None if d is None else -d.as_tuple().exponent for d in column]


def peer_table(cls: type, rows: list[Any], schema: pa.Schema) -> pa.Table:
    """The peer's table: column lists and ``from_pydict`` with the known schema."""
    names = [f.name for f in dataclasses.fields(cls)]
    columns: dict[str, Any] = {name: list(map(attrgetter(name), rows)) for name in names}
    for name in names:
        kind = schema.field(name).type
        if pa.types.is_struct(kind):  # a Decimal and its exponents, as ours keeps them
            values = columns[name]
            own = pa.array(values, type=kind.field("value").type)
            columns[name] = pa.StructArray.from_arrays(
                [own, pa.array(peer_scales(values), type=kind.field("scale").type)],
                fields=list(kind),
                mask=own.is_null() if own.null_count else None,
            )
    return pa.Table.from_pydict(columns, schema=schema)


def peer_objects(cls: type, table: pa.Table) -> list[Any]:
    names = [f.name for f in dataclasses.fields(cls)]
    return list(
        map(
            cls,
            *(
                (
                    pc.struct_field(table.column(name), "value")
                    if pa.types.is_struct(table.schema.field(name).type)
                    else table.column(name)
                ).to_pylist()
                for name in names
            ),
        )
    )


def to_side(
    cls: type, row: str, rows: list[Any], repeat: int, workdir: Path, frames: bool
) -> pa.Table:
    n = len(rows)
    ours_table = to_arrow(cls, rows)
    schema = ours_table.schema
    out: dict[str, Any] = {}
    peer, ours = alternate(
        lambda: out.__setitem__("peer", peer_table(cls, rows, schema)),
        lambda: out.__setitem__("ours", to_arrow(cls, rows)),
        repeat=repeat,
    )
    assert out["ours"].equals(out["peer"], check_metadata=True), "tables differ"
    out.clear()
    report("to_arrow", row, n, "from_pydict", peer, ours)
    if not frames:
        return ours_table
    if row == "Mixed":
        (weak,) = alternate(
            lambda: pa.Table.from_pylist([dataclasses.asdict(r) for r in rows]), repeat=1
        )
        print(
            f"{'':<22} {'':<9} {'':>9}       weak peer from_pylist(asdict): "
            f"{n / weak:>12,.0f} rows/s (ours {weak / ours:.2f}x it)"
        )
    peer, ours = alternate(
        lambda: out.__setitem__(
            "peer", peer_table(cls, rows, schema).to_pandas(types_mapper=pd.ArrowDtype)
        ),
        lambda: out.__setitem__("ours", to_pandas(cls, rows)),
        repeat=repeat,
    )
    assert list(out["ours"].dtypes) == list(out["peer"].dtypes), "frame dtypes differ"
    assert out["ours"].equals(out["peer"]), "frames differ"
    out.clear()
    report("to_pandas", row, n, "from_pydict+to_pandas", peer, ours)
    peer_path, ours_path = workdir / "peer.parquet", workdir / "ours.parquet"
    peer, ours = alternate(
        lambda: pq.write_table(peer_table(cls, rows, schema), peer_path),
        lambda: write_parquet(cls, rows, ours_path),
        repeat=repeat,
    )
    assert pq.read_table(peer_path).equals(pq.read_table(ours_path), check_metadata=True)
    report("write_parquet", row, n, "from_pydict+write_table", peer, ours)
    return ours_table


def from_side(
    cls: type, row: str, rows: list[Any], table: pa.Table, repeat: int, workdir: Path, frames: bool
) -> None:
    n = len(rows)
    out: dict[str, Any] = {}
    peer, ours = alternate(
        lambda: out.__setitem__("peer", peer_objects(cls, table)),
        lambda: out.__setitem__("ours", from_arrow(cls, table)),
        repeat=repeat,
    )
    assert out["ours"] == out["peer"] == rows
    out.clear()
    report("from_arrow", row, n, "to_pylist+cls", peer, ours)
    if not frames:
        return
    frame = table.to_pandas(types_mapper=pd.ArrowDtype)
    peer, ours = alternate(
        lambda: out.__setitem__(
            "peer", peer_objects(cls, pa.Table.from_pandas(frame, preserve_index=False))
        ),
        lambda: out.__setitem__("ours", from_pandas(cls, frame)),
        repeat=repeat,
    )
    assert out["ours"] == out["peer"] == rows
    out.clear()
    report("from_pandas", row, n, "from_pandas+to_pylist", peer, ours)
    path = workdir / "in.parquet"
    pq.write_table(table, path)
    peer, ours = alternate(
        lambda: out.__setitem__("peer", peer_objects(cls, pq.read_table(path))),
        lambda: out.__setitem__("ours", read_parquet(cls, path)),
        repeat=repeat,
    )
    assert out["ours"] == out["peer"] == rows
    out.clear()
    report("read_parquet", row, n, "read_table+to_pylist", peer, ours)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--per-type-rows", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="200k Mixed rows, 100k per type")
    parser.add_argument("--no-per-type", action="store_true")
    args = parser.parse_args()
    n, per_type_n = (200_000, 100_000) if args.quick else (args.rows, args.per_type_rows)
    print(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        rows = make_mixed(n)
        table = to_side(Mixed, "Mixed", rows, args.repeat, workdir, frames=True)
        from_side(Mixed, "Mixed", rows, table, args.repeat, workdir, frames=True)
        del rows, table
        if not args.no_per_type:
            for name, typed in make_per_type(per_type_n).items():
                cls = type(typed[0])
                table = to_side(cls, name, typed, args.repeat, workdir, frames=False)
                from_side(cls, name, typed, table, args.repeat, workdir, frames=False)
    print(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

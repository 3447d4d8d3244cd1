"""XML export / import throughput against the strongest plain peers, timed in the same run.

    python benchmarks/bench_xml.py [--rows 200000] [--repeat 3]    (quick: --rows 50000)
    python benchmarks/bench_xml.py --memory [--rows 2000000]
    python benchmarks/bench_xml.py --datasets [--rows 100000] [--repeat 3]

The row is ``Mixed`` (int key, int, float, str, bool, datetime, ``str | None`` 20 % None,
2-place Decimal). Export: ``write_xml`` (data + XSD) against a plain Python writer (one
f-string per row, the same escaping, the XSD's known bytes) whose output must be
byte-identical. Import: ``read_xml`` (XSD validation, typed decoding into dataclasses)
against lxml ``iterparse(schema=XSD)`` building the same objects with the same conversions.
``DataFrame.to_xml`` and ``pandas.read_xml`` (no validation, a DataFrame of strings and
numbers), weak peers, are printed beside. ``--memory`` streams a table of that many rows
from a Store to XML and back into a fresh Store, each step in its own subprocess, and prints
the peak RSS of each.

``--datasets`` times the DataSet paths against the single-table ones on the same rows: a
``groups`` table (1,000 rows) and an ``items`` table (the 8-column rows, each referring to a
group) moved between SQLite files and XML either as two single-table documents
(``export_xml`` / ``import_xml`` per table: the baseline) or as one DataSet document, flat or
nested (``export_dataset`` / ``import_dataset``, which also creates the foreign key and checks
every reference). Rates count the rows of both tables; ``uptime`` is printed first.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import resource
import subprocess
import sys
import tempfile
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import Mixed, Row8, alternate, line, make_mixed, make_rows, record  # noqa: E402

from entityworks import Store  # noqa: E402
from entityworks.xml.table import read_xml, write_xml  # noqa: E402
from entityworks.xml.xsdwrite import xsd_bytes  # noqa: E402

LIMIT_MB = 500


def _escape(text: str) -> str:
    return (
        text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\r", "&#13;")
    )


def plain_write(rows: list[Mixed], xml_path: Path, xsd_path: Path, xsd: bytes) -> None:
    """The strongest plain writer: one f-string per row, the XSD written as known bytes."""
    esc = _escape
    parts = ["<?xml version='1.0' encoding='utf-8' standalone='yes'?>\n<DocumentElement>\n"]
    append = parts.append
    for r in rows:
        note = r.note
        append(
            f"<mixed><id>{r.id}</id><n>{r.n}</n><x>{r.x!r}</x><s>{esc(r.s)}</s>"
            f"<flag>{'true' if r.flag else 'false'}</flag><at>{r.at.isoformat()}</at>"
            f"{'' if note is None else '<note>' + esc(note) + '</note>'}"
            f"<amount>{r.amount:f}</amount></mixed>\n"
        )
    append("</DocumentElement>")
    xml_path.write_bytes("".join(parts).encode("utf-8"))
    xsd_path.write_bytes(xsd)


def lxml_read(xml_path: Path, schema: Any) -> list[Mixed]:
    """The strongest lxml reader: ``iterparse(schema=...)``, the same conversions as ours
    (an empty element is ``""``; an absent ``note`` is None), rows freed as they go."""
    from lxml import etree

    out: list[Mixed] = []
    append = out.append
    fromiso, dec = datetime.fromisoformat, Decimal
    for _, el in etree.iterparse(
        str(xml_path),
        events=("end",),
        tag="mixed",
        schema=schema,
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
    ):
        t = [c.text for c in el]
        if len(t) == 8:
            i, n, x, s, flag, at, note, amount = t
            note = note or ""
        else:
            i, n, x, s, flag, at, amount = t
            note = None
        append(
            Mixed(
                int(i),
                int(n),
                float(x),
                s or "",
                flag == "true" or flag == "1",
                fromiso(at),
                note,
                dec(amount),
            )
        )
        el.clear()
        while el.getprevious() is not None:
            del el.getparent()[0]
    return out


def speed(n: int, repeat: int, workdir: Path) -> None:
    import pandas as pd
    from lxml import etree

    print(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    rows = make_mixed(n)
    xsd = xsd_bytes(Mixed)
    ours_xml, ours_xsd = workdir / "ours.xml", workdir / "ours.xsd"
    peer_xml, peer_xsd = workdir / "peer.xml", workdir / "peer.xsd"

    peer, ours = alternate(
        lambda: plain_write(rows, peer_xml, peer_xsd, xsd),
        lambda: write_xml(Mixed, rows, ours_xml, ours_xsd),
        repeat=repeat,
    )
    assert ours_xml.read_bytes() == peer_xml.read_bytes(), "documents differ"
    assert ours_xsd.read_bytes() == peer_xsd.read_bytes(), "schemas differ"
    report("XML export (with XSD)", n, "plain writer", peer, ours)
    frame = pd.DataFrame([dataclasses.asdict(r) for r in rows])
    (weak,) = alternate(lambda: frame.to_xml(workdir / "pandas.xml", index=False), repeat=1)
    print(
        f"{'':<30} weak peer DataFrame.to_xml: {n / weak:>12,.0f} rows/s "
        f"(ours {weak / ours:.2f}x it)"
    )

    result: dict[str, list[Mixed]] = {}
    peer, ours = alternate(
        lambda: result.__setitem__(
            "peer", lxml_read(peer_xml, etree.XMLSchema(etree.parse(str(peer_xsd))))
        ),
        lambda: result.__setitem__("ours", read_xml(Mixed, ours_xml, ours_xsd)),
        repeat=repeat,
    )
    assert result["ours"] == result["peer"] == rows, "round trip changed the rows"
    report("XML import (validated, typed)", n, "lxml iterparse(schema)", peer, ours)
    (weak,) = alternate(lambda: pd.read_xml(workdir / "pandas.xml"), repeat=1)
    print(
        f"{'':<30} weak peer pandas.read_xml (no validation, no objects): "
        f"{n / weak:>12,.0f} rows/s (ours {weak / ours:.2f}x it)"
    )
    print(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())


def report(path: str, n: int, peer_name: str, peer: float, ours: float) -> None:
    print(
        f"{path:<30} Mixed {n:>9,} rows  peer {peer_name}: {n / peer:>10,.0f} rows/s   "
        f"ours: {n / ours:>10,.0f} rows/s   ratio {peer / ours:5.2f}x",
        flush=True,
    )
    record("xml", path, "Mixed", peer_name, n / peer, n / ours, "rows/s")


@dataclasses.dataclass
class Group:
    """The parent table of the DataSet benchmark."""

    __tablename__ = "groups"
    id: int
    name: str


@dataclasses.dataclass
class Item:
    """Row8's columns, ``a`` referring to a group."""

    __tablename__ = "items"
    id: int
    a: int = dataclasses.field(metadata={"references": "groups.id", "relation": "group_items"})
    b: int = 0
    c: int = 0
    d: int = 0
    e: int = 0
    label: str | None = None
    value: float = 0.0


def datasets(n: int, repeat: int, workdir: Path) -> None:
    print(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    groups = [Group(i, f"group {i}") for i in range(1000)]
    items = [Item(*dataclasses.astuple(r)) for r in make_rows(n)]
    total = len(groups) + len(items)
    source = workdir / "source.db"
    with Store(source) as store:
        store.create(Group)
        store.create(Item)
        store.insert_many(groups)
        store.insert_many(items)
    fresh = iter(range(10**6))

    def target() -> Store:
        return Store(workdir / f"target{next(fresh)}.db")

    def export_single() -> None:
        with Store(source) as store:
            store.export_xml(Group, workdir / "groups.xml", workdir / "groups.xsd")
            store.export_xml(Item, workdir / "items.xml", workdir / "items.xsd")

    def export_set(nested: bool) -> None:
        name = "nested" if nested else "flat"
        with Store(source) as store:
            store.export_dataset(
                [Group, Item],
                workdir / f"{name}.xml",
                workdir / f"{name}.xsd",
                dataset="Bench",
                nested=nested,
            )

    single, flat, nested = alternate(
        export_single, lambda: export_set(False), lambda: export_set(True), repeat=repeat
    )
    line("XML export, DataSet flat", "export_xml per table", total / single, total / flat)
    line("XML export, DataSet nested", "export_xml per table", total / single, total / nested)

    counts: list[Any] = []

    def import_single() -> None:
        with target() as store:
            counts.append(
                store.import_xml(Group, workdir / "groups.xml", workdir / "groups.xsd")
                + store.import_xml(Item, workdir / "items.xml", workdir / "items.xsd")
            )

    def import_set(name: str) -> None:
        with target() as store:
            counts.append(
                sum(store.import_dataset(workdir / f"{name}.xml", workdir / f"{name}.xsd").values())
            )

    single, flat, nested = alternate(
        import_single, lambda: import_set("flat"), lambda: import_set("nested"), repeat=repeat
    )
    assert set(counts) == {total}, counts
    with Store(workdir / f"target{next(fresh) - 1}.db") as store:  # the last nested import
        back = list(store.select(store.reflect("items"), order_by="id"))
        assert [dataclasses.astuple(i) for i in back] == [dataclasses.astuple(i) for i in items]
    line("XML import, DataSet flat", "import_xml per table", total / single, total / flat)
    line("XML import, DataSet nested", "import_xml per table", total / single, total / nested)


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _child(step: str, db: str, xml: str) -> None:
    """One measured step, run in a fresh interpreter: prints its peak RSS in MB."""
    if step == "export":
        with Store(db) as store:
            count = store.export_xml(Row8, xml, xml + ".xsd")
    else:
        with Store(db) as store:
            count = store.import_xml(Row8, xml, xml + ".xsd")
    print(f"{count} {_peak_mb():.1f}")


def memory(n: int, workdir: Path) -> int:
    source, target, xml = workdir / "source.db", workdir / "target.db", workdir / "big.xml"
    with Store(source) as store:
        store.create(Row8)
        for start in range(0, n, 200_000):
            chunk = make_rows(min(200_000, n - start), seed=start)
            for i, r in enumerate(chunk):
                r.id = start + i + 1
            store.insert_many(chunk)
    status = 0
    for step, db in (("export", source), ("import", target)):
        out = subprocess.run(
            [sys.executable, __file__, "--child", step, str(db), str(xml)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.split()
        count, peak = int(out[0]), float(out[1])
        ok = peak < LIMIT_MB and count == n
        status |= not ok
        print(
            f"{step:<7} {count:>10,} rows  peak RSS {peak:7.1f} MB  "
            f"(limit {LIMIT_MB} MB) {'ok' if ok else 'FAILED'}"
        )
    print(f"file size {os.path.getsize(xml) / 2**20:.1f} MB")
    return status


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=None)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--memory", action="store_true")
    parser.add_argument("--datasets", action="store_true")
    parser.add_argument("--child", nargs=3, metavar=("STEP", "DB", "XML"))
    args = parser.parse_args()
    if args.child:
        _child(*args.child)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        if args.memory:
            return memory(args.rows or 2_000_000, Path(tmp))
        if args.datasets:
            datasets(args.rows or 100_000, args.repeat, Path(tmp))
            return 0
        speed(args.rows or 200_000, args.repeat, Path(tmp))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

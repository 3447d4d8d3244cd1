"""Hostile files, fuzzed: mutated XML and XSD documents, random puzzle files, odd byte streams.

Each call works correctly or raises a documented error (``XMLImportError`` and the other
``EntityworksError`` types, ``InvalidPuzzle``/``PuzzleFileError``, entropy's ``ValueError``);
no file or network resource named by the input is touched.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import io
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from entityworks import EntityworksError, Store, read_xml, read_xsd, write_xml
from generators import sudoku
from generators.bytes import entropy
from tests.reliability.conftest import SEED
from tests.reliability.guards import Canary, no_network

# no deadline: a loaded machine must not fail a property (a deadline only measures an
# example after it returned, so it never caught a hang either)
SETTINGS = dict(
    deadline=None,
    database=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)

# -- XML and XSD -------------------------------------------------------------------------------


@dataclass
class XRow:
    id: int
    name: str
    value: float | None
    when: dt.datetime | None
    data: bytes


BASE_ROWS = [
    XRow(1, "first", 1.5, dt.datetime(2020, 1, 2, 3, 4, 5), b"\x00\x01"),
    XRow(2, "<&> 'quoted'", None, None, b""),
    XRow(3, "  ", -0.0, dt.datetime(1999, 12, 31), b"xyz" * 10),
]


def snippets(canary: Canary, server: str) -> list[str]:
    path, uri, relative = canary.uris
    return [
        f'<!DOCTYPE DocumentElement [<!ENTITY xxe SYSTEM "{uri}">]>',
        f'<!DOCTYPE DocumentElement SYSTEM "{uri}">',
        f'<!DOCTYPE d [<!ENTITY % p SYSTEM "{server}/p.dtd"> %p;]>',
        '<!DOCTYPE d [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">'
        '<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]>',
        "&xxe;",
        "&c;",
        "&amp;",
        "&#0;",
        "&#xD800;",
        "&#65;",
        f'<xi:include xmlns:xi="http://www.w3.org/2001/XInclude" href="{uri}" parse="text"/>',
        f'<xi:include xmlns:xi="http://www.w3.org/2001/XInclude" href="{relative}"/>',
        f'<?xml-stylesheet href="{server}/s.xsl"?>',
        f'<x xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
        f'xsi:schemaLocation="urn:x {server}/x.xsd"/>',
        f'<xs:import xmlns:xs="http://www.w3.org/2001/XMLSchema" schemaLocation="{uri}"/>',
        f'<xs:include xmlns:xs="http://www.w3.org/2001/XMLSchema" schemaLocation="{path}"/>',
        f'<xs:redefine xmlns:xs="http://www.w3.org/2001/XMLSchema" schemaLocation="{server}/r"/>',
        '<xs:element name="id" type="xs:nonsense"/>',
        'type="q:int"',
        'type="xs:string"',
        'msdata:MainDataTable="nope"',
        'minOccurs="0"',
        'name="class"',
        'name="id"',
        "<![CDATA[<row/>]]>",
        "<!-- comment -->",
        "<?pi data?>",
        "]]>",
        "<",
        ">",
        "&",
        '<?xml version="1.0" encoding="UTF-16"?>',
        '<?xml version="1.1"?>',
        '<?xml version="1.0" encoding="EBCDIC-US"?>',
        "\ufeff",
        "\x00",
        "\x0c",
        "<id>99</id>",
        "<id>-9223372036854775809</id>",
        "<id>1e5</id>",
        "<value>NaN</value>",
        "<value>1e999</value>",
        "<when>2020-13-45T99:00:00</when>",
        "<data>!!!</data>",
        "<XRow><id>7</id></XRow>",
        "<name xml:space='preserve'> </name>",
        '<a xmlns="urn:evil">',
        "</DocumentElement>",
        "<DocumentElement>",
        "<d>" * 300,
        "x" * 5000,
        '<a b="' + "c" * 2000 + '"/>',
    ]


ROWS = [
    "<x_row><id>10</id><name>new</name><value>2.5</value><data>AQI=</data></x_row>",
    "<x_row><id>11</id><name></name><data></data></x_row>",
    "<x_row><id>1</id><name>duplicate key</name><data/></x_row>",
    "<x_row><id>12</id><name>x</name><value>INF</value><when>2001-02-03T04:05:06</when>"
    "<data>AA==</data></x_row>",
    "<x_row><id>13</id><name>&#x1F409; &lt;</name><value>-0</value><data>AA==</data></x_row>",
    "<x_row><id>14</id><name>no data</name></x_row>",
    "<x_row><name>no id</name><id>15</id><data/></x_row>",
    "<x_row><id>9223372036854775807</id><name>max</name><data/></x_row>",
    "<x_row><id>16</id><name>extra</name><data/><extra>1</extra></x_row>",
    '<x_row><id>17</id><name xml:space="preserve">  </name><data/></x_row>',
]


@st.composite
def mutations(draw: Any, text: str, pieces: list[str]) -> bytes:
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(
            st.sampled_from(
                [
                    "insert",
                    "replace",
                    "delete",
                    "flip",
                    "truncate",
                    "duplicate",
                    "row",
                    "row",
                    "row",
                ]
            )
        )
        at = draw(st.integers(0, len(text)))
        if kind == "row":  # a whole row element between rows: often still valid
            lines = text.split("\n")
            where = draw(st.integers(1, max(1, len(lines) - 1)))
            row = draw(st.sampled_from(ROWS))
            text = "\n".join(lines[:where] + [row] + lines[where:])
        elif kind == "insert":
            text = text[:at] + draw(st.sampled_from(pieces)) + text[at:]
        elif kind == "replace":
            end = draw(st.integers(at, min(len(text), at + 40)))
            text = text[:at] + draw(st.sampled_from(pieces) | st.text(max_size=8)) + text[end:]
        elif kind == "delete":
            text = text[:at] + text[at + draw(st.integers(1, 30)) :]
        elif kind == "truncate":
            text = text[:at]
        elif kind == "duplicate":
            end = draw(st.integers(at, min(len(text), at + 200)))
            text = text[:end] + text[at:end] + text[end:]
        elif text:
            where = min(at, len(text) - 1)
            text = text[:where] + chr(draw(st.integers(0, 0x2FF))) + text[where + 1 :]
    raw = text.encode("utf-8", "surrogatepass")
    if draw(st.integers(0, 9)) == 0:
        raw = draw(st.sampled_from([b"\x1f\x8b", b"\xff\xfe", b"\xef\xbb\xbf", b"\x80"])) + raw
    return raw


XROW_TYPES = {
    "id": (int,),
    "name": (str,),
    "value": (float, type(None)),
    "when": (dt.datetime, type(None)),
    "data": (bytes,),
}


def check_rows(rows: list[Any], cls: type) -> None:
    """Every row is a ``cls`` whose fields have their declared types."""
    for row in rows:
        assert type(row) is cls
        for name, types in XROW_TYPES.items():
            value = getattr(row, name)
            assert isinstance(value, types) and not isinstance(value, bool), (name, value)


def test_mutated_xml_and_xsd_are_read_correctly_or_refused(tmp_path, monkeypatch, figures):
    canary = Canary(tmp_path)
    server = "http://127.0.0.1:9"
    xml_path, xsd_path = tmp_path / "base.xml", tmp_path / "base.xsd"
    write_xml(XRow, BASE_ROWS, xml_path, xsd_path)
    base_xml = xml_path.read_text()
    base_xsd = xsd_path.read_text()
    pieces = snippets(canary, server)
    store = Store(tmp_path / "import.db")
    store.create(XRow)
    counts = {
        "cases": 0,
        "xml_read": 0,
        "xml_refused": 0,
        "xsd_read": 0,
        "xsd_refused": 0,
        "imported": 0,
    }
    doc, schema = tmp_path / "doc.xml", tmp_path / "doc.xsd"

    @seed(SEED)
    @settings(max_examples=600, **SETTINGS)
    @given(
        xml=mutations(base_xml, pieces),
        xsd=st.none() | mutations(base_xsd, pieces),
        own=st.booleans(),
    )
    def check(xml: bytes, xsd: bytes | None, own: bool) -> None:
        counts["cases"] += 1
        doc.write_bytes(xml)
        schema.write_bytes(xsd if xsd is not None else base_xsd.encode())
        if xsd is not None:
            try:
                cls = read_xsd(schema)
                counts["xsd_read"] += 1
                assert dataclasses.is_dataclass(cls)
            except EntityworksError as exc:
                counts["xsd_refused"] += 1
                assert not canary.leaked(str(exc))
        xsd_arg = None if own else schema
        try:
            rows = read_xml(XRow, doc, xsd_arg)
        except EntityworksError as exc:
            counts["xml_refused"] += 1
            assert not canary.leaked(str(exc))
            rows = None
        else:
            counts["xml_read"] += 1
            check_rows(rows, XRow)
            assert not any(canary.leaked(repr(r)) for r in rows)
        before = store.count(XRow)
        try:
            count = store.import_xml(XRow, doc, xsd_arg)
        except EntityworksError:
            assert rows is None, "read_xml accepted what import_xml refused"
            assert store.count(XRow) == before, "a refused import wrote rows"
        else:
            counts["imported"] += 1
            assert rows is not None and count == len(rows)
            stored = list(store.select(XRow, order_by="id"))
            assert sorted(stored, key=lambda r: r.id) == sorted(rows, key=lambda r: r.id)
            store.delete(XRow, where={})

    with no_network(monkeypatch), canary.armed():
        check()
    store.close()
    figures["fuzz_xml"] = counts


# -- sudoku --------------------------------------------------------------------------------

PUZZLE = "003020600900305001001806400008102900700000008006708200002609500800203009005010300"


@st.composite
def puzzle_texts(draw: Any) -> str:
    lines = []
    for _ in range(draw(st.integers(0, 6))):
        kind = draw(st.integers(0, 5))
        if kind == 0:
            lines.append(draw(st.text(max_size=100)))
        elif kind == 1:  # a near-valid puzzle line
            chars = list(PUZZLE)
            for _ in range(draw(st.integers(0, 3))):
                chars[draw(st.integers(0, 80))] = draw(st.sampled_from("0123456789.x "))
            lines.append("".join(chars) + draw(st.sampled_from(["", " # c", "\t", "#"])))
        elif kind == 2:
            lines.append(f"Grid {draw(st.integers(0, 99)):02d}")
            for r in range(draw(st.integers(0, 10))):
                lines.append(
                    PUZZLE[9 * (r % 9) : 9 * (r % 9) + 9]
                    if draw(st.booleans())
                    else draw(st.text("0123456789. x", max_size=11))
                )
        elif kind == 3:
            lines.append(draw(st.sampled_from(["", " ", "#", "grid", "GRID", "\x00" * 81])))
        else:
            lines.append(draw(st.text("0123456789.", min_size=79, max_size=83)))
    return draw(st.sampled_from(["\n", "\r\n", "\r"])).join(lines)


def valid_entries(entries: list[Any]) -> None:
    for entry in entries:
        assert isinstance(entry, sudoku.NamedPuzzle)
        assert len(entry.puzzle) == 81 and set(entry.puzzle) <= set("0123456789")
        assert sudoku.validate(entry.puzzle) == entry.puzzle


def test_puzzle_files_parse_correctly_or_are_refused(tmp_path, monkeypatch, figures):
    counts = {"cases": 0, "parsed": 0, "refused": 0}
    path = tmp_path / "puzzles.txt"

    @seed(SEED)
    @settings(max_examples=300, **SETTINGS)
    @given(
        text=puzzle_texts(),
        raw=st.none() | st.binary(max_size=200),
        one=st.one_of(
            st.text(max_size=100),
            st.builds(str, st.integers()),
            st.none(),
            st.integers(),
            st.binary(max_size=90),
        ),
    )
    def check(text: str, raw: bytes | None, one: Any) -> None:
        counts["cases"] += 1
        data = raw if raw is not None else text.encode("utf-8", "surrogatepass")
        path.write_bytes(data)
        for reader in (sudoku.read_lines, sudoku.read_euler):
            try:
                entries = reader(path)
            except sudoku.InvalidPuzzle:
                counts["refused"] += 1
                continue
            counts["parsed"] += 1
            valid_entries(entries)
            if reader is sudoku.read_lines:
                lines = data.decode("utf-8-sig").splitlines()
                expected = [ln.split("#", 1)[0].strip() for ln in lines]
                expected = [e.replace(".", "0") for e in expected if e]
                assert [e.puzzle for e in entries] == expected
        try:
            parsed = sudoku.parse(one)
        except sudoku.InvalidPuzzle:
            counts["refused"] += 1
        else:
            counts["parsed"] += 1
            assert parsed == one.strip().replace(".", "0")
            valid_entries([sudoku.NamedPuzzle("x", parsed, 1)])

    with no_network(monkeypatch):
        check()
    figures["fuzz_sudoku"] = counts


# -- entropy ---------------------------------------------------------------------------------


class ShortReads(io.RawIOBase):
    """Non-seekable; ``readinto`` returns at most the next scripted count of bytes."""

    def __init__(self, data: bytes, sizes: list[int]) -> None:
        self.data, self.pos, self.sizes, self.turn = data, 0, sizes or [1], 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        want = max(1, self.sizes[self.turn % len(self.sizes)])
        self.turn += 1
        chunk = self.data[self.pos : self.pos + min(want, len(buffer))]
        buffer[: len(chunk)] = chunk
        self.pos += len(chunk)
        return len(chunk)


class ReadOnly:
    """Only ``read`` (no ``readinto``), short reads."""

    def __init__(self, data: bytes, step: int) -> None:
        self.data, self.pos, self.step = data, 0, max(1, step)

    def read(self, n: int = -1) -> bytes:
        chunk = self.data[self.pos : self.pos + min(n, self.step)]
        self.pos += len(chunk)
        return chunk


def same_report(a: Any, b: Any) -> bool:
    for f in dataclasses.fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y):
            continue
        if x != y:
            return False
    return True


def test_entropy_on_odd_streams_matches_the_bytes_or_refuses(tmp_path, figures):
    counts = {"cases": 0, "reports": 0, "refused": 0}

    @seed(SEED)
    @settings(max_examples=150, **SETTINGS)
    @given(
        data=st.binary(max_size=3000) | st.sampled_from([b"", b"\x00", b"\xff" * 7]),
        shape=st.sampled_from(
            ["bytes", "bytearray", "memoryview", "bytesio", "short", "readonly", "path", "buffered"]
        ),
        sizes=st.lists(st.integers(0, 700), max_size=5),
        chunk=st.one_of(
            st.integers(1, 5000), st.sampled_from([0, -1, 2**31, True, 1.5, None, "8"])
        ),
        bits=st.booleans(),
        fold=st.booleans(),
    )
    def check(
        data: bytes, shape: str, sizes: list[int], chunk: Any, bits: bool, fold: bool
    ) -> None:
        counts["cases"] += 1
        path = tmp_path / "data.bin"
        path.write_bytes(data)
        source: Any = {
            "bytes": data,
            "bytearray": bytearray(data),
            "memoryview": memoryview(data),
            "bytesio": io.BytesIO(data),
            "short": ShortReads(data, sizes),
            "readonly": ReadOnly(data, sizes[0] if sizes else 3),
            "path": path,
            "buffered": io.BufferedReader(ShortReads(data, sizes), buffer_size=64),
        }[shape]
        try:
            got = entropy.report(source, chunk, bits, fold=fold)
        except ValueError:  # entropy's documented error for a bad chunk size
            counts["refused"] += 1
            assert (
                isinstance(chunk, bool) or not isinstance(chunk, int) or not (1 <= chunk <= 2**30)
            )
            return
        counts["reports"] += 1
        assert same_report(got, entropy.report(data, 4096, bits, fold=fold))
        assert got.size == len(data)

    check()
    figures["fuzz_entropy"] = counts


def test_entropy_reads_a_pipe(tmp_path):
    """A real non-seekable file descriptor gives the same report as the bytes."""
    import os
    import threading

    data = bytes(range(256)) * 999
    read_end, write_end = os.pipe()

    def feed() -> None:
        with os.fdopen(write_end, "wb") as w:
            for i in range(0, len(data), 4000):
                w.write(data[i : i + 4000])

    thread = threading.Thread(target=feed)
    thread.start()
    with os.fdopen(read_end, "rb", buffering=0) as r:
        got = entropy.report(r, 65536)
    thread.join()
    assert same_report(got, entropy.report(data))
    assert Path(tmp_path).exists()

"""Interop with a real System.Data: Mono's DataTable reads our XSD + XML and writes them back,
and a DataTable built in C# imports into entityworks.

The C# program (tests/dotnet/*.cs) is compiled with ``mcs`` at test time and
run with ``mono``. Without them the tests skip, except under ``CI=true`` where they fail.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime as dt
import decimal
import enum
import math
import os
import shutil
import subprocess
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from entityworks import AwareDatetime, Store, XMLImportError, registry, table_schema
from entityworks.cli import cli
from entityworks.xml.table import read_xml, write_xml
from entityworks.xml.xsd import read_xsd

from ...conftest import IN_CI

SOURCES = sorted((Path(__file__).resolve().parents[2] / "dotnet").glob("*.cs"))


@pytest.fixture(scope="module")
def interop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The compiled C# program (skips, or fails under CI, without Mono)."""
    missing = [tool for tool in ("mcs", "mono") if shutil.which(tool) is None]
    if missing:
        message = (
            f"{' and '.join(missing)} not installed (apt-get install mono-mcs "
            "mono-runtime libmono-system-data4.0-cil)"
        )
        if IN_CI:
            pytest.fail(message + "; required under CI=true")
        pytest.skip(message)
    exe = tmp_path_factory.mktemp("dotnet") / "interop.exe"
    result = subprocess.run(
        [
            "mcs",
            "-nologo",
            "-r:System.Data.dll",
            "-r:System.Xml.dll",
            "-r:System.Core.dll",
            f"-out:{exe}",
            *map(str, SOURCES),
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return exe


def run(exe: Path, *args: Path | str) -> None:
    result = subprocess.run(
        ["mono", str(exe), *map(str, args)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr


class Suit(enum.Enum):
    HEARTS = "hearts"
    SPADES = "spades"


@dataclass
class Card:
    id: int
    name: str | None
    weight: float
    price: decimal.Decimal
    made: dt.datetime
    seen: AwareDatetime | None
    photo: bytes
    uid: uuid.UUID
    suit: Suit
    tags: list[str]
    waited: dt.timedelta
    day: dt.date | None
    alarm: dt.time | None
    ok: bool
    note: str


CARDS = [
    Card(
        1,
        "  ",
        math.nan,
        decimal.Decimal("1234567890123456.123456789012"),  # .NET: 28 digits
        dt.datetime(2020, 1, 2, 3, 4, 5, 6),
        dt.datetime(2021, 6, 1, 12, tzinfo=dt.timezone(dt.timedelta(hours=5, minutes=30))),
        b"\x00\xff\x10",
        uuid.UUID(int=1),
        Suit.HEARTS,
        ["a<b", "&"],
        dt.timedelta(days=-1, seconds=5, microseconds=7),
        dt.date(2020, 5, 6),
        dt.time(12, 30, 1, 5),
        True,
        "line\r\nbreak",
    ),
    Card(
        2**63 - 1,
        "",
        math.inf,
        decimal.Decimal("-0.5"),
        dt.datetime(1, 1, 1),
        None,
        b"",
        uuid.UUID(int=2**128 - 1),
        Suit.SPADES,
        [],
        dt.timedelta(0),
        None,
        None,
        False,
        "\t tab",
    ),
    Card(
        -(2**63),
        None,
        -1.5e-300,
        decimal.Decimal("7"),
        dt.datetime(9999, 12, 31, 23, 59, 59, 999999),
        None,
        b"x",
        uuid.uuid4(),
        Suit.SPADES,
        ["ü", "€"],
        dt.timedelta(days=400, microseconds=1),
        dt.date(1, 1, 1),
        dt.time(0),
        False,
        "ok",
    ),
]

DOTNET_TYPES = {
    "id": "System.Int64",
    "name": "System.String",
    "weight": "System.Double",
    "price": "System.Decimal",
    "made": "System.DateTime",
    "seen": "System.DateTime",
    "photo": "System.Byte[]",
    "uid": "System.Guid",
    "suit": "System.String",
    "tags": "System.String",
    "waited": "System.TimeSpan",
    "day": "System.DateTime",
    "alarm": "System.DateTime",
    "ok": "System.Boolean",
    "note": "System.String",
}


def same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    return a == b


def parse_dump(path: Path) -> tuple[str, list[tuple[str, ...]], str, list[list[str | None]]]:
    table, columns, key, rows = "", [], "", []
    for line in path.read_text(encoding="utf-8").splitlines():
        kind, *rest = line.split("\t")
        if kind == "table":
            table = rest[0]
        elif kind == "column":
            columns.append(tuple(rest))
        elif kind == "key":
            key = rest[0]
        else:
            rows.append(
                [
                    None if cell == "-" else base64.b64decode(cell[1:]).decode("utf-8")
                    for cell in rest
                ]
            )
    return table, columns, key, rows


def test_datatable_loads_our_files_and_writes_them_back(interop: Path, tmp_path: Path) -> None:
    xml, xsd = tmp_path / "cards.xml", tmp_path / "cards.xsd"
    write_xml(Card, CARDS, xml, xsd)
    dump, out_xml, out_xsd = tmp_path / "dump.txt", tmp_path / "net.xml", tmp_path / "net.xsd"
    run(interop, "load", xsd, xml, dump, out_xsd, out_xml)

    table, columns, key, rows = parse_dump(dump)
    assert table == "card" and key == "id"
    assert [c[0] for c in columns] == [f.name for f in dataclasses.fields(Card)]
    assert {c[0]: c[1] for c in columns} == DOTNET_TYPES
    schema = table_schema(Card)
    assert {c[0]: c[2] == "null" for c in columns} == {c.name: c.nullable for c in schema.columns}
    # every value as .NET holds it, decoded by our registry, equals the original
    for original, cells in zip(CARDS, rows, strict=True):
        for column, cell in zip(schema.columns, cells, strict=True):
            expected = getattr(original, column.name)
            if expected is None:
                assert cell is None, column.name
                continue
            got = column.info.from_text(cell)
            assert same(got, expected), (column.name, cell, expected)

    back = read_xml(Card, out_xml, out_xsd)  # .NET's own pair: DocumentElement / NewDataSet
    for original, loaded in zip(CARDS, back, strict=True):
        for f in dataclasses.fields(Card):
            a, b = getattr(original, f.name), getattr(loaded, f.name)
            if isinstance(a, str):  # .NET's WriteXml leaves CR unescaped: XML reads it as LF
                a = a.replace("\r\n", "\n").replace("\r", "\n")
            assert same(b, a), (f.name, a, b)


def test_we_import_a_datatable_built_in_csharp(interop: Path, tmp_path: Path) -> None:
    xml, xsd = tmp_path / "people.xml", tmp_path / "people.xsd"
    run(interop, "build", xsd, xml)
    assert "<DocumentElement>" in xml.read_text()
    cls = read_xsd(xsd)
    hints = {f.name: f.type for f in dataclasses.fields(cls)}
    assert hints["id"] is int and hints["name"] == str | None
    assert hints["uid"] == uuid.UUID | None
    assert registry.lookup(hints["seen"].__args__[0]).name == "AwareDatetime"
    people = read_xml(cls, xml, xsd)
    first, second, third, fourth = people
    assert dataclasses.astuple(first)[:4] == (
        1,
        "Ada",
        1.5,
        decimal.Decimal("12.3456789012345678901234567"),
    )
    assert first.born == dt.datetime(1815, 12, 10, 8, 30)
    assert first.seen == dt.datetime(2024, 2, 29, 23, 59, 59, 123456, tzinfo=dt.UTC)
    assert first.uid == uuid.UUID("0f8fad5b-d9cb-469f-a165-70867728950e")
    assert first.photo == b"\x00\x01\x02\xff"
    assert first.waited == dt.timedelta(days=1, hours=2, minutes=3, seconds=4.5)
    assert first.small == -(2**31) and first.active is True
    assert (second.id, second.name, second.score) == (2**63 - 1, "   ", -math.inf)
    assert second.price is None and second.waited == dt.timedelta(0)
    assert third.id == -(2**63) and third.name is None and math.isnan(third.score)
    assert third.photo == b"" and third.waited == -dt.timedelta(hours=3)
    assert fourth.name == "" and fourth.price == 0

    @dataclass
    class Person:  # a hand-written class for the same file
        id: int
        name: str | None
        score: float
        price: decimal.Decimal | None
        born: dt.datetime | None
        seen: AwareDatetime | None
        active: bool | None
        uid: uuid.UUID | None
        photo: bytes | None
        waited: dt.timedelta | None
        small: int | None

    mine = read_xml(Person, xml, xsd)
    assert [dataclasses.astuple(p)[:2] for p in mine] == [
        (1, "Ada"),
        (2**63 - 1, "   "),
        (-(2**63), None),
        (4, ""),
    ]


def test_default_mode_datetimes_carry_offsets_and_import_as_aware(
    interop: Path, tmp_path: Path
) -> None:
    """A DateTime column in .NET's default mode (UnspecifiedLocal) or Local is written with
    the writer's offset: read as AwareDatetime, the instants survive; a class that insists
    on a naive datetime is refused, as the Store would refuse the value."""
    xml, xsd = tmp_path / "event.xml", tmp_path / "event.xsd"
    result = subprocess.run(
        ["mono", str(interop), "build-local", str(xsd), str(xml)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "TZ": "America/New_York"},
    )
    assert result.returncode == 0, result.stderr
    assert "<at>2024-01-15T08:30:00-05:00</at>" in xml.read_text()
    cls = read_xsd(xsd)
    hints = {f.name: f.type for f in dataclasses.fields(cls)}
    assert registry.lookup(hints["at"].__args__[0]).name == "AwareDatetime"
    assert registry.lookup(hints["local"].__args__[0]).name == "AwareDatetime"
    first, second = read_xml(cls, xml, xsd)
    new_york = dt.timezone(dt.timedelta(hours=-5))
    assert first.at == dt.datetime(2024, 1, 15, 8, 30, tzinfo=new_york)
    assert first.at.utcoffset() == dt.timedelta(hours=-5)
    assert first.local == dt.datetime(2024, 7, 1, 23, tzinfo=dt.timezone(dt.timedelta(hours=-4)))
    assert (second.at, second.local) == (None, None)

    @dataclass
    class Event:
        id: int
        at: dt.datetime | None
        local: dt.datetime | None

    with pytest.raises(XMLImportError, match="timezone-aware datetime in a naive") as info:
        read_xml(Event, xml, xsd)
    assert (info.value.row, info.value.column) == (1, "at")


def mono(exe: Path, *args: Path | str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["mono", str(exe), *map(str, args)], capture_output=True, text=True, timeout=120
    )


def cli_ok(*args: str) -> None:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.stderr


def test_dotnet_types_survive_a_trip_through_each_database(
    interop: Path, tmp_path: Path, backend_url: str
) -> None:
    """.NET -> import-xml -> SQLite / PostgreSQL / MariaDB -> export-xml -> .NET: the same
    columns (DataType, AllowDBNull, MaxLength, DateTimeMode, AutoIncrement, DefaultValue,
    Caption), key and values, compared by System.Data itself."""
    xsd, xml = tmp_path / "typed.xsd", tmp_path / "typed.xml"
    run(interop, "typed", xsd, xml)
    cli_ok("import-xml", str(xml), "--xsd", str(xsd), "--db", backend_url)
    back = tmp_path / "back.xml"
    cli_ok("export-xml", "typed", str(back), "--db", backend_url)
    compared = mono(interop, "compare", xsd, xml, back.with_suffix(".xsd"), back)
    assert compared.returncode == 0, compared.stderr


def test_inline_schemas_both_ways(interop: Path, tmp_path: Path, backend_url: str) -> None:
    """WriteXml(..., XmlWriteMode.WriteSchema) -> import-xml without --xsd -> export-xml
    --inline-schema -> ReadXml(..., XmlReadMode.ReadSchema): the same DataSet."""
    xml = tmp_path / "inline.xml"
    run(interop, "typed", tmp_path / "unused.xsd", xml, "inline")
    assert not (tmp_path / "unused.xsd").exists()
    cli_ok("import-xml", str(xml), "--db", backend_url)
    back = tmp_path / "back.xml"
    cli_ok("export-xml", "typed", str(back), "--inline-schema", "--db", backend_url)
    assert not back.with_suffix(".xsd").exists()
    compared = mono(interop, "compare", "-", xml, "-", back)
    assert compared.returncode == 0, compared.stderr


@pytest.mark.parametrize("shape", ["flat", "nested", "nested inline"])
def test_a_dataset_with_relations_survives_each_database(
    interop: Path, tmp_path: Path, backend_url: str, shape: str
) -> None:
    """DataSet "Shop" (customers -> orders -> lines, two DataRelations) written by .NET,
    imported into its three tables with foreign keys, exported as one DataSet again: .NET
    reads the same tables, columns, keys, relations (nested or not) and values."""
    nested, inline = shape.startswith("nested"), shape.endswith("inline")
    xsd, xml = tmp_path / "shop.xsd", tmp_path / "shop.xml"
    run(interop, "shop", xsd, xml, "nested" if nested else "flat", *(["inline"] if inline else []))
    cli_ok("import-xml", str(xml), *([] if inline else ["--xsd", str(xsd)]), "--db", backend_url)
    back = tmp_path / "back.xml"
    cli_ok(
        "export-xml",
        "customers",
        "orders",
        "lines",
        str(back),
        "--db",
        backend_url,
        *(["--inline-schema"] if inline else []),
    )
    compared = mono(
        interop,
        "compare",
        "-" if inline else xsd,
        xml,
        "-" if inline else back.with_suffix(".xsd"),
        back,
    )
    assert compared.returncode == 0, compared.stderr


def test_a_dataset_with_a_composite_key_survives_each_database(
    interop: Path, tmp_path: Path, backend_url: str
) -> None:
    """A .NET table keyed by two columns (warehouse, sku): imported with its composite
    primary key, exported back; .NET reads the same keys, columns and values."""
    xsd, xml = tmp_path / "depot.xsd", tmp_path / "depot.xml"
    run(interop, "stock", xsd, xml)
    cli_ok("import-xml", str(xml), "--xsd", str(xsd), "--db", backend_url)
    back = tmp_path / "back.xml"
    cli_ok("export-xml", "depots", "stock", str(back), "--db", backend_url)
    compared = mono(interop, "compare", xsd, xml, back.with_suffix(".xsd"), back)
    assert compared.returncode == 0, compared.stderr


def test_a_self_referencing_table_imports_on_each_database(
    interop: Path, tmp_path: Path, backend_url: str
) -> None:
    """.NET writes a table that refers to itself with rows before the rows they refer to
    (its constraints are checked once every row is read): every database imports it (rows
    go in parents first), and .NET reads our export as the same DataSet."""
    xsd, xml = tmp_path / "org.xsd", tmp_path / "org.xml"
    run(interop, "tree", xsd, xml)
    text = xml.read_text()
    assert text.index("<id>4</id>") < text.index("<id>3</id>") < text.index("<id>1</id>")
    cli_ok("import-xml", str(xml), "--xsd", str(xsd), "--db", backend_url)
    with Store(backend_url) as store:
        staff = store.reflect("staff")
        assert sorted((r.id, r.boss_id) for r in store.select(staff)) == [
            (1, None),
            (2, 1),
            (3, 2),
            (4, 3),
            (5, 5),
            (6, 1),
        ]
    back = tmp_path / "back.xml"  # --flat: a DataSet (with its relation), not a DataTable
    cli_ok("export-xml", "staff", str(back), "--flat", "--db", backend_url)
    compared = mono(interop, "compare", xsd, xml, back.with_suffix(".xsd"), back)
    assert compared.returncode == 0, compared.stderr


@pytest.mark.parametrize("case", ["contradicting", "missing"])
def test_a_nested_row_refers_to_the_row_it_sits_in(
    interop: Path, tmp_path: Path, backend_url: str, case: str
) -> None:
    """A nested row whose foreign key names another parent than the row it sits in (or no
    parent at all): System.Data takes the enclosing row's key, and so does the import, at
    every level of nesting; .NET reads our flat export as it read the nested document."""
    xsd, xml = tmp_path / "shop.xsd", tmp_path / "shop.xml"
    run(interop, "shop", xsd, xml, "nested")
    text = xml.read_text()
    order = "<order_id>11</order_id>\n      <customer_id>1</customer_id>"  # in customer 1
    line = "<line_id>102</line_id>\n        <order_id>12</order_id>"  # in order 12
    assert order in text and line in text
    if case == "contradicting":
        text = text.replace(order, "<order_id>11</order_id><customer_id>2</customer_id>")
        text = text.replace(line, "<line_id>102</line_id><order_id>10</order_id>")
    else:
        text = text.replace(order, "<order_id>11</order_id>")
    xml.write_text(text)
    cli_ok("import-xml", str(xml), "--xsd", str(xsd), "--db", backend_url)
    with Store(backend_url) as store:
        orders, lines = store.reflect("orders"), store.reflect("lines")
        assert store.get(orders, 11).customer_id == 1
        assert store.get(lines, 102).order_id == 12
    back = tmp_path / "back.xml"
    cli_ok("export-xml", "customers", "orders", "lines", str(back), "--nested", "--db", backend_url)
    compared = mono(interop, "compare", xsd, xml, back.with_suffix(".xsd"), back)
    assert compared.returncode == 0, compared.stderr


SHOP_CHANGES = {"customers": (1, 2, 0), "orders": (2, 1, 2), "lines": (1, 2, 1)}


@pytest.mark.parametrize("kind", ["shop flat", "shop nested", "typed", "table"])
def test_dotnet_diffgrams_apply_on_each_database(
    interop: Path, tmp_path: Path, backend_url: str, kind: str
) -> None:
    """.NET writes a DataSet, changes it and writes the DiffGram and what AcceptChanges()
    leaves; we import the DataSet, apply the DiffGram, and .NET finds our export equal to its
    own result ("table": a DataTable's own DiffGram, without a DataSet). The changes: every
    column of every common .NET type, nulls to values and back, deletes, inserts, a key
    changed and cascaded to its child rows, a row moved to a new parent, a delete and an
    insert under one key. Applied twice, it is a conflict that changes nothing; our own
    DiffGram export reads in .NET as those rows, all Unchanged."""
    name, _, shape = kind.partition(" ")
    xsd, before, diff, after = (
        tmp_path / "set.xsd",
        tmp_path / "before.xml",
        tmp_path / "diff.xml",
        tmp_path / "after.xml",
    )
    run(interop, "diffgram", name, shape or "flat", xsd, before, diff, after)
    text = diff.read_text()
    assert text.count('diffgr:hasChanges="modified"') >= 3 and "<diffgr:before>" in text
    cli_ok("import-xml", str(before), "--xsd", str(xsd), "--db", backend_url)
    if kind == "shop flat":  # the Python API, with the counts per table
        store = Store(backend_url)
        try:
            changes = store.import_diffgram(diff, xsd)
        finally:
            store.close()
        assert {t: (c.inserted, c.updated, c.deleted) for t, c in changes.items()} == SHOP_CHANGES
    else:  # the command line; nested and table: the schema comes from the database
        cli_ok(
            "import-xml",
            str(diff),
            *([] if shape == "nested" or name == "table" else ["--xsd", str(xsd)]),
            "--db",
            backend_url,
        )
    tables = ["customers", "orders", "lines"] if name == "shop" else ["typed"]
    back = tmp_path / "back.xml"
    cli_ok("export-xml", *tables, str(back), "--db", backend_url)
    compared = mono(interop, "compare", xsd, after, back.with_suffix(".xsd"), back)
    assert compared.returncode == 0, compared.stderr

    again = CliRunner().invoke(cli, ["import-xml", str(diff), "--db", backend_url])
    assert again.exit_code != 0 and "conflict in table" in again.stderr, again.output
    cli_ok("export-xml", *tables, str(back), "--db", backend_url)
    compared = mono(interop, "compare", xsd, after, back.with_suffix(".xsd"), back)
    assert compared.returncode == 0, compared.stderr

    ours = tmp_path / "ours.xml"
    cli_ok("export-xml", *tables, str(ours), "--diffgram", "--db", backend_url)
    compared = mono(interop, "compare", xsd, after, ours.with_suffix(".xsd"), ours)
    assert compared.returncode == 0, compared.stderr


def test_finer_than_microsecond_ticks_are_refused(interop: Path, tmp_path: Path) -> None:
    """.NET's TimeSpan and DateTime count 100 ns ticks; Python keeps microseconds. A value
    with a tick beyond them is refused (naming row and column), never cut."""
    xsd, before, diff, after = (
        tmp_path / "set.xsd",
        tmp_path / "before.xml",
        tmp_path / "diff.xml",
        tmp_path / "after.xml",
    )
    run(interop, "diffgram", "typed", "flat", xsd, before, diff, after)
    text = after.read_text().replace(
        "<span>P400DT0.001S</span>", "<span>P400DT0.0010001S</span>", 1
    )
    assert "P400DT0.0010001S" in text
    after.write_text(text)
    with pytest.raises(XMLImportError, match="finer than a microsecond") as info:
        read_xml(read_xsd(xsd), after, xsd)
    assert info.value.column == "span"

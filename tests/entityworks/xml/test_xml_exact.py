"""XML keeps every value exactly (sign of zero, Decimal exponent, offset) or refuses it, and
import accepts exactly what the Store accepts (issue 10, items 6, 7, 12 and 13 on the XML side).

Comparisons here are strict: same type, same bits of a float, same digits and exponent of a
Decimal, same offset of a datetime, not just ``==``.
"""

from __future__ import annotations

import ast
import dataclasses
import datetime as dt
import decimal
import math
import struct
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from entityworks import AwareDatetime, SchemaError, Store, ValueEncodingError, XMLImportError
from entityworks.registry import check_decimal
from entityworks.xml.table import read_xml, write_xml
from entityworks.xml.xsd import read_xsd
from entityworks.xml.xsdwrite import MAX_COLUMNS, MAX_TABLES, xsd_bytes

from ..strategies import XML_FORBIDDEN, decimals, same_array_values

SWEEP = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
PACKAGE = Path(__file__).resolve().parents[3] / "entityworks"


def exact(a: Any, b: Any) -> bool:
    """``a`` and ``b`` are the same value of the same type, to the last bit we can see."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or struct.pack("<d", a) == struct.pack("<d", b)
    if isinstance(a, decimal.Decimal):
        return a.as_tuple() == b.as_tuple()
    if isinstance(a, dt.datetime | dt.time):
        return (
            a == b and a.utcoffset() == b.utcoffset() and (a.tzinfo is None) == (b.tzinfo is None)
        )
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and same_array_values(a, b)
    if dataclasses.is_dataclass(a):
        return all(exact(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(map(exact, a, b))
    return a == b


def round_trip(cls: type, rows: list[Any], tmp_path: Path, name: str = "r") -> list[Any]:
    xml, xsd = tmp_path / f"{name}.xml", tmp_path / f"{name}.xsd"
    write_xml(cls, rows, xml, xsd)
    back = read_xml(cls, xml, xsd)
    assert exact(rows, back), (rows, back)
    return back


# -- item 6: values that used to come back different ----------------------------------------


@dataclass
class Reading:
    value: float


@dataclass
class Probe:
    id: int
    value: float
    maybe: float | None
    readings: list[Reading] = field(default_factory=list)


def test_negative_zero_keeps_its_sign_in_rows_and_child_rows(tmp_path: Path) -> None:
    rows = [Probe(1, -0.0, -0.0, [Reading(-0.0), Reading(0.0)]), Probe(2, 0.0, None)]
    back = round_trip(Probe, rows, tmp_path)
    assert math.copysign(1, back[0].readings[0].value) == -1
    assert math.copysign(1, back[0].maybe) == -1
    assert math.copysign(1, back[1].value) == 1


@dataclass
class Grid:
    id: int
    cells: np.ndarray


def test_arrays_keep_nan_and_the_sign_of_zero(tmp_path: Path) -> None:
    """A 0-d NaN array once compared unequal to itself in the suite; the round trip must keep
    NaN, -0.0 and the 0-d shape, checked here explicitly rather than left to chance."""
    rows = [
        Grid(1, np.array(math.nan)),
        Grid(2, np.array([-0.0, 0.0, math.nan, -math.inf])),
        Grid(3, np.array(-0.0)),
    ]
    back = round_trip(Grid, rows, tmp_path)
    assert back[0].cells.shape == () and math.isnan(back[0].cells)
    assert list(np.signbit(back[1].cells)) == [True, False, False, True]
    assert math.isnan(back[1].cells[2]) and back[1].cells[3] == -math.inf
    assert back[2].cells.shape == () and np.signbit(back[2].cells)


def test_a_bad_child_item_is_named_by_the_row_that_owns_it(tmp_path: Path) -> None:
    """Child rows are formatted numbered on their own; the error once said row 0 (the first
    child row) for an item of row 1."""
    rows = [Probe(1, 1.0, None), Probe(2, 2.0, None, [Reading(1.0), Reading("x")])]  # type: ignore[arg-type]
    with pytest.raises(
        ValueEncodingError, match=r"^row 1, column 'value' of readings\[1\]: "
    ) as info:
        write_xml(Probe, rows, tmp_path / "p.xml", tmp_path / "p.xsd")
    assert (info.value.row, info.value.column) == (1, "value")
    assert list(tmp_path.iterdir()) == []


@dataclass
class Money:
    id: int
    amount: decimal.Decimal
    child: list[Reading] = field(default_factory=list)


DECIMALS = [
    "1.50",
    "0E-7",
    "0.00",
    "-0.00",
    "-0",
    "123456789.000000000",
    "1E-40",
    "-12345678901234567890.123456789012345678901234567890",
    "1E+2",
    "0E+3",
    "-7E+1",
    "1E+100000000",
    "1E-100000000",
    "0." + "0" * 1000 + "1",
    "9" * 1001,
    "NaN",
    "-Infinity",
    "sNaN",
]


def decimal_rule(value: decimal.Decimal) -> str | None:
    """The registry's Decimal rule: ``None`` if it accepts ``value``, else its reason."""
    try:
        check_decimal(value)
    except (TypeError, ValueError) as exc:
        return str(exc)
    return None


@pytest.mark.parametrize("text", DECIMALS)
def test_a_decimal_round_trips_exactly_or_export_refuses_it_as_the_registry_does(
    tmp_path: Path, text: str
) -> None:
    value = decimal.Decimal(text)
    reason = decimal_rule(value)
    if reason is None:
        round_trip(Money, [Money(1, value)], tmp_path)
        return
    rows = [Money(1, decimal.Decimal("1.5")), Money(2, value)]
    started = time.perf_counter()
    with pytest.raises(ValueEncodingError) as info:
        write_xml(Money, rows, tmp_path / "m.xml", tmp_path / "m.xsd")
    assert time.perf_counter() - started < 30  # not a 100 MB element first (a hang guard)
    assert reason in str(info.value)
    assert (info.value.row, info.value.column) == (1, "amount")
    assert list(tmp_path.iterdir()) == []


def test_the_rule_refuses_what_xml_cannot_hold_exactly() -> None:
    for text in ("1E+2", "0E+3", "1E+100000000", "1E-100000000", "NaN", "-Infinity"):
        assert decimal_rule(decimal.Decimal(text)) is not None, text


@pytest.mark.parametrize("text", ["9" * 1001, "0." + "0" * 1000 + "1", "-0.00"])
def test_import_applies_the_same_decimal_rule(tmp_path: Path, text: str) -> None:
    xml, xsd = tmp_path / "m.xml", tmp_path / "m.xsd"
    write_xml(Money, [Money(1, decimal.Decimal("1")), Money(2, decimal.Decimal("2"))], xml, xsd)
    xml.write_text(xml.read_text().replace("<amount>2</amount>", f"<amount>{text}</amount>"))
    reason = decimal_rule(decimal.Decimal(text))
    if reason is None:
        assert exact(read_xml(Money, xml, xsd)[1].amount, decimal.Decimal(text))
        return
    with pytest.raises(XMLImportError) as info:
        read_xml(Money, xml, xsd)
    assert reason in str(info.value)
    assert (info.value.row, info.value.column) == (2, "amount")


@dataclass
class Everything:
    id: int
    f: float
    dec: decimal.Decimal
    naive: dt.datetime
    aware: AwareDatetime
    day: dt.date
    clock: dt.time
    span: dt.timedelta
    raw: bytes
    uid: uuid.UUID
    flag: bool
    text: str
    big: int


XML_OFFSETS = st.integers(-14 * 60, 14 * 60).map(lambda m: dt.timezone(dt.timedelta(minutes=m)))
XML_TEXT = st.text(st.characters(exclude_categories=("Cs",), exclude_characters=XML_FORBIDDEN))


@SWEEP
@given(
    st.lists(
        st.builds(
            Everything,
            id=st.just(0),
            f=st.floats(),
            dec=decimals(),
            naive=st.datetimes(),
            aware=st.datetimes(
                dt.datetime(2, 1, 1), dt.datetime(9998, 12, 31), timezones=XML_OFFSETS
            ),
            day=st.dates(),
            clock=st.times(),
            raw=st.binary(),
            span=st.timedeltas(dt.timedelta(days=-106_000_000), dt.timedelta(days=106_000_000)),
            uid=st.uuids(),
            flag=st.booleans(),
            text=XML_TEXT,
            big=st.integers(-(2**63), 2**63 - 1),
        ),
        max_size=4,
    )
)
def test_every_xml_text_codec_is_exact(tmp_path: Path, rows: list[Everything]) -> None:
    for n, row in enumerate(rows):
        row.id = n
    round_trip(Everything, rows, tmp_path)


def test_an_int_in_a_float_field_must_be_exact_as_a_float(tmp_path: Path) -> None:
    write_xml(Reading, [Reading(2**53), Reading(-3)], tmp_path / "r.xml")  # type: ignore
    assert exact(read_xml(Reading, tmp_path / "r.xml"), [Reading(2.0**53), Reading(-3.0)])
    with pytest.raises(ValueEncodingError, match="no exact float"):
        write_xml(Reading, [Reading(2**53 + 1)], tmp_path / "bad.xml")  # type: ignore[arg-type]
    assert not (tmp_path / "bad.xml").exists()


# -- item 7: import and the Store accept the same values; export writes only those ----------


@dataclass
class Stamp:
    id: int
    at: dt.datetime


@dataclass
class AwareStamp:
    id: int
    at: AwareDatetime


@dataclass
class Clock:
    id: int
    at: dt.time


def document(tmp_path: Path, table: str, column_xml: str) -> Path:
    path = tmp_path / f"{table}.xml"
    path.write_text(f"<DocumentElement><{table}><id>1</id>{column_xml}</{table}></DocumentElement>")
    return path


@pytest.mark.parametrize(
    "text", ["2020-01-01T00:00:00+05:00", "2020-01-01T00:00:00Z", "2020-01-01T00:00:00.5-00:00"]
)
def test_a_naive_column_refuses_an_offset_like_the_store(tmp_path: Path, text: str) -> None:
    aware = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    store = Store(tmp_path / "s.db")
    store.create(Stamp)
    with pytest.raises(ValueEncodingError) as stored:
        store.insert(Stamp(1, aware))
    with pytest.raises(XMLImportError) as imported:
        read_xml(Stamp, document(tmp_path, "stamp", f"<at>{text}</at>"))
    reason = str(stored.value).rsplit(": ", 1)[-1].removesuffix("; nothing was written")
    assert reason in str(imported.value)
    assert (imported.value.row, imported.value.column) == (1, "at")
    with pytest.raises(XMLImportError):
        store.import_xml(Stamp, tmp_path / "stamp.xml")
    assert store.count(Stamp) == 0


def test_a_time_column_refuses_an_offset_but_reads_dotnet_datetimes(tmp_path: Path) -> None:
    with pytest.raises(XMLImportError, match="tzinfo") as info:
        read_xml(Clock, document(tmp_path, "clock", "<at>12:00:00+05:00</at>"))
    assert info.value.column == "at"
    # .NET keeps an xs:time column in a local DateTime: its wall-clock time is the value
    path = document(tmp_path, "clock", "<at>2026-11-22T12:30:01.000005-05:00</at>")
    assert read_xml(Clock, path) == [Clock(1, dt.time(12, 30, 1, 5))]


@pytest.mark.parametrize(
    "offset",
    [
        dt.timedelta(hours=-19, minutes=-46),
        dt.timedelta(hours=14, minutes=1),
        dt.timedelta(minutes=5, seconds=30),
        dt.timedelta(microseconds=1),
    ],
)
def test_an_offset_xml_cannot_hold_is_refused_at_export(
    tmp_path: Path, offset: dt.timedelta
) -> None:
    tz = dt.timezone(offset)
    rows = [
        AwareStamp(1, dt.datetime(2020, 1, 1, tzinfo=dt.UTC)),
        AwareStamp(2, dt.datetime(2020, 1, 1, tzinfo=tz)),
    ]
    with pytest.raises(ValueEncodingError, match="offset") as info:
        write_xml(AwareStamp, rows, tmp_path / "a.xml", tmp_path / "a.xsd")
    assert (info.value.row, info.value.column) == (1, "at")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("minutes", [-14 * 60, -(9 * 60 + 30), 0, 5 * 60 + 45, 14 * 60])
def test_every_offset_xml_holds_round_trips_with_its_offset(tmp_path: Path, minutes: int) -> None:
    tz = dt.timezone(dt.timedelta(minutes=minutes))
    round_trip(
        AwareStamp, [AwareStamp(1, dt.datetime(2020, 2, 29, 23, 59, 59, 1, tzinfo=tz))], tmp_path
    )


# -- item 12: XSDs and documents that used to raise internal errors -------------------------


@dataclass
class Note:
    id: int
    text: str | None


def test_a_name_escaping_no_character_is_a_clear_error(tmp_path: Path) -> None:
    xsd = tmp_path / "n.xsd"
    xsd.write_text(xsd_bytes(Note).decode().replace('name="text"', 'name="_xFFFFFFFF_"'))
    (tmp_path / "n.xml").write_text("<DocumentElement><note><id>1</id></note></DocumentElement>")
    for attempt in (lambda: read_xsd(xsd), lambda: read_xml(Note, tmp_path / "n.xml", xsd)):
        with pytest.raises(XMLImportError, match="U\\+FFFFFFFF, which is not a character"):
            attempt()
    xsd.write_text(xsd_bytes(Note).decode().replace('name="text"', 'name="_xD800_"'))
    with pytest.raises(XMLImportError, match="U\\+D800"):
        read_xsd(xsd)


def test_a_pattern_libxml2_cannot_evaluate_is_a_clear_error(tmp_path: Path) -> None:
    xml, xsd = tmp_path / "n.xml", tmp_path / "n.xsd"
    write_xml(Note, [Note(1, "ac"), Note(2, "a" * 40 + "b")], xml)
    column = '<xs:element name="text" type="xs:string" minOccurs="0"/>'
    text = xsd_bytes(Note).decode()
    assert column in text
    xsd.write_text(
        text.replace(
            column,
            (
                '<xs:element name="text" minOccurs="0"><xs:simpleType><xs:restriction '
                'base="xs:string"><xs:pattern value="(a|aa)*c"/></xs:restriction></xs:simpleType>'
                "</xs:element>"
            ),
        )
    )
    store = Store(tmp_path / "n.db")
    for attempt in (lambda: read_xml(Note, xml, xsd), lambda: store.import_xml(Note, xml, xsd)):
        with pytest.raises(XMLImportError, match="could not be checked") as info:
            attempt()
        assert info.value.row == 2
    assert "note" not in store.table_names()


@dataclass
class Room:
    name: str


@dataclass
class House:
    id: int
    rooms: list[Room] = field(default_factory=list)


def without_constraints(text: str) -> str:
    start, end = text.index("<xs:unique"), text.rindex("</xs:keyref>") + len("</xs:keyref>")
    return text[:start] + text[end:]


def test_orphan_child_rows_are_refused_without_a_keyref(tmp_path: Path) -> None:
    xml, xsd = tmp_path / "h.xml", tmp_path / "h.xsd"
    write_xml(House, [House(1, [Room("hall")]), House(2, [Room("attic")])], xml)
    xsd.write_text(without_constraints(xsd_bytes(House).decode()))
    assert "keyref" not in xsd.read_text()
    assert len(read_xml(House, xml, xsd)) == 2  # still readable as it is
    xml.write_text(
        xml.read_text().replace("<parent_key>2</parent_key>", "<parent_key>7</parent_key>")
    )
    with pytest.raises(XMLImportError, match="refers to no row") as info:
        read_xml(House, xml, xsd)
    assert (info.value.row, info.value.column) == (4, "parent_key")


def test_duplicate_parents_and_positions_are_refused_without_constraints(tmp_path: Path) -> None:
    xml, xsd = tmp_path / "h.xml", tmp_path / "h.xsd"
    write_xml(House, [House(1, [Room("hall"), Room("attic")]), House(2)], xml)
    xsd.write_text(without_constraints(xsd_bytes(House).decode()))
    text = xml.read_text()
    xml.write_text(text.replace("<house><id>2</id>", "<house><id>1</id>"))
    with pytest.raises(XMLImportError, match="duplicate value 1") as info:
        read_xml(House, xml, xsd)
    assert info.value.column == "id"
    xml.write_text(text.replace("<position>1</position>", "<position>0</position>"))
    with pytest.raises(XMLImportError, match="duplicate value") as info:
        read_xml(House, xml, xsd)
    assert info.value.column == "parent_key"


# -- item 13: resource bounds ---------------------------------------------------------------


def wide_xsd(columns: int, tables: int = 1) -> str:
    rows = "".join(
        f'<xs:element name="t{t}"><xs:complexType><xs:sequence>'
        + "".join(f'<xs:element name="c{i}" type="xs:long" minOccurs="0"/>' for i in range(columns))
        + "</xs:sequence></xs:complexType></xs:element>"
        for t in range(tables)
    )
    return (
        '<xs:schema xmlns:xs="http://www.w3.org/2001/XMLSchema" '
        'xmlns:msdata="urn:schemas-microsoft-com:xml-msdata"><xs:element name="D" '
        'msdata:IsDataSet="true" msdata:MainDataTable="t0"><xs:complexType>'
        f'<xs:choice minOccurs="0" maxOccurs="unbounded">{rows}</xs:choice>'
        "</xs:complexType></xs:element></xs:schema>"
    )


@pytest.mark.parametrize(
    "columns, tables, message",
    [
        (100_000, 1, "bytes allowed"),
        (MAX_COLUMNS + 1, 1, f"at most {MAX_COLUMNS} per table"),
        (1, MAX_TABLES + 1, f"more than {MAX_TABLES} tables"),
        (MAX_COLUMNS, 5, "columns in all"),
    ],
)
def test_oversized_schemas_are_refused_before_anything_is_compiled(
    tmp_path: Path, columns: int, tables: int, message: str
) -> None:
    xsd = tmp_path / "wide.xsd"
    xsd.write_text(wide_xsd(columns, tables))
    (tmp_path / "w.xml").write_text("<DocumentElement><t0><c0>1</c0></t0></DocumentElement>")
    started = time.perf_counter()
    with pytest.raises(XMLImportError, match=message):
        read_xsd(xsd)
    assert time.perf_counter() - started < 60  # a hang guard, not a benchmark


def test_the_widest_allowed_table_still_imports(tmp_path: Path) -> None:
    xsd = tmp_path / "wide.xsd"
    xsd.write_text(wide_xsd(MAX_COLUMNS))
    cls = read_xsd(xsd)
    (tmp_path / "w.xml").write_text("<D><t0><c0>1</c0><c499>2</c499></t0></D>")
    (row,) = read_xml(cls, tmp_path / "w.xml", xsd)
    assert (row.c0, row.c1, row.c499) == (1, None, 2)


def test_export_refuses_a_class_import_would_refuse(tmp_path: Path) -> None:
    wide = dataclasses.make_dataclass("Wide", [(f"c{i}", int) for i in range(MAX_COLUMNS + 1)])
    with pytest.raises(SchemaError, match=f"at most {MAX_COLUMNS}"):
        write_xml(wide, [], tmp_path / "w.xml")
    assert list(tmp_path.iterdir()) == []


# -- one module's job: the table (was xmlio) <-> xsd import cycle is cut -------------------


def imported_modules(module: str) -> set[str]:
    tree = ast.parse((PACKAGE / "xml" / f"{module}.py").read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            found.add(node.module or "")
            if not node.module:
                found.update(alias.name for alias in node.names)
    return found


def test_xsd_and_the_parser_do_not_import_the_table_module() -> None:
    assert "table" not in imported_modules("xsd")
    assert "table" not in imported_modules("parser")
    assert "xsd" not in imported_modules("parser")

"""XML export / import: exact round trips, row- and column-precise errors, Store streaming."""

from __future__ import annotations

import datetime as dt
import decimal
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree

from entityworks import Store, ValueEncodingError, XMLImportError, col
from entityworks.xml.table import iter_xml, read_xml, write_xml
from entityworks.xml.xsd import write_xsd
from entityworks.xml.xsdwrite import xsd_bytes

from ..strategies import XML_FORBIDDEN, AllTypes, assert_same_rows, rows

FAST = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@dataclass
class Person:
    id: int
    name: str | None
    age: int
    score: float = 0.0


@dataclass
class Room:
    name: str
    size: int | None


@dataclass
class House:
    id: int
    street: str
    rooms: list[Room] = field(default_factory=list)
    built: dt.date | None = None


def people(n: int) -> list[Person]:
    return [Person(i, None if i % 3 == 0 else f"p{i}", i * 2, i / 4) for i in range(1, n + 1)]


@FAST
@given(data=rows(xml=True))
def test_every_registry_type_round_trips_exactly(tmp_path: Path, data: list[AllTypes]) -> None:
    xml, xsd = tmp_path / "rows.xml", tmp_path / "rows.xsd"
    assert write_xml(AllTypes, data, xml, xsd) == len(data)
    assert_same_rows(data, read_xml(AllTypes, xml, xsd))
    assert_same_rows(data, read_xml(AllTypes, xml))  # against the class's own XSD


def test_none_empty_and_whitespace_strings_are_distinct(tmp_path: Path) -> None:
    data = [
        Person(1, None, 1),
        Person(2, "", 2),
        Person(3, "  \t", 3),
        Person(4, "\r\n", 4),
        Person(5, " x ", 5),
    ]
    write_xml(Person, data, tmp_path / "p.xml", tmp_path / "p.xsd")
    text = (tmp_path / "p.xml").read_text()
    assert '<name xml:space="preserve">  \t</name>' in text
    assert '<name xml:space="preserve">&#13;\n</name>' in text
    assert "<person><id>1</id><age>1</age>" in text  # null: element omitted
    assert "<name></name>" in text
    assert read_xml(Person, tmp_path / "p.xml", tmp_path / "p.xsd") == data


def test_our_pair_validates_strictly_with_lxml(tmp_path: Path) -> None:
    write_xml(Person, people(5), tmp_path / "p.xml", tmp_path / "p.xsd")
    schema = etree.XMLSchema(etree.parse(str(tmp_path / "p.xsd")))
    assert schema.validate(etree.parse(str(tmp_path / "p.xml"))), schema.error_log


@pytest.mark.parametrize(
    "bad, column", [("a\x00b", "name"), ("\x1b[0m", "name"), ("\ufffe", "name")]
)
def test_characters_xml_cannot_hold_are_refused_with_row_and_column(
    tmp_path: Path, bad: str, column: str
) -> None:
    data = people(4)
    data[2].name = bad
    with pytest.raises(ValueEncodingError) as info:
        write_xml(Person, data, tmp_path / "p.xml")
    assert (info.value.row, info.value.column) == (2, column)
    assert "row 2" in str(info.value) and "'name'" in str(info.value)
    assert list(tmp_path.iterdir()) == []  # no file, not even a partial one


@FAST
@given(
    row=st.integers(0, 5),
    prefix=st.text(max_size=5).filter(
        lambda t: not any(c in XML_FORBIDDEN or "\ud800" <= c <= "\udfff" for c in t)
    ),
    bad=st.sampled_from(XML_FORBIDDEN),
)
def test_any_forbidden_character_is_refused_before_a_file_exists(
    tmp_path: Path, row: int, prefix: str, bad: str
) -> None:
    data = people(6)
    data[row].name = prefix + bad
    target = tmp_path / f"{row}.xml"
    with pytest.raises(ValueEncodingError) as info:
        write_xml(Person, data, target)
    assert (info.value.row, info.value.column) == (row, "name")
    assert not target.exists()


@pytest.mark.parametrize("value", ["7", 1.5, None, 2**63, -(2**63) - 1])
def test_values_of_the_wrong_type_are_refused(tmp_path: Path, value: object) -> None:
    data = people(3)
    data[1].age = value  # type: ignore[assignment]
    with pytest.raises(ValueEncodingError, match=r"row 1, column 'age'"):
        write_xml(Person, data, tmp_path / "p.xml")
    assert not (tmp_path / "p.xml").exists()


def test_a_bool_in_an_int_field_is_written_as_its_int(tmp_path: Path) -> None:
    """The registry's rule, as in the Store: a bool is an int, and comes back as one."""
    data = people(2)
    data[1].age = True
    write_xml(Person, data, tmp_path / "p.xml")
    back = read_xml(Person, tmp_path / "p.xml")
    assert back[1].age == 1 and type(back[1].age) is int


def test_an_existing_file_survives_a_failed_export(tmp_path: Path) -> None:
    target = tmp_path / "p.xml"
    target.write_text("keep me")
    data = people(3)
    data[0].name = "\x07"
    with pytest.raises(ValueEncodingError):
        write_xml(Person, data, target)
    assert target.read_text() == "keep me"


def corrupt(tmp_path: Path, old: str, new: str) -> tuple[Path, Path]:
    xml, xsd = tmp_path / "p.xml", tmp_path / "p.xsd"
    write_xml(Person, people(6), xml, xsd)
    text = xml.read_text()
    assert old in text
    xml.write_text(text.replace(old, new, 1))
    return xml, xsd


@pytest.mark.parametrize(
    "old, new, row, column, message",
    [
        ("<age>8</age>", "<age>eight</age>", 4, "age", None),
        ("<age>8</age>", "<age>1_0</age>", 4, "age", None),
        ("<age>8</age>", "", 4, "age", None),
        ("<score>1.25</score>", "", 5, "score", None),
        ("<age>8</age>", "<age>8</age><extra>1</extra>", 4, "extra", None),
        ("<id>4</id><name>p4</name>", "<name>p4</name><id>4</id>", 4, "id", None),
        ("<id>4</id>", "<id>2</id>", 4, "id", "duplicate value 2"),
        ("<age>8</age>", "<age>99999999999999999999</age>", 4, "age", None),
        ("<score>1.0</score>", "<score>1,0</score>", 4, "score", None),
    ],
)
def test_invalid_documents_name_row_and_column(
    tmp_path: Path, old: str, new: str, row: int, column: str, message: str | None
) -> None:
    # the row and column are ours; the reason is the schema validator's (libxml2's wording,
    # which changes between versions), except a duplicate key, which we report
    xml, xsd = corrupt(tmp_path, old, new)
    with pytest.raises(XMLImportError) as info:
        read_xml(Person, xml, xsd)
    assert (info.value.row, info.value.column) == (row, column)
    assert str(info.value).endswith("nothing was imported")
    if message is not None:
        assert info.match(message)
    assert f"row {row}" in str(info.value) and f"column {column!r}" in str(info.value)


def test_decoding_failure_after_validation_names_the_column(tmp_path: Path) -> None:
    @dataclass
    class Stamp:
        id: int
        at: dt.datetime

    write_xml(Stamp, [Stamp(1, dt.datetime(2020, 1, 1))], tmp_path / "s.xml", tmp_path / "s.xsd")
    # valid xs:dateTime, but an offset in a naive column is kept as wall time, so use a year
    # Python cannot hold instead
    path = tmp_path / "s.xml"
    path.write_text(path.read_text().replace("2020-01-01T00:00:00", "10000-01-01T00:00:00"))
    with pytest.raises(XMLImportError) as info:
        read_xml(Stamp, path, tmp_path / "s.xsd")
    assert (info.value.row, info.value.column) == (1, "at")


def test_import_writes_nothing_when_any_row_is_bad(tmp_path: Path) -> None:
    store = Store(tmp_path / "db.sqlite")
    store.create(Person)
    store.insert(Person(50_000, "kept", 1))
    xml, xsd = tmp_path / "big.xml", tmp_path / "big.xsd"
    data = [Person(i, f"n{i}", i) for i in range(1, 12_001)]
    write_xml(Person, data, xml, xsd)
    text = xml.read_text()
    xml.write_text(
        text.replace(
            "<id>11000</id><name>n11000</name><age>11000</age>",
            "<id>11000</id><name>n11000</name><age>x</age>",
        )
    )
    with pytest.raises(XMLImportError) as info:
        store.import_xml(Person, xml, xsd)
    assert (info.value.row, info.value.column) == (11000, "age")
    assert store.count(Person) == 1  # the first batches were rolled back


def test_import_conflicting_with_existing_rows_names_the_row(tmp_path: Path) -> None:
    store = Store(tmp_path / "db.sqlite")
    store.create(Person)
    store.insert(Person(5, "already here", 1))
    write_xml(Person, people(8), tmp_path / "p.xml", tmp_path / "p.xsd")
    with pytest.raises(XMLImportError, match="row 5") as info:
        store.import_xml(Person, tmp_path / "p.xml", tmp_path / "p.xsd")
    assert info.value.row == 5
    assert store.count(Person) == 1


def test_store_export_streams_a_query_and_import_restores_it(tmp_path: Path, store: Store) -> None:
    store.create(Person)
    store.insert_many(people(50))
    count = store.export_xml(Person, tmp_path / "p.xml", tmp_path / "p.xsd", where=col("age") >= 40)
    assert count == 31
    store.delete(Person, where={})
    assert store.import_xml(Person, tmp_path / "p.xml", tmp_path / "p.xsd") == 31
    assert sorted(store.select(Person), key=lambda p: p.id) == people(50)[19:]


def test_child_tables_are_sibling_rows_with_a_keyref(tmp_path: Path) -> None:
    houses = [
        House(1, "Elm", [Room("hall", 12), Room("attic", None)], dt.date(1901, 2, 3)),
        House(2, "Oak"),
        House(3, "Ash", [Room("", 1)]),
    ]
    write_xml(House, houses, tmp_path / "h.xml", tmp_path / "h.xsd")
    text = (tmp_path / "h.xml").read_text()
    assert "<house_rooms><parent_key>1</parent_key><position>1</position>" in text
    assert read_xml(House, tmp_path / "h.xml", tmp_path / "h.xsd") == houses
    store = Store(tmp_path / "h.db")
    assert store.import_xml(House, tmp_path / "h.xml", tmp_path / "h.xsd") == 3
    assert store.get(House, 1) == houses[0]
    store.export_xml(House, tmp_path / "again.xml")
    assert read_xml(House, tmp_path / "again.xml") == houses


def test_a_child_row_pointing_at_no_parent_is_refused(tmp_path: Path) -> None:
    write_xml(House, [House(1, "Elm", [Room("hall", 1)])], tmp_path / "h.xml", tmp_path / "h.xsd")
    path = tmp_path / "h.xml"
    path.write_text(
        path.read_text().replace("<parent_key>1</parent_key>", "<parent_key>9</parent_key>")
    )
    with pytest.raises(XMLImportError, match="refers to no row") as info:
        read_xml(House, path, tmp_path / "h.xsd")
    assert (info.value.row, info.value.column) == (2, "parent_key")


def test_dotnet_root_and_wrapper_names_are_accepted(tmp_path: Path) -> None:
    write_xml(Person, people(3), tmp_path / "p.xml", dataset="DocumentElement")
    write_xsd(Person, tmp_path / "p.xsd", dataset="NewDataSet")
    assert read_xml(Person, tmp_path / "p.xml", tmp_path / "p.xsd") == people(3)


def test_pretty_printed_documents_with_comments_import(tmp_path: Path) -> None:
    xsd = tmp_path / "p.xsd"
    xsd.write_bytes(xsd_bytes(Person))
    (tmp_path / "p.xml").write_text(
        '<?xml version="1.0"?>\n<!-- hand written -->\n<DocumentElement>\n  <person>\n'
        "    <id> 7 </id>\n    <age>+3</age>\n    <score>1E3</score>\n  </person>\n"
        "</DocumentElement>\n"
    )
    assert read_xml(Person, tmp_path / "p.xml", xsd) == [Person(7, None, 3, 1000.0)]


def test_a_foreign_table_or_unknown_column_in_the_xsd_is_refused(tmp_path: Path) -> None:
    @dataclass
    class Other:
        id: int

    write_xsd(Other, tmp_path / "o.xsd")
    write_xml(Person, people(1), tmp_path / "p.xml")
    with pytest.raises(XMLImportError, match="describes table 'other'"):
        read_xml(Person, tmp_path / "p.xml", tmp_path / "o.xsd")

    @dataclass
    class Person2:
        id: int
        name: str | None

    Person2.__tablename__ = "person"  # type: ignore[attr-defined]
    write_xsd(Person, tmp_path / "wide.xsd")
    with pytest.raises(XMLImportError, match="column 'age'"):
        read_xml(Person2, tmp_path / "p.xml", tmp_path / "wide.xsd")


def test_iter_xml_streams_in_batches(tmp_path: Path) -> None:
    write_xml(Person, people(25), tmp_path / "p.xml")
    sizes = [len(b) for b in iter_xml(Person, tmp_path / "p.xml", batch=10)]
    assert sizes == [10, 10, 5]


def test_decimals_keep_every_digit(tmp_path: Path) -> None:
    @dataclass
    class Money:
        id: int
        amount: decimal.Decimal

    values = [
        decimal.Decimal("0." + "1" * 30),
        decimal.Decimal("-" + "9" * 35),
        decimal.Decimal("1E-30"),
        decimal.Decimal("0"),
        decimal.Decimal("1.500"),
    ]
    data = [Money(i, v) for i, v in enumerate(values)]
    write_xml(Money, data, tmp_path / "m.xml", tmp_path / "m.xsd")
    assert read_xml(Money, tmp_path / "m.xml", tmp_path / "m.xsd") == data
    with pytest.raises(ValueEncodingError, match="row 0, column 'amount'"):
        write_xml(Money, [Money(0, decimal.Decimal("NaN"))], tmp_path / "nan.xml")

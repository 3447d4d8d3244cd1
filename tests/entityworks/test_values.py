"""Issue 10 items 5 and 6, and aware offsets: each value comes back equal and of its type, or
the write is refused (naming row and column) with nothing written, the same way on SQLite,
PostgreSQL and MariaDB, through Arrow, pandas and Parquet, and in XML."""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import enum
import math
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import sqlalchemy as sa

from entityworks import (
    AwareDatetime,
    EntityworksError,
    Store,
    ValueEncodingError,
    col,
)
from entityworks.arrow import from_pandas, read_parquet, to_arrow, to_pandas, write_parquet
from entityworks.migrate import apply, diff
from entityworks.registry import registry
from entityworks.xml.table import read_xml, write_xml

from .strategies import same

D = decimal.Decimal
UTC = dt.UTC


def tz(minutes: int) -> dt.timezone:
    return dt.timezone(dt.timedelta(minutes=minutes))


class Size(enum.IntEnum):
    SMALL = 1


class Name(enum.StrEnum):
    ANN = "ann"


@dataclass
class Part:
    weight: float
    label: str | None = None


@dataclass
class Typed:
    id: int
    n: int
    f: float
    s: str
    flag: bool
    raw: bytes
    of: float | None = None
    dec: D | None = None
    uid: uuid.UUID | None = None
    parts: list[Part] = field(default_factory=list)


def typed(i: int, **changes: Any) -> Typed:
    base = Typed(i, 1, 0.5, "s", True, b"b", None, D("1.5"), uuid.UUID(int=42), [Part(1.0, "p")])
    return dataclasses.replace(base, **changes)


def check_same(expected: Any, actual: Any) -> None:
    for f in dataclasses.fields(expected):
        a, b = getattr(expected, f.name), getattr(actual, f.name)
        if f.name == "parts":
            assert len(a) == len(b) and all(
                same(x.weight, y.weight) and x.label == y.label for x, y in zip(a, b, strict=True)
            )
        else:
            assert same(a, b), f"{f.name}: {a!r} came back as {b!r}"


# -- item 5: a value of the wrong type is refused, never converted ---------------------------

WRONG = [
    ("n", "123", "expected an int, got str"),  # SQLite's INTEGER would make it 123
    ("n", 1.0, "expected an int, got float"),
    ("n", np.int64(3), "expected an int, got int64"),
    ("f", "1.5", "expected a float, got str"),
    ("f", D("1.5"), "expected a float, got Decimal"),
    ("f", np.float32(1.5), "expected a float, got float32"),
    ("f", 2**53 + 1, "no exact float"),
    ("s", 123, "expected a str, got int"),  # SQLite and PostgreSQL made it '123'
    ("s", 1.5, "expected a str, got float"),
    ("s", b"x", "expected a str, got bytes"),
    ("flag", 1, "an int is not stored as a bool"),
    ("flag", np.bool_(True), "expected a bool"),
    ("raw", bytearray(b"x"), "expected bytes, got bytearray"),
    ("raw", "x", "expected bytes, got str"),
    ("of", "0.5", "expected a float, got str"),
    ("dec", 3, "expected a Decimal, got int"),
    ("dec", 1.5, "expected a Decimal, got float"),
    ("uid", str(uuid.UUID(int=7)), "expected a UUID, got str"),
]


@pytest.mark.parametrize(
    ("name", "value", "message"), WRONG, ids=[f"{n}-{type(v).__name__}" for n, v, _ in WRONG]
)
def test_wrong_types_are_refused_on_every_write_path(
    store: Store, name: str, value: Any, message: str
) -> None:
    store.create(Typed)
    store.insert(typed(1))
    bad = typed(3, **{name: value})
    writes = {
        "insert_many": lambda: store.insert_many([typed(2), bad]),
        "generated key": lambda: store.insert_many(
            [typed(None), dataclasses.replace(bad, id=None)]
        ),  # type: ignore[arg-type]
        "upsert_many": lambda: store.upsert_many([typed(1), bad]),
        "update": lambda: store.update(dataclasses.replace(bad, id=1)),
    }
    for what, write in writes.items():
        with pytest.raises(ValueEncodingError, match=message) as info:
            write()
        assert info.value.column == name, what
        assert info.value.row in (0, 1), what
        rows = list(store.select(Typed))
        assert len(rows) == 1 and same(rows[0].n, 1) and rows[0].s == "s", what


def test_wrong_types_in_child_rows_and_keys(store: Store) -> None:
    store.create(Typed)
    with pytest.raises(ValueEncodingError, match="expected a float, got str") as info:
        store.insert_many([typed(1), typed(2, parts=[Part(1.0), Part("2")])])  # type: ignore
    assert info.value.column == "weight"
    with pytest.raises(ValueEncodingError, match="expected an int, got str") as info:
        store.insert_many([typed(1), typed("2")])  # type: ignore[arg-type]
    assert (info.value.row, info.value.column) == (1, "id")
    with pytest.raises(ValueEncodingError, match="expected an int, got float"):
        store.upsert(typed(2.0))  # type: ignore[arg-type]
    assert store.count(Typed) == 0 and store.get(Typed, 2) is None


def test_the_conversions_typing_allows(store: Store) -> None:
    """An int (or bool) in a float field, a bool or IntEnum in an int field, a str subclass in a
    str field: stored, and read back, as the field's own type (equal to what was given)."""
    store.create(Typed)
    row = typed(1, n=True, f=3, s=Name.ANN, of=Size.SMALL, parts=[Part(2), Part(False)])
    store.insert(row)
    got = store.get(Typed, 1)
    assert (got.n, got.f, got.s, got.of) == (1, 3.0, "ann", 1.0) == (row.n, row.f, "ann", 1)
    assert [type(v) for v in (got.n, got.f, got.s, got.of)] == [int, float, str, float]
    assert [p.weight for p in got.parts] == [2.0, 0.0]
    assert all(type(p.weight) is float for p in got.parts)
    store.upsert(typed(2, f=np.float64(2.5), n=Size.SMALL))
    back = store.get(Typed, 2)
    assert type(back.f) is float and type(back.n) is int and (back.f, back.n) == (2.5, 1)


def test_frames_refuse_and_convert_by_the_same_rules(tmp_path: Path) -> None:
    for name, value, message in WRONG:
        rows = [typed(1), typed(2, **{name: value})]
        with pytest.raises(ValueEncodingError, match=message) as info:
            to_arrow(Typed, rows)
        assert (info.value.row, info.value.column) == (1, name)
        with pytest.raises(ValueEncodingError):
            write_parquet(Typed, rows, tmp_path / "t.parquet")
        assert not (tmp_path / "t.parquet").exists()
    back = from_pandas(Typed, to_pandas(Typed, [typed(1, n=True, f=3, s=Name.ANN)]))[0]
    assert (back.n, back.f, back.s) == (1, 3.0, "ann")
    assert [type(v) for v in (back.n, back.f, back.s)] == [int, float, str]


def test_every_writer_applies_the_same_rule(tmp_path: Path, sqlite_store: Store) -> None:
    """Store, frames and XML accept and refuse the same values: the registry's rule."""
    sqlite_store.create(Typed)
    for name, value, _message in WRONG:
        rows = [typed(1, **{name: value})]
        for write in (
            lambda r=rows: sqlite_store.insert_many(r),
            lambda r=rows: to_arrow(Typed, r),
            lambda r=rows: write_xml(Typed, r, tmp_path / "t.xml"),
        ):
            with pytest.raises(ValueEncodingError):
                write()
    assert sqlite_store.count(Typed) == 0


def test_filter_values_follow_the_rules(store: Store) -> None:
    store.create(Typed)
    store.insert_many([typed(1), typed(2, n=5, flag=False)])
    with pytest.raises(ValueEncodingError, match="column 'n'.*got str"):
        list(store.select(Typed, where={"n": "5"}))
    with pytest.raises(ValueEncodingError, match="column 'flag'.*not stored as a bool"):
        store.count(Typed, where={"flag": 0})
    with pytest.raises(ValueEncodingError, match="column 'n'.*got float"):
        store.count(Typed, where=col("n").in_([1.5]))  # PostgreSQL made it 2
    assert store.count(Typed, where=col("f") > 0) == 2  # an int for a float: exact
    assert store.count(Typed, where={"flag": False}) == 1


# -- item 6: values that came back different -----------------------------------------------


@dataclass
class Signed:
    id: int
    f: float
    of: float | None
    parts: list[Part] = field(default_factory=list)


def test_negative_zero_keeps_its_sign(store: Store) -> None:
    store.create(Signed)
    rows = [
        Signed(1, -0.0, -0.0, [Part(-0.0), Part(0.0)]),
        Signed(2, 0.0, None, []),
        Signed(3, -1.5, 0.0, []),
    ]
    store.insert_many(rows)
    got = list(store.select(Signed, order_by="id"))
    for a, b in zip(rows, got, strict=True):
        assert same(a.f, b.f) and same(a.of, b.of) if a.of is not None else b.of is None
        assert [math.copysign(1, p.weight) for p in a.parts] == [
            math.copysign(1, p.weight) for p in b.parts
        ]
    # -0.0 == 0.0 in Python, and in every backend's filter
    assert [r.id for r in store.select(Signed, where={"f": 0.0}, order_by="id")] == [1, 2]
    assert [r.id for r in store.select(Signed, where={"f": -0.0}, order_by="id")] == [1, 2]
    store.upsert(Signed(2, -0.0, -0.0, [Part(-0.0)]))
    again = store.get(Signed, 2)
    assert math.copysign(1, again.f) == math.copysign(1, again.of) == -1
    assert math.copysign(1, again.parts[0].weight) == -1


@dataclass
class Jsonish:
    id: int
    counts: dict[int, str]
    pairs: list[tuple[int, int]]
    ints: tuple[int, ...]
    loose: dict[str, Any]
    grid: np.ndarray
    amounts: list[D] = field(default_factory=list)


JSONISH = Jsonish(
    1,
    {1: "a", -20: "b"},
    [(1, 2), (3, -4)],
    (5, 6),
    {"a": [1, 2.5, None]},
    np.array(7.5),
    [D("1.50"), D("-0.001")],
)


def test_json_and_arrays_come_back_as_they_were(store: Store, tmp_path: Path) -> None:
    store.create(Jsonish)
    store.insert(JSONISH)
    for got in (
        store.get(Jsonish, 1),
        to_arrow_back(JSONISH),
        parquet_back(JSONISH, tmp_path),
        xml_back(JSONISH, tmp_path),
    ):
        assert got.counts == {1: "a", -20: "b"} and all(type(k) is int for k in got.counts)
        assert got.pairs == [(1, 2), (3, -4)] and all(type(p) is tuple for p in got.pairs)
        assert got.ints == (5, 6) and type(got.ints) is tuple
        assert got.loose == {"a": [1, 2.5, None]}
        assert got.grid.shape == () and got.grid.dtype == np.float64 and got.grid == 7.5
        assert [a.as_tuple() for a in got.amounts] == [D("1.50").as_tuple(), D("-0.001").as_tuple()]


def to_arrow_back(obj: Any) -> Any:
    from entityworks.arrow import from_arrow

    return from_arrow(type(obj), to_arrow(type(obj), [obj]))[0]


def parquet_back(obj: Any, tmp_path: Path) -> Any:
    write_parquet(type(obj), [obj], tmp_path / "o.parquet")
    return read_parquet(type(obj), tmp_path / "o.parquet")[0]


def xml_back(obj: Any, tmp_path: Path) -> Any:
    write_xml(type(obj), [obj], tmp_path / "o.xml", tmp_path / "o.xsd")
    return read_xml(type(obj), tmp_path / "o.xml", tmp_path / "o.xsd")[0]


JSON_REFUSED = [
    ("loose", {1: "int key"}, "dict key 1 is a int; JSON keys are text"),
    ("loose", {"t": (1, 2)}, "a tuple inside an untyped JSON value"),
    ("loose", {"e": Size.SMALL}, "a Size inside an untyped JSON value"),
    ("counts", {"1": "a"}, "dict key '1': expected an int, got str"),
    ("pairs", [(1, 2, 3)], "expected 2 items, got 3"),
    ("ints", [1, 2], "expected (a )?tuple, got list"),
    ("grid", np.ma.masked_array([1]), "expected a numpy.ndarray, got MaskedArray"),
    ("amounts", [D("1E+2")], "positive exponent"),
]


@pytest.mark.parametrize(
    ("name", "value", "message"), JSON_REFUSED, ids=[n for n, _v, _m in JSON_REFUSED]
)
def test_json_values_that_would_come_back_different_are_refused(
    store: Store, tmp_path: Path, name: str, value: Any, message: str
) -> None:
    store.create(Jsonish)
    bad = dataclasses.replace(JSONISH, id=2, **{name: value})
    for write in (
        lambda: store.insert_many([JSONISH, bad]),
        lambda: to_arrow(Jsonish, [JSONISH, bad]),
        lambda: write_xml(Jsonish, [JSONISH, bad], tmp_path / "j.xml"),
    ):
        with pytest.raises(ValueEncodingError, match=message) as info:
            write()
        assert (info.value.row, info.value.column) == (1, name)
    assert store.count(Jsonish) == 0 and not (tmp_path / "j.xml").exists()


@dataclass
class Money:
    id: int
    amount: D
    maybe: D | None = None


EXACT_DECIMALS = [
    D("1.5"),
    D("1.50"),
    D("1.500000"),
    D("0.00"),
    D("0"),
    D("100"),
    D("-7.25"),
    D("0." + "0" * 29 + "1"),
    D("9" * 35 + "." + "9" * 30),
    D("-" + "9" * 35),
    D("12345678901234567890.123456789"),
]


def test_decimals_keep_their_exponent_everywhere(store: Store, tmp_path: Path) -> None:
    store.create(Money)
    rows = [Money(i, d, d) for i, d in enumerate(EXACT_DECIMALS)]
    store.insert_many(rows)
    for source in (
        list(store.select(Money, order_by="id")),
        [store.get(Money, i) for i in range(len(rows))],
        read_parquet(Money, write_parquet(Money, rows, tmp_path / "m.parquet")),
        from_pandas(Money, to_pandas(Money, rows)),
    ):
        assert [(m.amount.as_tuple(), m.maybe.as_tuple()) for m in source] == [
            (d.as_tuple(), d.as_tuple()) for d in EXACT_DECIMALS
        ]
    # Filters and ORDER BY compare numbers, the same on every backend (and as Python does).
    assert [m.id for m in store.select(Money, where={"amount": D("1.5")}, order_by="id")] == [
        0,
        1,
        2,
    ]
    assert store.count(Money, where=col("amount") == 1.5) == 3
    assert store.count(Money, where=col("amount") == 0) == 2
    ordered = [m.amount for m in store.select(Money, order_by=["amount", "id"])]
    assert ordered == sorted(EXACT_DECIMALS)
    assert store.count(Money, where=col("amount") > D("99")) == 3


REFUSED_DECIMALS = [
    (D("1E+2"), "positive exponent"),
    (D("-0"), "negative zero"),
    (D("-0.00"), "negative zero"),
    (D("NaN"), "not finite"),
    (D("Infinity"), "not finite"),
    (D("1" * 36), "more than 35 digits"),
    (D("0." + "1" * 31), "30 after"),
]


@pytest.mark.parametrize(
    ("value", "message"), REFUSED_DECIMALS, ids=[str(v) for v, _m in REFUSED_DECIMALS]
)
def test_decimals_no_backend_keeps_are_refused_by_every_writer(
    store: Store, tmp_path: Path, value: D, message: str
) -> None:
    store.create(Money)
    rows = [Money(1, D("1")), Money(2, value)]
    for write in (
        lambda: store.insert_many(rows),
        lambda: to_arrow(Money, rows),
        lambda: write_parquet(Money, rows, tmp_path / "m.parquet"),
        lambda: write_xml(Money, rows, tmp_path / "m.xml"),
    ):
        with pytest.raises(ValueEncodingError, match=message) as info:
            write()
        assert (info.value.row, info.value.column) == (1, "amount")
    assert store.count(Money) == 0
    assert not (tmp_path / "m.parquet").exists() and not (tmp_path / "m.xml").exists()


# -- aware datetimes keep their offset -----------------------------------------------------------


@dataclass
class Meeting:
    id: int
    at: AwareDatetime
    until: AwareDatetime | None = None


INSTANT = dt.datetime(2024, 3, 10, 12, 0, tzinfo=UTC)
MEETINGS = [
    Meeting(1, INSTANT, None),
    Meeting(2, INSTANT.astimezone(tz(330)), INSTANT.astimezone(tz(-420))),
    Meeting(3, INSTANT.astimezone(tz(-14 * 60)), INSTANT.astimezone(tz(14 * 60))),
    Meeting(4, (INSTANT + dt.timedelta(microseconds=1)).astimezone(tz(-1)), None),
    Meeting(5, dt.datetime(1, 1, 1, 14, tzinfo=tz(14 * 60)), None),
    Meeting(6, dt.datetime(9999, 12, 31, 9, 59, tzinfo=tz(-14 * 60)), None),
]


def test_aware_datetimes_keep_their_offset_everywhere(store: Store, tmp_path: Path) -> None:
    store.create(Meeting)
    store.insert_many(MEETINGS)
    for source in (
        list(store.select(Meeting, order_by="id")),
        [store.get(Meeting, m.id) for m in MEETINGS],
        read_parquet(Meeting, write_parquet(Meeting, MEETINGS, tmp_path / "m.pq")),
        from_pandas(Meeting, to_pandas(Meeting, MEETINGS)),
        xml_rows(Meeting, MEETINGS, tmp_path),
    ):
        for a, b in zip(MEETINGS, source, strict=True):
            assert same(a.at, b.at) and (
                a.until is None and b.until is None or same(a.until, b.until)
            ), (a, b)
    # Filters and ORDER BY compare instants, as Python does, whatever the offsets.
    same_instant = [m.id for m in store.select(Meeting, where={"at": INSTANT}, order_by="id")]
    assert same_instant == [1, 2, 3]
    later = store.select(Meeting, where=col("at") > INSTANT.astimezone(tz(600)), order_by="id")
    assert [m.id for m in later] == [4, 6]
    ordered = [m.id for m in store.select(Meeting, order_by=["at", "id"])]
    assert ordered == [m.id for m in sorted(MEETINGS, key=lambda m: (m.at, m.id))]


def xml_rows(cls: type, rows: list[Any], tmp_path: Path) -> list[Any]:
    write_xml(cls, rows, tmp_path / "x.xml", tmp_path / "x.xsd")
    return read_xml(cls, tmp_path / "x.xml", tmp_path / "x.xsd")


REFUSED_AWARE = [
    (dt.datetime(2024, 1, 1, tzinfo=tz(14 * 60 + 1)), "beyond ±14:00"),
    (dt.datetime(2024, 1, 1, tzinfo=dt.timezone(dt.timedelta(seconds=30))), "whole number"),
    (dt.datetime(2024, 1, 1), "naive datetime"),
    (dt.datetime(1, 1, 1, tzinfo=tz(60)), "outside the years 1-9999"),
    (dt.date(2024, 1, 1), "expected (a )?datetime"),
]


@pytest.mark.parametrize(("value", "message"), REFUSED_AWARE, ids=[m for _v, m in REFUSED_AWARE])
def test_offsets_xml_cannot_write_are_refused_by_every_writer(
    store: Store, tmp_path: Path, value: Any, message: str
) -> None:
    store.create(Meeting)
    rows = [MEETINGS[0], Meeting(2, value)]
    for write in (
        lambda: store.insert_many(rows),
        lambda: to_arrow(Meeting, rows),
        lambda: write_xml(Meeting, rows, tmp_path / "m.xml"),
    ):
        with pytest.raises(ValueEncodingError, match=message) as info:
            write()
        assert (info.value.row, info.value.column) == (1, "at")
    assert store.count(Meeting) == 0
    with pytest.raises(ValueEncodingError, match=message):
        store.count(Meeting, where={"at": value})


def test_a_table_without_the_offset_column_refuses_what_it_would_lose(store: Store) -> None:
    """A table made before offsets were kept (no ``at__offset``): UTC values round-trip, any
    other offset is refused naming the missing column, until ``schema diff --apply`` adds it."""
    with store.engine.begin() as conn:  # the layout an earlier version created
        old = sa.MetaData()
        now = store.table(Meeting).c
        sa.Table(
            "meeting",
            old,
            sa.Column("id", now.id.type, primary_key=True),
            sa.Column("at", now.at.type, nullable=False),
            sa.Column("until", now.until.type),
        )
        old.create_all(conn)
    # a store opened on that database finds the table as it is
    with Store(store.url) as early:
        early.insert(MEETINGS[0])
        with pytest.raises(
            ValueEncodingError, match="no column 'at__offset' to keep the UTC offset"
        ) as info:
            early.insert_many([Meeting(7, INSTANT), MEETINGS[1]])
        assert (info.value.row, info.value.column) == (1, "at")
        assert [m.id for m in early.select(Meeting)] == [1]
        ops = diff(early, Meeting)
    assert sorted(op.column.name for op in ops) == ["at__offset", "until__offset"], ops
    with Store(store.url) as fresh:
        apply(fresh, Meeting)
        fresh.insert_many(MEETINGS[1:])
        assert all(
            same(a.at, b.at)
            for a, b in zip(MEETINGS, fresh.select(Meeting, order_by="id"), strict=True)
        )


def test_the_rules_live_in_the_registry() -> None:
    """Every built-in entry has a rule; XML, Store and frames read it from there."""
    for tp in (
        bool,
        int,
        float,
        str,
        bytes,
        D,
        dt.datetime,
        AwareDatetime,
        dt.date,
        dt.time,
        dt.timedelta,
        uuid.UUID,
        Size,
        dict[int, str],
        list[tuple[int, int]],
        np.ndarray,
        Part,
    ):
        info = registry.lookup(tp)
        assert info.check is not None, tp
    assert registry.lookup(float).check(3) == 3.0 and type(registry.lookup(float).check(3)) is float
    assert registry.lookup(int).check(True) == 1
    with pytest.raises(TypeError):
        registry.lookup(bool).check(1)
    assert isinstance(ValueEncodingError("x"), EntityworksError)


@dataclass
class Mixed:
    id: int
    at: AwareDatetime | None
    amount: D
    f: float
    s: str | None
    n: int


def test_reflection_reads_companions_and_any_columns(store: Store) -> None:
    """A table entityworks made reflects to the same field types (companions are not fields),
    and the reflected class reads and writes it exactly."""
    store.create(Mixed)
    rows = [
        Mixed(1, INSTANT.astimezone(tz(-150)), D("2.50"), -0.0, None, 7),
        Mixed(2, None, D("0.000"), 1.5, "x", -1),
    ]
    store.insert_many(rows)
    with Store(store.url) as other:
        Reflected = other.reflect("mixed")
    assert [f.name for f in dataclasses.fields(Reflected)] == ["id", "at", "amount", "f", "s", "n"]
    with Store(store.url) as other:
        kinds = {c.name: c.info.name for c in other.schema(Reflected).columns}
        assert kinds == {
            "id": "int",
            "at": "AwareDatetime",
            "amount": "Decimal",
            "f": "float",
            "s": "str",
            "n": "int",
        }
        back = list(other.select(Reflected, order_by="id"))
        for a, b in zip(rows, back, strict=True):
            assert all(
                same(getattr(a, n), getattr(b, n))
                for n in ("at", "amount", "f", "n")
                if getattr(a, n) is not None
            )
        other.insert(Reflected(3, INSTANT.astimezone(tz(60)), D("1.0"), 2.0, None, 0))
    assert same(store.get(Mixed, 3).at, INSTANT.astimezone(tz(60)))


@dataclass
class Tagged:
    id: int
    uid: uuid.UUID


def test_every_uuid_round_trips_and_sorts_as_python_sorts(store: Store) -> None:
    """Any 128-bit value, of any variant and version (MariaDB's native UUID type refused
    some and sorted by another byte order: the column is CHAR(32) there)."""
    values = [
        uuid.UUID("85750621-02fb-cd4f-357f-bc5af71a1bfc"),
        uuid.UUID(int=0),
        uuid.UUID(int=2**128 - 1),
        uuid.UUID("00000000-0000-1000-8000-000000000001"),
        uuid.UUID("ffffffff-0000-1000-8000-000000000000"),
        uuid.uuid4(),
    ]
    store.create(Tagged)
    store.insert_many([Tagged(i, u) for i, u in enumerate(values)])
    assert [t.uid for t in store.select(Tagged, order_by="id")] == values
    assert [t.uid for t in store.select(Tagged, order_by="uid")] == sorted(values)
    assert [t.id for t in store.select(Tagged, where={"uid": values[0]})] == [0]

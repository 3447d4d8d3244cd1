"""Frames: one column per dataclass field, named after it, each value exact.

A type whose values Arrow's own type cannot hold whole (an aware datetime's offset, a
Decimal's exponent) is one struct column of the value and what it keeps beside it; no
storage companion (``at__offset``, ``d__scale``, ``d__key``, ``f__negzero``) is a column of
its own. The oracles are pyarrow.parquet and pandas.read_parquet reading the files, and the
values rebuilt by hand from what they read.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import math
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings

from entityworks import (
    AwareDatetime,
    InvalidNameError,
    Store,
    ValueEncodingError,
    column,
    write_xml,
)
from entityworks.arrow import (
    arrow_schema,
    from_arrow,
    from_pandas,
    read_parquet,
    to_arrow,
    to_pandas,
    write_parquet,
)
from entityworks.arrow.write import write_parquet_table
from entityworks.model.schema import table_schema

from .strategies import AllTypes, Item, assert_same_rows, keeps_dict_order, rows, same
from .test_promise import storable

SETTINGS: dict[str, Any] = dict(
    deadline=None,
    database=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)
D = decimal.Decimal

FIELDS = [f.name for f in dataclasses.fields(AllTypes)]
ITEM_FIELDS = [f.name for f in dataclasses.fields(Item)]
_HINTS = typing.get_type_hints(AllTypes, include_extras=True)
#: Every field of AllTypes but its child list: the Store streams such rows a batch at a
#: time (``rows_to_arrow``) instead of building instances.
Flat = dataclasses.make_dataclass(
    "Flat", [(name, _HINTS[name]) for name in FIELDS if name != "items"]
)
Flat.__module__ = __name__
FLAT_FIELDS = [f.name for f in dataclasses.fields(Flat)]


def flat(data: list[AllTypes]) -> list[Any]:
    return [Flat(**{name: getattr(row, name) for name in FLAT_FIELDS}) for row in data]


def by_hand(name: str, cell: Any) -> Any:
    """The value of field ``name`` rebuilt from what ``pandas.read_parquet`` (NumPy and
    object dtypes, no entityworks) gives for it: a struct is a dict of the value and its
    companions."""
    if cell is None:
        return None
    if name in ("dec", "odec"):
        scale = int(cell["scale"])
        with decimal.localcontext(prec=100):  # 65 digits: more than the default 28
            return cell["value"].quantize(D(1).scaleb(-scale))
    if name in ("aware", "oaware"):
        offset = 0 if cell["offset"] is None or pd.isna(cell["offset"]) else int(cell["offset"])
        instant = pd.Timestamp(cell["value"]).to_pydatetime()
        return instant.astimezone(dt.timezone(dt.timedelta(minutes=offset)))
    return cell


def check_frames(
    cls: type,
    data: list[Any],
    table: pa.Table,
    frame: pd.DataFrame,
    path: Path,
    names: list[str],
    *,
    dict_order: bool = True,
) -> None:
    """One column per field, named after it, through Arrow, pandas and the Parquet file
    (read by pyarrow and pandas alone), and every value back as it was written
    (``dict_order``: a dict's keys in their order too)."""
    assert table.column_names == names
    assert list(frame.columns) == names
    assert pq.read_schema(path).names == names
    if "items" in names:
        item = table.schema.field("items").type.value_type
        assert [f.name for f in item] == ITEM_FIELDS
        raw_item = pq.read_schema(path).field("items").type.value_type
        assert [f.name for f in raw_item] == ITEM_FIELDS
    assert_same_rows(data, from_arrow(cls, table), dict_order=dict_order)
    assert_same_rows(data, from_pandas(cls, frame), dict_order=dict_order)
    assert_same_rows(data, read_parquet(cls, path), dict_order=dict_order)
    raw = pq.read_table(path)  # pyarrow alone: the same table
    assert raw.column_names == names and raw.num_rows == len(data)
    assert_same_rows(data, from_arrow(cls, raw), dict_order=dict_order)
    plain = pd.read_parquet(path)  # pandas alone, NumPy/object dtypes
    assert list(plain.columns) == names and len(plain) == len(data)
    for name in ("i", "s", "flag", "raw", "dec", "odec", "aware", "oaware", "span"):
        for n, (row, cell) in enumerate(zip(data, plain[name], strict=True)):
            want = getattr(row, name)
            got = by_hand(name, cell)
            if name == "span":
                got = pd.Timedelta(got).to_pytimedelta()
            assert same(want, got), f"row {n}, {name}: {want!r} != {got!r}"
    arrow_backed = pd.read_parquet(path, dtype_backend="pyarrow")
    assert list(arrow_backed.columns) == names
    assert_same_rows(data, from_pandas(cls, arrow_backed), dict_order=dict_order)


@given(data=rows(xml=False))
@settings(max_examples=60, **SETTINGS)
def test_every_registry_type_is_one_exact_column_per_field(
    tmp_path_factory: Any, data: list[AllTypes]
) -> None:
    assert arrow_schema(AllTypes).names == FIELDS
    path = tmp_path_factory.mktemp("frames") / "all.parquet"
    write_parquet(AllTypes, data, path)
    check_frames(AllTypes, data, to_arrow(AllTypes, data), to_pandas(AllTypes, data), path, FIELDS)
    rows_flat = flat(data)
    write_parquet(Flat, rows_flat, path)
    check_frames(
        Flat, rows_flat, to_arrow(Flat, rows_flat), to_pandas(Flat, rows_flat), path, FLAT_FIELDS
    )


def test_frames_of_a_store_have_one_exact_column_per_field(
    backend_url: str, tmp_path_factory: Any
) -> None:
    """Store.to_arrow / to_pandas on each backend, with child rows (instances) and
    without (rows streamed a batch at a time), and the Parquet file of the table."""
    backend = backend_url.split(":")[0].split("+")[0]
    backend = "mariadb" if backend == "mysql" else backend
    with Store(backend_url) as store:
        store.create(AllTypes)
        store.create(Flat)

    seen: list[int] = []

    @settings(max_examples=12 if backend == "sqlite" else 6, **SETTINGS)
    @given(data=rows(xml=False).map(storable_floats))
    def check(data: list[AllTypes]) -> None:
        if not storable(backend, data):  # (NUL in PostgreSQL text)
            return
        seen.append(len(data))
        path = tmp_path_factory.mktemp("store") / "t.parquet"
        with Store(backend_url) as store:
            store.delete(AllTypes, where={})
            store.delete(Flat, where={})
            store.insert_many(data)
            store.insert_many(flat(data))
            for cls, names, expected in ((AllTypes, FIELDS, data), (Flat, FLAT_FIELDS, flat(data))):
                table = store.to_arrow(cls, order_by="id")
                write_parquet_table(table, path)
                frame = store.to_pandas(cls, order_by="id")
                ordered = keeps_dict_order(backend)
                check_frames(cls, expected, table, frame, path, names, dict_order=ordered)

    check()
    assert sum(seen) > 0  # rows were stored and read, not only empty tables


def storable_floats(data: list[AllTypes]) -> list[AllTypes]:
    """``data`` with NaN and infinities (which SQLite or MariaDB refuse) made finite."""

    def finite(x: float | None) -> float | None:
        return x if x is None or math.isfinite(x) else 0.5

    for row in data:
        row.f = row.f if math.isfinite(row.f) else 0.5
        row.of = finite(row.of)
        for item in row.items:
            item.weight = finite(item.weight)
    return data


# -- a field named like another's companion: refused alike everywhere -----------------------


@dataclass
class Event:
    id: int
    at: AwareDatetime
    at__offset: int


@dataclass
class Price:
    id: int
    price: D
    price__scale: int


@dataclass
class PriceKey:
    id: int
    price: D | None
    price__key: str


@dataclass
class Signed:
    id: int
    f: float
    f__negzero: int


@dataclass
class Renamed:
    id: int
    at: AwareDatetime
    other: int = column(name="at__offset")


@dataclass
class NestedClash:
    id: int
    events: list[Event] = dataclasses.field(default_factory=list)


CLASHES = [
    (Event, "at", "at__offset"),
    (Price, "price", "price__scale"),
    (PriceKey, "price", "price__key"),
    (Signed, "f", "f__negzero"),
    (Renamed, "at", "other"),
    (NestedClash, "at", "at__offset"),
]


@pytest.mark.parametrize(("cls", "owner", "clash"), CLASHES)
def test_a_field_named_like_a_companion_is_refused_by_every_format(
    tmp_path: Path, cls: type, owner: str, clash: str
) -> None:
    pattern = f"'{owner}' and '{clash}'"
    with pytest.raises(InvalidNameError, match=pattern):
        table_schema(cls)
    doors: list[typing.Callable[[], object]] = [
        lambda: arrow_schema(cls),
        lambda: to_arrow(cls, []),
        lambda: to_pandas(cls, []),
        lambda: write_parquet(cls, [], tmp_path / "x.parquet"),
        lambda: from_arrow(cls, pa.table({"id": pa.array([], pa.int64())})),
        lambda: read_parquet(cls, tmp_path / "x.parquet"),
        lambda: write_xml(cls, [], tmp_path / "x.xml"),
    ]
    for door in doors:
        with pytest.raises(InvalidNameError, match=pattern):
            door()
    assert not (tmp_path / "x.parquet").exists() and not (tmp_path / "x.xml").exists()


@pytest.mark.parametrize(("cls", "owner", "clash"), CLASHES)
def test_a_field_named_like_a_companion_is_refused_by_every_backend(
    backend_url: str, cls: type, owner: str, clash: str
) -> None:
    with Store(backend_url) as store:
        with pytest.raises(InvalidNameError, match=f"'{owner}' and '{clash}'"):
            store.create(cls)
        assert not store.table_names()


def test_a_companion_struct_with_foreign_fields_is_refused() -> None:
    @dataclasses.dataclass
    class At:
        id: int
        at: AwareDatetime

    odd = pa.table(
        {
            "id": [1],
            "at": pa.array(
                [{"value": dt.datetime(2024, 1, 1), "zone": 60}],
                pa.struct([("value", pa.timestamp("us", tz="UTC")), ("zone", pa.int16())]),
            ),
        }
    )
    with pytest.raises(ValueEncodingError, match="column 'at'"):
        from_arrow(At, odd)


# -- what earlier versions wrote and other tools give --------------------------------------


@dataclasses.dataclass
class Placed:
    id: int
    at: AwareDatetime | None
    total: D | None


PLACED = [
    Placed(1, dt.datetime(2024, 5, 1, 12, tzinfo=dt.timezone(dt.timedelta(hours=-3))), D("1.50")),
    Placed(2, None, None),
    Placed(3, dt.datetime(2024, 5, 1, 12, tzinfo=dt.UTC), D("-7")),
]


def test_files_of_entityworks_0_2_with_companion_columns_read_exactly(tmp_path: Path) -> None:
    old = pa.table(
        {
            "id": pa.array([1, 2, 3], pa.int64()),
            "at": pa.array([p.at for p in PLACED], pa.timestamp("us", tz="UTC")),
            "at__offset": pa.array([-180, None, None], pa.int16()),
            "total": pa.array([p.total for p in PLACED], pa.decimal128(3, 2)),
            "total__scale": pa.array([2, None, 0], pa.int8()),
        }
    )
    assert_same_rows(PLACED, from_arrow(Placed, old))
    pq.write_table(old, tmp_path / "old.parquet")
    assert_same_rows(PLACED, read_parquet(Placed, tmp_path / "old.parquet"))
    assert_same_rows(PLACED, from_pandas(Placed, old.to_pandas(types_mapper=pd.ArrowDtype)))
    # without the companions: instants read as UTC, decimals at their column's scale
    bare = old.drop_columns(["at__offset", "total__scale"])
    back = from_arrow(Placed, bare)
    assert [p.at for p in back] == [p.at for p in PLACED]
    assert back[0].at is not None and back[0].at.utcoffset() == dt.timedelta(0)
    assert [str(p.total) for p in back] == ["1.50", "None", "-7.00"]


@dataclass
class Basket:
    id: int
    items: list[Item] = dataclasses.field(default_factory=list)


def test_child_lists_of_entityworks_0_2_with_companion_fields_read_exactly() -> None:
    at = dt.datetime(2024, 5, 1, 12, tzinfo=dt.timezone(dt.timedelta(minutes=-150)))
    baskets = [
        Basket(1, [Item("a", None, at, D("2.50")), Item("b", 1.5, None, None)]),
        Basket(2, []),
    ]
    item = pa.struct(
        [
            ("label", pa.string()),
            ("weight", pa.float64()),
            ("at", pa.timestamp("us", tz="UTC")),
            ("at__offset", pa.int16()),
            ("amount", pa.decimal128(3, 2)),
            ("amount__scale", pa.int8()),
        ]
    )
    old = pa.table(
        {
            "id": [1, 2],
            "items": pa.array(
                [
                    [
                        {
                            "label": "a",
                            "weight": None,
                            "at": at,
                            "at__offset": -150,
                            "amount": D("2.50"),
                            "amount__scale": 2,
                        },
                        {
                            "label": "b",
                            "weight": 1.5,
                            "at": None,
                            "at__offset": None,
                            "amount": None,
                            "amount__scale": None,
                        },
                    ],
                    [],
                ],
                pa.list_(item),
            ),
        }
    )
    assert_same_rows(baskets, from_arrow(Basket, old))
    new = to_arrow(Basket, baskets)
    assert [f.name for f in new.schema.field("items").type.value_type] == ITEM_FIELDS
    assert_same_rows(baskets, from_arrow(Basket, new))


def test_pandas_columns_of_objects_keep_each_offset_and_exponent() -> None:
    paris = pd.to_datetime(
        pd.Series(["2024-01-15 12:00", "2024-07-15 12:00", None])
    ).dt.tz_localize("Europe/Paris")
    frame = pd.DataFrame({"id": [1, 2, 3], "at": paris, "total": [D("1.5"), D("1.50"), None]})
    back = from_pandas(Placed, frame)
    assert [p.at.utcoffset() if p.at else None for p in back] == [
        dt.timedelta(hours=1),
        dt.timedelta(hours=2),
        None,
    ]
    assert [p.at for p in back[:2]] == [
        dt.datetime(2024, 1, 15, 11, tzinfo=dt.UTC),
        dt.datetime(2024, 7, 15, 10, tzinfo=dt.UTC),
    ]
    assert [str(p.total) for p in back] == ["1.5", "1.50", "None"]
    mixed = pd.DataFrame(
        {
            "id": [1, 2],
            "total": [None, None],
            "at": pd.Series(
                [
                    PLACED[0].at,
                    dt.datetime(2024, 1, 1, tzinfo=dt.timezone(dt.timedelta(minutes=345))),
                ],
                dtype=object,
            ),
        }
    )
    assert [p.at.utcoffset() for p in from_pandas(Placed, mixed)] == [  # type: ignore[union-attr]
        dt.timedelta(hours=-3),
        dt.timedelta(minutes=345),
    ]
    naive = mixed.assign(at=pd.Series([dt.datetime(2024, 1, 1), None], dtype=object))
    with pytest.raises(ValueEncodingError, match="row 0, column 'at'.*naive"):
        from_pandas(Placed, naive)


# -- timedelta at the ends of int64 microseconds, pandas' and Arrow's ranges ---------------


@dataclasses.dataclass
class Span:
    id: int
    span: dt.timedelta | None


US = dt.timedelta(microseconds=1)
INT64_MIN_US = dt.timedelta(microseconds=-(2**63))
INT64_MAX_US = dt.timedelta(microseconds=2**63 - 1)
NS_RANGE = dt.timedelta(microseconds=2**63 // 1000)  # pandas' Timedelta[ns] ends near here

HELD = [
    INT64_MIN_US + US,  # the lowest a frame holds
    INT64_MIN_US + dt.timedelta(days=1) - US,  # pyarrow's own conversion overflows here
    INT64_MIN_US + dt.timedelta(days=1),
    INT64_MAX_US,  # the highest
    NS_RANGE,
    -NS_RANGE,
    NS_RANGE + US,
    -NS_RANGE - US,  # beyond Timedelta[ns]: microseconds
    dt.timedelta(0),
    -US,
    US,
]


def micros(value: dt.timedelta) -> int:
    return (value.days * 86_400 + value.seconds) * 1_000_000 + value.microseconds


@pytest.mark.parametrize("value", HELD, ids=lambda v: str(micros(v)))
def test_timedeltas_at_the_ends_of_the_range_are_exact(tmp_path: Path, value: dt.timedelta) -> None:
    data = [Span(1, value), Span(2, None)]
    table = to_arrow(Span, data)
    assert table.column("span").cast(pa.int64()).to_pylist() == [micros(value), None]
    assert from_arrow(Span, table) == data
    frame = to_pandas(Span, data)
    assert frame["span"].isna().tolist() == [False, True]
    assert from_pandas(Span, frame) == data
    write_parquet(Span, data, tmp_path / "s.parquet")
    assert read_parquet(Span, tmp_path / "s.parquet") == data
    raw = pq.read_table(tmp_path / "s.parquet").column("span")
    assert raw.cast(pa.int64()).to_pylist() == [micros(value), None]
    plain = pd.read_parquet(tmp_path / "s.parquet")["span"]  # pandas alone
    assert plain.isna().tolist() == [False, True]
    assert plain.iloc[0].to_pytimedelta() == value


@pytest.mark.parametrize(
    "value",
    [INT64_MIN_US, INT64_MIN_US - US, INT64_MAX_US + US, dt.timedelta.min, dt.timedelta.max],
    ids=["pandas-NaT", "below-int64", "above-int64", "min", "max"],
)
def test_timedeltas_a_frame_cannot_hold_are_refused_by_row_and_column(
    tmp_path: Path, value: dt.timedelta
) -> None:
    data = [Span(1, dt.timedelta(0)), Span(2, value)]
    for door in (
        lambda: to_arrow(Span, data),
        lambda: to_pandas(Span, data),
        lambda: write_parquet(Span, data, tmp_path / "s.parquet"),
    ):
        with pytest.raises(ValueEncodingError, match="row 1, column 'span'"):
            door()
    assert not (tmp_path / "s.parquet").exists()


def test_pandas_timedeltas_with_nanoseconds_are_refused() -> None:
    ends = pd.Series([pd.Timedelta.min, pd.Timedelta.max], dtype="timedelta64[ns]")
    for end in range(2):
        frame = pd.DataFrame({"id": [1], "span": ends.iloc[end : end + 1].reset_index(drop=True)})
        with pytest.raises(ValueEncodingError, match="span"):
            from_pandas(Span, frame)
    # the whole microseconds nearest the ends, from the integers (older pandas' own
    # Timedelta.floor/ceil overflow there)
    low, high = -((2**63 - 1) // 1000) * 1000, (2**63 - 1) // 1000 * 1000
    inside = pd.Series(
        [pd.Timedelta(low, unit="ns"), pd.Timedelta(high, unit="ns"), pd.NaT],
        dtype="timedelta64[ns]",
    )
    back = from_pandas(Span, pd.DataFrame({"id": [1, 2, 3], "span": inside}))
    assert [s.span for s in back] == [
        dt.timedelta(microseconds=low // 1000),
        dt.timedelta(microseconds=high // 1000),
        None,
    ]


def test_a_stored_timedelta_a_frame_cannot_hold_is_refused_naming_it(backend_url: str) -> None:
    with Store(backend_url) as store:
        store.create(Span)
        store.insert_many([Span(1, INT64_MIN_US + US), Span(2, INT64_MAX_US)])
        table = store.to_arrow(Span, order_by="id")
        assert pc.min(table.column("span").cast(pa.int64())).as_py() == -(2**63) + 1
        assert from_arrow(Span, table) == [Span(1, INT64_MIN_US + US), Span(2, INT64_MAX_US)]
        store.insert(Span(3, INT64_MIN_US))  # the Store holds it: a frame cannot
        assert store.get(Span, 3) == Span(3, INT64_MIN_US)
        with pytest.raises(ValueEncodingError, match="row 2, column 'span'"):
            store.to_arrow(Span, order_by="id")
        with pytest.raises(ValueEncodingError, match="row 2, column 'span'"):
            store.to_pandas(Span, order_by="id")

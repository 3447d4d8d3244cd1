"""Frames: dataclasses <-> Arrow <-> pandas <-> Parquet, with the registry's schema."""

from __future__ import annotations

import datetime as dt
import decimal
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings

from entityworks import AwareDatetime, Store, ValueEncodingError, col
from entityworks.arrow import (
    arrow_schema,
    from_arrow,
    from_pandas,
    read_parquet,
    to_arrow,
    to_pandas,
    write_parquet,
)
from entityworks.arrow import write as arrow_write

from .strategies import AllTypes, assert_same_rows, rows

FAST = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@dataclass
class Reading:
    id: int
    sensor: str | None
    value: float | None
    count: int | None
    ok: bool | None
    at: AwareDatetime | None


@dataclass
class Leaf:
    name: str
    weight: float | None


@dataclass
class Tree:
    id: int
    leaves: list[Leaf] = field(default_factory=list)
    height: int = 0


READINGS = [
    Reading(1, "a", 1.5, 10, True, dt.datetime(2024, 1, 1, tzinfo=dt.UTC)),
    Reading(2, None, None, None, None, None),
    Reading(
        3,
        "",
        math.nan,
        -(2**63),
        False,
        dt.datetime(2024, 1, 1, 1, 30, tzinfo=dt.timezone(dt.timedelta(hours=1))),
    ),
    Reading(4, " ", -math.inf, 2**63 - 1, True, None),
]


def sized_alike(t: pa.DataType) -> pa.DataType:
    """``t`` with every decimal type the same: a decimal column's precision and scale are
    chosen from its values, its other properties from the registry."""
    if pa.types.is_decimal(t):
        return pa.decimal256(76, 0)
    if pa.types.is_list(t):
        return pa.list_(t.value_field.with_type(sized_alike(t.value_type)))
    if pa.types.is_struct(t):
        return pa.struct([f.with_type(sized_alike(f.type)) for f in t])
    return t


def schema_alike(schema: pa.Schema) -> pa.Schema:
    return pa.schema([f.with_type(sized_alike(f.type)) for f in schema])


def own_type(schema: pa.Schema, name: str) -> Any:
    """The Arrow type of field ``name``'s own values (in the struct beside its companions)."""
    return schema.field(name).type.field("value").type


@FAST
@given(data=rows(xml=False))
def test_every_registry_type_round_trips_through_arrow_and_pandas(data: list[AllTypes]) -> None:
    table = to_arrow(AllTypes, data)
    # (a Decimal column's decimal type fits its values: see test_decimals_export_as_decimals)
    assert schema_alike(table.schema).equals(schema_alike(arrow_schema(AllTypes)))
    assert_same_rows(data, from_arrow(AllTypes, table))
    assert_same_rows(data, from_pandas(AllTypes, to_pandas(AllTypes, data)))


@FAST
@given(data=rows(xml=False))
def test_every_registry_type_round_trips_through_parquet(
    tmp_path: Path, data: list[AllTypes]
) -> None:
    write_parquet(AllTypes, data, tmp_path / "rows.parquet")
    assert_same_rows(data, read_parquet(AllTypes, tmp_path / "rows.parquet"))


@FAST
@given(data=rows(xml=False))
def test_chunks_of_rows_make_the_table_of_all_rows_at_once(data: list[AllTypes]) -> None:
    """to_arrow converts a few thousand rows at a time: with chunks of 2 rows the table
    (each decimal column's fitted type included) is the one made of all rows at once."""
    whole = to_arrow(AllTypes, data)
    original = arrow_write.ROWS_PER_CHUNK
    try:
        arrow_write.ROWS_PER_CHUNK = 2
        chunked = to_arrow(AllTypes, data)
    finally:
        arrow_write.ROWS_PER_CHUNK = original
    assert chunked.schema.equals(whole.schema, check_metadata=True)
    assert repr(chunked.to_pylist()) == repr(whole.to_pylist())  # NaN too, which != itself
    assert all(c.num_chunks == 1 for c in chunked.columns)
    assert_same_rows(data, from_arrow(AllTypes, chunked))


def test_a_bad_value_in_a_later_chunk_is_named_by_its_row(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(arrow_write, "ROWS_PER_CHUNK", 2)
    good = [Reading(i, "a", 1.0, i, True, None) for i in range(7)]
    bad = [*good[:5], Reading(5, "b", 1.0, "three", True, None), good[6]]  # type: ignore[arg-type]
    with pytest.raises(ValueEncodingError, match="row 5, column 'count'"):
        to_arrow(Reading, bad)
    with pytest.raises(ValueEncodingError, match="row 6 is a Leaf"):
        to_arrow(Reading, [*good[:6], Leaf("x", 1.0)])  # type: ignore[list-item]
    # each chunk's decimal type fits its values: joined, the widest of them
    prices = [Priced(i, D(10) ** i / 100) for i in range(7)]  # 0.01, 0.1, 1, ... 10000
    table = to_arrow(Priced, prices)
    assert own_type(table.schema, "price") == pa.decimal128(7, 2)
    assert str(from_arrow(Priced, table)) == str(prices)


def test_schema_comes_from_the_registry_not_the_values() -> None:
    schema = arrow_schema(Reading)
    assert schema.field("count").type == pa.int64() and schema.field("count").nullable
    assert not schema.field("id").nullable
    # the instant and the offset it was written at, in one column named after the field
    assert schema.field("at").type == pa.struct(
        [("value", pa.timestamp("us", tz="UTC")), ("offset", pa.int16())]
    )
    assert schema.names == ["id", "sensor", "value", "count", "ok", "at"]
    empty = to_arrow(Reading, [])
    assert empty.num_rows == 0 and empty.schema.equals(schema)
    all_null = to_arrow(Reading, [READINGS[1]])
    assert all_null.schema.field("count").type == pa.int64()


def test_nullable_ints_stay_integers_in_pandas() -> None:
    frame = to_pandas(Reading, READINGS)
    assert frame["count"].dtype == pd.ArrowDtype(pa.int64())
    assert frame["count"].isna().tolist() == [False, True, False, False]
    assert frame["count"].iloc[2] == -(2**63)
    # None and NaN stay different things, and so do None and ""
    assert frame["value"].isna().tolist() == [False, True, False, False]
    assert math.isnan(frame["value"].iloc[2])
    assert frame["sensor"].isna().tolist() == [False, True, False, False]
    assert frame["sensor"].iloc[2] == "" and frame["sensor"].iloc[3] == " "


def test_pandas_round_trip_is_exact_with_nan_and_none() -> None:
    back = from_pandas(Reading, to_pandas(Reading, READINGS))
    assert back[0] == READINGS[0] and back[1] == READINGS[1] and back[3] == READINGS[3]
    assert math.isnan(back[2].value) and back[2].at == READINGS[2].at


def test_from_pandas_accepts_numpy_and_nullable_dtypes() -> None:
    frame = pd.DataFrame(
        {
            "id": [1, 2],
            "sensor": ["x", None],
            "value": [0.5, float("nan")],
            "count": pd.array([3, None], dtype="Int64"),
            "ok": pd.array([True, None], dtype="boolean"),
            "at": pd.to_datetime(["2024-01-01T00:00:00Z", None], utc=True),
        }
    )
    first, second = from_pandas(Reading, frame)
    assert first == Reading(1, "x", 0.5, 3, True, dt.datetime(2024, 1, 1, tzinfo=dt.UTC))
    assert (second.sensor, second.count, second.ok, second.at) == (None, None, None, None)
    assert math.isnan(second.value)  # a NumPy float cannot say "missing": NaN stays NaN


def test_child_lists_become_list_of_struct(tmp_path: Path) -> None:
    trees = [Tree(1, [Leaf("a", 1.0), Leaf("b", None)], 3), Tree(2), Tree(3, [Leaf("", 0.5)])]
    table = to_arrow(Tree, trees)
    assert table.column_names == ["id", "leaves", "height"]
    assert pa.types.is_list(table.schema.field("leaves").type)
    assert from_arrow(Tree, table) == trees
    write_parquet(Tree, trees, tmp_path / "t.parquet")
    assert read_parquet(Tree, tmp_path / "t.parquet") == trees
    assert from_pandas(Tree, to_pandas(Tree, trees)) == trees


def test_bad_values_name_row_and_column() -> None:
    bad = [Reading(1, "a", 1.0, 1, True, None), Reading(2, "b", 1.0, "three", True, None)]
    with pytest.raises(ValueEncodingError, match="row 1, column 'count'"):
        to_arrow(Reading, bad)  # type: ignore[arg-type]
    naive = [Reading(1, "a", 1.0, 1, True, dt.datetime(2024, 1, 1))]
    with pytest.raises(ValueEncodingError, match="row 0, column 'at'.*naive"):
        to_arrow(Reading, naive)
    missing = [Reading(None, "a", 1.0, 1, True, None)]  # type: ignore[arg-type]
    with pytest.raises(ValueEncodingError, match="row 0, column 'id'.*not Optional"):
        to_arrow(Reading, missing)


def test_tables_that_do_not_fit_are_refused() -> None:
    table = to_arrow(Reading, READINGS).drop_columns(["ok"])
    with pytest.raises(ValueEncodingError, match="no column 'ok'"):
        from_arrow(Reading, table)
    ids = pa.table(
        {
            "id": pa.array([1, None], pa.int64()),
            "sensor": ["a", "b"],
            "value": [1.0, 2.0],
            "count": [1, 2],
            "ok": [True, False],
            "at": pa.array([None, None], pa.timestamp("us", tz="UTC")),
        }
    )
    with pytest.raises(ValueEncodingError, match="row 1, column 'id': null"):
        from_arrow(Reading, ids)
    text = ids.set_column(0, "id", pa.array(["1", "x"]))
    with pytest.raises(ValueEncodingError, match="column 'id'"):
        from_arrow(Reading, text)


def test_compatible_arrow_types_are_cast() -> None:
    table = pa.table(
        {
            "id": pa.array([1], pa.int32()),
            "sensor": pa.array(["a"], pa.large_string()),
            "value": pa.array([1.5], pa.float32()),
            "count": pa.array([None], pa.int8()),
            "ok": [True],
            "at": pa.array([0], pa.timestamp("s", tz="UTC")),
        }
    )
    assert from_arrow(Reading, table) == [
        Reading(1, "a", 1.5, None, True, dt.datetime(1970, 1, 1, tzinfo=dt.UTC))
    ]


def test_store_to_arrow_streams_a_query(store: Store) -> None:
    store.create(Reading)
    data = [
        Reading(
            i,
            f"s{i % 3}" if i % 4 else None,
            i / 2,
            i if i % 5 else None,
            bool(i % 2),
            dt.datetime(2024, 1, 1, i % 24, tzinfo=dt.UTC),
        )
        for i in range(1, 5001)
    ]
    store.insert_many(data)
    table = store.to_arrow(Reading, where=col("id") > 4000, order_by="id")
    assert table.num_rows == 1000
    assert table.schema.equals(arrow_schema(Reading), check_metadata=False)
    assert from_arrow(Reading, table) == data[4000:]


def test_store_to_pandas_is_the_frame_of_the_selected_instances(store: Store) -> None:
    store.create(Reading)
    data = [
        Reading(
            i,
            f"s{i % 3}" if i % 4 else None,
            i / 2,
            i if i % 5 else None,
            bool(i % 2),
            dt.datetime(2024, 1, 1, i % 24, tzinfo=dt.UTC),
        )
        for i in range(1, 301)
    ]
    store.insert_many(data)
    frame = store.to_pandas(Reading, where=col("id") > 100, order_by="id")
    assert len(frame) == 200
    assert all(isinstance(t, pd.ArrowDtype) for t in frame.dtypes)
    pd.testing.assert_frame_equal(frame, to_pandas(Reading, data[100:]))
    assert from_pandas(Reading, frame) == data[100:]


def test_store_to_arrow_with_child_tables(tmp_path: Path) -> None:
    store = Store(tmp_path / "t.db")
    trees = [Tree(1, [Leaf("a", 1.0)], 2), Tree(2)]
    store.create(Tree)
    store.insert_many(trees)
    assert from_arrow(Tree, store.to_arrow(Tree)) == trees


def test_decimals_with_many_digits_stay_exact(tmp_path: Path) -> None:
    @dataclass
    class Money:
        id: int
        amount: decimal.Decimal

    data = [
        Money(1, decimal.Decimal("0." + "3" * 30)),
        Money(2, decimal.Decimal("-" + "9" * 35)),
        Money(3, decimal.Decimal("1.500")),
        Money(4, decimal.Decimal("0.00")),
    ]
    write_parquet(Money, data, tmp_path / "m.parquet")
    back = read_parquet(Money, tmp_path / "m.parquet")
    assert [m.amount.as_tuple() for m in back] == [m.amount.as_tuple() for m in data]
    for bad in ("0." + "3" * 31, "1" * 36, "1E+2", "-0", "NaN"):  # the registry's rule
        with pytest.raises(ValueEncodingError, match="row 0, column 'amount'"):
            write_parquet(Money, [Money(1, decimal.Decimal(bad))], tmp_path / "bad.parquet")
        assert not (tmp_path / "bad.parquet").exists()


# -- Decimals: an Arrow decimal type that fits the values, each value's exponent beside it ---

D = decimal.Decimal


@dataclass
class Amount:
    id: int
    amount: D | None
    items: list[Leaf] = field(default_factory=list)


@dataclass
class Priced:
    id: int
    price: D | None


def exponents(values: list[D | None]) -> list[tuple[object, ...] | None]:
    return [None if v is None else v.as_tuple() for v in values]


def test_decimals_export_as_decimals(tmp_path: Path) -> None:
    values = [D("1.5"), D("1.50"), D("-0.01"), D("2.25"), None, D("0"), D("-99.999")]
    data = [Priced(i, v) for i, v in enumerate(values)]
    table = to_arrow(Priced, data)
    # 2 digits before the point and 3 after: decimal128(5, 3); each value's own scale with it
    assert table.column_names == ["id", "price"]
    assert own_type(table.schema, "price") == pa.decimal128(5, 3)
    assert pc.struct_field(table.column("price"), "scale").to_pylist() == [1, 2, 2, 2, None, 0, 3]
    total = sum(v for v in values if v is not None)
    # pyarrow alone adds them
    assert pc.sum(pc.struct_field(table.column("price"), "value")).as_py() == total
    frame = to_pandas(Priced, data)
    assert frame["price"].struct.field("value").sum() == total  # and pandas
    write_parquet(Priced, data, tmp_path / "p.parquet")
    raw = pq.read_table(tmp_path / "p.parquet")  # no entityworks
    assert own_type(raw.schema, "price") == pa.decimal128(5, 3)
    assert pc.sum(pc.struct_field(raw.column("price"), "value")).as_py() == total
    assert [
        None if v is None else v["value"] for v in pd.read_parquet(tmp_path / "p.parquet")["price"]
    ] == values
    for back in (
        from_arrow(Priced, table),
        from_pandas(Priced, frame),
        read_parquet(Priced, tmp_path / "p.parquet"),
    ):
        assert exponents([p.price for p in back]) == exponents(values)


@pytest.mark.parametrize(
    ("text", "wanted"),
    [
        ("1." + "5" * 30, pa.decimal128(31, 30)),
        ("-" + "9" * 35, pa.decimal128(35, 0)),
        ("9" * 8 + "." + "1" * 30, pa.decimal128(38, 30)),
        ("9" * 9 + "." + "1" * 30, pa.decimal256(39, 30)),  # beyond decimal128's 38 digits
        ("9" * 35 + "." + "1" * 30, pa.decimal256(65, 30)),
        ("0.05", pa.decimal128(2, 2)),
        ("0", pa.decimal128(1, 0)),
    ],
)
def test_the_decimal_type_is_the_narrowest_that_holds_the_values(
    tmp_path: Path, text: str, wanted: pa.DataType
) -> None:
    assert own_type(to_arrow(Priced, [Priced(1, D(text))]).schema, "price") == wanted
    data = [Priced(1, D(text)), Priced(2, D("12.5")), Priced(3, None)]
    table = to_arrow(Priced, data)
    integer = max(wanted.precision - wanted.scale, 2)  # 12.5: 2 digits before the point
    scale = max(wanted.scale, 1)
    fitted = own_type(table.schema, "price")
    assert (fitted.precision, fitted.scale) == (integer + scale, scale)
    write_parquet(Priced, data, tmp_path / "w.parquet")
    for back in (from_arrow(Priced, table), read_parquet(Priced, tmp_path / "w.parquet")):
        assert exponents([p.price for p in back]) == exponents([p.price for p in data])


def test_a_decimal_column_without_values_has_the_widest_type() -> None:
    # DECIMAL(65, 30)'s decimal256(65, 30): every Decimal the registry accepts fits
    widest = pa.decimal256(65, 30)
    assert own_type(arrow_schema(Priced), "price") == widest
    assert own_type(to_arrow(Priced, []).schema, "price") == widest
    assert own_type(to_arrow(Priced, [Priced(1, None)]).schema, "price") == widest
    assert arrow_schema(Priced).field("price").type.field("scale").type == pa.int8()


def test_decimals_in_a_child_list_and_in_older_or_foreign_files() -> None:
    data = [Amount(1, D("1.50"), [Leaf("a", 1.0)]), Amount(2, D("-3"), [])]
    assert [(a.id, exponents([a.amount])) for a in from_arrow(Amount, to_arrow(Amount, data))] == [
        (1, exponents([D("1.50")])),
        (2, exponents([D("-3")])),
    ]
    # as written before Arrow decimals (text, no scale field) and by other tools
    text = pa.table({"id": [1, 2], "price": ["1.50", None]})
    assert exponents([p.price for p in from_arrow(Priced, text)]) == exponents([D("1.50"), None])
    foreign = pa.table({"id": [1], "price": pa.array([D("1.5")], pa.decimal128(38, 37))})
    assert exponents([p.price for p in from_arrow(Priced, foreign)]) == exponents(
        [D("1." + "5" + "0" * 29)]
    )  # 30 places, the most a Decimal field keeps
    too_fine = pa.table(
        {"id": [1], "price": pa.array([D("0." + "0" * 30 + "1")], pa.decimal128(38, 31))}
    )
    with pytest.raises(ValueEncodingError, match="price"):
        from_arrow(Priced, too_fine)
    objects = pd.DataFrame({"id": [1, 2, 3], "price": [D("1.5"), D("1.50"), None]})
    assert exponents([p.price for p in from_pandas(Priced, objects)]) == exponents(
        [D("1.5"), D("1.50"), None]
    )


def test_store_to_arrow_fits_the_decimal_type_across_batches(store: Store) -> None:
    store.create(Priced)
    # 2,000 rows are fetched at a time: the scale grows after the first batch
    values = [D(i) / 4 for i in range(2000)] + [D("-123456789012.125"), D("0.0001"), None]
    store.insert_many([Priced(i, v) for i, v in enumerate(values)])
    table = store.to_arrow(Priced, order_by="id")
    assert own_type(table.schema, "price") == pa.decimal128(16, 4)
    assert pc.sum(pc.struct_field(table.column("price"), "value")).as_py() == sum(
        v for v in values if v is not None
    )
    assert exponents([p.price for p in from_arrow(Priced, table)]) == exponents(values)

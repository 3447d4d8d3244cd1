"""The column-at-a-time checks and codecs (entityworks.types.columns, the column forms in
sql.sqltypes) against their oracles: the per-value rules and codecs they stand for.

A column check may say "not certain" (False) for a column the rule accepts, never "passes
unchanged" for a column the rule refuses or converts; the column codecs equal the
per-value ones value for value."""

from __future__ import annotations

import datetime as dt
import decimal
import enum
import math
import re
import uuid
import zoneinfo
from functools import partial
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from entityworks.sql import sqltypes
from entityworks.types import columns, entries, scalars
from entityworks.types.values import decimal_text

D = decimal.Decimal


class Small(enum.IntEnum):
    ONE = 1


class Text(str):
    pass


def unchanged_by(check: Any, values: list[Any]) -> bool:
    """The oracle: every non-None value passes ``check`` and comes back as itself."""
    for v in values:
        if v is None:
            continue
        try:
            if check(v) is not v:
                return False
        except (TypeError, ValueError, OverflowError):
            return False
    return True


ANY_VALUE = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=5),
    st.decimals(allow_nan=True, allow_infinity=True),
    st.datetimes(),
    st.datetimes(timezones=st.just(dt.UTC)),
    st.just(Small.ONE),
    st.just(Text("x")),
    st.just("\ud800"),
    st.just(D("-0")),
    st.just(D("1E+2")),
    st.just(D("1E-7")),
)

PAIRS = [
    (columns.int_column, scalars.check_int),
    (columns.float_column, scalars.check_float),
    (columns.bool_column, scalars.check_bool),
    (columns.str_column, scalars.check_str),
    (columns.decimal_column, scalars.check_decimal),
    (columns.naive_datetime_column, scalars.check_datetime),
]


@settings(max_examples=100, deadline=None)
@given(st.lists(ANY_VALUE, max_size=8))
def test_a_passing_column_is_what_the_rule_leaves_unchanged(values: list[Any]) -> None:
    for column_check, check in PAIRS:
        if column_check(values):
            assert unchanged_by(check, values), (column_check.__name__, values)


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.one_of(st.none(), st.decimals(allow_nan=False, allow_infinity=False)), max_size=10)
)
def test_decimal_column_passes_plain_valid_values(values: list[Any]) -> None:
    present = [v for v in values if v is not None]
    if unchanged_by(scalars.check_decimal, values) and all(
        "E" not in str(v) and len(str(v)) <= 30 for v in present
    ):
        assert columns.decimal_column(values)


ONE_EXPONENT = st.integers(min_value=-(10**36), max_value=10**36) | st.sampled_from(
    [0, 10**35 - 1, 10**35, -(10**35)]
)


@settings(max_examples=150, deadline=None)
@given(
    st.integers(min_value=-34, max_value=3),
    st.lists(ONE_EXPONENT, min_size=1, max_size=8),
    st.lists(st.sampled_from([None, "-0", "NaN", "Infinity", "1E+1"]), max_size=2),
)
def test_decimal_column_of_one_exponent_is_the_rule(
    exponent: int, coefficients: list[int], odd: list[str | None]
) -> None:
    """A column of one exponent (the money column) is answered exactly, both ways; odd
    values (None, -0, NaN, infinity, another exponent) mixed in are never passed wrongly."""
    values: list[Any] = [D(f"{n}E{exponent}") for n in coefficients]
    assert columns.decimal_column(values) == unchanged_by(scalars.check_decimal, values)
    for extra in odd:
        values.insert(
            len(values) // 2,
            None if extra is None else D(f"{extra}E{exponent}") if extra == "-0" else D(extra),
        )
    if columns.decimal_column(values):
        assert unchanged_by(scalars.check_decimal, values), values


def test_common_columns_pass() -> None:
    assert columns.int_column([1, 2, None, -(2**63), 2**63 - 1])
    assert not columns.int_column([2**63])
    assert not columns.int_column([True])
    assert columns.float_column([1.0, -0.0, math.nan, None])
    assert not columns.float_column([1])
    assert columns.str_column(["a", "é", None])
    assert not columns.str_column(["\udcff"])
    assert columns.decimal_column([D("1.50"), D("-2.25"), D("0.00"), None])
    assert not columns.decimal_column([D("-0.00")])
    assert not columns.decimal_column([D("1E+2")])
    assert columns.naive_datetime_column([dt.datetime(2024, 1, 1), None])
    assert not columns.naive_datetime_column([dt.datetime(2024, 1, 1, tzinfo=dt.UTC)])


DECIMALS = st.decimals(allow_nan=False, allow_infinity=False).filter(
    lambda d: unchanged_by(scalars.check_decimal, [d])
)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(st.none(), DECIMALS), max_size=10))
def test_decimal_keys_and_back(values: list[Any]) -> None:
    keys = sqltypes.decimal_keys(values)
    assert keys == [None if v is None else sqltypes.decimal_key(v) for v in values]
    assert sqltypes.decimals_from_keys(keys) == [
        None if k is None else sqltypes.decimal_from_key(k) for k in keys
    ]
    assert columns.decimal_text_column(values) == [
        None if v is None else decimal_text(v) for v in values
    ]
    assert columns.scale_column(values) == [
        None if v is None else -v.as_tuple().exponent for v in values
    ]


ZEROS = st.sampled_from([D("0"), D("-0"), D("0E-4"), D("-0.000"), D("0E+3"), D("-0E-30")])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(DECIMALS, ZEROS), min_size=1, max_size=10))
def test_decimal_keys_of_a_column_without_none(values: list[Any]) -> None:
    """The column path proper (a column holding None takes it for its other values)."""
    assert sqltypes.decimal_keys(values) == list(map(sqltypes.decimal_key, values))
    with_none = [None, *values, None]
    assert sqltypes.decimal_keys(with_none) == [None, *map(sqltypes.decimal_key, values), None]


def test_the_keys_of_zeros_are_one_key() -> None:
    zeros = [D("0"), D("-0"), D("0E-4"), D("-0.000"), D("-1"), D("1.5")]
    keys = sqltypes.decimal_keys(zeros)
    assert len(set(keys[:4])) == 1 and keys[:4] == [sqltypes.decimal_key(D(0))] * 4
    assert sorted(keys) == [keys[4], *keys[:4], keys[5]]  # -1 < 0 < 1.5


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(
            DECIMALS,
            st.one_of(
                st.none(),
                st.text(alphabet="0123456789.-E ", max_size=8),
                DECIMALS.map(str),
                DECIMALS.map(lambda d: format(d, "f")),
            ),
        ),
        max_size=8,
    )
)
def test_decimals_as_written_is_the_per_value_join(pairs: list[tuple[Any, Any]]) -> None:
    values = [v for v, _ in pairs]
    texts = [t for _, t in pairs]
    # the join sees the number read from the key: the text of the same number, or another
    texts = [format(v, "f") if i % 2 and t is not None else t for i, (v, t) in enumerate(pairs)]
    one = entries._decimal_as_written
    got = _outcome(lambda: columns.decimals_as_written(values, texts, one))
    want = _outcome(lambda: [one(v, t) for v, t in zip(values, texts, strict=True)])
    assert got == want  # the same values with their exponents, or both refused


def _outcome(read: Any) -> list[str] | None:
    """The texts of what ``read()`` gives (the exponents too), None when it refuses."""
    try:
        return [str(v) for v in read()]
    except ValueError:
        return None


_PLAIN = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)")


def written_oracle(value: D, text: Any) -> D | None:
    """The join's rule spelled out: the text's Decimal when it is plain decimal text (what
    SQLite and every other tool read as that number) of the key's number that the rule
    accepts (a zero without its sign), else None: refused, the two columns disagree."""
    if not isinstance(text, str) or not _PLAIN.fullmatch(text):
        return None
    written = D(text)
    if written.is_zero():
        written = written.copy_abs()
    try:
        written = scalars.check_decimal(written)
    except ValueError:
        return None
    return written if written == value else None


@settings(max_examples=200, deadline=None)
@given(
    DECIMALS,
    st.one_of(
        st.none(),
        st.text(alphabet="0123456789.-E+ n", max_size=12),
        DECIMALS.map(str),
        DECIMALS.map(lambda d: format(d, "f")),
        st.sampled_from(["-0", "-0.00", "0.0", "", "-", ".", "1.", ".5"]),
    ),
)
def test_decimal_as_written_is_its_rule(value: D, text: Any) -> None:
    # the number read from the key: never -0 (the key of any zero reads as 0)
    same = D(text) if isinstance(text, str) and _parses(text) else value
    for number in (value, same if same else D(0)):
        want = written_oracle(number, text)
        try:
            got = entries._decimal_as_written(number, text)
        except ValueError:
            assert want is None, (number, text)
        else:
            assert want is not None and str(got) == str(want), (number, text)


def _parses(text: str) -> bool:
    try:
        return D(text).is_finite()
    except ArithmeticError:
        return False


@given(st.lists(st.one_of(st.none(), st.floats(allow_nan=True)), max_size=8))
def test_negative_zero_column(values: list[Any]) -> None:
    assert columns.negative_zero_column(values) == [
        None if v is None else entries._negative_zero(v) for v in values
    ]
    assert columns.has_nan(values) == any(v is not None and v != v for v in values)


def test_decimals_as_written_common_and_odd_texts() -> None:
    one = entries._decimal_as_written
    values = [D("1.5"), D("-2"), D("0"), D("3")]
    for texts, expected in (
        (["1.50", "-2.000", "0.00", "3"], ["1.50", "-2.000", "0.00", "3"]),  # fast path
        (["1.50", "-2.000", "-0.00", "3"], ["1.50", "-2.000", "0.00", "3"]),  # a zero
        (["1.50", "-2.000", "0.00", "4"], None),  # another number: refused
        (["1.50", "-2.000", "0.00", "3E+0"], None),  # not plain text: refused
        (["1.50", None, "0.00", "3"], None),
    ):  # a missing text: refused
        got = _outcome(partial(columns.decimals_as_written, values, texts, one))
        want = _outcome(partial(map, one, values, texts))
        assert got == want == expected, texts


# -- aware datetimes, dates, times, UUIDs: the column tests and column forms (issue 31) -------

_ZONES = st.one_of(
    st.just(dt.UTC),
    st.builds(dt.timezone, st.integers(-14 * 60, 14 * 60).map(lambda m: dt.timedelta(minutes=m))),
    # what the rule refuses: seconds in the offset, beyond ±14:00
    st.builds(dt.timezone, st.integers(-86_399, 86_399).map(lambda s: dt.timedelta(seconds=s))),
    st.sampled_from(
        [
            zoneinfo.ZoneInfo("Europe/Paris"),
            zoneinfo.ZoneInfo("America/St_Johns"),
        ]
    ),
)


class Stamp(dt.datetime):
    pass


class Day(dt.date):
    pass


class Ident(uuid.UUID):
    pass


AWARE_VALUES = st.one_of(
    st.none(),
    st.datetimes(timezones=_ZONES),
    # the ends of the calendar, where a UTC instant leaves the years 1-9999
    st.datetimes(min_value=dt.datetime(1, 1, 1), max_value=dt.datetime(1, 1, 2), timezones=_ZONES),
    st.datetimes(
        min_value=dt.datetime(9999, 12, 30),
        max_value=dt.datetime(9999, 12, 31, 23, 59),
        timezones=_ZONES,
    ),
    st.datetimes(),
    st.dates(),
    st.just(Stamp(2020, 1, 1, tzinfo=dt.UTC)),
)
OTHER_VALUES = st.one_of(
    st.none(),
    st.dates(),
    st.datetimes(),
    st.times(),
    st.times(timezones=st.just(dt.UTC)),
    st.just(Day(2020, 1, 1)),
    st.uuids(),
    st.just(Ident(int=7)),
    st.just("2020-01-01"),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(AWARE_VALUES, max_size=8))
def test_aware_datetime_column_is_the_rule(values: list[Any]) -> None:
    if columns.aware_datetime_column(values):
        assert unchanged_by(scalars.check_aware_datetime, values), values
        assert columns.offset_minutes_column(values) == [
            None if v is None else scalars.offset_minutes(v) for v in values
        ]


@settings(max_examples=200, deadline=None)
@given(st.lists(OTHER_VALUES, max_size=8))
def test_date_time_and_uuid_columns_are_their_rules(values: list[Any]) -> None:
    for column_check, check in (
        (columns.date_column, scalars.check_date),
        (columns.time_column, scalars.check_time),
        (columns.uuid_column, scalars.check_uuid),
    ):
        if column_check(values):
            assert unchanged_by(check, values), (column_check.__name__, values)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.none(), st.datetimes(timezones=_ZONES)), max_size=8))
def test_offset_minutes_column_is_the_per_value_split(values: list[Any]) -> None:
    checked = []
    for v in values:
        try:
            checked.append(None if v is None else scalars.check_aware_datetime(v))
        except ValueError:
            return  # the split is only ever given checked values
    assert columns.offset_minutes_column(checked) == [
        None if v is None else scalars.offset_minutes(v) for v in checked
    ]


def test_the_common_columns_of_these_types_pass() -> None:
    """The fast path must apply where it is meant to: fixed offsets, UTC, None."""
    plus2 = dt.timezone(dt.timedelta(hours=2))
    minus_330 = dt.timezone(-dt.timedelta(hours=3, minutes=30))
    aware = [dt.datetime(2024, 1, 1, tzinfo=z) for z in (dt.UTC, plus2, minus_330)] + [None]
    assert columns.aware_datetime_column(aware)
    assert columns.offset_minutes_column(aware) == [None, 120, -210, None]
    assert columns.date_column([dt.date(2024, 1, 1), None])
    assert columns.time_column([dt.time(1, 2, 3, 4), None])
    assert columns.uuid_column([uuid.UUID(int=1), None])
    # and leaves to the rule what it cannot vouch for
    assert not columns.aware_datetime_column([dt.datetime(2024, 1, 1)])
    paris = dt.datetime(2024, 1, 1, tzinfo=zoneinfo.ZoneInfo("Europe/Paris"))
    assert not columns.aware_datetime_column([paris])
    assert not columns.aware_datetime_column([dt.datetime(1, 1, 1, tzinfo=plus2)])
    assert not columns.date_column([dt.datetime(2024, 1, 1)])
    assert not columns.time_column([dt.time(1, tzinfo=dt.UTC)])
    assert not columns.uuid_column([Ident(int=1)])


@pytest.mark.parametrize("backend", ["sqlite", "postgresql", "mariadb"])
@settings(max_examples=100, deadline=None)
@given(values=st.lists(st.one_of(st.none(), st.datetimes(timezones=_ZONES)), max_size=8))
def test_aware_bind_column_is_the_per_value_bind(backend: str, values: list[Any]) -> None:
    dialect = sqltypes_dialect(backend)
    kind = sqltypes.AwareDateTime().dialect_impl(dialect)
    checked = []
    for v in values:
        try:
            checked.append(None if v is None else scalars.check_aware_datetime(v))
        except ValueError:
            return
    if not columns.aware_datetime_column(checked):
        return  # the row codec binds such a column value by value (a zone whose offset moves)
    per_value = kind.bind_processor(dialect)
    assert per_value is not None
    column = kind.bind_column(dialect)
    bound = checked if column is None else list(column(checked))
    expected = [per_value(v) for v in checked]
    assert bound == expected  # aware datetimes compare as instants
    # and hold the same wall time where the stored form has no zone (text, naive UTC)
    assert [type(b) for b in bound] == [type(e) for e in expected]
    assert [getattr(b, "tzinfo", None) is None for b in bound] == [
        getattr(e, "tzinfo", None) is None for e in expected
    ]


@pytest.mark.parametrize("backend", ["sqlite", "postgresql", "mariadb"])
@pytest.mark.parametrize(
    ("kind", "value"),
    [
        (sqltypes.ISODate(), dt.date(2024, 2, 29)),
        (sqltypes.ISOTime(), dt.time(23, 59, 59, 999_999)),
        (sqltypes.ISOTime(), dt.time(0, 0)),
        (sqltypes.UUIDType(), uuid.UUID(int=2**128 - 1)),
    ],
)
def test_iso_bind_column_is_the_per_value_bind(backend: str, kind: Any, value: Any) -> None:
    dialect = sqltypes_dialect(backend)
    impl = kind.dialect_impl(dialect)
    per_value = impl.bind_processor(dialect) or (lambda v: v)
    column = impl.bind_column(dialect)
    got = column([value, None]) if column is not None else [value, None]
    assert list(got) == [per_value(value), per_value(None)]


def sqltypes_dialect(name: str) -> Any:
    import sqlalchemy as sa

    return sa.create_engine(
        {
            "sqlite": "sqlite://",
            "postgresql": "postgresql+psycopg://u@h/d",
            "mariadb": "mysql+pymysql://u@h/d",
        }[name]
    ).dialect


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.one_of(
                st.none(),
                DECIMALS,
                # as a padded DECIMAL(65, 30) column gives them back
                DECIMALS.map(
                    lambda d: d.quantize(D(1).scaleb(-30), context=decimal.Context(prec=100))
                ),
            ),
            st.one_of(
                st.none(), st.integers(min_value=-2, max_value=33), st.just("4"), st.just(True)
            ),
        ),
        max_size=8,
    )
)
def test_decimals_with_scales_is_the_per_value_join(pairs: list[tuple[Any, Any]]) -> None:
    """MariaDB's scale companion joined a column at a time: the same values with the same
    exponents as the rule value by value, or refused where it refuses."""
    values = [v for v, _ in pairs]
    scales = [s for _, s in pairs]
    one = entries._with_stored_scale
    got = _outcome(lambda: columns.decimals_with_scales(values, scales, one))
    want = _outcome(lambda: [v if v is None else one(v, s) for v, s in pairs])
    assert got == want


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.one_of(st.none(), st.datetimes(timezones=st.just(dt.UTC))),
            st.one_of(
                st.none(),
                st.integers(min_value=-900, max_value=900),
                st.just(True),
                st.just("60"),
            ),
        ),
        max_size=8,
    )
)
def test_with_offsets_is_the_per_value_join(pairs: list[tuple[Any, Any]]) -> None:
    """The offset companion joined a column at a time: the same instants at the same
    offsets as the rule value by value, or refused where it refuses."""
    instants = [v for v, _ in pairs]
    minutes = [m for _, m in pairs]
    one = scalars.with_offset

    def shown(read: Any) -> list[Any] | None:
        try:
            return [None if v is None else (v, v.utcoffset()) for v in read()]
        except ValueError:
            return None

    got = shown(lambda: columns.with_offsets(instants, minutes, one))
    want = shown(lambda: [v if v is None else one(v, m) for v, m in pairs])
    assert got == want


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.none(),
            st.datetimes(),
            st.datetimes(timezones=st.just(dt.UTC)),
            st.datetimes(timezones=st.just(zoneinfo.ZoneInfo("Etc/UTC"))),
            st.datetimes(timezones=st.just(zoneinfo.ZoneInfo("Europe/Paris"))),
        ),
        max_size=8,
    )
)
def test_instants_of_a_column_are_instant_of_each(values: list[Any]) -> None:
    """What a driver gives for a timestamp column, made UTC instants a column at a time:
    the same as the rule value by value, with UTC's own tzinfo."""
    from entityworks.sql.textvalues import instant

    got = sqltypes._instants_column(values)
    want = [None if v is None else instant(v) for v in values]
    assert [None if v is None else (v, v.tzinfo) for v in got] == [
        None if v is None else (v, v.tzinfo) for v in want
    ]


def test_signed_zeros_joins_the_marks_as_value_by_value() -> None:
    join = entries._signed_zero
    values = [0.0, 1.5, None, 0.0]
    assert columns.signed_zeros(values, [None] * 4, join) == values
    got = columns.signed_zeros(values, [1, None, None, None], join)
    assert [math.copysign(1.0, v) if v == 0.0 else v for v in got] == [-1.0, 1.5, None, 1.0]
    with pytest.raises(ValueError, match="negative-zero mark"):
        columns.signed_zeros(values, [None, 1, None, None], join)  # beside 1.5


@settings(max_examples=200, deadline=None)
@given(st.lists(st.timedeltas(), max_size=30))
def test_timedeltas_to_db_is_value_by_value(values: list[dt.timedelta]) -> None:
    try:
        expected: Any = [scalars.timedelta_to_db(v) for v in values]
    except ValueError:
        expected = ValueError
    if expected is ValueError:
        with pytest.raises(ValueError):
            scalars.timedeltas_to_db(values)
    else:
        assert scalars.timedeltas_to_db(values) == expected
        assert scalars.micros_to_timedeltas(expected) == values


def test_enum_columns_are_value_by_value() -> None:
    from entityworks.registry import registry

    class Tint(enum.Enum):
        RED = "red"
        BLUE = "blue"

        @classmethod
        def _missing_(cls, value: object) -> Any:
            return cls.RED if value == "crimson" else None

    codec = registry.lookup(Tint).sql_codec
    assert codec.encode_many is not None and codec.decode_many is not None
    column = [Tint.BLUE, Tint.RED, Tint.BLUE]
    assert codec.encode_many(column) == ["blue", "red", "blue"]
    assert codec.decode_many(["blue", "red"]) == [Tint.BLUE, Tint.RED]
    assert codec.decode_many(["crimson", "blue"]) == [Tint.RED, Tint.BLUE]  # _missing_ too
    with pytest.raises(ValueError):
        codec.decode_many(["blue", "green"])
    with pytest.raises(ValueError):
        codec.encode_many([Tint.BLUE, "blue"])  # a value where a member is declared


def test_bytes_and_bool_columns_read_as_their_type_whatever_the_driver_gives() -> None:
    from entityworks.registry import registry

    blob = registry.lookup(bytes).sql_codec
    flag = registry.lookup(bool).sql_codec
    assert blob.decode_many is not None and flag.decode_many is not None
    read = blob.decode_many([b"a", memoryview(b"b"), bytearray(b"c")])
    assert read == [b"a", b"b", b"c"] and all(type(v) is bytes for v in read)
    assert blob.decode_many([b"x", b""]) == [b"x", b""]
    flags = flag.decode_many([1, 0, True])  # SQLite's integers, or a driver's booleans
    assert flags == [True, False, True] and all(type(v) is bool for v in flags)
    assert flag.decode_many([False, True]) == [False, True]


def test_a_new_decoder_drops_the_whole_column_one_it_replaces() -> None:
    """``replace(info, from_db=...)`` on a type with a whole-column decoder (bool, bytes,
    timedelta, UUID) reads with the new decoder: the old ``decode_many`` is not kept."""
    import dataclasses

    from entityworks.registry import registry

    for tp in (bool, bytes):
        info = registry.lookup(tp)
        assert info.sql_codec.decode_many is not None
        mine = dataclasses.replace(info, from_db=lambda v: ("mine", v))
        assert mine.sql_codec.decode_many is None
        assert mine.sql_codec.decode(1) == ("mine", 1)
        both = dataclasses.replace(info, from_db=repr, from_db_many=list)
        assert both.sql_codec.decode_many is list

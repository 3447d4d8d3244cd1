"""The C column loops (``entityworks/types/cloops.c``) against the Python they stand in for:
``each`` and ``fill`` against list comprehensions, ``at_offsets`` against the offset join,
and a SQLite Decimal column's two texts against ``textvalues.decimal_key`` (the key of
each value) and ``entries._decimal_as_written`` (the value read back from a key and its
text).

A C function may answer None (the caller then takes the Python path); when it answers a
list, that list must be exactly the Python one. For the values the rule accepts, it must not
answer None (else the fast path would never run)."""

from __future__ import annotations

import decimal
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from entityworks.sql.textvalues import decimal_key
from entityworks.types import cloops
from entityworks.types.entries import _decimal_as_written
from entityworks.types.scalars import check_decimal
from entityworks.types.values import decimal_text


def _accepted(value: Decimal) -> bool:
    try:
        check_decimal(value)
    except ValueError:
        return False
    return True


#: Any finite Decimal, scientific ones (1E+3, 1.5E-7) and long ones included.
any_decimals = st.builds(
    lambda sign, digits, exponent: Decimal((sign, tuple(map(int, digits)), exponent)),
    st.integers(0, 1),
    st.text("0123456789", min_size=1, max_size=70),
    st.integers(-80, 60),
)
#: What the rule accepts: at most 35 digits before the point and 30 after, not -0.
accepted_decimals = st.builds(
    lambda sign, whole, places, fraction: Decimal(
        f"{'-' if sign else ''}{whole}{'.' + fraction[:places] if places else ''}"
    ),
    st.booleans(),
    st.integers(0, 10**35 - 1),
    st.integers(0, 30),
    st.text("0123456789", min_size=30, max_size=30),
).filter(_accepted)


class _MyDecimal(Decimal):
    pass


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(any_decimals, st.none()), max_size=20))
def test_keys_and_texts_are_the_key_and_the_plain_text_whenever_given(
    values: list[Decimal | None],
) -> None:
    both = cloops.keys_and_texts(values)
    if both is None:  # a value keys() leaves to Python, or one whose str() has an exponent
        assert cloops.keys(values) is None or any("E" in str(v) for v in values)
        return
    keys, texts = both
    assert keys == cloops.keys(values)
    assert texts == [None if v is None else decimal_text(v) for v in values]
    assert all(t is None or Decimal(t) == v for t, v in zip(texts, values, strict=True))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(accepted_decimals, st.none()), max_size=20))
def test_keys_and_texts_of_every_accepted_value_without_an_exponent(
    values: list[Decimal | None],
) -> None:
    both = cloops.keys_and_texts(values)
    if any(v is not None and "E" in str(v) for v in values):  # 0E-30, 1E-7: as_tuple's
        assert both is None
        return
    assert both == (
        [None if v is None else decimal_key(v) for v in values],
        [None if v is None else decimal_text(v) for v in values],
    )


@pytest.mark.parametrize("value", [Decimal("NaN"), 1.5, "1.5", _MyDecimal("1.5"), Decimal("1E+3")])
def test_keys_and_texts_leave_the_uncommon_to_python(value: object) -> None:
    assert cloops.keys_and_texts([Decimal("1.5"), None, value]) is None


def test_keys_and_texts_of_an_empty_column() -> None:
    assert cloops.keys_and_texts([]) == ([], [])


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(any_decimals, st.none()), max_size=20))
def test_keys_are_decimal_key_whenever_given(values: list[Decimal | None]) -> None:
    keys = cloops.keys(values)
    if keys is None:
        return
    assert keys == [None if v is None else decimal_key(v) for v in values]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(accepted_decimals, st.none()), max_size=20))
def test_keys_of_every_accepted_value(values: list[Decimal | None]) -> None:
    assert cloops.keys(values) == [None if v is None else decimal_key(v) for v in values]


@pytest.mark.parametrize(
    "text",
    ["0", "0.00", "-1.5", "-1.55", "1E+3", "1.5E-7", "-1.5E-7", "0E-30", "12345678901234567890.5"],
)
def test_keys_of_edge_values(text: str) -> None:
    value = Decimal(text)
    assert cloops.keys([value]) == [decimal_key(value)]


@pytest.mark.parametrize(
    "value",
    [
        Decimal("NaN"),
        Decimal("-Infinity"),
        Decimal("sNaN"),
        1.5,
        "1.5",
        _MyDecimal("1.5"),
        Decimal("1" * 36),  # 36 digits before the point: decimal_key refuses it
    ],
)
def test_keys_leave_the_uncommon_to_python(value: object) -> None:
    assert cloops.keys([Decimal("1.5"), value]) is None


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(accepted_decimals, st.none()), max_size=20))
def test_as_written_reads_each_accepted_value_back_with_its_exponent(
    values: list[Decimal | None],
) -> None:
    keys = [None if v is None else decimal_key(v) for v in values]
    texts = [None if v is None else format(v, "f") for v in values]
    read = cloops.as_written(keys, texts)
    assert read is not None
    assert [None if v is None else str(v) for v in read] == [
        None if v is None else str(v) for v in values
    ]
    assert all(type(v) is Decimal for v in read if v is not None)
    # what the Python path gives for each pair
    assert read == [
        None if v is None else _decimal_as_written(Decimal(k if k[0] != "-" else v), t)
        for v, k, t in zip(values, keys, texts, strict=True)
    ]


def _variant(value: Decimal, how: int, noise: str) -> str:
    """A text beside ``value``'s key: its own, padded with zeros either side, with an
    exponent, negated, or noise."""
    text = format(value, "f")
    return [
        text,
        "00" + text.lstrip("-") if value >= 0 else text,
        text + ("0" if "." in text else ".0"),
        str(value),
        "-" + text.lstrip("-"),
        noise,
    ][how]


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.one_of(accepted_decimals, any_decimals),
            st.integers(0, 5),
            st.text("0123456789.-E+", max_size=12),
        ),
        max_size=10,
    ),
)
def test_as_written_answers_only_what_python_reads(
    pairs: list[tuple[Decimal, int, str]],
) -> None:
    """A key beside a text that may or may not be its number's: where C answers, the
    Python path reads the same values, exponents included."""
    keys = [decimal_key(v) if _accepted(v) else format(v, "f") for v, _, _ in pairs]
    texts = [_variant(v, how, noise) for v, how, noise in pairs]
    read = cloops.as_written(keys, texts)
    if read is None:
        return
    for (value, _, _), key, text, got in zip(pairs, keys, texts, read, strict=True):
        assert str(_decimal_as_written(check_decimal(value), text)) == str(got), (key, text)


@pytest.mark.parametrize(
    ("keys", "texts"),
    [
        ([decimal_key(Decimal("1.5"))], ["1.6"]),  # another number
        ([decimal_key(Decimal("0"))], ["-0.00"]),  # a negative zero: Python reads it
        ([decimal_key(Decimal("1.5"))], ["1.5E0"]),  # not plain text
        ([decimal_key(Decimal("1.5"))], [" 1.5"]),
        ([decimal_key(Decimal("1.5"))], ["1.5\n"]),
        ([decimal_key(Decimal("1.5"))], [".15E1"]),
        (["1.5"], ["1.5"]),  # a plain key (an older table's): Python reads it
        ([decimal_key(Decimal("1.5"))], [None]),  # a NULL beside a key
        ([None], ["1.5"]),
        ([decimal_key(Decimal("1.5"))], [b"1.5"]),
        ([decimal_key(Decimal("1.5"))], ["1." + "0" * 31]),  # 31 places: the rule's 30
        (["0" * 35], ["0." + "0" * 31]),
        ([decimal_key(Decimal("1.5")), None], ["1.5"]),  # columns of other lengths
    ],
)
def test_as_written_leaves_the_uncommon_to_python(keys: list[object], texts: list[object]) -> None:
    assert cloops.as_written(keys, texts) is None


def test_as_written_keeps_null_pairs_and_the_exponent() -> None:
    values = [Decimal("1.50"), None, Decimal("-0.0001"), Decimal("0.000"), Decimal("-12")]
    keys = [None if v is None else decimal_key(v) for v in values]
    texts = [None if v is None else format(v, "f") for v in values]
    read = cloops.as_written(keys, texts)
    assert read is not None
    shown = [None if v is None else str(v) for v in read]
    assert shown == ["1.50", None, "-0.0001", "0.000", "-12"]


def test_the_context_does_not_round_what_is_read() -> None:
    value = Decimal("12345678901234567890123456789012345.123456789012345678901234567890")
    with decimal.localcontext() as context:
        context.prec = 5
        read = cloops.as_written([decimal_key(value)], [format(value, "f")])
    assert read is not None and str(read[0]) == str(value)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers(), st.text(max_size=5)), max_size=30))
def test_each_is_the_function_of_each_present_value(values: list[object]) -> None:
    assert cloops.each(repr, values) == [None if v is None else repr(v) for v in values]
    assert cloops.each(repr, tuple(values)) == cloops.each(repr, values)


def test_each_raises_what_the_function_raises_and_survives_a_changing_list() -> None:
    with pytest.raises(ValueError):
        cloops.each(int, ["1", None, "x"])
    values: list[object] = [1, 2, 3, 4]
    with pytest.raises(RuntimeError, match="changed size"):
        cloops.each(lambda v: values.clear(), values)
    with pytest.raises(TypeError):
        cloops.each(repr, 5)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers()), max_size=30))
def test_fill_puts_each_result_in_its_value_s_place(values: list[int | None]) -> None:
    results = [str(v) for v in values if v is not None]
    assert cloops.fill(values, results) == [None if v is None else str(v) for v in values]
    if results:
        with pytest.raises(ValueError):
            cloops.fill(values, results[1:])
    with pytest.raises(ValueError):
        cloops.fill(values, [*results, "extra"])


def test_on_present_serves_optional_columns_and_the_columns_beside() -> None:
    from entityworks.types.columns import on_present

    def pairs(left: list[int], right: list[int]) -> list[int]:
        assert None not in left
        return [a * 10 + b for a, b in zip(left, right, strict=True)]

    assert on_present(pairs, [1, None, 3], [4, 5, 6]) == [14, None, 36]
    assert on_present(pairs, [1, 2], [3, 4]) == [13, 24]


# -- instants at their offsets ---------------------------------------------------------------

from datetime import UTC, datetime, timedelta, timezone  # noqa: E402

from entityworks.sql.textvalues import instant, utc_text  # noqa: E402
from entityworks.types.columns import instants_at_offsets  # noqa: E402
from entityworks.types.scalars import with_offset  # noqa: E402

_instants = st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31, 23, 59))
_minutes = st.one_of(st.none(), st.integers(-840, 840))


def _shown(value: datetime | None) -> object:
    """Everything a datetime shows: its fields and its offset."""
    return None if value is None else (value.isoformat(), value.utcoffset(), type(value))


def _python(stamp: object, minutes: object) -> object:
    try:
        return _shown(with_offset(instant(stamp), minutes))
    except ValueError:
        return ValueError


@settings(max_examples=500, deadline=None)
@given(st.lists(st.tuples(_instants, _minutes), max_size=20))
def test_at_offsets_is_the_python_join_for_every_stored_form(
    pairs: list[tuple[datetime, int | None]],
) -> None:
    minutes = [m for _, m in pairs]
    expected = [_python(utc_text(d.replace(tzinfo=UTC)), m) for d, m in pairs]
    for stamps in (
        [utc_text(d.replace(tzinfo=UTC)) for d, _ in pairs],  # SQLite's text
        [d.replace(tzinfo=UTC) for d, _ in pairs],  # PostgreSQL's UTC session
        [d for d, _ in pairs],  # MariaDB's naive UTC
    ):
        got = instants_at_offsets(stamps, minutes)
        if ValueError in expected:  # out of the years 1-9999: Python names it
            assert got is None
        else:
            assert got is not None
            assert [_shown(v) for v in got] == expected


@pytest.mark.parametrize(
    ("stamp", "minutes"),
    [
        ("2024-02-30T10:00:00.000000+00:00", None),  # no such day
        ("2023-02-29T10:00:00.000000+00:00", 60),
        ("2024-01-01T24:00:00.000000+00:00", None),
        ("2024-01-01T10:00:00.000000+01:00", None),  # another offset
        ("2024-01-01 10:00:00.000000+00:00", None),
        ("2024-01-01T10:00:00+00:00", None),  # no microseconds
        ("２０２４-01-01T10:00:00.000000+00:00", None),
        ("2024-01-01T10:00:00.000000+00:00", True),  # a bool is no offset
        ("2024-01-01T10:00:00.000000+00:00", 841),
        ("2024-01-01T10:00:00.000000+00:00", 2**70),
        ("2024-01-01T10:00:00.000000+00:00", 1.0),
        ("9999-12-31T23:59:00.000000+00:00", 1),  # past 9999
        ("0001-01-01T00:00:00.000000+00:00", -1),  # before 1
        (datetime(2024, 1, 1, tzinfo=timezone(timedelta(hours=1))), None),
        (None, 60),  # an offset beside a NULL
        (b"2024-01-01T10:00:00.000000+00:00", None),
    ],
)
def test_at_offsets_leaves_the_uncommon_to_python(stamp: object, minutes: object) -> None:
    assert instants_at_offsets([stamp], [minutes]) is None


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(_instants, _minutes), max_size=10))
def test_at_offsets_reads_instants_in_another_utc_zone_object(
    pairs: list[tuple[datetime, int | None]],
) -> None:
    """psycopg's UTC session gives ZoneInfo('Etc/UTC'), not datetime.UTC."""
    from zoneinfo import ZoneInfo

    zone = ZoneInfo("Etc/UTC")
    stamps = [d.replace(tzinfo=zone) for d, _ in pairs]
    minutes = [m for _, m in pairs]
    expected = [_python(s, m) for s, m in zip(stamps, minutes, strict=True)]
    got = instants_at_offsets(stamps, minutes)
    if ValueError in expected:
        assert got is None
    else:
        assert got is not None and [_shown(v) for v in got] == expected


def test_at_offsets_leaves_a_zone_off_utc_to_python() -> None:
    from zoneinfo import ZoneInfo

    stamp = datetime(2024, 7, 1, 12, tzinfo=ZoneInfo("Europe/Paris"))
    assert instants_at_offsets([stamp], [None]) is None


def test_at_offsets_keeps_null_pairs() -> None:
    got = instants_at_offsets([None, "2024-03-10T01:30:00.000000+00:00"], [None, -210])
    assert got is not None and got[0] is None
    assert got[1].isoformat() == "2024-03-09T22:00:00-03:30"


# -- the UTC text of aware datetimes -----------------------------------------------------------

from entityworks.types.columns import utc_texts_at_once  # noqa: E402

_offsets = st.integers(-840, 840).map(lambda m: timezone(timedelta(minutes=m)))
_zoned = st.builds(
    lambda d, zone: d.replace(tzinfo=zone), _instants, st.one_of(_offsets, st.just(UTC))
)


def _python_utc_text(value: datetime) -> object:
    try:
        return utc_text(value)
    except OverflowError:  # the instant falls outside the years 1-9999
        return OverflowError


@settings(max_examples=500, deadline=None)
@given(st.lists(_zoned, max_size=20))
def test_utc_texts_are_python_s_for_every_fixed_offset(values: list[datetime]) -> None:
    expected = [_python_utc_text(v) for v in values]
    got = utc_texts_at_once(values)
    if OverflowError in expected:
        assert got is None
    else:
        assert got == expected


@pytest.mark.parametrize(
    "value",
    [
        datetime(2024, 3, 1, 0, 30, tzinfo=timezone(timedelta(hours=1))),  # back to Feb 29
        datetime(2023, 12, 31, 23, 30, tzinfo=timezone(timedelta(hours=-14))),  # into 2024
        datetime(1, 1, 1, 14, tzinfo=timezone(timedelta(hours=14))),
        datetime(9999, 12, 31, 9, 59, 59, 999999, tzinfo=timezone(timedelta(hours=-14))),
        datetime(2000, 2, 29, 23, 59, 59, 1, tzinfo=timezone(timedelta(minutes=-1))),
    ],
)
def test_utc_texts_cross_days_months_and_years(value: datetime) -> None:
    assert utc_texts_at_once([value]) == [utc_text(value)]


@pytest.mark.parametrize(
    "value",
    [
        datetime(2024, 1, 1),  # naive
        datetime(2024, 1, 1, tzinfo=timezone(timedelta(seconds=30))),  # not whole minutes
        datetime(2024, 1, 1, tzinfo=timezone(timedelta(hours=15))),  # beyond ±14:00
        datetime(1, 1, 1, tzinfo=timezone(timedelta(minutes=1))),  # before the year 1
        datetime(9999, 12, 31, 23, 59, tzinfo=timezone(timedelta(minutes=-1))),  # past 9999
        "2024-01-01T00:00:00.000000+00:00",
        None,
    ],
)
def test_utc_texts_leave_the_uncommon_to_python(value: object) -> None:
    assert utc_texts_at_once([datetime(2024, 1, 1, tzinfo=UTC), value]) is None


def test_utc_texts_leave_zones_whose_offset_moves_to_python() -> None:
    from zoneinfo import ZoneInfo

    class _Sub(datetime):
        pass

    paris = datetime(2024, 7, 1, 12, tzinfo=ZoneInfo("Europe/Paris"))
    assert utc_texts_at_once([paris]) is None
    assert utc_texts_at_once([_Sub(2024, 1, 1, tzinfo=UTC)]) is None
    # a zone seen before and another after it: each one's own offset
    east, west = timezone(timedelta(hours=5)), timezone(timedelta(hours=-5))
    values = [datetime(2024, 1, 1, 12, tzinfo=z) for z in (east, east, west, east, UTC)]
    assert utc_texts_at_once(values) == [utc_text(v) for v in values]


# -- timedeltas from their stored microseconds ------------------------------------------------


@settings(max_examples=500, deadline=None)
@given(st.lists(st.integers(min_value=-(2**63), max_value=2**63 - 1), max_size=20))
def test_timedeltas_are_python_s_for_every_64_bit_int(micros: list[int]) -> None:
    expected = [timedelta(microseconds=us) for us in micros]
    got = cloops.timedeltas(micros)
    assert got == expected
    assert all(type(d) is timedelta for d in got)


@pytest.mark.parametrize(
    "edge", [0, -1, 1, 86_400_000_000, -86_400_000_000, -86_400_000_001, 2**63 - 1, -(2**63)]
)
def test_timedeltas_at_day_boundaries_and_the_64_bit_ends(edge: int) -> None:
    assert cloops.timedeltas([edge]) == [timedelta(microseconds=edge)]


@pytest.mark.parametrize("value", [True, 2**63, -(2**63) - 1, 1.0, "5", None])
def test_timedeltas_leave_the_uncommon_to_python(value: object) -> None:
    assert cloops.timedeltas([5, value]) is None


# -- a column's type counts and its present values --------------------------------------------

_mixed = st.lists(
    st.one_of(st.none(), st.integers(), st.booleans(), st.text(max_size=3), st.floats()),
    max_size=30,
)


@settings(max_examples=300, deadline=None)
@given(_mixed, st.sampled_from([int, bool, str, float, type(None), object]))
def test_kinds_count_exact_types_and_nones(values: list[object], kind: type) -> None:
    from operator import countOf

    expected = (countOf(map(type, values), kind), sum(v is None for v in values))
    assert cloops.kinds(values, kind) == expected
    assert cloops.kinds(tuple(values), kind) == expected
    assert cloops.kinds(iter(values), kind) == expected  # any iterable


@settings(max_examples=300, deadline=None)
@given(_mixed)
def test_present_keeps_every_value_but_none_in_order(values: list[object]) -> None:
    assert cloops.present(values) == [v for v in values if v is not None]
    assert cloops.present(tuple(values)) == [v for v in values if v is not None]


def test_kinds_takes_a_type_only() -> None:
    with pytest.raises(TypeError):
        cloops.kinds([1], 1)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        cloops.kinds(5, int)  # type: ignore[arg-type]


# -- build_rows: the objects of rows that need no decoding ---------------------------------

import dataclasses  # noqa: E402


@dataclasses.dataclass
class _Pair:
    a: object
    b: object


_cell = st.one_of(st.none(), st.integers(), st.floats(allow_nan=False), st.text(max_size=3))


@settings(max_examples=200)
@given(
    st.lists(st.tuples(_cell, _cell, _cell, _cell), max_size=30),
    st.permutations([0, 1, 2, 3]),
)
def test_build_rows_is_the_class_of_the_chosen_items_or_none(
    rows: list[tuple[object, ...]], order: list[int]
) -> None:
    """``cls(row[f0], row[f1])`` of each row when the items at ``nulls`` are all None;
    otherwise None (the caller's column path), whatever the rest holds."""
    fields, nulls = tuple(order[:2]), tuple(order[2:])
    expected = (
        [_Pair(*(r[i] for i in fields)) for r in rows]
        if all(r[j] is None for r in rows for j in nulls)
        else None
    )
    assert cloops.build_rows(_Pair, rows, fields, nulls) == expected
    assert cloops.build_rows(_Pair, rows, fields, ()) == [
        _Pair(*(r[i] for i in fields)) for r in rows
    ]


_KINDS = st.sampled_from([None, int, bool, str, float])


@settings(max_examples=200)
@given(
    st.lists(st.tuples(_cell, st.one_of(_cell, st.booleans()), _cell), max_size=30),
    st.tuples(_KINDS, _KINDS),
)
def test_build_rows_with_kinds_builds_only_rows_of_those_exact_types(
    rows: list[tuple[object, ...]], kinds: tuple[type | None, type | None]
) -> None:
    """A field with a kind takes None or a value of exactly that type (a bool is not an
    int here): any other value anywhere makes the answer None."""
    fields, nulls = (0, 1), (2,)

    def fits(value: object, kind: type | None) -> bool:
        return kind is None or value is None or type(value) is kind

    expected = (
        [_Pair(r[0], r[1]) for r in rows]
        if all(r[2] is None and fits(r[0], kinds[0]) and fits(r[1], kinds[1]) for r in rows)
        else None
    )
    assert cloops.build_rows(_Pair, rows, fields, nulls, kinds) == expected
    assert cloops.build_rows(_Pair, rows, fields, nulls, None) == cloops.build_rows(
        _Pair, rows, fields, nulls
    )


def test_build_rows_refuses_kinds_it_cannot_use() -> None:
    with pytest.raises(ValueError):
        cloops.build_rows(_Pair, [(1, 2)], (0, 1), (), (None,))  # one kind per field
    with pytest.raises(TypeError):
        cloops.build_rows(_Pair, [(1, 2)], (0, 1), (), (None, "bool"))  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        cloops.build_rows(_Pair, [(1, 2)], (0, 1), (), [None, None])  # type: ignore[arg-type]


def test_build_rows_makes_nothing_unless_every_row_is_a_long_enough_tuple() -> None:
    made: list[object] = []

    def cls(*args: object) -> object:
        made.append(args)
        return args

    assert cloops.build_rows(cls, [(1, 2), [3, 4]], (0, 1), ()) is None  # a list row
    assert cloops.build_rows(cls, [(1, 2), (3,)], (0, 1), ()) is None  # too short
    assert cloops.build_rows(cls, [(1, 2, None), (3, 4, 0)], (0, 1), (2,)) is None
    assert made == []  # every row checked before the first object
    assert cloops.build_rows(cls, [], (0, 1), (5,)) == []
    assert cloops.build_rows(cls, ((7, 8, None),), (1, 0), (2,)) == [(8, 7)]


def test_build_rows_raises_what_the_class_raises() -> None:
    def cls(a: object, b: object) -> object:
        if a == 2:
            raise ValueError("two")
        return (a, b)

    with pytest.raises(ValueError, match="two"):
        cloops.build_rows(cls, [(1, 1), (2, 2), (3, 3)], (0, 1), ())
    with pytest.raises(TypeError):
        cloops.build_rows(cls, [(1, 1)], [0, 1], ())  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        cloops.build_rows(cls, [(1, 1)], (0, -1), ())
    with pytest.raises(TypeError):
        cloops.build_rows(cls, [(1, 1)], (0, "1"), ())  # type: ignore[arg-type]

"""The column tests against the value rules they stand for (the oracle: ``check`` and
``to_text`` value by value), and the Arrow / XML writers' column paths against their
value-by-value paths (same output, same refusal naming the same row)."""

from __future__ import annotations

import datetime as dt
import decimal
import io
import math
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from entityworks.arrow import from_arrow, to_arrow
from entityworks.errors import ValueEncodingError
from entityworks.registry import registry
from entityworks.types import columns
from entityworks.xml.table import write_xml

UTC = dt.UTC
PLUS_5 = dt.timezone(dt.timedelta(hours=5))


class SubStr(str):
    pass


class SubInt(int):
    pass


decimals = st.one_of(
    st.decimals(allow_nan=True, allow_infinity=True),
    st.decimals(places=2, min_value=-(10**9), max_value=10**9),
    st.sampled_from(
        [
            decimal.Decimal("-0"),
            decimal.Decimal("-0.00"),
            decimal.Decimal("1E+2"),
            decimal.Decimal("0E-31"),
            decimal.Decimal("1" * 36),
            decimal.Decimal("0." + "1" * 30),
            decimal.Decimal("0"),
        ]
    ),
)
VALUES: dict[type, st.SearchStrategy[Any]] = {
    int: st.one_of(st.integers(), st.booleans(), st.floats(), st.builds(SubInt, st.integers())),
    float: st.one_of(st.floats(), st.integers(), st.booleans()),
    str: st.one_of(st.text(), st.builds(SubStr, st.text()), st.just("\ud800"), st.binary()),
    bool: st.one_of(st.booleans(), st.integers(0, 1)),
    decimal.Decimal: decimals,
    dt.datetime: st.one_of(st.datetimes(), st.datetimes(timezones=st.just(UTC)), st.dates()),
}


def _passes(info: Any, values: list[Any]) -> bool:
    """The oracle: every value is accepted by ``check`` and comes back as itself."""
    for v in values:
        try:
            if info.check(v) is not v:
                return False
        except (TypeError, ValueError):
            return False
    return True


@pytest.mark.parametrize("tp", list(VALUES))
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_a_column_passes_only_when_every_value_would(tp: type, data: Any) -> None:
    info = registry.lookup(tp)
    # mostly one kind of value (what passes), sometimes mixed with what the rule refuses
    good = data.draw(st.lists(VALUES[tp].filter(lambda v: _passes(info, [v])), max_size=12))
    values = good + data.draw(st.lists(VALUES[tp], max_size=3))
    assert info.check_column is not None and info.to_text_column is not None
    verdict = info.check_column(values)
    if verdict:
        assert _passes(info, values)
        assert info.to_text_column(values) == [info.to_text(v) for v in values]
    else:  # "not known" is allowed only where some value would not pass unchanged, and
        # for Decimals, whose column test leaves the long and the exponent forms to the rule
        assert not _passes(info, values) or tp is decimal.Decimal


@settings(max_examples=200, deadline=None)
@given(st.lists(decimals, min_size=1, max_size=12))
def test_decimal_facts_are_the_value_by_value_facts(values: list[decimal.Decimal]) -> None:
    facts = columns.decimal_facts(values)
    info = registry.lookup(decimal.Decimal)
    if not _passes(info, values):
        assert facts is None
        return
    assert facts is not None
    exponents = [int(v.as_tuple().exponent) for v in values]  # all finite: they passed
    assert facts.integer == max(
        len(v.as_tuple().digits) + e for v, e in zip(values, exponents, strict=True)
    )
    assert facts.scale == -min(exponents)
    assert facts.exponent == (exponents[0] if len(set(exponents)) == 1 else None)
    assert columns.scale_column(values) == [-e for e in exponents]


@dataclass
class Row:
    id: int
    x: float
    s: str
    note: str | None
    at: dt.datetime
    amount: decimal.Decimal


def _rows(n: int) -> list[Row]:
    return [
        Row(
            i,
            i / 7,
            f"text {i}",
            None if i % 3 == 0 else f"n{i}",
            dt.datetime(2024, 1, 1) + dt.timedelta(seconds=i * 3601, microseconds=i),
            decimal.Decimal(i * 37 - 500).scaleb(-(i % 4)),
        )
        for i in range(n)
    ]


SPOILERS: list[tuple[str, Any, str]] = [
    ("s", b"bytes", "expected a str"),
    ("x", "1.5", "expected a float"),
    ("at", dt.datetime(2024, 1, 1, tzinfo=PLUS_5), "timezone-aware"),
    ("amount", decimal.Decimal("-0.00"), "negative zero"),
    ("amount", decimal.Decimal("NaN"), "not finite"),
    ("amount", decimal.Decimal("1E+3"), "positive exponent"),
    ("id", 2**63, "64-bit"),
    ("note", "\ud800", ""),
]


@pytest.mark.parametrize(("field", "bad", "says"), SPOILERS)
def test_a_bad_value_in_a_good_column_is_refused_with_its_row(
    field: str, bad: Any, says: str
) -> None:
    rows = _rows(60)
    setattr(rows[41], field, bad)
    for write in (lambda: to_arrow(Row, rows), lambda: write_xml(Row, rows, io.BytesIO())):
        with pytest.raises(ValueEncodingError) as caught:
            write()
        assert caught.value.row == 41 and caught.value.column == field, str(caught.value)
        assert says in str(caught.value)


def test_the_column_paths_convert_what_the_rules_convert() -> None:
    rows = _rows(60)
    rows[5].x = 3  # an int in a float field: a float, as value by value
    rows[6].s = SubStr("sub")
    back = from_arrow(Row, to_arrow(Row, rows))
    assert back[5].x == 3.0 and type(back[5].x) is float
    assert type(back[6].s) is str
    assert back[7:] == rows[7:]
    out = io.BytesIO()
    write_xml(Row, rows, out)
    assert b"<x>3.0</x>" in out.getvalue() and b"<s>sub</s>" in out.getvalue()


def test_xml_text_that_needs_work_takes_the_careful_path() -> None:
    rows = _rows(10)
    rows[2].s, rows[3].s, rows[4].note = "a < b & c", "   ", "\r\n"
    rows[5].x = math.nan
    out = io.BytesIO()
    write_xml(Row, rows, out)
    text = out.getvalue().decode()
    assert "<s>a &lt; b &amp; c</s>" in text
    assert '<s xml:space="preserve">   </s>' in text
    assert '<note xml:space="preserve">&#13;\n</note>' in text
    assert "<x>NaN</x>" in text

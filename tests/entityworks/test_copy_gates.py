"""PostgreSQL's ``insert_many`` streams plain rows into a binary COPY straight from the
instances; int and float columns are written untouched only when every value has exactly the
column's type (psycopg would also pack a numpy scalar, a bool or a Decimal). Anything else
takes the checked path: converted where typing allows it, refused with the row named
otherwise, nothing written."""

from __future__ import annotations

import math
import uuid
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import numpy as np
import pytest

from entityworks import Store, ValueEncodingError, table

NAME = f"copy_gates_{uuid.uuid4().hex[:8]}"


@table(NAME)
@dataclass
class Reading:
    id: int
    count: int
    value: float
    spare: float | None
    label: str


class Odd(float):
    """A float subclass: stored, and read back, as a float."""


@pytest.fixture
def pg(pg_url: str) -> Any:
    store = Store(pg_url)
    store.drop(Reading)
    store.create(Reading)
    yield store
    store.drop(Reading)
    store.close()


def _rows(n: int) -> list[Reading]:
    return [Reading(i, i * 7, i / 3, None if i % 3 else -i / 7, f"r{i}") for i in range(n)]


def test_plain_rows_come_back_exactly(pg: Store) -> None:
    rows = _rows(5000)
    rows[1].value, rows[2].value, rows[3].value = -0.0, math.inf, math.nan
    rows[4].spare = -0.0
    assert pg.insert_many(rows) == len(rows)
    back = list(pg.select(Reading, order_by="id"))
    assert len(back) == len(rows)
    for got, want in zip(back, rows, strict=True):
        for name in ("id", "count", "value", "spare", "label"):
            a, b = getattr(got, name), getattr(want, name)
            assert type(a) is type(b), (name, a, b)
            if isinstance(b, float):
                assert (math.isnan(a) and math.isnan(b)) or (
                    a == b and math.copysign(1, a) == math.copysign(1, b)), (name, a, b)
            else:
                assert a == b, (name, a, b)


@pytest.mark.parametrize("field, value, back", [
    ("value", 3, 3.0), ("value", False, 0.0), ("value", Odd(2.5), 2.5),
    ("value", np.float64(-0.0), -0.0), ("spare", 4, 4.0), ("count", True, 1)])
def test_values_typing_allows_are_converted(pg: Store, field: str, value: Any,
                                             back: Any) -> None:
    rows = _rows(50)
    setattr(rows[17], field, value)
    pg.insert_many(rows)
    got = getattr(pg.get(Reading, 17), field)
    assert type(got) is type(back) and got == back
    assert math.copysign(1, got) == math.copysign(1, back)
    assert pg.count(Reading) == 50


@pytest.mark.parametrize("field, value", [
    ("value", Decimal("0.5")), ("value", np.float32(0.5)), ("value", 2**53 + 1),
    ("value", "1.5"), ("spare", Decimal("1")), ("count", np.int64(3)), ("count", 2.0),
    ("count", 2**63)])
def test_other_values_are_refused_and_nothing_is_written(pg: Store, field: str,
                                                         value: Any) -> None:
    rows = _rows(50)
    setattr(rows[23], field, value)
    with pytest.raises(ValueEncodingError) as info:
        pg.insert_many(rows)
    assert info.value.row == 23
    assert pg.count(Reading) == 0

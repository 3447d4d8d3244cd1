"""PostgreSQL's ``insert_many`` streams plain rows into a binary COPY straight from the
instances; int and float columns are written untouched only when every value has exactly the
column's type (psycopg would also pack a numpy scalar, a bool or a Decimal). Anything else
takes the checked path: converted where typing allows it, refused with the row named
otherwise, nothing written."""

from __future__ import annotations

import dataclasses
import math
import uuid
import warnings
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import numpy as np
import pytest

from entityworks import Store, ValueEncodingError, WriteError, table
from entityworks.sql._rowcodec import CHUNK

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
                    a == b and math.copysign(1, a) == math.copysign(1, b)
                ), (name, a, b)
            else:
                assert a == b, (name, a, b)


@pytest.mark.parametrize(
    "field, value, back",
    [
        ("value", 3, 3.0),
        ("value", False, 0.0),
        ("value", Odd(2.5), 2.5),
        ("value", np.float64(-0.0), -0.0),
        ("spare", 4, 4.0),
        ("count", True, 1),
    ],
)
def test_values_typing_allows_are_converted(pg: Store, field: str, value: Any, back: Any) -> None:
    rows = _rows(50)
    setattr(rows[17], field, value)
    pg.insert_many(rows)
    got = getattr(pg.get(Reading, 17), field)
    assert type(got) is type(back) and got == back
    assert math.copysign(1, got) == math.copysign(1, back)
    assert pg.count(Reading) == 50


@pytest.mark.parametrize(
    "field, value",
    [
        ("value", Decimal("0.5")),
        ("value", np.float32(0.5)),
        ("value", 2**53 + 1),
        ("value", "1.5"),
        ("spare", Decimal("1")),
        ("count", np.int64(3)),
        ("count", 2.0),
        ("count", 2**63),
    ],
)
def test_other_values_are_refused_and_nothing_is_written(pg: Store, field: str, value: Any) -> None:
    rows = _rows(50)
    setattr(rows[23], field, value)
    with pytest.raises(ValueEncodingError) as info:
        pg.insert_many(rows)
    assert info.value.row == 23
    assert pg.count(Reading) == 0


def test_a_refusal_after_chunks_were_sent_writes_nothing(pg: Store) -> None:
    """The COPY checks its rows a chunk at a time while it sends them: a value of another
    type in a later chunk abandons the COPY with the earlier chunks already on the wire."""
    rows = _rows(3 * CHUNK)
    bad = 2 * CHUNK + 5
    rows[bad].count = np.int64(3)  # type: ignore[assignment]
    with pytest.raises(ValueEncodingError) as info:
        pg.insert_many(rows)
    assert info.value.row == bad and "count" in str(info.value)
    assert pg.count(Reading) == 0
    with pg.transaction():  # inside an outer transaction: the rows before it stay
        pg.insert_many(_rows(10))
        with pytest.raises(ValueEncodingError):
            pg.insert_many(rows)
    assert pg.count(Reading) == 10


def test_a_late_chunk_converted_by_the_checked_path(pg: Store) -> None:
    rows = _rows(3 * CHUNK)
    rows[-1].value = 7  # type: ignore[assignment]  # typing allows an int in a float field
    pg.insert_many(rows)
    got = pg.get(Reading, len(rows) - 1)
    assert got is not None and type(got.value) is float and got.value == 7.0
    assert pg.count(Reading) == len(rows)


@table(f"{NAME}_keyed")
@dataclass
class Keyed:
    id: int | None
    n: int


@pytest.mark.parametrize("at", [0, CHUNK + 10])
def test_keys_to_generate_are_found_after_the_copy_refuses_them(pg_url: str, at: int) -> None:
    """The COPY is tried before the keys are scanned; a None key (in the first chunk or a
    later one) sends the call to the generated-key path, nothing of the COPY kept."""
    store = Store(pg_url)
    store.drop(Keyed)
    store.create(Keyed)
    try:
        rows = [Keyed(None if i >= at else 10**6 + i, i) for i in range(2 * CHUNK)]
        assert store.insert_many(rows) == len(rows)
        assert all(type(r.id) is int for r in rows)
        assert len({r.id for r in rows}) == len(rows)
        back = {r.id: r.n for r in store.select(Keyed)}
        assert back == {r.id: r.n for r in rows}
    finally:
        store.drop(Keyed)
        store.close()


def test_a_key_of_another_type_is_refused(pg_url: str) -> None:
    store = Store(pg_url)
    store.drop(Keyed)
    store.create(Keyed)
    try:
        rows = [Keyed(i, i) for i in range(2 * CHUNK)]
        rows[CHUNK + 3].id = "12"  # type: ignore[assignment]
        with pytest.raises(ValueEncodingError) as info:
            store.insert_many(rows)
        assert info.value.row == CHUNK + 3
        assert store.count(Keyed) == 0
    finally:
        store.drop(Keyed)
        store.close()


@table(f"{NAME}_unset")
@dataclass
class Unset:
    id: int
    v: int = field(init=False)

    def __post_init__(self) -> None:
        if self.id != CHUNK + 7:  # one row leaves its field unset
            self.v = self.id


def test_an_unset_field_met_mid_copy_leaves_the_transaction_usable(pg_url: str) -> None:
    """The rows are read while the COPY runs: an unset field in a later chunk is named, and
    an outer transaction goes on (its savepoints intact, no warning) with nothing kept."""
    store = Store(pg_url)
    store.drop(Unset)
    store.create(Unset)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with store.transaction():
                store.insert_many([Unset(i) for i in range(10**6, 10**6 + 5)])
                with pytest.raises(WriteError) as info:
                    store.insert_many([Unset(i) for i in range(3 * CHUNK)])
                assert info.value.row == CHUNK + 7 and info.value.column == "v"
                store.insert_many([Unset(i) for i in range(10)])
        assert store.count(Unset) == 15
    finally:
        store.drop(Unset)
        store.close()


def test_an_async_store_s_copy_stores_what_the_store_s_stores(pg: Store, pg_url: str) -> None:
    """Both COPY paths (the Store's, and an AsyncStore's through psycopg's async COPY, a
    chunk or a slice of rows per awaited call): over several chunks and slices, both store
    the same values of the same types as given, -0.0, infinities and NaN included."""
    import asyncio

    from entityworks import AsyncStore
    from entityworks.sql.backends.pgcopy import COPY_SLICE

    rows = _rows(3 * CHUNK + 2 * COPY_SLICE + 7)
    rows[1].value, rows[2].value, rows[3].value, rows[4].spare = -0.0, math.inf, math.nan, -0.0
    expected = [repr(dataclasses.astuple(r)) for r in rows]
    pg.insert_many(rows)
    assert [repr(dataclasses.astuple(r)) for r in pg.select(Reading, order_by="id")] == expected
    pg.drop(Reading)
    pg.create(Reading)

    async def through_async() -> None:
        async with AsyncStore(pg_url) as store:
            assert await store.insert_many(rows) == len(rows)

    asyncio.run(through_async())
    assert [repr(dataclasses.astuple(r)) for r in pg.select(Reading, order_by="id")] == expected

"""PostgreSQL's binary COPY made from Arrow columns (``backends/_arrowcopy``).

The oracle is the server itself: the table the columnar lane writes and the one
``insert_many`` writes (psycopg's dumpers of the decoded values) are read back by
``COPY ... TO STDOUT (FORMAT BINARY)`` and must be the same bytes. The tests also
require the lane to have written its batches from Arrow (so that one which fell back
every time would fail), and a refusal to name the row as ``insert_many`` does.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import entityworks.sql.backends.postgresql as postgresql
from entityworks import AwareDatetime, EntityworksError, Store
from entityworks.arrow import to_arrow

from ..strategies import offsets


@dataclass
class Mix:
    id: int
    n: int
    on: int | None
    x: float
    ox: float | None
    s: str
    os: str | None
    flag: bool
    oflag: bool | None
    at: dt.datetime
    oat: dt.datetime | None
    aware: AwareDatetime
    oaware: AwareDatetime | None
    amount: decimal.Decimal
    oamount: decimal.Decimal | None


@dataclass
class MixCopy(Mix):
    pass


def copies(objs: list[Mix]) -> list[MixCopy]:
    return [MixCopy(**{f.name: getattr(o, f.name) for f in dataclasses.fields(o)}) for o in objs]


ZONES = [
    dt.UTC,
    dt.timezone(-dt.timedelta(hours=3, minutes=30)),
    dt.timezone(dt.timedelta(hours=14)),
    dt.timezone(dt.timedelta(0)),
]
FLOATS = [0.0, -0.0, math.inf, -math.inf, math.nan, 1e-310, -1.5, 2.0**60]


def mixes(n: int, places: int = 2) -> list[Mix]:
    return [
        Mix(
            i,
            [-(2**63), 2**63 - 1, 0, -1][i % 4] if i < 8 else i * 7919 - 10**6,
            None if i % 3 == 0 else -i,
            FLOATS[i % len(FLOATS)],
            None if i % 4 == 1 else i / 7,
            ["", "é ✓ 𝄞", "plain", "x" * 300][i % 4],
            None if i % 2 else f"note {i}",
            i % 2 == 0,
            None if i % 5 == 0 else i % 3 == 0,
            dt.datetime(
                1 + (i * 997) % 9999, 1 + i % 12, 1 + i % 28, i % 24, i % 60, 0, i * 7 % 10**6
            ),
            None if i % 6 == 0 else dt.datetime(9999, 12, 31, 23, 59, 59, 999999),
            dt.datetime(2 + (i * 991) % 9997, 1 + i % 12, 1 + i % 28, i % 24, tzinfo=ZONES[i % 4]),
            None if i % 4 == 0 else dt.datetime(2020, 2, 29, 1, 2, 3, 4, tzinfo=ZONES[i % 4]),
            decimal.Decimal(i * 123457 - 10**6).scaleb(-places),
            None if i % 3 == 0 else decimal.Decimal(-i).scaleb(-places),
        )
        for i in range(n)
    ]


def table_bytes(store: Store, cls: type) -> bytes:
    """The table's rows by id, as the server writes them in a binary COPY."""
    table = store.table(cls)
    quote = store.dialect.identifier_preparer.quote
    with store.connection() as conn:
        cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
        out = bytearray()
        sql = f"COPY (SELECT * FROM {quote(table.name)} ORDER BY id) TO STDOUT (FORMAT BINARY)"
        with cursor.copy(sql) as copy:
            for data in copy:
                out += data
        cursor.close()
    return bytes(out)


@pytest.fixture
def pg(pg_url: str) -> Iterator[Store]:
    store = Store(pg_url)
    yield store
    for cls in (Mix, MixCopy, Amount, AmountCopy):  # this module's tables only
        if store.schema(cls).name in store.table_names():
            store.drop(cls)
    store.close()


@pytest.fixture
def copied(monkeypatch: Any) -> list[int]:
    """The number of rows each COPY made from Arrow sent."""
    sent: list[int] = []
    original = postgresql.copy_body

    def spy(rows: Any, body: Any) -> None:
        original(rows, body)
        sent.append(len(body))

    monkeypatch.setattr(postgresql, "copy_body", spy)
    return sent


def test_the_copy_from_arrow_stores_what_insert_many_stores(pg: Store, copied: list[int]) -> None:
    pg.create(Mix)
    pg.create(MixCopy)
    for places in (0, 2, 3, 7):
        pg.delete(Mix, where={})
        pg.delete(MixCopy, where={})
        objs = mixes(120, places)
        pg.insert_many(objs)
        copied.clear()
        assert pg.insert_arrow(MixCopy, to_arrow(MixCopy, copies(objs)), batch_size=50) == 120
        assert copied == [50, 50, 20]
        assert table_bytes(pg, MixCopy) == table_bytes(pg, Mix)


@dataclass
class Amount:
    id: int
    v: decimal.Decimal | None
    at: AwareDatetime | None


@dataclass
class AmountCopy(Amount):
    pass


def test_many_decimals_and_instants(pg: Store, copied: list[int]) -> None:
    pg.create(Amount)
    pg.create(AmountCopy)

    @settings(max_examples=40, deadline=None, database=None)
    @given(
        st.integers(0, 8).flatmap(
            lambda p: st.lists(
                st.tuples(
                    st.none()
                    | st.integers(-(10**15) + 1, 10**15 - 1).map(
                        lambda n: decimal.Decimal(n).scaleb(-p)
                    ),
                    st.none()
                    | st.datetimes(
                        dt.datetime(2, 1, 1), dt.datetime(9998, 12, 31), timezones=offsets()
                    ),
                ),
                min_size=1,
                max_size=40,
            )
        )
    )
    def check(values: list[tuple[Any, Any]]) -> None:
        pg.delete(Amount, where={})
        pg.delete(AmountCopy, where={})
        objs = [Amount(i, v, at) for i, (v, at) in enumerate(values)]
        pg.insert_many(objs)
        copied.clear()
        pg.insert_arrow(
            AmountCopy, to_arrow(AmountCopy, [AmountCopy(o.id, o.v, o.at) for o in objs])
        )
        if any(v is not None for v, _at in values):  # (no value: to_arrow picks no decimal)
            assert copied == [len(values)]
        assert table_bytes(pg, AmountCopy) == table_bytes(pg, Amount)

    check()


def test_a_refusal_of_the_server_names_the_row_as_insert_many_does(
    pg: Store, copied: list[int]
) -> None:
    pg.create(Mix)
    pg.create(MixCopy)
    objs = mixes(60)
    objs[47].s = "nul \x00 inside"
    with pytest.raises(EntityworksError) as many:
        pg.insert_many(objs)
    with pytest.raises(EntityworksError) as ours:
        pg.insert_arrow(MixCopy, to_arrow(MixCopy, copies(objs)), batch_size=25)
    assert getattr(ours.value, "row", None) == getattr(many.value, "row", None) == 47
    assert getattr(ours.value, "column", None) == "s"
    assert copied == [25]  # the first batch went from Arrow; the second was refused
    assert pg.count(MixCopy) == 0


def test_a_key_given_twice_is_named(pg: Store) -> None:
    pg.create(MixCopy)
    objs = copies(mixes(30))
    objs[21].id = objs[4].id
    with pytest.raises(EntityworksError) as caught:
        pg.insert_arrow(MixCopy, to_arrow(MixCopy, objs))
    assert getattr(caught.value, "row", None) == 21
    assert pg.count(MixCopy) == 0


def test_offsets_written_by_another_tool(pg: Store, copied: list[int]) -> None:
    # an offset of 0 given (to_arrow writes UTC's as null) is UTC's: no companion value
    import pyarrow as pa

    from entityworks.arrow import from_arrow

    pg.create(Amount)
    pg.create(AmountCopy)
    instants = pa.array([0, 10**15, 2 * 10**15, 3 * 10**15], pa.timestamp("us", tz="UTC"))
    minutes = pa.array([0, 1, None, -210], pa.int16())
    table = pa.table(
        {
            "id": pa.array([1, 2, 3, 4], pa.int64()),
            "v": pa.array([None] * 4, pa.decimal128(5, 2)),
            "at": pa.StructArray.from_arrays([instants, minutes], ["value", "offset"]),
        }
    )
    pg.insert_many(from_arrow(Amount, table))
    pg.insert_arrow(AmountCopy, table)
    assert copied == [4]
    assert table_bytes(pg, AmountCopy) == table_bytes(pg, Amount)


def test_a_later_slice_not_made_from_arrow_goes_the_usual_way(pg: Store, copied: list[int]) -> None:
    # one Decimal of another exponent past the first slice: that batch's COPY is undone
    # and the batch written from the decoded values (the exponent kept)
    from entityworks.sql.backends._arrowcopy import SLICE

    pg.create(Amount)
    pg.create(AmountCopy)
    n = SLICE + 500
    values = [decimal.Decimal(i).scaleb(-2) for i in range(n)]
    values[SLICE + 100] = decimal.Decimal("1.5")
    objs = [Amount(i, v, None) for i, v in enumerate(values)]
    pg.insert_many(objs)
    pg.insert_arrow(AmountCopy, to_arrow(AmountCopy, [AmountCopy(o.id, o.v, o.at) for o in objs]))
    assert copied == []  # (the one batch went the usual way)
    assert table_bytes(pg, AmountCopy) == table_bytes(pg, Amount)


def test_a_null_past_the_first_slice_is_named(pg: Store) -> None:
    import pyarrow as pa

    from entityworks.sql.backends._arrowcopy import SLICE

    pg.create(MixCopy)
    table = to_arrow(MixCopy, copies(mixes(SLICE + 200)))
    row = SLICE + 150
    texts = [None if i == row else v for i, v in enumerate(table.column("s").to_pylist())]
    bad = table.set_column(table.column_names.index("s"), "s", pa.array(texts, pa.string()))
    with pytest.raises(EntityworksError) as caught:
        pg.insert_arrow(MixCopy, bad)  # one batch: the null in its second slice
    assert getattr(caught.value, "row", None) == row
    assert getattr(caught.value, "column", None) == "s"
    assert "MixCopy" in str(caught.value)
    assert pg.count(MixCopy) == 0

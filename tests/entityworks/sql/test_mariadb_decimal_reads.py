"""MariaDB reads a Decimal column (a DECIMAL(65, 30) beside its ``__scale``) as the server's
text of the value cut to its scale (``Backend.read_form``): one short text, no companion,
where the cut digits are zeros and the scale is one a write stores; else the whole text
beside the scale, which is read, or refused, as the stored columns are.

The oracle is PyMySQL reading the two stored columns itself: the DECIMAL as its Decimal of
30 places, the scale as an int, and the rule of what entityworks writes (the value with the
scale's digits after the point, nothing cut). Every read door gives the same: ``select``
(objects, ``columns=``, dicts, ``where``/``order_by``/``limit``), ``get``, the child rows,
``rows``, an AsyncStore."""

from __future__ import annotations

import asyncio
import decimal
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from entityworks import AsyncStore, Store, StoredValueError, col, table


@dataclass
class Leg:
    x: Decimal
    y: Decimal | None = None


@table("mdb_amounts")
@dataclass
class Amount:
    id: int
    v: Decimal
    w: Decimal | None = None
    legs: list[Leg] = field(default_factory=list)


@pytest.fixture
def mdb(mariadb_url: str) -> Iterator[Store]:
    store = Store(mariadb_url)
    store.drop(Amount)
    store.create(Amount)
    yield store
    store.drop(Amount)
    store.close()


def _run(url: str, *statements: tuple[str, tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Each ``(sql, params)`` through PyMySQL itself, on one autocommitted connection (the
    URL's options, such as ``ssl_disabled``, as the Store takes them): the last one's rows,
    as PyMySQL reads them."""
    engine = sa.create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        raw = engine.raw_connection()
        try:
            cursor = raw.cursor()
            for sql, params in statements:
                cursor.execute(sql, params)
            return list(cursor.fetchall()) if cursor.description else []
        finally:
            raw.close()
    finally:
        engine.dispose()


def _oracle(stored: Decimal | None, scale: Any) -> Decimal | None | type[StoredValueError]:
    """What a read must give for the stored DECIMAL ``stored`` (PyMySQL's Decimal, 30
    places) beside the stored ``scale``: the value with the scale's digits when it cuts
    only zeros, as stored where no scale is, else a refusal."""
    if stored is None:
        return None
    if scale is None:
        return stored
    if not 0 <= scale <= 30:
        return StoredValueError
    with decimal.localcontext(decimal.Context(prec=100)):  # 65 digits, exactly
        cut = stored.quantize(Decimal(1).scaleb(-scale), rounding=decimal.ROUND_DOWN)
    if cut != stored:
        return StoredValueError
    return cut


#: Decimals entityworks writes: up to 35 digits before the point and 30 after, any exponent
#: in between (trailing zeros kept), negative or not.
DECIMALS = st.builds(
    lambda number, places, negative: Decimal(
        (int(negative and number > 0), tuple(map(int, str(number))), -places)
    ),
    st.one_of(st.integers(0, 10**6), st.integers(0, 10**65 - 1)),
    st.integers(0, 30),
    st.booleans(),
).filter(lambda d: len(d.as_tuple().digits) + int(d.as_tuple().exponent) <= 35)

#: What another tool may leave in the scale column.
SCALES = st.one_of(st.none(), st.integers(-40, 40), st.sampled_from([0, 1, 2, 29, 30, 31]))


def test_every_read_door_gives_the_written_exponents(mdb: Store, mariadb_url: str) -> None:
    rows = [
        Amount(1, Decimal("1.50"), None, [Leg(Decimal("0.000"), Decimal("-7"))]),
        Amount(2, Decimal("-0.000100"), Decimal("7"), []),
        Amount(3, Decimal("9" * 35 + "." + "9" * 30), Decimal("0.0"), [Leg(Decimal("2.5"))]),
        Amount(4, Decimal("-" + "9" * 35 + "." + "0" * 30), Decimal("0"), []),
        Amount(5, Decimal("0"), Decimal("123456789.123456789"), []),
    ]
    mdb.insert_many(rows)

    def same(got: list[Any], want: list[Any]) -> None:
        assert repr(got) == repr(want)  # Decimal's repr shows the exponent

    same(list(mdb.select(Amount, order_by="id")), rows)
    same([mdb.get(Amount, r.id) for r in rows], rows)
    same(list(mdb.select(Amount, columns=["w", "v"], order_by="id")), [(r.w, r.v) for r in rows])
    same(
        list(mdb.select(Amount, as_dict=True, columns=["v"], order_by="id")),
        [{"v": r.v} for r in rows],
    )
    # ORDER BY and WHERE compare the stored numbers, not the texts read
    same(list(mdb.select(Amount, order_by="v")), sorted(rows, key=lambda r: r.v))
    same(
        list(mdb.select(Amount, where=col("v") > Decimal("0.0001"), order_by="-v", limit=2)),
        sorted((r for r in rows if r.v > Decimal("0.0001")), key=lambda r: -r.v)[:2],
    )
    same(list(mdb.select(Amount, order_by="id", limit=2, offset=1)), rows[1:3])

    async def through_async() -> list[Any]:
        store = AsyncStore(mariadb_url)  # on aiomysql
        try:
            return [r async for r in store.select(Amount, order_by="id")]
        finally:
            await store.close()

    same(asyncio.run(through_async()), rows)
    # what the server holds is what PyMySQL reads: the 30-place DECIMAL and the scale
    stored_rows = _run(mariadb_url, ("SELECT v, v__scale FROM mdb_amounts ORDER BY id", ()))
    for (stored, scale), row in zip(stored_rows, rows, strict=True):
        assert _oracle(stored, scale) == row.v and str(_oracle(stored, scale)) == str(row.v)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(values=st.lists(st.tuples(DECIMALS, SCALES), min_size=1, max_size=6))
def test_property_any_stored_scale_reads_as_the_oracle_or_is_refused(
    mdb: Store, mariadb_url: str, values: list[tuple[Decimal, Any]]
) -> None:
    """Rows written by entityworks, then their scale column set by another tool to anything
    it can hold: every read door gives the oracle's value, exponent included, or refuses
    naming the row and the column; the other rows read as before."""
    mdb.delete(Amount, where={})
    mdb.insert_many([Amount(i + 1, v) for i, (v, _s) in enumerate(values)])
    edits = [
        ("UPDATE mdb_amounts SET v__scale = %s WHERE id = %s", (scale, i + 1))
        for i, (_v, scale) in enumerate(values)
    ]
    stored = _run(mariadb_url, *edits, ("SELECT id, v, v__scale FROM mdb_amounts ORDER BY id", ()))
    want = {key: _oracle(value, scale) for key, value, scale in stored}
    refused = [key for key, value in want.items() if value is StoredValueError]
    for key, value in want.items():
        try:
            got = mdb.get(Amount, key)
        except StoredValueError as exc:
            assert value is StoredValueError, (key, exc)
            assert (exc.key, exc.column) == (f"id={key}", "v")
            continue
        assert got is not None and value is not StoredValueError, (key, got, value)
        assert type(got.v) is Decimal and str(got.v) == str(value), (got.v, value)
    if refused:
        with pytest.raises(StoredValueError) as caught:
            list(mdb.select(Amount, order_by="id"))
        assert caught.value.column == "v" and caught.value.key == f"id={refused[0]}"
        with pytest.raises(StoredValueError):
            list(mdb.select(Amount, columns=["v"], order_by="id"))
    else:
        got = list(mdb.select(Amount, order_by="id"))
        assert [str(a.v) for a in got] == [str(want[a.id]) for a in got]
        assert [str(v) for (v,) in mdb.select(Amount, columns=["v"], order_by="id")] == [
            str(want[a.id]) for a in got
        ]
    # the rows not edited into a refusal read on their own
    kept = [key for key in want if key not in refused]
    got = list(mdb.select(Amount, where=col("id").in_(kept), order_by="id")) if kept else []
    assert [str(a.v) for a in got] == [str(want[k]) for k in kept]


def test_a_tampered_child_decimal_is_refused_naming_its_parent(
    mdb: Store, mariadb_url: str
) -> None:
    mdb.insert_many([Amount(1, Decimal("1"), None, [Leg(Decimal("2.50")), Leg(Decimal("3.1"))])])
    (leg_table,) = [n for n in mdb.table_names() if n.startswith("mdb_amounts") and "leg" in n]
    _run(mariadb_url, (f"UPDATE `{leg_table}` SET x__scale = 0 WHERE x = 2.5", ()))  # cuts the 5
    with pytest.raises(StoredValueError) as caught:
        list(mdb.select(Amount))
    assert (caught.value.key, caught.value.column) == ("parent_key=1, position=0", "x")
    _run(mariadb_url, (f"UPDATE `{leg_table}` SET x__scale = 2 WHERE x = 2.5", ()))
    assert [leg.x for leg in next(iter(mdb.select(Amount))).legs] == [
        Decimal("2.50"),
        Decimal("3.1"),
    ]
    assert str(next(iter(mdb.select(Amount))).legs[0].x) == "2.50"

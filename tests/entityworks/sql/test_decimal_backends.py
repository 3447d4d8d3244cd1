"""Decimals mean the same on every backend: keys compare by value, a write keeps the exponent
it was given, and SQLite's column reads as the number in other tools."""

from __future__ import annotations

import decimal
import operator
import sqlite3
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from entityworks import Store, StoredValueError, WriteError, col, column, migrate
from entityworks.sql.scripts import statement_templates

from ..strategies import decimals

D = decimal.Decimal
FAST = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@dataclass
class Price:
    amount: D = field(metadata={"primary_key": True})
    label: str = ""


@dataclass
class Slot:
    shelf: int = field(metadata={"primary_key": True})
    amount: D = field(metadata={"primary_key": True})
    label: str = ""


@dataclass
class Line:
    note: str


@dataclass
class Order:
    amount: D = field(metadata={"primary_key": True})
    lines: list[Line] = field(default_factory=list)


@dataclass
class Refund:
    id: int = field(metadata={"primary_key": True})
    order: D = column(references=Order, on_delete="cascade", default=D(0))


@dataclass
class Money:
    id: int = field(metadata={"primary_key": True})
    amount: D = D("0")
    note: D | None = None


@dataclass
class Tag:
    id: int = field(metadata={"primary_key": True})
    code: D = column(unique=True, default=D(0))


def exact(value: D | None) -> tuple[object, ...] | None:
    """A Decimal with its exponent (``1.5`` and ``1.50`` differ)."""
    return None if value is None else value.as_tuple()


# -- a Decimal key: equal by value, the stored form is the last one written ----------------


def test_upsert_over_an_equal_key_keeps_the_new_exponent(store: Store) -> None:
    store.create(Price)
    store.insert(Price(D("1.5"), "old"))
    store.upsert(Price(D("1.50"), "new"))
    got = store.get(Price, D("1.5"))
    assert got is not None and got.label == "new"
    assert exact(got.amount) == exact(D("1.50"))
    assert store.count(Price) == 1
    store.upsert_many([Price(D("1.500"), "bulk"), Price(D("2"), "two")])
    assert [(exact(p.amount), p.label) for p in store.select(Price, order_by="amount")] == [
        (exact(D("1.500")), "bulk"),
        (exact(D("2")), "two"),
    ]


def test_update_of_an_instance_keeps_the_new_exponent(store: Store) -> None:
    store.create(Price)
    store.insert(Price(D("1.5"), "old"))
    store.update(Price(D("1.50"), "new"))
    got = store.get(Price, D("1.500"))
    assert got is not None and got.label == "new"
    assert exact(got.amount) == exact(D("1.50"))
    with store.transaction():  # the general path (no single-row shortcut)
        store.update(Price(D("1.5000"), "again"))
    [row] = store.select(Price)
    assert exact(row.amount) == exact(D("1.5000")) and row.label == "again"


def test_a_composite_key_with_a_decimal_part(store: Store) -> None:
    store.create(Slot)
    store.insert_many([Slot(1, D("1.5"), "a"), Slot(2, D("1.5"), "b")])
    store.upsert(Slot(1, D("1.50"), "upserted"))
    store.update(Slot(2, D("1.500"), "updated"))
    got = {s.shelf: s for s in store.select(Slot)}
    assert store.count(Slot) == 2
    assert (exact(got[1].amount), got[1].label) == (exact(D("1.50")), "upserted")
    assert (exact(got[2].amount), got[2].label) == (exact(D("1.500")), "updated")
    found = store.get(Slot, (1, D("1.5000")))
    assert found is not None and exact(found.amount) == exact(D("1.50"))


def rescaled(value: D, places: int) -> D:
    """``value`` written with ``places`` digits after the point, or with as few as it needs
    when it needs more (no digit is ever dropped)."""
    sign, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)
    while exponent < 0 and len(digits) > 1 and digits[-1] == 0:
        digits, exponent = digits[:-1], exponent + 1
    if places > -exponent:
        digits, exponent = digits + (0,) * (places + exponent), -places
    return D((sign, digits, exponent))


@st.composite
def equal_pairs(draw: st.DrawFn) -> tuple[D, D]:
    """Two Decimals equal by value, usually with different exponents."""
    first = draw(decimals())
    second = rescaled(first, draw(st.integers(0, 30)))
    assert second == first
    return first, second


def test_the_upsert_template_keeps_the_new_exponent(backend_url: str) -> None:
    with closing(Store(backend_url)) as store:
        store.create(Price)
        store.insert(Price(D("1.5"), "old"))
        dialect = store.dialect.name
    style = "named" if dialect == "sqlite" else "pyformat"  # the drivers' own
    templates = statement_templates(Price, dialect, paramstyle=style)
    engine = sa.create_engine(backend_url)
    try:
        with engine.begin() as conn:
            conn.exec_driver_sql(
                templates.upsert or "", templates.parameters(Price(D("1.50"), "new"))
            )
    finally:
        engine.dispose()
    with closing(Store(backend_url)) as store:
        got = store.get(Price, D("1.5"))
        assert got is not None and got.label == "new"
        assert exact(got.amount) == exact(D("1.50"))


@FAST
@given(pairs=st.lists(equal_pairs(), min_size=1, max_size=4))
def test_property_upsert_of_equal_keys_replaces_the_representation(
    store: Store, pairs: list[tuple[D, D]]
) -> None:
    store.create(Price)
    store.delete(Price, where={})
    olds = {first: first for first, _ in pairs}  # one row per value
    store.insert_many([Price(v, "old") for v in olds.values()])
    news = {second: second for _, second in pairs}
    store.upsert_many([Price(v, "new") for v in news.values()])
    assert store.count(Price) == len(news)
    for value in news.values():
        got = store.get(Price, value)
        assert got is not None and got.label == "new"
        assert exact(got.amount) == exact(value)


def test_child_rows_and_references_follow_a_decimal_key_by_value(store: Store) -> None:
    store.create(Order)
    store.create(Refund)
    store.insert(Order(D("1.5"), [Line("a"), Line("b")]))
    store.insert(Refund(1, D("1.50")))  # refers to the order by value
    store.upsert(Order(D("1.500"), [Line("c")]))
    [order] = store.select(Order)
    assert exact(order.amount) == exact(D("1.500"))
    assert [line.note for line in order.lines] == ["c"]  # the old child rows went
    store.update(Order(D("1.5"), [Line("d")]))
    got = store.get(Order, D("1.50"))
    assert got is not None and exact(got.amount) == exact(D("1.5"))
    assert [line.note for line in got.lines] == ["d"]
    refund = store.get(Refund, 1)
    assert refund is not None and exact(refund.order) == exact(D("1.50"))
    assert [r.id for r in store.select(Refund, where={"order": D("1.5000")})] == [1]
    store.delete(Order, where={"amount": D("1.50")})
    assert store.count(Order) == 0 and store.count(Refund) == 0  # cascaded by value


def test_a_unique_decimal_is_unique_by_value(store: Store) -> None:
    store.create(Tag)
    store.insert(Tag(1, D("1.5")))
    with pytest.raises(WriteError):
        store.insert(Tag(2, D("1.50")))
    assert [exact(t.code) for t in store.select(Tag)] == [exact(D("1.5"))]


# -- SQLite: the column named after the field is the number other tools read ---------------

WRITTEN = [
    D("-1.5"),
    D("2.25"),
    D("-0.01"),
    D("1.50"),
    D("0.0000001"),
    D("0"),
    D("100"),
    D("-" + "9" * 35),
    D("0." + "3" * 30),
    D("12345678901234567890.1234567890"),
]


def sqlite_money(path: Path, values: list[D]) -> list[Money]:
    rows = [Money(i, v, v if i % 2 else None) for i, v in enumerate(values)]
    with closing(Store(path)) as store:
        store.create(Money)
        store.insert_many(rows)
    return rows


def test_sqlite3_and_pandas_read_the_numbers_entityworks_wrote(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    rows = sqlite_money(path, WRITTEN)
    with closing(sqlite3.connect(path)) as conn:  # no entityworks from here on
        raw = conn.execute("SELECT id, amount, note FROM money ORDER BY id").fetchall()
        declared = {name: kind for _cid, name, kind, *_ in conn.execute("PRAGMA table_info(money)")}
        frame = pd.read_sql("SELECT id, amount, note FROM money ORDER BY id", conn)
    assert declared["amount"] == declared["note"] == "TEXT"  # no REAL affinity: every digit
    assert [(i, exact(D(str(a))), None if n is None else exact(D(str(n)))) for i, a, n in raw] == [
        (m.id, exact(m.amount), exact(m.note)) for m in rows
    ]
    assert [exact(D(str(v))) for v in frame["amount"]] == [exact(m.amount) for m in rows]
    assert [None if pd.isna(v) else exact(D(str(v))) for v in frame["note"]] == [
        exact(m.note) for m in rows
    ]
    with closing(Store(path)) as store:  # and entityworks reads the exact Decimals back
        assert [(exact(m.amount), exact(m.note)) for m in store.select(Money, order_by="id")] == [
            (exact(m.amount), exact(m.note)) for m in rows
        ]


def test_sqlite_sum_over_the_column_is_the_sum(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    sqlite_money(path, [D("-1.5"), D("2.25"), D("-0.01")])
    with closing(sqlite3.connect(path)) as conn:
        [(total,)] = conn.execute("SELECT sum(amount) FROM money").fetchall()
        [(average,)] = conn.execute("SELECT avg(amount) FROM money").fetchall()
    assert total == pytest.approx(0.74, abs=1e-12)
    assert average == pytest.approx(0.74 / 3, abs=1e-12)


def test_sqlite_create_names_the_key_column_beside_the_text(tmp_path: Path) -> None:
    path = tmp_path / "p.db"
    with closing(Store(path)) as store:
        store.create(Price)
        store.insert_many([Price(D("1.50"), "a"), Price(D("-2"), "b")])
        assert not migrate.diff(store, [Price])  # what create made is what diff expects
    with closing(sqlite3.connect(path)) as conn:
        columns = [row[1] for row in conn.execute("PRAGMA table_info(price)")]
        keyed = [row[1] for row in conn.execute("PRAGMA table_info(price)") if row[5]]
        texts = conn.execute("SELECT amount FROM price ORDER BY amount__key").fetchall()
    assert set(columns) == {"amount", "amount__key", "label"} and keyed == ["amount__key"]
    assert texts == [("-2",), ("1.50",)]  # the key column sorts like the numbers
    with closing(Store(path)) as store:
        reflected = store.reflect("price")
        fields = {f.name: f for f in reflected.__dataclass_fields__.values()}
        assert list(fields) == ["amount", "label"]
        assert fields["amount"].type is D and fields["amount"].metadata["primary_key"]


def test_sqlite_text_changed_by_another_tool_is_read_or_refused(tmp_path: Path) -> None:
    """The text other tools read and the key filters compare must be one number: the same
    number written otherwise reads as the text says, another number is refused naming the
    row (see test_companion_edits.py)."""
    path = tmp_path / "m.db"
    sqlite_money(path, [D("1.5"), D("2.5"), D("3.5"), D("4.5")])
    with closing(sqlite3.connect(path)) as conn:
        conn.executemany(
            "UPDATE money SET amount = ? WHERE id = ?",
            [("1.500", 0), ("9.5", 1), ("garbage", 2), (None, 3)],
        )
        conn.commit()
    with closing(Store(path)) as store:
        got = store.get(Money, 0)
        assert got is not None and exact(got.amount) == exact(D("1.500"))
        for key in (1, 2, 3):
            with pytest.raises(StoredValueError) as caught:
                store.get(Money, key)
            assert (caught.value.key, caught.value.column) == (f"id={key}", "amount")
        assert [m.id for m in store.select(Money, where=col("amount") > 9)] == []


# -- a SQLite table written by the earlier layout (sortable key + scale) --------------------

OLD_DDL = [
    """CREATE TABLE money (
        id INTEGER NOT NULL,
        amount TEXT DEFAULT '00000000000000000000000000000000000' NOT NULL,
        amount__scale INTEGER DEFAULT 0,
        note TEXT,
        note__scale INTEGER,
        PRIMARY KEY (id)) STRICT""",
    """CREATE TABLE price (
        amount TEXT NOT NULL,
        amount__scale INTEGER,
        label ANY DEFAULT '' NOT NULL
            CONSTRAINT type_label CHECK (typeof("label") = 'text' OR "label" IS NULL),
        PRIMARY KEY (amount)) STRICT""",
]
#: Rows as the earlier layout wrote them: the sortable key, then the number of decimals.
OLD_MONEY = [
    (1, "00000000000000000000000000000000001.5", 2, "-99999999999999999999999999999999999.98~", 3),
    (2, "-99999999999999999999999999999999998.4~", 1, None, None),
    (3, "00000000000000000000000000000000002.25", 2, "00000000000000000000000000000000100", 0),
]
OLD_PRICE = [
    ("00000000000000000000000000000000001.5", 2, "a"),
    ("-99999999999999999999999999999999997~", 0, "b"),
]


def old_database(path: Path) -> None:
    with closing(sqlite3.connect(path)) as conn:
        for ddl in OLD_DDL:
            conn.execute(ddl)
        conn.executemany("INSERT INTO money VALUES (?, ?, ?, ?, ?)", OLD_MONEY)
        conn.executemany("INSERT INTO price VALUES (?, ?, ?)", OLD_PRICE)
        conn.commit()


def test_a_table_of_the_earlier_layout_reads_and_writes(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    old_database(path)
    with closing(Store(path)) as store:
        assert [(m.id, exact(m.amount), exact(m.note)) for m in store.select(Money)] == [
            (1, exact(D("1.50")), exact(D("-0.010"))),
            (2, exact(D("-1.5")), None),
            (3, exact(D("2.25")), exact(D("100"))),
        ]
        assert [exact(p.amount) for p in store.select(Price, order_by="amount")] == [
            exact(D("-2")),
            exact(D("1.50")),
        ]
        store.insert(Money(4, D("-0.5"), D("7.000")))
        store.upsert(Price(D("1.500"), "upserted"))
        store.update(Money(2, D("-1.50"), None))
        got = store.get(Price, D("1.5"))
        assert got is not None and (exact(got.amount), got.label) == (exact(D("1.500")), "upserted")
        assert [
            m.id for m in store.select(Money, where=col("amount") < D("0"), order_by="amount")
        ] == [2, 4]
        assert [m.id for m in store.select(Money, order_by="-note")] == [3, 4, 1, 2]
        assert exact(store.get(Money, 2).amount) == exact(D("-1.50"))  # type: ignore[union-attr]
        assert not migrate.diff(store, [Money, Price])  # no other layout is proposed
    with closing(sqlite3.connect(path)) as conn:  # the table kept its layout
        columns = [row[1] for row in conn.execute("PRAGMA table_info(money)")]
        four = conn.execute("SELECT amount, amount__scale FROM money WHERE id = 4").fetchone()
    assert columns == ["id", "amount", "amount__scale", "note", "note__scale"]
    assert four == ("-99999999999999999999999999999999999.4~", 1)


# -- ORDER BY and filters against a Python oracle, on every backend --------------------------

COMPARE = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}


@FAST
@given(
    values=st.lists(decimals(), min_size=1, max_size=8),
    probes=st.lists(decimals(), min_size=2, max_size=3),
)
def test_property_order_by_and_filters_match_python(
    store: Store, values: list[D], probes: list[D]
) -> None:
    store.create(Money)
    store.delete(Money, where={})
    rows = [
        Money(i, v, None if i % 3 == 0 else v.copy_negate() if v else v)
        for i, v in enumerate(values)
    ]
    store.insert_many(rows)

    def ids(where: object) -> list[int]:
        return sorted(m.id for m in store.select(Money, where=where))

    ordered = list(store.select(Money, order_by=["amount", "id"]))
    assert [(m.id, exact(m.amount)) for m in ordered] == [
        (m.id, exact(m.amount)) for m in sorted(rows, key=lambda m: (m.amount, m.id))
    ]
    backwards = list(store.select(Money, order_by=["-note", "id"]))
    by_id = sorted(rows, key=lambda m: m.id)  # descending, NULLs last, ties by id:
    assert [m.id for m in backwards] == [
        m.id
        for m in [  # (a stable sort keeps ties' order)
            *sorted((m for m in by_id if m.note is not None), key=lambda m: m.note, reverse=True),
            *(m for m in by_id if m.note is None),
        ]
    ]
    for probe in [*probes, values[0], rescaled(values[-1], 30)]:
        for op, py in COMPARE.items():
            wanted = sorted(m.id for m in rows if py(m.amount, probe))
            assert (
                ids(
                    getattr(operator, {"==": "eq", "!=": "ne"}.get(op, py.__name__))(
                        col("amount"), probe
                    )
                )
                == wanted
            ), (op, probe)
        assert ids({"amount": probe}) == sorted(m.id for m in rows if m.amount == probe)
    low, high = sorted(probes[:2])
    assert ids(col("amount").between(low, high)) == sorted(
        m.id for m in rows if low <= m.amount <= high
    )
    chosen = [probes[0], rescaled(values[0], 30)]
    assert ids(col("amount").in_(chosen)) == sorted(m.id for m in rows if m.amount in chosen)
    assert ids(col("note").not_in(chosen)) == sorted(
        m.id for m in rows if m.note is not None and m.note not in chosen
    )


@dataclass
class Cash:
    id: int = field(metadata={"primary_key": True})
    amount: D = D("0")


@pytest.mark.parametrize("kind", ["sqlite", "mariadb"])
def test_a_scale_column_added_to_a_filled_table_keeps_its_values(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """A table from before the exponent was kept (by an earlier version or another tool):
    ``schema diff --apply`` adds the companion column, whose DEFAULT (the field default's
    scale) must not become the scale of the rows already there."""
    if kind == "sqlite":
        url = f"sqlite:///{tmp_path / 'pre.db'}"
        ddl = "CREATE TABLE cash (id INTEGER NOT NULL PRIMARY KEY, amount TEXT NOT NULL) STRICT"
        stored = "00000000000000000000000000000000001.5"
    else:
        url = request.getfixturevalue("mariadb_url")
        ddl = "CREATE TABLE cash (id BIGINT NOT NULL PRIMARY KEY, amount DECIMAL(65, 30) NOT NULL)"
        stored = "1.5"
    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            conn.exec_driver_sql("DROP TABLE IF EXISTS cash")
            conn.exec_driver_sql(ddl)
            conn.execute(sa.text("INSERT INTO cash VALUES (1, :amount)"), {"amount": stored})
    finally:
        engine.dispose()
    with closing(Store(url)) as store:
        before = store.get(Cash, 1)
        assert before is not None
        migrate.apply(store, [Cash])
    with closing(Store(url)) as store:
        after = store.get(Cash, 1)
        assert after is not None and exact(after.amount) == exact(before.amount)
        store.insert(Cash(2, D("2.50")))  # and the column now keeps the exponent
        got = store.get(Cash, 2)
        assert got is not None and exact(got.amount) == exact(D("2.50"))
        store.drop(Cash)

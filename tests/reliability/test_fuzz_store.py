"""Hostile input to Store, fuzzed: values, names, filters, order_by, limit/offset.

Each call either works correctly (values round-trip exactly; query results equal a Python
evaluation of the same filter) or raises an ``EntityworksError``, with nothing written.
Every statement the driver sees carries no fuzzed value, and nothing touches the network or
the canary file.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import keyword
import math
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from entityworks import EntityworksError, Store, col
from entityworks.sql.filters import Expr
from tests.entityworks.conftest import _drop_everything
from tests.entityworks.sql.test_filters_backends import like_oracle
from tests.reliability.conftest import SEED
from tests.reliability.guards import MARK, Canary, SqlWatch, no_network

# no deadline: a loaded machine must not fail a property (a deadline only measures an
# example after it returned, so it never caught a hang either)
SETTINGS = dict(
    deadline=None,
    database=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)


@pytest.fixture(params=["sqlite", "postgresql"])
def fuzz_store(request, tmp_path) -> Iterator[Store]:
    if request.param == "sqlite":
        store = Store(tmp_path / "fuzz.db")
    else:
        url = request.getfixturevalue("pg_url")
        _drop_everything(url)
        store = Store(url)
    yield store
    store.close()
    if request.param != "sqlite":
        _drop_everything(str(store.url.render_as_string(hide_password=False)))


def examples(store: Store, sqlite: int, server: int) -> int:
    return sqlite if store.dialect.name == "sqlite" else server


# -- values ------------------------------------------------------------------------------------


@dataclass
class Fz:
    id: int
    i: int
    f: float
    s: str
    o: str | None
    b: bytes
    flag: bool
    d: decimal.Decimal
    day: dt.date
    when: dt.datetime | None
    j: dict[str, Any]
    tags: list[int]
    u: uuid.UUID


def marked(text: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return text.map(lambda t: MARK + t)


def hostile_text(nul: bool) -> st.SearchStrategy[str]:
    chars = st.characters(exclude_characters=None if nul else "\x00")
    return marked(
        st.one_of(
            st.text(chars, max_size=30),
            st.sampled_from(
                [
                    "'; DROP TABLE fz; --",
                    '" OR 1=1 --',
                    "%s %(x)s ? :p $1",
                    "\\",
                    "\u202e\u200f",
                    "a\x00b" if nul else "ab",
                    "🐉" * 5,
                ]
            ),
        )
    )


def surrogates() -> st.SearchStrategy[str]:
    return st.text(st.characters(categories=["Cs"]), min_size=1, max_size=3).map(lambda t: MARK + t)


def exact_values(nul: bool) -> dict[str, st.SearchStrategy[Any]]:
    """Values of the declared type: stored, they must come back equal."""
    int64 = st.integers(-(2**63), 2**63 - 1)
    text = hostile_text(nul)
    return {
        "i": int64,
        "f": st.floats(allow_nan=False),
        "s": text,
        "o": st.none() | text,
        "b": st.binary(max_size=40),
        "flag": st.booleans(),
        "d": st.decimals(
            allow_nan=False, allow_infinity=False, places=6, min_value=-(10**20), max_value=10**20
        ),
        "day": st.dates(),
        "when": st.none() | st.datetimes(min_value=dt.datetime(1000, 1, 1)),
        "j": st.dictionaries(
            text, st.none() | st.booleans() | st.integers(-(2**53), 2**53) | text, max_size=3
        ),
        "tags": st.lists(int64, max_size=4),
        "u": st.uuids(),
    }


#: Values of the declared type that some or every database cannot hold: refused, or exact.
RARE: dict[str, st.SearchStrategy[Any]] = {
    "i": st.sampled_from([2**63, -(2**63) - 1, 2**200]),
    "f": st.sampled_from([math.nan, math.inf, -math.inf]),
    "s": surrogates(),
    "tags": st.lists(st.sampled_from([2**64, -(2**70)]), min_size=1, max_size=2),
    "d": st.sampled_from(
        [
            decimal.Decimal("NaN"),
            decimal.Decimal("Infinity"),
            decimal.Decimal("1e400"),
            decimal.Decimal("-0"),
        ]
    ),
    "day": st.sampled_from([dt.date.min, dt.date.max]),
}


class Opaque:
    def __repr__(self) -> str:
        return "<Opaque>"


def foreign_values() -> st.SearchStrategy[Any]:
    """Values of any type at all."""
    return st.one_of(
        st.integers(-(2**80), 2**80),
        st.floats(),
        hostile_text(True),
        surrogates(),
        st.binary(max_size=8),
        st.booleans(),
        st.none(),
        st.lists(st.integers(), max_size=3),
        st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
        st.builds(Opaque),
        st.decimals(),
        st.dates(),
        st.datetimes(),
        st.complex_numbers(),
        st.builds(bytearray, st.binary(max_size=4)),
        st.tuples(st.integers()),
        st.uuids(),
        st.timedeltas(),
        st.just(float("inf")),
    )


@st.composite
def fz_rows(draw: Any, nul: bool) -> tuple[list[Fz], list[set[str]]]:
    exact = exact_values(nul)
    n = draw(st.integers(1, 4))
    rows, foreign = [], []
    for k in range(n):
        values, odd = {}, set()
        for name, strategy in exact.items():
            values[name] = draw(strategy)
            if name in RARE and draw(st.integers(0, 24)) == 0:
                values[name] = draw(RARE[name])
        if draw(st.booleans()):  # one field gets a value of another type
            name = draw(st.sampled_from(sorted(exact)))
            values[name] = draw(foreign_values())
            odd.add(name)
        rows.append(Fz(id=k + 1, **values))
        foreign.append(odd)
    return rows, foreign


def same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, decimal.Decimal) and isinstance(b, decimal.Decimal) and a.is_nan():
        return b.is_nan()
    return type(a) is type(b) and a == b


def declared(field: dataclasses.Field[Any], value: Any) -> bool:
    """``value`` has the field's declared type (what the store may ever hand back)."""
    expected = {
        "id": int,
        "i": int,
        "f": float,
        "s": str,
        "o": (str, type(None)),
        "b": bytes,
        "flag": bool,
        "d": decimal.Decimal,
        "day": dt.date,
        "when": (dt.datetime, type(None)),
        "j": dict,
        "tags": list,
        "u": uuid.UUID,
    }[field.name]
    return isinstance(value, expected)


def test_values_round_trip_or_are_refused(fuzz_store, monkeypatch, tmp_path, figures):
    store = fuzz_store
    store.create(Fz)
    watch = SqlWatch(store.engine)
    nul = store.dialect.name != "postgresql"
    counts = {"cases": 0, "stored": 0, "refused": 0}
    fields = dataclasses.fields(Fz)

    @seed(SEED)
    @settings(max_examples=examples(store, 250, 80), **SETTINGS)
    @given(fz_rows(nul))
    def check(case: tuple[list[Fz], list[set[str]]]) -> None:
        rows, foreign = case
        counts["cases"] += 1
        copies = [dataclasses.replace(r) for r in rows]
        try:
            store.insert_many(copies)
        except EntityworksError:
            counts["refused"] += 1
            assert store.count(Fz) == 0, "a refused write left rows behind"
        else:
            counts["stored"] += 1
            try:
                back = list(store.select(Fz, order_by="id"))
                assert len(back) == len(rows)
                for row, odd, got in zip(rows, foreign, back, strict=True):
                    for f in fields:
                        mine, theirs = getattr(row, f.name), getattr(got, f.name)
                        assert declared(f, theirs), (f.name, mine, theirs)
                        if f.name not in odd:
                            assert same(mine, theirs), (f.name, mine, theirs)
            finally:
                store.delete(Fz, where={})
        watch.check([v for r in rows for v in dataclasses.astuple(r)])

    canary = Canary(tmp_path)
    with no_network(monkeypatch), canary.armed():
        check()
    watch.close()
    figures[f"fuzz_store_values_{store.dialect.name}"] = {**counts, "statements": watch.count}


# -- names ---------------------------------------------------------------------------------


def identifiers() -> st.SearchStrategy[str]:
    return st.text(
        st.characters(categories=["L", "Nl", "Mn", "Nd", "Pc"]), min_size=1, max_size=20
    ).filter(lambda s: s.isidentifier() and not keyword.iskeyword(s) and not s.startswith("__"))


def table_names() -> st.SearchStrategy[str]:
    return st.one_of(
        st.text(max_size=70),
        identifiers(),
        st.sampled_from(
            [
                "select",
                "order",
                "drop table x",
                'a"b',
                "a`b",
                "a'b",
                "sqlite_master",
                "pg_class",
                "x" * 64,
                "x" * 200,
                "",
                " ",
                "a.b",
                "\x00",
                "ü" * 40,
            ]
        ),
    )


def test_hostile_names_create_a_working_table_or_are_refused(
    fuzz_store, monkeypatch, tmp_path, figures
):
    store = fuzz_store
    counts = {"cases": 0, "created": 0, "refused": 0}

    @seed(SEED)
    @settings(max_examples=examples(store, 150, 50), **SETTINGS)
    @given(
        table=table_names(),
        fields=st.lists(identifiers(), min_size=1, max_size=5),
        value=hostile_text(store.dialect.name != "postgresql"),
    )
    def check(table: str, fields: list[str], value: str) -> None:
        counts["cases"] += 1
        try:
            cls = dataclasses.make_dataclass("Hostile", [(f, str) for f in fields])
        except TypeError:
            return  # not a dataclass at all (e.g. duplicate field names): not our input
        cls.__tablename__ = table
        try:
            store.create(cls)
        except EntityworksError:
            counts["refused"] += 1
            return
        counts["created"] += 1
        try:
            row = cls(*[value] * len(fields))
            store.insert(row)
            assert list(store.select(cls, where={fields[0]: value}, order_by=fields[-1])) == [row]
            assert store.count(cls) == 1
        finally:
            store.drop(cls)

    canary = Canary(tmp_path)
    with no_network(monkeypatch), canary.armed():
        check()
    figures[f"fuzz_store_names_{store.dialect.name}"] = counts


# -- filters ---------------------------------------------------------------------------------


@dataclass
class Wt:
    id: int
    n: int | None
    s: str | None
    f: float | None


ROW_VALUES = {
    "n": [None, -5, 0, 1, 3, 7, 2**40, -(2**62)],
    "s": [None, "", "a", "b", "ab", MARK + "x", MARK + "'; --", "ü", "A", "a%", "a_b"],
    "f": [None, -1.5, 0.0, 0.25, 3.0, 1e300, -1e-300],
}


def wt_rows() -> list[Wt]:
    rows = []
    for i in range(36):
        rows.append(
            Wt(
                i,
                ROW_VALUES["n"][i % 8],
                ROW_VALUES["s"][(i * 5) % 11],
                ROW_VALUES["f"][(i * 3) % 7],
            )
        )
    return rows


COLUMNS = ["id", "n", "s", "f"]


def mostly(good: st.SearchStrategy[Any], bad: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """``good`` 19 times in 20, ``bad`` otherwise."""
    return st.integers(0, 19).flatmap(lambda k: bad if k == 0 else good)


TYPED = {
    "id": st.integers(-3, 40),
    "n": st.sampled_from(ROW_VALUES["n"]) | st.integers(-(2**63), 2**63 - 1),
    "s": st.sampled_from(ROW_VALUES["s"]) | hostile_text(False),
    "f": st.sampled_from(ROW_VALUES["f"]) | st.floats(allow_nan=False),
}


def filter_values() -> st.SearchStrategy[Any]:
    pool = [v for vs in ROW_VALUES.values() for v in vs]
    return st.one_of(
        st.sampled_from(pool),
        st.integers(-(2**70), 2**70),
        st.floats(),
        hostile_text(True),
        foreign_values(),
    )


def column_names() -> st.SearchStrategy[Any]:
    return mostly(
        st.sampled_from(COLUMNS),
        st.one_of(
            st.text(max_size=10),
            st.integers(),
            st.sampled_from(["-n", "n ", "N", "id; --", "", "s\x00"]),
        ),
    )


@st.composite
def column_and_values(draw: Any, count: int) -> tuple[Any, list[Any]]:
    """A column and values of its type (now and then a name or value of any kind)."""
    name = draw(column_names())
    typed = TYPED.get(name, filter_values())
    return name, [draw(mostly(typed, filter_values())) for _ in range(count)]


def comparisons() -> st.SearchStrategy[Any]:
    """Descriptions of leaf filters, built into filters by :func:`build` inside the test
    (building refuses bad arguments with documented errors, which the test must see)."""
    ops = st.sampled_from(["==", "!=", "<", "<=", ">", ">="])
    one = column_and_values(1)
    listed = st.integers(0, 4).flatmap(column_and_values)
    return st.one_of(
        st.tuples(st.just("cmp"), ops, one),
        st.tuples(st.just("in_"), listed),
        st.tuples(st.just("not_in"), listed),
        st.tuples(st.just("between"), column_and_values(2)),
        st.tuples(
            st.just("like"),
            st.tuples(
                mostly(st.just("s"), column_names()), st.lists(TYPED["s"], min_size=1, max_size=1)
            ),
        ),
        st.tuples(st.just("is_null"), column_names()),
        st.tuples(st.just("is_not_null"), column_names()),
        st.tuples(st.just("dict"), st.lists(one, max_size=3)),
    )


def wheres() -> st.SearchStrategy[Any]:
    tree = st.recursive(
        comparisons(),
        lambda inner: st.one_of(
            st.tuples(st.just("and"), inner, inner),
            st.tuples(st.just("or"), inner, inner),
            st.tuples(st.just("not"), inner),
            st.tuples(st.just("list"), st.lists(inner, max_size=3)),
        ),
        max_leaves=6,
    )
    raw = st.tuples(
        st.just("raw"),
        foreign_values() | st.sampled_from(["id = 1", "1=1; DROP TABLE wt", {1: 2}, {None: 1}]),
    )
    return mostly(st.none() | tree, raw)


_CMP = {
    "==": lambda c, v: c == v,
    "!=": lambda c, v: c != v,
    "<": lambda c, v: c < v,
    "<=": lambda c, v: c <= v,
    ">": lambda c, v: c > v,
    ">=": lambda c, v: c >= v,
}


def build(desc: Any) -> Any:
    """The filter a description stands for (raises what the filter API raises)."""
    if desc is None:
        return None
    kind, *args = desc
    if kind == "raw":
        return args[0]
    if kind == "dict":
        return {name: values[0] for name, values in args[0]}
    if kind == "cmp":
        name, (value,) = args[1]
        return _CMP[args[0]](col(name), value)
    if kind in ("in_", "not_in"):
        name, values = args[0]
        return getattr(col(name), kind)(values)
    if kind == "like":
        name, (value,) = args[0]
        return col(name).like(value)
    if kind in ("is_null", "is_not_null"):
        return getattr(col(args[0]), kind)()
    if kind == "between":
        name, (low, high) = args[0]
        return col(name).between(low, high)
    if kind in ("and", "or"):
        a, b = build(args[0]), build(args[1])
        if not isinstance(a, Expr) and not isinstance(b, Expr):
            return [a, b] if kind == "and" else a  # Python has no & / | for two dicts
        return a & b if kind == "and" else a | b
    if kind == "not":
        inner = build(args[0])
        return ~inner if isinstance(inner, Expr) else inner
    assert kind == "list"
    return [build(a) for a in args[0]]


CODE_POINT_ORDER = [True]  # SQLite compares text by code point; servers by collation


class FilterUnsupported(Exception):
    """The Python oracle does not model this filter (it must then be refused or run)."""


def evaluate(where: Any, row: Wt) -> bool | None:
    """SQL three-valued logic in Python for the filters the oracle models."""
    from entityworks.sql.filters import Comparison, _Bool, _Equal

    if isinstance(where, dict):
        where = _Equal(tuple(where.items()))
    if isinstance(where, list | tuple):
        parts = [evaluate(w, row) for w in where]
        return _and(parts)
    if isinstance(where, _Equal):
        return _and([evaluate(Comparison(k, "==", v), row) for k, v in where.mapping])
    if isinstance(where, _Bool):
        parts = [evaluate(p, row) for p in where.parts]
        if where.kind == "not":
            return None if parts[0] is None else not parts[0]
        return _and(parts) if where.kind == "and" else _or(parts)
    assert isinstance(where, Comparison)
    value = getattr(row, where.column)
    op, target = where.op, where.value
    if op == "is_null":
        return value is None
    if op == "is_not_null":
        return value is not None
    if op == "like":
        return None if value is None else like_oracle(target, value)
    if op in ("in", "not_in"):  # None in the list: NULL, as == None (see col.in_)
        if op == "in":
            hits = [value is None if t is None else _compare("==", value, t) for t in target]
            return _or(hits) if hits else False
        hits = [_compare("==", value, t) for t in target if t is not None]
        result = _or(hits) if hits else False
        kept = None if result is None else (not result if hits else True)
        return _and([kept, value is not None]) if None in target else kept
    if op == "between":
        return _and([_compare(">=", value, target[0]), _compare("<=", value, target[1])])
    if target is None:
        return value is None if op == "==" else value is not None
    return _compare(op, value, target)


def _compare(op: str, a: Any, b: Any) -> bool | None:
    if a is None or b is None:
        return None
    if isinstance(a, float) and math.isnan(a) or isinstance(b, float) and math.isnan(b):
        raise FilterUnsupported  # databases differ on NaN
    if op not in ("==", "!=") and isinstance(a, str) and not CODE_POINT_ORDER[0]:
        raise FilterUnsupported  # the server's collation orders text
    return {"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]


def _and(parts: list[bool | None]) -> bool | None:
    if any(p is False for p in parts):
        return False
    return None if any(p is None for p in parts) else True


def _or(parts: list[bool | None]) -> bool | None:
    if any(p is True for p in parts):
        return True
    return None if any(p is None for p in parts) else False


def test_filters_order_limit_offset_match_python_or_are_refused(
    fuzz_store, monkeypatch, tmp_path, figures
):
    store = fuzz_store
    store.create(Wt)
    rows = wt_rows()
    store.insert_many(rows)
    CODE_POINT_ORDER[0] = store.dialect.name == "sqlite"
    watch = SqlWatch(store.engine)
    counts = {"cases": 0, "answered": 0, "checked_against_python": 0, "refused": 0}
    limits = mostly(
        st.none() | st.integers(0, 50),
        st.integers(-3, -1) | st.sampled_from([2**63, 2**70, 1.0, True, "1"]),
    )
    signed = column_names().map(
        lambda c: c if not isinstance(c, str) or c.startswith("-") else c
    ) | st.sampled_from(COLUMNS).map(lambda c: "-" + c)
    orders = mostly(st.none() | signed | st.lists(signed, max_size=3), foreign_values())

    @seed(SEED)
    @settings(max_examples=examples(store, 400, 120), **SETTINGS)
    @given(where=wheres(), order_by=orders, limit=limits, offset=limits)
    def check(where: Any, order_by: Any, limit: Any, offset: Any) -> None:
        counts["cases"] += 1
        try:
            where = build(where)
            got = list(store.select(Wt, where=where, order_by=order_by, limit=limit, offset=offset))
            total = store.count(Wt, where=where)
        except EntityworksError as exc:
            counts["refused"] += 1
            why = type(exc).__name__
            counts[why] = counts.get(why, 0) + 1
            watch.statements.clear()
            return
        counts["answered"] += 1
        assert len(set(r.id for r in got)) == len(got)
        try:
            expected = (
                [r for r in rows if evaluate(where, r) is True] if where is not None else rows
            )
        except (FilterUnsupported, TypeError):
            expected = None
        if expected is not None:
            counts["checked_against_python"] += 1
            assert total == len(expected)
            start = offset or 0
            size = max(0, min(len(expected) - start, len(expected) if limit is None else limit))
            assert len(got) == size
            if limit is None and not offset:
                assert sorted(r.id for r in got) == sorted(r.id for r in expected)
            else:
                assert {r.id for r in got} <= {r.id for r in expected}
        watch.check(_leaves(where))

    canary = Canary(tmp_path)
    with no_network(monkeypatch), canary.armed():
        check()
    watch.close()
    figures[f"fuzz_store_filters_{store.dialect.name}"] = counts


def _leaves(where: Any) -> list[Any]:
    from entityworks.sql.filters import Comparison, _Bool, _Equal

    if isinstance(where, dict):
        return [*where.keys(), *where.values()]
    if isinstance(where, list | tuple):
        return [v for w in where for v in _leaves(w)]
    if isinstance(where, _Equal):
        return [v for kv in where.mapping for v in kv]
    if isinstance(where, _Bool):
        return [v for p in where.parts for v in _leaves(p)]
    if isinstance(where, Comparison):
        value = where.value
        return [where.column, *(value if isinstance(value, tuple) else [value])]
    return [where]


def test_statements_are_sqlalchemy_built(tmp_path):
    """The guard itself works: a value pasted into SQL text is caught."""
    store = Store(tmp_path / "g.db")
    watch = SqlWatch(store.engine)
    with store.engine.connect() as conn:
        conn.execute(sa.text(f"SELECT '{MARK}pasted'"))
    with pytest.raises(AssertionError):
        watch.check([MARK + "pasted"])
    store.close()

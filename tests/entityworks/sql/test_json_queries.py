"""JSON fields: the database's own JSON type for new tables (PostgreSQL ``jsonb``, MariaDB
``JSON``, SQLite JSON text), values back exactly or refused, and filters into them
(``col("meta")["size"] >= 3``, ``contains``) selecting on every backend the rows a
Python-side evaluation of the same predicate over the stored objects selects.
"""

from __future__ import annotations

import json
import math
import operator
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from entityworks import EntityworksError, FilterError, Store, col, table
from tests.entityworks.strategies import same


@dataclass
class Inner:
    x: int
    name: str
    f: float


@table("jq_doc")
@dataclass
class Doc:
    id: int
    meta: dict[str, Any]
    tags: list[str]
    counts: dict[int, str]
    pair: tuple[int, ...]
    inner: Inner | None


def _dialect(store: Store) -> str:
    name = store.engine.dialect.name
    return "mariadb" if name == "mysql" else name


# -- storage -------------------------------------------------------------------------------


def test_json_columns_have_the_database_s_json_type(store: Store) -> None:
    store.create(Doc)
    store.insert(Doc(1, {"a": 1}, ["x"], {1: "a"}, (1,), Inner(1, "n", 0.5)))
    with store.engine.connect() as conn:
        if _dialect(store) == "postgresql":
            found = conn.execute(
                sa.text('SELECT pg_typeof(meta)::text, pg_typeof("inner")::text FROM jq_doc')
            )
            assert found.one() == ("jsonb", "jsonb")
        elif _dialect(store) == "mariadb":
            # MariaDB's JSON is LONGTEXT with a CHECK (json_valid(...))
            checks = conn.execute(
                sa.text(
                    "SELECT check_clause FROM information_schema.check_constraints "
                    "WHERE table_name = 'jq_doc' AND constraint_schema = DATABASE()"
                )
            ).scalars()
            assert {c.lower() for c in checks} >= {
                f"json_valid(`{n}`)" for n in ("meta", "tags", "counts", "pair", "inner")
            }
        else:
            assert conn.execute(
                sa.text("SELECT json_valid(meta), typeof(meta) FROM jq_doc")
            ).one() == (
                1,
                "text",
            )


def test_sqlite_shell_sees_json_text(tmp_path: Path) -> None:
    """What Datasette and the sqlite3 shell read: JSON text their JSON functions take."""
    path = tmp_path / "j.db"
    with Store(path) as store:
        store.create(Doc)
        store.insert(Doc(1, {"b": 1, "a": [2]}, ["x"], {}, (), None))
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT meta, json_extract(meta, '$.a[0]') FROM jq_doc").fetchone() == (
            '{"b":1,"a":[2]}',
            2,
        )


json_scalar = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=4),
)
json_value = st.recursive(
    json_scalar,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=8,
)


def _storable(dialect: str, value: Any) -> bool:
    """NUL in text and -0.0 only where PostgreSQL's jsonb cannot hold them (it has no NUL
    in text and turns -0.0 into 0.0)."""
    if dialect != "postgresql":
        return True
    if isinstance(value, str):
        return "\x00" not in value
    if isinstance(value, float):
        return not (value == 0.0 and math.copysign(1.0, value) < 0)
    if isinstance(value, dict):
        return all(_storable(dialect, k) and _storable(dialect, v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return all(_storable(dialect, v) for v in value)
    return True


def _ordered(dialect: str, *values: Any) -> list[Any]:
    """``values`` with every dict's keys in one order on PostgreSQL, whose jsonb keeps a
    dict (equal) but not the order of its keys; as they are elsewhere."""

    def order(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: order(value[k]) for k in sorted(value, key=repr)}
        if isinstance(value, list):
            return [order(v) for v in value]
        return value

    return [order(v) if dialect == "postgresql" else v for v in values]


SETTINGS: dict[str, Any] = dict(
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def test_json_values_come_back_exactly(store: Store) -> None:
    """Big ints, 0.1, -0.0, key order, int keys, tuples, nested dataclasses, unicode."""
    store.create(Doc)
    dialect = _dialect(store)

    @settings(max_examples=40 if dialect == "sqlite" else 20, **SETTINGS)
    @given(
        meta=st.dictionaries(st.text(max_size=3), json_value, max_size=4),
        counts=st.dictionaries(
            st.integers(-(2**63), 2**63 - 1),
            st.text(
                st.characters(exclude_characters="\x00", exclude_categories=("Cs",)), max_size=3
            ),
            max_size=3,
        ),
        f=st.floats(allow_nan=False, allow_infinity=False),
    )
    def check(meta: dict[str, Any], counts: dict[int, str], f: float) -> None:
        store.delete(Doc, where={})
        doc = Doc(1, meta, ["é☃😀", ""], counts, (2**63 - 1, -1), Inner(-(2**63), "ü", f))
        if not _storable(dialect, meta):
            with pytest.raises(EntityworksError, match="meta"):
                store.insert(doc)
            assert store.count(Doc) == 0
            return
        store.insert(doc)
        (back,) = store.select(Doc)
        for name in ("meta", "tags", "counts", "pair", "inner"):
            assert same(*_ordered(dialect, getattr(doc, name), getattr(back, name))), name

    check()
    fixed = {"z": 1, "a": [0.1, -0.0, 1e16, 1.5e300, 5e-324, 2**80, True, None, "\u2603"]}
    if dialect == "postgresql":  # jsonb: no -0.0
        fixed["a"].remove(-0.0)
    numbers = [1e16, -1e22, 1.5e20, 1.7976931348623157e308, 1.5e-7, 2.0**-1074, 10**40]
    store.delete(Doc, where={})
    store.insert(Doc(2, fixed, [], {10: "a", 2: "b"}, (), None))
    store.insert_many([Doc(3, {"n": numbers}, [], {}, (), Inner(0, "", 1e300))])
    back = store.get(Doc, 2)
    assert same(*_ordered(dialect, fixed, back.meta))
    assert same(store.get(Doc, 3).meta, {"n": numbers})
    assert same(store.get(Doc, 3).inner, Inner(0, "", 1e300))
    # a dict's keys in the order they were written, except in jsonb (the same dict)
    order = (["a", "z"], [2, 10]) if dialect == "postgresql" else (["z", "a"], [10, 2])
    assert (list(back.meta), list(back.counts)) == order


@pytest.mark.parametrize(
    "meta",
    [{"n": math.nan}, {"n": [math.inf]}, {"s": "a\x00b"}],
    ids=["nan", "inf", "nul"],
)
def test_what_a_json_type_cannot_hold_is_refused(store: Store, meta: dict[str, Any]) -> None:
    store.create(Doc)
    store.insert(Doc(1, {"ok": 1}, [], {}, (), None))
    dialect = _dialect(store)
    refused = dialect in ("postgresql", "mariadb") and not (dialect == "mariadb" and "s" in meta)
    rows = [Doc(2, {"fine": 2}, [], {}, (), None), Doc(3, meta, [], {}, (), None)]
    if not refused:  # SQLite's JSON text keeps NaN and NUL as the JSON module writes them
        store.insert_many(rows)
        assert same(meta, store.get(Doc, 3).meta)
        return
    with pytest.raises(EntityworksError) as caught:
        store.insert_many(rows)
    message = str(caught.value)
    assert "row 1" in message and "'meta'" in message
    assert store.count(Doc) == 1  # nothing of the batch was written


# -- filters into JSON ---------------------------------------------------------------------

MISSING = object()
OPS = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "text"
    return type(value).__name__


def _at(doc: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        if isinstance(step, str) and isinstance(doc, dict) and step in doc:
            doc = doc[step]
        elif isinstance(step, int) and isinstance(doc, list) and step < len(doc):
            doc = doc[step]
        else:
            return MISSING
    return doc


def _compares(doc: Any, path: tuple[Any, ...], op: str, value: Any) -> bool | None:
    """The documented rule: a value of the compared value's kind, compared so; anything
    else (missing, null, another kind) is unknown (None), as SQL's NULL: neither the
    filter nor its negation keeps the row."""
    found = _at(doc, path)
    if found is MISSING or _kind(found) != _kind(value):
        return None
    return bool(OPS[op](found, value))


def _contains(found: Any, candidate: Any) -> bool | None:
    """PostgreSQL's ``@>`` for the candidates ``contains`` takes; None where the path
    leads nowhere."""
    if found is MISSING:
        return None
    if isinstance(candidate, dict):
        return isinstance(found, dict) and all(
            k in found and _contains(found[k], v) for k, v in candidate.items()
        )
    if isinstance(candidate, list):
        return isinstance(found, list) and all(
            any(_kind(e) == _kind(c) and e == c for e in found) for c in candidate
        )
    return _kind(found) == _kind(candidate) and found == candidate


KEYS = ["a", "b", "size"]
# numbers within 2**52: MariaDB compares them as doubles, PostgreSQL as decimals
small_int = st.integers(-(2**52), 2**52) | st.integers(-3, 3)
small_float = st.floats(-(2.0**52), 2.0**52, allow_nan=False) | st.sampled_from(
    [0.5, -0.0, 1.0, 2.5, 0.1]
)
text = st.text(st.sampled_from('aAbé☃😀 "\\'), max_size=3)
scalar = st.one_of(st.booleans(), small_int, small_float, text)
leaf = st.none() | scalar
doc_value = st.recursive(
    leaf,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=3)
    ),
    max_leaves=6,
)
docs = st.lists(
    st.dictionaries(st.sampled_from(KEYS), doc_value, max_size=3), min_size=1, max_size=6
)
paths = st.lists(st.sampled_from(KEYS) | st.integers(0, 2), min_size=1, max_size=3).map(tuple)


@st.composite
def comparisons(draw: st.DrawFn) -> tuple[tuple[Any, ...], str, Any]:
    value = draw(scalar)
    ops = ["==", "!="] if isinstance(value, bool) else list(OPS)
    return draw(paths), draw(st.sampled_from(ops)), value


candidates = st.recursive(
    st.lists(scalar, max_size=2),
    lambda inner: st.dictionaries(st.sampled_from(KEYS), inner | scalar, max_size=2),
    max_leaves=4,
)


@table("jq_item")
@dataclass
class Item:
    id: int
    meta: dict[str, Any]


def _no_negative_zero(value: Any) -> Any:
    if isinstance(value, float) and value == 0.0:
        return 0.0
    if isinstance(value, dict):
        return {k: _no_negative_zero(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_no_negative_zero(v) for v in value]
    return value


def test_filters_into_json_agree_with_python(store: Store) -> None:
    store.create(Item)
    dialect = _dialect(store)

    @settings(max_examples=50 if dialect == "sqlite" else 20, **SETTINGS)
    @given(
        metas=docs,
        compared=st.lists(comparisons(), min_size=1, max_size=4),
        contained=st.lists(
            st.tuples(st.lists(st.sampled_from(KEYS), max_size=1).map(tuple), candidates),
            max_size=3,
        ),
    )
    def check(
        metas: list[dict[str, Any]],
        compared: list[tuple[tuple[Any, ...], str, Any]],
        contained: list[tuple[tuple[str, ...], Any]],
    ) -> None:
        store.delete(Item, where={})
        if dialect == "postgresql":  # jsonb refuses -0.0 (test_json_values_come_back_exactly)
            metas = [_no_negative_zero(m) for m in metas]
        items = [Item(i, m) for i, m in enumerate(metas)]
        store.insert_many(items)
        for path, op, value in compared:
            target: Any = col("meta")
            for step in path:
                target = target[step]
            where = OPS[op](target, value)
            got = sorted(i.id for i in store.select(Item, where=where))
            want = [i.id for i in items if _compares(i.meta, path, op, value) is True]
            assert got == want, (path, op, value)
        for path, candidate in contained:
            target = col("meta")
            for step in path:
                target = target[step]
            got = sorted(i.id for i in store.select(Item, where=target.contains(candidate)))
            want = [i.id for i in items if _contains(_at(i.meta, path), candidate) is True]
            assert got == want, (path, candidate)
            not_in = col("meta")
            for step in path:
                not_in = not_in[step]
            got = sorted(i.id for i in store.select(Item, where=~not_in.contains(candidate)))
            want = [i.id for i in items if _contains(_at(i.meta, path), candidate) is False]
            assert got == want, ("not", path, candidate)
        # combined with the other filters, and negated
        (path, op, value) = compared[0]
        target = col("meta")
        for step in path:
            target = target[step]
        got = sorted(
            i.id for i in store.select(Item, where=~OPS[op](target, value) & (col("id") >= 1))
        )
        want = [i.id for i in items if _compares(i.meta, path, op, value) is False and i.id >= 1]
        assert got == want

    check()


def test_the_examples_of_the_brief(store: Store) -> None:
    store.create(Doc)
    store.insert_many(
        [
            Doc(1, {"size": 5, "name": "x", "a": {"b": 1}}, ["x", "y"], {}, (), Inner(3, "p", 1.5)),
            Doc(2, {"size": "7", "name": "y", "k": 1.0}, ["y"], {}, (), None),
            Doc(3, {"size": 2, "k": 1, "a": {"b": [1]}}, [], {}, (), Inner(1, "q", 0.0)),
        ]
    )

    def ids(where: Any) -> list[int]:
        return sorted(d.id for d in store.select(Doc, where=where))

    assert ids(col("meta")["size"] >= 3) == [1]  # "7" is text: no number
    assert ids(col("meta")["name"] == "x") == [1]
    assert ids(col("meta")["a"]["b"] == 1) == [1]
    assert ids(col("tags")[0] == "x") == [1]
    assert ids(col("meta").contains({"k": 1})) == [2, 3]  # 1 == 1.0
    assert ids(col("tags").contains(["x"])) == [1]
    assert ids(col("inner")["x"] > 1) == [1]  # a nested dataclass
    assert ids(col("meta")["missing"] != 1) == []  # missing: no match, even for !=
    assert ids(~(col("meta")["missing"] == 1)) == []  # nor for its negation (NULL)
    assert ids(~(col("meta")["size"] == 5)) == [3]  # "7" is text: unknown
    assert store.count(Doc, where=col("meta")["size"] < 3) == 1
    # an index into a value that is no array leads nowhere (MariaDB would read "x" as ["x"])
    assert ids(col("meta")["name"][0] == "x") == []
    assert ids(col("meta")["size"][0] == 5) == []
    assert ids(col("meta")["a"][0].contains({"b": 1})) == []


@pytest.mark.parametrize(
    "make",
    [
        lambda: col("id")["a"] == 1,  # no JSON column
        lambda: col("meta")["a"] < True,  # booleans: == and != only
        lambda: col("meta")["a"] == None,  # noqa: E711
        lambda: col("meta")["a"] == [1],
        lambda: col("meta")['a"b'] == 1,
        lambda: col("meta")[-1] == 1,
        lambda: col("meta")["a"] == math.nan,
        lambda: col("meta").contains("x"),
        lambda: col("meta").contains([[1]]),
    ],
)
def test_filters_into_json_refuse_what_they_cannot_compare(sqlite_store: Store, make: Any) -> None:
    sqlite_store.create(Doc)
    with pytest.raises(FilterError):
        list(sqlite_store.select(Doc, where=make()))


# -- tables whose JSON is text (made before) and their migration ------------------------------


@pytest.mark.parametrize("backend", ["postgresql", "mariadb"])
def test_an_older_text_column_keeps_working_and_migrates(
    backend: str, request: pytest.FixtureRequest
) -> None:
    from alembic.migration import MigrationContext
    from alembic.operations import Operations

    url = request.getfixturevalue("pg_url" if backend == "postgresql" else "mariadb_url")
    engine = sa.create_engine(url)
    text_type = sa.Text() if backend == "postgresql" else sa.dialects.mysql.LONGTEXT()
    try:
        with engine.begin() as conn:
            conn.execute(sa.text("DROP TABLE IF EXISTS jq_item"))
        old = sa.Table(
            "jq_item",
            sa.MetaData(),
            sa.Column("id", sa.BigInteger, primary_key=True, autoincrement=False),
            sa.Column("meta", text_type, nullable=False),
        )
        old.create(engine)
        with engine.begin() as conn:  # a row an older entityworks wrote: compact JSON text
            conn.execute(old.insert(), [{"id": 1, "meta": '{"b":1,"a":-0.0,"size":5}'}])
        with Store(url) as store:
            store.create(Item)  # binds to the existing table, its column as text
            store.insert(Item(2, {"z": 1e16, "size": 2}))
            assert same(store.get(Item, 1).meta, {"b": 1, "a": -0.0, "size": 5})
            assert same(store.get(Item, 2).meta, {"z": 1e16, "size": 2})
            assert [i.id for i in store.select(Item, where=col("meta")["size"] >= 3)] == [1]
            assert [i.id for i in store.select(Item, where=col("meta").contains({"z": 1e16}))] == [
                2
            ]
        # the migration: the how-to's Alembic operation
        with engine.begin() as conn:
            op = Operations(MigrationContext.configure(conn))
            op.alter_column(
                "jq_item",
                "meta",
                type_=sa.JSON(),
                existing_type=text_type,
                existing_nullable=False,
                postgresql_using="meta::json",
            )
        with engine.connect() as conn:
            if backend == "postgresql":
                found = conn.execute(sa.text("SELECT DISTINCT pg_typeof(meta)::text FROM jq_item"))
                assert found.scalars().all() == ["json"]
            else:
                made = conn.execute(sa.text("SHOW CREATE TABLE jq_item")).one()[1].lower()
                assert "json_valid(`meta`)" in made
        with Store(url) as store:
            store.create(Item)
            store.insert(Item(3, {"size": 9.5}))
            assert same(store.get(Item, 1).meta, {"b": 1, "a": -0.0, "size": 5})
            assert sorted(i.id for i in store.select(Item, where=col("meta")["size"] >= 3)) == [
                1,
                3,
            ]
    finally:
        with engine.begin() as conn:
            conn.execute(sa.text("DROP TABLE IF EXISTS jq_item"))
        engine.dispose()


@table("jq_doc")
@dataclass
class DocText:
    """Doc's table read as text: what a class built from an XSD, or written for the table
    by hand, has for its JSON columns."""

    id: int
    meta: str
    tags: str
    counts: str
    pair: str
    inner: str | None


def test_a_str_field_on_a_json_column_writes_json_or_is_refused(store: Store) -> None:
    """A str field mapped onto an existing JSON column binds its text as the column's JSON
    (PostgreSQL casts no text to json by itself): inserts, updates and upserts through it
    read back through the JSON class, and text that is no JSON is refused naming the
    column, with nothing written."""
    from entityworks import WriteError

    store.drop(Doc)
    store.create(Doc)
    store.insert(Doc(1, {"a": 1}, ["x"], {1: "a"}, (1,), Inner(1, "n", 0.5)))
    as_text = next(iter(store.select(DocText, where={"id": 1})))
    assert as_text.tags == '["x"]' and as_text.inner is not None
    store.update(DocText(1, '{"a": 2}', '["y", "z"]', '{"1": "b"}', "[2, 3]", None))
    store.upsert(DocText(2, "{}", "[]", "{}", "[]", as_text.inner))
    with store.transaction():
        store.update(DocText, values={"tags": '["w"]'}, where={"id": 2})
    assert store.get(Doc, 1) == Doc(1, {"a": 2}, ["y", "z"], {1: "b"}, (2, 3), None)
    assert store.get(Doc, 2) == Doc(2, {}, ["w"], {}, (), Inner(1, "n", 0.5))
    if _dialect(store) != "sqlite":  # SQLite keeps JSON as text, which any text is
        with pytest.raises(WriteError) as refused:
            store.insert_many(
                [DocText(3, "{}", "[]", "{}", "[]", None), DocText(4, "{", "[]", "{}", "[]", None)]
            )
        assert refused.value.column == "meta"
        assert store.count(Doc) == 2


@table("jq_spaced")
@dataclass
class Spaced:
    id: int
    meta: dict[str, str]


def test_text_read_out_of_json_compares_exactly(store: Store) -> None:
    """Trailing spaces and case count inside JSON as in Python, whatever the JSON column's
    collation (MariaDB creates its JSON columns utf8mb4_bin, which pads)."""
    store.drop(Spaced)
    store.create(Spaced)
    names = ["x ", "x", "X", "x\t", "\u00e9", "e\u0301"]
    rows = [Spaced(i, {"n": n}) for i, n in enumerate(names)]
    store.insert_many(rows)
    for op in (operator.eq, operator.lt, operator.ge):
        for probe in ("x", "x ", "X"):
            got = sorted(r.id for r in store.select(Spaced, where=op(col("meta")["n"], probe)))
            assert got == [r.id for r in rows if op(r.meta["n"], probe)], (op, probe)


def test_another_tool_s_json_columns_reflect_as_json_text(store: Store) -> None:
    """A table made by plain SQL with the database's JSON types (PostgreSQL json and jsonb,
    MariaDB JSON) reflects with str fields holding the JSON text, which writes back as
    JSON; text that is no JSON is refused naming its column."""
    from entityworks import WriteError

    dialect = _dialect(store)
    kinds = {"postgresql": ("json", "jsonb"), "mariadb": ("JSON", "JSON")}.get(
        dialect, ("TEXT", "TEXT")
    )
    with store.engine.begin() as conn:
        conn.exec_driver_sql("DROP TABLE IF EXISTS jq_theirs")
        conn.exec_driver_sql(
            f"CREATE TABLE jq_theirs (id INTEGER PRIMARY KEY, a {kinds[0]}, b {kinds[1]})"
        )
        conn.exec_driver_sql("""INSERT INTO jq_theirs VALUES (1, '{"k": [1, 2]}', '["x"]')""")
    theirs = store.reflect("jq_theirs")
    [row] = store.select(theirs)
    assert isinstance(row.a, str) and isinstance(row.b, str)
    assert json.loads(row.a) == {"k": [1, 2]} and json.loads(row.b) == ["x"]
    store.update(theirs(1, '{"k": []}', '{"y": null}'))
    store.insert(theirs(2, "[]", "3"))
    got = {r.id: (json.loads(r.a), json.loads(r.b)) for r in store.select(theirs)}
    assert got == {1: ({"k": []}, {"y": None}), 2: ([], 3)}
    if dialect != "sqlite":
        with pytest.raises(WriteError) as refused:
            store.insert(theirs(3, "[]", "{nope"))
        assert refused.value.column == "b"
        assert store.count(theirs) == 2
    with store.engine.begin() as conn:
        conn.exec_driver_sql("DROP TABLE jq_theirs")

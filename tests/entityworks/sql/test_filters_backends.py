"""Filters select the same rows on SQLite, PostgreSQL and MariaDB, or are refused first.

LIKE patterns are checked against an oracle that translates the documented rule (``%``, ``_``,
a backslash escaping ``%``, ``_`` and itself) into a regular expression; child lists and
columns stored encoded (JSON text, packed bytes) compare with ``None`` only.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from entityworks import FilterError, Store, col, column, table
from entityworks.catalog.packing import PackedGrid, PointPath
from entityworks.sql._like import like_matches


@table("fb_text")
@dataclass
class Text:
    id: int
    s: str | None


#: Text that LIKE's specials, case, accents, surrogate pairs, spaces and NUL can tell apart.
VALUES = [
    "",
    "a",
    "A",
    "ab",
    "aB",
    "Ab",
    "abc",
    "a%b",
    "a_b",
    "a\\b",
    "a\\",
    "\\",
    "\\\\",
    "%",
    "_",
    "%%",
    "100%",
    "x_y",
    " ",
    "a ",
    " a",
    "é",
    "e",
    "É",
    "ß",
    "ss",
    "😀",
    "😀x",
    "a\nb",
    "\n",
    "a\x00b",
    "\x00",
    "%\x00",
    "a\x00",
]

#: Valid patterns (Python source: "\\" is one backslash).
PATTERNS = [
    "",
    "%",
    "_",
    "__",
    "a",
    "A",
    "a%",
    "A%",
    "%b",
    "%B",
    "a_b",
    "a%b",
    "_b",
    "%%",
    "a\\%b",
    "a\\_b",
    "a\\\\b",
    "a\\\\",
    "\\\\",
    "\\\\%",
    "%\\\\",
    "%\\\\%",
    "\\%",
    "\\_",
    "%\\%",
    "%\\%%",
    "%\\_%",
    "100\\%",
    "é",
    "_",
    "e%",
    "É%",
    "ß",
    "😀_",
    "😀%",
    "_x",
    "a%\\\\%",
    "%\n%",
    "a_",
    "a __",
    "% ",
    " %",
    "a%%b%",
    "%a%a%",
]

#: Patterns outside the rule: a backslash escaping anything else, a trailing one, NUL.
INVALID = [
    "\\",
    "%\\",
    "a\\",
    "a\\b",
    "\\a",
    "%\\n",
    "\\\\\\",
    "a\x00",
    "\x00",
    "\\\x00",
    "100\\ %",
]


def like_oracle(pattern: str, text: str) -> bool:
    """The documented LIKE rule, through ``re`` (independent of the library's matcher)."""
    parts = []
    chars = iter(pattern)
    for char in chars:
        if char == "\\":
            parts.append(re.escape(next(chars)))
        elif char == "%":
            parts.append(".*")
        elif char == "_":
            parts.append(".")
        else:
            parts.append(re.escape(char))
    return re.fullmatch("".join(parts), text, re.DOTALL) is not None


def storable(store: Store, values: list[str]) -> list[str]:
    """The values the backend holds: PostgreSQL text cannot hold NUL."""
    if store.dialect.name == "postgresql":
        return [v for v in values if "\x00" not in v]
    return values


def text_rows(store: Store) -> list[Text]:
    return [Text(i, v) for i, v in enumerate([*storable(store, VALUES), None])]


def ids(rows: Any) -> list[int]:
    return sorted(r.id for r in rows)


def every_use(store: Store, cls: type, values: dict[str, Any]) -> list[Callable[[Any], Any]]:
    """select, count, delete and update, each given a filter."""
    return [
        lambda w: list(store.select(cls, where=w)),
        lambda w: store.count(cls, where=w),
        lambda w: store.delete(cls, where=w),
        lambda w: store.update(cls, values=values, where=w),
    ]


class Statements:
    """Every statement the store's engine sends, from here on."""

    def __init__(self, store: Store) -> None:
        self.engine = store.engine
        self.seen: list[str] = []
        sa.event.listen(self.engine, "before_cursor_execute", self._seen)

    def _seen(self, _conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        self.seen.append(statement)

    def close(self) -> None:
        sa.event.remove(self.engine, "before_cursor_execute", self._seen)


@pytest.fixture
def texts(store: Store) -> Iterator[tuple[Store, list[Text]]]:
    store.create(Text)
    rows = text_rows(store)
    store.insert_many(rows)
    yield store, rows


def test_like_selects_what_the_rule_selects(texts: tuple[Store, list[Text]]) -> None:
    store, rows = texts
    for pattern in PATTERNS:
        expected = [r.id for r in rows if r.s is not None and like_oracle(pattern, r.s)]
        not_expected = [r.id for r in rows if r.s is not None and not like_oracle(pattern, r.s)]
        where = col("s").like(pattern)
        assert ids(store.select(Text, where=where)) == expected, pattern
        assert store.count(Text, where=where) == len(expected), pattern
        # NOT keeps SQL's three-valued logic: NULL text is in neither answer
        assert ids(store.select(Text, where=~where)) == not_expected, pattern
        assert ids(store.select(Text, where=where | {"s": None})) == sorted(
            [*expected, rows[-1].id]
        ), pattern


def test_like_deletes_what_the_rule_selects(texts: tuple[Store, list[Text]]) -> None:
    store, rows = texts
    for pattern in ["%\\\\", "a\\%b", "a_b", "%\\_%", "\\\\%", "a%", "_", "%_", "é%"]:
        gone = {r.id for r in rows if r.s is not None and like_oracle(pattern, r.s)}
        assert store.delete(Text, where=col("s").like(pattern)) == len(gone), pattern
        assert ids(store.select(Text)) == sorted({r.id for r in rows} - gone), pattern
        store.delete(Text, where={})
        store.insert_many(rows)


def test_like_matches_text_holding_nul(texts: tuple[Store, list[Text]]) -> None:
    """SQLite's own LIKE stops at a NUL ("a" would match "a\\x00b", "a_b" would not)."""
    store, rows = texts
    if store.dialect.name == "postgresql":
        pytest.skip("PostgreSQL text cannot hold NUL")
    by_value = {r.s: r.id for r in rows}
    assert ids(store.select(Text, where=col("s").like("a"))) == [by_value["a"]]
    assert ids(store.select(Text, where=col("s").like("a_b"))) == sorted(
        by_value[v] for v in ("a%b", "a_b", "a\\b", "a\nb", "a\x00b")
    )
    assert ids(store.select(Text, where=col("s").like("_"))) == sorted(
        by_value[v] for v in VALUES if len(v) == 1
    )
    two = [v for v in VALUES if len(v) == 2 and v[0] == "a"]
    assert "a\x00" in two
    assert store.delete(Text, where=col("s").like("a_")) == len(two)
    assert not set(two) & {r.s for r in store.select(Text)}


def test_a_nul_filter_value_agrees_or_is_refused_before_any_sql(
    texts: tuple[Store, list[Text]],
) -> None:
    """SQLite and MariaDB compare text holding NUL as stored; PostgreSQL's text cannot hold
    it, so a filter with one is a FilterError before any SQL (not the driver's error)."""
    store, rows = texts
    filters = [{"s": "a\x00b"}, col("s").in_(["zz", "a\x00b"]), col("s") != "a\x00b"]
    if store.dialect.name != "postgresql":
        held = [r.id for r in rows if r.s == "a\x00b"]
        assert ids(store.select(Text, where=filters[0])) == held
        assert ids(store.select(Text, where=filters[1])) == held
        return
    watch = Statements(store)
    try:
        for where in filters:
            for call in every_use(store, Text, {"s": "changed"}):
                with pytest.raises(
                    FilterError,
                    match=r"Text: the filter value 'a\\x00b' holds "
                    r"NUL \(0x00\), which PostgreSQL",
                ):
                    call(where)
    finally:
        watch.close()
    assert watch.seen == []
    assert sorted((r.id, r.s) for r in store.select(Text)) == sorted((r.id, r.s) for r in rows)


@pytest.mark.parametrize("pattern", INVALID)
def test_a_pattern_outside_the_rule_is_refused_before_any_sql(
    texts: tuple[Store, list[Text]], pattern: str
) -> None:
    store, rows = texts
    watch = Statements(store)
    try:
        for call in every_use(store, Text, {"s": "changed"}):
            with pytest.raises(FilterError, match=r"Text\.s: like\(") as info:
                call(col("s").like(pattern) | {"id": 0})
            assert re.search("backslash|NUL", str(info.value))
        assert watch.seen == []
    finally:
        watch.close()
    assert list(store.select(Text, order_by="id")) == rows


def test_like_on_other_columns_is_refused_by_name(texts: tuple[Store, list[Text]]) -> None:
    store, rows = texts
    with pytest.raises(FilterError, match=r"Text\.id: like\(\) needs a text column"):
        store.delete(Text, where=col("id").like("1%"))
    assert store.count(Text) == len(rows)


def test_the_sqlite_fallback_matcher_follows_the_rule() -> None:
    """The Python matcher SQLite uses for text holding NUL, on long and awkward input."""

    @settings(max_examples=300, deadline=None, database=None)
    @given(
        st.lists(st.sampled_from(TOKENS), max_size=8).map("".join),
        st.text(alphabet="aAé%_\\\x00\n", max_size=30),
    )
    def check(pattern: str, text: str) -> None:
        assert like_matches(pattern, text) is like_oracle(pattern, text), (pattern, text)

    check()
    assert like_matches("%a%a%a%a%b", "a" * 2000) is False  # no exponential backtracking
    assert like_matches(None, "a") is None and like_matches("a", None) is None


ALPHABET = ["a", "A", "%", "_", "\\", "é", "\x00"]
TOKENS = ["a", "A", "é", "%", "_", "\\%", "\\_", "\\\\"]


def test_like_property_against_the_oracle(store: Store) -> None:
    """Random patterns over every text of up to three characters of a small alphabet."""
    alphabet = storable(store, ALPHABET)
    values = ["".join(p) for n in range(4) for p in itertools.product(alphabet, repeat=n)]
    store.create(Text)
    store.insert_many([Text(i, v) for i, v in enumerate(values)])

    @settings(
        max_examples=60,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(st.lists(st.sampled_from(TOKENS), max_size=5).map("".join))
    def check(pattern: str) -> None:
        expected = [i for i, v in enumerate(values) if like_oracle(pattern, v)]
        assert ids(store.select(Text, where=col("s").like(pattern))) == expected, pattern

    check()


# -- child lists --------------------------------------------------------------------------


@dataclass
class Shelf:
    label: str


@table("fb_library")
@dataclass
class Library:
    id: int
    name: str
    shelves: list[Shelf] | None = None
    rooms: list[Shelf] = field(default_factory=list)


def libraries() -> list[Library]:
    return [
        Library(1, "none"),
        Library(2, "empty", []),
        Library(3, "one", [Shelf("x")]),
        Library(4, "two", [Shelf("x"), Shelf("y")], [Shelf("hall")]),
    ]


@pytest.fixture
def library(store: Store) -> Store:
    store.create(Library)
    store.insert_many(libraries())
    return store


def test_an_optional_child_list_compares_with_none(library: Store) -> None:
    store = library
    assert ids(store.select(Library, where={"shelves": None})) == [1]
    assert ids(store.select(Library, where=col("shelves") != None)) == [2, 3, 4]  # noqa: E711
    assert ids(store.select(Library, where=col("shelves").is_null())) == [1]
    assert store.count(Library, where=col("shelves").is_not_null()) == 3
    assert store.delete(Library, where={"shelves": None}) == 1
    assert list(store.select(Library, order_by="id")) == libraries()[1:]


@pytest.mark.parametrize(
    "where",
    [
        {"shelves": []},
        {"shelves": [Shelf("x")]},
        col("shelves") == [],
        col("shelves") != [Shelf("x")],
        col("shelves").in_([[], None]),
        col("shelves").not_in([[]]),
        col("shelves") > [],
    ],
    ids=["{[]}", "{[x]}", "==[]", "!=[x]", "in", "not_in", ">"],
)
def test_an_optional_child_list_refuses_other_values(library: Store, where: Any) -> None:
    store = library
    watch = Statements(store)
    try:
        for call in every_use(store, Library, {"name": "z"}):
            with pytest.raises(FilterError, match=r"Library\.shelves: an Optional child list"):
                call(where)
        assert watch.seen == []
    finally:
        watch.close()
    assert list(store.select(Library, order_by="id")) == libraries()


def test_a_plain_child_list_is_refused_by_name(library: Store) -> None:
    store = library
    wheres: list[Any] = [{"rooms": []}, {"rooms": None}, col("rooms") == [Shelf("hall")]]
    for where in wheres:
        for call in every_use(store, Library, {"name": "z"}):
            with pytest.raises(FilterError, match=r"Library\.rooms: a child list"):
                call(where)
    assert list(store.select(Library, order_by="id")) == libraries()


# -- columns stored encoded -----------------------------------------------------------------


@dataclass
class Pos:
    x: float
    y: float


@table("fb_doc")
@dataclass
class Doc:
    id: int
    meta: dict[str, int] | None = None
    tags: list[str] | None = None
    loose: dict[str, Any] | None = None
    pair: tuple[int, int] | None = None
    pos: Pos | None = None
    grid: np.ndarray | None = None
    packed: PackedGrid | None = None
    path: PointPath | None = None


def docs() -> list[Doc]:
    return [
        Doc(
            1,
            {"a": 1, "b": 2},
            ["x", "y"],
            {"n": 1.0},
            (1, 2),
            Pos(1.0, -0.0),
            np.array([1, 2]),
            np.ones((2, 3), dtype=bool),
            [[0, 0], [0, 1]],
        ),
        Doc(2),
    ]


#: Each encoded column with a value equal (in Python) to row 1's.
EQUAL_TO_ROW_1 = {
    "meta": {"b": 2, "a": 1},
    "tags": ["x", "y"],
    "loose": {"n": 1},
    "pair": (1, 2),
    "pos": Pos(1.0, 0.0),
    "grid": np.array([1, 2]),
    "packed": np.ones((2, 3), dtype=bool),
    "path": [[0, 0], [0, 1]],
}


@pytest.fixture
def documents(store: Store) -> Store:
    store.create(Doc)
    store.insert_many(docs())
    return store


def _same_docs(store: Store) -> None:
    back = list(store.select(Doc, order_by="id"))
    assert [d.id for d in back] == [1, 2]
    assert back[0].meta == {"a": 1, "b": 2} and back[0].path == [[0, 0], [0, 1]]
    assert back[0].grid is not None and np.array_equal(back[0].grid, np.array([1, 2]))


@pytest.mark.parametrize("name", list(EQUAL_TO_ROW_1))
def test_an_encoded_column_refuses_comparison_by_value(documents: Store, name: str) -> None:
    store = documents
    value = EQUAL_TO_ROW_1[name]
    watch = Statements(store)
    try:
        for where in (
            {name: value},
            col(name) == value,
            col(name) != value,
            col(name).in_([value]),
            col(name).not_in([value]),
            col(name) < value,
            col(name).between(value, value),
        ):
            for call in every_use(store, Doc, {"tags": ["z"]}):
                with pytest.raises(
                    FilterError, match=rf"Doc\.{name} \(.*\) is .*cannot compare it by value"
                ):
                    call(where)
        assert watch.seen == []
    finally:
        watch.close()
    _same_docs(store)


@pytest.mark.parametrize("name", list(EQUAL_TO_ROW_1))
def test_an_encoded_column_compares_with_none(documents: Store, name: str) -> None:
    store = documents
    assert ids(store.select(Doc, where={name: None})) == [2]
    assert ids(store.select(Doc, where=col(name) != None)) == [1]  # noqa: E711
    assert store.count(Doc, where=col(name).is_not_null()) == 1
    assert store.delete(Doc, where=col(name).is_null()) == 1
    assert ids(store.select(Doc)) == [1]


@table("fb_note")
@dataclass
class Note:
    id: int
    doc_id: int = column(references=Doc, default=0)


def test_refusals_reach_through_relations_and_the_cli_parser(documents: Store) -> None:
    from entityworks.cli import parse_where

    store = documents
    store.create(Note)
    store.insert_many([Note(1, 1), Note(2, 2)])
    assert ids(store.select(Note, where={"doc.tags": None})) == [2]
    for where in ({"doc.tags": ["x", "y"]}, col("doc.meta") == {"a": 1, "b": 2}):
        with pytest.raises(FilterError, match=r"Doc\.(tags|meta) \(.*\) is stored as JSON text"):
            store.delete(Note, where=where)
    assert store.count(Note) == 2
    cli_filter = parse_where('tags=["x","y"]', store.schema(Doc))
    with pytest.raises(FilterError, match=r"Doc\.tags \(.*\) is stored as JSON text"):
        store.count(Doc, where=cli_filter)

"""A JSON column written a column at a time (``SqlCodec.encode_many``): the same text and
values as value by value, and a refused value still named by its row, nothing written, on
every backend."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import get_args

import pytest
import sqlalchemy as sa

from entityworks import Store, table
from entityworks.errors import EntityworksError
from entityworks.types.json import json_text


@table("jc_lists")
@dataclass
class Lists:
    id: int
    ints: list[int]
    floats: tuple[float, ...]
    names: list[str] | None
    meta: dict[str, int]


def _rows(n: int) -> list[Lists]:
    return [
        Lists(
            i,
            [i, -i, 10**15 + i][: i % 4],
            (i / 7, -0.5) if i % 3 else (),
            None if i % 5 == 0 else [f"n{i}", 'é"\\\n'],
            {"k": i, "z": 2},
        )
        for i in range(1, 3001)
    ]


def test_the_stored_text_is_the_text_of_each_value(store: Store) -> None:
    rows = _rows(3000)
    store.create(Lists)
    store.insert_many(rows)
    assert list(store.select(Lists, order_by=["id"])) == rows
    if store.engine.dialect.name == "sqlite":  # the text itself: what other tools read
        with store.engine.connect() as conn:
            stored = conn.execute(sa.text("SELECT ints, names FROM jc_lists ORDER BY id")).all()
        assert [tuple(r) for r in stored] == [
            (json_text(o.ints), None if o.names is None else json_text(o.names)) for o in rows
        ]
        assert json.loads(stored[1][1]) == rows[1].names


@pytest.mark.parametrize(
    ("field", "bad"),
    [
        ("ints", [1, "2"]),  # text in a list[int]
        ("ints", (1, 2)),  # a tuple where a list is declared
        ("floats", [0.5]),  # a list where a tuple is declared
        ("names", ["a", 3]),
        ("meta", {"k": "not an int"}),
    ],
)
def test_a_refused_value_is_named_by_its_row_and_nothing_is_written(
    store: Store, field: str, bad: object
) -> None:
    rows = _rows(3000)
    setattr(rows[1234], field, bad)
    store.create(Lists)
    with pytest.raises(EntityworksError) as caught:
        store.insert_many(rows)
    message = str(caught.value)
    assert "1234" in message and field in message
    assert store.count(Lists) == 0


# -- a column of number or boolean lists: one text for the column, parted per value ----------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from entityworks.registry import registry  # noqa: E402

_floats = st.floats(allow_nan=True, allow_infinity=True)
_columns = st.one_of(
    st.lists(st.lists(st.integers(-(10**30), 10**30), max_size=4), max_size=12).map(
        lambda c: (list[int], c)
    ),
    st.lists(st.lists(_floats, max_size=4).map(tuple), max_size=12).map(
        lambda c: (tuple[float, ...], c)
    ),
    st.lists(st.lists(_floats, max_size=4), max_size=12).map(lambda c: (list[float], c)),
    st.lists(st.lists(st.booleans(), max_size=4), max_size=12).map(lambda c: (list[bool], c)),
)


@settings(max_examples=300, deadline=None)
@given(_columns)
def test_a_column_of_number_lists_is_each_value_s_own_text(case: tuple[object, list]) -> None:
    tp, column = case
    codec = registry.lookup(tp).sql_codec
    assert codec.encode_many is not None
    assert codec.encode_many(column) == [json_text(v) for v in column]


# -- a column of number or boolean lists read at once (``SqlCodec.decode_many``) -------------
#
# The oracle is the value-by-value decoder (``json.loads``, then the shape's own check): the
# column read must give exactly its values, of the same types, or refuse where it refuses.

_SHAPES = [list[int], tuple[int, ...], list[float], tuple[float, ...], list[bool]]
#: pieces of texts a stranger could store: brackets, quotes, objects, spaces, literals
_PIECES = st.sampled_from(
    ["[", "]", ",", " ", "\n", "1", "-2", "0.5", "1e400", "NaN", "true", "null", '"', "{", "}"]
)
_hostile = st.lists(_PIECES, max_size=8).map("".join)
#: texts that are one array together with their neighbours but none alone
_SPLICES = ["[1],[2]", "[1", "2]", "[1]]", "[[1]", "[1],", ",[2]", "[]]", "[[]", "[1] ", " [1]"]


def _outcome(decode: object, texts: list[str]) -> object:
    try:
        values = decode(texts)  # type: ignore[operator]
    except (ValueError, TypeError) as exc:  # what the value-by-value decoder raises
        return type(exc)
    return [(type(v), [(type(x), repr(x)) for x in v]) for v in values]


def _per_value(tp: object) -> object:
    codec = registry.lookup(tp).sql_codec
    return lambda texts: list(map(codec.decode, texts))


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(_SHAPES), st.data())
def test_a_column_read_at_once_is_each_text_read_alone(tp: object, data: st.DataObject) -> None:
    codec = registry.lookup(tp).sql_codec
    assert codec.decode_many is not None
    item = get_args(tp)[0]
    numbers = {int: st.integers(-(10**30), 10**30), float: _floats, bool: st.booleans()}[item]
    written = data.draw(st.lists(st.lists(numbers, max_size=4), max_size=12))
    texts = [json_text(v) for v in written]
    # a few texts replaced by what another tool could have stored there
    for i in data.draw(st.lists(st.integers(0, max(0, len(texts) - 1)), max_size=3)):
        if texts:
            texts[i] = data.draw(st.one_of(_hostile, st.sampled_from(_SPLICES)))
    assert _outcome(codec.decode_many, texts) == _outcome(_per_value(tp), texts)


def test_the_usual_texts_are_read_in_one_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    texts = [json_text([i, -i]) for i in range(2000)]
    calls = []
    real = json.loads

    def counted(text: str, *args: object, **kwargs: object) -> object:
        calls.append(len(text))
        return real(text, *args, **kwargs)

    codec = registry.lookup(list[int]).sql_codec
    assert codec.decode_many is not None
    monkeypatch.setattr(json, "loads", counted)
    assert codec.decode_many(texts) == [[i, -i] for i in range(2000)]
    assert len(calls) == 1


@pytest.mark.parametrize(
    ("stored", "read"),
    [
        ("[1],[2]", None),  # two arrays: one more value than rows, spliced by a join
        ("[1", None),
        ("[true]", None),  # a bool where ints are declared
        ("[1.5]", None),
        ('["1"]', None),
        ("[NaN]", None),
        ("[1, 2]", [1, 2]),  # another tool's spacing reads as it would alone
        (" [3]\n", [3]),
        ("[]", []),
    ],
)
def test_a_stored_text_of_another_tool_reads_as_alone_or_is_refused_by_its_row(
    store: Store, stored: str, read: list[int] | None
) -> None:
    rows = _rows(3000)
    store.create(Lists)
    store.insert_many(rows)
    try:
        with store.engine.begin() as conn:
            conn.execute(sa.text("UPDATE jc_lists SET ints = :t WHERE id = 1500"), {"t": stored})
    except sa.exc.DBAPIError:  # a JSON column of a server takes no invalid JSON text
        assert store.engine.dialect.name != "sqlite" and read is None
        assert list(store.select(Lists, order_by=["id"])) == rows
        return
    if read is None:
        with pytest.raises(EntityworksError) as caught:
            list(store.select(Lists, order_by=["id"]))
        message = str(caught.value)
        assert "1500" in message and "ints" in message
        return
    got = list(store.select(Lists, order_by=["id"]))
    rows[1499].ints = read
    assert got == rows
    assert all(type(v) is int for o in got for v in o.ints)

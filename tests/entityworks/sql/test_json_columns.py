"""A JSON column written a column at a time (``SqlCodec.encode_many``): the same text and
values as value by value, and a refused value still named by its row, nothing written, on
every backend."""

from __future__ import annotations

import json
from dataclasses import dataclass

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

"""``None`` in ``in_`` and ``not_in`` (issue 29, item 12): the same rows on every backend,
as the docstrings and the Python API tutorial say. A NULL matches only when a filter asks for
it with ``None``; SQL's own ``IN (NULL)`` matches nothing and ``NOT IN (1, NULL)`` no row at
all, which the sqlite3 module shows here as the contrast.
"""

from __future__ import annotations

import decimal
import sqlite3
from dataclasses import dataclass
from typing import Any

import pytest

from entityworks import Store, col, table

D = decimal.Decimal


@table("fn_thing")
@dataclass
class Thing:
    id: int
    n: int | None
    s: str | None
    d: D | None


ROWS = [
    Thing(1, 1, "a", D("1.5")),
    Thing(2, 2, "b", D("2")),
    Thing(3, None, None, None),
    Thing(4, 1, "a", D("1.50")),
]
VALUES = {"n": [1, 2], "s": ["a", "b"], "d": [D("1.5"), D("2")]}


def documented(op: str, field: str, values: list[Any]) -> set[int]:
    """The documented rule: ``in_`` keeps equal values, and NULL when None is among the
    values; ``not_in`` keeps non-NULL values equal to none of them (empty: every row)."""
    out = set()
    for row in ROWS:
        value = getattr(row, field)
        listed = [v for v in values if v is not None]
        if op == "in":
            keep = value in listed if value is not None else None in values
        else:
            keep = True if not values else value is not None and value not in listed
        if keep:
            out.add(row.id)
    return out


@pytest.fixture
def things(store: Store) -> Store:
    store.create(Thing)
    store.insert_many(ROWS)
    return store


@pytest.mark.parametrize("field", ["n", "s", "d"])
@pytest.mark.parametrize("op", ["in", "not_in"])
@pytest.mark.parametrize("which", [(), (None,), (0,), (0, None), (1,), (1, None), (0, 1, None)])
def test_none_in_a_value_list(things: Store, field: str, op: str, which: tuple[Any, ...]) -> None:
    values = [None if i is None else VALUES[field][i] for i in which]
    expr = col(field).in_(values) if op == "in" else col(field).not_in(values)
    found = {t.id for t in things.select(Thing, where=expr)}
    assert found == documented(op, field, values)
    assert things.count(Thing, where=expr) == len(found)
    inverted = {t.id for t in things.select(Thing, where=~expr)}
    assert not found & inverted  # ~ never keeps a row the filter keeps


def test_the_shortcuts_agree(things: Store) -> None:
    def ids(where: Any) -> set[int]:
        return {t.id for t in things.select(Thing, where=where)}

    assert ids(col("n").in_([None])) == ids(col("n").is_null()) == ids({"n": None}) == {3}
    assert ids(col("s").not_in([None])) == ids(col("s").is_not_null()) == {1, 2, 4}
    assert ids(col("n").not_in([1, None])) == ids(col("n").not_in([1])) == ids(col("n") != 1) == {2}


def test_plain_sql_would_match_nothing() -> None:
    """The contrast the documentation names: SQL's IN (NULL) and NOT IN (.., NULL)."""
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE t (n INTEGER)")
    conn.executemany("INSERT INTO t VALUES (?)", [(1,), (2,), (None,)])
    assert conn.execute("SELECT COUNT(*) FROM t WHERE n IN (NULL)").fetchone() == (0,)
    assert conn.execute("SELECT COUNT(*) FROM t WHERE n NOT IN (1, NULL)").fetchone() == (0,)
    conn.close()

"""A value the writer refuses in item 1000 of a 2,500-item child list (issue 29, item 9): the
error names the child table and the item's index as well as the owner's row and the column,
on every backend, through ``Store.insert`` and ``Store.insert_many``; nothing is written.
Checked against the database with a plain SQL count of both tables."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
import sqlalchemy as sa

from entityworks import Store, entity, primary_key
from entityworks.errors import ValueEncodingError, WriteError


@dataclass
class Step:
    n: int
    label: str


@dataclass
class Leaf:
    weight: float


@dataclass
class Stage:
    name: str
    leaves: list[Leaf] = field(default_factory=list)


@entity("ew_child_runs")
class Run:
    id: int | None = primary_key()
    name: str = ""
    steps: list[Step] = field(default_factory=list)


@entity("ew_child_plans")
class Plan:
    id: int | None = primary_key()
    stages: list[Stage] = field(default_factory=list)


BAD = 1000
ITEMS = 2500


def _steps(bad: Step) -> list[Step]:
    steps = [Step(i, f"step {i}") for i in range(ITEMS)]
    steps[BAD] = bad
    return steps


def _counts(store: Store, *tables: str) -> list[int]:
    with store.connection() as conn:
        return [
            int(conn.execute(sa.select(sa.func.count()).select_from(sa.table(t))).scalar_one())
            for t in tables
        ]


@pytest.mark.parametrize(
    ("bad", "column", "why"),
    [
        (Step("1000", "x"), "n", "expected an int, got str"),
        (Step(2**70, "x"), "n", "outside the signed 64-bit range"),
        (Step(5, 12), "label", "expected a str"),
    ],
    ids=["text in an int", "int beyond 64 bits", "int in a str"],
)
@pytest.mark.parametrize("how", ["insert", "insert_many"])
def test_a_bad_child_value_is_named_with_its_table_and_index(
    store: Store, how: str, bad: Step, column: str, why: str
) -> None:
    store.create(Run)
    if how == "insert":
        call: Any = lambda: store.insert(Run(None, "one", _steps(bad)))  # noqa: E731
        owner = 0
    else:
        call = lambda: store.insert_many(  # noqa: E731
            [Run(None, "fine", [Step(1, "a")]), Run(None, "second", _steps(bad))]
        )
        owner = 1
    with pytest.raises(ValueEncodingError) as caught:
        call()
    text = str(caught.value)
    assert (
        f"row {owner} (ew_child_runs_steps item {BAD} of row {owner}, "
        f"Run.steps[{BAD}]), column {column!r}"
    ) in text, text
    assert why in text, text
    assert caught.value.row == owner and caught.value.column == column
    assert _counts(store, "ew_child_runs", "ew_child_runs_steps") == [0, 0]


def test_a_bad_grandchild_value_is_named_with_its_table_and_index(store: Store) -> None:
    store.create(Plan)
    stages = [Stage(f"stage {i}", [Leaf(0.5)] * 3) for i in range(ITEMS)]
    stages[BAD] = Stage("bad", [Leaf(0.5), Leaf("heavy")])  # type: ignore[arg-type]
    with pytest.raises(ValueEncodingError) as caught:
        store.insert_many([Plan(None, [Stage("a")]), Plan(None, stages)])
    text = str(caught.value)
    assert "ew_child_plans_stages_leaves item 1 of row 1" in text, text
    assert "Stage.leaves[1]" in text and "column 'weight'" in text, text
    assert _counts(
        store, "ew_child_plans", "ew_child_plans_stages", "ew_child_plans_stages_leaves"
    ) == [0, 0, 0]


def test_a_child_value_the_database_refuses_is_named_too(store: Store) -> None:
    """A value only the database refuses (PostgreSQL: NUL in text), found by the write and
    located afterwards; on the other backends it is stored exactly."""
    store.create(Run)
    steps = _steps(Step(5, "nul \x00 inside"))
    if store.backend.name != "postgresql":
        store.insert(Run(None, "one", steps))
        back = store.get(Run, 1)
        assert back is not None and back.steps[BAD].label == "nul \x00 inside"
        return
    with pytest.raises(WriteError) as caught:
        store.insert(Run(None, "one", steps))
    text = str(caught.value)
    assert f"ew_child_runs_steps item {BAD} of row 0, Run.steps[{BAD}]" in text, text
    assert "column 'label'" in text
    assert _counts(store, "ew_child_runs", "ew_child_runs_steps") == [0, 0]

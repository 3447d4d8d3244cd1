"""Every Store write is atomic on its own, also inside an outer ``transaction()`` (issue 10,
items 2 and 3), on every backend.

A write that raises leaves the outer transaction exactly as it was before the call: earlier
batches of the same call are gone, the old child rows of a failed upsert or update are still
there, and the outer transaction goes on and commits what it did before and after.
Upsert decides conflicts on the primary key alone; a clash on another UNIQUE column is a
:class:`WriteError` and never overwrites another row (MariaDB's ``ON DUPLICATE KEY UPDATE``
would otherwise update the row holding the unique value).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest
import sqlalchemy as sa

from entityworks import EntityworksError, Store, WriteError, column


@dataclass
class Step:
    x: int
    label: str | None = None


@dataclass
class Path:
    id: int | None
    name: str
    steps: list[Step] = field(default_factory=list)


@dataclass
class Puzzle:
    id: int
    text: str = column(unique=True, max_length=81)
    level: int = 0


def _state(store: Store) -> tuple[list[Path], list[tuple[int, int, int]]]:
    """Every parent (with children) and every raw child row, in key order."""
    parents = sorted(store.select(Path), key=lambda p: p.id)
    child = store.table(Path).metadata.tables["path_steps"]
    with store.connection() as conn:  # the outer transaction's connection when inside one
        rows = conn.execute(
            sa.select(child.c.parent_key, child.c.position, child.c.x).order_by(
                child.c.parent_key, child.c.position
            )
        ).all()
    return parents, [tuple(r) for r in rows]


@pytest.fixture
def paths(store: Store) -> Store:
    store.create(Path)
    store.insert_many([Path(1, "one", [Step(1), Step(2)]), Path(2, "two", [Step(3)])])
    return store


def _failing_calls(store: Store) -> list[tuple[str, object]]:
    """(name, call) pairs: each call fails after it has written something."""
    bad_child = [Step(7), Step("x")]  # type: ignore[arg-type] # a str in an int column
    return [
        (
            "insert_many batch_size=2",
            lambda: store.insert_many(
                [Path(10 + i, f"p{i}") for i in range(5)] + [Path(1, "dup")], batch_size=2
            ),
        ),
        (
            "insert_many generated keys",
            lambda: store.insert_many(
                [Path(None, "g1"), Path(None, "g2"), Path(2, "dup")], batch_size=1
            ),
        ),
        ("insert with bad child", lambda: store.insert(Path(20, "c", bad_child))),
        # SQLite inserts 64 rows to a statement: a refusal inside the second of them
        (
            "insert_many, a clash among many",
            lambda: store.insert_many(
                [Path(1 if i == 99 else 100 + i, f"p{i}") for i in range(200)]
            ),
        ),
        (
            "insert_many, a bad child among many",
            lambda: store.insert_many(
                [
                    Path(
                        300,
                        "many",
                        [Step(i) for i in range(150)]
                        + [Step("x")]  # type: ignore[list-item]
                        + [Step(i) for i in range(20)],
                    )
                ]
            ),
        ),
        (
            "insert child batches",
            lambda: store.insert_many(
                [Path(30, "a", [Step(1)] * 3), Path(31, "b", [Step(1), Step("x")])],  # type: ignore[list-item]
                batch_size=2,
            ),
        ),
        ("upsert with bad child", lambda: store.upsert(Path(1, "changed", bad_child))),
        (
            "upsert_many batch_size=1",
            lambda: store.upsert_many(
                [Path(1, "new one", [Step(9)]), Path(2, "new two"), Path(3, None)],  # type: ignore[arg-type]
                batch_size=1,
            ),
        ),
        ("update with bad child", lambda: store.update(Path(2, "changed", bad_child))),
    ]


CALLS = [name for name, _ in _failing_calls(None)]  # type: ignore[arg-type]


@pytest.mark.parametrize("name", CALLS)
def test_failed_write_inside_transaction_changes_nothing(paths: Store, name: str) -> None:
    store = paths
    call = dict(_failing_calls(store))[name]
    with store.transaction():
        store.insert(Path(5, "before"))
        before = _state(store)
        with pytest.raises(EntityworksError):
            call()
        assert _state(store) == before  # earlier batches and old children: as they were
        store.insert(Path(6, "after"))
    parents, children = _state(store)
    assert [p.id for p in parents] == [1, 2, 5, 6]
    assert parents[0] == Path(1, "one", [Step(1), Step(2)])
    assert children == [(1, 0, 1), (1, 1, 2), (2, 0, 3)]


def test_a_refusal_among_many_rows_names_its_row(paths: Store) -> None:
    with pytest.raises(WriteError, match="row 99") as refused:
        paths.insert_many([Path(1 if i == 99 else 100 + i, f"p{i}") for i in range(200)])
    assert refused.value.row == 99
    with pytest.raises(EntityworksError, match="row 0") as refused:  # a str in an int
        paths.insert_many(
            [
                Path(
                    300,
                    "many",
                    [Step(i) for i in range(150)]
                    + [Step("x")]  # type: ignore[list-item]
                    + [Step(i) for i in range(20)],
                )
            ]
        )
    assert refused.value.column == "x"  # type: ignore[attr-defined]
    assert [p.id for p in paths.select(Path)] == [1, 2]


@pytest.mark.parametrize("name", CALLS)
def test_failed_write_outside_transaction_changes_nothing(paths: Store, name: str) -> None:
    before = _state(paths)
    with pytest.raises(EntityworksError):
        dict(_failing_calls(paths))[name]()
    assert _state(paths) == before


def test_failed_delete_keeps_the_children(paths: Store) -> None:
    """A parent another table still references cannot go; its child rows stay with it."""
    store = paths
    guard = sa.Table(
        "path_guard",
        sa.MetaData(),
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column(
            "path_id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            sa.ForeignKey(store.table(Path).c.id),
        ),
    )
    with store.engine.begin() as conn:
        guard.create(conn)
        conn.execute(guard.insert(), [{"id": 1, "path_id": 1}])
    try:
        before = _state(store)
        with store.transaction():
            store.insert(Path(5, "kept"))
            with pytest.raises(WriteError, match="path"):
                store.delete(Path(1, "one"))
            with pytest.raises(WriteError):
                store.delete(Path, where={"name": "one"})
            assert _state(store)[1] == before[1]
        parents, children = _state(store)
        assert [p.id for p in parents] == [1, 2, 5] and children == before[1]
        assert store.delete(Path(2, "two")) == 1  # an unreferenced parent goes, children too
        assert _state(store)[1] == before[1][:2]
    finally:
        with store.engine.begin() as conn:
            guard.drop(conn)


def test_successful_writes_inside_transaction_are_kept(paths: Store) -> None:
    store = paths
    with store.transaction():
        store.insert_many([Path(10 + i, f"p{i}", [Step(i)]) for i in range(5)], batch_size=2)
        store.upsert(Path(1, "one again", [Step(8)]))
        store.update(Path(2, "two again"))
        store.delete(Path(11, "p1"))
    parents, children = _state(store)
    assert [p.id for p in parents] == [1, 2, 10, 12, 13, 14]
    assert parents[0] == Path(1, "one again", [Step(8)]) and parents[1].steps == []
    assert children == [(1, 0, 8), (10, 0, 0), (12, 0, 2), (13, 0, 3), (14, 0, 4)]


# -- item 3: upsert decides on the primary key alone --------------------------------------------


@pytest.fixture
def puzzles(store: Store) -> Store:
    store.create(Puzzle)
    store.insert_many([Puzzle(1, "abc", 1), Puzzle(2, "def", 2)])
    return store


def _puzzles(store: Store) -> list[Puzzle]:
    return sorted(store.select(Puzzle), key=lambda p: p.id)


ORIGINAL = [Puzzle(1, "abc", 1), Puzzle(2, "def", 2)]


@pytest.mark.parametrize(
    "rows",
    [
        [Puzzle(3, "abc", 9)],  # new key, unique text of row 1
        [Puzzle(2, "abc", 9)],  # existing key 2, unique text of row 1
        [Puzzle(1, "x", 5), Puzzle(4, "def", 9)],  # second row clashes with row 2
        [Puzzle(5, "same", 1), Puzzle(6, "same", 2)],  # two new rows clash with each other
        [Puzzle(1, "def", 9), Puzzle(2, "abc", 9)],  # a swap clashes on the first row
    ],
    ids=["new-key", "other-key", "second-row", "within-call", "swap"],
)
@pytest.mark.parametrize("batch_size", [1, 1000])
def test_unique_clash_in_upsert_is_refused(
    puzzles: Store, rows: list[Puzzle], batch_size: int
) -> None:
    with pytest.raises(WriteError) as info:
        puzzles.upsert_many(rows, batch_size=batch_size)
    assert info.value.table == "puzzle" and "nothing was written" in str(info.value)
    assert info.value.column == "text"
    assert _puzzles(puzzles) == ORIGINAL
    with puzzles.transaction():  # inside a transaction too, which then goes on
        with pytest.raises(WriteError):
            puzzles.upsert_many(rows, batch_size=batch_size)
        puzzles.upsert(Puzzle(7, "ok", 7))
    assert _puzzles(puzzles) == [*ORIGINAL, Puzzle(7, "ok", 7)]


def test_upsert_by_key_still_updates_and_inserts(puzzles: Store) -> None:
    puzzles.upsert(Puzzle(1, "abc", 10))  # same unique value on its own row: fine
    puzzles.upsert(Puzzle(2, "changed", 20))
    puzzles.upsert_many([Puzzle(3, "def", 30), Puzzle(1, "abc2", 11)])  # freed value reused
    assert _puzzles(puzzles) == [
        Puzzle(1, "abc2", 11),
        Puzzle(2, "changed", 20),
        Puzzle(3, "def", 30),
    ]


@dataclass
class Tag:
    id: int
    label: str = column(unique=True)


def test_upsert_of_a_class_with_only_a_key_and_unique_column(store: Store) -> None:
    store.create(Tag)
    store.insert(Tag(1, "a"))
    with pytest.raises(WriteError):
        store.upsert(Tag(2, "a"))
    store.upsert(Tag(1, "b"))
    assert list(store.select(Tag)) == [Tag(1, "b")]


def test_reads_then_writes_inside_one_transaction(paths: Store) -> None:
    """A streamed read must not leave the transaction's connection streaming (PostgreSQL
    would then send the next write's SAVEPOINT as a server-side cursor)."""
    store = paths
    with store.transaction():
        names = [p.name for p in store.select(Path, order_by="id")]
        store.insert(Path(7, "seven", [Step(7)]))
        store.upsert(Path(1, "one", [Step(1)]))
        assert [p.name for p in store.select(Path, order_by="id")] == [*names, "seven"]
    assert store.get(Path, 7) == Path(7, "seven", [Step(7)])

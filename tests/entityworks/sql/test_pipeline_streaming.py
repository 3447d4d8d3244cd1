"""``insert_many`` and ``upsert_many`` take any iterable and write it a batch at a time in one
transaction: a generator is never held whole in memory, a refused row in a later batch is
named by its index in the whole input and leaves nothing written."""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest

from entityworks import Store, ValueEncodingError, WriteError, table


@table("ps_small")
@dataclass
class Small:
    id: int | None
    n: int
    name: str


@table("ps_other")
@dataclass
class Other:
    id: int | None
    n: int
    name: str


BATCH = 1_000


def _small(count: int, start: int = 0) -> Iterator[Small]:
    for i in range(start, start + count):
        yield Small(None, i, f"row {i}")


def _peak_above_a_list(write: Callable[[Iterator[Small]], int], count: int) -> tuple[int, int]:
    """The peak memory ``write`` of a generator of ``count`` rows takes, and what a list of
    them holds (tracemalloc)."""
    gc.collect()
    tracemalloc.start()
    try:
        held = list(_small(count))
        whole, _ = tracemalloc.get_traced_memory()  # what a list of them takes
        del held
        gc.collect()
        tracemalloc.reset_peak()
        base, _ = tracemalloc.get_traced_memory()
        assert write(_small(count)) == count
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak - base, whole


def test_a_generator_is_inserted_in_bounded_memory(sqlite_store: Store) -> None:
    store = sqlite_store
    store.create(Small)
    count = 200_000
    used, whole = _peak_above_a_list(lambda rows: store.insert_many(rows, batch_size=5_000), count)
    assert used < whole / 5, (used, whole)
    assert store.count(Small) == count
    assert [s.n for s in store.select(Small, where={"id": count})] == [count - 1]


def test_a_generator_is_upserted_in_bounded_memory(sqlite_store: Store) -> None:
    store = sqlite_store
    store.create(Small)
    count = 200_000

    def keyed(rows: Iterator[Small]) -> Iterator[Small]:
        for row in rows:
            row.id = row.n + 1
            yield row

    used, whole = _peak_above_a_list(
        lambda rows: store.upsert_many(keyed(rows), batch_size=5_000), count
    )
    assert used < whole / 5, (used, whole)
    assert store.count(Small) == count


class Pulled:
    """A generator's rows, counting how many were taken (a batch at a time: never all)."""

    def __init__(self, rows: Iterator[object]) -> None:
        self.rows = rows
        self.taken = 0

    def __iter__(self) -> Iterator[object]:
        for row in self.rows:
            self.taken += 1
            yield row


def test_generated_keys_are_written_back_to_each_instance(store: Store) -> None:
    store.create(Small)
    objs = list(_small(3 * BATCH + 5))
    assert store.insert_many(iter(objs), batch_size=BATCH) == len(objs)
    keys = [o.id for o in objs]
    assert None not in keys and len(set(keys)) == len(keys)
    assert {(s.id, s.n) for s in store.select(Small)} == {(o.id, o.n) for o in objs}


def test_a_value_refused_in_the_third_batch_names_its_row(store: Store) -> None:
    store.create(Small)
    bad = 2 * BATCH + 7

    def rows() -> Iterator[Small]:
        for obj in _small(5 * BATCH):
            if obj.n == bad:
                obj.n = "seven"  # type: ignore[assignment]
            yield obj

    pulled = Pulled(rows())
    with pytest.raises(ValueEncodingError) as info:
        store.insert_many(pulled, batch_size=BATCH)
    assert info.value.row == bad and info.value.column == "n"
    assert store.count(Small) == 0
    assert pulled.taken == 3 * BATCH  # the batches after it never read


def test_a_row_the_database_refuses_in_the_third_batch_names_its_row(store: Store) -> None:
    store.create(Small)
    bad = 2 * BATCH + 11

    def rows() -> Iterator[Small]:
        for i in range(5 * BATCH):
            yield Small(1 if i == bad else i + 1, i, f"row {i}")  # key 1 twice

    pulled = Pulled(rows())
    with pytest.raises(WriteError) as info:
        store.insert_many(pulled, batch_size=BATCH)
    assert info.value.row == bad and info.value.column == "id"
    assert store.count(Small) == 0
    assert pulled.taken == 3 * BATCH


def test_a_row_of_another_class_in_the_third_batch_is_refused(store: Store) -> None:
    store.create(Small)
    bad = 2 * BATCH + 3

    def rows() -> Iterator[object]:
        for obj in _small(5 * BATCH):
            yield Other(None, obj.n, obj.name) if obj.n == bad else obj

    pulled = Pulled(rows())
    with pytest.raises(WriteError) as info:
        store.insert_many(pulled, batch_size=BATCH)
    assert info.value.row == bad
    assert store.count(Small) == 0
    assert pulled.taken == 3 * BATCH


def test_upsert_many_from_a_generator(store: Store) -> None:
    store.create(Small)
    store.insert_many(Small(i + 1, i, "old") for i in range(2 * BATCH))

    def rows() -> Iterator[Small]:  # half of them updated, as many new
        for i in range(BATCH, 3 * BATCH):
            yield Small(i + 1, -i, "new")

    assert store.upsert_many(rows(), batch_size=BATCH // 3) == 2 * BATCH
    stored = {s.id: (s.n, s.name) for s in store.select(Small)}
    assert len(stored) == 3 * BATCH
    assert stored[1] == (0, "old") and stored[BATCH] == (BATCH - 1, "old")
    assert stored[BATCH + 1] == (-BATCH, "new") and stored[3 * BATCH] == (1 - 3 * BATCH, "new")


def test_upsert_many_refusal_in_a_later_batch_keeps_nothing(store: Store) -> None:
    store.create(Small)
    store.insert_many([Small(1, 0, "kept")])
    bad = BATCH + 4

    def rows() -> Iterator[Small]:
        for i in range(4 * BATCH):
            yield Small(None if i == bad else i + 1, i, "new")

    pulled = Pulled(rows())
    with pytest.raises(WriteError) as info:
        store.upsert_many(pulled, batch_size=BATCH)
    assert info.value.row == bad and pulled.taken == 2 * BATCH
    assert [(s.id, s.name) for s in store.select(Small)] == [(1, "kept")]

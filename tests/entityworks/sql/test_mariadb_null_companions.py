"""MariaDB's bulk INSERTs leave out a companion column that is NULL in every row of the
batch (a float column's -0.0 mark: PyMySQL would escape a NULL per row); the column's
default is that NULL. A batch with one mark sends the column, and either way every value
comes back exact, keys given or generated."""

from __future__ import annotations

import logging
import math
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from entityworks import Store, table


@table("mdb_marks")
@dataclass
class Marked:
    v: float
    w: float | None
    s: str
    id: int | None = field(default=None, metadata={"primary_key": True})


@pytest.fixture
def mdb(mariadb_url: str) -> Iterator[Store]:
    store = Store(mariadb_url)
    store.drop(Marked)
    store.create(Marked)
    yield store
    store.drop(Marked)
    store.close()


def _rows(n: int, zeros: set[int], keys: bool) -> list[Marked]:
    return [
        Marked(
            -0.0 if i in zeros else i / 7,
            None if i % 4 == 0 else (-0.0 if i in zeros else -i / 3),
            f"r{i}",
            i + 1 if keys else None,
        )
        for i in range(n)
    ]


def _inserts(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage().split(" VALUES ")[0]
        for r in caplog.records
        if r.getMessage().startswith("INSERT INTO") and "mdb_marks" in r.getMessage()
    ]


@pytest.mark.parametrize("keys", [True, False], ids=["keys given", "keys generated"])
@pytest.mark.parametrize("zeros", [set(), {7, 1500}], ids=["no mark", "two marks"])
def test_a_companion_null_throughout_is_left_out(
    mdb: Store, caplog: pytest.LogCaptureFixture, keys: bool, zeros: set[int]
) -> None:
    given = _rows(3000, zeros, keys)
    marks = [c.name for c in mdb.table(Marked).columns if c.name.startswith(("v__", "w__"))]
    assert len(marks) == 2  # the -0.0 marks of v and w (MariaDB's DOUBLE loses the sign)
    with caplog.at_level(logging.INFO, logger="entityworks.sql"):
        mdb.insert_many(given)
    heads = _inserts(caplog)
    assert heads
    for head in heads:
        for mark in marks:
            assert (mark in head) == bool(zeros), head
    got = sorted(mdb.select(Marked), key=lambda m: m.s)
    want = sorted(given, key=lambda m: m.s)
    assert got == want
    for a, b in zip(got, want, strict=True):
        for x, y in ((a.v, b.v), (a.w, b.w)):
            assert type(x) is type(y)
            if x is not None:
                assert math.copysign(1.0, x) == math.copysign(1.0, y)

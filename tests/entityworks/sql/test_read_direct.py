"""Objects built straight from the driver's rows (``types.columns.build_rows``) where no
column decodes: a fetch whose companions are all NULL goes so, any other fetch through the
columns, and both give the same values of the same types (-0.0, None, big ints)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from entityworks import Store, table
from entityworks.sql import _read


@table("direct_plain")
@dataclass
class Plain:
    id: int
    v: float
    w: float | None
    s: str
    n: int | None


def _rows(n: int, negative_zero_at: set[int]) -> list[Plain]:
    return [
        Plain(
            i,
            -0.0 if i in negative_zero_at else i / 7,
            None if i % 5 == 0 else (-0.0 if i in negative_zero_at else -i / 3),
            f"r{i}",
            None if i % 3 == 0 else (2**62 + i) * (-1) ** i,
        )
        for i in range(n)
    ]


@pytest.fixture(params=["sqlite", "postgresql", "mariadb"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    if request.param == "sqlite":
        s = Store(tmp_path / "direct.db")
    else:
        s = Store(
            request.getfixturevalue("pg_url" if request.param == "postgresql" else "mariadb_url")
        )
        s.drop(Plain)
    s.create(Plain)
    yield s
    s.drop(Plain)
    s.close()


def _same(got: list[Plain], given: list[Plain]) -> None:
    assert len(got) == len(given)
    for a, b in zip(got, given, strict=True):
        assert a == b
        for x, y in ((a.v, b.v), (a.w, b.w), (a.n, b.n), (a.s, b.s), (a.id, b.id)):
            assert type(x) is type(y)
            if isinstance(x, float):
                assert math.copysign(1.0, x) == math.copysign(1.0, y)


def _spy_build_rows(monkeypatch: Any) -> list[bool]:
    """Whether each fetch of the reads to come was built straight from its rows."""
    answers: list[bool] = []
    built = _read.build_rows

    def spy(*args: Any) -> Any:
        out = built(*args)
        answers.append(out is not None)
        return out

    monkeypatch.setattr(_read, "build_rows", spy)
    return answers


def test_fetches_without_a_mark_are_built_from_the_rows(store: Store, monkeypatch: Any) -> None:
    fetch = _read.FETCH
    # -0.0 only in the second fetch: its companion is set there, and only there
    given = _rows(3 * fetch, {fetch + 5, fetch + 17})
    store.insert_many(given)
    answers = _spy_build_rows(monkeypatch)
    _same(list(store.select(Plain, order_by="id")), given)
    _same([o for o in store.select(Plain, order_by="id")], given)
    if store.backend.name == "sqlite":  # REAL loses -0.0: its companion marks it
        assert answers == [True, False, True] * 2
    else:  # the server's driver values pass its result processors: the columns' path
        assert answers == []


@table("direct_given")
@dataclass
class Given:
    id: int
    flag: bool
    maybe: bool | None
    blob: bytes
    other: bytes | None


def test_values_the_driver_gives_as_their_type_are_built_from_the_rows(
    store: Store, monkeypatch: Any
) -> None:
    """A bool column comes back from psycopg as bool, from sqlite3 and PyMySQL as 0/1; a
    BLOB as bytes from each driver. Where every value of a fetch is already of its field's
    type the objects come straight from the rows; otherwise through the columns; either way
    each value is of the field's type."""
    store.drop(Given)
    store.create(Given)
    try:
        given = [
            Given(
                i,
                i % 3 == 0,
                None if i % 4 == 0 else i % 2 == 0,
                bytes([i % 256]) * (i % 5),
                None if i % 6 == 0 else b"\x00" * (i % 3),
            )
            for i in range(2 * _read.FETCH + 7)
        ]
        store.insert_many(given)
        answers = _spy_build_rows(monkeypatch)
        got = list(store.select(Given, order_by="id"))
        assert got == given
        for a in got:
            assert type(a.flag) is bool and type(a.blob) is bytes
            assert a.maybe is None or type(a.maybe) is bool
            assert a.other is None or type(a.other) is bytes
        if store.backend.name == "postgresql":  # psycopg's bool and bytes as they are
            assert answers == [True, True, True]
        elif store.backend.name == "sqlite":  # 0 and 1: each fetch refused, read by columns
            assert answers == [False, False, False]
        else:  # PyMySQL's 0 and 1 pass SQLAlchemy's result processor: the columns' path
            assert answers == []
    finally:
        store.drop(Given)

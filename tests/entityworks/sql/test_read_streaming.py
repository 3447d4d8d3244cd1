"""A read streams from a server-side cursor only where it can be more than one fetch: a
select without a limit, or with a limit above a fetch, does; one whose limit fits in a
fetch (and ``get``) reads in one go. Both give the same rows."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from entityworks import Store, table
from entityworks.sql import _read


@table("streaming_rows")
@dataclass
class Item:
    id: int
    label: str


@pytest.fixture(params=["sqlite", "postgresql", "mariadb"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    if request.param == "sqlite":
        s = Store(tmp_path / "streaming.db")
    else:
        s = Store(
            request.getfixturevalue("pg_url" if request.param == "postgresql" else "mariadb_url")
        )
        s.drop(Item)
    s.create(Item)
    yield s
    s.drop(Item)
    s.close()


def test_only_reads_that_can_be_big_stream(store: Store, monkeypatch: Any) -> None:
    rows = [Item(i, f"item {i}") for i in range(_read.FETCH + 10)]
    store.insert_many(rows)
    streamed: list[bool] = []
    fetched = _read._fetched

    def spy(*args: Any, **kwargs: Any) -> Any:
        if len(args) > 3 and args[3] is not None:  # the call on its connection
            streamed.append(kwargs["stream"])
        return fetched(*args, **kwargs)

    monkeypatch.setattr(_read, "_fetched", spy)
    cases: list[tuple[dict[str, Any], bool]] = [
        ({}, True),
        ({"limit": _read.FETCH + 1}, True),
        ({"limit": _read.FETCH}, False),
        ({"limit": 3, "offset": 5}, False),
        ({"limit": 0}, False),
    ]
    for kwargs, big in cases:
        streamed.clear()
        expected = rows[kwargs.get("offset", 0) :][: kwargs.get("limit", len(rows))]
        assert list(store.select(Item, order_by="id", **kwargs)) == expected, kwargs
        labels = [r.label for r in expected]
        got = store.select(Item, order_by="id", columns=["label"], **kwargs)
        assert [label for (label,) in got] == labels, kwargs
        assert streamed == [big, big], kwargs
    streamed.clear()
    assert store.get(Item, 7) == rows[7]
    assert True not in streamed  # a point read never streams (if it reads through here)

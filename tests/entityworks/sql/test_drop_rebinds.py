"""A class bound to a live table takes that table's layout (an older table keeps its
columns); once ``drop`` removed the table, ``create`` makes today's layout for the class,
whatever table of that name existed before, and its values come back exact."""

from __future__ import annotations

import datetime as dt
import decimal
from dataclasses import dataclass, make_dataclass

import sqlalchemy as sa

from entityworks import AwareDatetime, Store


@dataclass
class Probe:
    id: int
    v: decimal.Decimal
    f: float


def _columns(store: Store, table: str) -> list[str]:
    with store.connection() as conn:
        return sorted(c["name"] for c in sa.inspect(conn).get_columns(table))


def test_create_after_drop_makes_todays_layout(backend_url: str) -> None:
    # another class made the table "probe" with other columns (no companions of Probe's)
    other = make_dataclass("Probe", [("id", int), ("v", AwareDatetime), ("f", int)])
    with Store(backend_url) as store:
        store.drop(Probe)
        store.create(other)
        store.insert(other(1, dt.datetime(2026, 12, 6, tzinfo=dt.UTC), 3))
    with Store(backend_url) as store:
        store.drop(Probe)  # binds Probe to the live table of "other", then drops it
        store.create(Probe)
        got = _columns(store, "probe")
        store.insert(Probe(1, decimal.Decimal("1.50"), -0.0))
        back = store.get(Probe, 1)
        assert back is not None
        assert str(back.v) == "1.50" and str(back.f) == "-0.0"
        store.drop(Probe)
    with Store(backend_url) as fresh:  # the layout a Store that never saw "other" makes
        fresh.create(Probe)
        assert got == _columns(fresh, "probe")
        fresh.drop(Probe)

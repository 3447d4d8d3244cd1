"""A renamed field keeps its companion columns (issue 29 item 12): ``renames`` moves a
Decimal's scale (MariaDB) or its key beside its text (SQLite), an aware datetime's offset and
the sign of -0.0 with the field, on every backend, so every value reads back exactly; the
companions are never dropped and added empty."""

from __future__ import annotations

import datetime as dt
import decimal
import sqlite3
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import pytest
import sqlalchemy as sa
from click.testing import CliRunner

from entityworks import AwareDatetime, SchemaError, Store, table
from entityworks.cli import cli
from entityworks.migrate import apply, describe, diff

D = decimal.Decimal
EAST = dt.timezone(dt.timedelta(hours=5, minutes=30))


@table("account")
@dataclass
class Before:
    id: int
    price: D | None = None
    at: AwareDatetime | None = None
    level: float | None = None


@table("account")
@dataclass
class After:
    id: int
    cost: D | None = None
    when: AwareDatetime | None = None
    height: float | None = None


RENAMES = {"price": "cost", "at": "when", "level": "height"}
ROWS = [
    Before(1, D("1.50"), dt.datetime(2024, 3, 1, 9, 15, tzinfo=EAST), -0.0),
    Before(2, D("-0.0100"), dt.datetime(1999, 12, 31, 23, 59, tzinfo=dt.UTC), 2.5),
    Before(3, None, None, None),
]


def exact(row: After) -> tuple[object, ...]:
    """A row with what equality ignores: a Decimal's exponent, a datetime's offset, the
    sign of a zero."""
    return (
        row.id,
        None if row.cost is None else row.cost.as_tuple(),
        None if row.when is None else (row.when, row.when.utcoffset()),
        None if row.height is None else repr(row.height),
    )


EXPECTED = [exact(After(r.id, r.price, r.at, r.level)) for r in ROWS]


def columns(url: str) -> list[str]:
    engine = sa.create_engine(url)
    try:
        return [c["name"] for c in sa.inspect(engine).get_columns("account")]
    finally:
        engine.dispose()


def test_a_renamed_field_keeps_its_companions_and_their_values(store: Store) -> None:
    store.create(Before)
    store.insert_many(ROWS)
    url = store.engine.url.render_as_string(hide_password=False)
    before = columns(url)
    planned = [describe(op) for op in diff(store, [After], renames=RENAMES)]
    assert all(
        line.startswith("alter column account.") and "rename to" in line for line in planned
    ), planned  # nothing dropped, nothing added
    apply(store, [After], renames=RENAMES)
    after = columns(url)
    moved = {"price": "cost", "at": "when", "level": "height"}

    def renamed(name: str) -> str:
        base, sep, suffix = name.partition("__")
        return moved.get(base, base) + sep + suffix

    assert sorted(after) == sorted(map(renamed, before))  # every companion followed
    assert [exact(r) for r in store.select(After, order_by="id")] == EXPECTED
    assert not diff(store, [After])


def test_the_command_renames_the_companions_too(tmp_path: Path) -> None:
    path = tmp_path / "a.db"
    with Store(path) as store:
        store.create(Before)
        store.insert_many(ROWS)
    result = CliRunner().invoke(
        cli,
        [
            "schema",
            "diff",
            "--db",
            str(path),
            "--dataclass",
            f"{__name__}:After",
            "--rename",
            "price=cost",
            "--rename",
            "at=when",
            "--rename",
            "level=height",
            "--apply",
        ],
    )
    assert result.exit_code == 0, result.output
    with closing(sqlite3.connect(path)) as conn:
        names = [r[1] for r in conn.execute("PRAGMA table_info(account)")]
        texts = conn.execute("SELECT cost FROM account ORDER BY id").fetchall()
    assert "price__key" not in names and {"cost", "cost__key", "when__offset"} <= set(names)
    assert texts == [("1.50",), ("-0.0100",), (None,)]  # what other tools read, kept
    with Store(path) as store:
        assert [exact(r) for r in store.select(After, order_by="id")] == EXPECTED


def test_a_rename_that_would_drop_a_companion_of_an_older_layout_is_refused(tmp_path: Path) -> None:
    """A SQLite table of the earlier Decimal layout (the key under the field's name, the
    exponent in ``price__scale``) has no counterpart of its scale beside the renamed
    field's text: the rename is refused rather than lose the exponents."""
    path = tmp_path / "old.db"
    with closing(sqlite3.connect(path)) as conn:
        conn.execute(
            "CREATE TABLE account (id INTEGER NOT NULL PRIMARY KEY, price TEXT, "
            "price__scale INTEGER)"
        )
        conn.execute("INSERT INTO account VALUES (1, '00000000000000000000000000000000001.5', 2)")
        conn.commit()

    @table("account")
    @dataclass
    class Old:
        id: int
        price: D | None = None

    @table("account")
    @dataclass
    class New:
        id: int
        cost: D | None = None

    with Store(path) as store:
        got = store.get(Old, 1)
        assert got is not None and str(got.price) == "1.50"
        with pytest.raises(SchemaError, match="price__scale"):
            apply(store, [New], renames={"price": "cost"})
        got = store.get(Old, 1)
        assert got is not None and str(got.price) == "1.50"  # nothing changed

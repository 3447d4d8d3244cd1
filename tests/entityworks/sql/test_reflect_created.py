"""Reflection of tables made by ``Store.create``: the logical schema recorded with them gives
back the types of the class that made them (issue 29, item 2 and the parity suite), so the
command line, which reads a table through :meth:`Store.reflect`, sees what the Python API
sees.

Types that no name brings back in another program come back as what is stored: a user's Enum
as its values' type (``int`` or ``str``), a nested dataclass as its JSON object (``dict``).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import enum
import json
import typing
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
import pytest
import sqlalchemy as sa
from click.testing import CliRunner

from entityworks import AwareDatetime, Store, column
from entityworks.cli import cli
from entityworks.sql.logical import TABLE
from tests.entityworks.strategies import AllTypes, Inner, Item, Mood, Rank, same

#: What a field of AllTypes comes back as when its type has no name another program knows.
STORED_AS: dict[str, Any] = {"mood": str, "rank": int | None, "inner": dict, "onested": dict | None}


def hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls, include_extras=True)


def sample() -> AllTypes:
    aware = dt.datetime(
        2024, 2, 29, 23, 59, 59, 123456, tzinfo=dt.timezone(dt.timedelta(hours=-3, minutes=-30))
    )
    return AllTypes(
        id=7,
        i=-(2**63),
        oi=None,
        flag=True,
        f=-0.0,
        of=1.5e308,
        s="a\r\nb",
        os=None,
        raw=b"\x00\xff",
        dec=decimal.Decimal("-1.2300"),
        naive=dt.datetime(1, 1, 1),
        aware=aware,
        day=dt.date(9999, 12, 31),
        clock=dt.time(23, 59, 59, 999999),
        span=dt.timedelta(days=-3, microseconds=1),
        uid=uuid.UUID(int=5),
        mood=Mood.SPACED,
        rank=Rank.LOW,
        tags=["x", ""],
        meta={"k": [1, 2.5, None]},
        pair=(1, -2),
        inner=Inner(3, dt.date(2000, 1, 2), None),
        arr=np.asfortranarray(np.arange(6, dtype=">i8").reshape(2, 3)),
        odec=decimal.Decimal("0.000"),
        oaware=None,
        counts={-1: "minus"},
        pairs=[(1, 2)],
        amounts=[decimal.Decimal("1E-30")],
        onested=None,
        items=[Item("one", None, aware, decimal.Decimal("10.50")), Item("two", 2.5, None, None)],
    )


def test_reflect_gives_the_types_of_the_class_that_created_the_table(store: Store) -> None:
    store.create(AllTypes)
    reflected = store.reflect("all_types")
    want, got = hints(AllTypes), hints(reflected)
    assert list(got) == list(want)
    for name, tp in want.items():
        if name == "items":
            (item,) = typing.get_args(got[name])
            assert typing.get_origin(got[name]) is list
            assert hints(item) == hints(Item)
        else:
            assert got[name] == STORED_AS.get(name, tp), name
    keys = {f.name for f in dataclasses.fields(reflected) if f.metadata.get("primary_key")}
    assert keys == {"id"}


def test_rows_read_through_the_reflected_class_equal_those_written(store: Store) -> None:
    store.create(AllTypes)
    row = sample()
    store.insert(row)
    (back,) = store.select(store.reflect("all_types"))
    for f in dataclasses.fields(AllTypes):
        value, seen = getattr(row, f.name), getattr(back, f.name)
        if f.name in ("mood", "rank"):
            assert seen == value.value and type(seen) is type(value.value), f.name
        elif f.name == "inner":
            assert seen == {"x": 3, "when": "2000-01-02", "note": None}
        elif f.name == "items":
            assert [dataclasses.astuple(i) for i in seen] == [dataclasses.astuple(i) for i in value]
        else:
            assert same(value, seen), (f.name, value, seen)


@dataclasses.dataclass
class Leaf:
    at: AwareDatetime
    weight: decimal.Decimal | None


@dataclasses.dataclass
class Branch:
    uid: uuid.UUID
    leaves: list[Leaf]
    clock: dt.time | None = None


@dataclasses.dataclass
class Tree:
    id: uuid.UUID
    title: str = column(name="label")
    branches: list[Branch] | None = None
    planted: dt.date | None = None


def test_child_tables_of_child_tables_and_an_optional_list(store: Store) -> None:
    store.create(Tree)
    reflected = store.reflect("tree")
    got = hints(reflected)
    assert list(got) == ["id", "label", "planted", "branches"]  # the column's own name
    assert got["id"] is uuid.UUID and got["label"] is str and got["planted"] == dt.date | None
    branches, none = typing.get_args(got["branches"])
    assert none is type(None) and typing.get_origin(branches) is list
    (branch,) = typing.get_args(branches)
    assert list(hints(branch)) == ["uid", "clock", "leaves"]
    assert hints(branch)["uid"] is uuid.UUID and hints(branch)["clock"] == dt.time | None
    (leaf,) = typing.get_args(hints(branch)["leaves"])
    assert hints(leaf) == hints(Leaf)

    at = dt.datetime(2020, 5, 6, 7, 8, 9, tzinfo=dt.timezone(dt.timedelta(hours=5)))
    trees = [
        Tree(
            uuid.UUID(int=1),
            "a",
            [
                Branch(
                    uuid.UUID(int=2),
                    [Leaf(at, decimal.Decimal("1.10")), Leaf(at, None)],
                    dt.time(1),
                )
            ],
        ),
        Tree(uuid.UUID(int=3), "b", None, dt.date(2001, 1, 1)),
        Tree(uuid.UUID(int=4), "c", []),
    ]
    store.insert_many(trees)
    back = sorted(store.select(reflected), key=lambda t: t.id)
    assert [(t.id, t.label, t.planted) for t in back] == [(t.id, t.title, t.planted) for t in trees]
    assert [t.branches is None for t in back] == [
        True if t.branches is None else False for t in trees
    ]
    (first,) = back[0].branches
    assert (first.uid, first.clock) == (uuid.UUID(int=2), dt.time(1))
    assert [(lf.at, lf.at.utcoffset(), lf.weight) for lf in first.leaves] == [
        (at, dt.timedelta(hours=5), decimal.Decimal("1.10")),
        (at, dt.timedelta(hours=5), None),
    ]
    assert str(first.leaves[0].weight) == "1.10"
    assert back[2].branches == []


def _recorded_tables(store: Store) -> set[str]:
    with store.engine.connect() as conn:
        if not sa.inspect(conn).has_table(TABLE):
            return set()
        return set(conn.execute(sa.text(f"SELECT DISTINCT table_name FROM {TABLE}")).scalars())


def test_drop_forgets_and_a_new_table_of_that_name_is_recorded_anew(store: Store) -> None:
    store.create(Tree)
    assert _recorded_tables(store) == {"tree", "tree_branches", "tree_branches_leaves"}
    store.drop(Tree)
    assert _recorded_tables(store) == set()

    @dataclasses.dataclass
    class Other:
        id: int
        uid: str | None

    Other.__tablename__ = "tree"  # type: ignore[attr-defined]
    store.create(Other)
    assert hints(store.reflect("tree")) == {"id": int, "uid": str | None}


@pytest.mark.parametrize("backend_url", ["sqlite", "postgresql"], indirect=True)
def test_a_create_rolled_back_records_nothing(store: Store) -> None:
    with pytest.raises(RuntimeError), store.transaction():
        store.create(Tree)
        raise RuntimeError("undo")
    assert "tree" not in store.table_names()
    assert _recorded_tables(store) == set()


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclasses.dataclass
class Paint:
    id: uuid.UUID
    colour: Colour
    price: decimal.Decimal
    mixed: AwareDatetime
    span: dt.timedelta
    clock: dt.time
    codes: list[tuple[int, int]]


def test_cli_export_and_parquet_of_a_created_table_equal_the_python_api(
    backend_url: str, tmp_path: Path
) -> None:
    rows = [
        Paint(
            uuid.UUID(int=9),
            Colour.BLUE,
            decimal.Decimal("12.340"),
            dt.datetime(2021, 1, 2, 3, 4, 5, tzinfo=dt.timezone(dt.timedelta(hours=2))),
            dt.timedelta(days=-1, seconds=5),
            dt.time(12, 0, 0, 1),
            [(1, 2), (3, -4)],
        )
    ]
    with Store(backend_url) as store:
        store.create(Paint)
        store.insert_many(rows)
        store.export_xml(Paint, tmp_path / "api.xml", tmp_path / "api.xsd")
        api_table = store.to_arrow(Paint)
    runner = CliRunner()
    result = runner.invoke(
        cli,
        ["export-xml", "paint", str(tmp_path / "cli.xml"), "--db", backend_url],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.stderr
    assert (tmp_path / "cli.xml").read_bytes() == (tmp_path / "api.xml").read_bytes()
    assert (tmp_path / "cli.xsd").read_bytes() == (tmp_path / "api.xsd").read_bytes()
    result = runner.invoke(
        cli,
        ["parquet", "paint", str(tmp_path / "cli.parquet"), "--db", backend_url],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.stderr
    cli_table = pq.read_table(tmp_path / "cli.parquet")
    assert cli_table.schema.remove_metadata() == api_table.schema.remove_metadata()
    assert cli_table.to_pylist() == api_table.to_pylist()
    result = runner.invoke(
        cli, ["query", "paint", "--format", "jsonl", "--db", backend_url], catch_exceptions=False
    )
    assert result.exit_code == 0, result.stderr
    (seen,) = [json.loads(line) for line in result.stdout.splitlines()]
    assert (seen["id"], seen["colour"], seen["price"], seen["codes"]) == (
        str(uuid.UUID(int=9)),
        "blue",
        "12.340",
        [[1, 2], [3, -4]],
    )
    # the logical schema's table is internal: 'tables' lists the user's tables only
    result = runner.invoke(cli, ["tables", "--db", backend_url], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    assert "paint" in result.stdout and TABLE not in result.stdout


@dataclasses.dataclass
class Shelf:
    id: int
    uid: uuid.UUID
    price: decimal.Decimal


def test_a_field_made_optional_by_a_migration_reflects_optional_with_its_type(store: Store) -> None:
    from entityworks import migrate

    store.create(Shelf)

    @dataclasses.dataclass
    class Later:
        id: int
        uid: uuid.UUID | None
        price: decimal.Decimal | None

    Later.__tablename__ = "shelf"  # type: ignore[attr-defined]
    migrate.apply(store, Later)
    assert hints(store.reflect("shelf")) == hints(Later)
    store.insert(Later(1, None, None))
    assert [(r.uid, r.price) for r in store.select(store.reflect("shelf"))] == [(None, None)]

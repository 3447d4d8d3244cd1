"""Chains of ON DELETE CASCADE foreign keys agree on every backend (issue 29, item 12).

MariaDB (InnoDB) refuses a delete whose cascade reaches rows 15 foreign keys down, which
SQLite and PostgreSQL apply. entityworks therefore allows chains of at most 14 foreign keys
that a delete acts through (CASCADE, or SET NULL at the end, a child table's parent key
included) and refuses longer ones on every backend when the class is first used; a chain of
14 deletes whole everywhere, MariaDB included.
"""

from __future__ import annotations

from dataclasses import dataclass, field, make_dataclass
from typing import Any

import pytest
import sqlalchemy as sa

from entityworks import SchemaError, Store, column
from entityworks.sql._database import MAX_CASCADE_LEVELS


def chain(tables: int, last: str = "cascade", optional_last: bool = False) -> list[type]:
    """``tables`` classes, each referring to the one before (``last``: the bottom link's
    ON DELETE action)."""
    classes: list[type] = []
    for i in range(tables):
        fields: list[Any] = [("id", int)]
        if classes:
            action = last if i == tables - 1 else "cascade"
            kind = (
                int | None if action == "set null" or (optional_last and i == tables - 1) else int
            )
            fields.append(("up", kind, column(references=classes[-1], on_delete=action)))
        cls = make_dataclass(f"Link{i:02d}", fields)
        cls.__module__ = __name__
        classes.append(cls)
    return classes


def fill(store: Store, classes: list[type]) -> None:
    for i, cls in enumerate(classes):
        store.create(cls)
        store.insert(cls(1) if i == 0 else cls(1, 1))


def table_names(url: str) -> set[str]:
    engine = sa.create_engine(url)
    try:
        return set(sa.inspect(engine).get_table_names())
    finally:
        engine.dispose()


def test_fourteen_levels_cascade_whole_on_every_backend(store: Store) -> None:
    classes = chain(MAX_CASCADE_LEVELS + 1)
    fill(store, classes)
    store.delete(classes[0](1))
    assert [store.count(cls) for cls in classes] == [0] * len(classes)


def test_set_null_as_the_fifteenth_level_is_applied_up_to_fourteen(store: Store) -> None:
    classes = chain(MAX_CASCADE_LEVELS + 1, last="set null")
    fill(store, classes)
    store.delete(classes[0](1))
    assert [store.count(cls) for cls in classes] == [0] * MAX_CASCADE_LEVELS + [1]
    assert store.get(classes[-1], 1).up is None


@pytest.mark.parametrize("last", ["cascade", "set null"])
def test_fifteen_levels_are_refused_on_every_backend(
    store: Store, backend_url: str, last: str
) -> None:
    classes = chain(MAX_CASCADE_LEVELS + 2, last=last)
    fill(store, classes[:-1])
    bottom = classes[-1]
    with pytest.raises(
        SchemaError,
        match=r"Link15\.up: deleting a row of 'link00' would act "
        r"through 15 foreign keys.*link14 <- link15\).*"
        r"MariaDB applies at most 14",
    ) as caught:
        store.create(bottom)
    assert caught.value.cls is bottom and caught.value.field == "up"
    with pytest.raises(SchemaError, match="15 foreign keys"):
        store.insert(bottom(1, 1))  # any use of the class, not only create
    assert "link15" not in table_names(backend_url)
    store.delete(classes[0](1))  # the chain of 14 below it still works
    assert store.count(classes[MAX_CASCADE_LEVELS]) == 0


def test_a_child_table_is_a_level_too(store: Store) -> None:
    @dataclass
    class Leaf:
        n: int

    classes = chain(MAX_CASCADE_LEVELS)  # 13 foreign keys
    bottom = make_dataclass(
        "Bottom",
        [
            ("id", int),
            ("up", int, column(references=classes[-1], on_delete="cascade")),
            ("leaves", list[Leaf], field(default_factory=list)),
        ],
    )
    bottom.__module__ = __name__
    with pytest.raises(
        SchemaError,
        match=r"Bottom\.leaves: .* through 15 foreign "
        r"keys.*link13 <- bottom <- bottom_leaves\)",
    ):
        store.create(bottom)


def test_restrict_ends_a_chain(store: Store) -> None:
    classes = chain(MAX_CASCADE_LEVELS + 1)
    stop = make_dataclass(
        "Stop", [("id", int), ("up", int, column(references=classes[-1], on_delete="restrict"))]
    )
    stop.__module__ = __name__
    below = make_dataclass(
        "Below", [("id", int), ("up", int, column(references=stop, on_delete="cascade"))]
    )
    below.__module__ = __name__
    fill(store, classes)
    store.create(stop)
    store.create(below)  # its cascade starts again at Stop
    assert store.count(below) == 0


def test_mariadb_itself_stops_at_fifteen_levels(mariadb_url: str) -> None:
    """The reason for the limit, in plain SQL: 14 levels cascade, 15 are refused."""
    engine = sa.create_engine(mariadb_url)
    try:
        for levels, cascades in ((MAX_CASCADE_LEVELS, True), (MAX_CASCADE_LEVELS + 1, False)):
            metadata = sa.MetaData()
            metadata.reflect(engine)
            metadata.drop_all(engine)
            with engine.begin() as conn:
                conn.exec_driver_sql("CREATE TABLE t0 (id INT PRIMARY KEY)")
                for i in range(1, levels + 1):
                    conn.exec_driver_sql(
                        f"CREATE TABLE t{i} (id INT PRIMARY KEY, up INT, FOREIGN KEY (up) "
                        f"REFERENCES t{i - 1} (id) ON DELETE CASCADE)"
                    )
                conn.exec_driver_sql("INSERT INTO t0 VALUES (1)")
                for i in range(1, levels + 1):
                    conn.exec_driver_sql(f"INSERT INTO t{i} VALUES (1, 1)")
            if cascades:
                with engine.begin() as conn:
                    conn.exec_driver_sql("DELETE FROM t0")
                    assert conn.exec_driver_sql(f"SELECT COUNT(*) FROM t{levels}").scalar() == 0
            else:
                with pytest.raises(sa.exc.DBAPIError), engine.begin() as conn:
                    conn.exec_driver_sql("DELETE FROM t0")
        metadata = sa.MetaData()
        metadata.reflect(engine)
        metadata.drop_all(engine)
    finally:
        engine.dispose()

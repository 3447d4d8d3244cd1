"""PostgreSQL's jsonb, the JSON type of a new table: what its own shell and operators see is
what the Store wrote, the bulk path (binary COPY) and the one-row path store the same values,
a GIN index serves the filters, and a table of entityworks 0.8 (``json``, whose text is kept
as written) keeps working and converts to jsonb with the how-to's Alembic operation.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
import sqlalchemy as sa

from entityworks import EntityworksError, Store, col, table
from tests.entityworks.strategies import same


@table("jb_item")
@dataclass
class Item:
    id: int | None
    meta: dict[str, Any]
    tags: list[Any]


#: Values whose jsonb form differs from Python's JSON text (exponents, a long mantissa,
#: big ints, unicode, escapes), each read back equal and of its type.
ODD = {
    "floats": [1e16, -1e22, 1.5e20, 1.7976931348623157e308, 1.5e-7, 2.0**-1074, 0.1, 2.5],
    "ints": [0, -1, 2**63, -(2**80), 10**40],
    "text": ['quote " backslash \\ tab \t', "é☃😀", "\u2028", "1e+16", "-0.0"],
    "nested": {"b": {"a": [True, False, None]}, "a": []},
}


@pytest.fixture
def pg(pg_url: str) -> Iterator[Store]:
    with Store(pg_url) as store:
        store.drop(Item)
        store.create(Item)
        yield store
        store.drop(Item)


def _server_equal(store: Store, id_: int, value: dict[str, Any]) -> bool:
    """The server's own jsonb equality of the stored meta with ``value`` (Python's JSON
    text, which PostgreSQL parses itself)."""
    with store.engine.connect() as conn:
        return bool(
            conn.execute(
                sa.text("SELECT meta = CAST(:v AS jsonb) FROM jb_item WHERE id = :id"),
                {"v": json.dumps(value), "id": id_},
            ).scalar_one()
        )


def test_bulk_and_one_row_writes_store_the_same_jsonb(
    pg: Store, caplog: pytest.LogCaptureFixture
) -> None:
    many = [Item(None, dict(ODD, n=i), [i, float(i), str(i)]) for i in range(3000)]
    with caplog.at_level(logging.INFO, logger="entityworks.sql"):
        pg.insert_many(many)  # binary COPY (jsonb's binary form)
    statements = [r.getMessage() for r in caplog.records if "jb_item" in r.getMessage()]
    assert statements and all(s.startswith("COPY jb_item") for s in statements), statements
    one = Item(None, dict(ODD, n=-1), [-1, -1.0, "-1"])
    pg.insert(one)  # a statement, the text cast to jsonb
    assert one.id is not None and many[-1].id is not None
    with pg.engine.connect() as conn:
        kinds = conn.execute(sa.text("SELECT DISTINCT pg_typeof(meta)::text FROM jb_item"))
        assert kinds.scalars().all() == ["jsonb"]
        # the database's own operators read the values Python wrote
        assert conn.execute(
            sa.text(
                "SELECT meta->'floats'->>0, jsonb_typeof(meta->'floats'->0), "
                "meta->'text'->>1, (meta->'ints'->>4)::numeric = 1e40 FROM jb_item "
                "WHERE id = :id"
            ),
            {"id": many[7].id},
        ).one() == ("10000000000000000.0", "number", "é☃😀", True)
    for item in (many[0], many[2999], one):
        back = pg.get(Item, item.id)
        assert back == item
        assert same(back.meta["floats"], item.meta["floats"])  # floats stay floats
        assert same(back.meta["ints"], item.meta["ints"])
        assert _server_equal(pg, item.id, item.meta)
    assert pg.count(Item, where=col("meta")["n"] >= 2990) == 10


def test_negative_zero_is_refused_on_both_paths_and_nothing_is_written(pg: Store) -> None:
    pg.insert(Item(1, {"ok": 0.0}, []))
    for write in (
        lambda: pg.insert_many([Item(2, {"ok": 1}, []), Item(3, {"x": [1, -0.0]}, [])]),
        lambda: pg.insert(Item(4, {"ok": 1}, [-0.0])),
        lambda: pg.upsert(Item(1, {"x": {"y": -0.0}}, [])),
    ):
        with pytest.raises(EntityworksError) as refused:
            write()
        assert "-0.0" in str(refused.value)
    assert [(i.id, i.meta) for i in pg.select(Item)] == [(1, {"ok": 0.0})]


def test_a_gin_index_serves_containment(pg: Store) -> None:
    pg.insert_many([Item(None, {"size": i % 50, "kind": f"k{i % 7}"}, []) for i in range(2000)])
    where = col("meta").contains({"kind": "k3", "size": 10})
    want = sorted(i.id for i in pg.select(Item) if i.meta == {"size": 10, "kind": "k3"})
    assert want and sorted(i.id for i in pg.select(Item, where=where)) == want
    with pg.engine.begin() as conn:
        conn.execute(sa.text("CREATE INDEX jb_item_meta ON jb_item USING GIN (meta)"))
        conn.execute(sa.text("ANALYZE jb_item"))
    seen: list[tuple[str, Any]] = []

    def statement(_conn: Any, _cursor: Any, sql: str, params: Any, *_: Any) -> None:
        seen.append((sql, params))

    sa.event.listen(pg.engine, "before_cursor_execute", statement)
    try:
        assert sorted(i.id for i in pg.select(Item, where=where)) == want
    finally:
        sa.event.remove(pg.engine, "before_cursor_execute", statement)
    [(sql, params)] = [s for s in seen if "@>" in s[0]]
    with pg.engine.begin() as conn:  # the Store's own statement, as the planner runs it
        conn.exec_driver_sql("SET LOCAL enable_seqscan = off")
        plan = conn.exec_driver_sql("EXPLAIN " + sql, params).scalars().all()
    assert "jb_item_meta" in "\n".join(plan)


def test_a_json_table_of_entityworks_0_8_keeps_its_text_then_converts(pg_url: str) -> None:
    from alembic.migration import MigrationContext
    from alembic.operations import Operations
    from sqlalchemy.dialects import postgresql

    engine = sa.create_engine(pg_url)
    try:
        with engine.begin() as conn:
            conn.execute(sa.text("DROP TABLE IF EXISTS jb_item"))
            # as entityworks 0.8 made it: json columns, compact text
            conn.execute(
                sa.text(
                    "CREATE TABLE jb_item (id BIGSERIAL PRIMARY KEY, meta JSON NOT NULL, "
                    "tags JSON NOT NULL)"
                )
            )
            conn.execute(
                sa.text("INSERT INTO jb_item (meta, tags) VALUES (:m, '[]')"),
                {"m": '{"z":1,"a":-0.0,"size":5}'},
            )
        with Store(pg_url) as store:
            store.create(Item)  # binds to the json columns: their text kept as written
            store.insert_many([Item(None, {"z": [-0.0, 1e16], "size": 2}, [])])
            back = store.get(Item, 2)
            assert same(back.meta, {"z": [-0.0, 1e16], "size": 2})
            assert list(back.meta) == ["z", "size"]
            assert same(store.get(Item, 1).meta, {"z": 1, "a": -0.0, "size": 5})
            assert [i.id for i in store.select(Item, where=col("meta")["size"] >= 3)] == [1]
            store.delete(Item, where={})  # jsonb would turn these -0.0 into 0.0
            store.insert_many([Item(None, {"size": 7, "big": 1e16}, [1.5])])
        with engine.begin() as conn:  # the how-to's conversion
            op = Operations(MigrationContext.configure(conn))
            for name in ("meta", "tags"):
                op.alter_column(
                    "jb_item",
                    name,
                    type_=postgresql.JSONB(),
                    existing_type=sa.JSON(),
                    existing_nullable=False,
                    postgresql_using=f"{name}::jsonb",
                )
        with Store(pg_url) as store:
            store.create(Item)
            store.insert(Item(None, {"size": 9, "big": 1e22}, []))
            assert [(i.meta, i.tags) for i in store.select(Item, order_by="id")] == [
                ({"size": 7, "big": 1e16}, [1.5]),
                ({"size": 9, "big": 1e22}, []),
            ]
            assert isinstance(store.get(Item, 4).meta["big"], float)
            assert store.count(Item, where=col("meta")["size"] >= 8) == 1
            with pytest.raises(EntityworksError, match="-0.0"):
                store.insert(Item(None, {"z": -0.0}, []))
        with engine.connect() as conn:
            kinds = conn.execute(sa.text("SELECT DISTINCT pg_typeof(meta)::text FROM jb_item"))
            assert kinds.scalars().all() == ["jsonb"]
    finally:
        with engine.begin() as conn:
            conn.execute(sa.text("DROP TABLE IF EXISTS jb_item"))
        engine.dispose()

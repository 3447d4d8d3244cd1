"""Every query the catalog offers (and those the README shows) reaches ``maps`` through an
index: ``EXPLAIN QUERY PLAN`` of each statement it runs on SQLite shows a SEARCH (or an
ordered walk of an index, or of the table by its key, under a LIMIT), never a full scan of
the table. The range queries of the designer benchmark are answered from an index holding
every column they filter on (only matching rows are read), on SQLite and PostgreSQL."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
import sqlalchemy as sa

from entityworks import Store, col
from entityworks.catalog import (
    MapRecord,
    find_maps,
    generate_maps,
    largest_maps,
    open_catalog,
    sample_maps,
    single_region_maps,
)
from entityworks.catalog import table_class as catalog_table

QUERIES: dict[str, Callable[[Store], Any]] = {
    "find_maps kind + size + regions + ratio (README)": lambda s: find_maps(
        s, kind="caves", width=(80, 120), height=(40, 60), regions=1, open_ratio=(0.45, None)
    ),
    "query maps -w width/height ranges -w region_count=1 -w open_ratio>=0.45 "
    "-o -open_ratio": lambda s: list(
        s.select(
            MapRecord,
            where=[
                col("width") >= 80,
                col("width") <= 120,
                col("height") >= 40,
                col("height") <= 60,
                col("region_count") == 1,
                col("open_ratio") >= 0.45,
            ],
            order_by="-open_ratio",
            limit=3,
        )
    ),
    "query maps -w kind=caves -o -largest_region --limit 3": lambda s: list(
        s.select(MapRecord, where={"kind": "caves"}, order_by="-largest_region", limit=3)
    ),
    "demo: -w region_count=1 -o -largest_region --limit 5": lambda s: list(
        s.select(MapRecord, where={"region_count": 1}, order_by="-largest_region", limit=5)
    ),
    "find_maps kind": lambda s: find_maps(s, kind="dungeon"),
    "find_maps kind + width": lambda s: find_maps(s, kind="caves", width=60),
    "find_maps kind + size ranges": lambda s: find_maps(
        s, kind="islands", width=(30, 50), height=(20, 35)
    ),
    "find_maps regions range, fewest regions first": lambda s: find_maps(
        s, regions=(2, 5), order_by=["region_count", "id"], limit=10
    ),
    "find_maps regions + ratio": lambda s: find_maps(s, regions=1, open_ratio=(0.3, 0.6)),
    "find_maps seed": lambda s: find_maps(s, seed=11),
    "find_maps seed + kind": lambda s: find_maps(s, seed=10, kind="caves"),
    "largest_maps": lambda s: largest_maps(s, 3),
    "largest_maps kind": lambda s: largest_maps(s, 3, kind="dungeon"),
    "single_region_maps": lambda s: single_region_maps(s),
    "single_region_maps kind": lambda s: single_region_maps(s, kind="dungeon"),
    "sample_maps kind": lambda s: sample_maps(s, 3, kind="caves", seed=2),
    "sample_maps": lambda s: sample_maps(s, 4, seed=3),
    "query maps_rooms -w parent_key=23": lambda s: list(
        s.select(catalog_table("maps_rooms"), where={"parent_key": 5})
    ),
}


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Store:
    store = open_catalog(tmp_path_factory.mktemp("indexes") / "catalog.db")
    for kind in ("caves", "dungeon", "islands"):
        for chunk in generate_maps(kind, 4, seed=10, params={"width": 40, "height": 30}):
            store.insert_many(chunk)
    yield store
    store.close()


def _statements(store: Store, query: Callable[[Store], Any]) -> list[tuple[str, Any]]:
    seen: list[tuple[str, Any]] = []

    def record(
        _conn: Any, _cursor: Any, statement: str, parameters: Any, _context: Any, executemany: bool
    ) -> None:
        if statement.lstrip().upper().startswith("SELECT") and not executemany:
            seen.append((statement, parameters))

    sa.event.listen(store.engine, "before_cursor_execute", record)
    try:
        query(store)
    finally:
        sa.event.remove(store.engine, "before_cursor_execute", record)
    return seen


def _plan(store: Store, statement: str, parameters: Any) -> list[str]:
    with store.engine.connect() as conn:
        raw = conn.connection.dbapi_connection
        rows = raw.execute(f"EXPLAIN QUERY PLAN {statement}", parameters).fetchall()
        conn.rollback()
    return [row[-1] for row in rows]


FULL_SCAN = re.compile(r"^SCAN (maps\w*)(?! USING (COVERING )?INDEX)")
#: a statement walking ``maps`` in key order that stops at its LIMIT (no WHERE)
KEY_WALK = re.compile(r"FROM maps ORDER BY maps\.id (ASC|DESC)\s+LIMIT ", re.S)


def _full_scans(plan: list[str], statement: str) -> list[str]:
    scans = [line for line in plan if FULL_SCAN.match(line)]
    if (
        scans == ["SCAN maps"]
        and KEY_WALK.search(statement)
        and not any("TEMP B-TREE" in line for line in plan)
    ):
        return []  # the table's own b-tree, in key order, read up to the limit
    return scans


@pytest.mark.parametrize("name", list(QUERIES))
def test_catalog_query_uses_an_index(catalog, name):
    statements = _statements(catalog, QUERIES[name])
    assert statements, "the query ran no SELECT"
    for statement, parameters in statements:
        plan = _plan(catalog, statement, parameters)
        scans = _full_scans(plan, statement)
        assert not scans, f"{name}: full scan in {plan} for {statement}"
        on_maps = [line for line in plan if re.match(r"^(SEARCH|SCAN) maps\b", line)]
        if " FROM maps " in " ".join(statement.split()) + " " and "WHERE" in statement:
            assert any(line.startswith("SEARCH maps") for line in on_maps), (name, plan)
        if name.startswith("largest_maps") and " FROM maps " in statement + " ":
            # the index holds the order: ties are not sorted (a big catalog has thousands)
            assert not any("TEMP B-TREE" in line for line in plan), (name, plan)


def test_a_query_without_an_index_would_be_caught(catalog):
    """The check itself: a filter on a column no index leads is reported as a full scan."""
    [(statement, parameters)] = _statements(
        catalog, lambda s: list(s.select(MapRecord, where=col("generator") == "x"))
    )
    assert any(FULL_SCAN.match(line) for line in _plan(catalog, statement, parameters))


def test_a_key_walk_without_a_limit_is_still_a_full_scan(catalog):
    [(statement, parameters)] = _statements(
        catalog, lambda s: list(s.select(catalog_table("maps_rooms"), order_by="parent_key"))
    )
    [(maps_statement, maps_parameters)] = _statements(
        catalog, lambda s: list(s.rows(MapRecord, order_by="id"))
    )
    assert _full_scans(_plan(catalog, maps_statement, maps_parameters), maps_statement)


#: The range queries of ``benchmarks/bench_catalog.py``: each must be answered by an index
#: that holds every column it filters on, so that a row is read only when it matches.
RANGE_QUERIES: dict[str, tuple[Callable[[Store], Any], set[str]]] = {
    "README: 80-120 x 40-60, 1 region, >= 45 % open, -open_ratio, limit 3": (
        QUERIES[
            "query maps -w width/height ranges -w region_count=1 -w open_ratio>=0.45 -o -open_ratio"
        ],
        {"width", "height", "region_count", "open_ratio"},
    ),
    "find_maps caves 80-120 x 40-60, 1 region, >= 45 % open, limit 20": (
        lambda s: find_maps(
            s,
            kind="caves",
            width=(80, 120),
            height=(40, 60),
            regions=1,
            open_ratio=(0.45, None),
            limit=20,
        ),
        {"kind", "width", "height", "region_count", "open_ratio"},
    ),
    "find_maps 1 region, open 0.40-0.41, limit 20": (
        lambda s: find_maps(s, regions=1, open_ratio=(0.40, 0.41), limit=20),
        {"region_count", "open_ratio"},
    ),
}
USING = re.compile(r"^SEARCH maps USING (?:COVERING )?INDEX (\w+) ")


@pytest.mark.parametrize("name", list(RANGE_QUERIES))
def test_range_queries_filter_inside_one_index(catalog, name):
    query, filtered = RANGE_QUERIES[name]
    [(statement, parameters)] = [
        (st, p)
        for st, p in _statements(catalog, query)
        if " FROM maps " in " ".join(st.split()) + " "
    ]
    plan = _plan(catalog, statement, parameters)
    [index] = [m.group(1) for line in plan if (m := USING.match(line))]
    with catalog.engine.connect() as conn:
        columns = {
            row[2] for row in conn.exec_driver_sql("SELECT * FROM pragma_index_info(?)", (index,))
        }
    assert filtered <= columns, (name, index, columns)


@pytest.fixture(scope="module")
def pg_catalog(pg_url: str) -> Store:
    """The same catalog on PostgreSQL, its sequential scans switched off for EXPLAIN (a
    dozen rows: the planner would rightly read the table instead of any index)."""
    from tests.entityworks.conftest import _drop_everything

    _drop_everything(pg_url)
    store = open_catalog(pg_url)
    for kind in ("caves", "dungeon", "islands"):
        for chunk in generate_maps(kind, 4, seed=10, params={"width": 40, "height": 30}):
            store.insert_many(chunk)
    yield store
    store.close()
    _drop_everything(pg_url)


PG_INDEX = re.compile(
    r"Index (?:Only )?Scan(?: Backward)? using (\w+) on maps\b|"
    r"Bitmap Index Scan on (\w+)"
)


@pytest.mark.parametrize(
    "name", [*RANGE_QUERIES, "largest_maps kind", "find_maps seed", "sample_maps kind"]
)
def test_postgresql_can_answer_from_an_index(pg_catalog, name):
    """With sequential scans off, PostgreSQL's plan for each statement on ``maps`` uses an
    index. (Which of two usable indexes it picks for a dozen rows is a cost call, so the
    columns are checked on SQLite only.)"""
    query = RANGE_QUERIES[name][0] if name in RANGE_QUERIES else QUERIES[name]
    statements = [
        (st, p)
        for st, p in _statements(pg_catalog, query)
        if " FROM maps " in " ".join(st.split()) + " "
    ]
    assert statements
    for statement, parameters in statements:
        with pg_catalog.engine.connect() as conn:
            conn.exec_driver_sql("SET LOCAL enable_seqscan = off")
            plan = [row[0] for row in conn.exec_driver_sql(f"EXPLAIN {statement}", parameters)]
            conn.rollback()
        indexes = {a or b for line in plan for a, b in PG_INDEX.findall(line)}
        assert indexes and not any("Seq Scan on maps " in line + " " for line in plan), (name, plan)

"""``AsyncStore`` (issue 32, item 1): the Store's API as coroutines on SQLAlchemy's asyncio
engines, on every backend, checked against the sync Store and plain SQLAlchemy reading the
same database: round trips, the exact-or-refused writes, concurrent tasks on one store, a
transaction per task, and a task cancelled part-way through ``insert_many``."""

from __future__ import annotations

import asyncio
import contextlib
import decimal
import logging
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
import sqlalchemy as sa

from entityworks import (
    AsyncStore,
    ConfigurationError,
    EntityworksError,
    NotFoundError,
    Store,
    WriteError,
    col,
    column,
)
from entityworks.sql.asyncstore import STREAM_BATCH

for _driver in ("aiosqlite", "aiomysql", "greenlet"):
    pytest.importorskip(
        _driver,
        reason=f"{_driver} is not installed (pip install -e '.[async]'; the test extra has it)",
    )


@dataclass
class Step:
    x: int
    label: str | None = None


@dataclass
class Path:
    id: int | None
    name: str = column(unique=True, max_length=40)
    cost: decimal.Decimal = decimal.Decimal("0")
    steps: list[Step] = field(default_factory=list)


@dataclass
class Point:
    id: int
    x: int
    tag: str = ""


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def rows_in(url: str, table: str) -> int:
    """The table's row count as plain SQLAlchemy (the sync driver) reads it."""
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            quoted = conn.dialect.identifier_preparer.quote(table)
            return int(conn.exec_driver_sql(f"SELECT COUNT(*) FROM {quoted}").scalar_one())
    finally:
        engine.dispose()


def paths(n: int, start: int = 0) -> list[Path]:
    return [
        Path(None, f"p{i}", decimal.Decimal(f"{i}.25"), [Step(j, f"s{j}") for j in range(i % 3)])
        for i in range(start, start + n)
    ]


@pytest.fixture
def url(backend_url: str) -> Iterator[str]:
    yield backend_url


def test_the_url_is_mapped_to_the_backends_asyncio_driver(url: str) -> None:
    async def main() -> str:
        async with AsyncStore(url) as store:
            return store.url.get_driver_name()

    driver = run(main())
    assert driver in {"aiosqlite", "psycopg_async", "aiomysql"}
    assert sa.make_url(url).get_backend_name() == run(_backend_name(url))


async def _backend_name(url: str) -> str:
    async with AsyncStore(url) as store:
        return store.url.get_backend_name()


def test_a_path_or_a_url_naming_the_asyncio_driver_is_taken(tmp_path: Any) -> None:
    async def main(given: Any) -> int:
        async with AsyncStore(given) as store:
            assert store.url.get_driver_name() == "aiosqlite"
            await store.create(Point)
            await store.insert(Point(1, 2))
            return await store.count(Point)

    assert run(main(tmp_path / "a.db")) == 1
    with pytest.raises(WriteError):  # the same file: key 1 is taken
        run(main(f"sqlite+aiosqlite:///{tmp_path / 'a.db'}"))
    assert rows_in(f"sqlite:///{tmp_path / 'a.db'}", "point") == 1


def test_a_missing_asyncio_driver_names_the_extra_that_installs_it(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "aiosqlite", None)  # import aiosqlite: not installed
    with pytest.raises(ConfigurationError, match=r"entityworks\[async\]"):
        AsyncStore(tmp_path / "x.db")


def test_a_url_of_another_asyncio_driver_is_refused_before_connecting() -> None:
    with pytest.raises(ConfigurationError) as info:
        AsyncStore("postgresql+asyncpg://user:secret@localhost/db")
    assert "secret" not in str(info.value)
    assert "psycopg_async" in str(info.value)


def test_pymysql_tls_options_map_to_aiomysql_or_are_refused_before_connecting() -> None:
    """PyMySQL's ``ssl_disabled=true`` is aiomysql's default (no TLS without an SSLContext)
    and is dropped; the other ``ssl_*`` options, which aiomysql's connect does not take, are
    refused naming them, before any connection (no server here: port 9 is closed)."""

    async def opened(url: str) -> sa.URL:
        store = AsyncStore(url)
        try:
            return store.url
        finally:
            await store.close()

    base = "mysql+pymysql://user:secret@127.0.0.1:9/db"
    for value in ("true", "1", "True"):
        mapped = run(opened(f"{base}?ssl_disabled={value}&charset=utf8mb4"))
        assert mapped.get_driver_name() == "aiomysql"
        assert dict(mapped.query) == {"charset": "utf8mb4"}
    for query in ("ssl_disabled=false", "ssl_verify_cert=true", "ssl_ca=/ca.pem&ssl_disabled=1"):
        with pytest.raises(ConfigurationError) as info:
            AsyncStore(f"{base}?{query}")
        for name in (pair.partition("=")[0] for pair in query.split("&")):
            assert name in str(info.value)
        assert "secret" not in str(info.value)
    # a URL naming aiomysql keeps what it says
    assert run(opened("mysql+aiomysql://u@127.0.0.1:9/db?ssl_disabled=true")).query == {
        "ssl_disabled": "true"
    }


def test_round_trip_agrees_with_the_sync_store(url: str) -> None:
    given = paths(25)

    async def main() -> tuple[list[Path], Path | None, int, list[Any], list[Any]]:
        async with AsyncStore(url) as store:
            await store.create(Path)
            assert await store.insert_many(given) == 25
            one = await store.insert(Path(None, "single", decimal.Decimal("1.50"), [Step(7)]))
            got = await store.get(Path, one.id)
            listed = [p async for p in store.select(Path, order_by="id")]
            named = [r async for r in store.select(Path, columns=["name"], where={"id": one.id})]
            dicts = [d async for d in store.select(Path, as_dict=True, limit=2, order_by="id")]
            assert [d["name"] for d in dicts] == ["p0", "p1"]
            return listed, got, await store.count(Path), named, [one.id]

    listed, got, count, named, (key,) = run(main())
    with Store(url) as sync:
        assert listed == list(sync.select(Path, order_by="id"))
        assert got == sync.get(Path, key)
    assert got is not None and got.cost == decimal.Decimal("1.50") and got.steps == [Step(7)]
    assert count == 26 == rows_in(url, "path")
    assert named == [("single",)]
    assert [p.id for p in listed[:25]] == [p.id for p in given]  # keys set on the instances


def test_upsert_update_delete(url: str) -> None:
    async def main() -> list[Point]:
        async with AsyncStore(url) as store:
            await store.create(Point)
            await store.insert_many([Point(i, i * 10) for i in range(5)])
            await store.upsert(Point(1, -1, "up"))
            await store.upsert(Point(9, 90))
            assert await store.upsert_many([Point(2, 2), Point(10, 100)]) == 2
            assert await store.update(Point, {"tag": "big"}, where=col("x") >= 40) == 3
            await store.update(Point(0, 5, "whole"))
            with pytest.raises(NotFoundError):
                await store.update(Point(77, 0))
            assert await store.delete(Point(3, 0)) == 1
            assert await store.delete(Point, where=col("x") >= 90) == 2
            return [p async for p in store.select(Point, order_by="id")]

    got = run(main())
    with Store(url) as sync:
        assert got == list(sync.select(Point, order_by="id"))
    assert got == [Point(0, 5, "whole"), Point(1, -1, "up"), Point(2, 2), Point(4, 40, "big")]


def _bad_rows(where: str) -> list[Path]:
    rows = paths(3000)
    if where == "value":
        rows[2500].name = 12  # type: ignore[assignment]
    else:
        rows[2500].name = rows[10].name  # the UNIQUE column clashes in a later batch
    return rows


@pytest.mark.parametrize("where", ["value", "database"])
def test_a_refused_insert_many_writes_nothing_and_names_row_and_column(
    url: str, where: str
) -> None:
    rows = _bad_rows(where)

    async def main() -> EntityworksError:
        async with AsyncStore(url) as store:
            await store.create(Path)
            with pytest.raises(EntityworksError) as info:
                await store.insert_many(rows, batch_size=1000)
            assert await store.count(Path) == 0
            return info.value

    error = run(main())
    assert rows_in(url, "path") == 0
    assert rows_in(url, "path_steps") == 0
    # the sync Store refuses the same rows the same way
    same = _bad_rows(where)
    with Store(url) as sync, pytest.raises(EntityworksError) as info:
        sync.insert_many(same, batch_size=1000)
    expected = info.value
    assert type(error) is type(expected)
    assert isinstance(error, WriteError) == (where == "database")
    assert (error.row, error.column) == (expected.row, expected.column) == (2500, "name")  # type: ignore[attr-defined]
    assert [p.id is None for p in rows] == [p.id is None for p in same]
    assert rows_in(url, "path") == 0


def test_concurrent_tasks_share_one_store(url: str) -> None:
    async def writer(store: AsyncStore, k: int) -> int:
        return await store.insert_many([Point(k * 100 + i, k) for i in range(50)])

    async def reader(store: AsyncStore, k: int) -> int:
        await asyncio.sleep(0)
        return len([p async for p in store.select(Point, where={"x": k})])

    async def main() -> tuple[list[int], list[int], int]:
        async with AsyncStore(url, engine_options={"pool_size": 4, "max_overflow": 2}) as store:
            await store.create(Point)
            written = await asyncio.gather(*(writer(store, k) for k in range(20)))
            read = await asyncio.gather(
                *(reader(store, k) for k in range(20)),
                *(writer(store, k) for k in range(20, 30)),
            )
            return written, read, await store.count(Point)

    written, read, total = run(main())
    assert written == [50] * 20
    assert read == [50] * 20 + [50] * 10
    assert total == 1500 == rows_in(url, "point")


def test_a_transaction_is_invisible_to_another_task_until_it_commits(url: str) -> None:
    async def main() -> list[tuple[str, int]]:
        seen: list[tuple[str, int]] = []
        inserted, looked = asyncio.Event(), asyncio.Event()
        async with AsyncStore(url) as store:
            await store.create(Point)

            async def owner() -> None:
                async with store.transaction():
                    await store.insert(Point(1, 1))
                    await store.insert_many([Point(2, 2), Point(3, 3)])
                    seen.append(("owner inside", await store.count(Point)))
                    inserted.set()
                    await looked.wait()
                seen.append(("owner after", await store.count(Point)))

            async def other() -> None:
                await inserted.wait()
                seen.append(("other during", await store.count(Point)))
                seen.append(("other select", len([p async for p in store.select(Point)])))
                looked.set()

            await asyncio.gather(owner(), other())
            seen.append(("other after", await store.count(Point)))
        return seen

    assert run(main()) == [
        ("owner inside", 3),
        ("other during", 0),
        ("other select", 0),
        ("owner after", 3),
        ("other after", 3),
    ]
    assert rows_in(url, "point") == 3


def test_a_failed_transaction_keeps_nothing_and_a_nested_one_is_a_savepoint(url: str) -> None:
    async def main() -> list[Point]:
        async with AsyncStore(url) as store:
            await store.create(Point)
            with contextlib.suppress(RuntimeError):
                async with store.transaction():
                    await store.insert(Point(1, 1))
                    raise RuntimeError("undo")
            async with store.transaction():
                assert store.in_transaction
                await store.insert(Point(2, 2))
                with contextlib.suppress(RuntimeError):
                    async with store.transaction():
                        await store.insert(Point(3, 3))
                        raise RuntimeError("undo the savepoint")
                # a refused write inside leaves the transaction as it was
                with pytest.raises(WriteError):
                    await store.insert_many([Point(4, 4), Point(2, 0)])
                await store.insert(Point(5, 5))
                inside = [p async for p in store.select(Point, order_by="id")]
                assert inside == [Point(2, 2), Point(5, 5)]
                assert await store.get(Point, 5) == Point(5, 5)
            assert not store.in_transaction
            return [p async for p in store.select(Point, order_by="id")]

    assert run(main()) == [Point(2, 2), Point(5, 5)]


def test_a_task_started_inside_a_transaction_cannot_use_it(url: str) -> None:
    async def main() -> None:
        async with AsyncStore(url) as store:
            await store.create(Point)
            async with store.transaction():
                await store.insert(Point(1, 1))
                with pytest.raises(EntityworksError, match="transaction"):
                    await asyncio.create_task(store.insert(Point(2, 2)))
            assert [p async for p in store.select(Point)] == [Point(1, 1)]

    run(main())


def test_a_task_cancelled_mid_insert_many_leaves_nothing_written(url: str) -> None:
    produced = 0

    def many() -> Iterator[Point]:
        nonlocal produced
        for i in range(200_000):
            produced += 1
            yield Point(i, i)

    async def main() -> tuple[bool, int, int]:
        async with AsyncStore(url) as store:
            await store.create(Point)
            task = asyncio.create_task(store.insert_many(many(), batch_size=500))
            while produced < 2_000:  # some batches sent: the task is inside the pipeline
                await asyncio.sleep(0.001)
            task.cancel()
            try:
                await task
                cancelled = False
            except asyncio.CancelledError:
                cancelled = True
            after = await store.count(Point)
            await store.insert(Point(-1, 0))  # the store still works
            return cancelled, after, await store.count(Point)

    cancelled, after, then = run(main())
    assert cancelled, "insert_many ended before it was cancelled"
    assert produced < 200_000
    assert after == 0
    assert then == 1 == rows_in(url, "point")


def test_select_streams_in_batches_and_gives_its_connection_back(url: str) -> None:
    n = STREAM_BATCH * 2 + 7

    async def main() -> tuple[int, list[int]]:
        options = {"pool_size": 1, "max_overflow": 0, "pool_timeout": 5}
        async with AsyncStore(url, engine_options=options) as store:
            await store.create(Path)
            await store.insert_many(paths(n))
            total = 0
            async for _ in store.select(Path):
                total += 1
            first: list[int] = []
            async with contextlib.aclosing(store.select(Path, order_by="id")) as rows:
                async for p in rows:
                    first.append(len(p.steps))
                    if len(first) == 3:
                        break
            # the one pooled connection is free again
            assert await store.count(Path) == n
            return total, first

    total, first = run(main())
    assert total == n
    assert first == [0, 1, 2]


def test_errors_of_a_select_arrive_at_its_first_step(url: str) -> None:
    async def main() -> None:
        async with AsyncStore(url) as store:
            rows = store.select(Path)  # no table yet: nothing happens until iterated
            with pytest.raises(EntityworksError):
                async for _ in rows:
                    pass

    run(main())


def test_tasks_that_first_use_a_class_at_once_bind_it_once(url: str) -> None:
    with Store(url) as sync:  # the tables exist; this AsyncStore has bound no class yet
        sync.create(Path)
        sync.create(Point)

    async def main() -> list[Any]:
        async with AsyncStore(url, engine_options={"pool_size": 8}) as store:
            return await asyncio.gather(
                *(store.insert_many(paths(5, 10 * k)) for k in range(6)),
                *(store.insert(Point(k, k)) for k in range(6)),
                *(store.count(Path) for _ in range(3)),
                store.insert_many(iter([Point(100, 1), Point(101, 2)])),
            )

    results = run(main())
    assert results[:6] == [5] * 6
    assert results[6:12] == [Point(k, k) for k in range(6)]
    assert results[-1] == 2
    with Store(url) as sync:
        assert sync.count(Path) == 30 == rows_in(url, "path")
        assert sync.count(Point) == 8


def test_a_task_cancelled_inside_its_transaction_keeps_nothing_of_it(url: str) -> None:
    produced = 0

    def many() -> Iterator[Point]:
        nonlocal produced
        for i in range(10, 200_000):
            produced += 1
            yield Point(i, i)

    async def main() -> tuple[bool, int]:
        async with AsyncStore(url) as store:
            await store.create(Point)

            async def work() -> None:
                async with store.transaction():
                    await store.insert(Point(1, 1))
                    await store.insert_many(many(), batch_size=500)

            task = asyncio.create_task(work())
            while produced < 2_000:
                await asyncio.sleep(0.001)
            task.cancel()
            try:
                await task
                cancelled = False
            except asyncio.CancelledError:
                cancelled = True
            return cancelled, await store.count(Point)

    cancelled, after = run(main())
    assert cancelled
    assert after == 0 == rows_in(url, "point")


def test_postgresql_keeps_its_binary_copy_under_an_async_store(
    pg_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    async def main() -> list[Point]:
        async with AsyncStore(pg_url) as store:
            await store.drop(Point)
            await store.create(Point)
            caplog.set_level(logging.INFO, logger="entityworks")
            await store.insert_many([Point(i, i, f"t{i}") for i in range(50)])
            got = [p async for p in store.select(Point, order_by="id")]
            await store.drop(Point)
            return got

    got = run(main())
    assert got == [Point(i, i, f"t{i}") for i in range(50)]
    logged = [r.getMessage() for r in caplog.records if r.name.startswith("entityworks")]
    assert any("COPY" in m and "[COPY, 50 rows]" in m for m in logged), logged


def test_awaited_runs_a_coroutine_inside_the_greenlet_bridge(tmp_path: Any) -> None:
    from entityworks.compat.sqlalchemy import awaited

    async def main() -> int:
        async with AsyncStore(tmp_path / "a.db") as store, store.engine.connect() as conn:
            result: int = await conn.run_sync(lambda _c: awaited(asyncio.sleep(0, result=5)))
            return result

    assert run(main()) == 5


def test_a_cancellation_a_driver_loses_still_ends_the_call(url: str) -> None:
    """A driver may swallow the CancelledError of a statement that completes as its task is
    cancelled (psycopg before 3.3.6 on Python 3.11, through asyncio.wait_for): the call
    must still end cancelled and its transaction keep nothing. The lossy driver is played
    by a statement listener that awaits something swallowing the cancellation."""
    from entityworks.compat.sqlalchemy import awaited

    waiting = asyncio.Event()
    armed = False

    async def lossy() -> None:
        waiting.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            return  # lost, as the driver loses it

    def listener(*_args: Any) -> None:
        nonlocal armed
        if armed:
            armed = False
            awaited(lossy())

    async def main() -> tuple[bool, list[str], int]:
        reached: list[str] = []
        async with AsyncStore(url) as store:
            await store.drop(Point)
            await store.create(Point)
            sa.event.listen(store.engine.sync_engine, "before_cursor_execute", listener)

            async def work() -> None:
                nonlocal armed
                async with store.transaction():
                    await store.insert(Point(1, 1))
                    armed = True
                    await store.upsert(Point(2, 2))
                    reached.append("after the lossy call")
                    await store.insert(Point(3, 3))

            task = asyncio.create_task(work())
            await asyncio.wait_for(waiting.wait(), 30)
            task.cancel()
            try:
                await task
                cancelled = False
            except asyncio.CancelledError:
                cancelled = True
            sa.event.remove(store.engine.sync_engine, "before_cursor_execute", listener)
            return cancelled, reached, await store.count(Point)

    cancelled, reached, after = run(main())
    assert cancelled
    assert reached == []
    assert after == 0 == rows_in(url, "point")

"""The bulk paths of keys the database generates: the keys written back to the instances are
the ones stored (read back with plain SQL), whatever the instances' class does with its
attributes; SQLite's INSERT leaves the key column out and a refused batch is still named;
PostgreSQL reserves the keys of a sequence that does not step by one too."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
import sqlalchemy as sa

from entityworks import Store, ValueEncodingError, WriteError, column, table

BATCH = 50


@table("gk_plain")
@dataclass
class Plain:
    id: int | None
    n: int
    name: str | None
    weight: float


@table("gk_slots")
@dataclass(slots=True)
class Slotted:
    id: int | None
    n: int


@table("gk_frozen")
@dataclass(frozen=True)
class Frozen:
    id: int | None
    n: int


@table("gk_watched")
@dataclass
class Watched:
    """Its own ``__setattr__``: the generated key is set past it (as on a frozen class)."""

    id: int | None
    n: int

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)
        object.__setattr__(self, "seen", [*getattr(self, "seen", []), name])


@table("gk_unique")
@dataclass
class Unique:
    id: int | None
    code: str = column(unique=True)


def _stored(store: Store, name: str, what: str = "n") -> dict[Any, int]:
    """``what`` -> key of every row of table ``name``, read with plain SQL."""
    with store.engine.connect() as conn:
        rows = conn.execute(sa.text(f"SELECT {what}, id FROM {name}")).all()
    return {value: key for value, key in rows}


@pytest.mark.parametrize("cls", [Plain, Slotted, Frozen, Watched])
def test_written_back_keys_are_the_stored_ones(store: Store, cls: type) -> None:
    store.create(cls)
    store.insert(cls(**{**_values(cls, 10_000), "id": None}))  # one row first
    objs = [cls(**_values(cls, i)) for i in range(3 * BATCH + 7)]
    assert store.insert_many(iter(objs), batch_size=BATCH) == len(objs)
    stored = _stored(store, store.table(cls).name)
    assert {o.n: o.id for o in objs} == {n: k for n, k in stored.items() if n != 10_000}
    first = stored[10_000]
    assert [o.id for o in objs] == list(range(first + 1, first + 1 + len(objs)))
    if cls is Watched:  # made with id and n, the key set past its __setattr__
        assert all(o.seen == ["id", "n"] for o in objs)


def _values(cls: type, i: int) -> dict[str, Any]:
    values: dict[str, Any] = {"id": None, "n": i}
    if cls is Plain:
        values |= {"name": None if i % 3 else f"name {i}", "weight": i / 4}
    return values


def test_sqlite_leaves_the_key_column_out(tmp_path) -> None:
    store = Store(tmp_path / "keyless.db")
    statements: list[str] = []
    sa.event.listen(
        store.engine, "connect", lambda dbapi, _record: dbapi.set_trace_callback(statements.append)
    )
    store.create(Plain)
    objs = [Plain(None, i, f"name {i}", 0.5) for i in range(200)]
    store.insert_many(objs, batch_size=100)
    inserts = [s for s in statements if s.startswith("INSERT INTO gk_plain")]
    assert inserts and all(s.startswith("INSERT INTO gk_plain (n, name, weight") for s in inserts)
    assert {o.n: o.id for o in objs} == _stored(store, "gk_plain")
    assert [o.id for o in objs] == list(range(1, 201))
    store.close()


@pytest.mark.parametrize("autoincrement", [False, True])
def test_sqlite_keys_after_deleted_rows(tmp_path, autoincrement: bool) -> None:
    """The rowids SQLite gives are the ones written back: the largest deleted key taken
    again, unless the table says AUTOINCREMENT (a table made elsewhere)."""
    import sqlite3

    path = tmp_path / "deleted.db"
    if autoincrement:
        with sqlite3.connect(path) as conn:
            conn.execute(
                "CREATE TABLE gk_slots (id INTEGER PRIMARY KEY AUTOINCREMENT, n INTEGER NOT NULL)"
            )
    store = Store(path)
    try:
        store.create(Slotted)
        store.insert_many([Slotted(None, i) for i in range(10)])
        store.delete(Slotted, where={"id": 10})
        objs = [Slotted(None, 100 + i) for i in range(5)]
        store.insert_many(objs)
        first = 11 if autoincrement else 10
        assert [o.id for o in objs] == list(range(first, first + 5))
        assert {o.n: o.id for o in objs}.items() <= _stored(store, "gk_slots").items()
    finally:
        store.close()


def test_a_row_refused_by_the_database_among_generated_keys_is_named(store: Store) -> None:
    store.create(Unique)
    store.insert(Unique(None, "taken"))
    bad = 2 * BATCH + 9
    objs = [Unique(None, "taken" if i == bad else f"code {i}") for i in range(4 * BATCH)]
    with pytest.raises(WriteError) as info:
        store.insert_many(objs, batch_size=BATCH)
    assert info.value.row == bad
    assert _stored(store, "gk_unique", "code") == {"taken": 1}
    assert [o.id for o in objs[2 * BATCH :]] == [None] * (2 * BATCH)  # the refused batch


def test_postgresql_keys_of_a_sequence_stepping_by_three(pg_url: str) -> None:
    store = Store(pg_url)
    try:
        store.drop(Plain)
        store.create(Plain)
        with store.engine.begin() as conn:  # the serial's sequence, by PostgreSQL's naming
            conn.execute(sa.text("SELECT setval('gk_plain_id_seq', 100)"))
            conn.execute(sa.text("ALTER SEQUENCE gk_plain_id_seq INCREMENT BY 3"))
        objs = [Plain(None, i, None, 1.0) for i in range(2 * BATCH + 3)]
        store.insert_many(objs, batch_size=BATCH)
        assert [o.id for o in objs] == list(range(103, 103 + 3 * len(objs), 3))
        assert {o.n: o.id for o in objs} == _stored(store, "gk_plain")
        more = [Plain(None, 1000 + i, None, 1.0) for i in range(5)]  # after the others
        store.insert_many(more)
        last = objs[-1].id
        assert last is not None and [o.id for o in more] == list(range(last + 3, last + 18, 3))
    finally:
        store.drop(Plain)
        store.close()


def _copies(monkeypatch: pytest.MonkeyPatch) -> list[int | None]:
    """The ``without`` of every COPY the PostgreSQL backend sends (the key column left out)."""
    from entityworks.sql.backends import postgresql

    seen: list[int | None] = []
    real = postgresql.copy_rows

    def spy(rows: Any, chunks: Any, *, without: int | None = None) -> None:
        seen.append(without)
        real(rows, chunks, without=without)

    monkeypatch.setattr(postgresql, "copy_rows", spy)
    return seen


def _fresh(pg_url: str) -> Store:
    store = Store(pg_url)
    store.drop(Plain)
    store.create(Plain)
    return store


def test_postgresql_copies_without_the_key_and_knows_the_keys(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sequence gives the keys during the COPY; the keys written back are the stored
    ones, consecutive across batches, and no COPY carried the key column."""
    copies = _copies(monkeypatch)
    store = _fresh(pg_url)
    try:
        store.insert(Plain(None, 10_000, None, 1.0))
        objs = [Plain(None, i, f"name {i}" if i % 2 else None, i / 8) for i in range(3 * BATCH + 1)]
        store.insert_many(iter(objs), batch_size=BATCH)
        assert copies and all(w == 0 for w in copies)  # the key is column 0
        assert {o.n: o.id for o in objs} == {
            n: k for n, k in _stored(store, "gk_plain").items() if n != 10_000
        }
        assert [o.id for o in objs] == list(range(2, 2 + len(objs)))
        assert [(o.n, o.name, o.weight) for o in store.select(Plain, order_by="id")][1:] == [
            (o.n, o.name, o.weight) for o in objs
        ]
    finally:
        store.drop(Plain)
        store.close()


def test_postgresql_values_taken_during_the_copy_fall_back_to_reserved_keys(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A trigger takes values of the same sequence while the rows are copied (as another
    session would): the keyless COPY is rolled back and the keys reserved first instead,
    and every key written back is still the stored one."""
    copies = _copies(monkeypatch)
    store = _fresh(pg_url)
    try:
        with store.engine.begin() as conn:
            conn.execute(
                sa.text(
                    "CREATE FUNCTION gk_take() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                    "IF NEW.n % 7 = 3 THEN PERFORM nextval('gk_plain_id_seq'); END IF; "
                    "RETURN NEW; END $$"
                )
            )
            conn.execute(
                sa.text(
                    "CREATE TRIGGER gk_take BEFORE INSERT ON gk_plain "
                    "FOR EACH ROW EXECUTE FUNCTION gk_take()"
                )
            )
        objs = [Plain(None, i, None, 0.25) for i in range(2 * BATCH)]
        store.insert_many(objs, batch_size=BATCH)
        assert None in copies and 0 in copies  # tried without the key, then with it
        assert {o.n: o.id for o in objs} == _stored(store, "gk_plain")
        assert store.count(Plain) == len(objs)
    finally:
        with store.engine.begin() as conn:
            conn.execute(sa.text("DROP TABLE IF EXISTS gk_plain"))
            conn.execute(sa.text("DROP FUNCTION IF EXISTS gk_take()"))
        store.close()


def test_postgresql_sequence_caching_values_reserves_the_keys(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sequence that caches values per session: its values during a COPY need not
    follow its last value, so the keys are reserved first (never guessed)."""
    copies = _copies(monkeypatch)
    store = _fresh(pg_url)
    try:
        with store.engine.begin() as conn:
            conn.execute(sa.text("ALTER SEQUENCE gk_plain_id_seq CACHE 10"))
        objs = [Plain(None, i, None, 0.5) for i in range(BATCH + 5)]
        store.insert_many(objs, batch_size=BATCH)
        assert copies and all(w is None for w in copies)
        assert {o.n: o.id for o in objs} == _stored(store, "gk_plain")
    finally:
        store.drop(Plain)
        store.close()


def test_a_field_unset_in_a_later_chunk_leaves_every_key_unset(store: Store) -> None:
    """A field missing on a row far into the batch (past the rows a bulk path may have sent
    and given keys already): the WriteError names it, nothing is stored and no instance
    keeps a key."""
    store.create(Plain)
    objs = [Plain(None, i, None, 0.5) for i in range(3_000)]
    del objs[2_500].n
    with pytest.raises(WriteError) as info:
        store.insert_many(objs)
    assert info.value.row == 2_500
    assert [o.id for o in objs] == [None] * len(objs)
    assert _stored(store, "gk_plain") == {}


def test_a_value_refused_in_a_later_chunk_leaves_every_key_unset(store: Store) -> None:
    """A value of the wrong type far into the batch: named, nothing stored, every key None."""
    store.create(Plain)
    objs = [Plain(None, i, None, 0.5) for i in range(3_000)]
    objs[2_500].n = "many"  # type: ignore[assignment]
    with pytest.raises(ValueEncodingError, match="row 2500, column 'n'"):
        store.insert_many(objs)
    assert [o.id for o in objs] == [None] * len(objs)
    assert _stored(store, "gk_plain") == {}


# -- PostgreSQL: a big batch's keys taken aside, on a connection of their own ------------------


def _aside(monkeypatch: pytest.MonkeyPatch, rows: int) -> None:
    """Keys taken aside from calls of ``rows`` rows on (the default is 10,000)."""
    from entityworks.sql.backends import postgresql

    monkeypatch.setattr(postgresql, "RESERVE_ASIDE_ROWS", rows)


def _statements(store: Store) -> list[str]:
    """Every statement the Store's engine sends from now on (all its connections)."""
    seen: list[str] = []
    sa.event.listen(
        store.engine, "before_cursor_execute", lambda _c, _k, sql, *_a: seen.append(sql)
    )
    return seen


def _next_value(store: Store) -> int:
    with store.engine.connect() as conn:
        return int(conn.execute(sa.text("SELECT nextval('gk_plain_id_seq')")).scalar_one())


def test_postgresql_a_big_list_takes_its_keys_aside_once(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A list as long as the threshold: its keys taken at once before the first batch (one
    ALTER SEQUENCE, on another connection), every batch a COPY with its keys, the keys
    written back the stored ones, and the sequence going on after the last of them."""
    _aside(monkeypatch, 100)
    copies = _copies(monkeypatch)
    store = _fresh(pg_url)
    try:
        store.insert(Plain(None, 10_000, None, 1.0))
        sent = _statements(store)
        objs = [Plain(None, i, f"n{i}" if i % 3 else None, i / 4) for i in range(3 * BATCH + 1)]
        store.insert_many(objs, batch_size=BATCH)
        assert sum("ALTER SEQUENCE" in s for s in sent) == 1
        assert copies == [None] * 4  # every batch with its key column
        assert [o.id for o in objs] == list(range(2, 2 + len(objs)))
        assert {o.n: o.id for o in objs} == {
            n: k for n, k in _stored(store, "gk_plain").items() if n != 10_000
        }
        assert _next_value(store) == 2 + len(objs)  # no value left unused
    finally:
        store.drop(Plain)
        store.close()


def test_postgresql_a_generator_takes_each_batch_s_keys_aside(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A generator's length is unknown: each batch as long as the threshold takes its own
    keys aside; shorter batches copy without the key as before."""
    _aside(monkeypatch, BATCH)
    copies = _copies(monkeypatch)
    store = _fresh(pg_url)
    try:
        sent = _statements(store)
        objs = [Plain(None, i, None, 0.5) for i in range(2 * BATCH + 7)]
        store.insert_many(iter(objs), batch_size=BATCH)
        assert sum("ALTER SEQUENCE" in s for s in sent) == 2
        assert copies == [None, None, 0]  # the short last batch left the key out
        assert [o.id for o in objs] == list(range(1, 1 + len(objs)))
        assert {o.n: o.id for o in objs} == _stored(store, "gk_plain")
    finally:
        store.drop(Plain)
        store.close()


def test_postgresql_keys_taken_aside_while_other_sessions_take_values(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Other sessions take values of the sequence all along (plain INSERTs, nextval): no key
    is given twice, and every key written back is the stored one."""
    import threading

    _aside(monkeypatch, BATCH)
    store = _fresh(pg_url)
    other = sa.create_engine(pg_url)
    stop = threading.Event()
    taken: list[int] = []

    def take() -> None:
        with other.connect() as conn:
            while not stop.is_set():
                row = conn.execute(
                    sa.text("INSERT INTO gk_plain (n, weight) VALUES (-1, 0) RETURNING id")
                )
                taken.append(int(row.scalar_one()))
                conn.commit()

    worker = threading.Thread(target=take)
    worker.start()
    try:
        objs: list[Plain] = []
        for _ in range(4):
            part = [Plain(None, len(objs) + i, None, 0.5) for i in range(3 * BATCH)]
            store.insert_many(part, batch_size=BATCH)
            objs.extend(part)
    finally:
        stop.set()
        worker.join()
        other.dispose()
    try:
        assert taken  # the other session did take values meanwhile
        mine = [o.id for o in objs]
        assert len(set(mine)) == len(mine) and not set(mine) & set(taken)
        with store.engine.connect() as conn:
            rows = conn.execute(sa.text("SELECT id, n FROM gk_plain WHERE n >= 0")).all()
        assert dict(rows) == {o.id: o.n for o in objs}
    finally:
        store.drop(Plain)
        store.close()


def test_postgresql_keys_are_not_taken_aside_by_who_does_not_own_the_sequence(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another role may insert but not alter the sequence: its keys come the other ways,
    and its transaction is untouched by the refusal on the side."""
    _aside(monkeypatch, BATCH)
    owner = _fresh(pg_url)
    role = "ew_gk_writer"
    with owner.engine.begin() as conn:
        conn.execute(sa.text(f"DROP ROLE IF EXISTS {role}"))
        conn.execute(sa.text(f"CREATE ROLE {role} LOGIN"))
        conn.execute(sa.text(f"GRANT SELECT, INSERT ON gk_plain TO {role}"))
        conn.execute(sa.text(f"GRANT USAGE, SELECT ON SEQUENCE gk_plain_id_seq TO {role}"))
        conn.execute(sa.text(f"GRANT USAGE, CREATE ON SCHEMA public TO {role}"))
        conn.execute(
            sa.text(
                f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {role}"
            )
        )
    writer = Store(sa.make_url(pg_url).set(username=role))
    try:
        sent = _statements(writer)
        objs = [Plain(None, i, None, 0.5) for i in range(2 * BATCH)]
        writer.insert_many(objs, batch_size=BATCH)
        assert any("ALTER SEQUENCE" in s for s in sent)  # tried, refused on the side
        assert {o.n: o.id for o in objs} == _stored(owner, "gk_plain")
        assert owner.count(Plain) == len(objs)
    finally:
        writer.close()
        owner.drop(Plain)
        with owner.engine.begin() as conn:
            conn.execute(sa.text(f"DROP OWNED BY {role}"))
            conn.execute(sa.text(f"DROP ROLE {role}"))
        owner.close()


def test_postgresql_a_pool_without_an_idle_place_takes_no_keys_aside(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pool of one connection: no second connection is waited for."""
    _aside(monkeypatch, BATCH)
    _fresh(pg_url).close()
    store = Store(pg_url, engine_options={"pool_size": 1, "max_overflow": 0, "pool_timeout": 2})
    try:
        sent = _statements(store)
        objs = [Plain(None, i, None, 0.5) for i in range(2 * BATCH)]
        store.insert_many(objs, batch_size=BATCH)
        assert not any("ALTER SEQUENCE" in s for s in sent)
        assert {o.n: o.id for o in objs} == _stored(store, "gk_plain")
    finally:
        store.drop(Plain)
        store.close()


def test_a_batch_refused_after_others_leaves_every_key_unset(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The third batch is refused: nothing is written, and the instances of the first two
    batches, which had their keys, get None back, as they were given (on PostgreSQL with
    their keys taken aside too)."""
    _aside(monkeypatch, BATCH)
    store.drop(Unique)
    store.create(Unique)
    try:
        objs = [Unique(None, f"c{i}") for i in range(3 * BATCH)]
        objs[2 * BATCH + 3] = Unique(None, "c1")  # the third batch repeats a code
        with pytest.raises(WriteError) as refused:
            store.insert_many(objs, batch_size=BATCH)
        assert refused.value.row == 2 * BATCH + 3
        assert [o.id for o in objs] == [None] * len(objs)
        assert store.count(Unique) == 0
        store.insert_many(objs[: 2 * BATCH], batch_size=BATCH)  # the same objects again
        assert {o.code: o.id for o in objs[: 2 * BATCH]} == _stored(store, "gk_unique", "code")
    finally:
        store.drop(Unique)


def test_a_refused_row_with_its_key_given_leaves_the_generated_keys_unset(store: Store) -> None:
    """A batch of generated and given keys: the given rows are written after the others
    got their keys, and one of them is refused; the instances have their None keys back."""
    store.drop(Unique)
    store.create(Unique)
    try:
        store.insert(Unique(None, "taken"))
        objs = [Unique(None, "a"), Unique(None, "b"), Unique(1000, "taken")]
        with pytest.raises(WriteError):
            store.insert_many(objs)
        assert [o.id for o in objs] == [None, None, 1000]
        assert store.count(Unique) == 1
    finally:
        store.drop(Unique)

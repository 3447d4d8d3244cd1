"""Text compares exactly on every backend (issue 10, item 4): case, accents and trailing spaces
count, so the same filter, ``get``, ``delete`` and ``upsert`` select the same rows on SQLite,
PostgreSQL and MariaDB, whose default collation would otherwise find ``'caves'`` equal to
``'CAVES'``, ``'cavés'`` and ``'caves  '``. Each answer is checked against Python's own
comparison of the same values, so agreeing with Python means agreeing with each other."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
import sqlalchemy as sa

from entityworks import Store, WriteError, col, column, entity, primary_key
from entityworks.catalog import TABLES, SudokuPuzzle, open_catalog
from entityworks.catalog._models import utc_now
from entityworks.migrate import diff, head

VARIANTS = [
    "caves",
    "CAVES",
    "Caves",
    "cavés",
    "caves ",
    "caves  ",
    " caves",
    "cave",
    "cavesx",
    "ß",
    "ss",
    "\u00e9",
    "e\u0301",
    "\uff21",
    "a",
]


@dataclass
class Word:
    id: int
    w: str | None  # LONGTEXT on MariaDB
    short: str | None = column(max_length=20)  # VARCHAR(20)
    indexed: str | None = column(index=True)  # key text (VARCHAR(255))
    tags: list[str] | None = None  # JSON text


@dataclass
class Tag:
    name: str = primary_key()
    n: int = 0


@dataclass
class Note:
    text: str


@dataclass
class Shelf:
    label: str = primary_key()
    notes: list[Note] = field(default_factory=list)


def _words() -> list[Word]:
    values: list[str | None] = [*VARIANTS, None]
    return [Word(i, v, v, v, None if v is None else [v]) for i, v in enumerate(values)]


FILTERS: list[tuple[str, Any, Callable[[Any], bool]]] = []
for name in ("w", "short", "indexed"):
    FILTERS += [
        (f"{name} == caves", {name: "caves"}, lambda v: v == "caves"),
        (f"{name} == CAVES", col(name) == "CAVES", lambda v: v == "CAVES"),
        (f"{name} == cavés", {name: "cavés"}, lambda v: v == "cavés"),
        (f"{name} == 'caves '", {name: "caves "}, lambda v: v == "caves "),
        (f"{name} == ss", {name: "ss"}, lambda v: v == "ss"),
        (f"{name} != caves", col(name) != "caves", lambda v: v is not None and v != "caves"),
        (f"{name} is None", {name: None}, lambda v: v is None),
        (f"{name} in", col(name).in_(["Caves", "é", "a"]), lambda v: v in ("Caves", "é", "a")),
        (
            f"{name} not in",
            col(name).not_in(["caves", "CAVES"]),
            lambda v: v is not None and v not in ("caves", "CAVES"),
        ),
        (f"{name} > caves", col(name) > "caves", lambda v: v is not None and v > "caves"),
        (f"{name} <= caves", col(name) <= "caves", lambda v: v is not None and v <= "caves"),
        (
            f"{name} between",
            col(name).between("Caves", "caves "),
            lambda v: v is not None and "Caves" <= v <= "caves ",
        ),
        (
            f"{name} like cave%",
            col(name).like("cave%"),
            lambda v: v is not None and v.startswith("cave"),
        ),
        (f"{name} like C%", col(name).like("C%"), lambda v: v is not None and v.startswith("C")),
        (
            f"{name} like caves_",
            col(name).like("caves_"),
            lambda v: v is not None and len(v) == 6 and v.startswith("caves"),
        ),
    ]


@pytest.fixture
def words(store: Store) -> Store:
    store.create(Word)
    store.insert_many(_words())
    return store


@pytest.mark.parametrize("label,where,expected", FILTERS, ids=[f[0] for f in FILTERS])
def test_filters_select_what_python_selects(
    words: Store, label: str, where: Any, expected: Callable[[Any], bool]
) -> None:
    column_name = label.split()[0]
    want = sorted(w.id for w in _words() if expected(getattr(w, column_name)))
    assert sorted(w.id for w in words.select(Word, where=where)) == want
    assert words.count(Word, where=where) == len(want)


def test_order_by_text_is_code_point_order(words: Store) -> None:
    got = [w.w for w in words.select(Word, where=col("w").is_not_null(), order_by="w")]
    assert got == sorted(VARIANTS)


def test_delete_removes_exactly_the_matching_rows(words: Store) -> None:
    assert words.delete(Word, where={"w": "caves"}) == 1
    assert words.delete(Word, where={"short": "CAVES"}) == 1
    assert words.delete(Word, where=col("indexed").in_(["caves ", "é"])) == 2
    left = sorted(w.w for w in words.select(Word, where=col("w").is_not_null()))
    assert left == sorted(set(VARIANTS) - {"caves", "CAVES", "caves ", "é"})


def test_text_keys_are_exact_for_get_upsert_and_unique(store: Store) -> None:
    store.create(Tag)
    store.insert_many([Tag("Apple", 1), Tag("apple ", 2)])
    assert store.get(Tag, "apple") is None
    assert store.get(Tag, "Apple") == Tag("Apple", 1)
    store.upsert(Tag("apple", 3))  # a new key: Apple stays as it was
    store.upsert(Tag("äpple", 4))
    store.insert(Tag("APPLE", 5))  # no clash with Apple or apple
    assert sorted((t.name, t.n) for t in store.select(Tag)) == [
        ("APPLE", 5),
        ("Apple", 1),
        ("apple", 3),
        ("apple ", 2),
        ("äpple", 4),
    ]
    store.upsert(Tag("apple ", 9))  # the key with a trailing space, exactly
    assert store.get(Tag, "apple ") == Tag("apple ", 9) and store.get(Tag, "apple").n == 3


def test_unique_text_column_is_exact(store: Store) -> None:
    store.create(SudokuPuzzle)
    puzzle = "1" * 81
    store.insert_many(
        [
            SudokuPuzzle(None, "s", "a", "abc"),
            SudokuPuzzle(None, "s", "b", "ABC"),
            SudokuPuzzle(None, "s", "c", "abc "),
            SudokuPuzzle(None, "s", "d", puzzle),
        ]
    )
    assert store.count(SudokuPuzzle) == 4
    assert [p.name for p in store.select(SudokuPuzzle, where={"puzzle": "abc"})] == ["a"]


def test_str_key_with_a_child_table(store: Store) -> None:
    """A ``str`` key with a child table works on every backend (MariaDB used to refuse the
    LONGTEXT ``parent_key`` and leave the parent table behind), with exact keys."""
    store.create(Shelf)
    store.insert_many(
        [Shelf("top", [Note("a"), Note("b")]), Shelf("Top", [Note("c")]), Shelf("top ", [])]
    )
    assert store.get(Shelf, "top") == Shelf("top", [Note("a"), Note("b")])
    assert store.get(Shelf, "Top") == Shelf("Top", [Note("c")])
    store.upsert(Shelf("top", [Note("z")]))
    assert store.get(Shelf, "Top").notes == [Note("c")]
    store.delete(Shelf("Top"))
    assert sorted((s.label, len(s.notes)) for s in store.select(Shelf)) == [("top", 1), ("top ", 0)]


# -- existing MariaDB catalogs: revision 0003 converts them -------------------------------------


def _collations(conn: sa.Connection) -> dict[tuple[str, str], str]:
    columns = sa.table(
        "COLUMNS",
        sa.column("TABLE_SCHEMA"),
        sa.column("TABLE_NAME"),
        sa.column("COLUMN_NAME"),
        sa.column("COLLATION_NAME"),
        schema="information_schema",
    )
    stmt = (
        sa.select(columns.c.TABLE_NAME, columns.c.COLUMN_NAME, columns.c.COLLATION_NAME)
        .where(columns.c.TABLE_SCHEMA == sa.func.database())
        .where(columns.c.COLLATION_NAME.is_not(None))
        .where(columns.c.TABLE_NAME != "entityworks_version")
    )
    return {(t, c): coll for t, c, coll in conn.execute(stmt)}


def _revision(name: str) -> Any:
    from alembic.script import ScriptDirectory

    from entityworks.migrate import alembic_config

    return ScriptDirectory.from_config(alembic_config()).get_revision(name).module


def _maps_as_at_0001(count: int, seed: int) -> list[Any]:
    """Generated dungeons as revision 0001's frozen classes hold them."""
    from entityworks.catalog import build_map

    old = _revision("0001_catalog")
    out = []
    for i in range(count):
        m = build_map("dungeon", seed + i, {})
        out.append(
            old.MapRecord(
                None,
                m.kind,
                m.generator,
                m.parameters,
                m.seed,
                m.width,
                m.height,
                m.grid,
                m.open_ratio,
                m.region_count,
                m.largest_region,
                m.created_at,
                rooms=[old.MapRoom(**dataclasses.asdict(r)) for r in m.rooms],
                corridors=[old.MapCorridor(**dataclasses.asdict(c)) for c in m.corridors],
            )
        )
    return out


def _plain(m: Any) -> tuple[Any, ...]:
    return (
        m.id,
        m.kind,
        [dataclasses.asdict(r) for r in m.rooms],
        [dataclasses.asdict(c) for c in m.corridors],
        [dataclasses.asdict(c) for c in m.caves],
    )


@entity("sudoku_puzzles")
class PuzzleBefore0010:
    """``sudoku_puzzles`` before revision 0010 (no ``solver_version``)."""

    id: int | None = primary_key()
    source: str
    name: str
    puzzle: str = column(unique=True)
    solution: str | None = None
    clues: int = 0
    solution_count: int = 0
    difficulty: int | None = None
    nodes: int | None = None
    created_at: dt.datetime = field(default_factory=utc_now)


def test_revision_0003_converts_a_populated_mariadb_catalog(mariadb_url: str) -> None:
    from entityworks.catalog import upgrade_catalog
    from tests.entityworks.conftest import _drop_everything

    _drop_everything(mariadb_url)
    store = Store(mariadb_url)
    try:
        assert upgrade_catalog(store, "0002_map_placements") == "0002_map_placements"
        with store.engine.begin() as conn:  # as revision 0001/0002 left them before 0003
            for name in sa.inspect(conn).get_table_names():
                if name != "entityworks_version":
                    conn.exec_driver_sql(
                        f"ALTER TABLE `{name}` CONVERT TO CHARACTER SET "
                        "utf8mb4 COLLATE utf8mb4_general_ci"
                    )
            assert set(_collations(conn).values()) == {"utf8mb4_general_ci"}
        # maps as the revisions before 0004 stored them (.npy grids, JSON corridor paths)
        store.insert_many(_maps_as_at_0001(3, seed=5))
        store.insert_many(
            [PuzzleBefore0010(None, "s", "one", "abc"), PuzzleBefore0010(None, "s", "two", "xyz")]
        )
        with pytest.raises(WriteError):  # the old collation: 'ABC' clashes with 'abc'
            store.insert(PuzzleBefore0010(None, "s", "three", "ABC"))
        maps_before = sorted(store.select(_revision("0001_catalog").MapRecord), key=lambda m: m.id)
        puzzles_before = sorted(store.select(PuzzleBefore0010), key=lambda p: p.id)
        assert sum(len(m.rooms) for m in maps_before) > 0

        assert upgrade_catalog(store) == head()  # 0003 and the revisions after it
        with store.engine.connect() as conn:
            assert set(_collations(conn).values()) == {"utf8mb4_nopad_bin"}
        fresh = Store(mariadb_url)
        maps_after = sorted(fresh.select(TABLES["maps"]), key=lambda m: m.id)
        assert [_plain(m) for m in maps_after] == [_plain(m) for m in maps_before]
        assert all((a.grid == b.grid).all() for a, b in zip(maps_after, maps_before, strict=True))
        assert sorted(fresh.select(PuzzleBefore0010), key=lambda p: p.id) == puzzles_before
        fresh.insert(SudokuPuzzle(None, "s", "three", "ABC"))  # exact now
        assert [p.name for p in fresh.select(SudokuPuzzle, where={"puzzle": "abc"})] == ["one"]
        assert diff(fresh, list(TABLES.values())) == []
        fresh.close()
    finally:
        store.close()
        _drop_everything(mariadb_url)


def test_new_mariadb_tables_are_exact_from_the_start(mariadb_url: str) -> None:
    from tests.entityworks.conftest import _drop_everything

    _drop_everything(mariadb_url)
    store = open_catalog(mariadb_url)
    try:
        store.create(Word)
        store.create(Shelf)
        with store.engine.connect() as conn:
            found = _collations(conn)
            json_columns = {
                (t, c)
                for t, c, clause in conn.exec_driver_sql(
                    "SELECT TABLE_NAME, CONSTRAINT_NAME, CHECK_CLAUSE FROM "
                    "information_schema.CHECK_CONSTRAINTS WHERE CONSTRAINT_SCHEMA = DATABASE() "
                    "AND LEVEL = 'Column'"
                )
                if clause.startswith("json_valid(")
            }
        # text compares exactly; a JSON column is MariaDB's JSON (a json_valid CHECK, and
        # MariaDB's own utf8mb4_bin when created as JSON): SQL never compares it whole
        # (a filter refuses), only values read out of it (test_json_queries)
        assert ("word", "tags") in json_columns
        assert {v for k, v in found.items() if k not in json_columns} == {"utf8mb4_nopad_bin"}
        assert {found[k] for k in json_columns} <= {"utf8mb4_bin", "utf8mb4_nopad_bin"}
        assert ("shelf_notes", "parent_key") in found
    finally:
        store.close()
        _drop_everything(mariadb_url)


def test_reflected_mariadb_table_keeps_its_own_collation(mariadb_url: str) -> None:
    """What the README says about tables entityworks did not create: their collation rules.
    A ``utf8mb4_general_ci`` table matches case and trailing-space variants; converted with
    the statement the README gives, it compares exactly."""
    from tests.entityworks.conftest import _drop_everything

    _drop_everything(mariadb_url)
    store = Store(mariadb_url)
    try:
        with store.engine.begin() as conn:
            conn.exec_driver_sql(
                "CREATE TABLE legacy (id INT PRIMARY KEY, w VARCHAR(20)) "
                "CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci"
            )
            conn.execute(
                sa.table("legacy", sa.column("id"), sa.column("w")).insert(),
                [{"id": i, "w": w} for i, w in enumerate(["caves", "CAVES", "caves "])],
            )
        legacy = store.reflect("legacy")
        assert sorted(r.id for r in store.select(legacy, where={"w": "caves"})) == [0, 1, 2]
        with store.engine.begin() as conn:
            conn.exec_driver_sql(
                "ALTER TABLE legacy CONVERT TO CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin"
            )
        assert [r.id for r in store.select(legacy, where={"w": "caves"})] == [0]
    finally:
        store.close()
        _drop_everything(mariadb_url)

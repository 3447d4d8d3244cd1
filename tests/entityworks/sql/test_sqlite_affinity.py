"""SQLite columns with type affinity: other tools compare them with text-bound values (the
sqlite3 module, pandas.read_sql), and the Store keeps "exact or refused" itself.

Our SQLite tables declare an int, float or str field's column INTEGER, REAL or TEXT (0.2.3
declared them ANY with a CHECK on typeof, which compared no text with numbers: Datasette's
``?width=60`` found nothing). The affinity converts what is written, so the exactness tests
here run every write path, on every backend: a value of the wrong type is refused with its
class, field and row and nothing is written; -0.0 comes back with its sign.
"""

from __future__ import annotations

import math
import sqlite3
from dataclasses import dataclass
from pathlib import Path

import pytest
import sqlalchemy as sa

from entityworks import EntityworksError, Store, ValueEncodingError, table
from entityworks.arrow import from_arrow, to_arrow
from entityworks.catalog import generate_into, open_catalog
from entityworks.sql.encoded import EncodedRows, encode_rows


@table("gauges")
@dataclass
class Gauge:
    id: int | None
    count: int
    level: float
    label: str
    spare: float | None = None


@table("racks")
@dataclass
class Rack:
    id: int
    name: str
    slots: list[Gauge]


def _declared(path: Path, name: str) -> dict[str, str]:
    with sqlite3.connect(path) as conn:
        return {n: t for _, n, t, *_ in conn.execute("SELECT * FROM pragma_table_info(?)", (name,))}


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A catalog entityworks generated: dungeons (with rooms) of two sizes."""
    path = tmp_path_factory.mktemp("affinity") / "levels.db"
    store = open_catalog(path)
    generate_into(store, "dungeon", 2, seed=3, params={"width": 60, "height": 40})
    generate_into(store, "dungeon", 1, seed=9, params={"width": 70, "height": 40})
    store.close()
    return path


# -- other tools: text-bound comparisons find the rows ----------------------------------


def test_no_catalog_column_is_declared_any(catalog):
    with sqlite3.connect(catalog) as conn:
        tables = [n for (n,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    declared = {t: _declared(catalog, t) for t in tables}
    assert declared["maps"]["width"] == "INTEGER" and declared["maps"]["kind"] == "TEXT"
    assert declared["maps"]["open_ratio"] == "REAL"
    assert declared["maps_rooms"]["parent_key"] == "INTEGER"
    assert not [(t, c) for t, cols in declared.items() for c, d in cols.items() if d == "ANY"]


def test_sqlite3_equality_bound_as_text_finds_the_rows(catalog):
    with sqlite3.connect(catalog) as conn:
        wide = conn.execute("SELECT id FROM maps WHERE width = ? ORDER BY id", ("60",)).fetchall()
        assert wide == conn.execute("SELECT id FROM maps WHERE width = 60 ORDER BY id").fetchall()
        assert [i for (i,) in wide] == [1, 2]
        rooms = conn.execute(
            "SELECT count(*) FROM maps_rooms WHERE parent_key = ?", ("3",)
        ).fetchone()[0]
        assert (
            rooms
            == conn.execute("SELECT count(*) FROM maps_rooms WHERE parent_key = 3").fetchone()[0]
            > 0
        )
        # a join on the foreign key, and the key compared with text in the same statement
        joined = conn.execute(
            "SELECT maps.id, count(*) FROM maps JOIN maps_rooms ON maps_rooms.parent_key = "
            "maps.id WHERE maps.id = ? GROUP BY maps.id",
            ("3",),
        ).fetchall()
        assert joined == [(3, rooms)]
        seed = conn.execute("SELECT seed FROM maps WHERE id = 3").fetchone()[0]
        assert conn.execute("SELECT id FROM maps WHERE seed = ?", (str(seed),)).fetchall() == [(3,)]
        ratio = conn.execute("SELECT open_ratio FROM maps WHERE id = 1").fetchone()[0]
        assert (1,) in conn.execute(
            "SELECT id FROM maps WHERE open_ratio = ?", (repr(ratio),)
        ).fetchall()


def test_pandas_read_sql_with_a_text_parameter(catalog):
    pd = pytest.importorskip("pandas")
    with sqlite3.connect(catalog) as conn:
        frame = pd.read_sql(
            "SELECT id, width FROM maps WHERE width = ? ORDER BY id", conn, params=("70",)
        )
        rooms = pd.read_sql("SELECT * FROM maps_rooms WHERE parent_key = ?", conn, params=("1",))
    assert frame["id"].tolist() == [3] and frame["width"].tolist() == [70]
    assert len(rooms) > 0 and set(rooms["parent_key"]) == {1}


def test_every_door_reads_the_same_rows_as_the_store(catalog):
    from entityworks.catalog import MapRecord

    store = Store(catalog)
    try:
        by_store = sorted(m.id for m in store.select(MapRecord) if m.width == 60)
    finally:
        store.close()
    with sqlite3.connect(catalog) as conn:
        assert by_store == [
            i for (i,) in conn.execute("SELECT id FROM maps WHERE width = ? ORDER BY id", ("60",))
        ]


# -- exactness: the Store refuses what the affinity would convert --------------------------


BAD = [
    ("count", "12", "int"),
    ("label", 12, "str"),
    ("level", "1.5", "float"),
    ("count", 1.0, "int"),
    ("label", b"x", "str"),
]


def _good(i: int | None = None) -> Gauge:
    return Gauge(i, 1, 0.5, "ok")


def _bad(field: str, value: object, i: int | None = None) -> Gauge:
    g = _good(i)
    setattr(g, field, value)
    return g


def _count(store: Store) -> int:
    with store.engine.connect() as conn:
        return int(conn.execute(sa.text("SELECT count(*) FROM gauges")).scalar_one())


@pytest.mark.parametrize(("field", "value", "kind"), BAD)
def test_wrong_types_are_refused_on_every_write_path(store, field, value, kind):
    store.create(Gauge)
    paths = {  # name: (write, the row the error names)
        "insert": (lambda: store.insert(_bad(field, value)), 0),
        "insert_many": (
            lambda: store.insert_many([_good() for _ in range(130)] + [_bad(field, value)]),
            130,
        ),
        "insert_many keyed": (
            lambda: store.insert_many([_good(i) for i in range(1, 70)] + [_bad(field, value, 70)]),
            69,
        ),
        "upsert": (lambda: store.upsert(_bad(field, value, 1)), 0),
        "upsert_many": (
            lambda: store.upsert_many([_good(i) for i in range(1, 5)] + [_bad(field, value, 5)]),
            4,
        ),
    }
    for name, (write, row) in paths.items():
        with pytest.raises(ValueEncodingError) as caught:
            write()
        assert (caught.value.column, caught.value.row) == (field, row), name
        assert f"expected a{'n' if kind == 'int' else ''} {kind}" in str(caught.value), name
        assert _count(store) == 0, name  # nothing written
    store.insert(_good(1))
    with pytest.raises(ValueEncodingError) as caught:
        store.update(_bad(field, value, 1))
    assert caught.value.column == field
    with pytest.raises(EntityworksError):
        store.update(Gauge, {field: value}, where={"id": 1})
    assert store.get(Gauge, 1) == _good(1)


@pytest.mark.parametrize(("field", "value", "kind"), BAD)
def test_wrong_types_are_refused_in_encoded_rows(store, field, value, kind):
    store.create(Gauge)
    batch = encode_rows([_good() for _ in range(3)])
    at = [name for name, _ in batch.layout].index(field)
    rows = [
        tuple(value if j == at else v for j, v in enumerate(r)) if i == 2 else r
        for i, r in enumerate(batch.rows)
    ]
    planted = EncodedRows(batch.cls, batch.layout, rows, batch.children)
    with pytest.raises(ValueEncodingError) as caught:
        store.insert_encoded(planted)
    assert caught.value.column == field and caught.value.row == 2
    assert _count(store) == 0


def test_encoded_rows_of_a_child_list_are_checked(store):
    store.create(Rack)
    batch = encode_rows([Rack(1, "a", [Gauge(None, 1, 0.5, "x"), Gauge(None, 2, 0.5, "y")])])
    child = batch.children[0]
    at = 1 + [name for name, _ in child.layout].index("count")  # after the position
    bad_rows = [child.rows[0], tuple("7" if j == at else v for j, v in enumerate(child.rows[1]))]
    planted = EncodedRows(
        batch.cls,
        batch.layout,
        batch.rows,
        (type(child)(child.field, child.layout, bad_rows, child.counts),),
    )
    with pytest.raises(ValueEncodingError) as caught:
        store.insert_encoded(planted)
    assert caught.value.column == "count"
    assert list(store.select(Rack)) == []


@table("keyed")
@dataclass
class Keyed:
    id: int
    name: str


def test_a_key_of_another_type_is_refused_on_every_write_path(store):
    # SQLite's rowid (INTEGER PRIMARY KEY) turns '14' into 14: the Store refuses it first
    store.create(Keyed)
    for write in (
        lambda: store.insert(Keyed("14", "a")),
        lambda: store.insert_many([Keyed(1, "a"), Keyed("14", "b")]),
        lambda: store.upsert(Keyed("14", "a")),
        lambda: store.upsert_many([Keyed(1, "a"), Keyed("14", "b")]),
        lambda: store.insert_encoded(
            EncodedRows(Keyed, encode_rows([Keyed(1, "a")]).layout, [("14", "a")], ())
        ),
    ):
        with pytest.raises(ValueEncodingError) as caught:
            write()
        assert caught.value.column == "id"
    assert list(store.select(Keyed)) == []


def test_a_bool_in_an_int_field_is_stored_as_its_int(store):
    # as before (and as check_int says): a bool is an int; it comes back as the int
    store.create(Gauge)
    store.insert(Gauge(1, True, 0.5, "a"))
    store.insert_many([Gauge(2, False, 0.5, "b"), Gauge(3, True, 1, "c")])
    store.insert_encoded(encode_rows([Gauge(4, True, 0.5, "d")]))
    got = {g.id: g for g in store.select(Gauge)}
    assert [got[i].count for i in (1, 2, 3, 4)] == [1, 0, 1, 1]
    assert {type(got[i].count) for i in got} == {int}
    assert type(got[3].level) is float and got[3].level == 1.0


def _signs(values: list[float | None]) -> list[float | None]:
    return [None if v is None else math.copysign(1.0, v) for v in values]


def test_negative_zero_comes_back_on_every_write_path(store):
    store.create(Gauge)
    store.insert(Gauge(1, 1, -0.0, "a", -0.0))
    store.insert_many(
        [Gauge(2, 1, -0.0, "b", None), Gauge(3, 1, 0.0, "c", -0.0)]
        + [Gauge(i, 1, -0.0 if i % 2 else 0.0, "x") for i in range(4, 200)]
    )
    store.insert_encoded(encode_rows([Gauge(200, 1, -0.0, "d", -0.0)]))
    store.upsert(Gauge(201, 1, -0.0, "e"))
    store.upsert_many([Gauge(202, 1, -0.0, "f"), Gauge(3, 1, -0.0, "c", 0.0)])
    store.insert(Gauge(203, 1, 0.0, "g"))
    store.update(Gauge(203, 1, -0.0, "g", -0.0))
    store.update(Gauge, {"spare": -0.0}, where={"id": 2})
    got = {g.id: g for g in store.select(Gauge)}
    assert _signs([got[1].level, got[1].spare]) == [-1.0, -1.0]
    assert _signs([got[2].level, got[2].spare]) == [-1.0, -1.0]
    assert _signs([got[3].level, got[3].spare]) == [-1.0, 1.0]
    assert [_signs([got[i].level])[0] for i in range(4, 200)] == [
        -1.0 if i % 2 else 1.0 for i in range(4, 200)
    ]
    assert _signs([got[i].level for i in (200, 201, 202, 203)]) == [-1.0] * 4
    assert _signs([got[200].spare, got[203].spare]) == [-1.0, -1.0]
    # the Arrow door in and out: the sign kept
    table_ = to_arrow(Gauge, [got[1], got[3]])
    again = from_arrow(Gauge, table_)
    assert _signs([again[0].level, again[1].level]) == [-1.0, -1.0]


def test_negative_zero_through_arrow_import(store):
    store.create(Gauge)
    rows = [Gauge(1, 1, -0.0, "a", -0.0), Gauge(2, 2, 0.0, "b", None)]
    store.insert_many(from_arrow(Gauge, to_arrow(Gauge, rows)))
    got = {g.id: g for g in store.select(Gauge)}
    assert _signs([got[1].level, got[1].spare, got[2].level]) == [-1.0, -1.0, 1.0]


def test_nan_and_infinities(store):
    store.create(Gauge)
    name = store.engine.dialect.name
    if name in ("mysql", "mariadb"):  # MariaDB has no infinity: refused, nothing written
        with pytest.raises(EntityworksError):
            store.insert_many([Gauge(1, 1, math.inf, "a", -math.inf)])
        assert list(store.select(Gauge)) == []
        store.insert(Gauge(1, 1, 0.5, "a"))
    else:
        store.insert_many([Gauge(1, 1, math.inf, "a", -math.inf)])
        assert store.get(Gauge, 1) == Gauge(1, 1, math.inf, "a", -math.inf)
    # a nullable column: SQLite would store NaN as NULL, so it is refused there
    if name == "sqlite":
        for write in (
            lambda: store.insert(Gauge(2, 1, 0.5, "b", math.nan)),
            lambda: store.insert_many(
                [Gauge(i, 1, 0.5, "b", math.nan if i == 9 else None) for i in range(2, 20)]
            ),
        ):
            with pytest.raises(ValueEncodingError) as caught:
                write()
            assert caught.value.column == "spare"
        # a NOT NULL column: the database refuses the NULL NaN becomes
        with pytest.raises(EntityworksError):
            store.insert_many([Gauge(2, 1, math.nan, "b")])
        assert [g.id for g in store.select(Gauge)] == [1]
    else:  # PostgreSQL keeps NaN; MariaDB refuses it
        try:
            store.insert(Gauge(2, 1, math.nan, "b", math.nan))
        except EntityworksError:
            assert [g.id for g in store.select(Gauge)] == [1]
        else:
            back = store.get(Gauge, 2)
            assert back is not None and math.isnan(back.level) and math.isnan(back.spare)


def test_the_sqlite_columns_have_affinity_and_a_sign_companion(tmp_path):
    store = Store(tmp_path / "t.db")
    store.create(Gauge)
    store.close()
    declared = _declared(tmp_path / "t.db", "gauges")
    assert declared == {
        "id": "INTEGER",
        "count": "INTEGER",
        "level": "REAL",
        "level__negzero": "INTEGER",
        "label": "TEXT",
        "spare": "REAL",
        "spare__negzero": "INTEGER",
    }
    with sqlite3.connect(tmp_path / "t.db") as conn:
        checks = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'gauges'").fetchone()
    assert "typeof" not in checks[0]


# -- tables written by 0.2.3: ANY columns are still read and written exactly ------------


OLD_GAUGES = """CREATE TABLE gauges (
    id INTEGER NOT NULL,
    count ANY NOT NULL CONSTRAINT type_count CHECK (typeof("count") = 'integer' OR "count" IS NULL),
    level ANY NOT NULL CONSTRAINT type_level CHECK (typeof("level") = 'real' OR "level" IS NULL),
    label ANY NOT NULL CONSTRAINT type_label CHECK (typeof("label") = 'text' OR "label" IS NULL),
    spare ANY CONSTRAINT type_spare CHECK (typeof("spare") = 'real' OR "spare" IS NULL),
    PRIMARY KEY (id)) STRICT"""


def test_a_table_of_0_2_3_is_read_and_written_exactly(tmp_path):
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as conn:
        conn.execute(OLD_GAUGES)
        conn.execute("INSERT INTO gauges VALUES (1, 5, ?, 'old', NULL)", (-0.0,))
    store = Store(path)
    try:
        assert _signs([store.get(Gauge, 1).level]) == [-1.0]
        store.insert_many([Gauge(2, True, -0.0, "a", -0.0), Gauge(3, 2, 1, "b")])
        store.insert(Gauge(4, 3, -0.0, "c"))
        store.insert_encoded(encode_rows([Gauge(5, 4, -0.0, "d")]))
        for bad in (_bad("count", "12", 6), _bad("label", 12, 6), _bad("level", "1", 6)):
            with pytest.raises(ValueEncodingError):
                store.insert_many([bad])
            with pytest.raises(ValueEncodingError):
                store.insert(bad)
        got = {g.id: g for g in store.select(Gauge)}
    finally:
        store.close()
    assert sorted(got) == [1, 2, 3, 4, 5]
    assert _signs([got[i].level for i in (1, 2, 4, 5)]) == [-1.0] * 4
    assert got[2].count == 1 and type(got[2].count) is int and got[3].level == 1.0
    assert _declared(path, "gauges") == {
        "id": "INTEGER",
        "count": "ANY",
        "level": "ANY",
        "label": "ANY",
        "spare": "ANY",
    }  # no companion

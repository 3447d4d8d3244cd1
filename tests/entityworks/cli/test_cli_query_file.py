"""``entityworks query`` on an SQLite file reads it without SQLAlchemy
(:mod:`entityworks.sql.backends.sqlitefile`) and prints exactly what reading it through the
Store prints: both paths run on the same databases (the catalog's tables, tables written by
the Store with every registry type, tables another program made) with every option, and
their output, exit status and messages are compared byte for byte. Where the file reader
leaves a table to the Store, the test says so (``STORE_ONLY``), so that a table silently
falling back cannot pass as read directly."""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import enum
import sqlite3
import uuid
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import entityworks.cli._catalog as command
from entityworks.cli import cli
from entityworks.registry import AwareDatetime
from entityworks.sql.store import Store

UTC = dt.UTC


class Mood(enum.Enum):
    HAPPY = "happy"
    SAD = "sad"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


@dataclasses.dataclass
class Every:
    """A field of each registry type, Optional where NULL can be stored."""

    id: int = dataclasses.field(metadata={"primary_key": True})
    name: str = ""
    count: int | None = None
    ratio: float | None = None
    flag: bool | None = None
    amount: decimal.Decimal | None = None
    at: AwareDatetime | None = None
    naive: dt.datetime | None = None
    day: dt.date | None = None
    clock: dt.time | None = None
    span: dt.timedelta | None = None
    ident: uuid.UUID | None = None
    blob: bytes | None = None
    data: dict[str, Any] | None = None
    items: list[int] | None = None
    mood: Mood | None = None
    level: Level | None = None
    code: str | None = dataclasses.field(default=None, metadata={"max_length": 8})


@dataclasses.dataclass
class Book:
    title: str
    price: decimal.Decimal | None = None
    bought: AwareDatetime | None = None


@dataclasses.dataclass
class Shelf:
    id: int = dataclasses.field(metadata={"primary_key": True})
    label: str = ""
    books: list[Book] = dataclasses.field(default_factory=list)


def _every_rows() -> list[Every]:
    rows = _every_values()
    rows[0].code, rows[2].code = "ab'cd", "x"
    return rows


def _every_values() -> list[Every]:
    tz = dt.timezone(dt.timedelta(hours=5, minutes=30))
    return [
        Every(
            1,
            "alpha",
            3,
            -0.0,
            True,
            decimal.Decimal("-1.50"),
            dt.datetime(2020, 1, 1, 12, tzinfo=tz),
            dt.datetime(2020, 1, 1, 1, 2, 3, 456),
            dt.date(2020, 2, 29),
            dt.time(1, 2, 3, 4),
            dt.timedelta(days=-1, microseconds=5),
            uuid.UUID(int=7),
            b"\x00\xff",
            {"b": 2, "a": [1, None]},
            [1, 2],
            Mood.HAPPY,
            Level.HIGH,
        ),
        Every(2, "beta\ttab", None, None, None, None, None, None, None, None, None, None, None),
        Every(
            3,
            "Alpha%_\\x",
            -(2**63),
            float("inf"),
            False,
            decimal.Decimal("12345678901234567890.000000000000000000001"),
            dt.datetime(1999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
            dt.datetime(1, 1, 1),
            dt.date(1, 1, 1),
            dt.time(23, 59, 59, 999999),
            dt.timedelta(0),
            uuid.UUID(int=2**128 - 1),
            b"",
            {},
            [],
            Mood.SAD,
            Level.LOW,
        ),
        Every(
            4,
            "nul\x00inside",
            2**63 - 1,
            1e-300,
            True,
            decimal.Decimal("0.000"),
            dt.datetime(2020, 1, 1, 12, tzinfo=dt.timezone(-dt.timedelta(hours=14))),
            None,
            dt.date(9999, 12, 31),
            None,
            dt.timedelta(days=3, seconds=7),
            None,
            b"x" * 100,
            None,
            None,
            None,
            None,
        ),
        Every(5, "日本語 ‮bidi", 0, 0.1, None, decimal.Decimal("1.5"), None, None, None),
    ]


@pytest.fixture(scope="module")
def catalog(tmp_path_factory) -> Path:
    """The demo catalog: maps of every kind with their child rows (packed grids, point
    paths), sudoku puzzles, entropy reports."""
    out = tmp_path_factory.mktemp("demo")
    result = CliRunner().invoke(cli, ["demo", "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out / "catalog.db"


@pytest.fixture(scope="module")
def user_db(tmp_path_factory) -> Path:
    """Tables written by the Store (reflected from their logical schema), and tables made by
    another program (reflected from their declared types)."""
    path = tmp_path_factory.mktemp("user") / "user.db"
    with Store(path) as store:
        store.create(Every)
        store.insert_many(_every_rows())
        store.create(Shelf)
        at = dt.datetime(2021, 5, 6, 7, 8, 9, tzinfo=dt.timezone(dt.timedelta(hours=-3)))
        store.insert_many(
            [
                Shelf(1, "top", [Book("a", decimal.Decimal("9.99"), at), Book("b")]),
                Shelf(2, "empty"),
                Shelf(3, "low", [Book("c", decimal.Decimal("-0.5"))]),
            ]
        )
    with sqlite3.connect(path) as conn:
        conn.executescript(
            '''
            CREATE TABLE plain (
                id INTEGER PRIMARY KEY, label TEXT, price NUMERIC, weight REAL,
                born DATE, seen DATETIME, short VARCHAR(10), ok BOOLEAN, raw BLOB,
                big BIGINT, at TIME, amount DECIMAL(10, 2), note CLOB, mass DOUBLE PRECISION
            );
            INSERT INTO plain VALUES
                (1, 'one', NULL, 1.5, '2020-01-02', '2020-01-02 03:04:05', 'x', 1, x'00ff',
                 9, '01:02:03', NULL, 'n', 2.5),
                (2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                 NULL),
                (3, 'three', NULL, -0.0, '1999-12-31', '1999-12-31 23:59:59.5', 'y', 0, x'',
                 -9, '23:59:59', NULL, '', -1e300);
            CREATE TABLE numbers (id INTEGER PRIMARY KEY, price NUMERIC);
            INSERT INTO numbers VALUES (1, '1.25');
            CREATE TABLE "odd ""name""" ("select" INTEGER PRIMARY KEY, "order" TEXT);
            INSERT INTO "odd ""name""" VALUES (1, 'a'), (2, 'b');
            CREATE TABLE odd_columns ("we""ird col" INTEGER PRIMARY KEY);
            CREATE TABLE untyped (id INTEGER PRIMARY KEY, anything);
            INSERT INTO untyped VALUES (1, 'x');
            CREATE TABLE jsoned (id INTEGER PRIMARY KEY, doc JSON);
            CREATE TABLE checked (id INTEGER PRIMARY KEY, n ANY CHECK (typeof(n) = 'integer'));
            INSERT INTO checked VALUES (1, 5);
            CREATE TABLE positive (id INTEGER PRIMARY KEY, n INTEGER CHECK (n > 0));
            INSERT INTO positive VALUES (1, 5), (2, NULL);
            '''
        )
    return path


#: Tables the file reader leaves to the Store (each for the reason given).
STORE_ONLY = {
    "untyped": "a column without a type: the Store refuses it in its own words",
    "jsoned": "a JSON column: the Store refuses it in its own words",
    "checked": "an ANY column typed by a CHECK on typeof: SQLAlchemy's inspector reads it",
    "odd_columns": "a column no field can be named after: the Store refuses it in its words",
}


def run_both(db: Path, args: list[str], monkeypatch) -> tuple[Any, Any, bool]:
    """``query`` through the file reader and through the Store; whether the file reader
    printed it itself."""
    read: list[bool] = []
    direct = command._from_file

    def spied(*a: Any, **k: Any) -> str | None:
        text = direct(*a, **k)
        read.append(text is not None)
        return text

    full = ["query", *args, "--db", str(db)]
    monkeypatch.setattr(command, "_from_file", spied)
    monkeypatch.setattr(command, "READ_FILES_DIRECTLY", True)
    fast = CliRunner().invoke(cli, full)
    monkeypatch.setattr(command, "READ_FILES_DIRECTLY", False)
    slow = CliRunner().invoke(cli, full)
    return fast, slow, any(read)


def same(db: Path, args: list[str], monkeypatch, *, direct: bool | None = True) -> str:
    fast, slow, read = run_both(db, args, monkeypatch)
    assert fast.exception is None or isinstance(fast.exception, SystemExit), fast.exception
    assert (fast.exit_code, fast.stdout, fast.stderr) == (slow.exit_code, slow.stdout, slow.stderr)
    if direct is not None and fast.exit_code == 0:
        assert read is direct, args
    return str(fast.stdout)


def _options(columns: list[str]) -> list[list[str]]:
    out: list[list[str]] = [
        [],
        ["--limit", "2"],
        ["--offset", "1"],
        ["--limit", "1", "--offset", "2"],
        ["--limit", "0"],
        ["--count"],
        ["--format", "csv"],
        ["--format", "json"],
        ["--format", "jsonl"],
        ["--format", "json", "--arrays", "base64"],
        ["--format", "jsonl", "--limit", "0"],
        ["-c", ",".join(reversed(columns[:3]))],
    ]
    for name in columns:
        out.append(["-o", name, "--format", "csv"])
        out.append(["-o", f"-{name}", "-o", columns[0], "--format", "jsonl"])
    return out


CATALOG_TABLES = [
    "maps",
    "maps_caves",
    "maps_rooms",
    "maps_corridors",
    "maps_placements",
    "sudoku_puzzles",
    "sudoku_entries",
    "entropy_reports",
    "entityworks_version",
    "entityworks_schema",
]


def _columns(db: Path, table: str) -> list[str]:
    with sqlite3.connect(db) as conn:
        quoted = '"' + table.replace('"', '""') + '"'
        names = [r[1] for r in conn.execute(f"PRAGMA table_info({quoted})")]
    # companions are no fields (query names fields); a Decimal's key column neither
    return [n for n in names if "__" not in n]


@pytest.mark.parametrize("table", CATALOG_TABLES)
def test_the_catalog_s_tables_read_the_same(catalog, table, monkeypatch):
    columns = _columns(catalog, table)
    for args in _options(columns):
        same(catalog, [table, *args], monkeypatch)


def _where_forms(db: Path, table: str, monkeypatch) -> list[str]:
    """``--where`` forms for each column, with values the table holds (their text as
    ``query --format csv`` prints it) and values it does not."""
    text = same(db, [table, "--format", "csv"], monkeypatch, direct=None)
    import csv
    import io

    rows = list(csv.reader(io.StringIO(text)))
    header, body = rows[0], rows[1:]
    forms = []
    for i, name in enumerate(header):
        forms += [f"{name}=null", f"{name}!=null", f"{name} like a%", f"{name}=nothing-like-it"]
        values = [r[i] for r in body if r[i] not in ("", "NULL")][:2]
        for value in values:
            forms += [f"{name}={value}", f"{name}!={value}", f"{name}>={value}", f"{name}<{value}"]
        if values:
            forms += [f"{name} in {','.join(values)}", f"{name} not in {values[0]}"]
    return forms


@pytest.mark.parametrize("table", ["maps", "maps_caves", "sudoku_puzzles", "entropy_reports"])
def test_the_catalog_s_filters_read_the_same(catalog, table, monkeypatch):
    for form in _where_forms(catalog, table, monkeypatch):
        same(catalog, [table, "-w", form], monkeypatch)
        same(catalog, [table, "-w", form, "--count"], monkeypatch)


@pytest.mark.parametrize("table", ["every", "plain", 'odd "name"'])
def test_user_tables_read_the_same(user_db, table, monkeypatch):
    columns = _columns(user_db, table)
    for args in _options(columns):
        same(user_db, [table, *args], monkeypatch)
    for form in _where_forms(user_db, table, monkeypatch):
        same(user_db, [table, "-w", form], monkeypatch)
        same(user_db, [table, "-w", form, "-o", f"-{columns[-1]}", "--format", "json"], monkeypatch)


def test_every_other_user_table_reads_the_same(user_db, monkeypatch):
    """The tables of a class with a child list, and its child table, among others."""
    with sqlite3.connect(user_db) as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    others = [
        t for t in tables if t not in STORE_ONLY and t not in ("every", "plain", 'odd "name"')
    ]
    assert {"shelf", "numbers", "positive", "entityworks_schema"} <= set(others), others
    assert len(others) >= 4, others  # the shelf's child table too
    for table in others:
        if table == "numbers":
            continue  # see test_a_row_the_store_refuses_is_refused_the_same
        columns = _columns(user_db, table)
        for args in _options(columns):
            same(user_db, [table, *args], monkeypatch)
        for form in _where_forms(user_db, table, monkeypatch):
            same(user_db, [table, "-w", form], monkeypatch)


def test_tables_missing_companion_columns_read_the_same(tmp_path, monkeypatch):
    """A table made before a companion column existed (or whose companion was dropped) is
    read without it, as the Store reads it."""
    db = tmp_path / "older.db"
    with Store(db) as store:
        store.create(Every)
        store.insert_many(_every_rows())
    with sqlite3.connect(db) as conn:
        conn.execute("ALTER TABLE every DROP COLUMN ratio__negzero")
        conn.execute("ALTER TABLE every DROP COLUMN at__offset")
    for args in _options(_columns(db, "every")):
        same(db, ["every", *args], monkeypatch)
    for form in _where_forms(db, "every", monkeypatch):
        same(db, ["every", "-w", form], monkeypatch)


@pytest.mark.parametrize("table", sorted(STORE_ONLY))
def test_tables_left_to_the_store_read_the_same(user_db, table, monkeypatch):
    for args in ([], ["--count"], ["--format", "json"]):
        same(user_db, [table, *args], monkeypatch, direct=False)


def test_a_row_the_store_refuses_is_refused_the_same(user_db, monkeypatch):
    """A number in a NUMERIC column another program wrote (a Decimal is kept as text): the
    row is refused, naming it; counting reads no value."""
    for args in ([], ["-c", "id"], ["-w", "price=1.25"], ["-w", "price=1.25", "--count"]):
        same(user_db, ["numbers", *args], monkeypatch)


@pytest.mark.parametrize(
    "args",
    [
        ["nosuchtable"],
        ["maps", "-w", "colour=red"],
        ["maps", "-w", "width=wide"],
        ["maps", "-w", "width>=1.5"],
        ["maps", "-w", "grid=1"],
        ["maps", "-w", "parameters=x"],
        ["maps", "-w", "width like 1%"],
        ["maps", "-w", "kind like a\\b"],
        ["maps", "-w", "kind"],
        ["maps", "-w", "width>null"],
        ["maps", "-o", "colour"],
        ["maps", "-o", "-"],
        ["maps", "-c", "id,id"],
        ["maps", "-c", "colour"],
        ["maps", "--count", "--limit", "1"],
        ["maps", "--count", "-o", "id"],
        ["maps_caves", "-w", "parent_key=x"],
        ["sudoku_puzzles", "-w", "difficulty in 1,x"],
    ],
)
def test_refusals_read_the_same(catalog, args, monkeypatch):
    fast, slow, _read = run_both(catalog, args, monkeypatch)
    assert fast.exit_code != 0
    assert (fast.exit_code, fast.stdout, fast.stderr) == (slow.exit_code, slow.stdout, slow.stderr)
    assert "Traceback" not in fast.stderr and len(fast.stderr.strip().splitlines()) >= 1


def test_a_missing_table_of_the_catalog_is_named_the_same(tmp_path, monkeypatch):
    db = tmp_path / "empty.db"
    sqlite3.connect(db).close()
    for table in ("maps", "other"):
        fast, slow, _read = run_both(db, [table], monkeypatch)
        assert fast.exit_code != 0
        assert (fast.exit_code, fast.stderr) == (slow.exit_code, slow.stderr)


def test_a_file_that_is_no_database_is_refused_the_same(tmp_path, monkeypatch):
    db = tmp_path / "text.db"
    db.write_text("not a database\n" * 100)
    fast, slow, _read = run_both(db, ["maps"], monkeypatch)
    assert fast.exit_code != 0
    assert (fast.exit_code, fast.stderr) == (slow.exit_code, slow.stderr)


def test_a_damaged_file_is_refused_the_same(tmp_path, monkeypatch):
    db = tmp_path / "damaged.db"
    with Store(db) as store:
        store.create(Every)
        store.insert_many(_every_rows() * 1 + [Every(i, "x" * 500) for i in range(10, 60)])
    with sqlite3.connect(db) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = bytearray(db.read_bytes())
    data[4096 * 2 : 4096 * 2 + 2000] = b"\xff" * 2000  # a page of the table's rows
    db.write_bytes(bytes(data))
    for args in (["every"], ["every", "--count"], ["every", "-w", "name=x"]):
        fast, slow, _read = run_both(db, args, monkeypatch)
        assert (fast.exit_code, fast.stdout, fast.stderr) == (
            slow.exit_code,
            slow.stdout,
            slow.stderr,
        )
        assert "Traceback" not in fast.stderr


def test_a_row_another_tool_broke_is_refused_the_same(tmp_path, monkeypatch):
    db = tmp_path / "broken.db"
    with Store(db) as store:
        store.create(Every)
        store.insert_many(_every_rows()[:2])
    with sqlite3.connect(db) as conn:  # a Decimal's text and key that disagree
        conn.execute("UPDATE every SET amount = '2' WHERE id = 1")
        conn.execute("UPDATE every SET day = 'not a date' WHERE id = 2")
    for args in (["every"], ["every", "-o", "-id"]):
        fast, slow, read = run_both(db, args, monkeypatch)
        assert read is False or fast.exit_code != 0
        assert (fast.exit_code, fast.stdout, fast.stderr) == (
            slow.exit_code,
            slow.stdout,
            slow.stderr,
        )
        assert "Traceback" not in fast.stderr
    # --columns reads those columns only, as the API's rows(columns=...) does: the broken
    # values are not read, so not refused, by either path
    fast, slow, read = run_both(db, ["every", "-c", "id", "--format", "csv"], monkeypatch)
    assert read is True
    assert (fast.exit_code, fast.stdout, fast.stderr) == (slow.exit_code, slow.stdout, slow.stderr)
    with Store(db) as store:
        assert [r for b in store.rows(Every, columns=["id"]) for r in b] == [(1,), (2,)]
    assert fast.stdout.split() == ["id", "1", "2"]


@dataclasses.dataclass
class Drawn:
    id: int = dataclasses.field(metadata={"primary_key": True})
    text: str | None = None
    number: float | None = None
    amount: decimal.Decimal | None = None
    at: AwareDatetime | None = None
    span: dt.timedelta | None = None


_aware = st.datetimes(
    min_value=dt.datetime(1, 1, 2), max_value=dt.datetime(9999, 12, 30), timezones=st.timezones()
)
_rows = st.lists(
    st.tuples(
        st.none() | st.text(max_size=8),
        st.none() | st.floats(allow_nan=False),
        st.none()
        | st.decimals(
            allow_nan=False, allow_infinity=False, places=4, min_value=-(10**20), max_value=10**20
        ),
        st.none() | _aware,
        st.none() | st.timedeltas(),
    ),
    max_size=6,
)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(rows=_rows, pick=st.integers(0, 5), descending=st.booleans())
def test_any_values_read_the_same(tmp_path_factory, monkeypatch, rows, pick, descending):
    db = tmp_path_factory.mktemp("drawn") / "drawn.db"
    with Store(db) as store:
        store.create(Drawn)
        try:
            store.insert_many([Drawn(i, *row) for i, row in enumerate(rows)])
        except Exception:  # noqa: BLE001 - a value the Store refuses is not this test's
            return
    names = ["id", "text", "number", "amount", "at", "span"]
    order = ("-" if descending else "") + names[pick]
    same(db, ["drawn", "-o", order, "-o", "id", "--format", "jsonl"], monkeypatch)
    same(db, ["drawn", "-o", order, "-o", "id"], monkeypatch)
    for form in _where_forms(db, "drawn", monkeypatch)[:40]:
        same(db, ["drawn", "-w", form, "--count"], monkeypatch)

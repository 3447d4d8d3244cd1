"""Companion columns edited by another tool (issue 29 item 4): a row whose companions disagree
with the value beside them, or hold what entityworks never writes, is refused on read through
every door (``get``, ``select``, ``rows``, frames, XML, the CLI ``query``) with a
:class:`StoredValueError` naming the table, the row's key and the field's column; a
companion edit that keeps one value for every tool reads as that value.

The edits are made with each backend's own driver (sqlite3, psycopg, pymysql); what "every
other tool" sees is read with that driver too.
"""

from __future__ import annotations

import datetime as dt
import decimal
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from entityworks import AwareDatetime, Store, StoredValueError
from entityworks.cli import cli
from entityworks.sql.sqltypes import decimal_key
from entityworks.types.scalars import check_aware_datetime, check_decimal

D = decimal.Decimal
TWO = dt.timezone(dt.timedelta(hours=2))


@dataclass
class Reading:
    id: int
    amount: D | None = None
    level: float | None = None
    at: AwareDatetime | None = None


@dataclass
class Probe:
    label: str
    amount: D | None = None


@dataclass
class Sensor:
    id: int
    probes: list[Probe]


ROWS = [
    Reading(1, D("1.50"), 2.5, dt.datetime(2024, 1, 1, 12, tzinfo=TWO)),
    Reading(2, D("-3.250"), 0.0, dt.datetime(2024, 5, 6, 7, 8, tzinfo=TWO)),
    Reading(3, None, None, None),
]


class Raw:
    """The backend's own driver on the database of ``url`` (no entityworks, no SQLAlchemy
    statement: what another tool does)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.sqlite = url.startswith("sqlite")
        if self.sqlite:
            self.conn: Any = sqlite3.connect(sa.make_url(url).database)
            self.mark = "?"
        else:
            self.engine = sa.create_engine(url)
            self.conn = self.engine.raw_connection()
            self.mark = "%s"

    def execute(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        cursor = self.conn.cursor()
        try:
            cursor.execute(sql.replace("?", self.mark), params)
            rows = list(cursor.fetchall()) if cursor.description else []
        finally:
            cursor.close()
        self.conn.commit()
        return rows

    def set(self, table: str, column: str, value: Any, key: int) -> None:
        self.execute(f"UPDATE {table} SET {column} = ? WHERE id = ?", (value, key))

    def get(self, table: str, column: str, key: int) -> Any:
        return self.execute(f"SELECT {column} FROM {table} WHERE id = ?", (key,))[0][0]

    def columns(self, table: str) -> list[str]:
        if self.sqlite:
            return [r[1] for r in self.execute(f"PRAGMA table_info({table})")]
        return [c["name"] for c in sa.inspect(self.engine).get_columns(table)]

    def close(self) -> None:
        self.conn.close()
        if not self.sqlite:
            self.engine.dispose()


@pytest.fixture
def readings(backend_url: str) -> Iterator[tuple[Store, Raw]]:
    with Store(backend_url) as store:
        store.create(Reading)
        store.insert_many(ROWS)
        raw = Raw(backend_url)
        try:
            yield store, raw
        finally:
            raw.close()


def refusals(store: Store, url: str, tmp_path: Path) -> dict[str, BaseException | str | None]:
    """What each read door does with the table: its refusal (None: it read every row)."""
    doors: dict[str, Callable[[], Any]] = {
        "get": lambda: store.get(Reading, 2),
        "select": lambda: list(store.select(Reading)),
        "select as dicts": lambda: list(store.select(Reading, as_dict=True)),
        "rows": lambda: [r for batch in store.rows(Reading) for r in batch],
        "to_arrow": lambda: store.to_arrow(Reading),
        "to_pandas": lambda: store.to_pandas(Reading),
        "export_xml": lambda: store.export_xml(Reading, tmp_path / "r.xml"),
    }
    out: dict[str, BaseException | str | None] = {}
    for name, door in doors.items():
        try:
            door()
        except StoredValueError as exc:
            out[name] = exc
        else:
            out[name] = None
    result = CliRunner().invoke(cli, ["query", "reading", "--db", url, "--format", "jsonl"])
    out["cli query"] = result.stderr if result.exit_code else None
    if result.exit_code not in (0, 2):  # a bug's status, or a traceback
        raise AssertionError(result.output)
    return out


def assert_refused(found: dict[str, BaseException | str | None], column: str) -> None:
    for door, refusal in found.items():
        assert refusal is not None, f"{door} read the edited row"
        if isinstance(refusal, StoredValueError):
            assert (refusal.table, refusal.key, refusal.column) == ("reading", "id=2", column)
            text = str(refusal)
        else:  # the CLI: one line, no traceback
            assert isinstance(refusal, str) and refusal.count("\n") == 1, refusal
            assert "Traceback" not in refusal
            text = refusal
        assert "'reading'" in text and "id=2" in text and f"column {column!r}" in text, text


# -- out of range or inconsistent companions: refused on every backend ----------------------

#: (companion column, value another tool writes into row 2): what no write of entityworks
#: stores there. Each applies where the backend has that companion.
BAD_COMPANIONS = [
    ("at__offset", -841),
    ("at__offset", 841),
    ("at__offset", 5000),
    ("at__offset", -2000),
    ("amount__scale", 99),
    ("amount__scale", -3),
    ("amount__scale", 31),
    ("amount__scale", 1),  # -3.250 would lose a digit
    ("level__negzero", 2),
    ("level__negzero", 0),
    ("level__negzero", -1),
]


def test_a_companion_no_write_stores_is_refused_naming_row_and_column(
    readings: tuple[Store, Raw], backend_url: str, tmp_path: Path
) -> None:
    store, raw = readings
    live = raw.columns("reading")
    tried = 0
    for column, value in BAD_COMPANIONS:
        if column not in live:
            continue
        tried += 1
        field = column.partition("__")[0]
        before = raw.get("reading", column, 2)
        raw.set("reading", column, value, 2)
        try:
            assert_refused(refusals(store, backend_url, tmp_path), field)
            # the other rows, and the other columns of this one, still read
            assert store.get(Reading, 1) == ROWS[0]
            assert [r for (r,) in store.select(Reading, columns=["id"], order_by="id")] == [1, 2, 3]
        finally:
            raw.set("reading", column, before, 2)
        assert list(store.select(Reading, order_by="id")) == ROWS
    assert tried >= 4  # the offsets everywhere


def test_a_negative_zero_mark_beside_a_nonzero_float_is_refused(
    readings: tuple[Store, Raw], backend_url: str, tmp_path: Path
) -> None:
    """``level__negzero = 1`` beside 2.5 once read as -0.0 on MariaDB; beside a zero it is
    the sign entityworks keeps (every other tool reads 0, equal to -0.0)."""
    store, raw = readings
    if "level__negzero" not in raw.columns("reading"):
        pytest.skip("this backend keeps the sign of -0.0 in the float column itself")
    raw.set("reading", "level", 2.5, 2)
    raw.set("reading", "level__negzero", 1, 2)
    assert_refused(refusals(store, backend_url, tmp_path), "level")
    raw.set("reading", "level", 0.0, 2)
    got = store.get(Reading, 2)
    assert got is not None and got.level == raw.get("reading", "level", 2) == 0.0
    assert str(got.level) == "-0.0"


def test_an_offset_moving_the_instant_past_year_9999_is_refused(
    readings: tuple[Store, Raw], backend_url: str, tmp_path: Path
) -> None:
    store, raw = readings
    store.update(Reading(2, None, None, dt.datetime(9999, 12, 31, 23, 0, tzinfo=dt.UTC)))
    raw.set("reading", "at__offset", 840, 2)
    assert_refused(refusals(store, backend_url, tmp_path), "at")


@pytest.mark.parametrize(
    ("column", "value", "expected"),
    [
        (
            "at__offset",
            -600,
            dt.datetime(2024, 5, 5, 19, 8, tzinfo=dt.timezone(-dt.timedelta(hours=10))),
        ),
        ("at__offset", None, dt.datetime(2024, 5, 6, 5, 8, tzinfo=dt.UTC)),
        ("amount__scale", 5, D("-3.25000")),
        ("amount__scale", None, None),  # as the column holds it: checked below
    ],
)
def test_a_companion_edit_within_range_reads_the_value_every_tool_sees(
    readings: tuple[Store, Raw], column: str, value: Any, expected: Any
) -> None:
    """Another offset shows the same instant; another scale within what the value holds
    writes the same number: one value for every tool, read exactly as the companion says."""
    store, raw = readings
    if column not in raw.columns("reading"):
        pytest.skip(f"no {column} on this backend")
    raw.set("reading", column, value, 2)
    got = store.get(Reading, 2)
    assert got is not None
    field = column.partition("__")[0]
    read = getattr(got, field)
    assert read == getattr(ROWS[1], field)  # the same instant, the same number
    if expected is not None:
        assert str(read) == str(expected)
    elif field == "amount":  # MariaDB's DECIMAL(65, 30) as the column gives it
        assert read == raw.get("reading", "amount", 2)


# -- a SQLite Decimal's two homes: the text other tools read, the key entityworks compares --


@pytest.fixture
def sqlite_readings(tmp_path: Path) -> Iterator[tuple[Store, Raw, str]]:
    url = f"sqlite:///{tmp_path / 'r.db'}"
    with Store(url) as store:
        store.create(Reading)
        store.insert_many(ROWS)
        raw = Raw(url)
        try:
            yield store, raw, url
        finally:
            raw.close()


@pytest.mark.parametrize(
    "edit",
    [
        {"amount": "9.5"},  # the text says another number than the key
        {"amount": "-3.2"},
        {"amount": None},  # the text gone, the key left
        {"amount__key": None},  # the key gone, the text left
        {"amount__key": decimal_key(D("7"))},
        {"amount__key": "zzz"},  # no key at all
        {"amount": "garbage"},
        {"amount": " -3.25"},  # not plain decimal text
        {"amount": "-3.25e0"},
        {"amount": "-3.2\u0665"},  # an Arabic-Indic digit: no number to SQLite
    ],
    ids=repr,
)
def test_sqlite_text_and_key_that_disagree_are_refused(
    sqlite_readings: tuple[Store, Raw, str], tmp_path: Path, edit: dict[str, Any]
) -> None:
    store, raw, url = sqlite_readings
    for column, value in edit.items():
        raw.set("reading", column, value, 2)
    assert_refused(refusals(store, url, tmp_path), "amount")


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        ({"amount": "-3.25000"}, D("-3.25000")),  # the same number with more places
        ({"amount": "-3.25"}, D("-3.25")),
        ({"amount": "-3.250", "amount__key": decimal_key(D("-3.25"))}, D("-3.250")),
        ({"amount": "7.125", "amount__key": decimal_key(D("7.125"))}, D("7.125")),  # both
        ({"amount": None, "amount__key": None}, None),
    ],
    ids=repr,
)
def test_sqlite_text_and_key_that_agree_read_as_the_text(
    sqlite_readings: tuple[Store, Raw, str], edit: dict[str, Any], expected: Any
) -> None:
    """What sqlite3, Datasette and pandas read (the text) is what entityworks reads,
    exponent included, and what its filters compare (the key)."""
    store, raw, _ = sqlite_readings
    for column, value in edit.items():
        raw.set("reading", column, value, 2)
    got = store.get(Reading, 2)
    assert got is not None and str(got.amount) == str(expected)
    assert [r.amount for r in store.select(Reading, order_by="id")][1] == expected
    text = raw.get("reading", "amount", 2)
    assert (text is None) == (expected is None) and (text is None or D(text) == expected)
    if expected is not None:
        assert [r.id for r in store.select(Reading, where={"amount": expected})] == [2]


def test_a_child_row_that_disagrees_is_named_by_its_parent_and_position(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with Store(path) as store:
        store.create(Sensor)
        store.insert(Sensor(4, [Probe("a", D("1.5")), Probe("b", D("2.5"))]))
        with closing(sqlite3.connect(path)) as conn:
            conn.execute("UPDATE sensor_probes SET amount = '2.75' WHERE position = 1")
            conn.commit()
        with pytest.raises(StoredValueError) as caught:
            store.get(Sensor, 4)
    assert caught.value.table == "sensor_probes"
    assert caught.value.key == "parent_key=4, position=1" and caught.value.column == "amount"


# -- the property: any edit of a companion reads as what every tool sees, or is refused -----

EDITS = st.one_of(st.none(), st.integers(-2000, 2000), st.sampled_from([0, 1, 30, 31, 840]))
TEXTS = st.one_of(
    st.none(),
    st.from_regex(r"-?[0-9]{1,4}(\.[0-9]{0,4})?", fullmatch=True),
    st.text(max_size=6),
    st.sampled_from(["-3.25", "-3.250", "-03.25", "1.50"]),
)


def _other_tools(raw: Raw, column: str) -> Any:
    """The value of row 2's field ``column`` as the backend's driver gives it: the number or
    instant every other tool reads (None for NULL)."""
    value = raw.get("reading", column, 2)
    if column == "amount" and raw.sqlite:
        try:
            return D(value) if isinstance(value, str) else value
        except decimal.InvalidOperation:
            return value
    if column == "at" and isinstance(value, str):  # SQLite's ISO text
        return dt.datetime.fromisoformat(value)
    if column == "at" and value is not None and value.tzinfo is None:  # MariaDB: UTC
        return value.replace(tzinfo=dt.UTC)
    return value


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_property_any_companion_edit_reads_what_every_tool_sees_or_is_refused(
    readings: tuple[Store, Raw], data: st.DataObject
) -> None:
    store, raw = readings
    live = raw.columns("reading")
    companions = [c for c in live if "__" in c]
    if raw.sqlite:
        companions.append("amount")  # the text is the SQLite Decimal's companion
    column = data.draw(st.sampled_from(sorted(companions)), label="column")
    text = raw.sqlite and column in ("amount", "amount__key")
    value = data.draw(TEXTS if text else EDITS, label="value")
    store.update(ROWS[1])
    raw.set("reading", column, value, 2)
    field = column.partition("__")[0]
    try:
        got = store.get(Reading, 2)
    except StoredValueError as exc:
        assert (exc.table, exc.key, exc.column) == ("reading", "id=2", field)
        return
    assert got is not None
    read, seen = getattr(got, field), _other_tools(raw, field)
    assert read == seen, (read, seen)
    if read is not None and field == "amount":
        assert check_decimal(read) is read
    if read is not None and field == "at":
        assert check_aware_datetime(read) is read
    if read is not None and field == "level" and str(read) == "-0.0":
        assert seen == 0.0

"""Literal field defaults are DDL DEFAULTs (issue 14): a row the database fills holds exactly
what Python would have written, on SQLite, PostgreSQL and MariaDB; tables entityworks creates
show no drift, and a changed default does."""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import math
import struct
import uuid
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import pytest
import sqlalchemy as sa
from alembic.operations import ops
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from entityworks import AwareDatetime, Store, create_script, statement_templates, table
from entityworks.migrate import apply, describe, diff, target_metadata
from entityworks.sql.defaults import MAX_TEXT_DEFAULT, parse_reflected


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Size(enum.IntEnum):
    S = 1
    L = 3


@table("defaulted")
@dataclass
class Defaulted:
    id: int | None
    n: int = -10
    big: int = 2**63 - 1
    yes: bool = True
    no: bool = False
    f: float = 0.1
    tiny: float = 1e-300
    huge: float = 1.7976931348623157e308
    s: str = 'it\'s 50% \\ "q" \n\t é 🎉 %(x)s :x ?'
    empty: str = ""
    d: Decimal = Decimal("-1.50")
    d0: Decimal = Decimal("0E-7")
    color: Color = Color.RED
    size: Size = Size.L
    day: dt.date = dt.date(2020, 2, 29)
    at: dt.time = dt.time(1, 2, 3, 4)
    midnight: dt.time = dt.time(0, 0)
    stamp: dt.datetime = dt.datetime(2020, 1, 2, 3, 4, 5, 6)
    whole: dt.datetime = dt.datetime(2020, 1, 1)
    aware: AwareDatetime = dt.datetime(
        2020, 1, 1, 1, 30, tzinfo=dt.timezone(dt.timedelta(hours=5, minutes=30))
    )
    span: dt.timedelta = dt.timedelta(days=-1, seconds=1, microseconds=7)
    key: uuid.UUID = uuid.UUID("12345678-1234-5678-1234-567812345678")
    maybe: str | None = "x"
    absent: int | None = None


LITERAL = [f.name for f in dataclasses.fields(Defaulted) if f.name not in ("id", "absent")]


def _fill_by_database(store: Store, cls: type, key: int, **given: Any) -> Any:
    """Insert a row naming its key (and ``given``) alone: the database fills the rest."""
    t = store.table(cls)
    with store.engine.begin() as conn:
        conn.execute(sa.insert(t).values({"id": key, **given}))
    return store.get(cls, key)


def test_the_database_fills_what_python_writes(store: Store) -> None:
    store.create(Defaulted)
    t = store.table(Defaulted)
    assert all(t.c[name].server_default is not None for name in LITERAL)
    assert t.c["absent"].server_default is None and t.c["id"].server_default is None
    by_database = _fill_by_database(store, Defaulted, 1000)
    by_python = store.insert(Defaulted(None))
    by_python = store.get(Defaulted, by_python.id)
    for name in LITERAL + ["absent"]:
        got, want = getattr(by_database, name), getattr(by_python, name)
        assert repr(got) == repr(want) and type(got) is type(want), name
    assert by_database.s == Defaulted.s and by_database.f == 0.1  # and Python's own default
    assert diff(store, Defaulted) == []  # what the database reports matches what we write


def test_no_default_where_it_could_not_be_exact() -> None:
    @table("refused")
    @dataclass
    class Refused:
        id: int | None
        neg_zero: float = -0.0
        nan: float = math.nan
        inf: float = -math.inf
        nul: str = "a\x00b"
        surrogate: str = "\ud800"
        long: str = "x" * (MAX_TEXT_DEFAULT + 1)
        too_big: int = 2**63
        keyed: str = dataclasses.field(default="y" * 300, metadata={"unique": True})
        bounded: str = dataclasses.field(default="abc", metadata={"max_length": 2})
        wide: Decimal = Decimal("1E-40")  # beyond DECIMAL(65, 30): the Store refuses it
        factory: list[int] = field(default_factory=list)
        made: str = field(default_factory=lambda: "made")
        none: str | None = None
        ok: str = "x" * MAX_TEXT_DEFAULT

    for dialect in ("sqlite", "postgresql", "mysql"):
        t = target_metadata([Refused], dialect).tables["refused"]
        with_default = {c.name for c in t.c if c.server_default is not None}
        expected = {"ok"} | ({"keyed"} if dialect != "mysql" else set())  # VARCHAR(255)
        assert with_default == expected, dialect


def test_sqlite_float_literals_are_checked() -> None:
    """SQLite's literal parser rounds some floats differently from Python; those get no
    DEFAULT, every other float gets one that SQLite reads back exactly."""
    import random

    rng = random.Random(14)
    values = []
    while len(values) < 3000:
        x = struct.unpack("d", struct.pack("Q", rng.getrandbits(64)))[0]
        if math.isfinite(x) and not (x == 0 and math.copysign(1, x) < 0):
            values.append(x)
    from entityworks.model.schema import table_schema
    from entityworks.sql.defaults import server_default
    from entityworks.sql.tables import sql_type

    @dataclass
    class F:
        v: float = 0.0

    column = table_schema(F).columns[0]
    kept = refused = 0
    for x in values:
        text = server_default(column, x, sql_type(column), "sqlite")
        if text is None:
            refused += 1
        else:
            kept += 1
            assert float(text.text) == x and text.text == repr(x)
    assert kept > 2900 and refused > 0  # a few are refused (about 0.5 % of random bits)


FIELDS = 8


def _model(values: list[Any], kind: type, n: int) -> type:
    fields = [("id", int | None)] + [
        (f"v{i}", kind, field(default=v)) for i, v in enumerate(values)
    ]
    return table(f"prop_{kind.__name__}_{n}")(
        dataclasses.make_dataclass(f"Prop{kind.__name__}{n}", fields)
    )


_examples = iter(range(10**6))


@st.composite
def _floats(draw: st.DrawFn) -> float:
    bits = draw(st.integers(min_value=0, max_value=2**64 - 1))
    x = struct.unpack("d", struct.pack("Q", bits))[0]
    return x if math.isfinite(x) else draw(st.floats(allow_nan=False, allow_infinity=False))


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    floats=st.lists(_floats(), min_size=FIELDS, max_size=FIELDS),
    texts=st.lists(st.text(max_size=40), min_size=FIELDS, max_size=FIELDS),
    ints=st.lists(
        st.integers(min_value=-(2**63), max_value=2**63 - 1), min_size=FIELDS, max_size=FIELDS
    ),
)
def test_filled_defaults_equal_the_python_defaults(
    store: Store, floats: list[float], texts: list[str], ints: list[int]
) -> None:
    """Property: whatever literal default a field has, a row the database fills holds that
    exact value, or the column has no DEFAULT (and the value is one the rules refuse)."""
    n = next(_examples)
    for kind, values in ((float, floats), (str, texts), (int, ints)):
        cls = _model(values, kind, n)
        store.create(cls)
        try:
            t = store.table(cls)
            row = _fill_row(store, cls, t, kind())
            for i, value in enumerate(values):
                name = f"v{i}"
                if t.c[name].server_default is None:
                    assert _refused(value, store.dialect.name), (kind, value)
                    continue
                got = getattr(row, name)
                assert type(got) is kind and repr(got) == repr(value), (kind, value, got)
        finally:
            store.drop(cls)


def _fill_row(store: Store, cls: type, t: sa.Table, filler: Any) -> Any:
    """A row whose defaulted columns the database fills; the others get ``filler`` (they are
    checked for being refused, not read)."""
    values: dict[str, Any] = {"id": 1}
    for c in t.c:
        if c.name != "id" and c.server_default is None and not c.name.endswith("negzero"):
            values[c.name] = filler
    with store.engine.begin() as conn:
        conn.execute(sa.insert(t).values(values))
    return store.get(cls, 1)


def _refused(value: Any, dialect: str) -> bool:
    if isinstance(value, float):
        return (
            not math.isfinite(value)
            or (value == 0 and math.copysign(1, value) < 0)
            or dialect == "sqlite"
        )  # SQLite's parser rounds a few
    if isinstance(value, str):
        return "\x00" in value or any(0xD800 <= ord(c) <= 0xDFFF for c in value)
    return False


# -- drift --------------------------------------------------------------------------------


@table("levels")
@dataclass
class LevelStone:
    id: int | None
    name: str
    theme: str = "stone"
    depth: int = 1


@table("levels")
@dataclass
class LevelIce:
    id: int | None
    name: str
    theme: str = "ice's"  # a changed literal default
    depth: int = 1


@table("levels")
@dataclass
class LevelMade:
    id: int | None
    name: str
    theme: str = field(default_factory=lambda: "stone")  # no DEFAULT any more
    depth: int = 1


def test_a_changed_default_is_drift_and_applies(store: Store) -> None:
    store.create(LevelStone)
    store.insert_many([LevelStone(None, f"level {i}") for i in range(5)])
    assert diff(store, LevelStone) == []
    [op] = diff(store, LevelIce)
    assert isinstance(op, ops.AlterColumnOp)
    assert describe(op) == "alter column levels.theme: set DEFAULT 'ice''s'"
    assert apply(store, LevelIce).rows == {"levels": 5}
    assert diff(store, LevelIce) == []
    assert {r.theme for r in store.select(LevelIce)} == {"stone"}  # the rows keep theirs
    assert _fill_by_database(store, LevelIce, 100, name="new").theme == "ice's"

    [op] = diff(store, LevelMade)
    assert describe(op) == "alter column levels.theme: drop DEFAULT"
    apply(store, LevelMade)
    assert diff(store, LevelMade) == [] and store.count(LevelMade) == 6
    with pytest.raises(sa.exc.DBAPIError):  # NOT NULL and no DEFAULT: the database refuses
        _fill_by_database(store, LevelMade, 101, name="newer")
    # ... and the way back: a table made without DEFAULTs gains them
    assert [describe(o) for o in diff(store, LevelStone)] == [
        "alter column levels.theme: set DEFAULT 'stone'"
    ]


def test_scripts_show_the_default_and_templates_write_every_column() -> None:
    # SQLAlchemy 2.0.45 (our floor) writes MariaDB's negative default without parentheses,
    # later versions with them: MariaDB reads both the same
    for dialect, spelled in (
        ("sqlite", ("DEFAULT (-10)",)),
        ("postgresql", ("DEFAULT -10",)),
        ("mysql", ("DEFAULT (-10)", "DEFAULT -10")),
    ):
        script = create_script(Defaulted, dialect)
        assert any(s in script for s in spelled) and "DEFAULT 'red'" in script
        assert "absent" in script and "DEFAULT NULL" not in script
        templates = statement_templates(Defaulted, dialect)
        assert {f.name for f in dataclasses.fields(Defaulted)} <= set(templates.columns)
        assert all(name in templates.insert for name in templates.columns)
        params = templates.parameters(Defaulted(7))
        assert params["color"] == "red" and params["n"] == -10


@pytest.mark.parametrize(
    ("reflected", "mysql", "value"),
    [
        ("'it''s'::text", False, "it's"),
        ("(10)", False, "10"),
        ("'-5'::integer", False, "-5"),
        ("'2020-01-01 00:00:00'::timestamp without time zone", False, "2020-01-01 00:00:00"),
        ("'a\\'b\\\\c\\nd'", True, "a'b\\c\nd"),
        ("NULL", True, None),
        (None, False, None),
        ("nextval('t_id_seq'::regclass)", False, "nextval('t_id_seq'::regclass)"),
        ("'x'::character varying(20)", False, "x"),
        ("((('x')))", False, "x"),
    ],
)
def test_reflected_defaults_are_parsed(
    reflected: str | None, mysql: bool, value: str | None
) -> None:
    assert parse_reflected(reflected, backslashes=mysql) == value

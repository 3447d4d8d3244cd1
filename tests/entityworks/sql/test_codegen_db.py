"""``entityworks codegen --db URL [TABLE...]`` and ``codegen_from_db`` (issue 32 item 2): the
source generated from a database made by entityworks, by sqlite-utils or by plain SQL imports,
and reading every row with its classes then writing them into a fresh database created from
them gives the same rows, compared through the drivers; names that are no identifiers keep
their column; hostile names add no code."""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import functools
import importlib.util
import itertools
import subprocess
import sys
import typing
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import sqlalchemy as sa

from entityworks import (
    AwareDatetime,
    EntityworksError,
    InvalidNameError,
    Store,
    StoredValueError,
    TableSchema,
    UnknownTableError,
    column,
    entity,
    primary_key,
    table_schema,
)
from entityworks.sql.codegen import codegen_from_db

_counter = itertools.count()


def load_source(source: str, directory: Path) -> ModuleType:
    """Import ``source`` as a fresh module (dataclasses resolve annotations through it)."""
    name = f"generated_db_{next(_counter)}"
    path = directory / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def generated(url: str, tmp_path: Path, tables: list[str] | None = None) -> ModuleType:
    return load_source(codegen_from_db(url, tables), tmp_path)


def classes_of(module: ModuleType) -> list[type]:
    """The table classes of a generated module (not the items of list fields), referred
    classes first."""
    defined = [
        v
        for v in vars(module).values()
        if isinstance(v, type) and dataclasses.is_dataclass(v) and v.__module__ == module.__name__
    ]
    items = set()
    for cls in defined:
        for f in dataclasses.fields(cls):
            hint = typing.get_type_hints(cls)[f.name]
            for arg in [hint, *typing.get_args(hint)]:
                if typing.get_origin(arg) is list:
                    items.add(typing.get_args(arg)[0])
    tables = [c for c in defined if c not in items]
    ordered: list[type] = []

    def visit(cls: type) -> None:
        if cls in ordered:
            return
        for c in table_schema(cls).columns:
            if c.references is not None and c.references is not cls:
                visit(c.references)
        ordered.append(cls)

    for cls in tables:
        visit(cls)
    return ordered


def shown(value: Any) -> str:
    """A value as compared: its repr (a Decimal's without the trailing zeros a wider
    column type adds: MariaDB's DECIMAL(10, 2) gives 19.99, our DECIMAL(65, 30)
    19.990000...)."""
    if isinstance(value, decimal.Decimal):
        return repr(value.normalize())
    return repr(value)


def driver_rows(url: str, like: dict[str, list[Any]] | None = None) -> dict[str, list[Any]]:
    """Every user table's rows as the driver returns them: ``{table: sorted rows of
    (column, type name, value repr)}``; with ``like`` (another database's), only the
    columns that one has, the others being our companions of them (``x__negzero``)."""
    engine = sa.create_engine(url)
    out: dict[str, list[tuple[Any, ...]]] = {}
    try:
        with engine.connect() as conn:
            for name in sa.inspect(conn).get_table_names():
                if name in ("entityworks_schema", "entityworks_version", "alembic_version"):
                    continue
                quoted = conn.dialect.identifier_preparer.quote(name)
                result = conn.exec_driver_sql(f"SELECT * FROM {quoted}")  # noqa: S608 - a name
                keys = list(result.keys())
                kept = keys
                if like is not None and like.get(name):
                    kept = [k for k, _t, _v in like[name][0]]
                    assert all(k.rpartition("__")[0] in kept for k in keys if k not in kept)
                out[name] = sorted(
                    tuple(
                        (k, type(v).__name__, shown(v))
                        for k, v in zip(keys, row, strict=True)
                        if k in kept
                    )
                    for row in result
                )
    finally:
        engine.dispose()
    return out


def round_trip(src_url: str, dst_url: str, module: ModuleType) -> None:
    """Read every row of ``src_url`` with the generated classes, write them into
    ``dst_url`` (its tables created from them): both databases hold the same rows."""
    classes = classes_of(module)
    with Store(src_url) as src, Store(dst_url) as dst:
        for cls in classes:
            dst.create(cls)
        for cls in classes:
            dst.insert_many(list(src.select(cls)))
    before = driver_rows(src_url)
    assert driver_rows(dst_url, like=before) == before


@pytest.fixture
def second_url(backend_url: str, tmp_path: Path) -> Iterator[str]:
    """A second, empty database on the same backend as ``backend_url``."""
    if backend_url.startswith("sqlite"):
        yield f"sqlite:///{tmp_path / 'copy.db'}"
        return
    base = sa.make_url(backend_url)
    name = f"{base.database}_copy"
    admin = sa.create_engine(backend_url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            quoted = conn.dialect.identifier_preparer.quote(name)
            conn.exec_driver_sql(f"DROP DATABASE IF EXISTS {quoted}")
            conn.exec_driver_sql(f"CREATE DATABASE {quoted}")
        yield base.set(database=name).render_as_string(hide_password=False)
        with admin.connect() as conn:
            if conn.dialect.name == "postgresql":
                conn.exec_driver_sql(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE datname = %s AND pid <> pg_backend_pid()",
                    (name,),
                )
            conn.exec_driver_sql(f"DROP DATABASE IF EXISTS {quoted}")
    finally:
        admin.dispose()


# -- a database made by entityworks ------------------------------------------------------


@dataclasses.dataclass
class Note:
    text: str
    stars: int | None


@dataclasses.dataclass
class Line:
    sku: str
    count: int
    notes: list[Note] = dataclasses.field(default_factory=list)


@entity()
class Author:
    id: int = primary_key()
    name: str = column(max_length=40, unique=True, default="")


@entity("shop order")
class Order:
    id: int = primary_key()
    placed: AwareDatetime = dt.datetime(2000, 1, 1, tzinfo=dt.UTC)
    local: dt.datetime | None = None
    price: decimal.Decimal = decimal.Decimal(0)
    ratio: float = 0.0
    paid: bool = False
    ref: uuid.UUID | None = None
    day: dt.date | None = None
    clock: dt.time | None = None
    took: dt.timedelta | None = None
    raw: bytes | None = None
    author_id: int | None = column(references=Author, on_delete="cascade", default=None)
    unit_price: decimal.Decimal | None = column(name="unit price", default=None)
    lines: list[Line] = dataclasses.field(default_factory=list)


def described(schema: TableSchema) -> list[Any]:
    """What a table's schema says of each column and child table (not the classes' names)."""
    return [
        (
            c.name,
            c.sql_name,
            c.info.name,
            c.nullable,
            c.primary_key,
            c.unique,
            c.max_length,
            None if c.references is None else table_schema(c.references).name,
            c.on_delete,
        )
        for c in schema.columns
    ] + [(c.field, c.schema.name, c.optional, described(c.schema)) for c in schema.children]


def made_by_entityworks(url: str) -> None:
    with Store(url) as store:
        store.create(Author)
        store.create(Order)
        store.insert_many([Author(1, "Ann"), Author(2, "Bob")])
        tz = dt.timezone(dt.timedelta(hours=5, minutes=30))
        store.insert_many(
            [
                Order(
                    1,
                    dt.datetime(2024, 3, 1, 12, 30, 15, 123456, tzinfo=tz),
                    dt.datetime(2024, 3, 1, 8, 0),
                    decimal.Decimal("12.50"),
                    0.1,
                    True,
                    uuid.UUID(int=7),
                    dt.date(2024, 2, 29),
                    dt.time(23, 59, 59),
                    dt.timedelta(days=2, seconds=5),
                    b"\x00\xff",
                    1,
                    decimal.Decimal("-0.001"),
                    [Line("a", 2, [Note("ok", 5), Note("meh", None)]), Line("b", 0)],
                ),
                Order(2, dt.datetime(1999, 12, 31, 23, 0, tzinfo=dt.UTC)),
            ]
        )


def test_a_database_made_by_entityworks_round_trips(
    backend_url: str, second_url: str, tmp_path: Path
) -> None:
    made_by_entityworks(backend_url)
    source = codegen_from_db(backend_url)
    module = load_source(source, tmp_path)
    assert {c.__name__ for c in classes_of(module)} == {"Author", "ShopOrder"}
    order = table_schema(module.ShopOrder)
    assert order.name == "shop order"
    assert [child.field for child in order.children] == ["lines"]
    for made, read in ((Author, module.Author), (Order, module.ShopOrder)):
        assert described(table_schema(read)) == described(table_schema(made))
    assert table_schema(module.ShopOrder).columns[-2].references is module.Author
    with Store(backend_url) as store:  # the rows come back as the classes that made them
        got = list(store.select(module.ShopOrder, order_by="id"))
        assert got[0].lines[0].notes[1].text == "meh" and got[0].placed.utcoffset() == dt.timedelta(
            hours=5, minutes=30
        )
    round_trip(backend_url, second_url, module)


def test_child_tables_are_found_by_their_shape(
    backend_url: str, second_url: str, tmp_path: Path
) -> None:
    """Without the types recorded beside them (another tool copied the tables), child
    tables are still list fields and companions still one field: their shape says so."""
    made_by_entityworks(backend_url)
    engine = sa.create_engine(backend_url)
    with engine.begin() as conn:
        conn.exec_driver_sql("DROP TABLE entityworks_schema")
    engine.dispose()
    module = generated(backend_url, tmp_path)
    order = table_schema(module.ShopOrder)
    assert [c.field for c in order.children] == ["lines"]
    assert [c.field for c in order.children[0].schema.children] == ["notes"]
    assert {c.name: c.info.name for c in order.columns}["placed"] == "AwareDatetime"
    round_trip(backend_url, second_url, module)


# -- a database made by plain SQL --------------------------------------------------------

PLAIN_TYPES = {
    "sqlite": {
        "int": "INTEGER",
        "text": "TEXT",
        "varchar": "VARCHAR(30)",
        "num": "REAL",  # a NUMERIC column holds REALs there: test_sqlite_numeric_reals_refused
        "float": "REAL",
        "bool": "BOOLEAN",
        "date": "DATE",
        "ts": "TIMESTAMP",
        "blob": "BLOB",
    },
    "postgresql": {
        "int": "INTEGER",
        "text": "TEXT",
        "varchar": "VARCHAR(30)",
        "num": "NUMERIC(10, 2)",
        "float": "DOUBLE PRECISION",
        "bool": "BOOLEAN",
        "date": "DATE",
        "ts": "TIMESTAMP",
        "blob": "BYTEA",
    },
    "mariadb": {
        "int": "INTEGER",
        "text": "TEXT",
        "varchar": "VARCHAR(30)",
        "num": "DECIMAL(10, 2)",
        "float": "DOUBLE",
        "bool": "BOOLEAN",
        "date": "DATE",
        "ts": "DATETIME(6)",
        "blob": "LONGBLOB",
    },
}


def made_by_plain_sql(url: str) -> None:
    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            kind = "mariadb" if conn.dialect.name == "mysql" else conn.dialect.name
            t = PLAIN_TYPES[kind]
            q = conn.dialect.identifier_preparer.quote
            conn.exec_driver_sql(
                f"CREATE TABLE customer (id {t['int']} PRIMARY KEY, "
                f"name {t['varchar']} NOT NULL, {q('e-mail')} {t['text']})"
            )
            conn.exec_driver_sql(
                f"CREATE TABLE invoice (id {t['int']} PRIMARY KEY, "
                f"customer_id {t['int']} NOT NULL REFERENCES customer (id) ON DELETE CASCADE, "
                f"{q('unit price')} {t['num']}, {q('class')} {t['int']}, {q('2nd')} {t['float']}, "
                f"paid {t['bool']} NOT NULL, due {t['date']}, {q('at')} {t['ts']}, "
                f"scan {t['blob']})"
            )
            conn.exec_driver_sql(
                "INSERT INTO customer VALUES (1, 'Ann', 'ann@example.org'), (2, 'Bob', NULL)"
            )
            params = [
                (
                    10,
                    1,
                    decimal.Decimal("19.99"),
                    3,
                    0.5,
                    True,
                    dt.date(2024, 1, 31),
                    dt.datetime(2024, 1, 31, 9, 15, 0, 250000),
                    b"\x01\x02",
                ),
                (11, 2, None, None, None, False, None, None, None),
            ]
            invoice = sa.table(  # bound through the driver's own conversions
                "invoice",
                sa.column("id", sa.Integer),
                sa.column("customer_id", sa.Integer),
                sa.column("unit price", sa.Numeric(10, 2)),
                sa.column("class", sa.Integer),
                sa.column("2nd", sa.Float),
                sa.column("paid", sa.Boolean),
                sa.column("due", sa.Date),
                sa.column("at", sa.DateTime),
                sa.column("scan", sa.LargeBinary),
            )
            keys = [c.name for c in invoice.columns]
            conn.execute(invoice.insert(), [dict(zip(keys, p, strict=True)) for p in params])
    finally:
        engine.dispose()


def test_a_database_made_by_plain_sql_round_trips(
    backend_url: str, second_url: str, tmp_path: Path
) -> None:
    made_by_plain_sql(backend_url)
    module = generated(backend_url, tmp_path)
    invoice = {c.name: c for c in table_schema(module.Invoice).columns}
    assert invoice["customer_id"].references is module.Customer
    assert invoice["customer_id"].on_delete == "cascade"
    assert invoice["unit_price"].sql_name == "unit price"
    assert invoice["class_"].sql_name == "class" and invoice["f_2nd"].sql_name == "2nd"
    exact = float if backend_url.startswith("sqlite") else decimal.Decimal
    assert invoice["unit_price"].python_type is exact
    # MariaDB's BOOLEAN is a TINYINT(1), which holds 2 as well: an int there
    flag = int if backend_url.startswith("mysql") else bool
    assert invoice["paid"].python_type is flag and not invoice["paid"].nullable
    assert invoice["due"].python_type is dt.date and invoice["due"].nullable
    customer = {c.name: c for c in table_schema(module.Customer).columns}
    assert customer["name"].max_length == 30 and customer["id"].primary_key
    assert customer["e_mail"].sql_name == "e-mail"
    round_trip(backend_url, second_url, module)


#: Server types beyond the common ones: (declared type, SQLAlchemy type to bind, value).
#: Not here: PostgreSQL's INTERVAL (a timedelta field, whose reads of a native interval are
#: refused) and MariaDB's UUID (a UUID field, stored as CHAR(32) in the new database).
SERVER_TYPES = {
    "postgresql": [
        ("UUID", sa.Uuid(), uuid.UUID(int=12345)),
        ("TIME", sa.Time(), dt.time(13, 14, 15, 16)),
        ("TIMESTAMPTZ", sa.DateTime(timezone=True), dt.datetime(2024, 6, 1, 12, tzinfo=dt.UTC)),
        ("SMALLINT", sa.SmallInteger(), -32768),
        ("REAL", sa.Float(), 0.5),
        ("CHAR(3)", sa.String(), "ab "),
        ("NUMERIC", sa.Numeric(), decimal.Decimal("123456789.000000001")),
    ],
    "mysql": [
        ("TIME(6)", sa.Time(), dt.time(13, 14, 15, 16)),
        ("SMALLINT", sa.SmallInteger(), -32768),
        ("CHAR(3)", sa.String(), "ab"),
        ("DECIMAL(30, 9)", sa.Numeric(30, 9), decimal.Decimal("123456789.000000001")),
        ("ENUM('a', 'b')", sa.String(), "b"),
        ("TIMESTAMP(6) NULL", sa.DateTime(), dt.datetime(2024, 6, 1, 12, 0, 0, 5)),
    ],
}


@pytest.mark.parametrize("backend_url", ["postgresql", "mariadb"], indirect=True)
def test_server_types_round_trip(backend_url: str, second_url: str, tmp_path: Path) -> None:
    engine = sa.create_engine(backend_url)
    try:
        with engine.begin() as conn:
            kinds = SERVER_TYPES[conn.dialect.name]
            columns = ", ".join(f"c{i} {declared}" for i, (declared, _t, _v) in enumerate(kinds))
            conn.exec_driver_sql(f"CREATE TABLE extra (id INTEGER PRIMARY KEY, {columns})")
            extra = sa.table(
                "extra",
                sa.column("id", sa.Integer),
                *[sa.column(f"c{i}", t) for i, (_d, t, _v) in enumerate(kinds)],
            )
            values = {f"c{i}": v for i, (_d, _t, v) in enumerate(kinds)}
            nulls = dict.fromkeys(values)
            conn.execute(extra.insert(), [{"id": 1, **values}, {"id": 2, **nulls}])
    finally:
        engine.dispose()
    module = generated(backend_url, tmp_path)
    with Store(backend_url) as store:
        first = next(iter(store.select(module.Extra, where=None, order_by="id")))
    for i, (_declared, _t, value) in enumerate(kinds):
        assert getattr(first, f"c{i}") == value
    round_trip(backend_url, second_url, module)


def test_named_tables_bring_the_tables_they_refer_to(backend_url: str, tmp_path: Path) -> None:
    made_by_plain_sql(backend_url)
    module = generated(backend_url, tmp_path, ["invoice"])
    assert {c.__name__ for c in classes_of(module)} == {"Customer", "Invoice"}
    module = generated(backend_url, tmp_path, ["customer"])
    assert [c.__name__ for c in classes_of(module)] == ["Customer"]
    with pytest.raises(UnknownTableError):
        codegen_from_db(backend_url, ["no_such_table"])


def test_a_missing_database_file_is_not_created(tmp_path: Path) -> None:
    for db in (tmp_path / "missing.db", f"sqlite:///{tmp_path / 'missing.db'}"):
        with pytest.raises(EntityworksError):
            codegen_from_db(db)
        assert not (tmp_path / "missing.db").exists()


def test_sqlite_numeric_reals_refused(tmp_path: Path) -> None:
    """SQLite keeps a NUMERIC column's 19.99 as a REAL: the Decimal field its declared type
    gives refuses to read it rather than guess, naming table, row and column."""
    url = f"sqlite:///{tmp_path / 'numeric.db'}"
    engine = sa.create_engine(url)
    with engine.begin() as conn:
        conn.exec_driver_sql("CREATE TABLE price (id INTEGER PRIMARY KEY, amount NUMERIC(10, 2))")
        conn.exec_driver_sql("INSERT INTO price VALUES (1, 19.99)")
    engine.dispose()
    module = generated(url, tmp_path)
    assert table_schema(module.Price).columns[1].python_type is decimal.Decimal
    with Store(url) as store, pytest.raises(StoredValueError) as caught:
        list(store.select(module.Price))
    assert (caught.value.table, caught.value.key, caught.value.column) == (
        "price",
        "id=1",
        "amount",
    )


# -- a database made by sqlite-utils -----------------------------------------------------


def test_a_database_made_by_sqlite_utils_round_trips(tmp_path: Path) -> None:
    sqlite_utils = pytest.importorskip("sqlite_utils")
    path = tmp_path / "su.db"
    db = sqlite_utils.Database(path)
    db["authors"].insert_all(
        [{"id": 1, "name": "Ann", "score": 1.5}, {"id": 2, "name": "Bob", "score": None}],
        pk="id",
    )
    db["books"].insert_all(
        [
            {"id": 1, "title": "A", "author_id": 1, "cover": b"\x89PNG", "in print": True},
            {"id": 2, "title": "B", "author_id": 2, "cover": None, "in print": False},
        ],
        pk="id",
        foreign_keys=[("author_id", "authors", "id")],
    )
    db.close()
    url = f"sqlite:///{path}"
    module = generated(url, tmp_path)
    books = {c.name: c for c in table_schema(module.Books).columns}
    assert books["author_id"].references is module.Authors
    assert books["in_print"].sql_name == "in print" and books["cover"].python_type is bytes
    round_trip(url, f"sqlite:///{tmp_path / 'copy.db'}", module)


# -- the command line --------------------------------------------------------------------


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "entityworks", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_command_prints_the_same_source(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'plain.db'}"
    made_by_plain_sql(url)
    done = run_cli("codegen", "--db", str(tmp_path / "plain.db"), "invoice")
    assert done.returncode == 0, done.stderr
    assert done.stdout == codegen_from_db(url, ["invoice"])
    refused = run_cli("codegen", "--db", str(tmp_path / "plain.db"), "nope")
    assert refused.returncode != 0 and "Traceback" not in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1 and "nope" in refused.stderr
    missing = run_cli("codegen", "--db", str(tmp_path / "missing.db"))
    assert missing.returncode != 0 and not (tmp_path / "missing.db").exists()
    neither = run_cli("codegen")
    assert neither.returncode != 0 and "Traceback" not in neither.stderr


# -- names from a stranger's database ----------------------------------------------------


def hostile_database(path: Path) -> None:
    """Table and column names that would be code if pasted into the source unquoted."""
    engine = sa.create_engine(f"sqlite:///{path}")
    table = 'evil""" + getattr(__import__("os"), "_exit")(7) + """'
    names = [
        "x''' + getattr(__import__('os'), '_exit')(8) #",
        '"); getattr(__import__("os"), "_exit")(9); ("',
        "class",
        "2nd col",
        "a b",
        "a_b",
        "__x",
        "µ",
        "None",
        "column",
        "field",
        "str",
        "builtins",
    ]
    try:
        with engine.begin() as conn:
            q = conn.dialect.identifier_preparer.quote
            cols = ", ".join(f"{q(n)} TEXT" for n in names)
            conn.exec_driver_sql(f"CREATE TABLE {q(table)} (id INTEGER PRIMARY KEY, {cols})")
            conn.exec_driver_sql(
                f"CREATE TABLE {q('list')} (id INTEGER PRIMARY KEY, "
                f"ref INTEGER REFERENCES {q(table)} (id))"
            )
            marks = ", ".join("?" for _ in names)
            conn.exec_driver_sql(
                f"INSERT INTO {q(table)} VALUES (1, {marks})",
                tuple(f"v{i}" for i in range(len(names))),
            )
            conn.exec_driver_sql(f"INSERT INTO {q('list')} VALUES (1, 1)")
    finally:
        engine.dispose()


def test_hostile_names_stay_names(tmp_path: Path) -> None:
    path = tmp_path / "hostile.db"
    hostile_database(path)
    url = f"sqlite:///{path}"
    source = codegen_from_db(url)
    # importing runs the module in a child process: an injected os._exit would show
    out = tmp_path / "hostile_model.py"
    out.write_text(source)
    check = (
        "import importlib.util, sys;"
        f"spec = importlib.util.spec_from_file_location('hostile_model', {str(out)!r});"
        "m = importlib.util.module_from_spec(spec); sys.modules['hostile_model'] = m;"
        "spec.loader.exec_module(m); print('imported')"
    )
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip() == "imported", done.stderr
    module = load_source(source, tmp_path)
    (evil,) = [c for c in classes_of(module) if "evil" in table_schema(c).name]
    schema = table_schema(evil)
    assert schema.name == 'evil""" + getattr(__import__("os"), "_exit")(7) + """'
    columns = [c.sql_name for c in schema.columns]
    assert columns[1:3] == [
        "x''' + getattr(__import__('os'), '_exit')(8) #",
        '"); getattr(__import__("os"), "_exit")(9); ("',
    ]
    assert all(c.name.isidentifier() for c in schema.columns)
    with Store(url) as store:
        (row,) = store.select(evil)
        values = [getattr(row, c.name) for c in schema.columns][1:]
        assert values == [f"v{i}" for i in range(13)]
    round_trip(url, f"sqlite:///{tmp_path / 'copy.db'}", module)


@pytest.mark.parametrize("bad", ["line\nbreak", "back\\slash"])
def test_names_entityworks_cannot_hold_are_refused(tmp_path: Path, bad: str) -> None:
    path = tmp_path / "bad.db"
    engine = sa.create_engine(f"sqlite:///{path}")
    with engine.begin() as conn:
        q = conn.dialect.identifier_preparer.quote
        conn.exec_driver_sql(f"CREATE TABLE t (id INTEGER PRIMARY KEY, {q(bad)} TEXT)")
    engine.dispose()
    with pytest.raises(InvalidNameError) as caught:
        codegen_from_db(f"sqlite:///{path}")
    assert repr(bad) in str(caught.value)


# -- strict type checkers ----------------------------------------------------------------


@pytest.mark.slow
def test_generated_modules_pass_mypy_strict_and_pyright(tmp_path: Path) -> None:
    from tests.typing.test_type_checks import _errors, _mypy, _pyright

    made_by_entityworks(f"sqlite:///{tmp_path / 'ours.db'}")
    hostile_database(tmp_path / "hostile.db")
    made_by_plain_sql(f"sqlite:///{tmp_path / 'plain.db'}")
    for name in ("ours", "hostile", "plain"):
        out = tmp_path / f"{name}_model.py"
        out.write_text(codegen_from_db(f"sqlite:///{tmp_path / f'{name}.db'}"))
        done = _mypy(out)
        assert done.returncode == 0, done.stdout + done.stderr
        assert _errors(_pyright(out)) == []


# -- tables made by SQLModel -------------------------------------------------------------


@functools.cache
def sqlmodel_classes() -> tuple[Any, Any, Any, Any]:
    """SQLModel, and a model of two tables declared with it (once: SQLModel keeps a
    registry of class names)."""
    sqlmodel = pytest.importorskip("sqlmodel")

    class Base(sqlmodel.SQLModel):
        metadata = sa.MetaData()

    class Team(Base, table=True):
        id: int | None = sqlmodel.Field(default=None, primary_key=True)
        name: str = sqlmodel.Field(max_length=50, unique=True)

    class Hero(Base, table=True):
        id: int | None = sqlmodel.Field(default=None, primary_key=True)
        name: str = sqlmodel.Field(max_length=50, index=True)
        age: int | None = None
        power: float = 0.0
        active: bool = True
        born: dt.date | None = None
        seen: dt.datetime | None = None
        team_id: int | None = sqlmodel.Field(default=None, foreign_key="team.id")

    return sqlmodel, Base, Team, Hero


def made_by_sqlmodel(url: str) -> None:
    sqlmodel, Base, Team, Hero = sqlmodel_classes()  # noqa: N806 - classes
    engine = sa.create_engine(url)
    try:
        Base.metadata.create_all(engine)
        with sqlmodel.Session(engine) as session:
            team = Team(name="Avengers")
            session.add(team)
            session.commit()
            session.refresh(team)
            session.add(
                Hero(
                    name="Ann",
                    age=30,
                    power=0.1,
                    born=dt.date(1990, 5, 17),
                    seen=dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.UTC),
                    team_id=team.id,
                )
            )
            session.add(Hero(name="Bob", active=False))
            session.commit()
    finally:
        engine.dispose()


def test_tables_made_by_sqlmodel_round_trip(
    backend_url: str, second_url: str, tmp_path: Path
) -> None:
    made_by_sqlmodel(backend_url)
    module = generated(backend_url, tmp_path)
    hero = {c.name: c for c in table_schema(module.Hero).columns}
    assert hero["team_id"].references is module.Team and hero["id"].primary_key
    assert hero["name"].max_length == 50 and not hero["name"].nullable
    assert hero["born"].python_type is dt.date
    # aware where SQLModel made the column TIMESTAMP WITH TIME ZONE (PostgreSQL, from
    # SQLModel 0.0.2x): what the table holds decides
    engine = sa.create_engine(backend_url)
    try:
        seen = {c["name"]: c["type"] for c in sa.inspect(engine).get_columns("hero")}["seen"]
    finally:
        engine.dispose()
    aware = bool(getattr(seen, "timezone", False))
    assert hero["seen"].info.name == ("AwareDatetime" if aware else "datetime")
    assert hero["power"].python_type is float and hero["age"].nullable
    assert table_schema(module.Team).columns[1].unique
    round_trip(backend_url, second_url, module)

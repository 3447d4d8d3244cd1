"""The SQLite file reader (:mod:`entityworks.sql.backends.sqlitefile`) knows, without
SQLAlchemy, what the Store's SQLite path gets from SQLAlchemy: the backend's storage target,
each storage type's bind and result processors, and the Python type the dialect reflects a
declared column type as. Each is compared here with SQLAlchemy's own answer."""

from __future__ import annotations

import datetime as dt
import decimal
import sqlite3
import uuid

import pytest
import sqlalchemy as sa

from entityworks.sql import sqltypes
from entityworks.sql.backends import for_name
from entityworks.sql.backends.sqlitefile import (
    FILE_TARGET,
    PLAIN,
    Elsewhere,
    declared_type,
)
from entityworks.sql.textvalues import TEXT_FORMS
from entityworks.types import storage

DIALECT = sa.create_engine("sqlite://").dialect
UTC = dt.UTC

SAMPLES = {
    "big_integer": [0, -(2**63), 2**63 - 1],
    "small_integer": [0, -5, 120],
    "boolean": [True, False, 1],
    "double": [0.0, -0.0, 1.5, float("inf")],
    "text": ["", "a\x00b", "日本"],
    "binary": [b"", b"\x00\xff"],
    "json_text": ['{"a":1}', "[]"],
    "date": [dt.date(1, 1, 1), dt.date(2020, 2, 29)],
    "time": [dt.time(0), dt.time(23, 59, 59, 999999)],
    "uuid_type": [uuid.UUID(int=0), uuid.UUID(int=2**128 - 1)],
    "NaiveDateTime": [dt.datetime(1, 1, 1), dt.datetime(2020, 1, 2, 3, 4, 5, 6)],
    "ExactDecimal": [decimal.Decimal("-1.50"), decimal.Decimal("0"), decimal.Decimal("1e20")],
    "AwareDateTime": [
        dt.datetime(2020, 1, 1, tzinfo=UTC),
        dt.datetime(2020, 1, 1, 5, tzinfo=dt.timezone(dt.timedelta(hours=5, minutes=30))),
    ],
}


def test_the_file_target_is_the_sqlite_backend_s():
    assert for_name("sqlite").storage_target() == FILE_TARGET
    assert sqltypes.target_of("sqlite") == FILE_TARGET


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_storage_types_bind_and_read_as_sqlalchemy_does(name):
    assert name in PLAIN or name in TEXT_FORMS
    backend = for_name("sqlite")
    impl = storage.named(name)().dialect_impl(DIALECT)
    bind = impl.bind_processor(DIALECT)
    result = backend.result_processor(impl, DIALECT)
    column = backend.result_column(impl, DIALECT)
    form = TEXT_FORMS.get(name)
    for value in SAMPLES[name]:
        ours = value if form is None or form.bind is None else form.bind(value)
        theirs = value if bind is None else bind(value)
        if isinstance(theirs, memoryview):  # sqlite3.Binary: the same BLOB
            theirs = bytes(theirs)
        assert ours == theirs and type(ours) is type(theirs), (name, value)
        stored = sqlite3.connect(":memory:").execute("SELECT ?", (ours,)).fetchone()[0]
        read = stored if form is None or form.read is None else form.read(stored)
        expected = stored if result is None else result(stored)
        assert read == expected and type(read) is type(expected), (name, value)
        if column is not None or (form is not None and form.read_column is not None):
            assert form is not None and form.read_column is not None
            assert list(form.read_column([stored, None])) == [expected, None]
    assert result is None or result(None) is None


DECLARED = [
    "INTEGER",
    "INT",
    "BIGINT",
    "SMALLINT",
    "TINYINT",
    "UNSIGNED BIG INT",
    "INT8",
    "TEXT",
    "VARCHAR(10)",
    "NVARCHAR(3)",
    "CHARACTER(20)",
    "NCHAR(5)",
    "CLOB",
    "CHAR",
    "REAL",
    "DOUBLE",
    "DOUBLE PRECISION",
    "FLOAT",
    "BLOB",
    "BOOLEAN",
    "BOOL",
    "DATE",
    "DATETIME",
    "TIMESTAMP",
    "TIME",
    "NUMERIC",
    "DECIMAL(10, 5)",
    "DECIMAL(10,5)",
    "NUMBER",
    "MONEY",
    "integer",
    "Text",
]
#: Declared types the reader leaves to the Store (no Python type, JSON, arguments that are
#: not numbers).
LEFT = ["", "JSON", "MEDIUMBLOB", "VARCHAR(max)", "ANY"]


@pytest.mark.parametrize("declared", LEFT)
def test_other_declared_types_are_left_to_the_store(declared):
    with pytest.raises(Elsewhere):
        declared_type(declared)


@pytest.mark.parametrize("declared", DECLARED)
def test_declared_types_reflect_as_sqlalchemy_reflects_them(declared):
    engine = sa.create_engine("sqlite://")
    with engine.connect() as conn:
        conn.exec_driver_sql(f"CREATE TABLE t (c {declared})")
        (column,) = sa.inspect(conn).get_columns("t")
    type_ = column["type"]
    theirs = float if isinstance(type_, sa.Float) else type_.python_type
    assert declared_type(declared) is theirs, (declared, type_)

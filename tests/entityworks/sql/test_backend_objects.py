"""The Backend objects the SQL modules ask instead of naming a database: each is named as
SQLAlchemy names its dialect, and tables built for a Backend are those built for its name."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

import pytest
import sqlalchemy as sa
from sqlalchemy.schema import CreateTable

from entityworks import AwareDatetime, table_schema
from entityworks.sql._database import MAX_CASCADE_LEVELS
from entityworks.sql.backends import for_name, names_where
from entityworks.sql.scripts import dialect_for
from entityworks.sql.tables import build_tables, table_companions

DIALECTS = names_where(lambda _backend: True)


@dataclass
class Reading:
    id: int
    label: str
    amount: Decimal
    weight: float | None
    at: AwareDatetime | None = None


@pytest.mark.parametrize("name", DIALECTS)
def test_each_backend_is_named_as_sqlalchemy_names_its_dialect(name: str) -> None:
    assert for_name(name).name == name
    assert for_name(name) is for_name(name)  # looked up, never made again


@pytest.mark.parametrize("name", DIALECTS)
def test_tables_built_for_a_backend_are_those_built_for_its_name(name: str) -> None:
    schema = table_schema(Reading)
    by_name = build_tables(schema, sa.MetaData(), name)
    by_backend = build_tables(schema, sa.MetaData(), for_name(name))
    dialect = dialect_for(name)
    assert str(CreateTable(by_backend).compile(dialect=dialect)) == str(
        CreateTable(by_name).compile(dialect=dialect)
    )
    assert [c.name for c in by_backend.columns] == [c.name for c in by_name.columns]
    for column in schema.columns:
        assert table_companions(by_backend, column, for_name(name)) == table_companions(
            by_name, column, name
        )


def test_the_cascade_limit_is_the_strictest_backends() -> None:
    limits = [for_name(n).max_cascade_levels for n in DIALECTS]
    assert MAX_CASCADE_LEVELS == min(limit for limit in limits if limit is not None)

"""SQLite: the catalog's int, float and str columns declared INTEGER, REAL and TEXT.

Revision ID: 0009_sqlite_affinity
Revises: 0008_entries_and_outcomes
Create Date: 2026-12-06

entityworks 0.2.3 and before declared these columns ``ANY`` with a ``CHECK`` on ``typeof``.
``ANY`` has no type affinity, so other tools that bind a value as text (Datasette's
``maps.json?width=60`` and its foreign-key links, ``parent_key = '3'`` in the sqlite3 shell,
``pandas.read_sql`` with a string parameter) compared the integer 60 with the text '60' and
found no row. With its natural type name a column converts such a value as it compares it;
the Store now checks the types of the values it writes itself (see
``entityworks.sql.tables``).

A REAL column stores -0.0 as 0.0, so each float column gets the ``<name>__negzero`` companion
entityworks adds on MariaDB, right after it, set to 1 for the rows holding -0.0 (found
before the column is converted). Every row is kept; each table is rebuilt once, in the
migration's transaction, with its keys, indexes, foreign keys and STRICT (and WITHOUT ROWID)
options.

Only SQLite changes; elsewhere this revision does nothing. A table whose columns are
declared so already (a catalog created after this change) is left as it is, and so is the
offline SQL (``--sql``), which cannot see the declarations: a catalog that SQL creates has
the new ones already.

The downgrade declares the columns ``ANY`` again with their ``CHECK`` and drops the
companions (the sign of -0.0 goes back into the ``ANY`` column first).
"""

from __future__ import annotations

import math
import re
from typing import Any

import sqlalchemy as sa
from alembic import op

from entityworks.migrate.dialects import checks_typeof, rebuilt_table_options, without_rowid

revision = "0009_sqlite_affinity"
down_revision = "0008_entries_and_outcomes"
branch_labels = None
depends_on = None

#: The catalog's tables at revision 0008 (frozen here).
TABLES = (
    "maps",
    "maps_caves",
    "maps_rooms",
    "maps_corridors",
    "maps_placements",
    "sudoku_puzzles",
    "sudoku_entries",
    "entropy_reports",
)
#: typeof -> the STRICT type name that has that storage class's affinity.
TYPES: dict[str, Any] = {"integer": sa.Integer, "real": sa.REAL, "text": sa.Text}
#: The CHECK 0.2.3 put on an ANY column (``type_<name>``), as SQLite keeps its text.
TYPEOF = re.compile(r"""typeof\(["`]?([^"`)]+)["`]?\)\s*=\s*'(integer|real|text)'""")
NEGZERO = "__negzero"


def _online() -> bool:
    return checks_typeof(op.get_context().dialect) and not op.get_context().as_sql


def _quote(name: str) -> str:
    return op.get_context().dialect.identifier_preparer.quote(name)


def _declared(conn: sa.Connection, table: str) -> list[tuple[str, str]]:
    """``(column, declared type)`` of ``table`` in order (the table name is bound)."""
    rows = conn.execute(
        sa.select(sa.column("name"), sa.column("type")).select_from(
            sa.func.pragma_table_info(table)
        )
    ).all()
    return [(str(name), str(type_ or "").upper()) for name, type_ in rows]


def _checked_any(conn: sa.Connection, table: str) -> dict[str, str]:
    """The ``ANY`` columns of ``table`` with 0.2.3's CHECK on ``typeof``: name -> typeof."""
    declared = dict(_declared(conn, table))
    out = {}
    for check in sa.inspect(conn).get_check_constraints(table):
        found = TYPEOF.search(str(check.get("sqltext") or ""))
        if (
            found
            and check.get("name") == f"type_{found.group(1)}"
            and declared.get(found.group(1)) == "ANY"
        ):
            out[found.group(1)] = found.group(2)
    return out


def _keys(conn: sa.Connection, table: str) -> list[str]:
    return list(sa.inspect(conn).get_pk_constraint(table).get("constrained_columns") or [])


def _negative_zero_keys(conn: sa.Connection, table: str, column: str) -> list[tuple[Any, ...]]:
    """The keys of the rows whose ``column`` holds -0.0 (SQL cannot tell it from 0.0: the
    candidates equal to 0 are read and their sign looked at here)."""
    keys = _keys(conn, table)
    t = sa.table(table, *(sa.column(k) for k in keys), sa.column(column))
    rows = conn.execute(
        sa.select(*(t.c[k] for k in keys), t.c[column]).where(t.c[column] == 0)
    ).all()
    return [
        tuple(row[:-1])
        for row in rows
        if isinstance(row[-1], float) and math.copysign(1.0, row[-1]) < 0
    ]


def _set_where_keys(
    conn: sa.Connection, table: str, column: str, value: Any, keys: list[tuple[Any, ...]]
) -> None:
    if not keys:
        return
    names = _keys(conn, table)
    t = sa.table(table, *(sa.column(k) for k in names), sa.column(column))
    stmt = (
        t.update()
        .where(*(t.c[k] == sa.bindparam(f"k_{k}") for k in names))
        .values({column: sa.bindparam("value")})
    )
    conn.execute(
        stmt,
        [
            {"value": value, **{f"k_{k}": v for k, v in zip(names, key, strict=True)}}
            for key in keys
        ],
    )


def _options(conn: sa.Connection, table: str) -> dict[str, Any]:
    return rebuilt_table_options(conn.dialect, clustered=without_rowid(conn, table))


def upgrade() -> None:
    if not _online():
        return
    conn = op.get_bind()
    live = set(sa.inspect(conn).get_table_names())
    for table in TABLES:
        if table not in live:
            continue
        typed = _checked_any(conn, table)
        if not typed:
            continue
        columns = [name for name, _ in _declared(conn, table)]
        reals = [c for c in columns if typed.get(c) == "real" and c + NEGZERO not in columns]
        for column in reals:  # the sign of -0.0, read before REAL drops it
            companion = column + NEGZERO
            op.execute(f"ALTER TABLE {_quote(table)} ADD COLUMN {_quote(companion)} INTEGER")
            _set_where_keys(conn, table, companion, 1, _negative_zero_keys(conn, table, column))
        order = [name for c in columns for name in ((c, c + NEGZERO) if c in reals else (c,))]
        with op.batch_alter_table(
            table,
            recreate="always",
            partial_reordering=[tuple(order)],
            table_kwargs=_options(conn, table),
        ) as batch:
            for column, typeof in typed.items():
                batch.drop_constraint(f"type_{column}", type_="check")
                batch.alter_column(column, type_=TYPES[typeof]())


def downgrade() -> None:
    if not _online():
        return
    conn = op.get_bind()
    live = set(sa.inspect(conn).get_table_names())
    for table in TABLES:
        if table not in live:
            continue
        declared = _declared(conn, table)
        names = {name for name, _ in declared}
        checked = _checked_any(conn, table)
        typed = {
            name: typeof
            for name, type_ in declared
            for typeof, kind in (("integer", "INTEGER"), ("real", "REAL"), ("text", "TEXT"))
            if type_ == kind and name not in checked
        }
        # only the columns of the catalog's int, float and str fields were ANY: a column
        # of another field (a Decimal's, a bool's, a companion) keeps its type
        typed = {
            name: typeof for name, typeof in typed.items() if name in _ANY_AT_0008.get(table, ())
        }
        if not typed:
            continue
        negative = {
            c: _negative_zero_keys_from(conn, table, c)
            for c in typed
            if typed[c] == "real" and c + NEGZERO in names
        }
        # ANY given as the reflected type, not through alter_column: that would copy the
        # rows through CAST(x AS ANY), NUMERIC affinity, which turns text into numbers
        reflected = {c["name"]: c for c in sa.inspect(conn).get_columns(table)}
        keys = _keys(conn, table)
        foreign = {
            fk["constrained_columns"][0]: fk
            for fk in sa.inspect(conn).get_foreign_keys(table)
            if len(fk["constrained_columns"]) == 1
        }
        overrides = [
            sa.Column(
                column,
                _Any(),
                *_foreign_key(foreign.get(column)),
                nullable=reflected[column]["nullable"],
                server_default=_default(reflected[column].get("default")),
                primary_key=column in keys,
            )
            for column in typed
        ]
        with op.batch_alter_table(
            table, recreate="always", reflect_args=overrides, table_kwargs=_options(conn, table)
        ) as batch:
            for column, typeof in typed.items():
                quoted = _quote(column)
                batch.create_check_constraint(
                    f"type_{column}", sa.text(f"typeof({quoted}) = '{typeof}' OR {quoted} IS NULL")
                )
            for column in negative:
                batch.drop_column(column + NEGZERO)

        for column, keys in negative.items():
            _set_where_keys(conn, table, column, -0.0, keys)


def _negative_zero_keys_from(conn: sa.Connection, table: str, column: str) -> list[tuple[Any, ...]]:
    """The keys of the rows whose ``column`` companion says -0.0."""
    keys = _keys(conn, table)
    t = sa.table(table, *(sa.column(k) for k in keys), sa.column(column + NEGZERO))
    rows = conn.execute(sa.select(*(t.c[k] for k in keys)).where(t.c[column + NEGZERO] == 1)).all()
    return [tuple(row) for row in rows]


def _foreign_key(fk: Any) -> list[sa.ForeignKey]:
    """The reflected single-column foreign key ``fk`` (if any) of an overridden column,
    which the override would otherwise lose."""
    if fk is None:
        return []
    return [
        sa.ForeignKey(
            f"{fk['referred_table']}.{fk['referred_columns'][0]}",
            name=fk.get("name"),
            ondelete=(fk.get("options") or {}).get("ondelete"),
        )
    ]


def _default(text: Any) -> Any:
    """A reflected DEFAULT's SQL text as a server default (``None``: none)."""
    return None if text is None else sa.text(str(text))


class _Any(sa.types.UserDefinedType[Any]):
    """SQLite's ``ANY`` (frozen here: the revision does not follow the code)."""

    cache_ok = True

    def get_col_spec(self, **_kw: Any) -> str:
        return "ANY"


#: The ANY columns of the catalog at revision 0008 (its int, float and str fields but the
#: rowid keys), for the downgrade.
_ANY_AT_0008: dict[str, tuple[str, ...]] = {
    "maps": (
        "kind",
        "generator",
        "seed",
        "width",
        "height",
        "open_ratio",
        "region_count",
        "largest_region",
        "rooms_asked",
        "rooms_built",
    ),
    "maps_caves": (
        "parent_key",
        "position",
        "number",
        "cells",
        "x",
        "y",
        "width",
        "height",
        "centroid_x",
        "centroid_y",
    ),
    "maps_rooms": ("parent_key", "position", "x", "y", "width", "height"),
    "maps_corridors": ("parent_key", "position", "length", "start_x", "start_y", "end_x", "end_y"),
    "maps_placements": ("parent_key", "position", "x", "y", "label", "clearance"),
    "sudoku_puzzles": (
        "source",
        "name",
        "puzzle",
        "solution",
        "clues",
        "solution_count",
        "difficulty",
        "nodes",
    ),
    "sudoku_entries": ("source", "position", "name", "line", "puzzle_id"),
    "entropy_reports": (
        "path",
        "size",
        "sha256",
        "entropy",
        "optimum_compression",
        "chi_square",
        "chi_square_probability",
        "mean",
        "monte_carlo_pi",
        "monte_carlo_error",
        "serial_correlation",
        "unique_symbols",
    ),
}

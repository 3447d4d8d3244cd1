"""The type matrix: every built-in registry type x bulk path x backend x size, against the raw
driver storing the type the backend's natural way.

    python benchmarks/bench_matrix.py [--paths given,generated,select,iterate]
                                      [--memory] [--memory-timeout 3600]
                                      [--types int,UUID,wide]
                                      [--backends sqlite,postgresql,mariadb]
                                      [--rows 10000,100000] [--repeat 3]
                                      [--record-as matrix]
                                      [--postgres URL] [--mariadb URL]

Rows: one table per type, ``(id, v)``, for bool, int, float, str, bytes, Decimal (4 places),
datetime (naive), AwareDatetime (offsets +02:00, -03:30 and UTC), date, time, timedelta,
UUID, an Enum of str values and a JSON ``list[int]``; ``wide``, one row of all of them; and
``wide Optional``, the same fields ``X | None`` with about 10 % None.

Paths, each timed alternating (ours, peer, ours, ...), after a full collect with what
survives frozen (``bench_store.timed``), the tables emptied and the objects made outside the
clock, best of ``--repeat`` (three times as many at 10,000 rows and fewer, see
:func:`repeats`):

* ``insert_many keys given`` against the driver's bulk write of the same rows;
* ``insert_many keys generated`` (every key ``None``, written back to each object) against
  the driver's bulk write without the key column, the database numbering the rows, after
  which the peer reads ``max(id)`` in the same transaction and writes the keys back to its
  objects as consecutive numbers (it assumes no other writer; ours checks);
* ``select -> objects`` (``list(Store.select(cls))``) against ``fetchall`` and building the
  same objects;
* ``iterate select`` (``for obj in Store.select(cls)``, nothing kept) against ``fetchmany``
  of 2,000 rows after ``fetchmany``, building each batch's objects.

Peak memory, the paths ``memory`` and ``memory-select`` (not in the default ``--paths``;
``--memory`` adds both): each side of each cell runs in a subprocess of its own (this script
with ``--memory-child``), so that one side's peak cannot hide in the other's. The baseline
is the child's resident size once everything is imported, connected and the table created,
with its peak reset to it (``/proc/self/clear_refs``); the figure is the peak (``VmHWM``)
after the work less the baseline, in MB, at least ``MB_FLOOR`` (1 MB):

* ``insert_many(generator), peak MB``: ``Store.insert_many`` of a generator of the rows,
  keys given, against the driver's bulk write of the same generator as it comes
  (``Peer.insert_stream``): ``sqlite3`` ``executemany`` of a generator of converted
  tuples, psycopg's binary ``COPY`` writing each row as it is made, PyMySQL ``executemany``
  of 10,000 rows at a time, in one transaction;
* ``iterate select, peak MB``: ``for obj in Store.select(cls)`` against the peer's
  ``fetchmany`` loop, on the table the write left, nothing kept.

Each child checks what it wrote (the row count and the three sampled rows, made again
from the same seed) or read (the count); a child that fails, prints no figure or outlasts
``--memory-timeout`` seconds stops the run with its arguments and the end of its output.
The memory "ratio" is the peer's MB above the baseline over ours (above 1: we hold less),
recorded with ``lower_is_better`` as ``bench_pipeline``'s memory line is.

The peer stores each type the backend's natural way and converts inside its clock:

* SQLite (``sqlite3``, WAL, ``synchronous=NORMAL`` on both sides, ``executemany`` in one
  transaction): bool, int, timedelta (microseconds) as INTEGER, float REAL, bytes BLOB,
  everything else TEXT: ``str`` of a Decimal or UUID, the ISO text of dates, times and
  datetimes (an aware one with its offset), an Enum's value, ``json.dumps`` of the list;
  reading parses each back.
* PostgreSQL (psycopg 3 binary ``COPY``, its own dumpers): BOOLEAN, BIGINT, DOUBLE
  PRECISION, TEXT, BYTEA, NUMERIC, TIMESTAMP, TIMESTAMPTZ, DATE, TIME, INTERVAL, UUID, TEXT
  (the Enum's value), JSONB; reading is ``cursor.fetchall`` (psycopg's loaders) + build.
  TIMESTAMPTZ keeps the instant, not the offset (ours keeps the offset too).
* MariaDB (PyMySQL ``executemany`` in one transaction): BOOL, BIGINT, DOUBLE, TEXT, BLOB,
  DECIMAL(65,30), DATETIME(6), DATETIME(6) of the UTC time for an aware datetime (the
  instant, not the offset), DATE, TIME(6), BIGINT microseconds of a timedelta, CHAR(36),
  VARCHAR(16), JSON; reading converts what PyMySQL returns (a TIME comes as a timedelta).

What each side stored or read is checked against the objects it was given: the row count
and three sampled rows (first, middle, last), compared to the original objects (aware
datetimes compare as instants, Decimals as numbers). Each cell is printed with both speeds,
the ratio (ours / peer) and the load, and recorded under the bench name ``matrix`` (or
``--record-as``: ``report.py`` runs one million rows of the worst rows as ``matrix-1m``).
"""

from __future__ import annotations

import argparse
import dataclasses
import enum
import gc
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta, timezone
from datetime import time as dtime
from decimal import Decimal
from itertools import islice, starmap
from pathlib import Path
from typing import Any

import sqlalchemy as sa

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import record  # noqa: E402
from bench_pipeline import rss_kb  # noqa: E402
from bench_store import raw_sqlite, timed  # noqa: E402

from entityworks import AwareDatetime, Store, table  # noqa: E402


class Color(enum.Enum):
    """The matrix's Enum: str values, stored as its value."""

    RED = "red"
    GREEN = "green"
    BLUE = "blue"
    ULTRAVIOLET = "ultraviolet"


_OFFSETS = [
    timezone(timedelta(hours=2)),
    timezone(-timedelta(hours=3, minutes=30)),
    UTC,
]
_BASE = datetime(2024, 1, 1)
_DAY0 = date(1990, 1, 1)
_COLORS = list(Color)
US = timedelta(microseconds=1)
MIDNIGHT = datetime(2000, 1, 1)


def _datetime(rng: random.Random) -> datetime:
    return _BASE + timedelta(seconds=rng.randrange(10**8), microseconds=rng.randrange(10**6))


# name -> (annotation, value maker)
TYPES: dict[str, tuple[Any, Callable[[random.Random], Any]]] = {
    "bool": (bool, lambda r: r.random() < 0.5),
    "int": (int, lambda r: r.randrange(-(10**12), 10**12)),
    "float": (float, lambda r: r.uniform(-1e6, 1e6)),
    "str": (str, lambda r: f"text {r.randrange(10**6)}"),
    "bytes": (bytes, lambda r: r.randbytes(16)),
    "Decimal": (Decimal, lambda r: Decimal(r.randrange(-(10**9), 10**9)).scaleb(-4)),
    "datetime": (datetime, _datetime),
    "AwareDatetime": (AwareDatetime, lambda r: _datetime(r).replace(tzinfo=r.choice(_OFFSETS))),
    "date": (date, lambda r: _DAY0 + timedelta(days=r.randrange(20_000))),
    "time": (
        dtime,
        lambda r: dtime(r.randrange(24), r.randrange(60), r.randrange(60), r.randrange(10**6)),
    ),
    "timedelta": (
        timedelta,
        lambda r: timedelta(seconds=r.randrange(-(10**7), 10**7), microseconds=r.randrange(10**6)),
    ),
    "UUID": (uuid.UUID, lambda r: uuid.UUID(int=r.getrandbits(128), version=4)),
    "Enum": (Color, lambda r: r.choice(_COLORS)),
    "JSON list[int]": (list[int], lambda r: [r.randrange(1000) for _ in range(r.randrange(5))]),
}
WIDE = "wide"
WIDE_OPTIONAL = "wide Optional"
ROWS = [*TYPES, WIDE, WIDE_OPTIONAL]
NONE_SHARE = 0.1
#: Rows per ``executemany`` of the MariaDB peer's write from a generator.
STREAM_BATCH = 10_000


def _field(name: str) -> str:
    return "v_" + name.split()[0].lower()


@dataclass(frozen=True)
class Row:
    """One row of the matrix: its class, each value field's type name, nullable or not."""

    label: str
    cls: type
    fields: list[tuple[str, str]]  # (field name, type name)
    nullable: bool

    def make(self, n: int, keys: bool, seed: int = 7) -> list[Any]:
        return list(self.generate(n, keys, seed))

    def generate(self, n: int, keys: bool, seed: int = 7) -> Iterator[Any]:
        """The rows of ``make``, one at a time: the same objects, none kept."""
        rng = random.Random(seed)
        makers = [TYPES[tp][1] for _, tp in self.fields]
        cls = self.cls
        for i in range(1, n + 1):
            if self.nullable:
                values = [None if rng.random() < NONE_SHARE else m(rng) for m in makers]
            else:
                values = [m(rng) for m in makers]
            yield cls(i if keys else None, *values)


def make_row(label: str, prefix: str) -> Row:
    if label in TYPES:
        fields = [("v", label)]
    else:
        fields = [(_field(tp), tp) for tp in TYPES]
    nullable = label == WIDE_OPTIONAL
    spec: list[Any] = [("id", int | None)]
    for name, tp in fields:
        ann = TYPES[tp][0]
        spec.append((name, ann | None if nullable else ann))
    slug = "".join(c if c.isalnum() else "_" for c in label.lower())
    cls = dataclasses.make_dataclass(f"Matrix_{slug}", spec)
    cls.__module__ = __name__
    table(f"{prefix}_{slug}")(cls)
    return Row(label, cls, fields, nullable)


# -- the peers' storage: (SQL type, write expression, read expression) per type and backend;
#    ``{}`` is the value. A TYPE missing from a backend's map is stored and read unchanged.

SQLITE: dict[str, tuple[str, str, str]] = {
    "bool": ("INTEGER", "{}", "bool({})"),
    "int": ("INTEGER", "{}", "{}"),
    "float": ("REAL", "{}", "{}"),
    "str": ("TEXT", "{}", "{}"),
    "bytes": ("BLOB", "{}", "{}"),
    "Decimal": ("TEXT", "str({})", "Decimal({})"),
    "datetime": ("TEXT", "{}.isoformat()", "datetime_iso({})"),
    "AwareDatetime": ("TEXT", "{}.isoformat()", "datetime_iso({})"),
    "date": ("TEXT", "{}.isoformat()", "date_iso({})"),
    "time": ("TEXT", "{}.isoformat()", "time_iso({})"),
    "timedelta": ("INTEGER", "{} // US", "timedelta(microseconds={})"),
    "UUID": ("TEXT", "str({})", "UUID({})"),
    "Enum": ("TEXT", "{}.value", "Color({})"),
    "JSON list[int]": ("TEXT", "dumps({})", "loads({})"),
}

#: PostgreSQL: (SQL type, the COPY type psycopg dumps, write, read)
POSTGRES: dict[str, tuple[str, str, str, str]] = {
    "bool": ("BOOLEAN", "bool", "{}", "{}"),
    "int": ("BIGINT", "int8", "{}", "{}"),
    "float": ("DOUBLE PRECISION", "float8", "{}", "{}"),
    "str": ("TEXT", "text", "{}", "{}"),
    "bytes": ("BYTEA", "bytea", "{}", "{}"),
    "Decimal": ("NUMERIC", "numeric", "{}", "{}"),
    "datetime": ("TIMESTAMP", "timestamp", "{}", "{}"),
    "AwareDatetime": ("TIMESTAMPTZ", "timestamptz", "{}", "{}"),
    "date": ("DATE", "date", "{}", "{}"),
    "time": ("TIME", "time", "{}", "{}"),
    "timedelta": ("INTERVAL", "interval", "{}", "{}"),
    "UUID": ("UUID", "uuid", "{}", "{}"),
    "Enum": ("TEXT", "text", "{}.value", "Color({})"),
    "JSON list[int]": ("JSONB", "jsonb", "{}", "{}"),
}

MARIADB: dict[str, tuple[str, str, str]] = {
    "bool": ("BOOL", "{}", "bool({})"),
    "int": ("BIGINT", "{}", "{}"),
    "float": ("DOUBLE", "{}", "{}"),
    "str": ("TEXT", "{}", "{}"),
    "bytes": ("BLOB", "{}", "{}"),
    "Decimal": ("DECIMAL(65,30)", "{}", "{}"),
    "datetime": ("DATETIME(6)", "{}", "{}"),
    "AwareDatetime": (
        "DATETIME(6)",
        "{}.astimezone(UTC).replace(tzinfo=None)",
        "{}.replace(tzinfo=UTC)",
    ),
    "date": ("DATE", "{}", "{}"),
    "time": ("TIME(6)", "{}", "(MIDNIGHT + {}).time()"),
    "timedelta": ("BIGINT", "{} // US", "timedelta(microseconds={})"),
    "UUID": ("CHAR(36)", "str({})", "UUID({})"),
    "Enum": ("VARCHAR(16)", "{}.value", "Color({})"),
    "JSON list[int]": ("JSON", "dumps({})", "loads({})"),
}

_NAMES: dict[str, Any] = {
    "US": US,
    "UTC": UTC,
    "MIDNIGHT": MIDNIGHT,
    "Decimal": Decimal,
    "UUID": uuid.UUID,
    "Color": Color,
    "timedelta": timedelta,
    "datetime_iso": datetime.fromisoformat,
    "date_iso": date.fromisoformat,
    "time_iso": dtime.fromisoformat,
    "dumps": json.dumps,
    "loads": json.loads,
}


def _wrap(template: str, value: str, nullable: bool) -> str:
    expr = template.format(value)
    if nullable and expr != value:
        expr = f"(None if {value} is None else {expr})"
    return expr


def peer_writer(row: Row, templates: list[str], keys: bool) -> Callable[[Any], tuple[Any, ...]]:
    """``obj -> parameters`` (with the key first when ``keys``), one expression per column,
    as one would write by hand."""
    exprs = ["o.id"] if keys else []
    for (name, _), template in zip(row.fields, templates, strict=True):
        exprs.append(_wrap(template, f"o.{name}", row.nullable))
    fn: Callable[[Any], tuple[Any, ...]] = eval(  # noqa: S307 - our own expression text
        f"lambda o: ({', '.join(exprs)},)", _NAMES
    )
    return fn


def peer_builder(row: Row, templates: list[str]) -> Callable[[list[Any]], list[Any]]:
    """``fetched rows -> objects``: ``starmap(cls, rows)`` when every column is read as it
    comes, else one expression per column."""
    exprs = [_wrap(t, f"r[{i}]", row.nullable) for i, t in enumerate(templates, 1)]
    cls = row.cls
    if all(e == f"r[{i}]" for i, e in enumerate(exprs, 1)):
        return lambda rows: list(starmap(cls, rows))
    build = eval(  # noqa: S307
        f"lambda r: cls(r[0], {', '.join(exprs)})", {**_NAMES, "cls": cls}
    )
    return lambda rows: list(map(build, rows))


# -- one backend: its peer --------------------------------------------------------------


class Peer:
    """The raw driver's side of one row's table: DDL, clear, write, read."""

    name_given: str
    name_generated: str
    name_select: str
    name_stream: str
    conn: Any

    def __init__(self, row: Row, table_name: str) -> None:
        self.row = row
        self.table = table_name
        self.columns = [name for name, _ in row.fields]

    def close(self) -> None:
        """Drop the table and disconnect."""
        raise NotImplementedError

    def disconnect(self) -> None:
        """Disconnect, the table kept (for the next memory child)."""
        self.conn.close()

    def clear(self) -> None:
        raise NotImplementedError

    def insert(self, objs: Iterable[Any]) -> None:
        raise NotImplementedError

    def insert_stream(self, objs: Iterable[Any]) -> None:
        """The bulk write of rows as they come (``objs`` an iterator, none kept)."""
        self.insert(objs)

    def insert_generated(self, objs: list[Any]) -> None:
        raise NotImplementedError

    def select(self) -> list[Any]:
        raise NotImplementedError

    def iterate(self) -> int:
        """Every row as an object, ``fetchmany`` after ``fetchmany``, none kept: how many."""
        raise NotImplementedError

    def count(self) -> int:
        raise NotImplementedError

    def get(self, key: int) -> Any:
        raise NotImplementedError

    def _not_null(self) -> str:
        return "" if self.row.nullable else " NOT NULL"


class SqlitePeer(Peer):
    name_given = "sqlite3 executemany"
    name_generated = "sqlite3 executemany, keys by SQLite + max(id)"
    name_select = "fetchall + parse + build"
    name_stream = "sqlite3 executemany of a generator"

    def __init__(self, row: Row, table_name: str, path: Path, fresh: bool = True) -> None:
        super().__init__(row, table_name)
        specs = [SQLITE[tp] for _, tp in row.fields]
        self.conn = raw_sqlite(path)
        cols = ", ".join(
            f"{c} {s[0]}{self._not_null()}" for c, s in zip(self.columns, specs, strict=True)
        )
        if fresh:
            self.conn.execute(f"DROP TABLE IF EXISTS {table_name}")
            self.conn.execute(f"CREATE TABLE {table_name} (id INTEGER PRIMARY KEY, {cols})")
        names = ", ".join(self.columns)
        marks = ", ".join("?" * len(self.columns))
        self.sql_given = f"INSERT INTO {table_name} (id, {names}) VALUES (?, {marks})"
        self.sql_generated = f"INSERT INTO {table_name} ({names}) VALUES ({marks})"
        self.sql_select = f"SELECT id, {names} FROM {table_name}"
        self.write_given = peer_writer(row, [s[1] for s in specs], keys=True)
        self.write_generated = peer_writer(row, [s[1] for s in specs], keys=False)
        self.build = peer_builder(row, [s[2] for s in specs])

    def close(self) -> None:
        self.conn.close()

    def clear(self) -> None:
        self.conn.execute(f"DELETE FROM {self.table}")

    def insert(self, objs: Iterable[Any]) -> None:
        conn = self.conn
        conn.execute("BEGIN")
        conn.executemany(self.sql_given, map(self.write_given, objs))
        conn.execute("COMMIT")

    def insert_generated(self, objs: list[Any]) -> None:
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        conn.executemany(self.sql_generated, map(self.write_generated, objs))
        (last,) = conn.execute(f"SELECT max(id) FROM {self.table}").fetchone()
        conn.execute("COMMIT")
        for key, obj in enumerate(objs, last - len(objs) + 1):
            obj.id = key

    def select(self) -> list[Any]:
        return self.build(self.conn.execute(self.sql_select).fetchall())

    def iterate(self) -> int:
        cur = self.conn.execute(self.sql_select)
        n = 0
        while rows := cur.fetchmany(FETCH):
            for _obj in self.build(rows):
                n += 1
        return n

    def count(self) -> int:
        return int(self.conn.execute(f"SELECT count(*) FROM {self.table}").fetchone()[0])

    def get(self, key: int) -> Any:
        rows = self.conn.execute(self.sql_select + " WHERE id = ?", (key,)).fetchall()
        return self.build(rows)[0]


class PostgresPeer(Peer):
    name_given = "psycopg binary COPY"
    name_generated = "psycopg binary COPY, keys by the sequence + max(id)"
    name_select = "psycopg fetchall + build"
    name_stream = "psycopg binary COPY of a generator"

    def __init__(self, row: Row, table_name: str, dsn: str, fresh: bool = True) -> None:
        import psycopg

        super().__init__(row, table_name)
        specs = [POSTGRES[tp] for _, tp in row.fields]
        self.conn = psycopg.connect(dsn)
        cols = ", ".join(
            f"{c} {s[0]}{self._not_null()}" for c, s in zip(self.columns, specs, strict=True)
        )
        if fresh:
            with self.conn.cursor() as cur:
                cur.execute(f"DROP TABLE IF EXISTS {table_name}")
                cur.execute(f"CREATE TABLE {table_name} (id BIGSERIAL PRIMARY KEY, {cols})")
            self.conn.commit()
        names = ", ".join(self.columns)
        self.copy_given = f"COPY {table_name} (id, {names}) FROM STDIN (FORMAT BINARY)"
        self.copy_generated = f"COPY {table_name} ({names}) FROM STDIN (FORMAT BINARY)"
        self.types = [s[1] for s in specs]
        self.sql_select = f"SELECT id, {names} FROM {table_name}"
        self.write_given = peer_writer(row, [s[2] for s in specs], keys=True)
        self.write_generated = peer_writer(row, [s[2] for s in specs], keys=False)
        self.build = peer_builder(row, [s[3] for s in specs])

    def close(self) -> None:
        with self.conn.cursor() as cur:
            cur.execute(f"DROP TABLE IF EXISTS {self.table}")
        self.conn.commit()
        self.conn.close()

    def clear(self) -> None:
        with self.conn.cursor() as cur:
            cur.execute(f"TRUNCATE {self.table}")
        self.conn.commit()

    def _copy(self, sql: str, types: list[str], write: Callable[[Any], Any], objs: Iterable[Any]):
        with self.conn.cursor() as cursor, cursor.copy(sql) as copy:
            copy.set_types(types)
            put = copy.write_row
            for o in objs:
                put(write(o))

    def insert(self, objs: Iterable[Any]) -> None:
        self._copy(self.copy_given, ["int8", *self.types], self.write_given, objs)
        self.conn.commit()

    def insert_generated(self, objs: list[Any]) -> None:
        self._copy(self.copy_generated, self.types, self.write_generated, objs)
        with self.conn.cursor() as cur:
            cur.execute(f"SELECT max(id) FROM {self.table}")
            (last,) = cur.fetchone()  # type: ignore[misc]
        self.conn.commit()
        for key, obj in enumerate(objs, last - len(objs) + 1):
            obj.id = key

    def select(self) -> list[Any]:
        with self.conn.cursor() as cur:
            cur.execute(self.sql_select)
            out = self.build(cur.fetchall())
        self.conn.commit()
        return out

    def iterate(self) -> int:
        n = 0
        with self.conn.cursor() as cur:
            cur.execute(self.sql_select)
            while rows := cur.fetchmany(FETCH):
                for _obj in self.build(rows):
                    n += 1
        self.conn.commit()
        return n

    def count(self) -> int:
        with self.conn.cursor() as cur:
            cur.execute(f"SELECT count(*) FROM {self.table}")
            (n,) = cur.fetchone()  # type: ignore[misc]
        self.conn.commit()
        return int(n)

    def get(self, key: int) -> Any:
        with self.conn.cursor() as cur:
            cur.execute(self.sql_select + " WHERE id = %s", (key,))
            out = self.build(cur.fetchall())[0]
        self.conn.commit()
        return out


class MariadbPeer(Peer):
    name_given = "PyMySQL executemany"
    name_generated = "PyMySQL executemany, keys by AUTO_INCREMENT + max(id)"
    name_select = "PyMySQL fetchall + convert + build"
    name_stream = f"PyMySQL executemany of {STREAM_BATCH:,}-row batches"

    def __init__(self, row: Row, table_name: str, url: sa.URL, fresh: bool = True) -> None:
        import pymysql

        super().__init__(row, table_name)
        specs = [MARIADB[tp] for _, tp in row.fields]
        self.conn = pymysql.connect(
            host=url.host or "127.0.0.1",
            port=url.port or 3306,
            user=url.username or "root",
            password=url.password or "",
            database=url.database,
            charset="utf8mb4",
            autocommit=False,
        )
        cols = ", ".join(
            f"{c} {s[0]}{self._not_null()}" for c, s in zip(self.columns, specs, strict=True)
        )
        if fresh:
            with self.conn.cursor() as cur:
                cur.execute(f"DROP TABLE IF EXISTS {table_name}")
                cur.execute(
                    f"CREATE TABLE {table_name} (id BIGINT AUTO_INCREMENT PRIMARY KEY, {cols}) "
                    "CHARACTER SET utf8mb4"
                )
            self.conn.commit()
        names = ", ".join(self.columns)
        marks = ", ".join(["%s"] * len(self.columns))
        self.sql_given = f"INSERT INTO {table_name} (id, {names}) VALUES (%s, {marks})"
        self.sql_generated = f"INSERT INTO {table_name} ({names}) VALUES ({marks})"
        self.sql_select = f"SELECT id, {names} FROM {table_name}"
        self.write_given = peer_writer(row, [s[1] for s in specs], keys=True)
        self.write_generated = peer_writer(row, [s[1] for s in specs], keys=False)
        self.build = peer_builder(row, [s[2] for s in specs])

    def close(self) -> None:
        with self.conn.cursor() as cur:
            cur.execute(f"DROP TABLE IF EXISTS {self.table}")
        self.conn.commit()
        self.conn.close()

    def clear(self) -> None:
        with self.conn.cursor() as cur:
            cur.execute(f"TRUNCATE TABLE {self.table}")
        self.conn.commit()

    def insert(self, objs: Iterable[Any]) -> None:
        with self.conn.cursor() as cur:
            cur.executemany(self.sql_given, list(map(self.write_given, objs)))
        self.conn.commit()

    def insert_stream(self, objs: Iterable[Any]) -> None:
        # one transaction, ``executemany`` of a batch of converted tuples at a time
        params = map(self.write_given, objs)
        with self.conn.cursor() as cur:
            while batch := list(islice(params, STREAM_BATCH)):
                cur.executemany(self.sql_given, batch)
        self.conn.commit()

    def insert_generated(self, objs: list[Any]) -> None:
        with self.conn.cursor() as cur:
            cur.executemany(self.sql_generated, list(map(self.write_generated, objs)))
            cur.execute(f"SELECT max(id) FROM {self.table}")
            (last,) = cur.fetchone()  # type: ignore[misc]
        self.conn.commit()
        for key, obj in enumerate(objs, last - len(objs) + 1):
            obj.id = key

    def select(self) -> list[Any]:
        with self.conn.cursor() as cur:
            cur.execute(self.sql_select)
            out = self.build(cur.fetchall())
        self.conn.commit()
        return out

    def iterate(self) -> int:
        n = 0
        with self.conn.cursor() as cur:
            cur.execute(self.sql_select)
            while rows := cur.fetchmany(FETCH):
                for _obj in self.build(rows):
                    n += 1
        self.conn.commit()
        return n

    def count(self) -> int:
        with self.conn.cursor() as cur:
            cur.execute(f"SELECT count(*) FROM {self.table}")
            (n,) = cur.fetchone()  # type: ignore[misc]
        self.conn.commit()
        return int(n)

    def get(self, key: int) -> Any:
        with self.conn.cursor() as cur:
            cur.execute(self.sql_select + " WHERE id = %s", (key,))
            out = self.build(list(cur.fetchall()))[0]
        self.conn.commit()
        return out


# -- the run --------------------------------------------------------------------------------

TITLES = {"sqlite": "SQLite", "postgresql": "PostgreSQL", "mariadb": "MariaDB"}
PATHS = {
    "given": "insert_many keys given",
    "generated": "insert_many keys generated",
    "select": "select -> objects",
    "iterate": "iterate select",
    "memory": "insert_many(generator), peak MB",
    "memory-select": "iterate select, peak MB",
}
#: The timed paths (rows/s) and the memory paths (MB above the baseline, each side in a
#: subprocess of its own).
TIMED = ("given", "generated", "select", "iterate")
MEMORY = ("memory", "memory-select")
#: What the figures are recorded as (``--record-as``): ``report.py`` runs the 1M-row subset
#: as ``matrix-1m``.
BENCH = {"name": "matrix"}
#: Rows per ``fetchmany`` of the peers' iteration (the Store's own batch: ``_read.FETCH``).
FETCH = 2_000


def size_label(n: int) -> str:
    if n % 1_000_000 == 0:
        return f"{n // 1_000_000}M"
    return f"{n // 1000}k" if n % 1000 == 0 else str(n)


def report(backend: str, path: str, row: str, n: int, peer: str, ours_t: float, peer_t: float):
    load = os.getloadavg()[0]
    work = f"{TITLES[backend]} {PATHS[path]}"
    print(
        f"{work:<38} {row:<15} {size_label(n):>5}  ours {n / ours_t:>10,.0f} rows/s  "
        f"peer {n / peer_t:>10,.0f} rows/s  ratio {peer_t / ours_t:5.2f}x  (load {load:.2f})"
        f"  [{peer}]",
        flush=True,
    )
    record(BENCH["name"], work, f"{row} {size_label(n)}", peer, n / peer_t, n / ours_t, "rows/s")


def _samples(n: int) -> list[int]:
    return sorted({0, n // 2, n - 1})


def _same(a: Any, b: Any, what: str) -> None:
    if a != b:
        raise AssertionError(f"{what}: {a!r} != {b!r}")


class Backend:
    """One backend's Store and its peer factory."""

    def __init__(self, name: str, url: str | None, workdir: Path) -> None:
        self.name = name
        self.workdir = workdir
        if name == "sqlite":
            self.store = Store(workdir / "ours.db")
        else:
            assert url
            self.store = Store(url)
        self.url = url

    def peer(self, row: Row, fresh: bool = True) -> Peer:
        """The peer of ``row``'s table: created anew (``fresh``) or the one there is."""
        name = str(row.cls.__tablename__) + "_peer"  # type: ignore[attr-defined]
        if self.name == "sqlite":
            return SqlitePeer(row, name, self.workdir / "peer.db", fresh)
        u = sa.make_url(self.url or "")
        if self.name == "postgresql":
            dsn = u.set(drivername="postgresql").render_as_string(hide_password=False)
            return PostgresPeer(row, name, dsn, fresh)
        return MariadbPeer(row, name, u, fresh)

    def clear_ours(self, cls: type) -> None:
        store = self.store
        if self.name == "sqlite":
            store.delete(cls, where={})
            return
        word = "TRUNCATE" if self.name == "postgresql" else "TRUNCATE TABLE"
        with store.engine.begin() as conn:
            conn.execute(sa.text(f"{word} {store.table(cls).name}"))


def time_given(backend: Backend, row: Row, peer: Peer, given: list[Any], repeat: int) -> None:
    store, cls, n = backend.store, row.cls, len(given)
    ours_t, peer_t = timed(
        [
            (lambda: backend.clear_ours(cls), lambda: store.insert_many(given)),
            (peer.clear, lambda: peer.insert(given)),
        ],
        repeat,
    )
    _same(store.count(cls), n, "ours: count")
    _same(peer.count(), n, "peer: count")
    for k in _samples(n):
        _same(store.get(cls, given[k].id), given[k], "ours: a stored row")
        _same(peer.get(given[k].id), given[k], "peer: a stored row")
    report(backend.name, "given", row.label, n, peer.name_given, ours_t, peer_t)


def time_generated(backend: Backend, row: Row, peer: Peer, n: int, repeat: int) -> None:
    store, cls = backend.store, row.cls
    objs = row.make(n, keys=False)
    ours_ids: list[int] = []

    def reset_ours() -> None:
        backend.clear_ours(cls)
        for o in objs:
            o.id = None

    def reset_peer() -> None:
        # ours ran just before: its keys, at the sampled positions
        ours_ids[:] = [objs[k].id for k in _samples(n)]
        peer.clear()
        for o in objs:
            o.id = None

    ours_t, peer_t = timed(
        [
            (reset_ours, lambda: store.insert_many(objs)),
            (reset_peer, lambda: peer.insert_generated(objs)),
        ],
        repeat,
    )
    _same(store.count(cls), n, "ours: count (generated)")
    _same(peer.count(), n, "peer: count (generated)")
    for k, key in zip(_samples(n), ours_ids, strict=True):
        assert key is not None
        _same(store.get(cls, key), replace(objs[k], id=key), "ours: generated row")
        _same(peer.get(objs[k].id), objs[k], "peer: generated row")
    report(backend.name, "generated", row.label, n, peer.name_generated, ours_t, peer_t)


def time_select(backend: Backend, row: Row, peer: Peer, given: list[Any], repeat: int) -> None:
    store, cls, n = backend.store, row.cls, len(given)
    backend.clear_ours(cls)
    peer.clear()
    store.insert_many(given)
    peer.insert(given)
    got: dict[str, list[Any]] = {}

    def ours_select() -> None:
        got["ours"] = list(store.select(cls))

    def peer_select() -> None:
        got["peer"] = peer.select()

    def nothing() -> None:  # the last run's objects freed outside the clock
        got.clear()

    ours_t, peer_t = timed([(nothing, ours_select), (nothing, peer_select)], repeat)
    ours_select()
    by_id = {o.id: o for o in got["ours"]}
    theirs = {o.id: o for o in got["peer"]}
    _same(len(by_id), n, "ours: objects read")
    _same(len(theirs), n, "peer: objects read")
    for k in _samples(n):
        _same(by_id[given[k].id], given[k], "ours: an object read")
        _same(theirs[given[k].id], given[k], "peer: an object read")
    got.clear()
    report(backend.name, "select", row.label, n, peer.name_select, ours_t, peer_t)


def time_iterate(backend: Backend, row: Row, peer: Peer, given: list[Any], repeat: int) -> None:
    store, cls, n = backend.store, row.cls, len(given)
    backend.clear_ours(cls)
    peer.clear()
    store.insert_many(given)
    peer.insert(given)
    counted: dict[str, int] = {}

    def ours_iterate() -> None:
        k = 0
        for _obj in store.select(cls):
            k += 1
        counted["ours"] = k

    def peer_iterate() -> None:
        counted["peer"] = peer.iterate()

    ours_t, peer_t = timed([(counted.clear, ours_iterate), (counted.clear, peer_iterate)], repeat)
    ours_iterate()
    peer_iterate()
    _same(counted["ours"], n, "ours: objects iterated")
    _same(counted["peer"], n, "peer: objects iterated")
    report(backend.name, "iterate", row.label, n, "fetchmany + build", ours_t, peer_t)


# -- peak memory: each side in a subprocess of its own ------------------------------------

#: A peak less than this many MB above the baseline counts as this much (the allocator's
#: and the pages' granularity; and no ratio divides by zero).
MB_FLOOR = 1.0
#: The prefix of the memory tables, apart from the timed paths' ``matrix_*``.
MEMORY_PREFIX = "matrixmem"
#: The line a memory child prints its figures on: ``<mark> <baseline kB> <peak kB>``.
_MARK = "matrix-memory:"
#: The peers of the memory paths, by backend (``name_stream`` for the write).
PEERS: dict[str, type[Peer]] = {
    "sqlite": SqlitePeer,
    "postgresql": PostgresPeer,
    "mariadb": MariadbPeer,
}


def reset_peak() -> None:
    """Lower this process's peak resident size (``VmHWM``) to its present size (Linux 4.0+,
    ``clear_refs`` 5), so that the peak read after the work is the work's, not the imports'
    or the setup's."""
    with open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")


def memory_child(argv: list[str]) -> None:
    """One side of one memory cell, run by ``_child`` as ``--memory-child SIDE WHAT BACKEND
    ROW N WORKDIR URL``: prints ``<mark> <baseline kB> <peak kB>``.

    ``write`` creates the table, takes the baseline (everything imported, connected and
    created, the peak reset) and writes a generator of ``N`` rows, keys given: ours
    ``store.insert_many(rows)``, the peer its ``insert_stream``; then checks the row count and
    three sampled rows against the same rows made again. ``select`` reads the table ``write``
    left, ``for obj in store.select(cls)`` or the peer's ``fetchmany`` loop, nothing kept,
    checks the count and drops the table.
    """
    side, what, name, label, size, workdir, url = argv
    n = int(size)
    row = make_row(label, MEMORY_PREFIX)
    backend = Backend(name, None if url == "-" else url, Path(workdir))
    store, cls = backend.store, row.cls
    peer: Peer | None = None
    if side == "ours":
        if what == "write":
            store.drop(cls)
            store.create(cls)
        store.count(cls)
    else:
        peer = backend.peer(row, fresh=what == "write")
        peer.count()
    if what == "write":
        rows = row.generate(n, keys=True)
        gc.collect()
        reset_peak()
        base = rss_kb("VmRSS:")
        if peer is None:
            written = store.insert_many(rows)
            _same(written, n, "ours: rows written")
        else:
            peer.insert_stream(rows)
        peak = rss_kb("VmHWM:")
        samples = _samples(n)
        expected = [o for k, o in enumerate(row.generate(n, keys=True)) if k in samples]
        if peer is None:
            _same(store.count(cls), n, "ours: count (generator)")
            for obj in expected:
                _same(store.get(cls, obj.id), obj, "ours: a row from the generator")
        else:
            _same(peer.count(), n, "peer: count (generator)")
            for obj in expected:
                _same(peer.get(obj.id), obj, "peer: a row from the generator")
            peer.disconnect()
    else:
        gc.collect()
        reset_peak()
        base = rss_kb("VmRSS:")
        if peer is None:
            got = 0
            for _obj in store.select(cls):
                got += 1
        else:
            got = peer.iterate()
        peak = rss_kb("VmHWM:")
        _same(got, n, f"{side}: objects iterated")
        if peer is None:
            store.drop(cls)
        else:
            peer.close()
    store.close()
    print(_MARK, base, peak, flush=True)


def _child(args: list[str], timeout: float) -> tuple[float, float]:
    """(peak MB, MB above the baseline, floored at ``MB_FLOOR``) of one memory child; a child
    that fails, prints no figure or outlasts ``timeout`` seconds stops the run, with its
    arguments and the end of its output."""
    command = [sys.executable, str(Path(__file__).resolve()), "--memory-child", *args]
    what = " ".join(args[:5])
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        raise RuntimeError(f"memory child ({what}) did not finish in {timeout:,.0f} s") from exc
    if done.returncode != 0:
        raise RuntimeError(
            f"memory child ({what}) failed with exit status {done.returncode}:\n"
            + done.stderr[-3000:]
        )
    for text in reversed(done.stdout.splitlines()):
        if text.startswith(_MARK):
            base, peak = (int(part) for part in text.split()[1:3])
            return peak / 1024, max((peak - base) / 1024, MB_FLOOR)
    raise RuntimeError(f"memory child ({what}) printed no figure:\n{done.stdout[-3000:]}")


def report_memory(backend: str, path: str, row: str, n: int, peer: str, ours, theirs) -> None:
    """Print and record one memory cell: ``ours`` and ``theirs`` are (peak MB, MB above)."""
    load = os.getloadavg()[0]
    work = f"{TITLES[backend]} {PATHS[path]}"
    print(
        f"{work:<42} {row:<15} {size_label(n):>5}  ours {ours[1]:>8.1f} MB above   "
        f"peer {theirs[1]:>8.1f} MB above   ratio {theirs[1] / ours[1]:5.2f}x  "
        f"(load {load:.2f})  [{peer}; peaks {ours[0]:.1f} / {theirs[0]:.1f} MB]",
        flush=True,
    )
    record(
        BENCH["name"],
        work,
        f"{row} {size_label(n)}",
        peer,
        theirs[1],
        ours[1],
        "MB",
        lower_is_better=True,
    )


def run_memory(backend: Backend, label: str, n: int, paths: list[str], timeout: float) -> None:
    """The memory cells of one row and size: the write children (ours, then the peer's),
    then, for ``memory-select``, the read children on the tables they left."""
    url = backend.url or "-"
    args = [backend.name, label, str(n), str(backend.workdir), url]
    peer_cls = PEERS[backend.name]
    try:
        ours = _child(["ours", "write", *args], timeout)
        theirs = _child(["peer", "write", *args], timeout)
        if "memory" in paths:
            report_memory(backend.name, "memory", label, n, peer_cls.name_stream, ours, theirs)
        if "memory-select" in paths:
            ours = _child(["ours", "select", *args], timeout)
            theirs = _child(["peer", "select", *args], timeout)
            peer_name = "fetchmany + build"
            report_memory(backend.name, "memory-select", label, n, peer_name, ours, theirs)
    finally:  # what a failed child left
        row = make_row(label, MEMORY_PREFIX)
        backend.store.drop(row.cls)
        backend.peer(row).close()


def repeats(n: int, repeat: int) -> int:
    """Runs per side of a cell of ``n`` rows: ``repeat``, three times as many at 10,000
    rows or fewer, whose runs take milliseconds and whose best moves most with what else
    the machine does."""
    return repeat * 3 if n <= 10_000 else repeat


def run_row(
    backend: Backend,
    row: Row,
    sizes: list[int],
    paths: list[str],
    base_repeat: int,
    timeout: float,
) -> None:
    if any(p in MEMORY for p in paths):
        for n in sizes:
            run_memory(backend, row.label, n, paths, timeout)
    if not any(p in TIMED for p in paths):
        return
    store = backend.store
    store.drop(row.cls)
    store.create(row.cls)
    peer = backend.peer(row)
    try:
        for n in sizes:
            repeat = repeats(n, base_repeat)
            given = row.make(n, keys=True)
            if "given" in paths:
                time_given(backend, row, peer, given, repeat)
            if "generated" in paths:
                time_generated(backend, row, peer, n, repeat)
            if "select" in paths:
                time_select(backend, row, peer, given, repeat)
            if "iterate" in paths:
                time_iterate(backend, row, peer, given, repeat)
    finally:
        peer.close()
        store.drop(row.cls)


def _csv(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--memory-child"]:
        memory_child(argv[1:])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--paths",
        default=",".join(TIMED),
        help=f"comma-separated: {', '.join(PATHS)} (default: the timed ones)",
    )
    parser.add_argument(
        "--memory", action="store_true", help="add the memory paths: memory,memory-select"
    )
    parser.add_argument(
        "--memory-timeout",
        type=float,
        default=3600.0,
        help="seconds one memory subprocess may take (default 3600)",
    )
    parser.add_argument(
        "--record-as", default="matrix", help="the bench name recorded (report.py: matrix-1m)"
    )
    parser.add_argument(
        "--types", default=",".join(ROWS), help=f"rows, comma-separated: {', '.join(ROWS)}"
    )
    parser.add_argument("--backends", default="sqlite,postgresql,mariadb")
    parser.add_argument("--rows", default="10000,100000", help="sizes, comma-separated")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--postgres", default=os.environ.get("ENTITYWORKS_TEST_POSTGRES_URL"))
    parser.add_argument("--mariadb", default=os.environ.get("ENTITYWORKS_TEST_MARIADB_URL"))
    args = parser.parse_args(argv)
    BENCH["name"] = args.record_as
    paths = _csv(args.paths)
    if args.memory:
        paths += [p for p in MEMORY if p not in paths]
    rows = _csv(args.types)
    backends = _csv(args.backends)
    sizes = [int(s) for s in _csv(args.rows)]
    for what, given, known in (
        ("path", paths, PATHS),
        ("row", rows, ROWS),
        ("backend", backends, TITLES),
    ):
        unknown = [g for g in given if g not in known]
        if unknown:
            parser.error(f"unknown {what}: {', '.join(unknown)} (known: {', '.join(known)})")
    urls = {"sqlite": None, "postgresql": args.postgres, "mariadb": args.mariadb}
    print(
        f"sizes {', '.join(map(size_label, sizes))}, best of {args.repeat} "
        f"({repeats(10_000, args.repeat)} at 10k rows and fewer); "
        f"load {os.getloadavg()[0]:.2f}",
        flush=True,
    )
    start = time.perf_counter()
    for name in backends:
        if name != "sqlite" and not urls[name]:
            print(f"{TITLES[name]}: no URL (--postgres / --mariadb or the test env); skipped")
            continue
        with tempfile.TemporaryDirectory() as tmp:
            backend = Backend(name, urls[name], Path(tmp))
            try:
                for label in rows:
                    run_row(
                        backend,
                        make_row(label, "matrix"),
                        sizes,
                        paths,
                        args.repeat,
                        args.memory_timeout,
                    )
            finally:
                backend.store.close()
    print(f"wall time {time.perf_counter() - start:,.0f} s; load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()

"""Bulk Store throughput against the strongest fair peer of each backend, timed in the same run.

    python benchmarks/bench_store.py [--quick] [--rows N] [--mariadb-rows N] [--only sqlite]
                                     [--postgres URL] [--mariadb URL] [--weak]

Rows: the realistic ``Mixed`` row, one class per type (``make_per_type``) and the int-heavy
``Row8`` (benchmarks/_common.py). For each the peer does the same conversions inside its
clock and stores what we store, into a table of the same DDL (created by a Store, outside
both clocks):

* SQLite ``insert_many`` vs ``sqlite3.executemany`` in one transaction, same pragmas (WAL,
  synchronous=NORMAL); a datetime as the same ISO text, a Decimal as the same plain text
  plus the sortable key column our layout keeps beside it (the peer's own key function).
* SQLite ``select`` -> dataclasses vs ``fetchall`` + building the same objects (bool(),
  datetime.fromisoformat, Decimal(text)).
* PostgreSQL ``insert_many`` vs psycopg 3 binary COPY (``set_types`` + ``write_row``).
* MariaDB ``insert_many`` vs PyMySQL ``cursor.executemany`` in one transaction, with the
  companion columns our layout keeps (``__negzero`` of a float, ``__scale`` of a Decimal).

Runs alternate (ours, peer, ours, ...), each after a full collect; a table is emptied (or a
new SQLite file made) before each run, outside the clock. What both sides stored is compared
once. ``--weak`` adds the weaker peers (SQLAlchemy Core executemany, pandas to_sql) for the
Mixed row. Point operations (one row per call) are in bench_point.py.
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime
from decimal import Decimal
from operator import attrgetter
from pathlib import Path
from typing import Any

import sqlalchemy as sa

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import Mixed, Row8, make_mixed, make_per_type, make_rows, record  # noqa: E402

from entityworks import Store  # noqa: E402

_NINES = str.maketrans("0123456789", "9876543210")


def peer_decimal_key(d: Decimal) -> str:
    """The peer's own sortable key of a Decimal (the form our SQLite layout keeps): integer
    part zero-padded to 35 digits, fraction without trailing zeros; a negative number as
    ``-``, the nines' complement and ``~``."""
    text = format(d, "f")
    negative = text[0] == "-"
    integer, _, fraction = text.lstrip("-").partition(".")
    integer, fraction = integer.lstrip("0"), fraction.rstrip("0")
    body = integer.rjust(35, "0") + ("." + fraction if fraction else "")
    if negative and (integer or fraction):
        return "-" + body.translate(_NINES) + "~"
    return body


def load() -> str:
    return f"load {os.getloadavg()[0]:.2f}"


def timed(runs: list[tuple[Callable[[], Any], Callable[[], Any]]], repeat: int) -> list[float]:
    """Best time of each ``(setup, fn)``, alternating, setup outside the clock.

    Each run starts after a full collection with every surviving object frozen
    (``gc.freeze``), and a second one that sees none of them: the collections a run
    triggers walk only what it makes, not this benchmark's own rows, and come as often as
    in a program that holds nothing else. Both matter to a peer that builds objects with
    the collector on (ours pauses it): the first collection alone leaves the collector's
    full-collection threshold set by everything the benchmark holds (a quarter of it), so
    the peer would run with the rare full collections of a large heap that are as cheap as
    those of an empty one, and faster or slower with what else this process made (0.88x
    or 0.97x for the Mixed select of SQLite with all rows or with Mixed alone)."""
    best = [math.inf] * len(runs)
    for _ in range(repeat):
        for i, (setup, fn) in enumerate(runs):
            setup()
            gc.collect()
            gc.freeze()
            gc.collect()  # resets the full-collection threshold: nothing young survives
            start = time.perf_counter()
            fn()
            best[i] = min(best[i], time.perf_counter() - start)
            gc.unfreeze()
    return best


def report(label: str, peer: str, n: int, ours_t: float, peer_t: float) -> None:
    print(
        f"{label:<30} ours {n / ours_t:>10,.0f} rows/s   {peer:<26} {n / peer_t:>10,.0f} "
        f"rows/s   ratio {peer_t / ours_t:5.2f}x   ({load()})",
        flush=True,
    )
    work, _, row = label.rpartition(" ")
    record(
        "store",
        work,
        "int-heavy Row8" if row == "Row8" else row,
        peer,
        n / peer_t,
        n / ours_t,
        "rows/s",
    )


def weak_line(peer: str, n: int, took: float) -> None:
    print(f"  weak peer: {peer:<32} {n / took:>10,.0f} rows/s   ({load()})", flush=True)


# -- the peer's conversions, written out per column as a user of the driver would ---------


def _field_types(cls: type) -> dict[str, Any]:
    import typing

    return typing.get_type_hints(cls)


def _base(tp: Any) -> tuple[Any, bool]:
    import types

    if isinstance(tp, types.UnionType):
        args = [a for a in tp.__args__ if a is not type(None)]
        return args[0], True
    return tp, False


def peer_writer(cls: type, names: list[str], backend: str) -> Callable[[Any], tuple[Any, ...]]:
    """``obj -> row`` for the SQL columns ``names`` of ``cls``'s table on ``backend``,
    compiled from one expression per column (what one would write by hand)."""
    hints = _field_types(cls)
    exprs = []
    for name in names:
        field, _, companion = name.partition("__")
        tp, nullable = _base(hints[field])
        v = f"o.{field}"
        if companion == "text":  # SQLite: the plain text beside the key column
            expr = f"format({v}, 'f')"
        elif companion == "negzero":
            expr = f"(1 if {v} == 0.0 and copysign(1.0, {v}) < 0 else None)"
        elif companion == "scale":
            expr = f"-{v}.as_tuple().exponent"
        elif backend == "sqlite" and tp is datetime:
            expr = f"{v}.isoformat(' ', 'microseconds')"
        elif backend == "sqlite" and tp is Decimal:  # the field's key column
            expr = f"key({v})"
        else:
            expr = v
        if nullable and expr != v:
            expr = f"(None if {v} is None else {expr})"
        exprs.append(expr)
    source = f"lambda o: ({', '.join(exprs)},)"
    fn: Callable[[Any], tuple[Any, ...]] = eval(  # noqa: S307 - our own expression text
        source, {"key": peer_decimal_key, "copysign": math.copysign}
    )
    return fn


def peer_reader(cls: type, names: list[str]) -> Callable[[tuple[Any, ...]], Any]:
    """``SQLite row -> obj`` building ``cls`` as the peer would (the key column unread:
    a Decimal from its plain text)."""
    hints = _field_types(cls)
    args = []
    for field in hints:
        tp, nullable = _base(hints[field])
        at = names.index(f"{field}__text" if tp is Decimal else field)
        v = f"r[{at}]"
        expr = {bool: f"bool({v})", datetime: f"fromiso({v})", Decimal: f"Decimal({v})"}.get(tp, v)
        if nullable and expr != v:
            expr = f"(None if {v} is None else {expr})"
        args.append(expr)
    source = f"lambda r: cls({', '.join(args)})"
    fn: Callable[[tuple[Any, ...]], Any] = eval(  # noqa: S307
        source, {"cls": cls, "fromiso": datetime.fromisoformat, "Decimal": Decimal}
    )
    return fn


def _names(store: Store, cls: type) -> list[str]:
    """The SQL columns of ``cls``'s table by key (the field, or ``field__companion``)."""
    return list(store.model(cls).names)


def _sql_names(store: Store, cls: type) -> list[str]:
    """The same columns by their SQL names (SQLite's Decimal text takes the field's name)."""
    table = store.model(cls).table
    return [table.c[n].name for n in store.model(cls).names]


# -- SQLite ---------------------------------------------------------------------------------


def raw_sqlite(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    return conn


def sqlite_one(label: str, objs: list[Any], workdir: Path, repeat: int, weak: bool) -> None:
    cls = type(objs[0])
    n = len(objs)
    counter = iter(range(10**6))
    ours: list[Store] = []
    peers: list[tuple[sqlite3.Connection, Path]] = []
    table = str(cls.__tablename__)  # type: ignore[attr-defined]

    def new_ours() -> None:
        for s in ours:
            s.close()
        store = Store(workdir / f"ours-{next(counter)}.db")
        store.create(cls)
        ours.append(store)

    def new_peer() -> None:
        path = workdir / f"peer-{next(counter)}.db"
        with Store(path) as s:
            s.create(cls)  # the same DDL as ours
        peers.append((raw_sqlite(path), path))

    probe = Store(workdir / "probe.db")
    names = _names(probe, cls)
    sql_names = _sql_names(probe, cls)
    probe.close()
    row = peer_writer(cls, names, "sqlite")
    sql = f"INSERT INTO {table} ({', '.join(sql_names)}) VALUES ({', '.join('?' * len(names))})"

    def ours_insert() -> None:
        ours[-1].insert_many(objs)

    def peer_insert() -> None:
        conn = peers[-1][0]
        conn.execute("BEGIN")
        conn.executemany(sql, map(row, objs))
        conn.execute("COMMIT")

    ours_t, peer_t = timed([(new_ours, ours_insert), (new_peer, peer_insert)], repeat)
    report(f"SQLite insert_many {label}", "sqlite3 executemany", n, ours_t, peer_t)
    order = f"SELECT {', '.join(sql_names)} FROM {table} ORDER BY id"
    mine = raw_sqlite(Path(str(ours[-1].url.database)))
    assert mine.execute(order).fetchall() == peers[-1][0].execute(order).fetchall(), label
    mine.close()

    # -- select -> dataclasses
    build = peer_reader(cls, names)
    select_all = f"SELECT {', '.join(sql_names)} FROM {table}"
    reader = peers[-1][0]

    def peer_select() -> None:
        out = list(map(build, reader.execute(select_all).fetchall()))
        assert len(out) == n

    def ours_select() -> None:
        out = list(ours[-1].select(cls))
        assert len(out) == n

    def nothing() -> None:
        pass

    ours_t, peer_t = timed([(nothing, ours_select), (nothing, peer_select)], repeat)
    report(f"SQLite select {label}", "fetchall + build", n, ours_t, peer_t)
    assert list(ours[-1].select(cls, order_by="id")) == objs, label
    assert (
        sorted(map(build, reader.execute(select_all).fetchall()), key=attrgetter("id")) == objs
    ), label

    if weak:

        def core_insert() -> None:
            path = workdir / f"core-{next(counter)}.db"
            with Store(path) as s:
                s.create(cls)
                tbl = s.table(cls)
            engine = sa.create_engine(f"sqlite:///{path}")
            core_row = peer_writer(cls, names, "core")  # the types' bind processors convert
            dicts = [dict(zip(names, core_row(o), strict=True)) for o in objs]
            with engine.begin() as conn:
                conn.execute(tbl.insert(), dicts)
            engine.dispose()

        (core_t,) = timed([(nothing, core_insert)], 1)
        weak_line("SQLAlchemy Core executemany", n, core_t)
        try:
            import pandas as pd

            frame = pd.DataFrame(list(map(row, objs)), columns=names)

            def pandas_insert() -> None:
                conn = raw_sqlite(workdir / f"pandas-{next(counter)}.db")
                frame.to_sql(table, conn, index=False)
                conn.close()

            (pandas_t,) = timed([(nothing, pandas_insert)], 1)
            weak_line("pandas to_sql (frame prebuilt)", n, pandas_t)
        except ImportError:
            print("  weak: pandas not installed")
    for s in ours:
        s.close()
    for conn, _ in peers:
        conn.close()


# -- PostgreSQL -----------------------------------------------------------------------------


def postgres_one(label: str, objs: list[Any], url: str, repeat: int) -> None:
    cls = type(objs[0])
    n = len(objs)
    store = Store(url)
    store.drop(cls)
    store.create(cls)
    names = _names(store, cls)
    model = store.model(cls)
    types = model.codec.copy_types
    table = model.table.name
    engine = sa.create_engine(url)
    raw = engine.raw_connection()
    conn = raw.driver_connection
    row = peer_writer(cls, names, "postgresql")
    copy_sql = f"COPY {table} ({', '.join(names)}) FROM STDIN (FORMAT BINARY)"

    def clear() -> None:
        with conn.cursor() as cur:
            cur.execute(f"TRUNCATE {table}")
        conn.commit()

    def peer_copy() -> None:
        with conn.cursor() as cursor, cursor.copy(copy_sql) as copy:
            copy.set_types(types)
            write = copy.write_row
            for o in objs:
                write(row(o))
        conn.commit()

    def ours_insert() -> None:
        store.insert_many(objs)

    order = f"SELECT {', '.join(names)} FROM {table} ORDER BY id"

    def stored() -> list[Any]:
        with conn.cursor() as cur:
            cur.execute(order)
            out = cur.fetchall()
        conn.commit()
        return out

    clear()
    peer_copy()
    theirs = stored()
    clear()
    ours_insert()
    assert stored() == theirs, label
    ours_t, peer_t = timed([(clear, ours_insert), (clear, peer_copy)], repeat)
    report(f"PostgreSQL insert_many {label}", "psycopg binary COPY", n, ours_t, peer_t)
    clear()
    store.drop(cls)
    store.close()
    raw.close()
    engine.dispose()


# -- MariaDB --------------------------------------------------------------------------------


def mariadb_one(label: str, objs: list[Any], url: str, repeat: int) -> None:
    import pymysql

    cls = type(objs[0])
    n = len(objs)
    store = Store(url)
    store.drop(cls)
    store.create(cls)
    names = _names(store, cls)
    table = store.model(cls).table.name
    u = sa.make_url(url)
    conn = pymysql.connect(
        host=u.host or "127.0.0.1",
        port=u.port or 3306,
        user=u.username or "root",
        password=u.password or "",
        database=u.database,
        autocommit=False,
    )
    row = peer_writer(cls, names, "mariadb")
    sql = f"INSERT INTO {table} ({', '.join(names)}) VALUES ({', '.join(['%s'] * len(names))})"

    def clear() -> None:
        with conn.cursor() as cur:
            cur.execute(f"DELETE FROM {table}")
        conn.commit()

    def peer_insert() -> None:
        with conn.cursor() as cur:
            cur.executemany(sql, list(map(row, objs)))
        conn.commit()

    def ours_insert() -> None:
        store.insert_many(objs)

    def stored() -> list[Any]:
        with conn.cursor() as cur:
            cur.execute(f"SELECT {', '.join(names)} FROM {table} ORDER BY id")
            out = list(cur.fetchall())
        conn.commit()
        return out

    clear()
    peer_insert()
    theirs = stored()
    clear()
    ours_insert()
    assert stored() == theirs, label
    ours_t, peer_t = timed([(clear, ours_insert), (clear, peer_insert)], repeat)
    report(f"MariaDB insert_many {label}", "PyMySQL executemany", n, ours_t, peer_t)
    clear()
    store.drop(cls)
    store.close()
    conn.close()


def datasets(n: int, which: list[str]) -> list[tuple[str, list[Any]]]:
    out: list[tuple[str, list[Any]]] = []
    for cls in (Mixed, Row8, *{type(v[0]) for v in make_per_type(1).values()}):
        # tables of our own: other benchmarks may use the same databases at the same time
        cls.__tablename__ = f"bulkbench_{cls.__name__.lower()}"  # type: ignore[attr-defined]
    if "Mixed" in which:
        out.append(("Mixed", make_mixed(n)))
    per_type = make_per_type(n)
    out += [(name, per_type[name]) for name in per_type if name in which]
    if "Row8" in which:
        out.append(("Row8", make_rows(n)))
    return out


ROWS = ["Mixed", "int", "float", "str", "bool", "datetime", "Decimal", "Row8"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--rows", type=int, default=200_000, help="rows for SQLite and PostgreSQL (default 200000)"
    )
    parser.add_argument("--mariadb-rows", type=int, default=100_000)
    parser.add_argument("--quick", action="store_true", help="20000 / 10000 rows, 2 runs")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", choices=["sqlite", "postgres", "mariadb"], action="append")
    parser.add_argument(
        "--row", choices=ROWS, action="append", help="only these row classes (default: all)"
    )
    parser.add_argument(
        "--weak",
        action="store_true",
        help="also the weak peers (SQLAlchemy Core, pandas) for Mixed on SQLite",
    )
    parser.add_argument("--postgres", default=os.environ.get("ENTITYWORKS_TEST_POSTGRES_URL"))
    parser.add_argument("--mariadb", default=os.environ.get("ENTITYWORKS_TEST_MARIADB_URL"))
    args = parser.parse_args()
    if args.quick:
        args.rows, args.mariadb_rows, args.repeat = 20_000, 10_000, 2
    only = args.only or ["sqlite", "postgres", "mariadb"]
    which = args.row or ROWS
    print(
        f"{args.rows:,} rows (MariaDB {args.mariadb_rows:,}), best of {args.repeat}; "
        f"CPU count {os.cpu_count()}; {load()}"
    )
    if "sqlite" in only:
        with tempfile.TemporaryDirectory() as tmp:
            for label, objs in datasets(args.rows, which):
                sqlite_one(label, objs, Path(tmp), args.repeat, args.weak and label == "Mixed")
    if "postgres" in only:
        if args.postgres:
            for label, objs in datasets(args.rows, which):
                postgres_one(label, objs, args.postgres, args.repeat)
        else:
            print("PostgreSQL: no URL (--postgres or ENTITYWORKS_TEST_POSTGRES_URL); skipped")
    if "mariadb" in only:
        if args.mariadb:
            for label, objs in datasets(args.mariadb_rows, which):
                mariadb_one(label, objs, args.mariadb, args.repeat)
        else:
            print("MariaDB: no URL (--mariadb or ENTITYWORKS_TEST_MARIADB_URL); skipped")


if __name__ == "__main__":
    main()

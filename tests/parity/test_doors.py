"""Every door agrees: rows written through one door read the same through every other.

Write doors: the Python API (``insert_many``, keys generated, rows from a generator), the
CLI's ``import-xml`` of a document ``write_xml`` made, and a Parquet file read back with
``read_parquet`` and stored. A .NET DiffGram cannot carry child tables: that door must refuse
such a table clearly, and carries a table without them (``test_diffgram_door``).

Read doors: the Python API (``select``), the CLI's ``query`` (JSON lines, parent and child
tables), the CLI's ``export-xml`` and ``parquet`` read back by the library's readers, the
database's own shell (``sqlite3``, ``psql``, ``mariadb``), ``pandas.read_sql`` with a value
bound as text (as a web form sends it), and, on SQLite, Datasette's JSON API with ``=``, range
and foreign-key filters.

Each (backend, write door) database is written once per module; each read door is one test,
which lists every value where it disagrees with the rows written.
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
import os
import shutil
import subprocess
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from click.testing import CliRunner

from entityworks import AwareDatetime, Store, read_parquet, read_xml, write_parquet, write_xml
from entityworks.cli import cli
from tests.conftest import IN_CI
from tests.parity.models import CHILD, PARENT, Level, Room, keyed, rows

BACKENDS = ["sqlite", "postgresql", "mariadb"]

#: What every door must see: the rows with the keys the database gives them.
EXPECTED = keyed(rows())


def run_cli(*args: str) -> str:
    """Run the CLI in this process; fail with its stderr unless it exits 0."""
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, f"entityworks {' '.join(args)}: {result.stderr}"
    return result.stdout


# -- write doors ------------------------------------------------------------------------


def write_api(url: str, work: Path) -> None:
    with Store(url) as store:
        store.create(Level)
        assert store.insert_many(iter(rows())) == len(EXPECTED)


def write_cli_xml(url: str, work: Path) -> None:
    doc = work / "levels.xml"
    write_xml(Level, EXPECTED, doc, work / "levels.xsd")
    run_cli("import-xml", str(doc), "--xsd", str(work / "levels.xsd"), "--db", url)


def write_parquet_door(url: str, work: Path) -> None:
    path = work / "levels.parquet"
    write_parquet(Level, EXPECTED, path)
    with Store(url) as store:
        store.create(Level)
        store.insert_many(read_parquet(Level, path))


WRITES: dict[str, Callable[[str, Path], None]] = {
    "api": write_api,
    "cli-import-xml": write_cli_xml,
    "parquet": write_parquet_door,
}


@pytest.fixture(scope="module")
def written(databases: Any, tmp_path_factory: pytest.TempPathFactory) -> Callable[..., str]:
    """``written(backend, door)``: the URL of a database the door wrote the rows into."""
    done: dict[tuple[str, str], str] = {}

    def get(backend: str, door: str) -> str:
        if (backend, door) not in done:
            url = databases(backend, door.replace("-", "_"))
            WRITES[door](url, tmp_path_factory.mktemp(f"{backend}-{door}"))
            done[backend, door] = url
        return done[backend, door]

    return get


# -- comparing ------------------------------------------------------------------------

Canon = dict[int, dict[str, Any]]


def canon(objs: list[Level]) -> Canon:
    """Each row by key: its fields, the aware datetime as (instant, offset), the children."""
    out: Canon = {}
    for o in objs:
        assert o.id is not None
        out[o.id] = {
            "name": o.name,
            "width": o.width,
            "ratio": o.ratio,
            "price": o.price,
            "placed": (o.placed.astimezone(UTC), o.placed.utcoffset()),
            "day": o.day,
            "tag": o.tag,
            "note": o.note,
            "rooms": [(r.x, r.label) for r in o.rooms],
        }
    return out


def same(value: Any, expected: Any) -> bool:
    """Equal and of the same type (a Decimal is compared with its scale: 2.50 is not 2.5)."""
    if type(value) is not type(expected):
        return False
    if isinstance(value, Decimal):
        return value.as_tuple() == expected.as_tuple()
    if isinstance(value, float):
        return value == expected and str(value) == str(expected)
    return bool(value == expected)


def differences(
    seen: Canon,
    *,
    fields: tuple[str, ...] | None = None,
    compare: Callable[[str, Any, Any], bool] | None = None,
) -> list[str]:
    """Every way ``seen`` differs from the rows written (restricted to ``fields``)."""
    want = canon(EXPECTED)
    problems: list[str] = []
    if sorted(seen) != sorted(want):
        problems.append(f"keys {sorted(seen)} instead of {sorted(want)}")
    for key in sorted(set(seen) & set(want)):
        for name in fields or tuple(want[key]):
            got, expected = seen[key].get(name, "<missing>"), want[key][name]
            ok = compare(name, got, expected) if compare else None
            if ok is None:
                ok = (
                    all(same(g, e) for g, e in zip(got, expected, strict=True))
                    if isinstance(expected, tuple)
                    and isinstance(got, tuple)
                    and len(got) == len(expected)
                    else same(got, expected)
                    if not isinstance(expected, list)
                    else got == expected
                )
            if not ok:
                problems.append(f"row {key}, {name}: {got!r} instead of {expected!r}")
    return problems


# -- read doors -----------------------------------------------------------------------


def read_api(url: str, work: Path) -> list[str]:
    with Store(url) as store:
        return differences(canon(list(store.select(Level, order_by="id"))))


def _instant(text: str) -> datetime:
    """A timestamp as a tool prints it: ISO text, ``+00`` offsets, or naive UTC."""
    value = datetime.fromisoformat(text.replace(" ", "T"))
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value


def read_cli_query(url: str, work: Path) -> list[str]:
    parents = [
        json.loads(line)
        for line in run_cli("query", PARENT, "--format", "jsonl", "--db", url).splitlines()
    ]
    children = [
        json.loads(line)
        for line in run_cli(
            "query", CHILD, "--format", "jsonl", "-o", "parent_key", "-o", "position", "--db", url
        ).splitlines()
    ]
    seen: Canon = {}
    for p in parents:
        placed = datetime.fromisoformat(p["placed"])
        seen[p["id"]] = {
            "name": p["name"],
            "width": p["width"],
            "ratio": p["ratio"],
            "price": Decimal(p["price"]),
            "placed": (placed.astimezone(UTC), placed.utcoffset()),
            "day": date.fromisoformat(p["day"]),
            "tag": uuid.UUID(p["tag"]),
            "note": p["note"],
            "rooms": [(c["x"], c["label"]) for c in children if c["parent_key"] == p["id"]],
        }
    return differences(seen)


def read_cli_export_xml(url: str, work: Path) -> list[str]:
    doc = work / "export.xml"
    run_cli("export-xml", PARENT, str(doc), "--db", url)
    return differences(canon(read_xml(Level, doc, doc.with_suffix(".xsd"))))


def read_cli_parquet(url: str, work: Path) -> list[str]:
    path = work / "export.parquet"
    run_cli("parquet", PARENT, str(path), "--db", url)
    return differences(canon(read_parquet(Level, path)))


def _need_program(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        if IN_CI:
            pytest.fail(f"{name} is not installed (required under CI=true)")
        pytest.skip(f"{name} is not installed")
    return path


def _shell_rows(url: str, sql: str) -> list[list[str]]:
    """Rows as the database's own command-line client prints them (CSV / tab-separated)."""
    u = sa.make_url(url)
    if u.get_backend_name() == "sqlite":
        out = subprocess.run(
            [_need_program("sqlite3"), "-csv", "-nullvalue", "<NULL>", str(u.database), sql],
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        ).stdout
        return list(csv.reader(io.StringIO(out)))
    if u.get_backend_name() == "postgresql":
        env = {**os.environ, "PGPASSWORD": u.password or ""}
        out = subprocess.run(
            [
                _need_program("psql"),
                "-X",
                "-A",
                "-F",
                "\t",
                "-t",
                "-P",
                "null=<NULL>",
                "-h",
                u.host or "127.0.0.1",
                "-p",
                str(u.port or 5432),
                "-U",
                u.username or "postgres",
                "-d",
                str(u.database),
                "-c",
                sql,
            ],
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
            env=env,
        ).stdout
        return [line.split("\t") for line in out.splitlines() if line]
    out = subprocess.run(
        [
            _need_program("mariadb"),
            "-B",
            "-N",
            "-h",
            u.host or "127.0.0.1",
            "-P",
            str(u.port or 3306),
            "-u",
            u.username or "root",
            *([f"-p{u.password}"] if u.password else []),
            str(u.database),
            "-e",
            sql,
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    return [
        [None if v == "NULL" else v for v in line.split("\t")]  # type: ignore[misc]
        for line in out.splitlines()
        if line
    ]


def _tool_compare(name: str, got: Any, expected: Any) -> bool | None:
    """Other tools see values, not our types: a Decimal's value (a server pads its scale),
    a timestamp's instant (PostgreSQL and MariaDB keep no offset)."""
    if name == "price":
        return isinstance(got, Decimal) and got == expected
    if name == "placed":
        return isinstance(got, tuple) and got[0] == expected[0]
    return None


def _from_text(row: list[Any], children: list[list[Any]]) -> tuple[int, dict[str, Any]]:
    key, name, width, ratio, price, placed, day, tag, note = row
    null = ("<NULL>", None)
    return int(key), {
        "name": name,
        "width": int(width),
        "ratio": float(ratio),
        "price": Decimal(price),
        "placed": (_instant(placed).astimezone(UTC), None),
        "day": date.fromisoformat(day),
        "tag": uuid.UUID(tag),
        "note": None if note in null else note,
        "rooms": [(int(c[1]), c[2]) for c in children if int(c[0]) == int(key)],
    }


def _shell_sql() -> tuple[str, str]:
    """The parent query (plain columns, as another tool would write it) and the child one."""
    parents = (
        f"SELECT id, name, width, ratio, price, placed, day, tag, note FROM {PARENT} ORDER BY id"
    )
    children = f"SELECT parent_key, x, label FROM {CHILD} ORDER BY parent_key, position"
    return parents, children


def read_shell(url: str, work: Path) -> list[str]:
    parents_sql, children_sql = _shell_sql()
    children = _shell_rows(url, children_sql)
    seen = dict(_from_text(r, children) for r in _shell_rows(url, parents_sql))
    problems = differences(seen, compare=_tool_compare)
    # a filter as another tool writes it: the number in the SQL text
    hits = _shell_rows(url, f"SELECT id FROM {PARENT} WHERE width = 60 ORDER BY id")
    if [int(r[0]) for r in hits] != [1, 2]:
        problems.append(f"width = 60 finds {hits}")
    hits = _shell_rows(url, f"SELECT id FROM {PARENT} WHERE width = '60' ORDER BY id")
    if [int(r[0]) for r in hits] != [1, 2]:
        problems.append(f"width = '60' finds {hits}")
    return problems


def read_pandas(url: str, work: Path) -> list[str]:
    import pandas as pd

    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            problems: list[str] = []
            for bound in ("60", 60):
                frame = pd.read_sql(
                    sa.text(f"SELECT id FROM {PARENT} WHERE width = :w ORDER BY id"),
                    conn,
                    params={"w": bound},
                )
                if list(frame["id"]) != [1, 2]:
                    problems.append(f"width = {bound!r} finds {list(frame['id'])}")
            frame = pd.read_sql(
                sa.text(
                    f"SELECT c.parent_key, c.x FROM {CHILD} c JOIN "
                    f"{PARENT} p ON p.id = c.parent_key "
                    "WHERE p.name = :n"
                ),
                conn,
                params={"n": "first"},
            )
            if sorted(frame["x"]) != [1, 2, 3]:
                problems.append(f"join on parent_key finds {list(frame['x'])}")
            frame = pd.read_sql(sa.text(f"SELECT id, name, width FROM {PARENT} ORDER BY id"), conn)
            want = [(o.id, o.name, o.width) for o in EXPECTED]
            got = [(int(i), n, int(w)) for i, n, w in frame.itertuples(index=False)]
            if got != want:
                problems.append(f"rows {got} instead of {want}")
            return problems
    finally:
        engine.dispose()


def read_datasette(url: str, work: Path) -> list[str]:
    from tests.web.conftest import need_datasette

    need_datasette()
    from datasette.app import Datasette

    path = Path(str(sa.make_url(url).database))
    ds = Datasette([str(path)])
    db = path.stem
    checks = {
        f"/{db}/{PARENT}.json?width=60&_shape=array": [1, 2],
        f"/{db}/{PARENT}.json?width__gt=59&_shape=array": [1, 2, 3],
        f"/{db}/{PARENT}.json?width__exact=7&_shape=array": [4],
        f"/{db}/{PARENT}.json?name=third&_shape=array": [3],
        f"/{db}/{PARENT}.json?ratio=0.5&_shape=array": [1],
        f"/{db}/{PARENT}.json?id=2&_shape=array": [2],
    }

    async def go() -> list[str]:
        problems = []
        for path_, ids in checks.items():
            response = await ds.client.get(path_)
            found = [r["id"] for r in response.json()] if response.status_code == 200 else None
            if found != ids:
                problems.append(f"{path_}: {response.status_code} {found} instead of {ids}")
        # the foreign-key link from a parent's page to its children
        response = await ds.client.get(f"/{db}/{CHILD}.json?parent_key=1&_shape=array")
        xs = sorted(r["x"] for r in response.json()) if response.status_code == 200 else None
        if xs != [1, 2, 3]:
            problems.append(f"{CHILD}?parent_key=1: {response.status_code} {xs}")
        return problems

    return asyncio.run(go())


READS: dict[str, Callable[[str, Path], list[str]]] = {
    "api": read_api,
    "cli-query": read_cli_query,
    "cli-export-xml": read_cli_export_xml,
    "cli-parquet": read_cli_parquet,
    "shell": read_shell,
    "pandas": read_pandas,
    "datasette": read_datasette,
}


#: Every (backend, write door, read door); Datasette serves SQLite files only.
CELLS = [
    (backend, write, read)
    for backend in BACKENDS
    for write in WRITES
    for read in READS
    if read != "datasette" or backend == "sqlite"
]


@pytest.mark.parametrize(("backend", "write_door", "read_door"), CELLS)
def test_every_door_sees_the_rows_written(
    backend: str, write_door: str, read_door: str, written: Callable[..., str], tmp_path: Path
) -> None:
    url = written(backend, write_door)
    problems = READS[read_door](url, tmp_path)
    assert not problems, (
        f"{backend}: written through {write_door}, read through "
        f"{read_door}:\n  " + "\n  ".join(problems)
    )


def test_the_rows_have_every_shape() -> None:
    """The fixture itself: keys generated, a NULL, children none, one and several."""
    objs = rows()
    assert all(o.id is None for o in objs)
    assert {len(o.rooms) for o in objs} >= {0, 1, 3}
    assert any(o.note is None for o in objs) and any(o.note == "" for o in objs)
    assert isinstance(EXPECTED[0].rooms[0], Room)


# -- the DiffGram door ------------------------------------------------------------------


@dataclass
class Plain:
    id: int
    name: str
    width: int
    price: Decimal
    placed: AwareDatetime
    note: str | None


PLAIN = [Plain(o.id or 0, o.name, o.width, o.price, o.placed, o.note) for o in EXPECTED]


@pytest.mark.parametrize("backend", BACKENDS)
def test_diffgram_door(backend: str, databases: Any, tmp_path: Path) -> None:
    """A DiffGram of a table with child tables is refused in one line naming the child
    table, and writes nothing; one of a table without them carries every row and value."""
    source = f"sqlite:///{tmp_path / 'source.db'}"
    write_api(source, tmp_path)
    doc = tmp_path / "changes.xml"
    result = CliRunner().invoke(cli, ["export-xml", PARENT, str(doc), "--diffgram", "--db", source])
    assert result.exit_code != 0 and CHILD in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    assert not doc.exists()

    with Store(source) as store:
        store.create(Plain)
        store.insert_many(PLAIN)
    run_cli("export-xml", "plain", str(doc), "--diffgram", "--db", source)
    url = databases(backend, "diffgram")
    with Store(url) as store:
        store.create(Plain)
        store.import_diffgram(doc, doc.with_suffix(".xsd"))
        got = list(store.select(Plain, order_by="id"))
    assert got == PLAIN
    for g, p in zip(got, PLAIN, strict=True):
        assert g.placed.utcoffset() == p.placed.utcoffset()
        assert g.price.as_tuple() == p.price.as_tuple()
    rows_seen = _shell_rows(url, "SELECT id, name, width FROM plain ORDER BY id")
    assert [(int(i), n, int(w)) for i, n, w in rows_seen] == [
        (p.id, p.name, p.width) for p in PLAIN
    ]

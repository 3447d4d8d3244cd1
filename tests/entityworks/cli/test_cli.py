"""The ``entityworks`` command line, through click's CliRunner and as a real subprocess.

End to end: generate -> query -> render -> export -> import into a second database -> equal
rows (SQLite; PostgreSQL and MariaDB when configured); Euler 96; entropy; the demo; and bad
input, which must end with exactly one line on stderr and exit status 2.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import click
import numpy as np
import pytest
import sqlalchemy as sa
from click.testing import CliRunner, Result

from entityworks import Store
from entityworks.catalog import TABLES, MapRecord, generate_into, open_catalog
from entityworks.cli import cli
from entityworks.migrate import head
from tests.conftest import require_data

BIN = Path(sys.executable).parent / "entityworks"


def run(*args: str, ok: bool = True) -> Result:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    if ok:
        assert result.exit_code == 0, result.stderr + result.stdout
    return result


def run_process(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    command = [str(BIN)] if BIN.exists() else [sys.executable, "-m", "entityworks"]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3])}
    return subprocess.run(
        command + list(args), capture_output=True, text=True, cwd=cwd, env=env, timeout=120
    )


def as_json(*args: str) -> list[dict]:
    return json.loads(run("query", *args, "--format", "json").stdout)


def drop_all(url: str) -> None:
    engine = sa.create_engine(url)
    metadata = sa.MetaData()
    metadata.reflect(engine)
    metadata.drop_all(engine)
    engine.dispose()


@pytest.fixture(scope="module")
def catalog_db(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A small catalog shared by the read-only tests."""
    path = tmp_path_factory.mktemp("cli") / "catalog.db"
    store = open_catalog(path)
    generate_into(store, "caves", 3, seed=1, params={"width": 40, "height": 30})
    generate_into(store, "islands", 3, seed=1, params={"width": 30, "height": 20})
    store.close()
    return str(path)


def test_every_command_has_help():
    def walk(group: click.Group, prefix: tuple[str, ...] = ()):
        for name, command in group.commands.items():
            yield prefix + (name,), command
            if isinstance(command, click.Group):
                yield from walk(command, prefix + (name,))

    seen = []
    for path, command in walk(cli):
        assert (command.help or "").strip(), f"{' '.join(path)} has no help text"
        assert run(*path, "--help").stdout.startswith("Usage: ")
        # -h is help everywhere (no command takes it for an option of its own)
        assert run(*path, "-h").stdout == run(*path, "--help").stdout
        seen.append(" ".join(path))
    for expected in (
        "demo",
        "generate",
        "query",
        "render",
        "export-xml",
        "import-xml",
        "parquet",
        "sudoku solve",
        "sudoku euler96",
        "entropy",
        "schema show",
        "schema diff",
        "ddl",
        "migrate",
    ):
        assert expected in seen


def test_demo_is_the_main_job(tmp_path):
    done = run_process("demo", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    out = tmp_path / "entityworks-demo"
    for name in ("catalog.db", "sudoku_puzzles.xml", "sudoku_puzzles.xsd"):
        assert (out / name).is_file()
    assert list(out.glob("cave_*.png")) and list(out.glob("cellular_*.txt"))
    assert "written:" in done.stdout
    store = Store(out / "catalog.db")
    kinds = {m.kind for m in store.select(MapRecord)}
    assert {"caves", "dungeon", "islands"} <= kinds
    dungeons = store.select(MapRecord, where={"kind": "dungeon"})
    assert dungeons and all(
        m.build_success and m.rooms_built == m.rooms_asked == 10 for m in dungeons
    )
    counts = {name: store.count(cls) for name, cls in TABLES.items()}
    assert counts["sudoku_puzzles"] >= 3 and counts["entropy_reports"] >= 1
    store.close()
    again = run("demo", "--out", str(out))  # a second run replaces the demo catalog
    assert "tables: maps 19 rows" in again.stdout
    assert Store(out / "catalog.db").count(MapRecord) == counts["maps"]


@pytest.fixture(params=["sqlite", "postgresql", "mariadb"])
def first_db(request: pytest.FixtureRequest, tmp_path) -> str:
    if request.param == "sqlite":
        yield str(tmp_path / "first.db")
        return
    url = request.getfixturevalue("pg_url" if request.param == "postgresql" else "mariadb_url")
    drop_all(url)
    yield url
    drop_all(url)


def test_generate_query_render_export_import(first_db, tmp_path):
    out = run(
        "generate",
        "caves",
        "--count",
        "4",
        "--width",
        "40",
        "--height",
        "30",
        "--seed",
        "1",
        "--workers",
        "2",
        "--db",
        first_db,
    ).stdout
    assert "stored 4 caves maps" in out and "seeds 1-4" in out
    run(
        "generate",
        "dungeon",
        "-n",
        "2",
        "-p",
        "rooms=6",
        "--width",
        "50",
        "--height",
        "40",
        "--db",
        first_db,
    )
    caves = as_json("maps", "-w", "kind=caves", "-o", "seed", "--db", first_db)
    assert [r["seed"] for r in caves] == [1, 2, 3, 4]
    assert {(r["width"], r["height"]) for r in caves} == {(40, 30)}
    dungeons = as_json("maps", "-w", "kind=dungeon", "--db", first_db)
    assert len(dungeons) == 2 and all(r["parameters"]["rooms"] == 6 for r in dungeons)

    map_id = str(caves[0]["id"])
    png, tiled = tmp_path / "cave.png", tmp_path / "cave.json"
    shown = run(
        "render", map_id, "--png", str(png), "--tiled", str(tiled), "--ascii", "-", "--db", first_db
    ).stdout.splitlines()
    grid = [line for line in shown if set(line) <= {"#", "."} and line]
    assert len(grid) == 30 and {len(line) for line in grid} == {40}
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert json.loads(tiled.read_text())["width"] == 40

    xml, xsd = tmp_path / "maps.xml", tmp_path / "maps.xsd"
    exported = run("export-xml", "maps", str(xml), "--db", first_db, "--progress")
    assert "exported 6 rows of maps" in exported.stdout
    assert "100%" in exported.stderr and "6/6 [" in exported.stderr  # the progress bar
    assert xsd.is_file()
    second = str(tmp_path / "second.db")
    done = run(
        "import-xml", str(xml), "--xsd", str(xsd), "--table", "maps", "--db", second, "--progress"
    )
    assert "imported 6 rows" in done.stdout and "6rows [" in done.stderr
    for table in ("maps", "maps_caves", "maps_rooms", "maps_corridors"):
        order = ["parent_key", "position"] if table != "maps" else ["id"]
        args = [a for o in order for a in ("-o", o)]
        rows = as_json(table, *args, "--db", second)
        assert as_json(table, *args, "--db", first_db) == rows
        if table != "maps":  # the child rows are counted in the import's report
            assert (f", {len(rows)} rows of {table}" in done.stdout) == bool(rows)
    assert not done.stderr.count("Traceback")
    parquet = tmp_path / "maps.parquet"
    wrote = run("parquet", "maps", str(parquet), "--db", first_db, "--progress")
    assert wrote.stdout.startswith("wrote 6 rows") and "6/6 [" in wrote.stderr
    a, b = Store(first_db), Store(second)
    for left, right in zip(
        a.select(MapRecord, order_by="id"), b.select(MapRecord, order_by="id"), strict=True
    ):
        assert np.array_equal(left.grid, right.grid) and left == _same_grid(right, left)
    a.close()
    b.close()

    parquet = tmp_path / "maps.parquet"
    assert (
        "wrote 4 rows"
        in run("parquet", "maps", str(parquet), "-w", "kind=caves", "--db", first_db).stdout
    )
    import pyarrow.parquet as pq

    assert sorted(pq.read_table(parquet).column("seed").to_pylist()) == [1, 2, 3, 4]


def _same_grid(record: MapRecord, like: MapRecord) -> MapRecord:
    """``record`` with ``like``'s grid object, so == compares everything but array identity."""
    record.grid = like.grid
    return record


def test_query_formats_filters_and_order(catalog_db):
    table = run("query", "maps", "--db", catalog_db, "-o", "-largest_region", "--limit", "2")
    lines = table.stdout.splitlines()
    assert lines[0].split()[:3] == ["id", "kind", "generator"] and len(lines) == 4
    assert "<ndarray 40x30 uint8>" in table.stdout or "<ndarray 30x20 uint8>" in table.stdout
    rows = as_json("maps", "--db", catalog_db, "-w", "width>=35", "-w", "open_ratio>0")
    assert {r["kind"] for r in rows} == {"caves"}
    csv_out = run(
        "query",
        "maps",
        "--db",
        catalog_db,
        "--format",
        "csv",
        "-w",
        "kind=islands",
        "-o",
        "id",
        "--offset",
        "1",
    ).stdout.splitlines()
    assert csv_out[0].startswith("id,kind,generator") and len(csv_out) == 3
    assert as_json("maps", "--db", catalog_db, "-w", "seed=null") == []
    assert len(as_json("maps", "--db", catalog_db, "-w", "seed!=null")) == 6
    quoted = "x' OR '1'='1"
    assert as_json("maps", "--db", catalog_db, "-w", f"kind={quoted}") == []


def test_sudoku_solve_euler96_file(tmp_path):
    path = str(require_data("p096_sudoku.txt"))
    db = str(tmp_path / "puzzles.db")
    out = run("sudoku", "solve", path, "--db", db, "--workers", "1").stdout
    assert "50 puzzles read" in out and "49 stored" in out
    assert "Euler 96 answer: 24702" in out
    rows = as_json("sudoku_puzzles", "--db", db)
    assert len(rows) == 49 and len({r["puzzle"] for r in rows}) == 49
    names = {r["name"] for r in rows}
    assert "Grid 09" in names and "Grid 41" not in names
    assert all(r["solution_count"] == 1 and "0" not in r["solution"] for r in rows)
    assert run("sudoku", "euler96", path).stdout == "24702\n"
    lines = tmp_path / "three.txt"
    lines.write_text("\n".join(r["puzzle"] for r in rows[:3]) + "\n# a comment\n")
    again = run("sudoku", "solve", str(lines), "--db", db).stdout
    assert "(lines format)" in again and "0 stored" in again and "3 skipped" in again


def test_entropy_report_stored_and_queried(tmp_path):
    data = tmp_path / "sample.bin"
    data.write_bytes(bytes(range(256)) * 64)
    db = str(tmp_path / "ent.db")
    out = run("entropy", str(data), "--db", db).stdout
    assert "Entropy = 8.000000 bits per byte." in out
    digest = hashlib.sha256(data.read_bytes()).hexdigest()
    [row] = as_json("entropy_reports", "-w", f"sha256={digest}", "--db", db)
    assert row["size"] == 16384 and row["unique_symbols"] == 256 and row["entropy"] == 8.0
    terse = run("entropy", str(data), "-t", "--db", db).stdout
    assert terse.startswith("0,File-bytes,Entropy")
    again = run("entropy", str(data), "--db", db).stdout
    assert f"sha256 {digest[:16]}..., already stored as entropy_reports id {row['id']}" in again
    assert len(as_json("entropy_reports", "--db", db)) == 1
    data.write_bytes(bytes(range(128)) * 64)  # the same path with other bytes: a new row
    assert "entropy_reports id 2" in run("entropy", str(data), "--db", db).stdout
    assert len(as_json("entropy_reports", "--db", db)) == 2


@pytest.mark.parametrize(
    "options", [[], ["-c"], ["-b"], ["-f", "-c"], ["-t"], ["-b", "-c", "-t"], ["-f", "-t"]]
)
def test_entropy_prints_what_ent_prints_and_stores_nothing_without_db(tmp_path, options):
    from tests.generators.bytes.test_entropy import require_ent

    ent = require_ent()
    data = tmp_path / "mixed.bin"
    data.write_bytes(b"Hello World, ABC abc \xe9\xc9" * 300 + bytes(range(256)) * 7)
    expected = subprocess.run([ent, *options, str(data)], capture_output=True, check=True).stdout
    env = {k: v for k, v in os.environ.items() if k != "ENTITYWORKS_DB"}
    done = subprocess.run(
        [sys.executable, "-m", "entityworks", "entropy", str(data), *options],
        cwd=tmp_path,
        capture_output=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.decode().splitlines(keepends=True)
    if "-t" not in options:
        assert lines[0].startswith("== ") and "entropy_reports" not in lines[0]
        lines = lines[1:-1]  # the heading and the blank line after the report
    assert "".join(lines).encode("latin-1") == expected
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mixed.bin"]


def test_entropy_bit_and_folded_reports_are_not_stored(tmp_path):
    data = tmp_path / "a.txt"
    data.write_text("Some Text")
    db = tmp_path / "e.db"
    refused = run("entropy", str(data), "-b", "--db", str(db), ok=False)
    assert refused.exit_code == 2 and "-b and -f reports are printed, not stored" in refused.output
    assert not db.exists()
    assert "Entropy = " in run("entropy", str(data), "-f", "--db", str(db), "--no-store").stdout
    assert not db.exists()
    assert run("entropy", "-u").stdout == run("entropy", "--help").stdout


def test_schema_ddl_and_migrate(tmp_path, monkeypatch):
    shown = run("schema", "maps").stdout
    assert shown.startswith("maps (MapRecord)") and "child table maps_caves" in shown
    script = run("ddl", "maps", "--dialect", "postgresql").stdout
    assert "CREATE TABLE maps (" in script and "CREATE TABLE maps_caves (" in script
    assert "REFERENCES maps (id) ON DELETE CASCADE" in script
    templates = run("ddl", "sudoku_puzzles", "-d", "sqlite", "--templates").stdout
    assert "-- upsert" in templates and ":puzzle" in templates
    db = str(tmp_path / "m.db")
    assert f"upgraded from empty to {head()}" in run("migrate", "--url", db).stdout
    assert "nothing to do" in run("migrate", "--db", db).stdout
    assert run("schema", "diff", "--db", db).stdout == "no differences\n"

    module = tmp_path / "mygame_models.py"
    module.write_text(
        textwrap.dedent("""
        from dataclasses import dataclass
        from entityworks import table

        @table("levels")
        @dataclass
        class Level:
            id: int | None
            name: str

        @table("levels")
        @dataclass
        class LevelV2:
            id: int | None
            name: str
            theme: str = "stone"
        """)
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    from mygame_models import Level  # type: ignore[import-not-found]

    store = Store(db)
    store.create(Level)
    store.insert_many([Level(None, f"l{i}") for i in range(5)])
    out = run("schema", "diff", "--dataclass", "mygame_models:LevelV2", "--db", db).stdout
    assert out.startswith("add column levels.theme")
    applied = run(
        "schema", "diff", "--dataclass", "mygame_models:LevelV2", "--apply", "--db", db
    ).stdout
    assert "applied 1 operation(s); rows kept" in applied
    rows = as_json("levels", "--db", db)
    assert [r["theme"] for r in rows] == ["stone"] * 5


@pytest.fixture(scope="module")
def bad_files(tmp_path_factory: pytest.TempPathFactory, catalog_db: str) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("bad")
    bad_puzzle = folder / "bad.txt"
    bad_puzzle.write_text("Grid 01\n123\n")
    xml, xsd = folder / "maps.xml", folder / "maps.xsd"
    Store(catalog_db).export_xml(MapRecord, xml, xsd)
    text = xml.read_text().replace("<width>30</width>", "<width>wide</width>", 1)
    tampered = folder / "tampered.xml"
    tampered.write_text(text)
    return {
        "db": catalog_db,
        "puzzle": str(bad_puzzle),
        "xsd": str(xsd),
        "tampered": str(tampered),
        "missing": str(folder / "missing.txt"),
        "nodb": str(folder / "nothing.db"),
        "out": str(folder / "out.xml"),
    }


BAD = [
    (["query", "nope", "--db", "{db}"], "no table 'nope'"),
    (["query", "maps", "-w", "colour=red", "--db", "{db}"], "has no column 'colour'"),
    (["query", "maps", "-w", "width>>3", "--db", "{db}"], "is not a valid int"),
    (["query", "maps", "-w", "width", "--db", "{db}"], "expected COLUMN OP VALUE"),
    (["query", "maps", "-o", "colour", "--db", "{db}"], "has no column 'colour'"),
    (["query", "maps", "--db", "{nodb}"], "no database at"),
    (["query", "maps", "--db", "nosuchdriver://host/db"], "nosuchdriver"),
    (["generate", "caves", "-p", "colour=1", "--db", "{db}"], "has no parameter 'colour'"),
    (
        ["generate", "caves", "-p", "close_cell_prob=300", "--db", "{db}"],
        "close_cell_prob must be <= 100",
    ),
    (["generate", "caves", "-p", "broken", "--db", "{db}"], "is not KEY=VALUE"),
    (["generate", "volcano", "--db", "{db}"], "'volcano' is not one of"),
    (["generate", "caves", "--count", "0", "--db", "{db}"], "--count"),
    (["sudoku", "solve", "{missing}", "--db", "{db}"], "does not exist"),
    (["sudoku", "solve", "{puzzle}", "--db", "{db}"], "expected a row of 9 digits"),
    (["sudoku", "euler96", "{puzzle}"], "Grid 01"),
    (["render", "999", "--ascii", "-", "--db", "{db}"], "no map with id 999"),
    (["render", "1", "--scheme", "getmapimage", "--db", "{db}"], "--scheme sets the PNG"),
    (["export-xml", "nope", "{out}", "--db", "{db}"], "no table 'nope'"),
    (
        ["import-xml", "{tampered}", "--xsd", "{xsd}", "--db", "{nodb}"],
        "row 4 (line 6), column 'width'",
    ),
    (["import-xml", "{missing}", "--xsd", "{xsd}", "--db", "{db}"], "does not exist"),
    (["schema", "diff", "--dataclass", "no_such_module:X", "--db", "{db}"], "cannot import"),
    (["schema", "nope", "--db", "{db}"], "no table 'nope'"),
    (["entropy", "{missing}", "--db", "{db}"], "does not exist"),
    (["ddl", "maps", "--dialect", "oracle"], "'oracle' is not one of"),
    (["ddl", "nope", "--db", "{db}"], "no table 'nope'"),
    (["no-such-command"], "No such command"),
]


@pytest.mark.parametrize("args, message", BAD, ids=[" ".join(a[:2]) for a, _ in BAD])
def test_bad_input_is_one_line_and_status_2(bad_files, args, message):
    result = run(*[a.format(**bad_files) for a in args], ok=False)
    assert result.exit_code == 2, result.stdout + result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert message in lines[0]
    assert "Traceback" not in result.stdout


def test_bad_input_in_a_real_process(bad_files):
    done = run_process("query", "maps", "-w", "colour=red", "--db", bad_files["db"])
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        "error: table 'maps' has no column 'colour'; columns are: id, kind, generator, "
        "parameters, seed, width, height, open_ratio, region_count, largest_region, "
        "created_at, build_success, rooms_asked, rooms_built, connected, generator_version, "
        "grid_sha256, grid"
    ]
    missing = run_process("sudoku", "euler96", bad_files["missing"])
    assert missing.returncode == 2 and len(missing.stderr.splitlines()) == 1
    assert "Traceback" not in missing.stderr


def test_several_processes_fill_one_new_catalog(tmp_path):
    """Three writers start on a database that does not exist yet: the migration and the
    inserts serialise on SQLite's lock and every map arrives."""
    db = str(tmp_path / "shared.db")
    command = [str(BIN)] if BIN.exists() else [sys.executable, "-m", "entityworks"]
    procs = [
        subprocess.Popen(
            command
            + [
                "generate",
                "dungeon",
                "-n",
                "4",
                "--width",
                "40",
                "--height",
                "30",
                "--seed",
                str(10 * i),
                "--workers",
                "1",
                "--db",
                db,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(3)
    ]
    for proc in procs:
        _out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    rows = as_json("maps", "-o", "seed", "--db", db)
    assert [r["seed"] for r in rows] == [0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23]
    assert run("migrate", "--db", db).stdout.endswith("(nothing to do)\n")


def test_query_in_not_in_like_and_count(catalog_db):
    """The word filters and --count agree with SQLite's own answer on the same file."""
    import sqlite3

    with sqlite3.connect(catalog_db) as raw:

        def count(sql: str, *params: object) -> int:
            return int(raw.execute(f"SELECT count(*) FROM maps WHERE {sql}", params).fetchone()[0])

        cases = [
            (["-w", "kind in caves,islands"], count("kind IN (?, ?)", "caves", "islands")),
            (["-w", "kind not in caves"], count("kind NOT IN (?)", "caves")),
            (["-w", "kind LIKE isl%"], count("kind LIKE ?", "isl%")),
            (
                ["-w", "kind like %v%", "-w", "id in 1,2,99"],
                count("kind LIKE ? AND id IN (1, 2, 99)", "%v%"),
            ),
            ([], count("1")),
        ]
    for args, expected in cases:
        assert run("query", "maps", "--db", catalog_db, *args, "--count").stdout == f"{expected}\n"
    ids = run(
        "query",
        "maps",
        "--db",
        catalog_db,
        "-w",
        "kind not in caves",
        "-c",
        "id",
        "--format",
        "csv",
    ).stdout.split()[1:]
    assert len(ids) == cases[1][1] and ids
    bad = run("query", "maps", "--db", catalog_db, "-w", "id in 1,x", ok=False)
    assert bad.exit_code == 2 and "'x' is not a valid int for column 'id'" in bad.output
    both = run("query", "maps", "--db", catalog_db, "--count", "--limit", "1", ok=False)
    assert both.exit_code == 2 and "--count counts every matching row" in both.output


def _complete(line: str, cwd: Path, word: int = -1, **env: str) -> list[str]:
    """What bash completion offers for word ``word`` (default: the last) of ``line``."""
    words = line.split()
    done = subprocess.run(
        [sys.executable, "-m", "entityworks"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={
            **os.environ,
            "_ENTITYWORKS_COMPLETE": "bash_complete",
            "COMP_WORDS": line,
            "COMP_CWORD": str(word % len(words)),
            **env,
        },
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return [item.split(",", 1)[1] for item in done.stdout.splitlines() if item]


def test_table_names_complete_from_the_database_without_touching_it(catalog_db, tmp_path):
    import sqlite3

    with sqlite3.connect(catalog_db) as raw:
        tables = sorted(
            r[0]
            for r in raw.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if not r[0].startswith(("sqlite_", "entityworks_"))
        )
    before = Path(catalog_db).stat().st_mtime_ns
    assert _complete(f"entityworks query --db {catalog_db} ma", tmp_path) == [
        t for t in tables if t.startswith("ma")
    ]
    assert "maps_caves" in _complete(
        f"entityworks export-xml maps_c --db={catalog_db}", tmp_path, word=2
    )
    assert _complete("entityworks parquet s", tmp_path, ENTITYWORKS_DB=catalog_db) == [
        t for t in tables if t.startswith("s")
    ]
    assert _complete("entityworks query m", tmp_path) == []  # no ./entityworks.db: nothing
    assert list(tmp_path.iterdir()) == [] and Path(catalog_db).stat().st_mtime_ns == before


@pytest.mark.parametrize("scheme", ["postgresql+psycopg", "mysql+pymysql"])
def test_table_completion_gives_up_on_a_server_that_never_answers(scheme, tmp_path):
    """A listening socket that accepts (the kernel completes the handshake) and never
    speaks: completion offers nothing after its timeout instead of hanging the shell."""
    import socket
    import time

    from entityworks.cli._stores import COMPLETION_TIMEOUT

    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        port = silent.getsockname()[1]
        start = time.monotonic()
        offered = _complete(f"entityworks query --db {scheme}://u@127.0.0.1:{port}/db m", tmp_path)
        took = time.monotonic() - start
    assert offered == []
    # without the timeout psycopg waits forever and PyMySQL 10 s (its default)
    assert took < COMPLETION_TIMEOUT + 6, took

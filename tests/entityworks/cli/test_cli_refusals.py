"""Hostile and unusual input to the command line (issue 10 items 9, 12 and 14): each case works
or ends with one ``error:`` line and status 2, and a refused command leaves nothing behind.

Streams: ``entropy`` and ``sudoku solve`` read FIFOs and standard input once (the SHA-256 and
the figures describe the same bytes); ``entropy`` stops at ``--max-size``. Damage: reflected
columns that are not identifiers, SQLite files with flipped bytes, ``.npy`` headers claiming
huge shapes. Bounds: render and map sizes, nesting depth. Internal tables are never written.
"""

from __future__ import annotations

import hashlib
import os
import random
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner, Result

from entityworks import Store
from entityworks.catalog import (
    EntropyRecord,
    MapRecord,
    analyse_entropy,
    generate_into,
    open_catalog,
)
from entityworks.cli import cli
from entityworks.registry import ndarray_from_bytes, ndarray_to_bytes
from generators.bytes import entropy

ROOT = Path(__file__).resolve().parents[3]
PUZZLE = "003020600900305001001806400008102900700000008006708200002609500800203009005010300"


def run(*args: str, input: bytes | str | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), input=input)


def refused(result: Result, message: str) -> None:
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert message in lines[0], lines[0]
    assert "Traceback" not in result.stdout + result.stderr


def process(
    *args: str, stdin: bytes | None = None, cwd: Path | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[bytes]:
    script = Path(sys.executable).parent / "entityworks"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "entityworks"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [*command, *args],
        input=stdin,
        capture_output=True,
        cwd=cwd,
        env=env,
        timeout=timeout,
        check=False,
    )


@pytest.fixture(scope="module")
def catalog_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("refusals") / "catalog.db"
    store = open_catalog(path)
    generate_into(store, "dungeon", 3, seed=1, params={"width": 40, "height": 30})
    store.close()
    return path


def writer(fifo: Path, data: bytes) -> threading.Thread:
    """Feed ``data`` into ``fifo`` once, from another thread, then close it."""

    def feed() -> None:
        with open(fifo, "wb") as fh:
            fh.write(data)

    thread = threading.Thread(target=feed, daemon=True)
    thread.start()
    return thread


# -- item 9: entropy and sudoku read each input exactly once ------------------------------


def test_entropy_of_a_fifo_hashes_the_bytes_it_measured(tmp_path):
    data = bytes(np.random.default_rng(4).integers(0, 256, 300_000, dtype=np.uint8))
    fifo = tmp_path / "stream"
    os.mkfifo(fifo)
    feeding = writer(fifo, data)
    done = process("entropy", str(fifo), "--db", str(tmp_path / "e.db"), timeout=60)
    feeding.join(5)
    assert done.returncode == 0, done.stderr
    store = Store(tmp_path / "e.db")
    [row] = store.select(EntropyRecord)
    assert row.sha256 == hashlib.sha256(data).hexdigest() and row.size == len(data)
    assert row.entropy == entropy.report(data).entropy
    store.close()


def test_entropy_and_sudoku_read_standard_input(tmp_path):
    data = b"entityworks reads standard input once\n" * 1000
    db = str(tmp_path / "s.db")
    out = run("entropy", "-", "--db", db, input=data)
    assert out.exit_code == 0, out.stderr
    assert (
        f"== <stdin>: {len(data)} bytes, sha256 {hashlib.sha256(data).hexdigest()[:16]}"
        in out.stdout
    )
    assert f"Entropy = {entropy.report(data).entropy:f}" in out.stdout
    refused(run("entropy", "-", "-", "--db", db, input=data), "only once")
    solved = run("sudoku", "solve", "-", "-j", "1", "--db", db, input=PUZZLE + "\n")
    assert solved.exit_code == 0, solved.stderr
    assert "1 puzzles read from - (lines format): 1 solved" in solved.stdout
    euler = "Grid 01\n" + "\n".join(PUZZLE[i : i + 9] for i in range(0, 81, 9)) + "\n"
    again = run("sudoku", "solve", "-", "-j", "1", "--db", db, input=euler)
    assert "(euler format)" in again.stdout and "1 skipped" in again.stdout
    store = Store(db)
    assert [r.path for r in store.select(EntropyRecord)] == ["<stdin>"]
    store.close()


def test_sudoku_solve_reads_a_fifo_once(tmp_path):
    fifo = tmp_path / "puzzles"
    os.mkfifo(fifo)
    feeding = writer(
        fifo, ("Grid 01\n" + "\n".join(PUZZLE[i : i + 9] for i in range(0, 81, 9)) + "\n").encode()
    )
    done = process(
        "sudoku", "solve", str(fifo), "-j", "1", "--db", str(tmp_path / "p.db"), timeout=60
    )
    feeding.join(5)
    assert done.returncode == 0, done.stderr
    assert b"1 puzzles read" in done.stdout and b"Euler 96 answer: 483" in done.stdout


def test_entropy_of_an_endless_device_stops_at_the_size_limit(tmp_path):
    db = tmp_path / "z.db"
    refused(
        run("entropy", "/dev/zero", "--max-size", "2M", "--db", str(db)),
        "/dev/zero: more than 2,097,152 bytes, the size limit",
    )
    assert not db.exists()  # nothing read in full: nothing created
    default = next(p for p in cli.commands["entropy"].params if p.name == "max_size")
    assert default.type.convert(default.default, None, None) == 1 << 30
    refused(
        run("entropy", "/dev/zero", "--max-size", "lots", "--db", str(db)), "is not a size like"
    )


def test_a_regular_file_over_the_limit_is_refused_before_reading(tmp_path):
    sparse = tmp_path / "sparse.bin"
    with open(sparse, "wb") as fh:
        fh.truncate(3 << 30)  # 3 GiB of holes: refused from its size, nothing read
    refused(
        run("entropy", str(sparse), "--db", str(tmp_path / "x.db")),
        "3,221,225,472 bytes, more than the size limit of 1,073,741,824",
    )
    assert not (tmp_path / "x.db").exists()
    small = tmp_path / "small.bin"
    small.write_bytes(b"abc" * 1000)
    assert (
        run("entropy", str(small), "--max-size", "3000", "--db", str(tmp_path / "x.db")).exit_code
        == 0
    )
    refused(
        run("entropy", str(small), "--max-size", "2999", "--db", str(tmp_path / "x.db")),
        "more than the size limit of 2,999",
    )


class ChangingStream:
    """A non-seekable source that never gives the same bytes twice (like a FIFO refilled)."""

    def __init__(self, size: int) -> None:
        self.left = size
        self.rng = random.Random(7)

    def read(self, n: int = -1) -> bytes:
        n = self.left if n < 0 else min(n, self.left)
        self.left -= n
        return bytes(self.rng.getrandbits(8) for _ in range(n))


def test_analyse_entropy_hashes_exactly_what_it_measures():
    stream = ChangingStream(5000)
    record, report = analyse_entropy(stream, name="changing", max_bytes=None)
    replay = ChangingStream(5000).read()
    assert record.sha256 == hashlib.sha256(replay).hexdigest()
    assert report == entropy.report(replay) and record.size == 5000


# -- item 12: one error line instead of a traceback ----------------------------------------


def test_reflected_columns_that_are_not_identifiers(tmp_path):
    db = tmp_path / "cols.db"
    conn = sqlite3.connect(db)
    conn.execute('CREATE TABLE t (id INTEGER PRIMARY KEY, "my col" TEXT, "class" TEXT)')
    conn.execute("INSERT INTO t VALUES (1, 'a', 'b')")
    conn.commit()
    conn.close()
    out = tmp_path / "out"
    for args in (
        ["query", "t"],
        ["query", "t", "-w", "my col=a"],
        ["schema", "t"],
        ["ddl", "t"],
        ["export-xml", "t", f"{out}.xml"],
        ["parquet", "t", f"{out}.parquet"],
    ):
        refused(run(*args, "--db", str(db)), "column 'my col': not a Python identifier")
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("out")]


@pytest.mark.parametrize("seed", range(12))
def test_a_damaged_sqlite_file_gives_one_line(catalog_db, tmp_path, seed):
    """Flipped bytes anywhere (schema, pages, text, .npy blobs): every command ends with one
    line, status 2 or success, never a traceback."""
    rng = random.Random(seed)
    data = bytearray(catalog_db.read_bytes())
    for _ in range(rng.choice([1, 8, 64, 512])):
        data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    for args in (
        ["query", "maps"],
        ["query", "maps_corridors", "--format", "json"],
        ["render", "1", "--ascii", "-"],
        ["render", "2", "--ascii", "-"],
        ["export-xml", "maps", str(tmp_path / "o.xml")],
        ["generate", "dungeon", "--width", "30", "--height", "20", "-j", "1"],
    ):
        db = tmp_path / "work.db"
        for extra in ("-wal", "-shm"):
            Path(f"{db}{extra}").unlink(missing_ok=True)
        db.write_bytes(data)
        result = run(*args, "--db", str(db))
        assert "Traceback" not in result.stdout + result.stderr
        assert result.exit_code in (0, 2), (args, result.exit_code, result.stderr)
        if result.exit_code == 2:
            assert len(result.stderr.splitlines()) == 1, (args, result.stderr)


def test_known_damage_messages(catalog_db, tmp_path):
    data = bytearray(catalog_db.read_bytes())
    data[:16] = b"not a database!!"
    db = tmp_path / "nodb.db"
    db.write_bytes(data)
    refused(run("query", "maps", "--db", str(db)), "file is not a database")
    db = tmp_path / "text.db"
    db.write_bytes(catalog_db.read_bytes())
    conn = sqlite3.connect(db)
    conn.execute("UPDATE maps SET kind = CAST(X'C3284142' AS TEXT) WHERE id = 1")
    conn.commit()
    conn.close()
    refused(run("query", "maps", "--db", str(db)), "decode")


def test_an_npy_header_claiming_a_huge_shape_is_refused(catalog_db, tmp_path):
    blob = ndarray_to_bytes(np.zeros((30, 40), dtype=np.uint8))
    crafted = blob.replace(b"(30, 40), }" + b" " * 6, b"(900000, 900000)}")
    assert len(crafted) == len(blob)
    with pytest.raises(ValueError, match=r"claims shape \(900000, 900000\)"):
        ndarray_from_bytes(crafted)
    assert np.array_equal(ndarray_from_bytes(blob), np.zeros((30, 40), dtype=np.uint8))
    db = tmp_path / "npy.db"
    db.write_bytes(catalog_db.read_bytes())
    conn = sqlite3.connect(db)
    conn.execute("UPDATE maps SET grid = ? WHERE id = 2", (crafted,))
    conn.commit()
    conn.close()
    for args in (
        ["query", "maps"],
        ["render", "2", "--ascii", "-"],
        ["parquet", "maps", str(tmp_path / "o.parquet")],
    ):
        refused(run(*args, "--db", str(db)), "claims shape (900000, 900000)")
    assert run("render", "1", "--ascii", "-", "--db", str(db)).exit_code == 0


def test_deeply_nested_json_in_where_and_params(catalog_db, tmp_path):
    deep = "[" * 50_000 + "]" * 50_000
    refused(
        run("query", "maps", "-w", f"parameters={deep}", "--db", str(catalog_db)),
        "nested too deeply",
    )
    refused(
        run("generate", "dungeon", "-p", f"rooms={deep}", "--db", str(tmp_path / "n.db")),
        "nested too deeply",
    )
    assert not (tmp_path / "n.db").exists()


def test_sizes_that_would_exhaust_memory_are_refused(catalog_db, tmp_path):
    refused(
        run(
            "render",
            "1",
            "--block",
            "100000000",
            "--png",
            str(tmp_path / "x.png"),
            "--db",
            str(catalog_db),
        ),
        "not in the range 1<=x<=1024",
    )
    refused(
        run(
            "render",
            "1",
            "--block",
            "1000",
            "--png",
            str(tmp_path / "x.png"),
            "--db",
            str(catalog_db),
        ),
        "40000x30000 PNG (1,200,000,000 pixels)",
    )
    db = tmp_path / "big.db"
    for kind in ("caves", "dungeon", "cellular", "islands"):
        refused(
            run("generate", kind, "--width", "1000000", "--height", "1000000", "--db", str(db)),
            "1,000,000,000,000 cells, more than the 16,777,216",
        )
    refused(
        run("generate", "caves", "--width", "200000", "--db", str(db)), "a 200000x100 map"
    )  # the generator's default height counts
    assert list(tmp_path.iterdir()) == []


def test_server_urls_with_a_bad_charset_or_no_driver():
    refused(
        run("query", "maps", "--db", "mysql+pymysql://root@127.0.0.1:1/x?charset=bogus"),
        "unknown MySQL character set 'bogus'",
    )
    refused(run("query", "maps", "--db", "mysql://root@127.0.0.1:1/x"), "use mysql+pymysql://")
    refused(run("query", "maps", "--db", "mariadb://root@127.0.0.1:1/x"), "use mariadb+pymysql://")


def test_internal_tables_are_never_written(catalog_db, tmp_path):
    store = Store(catalog_db)
    from entityworks.migrate import VERSION_TABLE

    version = store.reflect(VERSION_TABLE)
    store.export_xml(version, tmp_path / "v.xml", tmp_path / "v.xsd")
    maps_xml, maps_xsd = tmp_path / "m.xml", tmp_path / "m.xsd"
    store.export_xml(MapRecord, maps_xml, maps_xsd)
    store.close()
    before = catalog_db.read_bytes()
    refused(
        run(
            "import-xml",
            str(tmp_path / "v.xml"),
            "--xsd",
            str(tmp_path / "v.xsd"),
            "--db",
            str(catalog_db),
        ),
        "'entityworks_version' is an internal table",
    )
    for table in ("alembic_version", "sqlite_sequence", "SQLITE_MASTER", "sqlite_stat1"):
        refused(
            run(
                "import-xml",
                str(maps_xml),
                "--xsd",
                str(maps_xsd),
                "--table",
                table,
                "--db",
                str(catalog_db),
            ),
            "is an internal table",
        )
    refused(
        run(
            "import-xml",
            str(tmp_path / "v.xml"),
            "--xsd",
            str(tmp_path / "v.xsd"),
            "--db",
            str(tmp_path / "new.db"),
        ),
        "internal table",
    )
    assert not (tmp_path / "new.db").exists()
    assert catalog_db.read_bytes() == before
    assert (
        run(
            "generate",
            "dungeon",
            "-n",
            "1",
            "-j",
            "1",
            "--width",
            "30",
            "--height",
            "20",
            "--db",
            str(catalog_db),
        ).exit_code
        == 0
    )  # the catalog still migrates


def test_schema_diff_apply_refuses_internal_tables(catalog_db, tmp_path, monkeypatch):
    (tmp_path / "internal_models.py").write_text(
        "from dataclasses import dataclass\nfrom entityworks import table\n\n"
        "@table('entityworks_version')\n@dataclass\nclass Sneaky:\n"
        "    version_num: str\n    extra: int | None = None\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    refused(
        run(
            "schema",
            "diff",
            "--dataclass",
            "internal_models:Sneaky",
            "--apply",
            "--db",
            str(catalog_db),
        ),
        "'entityworks_version' is an internal table",
    )


# -- item 14: a refused command leaves nothing behind ----------------------------------------


@pytest.mark.parametrize(
    "args, message",
    [
        (["generate", "caves", "-p", "close_cell_prob=abc"], "close_cell_prob must be an integer"),
        (["generate", "dungeon", "-p", "rooms=-3"], "rooms"),
        (["generate", "islands", "--width", "1000000", "--height", "1000000"], "cells"),
        (["entropy", "/dev/zero", "--max-size", "1K"], "size limit"),
        (["sudoku", "solve", "{bad}"], "expected a row of 9 digits"),
        (["import-xml", "{xml}", "--table", "nope"], "no database at"),
    ],
    ids=["generate-value", "generate-rooms", "generate-size", "entropy", "sudoku", "import"],
)
def test_a_refused_command_creates_no_database(tmp_path, args, message):
    (tmp_path / "bad.txt").write_text("Grid 01\n123\n")
    (tmp_path / "in.xml").write_text("<DocumentElement/>")
    db = tmp_path / "fresh.db"
    args = [a.format(bad=tmp_path / "bad.txt", xml=tmp_path / "in.xml") for a in args]
    refused(run(*args, "--db", str(db)), message)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.txt", "in.xml"]


def test_a_refused_render_writes_no_file(catalog_db, tmp_path):
    png = tmp_path / "map.png"
    refused(
        run(
            "render",
            "1",
            "--block",
            "1000",
            "--png",
            str(png),
            "--ascii",
            str(tmp_path / "m.txt"),
            "--db",
            str(catalog_db),
        ),
        "use a smaller --block",
    )
    refused(run("render", "99", "--png", str(png), "--db", str(catalog_db)), "no map with id 99")
    assert list(tmp_path.iterdir()) == []


def test_postgresql_system_catalog_names_are_refused_for_tables():
    """An unqualified ``pg_class`` means PostgreSQL's own catalog, not a table we created:
    such names are refused on every backend (found by the lowest-versions CI run)."""
    from entityworks import InvalidNameError, table

    for name in ("pg_class", "PG_stats", "pg_anything"):
        with pytest.raises(InvalidNameError, match="reserved by PostgreSQL"):
            table(name)
    assert table("my_pg_class")  # only the prefix is reserved


@pytest.mark.parametrize(
    ("url", "suggested"),
    [
        ("postgres://u:s3cret@127.0.0.1/test", "postgresql+psycopg://"),
        ("foo://x/y", "postgresql+psycopg://USER@HOST/DB"),
    ],
)
def test_a_url_scheme_sqlalchemy_does_not_know_gets_a_suggestion(tmp_path, url, suggested):
    done = subprocess.run(
        [sys.executable, "-m", "entityworks", "query", "--db", url, "maps"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "is not a database scheme SQLAlchemy knows" in lines[0]
    assert suggested in lines[0] and "s3cret" not in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_the_library_names_the_scheme_to_write_instead_of_postgres():
    from entityworks.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match=r"write postgresql\+psycopg://u:\*\*\*@h/db$"):
        Store("postgres://u:s3cret@h/db")
    with pytest.raises(ConfigurationError, match="no SQLAlchemy dialect for foo://x"):
        Store("foo://x")


@pytest.mark.parametrize("columns", ["id,id", "id,kind,ID", "kind, kind"])
def test_a_column_named_twice_is_refused_before_any_query(catalog_db, columns):
    """JSON cannot hold one key twice: ``-c`` naming a column twice is refused in one line
    in every format, and the same columns named once each are shown."""
    for fmt in ("table", "csv", "json", "jsonl"):
        result = CliRunner().invoke(
            cli, ["query", "maps", "-c", columns, "--format", fmt, "--db", str(catalog_db)]
        )
        assert result.exit_code == 2 and result.stdout == "", (fmt, result.stdout)
        assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    once = CliRunner().invoke(
        cli,
        [
            "query",
            "maps",
            "-c",
            "id,kind",
            "--format",
            "jsonl",
            "--limit",
            "1",
            "--db",
            str(catalog_db),
        ],
    )
    assert once.exit_code == 0 and once.stdout.count('"id"') == 1

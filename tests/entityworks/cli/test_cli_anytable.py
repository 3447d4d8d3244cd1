"""``rows``, ``insert`` and ``sql`` (issue 32, item 3): sqlite-utils' commands for any table on
every backend.

The oracles: sqlite-utils itself (the same file inserted by both, the stored rows compared
through the sqlite3 module; its ``rows`` and ``query -p`` output beside ours), the rows read
back with SQLAlchemy, the databases' own refusals of writes in ``sql`` (tables and counts
unchanged afterwards), and the process's peak memory for a large JSON file.
"""

from __future__ import annotations

import csv
import io
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import uuid
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from click.testing import CliRunner, Result
from hypothesis import given
from hypothesis import strategies as st

from entityworks.cli import cli

PEOPLE = [
    {"id": 1, "name": "alice", "score": 3.5, "visits": 10, "note": "hello, world"},
    {"id": 2, "name": "", "score": None, "visits": 0, "note": 'quote " and\nnewline'},
    {"id": 3, "name": "bob", "score": 1000.25, "visits": -7, "note": "ünïcode ✓"},
    {"id": 4, "name": "carol", "score": -0.5, "visits": None, "note": ""},
]
COLUMNS = list(PEOPLE[0])


def run(*args: str, input: str | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), input=input)


def write_file(folder: Path, fmt: str, records: list[dict[str, Any]] = PEOPLE) -> Path:
    """``records`` as a file of ``fmt`` (CSV and TSV: NULL as an empty cell)."""
    path = folder / f"people.{ {'nl': 'jsonl'}.get(fmt, fmt) }"
    if fmt in ("csv", "tsv"):
        buffer = io.StringIO()
        writer = csv.writer(buffer, delimiter="\t" if fmt == "tsv" else ",", lineterminator="\n")
        writer.writerow(COLUMNS)
        for r in records:
            writer.writerow(["" if r[c] is None else r[c] for c in COLUMNS])
        path.write_text(buffer.getvalue(), encoding="utf-8")
    elif fmt == "nl":
        path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    else:
        path.write_text(json.dumps(records), encoding="utf-8")
    return path


def sqlite_rows(path: Path, table: str) -> list[tuple[Any, ...]]:
    """The stored values and their storage classes, through the sqlite3 module."""
    cols = ", ".join(f'"{c}", typeof("{c}")' for c in COLUMNS)
    with sqlite3.connect(path) as conn:
        return conn.execute(f'SELECT {cols} FROM "{table}" ORDER BY id').fetchall()


def sqlite_utils(*args: str) -> str:
    from sqlite_utils.cli import cli as su_cli

    result = CliRunner().invoke(su_cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def read_back(url: str, table: str) -> list[dict[str, Any]]:
    engine = sa.create_engine(url)
    try:
        with engine.connect() as conn:
            t = sa.Table(table, sa.MetaData(), autoload_with=conn)
            rows = conn.execute(sa.select(t).order_by(t.c.id)).mappings().all()
            return [{c: r[c] for c in COLUMNS} for r in rows]
    finally:
        engine.dispose()


def table_names(url: str) -> set[str]:
    engine = sa.create_engine(url)
    try:
        return set(sa.inspect(engine).get_table_names())
    finally:
        engine.dispose()


def one_error_line(result: Result) -> str:
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.output
    return lines[0]


# -- against sqlite-utils ----------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["csv", "tsv", "nl", "json"])
def test_insert_stores_what_sqlite_utils_stores(tmp_path: Path, fmt: str) -> None:
    source = write_file(tmp_path, fmt)
    theirs, ours = tmp_path / "theirs.db", tmp_path / "ours.db"
    # sqlite-utils 4 detects CSV and TSV types by default (and, from 4.2, stores an empty
    # value of a detected numeric column as NULL, as we do: the floor is 4.2.1)
    flag = [] if fmt == "json" else [f"--{fmt}"]
    sqlite_utils("insert", str(theirs), "people", str(source), *flag, "--pk", "id")
    result = run("insert", "people", str(source), "--pk", "id", "--db", str(ours))
    assert result.exit_code == 0, result.output
    assert sqlite_rows(ours, "people") == sqlite_rows(theirs, "people")


def test_rows_prints_what_sqlite_utils_prints(tmp_path: Path) -> None:
    db = tmp_path / "theirs.db"
    sqlite_utils("insert", str(db), "people", str(write_file(tmp_path, "json")), "--pk", "id")
    theirs = json.loads(sqlite_utils("rows", str(db), "people"))
    result = run("rows", "people", "--format", "json", "--db", str(db))
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == theirs
    nl = run("rows", "people", "--format", "jsonl", "--limit", "2", "--db", str(db))
    assert [json.loads(line) for line in nl.stdout.splitlines()] == theirs[:2]


def test_sql_with_parameters_prints_what_sqlite_utils_query_prints(tmp_path: Path) -> None:
    db = tmp_path / "theirs.db"
    sqlite_utils("insert", str(db), "people", str(write_file(tmp_path, "json")), "--pk", "id")
    query = "SELECT id, name, score FROM people WHERE visits >= :least AND name <> :skip"
    theirs = json.loads(
        sqlite_utils("query", str(db), query, "-p", "least", "0", "-p", "skip", "x")
    )
    result = run("sql", query, "-p", "least=0", "-p", "skip=x", "--format", "json", "--db", str(db))
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == theirs and len(theirs) == 2


def test_a_value_is_bound_never_written_into_the_sql(tmp_path: Path) -> None:
    db = tmp_path / "p.db"
    run("insert", "people", str(write_file(tmp_path, "json")), "--db", str(db))
    evil = "x' OR '1'='1"
    result = run("sql", "SELECT id FROM people WHERE name = :n", "-p", f"n={evil}", "--db", str(db))
    assert result.exit_code == 0 and result.stdout.strip().splitlines()[2:] == []


# -- every backend ---------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["csv", "nl"])
def test_insert_rows_and_sql_on_every_backend(backend_url: str, tmp_path: Path, fmt: str) -> None:
    source = write_file(tmp_path, fmt)
    result = run("insert", "people", str(source), "--pk", "id", "--db", backend_url)
    assert result.exit_code == 0, result.output
    stored = read_back(backend_url, "people")
    assert stored == PEOPLE
    assert [type(r["visits"]) for r in stored] == [int, int, int, type(None)]
    shown = run("rows", "people", "--format", "jsonl", "--db", backend_url)
    assert [json.loads(line) for line in shown.stdout.splitlines()] == PEOPLE
    picked = run(
        "sql",
        "SELECT id, note FROM people WHERE score > :s ORDER BY id",
        "-p",
        "s=0",
        "--format",
        "json",
        "--db",
        backend_url,
    )
    assert picked.exit_code == 0, picked.output
    assert json.loads(picked.stdout) == [
        {"id": r["id"], "note": r["note"]} for r in PEOPLE if (r["score"] or 0) > 0
    ]


def test_a_value_that_does_not_fit_refuses_the_file(backend_url: str, tmp_path: Path) -> None:
    run("insert", "people", str(write_file(tmp_path, "json")), "--pk", "id", "--db", backend_url)
    more = [dict(r, id=r["id"] + 10) for r in PEOPLE]
    more[2]["visits"] = 2.5  # a float in an integer column, the third row
    result = run("insert", "people", str(write_file(tmp_path, "nl", more)), "--db", backend_url)
    line = one_error_line(result)
    assert "row 3" in line and "'visits'" in line
    assert read_back(backend_url, "people") == PEOPLE  # nothing of the file written


def test_a_key_twice_is_refused_naming_its_row(backend_url: str, tmp_path: Path) -> None:
    twice = [*PEOPLE, dict(PEOPLE[0], name="again")]
    before = table_names(backend_url)
    result = run(
        "insert", "people", str(write_file(tmp_path, "json", twice)), "--pk", "id",
        "--db", backend_url,
    )  # fmt: skip
    line = one_error_line(result)
    assert "row 5" in line
    assert "people" not in table_names(backend_url) and "people" not in before


def test_upsert_replaces_rows_by_key(backend_url: str, tmp_path: Path) -> None:
    run("insert", "people", str(write_file(tmp_path, "json")), "--pk", "id", "--db", backend_url)
    changed = [dict(PEOPLE[1], name="renamed"), dict(PEOPLE[0], id=9)]
    source = write_file(tmp_path, "nl", changed)
    result = run("insert", "people", str(source), "--upsert", "--db", backend_url)
    assert result.exit_code == 0, result.output
    expected = {r["id"]: r for r in PEOPLE} | {r["id"]: r for r in changed}
    assert read_back(backend_url, "people") == [expected[k] for k in sorted(expected)]


def test_sql_refuses_every_write(backend_url: str, tmp_path: Path) -> None:
    run("insert", "people", str(write_file(tmp_path, "json")), "--pk", "id", "--db", backend_url)
    before = table_names(backend_url)
    for statement in [
        "DELETE FROM people",
        "UPDATE people SET name = 'x'",
        "INSERT INTO people (id) VALUES (99)",
        "CREATE TABLE made (x INTEGER)",
        "DROP TABLE people",
        "SELECT 1; DELETE FROM people",
        "SELECT 1; COMMIT; DROP TABLE people",
    ]:
        one_error_line(run("sql", statement, "--db", backend_url))
    if backend_url.startswith("postgresql"):  # COPY TO writes in a read-only transaction
        # where the server may write (tmp_path is the test's user's only)
        target = Path(tempfile.gettempdir()) / f"ew-copy-{uuid.uuid4().hex}.txt"
        one_error_line(run("sql", f"COPY (SELECT 1) TO '{target}'", "--db", backend_url))
        one_error_line(run("sql", f"COPY people TO PROGRAM 'touch {target}'", "--db", backend_url))
        assert not target.exists()
    if backend_url.startswith("mysql"):  # a URL asking the driver for multi-statements
        many = sa.make_url(backend_url).update_query_dict({"client_flag": str(1 << 16)})
        shown = many.render_as_string(hide_password=False)
        one_error_line(run("sql", "SELECT 1; COMMIT; DROP TABLE people", "--db", shown))
        one_error_line(
            run(
                "sql",
                "SELECT 1; SET SESSION TRANSACTION READ WRITE; DROP TABLE people",
                "--db",
                shown,
            )
        )
    assert table_names(backend_url) == before
    assert read_back(backend_url, "people") == PEOPLE


def test_sql_does_not_attach_or_create_files(tmp_path: Path) -> None:
    db = tmp_path / "p.db"
    run("insert", "people", str(write_file(tmp_path, "json")), "--db", str(db))
    other = tmp_path / "other.db"
    one_error_line(run("sql", f"ATTACH '{other}' AS o", "--db", str(db)))
    one_error_line(run("sql", f"ATTACH 'file:{other}?mode=rwc' AS o", "--db", str(db)))
    assert not other.exists()
    one_error_line(run("sql", "SELECT 1", "--db", str(tmp_path / "missing.db")))
    assert not (tmp_path / "missing.db").exists()


@pytest.mark.parametrize("fmt", ["table", "csv", "json", "jsonl"])
def test_every_output_format(tmp_path: Path, fmt: str) -> None:
    db = tmp_path / "p.db"
    run("insert", "people", str(write_file(tmp_path, "json")), "--pk", "id", "--db", str(db))
    for args in (["rows", "people"], ["sql", "SELECT * FROM people ORDER BY id"]):
        result = run(*args, "--format", fmt, "--db", str(db))
        assert result.exit_code == 0, result.output
        out = result.stdout
        if fmt == "json":
            assert [r["id"] for r in json.loads(out)] == [1, 2, 3, 4]
        elif fmt == "jsonl":
            assert [json.loads(line)["name"] for line in out.splitlines()] == [
                r["name"] for r in PEOPLE
            ]
        elif fmt == "csv":
            read = list(csv.DictReader(io.StringIO(out)))
            assert [r["visits"] for r in read] == ["10", "0", "-7", ""]
        else:
            assert out.splitlines()[0].split()[:3] == ["id", "name", "score"]
            assert len(out.splitlines()) == 2 + len(PEOPLE)


# -- types ---------------------------------------------------------------------------------


def test_detected_types_are_shown_and_dry_run_writes_nothing(tmp_path: Path) -> None:
    db = tmp_path / "p.db"
    result = run("insert", "people", str(write_file(tmp_path, "csv")), "--dry-run", "--db", str(db))
    assert result.exit_code == 0, result.output
    types = dict(
        line.strip().split(": ", 1) for line in result.stdout.splitlines() if line.startswith("  ")
    )
    assert {k: v.split()[0] for k, v in types.items()} == {
        "id": "int",
        "name": "str",
        "score": "float",
        "visits": "int",
        "note": "str",
    }
    assert not db.exists()


def test_csv_text_that_would_not_come_back_stays_text(tmp_path: Path) -> None:
    source = tmp_path / "zips.csv"
    source.write_text("id,zip\n1,007\n2,12\n", encoding="utf-8")
    db = tmp_path / "z.db"
    assert run("insert", "zips", str(source), "--db", str(db)).exit_code == 0
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT zip, typeof(zip) FROM zips ORDER BY id").fetchall() == [
            ("007", "text"),
            ("12", "text"),
        ]


def test_json_of_two_kinds_in_one_column_is_refused(tmp_path: Path) -> None:
    source = tmp_path / "mixed.jsonl"
    source.write_text('{"a": 1}\n{"a": "x"}\n', encoding="utf-8")
    db = tmp_path / "m.db"
    line = one_error_line(run("insert", "mixed", str(source), "--db", str(db)))
    assert "'a'" in line and "row 2" in line
    assert not db.exists()


def test_types_from_a_dataclass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "people_model.py").write_text(
        textwrap.dedent(
            """
            import datetime as dt
            from decimal import Decimal
            from entityworks import entity, primary_key

            @entity("events")
            class Event:
                id: int = primary_key()
                when: dt.date
                amount: Decimal
            """
        ),
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    source = tmp_path / "events.csv"
    source.write_text("id,when,amount\n1,2024-02-29,10.50\n2,2023-12-31,0.001\n", encoding="utf-8")
    db = tmp_path / "e.db"
    result = run(
        "insert", "events", str(source), "--dataclass", "people_model:Event", "--db", str(db)
    )
    assert result.exit_code == 0, result.output
    import datetime as dt
    from decimal import Decimal

    from entityworks import Store

    sys.path.insert(0, str(tmp_path))
    try:
        from people_model import Event  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(tmp_path))
    store = Store(db)
    try:
        got = sorted(store.select(Event), key=lambda e: e.id)
    finally:
        store.close()
    assert [(e.when, e.amount) for e in got] == [
        (dt.date(2024, 2, 29), Decimal("10.50")),
        (dt.date(2023, 12, 31), Decimal("0.001")),
    ]
    bad = tmp_path / "bad.csv"
    bad.write_text("id,when,amount\n3,2024-02-30,1\n", encoding="utf-8")
    line = one_error_line(
        run("insert", "events", str(bad), "--dataclass", "people_model:Event", "--db", str(db))
    )
    assert "row 1" in line and "'when'" in line


def test_standard_input(tmp_path: Path) -> None:
    db = tmp_path / "p.db"
    text = write_file(tmp_path, "nl").read_text(encoding="utf-8")
    result = run("insert", "people", "-", "--nl", "--db", str(db), input=text)
    assert result.exit_code == 0, result.output
    assert sqlite_rows(db, "people")[0][:2] == (1, "integer")
    one_error_line(run("insert", "people", "-", "--db", str(db), input=text))  # no format


# -- security ----------------------------------------------------------------------------


def test_a_table_named_like_an_option(tmp_path: Path) -> None:
    db = tmp_path / "p.db"
    source = write_file(tmp_path, "json")
    assert run("insert", "--db", str(db), "--", "--help", str(source)).exit_code == 0
    result = run("rows", "--format", "json", "--db", str(db), "--", "--help")
    assert result.exit_code == 0 and len(json.loads(result.stdout)) == len(PEOPLE)
    with sqlite3.connect(db) as conn:
        assert conn.execute('SELECT count(*) FROM "--help"').fetchone() == (len(PEOPLE),)


def test_control_characters_never_reach_the_terminal(tmp_path: Path) -> None:
    db = tmp_path / "p.db"
    evil = "ok\x1b]52;c;aGk=\x07\u202e\x9b2J"
    source = write_file(tmp_path, "json", [{"id": 1, "name": evil}])
    assert run("insert", "people", str(source), "--db", str(db)).exit_code == 0
    for args in (["rows", "people"], ["sql", "SELECT name FROM people"]):
        for fmt in ("table", "csv", "json", "jsonl"):
            out = run(*args, "--format", fmt, "--db", str(db)).stdout
            assert not any(ch in out for ch in "\x1b\x07\u202e\x9b"), (args, fmt)
    back = json.loads(run("rows", "people", "--format", "json", "--db", str(db)).stdout)
    assert back[0]["name"] == evil


def test_a_password_is_never_shown(tmp_path: Path) -> None:
    url = "postgresql+psycopg://someone:s3cr3tpw@127.0.0.1:1/nothing"
    source = write_file(tmp_path, "nl")
    for args in (["sql", "SELECT 1"], ["rows", "people"], ["insert", "people", str(source)]):
        line = one_error_line(run(*args, "--db", url))
        assert "s3cr3tpw" not in line


def test_what_is_no_regular_file_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "p.db"
    one_error_line(run("insert", "t", str(tmp_path), "--csv", "--db", str(db)))
    one_error_line(run("insert", "t", "/dev/zero", "--nl", "--max-size", "1M", "--db", str(db)))
    one_error_line(run("insert", "t", str(tmp_path / "missing.csv"), "--db", str(db)))
    assert not db.exists()


def _peak_kib(path: Path, db: Path) -> int:
    """The peak memory of one ``insert`` of ``path``, in its own process."""
    code = (
        "import resource, subprocess, sys;"
        "subprocess.run([sys.executable, '-m', 'entityworks', 'insert', 't', sys.argv[1],"
        " '--no-progress', '--db', sys.argv[2]], check=True, stdout=subprocess.DEVNULL);"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(path), str(db)],
        capture_output=True,
        text=True,
        check=True,
        env=os.environ,
    )
    return int(done.stdout.strip())


def test_a_large_json_file_is_read_in_bounded_memory(tmp_path: Path) -> None:
    record = {"id": 0, "name": "x" * 60, "score": 1.25, "note": "y" * 60}
    small, large = tmp_path / "small.json", tmp_path / "large.json"
    small.write_text(json.dumps([record]), encoding="utf-8")
    with open(large, "w", encoding="utf-8") as f:
        f.write("[")
        for i in range(200_000):  # about 35 MB
            f.write(("," if i else "") + json.dumps(dict(record, id=i)))
        f.write("]")
    assert large.stat().st_size > 30_000_000
    grown = _peak_kib(large, tmp_path / "a.db") - _peak_kib(small, tmp_path / "b.db")
    assert grown * 1024 < large.stat().st_size / 4, grown
    with sqlite3.connect(tmp_path / "a.db") as conn:
        assert conn.execute("SELECT count(*), max(id) FROM t").fetchone() == (200_000, 199_999)


def test_insert_into_a_table_sqlite_utils_made(tmp_path: Path) -> None:
    """The table's own types decide (no key, no companion columns: the file's rows are
    added as sqlite-utils adds them to its own copy)."""
    first = write_file(tmp_path, "json", PEOPLE[:2])
    later = write_file(tmp_path, "csv", PEOPLE[2:])
    theirs, ours = tmp_path / "theirs.db", tmp_path / "ours.db"
    for db in (theirs, ours):
        sqlite_utils("insert", str(db), "people", str(first))
    sqlite_utils("insert", str(theirs), "people", str(later), "--csv")
    result = run("insert", "people", str(later), "--db", str(ours))
    assert result.exit_code == 0, result.output
    mine, peer = sqlite_rows(ours, "people"), sqlite_rows(theirs, "people")
    assert mine[:3] == peer[:3]
    # the one difference: an empty cell in an INTEGER column is NULL here; sqlite-utils
    # stores the empty text there (no type detection for an existing table)
    assert mine[3][6:8] == (None, "null") and peer[3][6:8] == ("", "text")
    assert mine[3][:6] + mine[3][8:] == peer[3][:6] + peer[3][8:]
    minus_zero = write_file(tmp_path, "nl", [dict(PEOPLE[0], id=7, score=-0.0)])
    line = one_error_line(run("insert", "people", str(minus_zero), "--db", str(ours)))
    assert "row 1" in line and "'score'" in line  # its REAL column cannot keep the sign
    assert len(sqlite_rows(ours, "people")) == len(PEOPLE)


def test_rows_of_a_table_no_dataclass_can_hold(backend_url: str) -> None:
    engine = sa.create_engine(backend_url)
    try:
        with engine.begin() as conn:
            odd = conn.dialect.identifier_preparer.quote("first name")
            conn.execute(sa.text(f"CREATE TABLE odd (id INTEGER PRIMARY KEY, {odd} VARCHAR(20))"))
            conn.execute(sa.text(f"INSERT INTO odd (id, {odd}) VALUES (1, :n)"), {"n": "ann"})
    finally:
        engine.dispose()
    result = run("rows", "odd", "--format", "json", "--db", backend_url)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == [{"id": 1, "first name": "ann"}]


def test_upsert_needs_a_key_and_json_needs_distinct_names(tmp_path: Path) -> None:
    db = tmp_path / "p.db"
    source = write_file(tmp_path, "csv", [{k: v for k, v in r.items()} for r in PEOPLE])
    keyless = tmp_path / "keyless.csv"
    keyless.write_text("a,b\n1,2\n", encoding="utf-8")
    one_error_line(run("insert", "pairs", str(keyless), "--upsert", "--db", str(db)))
    assert not db.exists()
    assert run("insert", "people", str(source), "--db", str(db)).exit_code == 0
    line = one_error_line(
        run("sql", "SELECT id, name AS id FROM people", "--format", "json", "--db", str(db))
    )
    assert "'id'" in line
    table = run("sql", "SELECT id, name AS id FROM people", "--db", str(db))
    assert table.exit_code == 0


def test_a_progress_bar_on_request(tmp_path: Path) -> None:
    db = tmp_path / "p.db"
    source = write_file(tmp_path, "nl")
    result = run("insert", "people", str(source), "--progress", "--db", str(db))
    assert result.exit_code == 0, result.output
    assert f"{len(PEOPLE)}/{len(PEOPLE)}" in result.stderr  # the count the detection read


def test_a_column_the_table_has_not_refuses_the_file(tmp_path: Path) -> None:
    db = tmp_path / "p.db"
    assert run("insert", "people", str(write_file(tmp_path, "csv")), "--db", str(db)).exit_code == 0
    extra = tmp_path / "extra.csv"
    extra.write_text("id,name,colour\n9,zed,red\n", encoding="utf-8")
    line = one_error_line(run("insert", "people", str(extra), "--db", str(db)))
    assert "'colour'" in line
    assert len(sqlite_rows(db, "people")) == len(PEOPLE)


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)


@given(
    objects=st.lists(st.dictionaries(st.text(max_size=5), _JSON_VALUES, max_size=4), max_size=6),
    space=st.sampled_from(["", " ", "\n", " \r\n\t "]),
    chunk=st.integers(min_value=1, max_value=40),
)
def test_the_streamed_json_reader_reads_what_json_loads_reads(
    objects: list[dict[str, Any]], space: str, chunk: int
) -> None:
    """The oracle: the json module reading the whole file at once; the reader sees it a few
    characters at a time (every cut between chunks)."""
    from entityworks.cli import _ingest

    text = "[" + space + ("," + space).join(json.dumps(o) for o in objects) + space + "]"
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "x.json"
        path.write_text(space + text + space, encoding="utf-8")
        old = _ingest._CHUNK
        _ingest._CHUNK = chunk
        try:
            got = [record for _, record in _ingest.records(path, "json")]
        finally:
            _ingest._CHUNK = old
    assert got == json.loads(text)


def test_an_absent_value_is_null_unless_the_column_takes_none(backend_url: str) -> None:
    engine = sa.create_engine(backend_url)
    try:
        with engine.begin() as conn:
            conn.execute(
                sa.text(
                    "CREATE TABLE things (id INTEGER PRIMARY KEY, label VARCHAR(20) NOT NULL, "
                    "size INTEGER)"
                )
            )
    finally:
        engine.dispose()
    folder = Path(tempfile.mkdtemp())
    ok = folder / "ok.jsonl"
    ok.write_text('{"id": 1, "label": "a"}\n{"id": 2, "label": "b", "size": 3}\n', "utf-8")
    result = run("insert", "things", str(ok), "--db", backend_url)
    assert result.exit_code == 0, result.output
    bad = folder / "bad.jsonl"
    bad.write_text('{"id": 3, "label": "c"}\n{"id": 4, "size": 1}\n', "utf-8")
    line = one_error_line(run("insert", "things", str(bad), "--db", backend_url))
    assert "row 2" in line and "'label'" in line
    shown = run("sql", "SELECT id, label, size FROM things ORDER BY id", "--format", "json",
                "--db", backend_url)  # fmt: skip
    assert json.loads(shown.stdout) == [
        {"id": 1, "label": "a", "size": None},
        {"id": 2, "label": "b", "size": 3},
    ]


def test_upsert_by_a_composite_key(tmp_path: Path) -> None:
    db = tmp_path / "k.db"
    first, second = tmp_path / "first.csv", tmp_path / "second.csv"
    first.write_text("a,b,v\n1,x,1\n1,y,2\n", encoding="utf-8")
    second.write_text("a,b,v\n1,x,5\n2,x,6\n", encoding="utf-8")
    made = run("insert", "k", str(first), "--pk", "a", "--pk", "b", "--db", str(db))
    assert made.exit_code == 0, made.output
    assert run("insert", "k", str(second), "--upsert", "--db", str(db)).exit_code == 0
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT a, b, v FROM k ORDER BY a, b").fetchall() == [
            (1, "x", 5),
            (1, "y", 2),
            (2, "x", 6),
        ]

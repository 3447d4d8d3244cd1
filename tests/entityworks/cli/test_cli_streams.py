"""``-`` on the command line (issue 14): standard output gets a document only once it is
complete, standard input and FIFOs are read once and bounded, and refusals stay one line.

Through click's CliRunner, and as real processes joined by real pipes.
"""

from __future__ import annotations

import io
import json
import os
import stat
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner, Result
from PIL import Image

from entityworks import Store
from entityworks._files import input_path, open_output, stdout_output
from entityworks.catalog import MapRecord, generate_into, open_catalog
from entityworks.cli import cli
from entityworks.errors import EntityworksError, InputTooLarge, OutputPathError

ROOT = Path(__file__).resolve().parents[3]
PUZZLE = "003020600900305001001806400008102900700000008006708200002609500800203009005010300"
EULER = "Grid 01\n" + "\n".join(PUZZLE[i : i + 9] for i in range(0, 81, 9)) + "\n"


@dataclass
class Note:
    id: int
    text: str


def run(*args: str, input: bytes | str | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), input=input)


def ok(result: Result) -> Result:
    assert result.exit_code == 0, (result.stdout, result.stderr)
    return result


def refused(result: Result, message: str) -> None:
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert message in lines[0], lines[0]
    assert "Traceback" not in result.stdout + result.stderr


def command() -> list[str]:
    script = Path(sys.executable).parent / "entityworks"
    return [str(script)] if script.exists() else [sys.executable, "-m", "entityworks"]


def env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


@pytest.fixture(scope="module")
def catalog_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("streams") / "catalog.db"
    store = open_catalog(path)
    generate_into(store, "dungeon", 2, seed=1, params={"width": 40, "height": 30})
    store.close()
    return path


@pytest.fixture()
def private_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Temporary files of the command under test go here, so that debris would show."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setenv("TMPDIR", str(folder))
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def maps_of(db: Path) -> list[MapRecord]:
    store = Store(db)
    try:
        return list(store.select(MapRecord, order_by=["id"]))
    finally:
        store.close()


# -- standard output: whole or nothing ---------------------------------------------------


def test_export_xml_to_stdout_round_trips_through_import_from_stdin(
    catalog_db, tmp_path, private_tmp
):
    out = ok(run("export-xml", "maps", "-", "--inline-schema", "--db", str(catalog_db)))
    assert out.stdout_bytes.startswith(b"<?xml") and b"<xs:schema" in out.stdout_bytes
    assert "exported 2 rows of maps to stdout" in out.stderr
    copy = tmp_path / "copy.db"
    done = ok(run("import-xml", "-", "--db", str(copy), input=out.stdout_bytes))
    assert done.stdout.startswith("imported 2 rows from stdin into maps")
    original, back = maps_of(catalog_db), maps_of(copy)
    assert [(m.seed, m.grid.tobytes()) for m in back] == [
        (m.seed, m.grid.tobytes()) for m in original
    ]
    assert list(private_tmp.iterdir()) == []  # the stdin copy is gone
    assert not (Path.cwd() / "-").exists()


def test_a_dataset_of_several_tables_goes_through_a_pipe(catalog_db, tmp_path, private_tmp):
    source = tmp_path / "source.db"
    source.write_bytes(catalog_db.read_bytes())
    ok(run("sudoku", "solve", "-", "-j", "1", "--db", str(source), input=PUZZLE + "\n"))
    ok(run("entropy", "-", "--db", str(source), input=bytes(range(256)) * 40))
    out = ok(
        run(
            "export-xml",
            "sudoku_puzzles",
            "entropy_reports",
            "-",
            "--inline-schema",
            "--db",
            str(source),
        )
    )
    assert "exported 1 rows of sudoku_puzzles, 1 rows of entropy_reports to stdout" in out.stderr
    copy = tmp_path / "copy.db"
    done = ok(run("import-xml", "-", "--db", str(copy), input=out.stdout_bytes))
    assert done.stdout.startswith(
        "imported 1 rows of sudoku_puzzles, 1 rows of entropy_reports from stdin"
    )
    for table in ("sudoku_puzzles", "entropy_reports"):
        rows = [
            json.loads(ok(run("query", table, "--format", "json", "--db", str(db))).stdout)
            for db in (source, copy)
        ]
        assert rows[0] == rows[1] and len(rows[0]) == 1, table
    # maps own child rows (rooms, corridors...), which a DataSet cannot carry: refused, and
    # nothing reaches stdout
    gone = run("export-xml", "maps", "sudoku_puzzles", "-", "--db", str(source))
    refused(gone, "'maps' has child tables")
    assert gone.stdout_bytes == b""
    refused(
        run(
            "export-xml",
            "maps",
            "sudoku_puzzles",
            "-",
            "-w",
            "id=1",
            "--db",
            str(tmp_path / "none.db"),
        ),
        "--where and --order-by apply to one table",
    )
    assert not (tmp_path / "none.db").exists() and list(private_tmp.iterdir()) == []


def test_import_xml_takes_the_xsd_from_stdin(catalog_db, tmp_path, private_tmp):
    xml = tmp_path / "maps.xml"
    ok(run("export-xml", "maps", str(xml), "--db", str(catalog_db)))
    xsd = xml.with_suffix(".xsd").read_bytes()
    done = ok(run("import-xml", str(xml), "--xsd", "-", "--db", str(tmp_path / "c.db"), input=xsd))
    assert "imported 2 rows from" in done.stdout
    refused(
        run("import-xml", "-", "--xsd", "-", "--db", str(tmp_path / "d.db"), input=xsd),
        "can be read only once",
    )
    assert not (tmp_path / "d.db").exists() and list(private_tmp.iterdir()) == []


def test_a_refused_export_to_stdout_prints_nothing(tmp_path):
    db = tmp_path / "notes.db"
    store = Store(db)
    store.create(Note)
    store.insert_many([Note(i, "fine " * 40) for i in range(3000)] + [Note(3000, "a\x00b")])
    store.close()
    for args in (["export-xml", "note", "-"], ["export-xml", "note", "-", "--inline-schema"]):
        result = run(*args, "--db", str(db))
        refused(result, "row 3000, column 'text'")
        assert result.stdout_bytes == b""  # not the 3000 good rows before the bad one
    refused(run("export-xml", "note", "-", "--xsd", "-", "--db", str(db)), "use --inline-schema")


def test_parquet_and_png_to_stdout(catalog_db, tmp_path):
    out = ok(run("parquet", "maps", "-", "--db", str(catalog_db)))
    table = pq.read_table(io.BytesIO(out.stdout_bytes))
    assert table.num_rows == 2 and table.column("seed").to_pylist() == [1, 2]
    png = ok(run("render", "1", "--png", "-", "--block", "2", "--db", str(catalog_db)))
    assert Image.open(io.BytesIO(png.stdout_bytes)).size == (80, 60)
    assert "map 1 (dungeon 40x30) -> stdout" in png.stderr
    ok(
        run(
            "render", "1", "--png", str(tmp_path / "m.png"), "--block", "2", "--db", str(catalog_db)
        )
    )
    assert (tmp_path / "m.png").read_bytes() == png.stdout_bytes
    refused(
        run("render", "1", "--png", "-", "--ascii", "-", "--db", str(catalog_db)),
        "only one of --png and --ascii",
    )
    refused(run("render", "1", "--tiled", "-", "--db", str(catalog_db)), "needs a file path")


def test_render_files_go_through_the_files_module(catalog_db, tmp_path):
    """--ascii and --tiled files appear whole, and a symlink or FIFO target is refused."""
    link = tmp_path / "link.txt"
    link.symlink_to(tmp_path / "elsewhere.txt")
    refused(run("render", "1", "--ascii", str(link), "--db", str(catalog_db)), "symbolic link")
    assert not (tmp_path / "elsewhere.txt").exists()
    os.mkfifo(tmp_path / "t_tiles.png")
    refused(
        run("render", "1", "--tiled", str(tmp_path / "t.json"), "--db", str(catalog_db)), "FIFO"
    )
    assert not (tmp_path / "t.json").exists()
    done = ok(
        run(
            "render",
            "1",
            "--ascii",
            str(tmp_path / "a.txt"),
            "--tiled",
            str(tmp_path / "u.json"),
            "--db",
            str(catalog_db),
        )
    )
    text = (tmp_path / "a.txt").read_text()
    assert len(text.splitlines()) == 30 and set(text) <= set("#.<>*\n")
    assert Image.open(tmp_path / "u_tiles.png").size == (32, 16)
    assert "map 1 -> " in done.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "a.txt",
        "link.txt",
        "t_tiles.png",
        "u.json",
        "u_tiles.png",
    ]


# -- standard input: read once, bounded, nothing left behind -----------------------------


def test_stdin_over_max_size_is_refused_and_leaves_nothing(catalog_db, tmp_path, private_tmp):
    out = ok(run("export-xml", "maps", "-", "--inline-schema", "--db", str(catalog_db)))
    size = len(out.stdout_bytes)
    refused(
        run(
            "import-xml",
            "-",
            "--max-size",
            str(size - 1),
            "--db",
            str(tmp_path / "x.db"),
            input=out.stdout_bytes,
        ),
        f"<stdin>: more than {size - 1:,} bytes",
    )
    assert not (tmp_path / "x.db").exists() and list(private_tmp.iterdir()) == []
    ok(
        run(
            "import-xml",
            "-",
            "--max-size",
            str(size),
            "--db",
            str(tmp_path / "x.db"),
            input=out.stdout_bytes,
        )
    )
    xml = tmp_path / "m.xml"
    xml.write_bytes(out.stdout_bytes)
    refused(
        run("import-xml", str(xml), "--max-size", "1K", "--db", str(tmp_path / "y.db")),
        "more than the size limit of 1,024",
    )


def test_broken_stdin_names_stdin(catalog_db, tmp_path, private_tmp):
    ok(run("export-xml", "maps", str(tmp_path / "m.xml"), "--db", str(catalog_db)))
    refused(
        run("import-xml", "-", "--db", str(tmp_path / "b.db"), input=b"<rows><row>"),
        "no inline schema",
    )
    refused(
        run(
            "import-xml",
            "-",
            "--xsd",
            str(tmp_path / "m.xsd"),
            "--db",
            str(tmp_path / "b.db"),
            input=b"<DocumentElement><maps><id>1",
        ),
        "<stdin>",
    )
    refused(run("codegen", "-", input=b"not xml"), "XSD '<stdin>' is not well-formed")
    assert not (tmp_path / "b.db").exists() and list(private_tmp.iterdir()) == []


def test_codegen_and_euler96_read_stdin(catalog_db, tmp_path):
    xml = tmp_path / "maps.xml"
    ok(run("export-xml", "maps", str(xml), "--db", str(catalog_db)))
    xsd = xml.with_suffix(".xsd")
    from_stdin = ok(run("codegen", "-", input=xsd.read_bytes())).stdout
    assert from_stdin == ok(run("codegen", str(xsd))).stdout
    assert "@entity(" in from_stdin and "class Maps" in from_stdin
    assert ok(run("sudoku", "euler96", "-", "-j", "1", input=EULER)).stdout == "483\n"
    refused(run("sudoku", "euler96", "-", "-j", "1", input="Grid 01\n"), "<stdin>: Grid 01")


def test_import_xml_reads_a_fifo_once(catalog_db, tmp_path):
    xml = tmp_path / "maps.xml"
    ok(run("export-xml", "maps", str(xml), "--inline-schema", "--db", str(catalog_db)))
    fifo = tmp_path / "feed"
    os.mkfifo(fifo)
    data = xml.read_bytes()

    def feed() -> None:
        with open(fifo, "wb") as fh:
            fh.write(data)

    thread = threading.Thread(target=feed, daemon=True)
    thread.start()
    done = subprocess.run(
        [*command(), "import-xml", str(fifo), "--db", str(tmp_path / "f.db")],
        capture_output=True,
        text=True,
        env=env(),
        timeout=120,
    )
    thread.join(5)
    assert done.returncode == 0, done.stderr
    assert f"imported 2 rows from {fifo} into maps" in done.stdout
    assert len(maps_of(tmp_path / "f.db")) == 2


# -- real processes and pipes ------------------------------------------------------------


def test_a_real_pipe_from_export_to_import(catalog_db, tmp_path):
    copy = tmp_path / "piped.db"
    export = subprocess.Popen(
        [*command(), "export-xml", "maps", "-", "--inline-schema", "--db", str(catalog_db)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env(),
    )
    imported = subprocess.run(
        [*command(), "import-xml", "-", "--db", str(copy)],
        stdin=export.stdout,
        capture_output=True,
        text=True,
        env=env(),
        timeout=120,
    )
    export.stdout.close()  # type: ignore[union-attr]
    assert export.wait(timeout=120) == 0
    assert export.stderr.read() == b"exported 2 rows of maps to stdout\n"  # type: ignore[union-attr]
    assert imported.returncode == 0, imported.stderr
    assert [m.seed for m in maps_of(copy)] == [1, 2]


def test_a_full_stdout_is_one_error_line(catalog_db):
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    for args in (["export-xml", "maps", "-"], ["parquet", "maps", "-"]):
        with open("/dev/full", "wb") as full:
            done = subprocess.run(
                [*command(), *args, "--db", str(catalog_db)],
                stdout=full,
                stderr=subprocess.PIPE,
                text=True,
                env=env(),
                timeout=120,
            )
        assert done.returncode == 2
        assert done.stderr == ("error: cannot write to standard output: No space left on device\n")


def test_a_reader_that_leaves_early_ends_the_export_quietly(catalog_db):
    done = subprocess.run(
        f"{' '.join(command())} export-xml maps - --db {catalog_db} | head -c 10",
        shell=True,
        capture_output=True,
        env=env(),
        timeout=120,
    )
    assert done.stdout == b"<?xml vers"
    assert b"Traceback" not in done.stderr


# -- the files module itself -------------------------------------------------------------


def test_stdout_output_writes_only_on_success_and_spills_to_disk(monkeypatch):
    import entityworks._files as files

    monkeypatch.setattr(files, "STDOUT_MEMORY", 1000)
    sink = io.BytesIO()
    with pytest.raises(RuntimeError):
        with stdout_output(sink) as f:
            f.write(b"x" * 5000)
            raise RuntimeError("refused half-way")
    assert sink.getvalue() == b""
    with stdout_output(sink) as f:
        f.write(b"y" * 5000)
        assert f._rolled  # type: ignore[attr-defined] - past STDOUT_MEMORY: on disk
    assert sink.getvalue() == b"y" * 5000


def test_open_output_sends_dash_to_stdout_and_files_through_atomic_output(
    tmp_path, monkeypatch, capfdbinary
):
    with open_output(tmp_path / "f.bin") as f:
        f.write(b"file")
    assert (tmp_path / "f.bin").read_bytes() == b"file"
    monkeypatch.chdir(tmp_path)
    with open_output("-") as f:
        f.write(b"stream")
    assert capfdbinary.readouterr().out == b"stream"
    assert not (tmp_path / "-").exists()
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(OutputPathError, match="FIFO"):
        with open_output(tmp_path / "fifo"):
            pass


def test_input_path(tmp_path, private_tmp):
    regular = tmp_path / "r.txt"
    regular.write_bytes(b"12345")
    with input_path(regular, max_bytes=5) as path:
        assert path == regular
    with pytest.raises(InputTooLarge, match="5 bytes, more than the size limit of 4"):
        with input_path(regular, max_bytes=4):
            pass
    with input_path("-", max_bytes=5, stdin=io.BytesIO(b"abcde")) as path:
        assert path.name == "<stdin>" and path.read_bytes() == b"abcde"
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    with pytest.raises(InputTooLarge, match="<stdin>: more than 4 bytes"):
        with input_path("-", max_bytes=4, stdin=io.BytesIO(b"abcde")):
            pass
    with input_path("-", max_bytes=None, stdin=io.BytesIO(b"z" * (3 << 20))) as path:
        assert path.stat().st_size == 3 << 20
    with pytest.raises(EntityworksError, match="is a directory"):
        with input_path(tmp_path, max_bytes=None):
            pass
    assert list(private_tmp.iterdir()) == []

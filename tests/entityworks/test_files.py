"""Exporters write regular files only, whole or not at all (issue 10, item 10).

Every writer (``write_xml``, ``write_xsd``, ``Store.export_xml``, ``write_parquet`` and the
``export-xml`` / ``parquet`` commands) must refuse a FIFO, a symbolic link, a device or a
directory at the output path, leave it exactly as it was, and leave no temporary file.
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from entityworks import OutputPathError, Store, ValueEncodingError, read_xml, write_parquet
from entityworks._files import atomic_output, check_output_path
from entityworks.cli import cli
from entityworks.xml.table import write_xml
from entityworks.xml.xsd import write_xsd


@dataclass
class Row:
    id: int
    name: str | None


ROWS = [Row(1, "a"), Row(2, None), Row(3, "c")]


def make_fifo(path: Path) -> None:
    os.mkfifo(path)


def make_symlink_to_file(path: Path) -> None:
    (path.parent / "real.txt").write_text("the link's target")
    path.symlink_to(path.parent / "real.txt")


def make_symlink_to_null(path: Path) -> None:
    path.symlink_to("/dev/null")


def make_dangling_symlink(path: Path) -> None:
    path.symlink_to(path.parent / "nowhere.xml")


def make_directory(path: Path) -> None:
    path.mkdir()
    (path / "inside.txt").write_text("kept")


def make_char_device(path: Path) -> None:
    """A character device node like /dev/null (needs CAP_MKNOD; skips without it)."""
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except (PermissionError, OSError) as exc:
        pytest.skip(f"cannot create a device node here: {exc}")


KINDS: dict[str, tuple[Callable[[Path], None], str]] = {
    "fifo": (make_fifo, "FIFO"),
    "symlink to a file": (make_symlink_to_file, "symbolic link"),
    "symlink to /dev/null": (make_symlink_to_null, "symbolic link"),
    "dangling symlink": (make_dangling_symlink, "symbolic link"),
    "directory": (make_directory, "directory"),
    "char device": (make_char_device, "character device"),
}


def snapshot(directory: Path) -> dict[str, tuple[int, str | None]]:
    """Every entry of ``directory``: its file type and (for links) target, for comparison."""
    out = {}
    for entry in sorted(directory.iterdir()):
        mode = os.lstat(entry).st_mode
        target = os.readlink(entry) if stat.S_ISLNK(mode) else None
        out[entry.name] = (stat.S_IFMT(mode), target)
    return out


@pytest.fixture(params=sorted(KINDS))
def hostile(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """An output path holding something that is not a regular file."""
    make, word = KINDS[request.param]
    path = tmp_path / "out" / "target.xml"
    path.parent.mkdir()
    make(path)
    yield path, word


def refused(path: Path, word: str, attempt: Callable[[], object]) -> None:
    before = snapshot(path.parent)
    # a FIFO opened for writing would block this thread forever: fail instead of hanging
    done: list[BaseException | None] = []

    def run() -> None:
        try:
            attempt()
            done.append(None)
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            done.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(60)
    if worker.is_alive():
        with open(path, "rb"):  # unblock the writer, then fail
            pass
        pytest.fail(f"writing to a {word} blocked")
    error = done[0]
    assert isinstance(error, OutputPathError), repr(error)
    assert word in str(error) and str(path) in str(error)
    assert snapshot(path.parent) == before  # untouched, and no temporary file left


def test_write_xml_refuses(hostile: tuple[Path, str]) -> None:
    path, word = hostile
    refused(path, word, lambda: write_xml(Row, ROWS, path))


def test_write_xml_refuses_a_bad_xsd_path_before_writing_the_xml(hostile: tuple[Path, str]) -> None:
    xsd, word = hostile
    xml = xsd.parent / "data.xml"
    refused(xsd, word, lambda: write_xml(Row, ROWS, xml, xsd))
    assert not xml.exists()


def test_write_xsd_refuses(hostile: tuple[Path, str]) -> None:
    path, word = hostile
    refused(path, word, lambda: write_xsd(Row, path))


def test_write_parquet_refuses(hostile: tuple[Path, str]) -> None:
    path, word = hostile
    refused(path, word, lambda: write_parquet(Row, ROWS, path))


def test_store_export_xml_refuses(hostile: tuple[Path, str], tmp_path: Path) -> None:
    path, word = hostile
    store = Store(tmp_path / "db.sqlite")
    store.create(Row)
    store.insert_many(ROWS)
    refused(path, word, lambda: store.export_xml(Row, path))
    refused(path, word, lambda: store.export_xml(Row, tmp_path / "fine.xml", path))
    assert not (tmp_path / "fine.xml").exists()


@pytest.mark.parametrize("command", ["export-xml", "parquet"])
def test_the_commands_refuse_with_one_error_line(
    hostile: tuple[Path, str], tmp_path: Path, command: str
) -> None:
    path, word = hostile
    db = tmp_path / "db.sqlite"
    store = Store(db)
    store.create(Row)
    store.insert_many(ROWS)
    store.close()
    before = snapshot(path.parent)
    args = [command, "row", str(path), "--db", str(db)]
    if command == "export-xml":
        args += ["--xsd", str(tmp_path / "row.xsd")]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert word in lines[0] or "directory" in lines[0]
    assert snapshot(path.parent) == before
    assert not (tmp_path / "row.xsd").exists()


def test_a_regular_file_is_replaced_whole_and_keeps_its_permissions(tmp_path: Path) -> None:
    target = tmp_path / "rows.xml"
    target.write_text("old")
    target.chmod(0o640)
    write_xml(Row, ROWS, target, tmp_path / "rows.xsd")
    assert read_xml(Row, target, tmp_path / "rows.xsd") == ROWS
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rows.xml", "rows.xsd"]


def test_a_new_file_gets_the_umask_permissions(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        write_xml(Row, ROWS, tmp_path / "new.xml")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "new.xml").stat().st_mode) == 0o640


def test_a_failed_export_keeps_both_old_files(tmp_path: Path) -> None:
    xml, xsd = tmp_path / "rows.xml", tmp_path / "rows.xsd"
    xml.write_text("old xml")
    xsd.write_text("old xsd")
    with pytest.raises(ValueEncodingError):
        write_xml(Row, [*ROWS, Row(4, "\x00")], xml, xsd)
    assert (xml.read_text(), xsd.read_text()) == ("old xml", "old xsd")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rows.xml", "rows.xsd"]


def test_atomic_output_checks_the_target_again_before_the_rename(tmp_path: Path) -> None:
    target = tmp_path / "late.bin"
    with pytest.raises(OutputPathError, match="FIFO"):
        with atomic_output(target) as f:
            f.write(b"data")
            os.mkfifo(target)  # appears while we write
    assert stat.S_ISFIFO(os.lstat(target).st_mode)
    assert [p.name for p in tmp_path.iterdir()] == ["late.bin"]


def test_a_missing_directory_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(OutputPathError, match="does not exist"):
        check_output_path(tmp_path / "no" / "such" / "file.xml")


def test_dash_streams_to_stdout(tmp_path: Path) -> None:
    db = tmp_path / "db.sqlite"
    store = Store(db)
    store.create(Row)
    store.insert_many(ROWS)
    store.close()
    result = CliRunner().invoke(
        cli, ["export-xml", "row", "-", "--db", str(db)], catch_exceptions=False
    )
    assert result.exit_code == 0, result.stderr
    (tmp_path / "piped.xml").write_bytes(result.stdout_bytes)
    write_xsd(Row, tmp_path / "row.xsd")
    assert read_xml(Row, tmp_path / "piped.xml", tmp_path / "row.xsd") == ROWS
    assert "exported 3 rows of row to stdout" in result.stderr
    assert not list(tmp_path.glob("*.xsd.*")) and not (tmp_path / "-").exists()

    result = CliRunner().invoke(
        cli, ["parquet", "row", "-", "--db", str(db)], catch_exceptions=False
    )
    assert result.exit_code == 0, result.stderr
    (tmp_path / "piped.parquet").write_bytes(result.stdout_bytes)
    assert pq.read_table(tmp_path / "piped.parquet").column("id").to_pylist() == [1, 2, 3]

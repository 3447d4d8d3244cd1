"""Imports into a new SQLite file (issue 29, item 10): a dangling symbolic link at the
database's path is refused and nothing appears where it points; the next import removes only
the ``.importing`` files it can prove are stale ones of its own (owner record of this user,
host and file, process gone, lock free), and leaves every other file as it was.

Each case goes through the doors that create a database from an import: ``Store.import_xml``,
``Store.import_dataset`` and the ``import-xml`` command (a plain table, a catalog table and a
DataSet).
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from entityworks import OutputPathError, Store
from entityworks.cli import cli
from entityworks.xml.table import write_xml

ROOT = Path(__file__).resolve().parents[4]


@dataclass
class Token:
    id: int
    label: str


@dataclass
class Item:
    id: int
    name: str


@dataclass
class Basket:
    id: int
    items: list[Item]


def documents(folder: Path) -> dict[str, tuple[Path, Path]]:
    """XML and XSD for a plain table, a catalog table and a two-table DataSet."""
    import datetime as dt

    from entityworks.catalog import SudokuPuzzle

    tokens = (folder / "tokens.xml", folder / "tokens.xsd")
    write_xml(Token, [Token(1, "one"), Token(2, "two")], *tokens)
    puzzles = (folder / "puzzles.xml", folder / "puzzles.xsd")
    write_xml(
        SudokuPuzzle,
        [SudokuPuzzle(1, "t", "p1", "0" * 81, None, 0, 0, None, None, dt.datetime(2024, 1, 1))],
        *puzzles,
    )
    baskets = (folder / "baskets.xml", folder / "baskets.xsd")
    write_xml(Basket, [Basket(1, [Item(1, "apple"), Item(2, "pear")])], *baskets)
    return {"token": tokens, "catalog": puzzles, "children": baskets}


def cli_import(xml: Path, xsd: Path, db: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["import-xml", str(xml), "--xsd", str(xsd), "--db", db])
    return result.exit_code, result.stdout, result.stderr


# -- a dangling symbolic link at --db ---------------------------------------------------------


@pytest.mark.parametrize("case", ["token", "catalog", "children"])
@pytest.mark.parametrize("form", ["path", "url"])
def test_the_command_refuses_a_dangling_link_and_creates_nothing_where_it_points(
    tmp_path: Path, case: str, form: str
) -> None:
    docs = documents(tmp_path)
    work, outside = tmp_path / "work", tmp_path / "outside"
    work.mkdir()
    outside.mkdir()
    link = work / "levels.db"
    link.symlink_to(outside / "planted.db")
    db = str(link) if form == "path" else f"sqlite:///{link}"
    status, out, err = cli_import(*docs[case], db)
    assert status == 2, (out, err)
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err
    assert "symbolic link" in err and str(outside / "planted.db") in err
    assert list(outside.iterdir()) == []  # nothing at the target
    assert [p.name for p in work.iterdir()] == ["levels.db"] and link.is_symlink()
    assert os.readlink(link) == str(outside / "planted.db")


@pytest.mark.parametrize("door", ["import_xml", "import_dataset"])
def test_the_api_refuses_a_dangling_link_and_creates_nothing_where_it_points(
    tmp_path: Path, door: str
) -> None:
    xml, xsd = documents(tmp_path)["children"]
    outside = tmp_path / "outside"
    outside.mkdir()
    link = tmp_path / "new.db"
    link.symlink_to(Path("outside") / "planted.db")  # a relative link
    with Store(link) as store, pytest.raises(OutputPathError, match="symbolic link"):
        if door == "import_xml":
            store.import_xml(Basket, xml, xsd)
        else:
            store.import_dataset(xml, xsd)
    assert list(outside.iterdir()) == []
    assert link.is_symlink() and not link.exists()


def test_a_link_to_an_existing_database_is_still_imported_into(tmp_path: Path) -> None:
    xml, xsd = documents(tmp_path)["token"]
    real = tmp_path / "real.db"
    with Store(real) as store:
        store.create(Token)
    link = tmp_path / "link.db"
    link.symlink_to(real)
    status, out, err = cli_import(xml, xsd, str(link))
    assert status == 0, err
    with sqlite3.connect(real) as conn:  # read by sqlite3 itself, not by us
        assert conn.execute("SELECT id, label FROM token ORDER BY id").fetchall() == [
            (1, "one"),
            (2, "two"),
        ]


# -- left-over .importing files -----------------------------------------------------------------

STALE = """
import os, sqlite3, sys
from pathlib import Path
from entityworks.sql.exchange._new_file import _private_file_beside

private, held = _private_file_beside(Path(sys.argv[1]))
with sqlite3.connect(private) as conn:  # what an import had written when it was killed
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE TABLE half (x)")
    conn.execute("INSERT INTO half VALUES (1)")
print(private)
os._exit(0)  # like SIGKILL: no clean-up runs
"""


def stale_import(target: Path) -> Path:
    """The private file of an import into ``target`` whose process died (its pid is gone)."""
    done = subprocess.run(
        [sys.executable, "-c", STALE, str(target)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=True,
    )
    private = Path(done.stdout.strip())
    assert private.is_file() and Path(f"{private}.owner").is_file()
    return private


def leftovers(folder: Path, name: str) -> set[str]:
    return {p.name for p in folder.iterdir() if p.name.startswith(f".{name}.")}


def import_through(door: str, tmp_path: Path, target: Path) -> None:
    docs = documents(tmp_path / "docs") if (tmp_path / "docs").is_dir() else None
    if docs is None:
        (tmp_path / "docs").mkdir()
        docs = documents(tmp_path / "docs")
    if door == "api":
        with Store(target) as store:
            assert store.import_xml(Token, *docs["token"]) == 2
    elif door == "dataset":
        with Store(target) as store:
            assert store.import_dataset(*docs["children"]) == {"basket": 1, "basket_items": 2}
    else:
        status, out, err = cli_import(*docs["token" if door == "cli" else "catalog"], str(target))
        assert status == 0, err
        assert out.startswith("imported ")
    assert target.is_file()


DOORS = ["api", "dataset", "cli", "catalog"]


@pytest.mark.parametrize("door", DOORS)
def test_a_stale_file_of_ours_is_removed(tmp_path: Path, door: str) -> None:
    target = tmp_path / "new.db"
    private = stale_import(target)
    assert leftovers(tmp_path, "new.db") >= {private.name, f"{private.name}.owner"}
    import_through(door, tmp_path, target)
    assert leftovers(tmp_path, "new.db") == set()


def plant(folder: Path, name: str = "new.db", token: str = "0123456789abcdef") -> Path:
    """A file with the name of an import's private file that no import of ours made."""
    planted = folder / f".{name}.{token}.importing"
    with sqlite3.connect(planted) as conn:
        conn.execute("CREATE TABLE precious (x)")
        conn.execute("INSERT INTO precious VALUES ('keep me')")
    return planted


def kept(planted: Path) -> bool:
    with sqlite3.connect(f"{planted.resolve().as_uri()}?mode=ro", uri=True) as conn:
        return conn.execute("SELECT x FROM precious").fetchall() == [("keep me",)]


def record_for(planted: Path, **changes: object) -> dict[str, object]:
    """An owner record like an import writes for ``planted``, with ``changes``."""
    from entityworks.sql.exchange import _new_file as new_file

    info = planted.stat()
    token = planted.name.split(".")[-2]
    record: dict[str, object] = {
        "entityworks": "import",
        "token": token,
        "uid": os.geteuid(),
        "host": os.uname().nodename,
        "boot": new_file._boot_id(),
        "pid": os.getpid(),
        "started": new_file._started(os.getpid()),
        "dev": info.st_dev,
        "ino": info.st_ino,
    }
    record.update(changes)
    return record


@pytest.mark.parametrize("door", DOORS)
def test_a_planted_file_without_an_owner_record_survives(tmp_path: Path, door: str) -> None:
    planted = plant(tmp_path)
    import_through(door, tmp_path, tmp_path / "new.db")
    assert leftovers(tmp_path, "new.db") == {planted.name}
    assert kept(planted)


def dead_pid() -> int:
    proc = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(proc.stdout)


@pytest.mark.parametrize(
    "forged",
    [
        "a live process",  # our own pid and start time: an import still running
        "another token",  # a record written for another file
        "another inode",  # the file was replaced after its record was written
        "another host",  # an import on another machine sharing the folder
        "another user",  # a record in someone else's name
        "not a record",  # any other file with the record's name
        "a link",  # the record is a symbolic link to one of ours
    ],
)
def test_a_file_whose_record_does_not_prove_it_ours_survives(tmp_path: Path, forged: str) -> None:
    planted = plant(tmp_path)
    owner = Path(f"{planted}.owner")
    gone = dead_pid()
    changes: dict[str, dict[str, object]] = {
        "a live process": {},
        "another token": {"token": "fedcba9876543210", "pid": gone},
        "another inode": {"ino": planted.stat().st_ino + 1, "pid": gone},
        "another host": {"host": "elsewhere.invalid", "pid": gone},
        "another user": {"uid": os.geteuid() + 1, "pid": gone},
    }
    if forged == "not a record":
        owner.write_text("just a file")
    elif forged == "a link":
        real = tmp_path / "real-record.json"
        real.write_text(json.dumps(record_for(planted, pid=gone)))
        owner.symlink_to(real)
    else:
        owner.write_text(json.dumps(record_for(planted, **changes[forged])))
    import_through("cli", tmp_path, tmp_path / "new.db")
    assert leftovers(tmp_path, "new.db") == {planted.name, owner.name}
    assert kept(planted)


def test_a_record_for_a_dead_pid_later_reused_is_stale(tmp_path: Path) -> None:
    """The pid now names a live process that started at another time: the import that wrote
    the record is gone, so its file goes (this process stands for the later one)."""
    planted = plant(tmp_path)
    from entityworks.sql.exchange import _new_file as new_file

    started = new_file._started(os.getpid())
    if started is None:
        pytest.skip("needs Linux /proc to tell a reused pid")
    Path(f"{planted}.owner").write_text(json.dumps(record_for(planted, started=started - 1)))
    import_through("api", tmp_path, tmp_path / "new.db")
    assert leftovers(tmp_path, "new.db") == set()


def test_a_file_owned_by_another_user_survives(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root to give a file to another user")
    planted = plant(tmp_path)
    owner = Path(f"{planted}.owner")
    owner.write_text(json.dumps(record_for(planted, pid=dead_pid())))
    os.chown(planted, 65534, 65534)  # nobody's
    import_through("cli", tmp_path, tmp_path / "new.db")
    assert leftovers(tmp_path, "new.db") == {planted.name, owner.name}
    assert kept(planted)


def test_a_file_of_another_database_survives(tmp_path: Path) -> None:
    """Stale files are removed only beside the database being imported into."""
    private = stale_import(tmp_path / "other.db")
    before = leftovers(tmp_path, "other.db")
    assert {private.name, f"{private.name}.owner"} <= before
    import_through("cli", tmp_path, tmp_path / "new.db")
    assert leftovers(tmp_path, "other.db") == before

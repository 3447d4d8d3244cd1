"""An import into an SQLite file that does not exist yet fills a private new file and links
it into place only once the import has succeeded (:func:`into_new_sqlite_file`): a refused
import then leaves no file behind, and never deletes one another process made meanwhile.
"""

from __future__ import annotations

import os
import re
import secrets
from collections.abc import Callable
from contextlib import closing
from pathlib import Path
from typing import Any, TypeVar

import sqlalchemy as sa

from ...errors import EntityworksError

T = TypeVar("T")

def _sqlite_path(url: Any) -> str | None:
    """The file an SQLite URL or plain path names (``None``: memory, URI or another DBMS)."""
    if isinstance(url, str) and "://" in url:
        url = sa.make_url(url)
    if isinstance(url, str | os.PathLike):
        path: str | None = os.fspath(url)
    elif url.get_backend_name() == "sqlite":
        path = url.database
    else:
        return None
    if not path or path == ":memory:" or path.startswith("file:"):
        return None
    return path


def new_sqlite_file(url: Any) -> Path | None:
    """The file of an SQLite URL or path if it does not exist yet."""
    path = _sqlite_path(url)
    return None if path is None or os.path.lexists(path) else Path(path)


def into_new_sqlite_file(path: Path, fill: Callable[[Path], T]) -> T | None:
    """Run ``fill`` on a private new database file beside ``path``, then link it into place.

    SQLite makes its file when it connects, and another process may open and fill a new file
    before a refused import could take it away again: deleting it then destroys what that
    process committed. So the import goes into a file nobody else knows of, removed on any
    error; once it is complete it is linked to ``path``, which fails if ``path`` exists by
    then. ``None`` then (and where the directory takes no new file or no hard link): the
    caller imports into ``path`` as into any existing database.

    The private file is locked (``flock``) for as long as its import runs, so that the next
    import into ``path`` can tell the file of a killed import (nobody holds its lock) from
    one still running, and removes the former.
    """
    _remove_abandoned(path)
    try:
        private, held = _private_file_beside(path)
    except OSError:
        return None  # SQLite will tell why, on the ordinary path
    try:
        result = fill(private)
        _seal(private)
        try:
            os.link(private, path)
        except OSError:  # FileExistsError: another process made the database meanwhile
            return None
        return result
    finally:
        _unlink_database(private)
        os.close(held)


_PRIVATE = re.compile(r"\.(?P<name>.+)\.[0-9a-f]{16}\.importing")


def _private_file_beside(path: Path) -> tuple[Path, int]:
    """A new empty file in the directory of ``path`` (a hard link needs the same file
    system), made exclusively and locked before it takes its ``.importing`` name: a file
    of that name that nobody has locked belongs to an import that died. Returns the file and
    the descriptor holding the lock."""
    import fcntl

    while True:
        token = secrets.token_hex(8)
        creating = path.with_name(f".{path.name}.{token}.creating")
        try:
            held = os.open(creating, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666)
        except FileExistsError:
            continue
        try:
            fcntl.flock(held, fcntl.LOCK_EX)
            private = path.with_name(f".{path.name}.{token}.importing")
            os.rename(creating, private)
        except BaseException:
            os.close(held)
            creating.unlink(missing_ok=True)
            raise
        return private, held


def _remove_abandoned(path: Path) -> None:
    """Remove the private files of imports into ``path`` that were killed: this user's
    ``.importing`` files beside it whose lock nobody holds (best effort: never an error)."""
    import fcntl
    import stat

    try:
        entries = list(os.scandir(path.parent))
    except OSError:
        return
    for entry in entries:
        match = _PRIVATE.fullmatch(entry.name)
        if match is None or match["name"] != path.name:
            continue
        try:
            fd = os.open(entry.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid():
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # an import is still filling it
            _unlink_database(Path(entry.path))
        finally:
            os.close(fd)


def _unlink_database(path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


def _seal(path: Path) -> None:
    """Make the database file whole on its own: its write-ahead log checkpointed into it and
    removed (the Store turns WAL on again when it opens the file)."""
    import sqlite3

    with closing(sqlite3.connect(path)) as conn:
        mode = conn.execute("PRAGMA journal_mode=DELETE").fetchone()[0]
    if mode != "delete":
        raise EntityworksError(f"could not complete the new database {path.name}: its "
                               f"journal stays in {mode!r} mode")


__all__ = ["into_new_sqlite_file", "new_sqlite_file"]

"""An import into a database file (SQLite's) that does not exist yet fills a private new file
and links it into place only once the import has succeeded (:func:`into_new_file`): a refused
import then leaves no file behind, and never deletes one another process made meanwhile.

An import that is killed leaves its private file behind; the next import into the same name
removes it, but only once it has proved the file is a stale one of its own: the importer
records, in an owner file it creates exclusively beside it, its user, host, boot, process id
and that process's start time, the file's random token and its device and inode. A file is
removed only when that record is there, is this user's, names this host and that very file,
and its process is gone (not running, a zombie, or a later process reusing the id), and
nobody holds the file's lock. Anything else (a file someone planted, another import's file)
is left as it is. A dangling symbolic link at the database's path is refused: SQLite would
create the new database wherever it points.

Which URLs name such a file, the files beside it that belong to it (its journals), and how
it is made whole before it is linked are its :class:`~entityworks.sql.backends.base.Backend`'s
(:meth:`~.base.Backend.plain_file`, :attr:`~.base.Backend.file_companions`,
:meth:`~.base.Backend.seal_file`).
"""

from __future__ import annotations

import json
import os
import re
import secrets
import socket
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import sqlalchemy as sa

from ..._files import refuse_dangling_link
from ..backends import file_backend, for_name
from ..backends.base import Backend

T = TypeVar("T")


@dataclass(frozen=True)
class NewFile:
    """A database file that does not exist yet, and the backend that keeps it."""

    path: Path
    backend: Backend


def _plain_file(url: Any) -> tuple[str, Backend] | None:
    """The database file a URL or plain path names, and its backend (``None``: a server's
    database, one in memory, a URI)."""
    if isinstance(url, str) and "://" in url:
        url = sa.make_url(url)
    if isinstance(url, str | os.PathLike):  # a plain path: a database file
        backend = file_backend()
        url = sa.URL.create(backend.name, database=os.fspath(url))
    else:
        backend = for_name(url.get_backend_name())
    path = backend.plain_file(url)
    return None if path is None else (path, backend)


def new_database_file(url: Any) -> NewFile | None:
    """The database file a URL or path names if it does not exist yet.

    A symbolic link there that points to nothing is refused (``OutputPathError``): opening
    it would create the database wherever the link points."""
    found = _plain_file(url)
    if found is None:
        return None
    path, backend = found
    refuse_dangling_link(path)
    return None if os.path.lexists(path) else NewFile(Path(path), backend)


def into_new_file(new: NewFile, fill: Callable[[Path], T]) -> T | None:
    """Run ``fill`` on a private new database file beside ``path`` (``new.path``), then link
    it into place.

    SQLite makes its file when it connects, and another process may open and fill a new file
    before a refused import could take it away again: deleting it then destroys what that
    process committed. So the import goes into a file nobody else knows of, removed on any
    error; once it is complete it is linked to ``path``, which fails if ``path`` exists by
    then. ``None`` then (and where the directory takes no new file or no hard link): the
    caller imports into ``path`` as into any existing database.

    The private file is locked (``flock``) for as long as its import runs and has an owner
    record beside it (see the module docstring), so that the next import into ``path`` can
    prove a left-over file is the stale one of a killed import of this user, and remove it.
    """
    path, companions = new.path, new.backend.file_companions
    _remove_abandoned(path, companions)
    try:
        private, held = _private_file_beside(path)
    except OSError:
        return None  # the database will tell why, on the ordinary path
    try:
        result = fill(private)
        new.backend.seal_file(private)
        try:
            os.link(private, path)
        except OSError:  # FileExistsError: another process made the database meanwhile
            return None
        return result
    finally:
        _unlink_database(private, companions)
        _owner_path(private).unlink(missing_ok=True)
        os.close(held)


_PRIVATE = re.compile(r"\.(?P<name>.+)\.(?P<token>[0-9a-f]{16})\.importing")
_OWNER_SUFFIX = ".owner"
#: An owner record is a few hundred bytes; anything larger is not one of ours.
_OWNER_MAX = 4096


def _owner_path(private: Path) -> Path:
    return private.with_name(private.name + _OWNER_SUFFIX)


def _private_file_beside(path: Path) -> tuple[Path, int]:
    """A new empty file in the directory of ``path`` (a hard link needs the same file
    system), made exclusively and locked, with its owner record written (exclusively too),
    before it takes its ``.importing`` name. Returns the file and the descriptor holding
    the lock."""
    import fcntl

    while True:
        token = secrets.token_hex(8)
        creating = path.with_name(f".{path.name}.{token}.creating")
        try:
            held = os.open(creating, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666)
        except FileExistsError:
            continue
        private = path.with_name(f".{path.name}.{token}.importing")
        owner = _owner_path(private)
        recorded = False
        try:
            fcntl.flock(held, fcntl.LOCK_EX)
            _write_owner(owner, token, os.fstat(held))
            recorded = True
            os.rename(creating, private)
        except BaseException:
            os.close(held)
            creating.unlink(missing_ok=True)
            if recorded:
                owner.unlink(missing_ok=True)
            raise
        return private, held


def _write_owner(owner: Path, token: str, info: os.stat_result) -> None:
    """The owner record of the private file ``info`` describes (made exclusively, ``0600``,
    never through a link: a name someone else took makes this import's set-up fail)."""
    record = {
        "entityworks": "import",
        "token": token,
        "uid": os.geteuid(),
        "host": socket.gethostname(),
        "boot": _boot_id(),
        "pid": os.getpid(),
        "started": _started(os.getpid()),
        "dev": info.st_dev,
        "ino": info.st_ino,
    }
    fd = os.open(owner, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(record, f)


def _boot_id() -> str | None:
    """This boot of the machine (Linux), so that a record from before a reboot is known to
    name a process that is gone."""
    try:
        with open("/proc/sys/kernel/random/boot_id", encoding="ascii") as f:
            return f.read().strip() or None
    except OSError:
        return None


def _started(pid: int) -> int | None:
    """When process ``pid`` started (clock ticks after boot, Linux), telling it from a later
    process given the same id; ``None`` where it cannot be read."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            fields = f.read().rpartition(")")[2].split()
        return int(fields[19])  # field 22 of proc(5); the list starts at field 3
    except (OSError, ValueError, IndexError):
        return None


def _process_gone(record: dict[str, Any]) -> bool:
    """True only when the process the record names has certainly ended."""
    boot = _boot_id()
    if boot is not None and record.get("boot") not in (None, boot):
        return True  # recorded before this boot
    pid = record.get("pid")
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        pass  # it exists, and is another user's: a later process given the same id?
    except OSError:
        return False
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            state = f.read().rpartition(")")[2].split()[0]
    except (OSError, IndexError):
        return False
    if state in ("Z", "X"):  # a zombie holds no lock and writes nothing
        return True
    started = record.get("started")
    return started is not None and _started(pid) not in (None, started)


def _read_owner(owner: Path) -> dict[str, Any] | None:
    """The owner record at ``owner`` if it is a small regular file of this user holding one
    of our records, else ``None``."""
    try:
        fd = os.open(owner, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if (
            not stat.S_ISREG(info.st_mode)
            or info.st_uid != os.geteuid()
            or info.st_size > _OWNER_MAX
        ):
            return None
        data = os.read(fd, _OWNER_MAX + 1)
    finally:
        os.close(fd)
    try:
        record = json.loads(data)
    except ValueError:
        return None
    return record if isinstance(record, dict) and record.get("entityworks") == "import" else None


def _ours_and_stale(record: dict[str, Any] | None, token: str) -> bool:
    """The record is one this user's imports write, on this host, for the file of ``token``,
    and the import that wrote it has ended."""
    return (
        record is not None
        and record.get("token") == token
        and record.get("uid") == os.geteuid()
        and record.get("host") == socket.gethostname()
        and _process_gone(record)
    )


def _remove_abandoned(path: Path, companions: tuple[str, ...]) -> None:
    """Remove the private files of imports into ``path`` that were killed: those whose owner
    record proves them a stale one of ours (see the module docstring) and whose lock nobody
    holds. Best effort: never an error; a file that cannot be proved ours stays."""
    try:
        entries = list(os.scandir(path.parent))
    except OSError:
        return
    for entry in entries:
        if not entry.name.endswith(".importing" + _OWNER_SUFFIX):
            continue
        match = _PRIVATE.fullmatch(entry.name[: -len(_OWNER_SUFFIX)])
        if match is None or match["name"] != path.name:
            continue
        owner = Path(entry.path)
        record = _read_owner(owner)
        if not _ours_and_stale(record, match["token"]):
            continue
        assert record is not None
        private = owner.with_name(owner.name[: -len(_OWNER_SUFFIX)])
        creating = private.with_name(private.name[: -len("importing")] + "creating")
        # killed before the rename, the file still has its first name
        if _remove_if_recorded(private, record, companions) and _remove_if_recorded(
            creating, record, companions
        ):
            owner.unlink(missing_ok=True)


def _remove_if_recorded(private: Path, record: dict[str, Any], companions: tuple[str, ...]) -> bool:
    """Remove ``private`` (and its journal files) if it is the very file ``record`` names and
    nobody holds its lock; True when it is gone (or was never made)."""
    import fcntl

    try:
        fd = os.open(private, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return not os.path.lexists(private)  # killed before or after its file existed
    except OSError:
        return False
    try:
        info = os.fstat(fd)
        if (
            not stat.S_ISREG(info.st_mode)
            or info.st_uid != os.geteuid()
            or (info.st_dev, info.st_ino) != (record.get("dev"), record.get("ino"))
        ):
            return False  # not the file the record was written for
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False  # an import is still filling it
        now = os.lstat(private)
        if (now.st_dev, now.st_ino) != (info.st_dev, info.st_ino):
            return False  # replaced meanwhile
        _unlink_database(private, companions)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def _unlink_database(path: Path, companions: tuple[str, ...]) -> None:
    for suffix in ("", *companions):
        Path(f"{path}{suffix}").unlink(missing_ok=True)


__all__ = ["NewFile", "into_new_file", "new_database_file"]

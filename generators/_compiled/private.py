"""The private folder where compiled code is kept: only this user can have written it.

Code read from a cache runs as whoever reads it, so a folder that another local user can
write to (a shared, world-writable ``NUMBA_CACHE_DIR`` in a container or on CI, a package
folder writable by a group) must never feed it. :func:`folder` gives the first candidate
that is provably this user's:

* every folder above it is owned by root or by this user and writable by nobody else,
  unless its sticky bit stops others from renaming or replacing what they do not own
  (``/tmp``); a symbolic link on the way is followed only when root or this user made it;
* the folder itself is owned by this user (the effective uid), is no symbolic link and is
  writable by nobody else; a missing one is created ``0700`` (missing folders above it
  ``0755``, as numba and Python make theirs).

It is walked one name at a time from ``/`` with ``O_NOFOLLOW`` and ``dir_fd``, so nothing
can be swapped between a check and a use, and it stays open for the process's life. A
candidate failing any check is left alone (never changed nor deleted) and the next one is
tried: ``NUMBA_CACHE_DIR/generators-native`` when the variable is set, else
``generators/__pycache__/native`` beside this package, then the per-user cache folder
(``~/.cache/generators/native``). None passing means nothing is cached: every process
compiles, and computes the same.

Files are read only when they are regular, owned by this user and writable by nobody else
(:func:`read`), and written ``0600`` under a fresh name opened with ``O_EXCL|O_NOFOLLOW``,
then renamed into place (:func:`write`). :func:`key` is this folder's secret (32 random
bytes, ``0600``) with which :mod:`generators._compiled.native` authenticates the machine code it
keeps before any byte of it reaches the JIT linker.

On systems without POSIX ownership (Windows) only the per-user cache folder is used, as the
platform's per-user permissions leave it, and :func:`read` / :func:`write` / :func:`key`
give nothing: there the kept machine code is numba's own cache alone.
"""

from __future__ import annotations

import os
import secrets
import stat
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

#: The folder's name under ``NUMBA_CACHE_DIR``.
NAME = "generators-native"
#: The secret's file name inside the folder.
KEY = "key"
_KEY_BYTES = 32
_READ_LIMIT = 64 << 20  # no kept file is near this: a larger one is not ours to load

_POSIX = (os.name == "posix" and hasattr(os, "geteuid") and hasattr(os, "O_NOFOLLOW")
          and hasattr(os, "O_DIRECTORY")
          and {os.open, os.stat, os.mkdir, os.rename, os.unlink, os.link,
               os.readlink} <= os.supports_dir_fd)  # fmt: skip
_DIR = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_OTHERS_WRITE = stat.S_IWGRP | stat.S_IWOTH
_MAX_LINKS = 40  # as the kernel's own limit on symbolic links in one path


@dataclass(frozen=True)
class Folder:
    """A checked private folder: its path (for numba's cache, which opens by path) and an
    open descriptor (for our own files, opened relative to it)."""

    path: Path
    fd: int | None  #: None where the platform has no POSIX ownership


_lock = threading.Lock()
_found: dict[tuple[str, ...], Folder | None] = {}


def candidates() -> tuple[Path, ...]:
    """Where the folder may be, in order of preference (see the module's docstring); the
    package's own ``__pycache__`` is that of ``generators``, one level above this module."""
    user = os.environ.get("NUMBA_CACHE_DIR")
    first = (Path(user) / NAME if user else
             Path(__file__).resolve().parents[1] / "__pycache__" / "native")  # fmt: skip
    return first, _user_cache()


def folder() -> Folder | None:
    """The first candidate that is this user's alone (created when missing), or None."""
    places = candidates()
    key = tuple(str(p) for p in places)
    with _lock:
        if key not in _found:
            _found[key] = _first_private(places)
        return _found[key]


def _first_private(places: tuple[Path, ...]) -> Folder | None:
    if not _POSIX:
        try:
            places[-1].mkdir(parents=True, exist_ok=True)
        except OSError:
            return None
        return Folder(places[-1], None)
    for place in places:
        opened = open_private(place)
        if opened is not None:
            return Folder(*opened)
    return None


def _user_cache() -> Path:
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "generators" / "native"


def _trusted_above(st: os.stat_result, euid: int) -> bool:
    """A folder on the way: nobody but root or us can change what it holds of ours."""
    return (st.st_uid in (0, euid) and stat.S_ISDIR(st.st_mode)
            and (not st.st_mode & _OTHERS_WRITE or bool(st.st_mode & stat.S_ISVTX)))  # fmt: skip


def _private_dir(st: os.stat_result, euid: int) -> bool:
    return st.st_uid == euid and stat.S_ISDIR(st.st_mode) and not st.st_mode & _OTHERS_WRITE


def open_private(path: Path) -> tuple[Path, int] | None:
    """(the real path, an open descriptor) of folder ``path`` when it is this user's alone
    (see the module's docstring), creating it ``0700`` (and missing folders above it
    ``0755``); None when any check fails. The real path has no symbolic link left in it."""
    euid = os.geteuid()
    pending = list(reversed(Path(os.path.abspath(path)).parts[1:]))  # no "" or "." in it
    names: list[str] = []
    fds = [os.open("/", _DIR)]
    links = 0
    try:
        if not _trusted_above(os.fstat(fds[0]), euid):
            return None
        while pending:
            name = pending.pop()
            if name == "..":
                if names:
                    names.pop()
                    os.close(fds.pop())
                continue
            last = not pending
            try:
                st = os.stat(name, dir_fd=fds[-1], follow_symlinks=False)
            except FileNotFoundError:
                try:  # only the folder itself is private: those above are for others too
                    os.mkdir(name, 0o700 if last else 0o755, dir_fd=fds[-1])
                except FileExistsError:
                    pass
                st = os.stat(name, dir_fd=fds[-1], follow_symlinks=False)
            if stat.S_ISLNK(st.st_mode):
                if last or st.st_uid not in (0, euid) or links == _MAX_LINKS:
                    return None
                links += 1
                target = os.readlink(name, dir_fd=fds[-1])
                if target.startswith("/"):
                    while names:
                        names.pop()
                        os.close(fds.pop())
                pending.extend(reversed([p for p in target.split("/") if p not in ("", ".")]))
                continue
            fds.append(os.open(name, _DIR | _NOFOLLOW, dir_fd=fds[-1]))
            names.append(name)
            st = os.fstat(fds[-1])
            if not (_private_dir(st, euid) if last else _trusted_above(st, euid)):
                return None
        if not names:
            return None  # "/" itself is never a cache folder
        return Path("/", *names), fds.pop()
    except OSError:
        return None
    finally:
        for fd in fds:
            os.close(fd)


def _open_file(place: Folder, name: str) -> tuple[int, os.stat_result] | None:
    """A descriptor on file ``name`` of ``place`` when it is a regular file of ours that
    nobody else can write, with its status; None otherwise (missing, a link, foreign)."""
    if place.fd is None or "/" in name or name in ("", ".", ".."):
        return None
    try:
        fd = os.open(name, os.O_RDONLY | _NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                     dir_fd=place.fd)  # fmt: skip
    except OSError:
        return None
    st = os.fstat(fd)
    if (stat.S_ISREG(st.st_mode) and st.st_uid == os.geteuid()
            and not st.st_mode & _OTHERS_WRITE and st.st_size <= _READ_LIMIT):  # fmt: skip
        return fd, st
    os.close(fd)
    return None


def read(place: Folder, name: str) -> bytes | None:
    """The bytes of file ``name`` of ``place`` when it passes :func:`_open_file`'s checks."""
    opened = _open_file(place, name)
    if opened is None:
        return None
    fd, st = opened
    try:
        chunks = []
        left = st.st_size + 1  # one more: a file that grew since is refused
        while left > 0 and (chunk := os.read(fd, min(left, 1 << 20))):
            chunks.append(chunk)
            left -= len(chunk)
    except OSError:
        return None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    return data if len(data) == st.st_size else None


def _write_fresh(place: Folder, data: bytes) -> str:
    """A new ``0600`` file of ``place`` holding ``data``, under a random name: its name."""
    assert place.fd is not None
    temporary = f".tmp-{secrets.token_hex(8)}"
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | os.O_CLOEXEC,
                 0o600, dir_fd=place.fd)  # fmt: skip
    try:
        os.fchmod(fd, 0o600)  # whatever the umask
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    except OSError:
        os.close(fd)
        os.unlink(temporary, dir_fd=place.fd)
        raise
    os.close(fd)
    return temporary


def write(place: Folder, name: str, data: bytes) -> bool:
    """Put ``data`` in file ``name`` of ``place`` at once (readers see the old file or the
    new one); False when it could not, or when ``name`` is not ours to replace."""
    if place.fd is None or "/" in name or name in ("", ".", ".."):
        return False
    try:
        temporary = _write_fresh(place, data)
    except OSError:
        return False
    try:
        try:
            there = os.stat(name, dir_fd=place.fd, follow_symlinks=False)
        except FileNotFoundError:
            there = None
        if there is not None and there.st_uid != os.geteuid():
            raise PermissionError(name)  # never replace what is not ours
        os.replace(temporary, name, src_dir_fd=place.fd, dst_dir_fd=place.fd)
    except OSError:
        try:
            os.unlink(temporary, dir_fd=place.fd)
        except OSError:
            pass
        return False
    return True


def _read_key(place: Folder) -> bytes | None:
    opened = _open_file(place, KEY)
    if opened is None:
        return None
    fd, st = opened
    try:
        secret = os.read(fd, _KEY_BYTES + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    return secret if len(secret) == _KEY_BYTES and not st.st_mode & 0o077 else None


def key(place: Folder) -> bytes | None:
    """This folder's secret, created when missing, replaced when ours but unfit (readable
    by others, so perhaps seen, or cut short); None when there is none to be had."""
    if place.fd is None:
        return None
    secret = _read_key(place)
    if secret is not None:
        return secret
    fresh = secrets.token_bytes(_KEY_BYTES)
    try:
        temporary = _write_fresh(place, fresh)
    except OSError:
        return None
    try:
        try:  # link, not rename: never replaces a key another process has just made
            os.link(temporary, KEY, src_dir_fd=place.fd, dst_dir_fd=place.fd,
                    follow_symlinks=False)  # fmt: skip
            return fresh
        except FileExistsError:
            pass
        secret = _read_key(place)  # made meanwhile
        if secret is not None:
            return secret
        if os.stat(KEY, dir_fd=place.fd, follow_symlinks=False).st_uid != os.geteuid():
            return None  # never replace what is not ours
        os.replace(temporary, KEY, src_dir_fd=place.fd, dst_dir_fd=place.fd)
        return fresh
    except OSError:
        return None
    finally:
        try:
            os.unlink(temporary, dir_fd=place.fd)
        except OSError:
            pass

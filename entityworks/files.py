"""Writing output files: regular files only, each appearing whole under its name or not at all.

Every exporter (XML, XSD, Parquet) writes through :func:`atomic_output`. The output goes to a
temporary file beside the target and is renamed over it only once complete, so a failure
leaves whatever was there before. The target must be a regular file or nothing: a
directory, a symbolic link, a FIFO, a socket or a device at that path is refused before any
byte is written, and checked again just before the rename (``os.replace`` would otherwise
swap out ``/dev/full`` for a file when run as root, or replace a symlink instead of following
it).
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from .errors import OutputPathError

_KINDS = ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a directory"),
          (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def check_output_path(path: str | os.PathLike[str]) -> Path:
    """``path`` as a :class:`Path` if a regular file may be written there, else refuse it.

    Allowed: nothing at ``path`` (its directory must exist) or a regular file, which will be
    replaced. Refused with :class:`OutputPathError`: links, directories, FIFOs, sockets and
    devices.
    """
    path = Path(path)
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        parent = path.parent
        if not parent.is_dir():
            raise OutputPathError(f"cannot write {str(path)!r}: directory {str(parent)!r} "
                                  "does not exist", path=path) from None
        return path
    except OSError as exc:
        raise OutputPathError(f"cannot write {str(path)!r}: {exc.strerror or exc}",
                              path=path) from None
    if stat.S_ISREG(mode):
        return path
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    raise OutputPathError(f"refusing to write {str(path)!r}: it is {kind}; only regular "
                          "files are written (remove it or choose another path)", path=path)


def _file_mode(path: Path) -> int:
    """The permissions a plain ``open(path, "w")`` would give: kept from the file it
    replaces, else 0o666 less the umask."""
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        pass
    mask = _umask()
    return 0o666 & ~mask


def _umask() -> int:
    try:  # Linux: read it without changing it (os.umask is process-wide and racy)
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@contextmanager
def atomic_output(path: str | os.PathLike[str]) -> Iterator[BinaryIO]:
    """Open a temporary file beside ``path`` for writing; rename it over ``path`` on success.

    On an exception the temporary file is removed and ``path`` is untouched. The target is
    checked with :func:`check_output_path` before and again just before the rename.
    """
    target = check_output_path(path)
    fd, temp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".partial",
                                     dir=target.parent)
    temp = Path(temp_name)
    try:
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            os.fchmod(f.fileno(), _file_mode(target))
        check_output_path(target)
        os.replace(temp, target)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise


def write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``path`` through :func:`atomic_output`; returns the path."""
    with atomic_output(path) as f:
        f.write(data)
    return Path(path)


__all__ = ["atomic_output", "check_output_path", "write_bytes"]

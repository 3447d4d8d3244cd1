"""Files in and out: outputs appear whole or not at all, streams are read once.

Every exporter (XML, XSD, Parquet, PNG) writes through :func:`atomic_output`. The output goes
to a temporary file beside the target and is renamed over it only once complete, so a failure
leaves whatever was there before. The target must be a regular file or nothing: a
directory, a symbolic link, a FIFO, a socket or a device at that path is refused before any
byte is written, and checked again just before the rename (``os.replace`` would otherwise
swap out ``/dev/full`` for a file when run as root, or replace a symlink instead of following
it).

The command line's ``-`` goes through here too. :func:`open_output` sends ``-`` to
:func:`stdout_output`, which holds the bytes until they are complete: a pipe cannot take back
what it was sent, so a refused export sends nothing at all. :func:`input_path` turns ``-``
(standard input), a FIFO or a device into a private regular file, read once and bounded, for
readers that need a path or read twice (XML validation, then the rows).
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from .errors import EntityworksError, InputTooLarge, OutputPathError

#: The path that means standard input or standard output on the command line.
STDIO = "-"
#: Bytes :func:`stdout_output` keeps in memory before it spills to an unnamed temporary file.
STDOUT_MEMORY = 64 << 20
_CHUNK = 1 << 20

_KINDS = (
    (stat.S_ISLNK, "a symbolic link"),
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


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
            raise OutputPathError(
                f"cannot write {str(path)!r}: directory {str(parent)!r} does not exist", path=path
            ) from None
        return path
    except OSError as exc:
        raise OutputPathError(
            f"cannot write {str(path)!r}: {exc.strerror or exc}", path=path
        ) from None
    if stat.S_ISREG(mode):
        return path
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    raise OutputPathError(
        f"refusing to write {str(path)!r}: it is {kind}; only regular "
        "files are written (remove it or choose another path)",
        path=path,
    )


def refuse_dangling_link(path: str | os.PathLike[str], what: str = "the database") -> None:
    """Refuse a symbolic link at ``path`` that points to nothing (:class:`OutputPathError`).

    Opening such a path for writing (SQLite does, to create a database) would create a new
    file wherever the link points, possibly outside the directory the user named. A link to
    an existing file, and no file at all, pass.
    """
    if os.path.islink(path) and not os.path.exists(path):
        target = os.readlink(path)
        raise OutputPathError(
            f"refusing to create {what} {os.fspath(path)!r}: it is a "
            f"symbolic link to {target!r}, which does not exist (a new file "
            "would appear there); remove the link or give the real path",
            path=Path(path),
        )


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
    fd, temp_name = tempfile.mkstemp(
        prefix=f".{target.name}.", suffix=".partial", dir=target.parent
    )
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


def is_stdio(path: object) -> bool:
    """True when ``path`` is ``-``, the command line's name for standard input/output."""
    return isinstance(path, str | os.PathLike) and os.fspath(path) == STDIO


def _stdout() -> BinaryIO:
    stream = getattr(sys.stdout, "buffer", None)
    if stream is None:  # pragma: no cover - a text-only stdout replaced by the embedding program
        raise EntityworksError("standard output takes no bytes here (it has no binary buffer)")
    return stream  # type: ignore[no-any-return]


@contextmanager
def stdout_output(stream: BinaryIO | None = None) -> Iterator[BinaryIO]:
    """A buffer whose bytes go to ``stream`` (default: standard output) only when the block
    ends without an error; on an error nothing is written.

    The buffer lives in memory up to :data:`STDOUT_MEMORY` bytes, then in an unnamed temporary
    file in :func:`tempfile.gettempdir` (the system removes it even if the process is killed),
    so the output may be as large as that directory has room for.
    """
    with tempfile.SpooledTemporaryFile(max_size=STDOUT_MEMORY, mode="w+b") as buffer:
        yield buffer  # type: ignore[misc]
        target = stream if stream is not None else _stdout()
        buffer.seek(0)
        try:
            shutil.copyfileobj(buffer, target, _CHUNK)
            target.flush()
        except BrokenPipeError:
            raise  # the reader left (``| head``): the command line ends quietly
        except OSError as exc:  # /dev/full, a full disk behind a redirection...
            raise OutputPathError(
                f"cannot write to standard output: {exc.strerror or exc}"
            ) from None


@contextmanager
def open_output(path: str | os.PathLike[str]) -> Iterator[BinaryIO]:
    """Where the command line writes ``path``: standard output for ``-`` (through
    :func:`stdout_output`, whole or nothing), else the file (through :func:`atomic_output`)."""
    if is_stdio(path):
        with stdout_output() as f:
            yield f
    else:
        with atomic_output(path) as f:
            yield f


def _too_large(label: str, max_bytes: int, hint: str) -> InputTooLarge:
    return InputTooLarge(f"{label}: more than {max_bytes:,} bytes, the size limit ({hint})")


@contextmanager
def input_path(
    path: str | os.PathLike[str],
    *,
    max_bytes: int | None,
    hint: str = "raise it with --max-size",
    stdin: BinaryIO | None = None,
) -> Iterator[Path]:
    """A regular file holding the bytes of ``path``, for a reader that needs a path.

    A regular file is yielded as it is (refused first if larger than ``max_bytes``; ``None``:
    no limit). ``-`` (``stdin``, default standard input), a FIFO or a character device is read
    exactly once, up to ``max_bytes``, into a new private directory that is removed when the
    block ends, even on an error; the copy is named ``<stdin>`` or after the stream, so the
    readers' messages name what the user gave. More bytes than that raise
    :class:`InputTooLarge` (``hint`` says how to raise the limit) and nothing is kept.
    """
    if is_stdio(path):
        source, label, name = (
            (stdin if stdin is not None else sys.stdin.buffer),
            "<stdin>",
            "<stdin>",
        )
        with _copied(source, name, label, max_bytes, hint) as copy:
            yield copy
        return
    given = Path(path)
    mode = os.stat(given).st_mode  # a missing file: FileNotFoundError, named by the caller
    if stat.S_ISDIR(mode):
        raise EntityworksError(f"{str(given)!r} is a directory, not a file")
    if stat.S_ISREG(mode):
        size = given.stat().st_size
        if max_bytes is not None and size > max_bytes:
            raise InputTooLarge(
                f"{given}: {size:,} bytes, more than the size limit of {max_bytes:,} ({hint})"
            )
        yield given
        return
    with (
        open(given, "rb") as source,
        _copied(source, given.name or "input", str(given), max_bytes, hint) as copy,
    ):
        yield copy


@contextmanager
def _copied(
    source: BinaryIO, name: str, label: str, max_bytes: int | None, hint: str
) -> Iterator[Path]:
    """``source`` read once into ``<private dir>/name`` (at most ``max_bytes`` bytes)."""
    folder = Path(tempfile.mkdtemp(prefix="entityworks-input-"))
    try:
        copy = folder / name
        size = 0
        with open(copy, "xb") as f:
            while True:
                want = _CHUNK if max_bytes is None else min(_CHUNK, max_bytes + 1 - size)
                chunk = source.read(max(1, want))
                if not chunk:
                    break
                size += len(chunk)
                if max_bytes is not None and size > max_bytes:
                    raise _too_large(label, max_bytes, hint)
                f.write(chunk)
        yield copy
    finally:
        shutil.rmtree(folder, ignore_errors=True)


__all__ = [
    "STDIO",
    "atomic_output",
    "check_output_path",
    "input_path",
    "is_stdio",
    "open_output",
    "refuse_dangling_link",
    "stdout_output",
    "write_bytes",
]

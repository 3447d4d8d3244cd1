"""Entropy reports: a file or stream read once, hashed and measured (``generators.bytes.entropy``),
and stored as an ``entropy_reports`` row.

Apart from the rest because it reads input the user names (paths, FIFOs, stdin) under a size
limit, and needs nothing of the maps.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from typing import Any

from ..errors import InputTooLarge
from ..sql.store import Store
from ._models import EntropyRecord


def sha256_of(path: str | os.PathLike[str], chunk: int = 1 << 20) -> str:
    """Hex SHA-256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            digest.update(block)
    return digest.hexdigest()


#: Largest input :func:`analyse_entropy` reads by default (``entityworks entropy --max-size``).
MAX_ENTROPY_BYTES = 1 << 30


class _HashingReader:
    """A binary stream that hashes and counts what passes through, and stops at a limit."""

    def __init__(self, stream: Any, name: str, max_bytes: int | None) -> None:
        self.stream = stream
        self.name = name
        self.max_bytes = max_bytes
        self.digest = hashlib.sha256()
        self.size = 0

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer)
        if self.max_bytes is not None:  # read at most one byte past the limit
            view = view[: max(1, min(len(view), self.max_bytes + 1 - self.size))]
        readinto = getattr(self.stream, "readinto", None)
        if readinto is not None:
            n = readinto(view) or 0
        else:
            data = self.stream.read(len(view))
            n = len(data)
            view[:n] = data
        self.size += n
        if self.max_bytes is not None and self.size > self.max_bytes:
            raise InputTooLarge(
                f"{self.name}: more than {self.max_bytes:,} bytes, the size "
                f"limit (raise it with --max-size / max_bytes)"
            )
        self.digest.update(view[:n])
        return n

    def read(self, size: int = 1 << 20) -> bytes:
        buffer = bytearray(size)
        return bytes(buffer[: self.readinto(buffer)])


def analyse_entropy(
    source: str | os.PathLike[str] | Any,
    *,
    name: str | None = None,
    max_bytes: int | None = MAX_ENTROPY_BYTES,
    bits: bool = False,
    fold: bool = False,
) -> tuple[EntropyRecord, Any]:
    """Read ``source`` (a path or a binary stream: a FIFO, a device, stdin) exactly once and
    return its catalog row and ``generators.bytes.entropy`` report: the figures and the SHA-256
    describe the same bytes. More than ``max_bytes`` bytes (None: no limit) raise
    :class:`InputTooLarge`; a regular file is checked before it is read. ``bits`` and
    ``fold`` are ``ent``'s ``-b`` and ``-f`` (the catalog stores byte reports of the bytes as
    they are: such a row is for printing, not for storing)."""
    from generators.bytes import entropy

    if isinstance(source, str | os.PathLike):
        label = name or os.fspath(source)
        with open(source, "rb") as stream:
            size = os.fstat(stream.fileno()).st_size
            if max_bytes is not None and size > max_bytes and _regular(stream):
                raise InputTooLarge(
                    f"{label}: {size:,} bytes, more than the size limit of "
                    f"{max_bytes:,} (raise it with --max-size / max_bytes)"
                )
            return analyse_entropy(stream, name=label, max_bytes=max_bytes, bits=bits, fold=fold)
    label = name or str(getattr(source, "name", "<stream>"))
    reader = _HashingReader(source, label, max_bytes)
    report = entropy.report(reader, bits=bits, fold=fold)  # type: ignore[arg-type]  # readinto
    return entropy_record(label, report, sha256=reader.digest.hexdigest()), report


def _regular(stream: Any) -> bool:
    import stat

    return stat.S_ISREG(os.fstat(stream.fileno()).st_mode)


def entropy_record(
    path: str | os.PathLike[str], report: Any, *, sha256: str | None = None
) -> EntropyRecord:
    """The catalog row for ``report``, a ``generators.bytes.entropy.report`` of the file ``path``.

    Without ``sha256`` the file is read again to hash it; :func:`analyse_entropy` reads once.
    """
    return EntropyRecord(
        None,
        str(path),
        int(report.size),
        sha256 or sha256_of(path),
        report.entropy,
        report.optimum_compression,
        report.chi_square,
        report.chi_square_probability,
        report.mean,
        report.monte_carlo_pi,
        report.monte_carlo_error,
        report.serial_correlation,
        int(report.unique_symbols),
        [int(v) for v in report.distribution],
    )


def store_entropy(
    store: Store, paths: Sequence[str | os.PathLike[str]], *, max_bytes: int | None = None
) -> list[tuple[EntropyRecord, Any]]:
    """Analyse each file (read once), store one row per file, return ``(row, report)``
    pairs. Nothing is stored unless every file could be read."""
    pairs = [analyse_entropy(p, max_bytes=max_bytes) for p in paths]
    store.insert_many([row for row, _ in pairs])
    return pairs


__all__ = ["MAX_ENTROPY_BYTES", "analyse_entropy", "entropy_record", "sha256_of", "store_entropy"]

"""Guards for the fuzz tests: the SQL a database receives, network and file access.

- :class:`SqlWatch` listens to ``before_cursor_execute`` and fails when a fuzzed value shows
  up inside statement text (values must travel as bound parameters).
- :func:`no_network` makes every Python-level ``socket.connect`` fail the test.
- :class:`Canary` is a file whose path fuzzed inputs mention (entities, XInclude, schema
  imports, plain values): reading it shows as a changed access time (and, for Python-level
  opens, in an audit hook); its content must never appear in any result or error.
"""

from __future__ import annotations

import os
import socket
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

MARK = "Zq7"  # every fuzzed string value starts with it; no name or keyword contains it
SECRET = "CANARY-5b1e-never-read"


class SqlWatch:
    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine
        self.statements: list[str] = []
        self.count = 0
        sa.event.listen(engine, "before_cursor_execute", self._seen)

    def _seen(self, _conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        self.count += 1
        self.statements.append(statement)

    def check(self, values: list[Any]) -> None:
        """No fuzzed string (marked) or large int appears in any statement text."""
        needles = [v for v in values if isinstance(v, str) and MARK in v]
        needles = [MARK] if needles else []
        needles += [
            str(v)
            for v in values
            if isinstance(v, int) and not isinstance(v, bool) and abs(v) >= 10**6
        ]
        for statement in self.statements:
            for needle in needles:
                assert needle not in statement, f"value {needle!r} inside SQL: {statement}"
        self.statements.clear()

    def close(self) -> None:
        sa.event.remove(self.engine, "before_cursor_execute", self._seen)


@contextmanager
def no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    attempts: list[Any] = []

    def refuse(self: socket.socket, address: Any) -> None:
        attempts.append(address)
        raise OSError("network access refused by the reliability tests")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    yield attempts
    assert attempts == [], f"input content caused network connections: {attempts}"


_AUDIT: dict[str, Any] = {"paths": None, "hits": []}


def _audit(event: str, args: tuple[Any, ...]) -> None:
    paths = _AUDIT["paths"]
    if paths and event == "open" and args and isinstance(args[0], str | bytes | os.PathLike):
        name = os.fsdecode(args[0])
        if any(p in name for p in paths):
            _AUDIT["hits"].append(name)


_installed = False


class Canary:
    """A secret file that nothing may read."""

    def __init__(self, folder: Path) -> None:
        global _installed
        self.path = folder / "canary-secret.txt"
        self.path.write_text(SECRET)
        if not _installed:
            sys.addaudithook(_audit)
            _installed = True
        self.atime_works = self._probe()
        self._reset()

    def _reset(self) -> None:
        past = time.time() - 1000
        os.utime(self.path, (past, past))
        self.atime = os.stat(self.path).st_atime

    def _probe(self) -> bool:
        self._reset()
        self.path.read_text()
        return os.stat(self.path).st_atime != self.atime

    @property
    def uris(self) -> list[str]:
        return [str(self.path), self.path.as_uri(), "canary-secret.txt"]

    @contextmanager
    def armed(self) -> Iterator[None]:
        _AUDIT["paths"], _AUDIT["hits"] = [str(self.path), "canary-secret"], []
        try:
            yield
        finally:
            _AUDIT["paths"] = None
        assert _AUDIT["hits"] == [], f"input content made Python open {_AUDIT['hits']}"
        self.check()

    def check(self) -> None:
        if self.atime_works:
            assert os.stat(self.path).st_atime == self.atime, "the canary file was read"

    def leaked(self, text: str) -> bool:
        return SECRET in text

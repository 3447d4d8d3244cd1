"""Types of PostgreSQL's binary COPY rows made in C (entityworks/sql/backends/native/pgrows.c)."""

from collections.abc import Sequence
from typing import Any

def rows(rows: list[Sequence[Any]], codes: bytes, /) -> bytes | None: ...

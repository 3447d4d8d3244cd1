"""Types of the C extension generators/_native/_csolve.c (see generators.sudoku._engine)."""

from typing import Any

def solve_rows(
    text: Any,
    start: int,
    stop: int,
    limit: int,
    houses: bool,
    counts: Any,
    nodes: Any,
    guesses: Any,
    grids: Any,
    *,
    kernel: str | None = None,
) -> int: ...
def solve_text(
    text: str | bytes, limit: int, houses: bool = True, *, kernel: str | None = None
) -> tuple[int, str | None, int, int] | None: ...
def kernels() -> tuple[str, ...]: ...

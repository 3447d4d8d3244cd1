"""Types of the C field of view (generators/_native/_cfov.c)."""

from typing import Any, final

MAX_SIDE: int

def view(
    cells: Any, out: Any, ox: int, oy: int, radius: int, flags: int, out_x: int, out_y: int, /
) -> int: ...

@final
class Field:
    def __init__(self, cells: Any, out: Any, lit: Any) -> None: ...
    def compute(
        self, origin: object, radius: object, light_walls: object, symmetric: object,
        libtcod_ties: object, /,
    ) -> bool: ...  # fmt: skip

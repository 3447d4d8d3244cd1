"""Types of the C Decimal columns (entityworks/types/_cdecimal.c)."""

from collections.abc import Sequence
from typing import Any

def keys(values: Sequence[Any], /) -> list[Any] | None: ...
def as_written(keys: Sequence[Any], texts: Sequence[Any], /) -> list[Any] | None: ...

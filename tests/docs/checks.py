"""Assertions beyond the shown output, run by the harness after the block marked
``<!-- check: NAME -->`` with the page's namespace."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

CHECKS: dict[str, Callable[[dict[str, Any]], None]] = {}

"""Running the README's Python examples as written."""

from __future__ import annotations

import sys
import types
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def run_readme_block(marker: str, module_name: str) -> types.ModuleType:
    """Execute the first ```python block after ``marker`` (an HTML comment in README.md) as
    a module of its own (dataclasses look their module up) and return it."""
    text = README.read_text(encoding="utf-8")
    block = text.split(marker, 1)[1].split("```python\n", 1)[1].split("```", 1)[0]
    module = types.ModuleType(module_name)
    sys.modules[module.__name__] = module
    try:
        exec(compile(block, "README.md", "exec"), module.__dict__)  # noqa: S102 - our README
    finally:
        del sys.modules[module.__name__]
    return module

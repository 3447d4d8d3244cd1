"""Regenerate the golden maps listed in manifest.json.

Run ``python tests/golden/make_golden.py`` from the repository root after a deliberate
change to a generator; the golden tests in tests/generators/maps/test_render.py fail on any
other change of output.
"""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

from generators.maps import render  # noqa: E402
from generators.view import fov  # noqa: E402


def load_manifest() -> list[dict[str, Any]]:
    return json.loads((HERE / "manifest.json").read_text(encoding="utf-8"))


def build(entry: dict[str, Any]) -> tuple[np.ndarray, np.ndarray | None]:
    """The grid of a manifest entry and, for fogged pictures, its visibility mask."""
    module = importlib.import_module(f"generators.maps.{entry['generator']}")
    grid = module.generate(**entry["params"], seed=entry["seed"]).grid
    visible = None
    if "fov" in entry:
        spec = entry["fov"]
        visible = fov.visible(grid, tuple(spec["origin"]), spec["radius"])
    return grid, visible


def main() -> None:
    for entry in load_manifest():
        grid, visible = build(entry)
        target = HERE / entry["file"]
        if target.suffix == ".txt":
            target.write_text(render.to_ascii(grid) + "\n", encoding="utf-8")
        else:
            render.to_png(grid, target, block=entry.get("block", 5), visible=visible)
        print(f"wrote {target.name}")


if __name__ == "__main__":
    main()

"""The type layer's shape: the core registry loads no application, and the public face
``entityworks.registry`` speaks for the same default registry the parts build."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import entityworks.registry as face
from entityworks.types import default, registry

ROOT = Path(__file__).resolve().parents[3]


def test_the_registry_loads_no_catalog_and_no_numpy() -> None:
    code = (
        "import sys, entityworks.registry as r\n"
        "r.lookup(int); r.lookup(list[int]); r.lookup(dict[str, float])\n"
        "print(sorted(m for m in sys.modules\n"
        "             if m.startswith(('entityworks.catalog', 'numpy', 'pyarrow'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_face_and_the_parts_share_one_default_registry() -> None:
    assert face.registry is default.registry
    assert face.TypeRegistry is registry.TypeRegistry and face.TypeInfo is registry.TypeInfo
    assert face.the_registry(face) is default.registry


def test_a_new_default_registry_has_the_same_entries_and_order() -> None:
    built = default.default_registry()
    assert [(key, info.name) for key, info in built.entries()] == [
        (key, info.name) for key, info in default.registry.entries()
    ]
    assert [info.name for info in map(built.lookup, (int, float, str, bool, bytes))] == [
        "int",
        "float",
        "str",
        "bool",
        "bytes",
    ]

"""Issue 30: a backend's differences live in its module. The capability flags that chose
driver code (``raw_rows``, ``strict_tables``, ``binds_bytes``) are gone: the modules outside
``entityworks/sql/backends/`` ask a Backend method instead (``bind_processor``,
``fast_processor``, ``result_processor``, ``result_column``, ``reads_raw_cursor``,
``refuses_other_types``, ``stored_types``)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import entityworks
from entityworks.sql.backends import for_name, names_where

PACKAGE = Path(entityworks.__file__).parent
BACKENDS = PACKAGE / "sql" / "backends"
FLAGS = frozenset({"raw_rows", "strict_tables", "binds_bytes"})


def flag_reads(source: str) -> list[tuple[int, str]]:
    """(line, flag) of each read of a flag in ``source``: ``x.flag`` or
    ``getattr(x, "flag"...)``."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in FLAGS:
            found.append((node.lineno, node.attr))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in {"getattr", "hasattr"}
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and node.args[1].value in FLAGS
        ):
            found.append((node.lineno, str(node.args[1].value)))
    return found


def test_the_scan_finds_each_way_of_reading_a_flag() -> None:
    source = (
        "a = db.backend.raw_rows\n"
        "if backend.strict_tables: pass\n"
        "b = getattr(backend, 'binds_bytes', False)\n"
        "c = backend.raw_rows_seen\n"  # another name: not a flag
    )
    assert flag_reads(source) == [(1, "raw_rows"), (2, "strict_tables"), (3, "binds_bytes")]


def test_no_module_outside_the_backends_reads_a_backend_flag() -> None:
    modules = [p for p in sorted(PACKAGE.rglob("*.py")) if BACKENDS not in p.parents]
    assert len(modules) > 50  # the whole package is scanned
    assert PACKAGE / "sql" / "_rowcodec.py" in modules
    reads = {
        f"{path.relative_to(PACKAGE.parent)}:{line}": flag
        for path in modules
        for line, flag in flag_reads(path.read_text(encoding="utf-8"))
    }
    assert reads == {}


@pytest.mark.parametrize("name", names_where(lambda _backend: True))
def test_no_backend_offers_the_flags(name: str) -> None:
    backend = for_name(name)
    assert [flag for flag in sorted(FLAGS) if hasattr(backend, flag)] == []

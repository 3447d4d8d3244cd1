"""The generated command-line reference (``docs/hooks.py``) says what ``--help`` says: no
click internals as defaults, no help cut short, every example line for line."""

from __future__ import annotations

import importlib.util
import re
import sys
from types import ModuleType

import pytest

from tests.docs.harness import ROOT
from tests.entityworks.cli.test_cli_help_examples import commands, examples, source_text


@pytest.fixture(scope="module")
def reference() -> str:
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    assert spec is not None and spec.loader is not None
    hooks: ModuleType = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = hooks  # its dataclasses look their module up while being made
    spec.loader.exec_module(hooks)
    text: str = hooks.cli_reference()
    return text


def test_no_click_sentinel_or_internal_value(reference: str) -> None:
    assert "Sentinel" not in reference and "UNSET" not in reference
    assert "<function" not in reference and "object at 0x" not in reference


def test_no_help_is_cut_short(reference: str) -> None:
    usage = re.compile(r"^entityworks [\w -]*\[OPTIONS\].*\.\.\.$")  # "[ARGS]...", "FILES..."
    cut = [
        line
        for line in reference.splitlines()
        if line.rstrip().endswith("...") and not usage.match(line)
    ]
    assert cut == []
    # each subcommand's summary is its whole first sentence, never click's 45-character cut
    for path, command in commands():
        if not path:
            continue
        summary = command.get_short_help_str(limit=10_000)
        assert len(summary) > 45 or summary.endswith((".", ")")), (path, summary)
        entry = f"- [{path[-1]}](#entityworks-{'-'.join(path)}): "
        assert any(
            line.startswith(entry) and line.endswith(summary[-12:].replace("_", "\\_"))
            for line in reference.splitlines()
        ), (path, summary)


def test_every_example_is_kept_line_for_line(reference: str) -> None:
    lines = [line.strip() for line in reference.splitlines()]
    for path, command in commands():
        for example in examples(source_text(command)):
            assert example in lines, (path, example)


def test_real_defaults_are_shown(reference: str) -> None:
    rows = {
        line.split(" | ")[0]: line
        for line in reference.splitlines()
        if line.startswith("| `--port`") or line.startswith("| `--compression`")
    }
    assert "`8001`" in rows["| `--port`, `-p`"]
    assert "`zstd`" in rows["| `--compression`"]

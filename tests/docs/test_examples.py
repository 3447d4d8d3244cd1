"""Every example in README.md and docs/ runs, and every output the pages show is the output
of that run (``python -m tests.docs.harness --write`` regenerates them)."""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import pytest

from tests.docs.checks import CHECKS
from tests.docs.harness import ROOT, Skip, backends, database, pages, rewritten, run_page

IN_CI = os.environ.get("CI") == "true"


RUNS = [
    (page, backend, first)
    for page in pages()
    for first, backend in zip([True] + [False] * 9, backends(page.read_text("utf-8")), strict=False)
]


@pytest.mark.parametrize(
    ("page", "backend", "shown"),
    RUNS,
    ids=[f"{p.relative_to(ROOT)}{'-' + b.split('=')[0] if b else ''}" for p, b, _ in RUNS],
)
def test_page_examples_run_and_show_their_real_output(
    page: Path, backend: str, shown: bool, tmp_path: Path
) -> None:
    try:
        with database(backend) as db:
            run = run_page(page, tmp_path, CHECKS, db, strict=not shown)
    except Skip as skip:
        if IN_CI:
            pytest.fail(f"{skip}; required under CI=true")
        pytest.skip(str(skip))
    if not shown:
        return  # the outputs shown are the first backend's; here every command succeeded
    old = page.read_text(encoding="utf-8")
    new = rewritten(page, run)
    diff = "".join(
        difflib.unified_diff(old.splitlines(True), new.splitlines(True), str(page), "run")
    )
    assert new == old, (
        "the page differs from its run (python -m tests.docs.harness --write "
        f"{page.relative_to(ROOT)}):\n{diff}"
    )


def test_every_check_is_used() -> None:
    used = set()
    for page in pages():
        text = page.read_text(encoding="utf-8")
        used |= {name for name in CHECKS if f"<!-- check: {name} -->" in text}
    assert used == set(CHECKS)

"""The revision a new catalog is created at is read from the revision files (the one no other
revision follows), without Alembic: a new revision moves it, with no constant to keep in step."""

from __future__ import annotations

import pytest

from entityworks.catalog._upgrade import HEAD, REVISIONS, newest_revision


def _revision(folder, file_name, revision, down):
    (folder / file_name).write_text(
        f'"""A revision."""\n\nrevision = "{revision}"\ndown_revision = {down}\n'
        "branch_labels = None\n\n\ndef upgrade() -> None:\n    pass\n",
        encoding="utf-8",
    )


def test_the_head_follows_the_chain_not_the_file_names(tmp_path):
    _revision(tmp_path, "b_first.py", "first", "None")
    _revision(tmp_path, "a_third.py", "third", '"second"')
    _revision(tmp_path, "c_second.py", "second", '"first"')
    assert newest_revision(tmp_path) == "third"
    _revision(tmp_path, "d_merge.py", "merged", '("third", "side")')
    _revision(tmp_path, "e_side.py", "side", '"first"')
    assert newest_revision(tmp_path) == "merged"


def test_two_heads_are_refused(tmp_path):
    _revision(tmp_path, "one.py", "one", "None")
    _revision(tmp_path, "two.py", "two", '"one"')
    _revision(tmp_path, "three.py", "three", '"one"')
    with pytest.raises(RuntimeError, match="expected one newest revision"):
        newest_revision(tmp_path)


def test_the_catalog_s_head_is_read_from_its_revision_files():
    assert REVISIONS.is_dir()
    assert HEAD == newest_revision(REVISIONS)
    assert any(HEAD in p.read_text(encoding="utf-8") for p in REVISIONS.glob("*.py"))

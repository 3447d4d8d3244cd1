"""A new SQLite catalog is built and stamped at the head revision in one transaction
(``catalog.upgrade._created_at_head``) instead of running the revisions: it must be the
database the revisions build, and the revisions must work on it afterwards."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from entityworks import Store
from entityworks.catalog import TABLES, MapRecord, open_catalog, upgrade_catalog
from entityworks.catalog import _upgrade as catalog_upgrade
from entityworks.catalog._upgrade import downgrade_catalog
from entityworks.migrate import VERSION_TABLE, current, diff, head


def _describe(path: Path) -> dict[tuple[str, str], Any]:
    """Everything SQLite keeps of each table and index: columns (types, NOT NULL,
    defaults, key positions), indexes and their columns, foreign keys, CHECK
    constraints, WITHOUT ROWID and STRICT, and the rows of entityworks' own tables."""
    conn = sqlite3.connect(path)
    engine = sa.create_engine(f"sqlite:///{path}")
    inspector = sa.inspect(engine)
    out: dict[tuple[str, str], Any] = {}
    for kind, name, table, sql in conn.execute(
        "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name"
    ):
        if kind == "table":
            checks = sorted(
                (c["name"], c["sqltext"]) for c in inspector.get_check_constraints(name)
            )
            out[(kind, name)] = (
                conn.execute(f'PRAGMA table_xinfo("{name}")').fetchall(),
                sorted(r[1:] for r in conn.execute(f'PRAGMA index_list("{name}")')),
                conn.execute(f'PRAGMA foreign_key_list("{name}")').fetchall(),
                checks,
                "WITHOUT ROWID" in sql.upper(),
                sql.upper().rstrip().endswith("STRICT"),
                conn.execute(f'SELECT * FROM "{name}"').fetchall()
                if name.startswith("entityworks_")
                else None,
            )
        else:
            out[(kind, name)] = (conn.execute(f'PRAGMA index_xinfo("{name}")').fetchall(), table)
    conn.close()
    engine.dispose()
    return out


def _through_revisions(path: Path) -> None:
    store = Store(path)
    try:
        upgrade_catalog(store)
    finally:
        store.close()


def test_head_and_version_table_are_alembics():
    assert catalog_upgrade.HEAD == head()
    assert catalog_upgrade.VERSION_TABLE == VERSION_TABLE


def test_a_new_catalog_is_the_one_the_revisions_build(tmp_path):
    _through_revisions(tmp_path / "revisions.db")
    open_catalog(tmp_path / "new.db").close()
    assert _describe(tmp_path / "new.db") == _describe(tmp_path / "revisions.db")


def test_a_new_catalog_takes_no_revision_and_no_alembic():
    """Opening a new catalog imports neither Alembic nor ``entityworks.migrate``."""
    code = (
        "import sys, tempfile, os\n"
        "from entityworks.catalog import open_catalog\n"
        "d = tempfile.mkdtemp()\n"
        "open_catalog(os.path.join(d, 'c.db')).close()\n"
        "print(sorted(m for m in sys.modules if m.startswith(('alembic', "
        "'entityworks.migrate'))))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_the_revisions_work_on_a_new_catalog(tmp_path):
    """Down a revision (with rows) and back up: the revisions handle the catalog built at
    head as they handle their own."""
    store = open_catalog(tmp_path / "new.db")
    try:
        from entityworks.catalog import generate_maps

        maps = [
            m
            for chunk in generate_maps("dungeon", 3, seed=5, params={"width": 30, "height": 20})
            for m in chunk
        ]
        store.insert_many(maps)
        assert downgrade_catalog(store, "0007_covering_indexes") == "0007_covering_indexes"
        assert upgrade_catalog(store) == head() == current(store)
        assert diff(store, list(TABLES.values())) == []
        assert [m.seed for m in store.select(MapRecord, order_by="id")] == [5, 6, 7]
    finally:
        store.close()
    _through_revisions(tmp_path / "revisions.db")
    assert {k: v for k, v in _describe(tmp_path / "new.db").items() if k[0] == "index"} == {
        k: v for k, v in _describe(tmp_path / "revisions.db").items() if k[0] == "index"
    }


def test_a_database_with_a_table_goes_through_the_revisions(tmp_path):
    """Only a database without any table is created at head; one holding a table of its
    own gets the catalog through the revisions (which keep that table)."""
    path = tmp_path / "mine.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT)")
        conn.execute("INSERT INTO notes VALUES (1, 'kept')")
    calls: list[str] = []
    original = catalog_upgrade.upgrade_catalog

    def spy(store: Store, revision: str = "head") -> str | None:
        calls.append(revision)
        return original(store, revision)

    catalog_upgrade.upgrade_catalog = spy  # type: ignore[assignment]
    try:
        store = open_catalog(path)
    finally:
        catalog_upgrade.upgrade_catalog = original  # type: ignore[assignment]
    try:
        assert calls == ["head"] and current(store) == head()
    finally:
        store.close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT text FROM notes").fetchall() == [("kept",)]


def test_an_existing_catalog_is_left_at_its_revision_path(tmp_path):
    """Opening a catalog that exists runs the revisions' path (nothing to do at head)."""
    open_catalog(tmp_path / "c.db").close()
    before = _describe(tmp_path / "c.db")
    store = open_catalog(tmp_path / "c.db")
    try:
        assert current(store) == head()
    finally:
        store.close()
    assert _describe(tmp_path / "c.db") == before

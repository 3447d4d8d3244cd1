"""``entityworks verify`` and ``generate --mix-versions`` as real processes: exit status 0 for
a catalog whose maps rebuild as stored, 1 and one line per finding when one differs, errors
in one line on stderr without a traceback; on each backend. Rows are changed through the
database's own driver."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from tests.entityworks.cli.test_cli import run_process


def _raw(url: str, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    """``sql`` (``?`` placeholders) through the driver's own DB-API connection."""
    engine = sa.create_engine(url)
    try:
        conn = engine.raw_connection()
        try:
            if engine.dialect.dbapi.paramstyle in ("format", "pyformat"):  # type: ignore[union-attr]
                sql = sql.replace("?", "%s")
            cursor = conn.cursor()
            cursor.execute(sql, params)
            rows = list(cursor.fetchall()) if cursor.description else []
            conn.commit()
            return rows
        finally:
            conn.close()
    finally:
        engine.dispose()


def _generate(url: str, *extra: str) -> Any:
    return run_process(
        "generate", "dungeon", "-n", "3", "--width", "30", "--height", "20",
        "-j", "1", "--no-progress", "--db", url, *extra,
    )  # fmt: skip


def _one_line_error(done: Any) -> None:
    assert done.returncode != 0
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "Traceback" not in done.stderr + done.stdout


def test_verify_exit_status_and_lines(backend_url):
    assert _generate(backend_url, "--seed", "5").returncode == 0
    clean = run_process("verify", "--no-progress", "--db", backend_url)
    assert clean.returncode == 0, clean.stderr
    assert clean.stdout.count("\n") == 1 and clean.stdout.startswith("verified 3 maps")

    grid = _raw(backend_url, "SELECT grid FROM maps WHERE seed = ?", 7)[0][0]
    _raw(backend_url, "UPDATE maps SET grid = ? WHERE seed = ?", bytes(grid), 5)
    _raw(backend_url, "UPDATE maps SET generator_version = ? WHERE seed = ?", "0.0.1", 6)
    found = run_process("verify", "--no-progress", "--db", backend_url)
    assert found.returncode == 1 and found.stderr == ""
    lines = found.stdout.splitlines()
    assert len(lines) == 3  # one per finding, then the summary
    assert "seed 5" in lines[0] and "edited" in lines[0]
    assert "seed 6" in lines[1] and "version" in lines[1] and "0.0.1" in lines[1]
    assert lines[2].startswith("verified 3 maps") and "2 differ" in lines[2]

    only = run_process("verify", "-w", "seed=7", "--no-progress", "--db", backend_url)
    assert only.returncode == 0 and only.stdout.startswith("verified 1 map ")

    # another version in the catalog: generate refuses, stores nothing; --mix-versions stores
    refused = _generate(backend_url, "--seed", "20")
    _one_line_error(refused)
    assert "0.0.1" in refused.stderr and "--mix-versions" in refused.stderr
    assert _raw(backend_url, "SELECT count(*) FROM maps")[0][0] == 3
    assert _generate(backend_url, "--seed", "20", "--mix-versions").returncode == 0
    assert _raw(backend_url, "SELECT count(*) FROM maps")[0][0] == 6

    # --fill re-stamps the map the installed generator rebuilds; the edited one stays
    filled = run_process("verify", "--fill", "--no-progress", "--db", backend_url)
    assert filled.returncode == 1 and "recorded for 1" in filled.stdout
    assert _raw(backend_url, "SELECT count(*) FROM maps WHERE generator_version = ?", "0.0.1") == [
        (0,)
    ]


def test_verify_errors_in_one_line(tmp_path):
    _one_line_error(run_process("verify", "--db", str(tmp_path / "none.db")))
    plain = tmp_path / "plain.db"
    engine = sa.create_engine(f"sqlite:///{plain}")
    with engine.begin() as conn:
        conn.execute(sa.text("CREATE TABLE t (x INTEGER)"))
    engine.dispose()
    no_catalog = run_process("verify", "--db", str(plain))
    _one_line_error(no_catalog)
    assert "no level catalog" in no_catalog.stderr
    assert _generate(str(tmp_path / "c.db"), "--seed", "1").returncode == 0
    bad = run_process("verify", "-w", "nosuch=1", "--db", str(tmp_path / "c.db"))
    _one_line_error(bad)

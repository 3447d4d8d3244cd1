"""A command run inside a long-lived process (``CliRunner``, a notebook, a program calling
the group) closes every connection it opened when it ends, refused or not: each command's
Store is closed with its click context. Counted from the operating system's side: the
process's own TCP connections to the server's port (Linux's /proc), so that no other
test's connections, in this process or another, count."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
import sqlalchemy as sa
from click.testing import CliRunner

from entityworks.cli import cli

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="counts sockets through Linux's /proc"
)


def _connections(port: int) -> int:
    """This process's established TCP connections to ``port`` (IPv4 and IPv6)."""
    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:  # closed meanwhile
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    count = 0
    for table in ("/proc/self/net/tcp", "/proc/self/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            parts = line.split()
            remote_port = int(parts[2].rsplit(":", 1)[1], 16)
            established = parts[3] == "01"
            if established and remote_port == port and parts[9] in inodes:
                count += 1
    return count


@pytest.fixture(params=["postgresql", "mariadb"])
def server(request: pytest.FixtureRequest) -> str:
    return request.getfixturevalue("pg_url" if request.param == "postgresql" else "mariadb_url")


def test_every_command_closes_its_connections(server: str, tmp_path: Path) -> None:
    port = sa.make_url(server).port or (5432 if server.startswith("postgresql") else 3306)
    runner = CliRunner()
    csv = tmp_path / "items.csv"
    csv.write_text("id,name\n1,one\n2,two\n")
    xml, parquet = tmp_path / "items.xml", tmp_path / "items.parquet"
    # (arguments, the exit status: 0 done, 2 refused)
    commands: list[tuple[list[str], int]] = [
        (["insert", "conn_items", str(csv), "--pk", "id", "--db", server], 0),
        (["tables", "--db", server], 0),
        (["rows", "conn_items", "--db", server], 0),
        (["query", "conn_items", "--db", server], 0),
        (["schema", "conn_items", "--db", server], 0),
        (["export-xml", "conn_items", str(xml), "--db", server], 0),
        (["parquet", "conn_items", str(parquet), "--db", server], 0),
        (["codegen", "--db", server, "conn_items"], 0),
        (["sql", "SELECT count(*) FROM conn_items", "--db", server], 0),
        # refused: the rows are there already, or there is no such table
        (["import-parquet", str(parquet), "conn_items", "--db", server], 2),
        (["import-xml", str(xml), "--db", server], 2),
        (["query", "no_such_table", "--db", server], 2),
        (["schema", "no_such_table", "--db", server], 2),
    ]
    before = _connections(port)
    try:
        for args, status in commands:
            result = runner.invoke(cli, args)
            assert result.exit_code == status, (args, result.output)
            assert _connections(port) == before, (args, result.output)
    finally:
        engine = sa.create_engine(server)
        with engine.begin() as conn:
            conn.execute(sa.text("DROP TABLE IF EXISTS conn_items"))
        engine.dispose()

"""``entityworks browse DB``: starts Datasette with the plugin, opens nothing, stops on a
signal; refuses what Datasette cannot serve with one error line."""

from __future__ import annotations

import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner

from entityworks.cli import cli
from tests.web.conftest import BIN, Server, free_port, need_datasette


def test_browse_serves_the_catalog_with_the_plugin(catalog_file: Path, tmp_path: Path):
    need_datasette()
    port = free_port()
    command = [str(BIN / "entityworks"), "browse", str(catalog_file), "--port", str(port)]
    server = Server(command, port, tmp_path)
    try:
        with urllib.request.urlopen(f"{server.base}/-/plugins.json", timeout=30) as response:
            plugins = response.read().decode()
        assert '"entityworks"' in plugins
        url = f"{server.base}/-/entityworks/{catalog_file.stem}/maps/1/thumb.png"
        with urllib.request.urlopen(url, timeout=30) as response:
            assert response.status == 200 and response.headers["content-type"] == "image/png"
        server.process.send_signal(signal.SIGINT)  # Ctrl-C stops it cleanly
        assert server.process.wait(30) == 0
    finally:
        server.stop()
    log = server.log.read_text()
    assert "Traceback" not in log and f"127.0.0.1:{port}" in log


@pytest.mark.parametrize(
    ("argument", "message"),
    [
        (
            "postgresql+psycopg://me:secret@db/levels",
            "Datasette browses SQLite files; copy the catalog into one first",
        ),
        ("missing.db", "no database at missing.db"),
    ],
)
def test_browse_refuses_what_datasette_cannot_serve(argument: str, message: str) -> None:
    result = CliRunner().invoke(cli, ["browse", argument])
    assert result.exit_code == 2 and message in result.stderr
    assert len(result.stderr.splitlines()) == 1 and "secret" not in result.stderr


def test_browse_refuses_a_file_that_is_not_sqlite(tmp_path: Path) -> None:
    text = tmp_path / "notes.db"
    text.write_text("not a database")
    result = subprocess.run(
        [sys.executable, "-m", "entityworks", "browse", str(text)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert result.stderr == f"error: {text} is not an SQLite database\n"

"""``entityworks browse PATH``: a catalog file named like one of Datasette's options is served as
a database of that name, never read as the option (``./--root`` would start Datasette with
the all-powerful root actor, ``./--load-extension=x.db`` would load a shared library)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.web.conftest import BIN, Server, build_catalog, free_port, need_datasette


def _get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


@pytest.fixture(scope="module")
def catalog_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_catalog(tmp_path_factory.mktemp("browse-paths") / "levels.db")


@pytest.mark.parametrize("name", ["--root", "--load-extension=x.db", "-h"])
def test_a_file_named_like_an_option_is_served_as_a_database(
    name: str, catalog_copy: Path, tmp_path: Path
) -> None:
    need_datasette()
    shutil.copyfile(catalog_copy, tmp_path / name)
    # what the option would load, were it read as one: a file that is no shared library
    (tmp_path / "x.db").write_bytes(b"not a library")
    port = free_port()
    command = [str(BIN / "entityworks"), "browse", f"./{name}", "--port", str(port)]
    server = Server(command, port, tmp_path)
    try:
        status, body = _get(f"{server.base}/-/actor.json")
        assert status == 200 and json.loads(body) == {"actor": None}
        status, body = _get(f"{server.base}/-/databases.json")
        assert status == 200
        served = [d for d in json.loads(body) if d["name"] != "_internal"]
        stem = Path(name).stem if name.endswith(".db") else name
        assert [(d["name"], d["path"]) for d in served] == [(stem, str(tmp_path / name))]
        # served for what it is: a catalog whose thumbnails come from the plugin
        from datasette.utils import tilde_encode

        status, _ = _get(f"{server.base}/{tilde_encode(stem)}/maps.json")
        assert status == 200
        # root-only pages stay closed: nobody was made root
        status, _ = _get(f"{server.base}/-/permissions")
        assert status == 403
    finally:
        server.stop()
    log = server.log.read_text()
    assert "auth-token" not in log and "Traceback" not in log


@pytest.mark.parametrize(
    ("name", "decoy"), [("a#b.db", "a"), ("c?d.db", "c"), ("e%41f.db", "eAf.db")]
)
def test_a_path_datasette_would_open_as_another_file_is_refused(
    name: str, decoy: str, catalog_copy: Path, tmp_path: Path
) -> None:
    """Datasette opens "file:PATH?mode=ro" unquoted: for "a#b.db" it would open, and
    create, the file "a" and serve it empty. browse says so instead of starting."""
    need_datasette()
    shutil.copyfile(catalog_copy, tmp_path / name)
    try:
        result = subprocess.run(
            [sys.executable, "-m", "entityworks", "browse", name, "--port", str(free_port())],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"browse {name} started a server")
    assert result.returncode == 2
    assert result.stderr == (
        f"error: {name}: Datasette cannot open a file whose path holds '#', '?' or '%' and "
        "two hex digits (it would open another file); rename or copy it\n"
    )
    assert not (tmp_path / decoy).exists()

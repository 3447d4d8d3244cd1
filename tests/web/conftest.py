"""A small real catalog, a real Datasette serving it, and headless Chromium.

Datasette, Chromium and chromedriver are needed; without them these tests skip, except
under ``CI=true``, where a missing one is a failure (``.ci/run`` installs them).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import IN_CI
from tests.entityworks.conftest import pg_url  # noqa: F401  (a private PostgreSQL database)

BIN = Path(sys.executable).parent


def need(condition: bool, message: str) -> None:
    """Skip (fail under CI) unless ``condition``."""
    if not condition:
        if IN_CI:
            pytest.fail(message + " (required under CI=true)")
        pytest.skip(message)


def need_datasette() -> None:
    need(
        importlib.util.find_spec("datasette") is not None,
        'Datasette is not installed: pip install -e ".[test]"',
    )


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def build_catalog(path: Path) -> Path:
    """Every kind of map (one large), placements, solved sudokus and an entropy report."""
    from entityworks.catalog import (
        generate_into,
        open_catalog,
        store_entropy,
        store_placements,
        store_sudokus,
    )
    from generators import sudoku

    store = open_catalog(path)
    generate_into(store, "caves", 2, seed=1)
    generate_into(store, "dungeon", 2, seed=3, params={"width": 80, "height": 50})
    generate_into(store, "cellular", 2, seed=7)
    generate_into(store, "islands", 1, seed=2)
    generate_into(store, "cellular", 1, seed=8, params={"width": 300, "height": 120})
    store_placements(store, [1, 3], 3, 2)
    entries = [
        sudoku.NamedPuzzle(f"generated {i}", sudoku.generate(28 + i, seed=i).puzzle, 0)
        for i in range(3)
    ]
    store_sudokus(store, "generated", entries, [sudoku.solve(e.puzzle) for e in entries])
    sample = path.with_name("sample.bin")
    sample.write_bytes(bytes(range(256)) * 40 + b"entityworks" * 300)
    store_entropy(store, [sample])
    store.close()
    return path


@pytest.fixture(scope="session")
def catalog_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_catalog(tmp_path_factory.mktemp("web") / "levels.db")


class Server:
    """``datasette serve`` (the console script a user runs) in a child process."""

    def __init__(self, command: list[str], port: int, cwd: Path) -> None:
        self.port = port
        self.base = f"http://127.0.0.1:{port}"
        self.log = cwd / f"server-{port}.log"
        self._log = open(self.log, "wb")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(
            command, cwd=cwd, stdout=self._log, stderr=subprocess.STDOUT
        )
        deadline = time.monotonic() + 60
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited: {self.log.read_text()}")
            try:
                with urllib.request.urlopen(self.base + "/-/versions.json", timeout=2):
                    return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError(f"server did not start: {self.log.read_text()}") from None
                time.sleep(0.2)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(20)
        self._log.close()


@pytest.fixture(scope="session")
def server(catalog_file: Path) -> Iterator[Server]:
    """Datasette on a free port, started exactly as a user would: ``datasette levels.db``."""
    need_datasette()
    port = free_port()
    running = Server(
        [str(BIN / "datasette"), "serve", catalog_file.name, "--port", str(port)],
        port,
        catalog_file.parent,
    )
    yield running
    running.stop()


CHROMIUM_FLAGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1400,1000",
]


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="session")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[object]:
    """Headless Debian Chromium driven by chromedriver through Selenium (no download)."""
    need(
        importlib.util.find_spec("selenium") is not None,
        'selenium is not installed: pip install -e ".[test]"',
    )
    chromium, driver_path = _chromium(), shutil.which("chromedriver")
    need(chromium is not None, "chromium is not installed (apt-get install chromium)")
    need(driver_path is not None, "chromedriver is not installed (apt-get install chromium-driver)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium  # type: ignore[assignment]
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}")
    os.environ.setdefault("SE_AVOID_STATS", "true")
    driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()

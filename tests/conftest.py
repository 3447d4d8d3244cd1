"""Shared fixtures: the shared data directory, CI-aware skipping and the one-line summary of
what a run skipped and how to enable it."""

from __future__ import annotations

import os
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

IN_CI = os.environ.get("CI", "").lower() == "true"

# Property tests judge values, never speed: no per-example deadline and no "too slow" health
# check, so a loaded machine cannot fail them. Under CI the examples are derived from each
# test's name (the same every run, no example database): a CI verdict is reproducible, and
# local runs keep exploring new examples.
settings.register_profile(
    "entityworks", deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "entityworks-ci",
    parent=settings.get_profile("entityworks"),
    derandomize=True,
    database=None,
    print_blob=True,
)
settings.load_profile("entityworks-ci" if IN_CI else "entityworks")
DATA_DIR = Path(
    os.environ.get(
        "ENTITYWORKS_DATA_DIR", Path(__file__).resolve().parents[1].parent / "shared" / "data"
    )
)


def require_data(name: str) -> Path:
    """Return the path of a shared data file; skip without it, fail under CI."""
    path = DATA_DIR / name
    if not path.is_file():
        message = f"shared data file {path} is missing"
        if IN_CI:
            pytest.fail(message + " (required under CI=true)")
        pytest.skip(message)
    return path


@pytest.fixture
def shared_data():
    """Callable fixture: ``shared_data("top95.txt")`` gives the file's path."""
    return require_data


#: What a skip needs, recognised from its reason, and how to provide it. A reason matching
#: none of them is a test that does not apply here (another backend's behaviour, a device
#: this machine lacks) and is counted as such.
RESOURCES: list[tuple[str, str, str]] = [
    (
        r"ENTITYWORKS_TEST_POSTGRES_URL|^postgresql at ",
        "PostgreSQL",
        "set ENTITYWORKS_TEST_POSTGRES_URL=postgresql+psycopg://postgres@127.0.0.1:5432/test",
    ),
    (
        r"ENTITYWORKS_TEST_MARIADB_URL|^mariadb at ",
        "MariaDB",
        "set ENTITYWORKS_TEST_MARIADB_URL=mysql+pymysql://root@127.0.0.1:3306/test",
    ),
    (r"compared only when all three", "PostgreSQL and MariaDB together", "set both URLs"),
    (r"shared data file", "data sets", "put them in ../shared/data or set ENTITYWORKS_DATA_DIR"),
    (r"\bent program", "ent", "apt-get install ent"),
    (r"mono|mcs", "Mono", "apt-get install mono-mcs mono-runtime libmono-system-data4.0-cil"),
    (r"chromium|chromedriver|selenium", "Chromium", "apt-get install chromium chromium-driver"),
    (r"tmux", "tmux", "apt-get install tmux"),
    (r"jq is not", "jq", "apt-get install jq"),
    (r"needs root|user 'nobody'", "root", "run as root"),
    # each package under the extra that installs it (pyproject.toml's optional-dependencies;
    # tests/test_skip_reasons.py checks these hints and every skip reason naming an extra)
    (r"\bdistributed\b", "Dask", "pip install -e '.[dask]'; the test extra has it"),
    (
        r"could not import '(pyarrow|pandas|numpy|scipy|lxml|sqlalchemy|alembic|numba)",
        "entityworks' own dependencies",
        "pip install -e .",
    ),
    (
        r"is not installed \(pip|pip install|setuptools|datasette|selenium",
        "Python packages",
        "pip install -e '.[test]'",
    ),
]


def _skip_reason(report: Any) -> str:
    longrepr = report.longrepr
    if isinstance(longrepr, tuple) and len(longrepr) == 3:
        return str(longrepr[2]).removeprefix("Skipped: ")
    return str(longrepr)


def skip_summary(reasons: list[str]) -> str | None:
    """One line naming what the skipped tests needed and how to enable each, or ``None``."""
    if not reasons:
        return None
    needs: Counter[str] = Counter()
    how: dict[str, str] = {}
    for reason in reasons:
        for pattern, name, enable in RESOURCES:
            if re.search(pattern, reason, re.IGNORECASE):
                needs[name] += 1
                how[name] = enable
                break
        else:
            needs["does not apply here"] += 1
    parts = [
        f"{count} need {name} ({how[name]})" if name in how else f"{count} {name}"
        for name, count in needs.most_common()
    ]
    return (
        f"skipped {len(reasons)}: "
        + "; ".join(parts)
        + ". Details: pytest -rs. Under CI=true a missing resource fails instead."
    )


def pytest_terminal_summary(terminalreporter: Any) -> None:
    reasons = [_skip_reason(r) for r in terminalreporter.stats.get("skipped", [])]
    line = skip_summary(reasons)
    if line is not None:
        terminalreporter.write_line(line)


def pytest_configure(config: pytest.Config) -> None:
    """A bad ``ENTITYWORKS_TEST_DB_PREFIX`` stops the run before any test, in one line, rather
    than failing every server test (and the docs harness) one by one."""
    from tests.databases import BadPrefix, database_prefix

    try:
        database_prefix()
    except BadPrefix as exc:
        raise pytest.UsageError(str(exc)) from None


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """``-n`` schedules by work stealing unless ``--dist`` says otherwise: a worker that runs
    out takes tests queued for the other, so both finish together."""
    if getattr(config.option, "numprocesses", None) and config.option.dist == "no":
        config.option.dist = "worksteal"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The long tests first (``slow``, then the docs pages, each a whole tutorial): workers
    that start with them finish together, where a long test drawn last leaves the other
    worker idle while it runs. The order within each group is kept."""

    def weight(item: pytest.Item) -> int:
        if item.get_closest_marker("slow") is not None:
            return 0
        return 1 if item.nodeid.startswith("tests/docs/test_examples.py") else 2

    items.sort(key=weight)
    if os.environ.get(FLOORS_ENV, "") == "1":
        left, kept = [], []
        for item in items:
            (left if _floor_server_test(item) else kept).append(item)
        if left:
            config.hook.pytest_deselected(items=left)
            items[:] = kept


#: Set to 1 by ``.ci/run`` for its second run of the suite, on the lowest version of every
#: dependency: a test of another package than the SQL layer and migrations that runs on a
#: PostgreSQL or MariaDB server runs there on SQLite only. The drivers' and Alembic's floors
#: are those layers' calls, which their own tests make on every backend; the other packages
#: reach a server through them (their server runs are the newest versions' run).
FLOORS_ENV = "ENTITYWORKS_TEST_FLOORS"
_FLOOR_SERVER_DIRS = ("tests/entityworks/sql/", "tests/entityworks/migrate/")


def _floor_server_test(item: pytest.Item) -> bool:
    """``item`` runs on a server, outside the SQL layer's and the migrations' tests."""
    if item.nodeid.startswith(_FLOOR_SERVER_DIRS):
        return False
    names = getattr(item, "fixturenames", ())
    if "pg_url" in names or "mariadb_url" in names:
        return True
    callspec = getattr(item, "callspec", None)
    params = callspec.params.values() if callspec is not None else ()
    return any(p in ("postgresql", "mariadb", "postgres") for p in params if isinstance(p, str))


@pytest.fixture(autouse=True)
def _sigint_as_it_was() -> Any:
    """SIGINT's handler back as it was after each test: a command run in-process (click's
    CliRunner) that ends in ``error: aborted`` ignores SIGINT from then on, as a process
    that is ending should, and every program this test process starts afterwards would
    inherit that (a Ctrl-C test's child would never see its interrupt)."""
    import signal

    before = signal.getsignal(signal.SIGINT)
    yield
    if signal.getsignal(signal.SIGINT) is not before:
        signal.signal(signal.SIGINT, before)

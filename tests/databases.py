"""A private database on a shared server, created for a run and dropped after it: the test
fixtures and the docs harness both use it, so parallel runs never see each other's tables.

Every name starts with ``ENTITYWORKS_TEST_DB_PREFIX`` (default ``ew_test_``), then 12 hex
digits: on a server shared with other work, a prefix of your own keeps the suite's databases
recognisable (and a leftover of a killed run easy to find). The server URL's own database is
only connected to (it must exist); the private ones are created beside it.
"""

from __future__ import annotations

import contextlib
import os
import re
import uuid
from collections.abc import Iterator

import sqlalchemy as sa

PREFIX_ENV = "ENTITYWORKS_TEST_DB_PREFIX"
DEFAULT_PREFIX = "ew_test_"
#: Lower-case letters, digits and underscores, from a letter or underscore, at most 40: with
#: the 12 hex digits (and the docs harness's ``docs_``) a name stays within PostgreSQL's 63
#: and MariaDB's 64 characters, needs no quoting in a shell's createdb/DROP DATABASE, and is
#: one name on every file system (MariaDB keeps a database as a directory).
PREFIX_PATTERN = re.compile(r"[a-z_][a-z0-9_]{0,39}")


class Unreachable(Exception):
    """The server named by the URL cannot be reached (its message hides the password)."""


class BadPrefix(ValueError):
    """``ENTITYWORKS_TEST_DB_PREFIX`` is not a usable start of a database name."""


#: How long a statement in a private PostgreSQL database waits for a lock (its default).
LOCK_TIMEOUT = "3min"


def database_prefix() -> str:
    """The start of every private database's name: ``ENTITYWORKS_TEST_DB_PREFIX`` when set
    (checked against :data:`PREFIX_PATTERN`), else ``ew_test_``."""
    prefix = os.environ.get(PREFIX_ENV, "")
    if not prefix:
        return DEFAULT_PREFIX
    if not PREFIX_PATTERN.fullmatch(prefix):
        raise BadPrefix(
            f"{PREFIX_ENV}={prefix!r} is not a database name prefix: use 1 to 40 "
            "lower-case letters, digits and underscores, not starting with a "
            "digit (e.g. ci_7_)"
        )
    return prefix


@contextlib.contextmanager
def private_database(url: str, prefix: str | None = None) -> Iterator[str]:
    """The URL of a new database ``prefix`` (default :func:`database_prefix`) + 12 hex digits
    on ``url``'s server, dropped on exit; PostgreSQL drops it even while connections a test
    leaked are still open."""
    if prefix is None:
        prefix = database_prefix()
    base = sa.make_url(url)
    name = prefix + uuid.uuid4().hex[:12]
    admin = sa.create_engine(base, isolation_level="AUTOCOMMIT")
    quote = admin.dialect.identifier_preparer.quote
    try:
        with admin.connect() as conn:
            conn.exec_driver_sql(f"CREATE DATABASE {quote(name)}")
            if base.get_backend_name() == "postgresql":
                # a statement that waits this long for a lock fails instead of hanging the
                # suite (a failed test's open read, then its fixture's DROP TABLE)
                conn.exec_driver_sql(
                    f"ALTER DATABASE {quote(name)} SET lock_timeout = '{LOCK_TIMEOUT}'"
                )
    except sa.exc.OperationalError as exc:
        admin.dispose()
        shown = base.render_as_string(hide_password=True)
        raise Unreachable(f"{base.get_backend_name()} at {shown} is unreachable: {exc}") from exc
    try:
        yield base.set(database=name).render_as_string(hide_password=False)
    finally:
        force = " WITH (FORCE)" if base.get_backend_name() == "postgresql" else ""
        with admin.connect() as conn:
            conn.exec_driver_sql(f"DROP DATABASE IF EXISTS {quote(name)}{force}")
        admin.dispose()

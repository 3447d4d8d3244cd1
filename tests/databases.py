"""A private database on a shared server, created for a run and dropped after it: the test
fixtures and the docs harness both use it, so parallel runs never see each other's tables."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator

import sqlalchemy as sa


class Unreachable(Exception):
    """The server named by the URL cannot be reached (its message hides the password)."""


@contextlib.contextmanager
def private_database(url: str, prefix: str = "ew_test_") -> Iterator[str]:
    """The URL of a new database ``prefix`` + 12 hex digits on ``url``'s server, dropped on
    exit; PostgreSQL drops it even while connections a test leaked are still open."""
    base = sa.make_url(url)
    name = prefix + uuid.uuid4().hex[:12]
    admin = sa.create_engine(base, isolation_level="AUTOCOMMIT")
    quote = admin.dialect.identifier_preparer.quote
    try:
        with admin.connect() as conn:
            conn.exec_driver_sql(f"CREATE DATABASE {quote(name)}")
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

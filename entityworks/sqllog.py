"""SQL logging through the standard :mod:`logging` module.

The ``entityworks.sql`` logger receives every statement a :class:`~entityworks.store.Store`
sends: those SQLAlchemy executes (through a ``before_cursor_execute`` listener on the engine)
and those the Store hands to the driver itself, which SQLAlchemy's ``echo`` never sees: the
bulk ``executemany`` of SQLite, PostgreSQL's ``COPY`` and SQLite's single-row calls.

* INFO: the statement text, and for a batch how many rows it carries. Never a value: values
  travel as bound parameters, apart from the text.
* DEBUG: the bound values as well (shortened), in a second record. Values can be private
  data: enable DEBUG on ``entityworks.sql`` only where its output may hold them.

No record holds a password: statements do not contain connection URLs, and the Store's
own records (``entityworks.store``) show its URL with the password hidden.
"""

from __future__ import annotations

import logging
from typing import Any

#: The package logger; its children are ``entityworks.sql`` and ``entityworks.store``.
package_logger = logging.getLogger("entityworks")
package_logger.addHandler(logging.NullHandler())  # a library never prints on its own
sql_logger = logging.getLogger("entityworks.sql")
store_logger = logging.getLogger("entityworks.store")

INFO = logging.INFO
DEBUG = logging.DEBUG
#: How much of the bound values one DEBUG record shows.
VALUES_LIMIT = 1_000


def shorten(values: Any, limit: int = VALUES_LIMIT) -> str:
    """``repr(values)`` cut to ``limit`` characters (a batch can hold millions of rows)."""
    if isinstance(values, list | tuple) and len(values) > 20:
        text = repr(list(values[:20]))[:-1] + f", ... {len(values) - 20} more]"
    else:
        text = repr(values)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def log_statement(statement: str, *, rows: int | None = None, how: str = "executemany",
                  values: Any = None) -> None:
    """Log one statement the Store sends (``rows``: a batch of that many rows, sent by
    ``how``); the values only at DEBUG. Call it only when INFO is enabled."""
    if rows is None:
        sql_logger.info("%s", statement)
    else:
        sql_logger.info("%s [%s, %d rows]", statement, how, rows)
    if values is not None and sql_logger.isEnabledFor(DEBUG):
        sql_logger.debug("values: %s", shorten(values))


def before_cursor_execute(_conn: Any, _cursor: Any, statement: str, parameters: Any,
                          _context: Any, executemany: bool) -> tuple[str, Any]:
    """The engine listener: statements SQLAlchemy executes (``retval=True``, so that the
    Store can tell it from listeners of its own user)."""
    if sql_logger.isEnabledFor(INFO):
        log_statement(statement, rows=len(parameters) if executemany else None,
                      values=parameters if parameters else None)
    return statement, parameters


def commit(_conn: Any) -> None:
    """The engine listener for commits, which the driver makes without a statement."""
    if sql_logger.isEnabledFor(INFO):
        sql_logger.info("COMMIT")


def rollback(_conn: Any) -> None:
    """The engine listener for rollbacks (see :func:`commit`)."""
    if sql_logger.isEnabledFor(INFO):
        sql_logger.info("ROLLBACK")


def watch(engine: Any) -> None:
    """Log the statements, commits and rollbacks of ``engine`` (once, however many Stores
    share it)."""
    from sqlalchemy import event

    if not event.contains(engine, "before_cursor_execute", before_cursor_execute):
        event.listen(engine, "before_cursor_execute", before_cursor_execute, retval=True)
        event.listen(engine, "commit", commit)
        event.listen(engine, "rollback", rollback)


__all__ = ["before_cursor_execute", "commit", "log_statement", "package_logger", "rollback",
           "sql_logger", "store_logger", "watch"]

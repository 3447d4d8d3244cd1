"""SQL logging through the standard :mod:`logging` module.

The ``entityworks.sql`` logger receives every statement a :class:`~entityworks.sql.store.Store`
sends: those SQLAlchemy executes (through the dialect's ``do_execute`` events, which leave
``before_cursor_execute`` to the user: a listener there turns the Store's SQLite single-row
path off) and those the Store hands to the driver itself, which SQLAlchemy's ``echo`` never
sees: the bulk ``executemany`` of SQLite, PostgreSQL's ``COPY`` and SQLite's single-row
calls.

* INFO: the statement text, and for a batch how many rows it carries. Never a value: values
  travel as bound parameters, apart from the text.
* DEBUG: the bound values as well (shortened), in a second record. Values can be private
  data: enable DEBUG on ``entityworks.sql`` only where its output may hold them.

No record holds a password: statements do not contain connection URLs, and the Store's
own records (``entityworks.sql.store``) show its URL with the password hidden.
"""

from __future__ import annotations

import logging
from typing import Any

#: The package logger; its children are ``entityworks.sql`` and ``entityworks.sql.store``.
package_logger: logging.Logger = logging.getLogger("entityworks")
package_logger.addHandler(logging.NullHandler())  # a library never prints on its own
sql_logger: logging.Logger = logging.getLogger("entityworks.sql")
store_logger: logging.Logger = logging.getLogger("entityworks.sql.store")

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


def log_statement(
    statement: str, *, rows: int | None = None, how: str = "executemany", values: Any = None
) -> None:
    """Log one statement the Store sends (``rows``: a batch of that many rows, sent by
    ``how``); the values only at DEBUG. Call it only when INFO is enabled."""
    if rows is None:
        sql_logger.info("%s", statement)
    else:
        sql_logger.info("%s [%s, %d rows]", statement, how, rows)
    if values is not None and sql_logger.isEnabledFor(DEBUG):
        sql_logger.debug("values: %s", shorten(values))


def do_execute(_cursor: Any, statement: str, parameters: Any, _context: Any) -> None:
    """The dialect listener for one statement with parameters (SQLAlchemy executes it)."""
    if sql_logger.isEnabledFor(INFO):
        log_statement(statement, values=parameters if parameters else None)


def do_executemany(_cursor: Any, statement: str, parameters: Any, _context: Any) -> None:
    """The dialect listener for a batch (``executemany``)."""
    if sql_logger.isEnabledFor(INFO):
        log_statement(statement, rows=len(parameters), values=parameters)


def do_execute_no_params(_cursor: Any, statement: str, _context: Any) -> None:
    """The dialect listener for a statement without parameters."""
    if sql_logger.isEnabledFor(INFO):
        log_statement(statement)


def commit(_conn: Any) -> None:
    """The engine listener for commits, which the driver makes without a statement."""
    if sql_logger.isEnabledFor(INFO):
        sql_logger.info("COMMIT")


def rollback(_conn: Any) -> None:
    """The engine listener for rollbacks (see :func:`commit`)."""
    if sql_logger.isEnabledFor(INFO):
        sql_logger.info("ROLLBACK")


def logged(statement: str, rows: Any, how: str, engine: Any) -> Any:
    """Log a batch the Store hands to the driver itself, on ``entityworks.sql`` and, under
    ``echo=True``, in SQLAlchemy's echo log too (which would not see it); returns ``rows``,
    made a list when it was an iterator."""
    echo = engine.echo
    if echo or sql_logger.isEnabledFor(INFO):
        rows = rows if isinstance(rows, list) else list(rows)
        if sql_logger.isEnabledFor(INFO):
            log_statement(statement, rows=len(rows), how=how, values=rows)
        if echo:
            engine.logger.info("%s [%s, %d rows]", statement, how, len(rows))
    return rows


def listened(engine: Any) -> bool:
    """True when someone listens to statements (our SQL logger uses other events)."""
    dispatch = engine.dispatch
    return bool(dispatch.before_cursor_execute or dispatch.after_cursor_execute)


def watch(engine: Any) -> None:
    """Log the statements, commits and rollbacks of ``engine`` (once, however many Stores
    share it)."""
    from sqlalchemy import event

    if not event.contains(engine, "do_execute", do_execute):
        event.listen(engine, "do_execute", do_execute)
        event.listen(engine, "do_executemany", do_executemany)
        event.listen(engine, "do_execute_no_params", do_execute_no_params)
        event.listen(engine, "commit", commit)
        event.listen(engine, "rollback", rollback)


__all__ = [
    "commit",
    "do_execute",
    "do_execute_no_params",
    "do_executemany",
    "listened",
    "log_statement",
    "logged",
    "package_logger",
    "rollback",
    "sql_logger",
    "store_logger",
    "watch",
]

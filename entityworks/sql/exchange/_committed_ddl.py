"""Imports where DDL commits at once (MariaDB): tables created for an import are marked
as that import's until it is done, so that a failed or killed import leaves nothing of its
own, and nothing another writer committed is ever dropped (:func:`import_committed_ddl`).

What this needs of the database (named locks, table comments, its foreign keys, tables
locked against other sessions) are methods of the store's
:class:`~entityworks.sql.backends.base.Backend`.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from typing import TYPE_CHECKING, TypeVar

import sqlalchemy as sa

from ...errors import EntityworksError, SchemaError
from .. import logical
from ..ddllock import LOCK_SECONDS, schema_lock
from ._facade import StoreFacade

if TYPE_CHECKING:
    from ..backends.base import Backend

T = TypeVar("T")

#: The comment of a table that an import has created and not finished with, followed by the
#: name of a lock that import holds until it is done (:func:`import_committed_ddl`).
PENDING = "entityworks import in progress, lock "
_TOKEN = re.compile(r"entityworks_import_[0-9a-f]{32}")


def import_committed_ddl(
    store: StoreFacade,
    tables: Sequence[sa.Table],
    *,
    validate: Callable[[], None] | None,
    record: Callable[[set[str]], None],
    insert: Callable[[], T],
) -> T:
    """An import where DDL commits at once (MariaDB): create the ``tables`` that are missing
    (listed parents first), then ``record`` the logical schema of those created and
    ``insert`` the rows in one transaction. Nothing of its own is left when anything fails,
    or when the process dies, and nothing another writer committed is ever dropped:

    - imports that write the same table run one after the other (a named lock per table), so
      none writes into a table another may still take away again;
    - each table created here carries the comment :data:`PENDING` and the name of a lock this
      import holds until it is done: such a table whose lock is free was left by an import
      that died, and the next import drops it if it is still empty;
    - on failure, a table created here is dropped only if it is still empty, seen under
      ``LOCK TABLES ... WRITE``, which waits for every open transaction on it (rows another
      writer committed meanwhile keep it);
    - the logical schema is written in the rows' transaction, so it is there exactly when
      they are. ``validate`` reads the document before any table is created.
    """
    backend = store.backend
    if store.in_transaction:  # inside Store.transaction()
        missing = sorted({t.name for t in tables} - set(store.table_names()))
        if missing:
            raise EntityworksError(
                f"cannot create table {missing[0]!r} inside transaction(): {backend.title} "
                "would commit the open transaction; import outside it, or create the "
                "tables first"
            )
        with store.transaction():
            return insert()
    token = f"entityworks_import_{uuid.uuid4().hex}"
    database = store.url.database or ""
    names = [token, *sorted({_table_lock(database, t.name) for t in tables})]
    with store.engine.connect() as conn:  # the session that holds the locks throughout
        held: list[str] = []
        try:
            for name in names:
                _get_lock(backend, conn, name, tables)
                held.append(name)
            return _locked_import(store, conn, tables, token, validate, record, insert)
        finally:
            try:
                conn.rollback()
                for name in reversed(held):
                    backend.release_named_lock(conn, name)
                conn.commit()
            except Exception:  # a broken session: its locks went with it; never reuse it
                conn.invalidate()


def _table_lock(database: str, table: str) -> str:
    """The named lock of imports into ``table`` (lock names are server-wide, and short)."""
    digest = hashlib.sha256(f"{database}\0{table}".encode()).hexdigest()[:40]
    return f"entityworks_table_{digest}"


def _get_lock(backend: Backend, conn: sa.Connection, name: str, tables: Sequence[sa.Table]) -> None:
    if not backend.take_named_lock(conn, name, LOCK_SECONDS):
        listed = ", ".join(repr(t.name) for t in tables)
        raise EntityworksError(
            f"another import into {listed} has run for over {LOCK_SECONDS}"
            " s; try again when it has finished"
        )


def _locked_import(
    store: StoreFacade,
    conn: sa.Connection,
    tables: Sequence[sa.Table],
    token: str,
    validate: Callable[[], None] | None,
    record: Callable[[set[str]], None],
    insert: Callable[[], T],
) -> T:
    backend = store.backend
    with schema_lock(conn):
        remove_import_debris(backend, conn)
    existing = set(sa.inspect(conn).get_table_names())
    conn.commit()
    if validate is not None and any(t.name not in existing for t in tables):
        validate()
    created: list[str] = []
    schema_held = ExitStack()
    try:
        if any(t.name not in existing for t in tables):
            schema_held.enter_context(schema_lock(conn))
            _create_pending(store, conn, tables, token, created)
        with store.transaction():
            if set(created) - {logical.TABLE}:
                record(set(created) - {logical.TABLE})
            schema_held.close()  # the recorded rows hold entityworks_schema from here on
            result = insert()
    except BaseException:
        schema_held.close()
        if created:
            try:
                conn.rollback()
                with schema_lock(conn):
                    _drop_if_empty(backend, conn, created)
            except Exception:  # the import's own error is the one to tell; the tables
                pass  # keep their mark, and the next import removes them if still empty
        raise
    for name in created:  # done: an ordinary table now
        conn.execute(sa.schema.DropTableComment(sa.Table(name, sa.MetaData())))
    conn.commit()
    return result


def _create_pending(
    store: StoreFacade,
    conn: sa.Connection,
    tables: Sequence[sa.Table],
    token: str,
    created: list[str],
) -> None:
    """Create the missing ``tables`` (and ``entityworks_schema``), marked as this import's
    until it is done; ``created`` lists them as they come. Called under the schema lock."""
    existing = set(sa.inspect(conn).get_table_names())
    metadata = sa.MetaData()
    copies = [t.to_metadata(metadata) for t in tables]  # private: the comment is ours alone
    missing = [t for t in copies if t.name not in existing]
    if missing and logical.TABLE not in existing:
        missing.insert(0, logical.schema_table(metadata))
    for table in missing:
        table.comment = PENDING + token
        try:
            table.create(conn)
        except (sa.exc.StatementError, store.dbapi_error) as exc:
            raise SchemaError(
                f"cannot create table {table.name!r}: "
                f"{getattr(exc, 'orig', exc)}; no table was kept"
            ) from exc
        created.append(table.name)


def remove_import_debris(backend: Backend, conn: sa.Connection) -> None:
    """Drop what imports that died left (MariaDB): tables still marked :data:`PENDING` whose
    import's lock is free, if they are empty; a marked table that holds rows is kept as an
    ordinary table. Called under the schema lock."""
    dead = [
        name
        for name, comment in backend.commented_tables(conn, PENDING)
        if _TOKEN.fullmatch(comment[len(PENDING) :])
        and backend.named_lock_free(conn, comment[len(PENDING) :])
    ]
    conn.commit()
    if dead:
        _drop_if_empty(backend, conn, dead)


def _drop_if_empty(backend: Backend, conn: sa.Connection, names: Sequence[str]) -> None:
    """Drop those of the marked tables ``names`` that hold no row (and their logical schema);
    unmark the others. Empty is seen under ``LOCK TABLES ... WRITE``, which waits for every
    transaction that has written to them, and keeps new writes out until they are gone. A
    table that a kept table refers to stays too. Called under the schema lock."""
    existing = set(sa.inspect(conn).get_table_names())
    conn.commit()
    names = sorted(set(names) & existing)
    if not names:
        return
    locked = [
        *names,
        *([logical.TABLE] if logical.TABLE in existing and logical.TABLE not in names else []),
    ]
    with backend.tables_write_locked(conn, locked):
        empty = {
            n
            for n in names
            if n != logical.TABLE
            and conn.execute(sa.select(sa.literal(1)).select_from(sa.table(n)).limit(1)).first()
            is None
        }
        references = [
            (child, parent) for child, parent in backend.table_references(conn) if child != parent
        ]
        drop = set(empty)
        while True:  # a table that a kept one refers to is kept
            kept = {parent for child, parent in references if parent in drop and child not in drop}
            if not kept:
                break
            drop -= kept
        for name in _referring_first(drop, references):
            conn.execute(sa.schema.DropTable(sa.Table(name, sa.MetaData())))
        schema_rows = logical.schema_table()
        if logical.TABLE in existing and drop:
            conn.execute(schema_rows.delete().where(schema_rows.c.table_name.in_(sorted(drop))))
        if (
            logical.TABLE in names
            and conn.execute(sa.select(sa.literal(1)).select_from(schema_rows).limit(1)).first()
            is None
        ):
            conn.execute(sa.schema.DropTable(schema_rows))
            drop.add(logical.TABLE)
        conn.commit()
    for name in sorted(set(names) - drop):
        conn.execute(sa.schema.DropTableComment(sa.Table(name, sa.MetaData())))
    conn.commit()


def _referring_first(names: set[str], references: list[tuple[str, str]]) -> list[str]:
    """``names`` ordered so that a table comes before those it refers to."""
    order: list[str] = []
    left = set(names)
    while left:
        free = sorted(
            n
            for n in left
            if not any(parent == n and child in left for child, parent in references)
        )
        if not free:  # a cycle between tables: foreign keys do not stop DROP of them all
            free = sorted(left)
        order += free
        left -= set(free)
    return order


__all__ = ["PENDING", "import_committed_ddl", "remove_import_debris"]

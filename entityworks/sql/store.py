"""``Store``: dataclass instances in and out of a SQL database, through SQLAlchemy Core.

Every statement is a SQLAlchemy construct compiled by the dialect, and every value travels as a
bound parameter (or through PostgreSQL's COPY protocol, which carries data, never SQL). For
speed the bulk paths hand SQLAlchemy's compiled statement to the driver's ``executemany``
with rows encoded by the registry and SQLAlchemy's own bind processors; decoding likewise
applies only the processors a column really needs.

A write either happens whole or not at all: each call runs in a transaction (or a savepoint
inside :meth:`Store.transaction`), and a failing row is located by replaying the batch inside a
savepoint that is then rolled back, so the error can name the row and column.

The Store is the public face only; each stage lives in a module of its own, all working on
the :class:`~entityworks.sql._database.Database` the Store holds: :mod:`.engine` (URL,
options, connection set-up), :mod:`._read`, :mod:`._write` (with :mod:`._bulk` and
:mod:`._locate`), :mod:`._point` (one-row calls on SQLite), :mod:`._ddl` and :mod:`._reflect`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar, overload

import sqlalchemy as sa

from ..errors import ConfigurationError
from ..model.schema import TableSchema
from ..registry import TypeRegistry, the_registry
from ..registry import registry as default_registry
from . import _ddl as ddl
from . import _existing as existing
from . import _read as read
from . import _reflect as reflect
from . import _write as write
from ._bound import BoundModel
from ._bulk import BATCH
from ._database import Database
from ._log import store_logger, watch
from ._point import PointPath
from .backends import Backend
from .engine import (
    adopted_url,
    checked_busy_timeout,
    checked_options,
    configure_engine,
    make_engine,
    normalise_url,
)

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

    from .encoded import EncodedRows

T = TypeVar("T")
#: The database ``Store()`` opens: this file in the current directory (a plain path names a
#: database file, see :func:`~entityworks.sql.engine.normalise_url`).
DEFAULT_DATABASE = "entityworks.db"


class Store:
    """A database holding dataclass tables.

    ``Store()`` opens (or creates) ``entityworks.db`` in the current directory; any SQLAlchemy
    URL or a plain file path works: ``Store("levels.db")``,
    ``Store("postgresql+psycopg://user@host/db")``, ``Store("mysql+pymysql://root@host/db")``.
    On SQLite the journal is WAL, foreign keys are enforced and writers wait up to
    ``busy_timeout`` seconds for the lock.

    ``engine_options`` go to ``sqlalchemy.create_engine`` (pool sizes, timeouts...), checked
    first; ``Store(engine=...)`` uses an Engine of yours instead, with the same connection
    set-up (see :func:`entityworks.sql.engine.configure_engine`), and leaves it open on
    :meth:`close`. Options or engines that would break the Store's transactions raise
    :class:`ConfigurationError`. Statements are logged on ``entityworks.sql`` (see
    :mod:`entityworks.sql._log`).

    The Store connects when it is first used. A database that cannot be opened is then a
    :class:`ConfigurationError` naming it (without its password) and the fix: a PostgreSQL
    or MariaDB database that does not exist ("create it first"), an SQLite file in a
    folder that does not exist, or a file that is not an SQLite database.

    Code built on the Store (XML, Arrow, the catalog) uses its public collaborator API:
    :meth:`model`, :meth:`connection`, :attr:`in_transaction`, :meth:`tables_with_references`
    and :attr:`dbapi_error`.
    """

    def __init__(
        self,
        url: str | sa.URL | Path | None = None,
        *,
        engine: sa.Engine | None = None,
        engine_options: Mapping[str, Any] | None = None,
        registry: TypeRegistry | None = None,
        busy_timeout: float = 30.0,
        echo: bool = False,
    ) -> None:
        checked_busy_timeout(busy_timeout)
        self.registry: TypeRegistry = the_registry(registry or default_registry)
        self.busy_timeout: float = busy_timeout
        if engine is not None:
            if url is not None or engine_options is not None or echo:
                raise ConfigurationError(
                    "Store(engine=...) takes the engine as it is: pass no url, "
                    "engine_options or echo with it (set those when creating the engine)"
                )
            self.url: sa.URL = adopted_url(engine)
            self._own_engine = False
            self.engine: sa.Engine = engine
        else:
            self.url = normalise_url(DEFAULT_DATABASE if url is None else url)
            self._own_engine = True
            self.engine = make_engine(
                self.url, echo, checked_options(engine_options, self.url), busy_timeout
            )
        # the store's own engine pings connections after idleness, unless the options set
        # pool_pre_ping themselves
        configure_engine(
            self.engine,
            busy_timeout,
            adopted=not self._own_engine,
            pings=self._own_engine and "pool_pre_ping" not in (engine_options or {}),
        )
        watch(self.engine)
        store_logger.debug(
            "store on %s%s",
            self.url.render_as_string(hide_password=True),
            "" if self._own_engine else " (engine given)",
        )
        self.dialect: sa.Dialect = self.engine.dialect
        self._db = Database(self.url, self.engine, self.registry)
        # Single-row calls run in one statement on a driver connection kept per thread.
        self._point = PointPath(self._db)

    # -- lifecycle -----------------------------------------------------------------------
    def close(self) -> None:
        """Release every pooled connection."""
        self._point.close()
        if self._own_engine:  # an engine given to Store(engine=...) stays its owner's
            self.engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return repr(self._db)

    # -- models --------------------------------------------------------------------------
    def schema(self, cls: type) -> TableSchema:
        """The inferred schema of ``cls`` (see :func:`entityworks.table_schema`)."""
        return self._db.schema(cls)

    def table(self, cls: type) -> sa.Table:
        """The SQLAlchemy ``Table`` this store uses for ``cls``."""
        return self._db.model(cls).table

    # -- the collaborator API (XML, Arrow, catalog) --------------------------------------
    def model(self, cls: type) -> BoundModel:
        """``cls`` bound to this store: its schema, tables and row codec (built once)."""
        return self._db.model(cls)

    def connection(self, write: bool = False) -> AbstractContextManager[sa.Connection]:
        """The calling thread's connection, in a transaction (``with store.connection():``).

        Inside :meth:`transaction` it is that transaction's connection, and with
        ``write=True`` a savepoint of it, so that a write failing part-way leaves the outer
        transaction as it was. On SQLite ``write=True`` begins with ``BEGIN IMMEDIATE``.
        """
        return self._db.connection(write)

    @property
    def in_transaction(self) -> bool:
        """True inside :meth:`transaction` on the calling thread."""
        return self._db.in_transaction

    def tables_with_references(self, model: BoundModel) -> list[sa.Table]:
        """The tables :meth:`create` makes for ``model``: those its foreign keys refer to
        (and theirs), then its own and its child tables."""
        return self._db.tables_with_references(model)

    @property
    def backend(self) -> Backend:
        """What this store does differently on its kind of database (``sql.backends``)."""
        return self._db.backend

    @property
    def dbapi_error(self) -> type[Exception]:
        """The driver's exception base class (``sqlite3.Error``, ``psycopg.Error``...)."""
        return self._db.dbapi_error

    # -- DDL -----------------------------------------------------------------------------
    def create(self, cls: type) -> sa.Table:
        """Create the table of ``cls`` and its child tables if they do not exist.

        All of them or none: a failure raises SchemaError and leaves no new table behind.
        A table of one of those names that exists already is kept only if it has the
        columns ``cls`` needs and no others, each of a type of the same family (integer,
        text, timestamp...); else SchemaError names the missing, extra and differently
        typed columns, and nothing is created.
        """
        existing.refuse_other_tables(self._db, self._db.model(cls))
        return ddl.create(self._db, cls)

    def drop(self, cls: type) -> None:
        """Drop the table of ``cls`` and its child tables if they exist."""
        ddl.drop(self._db, cls)

    def table_names(self) -> list[str]:
        """Names of the tables in the database."""
        return ddl.table_names(self._db)

    # -- transactions --------------------------------------------------------------------
    @contextmanager
    def transaction(self) -> Iterator[Store]:
        """Group operations: all of them are kept, or (on an exception) none.

        Nested use becomes a savepoint. The transaction belongs to the calling thread.
        """
        with self._db.transaction():
            yield self

    # -- writing -------------------------------------------------------------------------
    def insert(self, obj: T) -> T:
        """Insert one instance (and its child rows); a generated key is set on ``obj``."""
        if not self._point.write(obj, "insert"):
            write.insert_many(self._db, [obj])
        return obj

    def insert_many(self, objs: Iterable[Any], *, batch_size: int = BATCH) -> int:
        """Insert instances of one dataclass in one transaction; returns the row count.

        Rows whose integer key is ``None`` get a generated key, written back to the instance.
        If any row fails, nothing is written and :class:`WriteError` names the row index and
        the column; the instances of a list (or another sized collection) have their None
        keys again (an iterator's earlier batches, which are not held, keep theirs).

        Rows are written ``batch_size`` at a time (an iterator's batch is all that is held
        of it); with the default size, a list or tuple of a class without child tables goes
        to PostgreSQL as one COPY, whose rows are made a chunk at a time.
        """
        return write.insert_many(self._db, objs, batch_size=batch_size)

    def insert_encoded(self, batch: EncodedRows) -> list[Any]:
        """Insert rows that :func:`entityworks.sql.encoded.encode_rows` encoded (usually in the
        process that made the objects), with their child rows, in one transaction; returns
        their keys (generated where they were ``None``), in order.

        Only the dialect's part of the work is left here: bind processors, SQLite's checks,
        companion columns. A refused row raises :class:`WriteError` naming it; nothing of
        the batch is then kept.
        """
        return write.insert_encoded(self._db, batch)

    def insert_arrow(self, cls: type, data: Any, *, batch_size: int = BATCH) -> int:
        """Write Arrow rows into ``cls``'s table without an instance per row; returns the
        row count.

        ``data``: a ``pyarrow.Table``, a ``RecordBatch``, a ``RecordBatchReader`` or any
        iterable of record batches, read ``batch_size`` rows at a time. Its columns are
        what :func:`entityworks.to_arrow` writes (and :func:`entityworks.from_arrow`
        reads); the key column may be left out, or null, for the database to generate.
        Each value is stored as ``insert_many`` would store the instance holding it, or
        refused as it would refuse it: one transaction, and :class:`WriteError` or
        :class:`ValueEncodingError` names the class, row and column. A class with child
        lists is refused (use ``insert_many``).
        """
        from ._columnar import insert_arrow

        return insert_arrow(self._db, cls, data, batch_size=batch_size)

    def insert_pandas(self, cls: type, frame: pd.DataFrame, *, batch_size: int = BATCH) -> int:
        """:meth:`insert_arrow` of a ``pandas.DataFrame``, its columns read as
        :func:`entityworks.from_pandas` reads them; returns the row count."""
        from ._columnar import insert_pandas

        return insert_pandas(self._db, cls, frame, batch_size=batch_size)

    def insert_parquet(self, cls: type, path: str | Path, *, batch_size: int = BATCH) -> int:
        """:meth:`insert_arrow` of a Parquet file, streamed ``batch_size`` rows at a time
        (memory bounded by a batch, whatever the file's size); returns the row count."""
        from ._columnar import insert_parquet

        return insert_parquet(self._db, cls, path, batch_size=batch_size)

    def upsert(self, obj: T) -> T:
        """Insert ``obj`` or, if its key exists, replace that row (and its child rows)."""
        write.upsert_many(self._db, [obj])
        return obj

    def upsert_many(self, objs: Iterable[Any], *, batch_size: int = BATCH) -> int:
        """Insert-or-replace by primary key, in one transaction; returns the row count."""
        return write.upsert_many(self._db, objs, batch_size=batch_size)

    @overload
    def update(self, target: type, values: Mapping[str, Any], *, where: Any) -> int: ...

    @overload
    def update(self, target: object) -> None: ...

    def update(
        self, target: Any, values: Mapping[str, Any] | None = None, *, where: Any = None
    ) -> int | None:
        """Write every field of an instance to the row with its key (child rows are
        replaced), or, given a class, set ``values`` on the rows matching ``where``.

        ``update(obj)`` raises :class:`NotFoundError` when no row has the key of ``obj``.
        ``update(Cls, values={...}, where=...)`` returns the number of rows matched. Every
        value goes through its column's registry rule and codec, as an inserted one does;
        ``where`` is required (``where={}`` updates every row), as for :meth:`delete`. The
        primary key and child-table fields cannot be set this way.
        """
        return write.update(self._db, self._point, target, values, where=where)

    def delete(self, target: Any, *, where: Any = None) -> int:
        """Delete one instance (by its key) or, given a class, the rows matching ``where``.

        ``where={}`` deletes every row; ``where`` is required for a class so that a
        forgotten filter cannot empty a table. Child rows go with their parents.
        """
        return write.delete(self._db, self._point, target, where=where)

    # -- reading -------------------------------------------------------------------------
    def get(self, cls: type[T], key: Any) -> T | None:
        """The instance whose primary key is ``key``, or ``None``."""
        found: T | None = read.get(self._db, self._point, cls, key)
        return found

    @overload
    def select(
        self,
        cls: type[T],
        where: Any = None,
        order_by: Any = None,
        limit: int | None = None,
        offset: int | None = None,
        *,
        columns: None = None,
        as_dict: Literal[False] = False,
    ) -> Iterator[T]: ...

    @overload
    def select(
        self,
        cls: type,
        where: Any = None,
        order_by: Any = None,
        limit: int | None = None,
        offset: int | None = None,
        *,
        columns: Sequence[str],
        as_dict: Literal[False] = False,
    ) -> Iterator[tuple[Any, ...]]: ...

    @overload
    def select(
        self,
        cls: type,
        where: Any = None,
        order_by: Any = None,
        limit: int | None = None,
        offset: int | None = None,
        *,
        columns: Sequence[str] | None = None,
        as_dict: Literal[True],
    ) -> Iterator[dict[str, Any]]: ...

    def select(
        self,
        cls: type,
        where: Any = None,
        order_by: Any = None,
        limit: int | None = None,
        offset: int | None = None,
        *,
        columns: Sequence[str] | None = None,
        as_dict: bool = False,
    ) -> Iterator[Any]:
        """Stream instances of ``cls``; see :mod:`entityworks.sql.filters` for ``where``.

        ``columns=["a", "b"]`` streams tuples of just those columns instead, and
        ``as_dict=True`` dicts (of ``columns``, or of every column), decoded as the instances
        would hold them. Arguments are checked at once; rows are fetched in batches while you
        iterate.
        """
        return read.select(
            self._db, cls, where, order_by, limit, offset, columns=columns, as_dict=as_dict
        )

    def count(self, cls: type, where: Any = None) -> int:
        """Number of rows matching ``where``."""
        return read.count(self._db, cls, where)

    def rows(
        self,
        cls: type,
        where: Any = None,
        order_by: Any = None,
        limit: int | None = None,
        offset: int | None = None,
        *,
        columns: Sequence[str] | None = None,
    ) -> Iterator[list[tuple[Any, ...]]]:
        """Batches of decoded column tuples (table columns, in order) without building objects;
        with ``columns=[...]``, tuples of just those columns, in that order.

        The building block of the Arrow and XML exporters and of ``select(columns=...)``.
        """
        return read.row_batches(self._db, cls, where, order_by, limit, offset, columns=columns)

    def rows_with_children(
        self,
        cls: type,
        where: Any = None,
        order_by: Any = None,
        limit: int | None = None,
        offset: int | None = None,
    ) -> Iterator[tuple[list[tuple[Any, ...]], dict[str, list[list[tuple[Any, ...]]]]]]:
        """Batches of decoded column tuples, as :meth:`rows`, each with its rows' child rows
        without building objects: per child table (by its list field; a child's child by
        ``field.field``), for each row of the batch, its decoded rows of that table (their
        ``parent_key`` and position columns first), in list order.

        The building block of the XML and Arrow exports of a class with child lists.
        """
        return read.family_batches(self._db, cls, where, order_by, limit, offset)

    # -- XML and Arrow (thin: the work is in sql.exchange) -------------------------------
    def export_xml(
        self,
        cls: type,
        xml_path: str | Path,
        xsd_path: str | Path | None = None,
        where: Any = None,
        order_by: Any = None,
        *,
        dataset: str | None = None,
        inline_schema: bool = False,
        progress: Callable[[int], None] | None = None,
    ) -> int:
        """Stream the rows of ``cls`` matching ``where`` to XML (+ XSD); returns the count.

        ``dataset`` names the root element (default: the class's ``__dataset__``, as kept
        from a .NET DataSet, else ``DocumentElement``); ``inline_schema`` writes the XSD
        inside the document too; ``progress(n)`` is told each time ``n`` more rows were read.
        """
        from .exchange.xml import export_store

        return export_store(
            self,
            cls,
            xml_path,
            xsd_path,
            where=where,
            order_by=order_by,
            dataset=dataset,
            inline_schema=inline_schema,
            progress=progress,
        )

    def import_dataset(
        self, xml_path: str | Path, xsd_path: str | Path | None = None
    ) -> dict[str, int]:
        """Import a .NET DataSet document (several tables, relations flat or nested) in one
        transaction; returns the rows per table. See :mod:`entityworks.xml.dataset`."""
        from .exchange.dataset import import_dataset

        return import_dataset(self, xml_path, xsd_path)

    def import_diffgram(
        self, xml_path: str | Path, xsd_path: str | Path | None = None
    ) -> dict[str, Any]:
        """Apply a .NET DiffGram (inserts, updates, deletes matched by key) in one
        transaction; a conflict with the stored rows refuses it whole. Returns a
        :class:`entityworks.sql.exchange.diffgram.Changes` per table. See
        :mod:`entityworks.sql.exchange.diffgram`."""
        from .exchange.diffgram import import_diffgram

        return import_diffgram(self, xml_path, xsd_path)

    def export_dataset(
        self,
        tables: Sequence[type | str],
        xml_path: Any,
        xsd_path: str | Path | None = None,
        *,
        dataset: str | None = None,
        nested: bool | None = None,
        inline_schema: bool = False,
        diffgram: bool = False,
    ) -> dict[str, int]:
        """Write ``tables`` (classes or table names) as one DataSet document, with their
        relations (``references`` metadata, or as imported) flat or ``nested``;
        ``diffgram`` writes a .NET DiffGram of unchanged rows instead."""
        from .exchange.dataset import export_dataset

        return export_dataset(
            self,
            tables,
            xml_path,
            xsd_path,
            dataset=dataset,
            nested=nested,
            inline_schema=inline_schema,
            diffgram=diffgram,
        )

    def import_xml(
        self,
        cls: type,
        xml_path: str | Path,
        xsd_path: str | Path | None = None,
        *,
        on_batch: Callable[[Sequence[Any]], None] | None = None,
        on_rows: Callable[[int, Mapping[str, int]], None] | None = None,
    ) -> int:
        """Validate and insert an XML file in one transaction (all rows or none); returns
        the count of top-level rows. ``on_batch`` is handed each batch of instances once it
        is inserted; ``on_rows(rows, children)`` is told each inserted batch's count of rows
        and of child rows per child table (by its table name), with no instance built for it
        (the cheaper way to drive a progress bar)."""
        from .exchange.xml import import_store

        return import_store(self, cls, xml_path, xsd_path, on_batch=on_batch, on_rows=on_rows)

    def to_arrow(
        self,
        cls: type,
        where: Any = None,
        order_by: Any = None,
        *,
        progress: Callable[[int], None] | None = None,
    ) -> pa.Table:
        """The rows of ``cls`` matching ``where`` as a ``pyarrow.Table`` (``progress(n)``:
        told each time ``n`` more rows were read)."""
        from .exchange.arrow import store_to_arrow

        return store_to_arrow(self, cls, where=where, order_by=order_by, progress=progress)

    def to_pandas(self, cls: type, where: Any = None, order_by: Any = None) -> pd.DataFrame:
        """The rows of ``cls`` matching ``where`` as a ``pandas.DataFrame`` with
        ``ArrowDtype`` columns: the same frame :func:`entityworks.to_pandas` makes of the
        selected instances (exact: no float for a Decimal or an int with NULLs)."""
        import pandas as pd

        return self.to_arrow(cls, where=where, order_by=order_by).to_pandas(
            types_mapper=pd.ArrowDtype
        )

    # -- reflection of existing tables ---------------------------------------------------
    def reflect(self, table_name: str) -> type:
        """Build a dataclass for an existing table (columns, nullability, primary key)."""
        return reflect.reflect(self._db, table_name)


__all__ = ["Store"]

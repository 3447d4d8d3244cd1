"""``Store``: dataclass instances in and out of a SQL database, through SQLAlchemy Core.

Every statement is a SQLAlchemy construct compiled by the dialect, and every value travels as a
bound parameter (or through PostgreSQL's COPY protocol, which carries data, never SQL). For
speed the bulk paths hand SQLAlchemy's compiled statement to the driver's ``executemany``
with rows encoded by the registry and SQLAlchemy's own bind processors; decoding likewise
applies only the processors a column really needs.

A write either happens whole or not at all: each call runs in a transaction (or a savepoint
inside :meth:`Store.transaction`), and a failing row is located by replaying the batch inside a
savepoint that is then rolled back, so the error can name the row and column.
"""

from __future__ import annotations

import dataclasses
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import starmap
from operator import attrgetter
from pathlib import Path
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.pool import StaticPool

from .errors import (
    EntityworksError,
    NotFoundError,
    SchemaError,
    UnknownTableError,
    WriteError,
)
from .filters import compile_order_by, compile_where, encode_value
from .registry import TypeRegistry, encode_error
from .registry import registry as default_registry
from .schema import (
    PARENT_COLUMN,
    POSITION_COLUMN,
    TableSchema,
    snake_case,
    table_schema,
)
from .tables import build_tables

T = TypeVar("T")
Processor = Callable[[Any], Any] | None
#: Maps an index within a batch to the row number the caller sees in errors.
RowNumber = Callable[[int], int]

BATCH = 20_000
#: Raised by drivers while binding a value they cannot hold (sqlite3: an int beyond 64 bits,
#: a str with a lone surrogate; psycopg's COPY: a value of the wrong type). They locate a bad
#: row like database errors do.
_BIND_ERRORS = (OverflowError, UnicodeEncodeError, TypeError)
_SQLITE_NATIVE = (int, float, str, bytes)
FETCH = 2_000


def _counting_from(first: int) -> RowNumber:
    return first.__add__


def _refuse_nan(value: Any) -> Any:
    if value != value:
        raise ValueError("SQLite cannot store NaN (it would become NULL); use PostgreSQL or "
                         "a NOT NULL column, where it is refused")
    return value


def _compose(first: Processor, second: Processor) -> Processor:
    if first is None:
        return second
    if second is None:
        return first
    return lambda v: second(first(v))


def _skip_none(fn: Processor) -> Processor:
    if fn is None:
        return None
    return lambda v: None if v is None else fn(v)


@dataclass
class _Model:
    """A dataclass bound to one database: its tables and per-column processors."""

    schema: TableSchema
    table: sa.Table
    names: list[str]
    field_index: list[int]                 # which columns are dataclass fields
    encoders: list[Processor]              # registry to_db then the dialect's bind processor
    binds: list[Processor]                 # the dialect's bind processor alone
    registry_encoders: list[Processor]     # registry to_db only (SQLAlchemy executes)
    decoders: list[Processor]              # driver value -> Python value
    plain: bool                            # rows map 1:1 onto cls(*row)
    init_names: frozenset[str]             # fields the dataclass __init__ takes
    children: list[tuple[str, _Model]]
    sql_cache: dict[str, str]

    @property
    def cls(self) -> type:
        return self.schema.cls


def _normalise_url(url: str | sa.URL | Path) -> sa.URL:
    if isinstance(url, sa.URL):
        return url
    text = str(url)
    if "://" not in text:  # a plain path means an SQLite file
        return sa.make_url(f"sqlite:///{text}")
    return sa.make_url(text)


class Store:
    """A database holding dataclass tables.

    ``Store()`` opens (or creates) ``entityworks.db`` in the current directory; any SQLAlchemy
    URL or a plain file path works: ``Store("levels.db")``,
    ``Store("postgresql+psycopg://user@host/db")``, ``Store("mysql+pymysql://root@host/db")``.
    On SQLite the journal is WAL, foreign keys are enforced and writers wait up to
    ``busy_timeout`` seconds for the lock.
    """

    def __init__(self, url: str | sa.URL | Path = "sqlite:///entityworks.db", *,
                 registry: TypeRegistry | None = None, busy_timeout: float = 30.0,
                 echo: bool = False) -> None:
        self.url = _normalise_url(url)
        self.registry = registry or default_registry
        self.busy_timeout = busy_timeout
        self.engine = self._make_engine(echo)
        self.dialect = self.engine.dialect
        self._dbapi_error = self.dialect.loaded_dbapi.Error
        self._local = threading.local()
        self._models: dict[type, _Model] = {}
        self._lock = threading.Lock()

    def _make_engine(self, echo: bool) -> sa.Engine:
        url = self.url
        if url.get_backend_name() != "sqlite":
            mysql = url.get_backend_name() in ("mysql", "mariadb")
            if mysql and "charset" not in url.query:
                url = url.update_query_dict({"charset": "utf8mb4"})
            engine = sa.create_engine(url, echo=echo, pool_pre_ping=True)
            if mysql:
                @event.listens_for(engine, "connect")
                def _strict(dbapi_connection: Any, _record: Any) -> None:
                    # Refuse bad values instead of truncating them, and keep an explicit 0 key
                    # (MariaDB would otherwise replace it with a generated one).
                    cursor = dbapi_connection.cursor()
                    cursor.execute("SET SESSION sql_mode = CONCAT_WS(',', @@sql_mode, "
                                   "'STRICT_ALL_TABLES', 'NO_AUTO_VALUE_ON_ZERO')")
                    cursor.close()
            return engine
        memory = url.database in (None, "", ":memory:")
        kwargs: dict[str, Any] = {"connect_args": {"timeout": self.busy_timeout,
                                                   "check_same_thread": False}}
        if memory:
            kwargs["poolclass"] = StaticPool
        engine = sa.create_engine(url, echo=echo, **kwargs)

        @event.listens_for(engine, "connect")
        def _configure(dbapi_connection: Any, _record: Any) -> None:
            dbapi_connection.isolation_level = None  # BEGIN is ours (see _begin)
            cursor = dbapi_connection.cursor()
            if not memory:
                cursor.execute("PRAGMA journal_mode=WAL")
                cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.close()

        @event.listens_for(engine, "begin")
        def _begin(conn: sa.Connection) -> None:
            # Writers take the lock up front so that the busy timeout applies instead of a
            # deadlock-avoidance error when two readers both try to upgrade.
            write = conn.get_execution_options().get("entityworks_write", False)
            conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

        return engine

    # -- lifecycle -----------------------------------------------------------------------
    def close(self) -> None:
        """Release every pooled connection."""
        self.engine.dispose()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Store({self.url.render_as_string(hide_password=True)!r})"

    # -- models --------------------------------------------------------------------------
    def schema(self, cls: type) -> TableSchema:
        """The inferred schema of ``cls`` (see :func:`entityworks.table_schema`)."""
        return table_schema(cls, self.registry)

    def table(self, cls: type) -> sa.Table:
        """The SQLAlchemy ``Table`` this store uses for ``cls``."""
        return self._model(cls).table

    def _model(self, cls: type) -> _Model:
        try:
            return self._models[cls]
        except (KeyError, TypeError):
            pass
        with self._lock:
            if cls not in self._models:
                schema = table_schema(cls, self.registry)
                metadata = sa.MetaData()
                build_tables(schema, metadata, self.dialect.name)
                self._models[cls] = self._make_model(schema, metadata)
            return self._models[cls]

    def _make_model(self, schema: TableSchema, metadata: sa.MetaData) -> _Model:
        table = metadata.tables[schema.name]
        dialect = self.dialect
        encoders, registry_encoders, decoders, binds = [], [], [], []
        for c in schema.columns:
            impl = table.c[c.name].type.dialect_impl(dialect)
            bind = impl.bind_processor(dialect)
            if dialect.name == "sqlite" and c.info.python_type in _SQLITE_NATIVE:
                bind = None  # sqlite3 binds these itself; REAL affinity widens ints
            if dialect.name == "sqlite" and c.info.python_type is float and c.nullable:
                bind = _refuse_nan  # SQLite would store NaN as NULL; NOT NULL columns refuse it
            to_db = _skip_none(c.info.to_db)
            registry_encoders.append(to_db)
            encoders.append(_compose(to_db, bind))
            binds.append(bind)
            from_db = _skip_none(c.info.from_db)
            if dialect.name == "sqlite":
                # SQLite rows are read from the raw cursor: apply SQLAlchemy's processor too.
                from_db = _compose(impl.result_processor(dialect, None), from_db)
            decoders.append(from_db)
        fields = dataclasses.fields(schema.cls)
        init_names = [f.name for f in fields if f.init]
        names = [c.name for c in schema.columns]
        offset = 2 if schema.parent is not None else 0
        plain = (not schema.children and offset == 0 and init_names == names
                 and all(d is None for d in decoders))
        children = [(child.field, self._make_model(child.schema, metadata))
                    for child in schema.children]
        return _Model(schema, table, names, list(range(offset, len(names))), encoders, binds,
                      registry_encoders, decoders, plain, frozenset(init_names), children, {})

    # -- DDL -----------------------------------------------------------------------------
    def create(self, cls: type) -> sa.Table:
        """Create the table of ``cls`` and its child tables if they do not exist."""
        model = self._model(cls)
        tables = [model.table] + [child.table for _, child in model.children]
        with self._connection(write=True) as conn:
            model.table.metadata.create_all(conn, tables=tables, checkfirst=True)
        return model.table

    def drop(self, cls: type) -> None:
        """Drop the table of ``cls`` and its child tables if they exist."""
        model = self._model(cls)
        tables = [model.table] + [child.table for _, child in model.children]
        with self._connection(write=True) as conn:
            model.table.metadata.drop_all(conn, tables=tables, checkfirst=True)

    def table_names(self) -> list[str]:
        """Names of the tables in the database."""
        with self._connection() as conn:
            return sa.inspect(conn).get_table_names()

    # -- transactions --------------------------------------------------------------------
    @contextmanager
    def transaction(self) -> Iterator[Store]:
        """Group operations: all of them are kept, or (on an exception) none.

        Nested use becomes a savepoint. The transaction belongs to the calling thread.
        """
        outer = getattr(self._local, "conn", None)
        if outer is not None:
            with outer.begin_nested():
                yield self
            return
        with self.engine.connect() as conn:
            conn.execution_options(entityworks_write=True)
            with conn.begin():
                self._local.conn = conn
                try:
                    yield self
                finally:
                    self._local.conn = None

    @contextmanager
    def _connection(self, write: bool = False) -> Iterator[sa.Connection]:
        current = getattr(self._local, "conn", None)
        if current is not None:
            yield current
            return
        with self.engine.connect() as conn:
            if write:
                conn.execution_options(entityworks_write=True)
            with conn.begin():
                yield conn

    # -- writing -------------------------------------------------------------------------
    def insert(self, obj: T) -> T:
        """Insert one instance (and its child rows); a generated key is set on ``obj``."""
        self.insert_many([obj])
        return obj

    def insert_many(self, objs: Iterable[Any], *, batch_size: int = BATCH) -> int:
        """Insert instances of one dataclass in one transaction; returns the row count.

        Rows whose integer key is ``None`` get a generated key, written back to the instance.
        If any row fails, nothing is written and :class:`WriteError` names the row index and
        the column.
        """
        objs = objs if isinstance(objs, list) else list(objs)
        if not objs:
            return 0
        model = self._model_for(objs)
        with self._connection(write=True) as conn:
            self._insert(conn, model, objs, batch_size)
        return len(objs)

    def upsert(self, obj: T) -> T:
        """Insert ``obj`` or, if its key exists, replace that row (and its child rows)."""
        self.upsert_many([obj])
        return obj

    def upsert_many(self, objs: Iterable[Any], *, batch_size: int = BATCH) -> int:
        """Insert-or-replace by primary key, in one transaction; returns the row count."""
        objs = objs if isinstance(objs, list) else list(objs)
        if not objs:
            return 0
        model = self._model_for(objs)
        key = model.schema.require_key("upsert")
        keys = list(map(attrgetter(key.name), objs))
        if None in keys:
            raise WriteError(f"upsert needs a key on every row; row {keys.index(None)} of "
                             f"{model.schema.name!r} has {key.name}=None",
                             table=model.schema.name, row=keys.index(None), column=key.name)
        with self._connection(write=True) as conn:
            if model.children:
                self._delete_children(conn, model, keys)
            self._write_rows(conn, model, objs, _counting_from(0), self._upsert_sql(model),
                             "upsert", batch_size)
            self._insert_children(conn, model, objs, keys, batch_size)
        return len(objs)

    def update(self, obj: Any) -> None:
        """Write every field of ``obj`` to the row with its key; child rows are replaced.

        Raises :class:`NotFoundError` when no row has that key.
        """
        model = self._model_for([obj])
        key = model.schema.require_key("update")
        key_value = getattr(obj, key.name)
        values = self._as_dicts(model, [obj], _counting_from(0))[0]
        table = model.table
        stmt = table.update().where(table.c[key.name] == sa.bindparam("_ew_key",
                                                                      type_=table.c[key.name].type))
        with self._connection(write=True) as conn:
            result = self._guard(conn, model, lambda: conn.execute(
                stmt.values({k: v for k, v in values.items() if k != key.name}),
                {"_ew_key": values[key.name]}), _counting_from(0))
            if result.rowcount == 0:
                raise NotFoundError(f"{model.schema.name!r} has no row with "
                                    f"{key.name}={key_value!r}")
            if model.children:
                self._delete_children(conn, model, [key_value])
                self._insert_children(conn, model, [obj], [key_value], BATCH)

    def delete(self, target: Any, *, where: Any = None) -> int:
        """Delete one instance (by its key) or, given a class, the rows matching ``where``.

        ``where={}`` deletes every row; ``where`` is required for a class so that a
        forgotten filter cannot empty a table. Child rows go with their parents.
        """
        if isinstance(target, type):
            model = self._model(target)
            if where is None:
                raise EntityworksError(
                    "delete(cls) needs where=...; pass where={} to delete every row")
            condition = compile_where(where, model.table, model.schema)
        else:
            if where is not None:
                raise EntityworksError("delete(instance) deletes by key; where= is for a class")
            model = self._model(type(target))
            key = model.schema.require_key("delete")
            condition = self._key_condition(model, getattr(target, key.name))
        table = model.table
        with self._connection(write=True) as conn:
            if model.children:
                key = model.schema.require_key("delete")
                parents = sa.select(table.c[key.name])
                if condition is not None:
                    parents = parents.where(condition)
                for _, child in model.children:
                    conn.execute(child.table.delete().where(
                        child.table.c[PARENT_COLUMN].in_(parents)))
            stmt = table.delete()
            if condition is not None:
                stmt = stmt.where(condition)
            return conn.execute(stmt).rowcount

    # -- reading -------------------------------------------------------------------------
    def get(self, cls: type[T], key: Any) -> T | None:
        """The instance whose primary key is ``key``, or ``None``."""
        model = self._model(cls)
        model.schema.require_key("get")
        stmt = sa.select(model.table).where(self._key_condition(model, key)).limit(1)
        return next(iter(self._iterate(model, stmt)), None)

    def select(self, cls: type[T], where: Any = None, order_by: Any = None,
               limit: int | None = None, offset: int | None = None) -> Iterator[T]:
        """Stream instances of ``cls``; see :mod:`entityworks.filters` for ``where``.

        Arguments are checked at once; rows are fetched in batches while you iterate.
        """
        model = self._model(cls)
        return self._iterate(model, self._select_stmt(model, where, order_by, limit, offset))

    def count(self, cls: type, where: Any = None) -> int:
        """Number of rows matching ``where``."""
        model = self._model(cls)
        stmt = sa.select(sa.func.count()).select_from(model.table)
        condition = compile_where(where, model.table, model.schema)
        if condition is not None:
            stmt = stmt.where(condition)
        with self._connection() as conn:
            return int(conn.execute(stmt).scalar_one())

    def rows(self, cls: type, where: Any = None, order_by: Any = None,
             limit: int | None = None, offset: int | None = None
             ) -> Iterator[list[tuple[Any, ...]]]:
        """Batches of decoded column tuples (table columns, in order) without building objects.

        The building block of the Arrow and XML exporters.
        """
        model = self._model(cls)
        stmt = self._select_stmt(model, where, order_by, limit, offset)
        return self._batches(model, stmt)

    def _select_stmt(self, model: _Model, where: Any, order_by: Any, limit: int | None,
                     offset: int | None) -> sa.Select:
        stmt = sa.select(model.table)
        condition = compile_where(where, model.table, model.schema)
        if condition is not None:
            stmt = stmt.where(condition)
        clauses = compile_order_by(order_by, model.table, model.schema)
        if clauses:
            stmt = stmt.order_by(*clauses)
        for name, value in (("limit", limit), ("offset", offset)):
            if value is not None and (not isinstance(value, int) or isinstance(value, bool)
                                      or not 0 <= value < 2**63):
                raise EntityworksError(f"{name} must be a non-negative int, got {value!r}")
        if limit is not None:
            stmt = stmt.limit(limit)
        if offset is not None:
            if limit is None and self.dialect.name in ("mysql", "mariadb", "sqlite"):
                stmt = stmt.limit(-1 if self.dialect.name == "sqlite" else 2**64 - 1)
            stmt = stmt.offset(offset)
        return stmt

    def _batches(self, model: _Model, stmt: sa.Select, conn: sa.Connection | None = None
                 ) -> Iterator[list[tuple[Any, ...]]]:
        if conn is None:
            with self._connection() as own:
                yield from self._batches(model, stmt, own)
            return
        decoders = [(i, d) for i, d in enumerate(model.decoders) if d is not None]
        name = self.dialect.name
        # A server-side cursor streams; MariaDB's cannot share its connection with the child
        # queries of the same rows, so classes with children are read buffered there.
        if name != "sqlite" and not (name in ("mysql", "mariadb") and model.children):
            conn = conn.execution_options(stream_results=True, max_row_buffer=FETCH)
        result = conn.execute(stmt)
        # SQLite: the raw cursor, decoded by our own processors (fast); elsewhere the
        # SQLAlchemy result, whose processors need the driver's column types.
        fetch = result.cursor.fetchmany if name == "sqlite" else result.fetchmany
        try:
            while True:
                batch = fetch(FETCH)
                if not batch:
                    break
                if decoders:
                    batch = [_decode_row(row, decoders) for row in batch]
                yield batch
        finally:
            result.close()

    def _iterate(self, model: _Model, stmt: sa.Select) -> Iterator[Any]:
        cls = model.cls
        # One connection for the rows and their children (an in-memory database has only one).
        with self._connection() as conn:
            for batch in self._batches(model, stmt, conn):
                if model.plain:
                    yield from starmap(cls, batch)
                else:
                    yield from self._build(model, batch, conn)

    def _build(self, model: _Model, batch: list[Sequence[Any]], conn: sa.Connection
               ) -> list[Any]:
        names = model.names
        fields = model.field_index
        objs = []
        for row in batch:
            kwargs = {names[i]: row[i] for i in fields}
            for fname, _child in model.children:
                kwargs[fname] = []
            objs.append(_construct(model.cls, model.init_names, kwargs))
        if model.children and objs:
            key = model.schema.primary_key.name  # type: ignore[union-attr]
            self._load_children(model, {getattr(o, key): o for o in objs}, conn)
        return objs

    def _load_children(self, model: _Model, by_key: dict[Any, Any], conn: sa.Connection
                       ) -> None:
        encoded = _encoded_keys(model, list(by_key))
        for fname, child in model.children:
            table = child.table
            for start in range(0, len(encoded), 500):
                chunk = encoded[start:start + 500]
                stmt = (sa.select(table).where(table.c[PARENT_COLUMN].in_(chunk))
                        .order_by(table.c[PARENT_COLUMN], table.c[POSITION_COLUMN]))
                for batch in self._batches(child, stmt, conn):
                    for row, item in zip(batch, self._build(child, batch, conn), strict=True):
                        getattr(by_key[row[0]], fname).append(item)

    # -- XML and Arrow (thin: the work is in xmlio / frames) -------------------------------
    def export_xml(self, cls: type, xml_path: str | Path, xsd_path: str | Path | None = None,
                   where: Any = None, order_by: Any = None) -> int:
        """Stream the rows of ``cls`` matching ``where`` to XML (+ XSD); returns the count."""
        from .xmlio import export_store

        return export_store(self, cls, xml_path, xsd_path, where=where, order_by=order_by)

    def import_xml(self, cls: type, xml_path: str | Path,
                   xsd_path: str | Path | None = None) -> int:
        """Validate and insert an XML file in one transaction (all rows or none)."""
        from .xmlio import import_store

        return import_store(self, cls, xml_path, xsd_path)

    def to_arrow(self, cls: type, where: Any = None, order_by: Any = None) -> Any:
        """The rows of ``cls`` matching ``where`` as a ``pyarrow.Table``."""
        from .frames import store_to_arrow

        return store_to_arrow(self, cls, where=where, order_by=order_by)

    # -- reflection of existing tables ---------------------------------------------------
    def reflect(self, table_name: str) -> type:
        """Build a dataclass for an existing table (columns, nullability, primary key)."""
        with self._connection() as conn:
            inspector = sa.inspect(conn)
            if not inspector.has_table(table_name):
                raise UnknownTableError(f"no table {table_name!r} in {self!r}")
            columns = inspector.get_columns(table_name)
            pk = inspector.get_pk_constraint(table_name).get("constrained_columns") or []
        specs = []
        for c in columns:
            try:
                # MariaDB's DOUBLE is a Numeric that defaults to Decimal; a float is a float.
                python_type = (float if isinstance(c["type"], sa.Float)
                               else c["type"].python_type)
            except NotImplementedError:
                raise SchemaError(f"table {table_name!r}, column {c['name']!r}: type "
                                  f"{c['type']} has no Python equivalent") from None
            if python_type is dict or python_type is list:
                raise SchemaError(f"table {table_name!r}, column {c['name']!r}: native JSON "
                                  "columns are not reflected")
            if not self.registry.supports(python_type):
                raise SchemaError(f"table {table_name!r}, column {c['name']!r}: type "
                                  f"{c['type']} ({python_type.__name__}) is not registered")
            nullable = c.get("nullable", True) and c["name"] not in pk
            annotation = python_type | None if nullable else python_type
            is_key = len(pk) == 1 and c["name"] == pk[0]
            specs.append((c["name"], annotation,
                          dataclasses.field(metadata={"primary_key": is_key})))
        class_name = "".join(part.capitalize() or "_" for part in
                             re.split(r"[^0-9A-Za-z]+", snake_case(table_name))) or "Table"
        if not class_name.isidentifier():
            class_name = "T" + class_name
        cls = dataclasses.make_dataclass(class_name, specs)
        cls.__tablename__ = table_name  # type: ignore[attr-defined]
        return cls

    # -- internals: writing ----------------------------------------------------------------
    def _model_for(self, objs: Sequence[Any]) -> _Model:
        cls = type(objs[0])
        kinds = set(map(type, objs))
        if len(kinds) != 1:
            odd = next(i for i, o in enumerate(objs) if type(o) is not cls)
            raise WriteError(f"row {odd} is a {type(objs[odd]).__qualname__}, not a "
                             f"{cls.__qualname__}: one call writes one table", row=odd)
        return self._model(cls)

    def _key_condition(self, model: _Model, key: Any) -> sa.ColumnElement[bool]:
        column = model.schema.require_key("a key lookup")
        if key is None:
            raise EntityworksError(f"{model.schema.name!r}: key must not be None")
        return model.table.c[column.name] == encode_value(column, key)

    def _insert(self, conn: sa.Connection, model: _Model, objs: list[Any],
                batch_size: int) -> None:
        key = model.schema.primary_key
        generated: list[int] = []
        if key is not None and key.autoincrement:
            if None in map(attrgetter(key.name), objs):
                keys = list(map(attrgetter(key.name), objs))
                generated = [i for i, k in enumerate(keys) if k is None]
        if generated:
            self._insert_generated(conn, model, objs, generated, key.name)  # type: ignore
            gen = set(generated)
            rest = [i for i in range(len(objs)) if i not in gen]
            self._write_rows(conn, model, [objs[i] for i in rest], rest.__getitem__,
                             self._insert_sql(model), "insert", batch_size)
        else:
            self._write_rows(conn, model, objs, _counting_from(0), self._insert_sql(model),
                             "insert", batch_size)
        if model.children:
            key_name = model.schema.primary_key.name  # type: ignore[union-attr]
            self._insert_children(conn, model, objs,
                                  list(map(attrgetter(key_name), objs)), batch_size)

    def _insert_generated(self, conn: sa.Connection, model: _Model, objs: list[Any],
                          indexes: list[int], key: str) -> None:
        table = model.table
        stmt = table.insert().returning(table.c[key], sort_by_parameter_order=True)
        for start in range(0, len(indexes), BATCH):
            part = indexes[start:start + BATCH]
            chosen = [objs[i] for i in part]
            dicts = self._as_dicts(model, chosen, part.__getitem__)
            for d in dicts:
                d.pop(key)
            new_keys = self._guard(conn, model, lambda d=dicts: conn.execute(stmt, d).all(),
                                   part.__getitem__, replay=(stmt, dicts))
            for obj, (new_key,) in zip(chosen, new_keys, strict=True):
                object.__setattr__(obj, key, new_key)

    def _insert_children(self, conn: sa.Connection, model: _Model, objs: list[Any],
                         keys: list[Any], batch_size: int) -> None:
        for fname, child in model.children:
            rows = []
            for parent, key in zip(objs, keys, strict=True):
                items = getattr(parent, fname)
                if items is None:
                    raise WriteError(f"{model.schema.name}.{fname} is None; use an empty list",
                                     table=model.schema.name, column=fname)
                for position, item in enumerate(items):
                    if type(item) is not child.cls:
                        raise WriteError(
                            f"{model.schema.name}.{fname}[{position}] is a "
                            f"{type(item).__qualname__}, not a {child.cls.__qualname__}",
                            table=model.schema.name, column=fname)
                    rows.append((key, position, item))
            if rows:
                self._write_rows(conn, child, rows, _counting_from(0), self._insert_sql(child),
                                 "insert", batch_size)

    def _delete_children(self, conn: sa.Connection, model: _Model, keys: list[Any]) -> None:
        encoded = _encoded_keys(model, keys)
        for _, child in model.children:
            for start in range(0, len(encoded), 500):
                conn.execute(child.table.delete().where(
                    child.table.c[PARENT_COLUMN].in_(encoded[start:start + 500])))

    def _getter(self, model: _Model) -> Callable[[Any], tuple[Any, ...]]:
        """Row tuple of one instance (or of a ``(parent_key, position, item)`` child row)."""
        field_names = [model.names[i] for i in model.field_index]
        if model.schema.parent is not None:
            inner = attrgetter(*field_names) if field_names else (lambda _o: ())
            if len(field_names) == 1:
                return lambda r: (r[0], r[1], inner(r[2]))
            return lambda r: (r[0], r[1], *inner(r[2]))
        if len(field_names) == 1:
            single = attrgetter(field_names[0])
            return lambda o: (single(o),)
        return attrgetter(*field_names)

    def _encode_rows(self, model: _Model, objs: list[Any], number: RowNumber,
                     encoders: list[Processor]) -> list[Sequence[Any]]:
        getter = self._getter(model)
        active = [(i, e) for i, e in enumerate(encoders) if e is not None]
        if not active:
            return list(map(getter, objs))
        rows: list[Sequence[Any]] = []
        try:
            for obj in objs:
                row = list(getter(obj))
                for i, enc in active:
                    row[i] = enc(row[i])
                rows.append(row)
        except Exception as exc:
            index = len(rows)
            row = list(getter(objs[index]))
            for i, enc in active:
                try:
                    enc(row[i])
                except Exception as inner:
                    raise encode_error(model.names[i], row[i], inner, number(index)) from None
            raise encode_error("?", objs[index], exc, number(index)) from None
        return rows

    def _insert_sql(self, model: _Model) -> str:
        return self._compiled(model, "insert", lambda: model.table.insert())

    def _upsert_sql(self, model: _Model) -> sa.Executable:
        table = model.table
        key = model.schema.require_key("upsert").name
        others = [n for n in model.names if n != key]
        name = self.dialect.name

        def build() -> sa.Executable:
            if name in ("sqlite", "postgresql"):
                from sqlalchemy.dialects import postgresql, sqlite

                insert = (sqlite if name == "sqlite" else postgresql).insert(table)
                if not others:
                    return insert.on_conflict_do_nothing(index_elements=[table.c[key]])
                return insert.on_conflict_do_update(
                    index_elements=[table.c[key]],
                    set_={n: insert.excluded[n] for n in others})
            if name in ("mysql", "mariadb"):
                from sqlalchemy.dialects import mysql

                insert = mysql.insert(table)
                targets = others or [key]
                return insert.on_duplicate_key_update(
                    {n: insert.inserted[n] for n in targets})
            raise EntityworksError(f"upsert is not supported on {name}")

        return self._compiled(model, "upsert", build)

    def _compiled(self, model: _Model, kind: str, build: Callable[[], Any]) -> Any:
        """The statement for ``kind``: compiled SQL text on SQLite, the construct elsewhere."""
        if kind in model.sql_cache:
            return model.sql_cache[kind]
        stmt = build()
        if self.dialect.name == "sqlite":
            compiled = stmt.compile(dialect=self.dialect, column_keys=model.names)
            order = list(compiled.positiontup or [])
            expected = [compiled.binds[name].key for name in order]
            if expected != model.names:  # pragma: no cover - guards the raw fast path
                raise EntityworksError(f"unexpected parameter order {expected}")
            value: Any = compiled.string
        else:
            value = stmt
        model.sql_cache[kind] = value
        return value

    def _write_rows(self, conn: sa.Connection, model: _Model, objs: list[Any],
                    number: RowNumber, statement: Any, kind: str, batch_size: int) -> None:
        """Write ``objs`` with the fastest path the dialect offers, in batches.

        ``number(i)`` is the caller's row number of ``objs[i]``, used in error messages.
        """
        sqlite = self.dialect.name == "sqlite"
        copy = kind == "insert" and self.dialect.name == "postgresql"
        for start in range(0, len(objs), batch_size):
            part = objs[start:start + batch_size]
            at: RowNumber = lambda i, s=start: number(s + i)  # noqa: E731
            if sqlite:
                cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
                if any(model.encoders):
                    rows: Any = self._encode_rows(model, part, at, model.encoders)
                else:  # stream straight from the objects; rebuilt only to locate an error
                    rows = map(self._getter(model), part)
                self._guard(conn, model,
                            lambda r=rows, c=cursor: c.executemany(statement, r), at,
                            raw=(statement, lambda p=part, a=at: self._encode_rows(
                                model, p, a, model.encoders)))
            elif copy:
                rows = self._encode_rows(model, part, at, model.encoders)
                self._guard(conn, model, lambda r=rows: self._copy(conn, model, r), at,
                            replay=(model.table.insert(), self._as_dicts(model, part, at)))
            else:
                dicts = self._as_dicts(model, part, at)
                self._guard(conn, model, lambda d=dicts: conn.execute(statement, d), at,
                            replay=(statement, dicts))

    def _as_dicts(self, model: _Model, objs: list[Any], number: RowNumber
                  ) -> list[dict[str, Any]]:
        """Rows as column -> value dicts, encoded by the registry (SQLAlchemy does the rest)."""
        rows = self._encode_rows(model, objs, number, model.registry_encoders)
        names = model.names
        return [dict(zip(names, row, strict=True)) for row in rows]

    def _copy(self, conn: sa.Connection, model: _Model, rows: list[Sequence[Any]]) -> None:
        preparer = self.dialect.identifier_preparer
        columns = ", ".join(preparer.quote(n) for n in model.names)
        # Identifiers quoted by SQLAlchemy; the data travels in the COPY stream, not in SQL.
        sql = f"COPY {preparer.format_table(model.table)} ({columns}) FROM STDIN"
        raw = conn.connection.dbapi_connection
        with raw.cursor() as cursor, cursor.copy(sql) as copy:  # type: ignore[union-attr]
            write = copy.write_row
            for row in rows:
                write(row)

    def _guard(self, conn: sa.Connection, model: _Model, action: Callable[[], Any],
               number: RowNumber, *, raw: tuple[str, Callable[[], list[Any]]] | None = None,
               replay: tuple[Any, list[dict[str, Any]]] | None = None) -> Any:
        """Run ``action`` in a savepoint; on a database error, locate the row and re-raise."""
        savepoint = conn.begin_nested()
        try:
            result = action()
        except (sa.exc.StatementError, self._dbapi_error, *_BIND_ERRORS) as exc:
            savepoint.rollback()
            row, message = self._locate(conn, raw, replay, exc)
            column = None
            values = None
            if row is not None:
                values = (replay[1][row] if replay is not None
                          else dict(zip(model.names, raw[1]()[row], strict=True)))  # type: ignore
                column = _column_from_binds(model, values) if replay is not None else None
            key = model.schema.primary_key
            column = (column or _column_from_message(message, model.names,
                                                     key.name if key else None)
                      or (_column_from_types(model, values) if values else None))
            reported = None if row is None else number(row)
            where = "a row" if reported is None else f"row {reported}"
            raise WriteError(
                f"{model.schema.name}: {where}"
                + (f", column {column!r}" if column else "")
                + f": {message}; nothing was written",
                table=model.schema.name, row=reported, column=column) from exc
        savepoint.commit()
        return result

    def _locate(self, conn: sa.Connection, raw: Any, replay: Any, exc: BaseException
                ) -> tuple[int | None, str]:
        """Replay a failed batch row by row inside a savepoint to find the failing row."""
        message = _error_text(exc)
        savepoint = conn.begin_nested()
        try:
            if raw is not None:
                sql, rebuild = raw
                rows = rebuild()
                cursor = conn.connection.dbapi_connection.cursor()  # type: ignore
                for i, row in enumerate(rows):
                    try:
                        cursor.execute(sql, row)
                    except (self._dbapi_error, *_BIND_ERRORS) as inner:
                        return i, _error_text(inner)
            elif replay is not None:
                stmt, dicts = replay
                for i, d in enumerate(dicts):
                    inner_sp = conn.begin_nested()
                    try:
                        conn.execute(stmt, d)
                    except (sa.exc.StatementError, self._dbapi_error, *_BIND_ERRORS) as inner:
                        inner_sp.rollback()
                        return i, _error_text(inner)
                    inner_sp.commit()
            return None, message
        finally:
            savepoint.rollback()


def _encoded_keys(model: _Model, keys: list[Any]) -> list[Any]:
    """Parent keys as stored, for the ``parent_key`` column of child tables."""
    to_db = model.schema.primary_key.info.to_db  # type: ignore[union-attr]
    return [to_db(k) for k in keys] if to_db else keys


def _column_from_binds(model: _Model, values: dict[str, Any]) -> str | None:
    """The first column whose bind processor rejects its value (errors raised in Python)."""
    for name, bind in zip(model.names, model.binds, strict=True):
        if bind is not None and values.get(name) is not None:
            try:
                bind(values[name])
            except Exception:
                return name
    return None


def _decode_row(row: Sequence[Any], decoders: list[tuple[int, Callable[[Any], Any]]]
                ) -> tuple[Any, ...]:
    values = list(row)
    for i, dec in decoders:
        values[i] = dec(values[i])
    return tuple(values)


def _construct(cls: type, init: frozenset[str], kwargs: dict[str, Any]) -> Any:
    if len(init) == len(kwargs) and init.issuperset(kwargs):
        return cls(**kwargs)
    obj = cls(**{k: v for k, v in kwargs.items() if k in init})
    for k, v in kwargs.items():
        if k not in init:
            object.__setattr__(obj, k, v)
    return obj


def _error_text(exc: BaseException) -> str:
    orig = getattr(exc, "orig", None) or exc
    lines = [line.strip() for line in str(orig).strip().splitlines() if line.strip()]
    if not lines:
        return type(orig).__name__
    # PostgreSQL names the offending key in its DETAIL line.
    detail = [line for line in lines[1:] if line.startswith("DETAIL:")]
    column = getattr(getattr(orig, "diag", None), "column_name", None)
    extra = [f"(column \"{column}\")"] if column and f'"{column}"' not in lines[0] else []
    return " ".join([lines[0], *detail, *extra])


_COLUMN_PATTERNS = [
    re.compile(r"cannot store \w+ value in \w+ column (?:.*\.)?([^.]+)$"),  # sqlite STRICT
    re.compile(r"constraint failed: (?:[^\s.]+\.)?\"?([^\s,\"]+)"),  # sqlite
    re.compile(r"Key \(([^)]+)\)="),                                  # postgresql unique
    re.compile(r"column \"([^\"]+)\""),                               # postgresql
    re.compile(r"[Cc]olumn [`'\"]([^`'\"]+)[`'\"]"),                  # mariadb
    re.compile(r"for column [`'\"](?:[^`'\"]+[`'\"]\.[`'\"])*([^`'\"]+)[`'\"]"),
    re.compile(r"for key '(?:[^'.]+\.)?([^']+)'"),                    # mariadb duplicates
]


def _column_from_types(model: _Model, values: dict[str, Any]) -> str | None:
    """The first plain column holding a value of the wrong Python type."""
    for c in model.schema.columns:
        value = values.get(c.name)
        expected = c.info.python_type
        if value is None or c.info.to_db is not None or not isinstance(expected, type):
            continue
        if expected is float and isinstance(value, int):
            continue
        if not isinstance(value, expected):
            return c.name
    return None


def _column_from_message(message: str, names: list[str], key: str | None = None
                         ) -> str | None:
    for pattern in _COLUMN_PATTERNS:
        m = pattern.search(message)
        if not m:
            continue
        candidate = m.group(1)
        if candidate.startswith("type_") and candidate[5:] in names:
            return candidate[5:]
        if candidate in names:
            return candidate
        if key and (candidate.upper() == "PRIMARY" or candidate.endswith("_pkey")):
            return key
    if key and re.search(r"_pkey\b|PRIMARY", message):
        return key
    return None


__all__ = ["Store"]

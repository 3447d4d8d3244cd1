"""``Database``: what every stage of a Store shares: the engine, the thread's connection and
transaction, and the classes bound to this database (:class:`~entityworks.sql._bound.BoundModel`).

The public :class:`~entityworks.sql.store.Store` is a thin face over it; read, write, the
point path, DDL and reflection take a ``Database`` (never the Store), so that none of them
imports the Store.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import sqlalchemy as sa

from ..errors import NoSuchTableError, SchemaError
from ..model.schema import TableSchema, instance_builder, table_schema
from ..registry import TypeRegistry
from ._bound import BoundModel, descendants
from ._rowcodec import row_codec
from .backends import Backend, for_name, names_where
from .tables import Live, build_tables, schema_of


class _Local(threading.local):
    """The calling thread's state: its ``transaction()`` connection, if any (a class
    default, so that asking costs no AttributeError), and the connection an
    :class:`~entityworks.sql.asyncstore.AsyncStore` lent for the call running now."""

    conn: sa.Connection | None = None
    lent: sa.Connection | None = None


class TaskLocal:
    """The state of :class:`_Local` kept per asyncio task instead of per thread (one
    thread runs every task of an event loop): ``ContextVar``s, which the greenlet that runs
    a task's sync call (``AsyncConnection.run_sync``) shares with the task."""

    def __init__(self) -> None:
        self._conn: ContextVar[sa.Connection | None] = ContextVar(
            "entityworks_transaction", default=None
        )
        self._lent: ContextVar[sa.Connection | None] = ContextVar("entityworks_lent", default=None)

    @property
    def conn(self) -> sa.Connection | None:
        return self._conn.get()

    @conn.setter
    def conn(self, value: sa.Connection | None) -> None:
        self._conn.set(value)

    @property
    def lent(self) -> sa.Connection | None:
        return self._lent.get()

    @lent.setter
    def lent(self, value: sa.Connection | None) -> None:
        self._lent.set(value)


class Database:
    """One Store's engine, connections and bound classes, shared by its stages.

    ``name`` is how messages name the store (``Store('sqlite:///x.db')``). ``backend``: the
    engine's, when the caller has it (else looked up here, once).
    """

    def __init__(
        self,
        url: sa.URL,
        engine: sa.Engine,
        registry: TypeRegistry,
        backend: Backend | None = None,
        local: _Local | TaskLocal | None = None,
    ) -> None:
        self.url = url
        self.engine = engine
        self.registry = registry
        self.dialect: sa.Dialect = engine.dialect
        #: What the Store does differently on this database (see :mod:`.backends`).
        self.backend: Backend = backend if backend is not None else for_name(self.dialect.name)
        #: The driver's exception base class (``sqlite3.Error``, ``psycopg.Error``...).
        self.dbapi_error: type[Exception] = self.dialect.loaded_dbapi.Error
        #: The thread's state (``local``: an AsyncStore's, per task, see :class:`TaskLocal`).
        self.local: _Local | TaskLocal = local if local is not None else _Local()
        self.models: dict[type, BoundModel] = {}
        #: One MetaData for every table of the store, so that tables can refer to each other.
        self.metadata: sa.MetaData = sa.MetaData()
        self.lock: threading.RLock = threading.RLock()

    def __repr__(self) -> str:
        return f"Store({self.url.render_as_string(hide_password=True)!r})"

    def schema(self, cls: type) -> TableSchema:
        """The inferred schema of ``cls`` (see :func:`entityworks.table_schema`)."""
        return table_schema(cls, self.registry)

    def model(self, cls: type) -> BoundModel:
        """``cls`` bound to this database (built once; its tables are not created here)."""
        try:
            return self.models[cls]
        except (KeyError, TypeError):
            pass
        with self.lock:
            if cls not in self.models:
                schema = table_schema(cls, self.registry)
                self.backend.check_names(schema)
                # the tables this one refers to first: its foreign keys point at their
                # columns (build_tables refuses a cycle before this could recurse forever)
                targets = {c.references for c in schema.columns} - {None, cls}
                metadata = self.metadata
                build_tables(schema, sa.MetaData(), self.backend, {}, self.schema)
                for target in targets:
                    self.model(target)  # type: ignore[arg-type]
                refuse_deep_cascades(schema, self.schema)
                self._release_names(schema)
                build_tables(schema, metadata, self.backend, self._live(schema), self.schema)
                self.models[cls] = self._make_model(schema, metadata)
            return self.models[cls]

    def forget(self, cls: type) -> None:
        """Unbind ``cls`` once its tables are dropped: it was bound to the layout they had
        (an older one keeps its columns, see ``_live``), and is bound again, to what is
        live then, when next used (a ``create`` then makes today's layout)."""
        with self.lock:
            model = self.models.pop(cls, None)
            if model is not None:
                self._release_names(model.schema)

    def _release_names(self, schema: TableSchema) -> None:
        """Free the names of ``schema``'s tables in the store's MetaData before they are
        built (again): another class may hold them (two classes for one table, e.g. before
        and after a migration), which is then rebuilt when it is used again."""
        for name in {schema.name, *(child.name for child in schema.descendants)}:
            table = self.metadata.tables.get(name)
            if table is None:
                continue
            owner = schema_of(table)
            if owner is not None and owner.cls is not schema.cls:
                self.models.pop(owner.cls, None)
            self.metadata.remove(table)

    def _live(self, schema: TableSchema) -> Live:
        """The columns of the tables of ``schema`` that exist already (name -> declared type).

        A table created before a companion column existed keeps its layout (see ``tables``).
        """
        names = [schema.name, *(child.name for child in schema.descendants)]
        with self.connection() as conn:
            return self.backend.live_columns(conn, schema, names)

    def _make_model(self, schema: TableSchema, metadata: sa.MetaData) -> BoundModel:
        table = metadata.tables[schema.name]
        codec = row_codec(schema, table, self.dialect)
        names = codec.fields
        offset = schema.links  # a child table's (parent_key, positions...) come first
        # (an Optional child list is a column too: its value, [] or None, starts the list)
        build = instance_builder(
            schema.cls,
            [*names[offset:], *(child.field for child in schema.children if not child.optional)],
        )
        # Rows are decoded before they are built, so decoders do not stop the fast path.
        plain = not schema.children and offset == 0 and build is schema.cls
        children = [
            (child.field, self._make_model(child.schema, metadata)) for child in schema.children
        ]
        return BoundModel(
            schema,
            table,
            codec,
            codec.names,
            names,
            list(range(offset, len(names))),
            codec.fast,
            codec.binds,
            codec.registry,
            plain,
            build,
            children,
            {},
        )

    def tables_with_references(self, model: BoundModel) -> list[sa.Table]:
        """The tables ``create`` makes for ``model``: those its foreign keys refer to (and
        theirs), then its own and its child tables."""
        out: list[sa.Table] = []
        seen: set[type] = set()

        def visit(m: BoundModel) -> None:
            if m.cls in seen:
                return
            seen.add(m.cls)
            for c in m.schema.columns:
                if c.references is not None and c.references is not m.cls:
                    visit(self.model(c.references))
            out.append(m.table)
            out.extend(child.table for child in descendants(m))

        visit(model)
        return out

    @property
    def in_transaction(self) -> bool:
        """True inside :meth:`transaction` (on the calling thread)."""
        return self.local.conn is not None

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Group operations: all of them are kept, or (on an exception) none.

        Nested use becomes a savepoint. The transaction belongs to the calling thread.
        """
        outer = getattr(self.local, "conn", None)
        if outer is not None:
            with outer.begin_nested():
                yield
            return
        with self.connect() as conn:
            conn.execution_options(entityworks_write=True)
            with conn.begin():
                self.local.conn = conn
                try:
                    yield
                finally:
                    self.local.conn = None

    @contextmanager
    def connection(self, write: bool = False) -> Iterator[sa.Connection]:
        """The calling thread's connection, in a transaction.

        A write inside :meth:`transaction` runs in its own savepoint, so that a call which
        fails part-way (a later batch, a child row) leaves the outer transaction exactly as
        it was before the call.
        """
        current = getattr(self.local, "conn", None)
        if current is not None:
            if write:
                with current.begin_nested():
                    yield current
            else:
                yield current
            return
        with self.connect() as conn:
            if write:
                conn.execution_options(entityworks_write=True)
            with conn.begin():
                yield conn

    @contextmanager
    def connect(self) -> Iterator[sa.Connection]:
        """A new connection of the engine (no transaction begun), closed afterwards; during
        an AsyncStore's call, the connection it lent for that call (left open: the
        AsyncStore closes it)."""
        lent = self.local.lent
        if lent is not None:
            yield lent
            return
        with self.engine.connect() as conn:
            yield conn

    @contextmanager
    def reading(self, model: BoundModel) -> Iterator[None]:
        """Turn the database's error for a read of a table never created into a
        :class:`NoSuchTableError` naming the class and the table; others pass unchanged."""
        try:
            yield
        except (sa.exc.DBAPIError, self.dbapi_error) as exc:
            table = _missing_table(self.backend, model, exc)
            if table is None:
                raise
            root = model.schema.root
            what = (
                f"table {table!r}"
                if table == root.name
                else f"child table {table!r} (of table {root.name!r})"
            )
            raise NoSuchTableError(
                f"{root.cls.__qualname__}: {what} does not exist in {self!r}; create it "
                f"with store.create({root.cls.__qualname__})",
                cls=root.cls,
                table=table,
            ) from exc


#: The most foreign keys one delete may act through, one below another: InnoDB (MariaDB)
#: refuses a delete whose ON DELETE CASCADE / SET NULL reaches rows 15 levels down, which
#: SQLite and PostgreSQL apply; entityworks refuses such a schema on every backend. (The
#: least of the backends' ``max_cascade_levels``.)
MAX_CASCADE_LEVELS = 14
_ACTS = ("cascade", "set null")


def _cascades_up(
    cls: type, resolve: Callable[[type], TableSchema], seen: frozenset[type]
) -> list[TableSchema]:
    """The longest chain of tables from ``cls``'s upward through ON DELETE CASCADE
    references (``cls``'s first; a class referring to itself, whose depth only its rows
    decide, is not followed)."""
    schema = resolve(cls)
    best: list[TableSchema] = []
    for c in schema.columns:
        if (
            c.on_delete == "cascade"
            and c.references is not None
            and c.references not in seen | {cls}
        ):
            above = _cascades_up(c.references, resolve, seen | {cls})
            best = max(best, above, key=len)
    return [schema, *best]


def refuse_deep_cascades(schema: TableSchema, resolve: Callable[[type], TableSchema]) -> None:
    """SchemaError when deleting a row could act (CASCADE or SET NULL) through more than
    :data:`MAX_CASCADE_LEVELS` foreign keys, one table below another, ending at ``schema``'s
    table or its child tables (a child table's rows cascade from their parent's)."""
    chains: list[tuple[type, str, list[TableSchema]]] = []
    above = _cascades_up(schema.cls, resolve, frozenset())
    for child in schema.children:  # named by the list field of the parent's class
        chains.append((schema.cls, child.field, [child.schema, *above]))
    for table in [schema, *(child.schema for child in schema.children)]:
        for c in table.columns:
            if c.on_delete in _ACTS and c.references not in (None, table.cls):
                chains.append(
                    (
                        table.cls,
                        c.name,
                        [table, *_cascades_up(c.references, resolve, frozenset({table.cls}))],
                    )
                )
    for cls, field, chain in chains:
        if len(chain) - 1 > MAX_CASCADE_LEVELS:
            path = " <- ".join(t.name for t in reversed(chain))
            raise SchemaError(
                f"{cls.__qualname__}.{field}: deleting a row of {chain[-1].name!r} "
                f"would act through {len(chain) - 1} foreign keys, one table below another "
                f"({path}); {_limited_by()} applies at most {MAX_CASCADE_LEVELS}, so entityworks "
                f"refuses such a chain on every backend: end it sooner with "
                f"on_delete='no action' or 'restrict' (and delete the rows below first)",
                cls=cls,
                field=field,
            )


def _limited_by() -> str:
    """How messages name the backend whose limit :data:`MAX_CASCADE_LEVELS` is."""
    limits = {
        for_name(name).title
        for name in names_where(lambda backend: backend.max_cascade_levels == MAX_CASCADE_LEVELS)
    }
    return " and ".join(sorted(limits)) or "a backend"


def _missing_table(backend: Backend, model: BoundModel, exc: BaseException) -> str | None:
    """The table of ``model``'s tree that ``exc`` says does not exist (as ``backend`` tells
    such an error), else None."""
    orig = getattr(exc, "orig", None) or exc
    if not backend.missing_table(orig):
        return None
    root = model.schema.root
    names = sorted([root.name, *(t.name for t in root.descendants)], key=len, reverse=True)
    for name in names:  # the longest first: a child's name starts with its parent's
        if backend.names_missing(orig, name):
            return name
    return model.schema.name


__all__ = ["MAX_CASCADE_LEVELS", "Database", "TaskLocal", "refuse_deep_cascades"]

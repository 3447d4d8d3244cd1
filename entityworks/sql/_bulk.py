"""Bulk writing: the one encoder of rows, and :class:`Rows`, the batch a backend writes.

Every write (``insert``, ``insert_many``, ``upsert(_many)``, ``insert_encoded`` and the
catalog's) goes objects -> encoded rows -> ``backend.write_rows`` (or
``backend.insert_generated`` for rows whose key the database generates). The backend owns
the execution strategy, as SQLAlchemy's dialects own ``do_executemany``: it asks the
:class:`Rows` for the form it sends (rows bound for its driver, checked rows, dicts for
SQLAlchemy, the instances themselves) and for the compiled statements, and runs them
through :meth:`Rows.guard`, which locates and names a refused row.

Kept apart from :mod:`~entityworks.sql._write`, which decides what to write (batches,
keys, child rows, updates, deletes); this module only encodes and hands over rows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import lru_cache, partial
from itertools import chain, repeat
from operator import countOf
from typing import Any, overload

import sqlalchemy as sa

from .._gcpause import paused_gc
from ..errors import EntityworksError, GateRefused
from ..registry import encode_error
from ..types.construct import column_getter, fields_getter, plain_identifier
from ._bound import BoundModel, Processor, RowNumber
from ._database import Database
from ._locate import (
    attempt,
    error_text,
    guard,
    identical,
    refusal,
    refused,
    unique_clash,
)
from ._log import INFO, listened, logged, sql_logger
from ._rowcodec import CHUNK

#: Rows per batch of ``insert_many`` / ``upsert_many``: what is held in memory at once.
BATCH = 20_000


def row_getter(model: BoundModel) -> Callable[[Any], tuple[Any, ...]]:
    """Row tuple of one instance (or of a ``(parent_key, position, item)`` child row)."""
    inner = fields_getter(tuple(model.fields[i] for i in model.field_index))
    if model.schema.parent is not None:
        links = model.schema.links
        if links > 2:  # a child of a child: (parent_key, position_1, ..., position, item)
            return lambda r: (*r[:links], *inner(r[links]))
        return lambda r: (r[0], r[1], *inner(r[2]))
    return inner


def _identity(row: Any) -> Any:
    return row


def _after(number: RowNumber, start: int, index: int) -> int:
    """``number`` of the row ``index`` of a chunk that starts at row ``start``."""
    return number(start + index)


class ColumnRows(Sequence[tuple[Any, ...]]):
    """Schema rows held a column at a time (the columnar lane's batches): the bulk
    encoding takes the columns as they are, and a row tuple is made only where one is
    asked for (a refused row located, a key reserved).

    ``ready``: by schema column index, SQL columns already made (the field's own, then its
    companions'), which the bulk encoding takes in place of encoding that column's values
    (see ``Backend.arrow_form``); that column's values are then usually a
    :class:`LazyColumn`, made only where a value is asked for (the checked path).
    ``source``: the rows as the backend made them from their Arrow batch, which it may
    write as they are."""

    def __init__(
        self,
        columns: Sequence[Sequence[Any]],
        size: int,
        ready: dict[int, list[Sequence[Any]]] | None = None,
        source: Any = None,
    ) -> None:
        self.columns = list(columns)
        self.size = size
        self.ready = ready or None
        #: What the backend made of the rows' Arrow batch (``Backend.arrow_rows``), if
        #: anything: it writes that (``Rows.arrow``).
        self.source = source

    def __len__(self) -> int:
        return self.size

    @overload
    def __getitem__(self, index: int) -> tuple[Any, ...]: ...

    @overload
    def __getitem__(self, index: slice) -> list[tuple[Any, ...]]: ...

    def __getitem__(self, index: int | slice) -> tuple[Any, ...] | list[tuple[Any, ...]]:
        if isinstance(index, slice):
            return list(zip(*(c[index] for c in self.columns), strict=True))
        if not -self.size <= index < self.size:
            raise IndexError(index)
        return tuple(c[index] for c in self.columns)

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        if not self.columns:
            return iter([()] * self.size)
        return zip(*self.columns, strict=True)

    def take(self, indexes: Sequence[int]) -> ColumnRows:
        """The rows at ``indexes``, in that order."""
        ready: dict[int, list[Sequence[Any]]] | None = None
        if self.ready:
            ready = {k: [[c[i] for i in indexes] for c in sql] for k, sql in self.ready.items()}
        return ColumnRows([[c[i] for i in indexes] for c in self.columns], len(indexes), ready)


class LazyColumn(Sequence[Any]):
    """A column of ``size`` values made by ``make()`` the first time one is asked for."""

    def __init__(self, make: Callable[[], Sequence[Any]], size: int) -> None:
        self._make: Callable[[], Sequence[Any]] | None = make
        self._values: Sequence[Any] = ()
        self.size = size

    def values(self) -> Sequence[Any]:
        """The values (made now if they were not yet)."""
        if self._make is not None:
            self._values = self._make()
            self._make = None
        return self._values

    def __len__(self) -> int:
        return self.size

    @overload
    def __getitem__(self, index: int) -> Any: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Any]: ...

    def __getitem__(self, index: int | slice) -> Any:
        return self.values()[index]

    def __iter__(self) -> Iterator[Any]:
        return iter(self.values())


def _ready_of(items: Sequence[Any]) -> dict[int, list[Sequence[Any]]] | None:
    """The SQL columns already made of :class:`ColumnRows` (see there), else None."""
    return items.ready if isinstance(items, ColumnRows) else None


def _columns_of(items: Sequence[Any]) -> list[Sequence[Any]]:
    """The columns of schema rows (as they are when the rows are :class:`ColumnRows`)."""
    if isinstance(items, ColumnRows):
        return items.columns
    return list(zip(*items, strict=True))


@lru_cache(maxsize=256)
def _attribute_setter(name: str) -> Callable[[Sequence[Any], Iterable[Any]], None] | None:
    """``(objs, values) -> None`` doing ``o.<name> = value`` for each pair, compiled like
    :func:`~entityworks.types.construct.fields_getter` (Python specialises the store to
    the instance's layout); None for a name that is not a plain identifier."""
    if not plain_identifier(name):
        return None
    namespace: dict[str, Any] = {}
    exec(  # noqa: S102 - an identifier only
        f"def set_all(objs, values):\n"
        f"    for o, v in zip(objs, values, strict=True):\n"
        f"        o.{name} = v\n",
        namespace,
    )
    setter: Callable[[Sequence[Any], Iterable[Any]], None] = namespace["set_all"]
    return setter


#: ``object.__setattr__``, which a class without its own keeps.
_OBJECT_SETATTR: Any = object.__setattr__


def set_attribute(objs: Sequence[Any], name: str, values: Iterable[Any]) -> None:
    """Set ``name`` on each of ``objs`` (instances of one class) to its value in ``values``
    (as many), as ``object.__setattr__`` does: frozen dataclasses too. Where the class
    keeps ``object``'s own ``__setattr__``, by a compiled loop of plain assignments (the
    same operation)."""
    if not objs:
        return
    fast = _attribute_setter(name) if type(objs[0]).__setattr__ is _OBJECT_SETATTR else None
    if fast is not None:
        fast(objs, values)
    else:  # a C loop (a class's own __setattr__, such as a frozen one's, bypassed)
        any(map(object.__setattr__, objs, repeat(name), values))


def encode(
    model: BoundModel,
    items: Sequence[Any],
    number: RowNumber,
    processors: list[Processor] | None = None,
    *,
    schema_rows: bool = False,
    values: bool = False,
) -> list[Sequence[Any]]:
    """The SQL rows of ``items``: instances (or child rows ``(parent_key, position, item)``),
    or schema rows already through the registry (``schema_rows``: encoded elsewhere).

    ``processors`` None: the bulk form, a column at a time (``RowCodec.fast_columns``: a
    type test per value at C speed, the costly parts of a rule only where a type has
    them). Otherwise each schema column through ``processors[i]`` (``codec.checked``,
    ``codec.registry``...), row by row. Either way a refused value raises its
    :func:`encode_error`, naming the field and the row (``number(i)``); the companions
    follow each column (``codec.spread``). ``values``: schema rows of field values, as
    instances hold them (``Rows.value_rows``), encoded as the instances' rows are.
    """
    schema_rows = schema_rows or values  # (either way a row is a tuple of the columns)
    getter = _identity if schema_rows else row_getter(model)
    if processors is None:
        steps = model.codec.fast_columns
        if not items or not any(steps):
            return list(items) if schema_rows else list(map(getter, items))
        # Tuples by the ten thousand, holding plain values: the collector's passes over
        # them would find nothing (see entityworks._gcpause).
        with paused_gc():
            if schema_rows:
                columns: list[Sequence[Any]] = _columns_of(items)
            elif model.schema.parent is not None:
                columns = list(zip(*map(getter, items), strict=True))
            else:  # each column straight from the instances
                columns = [column_getter(model.fields[i])(items) for i in model.field_index]
            try:
                encoded = model.codec.encode_columns(columns, _ready_of(items))
            except Exception:  # noqa: BLE001 - row by row below names the value
                return _each_row(model, items, getter, number, model.encoders)
            return list(zip(*encoded, strict=True))
    if schema_rows and items:
        # rows encoded elsewhere: each column through its processor, then the companions,
        # a column at a time; a refused value is named by the row-by-row pass below
        codec = model.codec
        spread_columns = codec.spread_columns
        with paused_gc():
            columns = _columns_of(items)
            try:
                main: list[Sequence[Any]] = [
                    column if p is None else list(map(p, column))
                    for column, p in zip(columns, processors, strict=True)
                ]
                sql = main if spread_columns is None else spread_columns(columns, main)
            except Exception:  # noqa: BLE001 - row by row below names the value
                pass
            else:
                return list(zip(*sql, strict=True))
    return _each_row(model, items, getter, number, processors)


def _each_row(
    model: BoundModel,
    items: Sequence[Any],
    getter: Callable[[Any], Sequence[Any]],
    number: RowNumber,
    processors: list[Processor],
) -> list[Sequence[Any]]:
    """:func:`encode`, row by row; the first refused value named by the complete checks."""
    active = [(i, e) for i, e in enumerate(processors) if e is not None]
    spread = model.codec.spread
    if not active and spread is None:
        return [tuple(getter(item)) for item in items]
    rows: list[Sequence[Any]] = []
    try:
        for item in items:
            values = getter(item)
            row = list(values)
            for i, enc in active:
                row[i] = enc(row[i])
            rows.append(row if spread is None else spread(values, row))
    except Exception as exc:
        index = len(rows)
        row = list(getter(items[index]))
        for i, check in [*active, *enumerate(model.codec.checked)]:
            try:
                if check is not None:
                    check(row[i])
            except Exception as inner:
                raise encode_error(model.fields[i], row[i], inner, number(index)) from None
        raise encode_error("?", items[index], exc, number(index)) from None
    return rows


def as_dicts(model: BoundModel, objs: Sequence[Any], number: RowNumber) -> list[dict[str, Any]]:
    """Rows as column -> value dicts, encoded by the registry (SQLAlchemy does the rest)."""
    names = model.names
    rows = encode(model, objs, number, model.registry_encoders)
    return [dict(zip(names, row, strict=True)) for row in rows]


def insert_sql(db: Database, model: BoundModel) -> str:
    """The one-row INSERT of ``model``, compiled with positional parameters in the order
    of ``model.names`` (a driver's own ``execute``)."""
    return positional(db, model, "insert", model.table.insert)


def positional(db: Database, model: BoundModel, kind: str, build: Callable[[], Any]) -> str:
    """The statement ``build()`` compiled for the store's dialect, its parameters those of
    one SQL row in the order of ``model.names`` (cached per model as ``kind``)."""
    key = f"compiled:{kind}"
    cached = model.sql_cache.get(key)
    if cached is None:
        compiled = build().compile(dialect=db.dialect, column_keys=model.names)
        order = [compiled.binds[name].key for name in compiled.positiontup or []]
        if order != model.names:  # pragma: no cover - guards the driver paths
            raise EntityworksError(f"unexpected parameter order {order}")
        cached = model.sql_cache[key] = compiled.string
    return cached


def multi_insert_sql(db: Database, model: BoundModel, rows: int) -> str | None:
    """The INSERT of ``rows`` rows in one statement, compiled, its positional parameters
    each row's ``model.names`` in turn; ``None`` where the compiled order differs."""
    kind = f"insert:{rows}"
    if kind not in model.sql_cache:
        names = model.names
        stmt = model.table.insert().values(
            [{name: sa.bindparam(f"r{r}_{i}") for i, name in enumerate(names)} for r in range(rows)]
        )
        compiled = stmt.compile(dialect=db.dialect)
        expected = [f"r{r}_{i}" for r in range(rows) for i in range(len(names))]
        columns = [c.key for c in model.table.columns if c.key in names]
        same = list(compiled.positiontup or []) == expected and columns == names
        model.sql_cache[kind] = compiled.string if same else ""
    return model.sql_cache[kind] or None


def keyless_insert_sql(db: Database, model: BoundModel, rows: int = 1) -> str | None:
    """The INSERT of ``rows`` rows without the single key column (the database gives each
    row its key), compiled, its positional parameters each row's ``model.names`` but the
    key in turn; ``None`` where the compiled order differs."""
    kind = f"keyless:{rows}"
    if kind not in model.sql_cache:
        key = model.schema.primary_key.name  # type: ignore[union-attr]
        names = [n for n in model.names if n != key]
        stmt = model.table.insert().values(
            [{name: sa.bindparam(f"r{r}_{i}") for i, name in enumerate(names)} for r in range(rows)]
        )
        compiled = stmt.compile(dialect=db.dialect)
        expected = [f"r{r}_{i}" for r in range(rows) for i in range(len(names))]
        columns = [c.key for c in model.table.columns if c.key in names]
        same = list(compiled.positiontup or []) == expected and columns == names
        model.sql_cache[kind] = compiled.string if same else ""
    return model.sql_cache[kind] or None


def upsert_sql(db: Database, model: BoundModel) -> sa.Executable:
    """The upsert statement of ``model`` (its backend's), built once."""
    if "upsert" not in model.sql_cache:
        keys = [c.name for c in model.schema.require_keys("upsert")]
        others = [n for n in model.names if n not in keys]
        restated = restated_keys(db, model)
        model.sql_cache["upsert"] = db.backend.upsert(model.table, keys, others, restated)  # type: ignore[assignment]
    return model.sql_cache["upsert"]  # type: ignore[return-value]


def restated_keys(db: Database, model: BoundModel) -> list[str]:
    """Key columns an upsert or ``update(obj)`` sets although they match the row (see
    ``Backend.restated_keys``)."""
    return db.backend.restated_keys(model.schema.key_columns)


class Rows:
    """One batch of rows of one table, handed to the backend that writes it.

    ``items`` are instances (child rows: ``(parent_key, *positions, item)``) or, with
    ``schema_rows``, schema rows already through the registry (``insert_encoded``), or,
    with ``value_rows``, schema rows of field values as instances would hold them (the
    columnar lane: encoded and checked as the instances' rows are, a column at a time).
    ``number(i)`` is the caller's row number of ``items[i]`` in errors; ``kind`` is
    ``"insert"`` or ``"upsert"``. Each form of the rows is encoded once, when a backend
    first asks for it.
    """

    def __init__(
        self,
        db: Database,
        conn: sa.Connection,
        model: BoundModel,
        items: Sequence[Any],
        number: RowNumber,
        kind: str = "insert",
        *,
        schema_rows: bool = False,
        value_rows: bool = False,
        call: dict[str, Any] | None = None,
        ahead: int | None = None,
    ) -> None:
        self.db = db
        self.conn = conn
        self.model = model
        self.items = items
        self.number = number
        self.kind = kind
        self.schema_rows = schema_rows
        self.value_rows = value_rows
        #: What a backend keeps from one batch of a call to the next (keys taken ahead).
        self.call: dict[str, Any] = {} if call is None else call
        #: The rows of the call from this batch on, where the input's length says (else
        #: this batch's).
        self.ahead = len(items) if ahead is None else max(ahead, len(items))
        self._bound: list[Sequence[Any]] | None = None
        #: True once :meth:`with_keys` set reserved keys on the instances (the caller
        #: need not write them back again).
        self.keys_written = False

    def __len__(self) -> int:
        return len(self.items)

    # -- the rows, in the form the backend sends ------------------------------------------
    @property
    def cache(self) -> dict[str, Any]:
        """The model's cache of compiled statements (a backend may keep its own there)."""
        return self.model.sql_cache

    def instances(self) -> Sequence[Any] | None:
        """The instances themselves (top-level rows made of objects), else None."""
        if self.schema_rows or self.value_rows or self.model.schema.parent is not None:
            return None
        return self.items

    def arrow(self) -> Any | None:
        """What the backend made of the columnar lane's Arrow batch of these rows, all of
        them (``Backend.arrow_rows``), else None. A backend that writes it stores what
        it would store of the decoded values, or is refused (:meth:`attempt`) and writes
        the rows another way."""
        items = self.items
        if not self.value_rows or not isinstance(items, ColumnRows):
            return None
        return items.source

    def bound(self) -> list[Sequence[Any]]:
        """SQL rows as the driver takes them: the bulk checks (a column at a time) and the
        bind processors applied; the driver or the database refuses the rest itself."""
        if self._bound is None:
            if self.schema_rows:
                rows = self.model.codec.exact_rows(self.items, self.number)  # type: ignore[arg-type]
                self._bound = encode(
                    self.model, rows, self.number, self.model.codec.encoded_bound, schema_rows=True
                )
            elif self.value_rows:  # the instances' bulk encoding, of their values
                self._bound = encode(self.model, self.items, self.number, values=True)
            else:
                self._bound = encode(self.model, self.items, self.number)
        return self._bound

    def bound_chunks(self, size: int = CHUNK) -> Iterator[list[Sequence[Any]]] | None:
        """:meth:`bound` a chunk of ``size`` instances at a time, lazily, each chunk's gated
        columns checked as it is encoded (:class:`GateRefused` at the first that fails), so
        that a COPY encodes chunk k + 1 while the server stores chunk k. A value the bulk
        encoding refuses raises its error naming the row, as :meth:`bound` does. None for
        rows that are not instances, or a batch of one chunk."""
        if self.instances() is None or len(self.items) <= size:
            return None
        model, items, number = self.model, self.items, self.number
        codec = model.codec

        def chunks() -> Iterator[list[Sequence[Any]]]:
            for start in range(0, len(items), size):
                part = encode(model, items[start : start + size], partial(_after, number, start))
                refused = codec.gate_refused(part)
                if refused is not None:
                    raise GateRefused(refused, start)
                yield part

        return chunks()

    def streamed(self) -> Iterable[Sequence[Any]] | None:
        """The SQL rows read straight from the objects when nothing needs encoding (the
        database refuses a value of another type itself), else None."""
        model = self.model
        if self.schema_rows or any(model.encoders) or model.codec.spread is not None:
            return None
        if self.value_rows:
            return iter(self.items)
        return map(row_getter(model), self.items)

    def checked(self) -> list[Sequence[Any]]:
        """SQL rows through the complete checks (which name a value of the wrong type, and
        convert what typing allows) and the bind processors: what a refused batch is
        written again with."""
        if self.schema_rows:
            return self.bound()
        if self.value_rows:
            return encode(
                self.model, self.items, self.number, self.model.codec.checked, values=True
            )
        return encode(self.model, self.items, self.number, self.model.codec.checked)

    def dicts(self) -> list[dict[str, Any]]:
        """Rows as column -> value dicts, encoded by the registry, for SQLAlchemy (which
        binds them)."""
        if self.value_rows:
            names = self.model.names
            values = encode(
                self.model, self.items, self.number, self.model.registry_encoders, values=True
            )
            return [dict(zip(names, row, strict=True)) for row in values]
        if not self.schema_rows:
            return as_dicts(self.model, self.items, self.number)
        rows = self.model.codec.exact_rows(self.items, self.number)  # type: ignore[arg-type]
        encoded = encode(self.model, rows, self.number, self.model.codec.encoded, schema_rows=True)
        names = self.model.names
        return [dict(zip(names, row, strict=True)) for row in encoded]

    def keyless(self) -> list[Sequence[Any]] | None:
        """The rows of :meth:`bound`, their key column left out, for an INSERT or a COPY
        that lets the database give each row its key (:meth:`keyless_sql`, which may be
        None where the compiled INSERT differs): the bulk form, encoded a column at a
        time. None where that form does not apply: rows that are not instances, a table
        of the key alone, a key that is not None on every row, a value the bulk encoding
        refuses (which :meth:`bound`, then :meth:`checked`, name)."""
        objs = self.instances()
        model = self.model
        key = model.schema.primary_key
        if self.value_rows:
            objs = self.items
        if (
            not objs
            or key is None
            or model.schema.composite
            or len(model.names) < 2  # the key alone: no INSERT without it
        ):
            return None
        at = self.key_index()
        with paused_gc():  # see encode
            if self.value_rows:
                columns: list[Sequence[Any]] = _columns_of(objs)
            else:
                columns = [column_getter(model.fields[i])(objs) for i in model.field_index]
            try:
                encoded = model.codec.encode_columns(columns, _ready_of(objs))
            except Exception:  # noqa: BLE001 - bound() names the value
                return None
            if len(encoded) != len(model.names) or countOf(encoded[at], None) != len(objs):
                return None
            return list(zip(*encoded[:at], *encoded[at + 1 :], strict=True))

    def keyless_sql(self, rows: int = 1) -> str | None:
        """The INSERT of ``rows`` rows of :meth:`keyless` (positional, as :meth:`compiled`),
        None where that form differs."""
        return keyless_insert_sql(self.db, self.model, rows)

    def key_index(self) -> int:
        """The SQL row index of the primary key (a single key)."""
        return self.model.names.index(self.model.schema.primary_key.name)  # type: ignore[union-attr]

    def with_keys(self, keys: Sequence[Any]) -> Rows:
        """These rows with the keys ``keys`` (reserved by the backend) in place of None:
        set on the instances too, as an inserted row's generated key is."""
        name = self.model.schema.primary_key.name  # type: ignore[union-attr]
        if self.schema_rows or self.value_rows:
            at = self.model.fields.index(name)
            items: Sequence[Any] = [
                (*row[:at], key, *row[at + 1 :]) for row, key in zip(self.items, keys, strict=True)
            ]
        else:
            if len(keys) != len(self.items):
                raise ValueError(f"{len(keys)} keys for {len(self.items)} rows")
            self.set_keys(keys)
            items = self.items
        return Rows(
            self.db,
            self.conn,
            self.model,
            items,
            self.number,
            self.kind,
            schema_rows=self.schema_rows,
            value_rows=self.value_rows,
            call=self.call,
            ahead=self.ahead,
        )

    def set_keys(self, keys: Sequence[Any], start: int = 0) -> None:
        """Set the keys ``keys`` on the instances from ``items[start]`` on (as many as
        keys), as :meth:`with_keys` does, and mark the batch's keys written: a backend may
        set them a part at a time (while the rows are sent), and undo them all with None."""
        if self.value_rows:
            return  # no instances to set them on: the caller is given the keys
        if self.schema_rows:
            raise ValueError("keys are set on instances only")
        objs = self.items
        if start < 0 or start + len(keys) > len(objs):
            raise ValueError(f"{len(keys)} keys from row {start} of {len(objs)}")
        part = objs if start == 0 and len(keys) == len(objs) else objs[start : start + len(keys)]
        set_attribute(part, self.model.schema.primary_key.name, keys)  # type: ignore[union-attr]
        self.keys_written = True

    # -- statements ----------------------------------------------------------------------
    def statement(self) -> Any:
        """The SQLAlchemy statement of this batch (an INSERT, or the backend's upsert)."""
        if self.kind == "upsert":
            return upsert_sql(self.db, self.model)
        return self.model.table.insert()

    def compiled(self, rows: int = 1) -> str | None:
        """The statement compiled for the driver's own cursor, positional in the order of
        ``model.names``: the INSERT of ``rows`` rows (None where that form differs), or
        the upsert (``rows`` 1)."""
        if rows > 1:
            return multi_insert_sql(self.db, self.model, rows)
        return positional(self.db, self.model, self.kind, self.statement)

    def compiled_for(self, dialect: sa.Dialect) -> tuple[str, str]:
        """The INSERT compiled for ``dialect`` (a positional twin of the store's) and for
        the store's own dialect: a backend compares their text before VALUES."""
        insert = self.model.table.insert()
        names = self.model.names
        compiled = insert.compile(dialect=dialect, column_keys=names)
        order = [compiled.binds[name].key for name in compiled.positiontup or []]
        own = insert.compile(dialect=self.db.dialect, column_keys=names).string
        return (compiled.string if order == names else ""), own

    @property
    def dialect(self) -> sa.Dialect:
        return self.db.dialect

    # -- running them --------------------------------------------------------------------
    def cursor(self) -> Any:
        """A cursor of the driver connection under the batch's connection."""
        return self.conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]

    def logging(self) -> bool:
        """True when statements are logged (or echoed): rows sent are then listed."""
        return bool(self.db.engine.echo) or sql_logger.isEnabledFor(INFO)

    def listened(self) -> bool:
        """True when someone listens to SQLAlchemy's cursor events: a backend then sends
        the rows through SQLAlchemy, so that they see every statement."""
        return listened(self.db.engine)

    def logged(self, sql: str, rows: Any, how: str) -> Any:
        """``rows``, logged as sent by ``how`` with ``sql`` (see :func:`._log.logged`)."""
        return logged(sql, rows, how, self.db.engine)

    def attempt(self, action: Callable[[], Any]) -> bool:
        """Run ``action`` in a savepoint: False, with nothing kept, if it is refused."""
        return attempt(self.db, self.conn, action)

    def refused(self, action: Callable[[], Any]) -> BaseException | None:
        """:meth:`attempt`, giving the refusal (None: ``action`` was kept)."""
        return refused(self.db, self.conn, action)

    def guard(
        self,
        action: Callable[[], Any],
        *,
        raw: tuple[str, Callable[[], list[Any]]] | None = None,
        replay: tuple[Any, list[dict[str, Any]]] | None = None,
        clash: bool = False,
    ) -> Any:
        """Run ``action`` in a savepoint; a refusal is located (``raw``: the one-row SQL
        and the driver's rows; ``replay``: the statement and SQLAlchemy's dicts) and
        raised as a :class:`WriteError` naming row and column. ``clash``: explain an
        upsert guard's error (another unique index, see :func:`._locate.unique_clash`)."""
        return guard(
            self.db,
            self.conn,
            self.model,
            action,
            self.number,
            raw=raw,
            replay=replay,
            explain=partial(unique_clash, self.db) if clash else None,
        )

    def checked_again(
        self,
        error: BaseException,
        sent: Sequence[Sequence[Any]],
        send: Callable[[list[Sequence[Any]]], Any],
        sql: str,
    ) -> Any:
        """After the database refused the bound rows ``sent`` (``error``): check every
        value in Python, which names a value of the wrong type (or converts what typing
        allows, an int in a float field), then ``send`` the checked rows again, locating
        the row with the one-row ``sql`` if the database still refuses."""
        checked = self.checked()
        if len(sent) == 1 and identical(sent[0], checked[0]):
            # the one row, refused as the checks leave it: named, not run again
            values = dict(zip(self.model.names, checked[0], strict=True))
            raise refusal(
                self.db,
                self.conn,
                self.model,
                error_text(error),
                0,
                values,
                self.number,
                bound=True,
            ) from error
        return self.guard(lambda: send(checked), raw=(sql, lambda: checked))

    def gated_chunks(self, *, keyless: bool = False) -> Iterator[Sequence[Sequence[Any]]] | None:
        """The schema rows of the instances in chunks, each checked by the codec's gates
        (their exact types) as it is taken (see ``RowCodec.gated_chunks``); None when the
        rows are not instances or the first chunk fails its gates already. ``keyless``:
        the rows without their single key (None on every row: the database gives it)."""
        objs = self.items if self.value_rows else self.instances()
        model = self.model
        codec = model.codec
        if objs is None or codec.copy_types is None or codec.copy_checks is None:
            return None
        if keyless and self.value_rows:  # the rows of values without their key
            key = model.schema.primary_key
            if key is None or model.schema.composite or len(model.fields) < 2:
                return None
            at = model.fields.index(key.name)
            if at != self.key_index():
                return None
            chunks = codec.gated_column_chunks(_columns_of(objs), without=at)
        elif keyless:
            key = model.schema.primary_key
            if key is None or model.schema.composite or model.schema.parent is not None:
                return None
            at = model.fields.index(key.name)
            kept = tuple(model.fields[i] for i in model.field_index if model.fields[i] != key.name)
            if not kept or at != self.key_index():
                return None
            chunks = codec.gated_chunks(objs, fields_getter(kept), without=at)
        else:
            chunks = (
                codec.gated_column_chunks(_columns_of(objs))
                if self.value_rows
                else codec.gated_chunks(objs, row_getter(model))
            )
        try:  # the first chunk before any statement: a key to generate is usually there
            first = next(chunks, [])
        except GateRefused:
            return None
        return chain((first,), chunks)


__all__ = [
    "BATCH",
    "ColumnRows",
    "LazyColumn",
    "Rows",
    "as_dicts",
    "encode",
    "insert_sql",
    "keyless_insert_sql",
    "multi_insert_sql",
    "positional",
    "restated_keys",
    "row_getter",
    "set_attribute",
    "upsert_sql",
]

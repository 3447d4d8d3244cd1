"""How the rows of one table travel between dataclass values and one SQL dialect.

A table's *schema row* holds one value per :class:`~entityworks.model.schema.Column` (a child
table's ``parent_key`` and ``position`` first); its *SQL row* holds one value per column of the SQL
table, which adds the companion columns (``registry.Companion``) right after their field's
column. :func:`row_codec` builds, once per table and dialect, the functions that turn one into
the other:

* ``fast``: per schema column, what the bulk path applies. ``None`` means the value is handed
  to the driver untouched because the database or the driver refuses every value of another
  type itself, at C speed: the ``ANY`` columns (with their ``typeof`` CHECK) of SQLite tables
  written by entityworks 0.2.3 and before, PostgreSQL's binary COPY. Anything that could be
  converted silently there gets the type's rule instead: SQLite's INTEGER, REAL and TEXT
  columns convert ``'12'`` into 12, so their values are checked, a whole column at a time on
  the bulk paths (``fast_columns``: one type test per value at C speed).
* ``checked``: per schema column, the complete path: the registry's rule (which names what is
  wrong, and converts what typing allows: an ``int`` in a ``float`` field), its codec and the
  dialect's bind processor. A bulk batch that the database refuses is encoded again with it.
* ``registry``: the rule and the registry codec alone, for statements SQLAlchemy executes.
* ``spread`` / ``read``: schema row -> SQL row (computing companions), SQL row -> schema row
  (decoding and joining companions); ``None`` when there is nothing to do.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from operator import countOf, itemgetter
from typing import Any

import sqlalchemy as sa

from ..errors import GateRefused
from ..model.schema import TableSchema
from ..registry import Companion, TypeInfo, encode_error
from ..types.columns import all_of, has_nan, on_present
from ..types.columns import each as columns_each
from ..types.construct import plain_identifier
from ..types.encoding import Processor, compose, rule, skip_none
from ._rowdecode import ColumnFn, Readers, each
from .backends import for_name
from .tables import table_companions

#: Rows per chunk of :meth:`RowCodec.gated_chunks`: ~100 KB of tuples, which stay in the CPU
#: cache between the type check and the write (larger chunks are slower; see
#: benchmarks/bench_store.py).
CHUNK = 1024


@dataclass(frozen=True)
class RowCodec:
    """The row functions of one table on one dialect (see the module docstring)."""

    fields: list[str]
    names: list[str]
    fast: list[Processor]
    checked: list[Processor]
    registry: list[Processor]
    binds: list[Processor]
    spread: Callable[[Sequence[Any], list[Any]], list[Any]] | None
    read: Callable[[Sequence[Any]], tuple[Any, ...]] | None
    #: PostgreSQL type names for a binary COPY, or ``None`` (text COPY, everything checked).
    copy_types: list[str] | None
    #: ``(schema index, type, nullable)`` of the columns the bulk path binds untouched although
    #: the driver would take some other type too (psycopg packs a numpy int as an int8, a
    #: Decimal as a float8): a batch is written as it is only when all their values have
    #: exactly that type.
    gates: list[tuple[int, type, bool]]
    #: SQL rows -> their schema columns, decoded (as ``read`` would, column by column: a
    #: type with ``from_db_many`` decodes its whole column at once).
    columns: Callable[[Sequence[Sequence[Any]]], list[Sequence[Any]]] | None = None
    #: Per schema column, what a value already through ``registry``'s rule and codec (in
    #: another process: ``entityworks.sql.encoded``) still needs on this dialect: its checks
    #: (SQLite's NaN and -0.0, a missing companion) for SQLAlchemy's statements, and
    #: ``encoded_bound`` the same plus the bind processor, for rows the driver gets as they are.
    encoded: list[Processor] = field(default_factory=list)
    encoded_bound: list[Processor] = field(default_factory=list)
    #: Per schema column, what the bulk path does with a whole column (``fast`` a column
    #: at a time): ``column -> [SQL column, *companion columns]``, or ``None`` when the
    #: column goes as it is and has no companion. See :func:`_column_step`.
    fast_columns: list[ColumnStep | None] = field(default_factory=list)
    #: ``(schema index, check_column)`` of the columns whose values, when that check
    #: passes, go to a binary COPY as they are; ``None`` when some column needs more
    #: (a bind processor, a companion): then no COPY straight from the instances.
    copy_checks: list[tuple[int, Callable[[Sequence[Any]], bool]]] | None = None
    #: ``(schema index, type)`` of the int, float and str columns, whose database or
    #: driver would convert a value of another type (SQLite's INTEGER, REAL and TEXT
    #: columns turn ``'12'`` into 12; PostgreSQL casts it): rows encoded elsewhere
    #: (``entityworks.sql.encoded``), by anyone, are checked again (:meth:`exact_rows`).
    converting: list[tuple[int, TypeInfo]] = field(default_factory=list)
    #: ``spread`` a column at a time: (schema columns of field values, their encoded
    #: forms) -> the SQL columns, each followed by its companions.
    spread_columns: (
        Callable[[Sequence[Sequence[Any]], list[Sequence[Any]]], list[Sequence[Any]]] | None
    ) = None
    #: Per schema column: its index among the SQL columns, its companions' indexes, the
    #: companions and the column's type (what ``spread`` and ``read`` are made from).
    plan: list[tuple[int, list[int], tuple[Companion, ...], TypeInfo]] = field(default_factory=list)
    #: ``(fields, nulls, kinds)`` when no column needs decoding, or only the check that
    #: its values are already of the field's type (``Readers.direct``): the objects of SQL
    #: rows whose companions are all NULL, and whose values are of those kinds, are built
    #: straight from the rows (``types.columns.build_rows``); ``None`` otherwise.
    direct: tuple[tuple[int, ...], tuple[int, ...], tuple[type | None, ...] | None] | None = None
    #: What a read decoded by this codec selects, per SQL column: the column, or the
    #: backend's read form of it and its companions (``Backend.read_form``: MariaDB's
    #: Decimal as text cut to its scale); ``None``: the table's columns themselves.
    selected: list[sa.ColumnElement[Any]] | None = None

    def select(self, table: sa.Table) -> sa.Select[Any]:
        """``SELECT`` of every SQL column of ``table`` (this codec's), as reads select them."""
        return sa.select(table) if self.selected is None else sa.select(*self.selected)

    def row_encoder(
        self, attributes: Sequence[str], processors: Sequence[Processor]
    ) -> Callable[[Any], list[Any]] | None:
        """``obj -> SQL row`` of one instance whose schema columns are its attributes
        ``attributes`` (in schema order), each through ``processors[i]`` and followed by
        its companions: what ``encode`` and ``spread`` give for a one-item batch, in one
        compiled function (the point path's writes). None when an attribute is no plain
        identifier (the caller takes the general path)."""
        if not all(map(plain_identifier, attributes)):
            return None
        names: dict[str, Any] = {}
        items: list[str] = []
        for i, (attribute, enc) in enumerate(zip(attributes, processors, strict=True)):
            parts = self.plan[i][2] if self.plan else ()
            value = f"(v{i} := o.{attribute})" if parts else f"o.{attribute}"
            if enc is not None:
                names[f"e{i}"] = enc
                value = f"e{i}({value})"
            items.append(value)
            if parts:
                names[f"c{i}"] = self.plan[i][3].checked
                for j, part in enumerate(parts):
                    names[f"s{i}_{j}"] = part.split
                    items.append(f"(None if v{i} is None else s{i}_{j}(c{i}(v{i})))")
        source = f"lambda o: [{', '.join(items)}]"
        encoder: Callable[[Any], list[Any]] = eval(source, names)  # noqa: S307 - identifiers only
        return encoder

    def encode_columns(
        self,
        columns: Sequence[Sequence[Any]],
        ready: dict[int, list[Sequence[Any]]] | None = None,
    ) -> list[Sequence[Any]]:
        """The SQL columns of the schema ``columns`` (each through ``fast_columns``), or
        of a column ``ready`` holds, its SQL columns as they are there (made from Arrow).
        Raises whatever a value's rule raises (the caller then locates it row by row)."""
        out: list[Sequence[Any]] = []
        for i, (column, step) in enumerate(zip(columns, self.fast_columns, strict=True)):
            if ready is not None and i in ready:
                out += ready[i]
            elif step is None:
                out.append(column)
            else:
                out += step(column)
        return out

    def exact_rows(
        self, rows: list[tuple[Any, ...]], number: Callable[[int], int]
    ) -> list[tuple[Any, ...]]:
        """Schema ``rows`` whose ``converting`` columns hold exactly their types: the same
        list when they do (a type test per value at C speed), else the rows with those
        columns through their rule, which converts what typing allows (a bool in an int
        field) and refuses the rest with :func:`encode_error` (``number(i)``: the row
        number of ``rows[i]`` in errors)."""
        if not self.converting or not rows:
            return rows
        fixed: dict[int, list[Any]] = {}
        for i, info in self.converting:
            column = list(map(itemgetter(i), rows))
            check = info.check_column
            if check is not None and check(column):
                continue
            out: list[Any] = []
            for n, value in enumerate(column):
                try:
                    out.append(None if value is None else info.checked(value))
                except (TypeError, ValueError) as exc:
                    raise encode_error(self.fields[i], value, exc, number(n)) from None
            fixed[i] = out
        if not fixed:
            return rows
        columns: list[Sequence[Any]] = list(zip(*rows, strict=True))
        for i, values in fixed.items():
            columns[i] = values
        return list(zip(*columns, strict=True))

    def gates_pass(self, rows: Sequence[Sequence[Any]], *, without: int | None = None) -> bool:
        """True when every gated column of ``rows`` (SQL rows) holds only its exact type;
        ``without``: the index of the SQL column the rows leave out (a key to generate)."""
        return self.gate_refused(rows, without=without) is None

    def gate_refused(
        self, rows: Sequence[Sequence[Any]], *, without: int | None = None
    ) -> str | None:
        """The field of the first gated column of ``rows`` (SQL rows) that holds a value of
        another type than its own, None when none does (see :meth:`gates_pass`)."""
        for i, kind, nullable in self.gates:
            at = self.names.index(self.fields[i])
            if without is not None and at >= without:
                if at == without:
                    continue
                at -= 1
            if not all_of(list(map(itemgetter(at), rows)), kind, nullable):
                return self.fields[i]
        return None

    def gated_chunks(
        self,
        objs: Sequence[Any],
        getter: Callable[[Any], tuple[Any, ...]],
        size: int = CHUNK,
        *,
        without: int | None = None,
    ) -> Iterator[list[tuple[Any, ...]]]:
        """The schema rows of ``objs`` (instances of a top-level class, ``getter`` their
        row tuples) in chunks of ``size``, each yielded only after its gated columns were
        found to hold exactly their type; :class:`GateRefused` at the first chunk that does
        not. Lazy, so that a COPY checks chunk k + 1 while the server stores chunk k: each
        value is read once, for the check and the write, and the check costs no wall time
        before the first row is sent. Small chunks keep the tuples in the CPU cache. The
        columns that ``copy_checks`` names must pass their check too. ``without``: the
        index of the column ``getter`` leaves out (a key the database generates)."""
        gates = self.gates
        checks = self.copy_checks or ()
        if without is not None:
            gates = [(i - (i > without), k, n) for i, k, n in gates if i != without]
            checks = [(i - (i > without), c) for i, c in checks if i != without]
        fields = [f for i, f in enumerate(self.fields) if i != without]
        for start in range(0, len(objs), size):
            rows = list(map(getter, objs[start : start + size]))
            if gates or checks:
                columns = list(zip(*rows, strict=True))  # one C pass over every value
                _gate(columns, gates, checks, fields, start)
            yield rows

    def gated_column_chunks(
        self, columns: Sequence[Sequence[Any]], size: int = CHUNK, *, without: int | None = None
    ) -> Iterator[list[tuple[Any, ...]]]:
        """:meth:`gated_chunks` of schema rows held a column at a time (the columnar
        lane's): each chunk's columns gated and checked as they are sliced, then made
        rows. ``without``: the index of a column left out (a key the database generates)."""
        gates = self.gates
        checks = self.copy_checks or ()
        if without is not None:
            columns = [c for i, c in enumerate(columns) if i != without]
            gates = [(i - (i > without), k, n) for i, k, n in gates if i != without]
            checks = [(i - (i > without), c) for i, c in checks if i != without]
        fields = [f for i, f in enumerate(self.fields) if i != without]
        total = len(columns[0]) if columns else 0
        for start in range(0, total, size):
            part = [c[start : start + size] for c in columns]
            _gate(part, gates, checks, fields, start)
            yield list(zip(*part, strict=True))


def _gate(
    columns: Sequence[Sequence[Any]],
    gates: Sequence[tuple[int, type, bool]],
    checks: Sequence[tuple[int, Callable[[Sequence[Any]], bool]]],
    fields: Sequence[str],
    start: int,
) -> None:
    """:class:`GateRefused` for the first gated column of a chunk (``columns``, its rows
    from ``start``) holding a value of another type, or failing its check."""
    for i, kind, nullable in gates:
        if not all_of(columns[i], kind, nullable):
            raise GateRefused(fields[i], start)
    for i, check in checks:
        if not check(columns[i]):
            raise GateRefused(fields[i], start)


ColumnStep = Callable[[Sequence[Any]], list[Sequence[Any]]]


def _bind_column(impl: Any, bind: Processor, dialect: sa.Dialect) -> ColumnFn | None:
    """The bind processor ``bind`` of the type ``impl`` for a whole column of checked
    values: the type's own column form (``bind_column``, the types of :mod:`.sqltypes`),
    none where checked values bind as they are, else ``bind`` value by value."""
    if bind is None:
        return None
    own = getattr(impl, "bind_column", None)
    if own is not None:
        fn: ColumnFn | None = own(dialect)
        return fn
    if isinstance(impl, sa.Boolean) and dialect.supports_native_boolean:
        return None  # its processor returns an exact bool as it is
    return partial(each, bind)


def _column_step(
    info: TypeInfo,
    fast: Processor,
    full: Processor,
    store: ColumnFn | None,
    exact: bool,
    parts: tuple[Companion, ...],
    post_column: Callable[[Sequence[Any]], bool] | None = None,
) -> ColumnStep | None:
    """What the bulk path does with one whole schema column.

    ``fast`` / ``full``: the per-value processors (the bulk path's, the complete one).
    ``exact``: when ``info.check_column`` passes, the column is what ``full`` checks
    (``check(v) is v``), so only ``store`` (the bind processor, a column at a time)
    remains. Otherwise ``fast`` value by value, as before. Companions come from the
    checked values (a column at a time where the companion has ``split_column``).
    ``post_column``: the dialect's own check of a whole column (SQLite: no NaN in a
    nullable REAL column), which must pass too.
    """
    check_column = info.check_column if exact else None
    if fast is None and not parts:
        return None

    def companions(checked: Sequence[Any]) -> list[Sequence[Any]]:
        return [
            p.split_column(checked) if p.split_column is not None else each(p.split, checked)
            for p in parts
        ]

    def per_value(column: Sequence[Any]) -> list[Sequence[Any]]:
        main = column if fast is None else list(map(fast, column))
        if not parts:
            return [main]
        return [main, *companions(each(info.checked, column))]

    if fast is not None and fast is not full:  # SQLite's NaN refusal (``_fast``)

        def nan_refused(column: Sequence[Any]) -> list[Sequence[Any]]:
            if has_nan(column):
                return per_value(column)
            return [column, *companions(column)] if parts else [column]

        return nan_refused
    if check_column is None:
        return per_value
    checked_column = check_column
    # a companion beside a field's own stored form (a SQLite Decimal's key and text)
    split_raw = parts[0].split_raw if len(parts) == 1 and parts[0].own is not None else None

    def column_at_a_time(column: Sequence[Any]) -> list[Sequence[Any]]:
        if not checked_column(column) or (post_column is not None and not post_column(column)):
            if countOf(column, None) == len(column):  # keys to generate: nothing to check
                return [column, *([None] * len(column) for _ in parts)]
            return per_value(column)
        if store is None or fast is None:
            main = column
        else:
            if split_raw is not None:  # the stored column and its companion's at once
                both = split_raw(column)
                if both is not None:
                    return [*both]
            main = store(column)
        return [main, *companions(column)] if parts else [main]

    return column_at_a_time


def _encoded_at_once(
    many: Callable[[Sequence[Any]], list[Any]], bound: ColumnFn | None, full: Processor
) -> ColumnStep:
    """The bulk step of a column whose rule is its codec and whose codec encodes a whole
    column at once (``many``: non-None values -> their encoded forms, raising on a value
    the codec refuses), then bound (``bound``, a column at a time). A column ``many``
    refuses goes value by value through ``full``, which names the refused value."""
    assert full is not None

    def step(column: Sequence[Any]) -> list[Sequence[Any]]:
        try:
            encoded = on_present(many, column)
            return [encoded if bound is None else bound(encoded)]
        except (TypeError, ValueError, OverflowError):
            return [list(map(full, column))]

    return step


def _without(
    table: str, column: str, info: TypeInfo, missing: tuple[Companion, ...]
) -> Callable[[Any], Any]:
    """Refuse a value that needs a companion column the live table does not have."""

    def guard(value: Any) -> Any:
        checked = info.checked(value)
        for part in missing:
            if part.split(checked) is not None:
                raise ValueError(
                    f"table {table!r} has no column {part.column(column)!r} to keep "
                    f"{part.keeps} of this value (it was created before entityworks kept "
                    "it); add the column with `entityworks schema diff --apply`"
                )
        return value

    return guard


def row_codec(schema: TableSchema, table: sa.Table, dialect: sa.Dialect) -> RowCodec:
    """Build the row functions of ``schema`` (whose SQL table is ``table``) for ``dialect``."""
    name = dialect.name
    backend = for_name(name)
    # by key: a column's field name (``column(name=...)`` gives the SQL column another name)
    impls = {c.key: c.type.dialect_impl(dialect) for c in table.columns}
    copy_types = backend.copy_types(table, dialect)
    fields = [c.name for c in schema.columns]
    names = [c.key for c in table.columns]
    fast, checked, registry = [], [], []
    readers = Readers(schema, table.name, {c.key: c.name for c in table.columns})
    encoded: list[Processor] = []
    encoded_bound: list[Processor] = []
    plan: list[tuple[int, list[int], tuple[Companion, ...], TypeInfo]] = []
    any_parts = False
    steps: list[ColumnStep | None] = []
    copy_checks: list[tuple[int, Callable[[Sequence[Any]], bool]]] | None = []
    converting: list[tuple[int, TypeInfo]] = []
    # what reads select: each SQL column, or the backend's read form of it
    selected: list[sa.ColumnElement[Any]] = list(table.columns)
    for c in schema.columns:
        info = c.info
        impl = impls[c.name]
        stored = backend.stored_as(info)
        bind = backend.bind_processor(impl, dialect, stored)
        any_column = backend.keeps_values(table.c[c.name].type)
        if stored is not None and not any_column:
            converting.append((fields.index(c.name), info))  # INTEGER, REAL, TEXT convert
        to_db = rule(info)
        post: Processor = None  # the dialect's own checks, which follow the registry's
        post_column: Callable[[Sequence[Any]], bool] | None = None
        refusal = backend.value_refusal(info, c.nullable)
        if refusal is not None:
            post, post_column = refusal
        # (a REAL column drops the sign of -0.0: its ``__negzero`` companion keeps it, and
        # a table without one refuses -0.0 through ``missing`` below)
        to_db = compose(to_db, post)
        every = table_companions(table, c, name)
        parts = tuple(p for p in every if p.column(c.name) in table.c)
        missing = tuple(p for p in every if p not in parts)
        if missing:
            guard = _without(table.name, c.name, info, missing)
            to_db = compose(guard, to_db)
            post = compose(guard, post)
        encoded.append(skip_none(post))
        encoded_bound.append(skip_none(compose(post, bind)))
        full = skip_none(compose(to_db, bind))
        registry.append(skip_none(to_db))
        checked.append(full)
        fast.append(
            backend.fast_processor(
                info,
                full,
                refusal[0] if refusal is not None else None,
                stored,
                any_column,
                copy_types is not None,
            )
        )
        # a column at a time: exact when the rule is the registry's whole codec and no
        # check of the dialect's own follows it (or that check has a column form)
        exact = (
            info.check_column is not None
            and rule(info) is info.check
            and (post is None or (refusal is not None and post is refusal[0]))
        )
        store = _bind_column(impl, bind, dialect) if exact else None
        # or the codec a column at a time (``SqlCodec.encode_many``: JSON text, packed
        # points), when it is the whole rule and the bulk path's processor is the full one
        many = info.sql_codec.encode_many
        if many is not None and not exact and not parts and fast[-1] is full:
            if to_db is info.sql_codec.encode:
                many_bound = _bind_column(impl, bind, dialect)
                steps.append(_encoded_at_once(many, many_bound, full))
            else:
                many = None
        else:
            many = None
        if many is None:
            steps.append(
                _column_step(
                    info,
                    fast[-1],
                    full,
                    store,
                    exact,
                    parts,
                    post_column if post is not None else None,
                )
            )
        if copy_checks is not None and fast[-1] is not None:
            if exact and store is None and not parts and fast[-1] is full:
                copy_checks.append((len(fast) - 1, info.check_column))  # type: ignore[arg-type]
            else:
                copy_checks = None
        elif parts:
            copy_checks = None
        any_parts = any_parts or bool(parts)
        main = names.index(c.name)
        extra = [names.index(p.column(c.name)) for p in parts]
        plan.append((main, extra, parts, info))
        form = backend.read_form(
            impl, table.c[c.name], [(p, table.c[p.column(c.name)]) for p in parts]
        )
        if form is not None:
            for at, element in zip((main, *extra), form, strict=True):
                selected[at] = element
        # rows read from the raw cursor: SQLAlchemy's processor too (see the backend)
        readers.add(
            main,
            extra,
            parts,
            info,
            backend.result_processor(impl, dialect),
            backend.result_column(impl, dialect),
        )
    binds: list[Processor] = [impls[n].bind_processor(dialect) for n in names]
    # int and float: psycopg also packs a numpy int, a bool, a Decimal (anything with
    # __index__ or __float__), which the registry's rule would refuse or convert. A key
    # column passes no None (the database would refuse it anyway): a COPY that passes its
    # gate has no key left to generate.
    gates: list[tuple[int, type, bool]] = [
        (i, c.info.native, c.nullable and not c.primary_key)
        for i, c in enumerate(schema.columns)
        if copy_types is not None and fast[i] is None and c.info.native in (int, float)
    ]
    read, columns = readers.readers()
    direct = readers.direct()
    return RowCodec(
        fields,
        names,
        fast,
        checked,
        registry,
        binds,
        _spread(plan) if any_parts else None,
        read,
        copy_types,
        gates,
        columns,
        encoded,
        encoded_bound,
        steps,
        copy_checks if copy_types is not None else None,
        converting,
        _spread_columns(plan) if any_parts else None,
        plan,
        direct,
        None if all(e is c for e, c in zip(selected, table.columns, strict=True)) else selected,
    )


def _spread(
    plan: list[tuple[int, list[int], tuple[Companion, ...], TypeInfo]],
) -> Callable[[Sequence[Any], list[Any]], list[Any]]:
    steps = [(i, parts, info) for i, (_main, _extra, parts, info) in enumerate(plan)]

    def spread(values: Sequence[Any], row: list[Any]) -> list[Any]:
        """SQL row from the field values (for the companions) and their encoded forms."""
        out = []
        for i, parts, info in steps:
            out.append(row[i])
            if parts:
                value = values[i]
                if value is None:
                    out.extend([None] * len(parts))
                else:
                    value = info.checked(value)
                    out.extend(p.split(value) for p in parts)
        return out

    return spread


def _spread_columns(
    plan: list[tuple[int, list[int], tuple[Companion, ...], TypeInfo]],
) -> Callable[[Sequence[Sequence[Any]], list[Sequence[Any]]], list[Sequence[Any]]]:
    steps = [(parts, info) for _main, _extra, parts, info in plan]

    def spread_columns(
        values: Sequence[Sequence[Any]], encoded: list[Sequence[Any]]
    ) -> list[Sequence[Any]]:
        """:func:`_spread`'s SQL rows as columns: each encoded column, then the companions
        of its field values."""
        out: list[Sequence[Any]] = []
        for (parts, info), column, main in zip(steps, values, encoded, strict=True):
            out.append(main)
            if parts:
                check = info.checked
                checked = columns_each(check, column)
                for p in parts:
                    out.append(columns_each(p.split, checked))
        return out

    return spread_columns

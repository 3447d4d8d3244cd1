"""Reading rows of one table: SQL rows (the field columns and their companions, as a
driver gives them) -> decoded schema rows or columns, and the refusal naming the row, the
column and the stored value when one cannot be read.

Split from :mod:`._rowcodec` (which builds these per table and dialect from SQLAlchemy's
types) so that a reader that knows its decoders without SQLAlchemy (``entityworks query`` on
an SQLite file, :mod:`.backends.sqlitefile`) decodes and refuses exactly as the Store does. Standard
library and the type layer only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from operator import countOf
from typing import Any

from ..errors import StoredValueError
from ..model.schema import Column, TableSchema
from ..registry import Companion, TypeInfo
from ..types.columns import each as columns_each
from ..types.columns import has_none, on_present
from ..types.encoding import Processor, compose, skip_none

ColumnFn = Callable[[Sequence[Any]], Sequence[Any]]
#: Per field column: (its SQL row index, its decoder or None).
Decoders = list[tuple[int, Callable[[Any], Any] | None]]


Plan = list[tuple[int, list[int], tuple[Companion, ...], TypeInfo]]
#: The refusal of a stored row that cannot be read (see :func:`locator`), None for one
#: that can.
Locate = Callable[[Sequence[Any]], StoredValueError | None]


class Unread(ValueError):
    """A column that other tools read holds a value beside a NULL main column (the row is
    then located and named by :func:`locator`)."""


def _owned(parts: Sequence[tuple[int, Companion]]) -> list[int]:
    """The positions of the companions other tools read instead of the field's own column
    (a SQLite Decimal's text): beside a NULL there, they must be NULL too."""
    return [j for j, part in parts if part.own is not None]


def locator(
    schema: TableSchema,
    table_name: str,
    sql_names: Mapping[str, str],
    decoders: Decoders,
    plan: Plan,
) -> Locate:
    """What refuses a stored row that a decoder or a companion's ``join`` cannot read: a
    :class:`StoredValueError` naming the table, the row's key and the field's column.

    Such a row was written or changed by another tool: a companion that disagrees with the
    value beside it (a SQLite Decimal's text and its key), or holds what no write of
    entityworks stores (a scale of 99, an offset beyond ±14:00). Reading it would give a
    value other tools do not see, or a raw exception. Only called once a read failed: the
    row is decoded again value by value to find the column."""
    columns = list(zip(schema.columns, decoders, plan, strict=True))
    sql = sql_names
    keyed = [(c.name, *decoders[schema.columns.index(c)]) for c in schema.naming_columns]

    def label(row: Sequence[Any]) -> str:
        if not keyed:
            shown = ", ".join(f"{c.name}={_shown(row[main])}" for c, (main, _), _ in columns[:3])
            return f"without a key ({shown})"
        out = []
        for name, main, dec in keyed:
            value = row[main]
            try:
                value = value if value is None or dec is None else dec(value)
            except Exception:  # noqa: BLE001 - the stored value is shown as it is
                pass
            out.append(f"{name}={_shown(value)}")
        return ", ".join(out)

    def refuse(row: Sequence[Any], c: Column, text: str, value: Any) -> StoredValueError:
        where = f"row {label(row)}"
        return StoredValueError(
            f"table {table_name!r}, {where}, column {c.sql_name!r}: {text}; it was written "
            "or changed by another tool, and no value would read the same in every tool: "
            "write the value again through entityworks, or correct the stored columns",
            table=table_name,
            key=where[4:],
            column=c.sql_name,
            value=value,
        )

    def locate(row: Sequence[Any]) -> StoredValueError | None:
        for c, (main, dec), (_main, extra, parts, info) in columns:
            raw = value = row[main]
            own = sql[c.name]
            if raw is not None and dec is not None:
                try:
                    value = dec(raw)
                except Exception as exc:  # noqa: BLE001 - any failure is the value's
                    where = "" if own == c.sql_name else f"its column {own!r} "
                    return refuse(
                        row,
                        c,
                        f"{where}holds {_shown(raw)}, which is no stored "
                        f"{info.name} ({_reason(exc)})",
                        raw,
                    )
            for j, part in zip(extra, parts, strict=True):
                companion = row[j]
                other = sql[part.column(c.name)]
                pair = (own, other) if part.own is None else (other, own)
                if value is None:
                    if part.own is not None and companion is not None:
                        return refuse(
                            row,
                            c,
                            f"columns {pair[0]!r} and {pair[1]!r} "
                            f"disagree: {other!r} holds {_shown(companion)} beside a "
                            f"NULL in {own!r}",
                            companion,
                        )
                    continue
                try:
                    value = part.join(value, companion)
                except Exception as exc:  # noqa: BLE001 - any failure is the companion's
                    return refuse(
                        row,
                        c,
                        f"columns {pair[0]!r} and {pair[1]!r} hold no "
                        f"value entityworks wrote: {_reason(exc)}",
                        companion,
                    )
        return None

    return locate


def _shown(value: Any) -> str:
    """``repr(value)`` cut to 60 characters (a stored value in a message)."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _reason(exc: Exception) -> str:
    """What a decoder's or a join's exception says, cut to 300 characters (its type, where
    that says more: ``Decimal('zzz')`` raises InvalidOperation with a list of conditions)."""
    text = str(exc)
    if not text or text.startswith("[<class"):
        return type(exc).__name__
    return text if len(text) <= 300 else text[:297] + "..."


def _refusal(locate: Locate, rows: Sequence[Sequence[Any]]) -> StoredValueError | None:
    """The refusal of the first row of ``rows`` that cannot be read (None: all can)."""
    return next(filter(None, map(locate, rows)), None)


def row_reader(
    active: list[tuple[int, Callable[[Any], Any]]],
    plan: Plan | None,
    locate: Locate,
    width: int | None = None,
) -> Callable[[Sequence[Any]], tuple[Any, ...]] | None:
    """SQL row -> schema row: each field column through its decoder (``active``: SQL
    index, decoder), its companions joined to it (``plan``; None: no companions, then
    ``width`` SQL columns, each a field's); None when there is nothing to do. A row that
    cannot be read is refused by ``locate``.

    One compiled function per table (as :func:`~entityworks.types.construct.fields_getter`
    is): the expression of each schema value in place, no list, loop or index per value.
    Its source holds indexes and generated names alone."""
    if plan is None and not active:
        return None
    decoders = dict(active)
    names: dict[str, Any] = {"locate": locate}

    def value(i: int) -> str:
        if i in decoders:
            names[f"d{i}"] = decoders[i]
            return f"d{i}(row[{i}])"
        return f"row[{i}]"

    items: list[str] = []
    if plan is None:
        items = [value(i) for i in range(width if width is not None else len(decoders))]
    else:
        for main, extra, parts, _info in plan:
            if not parts:
                items.append(value(main))
                continue
            names[f"j{main}"] = _joiner(parts)
            joined = f"j{main}({', '.join(value(i) for i in (main, *extra))})"
            raw = parts[0].join_raw if len(parts) == 1 else None
            if raw is not None:  # the stored pair read at once (Companion.join_raw), or else
                names[f"r{main}"] = raw
                pair = f"(row[{main}],), (row[{extra[0]}],)"
                joined = f"(t{main}[0] if (t{main} := r{main}({pair})) is not None else {joined})"
            items.append(joined)
    source = (
        "def read(row):\n"
        "    try:\n"
        f"        return ({''.join(item + ', ' for item in items)})\n"
        "    except Exception as exc:\n"
        "        error = locate(row)\n"
        "        if error is None:\n"
        "            raise\n"
        "        raise error from exc\n"
    )
    exec(source, names)  # noqa: S102 - indexes and generated names only
    read: Callable[[Sequence[Any]], tuple[Any, ...]] = names["read"]
    return read


def _joiner(parts: Sequence[Companion]) -> Callable[..., Any]:
    """``(value, *companions) -> value``: a field's decoded value with its companions
    joined (each ``Companion.join``); beside a NULL value, the companions other tools read
    instead (``Companion.own``) must be NULL too, else :class:`Unread`."""
    owned = [k for k, part in enumerate(parts) if part.own is not None]
    pairs = list(enumerate(parts))

    def join(value: Any, *companions: Any) -> Any:
        if value is not None:
            for k, part in pairs:
                value = part.join(value, companions[k])
            return value
        if owned and countOf([companions[k] for k in owned], None) != len(owned):
            raise Unread
        return None

    return join


def column_reader(
    width: int,
    active: list[tuple[int, Callable[[Any], Any]]],
    many: dict[int, tuple[ColumnFn | None, Callable[[Sequence[Any]], list[Any]]]],
    whole: dict[int, ColumnFn],
    plan: Plan | None,
    locate: Locate,
) -> Callable[[Sequence[Sequence[Any]]], list[Sequence[Any]]]:
    """The ``columns`` function of a codec: SQL rows -> decoded schema columns, a column
    at a time (``whole``: each column's decoder; ``many``: a type's ``from_db_many``),
    the companions joined column by column (``Companion.join_column``), as ``read``
    decodes a row; a row that cannot be read is refused by ``locate``."""
    joins = (
        None
        if plan is None
        else [
            (main, pairs, _owned(pairs))
            for main, pairs in (
                (main, list(zip(extra, parts, strict=True))) for main, extra, parts, _ in plan
            )
        ]
    )

    def columns(rows: Sequence[Sequence[Any]]) -> list[Sequence[Any]]:
        try:
            return decoded(rows)
        except Exception as exc:
            error = _refusal(locate, rows)
            if error is None:
                raise
            raise error from exc

    # a field with one companion that joins the stored columns at once (Companion.join_raw)
    raws = [
        (main, pairs[0][0], pairs[0][1].join_raw)
        for main, pairs, _ in joins or ()
        if len(pairs) == 1 and pairs[0][1].join_raw is not None
    ]

    def decoded(rows: Sequence[Sequence[Any]]) -> list[Sequence[Any]]:
        if not rows:
            return [()] * width
        out: list[Sequence[Any]] = list(zip(*rows, strict=True))
        done: dict[int, Sequence[Any]] = {}
        for main, j, raw in raws:
            at_once = raw(out[main], out[j])
            if at_once is not None:
                done[main] = at_once
        for i, dec in active:
            if i in done:
                continue
            if i in whole:
                out[i] = whole[i](out[i])
                continue
            if i not in many:
                out[i] = list(map(dec, out[i]))
                continue
            first, every = many[i]
            out[i] = on_present(every, out[i] if first is None else first(out[i]))
        if joins is None:
            return out
        joined: list[Sequence[Any]] = []
        for main, parts, owned in joins:
            if main in done:
                joined.append(done[main])
                continue
            values = out[main]
            if (
                owned
                and has_none(values)
                and any(
                    p is not None
                    for j in owned
                    for v, p in zip(values, out[j], strict=True)
                    if v is None
                )
            ):
                raise Unread
            for j, part in parts:
                if part.join_column is not None:
                    values = part.join_column(values, out[j])
                else:
                    values = [
                        v if v is None else part.join(v, p)
                        for v, p in zip(values, out[j], strict=True)
                    ]
            joined.append(values)
        return joined

    return columns


def _mapped(fn: Callable[[Any], Any], values: Sequence[Any]) -> list[Any]:
    return list(map(fn, values))


def each(fn: Callable[[Any], Any], values: Sequence[Any]) -> list[Any]:
    """``fn`` of each non-None value of a column, ``None`` kept."""
    return columns_each(fn, values)  # one C loop


class Readers:
    """The decoders of one table's SQL rows, gathered a field column at a time
    (:meth:`add`), then made into a row and a column reader (:meth:`row`, :meth:`columns`)."""

    def __init__(self, schema: TableSchema, table_name: str, sql_names: Mapping[str, str]):
        self.schema = schema
        self.table_name = table_name
        self.sql_names = sql_names
        self.decoders: Decoders = []
        self.plan: Plan = []
        self.many: dict[int, tuple[ColumnFn | None, Callable[[Sequence[Any]], list[Any]]]] = {}
        self.whole: dict[int, ColumnFn] = {}
        #: SQL row index -> the type its column's decoder keeps a value of as it is (a
        #: driver's bool, its bytes) where nothing else applies to the raw value
        self.given: dict[int, type] = {}

    def add(
        self,
        main: int,
        extra: list[int],
        parts: tuple[Companion, ...],
        info: TypeInfo,
        result: Processor,
        result_column: ColumnFn | None,
    ) -> None:
        """The next field column: at SQL row index ``main``, its companions ``parts`` at
        ``extra``; ``result``: what the backend applies to a raw value before the registry's
        decoder (None: nothing), ``result_column`` its form for a whole column of raw values
        (None: none)."""
        self.plan.append((main, extra, parts, info))
        sql_codec = info.sql_codec
        from_db = skip_none(sql_codec.decode)
        if result is not None:
            from_db = compose(result, from_db)
        self.decoders.append((main, from_db))
        given = getattr(sql_codec.decode_many, "given", None)
        if result is None and isinstance(given, type):
            self.given[main] = given
        if sql_codec.decode_many is not None:  # the backend's processor first, then at once
            first = result_column or (None if result is None else partial(_mapped, result))
            self.many[main] = (first, sql_codec.decode_many)
        elif from_db is not None:  # a whole column at a time
            if result_column is not None and sql_codec.decode is None:
                self.whole[main] = result_column
            elif result is None and sql_codec.decode is not None:
                self.whole[main] = partial(each, sql_codec.decode)
            else:
                self.whole[main] = partial(each, from_db)

    def direct(
        self,
    ) -> tuple[tuple[int, ...], tuple[int, ...], tuple[type | None, ...] | None] | None:
        """``(fields, nulls, kinds)`` where no field column needs decoding, or only the
        check that a value is already of its type (``given``): each field's SQL row index,
        its companions' (a NULL companion leaves its field's value as it is, see
        ``Companion``), and the type each field's values must be exactly (None: any; no
        tuple where no field has one), for ``types.columns.build_rows``; None where a column
        decodes."""
        given = self.given
        if (
            any(d is not None and i not in given for i, d in self.decoders)
            or any(i not in given for i in self.many)
            or self.whole
        ):
            return None
        fields = tuple(main for main, _extra, _parts, _info in self.plan)
        return (
            fields,
            tuple(j for _main, extra, _parts, _info in self.plan for j in extra),
            tuple(given.get(main) for main in fields) if given else None,
        )

    def readers(
        self,
    ) -> tuple[
        Callable[[Sequence[Any]], tuple[Any, ...]] | None,
        Callable[[Sequence[Sequence[Any]]], list[Sequence[Any]]],
    ]:
        """``(read, columns)``: SQL row -> schema row (None: nothing to do), SQL rows ->
        decoded schema columns; a row that cannot be read is refused naming it."""
        active = [(i, d) for i, d in self.decoders if d is not None]
        any_parts = any(parts for _main, _extra, parts, _info in self.plan)
        plan = self.plan if any_parts else None
        locate = locator(self.schema, self.table_name, self.sql_names, self.decoders, self.plan)
        return (
            row_reader(active, plan, locate, len(self.decoders)),
            column_reader(len(self.plan), active, self.many, self.whole, plan, locate),
        )

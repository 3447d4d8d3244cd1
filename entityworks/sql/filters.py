"""``where`` and ``order_by``: small, validated descriptions turned into SQLAlchemy expressions.

A filter never contains SQL text. It is a dict (column -> value, ``None`` meaning IS NULL) or
expressions built with :func:`col`::

    store.select(Map, where=(col("width") >= 80) & (col("width") <= 120) & {"kind": "cave"})

Column names are checked against the table's schema and every value becomes a bound
parameter, encoded by the column's registry entry. A dotted name filters through a foreign
key (``column(references=Author)``): ``{"author.name": "Ann"}`` keeps the books whose
``author_id`` refers to an author named Ann.

Every filter selects the same rows on SQLite, PostgreSQL and MariaDB, or is refused with a
:class:`~entityworks.errors.FilterError` (naming the class, the field and the reason) before
any SQL runs:

* NULL matches only when a filter asks for it with ``None``: ``{"x": None}``,
  ``col("x") == None``, ``is_null()`` or ``None`` in ``in_([...])`` (``IN (...) OR IS
  NULL``, where SQL's ``IN (NULL)`` alone matches nothing). ``!=``, ``<`` and the other
  comparisons and ``not_in`` never keep a NULL (``not_in([1, None])`` is ``not_in([1])``,
  where SQL's ``NOT IN (1, NULL)`` matches no row at all).
* ``col("name").like(pattern)``: ``%`` matches any run of characters, ``_`` exactly one,
  case counts (``"a%"`` misses ``"Ab"``), and a backslash makes the next ``%``, ``_`` or
  backslash literal (``like(r"100\\%")`` finds the text ``100%``). Any other backslash, a
  trailing one included, and NUL (which PostgreSQL text cannot hold) are refused.
* A column stored encoded -- JSON text (``list``, ``dict``, ``tuple`` fields and nested
  dataclasses) or packed bytes (NumPy arrays, ``PACKED`` grids, ``POINTS`` paths) -- is
  compared with ``None`` only (``{"tags": None}``, ``col("tags") != None``, ``is_null()``,
  ``is_not_null()``). SQL would compare the encoded form, not the value (``{"b": 2, "a": 1}``
  would miss ``{"a": 1, "b": 2}``, ``[1.0]`` would miss ``[1]``), so any other comparison is
  refused: select the rows and compare in Python. Values *inside* a JSON column are
  compared with ``col("meta")["size"] >= 3`` and ``col("tags").contains(["x"])``
  (:class:`JsonItem`; ``docs/how-to/json-queries.md``).
* An Optional child list (``shelves: list[Shelf] | None``) likewise: ``{"shelves": None}``
  keeps the rows whose list is None and ``!= None`` those that have a list (empty or not);
  any other value is refused (its items are rows of another table). A plain child list is
  no column at all and is refused by name.
"""

from __future__ import annotations

import decimal
import operator
import sys
import typing
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from ..errors import FilterError
from ..model.schema import Column, TableSchema
from ..registry import DECIMAL_INTEGER_DIGITS, encode_error
from ..types import storage

if TYPE_CHECKING:
    import sqlalchemy as sa

# SQLAlchemy (and the modules built on it) is imported by the functions that compile a
# filter into its expressions, not here: building a filter and checking its values
# (``col``, ``encode_value``) needs none of it, and ``entityworks query`` on an SQLite file
# builds its filters without SQLAlchemy (see :mod:`.backends.sqlitefile`).


class Expr:
    """A filter expression; combine with ``&``, ``|`` and ``~``."""

    def __and__(self, other: Any) -> Expr:
        return _Bool("and", (self, _coerce(other)))

    def __rand__(self, other: Any) -> Expr:
        return _Bool("and", (_coerce(other), self))

    def __or__(self, other: Any) -> Expr:
        return _Bool("or", (self, _coerce(other)))

    def __ror__(self, other: Any) -> Expr:
        return _Bool("or", (_coerce(other), self))

    def __invert__(self) -> Expr:
        return _Bool("not", (self,))

    def compile(self, table: sa.Table, schema: TableSchema) -> sa.ColumnElement[bool]:
        raise NotImplementedError


_OPS: dict[str, Callable[[Any, Any], sa.ColumnElement[bool]]] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


@dataclass(frozen=True, eq=False)
class Comparison(Expr):
    column: str
    op: str
    value: Any

    def compile(self, table: sa.Table, schema: TableSchema) -> sa.ColumnElement[bool]:
        import sqlalchemy as sa

        from ._likesql import LikeMatch

        if "." in self.column:
            return self._through_relation(table, schema)
        column = filtered_column(schema, self.column)
        target = table.c[column.name]
        if self.op in ("is_null", "is_not_null"):
            return target.is_(None) if self.op == "is_null" else target.is_not(None)
        if self.value is not None or self.op not in ("==", "!="):
            refuse_encoded(schema, column, self.op)
        if self.op in ("in", "not_in"):  # None: NULL, as == None (see col.in_)
            values = [_encode(column, v) for v in self.value if v is not None]
            null = len(values) < len(self.value)
            if self.op == "in":
                return sa.or_(target.in_(values), target.is_(None)) if null else target.in_(values)
            return (
                sa.and_(target.not_in(values), target.is_not(None))
                if null
                else target.not_in(values)
            )
        if self.op == "between":
            low, high = (_encode(column, v) for v in self.value)
            return target.between(low, high)
        if self.op == "like":
            check_like(schema, column, self.value)
            return LikeMatch(target, sa.literal(_encode(column, self.value), target.type))
        if self.value is None:
            if self.op == "==":
                return target.is_(None)
            if self.op == "!=":
                return target.is_not(None)
            raise FilterError(f"cannot compare column {column.name!r} {self.op} None")
        return _OPS[self.op](target, _encode(column, self.value))

    def _through_relation(self, table: sa.Table, schema: TableSchema) -> sa.ColumnElement[bool]:
        """``"author.name"``: the rows whose ``author_id`` refers to a row of the referenced
        table matching the rest of the path (``fk IN (SELECT key FROM target WHERE ...)``)."""
        import sqlalchemy as sa

        from .tables import schema_of

        head, _, rest = self.column.partition(".")
        column = schema.relation(head) or _by_key_suffix(table, schema, head)
        if column is None or not rest:
            known = ", ".join(schema.relations) or "none"
            raise FilterError(
                f"{self.column!r}: {head!r} is no relation of table "
                f"{schema.name!r} (a column(references=...) field, named with or "
                f"without its '_id' or referenced key); relations: {known}"
            )
        (foreign,) = table.c[column.name].foreign_keys
        key = foreign.column
        target_schema = schema_of(key.table)
        assert target_schema is not None  # built with the table that refers to it
        inner = Comparison(rest, self.op, self.value).compile(key.table, target_schema)
        return table.c[column.name].in_(sa.select(key).where(inner))


@dataclass(frozen=True, eq=False)
class JsonComparison(Expr):
    """A value inside a JSON column compared with a number, a text or a boolean
    (``col("meta")["size"] >= 3``): see :meth:`col.__getitem__`."""

    column: str
    path: tuple[str | int, ...]
    op: str
    value: Any

    def compile(self, table: sa.Table, schema: TableSchema) -> sa.ColumnElement[bool]:
        from ._jsonfilter import JsonFilter

        column = _json_column(schema, self.column)
        return JsonFilter(table.c[column.name], self.path, self.op, self.value)


@dataclass(frozen=True, eq=False)
class JsonContains(Expr):
    """A JSON column (or a value inside it) containing ``candidate``:
    ``col("tags").contains(["x"])``, ``col("meta").contains({"k": 1})``."""

    column: str
    path: tuple[str | int, ...]
    candidate: Any

    def compile(self, table: sa.Table, schema: TableSchema) -> sa.ColumnElement[bool]:
        from ._jsonfilter import JsonFilter

        column = _json_column(schema, self.column)
        return JsonFilter(table.c[column.name], self.path, "contains", self.candidate)


def _json_column(schema: TableSchema, name: str) -> Column:
    """The column ``name``, which must hold JSON (a list, dict, tuple or nested
    dataclass field)."""
    if "." in name:
        raise FilterError(f"{name!r}: a filter into JSON takes a column of the class itself")
    column = filtered_column(schema, name)
    if _encoded_form(column) != "stored as JSON text":
        raise FilterError(
            f"{schema.cls.__qualname__}.{column.name} ({column.info.name}) holds no JSON: "
            "[...] and contains() filter into list, dict, tuple and nested dataclass fields"
        )
    return column


def _json_scalar(value: Any, what: str) -> Any:
    """``value`` if a filter into JSON can compare it (str, int, finite float, bool)."""
    if isinstance(value, bool) or type(value) is int:
        return value
    if type(value) is float:
        if value != value or value in (float("inf"), float("-inf")):
            raise FilterError(f"{what}: {value!r} is no JSON number")
        return value
    if type(value) is str:
        if "\x00" in value:
            raise FilterError(
                f"{what}: text with NUL, which JSON filters cannot compare alike on every backend"
            )
        return value
    raise FilterError(
        f"{what}: {_short(value)} is a {type(value).__name__}; a filter into JSON compares "
        "a str, an int, a float or a bool"
    )


def _json_candidate(value: Any, what: str, depth: int = 0) -> Any:
    """``value`` if contains() takes it: a dict (str keys) of scalars, lists of scalars and
    such dicts, or a list of scalars."""
    if depth > 50:
        raise FilterError(f"{what}: nested too deeply")
    if type(value) is dict:
        for key, item in value.items():
            _json_key(key, what)
            if type(item) is dict or type(item) is list:
                _json_candidate(item, what, depth + 1)
            else:
                _json_scalar(item, what)
        return value
    if type(value) is list:
        for item in value:
            _json_scalar(item, f"{what} (a list in contains() holds scalars)")
        return value
    raise FilterError(f"{what}: contains() takes a dict or a list, got {_short(value)}")


def _json_key(key: Any, what: str) -> Any:
    if type(key) is int and key >= 0:
        return key
    if type(key) is not str:
        raise FilterError(
            f"{what}: {key!r} is no key (a str) or array index (an int from 0) of a JSON value"
        )
    if any(ch in key for ch in '"\\') or any(ord(ch) < 32 for ch in key):
        raise FilterError(
            f"{what}: the key {key!r} holds a quote, a backslash or a control character, "
            "which a JSON path of every backend cannot name alike"
        )
    return key


class JsonItem:
    """A value inside a JSON column, for filters: ``col("meta")["a"]["b"]``,
    ``col("tags")[0]``. Compared with ``==``, ``!=``, ``<``, ``<=``, ``>``, ``>=`` (a
    bool: ``==`` and ``!=`` only) it keeps the rows whose value there is of the compared
    value's kind (a number, a text, a boolean) and compares so; a missing key, an index
    past the end or a value of another kind keeps no row, whatever the comparison (SQL's
    NULL)."""

    __slots__ = ("column", "path")

    def __init__(self, column: str, path: tuple[str | int, ...]) -> None:
        self.column: str = column
        self.path: tuple[str | int, ...] = path

    def __getitem__(self, key: str | int) -> JsonItem:
        return JsonItem(self.column, (*self.path, _json_key(key, self._name())))

    def _name(self) -> str:
        return f"col({self.column!r})" + "".join(f"[{p!r}]" for p in self.path)

    def _compare(self, op: str, value: Any) -> JsonComparison:
        what = self._name()
        if value is None:
            raise FilterError(
                f"{what} {op} None: a filter into JSON compares values; a missing key "
                "matches nothing (filter the column itself with None)"
            )
        _json_scalar(value, what)
        if isinstance(value, bool) and op not in ("==", "!="):
            raise FilterError(f"{what} {op} {value!r}: booleans compare with == and != only")
        return JsonComparison(self.column, self.path, op, value)

    def __eq__(self, value: Any) -> JsonComparison:  # type: ignore[override]
        return self._compare("==", value)

    def __ne__(self, value: Any) -> JsonComparison:  # type: ignore[override]
        return self._compare("!=", value)

    def __lt__(self, value: Any) -> JsonComparison:
        return self._compare("<", value)

    def __le__(self, value: Any) -> JsonComparison:
        return self._compare("<=", value)

    def __gt__(self, value: Any) -> JsonComparison:
        return self._compare(">", value)

    def __ge__(self, value: Any) -> JsonComparison:
        return self._compare(">=", value)

    __hash__: ClassVar[None] = None  # type: ignore[assignment]

    def contains(self, candidate: Any) -> JsonContains:
        """The rows whose value here contains ``candidate``, as PostgreSQL's ``@>`` means
        it: a dict holds each of the candidate's keys with a value containing the
        candidate's; a list holds an equal element (of the same kind) for each of the
        candidate's, in any order; a number equals a number (``1 == 1.0``), a text a
        text, a boolean a boolean. A candidate is a dict (str keys) whose values are
        scalars, dicts or lists, or a list of scalars."""
        return JsonContains(
            self.column, self.path, _json_candidate(candidate, f"{self._name()}.contains()")
        )


def filtered_column(schema: TableSchema, name: str) -> Column:
    """The column ``name`` of ``schema``; a FilterError for a plain child list (rows of
    another table, no column of this one), an UnknownColumnError for other names."""
    for child in schema.children:
        if child.field == name and not child.optional:
            raise FilterError(
                f"{schema.cls.__qualname__}.{name}: a child list (its items are rows of table "
                f"{child.schema.name!r}), which a filter cannot compare; filter that table's "
                "class, or select the rows and compare in Python"
            )
    return schema.column(name)


def check_like(schema: TableSchema, column: Column, pattern: str) -> None:
    """FilterError unless ``column`` holds text and ``pattern`` follows the LIKE rule."""
    from ._like import like_tokens

    if column.info.python_type is not str:
        raise FilterError(
            f"{schema.cls.__qualname__}.{column.name}: like() needs a "
            f"text column; this one is {column.info.name}"
        )
    try:
        like_tokens(pattern)
    except ValueError as exc:
        raise FilterError(
            f"{schema.cls.__qualname__}.{column.name}: like({_short(pattern)}): {exc}"
        ) from None


def _encoded_form(column: Column) -> str | None:
    """How ``column`` stores its values when SQL cannot compare that form by value (JSON
    text, packed bytes), else None. Equal values may have several encoded forms (dict key
    order, ``1`` and ``1.0``, ``-0.0``, a Decimal's exponent, a datetime's offset), and an
    array's equality is no single truth value."""
    info = column.info
    # an entry naming the SQL layer's own json_text has imported it
    sqltypes = sys.modules.get("entityworks.sql.sqltypes")
    if info.sql_codec.column_type is storage.json_text or (
        sqltypes is not None and info.sql_codec.column_type is sqltypes.json_text
    ):
        return "stored as JSON text"
    if info.sql_codec.opaque_as is not None:
        return f"stored as {info.sql_codec.opaque_as}"
    tp = info.python_type
    numpy = sys.modules.get("numpy")  # an ndarray annotation has imported it
    if numpy is not None and (tp is numpy.ndarray or typing.get_origin(tp) is numpy.ndarray):
        return "stored as .npy bytes"
    return None


def refuse_encoded(schema: TableSchema, column: Column, op: str) -> None:
    """FilterError for a comparison other than with None on an Optional child list's
    presence column or on a column stored encoded (see the module's docstring)."""
    where = f"{schema.cls.__qualname__}.{column.name}"
    what = {"in": "in_()", "not_in": "not_in()", "between": "between()", "like": "like()"}.get(
        op, f"{op} with a value"
    )
    if any(c.field == column.name and c.optional for c in schema.children):
        raise FilterError(
            f"{where}: an Optional child list can only be compared with None (== None: the "
            f"list is None; != None: it is a list, empty or not), not by {what}: its items "
            "are rows of another table"
        )
    form = _encoded_form(column)
    if form is not None:
        raise FilterError(
            f"{where} ({column.info.name}) is {form}, so SQL cannot compare it by value "
            f"({what} would compare encodings: {{'b': 2, 'a': 1}} would miss "
            "{'a': 1, 'b': 2}); filter it with None only (== None, != None), or select the "
            "rows and compare in Python"
        )


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _by_key_suffix(table: sa.Table, schema: TableSchema, name: str) -> Any:
    """The foreign-key column named ``name`` + ``_`` + the referenced key (``book`` for
    ``book_isbn`` referring to ``Book.isbn``), or None."""
    for c in schema.columns:
        if c.references is not None:
            (foreign,) = table.c[c.name].foreign_keys
            if c.name == f"{name}_{foreign.column.key}":
                return c
    return None


@dataclass(frozen=True, eq=False)
class _Bool(Expr):
    kind: str
    parts: tuple[Expr, ...]

    def compile(self, table: sa.Table, schema: TableSchema) -> sa.ColumnElement[bool]:
        import sqlalchemy as sa

        compiled = [p.compile(table, schema) for p in self.parts]
        if self.kind == "not":
            return sa.not_(compiled[0])
        return sa.and_(*compiled) if self.kind == "and" else sa.or_(*compiled)


@dataclass(frozen=True, eq=False)
class _Equal(Expr):
    mapping: tuple[tuple[str, Any], ...]

    def compile(self, table: sa.Table, schema: TableSchema) -> sa.ColumnElement[bool]:
        import sqlalchemy as sa

        parts = [Comparison(k, "==", v).compile(table, schema) for k, v in self.mapping]
        return sa.and_(*parts) if parts else sa.true()


class col:  # noqa: N801 - reads as a function in filters: col("x") >= 1
    """A column reference for building filters: ``col("open_ratio") >= 0.45``."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        if not isinstance(name, str):
            raise FilterError(f"column name must be a string, got {name!r}")
        self.name: str = name

    def __eq__(self, value: Any) -> Comparison:  # type: ignore[override]
        return Comparison(self.name, "==", value)

    def __ne__(self, value: Any) -> Comparison:  # type: ignore[override]
        return Comparison(self.name, "!=", value)

    def __lt__(self, value: Any) -> Comparison:
        return Comparison(self.name, "<", value)

    def __le__(self, value: Any) -> Comparison:
        return Comparison(self.name, "<=", value)

    def __gt__(self, value: Any) -> Comparison:
        return Comparison(self.name, ">", value)

    def __ge__(self, value: Any) -> Comparison:
        return Comparison(self.name, ">=", value)

    __hash__: ClassVar[None] = None  # type: ignore[assignment]

    def in_(self, values: Iterable[Any]) -> Comparison:
        """The rows whose value equals one of ``values``; ``None`` among them also keeps
        the rows whose value is NULL, as ``col(name) == None`` does (``in_([None])`` is
        ``is_null()``, ``in_([1, None])`` keeps 1 and NULL). SQL's own ``IN (NULL)`` would
        match no row; entityworks writes ``IN (...) OR IS NULL`` instead. An empty list
        keeps no row."""
        return Comparison(self.name, "in", _values(values, "in_"))

    def not_in(self, values: Iterable[Any]) -> Comparison:
        """The rows whose value is not NULL and equals none of ``values``: like ``!=``, it
        never keeps a NULL, and ``None`` among the values changes nothing but that
        (``not_in([None])`` is ``is_not_null()``, ``not_in([1, None])`` is
        ``not_in([1])``). SQL's own ``NOT IN (1, NULL)`` would match no row at all. An
        empty list keeps every row, NULLs included."""
        return Comparison(self.name, "not_in", _values(values, "not_in"))

    def between(self, low: Any, high: Any) -> Comparison:
        return Comparison(self.name, "between", (low, high))

    def like(self, pattern: str) -> Comparison:
        if not isinstance(pattern, str):
            raise FilterError(f"like() takes a str pattern, got {pattern!r}")
        return Comparison(self.name, "like", pattern)

    def is_null(self) -> Comparison:
        return Comparison(self.name, "is_null", None)

    def __getitem__(self, key: str | int) -> JsonItem:
        """A value inside this JSON column (a list, dict, tuple or nested dataclass field):
        ``col("meta")["size"] >= 3``, ``col("meta")["a"]["b"] == "x"``, ``col("tags")[0]``
        (see :class:`JsonItem`)."""
        return JsonItem(self.name, ())[key]

    def contains(self, candidate: Any) -> JsonContains:
        """The rows whose JSON column contains ``candidate`` (a dict or a list; see
        :meth:`JsonItem.contains`): ``col("tags").contains(["x"])``."""
        return JsonItem(self.name, ()).contains(candidate)

    def is_not_null(self) -> Comparison:
        return Comparison(self.name, "is_not_null", None)


def _filter_value(info: Any, value: Any) -> Any:
    """A filter value held to the column type's rule (``TypeInfo.check``), as a stored value
    is, except that a Decimal column may be compared with an int or a float (exactly, as
    Python compares them). A float against an int column is refused like a stored one: a
    server would round it to the column's type (``n IN (1.5)`` finding 2)."""
    kind = info.python_type
    if (
        kind is decimal.Decimal
        and not isinstance(value, bool)
        and isinstance(value, int | float | decimal.Decimal)
    ):
        number = decimal.Decimal(value)
        if not number.is_finite():
            raise ValueError(f"{value!r} is not a finite number")
        _sign, digits, exponent = number.as_tuple()
        if len(digits) + int(exponent) > DECIMAL_INTEGER_DIGITS:
            raise ValueError(f"more than {DECIMAL_INTEGER_DIGITS} digits before the point")
        return number
    return info.checked(value)


def encode_value(column: Any, value: Any) -> Any:
    """``value`` as a bound parameter for ``column``: checked and encoded by the registry."""
    if value is None:
        return None
    info = column.info
    try:
        checked = _filter_value(info, value)
        to_db = info.sql_codec.encode
        if info.python_type is decimal.Decimal or to_db is None:
            return checked  # (a Decimal's to_db is its storage rule, which a filter is not)
        return to_db(checked)
    except Exception as exc:
        raise encode_error(column.name, value, exc) from None


_encode = encode_value


def _values(values: Any, what: str) -> tuple[Any, ...]:
    if isinstance(values, str | bytes) or not isinstance(values, Iterable):
        raise FilterError(f"{what}() takes a list of values, got {values!r}")
    return tuple(values)


def _coerce(where: Any) -> Expr:
    if isinstance(where, Expr):
        return where
    if isinstance(where, Mapping):
        for key in where:
            if not isinstance(key, str):
                raise FilterError(f"filter keys must be column names, got {key!r}")
        return _Equal(tuple(where.items()))
    if isinstance(where, list | tuple):
        parts = [_coerce(w) for w in where]
        return _Bool("and", tuple(parts)) if parts else _Equal(())
    if isinstance(where, str):
        raise FilterError(
            "where= does not take SQL text; pass a dict such as {'kind': 'cave'} or "
            "expressions such as col('width') >= 80"
        )
    raise FilterError(f"unsupported filter {where!r}: use a dict or col(...) expressions")


def compile_where(
    where: Any, table: sa.Table, schema: TableSchema
) -> sa.ColumnElement[bool] | None:
    """The SQLAlchemy condition for ``where`` (``None`` -> no condition)."""
    if where is None:
        return None
    expr = _coerce(where)
    if isinstance(expr, _Equal) and not expr.mapping:
        return None
    return expr.compile(table, schema)


def order_items(order_by: Any, schema: TableSchema) -> list[tuple[Column, bool]]:
    """``order_by`` checked against ``schema``: its columns, each with True when descending
    (see :func:`compile_order_by`)."""
    if order_by is None:
        return []
    if not isinstance(order_by, Iterable):
        raise FilterError(f"order_by takes a column name or a list of them, got {order_by!r}")
    items = [order_by] if isinstance(order_by, str) else list(order_by)
    out: list[tuple[Column, bool]] = []
    for item in items:
        if not isinstance(item, str) or not item.lstrip("-"):
            raise FilterError(f"order_by takes column names ('-name' for descending), got {item!r}")
        descending = item.startswith("-")
        out.append((schema.column(item[1:] if descending else item), descending))
    return out


def compile_order_by(
    order_by: Any, table: sa.Table, schema: TableSchema
) -> list[sa.ColumnElement[Any]]:
    """``"name"``, ``"-name"`` (descending) or a list of those -> ORDER BY clauses.

    NULLs come first in ascending order and last in descending order on every backend (as
    SQLite and MariaDB do; PostgreSQL would do the opposite, and MariaDB has no NULLS FIRST):
    an Optional column is ordered by ``IS NULL`` first.
    """
    clauses: list[sa.ColumnElement[Any]] = []
    for column, descending in order_items(order_by, schema):
        target = table.c[column.name]
        if column.nullable:
            nulls = target.is_(None)
            clauses.append(nulls.asc() if descending else nulls.desc())
        clauses.append(target.desc() if descending else target.asc())
    return clauses

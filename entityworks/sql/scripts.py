"""SQL scripts: DDL and parameterized statement templates for any supported dialect.

``create_script`` compiles the very ``Table`` objects the Store uses (``CreateTable`` /
``CreateIndex``) for the named dialect, so a script matches what ``Store.create`` would do.
``statement_templates`` gives insert / update / upsert / select-by-key / delete-by-key
statements whose values are named placeholders only: there is no API here that puts a value
into SQL text. :meth:`StatementTemplates.parameters` turns an instance into the matching
parameter dict, encoded by the registry and the dialect's own bind processors.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa
from sqlalchemy.schema import CreateIndex, CreateTable

from ..errors import EntityworksError
from ..model.schema import (
    PARENT_COLUMN,
    POSITION_COLUMN,
    TableSchema,
    refuse_nested_children,
    table_schema,
)
from ..registry import TypeRegistry, encode_error
from ..registry import registry as default_registry
from . import sqltypes
from ._rowcodec import row_codec
from .backends import for_name, names_where
from .backends.base import Backend
from .tables import build_tables

#: Backend name -> SQLAlchemy URL used only to load the dialect class (nothing connects).
DIALECTS = {
    name: f"{name}+{for_name(name).script_driver}://"
    if for_name(name).script_driver
    else f"{name}://"
    for name in names_where(lambda _d: True)
}
#: Other names of a dialect (``sqlserver``) -> its name, as each backend lists them.
_ALIASES = {alias: name for name in DIALECTS for alias in for_name(name).dialect_aliases}


def dialect_for(name: str, paramstyle: str | None = None) -> sa.Dialect:
    """A dialect object for ``name`` with a named placeholder style (``named``/``pyformat``)."""
    return _offline(name, paramstyle)[0]


def _offline(name: str, paramstyle: str | None = None) -> tuple[sa.Dialect, Backend]:
    """:func:`dialect_for`, and the Backend of that dialect."""
    key = _ALIASES.get(name.lower(), name.lower())
    if key not in DIALECTS:
        raise EntityworksError(f"unknown dialect {name!r}; choose one of {', '.join(DIALECTS)}")
    backend = for_name(key)
    style = paramstyle or backend.native_paramstyle
    if style not in ("named", "pyformat"):
        raise EntityworksError(
            f"paramstyle must be 'named' or 'pyformat', got {style!r}: "
            "templates always use named placeholders"
        )
    dialect = sa.make_url(DIALECTS[key]).get_dialect()(paramstyle=style)  # type: ignore[call-arg]
    backend.prepare_offline(dialect)
    return dialect, backend


def _tables(
    cls: type, backend: Backend, registry: TypeRegistry
) -> tuple[TableSchema, list[sa.Table]]:
    schema = table_schema(cls, registry)
    metadata = sa.MetaData()
    build_tables(schema, metadata, backend)
    refuse_nested_children(schema, "SQL statement templates")
    names = [schema.name] + [child.schema.name for child in schema.children]
    return schema, [metadata.tables[n] for n in names]


def create_script(
    cls: type,
    dialect: str,
    *,
    if_not_exists: bool = False,
    registry: TypeRegistry = default_registry,
) -> str:
    """The CREATE TABLE (and CREATE INDEX) statements of ``cls`` and its child tables."""
    d, backend = _offline(dialect)
    _schema, tables = _tables(cls, backend, registry)
    statements: list[Any] = []
    for table in tables:
        statements.append(CreateTable(table, if_not_exists=if_not_exists))
        statements.extend(
            CreateIndex(ix, if_not_exists=if_not_exists)
            for ix in sorted(table.indexes, key=lambda ix: ix.name or "")
        )
    return "".join(str(s.compile(dialect=d)).strip() + ";\n\n" for s in statements)


@dataclass(frozen=True)
class StatementTemplates:
    """Parameterized statements for one table; ``None`` where the table has no key."""

    table: str
    dialect: str
    paramstyle: str
    columns: tuple[str, ...]
    key: tuple[str, ...]
    insert: str
    update: str | None
    upsert: str | None
    select_by_key: str | None
    delete_by_key: str | None
    children: dict[str, StatementTemplates] = field(default_factory=dict)
    _encoder: Callable[[Any], dict[str, Any]] | None = field(
        default=None, repr=False, compare=False
    )

    def parameters(self, obj: Any) -> dict[str, Any]:
        """The parameter dict for ``obj`` (storage values for this dialect, companion columns
        included); a child table's templates take ``(parent_key, position, item)``."""
        if self._encoder is None:  # pragma: no cover - every template has one
            raise EntityworksError("these templates have no parameter encoder")
        return self._encoder(obj)


def statement_templates(
    cls: type,
    dialect: str,
    *,
    paramstyle: str | None = None,
    registry: TypeRegistry = default_registry,
) -> StatementTemplates:
    """Insert / update / upsert / select-by-key / delete-by-key SQL with named placeholders.

    ``paramstyle`` is ``named`` (``:name``) or ``pyformat`` (``%(name)s``); by default the
    style of the dialect's usual driver (sqlite3: named, psycopg / PyMySQL: pyformat,
    SQL Server: named, for ``sqlalchemy.text``).
    """
    d, backend = _offline(dialect, paramstyle)
    schema, tables = _tables(cls, backend, registry)
    root = _templates(
        schema,
        tables[0],
        d,
        backend,
        [c.name for c in schema.key_columns],
        _encoder(schema, tables[0], d),
    )
    children = {
        child.field: _templates(
            child.schema,
            table,
            d,
            backend,
            [PARENT_COLUMN, POSITION_COLUMN],
            _encoder(child.schema, table, d),
        )
        for child, table in zip(schema.children, tables[1:], strict=True)
    }
    return StatementTemplates(**{**root.__dict__, "children": children})


def _compile(stmt: Any, d: sa.Dialect, column_keys: list[str] | None = None) -> str:
    compiled = stmt.compile(dialect=d, column_keys=column_keys)
    if getattr(compiled, "literal_execute_params", None):  # pragma: no cover - guard
        raise EntityworksError("a template would render a literal value")
    return str(compiled).strip()


def _templates(
    schema: TableSchema,
    table: sa.Table,
    d: sa.Dialect,
    backend: Backend,
    key: list[str],
    encoder: Callable[[Any], dict[str, Any]] | None,
) -> StatementTemplates:
    names = [c.key for c in table.columns]  # placeholders: field names (column(name=...))
    others = [n for n in names if n not in key]
    insert = _compile(table.insert(), d, names)
    update = upsert = select = delete = None
    if key:
        condition = sa.and_(*(table.c[k] == sa.bindparam(k, type_=table.c[k].type) for k in key))
        select = _compile(sa.select(table).where(condition), d)
        delete = _compile(table.delete().where(condition), d)
        if others:
            update = _compile(table.update().where(condition), d, others)
        upsert = _upsert(table, key, others, names, d, backend)
    style = d.paramstyle
    return StatementTemplates(
        schema.name,
        d.name,
        style,
        tuple(names),
        tuple(key),
        insert,
        update,
        upsert,
        select,
        delete,
        {},
        encoder,
    )


def _upsert(
    table: sa.Table,
    key: list[str],
    others: list[str],
    names: list[str],
    d: sa.Dialect,
    backend: Backend,
) -> str:
    # a NUMERIC key equal by value takes the scale just written, as the Store's upsert
    restated = [
        k
        for k in key
        if backend.keeps_decimal_scale and isinstance(table.c[k].type, sqltypes.ExactDecimal)
    ]
    stmt = backend.script_upsert(table, key, others, restated)
    if stmt is None:
        return _merge(table, key, others, names, d)
    return _compile(stmt, d, names)


def _merge(
    table: sa.Table, key: list[str], others: list[str], names: list[str], d: sa.Dialect
) -> str:
    """SQL Server has no INSERT ... ON CONFLICT: a MERGE with placeholders as its source."""

    def quote(key: str) -> str:  # the SQL name of the column whose placeholder is ``key``
        return d.identifier_preparer.quote(table.c[key].name)

    mark: Callable[[str], str] = (
        (lambda n: f":{n}") if d.paramstyle == "named" else (lambda n: f"%({n})s")
    )
    source = ", ".join(f"{mark(n)} AS {quote(n)}" for n in names)
    match = " AND ".join(f"target.{quote(k)} = source.{quote(k)}" for k in key)
    lines = [
        f"MERGE INTO {d.identifier_preparer.format_table(table)} WITH (HOLDLOCK) "
        f"AS target USING (SELECT {source}) AS source ON {match}"
    ]
    if others:
        sets = ", ".join(f"target.{quote(n)} = source.{quote(n)}" for n in others)
        lines.append(f"WHEN MATCHED THEN UPDATE SET {sets}")
    columns = ", ".join(quote(n) for n in names)
    values = ", ".join(f"source.{quote(n)}" for n in names)
    lines.append(f"WHEN NOT MATCHED THEN INSERT ({columns}) VALUES ({values});")
    return "\n".join(lines)


def _encoder(
    schema: TableSchema, table: sa.Table, d: sa.Dialect
) -> Callable[[Any], dict[str, Any]]:
    """Instance (or a child's ``(parent_key, position, item)``) -> parameters, encoded as the
    Store encodes them: the registry's rule and codec, the dialect's bind processor, and the
    companion columns."""
    codec = row_codec(schema, table, d)
    child = schema.parent is not None
    names = [c.name for c in schema.field_columns]

    def encode(obj: Any) -> dict[str, Any]:
        if child:
            if not (isinstance(obj, tuple) and len(obj) == 3):
                raise EntityworksError(
                    "a child table's parameters take (parent_key, position, item)"
                )
            parent, position, item = obj
        else:
            parent, position, item = None, None, obj
        if type(item) is not schema.cls:
            raise EntityworksError(
                f"expected a {schema.cls.__qualname__}, got {type(item).__qualname__}"
            )
        values = [getattr(item, n) for n in names]
        if child:
            values = [parent, position, *values]
        row = list(values)
        for i, enc in enumerate(codec.checked):
            if enc is not None and row[i] is not None:
                try:
                    row[i] = enc(row[i])
                except Exception as exc:
                    raise encode_error(codec.fields[i], values[i], exc) from None
        if codec.spread is not None:
            row = codec.spread(values, row)
        return dict(zip(codec.names, row, strict=True))

    return encode


__all__ = [
    "DIALECTS",
    "StatementTemplates",
    "create_script",
    "dialect_for",
    "statement_templates",
]

"""Python source for the dataclasses of an existing database (``entityworks codegen --db``).

Any database, ours or anyone's: each table becomes an ``@entity`` class as
:meth:`Store.reflect` sees it (types from the column types, ``X | None`` from nullability, the
primary key; our companion columns folded into one field and the types recorded beside our
tables), with what reflection leaves out written in: foreign keys
(``column(references="Author", on_delete=...)``) to the tables written with it, a string
column's length (``max_length``), child tables in the shape ``Store.create`` gives them
(``<table>_<field>`` with ``parent_key`` and ``position``, found by
:mod:`.exchange.children`) as ``list[Item]`` fields, and columns whose names no field can
have under a field name of their own (``column(name="unit price")``).

Names come from a stranger's database: they reach the source only as Python literals
(``repr``) or as identifiers made of letters, digits and underscores, so no name can add code
to the module.
"""

from __future__ import annotations

import dataclasses
import re
import types
import typing
import unicodedata
import warnings
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from ..errors import EntityworksError, SchemaError, UnknownTableError
from ..model.fields import FOREIGN_KEY, ON_DELETE
from ..model.names import check_name, unusable_field_name
from ..registry import COMPANION_SEPARATOR
from ..xml.codegen import classes_in_order, source_for
from ._reflect import column_python_type
from .exchange.children import child_tables, with_child_tables
from .exchange.internal import is_internal
from .logical import ConnectionSource
from .logicalread import Recorded
from .reflection import LiveColumn, reflected_class

if TYPE_CHECKING:
    from .store import Store


def field_name_for(column: str, taken: set[str]) -> str:
    """The field name of a column: the column's own name when a class body can define a
    field of that name, else one made of its letters and digits (``unit price`` ->
    ``unit_price``, ``class`` -> ``class_``, ``2nd`` -> ``f_2nd``), unique among ``taken``
    (case-insensitively: some databases cannot tell such columns apart); a column the
    name of a field of its own keeps it in ``column(name=...)``."""
    name = column
    if unusable_field_name(name) is not None or name.startswith("__"):
        name = unicodedata.normalize("NFKC", column)  # µ (MICRO SIGN) -> μ
    if unusable_field_name(name) is not None or name.startswith("__"):
        ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
        name = re.sub(r"[^0-9A-Za-z_]+", "_", ascii_name).strip("_") or "field"
        if name[0].isdigit():
            name = f"f_{name}"
        if unusable_field_name(name) is not None:  # a keyword
            name = f"{name}_"
    base, n = name, 2
    folded = {t.casefold() for t in taken}
    while name.casefold() in folded:
        name, n = f"{base}_{n}", n + 1
    taken.add(name)
    return name


def _field_names(columns: Sequence[str]) -> dict[str, str]:
    """Column -> field name for the columns of one table; a companion column
    (``base__suffix`` beside a column ``base``) follows its base column's name."""
    present = set(columns)

    def base_of(c: str) -> str | None:
        base, sep, suffix = c.rpartition(COMPANION_SEPARATOR)
        return base if sep and base in present and suffix.isidentifier() else None

    usable = {c for c in columns if unusable_field_name(c) is None and not c.startswith("__")}
    taken = set(usable)
    names = {c: c for c in usable if base_of(c) is None}
    for c in columns:
        if c not in names and base_of(c) is None:
            names[c] = field_name_for(c, taken)
    for c in columns:  # companions, after their base columns' names
        base = base_of(c)
        if base is not None:
            suffix = c.rpartition(COMPANION_SEPARATOR)[2]
            names[c] = f"{names[base]}{COMPANION_SEPARATOR}{suffix}"
    return names


class _RenamedSource:
    """The logical schema of a database as it would read if the columns of ``table`` were
    called as ``names`` says (the types recorded beside our own tables still apply)."""

    def __init__(self, conn: sa.Connection, table: str, names: dict[str, str]) -> None:
        self.source = ConnectionSource(conn)
        self.target = self.source.target
        self.table = table
        self.names = names

    def _name(self, table: str, column: str) -> str:
        return self.names.get(column, column) if table == self.table else column

    def has_table(self, name: str) -> bool:
        return self.source.has_table(name)

    def columns(self, name: str) -> list[tuple[str, bool]]:
        return [(self._name(name, c), nullable) for c, nullable in self.source.columns(name)]

    def recorded(self, name: str) -> list[Recorded]:
        return [
            r._replace(column_name=self._name(name, r.column_name)) if r.column_name else r
            for r in self.source.recorded(name)
        ]


def _renamed_class(store: Store, conn: sa.Connection, table: str, names: dict[str, str]) -> type:
    """The class :meth:`Store.reflect` would give ``table`` if its columns were called as
    ``names`` says, each field keeping its column's name (``column(name=...)``)."""
    inspector = sa.inspect(conn)
    live = inspector.get_columns(table)
    columns = [
        LiveColumn(
            names[c["name"]],
            bool(c.get("nullable", True)),
            str(c["type"]),
            partial(column_python_type, c["type"]),
        )
        for c in live
    ]
    pk = inspector.get_pk_constraint(table).get("constrained_columns") or []
    checked = store.backend.checked_python_types(inspector, table)
    cls = reflected_class(
        table,
        columns,
        [names[c] for c in pk],
        {names[c]: t for c, t in checked.items()},
        store.registry,
        _RenamedSource(conn, table, names),
    )
    return _with_metadata(cls, {f: {"column_name": c} for c, f in names.items() if c != f})


def _with_metadata(cls: type, extra: dict[str, dict[str, Any]]) -> type:
    """``cls`` (a class made here, nowhere else in use) with ``extra[field]`` added to its
    fields' metadata, in place: the class keeps its identity, which the foreign keys of
    other classes name."""
    for f in dataclasses.fields(cls):
        if f.name in extra:
            f.metadata = types.MappingProxyType({**f.metadata, **extra[f.name]})
    return cls


def _table_class(store: Store, conn: sa.Connection, table: str) -> type:
    """The class of ``table`` with its child tables as list fields and the length of its
    string columns; its foreign keys are added once every class is known."""
    inspector = sa.inspect(conn)
    live = inspector.get_columns(table)
    check_name(table, "table name")  # names no class of entityworks can carry: refused here
    for c in live:
        check_name(c["name"], f"column name (table {table!r})")
    names = _field_names([c["name"] for c in live])
    try:  # the types recorded beside our own tables know the field names already
        cls = store.reflect(table)
    except SchemaError:
        if all(c == f for c, f in names.items()):
            raise
        cls = _renamed_class(store, conn, table, names)
    cls = with_child_tables(store, cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    lengths: dict[str, dict[str, Any]] = {}
    for c in live:
        field = fields.get(names[c["name"]])
        length = getattr(c["type"], "length", None)
        if (
            field is not None
            and str in (field.type, *typing.get_args(field.type))  # not a UUID's CHAR(32)
            and isinstance(c["type"], sa.String)
            and isinstance(length, int)
            and field.metadata.get("max_length") is None
        ):
            lengths[field.name] = {"max_length": length}
    by_column = {f.metadata.get("column_name", f.name): f.name for f in dataclasses.fields(cls)}
    single = [
        (uc.get("column_names") or [], "unique") for uc in inspector.get_unique_constraints(table)
    ] + [
        (ix.get("column_names") or [], "unique" if ix.get("unique") else "index")
        for ix in inspector.get_indexes(table)
    ]
    for columns, option in single:
        if len(columns) == 1 and columns[0] in by_column:
            options = lengths.setdefault(by_column[columns[0]], {})
            options["unique"] = options.get("unique", False) or option == "unique"
            options["index"] = not options["unique"]
    return _with_metadata(cls, lengths)


def _foreign_keys(
    store: Store, conn: sa.Connection, table: str, cls: type, classes: dict[str, type]
) -> dict[str, dict[str, Any]]:
    """Field -> ``{FOREIGN_KEY: (class, action)}`` for each foreign key of ``table`` that
    entityworks can declare: one column, to the one-column primary key of a table among
    ``classes``, with an ``on_delete`` it knows."""
    inspector = sa.inspect(conn)
    by_column = {f.metadata.get("column_name", f.name): f.name for f in dataclasses.fields(cls)}
    found: dict[str, dict[str, Any]] = {}
    for columns, referred, referred_columns, action in store.backend.foreign_keys(
        conn, inspector, table
    ):
        target = classes.get(referred)
        if target is None or len(columns) != 1 or columns[0] not in by_column:
            continue
        pk = inspector.get_pk_constraint(referred).get("constrained_columns") or []
        if referred_columns != pk or len(pk) != 1 or action not in ON_DELETE:
            continue
        found[by_column[columns[0]]] = {FOREIGN_KEY: (target, action)}
    return found


def _descendants(store: Store, table: str) -> set[str]:
    """The child tables of ``table`` (and theirs), by name."""
    out: set[str] = set()
    stack = list(child_tables(store, table))
    while stack:
        child = stack.pop()
        out.add(child.name)
        stack.extend(child.children)
    return out


def codegen_from_db(db: Store | str | Path, tables: Sequence[str] | None = None) -> str:
    """Python source of ``@entity`` dataclasses for the tables of ``db`` (a Store, an
    SQLAlchemy URL or a database file, only read: a missing file is refused, never
    created): those named in ``tables``, or every table but the
    internal ones (entityworks', Alembic's, the database's own) and the child tables that
    become list fields. A table referred to by a foreign key of a named one is written too.
    :class:`UnknownTableError` for a named table the database does not hold,
    :class:`SchemaError` for one whose columns have no Python type."""
    from .store import Store

    store = db if isinstance(db, Store) else Store(_read_only(db))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", sa.exc.SAWarning)  # "did not recognize type ..."
            return _codegen(store, tables)
    finally:
        if store is not db:
            store.close()


def _read_only(db: str | Path) -> str | sa.URL:
    """``db`` opened so that nothing is created or changed: a database file read-only (a
    missing one refused), a server's database as it is (only read)."""
    from . import backends

    if isinstance(db, Path) or "://" not in db:
        path: Path | None = Path(db)
        backend = backends.file_backend()
    else:
        url = sa.make_url(db)
        backend = backends.for_name(url.get_backend_name())
        path = backend.database_file(url)
        if path is None or str(path).startswith("file:"):  # a server, memory or a URI
            return db
    assert path is not None
    if not path.is_file():
        raise EntityworksError(f"no database file at {path} (nothing was created)")
    return backend.read_only_url(path)


def _codegen(store: Store, tables: Sequence[str] | None) -> str:
    existing = store.table_names()
    if tables:
        for name in tables:
            if name not in existing:
                raise UnknownTableError(f"no table {name!r} in the database")
        wanted = list(dict.fromkeys(tables))
    else:
        wanted = sorted(name for name in existing if not is_internal(name))
    children: set[str] = set()
    for name in wanted:
        children |= _descendants(store, name)
    wanted = [name for name in wanted if name not in children]
    classes: dict[str, type] = {}
    with store.connection() as conn:
        inspector = sa.inspect(conn)
        pending = list(wanted)
        while pending:  # the tables named, then those their foreign keys refer to
            name = pending.pop(0)
            if name in classes:
                continue
            classes[name] = _table_class(store, conn, name)
            for _columns, referred, _to, _action in store.backend.foreign_keys(
                conn, inspector, name
            ):
                if referred in existing and referred not in classes:
                    pending.append(referred)
        for name, cls in classes.items():
            _with_metadata(cls, _foreign_keys(store, conn, name, cls, classes))
    if not classes:
        raise SchemaError("the database holds no table to write a class for")
    return source_for(classes_in_order(list(classes.values())), origin="a database")


__all__ = ["codegen_from_db", "field_name_for"]

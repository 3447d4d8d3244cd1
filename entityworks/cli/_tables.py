"""``tables``: the tables of any database (SQLite, PostgreSQL, MariaDB), with their row counts
and their columns' declared SQL types, as a text table, JSON or CSV.

It only reads: an SQLite file is opened read-only (``mode=ro``) and a missing one is refused,
never created. Names are shown as ``query`` shows stored text (:func:`.output.escape_text` in
the table and CSV formats, :mod:`._jsonout`'s escapes in JSON), so a table or column name
holding control characters cannot drive the terminal.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import click

from .options import db_option

if TYPE_CHECKING:
    import sqlalchemy as sa

    from ..sql.store import Store


@dataclass
class TableInfo:
    """One table as listed: its name, its row count (with ``--counts``) and its columns with
    their declared types (with ``--columns``)."""

    name: str
    count: int | None = None
    columns: list[tuple[str, str]] = field(default_factory=list)


@click.command()
@click.option("--counts", is_flag=True, help="Also the number of rows of each table.")
@click.option(
    "--columns", is_flag=True, help="Also each table's columns with their declared SQL types."
)
@click.option(
    "--all",
    "show_all",
    is_flag=True,
    help="Also the internal tables (entityworks_version, entityworks_schema, alembic_version).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "json", "csv"]),
    default="table",
    show_default=True,
    help="json: an array of objects {table, count, columns: [{name, type}]}, one "
    "per line; csv: one row per table, or per column with --columns.",
)
@db_option
def tables(counts: bool, columns: bool, show_all: bool, fmt: str, db: str) -> None:
    """List the tables of any database, with row counts and declared column types.

    Read-only: an SQLite file is opened read-only and a missing one is refused, never
    created. Declared types are the database's own (SQLite: as written in CREATE TABLE).
    Names show control characters escaped, as 'query' shows text.

    \b
    Examples:
      entityworks tables --counts --db levels.db
      entityworks tables --columns --format json --db postgresql+psycopg://me@host/levels
    """
    store = open_read_only(db)
    try:
        found = list_tables(store, counts=counts, columns=columns, show_all=show_all)
    finally:
        store.close()
    click.echo(format_tables(found, fmt, counts=counts, columns=columns))


def open_read_only(db: str, command: str = "tables") -> Store:
    """A Store that cannot change ``db``: a database file opened read-only (refused if
    missing or not a regular file); a server database as it is (only read by ``command``)."""
    from ..errors import EntityworksError
    from ._stores import file_path

    path = file_path(db)
    if path is None or str(path).startswith("file:"):  # a server, memory or a file URI
        from ._stores import open_store

        return open_store(db)
    if not path.exists():
        raise EntityworksError(
            f"no database at {path} ('{command}' only reads: nothing was created)"
        )
    if not path.is_file():
        raise EntityworksError(f"{path} is not a database file")
    from ..sql.backends import file_backend
    from ..sql.store import Store
    from ._stores import for_the_command

    return for_the_command(Store(file_backend().read_only_url(path)))


def _internal(name: str) -> bool:
    from ..sql.backends.light import INTERNAL_PREFIXES
    from ._stores import INTERNAL_TABLES

    return name.lower() in INTERNAL_TABLES or name.lower().startswith(INTERNAL_PREFIXES)


def list_tables(
    store: Store, *, counts: bool = False, columns: bool = False, show_all: bool = False
) -> list[TableInfo]:
    """The tables of ``store`` sorted by name (internal ones only with ``show_all``)."""
    import warnings

    import sqlalchemy as sa

    found: list[TableInfo] = []
    with store.connection() as conn, warnings.catch_warnings():
        warnings.simplefilter("ignore", sa.exc.SAWarning)  # "did not recognize type ..."
        inspector = sa.inspect(conn)
        for name in sorted(inspector.get_table_names()):
            if _internal(name) and not show_all:
                continue
            info = TableInfo(name)
            if counts:
                info.count = conn.execute(
                    sa.select(sa.func.count()).select_from(sa.table(name))
                ).scalar_one()
            if columns:
                info.columns = _declared_columns(conn, inspector, name)
            found.append(info)
    return found


def _declared_columns(conn: sa.Connection, inspector: Any, name: str) -> list[tuple[str, str]]:
    """``(column, declared type)`` in table order, as the database itself declares it (SQLite:
    as written in CREATE TABLE; see ``Backend.declared_columns``). Names are bound parameters
    everywhere."""
    from ..sql.backends import for_name

    return for_name(conn.dialect.name).declared_columns(conn, inspector, name)


def format_tables(
    found: Sequence[TableInfo], fmt: str, *, counts: bool = False, columns: bool = False
) -> str:
    """``found`` as a text table, JSON (an array of objects, one per line) or CSV."""
    if fmt == "json":
        from ._jsonout import dumps

        objects = []
        for info in found:
            item: dict[str, Any] = {"table": info.name}
            if counts:
                item["count"] = info.count
            if columns:
                item["columns"] = [{"name": n, "type": t} for n, t in info.columns]
            objects.append(dumps(item))
        return "[\n" + ",\n".join("  " + o for o in objects) + "\n]" if objects else "[]"
    from .output import escape_text

    if fmt == "csv":
        import csv
        import io

        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        head = ["table"] + (["count"] if counts else []) + (["column", "type"] if columns else [])
        writer.writerow(head)
        for info in found:
            first = [escape_text(info.name)] + ([str(info.count)] if counts else [])
            if not columns:
                writer.writerow(first)
            for n, t in info.columns:
                writer.writerow(first + [escape_text(n), escape_text(t)])
        return buffer.getvalue().rstrip("\n")
    head = ["table"] + (["count"] if counts else []) + (["columns"] if columns else [])
    cells = [
        [escape_text(info.name)]
        + ([str(info.count)] if counts else [])
        + (
            [", ".join(f"{escape_text(n)} {escape_text(t)}".rstrip() for n, t in info.columns)]
            if columns
            else []
        )
        for info in found
    ]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(head)]

    def line(row: Sequence[str]) -> str:
        padded = [
            c.rjust(w) if h == "count" else c.ljust(w)
            for c, w, h in zip(row, widths, head, strict=True)
        ]
        return "  ".join(padded).rstrip()

    return "\n".join([line(head), "  ".join("-" * w for w in widths)] + [line(r) for r in cells])

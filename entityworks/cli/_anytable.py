"""sqlite-utils' commands for any table, on every backend: ``rows`` prints a table's rows,
``insert`` loads CSV, TSV, JSON or newline-delimited JSON into a table (exact or refused),
and ``sql`` runs one read-only statement with bound parameters.

``sql`` is read-only by the database's own rule, never by reading the statement: an SQLite
file opened ``mode=ro`` with ``PRAGMA query_only`` (and ATTACH refused), a PostgreSQL or
MariaDB session and transaction set READ ONLY, a driver that runs one statement a call
(:meth:`~entityworks.sql.backends.base.Backend.begin_read_only`,
:meth:`~entityworks.sql.backends.base.Backend.read_only_connect_args`), and a server-side
cursor (on PostgreSQL a query only: no ``COPY ... TO``). What a privileged account may write
to the server's files through a query (a superuser's ``lo_export``, MariaDB's ``INTO
OUTFILE``) is the account's to forbid.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..errors import EntityworksError, SchemaError
from ._stores import check_writable_table, complete_table, file_path, refuse_missing
from .options import ByteSize, db_option, parse_params, progress_option

if TYPE_CHECKING:
    from ..sql.store import Store
    from ._ingest import Target

#: The output formats of ``rows`` and ``sql`` (those of ``query``).
OUTPUT_FORMATS = ("table", "csv", "json", "jsonl")


def output_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn = click.option(
        "--arrays",
        type=click.Choice(["lists", "base64"]),
        default="lists",
        show_default=True,
        help="JSON form of arrays (grids): nested lists, or base64 with dtype and shape.",
    )(fn)
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(OUTPUT_FORMATS),
        default="table",
        show_default=True,
        help="json: an array of objects, one per line; jsonl: one object per line. Text "
        "in table and csv shows control characters escaped, as 'query' does.",
    )(fn)


def _print(columns: list[str], rows: list[tuple[Any, ...]], fmt: str, arrays: str) -> None:
    from .output import format_rows

    if fmt in ("json", "jsonl"):
        twice = sorted({c for c in columns if columns.count(c) > 1})
        if twice:  # a JSON object cannot hold one key twice
            raise EntityworksError(
                f"the result has several columns named {', '.join(map(repr, twice))}: "
                "name them apart (AS) for JSON"
            )
    text = format_rows(columns, rows, fmt, arrays=arrays)
    if text or fmt != "jsonl":
        click.echo(text)


# -- rows -------------------------------------------------------------------------------


@click.command()
@click.argument("table_name", metavar="TABLE", shell_complete=complete_table)
@click.option("--limit", type=click.IntRange(min=0), help="At most this many rows.")
@click.option("--offset", type=click.IntRange(min=0), help="Skip this many rows.")
@output_options
@db_option
def rows(
    table_name: str, limit: int | None, offset: int | None, fmt: str, arrays: str, db: str
) -> None:
    """Print the rows of any table (ours or not), as sqlite-utils' 'rows' does.

    Read-only: an SQLite file is opened read-only and a missing one is refused. Values
    come back as their types (ours: as stored; another's: as its column types say); a
    table whose columns no dataclass can hold is printed as the driver reads it. A table
    named like an option goes after '--'.

    \b
    Examples:
      entityworks rows people --limit 10 --db people.db
      entityworks rows people --format jsonl --db postgresql+psycopg://me@host/db
    """
    from ._tables import open_read_only

    store = open_read_only(db, "rows")
    try:
        columns, found = _table_rows(store, table_name, limit, offset)
    finally:
        store.close()
    _print(columns, found, fmt, arrays)


def _table_rows(
    store: Store, name: str, limit: int | None, offset: int | None
) -> tuple[list[str], list[tuple[Any, ...]]]:
    from ._stores import resolve_table

    try:
        cls = resolve_table(store, name)
    except SchemaError:  # no dataclass holds it: the driver's values
        return _raw_rows(store, name, limit, offset)
    schema = store.schema(cls)
    found = [r for batch in store.rows(cls, limit=limit, offset=offset) for r in batch]
    return list(schema.column_names), found


def _raw_rows(
    store: Store, name: str, limit: int | None, offset: int | None
) -> tuple[list[str], list[tuple[Any, ...]]]:
    import warnings

    import sqlalchemy as sa

    with store.connection() as conn, warnings.catch_warnings():
        warnings.simplefilter("ignore", sa.exc.SAWarning)  # "did not recognize type ..."
        table = sa.Table(name, sa.MetaData(), autoload_with=conn)
        query = sa.select(table).limit(limit).offset(offset)
        result = conn.execute(query)
        return list(result.keys()), [tuple(r) for r in result]


# -- sql --------------------------------------------------------------------------------


@click.command("sql")
@click.argument("statement", metavar="SQL")
@click.option(
    "--param",
    "-p",
    "params",
    multiple=True,
    metavar="NAME=VALUE",
    help="Bind :NAME to VALUE (JSON when it parses: 3, true, 0.5; else text). Repeatable.",
)
@output_options
@db_option
def sql(statement: str, params: Sequence[str], fmt: str, arrays: str, db: str) -> None:
    """Run one read-only SQL statement on any database and print its rows.

    Parameters are bound, never written into the SQL: ':name' in the statement takes the
    value of '-p name=VALUE' (a colon that is no parameter is written '\\:'). Nothing can
    write: an SQLite file is opened read-only (PRAGMA query_only, ATTACH refused), a
    PostgreSQL or MariaDB session and transaction are READ ONLY, and one statement runs,
    so the database refuses a write whatever the statement says (files a privileged
    account may write on the server, as with INTO OUTFILE, are the account's to forbid).

    \b
    Examples:
      entityworks sql "SELECT name, score FROM people WHERE score > :min" -p min=3 --db p.db
      entityworks sql "SELECT count(*) AS n FROM people" --format json --db postgresql+psycopg://me@host/db
    """
    import sqlalchemy as sa

    from ..sql.backends import file_backend, for_name

    values = parse_params(params)
    path = file_path(db)
    if path is not None and not str(path).startswith("file:"):
        refuse_missing(path)
        url = file_backend().read_only_url(path)
    else:
        url = sa.make_url(db)
    backend = for_name(url.get_backend_name())
    engine = sa.create_engine(
        url, poolclass=sa.pool.NullPool, connect_args=backend.read_only_connect_args(url)
    )
    try:
        with engine.connect() as conn:
            backend.begin_read_only(conn)
            # a server-side cursor: rows streamed; on PostgreSQL the statement becomes
            # DECLARE ... CURSOR FOR, which takes a query only (no COPY TO a server file)
            streamed = conn.execution_options(stream_results=True)
            result = streamed.execute(sa.text(statement), values)
            columns = list(result.keys()) if result.returns_rows else []
            found = [tuple(r) for r in result] if result.returns_rows else []
            conn.rollback()
    finally:
        engine.dispose()
    if columns:
        _print(columns, found, fmt, arrays)


# -- insert -----------------------------------------------------------------------------

#: Rows written per call of the Store (one transaction for the whole file).
BATCH = 1000


@click.command("insert")
@click.argument("table_name", metavar="TABLE")
@click.argument("file", metavar="FILE")
@click.option("--csv", "fmt", flag_value="csv", help="FILE is CSV (with a header row).")
@click.option("--tsv", "fmt", flag_value="tsv", help="FILE is tab-separated (with a header row).")
@click.option("--json", "fmt", flag_value="json", help="FILE is a JSON array of objects.")
@click.option("--nl", "fmt", flag_value="nl", help="FILE is newline-delimited JSON objects.")
@click.option(
    "--dataclass",
    "dataclass_spec",
    metavar="MODULE:CLASS",
    help="The column types of this dataclass (its table is created if missing).",
)
@click.option(
    "--pk",
    "pks",
    multiple=True,
    metavar="COLUMN",
    help="The primary key of a new table (repeatable: a composite key).",
)
@click.option("--upsert", is_flag=True, help="Replace the rows whose key exists (needs a key).")
@click.option(
    "--show-types", is_flag=True, help="Print each column's type (detected or given) first."
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Read and check every row, print the types, write nothing.",
)
@click.option(
    "--max-size",
    type=ByteSize(),
    default=None,
    help="Refuse an input longer than this (K, M, G suffixes; 0: no limit). Default: no limit "
    "for a file, 1G for standard input or a FIFO (copied once to a private temporary file).",
)
@progress_option
@db_option
def insert(
    table_name: str,
    file: str,
    fmt: str | None,
    dataclass_spec: str | None,
    pks: Sequence[str],
    upsert: bool,
    show_types: bool,
    dry_run: bool,
    max_size: int | None,
    progress: bool | None,
    db: str,
) -> None:
    """Insert the rows of a CSV, TSV, JSON or newline-delimited JSON file into a table.

    FILE's format comes from --csv/--tsv/--json/--nl or its extension (.csv, .tsv, .json,
    .jsonl, .ndjson); '-' reads standard input. The column types come from --dataclass,
    else from the table if it exists, else they are detected from the data and shown
    (integers, floats, booleans, text; see --show-types, --dry-run), and the table is made.

    Exact or refused: a value that does not fit its column (a CSV cell that is no integer
    in an integer column, a JSON float in an integer column, a column the table has not)
    refuses the whole file with its row and column named, and nothing is written. The file
    is streamed in batches in one transaction.

    \b
    Examples:
      entityworks insert people people.csv --pk id --db people.db
      entityworks insert people more.jsonl --upsert --db people.db
      cat people.tsv | entityworks insert people - --tsv --dry-run --db people.db
    """
    from .._files import input_path
    from ._ingest import input_format

    check_writable_table(table_name)
    if dataclass_spec is not None and pks:
        raise click.UsageError("--pk names a new table's key; a --dataclass has its own")
    fmt = input_format(file, fmt)
    limit = max_size if max_size is not None else _stream_limit(file)
    with input_path(file, max_bytes=limit) as path:
        _insert(
            table_name,
            path,
            fmt,
            dataclass_spec,
            list(pks),
            upsert=upsert,
            show_types=show_types or dry_run,
            dry_run=dry_run,
            progress=progress,
            db=db,
        )


def _stream_limit(file: str) -> int | None:
    """No limit for a regular file (it is streamed); 1G for what is copied first."""
    import stat

    if file != "-":
        try:
            if stat.S_ISREG(os.stat(file).st_mode):
                return None
        except OSError:
            return None  # input_path names the missing file
    return 1 << 30


def _insert(
    table_name: str,
    path: Path,
    fmt: str,
    dataclass_spec: str | None,
    pks: list[str],
    *,
    upsert: bool,
    show_types: bool,
    dry_run: bool,
    progress: bool | None,
    db: str,
) -> None:
    from ._ingest import Target, detect, records

    text_input = fmt in ("csv", "tsv")
    db_file = file_path(db)
    new_file = db_file is not None and not db_file.exists()
    if dry_run and new_file:
        store = None
    else:
        from ._stores import open_store

        store = open_store(db)
    try:
        exists = store is not None and table_name in store.table_names()
        total: int | None = None  # rows, when a first reading counted them
        if dataclass_spec is not None:
            cls = _given_class(dataclass_spec, table_name)
            detected = False
        elif exists:
            assert store is not None
            from ._stores import resolve_table

            cls = resolve_table(store, table_name)
            _check_key(cls, pks)
            detected = False
        else:
            seen = [0]

            def counted() -> Iterator[tuple[int, dict[str, Any]]]:
                for item in records(path, fmt):
                    seen[0] += 1
                    yield item

            types = detect(counted(), text_input)
            total = seen[0]
            if not types:
                raise EntityworksError(f"{path.name}: no rows, so no columns to make a table of")
            cls = _detected_class(table_name, types, pks)
            detected = True
        from ..model.schema import table_schema

        target = Target.of(cls, table_schema(cls))
        if upsert and not target.schema.key_columns:
            raise EntityworksError(
                f"--upsert replaces rows by their key; table {table_name!r} has none "
                "(give one with --pk when the table is made)"
            )
        if show_types or detected:  # stdout: stderr holds only an error
            click.echo(_types_text(target, detected))
        if dry_run:
            count = sum(1 for _ in _instances(target, path, fmt, text_input))
            click.echo(f"checked {count} rows: nothing written (--dry-run)")
            return
        assert store is not None
        count = _write(
            store,
            target,
            path,
            fmt,
            text_input,
            create=not exists,
            upsert=upsert,
            progress=progress,
            total=total,
        )
    except BaseException:
        if store is not None:
            store.close()
            store = None
        if new_file and db_file is not None:
            _remove_database(db_file)
        raise
    finally:
        if store is not None:
            store.close()
    from .output import escape_text

    verb = "upserted" if upsert else "inserted"
    click.echo(f"{verb} {count} rows into {escape_text(table_name)}")


def _remove_database(path: Path) -> None:
    """A database file this command created, removed after a refusal (and its journals),
    unless another writer made a table in it meanwhile."""
    from ..sql.backends.light import file_table_names
    from ._stores import INTERNAL_PREFIXES, INTERNAL_TABLES

    try:
        names = file_table_names(path, timeout=1)
    except Exception:  # locked by another writer, or unreadable: keep it
        return
    if any(
        n.lower() not in INTERNAL_TABLES and not n.lower().startswith(INTERNAL_PREFIXES)
        for n in names
    ):
        return
    for suffix in ("", "-wal", "-shm", "-journal"):
        try:
            Path(str(path) + suffix).unlink()
        except FileNotFoundError:
            pass


def _instances(target: Target, path: Path, fmt: str, text_input: bool) -> Iterator[tuple[int, Any]]:
    from ._ingest import records

    for number, record in records(path, fmt):
        yield number, target.instance(number, record, text_input)


def _write(
    store: Store,
    target: Target,
    path: Path,
    fmt: str,
    text_input: bool,
    *,
    create: bool,
    upsert: bool,
    progress: bool | None,
    total: int | None,
) -> int:
    """All rows in one transaction, in batches; the table made first when ``create``."""
    from .output import progress_bar

    write = store.upsert_many if upsert else store.insert_many
    count = 0
    made = False
    try:
        if create:  # before the transaction: MariaDB's DDL would commit it
            store.create(target.cls)
            made = True
        with store.transaction(), progress_bar(total, "rows", progress) as bar:
            batch: list[Any] = []
            numbers: list[int] = []
            for number, obj in _instances(target, path, fmt, text_input):
                batch.append(obj)
                numbers.append(number)
                if len(batch) >= BATCH:
                    count += _batch(write, batch, numbers)
                    bar.update(len(batch))
                    batch, numbers = [], []
            if batch:
                count += _batch(write, batch, numbers)
                bar.update(len(batch))
    except BaseException:
        # nothing written: not the new table either, unless another writer's rows are in it
        if made and store.count(target.cls) == 0:
            store.drop(target.cls)
        raise
    return count


def _batch(write: Callable[..., int], batch: list[Any], numbers: list[int]) -> int:
    """One batch written; a refused row renamed by its row in the file."""
    import re

    from ..errors import ValueEncodingError, WriteError
    from ._ingest import InputError

    try:
        return write(batch, batch_size=len(batch))
    except (ValueEncodingError, WriteError) as exc:
        if exc.row is None or not 0 <= exc.row < len(numbers):
            raise
        number = numbers[exc.row]
        table = getattr(exc, "table", None)
        named = rf"(?:{re.escape(table)}: )?" if table else ""
        reason = re.sub(rf"^{named}row \d+(, column '[^']*')?: ", "", str(exc))
        column = f", column {exc.column!r}" if exc.column else ""
        raise InputError(f"row {number}{column}: {reason}", row=number, column=exc.column) from None


def _given_class(spec: str, table_name: str) -> type:
    from ..model.schema import table_name as name_of
    from .options import load_class

    cls = load_class(spec)
    if name_of(cls) != table_name:
        raise click.BadParameter(
            f"{spec} is the class of table {name_of(cls)!r}, not {table_name!r}",
            param_hint="--dataclass",
        )
    return cls


def _check_key(cls: type, pks: Sequence[str]) -> None:
    if not pks:
        return
    from ..model.schema import table_schema

    schema = table_schema(cls)
    key = [c.column_name or c.name for c in schema.columns if c.primary_key]
    if list(pks) != key:
        raise click.UsageError(
            f"table {schema.name!r} exists with the key {', '.join(key) or '(none)'}; "
            f"--pk {' '.join(pks)} names another"
        )


def _detected_class(table_name: str, types: list[tuple[str, type]], pks: Sequence[str]) -> type:
    """A dataclass for a new table: the detected types, every column nullable but the key."""
    import dataclasses

    from ..model.names import unusable_field_name

    names = [n for n, _ in types]
    missing = [p for p in pks if p not in names]
    if missing:
        raise click.UsageError(
            f"--pk {', '.join(missing)}: no such column in the file (columns: {', '.join(names)})"
        )
    specs: list[Any] = []
    for name, python_type in types:
        problem = unusable_field_name(name)
        if problem is not None:
            raise SchemaError(
                f"column {name!r}: {problem}; rename it in the file's header or keys, or "
                "give the types with --dataclass"
            )
        if name in pks:
            specs.append((name, python_type, dataclasses.field(metadata={"primary_key": True})))
        else:
            specs.append((name, python_type | None, dataclasses.field(default=None)))
    cls = dataclasses.make_dataclass("Rows", specs, kw_only=True)  # columns in file order
    cls.__tablename__ = table_name  # type: ignore[attr-defined]
    return cls


def _types_text(target: Target, detected: bool) -> str:
    """The columns and their types, as ``--show-types`` prints them."""
    from .output import escape_text

    schema = target.schema
    how = "detected" if detected else "from the table's class"
    lines = [f"table {escape_text(schema.name)} ({how}):"]
    for c in schema.columns:
        notes = []
        if c.primary_key:
            notes.append("primary key")
        if c.nullable:
            notes.append("null allowed")
        extra = f" ({', '.join(notes)})" if notes else ""
        lines.append(f"  {escape_text(c.column_name or c.name)}: {c.info.name}{extra}")
    return "\n".join(lines)

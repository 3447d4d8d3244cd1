"""The Arrow commands, mirroring :mod:`entityworks.arrow`: ``parquet`` writes a table (child
rows as nested lists) to a Parquet file or standard output; ``import-parquet`` writes a
Parquet file's rows into a table (``Store.insert_parquet``: no object per row).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import click

from ._stores import check_writable_table, complete_table, open_store, resolve_table
from .options import db_option, parse_where, progress_option
from .output import progress_bar

#: The Parquet codecs ``entityworks parquet --compression`` offers.
Compression = Literal["zstd", "snappy", "gzip", "none"]


@click.command()
@click.argument("table_name", metavar="TABLE", shell_complete=complete_table)
@click.argument("out", type=click.Path(dir_okay=False, allow_dash=True))
@click.option(
    "--where",
    "-w",
    "wheres",
    multiple=True,
    metavar="EXPR",
    help="Convert only matching rows (as in 'query').",
)
@click.option(
    "--compression",
    type=click.Choice(["zstd", "snappy", "gzip", "none"]),
    default="zstd",
    show_default=True,
)
@progress_option
@db_option
def parquet(
    table_name: str,
    out: str,
    wheres: Sequence[str],
    compression: Compression,
    progress: bool | None,
    db: str,
) -> None:
    """Convert a table to Parquet (types from the registry; child rows as nested lists).

    OUT must be a regular file (or nothing yet), or '-' for standard output; either way the
    file appears only once complete (a refused conversion writes nothing).

    \b
    Example:
      entityworks parquet maps maps.parquet -w kind=caves --db levels.db
    """
    from .._files import check_output_path, is_stdio, stdout_output
    from ..arrow.write import write_parquet_table
    from ..sql.exchange.children import with_child_tables

    to_stdout = is_stdio(out)
    if not to_stdout:
        check_output_path(out)  # before opening the database
    store = open_store(db, must_exist=True)
    # a table Store.create made with list fields: its child rows come too, as nested lists
    cls = with_child_tables(store, resolve_table(store, table_name))
    where = [parse_where(w, store.schema(cls)) for w in wheres]
    with progress_bar(store.count(cls, where=where), "rows", progress) as bar:
        table = store.to_arrow(cls, where=where, progress=bar.update)
    if to_stdout:
        import pyarrow.parquet as pq

        with stdout_output() as f:  # the file reaches standard output once complete
            pq.write_table(table, f, compression=compression)
    else:
        write_parquet_table(table, out, compression=compression)
    click.echo(
        f"wrote {table.num_rows} rows x {table.num_columns} columns of {table_name} "
        f"to {'stdout' if to_stdout else out}",
        err=to_stdout,
    )


@click.command("import-parquet")
@click.argument("parquet_file", metavar="IN.parquet", type=click.Path(exists=True, dir_okay=False))
@click.argument("table_name", metavar="TABLE", shell_complete=complete_table)
@click.option(
    "--batch-size",
    type=click.IntRange(min=1),
    default=20_000,
    show_default=True,
    help="Rows read from the file and written at a time (what is held in memory).",
)
@db_option
def import_parquet(parquet_file: str, table_name: str, batch_size: int, db: str) -> None:
    """Insert the rows of a Parquet file into an existing table, in one transaction.

    The file's columns are the table's fields as 'entityworks parquet' writes them (the
    key column may be left out for the database to number the rows); they are written
    without a Python object per row (Store.insert_parquet), streamed a batch at a time.
    Each value is stored exactly or the whole file is refused: nothing is written and the
    error names the row and column. A table with child tables is refused (its rows need
    objects: Store.insert_many).

    \b
    Example:
      entityworks import-parquet readings.parquet readings --db copy.db
    """
    check_writable_table(table_name)
    store = open_store(db, must_exist=True)
    from ..sql.exchange.children import with_child_tables

    cls = with_child_tables(store, resolve_table(store, table_name))
    count = store.insert_parquet(cls, parquet_file, batch_size=batch_size)
    click.echo(f"inserted {count} rows into {table_name} from {parquet_file}")

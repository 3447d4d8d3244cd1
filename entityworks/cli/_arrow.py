"""The Arrow command, mirroring :mod:`entityworks.arrow`: ``parquet`` writes a table (child
rows as nested lists) to a Parquet file or standard output.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import click

from ._stores import complete_table, open_store, resolve_table
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

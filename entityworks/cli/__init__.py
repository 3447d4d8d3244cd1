"""The ``entityworks`` command line: a level catalog, sudoku and entropy tools, XML/Parquet export.

Every command is a thin layer over a library function, in the module of its family: catalog
(generate, query, copy, demo), maps (render, place, play), xml (export-xml, import-xml,
codegen), arrow (parquet), schema (schema, ddl, migrate, migrations), puzzles (sudoku,
entropy), browse. :mod:`.group` holds the root group and loads those modules lazily. ``--db``
takes an SQLite path or any SQLAlchemy URL (``ENTITYWORKS_DB`` sets the default). Bad input
ends with one line on stderr and exit status 2, never a traceback (set
``ENTITYWORKS_TRACEBACK=1`` to see one); Ctrl-C ends with ``error: aborted`` and status 1
(:mod:`.errors`). No output shows a password: databases are named through
:func:`entityworks.sql.urls.display_db` and every error text through ``redact``.
"""

from __future__ import annotations

from collections.abc import Sequence

from .errors import error_message
from .group import cli
from .options import parse_params, parse_where
from .output import format_rows


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point (``entityworks_launch.main`` wraps it for early Ctrl-C)."""
    cli.main(args=list(argv) if argv is not None else None, prog_name="entityworks")


__all__ = ["cli", "error_message", "format_rows", "main", "parse_params", "parse_where"]

"""The command families of ``entityworks`` as a plugin: each command's ``module:attribute``.

A new command goes into the module of its family (``entityworks/cli/``), gets one line in
:data:`COMMANDS` and a place in ``entityworks.cli.group.SECTIONS`` (the headings of
``entityworks --help``). The root group imports a command's module when the command is
looked up (:mod:`entityworks.cli.group`).
"""

from __future__ import annotations

from ..hooks import hookimpl

#: Each built-in command's name -> ``module:attribute`` of its click command.
COMMANDS: dict[str, str] = {
    name: f"entityworks.cli.{place}"
    for name, place in {
        "browse": "_browse:browse",
        "codec": "_codec:codec",
        "codegen": "_xml:codegen",
        "copy": "_catalog:copy_command",
        "ddl": "_schema:ddl",
        "demo": "_catalog:demo",
        "entropy": "_puzzles:entropy",
        "export-xml": "_xml:export_xml",
        "generate": "_catalog:generate",
        "import-parquet": "_arrow:import_parquet",
        "import-xml": "_xml:import_xml",
        "insert": "_anytable:insert",
        "migrate": "_schema:migrate",
        "migrations": "_schema:migrations",
        "parquet": "_arrow:parquet",
        "place": "_maps:place",
        "play": "_maps:play",
        "query": "_catalog:query",
        "render": "_maps:render",
        "rows": "_anytable:rows",
        "schema": "_schema:schema",
        "sql": "_anytable:sql",
        "sudoku": "_puzzles:sudoku",
        "tables": "_tables:tables",
        "verify": "_catalog:verify",
    }.items()
}


@hookimpl
def register_commands() -> dict[str, str]:
    """The built-in commands (:data:`COMMANDS`)."""
    return COMMANDS

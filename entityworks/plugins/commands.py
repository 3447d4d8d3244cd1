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
        "browse": "browse:browse",
        "codec": "codec:codec",
        "codegen": "xml:codegen",
        "copy": "catalog:copy_command",
        "ddl": "schema:ddl",
        "demo": "catalog:demo",
        "entropy": "puzzles:entropy",
        "export-xml": "xml:export_xml",
        "generate": "catalog:generate",
        "import-xml": "xml:import_xml",
        "migrate": "schema:migrate",
        "migrations": "schema:migrations",
        "parquet": "arrow:parquet",
        "place": "maps:place",
        "play": "maps:play",
        "query": "catalog:query",
        "render": "maps:render",
        "schema": "schema:schema",
        "sudoku": "puzzles:sudoku",
        "tables": "tables:tables",
    }.items()
}


@hookimpl
def register_commands() -> dict[str, str]:
    """The built-in commands (:data:`COMMANDS`)."""
    return COMMANDS

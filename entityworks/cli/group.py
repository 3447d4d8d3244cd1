"""The root ``entityworks`` group: its help, ``--version``, and where each command lives.

Commands are loaded lazily: the group knows each command's module by name (:data:`COMMANDS`)
and imports it the first time the command is looked up, so ``entityworks query`` imports the
catalog commands' module and no other. ``--help`` lists every command, so it imports every
command module; that stays cheap because a command module imports only click, the standard
library and light modules at its top, and what a command needs (SQLAlchemy, NumPy, pyarrow,
lxml, ...) inside its function::

    @click.command()
    @db_option
    def mycommand(db: str) -> None:
        from ..sql.store import Store            # SQLAlchemy, NumPy: only when the command runs

A new command goes into the module of its family and gets one line in :data:`COMMANDS` and
a place in :data:`SECTIONS` (the headings of ``entityworks --help``: what it works on).
``tests/entityworks/cli/test_cli_startup.py`` fails when start-up pulls in a heavy library.
The command modules never import this one: the group depends on them, not the other way.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, MutableMapping

import click

from .. import __version__
from .errors import Group

#: Each command's name -> ``module:attribute`` of its click command, modules in this package.
COMMANDS: dict[str, str] = {
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
}

#: How ``entityworks --help`` groups the commands, each section in this order. A command in
#: no section (one added at run time) is listed under "Other commands".
SECTIONS: dict[str, tuple[str, ...]] = {
    "Any table": (
        "tables",
        "schema",
        "query",
        "export-xml",
        "import-xml",
        "parquet",
        "ddl",
        "codegen",
        "migrations",
    ),
    "Level catalog": ("demo", "generate", "render", "place", "play", "browse", "copy", "migrate"),
    "Puzzles and bytes": ("sudoku", "entropy", "codec"),
}


class LazyCommands(MutableMapping[str, click.Command]):
    """A group's ``commands`` that imports a command's module on first access.

    Names, membership and ``len`` need no import; reading a command imports its module. A
    command added at run time (``cli.add_command``) is kept as given.
    """

    def __init__(self, places: dict[str, str]) -> None:
        self.places: dict[str, str] = dict(places)
        self.loaded: dict[str, click.Command] = {}

    def __getitem__(self, name: str) -> click.Command:
        if name not in self.loaded:
            module, _, attribute = self.places[name].partition(":")  # KeyError: no command
            command = getattr(importlib.import_module(f"{__package__}.{module}"), attribute)
            if not isinstance(command, click.Command):  # pragma: no cover - a wrong table
                raise TypeError(f"{self.places[name]} is not a click command")
            self.loaded[name] = command
        return self.loaded[name]

    def __setitem__(self, name: str, command: click.Command) -> None:
        self.loaded[name] = command
        self.places.setdefault(name, "")

    def __delitem__(self, name: str) -> None:
        del self.places[name]
        self.loaded.pop(name, None)

    def __contains__(self, name: object) -> bool:
        return name in self.places

    def __iter__(self) -> Iterator[str]:
        return iter(self.places)

    def __len__(self) -> int:
        return len(self.places)


class RootGroup(Group):
    """The root group: its help lists the commands by :data:`SECTIONS`."""

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        names = [
            n
            for n in self.list_commands(ctx)
            if (c := self.get_command(ctx, n)) is not None and not c.hidden
        ]
        placed = {n for members in SECTIONS.values() for n in members}
        sections = [
            (title, [n for n in members if n in names]) for title, members in SECTIONS.items()
        ]
        sections.append(("Other commands", [n for n in names if n not in placed]))
        longest = max((len(n) for n in names), default=0)
        width = formatter.width - 6 - longest
        for title, members in sections:
            if not members:
                continue
            # padded to one width, so that every section's helps start in the same column
            rows = [(n.ljust(longest), self.commands[n].get_short_help_str(width)) for n in members]
            with formatter.section(title):
                formatter.write_dl(rows)


@click.group(
    cls=RootGroup,
    commands=LazyCommands(COMMANDS),
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(__version__, package_name="entityworks")
def cli() -> None:
    """Dataclasses to SQL, XML+XSD and Parquet, with a catalog of generated levels.

    Start with 'entityworks demo'; 'entityworks COMMAND --help' explains each command.
    """

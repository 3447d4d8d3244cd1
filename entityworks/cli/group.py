"""The root ``entityworks`` group: its help, ``--version``, and where each command lives.

Commands come from plugins (:mod:`entityworks.hooks`: the ``register_commands`` hook; the
built-in ones from :mod:`entityworks.plugins.commands`) as ``module:attribute`` names, and are
loaded lazily: the group imports a command's module the first time the command is looked up,
so ``entityworks query`` imports the catalog commands' module and no other, and
``entityworks --version`` asks no plugin at all. ``--help`` lists every command, so it imports
every command module; that stays cheap because a command module imports only click, the
standard library and light modules at its top, and what a command needs (SQLAlchemy, NumPy,
pyarrow, lxml, ...) inside its function::

    @click.command()
    @db_option
    def mycommand(db: str) -> None:
        from ..sql.store import Store            # SQLAlchemy, NumPy: only when the command runs

A new command goes into the module of its family, gets one line in the built-in commands
table (``entityworks.plugins.commands.COMMANDS``, also :data:`COMMANDS` here) and a place in
:data:`SECTIONS` (the headings of ``entityworks --help``: what it works on).
``tests/entityworks/cli/test_cli_startup.py`` fails when start-up pulls in a heavy library.
The command modules never import this one: the group depends on them, not the other way.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping, MutableMapping
from typing import Any

import click

from .. import __version__
from .errors import Group

#: How ``entityworks --help`` groups the commands, each section in this order. A command in
#: no section (a plugin's, or one added at run time) is listed under "Other commands".
SECTIONS: dict[str, tuple[str, ...]] = {
    "Any table": (
        "tables",
        "rows",
        "sql",
        "insert",
        "schema",
        "query",
        "export-xml",
        "import-xml",
        "parquet",
        "import-parquet",
        "ddl",
        "codegen",
        "migrations",
    ),
    "Level catalog": (
        "demo",
        "generate",
        "verify",
        "render",
        "place",
        "play",
        "browse",
        "copy",
        "migrate",
    ),
    "Puzzles and bytes": ("sudoku", "entropy", "codec"),
}


def __getattr__(name: str) -> Any:
    """:data:`COMMANDS`, the built-in commands' table, read from their plugin when asked for
    (so that importing the command line registers no plugin)."""
    if name == "COMMANDS":
        from ..plugins.commands import COMMANDS

        return COMMANDS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class LazyCommands(MutableMapping[str, click.Command]):
    """A group's ``commands`` that imports a command's module on first access.

    ``places`` maps each name to ``module:attribute``; without it, the plugins' commands
    (:func:`entityworks.hooks.commands`), asked for when first needed and again after a
    plugin is registered. Names, membership and ``len`` need no import of a command module;
    reading a command imports its module. A command added at run time (``cli.add_command``)
    is kept as given.
    """

    def __init__(self, places: Mapping[str, str] | None = None) -> None:
        self.given: dict[str, str] | None = None if places is None else dict(places)
        #: Each command read: its place when it was imported, and the command.
        self.loaded: dict[str, tuple[str, click.Command]] = {}
        self.added: dict[str, str] = {}
        self.removed: set[str] = set()

    @property
    def places(self) -> dict[str, str]:
        """Each command's name -> ``module:attribute`` (``""`` for one added at run time)."""
        if self.given is not None:
            table = self.given
        else:
            from .. import hooks

            table = hooks.commands()
        places = {**table, **self.added}
        for name in self.removed:
            places.pop(name, None)
        return places

    def __getitem__(self, name: str) -> click.Command:
        place = self.places[name]  # KeyError: no command
        known = self.loaded.get(name)
        if known is None or (place and known[0] != place):
            module, _, attribute = place.partition(":")
            command = getattr(importlib.import_module(module), attribute)
            if not isinstance(command, click.Command):
                raise TypeError(f"{place} is not a click command")
            known = self.loaded[name] = (place, command)
        return known[1]

    def __setitem__(self, name: str, command: click.Command) -> None:
        self.loaded[name] = ("", command)
        self.removed.discard(name)
        self.added[name] = ""

    def __delitem__(self, name: str) -> None:
        if name not in self.places:
            raise KeyError(name)
        self.removed.add(name)
        self.added.pop(name, None)
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
    commands=LazyCommands(),
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.version_option(__version__, package_name="entityworks")
def cli() -> None:
    """Dataclasses to SQL, XML+XSD and Parquet, with a catalog of generated levels.

    Start with 'entityworks demo'; 'entityworks COMMAND --help' explains each command.
    """

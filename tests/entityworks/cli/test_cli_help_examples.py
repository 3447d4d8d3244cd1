"""Every example in a command's help is printed by ``--help`` exactly as written, on a narrow
terminal too: click re-wraps ordinary paragraphs, so an example that is not in a ``\\b``
paragraph breaks mid-command ("entityworks export-" / "xml") and no longer copies and pastes."""

from __future__ import annotations

import inspect
import re
from collections.abc import Iterator

import click
import pytest
from click.testing import CliRunner

from entityworks.cli.group import cli


def commands() -> Iterator[tuple[list[str], click.Command]]:
    """(argument path, command) for the group and every command below it."""

    def walk(
        command: click.Command, path: list[str], ctx: click.Context
    ) -> Iterator[tuple[list[str], click.Command]]:
        yield path, command
        if isinstance(command, click.Group):
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                assert sub is not None
                yield from walk(sub, [*path, name], click.Context(sub, info_name=name, parent=ctx))

    yield from walk(cli, [], click.Context(cli, info_name="entityworks"))


COMMAND_NAMES = {path[-1] for path, _ in commands() if path}


def examples(text: str) -> list[str]:
    """The example command lines of a help text, as written: a line that (after an optional
    "Example...:" label) runs ``entityworks SUBCOMMAND``, or pipes into it."""
    found = []
    for line in inspect.cleandoc(text).splitlines():
        line = re.sub(r"^Examples?\b[^:]*:\s*", "", line.strip())
        words = line.split()
        if (len(words) > 1 and words[0] == "entityworks" and words[1] in COMMAND_NAMES) or (
            "| entityworks " in line
        ):
            found.append(line)
    return found


def source_text(command: click.Command) -> str:
    return "\n\n".join(t for t in (command.help, command.epilog) if t)


def test_the_commands_have_examples() -> None:
    """The check below has something to check (the examples are recognised)."""
    total = sum(len(examples(source_text(command))) for _, command in commands())
    assert total >= 20
    assert examples("Example: entityworks query maps --count\nSee 'entityworks demo'.") == [
        "entityworks query maps --count"
    ]


@pytest.mark.parametrize("columns", [60, 80])
def test_every_help_example_is_printed_verbatim(columns: int) -> None:
    runner = CliRunner()
    for path, command in commands():
        wanted = examples(source_text(command))
        result = runner.invoke(
            cli, [*path, "--help"], env={"COLUMNS": str(columns)}, terminal_width=columns
        )
        assert result.exit_code == 0, result.output
        shown = [line.strip() for line in result.output.splitlines()]
        missing = [example for example in wanted if example not in shown]
        assert not missing, f"entityworks {' '.join(path)} --help re-wraps {missing}"
        assert "\b" not in result.output

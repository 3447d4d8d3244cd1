"""The declared extension points (``entityworks.hooks``): a plugin object registered on the
manager adds a type, a map kind and a command; an installed plugin (an ``entityworks`` entry
point) does the same in a fresh process, the default registry included; importing a module
registers nothing."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

import entityworks.registry as face
from entityworks import hooks
from entityworks.catalog.kinds import KINDS, MapKind, map_kind
from entityworks.cli import cli
from entityworks.registry import TypeInfo, TypeRegistry
from entityworks.types.default import default_registry, plugin_registry

ROOT = Path(__file__).resolve().parents[2]


class Cents(int):
    """A type of the test plugin's own."""


def cents_info() -> TypeInfo:
    base = face.lookup(int)
    return TypeInfo("Cents", Cents, base.sql, base.arrow, base.xsd, str, Cents)


@click.command()
def hello() -> None:
    """Say hello (a plugin's command)."""
    click.echo("hello from a plugin")


class TestPlugin:
    @hooks.hookimpl
    def register_types(self, registry: TypeRegistry) -> None:
        registry.register(cents_info())

    @hooks.hookimpl
    def register_map_kinds(self) -> list[MapKind]:
        return [
            MapKind(
                "tiny-cellular",
                "generators.maps.cellular",
                (("width", 12), ("height", 8)),
                "small cellular caves [12x8]",
            )
        ]

    @hooks.hookimpl
    def register_commands(self) -> dict[str, str]:
        return {"hello": f"{__name__}:hello"}


@pytest.fixture
def plugin() -> Iterator[TestPlugin]:
    manager = hooks.plugin_manager()
    plugin = TestPlugin()
    manager.register(plugin, "test-plugin")
    try:
        yield plugin
    finally:
        manager.unregister(name="test-plugin")


def test_the_built_in_plugins_fill_the_tables() -> None:
    manager = hooks.plugin_manager()
    assert all(manager.get_plugin(n) is not None for n in hooks.BUILTIN_PLUGINS)
    assert hooks.BUILTIN_PLUGINS[: len(hooks.BUILTIN_FORMATS)] == hooks.BUILTIN_FORMATS
    assert list(KINDS) == ["caves", "dungeon", "islands", "labyrinth", "cellular"]
    assert {"query", "generate", "tables"} <= set(hooks.commands())
    assert hooks.commands()["query"] == "entityworks.cli._catalog:query"
    from entityworks.catalog.packing import PackedGrid, PointPath

    assert face.lookup(PackedGrid).name == "PackedGrid"  # the catalog plugin's
    assert plugin_registry().lookup(PointPath).name == "PointPath"
    assert default_registry().lookup(PointPath).name == "list[list[int]]"  # the core alone


def test_a_plugin_adds_a_type_to_new_registries(plugin: TestPlugin) -> None:
    assert plugin_registry().lookup(Cents).name == "Cents"
    assert default_registry().lookup(Cents).name == "int"  # the core: by the MRO
    assert face.lookup(Cents).name == "int"  # the default registry was filled before


def test_a_plugin_adds_a_map_kind(plugin: TestPlugin) -> None:
    assert "tiny-cellular" in KINDS and list(KINDS)[:5] == [
        "caves",
        "dungeon",
        "islands",
        "labyrinth",
        "cellular",
    ]
    from entityworks.catalog import build_map

    record = build_map("tiny-cellular", 5, {})
    assert (record.kind, record.width, record.height) == ("tiny-cellular", 12, 8)
    assert map_kind("tiny-cellular").parameters() == [
        p for p in map_kind("cellular").parameters() if p not in ("width", "height")
    ]


def test_a_plugin_adds_a_command(plugin: TestPlugin) -> None:
    result = CliRunner().invoke(cli, ["hello"])
    assert (result.exit_code, result.output) == (0, "hello from a plugin\n")
    listed = CliRunner().invoke(cli, ["--help"]).output
    other = listed[listed.index("Other commands:") :]
    assert "hello" in other and "Say hello" in other


def test_an_unregistered_plugin_leaves_the_tables() -> None:
    manager = hooks.plugin_manager()
    manager.register(TestPlugin(), "test-plugin")
    assert "hello" in cli.commands and "tiny-cellular" in KINDS
    manager.unregister(name="test-plugin")
    assert "hello" not in cli.commands and "tiny-cellular" not in KINDS
    with pytest.raises(ValueError, match="tiny-cellular"):
        map_kind("tiny-cellular")
    assert CliRunner().invoke(cli, ["hello"]).exit_code == 2


class Clash:
    @hooks.hookimpl
    def register_commands(self) -> dict[str, str]:
        return {"query": f"{__name__}:hello"}

    @hooks.hookimpl
    def register_map_kinds(self) -> list[MapKind]:
        return [MapKind("caves", "generators.maps.cellular")]


def test_a_name_two_plugins_give_is_refused() -> None:
    manager = hooks.plugin_manager()
    manager.register(Clash(), "clash")
    try:
        with pytest.raises(ValueError, match="'query'"):
            hooks.commands()
        with pytest.raises(ValueError, match="'caves'"):
            map_kind("caves")
    finally:
        manager.unregister(name="clash")
    assert map_kind("caves").module == "generators.maps.caves"


class NotAKind:
    @hooks.hookimpl
    def register_map_kinds(self) -> list[Any]:
        return [_Named("odd")]


@dataclass
class _Named:
    name: str


def test_a_map_kind_must_be_a_map_kind() -> None:
    manager = hooks.plugin_manager()
    manager.register(NotAKind(), "not-a-kind")
    try:
        with pytest.raises(TypeError, match="'odd'"):
            map_kind("caves")
    finally:
        manager.unregister(name="not-a-kind")


def test_importing_the_command_line_or_the_catalog_registers_nothing() -> None:
    """No plugin is asked for by ``import entityworks.cli``, ``--version`` or importing the
    catalog's column types, and packing no longer reaches for the default registry."""
    code = (
        "import sys\nimport entityworks.cli, entityworks.catalog.packing\n"
        "from click.testing import CliRunner\n"
        "assert CliRunner().invoke(entityworks.cli.cli, ['--version']).exit_code == 0\n"
        "print(sorted(m for m in sys.modules if m.startswith(('pluggy', 'entityworks.plugins'))"
        " or m in ('entityworks.hooks', 'entityworks.types.default', 'entityworks.registry')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


PLUGIN = '''
"""An installed plugin, as docs/how-to/plugins.md shows one."""
import click

from entityworks.catalog import MapKind
from entityworks.hooks import hookimpl
from entityworks.registry import TypeInfo, lookup


class Cents(int):
    pass


@hookimpl
def register_types(registry):
    base = lookup(int)
    registry.register(TypeInfo("Cents", Cents, base.sql, base.arrow, base.xsd, str, Cents))


@hookimpl
def register_map_kinds():
    return [MapKind("tiny", "generators.maps.cellular", (("width", 12), ("height", 8)), "tiny")]


@hookimpl
def register_commands():
    return {"hello": "ewplug:hello"}


@click.command()
def hello():
    """Say hello."""
    click.echo("hello")
'''


@pytest.fixture
def installed(tmp_path: Path) -> dict[str, str]:
    """A distribution ``ewplug`` on the path, with an ``entityworks`` entry point."""
    (tmp_path / "ewplug.py").write_text(PLUGIN)
    info = tmp_path / "ewplug-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: ewplug\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[entityworks]\newplug = ewplug\n")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}


@pytest.mark.parametrize("first", ["registry", "command line"])
def test_an_installed_plugin_reaches_every_table(installed: dict[str, str], first: str) -> None:
    """Whichever table is asked for first: the plugin's module imports
    ``entityworks.registry`` while the plugins load, from the registry's own import or from
    the command line's, and its type reaches the default registry either way."""
    start = (
        "import entityworks.registry as r\n"
        if first == "registry"
        else "from entityworks.cli import cli\nfrom click.testing import CliRunner\n"
        "out = CliRunner().invoke(cli, ['hello']).output\nassert out == 'hello\\n', out\n"
    )
    code = start + textwrap.dedent(
        """
        import entityworks.registry as r
        from entityworks.catalog import KINDS, build_map
        from entityworks.cli import cli
        from click.testing import CliRunner
        import ewplug
        assert r.lookup(ewplug.Cents).name == "Cents"
        assert r.registry.lookup(ewplug.Cents).from_text("12") == 12
        assert "tiny" in KINDS and build_map("tiny", 1, {}).width == 12
        help = CliRunner().invoke(cli, ["generate", "--help"]).output
        assert "tiny" in help, help
        assert CliRunner().invoke(cli, ["hello"]).output == "hello\\n"
        print("ok")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=installed,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_register_is_an_alias_of_register_type() -> None:
    assert face.register is face.register_type
    assert "register" in face.__all__ and "register_type" in face.__all__

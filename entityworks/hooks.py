"""The declared extension points: what a plugin adds to entityworks, through pluggy.

Four open tables are built from hooks, as Datasette and sqlite-utils build theirs: what the
registry's types become in SQL, Arrow and XML (:func:`register_codecs`: each format's
package says it for the built-in types), the type registry's entries
(:func:`register_types`), the catalog's map kinds
(:func:`register_map_kinds`) and the command families of ``entityworks``
(:func:`register_commands`). entityworks' own entries come from its built-in plugin modules
(:data:`BUILTIN_PLUGINS`); an installed package adds its own through the ``entityworks``
entry-point group, naming a module (or object) that implements any of the hooks with
:data:`hookimpl`::

    [project.entry-points.entityworks]
    mything = "mything.plugin"

Nothing registers on import: each table is built by calling its hook, and the plugin manager
(:func:`plugin_manager`) is made, installed plugins loaded, when a hook is first called; the
command line's start (``entityworks --version``, ``import entityworks.cli``) calls none.
``docs/how-to/plugins.md`` walks through a plugin.

This module imports no other part of entityworks, not even for its annotations (the built-in
plugins are registered by name, a registry is typed ``Any``), so that every layer may call it.
"""

from __future__ import annotations

import importlib
import sys
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

import pluggy

#: The project name of the markers and the entry-point group installed plugins are found in.
PROJECT = "entityworks"

#: Marks the hook specifications below.
hookspec: pluggy.HookspecMarker = pluggy.HookspecMarker(PROJECT)
#: Marks a plugin's implementation of a hook: ``@hookimpl`` above a function named as the hook.
hookimpl: pluggy.HookimplMarker = pluggy.HookimplMarker(PROJECT)

#: The formats' built-in plugins: what the built-in types become in SQL, Arrow and XML
#: (their ``register_codecs``). Part of every registry the hooks fill, the core's included.
BUILTIN_FORMATS: tuple[str, ...] = (
    "entityworks.sql.codecs",
    "entityworks.arrow.codecs",
    "entityworks.xml.codecs",
)

#: The built-in plugins, registered (under these names) before any installed one: the
#: formats' codecs (:data:`BUILTIN_FORMATS`), the built-in types (scalars, JSON containers,
#: NumPy arrays, Enums, nested dataclasses), the catalog's column types and map kinds, the
#: command families of ``entityworks``.
BUILTIN_PLUGINS: tuple[str, ...] = (
    *BUILTIN_FORMATS,
    "entityworks.plugins.types",
    "entityworks.plugins.catalog",
    "entityworks.plugins.commands",
)


# -- the hooks ----------------------------------------------------------------------------
@hookspec
def register_codecs(registry: Any) -> None:
    """Say what types become in a format: ``registry.register_codec_maker(SqlCodec, family,
    maker)`` (or ``ArrowCodec``, ``XmlCodec``), where ``maker(**params)`` gives the format's
    record for a type of the codec ``family`` (see
    :meth:`~entityworks.registry.TypeRegistry.codecs`: ``"int"``, ``"json"``, ``"enum"``...).

    Called once per registry, before :func:`register_types` (whose entries are made of
    these records). The formats' built-in makers come first, so a plugin's maker for a
    built-in family replaces it (JSON stored another way, say)."""


@hookspec
def register_types(registry: Any) -> None:
    """Add entries to ``registry``, a new :class:`~entityworks.registry.TypeRegistry` (the
    default registry is one: it is filled by this hook when ``entityworks.registry`` is
    first imported), with ``registry.register(TypeInfo(...))``,
    ``registry.register_factory(predicate, factory)`` and, to change what an entry becomes
    in one format only, ``registry.register_codec(key, SqlCodec(...))`` (or an
    ``ArrowCodec``, an ``XmlCodec``).

    Called once per registry. The built-in types come first, so an entry of a plugin for a
    built-in type replaces it, and a plugin's factories are tried before the built-in ones.
    """


@hookspec
def register_map_kinds() -> Iterable[Any]:
    """The :class:`~entityworks.catalog.MapKind` objects this plugin adds to the catalog
    (``entityworks generate KIND``, :func:`entityworks.catalog.generate_maps`): a kind names
    a module whose ``generate(seed=..., **params)`` returns a map result. A kind's name may be
    given by one plugin only."""
    return ()


@hookspec
def register_commands() -> Mapping[str, str]:
    """Command name -> ``"module:attribute"`` of the ``click`` command this plugin adds to
    ``entityworks``. The module is imported only when the command is looked up (run, or
    listed by ``entityworks --help``), so it costs the start of other commands nothing. A
    name may be given by one plugin only; commands of no section of the built-in help are
    listed under "Other commands"."""
    return {}


# -- the manager --------------------------------------------------------------------------
_lock = threading.RLock()
_manager: pluggy.PluginManager | None = None
_loading = False
#: Registries filled while the installed plugins were loading (a plugin's module that imports
#: ``entityworks.registry`` builds the default one then), each with the plugins it had.
_filled_early: list[tuple[Any, set[object]]] = []


def plugin_manager() -> pluggy.PluginManager:
    """The plugin manager of this process, made on first use: the hooks above, the built-in
    plugins (:data:`BUILTIN_PLUGINS`), then the installed ones (entry-point group
    ``entityworks``). A plugin object registered on it later (``plugin_manager().register``)
    takes part in every table built after: the map kinds and commands, and registries made
    after (the default registry is filled once, when first imported)."""
    global _manager, _loading
    if _manager is not None:
        return _manager
    with _lock:
        if _manager is None:
            manager = pluggy.PluginManager(PROJECT)
            manager.add_hookspecs(sys.modules[__name__])
            for name in BUILTIN_PLUGINS:
                manager.register(importlib.import_module(name), name)
            # published before the installed plugins load: their modules may import an
            # entityworks module that calls a hook (``entityworks.registry`` fills the
            # default registry); such a registry gets their types once they are loaded
            _manager, _loading = manager, True
            try:
                manager.load_setuptools_entrypoints(PROJECT)
            finally:
                _loading = False
                for registry, had in _filled_early:
                    for hook in ("register_codecs", "register_types"):
                        late = manager.subset_hook_caller(hook, remove_plugins=had)
                        late(registry=registry)
                _filled_early.clear()
    return _manager


_Registry = TypeVar("_Registry")


def add_types(registry: _Registry, only: Iterable[str] | None = None) -> _Registry:
    """Fill ``registry`` (a :class:`~entityworks.registry.TypeRegistry`) through
    :func:`register_codecs`, then :func:`register_types`: with every plugin's codecs and
    types, or with those of the plugins named in ``only`` and of the formats
    (:data:`BUILTIN_FORMATS`). Returns ``registry``."""
    manager = plugin_manager()
    with _lock:
        if only is None:
            manager.hook.register_codecs(registry=registry)
            manager.hook.register_types(registry=registry)
            if _loading:
                _filled_early.append((registry, set(manager.get_plugins())))
        else:
            keep = {manager.get_plugin(name) for name in (*BUILTIN_FORMATS, *only)}
            others = set(manager.get_plugins()) - keep
            for hook in ("register_codecs", "register_types"):
                manager.subset_hook_caller(hook, remove_plugins=others)(registry=registry)
    return registry


_Table = TypeVar("_Table")
_tables: dict[str, tuple[list[tuple[str, Any]], Any]] = {}


def _table(hook: str, build: Callable[[list[Any]], _Table]) -> _Table:
    """``build(answers)`` of the plugins' answers to ``hook`` in the order the plugins were
    registered, made again only when the registered plugins changed."""
    manager = plugin_manager()
    plugins = manager.list_name_plugin()
    with _lock:
        cached = _tables.get(hook)
        if cached is not None and cached[0] == plugins:
            return cached[1]  # type: ignore[no-any-return]
        # a hook's answers come last-registered first: the built-in plugins' last
        table = build(list(reversed(getattr(manager.hook, hook)())))
        _tables[hook] = (plugins, table)
    return table


def _merged(what: str, answers: Iterable[Iterable[tuple[str, _Table]]]) -> dict[str, _Table]:
    merged: dict[str, _Table] = {}
    for answer in answers:
        for name, value in answer:
            if name in merged:
                raise ValueError(f"two plugins add the {what} {name!r}")
            merged[name] = value
    return merged


def map_kinds() -> dict[str, Any]:
    """Name -> :class:`~entityworks.catalog.MapKind` of every plugin
    (:func:`register_map_kinds`), the built-in kinds first."""
    return _table(
        "register_map_kinds",
        lambda answers: _merged("map kind", ([(k.name, k) for k in a] for a in answers)),
    )


def commands() -> dict[str, str]:
    """Command name -> ``"module:attribute"`` of every plugin (:func:`register_commands`),
    the built-in commands first."""
    return _table(
        "register_commands",
        lambda answers: _merged("command", (dict(a).items() for a in answers)),
    )


__all__ = [
    "BUILTIN_FORMATS",
    "BUILTIN_PLUGINS",
    "PROJECT",
    "add_types",
    "commands",
    "hookimpl",
    "hookspec",
    "map_kinds",
    "plugin_manager",
    "register_codecs",
    "register_commands",
    "register_map_kinds",
    "register_types",
]

"""Issue 30: internal modules get names that say so (``_x.py``), as attrs names its own.

Run from the repository root: ``python tools/internal_names.py`` (``--dry-run`` changes
nothing and prints what it would do). For each module of :data:`RENAMES` it runs
``git mv`` and rewrites every reference in the repository's files (tracked, and new ones
not ignored): absolute and relative imports, dotted paths in strings, comments and
docstrings (``mock.patch`` targets, ``module:attribute`` strings, ``python -m``, ``-c``
code), the relative module strings of the lazy tables (:data:`RELATIVE_TABLES`), Sphinx
roles (``:mod:`.x```), ``pyproject.toml`` (import-linter contracts and layers, mypy
settings), the documentation and the benchmarks.
Python files are rewritten token by token (a name is rewritten only where it is the
module: ``rowcodecs`` or an attribute ``x.rowcodec`` stay), other files through exact dotted
and slash paths. Then ruff sorts the imports of the Python files it changed and formats
them. A second run finds nothing to do.

Which modules stay public (:data:`PUBLIC`): every package's ``__init__``, ``__main__``, the
modules named by the documentation or by ``pyproject.toml``, the modules whose path is
kept in data (a user's Alembic revision imports ``entityworks.sql.sqltypes``; the catalog
stores each map's generator class path; the plugin names), and every module imported
from outside its package: a module is private to its package, so a ``_x`` module is
imported only by its package's ``__init__``, its siblings and their subpackages.
:func:`check` prints a module the tree no longer lets go private (another change imported
it from elsewhere meanwhile) and a module that is in neither list.

Bare module names in prose (the trees of ``docs/explanation/architecture.md`` and
``docs/reference/generators-guide.md``) are :data:`PROSE`'s exact edits. What it cannot do
is printed at the end: such prose that changed meanwhile, a module path given as
``entityworks.migrate.apply`` where that is also a function of the package, and a new
module in neither list.
"""

from __future__ import annotations

import argparse
import ast
import io
import re
import shutil
import subprocess
import sys
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

#: Old file -> new file. Subpackage directories keep their names.
RENAMES: dict[str, str] = {
    "entityworks/files.py": "entityworks/_files.py",
    # arrow: the package's __init__ is the face; write is imported by cli and sql.exchange
    # catalog: its __init__ is the face (cluster, demo, kinds, packing are imported elsewhere)
    "entityworks/catalog/build.py": "entityworks/catalog/_build.py",
    "entityworks/catalog/copy.py": "entityworks/catalog/_copy.py",
    "entityworks/catalog/entropy.py": "entityworks/catalog/_entropy.py",
    "entityworks/catalog/generate.py": "entityworks/catalog/_generate.py",
    "entityworks/catalog/models.py": "entityworks/catalog/_models.py",
    "entityworks/catalog/placements.py": "entityworks/catalog/_placements.py",
    "entityworks/catalog/puzzles.py": "entityworks/catalog/_puzzles.py",
    "entityworks/catalog/queries.py": "entityworks/catalog/_queries.py",
    "entityworks/catalog/upgrade.py": "entityworks/catalog/_upgrade.py",
    # cli: `from entityworks.cli import cli` is the face; commands are found through the
    # commands plugin's module:attribute table
    "entityworks/cli/arrow.py": "entityworks/cli/_arrow.py",
    "entityworks/cli/browse.py": "entityworks/cli/_browse.py",
    "entityworks/cli/catalog.py": "entityworks/cli/_catalog.py",
    "entityworks/cli/codec.py": "entityworks/cli/_codec.py",
    "entityworks/cli/controls.py": "entityworks/cli/_controls.py",
    "entityworks/cli/jsonout.py": "entityworks/cli/_jsonout.py",
    "entityworks/cli/maps.py": "entityworks/cli/_maps.py",
    "entityworks/cli/play.py": "entityworks/cli/_play.py",
    "entityworks/cli/puzzles.py": "entityworks/cli/_puzzles.py",
    "entityworks/cli/schema.py": "entityworks/cli/_schema.py",
    "entityworks/cli/stores.py": "entityworks/cli/_stores.py",
    "entityworks/cli/tables.py": "entityworks/cli/_tables.py",
    "entityworks/cli/xml.py": "entityworks/cli/_xml.py",
    "entityworks/cli/xmlpaths.py": "entityworks/cli/_xmlpaths.py",
    # migrate: its __init__ is the face (scaffold, versions, dialects are imported elsewhere)
    # sql: the Store's stages
    "entityworks/sql/bound.py": "entityworks/sql/_bound.py",
    "entityworks/sql/bulk.py": "entityworks/sql/_bulk.py",
    "entityworks/sql/database.py": "entityworks/sql/_database.py",
    "entityworks/sql/ddl.py": "entityworks/sql/_ddl.py",
    "entityworks/sql/existing.py": "entityworks/sql/_existing.py",
    "entityworks/sql/like.py": "entityworks/sql/_like.py",
    "entityworks/sql/locate.py": "entityworks/sql/_locate.py",
    "entityworks/sql/log.py": "entityworks/sql/_log.py",
    "entityworks/sql/pipeline.py": "entityworks/sql/_pipeline.py",
    "entityworks/sql/point.py": "entityworks/sql/_point.py",
    "entityworks/sql/read.py": "entityworks/sql/_read.py",
    "entityworks/sql/reflect.py": "entityworks/sql/_reflect.py",
    "entityworks/sql/rowcodec.py": "entityworks/sql/_rowcodec.py",
    "entityworks/sql/write.py": "entityworks/sql/_write.py",
    "entityworks/sql/exchange/committed_ddl.py": "entityworks/sql/exchange/_committed_ddl.py",
    "entityworks/sql/exchange/facade.py": "entityworks/sql/exchange/_facade.py",
    "entityworks/sql/exchange/internal.py": "entityworks/sql/exchange/_internal.py",
    "entityworks/sql/exchange/new_file.py": "entityworks/sql/exchange/_new_file.py",
    "entityworks/sql/exchange/progress.py": "entityworks/sql/exchange/_progress.py",
    "entityworks/sql/exchange/rows.py": "entityworks/sql/exchange/_rows.py",
    "entityworks/web/pictures.py": "entityworks/web/_pictures.py",
    # generators: the argument checks and seeds every room shares, the random-visit automaton
    # of caves and islands, the field of view's engine, and the sudoku modules whose API is
    # the package's (generators.sudoku re-exports it)
    "generators/checks.py": "generators/_checks.py",
    "generators/seeds.py": "generators/_seeds.py",
    "generators/maps/visits.py": "generators/maps/_visits.py",
    "generators/view/shadowcast.py": "generators/view/_shadowcast.py",
}

#: The modules that stay public (besides every package ``__init__``, ``__main__`` and what is
#: already private), each with the reason. Nothing reads the reasons; they are the record.
PUBLIC: dict[str, str] = {
    "entityworks/arrow/columns.py": "re-exported by its package's __init__",
    "entityworks/arrow/read.py": "re-exported by its package's __init__",
    "entityworks/cli/errors.py": "re-exported by its package's __init__",
    "entityworks/cli/group.py": "re-exported by its package's __init__",
    "entityworks/cli/options.py": "re-exported by its package's __init__",
    "entityworks/cli/output.py": "re-exported by its package's __init__",
    "entityworks/migrate/apply.py": "re-exported by its package's __init__",
    "entityworks/migrate/connection.py": "re-exported by its package's __init__",
    "entityworks/migrate/diff.py": "re-exported by its package's __init__",
    "entityworks/migrate/hooks.py": "re-exported by its package's __init__",
    "entityworks/migrate/metadata.py": "re-exported by its package's __init__",
    "entityworks/migrate/revisions.py": "re-exported by its package's __init__",
    "generators/sudoku/generation.py": "re-exported by its package's __init__",
    "generators/sudoku/puzzles.py": "re-exported by its package's __init__",
    "generators/sudoku/solver.py": "re-exported by its package's __init__",
    "generators/view/field.py": "re-exported by its package's __init__",
    "entityworks/errors.py": "the exceptions users catch",
    "entityworks/registry.py": "the registry's face (docs; `from entityworks import registry`)",
    "entityworks/hooks.py": "the plugin hooks (docs/how-to/plugins.md, ::: entityworks.hooks)",
    "entityworks/arrow/write.py": "imported by cli and sql.exchange",
    "entityworks/catalog/cluster.py": "docs (solve_sudokus_on); imported by cli",
    "entityworks/catalog/demo.py": "imported by cli",
    "entityworks/catalog/kinds.py": "imported by cli and the catalog plugin",
    "entityworks/catalog/packing.py": "docs (PackedGrid); the catalog plugin's string; revisions",
    "entityworks/compat/alembic.py": "compat/<library>.py: the documented place of shims",
    "entityworks/compat/sqlalchemy.py": "compat/<library>.py; imported by sql.backends",
    "entityworks/migrate/dialects.py": "imported by the catalog's revisions and env.py",
    "entityworks/migrate/scaffold.py": "imported by cli",
    "entityworks/migrate/versions.py": "imported by cli",
    "entityworks/model/defaults.py": "docs (how-to/alembic.md); imported by sql",
    "entityworks/model/fields.py": "imported by sql and xml",
    "entityworks/model/names.py": "imported by sql and xml",
    "entityworks/model/schema.py": "docs (instance_builder); revisions; entityworks' names",
    "entityworks/plugins/catalog.py": "a plugin name (hooks.DEFAULT_PLUGINS)",
    "entityworks/plugins/commands.py": "a plugin name; imported by cli",
    "entityworks/plugins/types.py": "a plugin name",
    "entityworks/sql/codecs.py": "a plugin name (hooks.BUILTIN_FORMATS; docs/how-to/plugins.md)",
    "entityworks/arrow/codecs.py": "a plugin name (hooks.BUILTIN_FORMATS; docs/how-to/plugins.md)",
    "entityworks/xml/codecs.py": "a plugin name (hooks.BUILTIN_FORMATS; docs/how-to/plugins.md)",
    "entityworks/sql/ddllock.py": "imported by migrate",
    "entityworks/sql/defaults.py": "imported by migrate",
    "entityworks/sql/encoded.py": "docs (encode_rows); imported by catalog",
    "entityworks/sql/engine.py": "imported by migrate",
    "entityworks/sql/filters.py": "entityworks' col; imported by catalog and cli",
    "entityworks/sql/logical.py": "imported by catalog",
    "entityworks/sql/scripts.py": "entityworks' names; imported by cli",
    "entityworks/sql/sqltypes.py": "named in users' Alembic revisions (render_item); docs",
    "entityworks/sql/store.py": "the Store; imported by catalog, cli, migrate, web",
    "entityworks/sql/tables.py": "imported by catalog, migrate, a revision",
    "entityworks/sql/urls.py": "docs (display_db); imported by catalog and cli",
    "entityworks/sql/backends/base.py": "CONTRIBUTING: one module per database",
    "entityworks/sql/backends/light.py": "CONTRIBUTING: one module per database",
    "entityworks/sql/backends/mariadb.py": "CONTRIBUTING: one module per database",
    "entityworks/sql/backends/mssql.py": "CONTRIBUTING: one module per database",
    "entityworks/sql/backends/postgresql.py": "CONTRIBUTING: one module per database",
    "entityworks/sql/backends/sqlite.py": "CONTRIBUTING: one module per database",
    "entityworks/sql/exchange/arrow.py": "imported by sql.store",
    "entityworks/sql/exchange/children.py": "imported by cli",
    "entityworks/sql/exchange/dataset.py": "imported by sql.store",
    "entityworks/sql/exchange/diffgram.py": "imported by sql.store",
    "entityworks/sql/exchange/xml.py": "imported by sql.store and cli",
    "entityworks/types/arrays.py": "imported by the registry face, catalog, plugins",
    "entityworks/types/columns.py": "imported by arrow and sql",
    "entityworks/types/construct.py": "imported by arrow, model and sql",
    "entityworks/types/default.py": "imported by the registry face",
    "entityworks/types/encoding.py": "imported by the registry face and sql",
    "entityworks/types/entries.py": "imported by plugins",
    "entityworks/types/json.py": "imported by the registry face, catalog, plugins",
    "entityworks/types/registry.py": "imported by the registry face, catalog, model, sql",
    "entityworks/types/scalars.py": "imported by the registry face and catalog",
    "entityworks/types/storage.py": "imported by catalog and sql",
    "entityworks/types/codecs.py": "imported by the registry face and catalog (new in 0.4 work)",
    "entityworks/types/values.py": "imported by sql",
    "entityworks/xml/codegen.py": "imported by cli",
    "entityworks/xml/dataset.py": "docs (read_dataset, dataset_of, write_dataset)",
    "entityworks/xml/diffgram.py": "imported by cli and sql.exchange",
    "entityworks/xml/parser.py": "imported by cli",
    "entityworks/xml/reader.py": "imported by sql.exchange",
    "entityworks/xml/table.py": "entityworks' read_xml/write_xml; imported by sql.exchange",
    "entityworks/xml/writer.py": "imported by sql.exchange",
    "entityworks/xml/xsd.py": "entityworks' read_xsd/write_xsd; imported by cli, sql.exchange",
    "entityworks/xml/xsdwrite.py": "docs (its limits); imported by cli",
    "generators/warmup.py": "python -m generators.warmup",
    "generators/bytes/codec.py": "docs",
    "generators/bytes/entropy.py": "docs",
    "generators/maps/caves.py": "docs; a map kind; stored as the maps' generator",
    "generators/maps/cellular.py": "docs; a map kind; stored as the maps' generator",
    "generators/maps/dungeon.py": "docs; a map kind; stored as the maps' generator",
    "generators/maps/islands.py": "docs; a map kind; stored as the maps' generator",
    "generators/maps/placement.py": "docs",
    "generators/maps/regions.py": "docs",
    "generators/maps/render.py": "docs",
    "generators/sudoku/euler.py": "docs",
    "generators/view/explore.py": "docs",
    "generators/view/fov.py": "docs",
    "generators/view/viewport.py": "docs",
}

#: Module-level tables of module names relative to a package, as ``(file, name, side, base)``:
#: the keys or the values (``side``) of the dicts inside the value assigned to ``name`` name
#: modules as ``importlib.import_module(s, package)`` reads them (``base`` None: ``.x``
#: relative to the file's package) or as ``base + s``; a ``:attribute`` tail is kept.
RELATIVE_TABLES: tuple[tuple[str, str, str, str | None], ...] = (
    ("entityworks/__init__.py", "_LAZY", "keys", "entityworks."),
    ("entityworks/catalog/__init__.py", "_HOMES", "keys", None),
    ("entityworks/plugins/commands.py", "COMMANDS", "values", "entityworks.cli."),
)

ROOTS = ("entityworks", "generators")
#: Tracked files not rewritten: history names the modules of its day, and this script.
SKIP = {"CHANGELOG.md", "tools/internal_names.py"}
TEXT_SUFFIXES = {".md", ".toml", ".yml", ".yaml", ".cfg", ".ini", ".txt", ".mako", ".sh", ""}
#: Text that names modules by their bare names (the trees of the docs, a test's set of module
#: names), as ``(file, old, new)``: replaced where ``old`` is found as written (after the
#: rewriting above), else reported for a person to do.
PROSE: tuple[tuple[str, str, str], ...] = (
    (
        "tests/entityworks/cli/test_cli_startup.py",
        """\
    assert loaded == {"catalog", "controls", "errors", "group", "options", "output", "stores"}, (
        loaded
    )
""",
        """\
    expected = {"_catalog", "_controls", "_errors", "_group", "_options", "_output", "_stores"}
    assert loaded == expected, loaded
""",
    ),
    (
        "CONTRIBUTING.md",
        """\
command family is one module in `cli/` and one line in `entityworks/plugins/commands.py`.
""",  # noqa: E501
        """\
command family is one module in `cli/` and one line in `entityworks/plugins/commands.py`.
A module only its own package imports is named `_x.py` (`sql/_pipeline.py`); a module
another package imports keeps a plain name.
""",  # noqa: E501
    ),
    (
        "docs/explanation/architecture.md",
        """\
## The tree

""",  # noqa: E501
        """\
## The tree

A module named `_x.py` belongs to its package: only the package's `__init__`, its
siblings and their subpackages import it, so what a user or another package may import shows
in the file name. The others are a package's face, or what other packages of the tree use.

""",  # noqa: E501
    ),
    (
        "docs/explanation/architecture.md",
        """\
  __init__.py  the public API, imported lazily      errors.py  files.py (atomic outputs, inputs)
""",  # noqa: E501
        """\
  __init__.py  the public API, imported lazily      errors.py  _files.py (atomic outputs, inputs)
""",  # noqa: E501
    ),
    (
        "docs/explanation/architecture.md",
        """\
                                                                columns (the layout), write, read
""",  # noqa: E501
        """\
                                                                _columns (the layout), write, _read
""",  # noqa: E501
    ),
    (
        "docs/explanation/architecture.md",
        """\
  sql/         store.py: the public Store, thin; its stages: engine, database (shared state),
               bound (a class bound to a database), read, write, pipeline, bulk, point (one
               row), locate (naming a refused row and column), ddl, reflect, logical,
               defaults (server defaults); tables, rowcodec, sqltypes, filters, like,
               scripts, ddllock, log, urls, encoded
""",  # noqa: E501
        """\
  sql/         store.py: the public Store, thin; its stages: engine, _database (shared state),
               _bound (a class bound to a database), _read, _write, _pipeline, _bulk, _point
               (one row), _locate (naming a refused row and column), _ddl, _reflect, logical,
               defaults (server defaults); tables, _rowcodec, sqltypes, filters, _like,
               scripts, ddllock, _log, urls, encoded
""",  # noqa: E501
    ),
    (
        "docs/explanation/architecture.md",
        """\
    exchange/  rows between a database and a format: facade (the Store's public face),
               rows, xml, dataset, diffgram, arrow, new_file, committed_ddl, children
""",  # noqa: E501
        """\
    exchange/  rows between a database and a format: _facade (the Store's public face),
               _rows, xml, dataset, diffgram, arrow, _new_file, _committed_ddl, children
""",  # noqa: E501
    ),
    (
        "docs/explanation/architecture.md",
        """\
  migrate/     revisions (the catalog's Alembic chain), metadata, hooks, diff, apply,
               connection, dialects, scaffold (your own project under Alembic)
""",  # noqa: E501
        """\
  migrate/     _revisions (the catalog's Alembic chain), _metadata, _hooks, _diff, _apply,
               _connection, dialects, scaffold (your own project under Alembic)
""",  # noqa: E501
    ),
    (
        "docs/explanation/architecture.md",
        """\
  catalog/     the level catalog: models, build, generate, cluster (Dask), queries,
               placements, copy, puzzles (sudoku), entropy, upgrade, demo, kinds, packing
  cli/         group (lazy command table), errors, options, stores, output; one module per
               command family: catalog, maps, xml, arrow, schema, tables, puzzles, browse;
               play, jsonout
  web/         the Datasette plugin and its pictures
""",  # noqa: E501
        """\
  catalog/     the level catalog: _models, _build, _generate, cluster (Dask), _queries,
               _placements, _copy, _puzzles (sudoku), _entropy, _upgrade, demo, kinds, packing
  cli/         _group (lazy command table), _errors, _options, _stores, _output; one module per
               command family: _catalog, _maps, _xml, _arrow, _schema, _tables, _puzzles,
               _browse; _play, _jsonout
  web/         the Datasette plugin and its _pictures
""",  # noqa: E501
    ),
    (
        "docs/explanation/architecture.md",
        """\
generators/    maps/ (caves, cellular, dungeon, islands, regions, placement, render, visits),
               view/ (fov, shadowcast, explore, viewport), sudoku/ (puzzles, solver,
               generation, euler), bytes/ (entropy, codec), seeds, checks, warmup,
""",  # noqa: E501
        """\
generators/    maps/ (caves, cellular, dungeon, islands, regions, placement, render, _visits),
               view/ (fov, _shadowcast, _field, explore, viewport), sudoku/ (_puzzles,
               _solver, _generation, euler), bytes/ (entropy, codec), _seeds, _checks, warmup,
""",  # noqa: E501
    ),
    (
        "docs/reference/generators-guide.md",
        """\
              visits (the random-visit automaton caves and islands share), render
  view/       fov (the API: visible, visible_window, FieldOfView, Explorer), shadowcast (one view),
              explore (the walking player), viewport (the screen's window)
  sudoku/     the sudoku API (package level): puzzles, solver, generation, euler; its
              compiled engine (_kernel, _engine, _tables) is private to the package
""",  # noqa: E501
        """\
              _visits (the random-visit automaton caves and islands share), render
  view/       fov (the API: visible, visible_window, FieldOfView, Explorer), _shadowcast (one
              view), _field (FieldOfView), explore (the walking player), viewport (the screen's
              window)
  sudoku/     the sudoku API at package level (from _puzzles, _solver, _generation), and
              euler; its compiled engine (_kernel, _engine, _tables) is private to the package
""",  # noqa: E501
    ),
    (
        "docs/reference/generators-guide.md",
        """\
  seeds.py    seeds every generator takes; checks.py: the argument checks all rooms share
""",  # noqa: E501
        """\
  _seeds.py   seeds every generator takes; _checks.py: the argument checks all rooms share
""",  # noqa: E501
    ),
)


def dotted(path: str) -> str:
    """``entityworks/sql/rowcodec.py`` -> ``entityworks.sql.rowcodec``."""
    parts = path.removesuffix(".py").split("/")
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


OLD: dict[str, str] = {dotted(old): dotted(new) for old, new in RENAMES.items()}


@dataclass
class Report:
    """What a run did and what it leaves to a person."""

    moved: list[str] = field(default_factory=list)
    changed: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def ambiguous(root: Path) -> set[str]:
    """Old module paths whose package has a public name of the same spelling (in its
    ``__all__``, or imported from a module: ``entityworks.migrate.apply`` is the function
    ``apply``): a bare mention may mean either, so it is left and reported."""
    found = set()
    for module in OLD:
        package, _, leaf = module.rpartition(".")
        init = root / package.replace(".", "/") / "__init__.py"
        if not init.exists():
            continue
        for node in ast.walk(ast.parse(init.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module:
                if any((a.asname or a.name) == leaf for a in node.names):
                    found.add(module)
            elif isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
            ):
                if isinstance(node.value, ast.List | ast.Tuple) and any(
                    isinstance(e, ast.Constant) and e.value == leaf for e in node.value.elts
                ):
                    found.add(module)
    return found


def new_path(names: list[str]) -> tuple[int, str] | None:
    """The longest prefix of ``names`` that is an old module: (its length, its new leaf)."""
    for k in range(len(names), 1, -1):
        hit = OLD.get(".".join(names[:k]))
        if hit is not None:
            return k, hit.rpartition(".")[2]
    return None


DOTTED = re.compile(r"(?<![\w.])(?:entityworks|generators)(?:\.\w+)+")
FROM_IMPORT = re.compile(
    r"\bfrom\s+((?:entityworks|generators)(?:\.\w+)*)\s+import\s+(\w+(?:\s*,\s*\w+)*)"
)
SLASHED = re.compile(r"(?<![\w.-])(?:\w+/)+\w+\.py\b")
ROLE = re.compile(r"(:(?:mod|func|class|data|meth|attr|exc|obj):`~?)(\.+\w[\w.]*)`")


def rewrite_text(text: str, where: str, risky: set[str], report: Report) -> tuple[str, int]:
    """Dotted and slash paths, and ``from X import module``, in any text."""
    count = 0

    def one(match: re.Match[str]) -> str:
        nonlocal count
        names = match.group(0).split(".")
        hit = new_path(names)
        if hit is None:
            return match.group(0)
        k, leaf = hit
        end = match.end()
        after = match.string[end : end + 1]
        if k == len(names) and ".".join(names) in risky and after not in (":",):
            report.notes.append(f"{where}: left `{match.group(0)}` (a module, or its function?)")
            return match.group(0)
        count += 1
        return ".".join([*names[: k - 1], leaf, *names[k:]])

    def imports(match: re.Match[str]) -> str:
        nonlocal count
        package = match.group(1)
        names = [n.strip() for n in match.group(2).split(",")]
        out = []
        for name in names:
            new = OLD.get(f"{package}.{name}")
            if new is None or f"{package}.{name}" in risky:
                out.append(name)
            else:
                count += 1
                out.append(f"{new.rpartition('.')[2]} as {name}")
        if out == names:
            return match.group(0)
        start = match.start(2) - match.start(0)
        return match.group(0)[:start] + ", ".join(out)

    def slashed(match: re.Match[str]) -> str:
        nonlocal count
        path = match.group(0)
        parts = path.split("/")
        rooted = [i for i, part in enumerate(parts) if part in ROOTS]
        if rooted:  # entityworks/..., or a path ending so (/site-packages/entityworks/...)
            tail = "/".join(parts[rooted[0] :])
            candidates = [tail] if tail in RENAMES else []
        elif match.start() and match.string[match.start() - 1] == "/":
            candidates = []  # the end of a longer path that names no package
        else:  # sql/store.py: a path inside a package
            candidates = [p for p in (f"{r}/{path}" for r in ROOTS) if p in RENAMES]
        if len(candidates) != 1:
            if len(candidates) > 1:
                report.notes.append(f"{where}: left {path} (in entityworks/ and generators/)")
            return path
        count += 1
        head, _, _ = path.rpartition("/")
        return f"{head}/{RENAMES[candidates[0]].rpartition('/')[2]}"

    text = FROM_IMPORT.sub(imports, text)
    text = DOTTED.sub(one, text)
    text = SLASHED.sub(slashed, text)
    return text, count


def module_of(rel: str) -> tuple[str, bool]:
    """The dotted name of a Python file and whether it is a package's ``__init__``."""
    return dotted(rel), rel.endswith("__init__.py")


def resolve(current: str, is_pkg: bool, level: int, rest: str | None) -> str:
    """A relative import's absolute module, as the import system computes it."""
    base = current.split(".") if is_pkg else current.split(".")[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([rest] if rest else []))


def rewrite_relative_string(text: str, current: str, is_pkg: bool, base: str | None) -> str:
    """One string of a :data:`RELATIVE_TABLES` table, rewritten if it names an old module."""
    module, colon, attribute = text.partition(":")
    if not re.fullmatch(r"\.*\w+(\.\w+)*", module):
        return text
    if base is None:
        level = len(module) - len(module.lstrip("."))
        if not level:
            return text
        absolute = resolve(current, is_pkg, level, module.lstrip(".") or None)
    else:
        absolute = base + module
    hit = new_path(absolute.split("."))
    if hit is None or hit[0] != len(absolute.split(".")):
        return text
    head, dot, _ = module.rpartition(".")
    return f"{head}{dot}{hit[1]}{colon}{attribute}"


def rewrite_python(source: str, rel: str, risky: set[str], report: Report) -> tuple[str, int]:
    """Imports, dotted names, strings and comments of one Python file."""
    try:
        tree = ast.parse(source)
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (SyntaxError, tokenize.TokenError):
        report.notes.append(f"{rel}: not Python that parses; rewritten as text")
        return rewrite_text(source, rel, risky, report)
    current, is_pkg = module_of(rel)
    lines = source.splitlines(keepends=True)
    at = {tok.start: i for i, tok in enumerate(tokens)}
    edits: dict[int, str] = {}  # token index -> new text
    spans: dict[int, int] = {}  # token index -> the last token its new text replaces

    def char_col(line: int, byte_col: int) -> int:
        return len(lines[line - 1].encode()[:byte_col].decode())

    import_lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            import_lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
        if not isinstance(node, ast.ImportFrom):
            continue
        first = at.get((node.lineno, char_col(node.lineno, node.col_offset)))
        if first is None:
            continue
        if node.level:
            module = resolve(current, is_pkg, node.level, node.module)
            prefix = resolve(current, is_pkg, node.level, None).split(".")
            i, names = first + 1, []
            while tokens[i].string != "import":
                if tokens[i].type == tokenize.NAME:
                    names.append(i)
                i += 1
            for n, index in enumerate(names):
                hit = OLD.get(".".join(prefix + [tokens[j].string for j in names[: n + 1]]))
                if hit is not None:
                    edits[index] = hit.rpartition(".")[2]
        else:
            module = node.module or ""
        for alias in node.names:
            hit = OLD.get(f"{module}.{alias.name}")
            if hit is None or f"{module}.{alias.name}" in risky:
                continue  # `from entityworks.migrate import apply`: the package's function
            index = at.get((alias.lineno, char_col(alias.lineno, alias.col_offset)))
            if index is None:
                report.notes.append(f"{rel}:{alias.lineno}: import of {alias.name} not found")
                continue
            leaf = hit.rpartition(".")[2]
            edits[index] = leaf if alias.asname else f"{leaf} as {alias.name}"
            if alias.asname == leaf:  # `visits as _visits`: now the name itself
                spans[index] = index + 2

    tables: dict[tuple[int, int], str | None] = {}
    for table_file, name, side, base in RELATIVE_TABLES:
        if rel != table_file:
            continue
        for node in tree.body:
            targets = (
                node.targets
                if isinstance(node, ast.Assign)
                else [node.target]
                if isinstance(node, ast.AnnAssign)
                else []
            )
            if any(isinstance(t, ast.Name) and t.id == name for t in targets) and node.value:
                for table in ast.walk(node.value):
                    if not isinstance(table, ast.Dict):
                        continue
                    for const in table.keys if side == "keys" else table.values:
                        if isinstance(const, ast.Constant) and isinstance(const.value, str):
                            position = (const.lineno, char_col(const.lineno, const.col_offset))
                            tables[position] = base

    for i, tok in enumerate(tokens):
        if tok.type == tokenize.NAME and tok.string in ROOTS and i not in edits:
            before = tokens[i - 1] if i else None
            if before is not None and before.string == "." and before.end == tok.start:
                continue
            chain = [i]
            while (
                chain[-1] + 2 < len(tokens)
                and tokens[chain[-1] + 1].string == "."
                and tokens[chain[-1] + 2].type == tokenize.NAME
            ):
                chain.append(chain[-1] + 2)
            names = [tokens[j].string for j in chain]
            hit = new_path(names)
            if hit is not None:
                k, leaf = hit
                bare = k == len(names) and ".".join(names) in risky
                if bare and tok.start[0] not in import_lines:
                    report.notes.append(f"{rel}:{tok.start[0]}: left {'.'.join(names)}")
                else:
                    edits[chain[k - 1]] = leaf
        elif tok.type in (tokenize.STRING, tokenize.COMMENT):
            text = tok.string
            file_name = re.fullmatch(r"""(['"])(\w+\.py)\1""", text)
            if tok.type == tokenize.STRING and file_name:
                # PACKAGE / "sql" / "rowcodec.py": a path built of parts
                folder = re.fullmatch(r"""(['"])(\w+)\1""", tokens[i - 2].string if i > 1 else "")
                slash = i > 1 and tokens[i - 1].string == "/"
                tail = f"{folder.group(2)}/{file_name.group(2)}" if folder and slash else None
                found = [old for old in RENAMES if tail and old.endswith("/" + tail)]
                if len(found) == 1:
                    new_name = RENAMES[found[0]].rpartition("/")[2]
                    text = text.replace(file_name.group(2), new_name)
                elif tail is None and any(
                    old.endswith("/" + file_name.group(2)) for old in RENAMES
                ):
                    report.notes.append(
                        f"{rel}:{tok.start[0]}: check {text} (a file name; maybe a module renamed)"
                    )
            if tok.start in tables:
                quote = re.match(r"[a-zA-Z]*('''|\"\"\"|'|\")", text)
                if quote:
                    q = quote.group(1)
                    body = text[len(quote.group(0)) : len(text) - len(q)]
                    new_body = rewrite_relative_string(body, current, is_pkg, tables[tok.start])
                    text = text[: len(quote.group(0))] + new_body + q

            def role(match: re.Match[str]) -> str:
                target = match.group(2)
                level = len(target) - len(target.lstrip("."))
                names = resolve(current, is_pkg, level, target.lstrip(".")).split(".")
                hit = new_path(names)
                if hit is None:
                    return match.group(0)
                whole = hit[0] == len(names) and ".".join(names) in risky
                if whole and not match.group(1).startswith(":mod:"):
                    return match.group(0)
                parts = target.lstrip(".").split(".")
                offset = len(names) - len(parts)
                if hit[0] - 1 < offset:  # the old module is an ancestor of the target
                    return match.group(0)
                parts[hit[0] - 1 - offset] = hit[1]
                return f"{match.group(1)}{'.' * level}{'.'.join(parts)}`"

            text = ROLE.sub(role, text)
            text, _ = rewrite_text(text, f"{rel}:{tok.start[0]}", risky, report)
            if text != tok.string:
                edits[i] = text
    edits = {i: t for i, t in edits.items() if t != tokens[i].string or i in spans}
    if not edits:
        return source, 0
    out: list[str] = []
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    position = 0
    for i in sorted(edits):
        tok, last = tokens[i], tokens[spans.get(i, i)]
        start = offsets[tok.start[0] - 1] + tok.start[1]
        end = offsets[last.end[0] - 1] + last.end[1]
        out.append(source[position:start])
        out.append(edits[i])
        position = end
    out.append(source[position:])
    return "".join(out), len(edits)


def rewrite_layers(text: str, report: Report) -> tuple[str, int]:
    """import-linter ``layers`` name modules relative to their ``containers``."""
    count = 0
    sections = re.split(r"(?m)^(?=\[\[tool\.importlinter\.contracts\]\])", text)
    for s, section in enumerate(sections):
        containers = re.search(r"(?m)^containers\s*=\s*\[([^\]]*)\]", section)
        layers = re.search(r"(?ms)^layers\s*=\s*\[(.*?)^\]", section)
        if not containers or not layers:
            continue
        bases = re.findall(r'"([\w.]+)"', containers.group(1))

        def name(match: re.Match[str], bases: list[str] = bases) -> str:
            nonlocal count
            parts = []
            for part in match.group(1).split("|"):
                word = part.strip()
                for base in bases:
                    hit = OLD.get(f"{base}.{word}")
                    if hit is not None:
                        count += 1
                        part = part.replace(word, hit.rpartition(".")[2])
                        break
                parts.append(part)
            return '"' + "|".join(parts) + '"'

        body = re.sub(r'"([^"\n]*)"', name, layers.group(1))
        sections[s] = section[: layers.start(1)] + body + section[layers.end(1) :]
    return "".join(sections), count


def tracked(root: Path) -> Iterator[str]:
    """The repository's files: tracked, and new ones not ignored (another change's new test)."""
    listing = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=root,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    yield from dict.fromkeys(p for p in listing.split("\0") if p)


def check(root: Path, report: Report) -> None:
    """Modules in neither list, and renamed modules imported from outside their package
    (the house's rule: a ``_x`` module belongs to its package)."""
    known = set(RENAMES) | set(RENAMES.values()) | set(PUBLIC)
    for root_name in ROOTS:
        for path in sorted((root / root_name).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            leaf = path.name
            private = any(part.startswith("_") and not part.startswith("__") for part in path.parts)
            if leaf in ("__init__.py", "__main__.py") or private or rel in known:
                continue
            report.notes.append(f"{rel}: in neither RENAMES nor PUBLIC (stays public)")
    renamed = set(OLD.values())
    for rel in tracked(root):
        if not rel.endswith(".py") or rel.split("/")[0] not in ROOTS or not (root / rel).exists():
            continue
        current, is_pkg = module_of(rel)
        try:
            tree = ast.parse((root / rel).read_text())
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = (
                    resolve(current, is_pkg, node.level, node.module)
                    if node.level
                    else node.module or ""
                )
                targets = [base] + [f"{base}.{a.name}" for a in node.names]
            for target in targets:
                module = OLD.get(target, target)
                if module not in renamed:
                    continue
                package = module.rpartition(".")[0]
                if current != package and not current.startswith(package + "."):
                    report.notes.append(
                        f"{rel}:{node.lineno}: imports {module} from outside {package}: "
                        "keep that module public or import it through its package"
                    )


def main() -> int:
    """Rename, rewrite, report."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dry-run", action="store_true", help="change nothing; print the plan")
    args = parser.parse_args()
    root = Path.cwd()
    if not (root / "pyproject.toml").exists() or not (root / "entityworks").is_dir():
        print("run this from the repository root", file=sys.stderr)
        return 2
    report = Report()
    risky = ambiguous(root)
    for old, new in RENAMES.items():
        if (root / old).exists() and (root / new).exists():
            print(f"both {old} and {new} exist: merge them by hand first", file=sys.stderr)
            return 1
        if (root / old).exists():
            report.moved.append(f"{old} -> {new}")
            if not args.dry_run:
                subprocess.run(["git", "mv", old, new], cwd=root, check=True)
        elif not (root / new).exists():
            report.notes.append(f"{old}: gone (and {new} too): nothing to move")
    for rel in tracked(root):
        path = root / rel
        if rel in SKIP or not path.is_file() or path.is_symlink():
            continue
        if path.suffix not in TEXT_SUFFIXES and path.suffix != ".py":
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        if path.suffix == ".py":
            new, count = rewrite_python(text, rel, risky, report)
        else:
            new, count = rewrite_text(text, rel, risky, report)
        if rel == "pyproject.toml":
            new, layers = rewrite_layers(new, report)
            count += layers
        for prose_file, before, after in PROSE:
            if rel != prose_file or after in new:
                continue
            if before in new:
                new, count = new.replace(before, after, 1), count + 1
            else:
                report.notes.append(f"{rel}: by hand: the text changed, make this edit: {after!r}")
        if new != text:
            report.changed[rel] = count
            if not args.dry_run:
                path.write_text(new, encoding="utf-8")
    python_files = [r for r in report.changed if r.endswith(".py")]
    if python_files and not args.dry_run:
        ruff = shutil.which("ruff")
        if ruff is None:
            report.notes.append(
                "ruff not found: run `ruff check --select I --fix` and "
                "`ruff format` on the changed files"
            )
        else:
            subprocess.run([ruff, "check", "--select", "I", "--fix", "-q", *python_files], cwd=root)
            subprocess.run([ruff, "format", "-q", *python_files], cwd=root)
    if not args.dry_run:
        check(root, report)
    for line in report.moved:
        print(f"git mv {line}")
    for rel, count in sorted(report.changed.items()):
        print(f"rewrote {rel} ({count} reference{'s' if count != 1 else ''})")
    if not report.moved and not report.changed:
        print("nothing to do: every module of the mapping is renamed and no reference is left")
    else:
        print(f"{len(report.moved)} module(s) moved, {len(report.changed)} file(s) rewritten")
    for note in report.notes:
        print(f"note: {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

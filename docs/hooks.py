"""MkDocs hooks: pages generated from the code when the site is built.

``reference/types.md``: the types table, every type of the default registry (its exact
entries and one example of each of its factories, plus the catalog's map types) against
every backend and format, read from what entityworks itself produces: the ``CREATE TABLE``
of each dialect (``create_script``), the XSD type of the registry entry, the Arrow schema
(``arrow_schema``), the pandas dtype of ``to_pandas`` and the Parquet column of
``write_parquet``. Nothing is typed by hand, so the table cannot drift from the registry.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import enum
import inspect
import re
import tempfile
import textwrap
import uuid
from pathlib import Path
from typing import Any

MARKER = "<!-- types-table -->"
CLI_MARKER = "<!-- cli-reference -->"
LAYERS_MARKER = "<!-- layers -->"


class Colour(enum.Enum):
    RED = "red"


@dataclasses.dataclass
class Point:
    x: int
    y: int


def _examples() -> list[tuple[str, Any, Any]]:
    """(name, annotation, sample value) for every type the table shows."""
    import numpy as np

    from entityworks import AwareDatetime
    from entityworks.catalog.packing import PackedGrid, PointPath
    from entityworks.types.default import default_registry

    samples: dict[str, Any] = {
        "bool": True,
        "int": 1,
        "float": 1.5,
        "str": "a",
        "bytes": b"a",
        "Decimal": decimal.Decimal("1.50"),
        "datetime": dt.datetime(2020, 1, 2, 3, 4, 5),
        "AwareDatetime": dt.datetime(2020, 1, 2, 3, 4, 5, tzinfo=dt.UTC),
        "date": dt.date(2020, 1, 2),
        "time": dt.time(3, 4, 5),
        "timedelta": dt.timedelta(seconds=1),
        "UUID": uuid.UUID(int=1),
    }
    out: list[tuple[str, Any, Any]] = []
    registry = default_registry()
    for key, info in registry.entries():
        annotation = AwareDatetime if info.name == "AwareDatetime" else key
        out.append((f"`{info.name}`", annotation, samples[info.name]))
    factories = [  # one of each factory's types: an Enum, JSON, an array, a nested dataclass
        ("`Enum` (here of `str` values)", Colour, Colour.RED),
        ("`list`, `dict`, `tuple` (JSON)", list[int], [1, 2]),
        ("`numpy.ndarray`", np.ndarray, np.arange(3, dtype=np.int16)),
        ("nested dataclass (JSON)", Point, Point(1, 2)),
    ]
    assert len(factories) == len(registry._factories), "a registry factory has no example"
    out += factories
    out += [
        (
            "`PackedGrid` (`entityworks.catalog.packing`)",
            PackedGrid,
            np.zeros((2, 3), dtype=np.uint8),
        ),
        ("`PointPath` (`entityworks.catalog.packing`)", PointPath, [[0, 0], [1, 0]]),
    ]
    return out


def _sql(cls: type, dialect: str) -> str:
    from entityworks import create_script

    script = create_script(cls, dialect)
    found = []
    for line in script.splitlines():
        line = line.strip().rstrip(",").strip()
        m = re.match(r'"?(value(?:__\w+)?)"? (.*)', line)
        if m:
            kind = re.sub(r"\s*(NOT NULL|NULL)\b.*", "", m.group(2))
            kind = re.sub(
                r"CONSTRAINT \w+ CHECK \(typeof\(\"value\"\) = '(\w+)'.*",
                r"CHECK typeof \1",
                m.group(2).replace(" NOT NULL ", " "),
            )
            kind = re.sub(r"\s*NOT NULL$", "", kind).strip()
            found.append(kind if m.group(1) == "value" else f"+ `{m.group(1)}` {kind}")
    found.sort(key=lambda kind: kind.startswith("+ "))  # the field's own column first
    return " ".join(found)


def _logical(text: str) -> str:
    """A Parquet logical type, short: ``Decimal(precision=3, scale=2)`` stays, the flags of a
    timestamp go (only whether it is UTC-adjusted is kept)."""
    if text == "None":
        return ""
    if text.startswith(("Timestamp", "Time")):
        utc = "isAdjustedToUTC=true" in text
        return f" ({text.split('(')[0]}, {'UTC' if utc else 'local'}, us)"
    return f" ({text})"


def _row(name: str, annotation: Any, sample: Any, folder: Path) -> str:
    import pyarrow.parquet as pq

    from entityworks import arrow_schema, to_pandas, write_parquet
    from entityworks.registry import lookup

    cls = dataclasses.make_dataclass("T", [("id", int), ("value", annotation)])
    cls.__module__ = __name__
    row = cls(1, sample)
    info = lookup(annotation)
    schema = arrow_schema(cls)
    arrow = ", ".join(
        f"{f.type}" if f.name == "value" else f"+ `{f.name}` {f.type}"
        for f in schema
        if f.name.startswith("value")
    )
    frame = to_pandas(cls, [row])
    pandas = ", ".join(
        f"{frame[c].dtype}" if c == "value" else f"+ `{c}` {frame[c].dtype}"
        for c in frame.columns
        if c.startswith("value")
    )
    path = write_parquet(cls, [row], folder / "t.parquet")
    pschema = pq.ParquetFile(path).schema
    parquet = ", ".join(
        c.physical_type + _logical(str(c.logical_type))
        for c in (pschema.column(i) for i in range(len(pschema)))
        if c.path.split(".")[0] == "value"
    )
    xml = info.xml_codec
    xsd = xml.xsd_type + (" (.NET Guid)" if "msdata:DataType" in xml.attributes else "")
    cells = [
        name,
        _sql(cls, "sqlite"),
        _sql(cls, "postgresql"),
        _sql(cls, "mariadb"),
        xsd,
        arrow,
        pandas,
        parquet,
    ]
    cells = [cells[0]] + [
        f"`{c}`" if c and "`" not in c else c.replace("[", "\\[").replace("]", "\\]")
        for c in cells[1:]
    ]
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def types_table() -> str:
    head = (
        "| Python | SQLite (STRICT) | PostgreSQL | MariaDB | XML (XSD) | Arrow | pandas "
        "| Parquet |\n|" + " --- |" * 8
    )
    with tempfile.TemporaryDirectory() as name:
        rows = [_row(n, a, s, Path(name)) for n, a, s in _examples()]
    return head + "\n" + "\n".join(rows) + "\n"


def _escaped(text: str) -> str:
    """Prose for Markdown, shown as written: no character starts emphasis, a link or HTML."""
    return re.sub(r"([\\`*_\[\]|])", r"\\\1", text).replace("<", "&lt;")


def _help_markdown(text: str) -> list[str]:
    """A command's help as ``--help`` shows it: click's ``\b`` paragraphs (examples, tables)
    as text blocks, line for line; the others as paragraphs, whole (no short-help cut)."""
    out: list[str] = []
    text = inspect.cleandoc(text).partition("\f")[0]
    for paragraph in re.split(r"\n\s*\n", text.strip()):
        lines = paragraph.splitlines()
        if lines[0].strip() == "\b":
            out += ["```text", *textwrap.dedent("\n".join(lines[1:])).splitlines(), "```", ""]
        else:
            out += [_escaped(" ".join(line.strip() for line in lines)), ""]
    return out


def _type(option: Any, ctx: Any) -> str:
    """The value an option takes: what ``--help`` shows after its name, ranges spelt out."""
    import click

    if option.is_flag:
        return "flag"
    kind = option.type
    if isinstance(kind, click.Choice):
        return "one of " + ", ".join(f"`{choice}`" for choice in kind.choices)
    shown = f"`{option.make_metavar(ctx)}`"
    if isinstance(kind, click.IntRange | click.FloatRange):
        bounds = [
            f"{'>' if kind.min_open else '>='} {kind.min}" if kind.min is not None else "",
            f"{'<' if kind.max_open else '<='} {kind.max}" if kind.max is not None else "",
        ]
        shown += " " + ", ".join(b for b in bounds if b)
    return shown + (" (repeatable)" if option.multiple else "")


def _default(option: Any, ctx: Any) -> str:
    """The default as a value, or nothing: click's "no default" marker (``Sentinel.UNSET``
    since click 8.3), ``None`` and an unset flag show as an empty cell."""
    extra = option.get_help_extra(ctx)
    if "default" in extra:  # what --help itself says (show_default), e.g. "(the CPU count)"
        return f"`{extra['default']}`"
    value = option.get_default(ctx, call=False)
    if option.is_flag and isinstance(value, bool):
        if option.secondary_opts:
            return f"`{(option.opts if value else option.secondary_opts)[0]}`"
        return "`on`" if value else ""
    if isinstance(value, tuple | list) and all(isinstance(v, str | int | float) for v in value):
        return " ".join(f"`{v}`" for v in value)
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        return f"`{value}`"
    return ""


def _command_markdown(command: Any, ctx: Any, depth: int) -> list[str]:
    import click

    path = ctx.command_path
    anchor = path.replace(" ", "-")
    out = [f"{'#' * depth} {path} {{ #{anchor} data-toc-label='{ctx.info_name}' }}", ""]
    out += _help_markdown(command.help or "")
    usage = " ".join([path, *command.collect_usage_pieces(ctx)])
    out += ["**Usage:**", "", "```text", usage, "```", ""]
    options = [p for p in command.get_params(ctx) if isinstance(p, click.Option) and not p.hidden]
    if options:
        out += [
            "**Options:**",
            "",
            "| Name | Value | Description | Default |",
            "| ---- | ----- | ----------- | ------- |",
        ]
        for option in options:
            names = ", ".join(f"`{name}`" for name in option.opts)
            if option.secondary_opts:
                names += " / " + ", ".join(f"`{name}`" for name in option.secondary_opts)
            described = _escaped(option.help or "") + (" (required)" if option.required else "")
            out.append(
                f"| {names} | {_type(option, ctx)} | {described} | {_default(option, ctx)} |"
            )
        out.append("")
    if command.epilog:  # after the options, as --help prints it
        out += _help_markdown(command.epilog)
    if isinstance(command, click.Group):
        names = command.list_commands(ctx)
        out += ["**Subcommands:**", ""]
        for name in names:
            sub = command.get_command(ctx, name)
            # the whole first sentence, never click's 45-character cut
            short = sub.get_short_help_str(limit=10_000)
            out.append(f"- [{name}](#{anchor}-{name}): {_escaped(short)}")
        out.append("")
        for name in names:
            sub = command.get_command(ctx, name)
            sub_ctx = click.Context(sub, info_name=name, parent=ctx, **sub.context_settings)
            out += _command_markdown(sub, sub_ctx, depth + 1)
    return out


def cli_reference() -> str:
    """Every command's usage, options and help, from the click commands themselves (through
    click's public API only), examples kept line for line."""
    import click

    from entityworks.cli.group import cli

    ctx = click.Context(cli, info_name="entityworks", **cli.context_settings)
    return "\n".join(_command_markdown(cli, ctx, 2))


def layers() -> str:
    """The import-linter contracts of ``pyproject.toml`` (what ``lint-imports`` checks in
    CI), as the architecture page shows them: the layers top to bottom, then each
    forbidden import. Read from the file, so the page cannot say what the tool does not."""
    import tomllib

    pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
    config = tomllib.loads(pyproject.read_text(encoding="utf-8"))["tool"]["importlinter"]
    out: list[str] = []
    for contract in config["contracts"]:
        if contract["type"] == "layers":
            name = contract["name"]
            out.append(f"**{name}** (top to bottom; `a | b`: neither imports the other)")
            out.append("")
            out.append("```text")
            for container in contract["containers"]:
                for layer in contract["layers"]:
                    names = [f"{container}.{part.strip()}" for part in layer.split("|")]
                    out.append("  |  ".join(names))
                    out.append("      ↓")
                out.pop()
            out.append("```")
            out.append("")
    out.append("| rule | these modules | never import |")
    out.append("|---|---|---|")
    for contract in config["contracts"]:
        if contract["type"] == "forbidden":
            sources = ", ".join(f"`{m}`" for m in contract["source_modules"])
            forbidden = ", ".join(f"`{m}`" for m in contract["forbidden_modules"])
            how = "" if contract.get("allow_indirect_imports") else " (directly or not)"
            out.append(f"| {contract['name']} | {sources} | {forbidden}{how} |")
    return "\n".join(out)


def on_page_markdown(markdown: str, page: Any, **kwargs: Any) -> str:
    if LAYERS_MARKER in markdown:
        markdown = markdown.replace(LAYERS_MARKER, layers())
    if MARKER in markdown:
        markdown = markdown.replace(MARKER, types_table())
    if CLI_MARKER in markdown:
        markdown = markdown.replace(CLI_MARKER, cli_reference())
    return markdown


def on_files(files: Any, config: Any) -> Any:
    """The golden maps the tests regenerate pixel for pixel are shown as they are, from
    ``tests/golden`` (never copied, so never stale)."""
    from mkdocs.structure.files import File

    golden = Path(config["docs_dir"]).parent / "tests" / "golden"
    for png in sorted(golden.glob("*.png")):
        files.append(File.generated(config, f"images/{png.name}", abs_src_path=str(png)))
    return files

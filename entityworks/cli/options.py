"""Options shared by several commands, and the parsers that turn their text into values:
``--db`` (checked before any command runs), ``--progress``, ``--where``, ``--param``, sizes
(``--max-size``), ``--workers``' default and ``--cluster``.

They live in one module so that every command spells an option, its help and its refusals
the same way; like every module of the command line it imports only light modules at the
top, the heavy ones inside the functions that need them.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import click

from ..errors import FilterError
from ..sql.backends.light import FILE_TITLE
from ..sql.urls import redact, remember_password

if TYPE_CHECKING:
    import sqlalchemy as sa

    from ..model.schema import TableSchema
    from ..sql.filters import Expr

DEFAULT_DB = "entityworks.db"


def check_db(_ctx: Any, _param: Any, value: str | None) -> str | None:
    """Refuse a URL whose dialect is unknown or whose driver is not installed, up front."""
    if value is None or "://" not in value:
        return value
    remember_password(value)
    import sqlalchemy as sa

    from ..sql import backends

    url = None
    try:
        url = sa.make_url(value)
        url.get_dialect().import_dbapi()
    except ImportError as exc:
        hint = ""
        scheme = value.partition("://")[0]
        better, extra = _suggestion(url)
        if better and better != scheme:
            hint = f"; use {better}://... (the extra entityworks[{extra}] installs it)"
        raise click.BadParameter(
            f"the driver for {scheme!r} is not installed ({exc}){hint}", param_hint="--db"
        ) from None
    except sa.exc.NoSuchModuleError:
        scheme = value.partition("://")[0]
        better, _ = _suggestion(url)
        if better:
            hint = f"use {better}://..."
        else:
            *some, last = backends.url_examples()
            hint = f"use {', '.join(some)} or {last} (or a plain {FILE_TITLE} file path)"
        raise click.BadParameter(
            f"{scheme}:// is not a database scheme SQLAlchemy knows; {hint}", param_hint="--db"
        ) from None
    except (sa.exc.ArgumentError, ValueError) as exc:
        raise click.BadParameter(redact(str(exc)), param_hint="--db") from None
    refused = backends.for_name(url.get_backend_name()).refused_url(url)
    if refused is not None:
        raise click.BadParameter(refused, param_hint="--db")
    return value


def _suggestion(url: sa.URL | None) -> tuple[str, str]:
    """The scheme to suggest for ``url``'s dialect, with the driver entityworks installs,
    and the extra that installs it ("" and "": none)."""
    from ..sql import backends

    written = url.get_backend_name() if url is not None else ""
    backend = backends.for_written_name(written)
    if backend is None:
        return "", ""
    return backend.suggested_scheme(written), backend.driver_extra


def db_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--db",
        default=DEFAULT_DB,
        envvar="ENTITYWORKS_DB",
        show_default=True,
        callback=check_db,
        help=f"{FILE_TITLE} file path or SQLAlchemy URL (env: ENTITYWORKS_DB).",
    )(fn)


def progress_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--progress/--no-progress",
        default=None,
        help="Show a progress bar (default: when stderr is a terminal).",
    )(fn)


def cores() -> int:
    """CPUs this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


_WHERE = re.compile(r"^\s*([^\s=!<>]+)\s*(==|=|!=|<>|>=|<=|>|<)\s*(.*?)\s*$")


_WORD_WHERE = re.compile(r"^\s*(\S+?)\s+(not\s+in|in|like)\s+(.*?)\s*$", re.IGNORECASE)


def parse_where(text: str, schema: TableSchema) -> Expr:
    """``"col>=value"``, ``"col in a,b,c"``, ``"col not in a,b"`` or ``"col like pat%"`` -> a
    filter; each value is parsed as the column's type. ``"meta.size>=3"`` or ``"tags[0]=x"``:
    a value inside a JSON field (see :meth:`entityworks.col.__getitem__`)."""
    from ..sql.filters import Comparison, col

    words = _WORD_WHERE.match(text)
    if words is not None:
        name, op, raw = words.groups()
        column = schema.column(name)
        op = " ".join(op.lower().split())
        if op == "like":
            return col(name).like(raw)
        values = [_where_value(text, name, column, part.strip()) for part in raw.split(",")]
        return col(name).in_(values) if op == "in" else col(name).not_in(values)
    match = _WHERE.match(text)
    if match is None:
        raise FilterError(
            f"--where {text!r}: expected COLUMN OP VALUE with OP one of "
            f"= != < <= > >=, or COLUMN in A,B / not in A,B / like PATTERN, "
            f"e.g. 'width>=80', 'kind in caves,islands', 'name like cave%'"
        )
    name, op, raw = match.groups()
    op = {"=": "==", "<>": "!="}.get(op, op)
    path = _json_path(text, name, schema)
    if path is not None:  # a value inside a JSON field: 'parameters.width>=30', 'tags[0]=x'
        return _json_where(text, path, op, raw)
    column = schema.column(name)
    if raw.lower() == "null":
        if op not in ("==", "!="):
            raise FilterError(f"--where {text!r}: null only works with = and !=")
        return col(name) == None if op == "==" else col(name) != None  # noqa: E711
    return Comparison(name, op, _where_value(text, name, column, raw))


_PATH_PART = re.compile(r"\.([^.\[\]]+)|\[(-?\d+)\]")


def _json_path(
    text: str, name: str, schema: TableSchema
) -> tuple[str, tuple[str | int, ...]] | None:
    """``meta.size`` or ``tags[0]`` (a field, then keys after dots and indexes in brackets)
    -> the field and the path into its JSON value; None for a plain column name."""
    cut = min((i for i in (name.find("."), name.find("[")) if i > 0), default=-1)
    if cut < 0 or name in schema.column_names:
        return None
    field, rest = name[:cut], name[cut:]
    parts = list(_PATH_PART.finditer(rest))
    if "".join(m.group(0) for m in parts) != rest:
        raise FilterError(
            f"--where {text!r}: {rest!r} is no path into a JSON value: keys after dots, "
            "indexes in brackets (meta.size, tags[0], meta.sizes[1].x)"
        )
    schema.column(field)  # an unknown field is named as such
    return field, tuple(m.group(1) if m.group(1) is not None else int(m.group(2)) for m in parts)


def _json_where(text: str, path: tuple[str, tuple[str | int, ...]], op: str, raw: str) -> Expr:
    """The filter ``col(field)[k]... OP value``; the value is read as JSON (3, 0.5, true,
    "text"), else taken as text; the filter itself refuses a field that holds no JSON."""
    import json

    from ..sql.filters import col

    field, keys = path
    if raw.lower() == "null":
        raise FilterError(
            f"--where {text!r}: a value inside JSON is compared with a value; "
            "a missing key matches nothing (filter the field itself with null)"
        )
    try:
        value: Any = json.loads(raw)
    except (json.JSONDecodeError, RecursionError):
        value = raw
    if not isinstance(value, bool | int | float | str):
        value = raw
    item: Any = col(field)
    for key in keys:
        item = item[key]
    compare = {
        "==": item.__eq__,
        "!=": item.__ne__,
        "<": item.__lt__,
        "<=": item.__le__,
        ">": item.__gt__,
        ">=": item.__ge__,
    }[op]
    made: Expr = compare(value)
    return made


def _where_value(text: str, name: str, column: Any, raw: str) -> Any:
    try:
        return column.info.xml_codec.from_text(raw)
    except RecursionError:
        raise FilterError(f"--where for column {name!r}: the value is nested too deeply") from None
    except (ValueError, TypeError, ArithmeticError) as exc:
        raise FilterError(
            f"--where {text!r}: {raw!r} is not a valid {column.info.name} "
            f"for column {name!r} ({exc})"
        ) from None


def parse_params(items: Sequence[str]) -> dict[str, Any]:
    """``k=v`` pairs; values are JSON when they parse (``3``, ``true``, ``0.5``), else text."""
    import json

    params: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"{item!r} is not KEY=VALUE", param_hint="--param")
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        except RecursionError:
            raise click.BadParameter(
                f"the value of {key.strip()!r} is nested too deeply", param_hint="--param"
            ) from None
        params[key.strip()] = value
    return params


def load_class(spec: str) -> type:
    """The class ``--dataclass MODULE:CLASS`` names, imported (the current directory first
    on the path, as with ``python -m``)."""
    import importlib

    module_name, _, attr = spec.partition(":")
    if not attr:
        raise click.BadParameter(f"{spec!r} is not MODULE:CLASS", param_hint="--dataclass")
    if os.getcwd() not in sys.path:  # modules next to the user, as with ``python -m``
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise click.BadParameter(
            f"cannot import {module_name!r}: {exc}", param_hint="--dataclass"
        ) from None
    cls = getattr(module, attr, None)
    if not isinstance(cls, type):
        raise click.BadParameter(f"{module_name!r} has no class {attr!r}", param_hint="--dataclass")
    return cls


if TYPE_CHECKING:
    _IntParam = click.ParamType[int | None]
else:  # ParamType is generic from click 8.3 on; 8.2 cannot subscript it
    _IntParam = click.ParamType


class ByteSize(_IntParam):
    """A size in bytes: ``1048576``, ``512K``, ``100M``, ``4G``, ``1T`` (powers of 1024);
    ``0`` means no limit (None)."""

    name = "SIZE"
    _UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> int | None:
        if value is None or isinstance(value, int):
            return value or None
        match = re.fullmatch(r"\s*(\d{1,15})\s*([KMGT]?)(?:i?B)?\s*", str(value), re.IGNORECASE)
        if match is None:
            self.fail(f"{value!r} is not a size like 1048576, 512K, 100M or 4G", param, ctx)
        number = int(match.group(1)) * self._UNITS[match.group(2).upper()]
        return number or None


def cluster_client(address: str | None) -> Any:
    """A Dask client for ``--cluster`` (dask is imported only here), or None."""
    if address is None:
        return None
    from ..catalog.cluster import connect

    try:
        return connect(address)
    except RuntimeError as exc:
        raise click.UsageError(str(exc)) from None

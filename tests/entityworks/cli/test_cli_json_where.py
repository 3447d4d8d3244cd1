"""``--where`` into a JSON field (``parameters.width>=35``, ``tags[0]=x``): the CLI selects
the rows a Python evaluation of the same comparison over the stored objects selects, on
every backend and through every command that takes ``--where``; a malformed path, a field
that holds no JSON and ``null`` are refused in one line."""

from __future__ import annotations

import json
import operator
from dataclasses import dataclass, field
from typing import Any

import pytest
from click.testing import CliRunner

from entityworks import Store, table
from entityworks.catalog import MapRecord, generate_into, open_catalog
from entityworks.cli import cli


@table("tagged")
@dataclass
class Tagged:
    id: int
    name: str
    tags: list[str] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)


TAGGED = [
    Tagged(1, "a", ["x", "y"], {"size": 3, "deep": {"k": "v"}}),
    Tagged(2, "b", ["y"], {"size": 10, "flag": True}),
    Tagged(3, "c", [], {"size": 2.5}),
    Tagged(4, "d", ["x "], {"size": "3"}),  # a text, not the number 3
    Tagged(5, "e", ["X"], {}),
]


def _ids(url: str, table_name: str, *wheres: str) -> list[int]:
    args = ["query", table_name, "--db", url, "--format", "json", "-c", "id"]
    for w in wheres:
        args += ["-w", w]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    return sorted(row["id"] for row in json.loads(result.output))


def _python(objs: list[Any], get: Any, op: Any, value: Any) -> list[int]:
    """The ids whose value at the path exists, is of ``value``'s kind and compares so."""
    kept = []
    for o in objs:
        try:
            found = get(o)
        except (KeyError, IndexError, TypeError):
            continue
        same_kind = (isinstance(found, bool) == isinstance(value, bool)) and (
            isinstance(found, str) == isinstance(value, str)
        )
        if same_kind and op(found, value):
            kept.append(o.id)
    return sorted(kept)


@pytest.mark.parametrize(
    ("where", "get", "op", "value"),
    [
        ("meta.size>=3", lambda o: o.meta["size"], operator.ge, 3),
        ("meta.size<3", lambda o: o.meta["size"], operator.lt, 3),
        ("meta.size=3", lambda o: o.meta["size"], operator.eq, 3),
        ('meta.size="3"', lambda o: o.meta["size"], operator.eq, "3"),
        ("meta.size!=3", lambda o: o.meta["size"], operator.ne, 3),
        ("meta.flag=true", lambda o: o.meta["flag"], operator.eq, True),
        ("meta.deep.k=v", lambda o: o.meta["deep"]["k"], operator.eq, "v"),
        ("meta.missing=1", lambda o: o.meta["missing"], operator.eq, 1),
        ("tags[0]=x", lambda o: o.tags[0], operator.eq, "x"),
        ("tags[1]=y", lambda o: o.tags[1], operator.eq, "y"),
        ("tags[0]>=x", lambda o: o.tags[0], operator.ge, "x"),
    ],
)
def test_where_into_json_selects_what_python_selects(
    store: Store, where: str, get: Any, op: Any, value: Any
) -> None:
    store.create(Tagged)
    store.insert_many(TAGGED)
    url = str(store.url.render_as_string(hide_password=False))
    assert _ids(url, "tagged", where) == _python(TAGGED, get, op, value)


def test_where_into_the_catalog_s_parameters(backend_url: str) -> None:
    """The level catalog's generator parameters (a JSON field of maps), with another
    filter beside."""
    catalog = open_catalog(backend_url)
    try:
        generate_into(catalog, "caves", 2, seed=3, params={"width": 30, "height": 20})
        generate_into(catalog, "cellular", 2, seed=5, params={"width": 40, "height": 25})
        maps = list(catalog.select(MapRecord))
    finally:
        catalog.close()
    wide = sorted(m.id for m in maps if m.parameters["width"] >= 35)
    assert wide and _ids(backend_url, "maps", "parameters.width>=35") == wide
    faithful_caves = sorted(
        m.id for m in maps if m.kind == "caves" and m.parameters.get("mode") == "faithful"
    )
    assert faithful_caves
    assert _ids(backend_url, "maps", "parameters.mode=faithful", "kind=caves") == faithful_caves


@pytest.mark.parametrize(
    ("where", "says"),
    [
        ("meta..size=1", "is no path into a JSON value"),
        ("meta.size[x]=1", "is no path into a JSON value"),
        ("name.x=1", "holds no JSON"),
        ("nope.x=1", "nope"),
        ("meta.size=null", "a missing key matches nothing"),
    ],
)
def test_a_bad_json_where_is_refused_in_one_line(
    sqlite_store: Store, where: str, says: str
) -> None:
    sqlite_store.create(Tagged)
    url = str(sqlite_store.url)
    result = CliRunner().invoke(cli, ["query", "tagged", "--db", url, "-w", where])
    assert result.exit_code != 0
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and says in lines[0], lines

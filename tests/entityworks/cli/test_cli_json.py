"""Standard JSON from ``query --format json|jsonl`` (issue 14): what the command prints parses
with a strict ``json.loads`` and with ``jq``, grids are nested lists (or base64 with dtype and
shape), non-finite floats are strings, and every other value is its registry text."""

from __future__ import annotations

import base64
import csv
import datetime as dt
import decimal
import enum
import io
import json
import math
import os
import shutil
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner, Result

from entityworks import Store
from entityworks.catalog import MapRecord, analyse_entropy, generate_into, open_catalog
from entityworks.cli import cli
from entityworks.cli._jsonout import dumps, json_value, rows_json
from entityworks.errors import UnsupportedTypeError

ROOT = Path(__file__).resolve().parents[3]


def strict(text: str) -> object:
    """json.loads that refuses the NaN / Infinity tokens Python would otherwise accept."""

    def refuse(token: str) -> object:
        raise AssertionError(f"non-standard JSON token {token}")

    return json.loads(text, parse_constant=refuse)


def run(*args: str) -> Result:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, (result.stdout, result.stderr)
    return result


@dataclass
class Reading:
    id: int
    value: float
    raw: bytes
    label: str | None = None


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("json") / "catalog.db"
    store = open_catalog(path)
    generate_into(store, "caves", 2, seed=3, params={"width": 30, "height": 20})
    store.insert_many([analyse_entropy(io.BytesIO(b"\x00" * 1000), name="zeros")[0]])
    store.create(Reading)
    store.insert_many(
        [
            Reading(1, -math.inf, b"\x00\xff", "é ✓"),
            Reading(2, math.inf, b""),
            Reading(3, -0.0, b"abc", None),
            Reading(4, 0.1, b"z", "x"),
        ]
    )
    store.close()
    return path


def test_grids_are_nested_lists_and_the_rest_parses_strictly(db):
    out = run("query", "maps", "--format", "json", "-o", "id", "--db", str(db)).stdout
    rows = strict(out)
    store = Store(db)
    maps = list(store.select(MapRecord, order_by=["id"]))
    store.close()
    assert [r["id"] for r in rows] == [m.id for m in maps]
    for row, record in zip(rows, maps, strict=True):
        assert row["grid"] == record.grid.tolist()  # grid[y][x], height rows of width cells
        assert len(row["grid"]) == 20 and len(row["grid"][0]) == 30
        assert row["created_at"] == record.created_at.isoformat()
        assert row["parameters"] == record.parameters
        assert row["open_ratio"] == record.open_ratio
    assert "<ndarray" not in out


def test_base64_grids_rebuild_exactly(db):
    out = run(
        "query", "maps", "--format", "jsonl", "--arrays", "base64", "-c", "id,grid", "--db", str(db)
    ).stdout
    lines = out.splitlines()
    store = Store(db)
    for line in lines:
        row = strict(line)
        grid = row["grid"]
        array = np.frombuffer(base64.b64decode(grid["base64"]), grid["dtype"]).reshape(
            grid["shape"]
        )
        expected = store.get(MapRecord, row["id"]).grid
        assert array.dtype == expected.dtype and np.array_equal(array, expected)
    store.close()
    assert len(lines) == 2


def test_non_finite_floats_bytes_and_text(db):
    rows = strict(run("query", "reading", "--format", "json", "-o", "id", "--db", str(db)).stdout)
    assert [r["value"] for r in rows] == ["-INF", "INF", -0.0, 0.1]
    assert math.copysign(1, rows[2]["value"]) == -1  # the sign of zero survives
    assert [base64.b64decode(r["raw"]) for r in rows] == [b"\x00\xff", b"", b"abc", b"z"]
    assert rows[0]["label"] == "é ✓" and rows[2]["label"] is None
    assert [float(r["value"]) for r in rows[:2]] == [-math.inf, math.inf]
    empty = run("query", "reading", "-w", "id=99", "--format", "json", "--db", str(db)).stdout
    # JSON Lines of no rows: no line at all (an empty line is no JSON value)
    assert (
        strict(empty) == []
        and run("query", "reading", "-w", "id=99", "--format", "jsonl", "--db", str(db)).stdout
        == ""
    )


def test_csv_json_cells_are_standard_json(db):
    out = run("query", "entropy_reports", "--format", "csv", "--db", str(db)).stdout
    [row] = list(csv.DictReader(io.StringIO(out)))
    assert strict(row["distribution"]) == [1000] + [0] * 255


def test_jq_reads_the_output(db):
    jq = shutil.which("jq")
    if jq is None:
        pytest.skip("jq is not installed")
    script = Path(sys.executable).parent / "entityworks"
    command = [str(script)] if script.exists() else [sys.executable, "-m", "entityworks"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for args, program, expected in (
        (
            ["query", "maps", "-c", "id,grid", "-o", "id", "--format", "json"],
            ["[.[] | .grid | length]"],
            [20, 20],
        ),
        (
            ["query", "reading", "-o", "id", "--format", "jsonl"],
            ["-s", "[.[] | .value]"],
            ["-INF", "INF", -0, 0.1],
        ),
        (["query", "entropy_reports", "--format", "json"], [".[0].distribution[0]"], 1000),
    ):
        produced = subprocess.run(
            [*command, *args, "--db", str(db)],
            capture_output=True,
            env=env,
            timeout=120,
            check=True,
        )
        filtered = subprocess.run(
            [jq, "-c", *program], input=produced.stdout, capture_output=True, timeout=60
        )
        assert filtered.returncode == 0, filtered.stderr
        assert json.loads(filtered.stdout) == expected, filtered.stdout


# -- the encoder itself --------------------------------------------------------------------


class Colour(enum.Enum):
    RED = "red"


class Level(enum.IntEnum):
    LOW = 1


def test_every_registry_type_has_its_xml_text():
    tz = dt.timezone(dt.timedelta(hours=-5, minutes=-30))
    value = {
        "decimal": decimal.Decimal("1.50"),
        "naive": dt.datetime(2026, 1, 2, 3, 4, 5, 6),
        "aware": dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=tz),
        "date": dt.date(2026, 1, 2),
        "time": dt.time(23, 59, 59, 500000),
        "duration": dt.timedelta(days=1, hours=2, seconds=0.5),
        "negative": -dt.timedelta(microseconds=1),
        "uuid": uuid.UUID(int=7),
        "bytes": b"\x00\xff",
        "view": memoryview(b"hi"),
        "floats": [math.nan, math.inf, -math.inf, -0.0, 1e308],
        "enum": Colour.RED,
        "int_enum": Level.LOW,
        "numpy": [np.int64(5), np.float32(0.5), np.bool_(True)],
        "keys": {3: "int key", Colour.RED: "enum key", dt.date(2026, 1, 2): "date key"},
        "tuple": (1, "a"),
    }
    text = dumps(value)
    assert strict(text) == {
        "decimal": "1.50",
        "naive": "2026-01-02T03:04:05.000006",
        "aware": "2026-01-02T03:04:05-05:30",
        "date": "2026-01-02",
        "time": "23:59:59.500000",
        "duration": "P1DT2H0M0.5S",
        "negative": "-P0DT0H0M0.000001S",
        "uuid": "00000000-0000-0000-0000-000000000007",
        "bytes": "AP8=",
        "view": "aGk=",
        "floats": ["NaN", "INF", "-INF", -0.0, 1e308],
        "enum": "red",
        "int_enum": 1,
        "numpy": [5, 0.5, True],
        "keys": {"3": "int key", "red": "enum key", "2026-01-02": "date key"},
        "tuple": [1, "a"],
    }


def test_arrays_lists_and_base64():
    floats = np.array([[1.5, np.nan], [np.inf, -np.inf]])
    assert json_value(floats) == [[1.5, "NaN"], ["INF", "-INF"]]
    assert json_value(np.array(3.0)) == 3.0 and json_value(np.array(np.nan)) == "NaN"
    assert json_value(np.array(["a", "bc"])) == ["a", "bc"]
    assert json_value(np.zeros((0, 3), np.int16)) == []
    fortran = np.asfortranarray(np.arange(6, dtype=">i4").reshape(2, 3))
    packed = json_value(fortran, arrays="base64")
    assert packed["dtype"] == ">i4" and packed["shape"] == [2, 3]
    rebuilt = np.frombuffer(base64.b64decode(packed["base64"]), packed["dtype"]).reshape(
        packed["shape"]
    )
    assert np.array_equal(rebuilt, fortran)
    complex_ = np.array([1 + 2j])
    with pytest.raises(ValueError, match="no JSON list form; use base64"):
        json_value(complex_)
    assert json_value(complex_, arrays="base64")["dtype"] == "<c16"
    with pytest.raises(ValueError, match="arrays='hex'"):
        dumps(floats, arrays="hex")


def test_unknown_types_are_refused_not_guessed():
    class Opaque:
        pass

    with pytest.raises(UnsupportedTypeError):
        dumps({"x": Opaque()})


def test_rows_json_layout():
    assert rows_json(["a", "b"], [(1, math.inf), (2, None)]) == (
        '[\n  {"a": 1, "b": "INF"},\n  {"a": 2, "b": null}\n]'
    )
    assert rows_json(["a"], [(1,), (2,)], lines=True) == '{"a": 1}\n{"a": 2}'
    assert rows_json(["a"], []) == "[]"

"""The catalog builds each row one way: ``map_record`` is made of ``map_values``, whose
field orders (``MAP_FIELDS``, ``CHILD_FIELDS``) are the schema's. Each value is checked
against what the generator's result says, by name, so a value put in another field's place
(an order that drifted) fails here, and the two forms encode to the same bytes."""

from __future__ import annotations

import datetime as dt
from typing import Any

import numpy as np
import pytest

from entityworks.catalog._build import (
    CHILD_FIELDS,
    MAP_FIELDS,
    build_outcome,
    map_record,
    map_stats,
    map_values,
)
from entityworks.catalog._models import MapRecord
from entityworks.catalog.kinds import map_kind
from entityworks.sql.encoded import encode_rows, encode_values, fields

KINDS = ["caves", "dungeon", "islands", "labyrinth", "cellular"]
SMALL: dict[str, dict[str, Any]] = {
    "caves": {"width": 60, "height": 40},
    "dungeon": {"width": 60, "height": 40},
}


def _result(kind: str, seed: int) -> tuple[Any, str]:
    spec = map_kind(kind)
    return spec.function()(**SMALL.get(kind, {}), **dict(spec.fixed), seed=seed), spec.module


def test_the_orders_are_the_schemas() -> None:
    assert fields(MapRecord) == MAP_FIELDS
    for name, order in CHILD_FIELDS.items():
        assert fields(MapRecord, name) == order


@pytest.mark.parametrize("kind", KINDS)
def test_each_value_is_in_its_own_field(kind: str) -> None:
    for seed in (1, 2):
        result, module = _result(kind, seed)
        row, children = map_values(result, kind=kind, generator=module)
        named = dict(zip(MAP_FIELDS, row, strict=True))
        grid = np.ascontiguousarray(result.grid, dtype=np.uint8)
        ratio, regions, largest = map_stats(grid)
        success, asked, built, connected = build_outcome(result, regions)
        expected = {
            "id": None,
            "kind": kind,
            "generator": module,
            "parameters": dict(result.params),
            "seed": seed,
            "width": grid.shape[1],
            "height": grid.shape[0],
            "open_ratio": ratio,
            "region_count": regions,
            "largest_region": largest,
            "build_success": success,
            "rooms_asked": asked,
            "rooms_built": built,
            "connected": connected,
        }
        assert {k: named[k] for k in expected} == expected
        assert np.array_equal(named["grid"], grid)
        assert isinstance(named["created_at"], dt.datetime)

        record = map_record(result, kind=kind, generator=module)
        assert {k: getattr(record, k) for k in expected} == expected
        assert np.array_equal(record.grid, grid)

        caves = [
            {"number": c.id, "cells": c.cells, "x": c.bbox[0], "y": c.bbox[1]}
            for c in getattr(result, "caves", [])
        ]
        assert [
            {k: getattr(c, k) for k in ("number", "cells", "x", "y")} for c in record.caves
        ] == (caves)
        assert [
            {k: v for k, v in zip(CHILD_FIELDS["caves"], c, strict=True) if k in caves[0]}
            for c in children["caves"]
        ] == caves
        rooms = [(r.x, r.y, r.width, r.height) for r in getattr(result, "rooms", [])]
        assert [(r.x, r.y, r.width, r.height) for r in record.rooms] == rooms
        paths = [[[int(x), int(y)] for x, y in p] for p in getattr(result, "corridors", [])]
        paths = [p for p in paths if p]
        assert [c.path for c in record.corridors] == paths
        assert [(c.length, c.start_x, c.start_y, c.end_x, c.end_y) for c in record.corridors] == [
            (len(p), *p[0], *p[-1]) for p in paths
        ]
        values = [
            dict(zip(CHILD_FIELDS["corridors"], c, strict=True)) for c in children["corridors"]
        ]
        assert [[[int(x), int(y)] for x, y in v["path"]] for v in values] == paths
        assert [v["length"] for v in values] == [len(p) for p in paths]


@pytest.mark.parametrize("kind", KINDS)
def test_both_forms_encode_to_the_same_bytes(kind: str) -> None:
    result, module = _result(kind, 3)
    row, children = map_values(result, kind=kind, generator=module)
    record = map_record(result, kind=kind, generator=module)
    record.created_at = dict(zip(MAP_FIELDS, row, strict=True))["created_at"]
    direct = encode_values(MapRecord, [row], {name: [items] for name, items in children.items()})
    objects = encode_rows([record])
    assert direct.layout == objects.layout
    assert direct.rows == objects.rows
    assert direct.children == objects.children

"""Compact forms of grids and point paths: exact round trips (dtype, shape, values, sign of
zero), the packed size, legacy ``.npy`` blobs, and the registry entries every layer uses."""

from __future__ import annotations

import io
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from entityworks.catalog import decode_grid
from entityworks.catalog.packing import (
    PackedGrid,
    PointPath,
    pack_grid,
    pack_points,
    unpack_grid,
    unpack_points,
)
from entityworks.errors import UnsupportedTypeError
from entityworks.registry import registry
from generators.maps import caves, dungeon

DTYPES = ["|b1", "|u1", "|i1", "<u2", "<i2", "<i4", ">i4", "<u8", "<i8", "<f4", "<f8", ">f8"]


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return (
        a.dtype == b.dtype
        and a.shape == b.shape
        and a.tobytes() == np.ascontiguousarray(b).tobytes()
    )


@settings(max_examples=200, deadline=None)
@given(
    hnp.arrays(
        st.sampled_from(DTYPES).map(np.dtype),
        hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=9),
    )
)
def test_any_array_round_trips_exactly(array):
    assert _same(unpack_grid(pack_grid(array)), array)


@settings(max_examples=100, deadline=None)
@given(
    st.sampled_from(["|b1", "|u1", "<i2", "<u8", "<i8"]),
    st.tuples(st.integers(1, 40), st.integers(1, 40)),
    st.data(),
)
def test_two_valued_grids_are_bit_packed(dtype, shape, data):
    info = np.iinfo(dtype) if dtype != "|b1" else None
    values = (
        [False, True]
        if info is None
        else data.draw(
            st.lists(
                st.integers(int(info.min), min(int(info.max), 2**63 - 1)), min_size=2, max_size=2
            )
        )
    )
    picks = data.draw(hnp.arrays(np.bool_, shape))
    grid = np.where(picks, values[1], values[0]).astype(dtype)
    blob = pack_grid(grid)
    assert blob[0] == 1 and len(blob) == 3 + 8 + 16 + (grid.size + 7) // 8
    assert _same(unpack_grid(blob), grid)


def test_a_150x150_dungeon_packs_to_an_eighth():
    grid = dungeon.generate(seed=1).grid
    blob = pack_grid(grid)
    assert blob[0] == 1 and len(blob) == 3 + 8 + 16 + 150 * 150 // 8 + 1
    deflated = bytes([3]) + blob[1:27] + zlib.compress(blob[27:])  # the read-only form 3
    assert np.array_equal(unpack_grid(deflated), grid)
    back = unpack_grid(blob)
    assert back.dtype == np.uint8 and np.array_equal(back, grid) and back.flags.writeable


def test_sign_of_zero_and_nan_survive_the_general_form():
    grid = np.array([[0.0, -0.0], [np.nan, 1.5]])
    back = unpack_grid(pack_grid(grid))
    assert np.signbit(back[0, 1]) and not np.signbit(back[0, 0]) and np.isnan(back[1, 0])


def test_legacy_npy_bytes_and_damaged_blobs():
    grid = caves.generate(30, 20, seed=2).grid
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, grid, allow_pickle=False)
    assert np.array_equal(decode_grid(buffer.getvalue()), grid)
    assert np.array_equal(decode_grid(memoryview(pack_grid(grid))), grid)
    noise = np.random.default_rng(1).integers(0, 2, (20, 30), dtype=np.uint8)
    with pytest.raises(ValueError, match="needs 75 bytes, got 74"):
        unpack_grid(pack_grid(noise)[:-1])
    with pytest.raises(ValueError, match="not a packed grid"):
        unpack_grid(b"\x07abc")
    huge = io.BytesIO()
    np.lib.format.write_array(huge, np.zeros((30, 40), np.uint8), allow_pickle=False)
    crafted = huge.getvalue().replace(b"(30, 40), }" + b" " * 6, b"(900000, 900000)}")
    with pytest.raises(ValueError, match=r"claims shape \(900000, 900000\)"):
        decode_grid(crafted)
    with pytest.raises(ValueError, match="inflates past"):
        decode_grid(bytes([3]) + pack_grid(noise)[1:27] + zlib.compress(b"\0" * 10_000))
    with pytest.raises(ValueError, match="Python objects"):
        pack_grid(np.array([object()]))
    with pytest.raises(ValueError, match="expected a numpy.ndarray"):
        pack_grid([[0, 1]])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(-(2**63), 2**63 - 1), st.integers(-(2**63), 2**63 - 1)), max_size=20
    )
)
def test_any_point_path_round_trips(points):
    path = [list(p) for p in points]
    back = unpack_points(pack_points(path))
    assert back == path and all(type(v) is int for p in back for v in p)


@settings(max_examples=100, deadline=None)
@given(
    st.integers(-1000, 1000),
    st.integers(-1000, 1000),
    st.lists(st.sampled_from([(1, 0), (0, 1), (-1, 0), (0, -1)]), max_size=300),
)
def test_unit_step_paths_take_two_bits_a_step(x, y, steps):
    path = [[x, y]]
    for dx, dy in steps:
        path.append([path[-1][0] + dx, path[-1][1] + dy])
    blob = pack_points(path)
    assert blob[0] == 1 and len(blob) <= 1 + 2 + 2 + 2 + (len(steps) + 3) // 4
    assert unpack_points(blob) == path


def _steps_by_hand(path: list[list[int]]) -> bytes | None:
    """The two-bits-a-step form written out step by step (the known answer), or None when
    the path is not made of unit steps."""
    codes = {(1, 0): 0, (0, 1): 1, (-1, 0): 2, (0, -1): 3}
    steps = [
        codes.get((b[0] - a[0], b[1] - a[1])) for a, b in zip(path[:-1], path[1:], strict=True)
    ]
    if None in steps or not path:
        return None
    out = bytearray([1])
    for value in (path[0][0], path[0][1], len(steps)):
        value = (value << 1) ^ (value >> 127)  # zigzag, then 7 bits a byte
        while value >= 0x80:
            out.append((value & 0x7F) | 0x80)
            value >>= 7
        out.append(value)
    steps += [0] * (-len(steps) % 4)
    for i in range(0, len(steps), 4):
        a, b, c, d = steps[i : i + 4]
        out.append(a << 6 | b << 4 | c << 2 | d)
    return bytes(out)


EDGES = [0, 1, -1, 2**62, -(2**62), 2**62 + 1, 2**63 - 1, -(2**63), 2**63 - 3]


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(st.sampled_from(EDGES), st.integers(-(2**63), 2**63 - 1)),
    st.sampled_from(EDGES),
    st.lists(
        st.sampled_from(
            [
                (1, 0),
                (0, 1),
                (-1, 0),
                (0, -1),
                (1, 0),
                (0, -1),
                (0, 0),
                (1, 1),
                (2, 0),
                (0, -255),
                (256, 0),
            ]
        ),
        max_size=40,
    ),
    st.booleans(),
)
def test_packed_paths_equal_the_form_written_by_hand(x, y, steps, tuples):
    """Every path, made of unit steps or not, near the 64-bit limits or not: the packed form
    is the step-by-step one, or the pairs form, or a refusal when a point leaves 64 bits."""
    path = [[x, y]]
    for dx, dy in steps:
        path.append([path[-1][0] + dx, path[-1][1] + dy])
    given_path = [tuple(p) for p in path] if tuples else path
    if not all(-(2**63) <= v < 2**63 for p in path for v in p):
        with pytest.raises(ValueError, match="fit 64 bits"):
            pack_points(given_path)
        return
    blob = pack_points(given_path)
    expected = _steps_by_hand(path)
    assert blob == (
        expected
        if expected is not None
        else bytes([2]) + b"".join(v.to_bytes(8, "little", signed=True) for p in path for v in p)
    )
    assert unpack_points(blob) == path


def test_corridors_of_a_real_dungeon_are_small():
    corridors = dungeon.generate(seed=1).corridors
    blobs = [pack_points([list(map(int, p)) for p in c]) for c in corridors]
    assert all(b[0] == 1 for b in blobs)  # every corridor is made of unit steps
    assert sum(map(len, blobs)) < 6 * len(corridors) + sum(len(c) for c in corridors) // 4


@pytest.mark.parametrize(
    "bad, message",
    [
        ([[1, 2, 3]], "not an \\[x, y\\] pair"),
        ([[1.5, 2]], "must be integers"),
        ([[True, 2]], "must be integers"),
        ("12", "expected a list"),
        ([[2**64, 0]], "fit 64 bits"),
    ],
)
def test_bad_paths_are_refused(bad, message):
    with pytest.raises(ValueError, match=message):
        pack_points(bad)


def test_registry_entries_feed_sql_arrow_and_xml():
    grid_info = registry.lookup(PackedGrid)
    path_info = registry.lookup(PointPath)
    assert (grid_info.name, grid_info.xsd, path_info.name, path_info.xsd) == (
        "PackedGrid",
        "xs:base64Binary",
        "PointPath",
        "xs:string",
    )
    grid = dungeon.generate(40, 30, seed=4).grid
    assert np.array_equal(grid_info.from_db(grid_info.to_db(grid)), grid)
    assert np.array_equal(grid_info.from_text(grid_info.to_text(grid)), grid)
    assert np.array_equal(grid_info.from_arrow(grid_info.to_arrow(grid)), grid)
    path = [[1, 2], [2, 2], [2, 3]]
    assert path_info.to_text(path) == "[[1,2],[2,2],[2,3]]"  # XML keeps readable JSON
    assert path_info.from_text("[[1,2],[2,2],[2,3]]") == path
    assert path_info.from_db(path_info.to_db(path)) == path
    assert registry.lookup(np.ndarray).name == "ndarray"  # plain arrays keep .npy


def test_packing_registers_its_entries_on_any_registry():
    """The core registry knows no maps: a registry built from the defaults reads a packed grid
    as a plain array until ``packing.register`` adds the map types, as importing packing did
    for the default registry."""
    from entityworks.catalog import packing
    from entityworks.types.default import default_registry

    fresh = default_registry()
    assert fresh.lookup(PackedGrid).name == "ndarray"  # its base type, .npy bytes
    assert fresh.lookup(PointPath).name == "list[list[int]]"  # plain JSON
    before = fresh.generation
    packing.register(fresh)
    assert fresh.generation > before  # schemas built before are stale
    assert (fresh.lookup(PackedGrid).name, fresh.lookup(PointPath).name) == (
        "PackedGrid",
        "PointPath",
    )
    assert fresh.lookup(PackedGrid).encoded_as == "packed bytes"
    assert registry.copy().lookup(PointPath).name == "PointPath"  # copies keep them


def test_packed_grid_names_numpy_s_array_without_importing_numpy():
    """``PackedGrid``'s base is ``numpy.ndarray`` named (:class:`ClassByName`): the registry
    loads it only where no entry answers the marker, and a fresh interpreter that imports the
    catalog's models and builds their schemas has not imported NumPy."""
    import subprocess
    import sys
    import typing

    from entityworks.registry import ClassByName, runtime_base
    from entityworks.types.default import default_registry

    base = typing.get_args(PackedGrid)[0]
    assert base == ClassByName("numpy", "ndarray") and hash(base) == hash(
        ClassByName("numpy", "ndarray")
    )
    assert repr(base) == "numpy.ndarray" and runtime_base(base) is np.ndarray
    assert runtime_base(int) is int
    assert default_registry().lookup(typing.Annotated[base, "other"]).name == "ndarray"
    with pytest.raises(UnsupportedTypeError, match="names no class"):
        ClassByName("numpy", "pi").load()
    with pytest.raises(ModuleNotFoundError):
        ClassByName("no_such_module_here", "X").load()
    probe = (
        "import sys\n"
        "from entityworks.catalog import TABLES\n"
        "from entityworks.model.schema import table_schema\n"
        "assert all(table_schema(cls).columns for cls in TABLES.values())\n"
        "from entityworks.catalog._models import MapRecord\n"
        "assert table_schema(MapRecord).column('grid').info.name == 'PackedGrid'\n"
        "print('numpy' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=False
    )
    assert (done.returncode, done.stdout.strip()) == (0, "False"), done.stderr

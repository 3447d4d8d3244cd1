"""Crafted ``maps.grid`` blobs: a header claiming a grid larger than any catalog map is refused
from the header alone, before anything is inflated or allocated, wherever a grid is read
(``unpack_grid``, a Store on every backend, the CLI). Memory and time are measured in a child
process, so the figures are the read's own, not the test runner's."""

from __future__ import annotations

import io
import json
import struct
import subprocess
import sys
import textwrap
import zlib
from pathlib import Path

import numpy as np
import pytest
import sqlalchemy as sa

from entityworks import catalog
from entityworks.catalog import _packforms, packing
from entityworks.catalog.packing import pack_grid, unpack_grid
from entityworks.errors import ValueEncodingError

#: Peak resident memory allowed for a child that reads one crafted blob (the interpreter,
#: numpy and SQLAlchemy take 60-110 MB; the unguarded reads took 0.6-2.7 GB).
PEAK_MB = 200
SIDE = 8192  # 8192 x 8192: four times the catalog's cell limit


def bit_bomb() -> bytes:
    """The deflated bit form (tag 3) of an 8192 x 8192 int64 grid holding 0 and 5: 8 KB."""
    cells = SIDE * SIDE
    head = struct.pack("<BBB", 3, 8, 2) + struct.pack("<2I", SIDE, SIDE)
    return head + struct.pack("<qq", 0, 5) + zlib.compress(b"\x55" * (cells // 8), 9)


def npy_bomb() -> bytes:
    """The deflated ``.npy`` form (tag 2) of 8192 x 8192 zero bytes: 64 KB."""
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": "|u1", "fortran_order": False, "shape": (SIDE, SIDE)}
    )
    deflater = zlib.compressobj(9)
    body = deflater.compress(header.getvalue())
    chunk = bytes(1 << 20)
    for _ in range(SIDE * SIDE // len(chunk)):
        body += deflater.compress(chunk)
    return b"\x02" + body + deflater.flush()


def bare_bits() -> bytes:
    """The plain bit form (tag 1) claiming 65535 x 65535 cells with 3 bytes of bits."""
    return (
        struct.pack("<BBB", 1, 1, 2)
        + struct.pack("<2I", 65535, 65535)
        + struct.pack("<qq", 0, 1)
        + b"\xff\xff\xff"
    )


BOMBS = {"deflated bits": bit_bomb, "deflated npy": npy_bomb, "bare bits": bare_bits}


def run_child(code: str, *args: str) -> dict[str, object]:
    """Run ``code`` in a fresh interpreter; it prints one JSON line, to which the child's
    peak resident memory (MB) is added.

    The peak is ``VmHWM`` of the child's own address space: ``ru_maxrss`` would start at the
    test runner's size, which Linux carries over a fork and an exec.
    """
    prologue = textwrap.dedent("""\
        import json, resource, sys, time
        def peak_mb():
            with open("/proc/self/status") as status:
                line = next(l for l in status if l.startswith("VmHWM:"))
            return int(line.split()[1]) / 1024
        def report(**found):
            found["peak_mb"] = peak_mb()
            print(json.dumps(found))
    """)
    result = subprocess.run(
        [sys.executable, "-c", prologue + textwrap.dedent(code), *args],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    found: dict[str, object] = json.loads(result.stdout.splitlines()[-1])
    return found


@pytest.mark.parametrize("name", list(BOMBS))
def test_a_crafted_header_is_refused_before_inflating(name: str, tmp_path: Path) -> None:
    blob = BOMBS[name]()
    assert len(blob) < 70_000
    path = tmp_path / "blob.bin"
    path.write_bytes(blob)
    found = run_child(
        """
        from entityworks.catalog.packing import unpack_grid
        data = open(sys.argv[1], "rb").read()
        start = time.perf_counter()
        try:
            grid = unpack_grid(data)
            report(error=None, shape=list(grid.shape), seconds=time.perf_counter() - start)
        except Exception as exc:
            report(error=type(exc).__name__, message=str(exc),
                   seconds=time.perf_counter() - start)
    """,
        str(path),
    )
    assert found["error"] == "GridTooLarge", found
    assert "more than the 16,777,216 cells (4096x4096)" in str(found["message"])
    assert float(found["peak_mb"]) < PEAK_MB, found  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="more than the 16,777,216 cells"):
        unpack_grid(blob)
    with pytest.raises(ValueError, match="grid of"):
        catalog.decode_grid(blob)


@pytest.mark.parametrize(
    ("blob", "message"),
    [
        (
            bytes([3, 1, 2])
            + struct.pack("<2I", 4, 4)
            + struct.pack("<qq", 0, 1)
            + b"not deflated",
            "does not inflate",
        ),
        (b"\x02not deflated", "does not inflate"),
        (bytes([1, 1, 200]), "ends inside its header"),
        (
            bytes([1, 99, 2]) + struct.pack("<2I", 4, 4) + struct.pack("<qq", 0, 1) + b"ab",
            "unknown dtype code 99",
        ),
    ],
    ids=["bits not deflated", "npy not deflated", "short header", "dtype code"],
)
def test_a_damaged_blob_is_a_value_error(blob: bytes, message: str) -> None:
    """What the readers turn into one clean error (the CLI's line, the web's 500): never a
    zlib, struct or index error from inside the decoder."""
    with pytest.raises(ValueError, match=message):
        unpack_grid(blob)


def _catalog_with_bomb(url: str) -> None:
    store = catalog.open_catalog(url)
    try:
        catalog.generate_into(store, "caves", 2, seed=1)
    finally:
        store.close()
    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(sa.text("UPDATE maps SET grid = :grid WHERE id = 1"), {"grid": bit_bomb()})
    finally:
        engine.dispose()


def test_store_and_catalog_reads_of_a_crafted_grid_are_refused(backend_url: str) -> None:
    _catalog_with_bomb(backend_url)
    found = run_child(
        """
        from entityworks import Store
        from entityworks.catalog import MapRecord, load_grid, load_map
        store = Store(sys.argv[1])
        out = {}
        for name, read in (("load_grid", lambda: load_grid(store, 1)),
                           ("load_map", lambda: load_map(store, 1)),
                           ("select", lambda: list(store.select(MapRecord)))):
            start = time.perf_counter()
            try:
                read()
                out[name] = [None, time.perf_counter() - start]
            except ValueError as exc:
                # a Store read names the row and column (StoredValueError) of the cause
                cause = exc.__cause__ or exc.__context__
                named = type(cause).__name__ if type(exc).__name__ == "StoredValueError" \
                    else type(exc).__name__
                out[name] = [named, time.perf_counter() - start]
        out["other map"] = load_grid(store, 2).shape[0] > 0  # the catalog stays readable
        store.close()
        report(**out)
    """,
        backend_url,
    )
    for name in ("load_grid", "load_map", "select"):
        error, seconds = found[name]  # type: ignore[misc]
        assert error == "GridTooLarge", (name, found)
    assert found["other map"] is True
    assert float(found["peak_mb"]) < PEAK_MB, found  # type: ignore[arg-type]


def test_cli_render_refuses_a_crafted_grid_with_one_line(tmp_path: Path) -> None:
    db = tmp_path / "bomb.db"
    _catalog_with_bomb(f"sqlite:///{db}")
    found = run_child(
        """
        import subprocess
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "entityworks", "render", "1", "--db",
                               sys.argv[1], "--png", sys.argv[2]], capture_output=True,
                              text=True)
        seconds = time.perf_counter() - start
        # this small parent's own size when it started the child, or the child's peak
        child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(json.dumps({"status": done.returncode, "stderr": done.stderr,
                          "seconds": seconds, "peak_mb": child, "parent_mb": peak_mb()}))
    """,
        str(db),
        str(tmp_path / "out.png"),
    )
    assert found["status"] == 2, found
    stderr = str(found["stderr"])
    assert stderr.startswith("error: ") and len(stderr.splitlines()) == 1, stderr
    assert "8192x8192" in stderr and "Traceback" not in stderr
    assert not (tmp_path / "out.png").exists()
    assert float(found["peak_mb"]) < PEAK_MB, found  # type: ignore[arg-type]
    assert float(found["seconds"]) < 30  # start-up included; the unguarded read took longer


def test_the_grid_limit_is_the_catalog_map_limit() -> None:
    assert packing.MAX_GRID_CELLS == catalog.MAX_MAP_CELLS == 4096 * 4096
    rng = np.random.default_rng(3)
    full = (rng.random((4096, 4096)) < 0.4).astype(np.uint8)  # the largest map: still read
    back = unpack_grid(pack_grid(full))
    assert back.dtype == np.uint8 and np.array_equal(back, full)
    three = np.zeros((2048, 8192), np.uint16)
    three[0, :3] = (1, 2, 3)  # three values: the general (.npy) form, at the limit
    assert pack_grid(three)[0] == 2 and np.array_equal(unpack_grid(pack_grid(three)), three)
    for over in (
        np.zeros((4097, 4096), np.uint8),
        np.zeros((4096, 4097), np.float32),
        np.zeros((2, 4096, 4096), bool),
    ):
        with pytest.raises(packing.GridTooLarge, match="more than the 16,777,216 cells"):
            pack_grid(over)  # never written: it could not be read back


def test_a_grid_over_the_limit_is_refused_by_the_store_and_nothing_is_written(store) -> None:
    catalog.open_catalog(store)
    grid = np.zeros((4097, 4096), np.uint8)
    record = catalog.MapRecord(
        id=None,
        kind="caves",
        generator="x",
        parameters={},
        seed=1,
        width=4096,
        height=4097,
        open_ratio=1.0,
        region_count=1,
        largest_region=1,
        grid=grid,
    )
    with pytest.raises(ValueEncodingError, match="(?s)column 'grid'.*4097x4096 grid"):
        store.insert(record)
    assert store.count(catalog.MapRecord) == 0


# -- a clearance that can never fit: refused before its disk is built -----------------------


def test_a_clearance_wider_than_any_map_is_refused_before_allocating(tmp_path: Path) -> None:
    from generators.maps import placement

    grid = np.zeros((30, 60), np.uint8)
    assert not placement.clear_cells(grid, 40_000_000).any()
    assert placement.clear_cells(grid, 14).any()  # 29 cells across: fits in 30 rows
    assert not placement.clear_cells(grid, 15).any()  # 31 across: off the map is wall
    with pytest.raises(ValueError, match="31 cells across, more than the 60x30 map"):
        placement.place(grid, 1, 15)
    db = tmp_path / "levels.db"
    store = catalog.open_catalog(db)
    try:
        catalog.generate_into(store, "caves", 1, seed=1)
    finally:
        store.close()
    found = run_child(
        """
        import subprocess
        done = subprocess.run([sys.executable, "-m", "entityworks", "place", "1",
                               "--clearance", "40000000", "--db", sys.argv[1]],
                              capture_output=True, text=True)
        child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(json.dumps({"status": done.returncode, "stderr": done.stderr,
                          "peak_mb": child}))
    """,
        str(db),
    )
    assert found["status"] == 2, found
    assert float(found["peak_mb"]) < PEAK_MB, found  # type: ignore[arg-type]
    store = catalog.open_catalog(db)
    try:
        record = catalog.load_map(store, 1)
    finally:
        store.close()
    assert record is not None and record.placements == []
    assert found["stderr"] == (
        "error: map 1: cannot place 2 point(s) with clearance 40000000: a clear disk of that "
        f"radius is 80000001 cells across, more than the {record.width}x{record.height} map "
        "holds\n"
    ), found


def path_bombs() -> dict[str, bytes]:
    """Corridor blobs of 8M unit steps (2 MB) and of 1M + 1 point pairs (16 MB): as Python
    lists they would take about 800 MB and 110 MB."""

    def varint(value: int) -> bytes:
        value = (value << 1) ^ (value >> 127)
        out = bytearray()
        while value >= 0x80:
            out.append((value & 0x7F) | 0x80)
            value >>= 7
        return bytes(out + bytes([value]))

    steps = 1 << 23
    stepped = bytes([_packforms._STEPS]) + varint(0) + varint(0) + varint(steps) + bytes(steps // 4)
    pairs = bytes([_packforms._PAIRS]) + bytes(16 * (packing.MAX_PATH_POINTS + 1))
    return {"steps": stepped, "pairs": pairs}


@pytest.mark.parametrize("form", ["steps", "pairs"])
def test_a_path_longer_than_the_limit_is_refused_before_any_point_is_built(
    form: str, tmp_path: Path
) -> None:
    path = tmp_path / "path.bin"
    path.write_bytes(path_bombs()[form])
    found = run_child(
        """
        from entityworks.catalog.packing import unpack_points, unpack_points_many
        data = open(sys.argv[1], "rb").read()
        start = time.perf_counter()
        errors = []
        for read in (unpack_points, lambda b: unpack_points_many([b] * 8)):
            try:
                read(data)
                errors.append(None)
            except Exception as exc:
                errors.append(type(exc).__name__ + ": " + str(exc))
        report(errors=errors, seconds=time.perf_counter() - start)
    """,
        str(path),
    )
    for error in found["errors"]:  # type: ignore[union-attr]
        assert error is not None and error.startswith("PathTooLong"), found
        assert "1,048,576 points a stored path may have" in error
    assert float(found["peak_mb"]) < PEAK_MB, found  # type: ignore[arg-type]


def test_a_path_over_the_limit_is_not_written() -> None:
    longest = [[0, i] for i in range(packing.MAX_PATH_POINTS)]
    assert packing.unpack_points(packing.pack_points(longest)) == longest
    with pytest.raises(packing.PathTooLong, match="1,048,577 points"):
        packing.pack_points([*longest, [0, packing.MAX_PATH_POINTS]])

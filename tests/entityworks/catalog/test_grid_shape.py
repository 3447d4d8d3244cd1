"""A ``maps`` row whose grid claims another size than the row's ``width`` x ``height``
(issue 29, item 6): a 2 KB blob claiming 4096x4096 in a 30x20 row. Within the catalog's cell
limit, so the size check alone let it through, and ``render`` drew a 1 GB picture of it.

The shape a blob claims is read from its header alone (:func:`packing.grid_shape`, compared
here with what :func:`packing.unpack_grid` really gives), and every catalog reader and writer
refuses a grid that is not its row's size, naming the map, before unpacking it: memory is
measured with ``tracemalloc`` (NumPy reports its buffers to it) around the read.
"""

from __future__ import annotations

import io
import os
import pty
import sqlite3
import struct
import subprocess
import sys
import time
import tracemalloc
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import sqlalchemy as sa
from click.testing import CliRunner

from entityworks import Store, catalog
from entityworks.catalog import MapRecord, packing
from entityworks.catalog.packing import GridShapeMismatch, grid_shape, pack_grid, unpack_grid
from entityworks.cli import cli
from tests.entityworks.catalog.test_security_blobs import run_child

SIDE = 4096  # the largest grid a catalog map may have: the size limit alone lets it pass
ROW = {"width": 30, "height": 20}
#: Bytes a refused read may allocate (the blob as the driver fetches it: up to twice its
#: 2 MB, the row): unpacking the claimed grid allocates 16 MB more (1 byte a cell), and
#: rendering it 1 GB.
SMALL = 8 << 20


def deflated_bits() -> bytes:
    """Tag 3 (deflated bits) of a 4096 x 4096 grid of zeros: about 2 KB."""
    packed = pack_grid(np.zeros((SIDE, SIDE), np.uint8))
    head = 3 + 4 * 2 + 16
    return bytes([3]) + packed[1:head] + zlib.compress(packed[head:], 9)


def plain_bits() -> bytes:
    """Tag 1 (the form the catalog writes) of a 4096 x 4096 grid: 2 MB, honest but for the
    row it sits in."""
    return pack_grid(np.ones((SIDE, SIDE), np.uint8))


def deflated_npy() -> bytes:
    """Tag 2 (deflated ``.npy``) of a 4096 x 4096 grid of three values: about 16 KB."""
    grid = np.zeros((SIDE, SIDE), np.uint8)
    grid[0, :3] = (0, 1, 2)
    blob = pack_grid(grid)
    assert blob[0] == 2
    return blob


def plain_npy() -> bytes:
    """The ``.npy`` bytes of catalogs before revision 0005, 4096 x 4096 (16 MB)."""
    buffer = io.BytesIO()
    np.save(buffer, np.zeros((SIDE, SIDE), np.uint8))
    return buffer.getvalue()


LIARS: dict[str, Callable[[], bytes]] = {
    "deflated bits": deflated_bits,
    "bits": plain_bits,
    "deflated npy": deflated_npy,
}


def _peak(read: Callable[[], Any]) -> tuple[BaseException | None, int, float]:
    """``read()``'s exception (None if it returned), peak traced bytes and seconds."""
    tracemalloc.start()
    start = time.perf_counter()
    error: BaseException | None = None
    try:
        read()
    except Exception as exc:  # noqa: BLE001 - returned to the test, which checks its type
        error = exc
    seconds = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return error, peak, seconds


# -- the header alone --------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(20, 30), (1, 1), (7, 300), (1024, 2048)])
@pytest.mark.parametrize("values", [(0, 1), (3, 9), (0, 1, 2)], ids=["0/1", "3/9", "three"])
def test_grid_shape_is_the_shape_unpack_gives(
    shape: tuple[int, int], values: tuple[int, ...]
) -> None:
    rng = np.random.default_rng(sum(shape))
    grid = rng.choice(np.array(values, np.int16), size=shape)
    blobs = [pack_grid(grid)]
    if blobs[0][0] == 1:  # also the deflated bit form (tag 3) older catalogs hold
        head = 3 + 8 + 16
        blobs.append(bytes([3]) + blobs[0][1:head] + zlib.compress(blobs[0][head:]))
    buffer = io.BytesIO()
    np.save(buffer, grid)
    blobs.append(buffer.getvalue())  # plain .npy bytes, before revision 0005
    for blob in blobs:
        error, peak, _ = _peak(lambda b=blob: grid_shape(b))  # type: ignore[misc]
        assert error is None
        assert grid_shape(blob) == unpack_grid(blob).shape == shape
        assert peak < 256 << 10, peak  # the header, not the cells


@pytest.mark.parametrize("name", [*LIARS, "npy"])
def test_a_lying_blob_is_refused_by_decode_grid_before_unpacking(name: str) -> None:
    blob = plain_npy() if name == "npy" else LIARS[name]()
    assert unpack_grid(blob).shape == (SIDE, SIDE)  # the blob itself is a valid grid
    error, peak, seconds = _peak(lambda: catalog.decode_grid(blob, map_id=7, **ROW))
    assert isinstance(error, GridShapeMismatch), error
    assert isinstance(error, ValueError)  # what the plugin's and the CLI's handlers catch
    assert str(error).startswith("map 7: its grid is 4096x4096 cells but its row says 30x20")
    assert peak < SMALL, peak
    good = pack_grid(np.zeros((20, 30), np.uint8))
    assert catalog.decode_grid(good, map_id=7, **ROW).shape == (20, 30)
    with pytest.raises(
        GridShapeMismatch, match="map 8: its grid is 30x20 cells but its row says 20x30"
    ):
        catalog.decode_grid(good, width=20, height=30, map_id=8)  # width and height swapped


# -- a planted row on every backend ----------------------------------------------------------


def _plant(url: str, blob: bytes, map_id: int = 1) -> None:
    """Overwrite map ``map_id``'s grid behind the Store's back: sqlite3 itself for SQLite,
    a plain SQL UPDATE for the servers."""
    if url.startswith("sqlite"):
        path = sa.make_url(url).database
        assert path
        with sqlite3.connect(path) as conn:
            conn.execute("UPDATE maps SET grid = ? WHERE id = ?", (blob, map_id))
        conn.close()
        return
    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(
                sa.text("UPDATE maps SET grid = :grid WHERE id = :id"), {"grid": blob, "id": map_id}
            )
    finally:
        engine.dispose()


def _small_catalog(url: str) -> None:
    store = catalog.open_catalog(url)
    try:
        catalog.generate_into(store, "caves", 2, seed=1, params=dict(ROW))
    finally:
        store.close()


@pytest.mark.parametrize("name", list(LIARS))
def test_catalog_reads_refuse_a_planted_lying_grid(backend_url: str, name: str) -> None:
    _small_catalog(backend_url)
    _plant(backend_url, LIARS[name]())
    store = Store(backend_url)
    try:
        for read in (lambda: catalog.load_grid(store, 1), lambda: catalog.load_map(store, 1)):
            error, peak, seconds = _peak(read)
            assert isinstance(error, GridShapeMismatch), error
            assert str(error).startswith(
                "map 1: its grid is 4096x4096 cells but its row says 30x20"
            )
            assert peak < SMALL, (name, peak)  # refused from the header: nothing unpacked
        # every other reader builds MapRecord, which refuses the row as well
        with pytest.raises(GridShapeMismatch, match="^map 1: its grid is 4096x4096"):
            list(store.select(MapRecord))
        with pytest.raises(GridShapeMismatch, match="^map 1: "):
            catalog.find_maps(store, kind="caves")
        other = catalog.load_grid(store, 2)  # the rest of the catalog stays readable
        assert other is not None and other.shape == (20, 30)
        assert catalog.load_map(store, 3) is None and catalog.load_grid(store, 3) is None
    finally:
        store.close()


def test_a_row_edited_to_another_size_is_refused(backend_url: str) -> None:
    """The other way round: the grid intact, the row's width edited by another tool."""
    _small_catalog(backend_url)
    engine = sa.create_engine(backend_url)
    try:
        with engine.begin() as conn:
            conn.execute(sa.text("UPDATE maps SET width = 4096, height = 4096 WHERE id = 2"))
    finally:
        engine.dispose()
    store = Store(backend_url)
    try:
        with pytest.raises(
            GridShapeMismatch, match="^map 2: its grid is 30x20 cells but its row says 4096x4096"
        ):
            catalog.load_grid(store, 2)
        with pytest.raises(GridShapeMismatch, match="^map 2: "):
            store.get(MapRecord, 2)
        assert catalog.load_map(store, 1).grid.shape == (20, 30)  # type: ignore[union-attr]
    finally:
        store.close()


# -- writes ----------------------------------------------------------------------------------


def _record(grid: np.ndarray, width: int, height: int) -> MapRecord:
    return MapRecord(
        id=None,
        kind="caves",
        generator="x",
        parameters={},
        seed=1,
        width=width,
        height=height,
        open_ratio=1.0,
        region_count=1,
        largest_region=1,
        grid=grid,
    )


def test_a_map_whose_grid_is_not_its_size_is_never_written(store: Store) -> None:
    catalog.open_catalog(store)
    with pytest.raises(
        GridShapeMismatch, match="^a new map: its grid is 4096x4096 cells but its row says 30x20"
    ):
        _record(np.zeros((SIDE, SIDE), np.uint8), 30, 20)
    good = _record(np.zeros((20, 30), np.uint8), 30, 20)
    store.insert(good)
    assert store.count(MapRecord) == 1
    with pytest.raises(GridShapeMismatch):
        catalog.save_maps(
            store,
            [_record(np.zeros((20, 30), np.uint8), 30, 20) for _ in range(2)]
            + [_record(np.zeros((30, 20), np.uint8), 30, 20)],
        )
    assert store.count(MapRecord) == 1
    changed = _record(np.zeros((20, 30), np.uint8), 30, 20)
    changed.width = 4096  # after it was built: the catalog's writer checks again
    with pytest.raises(
        GridShapeMismatch, match="^a new map: its grid is 30x20 cells but its row says 4096x20"
    ):
        catalog.save_maps(store, [changed])
    assert store.count(MapRecord) == 1
    back = catalog.load_map(store, good.id)  # type: ignore[arg-type]
    assert back is not None and back.grid.shape == (20, 30)


def test_an_import_of_a_map_row_of_another_size_writes_nothing(tmp_path: Path) -> None:
    """``export-xml`` a catalog, edit one row's width in the XML as another tool would, and
    ``import-xml`` it: refused, naming the map, and no database is left behind."""
    db = tmp_path / "levels.db"
    _small_catalog(f"sqlite:///{db}")
    runner = CliRunner()
    done = runner.invoke(cli, ["export-xml", "maps", str(tmp_path / "maps.xml"), "--db", str(db)])
    assert done.exit_code == 0, done.output
    text = (tmp_path / "maps.xml").read_text(encoding="utf-8")
    assert text.count("<width>30</width>") == 2
    (tmp_path / "maps.xml").write_text(
        text.replace("<width>30</width>", "<width>31</width>", 1), encoding="utf-8"
    )
    target = tmp_path / "copy.db"
    done = runner.invoke(
        cli,
        [
            "import-xml",
            str(tmp_path / "maps.xml"),
            "--xsd",
            str(tmp_path / "maps.xsd"),
            "--db",
            str(target),
        ],
    )
    assert done.exit_code == 2
    assert "map 1: its grid is 30x20 cells but its row says 31x20" in done.stderr
    assert not target.exists()
    # and through the library into an existing catalog: nothing written
    store = catalog.open_catalog(tmp_path / "other.db")
    try:
        with pytest.raises(GridShapeMismatch, match="^map 1: "):
            store.import_xml(MapRecord, tmp_path / "maps.xml", tmp_path / "maps.xsd")
        assert store.count(MapRecord) == 0
    finally:
        store.close()


def test_copy_refuses_a_catalog_holding_a_lying_grid(tmp_path: Path) -> None:
    source = f"sqlite:///{tmp_path / 'source.db'}"
    _small_catalog(source)
    _plant(source, deflated_bits(), map_id=2)
    src, dst = Store(source), Store(tmp_path / "target.db")
    try:
        with pytest.raises(GridShapeMismatch, match="^map 2: "):
            catalog.copy_catalog(src, dst)
        assert "maps" not in dst.table_names() or dst.count(MapRecord) == 0
    finally:
        src.close()
        dst.close()


# -- the command line: render, play ----------------------------------------------------------


@pytest.fixture
def planted(tmp_path: Path) -> Path:
    db = tmp_path / "levels.db"
    _small_catalog(f"sqlite:///{db}")
    _plant(f"sqlite:///{db}", deflated_bits())
    return db


def test_render_refuses_a_lying_grid_at_once(planted: Path, tmp_path: Path) -> None:
    outputs = [tmp_path / "map.png", tmp_path / "map.txt", tmp_path / "map.json"]
    found = run_child(
        """
        import subprocess
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "entityworks", "render", "1", "--db",
                               sys.argv[1], "--png", sys.argv[2], "--ascii", sys.argv[3],
                               "--tiled", sys.argv[4]], capture_output=True, text=True)
        seconds = time.perf_counter() - start
        child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print(json.dumps({"status": done.returncode, "stderr": done.stderr,
                          "seconds": seconds, "peak_mb": child}))
    """,
        str(planted),
        *map(str, outputs),
    )
    assert found["status"] == 2, found
    stderr = str(found["stderr"])
    assert (
        stderr.startswith("error: map 1: its grid is 4096x4096 cells but its row says 30x20")
        and len(stderr.splitlines()) == 1
    ), stderr
    assert not any(p.exists() for p in outputs)
    # the interpreter, NumPy and SQLAlchemy: about 100 MB; the unguarded render took 1 GB
    assert float(found["peak_mb"]) < 200, found  # type: ignore[arg-type]
    assert float(found["seconds"]) < 30, found  # type: ignore[arg-type]
    fine = CliRunner().invoke(cli, ["render", "2", "--db", str(planted)])
    assert fine.exit_code == 0 and len(fine.stdout.splitlines()) == 20


@pytest.mark.skipif(sys.platform == "win32", reason="play needs a POSIX terminal")
def test_play_refuses_a_lying_grid_before_the_game_starts(planted: Path) -> None:
    """``play`` runs only on a terminal: it is given a pseudo-terminal, and must end with the
    one-line error before drawing anything."""
    main, child = pty.openpty()
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "entityworks", "play", "1", "--db", str(planted)],
            stdin=child,
            stdout=child,
            stderr=subprocess.PIPE,
            close_fds=True,
        )
        try:
            _, stderr = process.communicate(timeout=60)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    finally:
        os.close(child)
        os.close(main)
    text = stderr.decode()
    assert process.returncode == 2, text
    assert text.startswith("error: map 1: its grid is 4096x4096 cells but its row says 30x20")
    assert len(text.splitlines()) == 1


def test_the_grid_limit_and_the_shape_check_are_one_header_read() -> None:
    """A header over the cell limit is refused as too large (the older message), whatever the
    row says: :func:`grid_shape` applies the limit too."""
    head = struct.pack("<BBB", 3, 1, 2) + struct.pack("<2I", 8192, 8192)
    blob = head + struct.pack("<qq", 0, 1) + zlib.compress(bytes(8192 * 8192 // 8), 9)
    with pytest.raises(packing.GridTooLarge, match="more than the 16,777,216 cells"):
        grid_shape(blob)
    with pytest.raises(packing.GridTooLarge):
        catalog.decode_grid(blob, map_id=1, **ROW)

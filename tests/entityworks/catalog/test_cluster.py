"""Generation and solving on a Dask cluster: a LocalCluster of 2 worker processes, one of
them killed mid-run; the catalog must end up equal to the local run's, nothing twice."""

from __future__ import annotations

import os
import signal
import time
from typing import Any

import numpy as np
import pytest

from entityworks.catalog import (
    MapRecord,
    SudokuPuzzle,
    generate_into,
    generate_maps,
    open_catalog,
    store_sudokus,
)

distributed = pytest.importorskip("distributed")

PARAMS = {"width": 40, "height": 30}


def _cluster() -> Any:
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, scheduler_port=0
    )
    client = distributed.Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


#: The cluster the tests share: no test kills one of its workers.
client = pytest.fixture(scope="module")(_cluster)
#: A cluster of its own for a test that kills a worker: nothing after it waits for the
#: nanny's restart (a new process importing numpy, numba and entityworks took over 240 s
#: once on a loaded two-core machine).
doomed_client = pytest.fixture(_cluster)


def _kill_a_busy_worker(client: Any) -> str:
    """SIGKILL the process of a worker, one holding tasks right now if there is one within a
    few seconds (fast tasks may all be between workers); returns its address."""
    deadline = time.monotonic() + 5
    victim = None
    while victim is None and time.monotonic() < deadline:
        busy = [w for w, tasks in client.processing().items() if tasks]
        victim = busy[0] if busy else None
        time.sleep(0.002)
    victim = victim or sorted(client.nthreads())[0]
    pids = client.run(os.getpid, workers=[victim])
    os.kill(pids[victim], signal.SIGKILL)
    return victim


def _key(m: MapRecord) -> tuple[Any, ...]:
    return (
        m.kind,
        m.seed,
        m.width,
        m.height,
        m.open_ratio,
        m.region_count,
        m.largest_region,
        m.grid.tobytes(),
        [r.__dict__ for r in m.rooms],
        [c.__dict__ for c in m.corridors],
    )


def test_generation_survives_a_killed_worker_and_equals_the_local_run(doomed_client, tmp_path):
    client = doomed_client
    count = 120
    local = [m for chunk in generate_maps("dungeon", count, seed=500, params=PARAMS) for m in chunk]
    store = open_catalog(tmp_path / "cluster.db")
    killed: list[str] = []

    def progress(_n: int) -> None:
        if not killed:  # after the first stored batch, while tasks are running
            killed.append(_kill_a_busy_worker(client))

    from entityworks.catalog import _generate as generate

    batch = generate.STORE_BATCH
    generate.STORE_BATCH = 8  # store often, so the kill lands mid-run
    try:
        stats = generate_into(
            store, "dungeon", count, seed=500, params=PARAMS, client=client, progress=progress
        )
    finally:
        generate.STORE_BATCH = batch
    assert killed, "no worker was killed"
    assert stats.count == count and stats.seeds == (500, 500 + count - 1)
    rows = list(store.select(MapRecord, order_by="id"))
    assert len(rows) == count and len({m.seed for m in rows}) == count  # nothing twice
    assert [m.seed for m in rows] == list(range(500, 500 + count))
    for got, want in zip(rows, local, strict=True):
        assert _key(got) == _key(want)
        assert np.array_equal(got.grid, want.grid)
    store.close()


def test_unseeded_cluster_maps_are_reproducible(client):
    maps = [
        m for chunk in generate_maps("islands", 20, params=PARAMS, client=client) for m in chunk
    ]
    assert len({m.seed for m in maps}) == 20
    again = [
        m
        for chunk in generate_maps("islands", 20, params=PARAMS, client=client, seed=None)
        for m in chunk
    ]
    assert {m.seed for m in again}.isdisjoint({m.seed for m in maps})
    rebuilt = catalog_build(maps[7])
    assert np.array_equal(rebuilt.grid, maps[7].grid)


def catalog_build(m: MapRecord) -> MapRecord:
    from entityworks.catalog import build_map

    return build_map(m.kind, m.seed, PARAMS)


def test_sudoku_on_the_cluster_equals_solve_many_despite_a_killed_worker(doomed_client, tmp_path):
    client = doomed_client
    from entityworks.catalog.cluster import solve_sudokus_on
    from generators import sudoku

    made = [sudoku.generate(24, seed=s) for s in range(120)]
    entries = [sudoku.NamedPuzzle(f"p{i}", m.puzzle, i) for i, m in enumerate(made)]
    entries.append(sudoku.NamedPuzzle("again", made[3].puzzle, 99))
    killed: list[str] = []

    def progress(done: int, _total: int) -> None:
        if not killed and done < len(entries):
            killed.append(_kill_a_busy_worker(client))

    remote = solve_sudokus_on(client, entries, chunk=4, progress=progress)
    assert killed
    assert remote == sudoku.solve_many(entries, workers=1)
    store = open_catalog(tmp_path / "s.db")
    result = store_sudokus(store, "cluster", entries, remote)
    assert (result.stored, result.duplicates) == (120, 1)
    assert store.count(SudokuPuzzle) == 120
    store.close()


def test_bad_arguments_fail_before_anything_runs(client):
    with pytest.raises(ValueError, match="caves has no parameter 'colour'"):
        next(generate_maps("caves", 3, params={"colour": 1}, client=client))
    from entityworks.catalog.cluster import solve_sudokus_on
    from generators import sudoku

    with pytest.raises(sudoku.InvalidPuzzle, match="puzzle #1"):
        solve_sudokus_on(client, ["0" * 81, "11" + "0" * 79])


def test_sudoku_arrays_on_the_cluster_equal_solve_array(client):
    """``arrays=True``: one SolvedArray, row for row what ``solve_array`` gives here (and
    what the objects of the same cluster say), progress up to the whole count."""
    from entityworks.catalog.cluster import solve_sudokus_on
    from generators import sudoku

    puzzles = [sudoku.generate(26, seed=s).puzzle for s in range(20)]
    puzzles += ["123456780" + "0" * 71 + "9", "0" * 81, puzzles[4]]  # none, several, again
    seen: list[tuple[int, int]] = []
    remote = solve_sudokus_on(
        client, puzzles, chunk=4, arrays=True, progress=lambda d, t: seen.append((d, t))
    )
    local = sudoku.solve_array(puzzles, workers=1)
    for name in ("counts", "nodes", "guesses", "grids"):
        got, want = getattr(remote, name), getattr(local, name)
        assert got.dtype == want.dtype and np.array_equal(got, want), name
    assert remote.counts.tolist()[-3:] == [0, 2, 1]
    assert seen[-1] == (len(puzzles), len(puzzles)) and len(seen) == 6
    objects = solve_sudokus_on(client, puzzles, chunk=4)
    assert [s.grid if s else "0" * 81 for s in objects] == remote.text().splitlines()
    assert len(solve_sudokus_on(client, [], arrays=True)) == 0


def test_cli_generate_and_solve_with_cluster(client, tmp_path):
    import subprocess
    import sys

    address = client.scheduler.address
    db = tmp_path / "cli.db"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "entityworks",
            "generate",
            "caves",
            "--count",
            "20",
            "--seed",
            "7",
            "--width",
            "40",
            "--height",
            "30",
            "--cluster",
            address,
            "--db",
            str(db),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "stored 20 caves maps" in done.stdout and f"on {address}" in done.stdout
    store = open_catalog(db)
    local = [m for chunk in generate_maps("caves", 20, seed=7, params=PARAMS) for m in chunk]
    rows = list(store.select(MapRecord, order_by="id"))
    assert [_key(m) for m in rows] == [_key(m) for m in local]
    puzzles = tmp_path / "p.txt"
    from generators import sudoku

    puzzles.write_text("\n".join(sudoku.generate(26, seed=s).puzzle for s in range(6)) + "\n")
    solved = subprocess.run(
        [
            sys.executable,
            "-m",
            "entityworks",
            "sudoku",
            "solve",
            str(puzzles),
            "--cluster",
            address,
            "--db",
            str(db),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert solved.returncode == 0, solved.stderr
    assert "6 solved" in solved.stdout and store.count(SudokuPuzzle) == 6
    store.close()


def test_cli_cluster_that_does_not_answer(tmp_path):
    import subprocess
    import sys

    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "entityworks",
            "generate",
            "caves",
            "--cluster",
            "tcp://127.0.0.1:9",
            "--db",
            str(tmp_path / "x.db"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "error: no Dask scheduler answered at tcp://127.0.0.1:9"
    ), done.stderr

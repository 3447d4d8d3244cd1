"""Generating maps and solving sudokus on a Dask cluster (``pip install "entityworks[dask]"``).

The workers compute and never write: each task generates the maps of a slice of seeds (or
solves a slice of puzzles) and returns them; the client gathers the results in order and
stores them in batches into the catalog (PostgreSQL when several machines share it). That is
what makes a retried task safe: a task is a pure function of its arguments (every map's seed
is fixed before anything is submitted, also when no seed is given), so when a worker dies
and the scheduler runs its tasks again elsewhere, the same maps come back, and the client
stores the result of each slice once. Tasks have deterministic keys made of
``(kind, params, seeds)``, so submitting the same slice twice shares one computation.

Results equal the local run for the same seeds: the same ``catalog.build_map`` runs, on
another machine.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import secrets
from collections import deque
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ..sql.encoded import EncodedRows, encode_rows
from ._build import build_chunk, build_map, check_parameters, encode_chunk
from ._models import MapRecord

#: Maps per task: big enough that scheduling costs little, small enough to balance.
MAP_CHUNK = 16
#: Puzzles per task.
PUZZLE_CHUNK = 64


def connect(address: str, *, timeout: float = 10.0) -> Any:
    """A ``dask.distributed.Client`` for the scheduler at ``address`` (``tcp://host:8786``).

    A clear error when the extra is not installed or the scheduler does not answer.
    """
    try:
        from distributed import Client
    except ImportError:
        raise RuntimeError(
            "--cluster needs dask.distributed: pip install 'entityworks[dask]'"
        ) from None
    try:
        return Client(address, timeout=timeout)  # type: ignore[no-untyped-call]
    except (OSError, TimeoutError) as exc:
        raise OSError(f"no Dask scheduler answered at {address}: {exc}") from None


def _token(*parts: Any) -> str:
    text = json.dumps(parts, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _window(client: Any) -> int:
    """How many tasks to keep in flight: enough to keep every worker thread busy."""
    try:
        threads: int = sum(client.nthreads().values())
    except Exception:  # pragma: no cover - a scheduler that does not say
        threads = 2
    return max(4, 3 * threads)


def _in_order(
    client: Any, function: Any, slices: Sequence[list[Any]], args: tuple[Any, ...], prefix: str
) -> Iterator[Any]:
    """Submit ``function(slice, *args)`` for every slice, a bounded window at a time, and
    yield the results in slice order. Each key names its slice's content, so a task that is
    re-run (a lost worker) or re-submitted computes the same result once."""
    pending: deque[Any] = deque()
    queued = iter(enumerate(slices))
    window = _window(client)

    def submit_more() -> None:
        while len(pending) < window:
            step = next(queued, None)
            if step is None:
                return
            number, part = step
            key = f"{prefix}-{number}-{_token(part, *args)}"
            pending.append(client.submit(function, part, *args, key=key, pure=False, retries=2))

    submit_more()
    try:
        while pending:
            future = pending.popleft()
            result = future.result()
            future.release()
            submit_more()
            yield result
    finally:
        for future in pending:
            future.cancel()


def _maps_task(seeds: list[int], kind: str, params: dict[str, Any]) -> list[MapRecord]:
    return build_chunk(kind, list(seeds), params)


def _encoded_maps_task(seeds: list[int], kind: str, params: dict[str, Any]) -> EncodedRows:
    return encode_chunk(kind, list(seeds), params)


def generate_maps_on(
    client: Any,
    kind: str,
    count: int,
    *,
    seed: int | None = None,
    params: dict[str, Any] | None = None,
    chunk: int = MAP_CHUNK,
    encoded: bool = False,
) -> Iterator[Any]:
    """Like ``catalog.generate_maps``, on the cluster of ``client``: chunks in seed order.

    Without ``seed`` the client draws one seed per map before submitting anything, so that
    a retried task rebuilds exactly the maps it was given. With ``encoded`` each chunk comes
    as the rows the worker encoded (``catalog.generate_encoded``), not as ``MapRecord``
    lists; the tasks then have keys of their own.
    """
    params = dict(params or {})
    check_parameters(kind, params)
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise ValueError(f"count must be an integer >= 0, got {count!r}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    if isinstance(chunk, bool) or not isinstance(chunk, int) or chunk < 1:
        raise ValueError(f"chunk must be an integer >= 1, got {chunk!r}")
    seeds = (
        [seed + i for i in range(count)]
        if seed is not None
        else [secrets.randbits(63) for _ in range(count)]
    )
    if not seeds:
        return
    first = [build_map(kind, seeds[0], params)]  # a bad parameter value fails here, at once
    yield encode_rows(first) if encoded else first
    rest = seeds[1:]
    slices = [rest[i : i + chunk] for i in range(0, len(rest), chunk)]
    if encoded:
        yield from _in_order(
            client, _encoded_maps_task, slices, (kind, params), f"entityworks-encoded-maps-{kind}"
        )
    else:
        yield from _in_order(client, _maps_task, slices, (kind, params), f"entityworks-maps-{kind}")


def _solve_task(puzzles: list[str], prove_unique: bool) -> list[Any]:
    from generators import sudoku

    return [sudoku.solve(p, prove_unique=prove_unique) for p in puzzles]


def _solve_array_task(puzzles: list[str], prove_unique: bool) -> Any:
    from generators import sudoku

    return sudoku.solve_array(puzzles, workers=1, prove_unique=prove_unique)


def solve_sudokus_on(
    client: Any,
    puzzles: Sequence[Any],
    *,
    chunk: int = PUZZLE_CHUNK,
    prove_unique: bool = True,
    progress: Any = None,
    arrays: bool = False,
) -> Any:
    """Like ``generators.sudoku.solve_many``, on the cluster of ``client``: solutions (or
    None) in input order. Puzzles are validated here first, naming the first bad one.

    With ``arrays`` it is ``generators.sudoku.solve_array`` instead: each task solves its
    slice as arrays, and the result is one ``SolvedArray`` of every puzzle, in input order,
    with no ``Solution`` object made anywhere (the tasks then have keys of their own)."""
    from generators import sudoku

    digits = []
    for index, item in enumerate(puzzles):
        try:
            digits.append(sudoku.parse(item.puzzle if hasattr(item, "puzzle") else item))
        except sudoku.InvalidPuzzle as exc:
            raise sudoku.InvalidPuzzle(f"puzzle #{index}: {exc}", exc.cells) from None
    slices = [digits[i : i + chunk] for i in range(0, len(digits), chunk)]
    if arrays:
        parts = [sudoku.solve_array([], workers=1, prove_unique=prove_unique)]
        done = 0
        task, prefix = _solve_array_task, "entityworks-sudoku-arrays"
        for part in _in_order(client, task, slices, (prove_unique,), prefix):
            parts.append(part)
            done += len(part)
            if progress is not None:
                progress(done, len(digits))
        names = [field.name for field in dataclasses.fields(sudoku.SolvedArray)]
        return sudoku.SolvedArray(*(np.concatenate([getattr(p, n) for p in parts]) for n in names))
    out: list[Any] = []
    for part in _in_order(client, _solve_task, slices, (prove_unique,), "entityworks-sudoku"):
        out += part
        if progress is not None:
            progress(len(out), len(digits))
    return out


__all__ = ["MAP_CHUNK", "PUZZLE_CHUNK", "connect", "generate_maps_on", "solve_sudokus_on"]

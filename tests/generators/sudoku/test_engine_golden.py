"""The C engine gives what the numba engine it replaced gave: the same first solutions,
counts, nodes and guesses, and the same generated puzzles for a seed.

The digests below were recorded from the numba engine (commit 0b8eff3, before the port):
per set and configuration, the SHA-256 of the counts (int32), nodes and guesses (int64)
and first-solution grids (ASCII) of the set's first puzzles, and the total nodes and
guesses (which say by how much a digest mismatch is off).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np
import pytest

from generators import sudoku
from generators.sudoku import _engine as engine
from generators.sudoku import _tables as tables

DATA = Path(
    os.environ.get("ENTITYWORKS_DATA_DIR", Path(__file__).resolve().parents[4] / "shared" / "data")
)

#: (file, first n puzzles, engine: "h" bands / "c" cells, limit) -> (digest, nodes, guesses)
GOLDEN = {
    ("top95.txt", 95, "h", 1): (
        "e7371a3801b2ded31b41f690c7a0b27df143769aff73a2619bf069782c935565", 718, 1098),
    ("top95.txt", 95, "h", 2): (
        "b50262b9b8fbfc0b7407948499c7e011466b21bf5679d8580e84f40e473a5ddb", 1197, 2204),
    ("top95.txt", 95, "c", 1): (
        "4a6097fa4cdc5ee20da6d5a78e65a4b1189eab75b9a65cfc5ee33baec79c5ff5", 1170, 1969),
    ("magictour_top1465.txt", 400, "h", 1): (
        "addeeb3118cfee1fefc0bfa1b9821cbb1da0e2ae842e3d9c9db94d6fddfcf493", 3512, 5482),
    ("magictour_top1465.txt", 400, "h", 2): (
        "b08ecc63f718440e28dd5eb936bf3316e7df47f84e8b418869ddc88743c6d7f5", 5468, 10136),
    ("17_clue_first10000.txt", 400, "h", 1): (
        "5671338d37a2a7de1dd07a8b0a53aa5fd16cb90a42d23863a59a2083098312c5", 473, 111),
    ("17_clue_first10000.txt", 400, "h", 2): (
        "9554a68e726245d761e806611db466b0bc66b55b91b206a6255c43756c9a424d", 479, 158),
    ("forum_hardest_1106.txt", 150, "h", 1): (
        "0bafd07d3862198ba004c4b48c64709d2785606c4f62cefc233db85761229ceb", 5875, 10851),
    ("forum_hardest_1106.txt", 150, "h", 2): (
        "09fd4b960598af75ff8e46d8db8cfb95ff669294ab10b4625a029cd22158e767", 12414, 24528),
}  # fmt: skip

#: generate(clues, seed) for clues 26, 35, 45 and seeds 0-11: puzzle, solution, attempts
GENERATED = "44c0e6f2ac9b88184b2d1d3843e549e1e8d901a80c3f5ea95756b5493a1a3945"


@pytest.mark.parametrize(("name", "first", "which", "limit"), sorted(GOLDEN))
def test_every_kernel_gives_the_numba_engine_s_answers(name: str, first: int, which: str,
                                                       limit: int) -> None:  # fmt: skip
    path = DATA / name
    if not path.exists():
        pytest.skip(f"data set {path} not present")
    puzzles = [e.puzzle.replace(".", "0") for e in sudoku.read_lines(path)][:first]
    rows = tables.text_rows("".join(puzzles).encode())
    digest, total_nodes, total_guesses = GOLDEN[(name, first, which, limit)]
    for kernel in engine.KERNELS if which == "h" else (None,):
        out = (np.zeros(len(rows), np.int32), np.zeros(len(rows), np.int64),
               np.zeros(len(rows), np.int64), np.full((len(rows), 81), 48, np.uint8))  # fmt: skip
        assert engine.solve_rows(rows, 0, len(rows), limit, which == "h", *out, kernel) == -1
        counts, nodes, guesses, grids = out
        assert (int(nodes.sum()), int(guesses.sum())) == (total_nodes, total_guesses), kernel
        h = hashlib.sha256()
        for part in (counts.astype("<i4"), nodes.astype("<i8"), guesses.astype("<i8"), grids):
            h.update(part.tobytes())
        assert h.hexdigest() == digest, kernel


def test_seeded_generation_makes_the_numba_engine_s_puzzles() -> None:
    h = hashlib.sha256()
    for clues in (26, 35, 45):
        for seed in range(12):
            made = sudoku.generate(clues, seed=seed)
            h.update(f"{made.puzzle}{made.solution}{made.attempts}".encode())
    assert h.hexdigest() == GENERATED

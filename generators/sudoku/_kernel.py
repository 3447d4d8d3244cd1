"""Compiled bitmask propagation and search for 9x9 sudoku: the cell-order engine.

The default search (``houses`` true) is :mod:`generators.sudoku._bands`, the band-bitboard
engine, which :func:`_entry` calls; the per-cell engine below serves ``houses=False``: the
cell-by-cell order of version 0.1 that seeded puzzle generation keeps, so that a seed
makes the same puzzle as before.

A state is a ``uint16[81]`` of candidate masks, cell ``i = 9 * row + col``; bit ``d - 1``
set means digit ``d`` is still possible there, and a mask with one bit set is a placed
digit. Propagation runs to a fixpoint: naked singles (a placed digit leaves its 20 peers),
hidden singles (a digit with one place left in a house goes there), rechecking only the
houses that changed, then box/line eliminations (pointing and claiming) when singles are
exhausted. Search is depth first on the unsolved cell with the fewest candidates, on an
explicit stack of states, and counts solutions up to a limit, so that one call proves a
puzzle unique (limit 2) or counts it (limit N).

Before the search a puzzle gets one stronger check: every digit must fit a complete
placement of its own, one per row, column and box (a perfect matching of rows to columns
among the digit's candidates, boxes respected by search on the few choices left). A
puzzle that fails it has no solution, whatever the other digits do; most such puzzles
(Norvig's "impossible" one among them) would otherwise cost a search of millions of
nodes to refute.

Everything here is compiled by numba (see :mod:`generators._compiled.jit`). :func:`solve_text`
checks and solves a range of puzzles given as the ASCII bytes a user typed; its C entry
point (:func:`native_entry`) is the one thing Python calls, through
:mod:`generators.sudoku._engine`, which loads it without numba when it can and calls it
with the GIL released, so that threads run it side by side.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import types
from numba.np.numpy_support import carray

from generators._compiled.jit import array_data, cfunc, jit
from generators.sudoku import _bands
from generators.sudoku._tables import (
    COL_SEG,
    FULL,
    HOUSE_BITS,
    HOUSES_ARRAY,
    PEERS_ARRAY,
    POPCOUNT,
    ROW_SEG,
)


@jit
def _eliminate(cand, cell, strip, queue, qn, dirty):  # type: ignore[no-untyped-def]
    """Remove ``strip`` from ``cell``; returns (ok, qn, dirty)."""
    m = cand[cell]
    if m & strip:
        m &= ~strip
        if m == 0:
            return False, qn, dirty
        cand[cell] = m
        dirty |= HOUSE_BITS[cell]
        if m & (m - 1) == 0:
            queue[qn] = cell
            qn += 1
    return True, qn, dirty


@jit
def _locked(cand, segs, union, queue, qn, dirty):  # type: ignore[no-untyped-def]
    """Box/line eliminations over one family of segments (rows or columns).

    ``segs[3 * line + stack]`` holds the three cells where a line crosses a box. A digit of a
    line found only in one of its segments leaves the rest of that box (claiming); a digit of
    a box found only in one segment leaves the rest of that line (pointing).
    ``union`` is scratch space for the 27 segment unions. Returns (ok, qn, dirty, changed).
    """
    for s in range(27):
        union[s] = cand[segs[s, 0]] | cand[segs[s, 1]] | cand[segs[s, 2]]
    changed = False
    for line in range(9):
        first = line - line % 3  # first line of this band
        for stack in range(3):
            s = 3 * line + stack
            here = union[s]
            in_line = union[3 * line + (stack + 1) % 3] | union[3 * line + (stack + 2) % 3]
            in_box = 0
            for other in range(first, first + 3):
                if other != line:
                    in_box |= union[3 * other + stack]
            claim = here & in_box & ~in_line
            if claim:
                for other in range(first, first + 3):
                    if other != line:
                        for k in range(3):
                            ok, qn, dirty = _eliminate(
                                cand, segs[3 * other + stack, k], claim, queue, qn, dirty
                            )
                            if not ok:
                                return False, qn, dirty, changed
                changed = True
            point = here & in_line & ~in_box
            if point:
                for st in range(3):
                    if st != stack:
                        for k in range(3):
                            ok, qn, dirty = _eliminate(
                                cand, segs[3 * line + st, k], point, queue, qn, dirty
                            )
                            if not ok:
                                return False, qn, dirty, changed
                changed = True
    return True, qn, dirty, changed


@jit
def propagate(cand, queue, qn, dirty, union):  # type: ignore[no-untyped-def]
    """Singles, then box/line, in place to a fixpoint; False on a contradiction.

    ``queue[:qn]`` holds placed cells whose digit has not left their peers yet; ``dirty``
    has bit ``h`` set for every house ``h`` that changed since it was last checked;
    ``union`` is scratch space (27 ints) for the box/line step.
    """
    while True:
        while True:
            # Naked singles: strike each placed digit from the peers of its cell.
            while qn > 0:
                qn -= 1
                cell = queue[qn]
                bit = cand[cell]
                for k in range(20):
                    p = PEERS_ARRAY[cell, k]
                    m = cand[p]
                    if m & bit:
                        m ^= bit
                        if m == 0:
                            return False
                        cand[p] = m
                        dirty |= HOUSE_BITS[p]
                        if m & (m - 1) == 0:
                            queue[qn] = p
                            qn += 1
            if dirty == 0:
                break
            # Hidden singles, in the houses that changed.
            todo = dirty
            dirty = 0
            for h in range(27):
                if not (todo >> h) & 1:
                    continue
                once = 0
                twice = 0
                for k in range(9):
                    m = cand[HOUSES_ARRAY[h, k]]
                    twice |= once & m
                    once |= m
                if once != FULL:
                    return False
                lonely = once & ~twice
                if lonely:
                    for k in range(9):
                        c = HOUSES_ARRAY[h, k]
                        m = cand[c]
                        hit = m & lonely
                        if hit and hit != m:
                            if hit & (hit - 1):
                                return False
                            cand[c] = hit
                            dirty |= HOUSE_BITS[c]
                            queue[qn] = c
                            qn += 1
            if qn == 0 and dirty == 0:
                break
        ok, qn, dirty, rows = _locked(cand, ROW_SEG, union, queue, qn, dirty)
        if not ok:
            return False
        ok, qn, dirty, cols = _locked(cand, COL_SEG, union, queue, qn, dirty)
        if not ok:
            return False
        if not (rows or cols):
            return True


@jit
def _choose(cand, houses):  # type: ignore[no-untyped-def]
    """Where to branch: ``(house, digit bit, options)``, or ``house = -1`` when solved.

    The smallest choice wins: a cell with two candidates, else a digit with only two
    places in some house, else the cell with the fewest candidates. ``house`` is 27 for a
    cell branch (``digit`` is then the cell and ``options`` its candidates); otherwise
    ``options`` has bit ``k`` set for each place ``HOUSES_ARRAY[house, k]`` of ``digit``.
    Looking at house places as well as cells turns some searches of millions of nodes,
    such as refuting Norvig's "impossible" puzzle, into a few thousand. ``houses=False``
    branches on cells only (the order of version 0.1, kept so that seeded puzzle
    generation reproduces the same grids).
    """
    best = -1
    fewest = 10
    for i in range(81):
        n = POPCOUNT[cand[i]]
        if 1 < n < fewest:
            fewest = n
            best = i
            if n == 2:
                return 27, best, cand[best]
    if best < 0:
        return -1, 0, 0
    if not houses:
        return 27, best, cand[best]
    for h in range(27):
        once = 0
        twice = 0
        thrice = 0
        for k in range(9):
            m = cand[HOUSES_ARRAY[h, k]]
            thrice |= twice & m
            twice |= once & m
            once |= m
        two = twice & ~thrice
        if two:
            bit = two & -two
            places = 0
            for k in range(9):
                if cand[HOUSES_ARRAY[h, k]] & bit:
                    places |= 1 << k
            return h, bit, places
    return 27, best, cand[best]


@jit
def _solve_one(cand, limit, houses, solution, states, branches, queue, union):  # type: ignore[no-untyped-def]
    """Count solutions of a propagated state up to ``limit``; first one into ``solution``.

    Returns (count, nodes, guesses). ``nodes`` counts consistent states reached (the root
    included), ``guesses`` trial placements; with ``limit >= 2`` and a unique puzzle the
    whole tree is walked, so both depend only on the puzzle: a fair difficulty score.
    ``branches[depth]`` holds the ``_choose`` triple of each open level, its options
    shrinking as they are tried; ``union`` is scratch space for :func:`propagate`.
    """
    count = 0
    nodes = 1
    guesses = 0
    house, what, options = _choose(cand, houses)
    if house < 0:
        solution[:] = cand
        return 1, nodes, guesses
    states[0, :] = cand
    branches[0, 0] = house
    branches[0, 1] = what
    branches[0, 2] = options
    depth = 0
    while depth >= 0:
        left = branches[depth, 2]
        if left == 0:
            depth -= 1
            continue
        low = left & -left
        branches[depth, 2] = left ^ low
        child = states[depth + 1]
        child[:] = states[depth]
        house = branches[depth, 0]
        if house == 27:
            cell = branches[depth, 1]
            child[cell] = low
        else:
            k = 0
            while low >> k != 1:
                k += 1
            cell = HOUSES_ARRAY[house, k]
            child[cell] = branches[depth, 1]
        guesses += 1
        queue[0] = cell
        if not propagate(child, queue, 1, HOUSE_BITS[cell], union):
            continue
        nodes += 1
        house, what, options = _choose(child, houses)
        if house < 0:
            count += 1
            if count == 1:
                solution[:] = child
            if count >= limit:
                break
            continue
        depth += 1
        branches[depth, 0] = house
        branches[depth, 1] = what
        branches[depth, 2] = options
    return count, nodes, guesses


@jit
def _solve_cells(cand, qn, dirty, limit, houses, solution, states, branches, queue, union):  # type: ignore[no-untyped-def]
    """Propagate a freshly loaded state (givens queued in ``queue[:qn]``), then search.

    Returns (count, nodes, guesses) as :func:`_solve_one`; a contradiction found by the
    first propagation is (0, 1, 0).
    """
    if not propagate(cand, queue, qn, dirty, union):
        return 0, 1, 0
    return _solve_one(cand, limit, houses, solution, states, branches, queue, union)


@jit
def solve_text(  # type: ignore[no-untyped-def]
    text,
    start,
    stop,
    limit,
    houses,
    counts,
    nodes,
    guesses,
    grids,
    cand,
    solution,
    states,
    branches,
    queue,
    union,
    seen,
):
    """Check and solve rows ``start:stop`` of ``text`` (``uint8[n, 81]``, ASCII as typed).

    A row is valid when every byte is ``1``-``9``, ``0`` or ``.`` and no house holds a given
    twice. Results go into row ``p`` of the output arrays: solutions found (up to
    ``limit``), nodes, guesses, and in ``grids`` the first solution as ASCII digits (left
    as it was when there is none). ``houses`` allows branching on a digit's places in a
    house (see :func:`_choose`). Returns -1, or the first invalid row, where it stops.

    Checking here, in the worker that solves the row, keeps validation off the single
    thread that hands work out (see ``generators.sudoku.solve_many``).

    The rest is work space, given by the caller so that the kernel never allocates (see
    :mod:`generators._compiled.native`): candidates and first solution (``uint16[81]``), the search
    stack (``uint16[82, 81]``), branch records (``int64[82, 3]``), the propagation queue
    (``int64[128]``), box/line unions and the givens seen per house (``int64[27]`` each).
    """
    for p in range(start, stop):
        seen[:] = 0
        qn = 0
        dirty = 0
        for i in range(81):
            ch = text[p, i]
            if ch == 46 or ch == 48:  # "." or "0": a blank
                cand[i] = FULL
                continue
            if ch < 49 or ch > 57:
                return p
            bit = 1 << (ch - 49)
            r = i // 9
            c = i % 9
            b = 18 + 3 * (r // 3) + c // 3
            if (seen[r] | seen[9 + c] | seen[b]) & bit:
                return p
            seen[r] |= bit
            seen[9 + c] |= bit
            seen[b] |= bit
            cand[i] = bit
            queue[qn] = i
            qn += 1
            dirty |= HOUSE_BITS[i]
        count, nodes[p], guesses[p] = _solve_cells(
            cand, qn, dirty, limit, houses, solution, states, branches, queue, union
        )
        counts[p] = count
        if count:
            for i in range(81):
                m = solution[i]
                d = 49
                while m > 1:
                    m >>= 1
                    d += 1
                grids[p, i] = d
    return -1


def _entry(block):  # type: ignore[no-untyped-def]
    text, n, start, stop, limit, houses, counts, nodes, guesses, grids = carray(block, (10,))
    if houses != 0:
        return _bands.solve_rows(  # type: ignore[no-untyped-call]
            carray(array_data(text), (n, 81), np.uint8), start, stop, limit,
            carray(array_data(counts), (n,), np.int32), carray(array_data(nodes), (n,), np.int64),
            carray(array_data(guesses), (n,), np.int64),
            carray(array_data(grids), (n, 81), np.uint8),
            np.empty(32, dtype=np.int64), np.empty(32, dtype=np.int64),
            np.empty((_bands.DEPTH, 32), dtype=np.int64),
            np.empty((_bands.DEPTH, 2), dtype=np.int64),
            np.empty(27, dtype=np.int64),
        )  # fmt: skip
    return solve_text(
        carray(array_data(text), (n, 81), np.uint8), start, stop, limit, houses != 0,
        carray(array_data(counts), (n,), np.int32), carray(array_data(nodes), (n,), np.int64),
        carray(array_data(guesses), (n,), np.int64), carray(array_data(grids), (n, 81), np.uint8),
        np.empty(81, dtype=np.uint16), np.empty(81, dtype=np.uint16),
        np.empty((82, 81), dtype=np.uint16), np.empty((82, 3), dtype=np.int64),
        np.empty(128, dtype=np.int64), np.empty(27, dtype=np.int64), np.empty(27, dtype=np.int64),
    )  # fmt: skip


def native_entry(cache: bool = True) -> Any:
    """:func:`solve_text` as a C function ``int64 f(int64 *block)`` for
    :mod:`generators._compiled.native`. ``block`` holds ``id(text), n, start, stop, limit, houses,
    id(counts), id(nodes), id(guesses), id(grids)``: C-contiguous arrays of ``n`` rows (as
    :func:`solve_text` takes them) that the caller keeps alive, read through their objects
    (:func:`generators._compiled.jit.array_data`), and ``houses`` 0 or 1. ``cache`` uses numba's
    disk cache (off when :mod:`generators._compiled.native` needs the optimised module itself)."""
    return cfunc(types.int64(types.CPointer(types.int64)), _entry, cache)


def python_entry(values: list[int]) -> int:
    """:func:`_entry` under ``NUMBA_DISABLE_JIT`` (numba's debugging mode): refused.

    Run as plain Python, the engine's fixed-width mask arithmetic does not behave as
    compiled (it already reported valid puzzles unsolvable before this entry point
    existed), so it stops with a clear error rather than give a wrong answer.
    """
    raise RuntimeError("the sudoku engine does not run uncompiled: unset NUMBA_DISABLE_JIT")

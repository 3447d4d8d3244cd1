"""Compiled bitmask propagation and search for 9x9 sudoku (internal engine).

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

Everything here is compiled by numba (see :mod:`generators._jit`). :func:`solve_text`, the
one entry point called from Python, checks and solves a range of puzzles given as the
ASCII bytes a user typed, in one compiled call that releases the GIL, so that threads
can run it side by side; :func:`solve_batch` and :func:`solve_one` wrap it.
"""

from __future__ import annotations

import numpy as np

from generators._jit import jit

FULL = 0x1FF  # all nine digits possible


def _tables() -> tuple[np.ndarray, ...]:
    houses = np.zeros((27, 9), dtype=np.int64)
    for r in range(9):
        for c in range(9):
            houses[r, c] = 9 * r + c
            houses[9 + c, r] = 9 * r + c
            b = 3 * (r // 3) + c // 3
            houses[18 + b, 3 * (r % 3) + c % 3] = 9 * r + c
    peers = np.zeros((81, 20), dtype=np.int64)
    house_bits = np.zeros(81, dtype=np.int64)
    for i in range(81):
        r, c = divmod(i, 9)
        b = 3 * (r // 3) + c // 3
        house_bits[i] = (1 << r) | (1 << (9 + c)) | (1 << (18 + b))
        others = sorted({int(x) for h in (r, 9 + c, 18 + b) for x in houses[h]} - {i})
        peers[i] = others
    popcount = np.array([bin(m).count("1") for m in range(512)], dtype=np.int64)
    # row segments: segment 3 * r + t is row r inside stack t; column segments likewise
    row_seg = np.array(
        [[9 * r + 3 * t + k for k in range(3)] for r in range(9) for t in range(3)], np.int64
    )
    col_seg = np.array(
        [[9 * (3 * t + k) + c for k in range(3)] for c in range(9) for t in range(3)], np.int64
    )
    return houses, peers, house_bits, popcount, row_seg, col_seg


HOUSES_ARRAY, PEERS_ARRAY, HOUSE_BITS, POPCOUNT, ROW_SEG, COL_SEG = _tables()

#: The 27 houses (9 rows, 9 columns, 9 boxes) as tuples of cell indices.
HOUSES: tuple[tuple[int, ...], ...] = tuple(tuple(int(c) for c in h) for h in HOUSES_ARRAY)


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
def _scratch():  # type: ignore[no-untyped-def]
    """Work space for :func:`_solve_cells`: candidates, first solution, search stack,
    branch records, propagation queue and box/line unions."""
    return (
        np.empty(81, dtype=np.uint16),
        np.zeros(81, dtype=np.uint16),
        np.empty((82, 81), dtype=np.uint16),
        np.empty((82, 3), dtype=np.int64),
        np.empty(128, dtype=np.int64),
        np.empty(27, dtype=np.int64),
    )


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
def solve_text(text, start, stop, limit, houses, counts, nodes, guesses, grids):  # type: ignore[no-untyped-def]
    """Check and solve rows ``start:stop`` of ``text`` (``uint8[n, 81]``, ASCII as typed).

    A row is valid when every byte is ``1``-``9``, ``0`` or ``.`` and no house holds a given
    twice. Results go into row ``p`` of the output arrays: solutions found (up to
    ``limit``), nodes, guesses, and in ``grids`` the first solution as ASCII digits (left
    as it was when there is none). ``houses`` allows branching on a digit's places in a
    house (see :func:`_choose`). Returns -1, or the first invalid row, where it stops.

    Checking here, in the worker that solves the row, keeps validation off the single
    thread that hands work out (see ``generators.sudoku.solve_many``).
    """
    cand, solution, states, branches, queue, union = _scratch()
    seen = np.empty(27, dtype=np.int64)
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


def text_rows(data: bytes) -> np.ndarray:
    """The ``uint8[n, 81]`` view of ``n`` puzzles of 81 ASCII bytes each, as
    :func:`solve_text` takes them (read-only, always the same array type, so that one
    compiled specialisation serves every caller)."""
    return np.frombuffer(data, dtype=np.uint8).reshape(-1, 81)


def solve_batch(
    puzzles: np.ndarray, limit: int, houses: bool = True
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Solve every row of ``puzzles`` (``int8[n, 81]``, digits 0-9, 0 for blank).

    Returns ``(counts, nodes, guesses, grids)``: solutions found (up to ``limit``), search
    effort, and the first solution as digits (zeros when there is none). Raises ValueError
    for a row with a digit outside 0-9 or a given repeated in a house.
    """
    digits = np.asarray(puzzles, dtype=np.int8).reshape(-1, 81)
    n = len(digits)
    if n and (digits.min() < 0 or digits.max() > 9):
        raise ValueError("puzzle digits must be 0-9")
    rows = text_rows((digits + 48).astype(np.uint8).tobytes())
    counts = np.zeros(n, dtype=np.int32)
    nodes = np.zeros(n, dtype=np.int64)
    guesses = np.zeros(n, dtype=np.int64)
    grids = np.full((n, 81), 48, dtype=np.uint8)
    bad = solve_text(rows, 0, n, limit, houses, counts, nodes, guesses, grids)
    if bad >= 0:
        raise ValueError(f"row {bad} is not a valid puzzle")
    return counts, nodes, guesses, (grids - 48).astype(np.int8)


@jit
def givens_clash(puzzles):  # type: ignore[no-untyped-def]
    """Per row of ``puzzles`` (digits 0-9): True when a house holds a given twice."""
    n = puzzles.shape[0]
    clash = np.zeros(n, dtype=np.bool_)
    for p in range(n):
        for h in range(27):
            seen = 0
            for k in range(9):
                d = puzzles[p, HOUSES_ARRAY[h, k]]
                if d:
                    bit = 1 << d
                    if seen & bit:
                        clash[p] = True
                        break
                    seen |= bit
            if clash[p]:
                break
    return clash


def to_array(digits: str) -> np.ndarray:
    """``int8[n, 81]`` digits of ``n`` validated puzzles joined into one string."""
    return (np.frombuffer(digits.encode("ascii"), dtype=np.int8) - 48).reshape(-1, 81)


def to_strings(grids: np.ndarray) -> list[str]:
    """81-char digit strings of the rows of an ``int8[n, 81]`` array."""
    text = (grids + 48).tobytes().decode("ascii")
    return [text[i : i + 81] for i in range(0, len(text), 81)]


def solve_one(
    text: str, limit: int, houses: bool = True
) -> tuple[int, str | None, int, int] | None:
    """(solutions up to ``limit``, first solution, nodes, guesses) for one 81-char puzzle
    (``0`` or ``.`` for blanks), or None when it is not a valid puzzle."""
    try:
        rows = text_rows(text.encode("ascii"))
    except (UnicodeEncodeError, ValueError):
        return None
    if rows.shape[0] != 1:
        return None
    counts = np.zeros(1, dtype=np.int32)
    nodes = np.zeros(1, dtype=np.int64)
    guesses = np.zeros(1, dtype=np.int64)
    grids = np.empty((1, 81), dtype=np.uint8)
    if solve_text(rows, 0, 1, limit, houses, counts, nodes, guesses, grids) >= 0:
        return None
    grid = grids[0].tobytes().decode("ascii") if counts[0] else None
    return int(counts[0]), grid, int(nodes[0]), int(guesses[0])


def solve_digits(digits: str, limit: int, houses: bool = True) -> tuple[int, str | None, int, int]:
    """(solutions up to ``limit``, first solution, nodes, guesses) for a validated puzzle."""
    result = solve_one(digits, limit, houses)
    if result is None:
        raise ValueError(f"not a valid puzzle: {digits!r}")
    return result

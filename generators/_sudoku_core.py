"""Bitmask constraint propagation and search for 9x9 sudoku (internal engine).

A state is a ``list[int]`` of 81 candidate masks, cell ``i = 9 * row + col``; bit ``d - 1``
set means digit ``d`` is still possible there. A mask with one bit set is a placed digit.
Propagation applies naked singles, hidden singles and box/line eliminations (pointing and
claiming) to a fixpoint; search branches on the cell with the fewest candidates. Everything
works on plain ints so that CPython does as little as possible per step: this module is the
hot loop behind :mod:`generators.sudoku`, kept apart so that the public module stays readable.
"""

from __future__ import annotations

FULL = 0x1FF  # all nine digits possible

# The 27 houses: 9 rows, 9 columns, 9 boxes, each a tuple of cell indices.
HOUSES: tuple[tuple[int, ...], ...] = (
    tuple(tuple(9 * r + c for c in range(9)) for r in range(9))
    + tuple(tuple(9 * r + c for r in range(9)) for c in range(9))
    + tuple(
        tuple(9 * (3 * (b // 3) + r) + 3 * (b % 3) + c for r in range(3) for c in range(3))
        for b in range(9)
    )
)

# For each cell, the 20 other cells that share a row, column or box with it.
PEERS: tuple[tuple[int, ...], ...] = tuple(
    tuple(sorted({p for h in HOUSES if i in h for p in h} - {i})) for i in range(81)
)

# Single-bit mask -> digit character, and back.
BIT_TO_CHAR: dict[int, str] = {1 << d: str(d + 1) for d in range(9)}
CHAR_TO_BIT: dict[str, int] = {str(d + 1): 1 << d for d in range(9)}


def _singles(cand: list[int], queue: list[int]) -> bool:
    """Apply naked and hidden singles in place until neither finds anything.

    ``queue`` holds cells that became single and whose digit has not yet been removed from
    their peers. Returns False as soon as a contradiction shows up (a cell with no candidate,
    a digit with no place in a house, or two digits forced into one cell).
    """
    peers = PEERS
    houses = HOUSES
    while True:
        # Naked singles: strike each placed digit from the peers of its cell.
        while queue:
            cell = queue.pop()
            bit = cand[cell]
            keep = FULL ^ bit
            for p in peers[cell]:
                m = cand[p]
                if m & bit:
                    m &= keep
                    if not m:
                        return False
                    cand[p] = m
                    if not m & (m - 1):
                        queue.append(p)
        # Hidden singles: a digit that fits in only one cell of a house goes there.
        for house in houses:
            once = twice = 0
            for cell in house:
                m = cand[cell]
                twice |= once & m
                once |= m
            if once != FULL:
                return False
            lonely = once & ~twice
            if lonely:
                for cell in house:
                    m = cand[cell]
                    hit = m & lonely
                    if hit and hit != m:
                        if hit & (hit - 1):
                            return False
                        cand[cell] = hit
                        queue.append(cell)
        if not queue:
            return True


# Box/line interactions work on "segments": the three cells where a row (or column) crosses
# a box. Segment k of SEG_ROWS is row k // 3, stack k % 3; of SEG_COLS column k // 3, band
# k % 3. For each segment the plan lists its two siblings in the same line, its two siblings
# in the same box, and the cells of those siblings (the targets of eliminations).
SEG_ROWS: tuple[tuple[int, int, int], ...] = tuple(
    (9 * r + 3 * t, 9 * r + 3 * t + 1, 9 * r + 3 * t + 2) for r in range(9) for t in range(3)
)
SEG_COLS: tuple[tuple[int, int, int], ...] = tuple(
    (9 * 3 * b + c, 9 * (3 * b + 1) + c, 9 * (3 * b + 2) + c) for c in range(9) for b in range(3)
)

SegmentPlan = tuple[int, int, int, int, int, tuple[int, ...], tuple[int, ...]]


def _segment_plan(segments: tuple[tuple[int, int, int], ...]) -> tuple[SegmentPlan, ...]:
    """Siblings of each segment: same line means same k // 3, same box same (k // 9, k % 3)."""
    plan: list[SegmentPlan] = []
    for k in range(27):
        line = [j for j in range(27) if j != k and j // 3 == k // 3]
        box = [j for j in range(27) if j != k and (j // 9, j % 3) == (k // 9, k % 3)]
        line_cells = tuple(x for j in line for x in segments[j])
        box_cells = tuple(x for j in box for x in segments[j])
        plan.append((k, line[0], line[1], box[0], box[1], line_cells, box_cells))
    return tuple(plan)


SEGMENT_PLANS = ((SEG_ROWS, _segment_plan(SEG_ROWS)), (SEG_COLS, _segment_plan(SEG_COLS)))


def _locked_candidates(cand: list[int], queue: list[int]) -> bool | None:
    """One box/line elimination (pointing or claiming); None on contradiction.

    A digit whose only places in a line lie inside one box cannot go elsewhere in that box,
    and vice versa. Returns True after the first segment that removed something so that the
    cheaper singles run again before more expensive scanning; False when nothing applies.
    """
    for segments, plan in SEGMENT_PLANS:
        union = [cand[a] | cand[b] | cand[c] for a, b, c in segments]
        for k, l1, l2, b1, b2, line_cells, box_cells in plan:
            here = union[k]
            in_line = union[l1] | union[l2]
            in_box = union[b1] | union[b2]
            strip = here & in_box & ~in_line
            if strip:
                targets = box_cells
            else:
                strip = here & in_line & ~in_box
                if not strip:
                    continue
                targets = line_cells
            keep = ~strip
            for cell in targets:
                m = cand[cell]
                if m & strip:
                    m &= keep
                    if not m:
                        return None
                    cand[cell] = m
                    if not m & (m - 1):
                        queue.append(cell)
            return True
    return False


def propagate(cand: list[int], queue: list[int]) -> bool:
    """Singles, then box/line eliminations, in place until a fixpoint; False if contradictory.

    ``queue`` holds cells that became single and whose digit has not yet been removed from
    their peers.
    """
    while True:
        if not _singles(cand, queue):
            return False
        progressed = _locked_candidates(cand, queue)
        if progressed is None:
            return False
        if not progressed:
            return True


def initial_state(digits: str) -> list[int] | None:
    """Candidate masks for a normalised 81-char puzzle, propagated; None if contradictory."""
    cand = [FULL] * 81
    queue: list[int] = []
    for i, ch in enumerate(digits):
        if ch != "0":
            cand[i] = CHAR_TO_BIT[ch]
            queue.append(i)
    # Givens that clash would be stripped by each other's peers; validation catches that
    # earlier with a better message, propagation just reports "no solution".
    if not propagate(cand, queue):
        return None
    return cand


def to_string(cand: list[int]) -> str:
    """81-char digit string of a fully solved state."""
    return "".join([BIT_TO_CHAR[m] for m in cand])


def search(cand: list[int], limit: int) -> tuple[list[str], int, int]:
    """Depth-first search from a propagated state, stopping after ``limit`` solutions.

    Branches on the unsolved cell with the fewest candidates, trying digits in ascending
    order. Returns (solutions, nodes, guesses): ``nodes`` counts states expanded, ``guesses``
    counts trial placements. For a puzzle with a unique solution and ``limit >= 2`` the
    whole tree is walked, so both figures depend only on the puzzle: a fair difficulty score.
    """
    found: list[str] = []
    nodes = 0
    guesses = 0
    stack = [cand]
    while stack:
        state = stack.pop()
        nodes += 1
        best = -1
        fewest = 10
        for i in range(81):
            m = state[i]
            if m & (m - 1):
                n = m.bit_count()
                if n < fewest:
                    fewest = n
                    best = i
                    if n == 2:
                        break
        if best < 0:
            found.append(to_string(state))
            if len(found) >= limit:
                break
            continue
        mask = state[best]
        bits = []
        while mask:
            low = mask & -mask
            bits.append(low)
            mask ^= low
        # Push in reverse so that the smallest digit is explored first.
        for bit in reversed(bits):
            child = state[:]
            child[best] = bit
            guesses += 1
            if propagate(child, [best]):
                stack.append(child)
    return found, nodes, guesses


def solve_digits(digits: str, limit: int) -> tuple[list[str], int, int]:
    """Solutions (up to ``limit``), nodes and guesses for a validated 81-char puzzle."""
    state = initial_state(digits)
    if state is None:
        return [], 1, 0
    return search(state, limit)

"""Band-bitboard propagation and search for 9x9 sudoku (the default engine, internal).

The grid is three bands of three rows. For each digit ``d`` and band ``b`` one integer
``F[3 * d + b]`` holds, in its low 27 bits, where ``d`` may still go in that band: bit
``9 * r + c`` for row ``r`` of the band (0-2) and column ``c``. Bits 27-29 mark the rows of
the band where ``d`` is placed and already propagated; bits 32-40 the word's triad pattern
(below) and bits 41-49 of word ``3 * d + j`` the digit's pattern in stack ``j``, both as
propagation last saw them, for choosing a branch. ``F[27 + b]`` holds the band's unsolved
cells. A state is these 30 integers (``int64[32]``, copied whole on a guess).

Within one band a digit must occupy one cell in each of its three rows and each of its three
boxes. Where a row crosses a box is a *triad* (three cells); the triads a digit can use form
a 3x3 pattern, and every placement of the digit in the band picks one of the six
permutations of it. ``SHRINK[t]`` keeps, for a pattern ``t`` of nine triad bits, the cells of
the triads that belong to some permutation inside ``t`` (none when no permutation fits: a
contradiction). One lookup therefore does box/line eliminations (pointing and claiming) and
hidden singles in boxes and rows for that digit and band. A row left with one cell is a
placement: its column leaves the digit's other two bands and its cell leaves the other
eight digits' words of the band. The same holds across a stack, where the pattern is (band,
column of the stack); a column that one band alone can give a digit, or a box left with
one column, settles it there.

Across digits, counting each band's candidates bit-sliced (``ones``, ``twos``, ...) over the
nine digit words finds empty cells (a contradiction) and cells with one candidate (naked
singles) in a few operations per digit. Triads come last: one that three digits certainly
hold (their every permutation uses it) holds no other digit, for the triads of rows and of
columns alike. (The converse, a triad that only three digits can fill holds each, cost more
time than the nodes it saved.)

When all of that is exhausted the search branches as tdoku does: on a digit with two
permutations left in the band or stack that has the fewest permutations over all its
digits; each branch keeps one of the two. Only when no digit has two does it branch on a
cell with two candidates (else on a digit with two places in a row, else on a cell with the
fewest candidates): the first branch places the digit, the second removes it from the cell.
Each branch propagates again. The search is depth first on an explicit stack of states and
counts solutions up to a limit, so one call proves a puzzle unique (limit 2) or counts it.
"""

from __future__ import annotations

import platform
from typing import Any

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from generators._compiled.jit import jit

CELLS = (1 << 27) - 1  # the 27 cells of a band
PATTERN_BITS = 511 << 32  # a word's triads (bit 3 * row + box), as of its last shrink
STACK_BITS = 511 << 41  # word 3 * d + j: digit d's pattern in stack j (see propagate)
NEXT = np.array([1, 2, 0, 1], dtype=np.int64)  # the band after b, and after that
#: Most open branches on one path: each first branch places a digit (81 cells) or fixes a
#: digit's permutation in a band or a stack (27 each), which is never branched on again
DEPTH = 81 + 27 + 27
BAND_WORDS = 0x1249249  # the nine digit words of band 0 (words 3 * d), shifted by b for band b
ROW = 0x1FF


def _make_tables() -> tuple[np.ndarray, ...]:
    # box occupancy (3 bits) of a row's nine cells
    tri = np.array([((m & 7) != 0) | (((m >> 3) & 7) != 0) << 1 | (((m >> 6) & 7) != 0) << 2
                    for m in range(512)], dtype=np.int64)  # fmt: skip
    perms = [(0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)]
    shrink = np.zeros(512, dtype=np.int64)
    for t in range(512):
        allowed = 0
        for perm in perms:
            bits = sum(1 << (3 * r + perm[r]) for r in range(3))
            if t & bits == bits:
                allowed |= bits
        shrink[t] = sum(7 << (9 * (i // 3) + 3 * (i % 3)) for i in range(9) if allowed >> i & 1)
        shrink[t] |= allowed << 32  # the triads kept, where a word keeps its pattern
    # a digit placed at band cell p: its row and box in the band lose it, p keeps it
    keep = np.zeros(27, dtype=np.int64)
    for p in range(27):
        r, c = divmod(p, 9)
        gone = (ROW << 9 * r) | sum(7 << (9 * rr + 3 * (c // 3)) for rr in range(3))
        keep[p] = ~gone | (1 << p)  # the high bits (placed rows) stay
    rows = np.array([sum(ROW << 9 * r for r in range(3) if s >> r & 1) for s in range(8)],
                    dtype=np.int64)  # fmt: skip
    # per box (three columns each): the column of a box that has one column left
    lock = np.array([sum(m & (7 << 3 * j) for j in range(3)
                         if bin(m & (7 << 3 * j)).count("1") == 1) for m in range(512)],
                    dtype=np.int64)  # fmt: skip
    # columns a band may keep when the columns in ``m`` can be nowhere else: in a box with
    # such a column, only those; in other boxes, all three
    claim = np.array([sum((m & (7 << 3 * j)) or (7 << 3 * j) for j in range(3))
                      for m in range(512)], dtype=np.int64)  # fmt: skip
    # the triads a digit certainly holds: those in every permutation inside its pattern
    cert = np.zeros(512, dtype=np.int64)
    for t in range(512):
        common = 511
        for perm in perms:
            bits = sum(1 << (3 * r + perm[r]) for r in range(3))
            if t & bits == bits:
                common &= bits
        cert[t] = common if common != 511 else 0
    # the three cells of each triad, for a nine-bit triad pattern
    tricells = np.array([sum(7 << (9 * (i // 3) + 3 * (i % 3)) for i in range(9) if m >> i & 1)
                         for m in range(512)], dtype=np.int64)  # fmt: skip
    # permutations inside a pattern: how many, and the first two (branching on a digit
    # with two left in a band)
    nperm = np.zeros(512, dtype=np.int64)
    perm_a = np.zeros(512, dtype=np.int64)
    perm_b = np.zeros(512, dtype=np.int64)
    for t in range(512):
        for perm in perms:
            bits = sum(1 << (3 * r + perm[r]) for r in range(3))
            if t & bits == bits:
                nperm[t] += 1
                if nperm[t] == 1:
                    perm_a[t] = bits
                elif nperm[t] == 2:
                    perm_b[t] = bits
    return tri, shrink, keep, rows, lock, claim, cert, tricells, nperm, perm_a, perm_b


(TRI, SHRINK, KEEP, ROWS, LOCK, CLAIM, CERT, TRICELLS, NPERM, PERM_A,
 PERM_B) = _make_tables()  # fmt: skip


def _ctz(typingctx: Any, x: Any) -> Any:
    """Trailing zeros of a nonzero int64 (one instruction)."""

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return builder.cttz(args[0], ir.Constant(ir.IntType(1), 1))

    return types.int64(types.int64), codegen


def _popcount(typingctx: Any, x: Any) -> Any:
    """Set bits of an int64 (one instruction)."""

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        return builder.ctpop(args[0])

    return types.int64(types.int64), codegen


def _pext(typingctx: Any, x: Any, mask: Any) -> Any:
    """The bits of ``x`` under ``mask``, packed (BMI2 ``pext``)."""

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        fnty = ir.FunctionType(ir.IntType(64), [ir.IntType(64), ir.IntType(64)])
        fn = cgutils.get_or_insert_function(  # type: ignore[no-untyped-call]
            builder.module, fnty, "llvm.x86.bmi.pext.64"
        )
        return builder.call(fn, args)

    return types.int64(types.int64, types.int64), codegen


pext: Any = intrinsic(_pext)
ctz: Any = intrinsic(_ctz)
popcount: Any = intrinsic(_popcount)


def _pext_compiles() -> bool:
    """Whether the code numba makes here has BMI2's ``pext``: the host's features, unless
    ``NUMBA_CPU_NAME``/``NUMBA_CPU_FEATURES`` ask for another CPU."""
    from numba.core import config

    features: str | None = getattr(config, "CPU_FEATURES", None)
    name: str | None = getattr(config, "CPU_NAME", None)
    if features:
        return "+bmi2" in features.split(",")
    if name and name != "host":
        return False
    import llvmlite.binding as ll

    return platform.machine().lower() in ("x86_64", "amd64") and bool(
        ll.get_host_cpu_features().get("bmi2", False)
    )


@jit
def _triads_pext(a):  # type: ignore[no-untyped-def]
    return pext(a | (a >> 1) | (a >> 2), 0x1249249)


@jit
def _triads_table(a):  # type: ignore[no-untyped-def]
    return TRI[a & ROW] | (TRI[(a >> 9) & ROW] << 3) | (TRI[a >> 18] << 6)


#: The triads (bit ``3 * row + box``) holding a cell of the band cells ``a``: one ``pext``
#: where the CPU has it (the last few percent), else three table lookups
triad_pattern: Any = _triads_pext if _pext_compiles() else _triads_table


@jit
def _strip(F, k, cells):  # type: ignore[no-untyped-def]
    """``F[k]`` loses ``cells``; returns bit ``k`` when that changed it. Without branches:
    whether a strip changes anything is too unpredictable to branch on."""
    x = F[k]
    F[k] = x & ~cells
    return np.int64(x & cells != 0) << k


@jit
def _strip_other_bands(F, k, b, cells):  # type: ignore[no-untyped-def]
    """The digit of word ``k`` (band ``b``) loses ``cells`` in its two other bands; returns
    the words changed."""
    base = k - b
    one = _strip(F, base + NEXT[b], cells)  # type: ignore[no-untyped-call]
    return one | _strip(F, base + NEXT[b + 1], cells)  # type: ignore[no-untyped-call]


@jit
def _tally(x, c1, c2, c3, c4):  # type: ignore[no-untyped-def]
    """Bit-sliced counting over digits: ``c_i`` holds the bits seen in at least ``i`` of the
    ``x`` so far (four or more in ``c4``)."""
    c4 |= c3 & x
    c3 |= c2 & x
    c2 |= c1 & x
    c1 |= x
    return c1, c2, c3, c4


@jit
def _claim(F, k, a, mine, others, stack):  # type: ignore[no-untyped-def]
    """Word ``k`` (``a``, whose columns are ``mine``): a box with columns that no other band
    of the digit has keeps only those (the digit must take one of them here); stores the
    digit's pattern ``stack`` in the word and returns bit ``k`` when the cells changed."""
    y = a & (CLAIM[mine & ~others] * 0x40201 | ~(CELLS | STACK_BITS))
    F[k] = y | (stack << 41)
    return np.int64(y != (a & ~STACK_BITS)) << k


@jit
def _stack(c0, c1, c2, j):  # type: ignore[no-untyped-def]
    """The 3x3 pattern (bit ``3 * band + column``) of stack ``j`` for a digit whose columns
    in the three bands are ``c0``, ``c1``, ``c2``."""
    return ((c0 >> 3 * j) & 7) | (((c1 >> 3 * j) & 7) << 3) | (((c2 >> 3 * j) & 7) << 6)


@jit
def propagate(F, changed):  # type: ignore[no-untyped-def]
    """Run the state ``F`` to a fixpoint; ``changed`` has bit ``k`` set for each word
    ``F[k]`` that changed. False on a contradiction.

    The passes after the first look only at the bands (or digits) whose words changed
    since they last ran: the others would find nothing new."""
    singles = changed  # words changed since each pass last ran
    columns = changed
    triads = changed
    while True:
        touched = 0
        while changed:
            k = ctz(changed)
            changed &= changed - 1
            touched |= np.int64(1) << k
            w = F[k]
            a = w & CELLS
            t = triad_pattern(a)
            kept = SHRINK[t]
            a &= kept
            if a == 0:
                return False
            r0 = a & ROW
            r1 = (a >> 9) & ROW
            r2 = a >> 18
            single = (np.int64(r0 & (r0 - 1) == 0) | (np.int64(r1 & (r1 - 1) == 0) << 1)
                      | (np.int64(r2 & (r2 - 1) == 0) << 2))  # fmt: skip
            done = (w >> 27) & 7
            new = single & ~done
            F[k] = a | ((done | new) << 27) | (kept & PATTERN_BITS) | (w & STACK_BITS)
            d = k // 3
            b = k - 3 * d
            # a box of the band with one column left keeps that column from the other bands
            changed |= _strip_other_bands(  # type: ignore[no-untyped-call]
                F, k, b, LOCK[(a | (a >> 9) | (a >> 18)) & ROW] * 0x40201
            )
            if new:
                # every word of the band loses the placed cells, then this one gets them back
                cells = a & ROWS[new]
                for kk in range(b, 27, 3):
                    changed |= _strip(F, kk, cells)  # type: ignore[no-untyped-call]
                F[k] |= cells
                changed &= ~(np.int64(1) << k)
                F[27 + b] &= ~cells
        singles |= touched
        columns |= touched
        triads |= touched
        # naked singles, and empty cells
        for b in range(3):
            u = F[27 + b]
            if u == 0 or singles & (BAND_WORDS << b) == 0:
                continue
            ones = 0
            twos = 0
            for d in range(9):
                x = F[3 * d + b] & u
                twos |= ones & x
                ones |= x
            if u & ~ones:
                return False
            single = u & ~twos
            if single:
                for d in range(9):
                    kk = 3 * d + b
                    x = F[kk] & single
                    if x:
                        y = F[kk]
                        while x:
                            y &= KEEP[ctz(x)]
                            x &= x - 1
                        F[kk] = y
                        changed |= 1 << kk
        singles = 0
        if changed:
            continue
        # columns: each needs the digit once; a column that only one band can give it
        # restricts that band's box to the column (with the shrink: hidden singles)
        for d in range(9):
            if columns & (7 << 3 * d) == 0:
                continue
            a0 = F[3 * d]
            a1 = F[3 * d + 1]
            a2 = F[3 * d + 2]
            c0 = (a0 | (a0 >> 9) | (a0 >> 18)) & ROW
            c1 = (a1 | (a1 >> 9) | (a1 >> 18)) & ROW
            c2 = (a2 | (a2 >> 9) | (a2 >> 18)) & ROW
            if c0 | c1 | c2 != ROW:
                return False
            # word 3 * d + j also keeps the digit's pattern in stack j, for choose
            s0 = _stack(c0, c1, c2, 0)  # type: ignore[no-untyped-call]
            s1 = _stack(c0, c1, c2, 1)  # type: ignore[no-untyped-call]
            s2 = _stack(c0, c1, c2, 2)  # type: ignore[no-untyped-call]
            changed |= _claim(F, 3 * d, a0, c0, c1 | c2, s0)  # type: ignore[no-untyped-call]
            changed |= _claim(F, 3 * d + 1, a1, c1, c0 | c2, s1)  # type: ignore[no-untyped-call]
            changed |= _claim(F, 3 * d + 2, a2, c2, c0 | c1, s2)  # type: ignore[no-untyped-call]
        columns = 0
        if changed:
            continue
        # triads: three cells (a row or a column inside a box) hold three digits, so a
        # triad that three digits certainly hold (their every placement in the band uses
        # it; four: a contradiction) holds no other digit
        for b in range(3):
            u = F[27 + b]
            if u == 0 or triads & (BAND_WORDS << b) == 0:
                continue
            e1 = 0
            e2 = 0
            e3 = 0
            e4 = 0
            p1 = 0
            p2 = 0
            p3 = 0
            p4 = 0
            for d in range(9):
                a = F[3 * d + b]
                # the triads of rows, and of columns (a box left with one column), it must use
                sure = CERT[(a >> 32) & 511]
                e1, e2, e3, e4 = _tally(sure, e1, e2, e3, e4)  # type: ignore[no-untyped-call]
                sure = LOCK[(a | (a >> 9) | (a >> 18)) & ROW]
                p1, p2, p3, p4 = _tally(sure, p1, p2, p3, p4)  # type: ignore[no-untyped-call]
            if e4 | p4:
                return False
            full_rows = e3 & triad_pattern(u)
            full_cols = p3 & (u | (u >> 9) | (u >> 18)) & ROW
            if full_rows == 0 and full_cols == 0:
                continue
            for d in range(9):
                kk = 3 * d + b
                a = F[kk]
                rows = full_rows & ~CERT[(a >> 32) & 511]
                cols = full_cols & ~LOCK[(a | (a >> 9) | (a >> 18)) & ROW]
                y = a & ~(TRICELLS[rows] | cols * 0x40201)
                if y != a:
                    F[kk] = y
                    changed |= np.int64(1) << kk
        triads = 0
        if not changed:
            return True


@jit
def _cell_branch(k, bit):  # type: ignore[no-untyped-def]
    """Branch on band cell ``bit`` of word ``k``: place the digit there, or remove it."""
    return k, KEEP[ctz(bit)], ~bit


@jit
def _band_branch(F):  # type: ignore[no-untyped-def]
    """A digit with two permutations left in the band or stack with the fewest in all:
    ``(k, keep1, keep2)``, or ``k = -1``. For a stack, ``k = 32 + digit`` and the keeps
    hold the columns each band keeps (nine bits per band)."""
    best = 1000
    best_k = -1
    best_1 = 0
    best_2 = 0
    # The band and stack scans below are written out twice on purpose: one compiled helper
    # returning (total, pattern, digit) for both is slower (see benchmarks/bench_sudoku.py).
    for b in range(3):
        if F[27 + b] == 0:
            continue
        total = 0
        found = -1
        for d in range(9):
            t = (F[3 * d + b] >> 32) & 511
            n = NPERM[t]
            total += n
            if n == 2 and found < 0:
                found = t
                fd = d
        if found >= 0 and total < best:
            best = total
            best_k = 3 * fd + b
            best_1 = TRICELLS[PERM_A[found]] | ~CELLS
            best_2 = TRICELLS[PERM_B[found]] | ~CELLS
    for j in range(0, 9, 3):
        total = 0
        found = -1
        for d in range(9):
            t = (F[3 * d + j // 3] >> 41) & 511
            n = NPERM[t]
            total += n
            if n == 2 and found < 0:
                found = t
                fd = d
        if found >= 0 and total < best:
            best = total
            best_k = 32 + fd
            # the band's columns in this stack as the permutation says, the others stay
            other = (0x1FF ^ (7 << j)) * 0x40201
            x = PERM_A[found]
            best_1 = (((x & 7) | ((x & 0x38) << 6) | ((x & 0x1C0) << 12)) << j) | other
            x = PERM_B[found]
            best_2 = (((x & 7) | ((x & 0x38) << 6) | ((x & 0x1C0) << 12)) << j) | other
    return best_k, best_1, best_2


@jit
def _restrict(F, k, keep):  # type: ignore[no-untyped-def]
    """Apply one branch: ``F[k] &= keep``, or for ``k >= 32`` keep the columns ``keep``
    names in each band of digit ``k - 32``; returns the changed words."""
    if k < 32:
        F[k] &= keep
        return np.int64(1) << k
    d = k - 32
    for b in range(3):
        F[3 * d + b] &= ((keep >> 9 * b) & ROW) * 0x40201 | ~CELLS
    return np.int64(7) << 3 * d


@jit
def choose(F):  # type: ignore[no-untyped-def]
    """Where to branch: ``(k, keep1, keep2)``, the two branches apply ``keep1`` and ``keep2``
    to word ``k`` (see :func:`_restrict`); ``k = -1`` when the grid is solved. A digit
    with two permutations left in a band or stack first (:func:`_band_branch`), else a cell
    with two candidates, else a digit with two places in a row, else a cell with the fewest
    candidates."""
    k, keep1, keep2 = _band_branch(F)  # type: ignore[no-untyped-call]
    if k >= 0:
        return k, keep1, keep2
    solved = True
    for b in range(3):
        u = F[27 + b]
        if u == 0:
            continue
        solved = False
        ones = 0
        twos = 0
        threes = 0
        for d in range(9):
            x = F[3 * d + b] & u
            threes |= twos & x
            twos |= ones & x
            ones |= x
        two = twos & ~threes
        if two:
            bit = two & -two
            for d in range(9):
                if F[3 * d + b] & bit:
                    return _cell_branch(3 * d + b, bit)  # type: ignore[no-untyped-call]
    if solved:
        return -1, 0, 0
    for k in range(27):
        a = F[k] & F[27 + k % 3]
        if a == 0:
            continue
        for r in range(3):
            row = (a >> (9 * r)) & ROW
            if row and popcount(row) == 2:
                return _cell_branch(k, (row & -row) << (9 * r))  # type: ignore[no-untyped-call]
    best_k = -1
    best_bit = 0
    fewest = 10
    for b in range(3):
        u = F[27 + b]
        while u:
            bit = u & -u
            u &= u - 1
            n = 0
            first = -1
            for d in range(9):
                if F[3 * d + b] & bit:
                    n += 1
                    if first < 0:
                        first = 3 * d + b
            if n < fewest:
                fewest = n
                best_k = first
                best_bit = bit
    return _cell_branch(best_k, best_bit)  # type: ignore[no-untyped-call]


@jit
def search(F, limit, solution, stack, alts):  # type: ignore[no-untyped-def]
    """Count the solutions of the propagated state ``F`` up to ``limit``, the first one into
    ``solution``; returns (count, nodes, guesses). ``stack`` (``int64[DEPTH, 32]``) and
    ``alts`` (``int64[DEPTH, 2]``) hold the open branches."""
    count = 0
    nodes = 0
    guesses = 0
    depth = 0
    ok = True
    while True:
        if ok:
            nodes += 1
            k, keep1, keep2 = choose(F)  # type: ignore[no-untyped-call]
            if k < 0:
                count += 1
                if count == 1:
                    solution[:] = F
                if count >= limit:
                    break
                ok = False
                continue
            stack[depth, :] = F
            alts[depth, 0] = k
            alts[depth, 1] = keep2
            depth += 1
            guesses += 1
            ok = propagate(F, _restrict(F, k, keep1))  # type: ignore[no-untyped-call]
        else:
            if depth == 0:
                break
            depth -= 1
            F[:] = stack[depth]
            k = alts[depth, 0]
            guesses += 1
            ok = propagate(F, _restrict(F, k, alts[depth, 1]))  # type: ignore[no-untyped-call]
    return count, nodes, guesses


@jit
def solve_rows(  # type: ignore[no-untyped-def]
    text,
    start,
    stop,
    limit,
    counts,
    nodes,
    guesses,
    grids,
    F,
    solution,
    stack,
    alts,
    seen,
):
    """Check and solve rows ``start:stop`` of ``text`` (``uint8[n, 81]``) as
    :func:`generators.sudoku._kernel.solve_text` does, with this engine. ``F`` and
    ``solution`` are ``int64[32]``, ``seen`` ``int64[27]``; see :func:`search`."""
    for p in range(start, stop):
        seen[:] = 0
        for k in range(27):
            F[k] = CELLS
        F[27] = CELLS
        F[28] = CELLS
        F[29] = CELLS
        for i in range(81):
            ch = text[p, i]
            if ch == 46 or ch == 48:
                continue
            if ch < 49 or ch > 57:
                return p
            d = np.int64(ch) - 49
            bit = np.int64(1) << d
            r = i // 9
            c = i % 9
            x = 18 + 3 * (r // 3) + c // 3
            if (seen[r] | seen[9 + c] | seen[x]) & bit:
                return p
            seen[r] |= bit
            seen[9 + c] |= bit
            seen[x] |= bit
            b = i // 27
            F[3 * d + b] &= KEEP[i - 27 * b]
        count, n, g = 0, 1, 0
        if propagate(F, np.int64(CELLS)):  # type: ignore[no-untyped-call]
            count, n, g = search(F, limit, solution, stack, alts)  # type: ignore[no-untyped-call]
        counts[p] = count
        nodes[p] = n
        guesses[p] = g
        if count:
            for k in range(27):
                digit = k // 3
                band = k - 3 * digit
                w = solution[k] & CELLS
                while w:
                    grids[p, 27 * band + ctz(w)] = 49 + digit
                    w &= w - 1
    return -1

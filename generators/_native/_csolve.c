/* The sudoku engine in C: generators._native._csolve (compiled when the package is built).
 *
 * Two searches over the same checked input, both counting solutions up to a limit:
 *
 * - the band engine (houses true, the default): per digit d and band b a 64-bit word (word
 *   9 * b + d: a band's nine words side by side, so one band's are stripped together) holds
 *   in its low 27 bits where the digit may still go in the band (bit 9 * row + column), bits
 *   27-29 the rows where it is placed and propagated, bits 32-40 its triad pattern and bits
 *   41-49 (of word 9 * j + d) its pattern in stack j, as propagation last saw them, each with
 *   its count of permutations (bits 50-52 and 53-55); words 27-29 hold each band's unsolved
 *   cells. Propagation and branching are described in generators/sudoku/_engine.py. The
 *   search's order (which branch, which first) is part of the contract: nodes and guesses
 *   are reported, and seeded generation depends on it. Propagation's own order is free: its
 *   rules only remove candidates and are rechecked wherever a word changed, so they reach
 *   the same fixpoint (or contradiction) in any order.
 * - the cell engine (houses false): a candidate mask per cell, naked and hidden singles and
 *   box/line eliminations to a fixpoint, branching on the first cell with the fewest
 *   candidates (the order of version 0.1, which seeded puzzle generation keeps).
 *
 * Python hands in NumPy arrays through the buffer protocol (no NumPy headers): every buffer's
 * format, item size, shape, strides, contiguity and writability is checked before a loop, and
 * the solve loops run with the GIL released. Each row's bytes are checked (digits, blanks, no
 * given repeated in a house) before that row is solved; the first bad row stops the call and
 * is returned.
 *
 * triad_pattern has two forms: BMI2's pext where the CPU has it (chosen at run time with
 * __builtin_cpu_supports), three table lookups elsewhere. The engine below is compiled twice
 * (this file includes itself once per form) and the tests run both on the same puzzles. The
 * BMI2 form is also compiled for AVX2 (its state copies, 32 bytes at a time; the same C, so
 * the same results) and asks for both; it reads a row's bytes 32 at a time (digit_cells, an
 * AVX2 form of the SSE2 one), strips a placement from its band's nine words four at a time
 * (strip_band), reads the permutation counts for choose four words at a time and writes a
 * solved grid in three 32-byte stores: AVX2 forms of the portable loops beside them, which
 * the tests hold equal (every kernel gives the same counts, nodes, guesses and grids).
 */

#ifndef CSOLVE_ENGINE_PASS

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#include "_buffers.h"

typedef uint64_t u64;

#define CELLS ((1ULL << 27) - 1)
/* a word's triad pattern (bits 32-40) and how many permutations it holds (bits 50-52) */
#define PATTERN_BITS ((511ULL << 32) | (7ULL << 50))
/* word 9 * j + d: digit d's pattern in stack j (bits 41-49) and its permutations (53-55) */
#define STACK_BITS ((511ULL << 41) | (7ULL << 53))
/* the word of digit d in band b: a band's nine digit words side by side */
#define W(d, b) (9 * (b) + (d))
#define BAND_WORDS 0x1FFULL /* the band's words in a set of words, shifted by 9 * band */
#define ROWBITS 0x1FFULL
#define SPREAD 0x40201ULL /* nine column bits copied to the three rows of a band */
/* Most open branches on one path: each first branch places a digit (81 cells) or fixes a
 * digit's permutation in a band or a stack (27 each), which is never branched on again. */
#define DEPTH (81 + 27 + 27)
#define WORDS 32
#define FULL 0x1FF

/* the words of word k's digit in the other two bands */
static const uint8_t OTHER[27][2] = {
    {9, 18}, {10, 19}, {11, 20}, {12, 21}, {13, 22}, {14, 23}, {15, 24}, {16, 25}, {17, 26},
    {18, 0}, {19, 1}, {20, 2}, {21, 3}, {22, 4}, {23, 5}, {24, 6}, {25, 7}, {26, 8},
    {0, 9}, {1, 10}, {2, 11}, {3, 12}, {4, 13}, {5, 14}, {6, 15}, {7, 16}, {8, 17}};

/* ---- tables, filled once at import ---------------------------------------------------- */
static u64 TRI[512], SHRINK[512], KEEP[27], ROWS[8], LOCK[512], CLAIM[512], CERT[512];
static u64 TRICELLS[512], PERM_A[512], PERM_B[512];
static int NPERM[512];
/* the cell engine's */
static int HOUSES[27][9], PEERS[81][20], ROW_SEG[27][3], COL_SEG[27][3];
static uint32_t HOUSE_BITS[81];

/* reading a row: per byte its digit (0-8; 9 for a blank or a bad byte) and whether it is bad */
static uint8_t DIGIT[256], BAD[256];
static u64 BOXES[8]; /* the cells of the band's boxes named by three bits */

static int popc(u64 x) { return __builtin_popcountll(x); }

static void make_tables(void) {
    static const int perms[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    u64 permbits[6];
    for (int p = 0; p < 6; p++) {
        permbits[p] = 0;
        for (int r = 0; r < 3; r++) permbits[p] |= 1ULL << (3 * r + perms[p][r]);
    }
    for (int m = 0; m < 512; m++) {
        TRI[m] = (u64)((m & 7) != 0) | ((u64)(((m >> 3) & 7) != 0) << 1) |
                 ((u64)(((m >> 6) & 7) != 0) << 2);
        u64 allowed = 0, common = 511;
        NPERM[m] = 0;
        PERM_A[m] = PERM_B[m] = 0;
        for (int p = 0; p < 6; p++) {
            if (((u64)m & permbits[p]) == permbits[p]) {
                allowed |= permbits[p];
                common &= permbits[p];
                NPERM[m]++;
                if (NPERM[m] == 1) PERM_A[m] = permbits[p];
                else if (NPERM[m] == 2) PERM_B[m] = permbits[p];
            }
        }
        u64 cells = 0, tric = 0;
        for (int i = 0; i < 9; i++) {
            u64 triad = 7ULL << (9 * (i / 3) + 3 * (i % 3));
            if (allowed >> i & 1) cells |= triad;
            if (m >> i & 1) tric |= triad;
        }
        SHRINK[m] = cells | (allowed << 32) | ((u64)NPERM[m] << 50);
        CERT[m] = common != 511 ? common : 0;
        TRICELLS[m] = tric;
        u64 lock = 0, claim = 0;
        for (int j = 0; j < 3; j++) {
            u64 part = (u64)m & (7ULL << 3 * j);
            if (popc(part) == 1) lock |= part;
            claim |= part ? part : (7ULL << 3 * j);
        }
        LOCK[m] = lock;
        CLAIM[m] = claim;
    }
    for (int p = 0; p < 27; p++) {
        int r = p / 9, c = p % 9;
        u64 gone = ROWBITS << 9 * r;
        for (int rr = 0; rr < 3; rr++) gone |= 7ULL << (9 * rr + 3 * (c / 3));
        KEEP[p] = ~gone | (1ULL << p);
    }
    for (int s = 0; s < 8; s++) {
        BOXES[s] = 0;
        for (int j = 0; j < 3; j++)
            if (s >> j & 1) BOXES[s] |= (7ULL << 3 * j) * SPREAD;
        ROWS[s] = 0;
        for (int r = 0; r < 3; r++)
            if (s >> r & 1) ROWS[s] |= ROWBITS << 9 * r;
    }
    for (int r = 0; r < 9; r++)
        for (int c = 0; c < 9; c++) {
            HOUSES[r][c] = 9 * r + c;
            HOUSES[9 + c][r] = 9 * r + c;
            HOUSES[18 + 3 * (r / 3) + c / 3][3 * (r % 3) + c % 3] = 9 * r + c;
        }
    for (int ch = 0; ch < 256; ch++) {
        DIGIT[ch] = ch >= '1' && ch <= '9' ? (uint8_t)(ch - '1') : 9;
        BAD[ch] = !(ch >= '1' && ch <= '9') && ch != '0' && ch != '.';
    }
    for (int i = 0; i < 81; i++) {
        int r = i / 9, c = i % 9, b = 3 * (r / 3) + c / 3, n = 0;
        HOUSE_BITS[i] = (1u << r) | (1u << (9 + c)) | (1u << (18 + b));
        for (int j = 0; j < 81; j++) { /* ascending: the order of the Python tables */
            int rj = j / 9, cj = j % 9, bj = 3 * (rj / 3) + cj / 3;
            if (j != i && (rj == r || cj == c || bj == b)) PEERS[i][n++] = j;
        }
    }
    for (int r = 0; r < 9; r++)
        for (int t = 0; t < 3; t++)
            for (int k = 0; k < 3; k++) {
                ROW_SEG[3 * r + t][k] = 9 * r + 3 * t + k;
                COL_SEG[3 * r + t][k] = 9 * (3 * t + k) + r; /* r is the column here */
            }
}

/* ---- the cell engine (houses false) ---------------------------------------------------- */

/* The queue holds placed cells not yet struck from their peers. A cell enters it only when
 * its mask goes from several digits to one (or as a given), so at most 81 are ever queued in
 * one propagation; QUEUE leaves room, and push() refuses rather than overrun. */
#define QUEUE 128

typedef struct {
    uint16_t *cand;
    int *queue;
    int qn;
    uint32_t dirty;
} cellprop;

static inline int push(cellprop *s, int cell) {
    if (s->qn >= QUEUE) return 0;
    s->queue[s->qn++] = cell;
    return 1;
}

/* remove strip from cell; 0 on a contradiction */
static inline int eliminate(cellprop *s, int cell, unsigned strip) {
    unsigned m = s->cand[cell];
    if (m & strip) {
        m &= ~strip;
        if (m == 0) return 0;
        s->cand[cell] = (uint16_t)m;
        s->dirty |= HOUSE_BITS[cell];
        if ((m & (m - 1)) == 0 && !push(s, cell)) return 0;
    }
    return 1;
}

/* box/line over one family of segments; -1 contradiction, else 1 when something changed */
static int locked(cellprop *s, int segs[27][3]) {
    unsigned uni[27];
    const uint16_t *cand = s->cand;
    for (int i = 0; i < 27; i++) uni[i] = cand[segs[i][0]] | cand[segs[i][1]] | cand[segs[i][2]];
    int changed = 0;
    for (int line = 0; line < 9; line++) {
        int first = line - line % 3;
        for (int stack = 0; stack < 3; stack++) {
            int sg = 3 * line + stack;
            unsigned here = uni[sg];
            unsigned in_line = uni[3 * line + (stack + 1) % 3] | uni[3 * line + (stack + 2) % 3];
            unsigned in_box = 0;
            for (int other = first; other < first + 3; other++)
                if (other != line) in_box |= uni[3 * other + stack];
            unsigned claim = here & in_box & ~in_line;
            if (claim) {
                for (int other = first; other < first + 3; other++)
                    if (other != line)
                        for (int k = 0; k < 3; k++)
                            if (!eliminate(s, segs[3 * other + stack][k], claim)) return -1;
                changed = 1;
            }
            unsigned point = here & in_line & ~in_box;
            if (point) {
                for (int st = 0; st < 3; st++)
                    if (st != stack)
                        for (int k = 0; k < 3; k++)
                            if (!eliminate(s, segs[3 * line + st][k], point)) return -1;
                changed = 1;
            }
        }
    }
    return changed;
}

static int cell_propagate(uint16_t *cand, int *queue, int qn, uint32_t dirty) {
    cellprop s = {cand, queue, qn, dirty};
    for (;;) {
        for (;;) {
            while (s.qn > 0) {
                int cell = queue[--s.qn];
                unsigned bit = cand[cell];
                for (int k = 0; k < 20; k++) {
                    int p = PEERS[cell][k];
                    unsigned m = cand[p];
                    if (m & bit) {
                        m ^= bit;
                        if (m == 0) return 0;
                        cand[p] = (uint16_t)m;
                        s.dirty |= HOUSE_BITS[p];
                        if ((m & (m - 1)) == 0 && !push(&s, p)) return 0;
                    }
                }
            }
            if (s.dirty == 0) break;
            uint32_t todo = s.dirty;
            s.dirty = 0;
            for (int h = 0; h < 27; h++) {
                if (!((todo >> h) & 1)) continue;
                unsigned once = 0, twice = 0;
                for (int k = 0; k < 9; k++) {
                    unsigned m = cand[HOUSES[h][k]];
                    twice |= once & m;
                    once |= m;
                }
                if (once != FULL) return 0;
                unsigned lonely = once & ~twice;
                if (lonely) {
                    for (int k = 0; k < 9; k++) {
                        int c = HOUSES[h][k];
                        unsigned m = cand[c];
                        unsigned hit = m & lonely;
                        if (hit && hit != m) {
                            if (hit & (hit - 1)) return 0;
                            cand[c] = (uint16_t)hit;
                            s.dirty |= HOUSE_BITS[c];
                            if (!push(&s, c)) return 0;
                        }
                    }
                }
            }
            if (s.qn == 0 && s.dirty == 0) break;
        }
        int rows = locked(&s, ROW_SEG);
        if (rows < 0) return 0;
        int cols = locked(&s, COL_SEG);
        if (cols < 0) return 0;
        if (!(rows || cols)) return 1;
    }
}

/* the first cell with the fewest candidates (above one), or -1 when solved */
static inline int cell_choose(const uint16_t *cand) {
    int best = -1, fewest = 10;
    for (int i = 0; i < 81; i++) {
        int n = popc(cand[i]);
        if (1 < n && n < fewest) {
            fewest = n;
            best = i;
            if (n == 2) return best;
        }
    }
    return best;
}

typedef struct {
    int cell;
    unsigned left;
} cellbranch;

/* count solutions of a propagated state up to limit; the first into solution */
static void cell_search(uint16_t *cand, int32_t limit, uint16_t *solution, int *queue,
                        int32_t *count_out, int64_t *nodes_out, int64_t *guesses_out) {
    uint16_t states[82][81];
    cellbranch branches[82];
    int32_t count = 0;
    int64_t nodes = 1, guesses = 0;
    int best = cell_choose(cand);
    if (best < 0) {
        memcpy(solution, cand, sizeof states[0]);
        *count_out = 1, *nodes_out = 1, *guesses_out = 0;
        return;
    }
    memcpy(states[0], cand, sizeof states[0]);
    branches[0].cell = best;
    branches[0].left = cand[best];
    int depth = 0;
    /* every level branches on a cell with two or more candidates that its children fix, so
     * depth stays below 81; the bound is checked all the same */
    while (depth >= 0) {
        unsigned left = branches[depth].left;
        if (left == 0) {
            depth--;
            continue;
        }
        unsigned low = left & -left;
        branches[depth].left = left ^ low;
        uint16_t *child = states[depth + 1];
        memcpy(child, states[depth], sizeof states[0]);
        int cell = branches[depth].cell;
        child[cell] = (uint16_t)low;
        guesses++;
        queue[0] = cell;
        if (!cell_propagate(child, queue, 1, HOUSE_BITS[cell])) continue;
        nodes++;
        best = cell_choose(child);
        if (best < 0) {
            count++;
            if (count == 1) memcpy(solution, child, sizeof states[0]);
            if (count >= limit) break;
            continue;
        }
        if (depth + 2 >= 82) continue; /* cannot happen (see above): a dead end, not a write */
        depth++;
        branches[depth].cell = best;
        branches[depth].left = child[best];
    }
    *count_out = count, *nodes_out = nodes, *guesses_out = guesses;
}

/* reading a row for the band engine (SFX(digit_cells), SFX(read_row)): compiled with it, so
 * the BMI2 form reads rows with that form's instructions too */
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* ---- the band engine: compiled once per form of triad_pattern ---------------------------- */

#define CSOLVE_ENGINE_PASS 1
#define SFX(name) name##_portable
#define TRIADS(a) (TRI[(a) & ROWBITS] | (TRI[((a) >> 9) & ROWBITS] << 3) | (TRI[(a) >> 18] << 6))
#include "_csolve.c"
#undef SFX
#undef TRIADS

#if defined(__GNUC__) && !defined(__clang__) && (defined(__x86_64__) || defined(_M_X64))
#define HAVE_BMI2_PATH 1
#pragma GCC push_options
#pragma GCC target("popcnt,bmi,bmi2,avx2")
#include <immintrin.h>
#define SFX(name) name##_bmi2
#define TRIADS(a) ((u64)_pext_u64((a) | ((a) >> 1) | ((a) >> 2), 0x1249249ULL))
#define ENGINE_AVX2 1
#include "_csolve.c"
#undef ENGINE_AVX2
#undef SFX
#undef TRIADS
#pragma GCC pop_options
#else
#define HAVE_BMI2_PATH 0
#endif
#undef CSOLVE_ENGINE_PASS

/* ---- the cell engine's rows ------------------------------------------------------------ */

static Py_ssize_t cell_rows(const uint8_t *text, Py_ssize_t start, Py_ssize_t stop,
                            int32_t limit, int32_t *counts, int64_t *nodes, int64_t *guesses,
                            uint8_t *grids) {
    uint16_t cand[81], solution[81];
    int queue[QUEUE];
    for (Py_ssize_t p = start; p < stop; p++) {
        const uint8_t *row = text + 81 * p;
        unsigned seen[27] = {0};
        int qn = 0;
        uint32_t dirty = 0;
        for (int i = 0; i < 81; i++) {
            unsigned ch = row[i];
            if (ch == '.' || ch == '0') {
                cand[i] = FULL;
                continue;
            }
            if (ch < '1' || ch > '9') return p;
            unsigned bit = 1u << (ch - '1');
            int r = i / 9, c = i % 9, b = 18 + 3 * (r / 3) + c / 3;
            if ((seen[r] | seen[9 + c] | seen[b]) & bit) return p;
            seen[r] |= bit;
            seen[9 + c] |= bit;
            seen[b] |= bit;
            cand[i] = (uint16_t)bit;
            queue[qn++] = i;
            dirty |= HOUSE_BITS[i];
        }
        int32_t count = 0;
        int64_t n = 1, g = 0;
        if (cell_propagate(cand, queue, qn, dirty))
            cell_search(cand, limit, solution, queue, &count, &n, &g);
        counts[p] = count;
        nodes[p] = n;
        guesses[p] = g;
        if (count) {
            for (int i = 0; i < 81; i++) {
                unsigned m = solution[i], d = '1';
                while (m > 1) {
                    m >>= 1;
                    d++;
                }
                grids[81 * p + i] = (uint8_t)d;
            }
        }
    }
    return -1;
}

/* ---- Python: buffers, checked ---------------------------------------------------------- */

typedef Py_ssize_t (*rows_fn)(const uint8_t *, Py_ssize_t, Py_ssize_t, int32_t, int32_t *,
                              int64_t *, int64_t *, uint8_t *, int *);

/* Get and check one argument's buffer: C-contiguous, native integers of `itemsize` bytes and
 * `kind`, `ndim` dimensions, rows of `width` items when ndim is 2, `rows` rows unless that is
 * -1 (then taken from the buffer), writable when asked. On failure the buffer is released
 * and an exception set. */
static int get_array(PyObject *obj, Py_buffer *view, const char *name, enum gen_kind kind,
                     Py_ssize_t itemsize, int ndim, Py_ssize_t width, Py_ssize_t *rows,
                     int writable) {
    const char *dtype = gen_kind_name(kind);
    if (!PyObject_CheckBuffer(obj)) {
        PyErr_Format(PyExc_TypeError, "%s must be a %s NumPy array, not %.100s", name, dtype,
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    if (PyObject_GetBuffer(obj, view, PyBUF_RECORDS_RO) < 0) {
        if (PyErr_ExceptionMatches(PyExc_BufferError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "%s must be a plain strided %s array", name, dtype);
        }
        return -1;
    }
    if (!gen_kind_matches(view, kind) || view->itemsize != itemsize) {
        PyErr_Format(PyExc_TypeError, "%s must be a %s array in native byte order, got format "
                     "'%.20s' of %zd-byte items", name, dtype,
                     view->format ? view->format : "B", view->itemsize);
        goto fail;
    }
    if (view->ndim != ndim) {
        PyErr_Format(PyExc_ValueError, "%s must have %d dimension%s, got %d", name, ndim,
                     ndim == 1 ? "" : "s", view->ndim);
        goto fail;
    }
    if (ndim == 2 && view->shape[1] != width) {
        PyErr_Format(PyExc_ValueError, "%s must have rows of %zd items, got %zd", name, width,
                     view->shape[1]);
        goto fail;
    }
    if (*rows >= 0 && view->shape[0] != *rows) {
        PyErr_Format(PyExc_ValueError, "%s must have %zd rows (one per puzzle), got %zd", name,
                     *rows, view->shape[0]);
        goto fail;
    }
    if (!PyBuffer_IsContiguous(view, 'C')) {
        PyErr_Format(PyExc_ValueError, "%s must be C-contiguous", name);
        goto fail;
    }
    if (view->shape[0] < 0 || view->shape[0] > PY_SSIZE_T_MAX / 81 / itemsize ||
        view->len != view->shape[0] * (ndim == 2 ? width : 1) * itemsize) {
        PyErr_Format(PyExc_ValueError, "%s has an inconsistent size", name);
        goto fail;
    }
    if (writable && view->readonly) {
        PyErr_Format(PyExc_ValueError, "%s must be writable", name);
        goto fail;
    }
    *rows = view->shape[0];
    return 0;
fail:
    PyBuffer_Release(view);
    return -1;
}

static int cpu_has_bmi2(void) {
#if HAVE_BMI2_PATH
    __builtin_cpu_init();
    return __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("popcnt") &&
           __builtin_cpu_supports("avx2");
#else
    return 0;
#endif
}

static int HAS_BMI2;

/* the band engine's rows for a kernel name (NULL or "auto": the best this CPU runs) */
static rows_fn pick_kernel(PyObject *kernel) {
    const char *name = "auto";
    if (kernel != NULL && kernel != Py_None) {
        if (!PyUnicode_Check(kernel)) {
            PyErr_SetString(PyExc_TypeError, "kernel must be None or a str");
            return NULL;
        }
        name = PyUnicode_AsUTF8(kernel);
        if (name == NULL) return NULL;
    }
    if (strcmp(name, "portable") == 0) return band_rows_portable;
#if HAVE_BMI2_PATH
    if (strcmp(name, "bmi2") == 0) {
        if (!HAS_BMI2) {
            PyErr_SetString(PyExc_ValueError, "kernel 'bmi2' needs a CPU with BMI2 and AVX2");
            return NULL;
        }
        return band_rows_bmi2;
    }
    if (strcmp(name, "auto") == 0) return HAS_BMI2 ? band_rows_bmi2 : band_rows_portable;
#else
    if (strcmp(name, "auto") == 0) return band_rows_portable;
#endif
    PyErr_Format(PyExc_ValueError, "unknown kernel %R (see kernels())", kernel);
    return NULL;
}

static int to_ssize(PyObject *obj, const char *name, Py_ssize_t *out) {
    long long v;
    if (gen_int_arg(obj, name, -(long long)PY_SSIZE_T_MAX, PY_SSIZE_T_MAX, &v) < 0) return -1;
    *out = (Py_ssize_t)v;
    return 0;
}

/* the search's arguments both entry points take: the solution limit (1 to INT32_MAX),
   whether houses are propagated, and the kernel */
static int search_args(PyObject *limit_o, PyObject *houses_o, PyObject *kernel_o,
                       Py_ssize_t *limit, int *houses, rows_fn *band) {
    if (to_ssize(limit_o, "limit", limit) < 0) return -1;
    if (*limit < 1 || *limit > INT32_MAX) {
        PyErr_Format(PyExc_ValueError, "limit must be between 1 and %d, got %zd", INT32_MAX,
                     *limit);
        return -1;
    }
    *houses = PyObject_IsTrue(houses_o);
    if (*houses < 0) return -1;
    *band = pick_kernel(kernel_o);
    return *band == NULL ? -1 : 0;
}

PyDoc_STRVAR(solve_rows_doc,
"solve_rows(text, start, stop, limit, houses, counts, nodes, guesses, grids, *, kernel=None)\n"
"--\n\n"
"Check and solve rows start:stop of text (uint8[n, 81], ASCII as typed: '1'-'9', '0' or\n"
"'.') into row p of counts (int32[n]: solutions found, up to limit), nodes and guesses\n"
"(int64[n]) and grids (uint8[n, 81]: the first solution as ASCII digits, left as it was\n"
"when there is none). houses selects the band engine (true) or the cell engine (false).\n"
"Returns -1, or the first row that is not a valid puzzle (a bad byte or a given repeated\n"
"in a house), where it stops. All arrays C-contiguous, the outputs writable. The GIL is\n"
"released while solving: threads may solve disjoint row ranges of the same arrays.\n"
"kernel names a form of the band engine (see kernels()); None is the fastest here.");

static PyObject *solve_rows(PyObject *self, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"text", "start", "stop", "limit", "houses", "counts", "nodes",
                               "guesses", "grids", "kernel", NULL};
    PyObject *text_o, *start_o, *stop_o, *limit_o, *houses_o, *counts_o, *nodes_o, *guesses_o,
        *grids_o, *kernel_o = NULL;
    (void)self;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOOOOOOO|$O:solve_rows", keywords, &text_o,
                                     &start_o, &stop_o, &limit_o, &houses_o, &counts_o, &nodes_o,
                                     &guesses_o, &grids_o, &kernel_o))
        return NULL;
    Py_ssize_t start, stop, limit;
    int houses;
    rows_fn band;
    if (to_ssize(start_o, "start", &start) < 0 || to_ssize(stop_o, "stop", &stop) < 0 ||
        search_args(limit_o, houses_o, kernel_o, &limit, &houses, &band) < 0)
        return NULL;
    Py_buffer text, counts, nodes, guesses, grids;
    Py_ssize_t n = -1;
    PyObject *result = NULL;
    if (get_array(text_o, &text, "text", GEN_U8, 1, 2, 81, &n, 0) < 0)
        return NULL;
    if (get_array(counts_o, &counts, "counts", GEN_I32, 4, 1, 0, &n, 1) < 0)
        goto release_text;
    if (get_array(nodes_o, &nodes, "nodes", GEN_I64, 8, 1, 0, &n, 1) < 0)
        goto release_counts;
    if (get_array(guesses_o, &guesses, "guesses", GEN_I64, 8, 1, 0, &n, 1) < 0)
        goto release_nodes;
    if (get_array(grids_o, &grids, "grids", GEN_U8, 1, 2, 81, &n, 1) < 0)
        goto release_guesses;
    if (!(0 <= start && start <= stop && stop <= n)) {
        PyErr_Format(PyExc_ValueError, "rows %zd:%zd are outside 0:%zd", start, stop, n);
        goto release_all;
    }
    Py_ssize_t bad;
    int error = 0;
    Py_BEGIN_ALLOW_THREADS
    if (houses)
        bad = band((const uint8_t *)text.buf, start, stop, (int32_t)limit, counts.buf, nodes.buf,
                   guesses.buf, grids.buf, &error);
    else
        bad = cell_rows((const uint8_t *)text.buf, start, stop, (int32_t)limit, counts.buf,
                        nodes.buf, guesses.buf, grids.buf);
    Py_END_ALLOW_THREADS
    if (error)
        PyErr_SetString(PyExc_RuntimeError, "the sudoku search went deeper than it can");
    else
        result = PyLong_FromSsize_t(bad);
release_all:
    PyBuffer_Release(&grids);
release_guesses:
    PyBuffer_Release(&guesses);
release_nodes:
    PyBuffer_Release(&nodes);
release_counts:
    PyBuffer_Release(&counts);
release_text:
    PyBuffer_Release(&text);
    return result;
}

PyDoc_STRVAR(solve_text_doc,
"solve_text(text, limit, houses=True, *, kernel=None)\n"
"--\n\n"
"One puzzle given as 81 ASCII bytes (bytes, or a str of 81 characters): None when it is not\n"
"a valid puzzle, else (count up to limit, first solution as a str or None, nodes, guesses).");

static PyObject *solve_text(PyObject *self, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"text", "limit", "houses", "kernel", NULL};
    PyObject *text_o, *limit_o, *houses_o = Py_True, *kernel_o = NULL;
    (void)self;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|O$O:solve_text", keywords, &text_o,
                                     &limit_o, &houses_o, &kernel_o))
        return NULL;
    Py_ssize_t limit;
    int houses;
    rows_fn band;
    if (search_args(limit_o, houses_o, kernel_o, &limit, &houses, &band) < 0) return NULL;
    const char *data;
    Py_ssize_t size;
    if (PyUnicode_Check(text_o)) {
        if (PyUnicode_GET_LENGTH(text_o) != 81 || !PyUnicode_IS_ASCII(text_o)) Py_RETURN_NONE;
        data = (const char *)PyUnicode_1BYTE_DATA(text_o);
        size = 81;
    } else if (PyBytes_Check(text_o)) {
        data = PyBytes_AS_STRING(text_o);
        size = PyBytes_GET_SIZE(text_o);
    } else {
        PyErr_Format(PyExc_TypeError, "text must be a str or bytes, not %.100s",
                     Py_TYPE(text_o)->tp_name);
        return NULL;
    }
    if (size != 81) Py_RETURN_NONE;
    uint8_t row[81], grid[81];
    memcpy(row, data, 81);
    int32_t count = 0;
    int64_t nodes = 0, guesses = 0;
    int error = 0;
    Py_ssize_t bad;
    /* one puzzle is quick: the GIL stays (releasing it costs more than most solves) */
    if (houses)
        bad = band(row, 0, 1, (int32_t)limit, &count, &nodes, &guesses, grid, &error);
    else
        bad = cell_rows(row, 0, 1, (int32_t)limit, &count, &nodes, &guesses, grid);
    if (error) {
        PyErr_SetString(PyExc_RuntimeError, "the sudoku search went deeper than it can");
        return NULL;
    }
    if (bad >= 0) Py_RETURN_NONE;
    if (count == 0) return Py_BuildValue("(iOLL)", (int)count, Py_None, (long long)nodes,
                                         (long long)guesses);
    return Py_BuildValue("(is#LL)", (int)count, (const char *)grid, (Py_ssize_t)81,
                         (long long)nodes, (long long)guesses);
}

PyDoc_STRVAR(kernels_doc, "kernels()\n--\n\n"
"The forms of the band engine this CPU runs, the default (fastest) first.");

static PyObject *kernels(PyObject *self, PyObject *unused) {
    (void)self, (void)unused;
    if (HAS_BMI2) return Py_BuildValue("(ss)", "bmi2", "portable");
    return Py_BuildValue("(s)", "portable");
}

static PyMethodDef methods[] = {
    {"solve_rows", (PyCFunction)(void (*)(void))solve_rows, METH_VARARGS | METH_KEYWORDS,
     solve_rows_doc},
    {"solve_text", (PyCFunction)(void (*)(void))solve_text, METH_VARARGS | METH_KEYWORDS,
     solve_text_doc},
    {"kernels", kernels, METH_NOARGS, kernels_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "generators._native._csolve",
    "The sudoku engine in C (see generators/_native/_csolve.c and _engine.py).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__csolve(void) {
    make_tables();
    HAS_BMI2 = cpu_has_bmi2();
    return PyModule_Create(&module);
}

#else /* CSOLVE_ENGINE_PASS: the band engine, with TRIADS and SFX set by the includer */

/* F[k] loses cells; bit k when that changed it */
static inline u64 SFX(strip)(u64 *F, int k, u64 cells) {
    u64 x = F[k];
    F[k] = x & ~cells;
    return (u64)((x & cells) != 0) << k;
}

static inline u64 SFX(strip_other_bands)(u64 *F, int k, u64 cells) {
    u64 one = SFX(strip)(F, OTHER[k][0], cells);
    return one | SFX(strip)(F, OTHER[k][1], cells);
}

#if defined(ENGINE_AVX2)
/* bit i set where lane i of a equals lane i of b (64-bit lanes) */
static inline unsigned SFX(lanes_eq)(__m256i a, __m256i b) {
    return (unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64(a, b)));
}
#endif

/* the nine words of a band lose cells; bit d set when word d changed */
static inline u64 SFX(strip_band)(u64 *band, u64 cells) {
#if defined(ENGINE_AVX2)
    const __m256i c = _mm256_set1_epi64x((long long)cells), zero = _mm256_setzero_si256();
    __m256i x0 = _mm256_loadu_si256((const __m256i *)band);
    __m256i x1 = _mm256_loadu_si256((const __m256i *)(band + 4));
    _mm256_storeu_si256((__m256i *)band, _mm256_andnot_si256(c, x0));
    _mm256_storeu_si256((__m256i *)(band + 4), _mm256_andnot_si256(c, x1));
    unsigned same0 = SFX(lanes_eq)(_mm256_and_si256(x0, c), zero);
    unsigned same1 = SFX(lanes_eq)(_mm256_and_si256(x1, c), zero);
    u64 x8 = band[8];
    band[8] = x8 & ~cells;
    return (~(u64)(same0 | same1 << 4) & 0xFF) | ((u64)((x8 & cells) != 0) << 8);
#else
    u64 hit = 0;
    for (int d = 0; d < 9; d++) {
        u64 x = band[d];
        band[d] = x & ~cells;
        hit |= (u64)((x & cells) != 0) << d;
    }
    return hit;
#endif
}

#define TALLY(x, c1, c2, c3, c4) \
    do {                         \
        u64 x_ = (x);            \
        c4 |= c3 & x_;           \
        c3 |= c2 & x_;           \
        c2 |= c1 & x_;           \
        c1 |= x_;                \
    } while (0)

static inline u64 SFX(claim)(u64 *F, int k, u64 a, u64 mine, u64 others, u64 stack) {
    u64 y = a & (CLAIM[mine & ~others] * SPREAD | ~(CELLS | STACK_BITS));
    F[k] = y | (stack << 41) | ((u64)NPERM[stack] << 53);
    return (u64)(y != (a & ~STACK_BITS)) << k;
}

static inline u64 SFX(stack)(u64 c0, u64 c1, u64 c2, int j) {
    return ((c0 >> 3 * j) & 7) | (((c1 >> 3 * j) & 7) << 3) | (((c2 >> 3 * j) & 7) << 6);
}

#define COLS(a) (((a) | ((a) >> 9) | ((a) >> 18)) & ROWBITS)

/* changed: the words to take first; rules: the words whose bands and digits the other rules
 * check first (the root checks them all, while words the givens settled need no visit) */
static int SFX(propagate)(u64 *F, u64 changed, u64 rules) {
    u64 singles = rules, columns = rules, triads = rules;
    for (;;) {
        u64 touched = 0;
        /* The words changed are taken a round at a time (the next round holds what this one
         * changed) rather than lowest first as they change: the rounds' words are independent
         * work for the CPU. Every rule here only removes candidates and is rechecked
         * wherever a word changed, so the fixpoint (or the contradiction) is the same in any
         * order, and with it the search: nodes and guesses do not depend on the order. */
        while (changed) {
          u64 todo = changed;
          changed = 0;
          touched |= todo;
          while (todo) {
            int k = __builtin_ctzll(todo);
            todo &= todo - 1;
            u64 w = F[k];
            u64 a = w & CELLS;
            u64 kept = SHRINK[TRIADS(a)];
            a &= kept;
            if (a == 0) return 0;
            u64 r0 = a & ROWBITS, r1 = (a >> 9) & ROWBITS, r2 = a >> 18;
            u64 single = (u64)((r0 & (r0 - 1)) == 0) | ((u64)((r1 & (r1 - 1)) == 0) << 1) |
                         ((u64)((r2 & (r2 - 1)) == 0) << 2);
            u64 done = (w >> 27) & 7;
            u64 fresh = single & ~done;
            u64 now = a | ((done | fresh) << 27) | (kept & PATTERN_BITS) | (w & STACK_BITS);
            int b = k / 9;
            /* a box of the band with one column left keeps that column from the other bands */
            changed |= SFX(strip_other_bands)(F, k, LOCK[COLS(a)] * SPREAD);
            if (fresh) {
                /* every word of the band loses the placed cells (this one too, before it is
                 * written back with them) */
                u64 cells = a & ROWS[fresh];
                changed |= SFX(strip_band)(F + 9 * b, cells) << 9 * b;
                changed &= ~(1ULL << k);
                F[27 + b] &= ~cells;
            }
            F[k] = now;
          }
        }
        /* Every cell placed: a sudoku's solution. Each word's last state was checked above (a
         * permutation of its band, its columns struck from the other bands), so the rules
         * below would find no candidate to remove and no contradiction: they only rewrite
         * the stack patterns, which nothing reads in a solved state. */
        if ((F[27] | F[28] | F[29]) == 0) return 1;
        singles |= touched;
        columns |= touched;
        triads |= touched;
        /* naked singles, and empty cells */
        for (int b = 0; b < 3; b++) {
            u64 u = F[27 + b];
            if (u == 0 || (singles & (BAND_WORDS << 9 * b)) == 0) continue;
            u64 ones = 0, twos = 0;
            for (int d = 0; d < 9; d++) {
                u64 x = F[W(d, b)] & u;
                twos |= ones & x;
                ones |= x;
            }
            if (u & ~ones) return 0;
            u64 single = u & ~twos;
            if (single) {
                for (int d = 0; d < 9; d++) {
                    int kk = W(d, b);
                    u64 x = F[kk] & single;
                    if (x) {
                        u64 y = F[kk];
                        while (x) {
                            y &= KEEP[__builtin_ctzll(x)];
                            x &= x - 1;
                        }
                        F[kk] = y;
                        changed |= 1ULL << kk;
                    }
                }
            }
        }
        singles = 0;
        if (changed) continue;
        /* columns: a column that only one band can give the digit restricts that band's box
         * to the column (with the shrink: hidden singles) */
        for (int d = 0; d < 9; d++) {
            if ((columns & (SPREAD << d)) == 0) continue;
            u64 a0 = F[W(d, 0)], a1 = F[W(d, 1)], a2 = F[W(d, 2)];
            u64 c0 = COLS(a0), c1 = COLS(a1), c2 = COLS(a2);
            if ((c0 | c1 | c2) != ROWBITS) return 0;
            u64 s0 = SFX(stack)(c0, c1, c2, 0);
            u64 s1 = SFX(stack)(c0, c1, c2, 1);
            u64 s2 = SFX(stack)(c0, c1, c2, 2);
            changed |= SFX(claim)(F, W(d, 0), a0, c0, c1 | c2, s0);
            changed |= SFX(claim)(F, W(d, 1), a1, c1, c0 | c2, s1);
            changed |= SFX(claim)(F, W(d, 2), a2, c2, c0 | c1, s2);
        }
        columns = 0;
        if (changed) continue;
        /* triads: one that three digits certainly hold holds no other digit */
        for (int b = 0; b < 3; b++) {
            u64 u = F[27 + b];
            if (u == 0 || (triads & (BAND_WORDS << 9 * b)) == 0) continue;
            /* per digit, the triads it certainly holds (bits 0-8) and the columns it is
             * locked to in a box (bits 32-40), tallied across the digits */
            u64 sure[9];
            const u64 *w = F + 9 * b;
            for (int d = 0; d < 9; d++) sure[d] = CERT[(w[d] >> 32) & 511] | LOCK[COLS(w[d])] << 32;
            u64 c1 = 0, c2 = 0, c3 = 0, c4 = 0;
            for (int d = 0; d < 9; d++) TALLY(sure[d], c1, c2, c3, c4);
            (void)c1, (void)c2;
            if (c4) return 0;
            u64 full_rows = c3 & 511 & TRIADS(u);
            u64 full_cols = (c3 >> 32) & COLS(u);
            if (full_rows == 0 && full_cols == 0) continue;
            for (int d = 0; d < 9; d++) {
                int kk = W(d, b);
                u64 a = F[kk];
                u64 rows = full_rows & ~sure[d];
                u64 cols = full_cols & ~(sure[d] >> 32);
                u64 y = a & ~(TRICELLS[rows] | cols * SPREAD);
                if (y != a) {
                    F[kk] = y;
                    changed |= 1ULL << kk;
                }
            }
        }
        triads = 0;
        if (!changed) return 1;
    }
}

/* Where to branch: *k (word, or 32 + digit for a stack) and the two keeps; -1 when solved,
 * -2 when no branch is found (a state propagation would have refuted: a dead end). */
static int SFX(choose)(const u64 *F, u64 *keep1, u64 *keep2) {
    /* solved: after propagation every digit's pattern in a stack is one permutation, so
     * the scans below would find nothing to branch on */
    if ((F[27] | F[28] | F[29]) == 0) return -1;
    /* Group g's nine words (band g) hold each digit's permutation count in band g (bits
     * 50-52) and in stack g (bits 53-55): per group the two totals and which digits have two
     * permutations left (bit d), read in one pass */
    int band_total[3], stack_total[3];
    unsigned band_two[3], stack_two[3];
    for (int g = 0; g < 3; g++) {
        const u64 *w = F + 9 * g;
#if defined(ENGINE_AVX2)
        const __m256i seven = _mm256_set1_epi64x(7), two = _mm256_set1_epi64x(2);
        __m256i v0 = _mm256_loadu_si256((const __m256i *)w);
        __m256i v1 = _mm256_loadu_si256((const __m256i *)(w + 4));
        __m256i b0 = _mm256_and_si256(_mm256_srli_epi64(v0, 50), seven);
        __m256i b1 = _mm256_and_si256(_mm256_srli_epi64(v1, 50), seven);
        __m256i s0 = _mm256_and_si256(_mm256_srli_epi64(v0, 53), seven);
        __m256i s1 = _mm256_and_si256(_mm256_srli_epi64(v1, 53), seven);
        u64 nb8 = (w[8] >> 50) & 7, ns8 = (w[8] >> 53) & 7;
        band_two[g] = SFX(lanes_eq)(b0, two) | SFX(lanes_eq)(b1, two) << 4;
        band_two[g] |= (unsigned)(nb8 == 2) << 8;
        stack_two[g] = SFX(lanes_eq)(s0, two) | SFX(lanes_eq)(s1, two) << 4;
        stack_two[g] |= (unsigned)(ns8 == 2) << 8;
        /* band counts in each lane's low half, stack counts in its high half, then summed */
        __m256i u = _mm256_add_epi64(_mm256_add_epi64(b0, b1),
                                     _mm256_slli_epi64(_mm256_add_epi64(s0, s1), 32));
        u = _mm256_add_epi64(u, _mm256_permute4x64_epi64(u, 0x4E));
        u = _mm256_add_epi64(u, _mm256_shuffle_epi32(u, 0x4E));
        u64 sums = (u64)_mm_cvtsi128_si64(_mm256_castsi256_si128(u));
        band_total[g] = (int)(sums & 0xFFFFFFFFu) + (int)nb8;
        stack_total[g] = (int)(sums >> 32) + (int)ns8;
#else
        int tb = 0, ts = 0;
        unsigned mb = 0, ms = 0;
        for (int d = 0; d < 9; d++) {
            u64 nb = (w[d] >> 50) & 7, ns = (w[d] >> 53) & 7; /* NPERM of the patterns */
            tb += (int)nb;
            ts += (int)ns;
            mb |= (unsigned)(nb == 2) << d;
            ms |= (unsigned)(ns == 2) << d;
        }
        band_total[g] = tb, stack_total[g] = ts, band_two[g] = mb, stack_two[g] = ms;
#endif
    }
    /* the band, else the stack, with the fewest permutations overall among those with a
     * digit of two (its first such digit); the first on a tie */
    int best = 1000, best_k = -1;
    u64 best_1 = 0, best_2 = 0;
    for (int b = 0; b < 3; b++) {
        if (F[27 + b] == 0 || band_two[b] == 0 || band_total[b] >= best) continue;
        int fd = __builtin_ctz(band_two[b]);
        int found = (int)((F[W(fd, b)] >> 32) & 511);
        best = band_total[b];
        best_k = W(fd, b);
        best_1 = TRICELLS[PERM_A[found]] | ~CELLS;
        best_2 = TRICELLS[PERM_B[found]] | ~CELLS;
    }
    for (int g = 0; g < 3; g++) {
        if (stack_two[g] == 0 || stack_total[g] >= best) continue;
        int fd = __builtin_ctz(stack_two[g]), j = 3 * g;
        int found = (int)((F[W(fd, g)] >> 41) & 511);
        best = stack_total[g];
        best_k = 32 + fd;
        u64 other = (0x1FFULL ^ (7ULL << j)) * SPREAD;
        u64 x = PERM_A[found];
        best_1 = (((x & 7) | ((x & 0x38) << 6) | ((x & 0x1C0) << 12)) << j) | other;
        x = PERM_B[found];
        best_2 = (((x & 7) | ((x & 0x38) << 6) | ((x & 0x1C0) << 12)) << j) | other;
    }
    if (best_k >= 0) {
        *keep1 = best_1;
        *keep2 = best_2;
        return best_k;
    }
    int solved = 1;
    for (int b = 0; b < 3; b++) {
        u64 u = F[27 + b];
        if (u == 0) continue;
        solved = 0;
        u64 ones = 0, twos = 0, threes = 0;
        for (int d = 0; d < 9; d++) {
            u64 x = F[W(d, b)] & u;
            threes |= twos & x;
            twos |= ones & x;
            ones |= x;
        }
        u64 two = twos & ~threes;
        if (two) {
            u64 bit = two & -two;
            for (int d = 0; d < 9; d++)
                if (F[W(d, b)] & bit) {
                    *keep1 = KEEP[__builtin_ctzll(bit)];
                    *keep2 = ~bit;
                    return W(d, b);
                }
        }
    }
    if (solved) return -1;
    for (int i = 0; i < 27; i++) { /* digit by digit, each band in turn */
        int k = W(i / 3, i % 3);
        u64 a = F[k] & F[27 + i % 3];
        if (a == 0) continue;
        for (int r = 0; r < 3; r++) {
            u64 row = (a >> (9 * r)) & ROWBITS;
            if (row && popc(row) == 2) {
                u64 bit = (row & -row) << (9 * r);
                *keep1 = KEEP[__builtin_ctzll(bit)];
                *keep2 = ~bit;
                return k;
            }
        }
    }
    int fewest = 10, first_k = -1;
    u64 best_bit = 0;
    for (int b = 0; b < 3; b++) {
        u64 u = F[27 + b];
        while (u) {
            u64 bit = u & -u;
            u &= u - 1;
            int n = 0, first = -1;
            for (int d = 0; d < 9; d++) {
                if (F[W(d, b)] & bit) {
                    n++;
                    if (first < 0) first = W(d, b);
                }
            }
            if (n < fewest) {
                fewest = n;
                first_k = first;
                best_bit = bit;
            }
        }
    }
    if (first_k < 0) return -2;
    *keep1 = KEEP[__builtin_ctzll(best_bit)];
    *keep2 = ~best_bit;
    return first_k;
}

/* apply one branch; the words changed */
static inline u64 SFX(restrict_)(u64 *F, int k, u64 keep) {
    if (k < 32) {
        F[k] &= keep;
        return 1ULL << k;
    }
    int d = k - 32;
    for (int b = 0; b < 3; b++) F[W(d, b)] &= ((keep >> 9 * b) & ROWBITS) * SPREAD | ~CELLS;
    return SPREAD << d;
}

typedef struct {
    int k;
    u64 keep;
} SFX(alt);

/* count the solutions of the propagated state F up to limit, the first into solution;
 * *error set when the stack bound is reached (it cannot be: see DEPTH) */
static void SFX(search)(u64 *F, int32_t limit, u64 *solution, int32_t *count_out,
                        int64_t *nodes_out, int64_t *guesses_out, int *error) {
    u64 stack[DEPTH][WORDS];
    SFX(alt) alts[DEPTH];
    int32_t count = 0;
    int64_t nodes = 0, guesses = 0;
    int depth = 0, ok = 1;
    for (;;) {
        if (ok) {
            nodes++;
            u64 keep1 = 0, keep2 = 0;
            int k = SFX(choose)(F, &keep1, &keep2);
            if (k == -1) {
                count++;
                if (count == 1) memcpy(solution, F, sizeof(u64) * WORDS);
                if (count >= limit) break;
                ok = 0;
                continue;
            }
            if (k == -2) {
                ok = 0;
                continue;
            }
            if (depth >= DEPTH) {
                *error = 1;
                break;
            }
            memcpy(stack[depth], F, sizeof(u64) * WORDS);
            alts[depth].k = k;
            alts[depth].keep = keep2;
            depth++;
            guesses++;
            u64 changed = SFX(restrict_)(F, k, keep1);
            ok = SFX(propagate)(F, changed, changed);
        } else {
            if (depth == 0) break;
            depth--;
            memcpy(F, stack[depth], sizeof(u64) * WORDS);
            guesses++;
            u64 changed = SFX(restrict_)(F, alts[depth].k, alts[depth].keep);
            ok = SFX(propagate)(F, changed, changed);
        }
    }
    *count_out = count, *nodes_out = nodes, *guesses_out = guesses;
}

/* Where each digit is given: bits 0-63 (lo) and 64-80 (hi) of the row's cells; false when a
 * byte is neither a digit nor '.'. SSE2 compares sixteen bytes at a time where there is
 * SSE2 (every x86-64 CPU), a loop elsewhere. */
static int SFX(digit_cells)(const uint8_t *row, u64 lo[9], u64 hi[9]) {
#if defined(ENGINE_AVX2)
    /* bytes 0-31, 32-63 (AVX2), 64-79 (SSE2) and 80 */
    const __m256i zero = _mm256_set1_epi8('0'), nine = _mm256_set1_epi8('9'),
                  dot = _mm256_set1_epi8('.');
    __m256i v0 = _mm256_loadu_si256((const __m256i *)row);
    __m256i v1 = _mm256_loadu_si256((const __m256i *)(row + 32));
    __m128i v2 = _mm_loadu_si128((const __m128i *)(row + 64));
    __m256i ok0 = _mm256_or_si256(
        _mm256_cmpeq_epi8(_mm256_min_epu8(_mm256_max_epu8(v0, zero), nine), v0),
        _mm256_cmpeq_epi8(v0, dot));
    __m256i ok1 = _mm256_or_si256(
        _mm256_cmpeq_epi8(_mm256_min_epu8(_mm256_max_epu8(v1, zero), nine), v1),
        _mm256_cmpeq_epi8(v1, dot));
    __m128i ok2 = _mm_or_si128(
        _mm_cmpeq_epi8(_mm_min_epu8(_mm_max_epu8(v2, _mm256_castsi256_si128(zero)),
                                    _mm256_castsi256_si128(nine)), v2),
        _mm_cmpeq_epi8(v2, _mm256_castsi256_si128(dot)));
    unsigned valid = (unsigned)_mm256_movemask_epi8(_mm256_and_si256(ok0, ok1)) == 0xFFFFFFFFu &&
                     _mm_movemask_epi8(ok2) == 0xFFFF;
    unsigned last = row[80];
    valid &= (last >= '0' && last <= '9') || last == '.';
    for (int d = 0; d < 9; d++) {
        const __m256i c = _mm256_set1_epi8((char)('1' + d));
        lo[d] = (u64)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(v0, c)) |
                (u64)(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(v1, c)) << 32;
        hi[d] = (u64)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v2, _mm256_castsi256_si128(c))) |
                ((u64)(last == (unsigned)('1' + d)) << 16);
    }
    return (int)valid;
#elif defined(__SSE2__)
    __m128i v[5];
    unsigned valid = 1;
    const __m128i zero = _mm_set1_epi8('0'), nine = _mm_set1_epi8('9'), dot = _mm_set1_epi8('.');
    for (int j = 0; j < 5; j++) {
        v[j] = _mm_loadu_si128((const __m128i *)(row + 16 * j));
        __m128i digit = _mm_cmpeq_epi8(_mm_min_epu8(_mm_max_epu8(v[j], zero), nine), v[j]);
        __m128i ok = _mm_or_si128(digit, _mm_cmpeq_epi8(v[j], dot));
        valid &= _mm_movemask_epi8(ok) == 0xFFFF;
    }
    unsigned last = row[80];
    valid &= (last >= '0' && last <= '9') || last == '.';
    for (int d = 0; d < 9; d++) {
        const __m128i c = _mm_set1_epi8((char)('1' + d));
        u64 m = 0;
        for (int j = 0; j < 4; j++)
            m |= (u64)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v[j], c)) << 16 * j;
        lo[d] = m;
        hi[d] = (u64)(uint16_t)_mm_movemask_epi8(_mm_cmpeq_epi8(v[4], c)) |
                ((u64)(last == (unsigned)('1' + d)) << 16);
    }
    return (int)valid;
#else
    unsigned bad = 0;
    for (int d = 0; d < 9; d++) lo[d] = hi[d] = 0;
    for (int i = 0; i < 81; i++) {
        unsigned ch = row[i], d = DIGIT[ch];
        bad |= BAD[ch];
        if (d < 9) {
            if (i < 64) lo[d] |= 1ULL << i;
            else hi[d] |= 1ULL << (i - 64);
        }
    }
    return !bad;
#endif
}

/* Load a row's givens into a fresh band-engine state F, or return false when the row is not
 * a puzzle (a bad byte, or a digit given twice in a row, column or box). Besides the
 * placements themselves, it does at once what propagation would do first for each given:
 * its cell leaves the other digits' words of its band and the band's unsolved cells, and
 * its row is marked placed and propagated, and its column leaves the digit's words in the
 * other bands (the fixpoint is the same; see propagate). A word whose three rows are given
 * is then settled: propagation would find nothing to do in it, so it is left out of
 * *settled's complement, its pattern written as propagation would. */
static int SFX(read_row)(const uint8_t *row, u64 *F, u64 *settled) {
    u64 lo[9], hi[9], own[27], givens[3] = {0, 0, 0};
    u64 clash = !SFX(digit_cells)(row, lo, hi);
    for (int d = 0; d < 9; d++) {
        u64 band[3] = {lo[d] & CELLS, (lo[d] >> 27) & CELLS, ((lo[d] >> 54) | (hi[d] << 10)) & CELLS};
        u64 cols[3];
        for (int b = 0; b < 3; b++) {
            u64 o = band[b];
            u64 r0 = o & ROWBITS, r1 = (o >> 9) & ROWBITS, r2 = o >> 18;
            u64 t0 = TRI[r0], t1 = TRI[r1], t2 = TRI[r2];
            /* twice in a row, in a column of the band, in a box */
            clash |= (r0 & (r0 - 1)) | (r1 & (r1 - 1)) | (r2 & (r2 - 1));
            clash |= (r0 & r1) | (r0 & r2) | (r1 & r2) | (t0 & t1) | (t0 & t2) | (t1 & t2);
            cols[b] = r0 | r1 | r2;
            u64 placed = (u64)(r0 != 0) | ((u64)(r1 != 0) << 1) | ((u64)(r2 != 0) << 2);
            /* the digit leaves the rows and boxes of its givens, keeps the givens */
            u64 gone = ROWS[placed] | BOXES[t0 | t1 | t2];
            own[W(d, b)] = o;
            F[W(d, b)] = (CELLS & ~gone) | o | (placed << 27);
            givens[b] |= o;
        }
        clash |= (cols[0] & cols[1]) | (cols[0] & cols[2]) | (cols[1] & cols[2]);
        u64 all = cols[0] | cols[1] | cols[2];
        for (int b = 0; b < 3; b++) F[W(d, b)] &= ~((all & ~cols[b]) * SPREAD);
    }
    if (clash) return 0;
    for (int b = 0; b < 3; b++) F[27 + b] = CELLS & ~givens[b];
    u64 full = 0;
    for (int k = 0; k < 27; k++) {
        F[k] &= ~(givens[k / 9] ^ own[k]);
        if ((F[k] >> 27 & 7) == 7) { /* its cells are its givens: one permutation */
            F[k] |= SHRINK[TRIADS(own[k])] & PATTERN_BITS;
            full |= 1ULL << k;
        }
    }
    F[30] = F[31] = 0;
    *settled = full;
    return 1;
}

static Py_ssize_t SFX(band_rows)(const uint8_t *text, Py_ssize_t start, Py_ssize_t stop,
                                 int32_t limit, int32_t *counts, int64_t *nodes,
                                 int64_t *guesses, uint8_t *grids, int *error) {
    u64 F[WORDS], solution[WORDS];
    for (Py_ssize_t p = start; p < stop; p++) {
        const uint8_t *row = text + 81 * p;
        u64 settled;
        if (!SFX(read_row)(row, F, &settled)) return p;
        int32_t count = 0;
        int64_t n = 1, g = 0;
        if (SFX(propagate)(F, CELLS & ~settled, CELLS)) {
            SFX(search)(F, limit, solution, &count, &n, &g, error);
            if (*error) return p;
        }
        counts[p] = count;
        nodes[p] = n;
        guesses[p] = g;
        if (count) {
#if defined(ENGINE_AVX2)
            /* the grid's bytes 0-31, 32-63 and 49-80 in three vectors: each digit's cells
             * (bits 0-63 and 64-80 of the grid) spread to bytes and given its character */
            const __m256i shuf = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1,
                                                  1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3,
                                                  3, 3);
            const __m256i bit = _mm256_set1_epi64x((long long)0x8040201008040201ULL);
            __m256i text[3];
            for (int i = 0; i < 3; i++) text[i] = _mm256_setzero_si256();
            for (int digit = 0; digit < 9; digit++) {
                u64 b0 = solution[W(digit, 0)] & CELLS, b1 = solution[W(digit, 1)] & CELLS;
                u64 b2 = solution[W(digit, 2)] & CELLS;
                u64 lo = b0 | b1 << 27 | b2 << 54, hi = b2 >> 10;
                uint32_t part[3] = {(uint32_t)lo, (uint32_t)(lo >> 32),
                                    (uint32_t)(lo >> 49 | hi << 15)};
                const __m256i ch = _mm256_set1_epi8((char)('1' + digit));
                for (int i = 0; i < 3; i++) {
                    __m256i v = _mm256_shuffle_epi8(_mm256_set1_epi32((int)part[i]), shuf);
                    v = _mm256_cmpeq_epi8(_mm256_and_si256(v, bit), bit);
                    text[i] = _mm256_or_si256(text[i], _mm256_and_si256(v, ch));
                }
            }
            _mm256_storeu_si256((__m256i *)(grids + 81 * p), text[0]);
            _mm256_storeu_si256((__m256i *)(grids + 81 * p + 32), text[1]);
            _mm256_storeu_si256((__m256i *)(grids + 81 * p + 49), text[2]);
#else
            for (int k = 0; k < 27; k++) {
                int band = k / 9, digit = k - 9 * band;
                u64 w = solution[k] & CELLS;
                while (w) {
                    grids[81 * p + 27 * band + __builtin_ctzll(w)] = (uint8_t)('1' + digit);
                    w &= w - 1;
                }
            }
#endif
        }
    }
    return -1;
}

#undef COLS
#undef TALLY

#endif /* CSOLVE_ENGINE_PASS */

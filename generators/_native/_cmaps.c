/* The map generators' in-place loops, in C: the faithful random visits shared by the caves
   and islands (generators/maps/_visits.py), the cellular caves' in-place raster passes
   (generators/maps/cellular.py) and the caves' smoothing and filling
   (generators/maps/caves.py). Each reproduces, cell for cell, the loop its module
   describes; the maps stay those of the same seeds.

   Security: the arrays come from Python through the buffer protocol and every one is
   checked (dimensions, element type, C-contiguous layout, writability, sides below 2^30)
   before any loop, as is every number (a threshold, a pass count, every visit's offset):
   no cell outside a buffer is ever read or written, whatever the caller hands over. The
   loops run with the GIL released. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "_buffers.h"


/* ---------------------------------------------------------------------------------------
   The map generators' loops
   ------------------------------------------------------------------------------------- */

/* 2^30: no side of a map may reach it */
#if defined(__GNUC__)
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE
#endif
#define MAX_SIDE ((Py_ssize_t)1 << 30)

/* visits(padded, offsets, threshold, invert)

   The faithful random-visit loop of generators/maps/_visits.py: ``padded`` is the map with
   a one-cell border of zeros (uint8, C-contiguous, writable, at least 3 x 3), ``offsets``
   (int64, 1-D, contiguous) the visited cells as offsets from the first inner cell. Each
   visit, in order, reads the map as the previous one left it: the cell becomes 1 when its
   3x3 block holds more than ``threshold`` (0..9) set cells, else 0 (swapped when
   ``invert``). Every offset is checked to keep the 3x3 block inside ``padded`` before the
   first visit (a bad one changes nothing), and again as it is used. */
static PyObject *
cmaps_visits(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 4) {
        PyErr_Format(PyExc_TypeError,
                     "visits() takes 4 arguments (padded, offsets, threshold, invert), got %zd",
                     nargs);
        return NULL;
    }
    long long threshold;
    int invert;
    if (gen_int_arg(args[2], "threshold", 0, 9, &threshold) < 0
        || gen_bool_arg(args[3], "invert", &invert) < 0) {
        return NULL;
    }
    Py_buffer padded, offsets;
    if (gen_get_buffer(args[0], "padded", 2, GEN_U8, 1, 3, MAX_SIDE, &padded) < 0) {
        return NULL;
    }
    if (gen_get_buffer(args[1], "offsets", 1, GEN_I64, 0, 0, PY_SSIZE_T_MAX, &offsets) < 0) {
        PyBuffer_Release(&padded);
        return NULL;
    }
    PyObject *result = NULL;
    const int64_t stride = padded.shape[1];
    /* the last offset whose block stays inside: the padded map's last inner cell */
    const int64_t last = (padded.shape[0] - 2) * stride - 3;
    const int64_t *visit = offsets.buf;
    const int64_t count = offsets.shape[0];
    uint8_t *cells = padded.buf;
    int64_t bad = -1;
    Py_BEGIN_ALLOW_THREADS
    int64_t lowest = 0, highest = 0;
    for (int64_t k = 0; k < count; k++) {
        const int64_t v = visit[k];
        lowest = v < lowest ? v : lowest;
        highest = v > highest ? v : highest;
    }
    if (lowest < 0 || highest > last) {
        for (int64_t k = 0; k < count; k++) {
            if (visit[k] < 0 || visit[k] > last) {
                bad = k;
                break;
            }
        }
    } else {
        /* branch-free (the outcome is a coin toss on a random map): set iff the count
           exceeds the threshold, flipped when inverted */
        const uint8_t flip = invert ? 1 : 0;
        const int limit = (int)threshold;
        const int64_t base = stride + 1;
        for (int64_t k = 0; k < count; k++) {
            /* checked again as it is used: with the GIL released, another thread could
               change the offsets after the first pass (never the case in this package) */
            const int64_t v = visit[k];
            if ((uint64_t)v > (uint64_t)last) {
                bad = k;
                break;
            }
            uint8_t *c = cells + v + base;
            const int sum = c[-stride - 1] + c[-stride] + c[-stride + 1] + c[-1] + c[0] + c[1]
                            + c[stride - 1] + c[stride] + c[stride + 1];
            c[0] = (uint8_t)((sum > limit) ^ flip);
        }
    }
    Py_END_ALLOW_THREADS
    if (bad >= 0) {
        PyErr_Format(PyExc_ValueError,
                     "offsets[%lld] = %lld is off the %zd x %zd map inside the padding "
                     "(offsets run from 0 to %lld)",
                     (long long)bad, (long long)visit[bad], padded.shape[1] - 2,
                     padded.shape[0] - 2, (long long)last);
        goto done;
    }
    Py_INCREF(Py_None);
    result = Py_None;
done:
    PyBuffer_Release(&offsets);
    PyBuffer_Release(&padded);
    return result;
}

/* The chain new[x] = sure[x] | (if_left[x] & new[x - 1]) is a carry chain: with the flags
   of 64 cells as the bits of two words G (sure) and P (if_left, never set with G), the
   carry out of bit i of (G | P) + G + carry_in is exactly new[i] (G generates a carry, P
   passes one on). One addition resolves 64 cells; the bytes are packed into bits with a
   multiplication and spread back with a table. Little-endian machines only (the packing
   reads 8 bytes as one word); elsewhere, and for the last cells of a row, the chain runs
   one cell at a time. Returns how many cells were resolved; *left is the last new value. */
#define PACK_BYTES 0x0102040810204080ULL /* byte k (0 or 1) of a word to bit 56 + k */
static uint64_t SPREAD[256];             /* bit k of the index to byte k (0 or 1) */

static void
spread_init(void)
{
    for (int v = 0; v < 256; v++) {
        uint8_t bytes[8];
        for (int k = 0; k < 8; k++) {
            bytes[k] = (uint8_t)((v >> k) & 1);
        }
        memcpy(&SPREAD[v], bytes, 8);
    }
}

static inline int64_t
resolve_words(const uint8_t *sure, const uint8_t *if_left, uint8_t *row, int64_t width,
              uint8_t *left)
{
#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__) \
    && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t carry = *left;
    int64_t x = 0;
    for (; x + 64 <= width; x += 64) {
        uint64_t g = 0, p = 0;
        for (int k = 0; k < 8; k++) {
            uint64_t sv, pv;
            memcpy(&sv, sure + x + 8 * k, 8);
            memcpy(&pv, if_left + x + 8 * k, 8);
            g |= ((sv * PACK_BYTES) >> 56) << (8 * k);
            p |= ((pv * PACK_BYTES) >> 56) << (8 * k);
        }
        const uint64_t a = g | p;
        const uint64_t partial = a + g;
        const uint64_t sum = partial + carry;
        const uint64_t carry_out = (uint64_t)(partial < a) | (uint64_t)(sum < partial);
        const uint64_t carries = sum ^ a ^ g; /* the carry into each bit */
        const uint64_t news = (carries >> 1) | (carry_out << 63);
        for (int k = 0; k < 8; k++) {
            memcpy(row + x + 8 * k, &SPREAD[(news >> (8 * k)) & 0xFF], 8);
        }
        carry = carry_out;
    }
    *left = (uint8_t)carry;
    return x;
#else
    (void)sure;
    (void)if_left;
    (void)row;
    (void)width;
    (void)left;
    return 0;
#endif
}

/* One in-place 4-5 pass of generators/maps/cellular.py, rows top to bottom, cells left to
   right, off-map cells counted as walls: wall iff the 3x3 block (the cell included, each
   cell already seeing the new values of those before it) holds at least 5 walls.

   In that order the block of cell x is b[x] + new[x - 1], where b[x] holds only cells that
   are final for this pass (the row above, already rewritten, the row below, the cell and
   its right neighbour, not yet). So a row first sweeps b into two flags, wall for sure
   (b >= 5) and wall if the left cell is (b == 4), then resolves the one-bit chain left to
   right. Sums wrap as uint8 (maps hold 0/1: they never do). ``scratch`` has room for
   4 * width + 2 bytes. */
static void
raster_pass(uint8_t *cells, int64_t height, int64_t width, uint8_t *scratch)
{
    uint8_t *restrict above_below = scratch; /* width + 2, padded: index x + 1 is column x */
    uint8_t *restrict sure = scratch + width + 2;
    uint8_t *restrict if_left = sure + width;
    uint8_t *restrict ones = if_left + width; /* the rows off the map: walls */
    memset(ones, 1, (size_t)width);
    above_below[0] = 2;
    above_below[width + 1] = 2;
    for (int64_t y = 0; y < height; y++) {
        const uint8_t *restrict up = y > 0 ? cells + (y - 1) * width : ones;
        const uint8_t *restrict down = y + 1 < height ? cells + (y + 1) * width : ones;
        uint8_t *row = cells + y * width;
        for (int64_t x = 0; x < width; x++) {
            above_below[x + 1] = (uint8_t)(up[x] + down[x]);
        }
        for (int64_t x = 0; x + 1 < width; x++) {
            const uint8_t b = (uint8_t)(above_below[x] + above_below[x + 1] + above_below[x + 2]
                                        + row[x] + row[x + 1]);
            sure[x] = b >= 5;
            if_left[x] = b == 4;
        }
        {
            const uint8_t b = (uint8_t)(above_below[width - 1] + above_below[width]
                                        + above_below[width + 1] + row[width - 1] + 1);
            sure[width - 1] = b >= 5;
            if_left[width - 1] = b == 4;
        }
        uint8_t left = 1; /* the new value of the cell to the left (off the map: wall) */
        int64_t x = resolve_words(sure, if_left, row, width, &left);
        for (; x < width; x++) {
            left = sure[x] | (if_left[x] & left);
            row[x] = left;
        }
    }
}

/* The in-place pass with the RogueBasin clause: wall iff R1 >= 5 or R2 <= 2 (R2: walls in
   the 5x5 block). Same idea as raster_pass with a second chain: R2 is
   c[x] + new[x - 1] + new[x - 2], so the sweep also records c <= 2, c <= 1 and c == 0, and
   the chain picks the one that matches how many of the two left cells became walls.
   ``scratch`` has room for 9 * width + 10 bytes.

   The two sweeps are functions of their own, their arrays ``restrict``: told that nothing
   overlaps, the compiler vectorises them. */
NOINLINE static void
r2_gather(int64_t width, const uint8_t *restrict up2, const uint8_t *restrict up1,
          const uint8_t *restrict row, const uint8_t *restrict down1,
          const uint8_t *restrict down2, uint8_t *restrict near, uint8_t *restrict far,
          uint8_t *restrict mid)
{
    for (int64_t x = 0; x < width; x++) {
        const uint8_t n = (uint8_t)(up1[x] + down1[x]);
        near[x + 1] = n;
        far[x + 2] = (uint8_t)(n + up2[x] + down2[x]);
        mid[x + 2] = row[x];
    }
}

NOINLINE static void
r2_sweep(int64_t width, const uint8_t *restrict near, const uint8_t *restrict far,
         const uint8_t *restrict mid, uint8_t *restrict sure, uint8_t *restrict if_left,
         uint8_t *restrict sparse0, uint8_t *restrict sparse1, uint8_t *restrict sparse2)
{
    for (int64_t x = 0; x < width; x++) {
        const uint8_t b1 = (uint8_t)(near[x] + near[x + 1] + near[x + 2] + mid[x + 2]
                                     + mid[x + 3]);
        const uint8_t b2 = (uint8_t)(far[x] + far[x + 1] + far[x + 2] + far[x + 3]
                                     + far[x + 4] + mid[x + 2] + mid[x + 3] + mid[x + 4]);
        sure[x] = b1 >= 5;
        if_left[x] = b1 == 4;
        sparse0[x] = b2 <= 2;
        sparse1[x] = b2 <= 1;
        sparse2[x] = b2 == 0;
    }
}

static void
raster_pass_r2(uint8_t *cells, int64_t height, int64_t width, uint8_t *scratch)
{
    uint8_t *near = scratch;          /* rows y-1, y+1; width + 2, index x + 1 */
    uint8_t *far = near + width + 2;  /* rows y-2..y+2 except y; width + 4, index x + 2 */
    uint8_t *mid = far + width + 4;   /* row y before the pass; width + 4, index x + 2 */
    uint8_t *sure = mid + width + 4;  /* R1 >= 5 whatever the left cell becomes */
    uint8_t *if_left = sure + width;  /* R1 >= 5 if the left cell becomes a wall */
    uint8_t *sparse0 = if_left + width; /* R2 <= 2 if neither left cell is a wall */
    uint8_t *sparse1 = sparse0 + width; /* ... if one of them is */
    uint8_t *sparse2 = sparse1 + width; /* ... if both are */
    uint8_t *ones = sparse2 + width;    /* the rows off the map: walls */
    memset(ones, 1, (size_t)width);
    memset(mid, 1, (size_t)(width + 4));
    near[0] = near[width + 1] = 2;
    far[0] = far[1] = far[width + 2] = far[width + 3] = 4;
    for (int64_t y = 0; y < height; y++) {
        uint8_t *row = cells + y * width;
        r2_gather(width, y > 1 ? cells + (y - 2) * width : ones,
                  y > 0 ? cells + (y - 1) * width : ones, row,
                  y + 1 < height ? cells + (y + 1) * width : ones,
                  y + 2 < height ? cells + (y + 2) * width : ones, near, far, mid);
        r2_sweep(width, near, far, mid, sure, if_left, sparse0, sparse1, sparse2);
        uint8_t left = 1, left2 = 1; /* new values one and two cells to the left */
        for (int64_t x = 0; x < width; x++) {
            const uint8_t wall = (uint8_t)(sure[x] | (if_left[x] & left) | sparse2[x]
                                           | (sparse1[x] & ((left & left2) ^ 1))
                                           | (sparse0[x] & ((left | left2) ^ 1)));
            left2 = left;
            left = wall;
            row[x] = wall;
        }
    }
}

/* raster_pass(cells, r2): one faithful pass in place on a 2-D uint8 map (C-contiguous,
   writable, at least 1 x 1); ``r2`` adds the RogueBasin clause. */
static PyObject *
cmaps_raster_pass(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 2) {
        PyErr_Format(PyExc_TypeError, "raster_pass() takes 2 arguments (cells, r2), got %zd",
                     nargs);
        return NULL;
    }
    int r2;
    if (gen_bool_arg(args[1], "r2", &r2) < 0) {
        return NULL;
    }
    Py_buffer cells;
    if (gen_get_buffer(args[0], "cells", 2, GEN_U8, 1, 1, MAX_SIDE, &cells) < 0) {
        return NULL;
    }
    const int64_t height = cells.shape[0], width = cells.shape[1];
    uint8_t *scratch = PyMem_RawMalloc((size_t)(9 * width + 16));
    if (scratch == NULL) {
        PyBuffer_Release(&cells);
        return PyErr_NoMemory();
    }
    Py_BEGIN_ALLOW_THREADS
    if (r2) {
        raster_pass_r2(cells.buf, height, width, scratch);
    } else {
        raster_pass(cells.buf, height, width, scratch);
    }
    Py_END_ALLOW_THREADS
    PyMem_RawFree(scratch);
    PyBuffer_Release(&cells);
    Py_RETURN_NONE;
}

/* 1 when the border of the padded map is not all zero, 2 when a cell is above 1, else 0 */
static int
smooth_fill_check(const uint8_t *cells, int64_t columns, int64_t side)
{
    uint8_t border = 0, worst = 0;
    for (int64_t y = 0; y < side; y++) {
        border |= cells[y] | cells[(columns - 1) * side + y];
    }
    for (int64_t x = 0; x < columns; x++) {
        border |= cells[x * side] | cells[x * side + side - 1];
        for (int64_t y = 0; y < side; y++) {
            worst |= cells[x * side + y];
        }
    }
    return border ? 1 : worst > 1 ? 2 : 0;
}

/* The flags of one column for a smoothing pass: with ``around`` = prev + rest[y] (prev,
   the cell just updated above, is 0 or 1), the cell stays cave iff it is cave and
   room[y] - around < empty. ``if0[y]`` is that outcome when prev is 0, ``if1[y]`` when it
   is 1 (if0 implies if1: more cave around, less rock). Everything but prev is final
   before the column's chain starts (the left column is updated, the right one and the
   cells below are not yet), so this loop has no dependency and vectorises. */
NOINLINE static void
smooth_flags(int64_t height, int room_x, int empty, const uint8_t *restrict left,
             const uint8_t *restrict here, const uint8_t *restrict right,
             const uint8_t *restrict room_y, uint8_t *restrict if0, uint8_t *restrict if1)
{
    for (int64_t y = 1; y <= height; y++) {
        const int rest = here[y + 1] + left[y] + right[y];
        const int rock = room_x + room_y[y] - rest; /* rock around when prev is 0 */
        if0[y] = here[y] & (rock < empty);
        if1[y] = here[y] & (rock - 1 < empty);
    }
}

/* The same for the filling pass: the cell becomes cave iff it is cave or around >= filling */
NOINLINE static void
fill_flags(int64_t height, int filling, const uint8_t *restrict left,
           const uint8_t *restrict here, const uint8_t *restrict right, uint8_t *restrict if0,
           uint8_t *restrict if1)
{
    for (int64_t y = 1; y <= height; y++) {
        const int rest = here[y + 1] + left[y] + right[y];
        if0[y] = here[y] | (rest >= filling);
        if1[y] = here[y] | (rest + 1 >= filling);
    }
}

/* Resolve a column's chain: each cell's new value from its flags and the cell above it. */
static inline void
resolve_column(int64_t height, uint8_t *here, const uint8_t *if0, const uint8_t *if1)
{
    uint8_t prev = 0; /* above the first cell: the border, off the map */
    for (int64_t y = 1; y <= height; y++) {
        prev = if0[y] | (prev & if1[y]);
        here[y] = prev;
    }
}

/* The passes on a checked map (0/1 inside a zero border). ``scratch``: 3 * (height + 2). */
static void
smooth_fill(uint8_t *cells, int64_t width, int64_t height, long long smoothing, long long empty,
            long long filling, uint8_t *scratch)
{
    const int64_t side = height + 2;
    uint8_t *room_y = scratch, *if0 = scratch + side, *if1 = scratch + 2 * side;
    /* on-map neighbours of (x, y): 4 less those beyond an edge, by axis */
    for (int64_t y = 0; y < side; y++) {
        room_y[y] = (uint8_t)((y > 1) + (y < height));
    }
    for (long long pass = 0; pass < smoothing; pass++) {
        for (int64_t x = 1; x <= width; x++) {
            uint8_t *here = cells + x * side;
            smooth_flags(height, (x > 1) + (x < width), (int)empty, here - side, here,
                         here + side, room_y, if0, if1);
            resolve_column(height, here, if0, if1);
        }
    }
    for (int64_t x = 1; x <= width; x++) {
        uint8_t *here = cells + x * side;
        fill_flags(height, (int)filling, here - side, here, here + side, if0, if1);
        resolve_column(height, here, if0, if1);
    }
}

/* smooth_fill(cells, smoothing, empty, filling): the caves' faithful smoothing and filling
   of generators/maps/caves.py, in place on the padded, transposed 0/1 map: cells[x + 1,
   y + 1] is map cell (x, y), so x is outer and y inner as in the C# loops, and the border
   (which must be zero, standing for off-map cells) is never written. uint8, C-contiguous,
   writable, at least 3 x 3, 0/1 inside a zero border (both checked).

   ``smoothing`` passes: a cave cell (1) with at least ``empty`` rock cells among its on-map
   4-neighbours becomes rock; then one filling pass: a rock cell with at least ``filling``
   cave neighbours becomes cave. Each cell sees the neighbours already updated before it in
   the pass (x outer, y inner): the cell above has just been updated, the one below not yet
   (see smooth_flags). */
static PyObject *
cmaps_smooth_fill(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 4) {
        PyErr_Format(PyExc_TypeError,
                     "smooth_fill() takes 4 arguments (cells, smoothing, empty, filling), got "
                     "%zd", nargs);
        return NULL;
    }
    long long smoothing, empty, filling;
    if (gen_int_arg(args[1], "smoothing", 0, INT32_MAX, &smoothing) < 0
        || gen_int_arg(args[2], "empty", 0, 5, &empty) < 0
        || gen_int_arg(args[3], "filling", 0, 5, &filling) < 0) {
        return NULL;
    }
    Py_buffer buffer;
    if (gen_get_buffer(args[0], "cells", 2, GEN_U8, 1, 3, MAX_SIDE, &buffer) < 0) {
        return NULL;
    }
    uint8_t *cells = buffer.buf;
    const int64_t columns = buffer.shape[0], side = buffer.shape[1];
    const int64_t width = columns - 2, height = side - 2;
    uint8_t *scratch = PyMem_RawMalloc((size_t)(3 * side));
    if (scratch == NULL) {
        PyBuffer_Release(&buffer);
        return PyErr_NoMemory();
    }
    int bad = 0;
    Py_BEGIN_ALLOW_THREADS
    bad = smooth_fill_check(cells, columns, side);
    if (!bad) {
        smooth_fill(cells, width, height, smoothing, empty, filling, scratch);
    }
    Py_END_ALLOW_THREADS
    PyMem_RawFree(scratch);
    if (bad) {
        PyBuffer_Release(&buffer);
        PyErr_SetString(PyExc_ValueError,
                        bad == 1 ? "cells must have a border of zeros (off-map cells)"
                                 : "cells must hold only 0 (rock) and 1 (cave)");
        return NULL;
    }
    PyBuffer_Release(&buffer);
    Py_RETURN_NONE;
}

static PyMethodDef cmaps_methods[] = {
    {"visits", (PyCFunction)(void (*)(void))cmaps_visits, METH_FASTCALL,
     "visits(padded, offsets, threshold, invert) -> None\n\n"
     "The random visits, one after the other, in place on the zero-padded uint8 map."},
    {"raster_pass", (PyCFunction)(void (*)(void))cmaps_raster_pass, METH_FASTCALL,
     "raster_pass(cells, r2) -> None\n\n"
     "One in-place 4-5 pass (with the RogueBasin R2 clause when r2), rows top to bottom."},
    {"smooth_fill", (PyCFunction)(void (*)(void))cmaps_smooth_fill, METH_FASTCALL,
     "smooth_fill(cells, smoothing, empty, filling) -> None\n\n"
     "The caves' smoothing passes and filling pass, in place on the padded transposed map."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef cmaps_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "generators._native._cmaps",
    .m_doc = "The map generators' in-place loops in C (see generators/maps).",
    .m_size = -1,
    .m_methods = cmaps_methods,
};

PyMODINIT_FUNC
PyInit__cmaps(void)
{
    spread_init();
    return PyModule_Create(&cmaps_module);
}

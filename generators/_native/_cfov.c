/* Field of view by shadowcasting, in C: the engine of generators/view/_shadowcast.py
   (one-shot views, ``view``) and generators/view/field.py (one map's reusable view,
   ``Field``). The algorithms, and why they give libtcod's views cell for cell, are
   described in generators/view/_shadowcast.py.

   Security: the arrays come from Python through the buffer protocol and every one is
   checked (dimensions, element type, C-contiguous layout, writability, sides below 2^30)
   before any loop, as is every number (an origin on the map, a radius, a window that fits
   the result): no cell outside a buffer is ever read or written, whatever the caller hands
   over. The loops run with the GIL released (small views keep it: releasing would cost as
   much as the view).

   Arithmetic: slopes are compared exactly as written, each float operation rounded on its
   own: the build uses no fast math, and contraction into fused multiply-adds is off (GCC's
   -std=c11 turns it off; clang is told below). */

#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "_buffers.h"


/* ---------------------------------------------------------------------------------------
   The views
   ------------------------------------------------------------------------------------- */

/* 2^30: no side of a map may reach it, so every product below (at most 4 * side^2) fits
   an int64 */
#define MAX_SIDE ((Py_ssize_t)1 << 30)

/* one view's checked arguments, in the coordinates of ``cells`` */
typedef struct {
    const uint8_t *cells;
    int64_t width;          /* row length of cells */
    uint8_t *out;
    int64_t out_width;      /* row length of out */
    int64_t dx, dy;         /* out[(y - dy) * out_width + (x - dx)] is map cell (x, y) */
    int64_t x0, y0, x1, y1; /* the window: every cell read or lit is inside it */
    int64_t ox, oy;
    int64_t reach;          /* rows deeper than this are not scanned */
    int64_t radius_sq;      /* a cell is lit only within this squared distance */
    int light_walls;
} view_job;

/* an explicit stack of rows still to scan, in a growing buffer (the first rows live in
   ``inline_rows``, on the C stack: most views never allocate) */
typedef struct {
    void *rows;
    size_t count, capacity, size;
    void *inline_rows;
} row_stack;

static void
stack_init(row_stack *s, void *inline_rows, size_t capacity, size_t size)
{
    s->rows = inline_rows;
    s->inline_rows = inline_rows;
    s->count = 0;
    s->capacity = capacity;
    s->size = size;
}

static void
stack_free(row_stack *s)
{
    if (s->rows != s->inline_rows) {
        free(s->rows);
    }
    s->rows = s->inline_rows;
}

/* room for one more row; 0, or -1 when memory ran out (no GIL needed: plain malloc) */
static int
stack_grow(row_stack *s)
{
    if (s->count < s->capacity) {
        return 0;
    }
    if (s->capacity > ((size_t)1 << 40) / s->size) {
        return -1;
    }
    size_t capacity = s->capacity * 4;
    void *rows = malloc(capacity * s->size);
    if (rows == NULL) {
        return -1;
    }
    memcpy(rows, s->rows, s->count * s->size);
    stack_free(s);
    s->rows = rows;
    s->capacity = capacity;
    return 0;
}

#define IN_WINDOW(j, x, y) ((j)->x0 <= (x) && (x) < (j)->x1 && (j)->y0 <= (y) && (y) < (j)->y1)
#define LIGHT(j, x, y) ((j)->out[((y) - (j)->dy) * (j)->out_width + ((x) - (j)->dx)] = 1)

/* Plain shadowcasting (libtcod's FOV_SHADOW, cell for cell), eight octants. A row of an
   octant runs from the diagonal (angle = depth) towards the axis (angle 0); a cell is lit
   when any part of its square lies inside the wedge [low, high] of slopes; a wall starts a
   narrower scan of the next row, floor after walls narrows the wedge again. Slopes are
   quotients of small half-integers in double precision, computed exactly as written (no
   reciprocal is kept: the comparisons depend on the last bit).

   The row loop reads as: for each angle from the top down, skip the cell while the slope
   of its lower corner, (angle - 0.5) / far, lies above ``high``; stop at the first cell
   whose upper slope, tile_high = (angle + 0.5) / near, lies below ``low``. Both quotients
   grow with the angle (a correctly rounded quotient is monotonic in its numerator), and
   ``high`` only ever drops to a slope above every later cell's lower corner, so the
   skipped cells are a prefix and the scanned ones the angles down to the lowest with
   tile_high >= low, found once per row (lowest_angle): no division is left per cell
   but where a wall starts or ends.

   Returns the deepest row scanned, or -1 when memory ran out. */
typedef struct {
    int64_t depth;
    double high, low;
} plain_row;

static const int64_t OCTANTS[8][4] = {
    {1, 0, 0, 1}, {0, 1, 1, 0}, {0, 1, -1, 0}, {-1, 0, 0, 1},
    {-1, 0, 0, -1}, {0, -1, -1, 0}, {0, -1, 1, 0}, {1, 0, 0, -1},
};

/* The lowest angle in [0, top] whose tile_high = (angle + 0.5) / near is >= low, or
   top + 1 when even top's is below (top >= 0). Guessed in real arithmetic, then moved to
   the exact boundary with the very quotients the scan would compute. */
static inline int64_t
lowest_angle(double low, double near, int64_t top)
{
    if (((double)top + 0.5) / near < low) {
        return top + 1;
    }
    double guess = low * near - 0.5;
    int64_t a = guess <= 0.0 ? 0 : guess >= (double)top ? top : (int64_t)guess;
    while (a > 0 && ((double)(a - 1) + 0.5) / near >= low) {
        a--;
    }
    while (((double)a + 0.5) / near < low) {
        a++; /* ends at top at the latest: top's quotient is >= low */
    }
    return a;
}

static int64_t
cast_plain(const view_job *job)
{
    /* the job's fields as scalars: a store through ``out`` (bytes) may alias any object in
       memory, and would make the compiler reload a field after every cell */
    const uint8_t *const map = job->cells;
    uint8_t *const view = job->out;
    const int64_t width = job->width, out_width = job->out_width, dx = job->dx, dy = job->dy;
    const int64_t x0 = job->x0, y0 = job->y0, x1 = job->x1, y1 = job->y1;
    const int64_t ox = job->ox, oy = job->oy, reach = job->reach, radius_sq = job->radius_sq;
    const int light_walls = job->light_walls;
    plain_row inline_rows[128];
    row_stack stack;
    stack_init(&stack, inline_rows, 128, sizeof(plain_row));
    int64_t deepest = 0;
    for (int octant = 0; octant < 8; octant++) {
        const int64_t ax = OCTANTS[octant][0], ay = OCTANTS[octant][1];
        const int64_t sx = OCTANTS[octant][2], sy = OCTANTS[octant][3];
        /* one step of the angle, in each array */
        const int64_t cell_step = ay * width + ax, out_step = ay * out_width + ax;
        /* the largest angle inside the window: the rows move along the other axis, so the
           distance from the origin's line to the window's edge holds for every row */
        const int64_t edge = ax > 0 ? x1 - 1 - ox : ax < 0 ? ox - x0 : ay > 0 ? y1 - 1 - oy
                                                                      : oy - y0;
        plain_row *rows = stack.rows;
        rows[0].depth = 1;
        rows[0].high = 1.0;
        rows[0].low = 0.0;
        stack.count = 1;
        while (stack.count > 0) {
            rows = stack.rows;
            plain_row row = rows[--stack.count];
            /* the row, then the continuation it would push last and pop first */
            for (;;) {
                const int64_t depth = row.depth;
                double high = row.high;
                const double low = row.low;
                if (high < low || depth > reach) {
                    break;
                }
                const int64_t row_x = ox + depth * sx, row_y = oy + depth * sy;
                if (!(x0 <= row_x && row_x < x1 && y0 <= row_y && row_y < y1)) {
                    break;
                }
                if (depth > deepest) {
                    deepest = depth;
                }
                /* the angles whose cells lie in the window: the row's cell is inside, so only
                   the axis the angle moves along can leave it, on one side */
                const int64_t last = depth < edge ? depth : edge;
                int blocked = 0;
                const double near = (double)depth - 0.5, far = (double)depth + 0.5;
                const int64_t depth_sq = depth * depth;
                int64_t angle = (int64_t)(high * far + 0.5) + 1;
                if (angle > depth) {
                    angle = depth;
                }
                while (angle >= 0 && ((double)angle - 0.5) / far > high) {
                    angle--; /* above the wedge */
                }
                if (angle >= 0) {
                    const int64_t bottom = lowest_angle(low, near, angle);
                    const uint8_t *row_cells = map + row_y * width + row_x;
                    uint8_t *row_out = view + (row_y - dy) * out_width + (row_x - dx);
                    /* cells beyond the window (angle > last) are neither read nor lit */
                    for (angle = angle < last ? angle : last; angle >= bottom; angle--) {
                        const int wall = row_cells[angle * cell_step] != 0;
                        const int seen = (angle * angle + depth_sq <= radius_sq)
                                         & (light_walls | !wall);
                        row_out[angle * out_step] |= (uint8_t)seen;
                        if (wall) {
                            if (!blocked) {
                                if (stack_grow(&stack) < 0) {
                                    stack_free(&stack);
                                    return -1;
                                }
                                plain_row *next = (plain_row *)stack.rows + stack.count++;
                                next->depth = depth + 1;
                                next->high = high;
                                next->low = ((double)angle + 0.5) / near; /* tile_high */
                                blocked = 1;
                            }
                        } else if (blocked) {
                            high = ((double)angle + 0.5) / far;
                            blocked = 0;
                        }
                    }
                }
                if (blocked) {
                    break;
                }
                row.depth = depth + 1;
                row.high = high;
                row.low = low;
            }
        }
    }
    stack_free(&stack);
    return deepest;
}

/* Quadrants for the symmetric views as (depth step, column step); the column orientation
   is libtcod's, which matters only when reproducing its rounding. */
static const int64_t QUADRANTS[4][4] = {
    {1, 0, 0, 1}, {0, 1, 1, 0}, {0, -1, -1, 0}, {-1, 0, 0, -1},
};

/* floor(a / b) for b > 0 */
static inline int64_t
floor_div(int64_t a, int64_t b)
{
    int64_t q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

/* The columns of a symmetric row whose cells lie in the window, [*lo, *hi] (the row's
   cell, column 0, is inside; the columns run along one axis). */
static inline void
window_columns(const view_job *j, int64_t row_x, int64_t row_y, int64_t cdx, int64_t cdy,
               int64_t *lo, int64_t *hi)
{
    if (cdx > 0) {
        *lo = j->x0 - row_x;
        *hi = j->x1 - 1 - row_x;
    } else if (cdx < 0) {
        *lo = row_x - (j->x1 - 1);
        *hi = row_x - j->x0;
    } else if (cdy > 0) {
        *lo = j->y0 - row_y;
        *hi = j->y1 - 1 - row_y;
    } else {
        *lo = row_y - (j->y1 - 1);
        *hi = row_y - j->y0;
    }
}

/* Symmetric shadowcasting (Albert Ford's), four quadrants, slopes as exact fractions
   n / d with d > 0. A floor cell is lit only when its centre lies in the sector, a wall
   when its square is reached. A row scans its columns from col_min to col_max; those off
   the window are skipped without a trace (they form the two ends of the range), so only
   the columns inside are visited. Returns the deepest row scanned, or -1 (memory). */
typedef struct {
    int64_t depth, low_n, low_d, high_n, high_d;
} exact_row;

static int64_t
cast_symmetric(const view_job *job)
{
    /* the job's fields as scalars: a store through ``out`` (bytes) may alias any object in
       memory, and would make the compiler reload a field after every cell */
    const uint8_t *const map = job->cells;
    uint8_t *const view = job->out;
    const int64_t width = job->width, out_width = job->out_width, dx = job->dx, dy = job->dy;
    const int64_t x0 = job->x0, y0 = job->y0, x1 = job->x1, y1 = job->y1;
    const int64_t ox = job->ox, oy = job->oy, reach = job->reach, radius_sq = job->radius_sq;
    const int light_walls = job->light_walls;
    exact_row inline_rows[128];
    row_stack stack;
    stack_init(&stack, inline_rows, 128, sizeof(exact_row));
    int64_t deepest = 0;
    for (int quadrant = 0; quadrant < 4; quadrant++) {
        const int64_t ddx = QUADRANTS[quadrant][0], ddy = QUADRANTS[quadrant][1];
        const int64_t cdx = QUADRANTS[quadrant][2], cdy = QUADRANTS[quadrant][3];
        const int64_t cell_step = cdy * width + cdx, out_step = cdy * out_width + cdx;
        /* the columns inside the window, the same for every row (the rows move along the
           other axis) */
        int64_t col_lo, col_hi;
        window_columns(job, ox, oy, cdx, cdy, &col_lo, &col_hi);
        exact_row *rows = stack.rows;
        rows[0] = (exact_row){1, -1, 1, 1, 1};
        stack.count = 1;
        while (stack.count > 0) {
            rows = stack.rows;
            exact_row row = rows[--stack.count];
            /* the row, then the continuation it would push last and pop first */
            for (;;) {
                const int64_t depth = row.depth;
                int64_t low_n = row.low_n, low_d = row.low_d;
                const int64_t high_n = row.high_n, high_d = row.high_d;
                if (depth > reach) {
                    break;
                }
                const int64_t row_x = ox + depth * ddx, row_y = oy + depth * ddy;
                if (!(x0 <= row_x && row_x < x1 && y0 <= row_y && row_y < y1)) {
                    break;
                }
                if (depth > deepest) {
                    deepest = depth;
                }
                /* round half up of depth * low, round half down of depth * high */
                const int64_t col_min = floor_div(2 * depth * low_n + low_d, 2 * low_d);
                const int64_t col_max = -floor_div(high_d - 2 * depth * high_n, 2 * high_d);
                const int64_t first = col_lo > col_min ? col_lo : col_min;
                const int64_t end = col_hi < col_max ? col_hi : col_max;
                const uint8_t *row_cells = map + row_y * width + row_x;
                uint8_t *row_out = view + (row_y - dy) * out_width + (row_x - dx);
                int prev_wall = 0;
                const int64_t depth_sq = depth * depth;
                int64_t low_edge = depth * low_n; /* the centre test: col * low_d >= low_edge */
                const int64_t high_edge = depth * high_n;
                for (int64_t col = first; col <= end; col++) {
                    const int wall = row_cells[col * cell_step] != 0;
                    /* lit or not, without a branch (the outcome follows the cave's walls) */
                    const int seen = (col * col + depth_sq <= radius_sq)
                                     & ((wall & light_walls)
                                        | (!wall & (col * low_d >= low_edge)
                                           & (col * high_d <= high_edge)));
                    row_out[col * out_step] |= (uint8_t)seen;
                    if (prev_wall && !wall) {
                        low_n = 2 * col - 1;
                        low_d = 2 * depth;
                        low_edge = depth * low_n;
                    }
                    if (wall && !prev_wall && col != col_min) {
                        if (stack_grow(&stack) < 0) {
                            stack_free(&stack);
                            return -1;
                        }
                        exact_row *next = (exact_row *)stack.rows + stack.count++;
                        *next = (exact_row){depth + 1, low_n, low_d, 2 * col - 1, 2 * depth};
                    }
                    prev_wall = wall;
                }
                if (prev_wall) {
                    break;
                }
                row = (exact_row){depth + 1, low_n, low_d, high_n, high_d};
            }
        }
    }
    stack_free(&stack);
    return deepest;
}

/* C's roundf (half away from zero) of a float, as an integer: in double precision, where
   adding 0.5 to a single-precision value is exact, then truncated (|value| < 2^31 here). */
static inline int64_t
round_float(float value)
{
    const double wide = (double)value;
    if (wide < 0) {
        return -(int64_t)(-wide + 0.5);
    }
    return (int64_t)(wide + 0.5);
}

/* floor and ceil of a float as integers (|value| < 2^31 here: exact in int64) */
static inline int64_t
float_floor(float value)
{
    const int64_t t = (int64_t)value; /* towards zero */
    return (double)t > (double)value ? t - 1 : t;
}

static inline int64_t
float_ceil(float value)
{
    const int64_t t = (int64_t)value;
    return (double)t < (double)value ? t + 1 : t;
}

/* The symmetric view in libtcod's arithmetic (FOV_SYMMETRIC_SHADOWCAST): single-precision
   slopes (2c - 1) / (2d), a row's bounds as roundf(d * slope * (1 +/- FLT_EPSILON)) and
   the centre test c >= d * low in single precision. Every float operation is one C float
   operation (rounded to float each time: the module is compiled without contraction or
   fast math), and a column is compared with a float bound exactly (as the integer bounds
   float_ceil and float_floor). */
typedef struct {
    int64_t depth;
    float low, high;
} ties_row;

static int64_t
cast_libtcod(const view_job *job)
{
    /* the job's fields as scalars: a store through ``out`` (bytes) may alias any object in
       memory, and would make the compiler reload a field after every cell */
    const uint8_t *const map = job->cells;
    uint8_t *const view = job->out;
    const int64_t width = job->width, out_width = job->out_width, dx = job->dx, dy = job->dy;
    const int64_t x0 = job->x0, y0 = job->y0, x1 = job->x1, y1 = job->y1;
    const int64_t ox = job->ox, oy = job->oy, reach = job->reach, radius_sq = job->radius_sq;
    const int light_walls = job->light_walls;
    ties_row inline_rows[128];
    row_stack stack;
    stack_init(&stack, inline_rows, 128, sizeof(ties_row));
    const float up = 1.0000001192092896f;   /* 1 + FLT_EPSILON */
    const float down = 0.9999998807907104f; /* 1 - FLT_EPSILON */
    int64_t deepest = 0;
    for (int quadrant = 0; quadrant < 4; quadrant++) {
        const int64_t ddx = QUADRANTS[quadrant][0], ddy = QUADRANTS[quadrant][1];
        const int64_t cdx = QUADRANTS[quadrant][2], cdy = QUADRANTS[quadrant][3];
        const int64_t cell_step = cdy * width + cdx, out_step = cdy * out_width + cdx;
        int64_t col_lo, col_hi; /* the columns inside the window, as above */
        window_columns(job, ox, oy, cdx, cdy, &col_lo, &col_hi);
        ties_row *rows = stack.rows;
        rows[0] = (ties_row){1, -1.0f, 1.0f};
        stack.count = 1;
        while (stack.count > 0) {
            rows = stack.rows;
            ties_row row = rows[--stack.count];
            /* the row, then the continuation it would push last and pop first */
            for (;;) {
                const int64_t depth = row.depth;
                float low = row.low;
                const float high = row.high;
                if (depth > reach) {
                    break;
                }
                const int64_t row_x = ox + depth * ddx, row_y = oy + depth * ddy;
                if (!(x0 <= row_x && row_x < x1 && y0 <= row_y && row_y < y1)) {
                    break;
                }
                if (depth > deepest) {
                    deepest = depth;
                }
                const float fdepth = (float)depth;
                const float twice_depth = 2.0f * fdepth;
                float low_edge = fdepth * low;
                const float high_edge = fdepth * high;
                const float low_bound = low_edge * up;
                const float high_bound = high_edge * down;
                const int64_t col_min = round_float(low_bound);
                const int64_t col_max = round_float(high_bound);
                const int64_t first = col_lo > col_min ? col_lo : col_min;
                const int64_t end = col_hi < col_max ? col_hi : col_max;
                const uint8_t *row_cells = map + row_y * width + row_x;
                uint8_t *row_out = view + (row_y - dy) * out_width + (row_x - dx);
                /* a column passes the centre test when col >= low_edge and col <= high_edge
                   (compared in double precision, where both are exact): for an integer col,
                   col >= ceil(low_edge) and col <= floor(high_edge) */
                const int64_t centre_hi = float_floor(high_edge);
                int64_t centre_lo = float_ceil(low_edge);
                int prev_wall = 0;
                const int64_t depth_sq = depth * depth;
                for (int64_t col = first; col <= end; col++) {
                    const int wall = row_cells[col * cell_step] != 0;
                    const int seen = (col * col + depth_sq <= radius_sq)
                                     & ((wall & light_walls)
                                        | (!wall & (col >= centre_lo) & (col <= centre_hi)));
                    row_out[col * out_step] |= (uint8_t)seen;
                    if (prev_wall && !wall) {
                        const float twice_col = 2.0f * (float)col;
                        low = (twice_col - 1.0f) / twice_depth;
                        low_edge = fdepth * low;
                        centre_lo = float_ceil(low_edge);
                    }
                    if (wall && !prev_wall && col != col_min) {
                        if (stack_grow(&stack) < 0) {
                            stack_free(&stack);
                            return -1;
                        }
                        const float twice_col = 2.0f * (float)col;
                        const float edge = (twice_col - 1.0f) / twice_depth;
                        ties_row *next = (ties_row *)stack.rows + stack.count++;
                        *next = (ties_row){depth + 1, low, edge};
                    }
                    prev_wall = wall;
                }
                if (prev_wall) {
                    break;
                }
                row = (ties_row){depth + 1, low, high};
            }
        }
    }
    stack_free(&stack);
    return deepest;
}

#define FLAG_CHECK 1
#define FLAG_LIGHT_WALLS 2
#define FLAG_SYMMETRIC 4
#define FLAG_TIES 8
#define FLAG_ALL 15

/* The view of a checked job (origin lit first): the deepest row scanned, or -1. */
static int64_t
run_view(const view_job *j, int symmetric, int ties)
{
    LIGHT(j, j->ox, j->oy);
    if (!symmetric) {
        return cast_plain(j);
    }
    return ties ? cast_libtcod(j) : cast_symmetric(j);
}

/* The window of a view from (ox, oy) reaching ``radius`` (-1: unlimited) on a
   width x height map (0 <= ox < width, 0 <= oy < height, sides below 2^30). */
static void
plan_view(view_job *j, int64_t width, int64_t height, int64_t ox, int64_t oy, int64_t radius)
{
    int64_t reach, radius_sq;
    if (radius < 0 || radius > width + height) {
        /* unlimited, and every radius beyond each cell of the map: the farthest edge */
        reach = ox;
        reach = width - 1 - ox > reach ? width - 1 - ox : reach;
        reach = oy > reach ? oy : reach;
        reach = height - 1 - oy > reach ? height - 1 - oy : reach;
        radius_sq = 2 * reach * reach;
    } else {
        reach = radius;
        radius_sq = radius * radius;
    }
    j->ox = ox;
    j->oy = oy;
    j->reach = reach;
    j->radius_sq = radius_sq;
    j->x0 = ox > reach ? ox - reach : 0;
    j->y0 = oy > reach ? oy - reach : 0;
    j->x1 = ox + reach + 1 < width ? ox + reach + 1 : width;
    j->y1 = oy + reach + 1 < height ? oy + reach + 1 : height;
}

/* 1 when a byte of the window is above 1 */
static int
window_has_bad_values(const view_job *j)
{
    for (int64_t y = j->y0; y < j->y1; y++) {
        const uint8_t *row = j->cells + y * j->width;
        uint8_t worst = 0;
        for (int64_t x = j->x0; x < j->x1; x++) {
            worst |= row[x];
        }
        if (worst > 1) {
            return 1;
        }
    }
    return 0;
}

/* Windows from this many cells on are computed with the GIL released; below it the view
   takes about as long as releasing and taking back the lock. */
#define RELEASE_CELLS 2048

/* view(cells, out, ox, oy, radius, flags, out_x, out_y) */
static PyObject *
cfov_view(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    (void)module;
    if (nargs != 8) {
        PyErr_Format(PyExc_TypeError,
                     "view() takes 8 arguments (cells, out, ox, oy, radius, flags, out_x, "
                     "out_y), got %zd", nargs);
        return NULL;
    }
    long long ox, oy, radius, flags, out_x, out_y;
    if (gen_int_arg(args[2], "ox", 0, MAX_SIDE, &ox) < 0
        || gen_int_arg(args[3], "oy", 0, MAX_SIDE, &oy) < 0
        || gen_int_arg(args[5], "flags", 0, FLAG_ALL, &flags) < 0
        || gen_int_arg(args[6], "out_x", -MAX_SIDE, MAX_SIDE, &out_x) < 0
        || gen_int_arg(args[7], "out_y", -MAX_SIDE, MAX_SIDE, &out_y) < 0) {
        return NULL;
    }
    /* radius: -1 unlimited, else >= 0; any larger int reaches past the map */
    if (!PyLong_Check(args[4]) || PyBool_Check(args[4])) {
        PyErr_Format(PyExc_TypeError, "radius must be an int, got %.100s",
                     Py_TYPE(args[4])->tp_name);
        return NULL;
    }
    int overflow = 0;
    radius = PyLong_AsLongLongAndOverflow(args[4], &overflow);
    if (radius == -1 && PyErr_Occurred()) {
        return NULL;
    }
    if (overflow > 0) {
        radius = LLONG_MAX;
    } else if (overflow < 0 || radius < -1) {
        PyErr_Format(PyExc_ValueError, "radius must be >= 0 (or -1: unlimited), got %S",
                     args[4]);
        return NULL;
    }
    Py_buffer cells, out;
    if (gen_get_buffer(args[0], "cells", 2, GEN_U8_BOOL, 0, 1, MAX_SIDE, &cells) < 0) {
        return NULL;
    }
    if (gen_get_buffer(args[1], "out", 2, GEN_BOOL, 1, 1, MAX_SIDE, &out) < 0) {
        PyBuffer_Release(&cells);
        return NULL;
    }
    PyObject *result = NULL;
    const int64_t height = cells.shape[0], width = cells.shape[1];
    if (ox >= width || oy >= height) {
        PyErr_Format(PyExc_ValueError, "origin (%lld, %lld) is outside the %lldx%lld map", ox,
                     oy, (long long)width, (long long)height);
        goto done;
    }
    view_job job;
    plan_view(&job, width, height, ox, oy, radius);
    job.cells = cells.buf;
    job.width = width;
    job.out = out.buf;
    job.out_width = out.shape[1];
    job.dx = out_x;
    job.dy = out_y;
    job.light_walls = (flags & FLAG_LIGHT_WALLS) != 0;
    /* every cell lit lies in the window: the window must lie in out */
    if (job.x0 < out_x || job.y0 < out_y || job.x1 - out_x > out.shape[1]
        || job.y1 - out_y > out.shape[0]) {
        PyErr_Format(PyExc_ValueError,
                     "out (%zd x %zd from cell (%lld, %lld)) does not hold the view's window "
                     "x %lld..%lld, y %lld..%lld",
                     out.shape[1], out.shape[0], out_x, out_y, (long long)job.x0,
                     (long long)job.x1, (long long)job.y0, (long long)job.y1);
        goto done;
    }
    /* a bool map holds 0 and 1 by construction; uint8 cells are checked when asked */
    const char *format = gen_plain_format(&cells);
    const int check = (flags & FLAG_CHECK) != 0 && format[0] == 'B';
    const int symmetric = (flags & FLAG_SYMMETRIC) != 0, ties = (flags & FLAG_TIES) != 0;
    int bad = 0;
    int64_t deepest;
    if ((job.x1 - job.x0) * (job.y1 - job.y0) >= RELEASE_CELLS) {
        Py_BEGIN_ALLOW_THREADS
        bad = check && window_has_bad_values(&job);
        deepest = bad ? 0 : run_view(&job, symmetric, ties);
        Py_END_ALLOW_THREADS
    } else {
        bad = check && window_has_bad_values(&job);
        deepest = bad ? 0 : run_view(&job, symmetric, ties);
    }
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "grid must hold only 0 (floor) and 1 (wall)");
        goto done;
    }
    if (deepest < 0) {
        PyErr_NoMemory();
        goto done;
    }
    result = PyLong_FromLongLong(deepest);
done:
    PyBuffer_Release(&out);
    PyBuffer_Release(&cells);
    return result;
}

/* ---------------------------------------------------------------------------------------
   Field: one map's reusable view (generators.view.field.FieldOfView)
   ------------------------------------------------------------------------------------- */

typedef struct {
    PyObject_HEAD
    Py_buffer cells; /* uint8, height x width */
    Py_buffer out;   /* bool, the same shape, writable */
    Py_buffer lit;   /* 4 int64: x0, y0, x1, y1 of the window the last view may have lit */
    int held;        /* the three buffers are held */
} field_object;

static void
field_dealloc(field_object *self)
{
    if (self->held) {
        PyBuffer_Release(&self->lit);
        PyBuffer_Release(&self->out);
        PyBuffer_Release(&self->cells);
        self->held = 0;
    }
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *
field_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *names[] = {"cells", "out", "lit", NULL};
    PyObject *cells_obj, *out_obj, *lit_obj;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOO:Field", names, &cells_obj, &out_obj,
                                     &lit_obj)) {
        return NULL;
    }
    field_object *self = (field_object *)type->tp_alloc(type, 0);
    if (self == NULL) {
        return NULL;
    }
    self->held = 0;
    if (gen_get_buffer(cells_obj, "cells", 2, GEN_U8, 0, 1, MAX_SIDE, &self->cells) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    if (gen_get_buffer(out_obj, "out", 2, GEN_BOOL, 1, 1, MAX_SIDE, &self->out) < 0) {
        PyBuffer_Release(&self->cells);
        Py_DECREF(self);
        return NULL;
    }
    if (gen_get_buffer(lit_obj, "lit", 1, GEN_I64, 1, 4, 5, &self->lit) < 0) {
        PyBuffer_Release(&self->out);
        PyBuffer_Release(&self->cells);
        Py_DECREF(self);
        return NULL;
    }
    self->held = 1;
    if (self->out.shape[0] != self->cells.shape[0] || self->out.shape[1] != self->cells.shape[1]) {
        PyErr_Format(PyExc_ValueError, "out (%zd x %zd) must have the shape of cells (%zd x %zd)",
                     self->out.shape[0], self->out.shape[1], self->cells.shape[0],
                     self->cells.shape[1]);
        Py_DECREF(self);
        return NULL;
    }
    const uint8_t *cells = self->cells.buf;
    uint8_t worst = 0;
    for (Py_ssize_t i = 0; i < self->cells.len; i++) {
        worst |= cells[i];
    }
    if (worst > 1) {
        PyErr_SetString(PyExc_ValueError, "grid must hold only 0 (floor) and 1 (wall)");
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

/* compute(origin, radius, light_walls, symmetric, libtcod_ties) -> bool

   The everyday call: ``origin`` a tuple of two ints, ``radius`` an int or None, three
   bools. Clears the window the last view lit (kept in ``lit``, clipped to the map whatever
   it holds), computes the view into ``out`` and records its window in ``lit``. Returns
   True; False, with nothing changed, for arguments of other types (numpy integers, lists),
   which the caller checks and converts before calling again. Values out of range raise
   ValueError, with nothing changed. */
static PyObject *
field_compute(field_object *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5) {
        PyErr_Format(PyExc_TypeError,
                     "compute() takes 5 arguments (origin, radius, light_walls, symmetric, "
                     "libtcod_ties), got %zd", nargs);
        return NULL;
    }
    PyObject *origin = args[0], *radius_obj = args[1];
    if (!PyTuple_CheckExact(origin) || PyTuple_GET_SIZE(origin) != 2
        || !PyLong_CheckExact(PyTuple_GET_ITEM(origin, 0))
        || !PyLong_CheckExact(PyTuple_GET_ITEM(origin, 1))
        || !(radius_obj == Py_None || PyLong_CheckExact(radius_obj))) {
        Py_RETURN_FALSE;
    }
    for (int i = 2; i < 5; i++) {
        if (args[i] != Py_True && args[i] != Py_False) {
            Py_RETURN_FALSE;
        }
    }
    const int64_t height = self->cells.shape[0], width = self->cells.shape[1];
    int overflow_x = 0, overflow_y = 0;
    long long ox = PyLong_AsLongLongAndOverflow(PyTuple_GET_ITEM(origin, 0), &overflow_x);
    long long oy = PyLong_AsLongLongAndOverflow(PyTuple_GET_ITEM(origin, 1), &overflow_y);
    if (PyErr_Occurred()) {
        return NULL;
    }
    if (overflow_x || overflow_y || ox < 0 || oy < 0 || ox >= width || oy >= height) {
        PyErr_Format(PyExc_ValueError, "origin (%S, %S) is outside the %lldx%lld map",
                     PyTuple_GET_ITEM(origin, 0), PyTuple_GET_ITEM(origin, 1),
                     (long long)width, (long long)height);
        return NULL;
    }
    long long radius = -1;
    if (radius_obj != Py_None) {
        int overflow = 0;
        radius = PyLong_AsLongLongAndOverflow(radius_obj, &overflow);
        if (radius == -1 && PyErr_Occurred()) {
            return NULL;
        }
        if (overflow < 0 || (overflow == 0 && radius < 0)) {
            PyErr_Format(PyExc_ValueError, "radius must be >= 0, got %S", radius_obj);
            return NULL;
        }
        if (overflow > 0) {
            radius = -1; /* beyond the map: unlimited */
        }
    }
    view_job job;
    plan_view(&job, width, height, ox, oy, radius);
    job.cells = self->cells.buf;
    job.width = width;
    job.out = self->out.buf;
    job.out_width = width;
    job.dx = 0;
    job.dy = 0;
    job.light_walls = args[2] == Py_True;
    const int symmetric = args[3] == Py_True, ties = args[4] == Py_True;
    int64_t *lit = self->lit.buf;
    /* the window to clear, clipped: whatever ``lit`` holds, only the map is written */
    int64_t cx0 = lit[0] > 0 ? lit[0] : 0, cy0 = lit[1] > 0 ? lit[1] : 0;
    int64_t cx1 = lit[2] < width ? lit[2] : width, cy1 = lit[3] < height ? lit[3] : height;
    int64_t deepest;
    const int64_t work = (job.x1 - job.x0) * (job.y1 - job.y0)
                         + (cx1 > cx0 && cy1 > cy0 ? (cx1 - cx0) * (cy1 - cy0) : 0);
    PyThreadState *state = work >= RELEASE_CELLS ? PyEval_SaveThread() : NULL;
    if (cx1 > cx0) {
        for (int64_t y = cy0; y < cy1; y++) {
            memset(job.out + y * width + cx0, 0, (size_t)(cx1 - cx0));
        }
    }
    lit[0] = lit[1] = lit[2] = lit[3] = 0;
    deepest = run_view(&job, symmetric, ties);
    if (deepest >= 0) {
        lit[0] = job.ox - deepest > job.x0 ? job.ox - deepest : job.x0;
        lit[1] = job.oy - deepest > job.y0 ? job.oy - deepest : job.y0;
        lit[2] = job.ox + deepest + 1 < job.x1 ? job.ox + deepest + 1 : job.x1;
        lit[3] = job.oy + deepest + 1 < job.y1 ? job.oy + deepest + 1 : job.y1;
    } else {
        /* out of memory mid-view: the partial view lies in the window */
        lit[0] = job.x0;
        lit[1] = job.y0;
        lit[2] = job.x1;
        lit[3] = job.y1;
    }
    if (state != NULL) {
        PyEval_RestoreThread(state);
    }
    if (deepest < 0) {
        return PyErr_NoMemory();
    }
    Py_RETURN_TRUE;
}

static PyMethodDef field_methods[] = {
    {"compute", (PyCFunction)(void (*)(void))field_compute, METH_FASTCALL,
     "compute(origin, radius, light_walls, symmetric, libtcod_ties) -> bool\n\n"
     "The view from origin into out (True), or False for arguments of other types than a "
     "tuple of two ints, an int or None and three bools (nothing changed)."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject field_type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "generators._native._cfov.Field",
    .tp_basicsize = sizeof(field_object),
    .tp_dealloc = (destructor)field_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Field(cells, out, lit): one map's reusable view. cells (uint8, C-contiguous, "
              "0/1), out (bool, writable, the same shape) and lit (4 int64, writable) are held "
              "until the object goes.",
    .tp_methods = field_methods,
    .tp_new = field_new,
};

static PyMethodDef cfov_methods[] = {
    {"view", (PyCFunction)(void (*)(void))cfov_view, METH_FASTCALL,
     "view(cells, out, ox, oy, radius, flags, out_x, out_y) -> deepest row scanned\n\n"
     "One view from (ox, oy) on cells (2-D uint8 or bool, C-contiguous) into out (2-D bool, "
     "writable, C-contiguous), whose cell [0, 0] is map cell (out_x, out_y) and which must "
     "hold the window the radius reaches (radius -1: unlimited). flags: 1 check the window "
     "holds 0/1 (uint8 cells), 2 light walls, 4 symmetric, 8 libtcod's arithmetic."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef cfov_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "generators._native._cfov",
    .m_doc = "Shadowcasting field of view in C (see generators/view/_shadowcast.py).",
    .m_size = -1,
    .m_methods = cfov_methods,
};

PyMODINIT_FUNC
PyInit__cfov(void)
{
    if (PyType_Ready(&field_type) < 0) {
        return NULL;
    }
    PyObject *module = PyModule_Create(&cfov_module);
    if (module == NULL) {
        return NULL;
    }
    Py_INCREF(&field_type);
    if (PyModule_AddObject(module, "Field", (PyObject *)&field_type) < 0) {
        Py_DECREF(&field_type);
        Py_DECREF(module);
        return NULL;
    }
    if (PyModule_AddIntConstant(module, "MAX_SIDE", (long)MAX_SIDE) < 0) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}

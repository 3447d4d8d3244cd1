/* PostgreSQL's binary COPY rows made in C from the rows' Python values.
 *
 *   rows(rows, codes) -> the bytes of the tuples of ``rows`` (a list of tuples) in
 *                        PostgreSQL's binary COPY format, without the file header and
 *                        trailer: each tuple its field count, then each field its length
 *                        (-1 for None: NULL) and its bytes; ``codes`` (bytes) gives the
 *                        column types, one letter each:
 *
 *     b bool         True or False (exactly), one byte
 *     2 4 8 int2/4/8 an exact int within the column's range, big-endian
 *     f float8       an exact float, IEEE 754 big-endian
 *     t text         an exact str, as UTF-8
 *     y bytea        exact bytes
 *     u uuid         an exact uuid.UUID, its 16 bytes
 *     d date         an exact date: days since 2000-01-01, int32
 *     T time         an exact naive time: microseconds since midnight, int64
 *     s timestamp    an exact naive datetime: microseconds since 2000-01-01, int64
 *     z timestamptz  an exact aware datetime: the instant, microseconds since
 *                    2000-01-01 UTC, int64
 *     n numeric      an exact finite Decimal: base-10000 digits, weight, sign, scale
 *     j jsonb        an exact str (JSON text): the version byte 1, then the text as UTF-8
 *
 * These are the bytes psycopg's binary dumpers send for the same values (what the server
 * stores is the same value; the tests compare what the server gives back of both). A value
 * that is not the common case of its column (another type, even a subclass; an int out of
 * range; a str that UTF-8 cannot hold; a naive datetime for timestamptz; a NaN Decimal; a
 * tzinfo whose utcoffset() is None or fails) makes the answer None: the caller then writes
 * the rows through psycopg, which gives the same result or its own error. Nothing here
 * decides a refusal. The server refuses what it would refuse of psycopg's bytes (a NUL in
 * a text, a NULL in a NOT NULL column, a value beyond a NUMERIC's precision).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <datetime.h>
#include <stdint.h>
#include <string.h>

static PyObject *uuid_type;    /* uuid.UUID */
static PyObject *decimal_type; /* decimal.Decimal */
static PyObject *int_name;     /* "int" (a UUID's value) */
static PyObject *utcoffset_name;
static PyTypeObject *timezone_type; /* datetime.timezone: a fixed offset */

#define PG_EPOCH_ORDINAL 730120 /* date(2000, 1, 1).toordinal() */
#define US_PER_DAY 86400000000LL
#define MAX_DECIMAL_TEXT 256    /* longer Decimal texts go through psycopg */
#define MAX_WEIGHT 0x7FFF
#define MAX_DSCALE 0x3FFF

typedef struct {
    char *data;
    Py_ssize_t len;
    Py_ssize_t cap;
} Buffer;

static int reserve(Buffer *b, Py_ssize_t more) {
    if (b->len + more <= b->cap) {
        return 0;
    }
    Py_ssize_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + more) {
        if (cap > PY_SSIZE_T_MAX / 2) {
            PyErr_NoMemory();
            return -1;
        }
        cap *= 2;
    }
    char *data = PyMem_Realloc(b->data, (size_t)cap);
    if (data == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    b->data = data;
    b->cap = cap;
    return 0;
}

static void put_u16(char *p, uint16_t v) {
    p[0] = (char)(v >> 8);
    p[1] = (char)v;
}

static void put_u32(char *p, uint32_t v) {
    p[0] = (char)(v >> 24);
    p[1] = (char)(v >> 16);
    p[2] = (char)(v >> 8);
    p[3] = (char)v;
}

static void put_u64(char *p, uint64_t v) {
    put_u32(p, (uint32_t)(v >> 32));
    put_u32(p + 4, (uint32_t)v);
}

/* A field of ``size`` bytes: its length written, a pointer to its bytes returned (NULL:
 * out of memory). */
static char *field(Buffer *b, Py_ssize_t size) {
    if (size > INT32_MAX) {
        return NULL;
    }
    if (reserve(b, 4 + size) < 0) {
        return NULL;
    }
    char *p = b->data + b->len;
    put_u32(p, (uint32_t)size);
    b->len += 4 + size;
    return p + 4;
}

static int put_int64_field(Buffer *b, int64_t v) {
    char *p = field(b, 8);
    if (p == NULL) {
        return -1;
    }
    put_u64(p, (uint64_t)v);
    return 0;
}

/* A field of ``head`` (``n`` bytes) then ``data`` (``size`` bytes): 0 written, 1 too long
 * for a field (psycopg's path decides), -1 out of memory. */
static int put_bytes(Buffer *b, const char *head, Py_ssize_t n, const char *data,
                     Py_ssize_t size) {
    if (size > INT32_MAX - n) {
        return 1;
    }
    char *p = field(b, n + size);
    if (p == NULL) {
        return -1;
    }
    memcpy(p, head, (size_t)n);
    memcpy(p + n, data, (size_t)size);
    return 0;
}

/* Days from 0001-01-01 (day 1) to the date y-m-d, as date.toordinal(). */
static int64_t ordinal(int y, int m, int d) {
    static const int before[13] = {0, 0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334};
    int64_t n = (int64_t)(y - 1);
    int64_t days = n * 365 + n / 4 - n / 100 + n / 400 + before[m] + d;
    if (m > 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0)) {
        days += 1;
    }
    return days;
}

/* Microseconds of a timedelta (a utcoffset). */
static int64_t delta_us(PyObject *delta) {
    return (int64_t)PyDateTime_DELTA_GET_DAYS(delta) * US_PER_DAY +
           (int64_t)PyDateTime_DELTA_GET_SECONDS(delta) * 1000000LL +
           PyDateTime_DELTA_GET_MICROSECONDS(delta);
}

/* The local microseconds since 2000-01-01 of a datetime (its fields as they are). */
static int64_t local_us(PyObject *v) {
    int64_t days = ordinal(PyDateTime_GET_YEAR(v), PyDateTime_GET_MONTH(v),
                           PyDateTime_GET_DAY(v)) -
                   PG_EPOCH_ORDINAL;
    int64_t in_day = ((int64_t)PyDateTime_DATE_GET_HOUR(v) * 3600 +
                      (int64_t)PyDateTime_DATE_GET_MINUTE(v) * 60 +
                      PyDateTime_DATE_GET_SECOND(v)) *
                         1000000LL +
                     PyDateTime_DATE_GET_MICROSECOND(v);
    return days * US_PER_DAY + in_day;
}

/* Per call: the last fixed-offset zone met and its offset (a column of one zone asks once). */
typedef struct {
    PyObject *zone;
    int64_t offset;
} ZoneMemo;

/* The UTC offset of an aware datetime in microseconds: 0 on success, 1 when it is not the
 * common case (utcoffset() None, not a timedelta, or raising: psycopg's path decides). */
static int offset_us(PyObject *v, PyObject *zone, ZoneMemo *memo, int64_t *out) {
    if (zone == PyDateTime_TimeZone_UTC) {
        *out = 0;
        return 0;
    }
    int fixed = Py_TYPE(zone) == timezone_type;
    if (fixed && zone == memo->zone) {
        *out = memo->offset;
        return 0;
    }
    PyObject *delta = PyObject_CallMethodNoArgs(v, utcoffset_name);
    if (delta == NULL) {
        PyErr_Clear();
        return 1;
    }
    if (!PyDelta_CheckExact(delta)) {
        Py_DECREF(delta);
        return 1;
    }
    *out = delta_us(delta);
    Py_DECREF(delta);
    if (fixed) {
        memo->zone = zone; /* borrowed: the rows hold it for the call */
        memo->offset = *out;
    }
    return 0;
}

/* A numeric field of a finite Decimal's text (str(), "-12.50", "1E+3", "1.5E-7"): 0 on
 * success, 1 when the text is not that common case (NaN, Infinity, too long, a scale or
 * weight beyond the binary format's), -1 out of memory. */
static int put_numeric(Buffer *b, const char *s, Py_ssize_t n) {
    char digits[MAX_DECIMAL_TEXT];
    Py_ssize_t count = 0;
    Py_ssize_t i = 0;
    int negative = 0;
    long exponent = 0;
    Py_ssize_t after_point = 0;
    int point = 0;
    if (n <= 0 || n >= MAX_DECIMAL_TEXT) {
        return 1;
    }
    if (s[0] == '-') {
        negative = 1;
        i = 1;
    }
    for (; i < n; i++) {
        char c = s[i];
        if (c >= '0' && c <= '9') {
            digits[count++] = (char)(c - '0');
            after_point += point;
        } else if (c == '.' && !point) {
            point = 1;
        } else {
            break;
        }
    }
    if (count == 0) {
        return 1;
    }
    if (i < n) {
        if (s[i] != 'E') {
            return 1;
        }
        i++;
        int minus = 0;
        if (s[i] == '+' || s[i] == '-') {
            minus = s[i] == '-';
            i++;
        }
        if (i >= n) {
            return 1;
        }
        for (; i < n; i++) {
            if (s[i] < '0' || s[i] > '9' || exponent > 100000) {
                return 1;
            }
            exponent = exponent * 10 + (s[i] - '0');
        }
        if (minus) {
            exponent = -exponent;
        }
    }
    exponent -= (long)after_point; /* the power of ten of the last digit */
    long dscale = exponent < 0 ? -exponent : 0;
    if (dscale > MAX_DSCALE) {
        return 1;
    }
    Py_ssize_t first = 0;
    while (first < count && digits[first] == 0) {
        first++;
    }
    Py_ssize_t last = count; /* one past the last nonzero digit */
    while (last > first && digits[last - 1] == 0) {
        last--;
    }
    if (first == last) { /* zero: no digits, weight 0, positive (the server makes it so) */
        char *p = field(b, 8);
        if (p == NULL) {
            return -1;
        }
        put_u16(p, 0);
        put_u16(p + 2, 0);
        put_u16(p + 4, 0x0000);
        put_u16(p + 6, (uint16_t)dscale);
        return 0;
    }
    /* digit k (first <= k < last) stands for 10 ** (exponent + count - 1 - k); its
     * base-10000 digit is the floor of that power over 4 */
    long top = exponent + (long)(count - 1 - first);
    long bottom = exponent + (long)(count - last);
    long weight = top >= 0 ? top / 4 : -((-top + 3) / 4);
    long low = bottom >= 0 ? bottom / 4 : -((-bottom + 3) / 4);
    if (weight > MAX_WEIGHT || low < -MAX_WEIGHT - 1) {
        return 1;
    }
    long ndigits = weight - low + 1;
    char *p = field(b, 8 + 2 * ndigits);
    if (p == NULL) {
        return -1;
    }
    put_u16(p, (uint16_t)ndigits);
    put_u16(p + 2, (uint16_t)(int16_t)weight);
    put_u16(p + 4, negative ? 0x4000 : 0x0000);
    put_u16(p + 6, (uint16_t)dscale);
    char *out = p + 8;
    memset(out, 0, (size_t)(2 * ndigits));
    static const int scale[4] = {1, 10, 100, 1000};
    for (Py_ssize_t k = first; k < last; k++) {
        long power = exponent + (long)(count - 1 - k);
        long group = power >= 0 ? power / 4 : -((-power + 3) / 4);
        long at = weight - group; /* index of the base-10000 digit, most significant first */
        char *g = out + 2 * at;
        int value = ((unsigned char)g[0] << 8 | (unsigned char)g[1]) +
                    digits[k] * scale[power - 4 * group];
        put_u16(g, (uint16_t)value);
    }
    return 0;
}

/* One value's field: 0 written, 1 not the common case, -1 an error (out of memory). */
static int put_value(Buffer *b, char code, PyObject *v, ZoneMemo *memo) {
    char *p;
    if (v == Py_None) {
        if (reserve(b, 4) < 0) {
            return -1;
        }
        put_u32(b->data + b->len, 0xFFFFFFFFu);
        b->len += 4;
        return 0;
    }
    switch (code) {
    case 'b':
        if (v != Py_True && v != Py_False) {
            return 1;
        }
        p = field(b, 1);
        if (p == NULL) {
            return -1;
        }
        p[0] = v == Py_True;
        return 0;
    case '2':
    case '4':
    case '8': {
        if (!PyLong_CheckExact(v)) {
            return 1;
        }
        int overflow = 0;
        long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (overflow || (x == -1 && PyErr_Occurred())) {
            PyErr_Clear();
            return 1;
        }
        if (code == '2') {
            if (x < INT16_MIN || x > INT16_MAX) {
                return 1;
            }
            p = field(b, 2);
            if (p == NULL) {
                return -1;
            }
            put_u16(p, (uint16_t)(int16_t)x);
        } else if (code == '4') {
            if (x < INT32_MIN || x > INT32_MAX) {
                return 1;
            }
            p = field(b, 4);
            if (p == NULL) {
                return -1;
            }
            put_u32(p, (uint32_t)(int32_t)x);
        } else {
            return put_int64_field(b, (int64_t)x);
        }
        return 0;
    }
    case 'f': {
        if (!PyFloat_CheckExact(v)) {
            return 1;
        }
        double d = PyFloat_AS_DOUBLE(v);
        uint64_t bits;
        memcpy(&bits, &d, sizeof bits);
        p = field(b, 8);
        if (p == NULL) {
            return -1;
        }
        put_u64(p, bits);
        return 0;
    }
    case 't':
    case 'j': {
        if (!PyUnicode_CheckExact(v)) {
            return 1;
        }
        Py_ssize_t size;
        const char *text = PyUnicode_AsUTF8AndSize(v, &size);
        if (text == NULL) { /* a lone surrogate: psycopg says what it says */
            PyErr_Clear();
            return 1;
        }
        /* jsonb's binary form: its version, 1, before the text */
        return code == 'j' ? put_bytes(b, "\x01", 1, text, size) : put_bytes(b, "", 0, text, size);
    }
    case 'y':
        if (!PyBytes_CheckExact(v)) {
            return 1;
        }
        return put_bytes(b, "", 0, PyBytes_AS_STRING(v), PyBytes_GET_SIZE(v));
    case 'u': {
        if ((PyObject *)Py_TYPE(v) != uuid_type) {
            return 1;
        }
        PyObject *whole = PyObject_GetAttr(v, int_name);
        if (whole == NULL) {
            PyErr_Clear();
            return 1;
        }
        if (!PyLong_CheckExact(whole)) {
            Py_DECREF(whole);
            return 1;
        }
        uint64_t lo = PyLong_AsUnsignedLongLongMask(whole);
        PyObject *shift = PyLong_FromLong(64);
        PyObject *high = shift == NULL ? NULL : PyNumber_Rshift(whole, shift);
        Py_XDECREF(shift);
        Py_DECREF(whole);
        if (high == NULL) {
            return -1;
        }
        uint64_t hi = PyLong_AsUnsignedLongLong(high);
        Py_DECREF(high);
        if (hi == (uint64_t)-1 && PyErr_Occurred()) { /* beyond 128 bits */
            PyErr_Clear();
            return 1;
        }
        p = field(b, 16);
        if (p == NULL) {
            return -1;
        }
        put_u64(p, hi);
        put_u64(p + 8, lo);
        return 0;
    }
    case 'd': {
        if (!PyDate_CheckExact(v)) {
            return 1;
        }
        int64_t days = ordinal(PyDateTime_GET_YEAR(v), PyDateTime_GET_MONTH(v),
                               PyDateTime_GET_DAY(v)) -
                       PG_EPOCH_ORDINAL;
        p = field(b, 4);
        if (p == NULL) {
            return -1;
        }
        put_u32(p, (uint32_t)(int32_t)days);
        return 0;
    }
    case 'T': {
        if (!PyTime_CheckExact(v) || PyDateTime_TIME_GET_TZINFO(v) != Py_None) {
            return 1;
        }
        int64_t us = ((int64_t)PyDateTime_TIME_GET_HOUR(v) * 3600 +
                      (int64_t)PyDateTime_TIME_GET_MINUTE(v) * 60 +
                      PyDateTime_TIME_GET_SECOND(v)) *
                         1000000LL +
                     PyDateTime_TIME_GET_MICROSECOND(v);
        return put_int64_field(b, us);
    }
    case 's':
        if (!PyDateTime_CheckExact(v) || PyDateTime_DATE_GET_TZINFO(v) != Py_None) {
            return 1;
        }
        return put_int64_field(b, local_us(v));
    case 'z': {
        if (!PyDateTime_CheckExact(v)) {
            return 1;
        }
        PyObject *zone = PyDateTime_DATE_GET_TZINFO(v);
        if (zone == Py_None) {
            return 1;
        }
        int64_t offset;
        int odd = offset_us(v, zone, memo, &offset);
        if (odd) {
            return odd;
        }
        return put_int64_field(b, local_us(v) - offset);
    }
    case 'n': {
        if ((PyObject *)Py_TYPE(v) != decimal_type) {
            return 1;
        }
        PyObject *text = PyObject_Str(v);
        if (text == NULL) {
            PyErr_Clear();
            return 1;
        }
        Py_ssize_t size;
        const char *s = PyUnicode_AsUTF8AndSize(text, &size);
        int done = s == NULL ? 1 : put_numeric(b, s, size);
        if (s == NULL) {
            PyErr_Clear();
        }
        Py_DECREF(text);
        return done;
    }
    default:
        return 1;
    }
}

static PyObject *rows(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    (void)self;
    if (nargs != 2 || !PyList_Check(args[0]) || !PyBytes_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "rows(rows: list, codes: bytes)");
        return NULL;
    }
    PyObject *list = args[0];
    const char *codes = PyBytes_AS_STRING(args[1]);
    Py_ssize_t width = PyBytes_GET_SIZE(args[1]);
    if (width > INT16_MAX) {
        Py_RETURN_NONE;
    }
    Buffer b = {NULL, 0, 0};
    ZoneMemo memo = {NULL, 0};
    Py_ssize_t count = PyList_GET_SIZE(list);
    int odd = 0;
    for (Py_ssize_t r = 0; r < count && !odd; r++) {
        PyObject *row = PyList_GET_ITEM(list, r);
        if (!PyTuple_CheckExact(row) || PyTuple_GET_SIZE(row) != width) {
            odd = 1;
            break;
        }
        if (reserve(&b, 2) < 0) {
            odd = -1;
            break;
        }
        put_u16(b.data + b.len, (uint16_t)width);
        b.len += 2;
        for (Py_ssize_t c = 0; c < width; c++) {
            odd = put_value(&b, codes[c], PyTuple_GET_ITEM(row, c), &memo);
            if (odd) {
                break;
            }
        }
    }
    if (odd) {
        PyMem_Free(b.data);
        if (odd < 0) {
            return NULL;
        }
        Py_RETURN_NONE;
    }
    PyObject *out = PyBytes_FromStringAndSize(b.data, b.len);
    PyMem_Free(b.data);
    return out;
}

static PyMethodDef methods[] = {
    {"rows", (PyCFunction)(void (*)(void))rows, METH_FASTCALL,
     "The binary COPY tuples of a list of row tuples (codes: one letter a column); None "
     "when a value is not the common case of its column."},
    {NULL, NULL, 0, NULL},
};

static PyObject *type_of(const char *module, const char *name) {
    PyObject *mod = PyImport_ImportModule(module);
    if (mod == NULL) {
        return NULL;
    }
    PyObject *type = PyObject_GetAttrString(mod, name);
    Py_DECREF(mod);
    return type;
}

static int exec_module(PyObject *module) {
    (void)module;
    PyDateTime_IMPORT;
    if (PyDateTimeAPI == NULL) {
        return -1;
    }
    uuid_type = type_of("uuid", "UUID");
    decimal_type = type_of("decimal", "Decimal");
    int_name = PyUnicode_InternFromString("int");
    utcoffset_name = PyUnicode_InternFromString("utcoffset");
    if (uuid_type == NULL || decimal_type == NULL || int_name == NULL ||
        utcoffset_name == NULL) {
        return -1;
    }
    timezone_type = Py_TYPE(PyDateTime_TimeZone_UTC);
    return 0;
}

static PyModuleDef_Slot slots[] = {
    {Py_mod_exec, exec_module},
    {0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "pgrows", "PostgreSQL binary COPY rows made in C.", 0, methods,
    slots,      NULL,      NULL,     NULL,
};

PyMODINIT_FUNC PyInit_pgrows(void) { return PyModuleDef_Init(&module_def); }

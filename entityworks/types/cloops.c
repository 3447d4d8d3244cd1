/* Column loops in C: a function of each present value of a column, and a SQLite Decimal
 * column's two texts, a whole column at a time.
 *
 *   each(fn, values)        -> [None if v is None else fn(v) for v in values], in one C loop
 *                              (an Optional column's codecs: no Python frame a value);
 *   fill(values, results)   -> ``values`` with its non-None items replaced, in order, by
 *                              ``results`` (what a column function gave for them);
 *   at_offsets(stamps, minutes, zones, utc)
 *                           -> each stored instant (UTC ISO text as entityworks writes it,
 *                              ``YYYY-MM-DDTHH:MM:SS.ffffff+00:00``, a datetime at UTC in
 *                              any zone object, or a naive one holding UTC) shown at its
 *                              offset companion's
 *                              minutes: ``instant(stamp).astimezone(zone)`` made at once;
 *   timedeltas(micros)      -> ``timedelta(microseconds=us)`` of each int (no None);
 *   kinds(values, kind)     -> (items exactly of type ``kind``, items that are None);
 *   present(values)         -> the items that are not None;
 *   utc_texts(values)       -> the UTC ISO text of each aware datetime (no None), as
 *                              ``v.astimezone(utc).isoformat(timespec="microseconds")``;
 *   build_rows(cls, rows, fields, nulls[, kinds])
 *                           -> ``cls(*(row[i] for i in fields))`` of each row (tuples) whose
 *                              items at ``nulls`` are all None (companions that change
 *                              nothing) and whose item for ``fields[k]`` is None or exactly
 *                              of the type ``kinds[k]`` where that is not None (a value the
 *                              driver already gives as the field's type), one vectorcall a
 *                              row: no column made.
 *
 * The Decimal texts (entityworks.sql.textvalues):
 *
 * SQLite keeps a Decimal as two texts: the plain decimal text other tools read ("-1.50") and
 * the sortable key entityworks compares by (textvalues.decimal_key: the integer part padded
 * to 35 digits, trailing zeros of the fraction dropped, a negative number as "-", the nines'
 * complement of its digits and "~"). These two functions do, in one C loop per column, what
 * the Python functions do a value at a time:
 *
 *   keys(values)            -> the key of each Decimal (None kept), from its str();
 *   keys_and_texts(values)  -> (keys(values), the plain text of each), each str() made
 *                              once (None also where one has an exponent);
 *   as_written(keys, texts) -> Decimal(text) of each pair whose text is plain decimal text
 *                              within the rule (35 digits before the point, 30 after, not
 *                              -0) and whose stored key is that text's key exactly.
 *
 * Either answers None as soon as one value is not the common case (another type, NaN, more
 * digits, a key that is not the text's, a NULL beside a value, ...): the caller then takes
 * the Python path, which gives the same result or names what is wrong. Nothing here decides
 * a refusal.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <datetime.h>
#include <string.h>

#define KEY_DIGITS 35   /* digits before the point in a key (DECIMAL(65, 30)) */
#define FRACTION_DIGITS 30
#define MAX_TEXT 128    /* longer texts are never the common case */

static PyObject *decimal_type; /* decimal.Decimal */

/* The digits and exponent of plain or scientific decimal text (str() of a finite Decimal:
 * "-12.50", "1E+3", "1.5E-7"): 0 on success, -1 when it is not such text. ``digits`` gets
 * the significant digits without the point (leading zeros kept), ``exponent`` the power of
 * ten of the last one. */
static int parse(const char *s, Py_ssize_t n, int *negative, char *digits, Py_ssize_t *count,
                 long *exponent, int allow_exponent) {
    Py_ssize_t i = 0, k = 0, fraction = 0;
    int point = 0, before = 0;
    *negative = 0;
    if (i < n && s[i] == '-') {
        *negative = 1;
        i++;
    }
    for (; i < n; i++) {
        char c = s[i];
        if (c >= '0' && c <= '9') {
            if (k >= MAX_TEXT) return -1;
            digits[k++] = c;
            if (point) fraction++;
            else before++;
        } else if (c == '.' && !point) {
            point = 1;
        } else {
            break;
        }
    }
    if (before == 0 || (point && fraction == 0)) return -1; /* ".5", "5.", "-" */
    long e = 0;
    if (i < n) {
        if (!allow_exponent || s[i] != 'E') return -1;
        i++;
        int minus = 0;
        if (i < n && (s[i] == '+' || s[i] == '-')) {
            minus = s[i] == '-';
            i++;
        }
        if (i == n) return -1;
        for (; i < n; i++) {
            if (s[i] < '0' || s[i] > '9' || e > 100000) return -1;
            e = e * 10 + (s[i] - '0');
        }
        if (minus) e = -e;
    }
    *count = k;
    *exponent = e - fraction;
    return 0;
}

/* The key of the number ``digits`` x 10^``exponent`` (textvalues.decimal_key) into ``out``;
 * its length, or -1 when it has more than KEY_DIGITS digits before the point or more than
 * ``max_fraction`` after it once trailing zeros are dropped. */
static Py_ssize_t make_key(int negative, const char *digits, Py_ssize_t count, long exponent,
                           Py_ssize_t max_fraction, char *out) {
    /* integer part: digits[0 .. count + exponent), then ``exponent`` zeros if positive;
     * fraction: the rest, with -exponent - count leading zeros when the number is < 1 */
    Py_ssize_t int_len, frac_len, lead_zeros = 0;
    const char *frac;
    if (exponent >= 0) {
        if (exponent > KEY_DIGITS) return -1;
        int_len = count + exponent;
        frac = digits + count;
        frac_len = 0;
    } else if (-exponent <= count) {
        int_len = count + exponent;
        frac = digits + int_len;
        frac_len = -exponent;
    } else {
        if (-exponent > max_fraction + count) return -1;
        int_len = 0;
        lead_zeros = -exponent - count;
        frac = digits;
        frac_len = count;
    }
    /* the integer part's significant digits */
    Py_ssize_t start = 0;
    while (start < int_len && start < count && digits[start] == '0') start++;
    Py_ssize_t significant = int_len - start; /* zeros after the digits count (exponent > 0) */
    if (start >= count && exponent >= 0) significant = 0; /* all digits zero */
    if (significant > KEY_DIGITS) return -1;
    /* the fraction without its trailing zeros */
    while (frac_len > 0 && frac[frac_len - 1] == '0') frac_len--;
    int zero_fraction = frac_len == 0;
    if (zero_fraction) lead_zeros = 0;
    if (lead_zeros + frac_len > max_fraction) return -1;
    int is_zero = significant == 0 && zero_fraction;
    int complement = negative && !is_zero;
    Py_ssize_t o = 0;
    if (complement) out[o++] = '-';
    for (Py_ssize_t j = 0; j < KEY_DIGITS - significant; j++) out[o++] = complement ? '9' : '0';
    for (Py_ssize_t j = 0; j < significant; j++) {
        char c = start + j < count ? digits[start + j] : '0';
        out[o++] = complement ? (char)('9' - (c - '0')) : c;
    }
    if (!zero_fraction) {
        out[o++] = '.';
        for (Py_ssize_t j = 0; j < lead_zeros; j++) out[o++] = complement ? '9' : '0';
        for (Py_ssize_t j = 0; j < frac_len; j++) {
            char c = frac[j];
            out[o++] = complement ? (char)('9' - (c - '0')) : c;
        }
    }
    if (complement) out[o++] = '~';
    return o;
}

#define KEY_SIZE (2 + KEY_DIGITS + 2 * MAX_TEXT + 4)

/* The keys of a column of Decimals (None kept), and with ``texts`` (not NULL) the str() of
 * each too, which is the plain text beside the key where it has no exponent: 0, or 1 when
 * a value is not the common case (*out_keys unset), or -1 on an error. */
static int column_keys(PyObject *values, PyObject **out_keys, PyObject **out_texts) {
    PyObject *seq = PySequence_Fast(values, "keys() takes a sequence");
    if (seq == NULL) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject **items = PySequence_Fast_ITEMS(seq);
    PyObject *out = PyList_New(n);
    PyObject *texts = out_texts == NULL || out == NULL ? NULL : PyList_New(n);
    int status = -1;
    if (out == NULL || (out_texts != NULL && texts == NULL)) goto done;
    char digits[MAX_TEXT], key[KEY_SIZE];
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *v = items[i];
        if (v == Py_None) {
            PyList_SET_ITEM(out, i, Py_NewRef(Py_None));
            if (texts != NULL) PyList_SET_ITEM(texts, i, Py_NewRef(Py_None));
            continue;
        }
        if ((PyObject *)Py_TYPE(v) != decimal_type) goto other;
        PyObject *text = PyObject_Str(v);
        if (text == NULL) goto done;
        Py_ssize_t size;
        const char *s = PyUnicode_AsUTF8AndSize(text, &size);
        int negative;
        Py_ssize_t count;
        long exponent;
        Py_ssize_t length = -1;
        if (s != NULL && size <= MAX_TEXT &&
            parse(s, size, &negative, digits, &count, &exponent, 1) == 0)
            length = make_key(negative, digits, count, exponent, MAX_TEXT, key);
        if (s == NULL) {
            Py_DECREF(text);
            goto done;
        }
        if (length < 0 || (texts != NULL && memchr(s, 'E', (size_t)size) != NULL)) {
            Py_DECREF(text); /* an exponent: the plain text is format(v, "f"), not str() */
            goto other;
        }
        if (texts != NULL)
            PyList_SET_ITEM(texts, i, text);
        else
            Py_DECREF(text);
        PyObject *k = PyUnicode_FromStringAndSize(key, length);
        if (k == NULL) goto done;
        PyList_SET_ITEM(out, i, k);
    }
    *out_keys = out;
    out = NULL;
    if (out_texts != NULL) {
        *out_texts = texts;
        texts = NULL;
    }
    status = 0;
    goto done;
other:
    status = 1;
done:
    Py_DECREF(seq);
    Py_XDECREF(out); /* the items not yet set are NULL, which the list skips */
    Py_XDECREF(texts);
    return status;
}

static PyObject *keys(PyObject *module, PyObject *values) {
    (void)module;
    PyObject *out = NULL;
    int status = column_keys(values, &out, NULL);
    if (status < 0) return NULL;
    if (status > 0) Py_RETURN_NONE;
    return out;
}

static PyObject *keys_and_texts(PyObject *module, PyObject *values) {
    (void)module;
    PyObject *out = NULL, *texts = NULL;
    int status = column_keys(values, &out, &texts);
    if (status < 0) return NULL;
    if (status > 0) Py_RETURN_NONE;
    PyObject *pair = PyTuple_Pack(2, out, texts);
    Py_DECREF(out);
    Py_DECREF(texts);
    return pair;
}

static PyObject *as_written(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "as_written() takes the keys and the texts");
        return NULL;
    }
    PyObject *key_seq = PySequence_Fast(args[0], "as_written() takes sequences");
    if (key_seq == NULL) return NULL;
    PyObject *text_seq = PySequence_Fast(args[1], "as_written() takes sequences");
    if (text_seq == NULL) {
        Py_DECREF(key_seq);
        return NULL;
    }
    PyObject *out = NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(key_seq);
    if (PySequence_Fast_GET_SIZE(text_seq) != n) goto other;
    PyObject **stored = PySequence_Fast_ITEMS(key_seq);
    PyObject **texts = PySequence_Fast_ITEMS(text_seq);
    out = PyList_New(n);
    if (out == NULL) goto fail;
    char digits[MAX_TEXT], key[KEY_SIZE];
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *k = stored[i], *t = texts[i];
        if (k == Py_None && t == Py_None) {
            PyList_SET_ITEM(out, i, Py_NewRef(Py_None));
            continue;
        }
        if (!PyUnicode_CheckExact(k) || !PyUnicode_CheckExact(t)) goto other;
        Py_ssize_t size, stored_size;
        const char *s = PyUnicode_AsUTF8AndSize(t, &size);
        if (s == NULL) goto fail;
        const char *ks = PyUnicode_AsUTF8AndSize(k, &stored_size);
        if (ks == NULL) goto fail;
        int negative;
        Py_ssize_t count;
        long exponent;
        if (size > MAX_TEXT || parse(s, size, &negative, digits, &count, &exponent, 0) != 0)
            goto other;
        if (-exponent > FRACTION_DIGITS) goto other; /* the rule's 30 places, zeros included */
        Py_ssize_t length = make_key(negative, digits, count, exponent, FRACTION_DIGITS, key);
        if (length < 0 || length != stored_size || memcmp(key, ks, (size_t)length) != 0)
            goto other;
        if (negative && key[0] != '-') goto other; /* "-0.00": the Python path reads it */
        PyObject *value = PyObject_CallOneArg(decimal_type, t);
        if (value == NULL) goto fail;
        PyList_SET_ITEM(out, i, value);
    }
    Py_DECREF(key_seq);
    Py_DECREF(text_seq);
    return out;
other:
    Py_DECREF(key_seq);
    Py_DECREF(text_seq);
    Py_XDECREF(out);
    Py_RETURN_NONE;
fail:
    Py_DECREF(key_seq);
    Py_DECREF(text_seq);
    Py_XDECREF(out);
    return NULL;
}

static PyObject *each(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "each() takes a function and a sequence");
        return NULL;
    }
    PyObject *fn = args[0];
    PyObject *seq = PySequence_Fast(args[1], "each() takes a sequence");
    if (seq == NULL) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject *out = PyList_New(n);
    if (out == NULL) {
        Py_DECREF(seq);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        /* the sequence may be a list that ``fn`` changes: read each item afresh */
        if (i >= PySequence_Fast_GET_SIZE(seq)) {
            PyErr_SetString(PyExc_RuntimeError, "each(): the sequence changed size");
            goto fail;
        }
        PyObject *v = PySequence_Fast_GET_ITEM(seq, i);
        if (v == Py_None) {
            PyList_SET_ITEM(out, i, Py_NewRef(Py_None));
            continue;
        }
        Py_INCREF(v);
        PyObject *r = PyObject_CallOneArg(fn, v);
        Py_DECREF(v);
        if (r == NULL) goto fail;
        PyList_SET_ITEM(out, i, r);
    }
    Py_DECREF(seq);
    return out;
fail:
    /* the items not yet set are NULL, which a list's deallocation skips */
    Py_DECREF(seq);
    Py_DECREF(out);
    return NULL;
}

static PyObject *fill(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "fill() takes the values and the results");
        return NULL;
    }
    PyObject *seq = PySequence_Fast(args[0], "fill() takes sequences");
    if (seq == NULL) return NULL;
    PyObject *res = PySequence_Fast(args[1], "fill() takes sequences");
    if (res == NULL) {
        Py_DECREF(seq);
        return NULL;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq), m = PySequence_Fast_GET_SIZE(res), j = 0;
    PyObject **items = PySequence_Fast_ITEMS(seq);
    PyObject **results = PySequence_Fast_ITEMS(res);
    PyObject *out = PyList_New(n);
    if (out == NULL) goto fail;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (items[i] == Py_None) {
            PyList_SET_ITEM(out, i, Py_NewRef(Py_None));
        } else if (j < m) {
            PyList_SET_ITEM(out, i, Py_NewRef(results[j++]));
        } else {
            break;
        }
    }
    if (j != m || (n > 0 && PyList_GET_ITEM(out, n - 1) == NULL)) {
        PyErr_SetString(PyExc_ValueError, "fill(): not one result per present value");
        goto fail;
    }
    Py_DECREF(seq);
    Py_DECREF(res);
    return out;
fail:
    Py_DECREF(seq);
    Py_DECREF(res);
    Py_XDECREF(out);
    return NULL;
}

/* -- instants at their offsets ------------------------------------------------------------ */

/* Days since 1970-01-01 of a proleptic Gregorian date, and back (H. Hinnant's algorithms). */
static long days_from_civil(long y, long m, long d) {
    y -= m <= 2;
    long era = (y >= 0 ? y : y - 399) / 400;
    long yoe = y - era * 400;
    long doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static void civil_from_days(long z, long *y, long *m, long *d) {
    z += 719468;
    long era = (z >= 0 ? z : z - 146096) / 146097;
    long doe = z - era * 146097;
    long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    long mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = yoe + era * 400 + (*m <= 2);
}

static int days_in_month(long y, long m) {
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (m == 2 && ((y % 4 == 0 && y % 100 != 0) || y % 400 == 0)) return 29;
    return days[m - 1];
}

static int digits(const char *s, int n, long *out) {
    long v = 0;
    for (int i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        v = v * 10 + (s[i] - '0');
    }
    *out = v;
    return 0;
}

typedef struct {
    long year, month, day, hour, minute, second, micro;
} Fields;

/* ``f`` moved by ``minutes`` (the calendar too): 0, or -1 when it leaves the years 1-9999. */
static int shift_minutes(Fields *f, long minutes) {
    if (minutes == 0) return 0;
    long total = f->hour * 60 + f->minute + minutes; /* minutes into the first day */
    long days = total >= 0 ? total / 1440 : -((-total + 1439) / 1440);
    total -= days * 1440;
    civil_from_days(days_from_civil(f->year, f->month, f->day) + days, &f->year, &f->month,
                    &f->day);
    f->hour = total / 60;
    f->minute = total % 60;
    return f->year < 1 || f->year > 9999 ? -1 : 0;
}

/* The fields of ``YYYY-MM-DDTHH:MM:SS.ffffff+00:00`` (the only text this reads): 0, or -1. */
static int parse_utc_text(PyObject *text, Fields *f) {
    Py_ssize_t n;
    const char *s = PyUnicode_AsUTF8AndSize(text, &n);
    if (s == NULL) {
        PyErr_Clear();
        return -1;
    }
    if (n != 32 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' ||
        s[16] != ':' || s[19] != '.' || memcmp(s + 26, "+00:00", 6) != 0)
        return -1;
    if (digits(s, 4, &f->year) || digits(s + 5, 2, &f->month) || digits(s + 8, 2, &f->day) ||
        digits(s + 11, 2, &f->hour) || digits(s + 14, 2, &f->minute) ||
        digits(s + 17, 2, &f->second) || digits(s + 20, 6, &f->micro))
        return -1;
    if (f->year < 1 || f->month < 1 || f->month > 12 || f->day < 1 ||
        f->day > days_in_month(f->year, f->month) || f->hour > 23 || f->minute > 59 ||
        f->second > 59)
        return -1;
    return 0;
}

static PyObject *at_offsets(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "at_offsets() takes stamps, minutes, zones, utc");
        return NULL;
    }
    PyObject *stamp_seq = PySequence_Fast(args[0], "at_offsets() takes sequences");
    if (stamp_seq == NULL) return NULL;
    PyObject *minute_seq = PySequence_Fast(args[1], "at_offsets() takes sequences");
    if (minute_seq == NULL) {
        Py_DECREF(stamp_seq);
        return NULL;
    }
    PyObject *zones = args[2], *utc = args[3], *out = NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(stamp_seq);
    if (!PyTuple_CheckExact(zones) || PyTuple_GET_SIZE(zones) != 2 * 840 + 1 ||
        PySequence_Fast_GET_SIZE(minute_seq) != n)
        goto other;
    PyObject **stamps = PySequence_Fast_ITEMS(stamp_seq);
    PyObject **minutes = PySequence_Fast_ITEMS(minute_seq);
    out = PyList_New(n);
    if (out == NULL) goto fail;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *stamp = stamps[i], *m = minutes[i];
        if (stamp == Py_None) {
            if (m != Py_None) goto other; /* a companion beside a NULL: Python says so */
            PyList_SET_ITEM(out, i, Py_NewRef(Py_None));
            continue;
        }
        long offset = 0;
        PyObject *zone = utc;
        if (m != Py_None) {
            if (!PyLong_CheckExact(m)) goto other;
            int overflow;
            offset = PyLong_AsLongAndOverflow(m, &overflow);
            if (overflow || offset < -840 || offset > 840) goto other;
            zone = PyTuple_GET_ITEM(zones, offset + 840);
        }
        Fields f;
        if (PyUnicode_CheckExact(stamp)) {
            if (parse_utc_text(stamp, &f) != 0) goto other;
        } else if (PyDateTime_CheckExact(stamp)) {
            PyObject *tz = PyDateTime_DATE_GET_TZINFO(stamp);
            if (tz != Py_None && tz != PyDateTime_TimeZone_UTC) {
                /* another zone object at UTC (psycopg's ZoneInfo('Etc/UTC') of a UTC
                 * session): its offset asked of this instant must be zero */
                PyObject *off = PyObject_CallMethod(stamp, "utcoffset", NULL);
                if (off == NULL) goto fail;
                int zero = PyDelta_Check(off) && PyDateTime_DELTA_GET_DAYS(off) == 0 &&
                           PyDateTime_DELTA_GET_SECONDS(off) == 0 &&
                           PyDateTime_DELTA_GET_MICROSECONDS(off) == 0;
                Py_DECREF(off);
                if (!zero) goto other;
            }
            f.year = PyDateTime_GET_YEAR(stamp);
            f.month = PyDateTime_GET_MONTH(stamp);
            f.day = PyDateTime_GET_DAY(stamp);
            f.hour = PyDateTime_DATE_GET_HOUR(stamp);
            f.minute = PyDateTime_DATE_GET_MINUTE(stamp);
            f.second = PyDateTime_DATE_GET_SECOND(stamp);
            f.micro = PyDateTime_DATE_GET_MICROSECOND(stamp);
        } else {
            goto other;
        }
        if (shift_minutes(&f, offset) != 0) goto other; /* Python names it */
        PyObject *value = PyDateTimeAPI->DateTime_FromDateAndTime(
            (int)f.year, (int)f.month, (int)f.day, (int)f.hour, (int)f.minute, (int)f.second,
            (int)f.micro, zone, PyDateTimeAPI->DateTimeType);
        if (value == NULL) goto fail;
        PyList_SET_ITEM(out, i, value);
    }
    Py_DECREF(stamp_seq);
    Py_DECREF(minute_seq);
    return out;
other:
    Py_DECREF(stamp_seq);
    Py_DECREF(minute_seq);
    Py_XDECREF(out);
    Py_RETURN_NONE;
fail:
    Py_DECREF(stamp_seq);
    Py_DECREF(minute_seq);
    Py_XDECREF(out);
    return NULL;
}

/* The ISO text of each aware datetime's instant in UTC, with microseconds:
 * ``v.astimezone(timezone.utc).isoformat(timespec="microseconds")`` made at once. Only the
 * usual case: exact datetimes in a fixed-offset ``datetime.timezone`` of whole minutes
 * within ±14:00 whose instant falls in the years 1-9999; anything else answers None. */
static PyObject *utc_texts(PyObject *module, PyObject *values) {
    (void)module;
    PyObject *seq = PySequence_Fast(values, "utc_texts() takes a sequence");
    if (seq == NULL) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject **items = PySequence_Fast_ITEMS(seq);
    PyTypeObject *timezone_type = Py_TYPE(PyDateTime_TimeZone_UTC);
    PyObject *out = PyList_New(n), *last_zone = NULL;
    long offset = 0; /* minutes east of UTC of last_zone */
    if (out == NULL) goto fail;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *stamp = items[i];
        if (!PyDateTime_CheckExact(stamp)) goto other;
        PyObject *zone = PyDateTime_DATE_GET_TZINFO(stamp);
        if (zone != last_zone) {
            if (Py_TYPE(zone) != timezone_type) goto other;
            PyObject *off = PyObject_CallMethod(zone, "utcoffset", "O", Py_None);
            if (off == NULL) goto fail;
            int whole = PyDelta_Check(off) && PyDateTime_DELTA_GET_MICROSECONDS(off) == 0 &&
                        PyDateTime_DELTA_GET_SECONDS(off) % 60 == 0;
            long minutes = whole ? PyDateTime_DELTA_GET_DAYS(off) * 1440L +
                                       PyDateTime_DELTA_GET_SECONDS(off) / 60
                                 : 0;
            Py_DECREF(off);
            if (!whole || minutes < -840 || minutes > 840) goto other;
            last_zone = zone; /* borrowed: the datetime in ``seq`` holds it */
            offset = minutes;
        }
        Fields f = {
            PyDateTime_GET_YEAR(stamp),          PyDateTime_GET_MONTH(stamp),
            PyDateTime_GET_DAY(stamp),           PyDateTime_DATE_GET_HOUR(stamp),
            PyDateTime_DATE_GET_MINUTE(stamp),   PyDateTime_DATE_GET_SECOND(stamp),
            PyDateTime_DATE_GET_MICROSECOND(stamp),
        };
        if (shift_minutes(&f, -offset) != 0) goto other; /* Python names it */
        PyObject *text = PyUnicode_New(32, 127);
        if (text == NULL) goto fail;
        char *s = (char *)PyUnicode_1BYTE_DATA(text);
        long parts[7] = {f.year, f.month, f.day, f.hour, f.minute, f.second, f.micro};
        static const int widths[7] = {4, 2, 2, 2, 2, 2, 6};
        static const char after[7] = {'-', '-', 'T', ':', ':', '.', '+'};
        char *p = s;
        for (int k = 0; k < 7; k++) {
            long v = parts[k];
            for (int w = widths[k] - 1; w >= 0; w--) {
                p[w] = (char)('0' + v % 10);
                v /= 10;
            }
            p += widths[k];
            *p++ = after[k];
        }
        memcpy(p, "00:00", 5);
        PyList_SET_ITEM(out, i, text);
    }
    Py_DECREF(seq);
    return out;
other:
    Py_DECREF(seq);
    Py_XDECREF(out);
    Py_RETURN_NONE;
fail:
    Py_DECREF(seq);
    Py_XDECREF(out);
    return NULL;
}

/* ``timedelta(microseconds=us)`` of each exact int of a column (the micros a timedelta
 * column stores), in one C loop; None when one is not an int within 64 bits. */
static PyObject *timedeltas(PyObject *module, PyObject *values) {
    (void)module;
    PyObject *seq = PySequence_Fast(values, "timedeltas() takes a sequence");
    if (seq == NULL) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject **items = PySequence_Fast_ITEMS(seq);
    PyObject *out = PyList_New(n);
    if (out == NULL) goto fail;
    const long long per_day = 86400000000LL;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!PyLong_CheckExact(items[i])) goto other;
        int overflow;
        long long us = PyLong_AsLongLongAndOverflow(items[i], &overflow);
        if (overflow) goto other;
        if (us == -1 && PyErr_Occurred()) goto fail;
        long long days = us / per_day, rest = us % per_day;
        if (rest < 0) { /* floor: the seconds and microseconds are never negative */
            rest += per_day;
            days -= 1;
        }
        PyObject *delta =
            PyDelta_FromDSU((int)days, (int)(rest / 1000000), (int)(rest % 1000000));
        if (delta == NULL) goto fail;
        PyList_SET_ITEM(out, i, delta);
    }
    Py_DECREF(seq);
    return out;
other:
    Py_DECREF(seq);
    Py_XDECREF(out);
    Py_RETURN_NONE;
fail:
    Py_DECREF(seq);
    Py_XDECREF(out);
    return NULL;
}

/* (how many items are exactly of the type ``kind``, how many are None): a column's type
 * test in one pass, no Python call per item. */
static PyObject *kinds(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 2 || !PyType_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "kinds() takes a sequence and a type");
        return NULL;
    }
    PyObject *seq = PySequence_Fast(args[0], "kinds() takes a sequence");
    if (seq == NULL) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq), found = 0, none = 0;
    PyObject **items = PySequence_Fast_ITEMS(seq);
    PyTypeObject *kind = (PyTypeObject *)args[1];
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *v = items[i];
        found += Py_TYPE(v) == kind;
        none += v == Py_None;
    }
    Py_DECREF(seq);
    return Py_BuildValue("(nn)", found, none);
}

/* The items of a sequence that are not None, in order: a new list. */
static PyObject *present(PyObject *module, PyObject *values) {
    (void)module;
    PyObject *seq = PySequence_Fast(values, "present() takes a sequence");
    if (seq == NULL) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq), kept = 0;
    PyObject **items = PySequence_Fast_ITEMS(seq);
    for (Py_ssize_t i = 0; i < n; i++) kept += items[i] != Py_None;
    PyObject *out = PyList_New(kept);
    if (out != NULL) {
        Py_ssize_t at = 0;
        for (Py_ssize_t i = 0; i < n && at < kept; i++)
            if (items[i] != Py_None) PyList_SET_ITEM(out, at++, Py_NewRef(items[i]));
    }
    Py_DECREF(seq);
    return out;
}

/* Indexes of a tuple of ints into a new array (``*count`` of them); NULL and an error for
 * anything else. */
static Py_ssize_t *indexes(PyObject *tuple, Py_ssize_t *count, Py_ssize_t *top) {
    Py_ssize_t n = PyTuple_GET_SIZE(tuple);
    Py_ssize_t *out = PyMem_Malloc((size_t)(n > 0 ? n : 1) * sizeof(Py_ssize_t));
    if (out == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t k = PyLong_AsSsize_t(PyTuple_GET_ITEM(tuple, i));
        if (k < 0) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "build_rows(): an index is negative");
            PyMem_Free(out);
            return NULL;
        }
        out[i] = k;
        if (k + 1 > *top) *top = k + 1;
    }
    *count = n;
    return out;
}

/* ``cls(*(row[i] for i in fields))`` of each row, a vectorcall per row with the row's own
 * items: the objects of rows whose columns need no decoding. Every row is checked first (an
 * exact tuple, long enough, None at each index of ``nulls``, each item of a field with a
 * kind None or exactly of that type), so that no object is made when the answer is None: a
 * row that is not so, for the caller's usual path. */
static PyObject *build_rows(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if ((nargs != 4 && nargs != 5) || !PyTuple_Check(args[2]) || !PyTuple_Check(args[3]) ||
        (nargs == 5 && args[4] != Py_None && !PyTuple_Check(args[4]))) {
        PyErr_SetString(PyExc_TypeError,
                        "build_rows() takes a class, a sequence of rows, two tuples and a "
                        "tuple of kinds or None");
        return NULL;
    }
    PyObject *cls = args[0];
    PyObject *kinds = nargs == 5 && args[4] != Py_None ? args[4] : NULL;
    if (kinds != NULL) {
        if (PyTuple_GET_SIZE(kinds) != PyTuple_GET_SIZE(args[2])) {
            PyErr_SetString(PyExc_ValueError, "build_rows(): one kind per field");
            return NULL;
        }
        for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(kinds); k++) {
            PyObject *kind = PyTuple_GET_ITEM(kinds, k);
            if (kind != Py_None && !PyType_Check(kind)) {
                PyErr_SetString(PyExc_TypeError, "build_rows(): a kind is a type or None");
                return NULL;
            }
        }
    }
    Py_ssize_t nfields = 0, nnulls = 0, top = 0;
    Py_ssize_t *fields = indexes(args[2], &nfields, &top);
    if (fields == NULL) return NULL;
    Py_ssize_t *nulls = indexes(args[3], &nnulls, &top);
    if (nulls == NULL) {
        PyMem_Free(fields);
        return NULL;
    }
    PyObject *out = NULL;
    PyObject **argv = PyMem_Malloc((size_t)(nfields > 0 ? nfields : 1) * sizeof(PyObject *));
    PyObject *seq = PySequence_Fast(args[1], "build_rows() takes a sequence of rows");
    if (argv == NULL || seq == NULL) {
        if (argv == NULL) PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject **rows = PySequence_Fast_ITEMS(seq);
    for (Py_ssize_t r = 0; r < n; r++) {
        PyObject *row = rows[r];
        if (!PyTuple_CheckExact(row) || PyTuple_GET_SIZE(row) < top) {
            out = Py_NewRef(Py_None);
            goto done;
        }
        for (Py_ssize_t k = 0; k < nnulls; k++) {
            if (PyTuple_GET_ITEM(row, nulls[k]) != Py_None) {
                out = Py_NewRef(Py_None);
                goto done;
            }
        }
        if (kinds != NULL) {
            for (Py_ssize_t k = 0; k < nfields; k++) {
                PyObject *kind = PyTuple_GET_ITEM(kinds, k);
                PyObject *item = PyTuple_GET_ITEM(row, fields[k]);
                if (kind != Py_None && item != Py_None && (PyObject *)Py_TYPE(item) != kind) {
                    out = Py_NewRef(Py_None);
                    goto done;
                }
            }
        }
    }
    out = PyList_New(n);
    if (out == NULL) goto done;
    for (Py_ssize_t r = 0; r < n; r++) {
        /* a list may be changed by a call (a class that reaches it): read each row afresh,
         * and hold it while its items are the arguments */
        if (r >= PySequence_Fast_GET_SIZE(seq)) {
            PyErr_SetString(PyExc_RuntimeError, "build_rows(): the rows changed size");
            Py_CLEAR(out);
            goto done;
        }
        PyObject *row = Py_NewRef(PySequence_Fast_GET_ITEM(seq, r));
        if (!PyTuple_CheckExact(row) || PyTuple_GET_SIZE(row) < top) {
            Py_DECREF(row);
            PyErr_SetString(PyExc_RuntimeError, "build_rows(): the rows changed");
            Py_CLEAR(out);
            goto done;
        }
        for (Py_ssize_t k = 0; k < nfields; k++) argv[k] = PyTuple_GET_ITEM(row, fields[k]);
        PyObject *obj = PyObject_Vectorcall(cls, argv, (size_t)nfields, NULL);
        Py_DECREF(row);
        if (obj == NULL) {
            Py_CLEAR(out); /* the items not yet set are NULL, which the list skips */
            goto done;
        }
        PyList_SET_ITEM(out, r, obj);
    }
done:
    Py_XDECREF(seq);
    PyMem_Free(argv);
    PyMem_Free(fields);
    PyMem_Free(nulls);
    return out;
}

static PyMethodDef methods[] = {
    {"at_offsets", (PyCFunction)(void (*)(void))at_offsets, METH_FASTCALL,
     "Each stored UTC instant shown at its offset's zone (zones: the 1681 zones of -840 to "
     "840 minutes, utc: the zone of a NULL offset); None when one is not the usual case."},
    {"utc_texts", utc_texts, METH_O,
     "The UTC ISO text (microseconds, +00:00) of each aware datetime of a column; None "
     "when one is not an exact datetime in a fixed-offset timezone within the rule."},
    {"timedeltas", timedeltas, METH_O,
     "timedelta(microseconds=us) of each int of a column; None when one is not an exact "
     "int within 64 bits."},
    {"kinds", (PyCFunction)(void (*)(void))kinds, METH_FASTCALL,
     "(items exactly of the type kind, items that are None) of a sequence."},
    {"present", present, METH_O, "The items of a sequence that are not None: a new list."},
    {"build_rows", (PyCFunction)(void (*)(void))build_rows, METH_FASTCALL,
     "cls(*(row[i] for i in fields)) of each row whose items at nulls are None; None (and "
     "no object made) when a row is not a tuple so."},
    {"fill", (PyCFunction)(void (*)(void))fill, METH_FASTCALL,
     "values with its non-None items replaced, in order, by results: a new list."},
    {"each", (PyCFunction)(void (*)(void))each, METH_FASTCALL,
     "fn(v) of each value of a sequence, None kept: a new list."},
    {"keys", keys, METH_O,
     "The sortable key of each Decimal of a column (None kept); None when a value is not "
     "an exact finite Decimal whose key the rule allows."},
    {"keys_and_texts", keys_and_texts, METH_O,
     "(keys(values), the plain text of each) of a column of Decimals (None kept), each "
     "value's str() made once; None where keys() is, or where a str() has an exponent."},
    {"as_written", (PyCFunction)(void (*)(void))as_written, METH_FASTCALL,
     "Decimal(text) of each (key, text) pair whose text is plain decimal text within the "
     "rule and whose key is that text's key (NULL pairs kept); None otherwise."},
    {NULL, NULL, 0, NULL},
};

static int exec_module(PyObject *module) {
    (void)module;
    if (PyDateTimeAPI == NULL) {
        PyDateTime_IMPORT;
        if (PyDateTimeAPI == NULL) return -1;
    }
    if (decimal_type != NULL) return 0;
    PyObject *decimal = PyImport_ImportModule("decimal");
    if (decimal == NULL) return -1;
    decimal_type = PyObject_GetAttrString(decimal, "Decimal");
    Py_DECREF(decimal);
    return decimal_type == NULL ? -1 : 0;
}

static PyModuleDef_Slot slots[] = {
    {Py_mod_exec, exec_module},
    {0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "cloops",
    "Column loops: fn of each present value; a SQLite Decimal column's key and text.",
    0, methods, slots, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit_cloops(void) { return PyModuleDef_Init(&module_def); }

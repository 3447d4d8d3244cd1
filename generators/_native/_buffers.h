/* The checked buffers and arguments the engines (_cfov.c, _cmaps.c, _csolve.c) take from Python:
   each array through the buffer protocol, its element type, dimensions, C-contiguous
   layout, writability and sides checked before any loop; each number and flag checked.
   Included by each engine (static functions: one copy per module). */

#ifndef ENTITYWORKS_NATIVE_BUFFERS_H
#define ENTITYWORKS_NATIVE_BUFFERS_H

#include <Python.h>  /* after the engine's PY_SSIZE_T_CLEAN */

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum gen_kind {
    GEN_U8,       /* uint8 ('B') */
    GEN_U8_BOOL,  /* uint8 or bool ('B' or '?'), read as bytes */
    GEN_BOOL,     /* bool ('?') */
    GEN_I64,      /* a signed 64-bit integer ('q', or 'l' / 'n' where those are 8 bytes) */
    GEN_I32,      /* a signed 32-bit integer ('i', or 'l' where that is 4 bytes) */
};

static inline const char *
gen_kind_name(enum gen_kind kind)
{
    switch (kind) {
    case GEN_U8: return "uint8";
    case GEN_U8_BOOL: return "uint8 or bool";
    case GEN_BOOL: return "bool";
    case GEN_I32: return "int32";
    default: return "int64";
    }
}

/* The element format of a buffer without byte-order prefixes '@' and '=' (native order,
   native size, which is what NumPy reports for its native types); NULL for anything else,
   including explicit little/big-endian prefixes, which NumPy uses for non-native layouts. */
static inline const char *
gen_plain_format(const Py_buffer *view)
{
    const char *format = view->format ? view->format : "B";
    if (format[0] == '@' || format[0] == '=') {
        format++;
    }
    if (format[0] == '\0' || format[1] != '\0') {
        return NULL;
    }
    return format;
}

static inline int
gen_kind_matches(const Py_buffer *view, enum gen_kind kind)
{
    const char *format = gen_plain_format(view);
    if (format == NULL) {
        return 0;
    }
    char f = format[0];
    switch (kind) {
    case GEN_U8:
        return f == 'B' && view->itemsize == 1;
    case GEN_U8_BOOL:
        return (f == 'B' || f == '?') && view->itemsize == 1;
    case GEN_BOOL:
        return f == '?' && view->itemsize == 1;
    case GEN_I64:
        return (f == 'q' || f == 'l' || f == 'n') && view->itemsize == 8;
    case GEN_I32:
        return (f == 'i' || f == 'l') && view->itemsize == 4;
    }
    return 0;
}

/* Fill ``view`` with the buffer of ``obj`` after checking it: ``ndim`` dimensions, each at
   least ``min_side`` and below ``max_side`` long, elements of ``kind``, C-contiguous,
   writable when ``writable``. Returns 0, or -1 with an exception set (and nothing held).
   The caller releases the buffer with PyBuffer_Release. */
static inline int
gen_get_buffer(PyObject *obj, const char *name, int ndim, enum gen_kind kind, int writable,
               Py_ssize_t min_side, Py_ssize_t max_side, Py_buffer *view)
{
    if (!PyObject_CheckBuffer(obj)) {
        PyErr_Format(PyExc_TypeError, "%s must be a %d-D %s array, got %.100s", name, ndim,
                     gen_kind_name(kind), Py_TYPE(obj)->tp_name);
        return -1;
    }
    int flags = PyBUF_FORMAT | PyBUF_STRIDES;
    if (writable) {
        flags |= PyBUF_WRITABLE;
    }
    if (PyObject_GetBuffer(obj, view, flags) < 0) {
        if (writable && PyObject_GetBuffer(obj, view, PyBUF_FORMAT | PyBUF_STRIDES) == 0) {
            PyBuffer_Release(view);
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "%s must be a writable array (got a read-only one)",
                         name);
            return -1;
        }
        /* a buffer that cannot describe itself with strides: explain in our terms */
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError, "%s must be a %d-D %s array laid out row after row",
                     name, ndim, gen_kind_name(kind));
        return -1;
    }
    if (view->ndim != ndim) {
        PyErr_Format(PyExc_ValueError, "%s must be a %d-D array, got %d dimension(s)", name,
                     ndim, view->ndim);
        goto fail;
    }
    if (!gen_kind_matches(view, kind)) {
        PyErr_Format(PyExc_ValueError, "%s must hold %s, got format '%.20s' of %zd byte(s)",
                     name, gen_kind_name(kind), view->format ? view->format : "B",
                     view->itemsize);
        goto fail;
    }
    if (view->shape == NULL || view->buf == NULL) {
        PyErr_Format(PyExc_ValueError, "%s must be a %d-D %s array", name, ndim,
                     gen_kind_name(kind));
        goto fail;
    }
    for (int d = 0; d < ndim; d++) {
        Py_ssize_t side = view->shape[d];
        if (side < min_side || side >= max_side) {
            PyErr_Format(PyExc_ValueError,
                         "%s has %zd cells along axis %d: it must have from %zd to %zd", name,
                         side, d, min_side, max_side - 1);
            goto fail;
        }
    }
    /* C-contiguous: the last axis steps one element, each earlier one a whole row of the
       next (a side of 1 may have any stride: it is never stepped over) */
    Py_ssize_t expected = view->itemsize;
    for (int d = ndim - 1; d >= 0; d--) {
        if (view->shape[d] > 1 && view->strides != NULL && view->strides[d] != expected) {
            PyErr_Format(PyExc_ValueError,
                         "%s must be C-contiguous (laid out row after row, no gaps)", name);
            goto fail;
        }
        if (view->shape[d] > 0 && expected > PY_SSIZE_T_MAX / view->shape[d]) {
            PyErr_Format(PyExc_ValueError, "%s is too large", name);
            goto fail;
        }
        expected *= view->shape[d];
    }
    if (view->len != expected) {
        PyErr_Format(PyExc_ValueError, "%s must be C-contiguous (laid out row after row)", name);
        goto fail;
    }
    return 0;
fail:
    PyBuffer_Release(view);
    return -1;
}

/* An int argument as int64 within [low, high]; -1 with ValueError/TypeError naming it. */
static inline int
gen_int_arg(PyObject *obj, const char *name, long long low, long long high, long long *out)
{
    if (!PyLong_Check(obj) || PyBool_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "%s must be an int, got %.100s", name,
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    int overflow = 0;
    long long value = PyLong_AsLongLongAndOverflow(obj, &overflow);
    if (value == -1 && PyErr_Occurred()) {
        return -1;
    }
    if (overflow != 0 || value < low || value > high) {
        PyErr_Format(PyExc_ValueError, "%s must be from %lld to %lld, got %S", name, low, high,
                     obj);
        return -1;
    }
    *out = value;
    return 0;
}

/* A bool argument (True or False only); -1 with TypeError naming it. */
static inline int
gen_bool_arg(PyObject *obj, const char *name, int *out)
{
    if (obj == Py_True) {
        *out = 1;
        return 0;
    }
    if (obj == Py_False) {
        *out = 0;
        return 0;
    }
    PyErr_Format(PyExc_TypeError, "%s must be a bool, got %.100s", name, Py_TYPE(obj)->tp_name);
    return -1;
}

#endif /* ENTITYWORKS_NATIVE_BUFFERS_H */

/* seqmatch._seqmatch: the CPython extension over the C library (the
 * library's sources are compiled into it, or its static libraries linked;
 * see setup.py). The Python layer (seqmatch/__init__.py) checks and
 * documents the arguments; this file holds the objects:
 *
 *   _Database  an sm_db and a few per-thread scratches, reused; _scan is
 *              the fast path for one sequence in memory
 *   _Run       one pass over targets (files, Python file objects, iterables
 *              of records, or one pair of mates read in step) through a
 *              runner: the iterator of search, filter, demux, amplicon,
 *              trim and barcode pairs, and the whole pass of count and of
 *              the columnar results; its stats are the command's run
 *              report's counts
 *
 * Scans run with the GIL released: hits are collected into C memory and
 * become Python objects once the GIL is back. Hit and Record are named
 * tuples made by the Python layer (_set_types); Hit objects are built here
 * without a Python-level call. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "seqmatch.h"
#include "io/seqio.h"

/* ------------------------------------------------------------- errors */

/* The C library and the reader speak of the command's options; a Python
   user is told the arguments instead. */
static const char *const python_words[][2] = {
    {"use --alphabet text for plain text", "compile with alphabet=\"text\" for plain text"},
    {"--alphabet text", "alphabet=\"text\""},
    {"--circular and --anchor cannot be used together", "circular=True and anchor cannot be used together"},
    {"--min-overlap", "min_overlap"},
    {"-k edits", "edits"},
    {"--engine automaton", "engine=\"automaton\""},
    {"--circular", "circular=True"},
    {"--anchor", "anchor"},
    {"--pam", "pam"},
    {"--text-iupac", "text_iupac=True"},
};

static PyObject *set_error(PyObject *type, const char *message) {
    char out[1024];
    size_t n = 0;
    const char *p = message;
    while (*p && n + 1 < sizeof out) {
        size_t i, count = sizeof python_words / sizeof python_words[0];
        for (i = 0; i < count; i++) {
            size_t len = strlen(python_words[i][0]);
            if (strncmp(p, python_words[i][0], len) == 0) break;
        }
        if (i < count) {
            const char *with = python_words[i][1];
            size_t len = strlen(with);
            if (n + len >= sizeof out) break;
            memcpy(out + n, with, len);
            n += len;
            p += strlen(python_words[i][0]);
        } else {
            out[n++] = *p++;
        }
    }
    out[n] = '\0';
    PyErr_SetString(type, out);
    return NULL;
}

static PyObject *raise_status(int status, const char *message) {
    PyObject *type = PyExc_RuntimeError;
    switch (status) {
    case SM_ERR_NOMEM: return PyErr_NoMemory();
    case SM_ERR_INVALID:
    case SM_ERR_PATTERN:
    case SM_ERR_FORMAT:
    case SM_ERR_VERSION:
    case SM_ERR_LIMIT: type = PyExc_ValueError; break;
    case SM_ERR_IO: type = PyExc_OSError; break;
    default: break;
    }
    return set_error(type, message && message[0] ? message : sm_strerror(status));
}

/* ---------------------------------------------------- Hit and Record */

/* Named tuples made by the Python layer: Hit(pattern, strand, start, end,
   errors, matched, record, file, index, cigar) and Record(name, sequence,
   raw). */
static PyTypeObject *HitType, *RecordType;
static PyTypeObject *DatabaseClass; /* seqmatch.Database, a subclass of _Database */
static PyObject *plus_strand, *minus_strand; /* "+" and "-", shared by every hit */
enum { HIT_FIELDS = 10, RECORD_FIELDS = 3 };

static PyTypeObject DatabaseType;

/* _set_types(Hit, Record, Database): the classes of the Python layer. */
static PyObject *set_types(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *hit, *record, *database;
    if (!PyArg_ParseTuple(args, "O!O!O!:_set_types", &PyType_Type, &hit, &PyType_Type, &record, &PyType_Type,
                          &database))
        return NULL;
    if (!PyType_IsSubtype((PyTypeObject *)hit, &PyTuple_Type) ||
        !PyType_IsSubtype((PyTypeObject *)record, &PyTuple_Type) ||
        !PyType_IsSubtype((PyTypeObject *)database, &DatabaseType)) {
        PyErr_SetString(PyExc_TypeError, "_set_types takes two tuple types and a subclass of _Database");
        return NULL;
    }
    Py_INCREF(hit);
    Py_INCREF(record);
    Py_INCREF(database);
    Py_XSETREF(HitType, (PyTypeObject *)hit);
    Py_XSETREF(RecordType, (PyTypeObject *)record);
    Py_XSETREF(DatabaseClass, (PyTypeObject *)database);
    Py_RETURN_NONE;
}

/* A new instance of a named tuple type with n items, all to be set. */
static PyObject *new_tuple_of(PyTypeObject *type, Py_ssize_t n) {
    if (!type) {
        PyErr_SetString(PyExc_RuntimeError, "seqmatch._seqmatch used before _set_types");
        return NULL;
    }
    return type->tp_alloc(type, n);
}

static PyObject *name_object(const char *name);

/* ------------------------------------------------------------ Database */

#define SCRATCH_POOL 8

typedef struct {
    PyObject_HEAD
    sm_db *db;
    sm_db_info info;
    PyObject *names;          /* list of str, one per pattern */
    sm_scratch *pool[SCRATCH_POOL];
    int npool;
    /* Objects hits share, made on first use (databases of up to
       HIT_CACHE_PATTERNS patterns): each pattern's index as an int, and the
       last text each pattern matched on each strand as a str (most hits of
       a pattern match the same bytes) */
    PyObject **index_ints;
    PyObject **matched;
} DatabaseObject;

#define HIT_CACHE_PATTERNS (1u << 20)

/* A database object of the Python layer's class around db (taken). */
static DatabaseObject *database_wrap(sm_db *db) {
    PyTypeObject *type = DatabaseClass ? DatabaseClass : &DatabaseType;
    DatabaseObject *self = (DatabaseObject *)type->tp_alloc(type, 0);
    if (!self) {
        sm_db_free(db);
        return NULL;
    }
    self->db = db;
    self->npool = 0;
    sm_db_get_info(db, &self->info);
    self->names = PyList_New(self->info.pattern_count);
    if (!self->names) {
        Py_DECREF(self);
        return NULL;
    }
    for (uint32_t i = 0; i < self->info.pattern_count; i++) {
        const char *name = sm_db_pattern_name(db, i);
        PyObject *s = PyUnicode_DecodeUTF8(name ? name : "", name ? (Py_ssize_t)strlen(name) : 0, "replace");
        if (!s) {
            Py_DECREF(self);
            return NULL;
        }
        PyList_SET_ITEM(self->names, i, s);
    }
    return self;
}

static void database_dealloc(DatabaseObject *self) {
    for (int i = 0; i < self->npool; i++) sm_scratch_free(self->pool[i]);
    for (uint32_t i = 0; self->index_ints && i < self->info.pattern_count; i++) Py_XDECREF(self->index_ints[i]);
    for (uint32_t i = 0; self->matched && i < 2 * self->info.pattern_count; i++) Py_XDECREF(self->matched[i]);
    PyMem_Free(self->index_ints);
    PyMem_Free(self->matched);
    if (self->db) sm_db_free(self->db);
    Py_XDECREF(self->names);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* A scratch for one scan (taken and given back with the GIL held). */
static sm_scratch *scratch_take(DatabaseObject *self) {
    if (self->npool > 0) return self->pool[--self->npool];
    sm_scratch *s = NULL;
    if (sm_scratch_alloc(self->db, &s) != SM_OK) return NULL;
    return s;
}

static void scratch_give(DatabaseObject *self, sm_scratch *s) {
    if (self->npool < SCRATCH_POOL) self->pool[self->npool++] = s;
    else sm_scratch_free(s);
}

/* ------------------------------------------------------ collected hits */

/* What a pass keeps of the hits it is given (without the GIL). */
typedef struct {
    char strand;              /* '+' or '-': only that strand's hits; 0: both */
    uint64_t max_hits;        /* stop after this many (UINT64_MAX: no limit) */
    uint64_t taken;           /* hits kept so far */
    uint64_t limit;           /* circular scan: hits starting here or later are dropped */
} hit_filter;

/* 0: drop the hit, 1: keep it, -1: keep nothing more (max_hits reached). */
static int hit_filter_take(hit_filter *f, const sm_hit *h) {
    if (h->start >= f->limit || (f->strand && h->strand != f->strand)) return 0;
    if (f->taken >= f->max_hits) return -1;
    f->taken++;
    return 1;
}

/* Hits as sm_hit, with copies of their texts when asked. */
typedef struct {
    sm_hit *hits;
    size_t n, cap;
    char *text;               /* copies of the hits' texts (runner passes) */
    size_t text_len, text_cap;
    int failed;
} hit_buffer;

static int hit_buffer_push(hit_buffer *b, const sm_hit *h, int copy_text) {
    if (b->n == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 64;
        sm_hit *p = realloc(b->hits, cap * sizeof *p);
        if (!p) {
            b->failed = 1;
            return 1;
        }
        b->hits = p;
        b->cap = cap;
    }
    sm_hit *dst = &b->hits[b->n++];
    *dst = *h;
    if (copy_text) {
        size_t len = (size_t)(h->end - h->start);
        if (b->text_len + len > b->text_cap) {
            size_t cap = b->text_cap ? b->text_cap : 4096;
            while (cap < b->text_len + len) cap *= 2;
            char *p = realloc(b->text, cap);
            if (!p) {
                b->failed = 1;
                b->n--;
                return 1;
            }
            b->text = p;
            b->text_cap = cap;
        }
        memcpy(b->text + b->text_len, h->text, len);
        /* an offset until the buffer stops moving */
        dst->text = (const char *)(uintptr_t)b->text_len;
        b->text_len += len;
    }
    return 0;
}

static void hit_buffer_free(hit_buffer *b) {
    free(b->hits);
    free(b->text);
    memset(b, 0, sizeof *b);
}

/* Hits as columns (the columnar results): one array per field. */
typedef struct {
    int32_t *pattern;
    int8_t *strand;           /* +1 or -1 */
    int64_t *start, *end;
    int32_t *errors;
    int64_t *record;          /* index into the names of the records with hits */
    int32_t *file;            /* index of the target */
    size_t n, cap;
    int failed;
} hit_columns;

#define COLUMN_FIELDS(X) X(pattern) X(strand) X(start) X(end) X(errors) X(record) X(file)

static int hit_columns_push(hit_columns *c, const sm_hit *h, int64_t record, int32_t file) {
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 1024;
#define GROW(f)                                                         \
        {                                                               \
            void *p = realloc(c->f, cap * sizeof *c->f);                \
            if (!p) {                                                   \
                c->failed = 1;                                          \
                return 1;                                               \
            }                                                           \
            c->f = p;                                                   \
        }
        COLUMN_FIELDS(GROW)
#undef GROW
        c->cap = cap;
    }
    size_t i = c->n++;
    c->pattern[i] = (int32_t)h->pattern;
    c->strand[i] = h->strand == '-' ? -1 : 1;
    c->start[i] = (int64_t)h->start;
    c->end[i] = (int64_t)h->end;
    c->errors[i] = (int32_t)h->errors;
    c->record[i] = record;
    c->file[i] = file;
    return 0;
}

static void hit_columns_free(hit_columns *c) {
#define FREE(f) free(c->f);
    COLUMN_FIELDS(FREE)
#undef FREE
    memset(c, 0, sizeof *c);
}

/* The columns as {name: bytearray} (native byte order; the Python layer
   gives them their types). */
static PyObject *hit_columns_dict(const hit_columns *c) {
    PyObject *d = PyDict_New();
#define PUT(f)                                                                                         \
    if (d) {                                                                                           \
        PyObject *b = PyByteArray_FromStringAndSize((const char *)c->f, (Py_ssize_t)(c->n * sizeof *c->f)); \
        if (!b || PyDict_SetItemString(d, #f, b) != 0) Py_CLEAR(d);                                    \
        Py_XDECREF(b);                                                                                 \
    }
    COLUMN_FIELDS(PUT)
#undef PUT
    return d;
}

/* A pattern's index as an int, shared by its hits where the cache is. */
static PyObject *index_object(DatabaseObject *db, uint32_t pattern) {
    if (pattern >= db->info.pattern_count || db->info.pattern_count > HIT_CACHE_PATTERNS)
        return PyLong_FromUnsignedLong(pattern);
    if (!db->index_ints && !(db->index_ints = PyMem_Calloc(db->info.pattern_count, sizeof(PyObject *))))
        return PyErr_NoMemory();
    PyObject **slot = &db->index_ints[pattern];
    if (!*slot && !(*slot = PyLong_FromUnsignedLong(pattern))) return NULL;
    Py_INCREF(*slot);
    return *slot;
}

/* A hit's text as a str: the one the pattern's last hit on that strand
   made when the bytes are the same. */
static PyObject *matched_object(DatabaseObject *db, const sm_hit *h, const char *text) {
    Py_ssize_t len = (Py_ssize_t)(h->end - h->start);
    if (h->pattern >= db->info.pattern_count || db->info.pattern_count > HIT_CACHE_PATTERNS)
        return PyUnicode_DecodeLatin1(text, len, NULL);
    if (!db->matched && !(db->matched = PyMem_Calloc(2 * (size_t)db->info.pattern_count, sizeof(PyObject *))))
        return PyErr_NoMemory();
    PyObject **slot = &db->matched[2 * (size_t)h->pattern + (h->strand == '-')];
    /* Latin-1 text of one byte per character: the str's bytes are the text's */
    if (*slot && PyUnicode_GET_LENGTH(*slot) == len && PyUnicode_KIND(*slot) == PyUnicode_1BYTE_KIND &&
        memcmp(PyUnicode_DATA(*slot), text, (size_t)len) == 0) {
        Py_INCREF(*slot);
        return *slot;
    }
    PyObject *s = PyUnicode_DecodeLatin1(text, len, NULL);
    if (s) {
        Py_INCREF(s);
        Py_XSETREF(*slot, s);
    }
    return s;
}

/* A Hit from a collected hit; text is its matched bytes. */
static PyObject *make_hit(DatabaseObject *db, const sm_hit *h, const char *text, PyObject *record, PyObject *file,
                          int cigar) {
    PyObject *hit = new_tuple_of(HitType, HIT_FIELDS);
    if (!hit) return NULL;
    PyObject *name = h->pattern < db->info.pattern_count ? PyList_GET_ITEM(db->names, h->pattern) : Py_None;
    Py_INCREF(name);
    PyTuple_SET_ITEM(hit, 0, name);
    PyObject *strand = h->strand == '-' ? minus_strand : plus_strand;
    Py_INCREF(strand);
    PyTuple_SET_ITEM(hit, 1, strand);
    PyTuple_SET_ITEM(hit, 2, PyLong_FromUnsignedLongLong(h->start));
    PyTuple_SET_ITEM(hit, 3, PyLong_FromUnsignedLongLong(h->end));
    PyTuple_SET_ITEM(hit, 4, PyLong_FromUnsignedLong(h->errors));
    PyTuple_SET_ITEM(hit, 5, matched_object(db, h, text));
    if (!record) record = Py_None;
    Py_INCREF(record);
    PyTuple_SET_ITEM(hit, 6, record);
    if (!file) file = Py_None;
    Py_INCREF(file);
    PyTuple_SET_ITEM(hit, 7, file);
    PyTuple_SET_ITEM(hit, 8, index_object(db, h->pattern));
    PyObject *c = Py_None;
    if (cigar) {
        char small[256];
        size_t len = 0;
        sm_hit with_text = *h;
        with_text.text = text;
        int rc = sm_hit_cigar(db->db, &with_text, small, sizeof small, &len);
        if (rc == SM_OK) {
            c = PyUnicode_FromStringAndSize(small, (Py_ssize_t)len);
        } else if (rc == SM_ERR_LIMIT) {
            char *big = malloc(len + 1);
            if (big && sm_hit_cigar(db->db, &with_text, big, len + 1, &len) == SM_OK)
                c = PyUnicode_FromStringAndSize(big, (Py_ssize_t)len);
            free(big);
        }
        if (!c && !PyErr_Occurred()) raise_status(rc, NULL);
    } else {
        Py_INCREF(c);
    }
    PyTuple_SET_ITEM(hit, 9, c);
    for (int i = 0; i < HIT_FIELDS; i++)
        if (!PyTuple_GET_ITEM(hit, i)) {
            Py_DECREF(hit);
            return NULL;
        }
    /* str, int and None only: a hit is in no cycle, and hundreds of
       thousands of them need not be walked by every garbage collection */
    PyObject_GC_UnTrack(hit);
    return hit;
}

/* ------------------------------------------------ a sequence's bytes */

/* The bytes of a sequence argument: str (as UTF-8) or any object with the
   buffer protocol, its bytes as they lie in memory; a non-contiguous one
   (a strided memoryview, a numpy slice with a step) is copied. */
typedef struct {
    Py_buffer view;
    int has_view;
    char *copy;
    const char *data;
    Py_ssize_t len;
} seq_bytes;

static int seq_bytes_get(PyObject *obj, seq_bytes *s, const char *what) {
    memset(s, 0, sizeof *s);
    if (PyUnicode_Check(obj)) {
        s->data = PyUnicode_AsUTF8AndSize(obj, &s->len);
        return s->data ? 0 : -1;
    }
    if (!PyObject_CheckBuffer(obj)) {
        PyErr_Format(PyExc_TypeError, "%s must be str or a bytes-like object, not %.80s", what,
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    if (PyObject_GetBuffer(obj, &s->view, PyBUF_SIMPLE) == 0) {
        s->has_view = 1;
        s->data = s->view.buf;
        s->len = s->view.len;
        return 0;
    }
    PyErr_Clear();
    Py_buffer strided;
    if (PyObject_GetBuffer(obj, &strided, PyBUF_FULL_RO) != 0) return -1;
    s->copy = PyMem_Malloc(strided.len ? (size_t)strided.len : 1);
    if (!s->copy) {
        PyBuffer_Release(&strided);
        PyErr_NoMemory();
        return -1;
    }
    int rc = PyBuffer_ToContiguous(s->copy, &strided, strided.len, 'C');
    s->len = strided.len;
    PyBuffer_Release(&strided);
    if (rc != 0) {
        PyMem_Free(s->copy);
        s->copy = NULL;
        return -1;
    }
    s->data = s->copy;
    return 0;
}

static void seq_bytes_release(seq_bytes *s) {
    if (s->has_view) PyBuffer_Release(&s->view);
    PyMem_Free(s->copy);
    memset(s, 0, sizeof *s);
}

/* -------------------------------------------------- scan, in memory */

/* Bytes a circular record's head is read again: longest site - 1 (+ k for edits). */
static size_t circular_reach(const sm_db_info *info) {
    size_t reach = info->max_length ? info->max_length - 1 : 0;
    if (info->match == SM_MATCH_EDITS) reach += info->max_errors;
    return reach;
}

typedef struct {
    hit_filter filter;
    hit_buffer hits;
    hit_columns columns;
    int arrays;
} scan_sink;

static int collect_scan(const sm_hit *h, void *ctx) {
    scan_sink *s = ctx;
    int take = hit_filter_take(&s->filter, h);
    if (take < 0) return 1;
    if (take == 0) return 0;
    int failed = s->arrays ? hit_columns_push(&s->columns, h, 0, 0) : hit_buffer_push(&s->hits, h, 0);
    return failed || s->filter.taken >= s->filter.max_hits;
}

/* Sequences shorter than this are scanned holding the GIL: releasing and
   taking it back costs more than their scan (docs/benchmarks.md, "Python:
   the cost of a call"). */
#define GIL_RELEASE_BYTES 4096

/* Every hit in one sequence in memory: a list of Hit, or with arrays the
   columns {name: bytearray}. strand: '+' or '-' for one strand's hits, 0
   for both; max_hits: UINT64_MAX for no limit. */
static PyObject *scan_core(DatabaseObject *self, PyObject *sequence, int circular, int cigar, char strand,
                           uint64_t max_hits, int arrays) {
    scan_sink sink;
    memset(&sink, 0, sizeof sink);
    sink.arrays = arrays;
    sink.filter.limit = UINT64_MAX;
    sink.filter.max_hits = max_hits;
    sink.filter.strand = strand;
    seq_bytes seq;
    if (seq_bytes_get(sequence, &seq, "sequence") != 0) return NULL;
    sm_scratch *scratch = scratch_take(self);
    if (!scratch) {
        seq_bytes_release(&seq);
        return PyErr_NoMemory();
    }
    char *joined = NULL;
    const char *text = seq.data;
    size_t len = (size_t)seq.len, text_len = len;
    int status = SM_OK;
    PyThreadState *released = len >= GIL_RELEASE_BYTES ? PyEval_SaveThread() : NULL;
    if (circular && len > 0) {
        /* the record read round and round for len + w bytes (any number of
           turns round a record shorter than w); hits that start in it */
        size_t w = circular_reach(&self->info);
        joined = malloc(len + w + 1);
        if (joined) {
            for (size_t i = 0; i < len + w; i++) joined[i] = text[i % len];
            text = joined;
            text_len = len + w;
            sink.filter.limit = (uint64_t)len;
        } else {
            status = SM_ERR_NOMEM;
        }
    }
    if (status == SM_OK && sink.filter.max_hits > 0)
        status = sm_scan(self->db, scratch, text, text_len, collect_scan, &sink);
    if (status == SM_ERR_TERMINATED && !sink.hits.failed && !sink.columns.failed) status = SM_OK;
    if (released) PyEval_RestoreThread(released);
    scratch_give(self, scratch);
    PyObject *out = NULL;
    if (status != SM_OK || sink.hits.failed || sink.columns.failed) {
        raise_status(status == SM_OK || status == SM_ERR_TERMINATED ? SM_ERR_NOMEM : status, NULL);
    } else if (arrays) {
        out = hit_columns_dict(&sink.columns);
    } else if ((out = PyList_New((Py_ssize_t)sink.hits.n))) {
        for (size_t i = 0; i < sink.hits.n; i++) {
            const sm_hit *h = &sink.hits.hits[i];
            PyObject *hit = make_hit(self, h, h->text, NULL, NULL, cigar);
            if (!hit) {
                Py_CLEAR(out);
                break;
            }
            PyList_SET_ITEM(out, (Py_ssize_t)i, hit);
        }
    }
    free(joined);
    hit_buffer_free(&sink.hits);
    hit_columns_free(&sink.columns);
    seq_bytes_release(&seq);
    return out;
}

/* _scan(sequence, circular, cigar, strand, max_hits, arrays), for the
   Python layer's checked options: strand "" for both, "+" or "-";
   max_hits None or a count. */
static PyObject *database_scan_checked(DatabaseObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 6) {
        PyErr_SetString(PyExc_TypeError, "_scan takes 6 arguments");
        return NULL;
    }
    int circular = PyObject_IsTrue(args[1]), cigar = PyObject_IsTrue(args[2]), arrays = PyObject_IsTrue(args[5]);
    if (circular < 0 || cigar < 0 || arrays < 0) return NULL;
    char strand = 0;
    if (PyUnicode_Check(args[3]) && PyUnicode_GET_LENGTH(args[3]) == 1) strand = (char)PyUnicode_READ_CHAR(args[3], 0);
    uint64_t max_hits = UINT64_MAX;
    if (args[4] != Py_None) {
        unsigned long long m = PyLong_AsUnsignedLongLong(args[4]);
        if (m == (unsigned long long)-1 && PyErr_Occurred()) return NULL;
        max_hits = m;
    }
    return scan_core(self, args[0], circular, cigar, strand, max_hits, arrays);
}

PyDoc_STRVAR(scan_doc,
"scan($self, sequence, /, *, circular=False, cigar=False, strand=None, anchor=None, max_hits=None, arrays=False)\n"
"--\n"
"\n"
"Every hit in one sequence, as a list of Hit (or with arrays=True as\n"
"HitColumns).\n"
"\n"
"sequence: a str (scanned as its UTF-8 bytes: coordinates count bytes),\n"
"    bytes, or any object with the buffer protocol (bytearray, memoryview,\n"
"    mmap, a numpy array: its bytes as they lie in memory; a strided one is\n"
"    copied first).\n"
"circular: the sequence is circular; hits over its end are reported too\n"
"    (start below its length, end past it).\n"
"cigar: fill Hit.cigar with the alignment: '=' match, 'X' mismatch, 'I' a\n"
"    pattern symbol missing from the text, 'D' a text symbol missing from\n"
"    the pattern; the pattern 5'->3' against the text, for '-' hits against\n"
"    its reverse complement.\n"
"strand: None (every strand the database has), \"+\" or \"-\": only the hits\n"
"    on that strand (compiling with strands= instead scans less).\n"
"anchor: None, \"start\" or \"end\": only the hits at the sequence's start or\n"
"    end; with edits the alignment itself is anchored (as the command's\n"
"    --anchor).\n"
"max_hits: stop after this many hits (in output order).\n"
"arrays: the hits as HitColumns, without a Python object per hit.\n"
"\n"
"Sequences of 4 KiB or more are scanned with the GIL released; shorter ones\n"
"holding it (releasing it would cost more than their scan).");

static PyObject *kw_circular, *kw_cigar, *kw_strand, *kw_anchor, *kw_max_hits, *kw_arrays;

static int keyword_is(PyObject *name, PyObject *interned) {
    return name == interned || PyUnicode_Compare(name, interned) == 0;
}

/* Database.scan: the common call (a sequence, circular, cigar, the other
   options left as they are) goes straight to the scan, without a Python
   frame: it is what a short scan pays before its first byte. Any other
   call goes to the Python layer's _scan_options, which checks and
   documents every option. */
static PyObject *database_scan(DatabaseObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    Py_ssize_t nk = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    int circular = 0, cigar = 0, fast = nargs == 1;
    for (Py_ssize_t i = 0; fast && i < nk; i++) {
        PyObject *k = PyTuple_GET_ITEM(kwnames, i), *v = args[nargs + i];
        if (keyword_is(k, kw_circular) && (v == Py_True || v == Py_False)) circular = v == Py_True;
        else if (keyword_is(k, kw_cigar) && (v == Py_True || v == Py_False)) cigar = v == Py_True;
        else if ((keyword_is(k, kw_strand) || keyword_is(k, kw_anchor) || keyword_is(k, kw_max_hits)) && v == Py_None)
            continue;
        else if (keyword_is(k, kw_arrays) && v == Py_False) continue;
        else fast = 0;
    }
    if (fast) return scan_core(self, args[0], circular, cigar, 0, UINT64_MAX, 0);
    PyObject *method = PyObject_GetAttrString((PyObject *)self, "_scan_options");
    if (!method) return NULL;
    PyObject *positional = PyTuple_New(nargs), *keywords = nk ? PyDict_New() : NULL, *out = NULL;
    int ok = positional && (!nk || keywords);
    for (Py_ssize_t i = 0; ok && i < nargs; i++) {
        Py_INCREF(args[i]);
        PyTuple_SET_ITEM(positional, i, args[i]);
    }
    for (Py_ssize_t i = 0; ok && i < nk; i++)
        ok = PyDict_SetItem(keywords, PyTuple_GET_ITEM(kwnames, i), args[nargs + i]) == 0;
    if (ok) out = PyObject_Call(method, positional, keywords);
    Py_XDECREF(positional);
    Py_XDECREF(keywords);
    Py_DECREF(method);
    return out;
}

/* -------------------------------------------------------------- TrimSet */

/* The adapters of Adapters (an sm_trim_set): the patterns to compile and
   what trim decides with. */
typedef struct {
    PyObject_HEAD
    sm_trim_set set;
} TrimSetObject;

static PyTypeObject TrimSetType;

static void trim_set_dealloc(TrimSetObject *self) {
    sm_trim_set_free(&self->set);
    PyObject_Free(self);
}

/* _trim_set([(adapter bytes, kind 1 back / 2 front[, mate 1 or 2]), ...]):
   the set, as the command's -a and -g add them (-A and -G: mate 2's). */
static PyObject *seqmatch_trim_set(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *list;
    if (!PyArg_ParseTuple(args, "O!:_trim_set", &PyList_Type, &list)) return NULL;
    TrimSetObject *t = PyObject_New(TrimSetObject, &TrimSetType);
    if (!t) return NULL;
    memset(&t->set, 0, sizeof t->set);
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(list); i++) {
        const char *text;
        Py_ssize_t len;
        int kind, mate = 0;
        if (!PyArg_ParseTuple(PyList_GET_ITEM(list, i), "y#i|i:_trim_set", &text, &len, &kind, &mate)) {
            Py_DECREF(t);
            return NULL;
        }
        sm_error err;
        memset(&err, 0, sizeof err);
        int status = (size_t)len != strlen(text) ? SM_ERR_INVALID
                                                 : sm_trim_set_add(&t->set, text, (sm_trim_kind)kind, &err);
        if (status != SM_OK) {
            Py_DECREF(t);
            return raise_status(status, err.message[0] ? err.message : "an adapter holds a NUL byte");
        }
        t->set.adapters[t->set.count - 1].mate = (uint8_t)(mate == 1 || mate == 2 ? mate : 0);
    }
    return (PyObject *)t;
}

/* _patterns(): the (name, sequence) bytes pairs to compile, in order. */
static PyObject *trim_set_patterns(TrimSetObject *self, PyObject *unused) {
    (void)unused;
    const sm_pattern_list *l = &self->set.patterns;
    PyObject *out = PyList_New((Py_ssize_t)l->count);
    for (size_t i = 0; out && i < l->count; i++) {
        PyObject *pair = Py_BuildValue("(yy#)", l->items[i].name, l->items[i].seq, (Py_ssize_t)l->items[i].len);
        if (!pair) Py_CLEAR(out);
        else PyList_SET_ITEM(out, (Py_ssize_t)i, pair);
    }
    return out;
}

static PyMethodDef trim_set_methods[] = {
    {"_patterns", (PyCFunction)trim_set_patterns, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject TrimSetType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "seqmatch._seqmatch._TrimSet",
    .tp_basicsize = sizeof(TrimSetObject),
    .tp_dealloc = (destructor)trim_set_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Adapters as trim reads them (the C sm_trim_set); seqmatch.Adapters wraps it.",
    .tp_methods = trim_set_methods,
};

/* ---------------------------------------------------------- BarcodePairs */

/* A table of samples by pairs of barcodes (an sm_barcode_pairs). */
typedef struct {
    PyObject_HEAD
    sm_barcode_pairs *pairs;
} BarcodePairsObject;

static PyTypeObject BarcodePairsType;

static void barcode_pairs_dealloc(BarcodePairsObject *self) {
    sm_barcode_pairs_free(self->pairs);
    PyObject_Free(self);
}

/* _barcode_pairs(path bytes, None) or (None, table text bytes): the table as
   seqmatch demux --barcodes reads it. */
static PyObject *seqmatch_barcode_pairs(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *path, *text;
    int both = 0;
    if (!PyArg_ParseTuple(args, "OO|p:_barcode_pairs", &path, &text, &both)) return NULL;
    if ((path != Py_None && !PyBytes_Check(path)) || (text != Py_None && !PyBytes_Check(text)) ||
        (path == Py_None) == (text == Py_None)) {
        PyErr_SetString(PyExc_TypeError, "_barcode_pairs takes a path or a table's text (bytes)");
        return NULL;
    }
    sm_barcode_pairs *pairs = NULL;
    sm_error err;
    memset(&err, 0, sizeof err);
    int status;
    if (path != Py_None) {
        const char *p = PyBytes_AS_STRING(path);
        Py_BEGIN_ALLOW_THREADS
        status = sm_barcode_pairs_read(p, &pairs, &err);
        Py_END_ALLOW_THREADS
    } else {
        status = sm_barcode_pairs_parse(PyBytes_AS_STRING(text), (size_t)PyBytes_GET_SIZE(text), "table", &pairs,
                                        &err);
    }
    if (status != SM_OK) return raise_status(status, err.message);
    if (!pairs) {
        PyErr_SetString(PyExc_ValueError, "the table has two columns (name, barcode): a list of single barcodes; "
                        "compile it (seqmatch.read_patterns) and use Database.demux");
        return NULL;
    }
    BarcodePairsObject *b = PyObject_New(BarcodePairsObject, &BarcodePairsType);
    if (!b) {
        sm_barcode_pairs_free(pairs);
        return NULL;
    }
    /* single reads: the construct as given, or also wholly reverse complemented */
    sm_barcode_pairs_orientations(pairs, both);
    b->pairs = pairs;
    return (PyObject *)b;
}

static PyObject *barcode_pairs_samples(BarcodePairsObject *self, PyObject *unused) {
    (void)unused;
    size_t n = sm_barcode_pairs_samples(self->pairs);
    PyObject *out = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; out && i < n; i++) {
        PyObject *name = name_object(sm_barcode_pairs_sample(self->pairs, i));
        if (!name) Py_CLEAR(out);
        else PyList_SET_ITEM(out, (Py_ssize_t)i, name);
    }
    return out;
}

/* _compile(match, k, flags, engine, rc_second): the barcodes' database (barcode1s, then barcode2s). */
static PyObject *barcode_pairs_compile(BarcodePairsObject *self, PyObject *args) {
    int match, flags, engine, rc_second;
    unsigned int k;
    if (!PyArg_ParseTuple(args, "iIiip:_compile", &match, &k, &flags, &engine, &rc_second)) return NULL;
    sm_compile_options o;
    sm_compile_options_init(&o);
    o.match = (sm_match)match;
    o.max_errors = k;
    o.flags = (unsigned)flags;
    o.engine = (sm_engine)engine;
    sm_db *db = NULL;
    sm_error err;
    memset(&err, 0, sizeof err);
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = sm_barcode_pairs_compile(self->pairs, &o, rc_second, &db, &err);
    Py_END_ALLOW_THREADS
    if (status != SM_OK) return raise_status(status, err.message);
    return (PyObject *)database_wrap(db);
}

static PyMethodDef barcode_pairs_methods[] = {
    {"_samples", (PyCFunction)barcode_pairs_samples, METH_NOARGS, NULL},
    {"_compile", (PyCFunction)barcode_pairs_compile, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject BarcodePairsType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "seqmatch._seqmatch._BarcodePairs",
    .tp_basicsize = sizeof(BarcodePairsObject),
    .tp_dealloc = (destructor)barcode_pairs_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Samples by pairs of barcodes (the C sm_barcode_pairs); seqmatch.BarcodePairs wraps it.",
    .tp_methods = barcode_pairs_methods,
};

/* _amplicon_pairs(path or [(name, forward, reverse) bytes, ...]): the
   primer pairs as the command reads -p tables (a path) or checks -F/-R,
   as a list of (name, forward, reverse) str. */
static PyObject *seqmatch_amplicon_pairs(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *arg;
    if (!PyArg_ParseTuple(args, "O:_amplicon_pairs", &arg)) return NULL;
    sm_amplicon_set set;
    memset(&set, 0, sizeof set);
    sm_error err;
    memset(&err, 0, sizeof err);
    int status = SM_OK;
    if (PyBytes_Check(arg)) {
        const char *path = PyBytes_AS_STRING(arg);
        Py_BEGIN_ALLOW_THREADS
        status = sm_amplicon_set_read(&set, path, &err);
        Py_END_ALLOW_THREADS
    } else if (PyList_Check(arg)) {
        for (Py_ssize_t i = 0; status == SM_OK && i < PyList_GET_SIZE(arg); i++) {
            const char *name, *fwd, *rev;
            if (!PyArg_ParseTuple(PyList_GET_ITEM(arg, i), "yyy:_amplicon_pairs", &name, &fwd, &rev)) {
                sm_amplicon_set_free(&set);
                return NULL;
            }
            status = sm_amplicon_set_add(&set, name, fwd, rev, &err);
        }
    } else {
        PyErr_SetString(PyExc_TypeError, "_amplicon_pairs takes a path (bytes) or a list");
        return NULL;
    }
    PyObject *out = NULL;
    if (status != SM_OK) {
        raise_status(status, err.message);
    } else if ((out = PyList_New((Py_ssize_t)set.count))) {
        for (size_t i = 0; i < set.count; i++) {
            const sm_amplicon_pair *q = &set.pairs[i];
            PyObject *t = Py_BuildValue("(sss)", q->name, q->forward, q->reverse);
            if (!t) {
                Py_CLEAR(out);
                break;
            }
            PyList_SET_ITEM(out, (Py_ssize_t)i, t);
        }
    }
    sm_amplicon_set_free(&set);
    return out;
}

/* ----------------------------------------------------------------- Run */

/* One pass over targets through a runner. Targets come from the Python
   layer as (kind, object, shown) triples: a path (bytes), a file object,
   or an iterator of records (name, sequence, ...). */
enum { TARGET_PATH = 0, TARGET_FILE = 1, TARGET_RECORDS = 2, TARGET_PAIR = 3 };
enum { MODE_HITS = 0, MODE_COUNT = 1, MODE_ARRAYS = 2, MODE_FILTER = 3, MODE_DEMUX = 4, MODE_AMPLICON = 5,
       MODE_TRIM = 6, MODE_PAIRS = 7 };

/* Modes that hand out records (filter, demux) or what is made of them
   (amplicon, trim) once each record's hits are all in. */
static int mode_per_record(int mode) { return mode >= MODE_FILTER; }

/* A record in flight: fed to the runner, not yet handed out. */
typedef struct {
    char *name;               /* NULL: None (a record given without a name) */
    int32_t target;
    PyObject *item;           /* filter/demux of records: the item as given */
    char *raw;                /* filter/demux of files: the record as read */
    size_t raw_len;
    char *seq;                /* filter/demux of files: its sequence */
    size_t seq_len, seq_cap;
    uint64_t hits;
    uint32_t best_errors;
    uint32_t choice;          /* demux: the barcode of the best hit */
    uint32_t best_pattern;    /* demux: the first pattern (by index) with the fewest errors */
    int tie;                  /* demux: two barcodes equally close */
    int done;
    /* amplicon, trim: the record's hits (texts dropped), worked out once it is done */
    sm_hit *kept;
    uint8_t *partial;         /* trim: kept[i] came as a partial hit (on_partial_hit) */
    size_t nkept, kept_cap;
    uint64_t length;          /* records given as objects: the sequence's length */
    int decided;
    sm_amplicon *products;    /* amplicon */
    size_t nproducts, products_cap;
    sm_trim_cut cut;          /* trim */
    int trim_kept;            /* trim: kept (minimum length, discard) */
    int window;               /* barcode pairs: the previous record's end window (no record of its own) */
    unsigned mate;            /* paired targets: 1 or 2 (a pair's mate 2 follows its mate 1); 0 single */
    int has_length;           /* length is set (paired files: the bytes fed) */
    int counted;              /* filter, demux: counted in the statistics */
    uint64_t user[4];         /* barcode pairs: each end's closest barcode, each orientation's (sm_read_record.user) */
} record_info;
_Static_assert(sizeof(((record_info *)0)->user) == sizeof(((sm_read_record *)0)->user),
               "record_info.user is copied to and from sm_read_record.user");

/* Bytes of a record asked of the reader at a time: large enough that the
   calls cost nothing, small enough that a stop is seen soon. */
#define FEED_PIECE ((size_t)4 << 20)

struct RunObject;

/* A Python file object read by a reader (sm_reader_open_fn). */
typedef struct {
    struct RunObject *run;
    PyObject *file;
    PyObject *pending;        /* bytes a read gave beyond what was asked */
    Py_ssize_t pending_at;
    PyObject *shown;          /* its name in messages (str) */
} file_source;

typedef struct RunObject {
    PyObject_HEAD
    DatabaseObject *db;
    PyObject *targets;        /* list of (kind, object, shown) */
    PyObject *shown;          /* list: the targets' names for Hit.file (None for records) */
    Py_ssize_t next_target;   /* the next target to open */
    int mode, cigar, invert;
    int format;               /* sm_input_format for files */
    unsigned threads;
    int per_file;             /* count: a block of counts per target */

    /* the current target */
    int kind;                 /* -1: none open */
    int32_t target;
    sm_reader *reader;
    PyObject *iter;           /* records */
    file_source src[2];       /* file objects being read (mate 1 or a single target, mate 2) */
    PyObject *file_error;     /* an exception a file object's read raised (type, value, traceback) */
    PyObject *file_error_value, *file_error_tb;
    /* a paired target (TARGET_PAIR): mate 2's reader or records, both mates' names */
    sm_reader *reader2;
    PyObject *iter2;
    PyObject *pair_shown[2];
    uint64_t pairs_read;
    int paired;               /* the pass reads pairs of mates */
    unsigned scan_mate;       /* demux of pairs: the mate that carries the barcode (the other is not scanned) */
    int has_adapters[2];      /* trim: some adapter is for mate 1, for mate 2 */
    int stop_when_ready;      /* run_read_file's: pause when something is ready */
    int feed_status;          /* why a callback stopped sm_runner_scan_reader (SM_OK: a pause) */
    int target_end;           /* the current target has no more records */
    uint64_t record;          /* the number of the record being fed */

    sm_runner *runner;
    hit_filter filter;
    hit_buffer hits;          /* hits mode: delivered, not yet handed out */
    size_t next_hit;
    hit_columns columns;      /* arrays mode */
    char **column_names;      /* arrays mode: names of the records with hits */
    size_t ncolumn_names, column_names_cap;
    int64_t column_record;    /* the column index of the last record with a hit */
    uint64_t column_record_number;
    uint64_t *counts;         /* counted here when the runner cannot (strand, max_hits) */
    int own_counts;
    PyObject *file_counts;    /* per_file: a list of count lists, one per target */
    uint64_t *counts_before;  /* per_file: the counts at the end of the previous target */
    const uint32_t *barcode_of; /* demux: the barcode (distinct name) of each pattern */
    sm_amplicon_rule rule;    /* amplicon: the size window and longest */
    size_t pairs;             /* amplicon: primer pairs (patterns 2i and 2i + 1) */
    int keep_sequence;        /* amplicon: the products' sequences are asked for */
    PyObject *trim_set;       /* trim: the _TrimSet */
    uint32_t min_overlap;     /* trim: as the runner's */
    uint64_t minimum_length;  /* trim: shorter reads are not handed out */
    int discard;              /* trim: SM_TRIM_DISCARD_* or SM_TRIM_KEEP_ALL */
    PyObject *barcode_pairs;  /* barcode pairs: the _BarcodePairs */
    size_t end_window;        /* barcode pairs: the record end scanned for barcode2 */
    uint64_t stat_assigned, stat_no_hit, stat_ambiguous, stat_unlisted; /* barcode pairs */
    /* amplicon and trim: records, products; trim: reads cut, kept, bases in and kept */
    uint64_t stat_records, stat_products, stat_trimmed, stat_kept, stat_bases_in, stat_bases_kept;
    uint64_t stat_reads;      /* trim: mates read */
    /* the run report's counts (seqmatch-stats: search, filter, demux) */
    uint64_t stat_reads_in, stat_reads_out, stat_bases_out, stat_matched;
    uint64_t *pattern_records; /* filter, demux: scanned records with a hit, per pattern */
    uint64_t *last_hit_record; /* filter, demux: each pattern's last record with a hit, + 1 */
    uint64_t *sample_reads;   /* demux: reads (pairs) per barcode or sample, then unassigned */
    size_t nsamples;
    PyObject *sample_names;   /* demux: a list of str, the barcodes' or samples' names */
    /* demux: --trim and --barcode-tag (the barcodes at anchor_end: the record's end) */
    int trim_barcode, barcode_tag, anchor_end;

    record_info *records;     /* ring: records first_record, first_record + 1, ... */
    size_t head, count, cap;
    uint64_t first_record;

    PyObject *record_name;    /* the name object of the record of the last hit handed out */
    uint64_t record_name_of;
    int started;              /* the runner exists */
    int finished;             /* every target read and the runner flushed */
    int stopped;              /* max_hits reached, or a stop: no more input */
    int done;                 /* the iterator is over */
    int busy;                 /* a thread is advancing it */
    int failed;               /* the C side ran out of memory */
    int closed;               /* close(): readers and runner freed, counts kept in final_stats */
    PyObject *final_stats;    /* close(): the counts when it was closed */
    sm_error err;
} RunObject;

static PyTypeObject RunType;

static record_info *record_at(RunObject *r, size_t i) { return &r->records[(r->head + i) % r->cap]; }

static record_info *record_of(RunObject *r, uint64_t number) {
    if (number < r->first_record || number - r->first_record >= r->count) return NULL;
    return record_at(r, (size_t)(number - r->first_record));
}

static void record_clear(record_info *e) {
    free(e->name);
    free(e->raw);
    free(e->seq);
    free(e->kept);
    free(e->partial);
    free(e->products);
    Py_CLEAR(e->item); /* with the GIL: records are dropped with it held */
    memset(e, 0, sizeof *e);
}

/* A new record at the end (its number is first_record + count - 1). */
static record_info *record_push(RunObject *r) {
    if (r->count == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 256;
        record_info *q = malloc(cap * sizeof *q);
        if (!q) return NULL;
        for (size_t i = 0; i < r->count; i++) q[i] = *record_at(r, i);
        free(r->records);
        r->records = q;
        r->head = 0;
        r->cap = cap;
    }
    record_info *e = record_at(r, r->count++);
    memset(e, 0, sizeof *e);
    e->best_errors = UINT32_MAX;
    return e;
}

static void record_pop(RunObject *r) {
    record_clear(record_at(r, 0));
    r->head = (r->head + 1) % r->cap;
    r->count--;
    r->first_record++;
}

/* The record's name as the runner's callbacks see it (NULL for None). */
static const char *record_name(RunObject *r, uint64_t number) {
    record_info *e = record_of(r, number);
    return e ? e->name : NULL;
}

/* Amplicon and trim: a hit kept with its record (partial: it came as a
   partial hit). */
static int record_keep_hit(RunObject *r, const sm_hit *h, int partial) {
    record_info *e = record_of(r, h->record);
    if (!e) return 0;
    if (e->nkept == e->kept_cap) {
        size_t cap = e->kept_cap ? e->kept_cap * 2 : 16;
        sm_hit *p = realloc(e->kept, cap * sizeof *p);
        if (!p) return 1;
        e->kept = p;
        if (r->mode == MODE_TRIM) {
            uint8_t *q = realloc(e->partial, cap);
            if (!q) return 1;
            e->partial = q;
        }
        e->kept_cap = cap;
    }
    if (e->partial) e->partial[e->nkept] = (uint8_t)partial;
    e->kept[e->nkept] = *h;
    e->kept[e->nkept++].text = NULL;
    return 0;
}

/* Barcode pairs: a runner record's summary kept as its end's closest
   barcode (a window's for the record before it, as end 2). */
static int run_on_summary(const sm_record_summary *summary, void *ctx) {
    RunObject *r = ctx;
    for (size_t i = 0; r->pattern_records && i < summary->npatterns; i++)
        if (summary->patterns[i].pattern < r->db->info.pattern_count)
            r->pattern_records[summary->patterns[i].pattern]++;
    record_info *e = record_of(r, summary->record);
    if (!e) return 0;
    unsigned end = 1;
    if (e->window || e->mate == 2) {
        e = record_of(r, summary->record - 1);
        end = 2;
        if (!e) return 0;
    }
    sm_read_record rr;
    memset(&rr, 0, sizeof rr);
    memcpy(rr.user, e->user, sizeof rr.user);
    rr.summary_mate = end;
    sm_barcode_pairs_summary(((BarcodePairsObject *)r->barcode_pairs)->pairs, &rr, summary);
    memcpy(e->user, rr.user, sizeof rr.user);
    return 0;
}

static int run_on_partial_hit(const sm_hit *h, void *ctx) {
    RunObject *r = ctx;
    if (record_keep_hit(r, h, 1) != 0) {
        r->failed = 1;
        return 1;
    }
    return 0;
}

static int run_on_hit(const sm_hit *h, void *ctx) {
    RunObject *r = ctx;
    int take = hit_filter_take(&r->filter, h);
    if (take < 0) return 1;
    if (take == 0) return 0;
    int failed = 0;
    switch (r->mode) {
    case MODE_HITS: failed = hit_buffer_push(&r->hits, h, 1); break;
    case MODE_AMPLICON:
    case MODE_TRIM: failed = record_keep_hit(r, h, 0); break;
    case MODE_COUNT:
        if (r->own_counts && h->pattern < r->db->info.pattern_count) r->counts[h->pattern]++;
        break;
    case MODE_ARRAYS: {
        if (r->column_record < 0 || h->record != r->column_record_number) {
            if (r->ncolumn_names == r->column_names_cap) {
                size_t cap = r->column_names_cap ? r->column_names_cap * 2 : 256;
                char **p = realloc(r->column_names, cap * sizeof *p);
                if (!p) {
                    r->failed = 1;
                    return 1;
                }
                r->column_names = p;
                r->column_names_cap = cap;
            }
            const char *name = record_name(r, h->record);
            char *copy = name ? strdup(name) : NULL;
            if (name && !copy) {
                r->failed = 1;
                return 1;
            }
            r->column_names[r->ncolumn_names++] = copy;
            r->column_record++;
            r->column_record_number = h->record;
        }
        record_info *e = record_of(r, h->record);
        failed = hit_columns_push(&r->columns, h, r->column_record, e ? e->target : -1);
        break;
    }
    default: {
        record_info *e = record_of(r, h->record);
        if (!e) break;
        e->hits++;
        if (r->pattern_records && h->pattern < r->db->info.pattern_count &&
            r->last_hit_record[h->pattern] != h->record + 1) {
            r->last_hit_record[h->pattern] = h->record + 1;
            r->pattern_records[h->pattern]++;
        }
        uint32_t b = r->barcode_of ? r->barcode_of[h->pattern] : h->pattern;
        if (h->errors < e->best_errors) {
            e->best_errors = h->errors;
            e->choice = b;
            e->best_pattern = h->pattern;
            e->tie = 0;
        } else if (h->errors == e->best_errors) {
            if (b != e->choice) e->tie = 1;
            if (h->pattern < e->best_pattern) e->best_pattern = h->pattern;
        }
        break;
    }
    }
    if (failed) {
        r->failed = 1;
        return 1;
    }
    return r->filter.taken >= r->filter.max_hits;
}

static void run_on_record_done(uint64_t number, void *ctx) {
    RunObject *r = ctx;
    record_info *e = record_of(r, number);
    if (e) e->done = 1;
}

/* Drops the records that are done and need nothing more: hits mode, those
   before the first hit not yet handed out; count and arrays, every done
   one (arrays copy a record's name with its first hit). Filter and demux
   drop theirs as they hand them out (run_ready). Called without the GIL
   for file targets, whose records hold no Python object. */
static void run_forget_records(RunObject *r) {
    if (mode_per_record(r->mode)) return;
    uint64_t keep_from = r->mode == MODE_HITS && r->next_hit < r->hits.n ? r->hits.hits[r->next_hit].record : UINT64_MAX;
    while (r->count > 0 && record_at(r, 0)->done && r->first_record < keep_from) record_pop(r);
}

/* The record's length: given (records as objects), kept (its sequence) or
   counted in its bytes as read. */
static uint64_t record_length(const record_info *e) {
    if (e->item || e->has_length) return e->length;
    if (e->seq) return e->seq_len;
    return e->raw ? sm_record_seq_length((const uint8_t *)e->raw, e->raw_len) : 0;
}

/* Amplicon: the record's products; trim: its cut and whether it is kept
   (a pair: mates e and e2, kept as sm_trimmer keeps pairs, in
   e->trim_kept). Non-zero when out of memory. */
static int run_decide(RunObject *r, record_info *e, record_info *e2) {
    e->decided = 1;
    r->stat_records++;
    if (r->mode == MODE_AMPLICON) {
        if (sm_amplicon_products(&r->rule, r->pairs, e->kept, e->nkept, &e->products, &e->nproducts,
                                 &e->products_cap) != SM_OK)
            return 1;
        r->stat_products += e->nproducts;
        return 0;
    }
    const sm_trim_set *set = &((TrimSetObject *)r->trim_set)->set;
    record_info *mates[2] = {e, e2};
    e->trim_kept = 1;
    for (unsigned m = 0; m < (e2 ? 2u : 1u); m++) {
        record_info *x = mates[m];
        uint64_t length = record_length(x);
        sm_trim_decide_partial(set, m + 1, r->min_overlap, x->kept, x->partial, x->nkept, length, &x->cut);
        int cut = x->cut.adapter >= 0;
        if (x->cut.end - x->cut.start < r->minimum_length) e->trim_kept = 0;
        if (r->discard && r->has_adapters[m] && cut == (r->discard == SM_TRIM_DISCARD_TRIMMED)) e->trim_kept = 0;
        r->stat_reads++;
        r->stat_trimmed += cut;
        r->stat_bases_in += length;
    }
    if (e->trim_kept) {
        r->stat_kept++;
        for (unsigned m = 0; m < (e2 ? 2u : 1u); m++) r->stat_bases_kept += mates[m]->cut.end - mates[m]->cut.start;
    }
    return 0;
}

/* Whether something can be handed out (an iterator's next item). */
static int run_ready(RunObject *r) {
    if (r->mode == MODE_HITS) return r->next_hit < r->hits.n;
    if (r->mode == MODE_PAIRS) return r->count >= 2 && record_at(r, 0)->done && record_at(r, 1)->done;
    if (r->mode == MODE_AMPLICON || r->mode == MODE_TRIM) {
        /* the oldest done record (pair) that gives something (those that
           give nothing are dropped; one the memory ran out on stops the pass) */
        unsigned n = r->paired ? 2 : 1;
        while (r->count >= n && record_at(r, 0)->done && record_at(r, n - 1)->done) {
            record_info *e = record_at(r, 0);
            if (!e->decided && run_decide(r, e, n == 2 ? record_at(r, 1) : NULL) != 0) {
                r->failed = 1;
                return 1;
            }
            if (r->mode == MODE_AMPLICON ? e->nproducts > 0 : e->trim_kept) return 1;
            for (unsigned i = 0; i < n; i++) record_pop(r);
        }
        return 0;
    }
    if (r->mode == MODE_FILTER || r->mode == MODE_DEMUX) {
        /* the oldest decided record that is to be handed out */
        while (r->count > 0 && record_at(r, 0)->done) {
            record_info *e = record_at(r, 0), *e2 = NULL;
            if (r->paired) {
                /* a pair: both mates done; filter keeps or drops it whole (a hit in either mate) */
                if (r->count < 2 || !record_at(r, 1)->done) return 0;
                if (r->mode == MODE_DEMUX) return 1;
                e2 = record_at(r, 1);
            }
            uint64_t hits = e->hits + (e2 ? e2->hits : 0);
            if (r->mode == MODE_FILTER && !e->counted) {
                e->counted = 1;
                r->stat_reads_in++;
                r->stat_matched += hits > 0;
                r->stat_bases_in += record_length(e) + (e2 ? record_length(e2) : 0);
            }
            if (r->mode == MODE_DEMUX || (hits > 0) != r->invert) return 1;
            record_pop(r);
            if (e2) record_pop(r);
        }
    }
    return 0;
}

/* A file object's read, for the reader (called without the GIL). */
static long file_read(void *ctx, void *buf, size_t cap, sm_error *err) {
    file_source *f = ctx;
    RunObject *r = f->run;
    PyGILState_STATE gil = PyGILState_Ensure();
    long got = -1;
    PyObject *data = NULL;
    if (f->pending) {
        data = f->pending;
        f->pending = NULL;
    } else {
        /* a text stream gives str: at most 4 bytes a character in UTF-8 */
        data = PyObject_CallMethod(f->file, "read", "n", (Py_ssize_t)(cap / 4 ? cap / 4 : 1));
        f->pending_at = 0;
        if (data && PyUnicode_Check(data)) Py_SETREF(data, PyUnicode_AsUTF8String(data));
    }
    if (data) {
        Py_buffer view;
        if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) == 0) {
            size_t left = (size_t)(view.len - f->pending_at);
            size_t n = left < cap ? left : cap;
            memcpy(buf, (const char *)view.buf + f->pending_at, n);
            PyBuffer_Release(&view);
            got = (long)n;
            if (n < left) {
                f->pending = data;
                f->pending_at += (Py_ssize_t)n;
                data = NULL;
            }
        } else {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "%.200s: read() returned %.80s, not bytes or str",
                         PyUnicode_AsUTF8(f->shown), Py_TYPE(data)->tp_name);
        }
        Py_XDECREF(data);
    }
    if (got < 0) {
        /* keep the exception for the caller to raise as it is */
        PyErr_Fetch(&r->file_error, &r->file_error_value, &r->file_error_tb);
        if (err) {
            err->code = SM_ERR_IO;
            snprintf(err->message, sizeof err->message, "read error");
        }
    }
    PyGILState_Release(gil);
    return got;
}

static void file_source_clear(file_source *f) {
    Py_CLEAR(f->file);
    Py_CLEAR(f->pending);
    Py_CLEAR(f->shown);
}

static void run_close_target(RunObject *r) {
    if (r->reader) {
        sm_reader_close(r->reader);
        r->reader = NULL;
    }
    if (r->reader2) {
        sm_reader_close(r->reader2);
        r->reader2 = NULL;
    }
    Py_CLEAR(r->iter);
    Py_CLEAR(r->iter2);
    file_source_clear(&r->src[0]);
    file_source_clear(&r->src[1]);
    r->kind = -1;
    r->target_end = 0;
}

/* A record of the current target: its name and where it is kept. */
static record_info *run_add_record(RunObject *r, const char *name, size_t name_len) {
    record_info *e = record_push(r);
    if (!e) return NULL;
    e->target = r->target;
    if (name) {
        if (!(e->name = malloc(name_len + 1))) return NULL;
        memcpy(e->name, name, name_len);
        e->name[name_len] = '\0';
    }
    return e;
}

/* The runner's number of the record just added (the last in the ring). */
static void run_numbered(RunObject *r, uint64_t number) {
    r->record = number;
    if (r->count == 1) r->first_record = number;
}

static record_info *run_begin_record(RunObject *r, const char *name, size_t name_len) {
    record_info *e = run_add_record(r, name, name_len);
    if (e) run_numbered(r, sm_runner_begin_record(r->runner));
    return e;
}

/* Per-file counts: the counts of the target just read. */
static int run_file_counts(RunObject *r) {
    int status = sm_runner_flush(r->runner);
    if (status != SM_OK) return status;
    const uint64_t *now = r->own_counts ? r->counts : sm_runner_counts(r->runner);
    uint32_t n = r->db->info.pattern_count;
    PyGILState_STATE gil = PyGILState_Ensure();
    PyObject *list = PyList_New(n);
    for (uint32_t p = 0; list && p < n; p++) {
        PyObject *v = PyLong_FromUnsignedLongLong(now[p] - r->counts_before[p]);
        if (!v) Py_CLEAR(list);
        else PyList_SET_ITEM(list, p, v);
        r->counts_before[p] = now[p];
    }
    int ok = list && PyList_Append(r->file_counts, list) == 0;
    Py_XDECREF(list);
    if (!ok) PyErr_Clear();
    PyGILState_Release(gil);
    return ok ? SM_OK : SM_ERR_NOMEM;
}

/* Keeps the sequence of the record being fed, for the Record handed out. */
static int run_keep_sequence(void *ctx, uint64_t record, const uint8_t *data, size_t len) {
    RunObject *r = ctx;
    record_info *e = record_of(r, record);
    if (e->seq_len + len > e->seq_cap) {
        size_t cap = e->seq_cap ? e->seq_cap : 256;
        while (cap < e->seq_len + len) cap *= 2;
        char *p = realloc(e->seq, cap);
        if (!p) {
            r->feed_status = SM_ERR_NOMEM;
            return 1;
        }
        e->seq = p;
        e->seq_cap = cap;
    }
    memcpy(e->seq + e->seq_len, data, len);
    e->seq_len += len;
    return 0;
}

/* After each piece fed and each record's end: a pause when something is ready. */
static int run_pause_when_ready(void *ctx, size_t bytes, int record_ended) {
    (void)bytes;
    (void)record_ended;
    RunObject *r = ctx;
    if (!(r->stop_when_ready && run_ready(r))) return 0;
    r->feed_status = SM_OK;
    return 1;
}

/* A record of the file begins: kept in the ring with its name. */
static int run_reader_record(void *ctx, uint64_t number, const char *name) {
    RunObject *r = ctx;
    run_forget_records(r);
    if (!run_add_record(r, name ? name : "", name ? strlen(name) : 0)) {
        r->feed_status = SM_ERR_NOMEM;
        return 1;
    }
    run_numbered(r, number);
    return 0;
}

/* Filter and demux: the record's bytes as read, for the Record handed out. */
static int run_keep_raw(void *ctx, const sm_scan_record *record) {
    RunObject *r = ctx;
    const uint8_t *raw;
    size_t raw_len;
    if (sm_reader_record_raw(record->reader, &raw, &raw_len, NULL, &r->err) < 0) {
        r->feed_status = r->err.code ? r->err.code : SM_ERR_IO;
        return 1;
    }
    record_info *e = record_of(r, record->number);
    if (!(e->raw = malloc(raw_len ? raw_len : 1))) {
        r->feed_status = SM_ERR_NOMEM;
        return 1;
    }
    memcpy(e->raw, raw, raw_len);
    e->raw_len = raw_len;
    return 0;
}

/* Barcode pairs on single reads: after a record, the reverse complement
   (upper case, IUPAC; other bytes N) of its last end_window sequence bytes
   as a runner record of its own, as sm_reads scans a read's end: barcode2s
   are compiled reverse-complemented and anchored at its start. */
static int run_feed_window(RunObject *r, const char *seq, size_t len) {
    static const char from[] = "ACGTURYSWKMBDHVN", to[] = "TGCAAYRSWMKVHDBN";
    size_t w = r->end_window < len ? r->end_window : len;
    char *buf = malloc(w ? w : 1);
    if (!buf) return SM_ERR_NOMEM;
    for (size_t i = 0; i < w; i++) {
        char c = seq[len - 1 - i];
        if (c >= 'a' && c <= 'z') c = (char)(c - 'a' + 'A');
        const char *at = c ? strchr(from, c) : NULL;
        buf[i] = at ? to[at - from] : 'N';
    }
    record_info *e = run_add_record(r, NULL, 0);
    if (!e) {
        free(buf);
        return SM_ERR_NOMEM;
    }
    e->window = 1;
    run_numbered(r, sm_runner_begin_record(r->runner));
    int status = w ? sm_runner_feed(r->runner, buf, w) : SM_OK;
    int ended = sm_runner_end_record(r->runner);
    free(buf);
    return status != SM_OK ? status : ended;
}

/* A file's record ends: then its window (barcode pairs). */
static int run_end_with_window(void *ctx, sm_runner *runner, const sm_scan_record *record) {
    RunObject *r = ctx;
    int status = sm_runner_end_record(runner);
    if (status != SM_OK) return status;
    record_info *e = record_of(r, record->number);
    if (!e) return SM_ERR_INVALID;
    return run_feed_window(r, e->seq ? e->seq : "", e->seq_len);
}

/* Reads the current file target and feeds it (without the GIL) until
   something is ready (stop_when_ready: the scan pauses, to go on from
   there at the next call) or the target ends (target_end set); returns an
   sm_status. */
static int run_read_file(RunObject *r, int stop_when_ready) {
    int keep = r->mode == MODE_FILTER || r->mode == MODE_DEMUX || r->mode == MODE_TRIM || r->mode == MODE_PAIRS;
    sm_scan_reader_options feed;
    sm_scan_reader_options_init(&feed);
    feed.ctx = r;
    feed.on_record = run_reader_record;
    feed.on_sequence = keep || r->keep_sequence ? run_keep_sequence : NULL;
    feed.on_record_read = keep ? run_keep_raw : NULL;
    feed.end_record = r->mode == MODE_PAIRS ? run_end_with_window : NULL;
    feed.on_progress = run_pause_when_ready;
    feed.piece = FEED_PIECE;
    feed.resumable = 1;
    r->stop_when_ready = stop_when_ready;
    r->feed_status = SM_ERR_TERMINATED; /* a callback that stops sets its own */
    int status = sm_runner_scan_reader(r->runner, r->reader, &feed, &r->err);
    if (status == SM_OK) r->target_end = 1;
    else if (status == SM_ERR_TERMINATED) status = r->feed_status;
    return status;
}

static size_t pair_name_length(const char *name, size_t n);
static int pair_names_agree(RunObject *r, const char *name, size_t len, const char *name2, size_t len2);
static int pair_count_differs(RunObject *r, int more_in_first);

/* A paired target's next pair of mates, fed as two runner records (mate 1,
   then mate 2) with their bytes kept, until something is ready
   (stop_when_ready) or the files end (target_end); called without the GIL.
   Returns an sm_status. */
static int run_read_pairs(RunObject *r, int stop_when_ready) {
    sm_reader *readers[2] = {r->reader, r->reader2};
    sm_scan_reader_options feed;
    sm_scan_reader_options_init(&feed);
    feed.ctx = r;
    feed.on_sequence = r->mode == MODE_TRIM ? NULL : run_keep_sequence;
    feed.piece = FEED_PIECE;
    while (!(stop_when_ready && run_ready(r))) {
        const char *name[2] = {NULL, NULL};
        int got[2];
        for (unsigned m = 0; m < 2; m++) {
            got[m] = sm_reader_next_record(readers[m], &name[m], &r->err);
            if (got[m] < 0) return r->err.code ? r->err.code : SM_ERR_IO;
        }
        if (!got[0] && !got[1]) {
            r->target_end = 1;
            return SM_OK;
        }
        if (got[0] != got[1]) return pair_count_differs(r, got[0]);
        if (!pair_names_agree(r, name[0], strlen(name[0]), name[1], strlen(name[1]))) return SM_ERR_FORMAT;
        run_forget_records(r);
        for (unsigned m = 0; m < 2; m++) {
            record_info *e = run_add_record(r, name[m], strlen(name[m]));
            if (!e) return SM_ERR_NOMEM;
            e->mate = m + 1;
            uint64_t number = sm_runner_begin_record(r->runner), length = 0;
            run_numbered(r, number);
            int status = SM_OK;
            if (r->scan_mate && r->scan_mate != m + 1) {
                /* not scanned: read through (its sequence kept), an empty record in the runner */
                const uint8_t *data;
                size_t len;
                int got;
                while ((got = sm_reader_read(readers[m], &data, &len, &r->err)) > 0 && status == SM_OK) {
                    length += len;
                    if (run_keep_sequence(r, number, data, len) != 0) status = r->feed_status;
                }
                if (got < 0) return r->err.code ? r->err.code : SM_ERR_IO;
            } else {
                status = sm_runner_feed_reader(r->runner, readers[m], &feed, number, &length, &r->err);
                if (status == SM_ERR_TERMINATED) return r->feed_status;
            }
            if (status != SM_OK) return status;
            e->length = length;
            e->has_length = 1;
            const uint8_t *raw;
            size_t raw_len;
            if (sm_reader_record_raw(readers[m], &raw, &raw_len, NULL, &r->err) < 0)
                return r->err.code ? r->err.code : SM_ERR_IO;
            if (!(e->raw = malloc(raw_len ? raw_len : 1))) return SM_ERR_NOMEM;
            memcpy(e->raw, raw, raw_len);
            e->raw_len = raw_len;
            if ((status = sm_runner_end_record(r->runner)) != SM_OK) return status;
        }
        r->pairs_read++;
    }
    return SM_OK;
}

/* The name of a record item (str, bytes or None) as UTF-8; -1 with an
   exception for anything else. */
static int item_name(PyObject *name, const char **out, Py_ssize_t *len) {
    if (name == Py_None) {
        *out = NULL;
        *len = 0;
        return 0;
    }
    if (PyUnicode_Check(name)) {
        *out = PyUnicode_AsUTF8AndSize(name, len);
        return *out ? 0 : -1;
    }
    if (PyBytes_Check(name)) {
        *out = PyBytes_AS_STRING(name);
        *len = PyBytes_GET_SIZE(name);
        return 0;
    }
    PyErr_Format(PyExc_TypeError, "a record's name must be str, bytes or None, not %.80s", Py_TYPE(name)->tp_name);
    return -1;
}

/* Feeds the next item of the current records target (with the GIL,
   released around the runner). Returns 1 when one was fed, 0 at the end
   of the target, -1 with a Python exception, or -2 with an sm_status in
   *status. */
static int run_feed_one(RunObject *r, PyObject *item, unsigned mate, int *status) {
    PyObject *name = NULL, *seq_obj = NULL;
    int rc = -1;
    seq_bytes seq;
    memset(&seq, 0, sizeof seq);
    if (PyUnicode_Check(item) || PyBytes_Check(item) || !PySequence_Check(item) || PySequence_Size(item) < 2) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError,
                     "records must be (name, sequence) pairs (more items after them are kept), not %.80s",
                     Py_TYPE(item)->tp_name);
        goto out;
    }
    if (!(name = PySequence_GetItem(item, 0)) || !(seq_obj = PySequence_GetItem(item, 1))) goto out;
    const char *name_bytes;
    Py_ssize_t name_len;
    if (item_name(name, &name_bytes, &name_len) != 0) goto out;
    if (seq_bytes_get(seq_obj, &seq, "a record's sequence") != 0) goto out;
    record_info *e = run_begin_record(r, name_bytes, (size_t)name_len);
    if (!e) {
        PyErr_NoMemory();
        goto out;
    }
    e->mate = mate;
    if (mode_per_record(r->mode)) {
        Py_INCREF(item);
        e->item = item;
        e->length = (uint64_t)seq.len;
    }
    int st, scanned = !(mate && r->scan_mate && r->scan_mate != mate);
    Py_BEGIN_ALLOW_THREADS
    st = scanned ? sm_runner_feed(r->runner, seq.data, (size_t)seq.len) : SM_OK;
    if (st == SM_OK) st = sm_runner_end_record(r->runner);
    if (st == SM_OK && r->mode == MODE_PAIRS && !mate) st = run_feed_window(r, seq.data, (size_t)seq.len);
    Py_END_ALLOW_THREADS
    if (st != SM_OK) {
        *status = st;
        rc = -2;
    } else {
        rc = 1;
    }
out:
    seq_bytes_release(&seq);
    Py_XDECREF(name);
    Py_XDECREF(seq_obj);
    return rc;
}

/* "r7/1" and "r7/2" are one pair. */
static size_t pair_name_length(const char *name, size_t n) {
    if (n >= 2 && name[n - 2] == '/' && (name[n - 1] == '1' || name[n - 1] == '2')) n -= 2;
    return n;
}

/* Mate m's name in messages: its file's, or the argument's for records. */
static const char *mate_shown(RunObject *r, unsigned m) {
    const char *s = r->pair_shown[m] && PyUnicode_Check(r->pair_shown[m]) ? PyUnicode_AsUTF8(r->pair_shown[m]) : NULL;
    return s ? s : m ? "read2" : "target";
}

/* Whether two mates' names (NULL: none) name one pair; else the message. */
static int pair_names_agree(RunObject *r, const char *name, size_t len, const char *name2, size_t len2) {
    if (!name && !name2) return 1;
    size_t n1 = name ? pair_name_length(name, len) : 0, n2 = name2 ? pair_name_length(name2, len2) : 0;
    if (name && name2 && n1 == n2 && memcmp(name, name2, n1) == 0) return 1;
    snprintf(r->err.message, sizeof r->err.message, "reads out of step: record %llu is '%.*s' in %s but '%.*s' in %s",
             (unsigned long long)r->pairs_read + 1, (int)(len < 200 ? len : 200), name ? name : "",
             mate_shown(r, 0), (int)(len2 < 200 ? len2 : 200), name2 ? name2 : "", mate_shown(r, 1));
    return 0;
}

/* One mate has more records than the other: the message. */
static int pair_count_differs(RunObject *r, int more_in_first) {
    snprintf(r->err.message, sizeof r->err.message,
             "%s has more records than %s (%llu); paired files must hold the same reads in the same order",
             mate_shown(r, more_in_first ? 0 : 1), mate_shown(r, more_in_first ? 1 : 0),
             (unsigned long long)r->pairs_read);
    return SM_ERR_FORMAT;
}

/* The name of a record item, for the pair check (-1 with an exception);
   *held keeps it alive. */
static int item_pair_name(PyObject *item, const char **name, Py_ssize_t *len, PyObject **held) {
    *name = NULL;
    *len = 0;
    *held = NULL;
    if (PyUnicode_Check(item) || PyBytes_Check(item) || !PySequence_Check(item) || PySequence_Size(item) < 2) {
        PyErr_Clear();
        return 0; /* run_feed_one says what is wrong */
    }
    if (!(*held = PySequence_GetItem(item, 0))) return -1;
    return item_name(*held, name, len);
}

static int run_feed_item(RunObject *r, int *status) {
    PyObject *item = PyIter_Next(r->iter);
    if (!item && PyErr_Occurred()) return -1;
    PyObject *item2 = NULL;
    if (r->iter2) {
        item2 = PyIter_Next(r->iter2);
        if (!item2 && PyErr_Occurred()) {
            Py_XDECREF(item);
            return -1;
        }
        if (!item != !item2) {
            *status = pair_count_differs(r, item != NULL);
            Py_XDECREF(item);
            Py_XDECREF(item2);
            return -2;
        }
    }
    if (!item) return 0;
    run_forget_records(r);
    int rc;
    if (item2) {
        const char *n1, *n2;
        Py_ssize_t l1, l2;
        PyObject *h1 = NULL, *h2 = NULL;
        int named = item_pair_name(item, &n1, &l1, &h1) == 0 && item_pair_name(item2, &n2, &l2, &h2) == 0;
        int agree = named && pair_names_agree(r, n1, (size_t)l1, n2, (size_t)l2);
        Py_XDECREF(h1);
        Py_XDECREF(h2);
        if (!named) {
            rc = -1;
        } else if (!agree) {
            *status = SM_ERR_FORMAT;
            rc = -2;
        } else {
            rc = run_feed_one(r, item, 1, status);
            if (rc == 1) rc = run_feed_one(r, item2, 2, status);
            r->pairs_read++;
        }
    } else {
        rc = run_feed_one(r, item, 0, status);
    }
    Py_DECREF(item);
    Py_XDECREF(item2);
    return rc;
}

/* Opens a path or file object (kind) as reader, for mate m's source (with
   the GIL). Returns an sm_status, or -1 with a Python exception. */
static int run_open_reader(RunObject *r, long kind, PyObject *obj, PyObject *shown, unsigned m, sm_reader **reader) {
    int status;
    if (kind == TARGET_PATH) {
        const char *path = PyBytes_AS_STRING(obj);
        unsigned threads = r->threads;
        if (!threads) {
            long cores = sysconf(_SC_NPROCESSORS_ONLN);
            threads = cores > 0 ? (unsigned)cores : 1;
        }
        Py_BEGIN_ALLOW_THREADS
        status = sm_reader_open_threads(path, (sm_input_format)r->format, threads, reader, &r->err);
        Py_END_ALLOW_THREADS
    } else {
        file_source *f = &r->src[m];
        const char *name = PyUnicode_AsUTF8(shown);
        if (!name) return -1;
        f->run = r;
        Py_INCREF(obj);
        f->file = obj;
        Py_INCREF(shown);
        f->shown = shown;
        Py_BEGIN_ALLOW_THREADS
        status = sm_reader_open_fn(name, (sm_input_format)r->format, file_read, f, reader, &r->err);
        Py_END_ALLOW_THREADS
    }
    if (status == SM_OK && mode_per_record(r->mode) && r->mode != MODE_AMPLICON) sm_reader_keep_raw(*reader);
    return status;
}

/* Opens a paired target: ((kind, object, shown) of mate 1, of mate 2),
   both files (paths or file objects) or both records. */
static int run_open_pair(RunObject *r, PyObject *mates) {
    PyObject *one = PyTuple_GET_ITEM(mates, 0), *two = PyTuple_GET_ITEM(mates, 1);
    long kind[2] = {PyLong_AsLong(PyTuple_GET_ITEM(one, 0)), PyLong_AsLong(PyTuple_GET_ITEM(two, 0))};
    for (unsigned m = 0; m < 2; m++) {
        PyObject *shown = PyTuple_GET_ITEM(m ? two : one, 2);
        Py_INCREF(shown);
        Py_XSETREF(r->pair_shown[m], shown);
    }
    r->pairs_read = 0;
    if (kind[0] == TARGET_RECORDS) {
        r->kind = TARGET_RECORDS;
        r->iter = PyObject_GetIter(PyTuple_GET_ITEM(one, 1));
        r->iter2 = r->iter ? PyObject_GetIter(PyTuple_GET_ITEM(two, 1)) : NULL;
        return r->iter2 ? SM_OK : -1;
    }
    r->kind = TARGET_PAIR;
    int status = run_open_reader(r, kind[0], PyTuple_GET_ITEM(one, 1), r->pair_shown[0], 0, &r->reader);
    if (status == SM_OK)
        status = run_open_reader(r, kind[1], PyTuple_GET_ITEM(two, 1), r->pair_shown[1], 1, &r->reader2);
    if (status == SM_OK) {
        sm_input_format f1 = sm_reader_format(r->reader), f2 = sm_reader_format(r->reader2);
        if (f1 != SM_INPUT_AUTO && f2 != SM_INPUT_AUTO && f1 != f2) {
            snprintf(r->err.message, sizeof r->err.message, "%s: %s, but %s is %s; give mates of one format",
                     mate_shown(r, 1), f2 == SM_INPUT_FASTQ ? "FASTQ" : "FASTA", mate_shown(r, 0),
                     f1 == SM_INPUT_FASTQ ? "FASTQ" : "FASTA");
            status = SM_ERR_INVALID;
        }
    }
    return status;
}

/* Opens target r->next_target (with the GIL). Returns an sm_status, or
   -1 with a Python exception. */
static int run_open_target(RunObject *r) {
    PyObject *t = PyList_GET_ITEM(r->targets, r->next_target);
    long kind = PyLong_AsLong(PyTuple_GET_ITEM(t, 0));
    PyObject *obj = PyTuple_GET_ITEM(t, 1);
    r->target = (int32_t)r->next_target++;
    r->kind = (int)kind;
    if (kind == TARGET_PAIR) return run_open_pair(r, obj);
    if (kind == TARGET_RECORDS) {
        r->iter = PyObject_GetIter(obj);
        return r->iter ? SM_OK : -1;
    }
    return run_open_reader(r, kind, obj, PyList_GET_ITEM(r->shown, r->target), 0, &r->reader);
}

/* Raises the error that stopped the pass: a file object's own exception
   as it was, else the library's status. */
static void run_raise(RunObject *r, int status) {
    if (r->file_error) {
        PyErr_Restore(r->file_error, r->file_error_value, r->file_error_tb);
        r->file_error = r->file_error_value = r->file_error_tb = NULL;
    } else if (!PyErr_Occurred()) {
        raise_status(r->failed ? SM_ERR_NOMEM : status, r->err.message);
    }
}

/* Moves the pass on until something is ready (stop_when_ready) or to its
   end. Returns 0, or -1 with a Python exception (the pass is then over). */
static int run_advance(RunObject *r, int stop_when_ready) {
    while (!r->finished) {
        if (stop_when_ready && run_ready(r)) return 0;
        int status = SM_OK;
        if (r->stopped) {
            r->finished = 1;
            break;
        }
        if (r->kind < 0) {
            if (r->next_target == PyList_GET_SIZE(r->targets)) {
                Py_BEGIN_ALLOW_THREADS
                status = sm_runner_flush(r->runner);
                Py_END_ALLOW_THREADS
                if (status == SM_OK) r->finished = 1;
            } else {
                status = run_open_target(r);
                if (status < 0) return -1;
            }
        } else if (r->kind == TARGET_RECORDS) {
            int fed = run_feed_item(r, &status);
            if (fed == -1) return -1;
            if (fed == 0) status = -3; /* the target's end */
        } else {
            Py_BEGIN_ALLOW_THREADS
            status = r->kind == TARGET_PAIR ? run_read_pairs(r, stop_when_ready) : run_read_file(r, stop_when_ready);
            Py_END_ALLOW_THREADS
            if (status == SM_OK && r->target_end) status = -3;
        }
        if (status == -3) {
            /* the current target is read */
            run_close_target(r);
            status = SM_OK;
            if (r->per_file) {
                Py_BEGIN_ALLOW_THREADS
                status = run_file_counts(r);
                Py_END_ALLOW_THREADS
            }
        }
        if (status == SM_ERR_TERMINATED && !r->failed && !r->file_error) {
            /* max_hits reached: what was delivered stands, nothing more is read */
            r->stopped = 1;
            status = SM_OK;
        }
        if (r->failed && status == SM_OK) status = SM_ERR_NOMEM;
        if (status != SM_OK) {
            run_raise(r, status);
            r->finished = 1;
            r->done = 1;
            return -1;
        }
    }
    return 0;
}

static void run_dealloc(RunObject *self) {
    if (self->runner) sm_runner_free(self->runner);
    if (self->reader) sm_reader_close(self->reader);
    if (self->reader2) sm_reader_close(self->reader2);
    Py_XDECREF(self->iter);
    Py_XDECREF(self->iter2);
    file_source_clear(&self->src[0]);
    file_source_clear(&self->src[1]);
    Py_XDECREF(self->pair_shown[0]);
    Py_XDECREF(self->pair_shown[1]);
    Py_XDECREF(self->file_error);
    Py_XDECREF(self->file_error_value);
    Py_XDECREF(self->file_error_tb);
    while (self->count > 0) record_pop(self);
    free(self->records);
    hit_buffer_free(&self->hits);
    hit_columns_free(&self->columns);
    for (size_t i = 0; i < self->ncolumn_names; i++) free(self->column_names[i]);
    free(self->column_names);
    free(self->counts);
    free(self->counts_before);
    free(self->pattern_records);
    free(self->last_hit_record);
    free(self->sample_reads);
    Py_XDECREF(self->sample_names);
    free((void *)self->barcode_of);
    Py_XDECREF(self->trim_set);
    Py_XDECREF(self->barcode_pairs);
    Py_XDECREF(self->file_counts);
    Py_XDECREF(self->record_name);
    Py_XDECREF(self->final_stats);
    Py_XDECREF(self->targets);
    Py_XDECREF(self->shown);
    Py_XDECREF(self->db);
    PyObject_Free(self);
}


/* A str for a record's name (None for none). */
static PyObject *name_object(const char *name) {
    if (!name) Py_RETURN_NONE;
    return PyUnicode_DecodeUTF8(name, (Py_ssize_t)strlen(name), "replace");
}

static PyObject *run_next_hit(RunObject *r) {
    if (r->next_hit >= r->hits.n) {
        /* all handed out: start the buffer again, read on */
        r->hits.n = r->next_hit = 0;
        r->hits.text_len = 0;
        run_forget_records(r);
        if (run_advance(r, 1) != 0) return NULL;
        if (r->next_hit >= r->hits.n) {
            r->done = 1;
            return NULL; /* StopIteration */
        }
    }
    sm_hit *h = &r->hits.hits[r->next_hit++];
    record_info *e = record_of(r, h->record);
    if (!r->record_name || h->record != r->record_name_of) {
        PyObject *s = name_object(e ? e->name : NULL);
        if (!s) return NULL;
        Py_XSETREF(r->record_name, s);
        r->record_name_of = h->record;
    }
    PyObject *file = e ? PyList_GET_ITEM(r->shown, e->target) : Py_None;
    return make_hit(r->db, h, r->hits.text + (uintptr_t)h->text, r->record_name, file, r->cigar);
}

/* Amplicon: (record name, file, item or None, sequence or None, [(start,
   end, pair, strand, forward errors, reverse errors), ...]) of a record
   with products; the sequence (as Latin-1) of a file's record when
   sequences are asked for. */
static PyObject *amplicon_record(RunObject *r, record_info *e) {
    PyObject *products = PyList_New((Py_ssize_t)e->nproducts);
    for (size_t i = 0; products && i < e->nproducts; i++) {
        const sm_amplicon *a = &e->products[i];
        PyObject *t = Py_BuildValue("(KKIOII)", (unsigned long long)a->start, (unsigned long long)a->end, a->pair,
                                    a->strand == '-' ? minus_strand : plus_strand, a->forward_errors,
                                    a->reverse_errors);
        if (!t) Py_CLEAR(products);
        else PyList_SET_ITEM(products, (Py_ssize_t)i, t);
    }
    if (!products) return NULL;
    PyObject *seq = Py_None;
    if (r->keep_sequence && !e->item) seq = PyUnicode_DecodeLatin1(e->seq ? e->seq : "", (Py_ssize_t)e->seq_len, NULL);
    else Py_INCREF(seq);
    if (!seq) {
        Py_DECREF(products);
        return NULL;
    }
    return Py_BuildValue("(NOONN)", name_object(e->name), e->target >= 0 && !e->item ? PyList_GET_ITEM(r->shown, e->target)
                                                                                      : Py_None,
                         e->item ? e->item : Py_None, seq, products);
}

/* Trim: (name, file, item or None, the record as trim writes it (a file's
   record) or None, start, end, adapter index or -1, errors, length) of a
   kept read. */
static PyObject *trim_mate(record_info *e, PyObject *file) {
    uint64_t length = record_length(e);
    PyObject *raw = Py_None;
    if (!e->item) {
        uint8_t *out = NULL;
        size_t out_len = 0, cap = 0;
        int rc = sm_trim_record((const uint8_t *)(e->raw ? e->raw : ""), e->raw_len, e->cut.start,
                                length - e->cut.end, &out, &out_len, &cap);
        if (rc != SM_OK) {
            free(out);
            return raise_status(rc, rc == SM_ERR_FORMAT ? "a record trim cannot rewrite" : NULL);
        }
        raw = PyBytes_FromStringAndSize((const char *)out, (Py_ssize_t)out_len);
        free(out);
        if (!raw) return NULL;
    } else {
        Py_INCREF(raw);
    }
    return Py_BuildValue("(NOONKKLIK)", name_object(e->name), !e->item ? file : Py_None,
                         e->item ? e->item : Py_None, raw, (unsigned long long)e->cut.start,
                         (unsigned long long)e->cut.end, (long long)e->cut.adapter, e->cut.errors,
                         (unsigned long long)length);
}

static PyObject *trim_record(RunObject *r) {
    if (!r->paired) return trim_mate(record_at(r, 0), PyList_GET_ITEM(r->shown, record_at(r, 0)->target));
    PyObject *one = trim_mate(record_at(r, 0), r->pair_shown[0]);
    PyObject *two = one ? trim_mate(record_at(r, 1), r->pair_shown[1]) : NULL;
    if (!two) {
        Py_XDECREF(one);
        return NULL;
    }
    return Py_BuildValue("(NN)", one, two);
}

/* A record's bytes for the barcode functions: a file's as read, an item's
   sequence as a FASTA record (*made: the bytes to free). */
static int record_bytes(record_info *e, const uint8_t **raw, size_t *len, uint8_t **made) {
    *made = NULL;
    if (!e->item) {
        *raw = (const uint8_t *)(e->raw ? e->raw : "");
        *len = e->raw_len;
        return 0;
    }
    PyObject *seq_obj = PySequence_GetItem(e->item, 1);
    seq_bytes seq;
    int rc = seq_obj ? seq_bytes_get(seq_obj, &seq, "a record's sequence") : -1;
    Py_XDECREF(seq_obj);
    if (rc != 0) return -1;
    uint8_t *b = malloc((size_t)seq.len + 4);
    if (!b) {
        seq_bytes_release(&seq);
        PyErr_NoMemory();
        return -1;
    }
    memcpy(b, ">\n", 2);
    memcpy(b + 2, seq.data, (size_t)seq.len);
    b[seq.len + 2] = '\n';
    *raw = *made = b;
    *len = (size_t)seq.len + 3;
    seq_bytes_release(&seq);
    return 0;
}

/* A record as handed out: a file's as Record(name, sequence, raw), an item
   as given; without head and tail sequence symbols and with tag added to
   the header (demux --trim, --barcode-tag): a file's raw rewritten as the
   command writes it (sm_record_rewrite), an item as a tuple of its items
   with the sequence and quality cut and the tag after the name. *bases:
   the symbols it keeps. */
static PyObject *record_object(record_info *e, uint64_t head, uint64_t tail, const char *tag, uint64_t *bases) {
    uint64_t length = record_length(e);
    if (head + tail > length) head = length, tail = 0;
    *bases = length - head - tail;
    if (e->item && !head && !tail && !tag) {
        Py_INCREF(e->item);
        return e->item;
    }
    if (e->item) {
        Py_ssize_t n = PySequence_Size(e->item);
        PyObject *t = n < 0 ? NULL : PyTuple_New(n);
        for (Py_ssize_t i = 0; t && i < n; i++) {
            PyObject *v = PySequence_GetItem(e->item, i);
            if (v && i == 0 && tag && v != Py_None) {
                PyObject *w = PyUnicode_Check(v)  ? PyUnicode_FromFormat("%U %s", v, tag)
                              : PyBytes_Check(v) ? PyBytes_FromFormat("%s %s", PyBytes_AS_STRING(v), tag)
                                                 : NULL;
                if (!w && !PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "a record's name must be str or bytes");
                Py_SETREF(v, w);
            } else if (v && (i == 1 || i == 2) && v != Py_None && (head || tail)) {
                Py_SETREF(v, PySequence_GetSlice(v, (Py_ssize_t)head, (Py_ssize_t)(length - tail)));
            }
            if (!v) Py_CLEAR(t);
            else PyTuple_SET_ITEM(t, i, v);
        }
        return t;
    }
    const char *raw = e->raw ? e->raw : "";
    size_t raw_len = e->raw_len;
    uint8_t *out = NULL;
    size_t out_len = 0, cap = 0;
    if (head || tail || tag) {
        int rc = sm_record_rewrite((const uint8_t *)raw, raw_len, tag, head, tail, &out, &out_len, &cap);
        if (rc != SM_OK) {
            free(out);
            return raise_status(rc, rc == SM_ERR_FORMAT ? "a record demux cannot rewrite" : NULL);
        }
        raw = (const char *)out;
        raw_len = out_len;
    }
    PyObject *rec = new_tuple_of(RecordType, RECORD_FIELDS);
    if (rec) {
        const char *seq = e->seq ? e->seq : "";
        size_t seq_len = e->seq_len > head + tail ? e->seq_len - head - tail : 0;
        PyTuple_SET_ITEM(rec, 0, name_object(e->name));
        PyTuple_SET_ITEM(rec, 1, PyUnicode_DecodeLatin1(seq + (seq_len ? head : 0), (Py_ssize_t)seq_len, NULL));
        PyTuple_SET_ITEM(rec, 2, PyBytes_FromStringAndSize(raw, (Py_ssize_t)raw_len));
        for (int i = 0; i < RECORD_FIELDS; i++)
            if (!PyTuple_GET_ITEM(rec, i)) {
                Py_CLEAR(rec);
                break;
            }
    }
    free(out);
    return rec;
}

/* Demux of a record (pair: n 2) whose barcode(s) are m's (assigned): what
   --trim cuts from each mate (head, tail) and --barcode-tag's tag, as
   seqmatch demux works them out. */
static int demux_cuts(RunObject *r, record_info **mates, unsigned n, const sm_barcode_pair_match *m, uint64_t *head,
                      uint64_t *tail, char *tag) {
    int pairs = r->barcode_pairs != NULL, end = r->anchor_end;
    unsigned mate_of[2] = {n == 2 && !pairs ? r->scan_mate - 1 : 0, n == 2 ? 1 : 0};
    const uint8_t *raw[2] = {NULL, NULL};
    size_t len[2] = {0, 0}, blen[2] = {0, 0};
    uint8_t *made[2] = {NULL, NULL};
    int rc = 0;
    for (unsigned i = 0; i < n && rc == 0; i++) rc = record_bytes(mates[i], &raw[i], &len[i], &made[i]);
    for (int i = 0; rc == 0 && i <= pairs; i++)
        blen[i] = sm_barcode_span(r->db->db, m->pattern[i], pairs ? n == 1 && i : -1, raw[mate_of[i]], len[mate_of[i]],
                                  n == 1 ? i || end : end);
    tag[0] = '\0';
    if (rc == 0 && r->barcode_tag) {
        strcpy(tag, "BC:Z:");
        for (int i = 0; i <= pairs; i++) { /* w: its window; reversed: as on the construct */
            int w = m->reversed ? 1 - i : i, from = (n == 1 ? w || end : end) | 2 * m->reversed;
            size_t at = strlen(tag), want = blen[w] < 250 ? blen[w] : 250;
            if (i) tag[at++] = '-';
            sm_record_seq_end(raw[mate_of[w]], len[mate_of[w]], from, want, tag + at);
        }
    }
    for (unsigned k = 0; k < n; k++) {
        head[k] = tail[k] = 0;
        for (int i = 0; r->trim_barcode && i <= pairs; i++)
            if (mate_of[i] == k) *(n == 1 ? (i || end ? &tail[k] : &head[k]) : (end ? &tail[k] : &head[k])) += blen[i];
    }
    free(made[0]);
    free(made[1]);
    return rc;
}

/* Demux and barcode pairs: (barcode or sample or None, the record or a
   pair's (record, record), why) of the oldest record, counted. */
static PyObject *demux_record(RunObject *r) {
    record_info *e = record_at(r, 0);
    record_info *mates[2] = {e, r->paired ? record_at(r, 1) : NULL};
    unsigned n = r->paired ? 2 : 1;
    sm_barcode_pair_match m;
    memset(&m, 0, sizeof m);
    size_t to = r->nsamples; /* unassigned */
    if (r->mode == MODE_PAIRS) {
        const sm_barcode_pairs *pairs = ((BarcodePairsObject *)r->barcode_pairs)->pairs;
        sm_read_record rr;
        memset(&rr, 0, sizeof rr);
        memcpy(rr.user, e->user, sizeof rr.user);
        sm_barcode_pairs_assign(pairs, &rr, &m);
        r->stat_assigned += m.why == SM_PAIR_ASSIGNED;
        r->stat_no_hit += m.why == SM_PAIR_NO_HIT;
        r->stat_ambiguous += m.why == SM_PAIR_AMBIGUOUS;
        r->stat_unlisted += m.why == SM_PAIR_UNLISTED;
        if (m.why == SM_PAIR_ASSIGNED) to = m.sample;
    } else {
        const record_info *b = n == 2 ? mates[r->scan_mate - 1] : e; /* the record (mate) with the barcode */
        m.pattern[0] = b->best_pattern;
        m.why = b->hits == 0 ? SM_PAIR_NO_HIT : b->tie ? SM_PAIR_AMBIGUOUS : SM_PAIR_ASSIGNED;
        r->stat_no_hit += m.why == SM_PAIR_NO_HIT;
        r->stat_ambiguous += m.why == SM_PAIR_AMBIGUOUS;
        if (m.why == SM_PAIR_ASSIGNED) to = b->choice;
    }
    uint64_t head[2] = {0, 0}, tail[2] = {0, 0};
    char tag[600] = "";
    int assigned = m.why == SM_PAIR_ASSIGNED;
    if (assigned && (r->trim_barcode || r->barcode_tag) && demux_cuts(r, mates, n, &m, head, tail, tag) != 0)
        return NULL;
    r->stat_records++;
    r->stat_reads_in++;
    if (to < r->nsamples + 1 && r->sample_reads) r->sample_reads[to]++;
    PyObject *out[2] = {NULL, NULL};
    uint64_t bases = 0;
    for (unsigned k = 0; k < n; k++) {
        uint64_t kept = 0;
        r->stat_bases_in += record_length(mates[k]);
        out[k] = record_object(mates[k], head[k], tail[k], assigned && r->barcode_tag ? tag : NULL, &kept);
        bases += kept;
        if (!out[k]) {
            Py_XDECREF(out[0]);
            return NULL;
        }
    }
    if (assigned) {
        r->stat_reads_out++;
        r->stat_bases_out += bases;
    }
    PyObject *record = n == 2 ? Py_BuildValue("(NN)", out[0], out[1]) : out[0];
    if (!record) return NULL;
    PyObject *name = assigned ? PyList_GET_ITEM(r->sample_names, (Py_ssize_t)to) : Py_None;
    if (r->mode == MODE_DEMUX) return Py_BuildValue("(ON)", name, record);
    return Py_BuildValue("(ONi)", name, record, m.why);
}

/* The next Record (files) or item (records) of filter, or (barcode or
   None, that, why) of demux, or what amplicon and trim make of a record. */
static PyObject *run_next_record(RunObject *r) {
    if (run_advance(r, 1) != 0) return NULL;
    if (!run_ready(r)) {
        r->done = 1;
        return NULL;
    }
    if (r->failed) {
        r->done = 1;
        return PyErr_NoMemory();
    }
    record_info *e = record_at(r, 0);
    PyObject *out;
    if (r->mode == MODE_AMPLICON || r->mode == MODE_TRIM) {
        out = r->mode == MODE_AMPLICON ? amplicon_record(r, e) : trim_record(r);
        if (out) {
            record_pop(r);
            if (r->paired) record_pop(r);
        } else {
            r->done = 1;
        }
        return out;
    }
    if (r->mode == MODE_FILTER) {
        uint64_t bases = 0;
        out = record_object(e, 0, 0, NULL, &bases);
        if (out && r->paired) {
            /* (mate 1, mate 2) */
            uint64_t bases2 = 0;
            PyObject *mate2 = record_object(record_at(r, 1), 0, 0, NULL, &bases2);
            PyObject *pair = mate2 ? PyTuple_Pack(2, out, mate2) : NULL;
            bases += bases2;
            Py_DECREF(out);
            Py_XDECREF(mate2);
            out = pair;
        }
        if (!out) return NULL;
        r->stat_reads_out++;
        r->stat_bases_out += bases;
        if (r->paired) record_pop(r);
    } else {
        out = demux_record(r);
        if (!out) {
            r->done = 1;
            return NULL;
        }
        /* a pair's mate 2, or a single read's end window (barcode pairs) */
        if (r->paired || r->mode == MODE_PAIRS) record_pop(r);
    }
    record_pop(r);
    return out;
}

static PyObject *run_next(RunObject *r) {
    if (r->done) return NULL;
    if (r->mode == MODE_COUNT || r->mode == MODE_ARRAYS) {
        PyErr_SetString(PyExc_TypeError, "this pass is not an iterator");
        return NULL;
    }
    if (r->busy) {
        PyErr_SetString(PyExc_RuntimeError, "this iterator is being read by another thread");
        return NULL;
    }
    r->busy = 1;
    PyObject *out = r->mode == MODE_HITS ? run_next_hit(r) : run_next_record(r);
    r->busy = 0;
    return out;
}

static PyObject *run_stats(RunObject *r, PyObject *unused);

/* close(): ends the pass now: its readers, file objects, record iterators
   and runner are let go; the iterator is over (done: run_advance is not
   reached again); stats keep the counts as they were. Closing again does
   nothing. */
static PyObject *run_close(RunObject *r, PyObject *unused) {
    (void)unused;
    if (r->closed) Py_RETURN_NONE;
    if (r->busy) {
        PyErr_SetString(PyExc_RuntimeError, "this pass is being read by another thread");
        return NULL;
    }
    if (!(r->final_stats = run_stats(r, NULL))) return NULL;
    r->busy = 1;
    r->closed = r->done = r->finished = r->stopped = 1;
    run_close_target(r);
    Py_CLEAR(r->targets); /* the paths, file objects and record iterables given: nothing more is read */
    if (r->runner) {
        sm_runner *runner = r->runner;
        r->runner = NULL;
        Py_BEGIN_ALLOW_THREADS
        sm_runner_free(runner);
        Py_END_ALLOW_THREADS
    }
    while (r->count > 0) record_pop(r);
    hit_buffer_free(&r->hits);
    r->next_hit = 0;
    r->busy = 0;
    Py_RETURN_NONE;
}

static PyObject *run_enter(RunObject *r, PyObject *unused) {
    (void)unused;
    Py_INCREF(r);
    return (PyObject *)r;
}

static PyObject *run_exit(RunObject *r, PyObject *args) {
    (void)args;
    PyObject *done = run_close(r, NULL);
    if (!done) return NULL;
    Py_DECREF(done);
    Py_RETURN_FALSE;
}

/* _finish(): runs a count or arrays pass to its end. count: a list of
   counts per pattern (per_file: a list of such lists, one per target);
   arrays: (columns, record names). */
static PyObject *run_finish(RunObject *r, PyObject *unused) {
    (void)unused;
    if (r->mode != MODE_COUNT && r->mode != MODE_ARRAYS) {
        PyErr_SetString(PyExc_TypeError, "only count and arrays passes finish");
        return NULL;
    }
    if (r->busy || r->done) {
        PyErr_SetString(PyExc_RuntimeError, "this pass is running or over");
        return NULL;
    }
    r->busy = 1;
    int rc = run_advance(r, 0);
    r->busy = 0;
    r->done = 1;
    if (rc != 0) return NULL;
    if (r->mode == MODE_COUNT) {
        if (r->per_file) {
            Py_INCREF(r->file_counts);
            return r->file_counts;
        }
        const uint64_t *counts = r->own_counts ? r->counts : sm_runner_counts(r->runner);
        PyObject *list = PyList_New(r->db->info.pattern_count);
        for (uint32_t p = 0; list && p < r->db->info.pattern_count; p++) {
            PyObject *v = PyLong_FromUnsignedLongLong(counts[p]);
            if (!v) Py_CLEAR(list);
            else PyList_SET_ITEM(list, p, v);
        }
        return list;
    }
    PyObject *names = PyList_New((Py_ssize_t)r->ncolumn_names);
    for (size_t i = 0; names && i < r->ncolumn_names; i++) {
        PyObject *s = name_object(r->column_names[i]);
        if (!s) Py_CLEAR(names);
        else PyList_SET_ITEM(names, (Py_ssize_t)i, s);
    }
    PyObject *columns = names ? hit_columns_dict(&r->columns) : NULL;
    PyObject *out = columns ? PyTuple_Pack(2, columns, names) : NULL;
    Py_XDECREF(columns);
    Py_XDECREF(names);
    return out;
}

/* {"name": name, key: value} items of the run report's lists, patterns of
   one name added up (as sm_stats_item does), in the order first named. */
static PyObject *report_list(PyObject *names, const uint64_t *values, size_t n, const char *key) {
    PyObject *list = PyList_New(0), *seen = PyDict_New();
    for (size_t i = 0; list && seen && i < n; i++) {
        PyObject *name = PyList_GET_ITEM(names, (Py_ssize_t)i);
        PyObject *item = PyDict_GetItemWithError(seen, name);
        if (!item && PyErr_Occurred()) {
            Py_CLEAR(list);
            break;
        }
        if (item) {
            PyObject *was = PyDict_GetItemString(item, key);
            unsigned long long now = was ? PyLong_AsUnsignedLongLong(was) : 0;
            PyObject *v = PyLong_FromUnsignedLongLong(now + values[i]);
            if (!v || PyDict_SetItemString(item, key, v) != 0) Py_CLEAR(list);
            Py_XDECREF(v);
            continue;
        }
        item = Py_BuildValue("{s:O,s:K}", "name", name, key, (unsigned long long)values[i]);
        if (!item || PyDict_SetItem(seen, name, item) != 0 || PyList_Append(list, item) != 0) Py_CLEAR(list);
        Py_XDECREF(item);
    }
    Py_XDECREF(seen);
    return list;
}

/* _stats(): the counts of the pass so far. Search (hits, count, arrays),
   filter, demux and barcode pairs: the groups of their command's run
   report (seqmatch-stats, docs/stats-json.md) with the same keys and
   numbers; amplicon and trim: named as sm_amplicon_stats and
   sm_trim_stats. */
/* A copy of the counts kept at close(): dicts and lists copied through, so
   that what a caller changes is not kept. */
static PyObject *stats_copy(PyObject *v) {
    if (PyDict_Check(v)) {
        PyObject *out = PyDict_New(), *key, *value;
        Py_ssize_t at = 0;
        while (out && PyDict_Next(v, &at, &key, &value)) {
            PyObject *c = stats_copy(value);
            if (!c || PyDict_SetItem(out, key, c) != 0) Py_CLEAR(out);
            Py_XDECREF(c);
        }
        return out;
    }
    if (PyList_Check(v)) {
        Py_ssize_t n = PyList_GET_SIZE(v);
        PyObject *out = PyList_New(n);
        for (Py_ssize_t i = 0; out && i < n; i++) {
            PyObject *c = stats_copy(PyList_GET_ITEM(v, i));
            if (!c) Py_CLEAR(out);
            else PyList_SET_ITEM(out, i, c);
        }
        return out;
    }
    Py_INCREF(v);
    return v;
}

static PyObject *run_stats(RunObject *r, PyObject *unused) {
    (void)unused;
    if (r->final_stats) return stats_copy(r->final_stats);
    if (r->mode == MODE_AMPLICON)
        return Py_BuildValue("{s:K,s:K}", "records", (unsigned long long)r->stat_records, "products",
                             (unsigned long long)r->stat_products);
    if (r->mode == MODE_TRIM)
        return Py_BuildValue("{s:K,s:K,s:K,s:K,s:K,s:K}", "records", (unsigned long long)r->stat_records, "reads",
                             (unsigned long long)r->stat_reads, "trimmed", (unsigned long long)r->stat_trimmed,
                             "kept", (unsigned long long)r->stat_kept, "bases_in",
                             (unsigned long long)r->stat_bases_in, "bases_kept",
                             (unsigned long long)r->stat_bases_kept);
    if (r->mode == MODE_HITS || r->mode == MODE_COUNT || r->mode == MODE_ARRAYS) {
        /* the runner's numbers, as sm_stats_search reports them (bases: what the command's progress counts) */
        static const uint64_t none = 0;
        const uint64_t *counts = r->runner ? sm_runner_counts(r->runner) : NULL;
        uint32_t n = counts ? r->db->info.pattern_count : 0;
        PyObject *patterns = report_list(r->db->names, counts ? counts : &none, n, "hits");
        if (!patterns) return NULL;
        return Py_BuildValue("{s:{s:K},s:{s:K},s:{s:K},s:N}", "records", "input",
                             (unsigned long long)sm_runner_records(r->runner), "bases", "input",
                             (unsigned long long)sm_runner_bases(r->runner), "hits", "total",
                             (unsigned long long)sm_runner_total(r->runner), "patterns", patterns);
    }
    PyObject *patterns = report_list(r->db->names, r->pattern_records, r->db->info.pattern_count, "records");
    if (!patterns) return NULL;
    if (r->mode == MODE_FILTER)
        return Py_BuildValue("{s:{s:K,s:K,s:K},s:{s:K,s:K},s:N}", "reads", "input",
                             (unsigned long long)r->stat_reads_in, "output", (unsigned long long)r->stat_reads_out,
                             "matched", (unsigned long long)r->stat_matched, "bases", "input",
                             (unsigned long long)r->stat_bases_in, "output", (unsigned long long)r->stat_bases_out,
                             "patterns", patterns);
    PyObject *samples = PyList_New((Py_ssize_t)r->nsamples + 1);
    for (size_t i = 0; samples && i <= r->nsamples; i++) {
        PyObject *name = i < r->nsamples ? PyList_GET_ITEM(r->sample_names, (Py_ssize_t)i) : NULL;
        if (name) Py_INCREF(name);
        else name = PyUnicode_FromString("unassigned");
        PyObject *item = name ? Py_BuildValue("{s:N,s:K}", "name", name, "reads",
                                              (unsigned long long)r->sample_reads[i])
                              : NULL;
        if (!item) Py_CLEAR(samples);
        else PyList_SET_ITEM(samples, (Py_ssize_t)i, item);
    }
    PyObject *unassigned = samples ? Py_BuildValue("{s:K,s:K}", "no_hit", (unsigned long long)r->stat_no_hit,
                                                   "ambiguous", (unsigned long long)r->stat_ambiguous)
                                   : NULL;
    if (unassigned && r->mode == MODE_PAIRS) {
        PyObject *v = PyLong_FromUnsignedLongLong(r->stat_unlisted);
        if (!v || PyDict_SetItemString(unassigned, "unlisted", v) != 0) Py_CLEAR(unassigned);
        Py_XDECREF(v);
    }
    if (!unassigned) {
        Py_DECREF(patterns);
        Py_XDECREF(samples);
        return NULL;
    }
    return Py_BuildValue("{s:{s:K,s:K},s:{s:K,s:K},s:N,s:N,s:N}", "reads", "input",
                         (unsigned long long)r->stat_reads_in, "output", (unsigned long long)r->stat_reads_out,
                         "bases", "input", (unsigned long long)r->stat_bases_in, "output",
                         (unsigned long long)r->stat_bases_out, "patterns", patterns, "samples", samples,
                         "unassigned", unassigned);
}

/* Demux: patterns of one name are one barcode; the barcodes numbered in
   the order first named (*names: their names, a new list). */
static const uint32_t *barcodes_of(DatabaseObject *db, PyObject **names) {
    uint32_t n = db->info.pattern_count;
    uint32_t *of = malloc((n ? n : 1) * sizeof *of);
    if (!of || !(*names = PyList_New(0))) {
        free(of);
        return NULL;
    }
    for (uint32_t i = 0; i < n; i++) {
        PyObject *name = PyList_GET_ITEM(db->names, i);
        of[i] = UINT32_MAX;
        for (uint32_t j = 0; j < i; j++)
            if (PyUnicode_Compare(name, PyList_GET_ITEM(db->names, j)) == 0) {
                of[i] = of[j];
                break;
            }
        if (of[i] == UINT32_MAX) {
            of[i] = (uint32_t)PyList_GET_SIZE(*names);
            if (PyList_Append(*names, name) != 0) {
                free(of);
                Py_CLEAR(*names);
                return NULL;
            }
        }
    }
    return of;
}

/* _run_pass(targets, mode, threads, format, circular, cigar, strand, anchor,
   max_hits, invert, per_file, (min_overlap, max_hits_per_pattern,
   max_hits_per_record, fewest_errors)[, extra]): a pass over targets, a
   list of (kind, object, shown), or for trim and barcode pairs one
   (TARGET_PAIR, (mate 1's triple, mate 2's), shown). strand "" / "+" /
   "-"; anchor 0 none, 1 start, 2 end; max_hits None or a count; the limits
   0 for none. */
static PyObject *database_run(DatabaseObject *self, PyObject *args) {
    PyObject *targets, *strand, *max_hits, *extra = Py_None;
    int mode, format, circular, cigar, anchor, invert, per_file, fewest;
    unsigned int threads, min_overlap, per_pattern, per_record;
    if (!PyArg_ParseTuple(args, "O!iIippUiOpp(IIIp)|O:_run_pass", &PyList_Type, &targets, &mode, &threads, &format,
                          &circular, &cigar, &strand, &anchor, &max_hits, &invert, &per_file, &min_overlap,
                          &per_pattern, &per_record, &fewest, &extra))
        return NULL;
    /* extra: amplicon (min_size, max_size, longest, pairs, sequence); trim
       (_TrimSet, minimum_length, discard) */
    unsigned long long min_size = 0, max_size = 0, minimum_length = 0;
    Py_ssize_t pairs = 0;
    int longest = 0, keep_sequence = 0, discard = 0;
    PyObject *trim_set = NULL;
    if (mode == MODE_AMPLICON &&
        !PyArg_ParseTuple(extra, "KKpnp:_run_pass amplicon", &min_size, &max_size, &longest, &pairs, &keep_sequence))
        return NULL;
    if (mode == MODE_TRIM &&
        !PyArg_ParseTuple(extra, "O!Ki:_run_pass trim", &TrimSetType, &trim_set, &minimum_length, &discard))
        return NULL;
    /* demux: (trim, barcode_tag); barcode pairs: (_BarcodePairs, end window, trim, barcode_tag) */
    PyObject *barcode_pairs = NULL;
    Py_ssize_t end_window = 0;
    int trim_barcode = 0, barcode_tag = 0;
    if (mode == MODE_PAIRS && !PyArg_ParseTuple(extra, "O!npp:_run_pass pairs", &BarcodePairsType, &barcode_pairs,
                                                &end_window, &trim_barcode, &barcode_tag))
        return NULL;
    unsigned int scan_mate = 1;
    if (mode == MODE_DEMUX && extra != Py_None &&
        !PyArg_ParseTuple(extra, "pp|I:_run_pass demux", &trim_barcode, &barcode_tag, &scan_mate))
        return NULL;
    if (scan_mate != 1 && scan_mate != 2) {
        PyErr_SetString(PyExc_ValueError, "_run: the barcode's mate is 1 or 2");
        return NULL;
    }
    if (mode == MODE_AMPLICON && (pairs <= 0 || (size_t)pairs * 2 != self->info.pattern_count)) {
        PyErr_SetString(PyExc_ValueError, "_run: the database does not hold the primer pairs' patterns");
        return NULL;
    }
    if (mode == MODE_TRIM && ((TrimSetObject *)trim_set)->set.patterns.count != self->info.pattern_count) {
        PyErr_SetString(PyExc_ValueError, "_run: the database does not hold the adapters' patterns");
        return NULL;
    }
    if (mode < MODE_HITS || mode > MODE_PAIRS || format < SM_INPUT_AUTO || format > SM_INPUT_LINES) {
        PyErr_SetString(PyExc_ValueError, "_run: bad mode or format");
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(targets);
    PyObject *shown = PyList_New(n);
    if (!shown) return NULL;
    int paired = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *t = PyList_GET_ITEM(targets, i);
        int ok = PyTuple_Check(t) && PyTuple_GET_SIZE(t) == 3 && PyLong_Check(PyTuple_GET_ITEM(t, 0));
        long kind = ok ? PyLong_AsLong(PyTuple_GET_ITEM(t, 0)) : -1;
        if (ok && kind == TARGET_PATH) ok = PyBytes_Check(PyTuple_GET_ITEM(t, 1));
        if (ok && kind == TARGET_PAIR) {
            /* ((kind, object, shown) of mate 1, of mate 2): two paths or file objects, or two iterables of records */
            PyObject *m = PyTuple_GET_ITEM(t, 1);
            ok = n == 1 && (mode == MODE_TRIM || mode == MODE_PAIRS || mode == MODE_DEMUX || mode == MODE_FILTER) &&
                 PyTuple_Check(m) &&
                 PyTuple_GET_SIZE(m) == 2;
            for (Py_ssize_t j = 0; ok && j < 2; j++) {
                PyObject *x = PyTuple_GET_ITEM(m, j);
                ok = PyTuple_Check(x) && PyTuple_GET_SIZE(x) == 3 && PyLong_Check(PyTuple_GET_ITEM(x, 0));
                long k = ok ? PyLong_AsLong(PyTuple_GET_ITEM(x, 0)) : -1;
                long first = ok ? PyLong_AsLong(PyTuple_GET_ITEM(PyTuple_GET_ITEM(m, 0), 0)) : -1;
                int known = k == TARGET_PATH ? PyBytes_Check(PyTuple_GET_ITEM(x, 1))
                                             : k == TARGET_FILE || k == TARGET_RECORDS;
                ok = ok && known;
                ok = ok && (k == TARGET_RECORDS) == (first == TARGET_RECORDS);
            }
            paired = 1;
        }
        if (!ok) {
            Py_DECREF(shown);
            PyErr_SetString(PyExc_TypeError, "_run: targets are (kind, object, shown) triples (one pair of mates, of "
                                             "one kind, for trim, filter and demux)");
            return NULL;
        }
        PyObject *s = PyTuple_GET_ITEM(t, 2);
        Py_INCREF(s);
        PyList_SET_ITEM(shown, i, s);
    }
    RunObject *r = PyObject_New(RunObject, &RunType);
    if (!r) {
        Py_DECREF(shown);
        return NULL;
    }
    memset((char *)r + sizeof(PyObject), 0, sizeof *r - sizeof(PyObject));
    Py_INCREF(self);
    r->db = self;
    Py_INCREF(targets);
    r->targets = targets;
    r->shown = shown;
    r->mode = mode;
    r->cigar = cigar;
    r->invert = invert;
    r->format = format;
    r->threads = threads;
    r->per_file = per_file && mode == MODE_COUNT;
    r->kind = -1;
    r->column_record = -1;
    r->filter.limit = UINT64_MAX;
    r->filter.max_hits = UINT64_MAX;
    r->rule.min_size = min_size;
    r->rule.max_size = max_size;
    r->rule.longest = longest;
    r->pairs = (size_t)pairs;
    r->keep_sequence = keep_sequence;
    r->min_overlap = min_overlap;
    r->minimum_length = minimum_length;
    r->discard = discard;
    Py_XINCREF(trim_set);
    r->trim_set = trim_set;
    Py_XINCREF(barcode_pairs);
    r->barcode_pairs = barcode_pairs;
    r->end_window = (size_t)end_window;
    r->paired = paired;
    r->scan_mate = paired && mode == MODE_DEMUX ? scan_mate : 0;
    r->trim_barcode = trim_barcode;
    r->barcode_tag = barcode_tag;
    r->anchor_end = anchor == SM_ANCHOR_END;
    if (PyUnicode_GET_LENGTH(strand) == 1) r->filter.strand = (char)PyUnicode_READ_CHAR(strand, 0);
    if (max_hits != Py_None) {
        unsigned long long m = PyLong_AsUnsignedLongLong(max_hits);
        if (m == (unsigned long long)-1 && PyErr_Occurred()) {
            Py_DECREF(r);
            return NULL;
        }
        r->filter.max_hits = m;
        if (m == 0) r->stopped = 1;
    }
    uint32_t patterns = self->info.pattern_count;
    /* the runner counts every hit of both strands; a strand or a limit is counted here */
    r->own_counts = mode == MODE_COUNT && (r->filter.strand || max_hits != Py_None);
    if ((r->own_counts && !(r->counts = calloc(patterns ? patterns : 1, sizeof *r->counts))) ||
        (r->per_file && (!(r->counts_before = calloc(patterns ? patterns : 1, sizeof *r->counts_before)) ||
                         !(r->file_counts = PyList_New(0)))) ||
        (mode == MODE_DEMUX && !(r->barcode_of = barcodes_of(self, &r->sample_names)))) {
        Py_DECREF(r);
        return PyErr_Occurred() ? NULL : PyErr_NoMemory();
    }
    if (mode == MODE_PAIRS) {
        const sm_barcode_pairs *bp = ((BarcodePairsObject *)barcode_pairs)->pairs;
        size_t samples = sm_barcode_pairs_samples(bp);
        r->sample_names = PyList_New((Py_ssize_t)samples);
        for (size_t i = 0; r->sample_names && i < samples; i++) {
            PyObject *name = name_object(sm_barcode_pairs_sample(bp, i));
            if (!name) Py_CLEAR(r->sample_names);
            else PyList_SET_ITEM(r->sample_names, (Py_ssize_t)i, name);
        }
        if (!r->sample_names) {
            Py_DECREF(r);
            return NULL;
        }
    }
    if (mode == MODE_FILTER || mode == MODE_DEMUX || mode == MODE_PAIRS) {
        r->nsamples = r->sample_names ? (size_t)PyList_GET_SIZE(r->sample_names) : 0;
        if (!(r->pattern_records = calloc(patterns ? patterns : 1, sizeof *r->pattern_records)) ||
            !(r->last_hit_record = calloc(patterns ? patterns : 1, sizeof *r->last_hit_record)) ||
            !(r->sample_reads = calloc(r->nsamples + 1, sizeof *r->sample_reads))) {
            Py_DECREF(r);
            return PyErr_NoMemory();
        }
    }
    if (mode == MODE_TRIM) {
        const sm_trim_set *set = &((TrimSetObject *)trim_set)->set;
        for (size_t i = 0; i < set->count; i++)
            for (unsigned m = 0; m < 2; m++) r->has_adapters[m] |= set->adapters[i].mate != 2 - m;
    }
    sm_runner_options o;
    sm_runner_options_init(&o);
    o.threads = threads;
    o.count_only = mode == MODE_COUNT && !r->own_counts;
    o.circular = circular;
    o.anchor = (sm_anchor)anchor;
    o.min_overlap = min_overlap;
    o.max_hits_per_pattern = per_pattern;
    o.max_hits_per_record = per_record;
    o.fewest_errors = fewest;
    o.on_hit = run_on_hit;
    o.on_record_done = run_on_record_done;
    o.ctx = r;
    uint8_t *sides = NULL;
    if (mode == MODE_TRIM) {
        /* as the trimmer: partial hits told apart, and only at the end each adapter can use */
        const sm_trim_set *set = &((TrimSetObject *)trim_set)->set;
        if (!(sides = calloc(patterns ? patterns : 1, 1))) {
            Py_DECREF(r);
            return PyErr_NoMemory();
        }
        for (size_t i = 0; i < set->count; i++) {
            const sm_trim_adapter *a = &set->adapters[i];
            if (!a->anchored) sides[a->pattern] |= (uint8_t)(a->kind == SM_TRIM_BACK ? SM_ENDS_END : SM_ENDS_START);
            if (a->kind == SM_TRIM_LINKED && !a->second_anchored) sides[a->second] |= SM_ENDS_END;
        }
        o.on_partial_hit = run_on_partial_hit;
        o.min_overlap_sides = sides;
    }
    if (mode == MODE_PAIRS) {
        /* barcode1 at the read's start, barcode2 at the start of its end's window */
        o.anchor = SM_ANCHOR_START;
        o.on_hit = NULL;
        o.on_record_summary = run_on_summary;
    }
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = sm_runner_create(self->db, &o, &r->runner, &r->err);
    Py_END_ALLOW_THREADS
    free(sides); /* copied by the runner */
    if (status != SM_OK) {
        raise_status(status, r->err.message);
        Py_DECREF(r);
        return NULL;
    }
    return (PyObject *)r;
}

/* ------------------------------------------------ compile, load, bytes */

static PyObject *seqmatch_compile(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *patterns;
    int alphabet, strands, match, report, flags, engine;
    unsigned int max_errors;
    const char *pam;
    int pam_side;
    unsigned int dna_bulges, rna_bulges;
    if (!PyArg_ParseTuple(args, "O!iiiIiiiziII:_compile", &PyList_Type, &patterns, &alphabet, &strands, &match,
                          &max_errors, &report, &flags, &engine, &pam, &pam_side, &dna_bulges, &rna_bulges))
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(patterns);
    sm_pattern *items = PyMem_Calloc(n ? (size_t)n : 1, sizeof *items);
    if (!items) return PyErr_NoMemory();
    /* (name or None, bytes): pointers into the list's objects, alive while it is */
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *pair = PyList_GET_ITEM(patterns, i);
        PyObject *name, *seq;
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2 ||
            !PyBytes_Check((seq = PyTuple_GET_ITEM(pair, 1))) ||
            ((name = PyTuple_GET_ITEM(pair, 0)) != Py_None && !PyBytes_Check(name))) {
            PyMem_Free(items);
            PyErr_SetString(PyExc_TypeError, "_compile takes a list of (bytes name or None, bytes sequence)");
            return NULL;
        }
        items[i].name = name == Py_None ? NULL : PyBytes_AS_STRING(name);
        items[i].seq = PyBytes_AS_STRING(seq);
        items[i].len = (size_t)PyBytes_GET_SIZE(seq);
    }
    sm_compile_options o;
    sm_compile_options_init(&o);
    o.alphabet = (sm_alphabet)alphabet;
    o.strands = (sm_strands)strands;
    o.match = (sm_match)match;
    o.max_errors = max_errors;
    o.report = (sm_report)report;
    o.flags = (unsigned)flags;
    o.engine = (sm_engine)engine;
    o.pam = pam;
    o.pam_side = (sm_pam_side)pam_side;
    o.dna_bulges = dna_bulges;
    o.rna_bulges = rna_bulges;
    sm_db *db = NULL;
    sm_error err;
    memset(&err, 0, sizeof err);
    int status;
    Py_BEGIN_ALLOW_THREADS
    status = sm_compile(items, (size_t)n, &o, &db, &err);
    Py_END_ALLOW_THREADS
    PyMem_Free(items);
    if (status != SM_OK) return raise_status(status, err.message);
    return (PyObject *)database_wrap(db);
}

/* Path argument: str or os.PathLike, as a filesystem-encoded bytes object. */
static int path_argument(PyObject *obj, PyObject **out) { return PyUnicode_FSConverter(obj, out); }

static PyObject *seqmatch_load(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *path = NULL;
    if (!PyArg_ParseTuple(args, "O&:load", path_argument, &path)) return NULL;
    sm_db *db = NULL;
    sm_error err;
    memset(&err, 0, sizeof err);
    int status;
    const char *p = PyBytes_AS_STRING(path);
    Py_BEGIN_ALLOW_THREADS
    status = sm_db_load(p, &db, &err);
    Py_END_ALLOW_THREADS
    Py_DECREF(path);
    if (status != SM_OK) return raise_status(status, err.message);
    return (PyObject *)database_wrap(db);
}

static PyObject *seqmatch_from_bytes(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *obj;
    if (!PyArg_ParseTuple(args, "O:from_bytes", &obj)) return NULL;
    seq_bytes data;
    if (seq_bytes_get(obj, &data, "data") != 0) return NULL;
    sm_db *db = NULL;
    sm_error err;
    memset(&err, 0, sizeof err);
    int status = sm_db_from_bytes(data.data, (size_t)data.len, &db, &err);
    seq_bytes_release(&data);
    if (status != SM_OK) return raise_status(status, err.message);
    return (PyObject *)database_wrap(db);
}

/* _read_patterns(path): the patterns of a file as the command reads -p
   files, a list of (name, sequence) str pairs. */
static PyObject *seqmatch_read_patterns(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *path = NULL;
    if (!PyArg_ParseTuple(args, "O&:read_patterns", path_argument, &path)) return NULL;
    sm_pattern_list list;
    memset(&list, 0, sizeof list);
    sm_error err;
    memset(&err, 0, sizeof err);
    int status;
    const char *p = PyBytes_AS_STRING(path);
    Py_BEGIN_ALLOW_THREADS
    status = sm_pattern_list_read(&list, p, &err);
    Py_END_ALLOW_THREADS
    Py_DECREF(path);
    PyObject *out = NULL;
    if (status != SM_OK) {
        raise_status(status, err.message);
    } else if ((out = PyList_New((Py_ssize_t)list.count))) {
        for (size_t i = 0; i < list.count; i++) {
            const sm_pattern *q = &list.items[i];
            PyObject *pair = Py_BuildValue("(NN)",
                                           q->name ? PyUnicode_DecodeUTF8(q->name, (Py_ssize_t)strlen(q->name), "replace")
                                                   : PyUnicode_DecodeLatin1(q->seq, (Py_ssize_t)q->len, NULL),
                                           PyUnicode_DecodeLatin1(q->seq, (Py_ssize_t)q->len, NULL));
            if (!pair) {
                Py_CLEAR(out);
                break;
            }
            PyList_SET_ITEM(out, (Py_ssize_t)i, pair);
        }
    }
    sm_pattern_list_free(&list);
    return out;
}

static PyObject *database_save(DatabaseObject *self, PyObject *args) {
    PyObject *path = NULL;
    if (!PyArg_ParseTuple(args, "O&:save", path_argument, &path)) return NULL;
    sm_error err;
    memset(&err, 0, sizeof err);
    int status;
    const char *p = PyBytes_AS_STRING(path);
    Py_BEGIN_ALLOW_THREADS
    status = sm_db_save(self->db, p, &err);
    Py_END_ALLOW_THREADS
    Py_DECREF(path);
    if (status != SM_OK) return raise_status(status, err.message);
    Py_RETURN_NONE;
}

static PyObject *database_to_bytes(DatabaseObject *self, PyObject *unused) {
    (void)unused;
    size_t size = 0;
    const void *bytes = sm_db_bytes(self->db, &size);
    return PyBytes_FromStringAndSize(bytes, (Py_ssize_t)size);
}

static PyObject *database_info(DatabaseObject *self, PyObject *unused) {
    (void)unused;
    const sm_db_info *i = &self->info;
    PyObject *engines = PyList_New(0);
    if (!engines) return NULL;
    for (uint32_t s = 0; s < i->section_count; s++) {
        uint32_t patterns = 0;
        uint64_t bytes = 0;
        const char *name = sm_db_section_name(self->db, s, &patterns, &bytes);
        PyObject *entry = Py_BuildValue("(sIK)", name ? name : "?", patterns, (unsigned long long)bytes);
        if (!entry || PyList_Append(engines, entry) != 0) {
            Py_XDECREF(entry);
            Py_DECREF(engines);
            return NULL;
        }
        Py_DECREF(entry);
    }
    return Py_BuildValue("{s:i,s:i,s:I,s:i,s:I,s:i,s:I,s:s,s:I,s:I,s:I,s:I,s:K,s:N}", "alphabet", (int)i->alphabet,
                         "strands", (int)i->strands, "flags", i->flags, "match", (int)i->match, "max_errors",
                         i->max_errors, "report", (int)i->report, "pam_length", i->pam_length, "pam_side",
                         i->pam_side == SM_PAM_5PRIME ? "5'" : "3'", "dna_bulges", i->dna_bulges, "rna_bulges",
                         i->rna_bulges, "min_length", i->min_length, "max_length", i->max_length, "size",
                         (unsigned long long)i->size, "engines", engines);
}

/* _site(index, start, end, strand, matched bytes): a guide site's alignment
   (sm_hit_site) as (bulge kind 0/1/2, bulge size, bulge place, mismatches,
   guide row, site row). */
static PyObject *database_site(DatabaseObject *self, PyObject *args) {
    unsigned int pattern;
    unsigned long long start, end;
    int strand;
    const char *text;
    Py_ssize_t text_len;
    if (!PyArg_ParseTuple(args, "IKKCy#:_site", &pattern, &start, &end, &strand, &text, &text_len)) return NULL;
    if (pattern >= self->info.pattern_count || end < start || (unsigned long long)text_len != end - start) {
        PyErr_SetString(PyExc_ValueError, "not a hit of this database (index, start, end and matched disagree)");
        return NULL;
    }
    sm_hit h;
    memset(&h, 0, sizeof h);
    h.pattern = pattern;
    h.start = start;
    h.end = end;
    h.strand = (char)strand;
    h.text = text;
    size_t cap = (size_t)self->info.max_length + SM_MAX_BULGE + 1;
    char *rows = malloc(2 * cap);
    if (!rows) return PyErr_NoMemory();
    sm_site site;
    int rc = SM_ERR_INVALID;
    /* the errors are the site's: tried from 0 up, as sm_hit_site checks them */
    for (uint32_t e = 0; e <= self->info.max_errors && rc == SM_ERR_INVALID; e++) {
        h.errors = e;
        rc = sm_hit_site(self->db, &h, &site, rows, rows + cap, cap);
    }
    PyObject *r = NULL;
    if (rc == SM_OK)
        r = Py_BuildValue("(iIIIss)", (int)site.bulge, site.bulge_size, site.bulge_at, site.mismatches, rows,
                          rows + cap);
    else
        PyErr_SetString(PyExc_ValueError, "not a guide site of this database (a PAM database with mismatches)");
    free(rows);
    return r;
}

static Py_ssize_t database_len(DatabaseObject *self) { return (Py_ssize_t)self->info.pattern_count; }

static PyObject *database_names(DatabaseObject *self, void *closure) {
    (void)closure;
    return PyList_GetSlice(self->names, 0, PyList_GET_SIZE(self->names));
}

static PyObject *database_sequences(DatabaseObject *self, void *closure) {
    (void)closure;
    PyObject *list = PyList_New(self->info.pattern_count);
    for (uint32_t i = 0; list && i < self->info.pattern_count; i++) {
        size_t len = 0;
        const char *seq = sm_db_pattern_seq(self->db, i, &len);
        PyObject *s = PyUnicode_DecodeLatin1(seq ? seq : "", (Py_ssize_t)len, NULL);
        if (!s) Py_CLEAR(list);
        else PyList_SET_ITEM(list, i, s);
    }
    return list;
}

static PyMethodDef database_methods[] = {
    {"scan", (PyCFunction)(void (*)(void))database_scan, METH_FASTCALL | METH_KEYWORDS, scan_doc},
    {"_scan", (PyCFunction)(void (*)(void))database_scan_checked, METH_FASTCALL, NULL},
    {"_run_pass", (PyCFunction)database_run, METH_VARARGS, NULL},
    {"_save", (PyCFunction)database_save, METH_VARARGS, NULL},
    {"_to_bytes", (PyCFunction)database_to_bytes, METH_NOARGS, NULL},
    {"_info", (PyCFunction)database_info, METH_NOARGS, NULL},
    {"_site", (PyCFunction)database_site, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyObject *database_alphabet(DatabaseObject *self, void *closure) {
    (void)closure;
    return PyLong_FromLong((long)self->info.alphabet);
}

static PyObject *database_strands(DatabaseObject *self, void *closure) {
    (void)closure;
    return PyLong_FromLong((long)self->info.strands);
}

static PyGetSetDef database_getset[] = {
    {"_alphabet", (getter)database_alphabet, NULL, NULL, NULL},
    {"_strands", (getter)database_strands, NULL, NULL, NULL},
    {"_names", (getter)database_names, NULL, NULL, NULL},
    {"_sequences", (getter)database_sequences, NULL, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PySequenceMethods database_as_sequence = {
    .sq_length = (lenfunc)database_len,
};

static PyTypeObject DatabaseType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "seqmatch._seqmatch._Database",
    .tp_basicsize = sizeof(DatabaseObject),
    .tp_dealloc = (destructor)database_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "A compiled pattern database (the C sm_db); seqmatch.Database wraps it.",
    .tp_methods = database_methods,
    .tp_getset = database_getset,
    .tp_as_sequence = &database_as_sequence,
};

static PyObject *run_stats_get(RunObject *r, void *closure) {
    (void)closure;
    return run_stats(r, NULL);
}

static PyGetSetDef run_getset[] = {
    {"stats", (getter)run_stats_get, NULL,
     "The counts of the pass so far, as the command's --stats-json reports them (search: records, bases, hits, "
     "patterns; filter and demux: reads, bases, patterns, and demux's samples and unassigned).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef run_methods[] = {
    {"_finish", (PyCFunction)run_finish, METH_NOARGS, NULL},
    {"_stats", (PyCFunction)run_stats, METH_NOARGS, NULL},
    {"close", (PyCFunction)run_close, METH_NOARGS,
     "Ends the pass now: no more is read, the files and the scanning threads are let go, the iterator is over; "
     "stats keep the counts so far. Closing again does nothing."},
    {"__enter__", (PyCFunction)run_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)run_exit, METH_VARARGS, "close()"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject RunType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "seqmatch._seqmatch._Run",
    .tp_basicsize = sizeof(RunObject),
    .tp_dealloc = (destructor)run_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "One pass over targets: the hits of Database.search, the records of filter and demux, read as "
              "they are asked for.",
    .tp_iter = PyObject_SelfIter,
    .tp_iternext = (iternextfunc)run_next,
    .tp_methods = run_methods,
    .tp_getset = run_getset,
};

static PyObject *seqmatch_version(PyObject *module, PyObject *unused) {
    (void)module, (void)unused;
    return PyUnicode_FromString(sm_version());
}

/* _engines(): the library's engines as (name, id), from its registry. */
static PyObject *seqmatch_engines(PyObject *module, PyObject *unused) {
    (void)module, (void)unused;
    size_t count = sm_engine_count();
    PyObject *list = PyList_New((Py_ssize_t)count);
    for (size_t i = 0; list && i < count; i++) {
        PyObject *item = Py_BuildValue("(si)", sm_engine_name(sm_engine_at(i)), (int)sm_engine_at(i));
        if (!item) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)i, item);
    }
    return list;
}

static PyMethodDef module_methods[] = {
    {"_compile", seqmatch_compile, METH_VARARGS, NULL},
    {"_load", seqmatch_load, METH_VARARGS, NULL},
    {"_from_bytes", seqmatch_from_bytes, METH_VARARGS, NULL},
    {"_read_patterns", seqmatch_read_patterns, METH_VARARGS, NULL},
    {"_trim_set", seqmatch_trim_set, METH_VARARGS, NULL},
    {"_amplicon_pairs", seqmatch_amplicon_pairs, METH_VARARGS, NULL},
    {"_barcode_pairs", seqmatch_barcode_pairs, METH_VARARGS, NULL},
    {"_set_types", set_types, METH_VARARGS, NULL},
    {"_library_version", seqmatch_version, METH_NOARGS, NULL},
    {"_engines", seqmatch_engines, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "seqmatch._seqmatch", "The C extension under the seqmatch package.", -1, module_methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__seqmatch(void) {
    if (PyType_Ready(&DatabaseType) < 0 || PyType_Ready(&RunType) < 0 || PyType_Ready(&TrimSetType) < 0 ||
        PyType_Ready(&BarcodePairsType) < 0)
        return NULL;
    plus_strand = PyUnicode_InternFromString("+");
    minus_strand = PyUnicode_InternFromString("-");
    kw_circular = PyUnicode_InternFromString("circular");
    kw_cigar = PyUnicode_InternFromString("cigar");
    kw_strand = PyUnicode_InternFromString("strand");
    kw_anchor = PyUnicode_InternFromString("anchor");
    kw_max_hits = PyUnicode_InternFromString("max_hits");
    kw_arrays = PyUnicode_InternFromString("arrays");
    if (!plus_strand || !minus_strand || !kw_circular || !kw_cigar || !kw_strand || !kw_anchor || !kw_max_hits ||
        !kw_arrays)
        return NULL;
    PyObject *m = PyModule_Create(&module_def);
    if (!m) return NULL;
    Py_INCREF(&DatabaseType);
    Py_INCREF(&RunType);
    Py_INCREF(&TrimSetType);
    Py_INCREF(&BarcodePairsType);
    if (PyModule_AddObject(m, "_Database", (PyObject *)&DatabaseType) != 0 ||
        PyModule_AddObject(m, "_Run", (PyObject *)&RunType) != 0 ||
        PyModule_AddObject(m, "_TrimSet", (PyObject *)&TrimSetType) != 0 ||
        PyModule_AddObject(m, "_BarcodePairs", (PyObject *)&BarcodePairsType) != 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}

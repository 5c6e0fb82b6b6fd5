/* seqmatch._seqmatch: the CPython extension over the C library (the
 * library's sources are compiled into it; see setup.py). The Python layer
 * (seqmatch/__init__.py) checks and documents the arguments; this file
 * holds the objects:
 *
 *   Database   an sm_db and a few per-thread scratches, reused
 *   Hit        a struct sequence: pattern, strand, start, end, errors,
 *              matched, record, index, cigar
 *   Search     the iterator of Database.search: a reader feeding a runner
 *
 * Scans run with the GIL released: a scan collects its hits into C memory,
 * and they become Python objects once the GIL is back. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "seqmatch.h"
#include "io/seqio.h"

/* ------------------------------------------------------------- errors */

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
    PyErr_SetString(type, message && message[0] ? message : sm_strerror(status));
    return NULL;
}

/* ----------------------------------------------------------------- Hit */

static PyTypeObject *HitType;
static PyObject *plus_strand, *minus_strand; /* "+" and "-", shared by every hit */

static PyStructSequence_Field hit_fields[] = {
    {"pattern", "the pattern's name"},
    {"strand", "'+' or '-' (a '-' hit is one of the pattern's reverse complement)"},
    {"start", "0-based start on the forward strand (BED-style)"},
    {"end", "end, exclusive; past the record's length for a circular hit over its end"},
    {"errors", "mismatches or edits (0 for exact hits)"},
    {"matched", "the text of the hit, forward strand, as in the input"},
    {"record", "the record's name (search), or None (scan)"},
    {"index", "the pattern's index in the compiled set"},
    {"cigar", "the alignment (=, X, I, D) when asked for with cigar=True, else None"},
    {NULL, NULL},
};

static PyStructSequence_Desc hit_desc = {
    "seqmatch.Hit",
    "One hit: pattern, strand, start, end, errors, matched, record, index, cigar.\n\n"
    "Coordinates are 0-based and half-open, on the forward strand, whatever the strand.",
    hit_fields,
    7, /* visible as a tuple: pattern, strand, start, end, errors, matched, record */
};

/* ------------------------------------------------------------ Database */

#define SCRATCH_POOL 8

typedef struct {
    PyObject_HEAD
    sm_db *db;
    sm_db_info info;
    PyObject *names;          /* list of str, one per pattern */
    sm_scratch *pool[SCRATCH_POOL];
    int npool;
} DatabaseObject;

static PyTypeObject DatabaseType;

static DatabaseObject *database_wrap(sm_db *db) {
    DatabaseObject *self = PyObject_New(DatabaseObject, &DatabaseType);
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
    if (self->db) sm_db_free(self->db);
    Py_XDECREF(self->names);
    PyObject_Free(self);
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

/* Hits collected without the GIL. */
typedef struct {
    sm_hit *hits;
    size_t n, cap;
    char *text;               /* copies of the hits' texts (search) */
    size_t text_len, text_cap;
    uint64_t limit;           /* circular scan: hits starting here or later are dropped */
    int failed;
} hit_buffer;

static int hit_buffer_push(hit_buffer *b, const sm_hit *h, int copy_text) {
    if (h->start >= b->limit) return 0;
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
        /* an offset until the buffer stops moving (text_of) */
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

static int collect_scan(const sm_hit *h, void *ctx) { return hit_buffer_push(ctx, h, 0); }

/* A Hit from a collected hit; text is its matched bytes. */
static PyObject *make_hit(DatabaseObject *db, const sm_hit *h, const char *text, PyObject *record, int cigar) {
    PyObject *hit = PyStructSequence_New(HitType);
    if (!hit) return NULL;
    PyObject *name = h->pattern < db->info.pattern_count ? PyList_GET_ITEM(db->names, h->pattern) : Py_None;
    Py_INCREF(name);
    PyStructSequence_SET_ITEM(hit, 0, name);
    PyObject *strand = h->strand == '-' ? minus_strand : plus_strand;
    Py_INCREF(strand);
    PyStructSequence_SET_ITEM(hit, 1, strand);
    PyStructSequence_SET_ITEM(hit, 2, PyLong_FromUnsignedLongLong(h->start));
    PyStructSequence_SET_ITEM(hit, 3, PyLong_FromUnsignedLongLong(h->end));
    PyStructSequence_SET_ITEM(hit, 4, PyLong_FromUnsignedLong(h->errors));
    PyStructSequence_SET_ITEM(hit, 5, PyUnicode_DecodeLatin1(text, (Py_ssize_t)(h->end - h->start), NULL));
    if (!record) record = Py_None;
    Py_INCREF(record);
    PyStructSequence_SET_ITEM(hit, 6, record);
    PyStructSequence_SET_ITEM(hit, 7, PyLong_FromUnsignedLong(h->pattern));
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
        if (!c) {
            Py_DECREF(hit);
            return NULL;
        }
    } else {
        Py_INCREF(c);
    }
    PyStructSequence_SET_ITEM(hit, 8, c);
    for (int i = 0; i < 9; i++)
        if (!PyStructSequence_GET_ITEM(hit, i)) {
            Py_DECREF(hit);
            return NULL;
        }
    return hit;
}

/* The bytes of a sequence argument: bytes-like, or str (UTF-8). */
static int sequence_bytes(PyObject *obj, Py_buffer *view, const char **data, Py_ssize_t *len) {
    view->obj = NULL;
    if (PyUnicode_Check(obj)) {
        *data = PyUnicode_AsUTF8AndSize(obj, len);
        return *data ? 0 : -1;
    }
    if (PyObject_GetBuffer(obj, view, PyBUF_SIMPLE) == 0) {
        *data = view->buf;
        *len = view->len;
        return 0;
    }
    PyErr_Clear();
    /* Any other buffer (a strided or non-contiguous memoryview, an array of
       another layout): its bytes in order, copied into one block. */
    Py_buffer full;
    if (PyObject_GetBuffer(obj, &full, PyBUF_FULL_RO) != 0) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "a sequence must be str, bytes or an object with the buffer protocol, not %.80s",
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    PyObject *copy = PyBytes_FromStringAndSize(NULL, full.len);
    int rc = copy ? PyBuffer_ToContiguous(PyBytes_AS_STRING(copy), &full, full.len, 'C') : -1;
    PyBuffer_Release(&full);
    if (rc == 0) rc = PyObject_GetBuffer(copy, view, PyBUF_SIMPLE);
    Py_XDECREF(copy); /* the view holds its own reference */
    if (rc != 0) return -1;
    *data = view->buf;
    *len = view->len;
    return 0;
}

/* Bytes a circular record's head is read again: longest site - 1 (+ k for edits). */
static size_t circular_reach(const sm_db_info *info) {
    size_t reach = info->max_length ? info->max_length - 1 : 0;
    if (info->match == SM_MATCH_EDITS) reach += info->max_errors;
    return reach;
}

static PyObject *database_scan(DatabaseObject *self, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"sequence", "circular", "cigar", NULL};
    PyObject *seq_obj;
    int circular = 0, cigar = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|pp:scan", keywords, &seq_obj, &circular, &cigar)) return NULL;
    Py_buffer view;
    const char *data;
    Py_ssize_t len;
    if (sequence_bytes(seq_obj, &view, &data, &len) != 0) return NULL;
    sm_scratch *scratch = scratch_take(self);
    if (!scratch) {
        if (view.obj) PyBuffer_Release(&view);
        return PyErr_NoMemory();
    }
    hit_buffer b;
    memset(&b, 0, sizeof b);
    b.limit = UINT64_MAX;
    char *joined = NULL;
    const char *text = data;
    size_t text_len = (size_t)len;
    int status = SM_OK;
    Py_BEGIN_ALLOW_THREADS
    if (circular && len > 0) {
        /* the record read round and round for len + w bytes (any number of
           turns round a record shorter than w); hits that start in it */
        size_t w = circular_reach(&self->info);
        joined = malloc((size_t)len + w + 1);
        if (joined) {
            for (size_t i = 0; i < (size_t)len + w; i++) joined[i] = data[i % (size_t)len];
            text = joined;
            text_len = (size_t)len + w;
            b.limit = (uint64_t)len;
        } else {
            status = SM_ERR_NOMEM;
        }
    }
    if (status == SM_OK) status = sm_scan(self->db, scratch, text, text_len, collect_scan, &b);
    Py_END_ALLOW_THREADS
    scratch_give(self, scratch);
    PyObject *list = NULL;
    if (status != SM_OK || b.failed) {
        raise_status(b.failed ? SM_ERR_NOMEM : status, NULL);
    } else if ((list = PyList_New((Py_ssize_t)b.n))) {
        for (size_t i = 0; i < b.n; i++) {
            PyObject *hit = make_hit(self, &b.hits[i], b.hits[i].text, NULL, cigar);
            if (!hit) {
                Py_CLEAR(list);
                break;
            }
            PyList_SET_ITEM(list, (Py_ssize_t)i, hit);
        }
    }
    free(joined);
    hit_buffer_free(&b);
    if (view.obj) PyBuffer_Release(&view);
    return list;
}

/* ---------------------------------------------------------- file scans */

/* A reader feeding a runner, for search and count. */
typedef struct {
    sm_reader *reader;
    sm_runner *runner;
    hit_buffer hits;          /* delivered, not yet handed out */
    size_t next;              /* the next of them to hand out */
    char **names;             /* record names, from record first_name on */
    size_t nnames, names_cap;
    uint64_t first_name;
    uint64_t done_below;      /* records below this are done */
    int in_record;            /* a record is being fed */
    int finished;             /* the file is read and the runner flushed */
    sm_error err;
} file_scan;

static int collect_search(const sm_hit *h, void *ctx) {
    file_scan *f = ctx;
    return hit_buffer_push(&f->hits, h, 1);
}

static void record_done(uint64_t record, void *ctx) {
    file_scan *f = ctx;
    if (record + 1 > f->done_below) f->done_below = record + 1;
}

static void file_scan_close(file_scan *f) {
    if (f->runner) sm_runner_free(f->runner);
    if (f->reader) sm_reader_close(f->reader);
    for (size_t i = 0; i < f->nnames; i++) free(f->names[i]);
    free(f->names);
    hit_buffer_free(&f->hits);
    memset(f, 0, sizeof *f);
}

static int file_scan_open(file_scan *f, const sm_db *db, const char *path, unsigned threads, int circular,
                          int count_only) {
    memset(f, 0, sizeof *f);
    f->hits.limit = UINT64_MAX;
    sm_db_info info;
    sm_db_get_info(db, &info);
    sm_input_format format = info.alphabet == SM_ALPHABET_TEXT ? SM_INPUT_TEXT : SM_INPUT_AUTO;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned reader_threads = threads ? threads : cores > 0 ? (unsigned)cores : 1;
    int rc = sm_reader_open_threads(path, format, reader_threads, &f->reader, &f->err);
    if (rc != SM_OK) return rc;
    sm_runner_options o;
    sm_runner_options_init(&o);
    o.threads = threads;
    o.count_only = count_only;
    o.circular = circular;
    o.on_hit = collect_search;
    o.on_record_done = record_done;
    o.ctx = f;
    return sm_runner_create(db, &o, &f->runner, &f->err);
}

static int remember_name(file_scan *f, uint64_t record, const char *name) {
    if (f->nnames == 0) f->first_name = record;
    if (f->nnames == f->names_cap) {
        size_t cap = f->names_cap ? f->names_cap * 2 : 64;
        char **p = realloc(f->names, cap * sizeof *p);
        if (!p) return SM_ERR_NOMEM;
        f->names = p;
        f->names_cap = cap;
    }
    f->names[f->nnames] = strdup(name ? name : "");
    if (!f->names[f->nnames]) return SM_ERR_NOMEM;
    f->nnames++;
    return SM_OK;
}

/* Drops the names of done records once their hits are handed out. */
static void forget_names(file_scan *f) {
    size_t drop = 0;
    while (drop < f->nnames && f->first_name + drop < f->done_below) free(f->names[drop++]);
    if (drop == 0) return;
    memmove(f->names, f->names + drop, (f->nnames - drop) * sizeof *f->names);
    f->nnames -= drop;
    f->first_name += drop;
}

/* Reads and feeds (GIL released) until hits are waiting or the file is
   done (stop_for_hits), or to the end. Returns an sm_status; err filled. */
static int file_scan_advance(file_scan *f, int stop_for_hits) {
    int status = SM_OK;
    while (!f->finished && status == SM_OK && !(stop_for_hits && f->hits.n > 0)) {
        if (!f->in_record) {
            const char *name = NULL;
            int more = sm_reader_next_record(f->reader, &name, &f->err);
            if (more < 0) return f->err.code ? f->err.code : SM_ERR_IO;
            if (more == 0) {
                status = sm_runner_flush(f->runner);
                f->finished = 1;
                break;
            }
            uint64_t record = sm_runner_begin_record(f->runner);
            if ((status = remember_name(f, record, name)) != SM_OK) break;
            f->in_record = 1;
        }
        void *dst;
        size_t room, len = 0;
        status = sm_runner_feed_buffer(f->runner, (size_t)4 << 20, &dst, &room);
        if (status != SM_OK) break;
        int piece = sm_reader_read_into(f->reader, dst, room, &len, &f->err);
        if (piece < 0) return f->err.code ? f->err.code : SM_ERR_IO;
        if (piece == 1) {
            status = sm_runner_feed_commit(f->runner, len);
        } else {
            f->in_record = 0;
            status = sm_runner_end_record(f->runner);
        }
    }
    if (f->hits.failed) return SM_ERR_NOMEM;
    return status;
}

static const char *file_scan_record_name(const file_scan *f, uint64_t record) {
    if (record < f->first_name || record - f->first_name >= f->nnames) return "";
    return f->names[record - f->first_name];
}

/* Path argument: str or os.PathLike, as a filesystem-encoded bytes object. */
static int path_argument(PyObject *obj, PyObject **out) { return PyUnicode_FSConverter(obj, out); }

/* --------------------------------------------------------------- Search */

typedef struct {
    PyObject_HEAD
    DatabaseObject *db;
    file_scan scan;
    PyObject *path;           /* bytes */
    PyObject *record;         /* the name object of the record of the last hit */
    uint64_t record_id;
    int cigar;
    int busy;                 /* __next__ running on another thread */
    int done;
} SearchObject;

static PyTypeObject SearchType;

static void search_dealloc(SearchObject *self) {
    file_scan_close(&self->scan);
    Py_XDECREF(self->db);
    Py_XDECREF(self->path);
    Py_XDECREF(self->record);
    PyObject_Free(self);
}

static PyObject *search_next(SearchObject *self) {
    if (self->done) return NULL;
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "this search is being read by another thread");
        return NULL;
    }
    file_scan *f = &self->scan;
    if (f->next >= f->hits.n) {
        /* all handed out: start the buffer again, read on */
        f->hits.n = f->next = 0;
        f->hits.text_len = 0;
        forget_names(f);
        self->busy = 1;
        int status;
        Py_BEGIN_ALLOW_THREADS
        status = file_scan_advance(f, 1);
        Py_END_ALLOW_THREADS
        self->busy = 0;
        if (status != SM_OK) {
            self->done = 1;
            raise_status(status, f->err.message);
            file_scan_close(f);
            return NULL;
        }
        if (f->hits.n == 0) {
            self->done = 1;
            file_scan_close(f);
            return NULL; /* StopIteration */
        }
    }
    sm_hit *h = &f->hits.hits[f->next++];
    if (!self->record || h->record != self->record_id) {
        const char *name = file_scan_record_name(f, h->record);
        PyObject *s = PyUnicode_DecodeUTF8(name, (Py_ssize_t)strlen(name), "replace");
        if (!s) return NULL;
        Py_XSETREF(self->record, s);
        self->record_id = h->record;
    }
    const char *text = f->hits.text + (uintptr_t)h->text;
    return make_hit(self->db, h, text, self->record, self->cigar);
}

static PyObject *database_search(DatabaseObject *self, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"path", "threads", "circular", "cigar", NULL};
    PyObject *path = NULL;
    unsigned int threads = 0;
    int circular = 0, cigar = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O&|Ipp:search", keywords, path_argument, &path, &threads,
                                     &circular, &cigar))
        return NULL;
    SearchObject *it = PyObject_New(SearchObject, &SearchType);
    if (!it) {
        Py_DECREF(path);
        return NULL;
    }
    memset(&it->scan, 0, sizeof it->scan);
    Py_INCREF(self);
    it->db = self;
    it->path = path;
    it->record = NULL;
    it->record_id = 0;
    it->cigar = cigar;
    it->busy = 0;
    it->done = 0;
    int status;
    const char *p = PyBytes_AS_STRING(path);
    Py_BEGIN_ALLOW_THREADS
    status = file_scan_open(&it->scan, self->db, p, threads, circular, 0);
    Py_END_ALLOW_THREADS
    if (status != SM_OK) {
        raise_status(status, it->scan.err.message);
        Py_DECREF(it);
        return NULL;
    }
    return (PyObject *)it;
}

static PyObject *database_count(DatabaseObject *self, PyObject *args, PyObject *kwargs) {
    static char *keywords[] = {"path", "threads", "circular", NULL};
    PyObject *path = NULL;
    unsigned int threads = 0;
    int circular = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O&|Ip:count", keywords, path_argument, &path, &threads,
                                     &circular))
        return NULL;
    file_scan f;
    int status;
    const char *p = PyBytes_AS_STRING(path);
    Py_BEGIN_ALLOW_THREADS
    status = file_scan_open(&f, self->db, p, threads, circular, 1);
    if (status == SM_OK) status = file_scan_advance(&f, 0);
    Py_END_ALLOW_THREADS
    Py_DECREF(path);
    if (status != SM_OK) {
        raise_status(status, f.err.message);
        file_scan_close(&f);
        return NULL;
    }
    const uint64_t *counts = sm_runner_counts(f.runner);
    PyObject *dict = PyDict_New();
    for (uint32_t i = 0; dict && i < self->info.pattern_count; i++) {
        PyObject *name = PyList_GET_ITEM(self->names, i);
        PyObject *have = PyDict_GetItemWithError(dict, name);
        unsigned long long sum = counts[i];
        if (have) sum += PyLong_AsUnsignedLongLong(have);
        else if (PyErr_Occurred()) Py_CLEAR(dict);
        PyObject *value = dict ? PyLong_FromUnsignedLongLong(sum) : NULL;
        if (!value || PyDict_SetItem(dict, name, value) != 0) Py_CLEAR(dict);
        Py_XDECREF(value);
    }
    file_scan_close(&f);
    return dict;
}

/* ------------------------------------------------ compile, load, bytes */

static PyObject *seqmatch_compile(PyObject *module, PyObject *args) {
    (void)module;
    PyObject *patterns;
    int alphabet, strands, match, report, flags, engine;
    unsigned int max_errors;
    const char *pam;
    if (!PyArg_ParseTuple(args, "O!iiiIiiiz:_compile", &PyList_Type, &patterns, &alphabet, &strands, &match,
                          &max_errors, &report, &flags, &engine, &pam))
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
    Py_buffer view;
    if (!PyArg_ParseTuple(args, "y*:from_bytes", &view)) return NULL;
    sm_db *db = NULL;
    sm_error err;
    memset(&err, 0, sizeof err);
    int status = sm_db_from_bytes(view.buf, (size_t)view.len, &db, &err);
    PyBuffer_Release(&view);
    if (status != SM_OK) return raise_status(status, err.message);
    return (PyObject *)database_wrap(db);
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
    return Py_BuildValue("{s:i,s:i,s:I,s:i,s:I,s:i,s:I,s:I,s:I,s:K,s:N}", "alphabet", (int)i->alphabet, "strands",
                         (int)i->strands, "flags", i->flags, "match", (int)i->match, "max_errors", i->max_errors,
                         "report", (int)i->report, "pam_length", i->pam_length, "min_length", i->min_length,
                         "max_length", i->max_length, "size", (unsigned long long)i->size, "engines", engines);
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
    {"_scan", (PyCFunction)(void (*)(void))database_scan, METH_VARARGS | METH_KEYWORDS, NULL},
    {"_search", (PyCFunction)(void (*)(void))database_search, METH_VARARGS | METH_KEYWORDS, NULL},
    {"_count", (PyCFunction)(void (*)(void))database_count, METH_VARARGS | METH_KEYWORDS, NULL},
    {"_save", (PyCFunction)database_save, METH_VARARGS, NULL},
    {"_to_bytes", (PyCFunction)database_to_bytes, METH_NOARGS, NULL},
    {"_info", (PyCFunction)database_info, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef database_getset[] = {
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

static PyTypeObject SearchType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "seqmatch._seqmatch.Search",
    .tp_basicsize = sizeof(SearchObject),
    .tp_dealloc = (destructor)search_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "The hits of Database.search, read from the file as they are asked for.",
    .tp_iter = PyObject_SelfIter,
    .tp_iternext = (iternextfunc)search_next,
};

static PyObject *seqmatch_version(PyObject *module, PyObject *unused) {
    (void)module, (void)unused;
    return PyUnicode_FromString(sm_version());
}

static PyMethodDef module_methods[] = {
    {"_compile", seqmatch_compile, METH_VARARGS, NULL},
    {"_load", seqmatch_load, METH_VARARGS, NULL},
    {"_from_bytes", seqmatch_from_bytes, METH_VARARGS, NULL},
    {"_library_version", seqmatch_version, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "seqmatch._seqmatch", "The C extension under the seqmatch package.", -1, module_methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__seqmatch(void) {
    if (PyType_Ready(&DatabaseType) < 0 || PyType_Ready(&SearchType) < 0) return NULL;
    HitType = PyStructSequence_NewType(&hit_desc);
    plus_strand = PyUnicode_InternFromString("+");
    minus_strand = PyUnicode_InternFromString("-");
    if (!HitType || !plus_strand || !minus_strand) return NULL;
    PyObject *m = PyModule_Create(&module_def);
    if (!m) return NULL;
    Py_INCREF(&DatabaseType);
    Py_INCREF(HitType);
    if (PyModule_AddObject(m, "_Database", (PyObject *)&DatabaseType) != 0 ||
        PyModule_AddObject(m, "Hit", (PyObject *)HitType) != 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}

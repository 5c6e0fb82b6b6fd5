/* In-silico PCR (include/seqmatch_reader.h, sm_amplicon_*): primer pairs,
 * the products their sites make in a record, and the loop of seqmatch
 * amplicon.
 *
 * One runner scans every primer of every pair on both strands in one pass.
 * Each record waits in a queue, with its name, its sequence (when the
 * output shows sequences) and the hits delivered so far, until the runner
 * says all its hits are in; then its products are paired up, sorted and
 * written. The queue is compacted between records (never inside a runner
 * callback, which only appends). */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seqmatch_output.h"
#include "seqmatch_reader.h"
#include "io/source.h"

/* ------------------------------------------------------------ the set */

static int is_iupac(int c) { return c != 0 && strchr("ACGTURYSWKMBDHVN", toupper(c)) != NULL; }

static int check_primer(const char *name, const char *which, const char *seq, sm_error *err) {
    if (!seq[0]) return sm_io_error(err, SM_ERR_INVALID, "primer pair '%s': empty %s primer", name, which);
    for (const char *p = seq; *p; p++)
        if (!is_iupac((unsigned char)*p))
            return sm_io_error(err, SM_ERR_INVALID, "primer pair '%s': %s primer '%s': '%c' is no DNA or IUPAC "
                               "symbol", name, which, seq, *p);
    return SM_OK;
}

int sm_amplicon_set_add(sm_amplicon_set *set, const char *name, const char *forward, const char *reverse,
                        sm_error *err) {
    if (err) memset(err, 0, sizeof *err);
    if (!name[0]) return sm_io_error(err, SM_ERR_INVALID, "a primer pair without a name");
    int rc = check_primer(name, "forward", forward, err);
    if (rc == SM_OK) rc = check_primer(name, "reverse", reverse, err);
    if (rc != SM_OK) return rc;
    if (set->count == set->cap) {
        size_t cap = set->cap ? set->cap * 2 : 8;
        sm_amplicon_pair *p = realloc(set->pairs, cap * sizeof *p);
        if (!p) return sm_io_error(err, SM_ERR_NOMEM, "out of memory");
        set->pairs = p;
        set->cap = cap;
    }
    size_t nlen = strlen(name);
    char *pattern_name = malloc(nlen + 9);
    sm_amplicon_pair pair = {strdup(name), strdup(forward), strdup(reverse)};
    int failed = !pattern_name || !pair.name || !pair.forward || !pair.reverse;
    if (!failed) {
        snprintf(pattern_name, nlen + 9, "%s/forward", name);
        failed = sm_pattern_list_add(&set->patterns, pattern_name, forward, strlen(forward)) != SM_OK;
    }
    if (!failed) {
        snprintf(pattern_name, nlen + 9, "%s/reverse", name);
        failed = sm_pattern_list_add(&set->patterns, pattern_name, reverse, strlen(reverse)) != SM_OK;
        if (failed) set->patterns.count--; /* the forward primer's entry goes with the pair */
    }
    free(pattern_name);
    if (failed) {
        free(pair.name), free(pair.forward), free(pair.reverse);
        return sm_io_error(err, SM_ERR_NOMEM, "out of memory");
    }
    set->pairs[set->count++] = pair;
    return SM_OK;
}

/* The next tab-separated field of *line, spaces around it dropped (NUL-terminated in place). */
static char *next_field(char **line) {
    char *s = *line;
    if (!s) return NULL;
    char *tab = strchr(s, '\t');
    *line = tab ? tab + 1 : NULL;
    if (tab) *tab = '\0';
    while (*s == ' ') s++;
    size_t n = strlen(s);
    while (n > 0 && s[n - 1] == ' ') s[--n] = '\0';
    return s;
}

int sm_amplicon_set_read(sm_amplicon_set *set, const char *path, sm_error *err) {
    if (err) memset(err, 0, sizeof *err);
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f) return sm_io_error(err, SM_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    /* a primer table is small: read whole, then split into lines */
    char *text = NULL;
    size_t len = 0, cap = 0, got;
    int rc = SM_OK;
    do {
        if (len + 4096 + 1 > cap) {
            cap = cap ? cap * 2 : 8192;
            char *p = cap > ((size_t)64 << 20) ? NULL : realloc(text, cap);
            if (!p) {
                rc = sm_io_error(err, SM_ERR_LIMIT, "%s: too large for a primer table", path);
                break;
            }
            text = p;
        }
        got = fread(text + len, 1, 4096, f);
        len += got;
    } while (got > 0);
    if (rc == SM_OK && ferror(f)) rc = sm_io_error(err, SM_ERR_IO, "%s: read error", path);
    if (rc == SM_OK && memchr(text, '\0', len)) rc = sm_io_error(err, SM_ERR_FORMAT, "%s: binary data, not a primer "
                                                                "table (name<TAB>forward<TAB>reverse)", path);
    if (text) text[len] = '\0';
    char *line = text;
    for (unsigned long number = 1; rc == SM_OK && line && *line; number++) {
        char *end = strchr(line, '\n');
        if (end) *end = '\0';
        size_t n = strlen(line);
        while (n > 0 && line[n - 1] == '\r') line[--n] = '\0';
        char *rest = line;
        line = end ? end + 1 : NULL;
        while (*rest == ' ' || *rest == '\t') rest++;
        if (!*rest || *rest == '#') continue;
        char *name = next_field(&rest), *fwd = next_field(&rest), *rev = next_field(&rest);
        if (!fwd || !rev || rest) {
            rc = sm_io_error(err, SM_ERR_FORMAT, "%s: line %lu: want name<TAB>forward<TAB>reverse, got %s", path,
                             number, !fwd ? "one field" : !rev ? "two fields" : "more than three fields");
            break;
        }
        sm_error e;
        rc = sm_amplicon_set_add(set, name, fwd, rev, &e);
        if (rc != SM_OK) sm_io_error(err, rc, "%s: line %lu: %s", path, number, e.message);
    }
    if (rc == SM_OK && set->count == 0) rc = sm_io_error(err, SM_ERR_INVALID, "%s: no primer pair in it", path);
    free(text);
    if (f != stdin) fclose(f);
    return rc;
}

void sm_amplicon_set_free(sm_amplicon_set *set) {
    for (size_t i = 0; i < set->count; i++)
        free(set->pairs[i].name), free(set->pairs[i].forward), free(set->pairs[i].reverse);
    free(set->pairs);
    sm_pattern_list_free(&set->patterns);
    memset(set, 0, sizeof *set);
}

int sm_amplicon_format_from_name(const char *name, sm_amplicon_format *format) {
    static const char *const names[] = {"tsv", "bed", "fasta"};
    for (int i = 0; i < 3; i++)
        if (strcmp(name, names[i]) == 0) return *format = (sm_amplicon_format)i, SM_OK;
    return SM_ERR_INVALID;
}

/* ------------------------------------------------------- the pairing */

static int push(sm_amplicon **out, size_t *count, size_t *cap, const sm_amplicon *a) {
    if (*count == *cap) {
        size_t grown = *cap ? *cap * 2 : 64;
        sm_amplicon *p = realloc(*out, grown * sizeof *p);
        if (!p) return SM_ERR_NOMEM;
        *out = p;
        *cap = grown;
    }
    (*out)[(*count)++] = *a;
    return SM_OK;
}

static int in_window(const sm_amplicon_rule *rule, uint64_t size) {
    return size >= rule->min_size && size <= rule->max_size;
}

/* A product from forward site f and reverse site r, if the rule takes it. */
static int pair_up(const sm_amplicon_rule *rule, uint32_t pair, char strand, const sm_hit *f, const sm_hit *r,
                   sm_amplicon **out, size_t *count, size_t *cap) {
    sm_amplicon a = {.pair = pair, .strand = strand, .forward_errors = f->errors, .reverse_errors = r->errors};
    if (strand == '+') {
        if (r->start < f->start) return SM_OK;
        a.start = f->start, a.end = r->end;
    } else {
        if (f->end < r->end) return SM_OK;
        a.start = r->start, a.end = f->end;
    }
    return in_window(rule, a.end - a.start) ? push(out, count, cap, &a) : SM_OK;
}

static int by_place(const void *pa, const void *pb) {
    const sm_amplicon *a = pa, *b = pb;
    if (a->start != b->start) return a->start < b->start ? -1 : 1;
    if (a->end != b->end) return a->end < b->end ? -1 : 1;
    if (a->pair != b->pair) return a->pair < b->pair ? -1 : 1;
    return (a->strand == '-') - (b->strand == '-');
}

/* The sites of one pair on one strand: forward f[0, nf) and reverse r[0, nr), each by start. */
static int pair_sites(const sm_amplicon_rule *rule, uint32_t pair, char strand, const sm_hit *const *f, size_t nf,
                      const sm_hit *const *r, size_t nr, sm_amplicon **out, size_t *count, size_t *cap) {
    if (!nf || !nr) return SM_OK;
    if (rule->longest) {
        /* 5' to 3' on the strand: on '+' the first forward site starts first and the
           last reverse site starts last; on '-' (read backwards) by their ends */
        const sm_hit *bf = f[0], *br = r[0];
        for (size_t i = 0; i < nf; i++)
            if (strand == '+' ? f[i]->start < bf->start : f[i]->end > bf->end) bf = f[i];
        for (size_t i = 0; i < nr; i++)
            if (strand == '+' ? r[i]->start >= br->start : r[i]->end < br->end) br = r[i];
        return pair_up(rule, pair, strand, bf, br, out, count, cap);
    }
    uint64_t longest_f = 0;
    for (size_t i = 0; i < nf; i++)
        if (f[i]->end - f[i]->start > longest_f) longest_f = f[i]->end - f[i]->start;
    size_t lo = 0;
    if (strand == '+') {
        for (size_t i = 0; i < nf; i++) {
            while (lo < nr && r[lo]->start < f[i]->start) lo++;
            for (size_t j = lo; j < nr && r[j]->start - f[i]->start <= rule->max_size; j++)
                if (pair_up(rule, pair, strand, f[i], r[j], out, count, cap) != SM_OK) return SM_ERR_NOMEM;
        }
    } else {
        for (size_t j = 0; j < nr; j++) {
            /* f->end >= r->end > r->start needs f->start > r->start - longest_f */
            while (lo < nf && f[lo]->start + longest_f <= r[j]->start) lo++;
            for (size_t i = lo; i < nf && (f[i]->start < r[j]->start || f[i]->start - r[j]->start <= rule->max_size);
                 i++)
                if (pair_up(rule, pair, strand, f[i], r[j], out, count, cap) != SM_OK) return SM_ERR_NOMEM;
        }
    }
    return SM_OK;
}

/* A hit's list: pair * 4 + 0 forward primer '+', 1 reverse primer '+', 2 forward '-', 3 reverse '-'. */
static size_t site_slot(const sm_hit *h) { return (size_t)(h->pattern >> 1) * 4 + (h->strand == '-') * 2 + (h->pattern & 1); }

int sm_amplicon_products(const sm_amplicon_rule *rule, size_t pairs, const sm_hit *hits, size_t n,
                         sm_amplicon **out, size_t *count, size_t *cap) {
    if (n == 0) return SM_OK; /* no site, no product (and no list to point into) */
    size_t first = *count;
    /* per pair and strand: the forward and the reverse sites, in hit order (by start) */
    const sm_hit **sites = malloc(n * sizeof *sites);
    size_t *at = calloc(pairs * 4 + 1, sizeof *at);
    int rc = !sites || !at ? SM_ERR_NOMEM : SM_OK;
    for (size_t i = 0; rc == SM_OK && i < n; i++) at[site_slot(&hits[i]) + 1]++;
    for (size_t s = 0; rc == SM_OK && s < pairs * 4; s++) at[s + 1] += at[s];
    for (size_t i = 0; rc == SM_OK && i < n; i++) sites[at[site_slot(&hits[i])]++] = &hits[i];
    /* at[slot] is now its end, at[slot - 1] (0 for the first) its start */
    for (size_t p = 0; rc == SM_OK && p < pairs; p++) {
        size_t s = p * 4;
        size_t b0 = s ? at[s - 1] : 0, e0 = at[s], e1 = at[s + 1], e2 = at[s + 2], e3 = at[s + 3];
        /* + strand: forward primer '+' (slot 0) with reverse primer '-' (slot 3);
           - strand: forward primer '-' (slot 2) with reverse primer '+' (slot 1) */
        rc = pair_sites(rule, (uint32_t)p, '+', sites + b0, e0 - b0, sites + e2, e3 - e2, out, count, cap);
        if (rc == SM_OK)
            rc = pair_sites(rule, (uint32_t)p, '-', sites + e1, e2 - e1, sites + e0, e1 - e0, out, count, cap);
    }
    free(sites);
    free(at);
    if (rc == SM_OK && *count - first > 1) qsort(*out + first, *count - first, sizeof **out, by_place);
    return rc;
}

/* ------------------------------------------------------------ the loop */

typedef struct {
    uint64_t record;
    size_t name_at, seq_at, seq_len; /* in the arena */
} pending;

struct sm_amplicon_finder {
    sm_amplicon_options o;
    sm_runner *runner;
    pending *queue;
    size_t head, count, cap;
    char *arena;                /* names and sequences of waiting records; [arena_head, arena_len) in use */
    size_t arena_head, arena_len, arena_cap;
    sm_hit *hits;               /* hits of waiting records, in record order (text dropped) */
    size_t hits_head, hits_len, hits_cap;
    sm_amplicon *products;
    size_t nproducts, products_cap;
    char *line;                 /* one output line or record */
    size_t line_len, line_cap;
    uint32_t *primer_len;       /* per pair: forward + reverse symbols */
    const char *file;           /* the file being read, as shown */
    const sm_reader *reader;
    sm_amplicon_stats stats;
    /* this file's counts for o.stats: records with a product, bases, and
       products per pair and strand (2i: +, 2i + 1: -) */
    uint64_t file_records, file_with_product, file_bases, *file_products;
    int nomem, stop;
    int header_due; /* the TSV header waits for the first product or a file read whole */
};

static int arena_put(sm_amplicon_finder *f, const void *data, size_t len) {
    if (f->arena_len + len > f->arena_cap) {
        size_t cap = f->arena_cap ? f->arena_cap : 1 << 16;
        while (cap < f->arena_len + len) cap *= 2;
        char *p = realloc(f->arena, cap);
        if (!p) return -1;
        f->arena = p;
        f->arena_cap = cap;
    }
    if (len) memcpy(f->arena + f->arena_len, data, len);
    f->arena_len += len;
    return 0;
}

/* Room for len more bytes of the line: where they go, or NULL. */
static char *line_room(sm_amplicon_finder *f, size_t len) {
    if (f->line_len + len > f->line_cap) {
        size_t cap = f->line_cap ? f->line_cap : 256;
        while (cap < f->line_len + len) cap *= 2;
        char *p = realloc(f->line, cap);
        if (!p) return NULL;
        f->line = p;
        f->line_cap = cap;
    }
    return f->line + f->line_len;
}

static int line_put(sm_amplicon_finder *f, const char *data, size_t len) {
    char *dst = line_room(f, len);
    if (!dst) return -1;
    if (len) memcpy(dst, data, len);
    f->line_len += len;
    return 0;
}

static int line_printf(sm_amplicon_finder *f, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static int line_printf(sm_amplicon_finder *f, const char *fmt, ...) {
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) return -1;
    if ((size_t)n < sizeof small) return line_put(f, small, (size_t)n);
    char *big = malloc((size_t)n + 1);
    if (!big) return -1;
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    int rc = line_put(f, big, (size_t)n);
    free(big);
    return rc;
}

/* The product's sequence on its strand ('-': reverse complement, IUPAC codes and case kept). */
static int put_sequence(sm_amplicon_finder *f, const char *seq, const sm_amplicon *a) {
    size_t len = (size_t)(a->end - a->start);
    if (a->strand == '+') return line_put(f, seq + a->start, len);
    static const char from[] = "ACGTURYSWKMBDHVNacgturyswkmbdhvn", to[] = "TGCAAYRSWMKVHDBNtgcaayrswmkvhdbn";
    char *dst = line_room(f, len);
    if (!dst) return -1;
    for (size_t i = 0; i < len; i++) {
        char c = seq[a->end - 1 - i];
        const char *at = c ? strchr(from, c) : NULL;
        dst[i] = at ? to[at - from] : c;
    }
    f->line_len += len;
    return 0;
}

/* The TSV header, once: written with the first product or at the end of the
   first file read whole, so that a file refused at its start leaves the
   output empty, as search leaves it. */
static int write_header(sm_amplicon_finder *f) {
    static const char head[] = "record\tstart\tend\tstrand\tpair\tsize\tforward_errors\treverse_errors";
    if (!f->header_due) return 0;
    f->header_due = 0;
    return sm_writer_write(f->o.out, "#", 1) != 0 || (f->o.show_file && sm_writer_write(f->o.out, "file\t", 5)) ||
                   sm_writer_write(f->o.out, head, sizeof head - 1) != 0 ||
                   (f->o.sequence && sm_writer_write(f->o.out, "\tsequence", 9) != 0) ||
                   sm_writer_write(f->o.out, "\n", 1) != 0
               ? -1
               : 0;
}

static int write_product(sm_amplicon_finder *f, const char *name, const char *seq, const sm_amplicon *a) {
    if (write_header(f) != 0) return -1;
    const sm_amplicon_pair *p = &f->o.set->pairs[a->pair];
    const char *file = f->o.show_file ? f->file : NULL;
    unsigned long long s = (unsigned long long)a->start, e = (unsigned long long)a->end;
    int rc = 0;
    f->line_len = 0;
    switch (f->o.format) {
    case SM_AMPLICON_BED: {
        uint32_t total = f->primer_len[a->pair], errors = a->forward_errors + a->reverse_errors;
        unsigned score = errors >= total ? 0 : (unsigned)(1000ull * (total - errors) / total);
        rc = line_printf(f, "%s\t%llu\t%llu\t%s%s%s\t%u\t%c\n", name, s, e, file ? file : "", file ? ":" : "",
                         p->name, score, a->strand);
        break;
    }
    case SM_AMPLICON_FASTA:
        rc = line_printf(f, ">%s::%s%s%s:%llu-%llu(%c) forward_errors=%u reverse_errors=%u\n", p->name,
                         file ? file : "", file ? ":" : "", name, s, e, a->strand, a->forward_errors,
                         a->reverse_errors);
        if (rc == 0) rc = put_sequence(f, seq, a);
        if (rc == 0) rc = line_put(f, "\n", 1);
        break;
    default:
        rc = line_printf(f, "%s%s%s\t%llu\t%llu\t%c\t%s\t%llu\t%u\t%u", file ? file : "", file ? "\t" : "", name, s,
                         e, a->strand, p->name, e - s, a->forward_errors, a->reverse_errors);
        if (rc == 0 && f->o.sequence) rc = line_put(f, "\t", 1) || put_sequence(f, seq, a);
        if (rc == 0) rc = line_put(f, "\n", 1);
        break;
    }
    if (rc != 0) {
        f->nomem = 1;
        return -1;
    }
    return sm_writer_write(f->o.out, f->line, f->line_len) != 0 ? -1 : 0;
}

static int needs_sequence(const sm_amplicon_options *o) {
    return o->format == SM_AMPLICON_FASTA || (o->format == SM_AMPLICON_TSV && o->sequence);
}

static int on_hit(const sm_hit *hit, void *ctx) {
    sm_amplicon_finder *f = ctx;
    if (f->hits_len == f->hits_cap) {
        size_t cap = f->hits_cap ? f->hits_cap * 2 : 1024;
        sm_hit *p = realloc(f->hits, cap * sizeof *p);
        if (!p) {
            f->nomem = f->stop = 1;
            return 1;
        }
        f->hits = p;
        f->hits_cap = cap;
    }
    f->hits[f->hits_len] = *hit;
    f->hits[f->hits_len++].text = NULL;
    return 0;
}

static void on_record_done(uint64_t record, void *ctx) {
    sm_amplicon_finder *f = ctx;
    if (f->head == f->count || f->queue[f->head].record != record) return;
    pending *e = &f->queue[f->head++];
    size_t from = f->hits_head;
    while (f->hits_head < f->hits_len && f->hits[f->hits_head].record == record) f->hits_head++;
    f->stats.records++;
    f->file_records++;
    f->nproducts = 0;
    if (f->stop) return;
    if (sm_amplicon_products(&f->o.rule, f->o.set->count, f->hits ? f->hits + from : NULL, f->hits_head - from,
                             &f->products, &f->nproducts, &f->products_cap) != SM_OK) {
        f->nomem = f->stop = 1;
        return;
    }
    const char *name = f->arena + e->name_at, *seq = f->arena + e->seq_at;
    for (size_t i = 0; i < f->nproducts && !f->stop; i++)
        if (write_product(f, name, seq, &f->products[i]) != 0) f->stop = 1;
    f->stats.products += f->nproducts;
    f->file_with_product += f->nproducts > 0;
    for (size_t i = 0; f->file_products && i < f->nproducts; i++)
        f->file_products[2 * f->products[i].pair + (f->products[i].strand == '-')]++;
    f->arena_head = e->seq_at + e->seq_len;
}

/* Drops what the records handed on no longer need (between runner calls only). */
static void compact(sm_amplicon_finder *f) {
    if (f->head == f->count) f->head = f->count = 0;
    if (f->hits_head == f->hits_len) f->hits_head = f->hits_len = 0;
    if (f->head > 1024 && f->head * 2 > f->count) {
        memmove(f->queue, f->queue + f->head, (f->count - f->head) * sizeof *f->queue);
        f->count -= f->head;
        f->head = 0;
    }
    if (f->hits_head > 4096 && f->hits_head * 2 > f->hits_len) {
        memmove(f->hits, f->hits + f->hits_head, (f->hits_len - f->hits_head) * sizeof *f->hits);
        f->hits_len -= f->hits_head;
        f->hits_head = 0;
    }
    if (f->head == f->count) f->arena_head = f->arena_len = 0;
    if (f->arena_head > ((size_t)1 << 20) && f->arena_head * 2 > f->arena_len) {
        size_t shift = f->arena_head;
        memmove(f->arena, f->arena + shift, f->arena_len - shift);
        f->arena_len -= shift;
        f->arena_head = 0;
        for (size_t i = f->head; i < f->count; i++) f->queue[i].name_at -= shift, f->queue[i].seq_at -= shift;
    }
}

typedef struct {
    sm_amplicon_finder *f;
    sm_error *err;
    int failed;
} amplicon_scan;

static int on_record(void *ctx, uint64_t record, const char *name) {
    amplicon_scan *in = ctx;
    sm_amplicon_finder *f = in->f;
    compact(f);
    if (f->count == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 1024;
        pending *q = realloc(f->queue, cap * sizeof *q);
        if (!q) goto nomem;
        f->queue = q;
        f->cap = cap;
    }
    pending *p = &f->queue[f->count];
    p->record = record;
    p->name_at = f->arena_len;
    if (arena_put(f, name, strlen(name) + 1) != 0) goto nomem;
    p->seq_at = f->arena_len;
    p->seq_len = 0;
    f->count++;
    return 0;
nomem:
    sm_io_error(in->err, SM_ERR_NOMEM, "out of memory");
    in->failed = 1;
    return 1;
}

static int on_sequence(void *ctx, uint64_t record, const uint8_t *data, size_t len) {
    amplicon_scan *in = ctx;
    sm_amplicon_finder *f = in->f;
    (void)record;
    if (arena_put(f, data, len) != 0) {
        sm_io_error(in->err, SM_ERR_NOMEM, "out of memory");
        in->failed = 1;
        return 1;
    }
    f->queue[f->count - 1].seq_len += len;
    return 0;
}

static int on_piece_fed(void *ctx, size_t bytes, int record_ended) {
    (void)record_ended;
    sm_amplicon_finder *f = ((amplicon_scan *)ctx)->f;
    f->file_bases += bytes;
    if (f->o.progress && bytes) sm_progress_update(f->o.progress, f->reader, bytes, f->stats.products);
    return f->stop;
}

int sm_amplicon_finder_new(const sm_db *db, const sm_runner_options *runner_options,
                           const sm_amplicon_options *opts, sm_amplicon_finder **finder, sm_error *err) {
    *finder = NULL;
    if (err) memset(err, 0, sizeof *err);
    sm_runner_options ro;
    if (runner_options) ro = *runner_options;
    else sm_runner_options_init(&ro);
    sm_db_info info;
    sm_db_get_info(db, &info);
    if (!opts->set || !opts->out || opts->set->patterns.count != info.pattern_count || opts->set->count == 0)
        return sm_io_error(err, SM_ERR_INVALID, "amplicon: the database does not hold the primer pairs' patterns");
    if (info.strands != SM_STRAND_BOTH || info.alphabet != SM_ALPHABET_DNA)
        return sm_io_error(err, SM_ERR_INVALID, "amplicon: the primers must be compiled as DNA on both strands");
    if (ro.anchor != SM_ANCHOR_NONE || ro.count_only || ro.max_hits_per_pattern || ro.max_hits_per_record ||
        ro.fewest_errors || ro.circular || ro.min_overlap)
        return sm_io_error(err, SM_ERR_INVALID, "amplicon: anchors, hit limits, counting, partial matches and "
                           "circular records do not apply");
    if (opts->format > SM_AMPLICON_FASTA || opts->rule.min_size > opts->rule.max_size)
        return sm_io_error(err, SM_ERR_INVALID, "amplicon: no such format, or a minimum size above the maximum");
    sm_amplicon_finder *f = calloc(1, sizeof *f);
    if (!f || !(f->primer_len = calloc(opts->set->count, sizeof *f->primer_len)) ||
        (opts->stats && !(f->file_products = calloc(2 * opts->set->count, sizeof *f->file_products)))) {
        if (f) free(f->primer_len);
        free(f);
        return sm_io_error(err, SM_ERR_NOMEM, "out of memory");
    }
    f->o = *opts;
    for (size_t i = 0; i < opts->set->count; i++)
        f->primer_len[i] = (uint32_t)(strlen(opts->set->pairs[i].forward) + strlen(opts->set->pairs[i].reverse));
    ro.on_hit = on_hit;
    ro.on_record_summary = NULL;
    ro.on_record_done = on_record_done;
    ro.ctx = f;
    int status = sm_runner_create(db, &ro, &f->runner, err);
    if (status != SM_OK) {
        sm_amplicon_finder_free(f);
        return status;
    }
    f->header_due = f->o.format == SM_AMPLICON_TSV && f->o.header;
    *finder = f;
    return SM_OK;
}

void sm_amplicon_finder_stats(const sm_amplicon_finder *finder, sm_amplicon_stats *stats) { *stats = finder->stats; }

void sm_amplicon_finder_free(sm_amplicon_finder *f) {
    if (!f) return;
    sm_runner_free(f->runner);
    free(f->queue);
    free(f->arena);
    free(f->hits);
    free(f->products);
    free(f->line);
    free(f->primer_len);
    free(f->file_products);
    free(f);
}

/* This file's counts into the report (added: several files sum). */
static void report_file(sm_amplicon_finder *f) {
    sm_stats *s = f->o.stats;
    uint64_t plus = 0, minus = 0;
    for (size_t i = 0; i < f->o.set->count; i++) plus += f->file_products[2 * i], minus += f->file_products[2 * i + 1];
    sm_stats_add(s, "records", "input", f->file_records);
    sm_stats_add(s, "records", "with_product", f->file_with_product);
    sm_stats_add(s, "bases", "input", f->file_bases);
    sm_stats_add(s, "products", "total", plus + minus);
    sm_stats_add(s, "products", "plus", plus);
    sm_stats_add(s, "products", "minus", minus);
    for (size_t i = 0; i < f->o.set->count; i++) {
        uint64_t p = f->file_products[2 * i], m = f->file_products[2 * i + 1];
        sm_stats_item(s, "pairs", f->o.set->pairs[i].name, "products", p + m);
        sm_stats_item(s, "pairs", f->o.set->pairs[i].name, "plus", p);
        sm_stats_item(s, "pairs", f->o.set->pairs[i].name, "minus", m);
        f->file_products[2 * i] = f->file_products[2 * i + 1] = 0;
    }
    f->file_records = f->file_with_product = f->file_bases = 0;
}

int sm_amplicon_finder_run(sm_amplicon_finder *f, const char *path, sm_error *err) {
    if (err) memset(err, 0, sizeof *err);
    const char *shown = strcmp(path, "-") == 0 ? "stdin" : path;
    sm_reader *reader = NULL;
    sm_error e;
    memset(&e, 0, sizeof e);
    int rc = sm_reader_open_threads(path, SM_INPUT_AUTO, f->o.reader_threads, &reader, &e);
    if (rc != SM_OK) return sm_io_error(err, rc, "%s", e.message[0] ? e.message : sm_strerror(rc));
    f->file = path;
    f->reader = reader;
    if (f->o.progress) sm_progress_begin_file(f->o.progress, path);
    amplicon_scan in = {f, err, 0};
    sm_scan_reader_options so;
    sm_scan_reader_options_init(&so);
    so.ctx = &in;
    so.on_record = on_record;
    so.on_sequence = needs_sequence(&f->o) ? on_sequence : NULL;
    so.on_progress = on_piece_fed;
    int status = sm_runner_scan_reader(f->runner, reader, &so, &e);
    if (status == SM_OK) status = sm_runner_flush(f->runner);
    if (status != SM_OK || f->stop) {
        if (in.failed) rc = err->code ? err->code : status;
        else if (f->nomem) rc = sm_io_error(err, SM_ERR_NOMEM, "%s: out of memory", shown);
        else if (f->stop) rc = sm_io_error(err, SM_ERR_IO, "write error");
        else if (e.message[0]) rc = sm_io_error(err, status, "%s", e.message);
        else rc = sm_io_error(err, status, "%s: %s", shown, sm_strerror(status));
    }
    sm_reader_close(reader);
    f->reader = NULL;
    if (rc == SM_OK && write_header(f) != 0) rc = sm_io_error(err, SM_ERR_IO, "write error");
    if (rc == SM_OK && f->o.stats) report_file(f);
    return rc;
}

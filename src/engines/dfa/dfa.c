/* DFA representation: building the flat block, access, checks, renumbering,
 * minimisation, the text dump and conversion of the dictionary automaton. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "engines/automaton/automaton.h"
#include "engines/dfa/dfa_internal.h"
#include "engines/engine.h"

_Static_assert(sizeof(sm_dfa_layout) == 64, "the DFA header is 64 bytes");

static uint64_t align_up(uint64_t x) { return (x + SM_DFA_ALIGN - 1) / SM_DFA_ALIGN * SM_DFA_ALIGN; }

static void attach_views(sm_dfa *dfa) {
    dfa->layout = (const sm_dfa_layout *)dfa->bytes;
    dfa->column_of = (const uint16_t *)(dfa->bytes + dfa->layout->column_of_off);
    dfa->accept = (const uint64_t *)(dfa->bytes + dfa->layout->accept_off);
    dfa->table = (const uint32_t *)(dfa->bytes + dfa->layout->table_off);
}

int sm_dfa_build(uint32_t states, uint32_t columns, uint32_t start, const uint32_t *table, const uint64_t *accept,
                 const uint16_t column_of[256], sm_dfa **out, sm_error *err) {
    if (!out) return sm_set_error(err, SM_ERR_INVALID, "dfa: no place to store the DFA");
    *out = NULL;
    if (states == 0 || columns == 0)
        return sm_set_error(err, SM_ERR_INVALID, "dfa: a DFA needs at least one state and one column");
    if (columns > 256) return sm_set_error(err, SM_ERR_INVALID, "dfa: %u columns, more than 256", columns);
    if ((uint64_t)states * columns > 0x7FFFFFFFu)
        return sm_set_error(err, SM_ERR_LIMIT, "dfa: %u states x %u columns exceeds 2^31 table entries", states,
                            columns);
    if (start >= states) return sm_set_error(err, SM_ERR_INVALID, "dfa: start state %u out of range", start);
    if (!table || !column_of) return sm_set_error(err, SM_ERR_INVALID, "dfa: missing table or column map");
    for (int b = 0; b < 256; b++)
        if (column_of[b] != SM_DFA_UNKNOWN && column_of[b] >= columns)
            return sm_set_error(err, SM_ERR_INVALID, "dfa: byte 0x%02X maps to column %u of %u", b, column_of[b],
                                columns);
    size_t entries = (size_t)states * columns;
    for (size_t i = 0; i < entries; i++)
        if (table[i] >= states)
            return sm_set_error(err, SM_ERR_INVALID, "dfa: state %zu column %zu goes to %u, out of range",
                                i / columns, i % columns, table[i]);

    sm_dfa_layout h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, SM_DFA_MAGIC, 8);
    h.version = SM_DFA_FORMAT_VERSION;
    h.byte_order = SM_DFA_BYTE_ORDER_MARK;
    h.states = states;
    h.columns = columns;
    h.start = start;
    h.column_of_off = align_up(sizeof h);
    h.accept_off = align_up(h.column_of_off + 256 * sizeof(uint16_t));
    size_t words = sm_dfa_accept_words(states);
    h.table_off = align_up(h.accept_off + words * sizeof(uint64_t));
    h.size = align_up(h.table_off + (uint64_t)entries * sizeof(uint32_t));

    sm_dfa *dfa = malloc(sizeof *dfa);
    uint8_t *bytes = sm_aligned_alloc(h.size);
    if (!dfa || !bytes) {
        free(dfa);
        sm_aligned_free(bytes);
        return sm_set_error(err, SM_ERR_NOMEM, "dfa: out of memory for %u states", states);
    }
    memset(bytes, 0, h.size);
    memcpy(bytes, &h, sizeof h);
    memcpy(bytes + h.column_of_off, column_of, 256 * sizeof(uint16_t));
    uint64_t *acc = (uint64_t *)(bytes + h.accept_off);
    if (accept) {
        memcpy(acc, accept, words * sizeof(uint64_t));
        if (states & 63) acc[words - 1] &= ((uint64_t)1 << (states & 63)) - 1;
    }
    memcpy(bytes + h.table_off, table, entries * sizeof(uint32_t));
    dfa->bytes = bytes;
    dfa->size = h.size;
    attach_views(dfa);
    *out = dfa;
    return SM_OK;
}

void sm_dfa_free(sm_dfa *dfa) {
    if (!dfa) return;
    sm_aligned_free(dfa->bytes);
    free(dfa);
}

const void *sm_dfa_bytes(const sm_dfa *dfa, size_t *size) {
    if (size) *size = dfa ? dfa->size : 0;
    return dfa ? dfa->bytes : NULL;
}

int sm_dfa_from_bytes(const void *bytes, size_t size, sm_dfa **out, sm_error *err) {
    if (!out) return sm_set_error(err, SM_ERR_INVALID, "dfa: no place to store the DFA");
    *out = NULL;
    sm_dfa_layout h;
    if (!bytes) return sm_set_error(err, SM_ERR_INVALID, "dfa: no bytes given");
    if (size < sizeof h) return sm_set_error(err, SM_ERR_FORMAT, "dfa: block too short");
    memcpy(&h, bytes, sizeof h);
    if (memcmp(h.magic, SM_DFA_MAGIC, 8) != 0) return sm_set_error(err, SM_ERR_FORMAT, "dfa: not a DFA block");
    if (h.byte_order != SM_DFA_BYTE_ORDER_MARK)
        return sm_set_error(err, SM_ERR_VERSION, "dfa: block written with the other byte order");
    if (h.version != SM_DFA_FORMAT_VERSION)
        return sm_set_error(err, SM_ERR_VERSION, "dfa: format version %u, expected %u", h.version,
                            SM_DFA_FORMAT_VERSION);
    if (h.size != size || h.states == 0 || h.columns == 0 || h.columns > 256 ||
        (uint64_t)h.states * h.columns > 0x7FFFFFFFu)
        return sm_set_error(err, SM_ERR_FORMAT, "dfa: inconsistent sizes in the block");
    uint64_t words = sm_dfa_accept_words(h.states);
    uint64_t entries = (uint64_t)h.states * h.columns;
    if (h.column_of_off % 8 || h.accept_off % 8 || h.table_off % 8 || h.column_of_off < sizeof h ||
        h.column_of_off > size || size - h.column_of_off < 512 || h.accept_off > size ||
        (size - h.accept_off) / 8 < words || h.table_off > size || (size - h.table_off) / 4 < entries)
        return sm_set_error(err, SM_ERR_FORMAT, "dfa: section offsets out of bounds");
    /* Copy to aligned memory before reading the tables as integers. */
    uint8_t *copy = sm_aligned_alloc(size);
    if (!copy) return sm_set_error(err, SM_ERR_NOMEM, "dfa: out of memory");
    memcpy(copy, bytes, size);
    int rc = sm_dfa_build(h.states, h.columns, h.start, (const uint32_t *)(copy + h.table_off),
                          (const uint64_t *)(copy + h.accept_off), (const uint16_t *)(copy + h.column_of_off), out,
                          err);
    sm_aligned_free(copy);
    if (rc != SM_OK && rc != SM_ERR_NOMEM) {
        /* a bad table in a block is a bad block: keep err's code the status returned */
        rc = SM_ERR_FORMAT;
        if (err) err->code = rc;
    }
    return rc;
}

/* A NULL DFA has no state, column or transition. */
uint32_t sm_dfa_state_count(const sm_dfa *dfa) { return dfa ? dfa->layout->states : 0; }
uint32_t sm_dfa_column_count(const sm_dfa *dfa) { return dfa ? dfa->layout->columns : 0; }
uint32_t sm_dfa_start(const sm_dfa *dfa) { return dfa ? dfa->layout->start : SM_DFA_NO_STATE; }

int sm_dfa_is_accepting(const sm_dfa *dfa, uint32_t state) {
    return dfa && state < dfa->layout->states && sm_dfa_bit(dfa->accept, state);
}

uint32_t sm_dfa_column_of(const sm_dfa *dfa, uint8_t byte) { return dfa ? dfa->column_of[byte] : SM_DFA_UNKNOWN; }

uint32_t sm_dfa_target(const sm_dfa *dfa, uint32_t state, uint32_t column) {
    if (!dfa) return SM_DFA_NO_STATE;
    return dfa->table[(size_t)state * dfa->layout->columns + column];
}

uint32_t sm_dfa_next(const sm_dfa *dfa, uint32_t state, uint8_t byte) {
    if (!dfa) return SM_DFA_NO_STATE;
    uint32_t c = dfa->column_of[byte];
    if (c == SM_DFA_UNKNOWN) return SM_DFA_NO_STATE;
    return dfa->table[(size_t)state * dfa->layout->columns + c];
}

/* ------------------------------------------------------------ renumbering */

int sm_dfa_renumber(const sm_dfa *dfa, const uint32_t *order, uint32_t keep, sm_dfa **out, sm_error *err) {
    const uint32_t n = dfa->layout->states, C = dfa->layout->columns;
    uint32_t *table = malloc((size_t)keep * C * sizeof *table);
    uint64_t *accept = calloc(sm_dfa_accept_words(keep), sizeof *accept);
    int rc = SM_OK;
    if (!table || !accept) {
        rc = sm_set_error(err, SM_ERR_NOMEM, "dfa: out of memory renumbering %u states", n);
        goto done;
    }
    for (uint32_t s = 0; s < n; s++) {
        uint32_t to = order[s];
        if (to == SM_DFA_NO_STATE) continue;
        for (uint32_t c = 0; c < C; c++) table[(size_t)to * C + c] = order[dfa->table[(size_t)s * C + c]];
        if (sm_dfa_bit(dfa->accept, s)) sm_dfa_set_bit(accept, to);
    }
    rc = sm_dfa_build(keep, C, order[dfa->layout->start], table, accept, dfa->column_of, out, err);
done:
    free(table);
    free(accept);
    return rc;
}

/* ------------------------------------------------------------ minimisation */

typedef struct {
    uint32_t *slots;   /* signature index + 1, 0 = empty */
    size_t mask;
} sig_table;

static uint64_t hash_words(const uint32_t *w, size_t n) {
    uint64_t h = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < n; i++) {
        h ^= w[i];
        h *= 0xFF51AFD7ED558CCDull;
        h ^= h >> 32;
    }
    return h;
}

int sm_dfa_minimize(const sm_dfa *dfa, sm_dfa **out, sm_error *err) {
    if (!out) return sm_set_error(err, SM_ERR_INVALID, "dfa: no place to store the DFA");
    *out = NULL;
    if (!dfa) return sm_set_error(err, SM_ERR_INVALID, "dfa: no DFA given");
    const uint32_t n = dfa->layout->states, C = dfa->layout->columns;
    const uint32_t *T = dfa->table;
    const size_t W = (size_t)C + 1;
    uint32_t *reach = malloc((size_t)n * sizeof *reach); /* reachable states, BFS order */
    uint32_t *cls = malloc((size_t)n * sizeof *cls);
    uint32_t *next_cls = malloc((size_t)n * sizeof *next_cls);
    uint32_t *sig = malloc((size_t)n * W * sizeof *sig);
    size_t slots = 16;
    while (slots < (size_t)n * 2) slots <<= 1;
    sig_table ht = {calloc(slots, sizeof(uint32_t)), slots - 1};
    uint32_t *order = malloc((size_t)n * sizeof *order);
    uint32_t *rep = malloc((size_t)n * sizeof *rep);
    uint32_t *table = NULL;
    uint64_t *accept = NULL;
    int rc = SM_OK;
    if (!reach || !cls || !next_cls || !sig || !ht.slots || !order || !rep) {
        rc = sm_set_error(err, SM_ERR_NOMEM, "dfa: out of memory minimising %u states", n);
        goto done;
    }
    /* Reachable states; cls doubles as the visited mark. */
    for (uint32_t s = 0; s < n; s++) cls[s] = SM_DFA_NO_STATE;
    uint32_t m = 0;
    reach[m++] = dfa->layout->start;
    cls[dfa->layout->start] = 0;
    for (uint32_t i = 0; i < m; i++)
        for (uint32_t c = 0; c < C; c++) {
            uint32_t t = T[(size_t)reach[i] * C + c];
            if (cls[t] == SM_DFA_NO_STATE) {
                cls[t] = 0;
                reach[m++] = t;
            }
        }
    /* Moore refinement: split classes by (own class, classes of the targets)
       until the class count stops growing. */
    int has_acc = 0, has_rej = 0;
    for (uint32_t i = 0; i < m; i++) {
        if (sm_dfa_bit(dfa->accept, reach[i])) has_acc = 1;
        else has_rej = 1;
    }
    for (uint32_t i = 0; i < m; i++) cls[reach[i]] = (has_acc && has_rej) ? (uint32_t)sm_dfa_bit(dfa->accept, reach[i]) : 0;
    uint32_t classes = (uint32_t)(has_acc + has_rej);
    for (;;) {
        memset(ht.slots, 0, slots * sizeof(uint32_t));
        uint32_t count = 0;
        for (uint32_t i = 0; i < m; i++) {
            uint32_t s = reach[i];
            uint32_t *w = sig + (size_t)count * W;
            w[0] = cls[s];
            for (uint32_t c = 0; c < C; c++) w[c + 1] = cls[T[(size_t)s * C + c]];
            size_t pos = hash_words(w, W) & ht.mask;
            for (;;) {
                uint32_t e = ht.slots[pos];
                if (e == 0) {
                    ht.slots[pos] = count + 1;
                    next_cls[s] = count++;
                    break;
                }
                if (memcmp(sig + (size_t)(e - 1) * W, w, W * sizeof *w) == 0) {
                    next_cls[s] = e - 1;
                    break;
                }
                pos = (pos + 1) & ht.mask;
            }
        }
        for (uint32_t i = 0; i < m; i++) cls[reach[i]] = next_cls[reach[i]];
        if (count == classes) break;
        classes = count;
    }
    /* Number the classes breadth-first from the start state's class. */
    for (uint32_t k = 0; k < classes; k++) order[k] = SM_DFA_NO_STATE;
    uint32_t numbered = 0;
    order[cls[dfa->layout->start]] = numbered;
    rep[numbered++] = dfa->layout->start;
    for (uint32_t i = 0; i < numbered; i++)
        for (uint32_t c = 0; c < C; c++) {
            uint32_t k = cls[T[(size_t)rep[i] * C + c]];
            if (order[k] == SM_DFA_NO_STATE) {
                order[k] = numbered;
                rep[numbered++] = T[(size_t)rep[i] * C + c];
            }
        }
    table = malloc((size_t)numbered * C * sizeof *table);
    accept = calloc(sm_dfa_accept_words(numbered), sizeof *accept);
    if (!table || !accept) {
        rc = sm_set_error(err, SM_ERR_NOMEM, "dfa: out of memory minimising %u states", n);
        goto done;
    }
    for (uint32_t i = 0; i < numbered; i++) {
        for (uint32_t c = 0; c < C; c++) table[(size_t)i * C + c] = order[cls[T[(size_t)rep[i] * C + c]]];
        if (sm_dfa_bit(dfa->accept, rep[i])) sm_dfa_set_bit(accept, i);
    }
    rc = sm_dfa_build(numbered, C, 0, table, accept, dfa->column_of, out, err);
done:
    free(reach);
    free(cls);
    free(next_cls);
    free(sig);
    free(ht.slots);
    free(order);
    free(rep);
    free(table);
    free(accept);
    return rc;
}

/* ------------------------------------------------------------------ dump */

/* The dump's text, with the CRC-32 of what was written so far: a file
   seqmatch writes ends with a line "# crc32 XXXXXXXX" over the lines before
   it, which the parser checks (a file written by hand has none). */
typedef struct {
    FILE *out;
    uLong crc;
} dump_out;

static void dump_put(dump_out *d, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void dump_put(dump_out *d, const char *fmt, ...) {
    char line[64];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n <= 0) return;
    size_t len = (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
    d->crc = crc32(d->crc, (const Bytef *)line, (uInt)len);
    fwrite(line, 1, len, d->out);
}

int sm_dfa_dump(const sm_dfa *dfa, FILE *out, sm_error *err) {
    if (!dfa || !out) return sm_set_error(err, SM_ERR_INVALID, "dfa: dump needs a DFA and a stream");
    const uint32_t n = dfa->layout->states, C = dfa->layout->columns;
    /* One printable byte per column gives the compact alphabet line. */
    int per_column[256];
    uint8_t symbol[256];
    int unknown = 0;
    for (uint32_t c = 0; c < C; c++) per_column[c] = 0;
    for (int b = 0; b < 256; b++) {
        uint32_t c = dfa->column_of[b];
        if (c == SM_DFA_UNKNOWN) {
            unknown = 1;
            continue;
        }
        per_column[c]++;
        symbol[c] = (uint8_t)b;
    }
    int compact = 1;
    for (uint32_t c = 0; c < C && compact; c++)
        if (per_column[c] != 1 || symbol[c] < 0x21 || symbol[c] > 0x7E) compact = 0;
    if (compact && symbol[0] == '#') compact = 0; /* would read as a comment */
    if (!compact && unknown)
        return sm_set_error(err, SM_ERR_INVALID,
                            "dfa: cannot be written in the text format: some columns stand for several bytes or "
                            "none, and some bytes are outside the alphabet");
    dump_out d = {out, crc32(0L, Z_NULL, 0)};
    uint32_t shown = compact ? C : 256;
    dump_put(&d, "# %u states, %u %s\n", n, shown, compact ? "symbols" : "byte values");
    if (compact) {
        dump_put(&d, "alphabet ");
        for (uint32_t c = 0; c < C; c++) dump_put(&d, "%c", symbol[c]);
        dump_put(&d, "\n");
    } else {
        dump_put(&d, "alphabet bytes\n");
    }
    dump_put(&d, "states %u\nstart %u\n", n, dfa->layout->start);
    /* Accepting states, at most 16 a line (the line may repeat). */
    uint32_t on_line = 0, total = 0;
    for (uint32_t s = 0; s < n; s++) {
        if (!sm_dfa_bit(dfa->accept, s)) continue;
        if (on_line == 0) dump_put(&d, "accept");
        dump_put(&d, " %u", s);
        total++;
        if (++on_line == 16) {
            dump_put(&d, "\n");
            on_line = 0;
        }
    }
    if (on_line) dump_put(&d, "\n");
    if (total == 0) dump_put(&d, "accept\n");
    for (uint32_t s = 0; s < n; s++) {
        const uint32_t *row = dfa->table + (size_t)s * C;
        dump_put(&d, "%u", s);
        for (uint32_t k = 0; k < shown; k++) dump_put(&d, " %u", row[compact ? k : dfa->column_of[k]]);
        dump_put(&d, "\n");
        /* A reader that went away or a full disk stops a long dump now. */
        if ((s & 1023) == 1023 && ferror(out)) break;
    }
    fprintf(out, "%s%08lx\n", SM_DFA_CHECKSUM_LINE, (unsigned long)d.crc);
    if (fflush(out) != 0 || ferror(out)) return sm_set_error(err, SM_ERR_IO, "dfa: write error");
    return SM_OK;
}

/* --------------------------------------------------- dictionary automaton */

int sm_dfa_from_ac_section(const uint8_t *section, sm_dfa_match mode, sm_dfa **out, sm_error *err) {
    if (!out) return sm_set_error(err, SM_ERR_INVALID, "dfa: no place to store the DFA");
    *out = NULL;
    const sm_ac_header *h = (const sm_ac_header *)section;
    const uint32_t C = h->columns, n = h->states;
    if (mode != SM_DFA_CONTAINS && mode != SM_DFA_ENDS)
        return sm_set_error(err, SM_ERR_INVALID, "dfa: unknown match mode %d", (int)mode);
    const uint32_t total = mode == SM_DFA_CONTAINS ? n + 1 : n;
    if (C == 0 || n == 0 || total == 0 || (uint64_t)total * C > 0x7FFFFFFFu)
        return sm_set_error(err, SM_ERR_LIMIT, "dfa: automaton of %u states x %u columns is too large", n, C);
    const uint32_t *delta = (const uint32_t *)(section + h->delta_off);
    const uint32_t *out_index = (const uint32_t *)(section + h->out_index_off);
    uint32_t *table = malloc((size_t)total * C * sizeof *table);
    uint64_t *accept = calloc(sm_dfa_accept_words(total), sizeof *accept);
    if (!table || !accept) {
        free(table);
        free(accept);
        return sm_set_error(err, SM_ERR_NOMEM, "dfa: out of memory for %u states", total);
    }
    const uint32_t found = n; /* CONTAINS: absorbing "a pattern occurred" state */
    for (uint32_t s = 0; s < n; s++)
        for (uint32_t c = 0; c < C; c++) {
            uint32_t e = delta[(size_t)s * C + c];
            uint32_t t = (e & ~SM_AC_OUT_FLAG) / C;
            table[(size_t)s * C + c] = (mode == SM_DFA_CONTAINS && (e & SM_AC_OUT_FLAG)) ? found : t;
        }
    if (mode == SM_DFA_CONTAINS) {
        for (uint32_t c = 0; c < C; c++) table[(size_t)found * C + c] = found;
        sm_dfa_set_bit(accept, found);
    } else {
        for (uint32_t s = 0; s < n; s++)
            if (out_index[s + 1] > out_index[s]) sm_dfa_set_bit(accept, s);
    }
    uint16_t column_of[256];
    for (int b = 0; b < 256; b++) column_of[b] = h->class_of[b];
    int rc = sm_dfa_build(total, C, 0, table, accept, column_of, out, err);
    free(table);
    free(accept);
    return rc;
}

int sm_dfa_from_db(const sm_db *db, sm_dfa_match mode, sm_dfa **out, sm_error *err) {
    if (!out) return sm_set_error(err, SM_ERR_INVALID, "dfa: no place to store the DFA");
    *out = NULL;
    if (!db) return sm_set_error(err, SM_ERR_INVALID, "dfa: no database");
    const sm_db_header *h = sm_db_head(db);
    const uint8_t *section = sm_db_section_of_kind(db, SM_SECTION_AUTOMATON, NULL);
    uint32_t elsewhere = h->pattern_count - sm_db_patterns_of_kind(db, SM_SECTION_AUTOMATON);
    if (elsewhere > 0 || !section)
        return sm_set_error(err, SM_ERR_INVALID,
                            "dfa: %u of the %u patterns do not use the dictionary automaton; compile them with "
                            "the automaton engine",
                            elsewhere, h->pattern_count);
    return sm_dfa_from_ac_section(section, mode, out, err);
}

int sm_dfa_ac_chunk_states(const sm_dfa_matcher *matcher, const uint8_t *section, uint32_t state_row,
                           const uint8_t *text, const size_t *cuts, size_t chunks, unsigned threads,
                           uint32_t *row_offsets, sm_error *err) {
    const sm_ac_header *h = (const sm_ac_header *)section;
    sm_dfa_parallel_options po;
    sm_dfa_parallel_options_init(&po);
    po.threads = threads;
    int rc = sm_dfa_chunk_states(matcher, state_row / h->columns, text, cuts, chunks, &po, row_offsets, err);
    if (rc != SM_OK) return rc;
    for (size_t i = 0; i <= chunks; i++) row_offsets[i] *= h->columns;
    return SM_OK;
}

/* Regular expression -> DFA: a recursive-descent parser builds a syntax
 * tree, Thompson's construction turns it into an NFA, and the subset
 * construction into a complete DFA over byte classes (bytes that every
 * symbol set of the expression treats alike share a column). The DFA
 * accepts exactly the strings the whole expression matches.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engines/dfa/dfa_internal.h"

#define DEFAULT_MAX_STATES 100000u
#define MAX_NESTING 500
#define MAX_REPEAT 1000
#define MAX_NFA_STATES 4000000u
/* NFA states the subset construction may visit in all (closures and the
   scans of subsets): SUBSET_WORK_PER_STATE for every DFA state allowed, and
   at least MIN_SUBSET_WORK (the default limit gives about 2 * 10^8, a few
   seconds). Every DFA state can hold a large part of the NFA, so a short
   expression such as (a.*{600}b.*){600}c{600} would otherwise take minutes
   and gigabytes while staying under max_states; real expressions need far
   less (10^4 per state for {0,1000}, 150 for (a|b)*a(a|b){15}). */
#define SUBSET_WORK_PER_STATE 2048u
#define MIN_SUBSET_WORK (1ull << 24)

typedef struct {
    uint64_t w[4];
} byteset;

static void set_add(byteset *s, unsigned b) { s->w[b >> 6] |= (uint64_t)1 << (b & 63); }
static int set_has(const byteset *s, unsigned b) { return (int)((s->w[b >> 6] >> (b & 63)) & 1u); }
static void set_add_range(byteset *s, unsigned lo, unsigned hi) {
    for (unsigned b = lo; b <= hi; b++) set_add(s, b);
}
static void set_union(byteset *s, const byteset *t) {
    for (int i = 0; i < 4; i++) s->w[i] |= t->w[i];
}

enum { N_EMPTY, N_SET, N_CAT, N_ALT, N_REPEAT };

typedef struct {
    int kind;
    uint32_t set;          /* N_SET */
    uint32_t first, count; /* N_CAT, N_ALT: children kids[first .. first + count) */
    uint32_t child;        /* N_REPEAT */
    int min, max;          /* N_REPEAT; max < 0: unbounded */
} node;

typedef struct {
    const uint8_t *src;
    size_t len, pos;
    int dna;
    int depth;
    node *nodes;
    size_t n_nodes, cap_nodes;
    uint32_t *kids;
    size_t n_kids, cap_kids;
    byteset *sets;
    size_t n_sets, cap_sets;
    sm_error *err;
    int status;
} parser;

static int grow(void **p, size_t *cap, size_t need, size_t size) {
    if (need <= *cap) return 0;
    size_t c = *cap ? *cap : 64;
    while (c < need) c *= 2;
    void *g = realloc(*p, c * size);
    if (!g) return -1;
    *p = g;
    *cap = c;
    return 0;
}

static int fail_at(parser *ps, size_t pos, const char *what) {
    if (ps->status == SM_OK)
        ps->status = sm_set_error(ps->err, SM_ERR_PATTERN, "regex: position %zu: %s", pos + 1, what);
    return -1;
}

static int out_of_memory(parser *ps) {
    if (ps->status == SM_OK) ps->status = sm_set_error(ps->err, SM_ERR_NOMEM, "regex: out of memory");
    return -1;
}

static int new_node(parser *ps, int kind) {
    if (grow((void **)&ps->nodes, &ps->cap_nodes, ps->n_nodes + 1, sizeof(node))) return out_of_memory(ps);
    node *n = &ps->nodes[ps->n_nodes];
    memset(n, 0, sizeof *n);
    n->kind = kind;
    return (int)ps->n_nodes++;
}

static int new_set_node(parser *ps, const byteset *s) {
    if (grow((void **)&ps->sets, &ps->cap_sets, ps->n_sets + 1, sizeof(byteset))) return out_of_memory(ps);
    ps->sets[ps->n_sets] = *s;
    int id = new_node(ps, N_SET);
    if (id < 0) return -1;
    ps->nodes[id].set = (uint32_t)ps->n_sets++;
    return id;
}

/* Nucleotide letters: the bytes (both cases, U with T) of an IUPAC code. */
static int dna_letter_set(uint8_t c, byteset *s) {
    static const char *codes = "ACGTURYSWKMBDHVN";
    static const uint8_t bits[] = {1, 2, 4, 8, 8, 5, 10, 6, 9, 12, 3, 14, 13, 11, 7, 15};
    if (c >= 'a' && c <= 'z') c = (uint8_t)(c - 'a' + 'A');
    const char *at = c ? strchr(codes, c) : NULL;
    if (!at) return -1;
    unsigned m = bits[at - codes];
    memset(s, 0, sizeof *s);
    if (m & 1) set_add(s, 'A'), set_add(s, 'a');
    if (m & 2) set_add(s, 'C'), set_add(s, 'c');
    if (m & 4) set_add(s, 'G'), set_add(s, 'g');
    if (m & 8) set_add(s, 'T'), set_add(s, 't'), set_add(s, 'U'), set_add(s, 'u');
    return 0;
}

static void any_set(const parser *ps, byteset *s) {
    if (ps->dna) dna_letter_set('N', s);
    else memset(s, 0xFF, sizeof *s);
}

static void complement(const parser *ps, byteset *s) {
    byteset all;
    any_set(ps, &all);
    for (int i = 0; i < 4; i++) s->w[i] = all.w[i] & ~s->w[i];
}

static int hex_digit(uint8_t c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* After a backslash (ps->pos at the escaped byte): a class escape fills set
   and returns 1; a single byte is stored in *byte and returns 0; -1 on error. */
static int parse_escape(parser *ps, byteset *set, uint8_t *byte) {
    size_t at = ps->pos - 1;
    if (ps->pos >= ps->len) return fail_at(ps, at, "the expression ends with a lone backslash");
    uint8_t c = ps->src[ps->pos++];
    if (ps->dna) {
        if (c >= 0x21 && c <= 0x7E && !((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')))
            return fail_at(ps, at, "dna expressions have no punctuation symbols to escape");
        return fail_at(ps, at, "escapes are not used in dna expressions");
    }
    memset(set, 0, sizeof *set);
    switch (c) {
    case 'n': *byte = '\n'; return 0;
    case 't': *byte = '\t'; return 0;
    case 'r': *byte = '\r'; return 0;
    case 'f': *byte = '\f'; return 0;
    case 'v': *byte = '\v'; return 0;
    case '0': *byte = 0; return 0;
    case 'x': {
        int h = ps->pos + 1 < ps->len + 0 ? hex_digit(ps->src[ps->pos]) : -1;
        int l = ps->pos + 1 < ps->len + 0 ? hex_digit(ps->src[ps->pos + 1]) : -1;
        if (h < 0 || l < 0) return fail_at(ps, at, "\\x needs two hexadecimal digits");
        ps->pos += 2;
        *byte = (uint8_t)(h * 16 + l);
        return 0;
    }
    case 'd': case 'D':
        set_add_range(set, '0', '9');
        if (c == 'D') complement(ps, set);
        return 1;
    case 'w': case 'W':
        set_add_range(set, '0', '9');
        set_add_range(set, 'a', 'z');
        set_add_range(set, 'A', 'Z');
        set_add(set, '_');
        if (c == 'W') complement(ps, set);
        return 1;
    case 's': case 'S':
        set_add(set, ' '), set_add(set, '\t'), set_add(set, '\n'), set_add(set, '\r'), set_add(set, '\f'),
            set_add(set, '\v');
        if (c == 'S') complement(ps, set);
        return 1;
    default:
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '1' && c <= '9')) {
            char msg[64];
            snprintf(msg, sizeof msg, "unknown escape '\\%c'", c);
            return fail_at(ps, at, msg);
        }
        *byte = c;
        return 0;
    }
}

/* ps->pos just after '['. */
static int parse_class(parser *ps) {
    size_t open = ps->pos - 1;
    byteset set;
    memset(&set, 0, sizeof set);
    int negate = 0;
    if (ps->pos < ps->len && ps->src[ps->pos] == '^') {
        negate = 1;
        ps->pos++;
    }
    int first = 1;
    for (;;) {
        if (ps->pos >= ps->len) return fail_at(ps, open, "unterminated '[' class");
        uint8_t c = ps->src[ps->pos];
        if (c == ']' && !first) {
            ps->pos++;
            break;
        }
        first = 0;
        size_t at = ps->pos++;
        uint8_t lo;
        if (c == '\\') {
            byteset esc;
            int r = parse_escape(ps, &esc, &lo);
            if (r < 0) return -1;
            if (r == 1) {
                set_union(&set, &esc);
                continue;
            }
        } else if (ps->dna) {
            byteset letters;
            if (dna_letter_set(c, &letters) != 0) return fail_at(ps, at, "not a DNA or IUPAC letter");
            set_union(&set, &letters);
            if (ps->pos + 1 < ps->len && ps->src[ps->pos] == '-' && ps->src[ps->pos + 1] != ']')
                return fail_at(ps, ps->pos, "ranges are not used in dna expressions");
            continue;
        } else {
            lo = c;
        }
        if (ps->pos + 1 < ps->len && ps->src[ps->pos] == '-' && ps->src[ps->pos + 1] != ']') {
            size_t dash = ps->pos++;
            uint8_t hi = ps->src[ps->pos++];
            if (hi == '\\') {
                byteset esc;
                int r = parse_escape(ps, &esc, &hi);
                if (r < 0) return -1;
                if (r == 1) return fail_at(ps, dash, "a range cannot end in a class escape");
            }
            if (hi < lo) return fail_at(ps, dash, "range out of order");
            set_add_range(&set, lo, hi);
        } else {
            set_add(&set, lo);
        }
    }
    if (negate) complement(ps, &set);
    return new_set_node(ps, &set);
}

static int parse_alt(parser *ps);

static int parse_atom(parser *ps) {
    size_t at = ps->pos;
    uint8_t c = ps->src[ps->pos++];
    byteset set;
    switch (c) {
    case '(': {
        if (++ps->depth > MAX_NESTING) return fail_at(ps, at, "groups nested too deeply");
        int inner = parse_alt(ps);
        ps->depth--;
        if (inner < 0) return -1;
        if (ps->pos >= ps->len || ps->src[ps->pos] != ')') return fail_at(ps, at, "unmatched '('");
        ps->pos++;
        return inner;
    }
    case ')':
        return fail_at(ps, at, "unmatched ')'");
    case '[':
        return parse_class(ps);
    case '.':
        any_set(ps, &set);
        return new_set_node(ps, &set);
    case '*': case '+': case '?': case '{':
        return fail_at(ps, at, "nothing to repeat");
    case '^':
        if (at != 0)
            return fail_at(ps, at, "'^' only at the start (the whole input must match anyway); write \\^ for the symbol");
        return new_node(ps, N_EMPTY);
    case '$':
        if (at != ps->len - 1)
            return fail_at(ps, at, "'$' only at the end (the whole input must match anyway); write \\$ for the symbol");
        return new_node(ps, N_EMPTY);
    case '\\': {
        uint8_t b = 0;
        int r = parse_escape(ps, &set, &b);
        if (r < 0) return -1;
        if (r == 0) {
            memset(&set, 0, sizeof set);
            set_add(&set, b);
        }
        return new_set_node(ps, &set);
    }
    default:
        if (ps->dna) {
            if (dna_letter_set(c, &set) != 0) {
                char msg[80];
                if (c >= 0x21 && c <= 0x7E) snprintf(msg, sizeof msg, "'%c' is not a DNA or IUPAC letter", c);
                else snprintf(msg, sizeof msg, "byte 0x%02X is not a DNA or IUPAC letter", c);
                return fail_at(ps, at, msg);
            }
        } else {
            memset(&set, 0, sizeof set);
            set_add(&set, c);
        }
        return new_set_node(ps, &set);
    }
}

static int parse_bound(parser *ps, int *value) {
    size_t start = ps->pos;
    long v = 0;
    while (ps->pos < ps->len && ps->src[ps->pos] >= '0' && ps->src[ps->pos] <= '9') {
        v = v * 10 + (ps->src[ps->pos++] - '0');
        if (v > MAX_REPEAT) return -2;
    }
    if (ps->pos == start) return -1;
    *value = (int)v;
    return 0;
}

static int parse_repeat(parser *ps) {
    int atom = parse_atom(ps);
    if (atom < 0) return -1;
    int wraps = 0;
    while (ps->pos < ps->len) {
        size_t at = ps->pos;
        uint8_t c = ps->src[at];
        int min, max;
        if (c == '*') min = 0, max = -1;
        else if (c == '+') min = 1, max = -1;
        else if (c == '?') min = 0, max = 1;
        else if (c == '{') {
            ps->pos++;
            int r = parse_bound(ps, &min);
            if (r == -2) return fail_at(ps, at, "repetition count over 1000");
            if (r < 0) return fail_at(ps, at, "'{' needs {m}, {m,} or {m,n}");
            max = min;
            if (ps->pos < ps->len && ps->src[ps->pos] == ',') {
                ps->pos++;
                if (ps->pos < ps->len && ps->src[ps->pos] == '}') max = -1;
                else {
                    r = parse_bound(ps, &max);
                    if (r == -2) return fail_at(ps, at, "repetition count over 1000");
                    if (r < 0) return fail_at(ps, at, "'{' needs {m}, {m,} or {m,n}");
                }
            }
            if (ps->pos >= ps->len || ps->src[ps->pos] != '}') return fail_at(ps, at, "unterminated '{'");
            if (max >= 0 && max < min) return fail_at(ps, at, "repetition {m,n} with n < m");
        } else {
            break;
        }
        ps->pos++;
        if (++wraps + ps->depth > MAX_NESTING) return fail_at(ps, at, "repetitions nested too deeply");
        int rep = new_node(ps, N_REPEAT);
        if (rep < 0) return -1;
        ps->nodes[rep].child = (uint32_t)atom;
        ps->nodes[rep].min = min;
        ps->nodes[rep].max = max;
        atom = rep;
    }
    return atom;
}

/* Collects items into a CAT or ALT node (or returns the only item). */
static int make_list(parser *ps, int kind, const uint32_t *items, size_t n) {
    if (n == 1) return (int)items[0];
    if (grow((void **)&ps->kids, &ps->cap_kids, ps->n_kids + n, sizeof(uint32_t))) return out_of_memory(ps);
    int id = new_node(ps, kind);
    if (id < 0) return -1;
    ps->nodes[id].first = (uint32_t)ps->n_kids;
    ps->nodes[id].count = (uint32_t)n;
    memcpy(ps->kids + ps->n_kids, items, n * sizeof *items);
    ps->n_kids += n;
    return id;
}

static int parse_cat(parser *ps) {
    uint32_t *items = NULL;
    size_t n = 0, cap = 0;
    while (ps->pos < ps->len && ps->src[ps->pos] != '|' && ps->src[ps->pos] != ')') {
        int item = parse_repeat(ps);
        if (item < 0 || grow((void **)&items, &cap, n + 1, sizeof *items)) {
            free(items);
            return item < 0 ? -1 : out_of_memory(ps);
        }
        items[n++] = (uint32_t)item;
    }
    int id = n == 0 ? new_node(ps, N_EMPTY) : make_list(ps, N_CAT, items, n);
    free(items);
    return id;
}

static int parse_alt(parser *ps) {
    uint32_t *items = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        int item = parse_cat(ps);
        if (item < 0 || grow((void **)&items, &cap, n + 1, sizeof *items)) {
            free(items);
            return item < 0 ? -1 : out_of_memory(ps);
        }
        items[n++] = (uint32_t)item;
        if (ps->pos < ps->len && ps->src[ps->pos] == '|') {
            ps->pos++;
            continue;
        }
        break;
    }
    int id = make_list(ps, N_ALT, items, n);
    free(items);
    return id;
}

/* ------------------------------------------------------------------ NFA */

enum { S_EPS, S_SET, S_MATCH };

typedef struct {
    uint8_t kind;
    uint32_t set;
    int32_t out, out2; /* -1 = none */
} nstate;

typedef struct {
    nstate *st;
    size_t n, cap;
    parser *ps;
} nfa;

typedef struct {
    int32_t start, end; /* end: an S_EPS state whose out is still open */
} frag;

static int32_t nfa_add(nfa *a, uint8_t kind, uint32_t set, int32_t out, int32_t out2) {
    if (a->n >= MAX_NFA_STATES) {
        if (a->ps->status == SM_OK)
            a->ps->status = sm_set_error(a->ps->err, SM_ERR_LIMIT,
                                         "regex: the expression needs more than %u automaton states (repetitions "
                                         "too large)", MAX_NFA_STATES);
        return -1;
    }
    if (grow((void **)&a->st, &a->cap, a->n + 1, sizeof(nstate))) {
        out_of_memory(a->ps);
        return -1;
    }
    a->st[a->n] = (nstate){kind, set, out, out2};
    return (int32_t)a->n++;
}

static int build(nfa *a, uint32_t id, frag *f);

static int build_repeat(nfa *a, const node *nd, frag *f) {
    int32_t e = nfa_add(a, S_EPS, 0, -1, -1);
    if (e < 0) return -1;
    *f = (frag){e, e};
    for (int i = 0; i < nd->min; i++) {
        frag x;
        if (build(a, nd->child, &x)) return -1;
        a->st[f->end].out = x.start;
        f->end = x.end;
    }
    if (nd->max < 0) {
        frag x;
        if (build(a, nd->child, &x)) return -1;
        int32_t out = nfa_add(a, S_EPS, 0, -1, -1);
        int32_t split = out < 0 ? -1 : nfa_add(a, S_EPS, 0, x.start, out);
        if (split < 0) return -1;
        a->st[x.end].out = split;
        a->st[f->end].out = split;
        f->end = out;
        return 0;
    }
    for (int i = nd->min; i < nd->max; i++) {
        frag x;
        if (build(a, nd->child, &x)) return -1;
        int32_t out = nfa_add(a, S_EPS, 0, -1, -1);
        int32_t split = out < 0 ? -1 : nfa_add(a, S_EPS, 0, x.start, out);
        if (split < 0) return -1;
        a->st[x.end].out = out;
        a->st[f->end].out = split;
        f->end = out;
    }
    return 0;
}

static int build(nfa *a, uint32_t id, frag *f) {
    const node nd = a->ps->nodes[id];
    switch (nd.kind) {
    case N_EMPTY: {
        int32_t s = nfa_add(a, S_EPS, 0, -1, -1);
        if (s < 0) return -1;
        *f = (frag){s, s};
        return 0;
    }
    case N_SET: {
        int32_t e = nfa_add(a, S_EPS, 0, -1, -1);
        int32_t s = e < 0 ? -1 : nfa_add(a, S_SET, nd.set, e, -1);
        if (s < 0) return -1;
        *f = (frag){s, e};
        return 0;
    }
    case N_CAT: {
        for (uint32_t i = 0; i < nd.count; i++) {
            frag x;
            if (build(a, a->ps->kids[nd.first + i], &x)) return -1;
            if (i == 0) *f = x;
            else {
                a->st[f->end].out = x.start;
                f->end = x.end;
            }
        }
        return 0;
    }
    case N_ALT: {
        int32_t end = nfa_add(a, S_EPS, 0, -1, -1);
        if (end < 0) return -1;
        int32_t entry = -1;
        /* A chain of splits, one per alternative. */
        for (uint32_t i = nd.count; i-- > 0;) {
            frag x;
            if (build(a, a->ps->kids[nd.first + i], &x)) return -1;
            a->st[x.end].out = end;
            if (entry < 0) entry = x.start;
            else if ((entry = nfa_add(a, S_EPS, 0, x.start, entry)) < 0) return -1;
        }
        *f = (frag){entry, end};
        return 0;
    }
    default:
        return build_repeat(a, &nd, f);
    }
}

/* ------------------------------------------------------- subset construction */

typedef struct {
    uint32_t *pool;         /* the NFA state lists of all DFA states, back to back */
    size_t pool_len, pool_cap;
    size_t *at;             /* DFA state -> start of its list in pool */
    uint32_t *size;         /* DFA state -> list length */
    size_t n, cap;
    uint32_t *slots;        /* hash table: DFA state + 1, 0 = empty */
    size_t slot_mask;
} subset_table;

static uint64_t hash_list(const uint32_t *v, size_t n) {
    uint64_t h = 0xCBF29CE484222325ull ^ n;
    for (size_t i = 0; i < n; i++) {
        h ^= v[i];
        h *= 0x100000001B3ull;
        h ^= h >> 31;
    }
    return h;
}

static int compare_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Finds or adds the DFA state of a sorted list; returns its number, or -1
   with *limit_hit set when adding would pass max_states, or -2 on no memory. */
static int64_t subset_intern(subset_table *t, const uint32_t *list, size_t n, uint32_t max_states) {
    uint64_t h = hash_list(list, n);
    size_t pos = h & t->slot_mask;
    for (;;) {
        uint32_t e = t->slots[pos];
        if (e == 0) break;
        if (t->size[e - 1] == n && memcmp(t->pool + t->at[e - 1], list, n * sizeof *list) == 0) return e - 1;
        pos = (pos + 1) & t->slot_mask;
    }
    if (t->n >= max_states) return -1;
    if (grow((void **)&t->pool, &t->pool_cap, t->pool_len + n + 1, sizeof(uint32_t)) ||
        grow((void **)&t->at, &t->cap, t->n + 1, sizeof(size_t)))
        return -2;
    uint32_t *grown = realloc(t->size, t->cap * sizeof *grown);
    if (!grown) return -2;
    t->size = grown;
    memcpy(t->pool + t->pool_len, list, n * sizeof *list);
    t->at[t->n] = t->pool_len;
    t->size[t->n] = (uint32_t)n;
    t->pool_len += n;
    t->slots[pos] = (uint32_t)(t->n + 1);
    t->n++;
    /* Keep the table at most half full. */
    if (t->n * 2 > t->slot_mask) {
        size_t slots = (t->slot_mask + 1) * 2;
        uint32_t *fresh = calloc(slots, sizeof *fresh);
        if (!fresh) return -2;
        for (size_t s = 0; s < t->n; s++) {
            size_t p = hash_list(t->pool + t->at[s], t->size[s]) & (slots - 1);
            while (fresh[p]) p = (p + 1) & (slots - 1);
            fresh[p] = (uint32_t)(s + 1);
        }
        free(t->slots);
        t->slots = fresh;
        t->slot_mask = slots - 1;
    }
    return (int64_t)t->n - 1;
}

/* Epsilon closure of seeds: the SET and MATCH states reached, sorted. Adds
   the states popped to *work. */
static size_t closure(const nfa *a, uint32_t *stack, size_t nseeds, uint32_t *mark, uint32_t gen, uint32_t *out,
                      uint64_t *work) {
    size_t top = nseeds, n = 0;
    while (top > 0) {
        ++*work;
        uint32_t s = stack[--top];
        if (mark[s] == gen) continue;
        mark[s] = gen;
        const nstate *st = &a->st[s];
        if (st->kind == S_EPS) {
            if (st->out >= 0 && mark[st->out] != gen) stack[top++] = (uint32_t)st->out;
            if (st->out2 >= 0 && mark[st->out2] != gen) stack[top++] = (uint32_t)st->out2;
        } else {
            out[n++] = s;
        }
    }
    qsort(out, n, sizeof *out, compare_u32);
    return n;
}

void sm_dfa_regex_options_init(sm_dfa_regex_options *opts) {
    if (!opts) return;
    memset(opts, 0, sizeof *opts);
    opts->alphabet = SM_ALPHABET_TEXT;
    opts->max_states = DEFAULT_MAX_STATES;
    opts->minimize = 1;
}

int sm_dfa_from_regex(const char *expr, size_t len, const sm_dfa_regex_options *opts, sm_dfa **out, sm_error *err) {
    if (!out) return sm_set_error(err, SM_ERR_INVALID, "regex: no place to store the DFA");
    *out = NULL;
    sm_dfa_regex_options defaults;
    if (!opts) {
        sm_dfa_regex_options_init(&defaults);
        opts = &defaults;
    }
    if (!expr && len) return sm_set_error(err, SM_ERR_INVALID, "regex: no expression");
    const uint32_t max_states = opts->max_states ? opts->max_states : DEFAULT_MAX_STATES;
    parser ps;
    memset(&ps, 0, sizeof ps);
    ps.src = (const uint8_t *)expr;
    ps.len = len;
    ps.dna = opts->alphabet == SM_ALPHABET_DNA;
    ps.err = err;
    nfa a = {NULL, 0, 0, &ps};
    subset_table t;
    memset(&t, 0, sizeof t);
    uint32_t *mark = NULL, *stack = NULL, *list = NULL, *table = NULL;
    uint64_t *accept = NULL;
    int rc = SM_OK;

    int root = parse_alt(&ps);
    if (root >= 0 && ps.pos < ps.len) fail_at(&ps, ps.pos, "unmatched ')'");
    if (ps.status != SM_OK) {
        rc = ps.status;
        goto done;
    }
    frag whole;
    int32_t match;
    if (build(&a, (uint32_t)root, &whole) || (match = nfa_add(&a, S_MATCH, 0, -1, -1)) < 0) {
        rc = ps.status;
        goto done;
    }
    a.st[whole.end].out = match;

    /* Byte classes: every set splits each class into members and non-members. */
    uint16_t cls[256];
    uint32_t classes = 1;
    memset(cls, 0, sizeof cls);
    for (size_t s = 0; s < ps.n_sets; s++) {
        int32_t id_of[2][256];
        for (uint32_t c = 0; c < classes; c++) id_of[0][c] = id_of[1][c] = -1;
        uint32_t next = 0;
        for (unsigned b = 0; b < 256; b++) {
            int in = set_has(&ps.sets[s], b);
            if (id_of[in][cls[b]] < 0) id_of[in][cls[b]] = (int32_t)next++;
            cls[b] = (uint16_t)id_of[in][cls[b]];
        }
        classes = next;
    }
    uint8_t rep[256];
    for (unsigned b = 256; b-- > 0;) rep[cls[b]] = (uint8_t)b;

    mark = calloc(a.n, sizeof *mark);
    stack = malloc((a.n * 3 + 2) * sizeof *stack);
    list = malloc((a.n + 1) * sizeof *list);
    t.slots = calloc(1024, sizeof *t.slots);
    t.slot_mask = 1023;
    if (!mark || !stack || !list || !t.slots) {
        rc = sm_set_error(err, SM_ERR_NOMEM, "regex: out of memory");
        goto done;
    }
    uint32_t gen = 1;
    uint64_t work = 0, work_limit = (uint64_t)max_states * SUBSET_WORK_PER_STATE;
    if (work_limit < MIN_SUBSET_WORK) work_limit = MIN_SUBSET_WORK;
    stack[0] = (uint32_t)whole.start;
    size_t n = closure(&a, stack, 1, mark, gen, list, &work);
    if (subset_intern(&t, list, n, max_states) < 0) {
        rc = sm_set_error(err, SM_ERR_NOMEM, "regex: out of memory");
        goto done;
    }
    size_t table_cap = 0;
    for (size_t d = 0; d < t.n; d++) {
        if (grow((void **)&table, &table_cap, (d + 1) * classes, sizeof(uint32_t))) {
            rc = sm_set_error(err, SM_ERR_NOMEM, "regex: out of memory");
            goto done;
        }
        for (uint32_t c = 0; c < classes; c++) {
            /* Copy the list: interning may move the pool. */
            size_t m = 0;
            for (uint32_t i = 0; i < t.size[d]; i++) {
                const nstate *st = &a.st[t.pool[t.at[d] + i]];
                if (st->kind == S_SET && set_has(&ps.sets[st->set], rep[c])) stack[m++] = (uint32_t)st->out;
            }
            if (++gen == 0) {
                memset(mark, 0, a.n * sizeof *mark);
                gen = 1;
            }
            work += t.size[d];
            n = closure(&a, stack, m, mark, gen, list, &work);
            if (work > work_limit) {
                rc = sm_set_error(err, SM_ERR_LIMIT,
                                  "regex: the DFA is too costly to build (over %llu steps of the subset "
                                  "construction); raise the state limit, or simplify the expression",
                                  (unsigned long long)work_limit);
                goto done;
            }
            int64_t id = subset_intern(&t, list, n, max_states);
            if (id == -1) {
                rc = sm_set_error(err, SM_ERR_LIMIT,
                                  "regex: the subset construction needs more than %u states, before the DFA "
                                  "is minimised (raise the state limit, or simplify the expression)",
                                  max_states);
                goto done;
            }
            if (id < 0) {
                rc = sm_set_error(err, SM_ERR_NOMEM, "regex: out of memory");
                goto done;
            }
            table[d * classes + c] = (uint32_t)id;
        }
    }
    accept = calloc(sm_dfa_accept_words((uint32_t)t.n), sizeof *accept);
    if (!accept) {
        rc = sm_set_error(err, SM_ERR_NOMEM, "regex: out of memory");
        goto done;
    }
    for (size_t d = 0; d < t.n; d++)
        for (uint32_t i = 0; i < t.size[d]; i++)
            if (a.st[t.pool[t.at[d] + i]].kind == S_MATCH) sm_dfa_set_bit(accept, (uint32_t)d);
    uint16_t column_of[256];
    for (int b = 0; b < 256; b++) column_of[b] = cls[b];
    sm_dfa *raw = NULL;
    rc = sm_dfa_build((uint32_t)t.n, classes, 0, table, accept, column_of, &raw, err);
    if (rc == SM_OK && opts->minimize) {
        rc = sm_dfa_minimize(raw, out, err);
        sm_dfa_free(raw);
    } else if (rc == SM_OK) {
        *out = raw;
    }
done:
    free(ps.nodes);
    free(ps.kids);
    free(ps.sets);
    free(a.st);
    free(t.pool);
    free(t.at);
    free(t.size);
    free(t.slots);
    free(mark);
    free(stack);
    free(list);
    free(table);
    free(accept);
    return rc;
}

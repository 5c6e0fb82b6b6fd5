/* Regular expressions -> DFA against a backtracking matcher written here
 * from the documented syntax: random expressions over a small alphabet and
 * random strings, fixed DNA cases, syntax errors with positions, the state
 * limit, and minimisation. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seqmatch_dfa.h"
#include "testutil.h"

/* ------------------------------------------------------------ the oracle */

enum { O_EMPTY, O_SET, O_CAT, O_ALT, O_REP };

typedef struct onode {
    int kind;
    unsigned char set[256];
    struct onode **kids;
    int nkids;
    int min, max; /* max < 0: unbounded */
} onode;

typedef struct {
    const char *s;
    size_t pos, len;
    int dna;
    int bad;
} oparser;

static onode *onew(int kind) {
    onode *n = calloc(1, sizeof *n);
    n->kind = kind;
    return n;
}

static void okid(onode *n, onode *k) {
    n->kids = realloc(n->kids, (size_t)(n->nkids + 1) * sizeof *n->kids);
    n->kids[n->nkids++] = k;
}

static void ofree(onode *n) {
    if (!n) return;
    for (int i = 0; i < n->nkids; i++) ofree(n->kids[i]);
    free(n->kids);
    free(n);
}

static const char *iupac(char c) {
    switch (c >= 'a' && c <= 'z' ? c - 32 : c) {
    case 'A': return "A";
    case 'C': return "C";
    case 'G': return "G";
    case 'T': case 'U': return "T";
    case 'R': return "AG";
    case 'Y': return "CT";
    case 'S': return "CG";
    case 'W': return "AT";
    case 'K': return "GT";
    case 'M': return "AC";
    case 'B': return "CGT";
    case 'D': return "AGT";
    case 'H': return "ACT";
    case 'V': return "ACG";
    case 'N': return "ACGT";
    default: return NULL;
    }
}

static void dna_add(unsigned char *set, const char *bases) {
    for (; *bases; bases++) {
        set[(unsigned char)*bases] = 1;
        set[(unsigned char)*bases + 32] = 1;
        if (*bases == 'T') set['U'] = set['u'] = 1;
    }
}

static void onegate(const oparser *p, unsigned char *set) {
    for (int b = 0; b < 256; b++) {
        int in_universe = 1;
        if (p->dna) in_universe = strchr("ACGTUacgtu", b) != NULL && b != 0;
        set[b] = in_universe && !set[b];
    }
}

static onode *oalt(oparser *p);

/* Single byte or class escape; returns 1 for a class (set filled). */
static int oescape(oparser *p, unsigned char *set, int *byte) {
    if (p->pos >= p->len) {
        p->bad = 1;
        return 0;
    }
    char c = p->s[p->pos++];
    const char *cls = NULL;
    int neg = 0;
    switch (c) {
    case 'n': *byte = '\n'; return 0;
    case 't': *byte = '\t'; return 0;
    case 'x': {
        char hex[3] = {p->s[p->pos], p->s[p->pos + 1], 0};
        p->pos += 2;
        *byte = (int)strtol(hex, NULL, 16);
        return 0;
    }
    case 'd': case 'D': cls = "0123456789"; neg = c == 'D'; break;
    case 'w': case 'W': cls = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_"; neg = c == 'W'; break;
    case 's': case 'S': cls = " \t\n\r\f\v"; neg = c == 'S'; break;
    default: *byte = (unsigned char)c; return 0;
    }
    memset(set, 0, 256);
    for (; *cls; cls++) set[(unsigned char)*cls] = 1;
    if (neg) onegate(p, set);
    return 1;
}

static onode *oatom(oparser *p) {
    char c = p->s[p->pos++];
    onode *n = onew(O_SET);
    if (c == '(') {
        free(n);
        n = oalt(p);
        if (p->pos >= p->len || p->s[p->pos] != ')') p->bad = 1;
        p->pos++;
        return n;
    }
    if (c == '.') {
        if (p->dna) dna_add(n->set, "ACGT");
        else memset(n->set, 1, 256);
    } else if (c == '[') {
        int neg = p->pos < p->len && p->s[p->pos] == '^';
        if (neg) p->pos++;
        int first = 1;
        while (p->pos < p->len && (p->s[p->pos] != ']' || first)) {
            first = 0;
            int lo = (unsigned char)p->s[p->pos++];
            if (p->dna) {
                dna_add(n->set, iupac((char)lo));
                continue;
            }
            if (lo == '\\') {
                unsigned char cls[256];
                if (oescape(p, cls, &lo)) {
                    for (int b = 0; b < 256; b++) n->set[b] |= cls[b];
                    continue;
                }
            }
            if (p->pos + 1 < p->len && p->s[p->pos] == '-' && p->s[p->pos + 1] != ']') {
                int hi = (unsigned char)p->s[p->pos + 1];
                p->pos += 2;
                for (int b = lo; b <= hi; b++) n->set[b] = 1;
            } else {
                n->set[lo] = 1;
            }
        }
        p->pos++;
        if (neg) onegate(p, n->set);
    } else if (c == '\\') {
        int b = 0;
        if (!oescape(p, n->set, &b)) n->set[b] = 1;
    } else if (p->dna) {
        dna_add(n->set, iupac(c));
    } else {
        n->set[(unsigned char)c] = 1;
    }
    return n;
}

static int onumber(oparser *p) {
    int v = 0;
    while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9') v = v * 10 + (p->s[p->pos++] - '0');
    return v;
}

static onode *orepeat(oparser *p) {
    onode *n = oatom(p);
    while (p->pos < p->len && strchr("*+?{", p->s[p->pos])) {
        char c = p->s[p->pos++];
        onode *r = onew(O_REP);
        okid(r, n);
        if (c == '*') r->min = 0, r->max = -1;
        else if (c == '+') r->min = 1, r->max = -1;
        else if (c == '?') r->min = 0, r->max = 1;
        else {
            r->min = r->max = onumber(p);
            if (p->s[p->pos] == ',') {
                p->pos++;
                r->max = p->s[p->pos] == '}' ? -1 : onumber(p);
            }
            p->pos++; /* '}' */
        }
        n = r;
    }
    return n;
}

static onode *ocat(oparser *p) {
    onode *n = onew(O_CAT);
    while (p->pos < p->len && p->s[p->pos] != '|' && p->s[p->pos] != ')') okid(n, orepeat(p));
    return n;
}

static onode *oalt(oparser *p) {
    onode *n = onew(O_ALT);
    okid(n, ocat(p));
    while (p->pos < p->len && p->s[p->pos] == '|') {
        p->pos++;
        okid(n, ocat(p));
    }
    return n;
}

/* Backtracking with explicit continuations: "what must still match". */
typedef struct cont {
    int repeat;              /* 0: match node then next; 1: continue the repetition node */
    const onode *node;
    int count;               /* repetitions done (repeat) */
    size_t start;            /* where the iteration began (repeat) */
    int index;               /* child index (concatenation) */
    const struct cont *next;
} cont;

typedef struct {
    const unsigned char *text;
    size_t len;
    long steps;
} omatch;

static int bt(omatch *m, const onode *n, size_t i, const cont *k);

static int rep(omatch *m, const onode *n, int count, size_t i, const cont *k);

static int run_cont(omatch *m, const cont *k, size_t i) {
    if (!k) return i == m->len;
    if (k->repeat) {
        /* An empty iteration past the minimum never helps; cutting it ends loops. */
        if (i == k->start && k->count > k->node->min) return 0;
        return rep(m, k->node, k->count, i, k->next);
    }
    if (k->node->kind == O_CAT) {
        /* The rest of a concatenation from child index. */
        if (k->index >= k->node->nkids) return run_cont(m, k->next, i);
        cont c = {0, k->node, 0, 0, k->index + 1, k->next};
        return bt(m, k->node->kids[k->index], i, &c);
    }
    return bt(m, k->node, i, k->next);
}

static int rep(omatch *m, const onode *n, int count, size_t i, const cont *k) {
    if (n->max < 0 || count < n->max) {
        cont c = {1, n, count + 1, i, 0, k};
        if (bt(m, n->kids[0], i, &c)) return 1;
    }
    return count >= n->min && run_cont(m, k, i);
}

static int bt(omatch *m, const onode *n, size_t i, const cont *k) {
    m->steps++;
    switch (n->kind) {
    case O_SET:
        return i < m->len && n->set[m->text[i]] && run_cont(m, k, i + 1);
    case O_CAT: {
        cont c = {0, n, 0, 0, 0, k};
        return run_cont(m, &c, i);
    }
    case O_ALT:
        for (int j = 0; j < n->nkids; j++)
            if (bt(m, n->kids[j], i, k)) return 1;
        return 0;
    case O_REP:
        return rep(m, n, 0, i, k);
    default:
        return run_cont(m, k, i);
    }
}

static int oracle_matches(const onode *root, const char *text, size_t len) {
    omatch m = {(const unsigned char *)text, len, 0};
    return bt(&m, root, 0, NULL);
}

/* ------------------------------------------------------------ generator */

static void gen(tu_rng *rng, char *out, size_t *n, size_t cap, int depth) {
    int choice = depth < 2 ? 6 + (int)tu_rng_below(rng, 5) : (int)tu_rng_below(rng, depth > 4 ? 6 : 11);
    static const char *atoms[] = {"a", "b", "c", ".", "[ab]", "[^a]", "[a-b]", "\\.", "[.c]", "\\w", "[^\\d]"};
    if (*n + 12 >= cap) choice = 0;
    switch (choice) {
    case 0: case 1: case 2: case 3: case 4: case 5: {
        const char *a = atoms[tu_rng_below(rng, 11)];
        size_t l = strlen(a);
        memcpy(out + *n, a, l);
        *n += l;
        break;
    }
    case 6: case 7: { /* concatenation */
        gen(rng, out, n, cap, depth + 1);
        gen(rng, out, n, cap, depth + 1);
        break;
    }
    case 8: { /* alternation in a group, sometimes an empty branch */
        out[(*n)++] = '(';
        gen(rng, out, n, cap, depth + 1);
        out[(*n)++] = '|';
        if (!tu_rng_chance(rng, 20)) gen(rng, out, n, cap, depth + 1);
        out[(*n)++] = ')';
        break;
    }
    default: { /* repetition of a group */
        static const char *quant[] = {"*", "+", "?", "{2}", "{0,2}", "{1,}", "{2,3}"};
        out[(*n)++] = '(';
        gen(rng, out, n, cap, depth + 1);
        out[(*n)++] = ')';
        const char *q = quant[tu_rng_below(rng, 7)];
        memcpy(out + *n, q, strlen(q));
        *n += strlen(q);
        break;
    }
    }
}

static void check_regex(tu_rng *rng, const char *expr, int dna, const char *alphabet, int strings, size_t max_len) {
    sm_dfa_regex_options ro;
    sm_dfa_regex_options_init(&ro);
    ro.alphabet = dna ? SM_ALPHABET_DNA : SM_ALPHABET_TEXT;
    ro.minimize = (int)tu_rng_below(rng, 2);
    sm_dfa *d = NULL;
    sm_error e;
    int rc = sm_dfa_from_regex(expr, strlen(expr), &ro, &d, &e);
    if (!tu_check(rc == SM_OK, "regex '%s': %s", expr, rc ? e.message : "")) return;
    oparser p = {expr, 0, strlen(expr), dna, 0};
    /* Anchors at the ends are no-ops: the whole input must match anyway. */
    if (p.len && expr[0] == '^') p.pos = 1;
    if (p.len > p.pos && expr[p.len - 1] == '$' && (p.len < 2 || expr[p.len - 2] != '\\')) p.len--;
    onode *root = oalt(&p);
    int ok = 1;
    for (int t = 0; t < strings && ok; t++) {
        char text[32];
        size_t len = tu_rng_below(rng, (uint32_t)max_len + 1);
        tu_random_from(rng, text, len, alphabet);
        uint32_t s = sm_dfa_start(d);
        for (size_t i = 0; i < len; i++) s = sm_dfa_next(d, s, (uint8_t)text[i]);
        int got = s != SM_DFA_NO_STATE && sm_dfa_is_accepting(d, s);
        int want = oracle_matches(root, text, len);
        if (got != want) {
            char buf[80];
            tu_check(0, "regex '%s' on '%s': DFA %d, oracle %d", expr, tu_excerpt(text, len, 40, buf, sizeof buf), got,
                     want);
            ok = 0;
        }
    }
    if (ok) tu_check(1, "regex '%s'", expr);
    ofree(root);
    sm_dfa_free(d);
}

static void test_random_regexes(tu_rng *rng) {
    for (int i = 0; i < 400; i++) {
        char expr[128];
        size_t n = 0;
        gen(rng, expr, &n, sizeof expr - 16, 0);
        expr[n] = 0;
        check_regex(rng, expr, 0, "abc.d_\n", 150, 9);
    }
}

static void test_fixed(tu_rng *rng) {
    static const char *text_cases[] = {
        "", "a", "ab|", "(a|)b*", "a{0}", "a{3}", "a{2,}", "a{1,3}b", "[a-c]+x?", "[]a]*", "[^]a]",
        "\\x41\\n", "^ab*$", "a\\|b", "[\\d_]+", "\\S\\s", "(((a)))", "(ab|a)(bc|c)", "(a*)*", "(a?){3}",
        "a.c", "[-a]", "[a-]", "\\^\\$\\*", "x|y|z|", ".*abc.*", "(ab){2,3}|c{0,1}",
    };
    for (size_t i = 0; i < sizeof text_cases / sizeof *text_cases; i++)
        check_regex(rng, text_cases[i], 0, "abcxyzA\n_]-^$*|9 ", 400, 8);
    static const char *dna_cases[] = {"ACGT", "NNN", "R+Y", "[AC]*g", "[^A]T", "A.C", "(AC|GT){2}", "acgu", "W{1,3}S",
                                      "B?D?H?V?K?M?"};
    for (size_t i = 0; i < sizeof dna_cases / sizeof *dna_cases; i++)
        check_regex(rng, dna_cases[i], 1, "ACGTacgtUuNR-", 400, 7);
    /* Known answers. */
    sm_dfa_regex_options ro;
    sm_dfa_regex_options_init(&ro);
    sm_dfa *d = NULL;
    sm_error e;
    sm_dfa_from_regex("(a|b)*abb", 9, &ro, &d, &e);
    tu_check(d && sm_dfa_state_count(d) == 5, "minimal DFA of (a|b)*abb has 5 states (dead included), got %u",
             d ? sm_dfa_state_count(d) : 0);
    sm_dfa_free(d);
    ro.alphabet = SM_ALPHABET_DNA;
    sm_dfa_from_regex("A.T", 3, &ro, &d, &e);
    if (d) {
        uint32_t s = sm_dfa_start(d);
        s = sm_dfa_next(d, s, 'A');
        s = sm_dfa_next(d, s, 'N');
        s = sm_dfa_next(d, s, 'T');
        tu_check(!sm_dfa_is_accepting(d, s), "dna: '.' does not match N in the text");
    }
    sm_dfa_free(d);
}

static void expect_error(const char *expr, int dna, int code, const char *needle) {
    sm_dfa_regex_options ro;
    sm_dfa_regex_options_init(&ro);
    ro.alphabet = dna ? SM_ALPHABET_DNA : SM_ALPHABET_TEXT;
    ro.max_states = 1000;
    sm_dfa *d = NULL;
    sm_error e;
    memset(&e, 0, sizeof e);
    int rc = sm_dfa_from_regex(expr, strlen(expr), &ro, &d, &e);
    tu_check(rc == code && strstr(e.message, needle) != NULL && !d, "regex '%s': expected %d '%s', got %d '%s'", expr,
             code, needle, rc, e.message);
    sm_dfa_free(d);
}

static void test_errors(void) {
    expect_error("(ab", 0, SM_ERR_PATTERN, "position 1: unmatched '('");
    expect_error("ab)", 0, SM_ERR_PATTERN, "position 3: unmatched ')'");
    expect_error("*a", 0, SM_ERR_PATTERN, "position 1: nothing to repeat");
    expect_error("a|+", 0, SM_ERR_PATTERN, "position 3: nothing to repeat");
    expect_error("[ab", 0, SM_ERR_PATTERN, "position 1: unterminated '[' class");
    expect_error("a{3,1}", 0, SM_ERR_PATTERN, "position 2: repetition {m,n} with n < m");
    expect_error("a{1001}", 0, SM_ERR_PATTERN, "repetition count over 1000");
    expect_error("a{x}", 0, SM_ERR_PATTERN, "position 2: '{' needs");
    expect_error("a{2", 0, SM_ERR_PATTERN, "position 2: unterminated '{'");
    expect_error("\\q", 0, SM_ERR_PATTERN, "position 1: unknown escape '\\q'");
    expect_error("ab\\", 0, SM_ERR_PATTERN, "position 3: the expression ends with a lone backslash");
    expect_error("a^b", 0, SM_ERR_PATTERN, "position 2: '^' only at the start");
    expect_error("a$b", 0, SM_ERR_PATTERN, "position 2: '$' only at the end");
    expect_error("[z-a]", 0, SM_ERR_PATTERN, "position 3: range out of order");
    expect_error("\\x4", 0, SM_ERR_PATTERN, "\\x needs two hexadecimal digits");
    expect_error("ACXT", 1, SM_ERR_PATTERN, "position 3: 'X' is not a DNA or IUPAC letter");
    expect_error("[A-T]", 1, SM_ERR_PATTERN, "ranges are not used in dna expressions");
    expect_error("A\\.", 1, SM_ERR_PATTERN, "position 2:");
    expect_error("(a|b)*a(a|b){12}", 0, SM_ERR_LIMIT, "needs more than 1000 states");
    /* few DFA states, each a large part of a large NFA: refused after a
       bounded amount of work instead of minutes and gigabytes (found by
       fuzzing) */
    expect_error("(a.*{300}b.*){300}", 0, SM_ERR_LIMIT, "too costly to build");
    char deep[1300];
    memset(deep, '(', 600);
    memset(deep + 600, ')', 600);
    deep[1200] = 0;
    expect_error(deep, 0, SM_ERR_PATTERN, "nested too deeply");
}

int main(void) {
    tu_rng rng;
    tu_rng_seed(&rng, tu_seed_from_env(777));
    test_fixed(&rng);
    test_errors();
    test_random_regexes(&rng);
    return tu_summary("test_dfa_regex");
}

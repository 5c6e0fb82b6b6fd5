/* Fuzz target: pattern files (src/io/patterns.c) through
 * sm_pattern_list_read on a path, as `seqmatch search -p FILE` reads them;
 * then the pattern set goes to sm_compile, as the CLI does next.
 *
 * Input: byte 0 picks the container (as given, gzip, two gzip members),
 * byte 1 where the members are split; the rest is the file.
 *
 * Checked, besides memory safety:
 *   - the list read equals that of a reference reader written from the rules
 *     in src/io/patterns.c (FASTA or one pattern a line; line ends \n, \r\n
 *     and \r; a byte-order mark skipped; compressed data, a saved database or binary data refused),
 *     and an error leaves the patterns added before the call untouched;
 *   - sm_compile accepts a dna set exactly when every symbol is an IUPAC
 *     code (tests/common/oracle.c), and a text set always. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_support.h"
#include "io/seqio.h"
#include "oracle.h"

/* Compiling is the costly part: only small sets go on to it. */
#define COMPILE_MAX_PATTERNS 64
#define COMPILE_MAX_SYMBOLS 2048

typedef struct {
    uint8_t *bytes; /* name bytes, NUL, sequence bytes per pattern, back to back */
    size_t len, cap;
    size_t count;
    int ok;
} reference_list;

static void append(reference_list *r, const void *p, size_t n) {
    if (r->len + n > r->cap) {
        size_t cap = r->cap ? r->cap : 256;
        while (cap < r->len + n) cap *= 2;
        r->bytes = realloc(r->bytes, cap);
        if (!r->bytes) abort();
        r->cap = cap;
    }
    if (n) memcpy(r->bytes + r->len, p, n);
    r->len += n;
}

/* One pattern: its name as a C string (so cut at a NUL, as the library's
   is), then its length and sequence. */
static void reference_add(reference_list *r, const uint8_t *name, size_t name_len, const uint8_t *seq, size_t len) {
    const uint8_t *nul = memchr(name, 0, name_len);
    if (nul) name_len = (size_t)(nul - name);
    append(r, name, name_len);
    append(r, "", 1);
    uint64_t n = len;
    append(r, &n, sizeof n);
    append(r, seq, len);
    r->count++;
}

static int blank_line(const uint8_t *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t') return 0;
    return 1;
}

/* The start of the file: compressed data, a saved database and binary data
   (more than 256 control bytes among the first 4096, when there are that
   many) are refused. */
static int refused_start(const uint8_t *p, size_t n) {
    static const struct {
        const char *magic;
        size_t len;
    } magics[] = {{"\x1f\x8b", 2}, {"BZh", 3}, {"\xfd" "7zXZ\0", 6}, {"\x28\xb5\x2f\xfd", 4},
                  {"SEQMATCH", 8} /* a pattern database: "use -d" */};
    for (size_t k = 0; k < sizeof magics / sizeof magics[0]; k++)
        if (n >= magics[k].len && memcmp(p, magics[k].magic, magics[k].len) == 0) return 1;
    if (n < 4096) return 0;
    unsigned control = 0;
    for (size_t i = 0; i < 4096; i++)
        control += (p[i] < 0x20 && p[i] != '\t' && p[i] != '\n' && p[i] != '\r' && p[i] != '\v' && p[i] != '\f') ||
                   p[i] == 0x7f;
    return control > 256;
}

static reference_list read_with_reference(const uint8_t *p, size_t n) {
    reference_list r = {0};
    if (refused_start(p, n)) return r; /* ok = 0 */
    int fasta = -1;
    uint8_t *name = NULL, *seq = NULL;
    size_t name_len = 0, seq_len = 0;
    int open = 0;
    name = malloc(2 * n + 1);
    seq = malloc(n + 1);
    if (!name || !seq) abort();
    r.ok = 1;
    /* a byte-order mark is skipped; lines end with \n, \r\n or \r */
    size_t i = n >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
    while (i < n && r.ok) {
        size_t end = i;
        while (end < n && p[end] != '\n' && p[end] != '\r') end++;
        const uint8_t *s = p + i;
        size_t len = end - i;
        i = end < n ? end + 1 : n;
        if (end < n && p[end] == '\r' && i < n && p[i] == '\n') i++;
        size_t lead = 0;
        while (lead < len && (s[lead] == ' ' || s[lead] == '\t')) lead++;
        if (fasta < 0) {
            if (blank_line(s, len)) continue;
            fasta = lead < len && s[lead] == '>';
        }
        if (!fasta) {
            if (blank_line(s, len)) continue;
            /* the line is the name too, a NUL byte in it shown as \0 */
            size_t k = 0;
            for (size_t j = 0; j < len; j++) {
                if (s[j] == 0) name[k++] = '\\';
                name[k++] = s[j] == 0 ? '0' : s[j];
            }
            reference_add(&r, name, k, s, len);
            continue;
        }
        if (lead < len && s[lead] == '>') {
            if (open) {
                if (seq_len == 0) r.ok = 0;
                else reference_add(&r, name_len ? name : seq, name_len ? name_len : seq_len, seq, seq_len);
            }
            size_t a = lead + 1, b = a;
            while (b < len && !sm_name_end((unsigned char)s[b])) b++;
            memcpy(name, s + a, b - a);
            name_len = b - a;
            seq_len = 0;
            open = 1;
            continue;
        }
        for (size_t j = 0; j < len; j++)
            if (s[j] != ' ' && s[j] != '\t') seq[seq_len++] = s[j];
    }
    if (r.ok && open) {
        if (seq_len == 0) r.ok = 0;
        else reference_add(&r, name_len ? name : seq, name_len ? name_len : seq_len, seq, seq_len);
    }
    free(name);
    free(seq);
    return r;
}

/* The library's list from index first on, in the reference's form. */
static reference_list flatten(const sm_pattern_list *list, size_t first) {
    reference_list r = {0};
    r.ok = 1;
    for (size_t i = first; i < list->count; i++) {
        const sm_pattern *pat = &list->items[i];
        FUZZ_CHECK(pat->name != NULL && pat->seq != NULL && pat->len > 0, "pattern %zu is empty or unnamed", i);
        reference_add(&r, (const uint8_t *)pat->name, strlen(pat->name), (const uint8_t *)pat->seq, pat->len);
    }
    return r;
}

static void compile_and_scan(const sm_pattern_list *list, const uint8_t *text, size_t text_len) {
    size_t symbols = 0;
    for (size_t i = 0; i < list->count; i++) symbols += list->items[i].len;
    if (list->count == 0 || list->count > COMPILE_MAX_PATTERNS || symbols > COMPILE_MAX_SYMBOLS) return;
    for (int alphabet = SM_ALPHABET_DNA; alphabet <= SM_ALPHABET_TEXT; alphabet++) {
        sm_compile_options o;
        sm_compile_options_init(&o);
        o.alphabet = (sm_alphabet)alphabet;
        sm_db *db = NULL;
        sm_error err;
        int rc = sm_compile(list->items, list->count, &o, &db, &err);
        int valid = oracle_patterns_valid(list->items, list->count, o.alphabet);
        FUZZ_CHECK((rc == SM_OK) == valid, "%s set: compile says %d (%s), the oracle %s",
                   alphabet == SM_ALPHABET_DNA ? "dna" : "text", rc, rc ? err.message : "", valid ? "valid" : "invalid");
        FUZZ_CHECK(rc == SM_OK || rc == SM_ERR_PATTERN, "an invalid set gives status %d", rc);
        if (rc != SM_OK) continue;
        sm_scratch *scratch = NULL;
        if (sm_scratch_alloc(db, &scratch) == SM_OK) {
            uint64_t counts[COMPILE_MAX_PATTERNS] = {0};
            sm_count(db, scratch, text, text_len, counts);
            sm_scratch_free(scratch);
        }
        sm_db_free(db);
    }
}

static void read_and_check(const uint8_t *file_bytes, size_t file_size, const uint8_t *content, size_t content_size) {
    fuzz_file file;
    if (fuzz_file_make(&file, file_bytes, file_size) != 0) return;
    sm_pattern_list list = {0};
    /* a pattern from earlier files must survive a failing read */
    if (sm_pattern_list_add(&list, "earlier", "ACGT", 4) != SM_OK) abort();
    sm_error err;
    memset(&err, 0, sizeof err);
    int rc = sm_pattern_list_read(&list, file.path, &err);
    fuzz_file_remove(&file);
    reference_list want = read_with_reference(content, content_size);
    FUZZ_CHECK((rc == SM_OK) == want.ok, "reader status %d (%s), the reference %s", rc, rc ? err.message : "",
               want.ok ? "valid" : "error");
    FUZZ_CHECK(list.count >= 1 && strcmp(list.items[0].name, "earlier") == 0 && list.items[0].len == 4 &&
                   memcmp(list.items[0].seq, "ACGT", 4) == 0,
               "the pattern added before the read changed");
    if (rc != SM_OK) {
        FUZZ_CHECK(list.count == 1, "a failing read left %zu patterns", list.count - 1);
        FUZZ_CHECK(err.message[0] != '\0', "an error without a message");
    } else {
        reference_list got = flatten(&list, 1);
        FUZZ_CHECK(got.count == want.count && got.len == want.len && (got.len == 0 || memcmp(got.bytes, want.bytes, got.len) == 0),
                   "reader and reference differ: %zu and %zu patterns", got.count, want.count);
        free(got.bytes);
        sm_pattern_list tail = {list.items + 1, list.count - 1, list.count - 1, NULL, NULL, NULL, 0};
        compile_and_scan(&tail, content, content_size);
    }
    free(want.bytes);
    sm_pattern_list_free(&list);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    int container = data[0] % 3;
    const uint8_t *content = data + 2;
    size_t content_size = size - 2;
    /* content that is itself gzip would be decompressed: no reference */
    if (content_size >= 2 && content[0] == 0x1f && content[1] == 0x8b) {
        fuzz_file file;
        if (fuzz_file_make(&file, content, content_size) != 0) return 0;
        sm_pattern_list list = {0};
        sm_pattern_list_read(&list, file.path, NULL);
        sm_pattern_list_free(&list);
        fuzz_file_remove(&file);
        return 0;
    }
    if (container == 0) {
        read_and_check(content, content_size, content, content_size);
        return 0;
    }
    size_t gz_size;
    uint8_t *gz = fuzz_gzip(content, content_size, container == 2, (size_t)data[1] * content_size / 256, &gz_size);
    if (!gz) return 0;
    read_and_check(gz, gz_size, content, content_size);
    free(gz);
    return 0;
}

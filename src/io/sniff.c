/* What a file holds, from its first bytes (include/seqmatch_reader.h,
 * sm_reader_sniff): FASTA or FASTQ when its first byte that is not white
 * space (after a byte-order mark, decompressed) is '>' or '@', else text.
 * And whether a DNA record's start looks like protein (sm_seq_looks_like_protein),
 * a file holds short reads, a pattern is no DNA; files' total size.
 * Public calls only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "seqmatch_reader.h"

/* The first 4 KiB are looked at. */
#define SNIFF_BYTES 4096

sm_input_format sm_reader_sniff(const char *path) {
    /* a pipe or FIFO cannot be read twice: only regular files are looked at */
    struct stat st;
    if (strcmp(path, "-") == 0 || stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return SM_INPUT_AUTO;
    sm_reader *reader = NULL;
    sm_error err;
    const char *name;
    if (sm_reader_open(path, SM_INPUT_TEXT, &reader, &err) != SM_OK) return SM_INPUT_AUTO;
    int c = 0;
    size_t seen = 0, n;
    const uint8_t *buf;
    if (sm_reader_next_record(reader, &name, &err) == 1)
        while (!c && seen < SNIFF_BYTES && sm_reader_read(reader, &buf, &n, &err) == 1) {
            if (n > SNIFF_BYTES - seen) n = SNIFF_BYTES - seen;
            size_t i = seen == 0 && n >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
            for (; i < n; i++)
                if (buf[i] != ' ' && buf[i] != '\t' && buf[i] != '\n' && buf[i] != '\r') {
                    c = buf[i];
                    break;
                }
            seen += n;
        }
    sm_reader_close(reader);
    return c == '>' ? SM_INPUT_FASTA : c == '@' ? SM_INPUT_FASTQ : c ? SM_INPUT_TEXT : SM_INPUT_AUTO;
}

/* Letters that are no nucleotide code (A C G T U and IUPAC R Y S W K M B D
   H V N) are common in proteins (E F I L P Q, ~35 %) and rare in DNA. */
#define PROTEIN_SAMPLE 4096
#define PROTEIN_MIN_LETTERS 20
#define PROTEIN_PERCENT 10

int sm_seq_looks_like_protein(const uint8_t *seq, size_t len, size_t *letters, size_t *other, char list[16]) {
    static const char nucleotide[] = "ACGTURYSWKMBDHVNacgturyswkmbdhvn";
    if (len > PROTEIN_SAMPLE) len = PROTEIN_SAMPLE;
    *letters = *other = 0;
    char seen[8];
    size_t nseen = 0;
    for (size_t i = 0; i < len; i++) {
        int c = seq[i];
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'))) continue;
        ++*letters;
        if (strchr(nucleotide, c)) continue;
        ++*other;
        if (c >= 'a') c -= 32;
        if (nseen < 6 && !memchr(seen, c, nseen)) seen[nseen++] = (char)c;
    }
    size_t at = 0;
    for (size_t i = 0; i < nseen; i++) {
        if (i) list[at++] = ' ';
        list[at++] = seen[i];
    }
    list[at] = '\0';
    return *letters >= PROTEIN_MIN_LETTERS && *other * 100 >= *letters * PROTEIN_PERCENT;
}

/* A FASTQ file's name: .fq or .fastq, plain or compressed. */
static const char *const FASTQ_ENDINGS[] = {".fq", ".fastq", ".fq.gz", ".fastq.gz", ".fq.zst", ".fastq.zst", ".fq.bgz"};
/* What a read is taken to be (bytes), for the approximate planner. */
#define READ_RECORD_BYTES 150u

uint32_t sm_file_typical_record(const char *path) {
    size_t n = strlen(path);
    for (size_t i = 0; i < sizeof FASTQ_ENDINGS / sizeof FASTQ_ENDINGS[0]; i++) {
        size_t e = strlen(FASTQ_ENDINGS[i]);
        if (n > e && strcmp(path + n - e, FASTQ_ENDINGS[i]) == 0) return READ_RECORD_BYTES;
    }
    /* only a regular file is peeked at: a pipe's first byte would be lost */
    struct stat st;
    if (strcmp(path, "-") == 0 || stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
    FILE *f = fopen(path, "rb");
    int first = f ? fgetc(f) : EOF;
    if (f) fclose(f);
    return first == '@' ? READ_RECORD_BYTES : 0;
}

uint64_t sm_files_size(char *const *paths, size_t count) {
    uint64_t total = 0;
    for (size_t i = 0; i < count; i++) {
        struct stat st;
        if (strcmp(paths[i], "-") == 0 || stat(paths[i], &st) != 0 || !S_ISREG(st.st_mode)) return 0;
        total += (uint64_t)st.st_size;
    }
    return total;
}

int sm_pattern_list_has_non_dna(const sm_pattern_list *list) {
    for (size_t i = 0; i < list->count; i++)
        for (size_t j = 0; j < list->items[i].len; j++) {
            char c = list->items[i].seq[j];
            if (((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')) && !strchr("ACGTURYSWKMBDHVNacgturyswkmbdhvn", c))
                return 1;
        }
    return 0;
}

const char *sm_pattern_list_where(const sm_pattern_list *list, size_t i, char *buf, size_t cap) {
    if (i >= list->count || !list->file || !list->file[i]) return "";
    snprintf(buf, cap, "%.500s: line %llu: ", list->file[i], (unsigned long long)list->line[i]);
    return buf;
}

/* DNA symbols that say something: all but N, which matches every base. */
static size_t informative_bases(const sm_pattern *p) {
    size_t n = 0;
    for (size_t i = 0; i < p->len; i++) n += p->seq[i] != 'N' && p->seq[i] != 'n';
    return n;
}

int sm_pattern_list_check_errors(const sm_pattern_list *list, const sm_compile_options *o, const unsigned char *exact,
                                 sm_error *err) {
    uint32_t k = o->match == SM_MATCH_EXACT ? 0 : o->max_errors;
    const char *kind = o->match == SM_MATCH_MISMATCHES ? "-m" : "-k";
    const char *pam = o->pam ? " (errors count in the guide, not the PAM)" : "";
    for (size_t i = 0; i < list->count; i++) {
        const sm_pattern *p = &list->items[i];
        if (p->len == 0 || (exact && exact[i])) continue; /* empty: sm_compile says so; exact: no errors */
        /* N matches any base: a pattern with no more than k other bases is a hit at every window too */
        size_t informative = o->alphabet == SM_ALPHABET_DNA ? informative_bases(p) : p->len;
        if (p->len > k && informative > k) continue;
        char shown[48], where[600];
        const char *name = p->name ? p->name : p->seq;
        size_t name_len = p->name ? strlen(p->name) : p->len;
        snprintf(shown, sizeof shown, "%.*s%s", (int)(name_len > 40 ? 40 : name_len), name,
                 name_len > 40 ? "..." : "");
        const char *at = sm_pattern_list_where(list, i, where, sizeof where);
        err->code = SM_ERR_INVALID;
        if (p->len > k && informative == 0)
            snprintf(err->message, sizeof err->message, "%.200spattern '%s' is all N, which matches every base: every "
                     "window of its length would be a hit", at, shown);
        else if (p->len > k)
            snprintf(err->message, sizeof err->message, "%.200spattern '%s' has %zu base%s other than N, and %s %u "
                     "allows that many %s or more: N matches every base, so every window of its length would be a "
                     "hit; use %s %zu or less", at, shown, informative, informative == 1 ? "" : "s", kind, k,
                     o->match == SM_MATCH_MISMATCHES ? "mismatches" : "edits", kind, informative - 1);
        else if (o->match == SM_MATCH_MISMATCHES)
            snprintf(err->message, sizeof err->message, "%.200spattern '%s' has %zu symbol%s, and -m %u allows that "
                     "many mismatches or more: every window of its length would be a hit; use -m %zu or less%s",
                     at, shown, p->len, p->len == 1 ? "" : "s", k, p->len - 1, pam);
        else
            snprintf(err->message, sizeof err->message, "%.200spattern '%s' has %zu symbol%s, and -k %u allows that "
                     "many edits or more: deleting the whole pattern would make every position a hit; use -k %zu "
                     "or less%s", at, shown, p->len, p->len == 1 ? "" : "s", k, p->len - 1, pam);
        return SM_ERR_INVALID;
    }
    return SM_OK;
}

/* Longer patterns than this are most likely a genome given to -p in place of
   the target (-p genome.fa target.fa): compiling it takes seconds and
   hundreds of MB, so it is named before that. */
#define LONG_PATTERN 1000000u

int sm_pattern_list_add_source(sm_pattern_list *list, int is_file, const char *text, sm_alphabet alphabet,
                               int exact_source, unsigned char **exact, char *note, size_t note_cap, sm_error *err) {
    memset(err, 0, sizeof *err);
    if (note_cap) note[0] = '\0';
    size_t before = list->count;
    int status = is_file ? sm_pattern_list_read_alphabet(list, text, alphabet, err)
                         : sm_pattern_list_add(list, NULL, text, strlen(text));
    if (status != SM_OK) {
        if (!err->message[0]) snprintf(err->message, sizeof err->message, "-e '%.400s': %s", text, sm_strerror(status));
        err->code = status;
        return status;
    }
    for (size_t i = before; is_file && i < list->count; i++) {
        const sm_pattern *p = &list->items[i];
        if (p->len <= LONG_PATTERN || !note_cap) continue;
        snprintf(note, note_cap, "-p %s: pattern '%.60s' is %.1f Mbp long; -p takes the patterns and the targets "
                 "come last (seqmatch search -p PATTERNS TARGET): are the two swapped?",
                 strcmp(text, "-") == 0 ? "stdin" : text, p->name ? p->name : "", (double)p->len / 1e6);
        break;
    }
    if (exact_source || *exact) {
        unsigned char *grown = realloc(*exact, list->count ? list->count : 1);
        if (!grown) {
            snprintf(err->message, sizeof err->message, "out of memory");
            return err->code = SM_ERR_NOMEM;
        }
        if (!*exact) memset(grown, 0, before);
        memset(grown + before, exact_source != 0, list->count - before);
        *exact = grown;
    }
    return SM_OK;
}

void sm_pattern_list_explain(const sm_pattern_list *list, const sm_compile_options *o, int status, sm_error *err) {
    unsigned long long n = 0;
    int used = 0;
    char where[600] = "", message[1200];
    if (sscanf(err->message, "pattern %llu (%n", &n, &used) == 1 && used > 0 && n >= 1 && n <= list->count)
        sm_pattern_list_where(list, (size_t)n - 1, where, sizeof where);
    /* protein, words, a table or reads not recognised: say how to read them */
    int not_dna = status == SM_ERR_PATTERN && o->alphabet == SM_ALPHABET_DNA && sm_pattern_list_has_non_dna(list);
    snprintf(message, sizeof message, "%s%s%s", where, err->message[0] ? err->message : sm_strerror(status),
             not_dna ? "; for protein or other text patterns use --alphabet text" : "");
    size_t len = strlen(message) < sizeof err->message ? strlen(message) : sizeof err->message - 1;
    memcpy(err->message, message, len);
    err->message[len] = '\0';
}

int sm_files_alphabet(char *const *paths, size_t count, int per_record, sm_alphabet *alphabet, sm_error *err) {
    const char *dna = NULL, *text = NULL;
    for (size_t i = 0; i < count; i++) {
        sm_input_format holds = sm_reader_sniff(paths[i]);
        if ((holds == SM_INPUT_FASTA || holds == SM_INPUT_FASTQ) && !dna) dna = paths[i];
        else if (holds == SM_INPUT_TEXT && !text) text = paths[i];
    }
    if (dna && text) {
        err->code = SM_ERR_INVALID;
        snprintf(err->message, sizeof err->message, "%.200s is FASTA or FASTQ but %.200s is not; give --alphabet "
                 "dna or --alphabet text", dna, text);
        return SM_ERR_INVALID;
    }
    *alphabet = dna || (!text && per_record) ? SM_ALPHABET_DNA : SM_ALPHABET_TEXT;
    return SM_OK;
}

int sm_protein_warning(const char *file, const char *record, const uint8_t *seq, size_t len, char *buf, size_t cap) {
    size_t letters, other;
    char list[16];
    if (!sm_seq_looks_like_protein(seq, len, &letters, &other, list)) return 0;
    snprintf(buf, cap, "%s: record '%s' looks like protein, not DNA (%zu of its first %zu letters are no nucleotide "
             "code: %s); DNA patterns match only A, C, G and T there (for protein patterns use --alphabet text)",
             strcmp(file, "-") == 0 ? "stdin" : file, record ? record : "", other, letters, list);
    return 1;
}

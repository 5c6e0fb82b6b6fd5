/* Result streams: the output buffer and the settings every share and the
 * merge agree on (a shard file's header). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist/wire.h"

int sm_dist_out_init(sm_dist_out *o, size_t cap, int (*flush)(void *, const uint8_t *, size_t), void *ctx) {
    memset(o, 0, sizeof *o);
    o->flush = flush;
    o->ctx = ctx;
    o->buf = malloc(cap ? cap : 1);
    if (!o->buf) return SM_ERR_NOMEM;
    o->cap = cap ? cap : 1;
    return SM_OK;
}

void sm_dist_out_free(sm_dist_out *o) {
    free(o->buf);
    memset(o, 0, sizeof *o);
}

int sm_dist_out_flush(sm_dist_out *o) {
    if (o->failed) return -1;
    if (!o->flush || o->len == 0) return 0;
    if (o->flush(o->ctx, o->buf, o->len) != 0) {
        o->failed = 1;
        return -1;
    }
    o->len = 0;
    return 0;
}

void sm_dist_settings_free(sm_dist_settings *s) {
    if (s->pattern_names)
        for (uint32_t i = 0; i < s->pattern_count; i++) free(s->pattern_names[i]);
    if (s->target_names)
        for (size_t i = 0; i < s->target_count; i++) free(s->target_names[i]);
    free(s->pattern_names);
    free(s->target_names);
    free(s->dfa_accept);
    memset(s, 0, sizeof *s);
}

int sm_dist_settings_write(sm_dist_out *o, const sm_dist_settings *s) {
    sm_dist_out m;
    if (sm_dist_out_init(&m, 4096, NULL, NULL) != SM_OK) return SM_ERR_NOMEM;
    const uint64_t fields[] = {(uint64_t)s->command, s->shard, s->shards, (uint64_t)s->format, (uint64_t)s->header,
                               (uint64_t)s->show_file, (uint64_t)s->quiet, (uint64_t)s->count_only,
                               (uint64_t)s->texts, (uint64_t)s->dna, (uint64_t)s->edits, s->reach, s->max_hits,
                               (uint64_t)s->per_record, (uint64_t)s->label_with_path, s->dfa_states, s->dfa_start,
                               (uint64_t)s->count_format};
    wire_num(&m, sizeof fields / sizeof fields[0]);
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) wire_num(&m, fields[i]);
    wire_num(&m, s->pattern_count);
    for (uint32_t i = 0; i < s->pattern_count; i++) {
        const char *n = s->pattern_names[i] ? s->pattern_names[i] : "";
        wire_bytes(&m, n, strlen(n));
    }
    wire_num(&m, s->target_count);
    for (size_t i = 0; i < s->target_count; i++) wire_bytes(&m, s->target_names[i], strlen(s->target_names[i]));
    size_t words = s->dfa_accept ? (s->dfa_states + 63) / 64 : 0;
    wire_num(&m, words);
    for (size_t i = 0; i < words; i++) wire_num(&m, s->dfa_accept[i]);
    wire_bytes(o, m.buf, m.len);
    int failed = m.failed || o->failed;
    sm_dist_out_free(&m);
    return failed ? SM_ERR_NOMEM : SM_OK;
}

static char *dup_bytes(const uint8_t *p, size_t n) {
    char *s = malloc(n + 1);
    if (s) {
        if (n) memcpy(s, p, n);
        s[n] = 0;
    }
    return s;
}

long sm_dist_settings_read(const uint8_t *data, size_t len, sm_dist_settings *s, sm_error *err) {
    memset(s, 0, sizeof *s);
    wire_in outer = {data, data + len, 0};
    size_t n;
    const uint8_t *body = wire_get_bytes(&outer, &n);
    if (outer.bad) return 0; /* not all there yet */
    wire_in in = {body, body + n, 0};
    uint64_t nf = wire_get_num(&in), f[18] = {0};
    if (nf != 18) in.bad = 1;
    for (uint64_t i = 0; i < nf && !in.bad; i++) f[i] = wire_get_num(&in);
    /* every field in its range before anything trusts it */
    uint64_t flags = f[4] | f[5] | f[6] | f[7] | f[8] | f[9] | f[10] | f[13] | f[14] | f[17];
    if (flags > 1 || (f[0] != SM_DIST_SEARCH && f[0] != SM_DIST_DFA) || f[2] == 0 || f[2] > 1u << 20 ||
        f[1] >= f[2] || f[3] > 255 || f[15] > UINT32_MAX || f[16] > UINT32_MAX ||
        (f[0] == SM_DIST_DFA && (f[15] == 0 || f[16] >= f[15])) || (f[0] == SM_DIST_SEARCH && (f[15] || f[16])) ||
        (f[10] && f[11] == 0))
        in.bad = 1;
    s->command = (sm_dist_command)f[0];
    s->shard = (unsigned)f[1];
    s->shards = (unsigned)f[2];
    s->format = (int)f[3];
    s->header = (int)f[4];
    s->show_file = (int)f[5];
    s->quiet = (int)f[6];
    s->count_only = (int)f[7];
    s->texts = (int)f[8];
    s->dna = (int)f[9];
    s->edits = (int)f[10];
    s->reach = f[11];
    s->max_hits = f[12];
    s->per_record = (int)f[13];
    s->label_with_path = (int)f[14];
    s->dfa_states = (uint32_t)f[15];
    s->dfa_start = (uint32_t)f[16];
    s->count_format = (int)f[17];
    uint64_t np = wire_get_num(&in);
    if (!in.bad && np <= (uint64_t)(in.end - in.p)) {
        s->pattern_count = (uint32_t)np;
        s->pattern_names = calloc(np ? np : 1, sizeof *s->pattern_names);
        for (uint64_t i = 0; s->pattern_names && i < np && !in.bad; i++) {
            size_t l;
            const uint8_t *p = wire_get_bytes(&in, &l);
            if (!in.bad) s->pattern_names[i] = dup_bytes(p, l);
        }
    } else {
        in.bad = 1;
    }
    uint64_t nt = wire_get_num(&in);
    if (!in.bad && nt <= (uint64_t)(in.end - in.p)) {
        s->target_count = (size_t)nt;
        s->target_names = calloc(nt ? nt : 1, sizeof *s->target_names);
        for (uint64_t i = 0; s->target_names && i < nt && !in.bad; i++) {
            size_t l;
            const uint8_t *p = wire_get_bytes(&in, &l);
            if (!in.bad) s->target_names[i] = dup_bytes(p, l);
        }
    } else {
        in.bad = 1;
    }
    uint64_t words = wire_get_num(&in);
    if (!in.bad && words && words <= (uint64_t)(in.end - in.p)) {
        s->dfa_accept = calloc(words, sizeof *s->dfa_accept);
        for (uint64_t i = 0; s->dfa_accept && i < words && !in.bad; i++) s->dfa_accept[i] = wire_get_num(&in);
    }
    int missing = !s->pattern_names || !s->target_names || (words && !s->dfa_accept);
    for (uint32_t i = 0; !missing && i < s->pattern_count; i++) missing = !s->pattern_names[i];
    for (size_t i = 0; !missing && i < s->target_count; i++) missing = !s->target_names[i];
    /* a search has patterns and no DFA; a dfa run a DFA; every job a target; nothing after them */
    if (!in.bad && (s->target_count == 0 || in.p != in.end ||
                    (s->command == SM_DIST_SEARCH ? s->pattern_count == 0 || words
                                                  : words != ((uint64_t)s->dfa_states + 63) / 64)))
        in.bad = 1;
    if (in.bad || missing || (words && words != ((uint64_t)s->dfa_states + 63) / 64)) {
        sm_dist_settings_free(s);
        if (err) snprintf(err->message, sizeof err->message, "a damaged shard file header"), err->code = SM_ERR_FORMAT;
        return -1;
    }
    return (long)(outer.p - data);
}

/* Where one share's result stream goes (include/seqmatch_dist.h,
 * sm_dist_route_*): into a shard file as checksummed frames, into rank 0's
 * own merge and printer, or to rank 0; and the settings a share takes from
 * a database or a DFA. Public calls only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "seqmatch.h"
#include "seqmatch_dfa.h"
#include "seqmatch_dist.h"
#include "seqmatch_output.h"

struct sm_dist_route {
    sm_mpi *mpi;             /* NULL: a shard file */
    sm_writer *w;            /* the shard file or rank 0's output; NULL: none */
    sm_dist_out out;
    sm_shard_writer shard;   /* the shard file's frame checksums */
    int framed;              /* its magic is written: frames follow */
    sm_dist_share *share;
    sm_dist_merge *merge;    /* rank 0 */
    sm_dist_printer *printer;
    sm_dist_sink sink;
    sm_error err;            /* a failed merge's */
    int failed;
};

/* A shard file: each flush of the stream one frame with its checksum. */
static int to_file(void *ctx, const uint8_t *data, size_t len) {
    sm_dist_route *r = ctx;
    uint8_t head[SM_SHARD_FRAME_HEAD];
    sm_shard_frame_head(&r->shard, data, len, head);
    sm_writer_write(r->w, head, sizeof head);
    sm_writer_write(r->w, data, len);
    return sm_writer_error(r->w) ? -1 : 0;
}

static int to_merge(void *ctx, const uint8_t *data, size_t len) {
    sm_dist_route *r = ctx;
    if (sm_dist_merge_feed(r->merge, data, len, &r->err) != 0) {
        r->failed = 1;
        return -1;
    }
    /* enough output already: rank 0's own scan and the others may stop */
    if (sm_dist_merge_done(r->merge)) {
        if (r->share) sm_dist_share_stop(r->share);
        sm_mpi_stop_others(r->mpi);
    }
    return 0;
}

static int to_rank0(void *ctx, const uint8_t *data, size_t len) {
    return sm_mpi_send(((sm_dist_route *)ctx)->mpi, data, len);
}

static void poll_mpi(void *ctx) {
    sm_dist_route *r = ctx;
    if (sm_mpi_rank(r->mpi) > 0 && sm_mpi_poll(r->mpi) && r->share) sm_dist_share_stop(r->share);
}

int sm_dist_route_new(sm_mpi *mpi, sm_writer *w, size_t buffer, sm_dist_route **route) {
    sm_dist_route *r = calloc(1, sizeof *r);
    *route = NULL;
    if (!r) return SM_ERR_NOMEM;
    r->mpi = mpi;
    r->w = w;
    if (sm_dist_out_init(&r->out, buffer, NULL, r) != SM_OK) {
        free(r);
        return SM_ERR_NOMEM;
    }
    *route = r;
    return SM_OK;
}

sm_dist_out *sm_dist_route_out(sm_dist_route *route) { return &route->out; }

int sm_dist_route_start(sm_dist_route *r, const sm_dist_settings *set, sm_dist_share *share, sm_error *err) {
    memset(err, 0, sizeof *err);
    r->share = share;
    if (!r->mpi) {
        if (r->w) {
            uint8_t magic[8];
            sm_shard_writer_init(&r->shard, magic);
            sm_writer_write(r->w, magic, sizeof magic);
            r->framed = 1;
            r->out.flush = to_file;
        }
        if (sm_dist_settings_write(&r->out, set) != SM_OK) goto nomem;
        return SM_OK;
    }
    if (sm_mpi_rank(r->mpi) == 0) {
        if (!(r->printer = sm_dist_printer_new(set, r->w, &r->sink, err))) return err->code ? err->code : SM_ERR_NOMEM;
        if (sm_dist_merge_new(set, &r->sink, &r->merge) != SM_OK) goto nomem;
        r->out.flush = to_merge;
    } else {
        r->out.flush = to_rank0;
    }
    sm_dist_share_set_poll(share, poll_mpi, r);
    return SM_OK;
nomem:
    err->code = SM_ERR_NOMEM;
    strcpy(err->message, "out of memory");
    return SM_ERR_NOMEM;
}

int sm_dist_route_end(sm_dist_route *r, sm_error *err) {
    memset(err, 0, sizeof *err);
    if (r->mpi && sm_mpi_rank(r->mpi) > 0) {
        sm_mpi_send_end(r->mpi);
        return 1; /* rank 0 gives the verdict */
    }
    if (r->mpi) {
        int got = sm_mpi_merge_ranks(r->mpi, r->merge, err);
        /* what waits for a successful end (the tsv header when no hit came) */
        if (got >= 0 && sm_dist_printer_end(r->printer, err) != SM_OK) return -1;
        return got;
    }
    if (r->framed) {
        /* a shard file's end frame: a file without it is refused as unfinished */
        uint8_t head[SM_SHARD_FRAME_HEAD];
        sm_shard_frame_head(&r->shard, NULL, 0, head);
        sm_writer_write(r->w, head, sizeof head);
    }
    return 1; /* a shard has no verdict: the merge gives it */
}

const char *sm_dist_route_failure(const sm_dist_route *route) { return route->failed ? route->err.message : NULL; }

void sm_dist_route_free(sm_dist_route *r) {
    if (!r) return;
    sm_dist_merge_free(r->merge);
    sm_dist_printer_free(r->printer);
    sm_dist_out_free(&r->out);
    free(r);
}

static char *copy(const char *s) {
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

int sm_dist_settings_names(sm_dist_settings *s, const sm_db *db, char *const *targets, size_t count,
                           const char *stdin_name) {
    uint32_t patterns = 0;
    if (db) {
        sm_db_info info;
        sm_db_get_info(db, &info);
        patterns = info.pattern_count;
        s->pattern_count = patterns;
        if (!(s->pattern_names = calloc(patterns ? patterns : 1, sizeof *s->pattern_names))) return SM_ERR_NOMEM;
    }
    s->target_count = count;
    if (!(s->target_names = calloc(count ? count : 1, sizeof *s->target_names))) return SM_ERR_NOMEM;
    for (uint32_t i = 0; i < patterns; i++) {
        const char *n = sm_db_pattern_name(db, i);
        if (!(s->pattern_names[i] = copy(n ? n : ""))) return SM_ERR_NOMEM;
    }
    for (size_t i = 0; i < count; i++)
        if (!(s->target_names[i] = copy(strcmp(targets[i], "-") == 0 ? stdin_name : targets[i]))) return SM_ERR_NOMEM;
    return SM_OK;
}

int sm_dist_settings_dfa(sm_dist_settings *s, const sm_dfa *dfa) {
    s->dfa_states = sm_dfa_state_count(dfa);
    s->dfa_start = sm_dfa_start(dfa);
    if (!(s->dfa_accept = calloc((s->dfa_states + 63) / 64, sizeof *s->dfa_accept))) return SM_ERR_NOMEM;
    for (uint32_t st = 0; st < s->dfa_states; st++)
        if (sm_dfa_is_accepting(dfa, st)) s->dfa_accept[st / 64] |= (uint64_t)1 << (st % 64);
    return SM_OK;
}

int sm_mpi_share_db(sm_mpi *m, int ok, sm_db **db, int by_path, sm_error *err) {
    memset(err, 0, sizeof *err);
    void *bytes = NULL;
    size_t len = 0;
    int rank0 = sm_mpi_rank(m) == 0;
    if (rank0 && ok) {
        if (by_path) bytes = "1", len = 1; /* every rank maps the file itself */
        else bytes = (void *)sm_db_bytes(*db, &len);
    }
    sm_mpi_share_bytes(m, &bytes, &len);
    if (rank0) return ok ? SM_OK : SM_ERR_TERMINATED;
    int rc = len == 0 ? SM_ERR_TERMINATED : SM_OK; /* rank 0 failed and said why */
    if (rc == SM_OK && !by_path && (rc = sm_db_from_bytes(bytes, len, db, err)) != SM_OK) {
        char why[sizeof err->message];
        memcpy(why, err->message, sizeof why);
        snprintf(err->message, sizeof err->message, "the database from rank 0: %.450s", why);
    }
    free(bytes);
    return rc;
}

int sm_mpi_share_dfa(sm_mpi *m, sm_dfa **dfa, sm_error *err) {
    memset(err, 0, sizeof *err);
    void *bytes = NULL;
    size_t len = 0;
    int rank0 = sm_mpi_rank(m) == 0;
    if (rank0 && *dfa) bytes = (void *)sm_dfa_bytes(*dfa, &len);
    sm_mpi_share_bytes(m, &bytes, &len);
    if (rank0) return *dfa ? SM_OK : SM_ERR_TERMINATED;
    int rc = len == 0 ? SM_ERR_TERMINATED : sm_dfa_from_bytes(bytes, len, dfa, err);
    if (rc != SM_OK && rc != SM_ERR_TERMINATED) {
        char why[sizeof err->message];
        memcpy(why, err->message, sizeof why);
        snprintf(err->message, sizeof err->message, "the DFA from rank 0: %.450s", why);
    }
    free(bytes);
    return rc;
}

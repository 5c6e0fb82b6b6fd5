/*
 * seqmatch_dist.h — one search spread over several processes: MPI ranks or
 * shards run one by one (seqmatch search --shard I/N, then seqmatch merge),
 * giving exactly the output of one process.
 *
 * Part of libseqmatch (shared and static); include after or instead of
 * seqmatch.h (it includes it and seqmatch_reader.h).
 *
 * The job's input is cut into units: the targets laid end to end as one
 * byte space, each of N shares one contiguous stretch of it, so share i's
 * units all come before share i + 1's in the output's order. A plain or
 * BGZF file is split by bytes (the reader's byte ranges); a file that can
 * only be read from its start (gzip, zstd, a pipe, standard input) is one
 * unit, read whole by the share its first byte falls in.
 *
 * A share scans its units with its own runner and writes what it finds as a
 * result stream: records, hits in part coordinates, counts, what the share
 * saw at its ends. The merge reads the shares' streams in share order and
 * gives exactly the single process's output: record names and coordinates
 * of records split between shares put back, hits near a split put in order,
 * runs of edit ends cut by a split joined, counts added, the shares'
 * boundaries checked. The streams travel as the caller likes: MPI messages
 * (the MPI section below), shard files, pipes.
 *
 *     sm_dist_plan plan;          // every share computes the same plan
 *     sm_dist_plan_make(targets, n, shares, me, &plan, &err);
 *     sm_dist_out out;            // the stream's bytes go to flush()
 *     sm_dist_out_init(&out, 1 << 20, flush, ctx);
 *     sm_dist_share *share;
 *     sm_dist_share_new(&settings, &out, threads, &share);
 *     sm_dist_share_runner_options(share, &runner_options);
 *     sm_runner_create(db, &runner_options, &runner, &err);
 *     sm_dist_share_set_runner(share, runner);
 *     sm_dist_share_run(share, targets, &plan, SM_INPUT_AUTO, &err);
 *     // and where the streams meet, in share order:
 *     sm_dist_merge_new(&settings, &sink, &merge);
 *     sm_dist_merge_feed(merge, bytes, len, &err) ... sm_dist_merge_share_end(merge, &err);
 *     sm_dist_merge_finish(merge, &err);
 *
 * Functions returning int return 0 (SM_OK) on success unless said
 * otherwise, and a failure's message in err when they take one.
 *
 * MPI itself is not linked into the library: the sm_mpi_* calls load the
 * MPI module (libseqmatch-mpi.so, built when Open MPI's development files
 * are found) on first use, only when the process was started by an MPI
 * launcher. libseqmatch.a has no loader: its sm_mpi_built() is 0.
 */
#ifndef SEQMATCH_DIST_H
#define SEQMATCH_DIST_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifndef SEQMATCH_EXPERIMENTAL
#error "seqmatch_dist.h is experimental as a whole: define SEQMATCH_EXPERIMENTAL before including it (seqmatch.h, \"Stability\")"
#endif

#include "seqmatch.h"
#include "seqmatch_reader.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

/* ----------------------------------------------------------------- plan */

typedef struct {
    size_t target;     /* index in the target list */
    int whole;         /* read from its start to its end with an ordinary reader */
    uint64_t begin, end; /* a byte range of the file (not whole) */
} sm_dist_unit;

typedef struct {
    sm_dist_unit *units; /* this share's, in order */
    size_t count;
    /* Targets read whole although they are large (gzip, zstd, pipes) while
       there are several shares: each named once in a warning by share 0. */
    size_t *unsplit;
    size_t unsplit_count;
} sm_dist_plan;

/* The units of share `share` of `shares` over the targets ("-" is standard
   input: it and the targets before it go to share 0). Every share computes
   the same cut from the files' sizes and first bytes. */
int sm_dist_plan_make(char *const *targets, size_t count, unsigned shares, unsigned share, sm_dist_plan *plan,
                      sm_error *err);
void sm_dist_plan_free(sm_dist_plan *plan);

/* -------------------------------------------------------- result streams */

/* Bytes out: a buffer handed to flush() when full and at the end. */
typedef struct {
    uint8_t *buf;
    size_t len, cap;
    int (*flush)(void *ctx, const uint8_t *data, size_t len); /* 0, or -1 (the stream fails) */
    void *ctx;
    int failed;
} sm_dist_out;

int sm_dist_out_init(sm_dist_out *o, size_t cap, int (*flush)(void *, const uint8_t *, size_t), void *ctx);
void sm_dist_out_free(sm_dist_out *o);
int sm_dist_out_flush(sm_dist_out *o);

/* What the merge needs to print exactly what one process prints; the same
   in every share (a shard file starts with it). */
typedef enum { SM_DIST_SEARCH = 1, SM_DIST_DFA = 2 } sm_dist_command;

typedef struct {
    sm_dist_command command;
    unsigned shard, shards;
    /* search */
    int format;              /* the caller's output format, opaque here (kept in the shard header) */
    int count_format;        /* --format count: counts printed, per file with show_file */
    int header;              /* the TSV header line */
    int show_file;           /* hits name their file; counts per file */
    int quiet;               /* -q: exit status only */
    int count_only;          /* shares send counts, not hits */
    int texts;               /* hits carry their matched bytes */
    int dna;                 /* hit texts never need escaping */
    int edits;               /* k edits: ends owned, holding near splits */
    uint64_t reach;          /* k edits: longest pattern + k */
    uint64_t max_hits;       /* UINT64_MAX: no limit */
    uint32_t pattern_count;
    char **pattern_names;
    size_t target_count;
    char **target_names;     /* as shown ("stdin" for "-") */
    /* dfa */
    int per_record;          /* one input per record */
    int label_with_path;     /* several inputs: lines start with the path */
    uint32_t dfa_states, dfa_start;
    uint64_t *dfa_accept;    /* (states + 63) / 64 words */
} sm_dist_settings;

void sm_dist_settings_free(sm_dist_settings *s);
/* Encodes the settings (a shard file's header); decodes them back. */
int sm_dist_settings_write(sm_dist_out *o, const sm_dist_settings *s);
/* Returns bytes used from data, 0 when more bytes are needed, -1 when
   they are not settings (err filled). */
long sm_dist_settings_read(const uint8_t *data, size_t len, sm_dist_settings *s, sm_error *err);

/* ---------------------------------------------------------- shard files */

/* A shard file (docs/architecture.md, "Shard files"): SM_SHARD_FILE_MAGIC, then
   frames, each a 4-byte length n (little-endian), a 4-byte CRC-32 and n
   bytes, the CRC chained from the one before (the first from the magic's)
   over the length and the bytes; a frame of length 0 ends the file. The
   frames' bytes are the settings (sm_dist_settings_write) and the result
   stream. */
#define SM_SHARD_FILE_MAGIC "SMSHARD2"
#define SM_SHARD_FRAME_HEAD 8

typedef struct {
    uint32_t crc;            /* of everything written so far */
    uint64_t written;
} sm_shard_writer;

/* The magic (8 bytes to write first). */
void sm_shard_writer_init(sm_shard_writer *w, uint8_t magic[8]);
/* The head of the frame of data[0, len) (len 0: the end frame). */
void sm_shard_frame_head(sm_shard_writer *w, const uint8_t *data, size_t len, uint8_t head[SM_SHARD_FRAME_HEAD]);

/* Reading one: frames checked before their bytes are handed out. */
typedef struct {
    FILE *file;
    const char *path;
    uint64_t size;           /* the file's size when known (a regular file), else UINT64_MAX */
    uint64_t at;             /* bytes read */
    uint32_t crc;
    uint8_t *buf;
    size_t cap;
    int ended;
} sm_shard_reader;

/* Opens path and checks its magic. Returns 0, or -1 (err: the message,
   without the path). */
int sm_shard_open(sm_shard_reader *r, const char *path, sm_error *err);
/* Back to the first frame (for another pass). */
int sm_shard_rewind(sm_shard_reader *r, sm_error *err);
/* The next frame's bytes, checked: 1 (data, len), 0 after the end frame
   (nothing follows it), -1 (err: damaged, cut short or unreadable). */
int sm_shard_next(sm_shard_reader *r, const uint8_t **data, size_t *len, sm_error *err);
void sm_shard_close(sm_shard_reader *r);

/* ------------------------------------------------------- the share's side */

struct sm_runner;
struct sm_dfa;
struct sm_dfa_matcher;

typedef struct sm_dist_share sm_dist_share;

/* search: scans the units with runner (made with on_hit, on_record_done
   and ctx from sm_dist_share_runner_options, count_only as settings say)
   and writes the stream to out. threads: for the readers. */
int sm_dist_share_new(const sm_dist_settings *settings, sm_dist_out *out, unsigned threads, sm_dist_share **share);
void sm_dist_share_runner_options(sm_dist_share *share, sm_runner_options *opts);
void sm_dist_share_set_runner(sm_dist_share *share, struct sm_runner *runner);
/* A progress hook called between pieces of input (MPI: sends, polls); may be NULL. */
void sm_dist_share_set_poll(sm_dist_share *share, void (*poll)(void *), void *ctx);
/* Scans every unit of the plan; the stream then ends. Returns 0, or -1
   after a failure whose message is in err. */
int sm_dist_share_run(sm_dist_share *share, char *const *targets, const sm_dist_plan *plan, sm_input_format format,
                      sm_error *err);
/* The same with `readers` readers in this process (as sm_dist_run_local
   reads a whole job): the plan's units cut into a few parts per reader,
   each part scanned by a runner of its own made from db and opts (one
   thread; with the CUDA backend on opts' GPU), the parts' streams written
   to the share's stream one after another, in order; the merge takes them
   as the share's. The share needs no runner; its settings must be filled
   first (sm_dist_settings_fill_db). Its poll hook is called on this thread
   while the readers run, and once it is stopped they stop. Returns 0, or
   -1 after a failure whose message is in err. */
int sm_dist_share_run_readers(sm_dist_share *share, const sm_db *db, const sm_runner_options *opts,
                              char *const *targets, const sm_dist_plan *plan, sm_input_format format,
                              unsigned readers, sm_error *err);
/* How many readers sm_dist_share_run_readers should use for the plan, or 0
   when one reader serves as well: sm_dist_local_shares' rule over the
   plan's units. */
unsigned sm_dist_share_readers(const sm_dist_plan *plan, char *const *targets, size_t count, unsigned threads,
                               int gpu, int exact);
/* dfa: the same for a DFA membership test. */
int sm_dist_share_run_dfa(sm_dist_share *share, char *const *targets, const sm_dist_plan *plan,
                          const struct sm_dfa *dfa, const struct sm_dfa_matcher *matcher, int skip_unknown,
                          const void *parallel_options, sm_error *err);
/* (parallel_options: a const sm_dfa_parallel_options *, or NULL.) */
/* Stops the share at its next poll (rank 0 needs nothing more). */
void sm_dist_share_stop(sm_dist_share *share);
/* Whether the share found anything (hits, counts, runs). */
int sm_dist_share_found(const sm_dist_share *share);
void sm_dist_share_free(sm_dist_share *share);
/* The settings that depend on the database: k edits and their reach (from
   a runner's database, or from the database). */
void sm_dist_settings_fill(sm_dist_settings *settings, const struct sm_runner *runner);
void sm_dist_settings_fill_db(sm_dist_settings *settings, const sm_db *db);

/* ------------------------------------------------------------- the merge */

/* Where the merge's output goes (the caller's formatter). */
typedef struct {
    void *ctx;
    int (*begin_file)(void *ctx, size_t target);
    int (*record)(void *ctx, uint64_t record, const char *name);
    void (*record_done)(void *ctx, uint64_t record);
    /* returns non-zero when the output is broken (stop) */
    int (*hit)(void *ctx, const sm_hit *hit);
    void (*counts)(void *ctx, const uint64_t *counts, uint64_t total);
    /* dfa: one result line */
    int (*dfa_result)(void *ctx, const char *label, int accepted, uint32_t state);
} sm_dist_sink;

typedef struct sm_dist_merge sm_dist_merge;

int sm_dist_merge_new(const sm_dist_settings *settings, const sm_dist_sink *sink, sm_dist_merge **merge);
/* The next bytes of the current share's stream. Returns 0, or -1 (err). */
int sm_dist_merge_feed(sm_dist_merge *m, const uint8_t *data, size_t len, sm_error *err);
/* The current share's stream is over (it must have ended properly); the
   next bytes are the next share's. */
int sm_dist_merge_share_end(sm_dist_merge *m, sm_error *err);
/* After the last share: the rest of the output. Returns the exit status's
   ground: 1 when something was found, 0 when not, -1 on error (err). */
int sm_dist_merge_finish(sm_dist_merge *m, sm_error *err);
/* The merge has what it needs (--max-hits reached, -q found a hit): the
   shares' remaining streams may be dropped. */
int sm_dist_merge_done(const sm_dist_merge *m);
void sm_dist_merge_free(sm_dist_merge *m);

/* What a merge delivers, printed as the command prints it: search hits
   through a formatter of the settings' format (nothing per hit with -q or
   counts only), dfa results as "[LABEL<TAB>]accept|reject<TAB>STATE"
   lines, all into w. settings and w must outlive the printer. */
typedef struct sm_dist_printer sm_dist_printer;
struct sm_writer; /* seqmatch_output.h */
/* Fills *sink (for sm_dist_merge_new or sm_shard_set_merge). NULL on
   failure (err). */
sm_dist_printer *sm_dist_printer_new(const sm_dist_settings *settings, struct sm_writer *w, sm_dist_sink *sink,
                                     sm_error *err);
/* After a successful merge: what waits for the end (a TSV header when no
   hit came). SM_OK, or the writer's failure (err). */
int sm_dist_printer_end(sm_dist_printer *p, sm_error *err);
void sm_dist_printer_free(sm_dist_printer *p);

/* ------------------------------------------ where a share's stream goes */

/* One share's result stream on its way: with mpi NULL into a shard file
   (w: its writer, framed with checksums; NULL: written nowhere, -q), on MPI
   rank 0 into its own merge of every rank, printed into w as one process
   prints (sm_dist_printer; NULL under -q), on another rank to rank 0. */
typedef struct sm_dist_route sm_dist_route;
struct sm_mpi; /* below */
/* The route and its out (sm_dist_route_out: buffer bytes gathered per
   flush), which sm_dist_share_new takes. SM_OK or SM_ERR_NOMEM. */
int sm_dist_route_new(struct sm_mpi *mpi, struct sm_writer *w, size_t buffer, sm_dist_route **route);
sm_dist_out *sm_dist_route_out(sm_dist_route *route);
/* Once the settings are complete (sm_dist_settings_fill): a shard file's
   magic and settings; rank 0's printer and merge; the share polled for the
   other ranks' messages (stopped when rank 0 has enough). SM_OK or an
   error (err). */
int sm_dist_route_start(sm_dist_route *route, const sm_dist_settings *settings, sm_dist_share *share,
                        sm_error *err);
/* After the share ran: rank 0 merges the other ranks' streams
   (sm_mpi_merge_ranks) and ends the printer, another rank tells rank 0 it
   is done, a shard file gets its end frame. Returns rank 0's verdict (1
   something found, 0 nothing), 1 elsewhere, -1 on error (err). */
int sm_dist_route_end(sm_dist_route *route, sm_error *err);
/* Why the stream failed when the merge refused it (rank 0), else NULL. */
const char *sm_dist_route_failure(const sm_dist_route *route);
/* Frees the route (after the share that writes into its out). */
void sm_dist_route_free(sm_dist_route *route);

/* ------------------------------------------- several readers, one process */

struct sm_scan_files_options; /* seqmatch_output.h */

/* How many readers sm_dist_run_local should use for a search on `threads`
   threads (gpu: with the CUDA backend; exact: of an exact pattern set), or
   0 when one reader serves as well: targets must all be files, with enough
   bytes in plain or BGZF files to split (the CPU gains on BGZF, whose
   blocks each reader then inflates itself, and from 8 threads on exact sets
   over plain files; the GPU only on exact sets, as one reader keeps it busy
   with mismatches and edits, and then two threads are left to its start).
   SEQMATCH_READERS=N in the environment asks for N readers whatever the
   rest (0 or 1: none). */
unsigned sm_dist_local_shares(char *const *targets, size_t count, unsigned threads, int gpu, int exact);
/* Runs a search with `readers` readers in this process: the targets cut
   into a few shares per reader (as sm_dist_plan_make cuts them), which the
   readers' threads take in order, each with a runner of its own made from
   opts (one thread; with the CUDA backend, reader i on GPU i mod GPUs, and
   for exact matching batches of 2 MiB unless opts says and, until the GPUs
   have started, the scan on the CPU; for mismatches and edits one reader
   per GPU, the threads of opts shared among them), merged in share order into sink: the output is one
   runner's over the targets, byte for byte. Nothing is written to sink
   before the GPUs started (or failed to, which fails here with the
   runner's message). Of files (may be NULL) only on_first_sequence and ctx
   are used, as sm_runner_scan_files uses them; a read error is worded as
   one reader of the whole file words it (its line and column). Fills the
   settings' edits and reach (sm_dist_settings_fill) from a runner. Returns 1
   when something was found, 0 when not, -1 on failure (err: the first
   failing share's message, in target order). */
int sm_dist_run_local(sm_dist_settings *settings, const sm_db *db, const sm_runner_options *opts,
                      char *const *targets, sm_input_format format, unsigned readers,
                      const struct sm_scan_files_options *files, const sm_dist_sink *sink, sm_error *err);

/* The settings' names: db's patterns (none when db is NULL) and the
   targets, "-" shown as stdin_name. SM_OK or SM_ERR_NOMEM (what was made
   is freed by sm_dist_settings_free). */
int sm_dist_settings_names(sm_dist_settings *settings, const sm_db *db, char *const *targets, size_t count,
                           const char *stdin_name);
/* A DFA's states, start and accepting states. SM_OK or SM_ERR_NOMEM. */
int sm_dist_settings_dfa(sm_dist_settings *settings, const struct sm_dfa *dfa);

/* Shard files (search --shard I/N -o FILE, one per share) merged, as
 * seqmatch merge does. */
typedef struct sm_shard_set sm_shard_set;
/* Opens the shard files of one job (in any order) and checks them before
   any output: their settings the same but for the shard index, every
   shard 0 .. N-1 there once, every frame and message right (a first merge
   without output). err's message names the file at fault. */
int sm_shard_set_open(const char *const *paths, size_t count, sm_shard_set **set, sm_error *err);
/* The job's settings (output format, pattern and target names...). */
const sm_dist_settings *sm_shard_set_settings(const sm_shard_set *set);
/* The merge into sink: 1 when something was found, 0 when not, -1 on
   error (err). */
int sm_shard_set_merge(sm_shard_set *set, const sm_dist_sink *sink, sm_error *err);
void sm_shard_set_free(sm_shard_set *set);

/* ------------------------------------------------------------------- MPI
 *
 * Rank 0 merges and writes; rank r > 0 sends its result stream to rank 0
 * in chunks, at most a window of them in flight (back-pressure: a rank whose
 * results rank 0 has not taken yet waits). Rank 0 sends every other rank
 * exactly one control message: early to stop (--max-hits reached, -q
 * found), or after the last stream. A rank that fails prints its message
 * and aborts the job (exit status 2). */

typedef struct sm_mpi sm_mpi;

/* 1 when the MPI module is there (loaded on the first call), else 0 with
   the reason from sm_mpi_missing. */
int sm_mpi_built(void);
const char *sm_mpi_missing(void);
/* Ranks the launcher says this process is one of (0: not started by an MPI
   launcher; read from the environment, before any MPI call). */
unsigned sm_mpi_launched_size(void);
/* Starts MPI; NULL when it cannot (a message printed). */
sm_mpi *sm_mpi_start(int *argc, char ***argv);
unsigned sm_mpi_rank(const sm_mpi *m);
unsigned sm_mpi_size(const sm_mpi *m);
/* Ranks on this node and this rank's place among them. */
unsigned sm_mpi_local_rank(const sm_mpi *m);
unsigned sm_mpi_local_size(const sm_mpi *m);
/* Rank 0's bytes to every rank: rank 0 passes *data and *len (0: it
   failed), the others get a malloc'd copy (NULL, 0: rank 0 failed). */
int sm_mpi_share_bytes(sm_mpi *m, void **data, size_t *len);
/* Rank r > 0: a chunk of its stream to rank 0 (copied; waits while the
   window is full), then the end. */
int sm_mpi_send(sm_mpi *m, const uint8_t *data, size_t len);
int sm_mpi_send_end(sm_mpi *m);
/* Rank r > 0: progress for the sends in flight; 1 once rank 0 said stop. */
int sm_mpi_poll(sm_mpi *m);
/* Rank 0: rank from's stream, chunk by chunk, until its end. consume
   returns 0, or -1 to fail. */
int sm_mpi_receive(sm_mpi *m, unsigned from, int (*consume)(void *ctx, const uint8_t *data, size_t len), void *ctx);
/* Rank 0: tells every other rank to stop (once). */
void sm_mpi_stop_others(sm_mpi *m);
/* Rank 0 after its own share's stream went into merge: ends that stream,
   feeds every other rank's stream to merge in rank order (telling the
   others to stop once the merge is done) and finishes the merge. Returns
   1 when something was found, 0 when not, -1 on error (err; the other
   ranks' streams are still drained). */
int sm_mpi_merge_ranks(sm_mpi *m, sm_dist_merge *merge, sm_error *err);
/* Ends the job with the exit status rank 0 gives; returns it on every rank. */
int sm_mpi_finish(sm_mpi *m, int status);
/* Ends the job at once with exit status 2 (after this rank's message). */
void sm_mpi_abort(sm_mpi *m);
/* Rank 0's database to every rank: rank 0 passes ok (0: it failed, and
   said why) and *db; another rank gets its copy in *db, or with by_path
   nothing (every rank opens the same saved file itself; only rank 0's
   outcome travels). Returns SM_OK, SM_ERR_TERMINATED on every rank when
   rank 0 failed, or the copy's failure (err: "the database from rank 0: ..."). */
int sm_mpi_share_db(sm_mpi *m, int ok, sm_db **db, int by_path, sm_error *err);
/* The same for a DFA (rank 0's *dfa, NULL when it failed). */
int sm_mpi_share_dfa(sm_mpi *m, struct sm_dfa **dfa, sm_error *err);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

#endif /* SEQMATCH_DIST_H */

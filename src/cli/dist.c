/* One search over several processes from the command line: MPI ranks
 * (mpirun -np N seqmatch search|dfa ...), one share written to a shard
 * file (--shard I/N), and `seqmatch merge` of shard files. The work is
 * the library's (seqmatch_dist.h: shares, streams, the merge and its
 * printer); here the database and DFA get to every rank, the stream goes to
 * its file or rank, and failures end the whole job.
 *
 * Under MPI only rank 0 checks the command line's files, compiles and
 * writes; what it finds goes to the others in one broadcast, so that they
 * all stop together when it fails. A failure of any rank after that (its
 * range unreadable, a bad record in it, no GPU) prints that rank's message
 * and aborts the job: exit status 2 within moments, never a hang, and -o's
 * temporary file removed rather than renamed. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "seqmatch_dist.h"

/* Result stream bytes gathered before they go out (a chunk to rank 0). */
#define STREAM_BUFFER ((size_t)1 << 20)

static sm_mpi *job;
static int rank_gpu_alone; /* CUDA sees only this rank's GPU */

/* NVIDIA GPUs the kernel driver lists, without starting CUDA (0: none, or not known). */
static unsigned gpus_listed(void) {
    DIR *d = opendir("/proc/driver/nvidia/gpus");
    unsigned n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        if (e->d_name[0] != '.') n++;
    if (d) closedir(d);
    return n;
}

/* Each rank uses one GPU (node-local rank mod GPUs, sm_runner_options.
   gpu_device): it lets CUDA see only that one, before anything starts CUDA,
   so that it need not start CUDA to learn how many there are: a rank's
   readers of an exact set then scan on the CPU while the driver starts on
   another thread (docs/scaling.md, "The feed"). The devices a user made
   visible are kept (one of them taken); where neither they nor the
   driver's list says how many there are, nothing changes. */
static void one_gpu_per_rank(void) {
    const char *visible = getenv("CUDA_VISIBLE_DEVICES");
    unsigned local = sm_mpi_local_rank(job);
    char one[256];
    if (visible) {
        unsigned n = 1;
        for (const char *p = visible; *p; p++) n += *p == ',';
        rank_gpu_alone = *visible && n == 1;
        if (!*visible || n < 2 || strlen(visible) >= sizeof one) return;
        const char *at = visible;
        for (unsigned i = local % n; i > 0; i--) at = strchr(at, ',') + 1;
        size_t len = strcspn(at, ",");
        memcpy(one, at, len);
        one[len] = 0;
    } else {
        unsigned n = gpus_listed();
        rank_gpu_alone = n == 1;
        if (n < 2) return;
        snprintf(one, sizeof one, "%u", local % n);
    }
    rank_gpu_alone = setenv("CUDA_VISIBLE_DEVICES", one, 1) == 0;
}

int cli_dist_init(int *argc, char ***argv) {
    unsigned n = sm_mpi_launched_size();
    if (n == 0) return 0; /* not under mpirun: nothing of MPI is loaded */
    if (!sm_mpi_built()) {
        if (n > 1) {
            cli_error("started by an MPI launcher, but %s: each of the %u copies would search everything (install "
                      "Open MPI, with its development files to build seqmatch, or use --shard)",
                      sm_mpi_missing(), n);
            return CLI_EXIT_ERROR;
        }
        return 0;
    }
    job = sm_mpi_start(argc, argv);
    if (!job) return CLI_EXIT_ERROR;
    one_gpu_per_rank();
    if (sm_mpi_rank(job) > 0) {
        /* rank 0 alone prints: help, usage errors, results */
        if (!freopen("/dev/null", "w", stdout)) return CLI_EXIT_ERROR;
        cli_errors_muted = 1;
    }
    return 0;
}

int cli_dist_finish(int status) {
    if (!job) return status;
    fflush(stdout);
    return sm_mpi_finish(job, status);
}

int cli_dist_rank_only(void) { return job && sm_mpi_rank(job) > 0; }

int cli_dist_rank0(void) { return !job || sm_mpi_rank(job) == 0; }

int cli_dist_mpi(void) { return job != NULL; }

int cli_dist_share_dfa(sm_dfa **dfa) {
    if (!job) return *dfa ? 0 : -1;
    sm_error err;
    int rc = sm_mpi_share_dfa(job, dfa, &err);
    if (rc == SM_OK || rc == SM_ERR_TERMINATED) return rc == SM_OK ? 0 : -1;
    cli_errors_muted = 0;
    cli_error("%s", err.message);
    sm_mpi_abort(job);
    return 0;
}

int cli_dist_active(const cli_options *opts) { return job != NULL || (opts && opts->shard_count > 0); }

/* A failure on this rank after the ranks parted: its message, then the job ends. */
static void rank_failed(cli_writer *w, int writer_open) {
    if (!job) return;
    if (writer_open) cli_writer_close(w, 0);
    sm_mpi_abort(job);
}

/* ------------------------------------------------------------- common */

/* Threads per rank when -t is not given: the node's cores shared by its ranks. */
static unsigned rank_threads(unsigned asked) {
    if (asked || !job) return cli_threads(asked);
    unsigned cores = cli_online_cores(), local = sm_mpi_local_size(job);
    return local > 1 && cores / local > 0 ? cores / local : local > 1 ? 1 : cores;
}

static unsigned shares_of(const cli_options *opts) { return job ? sm_mpi_size(job) : opts->shard_count; }
static unsigned share_of(const cli_options *opts) { return job ? sm_mpi_rank(job) : opts->shard_index; }

static void print_unsplit(const sm_dist_plan *plan, char *const *targets) {
    for (size_t i = 0; i < plan->unsplit_count; i++) {
        const char *t = targets[plan->unsplit[i]];
        if (strcmp(t, "-") == 0)
            fprintf(stderr, "seqmatch: warning: standard input (and any target before it) is read by the first share "
                            "alone\n");
        else
            fprintf(stderr,
                    "seqmatch: warning: %s is read and searched by one share alone (only plain and BGZF files are "
                    "split; bgzip it to spread it)\n",
                    t);
    }
}

/* ------------------------------------------------------------- search */

/* Rank 0's database (or, with -d, its outcome) to the other ranks; a rank
   that cannot make its copy ends the job. Returns 0, or -1 (failed). */
static int share_db(const cli_options *opts, sm_db **db, int ok) {
    if (!job) return ok ? 0 : -1;
    sm_error err;
    int rc = sm_mpi_share_db(job, ok, db, opts->database_path != NULL, &err);
    if (sm_mpi_rank(job) == 0) return rc == SM_OK ? 0 : -1;
    cli_errors_muted = 0;
    if (rc == SM_ERR_TERMINATED) return -1; /* rank 0 failed and said why */
    if (rc == SM_OK && opts->database_path && cli_load_database(opts, db) != 0) rc = SM_ERR_IO;
    else if (rc != SM_OK) cli_error("%s", err.message);
    if (rc != SM_OK) sm_mpi_abort(job);
    return rc == SM_OK ? 0 : -1;
}

/* What one process's share of a search or dfa holds while it runs. */
typedef struct {
    cli_writer writer;
    int writer_open;
    sm_dist_settings set;
    sm_dist_plan plan;
    sm_dist_share *share;
    sm_dist_route *route;
} dist_run;

/* After the share ran (rc: sm_dist_share_run's, err its message; without a
   route, readers of this process: rc is the verdict, 1 found or 0): the
   stream's end (rank 0: the merge of every rank and the verdict), then the
   output closed. Returns the exit status, or -1 after a message. */
static int end_run(dist_run *d, int rc, const sm_error *err) {
    if (rc < 0 || (rc && d->route)) {
        const char *failure = d->route ? sm_dist_route_failure(d->route) : NULL;
        if (failure) cli_error("%s", failure);
        else if (cli_writer_failed(&d->writer)) cli_writer_report(&d->writer);
        else cli_error("%s", err->message);
        return -1;
    }
    sm_error end_err;
    int got = d->route ? sm_dist_route_end(d->route, &end_err) : rc;
    if (got < 0) {
        cli_error("%s", end_err.message);
        return -1;
    }
    int status = got ? CLI_EXIT_HIT : CLI_EXIT_NO_HIT;
    if (d->writer_open) {
        d->writer_open = 0;
        if (cli_writer_close(&d->writer, 1) != 0) {
            cli_writer_report(&d->writer);
            status = CLI_EXIT_ERROR;
        }
    }
    return status;
}

/* Several readers in this process: the shares' streams merged into the
   output as one process prints it (sm_dist_run_local). */
static int run_local(dist_run *d, const sm_db *db, const sm_runner_options *ro, char *const *targets,
                     sm_input_format format, unsigned shares) {
    sm_error err;
    sm_dist_sink sink;
    sm_dist_printer *printer = sm_dist_printer_new(&d->set, d->writer_open ? d->writer.w : NULL, &sink, &err);
    sm_scan_files_options files;
    sm_scan_files_options_init(&files);
    files.on_first_sequence = d->set.dna ? cli_check_protein : NULL;
    int got = printer ? sm_dist_run_local(&d->set, db, ro, targets, format, shares, &files, &sink, &err) : -1;
    if (got >= 0 && sm_dist_printer_end(printer, &err) != SM_OK) got = -1;
    sm_dist_printer_free(printer);
    return end_run(d, got, &err);
}

/* Ends the run with status (-1: failed): a rank that failed ends the job;
   frees what the run holds. Returns the exit status. */
static int close_run(dist_run *d, int status) {
    if (status < 0) {
        status = CLI_EXIT_ERROR;
        rank_failed(&d->writer, d->writer_open);
    }
    if (d->writer_open) cli_writer_close(&d->writer, status != CLI_EXIT_ERROR);
    sm_dist_share_free(d->share);
    sm_dist_route_free(d->route);
    sm_dist_plan_free(&d->plan);
    sm_dist_settings_free(&d->set);
    return status;
}

/* The share's plan, route and share (threads: its readers'), after the
   settings: returns 0, or -1 after a message. */
static int start_share(dist_run *d, char *const *targets, unsigned threads) {
    sm_dist_settings *set = &d->set;
    sm_error err;
    if (sm_dist_plan_make(targets, set->target_count, set->shards, set->shard, &d->plan, &err) != SM_OK) {
        cli_error("%s", err.message);
        return -1;
    }
    if (set->shard == 0 && set->shards > 1) print_unsplit(&d->plan, targets);
    if (sm_dist_route_new(job, d->writer_open ? d->writer.w : NULL, STREAM_BUFFER, &d->route) != SM_OK ||
        sm_dist_share_new(set, sm_dist_route_out(d->route), threads, &d->share) != SM_OK) {
        cli_error("out of memory");
        return -1;
    }
    return 0;
}

int cli_dist_search(const cli_options *opts, char *const *targets, size_t count, int show_file,
                    int (*check)(const cli_options *, char *const *, size_t), unsigned local) {
    int rank0 = !job || sm_mpi_rank(job) == 0;
    sm_db *db = NULL;
    dist_run run;
    memset(&run, 0, sizeof run);
    dist_run *d = &run;
    int shard_file = !job && !local;
    int to_tty = (!opts->output_path || strcmp(opts->output_path, "-") == 0) && isatty(STDOUT_FILENO);
    if (shard_file && !opts->quiet && to_tty) {
        cli_error("--shard writes a shard file for 'seqmatch merge': use -o FILE or redirect standard output");
        return CLI_EXIT_ERROR;
    }
    /* -q: a shard file only when asked for (the exit status says it all) */
    int no_output = opts->quiet && (!shard_file || to_tty);
    /* rank 0 (or the shard) checks, compiles and opens the output; the others learn the outcome */
    int ok = 1;
    if (rank0) {
        ok = check(opts, targets, count) == 0 && cli_load_database(opts, &db) == 0;
        if (ok && !no_output)
            ok = d->writer_open = (shard_file ? cli_writer_open_shard : cli_writer_open)(&d->writer,
                                                                                       opts->output_path) == 0;
    }
    if (share_db(opts, &db, ok) != 0) {
        if (d->writer_open) cli_writer_close(&d->writer, 0);
        if (db) sm_db_free(db);
        return CLI_EXIT_ERROR;
    }
    cli_errors_muted = 0;

    sm_db_info info;
    sm_db_get_info(db, &info);
    sm_input_format format = SM_INPUT_AUTO;
    if (info.alphabet == SM_ALPHABET_TEXT) format = opts->lines ? SM_INPUT_LINES : SM_INPUT_TEXT;
    else if (opts->lines) {
        if (rank0) cli_usage_error(CLI_COMMAND_SEARCH, "--lines needs a text database; %s was compiled for dna",
                                   opts->database_path);
        if (d->writer_open) cli_writer_close(&d->writer, 0);
        sm_db_free(db);
        if (job) sm_mpi_abort(job);
        return CLI_EXIT_ERROR;
    }

    sm_dist_settings *set = &d->set;
    set->command = SM_DIST_SEARCH;
    set->shard = local ? 0 : share_of(opts);
    set->shards = local ? local : shares_of(opts);
    set->format = (int)opts->format;
    set->count_format = opts->format == SM_FORMAT_COUNT;
    set->header = opts->header;
    set->show_file = show_file;
    set->quiet = opts->quiet;
    set->count_only = opts->quiet || (opts->format == SM_FORMAT_COUNT && !opts->max_hits_given);
    set->texts = !set->count_only && (opts->format == SM_FORMAT_TSV || opts->format == SM_FORMAT_JSONL);
    set->dna = info.alphabet == SM_ALPHABET_DNA;
    set->max_hits = opts->max_hits_given ? opts->max_hits : UINT64_MAX;
    sm_error err;
    sm_runner *runner = NULL;
    int status = -1;
    if (sm_dist_settings_names(set, db, targets, count, "stdin") != SM_OK) {
        cli_error("out of memory");
        goto done;
    }
    sm_runner_options ro;
    sm_runner_options_init(&ro);
    ro.threads = rank_threads(opts->threads);
    ro.chunk_size = opts->chunk_size;
    ro.backend = opts->gpu ? SM_BACKEND_CUDA : SM_BACKEND_CPU;
    if (opts->gpu && job) {
        /* one GPU per rank: the node's GPUs dealt out by local rank (counted
           only when CUDA may see others) */
        int ndev = rank_gpu_alone ? 1 : sm_cuda_device_count();
        if (ndev > 0) ro.gpu_device = (int)(sm_mpi_local_rank(job) % (unsigned)ndev) + 1;
    }
    if (local) {
        status = run_local(d, db, &ro, targets, format, local);
        goto done;
    }
    if (start_share(d, targets, ro.threads) != 0) goto done;
    /* a share large enough for several readers of this process (a rank of many threads), else one runner */
    unsigned readers = sm_dist_share_readers(&d->plan, targets, count, ro.threads, opts->gpu,
                                             info.match == SM_MATCH_EXACT);
    if (readers <= 1) {
        sm_dist_share_runner_options(d->share, &ro);
        if (sm_runner_create(db, &ro, &runner, &err) != SM_OK) {
            cli_error("%s", err.message[0] ? err.message : "cannot start the scan");
            goto done;
        }
        sm_dist_share_set_runner(d->share, runner);
    }
    sm_dist_settings_fill_db(set, db);
    if (sm_dist_route_start(d->route, set, d->share, &err) != SM_OK) {
        cli_error("%s", err.message);
        goto done;
    }
    /* a shard has no verdict (the merge gives it): 0 when it ran, so that a
       batch scheduler's task whose share holds no hit does not fail */
    status = end_run(d,
                     readers > 1
                         ? sm_dist_share_run_readers(d->share, db, &ro, targets, &d->plan, format, readers, &err)
                         : sm_dist_share_run(d->share, targets, &d->plan, format, &err),
                     &err);
done:
    status = close_run(d, status);
    if (runner) sm_runner_free(runner);
    if (db) sm_db_free(db);
    return status;
}

/* ------------------------------------------------------------------ dfa */

int cli_dist_dfa(const cli_dist_dfa_job *job_dfa) {
    const cli_dist_dfa_job *j = job_dfa;
    int rank0 = !job || sm_mpi_rank(job) == 0;
    int shard_file = !job;
    dist_run run;
    memset(&run, 0, sizeof run);
    dist_run *d = &run;
    if (shard_file && (!j->output || strcmp(j->output, "-") == 0) && isatty(STDOUT_FILENO)) {
        cli_error("--shard writes a shard file for 'seqmatch merge': use -o FILE or redirect standard output");
        return CLI_EXIT_ERROR;
    }
    if (rank0 && (shard_file ? cli_writer_open_shard : cli_writer_open)(&d->writer, j->output) != 0) {
        if (job) sm_mpi_abort(job);
        return CLI_EXIT_ERROR;
    }
    d->writer_open = rank0;
    cli_errors_muted = 0;

    sm_dist_settings *set = &d->set;
    set->command = SM_DIST_DFA;
    set->shard = job ? sm_mpi_rank(job) : j->shard_index;
    set->shards = job ? sm_mpi_size(job) : j->shard_count;
    set->dna = j->dna;
    set->per_record = j->per_record;
    set->label_with_path = j->input_count > 1;
    set->max_hits = UINT64_MAX;
    sm_error err;
    int status = -1;
    if (sm_dist_settings_names(set, NULL, j->inputs, j->input_count, "standard input") != SM_OK ||
        sm_dist_settings_dfa(set, j->dfa) != SM_OK) {
        cli_error("out of memory");
        goto done;
    }
    sm_dfa_parallel_options popts = *j->parallel;
    popts.threads = rank_threads(popts.threads);
    if (start_share(d, j->inputs, popts.threads) != 0) goto done;
    if (sm_dist_route_start(d->route, set, d->share, &err) != SM_OK) {
        cli_error("%s", err.message);
        goto done;
    }
    /* a shard has no verdict: the merge gives it */
    status = end_run(d, sm_dist_share_run_dfa(d->share, j->inputs, &d->plan, j->dfa, j->matcher, j->skip_unknown,
                                              &popts, &err), &err);
done:
    return close_run(d, status);
}

/* ---------------------------------------------------------------- merge */

static void print_merge_help(FILE *out) {
    fputs("Usage: seqmatch merge [-o FILE] SHARD...\n"
          "\n"
          "Writes what one 'seqmatch search' (or 'seqmatch dfa') would have printed,\n"
          "from the N shard files that 'search --shard I/N -o SHARD' wrote for\n"
          "I = 0 .. N-1 (in any order on the command line): the hits in order, in\n"
          "the format the shards were run with, counts added. Every shard must be\n"
          "there, complete, and from the same command.\n"
          "\n"
          "  -o, --output FILE   write to FILE instead of standard output (gzip when FILE\n"
          "                      ends in .gz)\n"
          "  -h, --help          this help\n"
          "\n"
          "Exit status: 0 something found, 1 nothing, 2 error.\n",
          out);
}

typedef struct {
    const char *output;
    const char **paths;
    size_t n;
} merge_args;

static int merge_option(void *ctx, cli_option_id id, const char *shown, const char *value) {
    (void)shown;
    if (id == OPT_HELP) return CLI_PARSE_HELP;
    ((merge_args *)ctx)->output = value; /* -o, the table's only other option for merge */
    return CLI_PARSE_OK;
}

static int merge_shard(void *ctx, char *arg) {
    merge_args *m = ctx;
    m->paths[m->n++] = arg;
    return 0;
}

int cli_merge_main(int argc, char **argv) {
    merge_args m = {NULL, calloc((size_t)argc, sizeof *m.paths), 0};
    if (!m.paths) {
        cli_error("out of memory");
        return CLI_EXIT_ERROR;
    }
    int parsed = cli_parse_argv(CLI_COMMAND_MERGE, argc, argv, merge_option, merge_shard, &m);
    if (parsed != CLI_PARSE_OK) {
        free(m.paths);
        if (parsed != CLI_PARSE_HELP) return CLI_EXIT_ERROR;
        print_merge_help(stdout);
        return cli_finish_stdout();
    }
    const char *output = m.output, **paths = m.paths;
    size_t n = m.n;
    int status = CLI_EXIT_ERROR;
    cli_writer writer;
    memset(&writer, 0, sizeof writer);
    int writer_open = 0;
    sm_dist_printer *printer = NULL;
    sm_shard_set *shards = NULL;
    sm_error err;
    memset(&err, 0, sizeof err);
    if (n == 0) {
        cli_error("no shard files given (try 'seqmatch merge --help')");
        goto out;
    }
    if (cli_check_output(output, paths, n) != 0) goto out;
    /* every shard checked before the output is opened */
    if (sm_shard_set_open(paths, n, &shards, &err) != SM_OK) {
        cli_error("%s", err.message);
        goto out;
    }
    const sm_dist_settings *set = sm_shard_set_settings(shards);
    if (cli_writer_open(&writer, output) != 0) goto out;
    writer_open = 1;
    sm_dist_sink sink;
    if (!(printer = sm_dist_printer_new(set, writer.w, &sink, &err))) {
        cli_error("%s", err.message);
        cli_error("out of memory");
        goto out;
    }
    int found = sm_shard_set_merge(shards, &sink, &err);
    if (found < 0) {
        cli_error("%s", err.message);
        goto out;
    }
    status = found ? CLI_EXIT_HIT : CLI_EXIT_NO_HIT;
    if (sm_dist_printer_end(printer, &err) != SM_OK) {
        cli_error("%s", err.message);
        status = CLI_EXIT_ERROR;
        goto out;
    }
    writer_open = 0;
    if (cli_writer_close(&writer, 1) != 0) {
        cli_writer_report(&writer);
        status = CLI_EXIT_ERROR;
    }
out:
    if (writer_open) cli_writer_close(&writer, 0);
    sm_dist_printer_free(printer);
    sm_shard_set_free(shards);
    free(paths);
    return status;
}

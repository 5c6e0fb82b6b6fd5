/* seqmatch demux: each record (or pair) to the file of the barcode it
 * carries, written exactly as read.
 *
 * A record goes to the barcode whose hit has the fewest errors; two
 * barcodes equally close, or none, send it to "unassigned". Thousands of
 * barcodes means thousands of files: each has a buffer in memory, and a
 * full buffer is appended to its file through the library's sm_outdir (a
 * small set of open descriptors, the least recently used closed when
 * another is needed). gzip output is a series of members, one per buffer. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"

void cli_print_demux_help(FILE *out) {
    fputs(
        "Usage: seqmatch demux [options] (-p BARCODES | -e SEQ...) -o DIR [TARGET...]\n"
        "       seqmatch demux [options] (-p BARCODES | -e SEQ...) -o DIR -1 R1 -2 R2\n"
        "\n"
        "Sends each record (FASTA or FASTQ; gzip, BGZF or zstd) to DIR/NAME.fastq (or\n"
        ".fasta), NAME being the barcode it carries, byte for byte as it was read. The\n"
        "barcodes are a FASTA file (NAME = header's first word) or one sequence per\n"
        "line, IUPAC codes allowed. A record whose best barcode hit (fewest errors)\n"
        "is shared by two barcodes, or that has none, goes to DIR/unassigned.fastq.\n"
        "Every barcode gets its file, also when empty. A table of records per barcode\n"
        "is printed on standard error at the end.\n"
        "\n"
        "Where the barcode is:\n"
        "  --anchor start|end|any  at the record's start (default), at its end, or\n"
        "                        anywhere; with start or end only the first or last\n"
        "                        (barcode length + k) bases are searched\n"
        "  --min-overlap N       also a barcode that runs off the read's start or end\n"
        "                        with at least N bases inside (with --anchor any)\n"
        "  -m, --mismatches K    up to K substitutions\n"
        "  -k, --edits K         up to K substitutions, insertions or deletions\n"
        "  --strand +|-|both     strands to search (default +: the read as sequenced)\n"
        "  (and every other pattern option of 'seqmatch search': -d, --text-iupac, ...)\n"
        "\n"
        "Output:\n"
        "  -o, --output DIR      the folder (made when missing); existing files of the\n"
        "                        same names are replaced when the run succeeds (the\n"
        "                        files are written in a temporary folder inside DIR\n"
        "                        first; a refused or failed run leaves DIR as it was)\n"
        "  --gzip                write NAME.fastq.gz (and unassigned.fastq.gz)\n"
        "  --trim                cut the barcode off (with its qualities): the first or\n"
        "                        last (barcode length) bases, with --anchor start or end\n"
        "  --summary FILE        the table to FILE instead of standard error\n"
        "  --buffer-size SIZE    bytes held per file before they are appended to it\n"
        "                        (default 256M shared by all files, 64K to 1M each);\n"
        "                        whatever the number of barcodes, at most a few\n"
        "                        hundred files are open at once (fewer under a lower\n"
        "                        ulimit -n)\n"
        "\n"
        "Paired reads:\n"
        "  -1 R1 -2 R2           mates in step; a pair goes whole to NAME_R1.fastq and\n"
        "                        NAME_R2.fastq, by the barcode of one mate:\n"
        "  --barcode-read 1|2    the mate that carries it (default 1); only it is searched\n"
        "\n"
        "Performance: -t, --threads N (default all cores), --chunk-size.\n"
        "\n"
        "Examples:\n"
        "  # barcodes at the read start, one mismatch allowed\n"
        "  seqmatch demux -p barcodes.fa -m 1 -o by_sample --gzip run.fastq.gz\n"
        "  # paired reads, barcode at the start of mate 2, one edit\n"
        "  seqmatch demux -p barcodes.fa -k 1 --barcode-read 2 -o out -1 r1.fq.gz -2 r2.fq.gz\n"
        "  # native barcodes anywhere in long reads, on both strands\n"
        "  seqmatch demux -p nb.fa -k 3 --anchor any --strand both -o out long.fastq\n"
        "\n"
        "Exit status: 0 when it ran, whatever it assigned, 2 on error.\n",
        out);
}

/* Memory for the buffers of all files together, and each one's bounds. */
#define BUFFER_BUDGET ((size_t)256 << 20)
#define BUFFER_MIN ((size_t)64 << 10)
#define BUFFER_MAX ((size_t)1 << 20)

struct demux_state;
struct dm_barcode;

typedef struct {
    char *path;       /* its name, made when the input's format is known */
    size_t index;     /* its temporary file's number (sm_outdir) */
    sm_record_out *out; /* its records, gathered in a buffer (compressed: a member each) */
    struct demux_state *d;
    struct dm_barcode *b;
    unsigned m;
} dm_file;

typedef struct dm_barcode {
    char *name;
    dm_file file[2];
    uint64_t records;
} dm_barcode;

typedef struct demux_state {
    const cli_options *opts;
    const char *dir;
    dm_barcode *bc;          /* nbc barcodes, then unassigned */
    size_t nbc;
    uint32_t *barcode_of;    /* pattern -> barcode */
    unsigned mates;
    int gzip;
    size_t buf_cap;
    sm_record_packer *packer; /* --gzip */
    uint64_t no_hit, ambiguous, total;
    int error;               /* errno of a failed write; the path in failed_path */
    const char *failed_path;
    const cli_reads_job *job;
    const char **inputs;     /* to refuse an output that is an input */
    size_t ninputs;
    sm_outdir *temp;         /* every file is written there, moved on success */
    const sm_db *db;         /* --trim: the barcodes' lengths */
    uint8_t *cut;            /* --trim: a record without its barcode */
    size_t cut_cap;
} demux_state;

static const char UNASSIGNED[] = "unassigned";

/* ------------------------------------------------------------- files */

/* The name of barcode b's file for mate m, for FASTQ records or not. */
static char *output_name(const demux_state *d, const dm_barcode *b, unsigned m, int fastq) {
    const char *mate = d->mates == 2 ? (m == 0 ? "_R1" : "_R2") : "";
    size_t n = strlen(d->dir) + strlen(b->name) + 32;
    char *path = malloc(n);
    if (path) snprintf(path, n, "%s/%s%s.%s%s", d->dir, b->name, mate, fastq ? "fastq" : "fasta", d->gzip ? ".gz" : "");
    return path;
}

/* Before anything is read or written: no file demux may write (with either
   extension, the input's format being unknown yet) is an input or a folder
   or other file that is not a regular one. Returns 0, or -1 (printed). */
static int check_outputs(const demux_state *d) {
    for (size_t i = 0; i <= d->nbc; i++)
        for (unsigned m = 0; m < d->mates; m++)
            for (int fastq = 0; fastq <= 1; fastq++) {
                char *path = output_name(d, &d->bc[i], m, fastq);
                sm_error err;
                int bad = !path || sm_output_check_file(path, d->inputs, d->ninputs, &err) != SM_OK;
                if (bad) cli_error("%s", path ? err.message : "out of memory");
                free(path);
                if (bad) return -1;
            }
    return 0;
}

static int make_path(demux_state *d, dm_barcode *b, unsigned m) {
    dm_file *f = &b->file[m];
    if (f->path) return 0;
    sm_input_format format = d->job->reads ? sm_reads_format(d->job->reads) : d->job->format;
    f->path = output_name(d, b, m, format == SM_INPUT_FASTQ);
    return f->path ? 0 : -1;
}

/* Appends bytes to a file's temporary file (the first time: creating it). */
static int append(demux_state *d, dm_barcode *b, unsigned m, const uint8_t *p, size_t n) {
    if (d->error) return -1;
    if (make_path(d, b, m) != 0) {
        d->error = ENOMEM;
        d->failed_path = d->dir;
        return -1;
    }
    size_t failed = 0;
    int e = sm_outdir_append(d->temp, b->file[m].index, p, n, &failed);
    if (!e) return 0;
    d->error = e;
    /* files i * 2 + m are barcode i's; the last number is the folder's */
    d->failed_path = failed < (d->nbc + 1) * 2 ? d->bc[failed / 2].file[failed % 2].path : d->dir;
    return -1;
}

/* A file's buffer out (sm_record_out's write). */
static int write_file(void *ctx, const void *data, size_t len) {
    dm_file *f = ctx;
    return append(f->d, f->b, f->m, data, len);
}

static int put(demux_state *d, dm_barcode *b, unsigned m, const uint8_t *p, size_t n) {
    dm_file *f = &b->file[m];
    int rc = sm_record_out_put(f->out, p, n);
    if (rc == SM_ERR_NOMEM) {
        d->error = ENOMEM;
        d->failed_path = f->path ? f->path : b->name;
    }
    return rc == SM_OK ? 0 : -1;
}

/* ------------------------------------------------------------- scan */

/* The barcode with the fewest errors, or a tie (sm_read_record_closest_group). */
static void demux_summary(void *ctx, sm_read_record *e, const sm_record_summary *summary) {
    sm_read_record_closest_group(e, summary, ((demux_state *)ctx)->barcode_of);
}

static int demux_record(void *ctx, sm_read_record *e) {
    demux_state *d = ctx;
    size_t to = d->nbc;
    if (e->hits == 0) d->no_hit++;
    else if (e->user[2]) d->ambiguous++;
    else to = d->barcode_of[e->user[1]];
    dm_barcode *b = &d->bc[to];
    b->records++;
    d->total++;
    for (unsigned m = 0; m < e->mates; m++) {
        const uint8_t *raw = e->raw[m];
        size_t n = e->raw_len[m], len = 0;
        if (d->cut_cap != SIZE_MAX && to < d->nbc && (d->mates == 1 || m + 1 == d->job->scan_mate)) {
            /* --trim: the barcode's length off the read's start or end */
            size_t blen = 0;
            sm_db_pattern_seq(d->db, (uint32_t)e->user[1], &blen);
            int start = d->opts->anchor == SM_ANCHOR_START;
            if (sm_trim_record(raw, n, start ? blen : 0, start ? 0 : blen, &d->cut, &len, &d->cut_cap) != SM_OK) {
                d->error = ENOMEM, d->failed_path = b->name;
                return -1;
            }
            raw = d->cut, n = len;
        }
        if (put(d, b, m, raw, n) != 0) return -1;
    }
    return 0;
}

/* ------------------------------------------------------------- setup */

/* A barcode name that is a plain file name. */
static const char *bad_name(const char *name) {
    const char *why = sm_file_name_problem(name);
    if (why) return why;
    if (strcmp(name, UNASSIGNED) == 0) return "is the name of the file for records without a barcode";
    return NULL;
}

/* The barcodes: one per distinct pattern name (the library's groups by
   name), in the order first given. */
static int make_barcodes(demux_state *d, const sm_db *db) {
    sm_db_info info;
    sm_db_get_info(db, &info);
    uint32_t n = info.pattern_count, groups = 0;
    d->barcode_of = malloc((n ? n : 1) * sizeof *d->barcode_of);
    d->bc = calloc((size_t)n + 1, sizeof *d->bc);
    if (!d->barcode_of || !d->bc) {
        cli_error("out of memory");
        return -1;
    }
    for (uint32_t i = 0; i < n; i++) {
        const char *name = sm_db_pattern_name(db, i);
        const char *why = bad_name(name ? name : "");
        if (why) {
            cli_error("barcode %u: its name '%s' %s; name the barcodes in a FASTA file (>NAME)", i + 1,
                      name ? name : "", why);
            return -1;
        }
    }
    if (sm_db_name_groups(db, d->barcode_of, &groups) != SM_OK) {
        cli_error("out of memory");
        return -1;
    }
    for (uint32_t p = 0; p < n; p++) {
        if (d->barcode_of[p] != d->nbc) continue; /* its name came before */
        const char *name = sm_db_pattern_name(db, p);
        if (!(d->bc[d->nbc].name = strdup(name ? name : ""))) {
            cli_error("out of memory");
            return -1;
        }
        d->nbc++;
    }
    d->bc[d->nbc].name = strdup(UNASSIGNED);
    return d->bc[d->nbc].name ? 0 : -1;
}

static void print_summary(const demux_state *d, FILE *out) {
    const char *unit = d->mates == 2 ? "pairs" : "records";
    fprintf(out, "#barcode\t%s\tpercent\tfile\n", unit);
    for (size_t i = 0; i <= d->nbc; i++) {
        const dm_barcode *b = &d->bc[i];
        double pct = d->total ? 100.0 * (double)b->records / (double)d->total : 0.0;
        fprintf(out, "%s\t%llu\t%.2f\t%s\n", b->name, (unsigned long long)b->records, pct,
                b->file[0].path ? b->file[0].path : "");
    }
    fprintf(out, "total\t%llu\t%.2f\t\n", (unsigned long long)d->total, d->total ? 100.0 : 0.0);
    fprintf(out, "# unassigned: %llu without a barcode, %llu with two barcodes equally close\n",
            (unsigned long long)d->no_hit, (unsigned long long)d->ambiguous);
}

int cli_demux_main(int argc, char **argv) {
    cli_options opts;
    int parsed = cli_parse_options(CLI_COMMAND_DEMUX, argc, argv, &opts);
    if (parsed != CLI_PARSE_OK) {
        cli_options_free(&opts);
        return parsed == CLI_PARSE_HELP ? cli_finish_stdout() : CLI_EXIT_ERROR;
    }
    int exit_status = CLI_EXIT_ERROR;
    sm_db *db = NULL;
    demux_state d;
    memset(&d, 0, sizeof d);
    d.opts = &opts;
    d.mates = opts.read1 ? 2 : 1;
    d.gzip = opts.gzip;
    const char *inputs[64];
    if (cli_check_read_options(&opts) != 0) goto cleanup;
    if (!opts.output_path) {
        cli_usage_error(CLI_COMMAND_DEMUX, "no output folder given; use -o DIR");
        goto cleanup;
    }
    if (opts.lines) {
        cli_usage_error(CLI_COMMAND_DEMUX, "demux reads FASTA or FASTQ records; --lines is for filter and search");
        goto cleanup;
    }
    if (opts.barcode_read && !opts.read1) {
        cli_usage_error(CLI_COMMAND_DEMUX, "--barcode-read is for paired reads (-1 and -2)");
        goto cleanup;
    }
    d.dir = opts.output_path;
    /* Barcodes sit at the start of the read as sequenced, unless told. */
    if (opts.min_overlap && (!opts.anchor_given || opts.anchor != SM_ANCHOR_NONE)) {
        /* the default anchor (start) and --min-overlap cannot be combined: say which option to add */
        cli_error("--min-overlap needs --anchor any (demux looks at the read start by default)");
        goto cleanup;
    }
    if (!opts.anchor_given) opts.anchor = SM_ANCHOR_START;
    d.cut_cap = opts.trim_barcode ? 0 : SIZE_MAX; /* SIZE_MAX: no --trim */
    if (!opts.strand_given && !opts.database_path) opts.compile.strands = SM_STRAND_FORWARD;
    d.inputs = inputs;
    d.ninputs = cli_read_inputs(&opts, inputs);
    if (opts.summary_path && cli_check_output(opts.summary_path, inputs, d.ninputs) != 0) goto cleanup;
    if (cli_load_database(&opts, &db) != 0) goto cleanup;
    sm_db_info info;
    sm_db_get_info(db, &info);
    if (info.alphabet != SM_ALPHABET_DNA) {
        cli_usage_error(CLI_COMMAND_DEMUX, "demux reads DNA records; %s was compiled for text",
                        opts.database_path ? opts.database_path : "the database");
        goto cleanup;
    }
    if (opts.trim_barcode && (opts.anchor == SM_ANCHOR_NONE || info.match == SM_MATCH_EDITS)) {
        cli_usage_error(CLI_COMMAND_DEMUX, "--trim cuts the barcode's length off the read's start or end: it needs "
                        "--anchor start or end, and exact matching or -m (with -k the length varies)");
        goto cleanup;
    }
    if (make_barcodes(&d, db) != 0) goto cleanup;
    d.db = db;
    /* Every check that can refuse the run before any file is made. */
    if (check_outputs(&d) != 0) goto cleanup;
    for (size_t i = 0; i <= d.nbc; i++)
        for (unsigned m = 0; m < 2; m++) d.bc[i].file[m].index = i * 2 + m;
    sm_error err;
    if (!(d.temp = sm_outdir_open(d.dir, (d.nbc + 1) * 2, 0, &err))) {
        cli_error("%s", err.message);
        goto cleanup;
    }
    size_t files = (d.nbc + 1) * d.mates;
    d.buf_cap = BUFFER_BUDGET / files;
    if (d.buf_cap < BUFFER_MIN) d.buf_cap = BUFFER_MIN;
    if (d.buf_cap > BUFFER_MAX) d.buf_cap = BUFFER_MAX;
    if (opts.buffer_size) d.buf_cap = opts.buffer_size;
    if (d.gzip && !(d.packer = sm_record_packer_new(d.buf_cap))) {
        cli_error("out of memory");
        goto cleanup;
    }
    for (size_t i = 0; i <= d.nbc; i++)
        for (unsigned m = 0; m < 2; m++) {
            dm_file *f = &d.bc[i].file[m];
            f->d = &d, f->b = &d.bc[i], f->m = m;
            if (!(f->out = sm_record_out_new(d.packer, d.buf_cap, write_file, f))) {
                cli_error("out of memory");
                goto cleanup;
            }
        }

    cli_reads_job job;
    memset(&job, 0, sizeof job);
    job.opts = &opts;
    job.scan_mate = d.mates == 2 ? (opts.barcode_read ? opts.barcode_read : 1) : 0;
    job.on_summary = demux_summary;
    job.on_record = demux_record;
    job.ctx = &d;
    d.job = &job;
    int rc = cli_reads_run(&job, db);
    if (job.format == SM_INPUT_AUTO) job.format = SM_INPUT_FASTQ; /* no input read: names still needed */
    /* Every buffer out, and every barcode's file there (empty ones too). */
    for (size_t i = 0; i <= d.nbc && rc == 0 && !d.error; i++)
        for (unsigned m = 0; m < d.mates && !d.error; m++) {
            dm_file *f = &d.bc[i].file[m];
            /* a gzip file without a record gets an empty member, a plain one is made empty */
            int end = sm_record_out_end(f->out);
            if (end == SM_ERR_NOMEM) d.error = ENOMEM, d.failed_path = f->path ? f->path : d.bc[i].name;
            if (end == SM_OK) append(&d, &d.bc[i], m, (const uint8_t *)"", 0);
        }
    size_t failed = 0;
    int closed = sm_outdir_end(d.temp, &failed);
    if (closed && !d.error) d.error = closed, d.failed_path = d.bc[failed / 2].file[failed % 2].path;
    if (d.error > 0) cli_error("%s: %s", d.failed_path ? d.failed_path : d.dir, strerror(d.error));
    if (rc != 0 || d.error) goto cleanup;
    for (size_t i = 0; i <= d.nbc; i++)
        for (unsigned m = 0; m < d.mates; m++)
            if (make_path(&d, &d.bc[i], m) != 0) {
                cli_error("out of memory");
                goto cleanup;
            }

    /* The run succeeded: the summary is written to its temporary file, every
       barcode's file moved to its name, then the summary to its own. */
    sm_outfile *sf = NULL;
    if (opts.summary_path) {
        if (!(sf = cli_outfile_open(opts.summary_path))) goto cleanup;
        print_summary(&d, sm_outfile_file(sf));
        if (ferror(sm_outfile_file(sf)) || fflush(sm_outfile_file(sf)) != 0) {
            cli_error("%s: %s", opts.summary_path, strerror(EIO));
            sm_outfile_close(sf, 0);
            goto cleanup;
        }
    }
    for (size_t i = 0; i <= d.nbc; i++)
        for (unsigned m = 0; m < d.mates; m++) {
            dm_file *f = &d.bc[i].file[m];
            int e = sm_outdir_commit(d.temp, f->index, f->path);
            if (e) {
                cli_error("%s: %s", f->path, strerror(e));
                sm_outfile_close(sf, 0);
                goto cleanup;
            }
        }
    sm_outdir_close(d.temp);
    d.temp = NULL;
    if (sf) {
        int e = sm_outfile_close(sf, 1);
        if (e) {
            cli_error("%s: %s", opts.summary_path, strerror(e));
            goto cleanup;
        }
    } else {
        print_summary(&d, stderr);
    }
    exit_status = CLI_EXIT_RAN; /* whatever was assigned, as filter */

cleanup:
    if (d.bc)
        for (size_t i = 0; i <= d.nbc; i++) {
            if (!d.bc[i].name && i < d.nbc) continue;
            free(d.bc[i].name);
            for (unsigned m = 0; m < 2; m++) {
                free(d.bc[i].file[m].path);
                sm_record_out_free(d.bc[i].file[m].out);
            }
        }
    free(d.bc);
    free(d.barcode_of);
    free(d.cut);
    sm_outdir_close(d.temp);
    sm_record_packer_free(d.packer);
    if (db) sm_db_free(db);
    cli_options_free(&opts);
    return exit_status;
}

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
        "Usage: seqmatch demux [options] (-p BARCODES | -e SEQ... | --barcodes TSV) -o DIR [TARGET...]\n"
        "       seqmatch demux [options] (-p BARCODES | -e SEQ... | --barcodes TSV) -o DIR -1 R1 -2 R2\n"
        "\n"
        "Sends each record (FASTA or FASTQ; gzip, BGZF or zstd) to DIR/NAME.fastq (or\n"
        ".fasta), NAME being the barcode it carries, byte for byte as it was read. The\n"
        "barcodes are a FASTA file (NAME = header's first word) or one sequence per\n"
        "line, IUPAC codes allowed. A record whose best barcode hit (fewest errors)\n"
        "is shared by two barcodes, or that has none, goes to DIR/unassigned.fastq.\n"
        "Every barcode gets its file, also when empty. A table of records per barcode\n"
        "is printed on standard error at the end.\n"
        "\n"
        "Barcode pairs (dual indexes):\n"
        "  --barcodes TSV        lines 'sample<TAB>barcode1<TAB>barcode2': the pair\n"
        "                        names the sample (DIR/SAMPLE.fastq); barcode1 in mate 1\n"
        "                        and barcode2 in mate 2 (at --anchor); in single reads\n"
        "                        barcode1 at the start, barcode2 at the end as it reads\n"
        "                        there (--strand both: or all reverse complemented); no\n"
        "                        hit, a tie or an unlisted pair: unassigned (a two-column\n"
        "                        TSV is read as -p reads it)\n"
        "  --rc-barcode2         single reads: barcode2's reverse complement at the end\n"
        "  --barcode-tag         add ' BC:Z:BARCODE1-BARCODE2' (as found; one barcode\n"
        "                        without pairs) to assigned records' headers\n"
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
        "                        last bases its hit covers, with --anchor start or end\n"
        "  --summary FILE        the table to FILE instead of standard error\n"
        "  --stats-json FILE     a JSON report: reads, bases, per pattern and sample\n"
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

typedef struct {
    char *name;
    uint64_t records;
} dm_barcode;

typedef struct {
    const cli_options *opts;
    dm_barcode *bc;          /* nbc barcodes (or samples), then unassigned */
    size_t nbc;
    uint32_t *barcode_of;    /* pattern -> barcode */
    unsigned mates;
    uint64_t no_hit, ambiguous, unlisted, total;
    sm_barcode_pairs *pairs; /* --barcodes with pairs: a sample per pair of barcodes */
    const cli_reads_job *job;
    sm_demux_files *files;   /* written in a temporary folder, moved on success */
    const sm_db *db;         /* --trim: the barcodes' lengths */
    uint8_t *cut;            /* --trim, --barcode-tag: a record rewritten */
    size_t cut_cap;
    int failed;              /* said already */
    sm_stats *stats;         /* --stats-json */
} demux_state;

static const char UNASSIGNED[] = "unassigned";

/* ------------------------------------------------------------- scan */

/* The barcode with the fewest errors, or a tie (sm_read_record_closest_group). */
static void demux_summary(void *ctx, sm_read_record *e, const sm_record_summary *summary) {
    demux_state *d = ctx;
    if (d->pairs) sm_barcode_pairs_summary(d->pairs, e, summary);
    else sm_read_record_closest_group(e, summary, d->barcode_of);
}

static int demux_record(void *ctx, sm_read_record *e) {
    demux_state *d = ctx;
    size_t to = d->nbc, blen[2] = {0, 0};
    sm_barcode_pair_match pm = {.pattern = {(uint32_t)e->user[1], 0}};
    if (d->pairs) {
        sm_barcode_pairs_assign(d->pairs, e, &pm);
        d->no_hit += pm.why == SM_PAIR_NO_HIT, d->ambiguous += pm.why == SM_PAIR_AMBIGUOUS;
        d->unlisted += pm.why == SM_PAIR_UNLISTED;
        if (pm.why == SM_PAIR_ASSIGNED) to = pm.sample;
    } else if (e->hits == 0) d->no_hit++;
    else if (e->user[2]) d->ambiguous++;
    else to = d->barcode_of[e->user[1]];
    d->bc[to].records++;
    d->total++;
    if (to < d->nbc) sm_stats_add(d->stats, "reads", "output", 1);
    /* which mate (or end: 1 for a single read's second barcode) holds each barcode, at which end; what it covers */
    int end = d->opts->anchor == SM_ANCHOR_END, pairs = d->pairs != NULL;
    unsigned mate_of[2] = {d->mates == 2 && !pairs ? d->job->scan_mate - 1 : 0, d->mates == 2 ? 1 : 0};
    for (int i = 0; to < d->nbc && (d->opts->trim_barcode || d->opts->barcode_tag) && i <= pairs; i++)
        blen[i] = sm_barcode_span(d->db, pm.pattern[i], pairs ? d->mates == 1 && i : -1, e->raw[mate_of[i]],
                                  e->raw_len[mate_of[i]], d->mates == 1 ? i || end : end);
    char tag[600] = "BC:Z:";
    for (int i = 0; d->opts->barcode_tag && to < d->nbc && i <= pairs; i++) { /* w: its window; reversed: as on the construct */
        int w = pm.reversed ? 1 - i : i, from = (d->mates == 1 ? w || end : end) | 2 * pm.reversed;
        size_t at = strlen(tag), want = blen[w] < 250 ? blen[w] : 250;
        if (i) tag[at++] = '-';
        sm_record_seq_end(e->raw[mate_of[w]], e->raw_len[mate_of[w]], from, want, tag + at);
    }
    for (unsigned m = 0; m < e->mates; m++) {
        const uint8_t *raw = e->raw[m];
        size_t n = e->raw_len[m], len = 0;
        uint64_t head = 0, tail = 0;
        for (int i = 0; d->opts->trim_barcode && to < d->nbc && i <= pairs; i++)
            if (mate_of[i] == m) *(d->mates == 1 ? (i || end ? &tail : &head) : (end ? &tail : &head)) += blen[i];
        if (head || tail || (d->opts->barcode_tag && to < d->nbc)) {
            /* --trim: the barcodes off the read; --barcode-tag: them as found in the header */
            const char *t = d->opts->barcode_tag && to < d->nbc ? tag : NULL;
            if (sm_record_rewrite(raw, n, t, head, tail, &d->cut, &len, &d->cut_cap) != SM_OK) {
                cli_error("out of memory");
                return d->failed = -1;
            }
            raw = d->cut, n = len;
        }
        if (to < d->nbc) sm_stats_add(d->stats, "bases", "output", sm_record_seq_length(raw, n));
        sm_demux_files_format(d->files, sm_reads_format(d->job->reads) == SM_INPUT_FASTQ);
        if (sm_demux_files_put(d->files, to, m, raw, n) != 0) return -1;
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
    uint32_t n = d->pairs ? (uint32_t)sm_barcode_pairs_samples(d->pairs) : info.pattern_count, groups = 0;
    d->barcode_of = malloc((n ? n : 1) * sizeof *d->barcode_of);
    d->bc = calloc((size_t)n + 1, sizeof *d->bc);
    if (!d->barcode_of || !d->bc) {
        cli_error("out of memory");
        return -1;
    }
    for (uint32_t i = 0; i < n; i++) {
        const char *name = d->pairs ? sm_barcode_pairs_sample(d->pairs, i) : sm_db_pattern_name(db, i);
        const char *why = bad_name(name ? name : "");
        if (why) {
            cli_error("barcode %u: its name '%s' %s; name the barcodes in a FASTA file (>NAME)", i + 1,
                      name ? name : "", why);
            return -1;
        }
    }
    for (uint32_t i = 0; d->pairs && i < n; i++) d->barcode_of[i] = i; /* samples are distinct */
    if (!d->pairs && sm_db_name_groups(db, d->barcode_of, &groups) != SM_OK) {
        cli_error("out of memory");
        return -1;
    }
    for (uint32_t p = 0; p < n; p++) {
        if (d->barcode_of[p] != d->nbc) continue; /* its name came before */
        const char *name = d->pairs ? sm_barcode_pairs_sample(d->pairs, p) : sm_db_pattern_name(db, p);
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
    fprintf(out, "#%s\t%s\tpercent\tfile\n", d->pairs ? "sample" : "barcode", unit);
    for (size_t i = 0; i <= d->nbc; i++) {
        const dm_barcode *b = &d->bc[i];
        double pct = d->total ? 100.0 * (double)b->records / (double)d->total : 0.0;
        fprintf(out, "%s\t%llu\t%.2f\t%s\n", b->name, (unsigned long long)b->records, pct, sm_demux_files_path(d->files, i, 0));
    }
    fprintf(out, "total\t%llu\t%.2f\t\n", (unsigned long long)d->total, d->total ? 100.0 : 0.0);
    fprintf(out, "# unassigned: %llu without a barcode, %llu with two barcodes equally close", (unsigned long long)d->no_hit,
            (unsigned long long)d->ambiguous);
    if (d->pairs) fprintf(out, ", %llu with a pair not in the table", (unsigned long long)d->unlisted);
    fputc('\n', out);
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
    const char *inputs[64];
    if (cli_check_read_options(&opts) != 0) goto cleanup;
    const char *usage = !opts.output_path ? "no output folder given; use -o DIR"
                        : opts.lines ? "demux reads FASTA or FASTQ records; --lines is for filter and search"
                        : opts.barcode_read && !opts.read1 ? "--barcode-read is for paired reads (-1 and -2)" : NULL;
    if (usage) {
        cli_usage_error(CLI_COMMAND_DEMUX, "%s", usage);
        goto cleanup;
    }
    /* Barcodes sit at the start of the read as sequenced, unless told. */
    if (opts.min_overlap && (!opts.anchor_given || opts.anchor != SM_ANCHOR_NONE)) {
        /* the default anchor (start) and --min-overlap cannot be combined: say which option to add */
        cli_error("--min-overlap needs --anchor any (demux looks at the read start by default)");
        goto cleanup;
    }
    sm_error err;
    if (opts.barcodes_path && sm_barcode_pairs_read(opts.barcodes_path, &d.pairs, &err) != SM_OK) {
        cli_error("%s", err.message);
        goto cleanup;
    }
    const char *why = !d.pairs ? NULL
                      : opts.source_count > 1 || opts.database_path ? "takes no other barcodes (-p, -e, -d)"
                      : opts.barcode_read ? "searches both mates (barcode1 in mate 1, barcode2 in mate 2): no --barcode-read"
                      : opts.strand_given && (opts.read1 || opts.compile.strands != SM_STRAND_BOTH)
                          ? "takes --strand both only for single reads (both orientations; --rc-barcode2: barcode2's reverse complement)"
                      : !opts.read1 && opts.anchor_given ? "of single reads seeks barcode1 at the start and barcode2 at the end: no --anchor"
                      : NULL;
    if (why) cli_error("--barcodes with pairs %s", why);
    else if (opts.rc_barcode2 && (!d.pairs || opts.read1))
        why = "", cli_error("--rc-barcode2 is for barcode pairs on single reads (barcode2 at the read's end)");
    if (why) goto cleanup;
    if (d.pairs) sm_barcode_pairs_orientations(d.pairs, opts.strand_given);
    if (!opts.anchor_given) opts.anchor = SM_ANCHOR_START;
    if (!opts.strand_given && !opts.database_path) opts.compile.strands = SM_STRAND_FORWARD;
    size_t ninputs = cli_read_inputs(&opts, inputs);
    if (opts.summary_path && cli_check_output(opts.summary_path, inputs, ninputs) != 0) goto cleanup;
    /* single reads: the end is scanned as its reverse complement (sm_reads_options.end_window) */
    if (d.pairs && sm_barcode_pairs_compile(d.pairs, &opts.compile, d.mates == 1 && !opts.rc_barcode2, &db, &err) != SM_OK) {
        cli_error("%s: %s", opts.barcodes_path, err.message[0] ? err.message : "out of memory");
        goto cleanup;
    }
    if (!d.pairs && cli_load_database(&opts, &db) != 0) goto cleanup;
    if (cli_stats_open(&opts, &d.stats) != 0) goto cleanup;
    sm_db_info info;
    sm_db_get_info(db, &info);
    if (info.alphabet != SM_ALPHABET_DNA) {
        if (opts.database_path)
            cli_usage_error(CLI_COMMAND_DEMUX, "demux reads DNA records; %s was compiled for text",
                            opts.database_path);
        else
            cli_usage_error(CLI_COMMAND_DEMUX, "demux reads DNA records: --alphabet text does not apply");
        goto cleanup;
    }
    if ((opts.trim_barcode || opts.barcode_tag) && opts.anchor == SM_ANCHOR_NONE) {
        cli_usage_error(CLI_COMMAND_DEMUX, "%s takes the barcode at the read's start or end: it needs --anchor start "
                        "or end", opts.trim_barcode ? "--trim" : "--barcode-tag");
        goto cleanup;
    }
    if (make_barcodes(&d, db) != 0) goto cleanup;
    d.db = db;
    /* Every check that can refuse the run before any file is made (sm_demux_files_open). */
    const char **names = malloc((d.nbc + 1) * sizeof *names);
    for (size_t i = 0; names && i <= d.nbc; i++) names[i] = d.bc[i].name;
    sm_demux_files_options fo = {d.mates, opts.gzip, opts.buffer_size, inputs, ninputs};
    if (!names) snprintf(err.message, sizeof err.message, "out of memory");
    d.files = names ? sm_demux_files_open(opts.output_path, names, d.nbc + 1, &fo, &err) : NULL;
    free(names);
    if (!d.files) {
        cli_error("%s", err.message);
        goto cleanup;
    }

    cli_reads_job job;
    memset(&job, 0, sizeof job);
    job.opts = &opts;
    job.scan_mate = d.mates == 2 && !d.pairs ? (opts.barcode_read ? opts.barcode_read : 1) : 0;
    job.end_window = d.pairs && d.mates == 1 ? info.max_length + info.max_errors : 0;
    job.on_summary = demux_summary;
    job.on_record = demux_record;
    job.ctx = &d;
    job.stats = d.stats;
    d.job = &job;
    int rc = cli_reads_run(&job, db) | d.failed;
    sm_demux_files_format(d.files, job.format != SM_INPUT_FASTA); /* no input read: FASTQ names */
    if (sm_demux_files_end(d.files, rc == 0, &err) != SM_OK) cli_error("%s", err.message);
    if (rc != 0 || err.message[0]) goto cleanup;

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
    for (size_t i = 0; d.stats && i <= d.nbc; i++)
        for (unsigned m = 0; m < d.mates; m++) {
            if (!m) sm_stats_item(d.stats, "samples", d.bc[i].name, "reads", d.bc[i].records);
            sm_stats_item_text(d.stats, "samples", d.bc[i].name, d.mates == 1 ? "file" : m ? "file_r2" : "file_r1",
                               sm_demux_files_path(d.files, i, m));
        }
    sm_stats_add(d.stats, "unassigned", "no_hit", d.no_hit);
    sm_stats_add(d.stats, "unassigned", "ambiguous", d.ambiguous);
    if (d.pairs) sm_stats_add(d.stats, "unassigned", "unlisted", d.unlisted);
    if (sm_demux_files_commit(d.files, &err) != SM_OK || cli_stats_write(d.stats, opts.stats_path) != 0) {
        if (err.message[0]) cli_error("%s", err.message);
        sm_outfile_close(sf, 0);
        goto cleanup;
    }
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
    for (size_t i = 0; d.bc && i <= d.nbc; i++) free(d.bc[i].name);
    free(d.bc);
    free(d.barcode_of);
    free(d.cut);
    sm_barcode_pairs_free(d.pairs);
    sm_demux_files_free(d.files);
    sm_stats_free(d.stats);
    if (db) sm_db_free(db);
    cli_options_free(&opts);
    return exit_status;
}

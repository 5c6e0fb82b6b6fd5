/* The option table of every command and the one parser it drives
 * (cli_parse_argv); search's, compile's, filter's and demux's options.
 *
 * Accepted forms: --name VALUE, --name=VALUE, -x VALUE, -xVALUE, grouped
 * flags (-qi), '--' to end the options, and '-' as a target (stdin). */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"


/* filter and demux scan as search does: they take its options, less those
   about hit output (reads_refuse below). */
enum { FOR_FILTER = 1u << CLI_COMMAND_FILTER, FOR_DEMUX = 1u << CLI_COMMAND_DEMUX,
       FOR_READS = FOR_FILTER | FOR_DEMUX,
       FOR_SEARCH = (1u << CLI_COMMAND_SEARCH) | FOR_READS, FOR_COMPILE = 1u << CLI_COMMAND_COMPILE,
       FOR_SEARCH_ONLY = 1u << CLI_COMMAND_SEARCH, FOR_BOTH = FOR_SEARCH | FOR_COMPILE, FOR_DFA = 1u << CLI_COMMAND_DFA, FOR_MERGE = 1u << CLI_COMMAND_MERGE,
       FOR_TRIM = 1u << CLI_COMMAND_TRIM, FOR_AMPLICON = 1u << CLI_COMMAND_AMPLICON };

/* How an option's value is taken: by the switch in apply_option (custom),
   or from the table alone: a constant stored (flag), a non-empty file name,
   a count or a size within bounds, one of a list of names. */
typedef enum { V_CUSTOM, V_FLAG, V_PATH, V_COUNT, V_SIZE, V_CHOICE } value_kind;

typedef struct {
    const char *name;
    int value;
} choice;

typedef struct {
    cli_option_id id;
    char short_name;        /* 0 when there is none */
    const char *long_name;
    int takes_value;
    unsigned commands;      /* FOR_* */
    int is_compile_option;  /* fixed by a saved database, so refused with -d */
    value_kind kind;
    size_t offset, width;   /* the cli_options field the value goes to */
    unsigned long long min, max; /* V_FLAG: the constant in max */
    const choice *choices;  /* V_CHOICE: ending with a NULL name */
    const char *refusal;    /* format of the message for a bad value (the option, the value) */
    size_t given;           /* offset of an int set to 1 when the option is given (0: none) */
} option_spec;

#define AT(field) offsetof(cli_options, field), sizeof(((cli_options *)0)->field)
#define GIVEN(field) offsetof(cli_options, field)
/* dfa's own options (FOR_DFA alone) go to its struct */
#define DFA_AT(field) offsetof(cli_dfa_options, field), sizeof(((cli_dfa_options *)0)->field)
#define DFA_GIVEN(field) offsetof(cli_dfa_options, field)
#define CUSTOM V_CUSTOM, 0, 0, 0, 0, NULL, NULL, 0
#define FLAG(field, v) V_FLAG, AT(field), 0, v, NULL, NULL, 0
#define PATH(field) V_PATH, AT(field), 0, 0, NULL, "%s: empty file name", 0
#define COUNT(field, max, refusal, given) V_COUNT, AT(field), 0, max, NULL, refusal, given
#define DFA_FLAG(field, v) V_FLAG, DFA_AT(field), 0, v, NULL, NULL, 0
#define DFA_COUNT(field, max, refusal, given) V_COUNT, DFA_AT(field), 1, max, NULL, refusal, given
#define DFA_SIZE(field, max, refusal) V_SIZE, DFA_AT(field), 1, max, NULL, refusal, 0
#define DFA_CHOICE(field, list, refusal, given) V_CHOICE, DFA_AT(field), 0, 0, list, refusal, given
#define SIZE(field, min, max, refusal) V_SIZE, AT(field), min, max, NULL, refusal, 0
#define CHOICE(field, list, refusal, given) V_CHOICE, AT(field), 0, 0, list, refusal, given

static const choice alphabets[] = {{"dna", SM_ALPHABET_DNA}, {"text", SM_ALPHABET_TEXT}, {NULL, 0}};
static const choice strands[] = {{"both", SM_STRAND_BOTH}, {"+", SM_STRAND_FORWARD}, {"forward", SM_STRAND_FORWARD},
                                 {"-", SM_STRAND_REVERSE}, {"reverse", SM_STRAND_REVERSE}, {NULL, 0}};
static const choice reports[] = {{"best", SM_REPORT_BEST}, {"ends", SM_REPORT_ENDS}, {NULL, 0}};
static const choice formats[] = {{"tsv", SM_FORMAT_TSV}, {"bed", SM_FORMAT_BED}, {"jsonl", SM_FORMAT_JSONL},
    {"count", SM_FORMAT_COUNT}, {"sam", SM_FORMAT_SAM}, {"bam", SM_FORMAT_BAM}, {"records", SM_FORMAT_RECORDS},
    {"profile", SM_FORMAT_PROFILE}, {"profile-jsonl", SM_FORMAT_PROFILE_JSONL}, {NULL, 0}};
static const choice anchors[] = {{"start", SM_ANCHOR_START}, {"end", SM_ANCHOR_END}, {"any", SM_ANCHOR_NONE}, {NULL, 0}};
static const choice backends[] = {{"cpu", SM_BACKEND_CPU}, {"gpu", SM_BACKEND_CUDA}, {NULL, 0}};
static const choice mates[] = {{"1", 1}, {"2", 2}, {NULL, 0}};
static const choice dfa_matches[] = {{"contains", SM_DFA_CONTAINS}, {"ends", SM_DFA_ENDS}, {NULL, 0}};
static const choice policies[] = {{"balanced", SM_DFA_CHUNKS_BALANCED}, {"equal", SM_DFA_CHUNKS_EQUAL}, {NULL, 0}};
static const choice simds[] = {{"auto", SM_DFA_SIMD_AUTO}, {"avx2", SM_DFA_SIMD_AVX2}, {"scalar", SM_DFA_SIMD_SCALAR}, {NULL, 0}};

static const option_spec option_table[] = {
    {OPT_PATTERNS, 'p', "patterns", 1, FOR_BOTH|FOR_AMPLICON, 0, CUSTOM},
    {OPT_PATTERN, 'e', "pattern", 1, FOR_BOTH, 0, CUSTOM},
    {OPT_EXACT_PATTERNS, 0, "exact-patterns", 1, FOR_BOTH, 0, CUSTOM},
    {OPT_DATABASE, 'd', "database", 1, FOR_SEARCH, 0, CUSTOM},
    {OPT_ALPHABET, 0, "alphabet", 1, FOR_BOTH|FOR_DFA, 1,
     CHOICE(compile.alphabet, alphabets, "%s: unknown alphabet '%s'; use dna or text", GIVEN(alphabet_given))},
    {OPT_LINES, 0, "lines", 0, FOR_SEARCH, 0, FLAG(lines, 1)},
    {OPT_STRAND, 0, "strand", 1, FOR_BOTH|FOR_DFA, 1,
     CHOICE(compile.strands, strands, "%s: unknown strand '%s'; use both, + or -", GIVEN(strand_given))},
    {OPT_IGNORE_CASE, 'i', "ignore-case", 0, FOR_BOTH|FOR_DFA, 1, CUSTOM},
    {OPT_TEXT_IUPAC, 0, "text-iupac", 0, FOR_BOTH|FOR_TRIM|FOR_AMPLICON, 1, CUSTOM},
    {OPT_ENGINE, 0, "engine", 1, FOR_BOTH|FOR_TRIM|FOR_AMPLICON, 1, CUSTOM},
    {OPT_BUILD_THREADS, 0, "build-threads", 1, FOR_BOTH|FOR_TRIM|FOR_AMPLICON, 1,
     COUNT(compile.build_threads, 4096, "%s: '%s' is not a thread count (0 to 4096)", GIVEN(build_threads_given))},
    {OPT_BUILD_BACKEND, 0, "build-backend", 1, FOR_COMPILE, 1,
     CHOICE(compile.build_backend, backends, "%s: unknown build backend '%s'; use cpu or gpu", 0)},
    {OPT_MAX_MEMORY, 0, "max-memory", 1, FOR_BOTH|FOR_TRIM|FOR_AMPLICON, 1,
     SIZE(compile.max_memory, 1, UINT64_MAX, "%s: '%s' is not a size (e.g. 512M or 4G)")},
    {OPT_MISMATCHES, 'm', "mismatches", 1, FOR_BOTH|FOR_TRIM|FOR_AMPLICON, 1, CUSTOM},
    {OPT_EDITS, 'k', "edits", 1, FOR_BOTH|FOR_TRIM|FOR_AMPLICON, 1, CUSTOM},
    {OPT_REPORT, 0, "report", 1, FOR_BOTH, 1,
     CHOICE(compile.report, reports, "%s: unknown report mode '%s'; use best or ends", GIVEN(report_given))},
    {OPT_PAM, 0, "pam", 1, FOR_BOTH, 1, CUSTOM},
    {OPT_PAM5, 0, "pam5", 1, FOR_BOTH, 1, CUSTOM},
    {OPT_DNA_BULGES, 0, "dna-bulges", 1, FOR_BOTH, 1,
     COUNT(compile.dna_bulges, SM_MAX_BULGE, "%s: '%s' is not a bulge size (0 to 8)", 0)},
    {OPT_RNA_BULGES, 0, "rna-bulges", 1, FOR_BOTH, 1,
     COUNT(compile.rna_bulges, SM_MAX_BULGE, "%s: '%s' is not a bulge size (0 to 8)", 0)},
    {OPT_SITE, 0, "site", 0, FOR_SEARCH, 0, FLAG(site, 1)},
    {OPT_PROFILE, 0, "profile", 1, FOR_SEARCH, 0, PATH(profile_path)},
    {OPT_FORMAT, 0, "format", 1, FOR_SEARCH|FOR_AMPLICON, 0,
     CHOICE(format, formats, "%s: unknown format '%s'; use tsv, bed, jsonl, count, sam, bam, records, profile or "
                             "profile-jsonl", 0)},
    {OPT_OUTPUT, 'o', "output", 1, FOR_BOTH|FOR_DFA|FOR_MERGE|FOR_TRIM|FOR_AMPLICON, 0, PATH(output_path)},
    {OPT_THREADS, 't', "threads", 1, FOR_SEARCH|FOR_DFA|FOR_TRIM|FOR_AMPLICON, 0,
     COUNT(threads, 4096, "%s: '%s' is not a thread count (0 = all cores, up to 4096)", 0)},
    {OPT_CHUNK_SIZE, 0, "chunk-size", 1, FOR_SEARCH|FOR_TRIM|FOR_AMPLICON, 0,
     SIZE(chunk_size, 1, SIZE_MAX / 4, "%s: '%s' is not a positive size in bytes (e.g. 4096 or 1M)")},
    {OPT_OVERLAP_FREE, 0, "overlap-free", 0, FOR_SEARCH, 0, FLAG(overlap_free, SM_OVERLAP_FREE_SPECULATE)},
    {OPT_OVERLAP_FREE_PREFIX, 0, "overlap-free-prefix", 0, FOR_SEARCH, 0, FLAG(overlap_free, SM_OVERLAP_FREE_PREFIX)},
    {OPT_GPU, 0, "gpu", 0, FOR_BOTH|FOR_DFA, 0, FLAG(gpu, 1)},
    {OPT_QUIET, 'q', "quiet", 0, FOR_SEARCH, 0, FLAG(quiet, 1)},
    {OPT_NO_HEADER, 0, "no-header", 0, FOR_SEARCH|FOR_AMPLICON, 0, FLAG(header, 0)},
    {OPT_MAX_HITS, 0, "max-hits", 1, FOR_SEARCH, 0,
     COUNT(max_hits, UINT64_MAX, "%s: '%s' is not a hit count (0 to 18446744073709551615)", GIVEN(max_hits_given))},
    {OPT_WITH_FILENAME, 'H', "with-filename", 0, FOR_SEARCH|FOR_AMPLICON, 0, FLAG(filename, CLI_FILENAME_ON)},
    {OPT_NO_FILENAME, 0, "no-filename", 0, FOR_SEARCH|FOR_AMPLICON, 0, FLAG(filename, CLI_FILENAME_OFF)},
    {OPT_SHARD, 0, "shard", 1, FOR_SEARCH|FOR_DFA, 0, CUSTOM},
    {OPT_PROGRESS, 0, "progress", 0, FOR_SEARCH|FOR_TRIM|FOR_AMPLICON, 0, FLAG(progress, CLI_PROGRESS_ON)},
    {OPT_NO_PROGRESS, 0, "no-progress", 0, FOR_SEARCH|FOR_TRIM|FOR_AMPLICON, 0, FLAG(progress, CLI_PROGRESS_OFF)},
    {OPT_EXPLAIN, 0, "explain", 0, FOR_COMPILE, 0, FLAG(explain, 1)},
    {OPT_DUMP_DFA, 0, "dump-dfa", 0, FOR_COMPILE, 0, FLAG(dump_dfa, 1)},
    {OPT_HELP, 'h', "help", 0, FOR_BOTH|FOR_DFA|FOR_MERGE|FOR_TRIM|FOR_AMPLICON, 0, CUSTOM},
    {OPT_VERSION, 0, "version", 0, FOR_BOTH|FOR_TRIM|FOR_AMPLICON, 0, CUSTOM},
    {OPT_CIRCULAR, 'c', "circular", 0, FOR_SEARCH, 0, FLAG(circular, 1)},
    {OPT_CIGAR, 0, "cigar", 0, FOR_SEARCH, 0, FLAG(cigar, 1)},
    {OPT_ANCHOR, 0, "anchor", 1, FOR_SEARCH, 0,
     CHOICE(anchor, anchors, "%s: unknown anchor '%s'; use start, end or any", GIVEN(anchor_given))},
    {OPT_MIN_OVERLAP, 0, "min-overlap", 1, FOR_SEARCH|FOR_TRIM, 0, CUSTOM},
    {OPT_MAX_HITS_PER_PATTERN, 0, "max-hits-per-pattern", 1, FOR_SEARCH_ONLY, 0, CUSTOM},
    {OPT_MAX_HITS_PER_RECORD, 0, "max-hits-per-record", 1, FOR_SEARCH_ONLY, 0, CUSTOM},
    {OPT_FEWEST_ERRORS, 0, "fewest-errors", 0, FOR_SEARCH_ONLY, 0, FLAG(fewest_errors, 1)},
    {OPT_ADAPTER, 'a', "adapter", 1, FOR_TRIM, 0, CUSTOM},
    {OPT_FRONT, 'g', "front", 1, FOR_TRIM, 0, CUSTOM},
    {OPT_ADAPTER2, 'A', "adapter2", 1, FOR_TRIM, 0, CUSTOM},
    {OPT_DISCARD_UNTRIMMED, 0, "discard-untrimmed", 0, FOR_TRIM, 0, FLAG(discard, SM_TRIM_DISCARD_UNTRIMMED)},
    {OPT_DISCARD_TRIMMED, 0, "discard-trimmed", 0, FOR_TRIM, 0, FLAG(discard, SM_TRIM_DISCARD_TRIMMED)},
    {OPT_FRONT2, 'G', "front2", 1, FOR_TRIM, 0, CUSTOM},
    {OPT_MINIMUM_LENGTH, 0, "minimum-length", 1, FOR_TRIM, 0,
     COUNT(minimum_length, UINT64_MAX, "%s: '%s' is not a length (0 to 18446744073709551615)", 0)},
    {OPT_FORWARD, 'F', "forward", 1, FOR_AMPLICON, 0, CUSTOM},
    {OPT_REVERSE, 'R', "reverse", 1, FOR_AMPLICON, 0, CUSTOM},
    {OPT_MIN_SIZE, 0, "min-size", 1, FOR_AMPLICON, 0, COUNT(min_size, UINT64_MAX, "%s: '%s' is not a size in bases", 0)},
    {OPT_MAX_SIZE, 0, "max-size", 1, FOR_AMPLICON, 0, COUNT(max_size, UINT64_MAX, "%s: '%s' is not a size in bases", 0)},
    {OPT_LONGEST, 0, "longest", 0, FOR_AMPLICON, 0, FLAG(longest, 1)},
    {OPT_SEQUENCE, 0, "sequence", 0, FOR_AMPLICON, 0, FLAG(sequence, 1)},
    {OPT_INVERT, 'v', "invert", 0, FOR_FILTER, 0, FLAG(invert, 1)},
    {OPT_MATCHED, 0, "matched", 1, FOR_FILTER, 0, PATH(matched_path)},
    {OPT_UNMATCHED, 0, "unmatched", 1, FOR_FILTER, 0, PATH(unmatched_path)},
    {OPT_READ1, '1', "read1", 1, FOR_READS|FOR_TRIM, 0, PATH(read1)},
    {OPT_READ2, '2', "read2", 1, FOR_READS|FOR_TRIM, 0, PATH(read2)},
    {OPT_GZIP, 0, "gzip", 0, FOR_DEMUX, 0, FLAG(gzip, 1)},
    {OPT_SUMMARY, 0, "summary", 1, FOR_DEMUX, 0, PATH(summary_path)},
    {OPT_TRIM_BARCODE, 0, "trim", 0, FOR_DEMUX, 0, FLAG(trim_barcode, 1)},
    {OPT_BARCODES, 0, "barcodes", 1, FOR_DEMUX, 0, CUSTOM},
    {OPT_RC_BARCODE2, 0, "rc-barcode2", 0, FOR_DEMUX, 0, FLAG(rc_barcode2, 1)},
    {OPT_BARCODE_TAG, 0, "barcode-tag", 0, FOR_DEMUX, 0, FLAG(barcode_tag, 1)},
    {OPT_COLUMNS, 0, "columns", 1, FOR_SEARCH_ONLY, 0, CUSTOM},
    {OPT_STATS_JSON, 0, "stats-json", 1, FOR_SEARCH_ONLY|FOR_READS|FOR_TRIM|FOR_AMPLICON, 0, PATH(stats_path)},
    {OPT_BARCODE_READ, 0, "barcode-read", 1, FOR_DEMUX, 0,
     CHOICE(barcode_read, mates, "%s: '%s' is not a mate; use 1 or 2", 0)},
    {OPT_BUFFER_SIZE, 0, "buffer-size", 1, FOR_DEMUX, 0,
     SIZE(buffer_size, 1024, (uint64_t)1 << 30, "%s: '%s' is not a size from 1K to 1G")},
    {OPT_DFA, 0, "dfa", 1, FOR_DFA, 0, CUSTOM},
    {OPT_FROM_PATTERNS, 0, "from-patterns", 1, FOR_DFA, 0, CUSTOM},
    {OPT_REGEX, 0, "regex", 1, FOR_DFA, 0, CUSTOM},
    {OPT_MATCH, 0, "match", 1, FOR_DFA, 0,
     DFA_CHOICE(match, dfa_matches, "%s takes contains or ends, not '%s'", DFA_GIVEN(match_given))},
    {OPT_MAX_STATES, 0, "max-states", 1, FOR_DFA, 0,
     DFA_COUNT(max_states, SM_DFA_MAX_STATES, "%s takes a number from 1, not '%s'", 0)},
    {OPT_MINIMIZE, 0, "minimize", 0, FOR_DFA, 0, DFA_FLAG(minimize, 1)},
    {OPT_NO_MINIMIZE, 0, "no-minimize", 0, FOR_DFA, 0, DFA_FLAG(minimize, 0)},
    {OPT_DUMP, 0, "dump", 0, FOR_DFA, 0, DFA_FLAG(dump, 1)},
    {OPT_SKIP_UNKNOWN, 0, "skip-unknown", 0, FOR_DFA, 0, DFA_FLAG(skip_unknown, 1)},
    {OPT_PER_RECORD, 0, "per-record", 0, FOR_DFA, 0, DFA_FLAG(per_record, 1)},
    {OPT_CHUNKS, 0, "chunks", 1, FOR_DFA, 0,
     DFA_COUNT(parallel.chunks, 1u << 20, "%s takes a number from 1, not '%s'", DFA_GIVEN(chunks_given))},
    {OPT_POLICY, 0, "policy", 1, FOR_DFA, 0,
     DFA_CHOICE(parallel.policy, policies, "%s takes balanced or equal, not '%s'", 0)},
    {OPT_FIRST_CHUNK_RATIO, 0, "first-chunk-ratio", 1, FOR_DFA, 0, CUSTOM},
    {OPT_SIMD, 0, "simd", 1, FOR_DFA, 0,
     DFA_CHOICE(simd, simds, "%s takes auto, avx2 or scalar, not '%s'", DFA_GIVEN(simd_given))},
    {OPT_GPU_BATCH, 0, "gpu-batch", 1, FOR_DFA, 0,
     DFA_SIZE(gpu_batch, (uint64_t)1 << 40, "%s takes a size from 1 byte (K, M, G suffixes), not '%s'")},
};
#define OPTION_COUNT (sizeof option_table / sizeof option_table[0])

unsigned cli_online_cores(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (unsigned)n : 1u;
}

unsigned cli_threads(unsigned asked) { return asked ? asked : cli_online_cores(); }

static const option_spec *find_long(const char *name, size_t len) {
    for (size_t i = 0; i < OPTION_COUNT; i++) {
        const char *candidate = option_table[i].long_name;
        if (strlen(candidate) == len && memcmp(candidate, name, len) == 0) return &option_table[i];
    }
    return NULL;
}

static const option_spec *find_short(char c) {
    for (size_t i = 0; i < OPTION_COUNT; i++)
        if (option_table[i].short_name == c) return &option_table[i];
    return NULL;
}

static int add_source(cli_options *opts, int is_file, const char *text, int exact) {
    cli_pattern_source *grown = realloc(opts->sources, (opts->source_count + 1) * sizeof *grown);
    if (!grown) {
        cli_error("out of memory");
        return -1;
    }
    opts->sources = grown;
    opts->sources[opts->source_count].is_file = is_file;
    opts->sources[opts->source_count].text = text;
    opts->sources[opts->source_count].exact = exact;
    opts->source_count++;
    return 0;
}

static int add_target(cli_options *opts, char *path) {
    char **grown = realloc(opts->targets, (opts->target_count + 1) * sizeof *grown);
    if (!grown) {
        cli_error("out of memory");
        return -1;
    }
    opts->targets = grown;
    opts->targets[opts->target_count++] = path;
    return 0;
}

typedef struct {
    int ignore_case;
    int text_iupac;
} seen_options;

/* Options of search about hit output, which filter and demux do not print. */
static int reads_refuse(cli_option_id id) {
    return id == OPT_FORMAT || id == OPT_NO_HEADER || id == OPT_WITH_FILENAME || id == OPT_NO_FILENAME ||
           id == OPT_QUIET || id == OPT_MAX_HITS || id == OPT_SITE || id == OPT_PROFILE;
}

/* An option the table describes alone (its kind is not V_CUSTOM), into the
   struct at base (cli_options, or dfa's own for FOR_DFA-only entries). */
static int apply_typed(cli_command command, void *base, const option_spec *spec, const char *shown,
                       const char *value) {
    unsigned long long number = spec->max;
    const void *from = &number;
    uint64_t size = 0;
    switch (spec->kind) {
    case V_PATH:
        from = &value;
        if (value[0] == '\0') goto refused;
        break;
    case V_COUNT:
        if (sm_parse_count(value, spec->max, &number) != 0 || number < spec->min) goto refused;
        break;
    case V_SIZE:
        if (sm_parse_size(value, &size) != 0 || size < spec->min || size > spec->max) goto refused;
        number = size;
        break;
    case V_CHOICE: {
        const choice *c = spec->choices;
        while (c->name && strcmp(c->name, value) != 0) c++;
        if (!c->name) goto refused;
        number = (unsigned long long)c->value;
        break;
    }
    default:
        break;
    }
    char *field = (char *)base + spec->offset;
    uint32_t narrow = (uint32_t)number;
    if (spec->kind == V_PATH) memcpy(field, from, spec->width);
    else if (spec->width == sizeof narrow) memcpy(field, &narrow, sizeof narrow);
    else memcpy(field, &number, spec->width);
    if (spec->given) *(int *)((char *)base + spec->given) = 1;
    return CLI_PARSE_OK;
refused:
    cli_usage_error(command, spec->refusal, shown, value);
    return CLI_PARSE_ERROR;
}

int cli_apply_dfa_option(cli_dfa_options *o, cli_option_id id, const char *shown, const char *value) {
    for (size_t i = 0; i < OPTION_COUNT; i++)
        if (option_table[i].id == id)
            return option_table[i].commands == FOR_DFA && option_table[i].kind != V_CUSTOM
                       ? apply_typed(CLI_COMMAND_DFA, o, &option_table[i], shown, value)
                       : -1;
    return -1;
}

/* Applies one option; shown is the option as the user spelled it. */
static int apply_option(cli_options *opts, seen_options *seen, const option_spec *spec,
                        const char *shown, const char *value) {
    cli_command cmd = opts->command;
    unsigned long long number = 0;

    if ((cmd == CLI_COMMAND_FILTER || cmd == CLI_COMMAND_DEMUX) && reads_refuse(spec->id)) {
        cli_usage_error(cmd, "%s does not apply to %s: it writes records, not hits", shown, cli_command_name(cmd));
        return CLI_PARSE_ERROR;
    }

    if (spec->is_compile_option && !opts->first_compile_option)
        opts->first_compile_option = spec->long_name;
    if (spec->id == OPT_FORMAT && cmd == CLI_COMMAND_AMPLICON) return opts->amplicon_format = value, CLI_PARSE_OK;
    if (spec->kind != V_CUSTOM) return apply_typed(cmd, opts, spec, shown, value);

    switch (spec->id) {
    case OPT_COLUMNS:
        return opts->columns = value, CLI_PARSE_OK;
    case OPT_BARCODES:
        opts->barcodes_path = value; /* a table of pairs, or barcodes as -p reads them */
        return add_source(opts, 1, value, 0) == 0 ? CLI_PARSE_OK : CLI_PARSE_ERROR;
    case OPT_PATTERNS:
        return add_source(opts, 1, value, 0) == 0 ? CLI_PARSE_OK : CLI_PARSE_ERROR;
    case OPT_PATTERN:
        return add_source(opts, 0, value, 0) == 0 ? CLI_PARSE_OK : CLI_PARSE_ERROR;
    case OPT_ADAPTER:
    case OPT_FRONT:
    case OPT_ADAPTER2:
    case OPT_FRONT2:
    case OPT_FORWARD: case OPT_REVERSE:
        if (add_source(opts, 0, value, 0) != 0) return CLI_PARSE_ERROR;
        opts->sources[opts->source_count - 1].adapter =
            spec->id == OPT_ADAPTER || spec->id == OPT_ADAPTER2 ? SM_TRIM_BACK : SM_TRIM_FRONT;
        opts->sources[opts->source_count - 1].mate =
            spec->id == OPT_ADAPTER2 || spec->id == OPT_FRONT2 || spec->id == OPT_REVERSE ? 2 : 1;
        return CLI_PARSE_OK;
    case OPT_EXACT_PATTERNS:
        return add_source(opts, 1, value, 1) == 0 ? CLI_PARSE_OK : CLI_PARSE_ERROR;
    case OPT_DATABASE:
        if (opts->database_path) {
            cli_usage_error(cmd, "%s: only one database can be searched at a time", shown);
            return CLI_PARSE_ERROR;
        }
        opts->database_path = value;
        return CLI_PARSE_OK;
    case OPT_IGNORE_CASE:
        opts->compile.flags |= SM_FLAG_IGNORE_CASE;
        seen->ignore_case = 1;
        return CLI_PARSE_OK;
    case OPT_TEXT_IUPAC:
        opts->compile.flags |= SM_FLAG_TEXT_IUPAC;
        seen->text_iupac = 1;
        return CLI_PARSE_OK;
    case OPT_ENGINE:
        if (sm_engine_from_name(value, &opts->compile.engine) != SM_OK) {
            /* the names from the library's registry: "auto, a, b or c" */
            char names[256] = "auto";
            size_t count = sm_engine_count();
            for (size_t i = 0; i < count; i++)
                snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i + 1 < count ? ", " : " or ",
                         sm_engine_name(sm_engine_at(i)));
            cli_usage_error(cmd, "%s: unknown engine '%s'; use %s", shown, value, names);
            return CLI_PARSE_ERROR;
        }
        return CLI_PARSE_OK;
    case OPT_MISMATCHES:
    case OPT_EDITS: {
        sm_match kind = spec->id == OPT_MISMATCHES ? SM_MATCH_MISMATCHES : SM_MATCH_EDITS;
        if (opts->compile.match != SM_MATCH_EXACT && opts->compile.match != kind) {
            cli_usage_error(cmd, "--mismatches and --edits cannot be combined");
            return CLI_PARSE_ERROR;
        }
        if (sm_parse_count(value, 65535, &number) != 0) {
            cli_usage_error(cmd, "%s: '%s' is not an error count (0 to 65535)", shown, value);
            return CLI_PARSE_ERROR;
        }
        opts->compile.match = kind;
        opts->compile.max_errors = (uint32_t)number;
        return CLI_PARSE_OK;
    }
    case OPT_PAM:
    case OPT_PAM5:
        if (opts->compile.pam) {
            cli_usage_error(cmd, "%s: only one PAM can be given (--pam or --pam5)", shown);
            return CLI_PARSE_ERROR;
        }
        if (value[0] == '\0') {
            cli_usage_error(cmd, "%s: empty PAM", shown);
            return CLI_PARSE_ERROR;
        }
        opts->compile.pam = value;
        opts->compile.pam_side = spec->id == OPT_PAM5 ? SM_PAM_5PRIME : SM_PAM_3PRIME;
        return CLI_PARSE_OK;
    case OPT_SHARD:
        if (sm_parse_share(value, &opts->shard_index, &opts->shard_count) != 0) {
            cli_usage_error(cmd, "%s: '%s' is not a share I/N (I from 0 to N - 1, e.g. 0/4)", shown, value);
            return CLI_PARSE_ERROR;
        }
        return CLI_PARSE_OK;
    case OPT_HELP:
        cli_print_help(cmd, stdout);
        return CLI_PARSE_HELP;
    case OPT_MIN_OVERLAP:
    case OPT_MAX_HITS_PER_PATTERN:
    case OPT_MAX_HITS_PER_RECORD:
        if (sm_parse_count(value, UINT32_MAX, &number) != 0 || (number == 0 && spec->id != OPT_MIN_OVERLAP)) {
            cli_usage_error(cmd, "%s: '%s' is not a count (%s to 4294967295)", shown, value,
                            spec->id == OPT_MIN_OVERLAP ? "0" : "1");
            return CLI_PARSE_ERROR;
        }
        if (spec->id == OPT_MIN_OVERLAP) opts->min_overlap = (uint32_t)number, opts->min_overlap_given = 1;
        else if (spec->id == OPT_MAX_HITS_PER_PATTERN) opts->max_hits_per_pattern = (uint32_t)number;
        else opts->max_hits_per_record = (uint32_t)number;
        return CLI_PARSE_OK;
    case OPT_VERSION:
        cli_print_version(stdout);
        return CLI_PARSE_HELP;    default: /* dfa's own: the table keeps them from these commands */
        break;
    }
    return CLI_PARSE_ERROR;
}

/* --cigar and --format sam: alignments of DNA or text hits, one reference file. */
static int check_alignment_options(const cli_options *opts) {
    if (opts->site && opts->format != SM_FORMAT_TSV && opts->format != SM_FORMAT_JSONL) {
        cli_usage_error(opts->command, "--site adds columns to tsv or jsonl");
        return CLI_PARSE_ERROR;
    }
    if (opts->profile_path && opts->quiet) {
        cli_usage_error(opts->command, "--profile and -q cannot be combined (-q stops at the first hit)");
        return CLI_PARSE_ERROR;
    }
    if (opts->profile_path && (opts->format == SM_FORMAT_PROFILE || opts->format == SM_FORMAT_PROFILE_JSONL)) {
        cli_usage_error(opts->command, "--profile FILE writes the profile beside the hits; with --format profile "
                        "the output is the profile already");
        return CLI_PARSE_ERROR;
    }
    if (opts->cigar && opts->format != SM_FORMAT_TSV && opts->format != SM_FORMAT_JSONL) {
        cli_usage_error(opts->command, "--cigar adds a column to tsv or jsonl (--format sam always has the CIGAR)");
        return CLI_PARSE_ERROR;
    }
    const char *sam = opts->format == SM_FORMAT_SAM ? "sam" : opts->format == SM_FORMAT_BAM ? "bam" : NULL;
    if (sam && opts->target_count > 1) {
        cli_usage_error(opts->command, "--format %s takes one target (its records are the references); "
                        "search the files one at a time, or join them first", sam);
        return CLI_PARSE_ERROR;
    }
    if (sam && !opts->database_path && opts->compile.alphabet == SM_ALPHABET_TEXT) {
        cli_usage_error(opts->command, "--format %s is for --alphabet dna", sam);
        return CLI_PARSE_ERROR;
    }
    return CLI_PARSE_OK;
}

/* Checks that the options make sense together and fills in defaults. */
static int check_options(cli_options *opts, const seen_options *seen) {
    cli_command cmd = opts->command;

    if (cmd == CLI_COMMAND_COMPILE && opts->target_count > 0) {
        cli_usage_error(cmd, "compile takes no target ('%s'); give patterns with -p or -e",
                        opts->targets[0]);
        return CLI_PARSE_ERROR;
    }
    if (opts->database_path) {
        if (opts->source_count > 0) {
            cli_usage_error(cmd, "-d cannot be combined with -p or -e: "
                            "the database already holds its patterns");
            return CLI_PARSE_ERROR;
        }
        if (opts->first_compile_option) {
            cli_usage_error(cmd, "--%s cannot be used with -d: the database was compiled "
                            "with its own settings", opts->first_compile_option);
            return CLI_PARSE_ERROR;
        }
    } else if (opts->source_count == 0) {
        if (cmd == CLI_COMMAND_TRIM)
            cli_usage_error(cmd, "no adapter given; use -a ADAPTER (3') or -g ADAPTER (5')");
        else if (cmd == CLI_COMMAND_AMPLICON)
            cli_usage_error(cmd, "no primer pair given; use -p PAIRS.tsv or -F FORWARD -R REVERSE");
        else if (cmd != CLI_COMMAND_COMPILE)
            cli_usage_error(cmd, "no patterns given; use -p FILE, -e PATTERN or -d DB");
        else
            cli_usage_error(cmd, "no patterns given; use -p FILE or -e PATTERN");
        return CLI_PARSE_ERROR;
    }
    /* The dump is of the dictionary automaton, whatever the planner would pick. */
    if (opts->dump_dfa && opts->compile.engine == SM_ENGINE_AUTO) opts->compile.engine = SM_ENGINE_AUTOMATON;
    if (cmd == CLI_COMMAND_COMPILE && !opts->output_path && !opts->explain && !opts->dump_dfa) {
        cli_usage_error(cmd, "no output given; use -o DB (or --explain / --dump-dfa to only describe "
                        "the database)");
        return CLI_PARSE_ERROR;
    }

    if (!opts->database_path) {
        if (opts->lines) {
            if (opts->alphabet_given && opts->compile.alphabet != SM_ALPHABET_TEXT) {
                cli_usage_error(cmd, "--lines needs --alphabet text");
                return CLI_PARSE_ERROR;
            }
            opts->compile.alphabet = SM_ALPHABET_TEXT;
        }
        if (opts->compile.alphabet == SM_ALPHABET_DNA && seen->ignore_case) {
            cli_usage_error(cmd, "-i/--ignore-case is for --alphabet text "
                            "(DNA is always case-insensitive)");
            return CLI_PARSE_ERROR;
        }
        if (opts->compile.alphabet == SM_ALPHABET_TEXT && seen->text_iupac) {
            cli_usage_error(cmd, "--text-iupac is for --alphabet dna");
            return CLI_PARSE_ERROR;
        }
        if (opts->compile.alphabet == SM_ALPHABET_TEXT && opts->compile.pam) {
            cli_usage_error(cmd, "--pam is for --alphabet dna");
            return CLI_PARSE_ERROR;
        }
        if (opts->compile.alphabet == SM_ALPHABET_TEXT && opts->strand_given) {
            cli_usage_error(cmd, "--strand is for --alphabet dna (text has one strand)");
            return CLI_PARSE_ERROR;
        }
        if (opts->compile.alphabet == SM_ALPHABET_TEXT)
            opts->compile.strands = SM_STRAND_FORWARD;
        /* best and ends are the two ways of reporting k-edit ends: without
           -k there is nothing to choose, and silence would hide a typo */
        if (opts->report_given && opts->compile.match != SM_MATCH_EDITS) {
            cli_usage_error(cmd, "--report is for -k/--edits (which ends of a run of edit ends are reported)%s",
                            opts->compile.match == SM_MATCH_MISMATCHES ? "; -m reports every window" : "");
            return CLI_PARSE_ERROR;
        }
        if (!opts->build_threads_given)
            opts->compile.build_threads = opts->threads > 0 ? opts->threads : cli_online_cores();
        /* --gpu: the planner chooses the engines the GPU scans fastest. */
        if (opts->gpu) opts->compile.backend = SM_BACKEND_CUDA;
    }

    if (cmd == CLI_COMMAND_SEARCH && check_alignment_options(opts) != CLI_PARSE_OK) return CLI_PARSE_ERROR;

    /* Standard input cannot feed both patterns and targets. */
    int stdin_patterns = 0;
    for (size_t i = 0; i < opts->source_count; i++)
        if (opts->sources[i].is_file && strcmp(opts->sources[i].text, "-") == 0) stdin_patterns = 1;
    if (opts->database_path && strcmp(opts->database_path, "-") == 0) stdin_patterns = 1;
    if (stdin_patterns && cmd != CLI_COMMAND_COMPILE) {
        int stdin_targets = opts->target_count == 0 && !opts->read1;
        if (opts->read1 && (strcmp(opts->read1, "-") == 0 || (opts->read2 && strcmp(opts->read2, "-") == 0)))
            stdin_targets = 1;
        for (size_t i = 0; i < opts->target_count; i++)
            if (strcmp(opts->targets[i], "-") == 0) stdin_targets = 1;
        if (stdin_targets) {
            cli_usage_error(cmd, "standard input cannot hold both the patterns and the "
                            "targets; name a target file");
            return CLI_PARSE_ERROR;
        }
    }
    return CLI_PARSE_OK;
}

int cli_parse_argv(cli_command command, int argc, char **argv, cli_option_fn option, cli_operand_fn operand,
                   void *ctx) {
    int only_operands = 0;
    for (int i = 1; i < argc; i++) {
        char *arg = argv[i];
        if (only_operands || arg[0] != '-' || arg[1] == '\0') {
            if (operand(ctx, arg) != 0) return CLI_PARSE_ERROR;
            continue;
        }
        if (strcmp(arg, "--") == 0) {
            only_operands = 1;
            continue;
        }
        if (arg[1] == '-') {
            const char *name = arg + 2;
            const char *equals = strchr(name, '=');
            size_t name_len = equals ? (size_t)(equals - name) : strlen(name);
            const option_spec *spec = find_long(name, name_len);
            if (!spec || !(spec->commands & (1u << command))) {
                if (spec)
                    cli_usage_error(command, "option '--%s' does not apply to %s",
                                    spec->long_name, cli_command_name(command));
                else
                    cli_usage_error(command, "unknown option '%.*s'", (int)(name_len + 2), arg);
                return CLI_PARSE_ERROR;
            }
            char shown[64];
            snprintf(shown, sizeof shown, "--%s", spec->long_name);
            const char *value = NULL;
            if (spec->takes_value) {
                if (equals) value = equals + 1;
                else if (i + 1 < argc) value = argv[++i];
                else {
                    cli_usage_error(command, "option '%s' needs a value", shown);
                    return CLI_PARSE_ERROR;
                }
            } else if (equals) {
                cli_usage_error(command, "option '%s' takes no value", shown);
                return CLI_PARSE_ERROR;
            }
            int rc = option(ctx, spec->id, shown, value);
            if (rc != CLI_PARSE_OK) return rc;
            continue;
        }
        /* One or more short options: -q, -qi, -t4, -t 4, -qt4. */
        for (const char *p = arg + 1; *p; p++) {
            const option_spec *spec = find_short(*p);
            if (!spec || !(spec->commands & (1u << command))) {
                if (spec)
                    cli_usage_error(command, "option '-%c' does not apply to %s", *p,
                                    cli_command_name(command));
                else
                    cli_usage_error(command, "unknown option '-%c'", *p);
                return CLI_PARSE_ERROR;
            }
            char shown[4] = {'-', *p, '\0', '\0'};
            const char *value = NULL;
            if (spec->takes_value) {
                if (p[1] != '\0') value = p + 1;
                else if (i + 1 < argc) value = argv[++i];
                else {
                    cli_usage_error(command, "option '%s' needs a value", shown);
                    return CLI_PARSE_ERROR;
                }
            }
            int rc = option(ctx, spec->id, shown, value);
            if (rc != CLI_PARSE_OK) return rc;
            if (spec->takes_value) break;
        }
    }
    return CLI_PARSE_OK;
}

typedef struct {
    cli_options *opts;
    seen_options seen;
} search_parse;

static int search_option(void *ctx, cli_option_id id, const char *shown, const char *value) {
    search_parse *p = ctx;
    const option_spec *spec = option_table;
    while (spec->id != id) spec++;
    return apply_option(p->opts, &p->seen, spec, shown, value);
}

static int search_operand(void *ctx, char *arg) { return add_target(((search_parse *)ctx)->opts, arg); }

int cli_parse_options(cli_command command, int argc, char **argv, cli_options *opts) {
    memset(opts, 0, sizeof *opts);
    opts->command = command;
    sm_compile_options_init(&opts->compile);
    opts->format = SM_FORMAT_TSV;
    opts->header = 1;
    opts->progress = CLI_PROGRESS_AUTO;

    search_parse p = {opts, {0, 0}};
    int rc = cli_parse_argv(command, argc, argv, search_option, search_operand, &p);
    return rc != CLI_PARSE_OK ? rc : check_options(opts, &p.seen);
}

void cli_options_free(cli_options *opts) {
    free(opts->sources);
    free(opts->targets);
    opts->sources = NULL;
    opts->targets = NULL;
}

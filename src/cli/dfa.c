/* seqmatch dfa: the DFA membership test.
 *
 *   seqmatch dfa (--dfa FILE | --from-patterns FILE | --regex EXPR) [options] [INPUT...]
 *
 * Prints accept<TAB>STATE or reject<TAB>STATE for each input (prefixed by
 * the file name when several are given, or by the record name with
 * --per-record). Exit status: 0 when some input is accepted, 1 when none is,
 * 2 on an error. --dump writes the DFA in the text format instead.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"



static void print_help(FILE *out) {
    fputs("Usage: seqmatch dfa (--dfa FILE | --from-patterns FILE | --regex EXPR) [options] [INPUT...]\n"
          "\n"
          "Tests whether each whole input is accepted by a DFA and prints\n"
          "accept<TAB>STATE or reject<TAB>STATE (the state reached). With several\n"
          "inputs each line starts with the file name; with --per-record, with the\n"
          "record name. Exit status: 0 some input accepted, 1 none, 2 error.\n"
          "\n"
          "The automaton:\n"
          "  --dfa FILE              a DFA in the text format (see docs/dfa.md)\n"
          "  --from-patterns FILE    the dictionary automaton of a pattern file\n"
          "  --match contains|ends   with --from-patterns: accept inputs that contain a\n"
          "                          pattern (default) or end with one\n"
          "  --regex EXPR            accept inputs that the expression matches as a whole\n"
          "  --max-states N          state limit for --regex (default 100000)\n"
          "  --minimize, --no-minimize  minimise the DFA (default: only for --regex)\n"
          "  --dump                  write the DFA in the text format and exit\n"
          "\n"
          "Input:\n"
          "  --alphabet text|dna     dna: FASTA/FASTQ, the file's sequences joined are the\n"
          "                          input (patterns and expressions are DNA too); text:\n"
          "                          every file is one input of raw bytes. Default: dna\n"
          "                          when the inputs are FASTA or FASTQ (as search reads\n"
          "                          them), else text (also for standard input)\n"
          "  --per-record            one input per FASTA/FASTQ record\n"
          "  --skip-unknown          ignore input bytes outside the DFA's alphabet\n"
          "                          (otherwise they are an error naming the offset)\n"
          "  --strand both|+|-       dna patterns: strands (default both), as in search\n"
          "  -i, --ignore-case       text patterns match either case\n"
          "\n"
          "Running:\n"
          "  -t, --threads N         threads (default: all online cores)\n"
          "  --chunks N              chunks per block (default: one per thread)\n"
          "  --policy balanced|equal chunk sizes (default balanced: the first chunk longer)\n"
          "  --first-chunk-ratio M   balanced policy: first chunk M times the others\n"
          "                          (default: measured on a sample)\n"
          "  --simd auto|avx2|scalar state stepping on several lanes (default auto)\n"
          "  --gpu                   run on the GPU (CUDA): chunks simulated by GPU threads,\n"
          "                          their state maps composed by a scan on the GPU\n"
          "  --gpu-batch SIZE        --gpu: input bytes per batch (default 64M)\n"
          "  -o, --output FILE       write the results (or the dump) to FILE\n"
          "  --shard I/N             do share I of N (from 0) and write a shard file for\n"
          "                          'seqmatch merge'; under mpirun every rank does its share\n"
          "  -h, --help              this help\n",
          out);
}

#define usage_error(...) (cli_usage_error(CLI_COMMAND_DFA, __VA_ARGS__), CLI_PARSE_ERROR)

static int take_input(void *ctx, char *arg) {
    cli_dfa_options *o = ctx;
    o->inputs[o->input_count++] = arg;
    return 0;
}

/* One option of cli_parse_argv (the table in options.c). */
static int take_option(void *ctx, cli_option_id id, const char *shown, const char *value) {
    cli_dfa_options *o = ctx;
    unsigned long long n;
    int typed = cli_apply_dfa_option(o, id, shown, value);
    if (typed >= 0) return typed;
    switch (id) {
    case OPT_HELP: return CLI_PARSE_HELP;
    case OPT_DFA: o->dfa_path = value, o->sources++; break;
    case OPT_FROM_PATTERNS: o->patterns_path = value, o->sources++; break;
    case OPT_REGEX: o->regex = value, o->sources++; break;
    case OPT_ALPHABET:
        if (strcmp(value, "text") == 0) o->alphabet = SM_ALPHABET_TEXT;
        else if (strcmp(value, "dna") == 0) o->alphabet = SM_ALPHABET_DNA;
        else return usage_error("--alphabet takes text or dna, not '%s'", value);
        o->alphabet_given = 1;
        break;
    case OPT_STRAND:
        /* as search: both, + or - (forward and reverse kept as other names) */
        if (strcmp(value, "both") == 0) o->strands = SM_STRAND_BOTH;
        else if (strcmp(value, "+") == 0 || strcmp(value, "forward") == 0) o->strands = SM_STRAND_FORWARD;
        else if (strcmp(value, "-") == 0 || strcmp(value, "reverse") == 0) o->strands = SM_STRAND_REVERSE;
        else return usage_error("--strand takes both, + or -, not '%s'", value);
        break;
    case OPT_IGNORE_CASE: o->ignore_case = 1; break;
    case OPT_THREADS:
        if (sm_parse_count(value, 4096, &n) || n == 0)
            return usage_error("--threads takes a number from 1 to 4096, not '%s'", value);
        o->parallel.threads = (unsigned)n;
        break;
    case OPT_FIRST_CHUNK_RATIO: {
        char *end = NULL;
        double m = strtod(value, &end);
        if (!end || *end || !(m >= 1.0 && m <= 1e6))
            return usage_error("--first-chunk-ratio takes a number from 1, not '%s'", value);
        o->parallel.first_chunk_ratio = m;
        break;
    }
    case OPT_GPU: o->gpu = 1; break;
    case OPT_OUTPUT: o->output = value; break;
    case OPT_SHARD:
        if (sm_parse_share(value, &o->shard_index, &o->shard_count) != 0)
            return usage_error("--shard takes a share I/N (I from 0 to N - 1, e.g. 0/4), not '%s'", value);
        break;
    default: /* the table gives dfa no other option */
        return CLI_PARSE_ERROR;
    }
    return CLI_PARSE_OK;
}

/* Returns CLI_PARSE_OK, CLI_PARSE_HELP or CLI_PARSE_ERROR (message printed). */
static int parse_args(int argc, char **argv, cli_dfa_options *o) {
    memset(o, 0, sizeof *o);
    o->alphabet = SM_ALPHABET_TEXT;
    o->strands = SM_STRAND_BOTH;
    o->minimize = -1;
    o->simd = SM_DFA_SIMD_AUTO;
    sm_dfa_parallel_options_init(&o->parallel);
    o->inputs = calloc((size_t)argc + 1, sizeof *o->inputs);
    if (!o->inputs) {
        cli_error("out of memory");
        return CLI_PARSE_ERROR;
    }
    int rc = cli_parse_argv(CLI_COMMAND_DFA, argc, argv, take_option, take_input, o);
    if (rc != CLI_PARSE_OK) return rc;
    if (o->sources != 1)
        return usage_error("%s", o->sources ? "give only one of --dfa, --from-patterns and --regex"
                                            : "no automaton given: use --dfa FILE, --from-patterns FILE or --regex EXPR");
    if (o->match_given && !o->patterns_path)
        return usage_error("%s", "--match applies to --from-patterns only");
    if (o->gpu && (o->chunks_given || o->simd_given || o->dump)) {
        return usage_error("%s", o->dump ? "--dump writes the DFA and runs nothing: --gpu does not apply"
                                          : "--chunks and --simd choose how the CPU runs; with --gpu the GPU's chunks "
                                            "are planned for it");
    }
    if (o->gpu_batch && !o->gpu)
        return usage_error("%s", "--gpu-batch applies to --gpu only");
    if (o->input_count == 0) o->inputs[o->input_count++] = "-";
    sm_error err;
    if (!o->alphabet_given && !o->dump &&
        sm_files_alphabet(o->inputs, o->input_count, o->per_record, &o->alphabet, &err) != SM_OK)
        return cli_usage_error(CLI_COMMAND_DFA, "%s", err.message), CLI_PARSE_ERROR;
    if (o->dfa_path && strcmp(o->dfa_path, "-") == 0 && !o->dump)
        for (size_t i = 0; i < o->input_count; i++)
            if (strcmp(o->inputs[i], "-") == 0)
                return usage_error("%s", "the DFA and an input cannot both be standard input");
    return CLI_PARSE_OK;
}

/* The DFA of the source given (sm_dfa_load), or a message. */
static int load_dfa(const cli_dfa_options *o, sm_dfa **dfa) {
    sm_dfa_source src = {o->dfa_path, o->regex, o->patterns_path, o->alphabet, o->strands,
                         o->ignore_case, o->match, o->max_states, o->minimize};
    sm_error err;
    if (sm_dfa_load(&src, dfa, &err) == SM_OK) return 0;
    cli_error("%s", err.message);
    return CLI_EXIT_ERROR;
}

typedef struct {
    const sm_dfa *dfa;
    const sm_dfa_matcher *matcher;
    FILE *out;
    int any_accepted;
} dfa_run;

/* One input's (or record's) result: "[LABEL\t]accept|reject\tSTATE". */
static int on_result(void *ctx, const char *label, uint32_t state) {
    dfa_run *r = ctx;
    int accepted = sm_dfa_is_accepting(r->dfa, state);
    if (accepted) r->any_accepted = 1;
    if (label) fprintf(r->out, "%s\t", label);
    fprintf(r->out, "%s\t%u\n", accepted ? "accept" : "reject", state);
    return 0;
}

/* The inputs through the library's loop, on the CPU (sm_dfa_scan_files) or
   the GPU (sm_dfa_gpu_scan_files). */
static int run_inputs(dfa_run *r, const cli_dfa_options *o) {
    sm_dfa_reader_options ro = {.parallel = &o->parallel, .per_record = o->per_record,
                                .dna = o->alphabet == SM_ALPHABET_DNA, .on_result = on_result, .ctx = r};
    sm_dfa_gpu_options go;
    sm_dfa_gpu_options_init(&go);
    go.batch_bytes = (size_t)o->gpu_batch;
    go.policy = o->parallel.policy;
    go.first_chunk_ratio = o->parallel.first_chunk_ratio;
    sm_error err;
    unsigned threads = cli_threads(o->parallel.threads);
    int rc = o->gpu ? sm_dfa_gpu_scan_files(r->dfa, r->matcher, &go, o->inputs, o->input_count, threads,
                                            o->input_count > 1, &ro, &err)
                    : sm_dfa_scan_files(r->dfa, r->matcher, o->inputs, o->input_count, threads, o->input_count > 1,
                                        &ro, &err);
    if (rc != SM_OK) {
        cli_error("%s", err.message);
        return CLI_EXIT_ERROR;
    }
    return r->any_accepted ? CLI_EXIT_HIT : CLI_EXIT_NO_HIT;
}

/* --gpu: the CUDA driver and the first device's context (the one the DFA
   run uses) start while the patterns compile. */
static void *start_cuda(void *arg) {
    (void)arg;
    (void)sm_cuda_prepare(0);
    return NULL;
}

int cli_dfa_main(int argc, char **argv) {
    cli_dfa_options o;
    int parsed = parse_args(argc, argv, &o);
    if (parsed != CLI_PARSE_OK) {
        free(o.inputs);
        if (parsed == CLI_PARSE_HELP) {
            print_help(stdout);
            return cli_finish_stdout();
        }
        return CLI_EXIT_ERROR;
    }
    /* -o must not name the DFA, the pattern file or an input */
    o.inputs[o.input_count] = (char *)(o.dfa_path ? o.dfa_path : o.patterns_path);
    if (cli_check_output(o.output, (const char *const *)o.inputs, o.input_count + 1) != 0) {
        free(o.inputs);
        return CLI_EXIT_ERROR;
    }
    if ((cli_dist_mpi() || o.shard_count) && o.gpu) {
        /* the GPU DFA run is one process's: its chunks' state maps are composed on the device */
        cli_error("dfa --gpu runs in one process (not under mpirun or with --shard); leave out --gpu to split "
                  "the inputs between processes");
        free(o.inputs);
        return CLI_EXIT_ERROR;
    }
    if ((cli_dist_mpi() || o.shard_count) && !o.dump) {
        /* one DFA, rank 0's, on every rank */
        sm_dfa *dfa = NULL;
        if (cli_dist_rank0() && load_dfa(&o, &dfa) != 0) dfa = NULL;
        if (cli_dist_share_dfa(&dfa) != 0) {
            free(o.inputs);
            return CLI_EXIT_ERROR;
        }
        sm_dfa_matcher_options mo;
        sm_dfa_matcher_options_init(&mo);
        mo.skip_unknown = o.skip_unknown;
        mo.simd = o.simd;
        sm_dfa_matcher *matcher = NULL;
        sm_error err;
        int status;
        if (sm_dfa_matcher_create(dfa, &mo, &matcher, &err) != SM_OK) {
            cli_error("%s", err.message);
            status = CLI_EXIT_ERROR;
        } else {
            cli_dist_dfa_job job = {dfa, matcher, o.inputs, o.input_count, o.alphabet == SM_ALPHABET_DNA,
                                    o.per_record, o.skip_unknown, &o.parallel, o.output, o.shard_index,
                                    o.shard_count};
            status = cli_dist_dfa(&job);
        }
        sm_dfa_matcher_free(matcher);
        sm_dfa_free(dfa);
        free(o.inputs);
        return status;
    }
    if (!cli_dist_rank0()) {
        free(o.inputs);
        return 0; /* --dump: rank 0's */
    }
    /* --gpu: the CUDA runtime starts (a few tenths of a second) while the DFA is built */
    pthread_t cuda_start;
    int cuda_starting = o.gpu && pthread_create(&cuda_start, NULL, start_cuda, NULL) == 0;
    sm_dfa *dfa = NULL;
    int loaded = load_dfa(&o, &dfa);
    if (cuda_starting) pthread_join(cuda_start, NULL);
    if (loaded != 0) {
        free(o.inputs);
        return CLI_EXIT_ERROR;
    }
    FILE *out = stdout;
    sm_outfile *outfile = NULL;
    if (o.output && strcmp(o.output, "-") != 0) {
        if (!(outfile = cli_outfile_open(o.output))) {
            sm_dfa_free(dfa);
            free(o.inputs);
            return CLI_EXIT_ERROR;
        }
        out = sm_outfile_file(outfile);
    }
    int status = 0;
    if (o.dump) {
        sm_error err;
        if (sm_dfa_dump(dfa, out, &err) != SM_OK) {
            /* a failed write is reported once, below */
            if (!ferror(out)) cli_error("%s: %s", o.output ? o.output : "standard output", err.message);
            status = CLI_EXIT_ERROR;
        }
    } else {
        sm_dfa_matcher_options mo;
        sm_dfa_matcher_options_init(&mo);
        mo.skip_unknown = o.skip_unknown;
        mo.simd = o.simd;
        sm_dfa_matcher *matcher = NULL;
        sm_error err;
        dfa_run r;
        memset(&r, 0, sizeof r);
        if (sm_dfa_matcher_create(dfa, &mo, &matcher, &err) != SM_OK) {
            cli_error("%s", err.message);
            status = CLI_EXIT_ERROR;
        }
        r.dfa = dfa;
        r.matcher = matcher;
        r.out = out;
        if (status == 0 && !o.gpu && o.input_count == 1 && strcmp(o.inputs[0], "-") == 0) cli_note_stdin_terminal();
        if (status == 0) status = run_inputs(&r, &o);
        sm_dfa_matcher_free(matcher);
    }
    if (fflush(out) != 0 || ferror(out)) {
        int e = errno;
        if (e != EPIPE)
            cli_error("%s: %s", o.output ? o.output : "standard output", e ? strerror(e) : "write error");
        status = CLI_EXIT_ERROR;
    }
    if (out != stdout) {
        /* kept when the command succeeded (some input accepted or none) */
        int e = sm_outfile_close(outfile, status != CLI_EXIT_ERROR);
        if (e && status != CLI_EXIT_ERROR) {
            cli_error("%s: %s", o.output, strerror(e));
            status = CLI_EXIT_ERROR;
        }
    }
    sm_dfa_free(dfa);
    free(o.inputs);
    return status;
}

/* ac_lines: how many distinct 128-byte lines of the automaton's transition
 * table a warp of the GPU's thread-per-chunk kernel reads per byte, counted
 * on the host with the library's own automaton: 32 lanes, each on its own
 * chunk of CHUNK bytes, step through their chunks together; at each step the
 * lanes' table entries fall in some number of distinct lines, each of which
 * costs the warp's load a pass through L1. Also as if the first R rows
 * (breadth first: the states nearest the root) sat in shared memory: the
 * lines the other lanes still read, and how often any lane reads one.
 *
 * usage: ac_lines [-a dna|text] [-c CHUNK] PATTERNS TARGET [R ...]
 *
 * PATTERNS: one pattern per line; TARGET: any file, read whole.
 * Output: the automaton's size, then one line per R (0 first):
 *   rows_in_shared=R lines_32bit=F lines_16bit=F steps_reading_memory=F
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_input.h"
#include "seqmatch.h"
#include "base/internal.h"
#include "engines/automaton/automaton.h"
#include "engines/section_kinds.h"

#define LANES 32
#define LINE 128u

static void die(const char *what, const char *why) { bench_fail("ac_lines", what, why); }

/* Distinct values among the lanes whose flag is set. */
static unsigned distinct(const uint64_t *v, const int *on) {
    unsigned d = 0;
    for (int i = 0; i < LANES; i++) {
        if (!on[i]) continue;
        int seen = 0;
        for (int j = 0; j < i && !seen; j++) seen = on[j] && v[j] == v[i];
        d += !seen;
    }
    return d;
}

int main(int argc, char **argv) {
    sm_compile_options co;
    sm_compile_options_init(&co);
    co.engine = SM_ENGINE_AUTOMATON;
    co.alphabet = SM_ALPHABET_TEXT;
    co.strands = SM_STRAND_FORWARD;
    size_t chunk = 1664;
    int argi = 1;
    while (argi + 1 < argc && argv[argi][0] == '-') {
        if (strcmp(argv[argi], "-a") == 0) {
            co.alphabet = strcmp(argv[argi + 1], "dna") == 0 ? SM_ALPHABET_DNA : SM_ALPHABET_TEXT;
        } else if (strcmp(argv[argi], "-c") == 0) {
            chunk = (size_t)atol(argv[argi + 1]);
        } else {
            die(argv[argi], "unknown option");
        }
        argi += 2;
    }
    if (argc - argi < 2 || chunk == 0) {
        fprintf(stderr, "usage: ac_lines [-a dna|text] [-c CHUNK] PATTERNS TARGET [R ...]\n");
        return 2;
    }
    bench_inputs in;
    bench_inputs_read("ac_lines", argv[argi], argv[argi + 1], &in);
    sm_db *db = bench_compile("ac_lines", &in, &co);
    uint64_t size;
    const uint8_t *section = sm_db_section_of_kind(db, SM_SECTION_AUTOMATON, &size);
    if (!section) die(argv[argi], "no automaton section");
    const sm_ac_header *h = (const sm_ac_header *)section;
    const uint32_t *delta = (const uint32_t *)(section + h->delta_off);
    const uint32_t columns = h->columns;
    printf("states=%u columns=%u table_32bit_KiB=%.0f\n", h->states, columns,
           (double)h->states * columns * 4 / 1024);
    int rs = argc - argi - 2 + 1;
    uint32_t *rows = malloc((size_t)rs * sizeof *rows);
    rows[0] = 0;
    for (int i = 1; i < rs; i++) rows[i] = (uint32_t)atol(argv[argi + 1 + i]);
    double *lines32 = calloc((size_t)rs, sizeof *lines32), *lines16 = calloc((size_t)rs, sizeof *lines16);
    double *reading = calloc((size_t)rs, sizeof *reading), steps = 0;
    const size_t warps = in.len / chunk / LANES;
    for (size_t w = 0; w < warps; w++) {
        uint32_t at[LANES] = {0}; /* row offsets: state * columns */
        for (size_t i = 0; i < chunk; i++) {
            uint64_t l32[LANES], l16[LANES];
            uint32_t state[LANES];
            for (int lane = 0; lane < LANES; lane++) {
                uint8_t byte = (uint8_t)in.text[(w * LANES + (size_t)lane) * chunk + i];
                uint64_t entry = (uint64_t)at[lane] + h->class_of[byte];
                state[lane] = at[lane] / columns;
                l32[lane] = entry * 4 / LINE;
                l16[lane] = entry * 2 / LINE;
                at[lane] = delta[entry] & 0x7fffffffu;
            }
            steps++;
            for (int r = 0; r < rs; r++) {
                int on[LANES], any = 0;
                for (int lane = 0; lane < LANES; lane++) any |= on[lane] = state[lane] >= rows[r];
                lines32[r] += distinct(l32, on);
                lines16[r] += distinct(l16, on);
                reading[r] += any;
            }
        }
    }
    if (steps == 0) die(argv[argi + 1], "shorter than one warp's chunks");
    for (int r = 0; r < rs; r++)
        printf("rows_in_shared=%u lines_32bit=%.2f lines_16bit=%.2f steps_reading_memory=%.3f\n", rows[r],
               lines32[r] / steps, lines16[r] / steps, reading[r] / steps);
    sm_db_free(db);
    free(rows), free(lines32), free(lines16), free(reading);
    bench_inputs_free(&in);
    return 0;
}

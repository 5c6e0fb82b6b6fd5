# search --gpu whatever the hit density: a batch whose hits pass the GPU's
# largest hit buffer comes back marked, and the host finds its hits again in
# pieces (src/runner/dense.c), so --gpu holds no more memory for dense hits
# than for few, and prints what the CPU prints. Run against the tool built
# over the CPU stand-in for the GPU (seqmatch_emulated, whose largest hit
# buffer is 512 hits) it tests the host side on any machine; against the
# real tool on a machine with a GPU, the device's. Without a usable GPU the
# refusal is what is checked.
. "$(dirname "$0")/testlib.bash"

T=$'\t'
sanitized=0
if grep -qa -e __asan_init -e __tsan_init "$SEQMATCH"; then sanitized=1; fi

printf '>tiny\nACGT\n' >"$TMP/tiny.fa"
run search --gpu -e A "$TMP/tiny.fa"
if [ "$status" -ne 0 ]; then
    # no GPU here: the one-line refusal
    check_status "--gpu without a GPU (exit)" 2
    if grep -qi -e "GPU" -e "CUDA" "$TMP/err"; then pass; else fail "--gpu without a GPU: no word of the GPU in the message"; fi
    finish
    exit
fi

# The GPU's own memory (a CUDA runtime: about 150 MiB) is what a tiny
# search holds; dense hits may add at most this much on top: a GPU's hit
# buffers (2^22 entries of 12 bytes, pinned, per batch buffer) and one
# batch's hits expanded on the host (2^22 of 24 bytes) with their sorting
# (docs/architecture.md, "Memory"). The CPU stand-in's buffers hold 512
# hits, so its runs are held to less (GPU_MEMORY_ABOVE_MB, set by ctest).
LIMIT_ABOVE_BASE=${GPU_MEMORY_ABOVE_MB:-256}
measure search --gpu -e A "$TMP/tiny.fa"
base_mb=$rss_mb

# check_rss NAME
check_rss() {
    if [ $sanitized -eq 1 ]; then
        pass
    elif [ -z "$rss_mb" ] || [ -z "$base_mb" ]; then
        echo "note: $1: peak RSS could not be measured"
    elif [ "$rss_mb" -le $((base_mb + LIMIT_ABOVE_BASE)) ]; then
        pass
    else
        fail "$1: peak RSS $rss_mb MiB, a tiny search's $base_mb MiB + at most $LIMIT_ABOVE_BASE"
    fi
}

# 50 copies of A over one record of n bases of A, one strand: 50 n hits
# (every batch past the largest hit buffer; kept on the host before: 36
# bytes a hit, 270 MB for 150 kbp).
n=150000
[ $sanitized -eq 1 ] && n=10000
for i in $(seq 50); do echo A; done >"$TMP/a50.txt"
{ printf '>polyA\n'; head -c $n /dev/zero | tr '\0' A; printf '\n'; } >"$TMP/polyA.fa"
hits=$((50 * n))
"$SEQMATCH" search -t 2 --strand + -p "$TMP/a50.txt" --no-header "$TMP/polyA.fa" >"$TMP/cpu" 2>"$TMP/err"
measure search --gpu --strand + -p "$TMP/a50.txt" --no-header "$TMP/polyA.fa"
check_status "50 x A, tsv, --gpu (exit)" 0
if cmp -s "$TMP/out" "$TMP/cpu" && [ "$(wc -l <"$TMP/out")" -eq $hits ]; then
    pass
else
    fail "50 x A, tsv, --gpu: $(wc -l <"$TMP/out") rows, not the CPU's $(wc -l <"$TMP/cpu")"
fi
check_rss "50 x A, tsv, --gpu"

# the GPU's hits fitting its buffer, each an automaton state that stands for
# 50 hits: the host's bound on a batch's expanded hits (the stand-in told
# to keep up to 2^20 hits; a real GPU keeps 2^22 states)
SM_EMULATED_MAX_HITS=1048576 measure search --gpu --strand + -p "$TMP/a50.txt" --no-header "$TMP/polyA.fa"
if cmp -s "$TMP/out" "$TMP/cpu"; then pass; else fail "50 x A, tsv, --gpu, states fit: not the CPU's output"; fi
check_rss "50 x A, tsv, --gpu, states fit"

# the same, cut into small batches: every batch overflows on its own
run search --gpu --chunk-size 4096 --strand + -p "$TMP/a50.txt" --no-header "$TMP/polyA.fa"
if cmp -s "$TMP/out" "$TMP/cpu"; then pass; else fail "50 x A, tsv, --gpu --chunk-size 4096: not the CPU's output"; fi

# per record, and counted (the records mode takes the hits, not the GPU's counters)
for fmt in records count; do
    "$SEQMATCH" search -t 2 --strand + -p "$TMP/a50.txt" --format $fmt "$TMP/polyA.fa" >"$TMP/cpu.$fmt" 2>"$TMP/err"
    measure search --gpu --strand + -p "$TMP/a50.txt" --format $fmt "$TMP/polyA.fa"
    if cmp -s "$TMP/out" "$TMP/cpu.$fmt"; then pass; else fail "50 x A, $fmt, --gpu: not the CPU's output"; fi
    check_rss "50 x A, $fmt, --gpu"
done

# k edits: 20 copies of AAAA -k 1 end at every position (runs of ends cut
# at batch and piece borders, joined on delivery), both report modes
for i in $(seq 20); do echo AAAA; done >"$TMP/a20x4.txt"
for report in ends best; do
    "$SEQMATCH" search -t 2 -k 1 --report $report --strand + -p "$TMP/a20x4.txt" --no-header "$TMP/polyA.fa" \
        >"$TMP/cpu.k" 2>"$TMP/err"
    measure search --gpu -k 1 --report $report --strand + -p "$TMP/a20x4.txt" --no-header "$TMP/polyA.fa"
    check_status "20 x AAAA -k 1 --report $report, --gpu (exit)" 0
    if cmp -s "$TMP/out" "$TMP/cpu.k" && [ -s "$TMP/out" ]; then
        pass
    else
        fail "20 x AAAA -k 1 --report $report, --gpu: $(wc -l <"$TMP/out") rows, the CPU's $(wc -l <"$TMP/cpu.k")"
    fi
    check_rss "20 x AAAA -k 1 --report $report, --gpu"
done

finish

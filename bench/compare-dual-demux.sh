#!/usr/bin/env bash
# seqmatch demux --barcodes (barcode pairs) beside cutadapt's combinatorial demultiplexing
# (-g ^file: -G ^file:, paired reads) and its linked adapters (-g file: of ^BARCODE1...BARCODE2$,
# single long reads) on real reads: every sample's files compared byte for byte (barcodes
# trimmed by both), exact, -m 1 and -k 1 (indels planted too), long reads in both
# orientations (--strand both against cutadapt's --revcomp), then the time of both on the
# same cores.
#
# usage: bench/compare-dual-demux.sh SEQMATCH READS_DIR
#   READS_DIR holds short_reads_1.fastq.gz, short_reads_2.fastq.gz (50,200 pairs of 125-base
#   reads) and long_reads_high_depth.fastq.gz (Debian's unicycler-data; bench/fetch-data.sh).
# environment: WORK (scratch folder; default a temporary one), THREADS (2), CORES (taskset list,
#   default 0,1), RUNS (timed runs, alternating; default 3), N (barcodes per end, default 12),
#   TIMING=0 to skip the timing.
# The reads carry no barcodes: N random 8-mers per end (at least 3 substitutions apart) are
# planted on them (deterministic): a pair drawn per read, barcode1 before mate 1 and barcode2
# before mate 2 (long reads: barcode1 before the read, barcode2 after it, as it reads there),
# 10 % of the barcodes with one substitution, 3 % with two, 5 % of the reads without barcode1;
# all N x N pairs in the table, the sample of a pair named NAME1-NAME2 as cutadapt names its
# combinatorial outputs.
set -euo pipefail
SM=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
READS=${2:?usage: compare-dual-demux.sh SEQMATCH READS_DIR}
T=${THREADS:-2}
CORES=${CORES:-0,1}
RUNS=${RUNS:-3}
N=${N:-12}
R1=$READS/short_reads_1.fastq.gz
R2=$READS/short_reads_2.fastq.gz
LONG=$READS/long_reads_high_depth.fastq.gz
if [ -n "${WORK:-}" ]; then mkdir -p "$WORK"; else WORK=$(mktemp -d); trap 'rm -rf "$WORK"' EXIT; fi
cd "$WORK"
echo "# $(date -u +%Y-%m-%dT%H:%M:%SZ) $(nproc) cores; $($SM --version | head -1); cutadapt $(cutadapt --version)"

# plant MODE IN1 [IN2]: writes bc1.fa, bc2.fa and the reads with barcodes planted (mode paired:
# p1.fastq, p2.fastq; mode single: long.fastq)
plant() {
    python3 - "$N" "$@" <<'PY'
import gzip, random, sys
n, mode, paths = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
rng = random.Random(35)
def barcodes():
    out = []
    while len(out) < n:
        b = "".join(rng.choice("ACGT") for _ in range(8))
        if all(sum(x != y for x, y in zip(b, c)) >= 3 for c in out): out.append(b)
    return out
A, B = barcodes(), barcodes()
for name, prefix, bcs in (("bc1.fa", "i", A), ("bc2.fa", "j", B)):
    with open(name, "w") as f:
        f.writelines(">%s%d\n%s\n" % (prefix, i + 1, b) for i, b in enumerate(bcs))
indels, both = mode.endswith("-indels"), mode.endswith("-both")
mode = mode.replace("-indels", "").replace("-both", "")
flip = random.Random(36) # -both: half the long reads reverse complemented as a whole
rc = lambda s: s.translate(str.maketrans("ACGT", "TGCA"))[::-1]
def mutate(s):
    r = rng.random(); k = 1 if r < 0.10 else 2 if r < 0.13 else 0
    s = list(s)
    for _ in range(k): s[rng.randrange(len(s))] = rng.choice("ACGT")
    if indels and rng.random() < 0.10: # one base inserted or deleted
        at = rng.randrange(len(s))
        if rng.random() < 0.5: s.insert(at, rng.choice("ACGT"))
        else: del s[at]
    return "".join(s)
def records(path):
    with gzip.open(path, "rt") as f:
        while True:
            rec = [f.readline().rstrip("\n") for _ in range(4)]
            if not rec[0]: return
            yield rec
if mode == "paired":
    with open("p1.fastq", "w") as o1, open("p2.fastq", "w") as o2:
        for r1, r2 in zip(records(paths[0]), records(paths[1])):
            x = "" if rng.random() < 0.05 else mutate(rng.choice(A)); y = mutate(rng.choice(B))
            o1.write("%s\n%s%s\n+\n%s%s\n" % (r1[0], x, r1[1], "I" * len(x), r1[3]))
            o2.write("%s\n%s%s\n+\n%s%s\n" % (r2[0], y, r2[1], "I" * len(y), r2[3]))
else:
    with open("long.fastq", "w") as o:
        for r in records(paths[0]):
            x = "" if rng.random() < 0.05 else mutate(rng.choice(A)); y = mutate(rng.choice(B))
            seq, qual = x + r[1] + y, "I" * len(x) + r[3] + "I" * len(y)
            if both and flip.random() < 0.5: seq, qual = rc(seq), qual[::-1]
            o.write("%s\n%s\n+\n%s\n" % (r[0], seq, qual))
PY
}
# table A.fa B.fa: every pair, sample NAME1-NAME2
table() {
    paste - - <"$1" >a.tab
    paste - - <"$2" >b.tab
    while IFS=$'\t' read -r n1 s1; do
        while IFS=$'\t' read -r n2 s2; do printf '%s-%s\t%s\t%s\n' "${n1#>}" "${n2#>}" "$s1" "$s2"; done <b.tab
    done <a.tab
}
# same_rc DIR_A DIR_B: records of every sample equal, cutadapt's reverse-complemented ones
# (header ending in ' rc') turned back first
same_rc() {
    python3 - "$1" "$2" <<'PY'
import sys
comp = str.maketrans("ACGTNacgtn", "TGCANtgcan")
def recs(path):
    out, lines = {}, open(path).read().split("\n")
    for i in range(0, len(lines) - 3, 4):
        h, seq, q = lines[i].split(), lines[i + 1], lines[i + 3]
        if len(h) > 1 and h[-1] == "rc": seq, q = seq.translate(comp)[::-1], q[::-1]
        out[h[0]] = (seq, q)
    return out
same = differ = only_a = only_b = 0
for s in [l.split("\t")[0] for l in open("pairs.tsv")]:
    a, b = recs("%s/%s.fastq" % (sys.argv[1], s)), recs("%s/%s.fastq" % (sys.argv[2], s))
    same += sum(1 for k in a if k in b and a[k] == b[k]); differ += sum(1 for k in a if k in b and a[k] != b[k])
    only_a += sum(1 for k in a if k not in b); only_b += sum(1 for k in b if k not in a)
print("  records the same %d, cut differently %d, only seqmatch %d, only cutadapt %d" % (same, differ, only_a, only_b))
PY
}
# same DIR_A DIR_B SUFFIXES...: files of every sample equal?
same() {
    local a=$1 b=$2 equal=0 differ=0 records=0
    shift 2
    while IFS=$'\t' read -r sample _; do
        for sfx in "$@"; do
            if cmp -s "$a/$sample$sfx" "$b/$sample$sfx"; then equal=$((equal + 1)); else differ=$((differ + 1)); fi
            records=$((records + $(awk 'END { print NR / 4 }' "$a/$sample$sfx")))
        done
    done <pairs.tsv
    echo "  files equal $equal, differ $differ; records in seqmatch's sample files $records"
}

plant paired "$R1" "$R2"
table bc1.fa bc2.fa >pairs.tsv
R1=p1.fastq R2=p2.fastq
echo "== paired: $(wc -l <pairs.tsv) pairs of 8-mers, exact, trimmed"
rm -rf sm ca && mkdir ca
"$SM" demux --barcodes pairs.tsv --trim -t "$T" -o sm -1 "$R1" -2 "$R2" --summary sm.summary
cutadapt -j "$T" -e 0 --no-indels -g ^file:bc1.fa -G ^file:bc2.fa -o 'ca/{name1}-{name2}_R1.fastq' \
    -p 'ca/{name1}-{name2}_R2.fastq' "$R1" "$R2" >ca.log
tail -n 1 sm.summary
same sm ca _R1.fastq _R2.fastq
echo "== paired, -m 1 | -e 1 --no-indels"
rm -rf sm ca && mkdir ca
"$SM" demux --barcodes pairs.tsv -m 1 --trim -t "$T" -o sm -1 "$R1" -2 "$R2" --summary sm.summary
cutadapt -j "$T" -e 1 --no-indels -g ^file:bc1.fa -G ^file:bc2.fa -o 'ca/{name1}-{name2}_R1.fastq' \
    -p 'ca/{name1}-{name2}_R2.fastq' "$R1" "$R2" >ca.log
tail -n 1 sm.summary
same sm ca _R1.fastq _R2.fastq

plant paired-indels "$READS/short_reads_1.fastq.gz" "$READS/short_reads_2.fastq.gz"
table bc1.fa bc2.fa >pairs.tsv
echo "== paired, -k 1 | -e 1 (indels; 10 % of the barcodes also with one base inserted or deleted)"
rm -rf sm ca && mkdir ca
"$SM" demux --barcodes pairs.tsv -k 1 --trim -t "$T" -o sm -1 "$R1" -2 "$R2" --summary sm.summary
cutadapt -j "$T" -e 1 -g ^file:bc1.fa -G ^file:bc2.fa -o 'ca/{name1}-{name2}_R1.fastq' \
    -p 'ca/{name1}-{name2}_R2.fastq' "$R1" "$R2" >ca.log
tail -n 1 sm.summary
same sm ca _R1.fastq _R2.fastq

plant single "$LONG"
table bc1.fa bc2.fa >pairs.tsv
LONG=long.fastq
awk -F'\t' '{ print ">" $1 "\n^" $2 "..." $3 "$" }' pairs.tsv >linked.fa
echo "== long reads: $(wc -l <pairs.tsv) pairs (start, end as it reads), exact, trimmed"
rm -rf sm ca && mkdir ca
"$SM" demux --barcodes pairs.tsv --trim -t "$T" -o sm "$LONG" --summary sm.summary
cutadapt -j "$T" -e 0 --no-indels -g file:linked.fa -o 'ca/{name}.fastq' "$LONG" >ca.log
tail -n 1 sm.summary
same sm ca .fastq
plant single-indels "$READS/long_reads_high_depth.fastq.gz"
echo "== long reads, -k 1 | -e 1 (indels as above)"
rm -rf sm ca && mkdir ca
"$SM" demux --barcodes pairs.tsv -k 1 --trim -t "$T" -o sm "$LONG" --summary sm.summary
cutadapt -j "$T" -e 1 -g file:linked.fa -o 'ca/{name}.fastq' "$LONG" >ca.log
tail -n 1 sm.summary
same sm ca .fastq
plant single-both "$READS/long_reads_high_depth.fastq.gz"
for case in "0|-e 0 --no-indels" "-m 1|-e 1 --no-indels" "-k 1|-e 1"; do
    errors=${case%%|*}
    echo "== long reads in both orientations (half reverse complemented), --strand both ${errors/0/exact} | ${case#*|} --revcomp"
    rm -rf sm ca && mkdir ca
    # shellcheck disable=SC2086 # the error options are words
    "$SM" demux --barcodes pairs.tsv --strand both ${errors/0/} --trim -t "$T" -o sm "$LONG" --summary sm.summary
    # shellcheck disable=SC2086
    cutadapt -j "$T" ${case#*|} --revcomp -g file:linked.fa -o 'ca/{name}.fastq' "$LONG" >ca.log
    tail -n 1 sm.summary
    same_rc sm ca
done

[ "${TIMING:-1}" = 0 ] && exit 0
plant paired "$READS/short_reads_1.fastq.gz" "$READS/short_reads_2.fastq.gz"
table bc1.fa bc2.fa >pairs.tsv
echo "== time, paired, exact, trimmed, plain in and out: wall s / CPU s (user+sys), medians of $RUNS"
for run in $(seq "$RUNS"); do
    rm -rf sm ca && mkdir ca
    /usr/bin/time -f '%e %U %S' -o sm.time taskset -c "$CORES" "$SM" demux --barcodes pairs.tsv --trim -t "$T" -o sm \
        -1 "$R1" -2 "$R2" 2>/dev/null
    /usr/bin/time -f '%e %U %S' -o ca.time taskset -c "$CORES" cutadapt -j "$T" -e 0 --no-indels -g ^file:bc1.fa \
        -G ^file:bc2.fa -o 'ca/{name1}-{name2}_R1.fastq' -p 'ca/{name1}-{name2}_R2.fastq' "$R1" "$R2" >/dev/null
    awk '{ print "sm", $1, $2 + $3 }' sm.time >>times
    awk '{ print "ca", $1, $2 + $3 }' ca.time >>times
done
for tool in sm ca; do
    w=$(awk -v t=$tool '$1 == t { print $2 }' times | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
    c=$(awk -v t=$tool '$1 == t { print $3 }' times | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
    echo "  $([ $tool = sm ] && echo seqmatch || echo cutadapt) wall $w  CPU $c"
done

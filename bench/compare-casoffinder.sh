#!/usr/bin/env bash
# seqmatch beside Cas-OFFinder 3 (built from its public source, run through
# OpenCL: on CPUs with pocl) on the same genome, guides and limits: both
# run once, timed, and their site sets compared (bench/casoffinder_compare.py:
# Cas-OFFinder's rows reduced to sites with their least mismatches; sites it
# finds only with a bulge at the protospacer's edge, which seqmatch's
# definition leaves out, counted apart). Exits 1 on an unexplained difference.
#
# usage: bench/compare-casoffinder.sh CAS_OFFINDER SEQMATCH GENOME.fa [N_GUIDES M DNA RNA]
#   guides: N (default 20) 20-nt protospacers next to an NGG in GENOME, mutated
#   (bench/crispr_guides.py, seed SEED, default 31); PAM NGG; -m M (default 3),
#   at most one DNA bulge of DNA and one RNA bulge of RNA bases (default 1 1).
# environment: DEVICE (C: Cas-OFFinder's OpenCL CPUs; G: GPUs), THREADS (seqmatch -t, default
#   all cores), SM_ARGS (more seqmatch options, e.g. --gpu), SEED, KEEP (a folder to keep the inputs
#   and outputs in)
set -euo pipefail
CO=${1:?usage: compare-casoffinder.sh CAS_OFFINDER SEQMATCH GENOME.fa [N M DNA RNA]}
SM=${2:?seqmatch}
GENOME=${3:?genome FASTA}
N=${4:-20} M=${5:-3} DNA=${6:-1} RNA=${7:-1}
DEVICE=${DEVICE:-C} THREADS=${THREADS:-0} SEED=${SEED:-31}
here=$(cd "$(dirname "$0")" && pwd)
work=${KEEP:-$(mktemp -d)}
mkdir -p "$work/genome"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
ln -sf "$(cd "$(dirname "$GENOME")" && pwd)/$(basename "$GENOME")" "$work/genome/"

python3 "$here/crispr_guides.py" -n "$N" -s "$SEED" "$GENOME" > "$work/guides.txt"
awk '{ print ">g" NR; print $0 }' "$work/guides.txt" > "$work/guides.fa"
# Cas-OFFinder's input: the genome folder, the pattern (20 N + NGG, bulge sizes), guide + NNN, limit, id
{
  echo "$work/genome"
  echo "NNNNNNNNNNNNNNNNNNNNNGG $DNA $RNA"
  awk -v m="$M" '{ print $0 "NNN " m " g" NR }' "$work/guides.txt"
} > "$work/casoffinder.in"

seconds() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
t0=$EPOCHREALTIME
"$CO" "$work/casoffinder.in" "$DEVICE" "$work/casoffinder.out" > "$work/casoffinder.log" 2>&1
t1=$EPOCHREALTIME
"$SM" search ${SM_ARGS:-} -p "$work/guides.fa" --pam NGG -m "$M" --dna-bulges "$DNA" --rna-bulges "$RNA" -t "$THREADS" \
  "$GENOME" > "$work/seqmatch.tsv" || [ $? -eq 1 ]
t2=$EPOCHREALTIME
echo "genome $(basename "$GENOME"), $N guides, NGG, -m $M, DNA bulge <= $DNA, RNA bulge <= $RNA"
echo "cas-offinder ($DEVICE) $(seconds "$t0" "$t1") s; seqmatch (-t $THREADS ${SM_ARGS:-}) $(seconds "$t1" "$t2") s"
python3 "$here/casoffinder_compare.py" "$work/casoffinder.out" "$work/seqmatch.tsv" 3

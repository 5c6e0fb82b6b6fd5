#!/usr/bin/env bash
# Fetch the real data the benchmarks and tests run on: bacterial genomes, reads and the King
# James Bible, all from Debian's example packages (nothing here is generated).
#
# usage: bench/fetch-data.sh [DIR]        (default DIR: $SEQMATCH_BENCH_DATA, else bench/data)
#
# Makes, in DIR:
#   genomes/NAME.fa   one uncompressed FASTA file per genome or assembly
#   panel.fa          all of them, concatenated (about 110 Mbp)
#   panel.seq         every sequence base of panel.fa, upper case, one line, no headers,
#                     no trailing newline
#   reads/*.fastq.gz  real sequencing reads
#   kjv.txt           the King James Bible (if the bible-kjv package can be installed)
# Packages: ragout-examples kaptive-example kleborate-examples bowtie-examples unicycler-data.
# Needs apt-get download and dpkg-deb (any Debian or Ubuntu system). Does nothing if
# DIR/panel.seq exists already (remove it to fetch again).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-${SEQMATCH_BENCH_DATA:-$here/data}}
if [ -s "$dir/panel.seq" ]; then
  echo "fetch-data: $dir/panel.seq exists; nothing to do" >&2
  exit 0
fi
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
tmp=$(mktemp -d "$dir/.fetch.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

packages=(ragout-examples kaptive-example kleborate-examples bowtie-examples unicycler-data)
mkdir -p "$tmp/debs" "$tmp/root" "$dir/genomes" "$dir/reads"
download() { (cd "$tmp/debs" && apt-get download "${packages[@]}" >/dev/null 2>&1); }
if ! download; then
  echo "fetch-data: apt-get download failed; refreshing the package lists once" >&2
  apt-get update -qq >/dev/null 2>&1 || true
  download || { echo "fetch-data: cannot download ${packages[*]}" >&2; exit 2; }
fi
for deb in "$tmp"/debs/*.deb; do dpkg-deb -x "$deb" "$tmp/root"; done

# Genome name: the file name without its FASTA/compression suffixes; files whose names say
# little on their own (contigs, assemblies, match examples) get their folder's name in front.
decompress() {
  case "$1" in
    *.gz) gzip -dc "$1" ;;
    *.xz) xz -dc "$1" ;;
    *) cat "$1" ;;
  esac
}
count=0
find "$tmp/root" -type f \( -name '*.fasta.gz' -o -name '*.fna.gz' -o -name '*.fna.xz' \
     -o -name 'reference.fasta' \) -print | LC_ALL=C sort > "$tmp/list"
while IFS= read -r path; do
  base=$(basename "$path")
  for suffix in .gz .xz .fasta .fna; do base=${base%"$suffix"}; done
  case "$path" in
    *contigs* | *assembly* | *match*) base="$(basename "$(dirname "$path")")_$base" ;;
  esac
  # drop blank lines; awk also ends the last line with a newline where the source lacks one
  decompress "$path" | awk 'NF' > "$dir/genomes/$base.fa"
  count=$((count + 1))
done < "$tmp/list"
[ "$count" -gt 0 ] || { echo "fetch-data: no genomes found in the packages" >&2; exit 2; }

LC_ALL=C ls "$dir"/genomes/*.fa | while IFS= read -r f; do cat "$f"; done > "$dir/panel.fa"
# panel.seq: sequence lines only, joined, upper case (IUPAC codes kept, as upper case).
LC_ALL=C awk '!/^>/' "$dir/panel.fa" | tr -d '\r\n' | tr 'a-z' 'A-Z' > "$tmp/panel.seq"
find "$tmp/root" -type f -name '*.fastq.gz' -exec cp {} "$dir/reads/" \;

if ! command -v bible >/dev/null 2>&1; then
  apt-get install -y -qq bible-kjv >/dev/null 2>&1 || true
fi
if command -v bible >/dev/null 2>&1; then
  bible -f "Gen1:1-Rev22:21" > "$dir/kjv.txt" 2>/dev/null || rm -f "$dir/kjv.txt"
fi
mv "$tmp/panel.seq" "$dir/panel.seq"   # last, so that its presence means "complete"

printf 'fetch-data: %d genomes; panel.fa %s bytes; panel.seq %s bases; %d read files; kjv.txt %s\n' \
  "$count" "$(wc -c < "$dir/panel.fa")" "$(wc -c < "$dir/panel.seq")" \
  "$(find "$dir/reads" -name '*.fastq.gz' | wc -l)" \
  "$( [ -s "$dir/kjv.txt" ] && wc -c < "$dir/kjv.txt" || echo missing)" >&2

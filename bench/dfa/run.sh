#!/usr/bin/env bash
# Builds the library and dfa_bench in a build directory, then runs the
# benchmark (sequential vs speculative chunked, 1 and 2 threads).
#   bench/dfa/run.sh [BUILD_DIR] [dfa_bench options...]
# Data: KJV_TEXT and PANEL_SEQ (default kjv.txt and panel.seq in SEQMATCH_BENCH_DATA,
# else bench/data, as bench/fetch-data.sh makes them).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build-bench-dfa}
shift || true
data=${SEQMATCH_BENCH_DATA:-$root/bench/data}
kjv=${KJV_TEXT:-$data/kjv.txt}
panel=${PANEL_SEQ:-$data/panel.seq}
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DSEQMATCH_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" --target seqmatch_static -j2 >/dev/null
cc -std=c11 -O2 -Wall -Wextra -I"$root/include" "$here/dfa_bench.c" "$build/libseqmatch.a" -lisal -lzstd -lz -lpthread -lm -o "$build/dfa_bench"
echo "# $(uname -m), $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
"$build/dfa_bench" --bible "$kjv" --panel "$panel" "$@"

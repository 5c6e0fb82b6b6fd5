#!/usr/bin/env bash
# Random 1-3-byte damages of shard files of every format (tsv, bed, jsonl,
# count, k-edit runs, dfa), ROUNDS each (default 1000), merged: none may be
# accepted with another output, and under a sanitizer build none may report.
# usage: bench/shard-damage.sh SEQMATCH [ROUNDS]
# (e.g. build-sanitize/seqmatch for the sanitizer reports)
set -euo pipefail
seqmatch=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
cd "$(dirname "$0")/../tests"
SM_SHARD_DAMAGES=${2:-1000} bash cli/shard.sh "$seqmatch"

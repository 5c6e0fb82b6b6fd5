#!/usr/bin/env bash
# The golden databases (tests/golden/README.md): each searched with
# SEQMATCH must give exactly its recorded NAME.expected (hits, or the
# refusal that docs/format.md prescribes, with the exit status).
#
# usage: tests/golden/check.sh SEQMATCH         check every golden database
#        tests/golden/check.sh SEQMATCH DB      print what DB gives (make.sh)
set -uo pipefail
S=${1:?usage: check.sh SEQMATCH [DB]}
case "$S" in */*) S=$(cd "$(dirname "$S")" && pwd)/$(basename "$S") ;; esac
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# what one database gives: its search's output, errors and exit status
run() {
  local db=$1 target=target.fa
  case "$(basename "$db")" in text* | pigeonhole_text*) target=target.txt ;; esac
  local out err rc
  out=$("$S" search -d "$db" "$target" 2> "$tmp/err")
  rc=$?
  err=$(cat "$tmp/err")
  printf '%s\n--- stderr\n%s\n--- exit %s\n' "$out" "$err" "$rc"
}
if [ $# -ge 2 ]; then
  run "$2"
  exit 0
fi
fail=0 n=0
for db in v*/*.smdb v*/damaged/*.smdb; do
  [ -e "$db" ] || continue
  n=$((n + 1))
  if ! diff <(run "$db") "${db%.smdb}.expected" > "$tmp/diff"; then
    echo "FAIL: $db differs from ${db%.smdb}.expected:"
    head -20 "$tmp/diff"
    fail=1
  fi
done
[ "$n" -gt 0 ] || { echo "FAIL: no golden databases"; exit 1; }
echo "golden databases: $n checked, $([ $fail = 0 ] && echo all as recorded || echo some differ)"
exit $fail

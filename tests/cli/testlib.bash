# Helpers sourced by the CLI test scripts (not a test itself).
# Each script is run as: bash SCRIPT /path/to/seqmatch, from the tests directory.

if [ $# -lt 1 ] || [ ! -x "$1" ]; then
    echo "usage: $0 SEQMATCH_BINARY" >&2
    exit 2
fi
SEQMATCH=$1
DATA=data/cli
TMP=$(mktemp -d "${TMPDIR:-/tmp}/seqmatch-cli.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

passed=0
failed=0

pass() { passed=$((passed + 1)); }
fail() {
    failed=$((failed + 1))
    echo "FAIL: $*"
    if [ -s "$TMP/err" ]; then sed 's/^/    stderr: /' "$TMP/err" | head -5; fi
}

# run ARGS...: runs seqmatch; stdout in $TMP/out, stderr in $TMP/err, exit status in $status.
run() {
    "$SEQMATCH" "$@" >"$TMP/out" 2>"$TMP/err"
    status=$?
}

# run_stdin FILE ARGS...: as run, with FILE on standard input.
run_stdin() {
    local input=$1
    shift
    "$SEQMATCH" "$@" <"$input" >"$TMP/out" 2>"$TMP/err"
    status=$?
}

# check_status NAME EXPECTED
check_status() {
    if [ "$status" -eq "$2" ]; then pass; else fail "$1: exit status $status, expected $2"; fi
}

# check_output NAME EXPECTED_FILE: stdout equals the file exactly.
check_output() {
    if cmp -s "$TMP/out" "$2"; then
        pass
    else
        fail "$1: output differs from $2"
        diff "$2" "$TMP/out" | head -10 | sed 's/^/    /'
    fi
}

# check_output_text NAME TEXT: stdout equals TEXT (printf-style escapes not expanded).
check_output_text() {
    printf '%s' "$2" >"$TMP/expected"
    check_output "$1" "$TMP/expected"
}

# check_stderr NAME SUBSTRING: stderr has exactly one line, starting with
# "seqmatch: " and containing SUBSTRING.
check_stderr() {
    local lines
    lines=$(wc -l <"$TMP/err")
    if [ "$lines" -eq 1 ] && grep -q '^seqmatch: ' "$TMP/err" && grep -qF -- "$2" "$TMP/err"; then
        pass
    else
        fail "$1: stderr should be one 'seqmatch: ...$2...' line, got:"
        sed 's/^/    | /' "$TMP/err" | head -5
    fi
}

check_stderr_empty() {
    if [ ! -s "$TMP/err" ]; then pass; else fail "$1: stderr not empty"; fi
}

check_stdout_empty() {
    if [ ! -s "$TMP/out" ]; then pass; else fail "$1: stdout not empty"; fi
}

# measure ARGS...: runs seqmatch, stdout to $TMP/out, and sets rss_mb to its
# peak resident set size in MiB (empty when it cannot be measured).
measure() {
    rss_mb=""
    if [ -x /usr/bin/time ]; then
        /usr/bin/time -f '%M' -o "$TMP/rss" "$SEQMATCH" "$@" >"$TMP/out" 2>"$TMP/err"
        status=$?
        rss_mb=$(($(tail -n 1 "$TMP/rss") / 1024))
    else
        "$SEQMATCH" "$@" >"$TMP/out" 2>"$TMP/err" &
        local pid=$! hwm
        while kill -0 $pid 2>/dev/null; do
            hwm=$(awk '/^VmHWM:/ { print $2 }' /proc/$pid/status 2>/dev/null)
            [ -n "$hwm" ] && rss_mb=$((hwm / 1024))
            sleep 0.05
        done
        wait $pid
        status=$?
    fi
}

finish() {
    echo "$passed passed, $failed failed"
    [ "$failed" -eq 0 ]
}

#!/usr/bin/env bash
# Clear words for nonsense: no output before a failure, and the messages
# that say what went wrong and what to do instead.
source "$(dirname "$0")/testlib.bash"
T=$'\t'

# A search that fails on its first record prints its message and nothing
# else: no tsv header on standard output.
printf '>a\nACGT\001ACGT\n' >"$TMP/bad.fa"
run search -e ACGT "$TMP/bad.fa"
check_status "failing target" 2
check_stdout_empty "no header before a failure"
check_stderr "failing target" "unexpected byte 0x01 in sequence"
# With no hit the header is still written (the search succeeded).
printf '>a\nTTTT\n' >"$TMP/none.fa"
run search -e ACGT "$TMP/none.fa"
check_status "no hit" 1
check_output_text "no hit: the header" "#record${T}pattern${T}strand${T}start${T}end${T}errors${T}matched
"
finish

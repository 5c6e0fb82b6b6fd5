# The command line's options, listed three times, agree: the one option table
# that parses every command (src/cli/options.c), the commands' --help texts
# and the man page. Every option named in a --help or the man page is one
# that the table takes.
. "$(dirname "$0")/testlib.bash"

OPTIONS_C=../src/cli/options.c
MAN=../man/seqmatch.1

# "name COMMANDS" per entry of the table ({OPT_X, 'c', "name", takes_value, FOR_...|FOR_..., ...})
sed -n 's/^ *{OPT_[A-Z0-9_]*, [^,]*, "\([a-z0-9-]*\)", [01], \([A-Z_|]*\),.*/\1 \2/p' "$OPTIONS_C" >"$TMP/table"
n=$(wc -l <"$TMP/table")
if [ "$n" -ge 60 ]; then pass; else fail "option table: $n entries read from $OPTIONS_C"; fi
# dfa's and merge's options are in the same table
if grep -q "^regex FOR_DFA$" "$TMP/table" && grep -q "^output .*FOR_MERGE" "$TMP/table"; then pass
else fail "dfa's and merge's options not read from $OPTIONS_C"; fi

for cmd in search compile filter demux dfa merge trim amplicon; do
    "$SEQMATCH" "$cmd" --help >"$TMP/help_$cmd" 2>&1
done
# the man page's option names (roff's \- written -)
sed 's/\\-/-/g' "$MAN" >"$TMP/man"

# every option of the table is in the --help of the commands it is for
# (filter and demux refer to search's for the options they share) and in the man page
while read -r name commands; do
    helps=""
    for group in $(echo "$commands" | tr '|' ' '); do
        case $group in
            FOR_BOTH) helps="$helps search compile" ;;
            FOR_SEARCH|FOR_SEARCH_ONLY) helps="$helps search" ;;
            FOR_COMPILE) helps="$helps compile" ;;
            FOR_READS) helps="$helps filter demux" ;;
            FOR_FILTER) helps="$helps filter" ;;
            FOR_DEMUX) helps="$helps demux" ;;
            FOR_DFA) helps="$helps dfa" ;;
            FOR_MERGE) helps="$helps merge" ;;
            FOR_TRIM) helps="$helps trim" ;;
            FOR_AMPLICON) helps="$helps amplicon" ;;
            *) fail "option --$name: commands $group not known to this test" ;;
        esac
    done
    for cmd in $helps; do
        if grep -qE -- "--$name([^a-z0-9-]|$)" "$TMP/help_$cmd"; then pass
        elif { [ "$name" = read1 ] || [ "$name" = read2 ]; } && grep -qE -- "-${name#read} R${name#read}" "$TMP/help_$cmd"
        then pass # demux shows the mates by their short forms
        else fail "$cmd --help does not list --$name"; fi
    done
    if grep -qE -- "--$name([^a-z0-9-]|$)" "$TMP/man"; then pass
    elif [ "$name" = read1 ] || [ "$name" = read2 ]; then
        # named by their short forms -1 and -2 in the man page
        if grep -qE -- "^\.B(R|I)? -${name#read}" "$TMP/man" || grep -qE -- "-${name#read}( |,)" "$TMP/man"; then pass
        else fail "man page lists neither --$name nor -${name#read}"; fi
    else fail "man page does not list --$name"; fi
done <"$TMP/table"

# and back: every option a --help or the man page names is one a parser takes
known() { grep -q "^$1 " "$TMP/table"; }
for cmd in search compile filter demux dfa merge trim amplicon; do
    for option in $(grep -oE -- "--[a-z][a-z0-9-]*" "$TMP/help_$cmd" | sort -u); do
        if known "${option#--}"; then pass; else fail "$cmd --help names $option, which no parser takes"; fi
    done
done
for option in $(grep -oE -- "--[a-z][a-z0-9-]*" "$TMP/man" | sort -u); do
    if known "${option#--}"; then pass; else fail "the man page names $option, which no parser takes"; fi
done

finish

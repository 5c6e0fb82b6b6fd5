# The command line's options, listed three times, agree: the option table
# that parses search, compile, filter and demux (src/cli/options.c), their
# --help texts and the man page; dfa's parser, its --help and the man page.
# Every option named in a --help or the man page is one that a parser takes.
. "$(dirname "$0")/testlib.bash"

OPTIONS_C=../src/cli/options.c
DFA_C=../src/cli/dfa.c
MAN=../man/seqmatch.1

# "name COMMANDS" per entry of the table ({OPT_X, 'c', "name", takes_value, FOR_..., ...})
sed -n 's/^ *{OPT_[A-Z0-9_]*, [^,]*, "\([a-z0-9-]*\)", [01], \([A-Z_|]*\),.*/\1 \2/p' "$OPTIONS_C" >"$TMP/table"
n=$(wc -l <"$TMP/table")
if [ "$n" -ge 40 ]; then pass; else fail "option table: $n entries read from $OPTIONS_C"; fi
# dfa's long options, as its parser compares them (IS("--name"))
grep -o 'IS("--[a-z0-9-]*")' "$DFA_C" | sed 's/IS("--\(.*\)")/\1/' | sort -u >"$TMP/dfa"
n=$(wc -l <"$TMP/dfa")
if [ "$n" -ge 15 ]; then pass; else fail "dfa options: $n read from $DFA_C"; fi

for cmd in search compile filter demux dfa; do
    "$SEQMATCH" "$cmd" --help >"$TMP/help_$cmd" 2>&1
done
# the man page's option names (roff's \- written -)
sed 's/\\-/-/g' "$MAN" >"$TMP/man"

# every option of the table is in the --help of the commands it is for
# (filter and demux refer to search's for the options they share) and in the man page
while read -r name commands; do
    case $commands in
        FOR_BOTH) helps="search compile" ;;
        FOR_SEARCH) helps="search" ;;
        FOR_COMPILE) helps="compile" ;;
        FOR_READS) helps="filter demux" ;;
        FOR_FILTER) helps="filter" ;;
        FOR_DEMUX) helps="demux" ;;
        *) helps=""; fail "option --$name: commands $commands not known to this test" ;;
    esac
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

# every option dfa parses is in its --help and in the man page
while read -r name; do
    if grep -qE -- "--$name([^a-z0-9-]|$)" "$TMP/help_dfa"; then pass; else fail "dfa --help does not list --$name"; fi
    if grep -qE -- "--$name([^a-z0-9-]|$)" "$TMP/man"; then pass; else fail "man page does not list dfa's --$name"; fi
done <"$TMP/dfa"

# and back: every option a --help or the man page names is one a parser takes
known() { grep -q "^$1 " "$TMP/table" || grep -qx "$1" "$TMP/dfa"; }
for cmd in search compile filter demux dfa; do
    for option in $(grep -oE -- "--[a-z][a-z0-9-]*" "$TMP/help_$cmd" | sort -u); do
        if known "${option#--}"; then pass; else fail "$cmd --help names $option, which no parser takes"; fi
    done
done
for option in $(grep -oE -- "--[a-z][a-z0-9-]*" "$TMP/man" | sort -u); do
    if known "${option#--}"; then pass; else fail "the man page names $option, which no parser takes"; fi
done

finish

#!/usr/bin/env bash
# CRISPR guides from the command line: --pam / --pam5, --dna-bulges and
# --rna-bulges, the site columns (--site), --format profile and profile-jsonl,
# --profile FILE beside the hits, and what is refused. The sites are worked
# out by hand; test_guide checks the library against the site oracle.
source "$(dirname "$0")/testlib.bash"
T=$'\t'

# Guide ACGTACGTAC, PAM NGG. At 5: ACGTA[A]CGTAC + AGG, a DNA bulge (the
# extra A nearest the PAM of the two that fit); at 24: ACGT-CGTAC + TGG, an
# RNA bulge; at 40 on '-': ACGaACGTAC + TGG, one mismatch, and one base
# further the same with a DNA bulge at the guide's 5' end.
printf '>g\nTTTTTACGTAACGTACAGGTTTTTACGTCGTACTGGTTTTCCAGTACGTTCGTTTTT\n' >"$TMP/b.fa"
head="#record${T}pattern${T}strand${T}start${T}end${T}errors${T}matched${T}bulge${T}bulge_size${T}guide_aligned${T}site_aligned"
sites="g${T}ACGTACGTAC${T}+${T}5${T}19${T}0${T}ACGTAACGTACAGG${T}DNA${T}1${T}ACGTA-CGTACNGG${T}ACGTAACGTACAGG
g${T}ACGTACGTAC${T}+${T}24${T}36${T}0${T}ACGTCGTACTGG${T}RNA${T}1${T}ACGTACGTACNGG${T}ACGT-CGTACTGG
g${T}ACGTACGTAC${T}-${T}40${T}53${T}1${T}CCAGTACGTTCGT${T}none${T}0${T}ACGTACGTACNGG${T}ACGaACGTACTGG
g${T}ACGTACGTAC${T}-${T}40${T}54${T}1${T}CCAGTACGTTCGTT${T}DNA${T}1${T}A-CGTACGTACNGG${T}AACGaACGTACTGG
"
for threads in 1 2; do
    run search -e ACGTACGTAC --pam NGG -m 1 --dna-bulges 1 --rna-bulges 1 -t $threads --chunk-size 7 "$TMP/b.fa"
    check_output_text "bulges, site columns by default (-t $threads)" "$head
$sites"
    check_status "bulges status" 0
done
run search -e ACGTACGTAC --pam NGG -m 1 --dna-bulges 1 --rna-bulges 1 --engine guide --no-header "$TMP/b.fa"
check_output_text "--engine guide" "$sites"
# No mismatch: the two bulged sites only.
run search -e ACGTACGTAC --pam NGG -m 0 --dna-bulges 1 --rna-bulges 1 --no-header "$TMP/b.fa"
check_output_text "-m 0 with bulges" "$(printf '%s\n' "$sites" | head -2)
"
# DNA bulges only, up to 2: at 40-55 AA bulged at the guide's 5' end.
run search -e ACGTACGTAC --pam NGG -m 1 --dna-bulges 2 --no-header --format bed "$TMP/b.fa"
check_output_text "DNA bulges only" "g${T}5${T}19${T}ACGTACGTAC${T}1000${T}+
g${T}40${T}53${T}ACGTACGTAC${T}923${T}-
g${T}40${T}54${T}ACGTACGTAC${T}928${T}-
g${T}40${T}55${T}ACGTACGTAC${T}933${T}-
"
# --site without bulges; jsonl.
run search -e ACGTACGTAC --pam NGG -m 1 --site --no-header "$TMP/b.fa"
check_output_text "--site without bulges" "$(printf '%s\n' "$sites" | sed -n 3p)
"
run search -e ACGTACGTAC --pam NGG -m 1 --rna-bulges 1 --format jsonl "$TMP/b.fa"
check_output_text "jsonl site keys" '{"record":"g","pattern":"ACGTACGTAC","strand":"+","start":24,"end":36,"errors":0,"matched":"ACGTCGTACTGG","bulge":"RNA","bulge_size":1,"guide_aligned":"ACGTACGTACNGG","site_aligned":"ACGT-CGTACTGG"}
{"record":"g","pattern":"ACGTACGTAC","strand":"-","start":40,"end":53,"errors":1,"matched":"CCAGTACGTTCGT","bulge":"none","bulge_size":0,"guide_aligned":"ACGTACGTACNGG","site_aligned":"ACGaACGTACTGG"}
'

# A 5' PAM: the reverse complement of the guide with CCN on its 5' side
# finds the same sites on the other strand.
run search -e GTACGTACGT --pam5 CCN -m 1 --dna-bulges 1 --rna-bulges 1 --no-header --format bed "$TMP/b.fa"
check_output_text "--pam5" "g${T}5${T}19${T}GTACGTACGT${T}1000${T}-
g${T}24${T}36${T}GTACGTACGT${T}1000${T}-
g${T}40${T}53${T}GTACGTACGT${T}923${T}+
g${T}40${T}54${T}GTACGTACGT${T}928${T}+
"

# Profiles: per guide, sites by class.
printf '>one\nACGTACGTAC\n>two\nTTTTTTTTTT\n' >"$TMP/guides.fa"
profile="#pattern${T}sites${T}mm0${T}mm1${T}dna1_mm0${T}dna1_mm1${T}rna1_mm0${T}rna1_mm1
one${T}4${T}0${T}1${T}1${T}1${T}1${T}0
two${T}0${T}0${T}0${T}0${T}0${T}0${T}0
"
run search -p "$TMP/guides.fa" --pam NGG -m 1 --dna-bulges 1 --rna-bulges 1 --format profile "$TMP/b.fa"
check_output_text "--format profile" "$profile"
check_status "profile status" 0
run search -p "$TMP/guides.fa" --pam NGG -m 1 --dna-bulges 1 --rna-bulges 1 --format profile-jsonl "$TMP/b.fa"
check_output_text "--format profile-jsonl" '{"pattern":"one","sites":4,"mismatches":[0,1],"dna_bulge":[[1,1]],"rna_bulge":[[1,0]]}
{"pattern":"two","sites":0,"mismatches":[0,0],"dna_bulge":[[0,0]],"rna_bulge":[[0,0]]}
'
run search -p "$TMP/guides.fa" --pam NGG -m 1 --dna-bulges 1 --rna-bulges 1 --no-header --format bed \
    --profile "$TMP/p.tsv" "$TMP/b.fa"
check_output_text "--profile: the hits" "g${T}5${T}19${T}one${T}1000${T}+
g${T}24${T}36${T}one${T}1000${T}+
g${T}40${T}53${T}one${T}923${T}-
g${T}40${T}54${T}one${T}928${T}-
"
if [ "$(cat "$TMP/p.tsv")" = "$(printf '%s' "$profile")" ]; then pass; else fail "--profile FILE (with its header)"; fi
run search -p "$TMP/guides.fa" --pam NGG -m 1 --format count --profile "$TMP/p.jsonl" "$TMP/b.fa"
check_output_text "--profile beside counts" "one${T}1
two${T}0
total${T}1
"
if grep -q '"pattern":"one","sites":1,"mismatches":\[0,1\]' "$TMP/p.jsonl"; then pass; else fail "--profile .jsonl"; fi

# Refusals.
run search -e ACGTACGTAC -m 1 --dna-bulges 1 "$TMP/b.fa"
check_status "bulges without a PAM" 2
grep -q "bulges need a PAM" "$TMP/err" && pass || fail "bulges without a PAM: message"
run search -e ACGTACGTAC --pam NGG -k 1 --rna-bulges 1 "$TMP/b.fa"
check_status "bulges with edits" 2
run search -e ACGTACGTAC --pam NGG -m 1 --dna-bulges 9 "$TMP/b.fa"
check_status "a bulge over 8" 2
run search -e ACGTACGTAC -m 1 --site "$TMP/b.fa"
check_status "--site without a PAM" 2
run search -e ACGTACGTAC --pam NGG --pam5 TTTV -m 1 "$TMP/b.fa"
check_status "two PAMs" 2
run search -e ACGTACGTAC --pam NGG -m 1 --format bed --site "$TMP/b.fa"
check_status "--site with bed" 2
run search -e ACGTACGTAC --pam NGG -m 1 -q --profile "$TMP/x.tsv" "$TMP/b.fa"
check_status "--profile with -q" 2
run search -e ACGTACGTAC --pam NGG -m 1 --profile "$TMP/b.fa" "$TMP/b.fa"
check_status "--profile over an input" 2
run filter -e ACGTACGTAC --pam NGG -m 1 --site "$TMP/b.fa"
check_status "filter --site" 2

# A saved database keeps the PAM side and the bulges.
run compile -e GTACGTACGT --pam5 CCN -m 1 --dna-bulges 1 --rna-bulges 1 -o "$TMP/g.smdb"
check_status "compile" 0
run search -d "$TMP/g.smdb" --no-header --format bed "$TMP/b.fa"
check_output_text "saved database" "g${T}5${T}19${T}GTACGTACGT${T}1000${T}-
g${T}24${T}36${T}GTACGTACGT${T}1000${T}-
g${T}40${T}53${T}GTACGTACGT${T}923${T}+
g${T}40${T}54${T}GTACGTACGT${T}928${T}+
"
run compile -d "$TMP/g.smdb" --explain
run compile -e GTACGTACGT --pam5 CCN -m 1 --rna-bulges 2 --explain
grep -q "5' of every pattern" "$TMP/out" && grep -q "RNA up to 2" "$TMP/out" && grep -q "guide engine" "$TMP/out" &&
    pass || fail "--explain of a guide database"

finish

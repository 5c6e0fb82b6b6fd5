# Inputs for the tests of searches split into shares (shard.sh, mpi/mpi.sh),
# written to $TMP (not a test itself; sourced after testlib.bash):
#   huge.fa     one 240 kb record, 61 bases a line, N runs, lower case
#   single.fa   one 90 kb record on a single line, then a short one
#   tiny.fa     600 records of 0 to 40 bases
#   mixed.fa    uneven records and line widths, a \r\n record, blank lines
#   reads.fq    400 reads whose qualities often start with '@' or '+'
#   mixed.fa.bgz, huge.fa.bgz, reads.fq.bgz   BGZF of them (bgzip: 64 kB blocks)
#   tiny.fa.gz  plain gzip (read whole by one share)
#   text.txt    lines of words
#   sites.fa    patterns planted in the records; guides.fa: 20-mers
# Patterns are planted every ~700 bases so that every mode finds hits.
split_data() {
    awk 'BEGIN {
        seed = 99
        split("A C G T", base, " ")
        n_plant = split("GAATTC GGATCC AAGCTT CTGCAG GCTGGTGGAC ATGCGAGTGTTGAAGTTCGG TCAGACTCCTAACTTCCATG", plant, " ")
        out = "huge.fa"; record(out, "chr1 one long record", 240000, 61, 1)
        out = "single.fa"; record(out, "flat", 90000, 1000000, 0); record(out, "after", 300, 60, 0)
        out = "tiny.fa"; for (r = 0; r < 600; r++) record(out, "t" r, rand_int(41), 60, 0)
        out = "mixed.fa"
        for (r = 0; r < 30; r++) {
            record(out, "m" r " desc", rand_int(4) == 0 ? rand_int(50) : rand_int(9000), 1 + rand_int(3) * 40 + rand_int(7) * 13, r % 4)
            if (r % 7 == 3) print "" > out
        }
        out = "reads.fq"
        for (r = 0; r < 400; r++) fastq(out, "q" r, 20 + rand_int(120))
        out = "text.txt"
        split("the cat sat on a mat dog ACGT GAATTC", word, " ")
        for (l = 0; l < 3000; l++) {
            n = rand_int(10); s = ""
            for (w = 0; w < n; w++) s = s (w ? " " : "") word[rand_int(9) + 1]
            print s > out
        }
    }
    function rand_int(n) {
        seed = (seed * 1103515245 + 12345) % 2147483648
        return int(seed / 65536) % n
    }
    function sequence(len, kind,    s, i, c, lower, next_plant, p, j, n) {
        s = ""; lower = 0; next_plant = 100 + rand_int(500)
        for (i = 0; i < len; i++) {
            if (i == next_plant && i + 25 < len) {
                p = plant[rand_int(n_plant) + 1]
                if (rand_int(3) == 0) p = substr(p, 1, 3) "T" substr(p, 5)
                s = s (lower ? tolower(p) : p)
                i += length(p) - 1
                next_plant = i + 300 + rand_int(800)
                continue
            }
            c = base[rand_int(4) + 1]
            if (kind == 1 && rand_int(3000) == 0) {
                n = 1 + rand_int(200)
                for (j = 0; j < n && i < len; j++) { s = s "N"; i++ }
            }
            if (kind == 1 && rand_int(900) == 0) lower = !lower
            s = s (lower ? tolower(c) : c)
        }
        return s
    }
    function record(file, name, len, width, kind,    s, i, eol) {
        eol = kind == 3 ? "\r" : ""
        printf ">%s%s\n", name, eol > file
        s = sequence(len, kind)
        for (i = 1; i <= length(s); i += width) printf "%s%s\n", substr(s, i, width), eol > file
    }
    function fastq(file, name, len,    s, q, i) {
        s = sequence(len, 0)
        q = ""
        for (i = 0; i < length(s); i++) q = q (i == 0 || rand_int(6) == 0 ? substr("@+", 1 + rand_int(2), 1) : substr("!#5?ABCDEFGHIJ", 1 + rand_int(14), 1))
        printf "@%s\n%s\n+\n%s\n", name, s, q > file
    }' </dev/null
    bgzip -c mixed.fa >mixed.fa.bgz
    bgzip -c huge.fa >huge.fa.bgz
    bgzip -c reads.fq >reads.fq.bgz
    gzip -c tiny.fa >tiny.fa.gz
    printf '>EcoRI\nGAATTC\n>BamHI\nGGATCC\n>HindIII\nAAGCTT\n>PstI\nCTGCAG\n>long\nGCTGGTGGAC\n>Chi\nGCTGGTGG\n' >sites.fa
    printf '>g1\nATGCGAGTGTTGAAGTTCGG\n>g2\nTCAGACTCCTAACTTCCATG\n' >guides.fa
}
(cd "$TMP" && split_data) || { echo "FAIL: split test data (bgzip, gzip and awk are needed)"; exit 1; }

#!/usr/bin/env python3
"""Compares Cas-OFFinder 3's sites with seqmatch's (--pam with -m and bulges).

Cas-OFFinder writes one row per alignment it tried (bulge kind, size and
place): a site (guide, record, start, end, strand) can have several rows,
each with its mismatches. seqmatch writes each site once, with its best
alignment. Both are reduced to sites with their least mismatches and then
compared. Cas-OFFinder also allows a bulge at the protospacer's edges (a DNA
bulge between guide and PAM, an RNA bulge of the guide's 5'-most bases);
the semantics of seqmatch (MISSION: "inside the protospacer") do not, so a
site that Cas-OFFinder finds only through such an alignment, or whose
least mismatches come only from one, is counted apart as "edge" and is the
one difference the definitions explain.

usage: casoffinder_compare.py CASOFFINDER_OUT SEQMATCH_TSV PAM_LENGTH [--json]
"""
import json
import sys
from collections import defaultdict


def co_sites(path, q):
    """{(guide, record, start, end, strand): [(mismatches, edge, kind, size)]}"""
    sites = defaultdict(list)
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                continue
            ident, kind, rna, dna, chrom, loc, strand, mm, size = line.rstrip("\n").split("\t")
            size = int(size)
            # the guide's length without the PAM: crRNA row less PAM less DNA-bulge gaps
            guide_len = len(rna) - q - rna.count("-")
            if kind == "DNA":
                site_len = guide_len + q + size
                gap = rna
            elif kind == "RNA":
                site_len = guide_len + q - size
                gap = dna
            else:
                site_len = guide_len + q
                gap = ""
            edge = False
            if gap:
                body = gap[:-q] if q else gap  # 3' PAM: the last q columns
                first, last = body.find("-"), body.rfind("-")
                edge = first == 0 or last == len(body) - 1
            start = int(loc)
            sites[(ident, chrom.split()[0], start, start + site_len, strand)].append((int(mm), edge, kind, size))
    return sites


def sm_sites(path):
    sites = {}
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                continue
            rec, pat, strand, start, end, errors = line.split("\t")[:6]
            sites[(pat, rec, int(start), int(end), strand)] = int(errors)
    return sites


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    q = int(sys.argv[3])
    co, sm = co_sites(sys.argv[1], q), sm_sites(sys.argv[2])
    out = defaultdict(int)
    examples = defaultdict(list)
    for key, rows in co.items():
        inside = [r for r in rows if not r[1]]
        if key not in sm:
            kind = "only_casoffinder_edge" if not inside else "only_casoffinder"
            out[kind] += 1
            examples[kind].append((key, rows))
            continue
        best_inside = min((r[0] for r in inside), default=None)
        if best_inside == sm[key]:
            out["same"] += 1
        elif best_inside is None or min(r[0] for r in rows) < best_inside:
            out["mismatches_differ_edge"] += 1
        else:
            out["mismatches_differ"] += 1
            examples["mismatches_differ"].append((key, rows, sm[key]))
    for key in sm:
        if key not in co:
            out["only_seqmatch"] += 1
            examples["only_seqmatch"].append((key, sm[key]))
    out["casoffinder_sites"] = len(co)
    out["casoffinder_rows"] = sum(len(r) for r in co.values())
    out["seqmatch_sites"] = len(sm)
    if "--json" in sys.argv:
        print(json.dumps(dict(out), sort_keys=True))
    else:
        for k in sorted(out):
            print("%-26s %d" % (k, out[k]))
    for kind in ("only_casoffinder", "only_seqmatch", "mismatches_differ"):
        for e in examples[kind][:5]:
            print("  %s: %s" % (kind, e), file=sys.stderr)
    unexplained = out["only_casoffinder"] + out["only_seqmatch"] + out["mismatches_differ"]
    sys.exit(1 if unexplained else 0)


if __name__ == "__main__":
    main()

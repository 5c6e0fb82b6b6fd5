#!/usr/bin/env python3
"""The ABI check of libseqmatch.so (docs/api.md, "Versions and the SONAME").

    check.py LIBRARY SOURCE_DIR PROJECT_MAJOR [--archive libseqmatch.a] [--write]

Compares the symbols the library exports (nm -D --defined-only) with the
committed list tests/abi/libseqmatch.symbols, which names each symbol stable
or experimental. Fails when a symbol disappears or appears without the list
being changed with it, when a stable declaration is not exported, when an
exported symbol is declared in no public
header (an internal leaked), when the list calls a symbol stable that the
headers declare only under SEQMATCH_EXPERIMENTAL (or the other way round),
and when the SONAME is not libseqmatch.so.MAJOR for the project's major
version, or the headers' SM_VERSION_MAJOR is another. With --archive, also
fails when the static library defines a global name without the sm_ prefix
(the shared library hides its internals; the archive cannot, so they must
not take names a program may use). --write rewrites the list from the
library and the headers (after a deliberate change).
"""
import os
import re
import subprocess
import sys

DECLARED = re.compile(r"\b(sm_[A-Za-z0-9_]+)\s*\(")


def exported(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", lib], check=True, capture_output=True, text=True).stdout
    names = {line.split()[-1] for line in out.splitlines() if len(line.split()) >= 3 and line.split()[1] in "TDBRVWi"}
    # names of the toolchain's (_init, a sanitizer's __odr_asan...), not the library's
    return {n for n in names if not n.startswith("_")}


def declared(src, experimental):
    headers = ["seqmatch.h", "seqmatch_reader.h", "seqmatch_gzip.h"]
    if experimental:
        headers += ["seqmatch_dfa.h", "seqmatch_dist.h", "seqmatch_output.h"]
    text = "".join(f"#include <{h}>\n" for h in headers)
    cc = os.environ.get("CC", "cc")
    args = [cc, "-std=c11", "-E", "-P", "-I", os.path.join(src, "include"), "-x", "c", "-"]
    if experimental:
        args.insert(2, "-DSEQMATCH_EXPERIMENTAL")
    out = subprocess.run(args, input=text, check=True, capture_output=True, text=True).stdout
    return set(DECLARED.findall(out))


def unprefixed(archive):
    out = subprocess.run(["nm", "-g", "--defined-only", archive], check=True, capture_output=True, text=True).stdout
    names = {line.split()[-1] for line in out.splitlines() if len(line.split()) >= 3 and line.split()[1] in "TDBRVWi"}
    return sorted(n for n in names if not n.startswith(("sm_", "_")))


def soname(lib):
    out = subprocess.run(["readelf", "-d", lib], check=True, capture_output=True, text=True).stdout
    m = re.search(r"\(SONAME\).*\[(.*)\]", out)
    return m.group(1) if m else None


def read_list(path):
    kinds = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            kind, name = line.split()
            kinds[name] = kind
    return kinds


def main(argv):
    write = "--write" in argv
    argv = [a for a in argv if a != "--write"]
    archive = None
    if "--archive" in argv:
        i = argv.index("--archive")
        archive = argv[i + 1]
        del argv[i:i + 2]
    lib, src, major = argv[0], argv[1], argv[2]
    listed_path = os.path.join(src, "tests", "abi", "libseqmatch.symbols")
    have = exported(lib)
    stable_decl = declared(src, False)
    all_decl = declared(src, True)
    problems = []
    kinds = {s: ("stable" if s in stable_decl else "experimental") for s in have}
    if write:
        with open(listed_path, "w") as f:
            f.write("# Symbols libseqmatch.so exports (tests/abi/check.py; docs/api.md). A stable\n"
                    "# symbol is declared without SEQMATCH_EXPERIMENTAL: removing or changing it\n"
                    "# needs a new major version (SONAME); experimental ones may change in a minor.\n")
            f.write(f"# soname libseqmatch.so.{major}\n")
            for s in sorted(have, key=lambda s: (kinds[s] != "stable", s)):
                f.write(f"{kinds[s]} {s}\n")
        print(f"wrote {listed_path}: {len(have)} symbols")
        return 0
    listed = read_list(listed_path)
    for s in sorted(set(listed) - have):
        what = "a stable symbol: removing it needs a new major version (SONAME)" if listed[s] == "stable" else \
            "experimental"
        problems.append(f"{s} is listed but no longer exported ({what}); update tests/abi/libseqmatch.symbols")
    for s in sorted(have - set(listed)):
        problems.append(f"{s} is exported but not listed: add it to tests/abi/libseqmatch.symbols "
                        f"(as {kinds[s]}), or keep it hidden")
    for s in sorted(have - all_decl):
        problems.append(f"{s} is exported but declared in no public header (an internal function leaked)")
    for s in sorted(stable_decl - have):
        problems.append(f"{s} is declared in the stable part but not exported (a program calling it cannot link)")
    for s in sorted(set(listed) & have):
        if listed[s] != kinds[s]:
            problems.append(f"{s} is listed {listed[s]} but the headers make it {kinds[s]}")
    want = f"libseqmatch.so.{major}"
    got = soname(lib)
    if got != want:
        problems.append(f"SONAME is {got}, the policy wants {want} (libseqmatch.so.MAJOR)")
    with open(os.path.join(src, "tests", "abi", "libseqmatch.symbols")) as f:
        m = re.search(r"^# soname (\S+)", f.read(), re.M)
    if not m or m.group(1) != want:
        problems.append(f"the list is for {m.group(1) if m else '?'}, the library is {want}: a new major "
                        "version starts a new list")
    with open(os.path.join(src, "include", "seqmatch_common.h")) as f:
        m = re.search(r"#define SM_VERSION_MAJOR (\d+)", f.read())
    if not m or m.group(1) != major:
        problems.append(f"SM_VERSION_MAJOR is {m.group(1) if m else '?'}, the project's major version {major}")
    if archive:
        for s in unprefixed(archive):
            problems.append(f"{s} is a global name of {os.path.basename(archive)} without the sm_ prefix: "
                            "a program's own function of that name would clash with it when linked")
    stable = sum(1 for s in have if kinds[s] == "stable")
    print(f"{len(have)} exported symbols ({stable} stable, {len(have) - stable} experimental), SONAME {got}")
    for p in problems:
        print("FAIL: " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

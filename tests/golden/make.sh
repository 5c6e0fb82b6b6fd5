#!/usr/bin/env bash
# Writes the golden databases of one database format version with the
# seqmatch that writes it, and (for the current version) what searching
# them gives. tests/golden/README.md says which commit made each set.
#
# usage: tests/golden/make.sh SEQMATCH VERSION [expected]
#   SEQMATCH  a seqmatch whose `compile` writes format VERSION
#   VERSION   1, 2, 3, 4: which engines and options that version had
#   expected  also write NAME.expected (the output of check.sh's search)
#             with this SEQMATCH: only for the current version
set -euo pipefail
S=${1:?usage: make.sh SEQMATCH VERSION [expected]}
case "$S" in */*) S=$(cd "$(dirname "$S")" && pwd)/$(basename "$S") ;; esac
cd "$(dirname "$0")"
V=${2:?version}
mkdir -p "v$V"
# name | compile arguments | first version that had them
sets='automaton|-p patterns.fa --engine automaton|1
shiftand|-p patterns.fa --engine shiftand|1
text|--alphabet text -i -p words.txt|1
mismatch|-p patterns.fa -m 1 --engine mismatch|1
myers|-p patterns.fa -k 1 --engine myers|1
wavefront|-p patterns.fa -k 1 --report ends --engine wavefront|1
kmer|-e GAATTC -e GGATCC -e ACGTAC --engine kmer|1
pigeonhole_text|--alphabet text -e darkness -e waters -k 1 --engine pigeonhole|1
wumanber|-p patterns.fa --engine wumanber|2
pigeonhole|-e GACGCATAAAGATGAGACGC -e GTCACCTCCAATGACTAGGGCC -m 3 --engine pigeonhole|3
pam|-p guides.fa --pam NGG -m 1 --engine mismatch|3
guide|-p guides.fa --pam NGG -m 3 --engine guide|4
bulge|-p guides.fa --pam NGG -m 1 --dna-bulges 1|4
mixed|-p patterns.fa -e NNNNNNNNACGT -e ACGTACGTACGTACGTACGTACGTACGTAC|4'
while IFS='|' read -r name args since; do
  [ "$V" -ge "$since" ] || continue
  # shellcheck disable=SC2086
  "$S" compile $args -o "v$V/$name.smdb"
done <<< "$sets"
# Damaged copies of a current database, each breaking one rule of
# docs/format.md ("What a loader must do"), the checksum made right again
# where the rule broken is another.
if [ "$V" = 4 ]; then
  mkdir -p v4/damaged
  python3 - v4/automaton.smdb v4/damaged <<'PY'
import struct, sys, zlib
src, out = sys.argv[1], sys.argv[2]
good = bytearray(open(src, 'rb').read())
def fix(b):
    b[24:28] = b'\0\0\0\0'
    b[24:28] = struct.pack('<I', zlib.crc32(bytes(b)) & 0xffffffff)
    return b
def put(name, b):
    open(f"{out}/{name}.smdb", 'wb').write(bytes(b))
put('truncated', good[:200])
put('magic', fix(bytearray(b'SEQMATCX') + good[8:]))
b = bytearray(good); b[8:12] = struct.pack('<I', 5); put('version5', fix(b))
b = bytearray(good); b[12:16] = struct.pack('>I', 0x01020304); put('byte_order', fix(b))
b = bytearray(good); b[len(b) - 1] ^= 1; put('checksum', b)
b = bytearray(good) + bytearray(64); b[16:24] = struct.pack('<Q', len(b) - 64); put('size', fix(b))
b = bytearray(good); b[200] = 1; put('reserved', fix(b))
d = struct.unpack_from('<Q', good, 88)[0]
b = bytearray(good); struct.pack_into('<I', b, d, 99); put('kind', fix(b))
b = bytearray(good); struct.pack_into('<Q', b, d + 8, struct.unpack_from('<Q', good, d + 8)[0] + 8); put('section_offset', fix(b))
PY
fi
if [ "${3:-}" = expected ]; then
  for db in "v$V"/*.smdb "v$V"/damaged/*.smdb; do
    [ -e "$db" ] || continue
    bash check.sh "$S" "$db" > "${db%.smdb}.expected"
  done
fi

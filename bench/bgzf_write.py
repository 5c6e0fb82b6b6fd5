#!/usr/bin/env python3
"""bgzf_write.py IN OUT: writes IN as BGZF, as bgzip would (blocks of 65,280
bytes, deflate level 6, the empty end block), on every core; for machines
without bgzip (htslib's tabix package)."""
import multiprocessing, struct, sys, zlib

BLOCK = 0xff00

def block(data):
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    body = c.compress(data) + c.flush()
    header = struct.pack('<4BI2BH', 0x1f, 0x8b, 8, 4, 0, 0, 0xff, 6) + b'BC' + struct.pack('<HH', 2, len(body) + 25)
    return header + body + struct.pack('<II', zlib.crc32(data) & 0xffffffff, len(data))

def main():
    if len(sys.argv) != 3:
        sys.exit('usage: bgzf_write.py IN OUT')
    data = open(sys.argv[1], 'rb').read()
    pieces = [data[i:i + BLOCK] for i in range(0, len(data), BLOCK)]
    with multiprocessing.Pool() as pool, open(sys.argv[2], 'wb') as out:
        for b in pool.imap(block, pieces, chunksize=64):
            out.write(b)
        out.write(block(b''))

if __name__ == '__main__':
    main()

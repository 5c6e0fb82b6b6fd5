#!/usr/bin/env python3
"""Writes BGZF (as `bgzip` does: gzip members of at most 64 KiB of input, each saying its
size in a BC extra field, and the empty end-of-file block) on every core, for machines
without bgzip.

usage: bgzf_write.py INPUT OUTPUT
"""
import multiprocessing
import struct
import sys
import zlib

BLOCK = 65280  # bgzip's input bytes per block


def block(data):
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    body = c.compress(data) + c.flush()
    size = 18 + len(body) + 8
    head = struct.pack("<4BI2BH2BHH", 0x1F, 0x8B, 8, 4, 0, 0, 0xFF, 6, ord("B"), ord("C"), 2, size - 1)
    return head + body + struct.pack("<II", zlib.crc32(data) & 0xFFFFFFFF, len(data))


def pieces(path):
    with open(path, "rb") as f:
        while True:
            data = f.read(BLOCK)
            if not data:
                return
            yield data


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with multiprocessing.Pool() as pool, open(sys.argv[2], "wb") as out:
        for b in pool.imap(block, pieces(sys.argv[1]), chunksize=64):
            out.write(b)
        out.write(block(b""))


if __name__ == "__main__":
    main()

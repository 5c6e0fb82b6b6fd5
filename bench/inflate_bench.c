/* inflate_bench: how fast each well-kept gzip library inflates a file, on one thread, in the
 * way seqmatch's reader would call it. The reader's choice of library comes from this
 * (bench/results/history.md, "The feed").
 *
 * usage: inflate_bench [-r REPEATS] FILE.gz
 *
 *   zlib        inflate() streaming through 1 MiB output buffers (the reader before)
 *   isal        ISA-L's isal_inflate() streaming the same way (igzip)
 *   libdeflate  libdeflate_gzip_decompress() of each member whole (needs the member's size:
 *               BGZF blocks carry it; for plain gzip the whole output is allocated up front)
 *
 * FILE may be plain gzip, several members, or BGZF. Output: one line per library,
 * tab-separated key=value: lib, bytes (inflated), MBps (inflated bytes per second, median
 * of REPEATS runs, MB = 10^6), crc (CRC-32 of the output, which must agree).
 * Build: make -C bench inflate_bench
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <isa-l/igzip_lib.h>
#include <libdeflate.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#define OUT_CHUNK (1u << 20)

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void die(const char *what) {
    fprintf(stderr, "inflate_bench: %s\n", what);
    exit(2);
}

static uint8_t *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) die(strerror(errno));
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc((size_t)n);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) die("read");
    fclose(f);
    *len = (size_t)n;
    return buf;
}

static uint64_t run_zlib(const uint8_t *in, size_t len, uint8_t *out, uLong *crc) {
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, 15 + 32) != Z_OK) die("zlib init");
    z.next_in = (Bytef *)in;
    z.avail_in = (uInt)len;
    uint64_t total = 0;
    *crc = crc32(0, Z_NULL, 0);
    for (;;) {
        z.next_out = out;
        z.avail_out = OUT_CHUNK;
        int rc = inflate(&z, Z_NO_FLUSH);
        size_t got = OUT_CHUNK - z.avail_out;
        *crc = crc32(*crc, out, (uInt)got);
        total += got;
        if (rc == Z_STREAM_END) {
            if (z.avail_in == 0) break;
            inflateReset(&z); /* the next member */
        } else if (rc != Z_OK) {
            die("zlib: corrupt data");
        }
    }
    inflateEnd(&z);
    return total;
}

static uint64_t run_isal(const uint8_t *in, size_t len, uint8_t *out, uLong *crc) {
    struct inflate_state st;
    isal_inflate_init(&st);
    st.crc_flag = ISAL_GZIP;
    st.next_in = (uint8_t *)in;
    st.avail_in = (uint32_t)len;
    uint64_t total = 0;
    *crc = crc32(0, Z_NULL, 0);
    for (;;) {
        st.next_out = out;
        st.avail_out = OUT_CHUNK;
        int rc = isal_inflate(&st);
        size_t got = OUT_CHUNK - st.avail_out;
        *crc = crc32(*crc, out, (uInt)got);
        total += got;
        if (rc != ISAL_DECOMP_OK) die("isal: corrupt data");
        if (st.block_state == ISAL_BLOCK_FINISH) {
            if (st.avail_in == 0) break;
            const uint8_t *next = st.next_in;
            uint32_t left = st.avail_in;
            isal_inflate_reset(&st); /* the next member */
            st.crc_flag = ISAL_GZIP;
            st.next_in = (uint8_t *)next;
            st.avail_in = left;
        } else if (got == 0 && st.avail_in == 0) {
            die("isal: truncated");
        }
    }
    return total;
}

/* libdeflate: each member whole; a BGZF member says its size (BSIZE) and the
   output size is in its last 4 bytes; a plain member is the whole file. */
static uint64_t run_libdeflate(const uint8_t *in, size_t len, uint8_t *out, size_t out_cap, uLong *crc) {
    struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
    uint64_t total = 0;
    size_t pos = 0;
    *crc = crc32(0, Z_NULL, 0);
    while (pos < len) {
        size_t member = len - pos;
        if (len - pos >= 18 && (in[pos + 3] & 4) && in[pos + 12] == 'B' && in[pos + 13] == 'C')
            member = (size_t)(in[pos + 16] | in[pos + 17] << 8) + 1;
        size_t in_used = 0, out_len = 0;
        enum libdeflate_result rc =
            libdeflate_gzip_decompress_ex(d, in + pos, member, out, out_cap, &in_used, &out_len);
        if (rc != LIBDEFLATE_SUCCESS) die("libdeflate: corrupt data or output too small");
        *crc = crc32(*crc, out, (uInt)out_len);
        total += out_len;
        pos += in_used;
    }
    libdeflate_free_decompressor(d);
    return total;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    int repeats = 5, argi = 1;
    if (argc > 2 && strcmp(argv[1], "-r") == 0) repeats = atoi(argv[2]), argi = 3;
    if (argi >= argc || repeats < 1) die("usage: inflate_bench [-r REPEATS] FILE.gz");
    size_t len;
    uint8_t *in = slurp(argv[argi], &len);
    /* libdeflate needs room for a whole member: the gzip trailer's size of the last member
       bounds a single-member file; BGZF members are at most 64 KiB. */
    size_t out_cap = len >= 4 ? (size_t)(in[len - 4] | in[len - 3] << 8 | in[len - 2] << 16 | (size_t)in[len - 1] << 24) : 0;
    if (out_cap < (1u << 17)) out_cap = 1u << 17;
    uint8_t *out = malloc(out_cap > OUT_CHUNK ? out_cap : OUT_CHUNK);
    if (!out) die("out of memory");
    const char *libs[3] = {"zlib", "isal", "libdeflate"};
    for (int l = 0; l < 3; l++) {
        double *t = calloc((size_t)repeats, sizeof *t);
        uint64_t bytes = 0;
        uLong crc = 0;
        for (int r = 0; r < repeats; r++) {
            double t0 = now();
            bytes = l == 0 ? run_zlib(in, len, out, &crc)
                    : l == 1 ? run_isal(in, len, out, &crc)
                             : run_libdeflate(in, len, out, out_cap, &crc);
            t[r] = now() - t0;
        }
        qsort(t, (size_t)repeats, sizeof *t, cmp_double);
        printf("lib=%s\tbytes=%llu\tMBps=%.0f\tcrc=%08lx\n", libs[l], (unsigned long long)bytes,
               bytes / t[repeats / 2] / 1e6, crc);
        free(t);
    }
    free(in);
    free(out);
    return 0;
}

/* BGZF blocks inflated on a GPU (cuda_device.h, sm_cuda_inflate_*) by
 * NVIDIA's nvCOMP, opened at run time like the module itself: nothing here
 * needs nvCOMP to build, and a machine without it inflates on its CPU.
 *
 * One run: the blocks' deflate payloads are packed into pinned memory and
 * copied up; nvCOMP inflates each into a slot of 64 KiB, takes each slot's
 * CRC32, and a kernel packs the slots end to end; the packed bytes, sizes,
 * statuses and CRCs come back. A block is used only when nvCOMP says it
 * decoded, its size is its ISIZE and its CRC32 its trailer's: nvCOMP does
 * not promise to detect corrupt input, so the check is ours. Any block that
 * fails sends the whole run back to the caller's own inflater, which words
 * the error as for any file.
 *
 * nvCOMP's C interface is declared below from its documented ABI (major
 * version 6), and checked against its headers where they are at hand. */
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <pthread.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backends/cuda/cuda_device.h"
#include "backends/module_open.h"
#include "engines/cuda_engine.cuh"

#define CHECK SM_CUDA_CHECK
#define SLOT_BYTES 65536u /* a BGZF block inflates to at most this */
#define PACK_ALIGN 8u     /* payloads and arrays in the packed copy */

/* ------------------------------------------------ nvCOMP's interface */

typedef int nv_status; /* nvcompStatus_t: 0 is success */
typedef struct {
    int backend; /* 0: nvCOMP chooses (the CUDA kernels on a GPU without a decompression engine) */
    int sort_before_hw_decompress;
    char reserved[56];
} nv_deflate_opts;
typedef struct {
    size_t input, output, temp;
} nv_alignments;
typedef struct {
    uint32_t poly, init;
    bool ref_in, ref_out;
    uint32_t xorout;
    char reserved[16];
} nv_crc_spec;
typedef struct {
    int kernel_kind;
    int32_t bytes_per_read, blocks_per_msg;
    char reserved[20];
} nv_crc_conf;
typedef struct {
    nv_crc_spec spec;
    nv_crc_conf conf;
    char reserved[64];
} nv_crc_opts;
typedef struct {
    uint32_t version, cudart_version;
} nv_properties;

typedef nv_status (*nv_properties_fn)(nv_properties *);
typedef nv_status (*nv_align_fn)(nv_deflate_opts, nv_alignments *);
typedef nv_status (*nv_temp_fn)(size_t, size_t, nv_deflate_opts, size_t *, size_t, cudaStream_t);
typedef nv_status (*nv_inflate_fn)(const void *const *, const size_t *, const size_t *, size_t *, size_t, void *const,
                                   size_t, void *const *, nv_deflate_opts, nv_status *, cudaStream_t);
typedef nv_status (*nv_crc_conf_fn)(const size_t *, size_t, nv_crc_conf *, size_t, cudaStream_t);
typedef nv_status (*nv_crc_fn)(const void *const *, const size_t *, size_t, uint32_t *, nv_crc_opts, int, nv_status *,
                               cudaStream_t);

static struct {
    nv_align_fn align;
    nv_temp_fn temp;
    nv_inflate_fn inflate;
    nv_crc_conf_fn crc_conf;
    nv_crc_fn crc;
    char missing[256];
} nv;
static pthread_once_t nv_once = PTHREAD_ONCE_INIT;

static void nv_load(void) {
    char error[200] = "";
    void *h = sm_module_open(SM_NVCOMP_FILE, "SEQMATCH_NVCOMP", SM_INSTALL_LIBDIR, SM_INSTALL_FULL_LIBDIR, 1,
                             RTLD_NOW | RTLD_LOCAL, error, sizeof error);
    if (!h) {
        snprintf(nv.missing, sizeof nv.missing, "nvCOMP (" SM_NVCOMP_FILE ") could not be loaded: %s", error);
        return;
    }
    nv_properties_fn props = (nv_properties_fn)dlsym(h, "nvcompGetProperties");
    nv_properties p = {0, 0};
    if (!props || props(&p) != 0 || p.version / 1000 != 6) {
        snprintf(nv.missing, sizeof nv.missing, "the nvCOMP found is not of version 6 (%u)", p.version);
        return;
    }
    nv.align = (nv_align_fn)dlsym(h, "nvcompBatchedDeflateDecompressGetRequiredAlignments");
    nv.temp = (nv_temp_fn)dlsym(h, "nvcompBatchedDeflateDecompressGetTempSize");
    nv.inflate = (nv_inflate_fn)dlsym(h, "nvcompBatchedDeflateDecompressAsync");
    nv.crc_conf = (nv_crc_conf_fn)dlsym(h, "nvcompBatchedCRC32GetHeuristicConf");
    nv.crc = (nv_crc_fn)dlsym(h, "nvcompBatchedCRC32Async");
    if (!nv.align || !nv.temp || !nv.inflate || !nv.crc_conf || !nv.crc) {
        snprintf(nv.missing, sizeof nv.missing, "the nvCOMP found lacks the batched deflate or CRC32 calls");
        nv.inflate = NULL;
    }
}

/* ------------------------------------------------------- the inflater */

/* The per-block arrays, in this order, at the start of the packed copy
   (pinned) and of its image on the device. */
typedef struct {
    const void **in;   /* payloads (device addresses) */
    size_t *in_bytes;
    size_t *out_cap;   /* each block's ISIZE */
    void **slot;       /* each block's slot */
    size_t *offset;    /* where each block's bytes go in the packed output, and the total after the last */
} block_arrays;

struct sm_cuda_inflater {
    int device;
    cudaStream_t stream;
    cudaEvent_t done;    /* waited for without spinning: the readers need the cores */
    size_t max_blocks, max_raw, max_out;
    size_t arrays_bytes, up_bytes, temp_bytes;
    uint8_t *host_up;    /* pinned: the arrays, then the payloads */
    uint8_t *host_down;  /* pinned: sizes, statuses, CRCs, then the packed output */
    uint8_t *dev_up, *dev_slots, *dev_down, *dev_temp;
    size_t down_head;    /* bytes of host_down before the output */
    size_t *dev_sizes;
    nv_status *dev_status;
    uint32_t *dev_crc;
    nv_crc_conf crc_conf;
    uint32_t *want_crc;  /* each block's CRC32 as its trailer says */
};

static size_t round_up(size_t n, size_t a) { return (n + a - 1) / a * a; }

static block_arrays arrays_at(uint8_t *base, size_t n) {
    block_arrays a;
    size_t step = round_up(n * sizeof(size_t), PACK_ALIGN);
    a.in = (const void **)base;
    a.in_bytes = (size_t *)(base + step);
    a.out_cap = (size_t *)(base + 2 * step);
    a.slot = (void **)(base + 3 * step);
    a.offset = (size_t *)(base + 4 * step); /* n + 1 entries */
    return a;
}

/* Packs the slots' first out_cap bytes end to end: a block of threads a slot. */
__global__ void pack_slots(const block_arrays a, uint8_t *out) {
    size_t b = blockIdx.x;
    const uint8_t *from = (const uint8_t *)a.slot[b];
    uint8_t *to = out + a.offset[b];
    for (size_t i = threadIdx.x; i < a.out_cap[b]; i += blockDim.x) to[i] = from[i];
}

extern "C" void sm_cuda_inflate_close(sm_cuda_inflater *f) {
    if (!f) return;
    cudaSetDevice(f->device);
    if (f->stream) cudaStreamSynchronize(f->stream);
    sm_cuda_buffer_put(-1, f->host_up, f->up_bytes);
    sm_cuda_buffer_put(-1, f->host_down, f->down_head + f->max_out);
    sm_cuda_buffer_put(f->device, f->dev_up, f->up_bytes);
    sm_cuda_buffer_put(f->device, f->dev_slots, f->max_blocks * SLOT_BYTES);
    sm_cuda_buffer_put(f->device, f->dev_down, f->down_head + f->max_out);
    if (f->dev_temp) cudaFree(f->dev_temp);
    if (f->done) cudaEventDestroy(f->done);
    if (f->stream) cudaStreamDestroy(f->stream);
    cudaGetLastError();
    free(f->want_crc);
    free(f);
}

extern "C" int sm_cuda_inflate_open(int device, size_t max_blocks, size_t max_raw, size_t max_out,
                                    sm_cuda_inflater **out, char *msg) {
    *out = NULL;
    pthread_once(&nv_once, nv_load);
    if (!nv.inflate) {
        snprintf(msg, 256, "%s", nv.missing);
        return -1;
    }
    if (max_blocks == 0 || max_raw == 0 || max_out == 0) {
        snprintf(msg, 256, "an inflater of no size");
        return -1;
    }
    CHECK(cudaSetDevice(device), "selecting the device");
    sm_cuda_inflater *f = (sm_cuda_inflater *)calloc(1, sizeof *f);
    if (f) f->want_crc = (uint32_t *)malloc(max_blocks * sizeof *f->want_crc);
    if (!f || !f->want_crc) {
        free(f);
        snprintf(msg, 256, "out of memory");
        return -1;
    }
    f->device = device;
    f->max_blocks = max_blocks;
    f->max_raw = max_raw;
    f->max_out = max_out;
    f->arrays_bytes = 5 * round_up((max_blocks + 1) * sizeof(size_t), PACK_ALIGN);
    f->up_bytes = f->arrays_bytes + max_raw + max_blocks * PACK_ALIGN;
    /* back: sizes, statuses, CRCs (each rounded), then the output */
    f->down_head = round_up(max_blocks * sizeof(size_t), 64) + round_up(max_blocks * sizeof(nv_status), 64) +
                   round_up(max_blocks * sizeof(uint32_t), 64);
    nv_deflate_opts opts;
    memset(&opts, 0, sizeof opts);
    nv_alignments al = {1, 1, 1};
    cudaError_t e = cudaStreamCreateWithFlags(&f->stream, cudaStreamNonBlocking);
    if (e == cudaSuccess) e = cudaEventCreateWithFlags(&f->done, cudaEventBlockingSync | cudaEventDisableTiming);
    int bad_nv = 0;
    if (e == cudaSuccess) {
        bad_nv = nv.align(opts, &al) != 0 || al.input > PACK_ALIGN || SLOT_BYTES % (al.output ? al.output : 1) != 0 ||
                 nv.temp(max_blocks, SLOT_BYTES, opts, &f->temp_bytes, max_out, f->stream) != 0 ||
                 nv.crc_conf(NULL, max_blocks, &f->crc_conf, SLOT_BYTES, f->stream) != 0;
    }
    if (e == cudaSuccess && !bad_nv) e = sm_cuda_buffer_get(-1, f->up_bytes, (void **)&f->host_up);
    /* (the output comes back through pinned memory: copied straight to the
       caller's pageable memory it came at under half the rate) */
    if (e == cudaSuccess && !bad_nv) e = sm_cuda_buffer_get(-1, f->down_head + max_out, (void **)&f->host_down);
    if (e == cudaSuccess && !bad_nv) e = sm_cuda_buffer_get(device, f->up_bytes, (void **)&f->dev_up);
    if (e == cudaSuccess && !bad_nv) e = sm_cuda_buffer_get(device, max_blocks * SLOT_BYTES, (void **)&f->dev_slots);
    if (e == cudaSuccess && !bad_nv) e = sm_cuda_buffer_get(device, f->down_head + max_out, (void **)&f->dev_down);
    if (e == cudaSuccess && !bad_nv && f->temp_bytes) e = cudaMalloc((void **)&f->dev_temp, f->temp_bytes);
    if (e != cudaSuccess || bad_nv) {
        sm_cuda_inflate_close(f);
        if (bad_nv) {
            snprintf(msg, 256, "nvCOMP refused the inflater's sizes or alignments");
            return -1;
        }
        return sm_cuda_fail(msg, "making the inflater's buffers", e);
    }
    f->dev_sizes = (size_t *)f->dev_down;
    f->dev_status = (nv_status *)(f->dev_down + round_up(max_blocks * sizeof(size_t), 64));
    f->dev_crc = (uint32_t *)((uint8_t *)f->dev_status + round_up(max_blocks * sizeof(nv_status), 64));
    *out = f;
    return 0;
}

static uint32_t le32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The deflate payload of the BGZF block at p (n bytes available): its
   offset and size, the block's size, its CRC32 and ISIZE. 0 when it is not
   a block of the plain BGZF shape (gzip flags other than FEXTRA, no BC
   field, cut short). */
static int block_at(const uint8_t *p, size_t n, size_t *from, size_t *len, size_t *bsize, uint32_t *crc,
                    uint32_t *isize) {
    if (n < 26 || p[0] != 0x1f || p[1] != 0x8b || p[2] != 8 || p[3] != 4) return 0;
    size_t xlen = (size_t)p[10] | (size_t)p[11] << 8;
    size_t size = 0;
    for (size_t at = 12; at + 4 <= 12 + xlen && at + 4 <= n;) {
        size_t slen = (size_t)p[at + 2] | (size_t)p[at + 3] << 8;
        if (p[at] == 'B' && p[at + 1] == 'C' && slen == 2 && at + 6 <= 12 + xlen) {
            size = ((size_t)p[at + 4] | (size_t)p[at + 5] << 8) + 1;
            break;
        }
        at += 4 + slen;
    }
    if (size < 12 + xlen + 8 + 2 || size > n) return 0;
    *from = 12 + xlen;
    *len = size - 12 - xlen - 8;
    *bsize = size;
    *crc = le32(p + size - 8);
    *isize = le32(p + size - 4);
    return *isize <= SLOT_BYTES;
}

extern "C" int sm_cuda_inflate_run(sm_cuda_inflater *f, const uint8_t *raw, size_t raw_len, uint8_t *out, size_t cap,
                                   size_t *out_len, char *msg) {
    *out_len = 0;
    /* the blocks, packed: their payloads 8-aligned after the arrays */
    block_arrays host = arrays_at(f->host_up, f->max_blocks + 1);
    block_arrays dev = arrays_at(f->dev_up, f->max_blocks + 1);
    size_t n = 0, up = f->arrays_bytes, total = 0;
    int ok = 1;
    for (size_t at = 0; at < raw_len && ok;) {
        size_t from, len, bsize;
        uint32_t crc, isize;
        if (!block_at(raw + at, raw_len - at, &from, &len, &bsize, &crc, &isize) || n == f->max_blocks ||
            up + len > f->up_bytes || total + isize > f->max_out || total + isize > cap) {
            ok = 0;
            break;
        }
        if (isize > 0) {
            memcpy(f->host_up + up, raw + at + from, len);
            host.in[n] = f->dev_up + up;
            host.in_bytes[n] = len;
            host.out_cap[n] = isize;
            host.slot[n] = f->dev_slots + n * SLOT_BYTES;
            host.offset[n] = total;
            f->want_crc[n] = crc;
            n++;
            up = round_up(up + len, PACK_ALIGN);
            total += isize;
        } else if (crc != 0 || !((len == 2 && memcmp(raw + at + from, "\x03\x00", 2) == 0) ||
                                 (len == 5 && memcmp(raw + at + from, "\x01\x00\x00\xff\xff", 5) == 0))) {
            /* an empty block (the end-of-file marker) in either of its usual forms (fixed codes,
               stored) inflates to nothing here; any other goes to the caller */
            ok = 0;
        }
        at += bsize;
    }
    if (!ok || n == 0) return ok; /* (runs of empty blocks only: nothing to inflate) */
    host.offset[n] = total;
    /* the arrays at the fixed places of a run of max_blocks + 1 blocks */
    cudaError_t e = cudaSetDevice(f->device);
    if (e == cudaSuccess) e = cudaMemcpyAsync(f->dev_up, f->host_up, up, cudaMemcpyHostToDevice, f->stream);
    nv_deflate_opts opts;
    memset(&opts, 0, sizeof opts);
    nv_crc_opts crc_opts;
    memset(&crc_opts, 0, sizeof crc_opts);
    const nv_crc_spec gzip_crc = {0x04C11DB7u, 0xFFFFFFFFu, true, true, 0xFFFFFFFFu, {0}};
    crc_opts.spec = gzip_crc;
    crc_opts.conf = f->crc_conf;
    nv_status s = 0;
    if (e == cudaSuccess)
        s = nv.inflate(dev.in, dev.in_bytes, dev.out_cap, f->dev_sizes, n, f->dev_temp, f->temp_bytes, dev.slot, opts,
                       f->dev_status, f->stream);
    /* the CRC over each slot's ISIZE bytes: a block inflated short fails its size check below */
    if (e == cudaSuccess && s == 0)
        s = nv.crc((const void *const *)dev.slot, dev.out_cap, n, f->dev_crc, crc_opts, 0, NULL, f->stream);
    uint8_t *dev_packed = f->dev_down + f->down_head;
    if (e == cudaSuccess && s == 0) {
        pack_slots<<<(unsigned)n, 256, 0, f->stream>>>(dev, dev_packed);
        e = cudaGetLastError();
    }
    if (e == cudaSuccess && s == 0)
        e = cudaMemcpyAsync(f->host_down, f->dev_down, f->down_head, cudaMemcpyDeviceToHost, f->stream);
    if (e == cudaSuccess && s == 0)
        e = cudaMemcpyAsync(f->host_down + f->down_head, dev_packed, total, cudaMemcpyDeviceToHost, f->stream);
    if (e == cudaSuccess) e = cudaEventRecord(f->done, f->stream);
    if (e == cudaSuccess) e = cudaEventSynchronize(f->done);
    if (e != cudaSuccess) {
        return sm_cuda_fail(msg, "inflating BGZF blocks", e);
    }
    if (s != 0) {
        snprintf(msg, 256, "nvCOMP: status %d", s);
        return -1;
    }
    const size_t *sizes = (const size_t *)f->host_down;
    const nv_status *status = (const nv_status *)(f->host_down + round_up(f->max_blocks * sizeof(size_t), 64));
    const uint32_t *crcs = (const uint32_t *)((const uint8_t *)status + round_up(f->max_blocks * sizeof(nv_status), 64));
    for (size_t i = 0; i < n && ok; i++)
        ok = status[i] == 0 && sizes[i] == host.out_cap[i] && crcs[i] == f->want_crc[i];
    if (!ok) return 0;
    memcpy(out, f->host_down + f->down_head, total);
    *out_len = total;
    return 1;
}

/* How a page-cached FASTA file can reach a GPU with the fewest crossings of
 * host memory (bench/results/history.md, "The GPU feed: the page cache
 * pinned, the text stripped on the device, fewer bytes written"):
 *
 *   gpu_map_probe FILE [THREADS] [WINDOW_MiB]
 *     the file's mapping registered with CUDA (whole, or in windows by
 *     THREADS threads) and copied by the copy engine straight from the page
 *     cache, against a host thread's copy into pinned buffers; then the
 *     device stripping FASTA itself (header lines and line breaks out), its
 *     kept bytes checked against a plain loop on the host
 *   gpu_map_probe FILE pieces
 *     the whole mapping registered in 1-16 pieces by as many threads at once
 *   gpu_map_probe FILE pack THREADS WINDOW_KiB
 *     what writing a half or a quarter of the bytes (the text packed) to the
 *     pinned buffers would give
 *
 * make -C bench gpu_map_probe   (nvcc -O3 -arch=sm_90 -Xcompiler -mavx2) */
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <cuda_runtime.h>
#include <fcntl.h>
#include <immintrin.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

#define CK(x)                                                                                                          \
    do {                                                                                                               \
        cudaError_t e_ = (x);                                                                                          \
        if (e_ != cudaSuccess) {                                                                                       \
            printf("  %s: %s\n", #x, cudaGetErrorString(e_));                                                          \
        }                                                                                                              \
    } while (0)

static const char *map_base;
static size_t map_len, window;
static int threads;
static unsigned reg_flags;
static int mode; /* 0 registered windows, 1 pinned staging */

/* A thread's way to the device: its stream, two device windows, two
   events (one a window) and, when asked, two pinned host windows. */
struct lane {
    cudaStream_t stream;
    char *device;
    char *pinned[2];
    cudaEvent_t done[2];
};

static void lane_open(struct lane *l, int with_pinned) {
    memset(l, 0, sizeof *l);
    cudaStreamCreateWithFlags(&l->stream, cudaStreamNonBlocking);
    cudaMalloc(&l->device, 2 * window);
    for (int b = 0; b < 2; b++) {
        cudaEventCreateWithFlags(&l->done[b], cudaEventDisableTiming);
        if (with_pinned)
            cudaMallocHost(&l->pinned[b], window);
    }
}

static void lane_close(struct lane *l) {
    cudaStreamSynchronize(l->stream);
    for (int b = 0; b < 2; b++) {
        if (l->pinned[b])
            cudaFreeHost(l->pinned[b]);
        cudaEventDestroy(l->done[b]);
    }
    cudaFree(l->device);
    cudaStreamDestroy(l->stream);
}

struct worker {
    int id;
    double busy_register, busy_copy, busy_unregister;
    int failures;
};

static void *run_worker(void *arg) {
    struct worker *w = (struct worker *)arg;
    struct lane l;
    lane_open(&l, mode == 1);
    const char *held[2] = {0, 0};
    int slot = 0;
    for (size_t off = (size_t)w->id * window; off < map_len; off += (size_t)threads * window) {
        size_t n = map_len - off < window ? map_len - off : window;
        /* Wait for the copy that last used this slot, release its window. */
        cudaEventSynchronize(l.done[slot]);
        if (held[slot]) {
            double t = now();
            cudaHostUnregister((void *)held[slot]);
            w->busy_unregister += now() - t;
            held[slot] = 0;
        }
        const char *src = map_base + off;
        if (mode == 0) {
            /* Registration wants whole pages. */
            uintptr_t a = (uintptr_t)src & ~(uintptr_t)4095;
            size_t len = ((uintptr_t)src + n + 4095 - a) & ~(size_t)4095;
            double t = now();
            cudaError_t e = cudaHostRegister((void *)a, len, reg_flags);
            w->busy_register += now() - t;
            if (e != cudaSuccess) {
                if (w->failures++ == 0)
                    printf("  register: %s\n", cudaGetErrorString(e));
                cudaGetLastError();
                continue;
            }
            held[slot] = (const char *)a;
        } else {
            double t = now();
            memcpy(l.pinned[slot], src, n);
            w->busy_register += now() - t;
            src = l.pinned[slot];
        }
        double t = now();
        cudaMemcpyAsync(l.device + slot * window, src, n, cudaMemcpyHostToDevice, l.stream);
        cudaEventRecord(l.done[slot], l.stream);
        w->busy_copy += now() - t;
        slot ^= 1;
    }
    cudaStreamSynchronize(l.stream);
    for (int b = 0; b < 2; b++)
        if (held[b])
            cudaHostUnregister((void *)held[b]);
    lane_close(&l);
    return 0;
}

static void feed(const char *label, int m, unsigned flags, int t, size_t win) {
    mode = m;
    reg_flags = flags;
    threads = t;
    window = win;
    pthread_t th[64];
    struct worker w[64];
    double t0 = now();
    for (int i = 0; i < t; i++) {
        memset(&w[i], 0, sizeof w[i]);
        w[i].id = i;
        pthread_create(&th[i], 0, run_worker, &w[i]);
    }
    double reg = 0, cp = 0, unreg = 0;
    int fails = 0;
    for (int i = 0; i < t; i++) {
        pthread_join(th[i], 0);
        reg += w[i].busy_register;
        cp += w[i].busy_copy;
        unreg += w[i].busy_unregister;
        fails += w[i].failures;
    }
    double s = now() - t0;
    printf("%-28s threads %2d window %4zu MiB: %.3f s, %.1f GB/s "
           "(summed: %s %.3f s, copy calls %.3f s, unregister %.3f s)%s\n",
           label, t, win >> 20, s, map_len / s / 1e9, m == 0 ? "register" : "memcpy", reg, cp, unreg,
           fails ? " FAILED windows" : "");
}

/* The state a byte leaves: 1 inside a header line, 0 in sequence lines.
 * Per byte: '>' at a line's start sets it, '\n' clears it, others keep it. */
struct last_set {
    __device__ signed char operator()(signed char a, signed char b) const { return b >= 0 ? b : a; }
};

/* A batch's first byte takes the state the previous batch left (carry). */
__global__ void mark_events(const unsigned char *text, size_t n, int file_start, const signed char *carry,
                            signed char *event) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        unsigned char c = text[i];
        signed char e = -1;
        if (c == '\n')
            e = 0;
        else if (c == '>' && ((i == 0 && file_start) || text[i - 1] == '\n'))
            e = 1;
        if (i == 0 && e < 0)
            e = file_start ? 0 : *carry;
        event[i] = e;
    }
}

__global__ void mark_kept(const unsigned char *text, size_t n, const signed char *state, unsigned char *kept) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        unsigned char c = text[i];
        kept[i] = state[i] == 0 && c != '\n' && c != '\r';
    }
}

/* The whole file resident, stripped on the device in batches. */
static void strip_on_device(size_t batch) {
    size_t n = map_len < ((size_t)4 << 30) ? map_len : ((size_t)4 << 30);
    unsigned char *text, *out;
    signed char *event, *state;
    size_t *count;
    CK(cudaMalloc(&text, n));
    CK(cudaMalloc(&out, batch));
    CK(cudaMalloc(&event, batch));
    CK(cudaMalloc(&state, batch));
    size_t batches = (n + batch - 1) / batch;
    CK(cudaMalloc(&count, batches * sizeof *count));
    CK(cudaMemcpy(text, map_base, n, cudaMemcpyHostToDevice));
    void *tmp = 0;
    size_t tmp_scan = 0, tmp_select = 0;
    cub::DeviceScan::InclusiveScan(0, tmp_scan, event, state, last_set(), (int)batch);
    unsigned char *kept;
    CK(cudaMalloc(&kept, batch));
    cub::DeviceSelect::Flagged(0, tmp_select, text, kept, out, count, (int)batch);
    CK(cudaMalloc(&tmp, tmp_scan > tmp_select ? tmp_scan : tmp_select));
    for (int round = 0; round < 3; round++) {
        cudaEvent_t a, b;
        cudaEventCreate(&a);
        cudaEventCreate(&b);
        cudaEventRecord(a);
        size_t m = 0;
        for (size_t off = 0, k = 0; off < n; off += batch, k++) {
            const signed char *carry = off ? state + m - 1 : state;
            m = n - off < batch ? n - off : batch;
            mark_events<<<1024, 512>>>(text + off, m, off == 0, carry, event);
            size_t ts = tmp_scan;
            cub::DeviceScan::InclusiveScan(tmp, ts, event, state, last_set(), (int)m);
            mark_kept<<<1024, 512>>>(text + off, m, state, kept);
            size_t tsel = tmp_select;
            cub::DeviceSelect::Flagged(tmp, tsel, text + off, kept, out, count + k, (int)m);
        }
        cudaEventRecord(b);
        cudaEventSynchronize(b);
        float ms;
        cudaEventElapsedTime(&ms, a, b);
        printf("strip on the device, batches of %zu MiB: %.1f GB/s of file "
               "(%.2f GB resident)\n",
               batch >> 20, n / (ms * 1e-3) / 1e9, n / 1e9);
    }
    /* The bytes kept, against a plain loop on the host. */
    size_t *counts = (size_t *)malloc(batches * sizeof *counts), device_kept = 0;
    CK(cudaMemcpy(counts, count, batches * sizeof *counts, cudaMemcpyDeviceToHost));
    for (size_t k = 0; k < batches; k++)
        device_kept += counts[k];
    size_t host_kept = 0;
    int header = 0;
    for (size_t i = 0; i < n; i++) {
        char c = map_base[i];
        if (c == '\n')
            header = 0;
        else if (c == '>' && (i == 0 || map_base[i - 1] == '\n'))
            header = 1;
        else if (!header && c != '\r')
            host_kept++;
    }
    printf("sequence bytes kept on the device %zu, by the host %zu: %s\n", device_kept, host_kept,
           device_kept == host_kept ? "the same" : "DIFFERENT");
    free(counts);
    cudaFree(kept);
    CK(cudaGetLastError());
    cudaFree(tmp);
    cudaFree(text);
    cudaFree(out);
    cudaFree(event);
    cudaFree(state);
    cudaFree(count);
}

/* The whole mapping registered in P pieces by P threads at once, after its
 * page tables are filled (or not) by 16 threads. */
struct piece {
    const char *base;
    size_t len;
    double seconds;
    int err;
    int populate;
};

static void *register_piece(void *arg) {
    struct piece *p = (struct piece *)arg;
    double t = now();
    if (p->populate)
        p->err = madvise((void *)p->base, p->len, 22 /* MADV_POPULATE_READ */);
    else
        p->err = cudaHostRegister((void *)p->base, p->len, cudaHostRegisterReadOnly) != cudaSuccess;
    p->seconds = now() - t;
    return 0;
}

static void *unregister_piece(void *arg) {
    struct piece *p = (struct piece *)arg;
    double t = now();
    cudaHostUnregister((void *)p->base);
    p->seconds = now() - t;
    return 0;
}

static double in_pieces(int count, int populate, void *(*fn)(void *)) {
    struct piece pc[64];
    pthread_t th[64];
    size_t whole = map_len & ~(size_t)4095;
    size_t step = (whole / count + 4095) & ~(size_t)4095;
    double t = now();
    int n = 0;
    for (size_t off = 0; off < whole; off += step, n++) {
        pc[n].base = map_base + off;
        pc[n].len = whole - off < step ? whole - off : step;
        pc[n].populate = populate;
        pthread_create(&th[n], 0, fn, &pc[n]);
    }
    int errs = 0;
    for (int i = 0; i < n; i++) {
        pthread_join(th[i], 0);
        errs += pc[i].err;
    }
    double s = now() - t;
    if (errs)
        printf("  %d pieces failed\n", errs);
    return s;
}

static void pieces_probe(void) {
    int counts[] = {1, 2, 4, 8, 16};
    for (int round = 0; round < 2; round++)
        for (int c = 0; c < 5; c++) {
            double reg = in_pieces(counts[c], 0, register_piece);
            double unreg = in_pieces(counts[c], 0, unregister_piece);
            printf("register in %2d pieces at once: %.3f s (%.1f GB/s), "
                   "unregister %.3f s\n",
                   counts[c], reg, map_len / reg / 1e9, unreg);
        }
    /* Fresh mappings: their page tables empty, then filled by 16 threads. */
    for (int c = 0; c < 5; c++) {
        munmap((void *)map_base, map_len);
        int fd = open(getenv("PROBE_FILE"), O_RDONLY);
        map_base = (const char *)mmap(0, map_len, PROT_READ, MAP_SHARED, fd, 0);
        close(fd);
        double fresh = in_pieces(counts[c], 0, register_piece);
        in_pieces(counts[c], 0, unregister_piece);
        double pop = in_pieces(16, 1, register_piece);
        double reg = in_pieces(counts[c], 0, register_piece);
        in_pieces(counts[c], 0, unregister_piece);
        printf("fresh mapping, %2d pieces: register %.3f s; page tables "
               "filled by 16 threads %.3f s, then register %.3f s\n",
               counts[c], fresh, pop, reg);
    }
}

/* What halving or quartering the bytes a host thread writes and the copy
 * engine reads would give: each thread reads its windows of the mapping,
 * writes them to its two pinned buffers whole (1), as nibbles (2) or as
 * 2-bit codes (4) (the codes are a stand-in: the cost is what counts), and
 * copies them to the device; or first writes them to ordinary memory (two
 * buffers a thread, or one) and packs them from there, as a backend that
 * packed each batch at its launch would. */
static int pack_factor, staged;

__host__ static size_t pack_window(unsigned char *out, const unsigned char *in, size_t n) {
    if (pack_factor == 1) {
        memcpy(out, in, n);
        return n;
    }
    size_t i = 0, o = 0;
    const __m256i low3 = _mm256_set1_epi8(7), pair = _mm256_set1_epi16(0x1001);
    const __m256i quad = _mm256_set1_epi16(0x0401);
    for (; i + 64 <= n; i += 64) {
        __m256i a = _mm256_loadu_si256((const __m256i *)(in + i));
        __m256i b = _mm256_loadu_si256((const __m256i *)(in + i + 32));
        a = _mm256_and_si256(_mm256_srli_epi16(a, 1), low3);
        b = _mm256_and_si256(_mm256_srli_epi16(b, 1), low3);
        __m256i pa = _mm256_maddubs_epi16(a, pair), pb = _mm256_maddubs_epi16(b, pair);
        __m256i nib = _mm256_packus_epi16(pa, pb);
        if (pack_factor == 2) {
            _mm256_storeu_si256((__m256i *)(out + o), nib);
            o += 32;
        } else {
            __m256i q = _mm256_maddubs_epi16(_mm256_and_si256(nib, _mm256_set1_epi8(0x33)), quad);
            __m256i z = _mm256_packus_epi16(q, q);
            _mm_storeu_si128((__m128i *)(out + o), _mm256_castsi256_si128(_mm256_permute4x64_epi64(z, 0x08)));
            o += 16;
        }
    }
    return o;
}

struct packer {
    int id;
    double busy_pack;
};

static void *run_packer(void *arg) {
    struct packer *w = (struct packer *)arg;
    struct lane l;
    lane_open(&l, 1);
    unsigned char *plain[2];
    for (int b = 0; b < 2; b++) {
        plain[b] = (unsigned char *)aligned_alloc(4096, window + 64);
        memset(plain[b], 0, window);
    }
    int slot = 0;
    for (size_t off = (size_t)w->id * window; off < map_len; off += (size_t)threads * window) {
        size_t n = map_len - off < window ? map_len - off : window;
        cudaEventSynchronize(l.done[slot]);
        double t = now();
        const unsigned char *from = (const unsigned char *)map_base + off;
        if (staged) {
            /* The reader's bytes land in ordinary memory, packed from there. */
            memcpy(plain[staged == 2 ? 0 : slot], from, n);
            from = plain[staged == 2 ? 0 : slot];
        }
        size_t m = pack_window((unsigned char *)l.pinned[slot], from, n);
        w->busy_pack += now() - t;
        cudaMemcpyAsync(l.device + slot * window, l.pinned[slot], m, cudaMemcpyHostToDevice, l.stream);
        cudaEventRecord(l.done[slot], l.stream);
        slot ^= 1;
    }
    lane_close(&l);
    for (int b = 0; b < 2; b++)
        free(plain[b]);
    return 0;
}

static void pack_probe(int t, size_t win) {
    threads = t;
    window = win;
    /* {the share written, through plain buffers: 0 none, 1 two, 2 one} */
    static const int variants[][2] = {{1, 0}, {2, 0}, {4, 0}, {2, 1}, {2, 2}, {1, 1}};
    for (int round = 0; round < 3; round++)
        for (int v = 0; v < 6; v++) {
            int f = variants[v][0];
            staged = variants[v][1];
            pack_factor = f;
            pthread_t th[64];
            struct packer w[64];
            double t0 = now();
            for (int i = 0; i < t; i++) {
                w[i].id = i;
                w[i].busy_pack = 0;
                pthread_create(&th[i], 0, run_packer, &w[i]);
            }
            double busy = 0;
            for (int i = 0; i < t; i++) {
                pthread_join(th[i], 0);
                busy += w[i].busy_pack;
            }
            double sec = now() - t0;
            printf("threads %2d, windows of %4zu KiB, written 1/%d%s: %.3f s, "
                   "%.1f GB/s of file (writing summed %.3f s)\n",
                   t, win >> 10, f,
                   staged == 0   ? ""
                   : staged == 1 ? " from two plain buffers"
                                 : " from one plain buffer",
                   sec, map_len / sec / 1e9, busy);
        }
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE [THREADS] [WINDOW_MiB]\n", argv[0]);
        return 2;
    }
    int t = argc > 2 ? atoi(argv[2]) : 8;
    t = t < 1 ? 1 : t > 32 ? 32 : t; /* the thread arrays hold 64, and twice t is asked */
    size_t win = (size_t)(argc > 3 && atoi(argv[3]) > 0 ? atoi(argv[3]) : 64) << 20;
    int fd = open(argv[1], O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        perror(argv[1]);
        return 1;
    }
    map_len = st.st_size;
    map_base = (const char *)mmap(0, map_len, PROT_READ, MAP_SHARED, fd, 0);
    if (map_base == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    double t0 = now();
    cudaFree(0);
    setenv("PROBE_FILE", argv[1], 1);
    if (argc > 4 && strcmp(argv[2], "pack") == 0) {
        int pt = atoi(argv[3]), kib = atoi(argv[4]);
        if (pt < 1 || pt > 64 || kib < 4) {
            fprintf(stderr, "pack: THREADS 1-64, WINDOW_KiB at least 4\n");
            return 2;
        }
        pack_probe(pt, (size_t)kib << 10);
        return 0;
    }
    if (argc > 2 && strcmp(argv[2], "pieces") == 0) {
        printf("CUDA start %.3f s\n", now() - t0);
        pieces_probe();
        return 0;
    }
    printf("CUDA start %.3f s\n", now() - t0);
    int v;
    cudaDeviceGetAttribute(&v, cudaDevAttrHostRegisterSupported, 0);
    printf("HostRegisterSupported %d\n", v);
    cudaDeviceGetAttribute(&v, cudaDevAttrHostRegisterReadOnlySupported, 0);
    printf("HostRegisterReadOnlySupported %d\n", v);
    cudaDeviceGetAttribute(&v, cudaDevAttrPageableMemoryAccess, 0);
    printf("PageableMemoryAccess %d\n", v);
    cudaDeviceGetAttribute(&v, cudaDevAttrPageableMemoryAccessUsesHostPageTables, 0);
    printf("PageableMemoryAccessUsesHostPageTables %d\n", v);

    /* One page of the mapping under each flag. */
    unsigned flag_set[] = {cudaHostRegisterDefault, cudaHostRegisterReadOnly,
                           cudaHostRegisterMapped | cudaHostRegisterReadOnly,
                           cudaHostRegisterPortable | cudaHostRegisterReadOnly};
    const char *flag_name[] = {"default", "read-only", "mapped|read-only", "portable|read-only"};
    unsigned good = ~0u;
    for (int i = 0; i < 4; i++) {
        double a = now();
        cudaError_t e = cudaHostRegister((void *)map_base, 1 << 20, flag_set[i]);
        printf("register 1 MiB of the mapping, %s: %s (%.3f ms)\n", flag_name[i], cudaGetErrorString(e),
               (now() - a) * 1e3);
        if (e == cudaSuccess) {
            cudaHostUnregister((void *)map_base);
            if (good == ~0u)
                good = flag_set[i];
        }
        cudaGetLastError();
    }
    for (int pass = 0; pass < 2; pass++) {
        feed("pinned staging (memcpy)", 1, 0, t, win);
        if (good != ~0u) {
            feed("registered windows", 0, good, t, win);
            feed("registered windows", 0, good, t, win * 4);
            feed("registered windows", 0, good, t * 2 > 32 ? 32 : t * 2, win);
        }
    }
    if (good != ~0u) {
        /* The whole mapping at once, then copies from it. */
        double a = now();
        cudaError_t e = cudaHostRegister((void *)map_base, map_len & ~(size_t)4095, good);
        double reg = now() - a;
        printf("register the whole mapping (%.2f GB): %s in %.3f s\n", map_len / 1e9, cudaGetErrorString(e), reg);
        if (e == cudaSuccess) {
            char *dev;
            size_t piece = (size_t)64 << 20;
            CK(cudaMalloc(&dev, 2 * piece));
            cudaStream_t s[4];
            for (int i = 0; i < 4; i++)
                cudaStreamCreate(&s[i]);
            a = now();
            size_t k = 0;
            for (size_t off = 0; off + piece <= (map_len & ~(size_t)4095); off += piece, k++)
                cudaMemcpyAsync(dev + (k & 1) * piece, map_base + off, piece, cudaMemcpyHostToDevice, s[k & 3]);
            cudaDeviceSynchronize();
            double cp = now() - a;
            printf("copies from the registered mapping: %.1f GB/s\n", k * piece / cp / 1e9);
            a = now();
            cudaHostUnregister((void *)map_base);
            printf("unregister: %.3f s\n", now() - a);
            cudaFree(dev);
        }
        cudaGetLastError();
    }
    strip_on_device((size_t)64 << 20);
    strip_on_device((size_t)256 << 20);
    return 0;
}
